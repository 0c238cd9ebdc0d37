/*
** calibrate.c — timing stages and copies, fitting their models, filling a calibration.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "planner/calibrate.h"
#include "planner/map.h"
#include "planner/plan.h"
#include "runtime/buffer.h"
#include "runtime/profile.h"
#include "runtime/sample.h"
#include "runtime/sched.h"
#include "runtime/util.h"

void db_calibrate_defaults(db_calibrate_options *o)
{
    static const int a4[][2] = {{620, 877}, {1240, 1754}, {2480, 3508}};
    memset(o, 0, sizeof *o);
    o->n_sizes = 3;
    for (int i = 0; i < 3; i++) {
        o->sizes[i].width = a4[i][0];
        o->sizes[i].height = a4[i][1];
    }
    o->n_transfer_sizes = 4;
    for (int i = 0; i < 4; i++)
        o->transfer_bytes[i] = (size_t)1 << (20 + 2 * i);
    o->runs = 5;
}

/* A stage implementation that several algorithms share with one variant (the
** local methods' gray and stats) costs the same in each, so one model serves
** them all: fitted to the per-size medians of its samples from each algorithm,
** as StarPU keys a performance model by the codelet, not by the graph it runs
** in. Timed one algorithm after another, the four local methods' stats on PoCL
** gave 0.57 to 0.82 ms a megapixel in one calibration
** (bench/results/planner-h100.md, run 36). A stage whose cost follows its work
** is fitted at once: none is shared, and its samples are scaled by its work.
** The host's share of a run is pooled the same way over the algorithms of one
** host group (db_algo.host_group), whose runs make the same host work: timed
** one after another, Niblack's, Sauvola's and NICK's rows of an all-GPU run
** at 2480x3508 gave 0.70 to 2.84 ms in run 40 and 0.49 to 0.98 in run 47's
** second calibration. */
enum { MAX_POOLS = 512, MAX_MEMBERS = 16 };

typedef struct pool {
    db_stage_fn impl;      /* with group, and row's stage, device, role, variant, kernel hash and channels: the key */
    const char *group;     /* the host's share: its algorithms' host group (db_algo.host_group); NULL for a stage */
    db_calib_stage row;    /* the row to put for each member, its algo and model filled in */
    int n;                 /* members */
    char algo[MAX_MEMBERS][DB_CALIB_NAME];
    db_cost_sample samples[MAX_MEMBERS][DB_CALIBRATE_MAX_SIZES];
    size_t staged[MAX_MEMBERS][DB_CALIBRATE_MAX_SIZES][2]; /* the host's share: the page's and the result's
                                                              bytes, whose staging copies its samples hold */
} pool;

/* Shared state of one calibration: the options, the progress count, the pages,
** the samples of the stages without work, pooled (above). */
typedef struct calib_state {
    db_context *ctx;
    const db_calibrate_options *o;
    int step, steps;
    db_image *pages[DB_CALIBRATE_MAX_SIZES];     /* RGB */
    db_image *gray[DB_CALIBRATE_MAX_SIZES];      /* the same pages in gray */
    db_image *varied[DB_CALIBRATE_MAX_SIZES];    /* varied RGB pages (db_stage_work.varied), made when needed */
    db_image *varied_gray[DB_CALIBRATE_MAX_SIZES];
    db_calibrate_checks checks;        /* the host's speed at each checkpoint so far */
    db_cpu_ticks ticks;                /* the machine's CPU time at the last checkpoint */
    bool have_ticks;                   /* whether `ticks` could be read */
    pool *pools;     /* MAX_POOLS of them */
    int n_pools;
} calib_state;

/* Adds `samples` of the stage row `row` (of one algorithm), whose implementation
** is `impl`, or for the host's share whose algorithm's host group is `group`,
** to the pool of its key, opening the pool if it is the first. The host's
** share comes with `staged`: per size, the bytes of the page and of the result
** whose staging copies its samples still hold (NULL for a stage). */
static db_status pool_add(calib_state *c, db_stage_fn impl, const char *group, const db_calib_stage *row,
                          const db_cost_sample *samples, const size_t (*staged)[2])
{
    pool *p = NULL;
    for (int i = 0; i < c->n_pools && !p; i++) {
        pool *q = &c->pools[i];
        if (q->impl == impl && !q->group == !group && (!group || !strcmp(q->group, group)) &&
            !strcmp(q->row.stage, row->stage) && q->row.role == row->role && q->row.channels == row->channels &&
            !strcmp(q->row.device, row->device) && !strcmp(q->row.variant, row->variant) &&
            !strcmp(q->row.kernel_hash, row->kernel_hash))
            p = q;
    }
    if (!p) {
        if (c->n_pools == MAX_POOLS)
            return db_fail(DB_ERR_USAGE, "more than %d stage rows to calibrate at once; calibrate fewer "
                           "algorithms (--algo) a time", MAX_POOLS);
        p = &c->pools[c->n_pools++];
        p->impl = impl;
        p->group = group;
        p->row = *row;
        p->n = 0;
    }
    if (p->n == MAX_MEMBERS)
        return db_fail(DB_ERR_USAGE, "more than %d algorithms share stage %s; calibrate fewer algorithms "
                       "(--algo) a time", MAX_MEMBERS, row->stage);
    snprintf(p->algo[p->n], sizeof p->algo[p->n], "%s", row->algo);
    memcpy(p->samples[p->n], samples, sizeof p->samples[p->n]);
    if (staged)
        memcpy(p->staged[p->n], staged, sizeof p->staged[p->n]);
    else
        memset(p->staged[p->n], 0, sizeof p->staged[p->n]);
    p->n++;
    return DB_OK;
}

double db_calibrate_host_net(double gross_ms, const db_transfer_model *staging, size_t in_bytes, size_t out_bytes)
{
    double ms = gross_ms - db_transfer_predict(staging, (double)in_bytes) -
                db_transfer_predict(staging, (double)out_bytes);
    return ms > 0 ? ms : 0;
}

