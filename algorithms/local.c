/*
** local.c — the local-window family: Niblack, Sauvola, NICK and Wolf.
**
** All four share one graph, gray → stats → threshold, and differ only in the
** threshold formula and defaults (docs/algorithms.md, "Niblack, Sauvola, NICK,
** Wolf"). `stats` makes the exact 64-bit window sums S and Q; its variants
** (`--variant`) are the O(1) sliding sums and the NICK paper's three
** direct-window kernels, which give the same integers and therefore the same
** image.
*/
#include "algorithms/algorithms.h"
#include "algorithms/local_host.h"

enum { IMAGE, GRAY, SUMS, BINARY, N_ITEMS };

/* Parameter indices, shared by the four algorithms. */
enum { P_WINDOW, P_K };

typedef enum method { NIBLACK = 0, SAUVOLA = 1, NICK = 2, WOLF = 3 } method;

typedef enum stats_variant { SLIDING, GLOBAL, GLOBAL_SHARED, SHARED, N_VARIANTS } stats_variant;

static const char *const variants[N_VARIANTS] = {"sliding", "global", "global-shared", "shared"};

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "the decoded input, gray or RGB"},
    [GRAY] = {"gray", DB_ITEM_PIXELS, 1, "8-bit gray"},
    [SUMS] = {"sums", DB_ITEM_PIXELS, 2 * sizeof(cl_long), "window sums S and Q, 64-bit"},
    [BINARY] = {"binary", DB_ITEM_PIXELS, 1, "0 = ink, 255 = background"},
};

/* Work-group shapes; the kernels' TILE, SCAN and REDUCE match these. */
#define TILE 16
#define SCAN 256
#define REDUCE 256
#define STRIP 32

static db_status stats_args(db_stage_run *run, cl_kernel k, cl_mem src, cl_mem dst)
{
    cl_int w = db_stage_width(run), h = db_stage_height(run);
    cl_int half = (cl_int)(db_stage_job(run)->params[P_WINDOW] - 1) / 2;
    return db_stage_args(run, k, 5, sizeof src, &src, sizeof w, &w, sizeof h, &h, sizeof half, &half, sizeof dst,
                         &dst);
}

static db_status stats_direct(db_stage_run *run, const char *kernel, int tiled)
{
    cl_kernel k = db_stage_kernel(run, "window_stats.cl", kernel);
    if (!k)
        return db_error_status();
    db_status st = stats_args(run, k, db_stage_in(run, 0), db_stage_out(run, 0));
    if (st != DB_OK)
        return st;
    const size_t global[2] = {(size_t)db_stage_width(run), (size_t)db_stage_height(run)};
    const size_t local[2] = {TILE, TILE};
    bool fixed = tiled || db_stage_device(run)->role == DB_ROLE_GPU;
    return db_stage_launch(run, k, 2, global, fixed ? local : db_any_group);
}

/* Windows up to this tall take stats_bands on a CPU device. Each band first
** sums the rows of its first window, so a taller window is better served by
** the two passes, whose cost does not grow with it. The choice depends on the
** window alone, never on the page's size, so that a stage's calibrated cost
** line is one algorithm's at every size. */
#define BANDS_WINDOW_MAX 255

/* The bands of rows stats_bands runs on a CPU device, or 0 for the two passes:
** a multiple of the compute units, up to 4 rounds of them, more rounds only
** where each band stays at least a window tall. */
static size_t cpu_bands(const db_device *dev, size_t height, int half)
{
    size_t window = 2 * (size_t)half + 1;
    if (window > BANDS_WINDOW_MAX)
        return 0;
    size_t units = dev->info.compute_units > 0 ? dev->info.compute_units : 1, rounds = height / (units * window);
    rounds = rounds < 1 ? 1 : rounds > 4 ? 4 : rounds;
    return units * rounds < height ? units * rounds : height;
}

