/*
** reference_hbk.c — the test reference of HBK as docs/hbk.md describes it.
**
** Centroids are Q8 integers (256 · value) held in int64_t; sums and counts
** are uint64_t. Cluster 0 starts black and becomes ink, cluster 1 starts
** white and becomes background. The loops mirror the numbered steps of
** docs/hbk.md; nothing is hoisted or cached across them. Scatters are summed
** pixel by pixel, where the library expands them into sums of squares.
*/
#include "tests/reference_hbk.h"

#include <stdlib.h>

/* Two centroids, three channels each, Q8. */
typedef struct centroids {
    int64_t mu[2][3];
} centroids;

/* Per-cluster channel sums and member counts of one assignment. */
typedef struct accumulators {
    uint64_t sum[2][3];
    uint64_t count[2];
} accumulators;

/* What the output needs of a block from the last outer iteration: its final
** local centroids, the global centroids its local k-means started from, and
** whether its split is a single mode (§4). */
typedef struct block_result {
    centroids local;
    centroids start;
    int one_mode;
} block_result;

/* The image and the block geometry, passed around as one value. */
typedef struct image {
    const uint8_t *pixels;
    int width;
    int height;
    int channels;
    int block;
    int local_max;
    int64_t *passes; /* assign_block calls so far */
} image;

/* R, G, B of pixel (x, y); a gray pixel gives the same value three times. */
static void pixel_rgb(const image *img, int x, int y, int rgb[3])
{
    const uint8_t *p = img->pixels + ((size_t)y * (size_t)img->width + (size_t)x) * (size_t)img->channels;
    for (int c = 0; c < 3; c++)
        rgb[c] = img->channels == 1 ? p[0] : p[c];
}

/* §1: d(x, μ) = Σ_c (256·x_c − μ_c)². At most 3 · 65280² ≈ 1.3·10¹⁰. */
static int64_t distance(const int rgb[3], const int64_t mu[3])
{
    int64_t d = 0;
    for (int c = 0; c < 3; c++) {
        int64_t diff = 256 * (int64_t)rgb[c] - mu[c];
        d += diff * diff;
    }
    return d;
}

/* §1: label 1 (white) iff d(x, μ1) <= d(x, μ0), so ties go to white. */
static int nearest(const int rgb[3], const centroids *k)
{
    return distance(rgb, k->mu[1]) <= distance(rgb, k->mu[0]) ? 1 : 0;
}

/* §1: μ = ⌊(256·S + ⌊n/2⌋) / n⌋ for n > 0, the mean rounded half up. */
static int64_t q8_mean(uint64_t sum, uint64_t n)
{
    return (int64_t)((256 * sum + n / 2) / n);
}

/* New centroids from accumulators; a cluster without members keeps its old centroid. */
static void update(const accumulators *acc, const centroids *old, centroids *next)
{
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 3; c++)
            next->mu[k][c] = acc->count[k] == 0 ? old->mu[k][c] : q8_mean(acc->sum[k][c], acc->count[k]);
}

static int same(const centroids *a, const centroids *b)
{
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 3; c++)
            if (a->mu[k][c] != b->mu[k][c])
                return 0;
    return 1;
}

/* Assigns every pixel of block (bx, by) to its nearest centroid of `k` and
** sums the members of each cluster into `acc`. Edge blocks are clipped. */
static void assign_block(const image *img, int bx, int by, const centroids *k, accumulators *acc)
{
    *acc = (accumulators){0};
    (*img->passes)++;
    int x0 = bx * img->block, y0 = by * img->block;
    int x1 = x0 + img->block < img->width ? x0 + img->block : img->width;
    int y1 = y0 + img->block < img->height ? y0 + img->block : img->height;
    for (int y = y0; y < y1; y++) {
        for (int x = x0; x < x1; x++) {
            int rgb[3];
            pixel_rgb(img, x, y, rgb);
            int label = nearest(rgb, k);
            for (int c = 0; c < 3; c++)
                acc->sum[label][c] += (uint64_t)rgb[c];
            acc->count[label]++;
        }
    }
}

