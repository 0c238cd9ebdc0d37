/*
** bench.c — the benchmark matrix, its summaries and its CSV file.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "planner/bench.h"
#include "planner/map.h"
#include "runtime/profile.h"
#include "runtime/sched.h"
#include "runtime/util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile of sorted x[0..n-1], interpolated at position p*(n-1). */
static double quantile(const double *x, int n, double p)
{
    double pos = p * (n - 1);
    int lo = (int)floor(pos);
    if (lo >= n - 1)
        return x[n - 1];
    double frac = pos - lo;
    return x[lo] + frac * (x[lo + 1] - x[lo]);
}

db_status db_box_stats(const double *values, int n, db_box *box)
{
    if (n < 1)
        return db_fail(DB_ERR_USAGE, "box-plot figures need at least one value");
    for (int i = 0; i < n; i++)
        if (isnan(values[i]))
            return db_fail(DB_ERR_USAGE, "box-plot value %d is not a number", i);
    double *x = malloc((size_t)n * sizeof *x);
    if (!x)
        return db_fail(DB_ERR_NOMEM, "out of memory sorting %d values", n);
    memcpy(x, values, (size_t)n * sizeof *x);
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    box->n = n;
    box->min = x[0];
    box->q1 = quantile(x, n, 0.25);
    box->median = quantile(x, n, 0.5);
    box->q3 = quantile(x, n, 0.75);
    box->max = x[n - 1];
    free(x);
    return DB_OK;
}

static size_t run_index(const db_bench *b, int image, int map, int run)
{
    return ((size_t)image * (size_t)b->n_maps + (size_t)map) * (size_t)(b->runs + 1) + (size_t)run;
}

double db_bench_stage_ms(const db_bench *b, int image, int map, int run, int stage)
{
    return b->stage_ms[run_index(b, image, map, run) * DB_MAX_STAGES + (size_t)stage];
}

double db_bench_wall_ms(const db_bench *b, int image, int map, int run)
{
    return b->wall_ms[run_index(b, image, map, run)];
}

double db_bench_copy_ms(const db_bench *b, int image, int map, int run)
{
    return b->copy_ms[run_index(b, image, map, run)];
}

void db_bench_free(db_bench *b)
{
    if (b->image_names)
        for (int i = 0; i < b->n_images; i++)
            free(b->image_names[i]);
    free(b->image_names);
    free(b->maps);
    free(b->width);
    free(b->height);
    free(b->channels);
    free(b->stage_ms);
    free(b->wall_ms);
    free(b->copy_ms);
    free(b->reports);
    free(b->item_copies);
    free(b->stolen_pct);
    memset(b, 0, sizeof *b);
}

static db_status bench_alloc(db_bench *b, const db_bench_options *o)
{
    memset(b, 0, sizeof *b);
    b->algo = o->algo;
    b->n_maps = o->n_maps;
    b->n_images = o->n_images;
    b->runs = o->runs;
    b->order = o->order;
    size_t n_runs = (size_t)o->n_images * (size_t)o->n_maps * (size_t)(o->runs + 1);
    b->maps = malloc((size_t)o->n_maps * sizeof *b->maps);
    b->image_names = calloc((size_t)o->n_images, sizeof *b->image_names);
    b->width = malloc((size_t)o->n_images * sizeof *b->width);
    b->height = malloc((size_t)o->n_images * sizeof *b->height);
    b->channels = malloc((size_t)o->n_images * sizeof *b->channels);
    b->stage_ms = calloc(n_runs * DB_MAX_STAGES, sizeof *b->stage_ms);
    b->wall_ms = calloc(n_runs, sizeof *b->wall_ms);
    b->copy_ms = calloc(n_runs, sizeof *b->copy_ms);
    b->reports = calloc((size_t)o->n_images * (size_t)o->n_maps, sizeof *b->reports);
    b->stolen_pct = malloc((size_t)o->n_images * sizeof *b->stolen_pct);
    b->item_copies = calloc(n_runs * DB_HISTORY_MAX_COPIES, sizeof *b->item_copies);
    if (!b->maps || !b->image_names || !b->width || !b->height || !b->channels || !b->stage_ms || !b->wall_ms ||
        !b->copy_ms || !b->reports || !b->stolen_pct || !b->item_copies)
        goto nomem;
    memcpy(b->maps, o->maps, (size_t)o->n_maps * sizeof *b->maps);
    for (int i = 0; i < o->n_images; i++) {
        if (!(b->image_names[i] = strdup(o->image_names[i])))
            goto nomem;
        b->width[i] = o->images[i]->width;
        b->height[i] = o->images[i]->height;
        b->channels[i] = o->images[i]->channels;
        b->stolen_pct[i] = -1;
    }
    return DB_OK;
nomem:
    db_bench_free(b);
    return db_fail(DB_ERR_NOMEM, "out of memory for the measurements of %d images x %d maps", o->n_images,
                   o->n_maps);
}

