/*
** docbin-bench — time every map of an algorithm on images, or fill the wisdom
** file ahead of a batch: parse the arguments, check them, call the library
** (planner/bench.h, planner/plan.h). No measuring code lives here.
*/
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "algorithms/howe_features.h"
#include "planner/bench.h"
#include "runtime/docbin.h"
#include "runtime/util.h"
#include "tools/cli.h"

static const char usage_text[] =
    "usage: docbin-bench --algo NAME [options] [IMAGE...]\n"
    "       docbin-bench --wisdom FILE --algo NAME[,NAME...] [options] [IMAGE...]\n"
    "       docbin-bench --train-howe DIR --model FILE [--grid FILE]\n"
    "       docbin-bench --help | --version\n"
    "\n"
    "Benchmark: runs one algorithm under each map on each image, one warm-up run and then\n"
    "N timed runs, the maps interleaved round by round, and prints per image and map the\n"
    "median (min - max) of every stage's span, of the copies and of the wall time. Without\n"
    "IMAGE and --sample-size it uses the built-in sample page at 1240x1754 (A4 at 150 dpi).\n"
    "\n"
    "Wisdom (--wisdom FILE): measures every map of each algorithm on each image as\n"
    "docbin-run --map measure does, and stores the fastest in FILE, so that the first pages\n"
    "of later batches (--map auto, the default) need not measure; prints each winner.\n"
    "\n"
    "  -a, --algo NAME         otsu, niblack, sauvola, nick, wolf, hbk, howe, dbs (docbin-run --list-algos);\n"
    "                          with --wisdom, a comma-separated list\n"
    "  -m, --maps MAPS         all (default: every map whose stages have implementations on their\n"
    "                          roles) or maps separated by ';', e.g. 'gpu,cpu,gpu;cpu;stats=cpu'\n"
    "  -n, --runs N            timed runs per image and map (default 5; 3 with --wisdom), after one\n"
    "                          warm-up run\n"
    "  -p, --param NAME=VALUE  set a parameter (repeatable), e.g. --param window=25\n"
    "      --variant NAME      stats variant: sliding (default), global, global-shared, shared\n"
    "      --depth 8|1         the result as an 8-bit image (default), or packed 1 bit a pixel as\n"
    "                          docbin-run makes it for a 1-bit file (on a GPU, packed there)\n"
    "      --sample-size WxH   add the built-in sample page at this size as an image (repeatable)\n"
    "      --csv FILE          write every run: one row per stage, a copies and a total row\n"
    "      --svg FILE          write a box plot of the wall time per map\n"
    "      --cpu-device SPEC   bind the cpu role (default $DOCBIN_CPU_DEVICE, else the first CPU)\n"
    "      --gpu-device SPEC   bind the gpu role (default $DOCBIN_GPU_DEVICE, else the largest GPU)\n"
    "\n"
    "Training (--train-howe DIR --model FILE): fits howe-predict's model to the pages of DIR\n"
    "that have a ground truth (DIR/Originals/ID.EXT with DIR/GT/ID_gt.EXT, or ID.EXT beside\n"
    "ID_gt.EXT; ink dark), from each page's features and the best thi and c of a grid search\n"
    "(11 thi x 33 c, scored by the F-measure); prints a line per page and writes the model to\n"
    "FILE, which howe-predict then uses with DOCBIN_HOWE_MODEL=FILE. --grid FILE also writes\n"
    "every page's grid as CSV: page, thi, c_index (from 1), c, F-measure in %.\n"
    "\n"
    "A progress line is shown on stderr when it is a terminal.\n"
    "\n"
    "Exit status: 0 success; 1 an image could not be read, or an output written; 2 bad\n"
    "arguments (option, algorithm, parameter, variant, map, size); 3 no device for a\n"
    "mapped role, or an OpenCL failure. On failure no output file is created.\n";

enum { MAX_MAPS = 1 << DB_MAX_STAGES };

enum depth { DEPTH_8, DEPTH_1 };
static const char *const depths[] = {[DEPTH_8] = "8", [DEPTH_1] = "1", NULL};

/* Everything the command line asks for. */
typedef struct request {
    const char *algo, *maps, *variant, *csv, *svg, *cpu_spec, *gpu_spec, *wisdom, *train_howe, *model, *grid;
    cli_list params, sizes;
    int runs, depth;
    char **images;
    int n_images;
} request;

