/*
** howe.c — Howe's graph-cut binarization: laplacian, canny → graphcut.
**
** `laplacian` (the data term: lap2 and the bright-background bias) and `canny`
** (algorithms/canny.c) are independent and run at the same time when mapped to
** different devices; `graphcut` builds the 4-connected grid graph with integer
** capacities and cuts it. The method step by step: docs/howe.md, "The graph, step
** by step".
*/
#include <math.h>
#include "algorithms/howe.h"
#include "algorithms/maxflow.h"
#include "algorithms/pushrelabel.h"
#include "runtime/util.h"

enum { IMAGE, GRAY, LAP2, EDGES, BINARY, CUT, N_ITEMS };

/* The report item of `graphcut` (DB_HOWE_CUT_*): the work of the role that cut
** is the CPU's search steps (db_grid_cut_steps) or the GPU's commands
** (db_stage_commands), 0 for the role that did not. */
enum {
    CUT_OK = DB_HOWE_CUT_OK,
    CUT_FLOW = DB_HOWE_CUT_FLOW,
    CUT_STEPS = DB_HOWE_CUT_STEPS,
    CUT_COMMANDS = DB_HOWE_CUT_COMMANDS,
    CUT_VALUES = DB_HOWE_CUT_VALUES
};

size_t db_howe_lap2_size(const db_job *job, int width, int height)
{
    (void)job;
    return (size_t)(width > 1 ? width - 1 : 1) * (size_t)(height > 1 ? height - 1 : 1) * sizeof(cl_int);
}

double db_howe_c(int i)
{
    return 20.0 * pow(2.0, i / 4.0);
}

int32_t db_howe_link_of(double c)
{
    return (int32_t)lround(32.0 * c);
}

int32_t db_howe_link(int i)
{
    return db_howe_link_of(db_howe_c(i));
}

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "the decoded input, gray or RGB", NULL},
    [GRAY] = {"gray", DB_ITEM_PIXELS, 1, "gray as MATLAB's rgb2gray", NULL},
    [LAP2] = {"lap2", DB_ITEM_COMPUTED, 0, "2 x Laplacian per node, -1000 on bright background", db_howe_lap2_size},
    [EDGES] = {"edges", DB_ITEM_PIXELS, 1, "Canny edges, 1 = edge", NULL},
    [BINARY] = {"binary", DB_ITEM_PIXELS, 1, "0 = ink, 255 = background", NULL},
    [CUT] = {"cut", DB_ITEM_FIXED, CUT_VALUES * sizeof(cl_long), "cut status, flow value and work", NULL},
};

/* The bias filters of docs/howe.md §2: sigma 20, radii 60 ('mirror') and 50 ('none'). */
#define BIAS_SIGMA 20.0
#define BIAS_RADIUS_MIRROR 60
#define BIAS_RADIUS_NONE 50

db_status db_howe_check_size(db_stage_run *run)
{
    if (db_stage_width(run) < 3 || db_stage_height(run) < 3)
        return db_fail(DB_ERR_FORMAT, "howe needs an image of at least 3x3 pixels, not %dx%d",
                       db_stage_width(run), db_stage_height(run));
    return DB_OK;
}

/* Normalised Gaussian weights exp(-x^2 / 2 sigma^2), x = -radius..radius (MATLAB fspecial). */
static void gaussian(double sigma, int radius, double *h)
{
    double sum = 0.0;
    for (int x = -radius; x <= radius; x++) {
        h[x + radius] = exp(-(double)(x * x) / (2.0 * sigma * sigma));
        sum += h[x + radius];
    }
    for (int x = 0; x <= 2 * radius; x++)
        h[x] /= sum;
}

