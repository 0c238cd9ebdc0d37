/*
** test_formats.c — the TIFF, JPEG and JPEG 2000 readers and the TIFF writer,
** against fixtures this test makes with the libraries themselves:
**
**  - every TIFF layout docbin reads (bit depths, photometric interpretations,
**    compressions, strips and tiles, planes, alpha, byte orders), written by
**    libtiff, gives exactly the pixels of the same samples written as a PNG
**    by libpng, and the resolution it declares;
**  - a multi-page TIFF gives its pages in order, less its thumbnails, and a
**    500-page one is read and rewritten page by page in bounded memory;
**  - what docbin writes as TIFF reads back through libtiff's own scanline
**    interface with the tags and bits that TIFF readers expect;
**  - damaged and hostile files (truncated, looping IFD chains, offsets past
**    the end, huge declared sizes, CMYK, garbage) fail with one message that
**    names the file and the page, a DB_ERR_* status, and nothing on stderr.
**
** Pillow's view of the same formats (lossy JPEG and JPEG 2000 above all) is
** in test_formats.py. TEST_FORMATS_VERBOSE=1 prints the message of every
** refusal.
*/
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>
#include "runtime/image.h"

static int checks, failures;

/* stderr while the bad-file tests send fd 2 elsewhere (capture_stderr). */
static int report_fd = 2;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdprintf(report_fd, fmt, ap);
    va_end(ap);
}

static int check(int ok, const char *what, const char *context, int line)
{
    checks++;
    if (!ok) {
        failures++;
        say("test_formats.c:%d: failed%s%s: %s (last error: \"%s\")\n", line, context ? " for " : "",
            context ? context : "", what, db_error_message());
    }
    return ok;
}

#define CHECK(cond) check((cond) != 0, #cond, NULL, __LINE__)
#define CHECK_FOR(name, cond) check((cond) != 0, #cond, (name), __LINE__)

static char temp_dir[] = "/tmp/test_formats-XXXXXX";

static const char *path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", temp_dir, name);
    return out;
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)n + 1);
    if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return bytes;
}

static int spit(const char *path, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(bytes, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Whether two images have the same shape and pixels; prints the first difference. */
static int same_pixels(const db_image *a, const db_image *b)
{
    if (!a || !b)
        return 0;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels) {
        say("  %dx%dx%d against %dx%dx%d\n", a->width, a->height, a->channels, b->width, b->height,
                b->channels);
        return 0;
    }
    for (int y = 0; y < a->height; y++)
        for (int i = 0; i < a->width * a->channels; i++) {
            uint8_t p = a->data[(size_t)y * a->stride + (size_t)i], q = b->data[(size_t)y * b->stride + (size_t)i];
            if (p != q) {
                say("  row %d byte %d: %u against %u\n", y, i, p, q);
                return 0;
            }
        }
    return 1;
}

/* ---- Samples ------------------------------------------------------------------- */

enum { W = 37, H = 23 };

/* A sample of channel c at (x, y) in 0..maxval: noise, so that every bit of
** every sample position matters. */
static unsigned sample(int x, int y, int c, unsigned maxval)
{
    uint32_t h = (uint32_t)x * 73856093u ^ (uint32_t)y * 19349663u ^ (uint32_t)(c + 1) * 83492791u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return h % (maxval + 1);
}

/* Packs n samples of `bits` bits into `out`, most significant first (16-bit
** in host order for libtiff, big-endian for PNG). */
static void pack(const unsigned *v, size_t n, int bits, bool big_endian_16, uint8_t *out)
{
    size_t bytes = (n * (size_t)bits + 7) / 8;
    memset(out, 0, bytes);
    for (size_t i = 0; i < n; i++) {
        if (bits == 16) {
            uint16_t s = (uint16_t)v[i];
            if (big_endian_16) {
                out[2 * i] = (uint8_t)(s >> 8);
                out[2 * i + 1] = (uint8_t)s;
            } else {
                memcpy(out + 2 * i, &s, 2);
            }
        } else if (bits == 8) {
            out[i] = (uint8_t)v[i];
        } else {
            size_t bit = i * (size_t)bits;
            out[bit / 8] |= (uint8_t)(v[i] << (8 - bits - (int)(bit % 8)));
        }
    }
}

/* ---- Fixtures: a TIFF by libtiff, its twin PNG by libpng --------------------------- */

struct tiff_case {
    const char *name;
    uint16_t photometric;
    uint16_t bps;
    uint16_t compression;
    uint16_t extra;        /* 0, EXTRASAMPLE_UNASSALPHA or EXTRASAMPLE_ASSOCALPHA */
    uint16_t planar;       /* 0 means contiguous */
    uint16_t predictor;    /* 0 means none */
    uint32_t rows;         /* rows per strip; 0 with `tile` */
    uint32_t tile;         /* tile side, 0 for strips */
    bool big_endian;
    bool cmap_8bit;        /* palette entries written as 8-bit values */
    uint32_t g3_options;
};

static int color_samples(const struct tiff_case *t)
{
    return t->photometric == PHOTOMETRIC_RGB ? 3 : 1;
}

/* The sample `c` of pixel (x, y) as the TIFF stores it (associated alpha
** premultiplies the colour samples by the alpha). */
static unsigned tiff_sample(const struct tiff_case *t, int x, int y, int c)
{
    unsigned maxval = (1u << t->bps) - 1;
    int color = color_samples(t);
    unsigned v = sample(x, y, c, maxval);
    if (t->extra == EXTRASAMPLE_ASSOCALPHA && c < color) {
        unsigned a = sample(x, y, color, maxval);
        v = (v * a + maxval / 2) / maxval;
    }
    return v;
}

/* The colour of palette entry i, 8 bits. */
static uint8_t palette_color(unsigned i, int c)
{
    return (uint8_t)(i * 37u + (unsigned)c * 101u + (i * i) % 7u);
}

static int write_tiff_case(const struct tiff_case *t, const char *path)
{
    /* libtiff warns that the old Deflate code is old: this test means it. */
    TIFFErrorHandler warnings = TIFFSetWarningHandler(NULL);
    TIFF *tif = TIFFOpen(path, t->big_endian ? "wb" : "wl");
    TIFFSetWarningHandler(warnings);
    if (!tif)
        return 0;
    int color = color_samples(t);
    int spp = color + (t->extra ? 1 : 0);
    bool separate = t->planar == PLANARCONFIG_SEPARATE;
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)W);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)H);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, t->bps);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)spp);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, t->photometric);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, t->compression);
    if (t->predictor)
        TIFFSetField(tif, TIFFTAG_PREDICTOR, t->predictor);
    if (t->g3_options)
        TIFFSetField(tif, TIFFTAG_GROUP3OPTIONS, t->g3_options);
    if (t->extra) {
        uint16_t kind = t->extra;
        TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &kind);
    }
    TIFFSetField(tif, TIFFTAG_XRESOLUTION, 300.0f);
    TIFFSetField(tif, TIFFTAG_YRESOLUTION, 150.0f);
    TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
    uint16_t map[3][256];
    if (t->photometric == PHOTOMETRIC_PALETTE) {
        for (unsigned i = 0; i < 256; i++)
            for (int c = 0; c < 3; c++)
                map[c][i] = (uint16_t)(palette_color(i, c) * (t->cmap_8bit ? 1u : 257u));
        TIFFSetField(tif, TIFFTAG_COLORMAP, map[0], map[1], map[2]);
    }
    uint32_t bw = t->tile ? t->tile : W, bh = t->tile ? t->tile : t->rows;
    if (t->tile) {
        TIFFSetField(tif, TIFFTAG_TILEWIDTH, bw);
        TIFFSetField(tif, TIFFTAG_TILELENGTH, bh);
    } else {
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, bh);
    }
    int planes = separate ? spp : 1, per_pixel = separate ? 1 : spp;
    size_t row_bytes = ((size_t)bw * (size_t)per_pixel * t->bps + 7) / 8;
    uint8_t *block = calloc(row_bytes, bh);
    unsigned *v = malloc(sizeof *v * bw * (size_t)per_pixel);
    int ok = block && v;
    uint32_t index = 0;
    for (int p = 0; ok && p < planes; p++)
        for (uint32_t by = 0; ok && by < H; by += bh)
            for (uint32_t bx = 0; ok && bx < (t->tile ? (uint32_t)W : 1u); bx += bw) {
                memset(block, 0, row_bytes * bh);
                uint32_t rows = t->tile ? bh : (H - by < bh ? H - by : bh);
                for (uint32_t r = 0; r < rows; r++) {
                    for (uint32_t i = 0; i < bw; i++)
                        for (int s = 0; s < per_pixel; s++) {
                            int x = (int)(bx + i), y = (int)(by + r);
                            v[i * (size_t)per_pixel + (size_t)s] =
                                x < W && y < H ? tiff_sample(t, x, y, separate ? p : s) : 0;
                        }
                    pack(v, (size_t)bw * (size_t)per_pixel, t->bps, false, block + r * row_bytes);
                }
                tmsize_t n = (tmsize_t)(row_bytes * rows);
                if (t->tile)
                    ok = TIFFWriteEncodedTile(tif, TIFFComputeTile(tif, bx, by, 0, (uint16_t)p), block, n) >= 0;
                else
                    ok = TIFFWriteEncodedStrip(tif, index, block, n) >= 0;
                index++;
            }
    free(block);
    free(v);
    warnings = TIFFSetWarningHandler(NULL);
    ok = ok && TIFFWriteDirectory(tif);
    TIFFClose(tif);
    TIFFSetWarningHandler(warnings);
    return ok;
}

