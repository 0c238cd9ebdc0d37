/*
** metrics.c — binarization metrics against a ground truth (DIBCO), DIBCO weight
** files, and the halftone measures.
** Definitions, reference values and the .dat format: docs/evaluation.md, "The
** metrics"; the HVS filter, halftone error and HPSNR: "Halftones" there and
** docs/dbs.md §1.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/metrics.h"
#include "runtime/util.h"

enum { INK = 1, BACKGROUND = 0 };

/* DRD weights 1/sqrt(di^2 + dj^2) over the 5x5 neighbourhood, normalised to sum 1,
** times 10^6 and rounded so that they sum to exactly 10^6: integer sums are the
** same on every machine and in every order. */
static const uint32_t drd_weight[5][5] = {
    {25582, 32359, 36179, 32359, 25582},
    {32359, 51164, 72357, 51164, 32359},
    {36179, 72357, 0, 72357, 36179},
    {32359, 51164, 72357, 51164, 32359},
    {25582, 32359, 36179, 32359, 25582},
};

enum { DRD_RADIUS = 2, NUBN_BLOCK = 8 };

db_status db_ink_mask(const db_image *img, const char *name, uint8_t **mask)
{
    *mask = NULL;
    if (!name)
        name = "image";
    if (img->channels != 1)
        return db_fail(DB_ERR_FORMAT,
                       "%s: colour image; it must be a binary gray image (0 = ink, "
                       "255 = background), e.g. a 1-bit PNG or a PBM",
                       name);
    size_t w = (size_t)img->width, h = (size_t)img->height;
    uint8_t *m = malloc(w * h);
    if (!m)
        return db_fail(DB_ERR_NOMEM, "%s: out of memory for a %zux%zu ink mask", name, w, h);
    for (size_t y = 0; y < h; y++) {
        const uint8_t *row = img->data + y * img->stride;
        for (size_t x = 0; x < w; x++) {
            if (row[x] != 0 && row[x] != 255) {
                free(m);
                return db_fail(DB_ERR_FORMAT,
                               "%s: pixel (%zu, %zu) is %d; a binary image holds only 0 (ink) "
                               "and 255 (background): binarize it first (e.g. with docbin-run)",
                               name, x, y, row[x]);
            }
            m[y * w + x] = row[x] == 0 ? INK : BACKGROUND;
        }
    }
    *mask = m;
    return DB_OK;
}

void db_pseudo_from_sums(const db_counts *c, const db_pseudo_sums *s, double *precision,
                         double *recall, double *fmeasure)
{
    /* P weights are stored as PW - 1, so every pixel contributes 1 + its value. */
    double ptp_p = (double)c->tp + s->pw_tp;
    double pfp_p = (double)c->fp + s->pw_fp;
    double ptp_r = s->rw_tp;
    double pfn_r = s->rw_fn;
    double p = ptp_p > 0 ? ptp_p / (ptp_p + pfp_p) : 0;
    double r = ptp_r > 0 ? ptp_r / (ptp_r + pfn_r) : 0;
    *precision = 100 * p;
    *recall = 100 * r;
    *fmeasure = p > 0 && r > 0 ? 100 * (2 * p * r / (p + r)) : 0;
}

/* Non-uniform complete 8x8 blocks of the GT; partial blocks at the right and
** bottom edges are left out, as in DIBCO. */
static int64_t count_nubn(const uint8_t *gt, int width, int height)
{
    int64_t nubn = 0;
    for (int by = 0; by + NUBN_BLOCK <= height; by += NUBN_BLOCK)
        for (int bx = 0; bx + NUBN_BLOCK <= width; bx += NUBN_BLOCK) {
            int ink = 0;
            for (int y = by; y < by + NUBN_BLOCK; y++)
                for (int x = bx; x < bx + NUBN_BLOCK; x++)
                    ink += gt[(size_t)y * (size_t)width + (size_t)x];
            nubn += ink > 0 && ink < NUBN_BLOCK * NUBN_BLOCK;
        }
    return nubn;
}

/* Sum of DRD_k over the flipped pixels, in units of 10^-6. Neighbours outside
** the image contribute nothing (DIBCO pads with the flipped pixel's own value). */
static uint64_t drd_sum(const uint8_t *gt, const uint8_t *bin, int width, int height)
{
    uint64_t sum = 0;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            size_t k = (size_t)y * (size_t)width + (size_t)x;
            if (gt[k] == bin[k])
                continue;
            int y0 = y - DRD_RADIUS < 0 ? 0 : y - DRD_RADIUS;
            int y1 = y + DRD_RADIUS >= height ? height - 1 : y + DRD_RADIUS;
            int x0 = x - DRD_RADIUS < 0 ? 0 : x - DRD_RADIUS;
            int x1 = x + DRD_RADIUS >= width ? width - 1 : x + DRD_RADIUS;
            for (int j = y0; j <= y1; j++)
                for (int i = x0; i <= x1; i++)
                    if (gt[(size_t)j * (size_t)width + (size_t)i] != bin[k])
                        sum += drd_weight[j - y + DRD_RADIUS][i - x + DRD_RADIUS];
        }
    return sum;
}

