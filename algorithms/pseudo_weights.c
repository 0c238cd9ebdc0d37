/*
** pseudo_weights.c — the DIBCO pseudo-recall (R) and pseudo-precision (P) weight maps of a
** ground truth, as DIBCO's BinEvalWeights tool writes them.
**
** Method: K. Ntirogiannis, B. Gatos, I. Pratikakis, "Performance Evaluation Methodology for
** Historical Document Image Binarization", IEEE TIP 22(2), 2013: eqs. 2-3 (recall) and 10-11
** (precision); skeleton after Zhang-Suen and Lee-Chen (1992). How the weights enter the
** pseudo-metrics: docs/evaluation.md, "The metrics".
**
** Both sides run the same machinery about the same ink contour: a Chebyshev distance D from
** the contour, a skeleton, a per-skeleton "medial factor", and a normaliser taken over the
** nearest skeleton pixels. Several steps are not what a textbook version would do (searches
** clamped to a component's bounding box, last-writer-wins updates in component order, an
** end-point rule that reads one neighbour at a displaced position, a left-neighbour
** propagation). They are kept on purpose: the reference files are built that way, and the
** maps must equal them value for value.
**
** Degenerate inputs: no ink gives two zero maps (the paper's PW = 1 everywhere, stored as 0);
** all ink gives a zero P map; a lone pixel weighs 1 (1/2 on a 1x1 image, where the frame
** folds its neighbours onto it). Distances are held in 8 bits, as in the reference maps; here
** they saturate at DIST_MAX, which only strokes or gaps wider than about 500 pixels reach.
** Everything is integer arithmetic up to the final divisions, in a fixed order, so the maps do
** not depend on the machine or on threads.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/metrics.h"

/* Flags of a layer byte. The ink side uses all three; the background side only SKELETON. */
enum { INK = 1, CONTOUR = 2, SKELETON = 4 };

/* 8-bit distance range: OUTSIDE marks background beyond every stroke's reach (PW = 1), and
** a pixel takes part in the normalisation only when 0 < D < OUTSIDE. DIST_MAX leaves room for
** the +1 of a flat ridge. */
enum { OUTSIDE = 250, DIST_MAX = 248 };

/* An inclusive bounding box. */
typedef struct box {
    int x0, y0, x1, y1;
} box;

/* An 8-connected labelling. Components are numbered 1..count in the raster order of their
** first pixel, and every per-component pass visits them in that order, each one's pixels in
** raster order: several passes update in place, so this order is part of the result. */
typedef struct components {
    int count;
    int32_t *label;  /* per pixel: 0 = not a member, else 1..count */
    box *bounds;     /* [count + 1] */
    int32_t *first;  /* [count + 1] raster-first pixel */
    int32_t *start;  /* [count + 2] offsets into `pixels` */
    int32_t *pixels; /* members, by component then raster order */
} components;

static void components_free(components *cc)
{
    free(cc->label);
    free(cc->bounds);
    free(cc->first);
    free(cc->start);
    free(cc->pixels);
    memset(cc, 0, sizeof *cc);
}

static int is_member(const uint8_t *layer, size_t i, uint8_t bit, int want)
{
    return ((layer[i] & bit) != 0) == want;
}