/* Fits each pool to the per-size medians of its members' samples and puts
** that model in every member's row, the host's share net of out's staging
** row (db_calibrate_host_net). */
static db_status pools_fit(calib_state *c, db_calib *out)
{
    const int n_sizes = c->o->n_sizes;
    for (int i = 0; i < c->n_pools; i++) {
        pool *p = &c->pools[i];
        db_cost_sample pooled[DB_CALIBRATE_MAX_SIZES];
        db_status st = DB_OK;
        for (int k = 0; k < n_sizes && st == DB_OK; k++) {
            double ms[MAX_MEMBERS], of_ms[MAX_MEMBERS];
            for (int m = 0; m < p->n; m++) {
                ms[m] = p->samples[m][k].ms;
                of_ms[m] = p->samples[m][k].of_ms;
                if (p->group && out->has_staging)
                    ms[m] = db_calibrate_host_net(ms[m], &out->staging, p->staged[m][k][0], p->staged[m][k][1]);
            }
            db_box a, b;
            st = db_box_stats(ms, p->n, &a);
            if (st == DB_OK)
                st = db_box_stats(of_ms, p->n, &b);
            pooled[k] = (db_cost_sample){.size = p->samples[0][k].size, .ms = a.median, .of_ms = b.median};
        }
        db_calib_stage e = p->row;
        if (st == DB_OK)
            st = db_cost_fit(pooled, n_sizes, &e.model);
        for (int m = 0; m < p->n && st == DB_OK; m++) {
            snprintf(e.algo, sizeof e.algo, "%s", p->algo[m]);
            st = db_calib_put_stage(out, &e);
        }
        if (st != DB_OK) {
            char why[1024];
            snprintf(why, sizeof why, "%s", db_error_message());
            return db_fail(st, "calibrating stage %s/%s on %s: %s", p->algo[0], p->row.stage,
                           db_role_name(p->row.role), why);
        }
    }
    return DB_OK;
}

