/*
** test_dbs.c — clipping-free DBS halftoning.
**
** - The fixed-point model against the table of docs/dbs.md §2 and
**   against the plain-C reference (tests/reference_dbs.c) for other sigmas.
** - The O(1) delta of the library's search against a brute-force recomputation
**   of the whole error after every accepted change, on small random images;
**   the error never grows.
** - Every map (and both search orders) gives exactly the reference's halftone
**   and counts, on noise, ramps, photo-like and degenerate images, gray and RGB,
**   with the default eye and wide ones.
** - Clipping-free: on the 2048x512 ramp every level 1..254 gets minority dots
**   and levels 0 and 255 stay solid.
** - The cap path and the raster search mapped to the gpu role.
*/
#include <math.h>
#include <string.h>
#include "algorithms/dbs.h"
#include "tests/reference_dbs.h"
#include "tests/testutil.h"

static uint32_t rng = 4242;

static uint32_t next_random(void)
{
    return test_random(&rng);
}

/* --- the model --- */

static void check_model(void)
{
    db_dbs_model m;
    db_dbs_model_make(1.2, &m);
    /* docs/dbs.md §2, by (|dy|, |dx|). */
    static const int32_t published[5][5] = {{115920, 81915, 28905, 5093, 448},
                                            {81915, 57885, 20426, 3599, 317},
                                            {28905, 20426, 7207, 1270, 112},
                                            {5093, 3599, 1270, 224, 20},
                                            {448, 317, 112, 20, 2}};
    for (int dy = -4; dy <= 4; dy++)
        for (int dx = -4; dx <= 4; dx++)
            CHECK(m.v[(dy + 4) * 9 + dx + 4] == published[abs(dy)][abs(dx)], "V(%d,%d) = %d", dy, dx,
                  m.v[(dy + 4) * 9 + dx + 4]);
    CHECK(m.sv == 1048588, "S_V = %lld", (long long)m.sv);
    CHECK(m.cvv[8 * 17 + 8] == 60790130708LL, "CVV(0,0) = %lld", (long long)m.cvv[8 * 17 + 8]);
    CHECK(m.cvv[8 * 17 + 9] == 51101472932LL, "CVV(0,1) = %lld", (long long)m.cvv[8 * 17 + 9]);
    CHECK(m.cvv[9 * 17 + 9] == 42956976184LL, "CVV(1,1) = %lld", (long long)m.cvv[9 * 17 + 9]);
    CHECK(m.cvv[16 * 17 + 16] == 4 && m.cvv[0] == 4, "CVV(8,8) = %lld", (long long)m.cvv[16 * 17 + 16]);
    /* The computed path (any sigma but the default) against the reference. */
    static const double sigmas[] = {0.5, 0.9, 1.2, 1.3, 2.0, 3.0};
    for (size_t i = 0; i < sizeof sigmas / sizeof sigmas[0]; i++) {
        int32_t v[81];
        int64_t sv, cvv[289];
        ref_dbs_model(sigmas[i], v, &sv, cvv);
        db_dbs_model_make(sigmas[i], &m);
        CHECK(!memcmp(v, m.v, sizeof v) && sv == m.sv && !memcmp(cvv, m.cvv, sizeof cvv),
              "the model for sigma %g differs from the reference", sigmas[i]);
    }
}

/* --- the delta against brute force --- */

/* E = sum over the plane of (S_V A - 255 V*b)^2: the error in the fixed-point
** scale, straight from its definition. */
static __int128 brute_energy(const db_dbs_model *m, const uint8_t *gray, const uint8_t *state, int w, int h)
{
    __int128 sum = 0;
    for (int y = -4; y < h + 4; y++)
        for (int x = -4; x < w + 4; x++) {
            int64_t vb = 0;
            for (int dy = -4; dy <= 4; dy++)
                for (int dx = -4; dx <= 4; dx++) {
                    int yy = y - dy, xx = x - dx;
                    if (yy >= 0 && yy < h && xx >= 0 && xx < w && (state[yy * w + xx] & DB_DBS_WHITE))
                        vb += m->v[(dy + 4) * 9 + dx + 4];
                }
            int64_t a = y >= 0 && y < h && x >= 0 && x < w ? gray[y * w + x] : 0;
            int64_t e = m->sv * a - 255 * vb;
            sum += (__int128)e * e;
        }
    return sum;
}

