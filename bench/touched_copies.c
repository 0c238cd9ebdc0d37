/*
** touched_copies.c — the calibration's copies of touched memory at chosen
** sizes: into the GPU of what PoCL has just written (written rows) and out of
** it into what PoCL has just read (read rows), beside the untouched copies of
** the transfer rows, each through the runtime function the calibration uses
** (runtime/buffer.h). Its numbers sit beside the copies that docbin-run
** --profile reports inside real runs (bench/results/touched-copies-h100.log).
**
** usage: touched_copies MB...   (DOCBIN_GPU_DEVICE names the gpu role, default
**                                nvidia; the cpu role is the default CPU device)
** For each size, twice over: the median of 8 copies after one warm-up, in ms
** and GB/s, of each kind.
*/
#include <stdio.h>
#include <stdlib.h>
#include "runtime/buffer.h"
#include "runtime/device.h"

/* The copies each kind is timed with; the first is dropped. */
enum { RUNS = 9 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of the runs after the first. */
static double median(double *ms)
{
    qsort(ms + 1, RUNS - 1, sizeof *ms, cmp_double);
    return (ms[RUNS / 2] + ms[RUNS / 2 + 1]) / 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: touched_copies MB...\n");
        return 2;
    }
    const char *gpu_spec = getenv("DOCBIN_GPU_DEVICE") ? getenv("DOCBIN_GPU_DEVICE") : "nvidia";
    db_context *ctx;
    if (db_context_open(NULL, gpu_spec, &ctx) != DB_OK) {
        fprintf(stderr, "touched_copies: %s\n", db_error_message());
        return 3;
    }
    db_device *gpu = ctx->role[DB_ROLE_GPU], *cpu = ctx->role[DB_ROLE_CPU];
    /* Without a GPU, PoCL in the gpu role counts as having memory of its own, as in test_runtime. */
    gpu->info.host_unified = false;
    int code = 0;
    for (int rep = 0; rep < 2 && !code; rep++)
        for (int i = 1; i < argc && !code; i++) {
            double mb = atof(argv[i]);
            if (!(mb > 0 && mb <= 4096)) {
                fprintf(stderr, "touched_copies: '%s' is not a size in MB from 0 to 4096\n", argv[i]);
                code = 2;
                break;
            }
            size_t bytes = (size_t)(mb * 1e6);
            double h[RUNS], d[RUNS], w[RUNS], r[RUNS];
            if (db_buffer_time_copies(ctx, gpu, bytes, RUNS, h, d) != DB_OK ||
                db_buffer_time_written_copies(ctx, gpu, cpu, bytes, RUNS, w) != DB_OK ||
                db_buffer_time_read_copies(ctx, gpu, cpu, bytes, RUNS, r) != DB_OK) {
                fprintf(stderr, "touched_copies: %s\n", db_error_message());
                code = 1;
                break;
            }
            double mh = median(h), mw = median(w), md = median(d), mr = median(r);
            printf("%10.2f MB  h2d %.3f ms %5.1f GB/s  written %.3f ms %5.1f GB/s  d2h %.3f ms %5.1f GB/s  "
                   "read %.3f ms %5.1f GB/s\n", bytes / 1e6, mh, bytes / mh / 1e6, mw, bytes / mw / 1e6, md,
                   bytes / md / 1e6, mr, bytes / mr / 1e6);
        }
    db_context_close(ctx);
    return code;
}
