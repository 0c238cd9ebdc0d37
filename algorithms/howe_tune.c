/*
** howe_tune.c — `howe-auto`: Howe's parameter tuning as a stage graph,
** laplacian, canny, chain-a, chain-b, chain-c → select (docs/howe.md).
**
** `canny` makes the edge map of every high threshold the search tries, from
** one gradient. Each chain stage cuts the graph of its thresholds at the 33
** values of c in ascending order, warm: a cut starts from the previous one's
** flow (Boykov-Kolmogorov keeps its search trees, push-relabel its excess,
** flows and, after a global relabel, heights), which is valid because raising
** c only raises link capacities. Labels are canonical, so a warm chain gives
** exactly the labels of cold cuts at every c, on either role. Each cut is one
** bit of a word per node; one pass over the words counts how much successive
** images differ, the chain rule keeps one c, and one more pass draws its
** image. The three chain stages are independent, so a map may run them on
** different devices at once. `select` applies the threshold rule.
**
** The rules run on the host from integer counts: in a chain's host code on the
** cpu role (so that a CPU chain never blocks the thread that enqueues the
** others), after reading the counts back on the gpu role.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/howe_tune.h"
#include "algorithms/maxflow.h"
#include "algorithms/pushrelabel.h"
#include "runtime/sched.h"

enum { IMAGE, GRAY, LAP2, EDGES, CHAIN_A, CHAIN_B, CHAIN_C, BINARY, REPORT, N_ITEMS };

/* The chain stages, and the chains of a search each takes: chain j of the
** search (its j-th threshold) runs on stage j % CHAIN_STAGES, in slot
** j / CHAIN_STAGES of that stage's item. */
#define CHAIN_STAGES 3
#define MAX_SLOTS ((DB_HOWE_MAX_CHAINS + CHAIN_STAGES - 1) / CHAIN_STAGES)

/* Nodes of the stacked chains at most (chains_stacked): Alg3 on an A4 page at
** 300 dpi, Alg2 on pages of a third of that; beyond, the chains take turns,
** each in the memory of one (the cut also counts its nodes in int). */
#define STACKED_NODES ((size_t)32 << 20)

/* Nodes up to which a stack of chains is still bound by its solves' count of
** launches rather than by their work: up to there a chain's 33 cuts are split
** into 11 or 3 shorter warm chains (chains_stacked). */
#define SPLIT_NODES ((size_t)24 << 20)

/* The header of a chain item (cl/howe_tune.cl): SLOT_WORDS uint32 per slot. */
enum { SLOT_WORDS = 128, H_PICK = 0, H_CUTS = 1, H_TRUTH = 2, H_DIFF = 3, H_INK = 35, H_HIT = 68 };
#define HEADER_BYTES ((size_t)MAX_SLOTS * SLOT_WORDS * sizeof(cl_uint))

/* howe-auto's parameters take the indices of howe's (algorithms.h), so that
** the shared stages read thi, tlo, sigma and relabel where they expect them;
** `search` takes the slot of c, which the tuning chooses. */
enum { P_SEARCH = DB_HOWE_C };

const double db_howe_alg3_thi[3] = {0.25, 0.375, 0.5};
const double db_howe_grid_thi[DB_HOWE_MAX_CHAINS] = {0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65};

/* ---- the rules ---- */

/* MATLAB's fspecial('gaussian', [6 1], 1): exp(-y^2 / 2) at y = -2.5 .. 2.5, normalised. */
static void smoothing_filter(double f[6])
{
    double sum = 0.0;
    for (int k = 0; k < 6; k++) {
        double y = k - 2.5;
        f[k] = exp(-(y * y) / 2.0);
        sum += f[k];
    }
    for (int k = 0; k < 6; k++)
        f[k] /= sum;
}

/* The smoothed curve of n differences: the full convolution with the filter
** (zero outside), entries 3 .. n + 3 (1-based), n + 1 values; each sums its
** taps in filter order from 0. */
static void smooth(const int64_t *diff, int n, int64_t pixels, double *d)
{
    double f[6];
    smoothing_filter(f);
    for (int i = 1; i <= n + 1; i++) {
        double acc = 0.0;
        for (int k = 1; k <= 6; k++) {
            int j = i + 3 - k; /* 1-based index of the difference this tap reads */
            if (j >= 1 && j <= n)
                acc += f[k - 1] * ((double)diff[j - 1] / (double)pixels);
        }
        d[i - 1] = acc;
    }
}

int db_howe_alg1(const int64_t diff[DB_HOWE_LINKS - 1], int64_t pixels)
{
    enum { N = DB_HOWE_LINKS };
    double d[N];
    smooth(diff, N - 1, pixels, d);
    double best = -INFINITY;
    int pick = 0;
    for (int i = 1; i <= N - 2; i++)
        for (int j = i + 2; j <= N; j++)
            for (int k = i + 1; k <= j - 1; k++) {
                double v = d[i - 1] + d[j - 1] - 2.0 * d[k - 1];
                if (v > best) {
                    best = v;
                    pick = k - 1;
                }
            }
    return pick;
}

int db_howe_alg2(const int64_t diff[DB_HOWE_MAX_CHAINS - 1], int64_t pixels)
{
    enum { N = DB_HOWE_MAX_CHAINS };
    double d[N];
    smooth(diff, N - 1, pixels, d);
    int pick = 0;
    for (int i = 1; i < N; i++)
        if (d[i] < d[pick])
            pick = i;
    return pick;
}

int db_howe_alg3(int64_t dlo, int64_t dhi)
{
    return dlo < dhi ? 0 : 2;
}

