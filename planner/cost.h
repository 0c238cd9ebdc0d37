/*
** cost.h — the planner's cost models: how long a stage or a transfer takes.
**
** A stage on a device costs t = a + b * pixels; a copy between host and device
** costs t = latency + bytes / bandwidth (DESIGN.md "Planner"). Both are straight
** lines fitted by least squares (GSL) to samples (size, ms), where each sample
** is the median of warm runs at one size: medians, because one slow run (a
** page fault, another process) would drag a mean and with it every plan
** (specs/runtime-notes.md, StarPU). The fit weighs each sample by 1 / T^2,
** T the time its residual is judged against: the whole run's wall time for a
** stage or the host's share of a run, the sample's own time for a copy. It
** minimises residuals relative to what the planner is judged by, a map's
** time, so a small page's prediction is not left to the intercept that the
** largest page's noise happens to leave, and a part of a run that is small
** beside the run (the host's share on a GPU) is not fitted to its own noise at
** the small page at the cost of its real weight at the large one. A line
** through two sizes always fits, so a fit needs at least DB_COST_MIN_SIZES
** distinct sizes.
*/
#ifndef DB_COST_H
#define DB_COST_H

#include <stdbool.h>
#include "runtime/error.h"

/* The fewest distinct sizes a fit accepts: the third is the first check that
** the time really is linear in the size. */
enum { DB_COST_MIN_SIZES = 3 };

/* One measurement: the median time in milliseconds at one size (pixels for a
** stage, bytes for a transfer). Several samples may share a size. */
typedef struct db_cost_sample {
    double size;
    double ms;
    double of_ms; /* the time its residual is judged against (the run's wall time); 0: ms itself */
} db_cost_sample;

/* A stage's fitted model, t(ms) = a + b * pixels at the work of the pages it
** was fitted to. A stage whose cost follows the page's content (db_stage.work)
** does `work` passes over a calibration page and costs a + b * pixels * w / work
** on a page where it does w: its samples were fitted at size pixels * w / work.
** With `per_unit` each unit of work pays a fixed cost too, and a part of the
** run visits every pixel once whatever the work: c * pixels + (a + b * pixels)
** * w / work (db_cost_fit_per_unit, db_stage_work.per_unit). */
typedef struct db_cost_model {
    double a;      /* fixed cost in ms: launches, reads of convergence flags */
    double b;      /* ms per pixel */
    int sizes;     /* distinct sizes the fit saw */
    double spread; /* the largest |residual| / the time it is judged against: how far to trust the line */
    double work;   /* the median work of the calibration pages; 0: the cost follows the size alone */
    double c;      /* per_unit rows: ms per pixel that the work does not scale; 0 for the others */
    bool per_unit; /* the fixed cost a scales with the work too (from the stage, not the file) */
} db_cost_model;

/* Fits `model` to n samples (its work 0). DB_ERR_USAGE (naming the fix) for fewer than
** DB_COST_MIN_SIZES distinct sizes, or a negative, infinite or NaN value. */
db_status db_cost_fit(const db_cost_sample *samples, int n, db_cost_model *model);

/* Fits a per_unit model, t = c * size + (a + b * size) * scale[i], to n samples
** whose work over the calibration's median is scale[i], each weighed as
** db_cost_fit weighs it. Where the three terms give a negative a, fits c and b
** alone (a = 0). Where the scales differ by less than DB_COST_SCALE_SPREAD, or
** the fit gives a negative c or b (noise the pages cannot tell apart), fits
** c = 0 and (a + b * size) * scale[i] instead. Errors as db_cost_fit's, and
** for a scale that is not positive. At three samples the three terms are
** solved exactly: the spread is then 0 and checks nothing. */
db_status db_cost_fit_per_unit(const db_cost_sample *samples, const double *scale, int n, db_cost_model *model);

/* The least relative spread of the scales (max - min) / max that tells the
** three terms of a per_unit model apart. */
#define DB_COST_SCALE_SPREAD 0.1

/* The predicted time in ms for `pixels` on a page where the stage does `work`
** (<= 0: as much as on the calibration pages); never negative, since a fit
** through noisy small sizes may cross zero. */
double db_cost_predict(const db_cost_model *model, double pixels, double work);

/* The direction of a copy: host to device or device to host. Copy engines are
** often asymmetric, so each direction has its own model. */
typedef enum db_transfer_dir {
    DB_H2D,
    DB_D2H,
    DB_TRANSFER_DIR_COUNT
} db_transfer_dir;

/* "h2d" or "d2h", the words of the calibration file. */
const char *db_transfer_dir_name(db_transfer_dir dir);

/* The direction whose word (db_transfer_dir_name) is `word`, into *dir; 0 when
** it is neither. */
int db_transfer_dir_parse(const char *word, db_transfer_dir *dir);

/* A device's fitted copy model in one direction, t(ms) = latency_ms + bytes /
** (bandwidth_gbs * 1e6); with cached_bytes, the bytes past them go at
** beyond_gbs (db_transfer_fit_cached). */
typedef struct db_transfer_model {
    double latency_ms;    /* the fit's intercept; noise may leave it slightly negative */
    double bandwidth_gbs; /* 1e9 bytes per second, > 0 */
    int sizes;            /* distinct sizes the fit saw */
    double spread;        /* the largest |residual| / measured time */
    double cached_bytes;  /* the bytes copied at bandwidth_gbs, the rest at beyond_gbs; 0: every byte */
    double beyond_gbs;    /* > 0 where cached_bytes is */
} db_transfer_model;

/* Fits `model` to n samples (bytes, ms), as db_cost_fit does; also fails when
** the time does not grow with the size (no finite positive bandwidth). */
db_status db_transfer_fit(const db_cost_sample *samples, int n, db_transfer_model *model);

/* Fits a copy of memory that another device's cores have just written: its
** first cached_bytes at a fitted bandwidth (the lines still in the writer's
** caches, which the copy engine must fetch from them), the rest at
** `beyond_gbs` (lines already written back: the bandwidth of untouched memory,
** the transfer row's). cached_bytes is the one of a log scan between the
** smallest and the largest size whose fit leaves the smallest squared
** residuals relative to the times, at most 3/4 of one line's and with the
** cached bytes slower than beyond_gbs; else 0 (every byte at one fitted
** bandwidth, as db_transfer_fit). A copy of 20.68 MB that PoCL's threads had written ran into an
** H100 at 20.5 GB/s, one of 131.72 MB at 45 to 47: one line through both
** predicted the large one 1.6 times too long (bench/results/planner-h100.md).
** Fails as db_transfer_fit does. */
db_status db_transfer_fit_cached(const db_cost_sample *samples, int n, double beyond_gbs, db_transfer_model *model);

/* The predicted time in ms to copy `bytes`; never negative. */
double db_transfer_predict(const db_transfer_model *model, double bytes);

#endif
