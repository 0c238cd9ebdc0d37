/*
** laplacian.cl — the data term of Howe's binarization: the integer Laplacian
** lap2 = 2·divergence(forward differences) on the (H−1)×(W−1) node grid, and
** the bright-background bias (docs/howe.md §§1–2). The bias filters run in
** double with host-computed Gaussian weights, taps summed in ascending offset
** order from 0, so every device rounds identically.
*/

/* MATLAB's rgb2gray, rounded half up and saturated; gray input as is. */
kernel void howe_gray(global const uchar *img, int channels, ulong n, global uchar *gray)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    if (channels == 1) {
        gray[i] = img[i];
        return;
    }
    double y = (((double)img[3 * i] * 0.298936021293775) + ((double)img[3 * i + 1] * 0.587043074451121)) +
               ((double)img[3 * i + 2] * 0.114020904255103);
    double r = floor(y + 0.5);
    gray[i] = (uchar)(r < 0.0 ? 0.0 : r > 255.0 ? 255.0 : r);
}

/* lap2 on node (r, k): twice MATLAB's gradient (central inside, one-sided at
** both ends of the node line) of the forward differences, along x plus along y. */
kernel void howe_lap2(global const uchar *gray, int width, int height, global int *lap2)
{
    int k = get_global_id(0), r = get_global_id(1);
    int cols = width - 1, rows = height - 1;
    if (k >= cols || r >= rows)
        return;
    global const uchar *row = gray + (ulong)r * width;
    int x2, y2;
    if (k == 0)
        x2 = 2 * (row[0] - 2 * row[1] + row[2]);
    else if (k == width - 2)
        x2 = 2 * (row[width - 3] - 2 * row[width - 2] + row[width - 1]);
    else
        x2 = row[k - 1] - row[k] - row[k + 1] + row[k + 2];
#define G(rr) ((int)gray[(ulong)(rr) * width + k])
    if (r == 0)
        y2 = 2 * (G(0) - 2 * G(1) + G(2));
    else if (r == height - 2)
        y2 = 2 * (G(height - 3) - 2 * G(height - 2) + G(height - 1));
    else
        y2 = G(r - 1) - G(r) - G(r + 1) + G(r + 2);
#undef G
    lap2[(ulong)r * cols + k] = x2 + y2;
}

/* Symmetric padding (… c b a | a b c …), periodic for pads longer than the line. */
int reflect(int i, int n)
{
    int j = i % (2 * n);
    if (j < 0)
        j += 2 * n;
    return j >= n ? 2 * n - 1 - j : j;
}

/* Vertical pass of the Gaussian (2R+1 taps h): mirror = 1 pads symmetrically,
** mirror = 0 takes zero outside. Input: gray bytes (src8) or doubles (src). */
kernel void howe_smooth_cols(global const uchar *src8, global const double *src, int width, int height,
                             constant double *h, int radius, int mirror, global double *dst)
{
    int k = get_global_id(0), r = get_global_id(1);
    if (k >= width || r >= height)
        return;
    double acc = 0.0;
    for (int j = -radius; j <= radius; j++) {
        int rr = r + j;
        if (!mirror && (rr < 0 || rr >= height))
            continue;
        if (mirror)
            rr = reflect(rr, height);
        ulong i = (ulong)rr * width + k;
        acc += h[j + radius] * (src8 ? (double)src8[i] : src[i]);
    }
    dst[(ulong)r * width + k] = acc;
}

kernel void howe_smooth_rows(global const double *src, int width, int height, constant double *h, int radius,
                             int mirror, global double *dst)
{
    int k = get_global_id(0), r = get_global_id(1);
    if (k >= width || r >= height)
        return;
    global const double *row = src + (ulong)r * width;
    double acc = 0.0;
    for (int j = -radius; j <= radius; j++) {
        int kk = k + j;
        if (!mirror && (kk < 0 || kk >= width))
            continue;
        if (mirror)
            kk = reflect(kk, width);
        acc += h[j + radius] * row[kk];
    }
    dst[(ulong)r * width + k] = acc;
}

/* The same two passes for a GPU, from tiles in local memory: each work-item
** makes SMOOTH_OUT neighbouring outputs, each summing its taps in the same
** order as above (a tap outside a zero-padded line adds 0 × h, which changes
** no sum here: the terms are never negative), so the results are the same
** bits; a value read from the tile serves every output whose window holds it.
** Work-groups are SMOOTH_COLS_X x SMOOTH_COLS_Y and SMOOTH_ROWS_X x 1; `tile`
** holds their outputs' rows (or columns) and 2 radius more. */
#define SMOOTH_OUT 4
#define SMOOTH_COLS_X 32
#define SMOOTH_COLS_Y 8
#define SMOOTH_ROWS_X 64