/* One pass over bands of rows on a CPU device (see cpu_bands). */
static db_status stats_bands(db_stage_run *run, size_t bands)
{
    size_t w = (size_t)db_stage_width(run), h = (size_t)db_stage_height(run);
    cl_int band = (cl_int)((h + bands - 1) / bands);
    bands = (h + (size_t)band - 1) / (size_t)band;
    cl_mem col = db_stage_scratch(run, bands * w * 2 * sizeof(cl_long));
    cl_kernel k = db_stage_kernel(run, "window_stats.cl", "stats_bands");
    if (!col || !k)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0), sums = db_stage_out(run, 0);
    cl_int wi = (cl_int)w, hi = (cl_int)h;
    cl_int half = (cl_int)(db_stage_job(run)->params[P_WINDOW] - 1) / 2;
    db_status st = db_stage_args(run, k, 7, sizeof gray, &gray, sizeof wi, &wi, sizeof hi, &hi, sizeof half, &half,
                                 sizeof band, &band, sizeof col, &col, sizeof sums, &sums);
    if (st != DB_OK)
        return st;
    return db_stage_launch(run, k, 1, &bands, db_any_group);
}

static db_status stats_sliding(db_stage_run *run, int gpu)
{
    size_t w = (size_t)db_stage_width(run), h = (size_t)db_stage_height(run);
    if (!gpu) {
        size_t bands = cpu_bands(db_stage_device(run), h, (int)(db_stage_job(run)->params[P_WINDOW] - 1) / 2);
        if (bands)
            return stats_bands(run, bands);
    }
    cl_mem col = db_stage_scratch(run, w * h * 2 * sizeof(cl_long));
    cl_kernel columns = db_stage_kernel(run, "window_stats.cl", gpu ? "stats_columns" : "stats_columns_strips");
    cl_kernel rows = db_stage_kernel(run, "window_stats.cl", gpu ? "stats_rows_scan" : "stats_rows_serial");
    if (!col || !columns || !rows)
        return db_error_status();
    db_status st = stats_args(run, columns, db_stage_in(run, 0), col);
    if (st != DB_OK)
        return st;
    const size_t col_local = 64, strips = (w + STRIP - 1) / STRIP;
    if ((st = db_stage_launch(run, columns, 1, gpu ? &w : &strips, gpu ? &col_local : db_any_group)) != DB_OK)
        return st;
    if ((st = stats_args(run, rows, col, db_stage_out(run, 0))) != DB_OK)
        return st;
    if (gpu) {
        const size_t global = h * SCAN, local = SCAN;
        return db_stage_launch(run, rows, 1, &global, &local);
    }
    return db_stage_launch(run, rows, 1, &h, db_any_group);
}

static db_status stats_impl(db_stage_run *run, int gpu)
{
    switch ((stats_variant)db_stage_job(run)->variant) {
    case SLIDING:
        return stats_sliding(run, gpu);
    case GLOBAL:
        return stats_direct(run, "stats_direct_global", 0);
    case GLOBAL_SHARED:
        return stats_direct(run, "stats_direct_global_shared", 1);
    case SHARED:
        return stats_direct(run, "stats_direct_shared", 1);
    case N_VARIANTS:
        break;
    }
    return db_fail(DB_ERR_USAGE, "unknown stats variant");
}

static db_status stats_cpu(db_stage_run *run)
{
    return stats_impl(run, 0);
}

static db_status stats_gpu(db_stage_run *run)
{
    return stats_impl(run, 1);
}

