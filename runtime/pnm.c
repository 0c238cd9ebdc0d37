/*
** pnm.c — Netpbm images: P1–P6 read, P4/P5/P6 written.
**
** The header is magic, width, height and (except for bitmaps) maxval,
** separated by whitespace and '#' comments; binary data follows one
** whitespace character. Samples are scaled to 0..255 by v*255/maxval rounded
** to nearest. In bitmaps (P1, P4) 1 is black, the opposite of PNG's 1-bit
** gray. Comments are accepted anywhere in the plain (ASCII) formats, as
** Netpbm does.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/codec.h"

/* Larger numbers are refused as overflowing before any arithmetic. */
static const unsigned long long number_max = 4294967295u;

/* The input and where the parser stands in it. */
struct pnm_parser {
    const uint8_t *bytes;
    size_t size;
    size_t pos;
    const char *name;
};

static int is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* Skips whitespace and comments (from '#' to the end of the line). */
static void skip_space(struct pnm_parser *p)
{
    while (p->pos < p->size) {
        uint8_t c = p->bytes[p->pos];
        if (is_space(c)) {
            p->pos++;
        } else if (c == '#') {
            while (p->pos < p->size && p->bytes[p->pos] != '\n' && p->bytes[p->pos] != '\r')
                p->pos++;
        } else {
            break;
        }
    }
}

static db_status truncated(const struct pnm_parser *p, const char *what)
{
    return db_fail(DB_ERR_FORMAT, "%s: truncated PNM (the file ends where %s should be); "
                   "re-export the file", p->name, what);
}

/* Reads an unsigned decimal number after optional whitespace and comments. */
static db_status read_number(struct pnm_parser *p, const char *what, unsigned long long *out)
{
    skip_space(p);
    if (p->pos >= p->size)
        return truncated(p, what);
    uint8_t c = p->bytes[p->pos];
    if (!is_digit(c)) {
        if (c >= 0x20 && c < 0x7f)
            return db_fail(DB_ERR_FORMAT, "%s: bad PNM: expected a number for %s, found "
                           "'%c'; re-export the file", p->name, what, c);
        return db_fail(DB_ERR_FORMAT, "%s: bad PNM: expected a number for %s, found byte "
                       "0x%02x; re-export the file", p->name, what, c);
    }
    unsigned long long value = 0;
    while (p->pos < p->size && is_digit(p->bytes[p->pos])) {
        value = value * 10 + (unsigned)(p->bytes[p->pos] - '0');
        if (value > number_max)
            return db_fail(DB_ERR_FORMAT, "%s: bad PNM: %s is too large a number; "
                           "re-export the file", p->name, what);
        p->pos++;
    }
    *out = value;
    return DB_OK;
}

static db_status sample_too_large(const struct pnm_parser *p, unsigned v, unsigned maxval)
{
    return db_fail(DB_ERR_FORMAT, "%s: bad PNM: sample %u is larger than the maxval %u; "
                   "re-export the file", p->name, v, maxval);
}

/* P1: one '0' or '1' per pixel, separators optional. */
static db_status read_plain_bitmap(struct pnm_parser *p, db_image *img)
{
    for (int y = 0; y < img->height; y++) {
        uint8_t *row = img->data + (size_t)y * img->stride;
        for (int x = 0; x < img->width; x++) {
            skip_space(p);
            if (p->pos >= p->size)
                return truncated(p, "a pixel");
            uint8_t c = p->bytes[p->pos++];
            if (c != '0' && c != '1')
                return db_fail(DB_ERR_FORMAT, "%s: bad P1 bitmap: pixel (%d, %d) is not 0 or 1; "
                               "re-export the file", p->name, x, y);
            row[x] = c == '1' ? 0 : 255;
        }
    }
    return DB_OK;
}