static void progress(calib_state *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void progress(calib_state *c, const char *fmt, ...)
{
    c->step++;
    if (!c->o->progress)
        return;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    c->o->progress(c->o->user, c->step, c->steps, what);
}

static db_status check_options(const db_calibrate_options *o)
{
    if (o->runs < 1 || o->runs >= DB_PROFILE_MAX_RUNS)
        return db_fail(DB_ERR_USAGE, "calibration takes 1 to %d timed runs, not %d", DB_PROFILE_MAX_RUNS - 1,
                       o->runs);
    if (o->n_sizes > DB_CALIBRATE_MAX_SIZES || o->n_transfer_sizes > DB_CALIBRATE_MAX_SIZES)
        return db_fail(DB_ERR_USAGE, "calibration takes at most %d sizes", DB_CALIBRATE_MAX_SIZES);
    /* A checkpoint before the first algorithm, after each and at the end, each kept (calibrate.h). */
    if (o->algos && o->n_algos > DB_CALIBRATE_MAX_CHECKS - 2)
        return db_fail(DB_ERR_USAGE, "calibration takes at most %d algorithms at a time, not %d",
                       DB_CALIBRATE_MAX_CHECKS - 2, o->n_algos);
    int distinct = 0;
    for (int i = 0; i < o->n_sizes; i++) {
        if (o->sizes[i].width < 1 || o->sizes[i].height < 1)
            return db_fail(DB_ERR_USAGE, "calibration size %dx%d is empty", o->sizes[i].width, o->sizes[i].height);
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= (long)o->sizes[j].width * o->sizes[j].height == (long)o->sizes[i].width * o->sizes[i].height;
        distinct += !seen;
    }
    if (distinct < DB_COST_MIN_SIZES)
        return db_fail(DB_ERR_USAGE, "calibration needs pages of at least %d different pixel counts, got %d; "
                       "give more sizes", DB_COST_MIN_SIZES, distinct);
    distinct = 0;
    for (int i = 0; i < o->n_transfer_sizes; i++) {
        if (o->transfer_bytes[i] == 0)
            return db_fail(DB_ERR_USAGE, "calibration copy size %d is 0 bytes", i + 1);
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= o->transfer_bytes[j] == o->transfer_bytes[i];
        distinct += !seen;
    }
    if (distinct < DB_COST_MIN_SIZES)
        return db_fail(DB_ERR_USAGE, "transfer calibration needs at least %d different copy sizes, got %d",
                       DB_COST_MIN_SIZES, distinct);
    return DB_OK;
}

/* The span of `stage` on `role` in run `run` of `prof`; 0 when it enqueued nothing. */
static double stage_span(const db_profile *prof, int run, const char *stage, db_role role)
{
    enum { MAX_ROWS = 4 * DB_MAX_STAGES + 4 * DB_MAX_ITEMS };
    db_profile_row rows[MAX_ROWS];
    int n = db_profile_run_rows(prof, run, rows, MAX_ROWS);
    for (int i = 0; i < n && i < MAX_ROWS; i++)
        if (rows[i].kind == DB_REC_KERNEL && rows[i].role == role && !strcmp(rows[i].stage, stage))
            return rows[i].span_ms;
    return 0;
}

/* The host's share of run `run` of `prof` (calib.h, DB_CALIB_HOST_STAGE) with
** its staging copies still in it: its wall time less its commands' spans and
** the copies of devices that do not share host memory, as the planner's
** simulator adds them up for a map with every stage on one role (pools_fit
** takes the staging copies off). */
static double host_share(const db_profile *prof, int run, const db_context *ctx)
{
    enum { MAX_ROWS = 4 * DB_MAX_STAGES + 4 * DB_MAX_ITEMS };
    db_profile_row rows[MAX_ROWS];
    int n = db_profile_run_rows(prof, run, rows, MAX_ROWS);
    double ms = db_profile_run_wall_ms(prof, run);
    for (int i = 0; i < n && i < MAX_ROWS; i++)
        if (rows[i].kind == DB_REC_KERNEL || !ctx->role[rows[i].role]->info.host_unified)
            ms -= rows[i].span_ms;
    return ms;
}

/* Wall time that the timed runs of a short map fill at least (with at most
** RUNS_FACTOR times o->runs runs): a median of 5 runs of a sub-millisecond map
** moves by tens of percent from one calibration to the next, and these runs
** cost next to nothing. */
#define SHORT_RUNS_MS 100.0
#define RUNS_FACTOR 8

/* Runs `map` on every calibration page: the warm-up of each, then rounds of
** one timed run of each page, until each has o->runs timed runs or more
** (above). Interleaved for the reason docbin-bench's maps are (planner/bench.h):
** a burst of load on the host falls on one run of every page, not on every run
** of one page, which would tilt the line fitted through them. prof[k] is a new
** profile per page (freed by the caller; NULL when out of memory), runs[k] its
** number of timed runs (runs 1..runs[k]), report[k] its warm-up run's report. */
static db_status profile_sizes(calib_state *c, const db_algo *algo, const db_map *map, const db_job *job,
                               db_image **pages, int n, db_profile **prof, int *runs, db_report *report)
{
    const db_calibrate_options *o = c->o;
    const int most = RUNS_FACTOR * o->runs < DB_PROFILE_MAX_RUNS - 1 ? RUNS_FACTOR * o->runs
                                                                       : DB_PROFILE_MAX_RUNS - 1;
    for (int k = 0; k < n; k++) {
        runs[k] = o->runs;
        if (!(prof[k] = db_profile_new()))
            return db_fail(DB_ERR_NOMEM, "out of memory for a profile");
    }
    for (int run = 0, more = 1; more; run++) {
        more = 0;
        for (int k = 0; k < n; k++) {
            if (run > runs[k])
                continue;
            db_image *result = NULL;
            db_status st = db_run(c->ctx, algo, map, job, pages[k], &result, run == 0 ? &report[k] : NULL, prof[k]);
            db_image_free(result);
            if (st != DB_OK) {
                char why[1024];
                snprintf(why, sizeof why, "%s", db_error_message());
                return db_fail(st, "at %dx%d: %s", pages[k]->width, pages[k]->height, why);
            }
            if (run == 1) {
                double ms = db_profile_run_wall_ms(prof[k], 1);
                int want = ms > 0 ? (int)ceil(SHORT_RUNS_MS / ms) : most;
                runs[k] = want < runs[k] ? runs[k] : want > most ? most : want;
            }
            more |= run < runs[k];
        }
    }
    return DB_OK;
}

/* 1 when a stage of `algo` whose rows come from pages of `channels` (3: every
** stage's; 1: those that read the page) is calibrated on varied pages too
** (db_stage_work.varied). */
static int wants_varied(const db_algo *algo, int channels)
{
    for (int s = 0; s < algo->n_stages; s++)
        if (algo->stages[s].work && algo->stages[s].work->varied && (channels == 3 || db_calib_channels(algo, s, 1)))
            return 1;
    return 0;
}

/* The median of n works, or 0 when any is 0 (the stage reports none). */
static double work_median(const double *work, int n)
{
    db_box box;
    for (int k = 0; k < n; k++)
        if (!(work[k] > 0))
            return 0;
    return db_box_stats(work, n, &box) == DB_OK ? box.median : 0;
}

/* Times `algo` with `job` under `map` on `pages`, of `channels` (1 or 3), and
** records the rows of its stages on role `r` keyed by db_calib_channels (on
** RGB pages every such stage's, on gray pages those of the stages that read
** the page) and, when every stage is on `r`, the host's share of its runs,
** keyed by `channels`: a gray page's share is the smaller (2009-H02 on the
** H100: 0.38 to 0.86 of what the RGB pages' row gave it). With `varied`, the
** varied pages of the same sizes too, run interleaved with `pages`: the stages
** whose work is varied fit all the samples, the others and the host's share those of
** `pages` alone, as the other algorithms' rows are. */
static db_status calibrate_pages(calib_state *c, const db_algo *algo, const db_map *map, const db_job *job,
                                 db_role r, char hash[][65], db_image **pages, db_image **varied, int channels,
                                 db_calib *out)
{
    const db_calibrate_options *o = c->o;
    const char *variant = algo->n_variants ? algo->variants[job->variant] : "-";
    enum { MAX_PAGES = 2 * DB_CALIBRATE_MAX_SIZES };
    db_cost_sample samples[DB_MAX_STAGES][MAX_PAGES], host[DB_CALIBRATE_MAX_SIZES];
    size_t staged[DB_CALIBRATE_MAX_SIZES][2] = {{0}};
    double work[DB_MAX_STAGES][MAX_PAGES];
    double spans[DB_PROFILE_MAX_RUNS];
    int one_role = 1;
    for (int s = 0; s < algo->n_stages; s++)
        one_role &= map->role[s] == r;
    db_image *all[MAX_PAGES];
    int n = 0;
    for (int k = 0; k < o->n_sizes; k++)
        all[n++] = pages[k];
    for (int k = 0; varied && k < o->n_sizes; k++)
        all[n++] = varied[k];
    c->step += n - 1;
    progress(c, "%s%s%s on %s at %d sizes, %s pages%s, %d runs or more each", algo->name,
             algo->n_variants ? " " : "", algo->n_variants ? variant : "", db_role_name(r), o->n_sizes,
             channels == 1 ? "gray" : "RGB", varied ? " and varied ones" : "", o->runs + 1);
    db_profile *prof[MAX_PAGES] = {0};
    int runs[MAX_PAGES];
    db_report report[MAX_PAGES] = {0};
    db_status st = profile_sizes(c, algo, map, job, all, n, prof, runs, report);
    for (int k = 0; k < n && st == DB_OK; k++) {
        int w = all[k]->width, h = all[k]->height;
        for (int s = 0; s < algo->n_stages; s++)
            work[s][k] = algo->stages[s].work ? algo->stages[s].work->count(job, w, h, map->role[s], &report[k]) : 0;
        /* Every sample of this size is judged against the run's median wall time (cost.h). */
        db_box wall;
        for (int run = 1; run <= runs[k]; run++)
            spans[run - 1] = db_profile_run_wall_ms(prof[k], run);
        st = db_box_stats(spans, runs[k], &wall);
        for (int s = 0; s < algo->n_stages && st == DB_OK; s++) {
            for (int run = 1; run <= runs[k]; run++)
                spans[run - 1] = stage_span(prof[k], run, algo->stages[s].name, map->role[s]);
            db_box box;
            st = db_box_stats(spans, runs[k], &box);
            samples[s][k] = (db_cost_sample){.size = (double)w * h, .ms = box.median, .of_ms = wall.median};
        }
        if (st == DB_OK && one_role && k < o->n_sizes) {
            staged[k][0] = db_item_bytes(&algo->items[algo->input], job, w, h, channels);
            staged[k][1] = db_item_bytes(&algo->items[algo->output], job, w, h, channels);
            for (int run = 1; run <= runs[k]; run++)
                spans[run - 1] = host_share(prof[k], run, c->ctx);
            db_box box;
            st = db_box_stats(spans, runs[k], &box);
            host[k] = (db_cost_sample){.size = (double)w * h, .ms = box.median, .of_ms = wall.median};
        }
    }
    for (int k = 0; k < n; k++)
        db_profile_free(prof[k]);
    if (st != DB_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", db_error_message());
        return db_fail(st, "calibrating %s on %s, %s pages: %s", algo->name, db_role_name(r),
                       channels == 1 ? "gray" : "RGB", why);
    }
    const db_device *dev = c->ctx->role[r];
    for (int s = 0; s < algo->n_stages; s++) {
        int key_channels = db_calib_channels(algo, s, channels);
        if (map->role[s] != r || (channels == 1 && !key_channels))
            continue;
        db_calib_stage e = {.role = r, .channels = key_channels};
        snprintf(e.device, sizeof e.device, "%s", dev->info.key);
        snprintf(e.algo, sizeof e.algo, "%s", algo->name);
        snprintf(e.stage, sizeof e.stage, "%s", algo->stages[s].name);
        snprintf(e.variant, sizeof e.variant, "%s", variant);
        memcpy(e.kernel_hash, hash[s], sizeof e.kernel_hash);
        if (!algo->stages[s].work) {
            if ((st = pool_add(c, algo->stages[s].impl[r], NULL, &e, samples[s], NULL)) != DB_OK)
                return st;
            continue;
        }
        /* A stage whose cost follows the content is fitted at the median
        ** page's work: each page's size counts its work over that, or, where
        ** each unit of work pays a fixed cost too, the three terms are fitted
        ** to the pages' work over the median (db_cost_fit_per_unit). */
        int m = algo->stages[s].work->varied ? n : o->n_sizes;
        double median = work_median(work[s], m);
        bool per_unit = median > 0 && algo->stages[s].work->per_unit[r];
        double scale[MAX_PAGES];
        for (int k = 0; k < m && median > 0; k++) {
            scale[k] = work[s][k] > 0 ? work[s][k] / median : 1;
            if (!per_unit)
                samples[s][k].size *= work[s][k] / median;
        }
        st = per_unit ? db_cost_fit_per_unit(samples[s], scale, m, &e.model) : db_cost_fit(samples[s], m, &e.model);
        e.model.work = median;
        if (st == DB_OK)
            st = db_calib_put_stage(out, &e);
        if (st != DB_OK) {
            char why[1024];
            snprintf(why, sizeof why, "%s", db_error_message());
            return db_fail(st, "calibrating stage %s/%s on %s: %s", algo->name, algo->stages[s].name,
                           db_role_name(r), why);
        }
    }
    if (!one_role)
        return DB_OK;
    db_calib_stage e = {.role = r, .channels = channels};
    snprintf(e.device, sizeof e.device, "%s", dev->info.key);
    snprintf(e.algo, sizeof e.algo, "%s", algo->name);
    snprintf(e.stage, sizeof e.stage, "%s", DB_CALIB_HOST_STAGE);
    snprintf(e.variant, sizeof e.variant, "%s", variant);
    st = db_algo_kernel_hash(algo, e.kernel_hash);
    if (st == DB_OK)
        st = pool_add(c, NULL, algo->host_group ? algo->host_group : algo->name, &e, host, staged);
    if (st != DB_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", db_error_message());
        return db_fail(st, "calibrating the host's share of %s runs on %s: %s", algo->name, db_role_name(r), why);
    }
    return DB_OK;
}

/* Calibrates the stages of `algo` with variant `v` that have an implementation
** on role `r`, on RGB pages and, for those that read the page, on gray pages
** too; and the host's share of its runs on either page when every stage is on `r`. */
static db_status calibrate_role(calib_state *c, const db_algo *algo, int v, db_role r, char hash[][65],
                                db_calib *out)
{
    const db_calibrate_options *o = c->o;
    db_role other = r == DB_ROLE_CPU ? DB_ROLE_GPU : DB_ROLE_CPU;
    db_map map = {.n = algo->n_stages};
    int readers = 0;
    for (int s = 0; s < algo->n_stages; s++) {
        map.role[s] = algo->stages[s].impl[r] ? r : other;
        if (!db_context_device(c->ctx, map.role[s]))
            return db_fail(DB_ERR_DEVICE, "calibrating %s on %s: stage %s runs only on %s, but %s", algo->name,
                           db_role_name(r), algo->stages[s].name, db_role_name(map.role[s]), db_error_message());
        readers += map.role[s] == r && db_calib_channels(algo, s, 1);
    }
    db_job job;
    db_job_defaults(algo, &job);
    job.variant = v;
    int varied = wants_varied(algo, 3), varied_gray = wants_varied(algo, 1);
    for (int k = 0; k < o->n_sizes; k++) {
        int w = o->sizes[k].width, h = o->sizes[k].height;
        if ((!c->pages[k] && !(c->pages[k] = db_sample_page(w, h, 1))) ||
            (!c->gray[k] && !(c->gray[k] = db_sample_gray_page(w, h, 1))) ||
            (varied && !c->varied[k] && !(c->varied[k] = db_sample_varied_page(w, h, 1, 3))) ||
            (varied_gray && !c->varied_gray[k] && !(c->varied_gray[k] = db_sample_varied_page(w, h, 1, 1))))
            return db_error_status();
    }
    db_status st = calibrate_pages(c, algo, &map, &job, r, hash, c->pages, varied ? c->varied : NULL, 3, out);
    if (st == DB_OK && readers)
        st = calibrate_pages(c, algo, &map, &job, r, hash, c->gray, varied_gray ? c->varied_gray : NULL, 1, out);
    else
        c->step += o->n_sizes * (1 + varied_gray);
    return st;
}

static db_status calibrate_transfers(calib_state *c, db_device *dev, db_calib *out)
{
    const db_calibrate_options *o = c->o;
    db_cost_sample samples[DB_TRANSFER_DIR_COUNT][DB_CALIBRATE_MAX_SIZES];
    double ms[DB_TRANSFER_DIR_COUNT][DB_PROFILE_MAX_RUNS];
    for (int k = 0; k < o->n_transfer_sizes; k++) {
        size_t bytes = o->transfer_bytes[k];
        progress(c, "copies of %zu bytes to and from %s device '%s', %d runs", bytes, db_role_name(dev->role),
                 dev->info.name, o->runs + 1);
        db_status st = db_buffer_time_copies(c->ctx, dev, bytes, o->runs + 1, ms[DB_H2D], ms[DB_D2H]);
        for (int d = 0; d < DB_TRANSFER_DIR_COUNT && st == DB_OK; d++) {
            db_box box;
            st = db_box_stats(ms[d] + 1, o->runs, &box); /* [0] is the warm-up */
            samples[d][k] = (db_cost_sample){.size = (double)bytes, .ms = box.median};
        }
        if (st != DB_OK)
            return st;
    }
    for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++) {
        db_calib_transfer e = {.dir = (db_transfer_dir)d};
        snprintf(e.device, sizeof e.device, "%s", dev->info.key);
        db_status st = db_transfer_fit(samples[d], o->n_transfer_sizes, &e.model);
        if (st == DB_OK)
            st = db_calib_put_transfer(out, &e);
        if (st != DB_OK) {
            char why[1024];
            snprintf(why, sizeof why, "%s", db_error_message());
            return db_fail(st, "calibrating %s copies of device '%s': %s", db_transfer_dir_name(e.dir),
                           dev->info.name, why);
        }
    }
    return DB_OK;
}