/* The separable Gaussian (2 radius + 1 taps h) of src8 (bytes) or src, through
** tmp into dst; from tiles in local memory on the gpu role where it has room
** for them (the same sums). */
static db_status smooth(db_stage_run *run, cl_mem src8, cl_mem src, cl_mem tmp, cl_mem dst, cl_mem h, int radius,
                        int mirror, const size_t *global, const size_t *gpu_local)
{
    /* The work-groups of the tiled kernels and their outputs a work-item (cl/laplacian.cl). */
    enum { OUT = 4, COLS_X = 32, COLS_Y = 8, ROWS_X = 64 };
    const db_device *dev = db_stage_device(run);
    const bool tiled = dev->role == DB_ROLE_GPU && dev->max_group >= COLS_X * COLS_Y &&
                       dev->local_mem >= (COLS_Y * OUT + 2 * (size_t)radius) * COLS_X * sizeof(cl_double);
    cl_kernel cols = db_stage_kernel(run, "laplacian.cl", tiled ? "howe_smooth_cols_tiled" : "howe_smooth_cols");
    cl_kernel rows = db_stage_kernel(run, "laplacian.cl", tiled ? "howe_smooth_rows_tiled" : "howe_smooth_rows");
    if (!cols || !rows)
        return db_error_status();
    cl_int w = db_stage_width(run), hgt = db_stage_height(run), r = radius, mir = mirror;
    const size_t cols_local[2] = {COLS_X, COLS_Y}, rows_local[2] = {ROWS_X, 1};
    const size_t cols_global[2] = {global[0], db_round_up(global[1], COLS_Y * OUT) / OUT};
    const size_t rows_global[2] = {db_round_up(global[0], ROWS_X * OUT) / OUT, (size_t)hgt};
    /* The tiled kernels take their tile as one more argument. */
    db_status st = db_stage_args(run, cols, tiled ? 9 : 8, sizeof src8, src8 ? &src8 : NULL, sizeof src,
                                 src ? &src : NULL, sizeof w, &w, sizeof hgt, &hgt, sizeof h, &h, sizeof r, &r,
                                 sizeof mir, &mir, sizeof tmp, &tmp,
                                 (size_t)(COLS_Y * OUT + 2 * radius) * COLS_X * sizeof(cl_double), NULL);
    if (st == DB_OK)
        st = tiled ? db_stage_launch(run, cols, 2, cols_global, cols_local)
                   : db_stage_launch_any(run, cols, 2, global, gpu_local);
    if (st == DB_OK)
        st = db_stage_args(run, rows, tiled ? 8 : 7, sizeof tmp, &tmp, sizeof w, &w, sizeof hgt, &hgt, sizeof h, &h,
                           sizeof r, &r, sizeof mir, &mir, sizeof dst, &dst,
                           (size_t)(ROWS_X * OUT + 2 * radius) * sizeof(cl_double), NULL);
    if (st == DB_OK)
        st = tiled ? db_stage_launch(run, rows, 2, rows_global, rows_local)
                   : db_stage_launch_any(run, rows, 2, global, gpu_local);
    return st;
}

