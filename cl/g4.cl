/*
** g4.cl — CCITT Group 4 (T.6) coding of a packed bitmap where it was packed.
**
** A row's codes depend only on it and the row above, so a work-group codes
** one row (g4_code): its work-items list both rows' changing elements in
** local memory, 32 pixels each at a time, and one of them codes the row from
** the lists, as runtime/g4.c's encode_row does, into words of the row's own.
** g4_scan turns the rows' lengths into their offsets in the stream, and
** g4_place moves every word to its place. The codes are runtime/g4.c's, whose
** tables the host passes in (G4_* below index them), so the stream is the one
** that file writes: tests/test_g4.c compares them.
**
** Rows are MSB first with 1 for white, `stride` bytes apart; the stream is in
** 32-bit words whose most significant bit comes first.
*/

/* Where each table starts in `codes`: a code is its bits << 4 | its length. */
#define G4_WHITE_TERM 0
#define G4_BLACK_TERM 64
#define G4_WHITE_MAKEUP 128
#define G4_BLACK_MAKEUP 155
#define G4_SHARED_MAKEUP 182
#define G4_VERTICAL 195
#define G4_PASS 202
#define G4_HORIZONTAL 203
#define G4_EOL 204

/* A row's codes, appended to its own words (most significant bit first):
** `acc` holds the `n` bits not yet a whole word. */
typedef struct {
    ulong acc;
    uint n, words;
    global uint *out;
} sink;

void put(sink *s, uint code)
{
    uint len = code & 15;
    s->acc = s->acc << len | (code >> 4);
    s->n += len;
    if (s->n >= 32) {
        s->n -= 32;
        s->out[s->words++] = (uint)(s->acc >> s->n);
    }
}

/* A run of n pixels of one colour: make-up codes of 2560 while more is left,
** the make-up code of the 64s, then the terminating code. */
void put_run(sink *s, constant uint *codes, int n, int black)
{
    while (n > 2560) {
        put(s, codes[G4_SHARED_MAKEUP + 12]);
        n -= 2560;
    }
    if (n >= 64) {
        int m = n / 64;
        put(s, m <= 27 ? codes[(black ? G4_BLACK_MAKEUP : G4_WHITE_MAKEUP) + m - 1] : codes[G4_SHARED_MAKEUP + m - 28]);
        n -= 64 * m;
    }
    put(s, codes[(black ? G4_BLACK_TERM : G4_WHITE_TERM) + n]);
}

#define G4_LOCAL 64 /* work-items of a row's work-group */

