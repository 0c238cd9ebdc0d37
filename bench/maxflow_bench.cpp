/*
** maxflow_bench.cpp — docbin's grid cut (algorithms/maxflow.c) side by side
** with Debian's libmaxflow (Boykov-Kolmogorov v3.0.5) on Howe graphs.
**
** The graphs are Howe's (docs/howe.md §§1–5, integer capacities), built by the
** test reference (tests/reference_howe.c) from synthetic pages
** (bench/synth.c) and from any image files named on the command line:
** lap2 and the bias give the t-links, Canny (σ 0.6, t_lo 0.1, t_hi 0.4) the
** kept n-links. Two workloads per graph:
**   single  one cut at the static default link capacity 5120 (c = 160);
**   chain   the 33 ascending capacities of docs/howe.md, "The values of c",
**           on one graph, as a tuning chain runs them: docbin raises the links
**           and resumes (docs/howe.md, "Warm chains"); libmaxflow
**           does what Howe's imgcutmulti does (raise every arc, mark the ends
**           of the arcs that were saturated, maxflow(reuse_trees = true)).
** Each time is the median of --runs runs and covers building the graph, the
** solves and reading every label; "solve" is maxflow alone. libmaxflow runs as
** Graph<int,int,int> and as the oracle's Graph<double,double,double>. Labels
** must agree exactly (docbin's canonical cut = BK's what_segment == SINK).
**
** Usage: maxflow_bench [--runs N] [--no-a4] [--no-chain] [image ...]
*/
#include <maxflow.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "algorithms/maxflow.h"
#include "bench/synth.h"
#include "runtime/image.h"
#include "tests/reference_howe.h"
}