/* §2, local k-means of one block from the global centroids g, at most
** img->local_max iterations: the final local centroids go to *final, and
** *acc holds the sums of the labels nearest(*final). */
static void local_kmeans(const image *img, int bx, int by, const centroids *g, centroids *final,
                         accumulators *acc)
{
    centroids mu = *g;
    for (int it = 0; it < img->local_max; it++) {
        centroids next;
        assign_block(img, bx, by, &mu, acc);
        update(acc, &mu, &next);
        if (same(&next, &mu)) {
            /* The labels just summed are those of mu, the final centroids. */
            *final = mu;
            return;
        }
        mu = next;
    }
    /* Cap reached: mu was never used to label, so one more assignment is
    ** needed for the accumulators to match the final centroids. */
    assign_block(img, bx, by, &mu, acc);
    *final = mu;
}

/* |a − b|² of two Q8 centroids. */
static int64_t centroid_distance(const int64_t a[3], const int64_t b[3])
{
    int64_t d = 0;
    for (int c = 0; c < 3; c++)
        d += (a[c] - b[c]) * (a[c] - b[c]);
    return d;
}

/* §3: the scatter of each cluster of block (bx, by) under its final
** centroids k, Σ d(x, μ_label) over the block's pixels. */
static void scatter(const image *img, int bx, int by, const centroids *k, int64_t w[2])
{
    w[0] = w[1] = 0;
    int x0 = bx * img->block, y0 = by * img->block;
    int x1 = x0 + img->block < img->width ? x0 + img->block : img->width;
    int y1 = y0 + img->block < img->height ? y0 + img->block : img->height;
    for (int y = y0; y < y1; y++) {
        for (int x = x0; x < x1; x++) {
            int rgb[3];
            pixel_rgb(img, x, y, rgb);
            int label = nearest(rgb, k);
            w[label] += distance(rgb, k->mu[label]);
        }
    }
}

/* §3: whether both clusters of block (bx, by) have members and the squared
** distance between their centroids is under `ratio` times the sum of their
** mean scatters: d(μ0, μ1) < ratio (w0 / n0 + w1 / n1), multiplied out by
** n0 n1. Ratio 8: the block is flat; 4: its split is a single mode (§4). */
static int below_ratio(const image *img, int bx, int by, const centroids *k, const accumulators *acc, int ratio)
{
    uint64_t n0 = acc->count[0], n1 = acc->count[1];
    if (n0 == 0 || n1 == 0)
        return 0;
    int64_t w[2];
    scatter(img, bx, by, k, w);
    return centroid_distance(k->mu[0], k->mu[1]) * (int64_t)(n0 * n1) <
           ratio * (w[0] * (int64_t)n1 + w[1] * (int64_t)n0);
}

/* 1 (white) iff pixel rgb of a block with result b is white under `rule`. */
static int rule_white(ref_hbk_rule rule, const int rgb[3], const block_result *b)
{
    const centroids *k = &b->local, *g = &b->start;
    switch (rule) {
    case REF_HBK_LOCAL:
        return nearest(rgb, k);
    case REF_HBK_PAPER_BLOCK:
        return centroid_distance(k->mu[0], g->mu[1]) <= centroid_distance(k->mu[0], g->mu[0]) || nearest(rgb, k);
    case REF_HBK_BOTH:
        return nearest(rgb, k) || nearest(rgb, g);
    case REF_HBK_SEPARATION:
        return 4 * centroid_distance(k->mu[0], k->mu[1]) < centroid_distance(g->mu[0], g->mu[1]) ||
               nearest(rgb, k);
    case REF_HBK_DOCBIN:
        /* §4: cleared when 2·|μ0 − μ1| < |G0 − G1| or the split is a single mode. */
        return 4 * centroid_distance(k->mu[0], k->mu[1]) < centroid_distance(g->mu[0], g->mu[1]) || b->one_mode ||
               nearest(rgb, k);
    default:
        return 1;
    }
}

