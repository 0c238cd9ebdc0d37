/*
** image.c — image allocation, the size limit, format sniffing, documents
** (the pages of a file, read one at a time) and atomic file writes. The codecs
** live in png.c, pnm.c, tiff.c, jpeg.c and jp2.c.
*/
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/codec.h"
#include "runtime/util.h"
#include "runtime/image.h"
#include "runtime/staging.h"

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

/* Below this, pixels are ordinary memory: pinning costs more than it saves. */
#define STAGED_MIN ((size_t)1 << 20)

db_image *db_image_alloc(int width, int height, int channels)
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
    size_t bytes = img->stride * (size_t)height;
    db_host_block *b = bytes >= STAGED_MIN ? db_host_take(bytes) : NULL;
    img->data = b ? b->ptr : malloc(bytes ? bytes : 1);
    if (!img->data) {
        db_fail(DB_ERR_NOMEM, "db_image_new: cannot allocate %dx%d image with %d channel%s "
                "(%zu bytes); free memory or use a smaller image",
                width, height, channels, channels == 1 ? "" : "s", bytes);
        free(img);
        return NULL;
    }
    return img;
}

db_image *db_image_new(int width, int height, int channels)
{
    db_image *img = db_image_alloc(width, height, channels);
    if (img)
        memset(img->data, 0, img->stride * (size_t)img->height);
    return img;
}

void db_image_free(db_image *img)
{
    if (!img)
        return;
    if (!db_host_give(img->data))
        free(img->data);
    free(img);
}

db_bitmap *db_bitmap_alloc(int width, int height)
{
    if (db_image_check_size(width, height, 1, "db_bitmap_alloc") != DB_OK)
        return NULL;
    db_bitmap *bm = calloc(1, sizeof *bm);
    if (!bm) {
        db_fail(DB_ERR_NOMEM, "db_bitmap_alloc: out of memory");
        return NULL;
    }
    bm->width = width;
    bm->height = height;
    bm->stride = ((size_t)width + 7) / 8;
    /* Staging memory at any size: a bitmap is what a run downloads. */
    size_t bytes = bm->stride * (size_t)height;
    db_host_block *b = db_host_take(bytes);
    bm->data = b ? b->ptr : NULL;
    if (!bm->data) {
        db_fail(DB_ERR_NOMEM, "db_bitmap_alloc: cannot allocate a %dx%d bitmap (%zu bytes)", width, height, bytes);
        free(bm);
        return NULL;
    }
    return bm;
}

/* Packs n 8-bit pixels into (n + 7) / 8 bytes, the first in the most
** significant bit, a bit set where the pixel is white (>= 128), the padding
** bits 0. Eight pixels at a time as one 64-bit word: a pixel is white when its
** top bit is set, and one multiplication gathers the eight top bits, the
** first pixel's as the byte's highest. */
static void pack_row(const uint8_t *restrict in, size_t n, uint8_t *restrict out)
{
    size_t full = n / 8;
    for (size_t i = 0; i < full; i++) {
        uint64_t x;
        memcpy(&x, in + 8 * i, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x); /* the first pixel in the lowest byte */
#endif
        x = (x >> 7) & 0x0101010101010101u; /* pixel j's top bit at bit 8j */
        out[i] = (uint8_t)((x * 0x8040201008040201u) >> 56); /* ... and at bit 7 - j of the top byte */
    }
    if (n % 8) {
        unsigned b = 0;
        for (size_t j = 0; j < n % 8; j++)
            b |= (unsigned)(in[8 * full + j] >= 128) << (7 - j);
        out[full] = (uint8_t)b;
    }
}

void db_bitmap_fill(db_bitmap *bm, const uint8_t *pixels, size_t stride)
{
    for (int y = 0; y < bm->height; y++)
        pack_row(pixels + (size_t)y * stride, (size_t)bm->width, bm->data + (size_t)y * bm->stride);
}

db_bitmap *db_bitmap_pack(const db_image *img)
{
    db_bitmap *bm = db_bitmap_alloc(img->width, img->height);
    if (!bm)
        return NULL;
    bm->dpi_x = img->dpi_x;
    bm->dpi_y = img->dpi_y;
    db_bitmap_fill(bm, img->data, img->stride);
    return bm;
}

