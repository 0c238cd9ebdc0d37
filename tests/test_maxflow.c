/*
** test_maxflow.c — the grid cut (algorithms/maxflow.c) against Dinic's
** algorithm (tests/reference_maxflow.c): flow values and canonical sink sides
** on random grids from 1x1 to 300x300 (zero capacities, terminal ties,
** disconnected regions, the largest capacities of Howe's graph, Howe-like
** pages), and warm starts over the 33 link capacities of docs/howe.md, "The
** values of c", which must give exactly the cold solve's flow and labels at
** every step.
**
** Every graph comes from a fixed xorshift seed, so a failure names a graph
** that can be rebuilt.
*/
#include <string.h>

#include "algorithms/maxflow.h"
#include "tests/reference_maxflow.h"
#include "tests/testutil.h"

/* Kept n-link capacities round(32·c_i), ascending (docs/howe.md, "The values of c"). */
static const int32_t link_table[33] = {
    640,   761,   905,   1076,  1280,  1522,  1810,  2153,  2560,   3044,   3620,
    4305,  5120,  6089,  7241,  8611,  10240, 12177, 14482, 17222,  20480,  24355,
    28963, 34443, 40960, 48710, 57926, 68886, 81920, 97420, 115852, 137772, 163840};

/* Howe's limits: t-links lie in [15360, 80640] (docs/howe.md §3); the largest kept link. */
enum { TLINK_MAX = 80640, NLINK_MAX = 163840 };

typedef struct grid {
    int rows, cols;
    int32_t *source, *sink, *right, *down;
} grid;

static int grid_alloc(grid *g, int rows, int cols)
{
    size_t n = (size_t)rows * (size_t)cols;
    g->rows = rows;
    g->cols = cols;
    g->source = calloc(n, sizeof(int32_t));
    g->sink = calloc(n, sizeof(int32_t));
    g->right = calloc(n, sizeof(int32_t));
    g->down = calloc(n, sizeof(int32_t));
    if (!g->source || !g->sink || !g->right || !g->down) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return 0;
}

static void grid_free(grid *g)
{
    free(g->source);
    free(g->sink);
    free(g->right);
    free(g->down);
}

static uint32_t below(uint32_t *st, uint32_t n)
{
    return test_random(st) % n;
}

/* Capacity of the cut whose sink side is `side`: t-links of the nodes on the
** wrong side of their terminal plus the links across. For the canonical cut
** of a maximum flow it equals the flow value (max-flow/min-cut), a check that
** needs no second solver. */
static int64_t cut_capacity(const grid *g, const uint8_t *side)
{
    int64_t c = 0;
    for (int r = 0; r < g->rows; r++)
        for (int k = 0; k < g->cols; k++) {
            int i = r * g->cols + k;
            c += side[i] ? g->source[i] : g->sink[i];
            if (k + 1 < g->cols && side[i] != side[i + 1])
                c += g->right[i];
            if (r + 1 < g->rows && side[i] != side[i + g->cols])
                c += g->down[i];
        }
    return c;
}

static db_grid_cut *make_cut(const grid *g)
{
    db_grid_cut *cut = NULL;
    db_status st = db_grid_cut_new(g->rows, g->cols, g->source, g->sink, g->right, g->down, &cut);
    if (st != DB_OK) {
        fprintf(stderr, "db_grid_cut_new: %s\n", db_error_message());
        exit(1);
    }
    return cut;
}

/* Cold grid cut vs Dinic on one graph. */
static void compare(const char *name, const grid *g)
{
    size_t n = (size_t)g->rows * (size_t)g->cols;
    uint8_t *want = malloc(n), *got = malloc(n);
    if (!want || !got)
        exit(1);
    int64_t ref = ref_grid_maxflow(g->rows, g->cols, g->source, g->sink, g->right, g->down, want);
    db_grid_cut *cut = make_cut(g);
    int64_t flow = db_grid_cut_solve(cut);
    memset(got, 0x5a, n);
    db_grid_cut_labels(cut, got);
    CHECK(flow == ref, "%s (%dx%d): flow %lld, Dinic %lld", name, g->rows, g->cols, (long long)flow,
          (long long)ref);
    size_t diff = test_diff(got, want, n);
    CHECK(diff == 0, "%s (%dx%d): %zu labels differ from Dinic's", name, g->rows, g->cols, diff);
    CHECK(cut_capacity(g, got) == flow, "%s (%dx%d): cut capacity %lld != flow %lld", name, g->rows, g->cols,
          (long long)cut_capacity(g, got), (long long)flow);
    /* Solving again changes nothing. */
    CHECK(db_grid_cut_solve(cut) == flow, "%s: a second solve changed the flow", name);
    db_grid_cut_free(cut);
    free(want);
    free(got);
}