/* The same picture as a PNG: samples unchanged except for min-is-white
** (inverted, which PNG cannot declare) and associated alpha (PNG's is not). */
static int write_png_twin(const struct tiff_case *t, const char *path)
{
    /* volatile: used after png_write_* may have longjmp'd */
    volatile int color = color_samples(t);
    volatile int spp = color + (t->extra ? 1 : 0);
    volatile unsigned maxval = (1u << t->bps) - 1;
    volatile int type = t->photometric == PHOTOMETRIC_PALETTE ? PNG_COLOR_TYPE_PALETTE
               : color == 3                          ? (t->extra ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB)
                                                     : (t->extra ? PNG_COLOR_TYPE_GRAY_ALPHA : PNG_COLOR_TYPE_GRAY);
    FILE *f = fopen(path, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned *v = malloc(sizeof *v * W * 4);
    uint8_t *row = malloc(W * 8);
    if (!f || !info || !v || !row || setjmp(png_jmpbuf(png))) {
        if (f)
            fclose(f);
        png_destroy_write_struct(&png, &info);
        free(v);
        free(row);
        return 0;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, W, H, t->bps, type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_color palette[256];
    if (type == PNG_COLOR_TYPE_PALETTE) {
        for (unsigned i = 0; i <= maxval; i++) {
            palette[i].red = palette_color(i, 0);
            palette[i].green = palette_color(i, 1);
            palette[i].blue = palette_color(i, 2);
        }
        png_set_PLTE(png, info, palette, (int)maxval + 1);
    }
    png_write_info(png, info);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++)
            for (int c = 0; c < spp; c++) {
                unsigned s = sample(x, y, c, maxval);
                v[x * spp + c] = t->photometric == PHOTOMETRIC_MINISWHITE && c < color ? maxval - s : s;
            }
        pack(v, (size_t)W * (size_t)spp, t->bps, true, row);
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(v);
    free(row);
    return fclose(f) == 0;
}

static void test_tiff_layouts(void)
{
    enum { MB = PHOTOMETRIC_MINISBLACK, MW = PHOTOMETRIC_MINISWHITE, RGB = PHOTOMETRIC_RGB,
           PAL = PHOTOMETRIC_PALETTE, SEP = PLANARCONFIG_SEPARATE, UNASSOC = EXTRASAMPLE_UNASSALPHA,
           ASSOC = EXTRASAMPLE_ASSOCALPHA, HDIFF = PREDICTOR_HORIZONTAL };
    static const struct tiff_case cases[] = {
        /* 1-bit, both polarities, every compression that takes it */
        { .name = "bw-none", .photometric = MB, .bps = 1, .compression = COMPRESSION_NONE, .rows = 5 },
        { .name = "bw-white-none", .photometric = MW, .bps = 1, .compression = COMPRESSION_NONE, .rows = H },
        { .name = "bw-g4", .photometric = MW, .bps = 1, .compression = COMPRESSION_CCITTFAX4, .rows = H },
        { .name = "bw-g4-black", .photometric = MB, .bps = 1, .compression = COMPRESSION_CCITTFAX4, .rows = 4 },
        { .name = "bw-g4-tiles", .photometric = MW, .bps = 1, .compression = COMPRESSION_CCITTFAX4, .tile = 16 },
        { .name = "bw-g3-1d", .photometric = MW, .bps = 1, .compression = COMPRESSION_CCITTFAX3, .rows = 7 },
        { .name = "bw-g3-2d", .photometric = MW, .bps = 1, .compression = COMPRESSION_CCITTFAX3, .rows = H,
          .g3_options = GROUP3OPT_2DENCODING },
        { .name = "bw-rle", .photometric = MW, .bps = 1, .compression = COMPRESSION_CCITTRLE, .rows = H },
        { .name = "bw-lzw", .photometric = MW, .bps = 1, .compression = COMPRESSION_LZW, .rows = 1 },
        { .name = "bw-deflate", .photometric = MB, .bps = 1, .compression = COMPRESSION_ADOBE_DEFLATE, .rows = 8 },
        { .name = "bw-packbits", .photometric = MW, .bps = 1, .compression = COMPRESSION_PACKBITS, .rows = 3 },
        /* 2- and 4-bit gray */
        { .name = "g2-none", .photometric = MB, .bps = 2, .compression = COMPRESSION_NONE, .rows = 6 },
        { .name = "g4-white-lzw", .photometric = MW, .bps = 4, .compression = COMPRESSION_LZW, .rows = H },
        { .name = "g4-packbits-tiles", .photometric = MB, .bps = 4, .compression = COMPRESSION_PACKBITS,
          .tile = 16 },
        /* 8-bit gray */
        { .name = "g8-none", .photometric = MB, .bps = 8, .compression = COMPRESSION_NONE, .rows = 10 },
        { .name = "g8-white", .photometric = MW, .bps = 8, .compression = COMPRESSION_NONE, .rows = H },
        { .name = "g8-lzw", .photometric = MB, .bps = 8, .compression = COMPRESSION_LZW, .rows = 4 },
        { .name = "g8-lzw-pred", .photometric = MB, .bps = 8, .compression = COMPRESSION_LZW, .rows = 4,
          .predictor = HDIFF },
        { .name = "g8-deflate", .photometric = MB, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE, .rows = H },
        { .name = "g8-deflate-old", .photometric = MB, .bps = 8, .compression = COMPRESSION_DEFLATE, .rows = 9,
          .predictor = HDIFF },
        { .name = "g8-packbits", .photometric = MB, .bps = 8, .compression = COMPRESSION_PACKBITS, .rows = 2 },
        { .name = "g8-tiles", .photometric = MB, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE, .tile = 16 },
        { .name = "g8-big-endian", .photometric = MB, .bps = 8, .compression = COMPRESSION_LZW, .rows = H,
          .big_endian = true },
        /* 16-bit gray */
        { .name = "g16-none", .photometric = MB, .bps = 16, .compression = COMPRESSION_NONE, .rows = 5 },
        { .name = "g16-white-lzw", .photometric = MW, .bps = 16, .compression = COMPRESSION_LZW, .rows = H,
          .predictor = HDIFF },
        { .name = "g16-big-endian", .photometric = MB, .bps = 16, .compression = COMPRESSION_ADOBE_DEFLATE,
          .rows = 7, .big_endian = true },
        { .name = "g16-tiles-be", .photometric = MB, .bps = 16, .compression = COMPRESSION_NONE, .tile = 16,
          .big_endian = true },
        /* gray with alpha */
        { .name = "ga8", .photometric = MB, .bps = 8, .compression = COMPRESSION_NONE, .rows = H, .extra = UNASSOC },
        { .name = "ga16-sep", .photometric = MB, .bps = 16, .compression = COMPRESSION_LZW, .rows = 6,
          .extra = UNASSOC, .planar = SEP },
        /* RGB */
        { .name = "rgb8-none", .photometric = RGB, .bps = 8, .compression = COMPRESSION_NONE, .rows = 3 },
        { .name = "rgb8-lzw-pred", .photometric = RGB, .bps = 8, .compression = COMPRESSION_LZW, .rows = H,
          .predictor = HDIFF },
        { .name = "rgb8-deflate", .photometric = RGB, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE, .rows = 8 },
        { .name = "rgb8-packbits", .photometric = RGB, .bps = 8, .compression = COMPRESSION_PACKBITS, .rows = 1 },
        { .name = "rgb8-separate", .photometric = RGB, .bps = 8, .compression = COMPRESSION_LZW, .rows = 5,
          .planar = SEP },
        { .name = "rgb8-tiles", .photometric = RGB, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE, .tile = 16 },
        { .name = "rgb8-tiles-separate", .photometric = RGB, .bps = 8, .compression = COMPRESSION_NONE,
          .tile = 16, .planar = SEP },
        { .name = "rgb16-be", .photometric = RGB, .bps = 16, .compression = COMPRESSION_ADOBE_DEFLATE, .rows = 4,
          .big_endian = true },
        { .name = "rgb16-separate", .photometric = RGB, .bps = 16, .compression = COMPRESSION_NONE, .rows = H,
          .planar = SEP },
        /* RGBA, unassociated and associated */
        { .name = "rgba8", .photometric = RGB, .bps = 8, .compression = COMPRESSION_LZW, .rows = 6,
          .extra = UNASSOC },
        { .name = "rgba8-assoc", .photometric = RGB, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE, .rows = H,
          .extra = ASSOC },
        { .name = "rgba16-tiles", .photometric = RGB, .bps = 16, .compression = COMPRESSION_NONE, .tile = 16,
          .extra = UNASSOC },
        /* palettes */
        { .name = "pal1", .photometric = PAL, .bps = 1, .compression = COMPRESSION_NONE, .rows = H },
        { .name = "pal2", .photometric = PAL, .bps = 2, .compression = COMPRESSION_PACKBITS, .rows = 4 },
        { .name = "pal4", .photometric = PAL, .bps = 4, .compression = COMPRESSION_LZW, .rows = 9 },
        { .name = "pal8", .photometric = PAL, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE, .rows = 2 },
        { .name = "pal8-8bit-map", .photometric = PAL, .bps = 8, .compression = COMPRESSION_NONE, .rows = H,
          .cmap_8bit = true },
        { .name = "pal8-tiles", .photometric = PAL, .bps = 8, .compression = COMPRESSION_LZW, .tile = 16 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct tiff_case *t = &cases[i];
        char tif_path[512], png_path[512], name[256];
        snprintf(name, sizeof name, "%s.tif", t->name);
        path_of(tif_path, sizeof tif_path, name);
        snprintf(name, sizeof name, "%s.png", t->name);
        path_of(png_path, sizeof png_path, name);
        if (!CHECK_FOR(t->name, write_tiff_case(t, tif_path) && write_png_twin(t, png_path)))
            continue;
        db_image *from_tiff = db_image_read(tif_path);
        db_image *from_png = db_image_read(png_path);
        CHECK_FOR(t->name, from_tiff && from_png && same_pixels(from_tiff, from_png));
        CHECK_FOR(t->name, from_tiff && from_tiff->dpi_x == 300 && from_tiff->dpi_y == 150);
        int w, h, c;
        CHECK_FOR(t->name, db_image_peek(tif_path, &w, &h, &c) == DB_OK && from_tiff && w == from_tiff->width
                           && h == from_tiff->height && c == from_tiff->channels);
        /* The same file from memory. */
        size_t size;
        uint8_t *bytes = slurp(tif_path, &size);
        db_image *from_memory = bytes ? db_image_read_memory(bytes, size, t->name) : NULL;
        CHECK_FOR(t->name, from_memory && from_png && same_pixels(from_memory, from_png));
        db_image_free(from_memory);
        free(bytes);
        db_image_free(from_tiff);
        db_image_free(from_png);
    }
}

/* ---- Resolution units ------------------------------------------------------------ */

static int write_gray_tiff(const char *path, int width, int height, uint16_t unit, float x, float y)
{
    TIFF *tif = TIFFOpen(path, "w");
    if (!tif)
        return 0;
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)width);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)height);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (uint32_t)height);
    if (unit) {
        TIFFSetField(tif, TIFFTAG_XRESOLUTION, x);
        TIFFSetField(tif, TIFFTAG_YRESOLUTION, y);
        TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, unit);
    }
    uint8_t *row = calloc(1, (size_t)width);
    int ok = row != NULL;
    for (int r = 0; ok && r < height; r++) {
        for (int i = 0; i < width; i++)
            row[i] = (uint8_t)sample(i, r, 0, 255);
        ok = TIFFWriteScanline(tif, row, (uint32_t)r, 0) >= 0;
    }
    free(row);
    ok = ok && TIFFWriteDirectory(tif);
    TIFFClose(tif);
    return ok;
}