void db_bitmap_free(db_bitmap *bm)
{
    if (bm) {
        db_host_give(bm->data); /* always staging memory */
        free(bm->g4);
        free(bm);
    }
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
    { "GIF", 4, "GIF8" },
    { "BMP", 2, "BM" },
    { "PDF", 5, "%PDF-" },
    { "PAM (P7)", 2, "P7" },
};

/* The formats read, by their signatures. */
typedef enum file_kind {
    KIND_UNKNOWN = 0,
    KIND_PNG,
    KIND_PNM,
    KIND_TIFF,
    KIND_JPEG,
    KIND_JP2 /* a JP2 file or a bare JPEG 2000 codestream */
} file_kind;

/* The most bytes sniff() looks at. */
enum { SNIFF_BYTES = 12 };

static file_kind sniff(const uint8_t *bytes, size_t size)
{
    static const uint8_t jp2_signature[12] = { 0, 0, 0, 12, 'j', 'P', ' ', ' ', '\r', '\n', 0x87, '\n' };
    if (size >= sizeof png_signature && memcmp(bytes, png_signature, sizeof png_signature) == 0)
        return KIND_PNG;
    if (size >= 2 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '6')
        return KIND_PNM;
    /* Classic TIFF (42) and BigTIFF (43), either byte order. */
    if (size >= 4 && ((bytes[0] == 'I' && bytes[1] == 'I' && (bytes[2] == 42 || bytes[2] == 43) && bytes[3] == 0)
                      || (bytes[0] == 'M' && bytes[1] == 'M' && bytes[2] == 0 && (bytes[3] == 42 || bytes[3] == 43))))
        return KIND_TIFF;
    if (size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
        return KIND_JPEG;
    if (size >= sizeof jp2_signature && memcmp(bytes, jp2_signature, sizeof jp2_signature) == 0)
        return KIND_JP2;
    /* A codestream starts with SOC and SIZ. */
    if (size >= 4 && bytes[0] == 0xff && bytes[1] == 0x4f && bytes[2] == 0xff && bytes[3] == 0x51)
        return KIND_JP2;
    return KIND_UNKNOWN;
}

/* The error for bytes that no reader takes. */
static db_status unrecognised(const uint8_t *bytes, size_t size, const char *name)
{
    for (size_t i = 0; i < sizeof foreign_formats / sizeof foreign_formats[0]; i++)
        if (size >= foreign_formats[i].length
            && memcmp(bytes, foreign_formats[i].magic, foreign_formats[i].length) == 0)
            return db_fail(DB_ERR_FORMAT, "%s: %s images are not supported; convert it to PNG or TIFF", name,
                           foreign_formats[i].name);
    return db_fail(DB_ERR_FORMAT, "%s: not an image docbin reads (PNG, PNM, TIFF, JPEG or JPEG 2000: "
                   "unrecognised signature); convert it to PNG or TIFF", name);
}

db_status db_source_read(const db_source *src, uint64_t offset, void *out, size_t n, size_t *got)
{
    *got = 0;
    if (offset >= src->size)
        return DB_OK;
    if (n > src->size - offset)
        n = (size_t)(src->size - offset);
    if (src->bytes) {
        memcpy(out, src->bytes + offset, n);
        *got = n;
        return DB_OK;
    }
    while (*got < n) {
        ssize_t r = pread(src->fd, (uint8_t *)out + *got, n - *got, (off_t)(offset + *got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            /* errno stays for the codecs, which report in their own words */
            int err = errno;
            db_status status = db_fail(DB_ERR_IO, "cannot read %s: %s%s", src->name, strerror(err),
                                       io_hint(err, 0));
            errno = err;
            return status;
        }
        if (r == 0)
            break; /* the file shrank meanwhile: the reader sees its end */
        *got += (size_t)r;
    }
    return DB_OK;
}

size_t db_codec_memory_limit(void)
{
    return memory_limit();
}

db_status db_codec_check_bytes(unsigned long long bytes, const char *what, const char *name)
{
    size_t limit = memory_limit();
    if (bytes > limit)
        return db_fail(DB_ERR_NOMEM, "%s: %s needs %llu bytes, more than the limit of %zu (the smaller of "
                       "16 GiB and half the memory this process may use); split or downscale the image",
                       name, what, bytes, limit);
    return DB_OK;
}

double db_dpi_from_whole_units(unsigned long per_unit, double unit_inches)
{
    double exact = (double)per_unit / unit_inches;
    double whole = floor(exact + 0.5);
    if (whole > 0 && floor(whole * unit_inches + 0.5) == (double)per_unit)
        return whole;
    return exact;
}

static const char *const compression_names[] = {
    [DB_COMPRESSION_DEFAULT] = "default",
    [DB_COMPRESSION_NONE] = "none",
    [DB_COMPRESSION_G4] = "g4",
    [DB_COMPRESSION_DEFLATE] = "deflate",
    [DB_COMPRESSION_LZW] = "lzw",
};
enum { N_COMPRESSIONS = sizeof compression_names / sizeof compression_names[0] };

db_status db_compression_parse(const char *name, db_compression *compression)
{
    for (int i = 0; name && i < N_COMPRESSIONS; i++)
        if (strcasecmp(name, compression_names[i]) == 0) {
            *compression = (db_compression)i;
            return DB_OK;
        }
    return db_fail(DB_ERR_USAGE, "unknown compression \"%s\"; use default, none, g4, deflate or lzw",
                   name ? name : "");
}

const char *db_compression_name(db_compression compression)
{
    return (unsigned)compression < N_COMPRESSIONS ? compression_names[compression] : "unknown";
}

/* Reads the first page of the TIFF in `src`. */
static db_image *read_tiff_first_page(const db_source *src)
{
    db_tiff *tiff = NULL;
    int pages;
    if (db_tiff_open(src, &tiff, &pages) != DB_OK)
        return NULL;
    db_image *img = db_tiff_read(tiff, 0);
    db_tiff_close(tiff);
    return img;
}

db_image *db_image_read_memory(const uint8_t *bytes, size_t size, const char *name)
{
    if (!name)
        name = "(memory)";
    if (size == 0 || !bytes) {
        db_fail(DB_ERR_FORMAT, "%s: empty file; expected an image (PNG, PNM, TIFF, JPEG or JPEG 2000)", name);
        return NULL;
    }
    db_source src = { .name = name, .bytes = bytes, .fd = -1, .size = size };
    switch (sniff(bytes, size)) {
    case KIND_PNG:
        return db_png_read(bytes, size, name);
    case KIND_PNM:
        return db_pnm_read(bytes, size, name);
    case KIND_TIFF:
        return read_tiff_first_page(&src);
    case KIND_JPEG:
        return db_jpeg_read(&src);
    case KIND_JP2:
        return db_jp2_read(&src);
    case KIND_UNKNOWN:
        break;
    }
    unrecognised(bytes, size, name);
    return NULL;
}

/* ---- Documents ---------------------------------------------------------------- */

struct db_doc {
    char *name;      /* the path or name, for messages */
    file_kind kind;
    int pages;
    db_source src;   /* its name is `name` */
    int fd;          /* owned; -1 when the bytes are in memory */
    db_tiff *tiff;
};

static void doc_free(db_doc *doc)
{
    if (!doc)
        return;
    db_tiff_close(doc->tiff);
    if (doc->fd >= 0)
        close(doc->fd);
    free(doc->name);
    free(doc);
}

void db_doc_close(db_doc *doc)
{
    doc_free(doc);
}

static db_doc *doc_new(const char *name)
{
    db_doc *doc = calloc(1, sizeof *doc);
    char *copy = strdup(name);
    if (!doc || !copy) {
        free(doc);
        free(copy);
        db_fail(DB_ERR_NOMEM, "%s: out of memory opening the file", name);
        return NULL;
    }
    doc->name = copy;
    doc->fd = -1;
    doc->src.name = copy;
    doc->src.fd = -1;
    return doc;
}

/* Recognises the format of doc->src and counts its pages. */
static db_status doc_start(db_doc *doc)
{
    if (doc->src.size == 0)
        return db_fail(DB_ERR_FORMAT, "%s: empty file; expected an image (PNG, PNM, TIFF, JPEG or JPEG 2000)",
                       doc->name);
    uint8_t head[SNIFF_BYTES];
    size_t got;
    if (db_source_read(&doc->src, 0, head, sizeof head, &got) != DB_OK)
        return db_error_status();
    doc->kind = sniff(head, got);
    doc->pages = 1;
    switch (doc->kind) {
    case KIND_UNKNOWN:
        return unrecognised(head, got, doc->name);
    case KIND_TIFF:
        return db_tiff_open(&doc->src, &doc->tiff, &doc->pages);
    default:
        return DB_OK;
    }
}

/* A document on the open descriptor `fd` of a regular file (taken over,
** closed on failure), described by `st`. */
static db_status doc_from_fd(int fd, const struct stat *st, const char *path, db_doc **out)
{
    *out = NULL;
    db_doc *doc = doc_new(path);
    if (!doc) {
        close(fd);
        return db_error_status();
    }
    doc->fd = fd;
    doc->src.fd = fd;
    doc->src.size = (uint64_t)st->st_size;
    db_status status = doc_start(doc);
    if (status != DB_OK) {
        doc_free(doc);
        return status;
    }
    *out = doc;
    return DB_OK;
}

db_status db_doc_open(const char *path, db_doc **doc)
{
    *doc = NULL;
    if (!path)
        return db_fail(DB_ERR_USAGE, "db_doc_open: no path given");
    /* O_NONBLOCK: opening a FIFO without a writer would wait forever. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return db_fail(DB_ERR_IO, "cannot read %s: %s%s", path, strerror(err), io_hint(err, 0));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return db_fail(DB_ERR_IO, "cannot read %s: %s", path, strerror(err));
    }
    /* Only regular files: a device such as /dev/zero never ends, and a pipe's
    ** bytes cannot be read again; '-' reads a page from standard input. */
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return db_fail(DB_ERR_IO, "cannot read %s: it is %s, not an image file; give a regular file%s", path,
                       S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a pipe (FIFO)" : "a device",
                       S_ISFIFO(st.st_mode) ? " (docbin-run reads one page from standard input with '-')" : "");
    }
    return doc_from_fd(fd, &st, path, doc);
}

db_status db_doc_open_memory(const uint8_t *bytes, size_t size, const char *name, db_doc **out)
{
    *out = NULL;
    db_doc *doc = doc_new(name ? name : "(memory)");
    if (!doc)
        return db_error_status();
    doc->src.bytes = bytes;
    doc->src.size = bytes ? size : 0;
    db_status status = doc_start(doc);
    if (status != DB_OK) {
        doc_free(doc);
        return status;
    }
    *out = doc;
    return DB_OK;
}

int db_doc_pages(const db_doc *doc)
{
    return doc->pages;
}

static db_status check_page(const db_doc *doc, int page)
{
    if (page < 0 || page >= doc->pages)
        return db_fail(DB_ERR_USAGE, "%s: there is no page %d; the file has %d page%s", doc->name, page + 1,
                       doc->pages, doc->pages == 1 ? "" : "s");
    return DB_OK;
}

db_status db_doc_peek_page(db_doc *doc, int page, int *width, int *height, int *channels)
{
    if (check_page(doc, page) != DB_OK)
        return db_error_status();
    switch (doc->kind) {
    case KIND_TIFF:
        return db_tiff_peek(doc->tiff, page, width, height, channels);
    case KIND_JPEG:
        return db_jpeg_peek(&doc->src, width, height, channels);
    case KIND_JP2:
        return db_jp2_peek(&doc->src, width, height, channels);
    default:
        break;
    }
    uint8_t head[DB_IMAGE_PEEK_BYTES];
    size_t size;
    if (db_source_read(&doc->src, 0, head, sizeof head, &size) != DB_OK)
        return db_error_status();
    if (doc->kind == KIND_PNG)
        return db_png_peek(head, size, doc->name, width, height, channels);
    return db_pnm_peek(head, size, doc->name, width, height, channels);
}

db_image *db_doc_read_page(db_doc *doc, int page)
{
    if (check_page(doc, page) != DB_OK)
        return NULL;
    switch (doc->kind) {
    case KIND_TIFF:
        return db_tiff_read(doc->tiff, page);
    case KIND_JPEG:
        return db_jpeg_read(&doc->src);
    case KIND_JP2:
        return db_jp2_read(&doc->src);
    default:
        break;
    }
    /* PNG and PNM are decoded from memory. */
    if (doc->src.bytes)
        return db_image_read_memory(doc->src.bytes, (size_t)doc->src.size, doc->name);
    if (doc->src.size > SIZE_MAX - 1) {
        db_fail(DB_ERR_NOMEM, "cannot read %s: %llu bytes do not fit in memory", doc->name,
                (unsigned long long)doc->src.size);
        return NULL;
    }
    size_t size = (size_t)doc->src.size, got;
    uint8_t *bytes = malloc(size);
    if (!bytes) {
        db_fail(DB_ERR_NOMEM, "cannot read %s: %zu bytes do not fit in memory", doc->name, size);
        return NULL;
    }
    db_image *img = NULL;
    if (db_source_read(&doc->src, 0, bytes, size, &got) == DB_OK)
        img = db_image_read_memory(bytes, got, doc->name);
    free(bytes);
    return img;
}

db_image *db_image_read(const char *path)
{
    db_doc *doc;
    if (db_doc_open(path, &doc) != DB_OK)
        return NULL;
    db_image *img = db_doc_read_page(doc, 0);
    db_doc_close(doc);
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
    db_doc *doc;
    if (doc_from_fd(fd, &st, path, &doc) != DB_OK)
        return db_error_status();
    db_status status = db_doc_peek_page(doc, 0, width, height, channels);
    db_doc_close(doc);
    return status;
}

/* ---- Writing ------------------------------------------------------------------ */

/* What a PNM extension promises: .pbm 1-bit, .pgm gray, .ppm RGB; .pnm any. */
typedef enum pnm_promise { PROMISE_NONE = 0, PROMISE_PBM, PROMISE_PGM, PROMISE_PPM } pnm_promise;

/* The file's format from its extension. */
static db_status format_from_name(const char *path, db_file_format *format, pnm_promise *promise)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    const char *ext = dot ? dot + 1 : "";
    static const struct {
        const char *ext;
        db_file_format format;
        pnm_promise promise;
    } names[] = {
        { "png", DB_FILE_PNG, PROMISE_NONE },  { "tif", DB_FILE_TIFF, PROMISE_NONE },
        { "tiff", DB_FILE_TIFF, PROMISE_NONE }, { "pnm", DB_FILE_PNM, PROMISE_NONE },
        { "pbm", DB_FILE_PNM, PROMISE_PBM },   { "pgm", DB_FILE_PNM, PROMISE_PGM },
        { "ppm", DB_FILE_PNM, PROMISE_PPM },
    };
    *promise = PROMISE_NONE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(ext, names[i].ext) == 0) {
            *format = names[i].format;
            *promise = names[i].promise;
            return DB_OK;
        }
    return db_fail(DB_ERR_USAGE, "cannot write %s: unknown extension \"%s\"; use .png, .tif, .tiff, .pbm, "
                   ".pgm, .ppm or .pnm, or name the format explicitly", path, ext);
}