/* ------------------------------------------------------------ generators */

enum kind { SMALL, TIES, SPLIT, HUGE, HOWE_NOISE, KINDS };
static const char *kind_name[KINDS] = {"small", "ties", "split", "huge", "howe-noise"};

/* Terminal capacities 16·(3000 ∓ lap2) (docs/howe.md §3). */
static void howe_tlinks(grid *g, int i, int32_t lap2)
{
    g->source[i] = 16 * (3000 - lap2);
    g->sink[i] = 16 * (3000 + lap2);
}

/* Fills g with a random graph of the given kind. */
static void random_grid(grid *g, enum kind kind, uint32_t *st)
{
    int rows = g->rows, cols = g->cols;
    /* SPLIT: whole rows and columns without links cut the grid into pieces. */
    int cut_row = rows > 2 ? (int)below(st, (uint32_t)rows) : -1;
    int cut_col = cols > 2 ? (int)below(st, (uint32_t)cols) : -1;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            int i = r * cols + k;
            switch (kind) {
            case SMALL:
                g->source[i] = below(st, 3) == 0 ? 0 : (int32_t)below(st, 10);
                g->sink[i] = below(st, 3) == 0 ? 0 : (int32_t)below(st, 10);
                g->right[i] = below(st, 3) == 0 ? 0 : (int32_t)below(st, 8);
                g->down[i] = below(st, 3) == 0 ? 0 : (int32_t)below(st, 8);
                break;
            case TIES:
                /* Half the nodes pull equally both ways: free nodes, tied cuts. */
                g->source[i] = (int32_t)below(st, 4);
                g->sink[i] = below(st, 2) ? g->source[i] : (int32_t)below(st, 4);
                g->right[i] = (int32_t)below(st, 3);
                g->down[i] = (int32_t)below(st, 3);
                break;
            case SPLIT:
                g->source[i] = (int32_t)below(st, 50);
                g->sink[i] = (int32_t)below(st, 50);
                g->right[i] = k == cut_col || below(st, 8) == 0 ? 0 : (int32_t)below(st, 30);
                g->down[i] = r == cut_row || below(st, 8) == 0 ? 0 : (int32_t)below(st, 30);
                /* Some nodes have no links at all. */
                if (below(st, 20) == 0) {
                    g->right[i] = g->down[i] = 0;
                    if (k > 0)
                        g->right[i - 1] = 0;
                    if (r > 0)
                        g->down[i - cols] = 0;
                }
                break;
            case HUGE:
                g->source[i] = below(st, 4) == 0 ? TLINK_MAX : (int32_t)below(st, TLINK_MAX + 1);
                g->sink[i] = below(st, 4) == 0 ? TLINK_MAX : (int32_t)below(st, TLINK_MAX + 1);
                g->right[i] = below(st, 3) == 0 ? NLINK_MAX : (int32_t)below(st, NLINK_MAX + 1);
                g->down[i] = below(st, 3) == 0 ? NLINK_MAX : (int32_t)below(st, NLINK_MAX + 1);
                break;
            case HOWE_NOISE: {
                uint32_t pick = below(st, 10);
                int32_t lap2 = pick == 0 ? -1000 : pick == 1 ? 0 : (int32_t)below(st, 4081) - 2040;
                howe_tlinks(g, i, lap2);
                int32_t c = link_table[below(st, 33)];
                g->right[i] = below(st, 6) == 0 ? 0 : c;
                g->down[i] = below(st, 6) == 0 ? 0 : c;
                break;
            }
            default:
                break;
            }
        }
}

