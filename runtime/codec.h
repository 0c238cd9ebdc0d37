/*
** codec.h — the readers and writers behind image.c (internal, not installed):
** PNG (png.c), PNM (pnm.c), TIFF (tiff.c), JPEG (jpeg.c), JPEG 2000 (jp2.c).
**
** image.c sniffs the signature and picks a reader; it validates the image,
** `bits` and the compression and owns the temporary file before it calls a
** writer, so the codecs only encode and decode. Every reader checks a declared
** image with db_image_check_size, and its own work buffers with
** db_codec_check_bytes, before it allocates them.
*/
#ifndef DB_CODEC_H
#define DB_CODEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "runtime/image.h"

/* The bytes of a file being read: held in memory (`bytes`), or read on demand
** from descriptor `fd` so that a document of many pages is never held whole. */
typedef struct db_source {
    const char *name;     /* the file, for messages */
    const uint8_t *bytes; /* the whole file, or NULL to read `fd` */
    int fd;
    uint64_t size;        /* the file's length */
} db_source;

/* Copies up to `n` bytes at `offset` into `out`; *got is how many (fewer at
** the end of the file). DB_ERR_IO naming the file when a read fails, with
** errno kept. */
db_status db_source_read(const db_source *src, uint64_t offset, void *out, size_t n, size_t *got);

/* Checks that a reader may allocate `bytes` of work memory (a strip buffer, a
** decoder's coefficients) under the limit of db_image_check_size: DB_ERR_NOMEM
** naming `name` and `what` when not. */
db_status db_codec_check_bytes(unsigned long long bytes, const char *what, const char *name);

/* The largest single allocation a codec library may make on docbin's behalf:
** db_image_check_size's byte limit. */
size_t db_codec_memory_limit(void);

/* v * 255 / maxval rounded to nearest, exact for every maxval from 1 to
** 65535: how every reader brings samples of other depths to 8 bits (libpng's
** png_set_scale_16 rounds the same way). */
static inline uint8_t db_scale_to_8(unsigned v, unsigned maxval)
{
    return (uint8_t)((v * 255u + maxval / 2) / maxval);
}

/* Alpha compositing over a white background, exact in integers:
** (c*a + 255*(255-a) + 127) / 255, i.e. c*a/255 + 255*(1 - a/255) rounded to
** nearest. a = 255 gives c exactly, a = 0 gives 255. */
static inline uint8_t db_over_white(unsigned c, unsigned a)
{
    return (uint8_t)((c * a + 255u * (255u - a) + 127u) / 255u);
}

/* Encodes `height` rows of `width` pixels, packed MSB first with 1 for white
** (a db_bitmap's rows) and `stride` bytes apart, as CCITT Group 4 (T.6) with
** the end-of-facsimile block, as one TIFF strip holds it (runtime/g4.c): a
** malloc'ed buffer of *size bytes, or NULL when memory is short. */
uint8_t *db_g4_encode(const uint8_t *rows, size_t stride, int width, int height, size_t *size);

/* The encoder's codes for cl/g4.cl, each its bits << 4 | its length: the
** terminating codes of white and black runs, their make-up codes, the
** shared make-up codes, the vertical modes from -3 to 3, pass, horizontal,
** EOL. */
enum { DB_G4_CODES = 64 + 64 + 27 + 27 + 13 + 7 + 3 };
void db_g4_codes(uint32_t codes[DB_G4_CODES]);

/* The resolution in dpi of `per_unit` dots per unit of `unit_inches` inches
** where files store whole numbers (PNG's dots per metre, JFIF's per
** centimetre): the whole dpi nearest to it when that dpi stores as the same
** number (300 dpi is 11811 dots per metre and reads back as 300), else the
** exact value. */
double db_dpi_from_whole_units(unsigned long per_unit, double unit_inches);

/* TIFF LZW (runtime/lzw.c). The decoded bytes go to work + DB_LZW_BEFORE;
** the decoder uses the DB_LZW_BEFORE bytes before them and DB_LZW_AFTER
** after the `want` bytes as scratch: up to four strings of at most 4096
** bytes, each copied 16 bytes at a time, may land past the end. */
enum { DB_LZW_BEFORE = 256, DB_LZW_AFTER = 4 * 4096 + 32 };

/* Decodes the `n` bytes of one LZW-compressed strip or tile into `want` bytes:
** their start, or NULL for a stream that is not plainly well-formed (an
** undefined code, too few codes, the old bit order), which libtiff then
** decodes for its verdict. */
uint8_t *db_lzw_decode(const uint8_t *in, size_t n, uint8_t *work, size_t want);

