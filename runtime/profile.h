/*
** profile.h — timing of every kernel and transfer from OpenCL profiling events.
**
** Host clocks around enqueue calls measure nothing (calls return at enqueue), so
** every command's start and end come from its event. Each device has its own
** clock; records are placed on the host's monotonic clock by the smallest
** observed difference between the host time just after an enqueue and the
** device's QUEUED timestamp. `--profile` prints a per-stage table, `--trace`
** writes a Chrome/Perfetto trace (chrome://tracing, ui.perfetto.dev).
*/
#ifndef DB_PROFILE_H
#define DB_PROFILE_H

#include <stdint.h>
#include <stdio.h>
#include <CL/cl.h>
#include "runtime/device.h"

/* What a profiled command did. */
typedef enum db_record_kind {
    DB_REC_KERNEL,    /* a stage's kernel */
    DB_REC_TO_DEVICE, /* host -> device copy (or map/unmap on shared memory) */
    DB_REC_TO_HOST    /* device -> host copy (or map/unmap on shared memory) */
} db_record_kind;

/* One profiled command. Times are host-monotonic nanoseconds. */
typedef struct db_record {
    db_record_kind kind;
    char stage[32];   /* the stage (kernels) or the item (transfers) */
    char what[64];    /* the kernel name, or "copy" / "map" */
    db_role role;
    char device[64];
    size_t bytes;     /* bytes moved (transfers) */
    uint64_t start_ns, end_ns;
    int run;          /* which db_run of the profile made it (0, 1, ...) */
    cl_event event;   /* pending until db_profile_resolve() */
    uint64_t host_ns; /* host clock right after the enqueue */
} db_record;

#define DB_PROFILE_MAX_RUNS 1024

/* The records of one or more runs of the same algorithm and map. */
typedef struct db_profile {
    db_record *rec;
    int n, cap;
    int resolved;       /* records [0, resolved) have their times */
    int runs;           /* completed runs */
    uint64_t wall_ns[DB_PROFILE_MAX_RUNS]; /* per run, from submission to result */
} db_profile;

/* An empty profile. */
db_profile *db_profile_new(void);

/* Frees a profile and releases pending events. NULL is allowed. */
void db_profile_free(db_profile *p);

/* Adds a pending record for `ev` (retained). `prof` may be NULL (no profiling). */
void db_profile_add(db_profile *prof, cl_event ev, db_record_kind kind, const char *stage,
                    const char *what, const db_device *dev, size_t bytes);

/* Reads the times of pending records; call once their events have completed. */
db_status db_profile_resolve(db_profile *prof);

/* Marks the end of a run that took `wall_ns`; later records belong to the next run. */
void db_profile_end_run(db_profile *prof, uint64_t wall_ns);

/* Prints the per-stage table: device, commands, time; transfers; wall time. With
** several runs, each figure is the median over the runs after the first (the
** first builds programs and warms caches), with the minimum and maximum. */
void db_profile_print(const db_profile *prof, FILE *f);

/* One stage's kernels, or one item's copies in one direction, in one run. */
typedef struct db_profile_row {
    db_record_kind kind;
    char stage[32];    /* the stage, or the item copied */
    db_role role;      /* the role of the device that ran it */
    int commands;
    double busy_ms;    /* the sum of its commands' device times */
    double span_ms;    /* first start to last end: how long it held its queue,
                       ** reads of convergence flags between launches included */
    size_t bytes;      /* bytes copied (0 for kernels and shared memory) */
} db_profile_row;

/* Fills rows[] with the rows of run `run` (0 = the first run), kernels first,
** then copies, each in order of first appearance; returns how many there are
** (rows beyond `max` are counted, not written). Resolve the profile first. */
int db_profile_run_rows(const db_profile *prof, int run, db_profile_row *rows, int max);

/* The wall time of run `run` in ms (submission to result); 0 when there is no such run. */
double db_profile_run_wall_ms(const db_profile *prof, int run);

/* Writes every record as a Chrome trace event file (JSON), atomically. */
db_status db_profile_write_trace(const db_profile *prof, const char *path);

#endif