int ref_hbk(const uint8_t *pixels, int width, int height, int channels, int block, uint8_t *out,
            int *converged)
{
    return ref_hbk_caps(pixels, width, height, channels, block, REF_HBK_LOCAL_MAX, REF_HBK_GLOBAL_MAX,
                        out, converged, NULL);
}

int ref_hbk_caps(const uint8_t *pixels, int width, int height, int channels, int block,
                 int local_max, int global_max, uint8_t *out, int *converged, int64_t *passes)
{
    uint8_t *outs[REF_HBK_RULES] = {[REF_HBK_DOCBIN] = out};
    return ref_hbk_rules(pixels, width, height, channels, block, local_max, global_max, 1, outs, converged,
                         passes);
}

int ref_hbk_rules(const uint8_t *pixels, int width, int height, int channels, int block, int local_max,
                  int global_max, int flat_to_paper, uint8_t *const outs[REF_HBK_RULES], int *converged,
                  int64_t *passes)
{
    int any = 0;
    for (int r = 0; outs && r < REF_HBK_RULES; r++)
        any |= outs[r] != NULL;
    if (!pixels || !any || width < 1 || height < 1 || (channels != 1 && channels != 3) ||
        (block != 8 && block != 16 && block != 32) || local_max < 1 || global_max < 1)
        return -1;

    int64_t count = 0;
    image img = {pixels, width, height, channels, block, local_max, &count};
    int blocks_x = (width - 1) / block + 1;  /* partial edge blocks count */
    int blocks_y = (height - 1) / block + 1;
    block_result *result = malloc((size_t)blocks_x * (size_t)blocks_y * sizeof *result);
    if (!result)
        return -1;

    /* §3 step 1: G = (black, white) in Q8. */
    centroids g = {{{0, 0, 0}, {255 * 256, 255 * 256, 255 * 256}}};
    int done = 0;
    int outer = 0;
    while (outer < global_max && !done) {
        outer++;
        accumulators total = {0};
        for (int by = 0; by < blocks_y; by++) {
            for (int bx = 0; bx < blocks_x; bx++) {
                block_result *b = &result[(size_t)by * (size_t)blocks_x + (size_t)bx];
                accumulators acc;
                local_kmeans(&img, bx, by, &g, &b->local, &acc);
                b->start = g;
                b->one_mode = below_ratio(&img, bx, by, &b->local, &acc, 4);
                /* §3: a flat block gives every pixel to the paper sums. */
                int to_paper = flat_to_paper && below_ratio(&img, bx, by, &b->local, &acc, 8);
                for (int k = 0; k < 2; k++) {
                    int into = to_paper ? 1 : k;
                    for (int c = 0; c < 3; c++)
                        total.sum[into][c] += acc.sum[k][c];
                    total.count[into] += acc.count[k];
                }
            }
        }
        centroids next;
        update(&total, &g, &next);
        if (same(&next, &g))
            done = 1;  /* the local centroids of this iteration define the output */
        else
            g = next;
    }

    /* §4: each pixel by its block's final local centroids and the global
    ** centroids they started from. */
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            int rgb[3];
            pixel_rgb(&img, x, y, rgb);
            const block_result *b = &result[(size_t)(y / block) * (size_t)blocks_x + (size_t)(x / block)];
            for (int r = 0; r < REF_HBK_RULES; r++)
                if (outs[r])
                    outs[r][(size_t)y * (size_t)width + (size_t)x] = rule_white((ref_hbk_rule)r, rgb, b) ? 255 : 0;
        }
    }

    free(result);
    if (converged)
        *converged = done;
    if (passes)
        *passes = count;
    return outer;
}
