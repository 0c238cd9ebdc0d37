/*
** test_reference_dbs.c — self-test of the plain-C DBS reference (reference_dbs.c):
** the model against the numbers of docs/dbs.md §2, every accepted change of a
** search against brute-force energies, the labels of docs/dbs.md §4 and the
** block scheme of docs/dbs.md §5.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/dbs.h"
#include "tests/reference_dbs.h"
#include "tests/testutil.h"

#define VAT(V, dy, dx) ((V)[((dy) + 4) * 9 + (dx) + 4])
#define CAT(C, dy, dx) ((C)[((dy) + 8) * 17 + (dx) + 8])

static int32_t g_v[81];
static int64_t g_sv;
static int64_t g_cvv[289];

/* A hand-made 16x16 threshold array: levels 0..8 once in every row and every
** column ((5r + 3c) mod 16 < 9), 255 elsewhere. */
enum { TM = 16 };
static uint8_t g_t[TM * TM];

static void make_tarray(void)
{
    for (int r = 0; r < TM; r++)
        for (int c = 0; c < TM; c++) {
            int l = (5 * r + 3 * c) % 16;
            g_t[r * TM + c] = (uint8_t)(l < 9 ? l : 255);
        }
}

/* (1) The model of docs/dbs.md §2 and the generator of docs/dbs.md §3. */
static void test_model(void)
{
    /* V by (|dy|, |dx|), docs/dbs.md §2. */
    static const struct { int dy, dx; int32_t v; } table[] = {
        { 0, 0, 115920 }, { 0, 1, 81915 }, { 1, 1, 57885 }, { 0, 2, 28905 }, { 1, 2, 20426 },
        { 2, 2, 7207 },   { 0, 3, 5093 },  { 1, 3, 3599 },  { 2, 3, 1270 },  { 3, 3, 224 },
        { 0, 4, 448 },    { 1, 4, 317 },   { 2, 4, 112 },   { 3, 4, 20 },    { 4, 4, 2 },
    };
    ref_dbs_model(1.2, g_v, &g_sv, g_cvv);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        for (int sy = -1; sy <= 1; sy += 2)
            for (int sx = -1; sx <= 1; sx += 2) {
                int dy = sy * table[i].dy, dx = sx * table[i].dx;
                CHECK(VAT(g_v, dy, dx) == table[i].v, "V(%d,%d) = %d, table %d", dy, dx, VAT(g_v, dy, dx),
                      table[i].v);
                CHECK(VAT(g_v, dx, dy) == table[i].v, "V(%d,%d) = %d, table %d", dx, dy, VAT(g_v, dx, dy),
                      table[i].v);
            }
    CHECK(g_sv == 1048588, "S_V = %lld, table 1048588", (long long)g_sv);
    CHECK(CAT(g_cvv, 0, 0) == 60790130708LL, "CVV(0,0) = %lld", (long long)CAT(g_cvv, 0, 0));
    CHECK(CAT(g_cvv, 0, 1) == 51101472932LL, "CVV(0,1) = %lld", (long long)CAT(g_cvv, 0, 1));
    CHECK(CAT(g_cvv, 1, 0) == 51101472932LL, "CVV(1,0) = %lld", (long long)CAT(g_cvv, 1, 0));
    CHECK(CAT(g_cvv, -1, 0) == 51101472932LL, "CVV(-1,0) = %lld", (long long)CAT(g_cvv, -1, 0));
    CHECK(CAT(g_cvv, 1, 1) == 42956976184LL, "CVV(1,1) = %lld", (long long)CAT(g_cvv, 1, 1));
    CHECK(CAT(g_cvv, 1, -1) == 42956976184LL, "CVV(1,-1) = %lld", (long long)CAT(g_cvv, 1, -1));
    CHECK(CAT(g_cvv, 8, 8) == 4 && CAT(g_cvv, -8, -8) == 4 && CAT(g_cvv, 8, -8) == 4,
          "CVV(8,8) = %lld", (long long)CAT(g_cvv, 8, 8));
    CHECK(CAT(g_cvv, 8, 0) == 448 * 448 + 2 * 317 * 317 + 2 * 112 * 112 + 2 * 20 * 20 + 2 * 2 * 2,
          "CVV(8,0) = %lld", (long long)CAT(g_cvv, 8, 0));
    /* CVV(0) = sum of V^2; sum of CVV = S_V^2; symmetric. */
    int64_t v2 = 0, csum = 0;
    for (int i = 0; i < 81; i++)
        v2 += (int64_t)g_v[i] * g_v[i];
    for (int i = 0; i < 289; i++)
        csum += g_cvv[i];
    CHECK(v2 == CAT(g_cvv, 0, 0), "CVV(0) != sum V^2");
    CHECK(csum == g_sv * g_sv, "sum CVV = %lld, S_V^2 = %lld", (long long)csum, (long long)(g_sv * g_sv));
    for (int dy = -8; dy <= 8; dy++)
        for (int dx = -8; dx <= 8; dx++)
            CHECK(CAT(g_cvv, dy, dx) == CAT(g_cvv, -dy, -dx) && CAT(g_cvv, dy, dx) == CAT(g_cvv, dx, dy),
                  "CVV not symmetric at (%d,%d)", dy, dx);

    /* Another sigma: the sum stays within rounding of 2^20. */
    int32_t v[81];
    int64_t sv, cvv[289];
    ref_dbs_model(2.0, v, &sv, cvv);
    CHECK(sv >= 1048576 - 41 && sv <= 1048576 + 41, "sigma 2: S_V = %lld", (long long)sv);
    CHECK(VAT(v, 0, 0) > VAT(v, 0, 1) && VAT(v, 0, 1) > VAT(v, 1, 1) && VAT(v, 4, 4) > 0, "sigma 2: V not a bell");

    /* The generator: values computed independently, and the library's inline copy. */
    CHECK(ref_dbs_hash(0, 1) == 0x514e28b7u, "hash(0,1) = %08x", ref_dbs_hash(0, 1));
    CHECK(ref_dbs_hash(1, 1) == 0x96a0f96bu, "hash(1,1) = %08x", ref_dbs_hash(1, 1));
    CHECK(ref_dbs_hash(12345, 7) == 0x75716ed9u, "hash(12345,7) = %08x", ref_dbs_hash(12345, 7));
    CHECK(ref_dbs_hash(0xffffffffu, 0xdeadbeefu) == 0x189d3794u, "hash(~0,deadbeef) = %08x",
          ref_dbs_hash(0xffffffffu, 0xdeadbeefu));
    for (uint32_t i = 0; i < 5000; i++)
        CHECK(ref_dbs_hash(i * 7919u, i ^ 0x55u) == db_dbs_hash(i * 7919u, i ^ 0x55u), "hash differs at %u", i);
}

