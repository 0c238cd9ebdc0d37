/*
** plan.c — cost tables, the simulator of the scheduler, the choice of a map, explain.
*/
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "planner/map.h"
#include "planner/plan.h"
#include "runtime/sched.h"
#include "runtime/util.h"

/* Scores closer than this (relative) are ties: sums of the same costs in another
** order must not make the choice depend on rounding. */
#define TIE_EPS 1e-9

const char *db_plan_objective_name(db_plan_objective objective)
{
    return objective == DB_PLAN_THROUGHPUT ? "throughput" : "latency";
}

void db_plan_costs_init(db_plan_costs *costs, const db_algo *algo, const db_job *job, int width, int height,
                        int channels)
{
    memset(costs, 0, sizeof *costs);
    costs->algo = algo;
    costs->job = *job;
    costs->width = width;
    costs->height = height;
    costs->channels = channels;
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        costs->bound[r] = true;
        for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++)
            costs->copy[r][d] = DB_PLAN_UNKNOWN;
    }
    for (int s = 0; s < algo->n_stages; s++)
        for (int r = 0; r < DB_ROLE_COUNT; r++) {
            costs->stage[s][r] = algo->stages[s].impl[r] ? DB_PLAN_UNKNOWN : DB_PLAN_NO_IMPL;
            costs->history_factor[s][r] = 1.0;
        }
    for (int i = 0; i < algo->n_items && i < DB_MAX_ITEMS; i++) {
        costs->item_bytes[i] = db_item_bytes(&algo->items[i], job, width, height, channels);
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++)
                costs->copy_factor[i][r][d] = 1.0;
    }
    costs->staging = DB_PLAN_KNOWN;
    costs->staging_model = (db_transfer_model){.latency_ms = 0, .bandwidth_gbs = INFINITY};
}

void db_plan_costs_set_staging(db_plan_costs *costs, const db_transfer_model *model)
{
    costs->staging = DB_PLAN_KNOWN;
    costs->staging_model = *model;
}

void db_plan_costs_set_crossing(db_plan_costs *costs, db_role role, double ms)
{
    costs->crossing_ms[role] = ms;
}

void db_plan_costs_set_written(db_plan_costs *costs, db_role role, const db_transfer_model *model)
{
    costs->written[role] = true;
    costs->written_model[role] = *model;
}

void db_plan_costs_set_stage(db_plan_costs *costs, int stage, db_role role, double ms)
{
    costs->stage[stage][role] = DB_PLAN_KNOWN;
    costs->stage_ms[stage][role] = ms;
}

void db_plan_costs_set_page_work(db_plan_costs *costs, const db_map *map, const db_report *report)
{
    const db_algo *algo = costs->algo;
    double pixels = (double)costs->width * (double)costs->height;
    for (int s = 0; s < algo->n_stages; s++) {
        const db_stage *stage = &algo->stages[s];
        for (int r = 0; r < DB_ROLE_COUNT && stage->work; r++) {
            if (stage->work->by_role && map->role[s] != (db_role)r)
                continue; /* the report counts the other role's work */
            double work = stage->work->count(&costs->job, costs->width, costs->height, (db_role)r, report);
            if (!(work > 0) || !(costs->calib_work[s][r] > 0))
                continue; /* no work reported, or no row that scales with it */
            costs->work_source[s][r] = DB_PLAN_WORK_PAGE;
            costs->work[s][r] = work;
            costs->work_runs[s][r] = 0;
            if (costs->modelled[s][r])
                costs->stage_ms[s][r] =
                    costs->history_factor[s][r] * db_cost_predict(&costs->stage_model[s][r], pixels, work);
        }
    }
}

void db_plan_costs_set_transfer(db_plan_costs *costs, db_role role, db_transfer_dir dir,
                                const db_transfer_model *model)
{
    costs->copy[role][dir] = DB_PLAN_KNOWN;
    costs->copy_model[role][dir] = *model;
}

void db_plan_costs_set_shared(db_plan_costs *costs, db_role role)
{
    costs->shared[role] = true;
    for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++)
        costs->copy[role][d] = DB_PLAN_KNOWN;
}

void db_plan_costs_unbind(db_plan_costs *costs, db_role role)
{
    costs->bound[role] = false;
    for (int s = 0; s < costs->algo->n_stages; s++)
        if (costs->stage[s][role] != DB_PLAN_NO_IMPL)
            costs->stage[s][role] = DB_PLAN_UNBOUND;
    for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++)
        costs->copy[role][d] = DB_PLAN_UNBOUND;
}

/* The words a note adds for rows keyed by the page's channels (db_calib_channels). */
static const char *pages_words(int channels)
{
    return channels == 1 ? " for gray pages" : channels == 3 ? " for RGB pages" : "";
}

