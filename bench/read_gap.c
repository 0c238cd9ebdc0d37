/*
** read_gap.c — what a copy out of the GPU costs into host memory that PoCL
** has read, by the time between the read and the copy. An item that crosses
** from a stage on the GPU to one on PoCL is copied, page after page, into the
** host block PoCL's stage read on the page before; a copy right after such a
** read ran at a half to a quarter of the untouched speed, and the same copies
** inside runs took between the two (bench/results/planner-h100.md).
**
** usage: read_gap   (DOCBIN_GPU_DEVICE names the gpu role, default nvidia;
**                    the cpu role is the default CPU device, PoCL)
** For sizes of 4, 16, 20.68 (a DIBCO page's sums) and 32 MB and idle gaps of
** 0 to 10 ms, twice over: 12 copies out of the GPU into a pinned host block
** (as db_buffer_fetch_host copies), each followed by a map of the block into
** the cpu role and a kernel there that reads every word through its alias (as
** db_buffer_fetch and a stage do) and then the gap; the median device time of
** copies 3 to 12, in ms.
*/
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "planner/bench.h"
#include "runtime/buffer.h"
#include "runtime/device.h"

/* Reads every word, one work-group of 256 words after another; counts those
** equal to a value the GPU's zeros never are, so that the reads stay. */
static const char *read_source =
    "kernel void read_words(global const uint *src, uint n, global uint *sum)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n && src[i] == 0x5eed5eedu)\n"
    "        atomic_inc(sum);\n"
    "}\n";

enum { RUNS = 12, DROPPED = 2 };

static double ev_ms(cl_event e)
{
    cl_ulong s = 0, t = 0;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
    return t > s ? (double)(t - s) / 1e6 : 0;
}

/* The median ms of copies out of `gpu` of `bytes`, each followed by a read on `cpu` and `gap_us` idle. */
static double time_copies(db_context *ctx, db_device *gpu, db_device *cpu, cl_kernel k, size_t bytes, int gap_us)
{
    db_buffer buf;
    if (db_buffer_init(&buf, ctx, "read gap", bytes) != DB_OK)
        return -1;
    cl_mem gm = db_buffer_mem(&buf, gpu), cm = db_buffer_mem(&buf, cpu);
    cl_uint n = (cl_uint)(bytes / 4), zero = 0;
    cl_int err = gm && cm ? CL_SUCCESS : CL_INVALID_MEM_OBJECT;
    cl_mem sum = NULL;
    if (err == CL_SUCCESS)
        sum = clCreateBuffer(cpu->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
    if (err == CL_SUCCESS)
        err = clEnqueueFillBuffer(gpu->transfer, gm, &zero, sizeof zero, 0, bytes / 4 * 4, 0, NULL, NULL);
    clSetKernelArg(k, 0, sizeof cm, &cm);
    clSetKernelArg(k, 1, sizeof n, &n);
    clSetKernelArg(k, 2, sizeof sum, &sum);
    double ms[RUNS];
    const size_t local = 256, global = (n + local - 1) / local * local;
    for (int r = 0; r < RUNS && err == CL_SUCCESS; r++) {
        cl_event ev = NULL;
        err = clEnqueueReadBuffer(gpu->transfer, gm, CL_TRUE, 0, bytes, buf.host->ptr, 0, NULL, &ev);
        if (err == CL_SUCCESS)
            ms[r] = ev_ms(ev);
        if (ev)
            clReleaseEvent(ev);
        void *p = NULL;
        if (err == CL_SUCCESS)
            p = clEnqueueMapBuffer(cpu->transfer, cm, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, NULL, NULL,
                                   &err);
        if (err == CL_SUCCESS)
            err = clEnqueueUnmapMemObject(cpu->transfer, cm, p, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clFinish(cpu->transfer);
        if (err == CL_SUCCESS)
            err = clEnqueueNDRangeKernel(cpu->compute, k, 1, NULL, &global, &local, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clFinish(cpu->compute);
        if (gap_us)
            usleep((useconds_t)gap_us);
    }
    if (sum)
        clReleaseMemObject(sum);
    db_buffer_release(&buf, ctx);
    if (err != CL_SUCCESS)
        return -1;
    db_box box;
    return db_box_stats(ms + DROPPED, RUNS - DROPPED, &box) == DB_OK ? box.median : -1;
}

int main(void)
{
    const char *gpu_spec = getenv("DOCBIN_GPU_DEVICE") ? getenv("DOCBIN_GPU_DEVICE") : "nvidia";
    db_context *ctx;
    if (db_context_open(NULL, gpu_spec, &ctx) != DB_OK) {
        fprintf(stderr, "read_gap: %s\n", db_error_message());
        return 3;
    }
    db_device *gpu = ctx->role[DB_ROLE_GPU], *cpu = ctx->role[DB_ROLE_CPU];
    /* Without a GPU, PoCL in the gpu role counts as having memory of its own, as in test_runtime. */
    gpu->info.host_unified = false;
    cl_int err;
    cl_program p = clCreateProgramWithSource(cpu->context, 1, &read_source, NULL, &err);
    if (err == CL_SUCCESS)
        err = clBuildProgram(p, 1, &cpu->info.id, "", NULL, NULL);
    cl_kernel k = err == CL_SUCCESS ? clCreateKernel(p, "read_words", &err) : NULL;
    if (err != CL_SUCCESS) {
        fprintf(stderr, "read_gap: building the read kernel failed (OpenCL error %d)\n", err);
        return 3;
    }
    static const double mb[] = {4, 16, 20.68, 32};
    static const int gap_us[] = {0, 100, 300, 1000, 3000, 10000};
    int code = 0;
    for (int rep = 0; rep < 2 && !code; rep++)
        for (int i = 0; i < 4 && !code; i++) {
            size_t bytes = (size_t)(mb[i] * 1e6);
            printf("%7.2f MB", bytes / 1e6);
            for (int g = 0; g < 6 && !code; g++) {
                double ms = time_copies(ctx, gpu, cpu, k, bytes, gap_us[g]);
                if (ms < 0) {
                    fprintf(stderr, "\nread_gap: a copy or read of %zu bytes failed\n", bytes);
                    code = 1;
                }
                printf("  gap %5d us %.3f", gap_us[g], ms);
            }
            printf("\n");
            fflush(stdout);
        }
    clReleaseKernel(k);
    clReleaseProgram(p);
    db_context_close(ctx);
    return code;
}
