/*
** otsu.c — Otsu's global threshold: gray → histogram → binarize.
** The 64-bit histogram and the threshold scan: docs/algorithms.md, "Otsu".
*/
#include "algorithms/algorithms.h"

enum { IMAGE, GRAY, HISTOGRAM, BINARY, N_ITEMS };

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "the decoded input, gray or RGB"},
    [GRAY] = {"gray", DB_ITEM_PIXELS, 1, "8-bit gray"},
    [HISTOGRAM] = {"histogram", DB_ITEM_FIXED, 256 * sizeof(cl_ulong), "256 64-bit bin counts"},
    [BINARY] = {"binary", DB_ITEM_PIXELS, 1, "0 = ink, 255 = background"},
};

/* Partial histograms on the GPU: enough work-groups to fill a large device. */
#define GPU_GROUPS 1024
#define GPU_LOCAL 256

static db_status histogram_reduce(db_stage_run *run, cl_mem partial, cl_uint parts)
{
    cl_kernel k = db_stage_kernel(run, "histogram.cl", "histogram_reduce");
    if (!k)
        return db_error_status();
    cl_mem hist = db_stage_out(run, 0);
    db_status st = db_stage_args(run, k, 3, sizeof partial, &partial, sizeof parts, &parts, sizeof hist, &hist);
    if (st != DB_OK)
        return st;
    const size_t global = 256;
    return db_stage_launch(run, k, 1, &global, db_any_group);
}

static db_status histogram_cpu(db_stage_run *run)
{
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    /* A few chunks per compute unit; each chunk's 32-bit counts stay below 2^32
    ** because images hold fewer than 2^34 pixels and there are at least 64 chunks. */
    cl_uint chunks = db_stage_device(run)->info.compute_units * 4;
    if (chunks < 64)
        chunks = 64;
    cl_ulong chunk = (n + chunks - 1) / chunks;
    cl_mem partial = db_stage_scratch(run, (size_t)chunks * 256 * sizeof(cl_uint));
    cl_kernel k = db_stage_kernel(run, "histogram.cl", "histogram_chunks");
    if (!partial || !k)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0);
    db_status st = db_stage_args(run, k, 5, sizeof gray, &gray, sizeof n, &n, sizeof chunk, &chunk,
                                 sizeof chunks, &chunks, sizeof partial, &partial);
    if (st != DB_OK)
        return st;
    /* A work-group per chunk or so (db_any_group): with PoCL's own choice all
    ** 64 chunks went to one work-group, on one core, 6 to 8 times slower on
    ** 16 cores (bench/results/pocl-groups-h100.md). */
    size_t global = chunks;
    if ((st = db_stage_launch(run, k, 1, &global, db_any_group)) != DB_OK)
        return st;
    return histogram_reduce(run, partial, chunks);
}

static db_status histogram_gpu(db_stage_run *run)
{
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    cl_mem partial = db_stage_scratch(run, (size_t)GPU_GROUPS * 256 * sizeof(cl_uint));
    cl_kernel k = db_stage_kernel(run, "histogram.cl", "histogram_groups");
    if (!partial || !k)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0);
    db_status st = db_stage_args(run, k, 3, sizeof gray, &gray, sizeof n, &n, sizeof partial, &partial);
    if (st != DB_OK)
        return st;
    const size_t global = (size_t)GPU_GROUPS * GPU_LOCAL, local = GPU_LOCAL;
    if ((st = db_stage_launch(run, k, 1, &global, &local)) != DB_OK)
        return st;
    return histogram_reduce(run, partial, GPU_GROUPS);
}

/* Both roles: the 256-step scan in one work-item, then one comparison per pixel. */
static db_status binarize(db_stage_run *run)
{
    cl_mem t = db_stage_scratch(run, sizeof(cl_int));
    cl_kernel scan = db_stage_kernel(run, "otsu.cl", "otsu_threshold");
    cl_kernel bin = db_stage_kernel(run, "otsu.cl", "binarize_global");
    if (!t || !scan || !bin)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0), hist = db_stage_in(run, 1), out = db_stage_out(run, 0);
    db_status st = db_stage_args(run, scan, 2, sizeof hist, &hist, sizeof t, &t);
    if (st != DB_OK)
        return st;
    const size_t one = 1;
    if ((st = db_stage_launch(run, scan, 1, &one, NULL)) != DB_OK)
        return st;
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    if ((st = db_stage_args(run, bin, 4, sizeof gray, &gray, sizeof t, &t, sizeof out, &out, sizeof n, &n)) != DB_OK)
        return st;
    const size_t global = (size_t)n, gpu_local = 256;
    return db_stage_launch_any(run, bin, 1, &global, &gpu_local);
}

static const db_stage stages[] = {
    DB_GRAY_STAGE(IMAGE, GRAY),
    {.name = "histogram", .doc = "256-bin histogram, 64-bit counts", .in = DB_PORTS(GRAY),
     .out = DB_PORTS(HISTOGRAM), .impl = {histogram_cpu, histogram_gpu}, .sources = {"histogram.cl"}},
    {.name = "binarize", .doc = "Otsu's threshold T from the histogram; ink iff gray <= T",
     .in = DB_PORTS(GRAY, HISTOGRAM), .out = DB_PORTS(BINARY), .impl = {binarize, binarize},
     .sources = {"otsu.cl"}},
};

const db_algo db_algo_otsu = {
    .name = "otsu",
    .doc = "Otsu's global threshold (maximal between-class variance)",
    .items = items,
    .n_items = DB_LEN(items),
    .input = IMAGE,
    .output = BINARY,
    .stages = stages,
    .n_stages = DB_LEN(stages),
};
