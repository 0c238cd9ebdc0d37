/*
** dbs.c — clipping-free DBS halftoning: tarray → init → search.
**
** `tarray` puts the clipping-free threshold array on its device (made once per
** parameter set and cached, algorithms/dbs_tarray.c); `init` converts the
** input to gray, labels every pixel (frozen minority dots in the shadows and
** highlights, seeded random dither elsewhere) and computes the integer error
** state; `search` runs DBS on it: Koge's rounds of four parity groups of k x k
** blocks (cl/dbs.cl), or the sequential raster search on the host (the quality
** reference). Formulas and rules: docs/dbs.md.
*/
#include <limits.h>
#include "algorithms/algorithms.h"
#include "algorithms/dbs.h"

enum { IMAGE, TARRAY, STATE, ERR, HALFTONE, REPORT, N_ITEMS };
enum { P_SEED, P_SIGMA, P_D, P_BLOCK, P_MAX_ROUNDS, P_ORDER, N_PARAMS };
enum { ORDER_BLOCKS, ORDER_RASTER, ORDER_COUNT };

/* The report item (int64), shared with cl/dbs.cl. */
enum { R_ROUNDS, R_CONVERGED, R_TOGGLES, R_SWAPS, R_VALUES };

/* Work-items that share one block's visits on a GPU (one warp or wavefront
** keeps the barriers cheap); CPU devices search each block with one. */
#define GPU_GROUP 32

/* Rows of a block whose C a GPU work-group holds at once (with a margin of 9
** rows above and below): a smaller share of local memory lets more blocks run
** at once on a compute unit, which is what the search's speed follows. CPU
** devices hold the whole block. */
#define GPU_SLAB 8

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "the decoded input, gray or RGB", NULL},
    [TARRAY] = {"tarray", DB_ITEM_FIXED, DB_DBS_TARRAY_SIDE * DB_DBS_TARRAY_SIDE,
                "the 512x512 clipping-free threshold array (levels, 255 = none)", NULL},
    [STATE] = {"state", DB_ITEM_PIXELS, 1, "halftone state: bit 0 = white, bit 1 = frozen", NULL},
    [ERR] = {"error", DB_ITEM_PIXELS, sizeof(cl_long), "the integer error state C of every pixel", NULL},
    [HALFTONE] = {"halftone", DB_ITEM_PIXELS, 1, "0 = black dot, 255 = white", NULL},
    [REPORT] = {"report", DB_ITEM_FIXED, R_VALUES * sizeof(cl_long), "rounds, convergence, toggles, swaps", NULL},
};

/* Levels of the threshold array that a margin of D gray levels uses: a shadow
** pixel A < D compares against levels below A. */
static int tarray_levels(const db_job *job)
{
    int d = (int)job->params[P_D];
    return d > 1 ? d - 1 : 0;
}

static db_status tarray_impl(db_stage_run *run)
{
    const db_job *job = db_stage_job(run);
    const uint8_t *t = db_dbs_tarray_get(DB_DBS_TARRAY_SIDE, tarray_levels(job), (uint32_t)job->params[P_SEED]);
    if (!t)
        return db_error_status();
    return db_stage_write(run, db_stage_out(run, 0), 0, (size_t)DB_DBS_TARRAY_SIDE * DB_DBS_TARRAY_SIDE, t);
}

