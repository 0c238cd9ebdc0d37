/*
** pushrelabel.cl — minimum cuts of the 4-connected grid (Howe's graph cut) on
** the GPU: synchronous push-relabel with global relabels (specs/howe.md §8),
** integer capacities. The result is canonical: the nodes that reach the sink
** in the final residual graph, found by a last breadth-first search from the
** sink, the same set Boykov-Kolmogorov's cut gives (algorithms/maxflow.c).
**
** Per node i (rows x cols, raster order): excess e, height h, residuals to the
** north, south, west and east neighbours (res[4 * i + d]), residual to the sink rt.
*/
enum dir { N = 0, S = 1, W = 2, E = 3 };

/* The neighbour of node i in direction d, or -1 outside the grid. */
int neighbour(int i, int d, int rows, int cols)
{
    int r = i / cols, k = i % cols;
    if (d == N)
        return r > 0 ? i - cols : -1;
    if (d == S)
        return r < rows - 1 ? i + cols : -1;
    if (d == W)
        return k > 0 ? i - 1 : -1;
    return k < cols - 1 ? i + 1 : -1;
}

/* The direction of the arc back from the neighbour. */
int opposite(int d)
{
    return d ^ 1;
}

/* Loads the graph: the part both t-links of a node share goes straight from
** source to sink (counted in base), the rest is the node's excess or its
** residual to the sink; each link's capacity on both of its arcs. */
kernel void pr_init(global const int *source, global const int *sink, global const int *right,
                    global const int *down, int rows, int cols, global int *excess, global int *rt, global int *res,
                    global long *base)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int r = i / cols, k = i % cols;
    int tr = source[i] - sink[i];
    excess[i] = tr > 0 ? tr : 0;
    rt[i] = tr > 0 ? 0 : -tr;
    /* The flow through this node's t-links ends as base[i] - rt[i]. */
    base[i] = (long)min(source[i], sink[i]) + rt[i];
    res[4 * i + E] = k < cols - 1 ? right[i] : 0;
    res[4 * i + S] = r < rows - 1 ? down[i] : 0;
    res[4 * i + W] = k > 0 ? right[i - 1] : 0;
    res[4 * i + N] = r > 0 ? down[i - cols] : 0;
}

/* Warm start: `delta` more capacity on both arcs of every link that exists. */
kernel void pr_raise(global const int *right, global const int *down, int rows, int cols, int delta,
                     global int *res)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int r = i / cols, k = i % cols;
    if (k < cols - 1 && right[i] > 0)
        res[4 * i + E] += delta;
    if (r < rows - 1 && down[i] > 0)
        res[4 * i + S] += delta;
    if (k > 0 && right[i - 1] > 0)
        res[4 * i + W] += delta;
    if (r > 0 && down[i - cols] > 0)
        res[4 * i + N] += delta;
}

/* Sets x[0..n) to `value` (counters, heights). */
kernel void pr_fill(global int *x, int n, int value)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = value;
}

/* Global relabel, start: nodes with a residual arc to the sink are at distance 1,
** the others unreached (hmax). */
kernel void pr_bfs_init(global const int *rt, int n, int hmax, global int *height)
{
    int i = get_global_id(0);
    if (i < n)
        height[i] = rt[i] > 0 ? 1 : hmax;
}

/* One level of the search (heights double-buffered, so that no launch reads a
** value another work-item writes): an unreached node with a residual arc to a
** node at distance `level` gets level + 1; *reached records the deepest level
** set. Launches past the last level change nothing. */
kernel void pr_bfs_step(global const int *res, int rows, int cols, int level, int hmax, global const int *h_in,
                        global int *h_out, global int *reached)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int h = h_in[i];
    if (h == hmax)
        for (int d = 0; d < 4; d++) {
            int v = neighbour(i, d, rows, cols);
            if (v >= 0 && res[4 * i + d] > 0 && h_in[v] == level) {
                h = level + 1;
                atomic_max(reached, level + 1);
                break;
            }
        }
    h_out[i] = h;
}

/* Push: an active node sends what it can to the sink, then to each neighbour
** one level below, in a fixed order. An arc and its reverse are never both
** admissible, so residuals need no atomics; excess arriving from neighbours does. */
kernel void pr_push(global int *excess, global const int *height, global int *res, global int *rt, int rows,
                    int cols, int hmax)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int h = height[i];
    int e = atomic_add(&excess[i], 0);
    if (e <= 0 || h >= hmax)
        return;
    int pushed = 0;
    int t = min(e, rt[i]);
    if (t > 0) {
        rt[i] -= t;
        e -= t;
        pushed += t;
    }
    for (int d = 0; d < 4 && e > 0; d++) {
        int v = neighbour(i, d, rows, cols);
        if (v < 0 || height[v] != h - 1)
            continue;
        int c = res[4 * i + d];
        if (c <= 0)
            continue;
        int delta = min(e, c);
        res[4 * i + d] = c - delta;
        atomic_add(&res[4 * v + opposite(d)], delta);
        atomic_add(&excess[v], delta);
        e -= delta;
        pushed += delta;
    }
    if (pushed)
        atomic_sub(&excess[i], pushed);
}

/* Relabel (heights double-buffered): an active node without an admissible arc
** rises to one above its lowest residual neighbour (the sink counts as 0), or to
** hmax when it has none. Counts the nodes still active. */
kernel void pr_relabel(global const int *excess, global const int *height, global const int *res,
                       global const int *rt, int rows, int cols, int hmax, global int *next, global int *active)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int h = height[i];
    next[i] = h;
    if (excess[i] <= 0 || h >= hmax)
        return;
    int lowest = rt[i] > 0 ? 0 : hmax;
    int admissible = rt[i] > 0;
    for (int d = 0; d < 4; d++) {
        int v = neighbour(i, d, rows, cols);
        if (v < 0 || res[4 * i + d] <= 0)
            continue;
        lowest = min(lowest, height[v]);
        admissible |= height[v] == h - 1;
    }
    if (!admissible)
        next[i] = lowest >= hmax ? hmax : lowest + 1;
    if (next[i] < hmax)
        atomic_inc(active);
}

/* The cut: 1 where the node reaches the sink (height < hmax after the final
** search), 0 elsewhere. */
kernel void pr_sink_side(global const int *height, int n, int hmax, global uchar *out)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = height[i] < hmax;
}

/* Flow value: per work-group sums of what reached the sink, then one sum. */
kernel void pr_flow_partial(global const long *base, global const int *rt, int n, global long *partial)
{
    local long acc[256];
    int lid = get_local_id(0);
    long s = 0;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        s += base[i] - rt[i];
    acc[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = get_local_size(0) / 2; off > 0; off /= 2) {
        if (lid < off)
            acc[lid] += acc[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = acc[0];
}

kernel void pr_flow_final(global const long *partial, int parts, int index, global long *out)
{
    if (get_global_id(0) != 0)
        return;
    long s = 0;
    for (int p = 0; p < parts; p++)
        s += partial[p];
    out[index] = s;
}
