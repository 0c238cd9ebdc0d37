/*
** docbin-bench — benchmark maps x images x runs of one algorithm, or calibrate
** the planner's cost models. Argument parsing and calls into libdocbin
** (planner/bench.h, planner/calibrate.h); no measuring code lives here.
*/
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "planner/bench.h"
#include "planner/calib.h"
#include "planner/calibrate.h"
#include "runtime/docbin.h"

/* Exit codes (db_exit_status), documented in --help and README.md. */
enum exit_code {
    EXIT_OK = 0,
    EXIT_USAGE = 2 /* bad arguments: options, algorithm, parameter, map, size */
};

static const char usage_text[] =
    "usage: docbin-bench --algo NAME [options] [IMAGE...]\n"
    "       docbin-bench --calibrate [--algo A,B,...] [--variant V] [--sizes WxH,...] [--runs N] [--calib FILE]\n"
    "       docbin-bench --help | --version\n"
    "\n"
    "Benchmark: runs one algorithm under each map on each image, one warm-up run and then\n"
    "N timed runs, and prints per image and map the median (min - max) of every stage's\n"
    "span and of the wall time, warm-up excluded. Without IMAGE and --sample-size it uses\n"
    "the built-in sample page at 1240x1754 (A4 at 150 dpi).\n"
    "\n"
    "  -a, --algo NAME         otsu, niblack, sauvola, nick, wolf, hbk, howe, dbs (docbin-run --list-algos)\n"
    "  -m, --maps MAPS         all (default: every map whose stages have implementations on their\n"
    "                          roles) or maps separated by ';', e.g. 'gpu,cpu,gpu;cpu;stats=cpu'\n"
    "  -n, --runs N            timed runs per image and map (default 5), after one warm-up run\n"
    "      --order ORDER       interleaved (default): the warm-up of every map, then rounds of one\n"
    "                          timed run of each map, so that a burst of load on the host falls on\n"
    "                          one run of every map; grouped: each map's runs back to back\n"
    "  -p, --param NAME=VALUE  set a parameter (repeatable), e.g. --param window=25\n"
    "      --variant NAME      stats variant: sliding (default), global, global-shared, shared\n"
    "      --sample-size WxH   add the built-in sample page at this size as an image (repeatable)\n"
    "      --csv FILE          write every run: one row per stage, a copies and a total row (README.md)\n"
    "      --svg FILE          write a box plot of the wall time per map\n"
    "      --predict           also print the planner's predicted latency of each map beside the\n"
    "                          measured median (stages whose cost follows the content at the work\n"
    "                          the page took), and how the map --map auto picks before any run\n"
    "                          compares with the fastest measured one (calibration: --calib FILE\n"
    "                          or the default); and each map predicted again with the history that\n"
    "                          the page's other maps' timed runs leave ('after others'), and the\n"
    "                          map's copies predicted and measured\n"
    "      --cpu-device SPEC   bind the cpu role (default $DOCBIN_CPU_DEVICE, else the first CPU)\n"
    "      --gpu-device SPEC   bind the gpu role (default $DOCBIN_GPU_DEVICE, else the largest GPU)\n"
    "                          SPEC: P:D indices, platform:type:name substrings, or a word of a\n"
    "                          platform or device name, e.g. portable (PoCL) or nvidia\n"
    "\n"
    "Calibration (--calibrate): times every stage of the chosen algorithms (default: all) with\n"
    "every variant on every bound role, on sample pages at each size (default 620x877,\n"
    "1240x1754, 2480x3508: A4 at 75, 150 and 300 dpi), one warm-up and N timed runs (default\n"
    "5); fits t = a + b * pixels through the medians; times copies to and from each bound\n"
    "device that does not share host memory; merges the rows into the calibration file\n"
    "(default $DOCBIN_PERF_DIR/HOST.calib, else $XDG_DATA_HOME/docbin/perf/HOST.calib) and\n"
    "prints the fits. Parameters are the algorithm defaults.\n"
    "      --calibrate         calibrate instead of benchmarking\n"
    "      --sizes WxH,...     page sizes, at least 3 different pixel counts\n"
    "      --calib FILE        the calibration file to merge into\n"
    "      --variant NAME      calibrate only this stats variant (default: every variant)\n"
    "\n"
    "A progress line is shown on stderr when it is a terminal.\n"
    "\n"
    "Exit status: 0 success; 1 an image or the calibration file could not be read, or an\n"
    "output written; 2 bad arguments (option, algorithm, parameter, variant, map, size);\n"
    "3 no device for a mapped role, or an OpenCL failure. On failure no output file is created.\n";

