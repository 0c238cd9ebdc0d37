/*
** docbin-run — binarize document images with one algorithm: parse the
** arguments, check them, call the library. No algorithm code lives here.
*/
#define _GNU_SOURCE
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "runtime/docbin.h"
#include "runtime/util.h"
#include "tools/cli.h"

static const char usage_text[] =
    "usage: docbin-run --algo NAME [options] INPUT -o OUTPUT\n"
    "       docbin-run --algo NAME [options] --sample -o OUTPUT\n"
    "       docbin-run --algo NAME [options] --out-dir DIR INPUT|@LIST|DIRECTORY...\n"
    "       docbin-run --summarize LOG|DIRECTORY...\n"
    "       docbin-run --list-algos | --list-devices | --write-sample FILE | --help | --version\n"
    "\n"
    "Binarizes a document image (PNG, PNM, TIFF, JPEG or JPEG 2000; ink = black), or halftones a\n"
    "picture (dbs), with one algorithm whose stages run on the cpu and gpu OpenCL roles as the map\n"
    "says. Every page of a multi-page TIFF is binarized, into one TIFF (or a file each).\n"
    "\n"
    "  -a, --algo NAME         otsu, niblack, sauvola, nick, wolf, hbk, howe, dbs (--list-algos)\n"
    "  -m, --map MAP           auto (default, or $DOCBIN_MAP): the measured map from the wisdom file\n"
    "                          when it has one for this algorithm, page size and devices, else every\n"
    "                          stage on gpu where a GPU is bound, else on cpu (a note says so);\n"
    "                          measure: time every map on the page (a batch: its first page), run\n"
    "                          the fastest and remember it in the wisdom file;\n"
    "                          gpu,cpu,gpu (one role per stage) | stats=cpu | cpu | gpu: that map\n"
    "      --wisdom FILE       the wisdom file (default $DOCBIN_WISDOM, else\n"
    "                          $XDG_DATA_HOME/docbin/wisdom)\n"
    "      --measure-runs N    timed runs of each map with --map measure (default 3)\n"
    "      --explain           print how the map was chosen: the candidates and their times\n"
    "  -p, --param NAME=VALUE  set a parameter (repeatable), e.g. --param window=25 --param k=0.1;\n"
    "                          lengths (window, block) also in px, in, mm or cm (window=0.25in), in\n"
    "                          pixels at each page's resolution\n"
    "      --variant NAME      stats variant: sliding (default), global, global-shared, shared\n"
    "      --gray RULE         colour to gray: bt601 (default) or qt ((11r+16g+5b)/32)\n"
    "  INPUT                   a file, or - for one page on standard input\n"
    "  -o, --output FILE       .png, .pnm or .tif (1-bit unless --depth 8), .pbm (1-bit), .pgm (8-bit);\n"
    "                          - for standard output (with --format)\n"
    "      --depth 1|8         bits per pixel of the output (default 1)\n"
    "      --compression C     of TIFF outputs: g4 (the default for 1 bit), deflate (for 8 bits), lzw or\n"
    "                          none\n"
    "      --split-pages       a file per page: OUTPUT-0001.EXT, OUTPUT-0002.EXT ...\n"
    "      --dpi N             the pages' resolution, where the files give none or a wrong one; kept in\n"
    "                          PNG and TIFF outputs and used for lengths in units\n"
    "      --sample            use the built-in sample page as input (no download needed)\n"
    "      --write-sample FILE write the built-in sample page itself\n"
    "      --sample-size WxH   size of the sample page (default 1240x1754, A4 at 150 dpi)\n"
    "      --cpu-device SPEC   bind the cpu role (default $DOCBIN_CPU_DEVICE, else the first CPU)\n"
    "      --gpu-device SPEC   bind the gpu role (default $DOCBIN_GPU_DEVICE, else the largest GPU)\n"
    "                          SPEC: P:D indices, platform:type:name substrings, or a word of a\n"
    "                          platform or device name, e.g. portable (PoCL) or nvidia\n"
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
    "                          its image files (.png .pnm .pgm .ppm .pbm .tif .tiff .jpg .jpeg .jp2\n"
    "                          .j2k) sorted by name, not recursive\n"
    "      --format F          png (default), pnm, pgm (8-bit), pbm (1-bit) or tif\n"
    "      --shard K/N         take only inputs i (0-based, in the order above) with i % N == K-1;\n"
    "                          the N shards are disjoint and cover all (GNU parallel: K from 1)\n"
    "      --shard index=I/N   the same counted from 0: i % N == I (0 <= I < N)\n"
    "      --shard auto[/N]    I and N from a Slurm array task (SLURM_ARRAY_TASK_ID within _MIN.._MAX),\n"
    "                          or with /N: I = SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX (Kubernetes)\n"
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
    "      --cpu-lane MODE     a lane that runs every stage on cpu beside the GPU's lanes: auto\n"
    "                          (default: with --map auto or measure beside a real GPU, taking a page\n"
    "                          only when it would finish it before the GPU lanes reach it, from the\n"
    "                          times measured as the batch runs), off, or on (whenever it is free)\n"
    "      --summarize LOG...  merge the --log-json files of a batch's tasks (or a directory's *.jsonl)\n"
    "                          into one account: pages ok, failed and skipped, pages/s per log, per\n"
    "                          task and overall, the failed pages and why, outputs written twice;\n"
    "                          exit 1 when a page failed (docs/cluster.md)\n"
    "      A progress line is shown on stderr when it is a terminal. A failed image is reported\n"
    "      (\"docbin-run: FILE: reason\"), leaves no output, and the others still finish.\n"
    "\n"
    "Environment: DOCBIN_CPU_DEVICE, DOCBIN_GPU_DEVICE, DOCBIN_MAP, DOCBIN_WISDOM,\n"
    "DOCBIN_CACHE_DIR (kernel binaries; 'off' disables), DOCBIN_KERNEL_DIR (load cl/*.cl from disk),\n"
    "DOCBIN_PUSHRELABEL, POCL_CPU_MAX_CU_COUNT, POCL_CACHE_DIR, CUDA_VISIBLE_DEVICES.\n"
    "\n"
    "Exit status: 0 success; 1 an input could not be read or the output written;\n"
    "2 bad arguments (option, algorithm, parameter, variant, map); 3 no device for a\n"
    "mapped role, or an OpenCL failure. On failure no output file is created.\n"
    "In a batch, the status is that of the worst failed image (3 over 2 over 1), 0 if none failed.\n";

