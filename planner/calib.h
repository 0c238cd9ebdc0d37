/*
** calib.h — the per-host calibration file: fitted cost models of stages and transfers.
**
** The file is plain text, one entry per line, fields separated by spaces:
**
**   docbin-calibration 7
**   stage <device> <algo> <stage> <role> <variant> <kernel-hash> <a> <b> <sizes> <spread> <work> <c> <channels>
**   transfer <device> <dir> <latency> <bandwidth> <sizes> <spread>
**   staging <latency> <bandwidth> <sizes> <spread>
**   crossing <from> <to> <role> <ms> <sizes>
**   written <from> <to> <latency> <bandwidth> <sizes> <spread> <cached> <beyond>
**
**   device       16 hex digits: the device key (db_device_info.key: platform, name, driver)
**   algo, stage  names as --list-algos prints them
**   role         cpu or gpu: the role the stage ran under (its implementation)
**   variant      the --variant word, or - when the algorithm has none
**   kernel-hash  64 hex digits: SHA-256 of the OpenCL sources the stage uses and
**                of how they are launched (db_stage_kernel_hash); a row with
**                another hash is stale
**   a, b         t(ms) = a + b * pixels at the calibration pages' work (planner/cost.h,
**                which says how a page's work scales them); the rows of a stage
**                implementation that several algorithms share carry one model
**                (planner/calibrate.c, pools)
**   sizes        the distinct image sizes fitted, >= 3
**   spread       the largest |residual| of the fit relative to the time it is
**                judged against (planner/cost.h: a stage's or host row's run, a
**                copy's own time), >= 0
**   work         for a stage whose cost follows the page's content (db_stage.work),
**                the median work it did on the calibration pages, in the stage's
**                units (db_stage_work.unit: passes per block, changes per pixel,
**                commands); a page where it does more costs more (planner/cost.h);
**                0 for the others and in files of version 4 and earlier
**   c            for a stage whose work scales its whole cost (db_stage_work.per_unit),
**                ms per pixel that the work does not scale (planner/cost.h); 0 for
**                the others and in files of version 5 and earlier
**   channels     for a stage that reads the page (db_calib_channels), the channels of
**                the pages it was timed on: 1 (gray) or 3 (RGB), each with a row of
**                its own, as converting or reading three bytes a pixel costs more
**                than one (Otsu's gray on PoCL: half as long on a gray page), and
**                for a host row (below) the same; 0 for the others, whose input
**                is the same whatever the page, and in files of version 6 and
**                earlier (host rows: 7 too), whose rows serve either page
**   dir          h2d (host to device) or d2h (device to host)
**   latency      ms; t(ms) = latency + bytes / (bandwidth * 1e6)
**   bandwidth    GB/s (1e9 bytes per second), > 0
**   staging      the host's own copies of a page into staging memory and of the
**                result out of it (db_copy_rows), once per file: every run pays them
**   crossing     what a run pays, beyond the copies, when a stage on the role
**                bound to device <to> takes an item a stage on the other role
**                (device <from>) wrote: the host waits for the writer's event in
**                one context and then enqueues into the other (buffer.h,
**                db_event_bridge), and the reader's device starts from idle
**   role         for a crossing, the role of the reading stage (cpu or gpu)
**   ms           a crossing's cost in ms, >= 0: on the smallest calibration page,
**                the median over pairs of runs (the first stage on the other
**                role, then every stage on this one) of their wall times'
**                difference, less the difference the simulation gives them
**                (planner/calibrate.c)
**   written      a copy into device <to> of host memory that a kernel on device
**                <from>, which shares host memory, has just written: what an
**                item that crosses from a stage on <from> to one on <to> costs
**                to copy. Its source lines sit in the caches of the cores that
**                wrote them, and such a copy ran at 20 GB/s where the transfer
**                row of untouched memory gave 55 (bench/results/planner-h100.md)
**   cached       for a written row, the bytes copied at <bandwidth>: the lines the
**                writer's caches still hold; past them the copy runs at <beyond>
**                GB/s, the speed of memory already written back (131.72 MB that
**                PoCL wrote went into an H100 at 45 to 47 GB/s, 20.68 MB at 20.5;
**                db_transfer_fit_cached). 0 (and <beyond> 0): every byte at
**                <bandwidth>, as in files of version 6 and earlier
**
** A stage row whose stage is `host` (DB_CALIB_HOST_STAGE) models the rest of
** the host's share of a run of the algorithm when its output comes from that
** role: enqueueing, flushing, waiting for the result and mapping it, measured
** as the wall time of runs with every stage on the role less the stages'
** spans, the copies and the staging copies, on RGB and on gray pages (a row
** each: a gray page's share is the smaller). Its kernel hash is
** db_algo_kernel_hash.
**
** Blank lines and lines starting with '#' are ignored. Each key (a stage row's
** first six fields and its channels, a transfer row's first two, a crossing row's first three,
** a written row's first two)
** appears once. A file with any
** malformed line is rejected whole, with its name, the line number and the fix
** (recalibrate or delete the file): a half-read calibration would plan silently
** with holes. Host code (a stage's C functions) is not part of the kernel hash.
*/
#ifndef DB_CALIB_H
#define DB_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include "planner/cost.h"
#include "runtime/stage.h"

