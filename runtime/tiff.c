/*
** tiff.c — TIFF reading and writing with libtiff.
**
** Reading: every page of the main IFD chain but reduced-resolution copies
** and transparency masks; strips or tiles, contiguous or separate planes; 1,
** 2, 4, 8 or 16 bits per sample; min-is-white, min-is-black, palette and RGB,
** each with or without alpha; YCbCr only as JPEG-in-TIFF, which libjpeg turns
** into RGB; every compression libtiff decodes (none, LZW, Deflate, PackBits,
** CCITT G3/G4, JPEG...). Samples reach 8 bits as every reader brings them
** (db_scale_to_8), so a TIFF gives the pixels its PNG twin gives.
**
** Writing: 1-bit min-is-white (CCITT Group 4 by default, the archival form of
** bitonal pages, which every reader shows as black ink on white), 8-bit gray
** min-is-black and 8-bit RGB (Deflate by default), a page at a time.
**
** libtiff reports through handlers set per file: its first error becomes
** part of docbin's message, a warning while pixels are decoded fails the page
** (on_warning), other warnings are dropped, and nothing reaches stderr. Every
** strip and tile must lie inside the file, and every buffer is checked against
** the memory limit, before any pixel buffer is allocated.
*/
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>
#include "runtime/codec.h"
#include "runtime/util.h"

/* What libtiff's client procedures work on: the source being read, or the
** descriptor being written; and the first error libtiff reported. */
struct tiff_io {
    const char *name;     /* the file, which libtiff's messages often repeat */
    const db_source *src; /* reading */
    int fd;               /* writing; -1 when reading or abandoned */
    uint64_t pos;
    uint64_t size;
    int io_errno;         /* errno of a failed read or write, 0 if none */
    char message[256];
    bool decoding;        /* pixels are being decoded: warnings count (on_warning) */
    char warning[256];    /* the first warning while decoding */
};

static tmsize_t io_read(thandle_t handle, void *buf, tmsize_t n)
{
    struct tiff_io *io = handle;
    if (n < 0)
        return -1;
    size_t got = 0;
    if (io->src) {
        if (db_source_read(io->src, io->pos, buf, (size_t)n, &got) != DB_OK) {
            io->io_errno = errno ? errno : EIO;
            return -1;
        }
    } else if (io->fd >= 0) {
        while (got < (size_t)n) {
            ssize_t r = pread(io->fd, (uint8_t *)buf + got, (size_t)n - got, (off_t)(io->pos + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                io->io_errno = errno;
                return -1;
            }
            if (r == 0)
                break;
            got += (size_t)r;
        }
    } else {
        return -1;
    }
    io->pos += got;
    return (tmsize_t)got;
}

static tmsize_t io_write(thandle_t handle, void *buf, tmsize_t n)
{
    struct tiff_io *io = handle;
    if (io->fd < 0 || n < 0)
        return -1;
    size_t done = 0;
    while (done < (size_t)n) {
        ssize_t w = pwrite(io->fd, (const uint8_t *)buf + done, (size_t)n - done, (off_t)(io->pos + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            io->io_errno = w < 0 ? errno : EIO;
            return -1;
        }
        done += (size_t)w;
    }
    io->pos += done;
    if (io->pos > io->size)
        io->size = io->pos;
    return (tmsize_t)done;
}

static toff_t io_seek(thandle_t handle, toff_t offset, int whence)
{
    struct tiff_io *io = handle;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? io->pos : io->size;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
        return (toff_t)-1;
    /* toff_t is unsigned: an offset "below zero" wraps past any real file. */
    if (offset > UINT64_MAX - base)
        return (toff_t)-1;
    io->pos = base + offset;
    return io->pos;
}

static int io_close(thandle_t handle)
{
    (void)handle;
    return 0;
}

static toff_t io_size(thandle_t handle)
{
    return ((struct tiff_io *)handle)->size;
}

static int io_map(thandle_t handle, void **base, toff_t *size)
{
    (void)handle;
    (void)base;
    (void)size;
    return 0;
}

static void io_unmap(thandle_t handle, void *base, toff_t size)
{
    (void)handle;
    (void)base;
    (void)size;
}

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    (void)module;
    struct tiff_io *io = user;
    if (!io->message[0]) {
        char text[sizeof io->message];
        vsnprintf(text, sizeof text, fmt, ap);
        size_t skip = strlen(io->name);
        if (strncmp(text, io->name, skip) != 0 || strncmp(text + skip, ": ", 2) != 0)
            skip = 0;
        else
            skip += 2;
        snprintf(io->message, sizeof io->message, "%s", text + skip);
        size_t n = strlen(io->message);
        while (n > 0 && (io->message[n - 1] == '\n' || io->message[n - 1] == '.'))
            io->message[--n] = '\0';
    }
    return 1; /* handled: libtiff's global handler, which prints, is not called */
}

/* Warnings about the file's tags are dropped. While pixels are decoded a
** warning means lost data (a CCITT or JPEG strip cut short is filled in with
** a warning only), so the first is kept and fails the page; the exceptions
** leave every pixel as the file meant it: an LZW strip that lacks only its
** end code, and stray bytes between JPEG markers. */
static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    (void)module;
    struct tiff_io *io = user;
    if (!io->decoding || io->warning[0])
        return 1;
    char text[sizeof io->warning];
    vsnprintf(text, sizeof text, fmt, ap);
    if (strstr(text, "not terminated with EOI") || strstr(text, "extraneous bytes before marker"))
        return 1;
    snprintf(io->warning, sizeof io->warning, "%s", text);
    size_t n = strlen(io->warning);
    while (n > 0 && (io->warning[n - 1] == '\n' || io->warning[n - 1] == '.'))
        io->warning[--n] = '\0';
    return 1;
}

