/*
** image.c — image allocation, the size limit, format sniffing and atomic
** file writes. The PNG and PNM codecs live in png.c and pnm.c.
*/
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/codec.h"
#include "runtime/util.h"
#include "runtime/image.h"

static const uint8_t png_signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

/* The byte limit: half the memory the process may use leaves room for the copies that
** the scheduler makes (device buffers, staging memory, the output). */
static size_t memory_limit(void)
{
    size_t half = db_memory_size() / 2;
    return half < DB_IMAGE_MAX_BYTES ? half : DB_IMAGE_MAX_BYTES;
}

/* Dimension errors are DB_ERR_FORMAT (a header asked for something no image
** can be); the byte limit is DB_ERR_NOMEM (the image is valid, the machine is
** too small). Sides are at most 10^6 and channels at most 4, so the product
** cannot overflow a long long. */
db_status db_image_check_size(long long width, long long height, int channels,
                              const char *what)
{
    if (!what)
        what = "image";
    /* 2 and 4 channels are allowed for the PNG reader's intermediate rows
    ** (gray+alpha, RGBA); db_image itself only holds 1 or 3. */
    if (channels < 1 || channels > 4)
        return db_fail(DB_ERR_USAGE, "%s: %d channels; an image has 1 (gray) or 3 (RGB)",
                       what, channels);
    if (width <= 0 || height <= 0)
        return db_fail(DB_ERR_FORMAT,
                       "%s: %lldx%lld image has no pixels; width and height must be at least 1",
                       what, width, height);
    if (width > DB_IMAGE_MAX_SIDE || height > DB_IMAGE_MAX_SIDE)
        return db_fail(DB_ERR_FORMAT,
                       "%s: %lldx%lld image is too large; each side must be at most %d pixels",
                       what, width, height, DB_IMAGE_MAX_SIDE);
    unsigned long long bytes = (unsigned long long)width * (unsigned long long)height
                               * (unsigned long long)channels;
    size_t limit = memory_limit();
    if (bytes > limit)
        return db_fail(DB_ERR_NOMEM,
                       "%s: %lldx%lld image with %d channel%s needs %llu bytes, more than the "
                       "limit of %zu (the smaller of 16 GiB and half the memory this process may use); "
                       "split or downscale the image",
                       what, width, height, channels, channels == 1 ? "" : "s", bytes, limit);
    return DB_OK;
}

db_image *db_image_new(int width, int height, int channels)
{
    if (channels != 1 && channels != 3) {
        db_fail(DB_ERR_USAGE, "db_image_new: %d channels; an image has 1 (gray) or 3 (RGB)",
                channels);
        return NULL;
    }
    if (db_image_check_size(width, height, channels, "db_image_new") != DB_OK)
        return NULL;
    db_image *img = calloc(1, sizeof *img);
    if (!img) {
        db_fail(DB_ERR_NOMEM, "db_image_new: out of memory");
        return NULL;
    }
    img->width = width;
    img->height = height;
    img->channels = channels;
    img->stride = (size_t)width * (size_t)channels;
    img->data = calloc(img->stride, (size_t)height);
    if (!img->data) {
        db_fail(DB_ERR_NOMEM, "db_image_new: cannot allocate %dx%d image with %d channel%s "
                "(%zu bytes); free memory or use a smaller image",
                width, height, channels, channels == 1 ? "" : "s",
                img->stride * (size_t)height);
        free(img);
        return NULL;
    }
    return img;
}

void db_image_free(db_image *img)
{
    if (!img)
        return;
    free(img->data);
    free(img);
}

/* A short hint for the usual causes of a failed open or write. */
static const char *io_hint(int err, int writing)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
        return writing ? " (does the directory exist?)" : " (check the path)";
    case EACCES:
    case EPERM:
        return writing ? " (is the directory writable?)" : " (check the file's permissions)";
    case EROFS:
        return " (the file system is read-only)";
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
        return " (is the disk full?)";
    case EFBIG:
        return " (the file is larger than the file size limit)";
    case EISDIR:
        return " (a directory has that name)";
    default:
        return "";
    }
}

db_status db_image_write_failed(const char *path, int err)
{
    /* A failed stdio call does not always set errno. */
    if (err == 0)
        err = EIO;
    return db_fail(DB_ERR_IO, "cannot write %s: %s%s", path, strerror(err), io_hint(err, 1));
}

/* Formats that are often met in document archives but not read here; naming
** them makes the error say what the file is rather than "unknown". */
static const struct {
    const char *name;
    size_t length;
    const char *magic;
} foreign_formats[] = {
    { "JPEG", 3, "\xff\xd8\xff" },
    { "TIFF", 4, "II*\0" },
    { "TIFF", 4, "MM\0*" },
    { "GIF", 4, "GIF8" },
    { "BMP", 2, "BM" },
    { "JPEG 2000", 12, "\0\0\0\x0cjP  \r\n\x87\n" },
    { "PDF", 5, "%PDF-" },
    { "PAM (P7)", 2, "P7" },
};

