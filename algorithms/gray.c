/*
** gray.c — the `gray` stage shared by every binarization: RGB or gray in, gray out.
*/
#include "algorithms/algorithms.h"

static db_status gray_launch(db_stage_run *run, const size_t *local)
{
    cl_kernel k = db_stage_kernel(run, "gray.cl", "gray_convert");
    if (!k)
        return db_error_status();
    cl_mem in = db_stage_in(run, 0), out = db_stage_out(run, 0);
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    cl_int channels = db_stage_channels(run), rule = (cl_int)db_stage_job(run)->gray;
    db_status st = db_stage_args(run, k, 5, sizeof in, &in, sizeof out, &out, sizeof n, &n, sizeof channels,
                                 &channels, sizeof rule, &rule);
    if (st != DB_OK)
        return st;
    size_t global = (size_t)n;
    return db_stage_launch(run, k, 1, &global, local);
}

db_status db_gray_cpu(db_stage_run *run)
{
    return gray_launch(run, db_any_group);
}

db_status db_gray_gpu(db_stage_run *run)
{
    const size_t local = 256;
    return gray_launch(run, &local);
}
