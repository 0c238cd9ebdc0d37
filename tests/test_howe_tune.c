/*
** test_howe_tune.c — howe-auto, Howe's parameter tuning, against the plain-C
** reference of tests/reference_howe_tune.c, which tunes with cold cuts of
** tests/reference_howe.c at every thi and c:
**  - the rules (Alg1, Alg2, Alg3, the best F-measure) on hand-made and random
**    difference curves, ties included;
**  - warm chains: every cut of every chain, on the cpu role (Boykov-Kolmogorov)
**    and the gpu role (push-relabel, both kernel choices), gives exactly the
**    labels of the cold cut at that c;
**  - every one of the 64 maps gives the reference's image, thi and c (Alg3),
**    on synthetic pages; Alg1 alone and Alg2 on a few maps; the grid search;
**  - DIBCO pages (when the data is there): crops on maps that put each stage
**    on each role, and a whole page on the maps whose chains run on the cpu
**    role, whose image is also howe's at the chosen thi and c.
*/
#define _GNU_SOURCE /* setenv */
#include <math.h>
#include <string.h>
#include "algorithms/howe_tune.h"
#include "algorithms/pushrelabel.h"
#include "tests/reference_howe.h"
#include "tests/reference_howe_tune.h"
#include "tests/testutil.h"

static uint32_t rng = 90210;
static const char *data_dir;

/* Kept-link capacities round(32 c) for Howe's 33 values of c, as published. */
static const int32_t table[33] = {640,   761,   905,   1076,  1280,  1522,  1810,  2153,   2560,   3044,  3620,
                                  4305,  5120,  6089,  7241,  8611,  10240, 12177, 14482,  17222,  20480, 24355,
                                  28963, 34443, 40960, 48710, 57926, 68886, 81920, 97420, 115852, 137772, 163840};

static void test_table(void)
{
    for (int i = 0; i < 33; i++) {
        CHECK(db_howe_link(i) == table[i], "link %d: %d, published %d", i, db_howe_link(i), table[i]);
        CHECK(fabs(db_howe_c(i) - ref_tune_c(i)) < 1e-9 * ref_tune_c(i), "c_%d: %.17g, reference %.17g", i,
              db_howe_c(i), ref_tune_c(i));
    }
}

/* ---- the rules ---- */

static void check_alg1(const int64_t *diff, int64_t pixels, const char *what)
{
    int got = db_howe_alg1(diff, pixels), want = ref_tune_alg1(diff, pixels);
    CHECK(got == want, "alg1 %s: %d, reference %d", what, got, want);
}

static void check_alg2(const int64_t *diff, int64_t pixels, const char *what)
{
    int got = db_howe_alg2(diff, pixels), want = ref_tune_alg2(diff, pixels);
    CHECK(got == want, "alg2 %s: %d, reference %d", what, got, want);
}

