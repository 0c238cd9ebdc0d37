/*
** lzw.c — TIFF LZW decoding, the fast path of LZW strips and tiles (tiff.c).
**
** Every string in the LZW dictionary is a run of bytes already written: a new
** entry is the previous code's output followed by the first byte of the next
** one, which is exactly where it lies in the output. So an entry is a
** position and a length, and decoding a code is a copy from earlier in the
** output, done 16 bytes at a time into slack past the end (no per-byte loop,
** no length branch for the short strings that dominate a scanned page). The 256
** single-byte strings are a prefix of 0..255 before the output.
**
** A scanned gray page is millions of codes of one or two bytes each, so the
** time is the instructions spent per code. Three things keep them few:
** - the code width is a constant within `run`, instantiated once per width,
**   and one 64-bit load yields 57 / width codes at constant shifts;
** - the entry a code makes (the previous string plus one byte) is written
**   before the next code is read, so the code that is the entry being made
**   is an ordinary copy with its last byte fixed, not a separate case;
** - the end of the block is checked once per load, not once per code: the
**   codes that follow the last one within the same load write into the slack
**   (DB_LZW_AFTER) and change nothing before the end.
** This decodes a scanned page about 3.5 times as fast as libtiff's table walk.
**
** It decodes only a well-formed stream that fills the block, and declines
** everything else (a code past the table, a stream that ends early, a table
** that overflows, the pre-1991 bit order): libtiff then decodes the block and
** reports what is wrong, so a damaged file gives the messages it always did.
*/
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "runtime/codec.h"

enum { MAX_CODES = 4096, CLEAR = 256, END = 257, FIRST_FREE = 258 };

/* How a run of codes ended. */
enum step { GO_ON, CLEARED, GROWN, FULL, BAD, NEAR_END };

/* The code tables and output of one block. Entry `next` holds the previous
** string plus one byte, the entry the next code makes. */
struct table {
    uint8_t *base; /* byte i of the 256 before the output is i */
    size_t at;     /* where the next string goes, from base */
    size_t stop;   /* the end of the block, from base */
    uint32_t next;
    uint32_t pos[MAX_CODES + 1], len[MAX_CODES + 1];
};

/* Copies the `n` bytes at `src` to `dst` and up to 15 bytes beyond them;
** `src` lies before `dst`, overlapping it only when `n` is at most 16. */
static inline __attribute__((always_inline)) void copy16(uint8_t *dst, const uint8_t *src, uint32_t n)
{
    uint8_t chunk[16];
    memcpy(chunk, src, 16);
    memcpy(dst, chunk, 16);
    if (__builtin_expect(n > 16, 0))
        for (uint32_t k = 16; k < n; k += 16) {
            memcpy(chunk, src + k, 16);
            memcpy(dst + k, chunk, 16);
        }
}

/* Decodes one code other than the clear code. `grow` is the entry count at
** which the width grows. The table's fields come and go through pointers so
** that, inlined, they stay in registers (a byte store through `base` could
** alias a field of the struct). */
static inline __attribute__((always_inline)) enum step put(uint32_t code, uint8_t *base, size_t *at, size_t stop,
                                                           uint32_t *next, uint32_t grow, uint32_t *pos, uint32_t *len)
{
    if (code > *next || code == END) /* the end code is in order once the block is full */
        return *at >= stop ? FULL : BAD;
    uint32_t p = pos[code], n = len[code];
    uint8_t *o = base + *at;
    copy16(o, base + p, n);
    if (code == *next) /* the entry being made: it ends with its own first byte */
        o[n - 1] = o[0];
    uint32_t made = *next + 1;
    /* An opaque step: otherwise GCC keeps each unrolled code's table slots as
    ** pointers of their own and spills them. */
    __asm__("" : "+r"(made));
    *next = made;
    pos[made] = (uint32_t)*at;
    len[made] = n + 1;
    *at += n;
    return made >= grow ? GROWN : GO_ON;
}

