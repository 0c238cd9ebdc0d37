/*
** api_bench.c — pages through the public C API alone (docbin.h), the C side
** of bench/python_bench.py: opens one context, then runs one page N times
** with one method and prints one JSON line of the times in ms: the context's
** opening, the first run (kernels built or loaded from the cache) and every
** later run. The page is the caller's memory on both sides, as a program
** that holds its own pages has it and as numpy arrays are: the loader's own
** image may be pinned staging memory, which uploads faster than a Python
** caller's array could.
**
**     api_bench PAGE N ALGO [SETTINGS [MAP]]
*/
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "docbin.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 6 || atoi(argv[2]) < 0) {
        fprintf(stderr, "usage: api_bench PAGE N ALGO [SETTINGS [MAP]]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    const char *settings = argc > 4 ? argv[4] : NULL, *map = argc > 5 ? argv[5] : NULL;
    db_context *ctx = NULL;
    db_method *method = NULL;
    db_image *loaded = NULL, page = {0}, out = {0};
    double t0 = now_ms();
    db_status st = db_context_open(NULL, NULL, &ctx);
    double open_ms = now_ms() - t0;
    if (st == DB_OK)
        st = db_image_load(argv[1], &loaded);
    if (st == DB_OK) {
        page = *loaded;
        page.stride = (size_t)page.width * (size_t)page.channels;
        if (!(page.data = malloc(page.stride * (size_t)page.height)))
            st = DB_ERR_NOMEM;
        for (int y = 0; st == DB_OK && y < page.height; y++)
            memcpy(page.data + (size_t)y * page.stride, loaded->data + (size_t)y * loaded->stride, page.stride);
    }
    if (st == DB_OK)
        st = db_method_new(argv[3], settings, &method);
    if (st == DB_OK) {
        out = (db_image){.width = page.width, .height = page.height, .channels = 1, .stride = (size_t)page.width};
        if (!(out.data = malloc((size_t)page.width * (size_t)page.height)))
            st = DB_ERR_NOMEM;
    }
    double *ms = st == DB_OK ? calloc((size_t)n + 1, sizeof *ms) : NULL;
    if (st == DB_OK && !ms)
        st = DB_ERR_NOMEM;
    for (int i = 0; i <= n && st == DB_OK; i++) {
        double t = now_ms();
        st = db_method_run(ctx, method, map, &page, &out, NULL);
        ms[i] = now_ms() - t;
    }
    if (st == DB_OK) {
        printf("{\"open_ms\": %.3f, \"width\": %d, \"height\": %d, \"first_ms\": %.3f, \"runs_ms\": [", open_ms,
               page.width, page.height, ms[0]);
        for (int i = 1; i <= n; i++)
            printf("%s%.3f", i > 1 ? ", " : "", ms[i]);
        printf("]}\n");
    } else {
        fprintf(stderr, "api_bench: %s\n", st == DB_ERR_NOMEM ? "out of memory" : db_error_message());
    }
    free(ms);
    free(out.data);
    free(page.data);
    db_image_free(loaded);
    db_method_free(method);
    db_context_close(ctx);
    return st == DB_OK ? 0 : 1;
}