static db_status init(db_stage_run *run)
{
    static const size_t local1 = 256, local2[2] = {32, 8};
    const db_job *job = db_stage_job(run);
    cl_int w = db_stage_width(run), h = db_stage_height(run), channels = db_stage_channels(run);
    cl_int rule = (cl_int)job->gray, m = DB_DBS_TARRAY_SIDE, d = (cl_int)job->params[P_D];
    cl_uint seed = (cl_uint)job->params[P_SEED];
    cl_ulong n = (cl_ulong)w * (cl_ulong)h;
    db_dbs_model model;
    db_dbs_model_make(job->params[P_SIGMA], &model);
    cl_int sv = (cl_int)model.sv;
    cl_mem img = db_stage_in(run, 0), tarray = db_stage_in(run, 1);
    cl_mem state = db_stage_out(run, 0), err = db_stage_out(run, 1);
    cl_mem gray = db_stage_scratch(run, (size_t)n);
    cl_mem e = db_stage_scratch(run, (size_t)(w + 2 * DB_DBS_W) * (size_t)(h + 2 * DB_DBS_W) * sizeof(cl_int));
    cl_mem v = db_stage_constant(run, model.v, sizeof model.v);
    cl_kernel kgray = db_stage_kernel(run, "gray.cl", "gray_convert");
    cl_kernel kstate = db_stage_kernel(run, "dbs.cl", "dbs_init_state");
    cl_kernel ke = db_stage_kernel(run, "dbs.cl", "dbs_init_e");
    cl_kernel kc = db_stage_kernel(run, "dbs.cl", "dbs_init_c");
    if (!gray || !e || !v || !kgray || !kstate || !ke || !kc)
        return db_error_status();
    const size_t n1 = (size_t)n, grid[2] = {(size_t)w, (size_t)h};
    const size_t egrid[2] = {(size_t)w + 2 * DB_DBS_W, (size_t)h + 2 * DB_DBS_W};
    db_status st;
    if ((st = db_stage_args(run, kgray, 5, sizeof img, &img, sizeof gray, &gray, sizeof n, &n, sizeof channels,
                            &channels, sizeof rule, &rule)) != DB_OK ||
        (st = db_stage_launch_any(run, kgray, 1, &n1, &local1)) != DB_OK ||
        (st = db_stage_args(run, kstate, 8, sizeof gray, &gray, sizeof tarray, &tarray, sizeof m, &m, sizeof w, &w,
                            sizeof h, &h, sizeof d, &d, sizeof seed, &seed, sizeof state, &state)) != DB_OK ||
        (st = db_stage_launch_any(run, kstate, 2, grid, local2)) != DB_OK ||
        (st = db_stage_args(run, ke, 7, sizeof gray, &gray, sizeof state, &state, sizeof w, &w, sizeof h, &h,
                            sizeof v, &v, sizeof sv, &sv, sizeof e, &e)) != DB_OK ||
        (st = db_stage_launch_any(run, ke, 2, egrid, local2)) != DB_OK ||
        (st = db_stage_args(run, kc, 5, sizeof e, &e, sizeof w, &w, sizeof h, &h, sizeof v, &v, sizeof err,
                            &err)) != DB_OK)
        return st;
    return db_stage_launch_any(run, kc, 2, grid, local2);
}

/* What the raster search needs besides its buffers. */
struct raster_arg {
    int width, height, max_passes;
    double sigma;
};

/* The sequential raster search (host code). Buffers: state, error, halftone, report. */
static void raster_host(void *const *ptrs, const void *argp)
{
    const struct raster_arg *a = argp;
    db_dbs_model model;
    db_dbs_model_make(a->sigma, &model);
    db_dbs_search s = {.width = a->width, .height = a->height, .state = ptrs[0], .c = ptrs[1], .model = &model};
    int converged = 0;
    int passes = db_dbs_raster(&s, a->max_passes, &converged);
    uint8_t *out = ptrs[2];
    int64_t *report = ptrs[3];
    for (size_t i = 0; i < (size_t)a->width * (size_t)a->height; i++)
        out[i] = (s.state[i] & DB_DBS_WHITE) ? 255 : 0;
    report[R_ROUNDS] = passes;
    report[R_CONVERGED] = converged;
    report[R_TOGGLES] = s.toggles;
    report[R_SWAPS] = s.swaps;
}

static db_status search_raster(db_stage_run *run)
{
    const db_job *job = db_stage_job(run);
    struct raster_arg a = {db_stage_width(run), db_stage_height(run), (int)job->params[P_MAX_ROUNDS],
                           job->params[P_SIGMA]};
    cl_mem mems[4] = {db_stage_in(run, 0), db_stage_in(run, 1), db_stage_out(run, 2), db_stage_out(run, 3)};
    return db_stage_host(run, "raster_dbs", raster_host, &a, sizeof a, mems, 4);
}

