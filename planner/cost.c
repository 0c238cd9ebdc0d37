/*
** cost.c — least-squares fits of the stage and transfer cost models.
*/
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_fit.h>
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

double db_cost_predict(const db_cost_model *model, double pixels, double work)
{
    double scale = model->work > 0 && work > 0 ? work / model->work : 1.0;
    if (model->per_unit)
        return fmax(0, (model->a + model->b * pixels) * scale);
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
    return DB_OK;
}

double db_transfer_predict(const db_transfer_model *model, double bytes)
{
    return fmax(0, model->latency_ms + bytes / (model->bandwidth_gbs * BYTES_PER_MS_PER_GBS));
}
