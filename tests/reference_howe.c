/*
** reference_howe.c — the test reference of docs/howe.md §§1–6.
**
** Images are row-major, pixel (r, k) = row r, column k. The node grid of the
** cut has (H−1)×(W−1) nodes, node (r, k) at pixel (r, k). Every stage is a
** separate function that reads whole arrays and writes whole arrays, in the
** order of docs/howe.md; nothing is fused or cached across stages.
**
** Build with -ffp-contract=off: a fused multiply-add would round differently
** from the library's kernels (docs/howe.md, "Exact arithmetic").
*/
#include "tests/reference_howe.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/reference_maxflow.h"

/* The double nearest π, as MATLAB's pi (C17 has no M_PI). */
static const double pi_value = 3.14159265358979323846;

/* §1: MATLAB rgb2gray weights. */
static const double weight_r = 0.298936021293775;
static const double weight_g = 0.587043074451121;
static const double weight_b = 0.114020904255103;

/* §2 constants: Gaussian σ, the mirror and the 'none' radius, the ratio, the
** biased lap2. */
static const double bias_sigma = 20.0;
enum { BIAS_MIRROR_RADIUS = 60, BIAS_NONE_RADIUS = 50, BIAS_LAP2 = -1000 };
static const double bias_ratio = 2.0;

/* The void entry points have no way to report a failed allocation; a test
** that cannot run its reference must not pass. */
static void out_of_memory(const char *where)
{
    fprintf(stderr, "%s: out of memory\n", where);
    abort();
}

static size_t at(int width, int r, int k)
{
    return (size_t)r * (size_t)width + (size_t)k;
}

/* ------------------------------------------------------------------ §1 */

int ref_howe_gray(const uint8_t *pixels, int width, int height, int channels, uint8_t *gray)
{
    if (width < 1 || height < 1 || (channels != 1 && channels != 3))
        return -1;
    size_t n = (size_t)width * (size_t)height;
    if (channels == 1) {
        memcpy(gray, pixels, n);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = pixels + 3 * i;
        double y = ((p[0] * weight_r) + (p[1] * weight_g)) + (p[2] * weight_b);
        /* Half up: y − ⌊y⌋ is exact for y < 2⁵², unlike ⌊y + 0.5⌋, which
        ** rounds 0.49999999999999994 up. */
        double whole = floor(y);
        if (y - whole >= 0.5)
            whole += 1.0;
        if (whole < 0.0)
            whole = 0.0;
        if (whole > 255.0)
            whole = 255.0;
        gray[i] = (uint8_t)whole;
    }
    return 0;
}

/* ------------------------------------------------------------------ §2 */

/* 2·G(d)(i) for d(j) = v(j+1) − v(j), j = 0..n−2, on a line of n samples
** v(j) = line[j*step] (n >= 3): MATLAB gradient, central inside, one-sided
** at both ends, doubled so that it stays an integer. */
static int32_t twice_gradient_of_difference(const uint8_t *line, size_t step, int n, int i)
{
    int32_t v0, v1, v2;
    if (i == 0 || i == n - 2) {
        int j = i == 0 ? 0 : n - 3;
        v0 = line[(size_t)j * step];
        v1 = line[(size_t)(j + 1) * step];
        v2 = line[(size_t)(j + 2) * step];
        return 2 * (v0 - 2 * v1 + v2);
    }
    int32_t before = line[(size_t)(i - 1) * step];
    v0 = line[(size_t)i * step];
    v1 = line[(size_t)(i + 1) * step];
    v2 = line[(size_t)(i + 2) * step];
    return before - v0 - v1 + v2;
}

void ref_howe_lap2(const uint8_t *gray, int width, int height, int32_t *lap2)
{
    int cols = width - 1;
    for (int r = 0; r < height - 1; r++)
        for (int k = 0; k < cols; k++) {
            int32_t x2 = twice_gradient_of_difference(gray + at(width, r, 0), 1, width, k);
            int32_t y2 = twice_gradient_of_difference(gray + k, (size_t)width, height, r);
            lap2[at(cols, r, k)] = x2 + y2;
        }
}

