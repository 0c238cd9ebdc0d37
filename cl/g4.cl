/*
** g4.cl — CCITT Group 4 (T.6) coding of a packed bitmap where it was packed.
**
** A row's codes depend only on it and the row above, so each work-item codes
** one row into words of its own (g4_code), g4_scan turns the rows' lengths
** into their offsets in the stream, and g4_place moves every word to its
** place, a work-group a row. The choices and the codes are runtime/g4.c's, whose
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
    uint n, words, bits;
    global uint *out;
} sink;

void put(sink *s, uint code)
{
    uint len = code & 15;
    s->acc = s->acc << len | (code >> 4);
    s->n += len;
    s->bits += len;
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

/* The first pixel at or after x whose colour differs from `black`, or width
** (also where the row has no such pixel; NULL is the white row above the
** first). */
int next_change(global const uchar *row, int width, int x, int black)
{
    if (x >= width)
        return width;
    if (!row)
        return black ? x : width;
    uint flip = black ? 0u : 0xffffffffu;
    int byte = x >> 3, bytes = (width + 7) >> 3;
    /* The first word starts at x's byte, its bits before x masked off. */
    for (uint mask = 0xffffffffu >> (x & 7); byte < bytes; byte += 4, mask = 0xffffffffu) {
        uint v;
        if (byte + 4 <= bytes) {
            uchar4 b = vload4(0, row + byte);
            v = (uint)b.s0 << 24 | (uint)b.s1 << 16 | (uint)b.s2 << 8 | b.s3;
        } else { /* the row's last bytes; a change found past them is past the width */
            v = 0;
            for (int k = 0; k < 4; k++)
                v = v << 8 | (byte + k < bytes ? row[byte + k] : 0u);
        }
        v = (v ^ flip) & mask;
        if (v)
            return min(byte * 8 + (int)clz(v), width);
    }
    return width;
}

/* Whether pixel x is black (x >= 0). */
int is_black(global const uchar *row, int x)
{
    return row && !((row[x >> 3] >> (7 - (x & 7))) & 1);
}

/* Codes one row against the row above (`ref`, NULL for the first), as
** runtime/g4.c's encode_row does from the rows' lists of changes. */
void code_row(sink *s, constant uint *codes, global const uchar *cur, global const uchar *ref, int width)
{
    int a0 = -1, black = 0; /* a0 and its colour */
    while (a0 < width) {
        int a1 = next_change(cur, width, a0 < 0 ? 0 : a0, black);
        /* b1: the first change on the row above right of a0 to the colour
        ** opposite a0's; b2 the change after it. */
        int from = a0 + 1, b1;
        if (from >= width)
            b1 = width;
        else if (from > 0 && is_black(ref, from - 1) != black) /* a run of the other colour: skip it */
            b1 = next_change(ref, width, next_change(ref, width, from, !black), black);
        else
            b1 = next_change(ref, width, from, black);
        int b2 = b1 < width ? next_change(ref, width, b1, !black) : width;
        if (b2 < a1) {
            put(s, codes[G4_PASS]);
            a0 = b2;
        } else if (a1 - b1 >= -3 && a1 - b1 <= 3) {
            put(s, codes[G4_VERTICAL + a1 - b1 + 3]);
            a0 = a1;
            black = !black;
        } else {
            int a2 = next_change(cur, width, a1, !black);
            put(s, codes[G4_HORIZONTAL]);
            put_run(s, codes, a1 - (a0 < 0 ? 0 : a0), black);
            put_run(s, codes, a2 - a1, !black);
            a0 = a2;
        }
    }
}

/* Codes row y into its words at out + y * cap (cap words a row) and its
** length in bits into bits[y]; the last row ends with the end-of-facsimile
** block (two EOLs). */
kernel void g4_code(global const uchar *rows, int width, int height, int stride, constant uint *codes, int cap,
                    global uint *out, global uint *bits)
{
    int y = get_global_id(0);
    if (y >= height)
        return;
    sink s = {0, 0, 0, 0, out + (ulong)y * cap};
    code_row(&s, codes, rows + (ulong)y * stride, y ? rows + (ulong)(y - 1) * stride : 0, width);
    if (y == height - 1) {
        put(&s, codes[G4_EOL]);
        put(&s, codes[G4_EOL]);
    }
    if (s.n)
        s.out[s.words] = (uint)(s.acc << (32 - s.n));
    bits[y] = s.bits;
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
