/*
** test_reference_howe.c — checks the Howe test reference (tests/reference_howe.c)
** against cases worked out by hand from docs/howe.md (§ numbers are that file's).
**
** Notation in the derivations: (r, k) = (row, column); x1..x8 are the
** neighbours of a pixel counter-clockwise from East (x1 = E, x2 = NE, x3 = N,
** x4 = NW, x5 = W, x6 = SW, x7 = S, x8 = SE), as in §4 step 9. "Gain" of a
** node is how much cheaper ink is than background: cap_sink − cap_source =
** 32·lap2 (§3).
**
** Exits 0 when every check passes, 1 otherwise.
*/
#include "tests/reference_howe.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *format, ...)
{
    if (ok)
        return;
    va_list args;
    va_start(args, format);
    printf("FAIL: ");
    vprintf(format, args);
    printf("\n");
    va_end(args);
    failures++;
}

static void *allocate(size_t size)
{
    void *p = calloc(size, 1);
    if (!p) {
        printf("FAIL: out of memory\n");
        exit(1);
    }
    return p;
}

/* Compares a w*h 0/1 map with the listed set pixels (pairs r, k) and reports
** the first difference. */
static void check_map(const char *name, const uint8_t *map, int w, int h, const int (*set)[2], int count)
{
    uint8_t *want = allocate((size_t)w * (size_t)h);
    for (int i = 0; i < count; i++)
        want[set[i][0] * w + set[i][1]] = 1;
    for (int r = 0; r < h; r++)
        for (int k = 0; k < w; k++)
            if ((map[r * w + k] != 0) != want[r * w + k]) {
                check(0, "%s: pixel (%d, %d) is %d, want %d", name, r, k, map[r * w + k] != 0, want[r * w + k]);
                free(want);
                return;
            }
    free(want);
}

/* §1. Each expected value is the double ((R·c_r) + (G·c_g)) + (B·c_b)
** rounded half up (values from the same expression evaluated by hand/bc):
**   (255,255,255): 254.99999999999974 (the weights sum to 0.999999999999999) → 255
**   (255,0,0): 76.228685429912… → 76;  (0,255,0): 149.695983985035… → 150
**   (0,0,255): 29.075330585051… → 29;  (100,150,200): 140.754244148066… → 141
**   (246,197,108): 201.500004564690… → 202, (0,49,138): 44.499995435309… → 44:
**   the two 8-bit inputs nearest a half (an exhaustive search of all 2²⁴
**   inputs finds no exact half), so truncation or another rounding shows. */
static void test_gray(void)
{
    static const uint8_t rgb[][3] = {{0, 0, 0},       {255, 255, 255}, {255, 0, 0},   {0, 255, 0},
                                     {0, 0, 255},     {100, 150, 200}, {246, 197, 108}, {0, 49, 138}};
    static const uint8_t want[] = {0, 255, 76, 150, 29, 141, 202, 44};
    enum { N = sizeof want };
    uint8_t gray[N];
    check(ref_howe_gray(&rgb[0][0], N, 1, 3, gray) == 0, "gray: RGB rejected");
    for (int i = 0; i < N; i++)
        check(gray[i] == want[i], "gray: (%d,%d,%d) gives %d, want %d", rgb[i][0], rgb[i][1], rgb[i][2], gray[i],
              want[i]);

    /* Gray input is used as is; 2 channels or an empty image are refused. */
    static const uint8_t plain[6] = {0, 1, 127, 128, 254, 255};
    uint8_t copy[6];
    check(ref_howe_gray(plain, 3, 2, 1, copy) == 0 && memcmp(copy, plain, 6) == 0, "gray: gray input not copied");
    check(ref_howe_gray(plain, 3, 1, 2, copy) == -1, "gray: 2 channels accepted");
    check(ref_howe_gray(plain, 0, 1, 1, copy) == -1, "gray: width 0 accepted");
}