double db_howe_f(int64_t hits, int64_t inks, int64_t truth)
{
    return inks + truth ? 2.0 * (double)hits / (double)(inks + truth) : 1.0;
}

int db_howe_best_f(const int64_t *hits, const int64_t *inks, int64_t truth, int n)
{
    int pick = 0;
    for (int i = 1; i < n; i++)
        if (db_howe_f(hits[i], inks[i], truth) > db_howe_f(hits[pick], inks[pick], truth))
            pick = i;
    return pick;
}

/* ---- the probe ---- */

static _Thread_local db_howe_probe *current_probe;

void db_howe_probe_attach(db_howe_probe *probe)
{
    current_probe = probe;
}

db_howe_probe *db_howe_probe_current(void)
{
    return current_probe;
}

/* ---- the searches ---- */

/* The high thresholds the job's search tries, in order; returns their number. */
static int thresholds(const db_job *job, const double **thi)
{
    switch ((db_howe_search)job->params[P_SEARCH]) {
    case DB_HOWE_SEARCH_C:
        *thi = &job->params[DB_HOWE_THI];
        return 1;
    case DB_HOWE_ALG2:
    case DB_HOWE_GRID:
        *thi = db_howe_grid_thi;
        return DB_HOWE_MAX_CHAINS;
    default:
        *thi = db_howe_alg3_thi;
        return DB_LEN(db_howe_alg3_thi);
    }
}

/* The chains of stage `stage` under the job's search. */
static int stage_slots(const db_job *job, int stage)
{
    const double *thi;
    int n = thresholds(job, &thi);
    return n > stage ? (n - stage + CHAIN_STAGES - 1) / CHAIN_STAGES : 0;
}

static size_t pixels(int width, int height)
{
    return (size_t)width * (size_t)height;
}

static size_t edges_size(const db_job *job, int width, int height)
{
    const double *thi;
    return (size_t)thresholds(job, &thi) * pixels(width, height);
}

static size_t chain_size(const db_job *job, int width, int height, int stage)
{
    return HEADER_BYTES + (size_t)stage_slots(job, stage) * pixels(width, height);
}

static size_t chain_a_size(const db_job *job, int width, int height) { return chain_size(job, width, height, 0); }
static size_t chain_b_size(const db_job *job, int width, int height) { return chain_size(job, width, height, 1); }
static size_t chain_c_size(const db_job *job, int width, int height) { return chain_size(job, width, height, 2); }

/* A launch over the pixels for the counting kernels: contiguous chunks per
** work-item on a CPU device, a strided share per work-item on a GPU. Sets
** argument `chunk_arg` and launches. */
static db_status launch_pixels(db_stage_run *run, cl_kernel k, int chunk_arg, cl_ulong n)
{
    int gpu = !(db_stage_device(run)->info.type & CL_DEVICE_TYPE_CPU);
    size_t units = db_stage_device(run)->info.compute_units, local = 256;
    size_t items = gpu ? 256 * local : 64 * (units ? units : 1);
    cl_ulong chunk = gpu ? 0 : (n + items - 1) / items;
    cl_int err = clSetKernelArg(k, (cl_uint)chunk_arg, sizeof chunk, &chunk);
    if (err != CL_SUCCESS)
        return db_cl_check(err, "setting a tuning kernel's chunk", db_stage_device(run));
    return db_stage_launch(run, k, 1, &items, gpu ? &local : db_any_group);
}

static db_status clear_words(db_stage_run *run, cl_mem mem, cl_int n)
{
    cl_kernel k = db_stage_kernel(run, "howe_tune.cl", "tune_clear");
    if (!k)
        return db_error_status();
    const size_t global = (size_t)n;
    db_status st = db_stage_args(run, k, 2, sizeof mem, &mem, sizeof n, &n);
    return st == DB_OK ? db_stage_launch_any(run, k, 1, &global, NULL) : st;
}

static db_status set_word(db_stage_run *run, cl_mem mem, cl_int index, cl_uint value)
{
    cl_kernel k = db_stage_kernel(run, "howe_tune.cl", "tune_set");
    if (!k)
        return db_error_status();
    const size_t one = 1;
    db_status st = db_stage_args(run, k, 3, sizeof mem, &mem, sizeof index, &index, sizeof value, &value);
    return st == DB_OK ? db_stage_launch(run, k, 1, &one, NULL) : st;
}

db_status db_howe_copy(db_stage_run *run, cl_mem src, cl_ulong src_offset, cl_mem dst, cl_ulong dst_offset,
                       cl_ulong n)
{
    cl_kernel k = db_stage_kernel(run, "howe_tune.cl", "tune_copy");
    if (!k)
        return db_error_status();
    const size_t global = (size_t)n, local = 256;
    db_status st = db_stage_args(run, k, 5, sizeof src, &src, sizeof src_offset, &src_offset, sizeof dst, &dst,
                                 sizeof dst_offset, &dst_offset, sizeof n, &n);
    return st == DB_OK ? db_stage_launch_any(run, k, 1, &global, &local) : st;
}

/* ---- canny: every threshold's edge map ---- */

static db_status keep_edges(db_stage_run *run, int i, cl_mem edges, void *arg)
{
    (void)arg;
    cl_ulong n = pixels(db_stage_width(run), db_stage_height(run));
    return db_howe_copy(run, edges, 0, db_stage_out(run, 0), (cl_ulong)i * n, n);
}

static db_status canny_all(db_stage_run *run)
{
    const double *thi;
    int n = thresholds(db_stage_job(run), &thi);
    return db_canny_thresholds(run, thi, n, keep_edges, NULL);
}