/* Opens `io` with libtiff in `mode` ("rm" or "w"), with docbin's handlers and
** memory limit; NULL when libtiff refuses (io->message says why). */
static TIFF *open_io(struct tiff_io *io, const char *name, const char *mode)
{
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts)
        return NULL;
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, (tmsize_t)db_codec_memory_limit());
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, io);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, io);
    TIFF *tif = TIFFClientOpenExt(name, mode, io, io_read, io_write, io_seek, io_close, io_size, io_map,
                                  io_unmap, opts);
    TIFFOpenOptionsFree(opts);
    return tif;
}

/* ---- Reading -------------------------------------------------------------------- */

struct db_tiff {
    TIFF *tif;
    struct tiff_io io;
    const char *name;
    int pages;
    tdir_t *dirs; /* the IFD of each page */
};

/* "name: page 2 of 5: " for a document of several pages, "name: " otherwise. */
static void where(const db_tiff *t, int page, char *out, size_t size)
{
    if (t->pages > 1)
        snprintf(out, size, "%s: page %d of %d", t->name, page + 1, t->pages);
    else
        snprintf(out, size, "%s", t->name);
}

static db_status page_fail(const db_tiff *t, int page, db_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static db_status page_fail(const db_tiff *t, int page, db_status status, const char *fmt, ...)
{
    char prefix[1200], text[800];
    where(t, page, prefix, sizeof prefix);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return db_fail(status, "%s: %s", prefix, text);
}

/* The error for a libtiff call that failed: a failed read of the file, or
** what libtiff said. */
static db_status libtiff_failed(const db_tiff *t, int page, const char *what)
{
    if (t->io.io_errno)
        return page_fail(t, page, DB_ERR_IO, "cannot read the file: %s", strerror(t->io.io_errno));
    const char *detail = t->io.message[0] ? t->io.message : t->io.warning[0] ? t->io.warning : "no detail";
    return page_fail(t, page, DB_ERR_FORMAT, "corrupt or truncated TIFF: %s (libtiff: %s); re-export the file",
                     what, detail);
}

void db_tiff_close(db_tiff *t)
{
    if (!t)
        return;
    if (t->tif)
        TIFFCleanup(t->tif);
    free(t->dirs);
    free(t);
}

db_status db_tiff_open(const db_source *src, db_tiff **out, int *pages)
{
    *out = NULL;
    db_tiff *t = calloc(1, sizeof *t);
    if (!t)
        return db_fail(DB_ERR_NOMEM, "%s: out of memory opening the TIFF", src->name);
    t->name = src->name;
    t->io.name = src->name;
    t->io.src = src;
    t->io.fd = -1;
    t->io.size = src->size;
    t->tif = open_io(&t->io, src->name, "rm");
    if (!t->tif) {
        db_status st = t->io.io_errno
                           ? db_fail(DB_ERR_IO, "cannot read %s: %s", src->name, strerror(t->io.io_errno))
                           : db_fail(DB_ERR_FORMAT, "%s: not a valid TIFF (libtiff: %s); re-export the file",
                                     src->name, t->io.message[0] ? t->io.message : "cannot open it");
        db_tiff_close(t);
        return st;
    }
    /* Walks the IFD chain once, reading each directory but no pixels. */
    int cap = 0;
    for (;;) {
        uint32_t kind = 0;
        TIFFGetField(t->tif, TIFFTAG_SUBFILETYPE, &kind);
        if (!(kind & (FILETYPE_REDUCEDIMAGE | FILETYPE_MASK))) {
            if (t->pages == cap) {
                if (!db_reserve((void **)&t->dirs, t->pages, &cap, sizeof *t->dirs)) {
                    db_tiff_close(t);
                    return db_fail(DB_ERR_NOMEM, "%s: out of memory counting the TIFF's pages", src->name);
                }
            }
            t->dirs[t->pages++] = TIFFCurrentDirectory(t->tif);
        }
        if (TIFFLastDirectory(t->tif))
            break;
        t->io.message[0] = '\0';
        if (!TIFFReadDirectory(t->tif)) {
            db_status st;
            if (t->io.io_errno)
                st = db_fail(DB_ERR_IO, "cannot read %s: %s", src->name, strerror(t->io.io_errno));
            else if (t->io.message[0])
                st = db_fail(DB_ERR_FORMAT, "%s: page %d: corrupt TIFF directory (libtiff: %s); re-export the file",
                             src->name, t->pages + 1, t->io.message);
            else /* libtiff refuses a chain that loops, or is too long, without a word */
                st = db_fail(DB_ERR_FORMAT, "%s: page %d: corrupt TIFF: the chain of directories loops back or is "
                             "too long; re-export the file", src->name, t->pages + 1);
            db_tiff_close(t);
            return st;
        }
    }
    if (t->pages == 0) {
        db_tiff_close(t);
        return db_fail(DB_ERR_FORMAT, "%s: the TIFF holds only thumbnails or masks, no page; re-export the file",
                       src->name);
    }
    *out = t;
    *pages = t->pages;
    return DB_OK;
}

/* How a page's samples become pixels. */
struct layout {
    uint32_t width, height;
    uint16_t bps, spp, photometric, planar, compression;
    int color;          /* colour samples per pixel: 1 (gray or palette index) or 3 */
    int alpha;          /* the sample that is alpha, or -1 */
    bool premultiplied; /* associated alpha */
    int channels;       /* of the decoded image */
    uint16_t *cmap[3];  /* palette: 2^bps entries of 16 bits */
    double dpi_x, dpi_y;
};

static db_status select_page(db_tiff *t, int page)
{
    t->io.message[0] = '\0';
    t->io.warning[0] = '\0';
    t->io.io_errno = 0;
    if (!TIFFSetDirectory(t->tif, t->dirs[page]))
        return libtiff_failed(t, page, "its directory cannot be read");
    return DB_OK;
}

static const char *photometric_name(uint16_t photometric)
{
    switch (photometric) {
    case PHOTOMETRIC_MASK:
        return "transparency mask";
    case PHOTOMETRIC_SEPARATED:
        return "CMYK (separated)";
    case PHOTOMETRIC_YCBCR:
        return "YCbCr";
    case PHOTOMETRIC_CIELAB:
    case PHOTOMETRIC_ICCLAB:
    case PHOTOMETRIC_ITULAB:
        return "CIE L*a*b*";
    case PHOTOMETRIC_LOGL:
    case PHOTOMETRIC_LOGLUV:
        return "LogLuv";
    default:
        return "unknown";
    }
}

/* Reads the tags of the current page into `l` and checks that docbin can
** decode it, before anything is allocated. */
static db_status read_layout(db_tiff *t, int page, struct layout *l)
{
    TIFF *tif = t->tif;
    memset(l, 0, sizeof *l);
    l->alpha = -1;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &l->width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &l->height))
        return page_fail(t, page, DB_ERR_FORMAT, "the TIFF directory has no image size; re-export the file");
    uint16_t sample_format = SAMPLEFORMAT_UINT;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &l->bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &l->spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &l->planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &l->compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &sample_format);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &l->photometric))
        return page_fail(t, page, DB_ERR_FORMAT, "the TIFF directory has no PhotometricInterpretation; "
                         "re-export the file");

    if (!TIFFIsCODECConfigured(l->compression)) {
        const TIFFCodec *codec = TIFFFindCODEC(l->compression);
        return page_fail(t, page, DB_ERR_FORMAT, "TIFF compression %u (%s) is not supported by this libtiff; "
                         "convert the file to LZW, Deflate or Group 4", l->compression,
                         codec ? codec->name : "unknown");
    }
    if (sample_format != SAMPLEFORMAT_UINT && sample_format != SAMPLEFORMAT_VOID)
        return page_fail(t, page, DB_ERR_FORMAT, "TIFF samples are %s; docbin reads unsigned integers, "
                         "convert the file to 8-bit", sample_format == SAMPLEFORMAT_IEEEFP ? "floating point"
                         : sample_format == SAMPLEFORMAT_INT ? "signed integers" : "complex numbers");
    if (l->bps != 1 && l->bps != 2 && l->bps != 4 && l->bps != 8 && l->bps != 16)
        return page_fail(t, page, DB_ERR_FORMAT, "%u bits per sample; docbin reads TIFF with 1, 2, 4, 8 or 16, "
                         "convert the file to 8-bit", l->bps);

    switch (l->photometric) {
    case PHOTOMETRIC_MINISWHITE:
    case PHOTOMETRIC_MINISBLACK:
        l->color = 1;
        l->channels = 1;
        break;
    case PHOTOMETRIC_RGB:
        l->color = 3;
        l->channels = 3;
        break;
    case PHOTOMETRIC_PALETTE:
        if (l->bps > 8)
            return page_fail(t, page, DB_ERR_FORMAT, "a %u-bit palette; docbin reads palettes of up to 256 "
                             "colours, convert the file to RGB", l->bps);
        if (!TIFFGetField(tif, TIFFTAG_COLORMAP, &l->cmap[0], &l->cmap[1], &l->cmap[2]))
            return page_fail(t, page, DB_ERR_FORMAT, "a palette TIFF without a ColorMap; re-export the file");
        l->color = 1;
        l->channels = 3;
        break;
    case PHOTOMETRIC_YCBCR:
        if (l->compression != COMPRESSION_JPEG)
            return page_fail(t, page, DB_ERR_FORMAT, "YCbCr TIFF is read only when JPEG-compressed; convert the "
                             "file to RGB");
        /* libjpeg upsamples and converts to RGB, as it does for a JPEG file. */
        if (!TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
            return libtiff_failed(t, page, "its JPEG colour mode cannot be set");
        l->color = 3;
        l->channels = 3;
        break;
    default:
        return page_fail(t, page, DB_ERR_FORMAT, "unsupported TIFF photometric interpretation %u (%s); convert "
                         "the file to gray or RGB", l->photometric, photometric_name(l->photometric));
    }
    if (l->spp < l->color)
        return page_fail(t, page, DB_ERR_FORMAT, "%u samples per pixel where the photometric interpretation "
                         "needs %d; re-export the file", l->spp, l->color);
    /* 16-bit RGBA is the widest pixel read; it bounds every buffer at 8
    ** bytes a pixel. */
    if ((unsigned)l->spp * l->bps > 64)
        return page_fail(t, page, DB_ERR_FORMAT, "%u samples of %u bits per pixel; docbin reads up to 64 bits "
                         "per pixel (16-bit RGBA), convert the file", l->spp, l->bps);
    uint16_t n_extra = 0;
    uint16_t *extra = NULL;
    if (l->spp > l->color && TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &n_extra, &extra))
        for (int i = 0; i < n_extra && l->color + i < l->spp; i++)
            if (extra[i] == EXTRASAMPLE_ASSOCALPHA || extra[i] == EXTRASAMPLE_UNASSALPHA) {
                l->alpha = l->color + i;
                l->premultiplied = extra[i] == EXTRASAMPLE_ASSOCALPHA;
                break;
            }

    char what[1200];
    where(t, page, what, sizeof what);
    if (db_image_check_size(l->width, l->height, l->channels, what) != DB_OK)
        return db_error_status();

    float x = 0, y = 0;
    uint16_t unit = RESUNIT_INCH;
    TIFFGetFieldDefaulted(tif, TIFFTAG_RESOLUTIONUNIT, &unit);
    if (TIFFGetField(tif, TIFFTAG_XRESOLUTION, &x) && TIFFGetField(tif, TIFFTAG_YRESOLUTION, &y)
        && isfinite(x) && isfinite(y) && x > 0 && y > 0 && unit != RESUNIT_NONE) {
        double per_inch = unit == RESUNIT_CENTIMETER ? 2.54 : 1;
        l->dpi_x = x * per_inch;
        l->dpi_y = y * per_inch;
    }
    return DB_OK;
}