/* §2 test vector: a 0 at (4,5) in a 10×10 field of 255 (≥ 3 px from the
** border, so every listed node uses the interior formulas).
**   (4,5): X2 = I(4,4) − I(4,5) − I(4,6) + I(4,7) = 255 − 0 − 255 + 255 = 255,
**          Y2 likewise 255 → +510.
**   (4,4): X2 = I(4,3) − I(4,4) − I(4,5) + I(4,6) = 255 → +255; (3,5) likewise.
**   (4,6): X2 = I(4,5) − I(4,6) − I(4,7) + I(4,8) = −255; (4,3): X2 = I(4,2) −
**          I(4,3) − I(4,4) + I(4,5) = −255; (5,5), (2,5) likewise in Y.
**   Every other node reads only 255s: 0, border formulas included.
** A border case, the 3×3 image with a 0 in the middle: the node grid is
** 2×2 and both columns (rows) use the one-sided formula 2·(I0 − 2·I1 + I2):
**   row 0 and column 0 read 255,255,255 → 0; row 1 and column 1 read
**   255,0,255 → 2·510 = 1020. lap2 = X2(row) + Y2(column):
**   (0,0) = 0, (0,1) = 0 + 1020, (1,0) = 1020 + 0, (1,1) = 2040, the
**   largest |lap2| of §2. */
static void test_lap2(void)
{
    enum { W = 10, H = 10 };
    uint8_t gray[W * H];
    int32_t lap2[(W - 1) * (H - 1)];
    memset(gray, 255, sizeof gray);
    gray[4 * W + 5] = 0;
    ref_howe_lap2(gray, W, H, lap2);
    for (int r = 0; r < H - 1; r++)
        for (int k = 0; k < W - 1; k++) {
            int want = 0;
            if (r == 4 && k == 5)
                want = 510;
            else if ((r == 4 && k == 4) || (r == 3 && k == 5))
                want = 255;
            else if ((r == 4 && (k == 6 || k == 3)) || (k == 5 && (r == 5 || r == 2)))
                want = -255;
            check(lap2[r * (W - 1) + k] == want, "lap2 dot: node (%d, %d) is %d, want %d", r, k,
                  lap2[r * (W - 1) + k], want);
        }

    uint8_t small[9] = {255, 255, 255, 255, 0, 255, 255, 255, 255};
    int32_t lap_small[4];
    static const int32_t want_small[4] = {0, 1020, 1020, 2040};
    ref_howe_lap2(small, 3, 3, lap_small);
    for (int i = 0; i < 4; i++)
        check(lap_small[i] == want_small[i], "lap2 3x3: node %d is %d, want %d", i, lap_small[i], want_small[i]);
}

/* §2 bias. A flat 64×64 page, every gray value: m is the page value up to
** rounding, so d is one tiny constant δ (or 0) on the whole page, and
** v = δ²·A_r·A_c, where A is the sum of the 'none' weights falling inside the
** page along each axis, at least 0.5 + h(0)/2 ≈ 0.51 when the page is wider
** than the radius 50. So d/(rms + eps) <= 1/0.51 < 2 everywhere: no mask.
** (On pages much smaller than the radius A drops below 0.5 and the rounding
** residual alone can set the mask; the formula of §2 does that too.)
** A bright pixel (200) on a flat page (100): there d ≈ 100 and
** v ≈ d²·h(0)² (h(0) ≈ 1/(√(2π)·20) ≈ 0.02), so d/rms ≈ 50 > 2. Every other
** pixel within the mirror radius has m > 100, so d < 0; farther ones see the
** flat-page bound. Exactly one masked pixel, wherever it sits. */
static void test_bias(void)
{
    enum { W = 64, H = 64 };
    uint8_t *gray = allocate(W * H);
    uint8_t *mask = allocate(W * H);
    for (int value = 0; value < 256; value++) {
        memset(gray, value, W * H);
        ref_howe_bias_mask(gray, W, H, mask);
        int count = 0;
        for (int i = 0; i < W * H; i++)
            count += mask[i] != 0;
        check(count == 0, "bias: flat page of %d masks %d pixels", value, count);
    }
    static const int spots[][2] = {{32, 32}, {1, 2}, {63, 63}, {10, 50}};
    for (int s = 0; s < 4; s++) {
        memset(gray, 100, W * H);
        gray[spots[s][0] * W + spots[s][1]] = 200;
        ref_howe_bias_mask(gray, W, H, mask);
        check_map("bias: bright pixel", mask, W, H, &spots[s], 1);
    }
    free(gray);
    free(mask);
}

/* §4 step 1: exp(−w²/2σ²) > 1e−4 ⇔ w² < 2σ²·ln 10⁴ ≈ 18.42·σ².
** σ = 0.6: 6.63 → w = 2; σ = 0.4: 2.95 → w = 1; σ = 1: 18.42 → w = 4;
** σ = 0.1: 0.18, no w >= 1 qualifies → the fallback 1; σ = 10: 1842 → 30,
** the cap (42² would qualify). */
static void test_canny_halfwidth(void)
{
    static const double sigma[] = {0.6, 0.4, 1.0, 0.1, 10.0};
    static const int want[] = {2, 1, 4, 1, 30};
    for (int i = 0; i < 5; i++)
        check(ref_howe_canny_halfwidth(sigma[i]) == want[i], "canny: half-width for sigma %g is %d, want %d",
              sigma[i], ref_howe_canny_halfwidth(sigma[i]), want[i]);
}

