/*
** plan.h — the plan search: predict every map of an algorithm, pick the best, explain.
**
** A cost table holds what one algorithm at one image size costs on this host:
** each stage on each role, each role's copies to and from the host, and the
** bytes of each data item. It is filled from the calibration file (calib.h) or
** by hand. The simulator replays the scheduler (sched.c, buffer.c) on it:
** stages in topological order, each on its role's in-order compute queue;
** an input is fetched lazily, device -> host on the writer's transfer queue and
** host -> device on the reader's, once per item and place; a device that
** shares host memory (PoCL) maps instead of copying, at no cost; an item that
** one role wrote and the other reads pays the calibrated crossing cost of the
** reading role before its copy there (the host waits across contexts, and
** the reader's device starts from idle: a delay of the run that occupies no
** device queue, so it adds to the latency and not to a batch's period); the
** input starts on the host and crosses nothing; the output (and the report item,
** when the algorithm has one) ends on the host. Every map also pays the
** host's own copies (db_copy_rows) of the decoded page into staging memory before
** the graph and of the result out of it after.
**
** Choosing (db_plan_choose) simulates every runnable map and scores it for
** the objective. Every map within DB_PLAN_MARGIN of the best score counts as
** a tie: a calibrated line is good to a few percent, and a map that moves
** stages off the default pays in ways the model leaves out (host threads
** sharing the CPU with the cpu role's device, a page whose content costs more
** than the calibration's). Ties go to
** the map with fewer stages moved off the default map (db_map_default), then to
** the lower score, then to the earlier map in db_map_nth order, so the same
** costs always give the same map. When an
** entry a runnable map needs is unknown (uncalibrated or stale), no map is
** compared: the default map is chosen and the cost table's notes say what is
** missing and how to calibrate it.
*/
#ifndef DB_PLAN_H
#define DB_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "planner/calib.h"
#include "planner/history.h"
#include "planner/cost.h"
#include "runtime/device.h"
#include "runtime/profile.h"
#include "runtime/stage.h"

/* How much better than the default-most map a map must be predicted, as a
** fraction of the best score, to be chosen over it (see above). */
#define DB_PLAN_MARGIN 0.05

/* What a plan optimises. */
typedef enum db_plan_objective {
    DB_PLAN_LATENCY,    /* one image: the earliest time its output is on the host */
    DB_PLAN_THROUGHPUT  /* a batch: the shortest steady-state period per image */
} db_plan_objective;

/* "latency" or "throughput". */
const char *db_plan_objective_name(db_plan_objective objective);

/* Whether a cost is known. NO_IMPL and UNBOUND make a map unrunnable; UNKNOWN
** makes its prediction unknown. */
typedef enum db_plan_entry {
    DB_PLAN_KNOWN,
    DB_PLAN_UNKNOWN,  /* not calibrated, or calibrated with other kernels */
    DB_PLAN_NO_IMPL,  /* the stage has no implementation on that role */
    DB_PLAN_UNBOUND   /* no device is bound to that role */
} db_plan_entry;

/* Room for the notes of a cost table: one per stage and role, one per role and
** direction, one per role for the host's share, for crossings into it and for
** copies of what the other role wrote, one for the staging copies, each a full
** sentence with its fix. */
enum {
    DB_PLAN_MAX_NOTES = DB_MAX_STAGES * DB_ROLE_COUNT + DB_ROLE_COUNT * DB_TRANSFER_DIR_COUNT + 3 * DB_ROLE_COUNT + 1,
    DB_PLAN_NOTE = 512
};

/* Where the work a table assumes of a stage (db_stage.work) comes from. */
typedef enum db_plan_work {
    DB_PLAN_WORK_NONE,        /* the stage's cost follows the size alone */
    DB_PLAN_WORK_CALIBRATION, /* as much as on the calibration pages (the rows' work) */
    DB_PLAN_WORK_HISTORY,     /* the median of the last runs' pages (db_history_work) */
    DB_PLAN_WORK_PAGE         /* this page's, from a run of it (db_plan_costs_set_page_work) */
} db_plan_work;

