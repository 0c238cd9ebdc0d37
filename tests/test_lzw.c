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
#include "runtime/lzw_device.h"
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

/* ---- The device's decoder ----------------------------------------------------------- */

static db_device *gpu; /* the gpu role's device, bound to decode LZW strips; NULL: not checked */

/* Decodes `count` strips on the device (strip i: n[i] bytes of in[i], want[i]
** bytes out, laid one after the other): each strip's verdict in ok[i] and its
** bytes at out + its offset, the sum of the wants before it. With `row_bytes`,
** differencing of 1-byte samples is undone. False when the call failed. */
static bool device_decode(int count, const uint8_t *const *in, const size_t *n, const size_t *want, size_t row_bytes,
                          uint8_t *out, bool *ok)
{
    size_t *tab = calloc(4 * (size_t)count, sizeof *tab), bytes = 0, out_bytes = 0;
    size_t *in_off = tab, *ns = tab + count, *out_off = ns + count, *wants = out_off + count;
    for (int i = 0; i < count; i++) {
        in_off[i] = bytes;
        ns[i] = n[i];
        out_off[i] = out_bytes;
        wants[i] = want[i];
        bytes += (n[i] + 4 + 3) / 4 * 4;
        out_bytes += want[i];
    }
    uint8_t *all = calloc(bytes ? bytes : 1, 1);
    for (int i = 0; i < count; i++)
        memcpy(all + in_off[i], in[i], n[i]);
    db_lzw_strips job = {.count = count, .in = all, .in_bytes = bytes, .in_off = in_off, .n = ns, .out_off = out_off,
                         .want = wants, .out_bytes = out_bytes, .row_bytes = row_bytes, .stride = 1};
    bool done = db_lzw_device_decode(&job, out, ok);
    free(all);
    free(tab);
    return done;
}

