/*
** jp2.c — JPEG 2000 reading with OpenJPEG: JP2 files and bare codestreams.
**
** One component decodes to gray, three to RGB; a fourth (or a second) that
** the file marks as alpha, or that has no other role, is composited over
** white. Palettes (pclr) are expanded by OpenJPEG. Samples of other precisions
** are scaled to 8 bits (db_scale_to_8), signed ones shifted first. Subsampled
** components, more than four components and sYCC, e-sYCC or CMYK colour
** spaces are refused. The resolution is the JP2 capture resolution (resc),
** else the display one (resd).
**
** OpenJPEG would allocate structures for every tile the SIZ marker declares
** before decoding any, so the SIZ marker is read and checked here first:
** every tile needs at least one tile-part (14 bytes), which bounds the tile
** count by the file's size, and the image and OpenJPEG's buffers must fit the
** memory limit. Decoding is strict: a truncated codestream is an error, not a
** partly gray image. OpenJPEG's messages go to handlers, never to stderr.
*/
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <openjpeg.h>
#include "runtime/codec.h"

/* What the stream callbacks read from, and OpenJPEG's first error. */
struct jp2_io {
    const db_source *src;
    uint64_t pos;
    int io_errno;
    char message[256];
};

static OPJ_SIZE_T io_read(void *buf, OPJ_SIZE_T n, void *user)
{
    struct jp2_io *io = user;
    size_t got;
    if (db_source_read(io->src, io->pos, buf, n, &got) != DB_OK) {
        io->io_errno = errno ? errno : EIO;
        return (OPJ_SIZE_T)-1;
    }
    if (got == 0)
        return (OPJ_SIZE_T)-1; /* the end of the stream, as OpenJPEG expects it */
    io->pos += got;
    return got;
}

static OPJ_BOOL io_seek(OPJ_OFF_T pos, void *user)
{
    struct jp2_io *io = user;
    if (pos < 0 || (uint64_t)pos > io->src->size)
        return OPJ_FALSE;
    io->pos = (uint64_t)pos;
    return OPJ_TRUE;
}

static OPJ_OFF_T io_skip(OPJ_OFF_T n, void *user)
{
    struct jp2_io *io = user;
    if ((n < 0 && (uint64_t)-n > io->pos) || (n > 0 && (uint64_t)n > io->src->size - io->pos))
        return -1;
    io->pos += (uint64_t)n;
    return n;
}

static void on_error(const char *msg, void *user)
{
    struct jp2_io *io = user;
    if (io->message[0] || !msg)
        return;
    snprintf(io->message, sizeof io->message, "%s", msg);
    size_t n = strlen(io->message);
    while (n > 0 && (io->message[n - 1] == '\n' || io->message[n - 1] == '.'))
        io->message[--n] = '\0';
}

static void on_other(const char *msg, void *user)
{
    (void)msg;
    (void)user;
}

/* ---- Boxes and the SIZ marker ------------------------------------------------ */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t box_type(const char *t)
{
    return be32((const uint8_t *)t);
}

/* A box's type and the extent of its contents. */
struct box {
    uint32_t type;
    uint64_t start, end;
};

/* The box at `pos`, which must end by `limit`; false when there is none or it
** does not fit. */
static bool read_box(const db_source *src, uint64_t pos, uint64_t limit, struct box *b)
{
    uint8_t h[16];
    size_t got;
    if (limit - pos < 8 || db_source_read(src, pos, h, 16, &got) != DB_OK || got < 8)
        return false;
    uint64_t length = be32(h), header = 8;
    b->type = be32(h + 4);
    if (length == 1) {
        if (got < 16)
            return false;
        length = (uint64_t)be32(h + 8) << 32 | be32(h + 12);
        header = 16;
    } else if (length == 0) {
        length = limit - pos;
    }
    if (length < header || length > limit - pos)
        return false;
    b->start = pos + header;
    b->end = pos + length;
    return true;
}

/* What the JP2 boxes say, beyond the codestream. */
struct jp2_info {
    uint64_t cs_start, cs_end; /* the codestream */
    int palette_columns;       /* colours per palette entry, 0 without pclr */
    double dpi_x, dpi_y;
};

/* dots per inch of a resolution box's N / D * 10^E dots per metre. */
static double res_dpi(const uint8_t *p, int exponent)
{
    unsigned num = (unsigned)p[0] << 8 | p[1], den = (unsigned)p[2] << 8 | p[3];
    if (num == 0 || den == 0)
        return 0;
    double dpi = (double)num * 254.0 * pow(10, exponent) / ((double)den * 10000.0);
    return isfinite(dpi) ? dpi : 0;
}

