/*
** copy_threads.c — the host's staging copies of a page: one memcpy against
** db_copy_rows (runtime/util.h), which splits a copy over up to
** DB_COPY_THREADS threads (bench/results/staging-h100.md).
**
** usage: copy_threads [REPS]
** For the input and the result of an A4 page at 300 dpi (2516x3272, RGB and
** gray) and of a DIBCO page (946x1366, gray and RGB): REPS copies each way
** (default 21) after one warm-up, both buffers written before the timing as
** the runtime's pooled blocks are. Prints the median and the extremes in ms.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: copy_threads [REPS], REPS from 1 to 1000\n");
        return 2;
    }
    static const size_t sizes[] = {2516u * 3272u * 3u, 2516u * 3272u, 946u * 1366u * 3u, 946u * 1366u};
    double *ms = malloc((size_t)(reps + 1) * sizeof *ms);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && ms; k++) {
        size_t n = sizes[k];
        unsigned char *src = malloc(n), *dst = malloc(n);
        if (!src || !dst) {
            fprintf(stderr, "copy_threads: out of memory for %zu bytes\n", n);
            return 1;
        }
        memset(src, 1, n);
        memset(dst, 0, n);
        for (int way = 0; way < 2; way++) {
            for (int r = 0; r <= reps; r++) {
                uint64_t t0 = db_now_ns();
                if (way == 0)
                    memcpy(dst, src, n);
                else
                    db_copy_rows(dst, n, src, n, n, 1);
                ms[r] = (double)(db_now_ns() - t0) / 1e6;
                src[(size_t)r % n] ^= dst[n - 1]; /* the copy's result is used */
            }
            qsort(ms + 1, (size_t)reps, sizeof *ms, cmp_double);
            double median = ms[1 + reps / 2];
            printf("%9zu bytes %-12s median %7.3f ms (%.3f - %.3f), %5.1f GB/s\n", n,
                   way ? "db_copy_rows" : "memcpy", median, ms[1], ms[reps], (double)n / median / 1e6);
        }
        free(src);
        free(dst);
    }
    free(ms);
    return 0;
}
