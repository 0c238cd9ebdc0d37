/*
** test_reference_hbk.c — checks the HBK test reference (tests/reference_hbk.c)
** against cases worked out by hand from docs/hbk.md.
**
** Notation in the derivations: gray values are written plainly, Q8 centroids
** as integers (value · 256), a gray pixel's distance per channel only (the
** three channels are equal, so comparing one channel compares the sums).
** "it k" is the k-th local iteration of a block, "outer k" the k-th global one.
** White is 65280 in Q8; the first assignment from G = (0, 65280) sends a gray
** pixel to white iff it is >= 128 (127.5 is the midpoint).
** A block's ratio is d(μ0, μ1) / (w0/n0 + w1/n1), w_k the scatter of cluster
** k (§3): under 8 the block is flat, under 4 a single mode; a block with an
** empty cluster, or whose clusters are each one value (w = 0), is neither. Its
** output is cleared (all white) when it is a single mode or when
** 4·d(μ0, μ1) < d(G0, G1), G the centroids its last local k-means started from.
**
** Exits 0 when every check passes, 1 otherwise.
*/
#include "tests/reference_hbk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

/* Runs ref_hbk (caps < 1: the defaults, through ref_hbk itself) or
** ref_hbk_caps and compares the output, the outer iteration count and the
** convergence flag with the hand-derived values. */
static void run_and_compare(const char *name, const uint8_t *pixels, int width, int height,
                            int channels, int block, int local_max, int global_max,
                            const uint8_t *want, int want_outer, int want_converged)
{
    size_t n = (size_t)width * (size_t)height;
    uint8_t *out = malloc(n);
    if (!out) {
        check(0, "out of memory");
        return;
    }
    memset(out, 0x5a, n);  /* neither 0 nor 255: a pixel left unwritten shows */
    int converged = -1;
    int outer = local_max < 1
                    ? ref_hbk(pixels, width, height, channels, block, out, &converged)
                    : ref_hbk_caps(pixels, width, height, channels, block, local_max, global_max, out,
                                   &converged, NULL);
    char what[200];
    if (outer != want_outer || converged != want_converged) {
        snprintf(what, sizeof what, "%s (block %d): %d outer iterations, converged %d; want %d, %d",
                 name, block, outer, converged, want_outer, want_converged);
        check(0, what);
    }
    for (size_t i = 0; i < n; i++) {
        if (out[i] != want[i]) {
            snprintf(what, sizeof what, "%s (block %d): pixel (%d, %d) is %d, want %d", name, block,
                     (int)(i % (size_t)width), (int)(i / (size_t)width), out[i], want[i]);
            check(0, what);
            break;
        }
    }
    free(out);
}

/* A case under the default caps, checked through both entry points. */
static void expect(const char *name, const uint8_t *pixels, int width, int height, int channels,
                   int block, const uint8_t *want, int want_outer, int want_converged)
{
    run_and_compare(name, pixels, width, height, channels, block, 0, 0, want, want_outer,
                    want_converged);
    run_and_compare(name, pixels, width, height, channels, block, REF_HBK_LOCAL_MAX,
                    REF_HBK_GLOBAL_MAX, want, want_outer, want_converged);
}

/* A case under the given caps. */
static void expect_caps(const char *name, const uint8_t *pixels, int width, int height, int channels,
                        int block, int local_max, int global_max, const uint8_t *want, int want_outer,
                        int want_converged)
{
    run_and_compare(name, pixels, width, height, channels, block, local_max, global_max, want,
                    want_outer, want_converged);
}

/* Gray pixels copied to R = G = B. */
static uint8_t *to_rgb(const uint8_t *gray, size_t n)
{
    uint8_t *rgb = malloc(3 * n);
    if (rgb)
        for (size_t i = 0; i < n; i++)
            rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = gray[i];
    return rgb;
}

static const int block_sizes[3] = {8, 16, 32};

/* A blank page: every pixel goes to white at once (d(x, μ1) = 0); cluster 0
** is empty everywhere and keeps black; μ' = μ at it 1 in every block. The
** totals hold only white pixels, so G' = (0, 65280) = G: converged after
** 1 outer iteration, all white (every block's centroids are G's: not
** cleared, not that it matters). 50×30 is not a multiple of any block size. */
static void test_blank(void)
{
    enum { W = 50, H = 30 };
    static uint8_t page[W * H], want[W * H];
    memset(page, 255, sizeof page);
    memset(want, 255, sizeof want);
    uint8_t *rgb = to_rgb(page, sizeof page);
    for (int b = 0; b < 3; b++) {
        expect("blank gray", page, W, H, 1, block_sizes[b], want, 1, 1);
        if (rgb)
            expect("blank rgb", rgb, W, H, 3, block_sizes[b], want, 1, 1);
    }
    free(rgb);
}

