/*
** batch.h — many pages through one algorithm and map: input lists, output
** names, shards, and the pipelined batch engine.
**
** Users binarize millions of pages, usually as Slurm array tasks or GNU
** parallel jobs, so a batch is shardable and idempotent: inputs are numbered in
** a deterministic order, every output name derives from its input's name and is
** written atomically, and a rerun can skip the outputs that already exist.
**
** The engine keeps a bounded number of images in flight: codec threads decode
** inputs ahead and encode results, and device lanes run the graph. Each lane is
** a thread with its own db_context (its own cl_contexts and queues) on the
** chosen devices, so the clFinish that ends one lane's run never waits for
** another lane's work, and stages of consecutive images overlap on different
** devices (image k's graph cut on the cpu role while image k+1's Laplacian runs
** on the gpu role). A failed image is reported and leaves no output; the others
** still finish.
*/
#ifndef DB_BATCH_H
#define DB_BATCH_H

#include <stdbool.h>
#include <stdio.h>
#include "runtime/device.h"
#include "runtime/image.h"
#include "runtime/profile.h"
#include "runtime/stage.h"
#include "planner/plan.h"

/* ---- Input lists and output names ---------------------------------------- */

/* The inputs of a batch and, once named, their outputs; index i is input i. */
typedef struct db_batch_list {
    char **inputs;
    char **outputs;  /* NULL until db_batch_list_name_outputs() */
    char *out_dir;   /* where they go, likewise */
    int n, cap;
    int shard_k, shard_n; /* after db_batch_list_shard(): entry j was input (k-1) + j*n of the whole list */
} db_batch_list;

/* Adds the inputs one command-line argument stands for, in a fixed order:
**   "@FILE"   the paths listed in FILE, one per line, in file order; blank
**             lines and lines starting with '#' are skipped; relative paths
**             are relative to the current directory, not to FILE;
**   a directory  its files named *.png, *.pnm, *.pgm, *.ppm, *.pbm (any case),
**             sorted by name in byte order, not recursive; names starting with
**             '.' are skipped (hidden files, and the temporary files of
**             interrupted atomic writes);
**   anything else  one input, taken as given (a missing file fails when it is
**             read, like any unreadable input, without stopping the batch). */
db_status db_batch_list_add(db_batch_list *list, const char *arg);

/* Names every output: OUT_DIR/<input basename without extension>.<ext>
** (db_batch_run creates OUT_DIR and its parents if missing). Two inputs that
** would write the same output are a usage error naming both, and so is an
** output that would overwrite its own input. The checks cover the whole list,
** before sharding, so that every shard agrees. */
db_status db_batch_list_name_outputs(db_batch_list *list, const char *out_dir, const char *ext);

/* Keeps the inputs whose index i (0-based, in list order) satisfies
** i % n == k - 1, for 1 <= k <= n: shards 1..n of one list are disjoint and
** cover it, so N independent processes (a Slurm job array, GNU parallel) can
** share a batch with no coordination. */
db_status db_batch_list_shard(db_batch_list *list, int k, int n);

/* Parses a --shard value into the 1-based shard *k of *n that
** db_batch_list_shard takes:
**   "K/N"      shard K of N, counted from 1 (1 <= K <= N), as GNU parallel's seq;
**   "index=I/N"  the same shard counted from 0 (0 <= I < N): shard I+1 of N;
**   "auto"     index and count from a Slurm array task: SLURM_ARRAY_TASK_ID
**              within SLURM_ARRAY_TASK_MIN..MAX (or 0..SLURM_ARRAY_TASK_COUNT-1),
**              so --array=0-7 and --array=1-8 both give 8 shards; an array
**              with gaps (a step, a list) or of one task is refused;
**   "auto/N"   N shards, the index being SLURM_ARRAY_TASK_ID itself or
**              JOB_COMPLETION_INDEX (a Kubernetes indexed job), from 0: a task
**              submitted again alone takes the pages it took before.
** A missing, malformed or inconsistent variable is a usage error naming it,
** never a shard of all pages. */
db_status db_batch_shard_parse(const char *text, int *k, int *n);

/* Frees the names; the list is empty and reusable afterwards. */
void db_batch_list_free(db_batch_list *list);

/* ---- The engine ------------------------------------------------------------ */

/* What became of one image. */
typedef enum db_batch_state {
    DB_BATCH_OK = 0,
    DB_BATCH_FAILED,   /* unreadable input, failed run or failed write: no output */
    DB_BATCH_SKIPPED   /* --skip-existing and the output was already there */
} db_batch_state;

/* Stage rows kept per image for the log (a graph has at most 8 stages). */
#define DB_BATCH_MAX_ROWS 24

/* One finished image, handed to the report (log line, progress, callback). */
typedef struct db_batch_result {
    int index;              /* position in the whole list, before sharding */
    int page, pages;        /* of a file of several pages, or with split_pages: page (1-based) of pages; else 0 */
    double dpi;             /* the page's resolution across (0: unknown) */
    bool follows;           /* failed only because another page of its file did (no error line of its own) */
    const char *input;
    const char *output;
    db_batch_state state;
    db_status status;       /* DB_OK unless failed */
    char message[2048];     /* the error message when failed */
    int lane;               /* the device lane that ran it; -1 if none did */
    char map[64];           /* the map it ran under ("" when it did not run) */
    bool warm;              /* not its context's first image (which builds programs and fills pools) */
    int width, height;      /* the input's size, once decoded */
    int channels;           /* its channels, 1 (gray) or 3 (RGB), once decoded */
    double decode_ms, run_ms, encode_ms; /* each step alone */
    double wall_ms;         /* from claiming the input to the output in place, queues included */
    double start_ms;        /* when it was claimed (its decode began), from the batch's start */
    double run_start_ms;    /* when its run began, from the batch's start: a timeline of the lanes */
    int n_rows;             /* per-stage and per-copy device times, with profiling */
    db_profile_row rows[DB_BATCH_MAX_ROWS];
    db_report report;       /* the run's report (n 0 when failed or none) */
} db_batch_result;