/* The first line of every calibration file; bump the number when rows change. */
#define DB_CALIB_HEADER "docbin-calibration 7"

/* The headers of the earlier formats, without the stage rows' channels and
** the written rows' cached bytes (6), without the stage rows' c either (5),
** without their work either (4), without written rows (3), without crossing
** rows either (2) and without the staging row (1); still read. */
#define DB_CALIB_HEADER_6 "docbin-calibration 6"
#define DB_CALIB_HEADER_5 "docbin-calibration 5"
#define DB_CALIB_HEADER_4 "docbin-calibration 4"
#define DB_CALIB_HEADER_3 "docbin-calibration 3"
#define DB_CALIB_HEADER_2 "docbin-calibration 2"
#define DB_CALIB_HEADER_1 "docbin-calibration 1"

/* The stage name of the rows of the host's share of a run (above). */
#define DB_CALIB_HOST_STAGE "host"

/* Longest algorithm, stage and variant names, with the NUL. */
enum { DB_CALIB_NAME = 32 };

/* The cost model of one stage on one device under one role and variant. */
typedef struct db_calib_stage {
    char device[17];               /* device key, 16 hex digits */
    char algo[DB_CALIB_NAME];
    char stage[DB_CALIB_NAME];
    db_role role;
    char variant[DB_CALIB_NAME];   /* "-" when the algorithm has no variants */
    char kernel_hash[65];          /* db_stage_kernel_hash when measured */
    int channels;                  /* 1 or 3: the pages' channels, for a stage that reads the page; else 0 */
    db_cost_model model;
} db_calib_stage;

/* The copy model of one device in one direction. */
typedef struct db_calib_transfer {
    char device[17];
    db_transfer_dir dir;
    db_transfer_model model;
} db_calib_transfer;

/* The cost of a crossing into role `role` (device `to`) from the other role (device `from`). */
typedef struct db_calib_crossing {
    char from[17], to[17];
    db_role role;
    double ms;
    int sizes;                     /* the calibration sizes it is measured at, >= 1 (older files: 3) */
} db_calib_crossing;

/* The copy model into device `to` of memory a kernel on device `from` has just written. */
typedef struct db_calib_written {
    char from[17], to[17];
    db_transfer_model model;
} db_calib_written;

/* A host's calibration: every entry of its file, in file order. */
typedef struct db_calib {
    db_calib_stage *stages;
    int n_stages, cap_stages;
    db_calib_transfer *transfers;
    int n_transfers, cap_transfers;
    db_calib_crossing *crossings;
    int n_crossings, cap_crossings;
    db_calib_written *written;
    int n_written, cap_written;
    bool has_staging;
    db_transfer_model staging;     /* the host's staging copy model, when has_staging */
} db_calib;

/* What a lookup found. A stale entry is reported apart from a missing one so
** that the planner can say loudly which stage must be recalibrated. */
typedef enum db_calib_found {
    DB_CALIB_FOUND,
    DB_CALIB_MISSING,
    DB_CALIB_STALE   /* an entry exists, measured with other kernels: do not use it */
} db_calib_found;

/* An empty calibration. */
void db_calib_init(db_calib *calib);

/* Frees the entries; `calib` is empty afterwards. */
void db_calib_free(db_calib *calib);

/* Replaces `calib` with the entries of `path`. A missing file is an empty
** calibration (a new host starts uncalibrated); any malformed line fails the
** whole load with DB_ERR_FORMAT and leaves `calib` as it was. */
db_status db_calib_load(db_calib *calib, const char *path);

/* Writes `calib` to `path` atomically (readers see the old file or the new one),
** creating the missing directories. */
db_status db_calib_save(const db_calib *calib, const char *path);

/* Adds `entry`, or replaces the entry with the same device, algo, stage, role,
** variant and channels; an entry of 3 channels replaces the one of 0 too (of an
** older file, timed on the same RGB sample pages). DB_ERR_USAGE for a name that is empty, too long or holds a space,
** or a key or hash that is not hex; DB_ERR_NOMEM. */
db_status db_calib_put_stage(db_calib *calib, const db_calib_stage *entry);

