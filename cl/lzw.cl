/*
** lzw.cl — TIFF LZW strips decoded on the device, exactly as runtime/lzw.c
** decodes them on the host.
**
** An LZW strip is one serial chain of codes, but its clear codes cut it into
** segments that share nothing: each starts with an empty table. Within a
** segment the code widths depend only on how many codes came before (9 bits,
** then 10, 11 and 12 from fixed counts on), so where every code lies is known
** before any is decoded, and the first clear or end code is a search:
** lzw_segments runs it, a work-group a strip, one segment after the other.
** lzw_lengths then walks each segment on its own, listing where each code's
** output starts (an entry is the string of the code it was made after and
** one byte more, so the list is the table), lzw_place turns the segments'
** lengths into their places in the strip and checks the strip as the host
** decoder would, and lzw_decode copies every segment's strings, all
** segments at once. Each walk is serial, so a call takes pages from several
** threads at once (runtime/lzw_device.c): the GPU's width is in the number of
** segments.
**
** A strip is decoded here only when the host decoder would decode it, to
** the same bytes; every other strip is flagged, and the host decodes it (and
** libtiff judges it). So a stream that declines, overflows or ends early
** never reaches the image from here.
**
** Per strip (`strips`, STRIP_* fields): its first byte in `in`, its length in
** bits (each strip is followed by 4 zero bytes, so a code never reads past
** it), where its rows start in `out`, the bytes it must fill, its first
** segment slot and its first code slot; the kernels fill in its segment
** count and whether the device decoded it. Per segment slot (SEG_* fields):
** its strip (LZW_NONE in a slot no strip used), then what the kernels find.
*/

#define LZW_CLEAR 256
#define LZW_END 257
#define LZW_FIRST 258
/* Codes 0..LZW_LAST-1 of a segment can be data codes; the code at LZW_LAST
** would be the 4097th entry, so it must be a clear code. */
#define LZW_LAST 3838
#define LZW_NONE 0xffffffffu

enum { STRIP_IN, STRIP_BITS, STRIP_OUT, STRIP_WANT, STRIP_SEG, STRIP_CODE, STRIP_COUNT, STRIP_OK, STRIP_FIELDS };
enum { SEG_STRIP, SEG_BIT, SEG_END, SEG_CODE, SEG_CODES, SEG_LEN, SEG_STOP, SEG_OUT, SEG_FIELDS };
/* How a segment ends (SEG_END's low two bits; the code count above them):
** a clear code (another segment follows), or not (the end code, the bits
** running out, a full table, or no slot left for the next segment). */
enum { END_CLEAR, END_STOP };

/* The width of code j of a segment (j = 0 right after the clear code). */
uint code_width(uint j)
{
    return j < 254 ? 9 : j < 766 ? 10 : j < 1790 ? 11 : 12;
}

/* Where code j of a segment starts, in bits from the segment's start. */
uint code_offset(uint j)
{
    return j < 254 ? 9 * j
         : j < 766 ? 2286 + 10 * (j - 254)
         : j < 1790 ? 7406 + 11 * (j - 766)
         : 18670 + 12 * (j - 1790);
}

/* The `width`-bit code at bit `p` of `in`, most significant bit first. */
uint code_at(global const uchar *in, uint p, uint width)
{
    global const uchar *b = in + (p >> 3);
    uint v = (uint)b[0] << 16 | (uint)b[1] << 8 | b[2];
    return (v >> (24 - (p & 7) - width)) & ((1u << width) - 1);
}

