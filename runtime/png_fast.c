/*
** png_fast.c — the PNGs a digitisation line reads and writes most, decoded
** and encoded with libdeflate instead of libpng and zlib.
**
** A batch of A4 pages spent half its codec time in zlib and a fifth in
** libpng's row handling. Here an 8-bit gray or RGB, non-interlaced PNG whose
** chunks are all in order is inflated in one call and unfiltered row by row,
** and a gray page or a bitmap is written as one IDAT deflated in one call. Anything else
** (palettes, transparency, other depths, interlacing, a bad checksum, a
** stream that does not inflate to the image) goes to libpng, so that every
** file is decoded, or refused, as libpng would.
*/
#include <errno.h>
#include <libdeflate.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/codec.h"
#include "runtime/util.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* What the chunk walk found: the image's kind, where its IDATs are, its pHYs. */
typedef struct layout {
    uint32_t width, height;
    int channels;
    size_t idat_bytes;      /* the IDATs' data, together */
    size_t idat_at;         /* where the first IDAT's data starts in the file */
    int idats;              /* how many IDATs */
    uint32_t ppm_x, ppm_y;  /* pHYs in dots per metre, or 0 */
} layout;

/* Walks the chunks (their lengths already checked against the file, db_png_read);
** false when libpng should decode the file. */
static bool walk(const uint8_t *bytes, size_t size, layout *l)
{
    memset(l, 0, sizeof *l);
    size_t pos = 8;
    bool ihdr = false, idat = false, idat_done = false;
    while (pos + 12 <= size) {
        uint32_t length = be32(bytes + pos);
        const uint8_t *type = bytes + pos + 4, *data = type + 4;
        if (length > size - pos - 12 || libdeflate_crc32(0, type, length + 4) != be32(data + length))
            return false;
        if (!ihdr) {
            /* 8 bits, gray (0) or RGB (2), compression and filter method 0, not interlaced */
            if (memcmp(type, "IHDR", 4) || length != 13 || data[8] != 8 || (data[9] != 0 && data[9] != 2) ||
                data[10] || data[11] || data[12])
                return false;
            l->width = be32(data);
            l->height = be32(data + 4);
            l->channels = data[9] == 2 ? 3 : 1;
            ihdr = true;
        } else if (!memcmp(type, "IDAT", 4)) {
            if (idat_done)
                return false;
            if (!idat)
                l->idat_at = (size_t)(data - bytes);
            idat = true;
            l->idats++;
            l->idat_bytes += length;
        } else if (!memcmp(type, "IEND", 4)) {
            return idat;
        } else {
            idat_done = idat;
            if (!memcmp(type, "pHYs", 4) && length == 9 && data[8] == 1) {
                l->ppm_x = be32(data);
                l->ppm_y = be32(data + 4);
            } else if (!(type[0] & 0x20) || !memcmp(type, "tRNS", 4)) {
                return false; /* critical (PLTE), or transparency: libpng's */
            }
        }
        pos += (size_t)length + 12;
    }
    return false; /* no IEND */
}

/* The IDATs' data, in order, into one buffer. */
static void gather(const uint8_t *bytes, size_t size, uint8_t *out)
{
    for (size_t pos = 8; pos + 12 <= size;) {
        uint32_t length = be32(bytes + pos);
        if (!memcmp(bytes + pos + 4, "IDAT", 4)) {
            memcpy(out, bytes + pos + 8, length);
            out += length;
        }
        if (!memcmp(bytes + pos + 4, "IEND", 4))
            return;
        pos += (size_t)length + 12;
    }
}

/* Paeth's predictor, without branches. */
static inline int paeth(int a, int b, int c)
{
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    int use_b = pb < pa, m = use_b ? pb : pa, v = use_b ? b : a;
    return pc < m ? c : v;
}

