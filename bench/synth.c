/*
** synth.c — the synthetic degraded-document generator (see synth.h).
**
** Integers only, so that a page is the same bytes on every machine: smooth
** fields and weights are fixed point with ONE = 4096, glyph geometry is in
** 1/SUB pixel, and every random number comes from splitmix64, either as a
** stream (text, stain placement) or hashed from a position (grain, noise).
** The page is built in three steps: the glyphs are drawn into the ground
** truth, the paper and its degradations are composed row by row around that
** mask, and the blur and the noise are applied to the finished page.
*/
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "bench/synth.h"

/* Fixed-point scales. */
enum {
    ONE = 4096,  /* 1.0 of fields, blend weights, light factors and ink loss */
    SUB = 256,   /* glyph coordinates are in 1/SUB pixel */
    UNITS = 64   /* glyph design units per x-height */
};

/* Sizes of the glyph set. */
enum {
    MAX_PRIMS = 12,            /* strokes in one glyph, serifs included */
    MAX_WORD = 12,             /* glyphs in one word, punctuation included */
    LOWER_COUNT = 26,          /* x-height letters, with ascenders and descenders */
    UPPER_COUNT = 12,          /* capitals, at the start of sentences and in headings */
    GLYPH_PERIOD = LOWER_COUNT + UPPER_COUNT,
    GLYPH_COMMA,
    GLYPH_COUNT
};

/* Limits that keep every intermediate value inside its integer type. */
enum {
    MAX_BLUR = 10,           /* 4^10 * 255 still fits the 32-bit blur sums */
    MAX_STROKE = 255,        /* pen masks are at most this many rows */
    MAX_LINE_HEIGHT = 10000, /* keeps glyph curves' fixed-point sums inside 64 bits */
    BACK_SCALE = 4,          /* the other side's text is kept at 1/4 resolution: it is blurred anyway */
    BACK_BLUR = 2            /* binomial blur of that copy, in its own pixels */
};

/* Independent random streams, one per part of the page, so that switching a
** degradation on or off never changes the text or another degradation. */
typedef enum stream {
    STREAM_TEXT = 1,
    STREAM_BACK_TEXT,
    STREAM_BACK_PLACE,
    STREAM_LIGHT,
    STREAM_LIGHT_SLOPE,
    STREAM_FADE,
    STREAM_FADE_FINE,
    STREAM_GRAIN_FINE,
    STREAM_GRAIN_MEDIUM,
    STREAM_GRAIN_COARSE,
    STREAM_STAINS,
    STREAM_NOISE,
    STREAM_PHOTO_SKY,
    STREAM_PHOTO_HILLS,
    STREAM_PHOTO_GRASS,
    STREAM_PHOTO_DISCS
} stream;

static const uint64_t golden = 0x9e3779b97f4a7c15u;

/* ---- Random numbers ---------------------------------------------------- */

/* splitmix64's finalizer: a bijection that scatters every input bit. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t stream_key(uint32_t seed, stream s)
{
    return mix64((((uint64_t)seed << 8) | (uint64_t)s) * golden + 0x243f6a8885a308d3u);
}

/* The value at position `i` of the stream `key`, without walking the stream. */
static uint64_t hash_at(uint64_t key, uint64_t i)
{
    return mix64(key + i * golden);
}

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r)
{
    r->state += golden;
    return mix64(r->state);
}

