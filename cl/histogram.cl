/*
** histogram.cl — the 256-bin gray histogram, exact 64-bit counts.
** Partial histograms (32-bit, each covering a bounded share of the image) are
** summed per bin in 64 bits; integer sums do not depend on order, so every
** device and launch shape gives the same histogram.
*/
#define BINS 256

/* GPU: each work-group counts a strided share of the pixels with local atomics. */
kernel void histogram_groups(global const uchar *gray, ulong n, global uint *partial)
{
    local uint h[BINS];
    size_t lid = get_local_id(0), lsize = get_local_size(0);
    for (size_t b = lid; b < BINS; b += lsize)
        h[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&h[gray[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t b = lid; b < BINS; b += lsize)
        partial[get_group_id(0) * BINS + b] = h[b];
}

/* CPU: each work-item counts one contiguous chunk into its own partial, no atomics. */
kernel void histogram_chunks(global const uchar *gray, ulong n, ulong chunk, uint chunks, global uint *partial)
{
    size_t c = get_global_id(0);
    if (c >= chunks)
        return;
    global uint *h = partial + c * BINS;
    for (int b = 0; b < BINS; b++)
        h[b] = 0;
    ulong end = min(n, (c + 1) * chunk);
    for (ulong i = c * chunk; i < end; i++)
        h[gray[i]]++;
}

/* Sums the partials of each bin (one work-item per bin). */
kernel void histogram_reduce(global const uint *partial, uint parts, global ulong *hist)
{
    size_t b = get_global_id(0);
    if (b >= BINS)
        return;
    ulong sum = 0;
    for (uint p = 0; p < parts; p++)
        sum += partial[p * BINS + b];
    hist[b] = sum;
}
