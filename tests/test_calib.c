/*
** test_calib.c — the planner's cost fits and calibration file: fits against a
** closed-form least squares, file round trips, rejected files, stale rows, and
** the OpenCL sources every stage lists. Needs no OpenCL device.
*/
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "algorithms/algorithms.h"
#include "planner/calib.h"
#include "planner/calibrate.h"
#include "planner/cost.h"
#include "runtime/program.h"
#include "testutil.h"

static char dir[] = "/tmp/test_calib.XXXXXX";

/* Least squares weighted by 1 / T^2 (what db_cost_fit minimises: residuals
** relative to T, the sample's of_ms, or its ms where of_ms is 0) from the
** normal equations, independent of GSL; with `plain`, every weight is 1
** (ordinary least squares). */
static double judged_against(const db_cost_sample *s)
{
    return s->of_ms > 0 ? s->of_ms : s->ms;
}

static void closed_form(const db_cost_sample *s, int n, int plain, double *a, double *b)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double w = plain ? 1 : 1 / (judged_against(&s[i]) * judged_against(&s[i]));
        sw += w;
        sx += w * s[i].size;
        sy += w * s[i].ms;
        sxx += w * s[i].size * s[i].size;
        sxy += w * s[i].size * s[i].ms;
    }
    *b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
    *a = (sy - *b * sx) / sw;
}

/* The weighted least-squares c, a, b of t = c P + (a + b P) s (weights as
** db_cost_fit's), or c and b alone (a = 0) without `with_a`, by the normal
** equations and Gaussian elimination; false where they are singular. The
** library fits through GSL; this is its independent check. */
static bool fit_terms_for_test(const db_cost_sample *u, const double *sc, int n, bool with_a, db_cost_model *m)
{
    const int k = with_a ? 3 : 2;
    double ata[3][4] = {{0}};
    for (int i = 0; i < n; i++) {
        double x3[3] = {u[i].size, sc[i], u[i].size * sc[i]}, x2[2] = {u[i].size, u[i].size * sc[i]};
        const double *x = with_a ? x3 : x2;
        double w = 1 / (judged_against(&u[i]) * judged_against(&u[i]));
        for (int r = 0; r < k; r++) {
            ata[r][k] += w * x[r] * u[i].ms;
            for (int c = 0; c < k; c++)
                ata[r][c] += w * x[r] * x[c];
        }
    }
    for (int c = 0; c < k; c++) {
        if (ata[c][c] == 0)
            return false;
        for (int r = 0; r < k; r++) {
            double f = r == c ? 0 : ata[r][c] / ata[c][c];
            for (int j = c; j <= k; j++)
                ata[r][j] -= f * ata[c][j];
        }
    }
    double coef[3];
    for (int r = 0; r < k; r++)
        coef[r] = ata[r][k] / ata[r][r];
    *m = (db_cost_model){.c = coef[0], .a = with_a ? coef[1] : 0, .b = coef[k - 1], .per_unit = true};
    return true;
}

/* The sum of squared residuals of the line a + b * size relative to the times
** they are judged against. */
static double relative_sumsq(const db_cost_sample *s, int n, double a, double b)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double r = (s[i].ms - (a + b * s[i].size)) / judged_against(&s[i]);
        sum += r * r;
    }
    return sum;
}