/* The entry of item `item`'s copies to or from `role` in direction `dir` of run `at` (run_index). */
static db_bench_copy *item_copy(const db_bench *b, size_t at, int item, db_role role, db_transfer_dir dir)
{
    return &b->item_copies[((at * DB_MAX_ITEMS + (size_t)item) * DB_ROLE_COUNT + role) * DB_TRANSFER_DIR_COUNT + dir];
}

/* Copies every run's stage spans, copy time (in all and by item) and wall time of one cell out of its profile. */
static db_status collect(db_bench *b, int image, int map, const db_profile *prof)
{
    const db_algo *algo = b->algo;
    enum { MAX_ROWS = 4 * DB_MAX_STAGES + 4 * DB_MAX_ITEMS };
    db_profile_row rows[MAX_ROWS];
    for (int run = 0; run <= b->runs; run++) {
        int n = db_profile_run_rows(prof, run, rows, MAX_ROWS);
        if (n > MAX_ROWS)
            n = MAX_ROWS;
        size_t at = run_index(b, image, map, run);
        for (int s = 0; s < algo->n_stages; s++)
            for (int i = 0; i < n; i++)
                if (rows[i].kind == DB_REC_KERNEL && rows[i].role == b->maps[map].role[s] &&
                    !strcmp(rows[i].stage, algo->stages[s].name))
                    b->stage_ms[at * DB_MAX_STAGES + (size_t)s] = rows[i].span_ms;
        for (int i = 0; i < n; i++) {
            if (rows[i].kind == DB_REC_KERNEL)
                continue;
            b->copy_ms[at] += rows[i].busy_ms;
            for (int item = 0; item < algo->n_items && item < DB_MAX_ITEMS && rows[i].bytes; item++)
                if (!strcmp(rows[i].stage, algo->items[item].name)) {
                    db_bench_copy *c = item_copy(b, at, item, rows[i].role,
                                                 rows[i].kind == DB_REC_TO_DEVICE ? DB_H2D : DB_D2H);
                    c->bytes += (double)rows[i].bytes;
                    c->ms += rows[i].busy_ms;
                }
        }
        b->wall_ms[at] = db_profile_run_wall_ms(prof, run);
    }
    return DB_OK;
}

/* The k-th run (0-based) of one image's maps in `order`, each map having
** per_map runs: which map it is, and which of that map's runs (0-based). */
static void nth_run(db_bench_order order, int n_maps, int per_map, int k, int *map, int *run)
{
    *map = order == DB_BENCH_GROUPED ? k / per_map : k % n_maps;
    *run = order == DB_BENCH_GROUPED ? k % per_map : k / n_maps;
}

/* One run of cell (image i, map m) into prof; the warm-up run's report is kept. */
static db_status run_cell(db_context *ctx, const db_bench_options *o, db_bench *b, int i, int m, int run,
                          int step, db_profile *prof)
{
    char map_text[128];
    db_map_format(&o->maps[m], map_text, sizeof map_text);
    if (o->progress) {
        char what[512];
        snprintf(what, sizeof what, "%s %s %s run %d/%d", o->algo->name, map_text, o->image_names[i], run + 1,
                 o->runs + 1);
        o->progress(o->user, step, o->n_images * o->n_maps * (o->runs + 1), what);
    }
    db_image *out = NULL;
    db_status st = db_run(ctx, o->algo, &o->maps[m], o->job, o->images[i], &out,
                          run == 0 ? &b->reports[(size_t)i * o->n_maps + m] : NULL, prof);
    db_image_free(out);
    return st;
}

