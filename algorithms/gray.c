/*
** gray.c — the `gray` stage shared by every binarization: RGB or gray in, gray out.
*/
#include "algorithms/algorithms.h"

db_status db_gray(db_stage_run *run)
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
    const size_t global = (size_t)n, gpu_local = 256;
    return db_stage_launch_any(run, k, 1, &global, &gpu_local);
}
