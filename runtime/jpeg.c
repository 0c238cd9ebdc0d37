/*
** jpeg.c — JPEG reading with libjpeg-turbo.
**
** Gray JPEGs decode to gray, YCbCr and RGB ones to RGB through libjpeg's own
** upsampling and colour conversion (its defaults, as every libjpeg-based
** viewer shows them); CMYK and YCCK are refused. The EXIF orientation is
** applied, so the image is upright as a viewer shows it. The resolution comes
** from the JFIF density when it has a unit, else from EXIF.
**
** libjpeg reports errors through error_exit, which must not return: ours
** records the message and longjmps back. A warning that means pixels were
** lost (a truncated file, corrupt entropy data) is an error too, so a damaged
** file never becomes a partly gray image; other messages are dropped, and
** nothing reaches stderr. The decoder's memory is capped at docbin's limit.
*/
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include "runtime/codec.h"

/* A decode in progress: libjpeg's state, our source manager, and what must
** survive a longjmp (objects outside the function that calls setjmp). */
struct reader {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    struct jpeg_source_mgr mgr;
    jmp_buf jump;
    const db_source *src;
    uint64_t pos;         /* the next byte of the file to give libjpeg */
    bool may_end;         /* the file may end without its EOI marker (see fill_input_buffer) */
    int io_errno;         /* a failed read of the file, 0 if none */
    char message[JMSG_LENGTH_MAX];
    db_image *img;
    db_image *upright;
    uint8_t buffer[16384];
};

static void on_error(j_common_ptr cinfo)
{
    struct reader *r = cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, r->message);
    longjmp(r->jump, 1);
}

/* Warnings that leave every pixel as the file meant it. */
static bool harmless(int code)
{
    return code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM
           || code == JWRN_BOGUS_ICC;
}

static void on_message(j_common_ptr cinfo, int level)
{
    if (level < 0 && !harmless(cinfo->err->msg_code))
        on_error(cinfo);
}

static void on_output(j_common_ptr cinfo)
{
    (void)cinfo;
}

static void init_source(j_decompress_ptr cinfo)
{
    (void)cinfo;
}

static void term_source(j_decompress_ptr cinfo)
{
    (void)cinfo;
}

static boolean fill_input_buffer(j_decompress_ptr cinfo)
{
    struct reader *r = cinfo->client_data;
    size_t got = 0;
    if (db_source_read(r->src, r->pos, r->buffer, sizeof r->buffer, &got) != DB_OK) {
        r->io_errno = errno ? errno : EIO;
        ERREXIT(cinfo, JERR_FILE_READ);
    }
    if (got == 0) {
        /* The end of the file reads as an EOI marker, as libjpeg's own sources
        ** make it, only in a single Huffman-coded scan: there the decoder
        ** warns (an error here) when it needs data past the marker, so a file
        ** missing only its EOI still gives every pixel. A progressive file cut
        ** between scans, or an arithmetic-coded one, would lose pixels
        ** without a word, so the end of the file is an error there. */
        if (!r->may_end)
            ERREXIT(cinfo, JERR_INPUT_EOF);
        r->buffer[0] = 0xff;
        r->buffer[1] = JPEG_EOI;
        got = 2;
    }
    r->pos += got;
    r->mgr.next_input_byte = r->buffer;
    r->mgr.bytes_in_buffer = got;
    return TRUE;
}

static void skip_input_data(j_decompress_ptr cinfo, long count)
{
    struct reader *r = cinfo->client_data;
    if (count <= 0)
        return;
    if ((unsigned long)count <= r->mgr.bytes_in_buffer) {
        r->mgr.next_input_byte += count;
        r->mgr.bytes_in_buffer -= (size_t)count;
        return;
    }
    r->pos += (uint64_t)count - r->mgr.bytes_in_buffer;
    r->mgr.bytes_in_buffer = 0;
}

/* ---- EXIF ------------------------------------------------------------------------- */

/* What docbin takes from EXIF's first IFD. */
struct exif {
    int orientation;      /* 1 to 8; 1 when absent */
    double dpi_x, dpi_y;  /* 0 when absent */
};

struct tiff_view {
    const uint8_t *p;
    size_t n;
    bool big_endian;
};

static bool get16(const struct tiff_view *v, size_t at, unsigned *out)
{
    if (at > v->n || v->n - at < 2)
        return false;
    *out = v->big_endian ? (unsigned)v->p[at] << 8 | v->p[at + 1] : (unsigned)v->p[at + 1] << 8 | v->p[at];
    return true;
}

static bool get32(const struct tiff_view *v, size_t at, uint32_t *out)
{
    unsigned hi, lo;
    if (!get16(v, at, v->big_endian ? &hi : &lo) || !get16(v, at + 2, v->big_endian ? &lo : &hi))
        return false;
    *out = (uint32_t)hi << 16 | lo;
    return true;
}