static void test_tiff_resolution(void)
{
    char path[512];
    path_of(path, sizeof path, "res.tif");
    /* Centimetres: 2.54 times the value per centimetre. */
    db_image *img = NULL;
    if (CHECK(write_gray_tiff(path, 8, 8, RESUNIT_CENTIMETER, 118.0f, 40.0f)))
        img = db_image_read(path);
    CHECK(img && img->dpi_x == 118.0 * 2.54 && img->dpi_y == 40.0 * 2.54);
    db_image_free(img);
    /* No unit: an aspect ratio, not a resolution. */
    img = NULL;
    if (CHECK(write_gray_tiff(path, 8, 8, RESUNIT_NONE, 2.0f, 1.0f)))
        img = db_image_read(path);
    CHECK(img && img->dpi_x == 0 && img->dpi_y == 0);
    db_image_free(img);
    img = NULL;
    if (CHECK(write_gray_tiff(path, 8, 8, 0, 0, 0)))
        img = db_image_read(path);
    CHECK(img && img->dpi_x == 0 && img->dpi_y == 0);
    db_image_free(img);
}

/* ---- Multi-page documents ------------------------------------------------------- */

/* Adds a gray page whose first pixel is `mark`, as a page or as a thumbnail. */
static int add_page(TIFF *tif, int width, int height, uint8_t mark, uint32_t subfile, uint16_t compression)
{
    TIFFSetField(tif, TIFFTAG_SUBFILETYPE, subfile);
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)width);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)height);
    bool bilevel = compression == COMPRESSION_CCITTFAX4 || compression == COMPRESSION_CCITTFAX3;
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bilevel ? 1 : 8);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, compression);
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (uint32_t)height);
    uint8_t *row = calloc(1, (size_t)width);
    int ok = row != NULL;
    for (int r = 0; ok && r < height; r++) {
        if (bilevel) {
            /* White page, with black bits 0..mark-1 on row 0. */
            memset(row, 0xff, ((size_t)width + 7) / 8);
            for (int i = 0; r == 0 && i < mark; i++)
                row[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
        } else {
            for (int i = 0; i < width; i++)
                row[i] = (uint8_t)(r == 0 && i == 0 ? mark : sample(i, r, mark, 255));
        }
        ok = TIFFWriteScanline(tif, row, (uint32_t)r, 0) >= 0;
    }
    free(row);
    return ok && TIFFWriteDirectory(tif);
}