/* C from the other definition: C(y) = sum over the plane of V(x - y) e(x). */
static void error_from_plane(const uint8_t *gray, const uint8_t *b, int w, int h, int64_t *C)
{
    int pw = w + 8, ph = h + 8;
    int64_t *e = malloc((size_t)pw * ph * sizeof *e);
    for (int y = -4; y < h + 4; y++)
        for (int x = -4; x < w + 4; x++) {
            int64_t A = (y >= 0 && y < h && x >= 0 && x < w) ? gray[y * w + x] : 0;
            int64_t vb = 0;
            for (int dy = -4; dy <= 4; dy++)
                for (int dx = -4; dx <= 4; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy >= 0 && yy < h && xx >= 0 && xx < w)
                        vb += (int64_t)VAT(g_v, dy, dx) * b[yy * w + xx];
                }
            e[(y + 4) * pw + x + 4] = g_sv * A - 255 * vb;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int64_t c = 0;
            for (int dy = -4; dy <= 4; dy++)
                for (int dx = -4; dx <= 4; dx++)
                    c += (int64_t)VAT(g_v, dy, dx) * e[(y + dy + 4) * pw + x + dx + 4];
            C[y * w + x] = c;
        }
    free(e);
}

static int c_matches(const uint8_t *gray, const uint8_t *b, int w, int h, const int64_t *C)
{
    int64_t *c = malloc((size_t)w * h * sizeof *c);
    ref_dbs_error(gray, b, w, h, g_v, g_sv, g_cvv, c);
    int ok = memcmp(c, C, (size_t)w * h * sizeof *c) == 0;
    free(c);
    return ok;
}

static int64_t g_brute_toggles, g_brute_swaps, g_brute_passes, g_brute_ties;

static int64_t delta_of(ref_dbs_i128 e1, ref_dbs_i128 e0, int *exact)
{
    ref_dbs_i128 d = e1 - e0;
    *exact = (d % 255) == 0;
    return (int64_t)(d / 255);
}