static void add_note(db_plan_costs *costs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_note(db_plan_costs *costs, const char *fmt, ...)
{
    if (costs->n_notes == DB_PLAN_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(costs->notes[costs->n_notes++], DB_PLAN_NOTE, fmt, ap);
    va_end(ap);
}

/* Each item's copy factors from `history`, against the model the simulation
** gives that copy (copy()): into a role, of what the other role wrote where it
** shares host memory, the written row; else the transfer row. */
static void copy_factors(db_plan_costs *costs, const db_history *history, const db_context *ctx)
{
    const db_algo *algo = costs->algo;
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        if (!costs->bound[r] || costs->shared[r])
            continue;
        for (int i = 0; i < algo->n_items && i < DB_MAX_ITEMS; i++)
            for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++) {
                const db_transfer_model *model = NULL;
                if (d == DB_H2D && i != algo->input && costs->written[r])
                    model = &costs->written_model[r];
                else if (costs->copy[r][d] == DB_PLAN_KNOWN)
                    model = &costs->copy_model[r][d];
                if (model)
                    costs->copy_runs[i][r][d] =
                        db_history_copy_factor(history, ctx->role[r]->info.key, algo->name, algo->items[i].name,
                                               (db_transfer_dir)d, model, &costs->copy_factor[i][r][d]);
            }
    }
}

