/*
** cost.c — least-squares fits of the stage and transfer cost models.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include "planner/cost.h"

/* Bytes per millisecond in one GB/s. */
static const double BYTES_PER_MS_PER_GBS = 1e6;

/* What a residual is relative to: the measured time, where a time of 0 (below
** the clock's resolution) counts as 1 us so that nothing divides by 0. */
static double relative_to(double ms)
{
    return fmax(ms, 1e-3);
}

static int count_sizes(const db_cost_sample *samples, int n)
{
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = samples[j].size == samples[i].size;
        distinct += !seen;
    }
    return distinct;
}

/* The time a sample's residual is judged against (cost.h). */
static double judged_against(const db_cost_sample *s)
{
    return relative_to(s->of_ms > 0 ? s->of_ms : s->ms);
}

/* The line a + b * x through the samples, its distinct sizes and its spread;
** `what` ("pixels", "bytes") names the size in messages. Each sample weighs
** 1 / T^2 (judged_against), so the fit minimises relative residuals: the
** planner is judged by relative error, and a plain fit through sizes that
** differ 16-fold lets the largest size's few-percent noise move the intercept
** by more than the smallest size's whole time. */
static db_status fit_line(const db_cost_sample *samples, int n, const char *what, double *a, double *b, int *sizes,
                          double *spread)
{
    for (int i = 0; i < n; i++) {
        const db_cost_sample *s = &samples[i];
        if (!isfinite(s->size) || !isfinite(s->ms) || !isfinite(s->of_ms) || s->size < 0 || s->ms < 0 ||
            s->of_ms < 0)
            return db_fail(DB_ERR_USAGE, "cost sample %d (%g %s, %g ms of %g) is negative or not a number; "
                           "measure again", i, s->size, what, s->ms, s->of_ms);
    }
    int distinct = count_sizes(samples, n);
    if (distinct < DB_COST_MIN_SIZES)
        return db_fail(DB_ERR_USAGE, "a cost model needs samples at %d or more distinct sizes, got %d; "
                       "measure more image sizes", DB_COST_MIN_SIZES, distinct);
    double *x = malloc(3 * (size_t)n * sizeof *x);
    if (!x)
        return db_fail(DB_ERR_NOMEM, "out of memory fitting a cost model");
    double *y = x + n, *w = y + n;
    for (int i = 0; i < n; i++) {
        x[i] = samples[i].size;
        y[i] = samples[i].ms;
        w[i] = 1 / (judged_against(&samples[i]) * judged_against(&samples[i]));
    }
    double cov00, cov01, cov11, chisq;
    gsl_fit_wlinear(x, 1, w, 1, y, 1, (size_t)n, a, b, &cov00, &cov01, &cov11, &chisq);
    free(x);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double r = fabs(samples[i].ms - (*a + *b * samples[i].size)) / judged_against(&samples[i]);
        worst = fmax(worst, r);
    }
    if (!isfinite(*a) || !isfinite(*b))
        return db_fail(DB_ERR_USAGE, "the cost fit over %d sizes is not finite; measure again", distinct);
    *sizes = distinct;
    *spread = worst;
    return DB_OK;
}

db_status db_cost_fit(const db_cost_sample *samples, int n, db_cost_model *model)
{
    db_cost_model m = {0};
    db_status st = fit_line(samples, n, "pixels", &m.a, &m.b, &m.sizes, &m.spread);
    if (st == DB_OK)
        *model = m;
    return st;
}