static void test_multi_page(void)
{
    char path[512];
    path_of(path, sizeof path, "three.tif");
    TIFF *tif = TIFFOpen(path, "w");
    int ok = tif && add_page(tif, 30, 20, 11, 0, COMPRESSION_LZW)
             && add_page(tif, 8, 5, 99, FILETYPE_REDUCEDIMAGE, COMPRESSION_NONE)
             && add_page(tif, 16, 40, 22, FILETYPE_PAGE, COMPRESSION_ADOBE_DEFLATE)
             && add_page(tif, 50, 10, 33, FILETYPE_PAGE, COMPRESSION_NONE);
    if (tif)
        TIFFClose(tif);
    if (!CHECK(ok))
        return;
    db_doc *doc = NULL;
    if (!CHECK(db_doc_open(path, &doc) == DB_OK))
        return;
    CHECK(db_doc_pages(doc) == 3);
    static const int sides[3][2] = { { 30, 20 }, { 16, 40 }, { 50, 10 } };
    static const uint8_t marks[3] = { 11, 22, 33 };
    /* Out of order, and twice, as a reader may ask. */
    static const int order[] = { 2, 0, 1, 2 };
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        int p = order[k], w, h, c;
        CHECK(db_doc_peek_page(doc, p, &w, &h, &c) == DB_OK && w == sides[p][0] && h == sides[p][1] && c == 1);
        db_image *img = db_doc_read_page(doc, p);
        CHECK(img && img->width == sides[p][0] && img->height == sides[p][1] && img->data[0] == marks[p]
              && img->data[1] == (uint8_t)sample(1, 0, marks[p], 255));
        db_image_free(img);
    }
    db_error_clear();
    CHECK(db_doc_read_page(doc, 3) == NULL && db_error_status() == DB_ERR_USAGE
          && strstr(db_error_message(), "3 pages"));
    CHECK(db_doc_read_page(doc, -1) == NULL && db_error_status() == DB_ERR_USAGE);
    db_doc_close(doc);
    /* The single-image calls see the first page. */
    int w, h, c;
    CHECK(db_image_peek(path, &w, &h, &c) == DB_OK && w == 30 && h == 20 && c == 1);
    db_image *first = db_image_read(path);
    CHECK(first && first->width == 30 && first->data[0] == 11);
    db_image_free(first);

    /* A pipe is refused at once (its bytes could not be read twice); its bytes
    ** read into memory give every page. */
    char command[1100];
    snprintf(command, sizeof command, "cat %s", path);
    FILE *pipe = popen(command, "r");
    if (CHECK(pipe != NULL)) {
        char fd_path[64];
        snprintf(fd_path, sizeof fd_path, "/dev/fd/%d", fileno(pipe));
        CHECK(db_doc_open(fd_path, &doc) == DB_ERR_IO && strstr(db_error_message(), "pipe"));
        static uint8_t bytes[1 << 16];
        size_t n = fread(bytes, 1, sizeof bytes, pipe);
        CHECK(db_doc_open_memory(bytes, n, "piped", &doc) == DB_OK && db_doc_pages(doc) == 3);
        db_image *img = doc ? db_doc_read_page(doc, 2) : NULL;
        CHECK(img && img->width == 50 && img->data[0] == 33);
        db_image_free(img);
        db_doc_close(doc);
        pclose(pipe);
    }
}

