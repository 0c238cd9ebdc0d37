/*
** bench.h — the benchmark matrix: maps x images x runs of one algorithm.
**
** Every cell (image, map) runs once to warm up (program builds, JIT of local
** sizes, first touch of memory: specs/runtime-notes.md) and then `runs` timed
** times, the maps of an image interleaved round by round (db_bench_order).
** Each run records every stage's span (first kernel start to last kernel
** end on its device, runtime/profile.h) and the wall time from submission to
** result. Summaries are box-plot figures over the timed runs only: medians,
** not means, since one slow run (a page fault, another process) drags a mean.
** The results go to a CSV file (one row per run per stage, plus a total row)
** and an SVG box plot of the wall time per map (planner/chart.c).
*/
#ifndef DB_BENCH_H
#define DB_BENCH_H

#include <stdbool.h>
#include "planner/history.h"
#include "planner/plan.h"
#include "runtime/device.h"
#include "runtime/image.h"
#include "runtime/stage.h"

/* Box-plot figures of a list of values. Quartiles interpolate linearly between
** the order statistics of the sorted values x[0..n-1]: the p-quantile is at
** position p*(n-1) (R's default type 7, numpy's default), so the median of an
** even count is the mean of the middle two. */
typedef struct db_box {
    int n;
    double min, q1, median, q3, max;
} db_box;

/* Computes the box of n >= 1 values (the values are not modified).
** DB_ERR_USAGE for n < 1 or a NaN value; DB_ERR_NOMEM. */
db_status db_box_stats(const double *values, int n, db_box *box);

/* Progress of a long measurement: step of steps (1-based), and what is being
** timed in words ("howe gpu,cpu,gpu page.png run 3/6"), for a progress line. */
typedef void (*db_progress_fn)(void *user, int step, int steps, const char *what);

/* The order of a benchmark's runs on one image. Interleaved (the default) runs
** the warm-up of every map and then rounds of one timed run of each map, so
** that a burst of load on a shared host falls on one run of every map, which
** each median drops, rather than on every run of one map (one PoCL stage took
** 5 times its time in one map of a grouped run: bench/results/planner-h100.md). Grouped runs each map's
** runs back to back: its steady state with no other map between runs. */
typedef enum db_bench_order {
    DB_BENCH_INTERLEAVED,
    DB_BENCH_GROUPED,
} db_bench_order;

/* What to measure. `images` and `image_names` have n_images entries; `maps` has
** n_maps valid maps of `algo` whose roles all have devices. */
typedef struct db_bench_options {
    const db_algo *algo;
    const db_job *job;
    const db_map *maps;
    int n_maps;
    const db_image *const *images;
    const char *const *image_names;
    int n_images;
    int runs;                /* timed runs per cell, >= 1; one warm-up run comes first */
    db_bench_order order;    /* 0: interleaved */
    db_progress_fn progress; /* may be NULL */
    void *user;
} db_bench_options;

/* The copies of one item in one direction to or from one role's device in one run. */
typedef struct db_bench_copy {
    double bytes;
    double ms; /* their device time */
} db_bench_copy;

/* Every measurement of a benchmark. Runs are numbered 0..runs: run 0 is the
** warm-up, recorded but left out of every summary. */
typedef struct db_bench {
    const db_algo *algo;
    int n_maps, n_images, runs;  /* runs = timed runs, so runs + 1 per cell */
    db_bench_order order;        /* the order they ran in */
    db_map *maps;
    char **image_names;
    int *width, *height, *channels; /* per image */
    double *stage_ms;            /* [image][map][run][stage]: span in ms, 0 if the stage enqueued nothing */
    double *wall_ms;             /* [image][map][run] */
    double *copy_ms;             /* [image][map][run]: its copies between the host and the devices, their
                                 ** device times summed (maps of shared memory too, near 0) */
    db_report *reports;          /* [image][map]: the warm-up run's report */
    db_bench_copy *item_copies;  /* [image][map][run][item][role][dir]: each item's copies (bytes 0: none);
                                 ** may be NULL (a benchmark put together by hand): no copies known */
    double *stolen_pct;          /* [image]: the percentage of the machine's CPU time the hypervisor took
                                 ** while the image's maps ran (util.h, db_cpu_ticks); -1 where unknown */
} db_bench;