static void test_fit(void)
{
    /* Noiseless: the line comes back to rounding. */
    db_cost_sample s[5];
    for (int i = 0; i < 5; i++) {
        s[i].size = 1e5 * (1 << i);
        s[i].ms = 0.25 + 2e-6 * s[i].size;
        s[i].of_ms = 0;
    }
    db_cost_model m;
    CHECK(db_cost_fit(s, 5, &m) == DB_OK, "noiseless fit: %s", db_error_message());
    CHECK(fabs(m.a - 0.25) < 1e-9 && fabs(m.b - 2e-6) < 1e-15, "noiseless fit a=%g b=%g", m.a, m.b);
    CHECK(m.sizes == 5 && m.spread < 1e-9, "sizes %d spread %g", m.sizes, m.spread);
    CHECK(fabs(db_cost_predict(&m, 1e6, 0) - 2.25) < 1e-9, "predict %g", db_cost_predict(&m, 1e6, 0));
    /* A stage whose cost follows the content: fitted at 4 passes, a page that
    ** takes 12 costs the size term three times over, the intercept once. */
    CHECK(m.work == 0, "a fit sets work %g", m.work);
    db_cost_model wm = m;
    wm.work = 4;
    CHECK(fabs(db_cost_predict(&wm, 1e6, 12) - (0.25 + 3 * 2.0)) < 1e-9 &&
              fabs(db_cost_predict(&wm, 1e6, 0) - 2.25) < 1e-9 && fabs(db_cost_predict(&m, 1e6, 12) - 2.25) < 1e-9,
          "predict at work 12 of 4: %g; at the calibration's: %g; without a calibrated work: %g",
          db_cost_predict(&wm, 1e6, 12), db_cost_predict(&wm, 1e6, 0), db_cost_predict(&m, 1e6, 12));
    /* Where each unit of work pays its fixed cost too, the intercept scales as well. */
    CHECK(!m.per_unit, "a fit sets per_unit");
    wm.per_unit = true;
    CHECK(fabs(db_cost_predict(&wm, 1e6, 12) - 3 * (0.25 + 2.0)) < 1e-9 &&
              fabs(db_cost_predict(&wm, 1e6, 2) - 0.5 * (0.25 + 2.0)) < 1e-9 &&
              fabs(db_cost_predict(&wm, 1e6, 0) - 2.25) < 1e-9,
          "per unit: at work 12 of 4 %g, at 2 %g, at the calibration's %g", db_cost_predict(&wm, 1e6, 12),
          db_cost_predict(&wm, 1e6, 2), db_cost_predict(&wm, 1e6, 0));

    /* A per_unit fit: c P + (a + b P) s, noiseless at three sizes and scales,
    ** gives c, a and b back; with a fourth, still. */
    const double pc = 2e-6, ua = 0.02, ub = 5e-9;
    db_cost_sample u[4];
    const double us[4] = {1, 0.8, 2.2, 1.3}, up[4] = {5e5, 2e6, 8e6, 1e6};
    for (int i = 0; i < 4; i++)
        u[i] = (db_cost_sample){.size = up[i], .ms = pc * up[i] + (ua + ub * up[i]) * us[i], .of_ms = 0};
    for (int n = 3; n <= 4; n++) {
        db_cost_model um;
        CHECK(db_cost_fit_per_unit(u, us, n, &um) == DB_OK && um.per_unit && fabs(um.c - pc) < 1e-12 &&
                  fabs(um.a - ua) < 1e-9 && fabs(um.b - ub) < 1e-15 && um.spread < 1e-9 && um.sizes == n,
              "per unit, %d samples: c %g a %g b %g spread %g (%s)", n, um.c, um.a, um.b, um.spread,
              db_error_message());
        um.work = 10;
        double want = pc * 3e6 + (ua + ub * 3e6) * 1.5;
        CHECK(fabs(db_cost_predict(&um, 3e6, 15) - want) < 1e-9, "per unit predict %g, expected %g",
              db_cost_predict(&um, 3e6, 15), want);
    }
    /* Scales that barely differ cannot tell c from b: c = 0 and the time over the
    ** scale fitted, though the noiseless samples have a c the three terms would find. */
    const double flat_s[3] = {1, 1.02, 0.99};
    for (int i = 0; i < 3; i++)
        u[i] = (db_cost_sample){.size = up[i], .ms = pc * up[i] + (ua + ub * up[i]) * flat_s[i], .of_ms = 0};
    db_cost_model fm;
    CHECK(db_cost_fit_per_unit(u, flat_s, 3, &fm) == DB_OK && fm.c == 0 && fm.b > 0,
          "per unit, flat scales: c %g a %g b %g", fm.c, fm.a, fm.b);
    /* A three-term solution with c < 0 is noise: the two-term one instead. */
    for (int i = 0; i < 3; i++)
        u[i] = (db_cost_sample){.size = up[i], .ms = -1e-7 * up[i] + (ua + 2e-6 * up[i]) * us[i], .of_ms = 0};
    CHECK(db_cost_fit_per_unit(u, us, 3, &fm) == DB_OK && fm.c == 0 && fm.b > 0, "per unit, c < 0: c %g b %g",
          fm.c, fm.b);
    /* A three-term solution with a < 0 is noise in the fixed cost (Howe's CPU cut has none): c and b alone,
    ** as the two-term least squares give them. */
    const double noise[4] = {0.98, 0.98, 1.01, 0.98};
    for (int i = 0; i < 4; i++)
        u[i] = (db_cost_sample){.size = up[i], .ms = (pc * up[i] + ub * 100 * up[i] * us[i]) * noise[i], .of_ms = 0};
    db_cost_model three = {0}, pair = {0};
    CHECK(fit_terms_for_test(u, us, 4, true, &three) && three.a < 0,
          "the noisy samples' three terms have a = %g, not below 0: the case below is not tested", three.a);
    CHECK(fit_terms_for_test(u, us, 4, false, &pair) && pair.c > 0 && pair.b > 0, "two terms: c %g b %g", pair.c, pair.b);
    CHECK(db_cost_fit_per_unit(u, us, 4, &fm) == DB_OK && fm.a == 0 && fabs(fm.c - pair.c) < 1e-9 * pair.c &&
              fabs(fm.b - pair.b) < 1e-9 * pair.b && fm.spread > 0,
          "per unit, a < 0: c %g a %g b %g spread %g; two terms c %g b %g", fm.c, fm.a, fm.b, fm.spread, pair.c,
          pair.b);
    const double zero_s[3] = {1, 0, 2};
    CHECK(db_cost_fit_per_unit(u, zero_s, 3, &fm) == DB_ERR_USAGE, "a zero scale accepted");

    /* Noisy, with repeated sizes: the same line as the weighted normal equations give. */
    db_cost_sample t[12];
    uint32_t seed = 12345;
    for (int i = 0; i < 12; i++) {
        t[i].size = 2e5 * (1 + i % 4);
        double noise = ((double)(test_random(&seed) % 2001) - 1000) / 1000 * 0.05; /* +-5 % */
        t[i].ms = (1.5 + 3e-6 * t[i].size) * (1 + noise);
        t[i].of_ms = 0;
    }
    double a, b;
    closed_form(t, 12, 0, &a, &b);
    CHECK(db_cost_fit(t, 12, &m) == DB_OK, "noisy fit: %s", db_error_message());
    CHECK(fabs(m.a - a) < 1e-9 * fmax(1, fabs(a)) && fabs(m.b - b) < 1e-9 * fabs(b),
          "noisy fit a=%g b=%g, closed form a=%g b=%g", m.a, m.b, a, b);
    CHECK(m.sizes == 4, "noisy sizes %d", m.sizes);
    CHECK(fabs(m.b - 3e-6) < 0.2 * 3e-6, "noisy b=%g, true 3e-6", m.b);
    double worst = 0;
    for (int i = 0; i < 12; i++)
        worst = fmax(worst, fabs(t[i].ms - (a + b * t[i].size)) / t[i].ms);
    CHECK(fabs(m.spread - worst) < 1e-9 && worst > 0, "spread %g, expected %g", m.spread, worst);

    /* Sizes 16-fold apart with the middle one 10 % slow: a plain fit misses
    ** the smallest page by 12 %, the fit by relative residuals by 2 %. */
    db_cost_sample w3[3] = {{5e5, 0.2, 0}, {2e6, 0.5 * 1.1, 0}, {8e6, 1.7, 0}};
    double pa, pb;
    closed_form(w3, 3, 1, &pa, &pb);
    closed_form(w3, 3, 0, &a, &b);
    CHECK(db_cost_fit(w3, 3, &m) == DB_OK, "weighted fit: %s", db_error_message());
    CHECK(fabs(m.a - a) < 1e-9 && fabs(m.b - b) < 1e-9 * b, "weighted fit a=%g b=%g, closed form a=%g b=%g", m.a,
          m.b, a, b);
    CHECK(relative_sumsq(w3, 3, m.a, m.b) < relative_sumsq(w3, 3, pa, pb),
          "relative residuals %g, plain fit's %g", relative_sumsq(w3, 3, m.a, m.b), relative_sumsq(w3, 3, pa, pb));
    CHECK(fabs(db_cost_predict(&m, 5e5, 0) - 0.2) / 0.2 < 0.05 && fabs(pa + pb * 5e5 - 0.2) / 0.2 > 0.1,
          "smallest page: weighted %g, plain %g, measured 0.2 ms", db_cost_predict(&m, 5e5, 0), pa + pb * 5e5);

    /* A part of a run judged against the run's wall time (the host's share on a
    ** GPU: a few percent of the run, its small page's sample mostly noise): the
    ** same line as the normal equations weighted by the runs' times, and no
    ** larger a sum of run-relative residuals than the fit by its own times. */
    db_cost_sample part[3] = {{5e5, 0.01, 0.6}, {2e6, 0.6, 2.0}, {8e6, 1.15, 6.5}};
    closed_form(part, 3, 0, &a, &b);
    CHECK(db_cost_fit(part, 3, &m) == DB_OK, "run-relative fit: %s", db_error_message());
    CHECK(fabs(m.a - a) < 1e-9 && fabs(m.b - b) < 1e-9 * b, "run-relative fit a=%g b=%g, closed form a=%g b=%g",
          m.a, m.b, a, b);
    db_cost_sample own[3];
    for (int i = 0; i < 3; i++)
        own[i] = (db_cost_sample){part[i].size, part[i].ms, 0};
    db_cost_model mo;
    CHECK(db_cost_fit(own, 3, &mo) == DB_OK, "own-time fit: %s", db_error_message());
    CHECK(relative_sumsq(part, 3, m.a, m.b) < relative_sumsq(part, 3, mo.a, mo.b),
          "run-relative residuals %g, the own-time fit's %g", relative_sumsq(part, 3, m.a, m.b),
          relative_sumsq(part, 3, mo.a, mo.b));
    worst = 0;
    for (int i = 0; i < 3; i++)
        worst = fmax(worst, fabs(part[i].ms - (m.a + m.b * part[i].size)) / part[i].of_ms);
    CHECK(fabs(m.spread - worst) < 1e-12, "run-relative spread %g, expected %g", m.spread, worst);
    db_cost_sample negative[3] = {{5e5, 0.1, -1}, {2e6, 0.3, 2}, {8e6, 1, 6}};
    CHECK(db_cost_fit(negative, 3, &m) == DB_ERR_USAGE, "a negative run time accepted");

    /* Fewer than 3 distinct sizes, however many samples. */
    db_cost_sample two[4] = {{1e5, 1, 0}, {1e5, 1.1, 0}, {2e5, 2, 0}, {2e5, 2.1, 0}};
    CHECK(db_cost_fit(two, 4, &m) == DB_ERR_USAGE && strstr(db_error_message(), "3 or more distinct sizes"),
          "2 sizes accepted: %s", db_error_message());
    CHECK(db_cost_fit(two, 0, &m) == DB_ERR_USAGE, "no samples accepted");
    db_cost_sample bad[3] = {{1e5, 1, 0}, {2e5, NAN, 0}, {3e5, 3, 0}};
    CHECK(db_cost_fit(bad, 3, &m) == DB_ERR_USAGE, "NaN accepted");

    /* Transfers: 0.02 ms latency, 10 GB/s = 1e7 bytes per ms. */
    db_cost_sample c[4];
    for (int i = 0; i < 4; i++) {
        c[i].size = 1e6 * (1 << (2 * i));
        c[i].ms = 0.02 + c[i].size / 1e7;
        c[i].of_ms = 0;
    }
    db_transfer_model tm;
    CHECK(db_transfer_fit(c, 4, &tm) == DB_OK, "transfer fit: %s", db_error_message());
    CHECK(fabs(tm.latency_ms - 0.02) < 1e-9 && fabs(tm.bandwidth_gbs - 10) < 1e-6, "transfer %g ms %g GB/s",
          tm.latency_ms, tm.bandwidth_gbs);
    CHECK(fabs(db_transfer_predict(&tm, 1e7) - 1.02) < 1e-9, "transfer predict %g", db_transfer_predict(&tm, 1e7));
    db_cost_sample flat[3] = {{1e6, 1, 0}, {2e6, 1, 0}, {3e6, 1, 0}};
    CHECK(db_transfer_fit(flat, 3, &tm) == DB_ERR_USAGE, "flat transfer accepted");
    CHECK(db_transfer_fit(c, 2, &tm) == DB_ERR_USAGE, "2-size transfer accepted");

    /* A copy of what another device wrote: 0.01 ms, its first 16 MiB at 20 GB/s
    ** (2e7 bytes a ms), the rest at 55 GB/s, timed at 1 to 256 MiB. The scan's
    ** candidates are 2^(k/8) MiB, so 16 MiB (k = 32) is one: recovered exactly. */
    const double mib = 1048576, cached = 16 * mib;
    db_cost_sample w[5];
    for (int i = 0; i < 5; i++) {
        w[i].size = mib * (1 << (2 * i));
        double past = w[i].size > cached ? w[i].size - cached : 0;
        w[i].ms = 0.01 + (w[i].size - past) / 2e7 + past / 5.5e7;
        w[i].of_ms = 0;
    }
    CHECK(db_transfer_fit_cached(w, 5, 55, &tm) == DB_OK && fabs(tm.cached_bytes - cached) < 1e-3 &&
              fabs(tm.latency_ms - 0.01) < 1e-9 && fabs(tm.bandwidth_gbs - 20) < 1e-6 && tm.beyond_gbs == 55 &&
              tm.spread < 1e-9 && tm.sizes == 5,
          "cached fit: %g bytes, %g ms, %g GB/s then %g, spread %g", tm.cached_bytes, tm.latency_ms, tm.bandwidth_gbs,
          tm.beyond_gbs, tm.spread);
    double want = 0.01 + cached / 2e7 + (131.72e6 - cached) / 5.5e7;
    CHECK(fabs(db_transfer_predict(&tm, 131.72e6) - want) < 1e-9 && fabs(db_transfer_predict(&tm, 4 * mib) -
                                                                          (0.01 + 4 * mib / 2e7)) < 1e-9,
          "cached predict: %g, expected %g", db_transfer_predict(&tm, 131.72e6), want);
    db_transfer_model line;
    CHECK(db_transfer_fit(w, 5, &line) == DB_OK && fabs(db_transfer_predict(&line, 131.72e6) - want) > 0.1 * want,
          "one line fits the cached copies within 10%%: %g against %g", db_transfer_predict(&line, 131.72e6), want);
    /* Copies along one line keep it (no candidate fits better), and so does a fit without the bandwidth past. */
    CHECK(db_transfer_fit_cached(c, 4, 55, &tm) == DB_OK && tm.cached_bytes == 0 && tm.beyond_gbs == 0 &&
              fabs(tm.bandwidth_gbs - 10) < 1e-6,
          "a line fitted as cached: %g bytes at %g GB/s", tm.cached_bytes, tm.bandwidth_gbs);
    /* Copies at one speed, 55 GB/s, 3% off it by turns: no cached part, though
    ** one fits the noise a little better. */
    db_cost_sample steady[9];
    for (int i = 0; i < 9; i++) {
        steady[i].size = mib * (1 << i);
        steady[i].ms = (0.005 + steady[i].size / 5.5e7) * (i % 2 ? 1.03 : 0.97);
        steady[i].of_ms = 0;
    }
    CHECK(db_transfer_fit_cached(steady, 9, 55, &tm) == DB_OK && tm.cached_bytes == 0,
          "noise fitted as cached: %g bytes at %g GB/s", tm.cached_bytes, tm.bandwidth_gbs);
    CHECK(db_transfer_fit_cached(w, 5, 0, &tm) == DB_OK && tm.cached_bytes == 0 &&
              db_transfer_fit_cached(flat, 3, 55, &tm) == DB_ERR_USAGE,
          "cached fit without the bandwidth past, or of flat copies");
}

