/*
** hbk.c — HBK (Soua, Kachouri, Akil): k-means hybrid binarization of colour pages.
** kmeans → label. `kmeans` runs the whole global loop: every outer iteration
** is a local k-means per block from the global centroids and a global update
** to which flat blocks (paper split in two) give only paper; the loop stays on
** the device, which only reports a convergence flag now and then. `label`
** keeps each block's local split unless the global centroids clear the block.
** The algorithm, its final rule and the evidence for it: docs/hbk.md.
*/
#include "algorithms/algorithms.h"

enum { IMAGE, CENTROIDS, STATE, BINARY, N_ITEMS };
enum { P_BLOCK, P_LOCAL_MAX, P_GLOBAL_MAX };

/* Layout of the state item (int32), shared with cl/hbk.cl. */
enum { STATE_CONVERGED = 6, STATE_ITERATIONS = 7, STATE_PASSES = 8, STATE_INTS = 9 };

static int block_of(const db_job *job)
{
    return (int)job->params[P_BLOCK];
}

static size_t n_blocks(const db_job *job, int width, int height)
{
    size_t b = (size_t)block_of(job);
    return ((size_t)width + b - 1) / b * (((size_t)height + b - 1) / b);
}

static size_t centroids_size(const db_job *job, int width, int height)
{
    return n_blocks(job, width, height) * 4 * sizeof(cl_int);
}

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "the decoded input, RGB (gray is taken as R = G = B)", NULL},
    [CENTROIDS] = {"centroids", DB_ITEM_COMPUTED, 0,
                   "each block's final labelling test: its final local centroids' nearest-centroid test, or "
                   "all white where the global centroids clear the block (cl/hbk.cl)",
                   centroids_size},
    [STATE] = {"state", DB_ITEM_FIXED, STATE_INTS * sizeof(cl_int),
               "global centroids (Q8), convergence flag, outer iterations, assignment passes", NULL},
    [BINARY] = {"binary", DB_ITEM_PIXELS, 1, "0 = ink, 255 = background", NULL},
};

/* Work-group size of the GPU kernel: a sixteenth of the block's pixels, each
** work-item holding 16 (cl/hbk.cl's MAX_PER_ITEM; at most MAX_GROUP work-items),
** or 32 work-items where the block has as many pixels but not sixteen times as
** many. Each local pass sums over the group's work-items in local memory, so
** fewer work-items sum in fewer levels, until too few are left to hide the
** loads (8, 16 and 32 pixels a work-item compared: bench/results/kernels-h100.md). */
static size_t group_size(const db_job *job)
{
    size_t px = (size_t)block_of(job) * (size_t)block_of(job);
    return px / 16 >= 32 ? px / 16 : px < 32 ? px : 32;
}

/* Runs the global loop. Iterations are enqueued in growing rounds (4, 8, 16
** ...) and the flag read after each: kernels of iterations past convergence
** return at once. Most pages converge within a first round of four; a
** shorter one costs them a read and a second round's launches
** (bench/results/kernels-h100.md, "HBK"). */
static db_status kmeans_impl(db_stage_run *run, int gpu)
{
    const db_job *job = db_stage_job(run);
    cl_int w = db_stage_width(run), h = db_stage_height(run), channels = db_stage_channels(run);
    cl_int block = block_of(job), local_max = (cl_int)job->params[P_LOCAL_MAX];
    cl_int global_max = (cl_int)job->params[P_GLOBAL_MAX];
    cl_int blocks = (cl_int)n_blocks(job, w, h);
    size_t lsize = group_size(job);
    if (gpu && db_stage_device(run)->max_group < lsize)
        gpu = 0; /* the per-block kernel needs lsize work-items; the serial one gives the same result */
    cl_mem img = db_stage_in(run, 0), tests = db_stage_out(run, 0), state = db_stage_out(run, 1);
    cl_mem acc = db_stage_scratch(run, (size_t)blocks * 9 * sizeof(cl_uint));
    cl_kernel init = db_stage_kernel(run, "hbk.cl", "hbk_init");
    cl_kernel local = db_stage_kernel(run, "hbk.cl", gpu ? "hbk_local_groups" : "hbk_local_serial");
    cl_kernel global = db_stage_kernel(run, "hbk.cl", "hbk_global");
    if (!acc || !init || !local || !global)
        return db_error_status();
    db_status st = db_stage_args(run, init, 1, sizeof state, &state);
    if (st == DB_OK)
        st = db_stage_args(run, local, 10, sizeof img, &img, sizeof w, &w, sizeof h, &h, sizeof channels, &channels,
                           sizeof block, &block, sizeof local_max, &local_max, sizeof global_max, &global_max,
                           sizeof state, &state, sizeof tests, &tests, sizeof acc, &acc);
    if (st == DB_OK)
        st = db_stage_args(run, global, 4, sizeof acc, &acc, sizeof blocks, &blocks, sizeof global_max, &global_max,
                           sizeof state, &state);
    if (st != DB_OK)
        return st;
    const size_t one = 1;
    if ((st = db_stage_launch(run, init, 1, &one, NULL)) != DB_OK)
        return st;
    size_t bcols = ((size_t)w + block - 1) / block, brows = ((size_t)h + block - 1) / block;
    const size_t group_global[2] = {bcols * lsize, brows}, group_local[2] = {lsize, 1};
    const size_t serial_global = (size_t)blocks;
    const size_t reduce = gpu ? 256 : 16;
    int enqueued = 0, round = 4;
    while (enqueued < global_max) {
        for (int i = 0; i < round && enqueued < global_max; i++, enqueued++) {
            st = gpu ? db_stage_launch(run, local, 2, group_global, group_local)
                     : db_stage_launch(run, local, 1, &serial_global, db_any_group);
            if (st == DB_OK)
                st = db_stage_launch(run, global, 1, &reduce, &reduce);
            if (st != DB_OK)
                return st;
        }
        cl_int converged = 0;
        if ((st = db_stage_read(run, state, STATE_CONVERGED * sizeof(cl_int), sizeof converged, &converged)) != DB_OK)
            return st;
        if (converged)
            break;
        round *= 2;
    }
    return DB_OK;
}