#define OPT(...) CLI_OPT(request, __VA_ARGS__)
static const cli_option options[] = {
    OPT("algo", 'a', CLI_STRING, algo),
    OPT("maps", 'm', CLI_STRING, maps),
    OPT("runs", 'n', CLI_INT, runs, .min = 1, .max = DB_PROFILE_MAX_RUNS - 1),
    OPT("param", 'p', CLI_LIST, params),
    OPT("variant", 0, CLI_STRING, variant),
    OPT("depth", 0, CLI_CHOICE, depth, .choices = depths),
    OPT("sample-size", 0, CLI_LIST, sizes),
    OPT("csv", 0, CLI_STRING, csv),
    OPT("svg", 0, CLI_STRING, svg),
    OPT("cpu-device", 0, CLI_STRING, cpu_spec),
    OPT("gpu-device", 0, CLI_STRING, gpu_spec),
    OPT("wisdom", 0, CLI_STRING, wisdom),
    OPT("train-howe", 0, CLI_STRING, train_howe),
    OPT("model", 0, CLI_STRING, model),
    OPT("grid", 0, CLI_STRING, grid),
};

/* The algorithm `name` and its job from the request's parameters and variant. */
static db_status make_job(const request *rq, const char *name, const db_algo **algo, db_job *job)
{
    if (!(*algo = db_algo_find(name)))
        return db_error_status();
    db_job_defaults(*algo, job);
    db_status st = DB_OK;
    for (int i = 0; i < rq->params.n && st == DB_OK; i++)
        st = db_job_set_text(*algo, job, rq->params.v[i]);
    if (st == DB_OK && rq->variant)
        st = db_job_set_variant(*algo, job, rq->variant);
    return st;
}

/* The images: the files, then the sample pages; the default sample page when none. */
typedef struct pages {
    int n;
    db_image **images;
    char **names;
} pages;

static void free_pages(pages *p)
{
    for (int i = 0; i < p->n; i++) {
        if (p->images)
            db_image_free(p->images[i]);
        if (p->names)
            free(p->names[i]);
    }
    free(p->images);
    free(p->names);
}

static db_status load_pages(const request *rq, pages *p)
{
    p->n = rq->n_images + rq->sizes.n ? rq->n_images + rq->sizes.n : 1;
    p->images = calloc((size_t)p->n, sizeof *p->images);
    p->names = calloc((size_t)p->n, sizeof *p->names);
    if (!p->images || !p->names)
        return db_fail(DB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < p->n; i++) {
        int wh[2] = {1240, 1754};
        char name[64];
        if (i < rq->n_images) {
            p->names[i] = strdup(rq->images[i]);
            p->images[i] = db_image_read(rq->images[i]);
        } else {
            if (rq->sizes.n && !cli_size(rq->sizes.v[i - rq->n_images], &wh[0], &wh[1]))
                return db_fail(DB_ERR_USAGE, "--sample-size takes WIDTHxHEIGHT, e.g. 2480x3508 (A4 at 300 dpi), "
                               "not '%s'", rq->sizes.v[i - rq->n_images]);
            snprintf(name, sizeof name, "sample-%dx%d", wh[0], wh[1]);
            p->names[i] = strdup(name);
            p->images[i] = db_sample_page(wh[0], wh[1], 1);
        }
        if (!p->images[i])
            return db_error_status();
        if (!p->names[i])
            return db_fail(DB_ERR_NOMEM, "out of memory");
    }
    return DB_OK;
}

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
        return CLI_OK;
    }
    char list[1024];
    if (strlen(text) >= sizeof list)
        return cli_usage("--maps list too long");
    strcpy(list, text);
    char *save;
    for (char *t = strtok_r(list, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        if (*n_maps == MAX_MAPS)
            return cli_usage("too many maps in --maps");
        db_status st = db_map_parse(algo, t, &maps[*n_maps]);
        if (st != DB_OK)
            return cli_fail(st);
        (*n_maps)++;
    }
    if (!*n_maps)
        return cli_usage("--maps names no map; give 'all' or maps separated by ';'");
    return CLI_OK;
}

static void print_summary(const db_bench *b, const db_job *job)
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
            for (int s = 0, last; s < algo->n_stages; s = last + 1) /* a fused step is one row */
                printf("  %-12s %-4s %10.3f ms (%.3f - %.3f)\n", db_run_step(algo, &b->maps[m], job, s, &last)->name,
                       db_role_name(b->maps[m].role[s]), stage[s].median, stage[s].min, stage[s].max);
            printf("  %-12s %-4s %10.3f ms (%.3f - %.3f)\n", "copies", "-", copies.median, copies.min, copies.max);
            printf("  %-12s %-4s %10.3f ms (%.3f - %.3f)\n", "total", "-", total.median, total.min, total.max);
        }
}