db_image *db_image_read_memory(const uint8_t *bytes, size_t size, const char *name)
{
    if (!name)
        name = "(memory)";
    if (size == 0 || !bytes) {
        db_fail(DB_ERR_FORMAT, "%s: empty file; expected a PNG or PNM image", name);
        return NULL;
    }
    if (size >= sizeof png_signature && memcmp(bytes, png_signature, sizeof png_signature) == 0)
        return db_png_read(bytes, size, name);
    if (size >= 2 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '6')
        return db_pnm_read(bytes, size, name);
    for (size_t i = 0; i < sizeof foreign_formats / sizeof foreign_formats[0]; i++) {
        if (size >= foreign_formats[i].length
            && memcmp(bytes, foreign_formats[i].magic, foreign_formats[i].length) == 0) {
            db_fail(DB_ERR_FORMAT, "%s: %s images are not supported; convert it to PNG", name,
                    foreign_formats[i].name);
            return NULL;
        }
    }
    db_fail(DB_ERR_FORMAT, "%s: not a PNG or PNM image (unrecognised signature); "
            "convert it to PNG", name);
    return NULL;
}

/* Reads from `fd` into `buf` until `cap` bytes or the end of the file; *used
** counts what is there. */
static db_status read_upto(int fd, const char *path, uint8_t *buf, size_t cap, size_t *used)
{
    while (*used < cap) {
        ssize_t n = read(fd, buf + *used, cap - *used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            return db_fail(DB_ERR_IO, "cannot read %s: %s%s", path, strerror(err), io_hint(err, 0));
        }
        if (n == 0)
            break;
        *used += (size_t)n;
    }
    return DB_OK;
}

/* Reads all of `fd`. Works for pipes too, where the size is not known. */
static db_status read_all(int fd, const char *path, size_t size_hint, uint8_t **out,
                          size_t *out_size)
{
    /* One byte more than the size so that the read that finds the end of the
    ** file needs no reallocation. */
    size_t capacity = size_hint > 0 ? size_hint + 1 : 65536;
    size_t used = 0;
    uint8_t *buffer = malloc(capacity);
    if (!buffer)
        return db_fail(DB_ERR_NOMEM, "cannot read %s: %zu bytes do not fit in memory", path,
                       capacity);
    for (;;) {
        db_status st = read_upto(fd, path, buffer, capacity, &used);
        if (st != DB_OK) {
            free(buffer);
            return st;
        }
        if (used < capacity)
            break; /* the end of the file */
        size_t larger = capacity * 2;
        uint8_t *grown = larger > capacity ? realloc(buffer, larger) : NULL;
        if (!grown) {
            free(buffer);
            return db_fail(DB_ERR_NOMEM, "cannot read %s: more than %zu bytes do not fit "
                           "in memory", path, capacity);
        }
        buffer = grown;
        capacity = larger;
    }
    *out = buffer;
    *out_size = used;
    return DB_OK;
}

db_image *db_image_read(const char *path)
{
    if (!path) {
        db_fail(DB_ERR_USAGE, "db_image_read: no path given");
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        db_fail(DB_ERR_IO, "cannot read %s: %s%s", path, strerror(err), io_hint(err, 0));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        db_fail(DB_ERR_IO, "cannot read %s: %s", path, strerror(err));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        db_fail(DB_ERR_IO, "cannot read %s: it is a directory, not an image file", path);
        return NULL;
    }
    size_t hint = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    db_status status = read_all(fd, path, hint, &bytes, &size);
    close(fd);
    if (status != DB_OK)
        return NULL;
    db_image *img = db_image_read_memory(bytes, size, path);
    free(bytes);
    return img;
}

db_status db_image_peek(const char *path, int *width, int *height, int *channels)
{
    /* Only regular files are opened: a pipe's bytes, once read, would be gone
    ** for the decode, and even opening a FIFO releases a writer waiting for its
    ** reader. Non-blocking and checked again, for a path replaced meanwhile. */
    struct stat st;
    if (stat(path, &st) != 0) {
        int err = errno;
        return db_fail(DB_ERR_IO, "cannot read %s: %s%s", path, strerror(err), io_hint(err, 0));
    }
    const char *not_regular = "%s is not a regular file: its header can only be read with the image";
    if (!S_ISREG(st.st_mode))
        return db_fail(DB_ERR_IO, not_regular, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int err = errno;
        return db_fail(DB_ERR_IO, "cannot read %s: %s%s", path, strerror(err), io_hint(err, 0));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return db_fail(DB_ERR_IO, not_regular, path);
    }
    uint8_t head[DB_IMAGE_PEEK_BYTES];
    size_t size = 0;
    db_status read_st = read_upto(fd, path, head, sizeof head, &size);
    close(fd);
    if (read_st != DB_OK)
        return read_st;
    if (size >= sizeof png_signature && memcmp(head, png_signature, sizeof png_signature) == 0)
        return db_png_peek(head, size, path, width, height, channels);
    if (size >= 2 && head[0] == 'P' && head[1] >= '1' && head[1] <= '6')
        return db_pnm_peek(head, size, path, width, height, channels);
    return db_fail(DB_ERR_FORMAT, "%s: not a PNG or PNM image (unrecognised signature); convert it to PNG", path);
}

