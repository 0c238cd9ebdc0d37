/*
** test_g4.c — docbin's Group 4 encoder (runtime/g4.c) against libtiff's: for
** pages of many widths and patterns (single pixels, long runs that need the
** make-up codes past 2560, edges that move by a few pixels a row, noise), the
** stream is byte for byte the one libtiff's own encoder writes for the same
** rows, and libtiff decodes it back to the same pixels; and the stream coded on
** the gpu role's device (runtime/g4_device.c, cl/g4.cl) is the same, byte for
** byte (that part skips, with a note, where no OpenCL device opens).
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
#include "runtime/g4_device.h"
#include "tests/testutil.h"

enum pattern { WHITE, BLACK, NOISE, SPARSE, DENSE, STRIPES, EDGES, RUNS, PATTERNS };
static const char *const pattern_names[PATTERNS] = {"white", "black", "noise", "sparse", "dense",
                                                    "stripes", "edges", "runs"};

static void set(uint8_t *row, int x, bool black)
{
    if (black)
        row[x >> 3] |= (uint8_t)(0x80 >> (x & 7));
}

/* Packed rows, 1 for black (as libtiff takes min-is-white rows), padding bits 0. */
static uint8_t *make(enum pattern p, int w, int h, size_t stride, uint32_t *rng)
{
    uint8_t *rows = calloc((size_t)h, stride);
    for (int y = 0; y < h; y++) {
        uint8_t *row = rows + (size_t)y * stride;
        int run = 0;
        bool black = test_random(rng) & 1;
        for (int x = 0; x < w; x++) {
            switch (p) {
            case WHITE:
                break;
            case BLACK:
                set(row, x, true);
                break;
            case NOISE:
                set(row, x, test_random(rng) & 1);
                break;
            case SPARSE:
                set(row, x, test_random(rng) % 50 == 0);
                break;
            case DENSE:
                set(row, x, test_random(rng) % 50 != 0);
                break;
            case STRIPES: /* vertical stripes: every row as the one above */
                set(row, x, (x / 3) % 2);
                break;
            case EDGES: /* an edge per 40 columns, moved by -4..4 each row */
                set(row, x, ((x + y * ((int)(x / 40) % 9 - 4)) / 40) % 2 != 0);
                break;
            case RUNS: /* runs of 1 to the width's length, colours alternating */
                if (run == 0) {
                    black = !black;
                    run = 1 + (int)(test_random(rng) % (unsigned)(test_random(rng) % 4 ? 80 : w));
                }
                set(row, x, black);
                run--;
                break;
            default:
                break;
            }
        }
    }
    return rows;
}

/* Writes the rows through libtiff (its own encoder, or ours as a raw strip) to
** a temporary file; returns its name (free it), or NULL. */
static char *write_tiff(const uint8_t *rows, size_t stride, int w, int h, const uint8_t *raw, size_t raw_n)
{
    char *name = strdup("/tmp/test_g4_XXXXXX");
    int fd = mkstemp(name);
    if (fd < 0) {
        free(name);
        return NULL;
    }
    close(fd);
    TIFF *t = TIFFOpen(name, "w");
    bool ok = t && TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w) && TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h)
              && TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 1) && TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1)
              && TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISWHITE)
              && TIFFSetField(t, TIFFTAG_FILLORDER, FILLORDER_MSB2LSB)
              && TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_CCITTFAX4)
              && TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)h);
    if (ok && raw)
        ok = TIFFWriteRawStrip(t, 0, (void *)raw, (tmsize_t)raw_n) >= 0;
    for (int y = 0; ok && !raw && y < h; y++)
        ok = TIFFWriteScanline(t, (void *)(rows + (size_t)y * stride), (uint32_t)y, 0) >= 0;
    if (t)
        TIFFClose(t);
    if (!ok) {
        unlink(name);
        free(name);
        return NULL;
    }
    return name;
}

/* The first strip's compressed bytes, as stored. */
static uint8_t *read_raw(const char *name, size_t *n)
{
    TIFF *t = TIFFOpen(name, "r");
    uint64_t *counts = NULL;
    uint8_t *raw = NULL;
    if (t && TIFFGetField(t, TIFFTAG_STRIPBYTECOUNTS, &counts) && counts && (raw = malloc(counts[0] + 1))) {
        tmsize_t got = TIFFReadRawStrip(t, 0, raw, (tmsize_t)counts[0]);
        *n = got < 0 ? 0 : (size_t)got;
    }
    if (t)
        TIFFClose(t);
    return raw;
}