namespace {

const int32_t link_table[33] = {640,   761,   905,   1076,  1280,  1522,   1810,   2153,  2560,  3044,  3620,
                                4305,  5120,  6089,  7241,  8611,  10240,  12177,  14482, 17222, 20480, 24355,
                                28963, 34443, 40960, 48710, 57926, 68886,  81920,  97420, 115852, 137772, 163840};

struct howe_graph {
    std::string name;
    int rows = 0, cols = 0;
    std::vector<int32_t> source, sink, right, down;  // right/down: 1 = kept link
    long kept = 0;
};

double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Howe's graph of a page, with kept links marked 1. */
howe_graph build_graph(const std::string &name, const db_image *img)
{
    int w = img->width, h = img->height;
    size_t n = (size_t)w * (size_t)h;
    std::vector<uint8_t> packed(n * (size_t)img->channels), gray(n), himask(n), edges(n);
    for (int r = 0; r < h; r++)
        std::memcpy(&packed[(size_t)r * (size_t)w * (size_t)img->channels], img->data + (size_t)r * img->stride,
                    (size_t)w * (size_t)img->channels);
    ref_howe_gray(packed.data(), w, h, img->channels, gray.data());
    howe_graph g;
    g.name = name;
    g.rows = h - 1;
    g.cols = w - 1;
    size_t nodes = (size_t)g.rows * (size_t)g.cols;
    std::vector<int32_t> lap2(nodes);
    g.source.resize(nodes);
    g.sink.resize(nodes);
    g.right.resize(nodes);
    g.down.resize(nodes);
    ref_howe_lap2(gray.data(), w, h, lap2.data());
    ref_howe_bias_mask(gray.data(), w, h, himask.data());
    ref_howe_canny(gray.data(), w, h, 0.6, 0.1, 0.4, edges.data());
    ref_howe_tlinks(lap2.data(), himask.data(), w, h, g.source.data(), g.sink.data());
    ref_howe_nlinks(gray.data(), edges.data(), w, h, 1, g.right.data(), g.down.data());
    for (size_t i = 0; i < nodes; i++)
        g.kept += g.right[i] + g.down[i];
    return g;
}

std::vector<int32_t> scaled(const std::vector<int32_t> &kept, int32_t cap)
{
    std::vector<int32_t> v(kept.size());
    for (size_t i = 0; i < kept.size(); i++)
        v[i] = kept[i] ? cap : 0;
    return v;
}

struct timing {
    double total = 0, solve = 0;
    double flow = 0;  // of the last cut
};

/* docbin: `caps` capacities, warm after the first. Labels of the last cut
** into `labels`, every cut's labels into `all` when given. */
timing run_docbin(const howe_graph &g, const std::vector<int32_t> &caps, std::vector<uint8_t> &labels,
                  std::vector<std::vector<uint8_t>> *all)
{
    timing t;
    double t0 = now_ms();
    std::vector<int32_t> right = scaled(g.right, caps[0]), down = scaled(g.down, caps[0]);
    db_grid_cut *cut = nullptr;
    if (db_grid_cut_new(g.rows, g.cols, g.source.data(), g.sink.data(), right.data(), down.data(), &cut) != DB_OK) {
        std::fprintf(stderr, "db_grid_cut_new: %s\n", db_error_message());
        std::exit(1);
    }
    labels.resize(g.source.size());
    for (size_t k = 0; k < caps.size(); k++) {
        if (k > 0)
            db_grid_cut_raise_links(cut, caps[k] - caps[k - 1]);
        double s0 = now_ms();
        t.flow = (double)db_grid_cut_solve(cut);
        t.solve += now_ms() - s0;
        db_grid_cut_labels(cut, labels.data());
        if (all)
            (*all)[k] = labels;
    }
    db_grid_cut_free(cut);
    t.total = now_ms() - t0;
    return t;
}

/* libmaxflow with the oracle recipe of docs/howe.md, "The solvers"; a chain raises
** and re-marks like Howe's imgcutmulti. */
template <typename G>
timing run_bk(const howe_graph &g, const std::vector<int32_t> &caps, std::vector<uint8_t> &labels)
{
    timing t;
    double t0 = now_ms();
    int nodes = g.rows * g.cols;
    G *graph = new G(nodes, (int)g.kept, nullptr);
    graph->add_node(nodes);
    for (int i = 0; i < nodes; i++)
        graph->add_tweights(i, g.source[i], g.sink[i]);
    for (int r = 0; r < g.rows; r++)
        for (int c = 0; c < g.cols; c++) {
            int i = r * g.cols + c;
            if (g.right[i])
                graph->add_edge(i, i + 1, caps[0], caps[0]);
            if (g.down[i])
                graph->add_edge(i, i + g.cols, caps[0], caps[0]);
        }
    labels.resize((size_t)nodes);
    for (size_t k = 0; k < caps.size(); k++) {
        if (k > 0) {
            auto delta = caps[k] - caps[k - 1];
            typename G::arc_id a = graph->get_first_arc();
            for (int j = 0; j < graph->get_arc_num(); j++, a = graph->get_next_arc(a)) {
                auto rc = graph->get_rcap(a);
                if (rc == 0) {
                    int p, q;
                    graph->get_arc_ends(a, p, q);
                    graph->mark_node(p);
                    graph->mark_node(q);
                }
                graph->set_rcap(a, rc + delta);
            }
        }
        double s0 = now_ms();
        t.flow = (double)graph->maxflow(k > 0);
        t.solve += now_ms() - s0;
        for (int i = 0; i < nodes; i++)
            labels[(size_t)i] = graph->what_segment(i) == G::SINK;
    }
    delete graph;
    t.total = now_ms() - t0;
    return t;
}

struct row {
    std::string what;
    timing db, bki, bkd;
    size_t mismatches;
};

row bench(const howe_graph &g, const std::vector<int32_t> &caps, int runs, const char *what)
{
    std::vector<double> db_t, db_s, bki_t, bki_s, bkd_t, bkd_s;
    std::vector<uint8_t> ldb, lbki, lbkd;
    row out;
    out.what = what;
    out.mismatches = 0;
    for (int r = 0; r < runs; r++) {
        timing a = run_docbin(g, caps, ldb, nullptr);
        timing b = run_bk<maxflow::Graph_III>(g, caps, lbki);
        timing c = run_bk<maxflow::Graph_DDD>(g, caps, lbkd);
        db_t.push_back(a.total);
        db_s.push_back(a.solve);
        bki_t.push_back(b.total);
        bki_s.push_back(b.solve);
        bkd_t.push_back(c.total);
        bkd_s.push_back(c.solve);
        out.db.flow = a.flow;
        out.bkd.flow = c.flow;
        for (size_t i = 0; i < ldb.size(); i++)
            out.mismatches += (ldb[i] != lbki[i]) + (ldb[i] != lbkd[i]);
        if (a.flow != c.flow)
            out.mismatches++;
    }
    out.db.total = median(db_t);
    out.db.solve = median(db_s);
    out.bki.total = median(bki_t);
    out.bki.solve = median(bki_s);
    out.bkd.total = median(bkd_t);
    out.bkd.solve = median(bkd_s);
    return out;
}

db_image *synth_page(int width, int height, uint32_t seed)
{
    db_synth_params p;
    db_synth_defaults(&p);
    p.width = width;
    p.height = height;
    p.seed = seed;
    db_image *page = nullptr;
    if (db_synth_render(&p, &page, nullptr) != DB_OK) {
        std::fprintf(stderr, "synth: %s\n", db_error_message());
        std::exit(1);
    }
    return page;
}

}  // namespace

