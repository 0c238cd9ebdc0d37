/*
** test_api.c — the public C API (include/docbin.h) against the plain-C
** reference (reference.c): images in the caller's padded memory, every map
** form, settings by name and as text, the descriptions, times, evaluation
** against counts made here, four threads sharing a context, and every misuse
** a program outside docbin can make: the documented status and a message,
** never a crash, never a byte written outside the output's rows.
*/
#define _DEFAULT_SOURCE /* setenv, mkstemps */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/reference.h"
#include "tests/testutil.h"

enum { W = 97, H = 61, PAD = 11, CANARY = 0xA5 };

/* A caller's page: RGB or gray rows of W pixels, PAD spare bytes after each. */
typedef struct page {
    db_image img;
    uint8_t *packed; /* the same pixels, rows packed, for the reference */
} page;

static page make_page(int channels, uint32_t seed)
{
    page p = {.img = {.width = W, .height = H, .channels = channels, .stride = (size_t)W * channels + PAD}};
    p.img.data = malloc(p.img.stride * H);
    p.packed = malloc((size_t)W * H * channels);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W * channels; x++) {
            /* dark strokes on uneven paper, with noise */
            int ink = (y % 11 < 2 && (x / channels / 6) % 3) || (x / channels) % 17 < 2;
            int v = (ink ? 60 : 150 + x / channels + y / 2) + (int)(test_random(&seed) % 41) - 20;
            v = v < 0 ? 0 : v > 255 ? 255 : v;
            p.img.data[(size_t)y * p.img.stride + x] = p.packed[(size_t)y * W * channels + x] = (uint8_t)v;
        }
    return p;
}

/* An output in the caller's memory, its padding filled with CANARY. */
static db_image make_out(void)
{
    db_image o = {.width = W, .height = H, .channels = 1, .stride = W + PAD};
    o.data = malloc(o.stride * H);
    memset(o.data, CANARY, o.stride * H);
    return o;
}

/* Pixels of `o` that differ from `expect` (packed), and padding bytes changed. */
static size_t diff_out(const db_image *o, const uint8_t *expect, size_t *padding)
{
    size_t d = 0;
    *padding = 0;
    for (int y = 0; y < H; y++) {
        d += test_diff(o->data + (size_t)y * o->stride, expect + (size_t)y * W, W);
        for (int x = W; x < (int)o->stride; x++)
            *padding += o->data[(size_t)y * o->stride + x] != CANARY;
    }
    return d;
}

static void reference(const page *p, ref_method method, int window, double k, int rule, uint8_t *out)
{
    uint8_t *gray = malloc((size_t)W * H);
    ref_gray(p->packed, W, H, p->img.channels, rule, gray);
    ref_binarize(gray, W, H, method, window, k, out);
    free(gray);
}

/* One case: algorithm and settings, the reference's method and values. */
typedef struct api_case {
    const char *algo, *settings, *map;
    ref_method method;
    int window;
    double k;
    int rule;
} api_case;

static const api_case cases[] = {
    {"sauvola", "window=21 k=0.3", NULL, REF_SAUVOLA, 21, 0.3, REF_GRAY_BT601},
    {"niblack", "k=-0.4 window=15", "cpu", REF_NIBLACK, 15, -0.4, REF_GRAY_BT601},
    {"nick", "window=31 k=-0.1 gray=qt", "gpu,cpu,gpu", REF_NICK, 31, -0.1, REF_GRAY_QT},
    {"wolf", "  window=9\tk=0.5  ", "stats=cpu", REF_WOLF, 9, 0.5, REF_GRAY_BT601},
    {"otsu", NULL, "auto", REF_OTSU, 0, 0, REF_GRAY_BT601},
    {"sauvola", "variant=shared window=13", "gpu", REF_SAUVOLA, 13, 0.2, REF_GRAY_BT601},
};

