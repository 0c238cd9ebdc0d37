/*
** howe_tune.cl — the pixel work of Howe's parameter tuning (algorithms/howe_tune.c).
**
** A chain of cuts at ascending c records every cut in one 64-bit word per node
** (bit i: the node is ink at c_i). The images of the chain are the words with
** the output's padding and clean-up applied bitwise, so one pass over the words
** counts, for every i at once, the pixels that differ between the images of
** c_i and c_i+1, and one more pass draws the image of the c that is kept.
** All counts are integers summed with atomics, so they do not depend on the
** order work-items run in, and every device gives the same counts.
**
** A chain item starts with a header of SLOT_WORDS uint32 per chain (H_*
** below), then the kept images, width*height bytes each.
*/
#define SLOT_WORDS 128
#define H_PICK 0   /* the index of the kept c, 0..32 */
#define H_CUTS 1   /* the cuts made */
#define H_TRUTH 2  /* ink pixels of the ground truth (grid search) */
#define H_DIFF 3   /* 32 counts: pixels that differ between c_i and c_i+1 */
#define H_INK 35   /* 33 counts: ink pixels at c_i (grid search) */
#define H_HIT 68   /* 33 counts: ink pixels at c_i that are ink in the truth (grid search) */
#define COUNTS 99  /* H_TRUTH .. H_HIT + 32 */
#define CUTS 33    /* the bits of a node word that hold cuts; the others are not cleared */

/* The ink bits of pixel (r, k) of the output images: the node words padded to
** the image by repeating the last row and column, and ink kept only where the
** north or west neighbour is ink too (row 0 and column 0 stand in for their
** missing neighbours), as howe_finish does for one cut. */
ulong image_bits(global const ulong *words, int width, int height, int r, int k)
{
    int cols = width - 1, rows = height - 1;
    int pr = min(r, rows - 1), pk = min(k, cols - 1);
    ulong self = words[(ulong)pr * cols + pk];
    ulong north = r > 0 ? words[(ulong)min(r - 1, rows - 1) * cols + pk] : self;
    ulong west = k > 0 ? words[(ulong)pr * cols + min(k - 1, cols - 1)] : self;
    return self & (north | west) & (((ulong)1 << CUTS) - 1);
}

/* The range of pixels of work-item g: a contiguous chunk (CPU devices, whose
** work-items run one after another), or every global-size-th pixel (GPUs). */
void item_range(ulong n, ulong chunk, ulong *first, ulong *end, ulong *step)
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

/* Adds one to count[b] for every set bit b of x. */
void count_bits(local uint *count, ulong x)
{
    while (x) {
        ulong low = x & (~x + 1);
        atomic_inc(&count[63 - (int)clz(low)]);
        x ^= low;
    }
}

kernel void tune_clear(global uint *x, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = 0;
}

kernel void tune_set(global uint *x, int index, uint value)
{
    if (get_global_id(0) == 0)
        x[index] = value;
}

/* The counts of one chain into slot `s` of the header (zeroed before): the
** changes between successive images, and with a truth (nonzero = ink) the ink
** and the hits of every image and the truth's ink. */
kernel void tune_counts(global const ulong *words, global const uchar *truth, int width, int height, ulong chunk,
                        global uint *header, int s)
{
    global uint *slot = header + s * SLOT_WORDS;
    local uint count[COUNTS];
    for (int i = get_local_id(0); i < COUNTS; i += get_local_size(0))
        count[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong n = (ulong)width * (ulong)height, p, end, step;
    for (item_range(n, chunk, &p, &end, &step); p < end; p += step) {
        int r = (int)(p / (ulong)width), k = (int)(p % (ulong)width);
        ulong ink = image_bits(words, width, height, r, k);
        count_bits(count + (H_DIFF - H_TRUTH), (ink ^ (ink >> 1)) & 0xffffffffUL);
        if (truth) {
            count_bits(count + (H_INK - H_TRUTH), ink);
            if (truth[p]) {
                atomic_inc(&count[0]);
                count_bits(count + (H_HIT - H_TRUTH), ink);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_local_id(0); i < COUNTS; i += get_local_size(0))
        if (count[i])
            atomic_add(&slot[H_TRUTH + i], count[i]);
}

/* The image of the c slot `s` of the header keeps (H_PICK) at `offset` in
** `out`: 0 = ink, 255 = background. The header may be `out` itself. */
kernel void tune_extract(global const ulong *words, global uchar *out, int s, int width, int height, ulong offset)
{
    int k = get_global_id(0), r = get_global_id(1);
    if (k >= width || r >= height)
        return;
    uint pick = ((global const uint *)out)[s * SLOT_WORDS + H_PICK];
    ulong ink = image_bits(words, width, height, r, k);
    out[offset + (ulong)r * width + k] = (ink >> pick) & 1 ? 0 : 255;
}

/* Adds to count[0] the pixels where a (at a_offset) and b (at b_offset) differ. */
kernel void tune_diff(global const uchar *a, ulong a_offset, global const uchar *b, ulong b_offset, ulong n,
                      ulong chunk, global uint *count)
{
    local uint differ;
    if (get_local_id(0) == 0)
        differ = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = 0;
    ulong p, end, step;
    for (item_range(n, chunk, &p, &end, &step); p < end; p += step)
        mine += a[a_offset + p] != b[b_offset + p];
    if (mine)
        atomic_add(&differ, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0 && differ)
        atomic_add(count, differ);
}

/* Copies n bytes from src at src_offset to dst at dst_offset. */
kernel void tune_copy(global const uchar *src, ulong src_offset, global uchar *dst, ulong dst_offset, ulong n)
{
    ulong i = get_global_id(0);
    if (i < n)
        dst[dst_offset + i] = src[src_offset + i];
}

/* dst[i] = the low `count` bits of src[offset + i] << shift, or'ed into dst
** unless `first`: a chain's words from the bits of its stacked parts. */
kernel void tune_gather(global const ulong *src, ulong offset, int count, int shift, int first, global ulong *dst,
                        ulong n)
{
    ulong i = get_global_id(0);
    if (i < n)
        dst[i] = (first ? 0 : dst[i]) | (src[offset + i] & ((1UL << count) - 1)) << shift;
}

/* The run's report: five int64 values. */
kernel void tune_report(global long *report, long a, long b, long c, long d, long e)
{
    if (get_global_id(0) == 0) {
        report[0] = a;
        report[1] = b;
        report[2] = c;
        report[3] = d;
        report[4] = e;
    }
}
