/*
** install_consumer.c — a program outside docbin: built by test_install.py
** against an installed tree with pkg-config's flags alone, never the sources.
** It binarizes IN into OUT (8-bit) through the public API, with both images
** in memory it owns whose rows are padded, as a pipeline's buffers may be:
**
**     install_consumer IN OUT ALGO SETTINGS [MAP]
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <docbin.h>

enum { PAD = 13 }; /* bytes after every row: strides that are not width*channels */

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: install_consumer IN OUT ALGO SETTINGS [MAP]\n");
        return 2;
    }
    db_image *file = NULL;
    db_context *ctx = NULL;
    db_status st = db_image_load(argv[1], &file);
    if (st == DB_OK)
        st = db_context_open(NULL, NULL, &ctx);
    if (st != DB_OK) {
        fprintf(stderr, "install_consumer: %s\n", db_error_message());
        return 1;
    }
    size_t in_row = (size_t)file->width * (size_t)file->channels;
    db_image in = {.width = file->width, .height = file->height, .channels = file->channels, .stride = in_row + PAD};
    db_image out = {.width = file->width, .height = file->height, .channels = 1, .stride = (size_t)file->width + PAD};
    in.data = malloc(in.stride * (size_t)in.height);
    out.data = malloc(out.stride * (size_t)out.height);
    if (!in.data || !out.data) {
        fprintf(stderr, "install_consumer: out of memory\n");
        return 1;
    }
    for (int y = 0; y < in.height; y++)
        memcpy(in.data + (size_t)y * in.stride, file->data + (size_t)y * file->stride, in_row);
    st = db_binarize(ctx, argv[3], argv[4], argc > 5 ? argv[5] : NULL, &in, &out);
    if (st == DB_OK)
        st = db_image_save(&out, argv[2], 8);
    if (st != DB_OK)
        fprintf(stderr, "install_consumer: %s (status %d)\n", db_error_message(), (int)st);
    free(in.data);
    free(out.data);
    db_image_free(file);
    db_context_close(ctx);
    return st == DB_OK ? 0 : 1;
}