/* Lists row's changing elements (pixels whose colour differs from the one
** before; the pixel before the first is white) into list, in order, then
** `width` twice; returns how many before those. A work-item takes 32 pixels
** at a time; `counts` is scratch of G4_LOCAL + 1 entries. NULL is the white
** row above the first. */
int list_changes(global const uchar *row, int width, local ushort *list, local int *counts)
{
    int i = get_local_id(0), words = (width + 31) / 32, bytes = (width + 7) / 8;
    int per = (words + G4_LOCAL - 1) / G4_LOCAL, w0 = min(i * per, words), w1 = min(w0 + per, words);
    /* The transitions in a word: its pixels against the ones before them. */
#define TRANSITIONS(k, t)                                                                             \
    {                                                                                                 \
        uint v = 0;                                                                                   \
        for (int b = 0; b < 4; b++)                                                                   \
            v = v << 8 | (4 * (k) + b < bytes ? row[4 * (k) + b] : 0xffu);                          \
        uint before = (k) ? row[4 * (k) - 1] & 1u : 1u;                                               \
        t = v ^ v >> 1 ^ before << 31; /* the first against the pixel before the word */          \
        if (32 * (k) + 32 > width)                                                                    \
            t &= ~(0xffffffffu >> (width - 32 * (k))); /* none at or past the width */               \
    }
    int n = 0;
    if (row)
        for (int k = w0; k < w1; k++) {
            uint t;
            TRANSITIONS(k, t);
            n += popcount(t);
        }
    counts[i + 1] = n;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i == 0) {
        counts[0] = 0;
        for (int k = 1; k <= G4_LOCAL; k++)
            counts[k] += counts[k - 1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int at = counts[i];
    if (row)
        for (int k = w0; k < w1; k++) {
            uint t;
            TRANSITIONS(k, t);
            while (t) {
                int z = clz(t);
                list[at++] = (ushort)(32 * k + z);
                t &= ~(0x80000000u >> z);
            }
        }
#undef TRANSITIONS
    int total = counts[G4_LOCAL];
    if (i == 0)
        list[total] = list[total + 1] = (ushort)width;
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Codes one row against the row above from their lists of changes (with
** their sentinels), as runtime/g4.c's encode_row does. */
void code_row(sink *s, constant uint *codes, local const ushort *cur, local const ushort *ref, int width)
{
    int a0 = -1, i = 0, k = 0; /* a0; a1's index in cur; the first change in ref right of a0 */
    int black = 0;             /* a0's colour */
    while (a0 < width) {
        int a1 = cur[i];
        /* b1: the first change in ref right of a0 to the colour opposite a0's,
        ** that is at an even index when a0 is white, odd when black. */
        while (ref[k] <= a0 && ref[k] < width)
            k++;
        int j = k + ((k & 1) != black && ref[k] < width);
        int b1 = ref[j], b2 = b1 < width ? ref[j + 1] : width;
        if (b2 < a1) {
            put(s, codes[G4_PASS]);
            a0 = b2;
        } else if (a1 - b1 >= -3 && a1 - b1 <= 3) {
            put(s, codes[G4_VERTICAL + a1 - b1 + 3]);
            a0 = a1;
            black = !black;
            i++;
        } else {
            int a2 = cur[i + 1];
            put(s, codes[G4_HORIZONTAL]);
            put_run(s, codes, a1 - (a0 < 0 ? 0 : a0), black);
            put_run(s, codes, a2 - a1, !black);
            a0 = a2;
            i += 2;
        }
    }
}

/* A work-group a row: codes row y into its words at out + y * cap (cap
** words a row) and its length in bits into bits[y]; the last row ends with
** the end-of-facsimile block (two EOLs). `lists`: 2 (width + 2) entries. */
kernel __attribute__((reqd_work_group_size(G4_LOCAL, 1, 1)))
void g4_code(global const uchar *rows, int width, int height, int stride, constant uint *codes, int cap,
             global uint *out, global uint *bits, local ushort *lists)
{
    local int counts[G4_LOCAL + 1];
    int y = get_group_id(0);
    local ushort *cur = lists, *ref = lists + width + 2;
    list_changes(rows + (ulong)y * stride, width, cur, counts);
    list_changes(y ? rows + (ulong)(y - 1) * stride : 0, width, ref, counts);
    if (get_local_id(0))
        return;
    sink s = {0, 0, 0, out + (ulong)y * cap};
    code_row(&s, codes, cur, ref, width);
    if (y == height - 1) {
        put(&s, codes[G4_EOL]);
        put(&s, codes[G4_EOL]);
    }
    if (s.n)
        s.out[s.words] = (uint)(s.acc << (32 - s.n));
    bits[y] = 32 * s.words + s.n;
}

/* One work-group of G4_SCAN work-items: each row's offset in the stream (the
** bits of the rows before it), and after them, at offsets[height], the
** stream's length. */
#define G4_SCAN 256
kernel __attribute__((reqd_work_group_size(G4_SCAN, 1, 1)))
void g4_scan(global const uint *bits, int height, global ulong *offsets)
{
    local ulong part[G4_SCAN];
    int i = get_local_id(0), per = (height + G4_SCAN - 1) / G4_SCAN, y0 = min(i * per, height),
        y1 = min(y0 + per, height);
    ulong sum = 0;
    for (int y = y0; y < y1; y++)
        sum += bits[y];
    part[i] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i == 0) { /* 256 additions: not worth a tree */
        ulong run = 0;
        for (int k = 0; k < G4_SCAN; k++) {
            ulong p = part[k];
            part[k] = run;
            run += p;
        }
        offsets[height] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong at = part[i];
    for (int y = y0; y < y1; y++) {
        offsets[y] = at;
        at += bits[y];
    }
}

/* A work-group a row: each word of the row's codes ORed into the stream
** (zeroed beforehand) at the row's offset. Rows meet inside a word, and a
** word of the row straddles two of the stream's; an OR of disjoint bits does
** not depend on the order. */
kernel void g4_place(global const uint *codes_out, int cap, global const uint *bits, global const ulong *offsets,
                     global uint *stream)
{
    int y = get_group_id(0);
    uint words = (bits[y] + 31) / 32;
    ulong at = offsets[y];
    for (uint j = get_local_id(0); j < words; j += get_local_size(0)) {
        ulong pos = at + 32 * (ulong)j;
        uint v = codes_out[(ulong)y * cap + j], off = (uint)(pos & 31);
        global uint *w = stream + (pos >> 5);
        atomic_or(w, v >> off);
        if (off && (v << (32 - off)))
            atomic_or(w + 1, v << (32 - off));
    }
}