static int progress_shown;

static void progress_line(void *user, int step, int steps, const char *what)
{
    (void)user;
    fprintf(stderr, "\r[%d/%d] %s\033[K", step, steps, what);
    fflush(stderr);
    progress_shown = 1;
}

static void progress_clear(void)
{
    if (progress_shown)
        fputs("\r\033[K", stderr);
    progress_shown = 0;
}

static int fail(db_status st)
{
    progress_clear();
    fprintf(stderr, "docbin-bench: %s\n", db_error_message());
    return db_exit_status(st);
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "docbin-bench: %s (see docbin-bench --help)\n", msg);
    return EXIT_USAGE;
}

/* Parses "WxH" with both sides >= 1; returns 1 on success. */
static int parse_size(const char *s, int *w, int *h)
{
    char tail;
    return sscanf(s, "%dx%d%c", w, h, &tail) == 2 && *w >= 1 && *h >= 1;
}

enum long_only {
    OPT_VARIANT = 256, OPT_SAMPLE_SIZE, OPT_CSV, OPT_SVG, OPT_CPU_DEVICE, OPT_GPU_DEVICE, OPT_CALIBRATE,
    OPT_SIZES, OPT_CALIB, OPT_VERSION, OPT_PREDICT, OPT_ORDER
};

enum { MAX_SETTINGS = 32, MAX_SAMPLES = 16, MAX_ALGOS = 16, MAX_MAPS = 1 << DB_MAX_STAGES };

/* Everything the command line asked for. */
typedef struct request {
    const char *algo_text, *maps_text, *variant, *csv, *svg, *cpu_spec, *gpu_spec, *sizes_text, *calib_path;
    const char *settings[MAX_SETTINGS];
    int n_settings;
    int samples[MAX_SAMPLES][2];
    int n_samples;
    int runs, calibrate, predict, order_given;
    db_bench_order order;
    char **images;
    int n_images;
} request;