/* An all-black page: the mirror case. Every pixel is at distance 0 from
** black, cluster 1 is empty and keeps white, G' = G after 1 outer
** iteration, all ink (the blocks' centroids are G's: not cleared). */
static void test_black(void)
{
    enum { W = 50, H = 30 };
    static uint8_t page[W * H], want[W * H];
    memset(page, 0, sizeof page);
    memset(want, 0, sizeof want);
    for (int b = 0; b < 3; b++)
        expect("black", page, W, H, 1, block_sizes[b], want, 1, 1);
}

static void fill_rect(uint8_t *img, int width, int x0, int y0, int w, int h, uint8_t v)
{
    for (int y = y0; y < y0 + h; y++)
        for (int x = x0; x < x0 + w; x++)
            img[y * width + x] = v;
}

/* Black rectangles on white, some across block borders, one filling the
** 5×5 partial corner block of a 21×13 page (block 8) and one in the partial
** bottom row. Pure black and pure white pixels sit at distance 0 from the
** seeds, so it 1 of every block gives μ' = μ = (0, 65280) (an absent colour
** keeps its seed), the totals give G' = G and 1 outer iteration suffices;
** no block is flat (w = 0) or cleared (its centroids are G's), so the output
** is exactly the rectangles. */
static void test_text(void)
{
    enum { W = 40, H = 24 };
    static uint8_t page[W * H];
    memset(page, 255, sizeof page);
    fill_rect(page, W, 2, 3, 3, 5, 0);
    fill_rect(page, W, 12, 9, 10, 2, 0);  /* across x = 16 */
    fill_rect(page, W, 30, 14, 4, 4, 0);  /* across y = 16 */
    fill_rect(page, W, 7, 20, 1, 1, 0);   /* one pixel */
    uint8_t *rgb = to_rgb(page, sizeof page);
    for (int b = 0; b < 3; b++) {
        expect("text gray", page, W, H, 1, block_sizes[b], page, 1, 1);
        if (rgb)
            expect("text rgb", rgb, W, H, 3, block_sizes[b], page, 1, 1);
    }
    free(rgb);

    enum { W2 = 21, H2 = 13 };
    static uint8_t odd[W2 * H2];
    memset(odd, 255, sizeof odd);
    fill_rect(odd, W2, 16, 8, 5, 5, 0);  /* the whole corner block at block 8 */
    fill_rect(odd, W2, 3, 10, 6, 2, 0);  /* partial bottom row, across x = 8 */
    fill_rect(odd, W2, 18, 1, 2, 3, 0);  /* partial right column */
    for (int b = 0; b < 3; b++)
        expect("text 21x13", odd, W2, H2, 1, block_sizes[b], odd, 1, 1);
}

/* 1×1 images (one partial block at every size).
** White: d(x, μ1) = 0 -> cluster 1, μ1 stays 65280, cluster 0 empty keeps 0;
**   G' = G -> 1 outer iteration, 255. Black: the mirror, 0.
** Red (255,0,0): d0 = 65280², d1 = 0 + 65280² + 65280² -> cluster 0;
**   μ0 becomes (65280, 0, 0), μ' = μ at it 2. G' = ((65280,0,0), white) != G,
**   so outer 2 starts there: d0 = 0, nothing moves, G' = G -> 2 outer, 0.
** Magenta (255,0,255): d0 = 2·65280², d1 = 65280² -> cluster 1; likewise
**   2 outer iterations, 255. (A luma reading, 0.299·255 + 0.114·255 ≈ 105,
**   would call it dark: HBK measures in RGB.) */
static void test_one_pixel(void)
{
    static const uint8_t white[1] = {255}, black[1] = {0};
    static const uint8_t red[3] = {255, 0, 0}, magenta[3] = {255, 0, 255};
    for (int b = 0; b < 3; b++) {
        expect("1x1 white", white, 1, 1, 1, block_sizes[b], white, 1, 1);
        expect("1x1 black", black, 1, 1, 1, block_sizes[b], black, 1, 1);
        expect("1x1 red", red, 1, 1, 3, block_sizes[b], black, 2, 1);
        expect("1x1 magenta", magenta, 1, 1, 3, block_sizes[b], white, 2, 1);
    }
}

