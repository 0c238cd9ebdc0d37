/*
** image.h — 8-bit gray and RGB images, and their files.
**
** Ink is black (0) and background white (255), as in DIBCO ground truth.
** Readers recognise a file by its contents, not its name, and accept PNG, PNM,
** TIFF (every page of a multi-page file), JPEG and JPEG 2000: samples of more
** than 8 bits are scaled to 8, fewer expanded, palettes expanded, min-is-white
** inverted and alpha composited over white. Gray images stay gray; colour
** images are RGB. Writers produce PNG, PNM and TIFF (1-bit or 8-bit gray, or
** 8-bit RGB), always atomically: a partial file is never left under the final
** name. docs/formats.md lists what each format carries and its limits.
*/
#ifndef DB_IMAGE_H
#define DB_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "runtime/error.h"

/* db_image, an image in memory (rows of width*channels bytes, `stride` bytes
** apart), and db_image_free are public (include/docbin.h). */

/* How colour becomes gray. Both are exact integer formulas. */
typedef enum db_gray_rule {
    DB_GRAY_BT601 = 0, /* (299 r + 587 g + 114 b + 500) / 1000: ITU-R BT.601 luma, rounded */
    DB_GRAY_QT = 1     /* (11 r + 16 g + 5 b) / 32, truncated: Qt's qGray, used by Doxa */
} db_gray_rule;

/* How a file is written. */
typedef enum db_file_format {
    DB_FILE_AUTO = 0, /* from the file name's extension: .png, .pbm, .pgm, .ppm, .pnm, .tif, .tiff */
    DB_FILE_PNG,
    DB_FILE_PNM,
    DB_FILE_TIFF
} db_file_format;

/* How a writer compresses pixels. Each format takes only some. */
typedef enum db_compression {
    DB_COMPRESSION_DEFAULT = 0, /* TIFF: CCITT Group 4 for 1-bit, Deflate for 8-bit; PNG: Deflate; PNM: none */
    DB_COMPRESSION_NONE,        /* TIFF, PNM */
    DB_COMPRESSION_G4,          /* TIFF, 1-bit only: CCITT T.6, the archival form of bitonal pages */
    DB_COMPRESSION_DEFLATE,     /* TIFF, PNG */
    DB_COMPRESSION_LZW          /* TIFF */
} db_compression;

/* The compression named `name` ("default", "none", "g4", "deflate", "lzw");
** DB_ERR_USAGE listing the names when there is none. */
db_status db_compression_parse(const char *name, db_compression *compression);

/* The name db_compression_parse takes for `compression`. */
const char *db_compression_name(db_compression compression);

/* Largest image accepted: both dimensions and the total byte count are
** checked before anything is allocated, so a hostile header cannot exhaust
** memory. The byte limit is the smaller of this and half the memory the process
** may use (db_memory_size: physical memory or its cgroup's limit). */
#define DB_IMAGE_MAX_SIDE 1000000
#define DB_IMAGE_MAX_BYTES ((size_t)1 << 34)

/* Checks that a width x height x channels image may be allocated; `what` names
** the file or caller for the error message. */
db_status db_image_check_size(long long width, long long height, int channels,
                              const char *what);

/* Allocates an image with tightly packed rows (stride = width*channels),
** contents zeroed. Returns NULL with an error message on failure. */
db_image *db_image_new(int width, int height, int channels);

/* As db_image_new, contents undefined: for writers of every pixel. A large
** image's pixels are staging memory (runtime/buffer.h), which a run uses as
** its input and downloads its result into without a copy. */
db_image *db_image_alloc(int width, int height, int channels);

/* Frees an image and its pixels; NULL is allowed. */
void db_image_free(db_image *img);

