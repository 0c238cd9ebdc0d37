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
    free(b->stage_ms);
    free(b->copy_ms);
    free(b->wall_ms);
    memset(b, 0, sizeof *b);
}

static db_status bench_alloc(db_bench *b, const db_bench_options *o)
{
    memset(b, 0, sizeof *b);
    b->algo = o->algo;
    b->n_maps = o->n_maps;
    b->n_images = o->n_images;
    b->runs = o->runs;
    size_t n_runs = (size_t)o->n_images * (size_t)o->n_maps * (size_t)(o->runs + 1);
    b->maps = malloc((size_t)o->n_maps * sizeof *b->maps);
    b->image_names = calloc((size_t)o->n_images, sizeof *b->image_names);
    b->width = malloc((size_t)o->n_images * sizeof *b->width);
    b->height = malloc((size_t)o->n_images * sizeof *b->height);
    b->stage_ms = calloc(n_runs * DB_MAX_STAGES, sizeof *b->stage_ms);
    b->copy_ms = calloc(n_runs, sizeof *b->copy_ms);
    b->wall_ms = calloc(n_runs, sizeof *b->wall_ms);
    if (!b->maps || !b->image_names || !b->width || !b->height || !b->stage_ms || !b->copy_ms || !b->wall_ms)
        goto nomem;
    memcpy(b->maps, o->maps, (size_t)o->n_maps * sizeof *b->maps);
    for (int i = 0; i < o->n_images; i++) {
        if (!(b->image_names[i] = strdup(o->image_names[i])))
            goto nomem;
        b->width[i] = o->images[i]->width;
        b->height[i] = o->images[i]->height;
    }
    return DB_OK;
nomem:
    db_bench_free(b);
    return db_fail(DB_ERR_NOMEM, "out of memory for the measurements of %d images x %d maps", o->n_images,
                   o->n_maps);
}

/* Copies every run's stage spans, copy time and wall time of one cell out of
** its profile. A fused step's time goes to its first stage (db_run_step). */
static void collect(db_bench *b, const db_job *job, int image, int map, const db_profile *prof)
{
    const db_algo *algo = b->algo;
    enum { MAX_ROWS = 4 * DB_MAX_STAGES + 4 * DB_MAX_ITEMS };
    db_profile_row rows[MAX_ROWS];
    for (int run = 0; run <= b->runs; run++) {
        int n = db_profile_run_rows(prof, run, rows, MAX_ROWS);
        if (n > MAX_ROWS)
            n = MAX_ROWS;
        size_t at = run_index(b, image, map, run);
        for (int i = 0; i < n; i++) {
            if (rows[i].kind != DB_REC_KERNEL) {
                b->copy_ms[at] += rows[i].busy_ms;
                continue;
            }
            for (int s = 0, last; s < algo->n_stages; s = last + 1) {
                const db_stage *step = db_run_step(algo, &b->maps[map], job, s, &last);
                if (rows[i].role == b->maps[map].role[s] && !strcmp(rows[i].stage, step->name))
                    b->stage_ms[at * DB_MAX_STAGES + (size_t)s] = rows[i].span_ms;
            }
        }
        b->wall_ms[at] = db_profile_run_wall_ms(prof, run);
    }
}

/* One run of cell (image i, map m) into prof. */
static db_status run_cell(db_context *ctx, const db_bench_options *o, int i, int m, int run, int step,
                          db_profile *prof)
{
    if (o->progress) {
        char what[512], map_text[128];
        db_map_format(&o->maps[m], map_text, sizeof map_text);
        snprintf(what, sizeof what, "%s %s %s run %d/%d", o->algo->name, map_text, o->image_names[i], run + 1,
                 o->runs + 1);
        o->progress(o->user, step, o->n_images * o->n_maps * (o->runs + 1), what);
    }
    if (o->bitmap) {
        db_bitmap *bits = NULL;
        db_status st = db_run_bitmap(ctx, o->algo, &o->maps[m], o->job, o->images[i], false, &bits, NULL, prof);
        db_bitmap_free(bits);
        return st;
    }
    db_image *out = NULL;
    db_status st = db_run(ctx, o->algo, &o->maps[m], o->job, o->images[i], &out, NULL, prof);
    if (st == DB_OK && o->keep && !*o->keep && i == 0)
        *o->keep = out;
    else
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
        /* The warm-up of every map, then rounds of one timed run of each. */
        for (int k = 0; k < o->n_maps * cell_runs && st == DB_OK; k++) {
            failed_map = k % o->n_maps;
            st = run_cell(ctx, o, i, failed_map, k / o->n_maps, ++step, prof[failed_map]);
        }
        for (int m = 0; m < o->n_maps && st == DB_OK; m++) {
            failed_map = m;
            if (prof[m]->runs != cell_runs)
                st = db_fail(DB_ERR_CL, "%d runs were profiled, not %d", prof[m]->runs, cell_runs);
            else
                collect(b, o->job, i, m, prof[m]);
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
    if (st != DB_OK) {
        db_bench_free(b);
        if (o->keep) {
            db_image_free(*o->keep);
            *o->keep = NULL;
        }
    }
    return st;
}

/* The box of one figure over the timed runs of cell (image, map). */
static db_status cell_box(const db_bench *b, int image, int map, int stage, db_box *box)
{
    double v[DB_PROFILE_MAX_RUNS];
    for (int r = 1; r <= b->runs; r++)
        v[r - 1] = stage >= 0 ? db_bench_stage_ms(b, image, map, r, stage)
                   : stage == -1 ? db_bench_copy_ms(b, image, map, r) : db_bench_wall_ms(b, image, map, r);
    return db_box_stats(v, b->runs, box);
}

db_status db_bench_wall_box(const db_bench *b, int image, int map, db_box *total)
{
    return cell_box(b, image, map, -2, total);
}

db_status db_bench_summary(const db_bench *b, int image, int map, db_box *stage, db_box *copies, db_box *total)
{
    db_status st = DB_OK;
    for (int s = 0; s < b->algo->n_stages && st == DB_OK; s++)
        st = cell_box(b, image, map, s, &stage[s]);
    if (st == DB_OK)
        st = cell_box(b, image, map, -1, copies);
    return st == DB_OK ? db_bench_wall_box(b, image, map, total) : st;
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
