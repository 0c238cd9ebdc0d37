/*
** local_threshold.cl — Niblack, Sauvola, NICK and Wolf thresholds from window sums.
** Formulas, clipped window and evaluation order: docs/algorithms.md, "Niblack, Sauvola,
** NICK, Wolf". Only + − × ÷ √ in double, FP_CONTRACT OFF (the prelude), so every device
** rounds identically.
*/
enum method { NIBLACK = 0, SAUVOLA = 1, NICK = 2, WOLF = 3 };

#define REDUCE 256

/* Pixel count of the clipped window around (x, y). */
long window_count(int x, int y, int width, int height, int h)
{
    long rows = min(y + h, height - 1) - max(y - h, 0) + 1;
    long cols = min(x + h, width - 1) - max(x - h, 0) + 1;
    return rows * cols;
}

/* mean and population variance of the window, in the documented order. */
double window_var(long s, long q, long n, double *mean)
{
    double m = (double)s / (double)n;
    *mean = m;
    return (double)q / (double)n - m * m;
}

kernel void threshold_local(global const uchar *gray, global const long *sums, int width, int height, int h,
                            int method, double k, global const double *wolf, global uchar *out)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    ulong n = (ulong)width * (ulong)height, i = (ulong)y * width + x;
    double mean;
    double var = window_var(sums[i], sums[n + i], window_count(x, y, width, height, h), &mean);
    double t;
    if (method == NIBLACK) {
        t = mean + k * sqrt(var);
    } else if (method == SAUVOLA) {
        t = mean * (1.0 + k * ((sqrt(var) / 128.0) - 1.0));
    } else if (method == NICK) {
        t = mean + k * sqrt(var + mean * mean);
    } else {
        double gmin = wolf[0], max_s = wolf[1];
        t = mean - k * (1.0 - (sqrt(var) / max_s)) * (mean - gmin);
    }
    out[i] = (double)gray[i] <= t ? 0 : 255;
}