static const char *format_name(db_file_format format)
{
    return format == DB_FILE_PNG ? "PNG" : format == DB_FILE_TIFF ? "TIFF" : "PNM";
}

/* Whether `format` takes `compression`; the error says which it does take. */
static db_status check_compression(const char *path, db_file_format format, db_compression compression)
{
    bool ok = compression == DB_COMPRESSION_DEFAULT
              || (format == DB_FILE_TIFF && (unsigned)compression < N_COMPRESSIONS)
              || (format == DB_FILE_PNG && compression == DB_COMPRESSION_DEFLATE)
              || (format == DB_FILE_PNM && compression == DB_COMPRESSION_NONE);
    if (ok)
        return DB_OK;
    return db_fail(DB_ERR_USAGE, "cannot write %s: %s files cannot be compressed with %s; %s", path,
                   format_name(format), db_compression_name(compression),
                   format == DB_FILE_PNG   ? "PNG takes deflate (its default)"
                   : format == DB_FILE_PNM ? "PNM takes none (its default)"
                                           : "use none, g4, deflate or lzw");
}

/* Every check of a page before anything is written, so that a usage error
** leaves no file behind. Each PNM extension promises a kind of image, so a
** mismatch is refused rather than producing, say, a P5 file named .pbm. */
static db_status check_page_to_write(const db_image *img, const char *path, int bits, pnm_promise promise,
                                     db_compression compression)
{
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
    if (compression == DB_COMPRESSION_G4 && bits != 1)
        return db_fail(DB_ERR_USAGE, "cannot write %s: CCITT Group 4 holds 1-bit images; write 1 bit per "
                       "pixel or compress with deflate or lzw", path);
    switch (promise) {
    case PROMISE_PBM:
        if (img->channels == 1 && bits == 1)
            return DB_OK;
        return db_fail(DB_ERR_USAGE, "cannot write %s: a .pbm file holds 1-bit images; "
                       "write 1 bit per pixel or name the file .pgm/.ppm/.pnm", path);
    case PROMISE_PGM:
        if (img->channels == 1 && bits == 8)
            return DB_OK;
        return db_fail(DB_ERR_USAGE, "cannot write %s: a .pgm file holds 8-bit gray images; "
                       "name the file .%s or .pnm", path, img->channels == 3 ? "ppm" : "pbm");
    case PROMISE_PPM:
        if (img->channels == 3)
            return DB_OK;
        return db_fail(DB_ERR_USAGE, "cannot write %s: a .ppm file holds RGB images and this "
                       "one is gray; name the file .%s or .pnm", path, bits == 1 ? "pbm" : "pgm");
    case PROMISE_NONE:
        break;
    }
    return DB_OK;
}