/* ---- the chains ---- */

/* What the host code of a CPU chain needs besides its buffers. */
struct chain_arg {
    int rows, cols, slot;
};

/* The CPU chain: Boykov-Kolmogorov at every c, warm, each cut into bit i of
** the node words. Buffers: source, sink, right, down, words (out), the chain
** item (its header's cut count). A failed allocation leaves the count short. */
static void chain_host(void *const *ptrs, const void *argp)
{
    const struct chain_arg *a = argp;
    uint64_t *words = ptrs[4];
    cl_uint *slot = (cl_uint *)ptrs[5] + (size_t)a->slot * SLOT_WORDS;
    size_t n = (size_t)a->rows * (size_t)a->cols;
    uint8_t *ink = malloc(n);
    db_grid_cut *g = NULL;
    slot[H_CUTS] = 0;
    if (!ink || db_grid_cut_new(a->rows, a->cols, ptrs[0], ptrs[1], ptrs[2], ptrs[3], &g) != DB_OK) {
        free(ink);
        return;
    }
    for (int i = 0; i < DB_HOWE_LINKS; i++) {
        if (i > 0)
            db_grid_cut_raise_links(g, db_howe_link(i) - db_howe_link(i - 1));
        db_grid_cut_solve(g);
        db_grid_cut_labels(g, ink);
        for (size_t v = 0; v < n; v++)
            words[v] = (i ? words[v] : 0) | (uint64_t)ink[v] << i;
    }
    slot[H_CUTS] = DB_HOWE_LINKS;
    db_grid_cut_free(g);
    free(ink);
}

/* The c a chain keeps, from its header's counts: the chain rule, or in the
** grid search the best F-measure. */
static int pick_c(const cl_uint *slot, db_howe_search search, int64_t px)
{
    if (search == DB_HOWE_GRID) {
        int64_t hits[DB_HOWE_LINKS], inks[DB_HOWE_LINKS];
        for (int i = 0; i < DB_HOWE_LINKS; i++) {
            hits[i] = slot[H_HIT + i];
            inks[i] = slot[H_INK + i];
        }
        return db_howe_best_f(hits, inks, slot[H_TRUTH], DB_HOWE_LINKS);
    }
    int64_t diff[DB_HOWE_LINKS - 1];
    for (int i = 0; i < DB_HOWE_LINKS - 1; i++)
        diff[i] = slot[H_DIFF + i];
    return db_howe_alg1(diff, px);
}

struct pick_arg {
    int slot, search;
    int64_t pixels;
};

/* The CPU chain's choice, in queue order after its counts. Buffer: the chain item. */
static void pick_host(void *const *ptrs, const void *argp)
{
    const struct pick_arg *a = argp;
    cl_uint *slot = (cl_uint *)ptrs[0] + (size_t)a->slot * SLOT_WORDS;
    slot[H_PICK] = (cl_uint)pick_c(slot, (db_howe_search)a->search, a->pixels);
}

/* The raises of link capacity of warm chains of `solves` cuts each, for
** `bands` graphs stacked in bands of rows, band b cutting at c indices
** (b % parts) * solves .. + solves - 1: entry (s - 1) * bands + b is band b's
** raise before solve s (db_pr_cut_raise_links). A constant buffer of the run. */
static cl_mem link_steps(db_stage_run *run, int bands, int parts, int solves)
{
    size_t n = (size_t)(solves > 1 ? solves - 1 : 1) * (size_t)bands;
    cl_int *steps = calloc(n, sizeof *steps);
    if (!steps) {
        db_fail(DB_ERR_NOMEM, "out of memory for the steps of a chain");
        return NULL;
    }
    for (int s = 1; s < solves; s++)
        for (int b = 0; b < bands; b++) {
            int i = (b % parts) * solves + s;
            steps[(size_t)(s - 1) * bands + b] = db_howe_link(i) - db_howe_link(i - 1);
        }
    cl_mem m = db_stage_constant(run, steps, n * sizeof *steps);
    free(steps);
    return m;
}

/* The GPU chain on a grid of rows x cols, `bands` graphs stacked (each band's
** first c and raises in `steps`, link_steps): push-relabel at `solves` values
** of c, warm, each cut into bit s of `words`. */
static db_status chain_gpu_grid(db_stage_run *run, db_pr_cut *pr, int *begun, int rows, int cols, int bands,
                                int solves, cl_mem steps, const db_howe_graph *g, cl_mem words)
{
    db_status st = *begun ? db_pr_cut_restart(pr, g->source, g->sink)
                          : db_pr_cut_begin(pr, run, rows, cols, g->source, g->sink, g->right, g->down,
                                            (db_relabel)db_stage_job(run)->params[DB_HOWE_RELABEL]);
    *begun = st == DB_OK;
    for (int s = 0; s < solves && st == DB_OK; s++) {
        if (s > 0)
            st = db_pr_cut_raise_links(pr, steps, (s - 1) * bands, rows / bands);
        if (st == DB_OK)
            st = db_pr_cut_solve(pr);
        if (st == DB_OK)
            st = db_pr_cut_sink_bits(pr, words, s);
    }
    return st;
}

