/*
** reference_dbs.c — plain-C reference of clipping-free DBS (see reference_dbs.h).
*/
#include "tests/reference_dbs.h"

#include <math.h>
#include <stdlib.h>

/* V(dy, dx) and CVV(dy, dx) of the layouts in reference_dbs.h. */
#define VAT(V, dy, dx) ((V)[((dy) + REF_DBS_W) * REF_DBS_TAPS + (dx) + REF_DBS_W])
#define CAT(C, dy, dx) ((C)[((dy) + REF_DBS_CW) * REF_DBS_CTAPS + (dx) + REF_DBS_CW])

uint32_t ref_dbs_hash(uint32_t index, uint32_t seed)
{
    uint32_t x = index * 0x9E3779B9u + seed;
    x = x ^ (x >> 16);
    x = x * 0x85EBCA6Bu;
    x = x ^ (x >> 13);
    x = x * 0xC2B2AE35u;
    x = x ^ (x >> 16);
    return x;
}

void ref_dbs_model(double sigma, int32_t V[81], int64_t *sv, int64_t CVV[289])
{
    double g[81];
    double sum = 0.0;
    for (int dy = -REF_DBS_W; dy <= REF_DBS_W; dy++)
        for (int dx = -REF_DBS_W; dx <= REF_DBS_W; dx++) {
            double r2 = (double)(dx * dx + dy * dy);
            VAT(g, dy, dx) = exp(-r2 / (2.0 * sigma * sigma));
            sum += VAT(g, dy, dx);
        }
    int64_t s = 0;
    for (int dy = -REF_DBS_W; dy <= REF_DBS_W; dy++)
        for (int dx = -REF_DBS_W; dx <= REF_DBS_W; dx++) {
            double v = VAT(g, dy, dx) / sum;
            VAT(V, dy, dx) = (int32_t)llround(1048576.0 * v);
            s += VAT(V, dy, dx);
        }
    *sv = s;

    /* CVV(d) = sum over x of V(x) V(x + d), both inside the 9x9 support. */
    for (int dy = -REF_DBS_CW; dy <= REF_DBS_CW; dy++)
        for (int dx = -REF_DBS_CW; dx <= REF_DBS_CW; dx++) {
            int64_t c = 0;
            for (int y = -REF_DBS_W; y <= REF_DBS_W; y++)
                for (int x = -REF_DBS_W; x <= REF_DBS_W; x++) {
                    int y2 = y + dy, x2 = x + dx;
                    if (y2 < -REF_DBS_W || y2 > REF_DBS_W || x2 < -REF_DBS_W || x2 > REF_DBS_W)
                        continue;
                    c += (int64_t)VAT(V, y, x) * VAT(V, y2, x2);
                }
            CAT(CVV, dy, dx) = c;
        }
}

void ref_dbs_init(const uint8_t *gray, int w, int h, const uint8_t *tarray, int m, int D, uint32_t seed,
                  uint8_t *b, uint8_t *frozen)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int i = y * w + x;
            int A = gray[i];
            if (A < D) {
                /* Shadow: a dot where A exceeds the level; the dots are frozen. */
                int L = tarray[(y % m) * m + (x % m)];
                b[i] = (A > L) ? 1 : 0;
                frozen[i] = (b[i] == 1) ? 1 : 0;
            } else if (A > 255 - D) {
                /* Highlight: the shadow rule on the inverted value, inverted. */
                int L = tarray[(y % m) * m + (x % m)];
                int Ainv = 255 - A;
                b[i] = (Ainv > L) ? 0 : 1;
                frozen[i] = (b[i] == 0) ? 1 : 0;
            } else {
                /* Mid-tone: random dither. */
                uint32_t r = ref_dbs_hash((uint32_t)i, seed);
                b[i] = ((int)(r % 255u) < A) ? 1 : 0;
                frozen[i] = 0;
            }
        }
}

