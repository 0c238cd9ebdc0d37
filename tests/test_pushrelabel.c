/*
** test_pushrelabel.c — the push-relabel grid cut (algorithms/pushrelabel.h) on
** random grid graphs against Dinic's algorithm (tests/reference_maxflow.c):
** the same flow value and the same canonical sink side, for every global
** relabel strategy, on both roles' devices, with zero and saturated
** capacities, ties between t-links and regions cut off by zero links; and warm
** starts up Howe's ascending capacity table give the cold solve's cut.
** Both kernel choices run on the gpu role (DOCBIN_PUSHRELABEL=global and
** tiles; PoCL is a CPU device, which would get `global` only), on graphs that
** stress the tiles' borders too: sizes that are no multiple of the 32x32 tile,
** 1 x N and N x 1 grids, a single path snaking through every tile, and flow
** that must cross the whole grid.
** The cut runs alone in a one-stage test algorithm whose input image only
** gives the grid size; the graph comes from this file's globals.
*/
#define _GNU_SOURCE /* setenv */
#include <string.h>
#include "algorithms/pushrelabel.h"
#include "tests/reference_maxflow.h"
#include "tests/testutil.h"

static uint32_t rng = 1789;

/* Kept-link capacities round(32 c) for Howe's 33 values of c (docs/howe.md, "The values of c"). */
static const int32_t table[33] = {640,   761,   905,   1076,  1280,  1522,  1810,  2153,   2560,   3044,  3620,
                                  4305,  5120,  6089,  7241,  8611,  10240, 12177, 14482,  17222,  20480, 24355,
                                  28963, 34443, 40960, 48710, 57926, 68886, 81920, 97420, 115852, 137772, 163840};

/* The graph of the next run: t-links, and 0/1 masks of the links that exist. */
static int32_t *g_source, *g_sink, *g_right_mask, *g_down_mask;

enum { IMAGE, SIDE, REPORT, N_ITEMS };
enum { P_STRATEGY, P_CHAIN, N_PARAMS };

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "gives the grid size", NULL},
    [SIDE] = {"side", DB_ITEM_PIXELS, 1, "1 = sink side", NULL},
    [REPORT] = {"report", DB_ITEM_FIXED, 2 * sizeof(cl_long), "flow value", NULL},
};

/* Links of capacity table[0] * mask, solved, then raised through table[1..chain-1]
** with a warm solve after each raise. */
static db_status cut(db_stage_run *run)
{
    const db_job *job = db_stage_job(run);
    int rows = db_stage_height(run), cols = db_stage_width(run), chain = (int)job->params[P_CHAIN];
    size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(int32_t);
    int32_t *right = malloc(bytes), *down = malloc(bytes);
    for (size_t i = 0; i < n; i++) {
        right[i] = g_right_mask[i] * table[0];
        down[i] = g_down_mask[i] * table[0];
    }
    int32_t steps[DB_LEN(table)] = {0};
    for (int j = 1; j < chain; j++)
        steps[j - 1] = table[j] - table[j - 1];
    cl_mem src = db_stage_constant(run, g_source, bytes), snk = db_stage_constant(run, g_sink, bytes);
    cl_mem r = db_stage_constant(run, right, bytes), d = db_stage_constant(run, down, bytes);
    cl_mem deltas = db_stage_constant(run, steps, sizeof steps);
    free(right);
    free(down);
    if (!src || !snk || !r || !d || !deltas)
        return db_error_status();
    db_pr_cut pr;
    db_status st = db_pr_cut_begin(&pr, run, rows, cols, src, snk, r, d, (db_relabel)job->params[P_STRATEGY]);
    if (st == DB_OK)
        st = db_pr_cut_solve(&pr);
    for (int j = 1; j < chain && st == DB_OK; j++)
        if ((st = db_pr_cut_raise_links(&pr, deltas, j - 1, rows)) == DB_OK)
            st = db_pr_cut_solve(&pr);
    if (st == DB_OK)
        st = db_pr_cut_sink_side(&pr, db_stage_out(run, 0));
    if (st == DB_OK)
        st = db_pr_cut_flow(&pr, db_stage_out(run, 1), 0);
    return st;
}

static const db_stage stages[] = {
    {.name = "cut", .doc = "push-relabel", .in = DB_PORTS(IMAGE), .out = DB_PORTS(SIDE, REPORT), .impl = {cut, cut},
     .sources = {"pushrelabel.cl"}},
};

static const db_param params[N_PARAMS] = {
    [P_STRATEGY] = {.name = "relabel", .kind = DB_PARAM_INT, .def = DB_RELABEL_EXPONENTIAL, .min = 0,
                    .max = DB_RELABEL_COUNT - 1, .doc = "strategy"},
    [P_CHAIN] = {.name = "chain", .kind = DB_PARAM_INT, .def = 1, .min = 1, .max = 33, .doc = "capacities"},
};