/* The costs of one algorithm at one image size on one host's roles. */
typedef struct db_plan_costs {
    const db_algo *algo;
    db_job job;
    int width, height, channels;
    bool bound[DB_ROLE_COUNT];                 /* a device is bound to the role */
    char device[DB_ROLE_COUNT][256];           /* its name, for notes and tables */
    db_plan_entry stage[DB_MAX_STAGES][DB_ROLE_COUNT];
    double stage_ms[DB_MAX_STAGES][DB_ROLE_COUNT]; /* when KNOWN */
    bool shared[DB_ROLE_COUNT];                /* the device shares host memory: copies are free maps */
    db_plan_entry copy[DB_ROLE_COUNT][DB_TRANSFER_DIR_COUNT]; /* KNOWN whenever shared */
    db_transfer_model copy_model[DB_ROLE_COUNT][DB_TRANSFER_DIR_COUNT];
    size_t item_bytes[DB_MAX_ITEMS];           /* db_item_bytes of every item */
    db_plan_entry staging;                     /* the host's copies of the input into staging memory and
                                               ** of the output out of it (db_copy_rows), paid by every map */
    db_transfer_model staging_model;           /* when KNOWN; free after db_plan_costs_init */
    double host_ms[DB_ROLE_COUNT];             /* the rest of the host's share of a run whose output
                                               ** comes from the role (calib.h); 0 when not calibrated */
    double crossing_ms[DB_ROLE_COUNT];         /* a crossing into the role from the other (calib.h); 0 when
                                               ** not calibrated */
    bool written[DB_ROLE_COUNT];               /* copies into the role of what a stage on the other role,
                                               ** which shares host memory, wrote cost written_model (calib.h,
                                               ** written rows); without it they cost copy_model's h2d */
    db_transfer_model written_model[DB_ROLE_COUNT];
    double history_factor[DB_MAX_STAGES][DB_ROLE_COUNT]; /* measured / calibrated, applied (1: none) */
    int history_runs[DB_MAX_STAGES][DB_ROLE_COUNT];      /* the runs it came from (history.h) */
    /* The same for each item's copies to and from a role's device (db_history_copy_factor). */
    double copy_factor[DB_MAX_ITEMS][DB_ROLE_COUNT][DB_TRANSFER_DIR_COUNT];
    int copy_runs[DB_MAX_ITEMS][DB_ROLE_COUNT][DB_TRANSFER_DIR_COUNT];
    bool modelled[DB_MAX_STAGES][DB_ROLE_COUNT];         /* stage_ms came from stage_model (calibrated) */
    db_cost_model stage_model[DB_MAX_STAGES][DB_ROLE_COUNT];
    /* The work of stages whose cost follows the content, per role: the same on
    ** both roles unless the stage counts it by role (db_stage_work.by_role). */
    db_plan_work work_source[DB_MAX_STAGES][DB_ROLE_COUNT]; /* where work[][] comes from */
    double work[DB_MAX_STAGES][DB_ROLE_COUNT];       /* assumed of the page (0 with NONE and CALIBRATION) */
    double calib_work[DB_MAX_STAGES][DB_ROLE_COUNT]; /* the calibration pages' (the row's), 0 if none */
    int work_runs[DB_MAX_STAGES][DB_ROLE_COUNT];     /* with HISTORY: the runs it is the median of */
    char notes[DB_PLAN_MAX_NOTES][DB_PLAN_NOTE]; /* missing or stale entries, with the fix */
    int n_notes;
} db_plan_costs;

/* Starts a table for `algo` and `job` at width x height x channels: item bytes
** filled, both roles bound to unnamed devices, every stage cost UNKNOWN (NO_IMPL
** where the stage has no implementation), every copy UNKNOWN, no notes. */
void db_plan_costs_init(db_plan_costs *costs, const db_algo *algo, const db_job *job, int width, int height,
                        int channels);

/* Sets the predicted time of `stage` on `role` (KNOWN). */
void db_plan_costs_set_stage(db_plan_costs *costs, int stage, db_role role, double ms);

/* Sets the copy model of `role`'s device in direction `dir` (KNOWN). */
void db_plan_costs_set_transfer(db_plan_costs *costs, db_role role, db_transfer_dir dir,
                                const db_transfer_model *model);

/* Sets the host's staging copy model (KNOWN). */
void db_plan_costs_set_staging(db_plan_costs *costs, const db_transfer_model *model);

/* Sets the cost of a crossing into `role` from the other role. */
void db_plan_costs_set_crossing(db_plan_costs *costs, db_role role, double ms);

/* Sets the copy model into `role`'s device of what a stage on the other role,
** which shares host memory, has just written. */
void db_plan_costs_set_written(db_plan_costs *costs, db_role role, const db_transfer_model *model);

/* Marks `role`'s device as sharing host memory: its copies are maps that cost nothing. */
void db_plan_costs_set_shared(db_plan_costs *costs, db_role role);

/* Marks `role` as having no device: maps that use it are not runnable. */
void db_plan_costs_unbind(db_plan_costs *costs, db_role role);

/* Fills a table from `calib` for the roles of `ctx`: device keys of the bound
** devices, the variant word of `job` ("-" without variants) and each stage's
** kernel hash. Every missing or stale entry a runnable map could need becomes
** UNKNOWN with a note naming the stage, role and device and the fix. With a
** `history` (may be NULL), each calibrated stage's prediction is scaled by
** its measured / predicted ratio (db_history_factor), each item's copies by
** theirs (db_history_copy_factor), and a stage whose cost
** follows the content is predicted at the work of the last runs' pages
** (db_history_work) once there are enough of them, else at the calibration
** pages'.
** DB_ERR_USAGE when a stage's kernel hash cannot be computed. */
db_status db_plan_costs_from_calib(db_plan_costs *costs, const db_calib *calib, const db_history *history,
                                   const db_context *ctx, const db_algo *algo, const db_job *job, int width,
                                   int height, int channels);

