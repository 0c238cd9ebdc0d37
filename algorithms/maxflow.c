/*
** maxflow.c — Boykov-Kolmogorov maximum flow specialised to the 4-connected
** grid (docs/howe.md §§3, 5, 6 and "Warm chains").
**
** The algorithm is BK v3's (two search trees grown from the terminals,
** augmentation along the path where they meet, adoption of orphans preferring
** the parent closest to the terminal, with time stamps marking distances
** checked in the current round), but the graph is implicit: a node's
** neighbours are found by index arithmetic, so there are no arc records and no
** pointers. Every node is one 32-byte record holding its four arc residuals,
** its net terminal residual and its tree state, so that visiting a neighbour
** touches one cache line (two nodes share a line).
**
** Two departures from BK v3, both measured on Howe graphs of synthetic pages
** (bench/maxflow_bench.cpp): the first solve starts by pushing flow through
** every source-node/sink-node pair of neighbours in one raster pass
** (push_pairs), and growth does not re-parent tree nodes to shallower
** neighbours (v3's growth-time distance heuristic): on these graphs reading
** every neighbour's stamp cost more time than the shorter paths saved.
**
** Residuals are stored minus the sum of all raises so far (`raise`), so that
** raising every link is one addition; an arc that is not a link (capacity 0,
** or across the grid's edge) stores NO_ARC, which stays negative after any
** raise. Every "is there residual" test is therefore rc + raise > 0, and a
** move to a neighbour is always guarded by one. That also lets the rows sit
** back to back: the east arc of the last column, which would lead to the
** next row's first node, is never open. One ghost row above and one below
** keep the vertical neighbours of the border rows inside the array.
**
** A tuning chain cuts one graph 33 times, so the work between solves must not
** grow with the page: the saturated arcs that a raise re-opens come from a
** list kept by augmentation, and labels start from a list of the nodes that
** still have residual to the sink.
**
** Capacities, including every raise, must stay below 2^29 (CAP_LIMIT): an
** n-link's two residuals add up to twice its capacity in int32.
*/
#include "algorithms/maxflow.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Arc directions; d ^ 1 is the opposite direction. */
enum { DIR_N = 0, DIR_S = 1, DIR_W = 2, DIR_E = 3 };

/* Parent values other than a direction. */
enum { PARENT_TERMINAL = 4, PARENT_ORPHAN = 5, PARENT_NONE = 6 };

enum { TREE_FREE = 0, TREE_SOURCE = 1, TREE_SINK = 2 };

/* FLAG_ACTIVE: queued as active, or the node being grown from (BK's
** "current node"), so that it is not queued twice. FLAG_SATURATED: the node
** is in the list of tails of saturated arcs, so that it is listed once. */
enum { FLAG_ACTIVE = 1, FLAG_SATURATED = 2 };

/* Largest accepted capacity, and the stored residual of a missing arc: below
** -(any raise), so rc + raise stays <= 0 and cannot overflow. */
#define CAP_LIMIT (1 << 29)
#define NO_ARC (-(1 << 30))

/* The active queue is read in order, so the records of the node a few places
** ahead and of its vertical neighbours can be fetched before they are needed:
** on pages larger than the cache the solver mostly waits for memory. */
#define PREFETCH_AHEAD 8

typedef struct node {
    int32_t rc[4];  /* residual to the N, S, W, E neighbour, minus the raise (NO_ARC: none) */
    int32_t tr;     /* residual source->node if > 0, node->sink is -tr if < 0 (BK's tr_cap) */
    int32_t ts;     /* time at which dist was last known to be right */
    int32_t dist;   /* tree distance to the terminal, an estimate between time stamps */
    uint8_t parent; /* direction of the parent, or PARENT_* */
    uint8_t tree;   /* TREE_* */
    uint8_t flags;  /* FLAG_* */
    uint8_t pad;
} node;