struct db_doc_writer {
    db_atomic_file af;   /* its path names the file in messages */
    db_file_format format;
    pnm_promise promise;
    db_compression compression;
    int pages;
    bool failed;
    db_tiff_writer *tiff;
};

/* The format and promise for `path`, and the checks that need no image. */
static db_status resolve_format(const char *path, db_file_format *format, db_compression compression,
                                pnm_promise *promise)
{
    *promise = PROMISE_NONE;
    if (!path || !*path)
        return db_fail(DB_ERR_USAGE, "cannot write: no path given");
    if (path[strlen(path) - 1] == '/')
        return db_fail(DB_ERR_USAGE, "cannot write %s: the path names a directory; add a file name", path);
    switch (*format) {
    case DB_FILE_AUTO:
        if (format_from_name(path, format, promise) != DB_OK)
            return db_error_status();
        break;
    case DB_FILE_PNG:
    case DB_FILE_PNM:
    case DB_FILE_TIFF:
        break;
    default:
        return db_fail(DB_ERR_USAGE, "cannot write %s: unknown file format %d", path, (int)*format);
    }
    return check_compression(path, *format, compression);
}

bool db_doc_takes_g4(const char *path, db_file_format format, db_compression compression)
{
    pnm_promise promise;
    if (resolve_format(path, &format, compression, &promise) != DB_OK) {
        db_error_clear(); /* the writer will say why */
        return false;
    }
    return format == DB_FILE_TIFF && (compression == DB_COMPRESSION_DEFAULT || compression == DB_COMPRESSION_G4);
}