db_status db_bench_run(db_context *ctx, const db_bench_options *o, db_bench *b)
{
    if (o->runs < 1 || o->runs >= DB_PROFILE_MAX_RUNS)
        return db_fail(DB_ERR_USAGE, "a benchmark takes 1 to %d timed runs, not %d", DB_PROFILE_MAX_RUNS - 1,
                       o->runs);
    if (o->n_maps < 1 || o->n_images < 1)
        return db_fail(DB_ERR_USAGE, "a benchmark needs at least one map and one image");
    db_status st = bench_alloc(b, o);
    if (st != DB_OK)
        return st;
    db_profile **prof = calloc((size_t)o->n_maps, sizeof *prof);
    if (!prof) {
        db_bench_free(b);
        return db_fail(DB_ERR_NOMEM, "out of memory for %d profiles", o->n_maps);
    }
    const int cell_runs = o->runs + 1;
    int step = 0, failed_map = 0;
    for (int i = 0; i < o->n_images && st == DB_OK; i++) {
        for (int m = 0; m < o->n_maps && st == DB_OK; m++)
            if (!(prof[m] = db_profile_new()))
                st = db_fail(DB_ERR_NOMEM, "out of memory for a profile");
        db_cpu_ticks before, after;
        bool ticks = db_cpu_ticks_now(&before);
        /* In o->order: interleaved, the warm-up of every map and then rounds of one timed run of each. */
        for (int k = 0; k < o->n_maps * cell_runs && st == DB_OK; k++) {
            int m, run;
            nth_run(o->order, o->n_maps, cell_runs, k, &m, &run);
            st = run_cell(ctx, o, b, i, m, run, ++step, prof[m]);
            failed_map = m;
        }
        if (ticks && db_cpu_ticks_now(&after))
            b->stolen_pct[i] = db_cpu_stolen_pct(&before, &after);
        for (int m = 0; m < o->n_maps && st == DB_OK; m++) {
            if (prof[m]->runs != cell_runs) {
                char map_text[128];
                db_map_format(&o->maps[m], map_text, sizeof map_text);
                st = db_fail(DB_ERR_CL, "%s, map %s, %s: %d runs were profiled, not %d", o->algo->name, map_text,
                             o->image_names[i], prof[m]->runs, cell_runs);
                failed_map = m;
            }
            if (st == DB_OK)
                st = collect(b, i, m, prof[m]);
        }
        for (int m = 0; m < o->n_maps; m++) {
            db_profile_free(prof[m]);
            prof[m] = NULL;
        }
        if (st != DB_OK) {
            char why[1024], map_text[128];
            snprintf(why, sizeof why, "%s", db_error_message());
            db_map_format(&o->maps[failed_map], map_text, sizeof map_text);
            st = db_fail(st, "benchmark of %s, map %s, image %s: %s", o->algo->name, map_text, o->image_names[i],
                         why);
        }
    }
    free(prof);
    if (st != DB_OK)
        db_bench_free(b);
    return st;
}

db_status db_bench_summary(const db_bench *b, int image, int map, db_box *stage, db_box *copies, db_box *total)
{
    double v[DB_PROFILE_MAX_RUNS];
    for (int s = 0; s < b->algo->n_stages; s++) {
        for (int r = 1; r <= b->runs; r++)
            v[r - 1] = db_bench_stage_ms(b, image, map, r, s);
        db_status st = db_box_stats(v, b->runs, &stage[s]);
        if (st != DB_OK)
            return st;
    }
    for (int r = 1; r <= b->runs; r++)
        v[r - 1] = db_bench_copy_ms(b, image, map, r);
    db_status st = db_box_stats(v, b->runs, copies);
    if (st != DB_OK)
        return st;
    for (int r = 1; r <= b->runs; r++)
        v[r - 1] = db_bench_wall_ms(b, image, map, r);
    return db_box_stats(v, b->runs, total);
}

db_status db_bench_history(const db_bench *b, int image, int skip, const db_context *ctx, const db_job *job,
                           db_history *history)
{
    const db_algo *algo = b->algo;
    char keys[DB_ROLE_COUNT][17] = {{0}};
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (ctx->role[r])
            snprintf(keys[r], sizeof keys[r], "%s", ctx->role[r]->info.key);
    db_status st = DB_OK;
    /* The timed runs in the order they ran: those of runs 1..runs, the warm-ups left out. */
    for (int k = 0; k < b->n_maps * b->runs && st == DB_OK; k++) {
        int m, run;
        nth_run(b->order, b->n_maps, b->runs, k, &m, &run);
        run++;
        if (m == skip)
            continue;
        db_profile_row rows[DB_MAX_STAGES];
        int n_rows = 0;
        for (int s = 0; s < algo->n_stages; s++) {
            double ms = db_bench_stage_ms(b, image, m, run, s);
            if (ms > 0) {
                db_profile_row *row = &rows[n_rows++];
                *row = (db_profile_row){.kind = DB_REC_KERNEL, .role = b->maps[m].role[s], .span_ms = ms};
                snprintf(row->stage, sizeof row->stage, "%s", algo->stages[s].name);
            }
        }
        db_history_run out[DB_MAX_STAGES];
        int n = 0;
        st = db_history_rows(rows, n_rows, (const char (*)[17])keys, algo, job, &b->maps[m], b->width[image],
                             b->height[image], b->channels[image], &b->reports[(size_t)image * b->n_maps + m], out, &n);
        if (st == DB_OK)
            st = db_history_add(history, out, n);
        /* The run's copies, as db_profile_run_rows would give them. */
        db_profile_row copy_rows[DB_HISTORY_MAX_COPIES];
        int n_copy_rows = 0;
        size_t at = run_index(b, image, m, run);
        for (int item = 0; item < algo->n_items && item < DB_MAX_ITEMS && b->item_copies; item++)
            for (int r = 0; r < DB_ROLE_COUNT; r++)
                for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++) {
                    const db_bench_copy *c = item_copy(b, at, item, (db_role)r, (db_transfer_dir)d);
                    if (!(c->bytes > 0))
                        continue;
                    db_profile_row *row = &copy_rows[n_copy_rows++];
                    *row = (db_profile_row){.kind = d == DB_H2D ? DB_REC_TO_DEVICE : DB_REC_TO_HOST,
                                            .role = (db_role)r, .busy_ms = c->ms, .bytes = (size_t)c->bytes};
                    snprintf(row->stage, sizeof row->stage, "%s", algo->items[item].name);
                }
        db_history_copy copies[DB_HISTORY_MAX_COPIES];
        int n_copies = 0;
        db_history_copy_rows(copy_rows, n_copy_rows, (const char (*)[17])keys, algo, copies, &n_copies);
        if (st == DB_OK)
            st = db_history_add_copies(history, copies, n_copies);
    }
    return st;
}