/* Field by field: struct padding may differ. */
static int same_stage(const db_calib_stage *x, const db_calib_stage *y)
{
    return !strcmp(x->device, y->device) && !strcmp(x->algo, y->algo) && !strcmp(x->stage, y->stage) &&
           x->role == y->role && !strcmp(x->variant, y->variant) && !strcmp(x->kernel_hash, y->kernel_hash) &&
           x->model.a == y->model.a && x->model.b == y->model.b && x->model.sizes == y->model.sizes &&
           x->model.spread == y->model.spread && x->model.work == y->model.work && x->model.c == y->model.c &&
           x->channels == y->channels;
}

static int same_transfer(const db_calib_transfer *x, const db_calib_transfer *y)
{
    return !strcmp(x->device, y->device) && x->dir == y->dir && x->model.latency_ms == y->model.latency_ms &&
           x->model.bandwidth_gbs == y->model.bandwidth_gbs && x->model.sizes == y->model.sizes &&
           x->model.spread == y->model.spread;
}

static db_calib_stage stage_entry(const char *device, const char *stage, db_role role, const char *variant,
                                  char hash_digit, double a, double b)
{
    db_calib_stage e;
    memset(&e, 0, sizeof e);
    snprintf(e.device, sizeof e.device, "%s", device);
    snprintf(e.algo, sizeof e.algo, "sauvola");
    snprintf(e.stage, sizeof e.stage, "%s", stage);
    e.role = role;
    snprintf(e.variant, sizeof e.variant, "%s", variant);
    memset(e.kernel_hash, hash_digit, 64);
    e.model = (db_cost_model){.a = a, .b = b, .sizes = 4, .spread = 0.031};
    return e;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static void test_file(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/sub/dir/host.calib", dir);
    db_calib c, d;
    db_calib_init(&c);
    db_calib_init(&d);
    db_calib_stage e1 = stage_entry("0123456789abcdef", "stats", DB_ROLE_GPU, "shared", 'a', 0.1 / 3, 1.0 / 7e6);
    db_calib_stage e2 = stage_entry("0123456789abcdef", "stats", DB_ROLE_CPU, "shared", 'b', -0.01, 3e-7);
    db_calib_stage e3 = stage_entry("fedcba9876543210", "gray", DB_ROLE_GPU, "-", 'c', 2, 1e-9);
    e3.channels = 1; /* timed on gray pages */
    e2.model.work = 12.0 / 7; /* a stage whose cost follows the content */
    e2.model.c = 1.0 / 9e6;    /* and whose work scales its whole cost, besides a part that it does not */
    db_calib_transfer t1 = {"0123456789abcdef", DB_H2D, {.latency_ms = 0.015, .bandwidth_gbs = 11.7, .sizes = 5,
                                                          .spread = 0.2}};
    db_calib_transfer t2 = {"0123456789abcdef", DB_D2H, {.latency_ms = -0.001, .bandwidth_gbs = 1.0 / 3, .sizes = 3,
                                                          .spread = 0}};
    CHECK(db_calib_put_stage(&c, &e1) == DB_OK && db_calib_put_stage(&c, &e2) == DB_OK &&
          db_calib_put_stage(&c, &e3) == DB_OK && db_calib_put_transfer(&c, &t1) == DB_OK &&
          db_calib_put_transfer(&c, &t2) == DB_OK, "put: %s", db_error_message());
    /* Replacing keeps one entry per key. */
    e1.model.a = 0.5;
    CHECK(db_calib_put_stage(&c, &e1) == DB_OK && c.n_stages == 3, "replace: %d stages", c.n_stages);
    db_calib_stage bad = e1;
    snprintf(bad.stage, sizeof bad.stage, "two words");
    CHECK(db_calib_put_stage(&c, &bad) == DB_ERR_USAGE, "a name with a blank accepted");
    bad = e1;
    bad.channels = 2;
    CHECK(db_calib_put_stage(&c, &bad) == DB_ERR_USAGE && strstr(db_error_message(), "channels"),
          "2 channels accepted: %s", db_error_message());

    db_transfer_model staging = {.latency_ms = 0.002, .bandwidth_gbs = 7.0 / 3, .sizes = 4, .spread = 0.05};
    CHECK(db_calib_put_staging(&c, &staging) == DB_OK, "put staging: %s", db_error_message());
    /* Crossings: one per reading role and device pair; both roles on one device still cross contexts. */
    db_calib_crossing x1 = {"0123456789abcdef", "fedcba9876543210", DB_ROLE_GPU, 0.1 / 3, 3};
    db_calib_crossing x2 = {"fedcba9876543210", "0123456789abcdef", DB_ROLE_CPU, 0.7, 3};
    db_calib_crossing x3 = {"0123456789abcdef", "0123456789abcdef", DB_ROLE_GPU, 0, 4};
    CHECK(db_calib_put_crossing(&c, &x1) == DB_OK && db_calib_put_crossing(&c, &x2) == DB_OK &&
          db_calib_put_crossing(&c, &x3) == DB_OK, "put crossings: %s", db_error_message());
    x2.ms = 0.75;
    CHECK(db_calib_put_crossing(&c, &x2) == DB_OK && c.n_crossings == 3, "replace crossing: %d", c.n_crossings);
    db_calib_crossing negative = x1;
    negative.ms = -0.1;
    CHECK(db_calib_put_crossing(&c, &negative) == DB_ERR_USAGE && c.crossings[0].ms == 0.1 / 3,
          "a negative crossing accepted");
    db_transfer_model no_bandwidth = staging;
    no_bandwidth.bandwidth_gbs = 0;
    CHECK(db_calib_put_staging(&c, &no_bandwidth) == DB_ERR_USAGE && c.staging.bandwidth_gbs == 7.0 / 3,
          "a staging model without bandwidth accepted");
    /* Copies of what a device sharing host memory wrote: one per device pair. */
    db_calib_written w1 = {"fedcba9876543210", "0123456789abcdef",
                           {.latency_ms = 0.004, .bandwidth_gbs = 20.0 / 3, .sizes = 4, .spread = 0.07,
                            .cached_bytes = 16777216.0 / 3, .beyond_gbs = 55.0 / 7}};
    db_calib_written w2 = {"0123456789abcdef", "0123456789abcdef",
                           {.latency_ms = -0.002, .bandwidth_gbs = 31, .sizes = 3, .spread = 0}};
    CHECK(db_calib_put_written(&c, &w1) == DB_OK && db_calib_put_written(&c, &w2) == DB_OK,
          "put written: %s", db_error_message());
    w1.model.bandwidth_gbs = 21.0 / 3;
    CHECK(db_calib_put_written(&c, &w1) == DB_OK && c.n_written == 2, "replace written: %d", c.n_written);
    db_calib_written w_bad = w1;
    w_bad.model.bandwidth_gbs = -1;
    CHECK(db_calib_put_written(&c, &w_bad) == DB_ERR_USAGE && c.written[0].model.bandwidth_gbs == 21.0 / 3,
          "a written model without bandwidth accepted");
    w_bad = w1;
    w_bad.model.beyond_gbs = 0;
    CHECK(db_calib_put_written(&c, &w_bad) == DB_ERR_USAGE && strstr(db_error_message(), "past the cached"),
          "cached bytes without the bandwidth past them accepted: %s", db_error_message());
    w_bad.model.cached_bytes = -1;
    CHECK(db_calib_put_written(&c, &w_bad) == DB_ERR_USAGE && strstr(db_error_message(), "cached bytes"),
          "negative cached bytes accepted: %s", db_error_message());

    CHECK(db_calib_save(&c, path) == DB_OK, "save: %s", db_error_message());
    CHECK(db_calib_load(&d, path) == DB_OK, "load: %s", db_error_message());
    CHECK(d.n_stages == 3 && d.n_transfers == 2 && d.n_crossings == 3, "loaded %d stages, %d transfers, %d crossings",
          d.n_stages, d.n_transfers, d.n_crossings);
    for (int i = 0; i < 3 && i < d.n_crossings; i++)
        CHECK(!strcmp(c.crossings[i].from, d.crossings[i].from) && !strcmp(c.crossings[i].to, d.crossings[i].to) &&
                  c.crossings[i].role == d.crossings[i].role && c.crossings[i].ms == d.crossings[i].ms &&
                  c.crossings[i].sizes == d.crossings[i].sizes,
              "crossing %d differs after a round trip", i);
    CHECK(d.n_written == 2, "loaded %d written rows", d.n_written);
    for (int i = 0; i < 2 && i < d.n_written; i++)
        CHECK(!strcmp(c.written[i].from, d.written[i].from) && !strcmp(c.written[i].to, d.written[i].to) &&
                  c.written[i].model.latency_ms == d.written[i].model.latency_ms &&
                  c.written[i].model.bandwidth_gbs == d.written[i].model.bandwidth_gbs &&
                  c.written[i].model.sizes == d.written[i].model.sizes &&
                  c.written[i].model.spread == d.written[i].model.spread &&
                  c.written[i].model.cached_bytes == d.written[i].model.cached_bytes &&
                  c.written[i].model.beyond_gbs == d.written[i].model.beyond_gbs,
              "written row %d differs after a round trip", i);
    db_transfer_model wm;
    CHECK(db_calib_find_written(&d, "fedcba9876543210", "0123456789abcdef", &wm) == DB_CALIB_FOUND &&
              wm.bandwidth_gbs == 21.0 / 3 &&
              db_calib_find_written(&d, "0123456789abcdef", "fedcba9876543210", &wm) == DB_CALIB_MISSING,
          "written lookups");
    CHECK(d.has_staging && d.staging.latency_ms == staging.latency_ms &&
          d.staging.bandwidth_gbs == staging.bandwidth_gbs && d.staging.sizes == staging.sizes &&
          d.staging.spread == staging.spread, "staging differs after a round trip");
    /* A file of the first format (no staging row) is still read, with no staging model. */
    char old_path[256];
    snprintf(old_path, sizeof old_path, "%s/old.calib", dir);
    write_text(old_path, "docbin-calibration 1\ntransfer 0123456789abcdef h2d 0.01 5 3 0.1\n");
    db_calib o;
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_OK && o.n_transfers == 1 && !o.has_staging, "first format: %s",
          db_error_message());
    db_calib_free(&o);
    /* So is one of the second (no crossing rows). */
    write_text(old_path, "docbin-calibration 2\nstaging 0.01 8 3 0.1\n");
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_OK && o.has_staging && o.n_crossings == 0, "second format: %s",
          db_error_message());
    db_calib_free(&o);
    /* And one of the third (no written rows). */
    write_text(old_path, "docbin-calibration 3\ncrossing 0123456789abcdef fedcba9876543210 gpu 0.2 1\n");
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_OK && o.n_crossings == 1 && o.n_written == 0, "third format: %s",
          db_error_message());
    db_calib_free(&o);
    /* And one of the fourth, whose stage rows have no work: 0 (the size alone). */
    write_text(old_path, "docbin-calibration 4\nstage 0123456789abcdef otsu gray gpu - "
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01\n");
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_OK && o.n_stages == 1 && o.stages[0].model.work == 0 &&
              o.stages[0].model.spread == 0.01,
          "fourth format: %s", db_error_message());
    db_calib_free(&o);
    /* And one of the fifth, whose stage rows have no c: 0. */
    write_text(old_path, "docbin-calibration 5\nstage 0123456789abcdef howe graphcut gpu - "
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 300\n");
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_OK && o.n_stages == 1 && o.stages[0].model.work == 300 &&
              o.stages[0].model.c == 0,
          "fifth format: %s", db_error_message());
    db_calib_free(&o);
    /* And one of the sixth, whose stage rows do not say their pages' channels
    ** (0: any page) and whose written rows copy every byte at one bandwidth. */
    write_text(old_path, "docbin-calibration 6\nstage 0123456789abcdef otsu gray gpu - "
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0\n"
                         "written 0123456789abcdef fedcba9876543210 0.01 20 4 0\n");
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_OK && o.n_stages == 1 && o.stages[0].channels == 0 &&
              o.stages[0].model.a == 0.1 && o.n_written == 1 && o.written[0].model.cached_bytes == 0 &&
              o.written[0].model.bandwidth_gbs == 20,
          "sixth format: %s", db_error_message());
    db_calib_free(&o);
    /* A file's rows load as they are: a row of 0 channels and an RGB row of one
    ** stage are two rows (only a new RGB row replaces the row of 0 channels). */
    write_text(old_path, DB_CALIB_HEADER "\nstage 0123456789abcdef otsu gray gpu - "
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0 0\n"
                         "stage 0123456789abcdef otsu gray gpu - "
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.2 1e-6 3 0.01 0 0 3\n");
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_OK && o.n_stages == 2 && o.stages[0].channels == 0 &&
              o.stages[1].channels == 3,
          "rows of 0 and 3 channels: %d rows (%s)", o.n_stages, db_error_message());
    db_calib_free(&o);
    /* A written row with a field missing, or a non-positive bandwidth, fails the file with its line. */
    write_text(old_path, "docbin-calibration 4\nwritten 0123456789abcdef fedcba9876543210 0.01 20 4\n");
    db_calib_init(&o);
    CHECK(db_calib_load(&o, old_path) == DB_ERR_FORMAT && strstr(db_error_message(), "old.calib:2") &&
              strstr(db_error_message(), "a written row has 6 fields, not 7"),
          "short written row: %s", db_error_message());
    write_text(old_path, "docbin-calibration 4\nwritten 0123456789abcdef fedcba9876543210 0.01 0 4 0\n");
    CHECK(db_calib_load(&o, old_path) == DB_ERR_FORMAT && strstr(db_error_message(), "bandwidth"),
          "written row without bandwidth: %s", db_error_message());
    db_calib_free(&o);
    for (int i = 0; i < 3 && i < d.n_stages; i++)
        CHECK(same_stage(&c.stages[i], &d.stages[i]), "stage entry %d differs after a round trip",
              i);
    for (int i = 0; i < 2 && i < d.n_transfers; i++)
        CHECK(same_transfer(&c.transfers[i], &d.transfers[i]),
              "transfer entry %d differs after a round trip", i);

    /* Lookups: found, stale (another kernel hash), missing. */
    char hash_a[65], hash_z[65], msg[512];
    memset(hash_a, 'a', 64);
    hash_a[64] = '\0';
    memset(hash_z, '0', 64);
    hash_z[64] = '\0';
    db_cost_model m = {0};
    CHECK(db_calib_find_stage(&d, "0123456789abcdef", "sauvola", "stats", DB_ROLE_GPU, "shared", 0, hash_a, &m, msg,
                              sizeof msg) == DB_CALIB_FOUND && m.a == 0.5, "lookup: a=%g %s", m.a, msg);
    CHECK(db_calib_find_stage(&d, "0123456789abcdef", "sauvola", "stats", DB_ROLE_GPU, "shared", 0, hash_z, &m, msg,
                              sizeof msg) == DB_CALIB_STALE, "another kernel hash not stale");
    CHECK(strstr(msg, "sauvola/stats") && strstr(msg, "0123456789abcdef") && strstr(msg, "recalibrate"),
          "stale message: %s", msg);
    CHECK(db_calib_find_stage(&d, "0123456789abcdef", "sauvola", "gray", DB_ROLE_GPU, NULL, 0, hash_a, &m, msg,
                              sizeof msg) == DB_CALIB_MISSING && strstr(msg, "not calibrated"), "missing: %s", msg);
    char hash_c[65];
    memset(hash_c, 'c', 64);
    hash_c[64] = '\0';
    CHECK(db_calib_find_stage(&d, "fedcba9876543210", "sauvola", "gray", DB_ROLE_GPU, NULL, 1, hash_c, &m, msg,
                              sizeof msg) == DB_CALIB_FOUND && m.a == 2, "variant NULL does not find '-': %s", msg);
    /* Rows by the pages' channels: the gray row for gray pages only; for RGB
    ** pages none (a calibration that timed gray pages alone), then a row of 0
    ** channels (a file of version 6) serves both, and an RGB row replaces it. */
    CHECK(db_calib_find_stage(&d, "fedcba9876543210", "sauvola", "gray", DB_ROLE_GPU, NULL, 3, hash_c, &m, msg,
                              sizeof msg) == DB_CALIB_MISSING && strstr(msg, "RGB pages"),
          "the gray row used for RGB pages: %s", msg);
    db_calib_stage any = d.stages[2], rgb = d.stages[2];
    any.channels = 0;
    any.model.a = 5;
    rgb.channels = 3;
    rgb.model.a = 7;
    CHECK(db_calib_put_stage(&d, &any) == DB_OK && d.n_stages == 4 &&
              db_calib_find_stage(&d, "fedcba9876543210", "sauvola", "gray", DB_ROLE_GPU, NULL, 3, hash_c, &m, msg,
                                  sizeof msg) == DB_CALIB_FOUND && m.a == 5 &&
              db_calib_find_stage(&d, "fedcba9876543210", "sauvola", "gray", DB_ROLE_GPU, NULL, 1, hash_c, &m, msg,
                                  sizeof msg) == DB_CALIB_FOUND && m.a == 2,
          "a row of 0 channels: %d rows, a %g (%s)", d.n_stages, m.a, msg);
    CHECK(db_calib_put_stage(&d, &rgb) == DB_OK && d.n_stages == 4 &&
              db_calib_find_stage(&d, "fedcba9876543210", "sauvola", "gray", DB_ROLE_GPU, NULL, 3, hash_c, &m, msg,
                                  sizeof msg) == DB_CALIB_FOUND && m.a == 7,
          "an RGB row did not replace the row of 0 channels: %d rows, a %g", d.n_stages, m.a);
    db_transfer_model tm;
    CHECK(db_calib_find_transfer(&d, "0123456789abcdef", DB_D2H, &tm) == DB_CALIB_FOUND &&
          tm.bandwidth_gbs == 1.0 / 3, "transfer lookup");
    CHECK(db_calib_find_transfer(&d, "fedcba9876543210", DB_D2H, &tm) == DB_CALIB_MISSING, "missing transfer");
    double xms = -1;
    CHECK(db_calib_find_crossing(&d, "fedcba9876543210", "0123456789abcdef", DB_ROLE_CPU, &xms) == DB_CALIB_FOUND &&
          xms == 0.75, "crossing lookup: %g", xms);
    CHECK(db_calib_find_crossing(&d, "fedcba9876543210", "0123456789abcdef", DB_ROLE_GPU, &xms) == DB_CALIB_MISSING,
          "a crossing into the other role found");

    /* A missing file is an empty calibration. */
    char none[256];
    snprintf(none, sizeof none, "%s/none.calib", dir);
    db_calib e;
    db_calib_init(&e);
    CHECK(db_calib_load(&e, none) == DB_OK && e.n_stages == 0, "missing file: %s", db_error_message());

    /* Malformed files: rejected whole, naming the file, the line and the fix. */
    const char *hdr = DB_CALIB_HEADER "\n";
    const char *good = "stage 0123456789abcdef otsu gray gpu - "
                       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0 3\n";
    struct {
        const char *body;
        int line;
        const char *what;
    } cases[] = {
        {"docbin-calibration 8\n", 1, "header"},
        {"garbage\n", 1, "header"},
        {"", 1, "empty"},
        {"stage 0123456789abcdef otsu gray gpu -\n", 3, "fields"},
        {"stage 0123456789abcdef otsu gray gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 fast 3 0.01 0 0 3\n", 3, "number"},
        {"stage 0123456789abcdef otsu gray gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 2 0.01 0 0 3\n", 3, "sizes"},
        {"stage 0123456789abcdef otsu gray tpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0 3\n", 3, "role"},
        {"stage 0123456789abcdeg otsu gray gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0 3\n", 3, "device"},
        {"stage 0123456789abcdef otsu kmeans gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01\n", 3, "work missing"},
        {"stage 0123456789abcdef otsu kmeans gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 -4 0 3\n",
         3, "work negative"},
        {"stage 0123456789abcdef otsu kmeans gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 lots 0 3\n",
         3, "work number"},
        {"stage 0123456789abcdef howe graphcut gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 300\n", 3, "c missing"},
        {"stage 0123456789abcdef howe graphcut gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 300 -1e-6 3\n", 3,
         "c negative"},
        {"stage 0123456789abcdef howe graphcut gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 300 x 3\n", 3, "c number"},
        {"stage 0123456789abcdef otsu gray gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0\n",
         3, "channels missing"},
        {"stage 0123456789abcdef otsu gray gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0 2\n", 3, "channels 2"},
        {"stage 0123456789abcdef otsu gray gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0 rgb\n",
         3, "channels word"},
        {"stage 0123456789abcdef otsu gray gpu - "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0.1 1e-6 3 0.01 0 0 3\n", 3, "twice"},
        {"transfer 0123456789abcdef h2d 0.01 -5 3 0.1\n", 3, "bandwidth"},
        {"transfer 0123456789abcdef h2d 0.01 5 3\n", 3, "fields"},
        {"transfer 0123456789abcdef up 0.01 5 3 0.1\n", 3, "direction"},
        {"transfer 0123456789abcdef h2d 0.01 5 3 0.1", 3, "truncated"},
        {"stage 0123456789abcdef otsu gray gpu - aaaa", 3, "truncated"},
        {"bogus row\n", 3, "kind"},
        {"transfer 0123456789abcdef h2d 0.01 5 3 0.1\ntransfer 0123456789abcdef h2d 0.02 6 3 0.1\n", 4, "twice"},
        {"staging 0.01 8 3\n", 3, "staging fields"},
        {"staging 0.01 0 3 0.1\n", 3, "staging bandwidth"},
        {"staging 0.01 8 3 0.1\nstaging 0.02 9 3 0.1\n", 4, "staging twice"},
        {"crossing 0123456789abcdef 0123456789abcdef gpu 0.5\n", 3, "crossing fields"},
        {"crossing 0123456789abcdef 0123456789abcdef tpu 0.5 3\n", 3, "crossing role"},
        {"crossing 0123456789abcdef 0123456789abcdef gpu -0.5 3\n", 3, "crossing negative"},
        {"crossing 0123456789abcdef 0123456789abcdeX gpu 0.5 3\n", 3, "crossing device"},
        {"crossing 0123456789abcdef 0123456789abcdef gpu 0.5 0\n", 3, "crossing sizes"},
        {"crossing 0123456789abcdef fedcba9876543210 cpu 0.5 3\ncrossing 0123456789abcdef fedcba9876543210 cpu 0.6 3\n",
         4, "crossing twice"},
        {"written 0123456789abcdef fedcba9876543210 0.01 20 4 0 0 0\n"
         "written 0123456789abcdef fedcba9876543210 0.01 21 4 0 0 0\n",
         4, "written twice"},
        {"written 0123456789abcdef FEDCBA9876543210 0.01 20 4 0 0 0\n", 3, "written key"},
        {"written 0123456789abcdef fedcba9876543210 0.01 20 4 0\n", 3, "written fields"},
        {"written 0123456789abcdef fedcba9876543210 0.01 20 4 0 1e7 0\n", 3, "written beyond"},
        {"written 0123456789abcdef fedcba9876543210 0.01 20 4 0 lots 55\n", 3, "written cached"},
    };
    char bad_path[256];
    snprintf(bad_path, sizeof bad_path, "%s/bad.calib", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        if (cases[i].line == 1)
            snprintf(text, sizeof text, "%s", cases[i].body);
        else
            snprintf(text, sizeof text, "%s%s%s", hdr, good, cases[i].body);
        write_text(bad_path, text);
        db_calib keep;
        db_calib_init(&keep);
        CHECK(db_calib_put_transfer(&keep, &t1) == DB_OK, "put");
        db_status st = db_calib_load(&keep, bad_path);
        char where[300];
        snprintf(where, sizeof where, "%s:%d:", bad_path, cases[i].line);
        const char *got = db_error_message();
        CHECK(st == DB_ERR_FORMAT && strstr(got, where) && strstr(got, "recalibrate") && strstr(got, "delete"),
              "case %zu (%s): status %d, message '%s'", i, cases[i].what, (int)st, got);
        CHECK(keep.n_transfers == 1 && keep.n_stages == 0, "case %zu (%s): a failed load changed the calibration",
              i, cases[i].what);
        db_calib_free(&keep);
    }
    /* Comments and blank lines are fine. */
    char text[1024];
    snprintf(text, sizeof text, "%s# a note\n\n%s", hdr, good);
    write_text(bad_path, text);
    CHECK(db_calib_load(&e, bad_path) == DB_OK && e.n_stages == 1, "comments: %s", db_error_message());

    db_calib_free(&c);
    db_calib_free(&d);
    db_calib_free(&e);
}