/* Symmetric padding index (…c b a | a b c…), periodic for pads longer than
** the line, as MATLAB's padarray 'symmetric'. */
static int mirror_index(int i, int n)
{
    int period = 2 * n;
    int j = i % period;
    if (j < 0)
        j += period;
    return j >= n ? period - 1 - j : j;
}

/* fspecial('gaussian', [2R+1 1], σ): exp(−t²/2σ²), t = −R..R, divided by its
** sum taken in ascending t. No weight here falls below eps·max, so none is
** zeroed. */
static void gaussian_weights(double sigma, int radius, double *weight)
{
    double sum = 0.0;
    for (int t = -radius; t <= radius; t++) {
        weight[t + radius] = exp(-(double)(t * t) / (2.0 * sigma * sigma));
        sum += weight[t + radius];
    }
    for (int t = -radius; t <= radius; t++)
        weight[t + radius] /= sum;
}

/* Howe's gsmooth: conv2(hcol, hrow, X), the vertical pass first. mirror != 0:
** symmetric padding by R and a valid convolution (a padded column is a copy
** of an image column, so reflecting indices gives the same values); 0: zero
** outside, same size (out-of-range taps are skipped: they add +0). */
static int gsmooth(const double *in, int width, int height, double sigma, int radius, int mirror, double *out)
{
    size_t n = (size_t)width * (size_t)height;
    double *weight = malloc((size_t)(2 * radius + 1) * sizeof *weight);
    double *tmp = malloc(n * sizeof *tmp);
    if (!weight || !tmp) {
        free(weight);
        free(tmp);
        return -1;
    }
    gaussian_weights(sigma, radius, weight);
    for (int r = 0; r < height; r++)
        for (int k = 0; k < width; k++) {
            double acc = 0.0;
            for (int t = -radius; t <= radius; t++) {
                int rr = r - t;
                if (mirror)
                    rr = mirror_index(rr, height);
                else if (rr < 0 || rr >= height)
                    continue;
                acc += weight[t + radius] * in[at(width, rr, k)];
            }
            tmp[at(width, r, k)] = acc;
        }
    for (int r = 0; r < height; r++)
        for (int k = 0; k < width; k++) {
            double acc = 0.0;
            for (int t = -radius; t <= radius; t++) {
                int kk = k - t;
                if (mirror)
                    kk = mirror_index(kk, width);
                else if (kk < 0 || kk >= width)
                    continue;
                acc += weight[t + radius] * tmp[at(width, r, kk)];
            }
            out[at(width, r, k)] = acc;
        }
    free(weight);
    free(tmp);
    return 0;
}

static int bias_mask(const uint8_t *gray, int width, int height, uint8_t *himask)
{
    size_t n = (size_t)width * (size_t)height;
    /* calloc: GCC cannot see that the fill loops below run. */
    double *image = calloc(n, sizeof *image);
    double *smooth = malloc(n * sizeof *smooth);
    double *deviation = malloc(n * sizeof *deviation);
    double *square = calloc(n, sizeof *square);
    int status = -1;
    if (!image || !smooth || !deviation || !square)
        goto done;
    for (size_t i = 0; i < n; i++)
        image[i] = gray[i];
    if (gsmooth(image, width, height, bias_sigma, BIAS_MIRROR_RADIUS, 1, smooth) != 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        deviation[i] = image[i] - smooth[i];
        square[i] = deviation[i] * deviation[i];
    }
    /* The variance reuses `smooth`. */
    if (gsmooth(square, width, height, bias_sigma, BIAS_NONE_RADIUS, 0, smooth) != 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        double rms = sqrt(smooth[i]);
        himask[i] = deviation[i] / (rms + DBL_EPSILON) > bias_ratio;
    }
    status = 0;
done:
    free(image);
    free(smooth);
    free(deviation);
    free(square);
    return status;
}

void ref_howe_bias_mask(const uint8_t *gray, int width, int height, uint8_t *himask)
{
    if (bias_mask(gray, width, height, himask) != 0)
        out_of_memory("ref_howe_bias_mask");
}

/* ------------------------------------------------------------------ §4 */

int ref_howe_canny_halfwidth(double sigma)
{
    double ssq = sigma * sigma;
    int width = 1;
    for (int w = 1; w <= 30; w++)
        if (exp(-(double)(w * w) / (2.0 * ssq)) > 1e-4)
            width = w;
    return width;
}