/* Codes of width W from where `bit` points, while the width stays W, the
** block is not full and 8 bytes of input are left at each load. */
static inline __attribute__((always_inline)) enum step run(const uint32_t W, const uint8_t *in, size_t fast_end,
                                                         size_t *bit, struct table *t)
{
    const uint32_t per = 57 / W, grow = W < 12 ? (1u << W) - 1 : MAX_CODES;
    uint8_t *base = t->base;
    size_t at = t->at, stop = t->stop, b = *bit;
    uint32_t next = t->next;
    enum step s = GO_ON;
    while (s == GO_ON) {
        if (b >= fast_end) {
            s = NEAR_END;
            break;
        }
        uint64_t w;
        memcpy(&w, in + (b >> 3), 8);
        w = __builtin_bswap64(w) << (b & 7);
#pragma GCC unroll 8
        for (uint32_t k = 1; k <= per; k++) {
            uint32_t code = (uint32_t)(w >> (64 - W * k)) & ((1u << W) - 1);
            s = code == CLEAR ? CLEARED : put(code, base, &at, stop, &next, grow, t->pos, t->len);
            if (s != GO_ON) {
                b += W * k;
                break;
            }
        }
        if (s == GO_ON) {
            b += W * per;
            if (at >= stop)
                s = FULL;
        }
    }
    t->at = at;
    t->next = next;
    *bit = b;
    return s;
}

/* A code read with every check: false past the end of the input. */
static bool take(const uint8_t *in, size_t n, size_t *bit, uint32_t width, uint32_t *code)
{
    if (*bit + width > (uint64_t)n * 8)
        return false;
    uint64_t w = 0;
    for (size_t k = 0, i = *bit >> 3; k < 8; k++)
        w = w << 8 | (i + k < n ? in[i + k] : 0);
    *code = (uint32_t)((w << (*bit & 7)) >> (64 - width));
    *bit += width;
    return true;
}

uint8_t *db_lzw_decode(const uint8_t *in, size_t n, uint8_t *work, size_t want)
{
    /* Codes written with the old, least-significant-bit-first order begin
    ** with a 0 byte followed by one with its low bit set (libtiff's test). */
    if (n >= 2 && in[0] == 0 && (in[1] & 1))
        return NULL;
    struct table t = {.base = work, .at = DB_LZW_BEFORE, .stop = DB_LZW_BEFORE + want};
    for (uint32_t i = 0; i < 256; i++) {
        work[i] = (uint8_t)i;
        t.pos[i] = i;
        t.len[i] = 1;
    }
    /* Loads of 8 bytes stay inside the input while bit < fast_end. */
    const size_t fast_end = n >= 8 ? (n - 8) * 8 + 1 : 0;
    size_t bit = 0;
    uint32_t code, width = 9;
    /* Every encoder starts with the clear code: a stream without it is
    ** libtiff's to judge. */
    if (t.at < t.stop && (!take(in, n, &bit, 9, &code) || code != CLEAR))
        return NULL;
    while (t.at < t.stop) { /* after a clear code: a literal, which makes no entry */
        width = 9;
        do
            if (!take(in, n, &bit, width, &code))
                return NULL;
        while (code == CLEAR);
        if (code >= CLEAR)
            return NULL;
        work[t.at] = (uint8_t)code;
        t.next = FIRST_FREE;
        t.pos[t.next] = (uint32_t)t.at;
        t.len[t.next] = 2;
        enum step s = ++t.at >= t.stop ? FULL : GO_ON;
        while (s == GO_ON) {
            switch (width) {
            case 9: s = run(9, in, fast_end, &bit, &t); break;
            case 10: s = run(10, in, fast_end, &bit, &t); break;
            case 11: s = run(11, in, fast_end, &bit, &t); break;
            default: s = run(12, in, fast_end, &bit, &t); break;
            }
            while (s == NEAR_END) { /* the input's last bytes, a code at a time */
                if (!take(in, n, &bit, width, &code))
                    return NULL;
                uint32_t grow = width < 12 ? (1u << width) - 1 : MAX_CODES;
                s = code == CLEAR ? CLEARED : put(code, t.base, &t.at, t.stop, &t.next, grow, t.pos, t.len);
                if (s == GO_ON)
                    s = t.at >= t.stop ? FULL : NEAR_END;
            }
            if (s == GROWN) {
                if (width == 12)
                    return NULL; /* the table is full and no clear code came */
                width++;
                s = t.at >= t.stop ? FULL : GO_ON;
            }
        }
        if (s == BAD)
            return NULL;
    }
    return work + DB_LZW_BEFORE;
}