/* What a visit of (x, y) must do, from brute-force energies of every
** candidate: the kind, the smallest delta (*best), the partner (*qx, *qy) and
** how many candidates reach that delta (*nbest). */
static int brute_choice(const uint8_t *gray, uint8_t *b, const uint8_t *fr, int w, int h, int x, int y,
                        int64_t *best, int *qx, int *qy, int *nbest)
{
    static const int ndy[8] = { -1, -1, -1, 0, 0, 1, 1, 1 }, ndx[8] = { -1, 0, 1, -1, 1, -1, 0, 1 };
    int p = y * w + x, exact;
    *best = 0;
    *qx = x;
    *qy = y;
    *nbest = 0;
    if (fr[p])
        return REF_DBS_NONE;
    ref_dbs_i128 e0 = ref_dbs_energy(gray, b, w, h, g_v, g_sv);
    b[p] ^= 1;
    *best = delta_of(ref_dbs_energy(gray, b, w, h, g_v, g_sv), e0, &exact);
    b[p] ^= 1;
    CHECK(exact, "%dx%d (%d,%d): toggle energy not a multiple of 255", w, h, x, y);
    int want = REF_DBS_TOGGLE;
    *nbest = 1;
    for (int k = 0; k < 8; k++) {
        int sx = x + ndx[k], sy = y + ndy[k];
        if (sx < 0 || sx >= w || sy < 0 || sy >= h)
            continue;
        int q = sy * w + sx;
        if (fr[q] || b[q] == b[p])
            continue;
        b[p] ^= 1;
        b[q] ^= 1;
        int64_t d = delta_of(ref_dbs_energy(gray, b, w, h, g_v, g_sv), e0, &exact);
        b[p] ^= 1;
        b[q] ^= 1;
        CHECK(exact, "%dx%d (%d,%d): swap energy not a multiple of 255", w, h, x, y);
        if (d < *best) {
            *best = d;
            want = REF_DBS_SWAP;
            *qx = sx;
            *qy = sy;
            *nbest = 1;
        } else if (d == *best) {
            ++*nbest;
        }
    }
    return *best < 0 ? want : REF_DBS_NONE;
}

/* (2) One raster search on a random state, every visit checked against brute
** force: the candidate deltas from energies, the choice, E_new - E_old =
** 255 delta, and C against a recomputation. */
static void check_search_brute(int w, int h, uint32_t *rng)
{
    int n = w * h;
    uint8_t *gray = malloc(n), *b = malloc(n), *fr = malloc(n), *before = malloc(n);
    int64_t *C = malloc((size_t)n * sizeof *C), *C2 = malloc((size_t)n * sizeof *C2);
    for (int i = 0; i < n; i++) {
        uint32_t r = test_random(rng);
        gray[i] = (r % 8 == 0) ? 0 : (r % 8 == 1) ? 255 : (uint8_t)(test_random(rng) & 255);
        b[i] = test_random(rng) & 1;
        fr[i] = (test_random(rng) % 5) == 0;
    }
    ref_dbs_error(gray, b, w, h, g_v, g_sv, g_cvv, C);
    error_from_plane(gray, b, w, h, C2);
    CHECK(memcmp(C, C2, (size_t)n * sizeof *C) == 0, "%dx%d: the two definitions of C differ", w, h);

    ref_dbs_search s = { .w = w, .h = h, .b = b, .frozen = fr, .C = C, .CVV = g_cvv };
    int converged = 0, passes = 0;
    int64_t toggles = 0, swaps = 0;
    while (!converged && passes < 100) {
        int changes = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int p = y * w + x;
                ref_dbs_i128 e0 = ref_dbs_energy(gray, b, w, h, g_v, g_sv);
                /* The expected choice, from energies. */
                int64_t best;
                int wqx, wqy, nbest;
                int want = brute_choice(gray, b, fr, w, h, x, y, &best, &wqx, &wqy, &nbest);
                g_brute_ties += want != REF_DBS_NONE && nbest > 1;
                memcpy(before, b, n);
                int64_t delta = 0;
                int qx = -1, qy = -1;
                int got = ref_dbs_visit(&s, x, y, &delta, &qx, &qy);
                CHECK(got == want, "%dx%d (%d,%d): visit did %d, brute force %d", w, h, x, y, got, want);
                if (got == REF_DBS_NONE) {
                    CHECK(memcmp(before, b, n) == 0, "%dx%d (%d,%d): no change but b changed", w, h, x, y);
                    continue;
                }
                changes++;
                toggles += got == REF_DBS_TOGGLE;
                swaps += got == REF_DBS_SWAP;
                CHECK(delta < 0, "%dx%d (%d,%d): applied delta %lld >= 0", w, h, x, y, (long long)delta);
                if (got == want) {
                    CHECK(delta == best, "%dx%d (%d,%d): delta %lld, brute force %lld", w, h, x, y,
                          (long long)delta, (long long)best);
                    CHECK(qx == wqx && qy == wqy, "%dx%d (%d,%d): partner (%d,%d), brute force (%d,%d)", w, h,
                          x, y, qx, qy, wqx, wqy);
                }
                ref_dbs_i128 e1 = ref_dbs_energy(gray, b, w, h, g_v, g_sv);
                CHECK(e1 - e0 == (ref_dbs_i128)255 * delta, "%dx%d (%d,%d): E_new - E_old != 255 delta", w, h,
                      x, y);
                int flipped = 0;
                for (int i = 0; i < n; i++)
                    flipped += before[i] != b[i];
                CHECK(flipped == (got == REF_DBS_TOGGLE ? 1 : 2), "%dx%d: %d pixels flipped", w, h, flipped);
                CHECK(before[p] != b[p], "%dx%d: p not flipped", w, h);
                CHECK(c_matches(gray, b, w, h, C), "%dx%d (%d,%d): C differs from a recomputation", w, h, x, y);
            }
        passes++;
        converged = changes == 0;
    }
    CHECK(converged, "%dx%d: no convergence in 100 passes", w, h);
    CHECK(s.toggles == toggles && s.swaps == swaps, "%dx%d: counters %lld/%lld, seen %lld/%lld", w, h,
          (long long)s.toggles, (long long)s.swaps, (long long)toggles, (long long)swaps);
    g_brute_toggles += toggles;
    g_brute_swaps += swaps;
    g_brute_passes += passes;
    free(gray);
    free(b);
    free(fr);
    free(before);
    free(C);
    free(C2);
}