/* Undoes one row's filter into `out`, `prev` being the row above (unfiltered;
** zeros for the first). The first pixel has no left neighbour: its bytes are
** done apart, so that the loops carry no test. */
static bool unfilter(int filter, const uint8_t *restrict in, const uint8_t *restrict prev, uint8_t *restrict out,
                     size_t n, size_t bpp)
{
    switch (filter) {
    case 0:
        memcpy(out, in, n);
        return true;
    case 1:
        memcpy(out, in, bpp);
        for (size_t i = bpp; i < n; i++)
            out[i] = (uint8_t)(in[i] + out[i - bpp]);
        return true;
    case 2:
        for (size_t i = 0; i < n; i++)
            out[i] = (uint8_t)(in[i] + prev[i]);
        return true;
    case 3:
        for (size_t i = 0; i < bpp; i++)
            out[i] = (uint8_t)(in[i] + (prev[i] >> 1));
        for (size_t i = bpp; i < n; i++)
            out[i] = (uint8_t)(in[i] + ((out[i - bpp] + prev[i]) >> 1));
        return true;
    case 4:
        for (size_t i = 0; i < bpp; i++)
            out[i] = (uint8_t)(in[i] + prev[i]); /* a = c = 0: the predictor is b */
        for (size_t i = bpp; i < n; i++)
            out[i] = (uint8_t)(in[i] + paeth(out[i - bpp], prev[i], prev[i - bpp]));
        return true;
    }
    return false;
}

db_image *db_png_read_fast(const uint8_t *bytes, size_t size, const char *name, bool *handled)
{
    layout l;
    *handled = false;
    if (!walk(bytes, size, &l) || l.width == 0 || l.height == 0 || l.width > DB_IMAGE_MAX_SIDE ||
        l.height > DB_IMAGE_MAX_SIDE)
        return NULL;
    size_t row = (size_t)l.width * (size_t)l.channels, raw_bytes = (row + 1) * l.height;
    /* Deflate expands at most 1032 times: a smaller file cannot hold the image (libpng says so). */
    if (raw_bytes / 1032 > size || db_image_check_size(l.width, l.height, l.channels, name) != DB_OK) {
        db_error_clear();
        return NULL;
    }
    /* One IDAT (as docbin writes them) is inflated where it lies; several are gathered first. */
    uint8_t *gathered = l.idats > 1 ? malloc(l.idat_bytes) : NULL, *raw = malloc(raw_bytes);
    const uint8_t *idat = l.idats > 1 ? gathered : bytes + l.idat_at;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    db_image *img = NULL;
    size_t got = 0;
    if (idat && raw && d) {
        if (gathered)
            gather(bytes, size, gathered);
        if (libdeflate_zlib_decompress(d, idat, l.idat_bytes, raw, raw_bytes, &got) == LIBDEFLATE_SUCCESS &&
            got == raw_bytes)
            img = db_image_alloc((int)l.width, (int)l.height, l.channels);
    }
    /* The row above the first is zeros. */
    uint8_t *zeros = img ? calloc(1, row) : NULL;
    for (uint32_t y = 0; img && y < l.height; y++) {
        const uint8_t *in = raw + (size_t)y * (row + 1);
        if (!zeros || !unfilter(in[0], in + 1, y ? img->data + (size_t)(y - 1) * img->stride : zeros,
                                img->data + (size_t)y * img->stride, row, (size_t)l.channels)) {
            db_image_free(img);
            img = NULL;
        }
    }
    free(zeros);
    free(gathered);
    free(raw);
    libdeflate_free_decompressor(d);
    if (!img) {
        db_error_clear();
        return NULL; /* libpng decodes it, or says what is wrong */
    }
    if (l.ppm_x && l.ppm_y) {
        img->dpi_x = db_dpi_from_whole_units(l.ppm_x, 1 / 0.0254);
        img->dpi_y = db_dpi_from_whole_units(l.ppm_y, 1 / 0.0254);
    }
    *handled = true;
    return img;
}

/* Appends a chunk (length, type, data, CRC) at `out`; returns the bytes written. */
static size_t put_chunk(uint8_t *out, const char *type, const uint8_t *data, size_t n)
{
    put_be32(out, (uint32_t)n);
    memcpy(out + 4, type, 4);
    if (n && out + 8 != data)
        memcpy(out + 8, data, n);
    put_be32(out + 8 + n, libdeflate_crc32(0, out + 4, n + 4));
    return n + 12;
}