void ref_dbs_error(const uint8_t *gray, const uint8_t *b, int w, int h, const int32_t V[81], int64_t sv,
                   const int64_t CVV[289], int64_t *C)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int64_t va = 0;
            for (int dy = -REF_DBS_W; dy <= REF_DBS_W; dy++)
                for (int dx = -REF_DBS_W; dx <= REF_DBS_W; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                        continue;
                    va += (int64_t)VAT(V, dy, dx) * gray[yy * w + xx];
                }
            int64_t cb = 0;
            for (int dy = -REF_DBS_CW; dy <= REF_DBS_CW; dy++)
                for (int dx = -REF_DBS_CW; dx <= REF_DBS_CW; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                        continue;
                    cb += CAT(CVV, dy, dx) * b[yy * w + xx];
                }
            C[y * w + x] = sv * va - 255 * cb;
        }
}

ref_dbs_i128 ref_dbs_energy(const uint8_t *gray, const uint8_t *b, int w, int h, const int32_t V[81],
                            int64_t sv)
{
    ref_dbs_i128 E = 0;
    for (int y = -REF_DBS_W; y < h + REF_DBS_W; y++)
        for (int x = -REF_DBS_W; x < w + REF_DBS_W; x++) {
            int64_t A = 0;
            if (y >= 0 && y < h && x >= 0 && x < w)
                A = gray[y * w + x];
            int64_t vb = 0;
            for (int dy = -REF_DBS_W; dy <= REF_DBS_W; dy++)
                for (int dx = -REF_DBS_W; dx <= REF_DBS_W; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                        continue;
                    vb += (int64_t)VAT(V, dy, dx) * b[yy * w + xx];
                }
            int64_t e = sv * A - 255 * vb;
            E += (ref_dbs_i128)e * e;
        }
    return E;
}

/* The 8 swap partners, in the order of docs/dbs.md §3. */
static const int ref_dbs_ndy[8] = { -1, -1, -1, 0, 0, 1, 1, 1 };
static const int ref_dbs_ndx[8] = { -1, 0, 1, -1, 1, -1, 0, 1 };

/* C(y) -= 255 a CVV(y - p) for the image pixels y with |y - p| <= 8. */
static void ref_dbs_update(ref_dbs_search *s, int px, int py, int64_t a)
{
    for (int dy = -REF_DBS_CW; dy <= REF_DBS_CW; dy++)
        for (int dx = -REF_DBS_CW; dx <= REF_DBS_CW; dx++) {
            int yy = py + dy, xx = px + dx;
            if (yy < 0 || yy >= s->h || xx < 0 || xx >= s->w)
                continue;
            s->C[yy * s->w + xx] -= 255 * a * CAT(s->CVV, dy, dx);
        }
}

int ref_dbs_visit(ref_dbs_search *s, int x, int y, int64_t *delta, int *qx, int *qy)
{
    int w = s->w, h = s->h;
    int p = y * w + x;
    if (s->frozen[p])
        return REF_DBS_NONE;

    int64_t cvv0 = CAT(s->CVV, 0, 0);
    int64_t a0 = (s->b[p] == 1) ? -1 : 1;
    int64_t a1 = -a0;

    /* The toggle first, then the swaps; a later candidate wins only if strictly better. */
    int64_t best = 255 * cvv0 - 2 * a0 * s->C[p];
    int best_kind = REF_DBS_TOGGLE;
    int best_n = -1;
    for (int n = 0; n < 8; n++) {
        int xx = x + ref_dbs_ndx[n], yy = y + ref_dbs_ndy[n];
        if (xx < 0 || xx >= w || yy < 0 || yy >= h)
            continue;
        int q = yy * w + xx;
        if (s->frozen[q] || s->b[q] == s->b[p])
            continue;
        int64_t d = 255 * (2 * cvv0 - 2 * CAT(s->CVV, ref_dbs_ndy[n], ref_dbs_ndx[n]))
                    - 2 * (a0 * s->C[p] + a1 * s->C[q]);
        if (d < best) {
            best = d;
            best_kind = REF_DBS_SWAP;
            best_n = n;
        }
    }
    if (best >= 0)
        return REF_DBS_NONE;

    int bx = x, by = y;
    s->b[p] = (uint8_t)(1 - s->b[p]);
    ref_dbs_update(s, x, y, a0);
    if (best_kind == REF_DBS_SWAP) {
        bx = x + ref_dbs_ndx[best_n];
        by = y + ref_dbs_ndy[best_n];
        int q = by * w + bx;
        s->b[q] = (uint8_t)(1 - s->b[q]);
        ref_dbs_update(s, bx, by, a1);
        s->swaps++;
    } else {
        s->toggles++;
    }
    if (delta)
        *delta = best;
    if (qx)
        *qx = bx;
    if (qy)
        *qy = by;
    return best_kind;
}

