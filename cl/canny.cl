/*
** canny.cl — MATLAB's canny_old as Howe's binarization uses it (docs/howe.md §1,
** §4, "Exact arithmetic"): gray as rgb2gray, Gaussian smoothing, derivative-of-Gaussian
** gradients, non-maximum suppression, hysteresis, one thinning iteration.
**
** Everything is double with only + − × ÷ √ and exact operations, each filter
** summing its taps in ascending offset order from 0 (2-D: row offset outer),
** so that every device gives the plain-C reference's bits. The weights need
** exp() and come from the host: g[2w+1], then D[(2w+1)²] row-major by (y, x).
**
** Edge states (uchar): 0 none, 1 weak, 2 strong or joined to a strong pixel.
** flags (int): see F_* below.
*/
#define F_HAS_STRONG 0 /* some pixel is strong: hysteresis and thinning apply */
#define F_CHANGED 1    /* the last hysteresis pass promoted a pixel */
#define F_CONVERGED 2  /* a hysteresis pass promoted nothing: later passes return at once */
#define F_FINAL 3      /* the number of the first pass that promoted nothing */
#define F_INTS 4

#define REDUCE 256
#define HT 32 /* hysteresis tile side (GPU) */
#define HR 8  /* work-item rows of a tile: each handles HT / HR pixels of its column */

kernel void canny_init(global int *flags)
{
    if (get_global_id(0) != 0)
        return;
    for (int f = 0; f < F_INTS; f++)
        flags[f] = 0;
}

/* rgb2gray, rounded half up, then im2double. Rounding tests y − ⌊y⌋ (exact)
** rather than taking ⌊y + 0.5⌋, whose addition can round up. */
kernel void canny_gray(global const uchar *img, ulong n, int channels, global double *out)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    double v;
    if (channels == 1) {
        v = img[i];
    } else {
        double y = (((double)img[3 * i] * 0.298936021293775) + ((double)img[3 * i + 1] * 0.587043074451121)) +
                   ((double)img[3 * i + 2] * 0.114020904255103);
        v = floor(y);
        if (y - v >= 0.5)
            v += 1.0;
        v = fmin(fmax(v, 0.0), 255.0);
    }
    out[i] = v / 255.0;
}

/* Smoothing along rows with g, replicate borders. */
kernel void canny_smooth_rows(global const double *src, int width, int height, int w, constant double *g,
                              global double *dst)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    global const double *row = src + (ulong)y * width;
    double acc = 0.0;
    for (int t = -w; t <= w; t++)
        acc += row[clamp(x - t, 0, width - 1)] * g[t + w];
    dst[(ulong)y * width + x] = acc;
}

/* Smoothing along columns with g, replicate borders. */
kernel void canny_smooth_cols(global const double *src, int width, int height, int w, constant double *g,
                              global double *dst)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    double acc = 0.0;
    for (int t = -w; t <= w; t++)
        acc += src[(ulong)clamp(y - t, 0, height - 1) * width + x] * g[t + w];
    dst[(ulong)y * width + x] = acc;
}

/* ax = S ⊛ D and ay = S ⊛ Dᵀ (true convolution, replicate borders) and their magnitude. */
kernel void canny_gradient(global const double *s, int width, int height, int w, constant double *g,
                           global double2 *grad, global double *mag)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    int n = 2 * w + 1;
    constant double *d = g + n;
    double ax = 0.0, ay = 0.0;
    for (int j = -w; j <= w; j++) {
        global const double *row = s + (ulong)clamp(y - j, 0, height - 1) * width;
        for (int i = -w; i <= w; i++) {
            double v = row[clamp(x - i, 0, width - 1)];
            ax += v * d[(j + w) * n + (i + w)];
            ay += v * d[(i + w) * n + (j + w)];
        }
    }
    ulong p = (ulong)y * width + x;
    grad[p] = (double2)(ax, ay);
    mag[p] = sqrt((ax * ax) + (ay * ay));
}

