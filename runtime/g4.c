/*
** g4.c — CCITT Group 4 (ITU-T T.6) encoding of a bitonal page, for TIFF.
**
** libtiff's own encoder spends about 16 ms on a noisy A4 page, a third of a
** batch's CPU time per page when the output is Group 4. Here each row of a
** db_bitmap (1 for white) is turned into its list of changing elements first
** (64 pixels at a time), and the modes are chosen on those lists, so the cost
** is per change, not per pixel; codes go out through a 64-bit accumulator. The mode choice follows
** T.6 (pass, then vertical within 3, else horizontal), with an all-white
** reference line above the first row and an end-of-facsimile block (two EOLs)
** at the end, padded to a byte, as libtiff writes them; the stream is the one
** libtiff makes for the same page (tests/test_g4.c).
*/
#include <stdlib.h>
#include <string.h>
#include "runtime/codec.h"

/* A code: its bits (right-aligned) and how many. */
typedef struct code {
    uint16_t bits;
    uint8_t len;
} code;

/* T.4's run-length codes: terminating codes for runs 0..63, make-up codes for
** 64..1728 in steps of 64, and the make-up codes for 1792..2560 that both
** colours share. */
static const code white_term[64] = {
    {0x35, 8}, {0x7, 6},  {0x7, 4},  {0x8, 4},  {0xB, 4},  {0xC, 4},  {0xE, 4},  {0xF, 4},
    {0x13, 5}, {0x14, 5}, {0x7, 5},  {0x8, 5},  {0x8, 6},  {0x3, 6},  {0x34, 6}, {0x35, 6},
    {0x2A, 6}, {0x2B, 6}, {0x27, 7}, {0xC, 7},  {0x8, 7},  {0x17, 7}, {0x3, 7},  {0x4, 7},
    {0x28, 7}, {0x2B, 7}, {0x13, 7}, {0x24, 7}, {0x18, 7}, {0x2, 8},  {0x3, 8},  {0x1A, 8},
    {0x1B, 8}, {0x12, 8}, {0x13, 8}, {0x14, 8}, {0x15, 8}, {0x16, 8}, {0x17, 8}, {0x28, 8},
    {0x29, 8}, {0x2A, 8}, {0x2B, 8}, {0x2C, 8}, {0x2D, 8}, {0x4, 8},  {0x5, 8},  {0xA, 8},
    {0xB, 8},  {0x52, 8}, {0x53, 8}, {0x54, 8}, {0x55, 8}, {0x24, 8}, {0x25, 8}, {0x58, 8},
    {0x59, 8}, {0x5A, 8}, {0x5B, 8}, {0x4A, 8}, {0x4B, 8}, {0x32, 8}, {0x33, 8}, {0x34, 8},
};
static const code black_term[64] = {
    {0x37, 10}, {0x2, 3},   {0x3, 2},   {0x2, 2},   {0x3, 3},   {0x3, 4},   {0x2, 4},   {0x3, 5},
    {0x5, 6},   {0x4, 6},   {0x4, 7},   {0x5, 7},   {0x7, 7},   {0x4, 8},   {0x7, 8},   {0x18, 9},
    {0x17, 10}, {0x18, 10}, {0x8, 10},  {0x67, 11}, {0x68, 11}, {0x6C, 11}, {0x37, 11}, {0x28, 11},
    {0x17, 11}, {0x18, 11}, {0xCA, 12}, {0xCB, 12}, {0xCC, 12}, {0xCD, 12}, {0x68, 12}, {0x69, 12},
    {0x6A, 12}, {0x6B, 12}, {0xD2, 12}, {0xD3, 12}, {0xD4, 12}, {0xD5, 12}, {0xD6, 12}, {0xD7, 12},
    {0x6C, 12}, {0x6D, 12}, {0xDA, 12}, {0xDB, 12}, {0x54, 12}, {0x55, 12}, {0x56, 12}, {0x57, 12},
    {0x64, 12}, {0x65, 12}, {0x52, 12}, {0x53, 12}, {0x24, 12}, {0x37, 12}, {0x38, 12}, {0x27, 12},
    {0x28, 12}, {0x58, 12}, {0x59, 12}, {0x2B, 12}, {0x2C, 12}, {0x5A, 12}, {0x66, 12}, {0x67, 12},
};
static const code white_makeup[27] = {
    {0x1B, 5}, {0x12, 5}, {0x17, 6}, {0x37, 7}, {0x36, 8}, {0x37, 8}, {0x64, 8}, {0x65, 8}, {0x68, 8},
    {0x67, 8}, {0xCC, 9}, {0xCD, 9}, {0xD2, 9}, {0xD3, 9}, {0xD4, 9}, {0xD5, 9}, {0xD6, 9}, {0xD7, 9},
    {0xD8, 9}, {0xD9, 9}, {0xDA, 9}, {0xDB, 9}, {0x98, 9}, {0x99, 9}, {0x9A, 9}, {0x18, 6}, {0x9B, 9},
};
static const code black_makeup[27] = {
    {0xF, 10},  {0xC8, 12}, {0xC9, 12}, {0x5B, 12}, {0x33, 12}, {0x34, 12}, {0x35, 12}, {0x6C, 13}, {0x6D, 13},
    {0x4A, 13}, {0x4B, 13}, {0x4C, 13}, {0x4D, 13}, {0x72, 13}, {0x73, 13}, {0x74, 13}, {0x75, 13}, {0x76, 13},
    {0x77, 13}, {0x52, 13}, {0x53, 13}, {0x54, 13}, {0x55, 13}, {0x5A, 13}, {0x5B, 13}, {0x64, 13}, {0x65, 13},
};
static const code shared_makeup[13] = {
    {0x8, 11},  {0xC, 11},  {0xD, 11},  {0x12, 12}, {0x13, 12}, {0x14, 12}, {0x15, 12},
    {0x16, 12}, {0x17, 12}, {0x1C, 12}, {0x1D, 12}, {0x1E, 12}, {0x1F, 12},
};