static void check_delta(int w, int h, double sigma)
{
    db_dbs_model m;
    db_dbs_model_make(sigma, &m);
    size_t n = (size_t)w * h;
    uint8_t *gray = malloc(n), *state = malloc(n), *b0 = malloc(n);
    int64_t *c = malloc(n * sizeof *c), *fresh = malloc(n * sizeof *fresh);
    for (size_t i = 0; i < n; i++) {
        gray[i] = (uint8_t)(next_random() % 256);
        state[i] = (uint8_t)(next_random() % 2);
        if (next_random() % 7 == 0)
            state[i] |= DB_DBS_FROZEN;
        b0[i] = state[i];
    }
    CHECK(db_dbs_error_init(&m, gray, state, w, h, c) == DB_OK, "error init");
    db_dbs_search s = {.width = w, .height = h, .state = state, .c = c, .model = &m};
    __int128 e = brute_energy(&m, gray, state, w, h), e_start = e;
    int changes = 0, bad = 0;
    for (int pass = 0; pass < 20; pass++) {
        int any = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int qx = -1, qy = -1;
                uint8_t before_p = state[y * w + x];
                db_dbs_change ch = db_dbs_visit(&s, x, y, &qx, &qy);
                if (ch == DB_DBS_NONE) {
                    bad += state[y * w + x] != before_p;
                    continue;
                }
                any = 1;
                changes++;
                __int128 e2 = brute_energy(&m, gray, state, w, h);
                bad += !(e2 < e); /* only strict improvements are taken */
                if (db_dbs_error_init(&m, gray, state, w, h, fresh) == DB_OK)
                    bad += memcmp(fresh, c, n * sizeof *c) != 0;
                if (ch == DB_DBS_SWAP)
                    bad += (abs(qx - x) > 1 || abs(qy - y) > 1 || (qx == x && qy == y) ||
                            (state[qy * w + qx] & DB_DBS_FROZEN));
                e = e2;
            }
        if (!any)
            break;
    }
    for (size_t i = 0; i < n; i++)
        bad += (state[i] & DB_DBS_FROZEN) && state[i] != b0[i];
    CHECK(bad == 0, "%dx%d sigma %g: %d inconsistent steps out of %d changes", w, h, sigma, bad, changes);
    CHECK(e <= e_start, "%dx%d: the error grew", w, h);
    free(gray);
    free(state);
    free(b0);
    free(c);
    free(fresh);
}

/* The exact delta identity of docs/dbs.md §2: E_new - E_old = 255 * delta, with
** delta from the formulas on C before the change. */
static void check_delta_value(int w, int h)
{
    db_dbs_model m;
    db_dbs_model_make(1.2, &m);
    size_t n = (size_t)w * h;
    uint8_t *gray = malloc(n), *state = malloc(n);
    int64_t *c = malloc(n * sizeof *c), *before_c = malloc(n * sizeof *c);
    for (size_t i = 0; i < n; i++) {
        gray[i] = (uint8_t)(next_random() % 256);
        state[i] = (uint8_t)(next_random() % 2);
    }
    db_dbs_error_init(&m, gray, state, w, h, c);
    db_dbs_search s = {.width = w, .height = h, .state = state, .c = c, .model = &m};
    int bad = 0, toggles = 0, swaps = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                __int128 before = brute_energy(&m, gray, state, w, h);
                memcpy(before_c, c, n * sizeof *c);
                int64_t a0 = (state[y * w + x] & DB_DBS_WHITE) ? -1 : 1;
                int qx = 0, qy = 0;
                db_dbs_change ch = db_dbs_visit(&s, x, y, &qx, &qy);
                if (ch == DB_DBS_NONE)
                    continue;
                __int128 after = brute_energy(&m, gray, state, w, h);
                int64_t c0 = m.cvv[8 * 17 + 8], delta;
                if (ch == DB_DBS_TOGGLE) {
                    toggles++;
                    delta = 255 * c0 - 2 * a0 * before_c[y * w + x];
                } else {
                    swaps++;
                    int64_t cq = m.cvv[(qy - y + 8) * 17 + qx - x + 8];
                    delta = 255 * (2 * c0 - 2 * cq) - 2 * (a0 * before_c[y * w + x] - a0 * before_c[qy * w + qx]);
                }
                bad += after - before != (__int128)255 * delta || delta >= 0;
            }
    CHECK(bad == 0, "%dx%d: %d of %d changes disagree with the brute-force error", w, h, bad, toggles + swaps);
    CHECK(toggles > 0 && swaps > 0, "%dx%d: %d toggles and %d swaps; the test needs both", w, h, toggles, swaps);
    free(gray);
    free(state);
    free(c);
    free(before_c);
}

