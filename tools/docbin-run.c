/*
** docbin-run — binarize a document image with one algorithm under one map.
** Argument parsing and calls into libdocbin; no algorithm code lives here.
*/
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "runtime/docbin.h"

/* Exit codes (db_exit_status), documented in --help and README.md. */
enum exit_code {
    EXIT_OK = 0,
    EXIT_USAGE = 2   /* bad arguments: options, algorithm, parameter, map */
};

static const char usage_text[] =
    "usage: docbin-run --algo NAME [options] INPUT -o OUTPUT\n"
    "       docbin-run --algo NAME [options] --sample -o OUTPUT\n"
    "       docbin-run --algo NAME [options] --out-dir DIR INPUT|@LIST|DIRECTORY...\n"
    "       docbin-run --list-algos | --list-devices | --write-sample FILE | --help | --version\n"
    "\n"
    "Binarizes a document image (PNG or PNM; ink = black), or halftones a picture (dbs),\n"
    "with one algorithm whose stages run on the cpu and gpu OpenCL roles as the map says.\n"
    "\n"
    "  -a, --algo NAME         otsu, niblack, sauvola, nick, wolf, hbk, howe, dbs (--list-algos)\n"
    "  -m, --map MAP           gpu,cpu,gpu (one role per stage) | stats=cpu | cpu | gpu | auto\n"
    "                          default: $DOCBIN_MAP, else gpu for every stage; auto: the map with\n"
    "                          the least predicted latency (a batch: the highest throughput) from\n"
    "                          this host's calibration file\n"
    "                          (docbin-bench --calibrate); uncalibrated, the default map and a note\n"
    "      --calib FILE        the calibration file (default $DOCBIN_PERF_DIR/<host>.calib)\n"
    "      --explain           print every map's predicted stage, transfer and total times, the\n"
    "                          map that runs marked, then its measured times beside the predicted\n"
    "                          ones (a batch: the predicted table, for pages of its first input)\n"
    "      --history           add the measured stage times of warm runs (--repeat's runs after\n"
    "                          the first; a batch's pages after the first when each device runs\n"
    "                          one page at a time: --in-flight 1 or --serial) to the history\n"
    "                          beside the calibration file (FILE.history), which --map auto uses\n"
    "                          to correct the calibration for real pages (default with --map auto;\n"
    "                          nothing is recorded while the calibration file does not exist)\n"
    "      --no-history        record nothing\n"
    "  -p, --param NAME=VALUE  set a parameter (repeatable), e.g. --param window=25 --param k=0.1\n"
    "      --variant NAME      stats variant: sliding (default), global, global-shared, shared\n"
    "      --gray RULE         colour to gray: bt601 (default) or qt ((11r+16g+5b)/32)\n"
    "  -o, --output FILE       .png or .pnm (1-bit unless --depth 8), .pbm (1-bit), .pgm (8-bit)\n"
    "      --depth 1|8         bits per pixel of the output (default 1)\n"
    "      --sample            use the built-in sample page as input (no download needed)\n"
    "      --write-sample FILE write the built-in sample page itself\n"
    "      --cpu-device SPEC   bind the cpu role (default $DOCBIN_CPU_DEVICE, else the first CPU)\n"
    "      --gpu-device SPEC   bind the gpu role (default $DOCBIN_GPU_DEVICE, else the largest GPU)\n"
    "                          SPEC: P:D indices, platform:type:name substrings, or a word of a\n"
    "                          platform or device name, e.g. portable (PoCL) or nvidia\n"
    "      --sample-size WxH   size of the sample page (default 1240x1754, A4 at 150 dpi)\n"
    "      --profile           print per-stage and per-transfer times (OpenCL profiling events)\n"
    "      --repeat N          run N times; --profile then shows medians of runs 2..N\n"
    "      --trace FILE.json   write a Chrome/Perfetto timeline of every kernel and transfer\n"
    "      --list-algos        stages, roles, parameters, defaults and variants of each algorithm\n"
    "      --list-devices      OpenCL devices (like clinfo -l) and the roles bound to them\n"
    "\n"
    "Batch (many inputs; each output is DIR/<input name without extension>.<format>):\n"
    "      --out-dir DIR       write the outputs here (created if missing); needed for several inputs\n"
    "                          INPUT: an image; @LIST: a file of paths, one per line (# comments,\n"
    "                          blank lines skipped; relative to the current directory); DIRECTORY:\n"
    "                          its .png/.pnm/.pgm/.ppm/.pbm files sorted by name, not recursive\n"
    "      --format F          png (default), pnm, pgm (8-bit) or pbm (1-bit)\n"
    "      --shard K/N         take only inputs i (0-based, in the order above) with i % N == K-1;\n"
    "                          the N shards are disjoint and cover all (Slurm arrays, GNU parallel)\n"
    "      --skip-existing     skip an input whose output exists (outputs are written atomically,\n"
    "                          so an existing one is complete); reruns finish an interrupted batch\n"
    "      --in-flight N       images on the devices at once (default 2 per device lane, at most 64\n"
    "                          per lane): stages of consecutive images overlap on different devices\n"
    "      --threads N         decoding and encoding threads (default: the online CPUs)\n"
    "      --max-memory SIZE   decoded pages and results held at once, e.g. 8G or 512M (default: a\n"
    "                          quarter of the memory, or of the cgroup's limit in a Slurm job)\n"
    "      --gpu-device all    one device lane per OpenCL GPU; images spread over them\n"
    "      --log-json FILE     one JSON object per image and line (- for stdout): input, output,\n"
    "                          map, status ok/failed/skipped, error, per-stage ms, wall ms\n"
    "      --codec-only        no device: decode, threshold at 128 (gray) on the host, encode; a\n"
    "                          measuring aid, the codec bound of batch throughput\n"
    "      --serial            one image at a time: decode, run, encode, then the next (one thread,\n"
    "                          no overlap); the baseline a batch's throughput is measured against\n"
    "      A progress line is shown on stderr when it is a terminal. A failed image is reported\n"
    "      (\"docbin-run: FILE: reason\"), leaves no output, and the others still finish.\n"
    "\n"
    "Environment: DOCBIN_CPU_DEVICE, DOCBIN_GPU_DEVICE, DOCBIN_MAP, DOCBIN_PERF_DIR (calibration),\n"
    "DOCBIN_CACHE_DIR (kernel binaries; 'off' disables), DOCBIN_KERNEL_DIR (load cl/*.cl from disk),\n"
    "DOCBIN_PUSHRELABEL, POCL_CPU_MAX_CU_COUNT (PoCL >= 4; POCL_MAX_PTHREAD_COUNT before), POCL_CACHE_DIR,\n"
    "CUDA_VISIBLE_DEVICES.\n"
    "\n"
    "Exit status: 0 success; 1 an input could not be read or the output written;\n"
    "2 bad arguments (option, algorithm, parameter, variant, map); 3 no device for a\n"
    "mapped role, or an OpenCL failure. On failure no output file is created.\n"
    "In a batch, the status is that of the worst failed image (3 over 2 over 1; 2 when a run\n"
    "refuses its job, e.g. a bad DOCBIN_PUSHRELABEL), 0 if none failed.\n";

