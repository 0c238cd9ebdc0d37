/*
** test_lzw.c — docbin's LZW decoder (runtime/lzw.c) against libtiff's:
** - strips that libtiff's encoder writes for many patterns and lengths (the
**   table filling and clearing many times over, strings of thousands of
**   bytes) decode to the bytes encoded, alone and through the TIFF reader,
**   from a file and from memory, with and without horizontal differencing;
** - hand-made streams for each rule: a code that is the entry being made, the
**   code width growing at each boundary, a stream without its end code; and
**   what the decoder must leave to libtiff (an undefined code, too few codes,
**   no leading clear code, a full table without a clear code), with the
**   reader's error for a damaged strip as libtiff words it;
** - thousands of random streams, mostly well-formed: every one the decoder
**   accepts, libtiff decodes to the same bytes.
*/
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>
#include "runtime/codec.h"
#include "runtime/util.h"
#include "tests/testutil.h"

static char dir[] = "/tmp/test_lzw-XXXXXX";

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* A one-strip 8-bit gray TIFF of width x height, LZW: the pixels `data`
** encoded by libtiff, or (raw) `data` itself as the strip's compressed bytes. */
static bool write_tiff(const char *path, const uint8_t *data, size_t n, int width, int height, bool raw,
                       uint16_t predictor)
{
    TIFF *t = TIFFOpen(path, "w");
    if (!t)
        return false;
    bool ok = TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)width) && TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)height)
              && TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8) && TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1)
              && TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK)
              && TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_LZW)
              && TIFFSetField(t, TIFFTAG_PREDICTOR, predictor)
              && TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)height);
    if (ok)
        ok = raw ? TIFFWriteRawStrip(t, 0, (void *)data, (tmsize_t)n) >= 0
                 : TIFFWriteEncodedStrip(t, 0, (void *)data, (tmsize_t)n) >= 0;
    TIFFClose(t);
    return ok;
}

/* The strip's compressed bytes. */
static uint8_t *raw_strip(const char *path, size_t *n)
{
    TIFF *t = TIFFOpen(path, "r");
    uint8_t *raw = NULL;
    *n = 0;
    if (t) {
        tmsize_t size = (tmsize_t)TIFFGetStrileByteCount(t, 0);
        raw = malloc((size_t)size + 1);
        if (raw && TIFFReadRawStrip(t, 0, raw, size) == size)
            *n = (size_t)size;
        TIFFClose(t);
    }
    return raw;
}

/* libtiff's decoding of the strip into `out` (`want` bytes): whether it
** decoded all of them. */
static bool libtiff_decode(const char *path, uint8_t *out, size_t want)
{
    TIFF *t = TIFFOpen(path, "r");
    bool ok = t && TIFFReadEncodedStrip(t, 0, out, (tmsize_t)want) == (tmsize_t)want;
    if (t)
        TIFFClose(t);
    return ok;
}

/* db_lzw_decode on `n` bytes, into a buffer with exactly the scratch it may
** use, so that the sanitizers see any write outside it. */
static bool lzw(const uint8_t *in, size_t n, size_t want, uint8_t *out)
{
    uint8_t *work = malloc(DB_LZW_BEFORE + want + DB_LZW_AFTER);
    uint8_t *got = work ? db_lzw_decode(in, n, work, want) : NULL;
    if (got)
        memcpy(out, got, want);
    free(work);
    return got != NULL;
}

enum pattern { NOISE, FLAT, GRADIENT, PERIODIC, TEXT, BLOCKS, PATTERNS };
static const char *const pattern_names[PATTERNS] = {"noise", "flat", "gradient", "periodic", "text", "blocks"};