/* --- images --- */

typedef enum pattern { NOISE, RAMP, PHOTO, WHITE, BLACK, FLAT, N_PATTERNS } pattern;
static const char *const pattern_names[N_PATTERNS] = {"noise", "ramp", "photo", "white", "black", "flat"};

static db_image *make_image(int w, int h, int channels, pattern p)
{
    db_image *img = db_image_new(w, h, channels);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < channels; ch++) {
                int v;
                switch (p) {
                case NOISE: v = (int)(next_random() % 256); break;
                case RAMP: v = w > 1 ? x * 255 / (w - 1) : 128; break;
                case PHOTO: {
                    double r = hypot(x - w * 0.4, y - h * 0.6) / (w + h + 1);
                    v = (int)(127.5 + 120 * cos(9 * r) * (y < h / 2 ? 1 : -0.5)) + ch * 7;
                    v = v < 0 ? 0 : v > 255 ? 255 : v;
                    break;
                }
                case WHITE: v = 255; break;
                case BLACK: v = 0; break;
                default: v = 3; break;
                }
                img->data[(size_t)y * img->stride + (size_t)x * channels + ch] = (uint8_t)v;
            }
    return img;
}

/* The gray the library uses for an RGB pixel (BT.601 rule, runtime/image.h). */
static uint8_t gray_of(const db_image *img, int x, int y)
{
    const uint8_t *p = img->data + (size_t)y * img->stride + (size_t)x * img->channels;
    if (img->channels == 1)
        return p[0];
    return (uint8_t)((299 * p[0] + 587 * p[1] + 114 * p[2] + 500) / 1000);
}

typedef struct options {
    int d, block, max_rounds, raster;
    double sigma;
    uint32_t seed;
} options;

static const options defaults = {9, 32, 100, 0, 1.2, 1};

static void set(const db_algo *algo, db_job *job, const options *o)
{
    char v[32];
    db_job_defaults(algo, job);
    snprintf(v, sizeof v, "%d", o->d);
    CHECK(db_job_set(algo, job, "D", v) == DB_OK, "D");
    snprintf(v, sizeof v, "%d", o->block);
    CHECK(db_job_set(algo, job, "block", v) == DB_OK, "block");
    snprintf(v, sizeof v, "%d", o->max_rounds);
    CHECK(db_job_set(algo, job, "max-rounds", v) == DB_OK, "max-rounds");
    snprintf(v, sizeof v, "%.17g", o->sigma);
    CHECK(db_job_set(algo, job, "sigma", v) == DB_OK, "sigma");
    snprintf(v, sizeof v, "%u", o->seed);
    CHECK(db_job_set(algo, job, "seed", v) == DB_OK, "seed");
    CHECK(db_job_set(algo, job, "order", o->raster ? "raster" : "blocks") == DB_OK, "order");
}

