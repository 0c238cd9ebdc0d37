/*
** local_host.c — the local methods' window sums and threshold in one pass, as
** host code on the cpu role (the fused stage of algorithms/local.c).
**
** PoCL runs the two kernels well below what the CPU can do: the threshold
** kernel alone took 32 ms for an A4 page on two cores, and the 16 bytes of
** sums a pixel between the stages cost a write and a read of 130 MB. Here
** the process's workers (runtime/parallel.c) take bands of rows; each slides
** the window down its band with column sums and along each row with running
** sums, then thresholds the row in loops the compiler vectorises: a cheap
** estimate decides the pixels far from their threshold, and the arithmetic of
** cl/local_threshold.cl, operation for operation (IEEE division and square
** root in double, no contraction), decides the rest (screen_row), so every
** map gives the same image.
*/
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "algorithms/local_host.h"
#include "runtime/parallel.h"

/* One thread's share, and what the first of Wolf's two passes finds in it. */
typedef struct band {
    const db_local_args *a;
    const uint8_t *gray;
    uint8_t *out;
    int y0, y1;
    uint64_t *work;   /* ROWS rows of 8 bytes a pixel: column sums, window sums, widths, counts, reciprocals, flags */
    int pass;         /* Wolf: 0 finds the extremes, 1 thresholds; others: 1 only */
    double gmin, max_s; /* pass 1's inputs (Wolf) */
    double var_max;   /* pass 0's results */
    int gray_min;
} band;

/* A band's working rows, in 8 bytes a pixel: four rows of 32-bit sums, three of
** doubles, one of flags. */
enum { ROWS = 6 };

/* The kernel's threshold at one pixel, operation for operation: the exact
** value every map compares with. */
static double exact_threshold(const db_local_args *a, const band *b, uint32_t s, uint32_t q, double cnt)
{
    const double k = a->k;
    double m = (double)s / cnt, var = (double)q / cnt - m * m;
    switch (a->method) {
    case DB_LOCAL_NIBLACK:
        return m + k * sqrt(var);
    case DB_LOCAL_SAUVOLA:
        return m * (1.0 + k * ((sqrt(var) / 128.0) - 1.0));
    case DB_LOCAL_NICK:
        return m + k * sqrt(var + m * m);
    default:
        return m - k * (1.0 - (sqrt(var) / b->max_s)) * (m - b->gmin);
    }
}

/* Two double divisions and a double square root a pixel bound the exact
** threshold by the cores' dividers. Most pixels lie far from their threshold,
** so a cheap estimate decides them: the sums times the window's reciprocal,
** and a single-precision square root. Against the exact value:
** - the mean is off by at most 3 ulp of 255 (1e-13), E[x^2] by 3 ulp of
**   255^2, and the variance (NICK: var + m^2), with its roundings, by 1e-10;
** - so its root by at most sqrt(1e-10) = 1e-5 (near 0, where the root is
**   steepest), plus 2.3e-5 (1.5 float ulp of 255) through the float: < 1e-4;
** - so the threshold by at most 1e-4 |k| (Niblack, NICK), 2e-4 |k| (Sauvola:
**   m/128 < 2) or 0.0255 |k| / max_s (Wolf), plus 1e-12 (1 + |k|).
** A pixel whose gray level is more than the margin (about ten times that)
** from the estimate is on the same side of the exact threshold; the others
** take the exact path, as does anything not finite (a variance estimated
** below 0 gives NaN; the exact one never is: it is 0 for a flat window, else
** at least 1/n^2, far above its rounding). */
static double screen_margin(const db_local_args *a, const band *b)
{
    double k = fabs(a->k);
    return a->method == DB_LOCAL_WOLF ? 1e-3 * (1.0 + k) * (1.0 + 255.0 / b->max_s) : 1e-3 * (1.0 + k);
}