static void test_brute(void)
{
    static const int sizes[][2] = { { 7, 5 }, { 13, 11 }, { 1, 1 }, { 1, 9 }, { 9, 1 }, { 2, 2 }, { 3, 17 } };
    uint32_t rng = 12345;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int trial = 0; trial < 4; trial++)
            check_search_brute(sizes[i][0], sizes[i][1], &rng);
    printf("brute force: %lld toggles and %lld swaps (%lld ties) checked in %lld passes\n",
           (long long)g_brute_toggles, (long long)g_brute_swaps, (long long)g_brute_ties, (long long)g_brute_passes);

    /* Ties go to the earlier candidate: a white target pixel on a black
    ** background, black in the halftone, with white pixels at symmetric
    ** neighbours; the swaps with them tie, and the first in the order of
    ** docs/dbs.md §3 must win. */
    static const int rings[3][5][2] = {
        { { -1, -1 }, { -1, 1 }, { 1, -1 }, { 1, 1 }, { 9, 9 } },  /* the four corners */
        { { 0, -1 }, { 0, 1 }, { 9, 9 } },                          /* left and right */
        { { 1, 1 }, { -1, -1 }, { 9, 9 } },                         /* a diagonal */
    };
    for (int trial = 0; trial < 3; trial++) {
        enum { S = 7, SN = S * S };
        uint8_t gray[SN], b[SN], fr[SN];
        int64_t C[SN];
        memset(gray, 0, SN);
        memset(b, 0, SN);
        memset(fr, 0, SN);
        gray[3 * S + 3] = 255;
        for (int r = 0; rings[trial][r][0] != 9; r++)
            b[(3 + rings[trial][r][0]) * S + 3 + rings[trial][r][1]] = 1;
        int64_t best;
        int wqx, wqy, nbest;
        int want = brute_choice(gray, b, fr, S, S, 3, 3, &best, &wqx, &wqy, &nbest);
        ref_dbs_error(gray, b, S, S, g_v, g_sv, g_cvv, C);
        ref_dbs_search s = { .w = S, .h = S, .b = b, .frozen = fr, .C = C, .CVV = g_cvv };
        int64_t delta = 0;
        int qx = 3, qy = 3;
        int got = ref_dbs_visit(&s, 3, 3, &delta, &qx, &qy);
        printf("tie test %d: kind %d partner (%d,%d) delta %lld, %d candidates tie\n", trial, got, qx - 3, qy - 3,
               (long long)delta, nbest);
        CHECK(want == REF_DBS_SWAP && nbest >= 2, "tie test %d: no tie of swaps (%d, %d)", trial, want, nbest);
        CHECK(got == want && qx == wqx && qy == wqy && delta == best, "tie test %d: (%d,%d), brute force (%d,%d)",
              trial, qx, qy, wqx, wqy);
    }
    CHECK(g_brute_toggles > 20 && g_brute_swaps > 20, "too few changes checked");
}