/* P2 and P3: decimal samples. */
static db_status read_plain_samples(struct pnm_parser *p, db_image *img, unsigned maxval)
{
    size_t count = (size_t)img->width * (size_t)img->channels;
    for (int y = 0; y < img->height; y++) {
        uint8_t *row = img->data + (size_t)y * img->stride;
        for (size_t i = 0; i < count; i++) {
            unsigned long long v;
            db_status status = read_number(p, "a sample", &v);
            if (status != DB_OK)
                return status;
            if (v > maxval)
                return sample_too_large(p, (unsigned)v, maxval);
            row[i] = db_scale_to_8((unsigned)v, maxval);
        }
    }
    return DB_OK;
}

/* P4: rows of packed bits, most significant first, each row padded to a byte. */
static void read_packed_bitmap(struct pnm_parser *p, db_image *img)
{
    size_t row_bytes = ((size_t)img->width + 7) / 8;
    for (int y = 0; y < img->height; y++) {
        const uint8_t *in = p->bytes + p->pos + (size_t)y * row_bytes;
        uint8_t *row = img->data + (size_t)y * img->stride;
        for (int x = 0; x < img->width; x++)
            row[x] = (in[x / 8] & (0x80 >> (x % 8))) ? 0 : 255;
    }
}

/* P5 and P6: one byte per sample, or two (big-endian) when maxval > 255. */
static db_status read_raw_samples(struct pnm_parser *p, db_image *img, unsigned maxval)
{
    size_t count = (size_t)img->width * (size_t)img->channels;
    const uint8_t *in = p->bytes + p->pos;
    for (int y = 0; y < img->height; y++) {
        uint8_t *row = img->data + (size_t)y * img->stride;
        if (maxval == 255) {
            memcpy(row, in, count);
            in += count;
            continue;
        }
        for (size_t i = 0; i < count; i++) {
            unsigned v;
            if (maxval > 255) {
                v = (unsigned)in[0] << 8 | in[1];
                in += 2;
            } else {
                v = *in++;
            }
            if (v > maxval)
                return sample_too_large(p, v, maxval);
            row[i] = db_scale_to_8(v, maxval);
        }
    }
    return DB_OK;
}

/* Reads the header up to the maxval (none in bitmaps): the kind (1 to 6) and
** the declared sides and maxval. */
static db_status read_header(struct pnm_parser *p, int *kind, unsigned long long *width, unsigned long long *height,
                             unsigned long long *maxval)
{
    const uint8_t *bytes = p->bytes;
    size_t size = p->size;
    const char *name = p->name;
    *kind = size >= 2 && bytes[0] == 'P' ? bytes[1] - '0' : 0;
    if (*kind < 1 || *kind > 6)
        return db_fail(DB_ERR_FORMAT, "%s: not a PNM image (P1 to P6); convert it to PNG", name);
    if (size > 2 && !is_space(bytes[2]) && bytes[2] != '#')
        return db_fail(DB_ERR_FORMAT, "%s: bad PNM header (no space after the magic number P%d); "
                       "re-export the file", name, *kind);
    *maxval = 1;
    if (read_number(p, "the width", width) != DB_OK || read_number(p, "the height", height) != DB_OK)
        return db_error_status();
    if (*kind == 1 || *kind == 4)
        return DB_OK;
    if (read_number(p, "the maxval", maxval) != DB_OK)
        return db_error_status();
    if (*maxval < 1 || *maxval > 65535)
        return db_fail(DB_ERR_FORMAT, "%s: bad PNM maxval %llu (it must be 1 to 65535); "
                       "re-export the file", name, *maxval);
    return DB_OK;
}

db_status db_pnm_peek(const uint8_t *bytes, size_t size, const char *name, int *width, int *height,
                      int *channels)
{
    struct pnm_parser p = { bytes, size, 2, name };
    int kind;
    unsigned long long w, h, maxval;
    if (read_header(&p, &kind, &w, &h, &maxval) != DB_OK)
        return db_error_status();
    /* The header's last number must end inside the bytes: a number cut at
    ** their end would read as a smaller one. */
    if (p.pos >= size)
        return db_fail(DB_ERR_FORMAT, "%s: the PNM header does not end within the first %zu bytes; "
                       "shorten its comments or convert it to PNG", name, size);
    int c = kind == 3 || kind == 6 ? 3 : 1;
    if (db_image_check_size((long long)w, (long long)h, c, name) != DB_OK)
        return db_error_status();
    *width = (int)w;
    *height = (int)h;
    *channels = c;
    return DB_OK;
}