static const char *const gray_rules[] = {"bt601", "qt", NULL};
static const char *const cpu_lanes[] = {[DB_CPU_LANE_AUTO] = "auto", [DB_CPU_LANE_OFF] = "off",
                                        [DB_CPU_LANE_ON] = "on", NULL};
enum depth { DEPTH_1, DEPTH_8 };
static const char *const depths[] = {[DEPTH_1] = "1", [DEPTH_8] = "8", NULL};
/* --format's words: the file format, and the bits a page it implies (0: --depth's). */
enum format { FORMAT_PNG, FORMAT_PNM, FORMAT_PGM, FORMAT_PBM, FORMAT_TIF, FORMAT_TIFF };
static const char *const formats[] = {[FORMAT_PNG] = "png", [FORMAT_PNM] = "pnm", [FORMAT_PGM] = "pgm",
                                      [FORMAT_PBM] = "pbm", [FORMAT_TIF] = "tif", [FORMAT_TIFF] = "tiff", NULL};
static const struct {
    db_file_format file;
    int bits;
} format_of[] = {[FORMAT_PNG] = {DB_FILE_PNG, 0}, [FORMAT_PNM] = {DB_FILE_PNM, 0}, [FORMAT_PGM] = {DB_FILE_PNM, 8},
                 [FORMAT_PBM] = {DB_FILE_PNM, 1}, [FORMAT_TIF] = {DB_FILE_TIFF, 0}, [FORMAT_TIFF] = {DB_FILE_TIFF, 0}};
static const char *const compressions[] = {[DB_COMPRESSION_DEFAULT] = "default", [DB_COMPRESSION_NONE] = "none",
                                           [DB_COMPRESSION_G4] = "g4", [DB_COMPRESSION_DEFLATE] = "deflate",
                                           [DB_COMPRESSION_LZW] = "lzw", NULL};

/* Everything the command line asks for. */
typedef struct request {
    const char *algo, *map, *wisdom, *output, *variant, *write_sample, *cpu_spec, *gpu_spec, *trace;
    cli_list params;
    int gray, depth, repeat, measure_runs, sample_size[2], dpi, compression;
    bool explain, sample, profile, list_algos, list_devices, split_pages, summarize;
    /* the batch form */
    const char *out_dir, *shard, *log_json;
    int format, in_flight, threads, cpu_lane;
    size_t max_bytes;
    bool skip_existing, codec_only, serial;
    /* derived by the checks */
    db_file_format file_format;
    int bits;
    char **inputs;
    int n_inputs;
    const db_algo *algorithm;
    db_job job;
    db_plan_mode mode;
    db_map given;
    int shard_k, shard_n;
} request;