/* A Howe-like graph from a synthetic gray page: smooth paper with bright
** specks and dark strokes, lap2 by the integer divergence of docs/howe.md §2
** (spatially coherent, unlike white noise), −1000 on bright specks, and links
** removed where the darker pixel of a pair sits on a strong edge (a stand-in
** for Canny). Kept links get capacity `link`. Node grid (H−1)×(W−1). */
static void howe_page(grid *g, int height, int width, int32_t link, uint32_t *st)
{
    uint8_t *img = malloc((size_t)width * (size_t)height);
    uint8_t *bright = calloc((size_t)width * (size_t)height, 1);
    if (!img || !bright)
        exit(1);
    /* Paper: bilinear interpolation of a coarse random lattice, plus noise. */
    enum { CELL = 16 };
    int gw = width / CELL + 2, gh = height / CELL + 2;
    int *lat = malloc((size_t)gw * (size_t)gh * sizeof *lat);
    if (!lat)
        exit(1);
    for (int j = 0; j < gw * gh; j++)
        lat[j] = 160 + (int)below(st, 70);
    for (int r = 0; r < height; r++)
        for (int k = 0; k < width; k++) {
            int gy = r / CELL, gx = k / CELL, fy = r % CELL, fx = k % CELL;
            int a = lat[gy * gw + gx], b = lat[gy * gw + gx + 1];
            int c = lat[(gy + 1) * gw + gx], d = lat[(gy + 1) * gw + gx + 1];
            int v = (a * (CELL - fx) * (CELL - fy) + b * fx * (CELL - fy) + c * (CELL - fx) * fy + d * fx * fy) /
                    (CELL * CELL);
            v += (int)below(st, 5) - 2;
            if (below(st, 100) == 0) {
                v += 30;
                bright[r * width + k] = 1;
            }
            img[r * width + k] = (uint8_t)(v > 255 ? 255 : v);
        }
    free(lat);
    /* Strokes: short straight pen strokes of width 1..3. */
    int strokes = width * height / 150;
    for (int s = 0; s < strokes; s++) {
        int r0 = (int)below(st, (uint32_t)height), k0 = (int)below(st, (uint32_t)width);
        int dr = (int)below(st, 3) - 1, dk = (int)below(st, 3) - 1;
        int len = 4 + (int)below(st, 20), pen = 1 + (int)below(st, 3);
        int ink = 30 + (int)below(st, 70);
        for (int t = 0; t < len; t++)
            for (int py = 0; py < pen; py++)
                for (int px = 0; px < pen; px++) {
                    int r = r0 + t * dr + py, k = k0 + t * dk + px;
                    if (r >= 0 && r < height && k >= 0 && k < width) {
                        img[r * width + k] = (uint8_t)ink;
                        bright[r * width + k] = 0;
                    }
                }
    }

    int rows = height - 1, cols = width - 1;
    grid_alloc(g, rows, cols);
#define I(r, k) ((int32_t)img[(r) * width + (k)])
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            int32_t x2, y2;
            if (k == 0)
                x2 = 2 * (I(r, 0) - 2 * I(r, 1) + I(r, 2));
            else if (k == width - 2)
                x2 = 2 * (I(r, width - 3) - 2 * I(r, width - 2) + I(r, width - 1));
            else
                x2 = I(r, k - 1) - I(r, k) - I(r, k + 1) + I(r, k + 2);
            if (r == 0)
                y2 = 2 * (I(0, k) - 2 * I(1, k) + I(2, k));
            else if (r == height - 2)
                y2 = 2 * (I(height - 3, k) - 2 * I(height - 2, k) + I(height - 1, k));
            else
                y2 = I(r - 1, k) - I(r, k) - I(r + 1, k) + I(r + 2, k);
            int32_t lap2 = bright[r * width + k] ? -1000 : x2 + y2;
            howe_tlinks(g, r * cols + k, lap2);
            /* "Edge" pixels: a large step to some 4-neighbour. */
            int32_t dx = I(r, k + 1) - I(r, k), dy = I(r + 1, k) - I(r, k);
            int edge_here = dx > 60 || dx < -60 || dy > 60 || dy < -60;
            int edge_right = k + 1 < cols && (I(r, k + 2) - I(r, k + 1) > 60 || I(r, k + 2) - I(r, k + 1) < -60);
            int edge_down = r + 1 < rows && (I(r + 2, k) - I(r + 1, k) > 60 || I(r + 2, k) - I(r + 1, k) < -60);
            int cut_right = dx > 0 ? edge_here : edge_right;
            int cut_down = dy > 0 ? edge_here : edge_down;
            g->right[r * cols + k] = k + 1 < cols && !cut_right ? link : 0;
            g->down[r * cols + k] = r + 1 < rows && !cut_down ? link : 0;
        }
#undef I
    free(img);
    free(bright);
}

/* ------------------------------------------------------------ tests */