/* The tie rule, and a ratio of exactly 4. One block, pixels 65, 128, 254
** (Q8 16640, 32768, 65024).
** Outer 1, it 1 from (0, 65280): 65 -> 0; 128 -> 1 (d0 = 32768²,
**   d1 = 32512²); 254 -> 1. μ0 = 16640; μ1 = ⌊(256·382 + 1)/2⌋ = 48896.
** it 2: 128 has d0 = (32768 − 16640)² = 16128², d1 = (48896 − 32768)² =
**   16128²: a tie, so white. Labels unchanged, μ' = μ: converged.
**   w0 = 0, w1 = 2·16128², d = 32256² = 4·16128²: ratio 4·16128² / 16128² = 4,
**   flat but not a single mode (not under 4). The flat block gives all three
**   pixels to paper: G' = (0, ⌊(256·447 + 1)/3⌋) = (0, 38144) != G.
** Outer 2 from (0, 38144): 65 (d0 = 16640², d1 = 21504²) -> 0; 128
**   (d0 = 32768², d1 = 5376²) -> 1; 254 -> 1. μ' = (16640, 48896), then the
**   same tie as above: μ(β) = (16640, 48896), flat again, G' = G -> 2 outer
**   iterations. Output: 4·32256² >= 38144², not cleared: 0, 255, 255.
** (Ties to black would move 128 to cluster 0 and output 0 for it; a ratio
** test of <= 4 would clear the block and output white for 65.) */
static void test_tie(void)
{
    static const uint8_t row[3] = {65, 128, 254};
    static const uint8_t want[3] = {0, 255, 255};
    for (int b = 0; b < 3; b++)
        expect("tie", row, 3, 1, 1, block_sizes[b], want, 2, 1);
}

/* Local centroids that move and change a label. One 8×8 block: rows 0–1 = 60
** (16 px), row 2 = 130 (8 px), rows 3–7 = 220 (40 px).
** it 1 from (0, 65280): 60 -> 0; 130 -> 1; 220 -> 1.
**   μ0 = 60·256 = 15360; μ1 = 256·(8·130 + 40·220)/48 = 256·9840/48 = 52480
**   (205 exactly).
** it 2: 130 (33280): d0 = 17920², d1 = 19200² -> 0 now.
**   μ0 = ⌊(256·2000 + 12)/24⌋ = ⌊512012/24⌋ = 21333 (83.33); μ1 = 220·256 = 56320.
** it 3: 60 -> 0; 130: d0 = 11947², d1 = 23040² -> 0; 220 -> 1: μ' = μ.
**   w0 = 16·5973² + 8·11947² = 1712674136, w1 = 0, d = 34987²: ratio
**   1224090169 / (1712674136/24) = 17.2, not flat.
** G' = (21333, 56320) != G; outer 2 from it: the same labels at once,
**   G' = G -> 2 outer iterations. Output (μ(β) = G, not cleared): rows 0–2
**   ink, rows 3–7 white. At every block size the image is one block. */
static void test_moving_centroids(void)
{
    enum { W = 8, H = 8 };
    static uint8_t img[W * H], want[W * H];
    fill_rect(img, W, 0, 0, 8, 2, 60);
    fill_rect(img, W, 0, 2, 8, 1, 130);
    fill_rect(img, W, 0, 3, 8, 5, 220);
    fill_rect(want, W, 0, 0, 8, 3, 0);
    fill_rect(want, W, 0, 3, 8, 5, 255);
    uint8_t *rgb = to_rgb(img, sizeof img);
    for (int b = 0; b < 3; b++) {
        expect("moving centroids gray", img, W, H, 1, block_sizes[b], want, 2, 1);
        if (rgb)
            expect("moving centroids rgb", rgb, W, H, 3, block_sizes[b], want, 2, 1);
    }
    free(rgb);
}

