/*
** hbk.cl — HBK, two-class k-means in RGB per block with a global centroid loop.
** Spec: specs/hbk.md. Centroids are Q8 fixed point (256 x value), distances int64,
** sums integers: no floating point, so every device gives the same result.
**
** State (global int[9]): G0 r,g,b, G1 r,g,b (Q8), converged flag, outer iterations,
** assignment passes over a block summed over blocks and outer iterations (the
** stage's work, which the planner's cost model scales by; saturates at INT_MAX).
** Per block: mu[6] (its final local centroids) and acc[9] (per cluster: sum r,
** g, b, count; then the block's assignment passes).
*/
#define S_CONVERGED 6
#define S_ITERATIONS 7
#define S_PASSES 8
#define ACC 9
#define MAX_GROUP 256
#define MAX_PER_ITEM 4

/* Squared distance of pixel (r, g, b) to a Q8 centroid. */
long hbk_dist(int r, int g, int b, int mr, int mg, int mb)
{
    long dr = 256 * r - mr, dg = 256 * g - mg, db = 256 * b - mb;
    return dr * dr + dg * dg + db * db;
}

/* 1 (white) iff the pixel is at least as near the white centroid: ties go to white. */
int hbk_label(int r, int g, int b, const int *mu)
{
    return hbk_dist(r, g, b, mu[3], mu[4], mu[5]) <= hbk_dist(r, g, b, mu[0], mu[1], mu[2]);
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

/* GPU: one work-group per block; each work-item keeps up to MAX_PER_ITEM pixels
** in registers; the per-cluster sums are reduced in local memory. Every
** work-item computes the same new centroids, so the loop exit is uniform. */
kernel void hbk_local_groups(global const uchar *img, int width, int height, int channels, int block,
                             int local_max, int global_max, global const int *state, global int *mu_out,
                             global uint *acc_out)
{
    if (state[S_CONVERGED] || state[S_ITERATIONS] >= global_max)
        return;
    local uint red[8][MAX_GROUP];
    int lid = get_local_id(0), lsize = get_local_size(0);
    int bx = get_group_id(0), by = get_group_id(1);
    int x0 = bx * block, y0 = by * block;
    int bw = min(block, width - x0), bh = min(block, height - y0), npx = bw * bh;
    int pr[MAX_PER_ITEM], pg[MAX_PER_ITEM], pb[MAX_PER_ITEM], np = 0;
    for (int p = lid; p < npx; p += lsize, np++) {
        ulong i = (ulong)(y0 + p / bw) * width + (x0 + p % bw);
        hbk_pixel(img, i, channels, &pr[np], &pg[np], &pb[np]);
    }
    int mu[6];
    for (int c = 0; c < 6; c++)
        mu[c] = state[c];
    uint sums[8];
    int it = 0;
    for (;; it++) {
        for (int v = 0; v < 8; v++)
            sums[v] = 0;
        for (int p = 0; p < np; p++) {
            int k = hbk_label(pr[p], pg[p], pb[p], mu);
            sums[4 * k] += pr[p];
            sums[4 * k + 1] += pg[p];
            sums[4 * k + 2] += pb[p];
            sums[4 * k + 3] += 1;
        }
        for (int v = 0; v < 8; v++)
            red[v][lid] = sums[v];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = lsize / 2; off > 0; off /= 2) {
            if (lid < off)
                for (int v = 0; v < 8; v++)
                    red[v][lid] += red[v][lid + off];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        for (int v = 0; v < 8; v++)
            sums[v] = red[v][0];
        barrier(CLK_LOCAL_MEM_FENCE);
        /* The pass after the cap only assigns: its sums are the accumulators.
        ** Otherwise unchanged centroids end the loop with the sums of their own
        ** assignment, as the accumulators must be. */
        if (it == local_max || hbk_update(sums, mu))
            break;
    }
    if (lid == 0) {
        int b = by * get_num_groups(0) + bx;
        for (int c = 0; c < 6; c++)
            mu_out[6 * b + c] = mu[c];
        for (int v = 0; v < 8; v++)
            acc_out[ACC * b + v] = sums[v];
        acc_out[ACC * b + 8] = it + 1;
    }
}

/* CPU: one work-item per block, plain loops over its pixels. */
kernel void hbk_local_serial(global const uchar *img, int width, int height, int channels, int block,
                             int local_max, int global_max, global const int *state, global int *mu_out,
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
    int mu[6];
    for (int c = 0; c < 6; c++)
        mu[c] = state[c];
    uint sums[8];
    int it = 0;
    for (;; it++) {
        for (int v = 0; v < 8; v++)
            sums[v] = 0;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                int r, g, bl;
                hbk_pixel(img, (ulong)y * width + x, channels, &r, &g, &bl);
                int k = hbk_label(r, g, bl, mu);
                sums[4 * k] += r;
                sums[4 * k + 1] += g;
                sums[4 * k + 2] += bl;
                sums[4 * k + 3] += 1;
            }
        if (it == local_max || hbk_update(sums, mu))
            break;
    }
    for (int c = 0; c < 6; c++)
        mu_out[6 * b + c] = mu[c];
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

/* Each pixel to its block's nearest final local centroid. */
kernel void hbk_label_pixels(global const uchar *img, int width, int height, int channels, int block,
                             global const int *mu_all, global uchar *out)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    int bcols = (width + block - 1) / block;
    global const int *m = mu_all + 6 * ((y / block) * bcols + x / block);
    int mu[6];
    for (int c = 0; c < 6; c++)
        mu[c] = m[c];
    int r, g, b;
    ulong i = (ulong)y * width + x;
    hbk_pixel(img, i, channels, &r, &g, &b);
    out[i] = hbk_label(r, g, b, mu) ? 255 : 0;
}