/* One implementation for both roles: they differ only in the launches' shapes. */
db_status db_howe_laplacian(db_stage_run *run)
{
    static const size_t local1 = 256, local2[2] = {32, 8};
    db_status st = db_howe_check_size(run);
    if (st != DB_OK)
        return st;
    cl_int w = db_stage_width(run), h = db_stage_height(run), channels = db_stage_channels(run);
    cl_ulong n = (cl_ulong)w * (cl_ulong)h;
    double hm[2 * BIAS_RADIUS_MIRROR + 1], hn[2 * BIAS_RADIUS_NONE + 1];
    gaussian(BIAS_SIGMA, BIAS_RADIUS_MIRROR, hm);
    gaussian(BIAS_SIGMA, BIAS_RADIUS_NONE, hn);
    cl_mem img = db_stage_in(run, 0), gray = db_stage_out(run, 0), lap2 = db_stage_out(run, 1);
    cl_mem wm = db_stage_constant(run, hm, sizeof hm), wn = db_stage_constant(run, hn, sizeof hn);
    cl_mem tmp = db_stage_scratch(run, n * sizeof(cl_double));
    cl_mem m = db_stage_scratch(run, n * sizeof(cl_double)), d2 = db_stage_scratch(run, n * sizeof(cl_double));
    cl_kernel kgray = db_stage_kernel(run, "laplacian.cl", "howe_gray");
    cl_kernel klap = db_stage_kernel(run, "laplacian.cl", "howe_lap2");
    cl_kernel kdev = db_stage_kernel(run, "laplacian.cl", "howe_deviation");
    cl_kernel kbias = db_stage_kernel(run, "laplacian.cl", "howe_bias");
    if (!wm || !wn || !tmp || !m || !d2 || !kgray || !klap || !kdev || !kbias)
        return db_error_status();
    const size_t n1 = (size_t)n, grid[2] = {(size_t)w, (size_t)h};
    cl_mem none = NULL;
    if ((st = db_stage_args(run, kgray, 4, sizeof img, &img, sizeof channels, &channels, sizeof n, &n, sizeof gray,
                            &gray)) != DB_OK ||
        (st = db_stage_launch_any(run, kgray, 1, &n1, &local1)) != DB_OK ||
        (st = db_stage_args(run, klap, 4, sizeof gray, &gray, sizeof w, &w, sizeof h, &h, sizeof lap2, &lap2)) !=
            DB_OK ||
        (st = db_stage_launch_any(run, klap, 2, grid, local2)) != DB_OK ||
        (st = smooth(run, gray, none, tmp, m, wm, BIAS_RADIUS_MIRROR, 1, grid, local2)) != DB_OK ||
        (st = db_stage_args(run, kdev, 4, sizeof gray, &gray, sizeof m, &m, sizeof d2, &d2, sizeof n, &n)) != DB_OK ||
        (st = db_stage_launch_any(run, kdev, 1, &n1, &local1)) != DB_OK ||
        (st = smooth(run, NULL, d2, tmp, d2, wn, BIAS_RADIUS_NONE, 0, grid, local2)) != DB_OK ||
        (st = db_stage_args(run, kbias, 5, sizeof m, &m, sizeof d2, &d2, sizeof w, &w, sizeof h, &h, sizeof lap2,
                            &lap2)) != DB_OK)
        return st;
    return db_stage_launch_any(run, kbias, 2, grid, local2);
}


const size_t *db_howe_local(db_stage_run *run)
{
    static const size_t local[2] = {32, 8};
    return db_stage_device(run)->role == DB_ROLE_GPU ? local : db_any_group;
}

db_status db_howe_graph_alloc(db_stage_run *run, db_howe_graph *g)
{
    size_t n = (size_t)(db_stage_width(run) - 1) * (size_t)(db_stage_height(run) - 1);
    g->source = db_stage_scratch(run, n * sizeof(cl_int));
    g->sink = db_stage_scratch(run, n * sizeof(cl_int));
    g->right = db_stage_scratch(run, n * sizeof(cl_int));
    g->down = db_stage_scratch(run, n * sizeof(cl_int));
    return g->source && g->sink && g->right && g->down ? DB_OK : db_error_status();
}

/* Howe's graph (docs/howe.md): t-links from lap2, n-links of capacity `link`
** unless cut by an edge. */
db_status db_howe_graph_build(db_stage_run *run, const db_howe_graph *g, cl_mem gray, cl_mem lap2, cl_mem edges,
                              cl_ulong edge_offset, cl_int link)
{
    cl_int w = db_stage_width(run), h = db_stage_height(run);
    cl_kernel k = db_stage_kernel(run, "howe_graph.cl", "howe_graph");
    if (!k)
        return db_error_status();
    db_status st = db_stage_args(run, k, 11, sizeof gray, &gray, sizeof lap2, &lap2, sizeof edges, &edges,
                                 sizeof edge_offset, &edge_offset, sizeof w, &w, sizeof h, &h, sizeof link, &link,
                                 sizeof g->source, &g->source, sizeof g->sink, &g->sink, sizeof g->right, &g->right,
                                 sizeof g->down, &g->down);
    const size_t grid[2] = {(size_t)(w - 1), (size_t)(h - 1)};
    return st == DB_OK ? db_stage_launch(run, k, 2, grid, db_howe_local(run)) : st;
}