/* Labels the pixels whose `bit` is set (want = 1) or clear (want = 0). */
static db_status label_components(const uint8_t *layer, uint8_t bit, int want, int w, int h,
                                  components *cc)
{
    size_t n = (size_t)w * (size_t)h;
    memset(cc, 0, sizeof *cc);
    cc->label = calloc(n, sizeof *cc->label);
    int32_t *stack = malloc(n * sizeof *stack);
    if (!cc->label || !stack) {
        free(stack);
        components_free(cc);
        return db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory labelling a %dx%d image", w, h);
    }
    int count = 0;
    for (size_t s = 0; s < n; s++) {
        if (cc->label[s] || !is_member(layer, s, bit, want))
            continue;
        count++;
        size_t top = 0;
        stack[top++] = (int32_t)s;
        cc->label[s] = count;
        while (top) {
            int32_t p = stack[--top];
            int px = p % w, py = p / w;
            for (int dy = -1; dy <= 1; dy++) {
                int ny = py + dy;
                if (ny < 0 || ny >= h)
                    continue;
                for (int dx = -1; dx <= 1; dx++) {
                    int nx = px + dx;
                    if (nx < 0 || nx >= w || (dx == 0 && dy == 0))
                        continue;
                    size_t q = (size_t)ny * w + nx;
                    if (!cc->label[q] && is_member(layer, q, bit, want)) {
                        cc->label[q] = count;
                        stack[top++] = (int32_t)q;
                    }
                }
            }
        }
    }
    free(stack);
    cc->count = count;
    cc->bounds = malloc((size_t)(count + 1) * sizeof *cc->bounds);
    cc->first = malloc((size_t)(count + 1) * sizeof *cc->first);
    cc->start = calloc((size_t)count + 2, sizeof *cc->start);
    cc->pixels = malloc((n ? n : 1) * sizeof *cc->pixels);
    if (!cc->bounds || !cc->first || !cc->start || !cc->pixels) {
        components_free(cc);
        return db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory labelling a %dx%d image", w, h);
    }
    for (int c = 1; c <= count; c++) {
        cc->first[c] = -1;
        cc->bounds[c] = (box){w, h, -1, -1};
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            int c = cc->label[i];
            if (!c)
                continue;
            cc->start[c + 1]++;
            box *b = &cc->bounds[c];
            if (cc->first[c] < 0)
                cc->first[c] = (int32_t)i;
            if (x < b->x0) b->x0 = x;
            if (x > b->x1) b->x1 = x;
            if (y < b->y0) b->y0 = y;
            if (y > b->y1) b->y1 = y;
        }
    for (int c = 1; c <= count + 1; c++)
        cc->start[c] += cc->start[c - 1];
    int32_t *fill = malloc((size_t)(count + 1) * sizeof *fill);
    if (!fill) {
        components_free(cc);
        return db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory labelling a %dx%d image", w, h);
    }
    memcpy(fill, cc->start, (size_t)(count + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        if (cc->label[i])
            cc->pixels[fill[cc->label[i]]++] = (int32_t)i;
    free(fill);
    return DB_OK;
}

/* ---- skeleton -------------------------------------------------------------------------- */

/* The 8-neighbourhood of (x, y) on `bit`, one bit per neighbour clockwise from north
** (N, NE, E, SE, S, SW, W, NW = bits 0..7). Outside the image counts as clear. */
static unsigned neighbour_code(const uint8_t *m, int w, int h, int x, int y, uint8_t bit)
{
    static const int dx[8] = {0, 1, 1, 1, 0, -1, -1, -1};
    static const int dy[8] = {-1, -1, 0, 1, 1, 1, 0, -1};
    unsigned code = 0;
    if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
        const uint8_t *p = m + (size_t)y * w + x;
        for (int k = 0; k < 8; k++)
            code |= (unsigned)((p[(ptrdiff_t)dy[k] * w + dx[k]] & bit) != 0) << k;
        return code;
    }
    for (int k = 0; k < 8; k++) {
        int nx = x + dx[k], ny = y + dy[k];
        if (nx >= 0 && ny >= 0 && nx < w && ny < h && (m[(size_t)ny * w + nx] & bit))
            code |= 1u << k;
    }
    return code;
}

/* Zhang-Suen (1984) deletion rule for sub-iteration `step` (0 or 1). */
static int zhang_suen_deletes(unsigned code, int step)
{
    int p[8], b = 0, a = 0;
    for (int k = 0; k < 8; k++) {
        p[k] = (code >> k) & 1;
        b += p[k];
    }
    for (int k = 0; k < 8; k++)
        a += !p[k] && p[(k + 1) & 7];
    if (b < 2 || b > 6 || a != 1)
        return 0;
    /* p[0] = N, p[2] = E, p[4] = S, p[6] = W */
    if (step == 0)
        return !(p[0] && p[2] && p[4]) && !(p[2] && p[4] && p[6]);
    return !(p[0] && p[2] && p[6]) && !(p[0] && p[4] && p[6]);
}

/* The neighbourhood codes (bit order of neighbour_code) whose centre the final sequential
** pass deletes: Lee & Chen (1992) Table 1 in the variant the reference files were built with,
** as a 256-bit set. */
static const uint32_t lee_chen_deletes[8] = {
    0x20d06020u, 0x20f00000u, 0x5b59a0aau, 0x0a5aa0aau,
    0x20a02020u, 0xa0a00000u, 0x5b5b2020u, 0x4850a021u,
};

/* Thins the `bit` layer of m in place: Zhang-Suen to a fixed point, then sequential Lee-Chen
** passes to a fixed point. Only pixels with a clear 8-neighbour can ever be deleted, so the
** parallel passes look at a frontier that grows as pixels go; the result equals full passes. */
static db_status thin(uint8_t *m, int w, int h, uint8_t bit)
{
    size_t n = (size_t)w * (size_t)h;
    uint8_t table[2][256];
    for (unsigned c = 0; c < 256; c++) {
        table[0][c] = (uint8_t)zhang_suen_deletes(c, 0);
        table[1][c] = (uint8_t)zhang_suen_deletes(c, 1);
    }
    int32_t *front = malloc(n * sizeof *front), *next = malloc(n * sizeof *next);
    int32_t *dead = malloc(n * sizeof *dead);
    uint8_t *queued = calloc(n, 1);
    if (!front || !next || !dead || !queued) {
        free(front), free(next), free(dead), free(queued);
        return db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory thinning a %dx%d image", w, h);
    }
    size_t nfront = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            if ((m[i] & bit) && neighbour_code(m, w, h, x, y, bit) != 0xffu) {
                front[nfront++] = (int32_t)i;
                queued[i] = 1;
            }
        }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int step = 0; step < 2; step++) {
            size_t ndead = 0;
            for (size_t k = 0; k < nfront; k++) {
                int32_t i = front[k];
                if ((m[i] & bit) && table[step][neighbour_code(m, w, h, i % w, i / w, bit)])
                    dead[ndead++] = i;
            }
            if (!ndead)
                continue;
            changed = 1;
            for (size_t k = 0; k < ndead; k++) {
                m[dead[k]] &= (uint8_t)~bit;
                queued[dead[k]] = 0;
            }
            size_t nnext = 0;
            for (size_t k = 0; k < nfront; k++)
                if (m[front[k]] & bit)
                    next[nnext++] = front[k];
            for (size_t k = 0; k < ndead; k++) {
                int x = dead[k] % w, y = dead[k] / w;
                for (int ny = y - 1; ny <= y + 1; ny++)
                    for (int nx = x - 1; nx <= x + 1; nx++) {
                        if (nx < 0 || ny < 0 || nx >= w || ny >= h)
                            continue;
                        size_t q = (size_t)ny * w + nx;
                        if ((m[q] & bit) && !queued[q]) {
                            queued[q] = 1;
                            next[nnext++] = (int32_t)q;
                        }
                    }
            }
            int32_t *t = front;
            front = next;
            next = t;
            nfront = nnext;
        }
    }
    free(front), free(next), free(dead), free(queued);

    /* Sequential: a deletion is seen by the pixels after it in the same pass. */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                size_t i = (size_t)y * w + x;
                if (!(m[i] & bit))
                    continue;
                unsigned c = neighbour_code(m, w, h, x, y, bit);
                if (lee_chen_deletes[c >> 5] >> (c & 31) & 1u) {
                    m[i] &= (uint8_t)~bit;
                    changed = 1;
                }
            }
    }
    return DB_OK;
}

