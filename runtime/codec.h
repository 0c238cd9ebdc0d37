/*
** codec.h — the PNG and PNM readers and writers behind image.c (internal,
** not installed).
**
** image.c sniffs the signature and picks a reader; it validates the image and
** `bits` and owns the temporary file before it calls a writer, so the codecs
** only encode and decode.
*/
#ifndef DB_CODEC_H
#define DB_CODEC_H

#include <stdint.h>
#include <stdio.h>
#include "runtime/image.h"

/* Decodes a PNG held in memory into an 8-bit gray or RGB image (alpha is
** composited over white). NULL and an error naming `name` on failure. */
db_image *db_png_read(const uint8_t *bytes, size_t size, const char *name);

/* The sides and channel count (1 or 3, as db_png_read decodes them) that a
** PNG's header declares, from the file's first 26 bytes or more (the caller
** has checked the signature). DB_ERR_FORMAT naming `name` when IHDR is not
** where it must be, and db_image_check_size's error when the declared image
** could not be decoded. */
db_status db_png_peek(const uint8_t *bytes, size_t size, const char *name, int *width, int *height,
                      int *channels);

/* Encodes `img` as PNG into `f`: 1-bit gray (white iff value >= 128), 8-bit
** gray or 8-bit RGB. `path` names the final file in error messages. */
db_status db_png_write(const db_image *img, FILE *f, int bits, const char *path);

/* Decodes a PNM (P1–P6) held in memory into an 8-bit gray or RGB image.
** NULL and an error naming `name` on failure. */
db_image *db_pnm_read(const uint8_t *bytes, size_t size, const char *name);

/* As db_png_peek, for a PNM header; DB_ERR_FORMAT when `bytes` end before the
** header does (its last number must be followed by a byte). */
db_status db_pnm_peek(const uint8_t *bytes, size_t size, const char *name, int *width, int *height,
                      int *channels);

/* Encodes `img` into `f` as P4 (bits 1; black iff value < 128), P5 (gray)
** or P6 (RGB). `path` names the final file in error messages. */
db_status db_pnm_write(const db_image *img, FILE *f, int bits, const char *path);

/* Records that writing `path` failed with errno value `err`, with a hint for
** the common causes; shared so that every writer words the failure alike. */
db_status db_image_write_failed(const char *path, int err);

#endif