/* T.6's mode codes: vertical with a1 - b1 from -3 to 3, pass and horizontal. */
static const code vertical[7] = {{0x2, 7}, {0x2, 6}, {0x2, 3}, {0x1, 1}, {0x3, 3}, {0x3, 6}, {0x3, 7}};
static const code pass = {0x1, 4}, horizontal = {0x1, 3}, eol = {0x1, 12};

void db_g4_codes(uint32_t codes[DB_G4_CODES])
{
    /* The layout cl/g4.cl's G4_* offsets name. */
    static const struct { const code *c; int n; } tables[] = {
        {white_term, 64}, {black_term, 64}, {white_makeup, 27}, {black_makeup, 27}, {shared_makeup, 13},
        {vertical, 7}, {&pass, 1}, {&horizontal, 1}, {&eol, 1},
    };
    int at = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (int i = 0; i < tables[t].n; i++, at++)
            codes[at] = (uint32_t)tables[t].c[i].bits << 4 | tables[t].c[i].len;
}

/* The output: bytes written so far, and bits not yet a whole byte. */
typedef struct writer {
    uint8_t *out;
    size_t n, cap;
    uint64_t acc; /* `bits` pending bits, right-aligned */
    int bits;
    bool failed;
} writer;

/* Moves the whole bytes of the accumulator to the output. */
static void drain(writer *w)
{
    if (w->n + 8 > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 1 << 16;
        uint8_t *out = realloc(w->out, cap);
        if (!out) {
            w->failed = true;
            w->bits = 0;
            return;
        }
        w->out = out;
        w->cap = cap;
    }
    while (w->bits >= 8) {
        w->bits -= 8;
        w->out[w->n++] = (uint8_t)(w->acc >> w->bits);
    }
}

/* Appends a code; codes are at most 13 bits, so 32 pending bits leave room. */
static void put(writer *w, code c)
{
    w->acc = w->acc << c.len | c.bits;
    w->bits += c.len;
    if (w->bits >= 32)
        drain(w);
}

/* A run of `n` pixels of one colour: make-up codes of 2560 while more than
** that is left, the make-up code of the 64s, then the terminating code. */
static void put_run(writer *w, int n, bool black)
{
    const code *term = black ? black_term : white_term, *makeup = black ? black_makeup : white_makeup;
    while (n > 2560) {
        put(w, shared_makeup[12]);
        n -= 2560;
    }
    if (n >= 64) {
        int m = n / 64;
        put(w, m <= 27 ? makeup[m - 1] : shared_makeup[m - 28]);
        n -= 64 * m;
    }
    put(w, term[n]);
}