db_status db_tiff_peek(db_tiff *t, int page, int *width, int *height, int *channels)
{
    struct layout l;
    if (select_page(t, page) != DB_OK || read_layout(t, page, &l) != DB_OK)
        return db_error_status();
    *width = (int)l.width;
    *height = (int)l.height;
    *channels = l.channels;
    return DB_OK;
}

/* Every strip or tile must lie inside the file: a truncated file, or offsets
** past its end, is refused before anything is allocated or decoded. */
static db_status check_striles(db_tiff *t, int page)
{
    TIFF *tif = t->tif;
    uint32_t n = TIFFIsTiled(tif) ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
    const char *kind = TIFFIsTiled(tif) ? "tile" : "strip";
    if (n == 0)
        return page_fail(t, page, DB_ERR_FORMAT, "the TIFF page has no %ss; re-export the file", kind);
    for (uint32_t i = 0; i < n; i++) {
        int err = 0;
        uint64_t offset = TIFFGetStrileOffsetWithErr(tif, i, &err);
        uint64_t count = err ? 0 : TIFFGetStrileByteCountWithErr(tif, i, &err);
        if (err)
            return libtiff_failed(t, page, "its strip offsets cannot be read");
        if (count > t->io.size || offset > t->io.size - count)
            return page_fail(t, page, DB_ERR_FORMAT, "truncated TIFF: %s %u of %u lies past the end of the file "
                             "(bytes %llu to %llu of %llu); re-export the file", kind, i + 1, n,
                             (unsigned long long)offset, (unsigned long long)offset + count,
                             (unsigned long long)t->io.size);
    }
    return DB_OK;
}