static void test_rules(void)
{
    int64_t d[32] = {0}, e[10] = {0};
    /* Nothing changes: every triple scores 0, the first (i 1, j 3, k 2) wins. */
    check_alg1(d, 1000, "flat zero");
    CHECK(db_howe_alg1(d, 1000) == 1, "alg1 flat zero: %d, the first maximiser k = 2 is index 1", db_howe_alg1(d, 1000));
    /* A constant curve: smoothing bends it only at the ends. */
    for (int i = 0; i < 32; i++)
        d[i] = 50;
    check_alg1(d, 1000, "constant");
    /* A single dip, two equal dips (a tie between mirror triples), a step, a spike. */
    for (int i = 0; i < 32; i++)
        d[i] = i == 12 ? 0 : 100;
    check_alg1(d, 10000, "one dip");
    for (int i = 0; i < 32; i++)
        d[i] = i == 8 || i == 23 ? 0 : 100;
    check_alg1(d, 10000, "two dips");
    for (int i = 0; i < 32; i++)
        d[i] = i < 16 ? 400 : 10;
    check_alg1(d, 10000, "step");
    for (int i = 0; i < 32; i++)
        d[i] = i == 5 ? 5000 : 0;
    check_alg1(d, 10000, "spike");
    /* Howe-like: many changes at small c, a valley, changes again at large c. */
    for (int i = 0; i < 32; i++)
        d[i] = (int64_t)(3000 * exp(-i / 3.0) + 40 * (i > 20 ? i - 20 : 0) + 7);
    check_alg1(d, 1000000, "howe-like");
    for (int t = 0; t < 400; t++) {
        for (int i = 0; i < 32; i++)
            d[i] = test_random(&rng) % (t % 3 ? 50 : 5000);
        check_alg1(d, 100000, "random");
    }
    /* Alg2: the first minimum; a flat curve's ends are lower (zero padding). */
    check_alg2(e, 1000, "flat zero");
    CHECK(db_howe_alg2(e, 1000) == 0, "alg2 flat zero: %d, the first minimum is index 0", db_howe_alg2(e, 1000));
    for (int j = 0; j < 10; j++)
        e[j] = 300;
    check_alg2(e, 1000, "constant");
    for (int j = 0; j < 10; j++)
        e[j] = j == 2 || j == 7 ? 10 : 300;
    check_alg2(e, 1000, "two valleys");
    for (int t = 0; t < 400; t++) {
        for (int j = 0; j < 10; j++)
            e[j] = test_random(&rng) % 200;
        check_alg2(e, 5000, "random");
    }
    /* Alg3: the low chain only when it differs strictly less; a tie takes the high one. */
    static const int64_t pairs[][2] = {{3, 5}, {5, 3}, {4, 4}, {0, 0}, {0, 1}};
    for (int p = 0; p < DB_LEN(pairs); p++)
        CHECK(db_howe_alg3(pairs[p][0], pairs[p][1]) == ref_tune_alg3(pairs[p][0], pairs[p][1]),
              "alg3 %lld %lld", (long long)pairs[p][0], (long long)pairs[p][1]);
    CHECK(db_howe_alg3(4, 4) == 2, "alg3: a tie takes the high threshold");
    /* Best F: the first of equal scores. */
    int64_t hits[4] = {10, 20, 20, 5}, inks[4] = {30, 40, 40, 5};
    CHECK(db_howe_best_f(hits, inks, 40, 4) == 1, "best F: %d, the first of two equal is 1",
          db_howe_best_f(hits, inks, 40, 4));
}

/* ---- pages ---- */

static db_image *document(int w, int h, int channels)
{
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int ink = (x / 3 + y / 4) % 9 == 0 || (x * 5 + y * 3) % 37 < 3 || (x - w / 2) * (x - w / 2) + (y - h / 3) * (y - h / 3) < 20;
            for (int c = 0; c < channels; c++) {
                int v = ink ? 50 + (int)(test_random(&rng) % 60)
                            : 190 - (x + 2 * y) * 50 / (w + 2 * h) + (int)(test_random(&rng) % 25) - c * 7;
                if (test_random(&rng) % 97 == 0)
                    v = 255; /* bright specks for the background bias */
                img->data[(size_t)y * img->stride + (size_t)x * channels + c] = (uint8_t)v;
            }
        }
    return img;
}

static uint8_t *packed(const db_image *img)
{
    size_t row = (size_t)img->width * img->channels;
    uint8_t *p = malloc(row * img->height);
    for (int y = 0; y < img->height; y++)
        memcpy(p + y * row, img->data + y * img->stride, row);
    return p;
}

/* The reference images of every (thi, c) of a search. */
typedef struct reference {
    int n_thi;
    const double *thi;
    uint8_t *images;
} reference;

