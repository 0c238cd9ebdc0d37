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
** the others unreached (hmax) until pr_bfs_sweeps finds a path. */
kernel void pr_bfs_init(global const int *rt, int n, int hmax, global int *height)
{
    int i = get_global_id(0);
    if (i < n)
        height[i] = rt[i] > 0 ? 1 : hmax;
}

/* `sweeps` rounds of relaxation toward exact distances to the sink: a node's
** height becomes one more than its lowest neighbour over a residual arc when
** that is lower. Heights only fall and never below the true distance, so the
** relaxation reaches the breadth-first distances in any order of updates;
** neighbours' heights are read as they change (volatile), which lets one
** launch carry distances many levels. *changed is set when a launch lowered
** anything; a launch that changes nothing saw only final values. */
kernel void pr_bfs_sweeps(global const int *res, int rows, int cols, int sweeps, volatile global int *height,
                          global int *changed)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int h = height[i], lowered = 0;
    for (int s = 0; s < sweeps; s++) {
        if (h == 1)
            break;
        int best = h;
        for (int d = 0; d < 4; d++) {
            int v = neighbour(i, d, rows, cols);
            if (v >= 0 && res[4 * i + d] > 0)
                best = min(best, height[v] + 1);
        }
        if (best < h) {
            h = best;
            height[i] = h;
            lowered = 1;
        }
    }
    if (lowered)
        *changed = 1;
}

/* `cycles` rounds of lock-free push-relabel (Hong & He): an active node pushes
** to its lowest neighbour over a residual arc (the sink counts as 0) when it
** is above it, and otherwise rises to one above it, or to hmax when it has no
** residual arc. Residuals and excess change by atomics, and only the node
** itself lowers its own excess and residuals, so what it read stays a lower
** bound: any interleaving of the work-items gives a valid preflow and valid
** heights. Neighbours' heights are read as they change (volatile). */
kernel void pr_cycles(volatile global int *excess, volatile global int *height, volatile global int *res,
                      global int *rt, int rows, int cols, int hmax, int cycles)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int nb[4];
    for (int d = 0; d < 4; d++)
        nb[d] = neighbour(i, d, rows, cols);
    for (int c = 0; c < cycles; c++) {
        int e = excess[i], h = height[i];
        if (e <= 0 || h >= hmax)
            continue;
        /* The sink, at height 0, is the lowest a node can see. */
        int t = rt[i];
        int low = t > 0 ? 0 : hmax, dir = t > 0 ? 4 : -1;
        for (int d = 0; d < 4 && low > 0; d++) {
            if (nb[d] < 0 || res[4 * i + d] <= 0)
                continue;
            int hv = height[nb[d]];
            if (hv < low) {
                low = hv;
                dir = d;
            }
        }
        if (dir == 4 && h > 0) {
            int delta = min(e, t);
            rt[i] = t - delta;
            atomic_sub(&excess[i], delta);
        } else if (dir >= 0 && h > low) {
            int delta = min(e, res[4 * i + dir]);
            atomic_sub(&res[4 * i + dir], delta);
            atomic_add(&res[4 * nb[dir] + opposite(dir)], delta);
            atomic_sub(&excess[i], delta);
            atomic_add(&excess[nb[dir]], delta);
        } else {
            height[i] = dir >= 0 ? min(low + 1, hmax) : hmax;
        }
    }
}

/* Counts the nodes that still have excess and may reach the sink. A pass of
** its own: counted inside pr_cycles, a node could be idle when counted and
** receive excess from a neighbour afterwards. */
kernel void pr_count_active(global const int *excess, global const int *height, int n, int hmax,
                            global int *active)
{
    int i = get_global_id(0);
    if (i < n && excess[i] > 0 && height[i] < hmax)
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