/* Counts of slot `s` of chain item `item`, and on the gpu role its choice (a
** read of the counts, the rule on the host); the cpu role's choice is host
** code in queue order, so that nothing waits. Then the kept image into the
** item. */
static db_status count_and_keep(db_stage_run *run, cl_mem words, cl_mem truth, int s, db_howe_search search,
                                cl_mem item)
{
    int gpu = db_stage_device(run)->role == DB_ROLE_GPU;
    cl_int width = db_stage_width(run), height = db_stage_height(run), slot = s;
    size_t px = pixels(width, height);
    cl_kernel counts = db_stage_kernel(run, "howe_tune.cl", "tune_counts");
    cl_kernel extract = db_stage_kernel(run, "howe_tune.cl", "tune_extract");
    if (!counts || !extract)
        return db_error_status();
    cl_ulong chunk = 0;
    db_status st = db_stage_args(run, counts, 7, sizeof words, &words, sizeof truth, truth ? &truth : NULL,
                                 sizeof width, &width, sizeof height, &height, sizeof chunk, &chunk, sizeof item,
                                 &item, sizeof slot, &slot);
    if (st == DB_OK)
        st = launch_pixels(run, counts, 4, (cl_ulong)px);
    if (st != DB_OK)
        return st;
    if (gpu) {
        cl_uint header[SLOT_WORDS];
        if ((st = db_stage_read(run, item, (size_t)s * sizeof header, sizeof header, header)) != DB_OK ||
            (st = set_word(run, item, s * SLOT_WORDS + H_PICK, (cl_uint)pick_c(header, search, (int64_t)px))) !=
                DB_OK)
            return st;
    } else {
        struct pick_arg a = {.slot = s, .search = search, .pixels = (int64_t)px};
        if ((st = db_stage_host(run, "chain_rule", pick_host, &a, sizeof a, &item, 1)) != DB_OK)
            return st;
    }
    cl_ulong offset = HEADER_BYTES + (cl_ulong)s * px;
    const size_t grid[2] = {(size_t)width, (size_t)height};
    st = db_stage_args(run, extract, 6, sizeof words, &words, sizeof item, &item, sizeof slot, &slot, sizeof width,
                       &width, sizeof height, &height, sizeof offset, &offset);
    return st == DB_OK ? db_stage_launch(run, extract, 2, grid, db_howe_local(run)) : st;
}

/* What every stage of chains begins with: the page's size checked, the
** headers of the run's first `count` outputs cleared, and for the grid search
** its ground truth on the device (*truth, else NULL). */
static db_status chains_begin(db_stage_run *run, int count, cl_mem *truth)
{
    db_howe_probe *probe = db_howe_probe_current();
    *truth = NULL;
    db_status st = db_howe_check_size(run);
    if (st == DB_OK && db_stage_job(run)->params[P_SEARCH] == DB_HOWE_GRID) {
        if (!(probe && probe->truth))
            return db_fail(DB_ERR_USAGE, "the grid search scores its cuts against a ground truth and runs only "
                           "through db_howe_grid (docbin-bench --train-howe)");
        if (!(*truth = db_stage_constant(run, probe->truth, pixels(db_stage_width(run), db_stage_height(run)))))
            return db_error_status();
    }
    for (int k = 0; k < count && st == DB_OK; k++)
        st = clear_words(run, db_stage_out(run, k), (cl_int)(HEADER_BYTES / sizeof(cl_uint)));
    return st;
}

/* The chains of stages first .. first + count - 1, one after another on the
** run's device, stage k's into the run's output k - first; they share their
** buffers and, on the gpu role, one cut. */
static db_status chains(db_stage_run *run, int first, int count)
{
    const db_job *job = db_stage_job(run);
    db_howe_search search = (db_howe_search)job->params[P_SEARCH];
    db_howe_probe *probe = db_howe_probe_current();
    int gpu = db_stage_device(run)->role == DB_ROLE_GPU;
    int w = db_stage_width(run), h = db_stage_height(run);
    const double *thi;
    cl_mem truth;
    db_status st = chains_begin(run, count, &truth);
    if (st != DB_OK || thresholds(job, &thi) <= first)
        return st;
    size_t px = pixels(w, h), nodes = (size_t)(w - 1) * (size_t)(h - 1);
    db_howe_graph g;
    cl_mem words = db_stage_scratch(run, nodes * sizeof(cl_ulong));
    if (!words)
        return db_error_status();
    if ((st = db_howe_graph_alloc(run, &g)) != DB_OK)
        return st;
    cl_mem steps = gpu ? link_steps(run, 1, 1, DB_HOWE_LINKS) : NULL;
    if (gpu && !steps)
        return db_error_status();
    db_pr_cut pr;
    int begun = 0;
    for (int stage = first; stage < first + count && st == DB_OK; stage++) {
        cl_mem item = db_stage_out(run, stage - first);
        for (int s = 0; s < stage_slots(job, stage) && st == DB_OK; s++) {
            int j = stage + CHAIN_STAGES * s;
            if ((st = db_howe_graph_build(run, &g, db_stage_in(run, 0), db_stage_in(run, 1), db_stage_in(run, 2),
                                          (cl_ulong)j * px, db_howe_link(0))) != DB_OK)
                break;
            if (gpu) {
                st = chain_gpu_grid(run, &pr, &begun, h - 1, w - 1, 1, DB_HOWE_LINKS, steps, &g, words);
                if (st == DB_OK)
                    st = set_word(run, item, s * SLOT_WORDS + H_CUTS, DB_HOWE_LINKS);
            } else {
                struct chain_arg a = {h - 1, w - 1, s};
                cl_mem mems[6] = {g.source, g.sink, g.right, g.down, words, item};
                st = db_stage_host(run, "chain_boykov_kolmogorov", chain_host, &a, sizeof a, mems, 6);
            }
            if (st == DB_OK && probe && probe->history[j])
                st = db_stage_read(run, words, 0, nodes * sizeof(cl_ulong), probe->history[j]);
            if (st == DB_OK)
                st = count_and_keep(run, words, truth, s, search, item);
        }
    }
    return st;
}

