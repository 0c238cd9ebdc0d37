/*
** test_maxflow_oracle.cpp — the grid cut (algorithms/maxflow.c) against
** Debian's libmaxflow (Boykov-Kolmogorov v3.0.5), the optional oracle of
** docs/howe.md, "The solvers": Graph<double,double,double>,
** add_tweights(i, source, sink), add_edge(p, q, w, w) for every kept link,
** maxflow(), ink = what_segment(i) == SINK. Flow values and labels must be
** identical, on random grids, on Howe graphs of synthetic pages (built by
** tests/reference_howe.c) and along warm-start chains over the 33 link
** capacities of docs/howe.md, "The values of c" (each warm solve against a
** fresh libmaxflow graph).
**
** Built only where libmaxflow and a C++ compiler are found (meson.build).
*/
#include <maxflow.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "algorithms/maxflow.h"
#include "bench/synth.h"
#include "tests/reference_howe.h"
#include "tests/testutil.h"
}

namespace {

const int32_t link_table[33] = {640,   761,   905,   1076,  1280,  1522,   1810,   2153,  2560,  3044,  3620,
                                4305,  5120,  6089,  7241,  8611,  10240,  12177,  14482, 17222, 20480, 24355,
                                28963, 34443, 40960, 48710, 57926, 68886,  81920,  97420, 115852, 137772, 163840};

struct grid {
    int rows = 0, cols = 0;
    std::vector<int32_t> source, sink, right, down;
    grid(int r, int c) : rows(r), cols(c), source((size_t)r * c), sink((size_t)r * c), right((size_t)r * c),
                         down((size_t)r * c) {}
};

uint32_t below(uint32_t *st, uint32_t n)
{
    return test_random(st) % n;
}

/* The oracle recipe. Returns the flow; labels into `ink`. */
int64_t oracle(const grid &g, std::vector<uint8_t> &ink)
{
    typedef maxflow::Graph_DDD G;
    int n = g.rows * g.cols;
    G graph(n, 2 * n, nullptr);
    graph.add_node(n);
    for (int i = 0; i < n; i++)
        graph.add_tweights(i, g.source[i], g.sink[i]);
    for (int r = 0; r < g.rows; r++)
        for (int c = 0; c < g.cols; c++) {
            int i = r * g.cols + c;
            if (c + 1 < g.cols && g.right[i] > 0)
                graph.add_edge(i, i + 1, g.right[i], g.right[i]);
            if (r + 1 < g.rows && g.down[i] > 0)
                graph.add_edge(i, i + g.cols, g.down[i], g.down[i]);
        }
    double flow = graph.maxflow();
    ink.resize((size_t)n);
    for (int i = 0; i < n; i++)
        ink[(size_t)i] = graph.what_segment(i) == G::SINK;
    return (int64_t)flow;
}

db_grid_cut *make_cut(const grid &g)
{
    db_grid_cut *cut = nullptr;
    if (db_grid_cut_new(g.rows, g.cols, g.source.data(), g.sink.data(), g.right.data(), g.down.data(), &cut) !=
        DB_OK) {
        std::fprintf(stderr, "db_grid_cut_new: %s\n", db_error_message());
        std::exit(1);
    }
    return cut;
}

void compare(const char *name, const grid &g)
{
    std::vector<uint8_t> want, got((size_t)g.rows * g.cols);
    int64_t ref = oracle(g, want);
    db_grid_cut *cut = make_cut(g);
    int64_t flow = db_grid_cut_solve(cut);
    db_grid_cut_labels(cut, got.data());
    db_grid_cut_free(cut);
    CHECK(flow == ref, "%s (%dx%d): flow %lld, libmaxflow %lld", name, g.rows, g.cols, (long long)flow,
          (long long)ref);
    size_t diff = test_diff(got.data(), want.data(), got.size());
    CHECK(diff == 0, "%s (%dx%d): %zu labels differ from libmaxflow's", name, g.rows, g.cols, diff);
}

/* Random grids: small capacities with zeros and ties, or the ranges of Howe's capacities. */
void random_grid(grid &g, int kind, uint32_t *st)
{
    for (size_t i = 0; i < g.source.size(); i++) {
        if (kind == 0) {
            g.source[i] = (int32_t)below(st, 6);
            g.sink[i] = below(st, 3) == 0 ? g.source[i] : (int32_t)below(st, 6);
            g.right[i] = below(st, 4) == 0 ? 0 : (int32_t)below(st, 5);
            g.down[i] = below(st, 4) == 0 ? 0 : (int32_t)below(st, 5);
        } else {
            int32_t lap2 = below(st, 8) == 0 ? -1000 : (int32_t)below(st, 4081) - 2040;
            g.source[i] = 16 * (3000 - lap2);
            g.sink[i] = 16 * (3000 + lap2);
            int32_t c = link_table[below(st, 33)];
            g.right[i] = below(st, 5) == 0 ? 0 : c;
            g.down[i] = below(st, 5) == 0 ? 0 : c;
        }
    }
}

/* Howe's graph of a synthetic page; kept links marked 1. */
grid page_graph(int width, int height, uint32_t seed)
{
    db_synth_params p;
    db_synth_defaults(&p);
    p.width = width;
    p.height = height;
    p.dpi = 150;
    p.seed = seed;
    p.color = 0;
    db_image *img = nullptr;
    if (db_synth_render(&p, &img, nullptr) != DB_OK) {
        std::fprintf(stderr, "synth: %s\n", db_error_message());
        std::exit(1);
    }
    size_t n = (size_t)width * height;
    std::vector<uint8_t> gray(n), himask(n), edges(n);
    for (int r = 0; r < height; r++)
        std::memcpy(&gray[(size_t)r * width], img->data + (size_t)r * img->stride, (size_t)width);
    db_image_free(img);
    grid g(height - 1, width - 1);
    std::vector<int32_t> lap2(g.source.size());
    ref_howe_lap2(gray.data(), width, height, lap2.data());
    ref_howe_bias_mask(gray.data(), width, height, himask.data());
    ref_howe_canny(gray.data(), width, height, 0.6, 0.1, 0.4, edges.data());
    ref_howe_tlinks(lap2.data(), himask.data(), width, height, g.source.data(), g.sink.data());
    ref_howe_nlinks(gray.data(), edges.data(), width, height, 1, g.right.data(), g.down.data());
    return g;
}

grid with_links(const grid &kept, int32_t cap)
{
    grid g = kept;
    for (size_t i = 0; i < g.right.size(); i++) {
        g.right[i] = kept.right[i] > 0 ? cap : 0;
        g.down[i] = kept.down[i] > 0 ? cap : 0;
    }
    return g;
}

/* The tuning chain: one graph raised through the table, each warm solve
** against a fresh libmaxflow graph with those capacities. */
void warm_chain(const char *name, const grid &kept)
{
    std::vector<uint8_t> want, got(kept.source.size());
    db_grid_cut *cut = nullptr;
    for (int step = 0; step < 33; step++) {
        grid g = with_links(kept, link_table[step]);
        if (step == 0)
            cut = make_cut(g);
        else
            db_grid_cut_raise_links(cut, link_table[step] - link_table[step - 1]);
        int64_t flow = db_grid_cut_solve(cut);
        db_grid_cut_labels(cut, got.data());
        int64_t ref = oracle(g, want);
        CHECK(flow == ref, "%s step %d: warm flow %lld, libmaxflow %lld", name, step, (long long)flow,
              (long long)ref);
        size_t diff = test_diff(got.data(), want.data(), got.size());
        CHECK(diff == 0, "%s step %d: %zu warm labels differ from libmaxflow's", name, step, diff);
    }
    db_grid_cut_free(cut);
}

}  // namespace