kernel void howe_smooth_cols_tiled(global const uchar *src8, global const double *src, int width, int height,
                                   constant double *h, int radius, int mirror, global double *dst,
                                   local double *tile)
{
    const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * SMOOTH_COLS_X + tx;
    const int x0 = get_group_id(0) * SMOOTH_COLS_X, y0 = get_group_id(1) * SMOOTH_COLS_Y * SMOOTH_OUT;
    const int rows = SMOOTH_COLS_Y * SMOOTH_OUT + 2 * radius;
    for (int i = lid; i < rows * SMOOTH_COLS_X; i += SMOOTH_COLS_X * SMOOTH_COLS_Y) {
        int k = x0 + i % SMOOTH_COLS_X, rr = y0 - radius + i / SMOOTH_COLS_X;
        double v = 0.0;
        if (mirror)
            rr = reflect(rr, height);
        if (k < width && rr >= 0 && rr < height) {
            ulong j = (ulong)rr * width + k;
            v = src8 ? (double)src8[j] : src[j];
        }
        tile[i] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int k = x0 + tx, r = y0 + ty * SMOOTH_OUT;
    if (k >= width)
        return;
    double acc[SMOOTH_OUT] = {0.0};
    local const double *col = tile + ty * SMOOTH_OUT * SMOOTH_COLS_X + tx;
    for (int t = 0; t < 2 * radius + SMOOTH_OUT; t++) {
        const double v = col[t * SMOOTH_COLS_X];
        for (int m = 0; m < SMOOTH_OUT; m++)
            if (t >= m && t - m <= 2 * radius)
                acc[m] += h[t - m] * v;
    }
    for (int m = 0; m < SMOOTH_OUT && r + m < height; m++)
        dst[(ulong)(r + m) * width + k] = acc[m];
}

kernel void howe_smooth_rows_tiled(global const double *src, int width, int height, constant double *h, int radius,
                                   int mirror, global double *dst, local double *tile)
{
    const int tx = get_local_id(0), x0 = get_group_id(0) * SMOOTH_ROWS_X * SMOOTH_OUT, r = get_group_id(1);
    global const double *row = src + (ulong)r * width;
    for (int i = tx; i < SMOOTH_ROWS_X * SMOOTH_OUT + 2 * radius; i += SMOOTH_ROWS_X) {
        int kk = x0 - radius + i;
        if (mirror)
            kk = reflect(kk, width);
        tile[i] = kk >= 0 && kk < width ? row[kk] : 0.0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Outputs tx, tx + SMOOTH_ROWS_X, ... would read the tile far apart; a
    ** work-item's outputs are neighbours, at SMOOTH_OUT tx. */
    const int k = x0 + tx * SMOOTH_OUT;
    if (k >= width)
        return;
    double acc[SMOOTH_OUT] = {0.0};
    local const double *seg = tile + tx * SMOOTH_OUT;
    for (int t = 0; t < 2 * radius + SMOOTH_OUT; t++) {
        const double v = seg[t];
        for (int m = 0; m < SMOOTH_OUT; m++)
            if (t >= m && t - m <= 2 * radius)
                acc[m] += h[t - m] * v;
    }
    for (int m = 0; m < SMOOTH_OUT && k + m < width; m++)
        dst[(ulong)r * width + k + m] = acc[m];
}

/* d = I − m (kept in `m`), and d² for the second smoothing. */
kernel void howe_deviation(global const uchar *gray, global double *m, global double *d2, ulong n)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    double d = (double)gray[i] - m[i];
    m[i] = d;
    d2[i] = d * d;
}

/* Nodes whose pixel is a bright outlier (d / (rms + eps) > 2) get lap2 = −1000. */
kernel void howe_bias(global const double *d, global const double *v, int width, int height, global int *lap2)
{
    int k = get_global_id(0), r = get_global_id(1);
    if (k >= width - 1 || r >= height - 1)
        return;
    ulong i = (ulong)r * width + k;
    double eps = 2.220446049250313e-16; /* 2^-52 */
    if (d[i] / (sqrt(v[i]) + eps) > 2.0)
        lap2[(ulong)r * (width - 1) + k] = -1000;
}