/* Called once per image, from whichever thread finished it, never two at once. */
typedef void (*db_batch_callback)(const db_batch_result *result, void *user);

/* Whether a batch adds a lane that runs every stage on the cpu role beside
** the lanes of the GPU, so that both devices work at once on different pages. */
typedef enum db_cpu_lane {
    DB_CPU_LANE_AUTO = 0, /* with auto or measure, when the gpu role is a real GPU: it takes a page only
                          ** when it would finish it before the GPU lanes reach it (db_batch_cpu_takes) */
    DB_CPU_LANE_OFF,
    DB_CPU_LANE_ON        /* always, taking a page whenever it is free */
} db_cpu_lane;

/* The CPU lane's rule under DB_CPU_LANE_AUTO, asked only while the codec
** threads wait for room (else the codec bounds the batch and the CPU lane
** would take its cores), from measured times: with `ready`
** pages decoded and waiting, `left` pages in all still to run, the GPU lanes
** finishing a page every `gpu_period_ms` and the CPU lane taking `cpu_ms` per
** page (0: not yet measured), whether the CPU lane should take the next page:
** when the GPU lanes would not reach it sooner. Not yet measured, it takes one
** to learn only when at least two seconds of GPU work are left, so that
** learning cannot stretch a short batch much. */
bool db_batch_cpu_takes(int ready, int left, double gpu_period_ms, double cpu_ms);

/* What a batch runs and how much of it at once. Zero means the default. */
typedef struct db_batch_options {
    const db_algo *algo;
    db_plan_mode mode;      /* how each page's map is chosen (planner/plan.h) */
    const db_map *map;      /* with DB_PLAN_GIVEN */
    const char *wisdom;     /* the wisdom file (NULL: db_wisdom_default_path) */
    int measure_runs;       /* with DB_PLAN_MEASURE: timed runs of each map on the first page (0: 3) */
    FILE *explain;          /* how each new plan was made (db_plan_explain), or NULL */
    db_cpu_lane cpu_lane;
    db_file_format format;  /* of the outputs (DB_FILE_AUTO: from their names) */
    db_compression compression;
    bool split_pages;       /* a file a page: OUTPUT-0001.EXT ...; else the pages of an input go into one file */
    double dpi;             /* every page's resolution (0: as its file says) */
    const db_job *job;
    const char *cpu_spec;   /* as db_context_open(); NULL: environment, then default */
    const char *gpu_spec;   /* likewise; "all": one device lane per OpenCL GPU device */
    int in_flight;          /* images on the devices at once, over all lanes (0: 2 per lane) */
    int threads;            /* decoding and encoding threads (0: the online CPUs) */
    size_t max_bytes;       /* decoded images and their results held at once, in bytes, each counted
                            ** from its file's header before decoding (else as the largest so far);
                            ** one image at least (0: a quarter of db_memory_size()) */
    int bits;               /* output bits per pixel, 1 or 8 (0: 1) */
    bool skip_existing;     /* an existing output is complete (atomic writes): skip its input */
    bool codec_only;        /* decode, threshold at 128 on the host, encode: no device at all */
    bool serial;            /* one image at a time: decode, run, encode, then the next; the
                            ** baseline a batch's overlap is measured against */
    bool stage_times;       /* profile every run for the result's rows (the JSON log needs them) */
    const char *prog;       /* prefix of error lines, e.g. "docbin-run" */
    FILE *errors;           /* one line per failed image (NULL: none) */
    const char *log_json;   /* file of one JSON object per image and line ("-": stdout; NULL: none),
                            ** opened once the devices are bound and the output directory exists */
    FILE *progress;         /* a "\r[done/total] pages/s, failed" line, for a terminal (NULL: none) */
    db_batch_callback on_image; /* NULL: none */
    void *user;
} db_batch_options;

/* The whole batch's outcome. */
typedef struct db_batch_summary {
    int total, ok, failed, skipped;
    db_status worst;        /* the failure with the highest db_exit_status (DB_OK: none failed) */
    int lanes;              /* device lanes used (0 with codec_only), the CPU lane not counted */
    int cpu_pages;          /* pages the CPU lane ran */
    int in_flight, threads; /* the values used after defaults */
    double wall_s;
} db_batch_summary;

/* Runs every image of `list` (named outputs required). Devices are bound and
** the map checked against them before any file is touched, then the output
** directory is made; a failure there is the return value. Once images run, the return is DB_OK and per-image failures
** are counted in `summary` (worst status included) and reported as they happen. */
db_status db_batch_run(const db_batch_options *options, const db_batch_list *list,
                       db_batch_summary *summary);

/* The default device lanes' GPU specs for `gpu_spec`: "all" gives one "P:D"
** per OpenCL GPU device (an error when there is none: no silent fallback to the
** CPU), anything else one lane with that spec. `specs` holds up to `max`
** strings of 16 bytes; returns the count through *n. */
db_status db_batch_lanes(const char *gpu_spec, char (*specs)[16], int max, int *n);

/* Writes `r` as one JSON line: input, output, algorithm, map, status ("ok",
** "failed", "skipped"), error, lane, per-stage device times (span, ms),
** transfers, and the decode, run, encode and wall times in ms. */
void db_batch_result_json(const db_batch_result *r, const char *algo, FILE *f);

#endif