/* Wolf's two image-wide quantities, minimum gray and √(max variance), into `wolf`. */
static db_status wolf_reduce(db_stage_run *run, cl_mem wolf)
{
    bool gpu = db_stage_device(run)->role == DB_ROLE_GPU;
    cl_int parts = gpu ? 1024 : (cl_int)db_stage_device(run)->info.compute_units * 4;
    size_t local = gpu ? REDUCE : 64;
    cl_mem pv = db_stage_scratch(run, (size_t)parts * sizeof(cl_double));
    cl_mem pm = db_stage_scratch(run, (size_t)parts * sizeof(cl_int));
    cl_kernel partial = db_stage_kernel(run, "local_threshold.cl", "wolf_partial");
    cl_kernel final = db_stage_kernel(run, "local_threshold.cl", "wolf_final");
    if (!pv || !pm || !partial || !final)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0), sums = db_stage_in(run, 1);
    cl_int w = db_stage_width(run), h = db_stage_height(run);
    cl_int half = (cl_int)(db_stage_job(run)->params[P_WINDOW] - 1) / 2;
    cl_int chunked = !gpu; /* the cpu role's device runs a group's work-items one by one (wolf_partial) */
    db_status st = db_stage_args(run, partial, 8, sizeof gray, &gray, sizeof sums, &sums, sizeof w, &w, sizeof h, &h,
                                 sizeof half, &half, sizeof chunked, &chunked, sizeof pv, &pv, sizeof pm, &pm);
    if (st != DB_OK)
        return st;
    size_t global = (size_t)parts * local;
    if ((st = db_stage_launch(run, partial, 1, &global, &local)) != DB_OK)
        return st;
    if ((st = db_stage_args(run, final, 4, sizeof pv, &pv, sizeof pm, &pm, sizeof parts, &parts, sizeof wolf,
                            &wolf)) != DB_OK)
        return st;
    const size_t one = 1;
    return db_stage_launch(run, final, 1, &one, NULL);
}

static db_status threshold_impl(db_stage_run *run, method m)
{
    cl_mem wolf = db_stage_scratch(run, 2 * sizeof(cl_double));
    cl_kernel k = db_stage_kernel(run, "local_threshold.cl", "threshold_local");
    if (!wolf || !k)
        return db_error_status();
    db_status st;
    if (m == WOLF && (st = wolf_reduce(run, wolf)) != DB_OK)
        return st;
    cl_mem gray = db_stage_in(run, 0), sums = db_stage_in(run, 1), out = db_stage_out(run, 0);
    cl_int w = db_stage_width(run), h = db_stage_height(run);
    cl_int half = (cl_int)(db_stage_job(run)->params[P_WINDOW] - 1) / 2;
    cl_int method_arg = m;
    cl_double kval = db_stage_job(run)->params[P_K];
    st = db_stage_args(run, k, 9, sizeof gray, &gray, sizeof sums, &sums, sizeof w, &w, sizeof h, &h, sizeof half,
                       &half, sizeof method_arg, &method_arg, sizeof kval, &kval, sizeof wolf, &wolf, sizeof out, &out);
    if (st != DB_OK)
        return st;
    const size_t global[2] = {(size_t)w, (size_t)h}, gpu_local[2] = {64, 4};
    return db_stage_launch_any(run, k, 2, global, gpu_local);
}

/* The fused kernel's shape (cl/local_threshold.cl): FUSED_ITEMS work-items
** a group, each taking FUSED_R neighbouring windows of a row, FUSED_BAND rows
** a group. Each work-item sums its first window from local memory at a stride
** of FUSED_R words between neighbouring work-items: an odd stride meets each
** of a GPU's 32 banks once, an even one makes work-items wait on each other.
** Wider strips share the halo among more windows; bands of 16 rows keep
** enough groups in flight for the row loop's latency (the shapes compared:
** bench/results/kernels-h100.md). */
enum { FUSED_ITEMS = 64, FUSED_R = 7, FUSED_BAND = 16, FUSED_MAX_HALF = 127 };