/* The fit of db_cost_fit_per_unit with its three terms, or with c and b
** alone (a = 0) where `with_a` is false; false where it does not hold (cost.h). */
static bool fit_terms(const db_cost_sample *samples, const double *scale, int n, bool with_a, db_cost_model *m)
{
    double lo = scale[0], hi = scale[0];
    for (int i = 1; i < n; i++)
        lo = fmin(lo, scale[i]), hi = fmax(hi, scale[i]);
    const size_t terms = with_a ? 3 : 2;
    if (n < (int)terms || (hi - lo) < DB_COST_SCALE_SPREAD * hi)
        return false;
    /* GSL's default handler aborts: a failed allocation or fit falls back instead. */
    gsl_error_handler_t *handler = gsl_set_error_handler_off();
    gsl_matrix *x = gsl_matrix_alloc((size_t)n, terms), *cov = gsl_matrix_alloc(terms, terms);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n), *coef = gsl_vector_alloc(terms);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, terms);
    bool ok = x && cov && y && w && coef && ws;
    if (ok) {
        for (int i = 0; i < n; i++) {
            double p = samples[i].size, t = judged_against(&samples[i]);
            gsl_matrix_set(x, (size_t)i, 0, p);
            gsl_matrix_set(x, (size_t)i, terms - 1, p * scale[i]);
            if (with_a)
                gsl_matrix_set(x, (size_t)i, 1, scale[i]);
            gsl_vector_set(y, (size_t)i, samples[i].ms);
            gsl_vector_set(w, (size_t)i, 1 / (t * t));
        }
        double chisq;
        ok = gsl_multifit_wlinear(x, w, y, coef, cov, &chisq, ws) == 0;
    }
    if (ok) {
        m->c = gsl_vector_get(coef, 0);
        m->a = with_a ? gsl_vector_get(coef, 1) : 0;
        m->b = gsl_vector_get(coef, terms - 1);
        ok = isfinite(m->a) && isfinite(m->b) && isfinite(m->c) && m->c >= 0 && m->b >= 0;
    }
    gsl_multifit_linear_free(ws);
    gsl_vector_free(coef);
    gsl_vector_free(w);
    gsl_vector_free(y);
    gsl_matrix_free(cov);
    gsl_matrix_free(x);
    gsl_set_error_handler(handler);
    return ok;
}

db_status db_cost_fit_per_unit(const db_cost_sample *samples, const double *scale, int n, db_cost_model *model)
{
    db_cost_sample *scaled = calloc((size_t)(n > 0 ? n : 1), sizeof *scaled);
    if (!scaled)
        return db_fail(DB_ERR_NOMEM, "out of memory fitting a cost model");
    for (int i = 0; i < n; i++) {
        if (!(scale[i] > 0) || !isfinite(scale[i])) {
            free(scaled);
            return db_fail(DB_ERR_USAGE, "cost sample %d has work scale %g, not a positive number; measure again",
                           i, scale[i]);
        }
        /* The two-term form: each sample's time counted at the median work. */
        scaled[i] = samples[i];
        scaled[i].ms /= scale[i];
        scaled[i].of_ms /= scale[i];
    }
    db_cost_model m = {0};
    db_status st = fit_line(scaled, n, "pixels", &m.a, &m.b, &m.sizes, &m.spread);
    free(scaled);
    if (st != DB_OK)
        return st;
    /* A fixed cost below zero is noise the three terms fitted as a cost (Howe's
    ** CPU cut, whose fixed cost is nil: the A4 page came out +11% with it on
    ** the build machine, -2% without): the fit goes on without it. */
    db_cost_model three = m;
    bool fitted = fit_terms(samples, scale, n, true, &three);
    if (fitted && three.a < 0)
        fitted = fit_terms(samples, scale, n, false, &three);
    if (fitted) {
        three.spread = 0;
        for (int i = 0; i < n; i++) {
            double t = three.c * samples[i].size + (three.a + three.b * samples[i].size) * scale[i];
            three.spread = fmax(three.spread, fabs(samples[i].ms - t) / judged_against(&samples[i]));
        }
        m = three;
    }
    m.per_unit = true;
    *model = m;
    return DB_OK;
}

double db_cost_predict(const db_cost_model *model, double pixels, double work)
{
    double scale = model->work > 0 && work > 0 ? work / model->work : 1.0;
    if (model->per_unit)
        return fmax(0, model->c * pixels + (model->a + model->b * pixels) * scale);
    return fmax(0, model->a + model->b * pixels * scale);
}

const char *db_transfer_dir_name(db_transfer_dir dir)
{
    switch (dir) {
    case DB_H2D:
        return "h2d";
    case DB_D2H:
        return "d2h";
    default:
        return "?";
    }
}

int db_transfer_dir_parse(const char *word, db_transfer_dir *dir)
{
    for (int d = 0; d < DB_TRANSFER_DIR_COUNT; d++)
        if (!strcmp(word, db_transfer_dir_name((db_transfer_dir)d))) {
            *dir = (db_transfer_dir)d;
            return 1;
        }
    return 0;
}