/* A bitonal page packed eight pixels a byte, the first pixel in the most
** significant bit, a bit set where the pixel is white (as PNG's 1-bit gray
** stores it), rows `stride` bytes apart: what a run hands a 1-bit writer, an
** eighth of the bytes of the 8-bit image. */
typedef struct db_bitmap {
    int width, height;
    size_t stride;
    uint8_t *data;
    double dpi_x, dpi_y; /* as db_image's */
    uint8_t *g4;         /* its CCITT Group 4 stream when the run coded it (db_run_bitmap), else NULL */
    size_t g4_size;
} db_bitmap;

/* A width x height bitmap with rows of (width + 7) / 8 bytes, contents
** undefined, its bytes staging memory (which a run downloads into); NULL with
** an error message on failure. */
db_bitmap *db_bitmap_alloc(int width, int height);

/* `img` (gray) packed: white where a pixel is 128 or more, the padding bits
** 0; NULL with an error message on failure. */
db_bitmap *db_bitmap_pack(const db_image *img);

/* Packs the bitmap's width x height 8-bit gray pixels, rows `stride` bytes
** apart, into it, as db_bitmap_pack does. */
void db_bitmap_fill(db_bitmap *bm, const uint8_t *pixels, size_t stride);

/* Frees a bitmap and its bytes; NULL is allowed. */
void db_bitmap_free(db_bitmap *bm);

/* Reads an image file, recognised by its contents (not its name); of a
** multi-page TIFF, the first page (db_doc_* reads them all). Returns NULL and
** an error message naming `path` on any failure. */
db_image *db_image_read(const char *path);

/* The sides and channel count (1 or 3) of the image that file `path` holds, as
** db_image_read would decode it, from its header alone: what a batch reserves
** memory for before it decodes a page. PNG and PNM headers must lie in the
** first DB_IMAGE_PEEK_BYTES bytes; TIFF, JPEG and JPEG 2000 headers are read as
** far as they go (a TIFF's first page; db_doc_peek_page gives the others).
** Errors name `path`; an image db_image_check_size refuses is an error here
** too, and so is a path that is not a regular file (a pipe's bytes, once read,
** would be missing from the decode). */
db_status db_image_peek(const char *path, int *width, int *height, int *channels);

/* How much of a file db_image_peek reads of a PNG or PNM: PNG's header is 33
** bytes; a PNM header with long comments may not fit, and then the peek fails. */
enum { DB_IMAGE_PEEK_BYTES = 4096 };

/* Reads an image from memory (the first page of a multi-page TIFF); `name`
** is used in error messages. */
db_image *db_image_read_memory(const uint8_t *bytes, size_t size, const char *name);

/* A document: the pages of an image file, decoded one at a time, so that a
** file of hundreds of pages is read in the memory of one. A TIFF has a page for
** each image of its main IFD chain, less reduced-resolution copies (thumbnails)
** and transparency masks; every other file has one page. Pages are numbered
** from 0 here and from 1 in messages ("scan.tif: page 3 of 5: ..."). A
** document is used by one thread at a time. */
typedef struct db_doc db_doc;

/* Opens file `path` and counts its pages; for a TIFF this reads every IFD but
** no pixels. Only a regular file is read: a pipe, a device or a directory is
** refused at once, without waiting or reading (db_doc_open_memory takes a
** page read from a pipe). Errors name `path` and, for a damaged IFD chain,
** the page. */
db_status db_doc_open(const char *path, db_doc **doc);

/* As db_doc_open, for a file held in memory; `bytes` must stay valid until
** db_doc_close. `name` is used in error messages. */
db_status db_doc_open_memory(const uint8_t *bytes, size_t size, const char *name, db_doc **doc);

/* The number of pages, at least 1. */
int db_doc_pages(const db_doc *doc);

/* The sides and channel count (1 or 3) of page `page`, from its header alone,
** as db_doc_read_page would decode it; an image db_image_check_size refuses
** is an error here too. */
db_status db_doc_peek_page(db_doc *doc, int page, int *width, int *height, int *channels);

/* Decodes page `page`. NULL and an error naming the file and the page on failure. */
db_image *db_doc_read_page(db_doc *doc, int page);

/* Closes the file and frees the document; NULL is allowed. */
void db_doc_close(db_doc *doc);