/* Stats and threshold fused, on a device: one kernel (Wolf: two, with the
** reduction of the first between them). */
static db_status fused_kernel(db_stage_run *run, method m)
{
    cl_int w = db_stage_width(run), h = db_stage_height(run), band = FUSED_BAND, meth = m;
    cl_int half = (cl_int)(db_stage_job(run)->params[P_WINDOW] - 1) / 2;
    cl_double k = db_stage_job(run)->params[P_K];
    size_t strips = ((size_t)w + FUSED_ITEMS * FUSED_R - 1) / (FUSED_ITEMS * FUSED_R);
    size_t bands = ((size_t)h + FUSED_BAND - 1) / FUSED_BAND;
    cl_int parts = (cl_int)(strips * bands);
    cl_mem wolf = db_stage_scratch(run, 2 * sizeof(cl_double));
    cl_mem pv = db_stage_scratch(run, (size_t)parts * sizeof(cl_double));
    cl_mem pm = db_stage_scratch(run, (size_t)parts * sizeof(cl_int));
    cl_kernel k_fused = db_stage_kernel(run, "local_threshold.cl", "local_fused");
    cl_kernel k_final = db_stage_kernel(run, "local_threshold.cl", "wolf_final");
    if (!wolf || !pv || !pm || !k_fused || !k_final)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0), out = db_stage_out(run, 0);
    const size_t global[2] = {strips * FUSED_ITEMS, bands}, local[2] = {FUSED_ITEMS, 1};
    db_status st = DB_OK;
    for (cl_int pass = m == WOLF ? 0 : 1; pass <= 1 && st == DB_OK; pass++) {
        st = db_stage_args(run, k_fused, 12, sizeof gray, &gray, sizeof w, &w, sizeof h, &h, sizeof half, &half,
                           sizeof band, &band, sizeof meth, &meth, sizeof k, &k, sizeof wolf, &wolf, sizeof pass,
                           &pass, sizeof pv, &pv, sizeof pm, &pm, sizeof out, &out);
        if (st == DB_OK)
            st = db_stage_launch(run, k_fused, 2, global, local);
        if (st == DB_OK && pass == 0) {
            const size_t one = 1;
            st = db_stage_args(run, k_final, 4, sizeof pv, &pv, sizeof pm, &pm, sizeof parts, &parts, sizeof wolf,
                               &wolf);
            if (st == DB_OK)
                st = db_stage_launch(run, k_final, 1, &one, NULL);
        }
    }
    return st;
}

/* Stats and threshold fused, as host code on the cpu role's threads. */
static db_status fused_host(db_stage_run *run, method m)
{
    db_local_args a = {.width = db_stage_width(run), .height = db_stage_height(run),
                       .half = (int)(db_stage_job(run)->params[P_WINDOW] - 1) / 2, .method = (int)m,
                       .threads = (int)db_stage_device(run)->info.compute_units, .k = db_stage_job(run)->params[P_K]};
    cl_mem work = db_stage_scratch(run, db_local_work_bytes(&a));
    if (!work)
        return db_error_status();
    const cl_mem mems[3] = {db_stage_in(run, 0), db_stage_out(run, 0), work};
    return db_stage_host(run, "local threshold", db_local_host, &a, sizeof a, mems, 3);
}

static db_status fused(db_stage_run *run, method m)
{
    return db_stage_device(run)->role == DB_ROLE_CPU ? fused_host(run, m) : fused_kernel(run, m);
}

/* The sliding sums fuse with the threshold up to half-windows of
** FUSED_MAX_HALF (the kernel's 32-bit sums); the NICK paper's direct-window
** variants stay as they are, to be compared. */
static bool fusable(const db_job *job)
{
    return job->variant == SLIDING && (int)(job->params[P_WINDOW] - 1) / 2 <= FUSED_MAX_HALF;
}

/* One threshold stage and one fused stage per method, the same on both roles. */
#define THRESHOLD_IMPL(name, m)                                                                  \
    static db_status name##_threshold(db_stage_run *run) { return threshold_impl(run, m); }     \
    static db_status name##_fused(db_stage_run *run) { return fused(run, m); }

THRESHOLD_IMPL(niblack, NIBLACK)
THRESHOLD_IMPL(sauvola, SAUVOLA)
THRESHOLD_IMPL(nick, NICK)
THRESHOLD_IMPL(wolf, WOLF)

