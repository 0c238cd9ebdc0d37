/*
** mem_noise.c — how much a memory-bound pass over a large buffer varies on
** this machine without OpenCL: the baseline for the spread of PoCL's stage
** times (bench/results/cpu-bands-h100.md).
**
** usage: mem_noise MiB THREADS REPS hugepages|small
** Every rep writes dst[i] = src[i] + 1 over MiB of 64-bit integers (one read
** stream, one write stream, like a sliding-window pass of the CPU statistics),
** split into 4 chunks per thread taken from a shared counter (as PoCL hands
** out work-groups). The buffers are advised to use transparent huge pages or
** not, and first written by the worker threads (an unwritten source would be
** read from the kernel's shared zero page). Prints the median, the 10th
** and 90th percentiles and the extremes of the reps after 3 warm-up reps, in
** ms and GB/s moved.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define WARMUP 3

static int64_t *src, *dst;
static size_t n, chunk;
static int nthreads, nchunks;
static atomic_int next_chunk, arrived;
static atomic_int generation;
static int stop, first_touch;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void pass(void)
{
    int c;
    while ((c = atomic_fetch_add(&next_chunk, 1)) < nchunks) {
        size_t lo = (size_t)c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (first_touch)
            for (size_t i = lo; i < hi; i++)
                src[i] = dst[i] = (int64_t)i;
        else
            for (size_t i = lo; i < hi; i++)
                dst[i] = src[i] + 1;
    }
}

/* Workers spin on the generation counter so that a rep's start costs no
** wake-up (PoCL's workers spin too). */
static void *worker(void *arg)
{
    int seen = 0;
    (void)arg;
    for (;;) {
        int g;
        while ((g = atomic_load(&generation)) == seen)
            ;
        seen = g;
        if (stop)
            return NULL;
        pass();
        atomic_fetch_add(&arrived, 1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int64_t *alloc(size_t bytes, int huge)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: mem_noise MiB THREADS REPS hugepages|small\n");
        return 2;
    }
    size_t bytes = (size_t)atol(argv[1]) << 20;
    nthreads = atoi(argv[2]);
    int reps = atoi(argv[3]), huge = strcmp(argv[4], "hugepages") == 0;
    if (bytes == 0 || nthreads < 1 || reps < 1) {
        fprintf(stderr, "mem_noise: MiB, THREADS and REPS must be positive\n");
        return 2;
    }
    n = bytes / sizeof(int64_t);
    nchunks = 4 * nthreads;
    chunk = (n + nchunks - 1) / nchunks;
    src = alloc(bytes, huge);
    dst = alloc(bytes, huge);
    if (!src || !dst) {
        fprintf(stderr, "mem_noise: cannot map 2 x %zu bytes\n", bytes);
        return 1;
    }
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    for (int i = 1; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    double *ms = calloc((size_t)(reps + WARMUP), sizeof *ms);
    for (int r = -1; r < reps + WARMUP; r++) {
        first_touch = r < 0; /* written before the rep starts, read after the workers see it */
        atomic_store(&next_chunk, 0);
        atomic_store(&arrived, 0);
        double t0 = now_ms();
        atomic_fetch_add(&generation, 1);
        pass();
        while (atomic_load(&arrived) < nthreads - 1)
            ;
        if (r >= 0)
            ms[r] = now_ms() - t0;
    }
    stop = 1;
    atomic_fetch_add(&generation, 1);
    for (int i = 1; i < nthreads; i++)
        pthread_join(t[i], NULL);
    double *v = ms + WARMUP;
    qsort(v, (size_t)reps, sizeof *v, cmp);
    double med = v[reps / 2];
    printf("%s %zu MiB %d threads: median %.2f ms (%.1f GB/s), p10 %.2f, p90 %.2f, min %.2f, max %.2f\n",
           huge ? "hugepages" : "small", bytes >> 20, nthreads, med, 2.0 * bytes / med / 1e6, v[reps / 10],
           v[reps * 9 / 10], v[0], v[reps - 1]);
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "AnonHugePages:", 14) == 0)
            printf("  %s", line);
    if (f)
        fclose(f);
    return 0;
}