/* Decodes a PNG held in memory into an 8-bit gray or RGB image (alpha is
** composited over white), with the resolution of its pHYs chunk. NULL and an
** error naming `name` on failure. */
db_image *db_png_read(const uint8_t *bytes, size_t size, const char *name);

/* The sides and channel count (1 or 3, as db_png_read decodes them) that a
** PNG's header declares, from the file's first 26 bytes or more (the caller
** has checked the signature). DB_ERR_FORMAT naming `name` when IHDR is not
** where it must be, and db_image_check_size's error when the declared image
** could not be decoded. */
db_status db_png_peek(const uint8_t *bytes, size_t size, const char *name, int *width, int *height,
                      int *channels);

/* The fast path of db_png_read (runtime/png_fast.c): an 8-bit gray or RGB,
** non-interlaced PNG with every checksum right, decoded with libdeflate.
** *handled false (and NULL, no error) for every other file: libpng's. */
db_image *db_png_read_fast(const uint8_t *bytes, size_t size, const char *name, bool *handled);

/* The fast path of db_png_write for gray images, deflated with libdeflate. */
db_status db_png_write_fast(const db_image *img, FILE *f, const char *path);

/* Encodes a bitmap as 1-bit gray PNG into `f` (libdeflate), with a pHYs chunk
** when the resolution is known. */
db_status db_png_write_bitmap(const db_bitmap *bm, FILE *f, const char *path);

/* Decodes with libpng alone, whatever the file (tests compare the fast path with it). */
db_image *db_png_read_libpng(const uint8_t *bytes, size_t size, const char *name);

/* Encodes `img` as 8-bit gray or RGB PNG into `f`, with a pHYs chunk when the
** resolution is known. `path` names the final file in error messages. */
db_status db_png_write(const db_image *img, FILE *f, const char *path);

/* Decodes a PNM (P1–P6) held in memory into an 8-bit gray or RGB image.
** NULL and an error naming `name` on failure. */
db_image *db_pnm_read(const uint8_t *bytes, size_t size, const char *name);

/* As db_png_peek, for a PNM header; DB_ERR_FORMAT when `bytes` end before the
** header does (its last number must be followed by a byte). */
db_status db_pnm_peek(const uint8_t *bytes, size_t size, const char *name, int *width, int *height,
                      int *channels);

/* Encodes `img` into `f` as P5 (gray) or P6 (RGB), or a bitmap as P4. `path`
** names the final file in error messages. */
db_status db_pnm_write(const db_image *img, FILE *f, const char *path);
db_status db_pnm_write_bitmap(const db_bitmap *bm, FILE *f, const char *path);

/* TIFF. A db_tiff reads the pages of one file; `src` must outlive it. */
typedef struct db_tiff db_tiff;

/* Opens the TIFF in `src` and counts its pages (db_doc's rules). Errors name
** the file and, for a damaged IFD chain, the page. */
db_status db_tiff_open(const db_source *src, db_tiff **tiff, int *pages);

/* As db_doc_peek_page and db_doc_read_page. */
db_status db_tiff_peek(db_tiff *tiff, int page, int *width, int *height, int *channels);
db_image *db_tiff_read(db_tiff *tiff, int page);

/* NULL is allowed. */
void db_tiff_close(db_tiff *tiff);

/* A TIFF being written page by page into descriptor `fd` (the temporary file
** of an atomic write); the caller owns and closes `fd`. */
typedef struct db_tiff_writer db_tiff_writer;

db_status db_tiff_writer_open(int fd, const char *path, db_tiff_writer **writer);

/* Writes `img` (8-bit) or `bm` (1-bit, min-is-white) as the next page,
** compressed as `compression` (DB_COMPRESSION_DEFAULT: Deflate for 8-bit, G4
** for 1-bit; image.c has checked that they fit). */
db_status db_tiff_writer_add(db_tiff_writer *writer, const db_image *img, db_compression compression);
db_status db_tiff_writer_add_bitmap(db_tiff_writer *writer, const db_bitmap *bm, db_compression compression);

/* Ends the file (DB_OK) or abandons it (`finish` false); frees `writer`. */
db_status db_tiff_writer_close(db_tiff_writer *writer, bool finish);

/* JPEG: the image (EXIF orientation applied) and its header. */
db_image *db_jpeg_read(const db_source *src);
db_status db_jpeg_peek(const db_source *src, int *width, int *height, int *channels);

/* JPEG 2000, as a JP2 file or a bare codestream (J2K). */
db_image *db_jp2_read(const db_source *src);
db_status db_jp2_peek(const db_source *src, int *width, int *height, int *channels);

/* Records that writing `path` failed with errno value `err`, with a hint for
** the common causes; shared so that every writer words the failure alike. */
db_status db_image_write_failed(const char *path, int err);

#endif