/* Hand-checked graphs: the canonical side of a tie is the source side. */
static void test_small_cases(void)
{
    uint8_t lab[2];
    int32_t zero[2] = {0, 0};
    struct {
        int32_t s, t;
        int64_t flow;
        uint8_t ink;
    } one[] = {{5, 3, 3, 0}, {3, 5, 3, 1}, {4, 4, 4, 0}, {0, 0, 0, 0}, {0, 7, 0, 1}};
    for (size_t j = 0; j < sizeof one / sizeof one[0]; j++) {
        db_grid_cut *cut = NULL;
        CHECK(db_grid_cut_new(1, 1, &one[j].s, &one[j].t, zero, zero, &cut) == DB_OK, "1x1 new");
        if (!cut)
            continue;
        int64_t f = db_grid_cut_solve(cut);
        db_grid_cut_labels(cut, lab);
        CHECK(f == one[j].flow && lab[0] == one[j].ink, "1x1 s=%d t=%d: flow %lld label %d", (int)one[j].s,
              (int)one[j].t, (long long)f, lab[0]);
        db_grid_cut_free(cut);
    }

    /* s -> a -(3)- b -> t: flow 3; a keeps source residual, b sink residual. */
    int32_t src[2] = {10, 0}, snk[2] = {0, 10}, right[2] = {3, 99}, down[2] = {99, 99};
    db_grid_cut *cut = NULL;
    CHECK(db_grid_cut_new(1, 2, src, snk, right, down, &cut) == DB_OK, "1x2 new");
    if (cut) {
        int64_t f = db_grid_cut_solve(cut);
        db_grid_cut_labels(cut, lab);
        CHECK(f == 3 && lab[0] == 0 && lab[1] == 1, "1x2: flow %lld labels %d %d", (long long)f, lab[0], lab[1]);
        /* Raised by 4, the link lets 7 through; 3 stay on each t-link. */
        db_grid_cut_raise_links(cut, 4);
        f = db_grid_cut_solve(cut);
        db_grid_cut_labels(cut, lab);
        CHECK(f == 7 && lab[0] == 0 && lab[1] == 1, "1x2 raised: flow %lld labels %d %d", (long long)f, lab[0],
              lab[1]);
        db_grid_cut_raise_links(cut, 100);
        f = db_grid_cut_solve(cut);
        db_grid_cut_labels(cut, lab);
        CHECK(f == 10 && lab[0] == 0 && lab[1] == 0, "1x2 raised again: flow %lld labels %d %d", (long long)f,
              lab[0], lab[1]);
        db_grid_cut_free(cut);
    }
    db_grid_cut_free(NULL);

    /* Bad arguments are refused with a message. */
    cut = (db_grid_cut *)&lab;
    CHECK(db_grid_cut_new(0, 3, src, snk, right, down, &cut) == DB_ERR_USAGE && cut == NULL, "0 rows accepted");
    int32_t neg[2] = {-1, 0};
    CHECK(db_grid_cut_new(1, 2, neg, snk, right, down, &cut) == DB_ERR_USAGE && cut == NULL,
          "negative capacity accepted");
    CHECK(db_error_message()[0] != '\0', "no message for a refused grid");
    /* A capacity out of range in the middle of the grid: refused, naming the node, nothing returned. */
    int32_t ok9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, big9[9] = {1, 2, 3, 4, (1 << 29) + 1, 6, 7, 8, 9};
    cut = (db_grid_cut *)&lab;
    CHECK(db_grid_cut_new(3, 3, ok9, ok9, big9, ok9, &cut) == DB_ERR_USAGE && cut == NULL &&
              strstr(db_error_message(), "node (1, 1)"),
          "a link capacity over the limit mid-grid: %s", db_error_message());
    /* Capacities of links that do not exist (last column/row) are ignored. */
    int32_t bad_edge[2] = {5, -7};
    CHECK(db_grid_cut_new(1, 2, src, snk, bad_edge, bad_edge, &cut) == DB_OK, "ignored links were checked");
    db_grid_cut_free(cut);
}