struct db_grid_cut {
    int rows, cols;
    int32_t first;      /* stored index of node (0, 0), after the ghost row */
    int32_t count;      /* stored nodes, ghosts included */
    int32_t real;       /* rows * cols */
    int32_t off[4];     /* index offsets of the N, S, W, E neighbours */
    int32_t raise;      /* sum of all raises; residual = rc + raise */
    node *nodes;
    int32_t *active;    /* FIFO ring of active nodes, `real` slots */
    int32_t active_head, active_count;
    int32_t *orphans;   /* FIFO ring of orphans, `real` slots; empty between solves */
    int32_t orphan_head, orphan_count;
    int32_t *saturated; /* tails of arcs saturated since the last raise (may be stale) */
    int32_t saturated_count;
    int32_t *seeds;     /* a superset of the nodes with residual to the sink */
    int32_t seed_count;
    int32_t time;       /* BK's TIME: one tick per growth step */
    int64_t steps;      /* growth steps and origin-walk steps, over every solve (db_grid_cut_steps) */
    int64_t flow;
    int started;        /* the trees exist (the first solve has begun) */
};

db_status db_grid_cut_new(int rows, int cols, const int32_t *source, const int32_t *sink, const int32_t *right,
                          const int32_t *down, db_grid_cut **out)
{
    *out = NULL;
    if (rows < 1 || cols < 1)
        return db_fail(DB_ERR_USAGE, "grid cut: %d x %d grid; both sides must be at least 1", rows, cols);
    if (((int64_t)rows + 2) * (int64_t)cols > INT32_MAX / 2)
        return db_fail(DB_ERR_USAGE, "grid cut: %d x %d grid is too large (at most 2^30 nodes)", rows, cols);
    for (int r = 0, i = 0; r < rows; r++)
        for (int c = 0; c < cols; c++, i++) {
            int32_t hr = c + 1 < cols ? right[i] : 0, vd = r + 1 < rows ? down[i] : 0;
            if (source[i] < 0 || sink[i] < 0 || hr < 0 || vd < 0 || source[i] > CAP_LIMIT ||
                sink[i] > CAP_LIMIT || hr > CAP_LIMIT || vd > CAP_LIMIT)
                return db_fail(DB_ERR_USAGE,
                               "grid cut: node (%d, %d) has a capacity outside 0..%d (source %d, sink %d, "
                               "right %d, down %d)",
                               r, c, CAP_LIMIT, (int)source[i], (int)sink[i], (int)hr, (int)vd);
        }

    db_grid_cut *g = calloc(1, sizeof *g);
    if (!g)
        return db_fail(DB_ERR_NOMEM, "grid cut: out of memory for a %d x %d grid", rows, cols);
    size_t real = (size_t)rows * (size_t)cols;
    g->rows = rows;
    g->cols = cols;
    g->first = cols;
    g->count = (rows + 2) * cols;
    g->real = (int32_t)real;
    g->off[DIR_N] = -cols;
    g->off[DIR_S] = cols;
    g->off[DIR_W] = -1;
    g->off[DIR_E] = 1;
    g->nodes = malloc((size_t)g->count * sizeof *g->nodes);
    g->active = malloc(real * sizeof *g->active);
    g->orphans = malloc(real * sizeof *g->orphans);
    g->saturated = malloc(real * sizeof *g->saturated);
    g->seeds = malloc(real * sizeof *g->seeds);
    if (!g->nodes || !g->active || !g->orphans || !g->saturated || !g->seeds) {
        size_t mib = ((size_t)g->count * sizeof(node) + 4 * real * sizeof(int32_t)) >> 20;
        db_grid_cut_free(g);
        return db_fail(DB_ERR_NOMEM, "grid cut: out of memory for a %d x %d grid (%zu MiB)", rows, cols, mib);
    }
    const node ghost = {.rc = {NO_ARC, NO_ARC, NO_ARC, NO_ARC}, .parent = PARENT_NONE, .tree = TREE_FREE};
    for (int32_t k = 0; k < g->count; k++)
        g->nodes[k] = ghost;

    /* The part of every node's flow that goes straight source -> node -> sink
    ** is pushed here; only the difference stays as a terminal residual. */
    for (int r = 0, i = 0; r < rows; r++) {
        node *row = g->nodes + g->first + r * cols;
        for (int c = 0; c < cols; c++, i++) {
            node *x = &row[c];
            g->flow += source[i] < sink[i] ? source[i] : sink[i];
            x->tr = source[i] - sink[i];
            if (c + 1 < cols && right[i] > 0) {
                x->rc[DIR_E] = right[i];
                row[c + 1].rc[DIR_W] = right[i];
            }
            if (r + 1 < rows && down[i] > 0) {
                x->rc[DIR_S] = down[i];
                row[c + cols].rc[DIR_N] = down[i];
            }
        }
    }
    *out = g;
    return DB_OK;
}