static int fail(db_status st)
{
    fprintf(stderr, "docbin-run: %s\n", db_error_message());
    return db_exit_status(st);
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "docbin-run: %s (see docbin-run --help)\n", msg);
    return EXIT_USAGE;
}

/* --map auto and --explain: the planner's costs for pages like `in`, the choice
** for `objective` (one image: latency; a batch: throughput), the table. */
static db_status plan_map(db_context *ctx, const db_algo *algo, const db_job *job, const db_image *in,
                          const char *calib_path, int automap, int explain, db_plan_objective objective, db_map *map,
                          db_plan_costs **costs)
{
    *costs = malloc(sizeof **costs);
    if (!*costs)
        return db_fail(DB_ERR_NOMEM, "out of memory for the planner's cost table");
    db_status st = db_plan_costs_load(*costs, calib_path, ctx, algo, job, in->width, in->height, in->channels);
    if (st == DB_OK && automap) {
        db_plan_choice choice;
        if ((st = db_plan_choose(*costs, objective, &choice)) == DB_OK) {
            *map = choice.map;
            if (choice.fallback && !explain) {
                char line[1024];
                db_plan_fallback_line(*costs, &choice, line, sizeof line);
                fprintf(stderr, "docbin-run: note: %s\n", line);
            }
        }
    }
    if (st == DB_OK && explain)
        db_plan_explain(*costs, map, stderr);
    return st;
}

