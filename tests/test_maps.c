/*
** test_maps.c — every map of every algorithm, and every stats variant, gives
** exactly the image of the plain-C reference (tests/reference.c), on random
** and document-like images of awkward sizes, with windows smaller and larger
** than the image (and than a CPU device's band kernel takes), for both gray
** rules. With DOCBIN_GPU_DEVICE=portable both roles run on PoCL, each in its own
** context, so every kernel of both roles and every cross-context transfer path
** is exercised.
*/
#include <string.h>
#include "runtime/codec.h"
#include "tests/reference.h"
#include "tests/testutil.h"

static uint32_t rng = 12345;

static uint32_t next_random(void)
{
    return test_random(&rng);
}

typedef enum pattern { NOISE, DOCUMENT, FLAT, TWO_LEVEL, BRIGHT } pattern;

/* A test image: noise, a document-like page (dark strokes on a lit gradient),
** a constant image, two levels (many pixels exactly at window means), or white
** with a few black dots (window sums of squares near their largest). */
static db_image *make_image(int w, int h, int channels, pattern p)
{
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < channels; c++) {
                int v;
                switch (p) {
                case NOISE: v = (int)(next_random() % 256); break;
                case DOCUMENT:
                    v = 200 - (x + y) * 40 / (w + h) + (int)(next_random() % 17) - 8;
                    if ((x / 3 + y / 5) % 7 == 0 || (x * 7 + y * 3) % 23 < 3)
                        v = 40 + (int)(next_random() % 40);
                    break;
                case FLAT: v = 131; break;
                case BRIGHT: v = x % 61 == 7 && y % 53 == 5 ? 0 : 255; break;
                default: v = (x + y) % 2 ? 90 : 170; break;
                }
                img->data[(size_t)y * img->stride + (size_t)x * channels + c] = (uint8_t)v;
            }
    return img;
}

static ref_method ref_of(const char *name)
{
    if (!strcmp(name, "otsu")) return REF_OTSU;
    if (!strcmp(name, "niblack")) return REF_NIBLACK;
    if (!strcmp(name, "sauvola")) return REF_SAUVOLA;
    if (!strcmp(name, "nick")) return REF_NICK;
    return REF_WOLF;
}

static int runs, g4_runs;

static int algo_index(const db_algo *algo)
{
    for (int a = 0; a < db_algo_count(); a++)
        if (db_algo_at(a) == algo)
            return a;
    return 0;
}

/* Failures per (algorithm, variant, map), summarised at the end so that a
** device-specific bug shows its pattern at a glance. */
enum { MAX_ALGOS = 16 };
static int failed[MAX_ALGOS][4][1 << DB_MAX_STAGES];

static void check_all_maps(db_context *ctx, const db_algo *algo, const db_image *img, int window, double k,
                           db_gray_rule rule, const char *what, int n_variants)
{
    size_t n = (size_t)img->width * img->height;
    uint8_t *gray = malloc(n), *expect = malloc(n);
    ref_gray(img->data, img->width, img->height, img->channels, (int)rule, gray);
    ref_binarize(gray, img->width, img->height, ref_of(algo->name), window, k, expect);
    if (n_variants < 1)
        n_variants = algo->n_variants ? algo->n_variants : 1;
    for (int v = 0; v < n_variants; v++)
        for (int i = 0; i < db_map_count(algo); i++) {
            db_job job;
            db_job_defaults(algo, &job);
            job.gray = rule;
            job.variant = v;
            if (algo->n_params) {
                job.params[0] = window;
                job.params[1] = k;
            }
            db_map map;
            db_map_nth(algo, i, &map);
            char m[64];
            db_map_format(&map, m, sizeof m);
            db_image *out = NULL;
            db_status st = db_run(ctx, algo, &map, &job, img, &out, NULL, NULL);
            runs++;
            CHECK(st == DB_OK, "%s %s map %s variant %d: %s", algo->name, what, m, v, db_error_message());
            if (st != DB_OK)
                continue;
            size_t d = test_diff(out->data, expect, n);
            if (d)
                failed[algo_index(algo)][v][i]++;
            CHECK(d == 0, "%s %s (%dx%d, window %d, k %g) map %s variant %s: %zu pixels differ from the reference",
                  algo->name, what, img->width, img->height, window, k, m,
                  algo->n_variants ? algo->variants[v] : "-", d);
            db_image_free(out);
            /* The same run as a bitmap (packed where the result is, a GPU's
            ** kernel or the host) against the reference packed here; where a
            ** GPU packed it, its Group 4 stream against the host encoder's. */
            db_bitmap *bm = NULL;
            st = db_run_bitmap(ctx, algo, &map, &job, img, true, &bm, NULL, NULL);
            CHECK(st == DB_OK, "%s %s map %s variant %d as a bitmap: %s", algo->name, what, m, v, db_error_message());
            size_t row_bytes = ((size_t)img->width + 7) / 8, bad = 0;
            for (int y = 0; st == DB_OK && y < img->height; y++)
                for (size_t b = 0; b < row_bytes; b++) {
                    unsigned want = 0;
                    for (size_t x = 8 * b; x < 8 * b + 8; x++)
                        want = want << 1 | (x < (size_t)img->width && expect[(size_t)y * img->width + x] >= 128);
                    bad += bm->data[(size_t)y * bm->stride + b] != want;
                }
            CHECK(bad == 0, "%s %s map %s variant %d: %zu bytes of the bitmap differ from the reference packed",
                  algo->name, what, m, v, bad);
            if (st == DB_OK && bm->g4) {
                size_t n = 0;
                uint8_t *host = db_g4_encode(bm->data, bm->stride, bm->width, bm->height, &n);
                CHECK(host && n == bm->g4_size && !memcmp(host, bm->g4, n), "%s %s map %s variant %d: the GPU's "
                      "Group 4 stream (%zu bytes) is not the host's (%zu)", algo->name, what, m, v, bm->g4_size, n);
                free(host);
                g4_runs++;
            }
            db_bitmap_free(bm);
        }
    free(gray);
    free(expect);
}