/* §4 on images. Every row of these images is the same, and replicate borders
** keep it so after smoothing, so ax, ay and the magnitude are the same in
** every row, ay is 0 up to rounding, and the edge decisions are the same in
** every interior row.
** Ramp step 40 | 150 | 200 (columns 0–7, 8, 9–15): the central differences
** are 55 at column 7, 80 at column 8, 25 at column 9 and 0 elsewhere;
** smoothing with σ = 0.6 (neighbour weight g(1)/g(0) ≈ 0.25) keeps column 8
** the unique row maximum, far above t_hi of the normalised magnitude. So
** rows 1..H−2 get exactly column 8: a one-pixel vertical line, which thinning
** keeps (inner pixels have two 0→1 transitions, G1 fails; the ends have one
** neighbour, G2 fails). Border rows and columns are never edges.
** Symmetric step 40 | 200: columns 7 and 8 tie up to rounding, so either or
** both may survive non-maximum suppression; if both do, thinning removes
** the right column (sub-iteration 1, x1 = 0) and the top-left end pixel
** (x2 = x3 = 0, x8 = 1). Checked: no border edge, nothing outside columns
** 7–8, exactly one pixel in each row 2..H−3, all in one column.
** A black image has exactly zero gradients (every product is ±0): max = 0, no
** normalisation, nothing is weak, the map is empty. (Any other flat value
** leaves rounding residuals of about 1e−17 in ax, because the antisymmetric
** taps of D do not cancel exactly in ascending order; normalising by their
** maximum turns them into magnitudes of order 1, and canny_old as specified
** marks edges there. The binarization of a flat page is still all
** background, as lap2 = 0 everywhere.) */
static void test_canny_images(void)
{
    enum { W = 16, H = 12 };
    uint8_t gray[W * H], edges[W * H];
    for (int r = 0; r < H; r++)
        for (int k = 0; k < W; k++)
            gray[r * W + k] = k < 8 ? 40 : k == 8 ? 150 : 200;
    ref_howe_canny(gray, W, H, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, edges);
    int line[H][2], count = 0;
    for (int r = 1; r < H - 1; r++) {
        line[count][0] = r;
        line[count][1] = 8;
        count++;
    }
    check_map("canny: ramp step", edges, W, H, (const int (*)[2])line, count);

    for (int r = 0; r < H; r++)
        for (int k = 0; k < W; k++)
            gray[r * W + k] = k < 8 ? 40 : 200;
    ref_howe_canny(gray, W, H, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, edges);
    int column = -1;
    for (int r = 0; r < H; r++) {
        int in_row = 0;
        for (int k = 0; k < W; k++) {
            if (!edges[r * W + k])
                continue;
            in_row++;
            check(r > 0 && r < H - 1 && k > 0 && k < W - 1, "canny: step edge on the border at (%d, %d)", r, k);
            check(k == 7 || k == 8, "canny: step edge off the step at (%d, %d)", r, k);
            if (r >= 2 && r <= H - 3) {
                check(column < 0 || column == k, "canny: step edge changes column at row %d", r);
                column = k;
            }
        }
        if (r >= 2 && r <= H - 3)
            check(in_row == 1, "canny: step row %d has %d edge pixels, want 1", r, in_row);
        else
            check(in_row <= 1, "canny: step row %d has %d edge pixels", r, in_row);
    }

    memset(gray, 0, sizeof gray);
    ref_howe_canny(gray, W, H, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, edges);
    check_map("canny: black image", edges, W, H, NULL, 0);
}

/* §4 steps 4–9 from hand-set derivatives. With ay = 0 and ax > 0 a pixel
** meets only sector S1 (iy <= 0 ∧ ix > −iy) with d = 0, so n1 and n2 are
** exactly its right and left magnitudes: it is a local maximum iff neither
** horizontal neighbour is larger. Pixels with ax = ay = 0 meet no sector.
** mag = √(ax²) = ax exactly, and the largest ax is 1, so the normalised
** magnitudes are the ax values themselves. */
enum { GW = 12, GH = 10 };