/* Runs the matrix. On failure `bench` is left empty and the message names the
** image and the map. */
db_status db_bench_run(db_context *ctx, const db_bench_options *opts, db_bench *bench);

/* Frees the measurements; `bench` is empty afterwards. */
void db_bench_free(db_bench *bench);

/* The span of stage `stage` in run `run` (0 = warm-up) of cell (image, map). */
double db_bench_stage_ms(const db_bench *bench, int image, int map, int run, int stage);

/* The wall time of run `run` (0 = warm-up) of cell (image, map). */
double db_bench_wall_ms(const db_bench *bench, int image, int map, int run);

/* The copies of run `run` (0 = warm-up) of cell (image, map): db_bench.copy_ms. */
double db_bench_copy_ms(const db_bench *bench, int image, int map, int run);

/* Box-plot figures of cell (image, map) over its timed runs: one box per stage
** in stage[0..algo->n_stages-1], the copies in `copies`, the wall time in `total`. */
db_status db_bench_summary(const db_bench *bench, int image, int map, db_box *stage, db_box *copies,
                           db_box *total);

/* What the planner would have learnt from the timed runs of image `image`
** under every map but map `skip` (-1: none): their history rows (history.h),
** stages and copies, in the order they ran, added to `history`. Device keys are those of `ctx`'s
** roles; the work of a stage comes from its map's report. With skip = m, a
** prediction of map m from calibration and these rows is one made without any
** run of m: what --map auto knows of a map it has not run, after the page's
** other maps ran (docbin-bench --predict). DB_ERR_NOMEM, or DB_ERR_USAGE when
** a kernel hash cannot be computed. */
db_status db_bench_history(const db_bench *bench, int image, int skip, const db_context *ctx, const db_job *job,
                           db_history *history);

/* Predicts the stages of `costs` (a table for image `image`) whose cost
** follows the content at the work the reports of the image's maps give, map
** `skip` left out (-1: none): db_plan_costs_set_page_work with each. */
void db_bench_set_page_work(const db_bench *bench, int image, int skip, db_plan_costs *costs);

/* The latency of map `map` of image `image` (whose pixels are `img`) as the
** planner predicts it from `calib`, the rows of `history` (the history file;
** may be empty) and then those of db_bench_history(bench, image, map, ...),
** at the work the reports of the image's other maps give, in *ms. `costs` is the caller's table,
** overwritten. Errors as db_bench_history and db_plan_costs_from_calib. */
db_status db_bench_predict_after_others(const db_bench *bench, int image, int map, const db_calib *calib,
                                        const db_history *history, const db_context *ctx, const db_job *job,
                                        const db_image *img, db_plan_costs *costs, double *ms);

/* Writes the CSV file, atomically. Header and columns:
**   algo,image,width,height,map,run,warmup,stage,role,ms
**   algo          the algorithm's name
**   image         the image's name (quoted when it holds a comma or a quote)
**   width,height  pixels
**   map           the map in --map syntax ("gpu,cpu,gpu", quoted)
**   run           0..runs; run 0 is the warm-up run
**   warmup        1 for run 0, else 0: summaries leave these rows out
**   stage         a stage name, "copies" for the run's copies between the host
**                 and the devices, or "total" for the run's wall time
**   role          the role the stage ran on, or "-" on the copies and total rows
**   ms            the stage's span (first kernel start to last kernel end on
**                 its device), the copies' device times summed, or the wall
**                 time (submission to result), in ms
** One row per run per stage plus a copies and a total row: images x maps x
** (runs + 1) x (stages + 2) rows after the header. */
db_status db_bench_write_csv(const db_bench *bench, const char *path);

/* Writes an SVG chart (planner/chart.c), atomically: one horizontal box per
** map of the wall time of every timed run on every image (whiskers min and
** max, box from the first to the third quartile, a line at the median), the
** maps labelled in --map syntax, an axis in ms with ticks. Plain SVG 1.1. */
db_status db_bench_write_svg(const db_bench *bench, const char *path);

#endif