/* The median over o->runs timed runs, after a warm-up, of the host copying
** `bytes` into a buffer of its own (db_copy_rows), into *ms. */
static db_status time_copy(calib_state *c, size_t bytes, int fill, double *ms)
{
    double t[DB_PROFILE_MAX_RUNS];
    unsigned char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) {
        free(src);
        free(dst);
        return db_fail(DB_ERR_NOMEM, "out of memory timing host copies of %zu bytes", bytes);
    }
    memset(src, fill, bytes);
    memset(dst, 0, bytes); /* first touch outside the timing, as the runtime's pooled blocks are */
    for (int i = 0; i <= c->o->runs; i++) {
        uint64_t t0 = db_now_ns();
        db_copy_rows(dst, bytes, src, bytes, bytes, 1);
        t[i] = (double)(db_now_ns() - t0) / 1e6;
        src[(size_t)i % bytes] ^= dst[bytes - 1]; /* the copy's result is used: not optimised away */
    }
    free(src);
    free(dst);
    db_box box;
    db_status st = db_box_stats(t + 1, c->o->runs, &box); /* [0] is the warm-up */
    *ms = st == DB_OK ? box.median : 0;
    return st;
}

/* The host's copies of a page into staging memory and of the result out of it
** (db_copy_rows), which every run pays before and after its device work:
** fitted to each transfer size's median over the checkpoints' rounds so far
** (calibrate.h). */
static db_status calibrate_staging(calib_state *c, db_calib *out)
{
    const db_calibrate_checks *k = &c->checks;
    db_cost_sample samples[DB_CALIBRATE_MAX_SIZES];
    double rounds[DB_CALIBRATE_MAX_CHECKS];
    db_transfer_model m;
    db_status st = DB_OK;
    for (int s = 0; s < c->o->n_transfer_sizes && st == DB_OK; s++) {
        db_box box;
        for (int i = 0; i < k->n; i++)
            rounds[i] = k->at[i].staging_ms[s];
        st = db_box_stats(rounds, k->n, &box);
        samples[s] = (db_cost_sample){.size = (double)c->o->transfer_bytes[s], .ms = box.median};
    }
    if (st == DB_OK)
        st = db_transfer_fit(samples, c->o->n_transfer_sizes, &m);
    if (st == DB_OK)
        st = db_calib_put_staging(out, &m);
    if (st != DB_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", db_error_message());
        return db_fail(st, "calibrating the host's staging copies: %s", why);
    }
    return DB_OK;
}