static void run_gradient(const char *name, const double (*set)[3], int count, const int (*want)[2],
                         int want_count)
{
    double ax[GW * GH] = {0}, ay[GW * GH] = {0};
    uint8_t edges[GW * GH];
    for (int i = 0; i < count; i++)
        ax[(int)set[i][0] * GW + (int)set[i][1]] = set[i][2];
    ref_howe_canny_gradient(ax, ay, GW, GH, REF_HOWE_T_LO, REF_HOWE_T_HI, edges);
    check_map(name, edges, GW, GH, want, want_count);
}

static void test_canny_steps(void)
{
    /* Thresholds are strict. (2,2) = 1 is strong. (2,4) = 0.4 is weak but not
    ** strong (0.4 > 0.4 fails) and not 8-connected to (2,2): dropped. (5,3) =
    ** 0.9 is strong; its diagonal neighbour (6,2) = 0.1 is not weak (0.1 > 0.1
    ** fails), so it is not kept. Just above the thresholds, (7,6) =
    ** nextafter(0.4, 1) is strong and (8,7) = nextafter(0.1, 1), diagonal to
    ** it, is weak and kept. The two diagonal pairs survive thinning: each
    ** pixel has one neighbour, so n1 = 1 and G2 fails. */
    double above_hi = nextafter(0.4, 1.0), above_lo = nextafter(0.1, 1.0);
    const double strict[][3] = {{2, 2, 1.0}, {2, 4, 0.4}, {5, 3, 0.9}, {6, 2, 0.1}, {7, 6, above_hi}, {8, 7, above_lo}};
    static const int strict_want[][2] = {{2, 2}, {5, 3}, {7, 6}, {8, 7}};
    run_gradient("canny: strict thresholds", strict, 6, strict_want, 4);

    /* Hysteresis: the strong (2,2) and the weak chain (3,3), (4,4), (5,4) form
    ** one 8-connected component (the first two links are diagonal, so a
    ** 4-connected search would stop at (2,2)); the weak pair (7,8), (8,9) has
    ** no strong pixel and goes. Thinning keeps the chain: (3,3) and (4,4)
    ** each have two 0→1 transitions among x1..x8 (G1 fails), the ends have
    ** one neighbour (G2 fails). (4,4) and (5,4) are both local maxima: each
    ** compares only with its own row. */
    static const double chain[][3] = {{2, 2, 1.0}, {3, 3, 0.2}, {4, 4, 0.2}, {5, 4, 0.2}, {7, 8, 0.2}, {8, 9, 0.3}};
    static const int chain_want[][2] = {{2, 2}, {3, 3}, {4, 4}, {5, 4}};
    run_gradient("canny: hysteresis", chain, 6, chain_want, 4);

    /* No strong pixel: the maximum 1 sits on border row 0, which is never a
    ** local maximum, and everything inside is <= 0.4. The result is the weak
    ** map as it is: the 2-wide block (3..5, 4..5) of 0.3 (each pixel ties
    ** with its row partner, and ties pass) that thinning would cut to one
    ** column, and the isolated (7,9) = 0.2 that hysteresis would drop. */
    static const double none[][3] = {{0, 5, 1.0}, {3, 4, 0.3}, {3, 5, 0.3}, {4, 4, 0.3}, {4, 5, 0.3},
                                     {5, 4, 0.3}, {5, 5, 0.3}, {7, 9, 0.2}};
    static const int none_want[][2] = {{3, 4}, {3, 5}, {4, 4}, {4, 5}, {5, 4}, {5, 5}, {7, 9}};
    run_gradient("canny: no strong pixel", none, 8, none_want, 7);
}

/* §4 step 9 on hand-made patterns (1 = set), G3 read as MATLAB's lutthin3:
** ¬((x2 ∨ x3 ∨ ¬x8) ∧ x1), i.e. deletable in sub-iteration 1 when E is
** empty or when N, NE are empty and SE is set; G3′: ¬((x6 ∨ x7 ∨ ¬x4) ∧ x5). */
static void run_thin(const char *name, const int (*set)[2], int count, const int (*want)[2], int want_count)
{
    enum { W = 7, H = 7 };
    uint8_t e[W * H] = {0};
    for (int i = 0; i < count; i++)
        e[set[i][0] * W + set[i][1]] = 1;
    ref_howe_thin_once(e, W, H);
    check_map(name, e, W, H, want, want_count);
}

