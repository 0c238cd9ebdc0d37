/*
** test_canny.c — the `canny` stage of Howe's binarization on the cpu and gpu
** roles gives exactly the edges of the plain-C reference (tests/reference_howe.c)
** on steps, lines, noise, text-like strokes and flat pages, gray and RGB, from
** 3x3 up to 200x150, for several sigma and thresholds; on a long winding line
** whose hysteresis crosses many tiles and bands; and when no pixel is strong
** (the result is then the weak map, neither joined nor thinned).
** The stage runs alone in a one-stage test algorithm: image → edges.
*/
#include <string.h>
#include "tests/reference_howe.h"
#include "tests/testutil.h"

static uint32_t rng = 2011;

enum { IMAGE, EDGES, N_ITEMS };

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "gray or RGB input", NULL},
    [EDGES] = {"edges", DB_ITEM_PIXELS, 1, "1 = edge", NULL},
};

static const db_stage stages[] = {
    {.name = "canny", .doc = "canny_old", .in = DB_PORTS(IMAGE), .out = DB_PORTS(EDGES),
     .impl = {db_canny_cpu, db_canny_gpu}, .sources = {"canny.cl"}},
};

static const db_param params[DB_HOWE_N_PARAMS] = {
    [DB_HOWE_C] = {.name = "c", .kind = DB_PARAM_REAL, .def = 160, .min = 0, .max = 1e6, .doc = "unused"},
    [DB_HOWE_THI] = {.name = "thi", .kind = DB_PARAM_REAL, .def = 0.4, .min = 0, .max = 1, .doc = "high"},
    [DB_HOWE_TLO] = {.name = "tlo", .kind = DB_PARAM_REAL, .def = 0.1, .min = 0, .max = 1, .doc = "low"},
    [DB_HOWE_SIGMA] = {.name = "sigma", .kind = DB_PARAM_REAL, .def = 0.6, .min = 0.01, .max = 100, .doc = "sigma"},
};

static const db_algo canny_algo = {
    .name = "canny-test", .doc = "the canny stage alone", .items = items, .n_items = DB_LEN(items), .input = IMAGE,
    .output = EDGES, .stages = stages, .n_stages = DB_LEN(stages), .params = params, .n_params = DB_HOWE_N_PARAMS,
};

typedef struct settings {
    double sigma, tlo, thi;
} settings;

/* Runs the stage on both roles and compares each result with the reference;
** `expect` receives the reference edges when not NULL. */
static void check(db_context *ctx, const db_image *img, settings s, const char *what, uint8_t *expect_out)
{
    size_t n = (size_t)img->width * img->height;
    uint8_t *gray = malloc(n), *expect = malloc(n);
    size_t row = (size_t)img->width * img->channels;
    uint8_t *packed = malloc(row * img->height);
    for (int y = 0; y < img->height; y++)
        memcpy(packed + row * y, img->data + (size_t)y * img->stride, row);
    CHECK(ref_howe_gray(packed, img->width, img->height, img->channels, gray) == 0, "%s: reference gray", what);
    ref_howe_canny(gray, img->width, img->height, s.sigma, s.tlo, s.thi, expect);
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        db_job job;
        db_job_defaults(&canny_algo, &job);
        job.params[DB_HOWE_SIGMA] = s.sigma;
        job.params[DB_HOWE_TLO] = s.tlo;
        job.params[DB_HOWE_THI] = s.thi;
        db_map map = {1, {(db_role)r}};
        db_image *out = NULL;
        db_status st = db_run(ctx, &canny_algo, &map, &job, img, &out, NULL, NULL);
        CHECK(st == DB_OK, "%s map %s: %s", what, db_role_name((db_role)r), db_error_message());
        if (st != DB_OK)
            continue;
        size_t d = test_diff(out->data, expect, n);
        CHECK(d == 0, "%s (%dx%d, %d ch, sigma %g, tlo %g, thi %g) map %s: %zu pixels differ from the reference",
              what, img->width, img->height, img->channels, s.sigma, s.tlo, s.thi, db_role_name((db_role)r), d);
        db_image_free(out);
    }
    if (expect_out)
        memcpy(expect_out, expect, n);
    free(packed);
    free(expect);
    free(gray);
}

typedef enum pattern { STEPS, LINES, NOISE, STROKES, FLAT, N_PATTERNS } pattern;
static const char *const names[N_PATTERNS] = {"steps", "lines", "noise", "strokes", "flat"};

static int pattern_value(pattern p, int w, int h, int x, int y, int c)
{
    switch (p) {
    case STEPS:
        return (x < w / 3 ? 40 : y < h / 2 ? 200 : 120) + (x + 2 * y > w ? 30 : 0) - 10 * c;
    case LINES:
        if (y == h / 3 || x / 2 == w / 4 || x == y || 2 * x + y == w)
            return 30 + 15 * c;
        return y == 2 * h / 3 ? 180 : 220 - 5 * c;
    case NOISE:
        return (int)(test_random(&rng) % 256);
    case STROKES: {
        int ink = (x / 2 + y / 3) % 7 == 0 || (x * 3 + y * 5) % 31 < 2;
        return ink ? 40 + (int)(test_random(&rng) % 40)
                   : 200 - (x + y) * 60 / (w + h) + (int)(test_random(&rng) % 15) - c * 5;
    }
    default:
        return 180;
    }
}