enum long_only {
    OPT_VARIANT = 256, OPT_GRAY, OPT_DEPTH, OPT_SAMPLE, OPT_WRITE_SAMPLE, OPT_CPU_DEVICE, OPT_GPU_DEVICE,
    OPT_PROFILE, OPT_TRACE, OPT_LIST_ALGOS, OPT_LIST_DEVICES, OPT_VERSION, OPT_REPEAT, OPT_SAMPLE_SIZE,
    OPT_EXPLAIN, OPT_CALIB, OPT_HISTORY, OPT_NO_HISTORY
};

/* The batch form's options (a range of their own). */
enum batch_only {
    OPT_OUT_DIR = 512, OPT_FORMAT, OPT_SHARD, OPT_SKIP_EXISTING, OPT_IN_FLIGHT, OPT_THREADS, OPT_LOG_JSON,
    OPT_CODEC_ONLY, OPT_SERIAL, OPT_MAX_MEMORY
};

/* The batch options, which only the batch form takes. */
typedef struct batch_args {
    const char *out_dir, *format, *log_json;
    int shard_k, shard_n, in_flight, threads;
    size_t max_bytes;
    bool skip_existing, codec_only, serial;
    bool automap, explain;    /* --map auto, --explain: the planner picks the batch's map */
    bool history;             /* record every image's stage times (--history, or --map auto) */
    const char *calib_path;
} batch_args;

/* What a run's history rows are keyed and filed by. */
typedef struct history_args {
    const char *calib_path;   /* NULL: this host's default calibration file */
    const db_algo *algo;
    const db_job *job;
    const db_map *map;
    bool warned;
} history_args;

/* Appends one run's stage times (rows of db_profile_run_rows) to the history,
** when the calibration file it corrects exists. A failure is one warning, not a
** failed image: history is a hint. */
static void record_history(history_args *h, const db_profile_row *rows, int n_rows, const char (*keys)[17],
                           int width, int height, int channels, const db_report *report)
{
    char calib[4096], path[4096 + 16];
    db_history_run runs[DB_MAX_STAGES];
    db_history_copy copies[DB_HISTORY_MAX_COPIES];
    int n = 0, n_copies = 0;
    db_status st = h->calib_path ? DB_OK : db_calib_default_path(calib, sizeof calib);
    const char *calib_path = h->calib_path ? h->calib_path : calib;
    if (st == DB_OK && access(calib_path, F_OK) != 0)
        return;
    if (st == DB_OK)
        st = db_history_path(calib_path, path, sizeof path);
    if (st == DB_OK)
        st = db_history_rows(rows, n_rows, keys, h->algo, h->job, h->map, width, height, channels, report, runs,
                             &n);
    if (st == DB_OK)
        db_history_copy_rows(rows, n_rows, keys, h->algo, copies, &n_copies);
    if (st == DB_OK && n + n_copies > 0)
        st = db_history_append(path, runs, n, copies, n_copies);
    if (st != DB_OK && !h->warned) {
        fprintf(stderr, "docbin-run: warning: the run's stage and copy times were not added to the history: %s\n",
                db_error_message());
        h->warned = true;
    }
}