#define OPT(...) CLI_OPT(request, __VA_ARGS__)
static const cli_option options[] = {
    OPT("algo", 'a', CLI_STRING, algo),
    OPT("map", 'm', CLI_STRING, map),
    OPT("wisdom", 0, CLI_STRING, wisdom),
    OPT("measure-runs", 0, CLI_INT, measure_runs, .min = 1, .max = 100),
    OPT("explain", 0, CLI_FLAG, explain),
    OPT("param", 'p', CLI_LIST, params),
    OPT("variant", 0, CLI_STRING, variant),
    OPT("gray", 0, CLI_CHOICE, gray, .choices = gray_rules),
    OPT("output", 'o', CLI_STRING, output),
    OPT("depth", 0, CLI_CHOICE, depth, .choices = depths),
    OPT("compression", 0, CLI_CHOICE, compression, .choices = compressions),
    OPT("split-pages", 0, CLI_FLAG, split_pages),
    OPT("dpi", 0, CLI_INT, dpi, .min = 1, .max = 100000),
    OPT("sample", 0, CLI_FLAG, sample),
    OPT("write-sample", 0, CLI_STRING, write_sample),
    OPT("sample-size", 0, CLI_SIZE, sample_size),
    OPT("cpu-device", 0, CLI_STRING, cpu_spec),
    OPT("gpu-device", 0, CLI_STRING, gpu_spec),
    OPT("profile", 0, CLI_FLAG, profile),
    OPT("repeat", 0, CLI_INT, repeat, .min = 1, .max = DB_PROFILE_MAX_RUNS),
    OPT("trace", 0, CLI_STRING, trace),
    OPT("list-algos", 0, CLI_FLAG, list_algos),
    OPT("list-devices", 0, CLI_FLAG, list_devices),
    OPT("summarize", 0, CLI_FLAG, summarize),
    OPT("out-dir", 0, CLI_STRING, out_dir),
    OPT("format", 0, CLI_CHOICE, format, .choices = formats),
    OPT("shard", 0, CLI_STRING, shard),
    OPT("skip-existing", 0, CLI_FLAG, skip_existing),
    OPT("in-flight", 0, CLI_INT, in_flight, .min = 1, .max = 1024),
    OPT("threads", 0, CLI_INT, threads, .min = 1, .max = 4096),
    OPT("max-memory", 0, CLI_BYTES, max_bytes),
    OPT("log-json", 0, CLI_STRING, log_json),
    OPT("codec-only", 0, CLI_FLAG, codec_only),
    OPT("serial", 0, CLI_FLAG, serial),
    OPT("cpu-lane", 0, CLI_CHOICE, cpu_lane, .choices = cpu_lanes),
};

/* The options that only one of the two forms takes. */
static int check_forms(const request *rq)
{
    bool batch = rq->out_dir != NULL;
    if (!batch && rq->format >= 0 && !(rq->output && !strcmp(rq->output, "-")))
        return cli_usage("--format names the outputs' format in a batch (--out-dir) or with -o -; give -o a name "
                         "with its extension");
    if (!batch && (rq->shard || rq->skip_existing || rq->in_flight || rq->threads || rq->max_bytes ||
                   rq->log_json || rq->codec_only || rq->serial || rq->cpu_lane))
        return cli_usage("--format, --shard, --skip-existing, --in-flight, --threads, --max-memory, --log-json, "
                         "--codec-only, --serial and --cpu-lane belong to the batch form; give --out-dir DIR");
    if (batch && (rq->output || rq->sample || rq->profile || rq->trace || rq->repeat > 1))
        return cli_usage("--out-dir runs a batch; -o, --sample, --profile, --trace and --repeat are for one image");
    if (!batch && rq->gpu_spec && !strcmp(rq->gpu_spec, "all"))
        return cli_usage("--gpu-device all spreads a batch over the GPUs; give --out-dir DIR");
    return -1;
}

