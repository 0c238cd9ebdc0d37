/*
** fuzz_seeds.c — writes the seed corpus of a reader's fuzz target, made with
** the codec libraries themselves: small TIFF, JPEG or JPEG 2000 files of
** every kind the reader takes (and a few it refuses), so that the fuzzer
** starts from each of its paths.
**
** usage: fuzz_seeds tiff|jpeg|jp2 DIRECTORY
*/
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jpeglib.h>
#include <openjpeg.h>
#include <tiffio.h>

static const char *out_dir;
static int failed;

static void save(const char *name, const void *bytes, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "fuzz_seeds: cannot write %s\n", path);
        failed = 1;
    }
}

static uint8_t sample(int x, int y, int c)
{
    return (uint8_t)(x * 16 + y * 8 + c * 80 + ((x ^ y) & 3) * 20);
}

/* ---- TIFF ---------------------------------------------------------------------- */

struct tiff_seed {
    const char *name;
    uint16_t photometric, bps, spp, compression, planar;
    uint32_t tile; /* 0: strips of 4 rows */
    int pages;
};

static void tiff_seed(const struct tiff_seed *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, s->name);
    TIFF *tif = TIFFOpen(path, "w");
    if (!tif) {
        failed = 1;
        return;
    }
    enum { W = 16, H = 12 };
    for (int page = 0; page < s->pages; page++) {
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)W);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)H);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, s->bps);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, s->spp);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, s->photometric);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, s->planar ? s->planar : PLANARCONFIG_CONTIG);
        TIFFSetField(tif, TIFFTAG_COMPRESSION, s->compression);
        TIFFSetField(tif, TIFFTAG_XRESOLUTION, 300.0f);
        TIFFSetField(tif, TIFFTAG_YRESOLUTION, 300.0f);
        TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
        if (s->spp == 2 || s->spp == 4) {
            uint16_t alpha = EXTRASAMPLE_UNASSALPHA;
            TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &alpha);
        }
        if (s->compression == COMPRESSION_JPEG && s->photometric == PHOTOMETRIC_YCBCR)
            TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        uint16_t map[3][256];
        if (s->photometric == PHOTOMETRIC_PALETTE) {
            for (int i = 0; i < 256; i++)
                for (int c = 0; c < 3; c++)
                    map[c][i] = (uint16_t)(sample(i, c, 1) * 257);
            TIFFSetField(tif, TIFFTAG_COLORMAP, map[0], map[1], map[2]);
        }
        bool separate = s->planar == PLANARCONFIG_SEPARATE;
        int planes = separate ? s->spp : 1, per_pixel = separate ? 1 : s->spp;
        uint32_t bw = s->tile ? s->tile : W, bh = s->tile ? s->tile : 4;
        if (s->tile) {
            TIFFSetField(tif, TIFFTAG_TILEWIDTH, bw);
            TIFFSetField(tif, TIFFTAG_TILELENGTH, bh);
        } else {
            TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, bh);
        }
        size_t row_bytes = ((size_t)bw * (size_t)per_pixel * s->bps + 7) / 8;
        uint8_t block[16 * 16 * 8];
        for (int p = 0; p < planes; p++)
            for (uint32_t by = 0; by < H; by += bh)
                for (uint32_t bx = 0; bx < W; bx += bw) {
                    memset(block, 0, sizeof block);
                    for (uint32_t r = 0; r < bh; r++)
                        for (size_t i = 0; i < row_bytes; i++)
                            block[r * row_bytes + i] = sample((int)(bx + i), (int)(by + r), p + page);
                    tmsize_t n = (tmsize_t)(row_bytes * (s->tile ? bh : (H - by < bh ? H - by : bh)));
                    if (s->tile)
                        TIFFWriteEncodedTile(tif, TIFFComputeTile(tif, bx, by, 0, (uint16_t)p), block, n);
                    else
                        TIFFWriteEncodedStrip(tif, TIFFComputeStrip(tif, by, (uint16_t)p), block, n);
                }
        TIFFWriteDirectory(tif);
    }
    TIFFClose(tif);
}

