/*
** stage.h — stages, data items and algorithms: the graphs the scheduler runs.
**
** A stage is a named, read-only descriptor (StarPU's codelet): the data items it
** reads and writes, and one implementation per role. An implementation enqueues
** OpenCL kernels on its device through the db_stage_run calls below; it may
** loop internally (several kernels), but never across stages. An algorithm is
** its stages in topological order, its data items and its parameters.
*/
#ifndef DB_STAGE_H
#define DB_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <CL/cl.h>
#include "runtime/device.h"
#include "runtime/image.h"

#define DB_MAX_STAGES 8
#define DB_MAX_ITEMS 16
#define DB_MAX_PORTS 4
#define DB_MAX_PARAMS 16
#define DB_MAX_SOURCES 4

/* How a data item's size follows from the input image. */
typedef enum db_item_shape {
    DB_ITEM_INPUT,   /* the decoded input image: width*height*channels bytes */
    DB_ITEM_PIXELS,  /* `elem_size` bytes per pixel */
    DB_ITEM_FIXED,   /* `elem_size` bytes, whatever the image */
    DB_ITEM_COMPUTED /* `size(job, width, height)` bytes, e.g. per block */
} db_item_shape;

struct db_job;

/* A data item of an algorithm: produced by one stage (or the input), read by others. */
typedef struct db_item {
    const char *name;
    db_item_shape shape;
    size_t elem_size;
    const char *doc;
    size_t (*size)(const struct db_job *job, int width, int height); /* DB_ITEM_COMPUTED */
} db_item;

/* Constraints on a parameter's value. */
typedef enum db_param_kind {
    DB_PARAM_REAL,    /* any value in [min, max] */
    DB_PARAM_INT,     /* an integer in [min, max] */
    DB_PARAM_ODD_INT  /* an odd integer in [min, max] (window sizes) */
} db_param_kind;

/* A tunable parameter, with its default and range (shown by --list-algos). */
typedef struct db_param {
    const char *name;
    db_param_kind kind;
    double def, min, max;
    const char *doc;
    const double *choices; /* when not NULL, the only values allowed */
    int n_choices;
    const char *const *names; /* when not NULL, the value is an index into these words */
    int n_names;
    /* The value does not change what a run costs (a threshold's weight), so
    ** the planner's wisdom leaves it out of its key. */
    bool cost_free;
    /* A length in pixels (a window, a block): it may be given in a physical
    ** unit too (window=1in), converted with each page's resolution. */
    bool length;
} db_param;

/* The unit a length parameter was given in. */
typedef enum db_unit { DB_UNIT_PX = 0, DB_UNIT_IN, DB_UNIT_MM, DB_UNIT_CM } db_unit;

#define DB_MAX_REPORT 8

/* A figure a run reports besides its image, read from the algorithm's report
** item (an array of int32, or of int64 when db_algo.report_wide is set): e.g.
** the iterations a loop inside a stage took, or a flow value. */
typedef struct db_report_field {
    const char *name;
    int index;            /* into the report item's values */
    const char *if_zero;  /* a warning to print when the value is 0, or NULL */
    int fatal;            /* a zero value fails the run with if_zero (host code out of memory) */
} db_report_field;

/* The report of one run: the algorithm's fields and their values. */
typedef struct db_report {
    int n;
    const db_report_field *fields;
    int64_t values[DB_MAX_REPORT];
} db_report;

typedef struct db_stage_run db_stage_run;

/* One implementation of a stage on one role: enqueues its work and returns DB_OK. */
typedef db_status (*db_stage_fn)(db_stage_run *run);

/* The data items a stage reads or writes: n indices into db_algo.items. */
typedef struct db_ports {
    int n;
    int item[DB_MAX_PORTS];
} db_ports;

/* Ports with their count computed: .in = DB_PORTS(GRAY, SUMS). */
#define DB_PORTS(...) {.n = DB_LEN(((int[]){__VA_ARGS__})), .item = {__VA_ARGS__}}

/* The number of elements of array `a`: counts in descriptors are computed, not typed. */
#define DB_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A stage: a named step of an algorithm. impl[role] == NULL means the stage
** cannot run on that role (the planner and map parser reject such maps). */
typedef struct db_stage {
    const char *name;
    const char *doc;
    db_ports in, out;
    db_stage_fn impl[DB_ROLE_COUNT];
    /* The cl/ files whose kernels the implementations enqueue (none for host
    ** code alone): db_stage_kernel refuses any other, and the planner's wisdom
    ** is keyed by a hash of these, so that changed kernels are measured anew. */
    const char *sources[DB_MAX_SOURCES];
} db_stage;

/* Consecutive stages that one implementation runs at once where a map puts
** them all on one role and the fused stage has an implementation there: an
** item between them is then never made (the local methods' 16 bytes of window
** sums a pixel), or their work shares launches (howe-auto's three chains).
** Maps that split them run the stages as declared. */
typedef struct db_fusion {
    int first, count;                   /* stages first .. first + count - 1 */
    db_stage stage;                     /* ports: what the stages read from before them, what later ones read */
    bool (*applies)(const struct db_job *job); /* NULL: wherever the roles agree */
} db_fusion;

/* An algorithm: a small DAG of stages over data items. Item `input` is the
** decoded image; item `output` is the 8-bit result returned to the caller. */
typedef struct db_algo {
    const char *name;
    const char *doc;
    const db_item *items;
    int n_items;
    int input;
    int output;
    const db_stage *stages; /* topological order */
    int n_stages;
    const db_fusion *fusion;     /* NULL: none */
    const db_param *params;
    int n_params;
    const char *const *variants; /* names of `--variant` choices; NULL if none */
    int n_variants;
    const char *variant_stage;   /* the stage the variants apply to */
    const db_report_field *report_fields; /* figures of the report item; NULL if none */
    int n_report_fields;
    int report_item;             /* the item holding them (when report_fields is set) */
    int report_wide;             /* the report item holds int64 values */
} db_algo;