static int calibrate(const request *rq)
{
    db_calibrate_options opts;
    db_calibrate_defaults(&opts);
    opts.runs = rq->runs;
    opts.variant = rq->variant;
    const db_algo *algos[MAX_ALGOS];
    if (rq->algo_text) {
        char list[512];
        if (strlen(rq->algo_text) >= sizeof list)
            return usage_error("--algo list too long");
        strcpy(list, rq->algo_text);
        int n = 0;
        char *save;
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (n == MAX_ALGOS)
                return usage_error("too many algorithms in --algo");
            if (!(algos[n++] = db_algo_find(t)))
                return fail(db_error_status());
        }
        if (!n)
            return usage_error("--algo names no algorithm");
        opts.algos = algos;
        opts.n_algos = n;
    }
    if (rq->sizes_text) {
        char list[512];
        if (strlen(rq->sizes_text) >= sizeof list)
            return usage_error("--sizes list too long");
        strcpy(list, rq->sizes_text);
        opts.n_sizes = 0;
        char *save;
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (opts.n_sizes == DB_CALIBRATE_MAX_SIZES)
                return usage_error("--sizes takes at most 16 sizes");
            if (!parse_size(t, &opts.sizes[opts.n_sizes].width, &opts.sizes[opts.n_sizes].height))
                return usage_error("--sizes takes WIDTHxHEIGHT,WIDTHxHEIGHT,..., e.g. 620x877,1240x1754,2480x3508");
            opts.n_sizes++;
        }
        if (opts.n_sizes < DB_COST_MIN_SIZES)
            return usage_error("--sizes needs at least 3 sizes: a line through two always fits");
    }
    char path[4096];
    db_status st = DB_OK;
    if (rq->calib_path)
        snprintf(path, sizeof path, "%s", rq->calib_path);
    else if ((st = db_calib_default_path(path, sizeof path)) != DB_OK)
        return fail(st);
    db_calib file, fresh;
    db_calib_init(&file);
    db_calib_init(&fresh);
    if ((st = db_calib_load(&file, path)) != DB_OK)
        return fail(st);
    db_context *ctx = NULL;
    if ((st = db_context_open(rq->cpu_spec, rq->gpu_spec, &ctx)) != DB_OK) {
        db_calib_free(&file);
        return fail(st);
    }
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (!ctx->role[r])
            fprintf(stderr, "docbin-bench: note: the %s role is not calibrated: %s\n", db_role_name((db_role)r),
                    ctx->unbound_reason[r]);
    if (isatty(STDERR_FILENO))
        opts.progress = progress_line;
    db_calibrate_checks checks;
    opts.checks = &checks;
    st = db_calibrate(ctx, &opts, &fresh);
    progress_clear();
    for (int i = 0; i < fresh.n_stages && st == DB_OK; i++)
        st = db_calib_put_stage(&file, &fresh.stages[i]);
    for (int i = 0; i < fresh.n_transfers && st == DB_OK; i++)
        st = db_calib_put_transfer(&file, &fresh.transfers[i]);
    if (st == DB_OK && fresh.has_staging)
        st = db_calib_put_staging(&file, &fresh.staging);
    for (int i = 0; i < fresh.n_crossings && st == DB_OK; i++)
        st = db_calib_put_crossing(&file, &fresh.crossings[i]);
    for (int i = 0; i < fresh.n_written && st == DB_OK; i++)
        st = db_calib_put_written(&file, &fresh.written[i]);
    if (st == DB_OK)
        st = db_calib_save(&file, path);
    if (st == DB_OK) {
        printf("devices:\n");
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            if (ctx->role[r])
                printf("  %s  %s: %s%s\n", ctx->role[r]->info.key, db_role_name((db_role)r), ctx->role[r]->info.name,
                       ctx->role[r]->info.host_unified ? " (shares host memory: copies are free)" : "");
        printf("%-10s %-12s %-4s %-14s %-5s %-16s %10s %12s %8s %12s\n", "algo", "stage", "role", "variant", "pages",
               "device", "a (ms)", "b (ms/Mpx)", "spread", "c (ms/Mpx)");
        for (int i = 0; i < fresh.n_stages; i++) {
            const db_calib_stage *e = &fresh.stages[i];
            /* The pages a row serves: its channels' (calib.h), or any where the stage does not read the page. */
            const char *pages = e->channels == 1 ? "gray" : e->channels == 3 ? "RGB" : "any";
            printf("%-10s %-12s %-4s %-14s %-5s %-16s %10.4f %12.4f %8.3f %12.4f\n", e->algo, e->stage,
                   db_role_name(e->role), e->variant, pages, e->device, e->model.a, e->model.b * 1e6,
                   e->model.spread, e->model.c * 1e6);
        }
        if (fresh.n_transfers) {
            printf("%-16s %-4s %12s %14s %8s\n", "device", "dir", "latency (ms)", "bandwidth GB/s", "spread");
            for (int i = 0; i < fresh.n_transfers; i++) {
                const db_calib_transfer *e = &fresh.transfers[i];
                printf("%-16s %-4s %12.4f %14.3f %8.3f\n", e->device, db_transfer_dir_name(e->dir),
                       e->model.latency_ms, e->model.bandwidth_gbs, e->model.spread);
            }
        } else {
            printf("no transfer rows: every bound device shares host memory\n");
        }
        if (fresh.has_staging)
            printf("staging (host copies of a page and its result): %.4f ms + %.3f GB/s, spread %.3f\n",
                   fresh.staging.latency_ms, fresh.staging.bandwidth_gbs, fresh.staging.spread);
        for (int i = 0; i < fresh.n_crossings; i++)
            printf("crossing into the %s role (device %s, from device %s): %.4f ms\n",
                   db_role_name(fresh.crossings[i].role), fresh.crossings[i].to, fresh.crossings[i].from,
                   fresh.crossings[i].ms);
        for (int i = 0; i < fresh.n_written; i++) {
            const db_transfer_model *m = &fresh.written[i].model;
            printf("copies into device %s of what device %s wrote: %.4f ms + %.3f GB/s", fresh.written[i].to,
                   fresh.written[i].from, m->latency_ms, m->bandwidth_gbs);
            if (m->cached_bytes > 0)
                printf(" for the first %.2f MB, %.3f GB/s past them", m->cached_bytes / 1e6, m->beyond_gbs);
            printf(", spread %.3f\n", m->spread);
        }
        printf("the host's speed, GB/s: its copy of %zu bytes, and a kernel writing as many on each role whose "
               "device shares host memory; 'stolen': the machine's CPU time the hypervisor took since the "
               "checkpoint before; 'staging': the host's copies of each transfer size, ms (the staging row's "
               "rounds)\n", checks.bytes);
        for (int i = 0; i < checks.n; i++) {
            printf("  %-28s copy %7.1f", checks.at[i].when, checks.at[i].copy_gbs);
            for (int r = 0; r < DB_ROLE_COUNT; r++)
                if (checks.at[i].fill_gbs[r] > 0)
                    printf("  %s %7.1f", db_role_name((db_role)r), checks.at[i].fill_gbs[r]);
            if (checks.at[i].stolen_pct >= 0)
                printf("  stolen %5.2f%%", checks.at[i].stolen_pct);
            printf("  staging");
            for (int k = 0; k < opts.n_transfer_sizes; k++)
                printf(" %.3f", checks.at[i].staging_ms[k]);
            printf("\n");
        }
        printf("%d stage rows and %d transfer rows merged into %s (%d and %d in all)\n", fresh.n_stages,
               fresh.n_transfers, path, file.n_stages, file.n_transfers);
    }
    int code = st == DB_OK ? EXIT_OK : fail(st);
    db_calib_free(&fresh);
    db_calib_free(&file);
    db_context_close(ctx);
    return code;
}