void db_bench_set_page_work(const db_bench *b, int image, int skip, db_plan_costs *costs)
{
    for (int m = 0; m < b->n_maps; m++)
        if (m != skip)
            db_plan_costs_set_page_work(costs, &b->maps[m], &b->reports[(size_t)image * b->n_maps + m]);
}

db_status db_bench_predict_after_others(const db_bench *b, int image, int map, const db_calib *calib,
                                        const db_history *history, const db_context *ctx, const db_job *job,
                                        const db_image *img, db_plan_costs *costs, double *ms)
{
    db_history h;
    db_history_init(&h);
    db_status st = db_history_add(&h, history->runs, history->n);
    if (st == DB_OK)
        st = db_history_add_copies(&h, history->copies, history->n_copies);
    if (st == DB_OK)
        st = db_bench_history(b, image, map, ctx, job, &h);
    if (st == DB_OK)
        st = db_plan_costs_from_calib(costs, calib, &h, ctx, b->algo, job, img->width, img->height, img->channels);
    db_history_free(&h);
    if (st != DB_OK)
        return st;
    db_bench_set_page_work(b, image, map, costs);
    db_plan_sim sim;
    db_plan_simulate(costs, &b->maps[map], &sim);
    *ms = sim.latency_ms;
    return DB_OK;
}

/* Writes a CSV field, quoted when it holds a comma, a quote or a line break. */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_prefix(FILE *f, const db_bench *b, int image, const char *map_text, int run)
{
    fprintf(f, "%s,", b->algo->name);
    csv_field(f, b->image_names[image]);
    fprintf(f, ",%d,%d,", b->width[image], b->height[image]);
    csv_field(f, map_text);
    fprintf(f, ",%d,%d,", run, run == 0);
}

db_status db_bench_write_csv(const db_bench *b, const char *path)
{
    db_atomic_file af;
    db_status st = db_atomic_open(&af, path);
    if (st != DB_OK)
        return st;
    FILE *f = af.f;
    fprintf(f, "algo,image,width,height,map,run,warmup,stage,role,ms\n");
    for (int i = 0; i < b->n_images; i++)
        for (int m = 0; m < b->n_maps; m++) {
            char map_text[128];
            db_map_format(&b->maps[m], map_text, sizeof map_text);
            for (int r = 0; r <= b->runs; r++) {
                for (int s = 0; s < b->algo->n_stages; s++) {
                    csv_prefix(f, b, i, map_text, r);
                    /* %.17g: the file holds the exact figures the summaries were computed from. */
                    fprintf(f, "%s,%s,%.17g\n", b->algo->stages[s].name, db_role_name(b->maps[m].role[s]),
                            db_bench_stage_ms(b, i, m, r, s));
                }
                csv_prefix(f, b, i, map_text, r);
                fprintf(f, "copies,-,%.17g\n", db_bench_copy_ms(b, i, m, r));
                csv_prefix(f, b, i, map_text, r);
                fprintf(f, "total,-,%.17g\n", db_bench_wall_ms(b, i, m, r));
            }
        }
    if (ferror(f)) {
        int e = errno;
        db_atomic_abort(&af);
        return db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return db_atomic_commit(&af);
}