db_status db_doc_writer_open(const char *path, db_file_format format, db_compression compression,
                             db_doc_writer **out)
{
    *out = NULL;
    pnm_promise promise;
    if (resolve_format(path, &format, compression, &promise) != DB_OK)
        return db_error_status();
    db_doc_writer *w = calloc(1, sizeof *w);
    if (!w)
        return db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", path);
    w->format = format;
    w->promise = promise;
    w->compression = compression;
    db_status status = db_atomic_open(&w->af, path);
    if (status == DB_OK && format == DB_FILE_TIFF) {
        status = db_tiff_writer_open(fileno(w->af.f), path, &w->tiff);
        if (status != DB_OK)
            db_atomic_abort(&w->af);
    }
    if (status != DB_OK) {
        free(w);
        return status;
    }
    *out = w;
    return DB_OK;
}

/* Checks a page against the writer; the status to fail the add with, or DB_OK. */
static db_status check_add(db_doc_writer *w, const db_image *img, int bits)
{
    const char *path = w->af.path;
    if (w->failed)
        return db_fail(DB_ERR_USAGE, "cannot write %s: an earlier page failed; abort the file", path);
    if (check_page_to_write(img, path, bits, w->promise, w->compression) != DB_OK)
        return db_error_status();
    if (w->format != DB_FILE_TIFF && w->pages > 0)
        return db_fail(DB_ERR_USAGE, "cannot write %s: a %s file holds one page; name the output .tif to "
                       "write several", path, format_name(w->format));
    return DB_OK;
}