/* What a change at p subtracts from C (times a0 = -1 for a white pixel, 1 for
** a black one) over the DELTA_SIDE square from min(p, q) - CW: for a swap with
** partner j (q = p + d), 255 (CVV(t - p) - CVV(t - q)); for a toggle (slot 8,
** the square from p - CW), 255 CVV(t - p). CVV is 0 beyond CW. */
#define DELTA_SIDE (DB_DBS_CTAPS + 1)
static void make_deltas(const cl_long *cvv255, cl_long deltas[9][DELTA_SIDE * DELTA_SIDE])
{
    const int cw = DB_DBS_CW;
    for (int j = 0; j < 9; j++) {
        const int dy = j < 8 ? db_dbs_partner_dy[j] : 0, dx = j < 8 ? db_dbs_partner_dx[j] : 0;
        const int oy = (dy < 0 ? dy : 0) - cw, ox = (dx < 0 ? dx : 0) - cw;
        for (int i = 0; i < DELTA_SIDE * DELTA_SIDE; i++) {
            const int ty = oy + i / DELTA_SIDE, tx = ox + i % DELTA_SIDE, uy = ty - dy, ux = tx - dx;
            cl_long v = 0;
            if (abs(ty) <= cw && abs(tx) <= cw)
                v += cvv255[(ty + cw) * DB_DBS_CTAPS + tx + cw];
            if (j < 8 && abs(uy) <= cw && abs(ux) <= cw)
                v -= cvv255[(uy + cw) * DB_DBS_CTAPS + ux + cw];
            deltas[j][i] = v;
        }
    }
}