/* The file name extensions, with their dot, that name the formats docbin reads
** (.png, .pbm, .pgm, .ppm, .pnm, .tif, .tiff, .jpg, .jpeg, .jp2, .j2k); it
** writes those of DB_FILE_AUTO. */
enum { DB_IMAGE_N_EXTS = 11 };
extern const char *const db_image_exts[DB_IMAGE_N_EXTS];

/* The extension of file name `name` (its last dot after its last slash, with
** the dot) when it is one of exts[0..n_exts) in any case, else NULL. */
const char *db_image_file_ext(const char *name, const char *const *exts, int n_exts);

/* The image files of directory `dir`: its entries whose name has one of
** exts[0..n_exts) (db_image_exts, or those of the formats a caller takes) and
** does not start with a dot, less those that are not regular files (a
** directory named x.png; one that cannot be examined, a dangling link, stays,
** so that reading it says what is wrong). File names only, sorted by strcmp so
** that every run over a directory goes in the same order; *names is NULL when
** there are none. Free with db_image_list_free. Errors name `dir`. */
db_status db_image_list_dir(const char *dir, const char *const *exts, int n_exts, char ***names, size_t *count);

/* Frees what db_image_list_dir returned; NULL is allowed. */
void db_image_list_free(char **names, size_t count);

/* Writes `img` to `path` atomically (temporary file in the same directory,
** then rename), compressed as the format's default (db_compression). For gray
** images `bits` chooses 1 (black iff value < 128; PNG 1-bit gray, PBM P4 or
** TIFF 1-bit min-is-white) or 8 (PNG 8-bit gray, PGM P5 or TIFF min-is-black);
** RGB images are always 8-bit (PNG RGB, PPM P6 or TIFF RGB) and `bits` must be
** 8. The resolution goes into PNG and TIFF files. Other compressions and more
** than one page: db_doc_writer_*. */
db_status db_image_write(const db_image *img, const char *path, db_file_format format,
                         int bits);

/* Checks, before any work, that gray pages of `bits` bits can be written to
** `path` in `format` with `compression` (and, with `several`, more than one
** page into one file): what db_doc_writer_open and _add would refuse, such as
** an unknown extension, Group 4 for 8 bits, or .pgm for 1 bit. */
db_status db_image_check_output(const char *path, db_file_format format, db_compression compression, int bits,
                                bool several);

/* A file being written a page at a time: only the page being added is held,
** and the file appears under its name, whole, on commit. TIFF takes any number
** of pages; PNG and PNM take one. */
typedef struct db_doc_writer db_doc_writer;

/* Starts writing `path` (temporary file beside it) in `format` (DB_FILE_AUTO:
** from the extension) with `compression`; DB_ERR_USAGE when the format does
** not take that compression. */
db_status db_doc_writer_open(const char *path, db_file_format format, db_compression compression,
                             db_doc_writer **writer);

/* Appends `img` as the next page, `bits` as for db_image_write (pages may
** differ in size, channels and bits). After a failure the file can only be
** abandoned: db_doc_writer_abort, or a commit, which refuses. */
db_status db_doc_writer_add(db_doc_writer *writer, const db_image *img, int bits);

/* Whether a 1-bit page written to `path` in `format` (DB_FILE_AUTO: from the
** extension) with `compression` is stored as CCITT Group 4: a run may then
** code it where it was made (db_run_bitmap). */
bool db_doc_takes_g4(const char *path, db_file_format format, db_compression compression);

/* Appends a bitmap as the next page, as db_doc_writer_add with 1 bit. */
db_status db_doc_writer_add_bitmap(db_doc_writer *writer, const db_bitmap *bm);

/* Finishes the file and renames it into place; on failure (or when no page
** was added, or an add failed) nothing is left under the name. Frees `writer`
** either way. */
db_status db_doc_writer_commit(db_doc_writer *writer);

/* Removes the temporary file and frees `writer`; NULL is allowed. */
void db_doc_writer_abort(db_doc_writer *writer);

#endif