int main(int argc, char **argv)
{
    int runs = 5;
    bool a4 = true, chain = true;
    std::vector<std::string> files;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--no-a4"))
            a4 = false;
        else if (!std::strcmp(argv[i], "--no-chain"))
            chain = false;
        else
            files.push_back(argv[i]);
    }
    if (runs < 1) {
        std::fprintf(stderr, "usage: maxflow_bench [--runs N] [--no-a4] [--no-chain] [image ...]\n");
        return 2;
    }

    std::vector<howe_graph> graphs;
    if (a4) {
        db_image *p = synth_page(DB_SYNTH_A4_WIDTH, DB_SYNTH_A4_HEIGHT, 1);
        graphs.push_back(build_graph("synth A4 2516x3272 seed 1", p));
        db_image_free(p);
    }
    {
        db_image *p = synth_page(1000, 800, 2);
        graphs.push_back(build_graph("synth 1000x800 seed 2", p));
        db_image_free(p);
    }
    for (const std::string &f : files) {
        db_image *p = db_image_read(f.c_str());
        if (!p) {
            std::fprintf(stderr, "%s\n", db_error_message());
            return 1;
        }
        std::string base = f.substr(f.find_last_of('/') + 1);
        graphs.push_back(build_graph(base + " " + std::to_string(p->width) + "x" + std::to_string(p->height), p));
        db_image_free(p);
    }

    std::printf("Median of %d runs; ms. total = build graph + solve(s) + read labels; solve = maxflow only.\n"
                "BK<int> = libmaxflow Graph<int,int,int>, BK<double> = Graph<double,double,double>.\n\n",
                runs);
    std::printf("| graph | nodes | cuts | docbin total | docbin solve | BK<int> total | BK<int> solve | "
                "BK<double> total | BK<double> solve | BK<int>/docbin total | label mismatches |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<int32_t> single = {5120};
    std::vector<int32_t> all(link_table, link_table + 33);
    int failed = 0;
    for (const howe_graph &g : graphs) {
        for (int k = 0; k < (chain ? 2 : 1); k++) {
            row r = bench(g, k ? all : single, runs, k ? "33 (chain)" : "1 (c=160)");
            std::printf("| %s | %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %zu |\n", g.name.c_str(),
                        g.rows * g.cols, r.what.c_str(), r.db.total, r.db.solve, r.bki.total, r.bki.solve,
                        r.bkd.total, r.bkd.solve, r.bki.total / r.db.total, r.mismatches);
            std::fflush(stdout);
            failed |= r.mismatches != 0;
        }
    }
    return failed;
}