void ref_dbs_raster(ref_dbs_search *s, int max_passes, ref_dbs_stats *stats)
{
    int64_t t0 = s->toggles, s0 = s->swaps;
    int passes = 0, converged = 0;
    while (passes < max_passes) {
        int64_t changes = 0;
        for (int y = 0; y < s->h; y++)
            for (int x = 0; x < s->w; x++)
                if (ref_dbs_visit(s, x, y, NULL, NULL, NULL) != REF_DBS_NONE)
                    changes++;
        passes++;
        if (changes == 0) {
            converged = 1;
            break;
        }
    }
    if (stats) {
        stats->rounds = passes;
        stats->converged = converged;
        stats->toggles = s->toggles - t0;
        stats->swaps = s->swaps - s0;
    }
}

void ref_dbs_blocks(ref_dbs_search *s, int k, int max_rounds, ref_dbs_stats *stats)
{
    int64_t t0 = s->toggles, s0 = s->swaps;
    int nbx = (s->w + k - 1) / k, nby = (s->h + k - 1) / k;
    int rounds = 0, converged = 0;
    while (rounds < max_rounds) {
        int64_t changes = 0;
        for (int g = 0; g < 4; g++) {
            int pr = g / 2, pc = g % 2;
            for (int by = pr; by < nby; by += 2)
                for (int bx = pc; bx < nbx; bx += 2) {
                    int y1 = (by + 1) * k < s->h ? (by + 1) * k : s->h;
                    int x1 = (bx + 1) * k < s->w ? (bx + 1) * k : s->w;
                    for (int y = by * k; y < y1; y++)
                        for (int x = bx * k; x < x1; x++)
                            if (ref_dbs_visit(s, x, y, NULL, NULL, NULL) != REF_DBS_NONE)
                                changes++;
                }
        }
        rounds++;
        if (changes == 0) {
            converged = 1;
            break;
        }
    }
    if (stats) {
        stats->rounds = rounds;
        stats->converged = converged;
        stats->toggles = s->toggles - t0;
        stats->swaps = s->swaps - s0;
    }
}

int ref_dbs_halftone(const uint8_t *gray, int w, int h, const uint8_t *tarray, int m, int D, uint32_t seed,
                     double sigma, int block, int max_rounds, uint8_t *out, ref_dbs_stats *stats)
{
    if (w < 1 || h < 1 || block < 0 || (D > 0 && (!tarray || m < 1)))
        return -1;
    size_t n = (size_t)w * (size_t)h;
    uint8_t *b = malloc(n);
    uint8_t *frozen = malloc(n);
    int64_t *C = malloc(n * sizeof *C);
    if (!b || !frozen || !C) {
        free(b);
        free(frozen);
        free(C);
        return -1;
    }
    int32_t V[81];
    int64_t sv;
    int64_t CVV[289];
    ref_dbs_model(sigma, V, &sv, CVV);
    ref_dbs_init(gray, w, h, tarray, m, D, seed, b, frozen);
    ref_dbs_error(gray, b, w, h, V, sv, CVV, C);

    ref_dbs_search s = { .w = w, .h = h, .b = b, .frozen = frozen, .C = C, .CVV = CVV };
    if (block == 0)
        ref_dbs_raster(&s, max_rounds, stats);
    else
        ref_dbs_blocks(&s, block, max_rounds, stats);

    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)(255 * b[i]);
    free(b);
    free(frozen);
    free(C);
    return 0;
}