/* Windows beyond twice the largest image side are clipped to the image anyway. */
#define WINDOW_MAX (2.0 * DB_IMAGE_MAX_SIDE + 1)

#define LOCAL_ALGO(id, title, window_def, k_def, k_doc, threshold_doc)                                    \
    static const db_param id##_params[] = {                                                                      \
        {.name = "window", .kind = DB_PARAM_ODD_INT, .def = window_def, .min = 3, .max = WINDOW_MAX,           \
         .doc = "odd window side w (w x w, clipped at borders); a length: 75, 75px, 0.25in, 6mm", .length = true}, \
        {.name = "k", .kind = DB_PARAM_REAL, .def = k_def, .min = -10, .max = 10, .doc = k_doc,                   \
         .cost_free = true},                                                                                     \
    };                                                                                                           \
    static const db_stage id##_stages[] = {                                                                      \
        DB_GRAY_STAGE(IMAGE, GRAY),                                                                              \
        {.name = "stats", .doc = "exact 64-bit window sums S, Q (variants: sliding, global, global-shared, shared)",\
         .in = DB_PORTS(GRAY), .out = DB_PORTS(SUMS), .impl = {stats_cpu, stats_gpu},                             \
         .sources = {"window_stats.cl"}},                                                                        \
        {.name = "threshold", .doc = threshold_doc, .in = DB_PORTS(GRAY, SUMS), .out = DB_PORTS(BINARY),          \
         .impl = {id##_threshold, id##_threshold}, .sources = {"local_threshold.cl"}},                                       \
    };                                                                                                           \
    static const db_fusion id##_fusion = {                                                                       \
        .first = 1,                                                                                              \
        .count = 2,                                                                                              \
        .stage = {.name = "stats+threshold", .doc = "window sums and threshold in one pass (no sums item)",     \
                  .in = DB_PORTS(GRAY), .out = DB_PORTS(BINARY), .impl = {id##_fused, id##_fused},               \
                  .sources = {"local_threshold.cl"}},                                                             \
        .applies = fusable,                                                                                      \
    };                                                                                                           \
    const db_algo db_algo_##id = {                                                                               \
        .name = #id,                                                                                             \
        .doc = title,                                                                                            \
        .items = items,                                                                                          \
        .n_items = DB_LEN(items),                                                                                \
        .input = IMAGE,                                                                                          \
        .output = BINARY,                                                                                        \
        .stages = id##_stages,                                                                                   \
        .n_stages = DB_LEN(id##_stages),                                                                         \
        .fusion = &id##_fusion,                                                                                  \
        .params = id##_params,                                                                                   \
        .n_params = DB_LEN(id##_params),                                                                         \
        .variants = variants,                                                                                    \
        .n_variants = DB_LEN(variants),                                                                          \
        .variant_stage = "stats",                                                                                \
    };

LOCAL_ALGO(niblack, "Niblack's local threshold T = m + k*s", 75, 0.2,
           "weight of the standard deviation (dark text on light paper wants a negative k, e.g. -0.2)",
           "T = m + k*s; ink iff gray <= T")
LOCAL_ALGO(sauvola, "Sauvola's local threshold T = m*(1 + k*(s/128 - 1))", 75, 0.2, "sensitivity (0.2 to 0.5 typical)",
           "T = m*(1 + k*(s/128 - 1)); ink iff gray <= T")
LOCAL_ALGO(nick, "NICK (Khurshid et al.) T = m + k*sqrt(var + m^2)", 75, -0.2, "weight, usually -0.1 to -0.2",
           "T = m + k*sqrt(var + m*m); ink iff gray <= T")
LOCAL_ALGO(wolf, "Wolf & Jolion's threshold T = m - k*(1 - s/maxS)*(m - min)", 75, 0.2, "sensitivity",
           "T = m - k*(1 - s/maxS)*(m - min) with image-wide min and maxS; ink iff gray <= T")
