/*
** history.h — stage and copy times measured by ordinary runs, kept beside the
** calibration file, so that --map auto improves with use.
**
** Calibration times stages on synthetic pages; real pages cost what their
** content costs (Howe's graph cut varies several-fold between pages of one
** size). A run that records (docbin-run --history, and every --map auto run)
** appends one row per stage of each warm run, measured as calibration
** measures (not the first run on a device context, which builds programs and
** fills pools, nor a batch page that shared its devices with other pages), to
** `<calibration file>.history`:
**
**   docbin-history 5
**   run <device> <algo> <stage> <role> <variant> <kernel-hash> <pixels> <ms> <work> <crossing> <channels>
**   copy <device> <algo> <item> <dir> <bytes> <ms>
**
** with the fields of a calibration stage row (calib.h), the image's pixels,
** the stage's measured span in ms (what calibration measures) and the work it
** did (db_stage.work; 0 for a stage whose cost follows the size alone),
** `crossing`, 1 where the stage was beside a crossing (db_map_at_crossing), and
** `channels`, as a calibration row's: the page's (1 or 3) for a stage that
** reads the page, else 0.
** The planner scales each calibrated stage model by the median of measured /
** predicted (at the row's work) over the stage's last DB_HISTORY_KEEP runs on
** that device with the current kernels that were not beside a crossing, once
** there are DB_HISTORY_MIN of them: calibration times each stage between
** stages of its own role, and a span beside a crossing holds part of what the
** crossing rows already count, so it would count twice. Rows measured with
** other kernels are ignored, as the calibration row beside them is stale
** anyway. The median work of a stage's last runs, beside a crossing or not, is
** what the planner expects of the next page (db_history_work). Where the work
** is the same on every device, runs on the GPU tell what the CPU would face;
** where the roles count it differently (db_stage_work.by_role), only runs on
** the same role count. Files of versions 1 (rows without the work), 2
** (without `crossing`) and 3 (without `channels`) are still read, and rows of
** any version may follow any header; rows of versions 1 and 2, which do not say
** whether they were beside a crossing, tell the work only, and rows of version
** 3 read as of 0 channels, so that a stage that reads the page takes only
** their work.
**
** A `copy` row is one item's copy between the host and device <device> in
** direction <dir> (h2d or d2h) in one run: <bytes> copied, <ms> of device time.
** The planner scales each predicted copy of an item by the median of measured /
** predicted over that item's last DB_HISTORY_KEEP copies in that direction on
** that device, once there are DB_HISTORY_MIN of them (db_history_copy_factor):
** what a copy costs depends on what the host's caches hold of its memory, which
** the calibration's copies do not tell. Copies of the local methods' sums out of
** an H100 for PoCL took 0.99 to 2.7 times the calibrated d2h row in runs 49 to
** 58, and those into it of what PoCL wrote 0.6 to 1.6 times the written row
** (bench/results/planner-h100.md). A file of version 4 and earlier has no copy
** rows.
**
** Every run appends its rows with one write to a file opened for appending, so
** concurrent runs on one host interleave whole runs; a file past
** DB_HISTORY_MAX_BYTES is rewritten atomically with the last DB_HISTORY_KEEP
** rows of each stage measured with its newest kernels, and the last
** DB_HISTORY_KEEP of those not beside a crossing (rows appended by
** another process during that rewrite may be lost: history is a hint, never a
** result). The header line may appear again later in the file (two runs
** creating it at once), and a last line without its newline (an append in
** progress) is skipped. A malformed line rejects the whole file with its name,
** line number and fix; the planner then warns and plans without history.
*/
#ifndef DB_HISTORY_H
#define DB_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include "planner/calib.h"
#include "planner/map.h"
#include "runtime/profile.h"

/* The header line of a history file, and those of versions 4 (no copy rows),
** 3 (no channels field either), 2 (no crossing field either) and 1 (no work
** field either). */
#define DB_HISTORY_HEADER "docbin-history 5"
#define DB_HISTORY_HEADER_4 "docbin-history 4"
#define DB_HISTORY_HEADER_3 "docbin-history 3"
#define DB_HISTORY_HEADER_2 "docbin-history 2"
#define DB_HISTORY_HEADER_1 "docbin-history 1"

/* Runs per stage that count (the latest), runs needed before history counts,
** and the size past which an append compacts the file. */
enum { DB_HISTORY_KEEP = 64, DB_HISTORY_MIN = 3, DB_HISTORY_MAX_BYTES = 1 << 20 };

/* One measured stage of one run: the stage's calibration key (device, algo,
** stage, role, variant, kernel hash; its model unused), the image's pixels,
** the stage's span in ms, its work (0: none reported) and whether it was beside a crossing. */
typedef struct db_history_run {
    db_calib_stage key;
    double pixels;
    double ms;
    double work;
    bool at_crossing; /* beside a crossing: its span tells the work, not the time */
} db_history_run;