/* Whether `dev` is the first bound role with its device key (both roles may
** bind one device; its copies are timed once). */
static int first_with_key(const db_context *ctx, const db_device *dev)
{
    for (int r = 0; r < (int)dev->role; r++)
        if (ctx->role[r] && !strcmp(ctx->role[r]->info.key, dev->info.key))
            return 0;
    return 1;
}

/* The speed, in GB/s, of a kernel writing `bytes` on each
** bound role whose device shares host memory (db_buffer_time_fills), into
** gbs[role]; 0 for the other roles. */
static db_status time_fills(calib_state *c, size_t bytes, double *gbs)
{
    const db_calibrate_options *o = c->o;
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        db_device *dev = c->ctx->role[r];
        gbs[r] = 0;
        if (!dev || !dev->info.host_unified || !first_with_key(c->ctx, dev))
            continue;
        double ms[DB_PROFILE_MAX_RUNS];
        db_box box;
        db_status st = db_buffer_time_fills(c->ctx, dev, bytes, o->runs + 1, ms);
        if (st == DB_OK)
            st = db_box_stats(ms + 1, o->runs, &box); /* [0] is the warm-up */
        if (st != DB_OK)
            return st;
        gbs[r] = box.median > 0 ? (double)bytes / (box.median * 1e6) : 0;
    }
    return DB_OK;
}

bool db_calibrate_host_changed(double start_gbs, double end_gbs)
{
    if (!(start_gbs > 0) || !(end_gbs > 0))
        return false;
    double ratio = start_gbs > end_gbs ? start_gbs / end_gbs : end_gbs / start_gbs;
    return ratio > DB_CALIBRATE_HOST_CHANGE;
}

/* The largest of the transfer sizes to time. */
static size_t largest_transfer(const db_calibrate_options *o)
{
    size_t bytes = 0;
    for (int k = 0; k < o->n_transfer_sizes; k++)
        bytes = o->transfer_bytes[k] > bytes ? o->transfer_bytes[k] : bytes;
    return bytes;
}

/* A check of the host's speed at one moment of the calibration (`when`): the
** staging copies of each transfer size (a round of the staging row), of which
** the largest gives the host's copy speed, and a kernel on each device that
** shares host memory writing as many bytes (db_buffer_time_fills), into
** c->checks. The calibration takes one when it begins, one after each
** algorithm and one when it ends, so that a speed that moved and came back
** between the first and the last is seen too (check_options keeps them within
** DB_CALIBRATE_MAX_CHECKS). Each also takes the share of the machine's CPU
** time stolen since the one before (util.h, db_cpu_ticks). */
static db_status checkpoint(calib_state *c, const char *when)
{
    db_calibrate_checks *k = &c->checks;
    k->bytes = largest_transfer(c->o);
    int i = k->n < DB_CALIBRATE_MAX_CHECKS ? k->n++ : DB_CALIBRATE_MAX_CHECKS - 1;
    double ms = 0;
    db_status st = DB_OK;
    for (int s = 0; s < c->o->n_transfer_sizes && st == DB_OK; s++) {
        st = time_copy(c, c->o->transfer_bytes[s], s + 1, &k->at[i].staging_ms[s]);
        if (c->o->transfer_bytes[s] == k->bytes)
            ms = k->at[i].staging_ms[s];
    }
    if (st == DB_OK)
        st = time_fills(c, k->bytes, k->at[i].fill_gbs);
    if (st != DB_OK)
        return st;
    snprintf(k->at[i].when, sizeof k->at[i].when, "%s", when);
    k->at[i].copy_gbs = ms > 0 ? (double)k->bytes / (ms * 1e6) : 0;
    db_cpu_ticks now;
    bool have = db_cpu_ticks_now(&now);
    k->at[i].stolen_pct = have && c->have_ticks ? db_cpu_stolen_pct(&c->ticks, &now) : -1;
    c->ticks = now;
    c->have_ticks = have;
    return DB_OK;
}