static void fill(enum pattern p, uint8_t *v, size_t n, int width, uint32_t *rng)
{
    for (size_t i = 0; i < n; i++) {
        size_t x = i % (size_t)width, y = i / (size_t)width;
        switch (p) {
        case NOISE:
            v[i] = (uint8_t)test_random(rng);
            break;
        case FLAT: /* strings as long as the table allows */
            v[i] = 200;
            break;
        case GRADIENT:
            v[i] = (uint8_t)(x / 7 + y);
            break;
        case PERIODIC:
            v[i] = (uint8_t)("docbin"[i % 6]);
            break;
        case TEXT: /* white paper, strokes of ink, a little noise */
            v[i] = (x / 3 + y / 5) % 11 == 0 ? (uint8_t)(20 + test_random(rng) % 8)
                                             : (uint8_t)(235 + test_random(rng) % 4);
            break;
        case BLOCKS: /* noise and flat runs in turn */
            v[i] = (i / 5000) % 2 ? (uint8_t)test_random(rng) : (uint8_t)(i / 10000);
            break;
        default:
            break;
        }
    }
}

static bool same_rows(const db_image *img, const uint8_t *v, int w, int h)
{
    if (!img || img->width != w || img->height != h || img->channels != 1)
        return false;
    for (int y = 0; y < h; y++)
        if (memcmp(img->data + (size_t)y * img->stride, v + (size_t)y * (size_t)w, (size_t)w))
            return false;
    return true;
}

/* libtiff-encoded strips of every pattern and many lengths. */
static void test_encoded(void)
{
    static const int widths[] = {1, 2, 3, 17, 255, 256, 1000, 4099, 300};
    static const int heights[] = {1, 1, 1, 1, 1, 3, 7, 5, 1000};
    uint32_t rng = 12345;
    char path[512];
    path_of(path, sizeof path, "encoded.tif");
    for (int p = 0; p < PATTERNS; p++)
        for (size_t s = 0; s < sizeof widths / sizeof widths[0]; s++)
            for (int differenced = 0; differenced < 2; differenced++) {
                int w = widths[s], h = heights[s];
                size_t n = (size_t)w * (size_t)h;
                uint8_t *v = malloc(n), *out = malloc(n);
                fill((enum pattern)p, v, n, w, &rng);
                uint16_t predictor = differenced ? PREDICTOR_HORIZONTAL : PREDICTOR_NONE;
                uint8_t *copy = malloc(n); /* libtiff differences the rows it is given in place */
                memcpy(copy, v, n);
                if (!write_tiff(path, copy, n, w, h, false, predictor)) {
                    CHECK(0, "%s %dx%d: libtiff cannot write the strip", pattern_names[p], w, h);
                    goto next;
                }
                size_t raw_n;
                uint8_t *raw = raw_strip(path, &raw_n);
                if (!differenced) /* the decoder alone: the strip's bytes are the pixels */
                    CHECK(raw && lzw(raw, raw_n, n, out) && !memcmp(out, v, n),
                          "%s %dx%d: the decoder does not give the encoded bytes", pattern_names[p], w, h);
                /* The reader, from the file and from memory. */
                db_image *img = db_image_read(path);
                CHECK(same_rows(img, v, w, h), "%s %dx%d%s: %s", pattern_names[p], w, h,
                      differenced ? " differenced" : "", img ? "the pixels differ" : db_error_message());
                db_image_free(img);
                size_t size;
                char *bytes = NULL;
                img = db_read_file(path, (size_t)1 << 30, &bytes, &size) == DB_OK
                          ? db_image_read_memory((const uint8_t *)bytes, size, "encoded.tif") : NULL;
                CHECK(same_rows(img, v, w, h), "%s %dx%d%s from memory: %s", pattern_names[p], w, h,
                      differenced ? " differenced" : "", img ? "the pixels differ" : db_error_message());
                db_image_free(img);
                free(bytes);
                free(raw);
            next:
                free(copy);
                free(v);
                free(out);
            }
}

/* ---- Hand-made streams ------------------------------------------------------------ */

/* Writes codes most significant bit first at the widths a decoder reads
** them: 9 bits after a clear, one more each time the next entry reaches
** 2^width - 1 (TIFF's early change), at most 12. */
struct stream {
    uint8_t bytes[1 << 16];
    size_t n;
    uint64_t acc;
    int bits;
    int width;
    unsigned next; /* the entry the next code makes; 0 before the first clear */
    bool prev;     /* a code since the clear */
};