/* Koge's block search: rounds of four launches, one per parity group, until a
** round changes nothing or max-rounds ran. The flag is read every
** ROUNDS_PER_READ rounds: a round enqueued after convergence finds every block
** clean and costs a few microseconds on a GPU, less than the device idling
** while the host reads. */
#define ROUNDS_PER_READ 4
static db_status search_blocks(db_stage_run *run, size_t group, int slab)
{
    const db_job *job = db_stage_job(run);
    db_device *dev = db_stage_device(run);
    cl_int w = db_stage_width(run), h = db_stage_height(run), k = (cl_int)job->params[P_BLOCK];
    int max_rounds = (int)job->params[P_MAX_ROUNDS];
    slab = slab < k ? slab : k;
    size_t tile = (size_t)(k + 2 * (DB_DBS_CW + 1)), tile_rows = (size_t)(slab + 2 * (DB_DBS_CW + 1));
    size_t ring = (size_t)(k + 2);
    /* Two bit planes of MARK_WORDS (cl/dbs.cl) words a row over the block and a halo of CW + 2. */
    size_t marks = 2 * (size_t)(k + 2 * (DB_DBS_CW + 2)) * 3 * sizeof(cl_uint);
    size_t local_bytes = tile_rows * tile * sizeof(cl_long) + ring * ring + marks;
    if (local_bytes > dev->local_mem)
        return db_fail(DB_ERR_USAGE, "dbs: block=%d needs %zu bytes of local memory, but device '%s' has %llu; "
                       "use a smaller block (--param block=32)", (int)k, local_bytes, dev->info.name,
                       (unsigned long long)dev->local_mem);
    db_dbs_model model;
    db_dbs_model_make(job->params[P_SIGMA], &model);
    cl_long cvv255[DB_DBS_CTAPS * DB_DBS_CTAPS];
    for (int i = 0; i < DB_DBS_CTAPS * DB_DBS_CTAPS; i++)
        cvv255[i] = 255 * model.cvv[i];
    cl_mem state = db_stage_in(run, 0), err = db_stage_in(run, 1);
    cl_mem out = db_stage_out(run, 2), report = db_stage_out(run, 3);
    cl_long deltas[9][DELTA_SIDE * DELTA_SIDE];
    make_deltas(cvv255, deltas);
    cl_mem cvv = db_stage_constant(run, cvv255, sizeof cvv255);
    cl_mem dmem = db_stage_constant(run, deltas, sizeof deltas);
    cl_mem counters = db_stage_scratch(run, 4 * sizeof(cl_int));
    const cl_int bcols = (w + k - 1) / k, brows = (h + k - 1) / k, nblocks = bcols * brows;
    cl_ulong n = (cl_ulong)w * (cl_ulong)h;
    cl_mem dirty = db_stage_scratch(run, (size_t)n), blocks = db_stage_scratch(run, (size_t)nblocks);
    cl_kernel kbegin = db_stage_kernel(run, "dbs.cl", "dbs_search_begin");
    cl_kernel kgroup = db_stage_kernel(run, "dbs.cl", "dbs_search_group");
    cl_kernel kend = db_stage_kernel(run, "dbs.cl", "dbs_round_end");
    cl_kernel kout = db_stage_kernel(run, "dbs.cl", "dbs_output");
    if (!cvv || !dmem || !counters || !dirty || !blocks || !kbegin || !kgroup || !kend || !kout)
        return db_error_status();
    db_status st;
    const size_t one = 1;
    const size_t n1 = (size_t)n, local1 = 256;
    if ((st = db_stage_args(run, kbegin, 6, sizeof counters, &counters, sizeof report, &report, sizeof dirty, &dirty,
                            sizeof n, &n, sizeof blocks, &blocks, sizeof nblocks, &nblocks)) != DB_OK ||
        (st = db_stage_args(run, kend, 2, sizeof counters, &counters, sizeof report, &report)) != DB_OK ||
        (st = db_stage_args(run, kgroup, 18, sizeof state, &state, sizeof err, &err, sizeof w, &w, sizeof h, &h,
                            sizeof k, &k, sizeof(cl_int), &(cl_int){0}, sizeof(cl_int), &(cl_int){0}, sizeof cvv,
                            &cvv, sizeof dmem, &dmem, sizeof counters, &counters,
                            tile_rows * tile * sizeof(cl_long), NULL, ring * ring, NULL, sizeof dirty, &dirty,
                            sizeof blocks, &blocks, sizeof bcols, &bcols, sizeof brows, &brows, marks, NULL,
                            sizeof slab, &slab)) != DB_OK ||
        (st = db_stage_launch(run, kbegin, 1, &n1, group > 1 ? &local1 : db_any_group)) != DB_OK)
        return st;
    for (int round = 0; round < max_rounds; round++) {
        for (cl_int pr = 0; pr < 2; pr++)
            for (cl_int pc = 0; pc < 2; pc++) {
                const size_t gcols = (size_t)(bcols + 1 - pc) / 2, grows = (size_t)(brows + 1 - pr) / 2;
                if (!gcols || !grows)
                    continue;
                const size_t global[2] = {gcols * group, grows}, local[2] = {group, 1};
                if ((st = db_stage_args(run, kgroup, 7, sizeof state, &state, sizeof err, &err, sizeof w, &w,
                                        sizeof h, &h, sizeof k, &k, sizeof pr, &pr, sizeof pc, &pc)) != DB_OK ||
                    (st = db_stage_launch(run, kgroup, 2, global, local)) != DB_OK)
                    return st;
            }
        if ((st = db_stage_launch(run, kend, 1, &one, NULL)) != DB_OK)
            return st;
        if ((round + 1) % ROUNDS_PER_READ && round + 1 < max_rounds)
            continue;
        cl_long converged = 0;
        if ((st = db_stage_read(run, report, R_CONVERGED * sizeof(cl_long), sizeof converged, &converged)) != DB_OK)
            return st;
        if (converged)
            break;
    }
    if ((st = db_stage_args(run, kout, 3, sizeof state, &state, sizeof n, &n, sizeof out, &out)) != DB_OK)
        return st;
    return db_stage_launch(run, kout, 1, &n1, group > 1 ? &local1 : db_any_group);
}