bool db_calibrate_speed_moved(const double *gbs, int n, int *first, int *second)
{
    int lo = -1, hi = -1;
    for (int i = 0; i < n; i++) {
        if (!(gbs[i] > 0))
            continue;
        lo = lo < 0 || gbs[i] < gbs[lo] ? i : lo;
        hi = hi < 0 || gbs[i] > gbs[hi] ? i : hi;
    }
    if (lo < 0 || !db_calibrate_host_changed(gbs[lo], gbs[hi]))
        return false;
    *first = lo < hi ? lo : hi;
    *second = lo < hi ? hi : lo;
    return true;
}

int db_calibrate_most_stolen(const db_calibrate_checks *k, int *over)
{
    int most = -1;
    *over = 0;
    for (int i = 0; i < k->n && i < DB_CALIBRATE_MAX_CHECKS; i++) {
        if (!(k->at[i].stolen_pct >= DB_CALIBRATE_STOLEN_PCT))
            continue;
        (*over)++;
        if (most < 0 || k->at[i].stolen_pct > k->at[most].stolen_pct)
            most = i;
    }
    return most;
}

/* Warns when the checkpoints' speeds gbs[0..k->n) moved (db_calibrate_speed_moved):
** `what` says whose speed it is. */
static void warn_moved(const db_calibrate_checks *k, const double *gbs, const char *what)
{
    int a, b;
    if (db_calibrate_speed_moved(gbs, k->n, &a, &b))
        db_warn("%s at %.1f GB/s %s and at %.1f GB/s %s: the host's speed changed while it was measured (other "
                "load, or a machine still settling), so rows timed at different moments disagree; calibrate "
                "again when it is steady", what, gbs[a], k->at[a].when, gbs[b], k->at[b].when);
}

/* The last checkpoint, then a warning for each speed that moved between the
** checkpoints (warn_moved), and one when the hypervisor took
** DB_CALIBRATE_STOLEN_PCT or more of the CPU time over an interval. The copies
** alone missed a machine whose PoCL ran its first algorithms' stages up to 3
** times slower than its last ones (bench/results/planner-h100.md, run 42). */
static db_status check_host(calib_state *c)
{
    db_status st = checkpoint(c, "when it ended");
    if (st != DB_OK)
        return st;
    const db_calibrate_checks *k = &c->checks;
    double gbs[DB_CALIBRATE_MAX_CHECKS];
    char what[512];
    for (int i = 0; i < k->n; i++)
        gbs[i] = k->at[i].copy_gbs;
    snprintf(what, sizeof what, "the host copied %zu bytes", k->bytes);
    warn_moved(k, gbs, what);
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        if (!c->ctx->role[r])
            continue;
        for (int i = 0; i < k->n; i++)
            gbs[i] = k->at[i].fill_gbs[r];
        snprintf(what, sizeof what, "device '%s' wrote host memory in a kernel", c->ctx->role[r]->info.name);
        warn_moved(k, gbs, what);
    }
    int over, most = db_calibrate_most_stolen(k, &over);
    if (most >= 0)
        db_warn("the hypervisor took %.2f%% of the machine's CPU time up to the checkpoint '%s'%s: rows timed "
                "while it takes %.0f%% or more come out long; calibrate again when it is steady",
                k->at[most].stolen_pct, k->at[most].when,
                over > 1 ? " (and as much up to another checkpoint or more)" : "", DB_CALIBRATE_STOLEN_PCT);
    if (c->o->checks)
        *c->o->checks = *k;
    return DB_OK;
}

/* The latency the planner predicts for `map` of `algo` on the page of size k
** from the rows of `calib`, crossings counted as 0; NAN when a row is missing. */
static double predict(calib_state *c, const db_algo *algo, const db_job *job, const db_map *map, int k,
                      const db_calib *calib)
{
    db_plan_costs *costs = malloc(sizeof *costs);
    if (!costs)
        return NAN;
    const db_image *page = c->pages[k];
    double ms = NAN;
    if (db_plan_costs_from_calib(costs, calib, NULL, c->ctx, algo, job, page->width, page->height,
                                 page->channels) == DB_OK) {
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            db_plan_costs_set_crossing(costs, (db_role)r, 0);
        db_plan_sim sim;
        db_plan_simulate(costs, map, &sim);
        ms = sim.latency_ms;
    }
    free(costs);
    return ms;
}

/* Runs `map` once on page k into `prof`. */
static db_status run_once(calib_state *c, const db_algo *algo, const db_map *map, const db_job *job, int k,
                          db_profile *prof)
{
    db_image *result = NULL;
    db_status st = db_run(c->ctx, algo, map, job, c->pages[k], &result, NULL, prof);
    db_image_free(result);
    return st;
}