/* Everything an invocation needs besides the image: parameter values (in the
** order of db_algo.params), the variant index, and the gray rule. */
typedef struct db_job {
    double params[DB_MAX_PARAMS];
    db_unit unit[DB_MAX_PARAMS]; /* of a length given in a physical unit, until db_job_resolve */
    int variant;
    db_gray_rule gray;
} db_job;

/* A map: the role of every stage, in stage order (DESIGN.md "Map"). */
typedef struct db_map {
    int n;
    db_role role[DB_MAX_STAGES];
} db_map;

/* --- calls for stage implementations --- */

/* The device this stage runs on. */
db_device *db_stage_device(db_stage_run *run);

/* The job's image size and channel count. */
int db_stage_width(const db_stage_run *run);
int db_stage_height(const db_stage_run *run);
int db_stage_channels(const db_stage_run *run);

/* The commands the stage has enqueued so far: the work of a stage that decides
** on the host how often to launch (the graph cut's push-relabel rounds). */
int db_stage_commands(const db_stage_run *run);

/* The job (parameters, variant, gray rule). */
const db_job *db_stage_job(const db_stage_run *run);

/* The device buffers of the stage's input and output ports, in the order of
** db_stage.in and db_stage.out. */
cl_mem db_stage_in(db_stage_run *run, int port);
cl_mem db_stage_out(db_stage_run *run, int port);

/* A device buffer private to this stage for this run (released after the run). */
cl_mem db_stage_scratch(db_stage_run *run, size_t bytes);

/* A read-only device buffer holding a copy of `bytes` from `src`, for values the
** host computes once (filter weights that need exp()); released after the run. */
cl_mem db_stage_constant(db_stage_run *run, const void *src, size_t bytes);

/* The kernel `name` of cl/`source` on this stage's device; `source` must be one
** of the stage's db_stage.sources. */
cl_kernel db_stage_kernel(db_stage_run *run, const char *source, const char *name);

/* Sets a kernel's arguments: `n` pairs of (size, pointer), as clSetKernelArg takes them. */
db_status db_stage_args(db_stage_run *run, cl_kernel k, int n, ...);

/* Reads `bytes` of `mem` at `offset` into `dst`, waiting for the stage's work so
** far. For stages whose loop count depends on the data (a convergence flag);
** it blocks the scheduling thread, so read a few bytes, rarely. */
db_status db_stage_read(db_stage_run *run, cl_mem mem, size_t offset, size_t bytes, void *dst);

/* Enqueues a write of `bytes` from `src` into `mem` at `offset`, in the stage's
** order. `src` must stay valid until the run ends: it is for tables the
** library keeps (a cached threshold array), not for the caller's stack. */
db_status db_stage_write(db_stage_run *run, cl_mem mem, size_t offset, size_t bytes, const void *src);

/* Host code of a stage: runs with ptrs[i] = the host address of the i-th buffer
** given to db_stage_host and `arg` = a copy of the bytes given there. */
typedef void (*db_host_fn)(void *const *ptrs, const void *arg);

/* Enqueues host code on the stage's device, for sequential algorithms where C
** on the CPU is the right tool (a max-flow, a threshold array). It runs in
** queue order like a kernel, on the cpu role's OpenCL device (as a native
** kernel: the device must be a CPU device that runs them, such as PoCL), on
** the buffers' own memory. `arg` (arg_size bytes, at most 256) is copied. */
db_status db_stage_host(db_stage_run *run, const char *name, db_host_fn fn, const void *arg, size_t arg_size,
                        const cl_mem *mems, int n_mems);

/* Makes output `out_port` the device buffer of input `in_port` instead of
** a copy of it, for a stage with nothing to do but copy (the gray stage on a
** gray page); a marker is the stage's one command. Only on a device that
** does not share host memory (elsewhere the copy is the host's and cheap);
** db_stage_can_forward says whether this one does. */
bool db_stage_can_forward(const db_stage_run *run);
db_status db_stage_forward(db_stage_run *run, int in_port, int out_port);

/* Enqueues `k` on the stage's compute queue over `global` (rounded up to a
** multiple of `local` when `local` is given; kernels check their bounds). The
** first launch of a stage waits for its inputs; the rest follow in queue order.
** Each launch is profiled under the stage's name. */
db_status db_stage_launch(db_stage_run *run, cl_kernel k, int dims, const size_t *global,
                          const size_t *local);

/* `local` for db_stage_launch when the kernel checks its own bounds and any
** work-group size will do: on CPU devices the runtime then launches groups of
** a fixed size (runtime/sched.c), elsewhere the driver chooses. PoCL
** compiles a kernel once per work-group size, and a size left to the driver
** follows the image's: every new page size would cost a compile, tens to
** hundreds of milliseconds a stage. */
extern const size_t db_any_group[3];

/* The per-role launch rule for a kernel that checks its own bounds and takes
** any work-group shape: `gpu_local` on the gpu role (NULL: the driver's
** choice), db_any_group on the cpu role. One implementation then serves both
** roles where they differ only in the shape. */
db_status db_stage_launch_any(db_stage_run *run, cl_kernel k, int dims, const size_t *global,
                              const size_t *gpu_local);

#endif