/* The batch engine's per-image callback when recording history. */
static void history_callback(const db_batch_result *r, void *user)
{
    /* Times measured while other pages share the devices are not the stage's cost. */
    if (r->state == DB_BATCH_OK && r->warm && !r->shared && r->n_rows > 0)
        record_history(user, r->rows, r->n_rows, r->device, r->width, r->height, r->channels, &r->report);
}

/* Parses a count for `option` from 1 to `max`; 0 on error. */
static int parse_count(const char *text, int max)
{
    char *end;
    long n = strtol(text, &end, 10);
    return *end || end == text || n < 1 || n > max ? 0 : (int)n;
}

/* Parses a size such as 512M or 8G (powers of 1024); 0 on error. */
static size_t parse_bytes(const char *text)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || end == text || errno)
        return 0;
    const char *units = "KMGT", *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (*end && (!u || end[1]))
        return 0;
    for (int shift = u ? 10 * (int)(u - units + 1) : 0; shift > 0; shift -= 10) {
        if (n > SIZE_MAX >> 10)
            return 0;
        n <<= 10;
    }
    return n > SIZE_MAX ? 0 : (size_t)n;
}

/* --map auto and --explain for a batch: with auto, the map of the highest
** predicted throughput for pages of the first readable input's size, on the
** first lane's devices; with --explain, the predicted table (a batch has no
** single run to put measured figures beside). */
static db_status batch_plan(const batch_args *ba, const db_batch_list *list, const db_algo *algo, const db_job *job,
                            const char *cpu_spec, const char *gpu_spec, db_map *map)
{
    char lanes[64][16];
    int n_lanes = 0;
    db_status st = db_batch_lanes(gpu_spec, lanes, 64, &n_lanes);
    db_context *ctx = NULL;
    if (st == DB_OK)
        st = db_context_open(cpu_spec, gpu_spec && !strcmp(gpu_spec, "all") ? lanes[0] : gpu_spec, &ctx);
    if (st != DB_OK)
        return st;
    db_image *first = NULL;
    for (int i = 0; i < list->n && !first; i++)
        first = db_image_read(list->inputs[i]);
    db_error_clear();
    if (!first) {
        /* Nothing readable: each input fails in the batch with its own message. */
        if (ba->automap)
            db_map_default(algo, ctx->role[DB_ROLE_GPU] != NULL, map);
        db_context_close(ctx);
        return DB_OK;
    }
    db_plan_costs *costs = NULL;
    st = plan_map(ctx, algo, job, first, ba->calib_path, ba->automap, ba->explain, DB_PLAN_THROUGHPUT, map, &costs);
    free(costs);
    db_image_free(first);
    db_context_close(ctx);
    return st;
}