/* The cost of a crossing into each role (calib.h). Of the algorithms being
** calibrated whose stages all run on both roles, the one whose every-stage-on-
** cpu run is predicted cheapest at the largest size is run on the smallest page
** in pairs: its first stage on the other role and the rest on the role, then
** every stage on the role. A crossing costs the median over the pairs of the
** difference of their wall times, less the difference the simulation already
** gives them (the first stage's move and its item's copy), at least 0.
** The pair shares its host's share and its last stages, and the smallest page
** keeps the stages' own noise, which grows with the page, small. The residual
** of the split map alone over its simulation swung from 0.04 to 1.93 ms between
** calibrations; pairs gave 0.10 to 0.50 ms on the same kind of machine
** (bench/results/planner-h100.md). */
static db_status calibrate_crossings(calib_state *c, const db_algo *const *algos, int n_algos, db_calib *out)
{
    const db_calibrate_options *o = c->o;
    const db_algo *algo = NULL;
    db_job job;
    double cheapest = INFINITY;
    int largest = 0, smallest = 0;
    for (int k = 1; k < o->n_sizes; k++) {
        double px = (double)o->sizes[k].width * o->sizes[k].height;
        if (px > (double)o->sizes[largest].width * o->sizes[largest].height)
            largest = k;
        if (px < (double)o->sizes[smallest].width * o->sizes[smallest].height)
            smallest = k;
    }
    for (int a = 0; a < n_algos && c->pages[largest]; a++) {
        const db_algo *cand = algos ? algos[a] : db_algo_at(a);
        int both = cand->n_stages >= 2;
        for (int s = 0; s < cand->n_stages; s++)
            both &= cand->stages[s].impl[DB_ROLE_CPU] && cand->stages[s].impl[DB_ROLE_GPU];
        if (!both)
            continue;
        db_job j;
        db_job_defaults(cand, &j);
        for (int v = 0; v < cand->n_variants; v++)
            if (o->variant && !strcmp(o->variant, cand->variants[v]))
                j.variant = v;
        db_map all_cpu = {.n = cand->n_stages};
        double ms = predict(c, cand, &j, &all_cpu, largest, out);
        if (ms < cheapest) {
            cheapest = ms;
            algo = cand;
            job = j;
        }
    }
    if (!algo) {
        c->step += DB_ROLE_COUNT;
        return DB_OK;
    }
    const int most = RUNS_FACTOR * o->runs < DB_PROFILE_MAX_RUNS - 1 ? RUNS_FACTOR * o->runs
                                                                       : DB_PROFILE_MAX_RUNS - 1;
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        db_role other = r == DB_ROLE_CPU ? DB_ROLE_GPU : DB_ROLE_CPU;
        db_map split = {.n = algo->n_stages}, one = {.n = algo->n_stages};
        for (int s = 0; s < algo->n_stages; s++) {
            split.role[s] = s == 0 ? other : (db_role)r;
            one.role[s] = (db_role)r;
        }
        char text[64];
        db_map_format(&split, text, sizeof text);
        progress(c, "crossings into %s: %s %s against one role at %dx%d, %d pairs or more", db_role_name((db_role)r),
                 algo->name, text, c->pages[smallest]->width, c->pages[smallest]->height, o->runs);
        double simulated = predict(c, algo, &job, &split, smallest, out) - predict(c, algo, &job, &one, smallest, out);
        db_profile *ps = db_profile_new(), *po = db_profile_new();
        db_status st = ps && po ? DB_OK : db_fail(DB_ERR_NOMEM, "out of memory for a profile");
        /* Run 0 of each warms up; then pairs until they fill SHORT_RUNS_MS, at least o->runs,
        ** each map first in every other pair. */
        int pairs = o->runs;
        double diff[DB_PROFILE_MAX_RUNS];
        for (int run = 0; run <= pairs && st == DB_OK; run++) {
            const db_map *first = run % 2 ? &one : &split, *second = run % 2 ? &split : &one;
            st = run_once(c, algo, first, &job, smallest, run % 2 ? po : ps);
            if (st == DB_OK)
                st = run_once(c, algo, second, &job, smallest, run % 2 ? ps : po);
            if (st != DB_OK || run == 0)
                continue;
            diff[run - 1] = db_profile_run_wall_ms(ps, run) - db_profile_run_wall_ms(po, run);
            if (run == 1) {
                double ms = db_profile_run_wall_ms(ps, 1) + db_profile_run_wall_ms(po, 1);
                int want = ms > 0 ? (int)ceil(SHORT_RUNS_MS / ms) : most;
                pairs = want < pairs ? pairs : want > most ? most : want;
            }
        }
        db_profile_free(ps);
        db_profile_free(po);
        db_box box;
        if (st == DB_OK && isnan(simulated))
            st = db_fail(DB_ERR_USAGE, "calibrating crossings with %s: its rows are missing", algo->name);
        if (st == DB_OK)
            st = db_box_stats(diff, pairs, &box);
        if (st != DB_OK) {
            char why[1024];
            snprintf(why, sizeof why, "%s", db_error_message());
            return db_fail(st, "calibrating crossings into %s with %s, map %s: %s", db_role_name((db_role)r),
                           algo->name, text, why);
        }
        double ms = box.median - simulated;
        db_calib_crossing e = {.role = (db_role)r, .ms = ms > 0 ? ms : 0, .sizes = 1};
        snprintf(e.from, sizeof e.from, "%s", c->ctx->role[other]->info.key);
        snprintf(e.to, sizeof e.to, "%s", c->ctx->role[r]->info.key);
        if ((st = db_calib_put_crossing(out, &e)) != DB_OK)
            return st;
    }
    return DB_OK;
}

/* The most sizes the written copies are timed at, and the rounds each size is
** timed in, each into a buffer of its own: one round's median of a size moved
** by up to 1.9 times from the next round's on one host, and by up to 1.5 and
** 1.6 times on two others (bench/results/touched-copies-h100.log). */
enum { WRITTEN_SIZES = 12, WRITTEN_ROUNDS = 5 };

/* The sizes the written copies are timed at, into bytes[]; returns how many:
** from the smallest transfer size, doubling, to four times the largest, past
** the writer's caches, where the copy speeds up, and densely enough to tell
** where that happens (db_transfer_fit_cached). */
static int written_sizes(const db_calibrate_options *o, size_t *bytes)
{
    size_t smallest = o->transfer_bytes[0], largest = largest_transfer(o);
    for (int k = 0; k < o->n_transfer_sizes; k++)
        smallest = o->transfer_bytes[k] < smallest ? o->transfer_bytes[k] : smallest;
    int n = 0;
    for (size_t b = smallest; n < WRITTEN_SIZES && (n < DB_COST_MIN_SIZES || b <= 4 * largest); b *= 2)
        bytes[n++] = b;
    return n;
}

