/*
** reference_howe_tune.c — the test reference of Howe's parameter tuning.
** Each rule is written out as Howe describes it: the difference curve as
** fractions of the page, its full convolution with MATLAB's 6-tap Gaussian,
** the literal triple loop of Alg1, the first minimum of Alg2. Build with
** -ffp-contract=off, as the library is.
*/
#include "tests/reference_howe_tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/reference_howe.h"

double ref_tune_c(int i)
{
    double lo = log(20.0), hi = log(5120.0);
    return exp(lo + (hi - lo) * i / (REF_TUNE_CS - 1));
}

/* fspecial('gaussian', [6 1], 1). */
static void filter(double f[6])
{
    double total = 0.0;
    for (int t = 0; t < 6; t++) {
        double y = -2.5 + t;
        f[t] = exp(-(y * y) / 2.0);
        total += f[t];
    }
    for (int t = 0; t < 6; t++)
        f[t] = f[t] / total;
}

/* conv(x, f) (full, length n + 5), then its entries 3 .. n + 3 (1-based). */
static void smoothed(const int64_t *count, int n, int64_t pixels, double *out)
{
    double f[6], *x = malloc((size_t)n * sizeof *x), *full = malloc((size_t)(n + 5) * sizeof *full);
    if (!x || !full)
        abort();
    filter(f);
    for (int j = 0; j < n; j++)
        x[j] = (double)count[j] / (double)pixels;
    /* full[m] (0-based) = sum over t of f[t] x[m - t]. */
    for (int m = 0; m < n + 5; m++) {
        full[m] = 0.0;
        for (int t = 0; t < 6; t++)
            if (m - t >= 0 && m - t < n)
                full[m] += f[t] * x[m - t];
    }
    for (int i = 0; i <= n; i++)
        out[i] = full[i + 2];
    free(x);
    free(full);
}

int ref_tune_alg1(const int64_t diff[REF_TUNE_CS - 1], int64_t pixels)
{
    double d[REF_TUNE_CS + 1]; /* 1-based */
    smoothed(diff, REF_TUNE_CS - 1, pixels, d + 1);
    double best = -HUGE_VAL;
    int r = 1;
    for (int i = 1; i <= 31; i++)
        for (int j = i + 2; j <= 33; j++)
            for (int k = i + 1; k <= j - 1; k++) {
                double v = d[i] + d[j] - 2 * d[k];
                if (v > best) {
                    best = v;
                    r = k;
                }
            }
    return r - 1;
}

int ref_tune_alg2(const int64_t diff[10], int64_t pixels)
{
    double d[11];
    smoothed(diff, 10, pixels, d);
    double low = d[0];
    int r = 0;
    for (int i = 1; i < 11; i++)
        if (d[i] < low) {
            low = d[i];
            r = i;
        }
    return r;
}

int ref_tune_alg3(int64_t dlo, int64_t dhi)
{
    return dlo < dhi ? 0 : 2;
}

int ref_tune_images(const uint8_t *pixels, int width, int height, int channels, const double *thi, int n_thi,
                    double sigma, double tlo, uint8_t *images)
{
    size_t n = (size_t)width * (size_t)height;
    for (int j = 0; j < n_thi; j++)
        for (int i = 0; i < REF_TUNE_CS; i++)
            if (ref_howe(pixels, width, height, channels, ref_tune_c(i), sigma, tlo, thi[j],
                         images + ((size_t)j * REF_TUNE_CS + (size_t)i) * n))
                return -1;
    return 0;
}

static int64_t differ(const uint8_t *a, const uint8_t *b, size_t n)
{
    int64_t d = 0;
    for (size_t p = 0; p < n; p++)
        d += a[p] != b[p];
    return d;
}

/* Alg1 on chain j: the index of the kept c. */
static int chain_pick(const uint8_t *images, size_t n, int j)
{
    int64_t diff[REF_TUNE_CS - 1];
    const uint8_t *chain = images + (size_t)j * REF_TUNE_CS * n;
    for (int i = 0; i < REF_TUNE_CS - 1; i++)
        diff[i] = differ(chain + (size_t)i * n, chain + (size_t)(i + 1) * n, n);
    return ref_tune_alg1(diff, (int64_t)n);
}

static double f_measure(const uint8_t *image, const uint8_t *truth, size_t n)
{
    int64_t tp = 0, fp = 0, fn = 0;
    for (size_t p = 0; p < n; p++) {
        int ink = image[p] == 0, t = truth[p] != 0;
        tp += ink && t;
        fp += ink && !t;
        fn += !ink && t;
    }
    return 2 * tp + fp + fn ? 2.0 * (double)tp / (double)(2 * tp + fp + fn) : 1.0;
}

void ref_tune_search(const uint8_t *images, int width, int height, int n_thi, int search, const uint8_t *truth,
                     int *thi_index, int *c_index)
{
    size_t n = (size_t)width * (size_t)height;
    int pick[11];
    if (search == 3) {
        double best = -1.0;
        for (int j = 0; j < n_thi; j++)
            for (int i = 0; i < REF_TUNE_CS; i++) {
                double f = f_measure(images + ((size_t)j * REF_TUNE_CS + (size_t)i) * n, truth, n);
                if (f > best) {
                    best = f;
                    *thi_index = j;
                    *c_index = i;
                }
            }
        return;
    }
    for (int j = 0; j < n_thi; j++)
        pick[j] = chain_pick(images, n, j);
#define KEPT(j) (images + ((size_t)(j) * REF_TUNE_CS + (size_t)pick[j]) * n)
    if (search == 1) {
        *thi_index = 0;
    } else if (search == 0) {
        *thi_index = ref_tune_alg3(differ(KEPT(0), KEPT(1), n), differ(KEPT(2), KEPT(1), n));
    } else {
        int64_t diff[10];
        for (int j = 0; j < 10; j++)
            diff[j] = differ(KEPT(j), KEPT(j + 1), n);
        *thi_index = ref_tune_alg2(diff, (int64_t)n);
    }
#undef KEPT
    *c_index = pick[*thi_index];
}