db_status db_plan_costs_from_calib(db_plan_costs *costs, const db_calib *calib, const db_history *history,
                                   const db_context *ctx, const db_algo *algo, const db_job *job, int width,
                                   int height, int channels)
{
    db_plan_costs_init(costs, algo, job, width, height, channels);
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        const db_device *dev = ctx->role[r];
        if (!dev) {
            db_plan_costs_unbind(costs, (db_role)r);
            continue;
        }
        snprintf(costs->device[r], sizeof costs->device[r], "%s", dev->info.name);
        if (dev->info.host_unified)
            db_plan_costs_set_shared(costs, (db_role)r);
    }
    const char *variant = algo->n_variants ? algo->variants[job->variant] : "-";
    double pixels = (double)width * (double)height;
    for (int s = 0; s < algo->n_stages; s++) {
        const db_stage *stage = &algo->stages[s];
        char hash[65];
        db_status st = db_stage_kernel_hash(stage, hash);
        if (st != DB_OK)
            return st;
        for (int r = 0; r < DB_ROLE_COUNT && stage->work; r++) {
            costs->work_source[s][r] = DB_PLAN_WORK_CALIBRATION;
            db_calib_stage key = {.role = (db_role)r};
            snprintf(key.algo, sizeof key.algo, "%s", algo->name);
            snprintf(key.stage, sizeof key.stage, "%s", stage->name);
            snprintf(key.variant, sizeof key.variant, "%s", variant);
            snprintf(key.kernel_hash, sizeof key.kernel_hash, "%s", hash);
            double work;
            int runs = history ? db_history_work(history, &key, stage->work->by_role, &work) : 0;
            if (runs >= DB_HISTORY_MIN) {
                costs->work_source[s][r] = DB_PLAN_WORK_HISTORY;
                costs->work[s][r] = work;
                costs->work_runs[s][r] = runs;
            }
        }
        for (int r = 0; r < DB_ROLE_COUNT; r++) {
            if (costs->stage[s][r] != DB_PLAN_UNKNOWN)
                continue; /* no implementation, or no device */
            const db_device_info *info = &ctx->role[r]->info;
            db_cost_model model;
            char msg[DB_PLAN_NOTE];
            int key_channels = db_calib_channels(algo, s, channels);
            switch (db_calib_find_stage(calib, info->key, algo->name, stage->name, (db_role)r, variant, key_channels,
                                        hash, &model, msg, sizeof msg)) {
            case DB_CALIB_FOUND: {
                model.per_unit = stage->work && stage->work->per_unit[r];
                double factor = 1.0;
                if (history) {
                    db_calib_stage key = {.role = (db_role)r};
                    snprintf(key.device, sizeof key.device, "%s", info->key);
                    snprintf(key.algo, sizeof key.algo, "%s", algo->name);
                    snprintf(key.stage, sizeof key.stage, "%s", stage->name);
                    snprintf(key.variant, sizeof key.variant, "%s", variant);
                    snprintf(key.kernel_hash, sizeof key.kernel_hash, "%s", hash);
                    key.channels = key_channels;
                    costs->history_runs[s][r] = db_history_factor(history, &key, &model, &factor);
                    costs->history_factor[s][r] = factor;
                }
                db_plan_costs_set_stage(costs, s, (db_role)r,
                                        factor * db_cost_predict(&model, pixels, costs->work[s][r]));
                costs->modelled[s][r] = true;
                costs->stage_model[s][r] = model;
                if (model.work > 0)
                    costs->calib_work[s][r] = model.work;
                else if (stage->work)
                    add_note(costs, "stage %s/%s on the %s role (device '%s', key %s) was calibrated without its "
                             "work (a file of version 4 or earlier), so its prediction does not follow the page's "
                             "content; run docbin-bench --calibrate", algo->name, stage->name,
                             db_role_name((db_role)r), info->name, info->key);
                break;
            }
            case DB_CALIB_STALE:
                add_note(costs, "%s, with docbin-bench --calibrate (device %s is '%s')", msg, info->key, info->name);
                break;
            case DB_CALIB_MISSING:
                add_note(costs, "stage %s/%s on the %s role%s%s%s (device '%s', key %s) is not calibrated; run "
                         "docbin-bench --calibrate", algo->name, stage->name, db_role_name((db_role)r),
                         algo->n_variants ? ", variant " : "", algo->n_variants ? variant : "",
                         pages_words(key_channels), info->name, info->key);
                break;
            }
        }
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            if (!(costs->calib_work[s][r] > 0)) {
                costs->work_source[s][r] = DB_PLAN_WORK_NONE; /* no row scales with the work: nothing to say */
                costs->work[s][r] = 0;
                costs->work_runs[s][r] = 0;
            }
    }
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        if (!costs->bound[r] || costs->shared[r])
            continue;
        const db_device_info *info = &ctx->role[r]->info;
        for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++) {
            db_transfer_model model;
            if (db_calib_find_transfer(calib, info->key, (db_transfer_dir)d, &model) == DB_CALIB_FOUND)
                db_plan_costs_set_transfer(costs, (db_role)r, (db_transfer_dir)d, &model);
            else
                add_note(costs, "%s copies of the %s role (device '%s', key %s) are not calibrated; run "
                         "docbin-bench --calibrate", db_transfer_dir_name((db_transfer_dir)d),
                         db_role_name((db_role)r), info->name, info->key);
        }
    }
    char algo_hash[65];
    db_status st = db_algo_kernel_hash(algo, algo_hash);
    if (st != DB_OK)
        return st;
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        int any = 0;
        for (int s = 0; s < algo->n_stages; s++)
            any |= algo->stages[s].impl[r] != NULL;
        if (!costs->bound[r] || !any)
            continue;
        const db_device_info *info = &ctx->role[r]->info;
        db_cost_model model;
        char msg[DB_PLAN_NOTE];
        switch (db_calib_find_stage(calib, info->key, algo->name, DB_CALIB_HOST_STAGE, (db_role)r, variant,
                                    costs->channels, algo_hash, &model, msg, sizeof msg)) {
        case DB_CALIB_FOUND:
            costs->host_ms[r] = fmax(0, db_cost_predict(&model, pixels, 0));
            break;
        case DB_CALIB_STALE:
            add_note(costs, "%s, with docbin-bench --calibrate (device %s is '%s'); counted as 0 until then", msg,
                     info->key, info->name);
            break;
        case DB_CALIB_MISSING:
            add_note(costs, "the host's share of %s runs on the %s role%s%s%s (enqueueing and waiting; device '%s', "
                     "key %s) is not calibrated and counted as 0; run docbin-bench --calibrate", algo->name,
                     db_role_name((db_role)r), algo->n_variants ? ", variant " : "", algo->n_variants ? variant : "",
                     pages_words(costs->channels), info->name, info->key);
            break;
        }
    }
    if (calib->has_staging) {
        db_plan_costs_set_staging(costs, &calib->staging);
    } else {
        costs->staging = DB_PLAN_UNKNOWN;
        add_note(costs, "the host's staging copies (of each page and result) are not calibrated; run "
                 "docbin-bench --calibrate");
    }
    /* A crossing into a role: both roles bound, a stage able to run there and another stage elsewhere. */
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        int other = r == DB_ROLE_CPU ? DB_ROLE_GPU : DB_ROLE_CPU, here = 0, there = 0;
        for (int s = 0; s < algo->n_stages; s++) {
            here |= algo->stages[s].impl[r] != NULL;
            there |= algo->stages[s].impl[other] != NULL;
        }
        if (!costs->bound[r] || !costs->bound[other] || !here || !there || algo->n_stages < 2)
            continue;
        const db_device_info *to = &ctx->role[r]->info, *from = &ctx->role[other]->info;
        double ms;
        if (db_calib_find_crossing(calib, from->key, to->key, (db_role)r, &ms) == DB_CALIB_FOUND)
            db_plan_costs_set_crossing(costs, (db_role)r, ms);
        else
            add_note(costs, "a crossing into the %s role (device '%s', key %s) from the %s role (device '%s', key %s) "
                     "is not calibrated and counted as 0; run docbin-bench --calibrate", db_role_name((db_role)r),
                     to->name, to->key, db_role_name((db_role)other), from->name, from->key);
        if (costs->shared[r] || !costs->shared[other])
            continue;
        db_transfer_model model;
        if (db_calib_find_written(calib, from->key, to->key, &model) == DB_CALIB_FOUND)
            db_plan_costs_set_written(costs, (db_role)r, &model);
        else
            add_note(costs, "copies into the %s role (device '%s', key %s) of what the %s role (device '%s', key %s) "
                     "wrote are not calibrated and counted as copies of untouched memory; run docbin-bench "
                     "--calibrate", db_role_name((db_role)r), to->name, to->key, db_role_name((db_role)other),
                     from->name, from->key);
    }
    if (history)
        copy_factors(costs, history, ctx);
    return DB_OK;
}