/* Walks jp2h's children for the palette and the resolution. */
static void read_header_box(const db_source *src, const struct box *jp2h, struct jp2_info *info)
{
    struct box b;
    for (uint64_t pos = jp2h->start; pos < jp2h->end && read_box(src, pos, jp2h->end, &b); pos = b.end) {
        uint8_t data[10];
        size_t got;
        if (b.type == box_type("pclr") && db_source_read(src, b.start, data, 3, &got) == DB_OK && got == 3)
            info->palette_columns = data[2];
        if (b.type != box_type("res "))
            continue;
        struct box r;
        double capture[2] = { 0, 0 }, display[2] = { 0, 0 };
        for (uint64_t at = b.start; at < b.end && read_box(src, at, b.end, &r); at = r.end) {
            bool is_capture = r.type == box_type("resc");
            if ((!is_capture && r.type != box_type("resd")) || r.end - r.start < 10
                || db_source_read(src, r.start, data, 10, &got) != DB_OK || got < 10)
                continue;
            double *out = is_capture ? capture : display;
            out[1] = res_dpi(data, (int8_t)data[8]);     /* vertical: VR_N, VR_D, VR_E */
            out[0] = res_dpi(data + 4, (int8_t)data[9]); /* horizontal: HR_N, HR_D, HR_E */
        }
        const double *use = capture[0] > 0 && capture[1] > 0 ? capture : display;
        if (use[0] > 0 && use[1] > 0) {
            info->dpi_x = use[0];
            info->dpi_y = use[1];
        }
    }
}

/* Finds the codestream (and jp2h's facts) of a JP2 file, or takes the whole
** file as a bare codestream. */
static db_status find_codestream(const db_source *src, bool *is_jp2, struct jp2_info *info)
{
    memset(info, 0, sizeof *info);
    uint8_t head[4];
    size_t got;
    if (db_source_read(src, 0, head, 4, &got) != DB_OK)
        return db_error_status();
    *is_jp2 = !(got == 4 && head[0] == 0xff && head[1] == 0x4f);
    if (!*is_jp2) {
        info->cs_end = src->size;
        return DB_OK;
    }
    struct box b;
    for (uint64_t pos = 0; pos < src->size; pos = b.end) {
        if (!read_box(src, pos, src->size, &b))
            break;
        if (b.type == box_type("jp2h"))
            read_header_box(src, &b, info);
        if (b.type == box_type("jp2c")) {
            info->cs_start = b.start;
            info->cs_end = b.end;
            return DB_OK;
        }
    }
    return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated JPEG 2000 (no codestream box where the boxes "
                   "lead); re-export the file", src->name);
}

/* The SIZ marker's facts. */
struct siz {
    uint32_t width, height;
    int components;
};

static db_status bad_siz(const db_source *src, const char *what)
{
    return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated JPEG 2000 (%s); re-export the file", src->name, what);
}

/* Reads and checks the SIZ marker that opens the codestream, before
** OpenJPEG allocates anything for it. */
static db_status check_siz(const db_source *src, const struct jp2_info *info, struct siz *siz)
{
    uint8_t m[42 + 3 * 4];
    size_t got;
    if (db_source_read(src, info->cs_start, m, sizeof m, &got) != DB_OK)
        return db_error_status();
    if (got < 42 || m[0] != 0xff || m[1] != 0x4f || m[2] != 0xff || m[3] != 0x51)
        return bad_siz(src, "the codestream does not start with SOC and SIZ");
    uint32_t xsiz = be32(m + 8), ysiz = be32(m + 12), xo = be32(m + 16), yo = be32(m + 20);
    uint32_t xt = be32(m + 24), yt = be32(m + 28), xto = be32(m + 32), yto = be32(m + 36);
    int csiz = m[40] << 8 | m[41];
    if (xo >= xsiz || yo >= ysiz || xt == 0 || yt == 0 || xto > xo || yto > yo)
        return bad_siz(src, "its SIZ marker declares no image or no tiles");
    if (csiz < 1 || csiz > 4)
        return db_fail(DB_ERR_FORMAT, "%s: a JPEG 2000 image of %d components; docbin reads gray, RGB and either "
                       "with alpha (1 to 4 components), convert the file", src->name, csiz);
    if (got < 42 + 3 * (size_t)csiz)
        return bad_siz(src, "the file ends inside its SIZ marker");
    for (int i = 0; i < csiz; i++) {
        const uint8_t *c = m + 42 + 3 * i;
        if ((c[0] & 0x7f) + 1 > 16)
            return db_fail(DB_ERR_FORMAT, "%s: JPEG 2000 component %d has %d bits; docbin reads up to 16, "
                           "convert the file", src->name, i + 1, (c[0] & 0x7f) + 1);
        if (c[1] != 1 || c[2] != 1)
            return db_fail(DB_ERR_FORMAT, "%s: JPEG 2000 component %d is subsampled (%dx%d); docbin reads "
                           "full-size components, convert the file", src->name, i + 1, c[1], c[2]);
    }
    /* Every tile has at least one tile-part: SOT (12 bytes) and SOD (2). */
    uint64_t tiles_x = ((uint64_t)xsiz - xto + xt - 1) / xt, tiles_y = ((uint64_t)ysiz - yto + yt - 1) / yt;
    uint64_t cs_bytes = info->cs_end - info->cs_start;
    if (tiles_x * tiles_y > cs_bytes / 14)
        return bad_siz(src, "its SIZ marker declares more tiles than the file can hold");
    siz->width = xsiz - xo;
    siz->height = ysiz - yo;
    siz->components = csiz;
    return DB_OK;
}