int main()
{
    uint32_t st = 0x6a09e667u;
    char name[96];
    for (int rep = 0; rep < 400; rep++) {
        int kind = rep % 2;
        grid g(1 + (int)below(&st, 40), 1 + (int)below(&st, 40));
        std::snprintf(name, sizeof name, "random kind %d seed %08x", kind, (unsigned)st);
        random_grid(g, kind, &st);
        compare(name, g);
    }
    for (int kind = 0; kind < 2; kind++) {
        grid g(300, 300);
        std::snprintf(name, sizeof name, "large kind %d seed %08x", kind, (unsigned)st);
        random_grid(g, kind, &st);
        compare(name, g);
    }
    static const int pages[][3] = {{400, 300, 1}, {300, 400, 2}, {640, 480, 3}};
    for (const auto &p : pages) {
        grid kept = page_graph(p[0], p[1], (uint32_t)p[2]);
        std::snprintf(name, sizeof name, "page %dx%d seed %d", p[0], p[1], p[2]);
        compare(name, with_links(kept, 5120));
        warm_chain(name, kept);
    }
    for (int rep = 0; rep < 4; rep++) {
        grid kept(20 + (int)below(&st, 100), 20 + (int)below(&st, 100));
        std::snprintf(name, sizeof name, "warm random %dx%d seed %08x", kept.rows, kept.cols, (unsigned)st);
        random_grid(kept, 1, &st);
        warm_chain(name, kept);
    }
    return test_result("maxflow_oracle");
}