static db_status chain_a(db_stage_run *run) { return chains(run, 0, 1); }
static db_status chain_b(db_stage_run *run) { return chains(run, 1, 1); }
static db_status chain_c(db_stage_run *run) { return chains(run, 2, 1); }

/* Sets *parts to the graphs a chain stacks (chains_stacked): its 33 cuts as
** that many warm chains of 33 / parts cuts, 11 or 3 where the stack stays
** within SPLIT_NODES, else 1 where it fits in STACKED_NODES, else 0.
** DOCBIN_HOWE_PARTS (1, 3 or 11) caps the count, so that the tests can take
** each path on small pages. */
static db_status stack_parts(int chains, size_t nodes, int *parts)
{
    static const int counts[] = {11, 3, 1};
    const char *env = getenv("DOCBIN_HOWE_PARTS");
    int cap = DB_HOWE_LINKS;
    *parts = 0;
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end || (v != 1 && v != 3 && v != 11))
            return db_fail(DB_ERR_USAGE, "DOCBIN_HOWE_PARTS='%s' is not a count of parts: set it to 1, 3 or 11, or "
                           "unset it to choose by the page's size", env);
        cap = (int)v;
    }
    for (int i = 0; i < DB_LEN(counts) && !*parts; i++)
        if (counts[i] <= cap && (size_t)chains * (size_t)counts[i] * nodes <=
                                    (counts[i] > 1 ? SPLIT_NODES : STACKED_NODES))
            *parts = counts[i];
    return DB_OK;
}

/* Chain j's words from its parts' bits (tune_gather): part g's bit s is cut
** g * solves + s of the chain. */
static db_status gather(db_stage_run *run, cl_mem words, int j, int parts, int solves, size_t nodes, cl_mem own)
{
    cl_kernel k = db_stage_kernel(run, "howe_tune.cl", "tune_gather");
    if (!k)
        return db_error_status();
    cl_ulong n = nodes;
    cl_int count = solves;
    const size_t global = nodes, local = 256;
    db_status st = DB_OK;
    for (int g = 0; g < parts && st == DB_OK; g++) {
        cl_ulong offset = (cl_ulong)(j * parts + g) * nodes;
        cl_int shift = g * solves, first = g == 0;
        st = db_stage_args(run, k, 7, sizeof words, &words, sizeof offset, &offset, sizeof count, &count,
                           sizeof shift, &shift, sizeof first, &first, sizeof own, &own, sizeof n, &n);
        if (st == DB_OK)
            st = db_stage_launch_any(run, k, 1, &global, &local);
    }
    return st;
}

/* Every chain of the search on one GPU at once: their graphs stacked in one
** grid, each below the one before with no link between them, and cut warm as
** one graph. A chain is a few thousand launches of little work each on a page
** of DIBCO's size, so the solves' launches serve every graph at once; where
** they fit, each chain's 33 cuts are also split into `parts` shorter warm
** chains stacked side by side (part g starts cold at c index g * 33 / parts),
** so that fewer, larger solves make the same cuts. Each graph's labels are
** those of its own cuts: no flow crosses between the parts, and labels are
** canonical. Chain j's counts and kept image go where its stage would put
** them: item j % CHAIN_STAGES, slot j / CHAIN_STAGES. */
static db_status chains_stacked(db_stage_run *run)
{
    const db_job *job = db_stage_job(run);
    db_howe_search search = (db_howe_search)job->params[P_SEARCH];
    db_howe_probe *probe = db_howe_probe_current();
    const double *thi;
    int n = thresholds(job, &thi);
    int w = db_stage_width(run), h = db_stage_height(run), rows = h - 1, cols = w - 1;
    size_t nodes = (size_t)rows * (size_t)cols, links = nodes * sizeof(cl_int);
    int parts;
    db_status st = stack_parts(n, nodes, &parts);
    if (st != DB_OK)
        return st;
    if (!parts) /* too large to stack: one chain after another */
        return chains(run, 0, CHAIN_STAGES);
    int bands = n * parts, solves = DB_HOWE_LINKS / parts;
    cl_mem truth;
    if ((st = chains_begin(run, CHAIN_STAGES, &truth)) != DB_OK)
        return st;
    size_t px = pixels(w, h);
    db_howe_graph g, all = {
        .source = db_stage_scratch(run, (size_t)bands * links), .sink = db_stage_scratch(run, (size_t)bands * links),
        .right = db_stage_scratch(run, (size_t)bands * links), .down = db_stage_scratch(run, (size_t)bands * links),
    };
    cl_mem words = db_stage_scratch(run, (size_t)bands * nodes * sizeof(cl_ulong));
    cl_mem own = db_stage_scratch(run, nodes * sizeof(cl_ulong));
    cl_mem steps = link_steps(run, bands, parts, solves);
    if (!all.source || !all.sink || !all.right || !all.down || !words || !own || !steps)
        return db_error_status();
    if ((st = db_howe_graph_alloc(run, &g)) != DB_OK ||
        (st = clear_words(run, all.down, (cl_int)((size_t)bands * nodes))) != DB_OK)
        return st;
    /* Band b is threshold b / parts's graph at its part's first c; its last row keeps no link down. */
    for (int b = 0; b < bands && st == DB_OK; b++) {
        cl_ulong at = (cl_ulong)b * links;
        st = db_howe_graph_build(run, &g, db_stage_in(run, 0), db_stage_in(run, 1), db_stage_in(run, 2),
                                 (cl_ulong)(b / parts) * px, db_howe_link(b % parts * solves));
        if (st == DB_OK)
            st = db_howe_copy(run, g.source, 0, all.source, at, links);
        if (st == DB_OK)
            st = db_howe_copy(run, g.sink, 0, all.sink, at, links);
        if (st == DB_OK)
            st = db_howe_copy(run, g.right, 0, all.right, at, links);
        if (st == DB_OK)
            st = db_howe_copy(run, g.down, 0, all.down, at, links - (cl_ulong)cols * sizeof(cl_int));
    }
    db_pr_cut pr;
    int begun = 0;
    if (st == DB_OK)
        st = chain_gpu_grid(run, &pr, &begun, bands * rows, cols, bands, solves, steps, &all, words);
    for (int j = 0; j < n && st == DB_OK; j++) {
        cl_mem item = db_stage_out(run, j % CHAIN_STAGES);
        int slot = j / CHAIN_STAGES;
        st = gather(run, words, j, parts, solves, nodes, own);
        if (st == DB_OK)
            st = set_word(run, item, slot * SLOT_WORDS + H_CUTS, DB_HOWE_LINKS);
        if (st == DB_OK && probe && probe->history[j])
            st = db_stage_read(run, own, 0, nodes * sizeof(cl_ulong), probe->history[j]);
        if (st == DB_OK)
            st = count_and_keep(run, own, truth, slot, search, item);
    }
    return st;
}