/* ---- Decoding ---------------------------------------------------------------- */

static db_status opj_failed(const struct jp2_io *io, const char *what)
{
    if (io->io_errno)
        return db_fail(DB_ERR_IO, "cannot read %s: %s", io->src->name, strerror(io->io_errno));
    return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated JPEG 2000: %s (OpenJPEG: %s); re-export the file",
                   io->src->name, what, io->message[0] ? io->message : "no detail");
}

/* The decoded components as 8-bit gray or RGB: `img` is allocated here. */
static db_status convert(const opj_image_t *image, uint32_t width, uint32_t height, const char *name,
                         db_image **out)
{
    int n = (int)image->numcomps;
    int alpha = -1;
    for (int i = 0; i < n; i++)
        if (image->comps[i].alpha)
            alpha = i;
    if (alpha < 0 && (n == 2 || n == 4))
        alpha = n - 1;
    int color = n - (alpha >= 0 ? 1 : 0);
    if (n < 1 || n > 4 || (color != 1 && color != 3))
        return db_fail(DB_ERR_FORMAT, "%s: a JPEG 2000 image of %d components (%d of colour); docbin reads "
                       "gray, RGB and either with alpha, convert the file", name, n, color);
    int order[4], k = 0;
    for (int i = 0; i < n; i++)
        if (i != alpha)
            order[k++] = i;
    if (alpha >= 0)
        order[k++] = alpha;
    for (int i = 0; i < n; i++) {
        const opj_image_comp_t *c = &image->comps[i];
        if (!c->data || c->w != width || c->h != height || c->prec < 1 || c->prec > 16)
            return db_fail(DB_ERR_FORMAT, "%s: JPEG 2000 component %d decodes to %ux%u of %u bits, not %ux%u "
                           "of at most 16; convert the file", name, i + 1, c->w, c->h, c->prec, width, height);
    }
    db_image *img = db_image_new((int)width, (int)height, color);
    if (!img)
        return db_fail(db_error_status(), "%s: %s", name, db_error_message());
    bool premultiplied = alpha >= 0 && image->comps[alpha].alpha == 2;
    for (uint32_t y = 0; y < height; y++) {
        uint8_t *row = img->data + (size_t)y * img->stride;
        for (uint32_t x = 0; x < width; x++) {
            size_t at = (size_t)y * width + x;
            uint8_t v[4];
            for (int i = 0; i < n; i++) {
                const opj_image_comp_t *c = &image->comps[order[i]];
                long long s = (long long)c->data[at] + (c->sgnd ? 1ll << (c->prec - 1) : 0);
                unsigned maxval = (1u << c->prec) - 1;
                s = s < 0 ? 0 : s > maxval ? maxval : s;
                v[i] = db_scale_to_8((unsigned)s, maxval);
            }
            for (int i = 0; i < color; i++) {
                uint8_t px = v[i];
                if (alpha >= 0) {
                    unsigned a = v[color];
                    if (premultiplied) {
                        unsigned p = (unsigned)px + 255u - a;
                        px = (uint8_t)(p > 255 ? 255 : p);
                    } else {
                        px = db_over_white(px, a);
                    }
                }
                row[(size_t)x * (size_t)color + (size_t)i] = px;
            }
        }
    }
    *out = img;
    return DB_OK;
}