static db_status search_cpu(db_stage_run *run)
{
    if ((int)db_stage_job(run)->params[P_ORDER] == ORDER_RASTER)
        return search_raster(run);
    return search_blocks(run, 1, INT_MAX);
}

static db_status search_gpu(db_stage_run *run)
{
    if ((int)db_stage_job(run)->params[P_ORDER] == ORDER_RASTER)
        return db_fail(DB_ERR_USAGE, "dbs: order=raster is the sequential search on the host; map the search stage "
                       "to cpu (--map search=cpu) or use order=blocks");
    return search_blocks(run, GPU_GROUP, GPU_SLAB);
}

static const char *const order_names[ORDER_COUNT] = {"blocks", "raster"};

static const db_param params[N_PARAMS] = {
    [P_SEED] = {.name = "seed", .kind = DB_PARAM_INT, .def = 1, .min = 0, .max = 4294967295.0,
                .doc = "seed of the random dither and of the threshold array"},
    [P_SIGMA] = {.name = "sigma", .kind = DB_PARAM_REAL, .def = 1.2, .min = 0.5, .max = 3.0,
                 .doc = "sigma of the Gaussian model of the eye (9x9 filter)"},
    [P_D] = {.name = "D", .kind = DB_PARAM_INT, .def = 9, .min = 0, .max = 64,
             .doc = "clipping-free margin in gray levels: below D and above 255-D minority dots come from the "
                    "threshold array and stay fixed (0 = plain DBS)"},
    [P_BLOCK] = {.name = "block", .kind = DB_PARAM_INT, .def = 32, .min = 20, .max = 48,
                 .doc = "side of the blocks searched in parallel (at least 20 keeps blocks of a group apart)"},
    [P_MAX_ROUNDS] = {.name = "max-rounds", .kind = DB_PARAM_INT, .def = 100, .min = 1, .max = 100000,
                      .doc = "cap on search rounds (raster passes); a warning says when it was reached"},
    [P_ORDER] = {.name = "order", .kind = DB_PARAM_INT, .def = ORDER_BLOCKS, .min = 0, .max = ORDER_COUNT - 1,
                 .doc = "blocks: parallel rounds of four block groups; raster: the sequential search (cpu role)",
                 .names = order_names, .n_names = ORDER_COUNT},
};


static const db_stage stages[] = {
    {.name = "tarray", .doc = "the clipping-free threshold array (made once per D and seed, then cached)",
     .out = DB_PORTS(TARRAY), .impl = {tarray_impl, tarray_impl}},
    {.name = "init", .doc = "gray, labels, initial halftone and the integer error state",
     .in = DB_PORTS(IMAGE, TARRAY), .out = DB_PORTS(STATE, ERR), .impl = {init, init},
     .sources = {"gray.cl", "dbs.cl"}},
    {.name = "search", .doc = "DBS toggles and swaps until a round changes nothing", .in = DB_PORTS(STATE, ERR),
     .out = DB_PORTS(STATE, ERR, HALFTONE, REPORT), .impl = {search_cpu, search_gpu}, .sources = {"dbs.cl"}},
};

static const db_report_field report[] = {
    {.name = "rounds", .index = R_ROUNDS},
    {.name = "converged", .index = R_CONVERGED,
     .if_zero = "the search stopped at max-rounds before a round changed nothing; the halftone is valid but "
                "less refined (raise --param max-rounds)"},
    {.name = "toggles", .index = R_TOGGLES},
    {.name = "swaps", .index = R_SWAPS},
};

const db_algo db_algo_dbs = {
    .name = "dbs",
    .doc = "clipping-free direct binary search halftoning (gray or colour in, halftone out)",
    .items = items,
    .n_items = DB_LEN(items),
    .input = IMAGE,
    .output = HALFTONE,
    .stages = stages,
    .n_stages = DB_LEN(stages),
    .params = params,
    .n_params = DB_LEN(params),
    .report_fields = report,
    .n_report_fields = DB_LEN(report),
    .report_item = REPORT,
    .report_wide = 1,
};