/* Whether libtiff decodes the file to `rows`. */
static bool decodes_to(const char *name, const uint8_t *rows, size_t stride, int w, int h)
{
    TIFF *t = TIFFOpen(name, "r");
    size_t bytes = ((size_t)w + 7) / 8;
    uint8_t *line = malloc(bytes + 8);
    bool ok = t && line;
    for (int y = 0; ok && y < h; y++) {
        ok = TIFFReadScanline(t, line, (uint32_t)y, 0) >= 0;
        const uint8_t *want = rows + (size_t)y * stride;
        for (int x = 0; ok && x < w; x++)
            ok = ((line[x >> 3] >> (7 - (x & 7))) & 1) == ((want[x >> 3] >> (7 - (x & 7))) & 1);
    }
    free(line);
    if (t)
        TIFFClose(t);
    return ok;
}

static void quiet(const char *module, const char *fmt, va_list ap)
{
    (void)module, (void)fmt, (void)ap;
}

/* The stream the device codes for `white` (1 for white), or NULL. */
static uint8_t *on_device(db_device *d, const uint8_t *white, size_t stride, int w, int h, size_t *n)
{
    cl_int err;
    cl_mem rows = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)h * stride,
                                 (void *)white, &err);
    uint8_t *out = NULL;
    if (err == CL_SUCCESS && db_g4_encode_device(d, rows, w, h, stride, NULL, NULL, "test", &out, n) != DB_OK)
        fprintf(stderr, "%s\n", db_error_message());
    if (rows)
        clReleaseMemObject(rows);
    return out;
}

int main(void)
{
    TIFFSetWarningHandler(quiet);
    db_context *ctx = NULL;
    db_device *dev = NULL;
    if (db_context_open(NULL, NULL, &ctx) == DB_OK)
        dev = db_context_device(ctx, DB_ROLE_GPU);
    if (!dev)
        printf("note: no gpu role device (%s): the device's coding is not checked\n", db_error_message());
    int device_cases = 0;
    static const int widths[] = {1, 2, 7, 8, 9, 31, 63, 64, 65, 100, 127, 1000, 2516, 2561, 2600, 5200, 6000};
    uint32_t rng = 7;
    int cases = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (int p = 0; p < PATTERNS; p++) {
            int w = widths[wi], h = 1 + (int)(test_random(&rng) % 40);
            size_t stride = ((size_t)w + 7) / 8 + (test_random(&rng) % 3); /* rows may be apart */
            uint8_t *rows = make((enum pattern)p, w, h, stride, &rng);
            size_t n = 0, ref_n = 0;
            uint8_t *white = malloc((size_t)h * stride); /* a db_bitmap's rows: 1 for white */
            for (size_t i = 0; i < (size_t)h * stride; i++)
                white[i] = (uint8_t)~rows[i];
            uint8_t *ours = db_g4_encode(white, stride, w, h, &n);
            if (dev && ours) {
                size_t dn = 0;
                uint8_t *coded = on_device(dev, white, stride, w, h, &dn);
                CHECK(coded && dn == n && !memcmp(coded, ours, n), "%s page %dx%d: the device codes %zu bytes%s, "
                      "the host %zu", pattern_names[p], w, h, dn, coded && dn == n ? " (other bytes)" : "", n);
                free(coded);
                device_cases++;
            }
            free(white);
            char *theirs = write_tiff(rows, stride, w, h, NULL, 0), *mine = ours ? write_tiff(NULL, 0, w, h, ours, n) : NULL;
            uint8_t *ref = theirs ? read_raw(theirs, &ref_n) : NULL;
            CHECK(ours && ref, "%s page %dx%d: an encoder failed", pattern_names[p], w, h);
            if (ours && ref) {
                CHECK(n == ref_n && !memcmp(ours, ref, n), "%s page %dx%d: %zu bytes, libtiff writes %zu%s",
                      pattern_names[p], w, h, n, ref_n, n == ref_n ? " (other bytes)" : "");
                CHECK(mine && decodes_to(mine, rows, stride, w, h), "%s page %dx%d: libtiff decodes other pixels",
                      pattern_names[p], w, h);
            }
            if (theirs)
                unlink(theirs);
            if (mine)
                unlink(mine);
            free(theirs);
            free(mine);
            free(ref);
            free(ours);
            free(rows);
            cases++;
        }
    printf("ok   %d pages of %zu widths and %d patterns: libtiff's stream, byte for byte, and its pixels back\n", cases,
           sizeof widths / sizeof widths[0], PATTERNS);
    if (dev)
        printf("ok   %d pages coded on %s: the host's stream, byte for byte\n", device_cases, dev->info.name);
    db_context_close(ctx);
    return test_result("g4");
}
