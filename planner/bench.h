/*
** bench.h — the benchmark matrix: maps x images x runs of one algorithm.
**
** What --map measure times and docbin-bench prints. Every cell (image, map)
** runs once to warm up (program builds, first touch of memory) and then `runs`
** timed times, the maps of an image interleaved round by round, so that a
** burst of load on a shared host falls on one run of every map and each
** median drops it, rather than on every run of one map. Each run records every
** stage's span (first kernel start to last kernel end on its device), the
** device time of its copies and the wall time from submission to result.
** Summaries are medians, not means: one slow run drags a mean.
*/
#ifndef DB_BENCH_H
#define DB_BENCH_H

#include "runtime/device.h"
#include "runtime/image.h"
#include "runtime/stage.h"

/* Box-plot figures of a list of values. Quartiles interpolate linearly between
** the order statistics (R's type 7, numpy's default), so the median of an even
** count is the mean of the middle two. */
typedef struct db_box {
    int n;
    double min, q1, median, q3, max;
} db_box;

/* Computes the box of n >= 1 values (left unmodified). DB_ERR_USAGE for n < 1
** or a NaN value; DB_ERR_NOMEM. */
db_status db_box_stats(const double *values, int n, db_box *box);

/* Progress of a long measurement: step of steps (1-based) and what runs. */
typedef void (*db_progress_fn)(void *user, int step, int steps, const char *what);

/* What to measure: `images` and `image_names` have n_images entries, `maps`
** n_maps maps whose roles all have devices. */
typedef struct db_bench_options {
    const db_algo *algo;
    const db_job *job;
    const db_map *maps;
    int n_maps;
    const db_image *const *images;
    const char *const *image_names;
    int n_images;
    int runs;                /* timed runs per cell, >= 1, after one warm-up */
    bool bitmap;             /* each run's result packed 1 bit a pixel (db_run_bitmap), not an image */
    db_progress_fn progress; /* may be NULL */
    void *user;
    db_image **keep;         /* may be NULL: receives the output of the first run (of image 0) */
} db_bench_options;

/* Every measurement. Run 0 of each cell is the warm-up, recorded but left out
** of every summary. */
typedef struct db_bench {
    const db_algo *algo;
    int n_maps, n_images, runs;
    db_map *maps;
    char **image_names;
    int *width, *height;
    double *stage_ms; /* [image][map][run][stage]: span in ms, 0 if the stage enqueued nothing */
    double *copy_ms;  /* [image][map][run]: device time of the copies between host and devices */
    double *wall_ms;  /* [image][map][run] */
} db_bench;

/* Runs the matrix. On failure `bench` is empty and the message names the
** image and the map. */
db_status db_bench_run(db_context *ctx, const db_bench_options *opts, db_bench *bench);

/* Frees the measurements; `bench` is empty afterwards. */
void db_bench_free(db_bench *bench);

/* Figures of run `run` (0 = warm-up) of cell (image, map). */
double db_bench_stage_ms(const db_bench *bench, int image, int map, int run, int stage);
double db_bench_copy_ms(const db_bench *bench, int image, int map, int run);
double db_bench_wall_ms(const db_bench *bench, int image, int map, int run);

/* Box-plot figures of cell (image, map) over its timed runs: one per stage in
** stage[0..n_stages-1], the copies and the wall time. */
db_status db_bench_summary(const db_bench *bench, int image, int map, db_box *stage, db_box *copies,
                           db_box *total);

/* The wall time's box alone. */
db_status db_bench_wall_box(const db_bench *bench, int image, int map, db_box *total);

/* Writes every run as CSV, atomically, one row per run per stage plus a
** copies and a total row:
**   algo,image,width,height,map,run,warmup,stage,role,ms
** (map in --map syntax; warmup 1 for run 0; stage "copies" or "total" with role
** "-"; ms the stage's span, the copies' device time or the wall time). */
db_status db_bench_write_csv(const db_bench *bench, const char *path);

/* Writes an SVG box plot of every map's wall time over all images' timed runs,
** atomically (planner/chart.c). */
db_status db_bench_write_svg(const db_bench *bench, const char *path);

#endif