/* The inputs and the output, and the batch options that must agree. */
static int check_inputs(request *rq)
{
    bool batch = rq->out_dir != NULL;
    if (rq->serial && (rq->in_flight || rq->threads))
        return cli_usage("--serial runs one image at a time on one thread; drop --in-flight and --threads");
    if (batch && rq->n_inputs == 0)
        return cli_usage("no inputs given: name images, @LIST files or directories");
    if (!batch && rq->n_inputs > 1)
        return cli_usage("more than one input given; several inputs need --out-dir DIR (one INPUT takes -o OUTPUT)");
    if (!batch && rq->n_inputs == 1 && rq->inputs[0][0] == '@')
        return cli_usage("a list of inputs needs --out-dir DIR");
    if (rq->n_inputs == 0 && !rq->sample)
        return cli_usage("no input image given (or use --sample for the built-in page)");
    if (rq->n_inputs && rq->sample)
        return cli_usage("give either an INPUT or --sample, not both");
    if (!rq->output && !batch)
        return cli_usage("no output given; use -o OUTPUT");
    if (rq->shard && db_batch_shard_parse(rq->shard, &rq->shard_k, &rq->shard_n) != DB_OK)
        return cli_usage("%s", db_error_message());
    if (rq->format == FORMAT_PBM && rq->depth == DEPTH_8)
        return cli_usage("--format pbm holds 1-bit images; drop --depth 8 or use --format pgm");
    if (rq->output && !strcmp(rq->output, "-") && rq->format < 0)
        return cli_usage("-o - writes to standard output: give its format with --format");
    if (rq->output && !strcmp(rq->output, "-") && rq->split_pages)
        return cli_usage("--split-pages writes a file a page; name them with -o, not -");
    if (batch && rq->n_inputs && !strcmp(rq->inputs[0], "-"))
        return cli_usage("'-' reads one page from standard input: it is for one image with -o, not a batch");
    /* The output's format and bits: --format's, else the extension's; .pgm is 8-bit by definition. */
    const char *dot = rq->output ? strrchr(rq->output, '.') : NULL;
    if (batch && rq->format < 0)
        rq->format = FORMAT_PNG;
    rq->file_format = rq->format >= 0 ? format_of[rq->format].file : DB_FILE_AUTO;
    rq->bits = rq->format >= 0 && format_of[rq->format].bits ? format_of[rq->format].bits
               : rq->depth == DEPTH_8 || (!batch && dot && !strcasecmp(dot, ".pgm")) ? 8 : 1;
    return -1;
}

/* Whether `name` is the output's own name (its stale temporary files go). */
static bool is_name(const char *name, const void *output)
{
    const char *slash = strrchr(output, '/');
    return !strcmp(name, slash ? slash + 1 : output);
}

/* The single form's files to write: each writable, none an input or another
** of them, so that no scan is overwritten and no work is done for a file that
** cannot be written. */
static int check_paths(const request *rq)
{
    char probe[64];
    if (rq->out_dir || !strcmp(rq->output, "-")) {
        /* The format and compression every output will be written with. */
        snprintf(probe, sizeof probe, "page.%s", formats[rq->format]); /* the checks set it for these */
        db_status st = db_image_check_output(probe, rq->file_format, (db_compression)rq->compression, rq->bits,
                                             false);
        if (st == DB_OK && rq->trace && !rq->out_dir)
            st = db_check_writable(rq->trace, "the trace", NULL);
        return st == DB_OK ? -1 : cli_fail(st);
    }
    db_status st = db_image_check_output(rq->output, rq->file_format, (db_compression)rq->compression, rq->bits,
                                         false);
    if (st == DB_OK)
        st = db_check_writable(rq->output, "the output", NULL);
    if (st == DB_OK && rq->trace)
        st = db_check_writable(rq->trace, "the trace", NULL);
    if (st != DB_OK)
        return cli_fail(st);
    const char *input = rq->n_inputs && strcmp(rq->inputs[0], "-") ? rq->inputs[0] : NULL;
    if (input && db_same_file(rq->output, input))
        return cli_usage("the output %s is the input; give another -o", rq->output);
    if (rq->trace && ((input && db_same_file(rq->trace, input)) || db_same_file(rq->trace, rq->output)))
        return cli_usage("--trace %s is the %s; give the trace a name of its own", rq->trace,
                         input && db_same_file(rq->trace, input) ? "input" : "output");
    char dir[4096];
    const char *slash = strrchr(rq->output, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - rq->output) : 1, slash ? rq->output : ".");
    db_remove_stale_temps(dir[0] ? dir : "/", is_name, rq->output);
    return -1;
}