/* ---- select: the threshold rule ---- */

/* Adds to `count` the pixels where the kept images of chains a and b differ. */
static db_status differ(db_stage_run *run, int a, int b, cl_mem count)
{
    cl_kernel k = db_stage_kernel(run, "howe_tune.cl", "tune_diff");
    if (!k)
        return db_error_status();
    cl_ulong n = pixels(db_stage_width(run), db_stage_height(run)), chunk = 0;
    cl_mem ma = db_stage_in(run, a % CHAIN_STAGES), mb = db_stage_in(run, b % CHAIN_STAGES);
    cl_ulong oa = HEADER_BYTES + (cl_ulong)(a / CHAIN_STAGES) * n, ob = HEADER_BYTES + (cl_ulong)(b / CHAIN_STAGES) * n;
    db_status st = db_stage_args(run, k, 7, sizeof ma, &ma, sizeof oa, &oa, sizeof mb, &mb, sizeof ob, &ob,
                                 sizeof n, &n, sizeof chunk, &chunk, sizeof count, &count);
    return st == DB_OK ? launch_pixels(run, k, 5, n) : st;
}

static db_status select_stage(db_stage_run *run)
{
    const db_job *job = db_stage_job(run);
    db_howe_search search = (db_howe_search)job->params[P_SEARCH];
    const double *thi;
    int n = thresholds(job, &thi);
    int w = db_stage_width(run), h = db_stage_height(run);
    size_t px = pixels(w, h);
    /* Every chain's header: what it kept and how many cuts it made. */
    cl_uint header[DB_HOWE_MAX_CHAINS][SLOT_WORDS];
    db_status st = DB_OK;
    for (int j = 0; j < n && st == DB_OK; j++)
        st = db_stage_read(run, db_stage_in(run, j % CHAIN_STAGES), (size_t)(j / CHAIN_STAGES) * sizeof header[0],
                           sizeof header[0], header[j]);
    if (st != DB_OK)
        return st;
    int keep = 0;
    if (search == DB_HOWE_ALG3 || search == DB_HOWE_ALG2) {
        /* One counter per pair of successive thresholds (ALG3: low-middle, high-middle). */
        int pairs = search == DB_HOWE_ALG3 ? 2 : n - 1;
        cl_mem counts[DB_HOWE_MAX_CHAINS - 1];
        for (int p = 0; p < pairs && st == DB_OK; p++) {
            counts[p] = db_stage_scratch(run, sizeof(cl_uint));
            if (!counts[p])
                return db_error_status();
            if ((st = clear_words(run, counts[p], 1)) == DB_OK)
                st = search == DB_HOWE_ALG3 ? differ(run, 2 * p, 1, counts[p]) : differ(run, p, p + 1, counts[p]);
        }
        int64_t diff[DB_HOWE_MAX_CHAINS - 1];
        for (int p = 0; p < pairs && st == DB_OK; p++) {
            cl_uint c;
            st = db_stage_read(run, counts[p], 0, sizeof c, &c);
            diff[p] = c;
        }
        if (st != DB_OK)
            return st;
        keep = search == DB_HOWE_ALG3 ? db_howe_alg3(diff[0], diff[1]) : db_howe_alg2(diff, (int64_t)px);
    } else if (search == DB_HOWE_GRID) {
        int64_t hits[DB_HOWE_MAX_CHAINS], inks[DB_HOWE_MAX_CHAINS];
        for (int j = 0; j < n; j++) {
            hits[j] = header[j][H_HIT + header[j][H_PICK]];
            inks[j] = header[j][H_INK + header[j][H_PICK]];
        }
        keep = db_howe_best_f(hits, inks, header[0][H_TRUTH], n);
        db_howe_probe *probe = db_howe_probe_current();
        for (int j = 0; probe && j < n; j++)
            for (int i = 0; i < DB_HOWE_LINKS; i++)
                probe->grid_f[j][i] = db_howe_f(header[j][H_HIT + i], header[j][H_INK + i], header[j][H_TRUTH]);
    }
    int64_t cuts = 0, ok = 1;
    for (int j = 0; j < n; j++) {
        cuts += header[j][H_CUTS];
        ok &= header[j][H_CUTS] == DB_HOWE_LINKS;
    }
    int c_index = (int)header[keep][H_PICK];
    if ((st = db_howe_copy(run, db_stage_in(run, keep % CHAIN_STAGES), HEADER_BYTES + (cl_ulong)(keep / CHAIN_STAGES) * px,
                         db_stage_out(run, 0), 0, px)) != DB_OK)
        return st;
    cl_kernel k = db_stage_kernel(run, "howe_tune.cl", "tune_report");
    if (!k)
        return db_error_status();
    cl_mem report = db_stage_out(run, 1);
    cl_long values[DB_HOWE_TUNE_VALUES] = {
        [DB_HOWE_TUNE_OK] = ok,
        [DB_HOWE_TUNE_THI] = lround(1000.0 * thi[keep]),
        [DB_HOWE_TUNE_C_INDEX] = c_index + 1,
        [DB_HOWE_TUNE_C] = lround(100.0 * db_howe_c(c_index)),
        [DB_HOWE_TUNE_CUTS] = cuts,
    };
    const size_t one = 1;
    st = db_stage_args(run, k, 6, sizeof report, &report, sizeof values[0], &values[0], sizeof values[1], &values[1],
                       sizeof values[2], &values[2], sizeof values[3], &values[3], sizeof values[4], &values[4]);
    return st == DB_OK ? db_stage_launch(run, k, 1, &one, NULL) : st;
}