/* A test image: a smooth pattern with noise, shadows and highlights included. */
static void make_image(uint8_t *gray, int w, int h, uint32_t *rng)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int v = (x * 300) / w - 20 + (y * 40) / h + (int)(test_random(rng) % 9) - 4;
            gray[y * w + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

/* Block search with the blocks of each group in reverse order (by, bx descending). */
static void blocks_reversed(ref_dbs_search *s, int k, int max_rounds, ref_dbs_stats *st)
{
    int nbx = (s->w + k - 1) / k, nby = (s->h + k - 1) / k;
    int64_t t0 = s->toggles, s0 = s->swaps;
    st->rounds = 0;
    st->converged = 0;
    while (st->rounds < max_rounds) {
        int changes = 0;
        for (int g = 0; g < 4; g++)
            for (int by = nby - 1; by >= 0; by--)
                for (int bx = nbx - 1; bx >= 0; bx--) {
                    if (by % 2 != g / 2 || bx % 2 != g % 2)
                        continue;
                    for (int y = by * k; y < (by + 1) * k && y < s->h; y++)
                        for (int x = bx * k; x < (bx + 1) * k && x < s->w; x++)
                            changes += ref_dbs_visit(s, x, y, NULL, NULL, NULL) != REF_DBS_NONE;
                }
        st->rounds++;
        if (!changes) {
            st->converged = 1;
            break;
        }
    }
    st->toggles = s->toggles - t0;
    st->swaps = s->swaps - s0;
}

static int is_local_minimum(ref_dbs_search *s)
{
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++)
            if (ref_dbs_visit(s, x, y, NULL, NULL, NULL) != REF_DBS_NONE)
                return 0;
    return 1;
}