/* The global loop pulls a lone pixel to ink; also checks the edge block.
** 9×1, block 8: block A = x 0..7 = [100, 255 ×7], block B = x 8 = [140].
** Outer 1 from (0, 65280): A: 100 -> 0, 255 -> 1; μ = (25600, 65280), stable
**   at it 2. B: 140 (35840) -> 1 (d0 = 35840², d1 = 29440²); μ1 = 35840,
**   stable. Totals: cluster 0 {100}: 25600; cluster 1 {255 ×7, 140}:
**   256·1925/8 = 61600. G' != G.
** Outer 2 from (25600, 61600): A as before. B: d0 = 10240², d1 = 25760² ->
**   0; μ0 = 35840, μ1 keeps 61600, stable. Totals: cluster 0 {100, 140}:
**   256·240/2 = 30720; cluster 1 {255 ×7}: 65280. G' != G.
** Outer 3 from (30720, 65280): A: 100 (d0 = 5120², d1 = 39680²) -> 0, 255 -> 1.
**   B: d0 = 5120², d1 = 29440² -> 0. The same totals: G' = G -> 3 outer
**   iterations. No block is flat (w = 0, or an empty cluster). Output: A's
**   d = 39680², B's (35840, 65280) gives 29440²; 4d >= d(G) = 34560² for both,
**   not cleared: [0, 255 ×7, 0]. The transposed 1×9 image tiles rows the same
**   way and gives the transposed result. */
static void test_global_pull(void)
{
    static const uint8_t img[9] = {100, 255, 255, 255, 255, 255, 255, 255, 140};
    static const uint8_t want[9] = {0, 255, 255, 255, 255, 255, 255, 255, 0};
    expect("global pull 9x1", img, 9, 1, 1, 8, want, 3, 1);
    expect("global pull 1x9", img, 1, 9, 1, 8, want, 3, 1);
}

/* The output uses each block's final local centroids, not G.
** 16×1, block 8: A = [108 ×4, 150 ×4], B = [108 ×4, 150, 237 ×3]
** (Q8: 108 = 27648, 150 = 38400, 237 = 60672).
** Outer 1 from (0, 65280):
**   A: 108 -> 0, 150 -> 1; μ = (27648, 38400), stable at it 2.
**   B it 1: 108 -> 0; 150, 237 -> 1. μ0 = 27648, μ1 = 256·861/4 = 55104.
**   B it 2: 150: d0 = 10752², d1 = 16704² -> 0; 237 -> 1.
**     μ0 = ⌊(256·582 + 2)/5⌋ = ⌊148994/5⌋ = 29798; μ1 = 60672.
**   B it 3: 108: d0 = 2150² -> 0; 150: d0 = 8602², d1 = 22272² -> 0;
**     237 -> 1. Stable: μ(B) = (29798, 60672).
**   Totals: cluster 0 S = 432 + 582 = 1014, n = 9: ⌊(259584 + 4)/9⌋ = 28843;
**     cluster 1 S = 600 + 711 = 1311, n = 7: ⌊(335616 + 3)/7⌋ = 47945.
** Outer 2 from G = (28843, 47945): 150 has d0 = 9557², d1 = 9545² -> 1;
**   108 -> 0, 237 -> 1. A reaches (27648, 38400) again, B retraces outer 1
**   from (27648, 55104) to (29798, 60672). The same totals: G' = G -> 2 outer.
** Neither block is flat: A's w = 0; B's w0 = 4·2150² + 8602² = 92484404, w1 = 0,
** ratio 30874² / (92484404/5) = 51.5. Neither is cleared: at outer 2,
** d(G) = 19102², A's d = 10752² (4d = 21504²), B's 30874².
** Output: A [0 ×4, 255 ×4]; B [0 ×4, 0, 255 ×3]. B's 150 is ink by its local
** centroids although G would call it white (9545 < 9557). */
static void test_local_not_global(void)
{
    static const uint8_t img[16] = {108, 108, 108, 108, 150, 150, 150, 150,
                                    108, 108, 108, 108, 150, 237, 237, 237};
    static const uint8_t want[16] = {0, 0, 0, 0, 255, 255, 255, 255,
                                     0, 0, 0, 0, 0, 255, 255, 255};
    expect("local not global", img, 16, 1, 1, 8, want, 2, 1);
}

