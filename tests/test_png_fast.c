/*
** test_png_fast.c — the libdeflate PNG path against libpng: PNGs written here
** with libpng itself (every filter, several IDAT chunks, a resolution) decode
** to exactly libpng's pixels and resolution through the fast path, which
** takes them; files it must leave to libpng (palette, transparency, 16 bits,
** interlacing, a bad checksum) are left; and what the fast writer makes,
** libpng reads back as the page thresholded at 128.
*/
#define _GNU_SOURCE
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/codec.h"
#include "tests/testutil.h"

typedef struct buffer {
    uint8_t *data;
    size_t size, cap;
} buffer;

static void put(png_structp png, png_bytep data, png_size_t n)
{
    buffer *b = png_get_io_ptr(png);
    if (b->size + n > b->cap) {
        b->cap = (b->size + n) * 2;
        b->data = realloc(b->data, b->cap);
    }
    memcpy(b->data + b->size, data, n);
    b->size += n;
}

static void flush(png_structp png)
{
    (void)png;
}

/* A PNG of `pixels` written by libpng with `filters`, the IDAT split every
** `chunk` bytes, depth 8 unless `depth`; interlaced and tRNS on request. */
static buffer libpng_file(const uint8_t *pixels, int w, int h, int channels, int filters, int chunk, int interlace,
                          int trns, int ppm)
{
    buffer b = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png)))
        abort();
    png_set_write_fn(png, &b, put, flush);
    png_set_IHDR(png, info, w, h, 8, channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, 0, filters);
    png_set_compression_buffer_size(png, (size_t)chunk);
    if (ppm)
        png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
    if (trns) {
        png_color_16 key = {.gray = pixels[0], .red = pixels[0], .green = pixels[0], .blue = pixels[0]};
        png_set_tRNS(png, info, NULL, 0, &key);
    }
    png_write_info(png, info);
    int passes = png_set_interlace_handling(png);
    for (int p = 0; p < passes; p++)
        for (int y = 0; y < h; y++)
            png_write_row(png, (png_bytep)pixels + (size_t)y * w * channels);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return b;
}

static bool same(const db_image *a, const db_image *b)
{
    if (!a || !b || a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->dpi_x != b->dpi_x || a->dpi_y != b->dpi_y)
        return false;
    for (int y = 0; y < a->height; y++)
        if (memcmp(a->data + (size_t)y * a->stride, b->data + (size_t)y * b->stride,
                   (size_t)a->width * (size_t)a->channels))
            return false;
    return true;
}

static void test_decode(void)
{
    static const int filters[] = {PNG_FILTER_NONE, PNG_FILTER_SUB, PNG_FILTER_UP, PNG_FILTER_AVG, PNG_FILTER_PAETH,
                                  PNG_ALL_FILTERS};
    static const int sizes[][2] = {{1, 1}, {2, 3}, {17, 5}, {64, 48}, {255, 31}};
    uint32_t rng = 7;
    int cases = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int channels = 1; channels <= 3; channels += 2)
            for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++) {
                int w = sizes[s][0], h = sizes[s][1];
                uint8_t *px = malloc((size_t)w * h * channels);
                for (size_t i = 0; i < (size_t)w * h * channels; i++) /* smooth with noise: every filter works */
                    px[i] = (uint8_t)(i * 3 / (size_t)channels + test_random(&rng) % 9);
                buffer b = libpng_file(px, w, h, channels, filters[f], 37 + (int)f * 100, 0, 0, f % 2 ? 11811 : 0);
                bool handled;
                db_image *fast = db_png_read_fast(b.data, b.size, "t", &handled);
                db_image *ref = db_png_read_libpng(b.data, b.size, "t");
                CHECK(handled && same(fast, ref), "%dx%d x%d filters %d: fast path %s libpng's", w, h, channels,
                      filters[f], handled ? "differs from" : "left it to");
                CHECK(!(f % 2) || (fast && fast->dpi_x == 300), "pHYs 11811 read as %g dpi", fast ? fast->dpi_x : 0);
                db_image_free(fast);
                db_image_free(ref);
                free(b.data);
                free(px);
                cases++;
            }
    printf("ok   %d PNGs of every filter decode as libpng decodes them\n", cases);

    /* What the fast path leaves to libpng, which then decodes (or refuses) it as ever. */
    uint8_t px[64 * 48 * 3];
    for (size_t i = 0; i < sizeof px; i++)
        px[i] = (uint8_t)(i * 7);
    buffer left[3] = {libpng_file(px, 64, 48, 1, PNG_ALL_FILTERS, 8192, 1, 0, 0),
                      libpng_file(px, 64, 48, 3, PNG_ALL_FILTERS, 8192, 0, 1, 0),
                      libpng_file(px, 64, 48, 1, PNG_ALL_FILTERS, 8192, 0, 0, 0)};
    left[2].data[left[2].size - 20] ^= 1; /* a byte of the last IDAT: its checksum is wrong */
    for (int i = 0; i < 3; i++) {
        bool handled = true;
        db_image *img = db_png_read_fast(left[i].data, left[i].size, "t", &handled);
        CHECK(!handled && !img, "case %d: the fast path took a file that is libpng's", i);
        db_image *via = db_png_read(left[i].data, left[i].size, "t");
        db_image *ref = db_png_read_libpng(left[i].data, left[i].size, "t");
        CHECK(i == 2 ? !via && !ref : same(via, ref), "case %d: db_png_read differs from libpng", i);
        db_image_free(via);
        db_image_free(ref);
        free(left[i].data);
    }
    printf("ok   interlaced, transparent and damaged PNGs left to libpng\n");
}

static void test_encode(void)
{
    uint32_t rng = 3;
    for (int bits = 1; bits <= 8; bits += 7)
        for (int w = 1; w <= 70; w += 23) {
            db_image *img = db_image_new(w, 9, 1);
            for (int i = 0; i < w * 9; i++)
                img->data[i] = (uint8_t)test_random(&rng);
            img->dpi_x = img->dpi_y = 300;
            char *text = NULL;
            size_t size = 0;
            FILE *f = open_memstream(&text, &size);
            db_bitmap *bm = bits == 1 ? db_bitmap_pack(img) : NULL;
            CHECK((bits == 1 ? db_png_write_bitmap(bm, f, "t") : db_png_write_fast(img, f, "t")) == DB_OK,
                  "write: %s", db_error_message());
            db_bitmap_free(bm);
            fclose(f);
            db_image *back = db_png_read_libpng((const uint8_t *)text, size, "t");
            bool ok = back && back->width == w && back->height == 9 && back->dpi_x == 300;
            for (int i = 0; ok && i < w * 9; i++)
                ok = back->data[i] == (bits == 8 ? img->data[i] : img->data[i] >= 128 ? 255 : 0);
            CHECK(ok, "%d-bit page %d wide: libpng reads back other pixels", bits, w);
            db_image_free(back);
            db_image_free(img);
            free(text);
        }
    printf("ok   the fast writer's 1-bit and 8-bit pages read back by libpng\n");
}

int main(void)
{
    test_decode();
    test_encode();
    return test_result("png_fast");
}