/* The first pixel at or after `x` (< width) whose colour differs from
** `black`, or `width`. Rows are MSB first with 1 for white; whatever the bits
** past the width hold, a change found there is `width`. */
static int next_change(const uint8_t *row, int width, int x, bool black)
{
    const unsigned flip = black ? 0 : 0xffu; /* the bits that differ from `black` become 1 */
    int byte = x >> 3, bytes = (width + 7) >> 3, at = width;
    unsigned v = ((row[byte] ^ flip) & 0xffu) & (0xffu >> (x & 7)); /* the bits before x masked off */
    if (v) {
        at = byte * 8 + __builtin_clz(v) - 24;
        return at < width ? at : width;
    }
    for (byte++; byte + 8 <= bytes; byte += 8) {
        uint64_t word;
        memcpy(&word, row + byte, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        word = __builtin_bswap64(word); /* the first pixel in the highest bit */
#endif
        if ((word ^= black ? 0 : ~(uint64_t)0) != 0) {
            at = byte * 8 + __builtin_clzll(word);
            return at < width ? at : width;
        }
    }
    for (; byte < bytes; byte++)
        if ((v = (row[byte] ^ flip) & 0xffu) != 0) {
            at = byte * 8 + __builtin_clz(v) - 24;
            return at < width ? at : width;
        }
    return width;
}

/* A row's changing elements in order (white to black at even indices, black
** to white at odd), then `width` twice as sentinels; returns how many before
** them. */
static int changes(const uint8_t *row, int width, int *c)
{
    int n = 0;
    bool black = false;
    for (int x = 0; (x = next_change(row, width, x, black)) < width; black = !black)
        c[n++] = x;
    c[n] = c[n + 1] = width;
    return n;
}

/* Encodes one row against the reference row's changes `ref` (n_ref of them,
** sentinels after). */
static void encode_row(writer *w, const int *cur, const int *ref, int width)
{
    int a0 = -1, i = 0, k = 0; /* a0; a1's index in cur; the first change in ref right of a0 */
    bool black = false;        /* a0's colour */
    while (a0 < width) {
        int a1 = cur[i];
        /* b1: the first change in ref right of a0 to the colour opposite a0's,
        ** that is at an even index when a0 is white, odd when black. */
        while (ref[k] <= a0 && ref[k] < width)
            k++;
        int j = k + ((k & 1) != black && ref[k] < width);
        int b1 = ref[j], b2 = b1 < width ? ref[j + 1] : width;
        if (b2 < a1) {
            put(w, pass);
            a0 = b2;
        } else if (a1 - b1 >= -3 && a1 - b1 <= 3) {
            put(w, vertical[a1 - b1 + 3]);
            a0 = a1;
            black = !black;
            i++;
        } else {
            int a2 = cur[i + 1];
            put(w, horizontal);
            put_run(w, a1 - (a0 < 0 ? 0 : a0), black);
            put_run(w, a2 - a1, !black);
            a0 = a2;
            i += 2;
        }
    }
}

uint8_t *db_g4_encode(const uint8_t *rows, size_t stride, int width, int height, size_t *size)
{
    writer w = {0};
    /* Two lists of changes (at most one a pixel) with their two sentinels. */
    int *lists = malloc(2 * ((size_t)width + 2) * sizeof *lists);
    if (!lists)
        return NULL;
    int *ref = lists, *cur = lists + width + 2;
    ref[0] = ref[1] = width; /* the white line above the first */
    for (int y = 0; y < height && !w.failed; y++) {
        changes(rows + (size_t)y * stride, width, cur);
        encode_row(&w, cur, ref, width);
        int *t = ref;
        ref = cur;
        cur = t;
    }
    free(lists);
    put(&w, eol); /* the end-of-facsimile block */
    put(&w, eol);
    if (w.bits % 8)
        put(&w, (code){0, (uint8_t)(8 - w.bits % 8)});
    drain(&w);
    if (w.failed) {
        free(w.out);
        return NULL;
    }
    *size = w.n;
    return w.out;
}