/* Many random graphs of every kind and shape against Dinic. */
static void test_random_graphs(void)
{
    static const int shapes[][2] = {{1, 1}, {1, 2},  {2, 1},   {1, 7},   {7, 1},   {2, 2},  {3, 5},
                                    {5, 3}, {1, 50}, {50, 1},  {1, 300}, {300, 1}, {4, 4},  {8, 8},
                                    {9, 13}, {16, 16}, {20, 31}, {31, 20}, {40, 40}, {64, 48}};
    uint32_t st = 0x2545f491u;
    char name[64];
    for (int kind = 0; kind < KINDS; kind++)
        for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++)
            for (int rep = 0; rep < 6; rep++) {
                grid g;
                grid_alloc(&g, shapes[j][0], shapes[j][1]);
                snprintf(name, sizeof name, "%s #%d seed %08x", kind_name[kind], rep, (unsigned)st);
                random_grid(&g, (enum kind)kind, &st);
                compare(name, &g);
                grid_free(&g);
            }
    /* Random shapes. */
    for (int rep = 0; rep < 150; rep++) {
        grid g;
        grid_alloc(&g, 1 + (int)below(&st, 24), 1 + (int)below(&st, 24));
        int kind = (int)below(&st, KINDS);
        snprintf(name, sizeof name, "%s random shape seed %08x", kind_name[kind], (unsigned)st);
        random_grid(&g, (enum kind)kind, &st);
        compare(name, &g);
        grid_free(&g);
    }
    /* A few large ones. */
    static const int large[][3] = {{300, 300, HUGE}, {300, 300, HOWE_NOISE}, {200, 300, SPLIT},
                                   {300, 200, SMALL}, {150, 300, TIES}};
    for (size_t j = 0; j < sizeof large / sizeof large[0]; j++) {
        grid g;
        grid_alloc(&g, large[j][0], large[j][1]);
        snprintf(name, sizeof name, "large %s seed %08x", kind_name[large[j][2]], (unsigned)st);
        random_grid(&g, (enum kind)large[j][2], &st);
        compare(name, &g);
        grid_free(&g);
    }
    /* Howe-like pages at the default and at extreme link capacities. */
    static const int pages[][3] = {{4, 4, 5120},      {5, 40, 640},      {40, 5, 163840},   {60, 80, 640},
                                   {60, 80, 5120},    {80, 60, 163840},  {200, 250, 5120},  {301, 301, 640},
                                   {301, 301, 20480}, {301, 301, 163840}};
    for (size_t j = 0; j < sizeof pages / sizeof pages[0]; j++) {
        grid g;
        snprintf(name, sizeof name, "page link %d seed %08x", pages[j][2], (unsigned)st);
        howe_page(&g, pages[j][0], pages[j][1], pages[j][2], &st);
        compare(name, &g);
        grid_free(&g);
    }
}

/* One warm chain: the graph starts with every kept link at 640 and is raised
** by the table differences; after each raise the warm solve must match a cold
** solve of the raised graph (flow and labels), and Dinic at the steps in
** `dinic_every` (every step for 1). */
static void warm_chain(const char *name, const grid *base, int dinic_every)
{
    size_t n = (size_t)base->rows * (size_t)base->cols;
    grid g;
    grid_alloc(&g, base->rows, base->cols);
    memcpy(g.source, base->source, n * sizeof(int32_t));
    memcpy(g.sink, base->sink, n * sizeof(int32_t));
    uint8_t *warm = malloc(n), *cold = malloc(n), *ref = malloc(n);
    if (!warm || !cold || !ref)
        exit(1);
    db_grid_cut *chain = NULL;
    for (int step = 0; step < 33; step++) {
        for (size_t i = 0; i < n; i++) {
            g.right[i] = base->right[i] > 0 ? link_table[step] : 0;
            g.down[i] = base->down[i] > 0 ? link_table[step] : 0;
        }
        if (step == 0)
            chain = make_cut(&g);
        else
            db_grid_cut_raise_links(chain, link_table[step] - link_table[step - 1]);
        int64_t wf = db_grid_cut_solve(chain);
        db_grid_cut_labels(chain, warm);
        db_grid_cut *fresh = make_cut(&g);
        int64_t cf = db_grid_cut_solve(fresh);
        db_grid_cut_labels(fresh, cold);
        db_grid_cut_free(fresh);
        CHECK(wf == cf, "%s step %d (link %d): warm flow %lld, cold %lld", name, step, (int)link_table[step],
              (long long)wf, (long long)cf);
        size_t diff = test_diff(warm, cold, n);
        CHECK(diff == 0, "%s step %d (link %d): %zu warm labels differ from cold", name, step,
              (int)link_table[step], diff);
        if (step % dinic_every == 0 || step == 32) {
            int64_t rf = ref_grid_maxflow(g.rows, g.cols, g.source, g.sink, g.right, g.down, ref);
            CHECK(wf == rf, "%s step %d: warm flow %lld, Dinic %lld", name, step, (long long)wf, (long long)rf);
            diff = test_diff(warm, ref, n);
            CHECK(diff == 0, "%s step %d: %zu warm labels differ from Dinic's", name, step, diff);
        }
    }
    db_grid_cut_free(chain);
    free(warm);
    free(cold);
    free(ref);
    grid_free(&g);
}