/* The output image from the node labels (padding and the nw clean-up). */
static db_status finish(db_stage_run *run, cl_mem ink)
{
    cl_kernel k = db_stage_kernel(run, "howe_graph.cl", "howe_finish");
    if (!k)
        return db_error_status();
    cl_int w = db_stage_width(run), h = db_stage_height(run);
    cl_mem out = db_stage_out(run, 0);
    db_status st = db_stage_args(run, k, 4, sizeof ink, &ink, sizeof w, &w, sizeof h, &h, sizeof out, &out);
    const size_t grid[2] = {(size_t)w, (size_t)h};
    return st == DB_OK ? db_stage_launch(run, k, 2, grid, db_howe_local(run)) : st;
}

/* What the host code of the CPU cut needs besides its buffers. */
struct cut_arg {
    int rows, cols;
};

/* The CPU cut: Boykov-Kolmogorov on the graph, then the canonical sink side.
** Buffers: source, sink, right, down, ink (out), report (out). */
static void cut_host(void *const *ptrs, const void *argp)
{
    const struct cut_arg *a = argp;
    int64_t *report = ptrs[5];
    db_grid_cut *g = NULL;
    report[CUT_OK] = 0;
    report[CUT_FLOW] = 0;
    report[CUT_STEPS] = 0;
    report[CUT_COMMANDS] = 0;
    if (db_grid_cut_new(a->rows, a->cols, ptrs[0], ptrs[1], ptrs[2], ptrs[3], &g) != DB_OK)
        return;
    report[CUT_FLOW] = db_grid_cut_solve(g);
    report[CUT_STEPS] = db_grid_cut_steps(g);
    db_grid_cut_labels(g, ptrs[4]);
    report[CUT_OK] = 1;
    db_grid_cut_free(g);
}

static db_status cut_cpu(db_stage_run *run, const db_howe_graph *g, cl_mem ink)
{
    struct cut_arg a = {db_stage_height(run) - 1, db_stage_width(run) - 1};
    cl_mem mems[6] = {g->source, g->sink, g->right, g->down, ink, db_stage_out(run, 1)};
    return db_stage_host(run, "boykov_kolmogorov", cut_host, &a, sizeof a, mems, 6);
}

static db_status cut_gpu(db_stage_run *run, const db_howe_graph *g, cl_mem ink)
{
    db_relabel strategy = (db_relabel)db_stage_job(run)->params[DB_HOWE_RELABEL];
    cl_mem report = db_stage_out(run, 1);
    cl_kernel ok = db_stage_kernel(run, "howe_graph.cl", "howe_cut_ok");
    if (!ok)
        return db_error_status();
    db_pr_cut pr;
    const size_t one = 1;
    db_status st;
    if ((st = db_pr_cut_begin(&pr, run, db_stage_height(run) - 1, db_stage_width(run) - 1, g->source, g->sink,
                              g->right, g->down, strategy)) != DB_OK ||
        (st = db_pr_cut_solve(&pr)) != DB_OK || (st = db_pr_cut_sink_side(&pr, ink)) != DB_OK ||
        (st = db_pr_cut_flow(&pr, report, CUT_FLOW)) != DB_OK)
        return st;
    cl_long commands = db_stage_commands(run);
    if ((st = db_stage_args(run, ok, 2, sizeof report, &report, sizeof commands, &commands)) != DB_OK)
        return st;
    return db_stage_launch(run, ok, 1, &one, NULL);
}

