/*
** calibrate.h — measuring the planner's cost models on this machine.
**
** For every chosen algorithm, every variant and every bound role r, the
** algorithm runs on synthetic pages (db_sample_page) at several sizes under the
** map that puts each stage on r where it has an implementation there (else on
** the other role; such stages get no row for r). At each size one warm-up run
** is dropped (program builds, JIT, first touch) and each stage's sample is the
** median of its span over the timed runs (`runs`, or as many more as fill
** 100 ms, up to 8 times `runs`: short maps are noisy and cheap); t = a + b *
** pixels is fitted through the samples (planner/cost.h) and stored under the
** device key, role, variant and kernel hash (planner/calib.h), with the fit's
** spread. A stage whose work follows content that the sample pages barely
** vary (db_stage_work.varied) is timed on varied pages of the same sizes too
** (db_sample_varied_page), run by run with the plain ones, and fitted to both.
**
** Parameters are the algorithm's defaults: a larger window or Howe's c changes
** the cost, so a calibration describes default runs. Copies are timed for each
** bound device that does not share host memory (a discrete GPU), from pinned
** staging memory on its transfer queue as the runtime copies. A device that
** shares host memory (PoCL) gets no transfer rows: its copies are maps, which
** the planner counts as free. The host's own copies of a page into staging
** memory and of the result out of it (db_copy_rows, paid by every run whatever
** the map) are timed at the same sizes in a round at each checkpoint (below)
** and fitted, after the last algorithm's, to each size's median over the
** rounds so far: the staging row. Timed once, at the start, its fit gave a 1
** MiB copy 0.23 ms where the calibration just before on the same host gave
** 0.07, and small pages' all-GPU maps came out up to 32% long
** (bench/results/planner-h100.md, run 62). The host's share of each run is
** measured gross, and the staging copies are taken off it once their row is
** fitted. Where the other role's device shares host memory, copies into a
** device of its own are timed again right after a kernel on that other device
** wrote the buffer: the written row.
**
** With both roles bound, the cost of a crossing into each role comes last
** (calib.h's crossing rows): the cheapest algorithm being calibrated whose
** stages all run on both roles runs on the smallest page in pairs, its first
** stage on the other role against every stage on the reading role, and what
** the pair's wall times differ by beyond their simulated difference is the
** crossing.
**
** Rows timed a minute apart describe one host only if its speed held: on one
** cloud VM, PoCL's rows for the first algorithms came out 2 to 4.7 times
** another machine's of the same kind, and those for the last ones 1.2 to 1.3
** times; on another the copies held while PoCL's rows moved as much (run 42)
** (bench/results/planner-h100.md). So the host's speed is checked when the
** calibration begins, after each algorithm and when it ends: a round of the
** staging copies, of which the largest gives the copy speed, a kernel on each
** device that shares host memory writing as many bytes
** (db_buffer_time_fills), and the share of the machine's CPU time the
** hypervisor took since the check before. When the slowest and the fastest
** checkpoint of either speed differ by more than DB_CALIBRATE_HOST_CHANGE, or
** the hypervisor took DB_CALIBRATE_STOLEN_PCT or more between two checks, a
** warning says so.
*/
#ifndef DB_CALIBRATE_H
#define DB_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include "planner/bench.h"
#include "planner/calib.h"
#include "runtime/device.h"

/* The most image sizes and transfer sizes a calibration takes. */
enum { DB_CALIBRATE_MAX_SIZES = 16 };

/* The most checkpoints db_calibrate_checks keeps: the start, one after each
** algorithm, the end; a calibration takes at most this less 2 algorithms. */
enum { DB_CALIBRATE_MAX_CHECKS = 32 };

/* The host's speed at each checkpoint of a calibration (above): what it
** compared to warn, for the caller to show. */
typedef struct db_calibrate_checks {
    int n;
    size_t bytes; /* the size copied and written at each */
    struct {
        char when[64];                  /* "when the calibration began", "after otsu", "when it ended" */
        double copy_gbs;                /* the host's copy of `bytes` (db_copy_rows), GB/s */
        double fill_gbs[DB_ROLE_COUNT]; /* a kernel writing `bytes` on a role whose device shares host
                                           memory (db_buffer_time_fills), GB/s; 0 for the others */
        double stolen_pct;              /* the percentage of the machine's CPU time the hypervisor took
                                           since the checkpoint before (db_cpu_stolen_pct); -1: unknown,
                                           or the first */
        double staging_ms[DB_CALIBRATE_MAX_SIZES]; /* the host's copy (db_copy_rows) of each of the
                                                      options' transfer_bytes, ms: a round of the staging row */
    } at[DB_CALIBRATE_MAX_CHECKS];
} db_calibrate_checks;