db_image *db_pnm_read(const uint8_t *bytes, size_t size, const char *name)
{
    struct pnm_parser p = { bytes, size, 2, name };
    int kind;
    unsigned long long width, height, maxval;
    if (read_header(&p, &kind, &width, &height, &maxval) != DB_OK)
        return NULL;
    int bitmap = kind == 1 || kind == 4;
    int plain = kind <= 3;
    int channels = kind == 3 || kind == 6 ? 3 : 1;
    if (db_image_check_size((long long)width, (long long)height, channels, name) != DB_OK)
        return NULL;

    /* Refuse a file too short for its header's dimensions before allocating,
    ** so a tiny file cannot make the reader allocate a large image. Plain
    ** samples need at least a digit each and, in P2/P3, a separator between. */
    size_t samples = (size_t)width * (size_t)height * (size_t)channels;
    size_t needed;
    if (plain) {
        needed = bitmap ? samples : 2 * samples - 1;
    } else {
        if (p.pos >= size) {
            truncated(&p, "the pixel data");
            return NULL;
        }
        if (!is_space(bytes[p.pos])) {
            db_fail(DB_ERR_FORMAT, "%s: bad PNM header (expected one whitespace character "
                    "before the pixel data); re-export the file", name);
            return NULL;
        }
        p.pos++;
        if (bitmap)
            needed = ((size_t)width + 7) / 8 * (size_t)height;
        else
            needed = samples * (maxval > 255 ? 2 : 1);
    }
    if (size - p.pos < needed) {
        db_fail(DB_ERR_FORMAT, "%s: truncated PNM (the header declares %llux%llu pixels but "
                "the file ends early); re-export the file", name, width, height);
        return NULL;
    }

    db_image *img = db_image_new((int)width, (int)height, channels);
    if (!img) {
        db_fail(DB_ERR_NOMEM, "%s: out of memory for a %llux%llu image", name, width, height);
        return NULL;
    }
    db_status status = DB_OK;
    if (kind == 1)
        status = read_plain_bitmap(&p, img);
    else if (plain)
        status = read_plain_samples(&p, img, (unsigned)maxval);
    else if (bitmap)
        read_packed_bitmap(&p, img);
    else
        status = read_raw_samples(&p, img, (unsigned)maxval);
    if (status != DB_OK) {
        db_image_free(img);
        return NULL;
    }
    return img;
}

db_status db_pnm_write(const db_image *img, FILE *f, const char *path)
{
    int kind = img->channels == 3 ? 6 : 5;
    if (fprintf(f, "P%d\n%d %d\n255\n", kind, img->width, img->height) < 0)
        return db_image_write_failed(path, errno);
    size_t row_bytes = (size_t)img->width * (size_t)img->channels;
    for (int y = 0; y < img->height; y++)
        if (fwrite(img->data + (size_t)y * img->stride, 1, row_bytes, f) != row_bytes)
            return db_image_write_failed(path, errno);
    return DB_OK;
}

db_status db_pnm_write_bitmap(const db_bitmap *bm, FILE *f, const char *path)
{
    if (fprintf(f, "P4\n%d %d\n", bm->width, bm->height) < 0)
        return db_image_write_failed(path, errno);
    size_t row_bytes = ((size_t)bm->width + 7) / 8;
    uint8_t *row = malloc(row_bytes);
    if (!row)
        return db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", path);
    db_status status = DB_OK;
    for (int y = 0; y < bm->height && status == DB_OK; y++) {
        const uint8_t *in = bm->data + (size_t)y * bm->stride;
        for (size_t i = 0; i < row_bytes; i++)
            row[i] = (uint8_t)~in[i]; /* PBM: 1 is ink */
        if (bm->width % 8) /* its padding bits are 0 */
            row[row_bytes - 1] &= (uint8_t)(0xff00u >> (bm->width % 8));
        if (fwrite(row, 1, row_bytes, f) != row_bytes)
            status = db_image_write_failed(path, errno);
    }
    free(row);
    return status;
}