db_status db_howe_graphcut(db_stage_run *run, cl_int link)
{
    db_status st = db_howe_check_size(run);
    db_howe_graph g;
    if (st != DB_OK || (st = db_howe_graph_alloc(run, &g)) != DB_OK ||
        (st = db_howe_graph_build(run, &g, db_stage_in(run, 0), db_stage_in(run, 1), db_stage_in(run, 2), 0, link)) !=
            DB_OK)
        return st;
    cl_mem ink = db_stage_scratch(run, (size_t)(db_stage_width(run) - 1) * (size_t)(db_stage_height(run) - 1));
    if (!ink)
        return db_error_status();
    st = db_stage_device(run)->role == DB_ROLE_GPU ? cut_gpu(run, &g, ink) : cut_cpu(run, &g, ink);
    return st == DB_OK ? finish(run, ink) : st;
}

static db_status graphcut(db_stage_run *run)
{
    return db_howe_graphcut(run, db_howe_link_of(db_stage_job(run)->params[DB_HOWE_C]));
}

static const db_param params[DB_HOWE_N_PARAMS] = {
    [DB_HOWE_C] = {.name = "c", .kind = DB_PARAM_REAL, .def = 160, .min = 1, .max = 65536,
                   .doc = "weight of the smoothness term (n-link capacity round(32 c))"},
    [DB_HOWE_THI] = {.name = "thi", .kind = DB_PARAM_REAL, .def = 0.4, .min = 0.0, .max = 1.0,
                     .doc = "Canny high threshold, a fraction of the largest gradient"},
    [DB_HOWE_TLO] = {.name = "tlo", .kind = DB_PARAM_REAL, .def = 0.1, .min = 0.0, .max = 1.0,
                     .doc = "Canny low threshold, a fraction of the largest gradient (below thi)"},
    [DB_HOWE_SIGMA] = {.name = "sigma", .kind = DB_PARAM_REAL, .def = 0.6, .min = 0.1, .max = 10,
                       .doc = "Canny's Gaussian sigma"},
    [DB_HOWE_RELABEL] = {.name = "relabel", .kind = DB_PARAM_INT, .def = DB_RELABEL_EXPONENTIAL, .min = 0,
                         .max = DB_RELABEL_COUNT - 1,
                         .doc = "global relabel strategy of the gpu cut (speed only; the image is the same)",
                         .names = db_relabel_names, .n_names = DB_RELABEL_COUNT},
};


static const db_stage stages[] = {
    {.name = "laplacian", .doc = "2 x Laplacian of the forward differences, -1000 at bright-background outliers",
     .in = DB_PORTS(IMAGE), .out = DB_PORTS(GRAY, LAP2), .impl = {db_howe_laplacian, db_howe_laplacian},
     .sources = {"laplacian.cl"}},
    {.name = "canny", .doc = "MATLAB's canny_old: edges that cut the graph's links", .in = DB_PORTS(IMAGE),
     .out = DB_PORTS(EDGES), .impl = {db_canny_cpu, db_canny_gpu}, .sources = {"canny.cl"}},
    {.name = "graphcut",
     .doc = "minimum cut of the grid graph (cpu: Boykov-Kolmogorov, gpu: push-relabel); ink = the sink side",
     .in = DB_PORTS(GRAY, LAP2, EDGES), .out = DB_PORTS(BINARY, CUT), .impl = {graphcut, graphcut},
     .sources = {"howe_graph.cl", "pushrelabel.cl"}},
};

static const db_report_field report[] = {
    {.name = "cut_ok", .index = CUT_OK, .if_zero = "out of memory in the graph cut", .fatal = 1},
    {.name = "flow", .index = CUT_FLOW},
    {.name = "cut_steps", .index = CUT_STEPS},
    {.name = "cut_commands", .index = CUT_COMMANDS},
};

const db_algo db_algo_howe = {
    .name = "howe",
    .doc = "Howe's graph-cut binarization (Laplacian data term, Canny edges, minimum cut)",
    .items = items,
    .n_items = DB_LEN(items),
    .input = IMAGE,
    .output = BINARY,
    .stages = stages,
    .n_stages = DB_LEN(stages),
    .params = params,
    .n_params = DB_LEN(params),
    .report_fields = report,
    .n_report_fields = DB_LEN(report),
    .report_item = CUT,
    .report_wide = 1,
};