/* ---- the algorithms ---- */

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "the decoded input, gray or RGB", NULL},
    [GRAY] = {"gray", DB_ITEM_PIXELS, 1, "gray as MATLAB's rgb2gray", NULL},
    [LAP2] = {"lap2", DB_ITEM_COMPUTED, 0, "2 x Laplacian per node, -1000 on bright background", db_howe_lap2_size},
    [EDGES] = {"edges", DB_ITEM_COMPUTED, 0, "Canny edges of every threshold tried, 1 = edge", edges_size},
    [CHAIN_A] = {"chain-a", DB_ITEM_COMPUTED, 0, "counts and kept images of thresholds 1, 4, 7, 10", chain_a_size},
    [CHAIN_B] = {"chain-b", DB_ITEM_COMPUTED, 0, "counts and kept images of thresholds 2, 5, 8, 11", chain_b_size},
    [CHAIN_C] = {"chain-c", DB_ITEM_COMPUTED, 0, "counts and kept images of thresholds 3, 6, 9", chain_c_size},
    [BINARY] = {"binary", DB_ITEM_PIXELS, 1, "0 = ink, 255 = background", NULL},
    [REPORT] = {"report", DB_ITEM_FIXED, DB_HOWE_TUNE_VALUES * sizeof(cl_long), "the chosen thi and c, cuts made",
                NULL},
};

#define CHAIN_DOC "cuts at the 33 values of c, warm, for its thresholds; keeps one c each (cpu: Boykov-Kolmogorov, gpu: push-relabel)"

static const db_stage stages[] = {
    {.name = "laplacian", .doc = "2 x Laplacian of the forward differences, -1000 at bright-background outliers",
     .in = DB_PORTS(IMAGE), .out = DB_PORTS(GRAY, LAP2), .impl = {db_howe_laplacian, db_howe_laplacian},
     .sources = {"laplacian.cl"}},
    {.name = "canny", .doc = "MATLAB's canny_old at every high threshold the search tries, one gradient",
     .in = DB_PORTS(IMAGE), .out = DB_PORTS(EDGES), .impl = {canny_all, canny_all},
     .sources = {"canny.cl", "howe_tune.cl"}},
    {.name = "chain-a", .doc = CHAIN_DOC, .in = DB_PORTS(GRAY, LAP2, EDGES), .out = DB_PORTS(CHAIN_A),
     .impl = {chain_a, chain_a}, .sources = {"howe_graph.cl", "pushrelabel.cl", "howe_tune.cl"}},
    {.name = "chain-b", .doc = CHAIN_DOC, .in = DB_PORTS(GRAY, LAP2, EDGES), .out = DB_PORTS(CHAIN_B),
     .impl = {chain_b, chain_b}, .sources = {"howe_graph.cl", "pushrelabel.cl", "howe_tune.cl"}},
    {.name = "chain-c", .doc = CHAIN_DOC, .in = DB_PORTS(GRAY, LAP2, EDGES), .out = DB_PORTS(CHAIN_C),
     .impl = {chain_c, chain_c}, .sources = {"howe_graph.cl", "pushrelabel.cl", "howe_tune.cl"}},
    {.name = "select", .doc = "the threshold rule between the chains; the kept image and the report",
     .in = DB_PORTS(CHAIN_A, CHAIN_B, CHAIN_C), .out = DB_PORTS(BINARY, REPORT), .impl = {select_stage, select_stage},
     .sources = {"howe_tune.cl"}},
};

static const db_fusion chains_fusion = {
    .first = 2, /* chain-a */
    .count = CHAIN_STAGES,
    .stage = {.name = "chains", .doc = "every chain of the search stacked in one graph, cut at once",
              .in = DB_PORTS(GRAY, LAP2, EDGES), .out = DB_PORTS(CHAIN_A, CHAIN_B, CHAIN_C),
              .impl = {[DB_ROLE_GPU] = chains_stacked}, .sources = {"howe_graph.cl", "pushrelabel.cl", "howe_tune.cl"}},
};

static const char *const search_names[DB_HOWE_SEARCHES] = {
    [DB_HOWE_ALG3] = "alg3", [DB_HOWE_SEARCH_C] = "c", [DB_HOWE_ALG2] = "alg2", [DB_HOWE_GRID] = "grid"};

