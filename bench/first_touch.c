/*
** first_touch.c — what writing memory costs the first time since the machine
** started, against memory that was written before and given back: on a
** virtual machine the hypervisor may back a guest page only when it is first
** touched (bench/results/planner-h100.md, runs 45 and 46).
**
** usage: first_touch GIB PASSES THREADS
** Each pass maps GIB chunks of 1 GiB, THREADS threads taking every THREADS-th
** chunk, writes every byte of each (memset), then unmaps them all, so that the
** next pass gets pages that the first one touched. Prints per pass the wall
** time, the rate over all chunks and the time of a chunk (min, median, max).
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define CHUNK (1UL << 30)

enum { MAX_THREADS = 256, MAX_CHUNKS = 4096 };

static int n_chunks, n_threads;
static double chunk_ms[MAX_CHUNKS];
static char *chunk[MAX_CHUNKS];

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *touch(void *arg)
{
    for (int c = (int)(long)arg; c < n_chunks; c += n_threads) {
        double t0 = now_ms();
        chunk[c] = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (chunk[c] == MAP_FAILED) {
            perror("first_touch: mmap");
            exit(1);
        }
        memset(chunk[c], 1, CHUNK);
        chunk_ms[c] = now_ms() - t0;
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int passes = argc == 4 ? atoi(argv[2]) : 0;
    n_chunks = argc == 4 ? atoi(argv[1]) : 0;
    n_threads = argc == 4 ? atoi(argv[3]) : 0;
    if (n_chunks < 1 || n_chunks > MAX_CHUNKS || passes < 1 || n_threads < 1 || n_threads > MAX_THREADS) {
        fprintf(stderr, "usage: first_touch GIB PASSES THREADS (GIB 1 to %d, THREADS 1 to %d)\n", MAX_CHUNKS,
                MAX_THREADS);
        return 2;
    }
    for (int p = 1; p <= passes; p++) {
        pthread_t t[MAX_THREADS];
        double t0 = now_ms();
        for (long i = 0; i < n_threads; i++)
            pthread_create(&t[i], NULL, touch, (void *)i);
        for (int i = 0; i < n_threads; i++)
            pthread_join(t[i], NULL);
        double wall = now_ms() - t0;
        double sorted[MAX_CHUNKS];
        memcpy(sorted, chunk_ms, n_chunks * sizeof *sorted);
        qsort(sorted, n_chunks, sizeof *sorted, by_value);
        printf("pass %d: %d GiB on %d threads in %.0f ms (%.1f GB/s); a chunk %.0f / %.0f / %.0f ms "
               "(min/median/max), %.2f GB/s a thread at the median\n",
               p, n_chunks, n_threads, wall, n_chunks * (double)CHUNK / wall / 1e6, sorted[0], sorted[n_chunks / 2],
               sorted[n_chunks - 1], CHUNK / sorted[n_chunks / 2] / 1e6);
        fflush(stdout);
        for (int c = 0; c < n_chunks; c++)
            munmap(chunk[c], CHUNK);
    }
    return 0;
}