/* The file's format from its extension. Each PNM extension promises a kind
** of image (.pbm 1-bit, .pgm gray, .ppm RGB), so a mismatch is refused rather
** than producing, say, a P5 file named .pbm. */
static db_status format_from_name(const db_image *img, const char *path, int bits,
                                  db_file_format *format)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    const char *ext = dot ? dot + 1 : "";
    if (strcasecmp(ext, "png") == 0) {
        *format = DB_FILE_PNG;
        return DB_OK;
    }
    *format = DB_FILE_PNM;
    if (strcasecmp(ext, "pnm") == 0)
        return DB_OK;
    if (strcasecmp(ext, "pbm") == 0) {
        if (img->channels == 1 && bits == 1)
            return DB_OK;
        return db_fail(DB_ERR_USAGE, "cannot write %s: a .pbm file holds 1-bit images; "
                       "write 1 bit per pixel or name the file .pgm/.ppm/.pnm", path);
    }
    if (strcasecmp(ext, "pgm") == 0) {
        if (img->channels == 1 && bits == 8)
            return DB_OK;
        return db_fail(DB_ERR_USAGE, "cannot write %s: a .pgm file holds 8-bit gray images; "
                       "name the file .%s or .pnm", path, img->channels == 3 ? "ppm" : "pbm");
    }
    if (strcasecmp(ext, "ppm") == 0) {
        if (img->channels == 3)
            return DB_OK;
        return db_fail(DB_ERR_USAGE, "cannot write %s: a .ppm file holds RGB images and this "
                       "one is gray; name the file .%s or .pnm", path, bits == 1 ? "pbm" : "pgm");
    }
    return db_fail(DB_ERR_USAGE, "cannot write %s: unknown extension \"%s\"; use .png, .pbm, "
                   ".pgm, .ppm or .pnm, or name the format explicitly", path, ext);
}

/* Writes through a temporary file beside `path` (util.h), so that readers and
** a crash see either the old file or the whole new one. */
static db_status write_atomically(const db_image *img, const char *path, db_file_format format,
                                  int bits)
{
    db_atomic_file af;
    db_status status = db_atomic_open(&af, path);
    if (status != DB_OK)
        return status;
    if (format == DB_FILE_PNG)
        status = db_png_write(img, af.f, bits, path);
    else
        status = db_pnm_write(img, af.f, bits, path);
    if (status != DB_OK) {
        db_atomic_abort(&af);
        return status;
    }
    return db_atomic_commit(&af);
}

db_status db_image_write(const db_image *img, const char *path, db_file_format format,
                         int bits)
{
    if (!path || !*path)
        return db_fail(DB_ERR_USAGE, "db_image_write: no path given");
    if (!img || !img->data || img->width <= 0 || img->height <= 0
        || (img->channels != 1 && img->channels != 3)
        || img->stride < (size_t)img->width * (size_t)img->channels)
        return db_fail(DB_ERR_USAGE, "cannot write %s: not a valid image (need width and "
                       "height >= 1, 1 or 3 channels, stride >= width*channels)", path);
    if (img->channels == 1 && bits != 1 && bits != 8)
        return db_fail(DB_ERR_USAGE, "cannot write %s: %d bits per pixel; gray images are "
                       "written with 1 or 8", path, bits);
    if (img->channels == 3 && bits != 8)
        return db_fail(DB_ERR_USAGE, "cannot write %s: %d bits per channel; RGB images are "
                       "written with 8 (convert to gray for 1-bit output)", path, bits);
    size_t length = strlen(path);
    if (path[length - 1] == '/')
        return db_fail(DB_ERR_USAGE, "cannot write %s: the path names a directory; add a "
                       "file name", path);
    switch (format) {
    case DB_FILE_AUTO: {
        db_status status = format_from_name(img, path, bits, &format);
        if (status != DB_OK)
            return status;
        break;
    }
    case DB_FILE_PNG:
    case DB_FILE_PNM:
        break;
    default:
        return db_fail(DB_ERR_USAGE, "cannot write %s: unknown file format %d", path,
                       (int)format);
    }
    return write_atomically(img, path, format, bits);
}