/* Reads the header, and unless `header_only` the image (into *out). */
static db_status decode(const db_source *src, bool header_only, int *width, int *height, int *channels,
                        db_image **out)
{
    bool is_jp2;
    struct jp2_info info;
    struct siz siz = { 0 };
    if (find_codestream(src, &is_jp2, &info) != DB_OK || check_siz(src, &info, &siz) != DB_OK)
        return db_error_status();
    int components = info.palette_columns > 0 ? info.palette_columns : siz.components;
    int color = components == 2 || components == 4 ? components - 1 : components;
    if (color != 1 && color != 3)
        return db_fail(DB_ERR_FORMAT, "%s: a JPEG 2000 image of %d components; docbin reads gray, RGB and either "
                       "with alpha, convert the file", src->name, components);
    if (db_image_check_size(siz.width, siz.height, color, src->name) != DB_OK)
        return db_error_status();
    /* OpenJPEG holds 32 bits a sample for the image and about as much again
    ** for the tile being decoded. */
    if (db_codec_check_bytes(8ull * siz.width * siz.height * (unsigned)components, "decoding the JPEG 2000",
                             src->name) != DB_OK)
        return db_error_status();

    struct jp2_io io = { .src = src };
    opj_stream_t *stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    opj_codec_t *codec = opj_create_decompress(is_jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
    opj_image_t *image = NULL;
    db_status status = DB_OK;
    if (!stream || !codec) {
        status = db_fail(DB_ERR_NOMEM, "%s: out of memory starting the JPEG 2000 reader", src->name);
        goto done;
    }
    opj_stream_set_user_data(stream, &io, NULL);
    opj_stream_set_user_data_length(stream, src->size);
    opj_stream_set_read_function(stream, io_read);
    opj_stream_set_skip_function(stream, io_skip);
    opj_stream_set_seek_function(stream, io_seek);
    opj_set_error_handler(codec, on_error, &io);
    opj_set_warning_handler(codec, on_other, &io);
    opj_set_info_handler(codec, on_other, &io);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    if (!opj_setup_decoder(codec, &params) || !opj_decoder_set_strict_mode(codec, OPJ_TRUE)) {
        status = opj_failed(&io, "the decoder cannot be set up");
        goto done;
    }
    if (!opj_read_header(stream, codec, &image) || !image) {
        status = opj_failed(&io, "its header cannot be read");
        goto done;
    }
    if (image->x1 <= image->x0 || image->y1 <= image->y0 || image->x1 - image->x0 != siz.width
        || image->y1 - image->y0 != siz.height) {
        status = bad_siz(src, "the header and the SIZ marker disagree");
        goto done;
    }
    if (image->color_space == OPJ_CLRSPC_SYCC || image->color_space == OPJ_CLRSPC_EYCC
        || image->color_space == OPJ_CLRSPC_CMYK) {
        status = db_fail(DB_ERR_FORMAT, "%s: JPEG 2000 in the %s colour space is not supported; convert it to RGB "
                         "or gray", src->name, image->color_space == OPJ_CLRSPC_CMYK ? "CMYK"
                         : image->color_space == OPJ_CLRSPC_SYCC ? "sYCC" : "e-sYCC");
        goto done;
    }
    *width = (int)siz.width;
    *height = (int)siz.height;
    *channels = color;
    if (header_only)
        goto done;
    if (!opj_decode(codec, stream, image) || !opj_end_decompress(codec, stream)) {
        status = opj_failed(&io, "its image cannot be decoded");
        goto done;
    }
    status = convert(image, siz.width, siz.height, src->name, out);
    if (status == DB_OK) {
        (*out)->dpi_x = info.dpi_x;
        (*out)->dpi_y = info.dpi_y;
    }
done:
    opj_image_destroy(image);
    if (codec)
        opj_destroy_codec(codec);
    if (stream)
        opj_stream_destroy(stream);
    return status;
}

db_image *db_jp2_read(const db_source *src)
{
    int w, h, c;
    db_image *img = NULL;
    if (decode(src, false, &w, &h, &c, &img) != DB_OK)
        return NULL;
    return img;
}

db_status db_jp2_peek(const db_source *src, int *width, int *height, int *channels)
{
    return decode(src, true, width, height, channels, NULL);
}
