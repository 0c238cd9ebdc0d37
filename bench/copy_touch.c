/*
** copy_touch.c — what a copy between host memory and a GPU costs when the CPU
** has just touched the host buffer, against the untouched buffer that
** docbin-bench --calibrate times (bench/results/planner-h100.md).
**
** usage: copy_touch   (the first GPU of any platform; no arguments)
** For pinned (CL_MEM_ALLOC_HOST_PTR, mapped) and pageable host memory and
** sizes from 1 MiB to 64 MiB, 25 copies each way, of which the first 5 are
** dropped: the median device time (profiling START to END) and GB/s of
**   h2d cold          nothing touches the host buffer between copies
**   h2d after memset  the CPU writes the whole buffer before each copy (as the
**                     staging memcpy of a page does)
**   d2h cold
**   d2h after read    the CPU reads the buffer before each copy (as a PoCL
**                     stage reading the item did in the run before)
**   d2h after memset  the CPU writes it before each copy
*/
#define _POSIX_C_SOURCE 200809L
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device time of a completed command, in ms. */
static double ev_ms(cl_event e)
{
    cl_ulong s, t;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
    return (t - s) / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    cl_platform_id p[8];
    cl_uint np;
    clGetPlatformIDs(8, p, &np);
    cl_device_id d = NULL;
    for (cl_uint i = 0; i < np && !d; i++)
        if (clGetDeviceIDs(p[i], CL_DEVICE_TYPE_GPU, 1, &d, NULL) != CL_SUCCESS)
            d = NULL;
    if (!d) {
        fprintf(stderr, "copy_touch: no OpenCL GPU device found\n");
        return 1;
    }
    cl_int e;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &e);
    size_t sizes[] = {1 << 20, 1290000, 4 << 20, 16 << 20, 20680000, 64 << 20};
    const char *modes[] = {"h2d cold", "h2d after memset", "d2h cold", "d2h after read", "d2h after memset"};
    volatile unsigned long sink = 0;
    for (int pinned = 1; pinned >= 0; pinned--)
        for (int si = 0; si < 6; si++) {
            size_t n = sizes[si];
            cl_mem host = NULL;
            unsigned char *h;
            if (pinned) {
                host = clCreateBuffer(c, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, n, NULL, &e);
                h = clEnqueueMapBuffer(q, host, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL, NULL, &e);
            } else {
                h = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
            }
            memset(h, 1, n);
            cl_mem dev = clCreateBuffer(c, CL_MEM_READ_WRITE, n, NULL, &e);
            for (int m = 0; m < 5; m++) {
                double t[25];
                for (int r = 0; r < 25; r++) {
                    if (m == 1 || m == 4)
                        memset(h, r, n);
                    if (m == 3) {
                        unsigned long s = 0;
                        for (size_t i = 0; i < n; i += 64)
                            s += h[i];
                        sink += s;
                    }
                    cl_event ev;
                    if (m < 2)
                        clEnqueueWriteBuffer(q, dev, CL_FALSE, 0, n, h, 0, NULL, &ev);
                    else
                        clEnqueueReadBuffer(q, dev, CL_FALSE, 0, n, h, 0, NULL, &ev);
                    clWaitForEvents(1, &ev);
                    t[r] = ev_ms(ev);
                    clReleaseEvent(ev);
                }
                qsort(t + 5, 20, sizeof *t, cmp);
                double med = (t[14] + t[15]) / 2;
                printf("%s %9zu bytes %-17s median %.4f ms  %.1f GB/s\n", pinned ? "pinned  " : "pageable", n, modes[m],
                       med, n / med / 1e6);
            }
            clReleaseMemObject(dev);
            if (pinned) {
                clEnqueueUnmapMemObject(q, host, h, 0, NULL, NULL);
                clFinish(q);
                clReleaseMemObject(host);
            } else {
                free(h);
            }
        }
    return 0;
}