static void put(struct stream *s, unsigned code)
{
    s->acc = s->acc << s->width | code;
    s->bits += s->width;
    while (s->bits >= 8 && s->n < sizeof s->bytes) {
        s->bytes[s->n++] = (uint8_t)(s->acc >> (s->bits - 8));
        s->bits -= 8;
    }
    if (code == 256) {
        s->width = 9;
        s->next = 258;
        s->prev = false;
        return;
    }
    if (s->prev && s->next) {
        s->next++;
        if (s->next + 1 >= (1u << s->width) && s->width < 12)
            s->width++;
    }
    s->prev = true;
}

static void finish(struct stream *s)
{
    if (s->bits > 0 && s->n < sizeof s->bytes)
        s->bytes[s->n++] = (uint8_t)(s->acc << (8 - s->bits));
    s->bits = 0;
}

static void start(struct stream *s)
{
    memset(s, 0, sizeof *s);
    s->width = 9;
}

/* The stream decoded by docbin (`ours`, whether it decoded) and by libtiff
** (`theirs`, whether libtiff decoded all of `want`). */
static void both(const struct stream *s, size_t want, uint8_t *ours, bool *ours_ok, uint8_t *theirs,
                 bool *theirs_ok)
{
    char path[512];
    path_of(path, sizeof path, "made.tif");
    *ours_ok = lzw(s->bytes, s->n, want, ours);
    *theirs_ok = write_tiff(path, s->bytes, s->n, (int)want, 1, true, PREDICTOR_NONE)
                 && libtiff_decode(path, theirs, want);
}

static void test_made(void)
{
    static struct stream s;
    uint8_t ours[8192], theirs[8192];
    bool ok, lib_ok;

    /* A code equal to the entry being made: "a", then 258 = "aa", 259 = "aaa". */
    start(&s);
    put(&s, 256), put(&s, 'a'), put(&s, 258), put(&s, 259), put(&s, 257), finish(&s);
    both(&s, 6, ours, &ok, theirs, &lib_ok);
    CHECK(ok && lib_ok && !memcmp(ours, "aaaaaa", 6) && !memcmp(theirs, "aaaaaa", 6),
          "the entry being made: docbin %d, libtiff %d", ok, lib_ok);

    /* Literals across every width boundary: the table reaches 511, 1023 and
    ** 2047 entries, each code read at the width the encoder wrote. */
    start(&s);
    put(&s, 256);
    for (int i = 0; i < 3000; i++)
        put(&s, (unsigned)(i * 7) % 256);
    put(&s, 257), finish(&s);
    both(&s, 3000, ours, &ok, theirs, &lib_ok);
    bool literal = ok;
    for (int i = 0; i < 3000 && literal; i++)
        literal = ours[i] == (uint8_t)(i * 7);
    CHECK(literal && lib_ok && !memcmp(ours, theirs, 3000), "3000 literals: docbin %d, libtiff %d", ok, lib_ok);

    /* No end code, the block full with the last code: decoded. */
    start(&s);
    put(&s, 256), put(&s, 'x'), put(&s, 'y'), put(&s, 258), finish(&s);
    both(&s, 4, ours, &ok, theirs, &lib_ok);
    CHECK(ok && !memcmp(ours, "xyxy", 4), "a stream without its end code is not decoded");

    /* Left to libtiff: */
    start(&s); /* a code past the table */
    put(&s, 256), put(&s, 'a'), put(&s, 300), put(&s, 257), finish(&s);
    CHECK(!lzw(s.bytes, s.n, 3, ours), "an undefined code is decoded");
    start(&s); /* the end code before the block is full */
    put(&s, 256), put(&s, 'a'), put(&s, 257), finish(&s);
    CHECK(!lzw(s.bytes, s.n, 2, ours), "a short stream is decoded");
    CHECK(!lzw(s.bytes, 1, 2, ours) && !lzw(s.bytes, 0, 2, ours), "a cut stream is decoded");
    start(&s); /* no leading clear */
    s.next = 258;
    put(&s, 'a'), put(&s, 'b'), put(&s, 257), finish(&s);
    CHECK(!lzw(s.bytes, s.n, 2, ours), "a stream without its leading clear code is decoded");
    start(&s); /* the table full and no clear code */
    put(&s, 256);
    for (int i = 0; i < 4000; i++)
        put(&s, (unsigned)i % 256);
    finish(&s);
    CHECK(!lzw(s.bytes, s.n, 4000, ours), "a table past 4096 entries is decoded");
    static const uint8_t old_style[] = {0x00, 0x01, 0x80, 0x40};
    CHECK(!lzw(old_style, sizeof old_style, 2, ours), "the old bit order is decoded");

    /* Through the reader, the damaged strip's error is libtiff's. */
    start(&s);
    put(&s, 256), put(&s, 'a'), put(&s, 300), put(&s, 257), finish(&s);
    char path[512];
    path_of(path, sizeof path, "damaged.tif");
    CHECK(write_tiff(path, s.bytes, s.n, 3, 1, true, PREDICTOR_NONE), "cannot write damaged.tif");
    db_image *img = db_image_read(path);
    CHECK(!img && strstr(db_error_message(), "damaged.tif") && strstr(db_error_message(), "(libtiff: "),
          "a damaged LZW strip: %s", img ? "read" : db_error_message());
    db_image_free(img);
}

