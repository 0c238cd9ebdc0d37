/*
** test_howe_features.c — howe-predict against plain-C references:
**  - its statistics (the co-occurrence counts of MATLAB's 8-level graycomatrix,
**    the Canny edges of tests/reference_howe.c at thi 0.4 and their gray sum,
**    Otsu's background of tests/reference.c) exactly, and its features against
**    their textbook definitions (the 8x8 matrix, two-pass deviation);
**  - its image against tests/reference_howe.c at the predicted (or given)
**    thi and c, on every map of a small page and a few maps of others; every
**    map reports the same prediction;
**  - the prediction rule (clamps, rounding), the least-squares fit against an
**    independent solution, model files written and read back, and the bad
**    model files: missing, a directory, malformed, of another version.
*/
#define _GNU_SOURCE /* setenv */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "algorithms/howe_features.h"
#include "tests/reference.h"
#include "tests/reference_howe.h"
#include "tests/testutil.h"

static uint32_t rng = 777;

typedef enum pattern { DOCUMENT, NOISE, FLAT, STRIPES, N_PATTERNS } pattern;

static db_image *make_image(int w, int h, int channels, pattern p)
{
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int ink = (x / 2 + y / 3) % 7 == 0 || (x * 3 + y * 5) % 29 < 2;
            for (int c = 0; c < channels; c++) {
                int v;
                switch (p) {
                case DOCUMENT:
                    v = ink ? 30 + (int)(test_random(&rng) % 50) : 205 - (x + y) * 70 / (w + h) + (int)(test_random(&rng) % 20) - 3 * c;
                    break;
                case NOISE: v = (int)(test_random(&rng) % 256); break;
                case FLAT: v = 140; break;
                default: v = x % 5 < 2 ? 40 : 220; break;
                }
                img->data[(size_t)y * img->stride + (size_t)x * channels + c] = (uint8_t)v;
            }
        }
    return img;
}

/* ---- the reference statistics and features ---- */

typedef struct ref_features {
    uint64_t glcm[8], edges[2], background[3];
    double f[DB_HOWE_FEATURES];
} ref_features;