/* Decides one row of n pixels from its window sums and the reciprocals of
** the windows' pixel counts; flags in `unsure` the pixels it cannot decide.
** Separate loops per method, without branches, so that they vectorise. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void screen_row(const db_local_args *a, const band *b, double margin, const uint8_t *g, const uint32_t *s,
                       const uint32_t *q, const double *inv, uint8_t *out, uint8_t *unsure, int n)
{
    const double k = a->k;
    switch (a->method) {
    case DB_LOCAL_NIBLACK:
        for (int x = 0; x < n; x++) {
            double m = (double)s[x] * inv[x], var = (double)q[x] * inv[x] - m * m;
            double t = m + k * (double)sqrtf((float)var), d = (double)g[x] - t;
            out[x] = d <= 0 ? 0 : 255;
            unsure[x] = !(fabs(d) > margin);
        }
        break;
    case DB_LOCAL_SAUVOLA:
        for (int x = 0; x < n; x++) {
            double m = (double)s[x] * inv[x], var = (double)q[x] * inv[x] - m * m;
            double t = m * (1.0 + k * ((double)sqrtf((float)var) * (1.0 / 128.0) - 1.0)), d = (double)g[x] - t;
            out[x] = d <= 0 ? 0 : 255;
            unsure[x] = !(fabs(d) > margin);
        }
        break;
    case DB_LOCAL_NICK:
        for (int x = 0; x < n; x++) {
            double m = (double)s[x] * inv[x], sq = (double)q[x] * inv[x] - m * m + m * m;
            double t = m + k * (double)sqrtf((float)sq), d = (double)g[x] - t;
            out[x] = d <= 0 ? 0 : 255;
            unsure[x] = !(fabs(d) > margin);
        }
        break;
    default: {
        const double gmin = b->gmin, inv_max_s = 1.0 / b->max_s;
        for (int x = 0; x < n; x++) {
            double m = (double)s[x] * inv[x], var = (double)q[x] * inv[x] - m * m;
            double t = m - k * (1.0 - (double)sqrtf((float)var) * inv_max_s) * (m - gmin), d = (double)g[x] - t;
            out[x] = d <= 0 ? 0 : 255;
            unsure[x] = !(fabs(d) > margin);
        }
    }
    }
}

/* Thresholds one row: the screen, then the exact threshold where it was unsure. */
static void threshold_row(const db_local_args *a, const band *b, const uint8_t *g, const uint32_t *s,
                          const uint32_t *q, const double *cnt, const double *inv, uint8_t *unsure, uint8_t *out,
                          int n)
{
    screen_row(a, b, screen_margin(a, b), g, s, q, inv, out, unsure, n);
    for (int x = 0; x < n; x++) {
        uint64_t eight;
        if (x + 8 <= n && (memcpy(&eight, unsure + x, 8), eight == 0)) { /* most rows: nothing to redo */
            x += 7;
            continue;
        }
        if (unsure[x])
            out[x] = (double)g[x] <= exact_threshold(a, b, s[x], q[x], cnt[x]) ? 0 : 255;
    }
}

/* Wolf's first pass over one row: the largest window variance, in the kernel's
** order (the running maximum from DBL_MIN). */
static double row_var_max(const uint32_t *s, const uint32_t *q, const double *cnt, int n, double vmax)
{
    for (int x = 0; x < n; x++) {
        double m = (double)s[x] / cnt[x], var = (double)q[x] / cnt[x] - m * m;
        vmax = var > vmax ? var : vmax;
    }
    return vmax;
}

/* Moves the column sums one row down: row `in` enters, row `gone` leaves (either may be NULL). */
static void slide_columns(uint32_t *restrict cs, uint32_t *restrict cq, const uint8_t *restrict in,
                          const uint8_t *restrict gone, int w)
{
    if (in && gone)
        for (int x = 0; x < w; x++) {
            int32_t a = in[x], b = gone[x];
            cs[x] += (uint32_t)(a - b); /* mod 2^32: the sums stay exact */
            cq[x] += (uint32_t)(a * a - b * b);
        }
    else if (in)
        for (int x = 0; x < w; x++) {
            cs[x] += in[x];
            cq[x] += (uint32_t)in[x] * in[x];
        }
    else if (gone)
        for (int x = 0; x < w; x++) {
            cs[x] -= gone[x];
            cq[x] -= (uint32_t)gone[x] * gone[x];
        }
}

/* The window sums along a row from the column sums: the window's left edge
** leaves at x - r - 1, its right edge enters at x + r; three loops, so that
** neither test sits inside one. The sums stay integers here (the threshold
** loop converts them, many at once), as this loop is a chain of additions. */
static void row_sums(const uint32_t *restrict cs, const uint32_t *restrict cq, uint32_t *restrict s,
                     uint32_t *restrict q, int w, int r)
{
    uint32_t rs = 0, rq = 0;
    int x = 0, first = r + 1 < w ? r + 1 : w; /* no column leaves before x = r + 1 */
    for (int c = 0; c <= r && c < w; c++) {
        rs += cs[c];
        rq += cq[c];
    }
    for (; x < first; x++) {
        if (x > 0 && x + r < w) {
            rs += cs[x + r];
            rq += cq[x + r];
        }
        s[x] = rs;
        q[x] = rq;
    }
    for (; x + r < w; x++) { /* one column enters, one leaves */
        rs += cs[x + r] - cs[x - r - 1];
        rq += cq[x + r] - cq[x - r - 1];
        s[x] = rs;
        q[x] = rq;
    }
    for (; x < w; x++) { /* columns only leave */
        rs -= cs[x - r - 1];
        rq -= cq[x - r - 1];
        s[x] = rs;
        q[x] = rq;
    }
}

