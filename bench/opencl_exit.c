/*
** opencl_exit.c — what a process pays the OpenCL drivers to start and to end,
** apart from any page: the batch's fixed cost (bench/results/batch-h200.md).
**
** usage: opencl_exit MODE   (bench/opencl_exit.sh runs every mode and times
**                            the process from outside)
**   list        list the platforms and devices, then return
**   gpus        also open a context, a queue and a 64 MiB buffer written once
**               on every GPU, then release them and return
**   one         the same on the first GPU only
**   keep        as gpus, leaving everything to the process's end
**   keep-exit   as keep, ending with _exit (no atexit handlers)
**   all         as gpus on every device, CPU devices included
** Prints realtime stamps (ns) at main's entry and return and the ms since the
** entry after each step, so that the caller can tell the time before main and
** after its return (the drivers' teardown at exit) from the steps themselves.
*/
#define _POSIX_C_SOURCE 200809L
#include <CL/cl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long realtime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    bool list = !strcmp(mode, "list"), one = !strcmp(mode, "one"), all = !strcmp(mode, "all");
    bool keep = !strncmp(mode, "keep", 4), keep_exit = !strcmp(mode, "keep-exit");
    if (!list && !one && !all && !keep && strcmp(mode, "gpus")) {
        fprintf(stderr, "usage: opencl_exit list|gpus|one|keep|keep-exit|all\n");
        return 2;
    }
    long long t0 = realtime_ns();
    printf("entry %lld\n", t0);
    cl_platform_id plats[8];
    cl_uint np = 0;
    if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS)
        np = 0;
    printf("listed %.1f ms\n", (double)(realtime_ns() - t0) / 1e6);
    enum { MAX = 16 };
    cl_context ctx[MAX];
    cl_command_queue q[MAX];
    cl_mem mem[MAX];
    int n = 0;
    size_t bytes = (size_t)64 << 20;
    void *host = list ? NULL : calloc(1, bytes);
    for (cl_uint p = 0; !list && host && p < np && n < MAX && !(one && n > 0); p++) {
        cl_device_id ids[8];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 8, ids, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < 8 && n < MAX && !(one && n > 0); d++) {
            cl_device_type type = 0;
            clGetDeviceInfo(ids[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            if (!all && !(type & CL_DEVICE_TYPE_GPU))
                continue;
            cl_int err;
            ctx[n] = clCreateContext(NULL, 1, &ids[d], NULL, NULL, &err);
            if (err != CL_SUCCESS)
                continue;
            q[n] = clCreateCommandQueue(ctx[n], ids[d], 0, &err);
            mem[n] = clCreateBuffer(ctx[n], CL_MEM_READ_WRITE, bytes, NULL, &err);
            clEnqueueWriteBuffer(q[n], mem[n], CL_TRUE, 0, bytes, host, 0, NULL, NULL);
            n++;
        }
    }
    free(host);
    if (!list)
        printf("opened %d contexts %.1f ms\n", n, (double)(realtime_ns() - t0) / 1e6);
    if (!list && !keep) {
        for (int i = 0; i < n; i++) {
            clReleaseMemObject(mem[i]);
            clReleaseCommandQueue(q[i]);
            clReleaseContext(ctx[i]);
        }
        printf("released %.1f ms\n", (double)(realtime_ns() - t0) / 1e6);
    }
    printf("return %lld\n", realtime_ns());
    fflush(stdout);
    if (keep_exit)
        _exit(0);
    return 0;
}