void db_grid_cut_free(db_grid_cut *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->active);
    free(g->orphans);
    free(g->saturated);
    free(g->seeds);
    free(g);
}

static inline void set_active(db_grid_cut *g, int32_t u)
{
    node *x = &g->nodes[u];
    if (!(x->flags & FLAG_ACTIVE)) {
        x->flags |= FLAG_ACTIVE;
        int32_t slot = g->active_head + g->active_count;
        if (slot >= g->real)
            slot -= g->real;
        g->active[slot] = u;
        g->active_count++;
    }
}

static inline void set_orphan(db_grid_cut *g, int32_t u)
{
    g->nodes[u].parent = PARENT_ORPHAN;
    int32_t slot = g->orphan_head + g->orphan_count;
    if (slot >= g->real)
        slot -= g->real;
    g->orphans[slot] = u;
    g->orphan_count++;
}

/* Records that an arc out of u reached zero residual, for the next raise. */
static inline void note_saturated(db_grid_cut *g, int32_t u)
{
    node *x = &g->nodes[u];
    if (!(x->flags & FLAG_SATURATED)) {
        x->flags |= FLAG_SATURATED;
        g->saturated[g->saturated_count++] = u;
    }
}

/* Pushes the bottleneck along source tree -> s -> t -> sink tree, where the
** middle arc leaves s in direction `dir`. Nodes whose parent arc (or terminal
** arc) saturates become orphans. */
static void augment(db_grid_cut *g, int32_t s, int dir)
{
    node *nd = g->nodes;
    const int32_t *off = g->off;
    const int32_t raise = g->raise;
    int32_t t = s + off[dir];
    int32_t b = nd[s].rc[dir] + raise;

    int32_t x = s;
    for (;;) {
        int p = nd[x].parent;
        if (p == PARENT_TERMINAL)
            break;
        int32_t y = x + off[p];
        if (nd[y].rc[p ^ 1] + raise < b)
            b = nd[y].rc[p ^ 1] + raise;
        x = y;
    }
    if (nd[x].tr < b)
        b = nd[x].tr;
    x = t;
    for (;;) {
        int p = nd[x].parent;
        if (p == PARENT_TERMINAL)
            break;
        if (nd[x].rc[p] + raise < b)
            b = nd[x].rc[p] + raise;
        x += off[p];
    }
    if (-nd[x].tr < b)
        b = -nd[x].tr;

    if ((nd[s].rc[dir] -= b) + raise == 0)
        note_saturated(g, s);
    nd[t].rc[dir ^ 1] += b;
    x = s;
    for (;;) {
        int p = nd[x].parent;
        if (p == PARENT_TERMINAL)
            break;
        int32_t y = x + off[p];
        nd[x].rc[p] += b;
        if ((nd[y].rc[p ^ 1] -= b) + raise == 0) {
            note_saturated(g, y);
            set_orphan(g, x);
        }
        x = y;
    }
    if ((nd[x].tr -= b) == 0)
        set_orphan(g, x);
    x = t;
    for (;;) {
        int p = nd[x].parent;
        if (p == PARENT_TERMINAL)
            break;
        int32_t y = x + off[p];
        nd[y].rc[p ^ 1] += b;
        if ((nd[x].rc[p] -= b) + raise == 0) {
            note_saturated(g, x);
            set_orphan(g, x);
        }
        x = y;
    }
    if ((nd[x].tr += b) == 0)
        set_orphan(g, x);
    g->flow += b;
}

