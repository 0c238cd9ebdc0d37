/*
** fuzz_image.c — libFuzzer target for the image readers and their header
** peeks: any bytes must give an image (or sides) or an error, never a crash, a
** leak or an out-of-bounds access; where both succeed they agree.
** Seeds are in tests/fuzz_corpus/.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "runtime/codec.h"
#include "runtime/image.h"

/* Called by libFuzzer once per input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    db_image *img = db_image_read_memory(data, size, "fuzz");
    int w, h, c;
    db_status peek = size >= 8 && data[0] == 0x89 ? db_png_peek(data, size, "fuzz", &w, &h, &c)
                     : size >= 2 && data[0] == 'P' ? db_pnm_peek(data, size, "fuzz", &w, &h, &c)
                                                     : DB_ERR_FORMAT;
    if (img && peek == DB_OK && (w != img->width || h != img->height || c != img->channels))
        abort();
    db_image_free(img);
    return 0;
}