/* Every map whose search can take the order: all 8 for blocks, the 4 with the
** search on the cpu role for raster. Each must equal the reference. */
static void check_maps(db_context *ctx, const db_algo *algo, const db_image *img, const options *o, const char *what)
{
    int w = img->width, h = img->height;
    size_t n = (size_t)w * h;
    uint8_t *gray = malloc(n), *expect = malloc(n);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            gray[(size_t)y * w + x] = gray_of(img, x, y);
    const uint8_t *t = db_dbs_tarray_get(DB_DBS_TARRAY_SIDE, o->d > 1 ? o->d - 1 : 0, o->seed);
    CHECK(t != NULL, "threshold array");
    ref_dbs_stats ref;
    CHECK(ref_dbs_halftone(gray, w, h, t, DB_DBS_TARRAY_SIDE, o->d, o->seed, o->sigma, o->raster ? 0 : o->block,
                           o->max_rounds, expect, &ref) == 0, "%s: the reference failed", what);
    db_job job;
    set(algo, &job, o);
    for (int i = 0; i < db_map_count(algo); i++) {
        db_map map;
        db_map_nth(algo, i, &map);
        if (o->raster && map.role[2] != DB_ROLE_CPU)
            continue;
        char ms[32];
        db_map_format(&map, ms, sizeof ms);
        db_image *out = NULL;
        db_report report = {0};
        db_status st = db_run(ctx, algo, &map, &job, img, &out, &report, NULL);
        CHECK(st == DB_OK, "%s map %s: %s", what, ms, db_error_message());
        if (st != DB_OK)
            continue;
        size_t d = test_diff(out->data, expect, n);
        CHECK(d == 0, "%s (%dx%d, %s, block %d) map %s: %zu pixels differ from the reference", what, w, h,
              o->raster ? "raster" : "blocks", o->block, ms, d);
        CHECK(report.n == 4 && report.values[0] == ref.rounds && report.values[1] == ref.converged &&
                  report.values[2] == ref.toggles && report.values[3] == ref.swaps,
              "%s map %s: rounds %lld converged %lld toggles %lld swaps %lld, the reference %d %d %lld %lld", what,
              ms, (long long)report.values[0], (long long)report.values[1], (long long)report.values[2],
              (long long)report.values[3], ref.rounds, ref.converged, (long long)ref.toggles,
              (long long)ref.swaps);
        db_image_free(out);
    }
    free(gray);
    free(expect);
}

/* --- clipping-free --- */

/* The ramp of the issue: gray = column / 8, so each band of 8 columns is one
** level (4096 pixels). Minority dots: white in levels below 128, black above. */
static void check_ramp(db_context *ctx, const db_algo *algo, int d)
{
    const int w = 2048, h = 512;
    db_image *img = db_image_new(w, h, 1);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            img->data[(size_t)y * img->stride + x] = (uint8_t)(x / 8);
    db_job job;
    options o = defaults;
    o.d = d;
    set(algo, &job, &o);
    db_map map;
    CHECK(db_map_parse(algo, "gpu", &map) == DB_OK, "map");
    db_image *out = NULL;
    db_report report = {0};
    CHECK(db_run(ctx, algo, &map, &job, img, &out, &report, NULL) == DB_OK, "ramp: %s", db_error_message());
    if (out) {
        int missing = 0;
        for (int level = 0; level < 256; level++) {
            long white = 0;
            for (int y = 0; y < h; y++)
                for (int x = level * 8; x < level * 8 + 8; x++)
                    white += out->data[(size_t)y * out->stride + x] == 255;
            long minority = level < 128 ? white : 8L * h - white;
            if (level == 0 || level == 255)
                CHECK(minority == 0, "level %d is not solid: %ld minority dots", level, minority);
            else if (minority == 0)
                missing++;
        }
        /* Plain DBS (D = 0) clips the extreme levels: the check can fail. */
        if (d)
            CHECK(missing == 0, "D %d: %d levels of 1..254 have no minority dot (clipping)", d, missing);
        else
            CHECK(missing > 0, "plain DBS shows no clipping on the ramp; the clipping check cannot fail");
        /* Tone, per 16 levels (128 columns): bands of 8 columns are narrower than
        ** the 9x9 eye, so neighbouring bands trade dots at their edges (the block
        ** and raster searches alike); over 16 levels the mean must stay within
        ** one gray level of the levels' mean. (Plain DBS misses it at both ends.) */
        for (int first = 0; first < 256; first += 16) {
            long white = 0;
            for (int y = 0; y < h; y++)
                for (int x = first * 8; x < first * 8 + 128; x++)
                    white += out->data[(size_t)y * out->stride + x] == 255;
            double mean = 255.0 * white / (128.0 * h);
            CHECK(!d || fabs(mean - (first + 7.5)) <= 1.0, "levels %d..%d: mean tone %.2f", first, first + 15, mean);
        }
        CHECK(report.values[1] == 1, "the ramp search did not converge in %lld rounds", (long long)report.values[0]);
        printf("ramp 2048x512, D %d: %lld rounds, %d levels without minority dots\n", d,
               (long long)report.values[0], missing);
        db_image_free(out);
    }
    db_image_free(img);
}

