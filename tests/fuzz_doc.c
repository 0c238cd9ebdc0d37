/*
** fuzz_doc.c — libFuzzer targets for the document readers, one per format:
** built as fuzz_tiff (-DFUZZ_TIFF), fuzz_jpeg (-DFUZZ_JPEG) and fuzz_jp2
** (-DFUZZ_JP2). Any bytes must open as a document (or fail), and each of its
** first pages must peek and decode (or fail) without a crash, a leak or an
** out-of-bounds access; where peek and decode both succeed they agree. Seeds
** come from fuzz_seeds, made by the codec libraries.
**
** Pages of more than FUZZ_MAX_PIXELS are peeked but not decoded: a few bytes
** may legitimately declare a page of gigabytes (a blank Group 4 page, an
** empty JPEG 2000 tile), which the library decodes when memory allows but
** libFuzzer's 2 GB limit would report.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/image.h"

enum { FUZZ_MAX_PIXELS = 1 << 22, FUZZ_MAX_PAGES = 8 };

/* Called by libFuzzer once per input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the bytes carry the target's signature: others go to other readers. */
static int ours(const uint8_t *data, size_t size)
{
#if defined(FUZZ_TIFF)
    return size >= 4 && (!memcmp(data, "II", 2) || !memcmp(data, "MM", 2));
#elif defined(FUZZ_JPEG)
    return size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff;
#elif defined(FUZZ_JP2)
    static const uint8_t jp2[12] = { 0, 0, 0, 12, 'j', 'P', ' ', ' ', '\r', '\n', 0x87, '\n' };
    return (size >= 12 && !memcmp(data, jp2, 12)) || (size >= 4 && data[0] == 0xff && data[1] == 0x4f);
#else
#error "define FUZZ_TIFF, FUZZ_JPEG or FUZZ_JP2"
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ours(data, size))
        return 0;
    db_doc *doc;
    if (db_doc_open_memory(data, size, "fuzz", &doc) != DB_OK)
        return 0;
    int pages = db_doc_pages(doc);
    if (pages < 1)
        abort();
    for (int p = 0; p < pages && p < FUZZ_MAX_PAGES; p++) {
        int w, h, c;
        if (db_doc_peek_page(doc, p, &w, &h, &c) != DB_OK)
            continue;
        if (w < 1 || h < 1 || (c != 1 && c != 3))
            abort();
        if ((long long)w * h > FUZZ_MAX_PIXELS)
            continue;
        db_image *img = db_doc_read_page(doc, p);
        if (img && (img->width != w || img->height != h || img->channels != c))
            abort();
        db_image_free(img);
    }
    db_doc_close(doc);
    return 0;
}