/* A RATIONAL's value; 0 when it is missing or not positive. */
static double get_rational(const struct tiff_view *v, size_t entry)
{
    uint32_t offset, num, den;
    if (!get32(v, entry + 8, &offset) || !get32(v, offset, &num) || !get32(v, (size_t)offset + 4, &den) || den == 0)
        return 0;
    return (double)num / den;
}

/* Reads EXIF's IFD0 from an APP1 segment; every offset is checked against
** the segment's length. */
static void parse_exif(const uint8_t *data, size_t size, struct exif *e)
{
    if (size < 14 || memcmp(data, "Exif\0\0", 6) != 0)
        return;
    struct tiff_view v = { data + 6, size - 6, data[6] == 'M' };
    unsigned magic, count;
    uint32_t ifd;
    if ((data[6] != 'I' && data[6] != 'M') || data[7] != data[6] || !get16(&v, 2, &magic) || magic != 42
        || !get32(&v, 4, &ifd) || !get16(&v, ifd, &count))
        return;
    double x = 0, y = 0;
    unsigned unit = 2; /* inches, EXIF's default */
    for (unsigned i = 0; i < count; i++) {
        size_t entry = (size_t)ifd + 2 + 12 * (size_t)i;
        unsigned tag, type, value;
        if (!get16(&v, entry, &tag) || !get16(&v, entry + 2, &type) || !get16(&v, entry + 8, &value))
            return;
        if (tag == 0x0112 && type == 3 && value >= 1 && value <= 8)
            e->orientation = (int)value;
        else if (tag == 0x011a && type == 5)
            x = get_rational(&v, entry);
        else if (tag == 0x011b && type == 5)
            y = get_rational(&v, entry);
        else if (tag == 0x0128 && type == 3)
            unit = value;
    }
    if (x > 0 && y > 0 && (unit == 2 || unit == 3)) {
        e->dpi_x = unit == 3 ? x * 2.54 : x;
        e->dpi_y = unit == 3 ? y * 2.54 : y;
    }
}

/* ---- Orientation ------------------------------------------------------------------ */

/* The upright image of `img` stored with EXIF orientation `o` (2 to 8): the
** pixel at (x, y) of the result comes from the stored image as each case says. */
static db_image *apply_orientation(const db_image *img, int o)
{
    int w = img->width, h = img->height, c = img->channels;
    bool transposed = o >= 5;
    db_image *out = db_image_alloc(transposed ? h : w, transposed ? w : h, c);
    if (!out)
        return NULL;
    for (int y = 0; y < out->height; y++) {
        uint8_t *dst = out->data + (size_t)y * out->stride;
        for (int x = 0; x < out->width; x++) {
            int sx, sy;
            switch (o) {
            case 2: sx = w - 1 - x; sy = y; break;          /* mirrored left to right */
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;  /* turned 180 degrees */
            case 4: sx = x; sy = h - 1 - y; break;          /* mirrored top to bottom */
            case 5: sx = y; sy = x; break;                  /* transposed */
            case 6: sx = y; sy = h - 1 - x; break;          /* stored turned 90 degrees anticlockwise */
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;  /* transversed */
            default: sx = w - 1 - y; sy = x; break;         /* 8: stored turned 90 degrees clockwise */
            }
            memcpy(dst + (size_t)x * (size_t)c, img->data + (size_t)sy * img->stride + (size_t)sx * (size_t)c,
                   (size_t)c);
        }
    }
    return out;
}

/* ---- Decoding --------------------------------------------------------------------- */