/* Maps samples to 8-bit values: `value` for colour samples (inverted for
** min-is-white), `alpha` for alpha; palette entries to RGB. */
struct tables {
    uint8_t value[65536];
    uint8_t alpha[65536];
    uint8_t palette[3][256];
};

static void make_tables(const struct layout *l, struct tables *tab)
{
    unsigned maxval = (1u << l->bps) - 1;
    for (unsigned v = 0; v <= maxval; v++) {
        uint8_t s = db_scale_to_8(v, maxval);
        tab->alpha[v] = s;
        tab->value[v] = l->photometric == PHOTOMETRIC_MINISWHITE ? (uint8_t)(255 - s) : s;
    }
    if (l->photometric != PHOTOMETRIC_PALETTE)
        return;
    /* Entries are 16-bit; some writers store 8-bit values instead, which
    ** libtiff recognises as a map with no entry above 255, and so does this. */
    unsigned entries = 1u << l->bps;
    bool eight_bit = true;
    for (int c = 0; c < 3; c++)
        for (unsigned i = 0; i < entries; i++)
            if (l->cmap[c][i] > 255)
                eight_bit = false;
    for (int c = 0; c < 3; c++)
        for (unsigned i = 0; i < entries; i++)
            tab->palette[c][i] = (uint8_t)(eight_bit ? l->cmap[c][i] : l->cmap[c][i] >> 8);
}