db_status db_plan_costs_load(db_plan_costs *costs, const char *path, const db_context *ctx, const db_algo *algo,
                             const db_job *job, int width, int height, int channels)
{
    char def[4096];
    if (!path) {
        db_status st = db_calib_default_path(def, sizeof def);
        if (st != DB_OK)
            return st;
        path = def;
    }
    char history_path[4096 + 16];
    db_status st = db_history_path(path, history_path, sizeof history_path);
    if (st != DB_OK)
        return st;
    db_calib calib;
    db_calib_init(&calib);
    db_history history;
    db_history_init(&history);
    /* History is a hint: a bad file is reported and left out, never fatal. */
    if ((st = db_calib_load(&calib, path)) == DB_OK && db_history_load(&history, history_path) != DB_OK)
        db_warn("%s", db_error_message());
    if (st == DB_OK)
        st = db_plan_costs_from_calib(costs, &calib, &history, ctx, algo, job, width, height, channels);
    db_history_free(&history);
    db_calib_free(&calib);
    return st;
}

void db_plan_fallback_line(const db_plan_costs *costs, const db_plan_choice *choice, char *buf, size_t size)
{
    char m[64];
    db_map_format(&choice->map, m, sizeof m);
    snprintf(buf, size, "%s is not calibrated on this host (%d entr%s missing or stale; --explain lists them), "
             "so the default map %s runs; first: %s", costs->algo->name, costs->n_notes,
             costs->n_notes == 1 ? "y" : "ies", m, costs->n_notes ? costs->notes[0] : "-");
}

void db_plan_print_notes(const db_plan_costs *costs, FILE *f, const char *prefix)
{
    for (int i = 0; i < costs->n_notes; i++)
        fprintf(f, "%s%s\n", prefix, costs->notes[i]);
}

bool db_plan_runnable(const db_plan_costs *costs, const db_map *map, char *why, size_t why_size)
{
    const db_algo *algo = costs->algo;
    for (int s = 0; s < algo->n_stages; s++) {
        db_role r = map->role[s];
        const char *reason = costs->stage[s][r] == DB_PLAN_NO_IMPL ? "has no %s implementation"
                             : !costs->bound[r]                     ? "is mapped to %s, which has no device"
                                                                    : NULL;
        if (reason) {
            if (why && why_size) {
                int n = snprintf(why, why_size, "stage %s ", algo->stages[s].name);
                if (n >= 0 && (size_t)n < why_size)
                    snprintf(why + n, why_size - (size_t)n, reason, db_role_name(r));
            }
            return false;
        }
    }
    return true;
}

/* The simulator's view of one item: where it is valid and from when on. */
struct place {
    bool host_valid, rep_valid[DB_ROLE_COUNT];
    double host_t, rep_t[DB_ROLE_COUNT];
    int writer;      /* the role of the stage that wrote it; -1 for the input, which starts on the host */
};

struct sim_state {
    const db_plan_costs *costs;
    db_plan_sim *sim;
    struct place item[DB_MAX_ITEMS];
    double free_t[DB_ROLE_COUNT][2]; /* when each queue is next free: [0] compute, [1] transfer */
};

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* One command on an in-order queue: it starts when the queue is free and its
** dependency is met; returns its end. */
static double enqueue(struct sim_state *st, db_role role, int queue, double ready, double ms, double *start)
{
    *start = max2(st->free_t[role][queue], ready);
    st->free_t[role][queue] = *start + ms;
    st->sim->busy_ms[role][queue] += ms;
    return *start + ms;
}

/* A copy of `item` between the host and `role`'s device; `written`: into it, of
** what a stage on the other role, which shares host memory, has just written. */
static double copy(struct sim_state *st, int item, db_role role, db_transfer_dir dir, bool written, double ready)
{
    const db_plan_costs *c = st->costs;
    db_plan_sim *sim = st->sim;
    size_t bytes = c->shared[role] ? 0 : c->item_bytes[item];
    double ms = 0;
    if (!c->shared[role]) {
        if (written && c->written[role])
            ms = db_transfer_predict(&c->written_model[role], (double)bytes);
        else if (c->copy[role][dir] == DB_PLAN_KNOWN)
            ms = db_transfer_predict(&c->copy_model[role][dir], (double)bytes);
        else
            sim->known = sim->copies_known = false;
        ms *= c->copy_factor[item][role][dir];
    }
    double start;
    double end = enqueue(st, role, 1, ready, ms, &start);
    if (sim->n_copies < DB_PLAN_MAX_COPIES)
        sim->copies[sim->n_copies++] = (db_plan_copy){item, role, dir, bytes, start, ms};
    sim->transfer_ms += ms;
    return end;
}

