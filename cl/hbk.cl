/*
** hbk.cl — HBK, two-class k-means in RGB per block with a global centroid loop.
** The algorithm: docs/hbk.md. Centroids are Q8 fixed point (256 x value), the
** nearest centroid an exact integer test (hbk_make_test), sums and scatters
** integers: no floating point, so every device gives the same result.
**
** State (global int[9]): G0 r,g,b, G1 r,g,b (Q8), converged flag, outer iterations,
** assignment passes over a block summed over blocks and outer iterations (the
** stage's work, which the planner's cost model scales by; saturates at INT_MAX).
** Per block: its final labelling test (hbk_test, 4 ints: the nearest-centroid
** test of its final local centroids, or all white for a cleared block: what the
** label stage needs) and acc[9] (per cluster: sum r, g, b, count, a flat block's
** all in the paper cluster; then the block's assignment passes).
*/
#define S_CONVERGED 6
#define S_ITERATIONS 7
#define S_PASSES 8
#define ACC 9
#define MAX_GROUP 256
#define MAX_PER_ITEM 16
/* docs/hbk.md §§3-4: a block whose |mu0 - mu1|^2 is under FLAT_RATIO
** (w0/n0 + w1/n1) is flat, under ONE_MODE_RATIO (w0/n0 + w1/n1) a single mode. */
#define FLAT_RATIO 8
#define ONE_MODE_RATIO 4

/* The nearest-centroid test for black centroid B = mu[0..2] and white W =
** mu[3..5] (Q8): pixel p is at least as near W, and so white (ties go to
** white), iff |256p - W|^2 <= |256p - B|^2, that is iff
** 512 * sum_c p_c (B_c - W_c) <= |B|^2 - |W|^2 = D, and, the left side being
** an integer, iff sum_c p_c (B_c - W_c) <= floor(D / 512). The same labels as
** the squared distances in 64 bits, in three 32-bit products a pixel: the sum
** is at most 3 * 255 * 65280 and floor(D / 512) at most 3 * 65280^2 / 512 in
** magnitude, both below 2^31. */
typedef struct hbk_test {
    int dr, dg, db, t;
} hbk_test;

hbk_test hbk_make_test(const int *mu)
{
    hbk_test s;
    s.dr = mu[0] - mu[3];
    s.dg = mu[1] - mu[4];
    s.db = mu[2] - mu[5];
    long d = 0;
    for (int c = 0; c < 3; c++)
        d += (long)mu[c] * mu[c] - (long)mu[3 + c] * mu[3 + c];
    s.t = (int)(d >= 0 ? d / 512 : -((-d + 511) / 512));
    return s;
}

/* Stores a block's test as 4 ints at `out`, for the label stage. */
void hbk_store_test(hbk_test t, global int *out)
{
    out[0] = t.dr;
    out[1] = t.dg;
    out[2] = t.db;
    out[3] = t.t;
}

/* 1 (white) iff pixel (r, g, b) is at least as near the white centroid. */
int hbk_white(int r, int g, int b, hbk_test s)
{
    return r * s.dr + g * s.dg + b * s.db <= s.t;
}

/* Q8 mean with round half up; a cluster without members keeps `old`. */
int hbk_mean(ulong sum, ulong count, int old)
{
    return count ? (int)((256 * sum + count / 2) / count) : old;
}

void hbk_pixel(global const uchar *img, ulong i, int channels, int *r, int *g, int *b)
{
    if (channels == 1) {
        *r = *g = *b = img[i];
    } else {
        *r = img[3 * i];
        *g = img[3 * i + 1];
        *b = img[3 * i + 2];
    }
}

kernel void hbk_init(global int *state)
{
    if (get_global_id(0) != 0)
        return;
    for (int c = 0; c < 3; c++) {
        state[c] = 0;
        state[3 + c] = 255 * 256;
    }
    state[S_CONVERGED] = 0;
    state[S_ITERATIONS] = 0;
    state[S_PASSES] = 0;
}

