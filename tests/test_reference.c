/*
** test_reference.c — checks the test reference against hand-computed cases
** and the Doxa conformance vectors (docs/testing.md, "The reference data").
**
** Usage: test_reference DATA_DIR, where DATA_DIR holds the doxa-page files.
** Exits 0 on success, 1 on a failure, 77 (skip) when DATA_DIR is missing.
** It reads the PNM files itself, so that it depends on no library code.
*/
#include "tests/reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

/* ---- a minimal P6/P4 reader ---- */

typedef struct pnm {
    int width;
    int height;
    int channels;  /* 3 for P6; 1 for P4, one byte per pixel: 1 = black */
    uint8_t *data;
} pnm;

/* Skips whitespace and '#' comments, then reads a decimal number; -1 if none. */
static long header_number(const uint8_t *buf, size_t size, size_t *pos)
{
    while (*pos < size) {
        uint8_t c = buf[*pos];
        if (c == '#') {
            while (*pos < size && buf[*pos] != '\n')
                (*pos)++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            (*pos)++;
        } else {
            break;
        }
    }
    long v = -1;
    while (*pos < size && buf[*pos] >= '0' && buf[*pos] <= '9' && v < 1000000)
        v = (v < 0 ? 0 : 10 * v) + (buf[(*pos)++] - '0');
    return v;
}

/* Reads a P6 (maxval 255) or P4 file; 0 on success, -1 with a message otherwise. */
static int read_pnm(const char *path, pnm *img)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("FAIL: cannot open %s\n", path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? 2 * cap : 1 << 20;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                abort();
            buf = nb;
        }
        size_t got = fread(buf + size, 1, cap - size, f);
        if (got == 0)
            break;
        size += got;
    }
    fclose(f);

    size_t pos = 2;
    int p6 = size > 2 && buf[0] == 'P' && buf[1] == '6';
    int p4 = size > 2 && buf[0] == 'P' && buf[1] == '4';
    long w = header_number(buf, size, &pos);
    long h = header_number(buf, size, &pos);
    long maxval = p6 ? header_number(buf, size, &pos) : 1;
    pos++;  /* the single whitespace byte before the raster */

    size_t row_bytes = p6 ? 3 * (size_t)w : ((size_t)w + 7) / 8;
    if ((!p6 && !p4) || w <= 0 || h <= 0 || maxval != (p6 ? 255 : 1) ||
        pos > size || size - pos < row_bytes * (size_t)h) {
        printf("FAIL: %s is not a P6 (maxval 255) or P4 file of the expected size\n", path);
        free(buf);
        return -1;
    }

    img->width = (int)w;
    img->height = (int)h;
    img->channels = p6 ? 3 : 1;
    img->data = malloc((size_t)w * (size_t)h * (size_t)img->channels);
    if (!img->data)
        abort();
    const uint8_t *raster = buf + pos;
    if (p6) {
        memcpy(img->data, raster, row_bytes * (size_t)h);
    } else {
        /* P4 rows are padded to whole bytes, most significant bit first. */
        for (size_t y = 0; y < (size_t)h; y++)
            for (size_t x = 0; x < (size_t)w; x++)
                img->data[y * (size_t)w + x] = (raster[y * row_bytes + x / 8] >> (7 - x % 8)) & 1;
    }
    free(buf);
    return 0;
}

/* ---- hand-computed cases ---- */

/* Compares a binarized image with the expected one, 'B' = black, 'W' = white. */
static void expect(const char *what, const uint8_t *got, const char *want)
{
    size_t n = strlen(want);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        if ((want[i] == 'B') != (got[i] == 0))
            ok = 0;
    if (!ok) {
        printf("FAIL: %s: expected %s, got ", what, want);
        for (size_t i = 0; i < n; i++)
            putchar(got[i] == 0 ? 'B' : 'W');
        putchar('\n');
        failures++;
    }
}