/* buffer.c's db_buffer_fetch_host: from the one valid replica, once. */
static double fetch_host(struct sim_state *st, int item)
{
    struct place *p = &st->item[item];
    if (!p->host_valid) {
        int src = -1;
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            if (p->rep_valid[r])
                src = r;
        if (src < 0)
            return 0; /* never written: the runtime reports that before running */
        p->host_t = copy(st, item, (db_role)src, DB_D2H, false, p->rep_t[src]);
        p->host_valid = true;
    }
    return p->host_t;
}

/* buffer.c's db_buffer_fetch: through the host, once per device. Written by
** the other role, the copy waits for the crossing first, and *crossed is set. */
static double fetch(struct sim_state *st, int item, db_role role, bool *crossed)
{
    struct place *p = &st->item[item];
    if (!p->rep_valid[role]) {
        /* The input's host copy needs no event: only what the other role wrote crosses. */
        bool crossing = p->writer >= 0 && p->writer != (int)role;
        double host_t = fetch_host(st, item);
        bool written = crossing && st->costs->shared[p->writer];
        p->rep_t[role] = copy(st, item, role, DB_H2D, written,
                              host_t + (crossing ? st->costs->crossing_ms[role] : 0));
        p->rep_valid[role] = true;
        *crossed |= crossing;
    }
    return p->rep_t[role];
}

void db_plan_simulate(const db_plan_costs *costs, const db_map *map, db_plan_sim *sim)
{
    const db_algo *algo = costs->algo;
    memset(sim, 0, sizeof *sim);
    sim->known = sim->copies_known = true;
    struct sim_state st;
    memset(&st, 0, sizeof st);
    st.costs = costs;
    st.sim = sim;
    for (int i = 0; i < DB_MAX_ITEMS; i++)
        st.item[i].writer = -1;
    st.item[algo->input].host_valid = true;
    /* db_run copies the decoded page into staging memory before it enqueues anything. */
    double in_ms = 0, out_ms = 0;
    if (costs->staging == DB_PLAN_KNOWN) {
        in_ms = db_transfer_predict(&costs->staging_model, (double)costs->item_bytes[algo->input]);
        out_ms = db_transfer_predict(&costs->staging_model, (double)costs->item_bytes[algo->output]);
    } else {
        sim->known = false;
    }
    sim->staging_ms = in_ms + out_ms;
    st.item[algo->input].host_t = in_ms;

    db_role out_role = map->role[algo->n_stages - 1];
    for (int s = 0; s < algo->n_stages; s++) {
        const db_stage *stage = &algo->stages[s];
        db_role r = map->role[s];
        for (int o = 0; o < stage->n_outputs; o++)
            if (stage->outputs[o] == algo->output)
                out_role = r;
        double ready = 0;
        bool crossed = false;
        for (int i = 0; i < stage->n_inputs; i++)
            ready = max2(ready, fetch(&st, stage->inputs[i], r, &crossed));
        /* The host waits for the inputs together: one crossing however many items cross. */
        if (crossed)
            sim->crossing_ms += costs->crossing_ms[r];
        sim->stage_known[s] = costs->stage[s][r] == DB_PLAN_KNOWN;
        sim->stage_ms[s] = sim->stage_known[s] ? costs->stage_ms[s][r] : 0;
        sim->known &= sim->stage_known[s];
        double end = enqueue(&st, r, 0, ready, sim->stage_ms[s], &sim->stage_start[s]);
        for (int o = 0; o < stage->n_outputs; o++) {
            struct place *p = &st.item[stage->outputs[o]];
            memset(p, 0, sizeof *p);
            p->rep_valid[r] = true;
            p->rep_t[r] = end;
            p->writer = r;
        }
    }
    sim->latency_ms = fetch_host(&st, algo->output);
    if (algo->report_fields)
        sim->latency_ms = max2(sim->latency_ms, fetch_host(&st, algo->report_item));
    /* db_run copies the result out of staging into the caller's image, having waited for it. */
    sim->latency_ms += out_ms + costs->host_ms[out_role];
    sim->staging_ms += costs->host_ms[out_role] + sim->crossing_ms;
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        for (int q = 0; q < 2; q++)
            sim->period_ms = max2(sim->period_ms, sim->busy_ms[r][q]);
    if (!sim->known) {
        sim->latency_ms = NAN;
        sim->period_ms = NAN;
    }
    if (!sim->copies_known)
        sim->transfer_ms = NAN;
}