/* Unpacks `n` samples of `bps` bits from `row` (most significant bits first,
** 16-bit samples in host order as libtiff leaves them) into out[0], out[step]... */
static void unpack(const uint8_t *row, int bps, size_t n, uint16_t *out, size_t step)
{
    switch (bps) {
    case 8:
        for (size_t i = 0; i < n; i++)
            out[i * step] = row[i];
        break;
    case 16:
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, row + 2 * i, 2);
            out[i * step] = v;
        }
        break;
    default: {
        unsigned mask = (1u << bps) - 1;
        for (size_t i = 0; i < n; i++) {
            size_t bit = i * (size_t)bps;
            out[i * step] = (uint16_t)((row[bit / 8] >> (8 - bps - (int)(bit % 8))) & mask);
        }
    }
    }
}

static uint8_t composite(uint8_t c, uint8_t a, bool premultiplied)
{
    if (!premultiplied)
        return db_over_white(c, a);
    unsigned v = (unsigned)c + 255u - a;
    return (uint8_t)(v > 255 ? 255 : v);
}

/* One decoded block (a strip, or a tile) and where it goes. */
struct block {
    uint8_t **planes; /* a buffer per plane (one when contiguous) */
    size_t row_bytes; /* bytes per row of each buffer */
    uint32_t x0, y0, width, rows;
};

static void convert_block(const struct layout *l, const struct tables *tab, const struct block *b,
                          uint16_t *samples, db_image *img)
{
    bool separate = l->planar == PLANARCONFIG_SEPARATE && l->spp > 1;
    /* The common archive page, 8-bit gray or RGB samples interleaved without
    ** alpha: one table lookup a byte (the identity for min-is-black). */
    bool bytes = l->bps == 8 && !separate && l->photometric != PHOTOMETRIC_PALETTE && l->alpha < 0 &&
                 l->spp == l->color && l->color == l->channels;
    for (uint32_t r = 0; r < b->rows; r++) {
        uint8_t *row = img->data + (size_t)(b->y0 + r) * img->stride + (size_t)b->x0 * (size_t)l->channels;
        if (bytes) {
            const uint8_t *in = b->planes[0] + r * b->row_bytes;
            size_t n = (size_t)b->width * (size_t)l->channels;
            if (tab->value[0] == 0 && tab->value[255] == 255) /* 8 bits scaled to 8: the identity */
                memcpy(row, in, n);
            else
                for (size_t i = 0; i < n; i++)
                    row[i] = tab->value[in[i]];
            continue;
        }
        if (separate)
            for (int p = 0; p < l->spp; p++)
                unpack(b->planes[p] + r * b->row_bytes, l->bps, b->width, samples + p, l->spp);
        else
            unpack(b->planes[0] + r * b->row_bytes, l->bps, (size_t)b->width * l->spp, samples, 1);
        for (uint32_t x = 0; x < b->width; x++) {
            const uint16_t *s = samples + (size_t)x * l->spp;
            uint8_t px[3];
            if (l->photometric == PHOTOMETRIC_PALETTE)
                for (int c = 0; c < 3; c++)
                    px[c] = tab->palette[c][s[0]];
            else
                for (int c = 0; c < l->color; c++)
                    px[c] = tab->value[s[c]];
            if (l->alpha >= 0)
                for (int c = 0; c < l->channels; c++)
                    px[c] = composite(px[c], tab->alpha[s[l->alpha]], l->premultiplied);
            memcpy(row + (size_t)x * (size_t)l->channels, px, (size_t)l->channels);
        }
    }
}

/* After a strip or tile decoded: a warning meanwhile (on_warning) means that
** part of it is missing, and its pixels are not used. */
static db_status decoded_whole(const db_tiff *t, int page)
{
    if (!t->io.warning[0])
        return DB_OK;
    return page_fail(t, page, DB_ERR_FORMAT, "corrupt or truncated TIFF: its pixels decode only in part "
                     "(libtiff: %s); re-export the file", t->io.warning);
}

/* Where LZW blocks are decoded by docbin's decoder (db_lzw_decode) rather
** than libtiff's: samples of up to 8 bits (no byte swapping after decoding),
** no predictor or horizontal differencing of 8-bit samples, and the usual
** bit order. `raw` holds a block's bytes when the file is read on demand. */
struct lzw_path {
    bool on;
    bool differenced;   /* horizontal differencing: add each sample to the one `stride` before */
    int stride;
    uint8_t *raw;
    size_t raw_size;
};

