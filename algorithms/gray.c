/*
** gray.c — the `gray` stage shared by every binarization: RGB or gray in, gray out.
*/
#include <string.h>
#include "algorithms/algorithms.h"
#include "runtime/parallel.h"

/* The conversion as host code, in `parts` ranges of pixels. */
typedef struct gray_job {
    const uint8_t *in;
    uint8_t *out;
    size_t n;
    int channels, rule, parts;
} gray_job;

/* One range: cl/gray.cl's arithmetic (a gray page is copied). */
static void gray_part(void *arg, int i)
{
    const gray_job *j = arg;
    size_t a = j->n * (size_t)i / (size_t)j->parts, b = j->n * (size_t)(i + 1) / (size_t)j->parts;
    if (j->channels == 1) {
        memcpy(j->out + a, j->in + a, b - a);
        return;
    }
    const uint8_t *p = j->in + 3 * a;
    if (j->rule == 0)
        for (size_t k = a; k < b; k++, p += 3)
            j->out[k] = (uint8_t)((299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u);
    else
        for (size_t k = a; k < b; k++, p += 3)
            j->out[k] = (uint8_t)((11u * p[0] + 16u * p[1] + 5u * p[2]) / 32u);
}

static void gray_host(void *const *ptrs, const void *arg)
{
    gray_job j = *(const gray_job *)arg;
    j.in = ptrs[0];
    j.out = ptrs[1];
    db_parallel(j.parts, gray_part, &j);
}

/* On a CPU device that runs host code the conversion is the process's
** workers' (PoCL runs the kernel a work-item a pixel, at a fraction of a
** copy's speed); elsewhere it is the kernel. */
static bool on_host(db_stage_run *run)
{
    const db_device *dev = db_stage_device(run);
    cl_device_exec_capabilities caps = 0;
    return dev->role == DB_ROLE_CPU &&
           clGetDeviceInfo(dev->info.id, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL) == CL_SUCCESS &&
           (caps & CL_EXEC_NATIVE_KERNEL);
}

db_status db_gray(db_stage_run *run)
{
    cl_mem in = db_stage_in(run, 0), out = db_stage_out(run, 0);
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    cl_int channels = db_stage_channels(run), rule = (cl_int)db_stage_job(run)->gray;
    if (on_host(run)) {
        /* A range of at least 256 KiB a worker, so that small pages do not wake them all. */
        size_t units = db_stage_device(run)->info.compute_units, parts = (size_t)n / (256 << 10) + 1;
        gray_job j = {.n = (size_t)n, .channels = channels, .rule = rule,
                      .parts = (int)(parts < units ? parts : units < DB_PARALLEL_MAX ? units : DB_PARALLEL_MAX)};
        const cl_mem mems[2] = {in, out};
        return db_stage_host(run, "gray", gray_host, &j, sizeof j, mems, 2);
    }
    if (channels == 1 && db_stage_can_forward(run))
        return db_stage_forward(run, 0, 0);
    cl_kernel k = db_stage_kernel(run, "gray.cl", "gray_convert");
    if (!k)
        return db_error_status();
    db_status st = db_stage_args(run, k, 5, sizeof in, &in, sizeof out, &out, sizeof n, &n, sizeof channels,
                                 &channels, sizeof rule, &rule);
    if (st != DB_OK)
        return st;
    const size_t global = (size_t)n, gpu_local = 256;
    return db_stage_launch_any(run, k, 1, &global, &gpu_local);
}