double db_plan_score(const db_plan_sim *sim, db_plan_objective objective)
{
    return objective == DB_PLAN_THROUGHPUT ? sim->period_ms : sim->latency_ms;
}

/* The db_map_nth index of `map`. */
static int map_index(const db_map *map)
{
    int i = 0;
    for (int s = 0; s < map->n; s++)
        i = (i << 1) | (map->role[s] == DB_ROLE_GPU);
    return i;
}

/* Stages whose role differs from `def`'s: the tie-break prefers the plan a
** reader expects. */
static int moved(const db_map *map, const db_map *def)
{
    int n = 0;
    for (int s = 0; s < map->n; s++)
        n += map->role[s] != def->role[s];
    return n;
}

db_status db_plan_choose(const db_plan_costs *costs, db_plan_objective objective, db_plan_choice *choice)
{
    const db_algo *algo = costs->algo;
    db_map def;
    db_map_default(algo, costs->bound[DB_ROLE_GPU], &def);
    memset(choice, 0, sizeof *choice);
    choice->index = -1;
    bool any_unknown = false;
    int n = db_map_count(algo);
    double score[1 << DB_MAX_STAGES];
    db_plan_sim *sim = &(db_plan_sim){0};
    double best = INFINITY;
    for (int i = 0; i < n && !any_unknown; i++) {
        db_map map;
        db_map_nth(algo, i, &map);
        score[i] = INFINITY;
        if (!db_plan_runnable(costs, &map, NULL, 0))
            continue;
        db_plan_simulate(costs, &map, sim);
        any_unknown = !sim->known;
        score[i] = db_plan_score(sim, objective);
        best = fmin(best, score[i]);
    }
    /* Among the maps within the margin of the best: the fewest stages moved off
    ** the default, then the lower score, then enumeration order. */
    int best_moved = 0;
    for (int i = 0; i < n && !any_unknown && isfinite(best); i++) {
        if (!(score[i] <= best * (1 + DB_PLAN_MARGIN) + TIE_EPS * fabs(best)))
            continue;
        db_map map;
        db_map_nth(algo, i, &map);
        int mv = moved(&map, &def);
        if (choice->index < 0 || mv < best_moved ||
            (mv == best_moved && score[i] < score[choice->index] - TIE_EPS * fabs(best))) {
            choice->index = i;
            choice->map = map;
            best_moved = mv;
        }
    }
    if (choice->index >= 0)
        db_plan_simulate(costs, &choice->map, &choice->sim);
    if (!any_unknown && choice->index < 0) {
        char why[256];
        db_plan_runnable(costs, &def, why, sizeof why);
        return db_fail(DB_ERR_DEVICE, "no map of %s can run: %s; bind a device to each role (--cpu-device, "
                       "--gpu-device)", algo->name, why);
    }
    if (any_unknown) {
        choice->fallback = true;
        choice->map = def;
        choice->index = map_index(&def);
        db_plan_simulate(costs, &def, &choice->sim);
    }
    return DB_OK;
}

/* Columns of the tables: wide enough for the header and for "123456.789". */
static int col_width(const char *name)
{
    int n = (int)strlen(name);
    return n > 10 ? n : 10;
}

static void print_ms(FILE *f, int width, bool known, double ms)
{
    if (known)
        fprintf(f, " %*.3f", width, ms);
    else
        fprintf(f, " %*s", width, "?");
}

/* What stage s counts as its work on role r, in words (db_stage_work.unit). */
static const char *work_unit(const db_plan_costs *costs, int s, db_role r)
{
    const db_stage_work *work = costs->algo->stages[s].work;
    return work && work->unit[r] ? work->unit[r] : "units of work";
}

/* Names the work of stage s on role r for the lines that print it: "<stage>",
** or "<stage> on <role>" for a stage that counts its work by role. False when
** the line would repeat another: a stage whose work is the same on both roles
** is printed once, from the first role whose work has a source. */
static bool work_name(const db_plan_costs *costs, int s, db_role r, char *name, size_t size)
{
    const db_stage *stage = &costs->algo->stages[s];
    if (stage->work && stage->work->by_role) {
        snprintf(name, size, "%s on %s", stage->name, db_role_name(r));
        return true;
    }
    for (int q = 0; q < (int)r; q++)
        if (costs->work_source[s][q] != DB_PLAN_WORK_NONE)
            return false;
    snprintf(name, size, "%s", stage->name);
    return true;
}