static void hand_checks(void)
{
    /* Gray rules on (200, 100, 50):
    ** BT.601 (59800 + 58700 + 5700 + 500) / 1000 = 124.7 -> 124,
    ** QT (2200 + 1600 + 250) / 32 = 126.56 -> 126. */
    const uint8_t rgb[3] = {200, 100, 50};
    uint8_t g;
    ref_gray(rgb, 1, 1, 3, REF_GRAY_BT601, &g);
    check(g == 124, "BT.601 gray of (200,100,50) is 124");
    ref_gray(rgb, 1, 1, 3, REF_GRAY_QT, &g);
    check(g == 126, "QT gray of (200,100,50) is 126");
    ref_gray(rgb, 1, 1, 1, REF_GRAY_QT, &g);
    check(g == 200, "one channel is copied");

    /* Otsu on {0 x3, 100 x2, 200 x4}, N = 9, total = 1000:
    ** i = 0:   q1 = 3, q2 = 6, d = 0 - 1000/6,  between = d²·18 = 500000;
    ** i = 100: q1 = 5, q2 = 4, d = 40 - 200,    between = d²·20 = 512000 > 500000.
    ** So T = 100: the zeros and the hundreds are black. */
    const uint8_t otsu_img[9] = {0, 100, 200, 200, 0, 200, 100, 200, 0};
    uint8_t out[9];
    check(ref_otsu_threshold(otsu_img, 9) == 100, "Otsu T of the 3x3 case is 100");
    ref_binarize(otsu_img, 3, 3, REF_OTSU, 0, 0.0, out);
    expect("Otsu 3x3", out, "BBWWBWBWB");

    /* A single-valued image: no split exists, T stays 0. */
    const uint8_t flat[4] = {90, 90, 90, 90};
    check(ref_otsu_threshold(flat, 4) == 0, "Otsu T of a flat image is 0");

    /* The 3x3 image
    **     70 40 10
    **     40 40 40
    **     10 40 70
    ** with window 3. The centre window is the whole image: S = 360, n = 9,
    ** mean = 40, Q = 18000, Q/n = 2000, var = 400, s = 20, all exact.
    ** Corners see 4 pixels: (0,0) {70,40,40,40} mean 47.5, var 168.75 (s 12.99);
    ** (0,2) {40,10,40,40} mean 32.5, var 168.75. Edge middles see 6 pixels with
    ** mean 40, var 300 (s 17.32). */
    const uint8_t img[9] = {70, 40, 10, 40, 40, 40, 10, 40, 70};

    /* Niblack k = 0: T = mean, so every pixel equal to its mean is black (<=):
    ** the centre and the edge middles (40 = 40), and the 10s (< 32.5); the 70s
    ** are above 47.5. */
    ref_binarize(img, 3, 3, REF_NIBLACK, 3, 0.0, out);
    expect("Niblack 3x3 w3 k0", out, "WBBBBBBBW");

    /* Niblack k = -0.2: centre T = 40 - 4 = 36, edges 40 - 3.46 = 36.54: white;
    ** 10 <= 32.5 - 2.60 stays black; 70 > 47.5 - 2.60 white. */
    ref_binarize(img, 3, 3, REF_NIBLACK, 3, -0.2, out);
    expect("Niblack 3x3 w3 k-0.2", out, "WWBWWWBWW");

    /* A window larger than the image is clipped to the whole image: every pixel
    ** has mean 40, s 20. Sauvola k = 0.5: T = 40·(1 + 0.5·(20/128 - 1)) = 23.125,
    ** so only the 10s are black. */
    ref_binarize(img, 3, 3, REF_SAUVOLA, 7, 0.5, out);
    expect("Sauvola 3x3 w7 k0.5", out, "WWBWWWBWW");

    /* NICK k = -0.2, window 7 (whole image): T = 40 - 0.2·sqrt(400 + 1600) = 31.06. */
    ref_binarize(img, 3, 3, REF_NICK, 7, -0.2, out);
    expect("NICK 3x3 w7 k-0.2", out, "WWBWWWBWW");

    /* NICK k = +0.2: T = 40 + 8.94 = 48.94: everything but the 70s is black. */
    ref_binarize(img, 3, 3, REF_NICK, 7, 0.2, out);
    expect("NICK 3x3 w7 k0.2", out, "WBBBBBBBW");

    /* Wolf k = 0.5, window 3: gmin = 10, maxS = 20 (the centre window).
    ** Centre: s/maxS = 1, T = 40 - 0 = 40, and 40 <= 40 is black.
    ** (0,0): T = 47.5 - 0.5·(1 - 12.99/20)·37.5 = 40.93, 70 white.
    ** (0,1): T = 40 - 0.5·(1 - 17.32/20)·30 = 37.99, 40 white.
    ** (0,2): T = 32.5 - 0.5·(1 - 12.99/20)·22.5 = 28.56, 10 black. */
    ref_binarize(img, 3, 3, REF_WOLF, 3, 0.5, out);
    expect("Wolf 3x3 w3 k0.5", out, "WWBWBWBWW");

    /* Window 1: each window is its own pixel, var = 0, so Niblack's T = g: all black. */
    ref_binarize(img, 3, 3, REF_NIBLACK, 1, 0.7, out);
    expect("Niblack 3x3 w1", out, "BBBBBBBBB");

    /* Uniform image: Sauvola T = 90·(1 - 0.1) = 81 (white); Wolf's s/maxS is
    ** 0/sqrt(DBL_MIN) = 0, T = mean - k·(mean - gmin) = mean (black). */
    ref_binarize(flat, 2, 2, REF_SAUVOLA, 3, 0.1, out);
    expect("Sauvola flat", out, "WWWW");
    ref_binarize(flat, 2, 2, REF_WOLF, 3, 0.2, out);
    expect("Wolf flat", out, "BBBB");
}

