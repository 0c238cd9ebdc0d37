/*
** png_bench.c — one page's PNG decode through the libdeflate path and through
** libpng, and its 1-bit encode, medians of warm runs: what the fast path gains.
** usage: png_bench PAGE.png [RUNS]
*/
#include <stdio.h>
#include <stdlib.h>
#include "runtime/codec.h"
#include "runtime/util.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    char *bytes;
    size_t n;
    int runs = argc > 2 ? atoi(argv[2]) : 20;
    if (argc < 2 || runs < 1 || runs > 1000 || db_read_file(argv[1], (size_t)1 << 30, &bytes, &n) != DB_OK) {
        fprintf(stderr, "usage: png_bench PAGE.png [RUNS 1..1000]: %s\n", db_error_message());
        return 2;
    }
    double ms[1000];
    const char *names[] = {"decode-libdeflate", "decode-libpng", "encode-1bit"};
    db_image *page = db_png_read((const uint8_t *)bytes, n, argv[1]);
    for (int what = 0; page && what < 3; what++) {
        for (int r = 0; r <= runs; r++) {
            uint64_t t = db_now_ns();
            if (what == 2) {
                FILE *f = fopen("/dev/null", "w");
                db_png_write(page, f, 1, "/dev/null");
                fclose(f);
            } else {
                db_image_free(what ? db_png_read_libpng((const uint8_t *)bytes, n, argv[1])
                                   : db_png_read((const uint8_t *)bytes, n, argv[1]));
            }
            if (r > 0)
                ms[r - 1] = (double)(db_now_ns() - t) / 1e6;
        }
        qsort(ms, (size_t)runs, sizeof ms[0], cmp);
        printf("png %s ms=%.3f min=%.3f max=%.3f runs=%d\n", names[what], ms[runs / 2], ms[0], ms[runs - 1], runs);
    }
    db_image_free(page);
    free(bytes);
    return page ? 0 : 1;
}