static int clamp_index(int i, int n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* §4 step 6: whether p = (r, k), 1 <= r <= H−2, 1 <= k <= W−2, with
** gradient (ix, iy) is a local maximum of the magnitude in some sector whose
** condition it meets. The comparisons are non-strict, as MATLAB's. */
static int local_maximum(const double *mag, int width, int r, int k, double ix, double iy)
{
    double m = mag[at(width, r, k)];
    double d, n1, n2;
    if ((iy <= 0 && ix > -iy) || (iy >= 0 && ix < -iy)) {
        d = fabs(iy / ix);
        n1 = mag[at(width, r, k + 1)] * (1.0 - d) + mag[at(width, r - 1, k + 1)] * d;
        n2 = mag[at(width, r, k - 1)] * (1.0 - d) + mag[at(width, r + 1, k - 1)] * d;
        if (m >= n1 && m >= n2)
            return 1;
    }
    if ((ix > 0 && -iy >= ix) || (ix < 0 && -iy <= ix)) {
        d = fabs(ix / iy);
        n1 = mag[at(width, r - 1, k)] * (1.0 - d) + mag[at(width, r - 1, k + 1)] * d;
        n2 = mag[at(width, r + 1, k)] * (1.0 - d) + mag[at(width, r + 1, k - 1)] * d;
        if (m >= n1 && m >= n2)
            return 1;
    }
    if ((ix <= 0 && ix > iy) || (ix >= 0 && ix < iy)) {
        d = fabs(ix / iy);
        n1 = mag[at(width, r - 1, k)] * (1.0 - d) + mag[at(width, r - 1, k - 1)] * d;
        n2 = mag[at(width, r + 1, k)] * (1.0 - d) + mag[at(width, r + 1, k + 1)] * d;
        if (m >= n1 && m >= n2)
            return 1;
    }
    if ((iy < 0 && ix <= iy) || (iy > 0 && ix >= iy)) {
        d = fabs(iy / ix);
        n1 = mag[at(width, r, k - 1)] * (1.0 - d) + mag[at(width, r - 1, k - 1)] * d;
        n2 = mag[at(width, r, k + 1)] * (1.0 - d) + mag[at(width, r + 1, k + 1)] * d;
        if (m >= n1 && m >= n2)
            return 1;
    }
    return 0;
}

/* The 8 neighbours x1..x8 of (r, k), counter-clockwise from East, 0 outside;
** x[0] is unused and x[9] = x1 closes the ring. */
static void neighbours(const uint8_t *e, int w, int h, int r, int k, int x[10])
{
    static const int dr[8] = {0, -1, -1, -1, 0, 1, 1, 1};
    static const int dk[8] = {1, 1, 0, -1, -1, -1, 0, 1};
    x[0] = 0;
    for (int i = 0; i < 8; i++) {
        int rr = r + dr[i], kk = k + dk[i];
        x[i + 1] = rr >= 0 && rr < h && kk >= 0 && kk < w && e[at(w, rr, kk)] != 0;
    }
    x[9] = x[1];
}

/* G1 ∧ G2 of Lam, Lee & Suen as MATLAB's lutthin1 and lutthin2. */
static int thin_g1_g2(const int x[10])
{
    int crossings = 0;
    for (int i = 1; i <= 4; i++)
        crossings += !x[2 * i - 1] && (x[2 * i] || x[2 * i + 1]);
    int n1 = 0, n2 = 0;
    for (int i = 1; i <= 4; i++) {
        n1 += x[2 * i - 1] || x[2 * i];
        n2 += x[2 * i] || x[2 * i + 1];
    }
    int low = n1 < n2 ? n1 : n2;
    return crossings == 1 && low >= 2 && low <= 3;
}

/* One sub-iteration: every set pixel of `in` meeting G1 ∧ G2 ∧ G3 (second =
** 0) or G1 ∧ G2 ∧ G3′ (second = 1), all decided on `in`, is cleared in `out`.
** "(x2 ∨ x3 ∨ ¬x8) ∧ x1 = 0" is the paper's notation for the whole
** conjunction being 0, which is what MATLAB's lutthin3 tabulates (checked
** entry by entry); G3′ likewise. */
static void thin_subiteration(const uint8_t *in, uint8_t *out, int w, int h, int second)
{
    for (int r = 0; r < h; r++)
        for (int k = 0; k < w; k++) {
            size_t p = at(w, r, k);
            out[p] = in[p];
            if (!in[p])
                continue;
            int x[10];
            neighbours(in, w, h, r, k, x);
            int g3 = second ? !((x[6] || x[7] || !x[4]) && x[5]) : !((x[2] || x[3] || !x[8]) && x[1]);
            if (thin_g1_g2(x) && g3)
                out[p] = 0;
        }
}

static int thin_once(uint8_t *e, int w, int h)
{
    size_t n = (size_t)w * (size_t)h;
    uint8_t *copy = malloc(n);
    if (!copy)
        return -1;
    for (size_t i = 0; i < n; i++)
        copy[i] = e[i] != 0;
    thin_subiteration(copy, e, w, h, 0);
    memcpy(copy, e, n);
    thin_subiteration(copy, e, w, h, 1);
    free(copy);
    return 0;
}

void ref_howe_thin_once(uint8_t *e, int w, int h)
{
    if (thin_once(e, w, h) != 0)
        out_of_memory("ref_howe_thin_once");
}

/* §4 steps 4–9. */
static int canny_gradient(const double *ax, const double *ay, int width, int height, double t_lo, double t_hi,
                          uint8_t *edges)
{
    size_t n = (size_t)width * (size_t)height;
    double *mag = malloc(n * sizeof *mag);
    size_t *stack = malloc(n * sizeof *stack);
    uint8_t *weak = calloc(n, 1);
    int status = -1;
    if (!mag || !stack || !weak)
        goto done;
    double largest = 0.0;
    for (size_t i = 0; i < n; i++) {
        mag[i] = sqrt((ax[i] * ax[i]) + (ay[i] * ay[i]));
        if (mag[i] > largest)
            largest = mag[i];
    }
    if (largest > 0.0)
        for (size_t i = 0; i < n; i++)
            mag[i] /= largest;

    /* Steps 6–7: only interior pixels can be weak; strong pixels seed the
    ** hysteresis stack. */
    size_t top = 0;
    for (int r = 1; r < height - 1; r++)
        for (int k = 1; k < width - 1; k++) {
            size_t p = at(width, r, k);
            if (local_maximum(mag, width, r, k, ax[p], ay[p]) && mag[p] > t_lo) {
                weak[p] = 1;
                if (mag[p] > t_hi)
                    stack[top++] = p;
            }
        }
    if (top == 0) {
        /* canny_old skips hysteresis and thinning when nothing is strong. */
        memcpy(edges, weak, n);
        status = 0;
        goto done;
    }

    /* Step 8: the 8-connected weak components holding a strong pixel. */
    memset(edges, 0, n);
    for (size_t s = 0; s < top; s++)
        edges[stack[s]] = 1;
    while (top > 0) {
        size_t p = stack[--top];
        int r = (int)(p / (size_t)width), k = (int)(p % (size_t)width);
        for (int dr = -1; dr <= 1; dr++)
            for (int dk = -1; dk <= 1; dk++) {
                int rr = r + dr, kk = k + dk;
                if (rr < 0 || rr >= height || kk < 0 || kk >= width)
                    continue;
                size_t q = at(width, rr, kk);
                if (weak[q] && !edges[q]) {
                    edges[q] = 1;
                    stack[top++] = q;
                }
            }
    }

    /* Step 9. */
    status = thin_once(edges, width, height);
done:
    free(mag);
    free(stack);
    free(weak);
    return status;
}

void ref_howe_canny_gradient(const double *ax, const double *ay, int width, int height, double t_lo,
                             double t_hi, uint8_t *edges)
{
    if (canny_gradient(ax, ay, width, height, t_lo, t_hi, edges) != 0)
        out_of_memory("ref_howe_canny_gradient");
}

/* §4 steps 1–3 as canny_old writes them, ssq = σ²:
** g(t) = exp(−(t·t)/(2·ssq)) / (2·π·ssq), D(y,x) = −x·exp(−(x·x+y·y)/(2·ssq)) / (π·ssq),
** MATLAB's left-to-right evaluation kept: (2·π)·ssq, ((−x)·exp(…)) / (π·ssq). */
static int canny(const uint8_t *gray, int width, int height, double sigma, double t_lo, double t_hi,
                 uint8_t *edges)
{
    int hw = ref_howe_canny_halfwidth(sigma);
    int taps = 2 * hw + 1;
    double ssq = sigma * sigma;
    size_t n = (size_t)width * (size_t)height;
    double *g = malloc((size_t)taps * sizeof *g);
    double *dgau = malloc((size_t)taps * (size_t)taps * sizeof *dgau);
    double *image = malloc(n * sizeof *image);
    double *rows = malloc(n * sizeof *rows);
    double *smooth = malloc(n * sizeof *smooth);
    double *ax = malloc(n * sizeof *ax);
    double *ay = malloc(n * sizeof *ay);
    int status = -1;
    if (!g || !dgau || !image || !rows || !smooth || !ax || !ay)
        goto done;

    for (int t = -hw; t <= hw; t++)
        g[t + hw] = exp(-(double)(t * t) / (2.0 * ssq)) / (2.0 * pi_value * ssq);
    for (int y = -hw; y <= hw; y++)
        for (int x = -hw; x <= hw; x++)
            dgau[(size_t)(y + hw) * (size_t)taps + (size_t)(x + hw)] =
                (-(double)x * exp(-(double)(x * x + y * y) / (2.0 * ssq))) / (pi_value * ssq);

    /* im2double. */
    for (size_t i = 0; i < n; i++)
        image[i] = gray[i] / 255.0;

    /* Along each row first, then along each column; replicate borders. */
    for (int r = 0; r < height; r++)
        for (int k = 0; k < width; k++) {
            double acc = 0.0;
            for (int t = -hw; t <= hw; t++)
                acc += image[at(width, r, clamp_index(k - t, width))] * g[t + hw];
            rows[at(width, r, k)] = acc;
        }
    for (int r = 0; r < height; r++)
        for (int k = 0; k < width; k++) {
            double acc = 0.0;
            for (int t = -hw; t <= hw; t++)
                acc += rows[at(width, clamp_index(r - t, height), k)] * g[t + hw];
            smooth[at(width, r, k)] = acc;
        }

    /* ax = S ⊛ D, ay = S ⊛ Dᵀ: kernel row index y outer, column index x
    ** inner, both ascending; Dᵀ(y, x) = D(x, y). */
    for (int r = 0; r < height; r++)
        for (int k = 0; k < width; k++) {
            double sx = 0.0, sy = 0.0;
            for (int y = -hw; y <= hw; y++)
                for (int x = -hw; x <= hw; x++) {
                    double s = smooth[at(width, clamp_index(r - y, height), clamp_index(k - x, width))];
                    sx += s * dgau[(size_t)(y + hw) * (size_t)taps + (size_t)(x + hw)];
                    sy += s * dgau[(size_t)(x + hw) * (size_t)taps + (size_t)(y + hw)];
                }
            ax[at(width, r, k)] = sx;
            ay[at(width, r, k)] = sy;
        }

    status = canny_gradient(ax, ay, width, height, t_lo, t_hi, edges);
done:
    free(g);
    free(dgau);
    free(image);
    free(rows);
    free(smooth);
    free(ax);
    free(ay);
    return status;
}

void ref_howe_canny(const uint8_t *gray, int width, int height, double sigma, double t_lo, double t_hi,
                    uint8_t *edges)
{
    if (canny(gray, width, height, sigma, t_lo, t_hi, edges) != 0)
        out_of_memory("ref_howe_canny");
}

/* ------------------------------------------------------------------ §5 */

void ref_howe_nlinks(const uint8_t *gray, const uint8_t *edges, int width, int height, int32_t capacity,
                     int32_t *right, int32_t *down)
{
    int rows = height - 1, cols = width - 1;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            size_t i = at(cols, r, k);
            right[i] = 0;
            down[i] = 0;
            int here = gray[at(width, r, k)];
            /* The darker pixel of the pair is tested; on a tie, the right or
            ** lower one. */
            if (k + 1 < cols) {
                int dx = gray[at(width, r, k + 1)] - here;
                int removed = (edges[at(width, r, k)] && dx > 0) || (edges[at(width, r, k + 1)] && dx <= 0);
                right[i] = removed ? 0 : capacity;
            }
            if (r + 1 < rows) {
                int dy = gray[at(width, r + 1, k)] - here;
                int removed = (edges[at(width, r, k)] && dy > 0) || (edges[at(width, r + 1, k)] && dy <= 0);
                down[i] = removed ? 0 : capacity;
            }
        }
}

