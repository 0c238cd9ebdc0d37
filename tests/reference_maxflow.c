/*
** reference_maxflow.c — Dinic's maximum flow on an explicit graph, for the
** tests (see reference_maxflow.h). Written for plainness, not speed, and
** sharing nothing with algorithms/maxflow.c: arcs are explicit records with
** 64-bit residuals, the terminals are ordinary nodes, and the cut is read
** off the final residual graph by a search backwards from the sink.
*/
#include "tests/reference_maxflow.h"

#include <stdlib.h>

/* Arcs come in pairs: arc e and its reverse e ^ 1. */
typedef struct flow_graph {
    int nodes;
    int arcs;
    int *first;      /* first arc out of each node, -1 for none */
    int *next;       /* next arc out of the same node */
    int *to;         /* head of each arc */
    int64_t *resid;  /* residual capacity of each arc */
} flow_graph;

/* Adds u->v with capacity cap_uv and v->u with capacity cap_vu as one pair. */
static void add_pair(flow_graph *f, int u, int v, int64_t cap_uv, int64_t cap_vu)
{
    int e = f->arcs;
    f->to[e] = v;
    f->resid[e] = cap_uv;
    f->next[e] = f->first[u];
    f->first[u] = e;
    f->to[e + 1] = u;
    f->resid[e + 1] = cap_vu;
    f->next[e + 1] = f->first[v];
    f->first[v] = e + 1;
    f->arcs += 2;
}

/* Breadth-first levels from s over residual arcs; returns whether t is reached. */
static int build_levels(const flow_graph *f, int s, int t, int *level, int *queue)
{
    for (int v = 0; v < f->nodes; v++)
        level[v] = -1;
    int head = 0, tail = 0;
    level[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
        int u = queue[head++];
        for (int e = f->first[u]; e >= 0; e = f->next[e])
            if (f->resid[e] > 0 && level[f->to[e]] < 0) {
                level[f->to[e]] = level[u] + 1;
                queue[tail++] = f->to[e];
            }
    }
    return level[t] >= 0;
}

/* A blocking flow in the level graph, found by an explicit-stack depth-first
** search (paths can be as long as the graph, too deep for recursion). `cur`
** is each node's next arc to try; `path` holds the arcs from s. */
static int64_t blocking_flow(flow_graph *f, int s, int t, int *level, int *cur, int *path)
{
    int64_t total = 0;
    for (int v = 0; v < f->nodes; v++)
        cur[v] = f->first[v];
    int depth = 0;
    int u = s;
    for (;;) {
        if (u == t) {
            int64_t b = f->resid[path[0]];
            for (int k = 1; k < depth; k++)
                if (f->resid[path[k]] < b)
                    b = f->resid[path[k]];
            int back = -1;
            for (int k = 0; k < depth; k++) {
                f->resid[path[k]] -= b;
                f->resid[path[k] ^ 1] += b;
                if (f->resid[path[k]] == 0 && back < 0)
                    back = k;
            }
            total += b;
            /* Retreat to the tail of the first saturated arc. */
            depth = back;
            u = depth == 0 ? s : f->to[path[depth - 1]];
            continue;
        }
        int e = cur[u];
        while (e >= 0 && !(f->resid[e] > 0 && level[f->to[e]] == level[u] + 1))
            e = f->next[e];
        cur[u] = e;
        if (e >= 0) {
            path[depth++] = e;
            u = f->to[e];
            continue;
        }
        /* Dead end: no path to t through u in this phase. */
        if (u == s)
            break;
        level[u] = -1;
        depth--;
        u = depth == 0 ? s : f->to[path[depth - 1]];
        cur[u] = f->next[cur[u]];
    }
    return total;
}

int64_t ref_grid_maxflow(int rows, int cols, const int32_t *source, const int32_t *sink, const int32_t *right,
                         const int32_t *down, uint8_t *sink_side)
{
    if (rows < 1 || cols < 1)
        return -1;
    int n = rows * cols;
    int s = n, t = n + 1;
    int max_arcs = 2 * (2 * n + 2 * n);
    flow_graph f = {.nodes = n + 2};
    f.first = malloc((size_t)f.nodes * sizeof *f.first);
    f.next = malloc((size_t)max_arcs * sizeof *f.next);
    f.to = malloc((size_t)max_arcs * sizeof *f.to);
    f.resid = malloc((size_t)max_arcs * sizeof *f.resid);
    int *level = malloc((size_t)f.nodes * sizeof *level);
    int *queue = malloc((size_t)f.nodes * sizeof *queue);
    int *cur = malloc((size_t)f.nodes * sizeof *cur);
    int *path = malloc((size_t)f.nodes * sizeof *path);
    uint8_t *mark = malloc((size_t)f.nodes);
    int64_t flow = -1;
    if (!f.first || !f.next || !f.to || !f.resid || !level || !queue || !cur || !path || !mark)
        goto done;

    for (int v = 0; v < f.nodes; v++)
        f.first[v] = -1;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int i = r * cols + c;
            if (source[i] > 0)
                add_pair(&f, s, i, source[i], 0);
            if (sink[i] > 0)
                add_pair(&f, i, t, sink[i], 0);
            if (c + 1 < cols && right[i] > 0)
                add_pair(&f, i, i + 1, right[i], right[i]);
            if (r + 1 < rows && down[i] > 0)
                add_pair(&f, i, i + cols, down[i], down[i]);
        }

    flow = 0;
    while (build_levels(&f, s, t, level, queue))
        flow += blocking_flow(&f, s, t, level, cur, path);

    /* The canonical sink side: every node with a residual path to t. Search
    ** backwards: u joins when its arc u->v has residual and v has joined. */
    for (int v = 0; v < f.nodes; v++)
        mark[v] = 0;
    int head = 0, tail = 0;
    mark[t] = 1;
    queue[tail++] = t;
    while (head < tail) {
        int v = queue[head++];
        for (int e = f.first[v]; e >= 0; e = f.next[e]) {
            int u = f.to[e];
            if (!mark[u] && f.resid[e ^ 1] > 0) {
                mark[u] = 1;
                queue[tail++] = u;
            }
        }
    }
    for (int i = 0; i < n; i++)
        sink_side[i] = mark[i];

done:
    free(f.first);
    free(f.next);
    free(f.to);
    free(f.resid);
    free(level);
    free(queue);
    free(cur);
    free(path);
    free(mark);
    return flow;
}