/* Counts a page written, or marks the file failed. */
static db_status added(db_doc_writer *w, db_status status)
{
    if (status != DB_OK)
        w->failed = true;
    else
        w->pages++;
    return status;
}

db_status db_doc_writer_add_bitmap(db_doc_writer *w, const db_bitmap *bm)
{
    const char *path = w->af.path;
    /* The checks see the bitmap as the gray page it packs. */
    const db_image page = {.width = bm->width, .height = bm->height, .channels = 1, .stride = (size_t)bm->width,
                           .data = bm->data};
    db_status status = check_add(w, &page, 1);
    if (status != DB_OK)
        return added(w, status);
    if (w->format == DB_FILE_TIFF)
        status = db_tiff_writer_add_bitmap(w->tiff, bm, w->compression);
    else if (w->format == DB_FILE_PNG)
        status = db_png_write_bitmap(bm, w->af.f, path);
    else
        status = db_pnm_write_bitmap(bm, w->af.f, path);
    return added(w, status);
}

db_status db_doc_writer_add(db_doc_writer *w, const db_image *img, int bits)
{
    const char *path = w->af.path;
    db_status status = check_add(w, img, bits);
    if (status != DB_OK)
        return added(w, status);
    if (bits == 1) { /* every 1-bit writer takes the page packed */
        db_bitmap *bm = db_bitmap_pack(img);
        if (!bm)
            return added(w, db_error_status());
        status = db_doc_writer_add_bitmap(w, bm);
        db_bitmap_free(bm);
        return status;
    }
    if (w->format == DB_FILE_TIFF)
        status = db_tiff_writer_add(w->tiff, img, w->compression);
    else if (w->format == DB_FILE_PNG)
        status = db_png_write(img, w->af.f, path);
    else
        status = db_pnm_write(img, w->af.f, path);
    return added(w, status);
}