/* A work-group a strip: the segments, one after the other, each found by
** testing all its code positions at once for the first clear or end code,
** or the first code past the strip's bits. */
kernel void lzw_segments(global const uchar *in, global uint *strips, global uint *segs)
{
    local uint found;
    global uint *st = strips + get_group_id(0) * STRIP_FIELDS;
    uint lid = get_local_id(0), size = get_local_size(0);
    global const uchar *bytes = in + st[STRIP_IN];
    uint bits = st[STRIP_BITS], first = st[STRIP_SEG], cap = st[STRIP_FIELDS + STRIP_SEG] - first;
    uint code = st[STRIP_CODE], count = 0;
    /* Every encoder starts a strip with a clear code; the host decoder
    ** declines a strip without one. */
    if (bits >= 9 && code_at(bytes, 0, 9) == LZW_CLEAR) {
        uint start = 9;
        for (uint k = 0; k < cap; k++) {
            if (lid == 0)
                found = LZW_LAST + 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint j = lid; j <= LZW_LAST; j += size) {
                uint w = code_width(j), p = start + code_offset(j);
                if (p + w > bits || (code_at(bytes, p, w) >= LZW_CLEAR && code_at(bytes, p, w) <= LZW_END)) {
                    atomic_min(&found, j);
                    break;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            uint j = found;
            uint w = code_width(j), p = start + code_offset(j);
            bool clear = j <= LZW_LAST && p + w <= bits && code_at(bytes, p, w) == LZW_CLEAR && k + 1 < cap;
            if (j > LZW_LAST)
                j = LZW_LAST; /* the code there is a data code: the table overflows */
            if (lid == 0) {
                global uint *sg = segs + (first + k) * SEG_FIELDS;
                sg[SEG_STRIP] = get_group_id(0);
                sg[SEG_BIT] = start;
                sg[SEG_END] = j << 2 | (clear ? END_CLEAR : END_STOP);
                sg[SEG_CODE] = code;
            }
            code += j + 1;
            count = k + 1;
            barrier(CLK_LOCAL_MEM_FENCE); /* `found` is read before it is set again */
            if (!clear)
                break;
            start = p + w;
        }
    }
    if (lid == 0)
        st[STRIP_COUNT] = count;
}

/* A work-item a segment: each code's output offset in `codes` (a string is
** a literal, or an entry: the string of the code it was made after and one
** byte more), and the segment's length. SEG_STOP is where, in the segment's
** output, the host decoder would stop with a failure if it got there: at a
** code not yet defined, or at the end of a segment that no clear code ends;
** LZW_NONE when nowhere. SEG_CODES is how many codes can be decoded. */
kernel void lzw_lengths(global const uchar *restrict in, global const uint *strips, global uint *segs, uint n_segs,
                        global uint *codes)
{
    uint i = get_global_id(0);
    if (i >= n_segs)
        return;
    global uint *sg = segs + i * SEG_FIELDS;
    if (sg[SEG_STRIP] == LZW_NONE)
        return;
    global const uint *st = strips + sg[SEG_STRIP] * STRIP_FIELDS;
    global const uchar *bytes = in + st[STRIP_IN];
    global uint *at = codes + sg[SEG_CODE];
    uint n = sg[SEG_END] >> 2, p = sg[SEG_BIT], sum = 0, j = 0;
    for (; j < n; j++) {
        uint w = code_width(j), c = code_at(bytes, p, w), l = 1;
        p += w;
        at[j] = sum;
        if (c >= LZW_FIRST) {
            uint m = c - LZW_FIRST; /* the code the entry was made after: its string and one byte more */
            if (m >= j) /* not yet defined (m == j - 1 is the entry being made) */
                break;
            l = at[m + 1] - at[m] + 1;
        }
        sum += l;
    }
    at[j] = sum;
    sg[SEG_CODES] = j;
    sg[SEG_LEN] = sum;
    sg[SEG_STOP] = j == n && (sg[SEG_END] & 3) == END_CLEAR ? LZW_NONE : sum;
}

/* A work-item a strip: each segment's place in the strip, and whether the
** host decoder would fill the strip without failing. Segments past the
** strip's end get its length (nothing to decode). */
kernel void lzw_place(global uint *strips, global uint *segs, uint n_strips)
{
    uint s = get_global_id(0);
    if (s >= n_strips)
        return;
    global uint *st = strips + s * STRIP_FIELDS;
    uint want = st[STRIP_WANT], off = 0, ok = st[STRIP_COUNT] > 0;
    for (uint k = 0; k < st[STRIP_COUNT]; k++) {
        global uint *sg = segs + (st[STRIP_SEG] + k) * SEG_FIELDS;
        sg[SEG_OUT] = off;
        if (off < want && sg[SEG_STOP] != LZW_NONE && sg[SEG_STOP] < want - off)
            ok = 0;
        off = sg[SEG_LEN] < want - off ? off + sg[SEG_LEN] : want;
    }
    st[STRIP_OK] = ok && off >= want;
}

/* A work-item a segment of a strip that decodes: its strings, each a copy of
** bytes it wrote before (or a literal), up to the strip's end. */
kernel void lzw_decode(global const uchar *restrict in, global const uint *strips, global const uint *segs,
                       uint n_segs, global const uint *restrict codes, global uchar *out)
{
    uint i = get_global_id(0);
    if (i >= n_segs)
        return;
    global const uint *sg = segs + i * SEG_FIELDS;
    if (sg[SEG_STRIP] == LZW_NONE)
        return;
    global const uint *st = strips + sg[SEG_STRIP] * STRIP_FIELDS;
    if (!st[STRIP_OK] || sg[SEG_OUT] >= st[STRIP_WANT])
        return;
    global const uchar *bytes = in + st[STRIP_IN];
    global const uint *at = codes + sg[SEG_CODE];
    global uchar *o = out + st[STRIP_OUT] + sg[SEG_OUT];
    uint left = st[STRIP_WANT] - sg[SEG_OUT], n = sg[SEG_CODES], p = sg[SEG_BIT];
    for (uint j = 0; j < n && at[j] < left; j++) {
        uint w = code_width(j), c = code_at(bytes, p, w), d = at[j];
        p += w;
        if (c < LZW_CLEAR) {
            o[d] = (uchar)c;
            continue;
        }
        uint src = at[c - LZW_FIRST], l = at[c - LZW_FIRST + 1] - src + 1;
        if (l > left - d)
            l = left - d;
        for (uint t = 0; t < l; t++)
            o[d + t] = o[src + t];
    }
}

/* Horizontal differencing undone: a work-item a row of `row_bytes` from
** `first`, each sample added to the one `stride` bytes before. */
kernel void lzw_undiff(global uchar *out, ulong first, uint rows, uint row_bytes, uint stride)
{
    uint r = get_global_id(0);
    if (r >= rows)
        return;
    global uchar *row = out + first + (size_t)r * row_bytes;
    for (uint i = stride; i < row_bytes; i++)
        row[i] = (uchar)(row[i] + row[i - stride]);
}