/* ------------------------------------------------------------------ §§3, 6 */

void ref_howe_tlinks(const int32_t *lap2, const uint8_t *himask, int width, int height, int32_t *source,
                     int32_t *sink)
{
    int rows = height - 1, cols = width - 1;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            size_t i = at(cols, r, k);
            int32_t l = himask[at(width, r, k)] ? BIAS_LAP2 : lap2[i];
            source[i] = 16 * (3000 - l);
            sink[i] = 16 * (3000 + l);
        }
}

/* The padded map P of §6 at (r, k), r < rows + 1, k < cols + 1: the last
** node row and column repeated. */
static int padded(const uint8_t *ink, int rows, int cols, int r, int k)
{
    return ink[at(cols, r < rows ? r : rows - 1, k < cols ? k : cols - 1)] != 0;
}

void ref_howe_finish(const uint8_t *ink, int width, int height, uint8_t *out)
{
    int rows = height - 1, cols = width - 1;
    /* Every pixel is decided on P, never on `out` (MATLAB's array
    ** expression); row 0 and column 0 stand in for their missing North and
    ** West, so they are never removed. */
    for (int r = 0; r < height; r++)
        for (int k = 0; k < width; k++) {
            int p = padded(ink, rows, cols, r, k);
            int north = padded(ink, rows, cols, r > 0 ? r - 1 : r, k);
            int west = padded(ink, rows, cols, r, k > 0 ? k - 1 : k);
            out[at(width, r, k)] = p && (north || west) ? 0 : 255;
        }
}