static void lzw_setup(TIFF *tif, const struct layout *l, struct lzw_path *z)
{
    uint16_t predictor = PREDICTOR_NONE, fill = FILLORDER_MSB2LSB;
    TIFFGetFieldDefaulted(tif, TIFFTAG_PREDICTOR, &predictor);
    TIFFGetFieldDefaulted(tif, TIFFTAG_FILLORDER, &fill);
    *z = (struct lzw_path){
        .on = l->compression == COMPRESSION_LZW && l->bps <= 8 && fill == FILLORDER_MSB2LSB
              && (predictor == PREDICTOR_NONE || (predictor == PREDICTOR_HORIZONTAL && l->bps == 8)),
        .differenced = predictor == PREDICTOR_HORIZONTAL,
        .stride = l->planar == PLANARCONFIG_SEPARATE ? 1 : l->spp,
    };
}

/* Decodes strip or tile `index` into `dst` (`size` bytes, of which the block
** fills `want`, in rows of `row_bytes`): the bytes decoded, or -1 when
** libtiff failed. */
static tmsize_t read_block(db_tiff *t, struct lzw_path *z, uint32_t index, bool tiled, uint8_t *dst,
                           tmsize_t size, size_t want, size_t row_bytes)
{
    TIFF *tif = t->tif;
    if (z->on) {
        uint64_t offset = TIFFGetStrileOffset(tif, index), count = TIFFGetStrileByteCount(tif, index);
        const uint8_t *in = NULL;
        size_t got = 0;
        if (t->io.src->bytes) { /* check_striles: inside the file */
            in = t->io.src->bytes + offset;
            got = (size_t)count;
        } else if (count <= z->raw_size && db_source_read(t->io.src, offset, z->raw, (size_t)count, &got) == DB_OK) {
            in = z->raw;
        }
        if (in && db_lzw_decode(in, got, dst - DB_LZW_BEFORE, want)) {
            if (z->differenced)
                for (size_t r = 0; r + row_bytes <= want; r += row_bytes)
                    for (size_t i = (size_t)z->stride; i < row_bytes; i++)
                        dst[r + i] = (uint8_t)(dst[r + i] + dst[r + i - (size_t)z->stride]);
            return (tmsize_t)want;
        }
    }
    return tiled ? TIFFReadEncodedTile(tif, index, dst, size) : TIFFReadEncodedStrip(tif, index, dst, size);
}