/* The magnitude's maximum, pass 1: per work-group maximum over a strided share
** (max is exact, so the split does not matter). stats[1 + group] receives it. */
kernel void canny_max_partial(global const double *mag, ulong n, global double *stats)
{
    local double lm[REDUCE];
    size_t lid = get_local_id(0);
    double m = 0.0;
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
        m = fmax(m, mag[i]);
    lm[lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t off = get_local_size(0) / 2; off > 0; off /= 2) {
        if (lid < off)
            lm[lid] = fmax(lm[lid], lm[lid + off]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        stats[1 + get_group_id(0)] = lm[0];
}

/* Pass 2 (one work-item): stats[0] = the maximum. */
kernel void canny_max_final(global double *stats, int parts)
{
    if (get_global_id(0) != 0)
        return;
    double m = 0.0;
    for (int p = 1; p <= parts; p++)
        m = fmax(m, stats[p]);
    stats[0] = m;
}

/* The normalised magnitude at (x, y). */
double canny_m(global const double *mag, int width, int x, int y, double max)
{
    double v = mag[(ulong)y * width + x];
    return max > 0.0 ? v / max : v;
}

/* 1 iff m >= a·(1−d) + b·d and m >= c·(1−d) + e·d: a local maximum along one direction. */
int canny_peak(double m, double d, double a, double b, double c, double e)
{
    double n1 = (a * (1.0 - d)) + (b * d);
    double n2 = (c * (1.0 - d)) + (e * d);
    return m >= n1 && m >= n2;
}

/* 1 iff the interior pixel (x, y), of normalised magnitude m and gradient
** (ix, iy), is a local maximum in a sector whose condition it meets. */
int canny_local_max(global const double *mag, int width, int x, int y, double max, double m, double ix, double iy)
{
#define M(dx, dy) canny_m(mag, width, x + (dx), y + (dy), max)
    int peak = 0;
    if ((iy <= 0.0 && ix > -iy) || (iy >= 0.0 && ix < -iy))
        peak |= canny_peak(m, fabs(iy / ix), M(1, 0), M(1, -1), M(-1, 0), M(-1, 1));
    if ((ix > 0.0 && -iy >= ix) || (ix < 0.0 && -iy <= ix))
        peak |= canny_peak(m, fabs(ix / iy), M(0, -1), M(1, -1), M(0, 1), M(-1, 1));
    if ((ix <= 0.0 && ix > iy) || (ix >= 0.0 && ix < iy))
        peak |= canny_peak(m, fabs(ix / iy), M(0, -1), M(-1, -1), M(0, 1), M(1, 1));
    if ((iy < 0.0 && ix <= iy) || (iy > 0.0 && ix >= iy))
        peak |= canny_peak(m, fabs(iy / ix), M(-1, 0), M(-1, -1), M(1, 0), M(1, 1));
#undef M
    return peak;
}

/* Non-maximum suppression on interior pixels, weak and strong thresholds. */
kernel void canny_nms(global const double2 *grad, global const double *mag, global const double *stats,
                      int width, int height, double tlo, double thi, global uchar *state, global int *flags)
{
    local int any_strong;
    int x = get_global_id(0), y = get_global_id(1);
    int first = get_local_id(0) == 0 && get_local_id(1) == 0;
    if (first)
        any_strong = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uchar s = 0;
    if (x >= 1 && y >= 1 && x < width - 1 && y < height - 1) {
        double max = stats[0], m = canny_m(mag, width, x, y, max);
        /* Most pixels are not above t_lo: they skip the neighbours. */
        if (m > tlo) {
            double2 gr = grad[(ulong)y * width + x];
            if (canny_local_max(mag, width, x, y, max, m, gr.x, gr.y))
                s = m > thi ? 2 : 1;
        }
    }
    if (x < width && y < height)
        state[(ulong)y * width + x] = s;
    if (s == 2)
        any_strong = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (first && any_strong)
        atomic_or(&flags[F_HAS_STRONG], 1);
}

/* Hysteresis pass (GPU): each HT×HT tile, with a one-pixel halo from `in`,
** promotes weak pixels next to promoted ones in local memory until the tile
** is stable, then writes the tile to `out`. Passes repeat (in and out swapped)
** until one promotes nothing; halos read the previous pass, so there are no
** races between work-groups. Launched with HT×HR work-groups. */
kernel void canny_hyst_tiles(global const uchar *in, global uchar *out, int width, int height,
                             global int *flags)
{
    if (flags[F_CONVERGED])
        return;
    local uchar t[HT + 2][HT + 2];
    local int more[2];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x0 = get_group_id(0) * HT, y0 = get_group_id(1) * HT;
    for (int c = ly * HT + lx; c < (HT + 2) * (HT + 2); c += HT * HR) {
        int cy = c / (HT + 2), cx = c % (HT + 2);
        int gx = x0 + cx - 1, gy = y0 + cy - 1;
        t[cy][cx] = gx >= 0 && gy >= 0 && gx < width && gy < height ? in[(ulong)gy * width + gx] : 0;
    }
    int first = lx == 0 && ly == 0;
    if (first)
        more[0] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Reads and writes of a step are split by barriers; `more` alternates
    ** between two slots so that clearing one never meets a read of it. */
    int it = 0;
    for (;; it++) {
        int up[HT / HR];
        for (int j = 0; j < HT / HR; j++) {
            int cy = ly + j * HR + 1, cx = lx + 1;
            up[j] = t[cy][cx] == 1 &&
                    (t[cy - 1][cx - 1] == 2 || t[cy - 1][cx] == 2 || t[cy - 1][cx + 1] == 2 || t[cy][cx - 1] == 2 ||
                     t[cy][cx + 1] == 2 || t[cy + 1][cx - 1] == 2 || t[cy + 1][cx] == 2 || t[cy + 1][cx + 1] == 2);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < HT / HR; j++)
            if (up[j]) {
                t[ly + j * HR + 1][lx + 1] = 2;
                more[it & 1] = 1;
            }
        if (first)
            more[(it + 1) & 1] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!more[it & 1])
            break;
    }
    for (int j = 0; j < HT / HR; j++) {
        int gx = x0 + lx, gy = y0 + ly + j * HR;
        if (gx < width && gy < height)
            out[(ulong)gy * width + gx] = t[ly + j * HR + 1][lx + 1];
    }
    if (first && it > 0)
        atomic_or(&flags[F_CHANGED], 1);
}

/* 1 iff a neighbour of (x, y) is promoted: rows inside [y0, y1) from the band
** being swept (`out`), the rows beyond from the previous pass (`in`). */
int canny_joined(global const uchar *in, global const uchar *out, int width, int height, int y0, int y1, int x,
                 int y)
{
    for (int dy = -1; dy <= 1; dy++) {
        int yy = y + dy;
        if (yy < 0 || yy >= height)
            continue;
        global const uchar *row = (yy >= y0 && yy < y1 ? out : in) + (ulong)yy * width;
        for (int dx = -1; dx <= 1; dx++) {
            int xx = x + dx;
            if (xx >= 0 && xx < width && row[xx] == 2)
                return 1;
        }
    }
    return 0;
}

/* Hysteresis pass (CPU): one work-item per band of `band` rows, copied from
** `in` to `out` and swept in raster order forwards and backwards until stable,
** so a pass settles everything inside the band; passes repeat as on the GPU. */
kernel void canny_hyst_bands(global const uchar *in, global uchar *out, int width, int height, int band,
                             global int *flags)
{
    if (flags[F_CONVERGED])
        return;
    int y0 = get_global_id(0) * band;
    if (y0 >= height)
        return;
    int y1 = min(y0 + band, height);
    for (ulong i = (ulong)y0 * width; i < (ulong)y1 * width; i++)
        out[i] = in[i];
    int changed = 0, any = 0;
    do {
        changed = 0;
        for (int y = y0; y < y1; y++)
            for (int x = 0; x < width; x++) {
                ulong i = (ulong)y * width + x;
                if (out[i] == 1 && canny_joined(in, out, width, height, y0, y1, x, y)) {
                    out[i] = 2;
                    changed = 1;
                }
            }
        for (int y = y1 - 1; y >= y0; y--)
            for (int x = width - 1; x >= 0; x--) {
                ulong i = (ulong)y * width + x;
                if (out[i] == 1 && canny_joined(in, out, width, height, y0, y1, x, y)) {
                    out[i] = 2;
                    changed = 1;
                }
            }
        any |= changed;
    } while (changed);
    if (any)
        atomic_or(&flags[F_CHANGED], 1);
}

/* After hysteresis pass `pass` (one work-item): a pass that promoted nothing
** ends the loop, and its number tells the host which buffer holds the result. */
kernel void canny_hyst_check(global int *flags, int pass)
{
    if (get_global_id(0) != 0 || flags[F_CONVERGED])
        return;
    if (!flags[F_CHANGED]) {
        flags[F_CONVERGED] = 1;
        flags[F_FINAL] = pass;
    }
    flags[F_CHANGED] = 0;
}

/* One sub-iteration of bwmorph 'thin' (Lam, Lee & Suen), decided on `in`: a
** pixel is set iff in >= level (2 after hysteresis, 1 between the two
** sub-iterations). Without a strong pixel the result is the weak map as is. */
kernel void canny_thin(global const uchar *in, global uchar *out, int width, int height, int level, int second,
                       global const int *flags)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    ulong i = (ulong)y * width + x;
    int strong = flags[F_HAS_STRONG];
    int lv = strong ? level : 1;
    int p = in[i] >= lv;
    if (!strong || !p) {
        out[i] = p;
        return;
    }
    /* nb[1..8]: E, NE, N, NW, W, SW, S, SE; nb[9] = nb[1]. */
    const int dx[8] = {1, 1, 0, -1, -1, -1, 0, 1}, dy[8] = {0, -1, -1, -1, 0, 1, 1, 1};
    int nb[10];
    for (int k = 0; k < 8; k++) {
        int xx = x + dx[k], yy = y + dy[k];
        nb[k + 1] = xx >= 0 && yy >= 0 && xx < width && yy < height && in[(ulong)yy * width + xx] >= lv;
    }
    nb[9] = nb[1];
    int g1 = 0, n1 = 0, n2 = 0;
    for (int k = 1; k <= 4; k++) {
        g1 += !nb[2 * k - 1] && (nb[2 * k] || nb[2 * k + 1]);
        n1 += nb[2 * k - 1] || nb[2 * k];
        n2 += nb[2 * k] || nb[2 * k + 1];
    }
    int mn = min(n1, n2);
    /* Lam, Lee & Suen's "(x2 ∨ x3 ∨ ¬x8) ∧ x1 = 0" means the whole conjunction
    ** is 0, as MATLAB's lutthin3 tabulates; G3′ likewise. */
    int g3 = second ? !((nb[6] || nb[7] || !nb[4]) && nb[5]) : !((nb[2] || nb[3] || !nb[8]) && nb[1]);
    out[i] = !(g1 == 1 && mn >= 2 && mn <= 3 && g3);
}