/* As db_plan_costs_from_calib, reading the calibration file at `path` (NULL:
** db_calib_default_path) and the history file beside it. A missing file is an
** empty calibration or history; a malformed one fails with its name, line and
** fix (calib.h, history.h). */
db_status db_plan_costs_load(db_plan_costs *costs, const char *path, const db_context *ctx, const db_algo *algo,
                             const db_job *job, int width, int height, int channels);

/* Predicts the calibrated stages whose cost follows the content at the work
** a run of this page under `map` did, from its `report`: what each map costs
** for this page, once it is known. A stage that counts its work by role
** learns only the role it ran on; call again with another map's run for the
** other. */
void db_plan_costs_set_page_work(db_plan_costs *costs, const db_map *map, const db_report *report);

/* Writes one line per stage predicted at the page's work (db_plan_costs_set_page_work):
** "  <stage> predicted at this page's <w> passes (calibration pages <w>)", the
** stage named "<stage> on <role>" when it counts its work by role. */
void db_plan_print_page_work(const db_plan_costs *costs, FILE *f);

/* Writes each note as one line "<prefix><note>" to f. */
void db_plan_print_notes(const db_plan_costs *costs, FILE *f, const char *prefix);

/* Whether `map` can run under `costs`: every stage's role bound and implemented.
** When not, `why` (may be NULL) says which stage cannot. */
bool db_plan_runnable(const db_plan_costs *costs, const db_map *map, char *why, size_t why_size);

/* A copy the simulator predicts. */
typedef struct db_plan_copy {
    int item;
    db_role role;          /* the device whose transfer queue does it */
    db_transfer_dir dir;
    size_t bytes;          /* 0 on a shared-memory device (a map) */
    double start_ms, ms;
} db_plan_copy;

/* The most copies a run makes: each item once to the host and once to each role. */
enum { DB_PLAN_MAX_COPIES = DB_MAX_ITEMS * (1 + DB_ROLE_COUNT) };

/* A map's predicted run. Times are ms from the start of the run. */
typedef struct db_plan_sim {
    bool known;                      /* every cost it used is known; else the totals are NAN */
    bool copies_known;               /* every copy model it used is known; else transfer_ms is NAN */
    bool stage_known[DB_MAX_STAGES];
    double stage_start[DB_MAX_STAGES], stage_ms[DB_MAX_STAGES];
    db_plan_copy copies[DB_PLAN_MAX_COPIES];
    int n_copies;
    double transfer_ms;              /* the sum of the copies' times */
    double staging_ms;               /* the host's share: its copies of the input before and the output
                                     ** after, host_ms of the role the output comes from, and crossing_ms */
    double crossing_ms;              /* the crossings' costs: once per stage that reads what the other role
                                     ** wrote */
    double latency_ms;               /* when the output (and report) is on the host */
    double busy_ms[DB_ROLE_COUNT][2];/* per role: [0] compute queue, [1] transfer queue */
    double period_ms;                /* the busiest queue's busy time: a batch's time per image */
} db_plan_sim;

/* Simulates `map` (which must be runnable) under `costs`. */
void db_plan_simulate(const db_plan_costs *costs, const db_map *map, db_plan_sim *sim);

/* The value `objective` minimises: latency_ms or period_ms. */
double db_plan_score(const db_plan_sim *sim, db_plan_objective objective);

/* A chosen map. */
typedef struct db_plan_choice {
    int index;          /* its db_map_nth index */
    db_map map;
    db_plan_sim sim;
    bool fallback;      /* uncalibrated: the default map, see the cost table's notes */
} db_plan_choice;

/* Picks the best runnable map for `objective` (ties as the header says), or
** the default map when a needed cost is unknown. DB_ERR_DEVICE when no map can
** run (a stage implemented only on an unbound role), naming the stage and the fix. */
db_status db_plan_choose(const db_plan_costs *costs, db_plan_objective objective, db_plan_choice *choice);

/* The one line a fallback prints: how many entries are missing or stale, the
** first of them with its fix, and the default map used instead; --explain
** lists every note. */
void db_plan_fallback_line(const db_plan_costs *costs, const db_plan_choice *choice, char *buf, size_t size);

/* Prints every map of the algorithm in --map syntax with its predicted stage
** times, transfer time, latency and batch period; marks `ran` (the map that
** runs) with '*'; then the work assumed of stages whose cost follows the
** content, the planner's choices and the notes. */
void db_plan_explain(const db_plan_costs *costs, const db_map *ran, FILE *f);

/* Prints, for `map`, the predicted figures beside those measured in run `run`
** of `prof` (resolved): each stage's span, each copy, the wall time, and the
** work of stages predicted at the page's (db_plan_costs_set_page_work). */
void db_plan_explain_measured(const db_plan_costs *costs, const db_map *map, const db_profile *prof, int run,
                              FILE *f);

#endif