#define TUNE_PARAMS(...)                                                                                           \
    {                                                                                                              \
        [P_SEARCH] = {__VA_ARGS__},                                                                                \
        [DB_HOWE_THI] = {.name = "thi", .kind = DB_PARAM_REAL, .def = 0.3, .min = 0.0, .max = 1.0,                 \
                         .doc = "Canny high threshold of search=c (the others try their own)"},                   \
        [DB_HOWE_TLO] = {.name = "tlo", .kind = DB_PARAM_REAL, .def = 0.1, .min = 0.0, .max = 1.0,                 \
                         .doc = "Canny low threshold, a fraction of the largest gradient (below every thi)"},      \
        [DB_HOWE_SIGMA] = {.name = "sigma", .kind = DB_PARAM_REAL, .def = 0.6, .min = 0.1, .max = 10,              \
                           .doc = "Canny's Gaussian sigma"},                                                       \
        [DB_HOWE_RELABEL] = {.name = "relabel", .kind = DB_PARAM_INT, .def = DB_RELABEL_EXPONENTIAL, .min = 0,     \
                             .max = DB_RELABEL_COUNT - 1,                                                          \
                             .doc = "global relabel strategy of the gpu cuts (speed only; the image is the same)", \
                             .names = db_relabel_names, .n_names = DB_RELABEL_COUNT},                             \
    }

static const db_param params[DB_HOWE_N_PARAMS] =
    TUNE_PARAMS(.name = "search", .kind = DB_PARAM_INT, .def = DB_HOWE_ALG3, .min = 0, .max = DB_HOWE_GRID - 1,
                .doc = "alg3: 3 chains (99 cuts); c: one chain at thi (33); alg2: 11 chains (363)",
                .names = search_names, .n_names = DB_HOWE_GRID);

static const db_param grid_params[DB_HOWE_N_PARAMS] =
    TUNE_PARAMS(.name = "search", .kind = DB_PARAM_INT, .def = DB_HOWE_GRID, .min = DB_HOWE_GRID,
                .max = DB_HOWE_GRID, .doc = "grid: 11 chains scored against a ground truth", .names = search_names,
                .n_names = DB_HOWE_SEARCHES);

/* In the order of the values, so that a db_report's i-th value is value i (db_howe_grid reads them so). */
static const db_report_field report[] = {
    {.name = "cut_ok", .index = DB_HOWE_TUNE_OK, .if_zero = "out of memory in the graph cut", .fatal = 1},
    {.name = "thi_x1000", .index = DB_HOWE_TUNE_THI},
    {.name = "c_index", .index = DB_HOWE_TUNE_C_INDEX},
    {.name = "c_x100", .index = DB_HOWE_TUNE_C},
    {.name = "cuts", .index = DB_HOWE_TUNE_CUTS},
};

const db_algo db_algo_howe_auto = {
    .name = "howe-auto",
    .doc = "Howe's binarization with thi and c tuned per page (Howe's Alg3: 99 warm cuts, chains on any device)",
    .items = items,
    .n_items = DB_LEN(items),
    .input = IMAGE,
    .output = BINARY,
    .stages = stages,
    .n_stages = DB_LEN(stages),
    .fusion = &chains_fusion,
    .params = params,
    .n_params = DB_LEN(params),
    .report_fields = report,
    .n_report_fields = DB_LEN(report),
    .report_item = REPORT,
    .report_wide = 1,
};

const db_algo db_algo_howe_grid = {
    .name = "howe-grid",
    .doc = "every thi of Alg2 with every c, the best F-measure against a ground truth (training)",
    .items = items,
    .n_items = DB_LEN(items),
    .input = IMAGE,
    .output = BINARY,
    .stages = stages,
    .n_stages = DB_LEN(stages),
    .fusion = &chains_fusion,
    .params = grid_params,
    .n_params = DB_LEN(grid_params),
    .report_fields = report,
    .n_report_fields = DB_LEN(report),
    .report_item = REPORT,
    .report_wide = 1,
};

db_status db_howe_grid(db_context *ctx, const db_map *map, const db_image *page, const uint8_t *truth, int *thi_index,
                       int *c_index, double *f, double (*table)[DB_HOWE_LINKS])
{
    const db_algo *algo = &db_algo_howe_grid;
    db_job job;
    db_job_defaults(algo, &job);
    db_howe_probe probe = {.truth = truth};
    db_howe_probe *outer = db_howe_probe_current();
    db_image *out = NULL;
    db_report rep = {0};
    db_howe_probe_attach(&probe);
    db_status st = db_run(ctx, algo, map, &job, page, &out, &rep, NULL);
    db_howe_probe_attach(outer);
    if (st != DB_OK)
        return st;
    if (table)
        memcpy(table, probe.grid_f, sizeof probe.grid_f);
    int64_t hits = 0, inks = 0, gt = 0;
    for (int r = 0; r < page->height; r++)
        for (int k = 0; k < page->width; k++) {
            int ink = out->data[(size_t)r * out->stride + k] == 0, t = truth[(size_t)r * page->width + k] != 0;
            inks += ink;
            gt += t;
            hits += ink && t;
        }
    db_image_free(out);
    int64_t thi = rep.values[DB_HOWE_TUNE_THI];
    *thi_index = 0;
    for (int j = 0; j < DB_HOWE_MAX_CHAINS; j++)
        if (lround(1000.0 * db_howe_grid_thi[j]) == thi)
            *thi_index = j;
    *c_index = (int)rep.values[DB_HOWE_TUNE_C_INDEX] - 1;
    *f = db_howe_f(hits, inks, gt);
    return DB_OK;
}