/* Distance from v to its tree's terminal, or INT32_MAX when v's path runs into
** an orphan. Nodes on a valid path get stamped with the current time, so later
** searches in this adoption round stop there (BK's origin check). */
static inline int32_t origin_distance(node *nd, const int32_t *off, int32_t v, int32_t time, int64_t *steps)
{
    int32_t d = 0;
    int32_t y = v;
    for (;;) {
        node *Y = &nd[y];
        ++*steps;
        if (Y->ts == time) {
            d += Y->dist;
            break;
        }
        int p = Y->parent;
        d++;
        if (p == PARENT_TERMINAL) {
            Y->ts = time;
            Y->dist = 1;
            break;
        }
        if (p == PARENT_ORPHAN)
            return INT32_MAX;
        y += off[p];
    }
    int32_t k = d;
    for (y = v; nd[y].ts != time; y += off[nd[y].parent]) {
        nd[y].ts = time;
        nd[y].dist = k--;
    }
    return d;
}

/* Finds orphan x a new parent in its tree, the candidate closest to the
** terminal; with none, x becomes free, its children orphans, and the tree
** neighbours that could grow into it active again. */
static void adopt(db_grid_cut *g, int32_t x)
{
    node *nd = g->nodes;
    const int32_t *off = g->off;
    const int32_t raise = g->raise;
    node *X = &nd[x];
    int tree = X->tree;
    int best = PARENT_NONE;
    int32_t dmin = INT32_MAX;
    for (int d = 0; d < 4; d++) {
        int32_t v = x + off[d];
        node *V = &nd[v];
        /* A source-tree parent must reach x, a sink-tree parent be reached from x. */
        int32_t r = (tree == TREE_SOURCE ? V->rc[d ^ 1] : X->rc[d]) + raise;
        if (V->tree != tree || r <= 0)
            continue;
        int32_t dd = origin_distance(nd, off, v, g->time, &g->steps);
        if (dd < dmin) {
            dmin = dd;
            best = d;
        }
    }
    if (best != PARENT_NONE) {
        X->parent = (uint8_t)best;
        X->ts = g->time;
        X->dist = dmin + 1;
        return;
    }
    X->tree = TREE_FREE;
    X->parent = PARENT_NONE;
    for (int d = 0; d < 4; d++) {
        int32_t v = x + off[d];
        node *V = &nd[v];
        if (V->tree != tree)
            continue;
        int32_t r = (tree == TREE_SOURCE ? V->rc[d ^ 1] : X->rc[d]) + raise;
        if (r > 0)
            set_active(g, v);
        /* Only an open arc ever becomes a parent arc, so this is x's child
        ** (never a wrapped neighbour across the grid's edge). */
        if (V->parent == (d ^ 1))
            set_orphan(g, v);
    }
}

/* Keeps time stamps inside int32. Only "ts == time" matters, and no stamp
** equals a fresh time after the reset, so it changes speed only. */
static void reset_time(db_grid_cut *g)
{
    for (int32_t k = 0; k < g->count; k++)
        g->nodes[k].ts = 0;
    g->time = 0;
}