/* Copies into `dev` of what a kernel on `writer` (sharing host memory) has just
** written (calib.h, written rows), at written_sizes. */
static db_status calibrate_written(calib_state *c, db_device *dev, db_device *writer, db_calib *out)
{
    const db_calibrate_options *o = c->o;
    db_cost_sample samples[WRITTEN_SIZES];
    double ms[DB_PROFILE_MAX_RUNS], round_ms[WRITTEN_SIZES][WRITTEN_ROUNDS];
    size_t sizes[WRITTEN_SIZES];
    int n = written_sizes(o, sizes);
    /* The sizes interleaved round by round, so that a host whose speed moves moves them all. */
    for (int r = 0; r < WRITTEN_ROUNDS; r++)
        for (int k = 0; k < n; k++) {
            size_t bytes = sizes[k];
            progress(c, "copies of %zu bytes into %s device '%s' of what %s device '%s' wrote, round %d of %d, "
                     "%d runs", bytes, db_role_name(dev->role), dev->info.name, db_role_name(writer->role),
                     writer->info.name, r + 1, WRITTEN_ROUNDS, o->runs + 1);
            db_status st = db_buffer_time_written_copies(c->ctx, dev, writer, bytes, o->runs + 1, ms);
            db_box box;
            if (st == DB_OK)
                st = db_box_stats(ms + 1, o->runs, &box); /* [0] is the warm-up */
            if (st != DB_OK)
                return st;
            round_ms[k][r] = box.median;
        }
    for (int k = 0; k < n; k++) {
        db_box box;
        db_status st = db_box_stats(round_ms[k], WRITTEN_ROUNDS, &box);
        if (st != DB_OK)
            return st;
        samples[k] = (db_cost_sample){.size = (double)sizes[k], .ms = box.median};
    }
    db_calib_written e;
    memset(&e, 0, sizeof e);
    snprintf(e.from, sizeof e.from, "%s", writer->info.key);
    snprintf(e.to, sizeof e.to, "%s", dev->info.key);
    db_transfer_model untouched = {0};
    if (db_calib_find_transfer(out, dev->info.key, DB_H2D, &untouched) != DB_CALIB_FOUND)
        untouched.bandwidth_gbs = 0; /* then one bandwidth for every byte */
    db_status st = db_transfer_fit_cached(samples, n, untouched.bandwidth_gbs, &e.model);
    if (st == DB_OK)
        st = db_calib_put_written(out, &e);
    if (st != DB_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", db_error_message());
        return db_fail(st, "calibrating copies into device '%s' of what device '%s' wrote: %s", dev->info.name,
                       writer->info.name, why);
    }
    return DB_OK;
}

db_status db_calibrate(db_context *ctx, const db_calibrate_options *o, db_calib *out)
{
    db_status st = check_options(o);
    if (st != DB_OK)
        return st;
    int n_algos = o->algos ? o->n_algos : db_algo_count();
    calib_state c = {.ctx = ctx, .o = o};
    int roles = 0, copiers = 0;
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (ctx->role[r]) {
            roles++;
            copiers += !ctx->role[r]->info.host_unified && first_with_key(ctx, ctx->role[r]);
        }
    if (!roles)
        return db_fail(DB_ERR_DEVICE, "no role has a device to calibrate; bind one with --cpu-device or --gpu-device");
    for (int a = 0; a < n_algos; a++) {
        const db_algo *algo = o->algos ? o->algos[a] : db_algo_at(a);
        int chosen = 0;
        for (int v = 0; v < algo->n_variants; v++)
            chosen += !o->variant || !strcmp(o->variant, algo->variants[v]);
        if (o->variant && algo->n_variants && !chosen)
            return db_fail(DB_ERR_USAGE, "%s has no variant '%s'", algo->name, o->variant);
        /* RGB and gray pages, and varied ones where they are wanted */
        c.steps += (algo->n_variants ? chosen : 1) * roles * o->n_sizes * (2 + wants_varied(algo, 3) +
                                                                          wants_varied(algo, 1));
    }
    int written = 0;
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        const db_device *writer = ctx->role[r == DB_ROLE_CPU ? DB_ROLE_GPU : DB_ROLE_CPU];
        written += ctx->role[r] && !ctx->role[r]->info.host_unified && writer && writer->info.host_unified;
    }
    size_t sizes[WRITTEN_SIZES];
    c.steps += copiers * o->n_transfer_sizes + written * WRITTEN_ROUNDS * written_sizes(o, sizes) +
               (roles == DB_ROLE_COUNT ? DB_ROLE_COUNT : 0);

    if (!(c.pools = calloc(MAX_POOLS, sizeof(pool))))
        return db_fail(DB_ERR_NOMEM, "out of memory for the calibration's stage samples");
    /* A kernel's first runs on a fresh device and buffer ran 20% slower than the
    ** later ones on PoCL, after their warm-up run too: a first round is dropped. */
    double dropped[DB_ROLE_COUNT];
    st = time_fills(&c, largest_transfer(o), dropped);
    if (st == DB_OK)
        st = checkpoint(&c, "when the calibration began");
    for (int a = 0; a < n_algos && st == DB_OK; a++) {
        const db_algo *algo = o->algos ? o->algos[a] : db_algo_at(a);
        char hash[DB_MAX_STAGES][65];
        for (int s = 0; s < algo->n_stages && st == DB_OK; s++)
            st = db_stage_kernel_hash(&algo->stages[s], hash[s]);
        int n_variants = algo->n_variants ? algo->n_variants : 1;
        for (int v = 0; v < n_variants && st == DB_OK; v++)
            for (int r = 0; r < DB_ROLE_COUNT && st == DB_OK; r++) {
                if (!ctx->role[r] || (o->variant && algo->n_variants && strcmp(o->variant, algo->variants[v])))
                    continue;
                int any = 0;
                for (int s = 0; s < algo->n_stages; s++)
                    any |= algo->stages[s].impl[r] != NULL;
                if (any)
                    st = calibrate_role(&c, algo, v, (db_role)r, hash, out);
                else
                    c.step += o->n_sizes * (2 + wants_varied(algo, 3) + wants_varied(algo, 1));
            }
        char when[64];
        snprintf(when, sizeof when, "after %s", algo->name);
        if (st == DB_OK)
            st = checkpoint(&c, when);
    }
    /* The host's shares are fitted net of the staging copies. */
    if (st == DB_OK)
        st = calibrate_staging(&c, out);
    if (st == DB_OK)
        st = pools_fit(&c, out);
    for (int r = 0; r < DB_ROLE_COUNT && st == DB_OK; r++)
        if (ctx->role[r] && !ctx->role[r]->info.host_unified && first_with_key(ctx, ctx->role[r]))
            st = calibrate_transfers(&c, ctx->role[r], out);
    for (int r = 0; r < DB_ROLE_COUNT && st == DB_OK; r++) {
        db_device *writer = ctx->role[r == DB_ROLE_CPU ? DB_ROLE_GPU : DB_ROLE_CPU];
        if (ctx->role[r] && !ctx->role[r]->info.host_unified && writer && writer->info.host_unified)
            st = calibrate_written(&c, ctx->role[r], writer, out);
    }
    /* Last: the simulated time it is measured against needs the stage, host and copy rows. */
    if (st == DB_OK && roles == DB_ROLE_COUNT)
        st = calibrate_crossings(&c, o->algos, n_algos, out);
    if (st == DB_OK)
        st = check_host(&c);
    for (int k = 0; k < DB_CALIBRATE_MAX_SIZES; k++) {
        db_image_free(c.pages[k]);
        db_image_free(c.gray[k]);
        db_image_free(c.varied[k]);
        db_image_free(c.varied_gray[k]);
    }
    free(c.pools);
    return st;
}