static db_image *make_image(int w, int h, int channels, pattern p)
{
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < channels; c++)
                img->data[(size_t)y * img->stride + (size_t)x * channels + c] = (uint8_t)pattern_value(p, w, h, x, y, c);
    return img;
}

/* A 3-pixel line of low contrast winding down a 200x150 page in lanes 10 rows
** apart, with a short dark start: its edges are weak but joined to the strong
** start, so hysteresis has to follow the line across many tiles and bands. */
static db_image *make_winding(int channels)
{
    int w = 200, h = 150, lanes = (h - 6) / 10;
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int yy = y - 4, lane = yy / 10;
            int in_lane = yy >= 0 && yy % 10 < 3 && lane < lanes && x >= 5 && x < w - 5;
            int turn = yy >= 0 && yy % 10 >= 3 && lane < lanes - 1 &&
                       (lane % 2 ? x >= 5 && x < 8 : x >= w - 8 && x < w - 5);
            int v = in_lane || turn ? (lane == 0 && x < 20 ? 0 : 140) : 210;
            for (int c = 0; c < channels; c++)
                img->data[(size_t)y * img->stride + (size_t)x * channels + c] = (uint8_t)v;
        }
    return img;
}

/* A dark top-left corner pixel, whose gradient (on the border, never an edge)
** is the maximum, and a faint rectangle: with t_hi above the rectangle's
** magnitude nothing is strong. */
static db_image *make_no_strong(int channels)
{
    int w = 40, h = 30;
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int v = x == 0 && y == 0 ? 0 : x >= 12 && x < 30 && y >= 8 && y < 22 ? 235 : 255;
            for (int c = 0; c < channels; c++)
                img->data[(size_t)y * img->stride + (size_t)x * channels + c] = (uint8_t)v;
        }
    return img;
}

static void check_no_strong(db_context *ctx)
{
    for (int channels = 1; channels <= 3; channels += 2) {
        db_image *img = make_no_strong(channels);
        size_t n = (size_t)img->width * img->height;
        uint8_t *a = malloc(n), *b = malloc(n), *thinned = malloc(n);
        check(ctx, img, (settings){0.6, 0.01, 0.6}, "no strong pixel, thi 0.6", a);
        check(ctx, img, (settings){0.6, 0.01, 0.9}, "no strong pixel, thi 0.9", b);
        check(ctx, img, (settings){0.6, 0.01, 0.05}, "the rectangle strong", NULL);
        /* The weak map: it does not depend on t_hi, and its rectangle keeps the
        ** corners that a thinning iteration would remove. */
        memcpy(thinned, a, n);
        ref_howe_thin_once(thinned, img->width, img->height);
        size_t count = 0;
        for (size_t i = 0; i < n; i++)
            count += a[i];
        CHECK(count > 0 && test_diff(a, b, n) == 0 && test_diff(a, thinned, n) > 0,
              "the no-strong case is not one: %zu edge pixels, %zu differ between thresholds, %zu from thinning",
              count, test_diff(a, b, n), test_diff(a, thinned, n));
        free(a);
        free(b);
        free(thinned);
        db_image_free(img);
    }
}

int main(void)
{
    db_context *ctx = test_open_context();
    static const struct { int w, h; } sizes[] = {{3, 3}, {4, 3}, {3, 5}, {7, 6}, {16, 9}, {33, 17},
                                                 {64, 64}, {97, 61}, {200, 150}};
    static const settings sets[] = {{0.6, 0.1, 0.4}, {0.4, 0.1, 0.3}, {1.0, 0.1, 0.25}, {2.0, 0.05, 0.5}};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int p = 0; p < N_PATTERNS; p++)
            for (int channels = 1; channels <= 3; channels += 2) {
                db_image *img = make_image(sizes[z].w, sizes[z].h, channels, (pattern)p);
                for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
                    check(ctx, img, sets[s], names[p], NULL);
                db_image_free(img);
            }
    for (int channels = 1; channels <= 3; channels += 2) {
        db_image *img = make_winding(channels);
        uint8_t *edges = malloc((size_t)200 * 150);
        check(ctx, img, (settings){0.6, 0.1, 0.4}, "winding line", edges);
        size_t count = 0;
        for (int i = 0; i < 200 * 150; i++)
            count += edges[i];
        CHECK(count > 2000, "the winding line kept only %zu edge pixels: it does not test long hysteresis", count);
        free(edges);
        db_image_free(img);
    }
    check_no_strong(ctx);
    db_context_close(ctx);
    return test_result("canny");
}
