/*
** docbin.h — the public interface of libdocbin: binarize document images on
** the machine's OpenCL devices.
**
** A program opens a context once (binding the devices takes most of a second
** with a GPU driver, a run a few milliseconds), then runs as many pages as it
** likes through it:
**
**     db_context *ctx;
**     db_context_open(NULL, NULL, &ctx);
**     db_binarize(ctx, "sauvola", "window=75 k=0.2", NULL, &page, &result);
**     db_context_close(ctx);
**
** Every algorithm is a graph of stages, and every stage runs on the `cpu` or
** the `gpu` role as a map says; every map gives the same image, bit for bit.
** Callers that give no map get `auto`: the map measured fastest on this
** machine (the wisdom file), else every stage on the GPU where one is bound,
** else on the CPU. It never fails for want of a GPU; a map that names a role
** with no device does, and says how to bind one.
**
** Conventions. Every call that can fail returns a db_status (DB_OK is 0) and
** leaves a one-line message for db_error_message() in the calling thread,
** naming what failed and the fix. Pixels are 8-bit; ink is black (0) and
** background white (255). Strings and input images are only read, and only
** during the call. Everything this header declares is the whole of the
** library's interface; names it does not declare are not exported.
**
** Threads. Calls on different contexts run in parallel. A context may be
** shared by threads: the calls that run on it (db_method_run, db_binarize)
** take turns through a lock inside it, since its devices' queues and buffer
** pools serve one run at a time; for runs that overlap, open one context per
** thread. A db_method is read-only once set up and may be shared.
**
** Compatibility. The soname's number changes whenever a declaration here
** changes in a way that breaks a compiled program (a structure's layout
** included); releases with the same soname only add.
*/
#ifndef DOCBIN_H
#define DOCBIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks what the shared library exports; everything else in it is hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define DB_API __attribute__((visibility("default")))
#else
#define DB_API
#endif

/* ---- Errors ----------------------------------------------------------------- */

/* Why a call failed. The tools exit with 0 for DB_OK, 1 for IO, FORMAT and
** NOMEM, 2 for USAGE and 3 for DEVICE and CL, so scripts and programs agree. */
typedef enum db_status {
    DB_OK = 0,
    DB_ERR_USAGE,   /* bad argument, parameter, map, algorithm or stage name */
    DB_ERR_IO,      /* a file could not be opened, read or written */
    DB_ERR_FORMAT,  /* a file or an image is not valid or not supported */
    DB_ERR_NOMEM,   /* an allocation failed or would exceed the memory limit */
    DB_ERR_DEVICE,  /* no device for a role, or a device lacks a needed feature */
    DB_ERR_CL       /* an OpenCL call failed (build errors include the build log) */
} db_status;

/* The calling thread's last error message ("" if none): one line that says
** what failed, for which file, parameter or device, and what to do. Each
** thread has its own, so a message is never another thread's. Valid until
** the thread's next failing call. */
DB_API const char *db_error_message(void);

/* The library's version, "MAJOR.MINOR.PATCH": what a program linked at run
** time actually got, which may be newer than the header it was built with. */
DB_API const char *db_version(void);

/* ---- Images ----------------------------------------------------------------- */

/* Pixels in memory, the caller's or the library's: `height` rows of
** width*channels bytes, `stride` bytes apart, so that a region of a larger
** buffer (or a row-padded one) needs no copy. Channels: 1 (gray) or 3 (R, G,
** B bytes per pixel). Colour becomes gray inside the run, by BT.601 unless
** the method's `gray` setting says qt. */
typedef struct db_image {
    int width;
    int height;
    int channels;   /* 1 = gray, 3 = RGB */
    size_t stride;  /* bytes from one row to the next, >= width * channels */
    uint8_t *data;
    /* Pixels per inch across and down, 0 when unknown: what lengths given in
    ** a unit (window=0.25in) are converted with, and what a saved file
    ** records. A run's result keeps its input's. */
    double dpi_x;
    double dpi_y;
} db_image;

/* Reads an image file (PNG, PNM, TIFF, JPEG or JPEG 2000, recognised by its
** contents; of a multi-page TIFF the first page) into a new image, gray or
** RGB, with its resolution, for programs that have no decoder of their own.
** Free it with db_image_free. */
DB_API db_status db_image_load(const char *path, db_image **image);

/* Writes a gray or RGB image as PNG, PNM or TIFF, chosen by the name's
** extension (.png, .pbm, .pgm, .ppm, .pnm, .tif, .tiff; a 1-bit TIFF is
** CCITT Group 4), with its resolution where the format can hold it,
** atomically: a failed write leaves no file. `bits` is 1 (a binary image:
** black iff the value is below 128) or 8. */
DB_API db_status db_image_save(const db_image *image, const char *path, int bits);

/* Frees an image from db_image_load, pixels and all; NULL is allowed. Never
** pass it an image whose pixels the caller owns. */
DB_API void db_image_free(db_image *image);

/* ---- Contexts and devices ----------------------------------------------------- */