static void test_thin(void)
{
    /* An isolated pixel: n1 = n2 = 0, G2 fails. */
    static const int dot[][2] = {{3, 3}};
    run_thin("thin: isolated pixel", dot, 1, dot, 1);

    /* A 1-wide horizontal line: inner pixels have x1 = x5 = 1, two
    ** transitions (at x3 and x7), G1 fails; the ends fail G2. */
    static const int hline[][2] = {{3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 5}};
    run_thin("thin: line", hline, 5, hline, 5);

    /* A 2-wide vertical bar, rows 1–5, columns 2–3. Sub-iteration 1: every
    ** right-column pixel has x1 = 0 (G3), one transition and
    ** min(n1, n2) = 2 or 3: deleted. The top-left (1,2) has x1 = 1 but
    ** x2 = x3 = 0 and x8 = 1, so G3 holds; G1 (one transition, at x5→x7)
    ** and G2 (n1 = n2 = 2) hold: deleted. The other left pixels have x1 =
    ** x3 = 1: G3 fails. Sub-iteration 2 sees the line (2..5, 2): inner pixels
    ** have two transitions, the ends one neighbour: nothing goes. */
    static const int bar[][2] = {{1, 2}, {1, 3}, {2, 2}, {2, 3}, {3, 2}, {3, 3}, {4, 2}, {4, 3}, {5, 2}, {5, 3}};
    static const int bar_want[][2] = {{2, 2}, {3, 2}, {4, 2}, {5, 2}};
    run_thin("thin: 2-wide bar", bar, 10, bar_want, 4);

    /* A 2×2 block at (2..3, 2..3). Sub-iteration 1: (2,3) and (3,3) have
    ** x1 = 0; (2,2) has x2 = x3 = 0, x8 = 1; each has one transition and
    ** n1 = n2 = 2: all three deleted. (3,2) has x1 = x2 = x3 = 1: G3 fails.
    ** Sub-iteration 2 sees an isolated pixel (G2 fails). */
    static const int block[][2] = {{2, 2}, {2, 3}, {3, 2}, {3, 3}};
    static const int block_want[][2] = {{3, 2}};
    run_thin("thin: 2x2 block", block, 4, block_want, 1);

    /* The 8-ring around an empty centre (3,3). Sub-iteration 1: the NE
    ** (2,4) and SE (4,4) corners have x1 = 0, one transition and
    ** n1 = n2 = 2: deleted. The edge midpoints N, W, E, S have two
    ** transitions (G1 fails). The NW (2,2) and SW (4,2) corners have x1 = 1
    ** and G3 fails (NW: x8 = 0; SW: x3 = 1). Sub-iteration 2 on that result:
    ** NW and SW have x5 = 0 (G3′), one transition and n1 = n2 = 2: deleted.
    ** Left: the diamond N, W, E, S. */
    static const int ring[][2] = {{2, 2}, {2, 3}, {2, 4}, {3, 2}, {3, 4}, {4, 2}, {4, 3}, {4, 4}};
    static const int diamond[][2] = {{2, 3}, {3, 2}, {3, 4}, {4, 3}};
    run_thin("thin: ring", ring, 8, diamond, 4);
}

/* §5 on 3×3 images (a 2×2 node grid: links R0 = (0,0)–(0,1),
** R1 = (1,0)–(1,1), D0 = (0,0)–(1,0), D1 = (0,1)–(1,1)). The pixel each link
** tests is the darker one, the right/lower one on a tie:
**   A = 50 20 80 / 30 20 90 / 10 10 10:
**     R0 dx = −30 → (0,1); R1 dx = −10 → (1,1); D0 dy = −20 → (1,0);
**     D1 dy = 0 (tie) → (1,1).
**   B = 20 50 0 / 40 40 0 / 0 0 0:
**     R0 dx = +30 → (0,0); R1 dx = 0 (tie) → (1,1); D0 dy = +20 → (0,0);
**     D1 dy = −10 → (1,1).
** For all 16 edge maps of the four node pixels, with the pixels of row 2
** and column 2 set as edges in half of them (they are never tested), a link
** has capacity 0 iff its tested pixel is an edge, else the given capacity;
** right of column 1 and below row 1 there is no link (0). */
static void test_nlinks(void)
{
    static const uint8_t images[2][9] = {{50, 20, 80, 30, 20, 90, 10, 10, 10}, {20, 50, 0, 40, 40, 0, 0, 0, 0}};
    /* Tested pixel (index into the 3×3 image) of R0, R1, D0, D1. */
    static const int tested[2][4] = {{1, 4, 3, 4}, {0, 4, 0, 4}};
    static const int node_pixel[4] = {0, 1, 3, 4};
    const int32_t capacity = 5120;
    for (int image = 0; image < 2; image++)
        for (int bits = 0; bits < 32; bits++) {
            uint8_t edges[9] = {0};
            for (int j = 0; j < 4; j++)
                edges[node_pixel[j]] = (bits >> j) & 1;
            if (bits & 16)
                edges[2] = edges[5] = edges[6] = edges[7] = edges[8] = 1;
            int32_t right[4], down[4];
            ref_howe_nlinks(images[image], edges, 3, 3, capacity, right, down);
            int32_t want_right[4] = {edges[tested[image][0]] ? 0 : capacity, 0,
                                     edges[tested[image][1]] ? 0 : capacity, 0};
            int32_t want_down[4] = {edges[tested[image][2]] ? 0 : capacity,
                                    edges[tested[image][3]] ? 0 : capacity, 0, 0};
            for (int i = 0; i < 4; i++) {
                check(right[i] == want_right[i], "nlinks: image %c edges %d: right[%d] = %d, want %d",
                      'A' + image, bits, i, right[i], want_right[i]);
                check(down[i] == want_down[i], "nlinks: image %c edges %d: down[%d] = %d, want %d",
                      'A' + image, bits, i, down[i], want_down[i]);
            }
        }
}