db_status db_transfer_fit(const db_cost_sample *samples, int n, db_transfer_model *model)
{
    double a, b, spread;
    int sizes;
    db_status st = fit_line(samples, n, "bytes", &a, &b, &sizes, &spread);
    if (st != DB_OK)
        return st;
    if (!(b > 0))
        return db_fail(DB_ERR_USAGE, "transfer times over %d sizes do not grow with the size (slope %g ms/byte), "
                       "so no bandwidth follows; measure larger transfers", sizes, b);
    model->latency_ms = a;
    model->bandwidth_gbs = 1 / (b * BYTES_PER_MS_PER_GBS);
    model->sizes = sizes;
    model->spread = spread;
    model->cached_bytes = 0;
    model->beyond_gbs = 0;
    return DB_OK;
}

double db_transfer_predict(const db_transfer_model *model, double bytes)
{
    bool split = model->cached_bytes > 0 && model->beyond_gbs > 0;
    double past = split && bytes > model->cached_bytes ? bytes - model->cached_bytes : 0;
    double ms = model->latency_ms + (bytes - past) / (model->bandwidth_gbs * BYTES_PER_MS_PER_GBS);
    if (past > 0)
        ms += past / (model->beyond_gbs * BYTES_PER_MS_PER_GBS);
    return fmax(0, ms);
}

/* Candidates for cached_bytes between the smallest and largest size, spaced
** evenly in log; the most samples the scan takes (more fit one line). */
enum { CACHED_STEPS = 64, CACHED_SAMPLES = 64 };

/* A candidate must leave at most this share of one line's squared residuals:
** a better fit of the noise alone is not a cache. */
#define CACHED_GAIN 0.75

/* Sum over the samples of ((measured - predicted) / measured)^2. */
static double relative_ssr(const db_cost_sample *samples, int n, const db_transfer_model *m)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double r = (samples[i].ms - db_transfer_predict(m, samples[i].size)) / judged_against(&samples[i]);
        sum += r * r;
    }
    return sum;
}

db_status db_transfer_fit_cached(const db_cost_sample *samples, int n, double beyond_gbs, db_transfer_model *model)
{
    db_transfer_model best = {0};
    db_status st = db_transfer_fit(samples, n, &best);
    if (st != DB_OK)
        return st;
    *model = best;
    if (!(beyond_gbs > 0) || n > CACHED_SAMPLES)
        return DB_OK;
    double best_ssr = CACHED_GAIN * relative_ssr(samples, n, &best);
    double lo = samples[0].size, hi = samples[0].size;
    for (int i = 1; i < n; i++)
        lo = fmin(lo, samples[i].size), hi = fmax(hi, samples[i].size);
    db_cost_sample shifted[CACHED_SAMPLES];
    for (int step = 0; step <= CACHED_STEPS && lo > 0; step++) {
        double cached = lo * pow(hi / lo, (double)step / CACHED_STEPS);
        /* What the bytes past `cached` cost at beyond_gbs is known: the line is fitted to the rest. */
        for (int i = 0; i < n; i++) {
            double past = samples[i].size > cached ? samples[i].size - cached : 0;
            shifted[i] = (db_cost_sample){.size = samples[i].size - past,
                                          .ms = samples[i].ms - past / (beyond_gbs * BYTES_PER_MS_PER_GBS),
                                          .of_ms = judged_against(&samples[i])};
        }
        double a, b, spread;
        int sizes;
        /* Lines in the writer's caches are slower to fetch, not faster. */
        if (fit_line(shifted, n, "bytes", &a, &b, &sizes, &spread) != DB_OK || !(b > 0) ||
            !(1 / (b * BYTES_PER_MS_PER_GBS) < beyond_gbs))
            continue;
        db_transfer_model m = {.latency_ms = a, .bandwidth_gbs = 1 / (b * BYTES_PER_MS_PER_GBS), .sizes = best.sizes,
                               .spread = spread, .cached_bytes = cached, .beyond_gbs = beyond_gbs};
        double ssr = relative_ssr(samples, n, &m);
        if (ssr < best_ssr) {
            best = m;
            best_ssr = ssr;
        }
    }
    db_error_clear(); /* candidates that did not fit said why; none of it matters now */
    *model = best;
    return DB_OK;
}