void db_plan_explain(const db_plan_costs *costs, const db_map *ran, FILE *f)
{
    const db_algo *algo = costs->algo;
    int map_w = algo->n_stages * 4 - 1;
    if (map_w < 3)
        map_w = 3;
    fprintf(f, "plan for %s at %dx%d, %d channel%s; cpu = %s%s%s, gpu = %s%s%s; times in ms\n", algo->name,
            costs->width, costs->height, costs->channels, costs->channels == 1 ? "" : "s",
            costs->bound[DB_ROLE_CPU] ? "'" : "", costs->bound[DB_ROLE_CPU] ? costs->device[DB_ROLE_CPU] : "unbound",
            costs->bound[DB_ROLE_CPU] ? "'" : "", costs->bound[DB_ROLE_GPU] ? "'" : "",
            costs->bound[DB_ROLE_GPU] ? costs->device[DB_ROLE_GPU] : "unbound", costs->bound[DB_ROLE_GPU] ? "'" : "");
    fprintf(f, "  %-*s", map_w, "map");
    for (int s = 0; s < algo->n_stages; s++)
        fprintf(f, " %*s", col_width(algo->stages[s].name), algo->stages[s].name);
    fprintf(f, " %10s %10s %10s %10s\n", "staging", "transfers", "latency", "period");
    int ran_index = ran ? map_index(ran) : -1;
    for (int i = 0; i < db_map_count(algo); i++) {
        db_map map;
        char text[64], why[256];
        db_map_nth(algo, i, &map);
        db_map_format(&map, text, sizeof text);
        fprintf(f, "%c %-*s", i == ran_index ? '*' : ' ', map_w, text);
        if (!db_plan_runnable(costs, &map, why, sizeof why)) {
            fprintf(f, " cannot run: %s\n", why);
            continue;
        }
        db_plan_sim sim;
        db_plan_simulate(costs, &map, &sim);
        for (int s = 0; s < algo->n_stages; s++)
            print_ms(f, col_width(algo->stages[s].name), sim.stage_known[s], sim.stage_ms[s]);
        print_ms(f, 10, costs->staging == DB_PLAN_KNOWN, sim.staging_ms);
        print_ms(f, 10, sim.copies_known, sim.transfer_ms);
        print_ms(f, 10, sim.known, sim.latency_ms);
        print_ms(f, 10, sim.known, sim.period_ms);
        fputc('\n', f);
    }
    fprintf(f, "* = the map that runs; staging: the host's share (copies of the page and the result, enqueueing, "
               "waiting, crossings between the roles); latency: one image "
               "until its output is in the caller's image; period: a batch's time per image (its busiest queue)\n");
    for (int s = 0; s < algo->n_stages; s++)
        for (int r = 0; r < DB_ROLE_COUNT; r++) {
            char name[64];
            if (!work_name(costs, s, (db_role)r, name, sizeof name))
                continue;
            double cal = costs->calib_work[s][r];
            const char *unit = work_unit(costs, s, (db_role)r);
            switch (costs->work_source[s][r]) {
            case DB_PLAN_WORK_NONE:
                break;
            case DB_PLAN_WORK_CALIBRATION:
                fprintf(f, "work: %s predicted at the calibration pages' %.2f %s; a page's content may take "
                        "more or fewer (runs with --history learn it)\n", name, cal, unit);
                break;
            case DB_PLAN_WORK_HISTORY:
                fprintf(f, "work: %s predicted at %.2f %s, the median of the last %d runs' pages (calibration "
                        "pages %.2f)\n", name, costs->work[s][r], unit, costs->work_runs[s][r], cal);
                break;
            case DB_PLAN_WORK_PAGE:
                fprintf(f, "work: %s predicted at %.2f %s, this page's (calibration pages %.2f)\n", name,
                        costs->work[s][r], unit, cal);
                break;
            }
        }
    for (int s = 0; s < algo->n_stages; s++)
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            if (costs->history_runs[s][r] >= DB_HISTORY_MIN)
                fprintf(f, "history: %s on %s predicted x%.2f the calibration (median of the last %d runs)\n",
                        algo->stages[s].name, db_role_name((db_role)r), costs->history_factor[s][r],
                        costs->history_runs[s][r]);
    for (int i = 0; i < algo->n_items && i < DB_MAX_ITEMS; i++)
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++)
                if (costs->copy_runs[i][r][d] >= DB_HISTORY_MIN)
                    fprintf(f, "history: %s copies of %s on %s predicted x%.2f the calibration (median of the last "
                            "%d runs)\n", db_transfer_dir_name((db_transfer_dir)d), algo->items[i].name,
                            db_role_name((db_role)r), costs->copy_factor[i][r][d], costs->copy_runs[i][r][d]);
    for (int o = 0; o < 2; o++) {
        db_plan_objective obj = o ? DB_PLAN_THROUGHPUT : DB_PLAN_LATENCY;
        db_plan_choice choice;
        if (db_plan_choose(costs, obj, &choice) != DB_OK) {
            fprintf(f, "no map can run\n");
            return;
        }
        char text[64];
        db_map_format(&choice.map, text, sizeof text);
        if (choice.fallback) {
            fprintf(f, "uncalibrated: --map auto runs the default map %s\n", text);
            break;
        }
        double score = db_plan_score(&choice.sim, obj);
        fprintf(f, "best for %s: %s (%.3f ms", db_plan_objective_name(obj), text, score);
        if (obj == DB_PLAN_THROUGHPUT && score > 0)
            fprintf(f, ", %.1f pages/s", 1000.0 / score);
        fprintf(f, "); --map auto picks it for %s\n", obj == DB_PLAN_LATENCY ? "one image" : "a batch");
    }
    db_plan_print_notes(costs, f, "note: ");
}