static void tiff_seeds(void)
{
    static const struct tiff_seed seeds[] = {
        { "gray8-lzw.tif", PHOTOMETRIC_MINISBLACK, 8, 1, COMPRESSION_LZW, 0, 0, 1 },
        { "gray8-tiles-deflate.tif", PHOTOMETRIC_MINISBLACK, 8, 1, COMPRESSION_ADOBE_DEFLATE, 0, 16, 1 },
        { "white1-g4.tif", PHOTOMETRIC_MINISWHITE, 1, 1, COMPRESSION_CCITTFAX4, 0, 0, 1 },
        { "white1-g3.tif", PHOTOMETRIC_MINISWHITE, 1, 1, COMPRESSION_CCITTFAX3, 0, 0, 1 },
        { "black1-packbits.tif", PHOTOMETRIC_MINISBLACK, 1, 1, COMPRESSION_PACKBITS, 0, 0, 1 },
        { "gray4.tif", PHOTOMETRIC_MINISBLACK, 4, 1, COMPRESSION_NONE, 0, 0, 1 },
        { "gray16.tif", PHOTOMETRIC_MINISBLACK, 16, 1, COMPRESSION_NONE, 0, 0, 1 },
        { "gray-alpha.tif", PHOTOMETRIC_MINISBLACK, 8, 2, COMPRESSION_NONE, 0, 0, 1 },
        { "rgb8-separate.tif", PHOTOMETRIC_RGB, 8, 3, COMPRESSION_LZW, PLANARCONFIG_SEPARATE, 0, 1 },
        { "rgba8-tiles.tif", PHOTOMETRIC_RGB, 8, 4, COMPRESSION_NONE, 0, 16, 1 },
        { "palette4.tif", PHOTOMETRIC_PALETTE, 4, 1, COMPRESSION_PACKBITS, 0, 0, 1 },
        { "ycbcr-jpeg.tif", PHOTOMETRIC_YCBCR, 8, 3, COMPRESSION_JPEG, 0, 16, 1 },
        { "three-pages.tif", PHOTOMETRIC_MINISWHITE, 1, 1, COMPRESSION_CCITTFAX4, 0, 0, 3 },
        { "cmyk.tif", PHOTOMETRIC_SEPARATED, 8, 4, COMPRESSION_NONE, 0, 0, 1 },
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        tiff_seed(&seeds[i]);
}

/* ---- JPEG ---------------------------------------------------------------------- */

static void jpeg_seed(const char *name, J_COLOR_SPACE space, int components, bool progressive, bool arithmetic,
                      int orientation)
{
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&cinfo);
    unsigned char *out = NULL;
    unsigned long size = 0;
    jpeg_mem_dest(&cinfo, &out, &size);
    cinfo.image_width = 24;
    cinfo.image_height = 16;
    cinfo.input_components = components;
    cinfo.in_color_space = space;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, 50, TRUE);
    if (progressive)
        jpeg_simple_progression(&cinfo);
    cinfo.arith_code = arithmetic;
    cinfo.density_unit = 1;
    cinfo.X_density = cinfo.Y_density = 300;
    jpeg_start_compress(&cinfo, TRUE);
    if (orientation) {
        /* EXIF, little-endian: IFD0 with Orientation and the resolution. */
        static const uint8_t exif_head[] = { 'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0, 4, 0 };
        uint8_t exif[sizeof exif_head + 4 * 12 + 4 + 16];
        memcpy(exif, exif_head, sizeof exif_head);
        uint8_t *e = exif + sizeof exif_head;
        const uint16_t tags[4][2] = { { 0x0112, 3 }, { 0x011a, 5 }, { 0x011b, 5 }, { 0x0128, 3 } };
        uint32_t rational = 8 + 2 + 4 * 12 + 4;
        for (int i = 0; i < 4; i++, e += 12) {
            uint32_t value = i == 0 ? (uint32_t)orientation : i == 3 ? 2u : rational + 8u * (uint32_t)(i - 1);
            uint8_t entry[12] = { (uint8_t)tags[i][0], (uint8_t)(tags[i][0] >> 8), (uint8_t)tags[i][1], 0, 1, 0, 0, 0,
                                  (uint8_t)value, (uint8_t)(value >> 8), (uint8_t)(value >> 16), (uint8_t)(value >> 24) };
            memcpy(e, entry, 12);
        }
        memset(e, 0, 4);
        e += 4;
        for (int i = 0; i < 2; i++, e += 8) {
            uint8_t r[8] = { 200, 0, 0, 0, 1, 0, 0, 0 };
            memcpy(e, r, 8);
        }
        jpeg_write_marker(&cinfo, JPEG_APP0 + 1, exif, (unsigned)sizeof exif);
    }
    uint8_t row[24 * 4];
    while (cinfo.next_scanline < cinfo.image_height) {
        for (int i = 0; i < 24 * components; i++)
            row[i] = sample(i, (int)cinfo.next_scanline, 0);
        JSAMPROW r = row;
        jpeg_write_scanlines(&cinfo, &r, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    save(name, out, size);
    free(out);
}

static void jpeg_seeds(void)
{
    jpeg_seed("gray.jpg", JCS_GRAYSCALE, 1, false, false, 0);
    jpeg_seed("rgb.jpg", JCS_RGB, 3, false, false, 0);
    jpeg_seed("rgb-progressive.jpg", JCS_RGB, 3, true, false, 0);
    jpeg_seed("rgb-arithmetic.jpg", JCS_RGB, 3, false, true, 0);
    jpeg_seed("rgb-orientation6.jpg", JCS_RGB, 3, false, false, 6);
    jpeg_seed("gray-orientation3.jpg", JCS_GRAYSCALE, 1, true, false, 3);
    jpeg_seed("cmyk.jpg", JCS_CMYK, 4, false, false, 0);
}

/* ---- JPEG 2000 ------------------------------------------------------------------ */

struct memory {
    uint8_t *bytes;
    size_t size, capacity, pos;
};

static OPJ_SIZE_T memory_write(void *buf, OPJ_SIZE_T n, void *user)
{
    struct memory *m = user;
    if (m->pos + n > m->capacity) {
        size_t capacity = (m->pos + n) * 2;
        uint8_t *grown = realloc(m->bytes, capacity);
        if (!grown)
            return (OPJ_SIZE_T)-1;
        m->bytes = grown;
        m->capacity = capacity;
    }
    memcpy(m->bytes + m->pos, buf, n);
    m->pos += n;
    if (m->pos > m->size)
        m->size = m->pos;
    return n;
}

static OPJ_OFF_T memory_skip(OPJ_OFF_T n, void *user)
{
    struct memory *m = user;
    m->pos += (size_t)n;
    return n;
}

static OPJ_BOOL memory_seek(OPJ_OFF_T pos, void *user)
{
    ((struct memory *)user)->pos = (size_t)pos;
    return OPJ_TRUE;
}

static void jp2_seed(const char *name, bool jp2, int components, int precision, bool lossy, int tile)
{
    enum { W = 20, H = 14 };
    opj_image_cmptparm_t parms[4];
    memset(parms, 0, sizeof parms);
    for (int c = 0; c < components; c++) {
        parms[c].dx = parms[c].dy = 1;
        parms[c].w = W;
        parms[c].h = H;
        parms[c].prec = (OPJ_UINT32)precision;
    }
    opj_image_t *image = opj_image_create((OPJ_UINT32)components, parms,
                                          components >= 3 ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY);
    if (!image) {
        failed = 1;
        return;
    }
    image->x1 = W;
    image->y1 = H;
    for (int c = 0; c < components; c++)
        for (int i = 0; i < W * H; i++)
            image->comps[c].data[i] = sample(i % W, i / W, c) >> (8 - (precision < 8 ? precision : 8));
    if (components == 2 || components == 4)
        image->comps[components - 1].alpha = 1;
    opj_cparameters_t params;
    opj_set_default_encoder_parameters(&params);
    params.tcp_numlayers = 1;
    params.tcp_rates[0] = lossy ? 8 : 0;
    params.cp_disto_alloc = 1;
    params.irreversible = lossy;
    params.numresolution = 3;
    if (tile) {
        params.tile_size_on = OPJ_TRUE;
        params.cp_tdx = params.cp_tdy = tile;
    }
    params.tcp_mct = components >= 3 ? 1 : 0;
    opj_codec_t *codec = opj_create_compress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
    struct memory m = { 0 };
    opj_stream_t *stream = opj_stream_create(4096, OPJ_FALSE);
    opj_stream_set_user_data(stream, &m, NULL);
    opj_stream_set_write_function(stream, memory_write);
    opj_stream_set_skip_function(stream, memory_skip);
    opj_stream_set_seek_function(stream, memory_seek);
    bool ok = opj_setup_encoder(codec, &params, image) && opj_start_compress(codec, image, stream)
              && opj_encode(codec, stream) && opj_end_compress(codec, stream);
    opj_stream_destroy(stream);
    opj_destroy_codec(codec);
    opj_image_destroy(image);
    if (ok)
        save(name, m.bytes, m.size);
    else
        failed = 1;
    free(m.bytes);
}

static void jp2_seeds(void)
{
    jp2_seed("gray.jp2", true, 1, 8, false, 0);
    jp2_seed("rgb-lossy.jp2", true, 3, 8, true, 0);
    jp2_seed("rgba-tiles.jp2", true, 4, 8, false, 8);
    jp2_seed("gray-alpha.jp2", true, 2, 8, false, 0);
    jp2_seed("rgb.j2k", false, 3, 8, false, 0);
    jp2_seed("gray12.j2k", false, 1, 12, true, 0);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_seeds tiff|jpeg|jp2 DIRECTORY\n");
        return 2;
    }
    out_dir = argv[2];
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        perror(out_dir);
        return 1;
    }
    if (!strcmp(argv[1], "tiff"))
        tiff_seeds();
    else if (!strcmp(argv[1], "jpeg"))
        jpeg_seeds();
    else if (!strcmp(argv[1], "jp2"))
        jp2_seeds();
    else
        return 2;
    return failed;
}