static int make_reference(const db_image *img, const double *thi, int n_thi, double sigma, reference *ref)
{
    size_t n = (size_t)img->width * img->height;
    uint8_t *pixels = packed(img);
    ref->n_thi = n_thi;
    ref->thi = thi;
    ref->images = malloc((size_t)n_thi * REF_TUNE_CS * n);
    int st = ref_tune_images(pixels, img->width, img->height, img->channels, thi, n_thi, sigma, 0.1, ref->images);
    free(pixels);
    return st;
}

static const char *set_kernels(const db_map *map, int run)
{
    int gpu_chain = 0;
    for (int s = 2; s <= 4; s++)
        gpu_chain |= map->role[s] == DB_ROLE_GPU;
    if (!gpu_chain)
        return "";
    const char *k = db_pr_kernels_names[run % DB_PR_KERNELS_COUNT];
    setenv("DOCBIN_PUSHRELABEL", k, 1);
    return k;
}

/* One run of howe-auto under `map` against the reference's choice. */
static void check_run(db_context *ctx, const db_image *img, const db_map *map, db_job *job, const reference *ref,
                      int search, const char *what, int run)
{
    const db_algo *algo = db_algo_find("howe-auto");
    size_t n = (size_t)img->width * img->height;
    int thi_index, c_index;
    ref_tune_search(ref->images, img->width, img->height, ref->n_thi, search, NULL, &thi_index, &c_index);
    const uint8_t *want = ref->images + ((size_t)thi_index * REF_TUNE_CS + (size_t)c_index) * n;
    char m[96];
    db_map_format(map, m, sizeof m);
    const char *kernels = set_kernels(map, run);
    db_image *out = NULL;
    db_report report = {0};
    db_status st = db_run(ctx, algo, map, job, img, &out, &report, NULL);
    unsetenv("DOCBIN_PUSHRELABEL");
    CHECK(st == DB_OK, "%s map %s: %s", what, m, db_error_message());
    if (st != DB_OK)
        return;
    size_t d = test_diff(out->data, want, n);
    CHECK(d == 0, "%s map %s %s: %zu pixels differ from the reference's choice", what, m, kernels, d);
    int64_t thi = test_report_value(&report, "thi_x1000"), c = test_report_value(&report, "c_index");
    int64_t cuts = test_report_value(&report, "cuts");
    CHECK(thi == lround(1000 * ref->thi[thi_index]) && c == c_index + 1,
          "%s map %s: thi %lld/1000 c_%lld, reference thi %g c_%d", what, m, (long long)thi, (long long)c,
          ref->thi[thi_index], c_index + 1);
    CHECK(cuts == (int64_t)ref->n_thi * 33 && test_report_value(&report, "cut_ok") == 1, "%s map %s: %lld cuts",
          what, m, (long long)cuts);
    db_image_free(out);
}

/* Warm chains against cold cuts: every bit of every chain's history. */
static void check_warm(db_context *ctx, const db_image *img, const reference *ref, const char *map_text,
                       const char *kernels, const char *what)
{
    const db_algo *algo = db_algo_find("howe-auto");
    int w = img->width, h = img->height;
    size_t n = (size_t)w * h, nodes = (size_t)(w - 1) * (h - 1);
    db_howe_probe probe = {0};
    for (int j = 0; j < ref->n_thi; j++)
        probe.history[j] = calloc(nodes, sizeof(uint64_t));
    db_job job;
    db_job_defaults(algo, &job);
    db_map map;
    db_map_parse(algo, map_text, &map);
    if (*kernels)
        setenv("DOCBIN_PUSHRELABEL", kernels, 1);
    db_image *out = NULL;
    db_howe_probe_attach(&probe);
    db_status st = db_run(ctx, algo, &map, &job, img, &out, NULL, NULL);
    db_howe_probe_attach(NULL);
    unsetenv("DOCBIN_PUSHRELABEL");
    CHECK(st == DB_OK, "%s warm %s: %s", what, map_text, db_error_message());
    uint8_t *ink = malloc(nodes), *image = malloc(n);
    for (int j = 0; st == DB_OK && j < ref->n_thi; j++)
        for (int i = 0; i < REF_TUNE_CS; i++) {
            for (size_t v = 0; v < nodes; v++)
                ink[v] = (uint8_t)(probe.history[j][v] >> i & 1);
            ref_howe_finish(ink, w, h, image);
            size_t d = test_diff(image, ref->images + ((size_t)j * REF_TUNE_CS + (size_t)i) * n, n);
            CHECK(d == 0, "%s warm chain thi %g, cut %d (c %g) on map %s %s: %zu pixels differ from the cold cut", what,
                  ref->thi[j], i, ref_tune_c(i), map_text, kernels, d);
        }
    for (int j = 0; j < ref->n_thi; j++)
        free(probe.history[j]);
    free(ink);
    free(image);
    db_image_free(out);
}