/* The benchmark: every chosen map on every image. */
static int bench(const request *rq)
{
    const db_algo *algo;
    db_job job;
    db_status st = make_job(rq, rq->algo, &algo, &job);
    if (st != DB_OK)
        return cli_fail(st);
    static db_map maps[MAX_MAPS];
    int n_maps, code = choose_maps(algo, rq->maps ? rq->maps : "all", maps, &n_maps);
    if (code != CLI_OK)
        return code;
    pages p = {0};
    db_context *ctx = NULL;
    st = db_context_open(rq->cpu_spec, rq->gpu_spec, &ctx);
    for (int m = 0; m < n_maps && st == DB_OK; m++)
        for (int s = 0; s < maps[m].n && st == DB_OK; s++)
            if (!db_context_device(ctx, maps[m].role[s])) {
                char text[128];
                db_map_format(&maps[m], text, sizeof text);
                st = db_fail(DB_ERR_DEVICE, "map %s puts stage %s on %s, but %s%s", text, algo->stages[s].name,
                             db_role_name(maps[m].role[s]), db_error_message(),
                             rq->maps ? "" : "; or choose maps with --maps");
            }
    /* Read with the devices bound, the pages lie in pinned staging memory, as a batch's do. */
    if (st == DB_OK)
        st = load_pages(rq, &p);
    db_bench b = {0};
    if (st == DB_OK) {
        db_bench_options o = {.algo = algo, .job = &job, .maps = maps, .n_maps = n_maps,
                              .images = (const db_image *const *)p.images, .image_names = (const char *const *)p.names,
                              .n_images = p.n, .runs = rq->runs ? rq->runs : 5, .bitmap = rq->depth == DEPTH_1,
                              .progress = isatty(STDERR_FILENO) ? cli_progress : NULL};
        st = db_bench_run(ctx, &o, &b);
        cli_progress_clear();
    }
    /* Files last, so that a failure before them leaves none; a failed SVG takes the CSV with it. */
    if (st == DB_OK)
        print_summary(&b, &job);
    if (st == DB_OK && rq->csv)
        st = db_bench_write_csv(&b, rq->csv);
    if (st == DB_OK && rq->svg && (st = db_bench_write_svg(&b, rq->svg)) != DB_OK && rq->csv)
        unlink(rq->csv);
    code = st == DB_OK ? CLI_OK : cli_fail(st);
    db_bench_free(&b);
    free_pages(&p);
    db_context_close(ctx);
    return code;
}

/* --wisdom: measure every algorithm on every image and store the winners. */
static int fill_wisdom(const request *rq)
{
    if (rq->maps || rq->csv || rq->svg)
        return cli_usage("--wisdom measures every map; --maps, --csv and --svg are for a benchmark");
    char list[512];
    if (snprintf(list, sizeof list, "%s", rq->algo) >= (int)sizeof list)
        return cli_usage("--algo list too long");
    pages p = {0};
    db_context *ctx = NULL;
    db_plan *plan = malloc(sizeof *plan);
    db_status st = plan ? load_pages(rq, &p) : db_fail(DB_ERR_NOMEM, "out of memory");
    if (st == DB_OK)
        st = db_context_open(rq->cpu_spec, rq->gpu_spec, &ctx);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name && st == DB_OK; name = strtok_r(NULL, ",", &save)) {
        const db_algo *algo;
        db_job job;
        st = make_job(rq, name, &algo, &job);
        for (int i = 0; i < p.n && st == DB_OK; i++) {
            st = db_plan_measure(ctx, algo, &job, p.images[i], rq->runs ? rq->runs : 3, rq->wisdom, plan, NULL);
            if (st == DB_OK)
                db_plan_explain(plan, algo, stdout);
        }
    }
    int code = st == DB_OK ? CLI_OK : cli_fail(st);
    free_pages(&p);
    free(plan);
    db_context_close(ctx);
    return code;
}

/* --train-howe: howe-predict's model from ground-truthed pages. */
static int train_howe(const request *rq)
{
    if (!rq->model)
        return cli_usage("--train-howe needs --model FILE, where the model is written");
    if (rq->algo || rq->maps || rq->csv || rq->svg || rq->wisdom || rq->n_images || rq->sizes.n)
        return cli_usage("--train-howe takes a directory, --model and --grid only (and the device options)");
    db_context *ctx = NULL;
    db_status st = db_check_writable(rq->model, "model", NULL);
    if (st == DB_OK && rq->grid)
        st = db_check_writable(rq->grid, "grid", NULL);
    if (st == DB_OK)
        st = db_context_open(rq->cpu_spec, rq->gpu_spec, &ctx);
    if (st == DB_OK)
        st = db_howe_train(ctx, rq->train_howe, rq->model, rq->grid, stdout);
    db_context_close(ctx);
    return st == DB_OK ? CLI_OK : cli_fail(st);
}

int main(int argc, char **argv)
{
    cli_prog = "docbin-bench";
    request rq = {0};
    int first, code = cli_parse(argc, argv, usage_text, options, DB_LEN(options), &rq, &first);
    if (code >= 0)
        return code;
    rq.images = argv + first;
    rq.n_images = argc - first;
    if (rq.train_howe)
        return train_howe(&rq);
    if (rq.model || rq.grid)
        return cli_usage("--model and --grid go with --train-howe");
    if (!rq.algo)
        return cli_usage("--algo is required");
    if (rq.wisdom)
        return fill_wisdom(&rq);
    if (strchr(rq.algo, ','))
        return cli_usage("a benchmark takes one algorithm; several are for --wisdom");
    return bench(&rq);
}