/* Wolf, pass 1: per work-group maximum window variance and minimum gray over a
** share of the pixels: strided on a GPU, where neighbouring work-items read
** neighbouring pixels together; `chunked`, a run of consecutive pixels per
** work-item, on a CPU device, which runs a group's work-items one after another
** (strided, each work-item swept the whole page a cache line at a time: 2.4 ms
** a megapixel on the H100 host's PoCL, five times the threshold pass). Maximum
** and minimum are exact, so the result does not depend on how the image is
** split. */
kernel void wolf_partial(global const uchar *gray, global const long *sums, int width, int height, int h,
                         int chunked, global double *part_var, global int *part_min)
{
    local double lv[REDUCE];
    local int lm[REDUCE];
    size_t lid = get_local_id(0);
    ulong n = (ulong)width * (ulong)height;
    double vmax = DBL_MIN;
    int gmin = 255;
    ulong first = get_global_id(0), step = get_global_size(0), end = n;
    if (chunked) {
        ulong span = (n + step - 1) / step;
        first *= span;
        end = min(n, first + span);
        step = 1;
    }
    for (ulong i = first; i < end; i += step) {
        int y = (int)(i / (ulong)width), x = (int)(i % (ulong)width);
        double mean;
        double var = window_var(sums[i], sums[n + i], window_count(x, y, width, height, h), &mean);
        vmax = var > vmax ? var : vmax;
        gmin = min(gmin, (int)gray[i]);
    }
    lv[lid] = vmax;
    lm[lid] = gmin;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t off = get_local_size(0) / 2; off > 0; off /= 2) {
        if (lid < off) {
            lv[lid] = lv[lid + off] > lv[lid] ? lv[lid + off] : lv[lid];
            lm[lid] = min(lm[lid], lm[lid + off]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        part_var[get_group_id(0)] = lv[0];
        part_min[get_group_id(0)] = lm[0];
    }
}

/* Wolf, pass 2 (one work-item): wolf[0] = minimum gray, wolf[1] = √(max variance),
** the running maximum starting at DBL_MIN so that a uniform image gives s/maxS = 0. */
kernel void wolf_final(global const double *part_var, global const int *part_min, int parts,
                       global double *wolf)
{
    if (get_global_id(0) != 0)
        return;
    double vmax = DBL_MIN;
    int gmin = 255;
    for (int p = 0; p < parts; p++) {
        vmax = part_var[p] > vmax ? part_var[p] : vmax;
        gmin = min(gmin, part_min[p]);
    }
    wolf[0] = (double)gmin;
    wolf[1] = sqrt(vmax);
}

/* ---- Window sums and threshold in one pass (the fused stats+threshold) ----
** A work-group takes a strip of FUSED_TW columns and a band of rows. It keeps
** the column sums of the window's rows for its strip and the halo on either
** side in local memory, slides them down the band a row at a time, and each
** work-item sums FUSED_R neighbouring windows along the row from them. Columns
** outside the page hold zero sums, so every window sum is the clipped one.
** The sums fit 32 bits up to half-windows of FUSED_MAX_HALF: (2*127 + 1)^2 *
** 255^2 < 2^32; unsigned arithmetic wraps back to the exact sums. The
** threshold is threshold_local's, operation for operation. With pass 0 (Wolf's
** first) it writes nothing but each group's largest window variance and least
** gray level, as wolf_partial does. */
#define FUSED_ITEMS 64
#define FUSED_R 7
#define FUSED_TW (FUSED_ITEMS * FUSED_R)
#define FUSED_MAX_HALF 127

kernel void local_fused(global const uchar *gray, int width, int height, int h, int band, int method, double k,
                        global const double *wolf, int pass, global double *part_var, global int *part_min,
                        global uchar *out)
{
    local uint cs[FUSED_TW + 2 * FUSED_MAX_HALF], cq[FUSED_TW + 2 * FUSED_MAX_HALF];
    local double lv[FUSED_ITEMS];
    local int lm[FUSED_ITEMS];
    int lid = get_local_id(0);
    int x0 = get_group_id(0) * FUSED_TW, y0 = get_group_id(1) * band;
    int y1 = min(y0 + band, height), ncols = FUSED_TW + 2 * h;
    for (int c = lid; c < ncols; c += FUSED_ITEMS) {
        int x = x0 - h + c;
        uint s = 0, q = 0;
        if (x >= 0 && x < width)
            for (int y = max(y0 - h, 0); y <= min(y0 + h, height - 1); y++) {
                uint v = gray[(size_t)y * width + x];
                s += v;
                q += v * v;
            }
        cs[c] = s;
        cq[c] = q;
    }
    double gmin = 0, max_s = 1, vmax = DBL_MIN;
    int least = 255;
    if (method == WOLF && pass == 1) {
        gmin = wolf[0];
        max_s = wolf[1];
    }
    for (int y = y0; y < y1; y++) {
        if (y > y0)
            for (int c = lid; c < ncols; c += FUSED_ITEMS) {
                int x = x0 - h + c;
                if (x < 0 || x >= width)
                    continue;
                if (y + h < height) {
                    uint v = gray[(size_t)(y + h) * width + x];
                    cs[c] += v;
                    cq[c] += v * v;
                }
                if (y - h - 1 >= 0) {
                    uint v = gray[(size_t)(y - h - 1) * width + x];
                    cs[c] -= v;
                    cq[c] -= v * v;
                }
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        long rows = min(y + h, height - 1) - max(y - h, 0) + 1;
        int c0 = lid * FUSED_R;
        uint s = 0, q = 0;
        for (int c = c0; c <= c0 + 2 * h; c++) {
            s += cs[c];
            q += cq[c];
        }
        for (int j = 0; j < FUSED_R; j++) {
            if (j > 0) {
                s += cs[c0 + j + 2 * h] - cs[c0 + j - 1];
                q += cq[c0 + j + 2 * h] - cq[c0 + j - 1];
            }
            int x = x0 + c0 + j;
            if (x >= width)
                break;
            size_t i = (size_t)y * width + x;
            long cols = min(x + h, width - 1) - max(x - h, 0) + 1;
            double mean;
            double var = window_var((long)s, (long)q, rows * cols, &mean);
            if (pass == 0) {
                vmax = var > vmax ? var : vmax;
                least = min(least, (int)gray[i]);
                continue;
            }
            double t;
            if (method == NIBLACK)
                t = mean + k * sqrt(var);
            else if (method == SAUVOLA)
                t = mean * (1.0 + k * ((sqrt(var) / 128.0) - 1.0));
            else if (method == NICK)
                t = mean + k * sqrt(var + mean * mean);
            else
                t = mean - k * (1.0 - (sqrt(var) / max_s)) * (mean - gmin);
            out[i] = (double)gray[i] <= t ? 0 : 255;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (pass != 0)
        return;
    lv[lid] = vmax;
    lm[lid] = least;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = FUSED_ITEMS / 2; off > 0; off /= 2) {
        if (lid < off) {
            lv[lid] = lv[lid + off] > lv[lid] ? lv[lid + off] : lv[lid];
            lm[lid] = min(lm[lid], lm[lid + off]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        size_t g = get_group_id(1) * get_num_groups(0) + get_group_id(0);
        part_var[g] = lv[0];
        part_min[g] = lm[0];
    }
}
