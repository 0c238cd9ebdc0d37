/*
** local_threshold.cl — Niblack, Sauvola, NICK and Wolf thresholds from window sums.
** Formulas and evaluation order: specs/local-thresholding.md §§2–3. Only + − × ÷ √
** in double, FP_CONTRACT OFF (the prelude), so every device rounds identically.
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

/* mean and population variance of the window, in the spec's order. */
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