static void reference(const db_image *img, double sigma, ref_features *r)
{
    int w = img->width, h = img->height;
    size_t n = (size_t)w * h, row = (size_t)w * img->channels;
    uint8_t *pixels = malloc(row * h), *gray = malloc(n), *edges = malloc(n);
    for (int y = 0; y < h; y++)
        memcpy(pixels + y * row, img->data + y * img->stride, row);
    ref_howe_gray(pixels, w, h, img->channels, gray);
    memset(r, 0, sizeof *r);
    /* graycomatrix(I) with its defaults: levels round(7 v / 255) + 1, offset [0 1]. */
    uint64_t m[9][9] = {{0}};
    for (int y = 0; y < h; y++)
        for (int x = 0; x + 1 < w; x++) {
            int a = (int)floor(7.0 * gray[y * w + x] / 255.0 + 1.0 + 0.5), b = (int)floor(7.0 * gray[y * w + x + 1] / 255.0 + 1.0 + 0.5);
            m[a][b]++;
        }
    uint64_t total = 0;
    for (int i = 1; i <= 8; i++)
        for (int j = 1; j <= 8; j++) {
            r->glcm[abs(i - j)] += m[i][j];
            total += m[i][j];
        }
    double contrast = 0, homogeneity = 0;
    for (int i = 1; i <= 8; i++)
        for (int j = 1; j <= 8; j++) {
            double p = (double)m[i][j] / (double)total;
            contrast += (i - j) * (i - j) * p;
            homogeneity += p / (1 + abs(i - j));
        }
    r->f[DB_HOWE_CONTRAST] = contrast;
    r->f[DB_HOWE_HOMOGENEITY] = homogeneity;
    ref_howe_canny(gray, w, h, sigma, 0.1, 0.4, edges);
    for (size_t p = 0; p < n; p++)
        if (edges[p]) {
            r->edges[0]++;
            r->edges[1] += gray[p];
        }
    r->f[DB_HOWE_EDGE_MEAN] = r->edges[0] ? (double)r->edges[1] / (double)r->edges[0] : 255.0;
    int t = ref_otsu_threshold(gray, n);
    double sum = 0;
    for (size_t p = 0; p < n; p++)
        if (gray[p] > t) {
            r->background[0]++;
            r->background[1] += gray[p];
            r->background[2] += (uint64_t)gray[p] * gray[p];
            sum += gray[p];
        }
    double mean = r->background[0] ? sum / (double)r->background[0] : 0, var = 0;
    for (size_t p = 0; p < n; p++)
        if (gray[p] > t)
            var += (gray[p] - mean) * (gray[p] - mean);
    r->f[DB_HOWE_BACKGROUND_STD] = r->background[0] ? sqrt(var / (double)r->background[0]) : 0.0;
    free(pixels);
    free(gray);
    free(edges);
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* One run under `map`: statistics, features and image against the references. */
static void check_run(db_context *ctx, const db_image *img, const db_map *map, double c, double thi, const char *what,
                      db_report *report_out)
{
    const db_algo *algo = db_algo_find("howe-predict");
    size_t n = (size_t)img->width * img->height;
    db_job job;
    db_job_defaults(algo, &job);
    job.params[DB_HOWE_C] = c;
    job.params[DB_HOWE_THI] = thi;
    char m[96];
    db_map_format(map, m, sizeof m);
    db_howe_probe probe = {0};
    db_image *out = NULL;
    db_report report = {0};
    db_howe_probe_attach(&probe);
    db_status st = db_run(ctx, algo, map, &job, img, &out, &report, NULL);
    db_howe_probe_attach(NULL);
    CHECK(st == DB_OK && probe.has_features, "%s map %s: %s", what, m, db_error_message());
    if (st != DB_OK)
        return;
    ref_features r;
    reference(img, job.params[DB_HOWE_SIGMA], &r);
    CHECK(!memcmp(probe.stats.glcm, r.glcm, sizeof r.glcm), "%s map %s: co-occurrence counts differ", what, m);
    CHECK(!memcmp(probe.stats.edges, r.edges, sizeof r.edges), "%s map %s: edges %llu sum %llu, reference %llu %llu",
          what, m, (unsigned long long)probe.stats.edges[0], (unsigned long long)probe.stats.edges[1],
          (unsigned long long)r.edges[0], (unsigned long long)r.edges[1]);
    CHECK(!memcmp(probe.stats.background, r.background, sizeof r.background),
          "%s map %s: background %llu, reference %llu", what, m, (unsigned long long)probe.stats.background[0],
          (unsigned long long)r.background[0]);
    for (int k = 0; k < DB_HOWE_FEATURES; k++)
        CHECK(close_to(probe.features[k], r.f[k]), "%s map %s: %s %.17g, reference %.17g", what, m,
              db_howe_feature_names[k], probe.features[k], r.f[k]);
    double use_thi = thi > 0 ? thi : probe.thi, use_c = c > 0 ? c : db_howe_c(probe.c_index);
    uint8_t *expect = malloc(n), *pixels = malloc(n * img->channels);
    for (int y = 0; y < img->height; y++)
        memcpy(pixels + (size_t)y * img->width * img->channels, img->data + y * img->stride,
               (size_t)img->width * img->channels);
    CHECK(ref_howe(pixels, img->width, img->height, img->channels, use_c, 0.6, 0.1, use_thi, expect) == 0,
          "%s: the reference failed", what);
    size_t d = test_diff(out->data, expect, n);
    CHECK(d == 0, "%s map %s (thi %g, c %g): %zu pixels differ from the reference", what, m, use_thi, use_c, d);
    int64_t rt = test_report_value(&report, "thi_x1000"), rc = test_report_value(&report, "c_x100");
    CHECK(rt == lround(1000 * use_thi) && rc == lround(100 * use_c), "%s map %s: reported thi %lld c %lld", what, m,
          (long long)rt, (long long)rc);
    if (report_out)
        *report_out = report;
    free(expect);
    free(pixels);
    db_image_free(out);
}

static void pages(db_context *ctx)
{
    const db_algo *algo = db_algo_find("howe-predict");
    static const char *const few[] = {"cpu", "gpu", "cpu,gpu,cpu,gpu,cpu,gpu", "gpu,cpu,gpu,cpu,gpu,cpu"};
    static const struct { int w, h; } sizes[] = {{3, 3}, {23, 5}, {50, 37}, {131, 64}};
    for (int s = 0; s < DB_LEN(sizes); s++)
        for (int p = 0; p < N_PATTERNS; p++) {
            db_image *img = make_image(sizes[s].w, sizes[s].h, (s + p) % 2 ? 3 : 1, (pattern)p);
            char what[64];
            snprintf(what, sizeof what, "%dx%d pattern %d", img->width, img->height, p);
            for (int i = 0; i < DB_LEN(few); i++) {
                db_map map;
                db_map_parse(algo, few[i], &map);
                check_run(ctx, img, &map, 0, 0, what, NULL);
                if (i == 0)
                    check_run(ctx, img, &map, 100, 0.3, what, NULL);
            }
            db_image_free(img);
        }
    /* Every map of a small page: the same prediction and image. */
    db_image *img = make_image(40, 30, 3, DOCUMENT);
    db_report first = {0};
    for (int i = 0; i < db_map_count(algo); i++) {
        db_map map;
        db_map_nth(algo, i, &map);
        db_report r = {0};
        check_run(ctx, img, &map, 0, 0, "every map", &r);
        if (i == 0)
            first = r;
        CHECK(!memcmp(r.values, first.values, sizeof r.values), "map %d reports other values than map 0", i);
    }
    db_image_free(img);
}

/* ---- prediction, fit, model files ---- */

static void prediction(void)
{
    db_howe_model m = {.mean = {0, 0, 0, 0}, .scale = {1, 1, 1, 1}, .thi = {0.4, 0.1, 0, 0, 0}, .c_index = {12.5, 0, 0, 2, 0}};
    double f[DB_HOWE_FEATURES] = {0}, thi;
    int c;
    db_howe_predict(&m, f, &thi, &c);
    CHECK(thi == 0.4 && c == 13, "prediction: thi %g c %d, want 0.4 and 13 (halves round up)", thi, c);
    f[0] = 10;
    f[2] = 20;
    db_howe_predict(&m, f, &thi, &c);
    CHECK(thi == 0.65 && c == 32, "prediction: thi %g c %d, want the clamps 0.65 and 32", thi, c);
    f[0] = -10;
    f[2] = -20;
    db_howe_predict(&m, f, &thi, &c);
    CHECK(thi == 0.15 && c == 0, "prediction: thi %g c %d, want the clamps 0.15 and 0", thi, c);
}

/* Ridge least squares by Gauss-Jordan on [X'X + ridge I' | X'y], written for the test. */
static void ridge_reference(const double (*x)[5], const double *y, int n, double ridge, double *w)
{
    double a[5][6] = {{0}};
    for (int i = 0; i < n; i++)
        for (int r = 0; r < 5; r++) {
            for (int c = 0; c < 5; c++)
                a[r][c] += x[i][r] * x[i][c];
            a[r][5] += x[i][r] * y[i];
        }
    for (int r = 1; r < 5; r++)
        a[r][r] += ridge;
    for (int col = 0; col < 5; col++) {
        for (int r = 0; r < 5; r++) {
            if (r == col)
                continue;
            double f = a[r][col] / a[col][col];
            for (int c = 0; c < 6; c++)
                a[r][c] -= f * a[col][c];
        }
    }
    for (int r = 0; r < 5; r++)
        w[r] = a[r][5] / a[r][r];
}

static void fit(void)
{
    enum { N = 40 };
    db_howe_sample s[N];
    double x[N][5], yt[N], yc[N];
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < DB_HOWE_FEATURES; k++)
            s[i].features[k] = (double)(test_random(&rng) % 10000) / (k == 2 ? 10.0 : 1000.0);
        s[i].thi_index = (int)(test_random(&rng) % DB_HOWE_MAX_CHAINS);
        s[i].c_index = (int)(test_random(&rng) % DB_HOWE_LINKS);
    }
    db_howe_model m;
    CHECK(db_howe_fit(s, N, &m) == DB_OK, "fit: %s", db_error_message());
    for (int k = 0; k < DB_HOWE_FEATURES; k++) {
        double mean = 0, var = 0;
        for (int i = 0; i < N; i++)
            mean += s[i].features[k] / N;
        for (int i = 0; i < N; i++)
            var += (s[i].features[k] - mean) * (s[i].features[k] - mean) / N;
        CHECK(close_to(m.mean[k], mean) && close_to(m.scale[k], sqrt(var)), "fit: feature %d standardised with %g %g, want %g %g",
              k, m.mean[k], m.scale[k], mean, sqrt(var));
        for (int i = 0; i < N; i++)
            x[i][1 + k] = (s[i].features[k] - mean) / sqrt(var);
    }
    for (int i = 0; i < N; i++) {
        x[i][0] = 1;
        yt[i] = db_howe_grid_thi[s[i].thi_index];
        yc[i] = s[i].c_index;
    }
    /* The ridge the library documents in its model files. */
    double wt[5], wc[5];
    ridge_reference((const double (*)[5])x, yt, N, 1.0, wt);
    ridge_reference((const double (*)[5])x, yc, N, 1.0, wc);
    for (int r = 0; r < 5; r++)
        CHECK(fabs(m.thi[r] - wt[r]) < 1e-9 && fabs(m.c_index[r] - wc[r]) < 1e-9,
              "fit: weight %d %.12g %.12g, reference %.12g %.12g", r, m.thi[r], m.c_index[r], wt[r], wc[r]);
    CHECK(db_howe_fit(s, 1, &m) == DB_ERR_USAGE, "a fit of one page was accepted");
}