/* BK's main loop: grow from active nodes, augment where the trees meet, adopt
** the orphans; ends when no node is active. */
static void run(db_grid_cut *g)
{
    node *nd = g->nodes;
    const int32_t *off = g->off;
    const int32_t raise = g->raise;
    int32_t cur = -1;
    for (;;) {
        int32_t u = -1;
        if (cur >= 0) {
            nd[cur].flags &= (uint8_t)~FLAG_ACTIVE;
            if (nd[cur].tree != TREE_FREE)
                u = cur;
            cur = -1;
        }
        while (u < 0) {
            if (g->active_count == 0)
                return;
            if (g->active_count > PREFETCH_AHEAD) {
                int32_t slot = g->active_head + PREFETCH_AHEAD;
                if (slot >= g->real)
                    slot -= g->real;
                int32_t w = g->active[slot];
                __builtin_prefetch(&nd[w]);
                __builtin_prefetch(&nd[w - g->cols]);
                __builtin_prefetch(&nd[w + g->cols]);
            }
            u = g->active[g->active_head];
            if (++g->active_head == g->real)
                g->active_head = 0;
            g->active_count--;
            nd[u].flags &= (uint8_t)~FLAG_ACTIVE;
            if (nd[u].tree == TREE_FREE)
                u = -1;
        }

        node *U = &nd[u];
        int32_t s = -1;
        int dir = 0;
        if (U->tree == TREE_SOURCE) {
            for (int d = 0; d < 4; d++) {
                if (U->rc[d] + raise <= 0)
                    continue;
                int32_t v = u + off[d];
                node *V = &nd[v];
                if (V->tree == TREE_FREE) {
                    V->tree = TREE_SOURCE;
                    V->parent = (uint8_t)(d ^ 1);
                    V->ts = U->ts;
                    V->dist = U->dist + 1;
                    set_active(g, v);
                } else if (V->tree == TREE_SINK) {
                    s = u;
                    dir = d;
                    break;
                }
            }
        } else {
            for (int d = 0; d < 4; d++) {
                int32_t v = u + off[d];
                node *V = &nd[v];
                if (V->rc[d ^ 1] + raise <= 0)
                    continue;
                if (V->tree == TREE_FREE) {
                    V->tree = TREE_SINK;
                    V->parent = (uint8_t)(d ^ 1);
                    V->ts = U->ts;
                    V->dist = U->dist + 1;
                    set_active(g, v);
                } else if (V->tree == TREE_SOURCE) {
                    s = v;
                    dir = d ^ 1;
                    break;
                }
            }
        }

        if (g->time == INT32_MAX - 1)
            reset_time(g);
        g->time++;
        g->steps++;

        if (s >= 0) {
            /* u stays current: grow from it again after the adoption. */
            U->flags |= FLAG_ACTIVE;
            cur = u;
            augment(g, s, dir);
            while (g->orphan_count > 0) {
                int32_t x = g->orphans[g->orphan_head];
                if (++g->orphan_head == g->real)
                    g->orphan_head = 0;
                g->orphan_count--;
                adopt(g, x);
            }
        }
    }
}

/* Before the trees exist, pushes flow along every two-node path
** source -> u -> v -> sink in one raster pass. Howe's t-links cancel locally
** (noise makes neighbouring lap2 values differ in sign), so this moves most
** of the flow with sequential memory access, and BK then starts with far
** fewer and shorter augmenting paths. Any feasible flow is a valid start. */
static void push_pairs(db_grid_cut *g)
{
    node *nd = g->nodes;
    const int32_t raise = g->raise;
    for (int32_t k = g->first; k < g->first + g->real; k++) {
        node *x = &nd[k];
        for (int d = 0; d < 4 && x->tr != 0; d++) {
            int32_t v = k + g->off[d];
            node *y = &nd[v];
            int32_t b, rxy = x->rc[d] + raise, ryx = y->rc[d ^ 1] + raise;
            if (x->tr > 0 && y->tr < 0 && rxy > 0) {
                b = x->tr < -y->tr ? x->tr : -y->tr;
                b = b < rxy ? b : rxy;
                x->tr -= b;
                y->tr += b;
                if ((x->rc[d] -= b) + raise == 0)
                    note_saturated(g, k);
                y->rc[d ^ 1] += b;
            } else if (x->tr < 0 && y->tr > 0 && ryx > 0) {
                b = y->tr < -x->tr ? y->tr : -x->tr;
                b = b < ryx ? b : ryx;
                y->tr -= b;
                x->tr += b;
                if ((y->rc[d ^ 1] -= b) + raise == 0)
                    note_saturated(g, v);
                x->rc[d] += b;
            } else {
                continue;
            }
            g->flow += b;
        }
    }
}