/* (3) Raster and block searches on 70x50: the energy never rises, the result
** is a local minimum, frozen pixels keep their value, and the block result
** does not depend on the order of the blocks of a group. */
static void test_searches(void)
{
    enum { W = 70, H = 50, N = W * H };
    static uint8_t gray[N], b0[N], fr[N], b[N], b2[N], out[N];
    static int64_t C[N], C2[N];
    uint32_t rng = 777;
    make_image(gray, W, H, &rng);
    ref_dbs_init(gray, W, H, g_t, TM, 9, 1, b0, fr);
    ref_dbs_i128 e0 = ref_dbs_energy(gray, b0, W, H, g_v, g_sv);
    int nfrozen = 0;
    for (int i = 0; i < N; i++)
        nfrozen += fr[i];
    CHECK(nfrozen > 0, "no frozen pixels in the test image");

    static const int modes[] = { 0, 10, 18, 32, 70 };
    uint8_t braster[N];
    ref_dbs_stats sraster = { 0 };
    for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
        int k = modes[mi];
        memcpy(b, b0, N);
        ref_dbs_error(gray, b, W, H, g_v, g_sv, g_cvv, C);
        ref_dbs_search s = { .w = W, .h = H, .b = b, .frozen = fr, .C = C, .CVV = g_cvv };
        ref_dbs_stats st;
        if (k == 0)
            ref_dbs_raster(&s, 100, &st);
        else
            ref_dbs_blocks(&s, k, 100, &st);
        ref_dbs_i128 e1 = ref_dbs_energy(gray, b, W, H, g_v, g_sv);
        printf("k=%d: rounds %d converged %d toggles %lld swaps %lld  E %.6g -> %.6g\n", k, st.rounds,
               st.converged, (long long)st.toggles, (long long)st.swaps, (double)e0, (double)e1);
        CHECK(e1 <= e0, "k=%d: energy rose", k);
        CHECK(st.converged && st.rounds >= 2 && st.toggles + st.swaps > 0, "k=%d: stats %d %d %lld %lld", k,
              st.rounds, st.converged, (long long)st.toggles, (long long)st.swaps);
        CHECK(s.toggles == st.toggles && s.swaps == st.swaps, "k=%d: counters", k);
        CHECK(c_matches(gray, b, W, H, C), "k=%d: C differs from a recomputation", k);
        for (int i = 0; i < N; i++)
            if (fr[i])
                CHECK(b[i] == b0[i], "k=%d: frozen pixel %d changed", k, i);
        int64_t tg = s.toggles, sw = s.swaps;
        CHECK(is_local_minimum(&s), "k=%d: not a local minimum", k);
        CHECK(s.toggles == tg && s.swaps == sw, "k=%d: a converged state changed", k);

        /* The pipeline gives the same. */
        ref_dbs_stats st2;
        CHECK(ref_dbs_halftone(gray, W, H, g_t, TM, 9, 1, 1.2, k, 100, out, &st2) == 0, "k=%d: halftone failed", k);
        for (int i = 0; i < N; i++)
            CHECK(out[i] == 255 * b[i], "k=%d: halftone differs at %d", k, i);
        CHECK(st2.rounds == st.rounds && st2.converged == st.converged && st2.toggles == st.toggles &&
                  st2.swaps == st.swaps, "k=%d: halftone stats differ", k);

        if (k == 0) {
            memcpy(braster, b, N);
            sraster = st;
        } else if (k >= W) {
            /* One block: each round is one raster pass. */
            CHECK(memcmp(b, braster, N) == 0, "k=%d: one block differs from the raster search", k);
            CHECK(st.rounds == sraster.rounds && st.toggles == sraster.toggles && st.swaps == sraster.swaps,
                  "k=%d: one block: stats differ from the raster search", k);
        } else {
            /* Blocks of one group do not interact. */
            memcpy(b2, b0, N);
            ref_dbs_error(gray, b2, W, H, g_v, g_sv, g_cvv, C2);
            ref_dbs_search s2 = { .w = W, .h = H, .b = b2, .frozen = fr, .C = C2, .CVV = g_cvv };
            ref_dbs_stats st3;
            blocks_reversed(&s2, k, 100, &st3);
            CHECK(memcmp(b, b2, N) == 0, "k=%d: the order of the blocks of a group matters", k);
            CHECK(memcmp(C, C2, sizeof C) == 0, "k=%d: C depends on the order of the blocks", k);
            CHECK(st3.rounds == st.rounds && st3.toggles == st.toggles && st3.swaps == st.swaps,
                  "k=%d: stats depend on the order of the blocks", k);
        }
    }

    /* The caps: one pass / one round, not converged. */
    ref_dbs_stats st;
    CHECK(ref_dbs_halftone(gray, W, H, g_t, TM, 9, 1, 1.2, 0, 1, out, &st) == 0 && st.rounds == 1 && !st.converged,
          "raster cap: %d %d", st.rounds, st.converged);
    CHECK(ref_dbs_halftone(gray, W, H, g_t, TM, 9, 1, 1.2, 32, 1, out, &st) == 0 && st.rounds == 1 &&
              !st.converged, "block cap: %d %d", st.rounds, st.converged);
    CHECK(ref_dbs_halftone(gray, W, H, g_t, TM, 9, 1, 1.2, 32, 0, out, &st) == 0 && st.rounds == 0 &&
              !st.converged && st.toggles == 0 && st.swaps == 0, "zero rounds: %d %d", st.rounds, st.converged);
    /* With no search the output is the initial halftone. */
    for (int i = 0; i < N; i++)
        CHECK(out[i] == 255 * b0[i], "zero rounds: output is not the initial halftone at %d", i);
}

