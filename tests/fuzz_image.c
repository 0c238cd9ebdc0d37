/*
** fuzz_image.c — libFuzzer target for the image readers: any bytes must give
** an image or an error, never a crash, a leak or an out-of-bounds access.
** Seeds are in tests/fuzz_corpus/.
*/
#include <stddef.h>
#include <stdint.h>
#include "runtime/image.h"

/* Called by libFuzzer once per input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    db_image_free(db_image_read_memory(data, size, "fuzz"));
    return 0;
}