/* Raising before the first solve, and by 0, are plain capacity changes. */
static void test_raise_edge_cases(void)
{
    uint32_t st = 0x51ed270bu;
    grid g, h;
    grid_alloc(&g, 37, 23);
    random_grid(&g, HOWE_NOISE, &st);
    grid_alloc(&h, 37, 23);
    size_t n = (size_t)g.rows * (size_t)g.cols;
    memcpy(h.source, g.source, n * sizeof(int32_t));
    memcpy(h.sink, g.sink, n * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) {
        h.right[i] = g.right[i] > 0 ? g.right[i] + 1000 : 0;
        h.down[i] = g.down[i] > 0 ? g.down[i] + 1000 : 0;
    }
    uint8_t *a = malloc(n), *b = malloc(n);
    if (!a || !b)
        exit(1);
    db_grid_cut *raised = make_cut(&g), *direct = make_cut(&h);
    db_grid_cut_raise_links(raised, 600);
    db_grid_cut_raise_links(raised, 0);
    db_grid_cut_raise_links(raised, 400);
    int64_t fr = db_grid_cut_solve(raised), fd = db_grid_cut_solve(direct);
    db_grid_cut_labels(raised, a);
    db_grid_cut_labels(direct, b);
    CHECK(fr == fd && test_diff(a, b, n) == 0, "raised before solving: flow %lld, want %lld", (long long)fr,
          (long long)fd);
    db_grid_cut_raise_links(raised, 0);
    CHECK(db_grid_cut_solve(raised) == fr, "a raise by 0 changed the flow");
    db_grid_cut_free(raised);
    db_grid_cut_free(direct);

    /* Labels before any solve: nodes with sink residual and what reaches them. */
    int32_t src[3] = {0, 5, 0}, snk[3] = {0, 0, 4}, right[3] = {2, 1, 0}, down[3] = {0, 0, 0};
    db_grid_cut *cut = NULL;
    CHECK(db_grid_cut_new(1, 3, src, snk, right, down, &cut) == DB_OK, "1x3 new");
    if (cut) {
        db_grid_cut_labels(cut, a);
        CHECK(a[0] == 1 && a[1] == 1 && a[2] == 1, "unsolved labels %d %d %d", a[0], a[1], a[2]);
        CHECK(db_grid_cut_solve(cut) == 1, "1x3 flow");
        db_grid_cut_labels(cut, a);
        CHECK(a[0] == 0 && a[1] == 0 && a[2] == 1, "1x3 labels %d %d %d", a[0], a[1], a[2]);
        db_grid_cut_free(cut);
    }
    free(a);
    free(b);
    grid_free(&g);
    grid_free(&h);
}

static void test_warm_start(void)
{
    uint32_t st = 0x9e3779b9u;
    char name[64];
    static const int noise[][2] = {{1, 1}, {1, 40}, {40, 1}, {7, 9}, {30, 30}, {64, 80}, {150, 200}};
    for (size_t j = 0; j < sizeof noise / sizeof noise[0]; j++)
        for (int rep = 0; rep < 3; rep++) {
            grid g;
            grid_alloc(&g, noise[j][0], noise[j][1]);
            snprintf(name, sizeof name, "warm howe-noise %dx%d seed %08x", g.rows, g.cols, (unsigned)st);
            random_grid(&g, HOWE_NOISE, &st);
            warm_chain(name, &g, g.rows * g.cols <= 2500 ? 1 : 8);
            grid_free(&g);
        }
    static const int pages[][2] = {{4, 5}, {30, 40}, {60, 90}, {120, 160}, {241, 321}};
    for (size_t j = 0; j < sizeof pages / sizeof pages[0]; j++)
        for (int rep = 0; rep < 2; rep++) {
            grid g;
            snprintf(name, sizeof name, "warm page %dx%d seed %08x", pages[j][0], pages[j][1], (unsigned)st);
            howe_page(&g, pages[j][0], pages[j][1], 640, &st);
            warm_chain(name, &g, g.rows * g.cols <= 2500 ? 1 : 8);
            grid_free(&g);
        }
}

int main(void)
{
    test_small_cases();
    test_random_graphs();
    test_raise_edge_cases();
    test_warm_start();
    return test_result("maxflow");
}