int main(void)
{
    check_model();
    check_delta(7, 5, 1.2);
    check_delta(13, 11, 1.2);
    check_delta(1, 9, 1.2);
    check_delta(9, 1, 1.3);
    check_delta(1, 1, 1.2);
    check_delta(20, 17, 0.8);
    check_delta_value(12, 10);

    db_context *ctx = test_open_context();
    const db_algo *algo = db_algo_find("dbs");
    static const struct { int w, h; } sizes[] = {{1, 1}, {1, 40}, {40, 1}, {37, 23}, {70, 41}, {100, 130}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int p = 0; p < N_PATTERNS; p++) {
            db_image *img = make_image(sizes[s].w, sizes[s].h, 1, (pattern)p);
            check_maps(ctx, algo, img, &defaults, pattern_names[p]);
            db_image_free(img);
        }
    /* A wide eye (sigma 2.2 and 3), where a change moves C enough at its
    ** edge that the pixels beside that edge must be visited again. */
    for (int seed = 1; seed <= 3; seed++) {
        options wide = defaults;
        wide.sigma = seed == 2 ? 2.2 : 3.0;
        wide.seed = (uint32_t)seed;
        wide.d = 0;
        db_image *img = make_image(96 + seed * 8, 80, 1, seed == 3 ? PHOTO : NOISE);
        check_maps(ctx, algo, img, &wide, "wide eye");
        db_image_free(img);
    }
    /* A larger page, where skipped visits meet many changes of earlier rounds. */
    db_image *large = make_image(512, 384, 1, PHOTO);
    check_maps(ctx, algo, large, &defaults, "photo 512x384");
    db_image_free(large);
    /* Colour input, other parameters, the raster order, the cap. */
    db_image *photo = make_image(90, 70, 3, PHOTO);
    check_maps(ctx, algo, photo, &defaults, "photo/rgb");
    options o = defaults;
    o.block = 20;
    check_maps(ctx, algo, photo, &o, "block 20");
    o = defaults;
    o.block = 48;
    o.d = 30;
    o.seed = 77;
    o.sigma = 1.6;
    check_maps(ctx, algo, photo, &o, "D 30, seed 77, sigma 1.6");
    o = defaults;
    o.d = 0;
    check_maps(ctx, algo, photo, &o, "plain DBS (D 0)");
    o = defaults;
    o.raster = 1;
    check_maps(ctx, algo, photo, &o, "raster");
    o = defaults;
    o.max_rounds = 1;
    check_maps(ctx, algo, photo, &o, "capped at one round");
    o.raster = 1;
    check_maps(ctx, algo, photo, &o, "raster capped at one pass");

    /* The raster search is host code: mapped to the gpu role it is a clear error. */
    db_job job;
    o = defaults;
    o.raster = 1;
    set(algo, &job, &o);
    db_map map;
    db_map_parse(algo, "gpu", &map);
    db_image *out = NULL;
    db_status st = db_run(ctx, algo, &map, &job, photo, &out, NULL, NULL);
    CHECK(st != DB_OK && out == NULL && strstr(db_error_message(), "search=cpu"),
          "order=raster on the gpu role: %s", st == DB_OK ? "ran" : db_error_message());
    db_image_free(photo);

    check_ramp(ctx, algo, defaults.d);
    check_ramp(ctx, algo, 0);
    db_context_close(ctx);
    return test_result("dbs");
}