/* Gives every component that thinned to nothing one skeleton pixel: its centroid rounded
** half up when that pixel belongs to it, else its first pixel. */
static void seed_empty_components(uint8_t *m, uint8_t bit, int w, const components *cc)
{
    for (int c = 1; c <= cc->count; c++) {
        int32_t a = cc->start[c], e = cc->start[c + 1];
        int has = 0;
        for (int32_t k = a; k < e && !has; k++)
            has = (m[cc->pixels[k]] & bit) != 0;
        if (has)
            continue;
        int64_t sx = 0, sy = 0, cnt = e - a;
        for (int32_t k = a; k < e; k++) {
            sx += cc->pixels[k] % w;
            sy += cc->pixels[k] / w;
        }
        int64_t cx = (2 * sx + cnt) / (2 * cnt), cy = (2 * sy + cnt) / (2 * cnt);
        size_t ci = (size_t)cy * w + (size_t)cx;
        m[cc->label[ci] == c ? ci : (size_t)cc->first[c]] |= bit;
    }
}

/* ---- distances and searches ------------------------------------------------------------ */

/* Sentinel of a distance with no seed anywhere. */
static const int32_t FAR = INT32_MAX / 2;

/* Exact chessboard distance from every pixel to the nearest pixel with `bit` set. */
static void chessboard(const uint8_t *m, uint8_t bit, int w, int h, int32_t *d)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            int32_t v = (m[i] & bit) ? 0 : FAR;
            if (v && y > 0) {
                if (d[i - w] + 1 < v) v = d[i - w] + 1;
                if (x > 0 && d[i - w - 1] + 1 < v) v = d[i - w - 1] + 1;
                if (x < w - 1 && d[i - w + 1] + 1 < v) v = d[i - w + 1] + 1;
            }
            if (v && x > 0 && d[i - 1] + 1 < v)
                v = d[i - 1] + 1;
            d[i] = v;
        }
    for (int y = h - 1; y >= 0; y--)
        for (int x = w - 1; x >= 0; x--) {
            size_t i = (size_t)y * w + x;
            int32_t v = d[i];
            if (!v)
                continue;
            if (y < h - 1) {
                if (d[i + w] + 1 < v) v = d[i + w] + 1;
                if (x < w - 1 && d[i + w + 1] + 1 < v) v = d[i + w + 1] + 1;
                if (x > 0 && d[i + w - 1] + 1 < v) v = d[i + w - 1] + 1;
            }
            if (x < w - 1 && d[i + 1] + 1 < v)
                v = d[i + 1] + 1;
            d[i] = v;
        }
}

