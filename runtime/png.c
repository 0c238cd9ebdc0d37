/*
** png.c — PNG reading and writing with libpng.
**
** libpng reports errors by calling an error function that must not return;
** ours records the message and longjmps back to the reader or writer, so a
** bad file becomes an error message, never a print to stderr or an abort.
** Warnings are dropped for the same reason (the result is still correct).
*/
#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/codec.h"

/* What the libpng callbacks need: the bytes being read (or the file being
** written) and room for libpng's last error message. */
struct png_stream {
    const uint8_t *bytes;
    size_t size;
    size_t pos;
    FILE *file;
    int write_errno;   /* errno of a failed fwrite, 0 if none */
    char message[200];
};

static void on_error(png_structp png, png_const_charp message)
{
    struct png_stream *stream = png_get_error_ptr(png);
    snprintf(stream->message, sizeof stream->message, "%s", message ? message : "error");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message)
{
    (void)png;
    (void)message;
}

static void read_bytes(png_structp png, png_bytep out, png_size_t length)
{
    struct png_stream *stream = png_get_io_ptr(png);
    if (length > stream->size - stream->pos)
        png_error(png, "file ends early");
    memcpy(out, stream->bytes + stream->pos, length);
    stream->pos += length;
}

static void write_bytes(png_structp png, png_bytep data, png_size_t length)
{
    struct png_stream *stream = png_get_io_ptr(png);
    if (fwrite(data, 1, length, stream->file) != length) {
        stream->write_errno = errno ? errno : EIO;
        png_error(png, "write failed");
    }
}