/* The two roles a stage can run on. Each is bound to one OpenCL device. */
typedef enum db_role {
    DB_ROLE_CPU = 0,
    DB_ROLE_GPU = 1,
    DB_ROLE_COUNT
} db_role;

/* The bound devices, their compiled kernels, queues and buffer pools: what
** makes the second page fast. Opaque. */
typedef struct db_context db_context;

/* Discovers the OpenCL devices and binds the roles, as the tools'
** --cpu-device and --gpu-device do. A spec is "P:D" (platform and device
** index), "platform:type:name" substrings, or one word of a platform or device
** name ("portable" is PoCL, "nvidia"); NULL or "" takes DOCBIN_CPU_DEVICE or
** DOCBIN_GPU_DEVICE from the environment, else the default: the first CPU
** device, the GPU with the most compute units. A spec that matches no device
** or several fails; a default that finds none leaves its role unbound, which
** `auto` works around and an explicit map naming the role reports. */
DB_API db_status db_context_open(const char *cpu_spec, const char *gpu_spec, db_context **ctx);

/* Releases the devices, kernels and buffers of a context; NULL is allowed.
** No run may be in progress on it. */
DB_API void db_context_close(db_context *ctx);

/* One OpenCL device of the machine, as a context sees it. The strings belong
** to the context and live until it is closed. */
typedef struct db_device_desc {
    int platform_index;   /* "P:D", the spec that binds exactly this device */
    int device_index;
    const char *platform; /* e.g. "Portable Computing Language", "NVIDIA CUDA" */
    const char *name;
    const char *type;     /* "cpu", "gpu", "accelerator" or "other" */
    const char *driver;   /* the driver's version */
    int compute_units;
    uint64_t memory;      /* global memory, bytes */
    unsigned roles;       /* bit (1u << DB_ROLE_CPU), bit (1u << DB_ROLE_GPU): the roles bound to it */
} db_device_desc;

/* The number of OpenCL devices the context found, bound or not. */
DB_API int db_device_count(const db_context *ctx);

/* Describes device i (0 <= i < db_device_count), in the order of
** `docbin-run --list-devices`. */
DB_API db_status db_device_describe(const db_context *ctx, int i, db_device_desc *desc);

/* ---- Algorithms and their parameters ----------------------------------------- */

/* What values a parameter takes. */
typedef enum db_value_kind {
    DB_VALUE_REAL,     /* any number in [min, max] */
    DB_VALUE_INT,      /* an integer in [min, max] */
    DB_VALUE_ODD_INT,  /* an odd integer in [min, max] (window sides) */
    DB_VALUE_WORD      /* one of the words in `choices` */
} db_value_kind;

/* One parameter of an algorithm, as db_method_set takes it. */
typedef struct db_param_desc {
    const char *name;     /* e.g. "window" */
    const char *doc;      /* one line */
    db_value_kind kind;
    const char *def;      /* the default, as text: "75", "0.2", "exponential" */
    double min, max;      /* the range of a number (0 and 0 for a word) */
    const char *choices;  /* where only some values are allowed, them, space-separated ("8 16 32",
                          ** "exponential fifo"); NULL where the range alone decides */
} db_param_desc;

/* An algorithm: its stages (a map gives each a role, in this order), its
** parameters and its variants. Static storage: valid for the whole program. */
typedef struct db_algo_desc {
    const char *name;                /* what db_method_new takes, e.g. "sauvola" */
    const char *doc;                 /* one line */
    int n_stages;
    const char *const *stages;       /* stage names, in map order */
    const char *const *stage_roles;  /* per stage, the roles it can run on: "cpu,gpu", "cpu" or "gpu" */
    int n_params;
    const db_param_desc *params;
    int n_variants;                  /* values of the `variant` setting (0: it has none) */
    const char *const *variants;     /* the first is the default */
} db_algo_desc;

/* The number of algorithms. */
DB_API int db_algo_count(void);

/* Algorithm i (0 <= i < db_algo_count), in `docbin-run --list-algos` order;
** NULL when i is out of range. */
DB_API const db_algo_desc *db_algo_describe(int i);

/* ---- Methods: an algorithm with its settings --------------------------------- */

/* An algorithm with its parameter values, variant and gray rule: what a run
** does to a page, checked once and reused for any number of pages. Opaque. */
typedef struct db_method db_method;

/* Makes a method of algorithm `algo` ("otsu", "sauvola", "howe", ...; see
** db_algo_describe) with its defaults, then applies `settings` when not NULL:
** "NAME=VALUE" words separated by spaces, as db_method_set takes them, e.g.
** "window=75 k=0.2". Nothing is made when a setting is refused. */
DB_API db_status db_method_new(const char *algo, const char *settings, db_method **method);

/* Sets one parameter by name from text, checked against its kind and range
** (see db_param_desc). Two names work for every algorithm: "variant", one of
** the algorithm's variants (how a stage computes the same result), and
** "gray", "bt601" (the default) or "qt" (Qt's and Doxa's rule), how a colour
** page becomes gray. A refused value leaves the method as it was. */
DB_API db_status db_method_set(db_method *method, const char *name, const char *value);