static db_status kmeans_cpu(db_stage_run *run)
{
    return kmeans_impl(run, 0);
}

static db_status kmeans_gpu(db_stage_run *run)
{
    return kmeans_impl(run, 1);
}

static db_status label(db_stage_run *run)
{
    cl_kernel k = db_stage_kernel(run, "hbk.cl", "hbk_label_pixels");
    if (!k)
        return db_error_status();
    cl_int w = db_stage_width(run), h = db_stage_height(run), channels = db_stage_channels(run);
    cl_int block = block_of(db_stage_job(run));
    cl_mem img = db_stage_in(run, 0), tests = db_stage_in(run, 1), out = db_stage_out(run, 0);
    db_status st = db_stage_args(run, k, 7, sizeof img, &img, sizeof w, &w, sizeof h, &h, sizeof channels, &channels,
                                 sizeof block, &block, sizeof tests, &tests, sizeof out, &out);
    if (st != DB_OK)
        return st;
    const size_t global[2] = {(size_t)w, (size_t)h}, gpu_local[2] = {64, 4};
    return db_stage_launch_any(run, k, 2, global, gpu_local);
}

static const double block_choices[] = {8, 16, 32};

/* Block 32, the HBK paper's, has the best mean F-measure of the three on DIBCO
** 2009-2013 under the final rule (docs/hbk.md §6). */
static const db_param params[] = {
    [P_BLOCK] = {.name = "block", .kind = DB_PARAM_INT, .def = 32, .min = 8, .max = 32,
                 .doc = "side of the square blocks of the local k-means (a length: 32, 3mm)", .length = true,
                 .choices = block_choices,
                 .n_choices = DB_LEN(block_choices)},
    [P_LOCAL_MAX] = {.name = "local-max", .kind = DB_PARAM_INT, .def = 50, .min = 1, .max = 10000,
                     .doc = "cap on the k-means iterations inside a block"},
    [P_GLOBAL_MAX] = {.name = "global-max", .kind = DB_PARAM_INT, .def = 100, .min = 1, .max = 10000,
                      .doc = "cap on the outer iterations (a warning says when it was reached)"},
};

static const db_stage stages[] = {
    {.name = "kmeans", .doc = "block k-means from the global centroids, repeated until the global centroids converge; "
            "flat blocks add only to the paper centroid",
     .in = DB_PORTS(IMAGE), .out = DB_PORTS(CENTROIDS, STATE), .impl = {kmeans_cpu, kmeans_gpu},
     .sources = {"hbk.cl"}},
    {.name = "label", .doc = "each pixel to its block's nearest final centroid (ties go to white), or white in a block "
            "whose split is a single mode or less than half as wide as the global one",
     .in = DB_PORTS(IMAGE, CENTROIDS), .out = DB_PORTS(BINARY), .impl = {label, label},
     .sources = {"hbk.cl"}},
};

static const db_report_field report[] = {
    {.name = "outer_iterations", .index = STATE_ITERATIONS},
    {.name = "local_passes", .index = STATE_PASSES},
    {.name = "converged", .index = STATE_CONVERGED,
     .if_zero = "the global centroids did not converge within global-max outer iterations; the result uses the "
                "last one"},
};

const db_algo db_algo_hbk = {
    .name = "hbk",
    .doc = "HBK: two-class k-means in RGB per block with global centroids (colour pages)",
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
    .report_item = STATE,
};