/* Runs the batch form: lists, names and shards the inputs, then hands them to
** the library's batch engine. Everything is checked before any image is read. */
static int run_batch(const batch_args *ba, char **args, int n_args, const db_algo *algo, const db_map *map,
                     const db_job *job, int depth, const char *cpu_spec, const char *gpu_spec)
{
    const char *ext = ba->format ? ba->format : "png";
    int bits = !strcmp(ext, "pgm") ? 8 : !strcmp(ext, "pbm") ? 1 : depth;
    if (!strcmp(ext, "pbm") && depth == 8)
        return usage_error("--format pbm holds 1-bit images; drop --depth 8 or use --format pgm");
    db_batch_list list = {0};
    db_status st = DB_OK;
    for (int i = 0; i < n_args && st == DB_OK; i++)
        st = db_batch_list_add(&list, args[i]);
    if (st == DB_OK && list.n == 0) {
        db_batch_list_free(&list);
        return usage_error("no input images found (a directory gives its .png, .pnm, .pgm, .ppm and .pbm "
                           "files; a list file one path per line)");
    }
    if (st == DB_OK)
        st = db_batch_list_name_outputs(&list, ba->out_dir, ext);
    if (st == DB_OK && ba->shard_n)
        st = db_batch_list_shard(&list, ba->shard_k, ba->shard_n);
    db_map planned;
    if (map)
        planned = *map;
    if (st == DB_OK && (ba->automap || ba->explain) &&
        (st = batch_plan(ba, &list, algo, job, cpu_spec, gpu_spec, &planned)) == DB_OK)
        map = &planned;
    if (st != DB_OK) {
        db_batch_list_free(&list);
        return fail(st);
    }
    history_args hist = {.calib_path = ba->calib_path, .algo = algo, .job = job, .map = map};
    bool history = ba->history && !ba->codec_only;
    db_batch_options opt = {
        .algo = algo, .map = map, .job = job, .cpu_spec = cpu_spec, .gpu_spec = gpu_spec,
        .in_flight = ba->in_flight, .threads = ba->threads, .max_bytes = ba->max_bytes, .bits = bits,
        .skip_existing = ba->skip_existing, .codec_only = ba->codec_only, .serial = ba->serial,
        .stage_times = ba->log_json != NULL || history,
        .prog = "docbin-run", .errors = stderr, .log_json = ba->log_json,
        .progress = isatty(STDERR_FILENO) ? stderr : NULL,
        .on_image = history ? history_callback : NULL, .user = &hist,
    };
    db_batch_summary sum;
    st = db_batch_run(&opt, &list, &sum);
    db_batch_list_free(&list);
    return st != DB_OK ? fail(st) : db_exit_status(sum.worst);
}