/* Fills maps[] from --maps: every valid map for "all", else the ';'-separated list. */
static int choose_maps(const db_algo *algo, const char *text, db_map *maps, int *n_maps)
{
    *n_maps = 0;
    if (!strcmp(text, "all")) {
        for (int i = 0; i < db_map_count(algo); i++) {
            db_map m;
            db_map_nth(algo, i, &m);
            int ok = 1;
            for (int s = 0; s < m.n; s++)
                ok &= algo->stages[s].impl[m.role[s]] != NULL;
            if (ok)
                maps[(*n_maps)++] = m;
        }
        return EXIT_OK;
    }
    char list[1024];
    if (strlen(text) >= sizeof list)
        return usage_error("--maps list too long");
    strcpy(list, text);
    char *save;
    for (char *t = strtok_r(list, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        if (*n_maps == MAX_MAPS)
            return usage_error("too many maps in --maps");
        db_status st = db_map_parse(algo, t, &maps[*n_maps]);
        if (st != DB_OK)
            return fail(st);
        (*n_maps)++;
    }
    if (!*n_maps)
        return usage_error("--maps names no map; give 'all' or maps separated by ';'");
    return EXIT_OK;
}

static void print_summary(const db_bench *b)
{
    const db_algo *algo = b->algo;
    for (int i = 0; i < b->n_images; i++)
        for (int m = 0; m < b->n_maps; m++) {
            char text[128];
            db_map_format(&b->maps[m], text, sizeof text);
            db_box stage[DB_MAX_STAGES], copies, total;
            if (db_bench_summary(b, i, m, stage, &copies, &total) != DB_OK)
                continue;
            printf("%s %s (%dx%d) map %s: median (min - max) of %d runs\n", algo->name, b->image_names[i],
                   b->width[i], b->height[i], text, b->runs);
            for (int s = 0; s < algo->n_stages; s++)
                printf("  %-12s %-4s %10.3f ms (%.3f - %.3f)\n", algo->stages[s].name,
                       db_role_name(b->maps[m].role[s]), stage[s].median, stage[s].min, stage[s].max);
            printf("  %-12s %-4s %10.3f ms (%.3f - %.3f)\n", "copies", "-", copies.median, copies.min, copies.max);
            printf("  %-12s %-4s %10.3f ms (%.3f - %.3f)\n", "total", "-", total.median, total.min, total.max);
            if (m == b->n_maps - 1 && b->stolen_pct && b->stolen_pct[i] >= 0)
                printf("%s %s: the hypervisor took %.2f%% of the machine's CPU time while its maps ran\n", algo->name,
                       b->image_names[i], b->stolen_pct[i]);
        }
}

/* --predict: per image, the planner's predicted latency of every benchmarked
** map beside its measured median, and how the map --map auto picks fares
** against the fastest one measured. Each map is predicted twice: from the
** calibration (and the history file) alone, and as it would be after the
** page's other maps had run (db_bench_predict_after_others). */
static db_status print_predictions(const db_bench *b, db_context *ctx, const db_job *job,
                                   const db_image *const *images, const char *calib_path)
{
    const db_algo *algo = b->algo;
    char def[4096], history_path[4096 + 16];
    db_status st = calib_path ? DB_OK : db_calib_default_path(def, sizeof def);
    if (st != DB_OK)
        return st;
    if (!calib_path)
        calib_path = def;
    db_calib calib;
    db_history file;
    db_calib_init(&calib);
    db_history_init(&file);
    db_plan_costs *costs = malloc(sizeof *costs), *after = malloc(sizeof *after);
    if (!costs || !after)
        st = db_fail(DB_ERR_NOMEM, "out of memory for the planner's cost table");
    if (st == DB_OK && (st = db_history_path(calib_path, history_path, sizeof history_path)) == DB_OK &&
        (st = db_calib_load(&calib, calib_path)) == DB_OK && db_history_load(&file, history_path) != DB_OK)
        db_history_free(&file); /* db_plan_costs_load below warns about it */
    for (int i = 0; i < b->n_images && st == DB_OK; i++) {
        const db_image *img = images[i];
        st = db_plan_costs_load(costs, calib_path, ctx, algo, job, img->width, img->height, img->channels);
        db_plan_choice choice;
        if (st != DB_OK || (st = db_plan_choose(costs, DB_PLAN_LATENCY, &choice)) != DB_OK)
            break;
        printf("predicted and measured latency: %s %s (%dx%d)\n", algo->name, b->image_names[i], img->width,
               img->height);
        /* The choice above is the planner's before any run of the page; the
        ** predictions below know the work its content took (db_stage.work). */
        db_bench_set_page_work(b, i, -1, costs);
        db_plan_print_page_work(costs, stdout);
        if (choice.fallback) {
            char line[1024];
            db_plan_fallback_line(costs, &choice, line, sizeof line);
            printf("  %s\n", line);
            continue;
        }
        printf("  'after others': predicted from the calibration and the timed runs of this page's other maps\n");
        printf("  %-24s %12s %12s %8s %14s %8s %12s %12s\n", "map", "predicted ms", "measured ms", "error",
               "after others", "error", "copies pred.", "copies meas.");
        int best = -1, picked = -1;
        double measured[MAX_MAPS];
        for (int m = 0; m < b->n_maps; m++) {
            db_box stage[DB_MAX_STAGES], copies, total;
            if ((st = db_bench_summary(b, i, m, stage, &copies, &total)) != DB_OK)
                break;
            measured[m] = total.median;
            char text[128];
            db_map_format(&b->maps[m], text, sizeof text);
            db_plan_sim sim;
            db_plan_simulate(costs, &b->maps[m], &sim);
            double others;
            if ((st = db_bench_predict_after_others(b, i, m, &calib, &file, ctx, job, img, after, &others)) != DB_OK)
                break;
            /* The copies apart: a map's miss may be its copies or its stages. */
            char copies_predicted[32] = "?";
            if (sim.copies_known)
                snprintf(copies_predicted, sizeof copies_predicted, "%.3f", sim.transfer_ms);
            printf("  %-24s %12.3f %12.3f %+7.1f%% %14.3f %+7.1f%% %12s %12.3f\n", text, sim.latency_ms, total.median,
                   100.0 * (sim.latency_ms - total.median) / total.median, others,
                   100.0 * (others - total.median) / total.median, copies_predicted, copies.median);
            if (best < 0 || total.median < measured[best])
                best = m;
            if (!memcmp(b->maps[m].role, choice.map.role, sizeof choice.map.role[0] * (size_t)algo->n_stages))
                picked = m;
        }
        if (st != DB_OK)
            break;
        char chosen[128], fastest[128];
        db_map_format(&choice.map, chosen, sizeof chosen);
        db_map_format(&b->maps[best], fastest, sizeof fastest);
        if (picked < 0)
            printf("  auto picks %s (predicted %.3f ms), which was not benchmarked\n", chosen, choice.sim.latency_ms);
        else
            printf("  auto picks %s: measured %.3f ms; fastest measured %s: %.3f ms; auto is %.1f%% slower\n",
                   chosen, measured[picked], fastest, measured[best],
                   100.0 * (measured[picked] - measured[best]) / measured[best]);
    }
    db_history_free(&file);
    db_calib_free(&calib);
    free(costs);
    free(after);
    return st;
}

static int bench(const request *rq)
{
    if (!rq->algo_text)
        return usage_error("--algo is required");
    if (strchr(rq->algo_text, ','))
        return usage_error("a benchmark takes one algorithm; several are for --calibrate");
    if (rq->sizes_text)
        return usage_error("--sizes belongs to --calibrate");
    if (rq->calib_path && !rq->predict)
        return usage_error("--calib names the calibration file of --calibrate or --predict");
    const db_algo *algo = db_algo_find(rq->algo_text);
    if (!algo)
        return fail(db_error_status());
    db_job job;
    db_job_defaults(algo, &job);
    for (int i = 0; i < rq->n_settings; i++) {
        db_status st = db_job_set_text(algo, &job, rq->settings[i]);
        if (st != DB_OK)
            return fail(st);
    }
    if (rq->variant) {
        db_status st = db_job_set_variant(algo, &job, rq->variant);
        if (st != DB_OK)
            return fail(st);
    }
    static db_map maps[MAX_MAPS];
    int n_maps, code = choose_maps(algo, rq->maps_text ? rq->maps_text : "all", maps, &n_maps);
    if (code != EXIT_OK)
        return code;

    /* Images: the files, then the sample pages; the default sample page when none. */
    int n_images = rq->n_images + rq->n_samples;
    int default_sample[2] = {1240, 1754};
    if (!n_images)
        n_images = 1;
    db_image **images = calloc((size_t)n_images, sizeof *images);
    char **names = calloc((size_t)n_images, sizeof *names);
    db_status st = images && names ? DB_OK : db_fail(DB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n_images && st == DB_OK; i++) {
        if (i < rq->n_images) {
            names[i] = strdup(rq->images[i]);
            images[i] = db_image_read(rq->images[i]);
        } else {
            const int *wh = rq->n_samples ? rq->samples[i - rq->n_images] : default_sample;
            char name[64];
            snprintf(name, sizeof name, "sample-%dx%d", wh[0], wh[1]);
            names[i] = strdup(name);
            images[i] = db_sample_page(wh[0], wh[1], 1);
        }
        if (!images[i])
            st = db_error_status();
        else if (!names[i])
            st = db_fail(DB_ERR_NOMEM, "out of memory");
    }
    db_context *ctx = NULL;
    if (st == DB_OK)
        st = db_context_open(rq->cpu_spec, rq->gpu_spec, &ctx);
    for (int m = 0; m < n_maps && st == DB_OK; m++)
        for (int s = 0; s < maps[m].n && st == DB_OK; s++)
            if (!db_context_device(ctx, maps[m].role[s])) {
                char text[128];
                db_map_format(&maps[m], text, sizeof text);
                st = db_fail(DB_ERR_DEVICE, "map %s puts stage %s on %s, but %s%s", text, algo->stages[s].name,
                             db_role_name(maps[m].role[s]), db_error_message(),
                             rq->maps_text ? "" : "; or choose maps with --maps");
            }
    db_bench b = {0};
    if (st == DB_OK) {
        db_bench_options o = {.algo = algo, .job = &job, .maps = maps, .n_maps = n_maps,
                              .images = (const db_image *const *)images, .image_names = (const char *const *)names,
                              .n_images = n_images, .runs = rq->runs, .order = rq->order,
                              .progress = isatty(STDERR_FILENO) ? progress_line : NULL};
        st = db_bench_run(ctx, &o, &b);
        progress_clear();
    }
    /* Files last, so that a failure before them leaves none; a failed SVG takes the CSV with it. */
    if (st == DB_OK)
        print_summary(&b);
    if (st == DB_OK && rq->predict)
        st = print_predictions(&b, ctx, &job, (const db_image *const *)images, rq->calib_path);
    if (st == DB_OK && rq->csv)
        st = db_bench_write_csv(&b, rq->csv);
    if (st == DB_OK && rq->svg && (st = db_bench_write_svg(&b, rq->svg)) != DB_OK && rq->csv)
        unlink(rq->csv);
    code = st == DB_OK ? EXIT_OK : fail(st);
    db_bench_free(&b);
    for (int i = 0; i < n_images; i++) {
        if (images)
            db_image_free(images[i]);
        if (names)
            free(names[i]);
    }
    free(images);
    free(names);
    db_context_close(ctx);
    return code;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"algo", required_argument, NULL, 'a'},
        {"maps", required_argument, NULL, 'm'},
        {"runs", required_argument, NULL, 'n'},
        {"param", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {"variant", required_argument, NULL, OPT_VARIANT},
        {"sample-size", required_argument, NULL, OPT_SAMPLE_SIZE},
        {"csv", required_argument, NULL, OPT_CSV},
        {"svg", required_argument, NULL, OPT_SVG},
        {"cpu-device", required_argument, NULL, OPT_CPU_DEVICE},
        {"gpu-device", required_argument, NULL, OPT_GPU_DEVICE},
        {"calibrate", no_argument, NULL, OPT_CALIBRATE},
        {"sizes", required_argument, NULL, OPT_SIZES},
        {"calib", required_argument, NULL, OPT_CALIB},
        {"version", no_argument, NULL, OPT_VERSION},
        {"predict", no_argument, NULL, OPT_PREDICT},
        {"order", required_argument, NULL, OPT_ORDER},
        {NULL, 0, NULL, 0},
    };
    request rq = {.runs = 5};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":a:m:n:p:h", options, NULL)) != -1) {
        switch (c) {
        case 'a': rq.algo_text = optarg; break;
        case 'm': rq.maps_text = optarg; break;
        case 'n': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (end == optarg || *end || n < 1 || n >= DB_PROFILE_MAX_RUNS)
                return usage_error("--runs takes a count from 1 to 1023");
            rq.runs = (int)n;
            break;
        }
        case 'p':
            if (rq.n_settings == MAX_SETTINGS)
                return usage_error("too many --param options");
            rq.settings[rq.n_settings++] = optarg;
            break;
        case 'h': fputs(usage_text, stdout); return EXIT_OK;
        case OPT_VARIANT: rq.variant = optarg; break;
        case OPT_SAMPLE_SIZE:
            if (rq.n_samples == MAX_SAMPLES)
                return usage_error("too many --sample-size options (at most 16)");
            if (!parse_size(optarg, &rq.samples[rq.n_samples][0], &rq.samples[rq.n_samples][1]))
                return usage_error("--sample-size takes WIDTHxHEIGHT, e.g. 2480x3508 (A4 at 300 dpi)");
            rq.n_samples++;
            break;
        case OPT_CSV: rq.csv = optarg; break;
        case OPT_SVG: rq.svg = optarg; break;
        case OPT_CPU_DEVICE: rq.cpu_spec = optarg; break;
        case OPT_GPU_DEVICE: rq.gpu_spec = optarg; break;
        case OPT_CALIBRATE: rq.calibrate = 1; break;
        case OPT_SIZES: rq.sizes_text = optarg; break;
        case OPT_CALIB: rq.calib_path = optarg; break;
        case OPT_VERSION: printf("docbin-bench %s\n", db_version()); return EXIT_OK;
        case OPT_PREDICT: rq.predict = 1; break;
        case OPT_ORDER:
            if (!strcmp(optarg, "interleaved"))
                rq.order = DB_BENCH_INTERLEAVED;
            else if (!strcmp(optarg, "grouped"))
                rq.order = DB_BENCH_GROUPED;
            else
                return usage_error("--order takes interleaved or grouped");
            rq.order_given = 1;
            break;
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
    rq.images = argv + optind;
    rq.n_images = argc - optind;
    if (rq.calibrate) {
        if (rq.predict)
            return usage_error("--predict compares a benchmark with the planner; --calibrate makes the calibration");
        if (rq.n_images || rq.maps_text || rq.csv || rq.svg || rq.n_samples || rq.n_settings || rq.order_given)
            return usage_error("--calibrate takes --algo, --variant, --sizes, --runs, --calib and the device options "
                               "only; it times sample pages with default parameters");
        return calibrate(&rq);
    }
    return bench(&rq);
}