static void check_grid(db_context *ctx, const db_image *img, const reference *ref, const char *map_text)
{
    const db_algo *algo = &db_algo_howe_grid;
    size_t n = (size_t)img->width * img->height;
    uint8_t *truth = malloc(n);
    /* A truth that no setting matches exactly: ink where the gray page is dark, with holes. */
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++)
            truth[(size_t)y * img->width + x] =
                img->data[(size_t)y * img->stride + (size_t)x * img->channels] < 120 && (x + y) % 11 != 0;
    int thi_index, c_index, want_thi, want_c;
    double f;
    ref_tune_search(ref->images, img->width, img->height, ref->n_thi, 3, truth, &want_thi, &want_c);
    db_map map;
    db_map_parse(algo, map_text, &map);
    db_status st = db_howe_grid(ctx, &map, img, truth, &thi_index, &c_index, &f, NULL);
    CHECK(st == DB_OK, "grid on %s: %s", map_text, db_error_message());
    CHECK(st != DB_OK || (thi_index == want_thi && c_index == want_c),
          "grid on %s: thi %d c %d, reference thi %d c %d", map_text, thi_index, c_index, want_thi, want_c);
    /* Without the truth it is refused. */
    db_job job;
    db_job_defaults(algo, &job);
    db_image *out = NULL;
    st = db_run(ctx, algo, &map, &job, img, &out, NULL, NULL);
    CHECK(st == DB_ERR_USAGE && out == NULL && strstr(db_error_message(), "ground truth"),
          "grid without a truth: %s", db_error_message());
    free(truth);
}