int ref_howe(const uint8_t *pixels, int width, int height, int channels, double c, double sigma, double t_lo,
             double t_hi, uint8_t *out)
{
    if (width < 3 || height < 3 || (channels != 1 && channels != 3))
        return -1;
    /* Written so that NaN fails every test. */
    if (!(sigma > 0.0) || !isfinite(sigma) || !(t_lo < t_hi) || !(t_hi < 1.0))
        return -1;
    if (!(c >= 0.0) || !(32.0 * c <= 16777216.0))
        return -1;
    int32_t link = (int32_t)round(32.0 * c);

    size_t n = (size_t)width * (size_t)height;
    int rows = height - 1, cols = width - 1;
    size_t nodes = (size_t)rows * (size_t)cols;
    uint8_t *gray = malloc(n);
    uint8_t *himask = malloc(n);
    uint8_t *edges = malloc(n);
    uint8_t *ink = malloc(nodes);
    int32_t *lap2 = malloc(nodes * sizeof *lap2);
    int32_t *source = malloc(nodes * sizeof *source);
    int32_t *sink = malloc(nodes * sizeof *sink);
    int32_t *right = malloc(nodes * sizeof *right);
    int32_t *down = malloc(nodes * sizeof *down);
    int status = -1;
    if (!gray || !himask || !edges || !ink || !lap2 || !source || !sink || !right || !down)
        goto done;

    ref_howe_gray(pixels, width, height, channels, gray);
    ref_howe_lap2(gray, width, height, lap2);
    if (bias_mask(gray, width, height, himask) != 0)
        goto done;
    if (canny(gray, width, height, sigma, t_lo, t_hi, edges) != 0)
        goto done;

    /* §3: Howe's 1500 ∓ lap times 32. */
    ref_howe_tlinks(lap2, himask, width, height, source, sink);
    ref_howe_nlinks(gray, edges, width, height, link, right, down);

    if (ref_grid_maxflow(rows, cols, source, sink, right, down, ink) < 0)
        goto done;

    ref_howe_finish(ink, width, height, out);
    status = 0;
done:
    free(gray);
    free(himask);
    free(edges);
    free(ink);
    free(lap2);
    free(source);
    free(sink);
    free(right);
    free(down);
    return status;
}