static void test_default_path(void)
{
    char path[4096];
    setenv("DOCBIN_PERF_DIR", "/perf", 1);
    CHECK(db_calib_default_path(path, sizeof path) == DB_OK && !strncmp(path, "/perf/", 6) &&
          strstr(path, ".calib"), "DOCBIN_PERF_DIR: %s", path);
    unsetenv("DOCBIN_PERF_DIR");
    setenv("XDG_DATA_HOME", "/xdg", 1);
    CHECK(db_calib_default_path(path, sizeof path) == DB_OK && !strncmp(path, "/xdg/docbin/perf/", 17),
          "XDG_DATA_HOME: %s", path);
    unsetenv("XDG_DATA_HOME");
    setenv("HOME", "/home/u", 1);
    CHECK(db_calib_default_path(path, sizeof path) == DB_OK && !strncmp(path, "/home/u/.local/share/docbin/perf/", 33),
          "HOME: %s", path);
}

static int is_embedded(const char *name, size_t len)
{
    for (int i = 0; i < db_cl_source_count; i++)
        if (strlen(db_cl_sources[i].name) == len && !strncmp(db_cl_sources[i].name, name, len))
            return 1;
    return 0;
}

static const db_stage *find(const char *algo, const char *stage)
{
    const db_algo *a = db_algo_find(algo);
    for (int s = 0; a && s < a->n_stages; s++)
        if (!strcmp(a->stages[s].name, stage))
            return &a->stages[s];
    return NULL;
}