/* Summed-area table of the pixels with `bit` set, (w+1) x (h+1). Unsigned wrap-around is
** harmless: every window count is below 2^32 and differences are taken modulo 2^32. */
static uint32_t *summed_area(const uint8_t *m, uint8_t bit, int w, int h)
{
    size_t sw = (size_t)w + 1;
    uint32_t *s = calloc(sw * ((size_t)h + 1), sizeof *s);
    if (!s)
        return NULL;
    for (int y = 0; y < h; y++) {
        uint32_t row = 0;
        for (int x = 0; x < w; x++) {
            row += (m[(size_t)y * w + x] & bit) != 0;
            s[(size_t)(y + 1) * sw + x + 1] = s[(size_t)y * sw + x + 1] + row;
        }
    }
    return s;
}

/* The square of radius r about (x, y), clamped to b. */
static box window_at(const box *b, int x, int y, int r)
{
    box v = {x - r, y - r, x + r, y + r};
    if (v.x0 < b->x0) v.x0 = b->x0;
    if (v.y0 < b->y0) v.y0 = b->y0;
    if (v.x1 > b->x1) v.x1 = b->x1;
    if (v.y1 > b->y1) v.y1 = b->y1;
    return v;
}

static uint32_t count_in(const uint32_t *s, int w, box v)
{
    size_t sw = (size_t)w + 1;
    return s[(size_t)(v.y1 + 1) * sw + v.x1 + 1] - s[(size_t)v.y0 * sw + v.x1 + 1] -
           s[(size_t)(v.y1 + 1) * sw + v.x0] + s[(size_t)v.y0 * sw + v.x0];
}