/* (4) The labels of docs/dbs.md §4 on a ramp, and the search keeping them. */
static void test_labels(void)
{
    enum { W = 256, H = 64, N = W * H };
    static uint8_t gray[N], b[N], fr[N], out[N];
    static int64_t C[N];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            gray[y * W + x] = (uint8_t)x;
    const uint32_t seed = 5;
    ref_dbs_init(gray, W, H, g_t, TM, 9, seed, b, fr);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int i = y * W + x, A = x, L = g_t[(y % TM) * TM + x % TM];
            if (A < 9) {
                CHECK(b[i] == (A > L) && fr[i] == b[i], "shadow (%d,%d): b %d frozen %d, L %d", x, y, b[i], fr[i],
                      L);
            } else if (A > 246) {
                CHECK(b[i] == !(255 - A > L) && fr[i] == !b[i], "highlight (%d,%d): b %d frozen %d, L %d", x, y,
                      b[i], fr[i], L);
            } else {
                CHECK(b[i] == ((ref_dbs_hash((uint32_t)i, seed) % 255) < (uint32_t)A) && fr[i] == 0,
                      "mid-tone (%d,%d): b %d frozen %d", x, y, b[i], fr[i]);
            }
        }
    /* Every shadow level 1..8 has frozen dots, every highlight 247..254 frozen holes;
    ** 0 and 255 have none. */
    for (int A = 0; A < 256; A++) {
        int dots = 0, holes = 0;
        for (int y = 0; y < H; y++) {
            dots += fr[y * W + A] && b[y * W + A];
            holes += fr[y * W + A] && !b[y * W + A];
        }
        if (A >= 1 && A <= 8) {
            /* Level L < A appears once in each tile column: A dots per 16 rows. */
            CHECK(dots >= A && holes == 0, "shadow %d: %d frozen dots, %d frozen holes", A, dots, holes);
        } else if (A >= 247 && A <= 254) {
            CHECK(holes >= 255 - A && dots == 0, "highlight %d: %d frozen holes, %d frozen dots", A, holes, dots);
        } else {
            CHECK(dots == 0 && holes == 0, "level %d: %d frozen dots, %d frozen holes", A, dots, holes);
        }
    }
    /* The search keeps them: every level 1..254 has dots and holes where needed. */
    ref_dbs_error(gray, b, W, H, g_v, g_sv, g_cvv, C);
    ref_dbs_search s = { .w = W, .h = H, .b = b, .frozen = fr, .C = C, .CVV = g_cvv };
    uint8_t b0[N];
    memcpy(b0, b, N);
    ref_dbs_stats st;
    ref_dbs_blocks(&s, 32, 100, &st);
    CHECK(st.converged, "ramp: no convergence");
    for (int i = 0; i < N; i++)
        if (fr[i])
            CHECK(b[i] == b0[i], "ramp: frozen pixel %d changed", i);
    /* Shadow and highlight levels keep their frozen minority dots, so no
    ** level is clipped; mid-tone bands of 16 levels keep about their tone. */
    for (int A = 1; A < 255; A++) {
        int white = 0;
        for (int y = 0; y < H; y++)
            white += b[y * W + A];
        if (A < 9 || A > 246)
            CHECK(white > 0 && white < H, "ramp level %d: %d of %d white (clipped)", A, white, H);
    }
    for (int a0 = 9; a0 + 16 <= 247; a0 += 16) {
        int white = 0, sum = 0;
        for (int A = a0; A < a0 + 16; A++) {
            sum += A * H;
            for (int y = 0; y < H; y++)
                white += b[y * W + A];
        }
        double want = sum / 255.0;
        CHECK(white >= want * 0.95 - 10 && white <= want * 1.05 + 10, "ramp %d..%d: %d white, tone %.1f", a0,
              a0 + 15, white, want);
    }
    CHECK(ref_dbs_halftone(gray, W, H, g_t, TM, 9, seed, 1.2, 32, 100, out, &st) == 0, "ramp halftone");
    for (int i = 0; i < N; i++)
        CHECK(out[i] == 255 * b[i], "ramp halftone differs at %d", i);

    /* D so large that both rules apply: the shadow rule wins. */
    uint8_t g1[TM * TM], bb[TM * TM], ff[TM * TM];
    for (int i = 0; i < TM * TM; i++)
        g1[i] = (uint8_t)(i % 256);
    ref_dbs_init(g1, TM, TM, g_t, TM, 200, 1, bb, ff);
    for (int i = 0; i < TM * TM; i++) {
        int A = g1[i], L = g_t[i];
        if (A < 200)
            CHECK(bb[i] == (A > L) && ff[i] == bb[i], "D=200 at %d: b %d frozen %d", i, bb[i], ff[i]);
        else
            CHECK(bb[i] == !(255 - A > L) && ff[i] == !bb[i], "D=200 highlight at %d", i);
    }
    /* D = 0: all mid-tone, no array needed. */
    ref_dbs_init(g1, TM, TM, NULL, 0, 0, 3, bb, ff);
    for (int i = 0; i < TM * TM; i++)
        CHECK(ff[i] == 0 && bb[i] == ((ref_dbs_hash((uint32_t)i, 3) % 255) < g1[i]), "D=0 at %d", i);
    /* A tile that repeats: the array is indexed modulo m. */
    uint8_t g2[40 * 3], b2[40 * 3], f2[40 * 3];
    memset(g2, 5, sizeof g2);
    ref_dbs_init(g2, 40, 3, g_t, TM, 9, 1, b2, f2);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 40; x++)
            CHECK(b2[y * 40 + x] == (5 > g_t[y * TM + x % TM]), "tiling at (%d,%d)", x, y);
}