static void check_runs(db_context *ctx)
{
    for (int channels = 1; channels <= 3; channels += 2)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const api_case *k = &cases[c];
            page p = make_page(channels, 7 + (uint32_t)c);
            db_image out = make_out();
            uint8_t *expect = malloc((size_t)W * H);
            reference(&p, k->method, k->window, k->k, k->rule, expect);
            db_status st = db_binarize(ctx, k->algo, k->settings, k->map, &p.img, &out);
            CHECK(st == DB_OK, "%s \"%s\" map %s: %s", k->algo, k->settings, k->map, db_error_message());
            size_t padding, d = st == DB_OK ? diff_out(&out, expect, &padding) : 0;
            CHECK(st != DB_OK || (d == 0 && padding == 0), "%s %d channels map %s: %zu pixels differ, %zu padding "
                  "bytes written", k->algo, channels, k->map, d, padding);
            printf("%-8s %d channel(s) map %-12s %zu differing pixels\n", k->algo, channels,
                   k->map ? k->map : "(NULL)", d);
            free(expect);
            free(out.data);
            free(p.img.data);
            free(p.packed);
        }
}

/* A gray page binarized in place: the output is the input. */
static void check_in_place(db_context *ctx)
{
    page p = make_page(1, 3);
    uint8_t *expect = malloc((size_t)W * H);
    reference(&p, REF_SAUVOLA, 11, 0.2, REF_GRAY_BT601, expect);
    db_image io = p.img;
    db_status st = db_binarize(ctx, "sauvola", "window=11", NULL, &p.img, &io);
    size_t d = 0;
    for (int y = 0; st == DB_OK && y < H; y++)
        d += test_diff(io.data + (size_t)y * io.stride, expect + (size_t)y * W, W);
    CHECK(st == DB_OK && d == 0, "in place: %s, %zu pixels differ", db_error_message(), d);
    free(expect);
    free(p.img.data);
    free(p.packed);
}

/* A page large enough that its pixels are staging memory (db_image_load puts
** them there): the run reads it as it lies and may write its result back into
** it. Every map must still agree with the reference. */
static void check_staged(db_context *ctx)
{
    enum { BW = 1280, BH = 1024 };
    db_image big = {.width = BW, .height = BH, .channels = 1, .stride = BW, .data = malloc((size_t)BW * BH)};
    uint32_t seed = 11;
    for (size_t i = 0; i < (size_t)BW * BH; i++)
        big.data[i] = (uint8_t)((i / BW) % 13 < 3 ? 40 + test_random(&seed) % 30 : 140 + test_random(&seed) % 90);
    uint8_t *expect = malloc((size_t)BW * BH);
    ref_binarize(big.data, BW, BH, REF_SAUVOLA, 25, 0.2, expect);
    char path[] = "/tmp/docbin-test-api-XXXXXX.png";
    int fd = mkstemps(path, 4);
    CHECK(fd >= 0 && db_image_save(&big, path, 8) == DB_OK, "saving %s: %s", path, db_error_message());
    db_image *loaded = NULL;
    CHECK(db_image_load(path, &loaded) == DB_OK, "loading %s: %s", path, db_error_message());
    const char *maps[] = {"cpu", "gpu", "stats=cpu"};
    for (size_t i = 0; loaded && i < sizeof maps / sizeof maps[0]; i++) {
        db_status st = db_binarize(ctx, "sauvola", "window=25", maps[i], loaded, &big);
        CHECK(st == DB_OK && test_diff(big.data, expect, (size_t)BW * BH) == 0, "staged page, map %s: %s, %zu "
              "pixels differ", maps[i], db_error_message(), test_diff(big.data, expect, (size_t)BW * BH));
    }
    if (loaded) {
        db_image io = *loaded;
        db_status st = db_binarize(ctx, "sauvola", "window=25", "gpu", loaded, &io);
        CHECK(st == DB_OK && test_diff(io.data, expect, (size_t)BW * BH) == 0, "staged page in place: %s",
              db_error_message());
    }
    db_image_free(loaded);
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(expect);
    free(big.data);
}

