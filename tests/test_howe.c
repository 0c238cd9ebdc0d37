/*
** test_howe.c — Howe's binarization on every map gives exactly the image of the
** plain-C reference (tests/reference_howe.c), on document-like, noisy and
** degenerate pages, gray and RGB, for several c and Canny settings; the flow
** value is the same on every map; images under 3x3 are refused.
** Maps whose graphcut runs on the gpu role need its push-relabel cut: until it
** exists they must be refused with a message naming the stage. Those maps
** alternate between the two push-relabel kernel choices (DOCBIN_PUSHRELABEL:
** PoCL would get `global` only), so each image is cut by both.
*/
#define _GNU_SOURCE /* setenv */
#include <string.h>
#include "algorithms/pushrelabel.h"
#include "tests/reference_howe.h"
#include "tests/testutil.h"

static uint32_t rng = 4242;

typedef enum pattern { DOCUMENT, NOISE, FLAT, STRIPES, N_PATTERNS } pattern;
static const char *const names[N_PATTERNS] = {"document", "noise", "flat", "stripes"};

static db_image *make_image(int w, int h, int channels, pattern p)
{
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int ink = (x / 2 + y / 3) % 7 == 0 || (x * 3 + y * 5) % 31 < 2;
            for (int c = 0; c < channels; c++) {
                int v;
                switch (p) {
                case DOCUMENT:
                    v = ink ? 40 + (int)(test_random(&rng) % 40)
                            : 200 - (x + y) * 60 / (w + h) + (int)(test_random(&rng) % 15) - c * 5;
                    break;
                case NOISE: v = (int)(test_random(&rng) % 256); break;
                case FLAT: v = 180; break;
                default: v = x % 4 < 2 ? 60 : 210; break;
                }
                img->data[(size_t)y * img->stride + (size_t)x * channels + c] = (uint8_t)v;
            }
        }
    return img;
}

static void check(db_context *ctx, const db_algo *algo, const db_image *img, double c, double thi, double tlo,
                  double sigma, const char *what)
{
    size_t n = (size_t)img->width * img->height;
    uint8_t *expect = malloc(n);
    int ref = ref_howe(img->data, img->width, img->height, img->channels, c, sigma, tlo, thi, expect);
    CHECK(ref == 0, "%s: the reference failed", what);
    int64_t flow = -1;
    int gpu_cuts = 0;
    for (int i = 0; ref == 0 && i < db_map_count(algo); i++) {
        db_job job;
        db_job_defaults(algo, &job);
        job.params[DB_HOWE_C] = c;
        job.params[DB_HOWE_THI] = thi;
        job.params[DB_HOWE_TLO] = tlo;
        job.params[DB_HOWE_SIGMA] = sigma;
        db_map map;
        db_map_nth(algo, i, &map);
        char m[48];
        db_map_format(&map, m, sizeof m);
        if (map.role[2] == DB_ROLE_GPU) {
            const char *kernels = db_pr_kernels_names[gpu_cuts++ % DB_PR_KERNELS_COUNT];
            setenv("DOCBIN_PUSHRELABEL", kernels, 1);
            snprintf(m + strlen(m), sizeof m - strlen(m), " (%s)", kernels);
        }
        db_image *out = NULL;
        db_report report = {0};
        db_status st = db_run(ctx, algo, &map, &job, img, &out, &report, NULL);
        if (map.role[2] == DB_ROLE_GPU && !algo->stages[2].impl[DB_ROLE_GPU]) {
            CHECK(st == DB_ERR_USAGE && strstr(db_error_message(), "graphcut"), "%s map %s: %s", what, m,
                  db_error_message());
            continue;
        }
        CHECK(st == DB_OK, "%s map %s: %s", what, m, db_error_message());
        if (st != DB_OK)
            continue;
        size_t d = test_diff(out->data, expect, n);
        CHECK(d == 0, "%s (%dx%d, c %g, thi %g, sigma %g) map %s: %zu pixels differ from the reference", what,
              img->width, img->height, c, thi, sigma, m, d);
        if (flow < 0)
            flow = report.values[1];
        CHECK(report.values[1] == flow, "%s map %s: flow %lld, another map %lld", what, m,
              (long long)report.values[1], (long long)flow);
        db_image_free(out);
    }
    unsetenv("DOCBIN_PUSHRELABEL");
    free(expect);
}

int main(void)
{
    db_context *ctx = test_open_context();
    const db_algo *algo = db_algo_find("howe");
    static const struct { int w, h; } sizes[] = {{3, 3}, {3, 17}, {23, 3}, {40, 30}, {77, 53}, {130, 61}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int p = 0; p < N_PATTERNS; p++) {
            int channels = (s + p) % 2 ? 3 : 1;
            db_image *img = make_image(sizes[s].w, sizes[s].h, channels, (pattern)p);
            char what[64];
            snprintf(what, sizeof what, "%s/%dch", names[p], channels);
            check(ctx, algo, img, 160, 0.4, 0.1, 0.6, what);
            if (s == 4) {
                check(ctx, algo, img, 20, 0.25, 0.1, 0.6, what);
                check(ctx, algo, img, 5120, 0.5, 0.1, 0.4, what);
            }
            db_image_free(img);
        }
    /* Smaller than 3x3: a clear error, no image. */
    db_image *tiny = make_image(2, 5, 1, DOCUMENT), *out = NULL;
    db_job job;
    db_job_defaults(algo, &job);
    db_map map;
    db_map_parse(algo, "cpu", &map);
    db_status st = db_run(ctx, algo, &map, &job, tiny, &out, NULL, NULL);
    CHECK(st == DB_ERR_FORMAT && out == NULL && strstr(db_error_message(), "3x3"), "2x5 image: %s",
          db_error_message());
    db_image_free(tiny);
    db_context_close(ctx);
    return test_result("howe");
}