/* (5) Degenerate inputs. */
static void test_degenerate(void)
{
    enum { W = 20, H = 15, N = W * H };
    uint8_t gray[N], out[N];
    static const int modes[] = { 0, 18, 32 };
    for (size_t mi = 0; mi < 3; mi++) {
        int k = modes[mi];
        for (int D = 0; D <= 9; D += 9) {
            ref_dbs_stats st;
            memset(gray, 0, N);
            CHECK(ref_dbs_halftone(gray, W, H, g_t, TM, D, 1, 1.2, k, 100, out, &st) == 0, "black");
            for (int i = 0; i < N; i++)
                CHECK(out[i] == 0, "k=%d D=%d: all black got white at %d", k, D, i);
            CHECK(st.converged && st.rounds == 1 && st.toggles == 0 && st.swaps == 0, "k=%d D=%d: black stats", k,
                  D);
            memset(gray, 255, N);
            CHECK(ref_dbs_halftone(gray, W, H, g_t, TM, D, 1, 1.2, k, 100, out, &st) == 0, "white");
            for (int i = 0; i < N; i++)
                CHECK(out[i] == 255, "k=%d D=%d: all white got black at %d", k, D, i);
            CHECK(st.converged && st.rounds == 1 && st.toggles == 0 && st.swaps == 0, "k=%d D=%d: white stats", k,
                  D);
            /* 1x1 and thin images at every gray level: defined, converged, repeatable. */
            for (int A = 0; A < 256; A++) {
                uint8_t g = (uint8_t)A, o1, o2;
                CHECK(ref_dbs_halftone(&g, 1, 1, g_t, TM, D, 1, 1.2, k, 100, &o1, &st) == 0 && st.converged,
                      "1x1 %d", A);
                CHECK(ref_dbs_halftone(&g, 1, 1, g_t, TM, D, 1, 1.2, k, 100, &o2, &st) == 0 && o1 == o2 &&
                          (o1 == 0 || o1 == 255), "1x1 %d: not repeatable", A);
                if (A == 0)
                    CHECK(o1 == 0, "1x1 black -> %d", o1);
                if (A == 255)
                    CHECK(o1 == 255, "1x1 white -> %d", o1);
            }
            uint8_t line[9], lo[9];
            memset(line, 255, 9);
            CHECK(ref_dbs_halftone(line, 9, 1, g_t, TM, D, 1, 1.2, k, 100, lo, &st) == 0 && st.converged, "1x9");
            for (int i = 0; i < 9; i++)
                CHECK(lo[i] == 255, "9x1 white -> black at %d", i);
            CHECK(ref_dbs_halftone(line, 1, 9, g_t, TM, D, 1, 1.2, k, 100, lo, &st) == 0 && st.converged, "9x1");
            for (int i = 0; i < 9; i++)
                CHECK(lo[i] == 255, "1x9 white -> black at %d", i);
        }
    }
    /* Bad arguments. */
    ref_dbs_stats st;
    CHECK(ref_dbs_halftone(gray, 0, 5, g_t, TM, 9, 1, 1.2, 0, 10, out, &st) == -1, "w = 0 accepted");
    CHECK(ref_dbs_halftone(gray, 5, 0, g_t, TM, 9, 1, 1.2, 0, 10, out, &st) == -1, "h = 0 accepted");
    CHECK(ref_dbs_halftone(gray, 5, 5, g_t, TM, 9, 1, 1.2, -1, 10, out, &st) == -1, "block < 0 accepted");
    CHECK(ref_dbs_halftone(gray, 5, 5, NULL, TM, 9, 1, 1.2, 0, 10, out, &st) == -1, "no array accepted");
}

int main(void)
{
    make_tarray();
    test_model();
    test_brute();
    test_searches();
    test_labels();
    test_degenerate();
    return test_result("reference_dbs");
}