/* Round half up, not floor, in the Q8 mean. 281×1, block 8 (every block
** 8×1, the last 1×1): 24 px of 5, 32 px of 81, 224 px of 238, then one of
** 143 (Q8 36608). Uniform blocks go wholly to the seed nearer their value and
** stay there, so only the lone 143 can change.
** Outer 1 from (0, 65280): 5, 81 -> 0; 238, 143 -> 1.
**   Cluster 0: S = 120 + 2592 = 2712, n = 56: ⌊(694272 + 28)/56⌋ = 12398
**     (694272/56 = 12397.71).
**   Cluster 1: S = 53312 + 143 = 53455, n = 225: ⌊(13684480 + 112)/225⌋ =
**     60820 (13684480/225 = 60819.91).
** Outer 2 from (12398, 60820): 143: d0 = 24210², d1 = 24212² -> 0; 81
**   (d0 = 8338², d1 = 40084²) -> 0; 238 -> 1. Cluster 0: S = 2855, n = 57:
**   ⌊(730880 + 28)/57⌋ = 12822; cluster 1: 238 -> 60928.
** Outer 3 from (12822, 60928): 143: d0 = 23786², d1 = 24320² -> 0. The same
**   totals: G' = G -> 3 outer iterations. Every block holds one value (an
**   empty cluster): none is flat. 143's block keeps (36608, 60928), white
**   kept from G: 4·24320² = 48640² >= d(G) = 48106², not cleared; 143 ends
**   as ink (the blocks of 5 and 81 likewise keep their splits).
** With floor instead, outer 1 gives (12397, 60819), 12397 + 60819 = 512·143:
** a tie, and 143 would stay white. */
static void test_rounding(void)
{
    enum { W = 281 };
    static uint8_t img[W], want[W];
    int i = 0;
    for (int k = 0; k < 24; k++, i++) {
        img[i] = 5;
        want[i] = 0;
    }
    for (int k = 0; k < 32; k++, i++) {
        img[i] = 81;
        want[i] = 0;
    }
    for (int k = 0; k < 224; k++, i++) {
        img[i] = 238;
        want[i] = 255;
    }
    img[i] = 143;
    want[i] = 0;
    expect("rounding", img, W, 1, 1, 8, want, 3, 1);
}

/* A blank block of textured paper: a flat block gives all its pixels to
** paper. One 8×1 block (every block size): 110, 125, 127, 127, 129, 129, 131,
** 146 (Q8: 28160, 32000, 32512, 33024, 33536, 37376).
** Outer 1, it 1 from (0, 65280): 110, 125, 127 -> 0; 129, 131, 146 -> 1.
**   μ0 = ⌊(256·489 + 2)/4⌋ = 31296, μ1 = ⌊(256·535 + 2)/4⌋ = 34240. it 2: 127
**   (d0 = 1216², d1 = 1728²) -> 0, 129 (d0 = 1728², d1 = 1216²) -> 1: stable.
**   w0 = 3136² + 704² + 2·1216² = 13287424, w1 the same by symmetry,
**   d = 2944² = 8667136: ratio 8667136 / (2·13287424/4) = 1.3, flat (and a
**   single mode). All eight pixels go to paper: G' = (0, 256·1024/8) =
**   (0, 32768) != G (cluster 0 empty keeps 0).
** Outer 2 from (0, 32768): every pixel (>= 110, nearer 128 than 0) -> 1;
**   μ = (0, 32768) at once, cluster 0 empty: not flat, G' = G -> 2 outer
**   iterations. Not cleared (d = d(G)); every pixel is nearer 32768: all white.
** With the first loop (every block adds both clusters) outer 1 gives
** G' = (31296, 34240), from which outer 2 finds the same split and G' = G;
** the nearest local centroid then makes half the paper ink:
** [0 ×4, 255 ×4]. */
static void test_blank_texture(void)
{
    static const uint8_t row[8] = {110, 125, 127, 127, 129, 129, 131, 146};
    static const uint8_t white[8] = {255, 255, 255, 255, 255, 255, 255, 255};
    static const uint8_t half[8] = {0, 0, 0, 0, 255, 255, 255, 255};
    uint8_t *rgb = to_rgb(row, sizeof row);
    for (int b = 0; b < 3; b++) {
        expect("blank texture", row, 8, 1, 1, block_sizes[b], white, 2, 1);
        if (rgb)
            expect("blank texture rgb", rgb, 8, 1, 3, block_sizes[b], white, 2, 1);
    }
    free(rgb);
    uint8_t old[8];
    uint8_t *outs[REF_HBK_RULES] = {[REF_HBK_LOCAL] = old};
    int converged = 0;
    int outer = ref_hbk_rules(row, 8, 1, 1, 8, REF_HBK_LOCAL_MAX, REF_HBK_GLOBAL_MAX, 0, outs, &converged, NULL);
    check(outer == 2 && converged == 1 && memcmp(old, half, sizeof old) == 0,
          "blank texture, first loop and local rule: want 2 outer iterations and the darker half ink");
}