/* The per-cluster sums (r, g, b, count of black, then of white) from the sums
** over all n pixels of a block and over its white ones. A pass sums only the
** white pixels, under a mask, and the block's totals are summed once: sums
** indexed by each pixel's label are kept in memory rather than registers,
** which made a pass 20% longer on an H100 and up to 3.8 times on PoCL
** (bench/results/hbk-h100.md). */
void hbk_split(const uint *all, const uint *white, uint n, uint *sums)
{
    for (int c = 0; c < 3; c++) {
        sums[c] = all[c] - white[c];
        sums[4 + c] = white[c];
    }
    sums[3] = n - white[3];
    sums[7] = white[3];
}

/* New centroids from per-cluster sums; returns 1 if they equal `mu`. */
int hbk_update(const uint *sums, int *mu)
{
    int same = 1;
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 3; c++) {
            int m = hbk_mean(sums[4 * k + c], sums[4 * k + 3], mu[3 * k + c]);
            same &= m == mu[3 * k + c];
            mu[3 * k + c] = m;
        }
    return same;
}

/* Sum over the pixels of a cluster of |256p - mu|^2, from its n pixels, channel
** sums s[0..2] and sum of squares q (sum over pixels and channels of p_c^2):
** 65536 q - 512 sum_c mu_c s_c + n |mu|^2, exact in 64 bits (each term below
** 2^44 for a block of 1024 pixels). */
long hbk_scatter(const int *mu, const uint *s, uint n, uint q)
{
    long w = 65536L * q;
    for (int c = 0; c < 3; c++)
        w += (long)mu[c] * ((long)n * mu[c] - 512L * s[c]);
    return w;
}

/* Finishes a block from its final centroids mu, per-cluster sums (hbk_split)
** and sums of squares of all its pixels and of its white ones, with g the
** global centroids its local k-means started from (docs/hbk.md §§3-4): a flat
** block's sums all go to the paper cluster; a block whose split is a single
** mode, or whose centroids are less than half as far apart as g's, is cleared:
** its test is all white (0 <= 0). */
void hbk_finish(const int *mu, uint *sums, uint q_all, uint q_white, global const int *g, global int *test_out)
{
    long d = 0, dg = 0;
    for (int c = 0; c < 3; c++) {
        d += (long)(mu[c] - mu[3 + c]) * (mu[c] - mu[3 + c]);
        dg += (long)(g[c] - g[3 + c]) * (g[c] - g[3 + c]);
    }
    int one_mode = 0;
    ulong n0 = sums[3], n1 = sums[7];
    if (n0 && n1) {
        long w0 = hbk_scatter(mu, sums, sums[3], q_all - q_white);
        long w1 = hbk_scatter(mu + 3, sums + 4, sums[7], q_white);
        /* d < 2^34 and w_k < n_k 2^34, so both sides stay below 2^57. */
        long between = d * (long)(n0 * n1), within = w0 * (long)n1 + w1 * (long)n0;
        one_mode = between < ONE_MODE_RATIO * within;
        if (between < FLAT_RATIO * within) {
            for (int v = 0; v < 4; v++) {
                sums[4 + v] += sums[v];
                sums[v] = 0;
            }
        }
    }
    hbk_test t = {0, 0, 0, 0};
    if (!one_mode && 4 * d >= dg)
        t = hbk_make_test(mu);
    hbk_store_test(t, test_out);
}

