/*
** reference.c — the test reference of the gray rules, Otsu and the local
** methods (docs/algorithms.md).
**
** Compile with -ffp-contract=off: docs/algorithms.md fixes the order of every
** double operation, and a fused multiply-add would round differently from
** Doxa's stored outputs. For the same reason nothing here calls fma().
*/
#include "tests/reference.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void ref_gray(const uint8_t *rgb_or_gray, int width, int height, int channels, int rule,
              uint8_t *gray)
{
    size_t n = (size_t)width * (size_t)height;
    for (size_t i = 0; i < n; i++) {
        if (channels == 1) {
            gray[i] = rgb_or_gray[i];
            continue;
        }
        unsigned r = rgb_or_gray[3 * i];
        unsigned g = rgb_or_gray[3 * i + 1];
        unsigned b = rgb_or_gray[3 * i + 2];
        if (rule == REF_GRAY_QT)
            gray[i] = (uint8_t)((11 * r + 16 * g + 5 * b) / 32);
        else
            gray[i] = (uint8_t)((299 * r + 587 * g + 114 * b + 500) / 1000);
    }
}

int ref_otsu_threshold(const uint8_t *gray, size_t n)
{
    int64_t hist[256] = {0};
    for (size_t i = 0; i < n; i++)
        hist[gray[i]]++;

    int64_t total = 0;
    for (int i = 0; i < 256; i++)
        total += (int64_t)i * hist[i];

    int64_t q1 = 0, sb = 0;
    double best = 0.0;
    int t = 0;
    for (int i = 0; i < 256; i++) {
        q1 += hist[i];
        sb += (int64_t)i * hist[i];
        if (q1 == 0)
            continue;
        int64_t q2 = (int64_t)n - q1;
        if (q2 == 0)
            break;
        double d = (double)sb / (double)q1 - (double)(total - sb) / (double)q2;
        double between = ((d * d) * (double)q1) * (double)q2;
        if (between > best) {
            best = between;
            t = i;
        }
    }
    return t;
}

int ref_gray_min(const uint8_t *gray, size_t n)
{
    int m = 255;
    for (size_t i = 0; i < n; i++)
        if (gray[i] < m)
            m = gray[i];
    return m;
}

/* Mean and population variance of the window of half-size h around (x, y),
** clipped at the border, from exact 64-bit sums. */
static void window_stats(const uint8_t *gray, int width, int height, int x, int y, int h,
                         double *mean, double *var)
{
    int y0 = y - h < 0 ? 0 : y - h;
    int y1 = y + h > height - 1 ? height - 1 : y + h;
    int x0 = x - h < 0 ? 0 : x - h;
    int x1 = x + h > width - 1 ? width - 1 : x + h;

    int64_t s = 0, q = 0;
    for (int yy = y0; yy <= y1; yy++) {
        const uint8_t *row = gray + (size_t)yy * (size_t)width;
        for (int xx = x0; xx <= x1; xx++) {
            int64_t g = row[xx];
            s += g;
            q += g * g;
        }
    }
    int64_t n = (int64_t)(y1 - y0 + 1) * (int64_t)(x1 - x0 + 1);

    double m = (double)s / (double)n;
    *mean = m;
    *var = (double)q / (double)n - m * m;
}

void ref_window_stats(const uint8_t *gray, int width, int height, int window, double *mean, double *var)
{
    assert(window >= 1 && window % 2 == 1);
    int h = (window - 1) / 2;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            size_t i = (size_t)y * (size_t)width + (size_t)x;
            window_stats(gray, width, height, x, y, h, &mean[i], &var[i]);
        }
}

void ref_threshold(const uint8_t *gray, size_t n, const double *mean, const double *var, ref_method method,
                   double k, uint8_t *out)
{
    /* Starting at DBL_MIN, as Doxa does, makes s / maxS = 0 on a uniform
    ** image instead of 0 / 0. */
    double max_var = DBL_MIN;
    double gmin = 0.0;
    if (method == REF_WOLF) {
        for (size_t i = 0; i < n; i++)
            if (var[i] > max_var)
                max_var = var[i];
        gmin = (double)ref_gray_min(gray, n);
    }
    double max_s = sqrt(max_var);

    for (size_t i = 0; i < n; i++) {
        double m = mean[i];
        double v = var[i];
        double s = sqrt(v);
        double t = 0.0;
        switch (method) {
        case REF_NIBLACK:
            t = m + k * s;
            break;
        case REF_SAUVOLA:
            t = m * (1.0 + k * ((s / 128.0) - 1.0));
            break;
        case REF_NICK:
            t = m + k * sqrt(v + m * m);
            break;
        case REF_WOLF:
            t = m - k * (1.0 - (s / max_s)) * (m - gmin);
            break;
        case REF_OTSU:
            break;
        }
        out[i] = (double)gray[i] <= t ? 0 : 255;
    }
}

void ref_binarize(const uint8_t *gray, int width, int height, ref_method method, int window,
                  double k, uint8_t *out)
{
    size_t n = (size_t)width * (size_t)height;

    if (method == REF_OTSU) {
        int t = ref_otsu_threshold(gray, n);
        for (size_t i = 0; i < n; i++)
            out[i] = gray[i] <= t ? 0 : 255;
        return;
    }

    /* Wolf needs the statistics of every window before the first threshold,
    ** so all methods compute them in a first pass and share the second. */
    double *mean = malloc(n * sizeof *mean);
    double *var = malloc(n * sizeof *var);
    if (!mean || !var)
        abort();
    ref_window_stats(gray, width, height, window, mean, var);
    ref_threshold(gray, n, mean, var, method, k, out);
    free(mean);
    free(var);
}
