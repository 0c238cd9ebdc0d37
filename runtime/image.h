/*
** image.h — 8-bit gray and RGB images, and their PNG/PNM files.
**
** Ink is black (0) and background white (255), as in DIBCO ground truth.
** Readers accept every PNG colour type and bit depth (16-bit scaled to 8,
** palette expanded, alpha composited over white) and PNM P1–P6 (maxval up to
** 65535, scaled). Gray images stay gray; colour images are RGB. Writers produce
** PNG (1-bit or 8-bit gray, or 8-bit RGB) and PNM, always atomically: a partial
** file is never left under the final name.
*/
#ifndef DB_IMAGE_H
#define DB_IMAGE_H

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
    DB_FILE_AUTO = 0, /* from the file name's extension: .png, .pbm, .pgm, .ppm, .pnm */
    DB_FILE_PNG,
    DB_FILE_PNM
} db_file_format;

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

/* Reads a PNG or PNM file, recognised by its contents (not its name).
** Returns NULL and an error message naming `path` on any failure. */
db_image *db_image_read(const char *path);

/* The sides and channel count (1 or 3) of the image that the PNG or PNM file
** `path` holds, from its header alone (the first DB_IMAGE_PEEK_BYTES bytes),
** as db_image_read would decode it: what a batch reserves memory for before it
** decodes a page. Errors name `path`; an image db_image_check_size refuses is
** an error here too, and so is a path that is not a regular file (a pipe's
** bytes, once read, would be missing from the decode). */
db_status db_image_peek(const char *path, int *width, int *height, int *channels);

/* How much of a file db_image_peek reads: PNG's header is 33 bytes; a PNM
** header with long comments may not fit, and then the peek fails. */
enum { DB_IMAGE_PEEK_BYTES = 4096 };

/* Reads an image from memory; `name` is used in error messages. */
db_image *db_image_read_memory(const uint8_t *bytes, size_t size, const char *name);

/* The file name extensions, with their dot, that name the formats docbin reads
** and writes (DB_FILE_AUTO's): .png, .pbm, .pgm, .ppm, .pnm. */
enum { DB_IMAGE_N_EXTS = 5 };
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
** then rename). For gray images `bits` chooses 1 (black iff value < 128;
** PNG 1-bit gray or PBM P4) or 8 (PNG 8-bit gray or PGM P5); RGB images are
** always 8-bit (PNG RGB or PPM P6) and `bits` must be 8. */
db_status db_image_write(const db_image *img, const char *path, db_file_format format,
                         int bits);

#endif