/* Frees a method; NULL is allowed. */
DB_API void db_method_free(db_method *method);

/* ---- Running ---------------------------------------------------------------------- */

/* Enough entries for every stage of every algorithm. */
enum { DB_TIMES_MAX_STAGES = 8 };

/* One stage's device time in a run. */
typedef struct db_stage_time {
    const char *stage;  /* its name (static storage) */
    db_role role;       /* where it ran */
    double ms;          /* the device time of its kernels, summed */
} db_stage_time;

/* Where a run's time went, from OpenCL's profiling events: what a caller
** needs to choose a map or to see a GPU starved by copies. */
typedef struct db_times {
    char map[64];          /* the map that ran, one role per stage: "gpu,cpu,gpu" */
    const char *chosen_by; /* "given", "wisdom", "estimate" or "measure" */
    double wall_ms;        /* from the first command to the result on the host */
    int n_stages;
    db_stage_time stages[DB_TIMES_MAX_STAGES];
    double copy_ms;        /* device time of the copies between host and devices */
    uint64_t copy_bytes;   /* the bytes they moved (0 where a device shares host memory) */
} db_times;

/* Runs `method` on the page `in` (gray or RGB) and writes the result into
** `out`: the caller's pixels, 1 channel, of in's width and height, ink 0,
** background 255 (a halftone is 0 and 255 too). `out` may be `in` when `in`
** is gray. `map` is NULL or "auto" (the default: wisdom, else every stage on
** the GPU, else on the CPU), "measure" (time every map on this page, keep the
** fastest in the wisdom file) or an explicit map ("gpu,cpu,gpu", "stats=cpu",
** "cpu"), which is obeyed or refused, never replaced. `times` (may be NULL)
** receives the map and the per-stage times; asking costs a little. The
** context's lock is held for the run. */
DB_API db_status db_method_run(db_context *ctx, const db_method *method, const char *map, const db_image *in,
                               db_image *out, db_times *times);

/* The common case in one call: db_method_new(algo, settings), db_method_run
** with `map` and no times, db_method_free. */
DB_API db_status db_binarize(db_context *ctx, const char *algo, const char *settings, const char *map,
                             const db_image *in, db_image *out);

/* Runs `method` over many files, as `docbin-run --out-dir` does: decoding
** and encoding threads around device lanes on the devices `ctx` binds (the
** batch opens contexts of its own there, so `ctx` stays free), in bounded
** memory. `inputs` are image files, "@LIST" files of paths, or directories;
** each output is OUT_DIR/<input name without extension>.<format>, `format`
** "png" (NULL; 1-bit), "pbm", "pgm" (8-bit) or "pnm" (1-bit PBM), written
** atomically. A page that fails leaves no output and the others still run;
** the return is then the worst page's status with the first failure's
** message, and `*failed` (may be NULL) the number of failed pages. */
DB_API db_status db_method_run_files(db_context *ctx, const db_method *method, const char *map,
                                     const char *const *inputs, int n_inputs, const char *out_dir,
                                     const char *format, int *failed);

/* ---- Evaluation ----------------------------------------------------------------- */

/* The classification counts over all pixels, ink being the positive class. */
typedef struct db_counts {
    int64_t tp, tn, fp, fn;
} db_counts;

/* The DIBCO measures of a binarization against its ground truth. Percentages
** are x100, as DIBCO reports them. A value undefined for the pair is +inf or
** NaN as each field says. */
typedef struct db_metrics {
    db_counts counts;
    double accuracy;         /* (TP+TN)/N, percent */
    double precision, recall, fmeasure;                       /* percent; 0 when TP = 0 */
    int has_pseudo;          /* pseudo values computed (weights were available) */
    double pseudo_precision, pseudo_recall, pseudo_fmeasure;  /* percent; NaN without weights */
    double psnr;             /* dB; +inf for a perfect result */
    double drd;              /* NaN when NUBN = 0 */
    uint64_t drd_sum;        /* sum of DRD_k in units of 1e-6 (integer weight table) */
    int64_t nubn;            /* non-uniform complete 8x8 blocks of the GT */
    double nrm;              /* +inf when the GT is all white or all black */
    double mcc;              /* -1..1; 0 when the denominator is 0 */
} db_metrics;

/* Scores `result` against the ground truth `gt`: both gray, of one size,
** holding only 0 (ink) and 255 (background). With `pseudo` non-zero, the
** pseudo-metrics use DIBCO's weights generated from `gt` as its
** BinEvalWeights tool does (a few times the cost of the rest); with 0 they are
** skipped (NaN). The figures are exact integer counts and the same on every
** machine; `docbin-eval` prints the same. */
DB_API db_status db_evaluate(const db_image *gt, const db_image *result, int pseudo, db_metrics *metrics);

#ifdef __cplusplus
}
#endif

#endif