/* Reads the header (and, unless `header_only`, the pixels into r->img).
** The upright sides and channels go to *width, *height, *channels. */
static db_status decode(struct reader *r, bool header_only, int *width, int *height, int *channels)
{
    const char *name = r->src->name;
    struct jpeg_decompress_struct *cinfo = &r->cinfo;
    cinfo->err = jpeg_std_error(&r->jerr);
    r->jerr.error_exit = on_error;
    r->jerr.emit_message = on_message;
    r->jerr.output_message = on_output;
    cinfo->client_data = r;
    if (setjmp(r->jump)) {
        jpeg_destroy_decompress(cinfo);
        db_image_free(r->img);
        db_image_free(r->upright);
        r->img = r->upright = NULL;
        if (r->io_errno)
            return db_fail(DB_ERR_IO, "cannot read %s: %s", name, strerror(r->io_errno));
        return db_fail(DB_ERR_FORMAT, "%s: corrupt or truncated JPEG (libjpeg: %s); re-export the file", name,
                       r->message);
    }
    jpeg_create_decompress(cinfo);
    cinfo->client_data = r;
    /* No backing store: a decode that needs more than the limit fails. */
    cinfo->mem->max_memory_to_use = (long)(db_codec_memory_limit() > (size_t)LONG_MAX ? LONG_MAX
                                                                                        : db_codec_memory_limit());
    r->mgr.init_source = init_source;
    r->mgr.fill_input_buffer = fill_input_buffer;
    r->mgr.skip_input_data = skip_input_data;
    r->mgr.resync_to_restart = jpeg_resync_to_restart;
    r->mgr.term_source = term_source;
    cinfo->src = &r->mgr;
    jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xffff);
    if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK) {
        jpeg_destroy_decompress(cinfo);
        return db_fail(DB_ERR_FORMAT, "%s: the JPEG holds no image; re-export the file", name);
    }

    int c;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
        cinfo->out_color_space = JCS_GRAYSCALE;
        c = 1;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        cinfo->out_color_space = JCS_RGB;
        c = 3;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        jpeg_destroy_decompress(cinfo);
        return db_fail(DB_ERR_FORMAT, "%s: CMYK JPEG is not supported; convert it to RGB or gray", name);
    default:
        jpeg_destroy_decompress(cinfo);
        return db_fail(DB_ERR_FORMAT, "%s: a JPEG of %d components in an unknown colour space is not "
                       "supported; convert it to RGB or gray", name, cinfo->num_components);
    }

    struct exif exif = { .orientation = 1 };
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next)
        if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && memcmp(m->data, "Exif\0\0", 6) == 0) {
            parse_exif(m->data, m->data_length, &exif);
            break;
        }
    jpeg_calc_output_dimensions(cinfo);
    long long w = cinfo->output_width, h = cinfo->output_height;
    bool transposed = exif.orientation >= 5;
    if (db_image_check_size(transposed ? h : w, transposed ? w : h, c, name) != DB_OK) {
        jpeg_destroy_decompress(cinfo);
        return db_error_status();
    }
    *width = (int)(transposed ? h : w);
    *height = (int)(transposed ? w : h);
    *channels = c;
    if (header_only) {
        jpeg_destroy_decompress(cinfo);
        return DB_OK;
    }

    /* A progressive or multi-scan file is held as coefficients, 2 bytes a
    ** sample, until its last scan. */
    if (jpeg_has_multiple_scans(cinfo)) {
        unsigned long long coefficients = 0;
        for (int i = 0; i < cinfo->num_components; i++)
            coefficients += (unsigned long long)cinfo->comp_info[i].width_in_blocks
                            * cinfo->comp_info[i].height_in_blocks * DCTSIZE2 * sizeof(JCOEF);
        if (db_codec_check_bytes(coefficients, "decoding a progressive JPEG", name) != DB_OK) {
            jpeg_destroy_decompress(cinfo);
            return db_error_status();
        }
    }
    r->may_end = !jpeg_has_multiple_scans(cinfo) && !cinfo->arith_code;
    jpeg_start_decompress(cinfo);
    r->img = db_image_alloc((int)w, (int)h, c);
    if (!r->img) {
        jpeg_destroy_decompress(cinfo);
        return db_fail(db_error_status(), "%s: %s", name, db_error_message());
    }
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = r->img->data + (size_t)cinfo->output_scanline * r->img->stride;
        jpeg_read_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_decompress(cinfo);

    double dpi_x = exif.dpi_x, dpi_y = exif.dpi_y;
    if (cinfo->saw_JFIF_marker && (cinfo->density_unit == 1 || cinfo->density_unit == 2) && cinfo->X_density > 0
        && cinfo->Y_density > 0) {
        double inches = cinfo->density_unit == 1 ? 1 : 1 / 2.54;
        dpi_x = db_dpi_from_whole_units(cinfo->X_density, inches);
        dpi_y = db_dpi_from_whole_units(cinfo->Y_density, inches);
    }
    jpeg_destroy_decompress(cinfo);
    if (exif.orientation != 1) {
        r->upright = apply_orientation(r->img, exif.orientation);
        db_image_free(r->img);
        r->img = r->upright;
        r->upright = NULL;
        if (!r->img)
            return db_fail(db_error_status(), "%s: %s", name, db_error_message());
        if (transposed) {
            double across = dpi_y;
            dpi_y = dpi_x;
            dpi_x = across;
        }
    }
    r->img->dpi_x = dpi_x;
    r->img->dpi_y = dpi_y;
    return DB_OK;
}

db_image *db_jpeg_read(const db_source *src)
{
    struct reader *r = calloc(1, sizeof *r);
    if (!r) {
        db_fail(DB_ERR_NOMEM, "%s: out of memory starting the JPEG reader", src->name);
        return NULL;
    }
    r->src = src;
    int w, h, c;
    db_image *img = decode(r, false, &w, &h, &c) == DB_OK ? r->img : NULL;
    free(r);
    return img;
}

db_status db_jpeg_peek(const db_source *src, int *width, int *height, int *channels)
{
    struct reader *r = calloc(1, sizeof *r);
    if (!r)
        return db_fail(DB_ERR_NOMEM, "%s: out of memory starting the JPEG reader", src->name);
    r->src = src;
    db_status status = decode(r, true, width, height, channels);
    free(r);
    return status;
}