/* Decodes every strip or tile of the current page into `img`. */
static db_status decode_page(db_tiff *t, int page, const struct layout *l, db_image *img)
{
    TIFF *tif = t->tif;
    bool tiled = TIFFIsTiled(tif);
    int planes = l->planar == PLANARCONFIG_SEPARATE ? l->spp : 1;
    tmsize_t block_size = tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
    tmsize_t row_bytes = tiled ? TIFFTileRowSize(tif) : TIFFScanlineSize(tif);
    uint32_t block_w = l->width, block_h = 0;
    if (tiled) {
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &block_w);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &block_h);
    } else {
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &block_h);
        if (block_h > l->height)
            block_h = l->height;
    }
    if (block_size <= 0 || row_bytes <= 0 || block_w == 0 || block_h == 0)
        return libtiff_failed(t, page, "its strip or tile size is invalid");
    struct lzw_path z;
    lzw_setup(tif, l, &z);
    uint32_t blocks = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
    if (z.on && !t->io.src->bytes) /* the largest block's bytes (check_striles: each inside the file) */
        for (uint32_t i = 0; i < blocks; i++)
            if (TIFFGetStrileByteCount(tif, i) > z.raw_size)
                z.raw_size = (size_t)TIFFGetStrileByteCount(tif, i);
    /* Each plane's buffer, with the LZW decoder's scratch around it. */
    size_t before = z.on ? DB_LZW_BEFORE : 0, plane_size = before + (size_t)block_size + (z.on ? DB_LZW_AFTER : 0);
    char what[1200];
    where(t, page, what, sizeof what);
    unsigned long long work = (unsigned long long)plane_size * (unsigned long long)planes + z.raw_size
                              + (unsigned long long)block_w * l->spp * sizeof(uint16_t) + sizeof(struct tables);
    if (db_codec_check_bytes(work, tiled ? "decoding a TIFF tile" : "decoding a TIFF strip", what) != DB_OK)
        return db_error_status();

    db_status status = DB_OK;
    struct tables *tab = malloc(sizeof *tab);
    uint16_t *samples = malloc((size_t)block_w * l->spp * sizeof *samples);
    uint8_t **planes_buf = calloc((size_t)planes, sizeof *planes_buf);
    uint8_t *buffer = malloc(plane_size * (size_t)planes);
    z.raw = z.raw_size ? malloc(z.raw_size) : NULL;
    if (!tab || !samples || !planes_buf || !buffer || (z.raw_size && !z.raw)) {
        status = db_fail(DB_ERR_NOMEM, "%s: out of memory decoding the TIFF", what);
        goto done;
    }
    make_tables(l, tab);
    for (int p = 0; p < planes; p++)
        planes_buf[p] = buffer + (size_t)p * plane_size + before;
    struct block b = { .planes = planes_buf, .row_bytes = (size_t)row_bytes };
    if (tiled) {
        for (uint32_t y = 0; y < l->height && status == DB_OK; y += block_h)
            for (uint32_t x = 0; x < l->width && status == DB_OK; x += block_w) {
                for (int p = 0; p < planes && status == DB_OK; p++)
                    if (read_block(t, &z, TIFFComputeTile(tif, x, y, 0, (uint16_t)p), true, planes_buf[p],
                                   block_size, (size_t)block_size, (size_t)row_bytes) < 0)
                        status = libtiff_failed(t, page, "a tile cannot be decoded");
                    else
                        status = decoded_whole(t, page);
                b.x0 = x;
                b.y0 = y;
                b.width = l->width - x < block_w ? l->width - x : block_w;
                b.rows = l->height - y < block_h ? l->height - y : block_h;
                if (status == DB_OK)
                    convert_block(l, tab, &b, samples, img);
            }
    } else {
        uint32_t strips = blocks / (uint32_t)planes;
        for (uint32_t s = 0; s < strips && status == DB_OK; s++) {
            uint32_t y = s * block_h;
            if (y >= l->height)
                break;
            b.x0 = 0;
            b.y0 = y;
            b.width = l->width;
            b.rows = l->height - y < block_h ? l->height - y : block_h;
            size_t want = (size_t)b.rows * (size_t)row_bytes;
            for (int p = 0; p < planes && status == DB_OK; p++) {
                tmsize_t n = read_block(t, &z, s + (uint32_t)p * strips, false, planes_buf[p], block_size, want,
                                        (size_t)row_bytes);
                if (n < 0)
                    status = libtiff_failed(t, page, "a strip cannot be decoded");
                else if (decoded_whole(t, page) != DB_OK)
                    status = db_error_status();
                else if ((size_t)n < want)
                    status = page_fail(t, page, DB_ERR_FORMAT, "truncated TIFF: strip %u holds %lld bytes, "
                                       "its %u rows need %llu; re-export the file", s + 1, (long long)n,
                                       b.rows, (unsigned long long)want);
            }
            if (status == DB_OK)
                convert_block(l, tab, &b, samples, img);
        }
    }
done:
    free(z.raw);
    free(buffer);
    free(planes_buf);
    free(samples);
    free(tab);
    return status;
}

db_image *db_tiff_read(db_tiff *t, int page)
{
    struct layout l;
    if (select_page(t, page) != DB_OK || read_layout(t, page, &l) != DB_OK || check_striles(t, page) != DB_OK)
        return NULL;
    db_image *img = db_image_new((int)l.width, (int)l.height, l.channels);
    if (!img) {
        char what[1200];
        where(t, page, what, sizeof what);
        db_fail(db_error_status(), "%s: %s", what, db_error_message());
        return NULL;
    }
    img->dpi_x = l.dpi_x;
    img->dpi_y = l.dpi_y;
    t->io.decoding = true;
    t->io.warning[0] = '\0';
    db_status status = decode_page(t, page, &l, img);
    t->io.decoding = false;
    if (status != DB_OK) {
        db_image_free(img);
        return NULL;
    }
    return img;
}

/* ---- Writing -------------------------------------------------------------------- */

struct db_tiff_writer {
    TIFF *tif;
    struct tiff_io io;
    const char *path;
};

static db_status write_failed(db_tiff_writer *w)
{
    if (w->io.io_errno)
        return db_image_write_failed(w->path, w->io.io_errno);
    return db_fail(DB_ERR_IO, "cannot write %s: libtiff: %s", w->path,
                   w->io.message[0] ? w->io.message : "write failed");
}

db_status db_tiff_writer_open(int fd, const char *path, db_tiff_writer **out)
{
    *out = NULL;
    db_tiff_writer *w = calloc(1, sizeof *w);
    if (!w)
        return db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", path);
    w->path = path;
    w->io.name = path;
    w->io.fd = fd;
    w->tif = open_io(&w->io, path, "w");
    if (!w->tif) {
        db_status st = write_failed(w);
        free(w);
        return st;
    }
    *out = w;
    return DB_OK;
}

/* Strips of about this many bytes, as most TIFF writers make; a Group 4 page
** is one strip, as archives keep them. */
enum { STRIP_BYTES = 65536 };