/* Random streams: codes up to the next entry, now and then one past it, a
** clear, an end code or a cut; whatever the decoder accepts, libtiff must
** decode to the same bytes. */
static void test_random_streams(void)
{
    static struct stream s;
    uint8_t ours[8192], theirs[8192];
    uint32_t rng = 777;
    int accepted = 0, refused = 0;
    for (int round = 0; round < 3000; round++) {
        start(&s);
        if (test_random(&rng) % 8)
            put(&s, 256);
        else
            s.next = 258;
        int codes = 1 + (int)(test_random(&rng) % 1500);
        bool faults = round % 3 == 0; /* codes past the table, end codes */
        for (int i = 0; i < codes; i++) {
            unsigned r = test_random(&rng) % 1000, code;
            if (r == 0)
                code = 256;
            else if (r == 1 && faults)
                code = 257;
            else if (r == 2 && faults)
                code = s.next + 1 + test_random(&rng) % 16;
            else if (s.prev && r < 400)
                code = 258 + test_random(&rng) % (s.next - 257); /* an entry, or the one being made */
            else
                code = test_random(&rng) % 256;
            put(&s, code & ((1u << s.width) - 1));
        }
        finish(&s);
        size_t n = test_random(&rng) % 50 ? s.n : test_random(&rng) % (s.n + 1);
        size_t want = 1 + test_random(&rng) % (size_t)(2 * codes < 6000 ? 2 * codes : 6000);
        bool ok = lzw(s.bytes, n, want, ours), lib_ok = false;
        if (ok) {
            char path[512];
            path_of(path, sizeof path, "random.tif");
            lib_ok = write_tiff(path, s.bytes, n, (int)want, 1, true, PREDICTOR_NONE)
                     && libtiff_decode(path, theirs, want);
            CHECK(lib_ok && !memcmp(ours, theirs, want), "round %d: decoded, but libtiff %s", round,
                  lib_ok ? "decodes other bytes" : "does not decode it");
            accepted++;
        } else {
            refused++;
        }
    }
    /* Both sides must be exercised for the comparison to mean anything. */
    CHECK(accepted > 300 && refused > 300, "random streams: %d decoded, %d left to libtiff", accepted, refused);
}

static void quiet(const char *module, const char *fmt, va_list ap)
{
    (void)module, (void)fmt, (void)ap;
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    TIFFSetErrorHandler(quiet);
    TIFFSetWarningHandler(quiet);
    test_encoded();
    test_made();
    test_random_streams();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return test_result("test_lzw");
}