db_status db_metrics_compute(const uint8_t *gt, const uint8_t *bin, int width, int height,
                             const double *pweights, const double *rweights, db_metrics *m)
{
    memset(m, 0, sizeof *m);
    if (width < 1 || height < 1)
        return db_fail(DB_ERR_USAGE, "db_metrics_compute: %dx%d image has no pixels", width, height);
    if (!pweights != !rweights)
        return db_fail(DB_ERR_USAGE, "db_metrics_compute: pseudo-metrics need both the P and the R "
                                     "weights, or neither");
    size_t n = (size_t)width * (size_t)height;
    db_counts c = {0, 0, 0, 0};
    db_pseudo_sums s = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        if (gt[i]) {
            if (bin[i]) {
                c.tp++;
                if (pweights) {
                    s.pw_tp += pweights[i];
                    s.rw_tp += rweights[i];
                }
            } else {
                c.fn++;
                if (rweights)
                    s.rw_fn += rweights[i];
            }
        } else if (bin[i]) {
            c.fp++;
            if (pweights)
                s.pw_fp += pweights[i];
        } else {
            c.tn++;
        }
    }
    m->counts = c;

    double total = (double)n;
    m->accuracy = 100 * ((double)(c.tp + c.tn) / total);
    if (c.tp > 0) {
        double p = (double)c.tp / (double)(c.tp + c.fp);
        double r = (double)c.tp / (double)(c.tp + c.fn);
        m->precision = 100 * p;
        m->recall = 100 * r;
        m->fmeasure = 100 * (2 * p * r / (p + r));
    }
    m->has_pseudo = pweights != NULL;
    if (m->has_pseudo)
        db_pseudo_from_sums(&c, &s, &m->pseudo_precision, &m->pseudo_recall, &m->pseudo_fmeasure);
    else
        m->pseudo_precision = m->pseudo_recall = m->pseudo_fmeasure = NAN;

    int64_t wrong = c.fp + c.fn;
    m->psnr = wrong == 0 ? INFINITY : 10 * log10(1 / ((double)wrong / total));

    if (c.tp + c.fn == 0 || c.fp + c.tn == 0)
        m->nrm = INFINITY;
    else
        m->nrm = ((double)c.fn / (double)(c.fn + c.tp) + (double)c.fp / (double)(c.fp + c.tn)) / 2;

    /* The products exceed 2^63 on large pages, hence double. */
    double den = (double)(c.tp + c.fp) * (double)(c.tp + c.fn) * (double)(c.tn + c.fp)
                 * (double)(c.tn + c.fn);
    m->mcc = den == 0 ? 0
                      : ((double)c.tp * (double)c.tn - (double)c.fp * (double)c.fn) / sqrt(den);

    m->drd_sum = drd_sum(gt, bin, width, height);
    m->nubn = count_nubn(gt, width, height);
    m->drd = m->nubn == 0 ? NAN : (double)m->drd_sum / (1e6 * (double)m->nubn);
    return DB_OK;
}