/* The algorithm, its job and the map: everything checked before any device or file is touched. */
static int check_job(request *rq)
{
    if (!rq->algo && !rq->codec_only)
        return cli_usage("--algo is required");
    if (!rq->algo)
        return -1;
    if (!(rq->algorithm = db_algo_find(rq->algo)))
        return cli_fail(db_error_status());
    db_job_defaults(rq->algorithm, &rq->job);
    rq->job.gray = (db_gray_rule)rq->gray;
    db_status st = DB_OK;
    for (int i = 0; i < rq->params.n && st == DB_OK; i++)
        st = db_job_set_text(rq->algorithm, &rq->job, rq->params.v[i]);
    if (st == DB_OK && rq->variant)
        st = db_job_set_variant(rq->algorithm, &rq->job, rq->variant);
    rq->mode = db_plan_mode_of(rq->map);
    if (st == DB_OK && rq->mode == DB_PLAN_GIVEN)
        st = db_map_parse(rq->algorithm, rq->map, &rq->given);
    return st == DB_OK ? -1 : cli_fail(st);
}

/* A map the user gave must have a device for every stage: no silent fallback. */
static db_status check_given(db_context *ctx, const request *rq)
{
    for (int s = 0; s < rq->given.n; s++)
        if (!db_context_device(ctx, rq->given.role[s]))
            return db_fail(DB_ERR_DEVICE, "stage %s is mapped to %s, but %s", rq->algorithm->stages[s].name,
                           db_role_name(rq->given.role[s]), db_error_message());
    return DB_OK;
}

/* The map of a page as the request asks, made or measured on `in` (measure:
** on the first page only, the others then find it in the wisdom file). With
** measure, *out already holds the image. */
static db_status plan_page(db_context *ctx, const request *rq, const db_job *job, const db_image *in, int page,
                           db_plan *plan, db_image **out)
{
    db_status st;
    if (rq->mode == DB_PLAN_GIVEN) {
        memset(plan, 0, sizeof *plan);
        plan->map = rq->given;
        plan->source = DB_PLAN_FROM_USER;
        st = db_plan_key(ctx, rq->algorithm, job, in->width, in->height, in->channels, plan->key, sizeof plan->key);
    } else if (rq->mode == DB_PLAN_MEASURE && page == 0) {
        st = db_plan_measure(ctx, rq->algorithm, job, in, rq->measure_runs ? rq->measure_runs : 3,
                             rq->wisdom ? rq->wisdom : "", plan, out);
    } else {
        st = db_plan_auto(ctx, rq->algorithm, job, in->width, in->height, in->channels, rq->wisdom, plan);
    }
    if (st != DB_OK || page > 0)
        return st;
    if (rq->explain)
        db_plan_explain(plan, rq->algorithm, stderr);
    else if (plan->note[0])
        cli_note("%s", plan->note);
    return DB_OK;
}

/* --profile's and --trace's output, and the report's warnings. */
static db_status report_run(const request *rq, const db_plan *plan, const db_image *in, const db_report *report,
                            const db_profile *prof)
{
    const char *name = rq->n_inputs ? rq->inputs[0] : "sample page";
    for (int i = 0; i < report->n; i++)
        if (report->fields[i].if_zero && report->values[i] == 0)
            fprintf(stderr, "docbin-run: warning: %s: %s\n", name, report->fields[i].if_zero);
    if (!prof)
        return DB_OK;
    if (rq->profile) {
        char m[64];
        db_map_format(&plan->map, m, sizeof m);
        fprintf(stderr, "%s %dx%d, map %s, %g x %g dpi\n", rq->algorithm->name, in->width, in->height, m, in->dpi_x,
                in->dpi_y);
        db_profile_print(prof, stderr);
        for (int i = 0; i < report->n; i++)
            fprintf(stderr, "%s: %lld\n", report->fields[i].name, (long long)report->values[i]);
    }
    return rq->trace ? db_profile_write_trace(prof, rq->trace) : DB_OK;
}

/* The input's pages: the file (or standard input, '-') as a document, or the sample page. */
typedef struct source {
    db_doc *doc;
    uint8_t *bytes; /* standard input's, read whole */
    int pages;
} source;

static db_status open_source(const request *rq, source *src)
{
    *src = (source){.pages = 1};
    if (rq->sample)
        return DB_OK;
    const char *in = rq->inputs[0];
    db_status st = DB_OK;
    if (!strcmp(in, "-")) {
        size_t size;
        st = db_read_stream(0, "standard input", DB_IMAGE_MAX_BYTES, &src->bytes, &size);
        if (st == DB_OK)
            st = db_doc_open_memory(src->bytes, size, "standard input", &src->doc);
    } else {
        st = db_doc_open(in, &src->doc);
    }
    if (st == DB_OK)
        src->pages = db_doc_pages(src->doc);
    return st;
}

static void close_source(source *src)
{
    db_doc_close(src->doc);
    free(src->bytes);
}

