/*
** startup_probe.c — where a single page's process spends its time before and
** after the page: the same steps through bare OpenCL and through docbin's
** public API, each printed in ms since main() began, so that what the driver
** itself costs and what docbin adds can be told apart. The process's own
** start and exit are what an outside clock adds to the last line.
**
**     startup_probe opencl          list the platforms, open a context and a
**                                   queue on the first GPU, copy 8 MB up, release
**     startup_probe docbin PAGE     db_context_open, db_image_load, one Sauvola
**                                   run with the gpu map, db_context_close
**
** With --exit last, either leaves out the release (and db_context_close) and
** ends with _exit(): what a process saves by leaving the teardown of its
** context to the kernel.
*/
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <CL/cl.h>
#include "docbin.h"

static double t0;
static int quick; /* --exit: no release, _exit() */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void mark(const char *step)
{
    printf(" %s %.1f", step, now_ms() - t0);
}

static int bare_opencl(void)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
        return 1;
    cl_device_id dev = NULL;
    for (cl_uint p = 0; p < np && !dev; p++)
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    mark("listed");
    if (!dev)
        return 1;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return 1;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (err != CL_SUCCESS)
        return 1;
    mark("context");
    size_t n = 8 << 20;
    char *h = malloc(n);
    if (!h)
        return 1;
    memset(h, 1, n);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, NULL, &err);
    if (err != CL_SUCCESS || clEnqueueWriteBuffer(q, m, CL_TRUE, 0, n, h, 0, NULL, NULL) != CL_SUCCESS)
        return 1;
    mark("copied");
    if (quick) {
        printf("\n");
        fflush(stdout);
        _exit(0);
    }
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(h);
    mark("released");
    return 0;
}

static int through_docbin(const char *path)
{
    db_context *ctx = NULL;
    db_image *page = NULL, out = {0};
    db_status st = db_context_open(NULL, NULL, &ctx);
    mark("listed");
    if (st == DB_OK)
        st = db_image_load(path, &page);
    mark("decoded");
    if (st == DB_OK) {
        out = (db_image){.width = page->width, .height = page->height, .channels = 1, .stride = (size_t)page->width};
        if (!(out.data = malloc(out.stride * (size_t)out.height)))
            st = DB_ERR_NOMEM;
    }
    if (st == DB_OK)
        st = db_binarize(ctx, "sauvola", NULL, "gpu", page, &out);
    mark("run");
    if (st != DB_OK)
        fprintf(stderr, "startup_probe: %s\n", db_error_message());
    if (quick) {
        printf("\n");
        fflush(stdout);
        _exit(st == DB_OK ? 0 : 1);
    }
    db_context_close(ctx);
    mark("closed");
    free(out.data);
    db_image_free(page);
    return st == DB_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    t0 = now_ms();
    int rc = 2;
    if (argc >= 3 && !strcmp(argv[argc - 1], "--exit")) {
        quick = 1;
        argc--;
    }
    if (argc == 2 && !strcmp(argv[1], "opencl"))
        rc = bare_opencl();
    else if (argc == 3 && !strcmp(argv[1], "docbin"))
        rc = through_docbin(argv[2]);
    else
        fprintf(stderr, "usage: startup_probe opencl [--exit] | startup_probe docbin PAGE [--exit]\n");
    printf("\n");
    return rc;
}