/* A block cleared by the global centroids. 16×1, block 8: A = [0 ×4, 255 ×4],
** B = [104 ×4, 152 ×4] (Q8 26624, 38912).
** Outer 1 from (0, 65280): A sits on the seeds: μ(A) = (0, 65280). B: 104
**   (d0 = 26624², d1 = 38656²) -> 0, 152 (d0 = 38912², d1 = 26368²) -> 1;
**   μ(B) = (26624, 38912), stable. w = 0 in both: not flat. Totals:
**   cluster 0 {0 ×4, 104 ×4}: ⌊(256·416 + 4)/8⌋ = 13312; cluster 1
**   {255 ×4, 152 ×4}: ⌊(256·1628 + 4)/8⌋ = 52096. G' != G.
** Outer 2 from (13312, 52096): A: 0 -> 0, 255 (d0 = 51968², d1 = 13184²)
**   -> 1, μ(A) = (0, 65280) again. B: 104 (d0 = 13312², d1 = 25472²) -> 0,
**   152 (d0 = 25600², d1 = 13184²) -> 1, μ(B) = (26624, 38912) again. The same
**   totals: G' = G -> 2 outer iterations.
** Output, d(G) = 38784²: A's 4·65280² is more, A keeps [0 ×4, 255 ×4]; B's
** 4·12288² = 24576² is less: B is cleared, all white. By the nearest local
** centroid alone B would be [0 ×4, 255 ×4]. */
static void test_cleared_by_global(void)
{
    static const uint8_t row[16] = {0, 0, 0, 0, 255, 255, 255, 255, 104, 104, 104, 104, 152, 152, 152, 152};
    static const uint8_t want[16] = {0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
    expect("cleared by G", row, 16, 1, 1, 8, want, 2, 1);
    static const uint8_t split[8] = {0, 0, 0, 0, 255, 255, 255, 255};
    uint8_t local[16];
    uint8_t *outs[REF_HBK_RULES] = {[REF_HBK_LOCAL] = local};
    ref_hbk_rules(row, 16, 1, 1, 8, REF_HBK_LOCAL_MAX, REF_HBK_GLOBAL_MAX, 1, outs, NULL, NULL);
    check(memcmp(local, want, 8) == 0 && memcmp(local + 8, split, 8) == 0,
          "cleared by G: the local rule should keep B's split (0 for 104)");
}

/* A block cleared as a single mode, though its split is wide enough for G.
** 16×1, block 8: A = [40 ×4, 180 ×4], B = [28, 64, 64, 80, 80, 96, 96, 132]
** (Q8: 40 = 10240, 180 = 46080; B 7168, 16384, 20480, 24576, 33792).
** Outer 1 from (0, 65280): A: μ = (10240, 46080), w = 0, not flat. B: all
**   but 132 -> 0: μ0 = ⌊(256·508 + 3)/7⌋ = 18578, μ1 = 33792; it 2 (96:
**   d0 = 5998², d1 = 9216²) stable. w0 = 11410² + 2·2194² + 2·1902² + 2·5998²
**   = 219002588, w1 = 0, d = 15214² = 231465796: ratio 231465796·7 /
**   219002588 = 7.4, flat, not a single mode. B goes to paper: cluster 0
**   {40 ×4}: 10240; cluster 1 {180 ×4} and B: ⌊(256·1360 + 6)/12⌋ = 29013.
** Outer 2 from (10240, 29013): A again (10240, 46080). B: 28, 64 -> 0 (64:
**   d0 = 6144², d1 = 12629²), 80 and up -> 1 (80: d0 = 10240², d1 = 8533²):
**   μ0 = 256·156/3 = 13312, μ1 = ⌊(256·484 + 2)/5⌋ = 24781; it 2 (64:
**   d0 = 3072², d1 = 8397²; 80: d0 = 7168², d1 = 4301²) stable.
**   w0 = 6144² + 2·3072² = 56623104, w1 = 2·4301² + 2·205² + 9011² =
**   118279373, d = 11469² = 131537961: d n0 n1 = 1973069415 against
**   w0 n1 + w1 n0 = 637953639, ratio 3.09, a single mode (and flat). The same
**   totals: G' = G -> 2 outer iterations.
** Output: A kept, [0 ×4, 255 ×4]; B cleared, all white, although
** 4·11469² = 22938² >= d(G) = 18773²: without the single-mode test B would be
** [0, 0, 0, 255 ×5]. */
static void test_single_mode(void)
{
    static const uint8_t row[16] = {40, 40, 40, 40, 180, 180, 180, 180, 28, 64, 64, 80, 80, 96, 96, 132};
    static const uint8_t want[16] = {0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
    static const uint8_t split[8] = {0, 0, 0, 255, 255, 255, 255, 255};
    expect("single mode", row, 16, 1, 1, 8, want, 2, 1);
    uint8_t sep[16];
    uint8_t *outs[REF_HBK_RULES] = {[REF_HBK_SEPARATION] = sep};
    ref_hbk_rules(row, 16, 1, 1, 8, REF_HBK_LOCAL_MAX, REF_HBK_GLOBAL_MAX, 1, outs, NULL, NULL);
    check(memcmp(sep + 8, split, 8) == 0, "single mode: the separation test alone should keep B's split");
}

/* The cap paths, with small caps (the library's local-max and global-max).
**
** Local cap 1 on the image of test_moving_centroids (60 ×16, 130 ×8, 220 ×40):
** outer 1, it 1 from (0, 65280) gives μ' = (15360, 52480) != μ, so μ <- μ' and
** the cap is hit; one more assignment with (15360, 52480) sends 130 to 0
** (d0 = 17920², d1 = 19200²): μ(β) = (15360, 52480), accumulators {60, 130} /
** {220}, G' = (21333, 56320) != G. Outer 2, it 1 from (21333, 56320): the same
** labels, μ' = μ, converged; G' = G -> 2 outer iterations, rows 0–2 ink.
** μ(β) = (15360, 52480) is not flat: w0 = 8·17920², w1 = 40·3840², d = 37120²,
** ratio 1377894400 / (321126400/3 + 14745600) = 11.3.
** (Summing the labels of the last capped assignment instead, {60} / {130, 220},
** would give G' = (15360, 52480) and take 3 outer iterations.)
** Local cap 1 and global cap 1: stop after outer 1, not converged; the output
** uses μ(β) = (15360, 52480), not cleared (4·37120² >= 65280²), so 130 is
** ink (it would be white by G0's (0, 65280), the centroids before the last
** update).
**
** Global caps on test_global_pull's 9×1 image (local cap 50): after outer 1,
** μ(B) = (0, 35840) (cluster 0 empty keeps G0), not cleared by G = (0, 65280)
** (4·35840² >= 65280²), and 140 is white: [0, 255 ×7, 255], 1 iteration, not
** converged. After outer 2, μ(B) = (35840, 61600), not cleared by
** G = (25600, 61600) (4·25760² >= 36000²), 140 is ink,
** G' = (30720, 65280) != (25600, 61600): 2
** iterations, not converged. With cap 3 outer 3 finds G' = G: converged, as a
** convergence found in the last allowed iteration counts as convergence. */
static void test_caps(void)
{
    enum { W = 8, H = 8 };
    static uint8_t img[W * H], want[W * H];
    fill_rect(img, W, 0, 0, 8, 2, 60);
    fill_rect(img, W, 0, 2, 8, 1, 130);
    fill_rect(img, W, 0, 3, 8, 5, 220);
    fill_rect(want, W, 0, 0, 8, 3, 0);
    fill_rect(want, W, 0, 3, 8, 5, 255);
    for (int b = 0; b < 3; b++) {
        expect_caps("local cap 1", img, W, H, 1, block_sizes[b], 1, 100, want, 2, 1);
        expect_caps("local cap 1, global cap 1", img, W, H, 1, block_sizes[b], 1, 1, want, 1, 0);
    }

    static const uint8_t row[9] = {100, 255, 255, 255, 255, 255, 255, 255, 140};
    static const uint8_t after1[9] = {0, 255, 255, 255, 255, 255, 255, 255, 255};
    static const uint8_t after2[9] = {0, 255, 255, 255, 255, 255, 255, 255, 0};
    expect_caps("global cap 1", row, 9, 1, 1, 8, 50, 1, after1, 1, 0);
    expect_caps("global cap 2", row, 9, 1, 1, 8, 50, 2, after2, 2, 0);
    expect_caps("global cap 3", row, 9, 1, 1, 8, 50, 3, after2, 3, 1);
}

/* Gray input must equal the same image given as RGB with R = G = B: the same
** labels, outer iteration count and convergence flag. A noisy page (paper
** 170..249, strokes 10..89, a few mid grays) of a size no block divides. */
static void test_gray_equals_rgb(void)
{
    enum { W = 45, H = 37 };
    static uint8_t gray[W * H];
    uint32_t s = 12345;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            s = s * 1103515245u + 12345u;
            unsigned r = (s >> 16) % 80;
            int stroke = (x % 11 < 2) || (y % 9 == 4 && x > 5 && x < 30);
            gray[y * W + x] = (uint8_t)(stroke ? 10 + r : (r < 4 ? 100 + 10 * r : 170 + r));
        }
    }
    uint8_t *rgb = to_rgb(gray, sizeof gray);
    static uint8_t out_gray[W * H], out_rgb[W * H];
    if (!rgb) {
        check(0, "out of memory");
        return;
    }
    for (int b = 0; b < 3; b++) {
        int cg = -1, cr = -1;
        int og = ref_hbk(gray, W, H, 1, block_sizes[b], out_gray, &cg);
        int orgb = ref_hbk(rgb, W, H, 3, block_sizes[b], out_rgb, &cr);
        check(og >= 1 && og == orgb && cg == cr, "gray vs rgb: iterations or convergence differ");
        check(memcmp(out_gray, out_rgb, sizeof out_gray) == 0, "gray vs rgb: labels differ");
        int ink = 0;
        for (int i = 0; i < W * H; i++)
            ink += out_gray[i] == 0;
        /* Not all one label: the image does exercise both clusters. */
        check(ink > 0 && ink < W * H, "gray vs rgb: the test image came out uniform");
    }
    free(rgb);
}