/* Replaces v[0..n) (n <= 4) of every work-item with their sums over the
** work-group of lsize (a power of two) work-items, through `red`. Every
** work-item must call it. */
void hbk_group_sum(uint *v, int n, local uint (*red)[MAX_GROUP], int lid, int lsize)
{
    for (int i = 0; i < n; i++)
        red[i][lid] = v[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = lsize / 2; off > 0; off /= 2) {
        if (lid < off)
            for (int i = 0; i < n; i++)
                red[i][lid] += red[i][lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < n; i++)
        v[i] = red[i][0];
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* GPU: one work-group per block; each work-item keeps up to MAX_PER_ITEM pixels
** in registers; the block's totals and, each pass, its white sums are reduced
** in local memory. Every work-item computes the same new centroids, so the
** loop exit is uniform. */
kernel void hbk_local_groups(global const uchar *img, int width, int height, int channels, int block,
                             int local_max, int global_max, global const int *state, global int *test_out,
                             global uint *acc_out)
{
    if (state[S_CONVERGED] || state[S_ITERATIONS] >= global_max)
        return;
    local uint red[4][MAX_GROUP];
    int lid = get_local_id(0), lsize = get_local_size(0);
    int bx = get_group_id(0), by = get_group_id(1);
    int x0 = bx * block, y0 = by * block;
    int bw = min(block, width - x0), bh = min(block, height - y0), npx = bw * bh;
    int pr[MAX_PER_ITEM], pg[MAX_PER_ITEM], pb[MAX_PER_ITEM], np = 0;
    uint all[4] = {0, 0, 0, 0}, white[4];
    for (int p = lid; p < npx; p += lsize, np++) {
        ulong i = (ulong)(y0 + p / bw) * width + (x0 + p % bw);
        hbk_pixel(img, i, channels, &pr[np], &pg[np], &pb[np]);
        all[0] += pr[np];
        all[1] += pg[np];
        all[2] += pb[np];
        all[3] += pr[np] * pr[np] + pg[np] * pg[np] + pb[np] * pb[np];
    }
    hbk_group_sum(all, 4, red, lid, lsize);
    int mu[6];
    for (int c = 0; c < 6; c++)
        mu[c] = state[c];
    uint sums[8];
    int it = 0;
    for (;; it++) {
        hbk_test t = hbk_make_test(mu);
        for (int v = 0; v < 4; v++)
            white[v] = 0;
        for (int p = 0; p < np; p++) {
            uint m = 0u - (uint)hbk_white(pr[p], pg[p], pb[p], t);
            white[0] += (uint)pr[p] & m;
            white[1] += (uint)pg[p] & m;
            white[2] += (uint)pb[p] & m;
            white[3] += 1u & m;
        }
        hbk_group_sum(white, 4, red, lid, lsize);
        hbk_split(all, white, (uint)npx, sums);
        /* The pass after the cap only assigns: its sums are the accumulators.
        ** Otherwise unchanged centroids end the loop with the sums of their own
        ** assignment, as the accumulators must be. */
        if (it == local_max || hbk_update(sums, mu))
            break;
    }
    /* The white pixels' sum of squares under the final centroids, for the scatters. */
    hbk_test t = hbk_make_test(mu);
    uint q_white = 0;
    for (int p = 0; p < np; p++)
        if (hbk_white(pr[p], pg[p], pb[p], t))
            q_white += pr[p] * pr[p] + pg[p] * pg[p] + pb[p] * pb[p];
    hbk_group_sum(&q_white, 1, red, lid, lsize);
    if (lid == 0) {
        int b = by * get_num_groups(0) + bx;
        hbk_finish(mu, sums, all[3], q_white, state, test_out + 4 * b);
        for (int v = 0; v < 8; v++)
            acc_out[ACC * b + v] = sums[v];
        acc_out[ACC * b + 8] = it + 1;
    }
}

/* CPU: one work-item per block, plain loops over its pixels. */
kernel void hbk_local_serial(global const uchar *img, int width, int height, int channels, int block,
                             int local_max, int global_max, global const int *state, global int *test_out,
                             global uint *acc_out)
{
    if (state[S_CONVERGED] || state[S_ITERATIONS] >= global_max)
        return;
    int bcols = (width + block - 1) / block, brows = (height + block - 1) / block;
    int b = get_global_id(0);
    if (b >= bcols * brows)
        return;
    int x0 = (b % bcols) * block, y0 = (b / bcols) * block;
    int x1 = min(x0 + block, width), y1 = min(y0 + block, height);
    uint all[4] = {0, 0, 0, 0};
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            int r, g, bl;
            hbk_pixel(img, (ulong)y * width + x, channels, &r, &g, &bl);
            all[0] += r;
            all[1] += g;
            all[2] += bl;
            all[3] += r * r + g * g + bl * bl;
        }
    int mu[6];
    for (int c = 0; c < 6; c++)
        mu[c] = state[c];
    uint sums[8];
    int it = 0;
    for (;; it++) {
        hbk_test t = hbk_make_test(mu);
        uint white[4] = {0, 0, 0, 0};
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                int r, g, bl;
                hbk_pixel(img, (ulong)y * width + x, channels, &r, &g, &bl);
                uint m = 0u - (uint)hbk_white(r, g, bl, t);
                white[0] += (uint)r & m;
                white[1] += (uint)g & m;
                white[2] += (uint)bl & m;
                white[3] += 1u & m;
            }
        hbk_split(all, white, (uint)((y1 - y0) * (x1 - x0)), sums);
        if (it == local_max || hbk_update(sums, mu))
            break;
    }
    hbk_test t = hbk_make_test(mu);
    uint q_white = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            int r, g, bl;
            hbk_pixel(img, (ulong)y * width + x, channels, &r, &g, &bl);
            if (hbk_white(r, g, bl, t))
                q_white += r * r + g * g + bl * bl;
        }
    hbk_finish(mu, sums, all[3], q_white, state, test_out + 4 * b);
    for (int v = 0; v < 8; v++)
        acc_out[ACC * b + v] = sums[v];
    acc_out[ACC * b + 8] = it + 1;
}

