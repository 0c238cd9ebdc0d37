/*
** fuzz_image.c — libFuzzer target for the image readers and their header
** peeks: any bytes must give an image (or sides) or an error, never a crash, a
** leak or an out-of-bounds access; where both succeed they agree, and so does
** a peek of the first half of the bytes (what a peek of a long header sees).
** Seeds are in tests/fuzz_corpus/.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "runtime/codec.h"
#include "runtime/image.h"

/* Called by libFuzzer once per input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts when the peek of the first `size` bytes succeeds and differs from `img`. */
static void peek_agrees(const db_image *img, const uint8_t *data, size_t size)
{
    int w, h, c;
    db_status st = size >= 8 && data[0] == 0x89 ? db_png_peek(data, size, "fuzz", &w, &h, &c)
                   : size >= 2 && data[0] == 'P' ? db_pnm_peek(data, size, "fuzz", &w, &h, &c)
                                                   : DB_ERR_FORMAT;
    if (img && st == DB_OK && (w != img->width || h != img->height || c != img->channels))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || (data[0] != 0x89 && data[0] != 'P'))
        return 0;
    db_image *img = db_image_read_memory(data, size, "fuzz");
    peek_agrees(img, data, size);
    peek_agrees(img, data, size / 2);
    db_image_free(img);
    return 0;
}