/* One strip on the device: whether it decoded it. */
static bool device_one(const uint8_t *in, size_t n, size_t want, size_t row_bytes, uint8_t *out)
{
    bool ok = false;
    return device_decode(1, &in, &n, &want, row_bytes, out, &ok) && ok;
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
                if (gpu && raw) { /* every strip libtiff writes decodes on the device, differences undone there */
                    memset(out, 0, n);
                    CHECK(device_one(raw, raw_n, n, differenced ? (size_t)w : 0, out) && !memcmp(out, v, n),
                          "%s %dx%d%s: the device does not give the encoded bytes", pattern_names[p], w, h,
                          differenced ? " differenced" : "");
                }
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

/* The device's verdict on `n` bytes of a stream is the host decoder's, and
** so are the bytes it decodes. */
static void device_agrees(const uint8_t *in, size_t n, size_t want, const char *what)
{
    if (!gpu)
        return;
    uint8_t *host = malloc(want), *dev = malloc(want);
    bool host_ok = lzw(in, n, want, host), dev_ok = device_one(in, n, want, 0, dev);
    CHECK(dev_ok == host_ok && (!dev_ok || !memcmp(dev, host, want)), "%s: the device %s, the host %s", what,
          dev_ok ? (host_ok ? "decodes other bytes" : "decodes it") : "does not decode it",
          host_ok ? "does" : "does not");
    free(host);
    free(dev);
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
    device_agrees(s.bytes, s.n, 6, "the entry being made");
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
    device_agrees(s.bytes, s.n, 3000, "3000 literals");
    bool literal = ok;
    for (int i = 0; i < 3000 && literal; i++)
        literal = ours[i] == (uint8_t)(i * 7);
    CHECK(literal && lib_ok && !memcmp(ours, theirs, 3000), "3000 literals: docbin %d, libtiff %d", ok, lib_ok);

    /* No end code, the block full with the last code: decoded. */
    start(&s);
    put(&s, 256), put(&s, 'x'), put(&s, 'y'), put(&s, 258), finish(&s);
    both(&s, 4, ours, &ok, theirs, &lib_ok);
    device_agrees(s.bytes, s.n, 4, "no end code");
    CHECK(ok && !memcmp(ours, "xyxy", 4), "a stream without its end code is not decoded");

    /* Left to libtiff: */
    start(&s); /* a code past the table */
    put(&s, 256), put(&s, 'a'), put(&s, 300), put(&s, 257), finish(&s);
    CHECK(!lzw(s.bytes, s.n, 3, ours), "an undefined code is decoded");
    device_agrees(s.bytes, s.n, 3, "an undefined code");
    start(&s); /* the end code before the block is full */
    put(&s, 256), put(&s, 'a'), put(&s, 257), finish(&s);
    CHECK(!lzw(s.bytes, s.n, 2, ours), "a short stream is decoded");
    CHECK(!lzw(s.bytes, 1, 2, ours) && !lzw(s.bytes, 0, 2, ours), "a cut stream is decoded");
    device_agrees(s.bytes, s.n, 2, "the end code early");
    device_agrees(s.bytes, 1, 2, "a cut stream");
    device_agrees(s.bytes, 0, 2, "no stream");
    start(&s); /* no leading clear */
    s.next = 258;
    put(&s, 'a'), put(&s, 'b'), put(&s, 257), finish(&s);
    CHECK(!lzw(s.bytes, s.n, 2, ours), "a stream without its leading clear code is decoded");
    device_agrees(s.bytes, s.n, 2, "no leading clear code");
    start(&s); /* the table full and no clear code */
    put(&s, 256);
    for (int i = 0; i < 4000; i++)
        put(&s, (unsigned)i % 256);
    finish(&s);
    CHECK(!lzw(s.bytes, s.n, 4000, ours), "a table past 4096 entries is decoded");
    device_agrees(s.bytes, s.n, 4000, "a full table");
    device_agrees(s.bytes, s.n, 3838, "a full table, the block filled before it overflows");
    static const uint8_t old_style[] = {0x00, 0x01, 0x80, 0x40};
    CHECK(!lzw(old_style, sizeof old_style, 2, ours), "the old bit order is decoded");
    device_agrees(old_style, sizeof old_style, 2, "the old bit order");

    /* More segments than the device keeps slots for (one for every 64 bytes
    ** of a strip, and 4): the device leaves the strip to the host, and the
    ** reader still gives its pixels. */
    start(&s);
    put(&s, 256);
    for (int i = 0; i < 200; i++)
        put(&s, 'z'), put(&s, 256);
    put(&s, 257), finish(&s);
    CHECK(lzw(s.bytes, s.n, 200, ours) && ours[0] == 'z' && ours[199] == 'z', "200 clear codes are not decoded");
    if (gpu)
        CHECK(!device_one(s.bytes, s.n, 200, 0, ours), "200 segments in %zu bytes decode on the device", s.n);
    char path[512];
    path_of(path, sizeof path, "clears.tif");
    CHECK(write_tiff(path, s.bytes, s.n, 200, 1, true, PREDICTOR_NONE), "cannot write clears.tif");
    db_image *img = db_image_read(path);
    CHECK(img && img->width == 200 && img->data[0] == 'z' && img->data[199] == 'z', "clears.tif: %s",
          img ? "other pixels" : db_error_message());
    db_image_free(img);

    /* Through the reader, the damaged strip's error is libtiff's. */
    start(&s);
    put(&s, 256), put(&s, 'a'), put(&s, 300), put(&s, 257), finish(&s);
    path_of(path, sizeof path, "damaged.tif");
    CHECK(write_tiff(path, s.bytes, s.n, 3, 1, true, PREDICTOR_NONE), "cannot write damaged.tif");
    img = db_image_read(path);
    CHECK(!img && strstr(db_error_message(), "damaged.tif") && strstr(db_error_message(), "(libtiff: "),
          "a damaged LZW strip: %s", img ? "read" : db_error_message());
    db_image_free(img);
}

/* Random streams of test_random_streams as the strips of one device call:
** each decoded where the host decoded it, to the same bytes. */
static uint8_t batch_in[40][1 << 16], batch_out[40 * 6000];
static size_t batch_n[40], batch_want[40];
static bool batch_host[40];

static void device_batch(uint8_t (*in)[1 << 16], const size_t *n, const size_t *want, const bool *host,
                         const uint8_t *host_out)
{
    static uint8_t out[40 * 6000];
    const uint8_t *ins[40];
    bool ok[40];
    for (int i = 0; i < 40; i++)
        ins[i] = in[i];
    if (!device_decode(40, ins, n, want, 0, out, ok)) {
        CHECK(0, "random streams: the device call failed");
        return;
    }
    size_t at = 0;
    for (int i = 0; i < 40; i++) {
        CHECK(ok[i] == host[i] && (!ok[i] || !memcmp(out + at, host_out + i * 6000, want[i])),
              "random stream %d of a call: the device %s, the host %s", i,
              ok[i] ? (host[i] ? "decodes other bytes" : "decodes it") : "does not decode it",
              host[i] ? "does" : "does not");
        at += want[i];
    }
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
        if (gpu) { /* 40 streams a call, as strips of one page */
            int k = round % 40;
            memcpy(batch_in[k], s.bytes, n);
            batch_n[k] = n;
            batch_want[k] = want;
            batch_host[k] = ok;
            memcpy(batch_out + k * 6000, ours, want);
            if (k == 39)
                device_batch(batch_in, batch_n, batch_want, batch_host, batch_out);
        }
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
    /* Again with the gpu role's device decoding (the reader's strips too). */
    db_context *ctx = NULL;
    db_device *dev = NULL;
    setenv("DOCBIN_LZW", "device", 1);
    if (db_context_open(NULL, NULL, &ctx) == DB_OK && (dev = db_context_device(ctx, DB_ROLE_GPU)) &&
        db_lzw_device_bind(dev) == DB_OK && db_lzw_offload) {
        gpu = dev;
        test_encoded();
        test_made();
        test_random_streams();
        gpu = NULL;
    } else {
        printf("note: no gpu role device (%s): the device's decoder is not checked\n", db_error_message());
    }
    db_context_close(ctx);
    CHECK(!db_lzw_offload, "the decoder stays bound after its device closed");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return test_result("test_lzw");
}