/* The first radius at which the square about (x, y), clamped to the component's box b,
** holds a feature pixel; -1 if the whole box holds none. The search is confined to the box
** and every feature pixel on that square takes part, not just the nearest one: the
** reference files depend on both. Window counts grow with the radius, so the radius is
** found by doubling and then bisecting; most answers are small. */
static int first_ring(const uint32_t *s, int w, const box *b, int x, int y)
{
    int full = x - b->x0;
    if (b->x1 - x > full) full = b->x1 - x;
    if (y - b->y0 > full) full = y - b->y0;
    if (b->y1 - y > full) full = b->y1 - y;
    int lo = 0, hi = 0;
    while (!count_in(s, w, window_at(b, x, y, hi))) {
        if (hi >= full)
            return -1;
        lo = hi + 1;
        hi = hi ? 2 * hi : 1;
        if (hi > full)
            hi = full;
    }
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (count_in(s, w, window_at(b, x, y, mid)))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The pixels on the border of the square of radius r about (x, y) clamped to b; returns
** how many. All feature pixels of that square lie on its border when r is the first ring. */
static size_t ring_cells(const box *b, int x, int y, int r, int w, int32_t *out)
{
    box v = window_at(b, x, y, r);
    size_t n = 0;
    for (int cx = v.x0; cx <= v.x1; cx++) {
        out[n++] = (int32_t)((size_t)v.y0 * w + cx);
        if (v.y1 != v.y0)
            out[n++] = (int32_t)((size_t)v.y1 * w + cx);
    }
    for (int cy = v.y0 + 1; cy < v.y1; cy++) {
        out[n++] = (int32_t)((size_t)cy * w + v.x0);
        if (v.x1 != v.x0)
            out[n++] = (int32_t)((size_t)cy * w + v.x1);
    }
    return n;
}

/* Index of the 4-neighbour (dx, dy) of (x, y), or the pixel itself beyond the frame. */
static size_t clamped(int w, int h, int x, int y, int dx, int dy)
{
    int nx = x + dx, ny = y + dy;
    if (nx < 0 || nx >= w)
        nx = x;
    if (ny < 0 || ny >= h)
        ny = y;
    return (size_t)ny * w + nx;
}

static int has_distance(uint8_t d)
{
    return d != 0 && d < OUTSIDE;
}

/* ---- the shared normalisation (eq. 3 on the ink, its counterpart on the background) ----- */

/* Raises D on a skeleton pixel by one where it equals all four 4-neighbours: a flat ridge,
** whose medial radius is one beyond its contour distance. In place, in component order. */
static void ridge_adjust(uint8_t *D, const uint8_t *layer, int w, int h, const components *cc)
{
    for (int32_t k = 0; k < cc->start[cc->count + 1]; k++) {
        int32_t i = cc->pixels[k];
        uint8_t c = D[i];
        if (!has_distance(c) || !(layer[i] & SKELETON))
            continue;
        int x = i % w, y = i / w;
        if (D[clamped(w, h, x, y, 0, -1)] == c && D[clamped(w, h, x, y, 0, 1)] == c &&
            D[clamped(w, h, x, y, -1, 0)] == c && D[clamped(w, h, x, y, 1, 0)] == c)
            D[i] = (uint8_t)(c + 1);
    }
}

/* The factor an end point of the skeleton inherits from its single skeleton neighbour, or
** -1. Neighbours beyond the frame fold onto the pixel itself (and so count as skeleton), and
** the south-east neighbour's factor is read in column 0 or 1 of the next row instead of
** beside the pixel: both as in the reference files. */
static int end_point_factor(const uint8_t *factor, const uint8_t *layer, int w, int h, int x, int y)
{
    int l = x > 0 ? -1 : 0, r = x < w - 1 ? 1 : 0, u = y > 0 ? -1 : 0, d = y < h - 1 ? 1 : 0;
    const int at[8][2] = {{0, u}, {0, d}, {l, 0}, {r, 0}, {l, u}, {r, d}, {l, d}, {r, u}};
    int count = 0, last = -1;
    for (int k = 0; k < 8; k++) {
        size_t q = (size_t)(y + at[k][1]) * w + (size_t)(x + at[k][0]);
        if (!(layer[q] & SKELETON))
            continue;
        count++;
        last = factor[k == 5 ? (size_t)(y + d) * w + (size_t)r : q];
    }
    return count == 1 ? last : -1;
}

/* Scratch shared by the ring searches. */
typedef struct scratch {
    int32_t *ring; /* room for one ring's cells */
    int32_t *dist; /* w*h */
} scratch;

/* From D on the pixels of `cc`, the medial factor (on skeleton pixels) and the normaliser
** N: for every pixel with a distance, the largest D*factor over the skeleton pixels of its
** first ring, then a left-to-right propagation that carries a stroke's value over pixels
** that disagree with all four neighbours. */
static db_status normalise(const uint8_t *D, const uint8_t *layer, int w, int h,
                           const components *cc, scratch *sc, uint8_t *factor, uint16_t *N)
{
    size_t n = (size_t)w * (size_t)h;
    uint32_t *sat = summed_area(layer, SKELETON, w, h);
    uint8_t *to_skeleton = malloc(n);
    if (!sat || !to_skeleton) {
        free(sat), free(to_skeleton);
        return db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory for a %dx%d image", w, h);
    }
    /* How far the skeleton is: a skeleton pixel off the contour counts as 1. */
    chessboard(layer, SKELETON, w, h, sc->dist);
    for (size_t i = 0; i < n; i++) {
        int32_t v = sc->dist[i];
        if ((layer[i] & SKELETON) && !(layer[i] & CONTOUR))
            v = 1;
        to_skeleton[i] = (uint8_t)(v > 255 ? 255 : v);
        factor[i] = (layer[i] & SKELETON) ? 1 : 0;
        N[i] = 0;
    }
    int32_t total = cc->start[cc->count + 1];
    int32_t *radius = sc->dist; /* the distances are in to_skeleton now */
    /* Cross-sections: each pixel writes the factor of the skeleton pixels on its first ring;
    ** the last writer wins. */
    for (int c = 1; c <= cc->count; c++)
        for (int32_t k = cc->start[c]; k < cc->start[c + 1]; k++) {
            int32_t i = cc->pixels[k];
            if (!has_distance(D[i]))
                continue;
            int x = i % w, y = i / w;
            int r = radius[i] = first_ring(sat, w, &cc->bounds[c], x, y);
            if (r < 0)
                continue;
            size_t m = ring_cells(&cc->bounds[c], x, y, r, w, sc->ring);
            for (size_t j = 0; j < m; j++) {
                int32_t q = sc->ring[j];
                if (layer[q] & SKELETON)
                    factor[q] = (uint8_t)(to_skeleton[i] >= D[q] ? D[q] + 1 : D[q]);
            }
        }
    /* End points take their neighbour's factor plus one. */
    for (int32_t k = 0; k < total; k++) {
        int32_t i = cc->pixels[k];
        if (!(layer[i] & SKELETON))
            continue;
        int v = end_point_factor(factor, layer, w, h, i % w, i / w);
        if (v > 0)
            factor[i] = (uint8_t)(v + 1);
    }
    for (int c = 1; c <= cc->count; c++)
        for (int32_t k = cc->start[c]; k < cc->start[c + 1]; k++) {
            int32_t i = cc->pixels[k];
            if (!has_distance(D[i]))
                continue;
            int r = radius[i];
            if (r < 0)
                continue;
            size_t m = ring_cells(&cc->bounds[c], i % w, i / w, r, w, sc->ring);
            int best = 0;
            for (size_t j = 0; j < m; j++) {
                int32_t q = sc->ring[j];
                if ((layer[q] & SKELETON) && D[q] * factor[q] > best)
                    best = D[q] * factor[q];
            }
            N[i] = (uint16_t)best;
        }
    /* Propagation along the stroke, in place. */
    for (int32_t k = 0; k < total; k++) {
        int32_t i = cc->pixels[k];
        if (!has_distance(D[i]))
            continue;
        int x = i % w, y = i / w;
        uint16_t up = N[clamped(w, h, x, y, 0, -1)], dn = N[clamped(w, h, x, y, 0, 1)];
        uint16_t lf = N[clamped(w, h, x, y, -1, 0)], rt = N[clamped(w, h, x, y, 1, 0)];
        uint16_t v = N[i];
        if (up && dn && lf && rt && v != up && v != dn && v != lf && v != rt)
            N[i] = N[i - 1]; /* x > 0 here: at x = 0 the left neighbour is the pixel itself */
    }
    free(sat);
    free(to_skeleton);
    return DB_OK;
}

/* ---- precision: the reach of the strokes and where components come close --------------- */

/* What the first ring of contour pixels about a background pixel says: the widest stroke
** on it (-1 when the component's box holds no contour) and whether it touches two ink
** components. */
typedef struct contact {
    int reach;
    int two;
} contact;

static contact contact_at(const uint32_t *sat, const uint8_t *ov, const uint8_t *width_map,
                          const int32_t *ink_label, int w, const box *b, int x, int y, int32_t *ring)
{
    contact t = {-1, 0};
    int r = first_ring(sat, w, b, x, y);
    if (r < 0)
        return t;
    t.reach = 0;
    int32_t first = 0;
    size_t m = ring_cells(b, x, y, r, w, ring);
    for (size_t j = 0; j < m; j++) {
        int32_t q = ring[j];
        if (!(ov[q] & CONTOUR))
            continue;
        if (width_map[q] > t.reach)
            t.reach = width_map[q];
        if (!first)
            first = ink_label[q];
        else if (ink_label[q] != first)
            t.two = 1;
    }
    return t;
}

/* ---- the two maps ----------------------------------------------------------------------- */

/* Both maps of a ground-truth ink mask (any non-zero byte is ink). */
db_status db_pseudo_weights(const uint8_t *gt, int width, int height, double *pweights, double *rweights)
{
    if (!gt || !pweights || !rweights || width < 1 || height < 1)
        return db_fail(DB_ERR_USAGE, "pseudo-weights: need a ground truth of at least 1x1 and two output maps");
    if ((int64_t)width * height > INT32_MAX / 2)
        return db_fail(DB_ERR_NOMEM, "pseudo-weights: a %dx%d ground truth is too large (at most %d pixels)",
                       width, height, INT32_MAX / 2);
    const int w = width, h = height;
    const size_t n = (size_t)w * (size_t)h;
    for (size_t i = 0; i < n; i++)
        pweights[i] = rweights[i] = 0.0;

    db_status st = DB_OK;
    components ink = {0}, bgc = {0};
    scratch sc = {0};
    uint8_t *ov = calloc(n, 1), *bg = calloc(n, 1), *D = calloc(n, 1), *factor = calloc(n, 1);
    uint8_t *width_map = calloc(n, 1), *merge = calloc(n, 1);
    uint16_t *N = calloc(n, sizeof *N);
    int32_t *contour_dist = malloc(n * sizeof *contour_dist);
    int32_t *cover = NULL;
    int *stroke = NULL;
    uint32_t *csat = NULL, *msat = NULL;
    uint8_t *Dp = D;  /* the background distances reuse the ink's array */
    uint16_t *NP = N; /* and the background normaliser the ink's */
    sc.dist = malloc(n * sizeof *sc.dist);
    sc.ring = malloc((2 * ((size_t)w + (size_t)h) + 8) * sizeof *sc.ring);
    int32_t *reach = sc.dist; /* per background pixel: its contact's reach, once normalised */
    if (!ov || !bg || !D || !factor || !width_map || !merge || !N || !contour_dist || !sc.dist || !sc.ring) {
        st = db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory for a %dx%d ground truth", w, h);
        goto done;
    }

    /* ---- recall: GW = D / NR (eq. 2) ---- */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            if (!gt[i])
                continue;
            ov[i] = INK | SKELETON;
            /* The frame counts as background. */
            if (y == 0 || !gt[i - w] || y == h - 1 || !gt[i + w] || x == 0 || !gt[i - 1] || x == w - 1 ||
                !gt[i + 1])
                ov[i] |= CONTOUR;
        }
    if ((st = label_components(ov, INK, 1, w, h, &ink)) != DB_OK)
        goto done;
    if (ink.count == 0)
        goto done; /* no ink: both maps stay zero */
    if ((st = thin(ov, w, h, SKELETON)) != DB_OK)
        goto done;
    seed_empty_components(ov, SKELETON, w, &ink);

    chessboard(ov, CONTOUR, w, h, contour_dist);
    for (size_t i = 0; i < n; i++) {
        if (!(ov[i] & INK))
            continue;
        int32_t d = contour_dist[i];
        D[i] = (ov[i] & CONTOUR) && (ov[i] & SKELETON) ? 1 : (uint8_t)(d > DIST_MAX ? DIST_MAX : d);
    }
    ridge_adjust(D, ov, w, h, &ink);
    if ((st = normalise(D, ov, w, h, &ink, &sc, factor, N)) != DB_OK)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (D[i] && N[i])
            rweights[i] = (double)D[i] / (double)N[i];

    /* Stroke width of each component: twice the mean factor over its skeleton (integer),
    ** carried on its contour for the precision side (held in 8 bits there). */
    stroke = calloc((size_t)ink.count + 1, sizeof *stroke);
    if (!stroke) {
        st = db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory for a %dx%d ground truth", w, h);
        goto done;
    }
    for (int c = 1; c <= ink.count; c++) {
        int64_t sum = 0, cnt = 0;
        for (int32_t k = ink.start[c]; k < ink.start[c + 1]; k++)
            if (ov[ink.pixels[k]] & SKELETON) {
                sum += factor[ink.pixels[k]];
                cnt++;
            }
        stroke[c] = cnt ? (int)(sum / cnt) * 2 : 0;
        for (int32_t k = ink.start[c]; k < ink.start[c + 1]; k++)
            if (ov[ink.pixels[k]] & CONTOUR)
                width_map[ink.pixels[k]] = (uint8_t)(stroke[c] > 255 ? 255 : stroke[c]);
    }

    /* ---- precision: PW - 1 = min(Dp / NP, 2) (eqs. 10-11) ---- */
    /* The background a stroke reaches: each component's box grown by twice its stroke width,
    ** marked through a 2-D difference array. */
    cover = calloc(((size_t)w + 1) * ((size_t)h + 1), sizeof *cover);
    if (!cover) {
        st = db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory for a %dx%d ground truth", w, h);
        goto done;
    }
    for (int c = 1; c <= ink.count; c++) {
        int64_t g = 2 * (int64_t)stroke[c];
        const box *b = &ink.bounds[c];
        int x0 = (int)(b->x0 - g < 0 ? 0 : b->x0 - g), y0 = (int)(b->y0 - g < 0 ? 0 : b->y0 - g);
        int x1 = (int)(b->x1 + g > w - 1 ? w - 1 : b->x1 + g), y1 = (int)(b->y1 + g > h - 1 ? h - 1 : b->y1 + g);
        size_t sw = (size_t)w + 1;
        cover[(size_t)y0 * sw + x0]++;
        cover[(size_t)y0 * sw + x1 + 1]--;
        cover[(size_t)(y1 + 1) * sw + x0]--;
        cover[(size_t)(y1 + 1) * sw + x1 + 1]++;
    }
    for (int y = 0; y <= h; y++)
        for (int x = 0; x <= w; x++) {
            size_t sw = (size_t)w + 1, i = (size_t)y * sw + x;
            if (x > 0) cover[i] += cover[i - 1];
            if (y > 0) cover[i] += cover[i - sw];
            if (x > 0 && y > 0) cover[i] -= cover[i - sw - 1];
        }

    if ((st = label_components(ov, INK, 0, w, h, &bgc)) != DB_OK)
        goto done;
    if (bgc.count == 0)
        goto done; /* all ink: the P map stays zero */
    /* The background skeleton; the frame row and column stay out of it. */
    for (int y = 1; y < h - 1; y++)
        for (int x = 1; x < w - 1; x++)
            if (!(ov[(size_t)y * w + x] & INK))
                bg[(size_t)y * w + x] = SKELETON;
    if ((st = thin(bg, w, h, SKELETON)) != DB_OK)
        goto done;
    seed_empty_components(bg, SKELETON, w, &bgc);

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            int32_t d = contour_dist[i];
            if (ov[i] & INK)
                Dp[i] = 0;
            else if (cover[(size_t)y * (w + 1) + x] > 0)
                Dp[i] = (uint8_t)(d > DIST_MAX ? DIST_MAX : d);
            else
                Dp[i] = OUTSIDE;
        }
    ridge_adjust(Dp, bg, w, h, &bgc);
    if ((st = normalise(Dp, bg, w, h, &bgc, &sc, factor, NP)) != DB_OK)
        goto done;
    /* The background normaliser sums an area; its rounded square root is a width again. */
    for (size_t i = 0; i < n; i++) {
        if (!has_distance(Dp[i]))
            continue;
        uint32_t v = NP[i], r = 0;
        while ((r + 1) * (r + 1) <= v)
            r++;
        NP[i] = (uint16_t)(v - r * r > r ? r + 1 : r);
    }

    /* Where two components meet within a pixel's reach, NP may undercut the stroke width
    ** (the merging case of eq. 11); mark those places first. */
    csat = summed_area(ov, CONTOUR, w, h);
    if (!csat) {
        st = db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory for a %dx%d ground truth", w, h);
        goto done;
    }
    for (int c = 1; c <= bgc.count; c++)
        for (int32_t k = bgc.start[c]; k < bgc.start[c + 1]; k++) {
            int32_t i = bgc.pixels[k];
            if (!has_distance(Dp[i]))
                continue;
            contact t = contact_at(csat, ov, width_map, ink.label, w, &bgc.bounds[c], i % w, i / w, sc.ring);
            reach[i] = t.reach;
            if (t.reach >= 0 && Dp[i] <= t.reach && t.two)
                merge[i] = (uint8_t)NP[i];
        }
    msat = summed_area(merge, 0xff, w, h);
    if (!msat) {
        st = db_fail(DB_ERR_NOMEM, "pseudo-weights: out of memory for a %dx%d ground truth", w, h);
        goto done;
    }
    for (int c = 1; c <= bgc.count; c++)
        for (int32_t k = bgc.start[c]; k < bgc.start[c + 1]; k++) {
            int32_t i = bgc.pixels[k];
            if (!has_distance(Dp[i]))
                continue;
            if (reach[i] < 0 || Dp[i] > reach[i])
                continue;
            int gap = reach[i] - Dp[i], np = reach[i];
            if (gap > 0) {
                box all = {0, 0, w - 1, h - 1};
                if (count_in(msat, w, window_at(&all, i % w, i / w, gap)) && NP[i] < reach[i])
                    np = NP[i];
            }
            if (np) {
                double v = (double)Dp[i] / (double)np;
                pweights[i] = v > 2.0 ? 2.0 : v;
            }
        }

done:
    components_free(&ink);
    components_free(&bgc);
    free(ov), free(bg), free(D), free(factor), free(width_map), free(merge), free(N);
    free(contour_dist), free(cover), free(stroke), free(csat), free(msat), free(sc.dist), free(sc.ring);
    return st;
}