/* The largest resident set so far, in kB, after clearing it where the kernel
** allows (/proc/self/clear_refs); -1 where /proc has no such figure. */
static long peak_rss_kb(bool reset)
{
    if (reset) {
        FILE *f = fopen("/proc/self/clear_refs", "w");
        if (f) {
            fputs("5", f);
            fclose(f);
        }
    }
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* A 500-page G4 document, 1000x1000 pixels a page (a megabyte decoded, half
** a gigabyte for all): read and rewritten page by page, the process grows by
** a few pages at most. */
static void test_many_pages(void)
{
    enum { PAGES = 500, SIDE = 1000 };
    char path[512], out[512];
    path_of(path, sizeof path, "many.tif");
    path_of(out, sizeof out, "many-out.tif");
    TIFF *tif = TIFFOpen(path, "w");
    int ok = tif != NULL;
    for (int p = 0; ok && p < PAGES; p++)
        ok = add_page(tif, SIDE, SIDE, (uint8_t)(p % 200 + 1), FILETYPE_PAGE, COMPRESSION_CCITTFAX4);
    if (tif)
        TIFFClose(tif);
    if (!CHECK(ok))
        return;
    long before = peak_rss_kb(true);
    db_doc *doc = NULL;
    db_doc_writer *w = NULL;
    if (!CHECK(db_doc_open(path, &doc) == DB_OK && db_doc_pages(doc) == PAGES
               && db_doc_writer_open(out, DB_FILE_AUTO, DB_COMPRESSION_DEFAULT, &w) == DB_OK)) {
        db_doc_close(doc);
        return;
    }
    int in_order = 1;
    for (int p = 0; p < PAGES && in_order; p++) {
        db_image *img = db_doc_read_page(doc, p);
        /* Ink runs along row 0 for mark pixels, then white. */
        int mark = p % 200 + 1;
        in_order = img && img->data[mark - 1] == 0 && img->data[mark] == 255 && img->data[img->stride] == 255
                   && db_doc_writer_add(w, img, 1) == DB_OK;
        db_image_free(img);
    }
    CHECK(in_order);
    CHECK(db_doc_writer_commit(w) == DB_OK);
    db_doc_close(doc);
    long after = peak_rss_kb(false);
    /* AddressSanitizer keeps freed memory in quarantine: the bound holds only without it. */
    if (before > 0 && after > 0 && !getenv("DOCBIN_TEST_ASAN")) {
        printf("500 pages of 1 MB read and rewritten: peak resident set grew by %ld kB\n", after - before);
        CHECK(after - before < 64 * 1024);
    }
    /* libtiff's own count of the rewritten file, and its last page. */
    TIFF *reread = TIFFOpen(out, "r");
    if (CHECK(reread != NULL)) {
        CHECK(TIFFNumberOfDirectories(reread) == PAGES);
        uint32_t width = 0;
        uint16_t compression = 0;
        CHECK(TIFFSetDirectory(reread, PAGES - 1) && TIFFGetField(reread, TIFFTAG_IMAGEWIDTH, &width)
              && width == SIDE && TIFFGetField(reread, TIFFTAG_COMPRESSION, &compression)
              && compression == COMPRESSION_CCITTFAX4);
        TIFFClose(reread);
    }
    unlink(path);
    unlink(out);
}

/* ---- What docbin writes, through libtiff ---------------------------------------- */

static db_image *make_image(int width, int height, int channels, uint32_t seed)
{
    db_image *img = db_image_new(width, height, channels);
    if (img)
        for (int y = 0; y < height; y++)
            for (int i = 0; i < width * channels; i++)
                img->data[(size_t)y * img->stride + (size_t)i] = (uint8_t)sample(i, y, (int)seed, 255);
    return img;
}

/* Reads page `dir` of `path` with libtiff's scanline interface and checks its
** tags and every pixel against `img` written with `bits`. */
static int libtiff_sees(const char *path, int dir, const db_image *img, int bits, uint16_t compression,
                        double dpi)
{
    TIFF *tif = TIFFOpen(path, "r");
    if (!tif)
        return 0;
    uint32_t w = 0, h = 0;
    uint16_t bps = 0, spp = 0, photometric = 0, comp = 0, unit = 0;
    float x = 0, y = 0;
    int ok = TIFFSetDirectory(tif, (tdir_t)dir) && TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w)
             && TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h) && TIFFGetField(tif, TIFFTAG_BITSPERSAMPLE, &bps)
             && TIFFGetField(tif, TIFFTAG_SAMPLESPERPIXEL, &spp) && TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)
             && TIFFGetField(tif, TIFFTAG_COMPRESSION, &comp);
    ok = ok && w == (uint32_t)img->width && h == (uint32_t)img->height && bps == bits && spp == img->channels
         && comp == compression
         && photometric == (img->channels == 3 ? PHOTOMETRIC_RGB
                            : bits == 1        ? PHOTOMETRIC_MINISWHITE
                                               : PHOTOMETRIC_MINISBLACK);
    if (dpi > 0)
        ok = ok && TIFFGetField(tif, TIFFTAG_XRESOLUTION, &x) && TIFFGetField(tif, TIFFTAG_YRESOLUTION, &y)
             && TIFFGetFieldDefaulted(tif, TIFFTAG_RESOLUTIONUNIT, &unit) && x == (float)dpi && y == (float)dpi
             && unit == RESUNIT_INCH;
    else
        ok = ok && !TIFFGetField(tif, TIFFTAG_XRESOLUTION, &x);
    uint8_t *line = ok ? malloc((size_t)TIFFScanlineSize(tif)) : NULL;
    for (uint32_t r = 0; line && r < h && ok; r++) {
        ok = TIFFReadScanline(tif, line, r, 0) >= 0;
        const uint8_t *row = img->data + (size_t)r * img->stride;
        for (int i = 0; ok && i < img->width * img->channels; i++) {
            /* Min-is-white: a 1 bit is ink, below 128. */
            int want = bits == 1 ? (row[i] < 128) : row[i];
            int got = bits == 1 ? (line[i / 8] >> (7 - i % 8)) & 1 : line[i];
            if (got != want) {
                say("  %s page %d row %u sample %d: %d against %d\n", path, dir, r, i, got, want);
                ok = 0;
            }
        }
    }
    free(line);
    TIFFClose(tif);
    return ok;
}