/* §3 on a 4×3 image (3×2 nodes, node i = (i / 3, i % 3)):
** source = 16·(3000 − lap2), sink = 16·(3000 + lap2), lap2 := −1000 where
** the mask is set:
**   node 0, lap2 510 → 16·2490 = 39840, 16·3510 = 56160 (Howe: 1500 ∓ 255, ×32);
**   node 1, −2040 → 80640, 15360, and node 3, +2040 → 15360, 80640 (the
**   extremes of §3); node 2, 0 → 48000 both;
**   nodes 4, 5, masked (lap2 0 and −255 ignored) → 16·4000 = 64000 and
**   16·2000 = 32000 (Howe: 2000 as ink, 1000 as background, ×32).
** The mask is read on the full image at the node's own pixel; its last
** column (k = 3) and row (r = 2) belong to no node and are set to show that
** they are ignored. */
static void test_tlinks(void)
{
    enum { W = 4, H = 3 };
    static const int32_t lap2[6] = {510, -2040, 0, 2040, 0, -255};
    static const uint8_t mask[W * H] = {0, 0, 0, 1, /* */ 0, 1, 1, 1, /* */ 1, 1, 1, 1};
    static const int32_t want_source[6] = {39840, 80640, 48000, 15360, 64000, 64000};
    static const int32_t want_sink[6] = {56160, 15360, 48000, 80640, 32000, 32000};
    int32_t source[6], sink[6];
    ref_howe_tlinks(lap2, mask, W, H, source, sink);
    for (int i = 0; i < 6; i++)
        check(source[i] == want_source[i] && sink[i] == want_sink[i], "tlinks: node %d is (%d, %d), want (%d, %d)",
              i, source[i], sink[i], want_source[i], want_sink[i]);
}

/* §6 on hand-made labels, a 4×4 image (3×3 nodes):
**   nodes        padded P (last row, then last column, repeated)
**   0 0 1        0 0 1 1
**   1 1 0        1 1 0 0
**   1 0 1        1 0 1 1
**                1 0 1 1
** nw removes an ink pixel whose North and West in P are both background:
** (2,2) only (N (1,2) = 0, W (2,1) = 0). Kept: (0,2), (0,3) (row 0: the
** pixel stands in for its North), (1,0) (column 0, likewise, although its
** North is background), (1,1) (W ink), (2,0), (3,0), (2,3) (W = P(2,2),
** ink in P: the decisions are parallel), (3,2), (3,3) (N ink). */
static void test_finish(void)
{
    static const uint8_t ink[9] = {0, 0, 1, 1, 1, 0, 1, 0, 1};
    uint8_t out[16], map[16];
    ref_howe_finish(ink, 4, 4, out);
    for (int i = 0; i < 16; i++) {
        check(out[i] == 0 || out[i] == 255, "finish: output value %d", out[i]);
        map[i] = out[i] == 0;
    }
    static const int want[][2] = {{0, 2}, {0, 3}, {1, 0}, {1, 1}, {2, 0}, {2, 3}, {3, 0}, {3, 2}, {3, 3}};
    check_map("finish", map, 4, 4, want, 9);
}