/* Uniform in lo..hi (hi >= lo), by multiplication rather than modulo. */
static int rng_range(rng *r, int lo, int hi)
{
    uint64_t span = (uint64_t)((int64_t)hi - lo + 1);
    return (int)(lo + (int64_t)(((rng_next(r) >> 32) * span) >> 32));
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* Floor division for a positive divisor; C's division truncates towards zero. */
static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t isqrt(int64_t n)
{
    if (n <= 0)
        return 0;
    uint64_t x = (uint64_t)n, r = 0, bit = (uint64_t)1 << 62;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return (int64_t)r;
}

/* ---- Smooth fields ----------------------------------------------------- */

/* Values 0..ONE on a grid of cell_w x cell_h pixel cells, blended with
** smoothstep weights so that the field has no creases. Coarse fields keep
** their nodes; fine ones (paper grain) hash them from their position, so
** that a huge page needs no node array. */
typedef struct field {
    int cell_w, cell_h;
    int nx, ny;        /* nodes across and down */
    int *nodes;        /* nx * ny values 0..ONE, or NULL: hashed from key */
    uint64_t key;
    int *weight_x;     /* smoothstep weight of each offset within a cell */
    int *weight_y;
} field;

static void smooth_weights(int *w, int cell)
{
    for (int o = 0; o < cell; o++) {
        int64_t t = (int64_t)o * ONE / cell;
        w[o] = (int)(t * t * (3 * ONE - 2 * t) / ((int64_t)ONE * ONE));
    }
}

static void field_free(field *f)
{
    free(f->nodes);
    free(f->weight_x);
    free(f->weight_y);
    memset(f, 0, sizeof *f);
}

static db_status field_init(field *f, int width, int height, int cell_w, int cell_h, uint64_t key,
                            int stored)
{
    memset(f, 0, sizeof *f);
    f->cell_w = max_int(cell_w, 1);
    f->cell_h = max_int(cell_h, 1);
    f->nx = (width - 1) / f->cell_w + 2;
    f->ny = (height - 1) / f->cell_h + 2;
    f->key = key;
    f->weight_x = malloc((size_t)f->cell_w * sizeof *f->weight_x);
    f->weight_y = malloc((size_t)f->cell_h * sizeof *f->weight_y);
    if (stored)
        f->nodes = malloc((size_t)f->nx * (size_t)f->ny * sizeof *f->nodes);
    if (!f->weight_x || !f->weight_y || (stored && !f->nodes)) {
        field_free(f);
        return db_fail(DB_ERR_NOMEM, "synthetic page: out of memory for a %dx%d field", width, height);
    }
    smooth_weights(f->weight_x, f->cell_w);
    smooth_weights(f->weight_y, f->cell_h);
    if (stored)
        for (int j = 0; j < f->ny; j++)
            for (int i = 0; i < f->nx; i++)
                f->nodes[(size_t)j * f->nx + i] = (int)(hash_at(key, (uint64_t)j << 32 | (uint32_t)i) >> 52);
    return DB_OK;
}

/* Stretches stored nodes to exactly 0..ONE, so that a level means what it says. */
static void field_normalize(field *f)
{
    size_t n = (size_t)f->nx * f->ny;
    int lo = INT_MAX, hi = INT_MIN;
    for (size_t k = 0; k < n; k++) {
        lo = min_int(lo, f->nodes[k]);
        hi = max_int(hi, f->nodes[k]);
    }
    for (size_t k = 0; k < n; k++)
        f->nodes[k] = hi > lo ? (int)((int64_t)(f->nodes[k] - lo) * ONE / (hi - lo)) : 0;
}

static int field_node(const field *f, int i, int j)
{
    if (f->nodes)
        return f->nodes[(size_t)j * f->nx + i];
    return (int)(hash_at(f->key, (uint64_t)j << 32 | (uint32_t)i) >> 52);
}

/* One row of the field; `tmp` holds nx values. */
static void field_row(const field *f, int y, int width, int *out, int *tmp)
{
    int j = y / f->cell_h;
    int wy = f->weight_y[y - j * f->cell_h];
    int columns = (width - 1) / f->cell_w + 2;
    for (int i = 0; i < columns; i++)
        tmp[i] = (field_node(f, i, j) * (ONE - wy) + field_node(f, i, j + 1) * wy) >> 12;
    int i = 0, o = 0;
    for (int x = 0; x < width; x++) {
        int wx = f->weight_x[o];
        out[x] = (tmp[i] * (ONE - wx) + tmp[i + 1] * wx) >> 12;
        if (++o == f->cell_w) {
            o = 0;
            i++;
        }
    }
}

/* ---- Glyphs ------------------------------------------------------------ */

typedef enum prim_kind { PRIM_CURVE, PRIM_DOT } prim_kind;

/* A stroke in glyph units (x right, y up from the baseline, x-height UNITS):
** a quadratic Bézier curve from (x0,y0) bent towards (x1,y1) to (x2,y2), or a
** filled dot of radius x1 around (x0,y0). */
typedef struct prim {
    prim_kind kind;
    int x0, y0, x1, y1, x2, y2;
} prim;

typedef struct glyph {
    int width; /* of the pen's centre line, in units */
    int n;
    prim p[MAX_PRIMS];
} glyph;

/* Letter skeletons, loosely after the Latin alphabet so that a page reads as
** text at a glance; each page draws its own proportions and mirror images. */
typedef enum shape {
    SHAPE_O, SHAPE_C, SHAPE_E, SHAPE_N, SHAPE_H, SHAPE_M, SHAPE_R, SHAPE_U, SHAPE_I, SHAPE_L,
    SHAPE_T, SHAPE_F, SHAPE_J, SHAPE_BOWL_STEM, SHAPE_A, SHAPE_V, SHAPE_W, SHAPE_X, SHAPE_Y,
    SHAPE_K, SHAPE_Z, SHAPE_S, SHAPE_COUNT
} shape;

static void add_curve(glyph *g, int x0, int y0, int x1, int y1, int x2, int y2)
{
    if (g->n < MAX_PRIMS)
        g->p[g->n++] = (prim){ PRIM_CURVE, x0, y0, x1, y1, x2, y2 };
}

static void add_line(glyph *g, int x0, int y0, int x2, int y2)
{
    add_curve(g, x0, y0, (x0 + x2) / 2, (y0 + y2) / 2, x2, y2);
}

static void add_dot(glyph *g, int x, int y, int r)
{
    if (g->n < MAX_PRIMS)
        g->p[g->n++] = (prim){ PRIM_DOT, x, y, r, 0, 0, 0 };
}

/* `count` quarters of an oval, counter-clockwise from quarter `first`
** (0: right to top, 1: top to left, 2: left to bottom, 3: bottom to right). */
static void add_oval(glyph *g, int cx, int cy, int rx, int ry, int first, int count)
{
    static const int ex[4] = { 1, 0, -1, 0 }, ey[4] = { 0, 1, 0, -1 };
    for (int k = first; k < first + count; k++) {
        int a = k & 3, b = (k + 1) & 3;
        add_curve(g, cx + ex[a] * rx, cy + ey[a] * ry, cx + (ex[a] + ex[b]) * rx,
                  cy + (ey[a] + ey[b]) * ry, cx + ex[b] * rx, cy + ey[b] * ry);
    }
}

/* Draws skeleton `s` between the baseline and the body top t, with ascender
** line a and descender line d (capitals: a == t, d == 0). */
static void make_shape(glyph *g, shape s, rng *r, int t, int a, int d)
{
    int m = t / 2, w = 0;
    g->n = 0;
    switch (s) {
    case SHAPE_O:
        w = rng_range(r, 40, 54);
        add_oval(g, w / 2, m, w / 2, m, 0, 4);
        break;
    case SHAPE_C:
        w = rng_range(r, 34, 46);
        add_oval(g, w / 2, m, w / 2, m, 1, 2);
        add_curve(g, w / 2, t, w * 7 / 8, t, w, t * 3 / 4);
        add_curve(g, w / 2, 0, w * 7 / 8, 0, w, t / 4);
        break;
    case SHAPE_E:
        w = rng_range(r, 36, 48);
        add_oval(g, w / 2, m, w / 2, m, 0, 3);
        add_line(g, 0, m, w, m);
        add_curve(g, w / 2, 0, w * 7 / 8, 0, w, t / 5);
        break;
    case SHAPE_N:
    case SHAPE_H:
        w = rng_range(r, 36, 46);
        add_line(g, 0, 0, 0, s == SHAPE_H ? a : t);
        add_curve(g, 0, t * 3 / 4, w / 5, t, w / 2, t);
        add_curve(g, w / 2, t, w, t, w, t / 2);
        add_line(g, w, t / 2, w, 0);
        break;
    case SHAPE_M:
        w = rng_range(r, 64, 80);
        add_line(g, 0, 0, 0, t);
        for (int k = 0; k < 2; k++) {
            int x = k * (w / 2), h = w / 2;
            add_curve(g, x, t * 3 / 4, x + h / 5, t, x + h / 2, t);
            add_curve(g, x + h / 2, t, x + h, t, x + h, t / 2);
            add_line(g, x + h, t / 2, x + h, 0);
        }
        break;
    case SHAPE_R:
        w = rng_range(r, 26, 34);
        add_line(g, 0, 0, 0, t);
        add_curve(g, 0, t * 5 / 8, w / 4, t, w, t * 7 / 8);
        break;
    case SHAPE_U:
        w = rng_range(r, 36, 46);
        add_line(g, 0, t, 0, t / 2);
        add_curve(g, 0, t / 2, 0, 0, w / 2, 0);
        add_curve(g, w / 2, 0, w, 0, w, t / 4);
        add_line(g, w, t, w, 0);
        break;
    case SHAPE_I:
        w = rng_range(r, 6, 10);
        add_line(g, w / 2, 0, w / 2, t);
        if (a - t >= 16)
            add_dot(g, w / 2, t + (a - t) * 2 / 3, 6);
        break;
    case SHAPE_L:
        w = rng_range(r, 8, 20);
        if (rng_range(r, 0, 1)) {
            add_line(g, 0, a, 0, t / 4);
            add_curve(g, 0, t / 4, 0, 0, w, 2);
        } else {
            add_line(g, w / 2, 0, w / 2, a);
        }
        break;
    case SHAPE_T:
        w = rng_range(r, 22, 30);
        add_line(g, w / 3, t + (a - t) / 2, w / 3, t / 5);
        add_curve(g, w / 3, t / 5, w / 3, 0, w, 3);
        add_line(g, 0, t * 15 / 16, w, t * 15 / 16);
        break;
    case SHAPE_F:
        w = rng_range(r, 22, 32);
        add_line(g, w / 3, 0, w / 3, a - 14);
        add_curve(g, w / 3, a - 14, w / 3, a, w, a - 6);
        add_line(g, 0, t * 15 / 16, w * 3 / 4, t * 15 / 16);
        break;
    case SHAPE_J:
        w = rng_range(r, 16, 24);
        add_line(g, w * 2 / 3, t, w * 2 / 3, d / 2);
        add_curve(g, w * 2 / 3, d / 2, w * 2 / 3, d, 0, d * 3 / 4);
        if (a - t >= 16)
            add_dot(g, w * 2 / 3, t + (a - t) * 2 / 3, 6);
        break;
    case SHAPE_BOWL_STEM:
        w = rng_range(r, 40, 52);
        add_oval(g, w / 2, m, w / 2, m, 0, 4);
        if (rng_range(r, 0, 1))
            add_line(g, w, 0, w, a);
        else
            add_line(g, w, t, w, d);
        break;
    case SHAPE_A:
        w = rng_range(r, 34, 44);
        add_oval(g, w / 2, t * 3 / 10, w / 2, t * 3 / 10, 0, 4);
        add_line(g, w, 0, w, t * 3 / 4);
        add_curve(g, w, t * 3 / 4, w, t, w / 2, t);
        add_curve(g, w / 2, t, w / 5, t, w / 8, t * 3 / 4);
        break;
    case SHAPE_V:
        w = rng_range(r, 36, 48);
        add_line(g, 0, t, w / 2, 0);
        add_line(g, w / 2, 0, w, t);
        break;
    case SHAPE_W:
        w = rng_range(r, 60, 76);
        for (int k = 0; k < 4; k++)
            add_line(g, k * w / 4, k % 2 ? 0 : t, (k + 1) * w / 4, k % 2 ? t : 0);
        break;
    case SHAPE_X:
        w = rng_range(r, 34, 44);
        add_line(g, 0, 0, w, t);
        add_line(g, 0, t, w, 0);
        break;
    case SHAPE_Y:
        w = rng_range(r, 36, 46);
        add_line(g, 0, t, w / 2, 0);
        add_line(g, w, t, w / 2 + w * d / (2 * t), d);
        break;
    case SHAPE_K:
        w = rng_range(r, 34, 42);
        add_line(g, 0, 0, 0, a);
        add_line(g, w, t, 0, t * 3 / 8);
        add_line(g, w / 4, t / 2, w, 0);
        break;
    case SHAPE_Z:
        w = rng_range(r, 32, 42);
        add_line(g, 0, t, w, t);
        add_line(g, w, t, 0, 0);
        add_line(g, 0, 0, w, 0);
        break;
    case SHAPE_S:
    case SHAPE_COUNT:
        w = rng_range(r, 30, 40);
        add_curve(g, w - 2, t * 13 / 16, w * 3 / 4, t, w / 2, t);
        add_curve(g, w / 2, t, 0, t, 0, t * 3 / 4);
        add_curve(g, 0, t * 3 / 4, 0, m, w / 2, m);
        add_curve(g, w / 2, m, w, m, w, t / 4);
        add_curve(g, w, t / 4, w, 0, w / 2, 0);
        add_curve(g, w / 2, 0, w / 4, 0, 2, t * 3 / 16);
        break;
    }
    g->width = w;
}

static void mirror_x(int *x, int width)
{
    *x = width - *x;
}

/* A letter: a skeleton, widened for capitals, sometimes mirrored, with serifs
** on the feet (and a flag on the top) of its stems when the page is serif. */
static void make_glyph(glyph *g, shape s, rng *r, int capital, int serif)
{
    int t = capital ? 92 : UNITS, a = capital ? 92 : 96, d = capital ? 0 : -34;
    make_shape(g, s, r, t, a, d);
    int mirror = rng_range(r, 0, 2) == 0;
    int stretch = capital ? 5 : 4;
    g->width = g->width * stretch / 4;
    for (int k = 0; k < g->n; k++) {
        prim *q = &g->p[k];
        q->x0 = q->x0 * stretch / 4;
        q->x2 = q->x2 * stretch / 4;
        if (q->kind == PRIM_CURVE)
            q->x1 = q->x1 * stretch / 4;
        if (mirror) {
            mirror_x(&q->x0, g->width);
            mirror_x(&q->x2, g->width);
            if (q->kind == PRIM_CURVE)
                mirror_x(&q->x1, g->width);
        }
    }
    if (!serif)
        return;
    int stems = g->n;
    for (int k = 0; k < stems; k++) {
        prim q = g->p[k];
        if (q.kind != PRIM_CURVE || q.x0 != q.x2 || q.y0 == q.y2)
            continue;
        int low = min_int(q.y0, q.y2), high = max_int(q.y0, q.y2);
        if (low == 0 || low == d)
            add_line(g, q.x0 - 10, low, q.x0 + 10, low);
        if (high == a || high == t)
            add_line(g, q.x0 - 10, high - 4, q.x0, high);
    }
}

static void make_alphabet(glyph *alphabet, rng *r, int serif)
{
    shape shapes[LOWER_COUNT];
    for (int i = 0; i < LOWER_COUNT; i++)
        shapes[i] = i < SHAPE_COUNT ? (shape)i : (shape)rng_range(r, 0, SHAPE_COUNT - 1);
    for (int i = LOWER_COUNT - 1; i > 0; i--) {
        int j = rng_range(r, 0, i);
        shape tmp = shapes[i];
        shapes[i] = shapes[j];
        shapes[j] = tmp;
    }
    for (int i = 0; i < LOWER_COUNT; i++)
        make_glyph(&alphabet[i], shapes[i], r, 0, serif);
    for (int i = 0; i < UPPER_COUNT; i++)
        make_glyph(&alphabet[LOWER_COUNT + i], (shape)rng_range(r, 0, SHAPE_COUNT - 1), r, 1, serif);
    glyph *period = &alphabet[GLYPH_PERIOD], *comma = &alphabet[GLYPH_COMMA];
    period->n = comma->n = 0;
    period->width = 8;
    add_dot(period, 4, 5, 6);
    comma->width = 10;
    add_dot(comma, 4, 6, 6);
    add_curve(comma, 7, 2, 7, -8, 0, -16);
}

/* ---- Drawing ----------------------------------------------------------- */

/* Where glyphs are drawn: the ground truth (bytes, 0 = ink), or the packed
** bit mask of the other side's text (1 = ink). */
typedef struct canvas {
    uint8_t *data;
    int width, height;
    size_t stride;
    int packed;
} canvas;

static void fill_span(const canvas *c, int y, int x0, int x1)
{
    if (y < 0 || y >= c->height)
        return;
    x0 = max_int(x0, 0);
    x1 = min_int(x1, c->width - 1);
    if (x0 > x1)
        return;
    uint8_t *row = c->data + (size_t)y * c->stride;
    if (!c->packed) {
        memset(row + x0, 0, (size_t)(x1 - x0 + 1));
        return;
    }
    for (int x = x0; x <= x1; x++)
        row[x >> 3] |= (uint8_t)(1u << (x & 7));
}

/* An oval nib held at an angle, as a span per row: strokes across the nib
** come out thick and strokes along it thin, as in old print and script. */
typedef struct pen {
    int size;
    int lo[MAX_STROKE], hi[MAX_STROKE];
} pen;

static void make_pen(pen *p, int width, int angle)
{
    /* cos and sin of 20, 30 and 40 degrees, in 1/1024. */
    static const int64_t nib_cos[3] = { 962, 887, 784 }, nib_sin[3] = { 350, 512, 658 };
    int64_t c = nib_cos[angle], s = nib_sin[angle];
    int64_t a = width, b = max_int(1, (width * 3 + 2) / 5); /* semi-axes in half pixels */
    int64_t limit = (int64_t)1024 * 1024 * a * a * b * b;
    p->size = width;
    for (int dy = 0; dy < width; dy++) {
        p->lo[dy] = width;
        p->hi[dy] = -1;
        for (int dx = 0; dx < width; dx++) {
            int64_t ux = 2 * dx + 1 - width, uy = 2 * dy + 1 - width;
            int64_t u = ux * c + uy * s, v = uy * c - ux * s;
            if (u * u * b * b + v * v * a * a <= limit) {
                p->lo[dy] = min_int(p->lo[dy], dx);
                p->hi[dy] = max_int(p->hi[dy], dx);
            }
        }
    }
}

static void dab(const canvas *c, const pen *p, int x, int y)
{
    int x0 = x - p->size / 2, y0 = y - p->size / 2;
    for (int k = 0; k < p->size; k++)
        if (p->lo[k] <= p->hi[k])
            fill_span(c, y0 + k, x0 + p->lo[k], x0 + p->hi[k]);
}

/* Steps along the curve at most one pixel apart, exactly in integers:
** B(i/n) = ((n-i)^2 P0 + 2 i (n-i) P1 + i^2 P2) / n^2, taken relative to P0. */
static void draw_curve(const canvas *c, const pen *p, const int64_t x[3], const int64_t y[3])
{
    int64_t length = llabs(x[1] - x[0]) + llabs(y[1] - y[0]) + llabs(x[2] - x[1]) + llabs(y[2] - y[1]);
    int64_t n = length / SUB + 1, nn = n * n;
    int64_t last_x = INT64_MIN, last_y = INT64_MIN;
    for (int64_t i = 0; i <= n; i++) {
        int64_t b = 2 * i * (n - i), e = i * i;
        int64_t px = floor_div(x[0] + floor_div(b * (x[1] - x[0]) + e * (x[2] - x[0]), nn), SUB);
        int64_t py = floor_div(y[0] + floor_div(b * (y[1] - y[0]) + e * (y[2] - y[0]), nn), SUB);
        if (px == last_x && py == last_y)
            continue;
        last_x = px;
        last_y = py;
        if (px > -MAX_STROKE && py > -MAX_STROKE && px < c->width + MAX_STROKE
            && py < c->height + MAX_STROKE)
            dab(c, p, (int)px, (int)py);
    }
}

static void draw_dot(const canvas *c, const pen *p, int64_t x, int64_t y, int64_t radius)
{
    int64_t cx = floor_div(x, SUB), cy = floor_div(y, SUB), r = radius / SUB;
    if (cx < -r - MAX_STROKE || cy < -r - MAX_STROKE || cx > c->width + r + MAX_STROKE
        || cy > c->height + r + MAX_STROKE)
        return;
    for (int64_t dy = -r; dy <= r; dy++) {
        int64_t half = isqrt(r * r - dy * dy);
        fill_span(c, (int)(cy + dy), (int)(cx - half), (int)(cx + half));
    }
    dab(c, p, (int)cx, (int)cy);
}

/* How one copy of a glyph is placed: origin (left end of the baseline) in
** 1/SUB pixel, size, slant, and a small random stretch and shear that keeps
** strokes joined, so that no two copies of a letter are identical. */
typedef struct placement {
    int64_t x, y;
    int64_t scale;       /* 1/SUB pixels per unit */
    int slant;           /* horizontal shift per unit of height, in 1/64 */
    int stretch_x, stretch_y, shear; /* in 1/64 */
} placement;

static void draw_glyph(const canvas *c, const pen *p, const glyph *g, const placement *at)
{
    for (int k = 0; k < g->n; k++) {
        const prim *q = &g->p[k];
        int64_t u[3] = { q->x0, q->x1, q->x2 }, v[3] = { q->y0, q->y1, q->y2 };
        int64_t x[3], y[3];
        for (int i = 0; i < 3; i++) {
            x[i] = at->x + (u[i] * (64 + at->stretch_x) + v[i] * (at->slant + at->shear)) * at->scale / 64;
            y[i] = at->y - v[i] * (64 + at->stretch_y) * at->scale / 64;
        }
        if (q->kind == PRIM_DOT)
            draw_dot(c, p, x[0], y[0], (int64_t)q->x1 * at->scale);
        else
            draw_curve(c, p, x, y);
    }
}

/* ---- Text layout ------------------------------------------------------- */

/* The text block and type sizes of a page, in pixels. */
typedef struct geometry {
    int left, right, top, bottom;
    int line_height, x_height, pen_width;
    int paragraph_lines;
} geometry;

static geometry page_geometry(const db_synth_params *p)
{
    geometry g;
    g.line_height = p->line_height ? p->line_height : min_int(max_int(4, p->dpi / 5), MAX_LINE_HEIGHT);
    g.pen_width = p->stroke_width ? p->stroke_width : max_int(1, g.line_height / 15);
    g.pen_width = min_int(g.pen_width, MAX_STROKE);
    g.x_height = max_int(2, g.line_height * 3 / 8);
    int margin = p->margin;
    if (!margin) {
        int side = min_int(p->width, p->height);
        margin = p->dpi * 5 / 6;
        if (4LL * margin > side)
            margin = side / 10;
    }
    g.left = g.top = margin;
    g.right = p->width - margin;
    g.bottom = p->height - margin;
    g.paragraph_lines = p->paragraph_lines;
    return g;
}

typedef struct word {
    int n;
    int id[MAX_WORD];
    int width; /* ink extent in pixels, from the first glyph's left to the last's right */
} word;

/* Everything the line builder needs about the page's type. */
typedef struct typesetter {
    const canvas *c;
    const geometry *geo;
    glyph alphabet[GLYPH_COUNT];
    pen nib;
    int advance[GLYPH_COUNT]; /* pixels from one glyph's left edge to the next's */
    int gap;                  /* pixels between the ink of two letters */
    int space;                /* extra pixels between words */
    int slant, tilt;
    rng r;
} typesetter;

/* Letters follow a falling frequency, as in any language: min of two uniform draws. */
static void make_word(typesetter *ts, word *w, int *capital_next, int all_caps)
{
    rng *r = &ts->r;
    int length = min_int(1 + rng_range(r, 0, 3) + rng_range(r, 0, 3) + rng_range(r, 0, 2), MAX_WORD - 1);
    w->n = 0;
    for (int k = 0; k < length; k++) {
        int id;
        if (all_caps || (k == 0 && *capital_next))
            id = LOWER_COUNT + rng_range(r, 0, UPPER_COUNT - 1);
        else
            id = min_int(rng_range(r, 0, LOWER_COUNT - 1), rng_range(r, 0, LOWER_COUNT - 1));
        w->id[w->n++] = id;
    }
    *capital_next = 0;
    int punctuation = rng_range(r, 0, 99);
    if (!all_caps && punctuation < 6) {
        w->id[w->n++] = GLYPH_PERIOD;
        *capital_next = 1;
    } else if (!all_caps && punctuation < 13) {
        w->id[w->n++] = GLYPH_COMMA;
    }
    w->width = -ts->gap;
    for (int k = 0; k < w->n; k++)
        w->width += ts->advance[w->id[k]];
}

/* A line being built: the left edge of each glyph relative to the text block. */
typedef struct line {
    int n, words;
    int *x, *id, *first; /* per glyph: position and glyph; per word: its first glyph */
} line;

static void line_add_word(line *ln, const typesetter *ts, const word *w, int x, int glyphs)
{
    ln->first[ln->words++] = ln->n;
    for (int k = 0; k < glyphs; k++) {
        ln->x[ln->n] = x;
        ln->id[ln->n++] = w->id[k];
        x += ts->advance[w->id[k]];
    }
}

/* Spreads the slack over the word gaps, exactly, unless the line would look
** torn (a long word wrapped): then it stays ragged as a careless printer left it. */
static void justify(line *ln, const typesetter *ts, int slack)
{
    if (ln->words < 2 || slack <= 0 || slack > 2 * ts->space * (ln->words - 1))
        return;
    for (int k = 1; k < ln->words; k++) {
        int shift = (int)((int64_t)slack * k / (ln->words - 1));
        int end = k + 1 < ln->words ? ln->first[k + 1] : ln->n;
        for (int i = ln->first[k]; i < end; i++)
            ln->x[i] += shift;
    }
}

static void draw_line(typesetter *ts, const line *ln, int left, int baseline)
{
    const geometry *geo = ts->geo;
    int text_w = geo->right - geo->left;
    int wobble = rng_range(&ts->r, -geo->x_height / 24, geo->x_height / 24);
    for (int i = 0; i < ln->n; i++) {
        placement at;
        int y = baseline + wobble + (int)((int64_t)ts->tilt * (left + ln->x[i]) / max_int(text_w, 1));
        at.x = ((int64_t)geo->left + left + ln->x[i]) * SUB + (int64_t)geo->pen_width * SUB / 2;
        at.y = (int64_t)y * SUB;
        at.scale = (int64_t)geo->x_height * SUB / UNITS;
        at.slant = ts->slant;
        at.stretch_x = rng_range(&ts->r, -3, 3);
        at.stretch_y = rng_range(&ts->r, -3, 3);
        at.shear = rng_range(&ts->r, -2, 2);
        draw_glyph(ts->c, &ts->nib, &ts->alphabet[ln->id[i]], &at);
    }
}

static int paragraph_length(rng *r, int mean)
{
    return mean ? rng_range(r, max_int(1, mean / 2), mean + mean / 2) : INT_MAX;
}

/* Sets text from `key` into the canvas: an optional centred heading, then
** paragraphs of justified lines whose last line is short and whose first is
** indented. `shift` moves the block down (the other side's lines do not
** fall on this side's). */
static db_status render_text(const canvas *c, const geometry *geo_in, uint64_t key, int shift)
{
    geometry geo_moved = *geo_in;
    geo_moved.top += shift;
    const geometry *geo = &geo_moved;
    int text_w = geo->right - geo->left, xh = geo->x_height;
    int ascent = xh * 3 / 2 + geo->pen_width, descent = xh * 5 / 8 + geo->pen_width;
    if (text_w < 4 * xh || geo->bottom - geo->top < ascent + descent)
        return DB_OK; /* no room for text: a blank page */

    typesetter *ts = calloc(1, sizeof *ts);
    line ln = { 0 };
    size_t slots = (size_t)text_w + 1; /* every glyph advances at least one pixel */
    ln.x = malloc(slots * sizeof *ln.x);
    ln.id = malloc(slots * sizeof *ln.id);
    ln.first = malloc(slots * sizeof *ln.first);
    if (!ts || !ln.x || !ln.id || !ln.first) {
        free(ts);
        free(ln.x);
        free(ln.id);
        free(ln.first);
        return db_fail(DB_ERR_NOMEM, "synthetic page: out of memory for a line of %d pixels", text_w);
    }
    ts->c = c;
    ts->geo = geo;
    ts->r.state = key;
    rng *r = &ts->r;
    make_alphabet(ts->alphabet, r, rng_range(r, 0, 1));
    make_pen(&ts->nib, geo->pen_width, rng_range(r, 0, 2));
    ts->gap = xh / 7;
    for (int i = 0; i < GLYPH_COUNT; i++)
        ts->advance[i] = ts->alphabet[i].width * xh / UNITS + geo->pen_width + ts->gap;
    ts->space = xh * 2 / 3 + geo->pen_width;
    ts->slant = rng_range(r, -2, 6);
    ts->tilt = rng_range(r, -geo->line_height / 8, geo->line_height / 8);
    int paragraph_gap = rng_range(r, 0, 1) ? geo->line_height / 3 : 0;
    int indent = 3 * xh;

    int baseline = geo->top + ascent;
    int capital_next = 1, pending = 0;
    word w;
    int lines = (geo->bottom - descent - baseline) / geo->line_height + 1;
    if (lines >= 8 && rng_range(r, 0, 2) == 0) {
        /* A heading: a few words of capitals, centred, then a blank half line. */
        int words = rng_range(r, 1, 3), x = 0;
        ln.n = ln.words = 0;
        for (int k = 0; k < words; k++) {
            make_word(ts, &w, &capital_next, 1);
            int start = x + (k ? ts->space : 0);
            if (start + w.width > text_w)
                break;
            line_add_word(&ln, ts, &w, start, w.n);
            x = start + w.width;
        }
        draw_line(ts, &ln, (text_w - x) / 2, baseline);
        baseline += geo->line_height * 3 / 2;
        capital_next = 1;
    }
    int lines_left = paragraph_length(r, geo->paragraph_lines), first_line = 1;
    while (baseline + descent <= geo->bottom) {
        int last = lines_left == 1;
        int target = last ? (int)((int64_t)text_w * rng_range(r, 20, 80) / 100) : text_w;
        int x = first_line ? indent : 0;
        ln.n = ln.words = 0;
        for (;;) {
            if (!pending)
                make_word(ts, &w, &capital_next, 0);
            pending = 1;
            int start = x + (ln.words ? ts->space : 0);
            if (start + w.width > text_w) {
                if (ln.words == 0) {
                    /* A word longer than the line (a narrow page): keep what fits. */
                    int glyphs = 0, end = start;
                    while (glyphs < w.n && end + ts->advance[w.id[glyphs]] <= text_w)
                        end += ts->advance[w.id[glyphs++]];
                    line_add_word(&ln, ts, &w, start, glyphs);
                    x = end;
                    pending = 0;
                }
                break;
            }
            line_add_word(&ln, ts, &w, start, w.n);
            x = start + w.width;
            pending = 0;
            if (x >= target)
                break;
        }
        if (!last)
            justify(&ln, ts, text_w - x);
        draw_line(ts, &ln, 0, baseline);
        baseline += geo->line_height;
        first_line = 0;
        if (lines_left != INT_MAX && --lines_left == 0) {
            lines_left = paragraph_length(r, geo->paragraph_lines);
            first_line = 1;
            pending = 0;
            capital_next = 1;
            baseline += paragraph_gap;
        }
    }
    free(ln.x);
    free(ln.id);
    free(ln.first);
    free(ts);
    return DB_OK;
}

/* ---- Blur -------------------------------------------------------------- */

/* Binomial blur, separable, 2 * level + 1 taps (the integer kernel closest
** to a Gaussian), edges replicated, rounded once per direction. In place:
** the vertical pass keeps the last 2 * level + 1 original rows in a ring. */
static db_status blur(uint8_t *data, int width, int height, size_t stride, int channels, int level)
{
    int taps = 2 * level + 1, shift = 2 * level;
    uint32_t coef[2 * MAX_BLUR + 1], half = (uint32_t)1 << shift >> 1;
    coef[0] = 1;
    for (int k = 1; k < taps; k++)
        coef[k] = coef[k - 1] * (uint32_t)(taps - k) / (uint32_t)k;
    size_t row_bytes = (size_t)width * channels;
    uint8_t *pad = malloc(((size_t)width + 2 * level) * channels);
    uint8_t *ring = malloc((size_t)taps * row_bytes);
    uint32_t *acc = malloc(row_bytes * sizeof *acc);
    if (!pad || !ring || !acc) {
        free(pad);
        free(ring);
        free(acc);
        return db_fail(DB_ERR_NOMEM, "synthetic page: out of memory for the blur of a %d-pixel row",
                       width);
    }
    for (int y = 0; y < height; y++) {
        uint8_t *row = data + (size_t)y * stride;
        for (int x = -level; x < width + level; x++)
            memcpy(pad + (size_t)(x + level) * channels,
                   row + (size_t)min_int(max_int(x, 0), width - 1) * channels, (size_t)channels);
        for (size_t i = 0; i < row_bytes; i++) {
            uint32_t sum = 0;
            for (int k = 0; k < taps; k++)
                sum += coef[k] * pad[i + (size_t)k * channels];
            row[i] = (uint8_t)((sum + half) >> shift);
        }
    }
    int saved = 0; /* rows 0..saved-1 have been copied into the ring */
    for (int y = 0; y < height; y++) {
        int need = min_int(y + level, height - 1);
        for (; saved <= need; saved++)
            memcpy(ring + (size_t)(saved % taps) * row_bytes, data + (size_t)saved * stride, row_bytes);
        memset(acc, 0, row_bytes * sizeof *acc);
        for (int k = 0; k < taps; k++) {
            int sy = min_int(max_int(y - level + k, 0), height - 1);
            const uint8_t *src = ring + (size_t)(sy % taps) * row_bytes;
            for (size_t i = 0; i < row_bytes; i++)
                acc[i] += coef[k] * src[i];
        }
        uint8_t *row = data + (size_t)y * stride;
        for (size_t i = 0; i < row_bytes; i++)
            row[i] = (uint8_t)((acc[i] + half) >> shift);
    }
    free(pad);
    free(ring);
    free(acc);
    return DB_OK;
}

/* ---- Bleed-through ----------------------------------------------------- */

/* The other side's text as ink coverage 0..255 at 1/BACK_SCALE resolution,
** blurred: drawn as a packed bit mask (1/8 byte per pixel even for huge
** pages), counted in BACK_SCALE x BACK_SCALE blocks, then blurred. */
static db_status back_side(const db_synth_params *p, const geometry *geo, uint8_t **out, int *out_w,
                           int *out_h)
{
    int lw = (p->width + BACK_SCALE - 1) / BACK_SCALE, lh = (p->height + BACK_SCALE - 1) / BACK_SCALE;
    canvas bits = { NULL, p->width, p->height, ((size_t)p->width + 7) / 8, 1 };
    bits.data = calloc(bits.stride, (size_t)p->height);
    uint8_t *low = malloc((size_t)lw * lh);
    uint16_t *count = calloc((size_t)lw + 1, sizeof *count);
    if (!bits.data || !low || !count) {
        free(bits.data);
        free(low);
        free(count);
        return db_fail(DB_ERR_NOMEM, "synthetic page: out of memory for the bleed-through of a %dx%d page",
                       p->width, p->height);
    }
    rng place = { stream_key(p->seed, STREAM_BACK_PLACE) };
    db_status st = render_text(&bits, geo, stream_key(p->seed, STREAM_BACK_TEXT),
                               rng_range(&place, 0, geo->line_height - 1));
    static const uint8_t nibble_bits[16] = { 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4 };
    for (int y = 0; st == DB_OK && y < p->height; y++) {
        const uint8_t *row = bits.data + (size_t)y * bits.stride;
        for (size_t b = 0; b < bits.stride; b++) {
            count[2 * b] += nibble_bits[row[b] & 15];
            if (2 * b + 1 < (size_t)lw)
                count[2 * b + 1] += nibble_bits[row[b] >> 4];
        }
        if (y % BACK_SCALE == BACK_SCALE - 1 || y == p->height - 1) {
            uint8_t *dst = low + (size_t)(y / BACK_SCALE) * lw;
            for (int i = 0; i < lw; i++)
                dst[i] = (uint8_t)min_int(255, count[i] * 16);
            memset(count, 0, ((size_t)lw + 1) * sizeof *count);
        }
    }
    free(bits.data);
    free(count);
    if (st == DB_OK)
        st = blur(low, lw, lh, (size_t)lw, 1, BACK_BLUR);
    if (st != DB_OK) {
        free(low);
        return st;
    }
    *out = low;
    *out_w = lw;
    *out_h = lh;
    return DB_OK;
}

/* Where full-resolution pixel `x` falls between two low-resolution centres,
** with the fraction in 1/16. */
static void back_position(int x, int low_size, int *index, int *frac)
{
    int pos = (16 * x + 8) / BACK_SCALE - 8;
    pos = min_int(max_int(pos, 0), (low_size - 1) * 16);
    *index = pos >> 4;
    *frac = pos & 15;
}

/* ---- Stains ------------------------------------------------------------ */

enum { MAX_DISCS = 6 };

/* A stain: a few overlapping discs, so that its outline is lumpy, with a
** plateau inside and a darker tide line near the rim, as water leaves. */
typedef struct stain {
    int discs;
    int cx[MAX_DISCS], cy[MAX_DISCS], r[MAX_DISCS];
    int darkness;
    int x0, x1, y0, y1; /* bounding box, clipped to the page */
} stain;

static void make_stains(const db_synth_params *p, stain *s)
{
    rng r = { stream_key(p->seed, STREAM_STAINS) };
    int side = min_int(p->width, p->height);
    for (int k = 0; k < p->stain_count; k++) {
        stain *t = &s[k];
        int size = max_int(1, rng_range(&r, side / 30, side / 7));
        int cx = rng_range(&r, 0, p->width - 1), cy = rng_range(&r, 0, p->height - 1);
        t->discs = rng_range(&r, 3, MAX_DISCS);
        t->darkness = p->stains * rng_range(&r, 60, 100) / 100;
        t->x0 = t->y0 = INT_MAX;
        t->x1 = t->y1 = INT_MIN;
        for (int d = 0; d < t->discs; d++) {
            t->cx[d] = cx + rng_range(&r, -size / 2, size / 2);
            t->cy[d] = cy + rng_range(&r, -size / 2, size / 2);
            t->r[d] = max_int(1, size * rng_range(&r, 40, 80) / 100);
            t->x0 = min_int(t->x0, t->cx[d] - t->r[d]);
            t->x1 = max_int(t->x1, t->cx[d] + t->r[d]);
            t->y0 = min_int(t->y0, t->cy[d] - t->r[d]);
            t->y1 = max_int(t->y1, t->cy[d] + t->r[d]);
        }
        t->x0 = max_int(t->x0, 0);
        t->x1 = min_int(t->x1, p->width - 1);
    }
}

/* Adds each stain's darkness (gray levels) along row y to `out`; `acc` is scratch. */
static void stain_row(const stain *s, int count, int y, int *out, int *acc)
{
    for (int k = 0; k < count; k++) {
        const stain *t = &s[k];
        if (y < t->y0 || y > t->y1 || t->x0 > t->x1)
            continue;
        memset(acc + t->x0, 0, (size_t)(t->x1 - t->x0 + 1) * sizeof *acc);
        for (int d = 0; d < t->discs; d++) {
            int64_t dy = y - t->cy[d], r2 = (int64_t)t->r[d] * t->r[d];
            if (dy * dy >= r2)
                continue;
            int x0 = max_int(t->x0, t->cx[d] - t->r[d]), x1 = min_int(t->x1, t->cx[d] + t->r[d]);
            for (int x = x0; x <= x1; x++) {
                int64_t dx = x - t->cx[d], d2 = dx * dx + dy * dy;
                if (d2 < r2)
                    acc[x] += ONE - (int)(d2 * ONE / r2);
            }
        }
        for (int x = t->x0; x <= t->x1; x++) {
            int v = min_int(acc[x] * 2, ONE);               /* 0 at the rim, ONE on the plateau */
            int rim = (int)((int64_t)v * (ONE - v) >> 10); /* ONE halfway up the edge */
            out[x] += t->darkness * ((v * 5 + rim * 4) / 8) >> 12;
        }
    }
}

/* ---- The page ---------------------------------------------------------- */

void db_synth_defaults(db_synth_params *p)
{
    memset(p, 0, sizeof *p);
    p->seed = 1;
    p->width = DB_SYNTH_A4_WIDTH;
    p->height = DB_SYNTH_A4_HEIGHT;
    p->color = 1;
    p->dpi = DB_SYNTH_A4_DPI;
    p->paragraph_lines = 9;
    p->ink = 40;
    p->paper = 226;
    p->illumination = 50;
    p->texture = 12;
    p->stains = 40;
    p->stain_count = 3;
    p->bleed = 40;
    p->fading = 60;
    p->blur = 1;
    p->noise = 5;
}

void db_synth_set_a4(db_synth_params *p, int dpi)
{
    p->dpi = dpi;
    p->width = (int)(((int64_t)DB_SYNTH_A4_WIDTH * dpi + DB_SYNTH_A4_DPI / 2) / DB_SYNTH_A4_DPI);
    p->height = (int)(((int64_t)DB_SYNTH_A4_HEIGHT * dpi + DB_SYNTH_A4_DPI / 2) / DB_SYNTH_A4_DPI);
}

static db_status check_range(const char *name, int value, int lo, int hi)
{
    if (value < lo || value > hi)
        return db_fail(DB_ERR_USAGE, "synthetic page: %s %d is out of range; use %d to %d", name,
                       value, lo, hi);
    return DB_OK;
}

db_status db_synth_check(const db_synth_params *p)
{
    const struct {
        const char *name;
        int value, lo, hi;
    } fields[] = {
        { "color", p->color, 0, 1 },
        { "dpi", p->dpi, 1, 100000 },
        { "line height", p->line_height, 0, MAX_LINE_HEIGHT },
        { "stroke width", p->stroke_width, 0, MAX_STROKE },
        { "margin", p->margin, 0, DB_IMAGE_MAX_SIDE },
        { "paragraph lines", p->paragraph_lines, 0, 100000 },
        { "ink", p->ink, 0, 254 },
        { "paper", p->paper, 1, 255 },
        { "illumination", p->illumination, 0, p->paper },
        { "texture", p->texture, 0, 255 },
        { "stains", p->stains, 0, 255 },
        { "stain count", p->stain_count, 0, 1000 },
        { "bleed", p->bleed, 0, 255 },
        { "fading", p->fading, 0, 100 },
        { "blur", p->blur, 0, MAX_BLUR },
        { "noise", p->noise, 0, 255 },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        db_status st = check_range(fields[i].name, fields[i].value, fields[i].lo, fields[i].hi);
        if (st != DB_OK)
            return st;
    }
    if (p->paper <= p->ink)
        return db_fail(DB_ERR_USAGE, "synthetic page: paper %d is not lighter than ink %d; "
                       "paper must be the larger level", p->paper, p->ink);
    return db_image_check_size(p->width, p->height, p->color ? 3 : 1, "synthetic page");
}

/* Row buffers of the composition, width + 2 ints each: one per degradation,
** scratch, and the nodes (or low-resolution samples) of the row being blended. */
enum row_kind { ROW_GRAIN, ROW_LIGHT, ROW_LOSS, ROW_STAIN, ROW_BACK, ROW_SCRATCH, ROW_NODES, ROW_COUNT };

/* The fields and maps that degrade the page, built once per page. */
typedef struct aging {
    field grain[3], light, fade, fade_fine;
    stain *stains;
    uint8_t *back;
    int back_w, back_h;
    int *back_index;
    uint8_t *back_frac;
    int *rows;
} aging;

static void aging_free(aging *a)
{
    for (int k = 0; k < 3; k++)
        field_free(&a->grain[k]);
    field_free(&a->light);
    field_free(&a->fade);
    field_free(&a->fade_fine);
    free(a->stains);
    free(a->back);
    free(a->back_index);
    free(a->back_frac);
    free(a->rows);
}

static db_status aging_init(aging *a, const db_synth_params *p, const geometry *geo)
{
    int w = p->width, h = p->height;
    db_status st = DB_OK;
    memset(a, 0, sizeof *a);
    a->rows = malloc((size_t)ROW_COUNT * ((size_t)w + 2) * sizeof *a->rows);
    if (!a->rows)
        return db_fail(DB_ERR_NOMEM, "synthetic page: out of memory for a %d-pixel row", w);
    if (p->texture) {
        /* Grain at three scales: fibres, flecks and clouds, sized for the dpi. */
        int cells[3] = { max_int(1, p->dpi / 150), max_int(2, p->dpi / 50), max_int(4, p->dpi / 12) };
        static const stream keys[3] = { STREAM_GRAIN_FINE, STREAM_GRAIN_MEDIUM, STREAM_GRAIN_COARSE };
        for (int k = 0; k < 3 && st == DB_OK; k++)
            st = field_init(&a->grain[k], w, h, cells[k], cells[k], stream_key(p->seed, keys[k]), 0);
    }
    if (st == DB_OK && p->illumination) {
        /* A few cells across the page, a slope towards one side, and often the
        ** shade of a binding along one edge. */
        st = field_init(&a->light, w, h, (w + 2) / 3, (h + 3) / 4, stream_key(p->seed, STREAM_LIGHT), 1);
        if (st == DB_OK) {
            rng r = { stream_key(p->seed, STREAM_LIGHT_SLOPE) };
            int gx = rng_range(&r, -ONE, ONE), gy = rng_range(&r, -ONE, ONE);
            int gutter = rng_range(&r, 0, 2);
            for (int j = 0; j < a->light.ny; j++)
                for (int i = 0; i < a->light.nx; i++) {
                    int *v = &a->light.nodes[(size_t)j * a->light.nx + i];
                    *v += gx * i / (a->light.nx - 1) + gy * j / (a->light.ny - 1);
                    if ((gutter == 1 && i == 0) || (gutter == 2 && i == a->light.nx - 1))
                        *v += 2 * ONE;
                }
            field_normalize(&a->light);
        }
    }
    if (st == DB_OK && p->fading) {
        st = field_init(&a->fade, w, h, (w + 1) / 2, (h + 2) / 3, stream_key(p->seed, STREAM_FADE), 1);
        if (st == DB_OK) {
            field_normalize(&a->fade);
            int cell = max_int(16, 4 * geo->line_height);
            st = field_init(&a->fade_fine, w, h, cell, cell, stream_key(p->seed, STREAM_FADE_FINE), 0);
        }
    }
    if (st == DB_OK && p->stains && p->stain_count) {
        a->stains = calloc((size_t)p->stain_count, sizeof *a->stains);
        if (!a->stains)
            st = db_fail(DB_ERR_NOMEM, "synthetic page: out of memory for %d stains", p->stain_count);
        else
            make_stains(p, a->stains);
    }
    if (st == DB_OK && p->bleed) {
        st = back_side(p, geo, &a->back, &a->back_w, &a->back_h);
        if (st == DB_OK) {
            a->back_index = malloc((size_t)w * sizeof *a->back_index);
            a->back_frac = malloc((size_t)w);
            if (!a->back_index || !a->back_frac)
                st = db_fail(DB_ERR_NOMEM, "synthetic page: out of memory for a %d-pixel row", w);
            else
                for (int x = 0; x < w; x++) {
                    int index, frac;
                    back_position(w - 1 - x, a->back_w, &index, &frac); /* seen through the paper: mirrored */
                    a->back_index[x] = index;
                    a->back_frac[x] = (uint8_t)frac;
                }
        }
    }
    if (st != DB_OK)
        aging_free(a);
    return st;
}

/* Computes row y of every enabled degradation into a->rows. */
static void aging_row(const aging *a, const db_synth_params *p, int y)
{
    int w = p->width;
    int *row[ROW_COUNT];
    for (int k = 0; k < ROW_COUNT; k++)
        row[k] = a->rows + (size_t)k * ((size_t)w + 2);
    if (p->texture) {
        /* Three octaves summed, mapped to -texture..texture. */
        int *sum = row[ROW_GRAIN], *tmp = row[ROW_NODES], *one = row[ROW_SCRATCH];
        memset(sum, 0, (size_t)w * sizeof *sum);
        for (int k = 0; k < 3; k++) {
            field_row(&a->grain[k], y, w, one, tmp);
            for (int x = 0; x < w; x++)
                sum[x] += one[x];
        }
        for (int x = 0; x < w; x++)
            sum[x] = (int)((int64_t)sum[x] * 2 * p->texture / (3 * ONE)) - p->texture;
    }
    if (p->illumination) {
        int *light = row[ROW_LIGHT];
        field_row(&a->light, y, w, light, row[ROW_NODES]);
        int depth = (int)((int64_t)p->illumination * ONE / p->paper);
        for (int x = 0; x < w; x++)
            light[x] = ONE - ((light[x] * depth) >> 12);
    }
    if (p->fading) {
        int *loss = row[ROW_LOSS], *fine = row[ROW_SCRATCH];
        field_row(&a->fade, y, w, loss, row[ROW_NODES]);
        field_row(&a->fade_fine, y, w, fine, row[ROW_NODES]);
        for (int x = 0; x < w; x++)
            loss[x] = (2 * loss[x] + fine[x]) * p->fading / 300;
    }
    if (a->stains) {
        memset(row[ROW_STAIN], 0, (size_t)w * sizeof(int));
        stain_row(a->stains, p->stain_count, y, row[ROW_STAIN], row[ROW_SCRATCH]);
    }
    if (a->back) {
        int index, frac;
        back_position(y, a->back_h, &index, &frac);
        const uint8_t *r0 = a->back + (size_t)index * a->back_w;
        const uint8_t *r1 = a->back + (size_t)min_int(index + 1, a->back_h - 1) * a->back_w;
        int *mid = row[ROW_NODES], *back = row[ROW_BACK];
        for (int i = 0; i < a->back_w; i++)
            mid[i] = r0[i] * (16 - frac) + r1[i] * frac;
        for (int x = 0; x < w; x++) {
            int i = a->back_index[x], f = a->back_frac[x];
            int coverage = mid[i] * (16 - f) + mid[min_int(i + 1, a->back_w - 1)] * f; /* 0..65280 */
            back[x] = (int)(((int64_t)p->bleed * coverage + 32640) / 65280);
        }
    }
}

/* Paper, its degradations and the faded ink around the ground-truth mask.
** With every degradation off this gives exactly `paper` off the glyphs and
** `ink` on them (red channel; green and blue are tinted). */
static void compose(db_image *page, const db_image *mask, const aging *a, const db_synth_params *p)
{
    int w = p->width, ch = page->channels;
    /* Yellowed paper and brown-black iron-gall ink; stains darken blue most. */
    static const int paper_tint[3] = { 256, 243, 210 }, ink_tint[3] = { 256, 235, 215 },
                     stain_tint[3] = { 190, 240, 330 };
    int paper_c[3], ink_c[3], stain_c[3];
    for (int c = 0; c < ch; c++) {
        paper_c[c] = ch == 1 ? p->paper : p->paper * paper_tint[c] >> 8;
        ink_c[c] = ch == 1 ? p->ink : p->ink * ink_tint[c] >> 8;
        stain_c[c] = ch == 1 ? 256 : stain_tint[c];
    }
    int *rows = a->rows;
    size_t row_len = (size_t)w + 2;
    const int *grain = rows + ROW_GRAIN * row_len, *light = rows + ROW_LIGHT * row_len;
    const int *loss = rows + ROW_LOSS * row_len, *stainr = rows + ROW_STAIN * row_len;
    const int *back = rows + ROW_BACK * row_len;
    for (int y = 0; y < p->height; y++) {
        aging_row(a, p, y);
        const uint8_t *m = mask->data + (size_t)y * mask->stride;
        uint8_t *out = page->data + (size_t)y * page->stride;
        for (int x = 0; x < w; x++) {
            int base = (p->texture ? grain[x] : 0) - (a->back ? back[x] : 0);
            int dark = a->stains ? stainr[x] : 0;
            int fade = p->fading ? loss[x] : 0;
            int lit = p->illumination ? light[x] : ONE;
            for (int c = 0; c < ch; c++) {
                int v = paper_c[c] + base - ((dark * stain_c[c]) >> 8);
                if (v < 0)
                    v = 0;
                if (m[x] == 0)
                    v = ink_c[c] + (v - ink_c[c]) * fade / ONE;
                v = (v * lit + ONE / 2) >> 12;
                out[(size_t)x * ch + c] = (uint8_t)min_int(v, 255);
            }
        }
    }
}

/* Sensor noise, the same on every channel: the sum of four random bytes is
** close to a Gaussian of standard deviation 147.8, scaled to `noise`. */
static void add_noise(db_image *page, const db_synth_params *p)
{
    uint64_t key = stream_key(p->seed, STREAM_NOISE);
    int ch = page->channels;
    for (int y = 0; y < page->height; y++) {
        uint8_t *row = page->data + (size_t)y * page->stride;
        for (int x = 0; x < page->width; x++) {
            uint64_t h = hash_at(key, (uint64_t)y * (uint64_t)page->width + (uint64_t)x);
            int s = (int)(h & 255) + (int)(h >> 8 & 255) + (int)(h >> 16 & 255) + (int)(h >> 24 & 255) - 510;
            int n = s * p->noise * 1774 / 262144;
            for (int c = 0; c < ch; c++) {
                int v = row[(size_t)x * ch + c] + n;
                row[(size_t)x * ch + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
}

db_status db_synth_render(const db_synth_params *p, db_image **page, db_image **gt)
{
    *page = NULL;
    if (gt)
        *gt = NULL;
    db_status st = db_synth_check(p);
    if (st != DB_OK)
        return st;
    if ((st = db_image_check_size(p->width, p->height, (p->color ? 3 : 1) + 1, "synthetic page and "
                                  "its ground truth")) != DB_OK)
        return st;
    db_image *mask = db_image_new(p->width, p->height, 1);
    db_image *img = mask ? db_image_new(p->width, p->height, p->color ? 3 : 1) : NULL;
    if (!img) {
        db_image_free(mask);
        return db_error_status();
    }
    memset(mask->data, 255, mask->stride * (size_t)mask->height);
    geometry geo = page_geometry(p);
    canvas ink = { mask->data, p->width, p->height, mask->stride, 0 };
    st = render_text(&ink, &geo, stream_key(p->seed, STREAM_TEXT), 0);
    aging a;
    if (st == DB_OK && (st = aging_init(&a, p, &geo)) == DB_OK) {
        compose(img, mask, &a, p);
        aging_free(&a);
        if (p->blur)
            st = blur(img->data, img->width, img->height, img->stride, img->channels, p->blur);
        if (st == DB_OK && p->noise)
            add_noise(img, p);
    }
    if (st != DB_OK) {
        db_image_free(mask);
        db_image_free(img);
        return st;
    }
    *page = img;
    if (gt)
        *gt = mask;
    else
        db_image_free(mask);
    return DB_OK;
}

/* ---- Photograph-like pictures ------------------------------------------ */

/* Tone of a soft-edged disc at squared distance d2 from its centre: `tone`
** inside r - edge, the background `under` beyond r, a linear blend between. */
static int disc_blend(int64_t d2, int r, int edge, int tone, int under)
{
    int64_t d = isqrt(d2);
    if (d >= r)
        return under;
    if (d <= r - edge)
        return tone;
    return (int)(under + (int64_t)(tone - under) * (r - d) / edge);
}

db_status db_synth_photo(int width, int height, uint32_t seed, db_image **out)
{
    *out = NULL;
    db_status st = db_image_check_size(width, height, 1, "photo-like picture");
    if (st != DB_OK)
        return st;
    db_image *img = db_image_new(width, height, 1);
    int *row_hills = malloc(sizeof(int) * (size_t)(width + 2));
    int *row_grass = malloc(sizeof(int) * (size_t)(width + 2));
    int *horizon = malloc(sizeof(int) * (size_t)(width + 2));
    int *tmp = malloc(sizeof(int) * (size_t)(width + 2));
    int side = min_int(width, height);
    field sky, hills, grass;
    if (img && row_hills && row_grass && horizon && tmp) {
        st = field_init(&sky, width, 1, max_int(width / 3, 1), 1, stream_key(seed, STREAM_PHOTO_SKY), 1);
        if (st == DB_OK && (st = field_init(&hills, width, height, max_int(side / 4, 1), max_int(side / 6, 1),
                                            stream_key(seed, STREAM_PHOTO_HILLS), 1)) != DB_OK)
            field_free(&sky);
        if (st == DB_OK && (st = field_init(&grass, width, height, 3, 2, stream_key(seed, STREAM_PHOTO_GRASS),
                                            0)) != DB_OK) {
            field_free(&sky);
            field_free(&hills);
        }
    } else {
        st = db_fail(DB_ERR_NOMEM, "out of memory for a %dx%d photo-like picture", width, height);
    }
    if (st != DB_OK) {
        db_image_free(img);
        free(row_hills);
        free(row_grass);
        free(horizon);
        free(tmp);
        return st;
    }
    field_normalize(&sky);
    field_normalize(&hills);
    /* The horizon wanders between 40% and 60% of the height. */
    field_row(&sky, 0, width, horizon, tmp);
    for (int x = 0; x < width; x++)
        horizon[x] = (int)((int64_t)height * (2 * ONE + horizon[x]) / (5 * ONE));
    enum { DISCS = 7 };
    static const int tones[DISCS] = {0, 255, 30, 225, 90, 160, 128};
    int cx[DISCS], cy[DISCS], r[DISCS];
    rng dr = {stream_key(seed, STREAM_PHOTO_DISCS)};
    for (int i = 0; i < DISCS; i++) {
        r[i] = max_int(side / 20 + rng_range(&dr, 0, max_int(side / 10, 0)), 1);
        cx[i] = rng_range(&dr, 0, width - 1);
        cy[i] = rng_range(&dr, 0, max_int(height - height / 8 - 1, 0));
    }
    int strip = height - max_int(height / 12, 1);
    for (int y = 0; y < height; y++) {
        uint8_t *px = img->data + (size_t)y * img->stride;
        field_row(&hills, y, width, row_hills, tmp);
        field_row(&grass, y, width, row_grass, tmp);
        for (int x = 0; x < width; x++) {
            int v;
            if (y >= strip) {
                /* Full tonal range: flat black, a linear ramp, flat white. */
                int64_t t = (int64_t)x * 320 / max_int(width - 1, 1) - 32;
                v = (int)(t < 0 ? 0 : t > 255 ? 255 : t);
            } else {
                if (y < horizon[x]) /* sky: 150 at the top to 245 at the horizon */
                    v = 150 + (int)((int64_t)95 * y / max_int(horizon[x], 1));
                else /* hills: 40..200 with grass of +-24 */
                    v = 40 + row_hills[x] * 160 / ONE + (row_grass[x] - ONE / 2) * 48 / ONE;
                for (int i = 0; i < DISCS; i++) {
                    int64_t dx = x - cx[i], dy = y - cy[i];
                    v = disc_blend(dx * dx + dy * dy, r[i], max_int(r[i] / 4, 1), tones[i], v);
                }
            }
            px[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    field_free(&sky);
    field_free(&hills);
    field_free(&grass);
    free(row_hills);
    free(row_grass);
    free(horizon);
    free(tmp);
    *out = img;
    return DB_OK;
}