static void check_times(db_context *ctx)
{
    page p = make_page(3, 5);
    db_image out = make_out();
    db_method *m = NULL;
    db_times t;
    db_status st = db_method_new("howe", "c=90", &m);
    if (st == DB_OK)
        st = db_method_run(ctx, m, "cpu,gpu,cpu", &p.img, &out, &t);
    CHECK(st == DB_OK, "howe with times: %s", db_error_message());
    if (st == DB_OK) {
        CHECK(!strcmp(t.map, "cpu,gpu,cpu") && !strcmp(t.chosen_by, "given"), "times: map %s chosen by %s", t.map,
              t.chosen_by);
        CHECK(t.n_stages == 3 && !strcmp(t.stages[0].stage, "laplacian") && t.stages[1].role == DB_ROLE_GPU &&
                  t.stages[2].role == DB_ROLE_CPU && !strcmp(t.stages[2].stage, "graphcut"),
              "times: %d stages, %s %s", t.n_stages, t.stages[0].stage, t.stages[2].stage);
        CHECK(t.wall_ms > 0 && t.stages[1].ms > 0, "times: wall %.3f ms, canny %.3f ms", t.wall_ms, t.stages[1].ms);
    }
    /* auto without wisdom is the estimate: every stage on gpu, where the tests bind one */
    if (st == DB_OK)
        st = db_method_run(ctx, m, NULL, &p.img, &out, &t);
    CHECK(st == DB_OK && !strcmp(t.chosen_by, "estimate") && !strcmp(t.map, "gpu,gpu,gpu"),
          "auto: %s, map %s chosen by %s", db_error_message(), st == DB_OK ? t.map : "-",
          st == DB_OK ? t.chosen_by : "-");
    db_method_free(m);
    free(out.data);
    free(p.img.data);
    free(p.packed);
}