static void test_sources(void)
{
    unsetenv("DOCBIN_KERNEL_DIR"); /* hash the embedded sources */
    for (int i = 0; i < db_algo_count(); i++) {
        const db_algo *a = db_algo_at(i);
        for (int s = 0; s < a->n_stages; s++) {
            const db_stage *st = &a->stages[s];
            CHECK(st->sources != NULL, "%s/%s lists no sources", a->name, st->name);
            if (!st->sources)
                continue;
            for (const char *p = st->sources; *p;) {
                size_t len = strcspn(p, " ");
                CHECK(len == 0 || is_embedded(p, len), "%s/%s: '%.*s' is not an embedded source", a->name, st->name,
                      (int)len, p);
                p += len;
                p += *p == ' ';
            }
            char hex[65];
            CHECK(db_stage_kernel_hash(st, hex) == DB_OK && strlen(hex) == 64, "%s/%s hash: %s", a->name, st->name,
                  db_error_message());
        }
    }
    struct {
        const char *algo, *stage, *sources;
    } known[] = {
        {"otsu", "gray", "gray.cl"},         {"otsu", "histogram", "histogram.cl"},
        {"sauvola", "stats", "window_stats.cl"}, {"wolf", "threshold", "local_threshold.cl"},
        {"hbk", "kmeans", "hbk.cl"},         {"howe", "laplacian", "laplacian.cl"},
        {"howe", "canny", "canny.cl"},       {"howe", "graphcut", "howe_graph.cl pushrelabel.cl"},
        {"dbs", "tarray", ""},               {"dbs", "init", "gray.cl dbs.cl"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const db_stage *st = find(known[i].algo, known[i].stage);
        CHECK(st && st->sources && !strcmp(st->sources, known[i].sources), "%s/%s sources '%s', expected '%s'",
              known[i].algo, known[i].stage, st && st->sources ? st->sources : "(null)", known[i].sources);
    }
    /* Stages of one file hash alike; different files differ; a stage's hash is stable. */
    char h1[65], h2[65], h3[65], h4[65];
    db_stage_kernel_hash(find("otsu", "gray"), h1);
    db_stage_kernel_hash(find("sauvola", "gray"), h2);
    db_stage_kernel_hash(find("sauvola", "stats"), h3);
    db_stage_kernel_hash(find("otsu", "gray"), h4);
    CHECK(!strcmp(h1, h2) && strcmp(h1, h3) && !strcmp(h1, h4), "hashes: %s %s %s", h1, h2, h3);
    /* A stage's work in other words is another count: its rows go stale. hbk's
    ** kmeans and label share hbk.cl and differ by kmeans's work alone. */
    const db_stage *kmeans = find("hbk", "kmeans");
    CHECK(kmeans && kmeans->work, "hbk/kmeans has no work");
    if (kmeans && kmeans->work) {
        db_stage_work other = *kmeans->work;
        db_stage changed = *kmeans;
        changed.work = &other;
        db_stage_kernel_hash(kmeans, h1);
        db_stage_kernel_hash(find("hbk", "label"), h2);
        db_stage_kernel_hash(&changed, h3);
        other.unit[DB_ROLE_GPU] = "rounds";
        db_stage_kernel_hash(&changed, h4);
        CHECK(strcmp(h1, h2) && !strcmp(h1, h3) && strcmp(h1, h4), "work hashes: %s %s %s %s", h1, h2, h3, h4);
        other = *kmeans->work;
        other.per_unit[DB_ROLE_GPU] = !kmeans->work->per_unit[DB_ROLE_GPU];
        db_stage_kernel_hash(&changed, h4);
        CHECK(strcmp(h1, h4), "a work scaled per unit hashes as the one that is not, or the other way: %s", h4);
        other = *kmeans->work;
        other.varied = !kmeans->work->varied;
        db_stage_kernel_hash(&changed, h4);
        CHECK(strcmp(h1, h4), "a work calibrated on varied pages hashes as the one that is not, or the other way");
    }
    db_stage fake = {.name = "fake", .sources = "gray.cl nosuch.cl"};
    CHECK(db_stage_kernel_hash(&fake, h1) != DB_OK && strstr(db_error_message(), "nosuch.cl") &&
          strstr(db_error_message(), "fake"), "missing source: %s", db_error_message());
    fake.sources = NULL;
    CHECK(db_stage_kernel_hash(&fake, h1) == DB_ERR_USAGE, "NULL sources accepted");
}

/* The check at the end of a calibration: a host whose copies moved by more
** than DB_CALIBRATE_HOST_CHANGE (1.5) either way. */
static void test_host_changed(void)
{
    CHECK(!db_calibrate_host_changed(39, 39) && !db_calibrate_host_changed(39, 30) &&
              !db_calibrate_host_changed(30, 39) && !db_calibrate_host_changed(30, 45),
          "a steady host (x1.5 or less) taken for a changed one");
    CHECK(db_calibrate_host_changed(9.6, 39) && db_calibrate_host_changed(39, 9.6) &&
              db_calibrate_host_changed(30, 45.3),
          "a host four times faster at the end, or slower, or 1.51 times, not noticed");
    CHECK(!db_calibrate_host_changed(0, 39) && !db_calibrate_host_changed(39, 0) &&
              !db_calibrate_host_changed(NAN, 39),
          "a copy that was not timed taken for a change");
}

/* The check over a calibration's checkpoints: the slowest against the fastest,
** wherever they fall, unmeasured ones left out, the earlier named first. */
static void test_speed_moved(void)
{
    int a = -1, b = -1;
    const double steady[] = {30, 36, 33, 41, 30};
    CHECK(!db_calibrate_speed_moved(steady, 5, &a, &b), "a steady host (x1.37 at most) taken for a changed one");
    /* Slow in the middle only: the start and the end agree. */
    const double dip[] = {30, 31, 14, 29, 30};
    CHECK(db_calibrate_speed_moved(dip, 5, &a, &b) && a == 1 && b == 2,
          "a host twice as slow after the second algorithm only: moved, checkpoints %d and %d (want 1 and 2)", a, b);
    /* Faster later: the fastest comes after the slowest. */
    const double rise[] = {17.6, 20, 0, 37.1, 30};
    CHECK(db_calibrate_speed_moved(rise, 5, &a, &b) && a == 0 && b == 3,
          "a host twice as fast after a while: checkpoints %d and %d (want 0 and 3)", a, b);
    const double unmeasured[] = {0, 30, NAN, 0, 31};
    CHECK(!db_calibrate_speed_moved(unmeasured, 5, &a, &b), "checkpoints not measured (0, NAN) taken for a change");
    const double late[] = {0, 14, NAN, 31};
    CHECK(db_calibrate_speed_moved(late, 4, &a, &b) && a == 1 && b == 3,
          "a move between measured checkpoints hidden by unmeasured ones: checkpoints %d and %d (want 1 and 3)", a, b);
    CHECK(!db_calibrate_speed_moved(dip, 0, &a, &b) && !db_calibrate_speed_moved(dip, 1, &a, &b),
          "fewer than two checkpoints taken for a change");
}

/* The host's share net of the staging copies of the page and the result,
** by hand: 0.05 ms + 1 MB at 20 GB/s is 0.1 ms a copy. */
static void test_host_net(void)
{
    const db_transfer_model staging = {.latency_ms = 0.05, .bandwidth_gbs = 20, .sizes = 4};
    CHECK(fabs(db_calibrate_host_net(0.5, &staging, 1000000, 1000000) - 0.3) < 1e-12, "0.5 ms less two copies of "
          "0.1: %g", db_calibrate_host_net(0.5, &staging, 1000000, 1000000));
    /* A result of 250 kB: 0.0625 ms. */
    CHECK(fabs(db_calibrate_host_net(0.5, &staging, 1000000, 250000) - 0.3375) < 1e-12, "unequal copies: %g",
          db_calibrate_host_net(0.5, &staging, 1000000, 250000));
    CHECK(db_calibrate_host_net(0.15, &staging, 1000000, 1000000) == 0, "copies predicted above the whole share "
          "left %g for the host", db_calibrate_host_net(0.15, &staging, 1000000, 1000000));
}

/* The stolen time over a calibration's checkpoints: the worst interval at
** DB_CALIBRATE_STOLEN_PCT (1%) or more, how many reached it, unknown ones (-1)
** left out. */
static void test_most_stolen(void)
{
    db_calibrate_checks k;
    memset(&k, 0, sizeof k);
    const double steady[] = {-1, 0.02, 0.35, 0.99, 0.11};
    k.n = 5;
    for (int i = 0; i < k.n; i++)
        k.at[i].stolen_pct = steady[i];
    int over = -1;
    CHECK(db_calibrate_most_stolen(&k, &over) == -1 && over == 0, "0.99%% at most taken for too much (over %d)",
          over);
    /* Run 66's calibration: 1.38% while HBK was calibrated. */
    const double run66[] = {-1, 0.02, 0.04, 0.16, 0.06, 0.18, 1.38, 0.06, 0.05, 0.18};
    k.n = 10;
    for (int i = 0; i < k.n; i++)
        k.at[i].stolen_pct = run66[i];
    CHECK(db_calibrate_most_stolen(&k, &over) == 6 && over == 1, "run 66: checkpoint %d, %d over (want 6, 1)",
          db_calibrate_most_stolen(&k, &over), over);
    /* Several intervals: the worst is named, all are counted; exactly 1% counts. */
    const double several[] = {-1, 1.0, 4.3, 2.94, 0.62};
    k.n = 5;
    for (int i = 0; i < k.n; i++)
        k.at[i].stolen_pct = several[i];
    CHECK(db_calibrate_most_stolen(&k, &over) == 2 && over == 3, "several: checkpoint %d, %d over (want 2, 3)",
          db_calibrate_most_stolen(&k, &over), over);
    k.n = 0;
    CHECK(db_calibrate_most_stolen(&k, &over) == -1 && over == 0, "no checkpoint: one named");
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_fit();
    test_file();
    test_default_path();
    test_sources();
    test_host_changed();
    test_speed_moved();
    test_most_stolen();
    test_host_net();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (test_failures)
        fprintf(stderr, "%d failures\n", test_failures);
    else
        printf("ok\n");
    return test_failures ? 1 : 0;
}