/* Adds `entry`, or replaces the entry of the same device and direction. */
db_status db_calib_put_transfer(db_calib *calib, const db_calib_transfer *entry);

/* Sets the host's staging copy model (db_copy_rows), replacing any earlier one. */
db_status db_calib_put_staging(db_calib *calib, const db_transfer_model *model);

/* Adds `entry`, or replaces the entry with the same devices and role. */
db_status db_calib_put_crossing(db_calib *calib, const db_calib_crossing *entry);

/* Adds `entry`, or replaces the entry with the same devices. */
db_status db_calib_put_written(db_calib *calib, const db_calib_written *entry);

/* Looks up the model of a stage for the current kernels `kernel_hash`. FOUND
** fills `model`; STALE (the entry's hash differs) writes into msg which stage on
** which device must be recalibrated; MISSING writes what is not calibrated.
** `variant` is "-" or NULL when the algorithm has none; `channels` is the
** row's (db_calib_channels), and where no row has them, a row of 0 channels (a
** file of version 6 or earlier) is used. */
db_calib_found db_calib_find_stage(const db_calib *calib, const char *device, const char *algo, const char *stage,
                                   db_role role, const char *variant, int channels, const char *kernel_hash,
                                   db_cost_model *model, char *msg, size_t msg_size);

/* The channels a row of stage `s` of `algo` is keyed by for pages of `channels`
** (1 or 3): the page's where the stage reads the page (the algorithm's input),
** else 0: what it reads is the same for every page. */
int db_calib_channels(const db_algo *algo, int s, int channels);

/* Looks up the copy model of `device` in direction `dir`: FOUND or MISSING. */
db_calib_found db_calib_find_transfer(const db_calib *calib, const char *device, db_transfer_dir dir,
                                      db_transfer_model *model);

/* Looks up the cost of a crossing into `role` on device `to` from device `from`: FOUND or MISSING. */
db_calib_found db_calib_find_crossing(const db_calib *calib, const char *from, const char *to, db_role role,
                                      double *ms);

/* Looks up the copy model into device `to` of what a kernel on device `from` wrote: FOUND or MISSING. */
db_calib_found db_calib_find_written(const db_calib *calib, const char *from, const char *to,
                                     db_transfer_model *model);

/* The calibration file of this host: $DOCBIN_PERF_DIR/<host>.calib, else
** $XDG_DATA_HOME/docbin/perf/<host>.calib, else ~/.local/share/docbin/perf/<host>.calib.
** One file per host name, since costs belong to the machine. DB_ERR_IO when no
** directory can be named (no HOME) or the path does not fit in `size`. */
db_status db_calib_default_path(char *path, size_t size);

/* ---- Shared with the history file (history.c), whose rows hold a stage key ---- */

/* Most fields a row may have; db_calib_split reports one more when there are more. */
enum { DB_CALIB_MAX_FIELDS = 16 };

/* Splits `line` in place at blanks into f[]; returns the number of fields (at
** most DB_CALIB_MAX_FIELDS + 1, f having room for that many). */
int db_calib_split(char *line, char **f);

/* Parses a whole field as a finite number; 0 when it is not one. */
int db_calib_parse_number(const char *s, double *v);

/* Copies field `src` into dst[size]; 0, copying nothing, when it does not fit. */
int db_calib_copy_field(char *dst, size_t size, const char *src);

/* Parses fields f[1..6] (device, algo, stage, role, variant, kernel hash) into
** `e`, its model zeroed; returns what is wrong with them, or NULL. */
const char *db_calib_parse_key(char *const *f, db_calib_stage *e);

/* Whether `s` is a device key (16 lower-case hex digits), and whether it is a
** name a field can hold (not empty, shorter than DB_CALIB_NAME, no blanks). */
bool db_calib_is_device_key(const char *s);
bool db_calib_is_name(const char *s);

/* What is wrong with the key of `e` (not its model), or NULL. */
const char *db_calib_key_problem(const db_calib_stage *e);

/* Creates every missing directory above `path` (the file itself excluded). */
db_status db_calib_make_parents(const char *path);

/* The SHA-256 (64 hex digits) of the text of the OpenCL sources `stage` lists
** (db_stage.sources), in order, as programs are built from them, and of the
** runtime's launch revision (DB_LAUNCH_REVISION): the kernel hash of its
** calibration rows. DB_ERR_USAGE when sources is NULL or names a file that
** does not exist. */
db_status db_stage_kernel_hash(const db_stage *stage, char hex[65]);

/* The SHA-256 of the kernel hashes of all of `algo`'s stages, in order: the
** kernel hash of its host rows, stale when any stage's kernels change. */
db_status db_algo_kernel_hash(const db_algo *algo, char hex[65]);

#endif