/* A refused setting leaves the method as it was. */
static void check_settings(db_context *ctx)
{
    static const struct {
        const char *settings, *needle;
    } bad[] = {
        {"window", "NAME=VALUE"},     {"=3", "NAME=VALUE"},    {"window=4", "odd"},
        {"window=1", "range"},        {"k=abc", "number"},     {"foo=1", "no setting"},
        {"variant=fast", "variants"}, {"gray=luma", "bt601"},  {"window=21 k=99", "range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        db_method *m = (db_method *)&m; /* not NULL: the call must clear it */
        db_status st = db_method_new("sauvola", bad[i].settings, &m);
        CHECK(st == DB_ERR_USAGE && !m && strstr(db_error_message(), bad[i].needle),
              "settings \"%s\": status %d, \"%s\"", bad[i].settings, st, db_error_message());
    }
    char longword[400];
    memset(longword, 'w', sizeof longword - 1);
    longword[sizeof longword - 1] = '\0';
    db_method *m = NULL;
    CHECK(db_method_new("sauvola", longword, &m) == DB_ERR_USAGE, "a 399-character setting");
    CHECK(db_method_new("nope", NULL, &m) == DB_ERR_USAGE && strstr(db_error_message(), "sauvola"),
          "unknown algorithm: %s", db_error_message());
    CHECK(db_method_new(NULL, NULL, &m) == DB_ERR_USAGE, "NULL algorithm");
    CHECK(db_method_new("otsu", NULL, NULL) == DB_ERR_USAGE, "NULL result pointer");

    CHECK(db_method_new("sauvola", "window=21", &m) == DB_OK, "%s", db_error_message());
    CHECK(db_method_set(m, "window", "4") == DB_ERR_USAGE, "window=4 accepted");
    CHECK(db_method_set(m, "window", NULL) == DB_ERR_USAGE, "NULL value accepted");
    CHECK(db_method_set(m, "relabel", "fifo") == DB_ERR_USAGE, "howe's parameter accepted by sauvola");
    page p = make_page(3, 9);
    db_image out = make_out();
    uint8_t *expect = malloc((size_t)W * H);
    reference(&p, REF_SAUVOLA, 21, 0.2, REF_GRAY_BT601, expect);
    db_status st = db_method_run(ctx, m, NULL, &p.img, &out, NULL);
    size_t padding, d = st == DB_OK ? diff_out(&out, expect, &padding) : 1;
    CHECK(d == 0, "after refused settings: %s, %zu pixels differ", db_error_message(), d);
    db_method_free(m);
    free(expect);
    free(out.data);
    free(p.img.data);
    free(p.packed);
}

/* Images and pointers a caller may get wrong. */
static void check_misuse(db_context *ctx)
{
    page p = make_page(3, 2);
    db_image out = make_out();
    db_method *m = NULL;
    CHECK(db_method_new("otsu", NULL, &m) == DB_OK, "%s", db_error_message());
    struct {
        const char *what;
        db_image in, out;
        const char *map;
        db_status status;
    } bad[] = {
        {"4 channels", {W, H, 4, (size_t)W * 4, p.img.data, 0, 0}, out, NULL, DB_ERR_FORMAT},
        {"0 columns", {0, H, 3, (size_t)W * 3, p.img.data, 0, 0}, out, NULL, DB_ERR_FORMAT},
        {"negative rows", {W, -1, 3, (size_t)W * 3, p.img.data, 0, 0}, out, NULL, DB_ERR_FORMAT},
        {"no pixels", {W, H, 3, (size_t)W * 3, NULL, 0, 0}, out, NULL, DB_ERR_USAGE},
        {"a short stride", {W, H, 3, (size_t)W * 3 - 1, p.img.data, 0, 0}, out, NULL, DB_ERR_FORMAT},
        {"an output of another size", p.img, {W - 1, H, 1, W, out.data, 0, 0}, NULL, DB_ERR_USAGE},
        {"an RGB output", p.img, {W, H, 3, (size_t)W * 3, out.data, 0, 0}, NULL, DB_ERR_USAGE},
        {"an output's short stride", p.img, {W, H, 1, W - 1, out.data, 0, 0}, NULL, DB_ERR_FORMAT},
        {"an output without pixels", p.img, {W, H, 1, W, NULL, 0, 0}, NULL, DB_ERR_USAGE},
        {"a map of 2 stages", p.img, out, "gpu,cpu", DB_ERR_USAGE},
        {"an unknown map word", p.img, out, "fastest", DB_ERR_USAGE},
        {"an unknown stage", p.img, out, "stats=cpu", DB_ERR_USAGE},
        {"a too large page", {DB_IMAGE_MAX_SIDE + 1, 1, 1, DB_IMAGE_MAX_SIDE + 1, p.img.data, 0, 0}, out, NULL,
         DB_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        db_status st = db_method_run(ctx, m, bad[i].map, &bad[i].in, &bad[i].out, NULL);
        CHECK(st != DB_OK && (bad[i].status == st || (bad[i].status == DB_ERR_FORMAT && st == DB_ERR_NOMEM)) &&
                  db_error_message()[0],
              "%s: status %d, expected %d: %s", bad[i].what, st, bad[i].status, db_error_message());
        printf("refused %-28s %d: %s\n", bad[i].what, st, db_error_message());
    }
    CHECK(db_method_run(NULL, m, NULL, &p.img, &out, NULL) == DB_ERR_USAGE, "NULL context");
    CHECK(db_method_run(ctx, NULL, NULL, &p.img, &out, NULL) == DB_ERR_USAGE, "NULL method");
    CHECK(db_method_run(ctx, m, NULL, NULL, &out, NULL) == DB_ERR_USAGE, "NULL input");
    CHECK(db_method_run(ctx, m, NULL, &p.img, NULL, NULL) == DB_ERR_USAGE, "NULL output");
    CHECK(db_binarize(ctx, "nope", NULL, NULL, &p.img, &out) == DB_ERR_USAGE, "db_binarize: unknown algorithm");
    const char *inputs[] = {"x.png"};
    CHECK(db_method_run_files(ctx, m, NULL, inputs, 0, "out", NULL, NULL) == DB_ERR_USAGE, "a batch of nothing");
    CHECK(db_method_run_files(ctx, m, NULL, inputs, 1, "out", "tiff", NULL) == DB_ERR_USAGE, "format tiff");
    CHECK(db_image_save(&p.img, "x.png", 3) == DB_ERR_USAGE, "3 bits");
    CHECK(db_image_save(&p.img, "x.png", 1) == DB_ERR_USAGE, "an RGB image in 1 bit");
    db_image *none = NULL;
    CHECK(db_image_load("/nonexistent/page.png", &none) == DB_ERR_IO && !none && strstr(db_error_message(),
          "/nonexistent/page.png"), "loading a missing file: %s", db_error_message());
    db_method_free(m);
    free(out.data);
    free(p.img.data);
    free(p.packed);
}

static void check_descriptions(db_context *ctx)
{
    static const char *const names[] = {"otsu", "niblack", "sauvola", "nick", "wolf", "hbk", "howe", "howe-auto",
                                        "howe-predict", "dbs"};
    CHECK(db_algo_count() == (int)(sizeof names / sizeof names[0]), "%d algorithms", db_algo_count());
    for (int i = 0; i < db_algo_count() && i < (int)(sizeof names / sizeof names[0]); i++)
        CHECK(db_algo_describe(i) && !strcmp(db_algo_describe(i)->name, names[i]), "algorithm %d is %s, not %s", i,
              db_algo_describe(i) ? db_algo_describe(i)->name : "(none)", names[i]);
    CHECK(!db_algo_describe(-1) && !db_algo_describe(db_algo_count()), "describe out of range");
    for (int i = 0; i < db_algo_count(); i++) {
        const db_algo_desc *a = db_algo_describe(i);
        CHECK(a && a->name && a->doc && a->n_stages > 0, "algorithm %d", i);
        for (int s = 0; a && s < a->n_stages; s++)
            CHECK(a->stages[s] && (!strcmp(a->stage_roles[s], "cpu,gpu") || !strcmp(a->stage_roles[s], "cpu") ||
                                   !strcmp(a->stage_roles[s], "gpu")), "%s stage %d", a->name, s);
        /* every default, given back as text, is accepted as a setting */
        db_method *m = NULL;
        CHECK(a && db_method_new(a->name, NULL, &m) == DB_OK, "%s: %s", a ? a->name : "?", db_error_message());
        for (int k = 0; a && m && k < a->n_params; k++)
            CHECK(db_method_set(m, a->params[k].name, a->params[k].def) == DB_OK, "%s %s=%s: %s", a->name,
                  a->params[k].name, a->params[k].def, db_error_message());
        db_method_free(m);
    }
    const db_algo_desc *s = db_algo_describe(2), *hbk = db_algo_describe(5), *howe = db_algo_describe(6);
    CHECK(!strcmp(s->name, "sauvola") && s->n_params == 2 && !strcmp(s->params[0].def, "75") &&
              s->params[0].kind == DB_VALUE_ODD_INT && !strcmp(s->params[1].def, "0.2") && s->n_variants == 4,
          "sauvola's description");
    CHECK(!strcmp(hbk->params[0].name, "block") && !strcmp(hbk->params[0].choices, "8 16 32"), "hbk's block: %s",
          hbk->params[0].choices ? hbk->params[0].choices : "(none)");
    const db_param_desc *relabel = &howe->params[howe->n_params - 1];
    CHECK(relabel->kind == DB_VALUE_WORD && !strcmp(relabel->def, "exponential") &&
              strstr(relabel->choices, "exponential"), "howe's relabel: %s", relabel->def);

    CHECK(db_device_count(ctx) > 0 && db_device_count(NULL) == 0, "device count");
    unsigned roles = 0;
    for (int i = 0; i < db_device_count(ctx); i++) {
        db_device_desc d;
        CHECK(db_device_describe(ctx, i, &d) == DB_OK && d.name && d.platform && d.type && d.compute_units > 0,
              "device %d", i);
        roles |= d.roles;
    }
    CHECK(roles == 3u, "the bound roles are not both on the listed devices: %u", roles);
    db_device_desc d;
    CHECK(db_device_describe(ctx, db_device_count(ctx), &d) == DB_ERR_USAGE, "device out of range");
    CHECK(strlen(db_version()) >= 5 && strchr(db_version(), '.'), "version %s", db_version());
}

static void check_evaluate(void)
{
    uint8_t gt[W * H], bin[W * H];
    uint32_t seed = 11;
    int64_t tp = 0, fp = 0, fn = 0;
    for (int i = 0; i < W * H; i++) {
        gt[i] = test_random(&seed) % 3 ? 255 : 0;
        bin[i] = test_random(&seed) % 4 ? gt[i] : (uint8_t)(255 - gt[i]);
        tp += !gt[i] && !bin[i];
        fp += gt[i] && !bin[i];
        fn += !gt[i] && bin[i];
    }
    db_image g = {.width = W, .height = H, .channels = 1, .stride = W, .data = gt};
    db_image b = {.width = W, .height = H, .channels = 1, .stride = W, .data = bin};
    db_metrics m;
    db_status st = db_evaluate(&g, &b, 1, &m);
    CHECK(st == DB_OK && m.counts.tp == tp && m.counts.fp == fp && m.counts.fn == fn &&
              m.counts.tn == W * H - tp - fp - fn && m.has_pseudo,
          "evaluate: %s; tp %lld (%lld) fp %lld (%lld)", db_error_message(), (long long)m.counts.tp, (long long)tp,
          (long long)m.counts.fp, (long long)fp);
    double p = 100.0 * tp / (tp + fp), r = 100.0 * tp / (tp + fn);
    CHECK(st == DB_OK && fabs(m.fmeasure - 2 * p * r / (p + r)) < 1e-9, "F %.6f, expected %.6f", m.fmeasure,
          2 * p * r / (p + r));
    CHECK(db_evaluate(&g, &b, 0, &m) == DB_OK && !m.has_pseudo && isnan(m.pseudo_fmeasure), "evaluate, no pseudo");
    db_image small = {.width = W - 1, .height = H, .channels = 1, .stride = W, .data = bin};
    CHECK(db_evaluate(&g, &small, 1, &m) == DB_ERR_FORMAT, "evaluate: sizes differ");
    bin[5] = 7;
    CHECK(db_evaluate(&g, &b, 1, &m) == DB_ERR_FORMAT && strstr(db_error_message(), "result"),
          "evaluate: a pixel of 7: %s", db_error_message());
    CHECK(db_evaluate(&g, &b, 1, NULL) == DB_ERR_USAGE, "evaluate: NULL metrics");
}

/* Four threads share one context, each running every case in its own order. */
typedef struct worker {
    db_context *ctx;
    int id, failures;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    enum { N = sizeof cases / sizeof cases[0] };
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < (int)N; i++) {
            const api_case *k = &cases[(i + w->id * 2 + rep) % N];
            page p = make_page(3, 100 + (uint32_t)w->id);
            db_image out = make_out();
            uint8_t *expect = malloc((size_t)W * H);
            reference(&p, k->method, k->window, k->k, k->rule, expect);
            size_t padding = 0;
            if (db_binarize(w->ctx, k->algo, k->settings, k->map, &p.img, &out) != DB_OK ||
                diff_out(&out, expect, &padding) || padding) {
                fprintf(stderr, "thread %d: %s map %s: %s\n", w->id, k->algo, k->map, db_error_message());
                w->failures++;
            }
            free(expect);
            free(out.data);
            free(p.img.data);
            free(p.packed);
        }
    return NULL;
}

static void check_threads(db_context *ctx)
{
    worker w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.ctx = ctx, .id = i};
        CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(w[i].failures == 0, "thread %d: %d failed runs", i, w[i].failures);
    }
}

int main(void)
{
    setenv("DOCBIN_WISDOM", "/nonexistent/docbin-test-wisdom", 1); /* auto is the estimate */
    db_context *ctx = test_open_context();
    check_runs(ctx);
    check_in_place(ctx);
    check_staged(ctx);
    check_times(ctx);
    check_settings(ctx);
    check_misuse(ctx);
    check_descriptions(ctx);
    check_evaluate();
    check_threads(ctx);
    db_context_close(ctx);
    return test_result("api");
}