/* Line and column (from 1) of byte `pos` of `text`, for error messages. */
static void text_position(const char *text, size_t pos, size_t *line, size_t *col)
{
    *line = 1;
    size_t start = 0;
    for (size_t i = 0; i < pos; i++)
        if (text[i] == '\n') {
            ++*line;
            start = i + 1;
        }
    *col = pos - start + 1;
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Length of the decimal at `p` ([+-]digits[.digits] or [+-].digits), or 0. */
static size_t decimal_length(const char *p)
{
    size_t i = 0, digits = 0;
    if (p[i] == '+' || p[i] == '-')
        i++;
    while (is_digit(p[i])) {
        i++;
        digits++;
    }
    if (p[i] == '.') {
        i++;
        while (is_digit(p[i])) {
            i++;
            digits++;
        }
    }
    return digits ? i : 0;
}

/* Parsing and printing must not depend on the caller's locale: under a German
** LC_NUMERIC, strtod stops at the dot and "%f" prints a comma. The C locale is
** switched in for the calling thread only, while a file is read or written. */
static locale_t c_numeric_locale(void)
{
    return newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

db_status db_weights_read(const char *path, int width, int height, double **weights)
{
    *weights = NULL;
    if (width < 1 || height < 1)
        return db_fail(DB_ERR_USAGE, "%s: weights for a %dx%d image asked for", path, width, height);
    size_t expected = (size_t)width * (size_t)height;
    size_t size = 0;
    char *text;
    db_status st = db_read_file(path, DB_READ_DATA_MAX, &text, &size);
    if (st != DB_OK)
        return db_fail(st, "weight file: %s", db_error_message());
    if (strlen(text) != size) {
        free(text);
        return db_fail(DB_ERR_FORMAT, "%s: contains a NUL byte; a DIBCO weight file is text, one "
                                      "decimal per pixel", path);
    }
    double *w = malloc(expected * sizeof *w);
    locale_t c_locale = c_numeric_locale();
    if (!w || c_locale == (locale_t)0) {
        free(w);
        free(text);
        if (c_locale != (locale_t)0)
            freelocale(c_locale);
        return db_fail(DB_ERR_NOMEM, "%s: out of memory for %zu weights", path, expected);
    }
    locale_t old_locale = uselocale(c_locale);
    st = DB_OK;
    size_t count = 0, pos = 0;
    while (st == DB_OK) {
        while (is_space(text[pos]))
            pos++;
        if (!text[pos])
            break;
        size_t len = decimal_length(text + pos);
        char after = text[pos + len];
        if (len && after && !is_space(after)) {
            size_t line, col;
            text_position(text, pos + len, &line, &col);
            if (after == ',' && is_digit(text[pos + len + 1]))
                st = db_fail(DB_ERR_FORMAT,
                             "%s:%zu:%zu: value %zu has a decimal comma; weight files must use a "
                             "dot (write them in the C locale)",
                             path, line, col, count + 1);
            else
                st = db_fail(DB_ERR_FORMAT,
                             "%s:%zu:%zu: value %zu is followed by '%c'; a weight file holds only "
                             "decimals such as 0.250000 separated by white space",
                             path, line, col, count + 1, after);
            break;
        }
        if (!len) {
            size_t line, col;
            text_position(text, pos, &line, &col);
            unsigned char ch = (unsigned char)text[pos];
            if (ch >= 0x20 && ch < 0x7f)
                st = db_fail(DB_ERR_FORMAT,
                             "%s:%zu:%zu: '%c' where value %zu should start; a weight file holds "
                             "only decimals such as 0.250000 separated by white space",
                             path, line, col, ch, count + 1);
            else
                st = db_fail(DB_ERR_FORMAT,
                             "%s:%zu:%zu: byte 0x%02x where value %zu should start; a weight file "
                             "holds only decimals such as 0.250000 separated by white space",
                             path, line, col, ch, count + 1);
            break;
        }
        if (count < expected)
            w[count] = strtod(text + pos, NULL);
        count++;
        pos += len;
    }
    uselocale(old_locale);
    freelocale(c_locale);
    free(text);
    if (st == DB_OK && count != expected)
        st = db_fail(DB_ERR_FORMAT,
                     "%s: %zu values, expected %zu (one per pixel of the %dx%d ground truth); is it "
                     "the weight file of this ground truth?",
                     path, count, expected, width, height);
    if (st != DB_OK) {
        free(w);
        return st;
    }
    *weights = w;
    return DB_OK;
}

db_status db_weights_write(const char *path, const double *weights, int width, int height)
{
    if (width < 1 || height < 1)
        return db_fail(DB_ERR_USAGE, "cannot write %s: %dx%d weights have no values", path, width,
                       height);
    size_t n = (size_t)width * (size_t)height;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(weights[i]))
            return db_fail(DB_ERR_USAGE, "cannot write %s: weight %zu (pixel (%zu, %zu)) is not "
                                         "finite",
                           path, i, i % (size_t)width, i / (size_t)width);
    locale_t c_locale = c_numeric_locale();
    if (c_locale == (locale_t)0)
        return db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", path);
    db_atomic_file af;
    db_status st = db_atomic_open(&af, path);
    if (st != DB_OK) {
        freelocale(c_locale);
        return st;
    }
    /* "%f" must print a dot whatever locale the caller chose. */
    locale_t old_locale = uselocale(c_locale);
    int failed = 0;
    for (size_t i = 0; i < n && !failed; i++)
        failed = fprintf(af.f, "%f ", weights[i]) < 0;
    int e = errno;
    uselocale(old_locale);
    freelocale(c_locale);
    if (failed) {
        db_atomic_abort(&af);
        return db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return db_atomic_commit(&af);
}

enum { HVS_RADIUS = 4, HVS_TAPS = 2 * HVS_RADIUS + 1 };
static const double hvs_sigma = 1.2;

/* The 1-D factor g of the HVS filter, v(k,l) = g(k) g(l): the Gaussian is
** separable, and Σg = 1 gives Σv = 1, so filtering rows then columns applies v
** with 18 taps per pixel instead of 81. */
static void hvs_taps(double g[HVS_TAPS])
{
    double sum = 0;
    for (int k = -HVS_RADIUS; k <= HVS_RADIUS; k++) {
        g[k + HVS_RADIUS] = exp(-(double)(k * k) / (2 * hvs_sigma * hvs_sigma));
        sum += g[k + HVS_RADIUS];
    }
    for (int k = 0; k < HVS_TAPS; k++)
        g[k] /= sum;
}

/* Gray value of pixel (x, y): the pixel itself, or BT.601 luma of RGB. The
** library has no host-side gray conversion (the gray stage runs on devices). */
static uint8_t gray_at(const db_image *img, int x, int y)
{
    const uint8_t *p = img->data + (size_t)y * img->stride + (size_t)x * (size_t)img->channels;
    if (img->channels == 1)
        return p[0];
    return (uint8_t)((299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u);
}

/* Row y of the image filtered along x with g (zero outside), values scaled to [0, 1]. */
static void filter_row(const db_image *img, int y, const double g[HVS_TAPS], double *out)
{
    for (int x = 0; x < img->width; x++) {
        double s = 0;
        for (int k = -HVS_RADIUS; k <= HVS_RADIUS; k++) {
            int xx = x + k;
            if (xx >= 0 && xx < img->width)
                s += g[k + HVS_RADIUS] * (gray_at(img, xx, y) / 255.0);
        }
        out[x] = s;
    }
}

db_status db_halftone_quality(const db_image *orig, const db_image *ht, double *error, double *hpsnr)
{
    if (orig->width != ht->width || orig->height != ht->height)
        return db_fail(DB_ERR_FORMAT, "the original is %dx%d but the halftone is %dx%d; a halftone "
                                      "must have its original's size",
                       orig->width, orig->height, ht->width, ht->height);
    if (ht->channels != 1)
        return db_fail(DB_ERR_FORMAT, "the halftone is a colour image; it must be binary gray "
                                      "(0 and 255)");
    for (int y = 0; y < ht->height; y++)
        for (int x = 0; x < ht->width; x++) {
            uint8_t v = ht->data[(size_t)y * ht->stride + (size_t)x];
            if (v != 0 && v != 255)
                return db_fail(DB_ERR_FORMAT, "halftone pixel (%d, %d) is %d; a halftone holds only "
                                              "0 and 255",
                               x, y, v);
        }
    int w = orig->width, h = orig->height;
    double g[HVS_TAPS];
    hvs_taps(g);
    /* Ring buffers of the last HVS_TAPS row-filtered rows of a and b. */
    double *ring = malloc(sizeof(double) * 2 * HVS_TAPS * (size_t)w);
    if (!ring)
        return db_fail(DB_ERR_NOMEM, "out of memory filtering a %dx%d halftone", w, h);
    double *ring_a = ring, *ring_b = ring + HVS_TAPS * (size_t)w;
    double err_sum = 0, diff_sum = 0;
    for (int y = 0; y < h + HVS_RADIUS; y++) {
        if (y < h) {
            filter_row(orig, y, g, ring_a + (size_t)(y % HVS_TAPS) * (size_t)w);
            filter_row(ht, y, g, ring_b + (size_t)(y % HVS_TAPS) * (size_t)w);
        }
        int oy = y - HVS_RADIUS;
        if (oy < 0)
            continue;
        int j0 = oy - HVS_RADIUS < 0 ? 0 : oy - HVS_RADIUS;
        int j1 = oy + HVS_RADIUS >= h ? h - 1 : oy + HVS_RADIUS;
        for (int x = 0; x < w; x++) {
            double va = 0, vb = 0;
            for (int j = j0; j <= j1; j++) {
                size_t r = (size_t)(j % HVS_TAPS) * (size_t)w + (size_t)x;
                va += g[j - oy + HVS_RADIUS] * ring_a[r];
                vb += g[j - oy + HVS_RADIUS] * ring_b[r];
            }
            double a = gray_at(orig, x, oy) / 255.0;
            err_sum += (a - vb) * (a - vb);
            diff_sum += (va - vb) * (va - vb);
        }
    }
    free(ring);
    double n = (double)w * (double)h;
    *error = err_sum / n;
    double mse = diff_sum / n;
    *hpsnr = mse == 0 ? INFINITY : 10 * log10(1 / mse);
    return DB_OK;
}