/* The pass count on a uniform page, derived by hand. Gray 100 is nearer black
** than white: the first outer iteration's local k-means takes two passes (the
** black centroid moves to 100, then stays), the second starts from the moved
** global centroid and takes one; so 3 passes per block, and the 16x8 page has
** two blocks of 8. With local_max 1 the first iteration's cap adds its extra
** assignment instead: still 2 passes there. */
static void test_passes(void)
{
    uint8_t px[16 * 8], out[16 * 8];
    memset(px, 100, sizeof px);
    int conv = 0;
    int64_t passes = 0;
    int outer = ref_hbk_caps(px, 16, 8, 1, 8, 50, 100, out, &conv, &passes);
    char what[160];
    snprintf(what, sizeof what, "uniform 16x8, block 8: %d outer iterations, %lld passes; want 2 and 6", outer,
             (long long)passes);
    check(outer == 2 && conv == 1 && passes == 6, what);
    outer = ref_hbk_caps(px, 16, 8, 1, 8, 1, 100, out, &conv, &passes);
    snprintf(what, sizeof what, "uniform 16x8, block 8, local_max 1: %d outer iterations, %lld passes; want 2 and 6",
             outer, (long long)passes);
    check(outer == 2 && conv == 1 && passes == 6, what);
}

/* Bad arguments return -1 and leave the output alone. */
static void test_bad_args(void)
{
    uint8_t px[4] = {0, 255, 0, 255};
    uint8_t out[4] = {7, 7, 7, 7};
    int conv = 9;
    check(ref_hbk(px, 2, 2, 1, 12, out, &conv) == -1, "block 12 accepted");
    check(ref_hbk(px, 2, 2, 1, 64, out, &conv) == -1, "block 64 accepted");
    check(ref_hbk(px, 2, 2, 2, 8, out, &conv) == -1, "2 channels accepted");
    check(ref_hbk(px, 0, 2, 1, 8, out, &conv) == -1, "width 0 accepted");
    check(ref_hbk(px, 2, -1, 1, 8, out, &conv) == -1, "negative height accepted");
    check(out[0] == 7 && out[3] == 7 && conv == 9, "a rejected call wrote its outputs");
    check(ref_hbk_caps(px, 2, 2, 1, 8, 0, 100, out, &conv, NULL) == -1, "local cap 0 accepted");
    check(ref_hbk_caps(px, 2, 2, 1, 8, 50, 0, out, &conv, NULL) == -1, "global cap 0 accepted");
    check(out[0] == 7 && out[3] == 7 && conv == 9, "a rejected call wrote its outputs");
    check(ref_hbk(px, 2, 2, 1, 8, out, NULL) == 1, "converged may be NULL");
    uint8_t *none[REF_HBK_RULES] = {0};
    check(ref_hbk_rules(px, 2, 2, 1, 8, 50, 100, 1, none, &conv, NULL) == -1, "no output accepted");
}

int main(void)
{
    test_blank();
    test_black();
    test_text();
    test_one_pixel();
    test_tie();
    test_moving_centroids();
    test_global_pull();
    test_local_not_global();
    test_rounding();
    test_blank_texture();
    test_cleared_by_global();
    test_single_mode();
    test_caps();
    test_gray_equals_rgb();
    test_passes();
    test_bad_args();
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("reference HBK: all checks passed\n");
    return 0;
}