void db_doc_writer_abort(db_doc_writer *w)
{
    if (!w)
        return;
    if (w->tiff)
        db_tiff_writer_close(w->tiff, false);
    db_atomic_abort(&w->af);
    free(w);
}

db_status db_doc_writer_commit(db_doc_writer *w)
{
    db_status status = DB_OK;
    if (w->failed)
        status = db_fail(DB_ERR_USAGE, "cannot write %s: a page failed, so the file was not written",
                         w->af.path);
    else if (w->pages == 0)
        status = db_fail(DB_ERR_USAGE, "cannot write %s: no page was added", w->af.path);
    if (status == DB_OK && w->tiff) {
        status = db_tiff_writer_close(w->tiff, true);
        w->tiff = NULL;
    }
    if (status != DB_OK) {
        db_doc_writer_abort(w);
        return status;
    }
    status = db_atomic_commit(&w->af);
    free(w);
    return status;
}

db_status db_image_check_output(const char *path, db_file_format format, db_compression compression, int bits,
                                bool several)
{
    pnm_promise promise;
    uint8_t pixel = 0;
    const db_image gray = {.width = 1, .height = 1, .channels = 1, .stride = 1, .data = &pixel};
    if (resolve_format(path, &format, compression, &promise) != DB_OK ||
        check_page_to_write(&gray, path, bits, promise, compression) != DB_OK)
        return db_error_status();
    if (several && format != DB_FILE_TIFF)
        return db_fail(DB_ERR_USAGE, "cannot write %s: the input has several pages and a %s file holds one; "
                       "name the output .tif, or write one file a page (--split-pages)", path, format_name(format));
    return DB_OK;
}

db_status db_image_write(const db_image *img, const char *path, db_file_format format,
                         int bits)
{
    pnm_promise promise;
    if (resolve_format(path, &format, DB_COMPRESSION_DEFAULT, &promise) != DB_OK
        || check_page_to_write(img, path, bits, promise, DB_COMPRESSION_DEFAULT) != DB_OK)
        return db_error_status();
    db_doc_writer *w;
    db_status status = db_doc_writer_open(path, format, DB_COMPRESSION_DEFAULT, &w);
    if (status != DB_OK)
        return status;
    w->promise = promise;
    status = db_doc_writer_add(w, img, bits);
    if (status != DB_OK) {
        db_doc_writer_abort(w);
        return status;
    }
    return db_doc_writer_commit(w);
}