/* §6 dot example: a 0 at (7,7) in a 15×15 field of 255, default parameters.
** Canny: the smoothed dot's gradient magnitude is ~0 at the dot (symmetry),
** peaks on the ring of its 8 neighbours (axis ones largest, diagonal ones
** about 0.7 of them, both above t_hi) and falls off outside, so the ring is
** the strong map; thinning turns the ring into the diamond N, W, E, S (see
** test_thin). Bias: d ≈ +0.1 around the dot against rms ≈ 5 (the dot's d²
** smoothed): no mask.
** Links (the darker pixel is tested): the four links of the dot test the dot
** (not an edge): kept. The W pixel's links to its W and N neighbours test it
** (ties, lower/right) and go; its S link tests the non-edge SW: kept. The N
** pixel's links to its N and W go, the one to NE stays. Gains (32·lap2, §2
** vector): dot +16320, W and N +8160, E, S and the pixels two to the W and N
** −8160, the rest 0. Ink {dot, W, N}: gains −32640; its kept boundary
** links are dot–E, dot–S, W–SW and N–NE, 4 · 5120 = 20480; total −12160
** against 0 for all background. The alternatives are worse: {dot}
** +4160, {dot, W} or {dot, N} −4000, adding a zero-gain corner adds at least
** one net kept link, adding E or S costs 8160 more. So the cut is
** {dot, W, N}, unique; the nw clean-up removes W (its N and W are
** background) and N (likewise) and keeps the dot (its N is ink): one ink
** pixel, at the dot. */
static void test_pipeline_dot(void)
{
    enum { N = 15 };
    uint8_t gray[N * N], edges[N * N], out[N * N];
    memset(gray, 255, sizeof gray);
    gray[7 * N + 7] = 0;
    ref_howe_canny(gray, N, N, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, edges);
    static const int diamond[][2] = {{6, 7}, {7, 6}, {7, 8}, {8, 7}};
    check_map("dot: canny", edges, N, N, diamond, 4);

    check(ref_howe(gray, N, N, 1, REF_HOWE_C, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == 0,
          "dot: ref_howe failed");
    uint8_t ink[N * N];
    for (int i = 0; i < N * N; i++)
        ink[i] = out[i] == 0;
    static const int one[][2] = {{7, 7}};
    check_map("dot: ink", ink, N, N, one, 1);
    for (int i = 0; i < N * N; i++)
        check(out[i] == 0 || out[i] == 255, "dot: output value %d", out[i]);
}

/* The synthetic page: a light gradient (190 + 50·k/(W−1) − 10·r/(H−1)) with
** dark strokes (40, 2–3 px wide: shapes like L, T, O and H on a text grid),
** each with a one-pixel half-dark rim, the blur of a scan. Where a stroke
** and its rim are, lap2 is positive and Canny puts its edges on the rim, so
** the stroke's inside links are kept and its outside ones (tested pixel on
** the rim) are cut: the stroke comes out ink. Away from strokes the page
** changes by at most one gray level per pixel: lap2 within a few units,
** no edge, cutting any link costs 5120 against gains of a few ·32: all
** background. Checked: >= 90 % of stroke pixels ink, no ink two or more
** pixels (Chebyshev) from every stroke. The same page as RGB with R = G = B
** must give the same output: rgb2gray maps (v, v, v) to v (v·0.999999999999999
** rounds back to v). */
static void test_pipeline_page(void)
{
    enum { W = 240, H = 160 };
    uint8_t *stroke = allocate(W * H);
    uint8_t *gray = allocate(W * H);
    uint8_t *rgb = allocate(3 * W * H);
    uint8_t *out = allocate(W * H);
    uint8_t *out_rgb = allocate(W * H);
    for (int y = 20; y + 40 < H; y += 50)
        for (int x = 20; x + 30 < W; x += 40) {
            /* Rectangles (r0, k0, r1, k1), relative, end exclusive. */
            static const int shapes[4][4][4] = {
                {{0, 0, 30, 3}, {27, 0, 30, 20}, {0, 0, 0, 0}, {0, 0, 0, 0}},
                {{0, 0, 3, 22}, {0, 9, 30, 12}, {0, 0, 0, 0}, {0, 0, 0, 0}},
                {{0, 0, 3, 20}, {27, 0, 30, 20}, {0, 0, 30, 3}, {0, 17, 30, 20}},
                {{0, 0, 30, 2}, {14, 0, 16, 18}, {0, 16, 30, 18}, {0, 0, 0, 0}},
            };
            int shape = (x / 40 + y / 50) % 4;
            for (int b = 0; b < 4; b++)
                for (int r = y + shapes[shape][b][0]; r < y + shapes[shape][b][2]; r++)
                    for (int k = x + shapes[shape][b][1]; k < x + shapes[shape][b][3]; k++)
                        stroke[r * W + k] = 1;
        }
    for (int r = 0; r < H; r++)
        for (int k = 0; k < W; k++)
            gray[r * W + k] = stroke[r * W + k] ? 40 : (uint8_t)(190 + (50 * k) / (W - 1) - (10 * r) / (H - 1));
    for (int r = 1; r < H - 1; r++)
        for (int k = 1; k < W - 1; k++) {
            int i = r * W + k;
            if (!stroke[i] && (stroke[i - 1] || stroke[i + 1] || stroke[i - W] || stroke[i + W]))
                gray[i] = (uint8_t)((gray[i] + 40) / 2);
        }
    for (int i = 0; i < W * H; i++)
        rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = gray[i];

    check(ref_howe(gray, W, H, 1, REF_HOWE_C, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == 0,
          "page: ref_howe failed");
    int strokes = 0, stroke_ink = 0, far_ink = 0;
    for (int r = 0; r < H; r++)
        for (int k = 0; k < W; k++) {
            int nearest = 99;
            for (int dr = -1; dr <= 1; dr++)
                for (int dk = -1; dk <= 1; dk++) {
                    int rr = r + dr, kk = k + dk;
                    if (rr >= 0 && rr < H && kk >= 0 && kk < W && stroke[rr * W + kk]) {
                        int d = dr * dr + dk * dk == 0 ? 0 : 1;
                        if (d < nearest)
                            nearest = d;
                    }
                }
            int ink = out[r * W + k] == 0;
            check(out[r * W + k] == 0 || out[r * W + k] == 255, "page: output value %d", out[r * W + k]);
            if (nearest == 0) {
                strokes++;
                stroke_ink += ink;
            } else if (nearest > 1) {
                far_ink += ink;
            }
        }
    check(strokes > 0 && stroke_ink * 10 >= strokes * 9, "page: %d of %d stroke pixels are ink", stroke_ink,
          strokes);
    check(far_ink == 0, "page: %d ink pixels two or more pixels from every stroke", far_ink);

    check(ref_howe(rgb, W, H, 3, REF_HOWE_C, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out_rgb) == 0,
          "page: ref_howe (RGB) failed");
    check(memcmp(out, out_rgb, W * H) == 0, "page: RGB with equal channels differs from gray");
    free(stroke);
    free(gray);
    free(rgb);
    free(out);
    free(out_rgb);
}

/* Arguments. Below 3×3 is refused and out stays untouched. A flat 3×3 page
** has lap2 = 0 everywhere (or the bias, which only adds background weight):
** source >= sink on every node, so no node keeps a residual path to the sink
** and all is background — ties go to background because the sink side is the
** minimal one (§6). */
static void test_arguments(void)
{
    uint8_t gray[16], out[16];
    memset(gray, 200, sizeof gray);
    memset(out, 0x5a, sizeof out);
    check(ref_howe(gray, 2, 5, 1, REF_HOWE_C, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == -1,
          "args: 2x5 accepted");
    check(ref_howe(gray, 5, 2, 1, REF_HOWE_C, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == -1,
          "args: 5x2 accepted");
    check(ref_howe(gray, 3, 3, 2, REF_HOWE_C, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == -1,
          "args: 2 channels accepted");
    check(ref_howe(gray, 3, 3, 1, REF_HOWE_C, 0.0, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == -1,
          "args: sigma 0 accepted");
    check(ref_howe(gray, 3, 3, 1, REF_HOWE_C, REF_HOWE_SIGMA, 0.4, 0.4, out) == -1, "args: t_lo = t_hi accepted");
    check(ref_howe(gray, 3, 3, 1, REF_HOWE_C, REF_HOWE_SIGMA, 0.1, 1.0, out) == -1, "args: t_hi = 1 accepted");
    check(ref_howe(gray, 3, 3, 1, -1.0, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == -1,
          "args: c < 0 accepted");
    check(ref_howe(gray, 3, 3, 1, NAN, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == -1,
          "args: c NaN accepted");
    for (int i = 0; i < 16; i++)
        check(out[i] == 0x5a, "args: out written on a refused call");

    check(ref_howe(gray, 3, 3, 1, REF_HOWE_C, REF_HOWE_SIGMA, REF_HOWE_T_LO, REF_HOWE_T_HI, out) == 0,
          "args: 3x3 refused");
    for (int i = 0; i < 9; i++)
        check(out[i] == 255, "args: flat 3x3 pixel %d is %d, want 255", i, out[i]);
}

int main(void)
{
    test_gray();
    test_lap2();
    test_bias();
    test_canny_halfwidth();
    test_canny_images();
    test_canny_steps();
    test_thin();
    test_nlinks();
    test_tlinks();
    test_finish();
    test_pipeline_dot();
    test_pipeline_page();
    test_arguments();
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