static void synthetic(db_context *ctx)
{
    const db_algo *algo = db_algo_find("howe-auto");
    /* Alg3 on every map, gray and RGB pages. */
    for (int ch = 1; ch <= 3; ch += 2) {
        db_image *img = document(ch == 1 ? 56 : 45, ch == 1 ? 40 : 37, ch);
        char what[64];
        snprintf(what, sizeof what, "synthetic %dx%d/%dch", img->width, img->height, ch);
        reference ref;
        CHECK(make_reference(img, db_howe_alg3_thi, 3, 0.6, &ref) == 0, "%s: the reference failed", what);
        check_warm(ctx, img, &ref, "cpu", "", what);
        check_warm(ctx, img, &ref, "gpu", "global", what);
        check_warm(ctx, img, &ref, "gpu", "tiles", what);
        /* The stacked chains split in 3 parts and in none (a page this small takes 11). */
        static const char *const parts[] = {"3", "1"};
        for (int p = 0; p < DB_LEN(parts); p++) {
            char split[96];
            snprintf(split, sizeof split, "%s, chains in %s part(s)", what, parts[p]);
            setenv("DOCBIN_HOWE_PARTS", parts[p], 1);
            check_warm(ctx, img, &ref, "gpu", "tiles", split);
            check_warm(ctx, img, &ref, "gpu", "global", split);
        }
        /* A count that is not one of them is refused, naming the variable. */
        setenv("DOCBIN_HOWE_PARTS", "4", 1);
        db_map all_gpu;
        db_map_parse(algo, "gpu", &all_gpu);
        db_job bad_job;
        db_job_defaults(algo, &bad_job);
        db_image *bad = NULL;
        db_status bad_st = db_run(ctx, algo, &all_gpu, &bad_job, img, &bad, NULL, NULL);
        CHECK(bad_st == DB_ERR_USAGE && !bad && strstr(db_error_message(), "DOCBIN_HOWE_PARTS='4'"),
              "%s: DOCBIN_HOWE_PARTS=4 gave status %d: %s", what, (int)bad_st, db_error_message());
        db_image_free(bad);
        unsetenv("DOCBIN_HOWE_PARTS");
        for (int i = 0; i < db_map_count(algo); i++) {
            db_map map;
            db_map_nth(algo, i, &map);
            db_job job;
            db_job_defaults(algo, &job);
            check_run(ctx, img, &map, &job, &ref, 0, what, i);
        }
        free(ref.images);
        db_image_free(img);
    }
    /* Alg1 alone with its own defaults (thi 0.3, sigma 0.4), and Alg2, on a few maps. */
    static const char *const few[] = {"cpu", "gpu", "cpu,gpu,gpu,cpu,gpu,cpu", "gpu,cpu,cpu,gpu,cpu,gpu"};
    db_image *img = document(41, 33, 1);
    reference ref;
    static const double alg1_thi[1] = {0.3};
    CHECK(make_reference(img, alg1_thi, 1, 0.4, &ref) == 0, "alg1: the reference failed");
    for (int i = 0; i < DB_LEN(few); i++) {
        db_job job;
        db_job_defaults(algo, &job);
        CHECK(db_job_set(algo, &job, "search", "c") == DB_OK && db_job_set(algo, &job, "sigma", "0.4") == DB_OK,
              "search=c: %s", db_error_message());
        db_map map;
        db_map_parse(algo, few[i], &map);
        check_run(ctx, img, &map, &job, &ref, 1, "alg1 alone", i);
    }
    free(ref.images);
    CHECK(make_reference(img, db_howe_grid_thi, DB_HOWE_MAX_CHAINS, 0.6, &ref) == 0, "alg2: the reference failed");
    for (int i = 0; i < DB_LEN(few); i++) {
        db_job job;
        db_job_defaults(algo, &job);
        CHECK(db_job_set(algo, &job, "search", "alg2") == DB_OK, "search=alg2: %s", db_error_message());
        db_map map;
        db_map_parse(algo, few[i], &map);
        check_run(ctx, img, &map, &job, &ref, 2, "alg2", i);
    }
    check_grid(ctx, img, &ref, "cpu");
    check_grid(ctx, img, &ref, "gpu");
    free(ref.images);
    db_image_free(img);
    /* The grid search is not a choice of howe-auto's. */
    db_job job;
    db_job_defaults(algo, &job);
    CHECK(db_job_set(algo, &job, "search", "grid") == DB_ERR_USAGE, "howe-auto accepted search=grid");
}

/* A crop of a DIBCO page around its centre. */
static db_image *crop(const db_image *page, int w, int h)
{
    int x0 = (page->width - w) / 2, y0 = (page->height - h) / 2;
    db_image *c = db_image_new(w, h, page->channels);
    for (int y = 0; y < h; y++)
        memcpy(c->data + y * c->stride, page->data + (size_t)(y0 + y) * page->stride + (size_t)x0 * page->channels,
               (size_t)w * page->channels);
    return c;
}