/* How hard a page is deflated: level 6 gives bitonal pages within a few
** percent of zlib's size at several times zlib's speed. */
enum { LEVEL = 6 };

/* Writes a gray PNG of `bits` bits whose filtered rows (a filter byte, then
** the row) are `raw`: signature, IHDR, pHYs when the resolution is known, one
** IDAT deflated in one call, IEND. */
static db_status write_png(FILE *f, int width, int height, int bits, double dpi_x, double dpi_y, const uint8_t *raw,
                           size_t raw_bytes, const char *path)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(LEVEL);
    size_t bound = c ? libdeflate_zlib_compress_bound(c, raw_bytes) : 0;
    uint8_t *file = c ? malloc(8 + 25 + 21 + 12 + bound + 12) : NULL;
    db_status st = DB_OK;
    if (!file) {
        st = db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", path);
        goto done;
    }
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t ihdr[13], phys[9];
    put_be32(ihdr, (uint32_t)width);
    put_be32(ihdr + 4, (uint32_t)height);
    ihdr[8] = (uint8_t)bits;
    ihdr[9] = ihdr[10] = ihdr[11] = ihdr[12] = 0; /* gray, deflate, filter 0, not interlaced */
    size_t n = 0;
    memcpy(file, signature, 8);
    n += 8;
    n += put_chunk(file + n, "IHDR", ihdr, 13);
    /* pHYs counts dots per metre; both sides must be known to say anything. */
    if (dpi_x > 0 && dpi_y > 0) {
        double ppm_x = floor(dpi_x / 0.0254 + 0.5), ppm_y = floor(dpi_y / 0.0254 + 0.5);
        if (ppm_x >= 1 && ppm_y >= 1 && ppm_x <= 2147483647.0 && ppm_y <= 2147483647.0) {
            put_be32(phys, (uint32_t)ppm_x);
            put_be32(phys + 4, (uint32_t)ppm_y);
            phys[8] = 1; /* the metre */
            n += put_chunk(file + n, "pHYs", phys, 9);
        }
    }
    size_t deflated = libdeflate_zlib_compress(c, raw, raw_bytes, file + n + 8, bound);
    if (!deflated || deflated > 2147483647u) {
        st = db_fail(DB_ERR_NOMEM, "cannot write %s: the page does not fit one PNG chunk", path);
        goto done;
    }
    n += put_chunk(file + n, "IDAT", file + n + 8, deflated);
    n += put_chunk(file + n, "IEND", NULL, 0);
    if (fwrite(file, 1, n, f) != n)
        st = db_image_write_failed(path, errno);
done:
    free(file);
    libdeflate_free_compressor(c);
    return st;
}

/* Each row behind a filter byte 0 (none): bitonal and binary rows deflate
** well as they are. */
static uint8_t *unfiltered(const uint8_t *data, size_t stride, size_t row, size_t h, const char *path)
{
    uint8_t *raw = malloc((row + 1) * h);
    if (!raw) {
        db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", path);
        return NULL;
    }
    for (size_t y = 0; y < h; y++) {
        raw[y * (row + 1)] = 0;
        memcpy(raw + y * (row + 1) + 1, data + y * stride, row);
    }
    return raw;
}

db_status db_png_write_fast(const db_image *img, FILE *f, const char *path)
{
    size_t row = (size_t)img->width, h = (size_t)img->height;
    uint8_t *raw = unfiltered(img->data, img->stride, row, h, path);
    db_status st = raw ? write_png(f, img->width, img->height, 8, img->dpi_x, img->dpi_y, raw, (row + 1) * h, path)
                       : db_error_status();
    free(raw);
    return st;
}

db_status db_png_write_bitmap(const db_bitmap *bm, FILE *f, const char *path)
{
    size_t row = ((size_t)bm->width + 7) / 8, h = (size_t)bm->height;
    uint8_t *raw = unfiltered(bm->data, bm->stride, row, h, path);
    db_status st = raw ? write_png(f, bm->width, bm->height, 1, bm->dpi_x, bm->dpi_y, raw, (row + 1) * h, path)
                       : db_error_status();
    free(raw);
    return st;
}