/* Page `page` of the source, at the resolution --dpi gives. */
static db_image *read_page(const request *rq, source *src, int page)
{
    db_image *img = src->doc ? db_doc_read_page(src->doc, page) : db_sample_page(rq->sample_size[0],
                                                                                 rq->sample_size[1], 1);
    if (img && rq->dpi > 0)
        img->dpi_x = img->dpi_y = rq->dpi;
    return img;
}

/* Where the output (or, with --split-pages, page `page`'s) goes: NAME-0001.EXT ... */
static void page_path(const request *rq, const char *target, int page, char *path, size_t size)
{
    if (!rq->split_pages) {
        snprintf(path, size, "%s", target);
        return;
    }
    const char *slash = strrchr(target, '/'), *dot = strrchr(target, '.');
    int stem = dot && (!slash || dot > slash) ? (int)(dot - target) : (int)strlen(target);
    snprintf(path, size, "%.*s-%04d%s", stem, target, page + 1, target + stem);
}

/* Every page of the source through the devices into the writer (or, with
** --split-pages, a file each); the first page is `first`, read already. */
static db_status run_pages(db_context *ctx, const request *rq, source *src, db_image *first, const char *target,
                           db_plan *plan, db_profile *prof)
{
    db_doc_writer *w = NULL;
    db_status st = DB_OK;
    for (int page = 0; page < src->pages && st == DB_OK; page++) {
        db_image *in = page ? read_page(rq, src, page) : first, *out = NULL;
        db_bitmap *bits = NULL; /* the result of a 1-bit output, packed where it was made */
        db_report report = {0};
        db_job job;
        st = in ? db_job_resolve(rq->algorithm, &rq->job, in->dpi_x, &job) : db_error_status();
        if (st == DB_OK)
            st = plan_page(ctx, rq, &job, in, page, plan, &out);
        for (int i = out ? 1 : 0; i < rq->repeat && st == DB_OK; i++) {
            db_image_free(out);
            db_bitmap_free(bits);
            out = NULL;
            bits = NULL;
            st = rq->bits == 1 ? db_run_bitmap(ctx, rq->algorithm, &plan->map, &job, in,
                                               db_doc_takes_g4(target, rq->file_format,
                                                               (db_compression)rq->compression),
                                               &bits, &report, prof)
                               : db_run(ctx, rq->algorithm, &plan->map, &job, in, &out, &report, prof);
        }
        if (st != DB_OK && in && rq->n_inputs && !strstr(db_error_message(), rq->inputs[0]))
            st = db_fail(st, "%s%s%.0d: %.1900s", rq->inputs[0], src->pages > 1 ? ": page " : "",
                         src->pages > 1 ? page + 1 : 0, db_error_message()); /* name the page, as a batch does */
        char path[4200];
        page_path(rq, target, page, path, sizeof path);
        if (st == DB_OK && !w)
            st = db_doc_writer_open(path, rq->file_format, (db_compression)rq->compression, &w);
        if (st == DB_OK)
            st = bits ? db_doc_writer_add_bitmap(w, bits) : db_doc_writer_add(w, out, rq->bits);
        if (st == DB_OK && (rq->split_pages || page + 1 == src->pages)) {
            st = db_doc_writer_commit(w);
            w = NULL;
        }
        if (st == DB_OK)
            st = report_run(rq, plan, in, &report, prof);
        db_image_free(in);
        db_image_free(out);
        db_bitmap_free(bits);
    }
    db_doc_writer_abort(w);
    return st;
}

/* Copies the file at `path` to standard output (an output of '-'). */
static db_status copy_to_stdout(const char *path)
{
    char *bytes;
    size_t size;
    db_status st = db_read_file(path, DB_IMAGE_MAX_BYTES, &bytes, &size);
    if (st == DB_OK && (fwrite(bytes, 1, size, stdout) != size || fflush(stdout) != 0))
        st = db_fail(DB_ERR_IO, "cannot write the output to standard output: %s", strerror(errno));
    free(bytes);
    return st;
}

/* The first page decodes on a thread while the devices open: for a single
** page, the driver's start-up is most of the time. The drivers stay on the
** main thread. */
typedef struct first_page {
    const request *rq;
    source *src;
    db_image *img;
    db_status st;
    char message[2048]; /* the failure's message, which belongs to the thread */
} first_page;

static void *decode_first(void *arg)
{
    first_page *f = arg;
    f->img = read_page(f->rq, f->src, 0);
    f->st = f->img ? DB_OK : db_error_status();
    if (!f->img)
        snprintf(f->message, sizeof f->message, "%s", db_error_message());
    return NULL;
}