static db_status parse(const char *text, db_howe_model *m)
{
    return db_howe_model_parse(text, "model.txt", m);
}

static void model_files(db_context *ctx)
{
    const char *good = "docbin-howe-model 1\n# a comment\n\nfeatures contrast homogeneity edge_mean background_std\n"
                       "mean 1 2 3 4\nscale 1 1 2 2\nthi 0.4 0 0 0 0\nc_index 12 0 0 0 1e-3\n";
    db_howe_model m;
    CHECK(parse(good, &m) == DB_OK && m.mean[3] == 4 && m.scale[2] == 2 && m.c_index[4] == 1e-3, "good model: %s",
          db_error_message());
    static const struct { const char *text, *says; } bad[] = {
        {"", "empty"},
        {"features contrast homogeneity edge_mean background_std\n", "model.txt:1: not a docbin Howe model"},
        {"docbin-howe-model 2\nmean 1 2 3 4\n", "version 2"},
        {"docbin-howe-model one\n", "not a docbin Howe model"},
        {"docbin-howe-model 1\nfeatures contrast homogeneity edge_mean background_std\nmean 1 2 3 4\nscale 1 1 1 1\n"
         "thi 0.4 0 0 0 0\n", "no 'c_index' line"},
        {"docbin-howe-model 1\nmean 1 2 3 4\nscale 1 1 1 1\nthi 0.4 0 0 0 0\nc_index 1 0 0 0 0\n", "no 'features'"},
        {"docbin-howe-model 1\nfeatures contrast homogeneity edge_mean\n", "model.txt:2: the features"},
        {"docbin-howe-model 1\nfeatures a b c d\n", "model.txt:2: the features"},
        {"docbin-howe-model 1\nmean 1 2 3\n", "model.txt:2: 'mean' takes 4 numbers, not 3"},
        {"docbin-howe-model 1\nmean 1 2 3 4 5\n", "model.txt:2: 'mean' takes 4 finite numbers"},
        {"docbin-howe-model 1\n\nmean 1 2 x 4\n", "model.txt:3: 'mean'"},
        {"docbin-howe-model 1\nmean 1 2 nan 4\n", "model.txt:2: 'mean'"},
        {"docbin-howe-model 1\nscale 1 0 1 1\n", "above 0"},
        {"docbin-howe-model 1\nmean 1 2 3 4\nmean 1 2 3 4\n", "model.txt:3: a second 'mean'"},
        {"docbin-howe-model 1\nweights 1 2\n", "model.txt:2: unknown line 'weights'"},
    };
    for (int i = 0; i < DB_LEN(bad); i++) {
        db_status st = parse(bad[i].text, &m);
        CHECK(st == DB_ERR_FORMAT && strstr(db_error_message(), bad[i].says) &&
                  strstr(db_error_message(), "docbin-bench --train-howe"),
              "bad model %d: status %d, '%s' (want '%s')", i, st, db_error_message(), bad[i].says);
    }
    /* The built-in model is a good one. */
    unsetenv("DOCBIN_HOWE_MODEL");
    CHECK(db_howe_model_load(&m) == DB_OK, "built-in model: %s", db_error_message());
    /* Written and read back, to the last bit. */
    char dir[] = "/tmp/docbin-model-XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/model.txt", dir);
    db_howe_model w = {.mean = {0.1, 1.0 / 3, 137.25, 9.5}, .scale = {0.07, 0.02, 11.0, 3.0},
                       .thi = {0.41, -0.01, 1e-17, 0, 0.3}, .c_index = {14.2, 1, -2, 3, -4}}, back;
    CHECK(db_howe_model_write(&w, path, "line one\nline two") == DB_OK, "write: %s", db_error_message());
    setenv("DOCBIN_HOWE_MODEL", path, 1);
    CHECK(db_howe_model_load(&back) == DB_OK && !memcmp(&w, &back, sizeof w), "model read back differs: %s",
          db_error_message());
    /* Bad files through a run: no image, one clear error. */
    const db_algo *algo = db_algo_find("howe-predict");
    db_image *img = make_image(20, 15, 1, DOCUMENT), *out = NULL;
    db_job job;
    db_job_defaults(algo, &job);
    db_map map;
    db_map_parse(algo, "cpu", &map);
    CHECK(db_run(ctx, algo, &map, &job, img, &out, NULL, NULL) == DB_OK, "a run with the written model: %s",
          db_error_message());
    db_image_free(out);
    out = NULL;
    char missing[300];
    snprintf(missing, sizeof missing, "%s/none.txt", dir);
    setenv("DOCBIN_HOWE_MODEL", missing, 1);
    db_status st = db_run(ctx, algo, &map, &job, img, &out, NULL, NULL);
    CHECK(st == DB_ERR_IO && !out && strstr(db_error_message(), "DOCBIN_HOWE_MODEL") &&
              strstr(db_error_message(), "none.txt"),
          "missing model: status %d, %s", st, db_error_message());
    setenv("DOCBIN_HOWE_MODEL", dir, 1);
    st = db_run(ctx, algo, &map, &job, img, &out, NULL, NULL);
    CHECK(st != DB_OK && !out && strstr(db_error_message(), "DOCBIN_HOWE_MODEL"), "a directory as the model: %s",
          db_error_message());
    FILE *f = fopen(path, "w");
    fputs("docbin-howe-model 7\n", f);
    fclose(f);
    setenv("DOCBIN_HOWE_MODEL", path, 1);
    st = db_run(ctx, algo, &map, &job, img, &out, NULL, NULL);
    CHECK(st == DB_ERR_FORMAT && !out && strstr(db_error_message(), "version 7") && strstr(db_error_message(), path),
          "model of version 7: %s", db_error_message());
    /* Given thi and c need no model. */
    job.params[DB_HOWE_C] = 200;
    job.params[DB_HOWE_THI] = 0.35;
    st = db_run(ctx, algo, &map, &job, img, &out, NULL, NULL);
    CHECK(st == DB_OK, "with thi and c given the model is not read: %s", db_error_message());
    db_image_free(out);
    unsetenv("DOCBIN_HOWE_MODEL");
    unlink(path);
    rmdir(dir);
    db_image_free(img);
}

int main(void)
{
    prediction();
    fit();
    db_context *ctx = test_open_context();
    model_files(ctx);
    pages(ctx);
    db_context_close(ctx);
    return test_result("howe_features");
}