/* ---- the conformance vectors ---- */

typedef struct vector {
    const char *name;
    ref_method method;
    int window;
    double k;
    const char *file;
} vector;

static const vector vectors[] = {
    {"Sauvola", REF_SAUVOLA, 27, 0.10, "2JohnC1V3-Sauvola.pbm"},
    {"Niblack", REF_NIBLACK, 223, -0.61, "2JohnC1V3-Niblack.pbm"},
    {"Wolf", REF_WOLF, 21, 0.18, "2JohnC1V3-Wolf.pbm"},
    {"NICK", REF_NICK, 45, -0.10, "2JohnC1V3-NICK.pbm"},
    {"Otsu", REF_OTSU, 0, 0.0, "2JohnC1V3-Otsu.pbm"},
};

static void conformance(const char *dir)
{
    char path[4096];
    pnm page;
    snprintf(path, sizeof path, "%s/2JohnC1V3.ppm", dir);
    if (read_pnm(path, &page) != 0 || page.channels != 3) {
        failures++;
        return;
    }
    size_t n = (size_t)page.width * (size_t)page.height;
    uint8_t *gray = malloc(n);
    uint8_t *out = malloc(n);
    if (!gray || !out)
        abort();
    ref_gray(page.data, page.width, page.height, 3, REF_GRAY_QT, gray);

    int t = ref_otsu_threshold(gray, n);
    printf("Otsu T = %d\n", t);
    check(t == 158, "Otsu T on the conformance page is 158");
    int gmin = ref_gray_min(gray, n);
    printf("Wolf gmin = %d\n", gmin);
    check(gmin == 58, "Wolf gmin on the conformance page is 58");

    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
        const vector *vec = &vectors[v];
        pnm want;
        snprintf(path, sizeof path, "%s/%s", dir, vec->file);
        if (read_pnm(path, &want) != 0) {
            failures++;
            continue;
        }
        if (want.channels != 1 || want.width != page.width || want.height != page.height) {
            printf("FAIL: %s does not match the page's size\n", path);
            failures++;
            free(want.data);
            continue;
        }
        ref_binarize(gray, page.width, page.height, vec->method, vec->window, vec->k, out);
        size_t diff = 0;
        for (size_t i = 0; i < n; i++)
            if ((out[i] == 0) != (want.data[i] == 1))
                diff++;
        printf("%-8s window %3d k %5.2f: %zu differing pixels\n", vec->name, vec->window, vec->k,
               diff);
        check(diff == 0, vec->name);
        free(want.data);
    }
    free(gray);
    free(out);
    free(page.data);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DATA_DIR (the doxa-page folder)\n", argv[0]);
        return 2;
    }

    hand_checks();
    if (failures) {
        printf("%d hand-computed check(s) failed\n", failures);
        return 1;
    }
    printf("hand-computed checks: ok\n");

    struct stat st;
    if (stat(argv[1], &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("SKIP: %s not found (the conformance data lives in shared/data beside the "
               "checkout)\n",
               argv[1]);
        return 77;
    }

    conformance(argv[1]);
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all conformance vectors match\n");
    return 0;
}