/* One measured copy of one run: item `item` of `algo` copied between the host
** and the device keyed `device` in direction `dir`. */
typedef struct db_history_copy {
    char device[17];
    char algo[DB_CALIB_NAME];
    char item[DB_CALIB_NAME];
    db_transfer_dir dir;
    double bytes;
    double ms; /* the copy's device time */
} db_history_copy;

/* A history file's rows, each kind in file order. */
typedef struct db_history {
    db_history_run *runs;
    int n, cap;
    db_history_copy *copies;
    int n_copies, cap_copies;
} db_history;

/* An empty history. */
void db_history_init(db_history *history);

/* Frees the rows; `history` is empty afterwards. */
void db_history_free(db_history *history);

/* The history file beside the calibration file `calib_path`. DB_ERR_IO when
** the name does not fit in `size`. */
db_status db_history_path(const char *calib_path, char *path, size_t size);

/* Replaces `history` with the rows of `path`. A missing file is an empty
** history; a malformed line fails the whole load with DB_ERR_FORMAT (name,
** line, and the fix: delete the file) and leaves `history` as it was. */
db_status db_history_load(db_history *history, const char *path);

/* Adds `n` rows to `history` in memory, after its rows (the latest). DB_ERR_NOMEM. */
db_status db_history_add(db_history *history, const db_history_run *runs, int n);

/* Adds `n` copy rows to `history` in memory, after its copy rows. DB_ERR_NOMEM. */
db_status db_history_add_copies(db_history *history, const db_history_copy *copies, int n);

/* Appends `n` rows (one run's stages) and `n_copies` copy rows (its copies) to
** `path` in one write, creating the file (with its header) and its directories
** when missing, and compacting it when it has grown past DB_HISTORY_MAX_BYTES.
** DB_ERR_USAGE for a row whose names or key a calibration row could not hold,
** or whose time (or a copy's bytes) is not positive. */
db_status db_history_append(const char *path, const db_history_run *runs, int n, const db_history_copy *copies,
                            int n_copies);

/* The rows of one run of a width x height page of `channels` (1 or 3) from its
** per-stage profile rows (db_profile_run_rows): one per stage of `algo` that
** ran, on the role `map` gives it, keyed by keys[role] (db_device_info.key),
** the variant of `job`, the stage's kernel hash and db_calib_channels, with
** the work from the run's `report`
** (may be NULL: no work) and `at_crossing` from `map` (db_map_at_crossing).
** *n is the count (at most DB_MAX_STAGES rows go to `out`). */
db_status db_history_rows(const db_profile_row *rows, int n_rows, const char (*keys)[17], const db_algo *algo,
                          const db_job *job, const db_map *map, int width, int height, int channels,
                          const db_report *report, db_history_run *out, int *n);

/* The most copy rows one run has: each item, each role, each direction. */
enum { DB_HISTORY_MAX_COPIES = DB_MAX_ITEMS * DB_ROLE_COUNT * DB_TRANSFER_DIR_COUNT };

/* The copy rows of one run from its profile rows (db_profile_run_rows): one per
** item copied in each direction between the host and a device that does not
** share host memory (a row with bytes), keyed by keys[role]. *n is the count
** (at most DB_HISTORY_MAX_COPIES rows go to `out`). */
void db_history_copy_rows(const db_profile_row *rows, int n_rows, const char (*keys)[17], const db_algo *algo,
                          db_history_copy *out, int *n);

/* The correction of a calibrated copy model: the median of ms / predicted over
** the last DB_HISTORY_KEEP copy rows of item `item` of `algo` in direction
** `dir` on device `device`, in *factor. Returns how many rows that was; with
** fewer than DB_HISTORY_MIN, *factor is 1. */
int db_history_copy_factor(const db_history *history, const char *device, const char *algo, const char *item,
                           db_transfer_dir dir, const db_transfer_model *model, double *factor);

/* The correction of a calibrated stage model: the median of ms / predicted
** over the last DB_HISTORY_KEEP rows not beside a crossing with the same key as
** `key` (device, algo, stage, role, variant, kernel hash and channels), in *factor. Returns how many rows that was;
** with fewer than DB_HISTORY_MIN, *factor is 1. */
int db_history_factor(const db_history *history, const db_calib_stage *key, const db_cost_model *model,
                      double *factor);

/* The work expected of a stage on the next page: the median over the last
** DB_HISTORY_KEEP rows, on any device and role (on key->role only with
** `same_role`), with the algo, stage, variant and kernel hash of `key` and a
** work above 0, in *work. Returns how many rows that was; with fewer than
** DB_HISTORY_MIN, *work is 0 (none known). */
int db_history_work(const db_history *history, const db_calib_stage *key, bool same_role, double *work);

#endif