int main(void)
{
    db_context *ctx = test_open_context();
    /* The gpu role as a discrete GPU has it, sharing no memory with the host,
    ** so that its copies, and its results packed on the device, take the paths
    ** they take on a GPU (PoCL would share its memory and skip them). */
    db_device *gpu = db_context_device(ctx, DB_ROLE_GPU);
    if (gpu)
        gpu->info.host_unified = false;
    if (db_algo_count() > MAX_ALGOS) {
        fprintf(stderr, "FAIL: %d algorithms, more than this test's table holds (%d)\n", db_algo_count(), MAX_ALGOS);
        return 1;
    }
    static const struct { int w, h; } sizes[] = {{1, 1}, {1, 9}, {13, 1}, {7, 5}, {37, 23}, {70, 41}, {300, 3}};
    static const struct { pattern p; const char *name; } patterns[] = {
        {NOISE, "noise"}, {DOCUMENT, "document"}, {FLAT, "flat"}, {TWO_LEVEL, "two-level"}};
    for (int a = 0; a < db_algo_count(); a++) {
        const db_algo *algo = db_algo_at(a);
        /* The algorithms tests/reference.c implements; the others have tests of their own. */
        static const char *const known[] = {"otsu", "niblack", "sauvola", "nick", "wolf"};
        int covered = 0;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            covered |= !strcmp(algo->name, known[k]);
        if (!covered)
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
                /* Tiny or degenerate images are cheap: run them for every pattern;
                ** keep the bigger ones to the two informative patterns. */
                if (sizes[s].w * sizes[s].h > 100 && patterns[p].p != NOISE && patterns[p].p != DOCUMENT)
                    continue;
                int channels = (s + p) % 2 ? 3 : 1;
                db_image *img = make_image(sizes[s].w, sizes[s].h, channels, patterns[p].p);
                db_gray_rule rule = (s % 2) ? DB_GRAY_QT : DB_GRAY_BT601;
                char what[64];
                snprintf(what, sizeof what, "%s/%s/%dch", patterns[p].name, rule ? "qt" : "bt601", channels);
                if (algo->n_params) {
                    check_all_maps(ctx, algo, img, 3, algo->params[1].def, rule, what, 0);
                    check_all_maps(ctx, algo, img, 15, -0.3, rule, what, 0);
                    if (s == 4 || s == 6) {
                        check_all_maps(ctx, algo, img, 75, 0.5, rule, what, 0); /* window > image */
                        /* taller than a CPU device's band kernel takes (algorithms/local.c) */
                        check_all_maps(ctx, algo, img, 257, 0.5, rule, what, 0);
                    }
                } else {
                    check_all_maps(ctx, algo, img, 0, 0, rule, what, 0);
                }
                db_image_free(img);
            }
        /* The largest window a fused stage takes (algorithms/local.c), on a bright
        ** page: its sums of squares reach 98% of 2^32 (255^4 at most). The sliding variant
        ** alone: the others, and the reference, visit every pixel of every window. */
        if (algo->n_params) {
            db_image *img = make_image(256, 256, 1, BRIGHT);
            check_all_maps(ctx, algo, img, 255, 0.2, DB_GRAY_BT601, "bright/window 255", 1);
            db_image_free(img);
        }
    }
    printf("%d runs (%d results coded as Group 4 on the gpu role)\n", runs, g4_runs);
    CHECK(g4_runs > 0, "no run coded its result as Group 4 on the gpu role");
    for (int a = 0; a < db_algo_count(); a++)
        for (int v = 0; v < 4; v++)
            for (int i = 0; i < db_map_count(db_algo_at(a)); i++)
                if (failed[a][v][i]) {
                    db_map map;
                    char m[64];
                    db_map_nth(db_algo_at(a), i, &map);
                    db_map_format(&map, m, sizeof m);
                    printf("failures: %-8s variant %d map %-12s %d image(s)\n", db_algo_at(a)->name, v, m,
                           failed[a][v][i]);
                }
    db_context_close(ctx);
    return test_result("maps");
}
