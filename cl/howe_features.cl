/*
** howe_features.cl — the image statistics howe-predict's features come from
** (algorithms/howe_features.c): integer counts and sums only, each work-item
** into its own partial and the partials summed in a fixed order, so every
** device and launch shape gives the same numbers.
*/
#define GLCM_BINS 8
#define EDGE_BINS 2

/* The pixels of work-item g: a contiguous chunk (CPU devices, whose
** work-items run one after another) or every global-size-th pixel (GPUs). */
void feature_range(ulong n, ulong chunk, ulong *first, ulong *end, ulong *step)
{
    ulong g = get_global_id(0);
    if (chunk) {
        *first = g * chunk;
        *end = min(n, (g + 1) * chunk);
        *step = 1;
    } else {
        *first = g;
        *end = n;
        *step = get_global_size(0);
    }
}

/* The gray level of MATLAB's graycomatrix with its defaults (8 levels over
** 0..255): round(7 v / 255), as an integer (7 v / 255 is never a half). */
int glcm_level(uint v)
{
    return (int)((14 * v + 255) / 510);
}

/* Co-occurrence of horizontally adjacent pixels (each pixel with its right
** neighbour), as the counts of |level difference| 0..7: contrast and
** homogeneity depend on nothing else. partial: GLCM_BINS per work-item. */
kernel void hf_glcm(global const uchar *gray, int width, int height, ulong chunk, global ulong *partial)
{
    ulong count[GLCM_BINS] = {0};
    ulong n = (ulong)width * (ulong)height, p, end, step;
    for (feature_range(n, chunk, &p, &end, &step); p < end; p += step)
        if ((int)(p % (ulong)width) != width - 1)
            count[abs(glcm_level(gray[p]) - glcm_level(gray[p + 1]))]++;
    for (int b = 0; b < GLCM_BINS; b++)
        partial[get_global_id(0) * GLCM_BINS + b] = count[b];
}

/* The edge pixels and the sum of their gray levels. partial: EDGE_BINS per work-item. */
kernel void hf_edges(global const uchar *gray, global const uchar *edges, ulong n, ulong chunk,
                     global ulong *partial)
{
    ulong count = 0, sum = 0, p, end, step;
    for (feature_range(n, chunk, &p, &end, &step); p < end; p += step)
        if (edges[p]) {
            count++;
            sum += gray[p];
        }
    partial[get_global_id(0) * EDGE_BINS] = count;
    partial[get_global_id(0) * EDGE_BINS + 1] = sum;
}

/* out[b] = the sum over the `items` partials of bin b (one work-item per bin). */
kernel void hf_reduce(global const ulong *partial, int items, int bins, global ulong *out)
{
    int b = get_global_id(0);
    if (b >= bins)
        return;
    ulong sum = 0;
    for (int i = 0; i < items; i++)
        sum += partial[(ulong)i * bins + b];
    out[b] = sum;
}

/* The background of Otsu's split (gray levels above the threshold): its
** pixels, and the sums of their levels and of their squares. */
kernel void hf_background(global const ulong *hist, global const int *threshold, global ulong *out)
{
    if (get_global_id(0) != 0)
        return;
    ulong count = 0, sum = 0, squares = 0;
    for (int v = threshold[0] + 1; v < 256; v++) {
        count += hist[v];
        sum += (ulong)v * hist[v];
        squares += (ulong)(v * v) * hist[v];
    }
    out[0] = count;
    out[1] = sum;
    out[2] = squares;
}

/* Writes n int64 values given as arguments (up to 8) at `out`. */
kernel void hf_values(global long *out, int n, long a, long b, long c, long d, long e, long f, long g, long h)
{
    if (get_global_id(0) != 0)
        return;
    long v[8] = {a, b, c, d, e, f, g, h};
    for (int i = 0; i < n; i++)
        out[i] = v[i];
}

/* Copies n int64 values from src at src_index to dst at dst_index. */
kernel void hf_copy_values(global const long *src, int src_index, global long *dst, int dst_index, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[dst_index + i] = src[src_index + i];
}