static void run_band(band *b)
{
    const db_local_args *a = b->a;
    const int w = a->width, h = a->height, r = a->half;
    /* Windows of at most 255 x 255 pixels (the fused stage's bound): every sum,
    ** of squares too (at most 255^4 < 2^32), fits 32 bits, and a vector holds
    ** twice as many as of 64. */
    uint32_t *cs = (uint32_t *)b->work, *cq = cs + w, *s = cq + w, *q = s + w;
    double *cols = (double *)(q + w), *cnt = cols + w, *inv = cnt + w;
    uint8_t *unsure = (uint8_t *)(inv + w);
    double inv_rows = 0; /* the window height `inv` holds */
    memset(cs, 0, 2 * (size_t)w * sizeof *cs);
    /* The clipped window's width at each column does not change from row to row. */
    for (int x = 0; x < w; x++)
        cols[x] = (x + r < w - 1 ? x + r : w - 1) - (x - r > 0 ? x - r : 0) + 1;
    b->var_max = DBL_MIN;
    b->gray_min = 255;
    for (int y = b->y0 > r ? b->y0 - r : 0; y <= b->y0 + r && y < h; y++)
        slide_columns(cs, cq, b->gray + (size_t)y * w, NULL, w);
    for (int y = b->y0; y < b->y1; y++) {
        if (y > b->y0)
            slide_columns(cs, cq, y + r < h ? b->gray + (size_t)(y + r) * w : NULL,
                          y - r - 1 >= 0 ? b->gray + (size_t)(y - r - 1) * w : NULL, w);
        double rows = (y + r < h - 1 ? y + r : h - 1) - (y - r > 0 ? y - r : 0) + 1;
        row_sums(cs, cq, s, q, w, r);
        for (int x = 0; x < w; x++)
            cnt[x] = rows * cols[x]; /* exact: a product of integers below 2^53 */
        if (b->pass == 1 && rows != inv_rows) { /* the window's height changes only near the top and bottom */
            for (int x = 0; x < w; x++)
                inv[x] = 1.0 / cnt[x];
            inv_rows = rows;
        }
        const uint8_t *g = b->gray + (size_t)y * w;
        if (b->pass == 0) {
            b->var_max = row_var_max(s, q, cnt, w, b->var_max);
            for (int x = 0; x < w; x++)
                b->gray_min = g[x] < b->gray_min ? g[x] : b->gray_min;
        } else {
            threshold_row(a, b, g, s, q, cnt, inv, unsure, b->out + (size_t)y * w, w);
        }
    }
}

static void band_item(void *bands, int i)
{
    run_band((band *)bands + i);
}

/* Runs one pass over the page, a band on each of the process's workers. */
static void run_pass(band *bands, int n, int pass)
{
    for (int i = 0; i < n; i++)
        bands[i].pass = pass;
    db_parallel(n, band_item, bands);
}

static int threads_of(const db_local_args *a)
{
    int n = a->threads < 1 ? 1 : a->threads > DB_PARALLEL_MAX ? DB_PARALLEL_MAX : a->threads;
    return n > a->height ? a->height : n;
}

size_t db_local_work_bytes(const db_local_args *args)
{
    return (size_t)threads_of(args) * ROWS * (size_t)args->width * sizeof(uint64_t);
}

void db_local_host(void *const *ptrs, const void *arg)
{
    const db_local_args *a = arg;
    assert(a->half <= 127); /* the 32-bit sums' bound (algorithms/local.c takes no larger window here) */
    band bands[DB_PARALLEL_MAX];
    int n = threads_of(a);
    for (int i = 0; i < n; i++)
        bands[i] = (band){.a = a, .gray = ptrs[0], .out = ptrs[1], .y0 = (int)((int64_t)a->height * i / n),
                          .y1 = (int)((int64_t)a->height * (i + 1) / n),
                          .work = (uint64_t *)ptrs[2] + (size_t)i * ROWS * (size_t)a->width};
    if (a->method == DB_LOCAL_WOLF) {
        run_pass(bands, n, 0);
        double vmax = DBL_MIN;
        int gmin = 255;
        for (int i = 0; i < n; i++) {
            vmax = bands[i].var_max > vmax ? bands[i].var_max : vmax;
            gmin = bands[i].gray_min < gmin ? bands[i].gray_min : gmin;
        }
        for (int i = 0; i < n; i++) {
            bands[i].gmin = (double)gmin;
            bands[i].max_s = sqrt(vmax);
        }
    }
    run_pass(bands, n, 1);
}
