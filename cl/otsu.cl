/*
** otsu.cl — Otsu's threshold from the histogram, and the global binarization.
** The scan is the one docs/algorithms.md, "Otsu", states (64-bit sums, doubles
** for the class means, strict >), in a single work-item: 256 steps.
*/
kernel void otsu_threshold(global const ulong *hist, global int *threshold)
{
    if (get_global_id(0) != 0)
        return;
    long total_count = 0, total = 0;
    for (int i = 0; i < 256; i++) {
        total_count += (long)hist[i];
        total += (long)i * (long)hist[i];
    }
    long q1 = 0, sb = 0;
    double best = 0.0;
    int t = 0;
    for (int i = 0; i < 256; i++) {
        q1 += (long)hist[i];
        sb += (long)i * (long)hist[i];
        if (q1 == 0)
            continue;
        long q2 = total_count - q1;
        if (q2 == 0)
            break;
        double d = (double)sb / (double)q1 - (double)(total - sb) / (double)q2;
        double between = ((d * d) * (double)q1) * (double)q2;
        if (between > best) {
            best = between;
            t = i;
        }
    }
    threshold[0] = t;
}

/* Black (0) iff gray <= T, else white (255). */
kernel void binarize_global(global const uchar *gray, global const int *threshold, global uchar *out, ulong n)
{
    ulong i = get_global_id(0);
    if (i < n)
        out[i] = gray[i] <= threshold[0] ? 0 : 255;
}