static void flush_bytes(png_structp png)
{
    (void)png;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Walks the chunks before libpng sees them: every declared length must fit in
** the bytes that are there. libpng allocates (and clears) a chunk's declared
** length before it reads the data, so a 44-byte file declaring a 2 GB text
** chunk would otherwise cost 2 GB. The walk stops at IEND; what follows is
** ignored, as libpng does. */
static db_status check_chunks(const uint8_t *bytes, size_t size, const char *name)
{
    size_t pos = 8;
    while (pos < size) {
        if (size - pos < 8)
            return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated PNG (the file ends inside a chunk header at "
                           "byte %zu); re-export the file", name, pos);
        uint32_t length = be32(bytes + pos);
        char type[5];
        for (int i = 0; i < 4; i++) {
            uint8_t c = bytes[pos + 4 + (size_t)i];
            type[i] = (char)((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : '?');
        }
        type[4] = '\0';
        if (length > PNG_UINT_31_MAX)
            return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated PNG (chunk %s at byte %zu declares %lu bytes, more "
                           "than PNG allows); re-export the file", name, type, pos, (unsigned long)length);
        if ((uint64_t)length + 12 > size - pos)
            return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated PNG (chunk %s at byte %zu declares %lu bytes; the "
                           "file ends %zu bytes later); re-export the file", name, type, pos,
                           (unsigned long)length, size - pos - 8);
        pos += (size_t)length + 12;
        if (memcmp(type, "IEND", 4) == 0)
            break;
    }
    return DB_OK;
}

/* The chunks docbin does not use: libpng skips them unread rather than
** allocating and decompressing them (text, ICC profiles, EXIF...). */
static const png_byte ignored_chunks[] = {
    'b', 'K', 'G', 'D', '\0', 'c', 'H', 'R', 'M', '\0', 'e', 'X', 'I', 'f', '\0', 'g', 'A', 'M', 'A', '\0',
    'h', 'I', 'S', 'T', '\0', 'i', 'C', 'C', 'P', '\0', 'i', 'T', 'X', 't', '\0', 'o', 'F', 'F', 's', '\0',
    'p', 'C', 'A', 'L', '\0', 's', 'B', 'I', 'T', '\0', 's', 'C', 'A', 'L', '\0', 's', 'P', 'L', 'T', '\0',
    's', 'R', 'G', 'B', '\0', 't', 'E', 'X', 't', '\0', 't', 'I', 'M', 'E', '\0', 'z', 'T', 'X', 't', '\0',
};

/* Chunks docbin reads are small (a palette is 768 bytes); this bounds what
** libpng may allocate for any one of them. */
enum { CHUNK_MALLOC_MAX = 1 << 20 };

/* The sides that IHDR declares: IHDR is always the first chunk, width at byte
** 16 and height at 20, big-endian. False when the bytes hold no IHDR there. */
static bool ihdr_sides(const uint8_t *bytes, size_t size, unsigned long *width, unsigned long *height)
{
    if (size < 24 || memcmp(bytes + 12, "IHDR", 4) != 0)
        return false;
    *width = (unsigned long)bytes[16] << 24 | (unsigned long)bytes[17] << 16 | (unsigned long)bytes[18] << 8
             | bytes[19];
    *height = (unsigned long)bytes[20] << 24 | (unsigned long)bytes[21] << 16 | (unsigned long)bytes[22] << 8
              | bytes[23];
    return true;
}

/* libpng's own limit check on IHDR reports "Image width exceeds user limit";
** checking the declared size first gives the same message as every other
** oversized image. Only the sides are checked here; the full check, with the
** channel count, follows png_read_info. */
static db_status check_declared_sides(const uint8_t *bytes, size_t size, const char *name)
{
    unsigned long width, height;
    if (ihdr_sides(bytes, size, &width, &height) && (width > DB_IMAGE_MAX_SIDE || height > DB_IMAGE_MAX_SIDE))
        return db_image_check_size((long long)width, (long long)height, 1, name);
    return DB_OK;
}

/* The stream lives in the caller: it is changed between setjmp and longjmp,
** and only objects outside the function that calls setjmp keep such changes
** reliably (or volatile ones, which libpng's void pointers cannot carry). */
static db_image *decode(struct png_stream *stream, const char *name)
{
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, stream, on_error,
                                             on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        db_fail(DB_ERR_NOMEM, "%s: out of memory starting the PNG reader", name);
        return NULL;
    }
    /* Changed after setjmp and used after a longjmp, hence volatile. */
    db_image *volatile img = NULL;
    uint8_t *volatile alpha_rows = NULL;

    if (setjmp(png_jmpbuf(png))) {
        db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated PNG (libpng: %s); re-export the file",
                name, stream->message);
        goto fail;
    }
    png_set_read_fn(png, stream, read_bytes);
    png_set_user_limits(png, DB_IMAGE_MAX_SIDE, DB_IMAGE_MAX_SIDE);
    png_set_chunk_malloc_max(png, CHUNK_MALLOC_MAX);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, ignored_chunks,
                                (int)(sizeof ignored_chunks / 5));
    png_read_info(png, info);

    png_uint_32 width = png_get_image_width(png, info);
    png_uint_32 height = png_get_image_height(png, info);
    int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    int channels = (color_type & PNG_COLOR_MASK_COLOR) ? 3 : 1;
    int has_alpha = (color_type & PNG_COLOR_MASK_ALPHA)
                    || png_get_valid(png, info, PNG_INFO_tRNS);
    int row_channels = channels + (has_alpha ? 1 : 0);
    if (db_image_check_size(width, height, channels, name) != DB_OK)
        goto fail;
    /* Deflate expands data at most 1032 times, so a file smaller than its
    ** pixel data / 1032 cannot hold the image. Refusing it here keeps a tiny
    ** file from making the reader allocate gigabytes. */
    unsigned long long pixel_bytes = (unsigned long long)width * height
                                     * png_get_channels(png, info) * (unsigned)bit_depth / 8;
    if (pixel_bytes / 1032 > stream->size) {
        db_fail(DB_ERR_FORMAT, "%s: truncated PNG (%zu bytes cannot hold a %lux%lu image); "
                "re-export the file", name, stream->size, (unsigned long)width,
                (unsigned long)height);
        goto fail;
    }

    if (color_type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    /* Rounds v*255/65535 to nearest, where png_set_strip_16 would truncate. */
    if (bit_depth == 16)
        png_set_scale_16(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_bit_depth(png, info) != 8 || png_get_channels(png, info) != row_channels
        || png_get_rowbytes(png, info) != (size_t)width * (size_t)row_channels) {
        db_fail(DB_ERR_FORMAT, "%s: unsupported PNG layout (colour type %d, %d bits); "
                "re-export the file as 8-bit gray or RGB", name, color_type, bit_depth);
        goto fail;
    }

    img = db_image_alloc((int)width, (int)height, channels);
    if (!img) {
        db_fail(DB_ERR_NOMEM, "%s: out of memory for a %lux%lu image", name,
                (unsigned long)width, (unsigned long)height);
        goto fail;
    }
    png_uint_32 ppm_x, ppm_y;
    int unit;
    if (png_get_pHYs(png, info, &ppm_x, &ppm_y, &unit) && unit == PNG_RESOLUTION_METER && ppm_x > 0
        && ppm_y > 0) {
        img->dpi_x = db_dpi_from_whole_units(ppm_x, 1 / 0.0254);
        img->dpi_y = db_dpi_from_whole_units(ppm_y, 1 / 0.0254);
    }
    if (!has_alpha) {
        for (int pass = 0; pass < passes; pass++)
            for (png_uint_32 y = 0; y < height; y++)
                png_read_row(png, img->data + (size_t)y * img->stride, NULL);
    } else {
        /* Interlaced passes add pixels to rows read earlier, so every row must
        ** be kept until the last pass; otherwise one row is enough. */
        size_t row_bytes = (size_t)width * (size_t)row_channels;
        size_t kept_rows = passes > 1 ? height : 1;
        if (passes > 1 && db_image_check_size(width, height, row_channels, name) != DB_OK)
            goto fail;
        alpha_rows = malloc(row_bytes * kept_rows);
        if (!alpha_rows) {
            db_fail(DB_ERR_NOMEM, "%s: out of memory reading the PNG's alpha channel", name);
            goto fail;
        }
        for (int pass = 0; pass < passes; pass++) {
            int last_pass = pass == passes - 1;
            for (png_uint_32 y = 0; y < height; y++) {
                uint8_t *in = alpha_rows + (passes > 1 ? (size_t)y * row_bytes : 0);
                png_read_row(png, in, NULL);
                if (!last_pass)
                    continue;
                uint8_t *out = img->data + (size_t)y * img->stride;
                for (png_uint_32 x = 0; x < width; x++) {
                    const uint8_t *pixel = in + (size_t)x * (size_t)row_channels;
                    unsigned alpha = pixel[channels];
                    for (int c = 0; c < channels; c++)
                        out[(size_t)x * (size_t)channels + c] = db_over_white(pixel[c], alpha);
                }
            }
        }
    }
    /* Reads the chunks after the image, so a file cut short after its pixel
    ** data (missing IEND, bad CRC) is still reported as truncated. */
    png_read_end(png, NULL);

    free(alpha_rows);
    png_destroy_read_struct(&png, &info, NULL);
    return img;

fail:
    free(alpha_rows);
    db_image_free(img);
    png_destroy_read_struct(&png, &info, NULL);
    return NULL;
}