int64_t db_grid_cut_solve(db_grid_cut *g)
{
    if (!g->started) {
        g->started = 1;
        push_pairs(g);
        for (int32_t k = g->first; k < g->first + g->real; k++) {
            node *x = &g->nodes[k];
            if (x->tr == 0)
                continue;
            x->tree = x->tr > 0 ? TREE_SOURCE : TREE_SINK;
            x->parent = PARENT_TERMINAL;
            x->ts = 0;
            x->dist = 1;
            set_active(g, k);
            /* tr never changes sign, so these are all the seeds there will be. */
            if (x->tr < 0)
                g->seeds[g->seed_count++] = k;
        }
    }
    run(g);
    /* Drop the seeds whose sink t-link is now saturated, for good. */
    int32_t kept = 0;
    for (int32_t j = 0; j < g->seed_count; j++)
        if (g->nodes[g->seeds[j]].tr < 0)
            g->seeds[kept++] = g->seeds[j];
    g->seed_count = kept;
    return g->flow;
}

void db_grid_cut_raise_links(db_grid_cut *g, int32_t delta)
{
    if (delta <= 0)
        return;
    /* Only an arc that was saturated can open a new path when it gains
    ** capacity: both ends of each such link grow again (tree reuse). */
    node *nd = g->nodes;
    for (int32_t j = 0; j < g->saturated_count; j++) {
        int32_t u = g->saturated[j];
        node *x = &nd[u];
        x->flags &= (uint8_t)~FLAG_SATURATED;
        for (int d = 0; d < 4; d++) {
            if (x->rc[d] + g->raise != 0)
                continue;
            int32_t v = u + g->off[d];
            if (x->tree != TREE_FREE)
                set_active(g, u);
            if (nd[v].tree != TREE_FREE)
                set_active(g, v);
        }
    }
    g->saturated_count = 0;
    g->raise += delta;
}

int64_t db_grid_cut_steps(const db_grid_cut *g)
{
    return g->steps;
}

void db_grid_cut_labels(const db_grid_cut *g, uint8_t *sink_side)
{
    const node *nd = g->nodes;
    const int32_t *off = g->off;
    const int32_t raise = g->raise;
    /* Rows are stored back to back after one ghost row, so raster index =
    ** stored index - first. The orphan ring is empty outside solves, so it
    ** serves as the stack of this search; each node enters once. Depth
    ** first from each seed in raster order: the next node is usually next to
    ** the last one, in cache (any search order finds the same set). */
    const int32_t first = g->first;
    int32_t *stack = g->orphans;
    int32_t top = 0;
    memset(sink_side, 0, (size_t)g->real);
    int32_t seeds = g->started ? g->seed_count : g->real;
    for (int32_t j = 0; j < seeds; j++) {
        int32_t k = g->started ? g->seeds[j] : first + j;
        if (nd[k].tr >= 0 || sink_side[k - first])
            continue;
        sink_side[k - first] = 1;
        stack[top++] = k;
        while (top > 0) {
            int32_t v = stack[--top];
            for (int d = 0; d < 4; d++) {
                /* A missing arc (ghost row, wrap) never has residual, so u
                ** is a real node whenever it is marked. */
                int32_t u = v + off[d];
                if (nd[u].rc[d ^ 1] + raise <= 0 || sink_side[u - first])
                    continue;
                sink_side[u - first] = 1;
                stack[top++] = u;
            }
        }
    }
}