/* The global step (one work-group): sums the block accumulators in 64 bits, forms
** G' and tests G' = G, and adds the blocks' passes to the state's count. Does
** nothing once converged, so that iterations enqueued beyond convergence leave
** the state and the blocks' centroids untouched. */
kernel void hbk_global(global const uint *acc, int blocks, int global_max, global int *state)
{
    if (state[S_CONVERGED] || state[S_ITERATIONS] >= global_max)
        return;
    local ulong red[ACC][MAX_GROUP];
    int lid = get_local_id(0), lsize = get_local_size(0);
    ulong sums[ACC] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int b = lid; b < blocks; b += lsize)
        for (int v = 0; v < ACC; v++)
            sums[v] += acc[ACC * b + v];
    for (int v = 0; v < ACC; v++)
        red[v][lid] = sums[v];
    /* Also a global fence: every work-item has read the state above before
    ** work-item 0 writes it below. */
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (int off = lsize / 2; off > 0; off /= 2) {
        if (lid < off)
            for (int v = 0; v < ACC; v++)
                red[v][lid] += red[v][lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid != 0)
        return;
    int same = 1;
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 3; c++) {
            int m = hbk_mean(red[4 * k + c][0], red[4 * k + 3][0], state[3 * k + c]);
            same &= m == state[3 * k + c];
            state[3 * k + c] = m;
        }
    state[S_ITERATIONS] += 1;
    state[S_CONVERGED] = same;
    state[S_PASSES] = (int)min((ulong)state[S_PASSES] + red[8][0], (ulong)INT_MAX);
}

/* Each pixel by its block's final test: its nearest final local centroid, or
** white in a cleared block (docs/hbk.md §4). */
kernel void hbk_label_pixels(global const uchar *img, int width, int height, int channels, int block,
                             global const int *tests, global uchar *out)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    int bcols = (width + block - 1) / block;
    global const int *bt = tests + 4 * ((y / block) * bcols + x / block);
    hbk_test t = {bt[0], bt[1], bt[2], bt[3]};
    int r, g, b;
    ulong i = (ulong)y * width + x;
    hbk_pixel(img, i, channels, &r, &g, &b);
    out[i] = hbk_white(r, g, b, t) ? 255 : 0;
}