static const db_report_field report_fields[] = {{.name = "flow", .index = 0}};

static const db_algo algo = {
    .name = "pushrelabel-test",
    .doc = "a grid cut",
    .items = items,
    .n_items = DB_LEN(items),
    .input = IMAGE,
    .output = SIDE,
    .stages = stages,
    .n_stages = DB_LEN(stages),
    .params = params,
    .n_params = N_PARAMS,
    .report_fields = report_fields,
    .n_report_fields = 1,
    .report_item = REPORT,
    .report_wide = 1,
};

typedef enum kind { UNIFORM, HOWE_LIKE, SPARSE_LINKS, TIES, SNAKE, FAR, N_KINDS } kind;
static const char *const kind_names[N_KINDS] = {"uniform", "howe-like", "sparse-links", "ties", "snake", "far"};

/* Random t-links and link masks of one kind. */
static void make_graph(int rows, int cols, kind k)
{
    size_t n = (size_t)rows * (size_t)cols;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = test_random(&rng);
        int r = (int)(i / (size_t)cols), c = (int)(i % (size_t)cols);
        switch (k) {
        case UNIFORM:
            g_source[i] = (int32_t)(x % 1000);
            g_sink[i] = (int32_t)((x >> 10) % 1000);
            if (x % 7 == 0)
                g_source[i] = 0;
            break;
        case HOWE_LIKE: {
            /* Smooth background with dark strokes: lap2 in [-2040, 2040], −1000 on "bias". */
            int lap2 = ((r / 3 + c / 4) % 5 == 0) ? 300 + (int)(x % 700) : -(int)(x % 200);
            if (x % 11 == 0)
                lap2 = -1000;
            if (x % 97 == 0)
                lap2 = (x >> 8) % 2 ? 2040 : -2040;
            g_source[i] = 16 * (3000 - lap2);
            g_sink[i] = 16 * (3000 + lap2);
            break;
        }
        case SPARSE_LINKS:
            g_source[i] = (int32_t)(x % 80641);
            g_sink[i] = (int32_t)((x >> 12) % 80641);
            break;
        case SNAKE: { /* sources on the first eighth of a path through every node, sinks on the last */
            long at = (long)r * cols + (r % 2 ? cols - 1 - c : c);
            g_source[i] = at < (long)n / 8 + 1 ? (int32_t)(x % 5000) : 0;
            g_sink[i] = at >= (long)n - (long)n / 8 - 1 ? (int32_t)((x >> 12) % 300) : 0;
            break;
        }
        case FAR: { /* sources in the first quarter along the longer side, sinks in the last */
            int at = cols >= rows ? c : r, len = cols >= rows ? cols : rows;
            g_source[i] = 4 * at < len ? (int32_t)(x % 3000) : 0;
            g_sink[i] = 4 * at >= 3 * len ? (int32_t)((x >> 12) % 3000) : 0;
            break;
        }
        default: /* ties: equal t-links everywhere but a few nodes */
            g_source[i] = g_sink[i] = 48000;
            if (x % 13 == 0)
                g_sink[i] += (int32_t)((x >> 8) % 5000);
            if (x % 17 == 0)
                g_source[i] += (int32_t)((x >> 8) % 5000);
            break;
        }
        uint32_t y = test_random(&rng);
        int keep = k == SPARSE_LINKS ? y % 3 == 0 : y % 10 != 0;
        /* A column and a row without links split the grid into regions. */
        if (k == SPARSE_LINKS || k == TIES)
            keep = keep && c != cols / 2;
        g_right_mask[i] = keep && c < cols - 1;
        keep = k == SPARSE_LINKS ? (y >> 8) % 3 == 0 : (y >> 8) % 10 != 0;
        if (k == SPARSE_LINKS || k == TIES)
            keep = keep && r != rows / 3;
        g_down_mask[i] = keep && r < rows - 1;
        if (k == SNAKE) { /* the rows, joined at alternate ends */
            g_right_mask[i] = c < cols - 1;
            g_down_mask[i] = r < rows - 1 && c == (r % 2 ? 0 : cols - 1);
        }
    }
}

