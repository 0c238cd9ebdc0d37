/*
** hbk_rules — HBK's final labelling rules side by side, for the comparison in
** docs/hbk.md and bench/results/quality.md (driven by bench/hbk_rules.py).
**
** Runs the plain-C reference of HBK (tests/reference_hbk.c) on each input,
** once with docbin's global loop (flat blocks give their pixels to paper) and
** once with the first one (every block adds both clusters), and writes each
** rule's image as DIR/LOOP-RULE/NAME.png, LOOP "flat" or "plain", RULE one of
** local, paper-block, both, separation, docbin. docbin's HBK is flat-docbin.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "runtime/docbin.h"
#include "tests/reference_hbk.h"

static const char usage_text[] = "usage: hbk_rules --block 8|16|32 --out-dir DIR INPUT...\n";

static const char *const rule_names[REF_HBK_RULES] = {
    [REF_HBK_LOCAL] = "local",
    [REF_HBK_PAPER_BLOCK] = "paper-block",
    [REF_HBK_BOTH] = "both",
    [REF_HBK_SEPARATION] = "separation",
    [REF_HBK_DOCBIN] = "docbin",
};

static const char *const loop_names[2] = {"plain", "flat"};

static int make_dir(const char *path)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "hbk_rules: cannot create %s: %s; pass a writable --out-dir\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The input's rows packed (the reference's layout). */
static uint8_t *packed_pixels(const db_image *img)
{
    size_t row = (size_t)img->width * (size_t)img->channels;
    uint8_t *p = malloc(row * (size_t)img->height);
    if (p)
        for (int y = 0; y < img->height; y++)
            memcpy(p + row * (size_t)y, img->data + img->stride * (size_t)y, row);
    return p;
}

/* Runs both loops on one input and writes every rule's image. */
static int run_one(const char *path, int block, const char *dir)
{
    db_image *img = db_image_read(path);
    if (!img) {
        fprintf(stderr, "hbk_rules: %s\n", db_error_message());
        return 1;
    }
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    int stem = dot ? (int)(dot - base) : (int)strlen(base);
    size_t n = (size_t)img->width * (size_t)img->height;
    uint8_t *pixels = packed_pixels(img);
    db_image *out = db_image_new(img->width, img->height, 1);
    uint8_t *labels[REF_HBK_RULES] = {0};
    int ok = pixels && out;
    for (int r = 0; r < REF_HBK_RULES; r++)
        ok = ok && (labels[r] = malloc(n)) != NULL;
    if (!ok)
        fprintf(stderr, "hbk_rules: %s: out of memory for a %dx%d page\n", path, img->width, img->height);
    for (int loop = 0; ok && loop < 2; loop++) {
        int converged = 0;
        int outer = ref_hbk_rules(pixels, img->width, img->height, img->channels, block, REF_HBK_LOCAL_MAX,
                                  REF_HBK_GLOBAL_MAX, loop, labels, &converged, NULL);
        if (outer < 0) {
            fprintf(stderr, "hbk_rules: %s: the reference refused the page or ran out of memory\n", path);
            ok = 0;
            break;
        }
        printf("%s %s block %d: %d outer iterations%s\n", base, loop_names[loop], block, outer,
               converged ? "" : ", not converged");
        for (int r = 0; ok && r < REF_HBK_RULES; r++) {
            char sub[4096], file[8192];
            int len = snprintf(sub, sizeof sub, "%s/%s-%s", dir, loop_names[loop], rule_names[r]);
            if (len < 0 || (size_t)len >= sizeof sub ||
                (len = snprintf(file, sizeof file, "%s/%.*s.png", sub, stem, base)) < 0 ||
                (size_t)len >= sizeof file) {
                fprintf(stderr, "hbk_rules: %s: the output path is too long; use a shorter --out-dir\n", path);
                ok = 0;
                break;
            }
            for (int y = 0; y < img->height; y++)
                memcpy(out->data + out->stride * (size_t)y, labels[r] + (size_t)img->width * (size_t)y,
                       (size_t)img->width);
            if (make_dir(sub) != 0) {
                ok = 0;
            } else if (db_image_write(out, file, DB_FILE_PNG, 1) != DB_OK) {
                fprintf(stderr, "hbk_rules: %s\n", db_error_message());
                ok = 0;
            }
        }
    }
    for (int r = 0; r < REF_HBK_RULES; r++)
        free(labels[r]);
    free(pixels);
    db_image_free(out);
    db_image_free(img);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int block = 0, first = 0;
    const char *dir = NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--block") == 0 && a + 1 < argc)
            block = atoi(argv[++a]);
        else if (strcmp(argv[a], "--out-dir") == 0 && a + 1 < argc)
            dir = argv[++a];
        else if (argv[a][0] == '-') {
            fprintf(stderr, "hbk_rules: unknown option %s\n%s", argv[a], usage_text);
            return 2;
        } else {
            first = a;
            break;
        }
    }
    if ((block != 8 && block != 16 && block != 32) || !dir || !first) {
        fprintf(stderr, "hbk_rules: give --block 8, 16 or 32, --out-dir and at least one input\n%s", usage_text);
        return 2;
    }
    if (make_dir(dir) != 0)
        return 1;
    for (int a = first; a < argc; a++)
        if (run_one(argv[a], block, dir) != 0)
            return 1;
    return 0;
}