#define MAX_SETTINGS 32

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"algo", required_argument, NULL, 'a'},
        {"map", required_argument, NULL, 'm'},
        {"param", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {"variant", required_argument, NULL, OPT_VARIANT},
        {"gray", required_argument, NULL, OPT_GRAY},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"sample", no_argument, NULL, OPT_SAMPLE},
        {"write-sample", required_argument, NULL, OPT_WRITE_SAMPLE},
        {"cpu-device", required_argument, NULL, OPT_CPU_DEVICE},
        {"gpu-device", required_argument, NULL, OPT_GPU_DEVICE},
        {"profile", no_argument, NULL, OPT_PROFILE},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"list-algos", no_argument, NULL, OPT_LIST_ALGOS},
        {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
        {"version", no_argument, NULL, OPT_VERSION},
        {"repeat", required_argument, NULL, OPT_REPEAT},
        {"sample-size", required_argument, NULL, OPT_SAMPLE_SIZE},
        {"out-dir", required_argument, NULL, OPT_OUT_DIR},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"skip-existing", no_argument, NULL, OPT_SKIP_EXISTING},
        {"in-flight", required_argument, NULL, OPT_IN_FLIGHT},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"log-json", required_argument, NULL, OPT_LOG_JSON},
        {"codec-only", no_argument, NULL, OPT_CODEC_ONLY},
        {"serial", no_argument, NULL, OPT_SERIAL},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"calib", required_argument, NULL, OPT_CALIB},
        {"history", no_argument, NULL, OPT_HISTORY},
        {"no-history", no_argument, NULL, OPT_NO_HISTORY},
        {NULL, 0, NULL, 0},
    };
    const char *algo_name = NULL, *map_text = getenv("DOCBIN_MAP"), *output = NULL, *variant = NULL;
    const char *cpu_spec = NULL, *gpu_spec = NULL, *trace = NULL, *write_sample = NULL;
    const char *settings[MAX_SETTINGS], *calib_path = NULL;
    int explain = 0, history = -1; /* -1: record with --map auto only */
    int n_settings = 0, depth = 1, sample = 0, profile = 0, list_algos = 0, list_devices = 0, repeat = 1;
    int sample_w = 1240, sample_h = 1754; /* A4 at 150 dpi */
    db_gray_rule gray = DB_GRAY_BT601;
    batch_args batch = {0};

    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":a:m:p:o:h", options, NULL)) != -1) {
        switch (c) {
        case 'a': algo_name = optarg; break;
        case 'm': map_text = optarg; break;
        case 'p':
            if (n_settings == MAX_SETTINGS)
                return usage_error("too many --param options");
            settings[n_settings++] = optarg;
            break;
        case 'o': output = optarg; break;
        case 'h': fputs(usage_text, stdout); return EXIT_OK;
        case OPT_VARIANT: variant = optarg; break;
        case OPT_GRAY:
            if (!strcmp(optarg, "bt601"))
                gray = DB_GRAY_BT601;
            else if (!strcmp(optarg, "qt"))
                gray = DB_GRAY_QT;
            else
                return usage_error("--gray takes bt601 or qt");
            break;
        case OPT_DEPTH:
            if (strcmp(optarg, "1") && strcmp(optarg, "8"))
                return usage_error("--depth takes 1 or 8");
            depth = atoi(optarg);
            break;
        case OPT_SAMPLE: sample = 1; break;
        case OPT_WRITE_SAMPLE: write_sample = optarg; break;
        case OPT_CPU_DEVICE: cpu_spec = optarg; break;
        case OPT_GPU_DEVICE: gpu_spec = optarg; break;
        case OPT_PROFILE: profile = 1; break;
        case OPT_TRACE: trace = optarg; break;
        case OPT_LIST_ALGOS: list_algos = 1; break;
        case OPT_LIST_DEVICES: list_devices = 1; break;
        case OPT_VERSION: printf("docbin-run %s\n", db_version()); return EXIT_OK;
        case OPT_REPEAT: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > DB_PROFILE_MAX_RUNS)
                return usage_error("--repeat takes a count from 1 to 1024");
            repeat = (int)n;
            break;
        }
        case OPT_SAMPLE_SIZE:
            if (sscanf(optarg, "%dx%d", &sample_w, &sample_h) != 2 || sample_w < 1 || sample_h < 1)
                return usage_error("--sample-size takes WIDTHxHEIGHT, e.g. 2516x3272 (A4 at 300 dpi)");
            break;
        case OPT_OUT_DIR: batch.out_dir = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "png") && strcmp(optarg, "pnm") && strcmp(optarg, "pgm") && strcmp(optarg, "pbm"))
                return usage_error("--format takes png, pnm, pgm or pbm");
            batch.format = optarg;
            break;
        case OPT_SHARD: {
            char extra;
            if (sscanf(optarg, "%d/%d%c", &batch.shard_k, &batch.shard_n, &extra) != 2 || batch.shard_n < 1 ||
                batch.shard_k < 1 || batch.shard_k > batch.shard_n)
                return usage_error("--shard takes K/N with 1 <= K <= N, e.g. --shard 3/8");
            break;
        }
        case OPT_SKIP_EXISTING: batch.skip_existing = true; break;
        case OPT_IN_FLIGHT:
            if (!(batch.in_flight = parse_count(optarg, 1024)))
                return usage_error("--in-flight takes a count from 1 to 1024");
            break;
        case OPT_THREADS:
            if (!(batch.threads = parse_count(optarg, 4096)))
                return usage_error("--threads takes a count from 1 to 4096");
            break;
        case OPT_MAX_MEMORY:
            if (!(batch.max_bytes = parse_bytes(optarg)))
                return usage_error("--max-memory takes a size in bytes with an optional K, M, G or T "
                                   "(powers of 1024), e.g. 8G");
            break;
        case OPT_LOG_JSON: batch.log_json = optarg; break;
        case OPT_CODEC_ONLY: batch.codec_only = true; break;
        case OPT_SERIAL: batch.serial = true; break;
        case OPT_EXPLAIN: explain = 1; break;
        case OPT_CALIB: calib_path = optarg; break;
        case OPT_HISTORY: history = 1; break;
        case OPT_NO_HISTORY: history = 0; break;
        case ':': {
            char msg[128];
            snprintf(msg, sizeof msg, "option %s needs a value", argv[optind - 1]);
            return usage_error(msg);
        }
        default: {
            char msg[128];
            snprintf(msg, sizeof msg, "unknown option %s", argv[optind - 1]);
            return usage_error(msg);
        }
        }
    }

    if (list_algos) {
        for (int i = 0; i < db_algo_count(); i++) {
            db_algo_print(db_algo_at(i), stdout);
            putchar('\n');
        }
        return EXIT_OK;
    }
    if (write_sample) {
        db_image *page = db_sample_page(sample_w, sample_h, 1);
        if (!page)
            return fail(db_error_status());
        db_status st = db_image_write(page, write_sample, DB_FILE_AUTO, 8);
        db_image_free(page);
        return st == DB_OK ? EXIT_OK : fail(st);
    }
    db_context *ctx = NULL;
    if (list_devices) {
        db_status st = db_context_open(cpu_spec, gpu_spec, &ctx);
        if (st != DB_OK)
            return fail(st);
        db_context_print_devices(ctx, stdout);
        db_context_close(ctx);
        return EXIT_OK;
    }

    /* Everything about the request is checked before any device or file is touched. */
    const char *input = optind < argc ? argv[optind] : NULL;
    bool batch_form = batch.out_dir != NULL;
    if (!batch_form && (batch.format || batch.shard_n || batch.skip_existing || batch.in_flight ||
                        batch.threads || batch.max_bytes || batch.log_json || batch.codec_only || batch.serial))
        return usage_error("--format, --shard, --skip-existing, --in-flight, --threads, --max-memory, --log-json, "
                           "--codec-only and --serial belong to the batch form; give --out-dir DIR");
    if (batch.serial && (batch.in_flight || batch.threads))
        return usage_error("--serial runs one image at a time on one thread; drop --in-flight and --threads");
    if (batch_form && (output || sample || profile || trace || repeat > 1))
        return usage_error("--out-dir runs a batch; -o, --sample, --profile, --trace and --repeat are for "
                           "one image");
    if (batch_form && !input)
        return usage_error("no inputs given: name images, @LIST files or directories");
    if (!batch_form && gpu_spec && !strcmp(gpu_spec, "all"))
        return usage_error("--gpu-device all spreads a batch over the GPUs; give --out-dir DIR");
    if (!algo_name && !batch.codec_only)
        return usage_error("--algo is required");
    if (!batch_form && optind + 1 < argc)
        return usage_error("more than one input given; several inputs need --out-dir DIR "
                           "(one INPUT takes -o OUTPUT)");
    if (!batch_form && input && input[0] == '@')
        return usage_error("a list of inputs needs --out-dir DIR");
    if (!input && !sample)
        return usage_error("no input image given (or use --sample for the built-in page)");
    if (input && sample)
        return usage_error("give either an INPUT or --sample, not both");
    if (!output && !batch_form)
        return usage_error("no output given; use -o OUTPUT");
    if (batch.codec_only && !algo_name) {
        db_job gray_only = {.gray = gray};
        return run_batch(&batch, argv + optind, argc - optind, NULL, NULL, &gray_only, depth, cpu_spec, gpu_spec);
    }
    const db_algo *algo = db_algo_find(algo_name);
    if (!algo)
        return fail(db_error_status());
    db_job job;
    db_job_defaults(algo, &job);
    job.gray = gray;
    for (int i = 0; i < n_settings; i++) {
        db_status st = db_job_set_text(algo, &job, settings[i]);
        if (st != DB_OK)
            return fail(st);
    }
    if (variant) {
        db_status st = db_job_set_variant(algo, &job, variant);
        if (st != DB_OK)
            return fail(st);
    }
    db_map map;
    /* auto is chosen once the image's size is known. */
    int automap = db_map_is_auto(map_text);
    db_status st = automap ? DB_OK : db_map_parse(algo, map_text && map_text[0] ? map_text : "gpu", &map);
    if (st != DB_OK)
        return fail(st);
    batch.automap = automap;
    batch.explain = explain;
    batch.calib_path = calib_path;
    if (history < 0)
        history = automap;
    batch.history = history;
    if (batch_form)
        return run_batch(&batch, argv + optind, argc - optind, algo, &map, &job, depth, cpu_spec, gpu_spec);

    if ((st = db_context_open(cpu_spec, gpu_spec, &ctx)) != DB_OK)
        return fail(st);
    for (int s = 0; !automap && s < map.n; s++)
        if (!db_context_device(ctx, map.role[s])) {
            st = db_fail(DB_ERR_DEVICE, "stage %s is mapped to %s, but %s", algo->stages[s].name,
                         db_role_name(map.role[s]), db_error_message());
            db_context_close(ctx);
            return fail(st);
        }
    db_image *in = sample ? db_sample_page(sample_w, sample_h, 1) : db_image_read(input);
    if (!in) {
        st = db_error_status();
        db_context_close(ctx);
        return fail(st);
    }
    db_plan_costs *costs = NULL;
    if ((automap || explain) &&
        (st = plan_map(ctx, algo, &job, in, calib_path, automap, explain, DB_PLAN_LATENCY, &map, &costs)) != DB_OK) {
        free(costs);
        db_image_free(in);
        db_context_close(ctx);
        return fail(st);
    }
    db_profile *prof = profile || trace || explain || history ? db_profile_new() : NULL;
    db_image *out = NULL;
    db_report report = {0};
    st = db_run(ctx, algo, &map, &job, in, &out, &report, prof);
    for (int i = 1; i < repeat && st == DB_OK; i++) {
        db_image_free(out);
        st = db_run(ctx, algo, &map, &job, in, &out, &report, prof);
    }
    if (st == DB_OK) {
        /* A .pgm holds 8-bit gray by definition; --depth chooses for .png and .pnm. */
        const char *dot = strrchr(output, '.');
        st = db_image_write(out, output, DB_FILE_AUTO, dot && !strcasecmp(dot, ".pgm") ? 8 : depth);
    }
    int code = st == DB_OK ? EXIT_OK : fail(st);
    for (int i = 0; st == DB_OK && i < report.n; i++)
        if (report.fields[i].if_zero && report.values[i] == 0)
            fprintf(stderr, "docbin-run: warning: %s: %s\n", input ? input : "sample page", report.fields[i].if_zero);
    if (st == DB_OK && prof) {
        if (profile) {
            char m[64];
            db_map_format(&map, m, sizeof m);
            fprintf(stderr, "%s %dx%d, map %s\n", algo->name, in->width, in->height, m);
            db_profile_print(prof, stderr);
            for (int i = 0; i < report.n; i++)
                fprintf(stderr, "%s: %lld\n", report.fields[i].name, (long long)report.values[i]);
        }
        if (trace && (st = db_profile_write_trace(prof, trace)) != DB_OK)
            code = fail(st);
        if (explain) {
            /* Beside what it measured, what the page's own work predicts. */
            db_plan_costs_set_page_work(costs, &map, &report);
            db_plan_explain_measured(costs, &map, prof, -1, stderr);
        }
    }
    if (st == DB_OK && prof && history) {
        /* Warm runs only, as calibrated: the first builds programs and fills pools. */
        history_args hist = {.calib_path = calib_path, .algo = algo, .job = &job, .map = &map};
        char keys[DB_ROLE_COUNT][17];
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            snprintf(keys[r], sizeof keys[r], "%s", ctx->role[r] ? ctx->role[r]->info.key : "");
        for (int i = 1; i < repeat; i++) {
            db_profile_row rows[DB_BATCH_MAX_ROWS];
            int n = db_profile_run_rows(prof, i, rows, DB_BATCH_MAX_ROWS);
            record_history(&hist, rows, n < DB_BATCH_MAX_ROWS ? n : DB_BATCH_MAX_ROWS, keys, in->width, in->height,
                           in->channels, &report);
        }
    }
    free(costs);
    db_profile_free(prof);
    db_image_free(out);
    db_image_free(in);
    db_context_close(ctx);
    return code;
}