/* What to calibrate. db_calibrate_defaults fills every field. */
typedef struct db_calibrate_options {
    const db_algo *const *algos; /* the algorithms; NULL = every algorithm */
    int n_algos;
    const char *variant;         /* NULL = every variant; else only this one, of the algorithms that have it */
    struct {
        int width, height;
    } sizes[DB_CALIBRATE_MAX_SIZES]; /* page sizes, >= DB_COST_MIN_SIZES distinct pixel counts */
    int n_sizes;
    size_t transfer_bytes[DB_CALIBRATE_MAX_SIZES]; /* copy sizes, >= DB_COST_MIN_SIZES distinct */
    int n_transfer_sizes;
    int runs;                /* timed runs per size, after one warm-up run (more for short maps) */
    db_progress_fn progress; /* may be NULL */
    void *user;
    db_calibrate_checks *checks; /* may be NULL: where to put the host's speed at each checkpoint */
} db_calibrate_options;

/* Every algorithm; A4 at 75, 150 and 300 dpi (620x877, 1240x1754, 2480x3508);
** copies of 1, 4, 16 and 64 MiB; 5 timed runs; no progress callback. */
void db_calibrate_defaults(db_calibrate_options *opts);

/* The factor by which the host's copy speed may move between the start and
** the end of a calibration before it warns. The staging fit's residuals
** reached 0.65 of its predictions on machines that then measured as predicted
** (its small copies are noisy), so the check compares the largest copy alone
** and leaves it room. */
#define DB_CALIBRATE_HOST_CHANGE 1.5

/* Whether copies at start_gbs and then at end_gbs (GB/s, > 0) differ by more
** than DB_CALIBRATE_HOST_CHANGE either way; false when either is not > 0. */
bool db_calibrate_host_changed(double start_gbs, double end_gbs);

/* Whether the slowest and the fastest of speeds gbs[0..n) (GB/s; those not > 0
** left out) differ by more than DB_CALIBRATE_HOST_CHANGE
** (db_calibrate_host_changed); if so, *first and *second are their indices,
** the earlier first. The check of the host's speed over the checkpoints. */
bool db_calibrate_speed_moved(const double *gbs, int n, int *first, int *second);

/* The share of the machine's CPU time (a percentage) that the hypervisor may
** take over a checkpoint's interval (db_calibrate_checks.stolen_pct) before the
** calibration warns that the rows timed in it may be long: on one machine,
** maps measured while it took 1% or more came out 32 of 56 within 20% of their
** predictions, those measured while it took less 64 of 64; HBK's rows timed
** while it took 1.38% predicted its PoCL maps up to 40% long
** (bench/results/planner-h100.md, runs 63 and 66). */
#define DB_CALIBRATE_STOLEN_PCT 1.0

/* The checkpoint of `k` whose interval had the largest stolen share, if that is
** DB_CALIBRATE_STOLEN_PCT or more, else -1; *over is how many intervals had
** that much. The check of the stolen time over the checkpoints. */
int db_calibrate_most_stolen(const db_calibrate_checks *k, int *over);

/* The host's share of a run, gross_ms with the staging copies of the page
** (in_bytes) and the result (out_bytes) still in it, net of those copies as
** `staging` predicts them; 0 where they predict more: nothing is left for the
** host. What the calibration fits the host's rows to. */
double db_calibrate_host_net(double gross_ms, const db_transfer_model *staging, size_t in_bytes, size_t out_bytes);

/* Measures and fits; puts every row into `out` (rows already there with the
** same keys are replaced). Roles without a device are skipped; a stage whose
** only implementation is on an unbound role is DB_ERR_DEVICE, naming the
** stage and how to bind the role. */
db_status db_calibrate(db_context *ctx, const db_calibrate_options *opts, db_calib *out);

#endif