/* Sets a page's tags: `bits` 1 (min-is-white, as G4 archives and fax keep
** bitonal pages; readers honour the tag either way) or 8; returns its
** compression method, or 0 after a failure. */
static uint16_t set_tags(db_tiff_writer *w, int width, int height, int channels, int bits, double dpi_x,
                         double dpi_y, db_compression compression)
{
    TIFF *tif = w->tif;
    w->io.message[0] = '\0';
    uint16_t method;
    switch (compression) {
    case DB_COMPRESSION_NONE:
        method = COMPRESSION_NONE;
        break;
    case DB_COMPRESSION_LZW:
        method = COMPRESSION_LZW;
        break;
    case DB_COMPRESSION_DEFLATE:
        method = COMPRESSION_ADOBE_DEFLATE;
        break;
    case DB_COMPRESSION_G4:
        method = COMPRESSION_CCITTFAX4;
        break;
    default:
        method = bits == 1 ? COMPRESSION_CCITTFAX4 : COMPRESSION_ADOBE_DEFLATE;
        break;
    }
    size_t row_bytes = bits == 1 ? ((size_t)width + 7) / 8 : (size_t)width * (size_t)channels;
    uint32_t rows_per_strip = method == COMPRESSION_CCITTFAX4 ? (uint32_t)height
                              : (uint32_t)(STRIP_BYTES / row_bytes > 0 ? STRIP_BYTES / row_bytes : 1);
    int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)width)
             && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)height)
             && TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)bits)
             && TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)channels)
             && TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
             && TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
                             channels == 3 ? PHOTOMETRIC_RGB
                             : bits == 1   ? PHOTOMETRIC_MINISWHITE
                                           : PHOTOMETRIC_MINISBLACK)
             && TIFFSetField(tif, TIFFTAG_FILLORDER, FILLORDER_MSB2LSB)
             && TIFFSetField(tif, TIFFTAG_COMPRESSION, method)
             && TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip)
             && TIFFSetField(tif, TIFFTAG_SOFTWARE, "docbin " DB_VERSION);
    if (ok && dpi_x > 0 && dpi_y > 0)
        ok = TIFFSetField(tif, TIFFTAG_XRESOLUTION, (float)dpi_x)
             && TIFFSetField(tif, TIFFTAG_YRESOLUTION, (float)dpi_y)
             && TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
    return ok ? method : 0;
}

/* Writing the directory flushes the page's last strip, so only the page being
** added is ever held. */
static db_status end_page(db_tiff_writer *w, db_status status)
{
    if (status == DB_OK && !TIFFWriteDirectory(w->tif))
        status = write_failed(w);
    return status;
}

db_status db_tiff_writer_add(db_tiff_writer *w, const db_image *img, db_compression compression)
{
    if (!set_tags(w, img->width, img->height, img->channels, 8, img->dpi_x, img->dpi_y, compression))
        return write_failed(w);
    db_status status = DB_OK;
    for (int y = 0; y < img->height && status == DB_OK; y++)
        if (TIFFWriteScanline(w->tif, img->data + (size_t)y * img->stride, (uint32_t)y, 0) < 0)
            status = write_failed(w);
    return end_page(w, status);
}

db_status db_tiff_writer_add_bitmap(db_tiff_writer *w, const db_bitmap *bm, db_compression compression)
{
    uint16_t method = set_tags(w, bm->width, bm->height, 1, 1, bm->dpi_x, bm->dpi_y, compression);
    if (!method)
        return write_failed(w);
    db_status status = DB_OK;
    if (method == COMPRESSION_CCITTFAX4) {
        /* docbin's encoder writes the stream libtiff's would, in a fraction of
        ** its time (or the GPU that made the page did: bm->g4); it is stored as
        ** the page's one strip. */
        size_t n = bm->g4_size;
        uint8_t *coded = bm->g4 ? NULL : db_g4_encode(bm->data, bm->stride, bm->width, bm->height, &n);
        if (!bm->g4 && !coded)
            return db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", w->path);
        if (TIFFWriteRawStrip(w->tif, 0, bm->g4 ? bm->g4 : coded, (tmsize_t)n) < 0)
            status = write_failed(w);
        free(coded);
        return end_page(w, status);
    }
    size_t row_bytes = ((size_t)bm->width + 7) / 8;
    uint8_t *row = malloc(row_bytes);
    if (!row)
        return db_fail(DB_ERR_NOMEM, "cannot write %s: out of memory", w->path);
    for (int y = 0; y < bm->height && status == DB_OK; y++) {
        const uint8_t *in = bm->data + (size_t)y * bm->stride;
        for (size_t i = 0; i < row_bytes; i++)
            row[i] = (uint8_t)~in[i]; /* min-is-white: 1 is ink */
        if (bm->width % 8) /* its padding bits are 0 */
            row[row_bytes - 1] &= (uint8_t)(0xff00u >> (bm->width % 8));
        if (TIFFWriteScanline(w->tif, row, (uint32_t)y, 0) < 0)
            status = write_failed(w);
    }
    free(row);
    return end_page(w, status);
}

db_status db_tiff_writer_close(db_tiff_writer *w, bool finish)
{
    db_status status = DB_OK;
    if (!finish)
        w->io.fd = -1; /* libtiff flushes on cleanup: into nothing */
    else if (!TIFFFlush(w->tif))
        status = write_failed(w);
    TIFFCleanup(w->tif);
    free(w);
    return status;
}
