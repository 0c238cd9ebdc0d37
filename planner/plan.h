/*
** plan.h — choosing a map: estimate, measure and wisdom, as FFTW's planner does.
**
** No model of a machine predicts well which of an algorithm's maps runs fastest
** on it, but an algorithm has at most 2^stages maps and timing them all costs a
** few pages' work, next to batches of thousands. So:
**   estimate  no timing: each stage on gpu where a GPU is bound and the stage
**             has a gpu implementation, else on cpu (db_map_default);
**   measure   every runnable map runs on the real page, one warm-up and `runs`
**             timed runs each, interleaved round by round; the lowest median
**             wall time wins and is remembered as wisdom;
**   wisdom    the winners of earlier measurements, kept in a small text file
**             (docs/wisdom.md) under a key of everything that changes which
**             map wins: algorithm, cost parameters and variant, channels,
**             page-size bucket, both roles' device keys (platform, device and
**             driver) and a hash of the kernels and the library version.
** `auto`, the default map, is wisdom when an entry matches, else the estimate.
*/
#ifndef DB_PLAN_H
#define DB_PLAN_H

#include <stdbool.h>
#include <stdio.h>
#include "runtime/device.h"
#include "runtime/image.h"
#include "runtime/stage.h"

/* How a caller asked for its map. */
typedef enum db_plan_mode {
    DB_PLAN_GIVEN,   /* an explicit map ("gpu", "gpu,cpu,gpu", "stats=cpu") */
    DB_PLAN_AUTO,    /* "auto": wisdom, else the estimate */
    DB_PLAN_MEASURE  /* "measure": time every runnable map on the page */
} db_plan_mode;

/* The mode `text` asks for: "auto" and "measure" (any case), NULL or "" (the
** default: auto), anything else a map to parse with db_map_parse. */
db_plan_mode db_plan_mode_of(const char *text);

/* Where a plan's map came from. */
typedef enum db_plan_source {
    DB_PLAN_FROM_USER,
    DB_PLAN_FROM_ESTIMATE,
    DB_PLAN_FROM_WISDOM,
    DB_PLAN_FROM_MEASURE
} db_plan_source;

/* A map that measure timed: the median, least and most wall time of its timed
** runs in ms. */
typedef struct db_plan_timing {
    db_map map;
    double median_ms, min_ms, max_ms;
} db_plan_timing;

/* Room for a plan's key: the algorithm, parameters, bucket and keys (plan.c). */
enum { DB_PLAN_KEY = 512 };

/* A chosen map and how it was chosen. */
typedef struct db_plan {
    db_map map;
    db_plan_source source;
    char key[DB_PLAN_KEY];       /* the wisdom key of the algorithm, job, page size and devices */
    char why[512];               /* one sentence: why this map (for --explain) */
    char note[512];              /* what the user should hear even without --explain, or "" */
    int n_timings;               /* measure: every runnable map, in db_map_nth order */
    db_plan_timing timings[1 << DB_MAX_STAGES];
} db_plan;

/* The wisdom key of `algo` with `job` on a width x height x channels page on
** the roles of `ctx`, as one line of words without spaces. */
db_status db_plan_key(const db_context *ctx, const db_algo *algo, const db_job *job, int width, int height,
                      int channels, char *key, size_t size);

/* The estimate: db_map_default for the roles `ctx` binds, with a note when no
** GPU is bound (the stages run on cpu) and DB_ERR_DEVICE when a stage can run
** on no bound role. */
db_status db_plan_estimate(const db_context *ctx, const db_algo *algo, const db_job *job, int width, int height,
                           int channels, db_plan *plan);

/* The map for `auto`: the wisdom entry of this key in the file `wisdom` (NULL:
** db_wisdom_default_path; a missing file holds no entries), else the estimate.
** An entry whose map cannot run on these roles is not used. A malformed file is
** an error naming it and the line. */
db_status db_plan_auto(const db_context *ctx, const db_algo *algo, const db_job *job, int width, int height,
                       int channels, const char *wisdom, db_plan *plan);

/* Index of the fastest of n timings: the lowest median; on equal medians the
** map with fewer stages off db_map_default (gpu_bound as given), then the
** earlier. -1 when n is 0. */
int db_plan_fastest(const db_algo *algo, bool gpu_bound, const db_plan_timing *timings, int n);

/* Measure: times every map of `algo` that can run on the roles of `ctx` on
** `in` (one warm-up, then `runs` timed runs of each, interleaved), picks the
** fastest (db_plan_fastest) and, when `wisdom` is not NULL, stores it there
** ("" : db_wisdom_default_path). *out (may be NULL) receives the image: every
** map gives the same one, so the work of measuring is not lost. */
db_status db_plan_measure(db_context *ctx, const db_algo *algo, const db_job *job, const db_image *in, int runs,
                          const char *wisdom, db_plan *plan, db_image **out);

/* Prints how the plan was made: its key, the candidates with their times in
** --map syntax (measured, else the estimate's one map), the winner and why. */
void db_plan_explain(const db_plan *plan, const db_algo *algo, FILE *f);

/* ---- wisdom files ---------------------------------------------------------- */

/* $DOCBIN_WISDOM, else $XDG_DATA_HOME/docbin/wisdom, else
** $HOME/.local/share/docbin/wisdom. DB_ERR_USAGE when none is set. */
db_status db_wisdom_default_path(char *path, size_t size);

/* Looks `key` up in the file at `path`: 1 and the entry's map text and median
** ms when found, 0 when the file or the entry is missing. An entry with the
** same key but for the kernel hash is stale: 0 and *stale set. A malformed
** file is DB_ERR_FORMAT naming it, the line and the fix. */
db_status db_wisdom_find(const char *path, const char *key, char *map, size_t map_size, double *ms, bool *stale,
                         int *found);

/* Sets the entry of `key` in the file at `path` to `map` (--map syntax) and
** `ms`, replacing an entry of the same key and any stale one, the file's
** other entries kept; the file is rewritten atomically under a lock, so that
** concurrent writers (tasks of one cluster job) lose no entry. */
db_status db_wisdom_store(const char *path, const char *key, const char *map, double ms);

#endif
