/*
** codec_bench.c — one page's codec steps, medians of warm runs: its PNG decode
** through the libdeflate path and through libpng, its 1-bit PNG encode, and,
** given a binary page, its Group 4 TIFF encode through docbin's encoder and
** through libtiff's (each packing the rows and writing the file); given an LZW
** TIFF, its strips decoded by docbin's decoder (from their bytes, read
** beforehand) and by libtiff's (which reads them itself, a copy from the page
** cache): what each fast path gains.
** usage: codec_bench PAGE.png [RUNS] [BINARY.png [LZW.tif]]
*/
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <tiffio.h>
#include <unistd.h>
#include "runtime/codec.h"
#include "runtime/util.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The page as libtiff's own Group 4 encoder writes it, a row at a time, packed
** as docbin packs it (min-is-white: 1 is ink). */
static void libtiff_g4(const db_image *page, const char *path)
{
    TIFF *t = TIFFOpen(path, "w");
    db_bitmap *bm = db_bitmap_pack(page);
    size_t row_bytes = ((size_t)page->width + 7) / 8;
    uint8_t *packed = malloc(row_bytes);
    if (t && bm && packed && TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)page->width) &&
        TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)page->height) && TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 1) &&
        TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1) &&
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISWHITE) &&
        TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_CCITTFAX4) &&
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)page->height))
        for (int y = 0; y < page->height; y++) {
            for (size_t i = 0; i < row_bytes; i++)
                packed[i] = (uint8_t)~bm->data[(size_t)y * bm->stride + i];
            TIFFWriteScanline(t, packed, (uint32_t)y, 0);
        }
    db_bitmap_free(bm);
    free(packed);
    if (t)
        TIFFClose(t);
}

/* The strips of an LZW TIFF decoded by docbin's decoder (`ours`) or by
** libtiff's, every strip's compressed bytes read beforehand; false when a
** strip does not decode. */
static bool lzw_strips(TIFF *t, uint8_t *const *raw, const size_t *raw_n, uint8_t *work, bool ours)
{
    uint32_t strips = TIFFNumberOfStrips(t), rows = 0, height = 0;
    TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rows);
    TIFFGetField(t, TIFFTAG_IMAGELENGTH, &height);
    for (uint32_t s = 0; s < strips; s++) {
        uint32_t n = height - s * rows < rows ? height - s * rows : rows;
        size_t want = (size_t)TIFFVStripSize(t, n);
        if (ours ? !db_lzw_decode(raw[s], raw_n[s], work, want)
                 : TIFFReadEncodedStrip(t, s, work + DB_LZW_BEFORE, (tmsize_t)want) != (tmsize_t)want)
            return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    char *bytes;
    size_t n;
    int runs = argc > 2 ? atoi(argv[2]) : 20;
    if (argc < 2 || runs < 1 || runs > 1000 || db_read_file(argv[1], (size_t)1 << 30, &bytes, &n) != DB_OK) {
        fprintf(stderr, "usage: codec_bench PAGE.png [RUNS 1..1000] [BINARY.png [LZW.tif]]: %s\n",
                db_error_message());
        return 2;
    }
    db_image *binary = argc > 3 ? db_image_read(argv[3]) : NULL;
    if (argc > 3 && !binary) {
        fprintf(stderr, "codec_bench: %s\n", db_error_message());
        return 2;
    }
    char tif[] = "/tmp/codec_bench_XXXXXX";
    int fd = mkstemp(tif);
    if (fd < 0)
        return 2;
    close(fd);
    double ms[1000];
    const char *names[] = {"png decode-libdeflate", "png decode-libpng", "png encode-1bit", "g4 encode-docbin",
                           "g4 encode-libtiff"};
    db_image *page = db_png_read((const uint8_t *)bytes, n, argv[1]);
    for (int what = 0; page && what < (binary ? 5 : 3); what++) {
        for (int r = 0; r <= runs; r++) {
            uint64_t t = db_now_ns();
            if (what == 2) {
                FILE *f = fopen("/dev/null", "w");
                db_bitmap *bm = db_bitmap_pack(page);
                db_png_write_bitmap(bm, f, "/dev/null");
                db_bitmap_free(bm);
                fclose(f);
            } else if (what == 3) {
                db_image_write(binary, tif, DB_FILE_TIFF, 1);
            } else if (what == 4) {
                libtiff_g4(binary, tif);
            } else {
                db_image_free(what ? db_png_read_libpng((const uint8_t *)bytes, n, argv[1])
                                   : db_png_read((const uint8_t *)bytes, n, argv[1]));
            }
            if (r > 0)
                ms[r - 1] = (double)(db_now_ns() - t) / 1e6;
        }
        qsort(ms, (size_t)runs, sizeof ms[0], cmp);
        printf("%s ms=%.3f min=%.3f max=%.3f runs=%d\n", names[what], ms[runs / 2], ms[0], ms[runs - 1], runs);
    }
    if (argc > 4) { /* the LZW page's strips */
        TIFF *t = TIFFOpen(argv[4], "r");
        uint32_t strips = t ? TIFFNumberOfStrips(t) : 0;
        uint8_t **raw = calloc(strips, sizeof *raw);
        size_t *raw_n = calloc(strips, sizeof *raw_n);
        uint8_t *work = t ? malloc(DB_LZW_BEFORE + (size_t)TIFFStripSize(t) + DB_LZW_AFTER) : NULL;
        bool ok = t && raw && raw_n && work;
        for (uint32_t s = 0; ok && s < strips; s++) {
            raw_n[s] = (size_t)TIFFGetStrileByteCount(t, s);
            ok = (raw[s] = malloc(raw_n[s] + 1)) && TIFFReadRawStrip(t, s, raw[s], (tmsize_t)raw_n[s]) == (tmsize_t)raw_n[s];
        }
        const char *lzw_names[] = {"lzw decode-docbin", "lzw decode-libtiff"};
        for (int what = 0; ok && what < 2; what++) {
            for (int r = 0; ok && r <= runs; r++) {
                uint64_t t0 = db_now_ns();
                ok = lzw_strips(t, raw, raw_n, work, what == 0);
                if (r > 0)
                    ms[r - 1] = (double)(db_now_ns() - t0) / 1e6;
            }
            qsort(ms, (size_t)runs, sizeof ms[0], cmp);
            if (ok)
                printf("%s ms=%.3f min=%.3f max=%.3f runs=%d\n", lzw_names[what], ms[runs / 2], ms[0], ms[runs - 1],
                       runs);
        }
        if (!ok)
            fprintf(stderr, "codec_bench: %s: not an LZW TIFF whose strips decode\n", argv[4]);
        for (uint32_t s = 0; raw && s < strips; s++)
            free(raw[s]);
        free(raw);
        free(raw_n);
        free(work);
        if (t)
            TIFFClose(t);
    }
    unlink(tif);
    db_image_free(page);
    db_image_free(binary);
    free(bytes);
    return page ? 0 : 1;
}