/* Opens the devices and loads the kernels of the map a run will most likely
** take; a failure to load recurs, with its message, when the page runs. */
static db_status open_devices(const request *rq, db_context **ctx)
{
    db_status st = db_context_open(rq->cpu_spec, rq->gpu_spec, ctx);
    if (st == DB_OK && rq->mode == DB_PLAN_GIVEN)
        st = check_given(*ctx, rq);
    if (st == DB_OK) {
        db_map map = rq->given;
        if (rq->mode != DB_PLAN_GIVEN)
            db_map_default(rq->algorithm, (*ctx)->chosen[DB_ROLE_GPU] != NULL, &map);
        db_prepare(*ctx, rq->algorithm, &map, &rq->job);
    }
    return st;
}

/* Runs one image (a file, standard input or the sample page) and writes its output. */
static int run_single(const request *rq)
{
    db_context *ctx = NULL;
    db_profile *prof = NULL;
    source src = {0};
    char tmp_dir[] = "/tmp/docbin-stdout-XXXXXX", target[4200] = "";
    bool to_stdout = !strcmp(rq->output, "-");
    db_plan *plan = malloc(sizeof *plan);
    db_status st = plan ? open_source(rq, &src) : db_fail(DB_ERR_NOMEM, "out of memory for the plan");
    if (st == DB_OK && src.pages > 1 && !rq->split_pages && rq->file_format != DB_FILE_TIFF &&
        (to_stdout || db_image_check_output(rq->output, DB_FILE_AUTO, (db_compression)rq->compression, rq->bits,
                                            true) != DB_OK))
        st = db_fail(DB_ERR_USAGE, "%s has %d pages and the output %s holds one; write a .tif, or one file a page "
                     "with --split-pages", rq->inputs[0], src.pages, rq->output);
    bool made = false;
    if (st == DB_OK && to_stdout && !(made = mkdtemp(tmp_dir) != NULL))
        st = db_fail(DB_ERR_IO, "cannot make a temporary directory for the output: %s", strerror(errno));
    if (to_stdout)
        snprintf(target, sizeof target, "%s/out", tmp_dir); /* the format is --format's */
    else
        snprintf(target, sizeof target, "%s", rq->output);
    db_image *first = NULL;
    if (st == DB_OK) {
        first_page f = {.rq = rq, .src = &src};
        pthread_t t;
        bool threaded = pthread_create(&t, NULL, decode_first, &f) == 0;
        st = open_devices(rq, &ctx);
        if (threaded)
            pthread_join(t, NULL);
        else
            decode_first(&f);
        first = f.img;
        /* The devices' failure first, as when they opened before the page. */
        if (st == DB_OK && f.st != DB_OK)
            st = db_fail(f.st, "%s", f.message);
    }
    if (st == DB_OK && (rq->profile || rq->trace) && !(prof = db_profile_new()))
        st = db_fail(DB_ERR_NOMEM, "out of memory for the profile");
    if (st == DB_OK) {
        st = run_pages(ctx, rq, &src, first, target, plan, prof);
        first = NULL; /* run_pages frees it */
    }
    db_image_free(first);
    if (st == DB_OK && to_stdout)
        st = copy_to_stdout(target);
    if (made) {
        unlink(target);
        rmdir(tmp_dir);
    }
    int code = st == DB_OK ? CLI_OK : cli_fail(st);
    db_profile_free(prof);
    close_source(&src);
    db_context_close(ctx);
    free(plan);
    return code;
}