static void check(db_context *ctx, int rows, int cols, kind k, int chain)
{
    size_t n = (size_t)rows * (size_t)cols;
    int32_t *right = malloc(n * sizeof *right), *down = malloc(n * sizeof *down);
    uint8_t *expect = malloc(n);
    for (size_t i = 0; i < n; i++) {
        right[i] = g_right_mask[i] * table[chain - 1];
        down[i] = g_down_mask[i] * table[chain - 1];
    }
    int64_t flow = ref_grid_maxflow(rows, cols, g_source, g_sink, right, down, expect);
    CHECK(flow >= 0, "reference failed");
    db_image *img = db_image_new(cols, rows, 1);
    memset(img->data, 0, (size_t)img->stride * (size_t)rows);
    /* The cpu role with the kernels its device type picks, the gpu role with each. */
    for (int run = 0; run < 1 + DB_PR_KERNELS_COUNT; run++)
        for (int s = 0; s < DB_RELABEL_COUNT; s++) {
            int role = run > 0;
            const char *kernels = run > 0 ? db_pr_kernels_names[run - 1] : "default";
            if (run > 0)
                setenv("DOCBIN_PUSHRELABEL", kernels, 1);
            else
                unsetenv("DOCBIN_PUSHRELABEL");
            /* Every strategy on small grids; on larger ones the default and one
            ** other per role, to keep the test short on PoCL. Without global
            ** relabels during the run, unreachable excess climbs one level per
            ** iteration up to rows*cols. */
            if (n > 300 && s != DB_RELABEL_EXPONENTIAL && s != (role ? DB_RELABEL_FIXED : DB_RELABEL_INITIAL))
                continue;
            db_job job;
            db_job_defaults(&algo, &job);
            job.params[P_STRATEGY] = s;
            job.params[P_CHAIN] = chain;
            db_map map = {.n = 1, .role = {(db_role)role}};
            db_image *out = NULL;
            db_report report = {0};
            db_status st = db_run(ctx, &algo, &map, &job, img, &out, &report, NULL);
            CHECK(st == DB_OK, "%dx%d %s on %s (%s kernels): %s", rows, cols, kind_names[k],
                  db_role_name((db_role)role), kernels, db_error_message());
            if (st != DB_OK)
                continue;
            size_t d = 0;
            for (int y = 0; y < rows; y++)
                d += test_diff(out->data + (size_t)y * out->stride, expect + (size_t)y * cols, (size_t)cols);
            CHECK(d == 0 && report.values[0] == flow,
                  "%dx%d %s, chain %d, relabel %s on %s (%s kernels): flow %lld (Dinic %lld), %zu nodes on the "
                  "other side", rows, cols, kind_names[k], chain, db_relabel_names[s], db_role_name((db_role)role),
                  kernels, (long long)report.values[0], (long long)flow, d);
            db_image_free(out);
        }
    db_image_free(img);
    free(right);
    free(down);
    free(expect);
}

int main(void)
{
    db_context *ctx = test_open_context();
    /* warm: also solve warm up to c = 160 (Howe's default) and, with `all`, the whole table. */
    static const struct { int rows, cols, warm, all; } sizes[] = {
        {1, 1, 0, 0},   {1, 9, 0, 0},    {9, 1, 0, 0},   {2, 2, 0, 0},    {7, 5, 1, 0},  {16, 16, 1, 1}, {32, 32, 1, 0},
        {33, 47, 1, 0}, {1, 300, 1, 0}, {300, 1, 0, 0}, {17, 130, 0, 0}, {64, 80, 0, 0}};
    int max = (int)(sizeof sizes / sizeof sizes[0]);
    size_t cap = 0;
    for (int s = 0; s < max; s++)
        if ((size_t)sizes[s].rows * (size_t)sizes[s].cols > cap)
            cap = (size_t)sizes[s].rows * (size_t)sizes[s].cols;
    g_source = malloc(cap * sizeof *g_source);
    g_sink = malloc(cap * sizeof *g_sink);
    g_right_mask = malloc(cap * sizeof *g_right_mask);
    g_down_mask = malloc(cap * sizeof *g_down_mask);
    for (int s = 0; s < max; s++)
        for (int k = 0; k < N_KINDS; k++) {
            make_graph(sizes[s].rows, sizes[s].cols, (kind)k);
            check(ctx, sizes[s].rows, sizes[s].cols, (kind)k, 1);
            if (sizes[s].warm)
                check(ctx, sizes[s].rows, sizes[s].cols, (kind)k, 13);
            if (sizes[s].all)
                check(ctx, sizes[s].rows, sizes[s].cols, (kind)k, 33);
        }
    /* A kernel choice that does not exist: a clear error, no image. */
    setenv("DOCBIN_PUSHRELABEL", "blocks", 1);
    db_job job;
    db_job_defaults(&algo, &job);
    db_image *img = db_image_new(4, 4, 1), *out = NULL;
    memset(img->data, 0, (size_t)img->stride * 4);
    make_graph(4, 4, UNIFORM);
    db_map map = {.n = 1, .role = {DB_ROLE_GPU}};
    db_status st = db_run(ctx, &algo, &map, &job, img, &out, NULL, NULL);
    CHECK(st == DB_ERR_USAGE && out == NULL && strstr(db_error_message(), "DOCBIN_PUSHRELABEL"),
          "DOCBIN_PUSHRELABEL=blocks: status %d, %s", (int)st, db_error_message());
    unsetenv("DOCBIN_PUSHRELABEL");
    db_image_free(img);
    db_image_free(out);
    free(g_source);
    free(g_sink);
    free(g_right_mask);
    free(g_down_mask);
    db_context_close(ctx);
    return test_result("pushrelabel");
}