db_status db_png_peek(const uint8_t *bytes, size_t size, const char *name, int *width, int *height,
                      int *channels)
{
    unsigned long w, h;
    if (size < 26 || !ihdr_sides(bytes, size, &w, &h))
        return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated PNG (no IHDR chunk first); re-export the file",
                       name);
    /* Colour and palette images decode to RGB, gray ones (with or without alpha) to gray. */
    int c = bytes[25] & PNG_COLOR_MASK_COLOR ? 3 : 1;
    if (db_image_check_size((long long)w, (long long)h, c, name) != DB_OK)
        return db_error_status();
    *width = (int)w;
    *height = (int)h;
    *channels = c;
    return DB_OK;
}

db_image *db_png_read_libpng(const uint8_t *bytes, size_t size, const char *name)
{
    if (check_declared_sides(bytes, size, name) != DB_OK || check_chunks(bytes, size, name) != DB_OK)
        return NULL;
    struct png_stream stream = { .bytes = bytes, .size = size };
    return decode(&stream, name);
}

db_image *db_png_read(const uint8_t *bytes, size_t size, const char *name)
{
    if (check_declared_sides(bytes, size, name) != DB_OK || check_chunks(bytes, size, name) != DB_OK)
        return NULL;
    bool handled;
    db_image *img = db_png_read_fast(bytes, size, name, &handled);
    return handled ? img : db_png_read_libpng(bytes, size, name);
}

/* As decode(), the stream belongs to the caller: an 8-bit RGB image (gray
** ones take the fast path). */
static db_status encode(const db_image *img, struct png_stream *stream, const char *path)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, stream, on_error,
                                              on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory starting the PNG writer",
                       path);
    }
    db_status status = DB_OK;

    if (setjmp(png_jmpbuf(png))) {
        if (stream->write_errno)
            status = db_image_write_failed(path, stream->write_errno);
        else
            status = db_fail(DB_ERR_IO, "cannot write %s: libpng: %s", path, stream->message);
        goto done;
    }
    png_set_write_fn(png, stream, write_bytes, flush_bytes);
    int color_type = img->channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY;
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8, color_type,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* pHYs counts dots per metre; both sides must be known to say anything. */
    if (img->dpi_x > 0 && img->dpi_y > 0) {
        double ppm_x = floor(img->dpi_x / 0.0254 + 0.5), ppm_y = floor(img->dpi_y / 0.0254 + 0.5);
        if (ppm_x >= 1 && ppm_y >= 1 && ppm_x <= PNG_UINT_31_MAX && ppm_y <= PNG_UINT_31_MAX)
            png_set_pHYs(png, info, (png_uint_32)ppm_x, (png_uint_32)ppm_y, PNG_RESOLUTION_METER);
    }
    png_write_info(png, info);
    for (int y = 0; y < img->height; y++)
        png_write_row(png, img->data + (size_t)y * img->stride);
    png_write_end(png, NULL);

done:
    png_destroy_write_struct(&png, &info);
    return status;
}

db_status db_png_write(const db_image *img, FILE *f, const char *path)
{
    if (img->channels == 1)
        return db_png_write_fast(img, f, path);
    struct png_stream stream = { .file = f };
    return encode(img, &stream, path);
}