static int temp_files(void)
{
    DIR *d = opendir(temp_dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void test_tiff_writer(void)
{
    char path[512];
    db_image *gray = make_image(61, 33, 1, 1), *rgb = make_image(20, 9, 3, 2);
    if (!CHECK(gray && rgb))
        goto done;
    gray->dpi_x = gray->dpi_y = 300;

    /* db_image_write: G4 for 1-bit, Deflate for 8-bit, by default. */
    CHECK(db_image_write(gray, path_of(path, sizeof path, "w1.tif"), DB_FILE_AUTO, 1) == DB_OK
          && libtiff_sees(path, 0, gray, 1, COMPRESSION_CCITTFAX4, 300));
    CHECK(db_image_write(gray, path_of(path, sizeof path, "w8.TIFF"), DB_FILE_AUTO, 8) == DB_OK
          && libtiff_sees(path, 0, gray, 8, COMPRESSION_ADOBE_DEFLATE, 300));
    CHECK(db_image_write(rgb, path_of(path, sizeof path, "rgb.dat"), DB_FILE_TIFF, 8) == DB_OK
          && libtiff_sees(path, 0, rgb, 8, COMPRESSION_ADOBE_DEFLATE, 0));

    /* Every compression, and pages of different kinds in one file, in order. */
    static const struct {
        db_compression compression;
        uint16_t tag;
    } methods[] = {
        { DB_COMPRESSION_NONE, COMPRESSION_NONE },
        { DB_COMPRESSION_LZW, COMPRESSION_LZW },
        { DB_COMPRESSION_DEFLATE, COMPRESSION_ADOBE_DEFLATE },
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        db_doc_writer *w;
        unlink(path_of(path, sizeof path, "pages.tif"));
        if (!CHECK(db_doc_writer_open(path, DB_FILE_AUTO, methods[i].compression, &w) == DB_OK))
            continue;
        CHECK(db_doc_writer_add(w, gray, 8) == DB_OK && db_doc_writer_add(w, rgb, 8) == DB_OK
              && db_doc_writer_add(w, gray, 1) == DB_OK);
        CHECK(access(path, F_OK) != 0); /* nothing under the name before the commit */
        CHECK(db_doc_writer_commit(w) == DB_OK);
        CHECK(libtiff_sees(path, 0, gray, 8, methods[i].tag, 300) && libtiff_sees(path, 1, rgb, 8, methods[i].tag, 0)
              && libtiff_sees(path, 2, gray, 1, methods[i].tag, 300));
        db_doc *doc;
        if (CHECK(db_doc_open(path, &doc) == DB_OK)) {
            CHECK(db_doc_pages(doc) == 3);
            db_image *back = db_doc_read_page(doc, 1);
            CHECK(back && same_pixels(back, rgb));
            db_image_free(back);
            db_doc_close(doc);
        }
    }
    db_doc_writer *w;
    CHECK(db_doc_writer_open(path_of(path, sizeof path, "g4.tif"), DB_FILE_AUTO, DB_COMPRESSION_G4, &w) == DB_OK
          && db_doc_writer_add(w, gray, 1) == DB_OK && db_doc_writer_commit(w) == DB_OK
          && libtiff_sees(path, 0, gray, 1, COMPRESSION_CCITTFAX4, 300));

    /* Refusals: before any file where they need no image, else on the page,
    ** and never a file or a temporary left. */
    db_error_clear();
    CHECK(db_doc_writer_open(path_of(path, sizeof path, "x.png"), DB_FILE_AUTO, DB_COMPRESSION_LZW, &w)
          == DB_ERR_USAGE && strstr(db_error_message(), "x.png"));
    CHECK(db_doc_writer_open(path_of(path, sizeof path, "x.pgm"), DB_FILE_AUTO, DB_COMPRESSION_G4, &w)
          == DB_ERR_USAGE);
    CHECK(db_doc_writer_open(path_of(path, sizeof path, "x.jpg"), DB_FILE_AUTO, DB_COMPRESSION_DEFAULT, &w)
          == DB_ERR_USAGE);
    CHECK(db_doc_writer_open(path_of(path, sizeof path, "x.tif"), DB_FILE_AUTO, (db_compression)42, &w)
          == DB_ERR_USAGE);
    if (CHECK(db_doc_writer_open(path_of(path, sizeof path, "g4-8bit.tif"), DB_FILE_AUTO, DB_COMPRESSION_G4, &w)
              == DB_OK)) {
        CHECK(db_doc_writer_add(w, gray, 8) == DB_ERR_USAGE && strstr(db_error_message(), "g4-8bit.tif"));
        CHECK(db_doc_writer_commit(w) != DB_OK);
        CHECK(access(path, F_OK) != 0);
    }
    if (CHECK(db_doc_writer_open(path_of(path, sizeof path, "two.png"), DB_FILE_AUTO, DB_COMPRESSION_DEFAULT, &w)
              == DB_OK)) {
        CHECK(db_doc_writer_add(w, gray, 8) == DB_OK);
        CHECK(db_doc_writer_add(w, gray, 8) == DB_ERR_USAGE && strstr(db_error_message(), ".tif"));
        db_doc_writer_abort(w);
        CHECK(access(path, F_OK) != 0);
    }
    if (CHECK(db_doc_writer_open(path_of(path, sizeof path, "none.tif"), DB_FILE_AUTO, DB_COMPRESSION_DEFAULT, &w)
              == DB_OK)) {
        CHECK(db_doc_writer_commit(w) == DB_ERR_USAGE);
        CHECK(access(path, F_OK) != 0);
    }
    CHECK(temp_files() == 0);

    /* The names the compressions go by. */
    for (int c = DB_COMPRESSION_DEFAULT; c <= DB_COMPRESSION_LZW; c++) {
        db_compression back;
        CHECK(db_compression_parse(db_compression_name((db_compression)c), &back) == DB_OK && (int)back == c);
    }
    db_compression none;
    CHECK(db_compression_parse("G4", &none) == DB_OK && none == DB_COMPRESSION_G4);
    CHECK(db_compression_parse("jbig2", &none) == DB_ERR_USAGE && strstr(db_error_message(), "lzw"));
done:
    db_image_free(gray);
    db_image_free(rgb);
}

/* ---- Hostile and damaged files -------------------------------------------------- */

/* A classic little-endian TIFF's IFD entries, walked to patch them. */
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t ifd_offset(const uint8_t *tiff, int index)
{
    uint32_t off = le32(tiff + 4);
    for (int i = 0; i < index; i++)
        off = le32(tiff + off + 2 + 12 * (tiff[off] | tiff[off + 1] << 8));
    return off;
}

/* The entry of `tag` in IFD `index`, or NULL. */
static uint8_t *ifd_entry(uint8_t *tiff, int index, uint16_t tag)
{
    uint32_t off = ifd_offset(tiff, index);
    unsigned n = tiff[off] | tiff[off + 1] << 8;
    for (unsigned i = 0; i < n; i++) {
        uint8_t *e = tiff + off + 2 + 12 * i;
        if ((e[0] | e[1] << 8) == tag)
            return e;
    }
    return NULL;
}

/* Sets a one-value entry to LONG `value`. */
static void set_long(uint8_t *entry, uint32_t value)
{
    entry[2] = 4;
    entry[3] = 0;
    put_le32(entry + 4, 1);
    put_le32(entry + 8, value);
}

static char stderr_path[600];

/* Sends stderr to a file while bad input is read: libraries that print
** there would show in it. */
static void capture_stderr(void)
{
    fflush(stderr);
    path_of(stderr_path, sizeof stderr_path, "stderr.txt");
    int fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    report_fd = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Restores stderr and returns what was printed meanwhile. */
static size_t release_stderr(char *text, size_t size)
{
    fflush(stderr);
    dup2(report_fd, 2);
    close(report_fd);
    report_fd = 2;
    size_t n = 0;
    uint8_t *bytes = slurp(stderr_path, &n);
    snprintf(text, size, "%.*s", (int)(n < size ? n : size - 1), bytes ? (const char *)bytes : "");
    free(bytes);
    return n;
}

/* Reads `bytes` as file `name` every way: the document (open, each page's
** peek and decode), db_image_read and db_image_peek; every way must fail with
** `status` (0: any error), and `needle` in the message when given. `page` >
** 0: pages before it decode, and the failure names "page <page>". */
static void expect_failure(const char *name, const uint8_t *bytes, size_t size, db_status status, const char *needle,
                           int page)
{
    char path[512];
    path_of(path, sizeof path, name);
    if (!CHECK_FOR(name, spit(path, bytes, size)))
        return;
    db_doc *doc = NULL;
    db_error_clear();
    db_status st = db_doc_open(path, &doc);
    int failed = st != DB_OK;
    for (int p = 0; doc && p < db_doc_pages(doc) && !failed; p++) {
        int w, h, c;
        st = db_doc_peek_page(doc, p, &w, &h, &c);
        db_image *img = st == DB_OK ? db_doc_read_page(doc, p) : NULL;
        if (st == DB_OK && !img)
            st = db_error_status();
        db_image_free(img);
        if (st != DB_OK) {
            failed = 1;
            if (page > 0) {
                char where[64];
                snprintf(where, sizeof where, "page %d", page);
                CHECK_FOR(name, p == page - 1 && strstr(db_error_message(), where));
            }
        }
    }
    db_doc_close(doc);
    if (getenv("TEST_FORMATS_VERBOSE"))
        say("  %s\n", db_error_message());
    CHECK_FOR(name, failed && (status == DB_OK ? st != DB_OK : st == status));
    CHECK_FOR(name, strstr(db_error_message(), path) && strchr(db_error_message(), '\n') == NULL);
    if (needle)
        CHECK_FOR(name, strstr(db_error_message(), needle));
    if (page > 0)
        return; /* the single-image calls read the first page, which is good */
    db_error_clear();
    CHECK_FOR(name, db_image_read(path) == NULL && db_error_status() != DB_OK
                    && strstr(db_error_message(), path));
    db_image *img = db_image_read_memory(bytes, size, name);
    CHECK_FOR(name, img == NULL && strstr(db_error_message(), name));
    db_image_free(img);
    unlink(path);
}

/* A JPEG of `width` x `height` made by libjpeg (gray, YCbCr or CMYK). */
static uint8_t *make_jpeg(int width, int height, J_COLOR_SPACE space, int components, size_t *size)
{
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&cinfo);
    unsigned char *out = NULL;
    unsigned long out_size = 0;
    jpeg_mem_dest(&cinfo, &out, &out_size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = components;
    cinfo.in_color_space = space;
    jpeg_set_defaults(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    uint8_t *row = malloc((size_t)width * (size_t)components);
    while (cinfo.next_scanline < cinfo.image_height) {
        for (int i = 0; i < width * components; i++)
            row[i] = (uint8_t)sample(i, (int)cinfo.next_scanline, 7, 255);
        JSAMPROW r = row;
        jpeg_write_scanlines(&cinfo, &r, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    free(row);
    uint8_t *copy = malloc(out_size);
    memcpy(copy, out, out_size);
    free(out);
    *size = out_size;
    return copy;
}

static void test_bad_tiff(void)
{
    char path[512];
    /* A two-page file with its strips before its IFDs (libtiff's order). */
    path_of(path, sizeof path, "two.tif");
    TIFF *tif = TIFFOpen(path, "w");
    int ok = tif && add_page(tif, 40, 30, 5, 0, COMPRESSION_NONE) && add_page(tif, 40, 30, 6, 0, COMPRESSION_LZW)
             && add_page(tif, 40, 30, 7, 0, COMPRESSION_NONE);
    if (tif)
        TIFFClose(tif);
    size_t size;
    uint8_t *good = ok ? slurp(path, &size) : NULL;
    if (!CHECK(good && good[0] == 'I'))
        return;
    uint8_t *bad = malloc(size);

    /* Cut anywhere: the IFDs are at the end, so every cut loses one. */
    for (size_t cut = 0; cut < size; cut += size / 23 + 1) {
        char name[64];
        snprintf(name, sizeof name, "cut-%zu.tif", cut);
        if (cut > 8)
            expect_failure(name, good, cut, DB_OK, NULL, 0);
    }
    /* An IFD chain that loops: the third IFD leads back to the first. */
    memcpy(bad, good, size);
    uint32_t third = ifd_offset(bad, 2);
    put_le32(bad + third + 2 + 12 * (bad[third] | bad[third + 1] << 8), ifd_offset(bad, 0));
    expect_failure("loop.tif", bad, size, DB_ERR_FORMAT, "page 4", 0);
    /* ...and one that points at itself. */
    memcpy(bad, good, size);
    uint32_t first = ifd_offset(bad, 0);
    put_le32(bad + first + 2 + 12 * (bad[first] | bad[first + 1] << 8), first);
    expect_failure("self-loop.tif", bad, size, DB_ERR_FORMAT, "loops", 0);
    /* The next IFD past the end. */
    memcpy(bad, good, size);
    put_le32(bad + first + 2 + 12 * (bad[first] | bad[first + 1] << 8), (uint32_t)size + 1000);
    expect_failure("next-past-end.tif", bad, size, DB_ERR_FORMAT, "page 2", 0);
    /* The second page's strip past the end: the document opens, pages 1 and
    ** 3 decode, page 2 fails naming itself. */
    memcpy(bad, good, size);
    set_long(ifd_entry(bad, 1, TIFFTAG_STRIPOFFSETS), 0x7fff0000u);
    expect_failure("strip-past-end.tif", bad, size, DB_ERR_FORMAT, "past the end", 2);
    /* A compressed strip's byte count larger than the file (libtiff
    ** recomputes an uncompressed one's). */
    memcpy(bad, good, size);
    set_long(ifd_entry(bad, 1, TIFFTAG_STRIPBYTECOUNTS), 0x40000000u);
    expect_failure("count-past-end.tif", bad, size, DB_ERR_FORMAT, "past the end", 2);
    /* Declared sizes: too many pixels for any side, and too many bytes for
    ** the memory limit (sides within bounds), both refused before allocating. */
    memcpy(bad, good, size);
    set_long(ifd_entry(bad, 0, TIFFTAG_IMAGEWIDTH), 2000000u);
    expect_failure("wide.tif", bad, size, DB_ERR_FORMAT, "too large", 0);
    memcpy(bad, good, size);
    set_long(ifd_entry(bad, 0, TIFFTAG_IMAGEWIDTH), 900000u);
    set_long(ifd_entry(bad, 0, TIFFTAG_IMAGELENGTH), 900000u);
    set_long(ifd_entry(bad, 0, TIFFTAG_ROWSPERSTRIP), 900000u);
    expect_failure("huge.tif", bad, size, DB_ERR_NOMEM, "limit", 0);
    /* Unsupported photometric interpretations, and samples docbin does not read. */
    memcpy(bad, good, size);
    set_long(ifd_entry(bad, 0, TIFFTAG_PHOTOMETRIC), PHOTOMETRIC_CIELAB);
    expect_failure("lab.tif", bad, size, DB_ERR_FORMAT, "photometric", 0);
    memcpy(bad, good, size);
    set_long(ifd_entry(bad, 0, TIFFTAG_PHOTOMETRIC), 99);
    expect_failure("photometric-99.tif", bad, size, DB_ERR_FORMAT, "photometric", 0);
    memcpy(bad, good, size);
    set_long(ifd_entry(bad, 0, TIFFTAG_BITSPERSAMPLE), 12);
    expect_failure("bits-12.tif", bad, size, DB_ERR_FORMAT, "12 bits", 0);
    free(bad);
    free(good);

    /* CCITT and JPEG strips that stop short inside the file: libtiff fills
    ** them in with only a warning, which docbin takes as the error it is. */
    static const uint16_t short_strips[] = { COMPRESSION_CCITTFAX4, COMPRESSION_CCITTFAX3, COMPRESSION_JPEG };
    for (size_t k = 0; k < sizeof short_strips / sizeof short_strips[0]; k++) {
        char name[64];
        snprintf(name, sizeof name, "short-strip-%u.tif", short_strips[k]);
        path_of(path, sizeof path, name);
        tif = TIFFOpen(path, "w");
        ok = tif && add_page(tif, 200, 120, 40, 0, short_strips[k]);
        if (tif)
            TIFFClose(tif);
        good = ok ? slurp(path, &size) : NULL;
        uint8_t *entry = good ? ifd_entry(good, 0, TIFFTAG_STRIPBYTECOUNTS) : NULL;
        if (!CHECK_FOR(name, entry && le32(entry + 4) == 1)) {
            free(good);
            continue;
        }
        uint32_t count = entry[2] == 3 ? (uint32_t)(entry[8] | entry[9] << 8) : le32(entry + 8);
        set_long(entry, count / 2);
        expect_failure(name, good, size, DB_ERR_FORMAT, "TIFF", 0);
        free(good);
    }

    /* CMYK, written by libtiff. */
    path_of(path, sizeof path, "cmyk.tif");
    tif = TIFFOpen(path, "w");
    if (CHECK(tif != NULL)) {
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, 4u);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, 4u);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 8);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 4);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_SEPARATED);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        uint8_t pixels[64] = { 0 };
        TIFFWriteEncodedStrip(tif, 0, pixels, sizeof pixels);
        TIFFClose(tif);
        uint8_t *cmyk = slurp(path, &size);
        if (CHECK(cmyk != NULL))
            expect_failure("cmyk-copy.tif", cmyk, size, DB_ERR_FORMAT, "CMYK", 0);
        free(cmyk);
    }
}

static void test_bad_jpeg(void)
{
    size_t size;
    uint8_t *good = make_jpeg(64, 48, JCS_YCbCr, 3, &size);
    if (!CHECK(good))
        return;
    /* A whole file decodes; one cut short anywhere in its data does not. */
    db_image *img = db_image_read_memory(good, size, "good.jpg");
    CHECK(img && img->width == 64 && img->height == 48 && img->channels == 3);
    db_image_free(img);
    for (size_t cut = 3; cut < size - 2; cut += size / 17 + 1) {
        char name[64];
        snprintf(name, sizeof name, "cut-%zu.jpg", cut);
        expect_failure(name, good, cut, DB_ERR_FORMAT, "JPEG", 0);
    }
    /* Only the end-of-image marker missing: every pixel is there. */
    img = db_image_read_memory(good, size - 2, "no-eoi.jpg");
    CHECK(img && img->width == 64);
    db_image_free(img);
    /* Entropy-coded data that stops short of the image (an end marker in its
    ** middle) is an error, not a partly gray image. */
    uint8_t *bad = malloc(size);
    memcpy(bad, good, size);
    bad[size / 2] = 0xff;
    bad[size / 2 + 1] = 0xd9;
    expect_failure("short-data.jpg", bad, size, DB_ERR_FORMAT, "JPEG", 0);
    /* A header declaring the largest JPEG, with no data. */
    memcpy(bad, good, size);
    for (size_t i = 2; i + 8 < size; i++)
        if (bad[i] == 0xff && (bad[i + 1] == 0xc0 || bad[i + 1] == 0xc2)) {
            bad[i + 5] = bad[i + 6] = bad[i + 7] = bad[i + 8] = 0xff;
            expect_failure("huge.jpg", bad, i + 20, DB_OK, NULL, 0);
            break;
        }
    free(bad);
    free(good);
    uint8_t *cmyk = make_jpeg(16, 16, JCS_CMYK, 4, &size);
    if (CHECK(cmyk))
        expect_failure("cmyk.jpg", cmyk, size, DB_ERR_FORMAT, "CMYK", 0);
    free(cmyk);
    uint8_t *gray = make_jpeg(16, 8, JCS_GRAYSCALE, 1, &size);
    img = gray ? db_image_read_memory(gray, size, "gray.jpg") : NULL;
    CHECK(img && img->channels == 1 && img->width == 16 && img->height == 8);
    db_image_free(img);
    free(gray);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void test_bad_jp2(void)
{
    static const uint8_t signature[12] = { 0, 0, 0, 12, 'j', 'P', ' ', ' ', '\r', '\n', 0x87, '\n' };
    uint8_t garbage[600];
    memcpy(garbage, signature, sizeof signature);
    for (size_t i = sizeof signature; i < sizeof garbage; i++)
        garbage[i] = (uint8_t)sample((int)i, 3, 9, 255);
    expect_failure("garbage.jp2", garbage, sizeof garbage, DB_ERR_FORMAT, "JPEG 2000", 0);
    expect_failure("signature-only.jp2", garbage, sizeof signature, DB_ERR_FORMAT, "JPEG 2000", 0);
    /* A bare codestream: SOC, SIZ, then garbage. */
    uint8_t cs[200] = { 0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0 };
    for (size_t i = 8; i < sizeof cs; i++)
        cs[i] = (uint8_t)sample((int)i, 5, 1, 255);
    expect_failure("garbage.j2k", cs, sizeof cs, DB_ERR_FORMAT, "JPEG 2000", 0);
    /* SIZ declaring a 900000x900000 gray image in one tile: the memory limit. */
    uint8_t siz[47] = { 0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0 };
    put_be32(siz + 8, 900000);  /* Xsiz */
    put_be32(siz + 12, 900000); /* Ysiz */
    put_be32(siz + 24, 900000); /* XTsiz */
    put_be32(siz + 28, 900000); /* YTsiz */
    siz[41] = 1;                /* Csiz: one component */
    siz[42] = 7;                /* of 8 bits */
    siz[43] = siz[44] = 1;      /* not subsampled */
    siz[45] = 0xff;             /* EOC */
    siz[46] = 0xd9;
    expect_failure("huge.j2k", siz, sizeof siz, DB_ERR_NOMEM, "limit", 0);
    /* 1000x1000 in a million one-pixel tiles: more than the file could hold. */
    put_be32(siz + 8, 1000);
    put_be32(siz + 12, 1000);
    put_be32(siz + 24, 1);
    put_be32(siz + 28, 1);
    expect_failure("tiles.j2k", siz, sizeof siz, DB_ERR_FORMAT, "tiles", 0);
}

int main(void)
{
    umask(022);
    if (!mkdtemp(temp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    /* First, while the process is small, so that its peak measures it. */
    test_many_pages();
    test_tiff_layouts();
    test_tiff_resolution();
    test_multi_page();
    test_tiff_writer();
    capture_stderr();
    test_bad_tiff();
    test_bad_jpeg();
    test_bad_jp2();
    char printed[2000];
    size_t n = release_stderr(printed, sizeof printed);
    if (!CHECK(n == 0))
        fprintf(stderr, "  printed while reading bad files:\n%s\n", printed);
    remove_tree(temp_dir);
    if (failures) {
        fprintf(stderr, "test_formats: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("test_formats: all %d checks passed\n", checks);
    return 0;
}