/* The row of `rows` of that kind, name and role, or NULL. */
static const db_profile_row *find_row(const db_profile_row *rows, int n, db_record_kind kind, const char *name,
                                      db_role role)
{
    for (int i = 0; i < n; i++)
        if (rows[i].kind == kind && rows[i].role == role && !strcmp(rows[i].stage, name))
            return &rows[i];
    return NULL;
}

enum { MAX_ROWS = 64 };

void db_plan_explain_measured(const db_plan_costs *costs, const db_map *map, const db_profile *prof, int run,
                              FILE *f)
{
    const db_algo *algo = costs->algo;
    if (run < 0)
        run = prof->runs - 1;
    if (run < 0 || run >= prof->runs) {
        fprintf(f, "no measured run to compare with\n");
        return;
    }
    db_profile_row rows[MAX_ROWS];
    int n = db_profile_run_rows(prof, run, rows, MAX_ROWS);
    if (n > MAX_ROWS)
        n = MAX_ROWS;
    db_plan_sim sim;
    db_plan_simulate(costs, map, &sim);
    char text[64];
    db_map_format(map, text, sizeof text);
    fprintf(f, "predicted and measured, map %s, run %d of %d%s; times in ms\n", text, run + 1, prof->runs,
            run == 0 ? " (the first run includes building the programs)" : "");
    fprintf(f, "  %-24s %-4s %10s %10s %10s\n", "stage or copy", "role", "start", "predicted", "measured");
    for (int s = 0; s < algo->n_stages; s++) {
        const db_profile_row *row = find_row(rows, n, DB_REC_KERNEL, algo->stages[s].name, map->role[s]);
        fprintf(f, "  %-24s %-4s", algo->stages[s].name, db_role_name(map->role[s]));
        print_ms(f, 10, sim.stage_known[s], sim.stage_start[s]);
        print_ms(f, 10, sim.stage_known[s], sim.stage_ms[s]);
        print_ms(f, 10, row != NULL, row ? row->span_ms : 0);
        fputc('\n', f);
    }
    double measured_copies = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].kind != DB_REC_KERNEL)
            measured_copies += rows[i].busy_ms;
    for (int c = 0; c < sim.n_copies; c++) {
        const db_plan_copy *cp = &sim.copies[c];
        const char *item = algo->items[cp->item].name;
        char what[64];
        snprintf(what, sizeof what, "%s %s", item, cp->dir == DB_H2D ? "host->dev" : "dev->host");
        const db_profile_row *row =
            find_row(rows, n, cp->dir == DB_H2D ? DB_REC_TO_DEVICE : DB_REC_TO_HOST, item, cp->role);
        fprintf(f, "  %-24s %-4s", what, db_role_name(cp->role));
        bool known = costs->copy[cp->role][cp->dir] == DB_PLAN_KNOWN;
        print_ms(f, 10, sim.known, cp->start_ms);
        print_ms(f, 10, known, cp->ms);
        print_ms(f, 10, row != NULL, row ? row->busy_ms : 0);
        fputc('\n', f);
    }
    fprintf(f, "  %-24s %-4s %10s", "transfers (sum)", "", "");
    print_ms(f, 10, sim.copies_known, sim.transfer_ms);
    print_ms(f, 10, true, measured_copies);
    if (sim.crossing_ms > 0)
        fprintf(f, "\n  %-24s %-4s %10s %10.3f %10s", "crossings (sum)", "", "", sim.crossing_ms, "-");
    fprintf(f, "\n  %-24s %-4s %10s", "latency / wall", "", "");
    print_ms(f, 10, sim.known, sim.latency_ms);
    print_ms(f, 10, true, db_profile_run_wall_ms(prof, run));
    fputc('\n', f);
    db_plan_print_page_work(costs, f);
}

void db_plan_print_page_work(const db_plan_costs *costs, FILE *f)
{
    for (int s = 0; s < costs->algo->n_stages; s++)
        for (int r = 0; r < DB_ROLE_COUNT; r++) {
            char name[64];
            if (work_name(costs, s, (db_role)r, name, sizeof name) &&
                costs->work_source[s][r] == DB_PLAN_WORK_PAGE)
                fprintf(f, "  %s predicted at this page's %.2f %s (calibration pages %.2f)\n", name,
                        costs->work[s][r], work_unit(costs, s, (db_role)r), costs->calib_work[s][r]);
        }
}
