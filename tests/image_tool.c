/*
** image_tool.c — the image library's document API on the command line, for
** the format tests (test_formats.py), which check its results with Pillow and
** libtiff's tools:
**
**   image_tool peek FILE                 db_image_peek: "W H C"
**   image_tool pages FILE                every page's peek: "page I: W H C"
**   image_tool dump FILE PREFIX          every page as PREFIX-I.pnm (P5/P6);
**                                        prints "page I: W H C DPI_X DPI_Y"
**   image_tool write OUT BITS COMPRESSION IN...
**                                        every page of every input, in order,
**                                        into OUT through db_doc_writer
**
** Errors print the library's one-line message on stderr and exit with
** db_exit_status.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/image.h"

static int fail(void)
{
    fprintf(stderr, "%s\n", db_error_message());
    return db_exit_status(db_error_status());
}

static int pages(const char *path, const char *prefix)
{
    db_doc *doc;
    if (db_doc_open(path, &doc) != DB_OK)
        return fail();
    for (int i = 0; i < db_doc_pages(doc); i++) {
        int w, h, c;
        if (!prefix) {
            if (db_doc_peek_page(doc, i, &w, &h, &c) != DB_OK) {
                db_doc_close(doc);
                return fail();
            }
            printf("page %d: %d %d %d\n", i, w, h, c);
            continue;
        }
        db_image *img = db_doc_read_page(doc, i);
        char out[4096];
        snprintf(out, sizeof out, "%s-%d.pnm", prefix, i);
        if (!img || db_image_write(img, out, DB_FILE_PNM, 8) != DB_OK) {
            db_image_free(img);
            db_doc_close(doc);
            return fail();
        }
        printf("page %d: %d %d %d %.6f %.6f\n", i, img->width, img->height, img->channels, img->dpi_x, img->dpi_y);
        db_image_free(img);
    }
    db_doc_close(doc);
    return 0;
}

static int write_pages(const char *out, int bits, const char *compression_name, char **inputs, int n)
{
    db_compression compression;
    db_doc_writer *w;
    if (db_compression_parse(compression_name, &compression) != DB_OK
        || db_doc_writer_open(out, DB_FILE_AUTO, compression, &w) != DB_OK)
        return fail();
    for (int k = 0; k < n; k++) {
        db_doc *doc;
        if (db_doc_open(inputs[k], &doc) != DB_OK) {
            db_doc_writer_abort(w);
            return fail();
        }
        for (int i = 0; i < db_doc_pages(doc); i++) {
            db_image *img = db_doc_read_page(doc, i);
            db_status st = img ? db_doc_writer_add(w, img, bits) : db_error_status();
            db_image_free(img);
            if (st != DB_OK) {
                int code = fail();
                db_doc_close(doc);
                db_doc_writer_abort(w);
                return code;
            }
        }
        db_doc_close(doc);
    }
    return db_doc_writer_commit(w) == DB_OK ? 0 : fail();
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "peek")) {
        int w, h, c;
        if (db_image_peek(argv[2], &w, &h, &c) != DB_OK)
            return fail();
        printf("%d %d %d\n", w, h, c);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "pages"))
        return pages(argv[2], NULL);
    if (argc == 4 && !strcmp(argv[1], "dump"))
        return pages(argv[2], argv[3]);
    if (argc >= 6 && !strcmp(argv[1], "write"))
        return write_pages(argv[2], atoi(argv[3]), argv[4], argv + 5, argc - 5);
    fprintf(stderr, "usage: image_tool peek|pages FILE | dump FILE PREFIX | write OUT BITS COMPRESSION IN...\n");
    return 2;
}