static void dibco(db_context *ctx)
{
    const db_algo *algo = db_algo_find("howe-auto"), *howe = db_algo_find("howe");
    static const char *const pages[] = {"2009/Originals/2009-H03.png", "2011/Originals/2011-PR4.png",
                                        "2013/Originals/2013-PR05.png"};
    /* Each stage on each role, chains split across the roles. */
    static const char *const maps[] = {"cpu", "gpu", "cpu,gpu,cpu,gpu,cpu,gpu", "gpu,cpu,gpu,cpu,gpu,cpu"};
    char path[4096];
    snprintf(path, sizeof path, "%s/dibco/%s", data_dir, pages[0]);
    db_image *probe_page = db_image_read(path);
    if (!probe_page) {
        fprintf(stderr, "note: DIBCO pages not found under %s/dibco; their checks are skipped\n", data_dir);
        return;
    }
    db_image_free(probe_page);
    for (int p = 0; p < DB_LEN(pages); p++) {
        snprintf(path, sizeof path, "%s/dibco/%s", data_dir, pages[p]);
        db_image *page = db_image_read(path);
        CHECK(page != NULL, "%s: %s", path, db_error_message());
        if (!page)
            continue;
        db_image *img = crop(page, 72, 54);
        reference ref;
        CHECK(make_reference(img, db_howe_alg3_thi, 3, 0.6, &ref) == 0, "%s: the reference failed", pages[p]);
        for (int i = 0; i < DB_LEN(maps); i++) {
            db_map map;
            db_map_parse(algo, maps[i], &map);
            db_job job;
            db_job_defaults(algo, &job);
            check_run(ctx, img, &map, &job, &ref, 0, pages[p], i);
        }
        free(ref.images);
        db_image_free(img);
        db_image_free(page);
    }
    /* A whole page on the maps whose chains run on the cpu role: the same
    ** image, thi and c, and the image is howe's at that thi and c. */
    snprintf(path, sizeof path, "%s/dibco/%s", data_dir, "2010/Originals/2010-H10.png");
    db_image *page = db_image_read(path);
    CHECK(page != NULL, "%s: %s", path, db_error_message());
    if (!page)
        return;
    static const char *const cpu_chains[] = {"cpu", "gpu,gpu,cpu,cpu,cpu,gpu"};
    db_image *first = NULL;
    db_report first_report = {0};
    for (int i = 0; i < DB_LEN(cpu_chains); i++) {
        db_map map;
        db_map_parse(algo, cpu_chains[i], &map);
        db_job job;
        db_job_defaults(algo, &job);
        db_image *out = NULL;
        db_report report = {0};
        db_status st = db_run(ctx, algo, &map, &job, page, &out, &report, NULL);
        CHECK(st == DB_OK, "whole page map %s: %s", cpu_chains[i], db_error_message());
        if (st != DB_OK)
            continue;
        if (!first) {
            first = out;
            first_report = report;
            continue;
        }
        CHECK(test_diff(out->data, first->data, (size_t)out->height * out->stride) == 0 &&
                  !memcmp(report.values, first_report.values, sizeof report.values),
              "whole page: map %s differs from map %s", cpu_chains[i], cpu_chains[0]);
        db_image_free(out);
    }
    if (first) {
        db_job job;
        db_job_defaults(howe, &job);
        job.params[DB_HOWE_THI] = test_report_value(&first_report, "thi_x1000") / 1000.0;
        job.params[DB_HOWE_C] = db_howe_c((int)test_report_value(&first_report, "c_index") - 1);
        db_map map;
        db_map_parse(howe, "cpu", &map);
        db_image *out = NULL;
        db_status st = db_run(ctx, howe, &map, &job, page, &out, NULL, NULL);
        CHECK(st == DB_OK && test_diff(out->data, first->data, (size_t)out->height * out->stride) == 0,
              "whole page: howe at thi %g c %g differs from howe-auto's image (%s)", job.params[DB_HOWE_THI],
              job.params[DB_HOWE_C], st == DB_OK ? "" : db_error_message());
        db_image_free(out);
    }
    db_image_free(first);
    db_image_free(page);
}

int main(int argc, char **argv)
{
    data_dir = argc > 1 ? argv[1] : "../shared/data";
    test_table();
    test_rules();
    db_context *ctx = test_open_context();
    synthetic(ctx);
    dibco(ctx);
    db_context_close(ctx);
    return test_result("howe_tune");
}