/* Runs the batch form: lists, names and shards the inputs, then hands them to
** the library's batch engine. */
static int run_batch(const request *rq)
{
#ifdef __GLIBC__
    /* Every core decodes and encodes pages, freeing and taking buffers of a
    ** page's size each time. By default glibc hands such buffers back to the
    ** kernel and faults them in again for the next page (and unmapping makes
    ** every core flush its TLB); kept, they are reused as they lie. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
    db_batch_list list = {0};
    db_status st = DB_OK;
    for (int i = 0; i < rq->n_inputs && st == DB_OK; i++)
        st = db_batch_list_add(&list, rq->inputs[i]);
    if (st == DB_OK && list.n == 0) {
        db_batch_list_free(&list);
        return cli_usage("no input images found (a directory gives its PNG, PNM, TIFF, JPEG and JPEG 2000 "
                         "files by extension; a list file one path per line)");
    }
    if (st == DB_OK)
        st = db_batch_list_name_outputs(&list, rq->out_dir, formats[rq->format]);
    if (st == DB_OK && rq->shard_n)
        st = db_batch_list_shard(&list, rq->shard_k, rq->shard_n);
    db_batch_summary sum;
    if (st == DB_OK) {
        int bits = rq->bits;
        db_job gray_only = {.gray = (db_gray_rule)rq->gray};
        db_batch_options opt = {
            .algo = rq->algorithm, .mode = rq->mode, .map = &rq->given, .wisdom = rq->wisdom,
            .measure_runs = rq->measure_runs, .explain = rq->explain ? stderr : NULL,
            .cpu_lane = (db_cpu_lane)rq->cpu_lane, .format = rq->file_format,
            .compression = (db_compression)rq->compression, .split_pages = rq->split_pages, .dpi = rq->dpi,
            .job = rq->algorithm ? &rq->job : &gray_only, .cpu_spec = rq->cpu_spec, .gpu_spec = rq->gpu_spec,
            .in_flight = rq->in_flight, .threads = rq->threads, .max_bytes = rq->max_bytes, .bits = bits,
            .skip_existing = rq->skip_existing, .codec_only = rq->codec_only, .serial = rq->serial,
            .stage_times = rq->log_json != NULL, .prog = "docbin-run", .errors = stderr, .log_json = rq->log_json,
            .progress = isatty(STDERR_FILENO) ? stderr : NULL,
        };
        st = db_batch_run(&opt, &list, &sum);
    }
    db_batch_list_free(&list);
    return st != DB_OK ? cli_fail(st) : db_exit_status(sum.worst);
}

/* --summarize: the JSON logs of a batch's tasks merged into one account. */
static int summarize(const request *rq)
{
    if (rq->algo || rq->out_dir || rq->output || rq->shard || rq->sample || rq->log_json)
        return cli_usage("--summarize reads the logs of a batch and takes none of --algo, --out-dir, -o, "
                         "--shard, --sample, --log-json");
    if (rq->n_inputs == 0)
        return cli_usage("--summarize needs the --log-json files of the batch (or their directory)");
    db_batch_logs logs = {0};
    db_status st = DB_OK;
    for (int i = 0; i < rq->n_inputs && st == DB_OK; i++)
        st = db_batch_logs_add(&logs, rq->inputs[i]);
    if (st == DB_OK)
        db_batch_logs_print(&logs, stdout);
    int failed = logs.failed;
    db_batch_logs_free(&logs);
    if (st == DB_OK && fflush(stdout) != 0)
        st = db_fail(DB_ERR_IO, "cannot write the summary: %s", strerror(errno));
    return st != DB_OK ? cli_fail(st) : failed ? db_exit_status(DB_ERR_FORMAT) : CLI_OK;
}

/* --list-algos, --list-devices, --write-sample: answers that run nothing. */
static int answer(const request *rq)
{
    if (rq->list_algos) {
        for (int i = 0; i < db_algo_count(); i++) {
            db_algo_print(db_algo_at(i), stdout);
            putchar('\n');
        }
        return CLI_OK;
    }
    db_status st;
    if (rq->write_sample) {
        db_image *page = db_sample_page(rq->sample_size[0], rq->sample_size[1], 1);
        st = page ? db_image_write(page, rq->write_sample, DB_FILE_AUTO, 8) : db_error_status();
        db_image_free(page);
        return st == DB_OK ? CLI_OK : cli_fail(st);
    }
    db_context *ctx = NULL;
    if ((st = db_context_open(rq->cpu_spec, rq->gpu_spec, &ctx)) != DB_OK)
        return cli_fail(st);
    db_context_print_devices(ctx, stdout);
    db_context_close(ctx);
    return CLI_OK;
}

int main(int argc, char **argv)
{
    cli_prog = "docbin-run";
    request rq = {.map = getenv("DOCBIN_MAP"), .repeat = 1, .sample_size = {1240, 1754}, /* A4 at 150 dpi */
                  .format = -1}; /* -1: not given */
    int first, code = cli_parse(argc, argv, usage_text, options, DB_LEN(options), &rq, &first);
    if (code >= 0)
        return code;
    if (rq.list_algos || rq.list_devices || rq.write_sample)
        return answer(&rq);
    rq.inputs = argv + first;
    rq.n_inputs = argc - first;
    if (rq.summarize)
        return summarize(&rq);
    if ((code = check_forms(&rq)) >= 0 || (code = check_inputs(&rq)) >= 0 || (code = check_job(&rq)) >= 0 ||
        (code = check_paths(&rq)) >= 0)
        return code;
    return rq.out_dir ? run_batch(&rq) : run_single(&rq);
}
