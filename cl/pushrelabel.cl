/*
** pushrelabel.cl — minimum cuts of the 4-connected grid (Howe's graph cut) on
** the GPU: synchronous push-relabel with global relabels (docs/howe.md, "The solvers"),
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

/* Warm start: more capacity on both arcs of every link that exists, by the
** delta of the link's band of rows: deltas[first + r / band_rows]. Stacked
** graphs, one a band, have no link between bands, so both arcs of a link take
** one delta. */
kernel void pr_raise(global const int *right, global const int *down, int rows, int cols,
                     global const int *deltas, int first, int band_rows, global int *res)
{
    int i = get_global_id(0);
    if (i >= rows * cols)
        return;
    int r = i / cols, k = i % cols;
    int delta = deltas[first + r / band_rows];
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

/* The cut as bit `bit` of each node's word, the other bits kept. */
kernel void pr_sink_bits(global const int *height, int n, int hmax, int bit, global ulong *bits)
{
    int i = get_global_id(0);
    if (i < n)
        bits[i] = (bits[i] & ~((ulong)1 << bit)) | ((ulong)(height[i] < hmax) << bit);
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

/* ---- Block-local kernels (the gpu role's path on GPU devices) ----
**
** A work-group owns a tile of TILE_W x TILE_H nodes and runs many rounds on it
** in local memory between one load and one write-back, so a launch costs two
** global round trips however many rounds it runs. Tiles of one launch run at
** the same time and each writes back its own copy of its nodes, so a tile
** never writes another tile's excess or residuals. A push across the tile
** border, u -> v with v in a neighbouring tile, adds delta to e(v) and to
** r(v, u) alike: the pushing tile adds it to an "incoming" slot of the arc
** (v, u) instead. Each border arc has one slot per launch parity:
** launches of parity p add to the slots of parity p, and fold (add into e and
** r, then zero) the slots of parity 1 - p, which the previous launch filled
** and nobody writes during this one. An arc's slot has one writer (its tail
** node's work-item) and one reader (its head node's), in different launches,
** so no flow is lost or counted twice, and no atomics are needed. Between
** batches, pr_tile_settle folds both parities, so heights searches and the
** active count see the whole residual graph.
**
** Most tiles have nothing to do in most launches, so a tile runs only when
** woken: wake[tile] holds the index of the last launch that must run it, and
** a launch of index `stamp` skips tiles whose entry is lower (reading one int).
** A tile wakes itself for the next launch while it has active nodes, a push
** over the border wakes the receiving tile (which must fold the slot then),
** pr_tile_settle wakes every tile with an active node, and the host wakes all
** after a global relabel (new heights). A tile with no active node and no
** incoming flow has nothing to do whatever its neighbours' heights, so the
** skips change nothing but the work.
**
** A tile reads its halo's heights once, at load: they may be stale (the
** neighbour raises them during the launch, or writes them back while they are
** read: a race of whole ints, old or new value alike). Stale heights only
** misguide pushes, which stay feasible (a node never sends more than its
** excess or a residual), so any interleaving leaves a valid preflow; the host
** stops only when, right after an exact search from the sink, no node with
** excess can reach the sink, which makes the preflow maximum whatever the
** heights were on the way. */
#define TILE_W 32
#define TILE_H 32
#define TILE_N (TILE_W * TILE_H)
/* The work-group: ITEMS_W x ITEMS_H work-items (the kernels require it), each
** with NODES nodes of the tile, one in each quadrant: a size every OpenCL
** device accepts, and a tile large enough that flow crosses few borders. */
#define ITEMS_W 16
#define ITEMS_H 16
#define NODES ((TILE_W / ITEMS_W) * (TILE_H / ITEMS_H))
/* Incoming slots of a tile: its north, south, west and east border arcs. */
#define TILE_SLOTS (2 * (TILE_W + TILE_H))
/* Row length of a tile's heights with their one-node halo. */
#define HALO_W (TILE_W + 2)

/* The tile coordinates of this work-item's node q. */
int node_x(int q)
{
    return get_local_id(0) + ITEMS_W * (q % (TILE_W / ITEMS_W));
}

int node_y(int q)
{
    return get_local_id(1) + ITEMS_H * (q / (TILE_W / ITEMS_W));
}

/* The slot of the arc from node (lx, ly) of a tile to its neighbour in
** direction d, on that tile's border (d points out of the tile). */
int tile_slot(int lx, int ly, int d)
{
    if (d == N)
        return lx;
    if (d == S)
        return TILE_W + lx;
    if (d == W)
        return 2 * TILE_W + ly;
    return 2 * TILE_W + TILE_H + ly;
}

/* Whether node (lx, ly)'s neighbour in direction d lies outside the tile. */
int tile_border(int lx, int ly, int d)
{
    return d == N ? ly == 0 : d == S ? ly == TILE_H - 1 : d == W ? lx == 0 : lx == TILE_W - 1;
}

/* The local index of the neighbour of (lx, ly) in direction d, with the halo. */
int halo_index(int lx, int ly, int d)
{
    int x = lx + 1 + (d == E) - (d == W), y = ly + 1 + (d == S) - (d == N);
    return y * HALO_W + x;
}

/* Loads the tile's halo heights into lh (unreached, hmax, outside the grid). */
void load_halo(local int *lh, volatile global const int *height, int rows, int cols, int hmax)
{
    int lid = get_local_id(1) * ITEMS_W + get_local_id(0);
    int r0 = get_group_id(1) * TILE_H, k0 = get_group_id(0) * TILE_W;
    if (lid >= TILE_SLOTS)
        return;
    int r, k, at;
    if (lid < TILE_W) {
        r = r0 - 1, k = k0 + lid, at = lid + 1;
    } else if (lid < 2 * TILE_W) {
        r = r0 + TILE_H, k = k0 + lid - TILE_W, at = (TILE_H + 1) * HALO_W + lid - TILE_W + 1;
    } else if (lid < 2 * TILE_W + TILE_H) {
        r = r0 + lid - 2 * TILE_W, k = k0 - 1, at = (lid - 2 * TILE_W + 1) * HALO_W;
    } else {
        r = r0 + lid - 2 * TILE_W - TILE_H, k = k0 + TILE_W, at = (lid - 2 * TILE_W - TILE_H + 1) * HALO_W + HALO_W - 1;
    }
    lh[at] = r >= 0 && r < rows && k >= 0 && k < cols ? height[r * cols + k] : hmax;
}

/* Adds the incoming slots of `parity` to the node's excess and residuals and
** clears them; returns whether anything came in. */
int fold_incoming(global int *slots, int lx, int ly, int *e, int *rs)
{
    int got = 0;
    for (int d = 0; d < 4; d++) {
        if (!tile_border(lx, ly, d))
            continue;
        int s = tile_slot(lx, ly, d), in = slots[s];
        if (in != 0) {
            *e += in;
            rs[d] += in;
            slots[s] = 0;
            got = 1;
        }
    }
    return got;
}

/* The slots of one parity of tile (tx, ty). */
global int *tile_slots(global int *incoming, int parity, int tx, int ty)
{
    int tiles = get_num_groups(0) * get_num_groups(1);
    return incoming + ((size_t)parity * tiles + (size_t)ty * get_num_groups(0) + tx) * TILE_SLOTS;
}

/* Up to `rounds` synchronous push-relabel rounds on one
** tile. A round: every active node (e > 0, h < hmax) sends what it can to the
** sink (when h > 0), then in the order N, S, W, E to each neighbour it has a
** residual arc to and is higher than; a node that sent nothing rises to one
** above its lowest residual neighbour (the sink counts as 0), or to hmax if it
** has none. Heights are read-only during pushes, so u -> v and v -> u are
** never both used in one round; pushes inside the tile go through `sent` and
** the receiver adds them (no atomics); pushes out of the tile go to the
** neighbour's incoming slots. A tile stops early when no node is active;
** a tile with no active node after the fold writes back what it folded only. */
kernel __attribute__((reqd_work_group_size(ITEMS_W, ITEMS_H, 1))) void
pr_tile_push(global int *excess, global int *height, global int *res, global int *rt, global int *incoming,
             int rows, int cols, int hmax, int rounds, int parity, global int *wake, int stamp)
{
    local int lh[(TILE_H + 2) * HALO_W];
    local int sent[4][TILE_N];
    local int active[2], go;
    int lid = get_local_id(1) * ITEMS_W + get_local_id(0);
    int tx = get_group_id(0), ty = get_group_id(1), tiles_x = get_num_groups(0), tiles_y = get_num_groups(1);
    int tile = ty * tiles_x + tx;
    /* One read for the whole group: neighbours may raise the entry meanwhile. */
    if (lid == 0)
        go = wake[tile] >= stamp;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!go)
        return;
    global int *slots = tile_slots(incoming, parity ^ 1, tx, ty);
    int e[NODES], h[NODES], t[NODES], rs[NODES][4], folded = 0, any = 0;
    for (int q = 0; q < NODES; q++) {
        int x = node_x(q), y = node_y(q), r = ty * TILE_H + y, k = tx * TILE_W + x;
        e[q] = 0, h[q] = hmax, t[q] = 0;
        rs[q][N] = rs[q][S] = rs[q][W] = rs[q][E] = 0;
        if (r < rows && k < cols) {
            int i = r * cols + k;
            e[q] = excess[i];
            h[q] = height[i];
            t[q] = rt[i];
            int4 v = vload4(i, res);
            rs[q][N] = v.s0, rs[q][S] = v.s1, rs[q][W] = v.s2, rs[q][E] = v.s3;
            folded |= fold_incoming(slots, x, y, &e[q], rs[q]);
        }
        lh[(y + 1) * HALO_W + x + 1] = h[q];
        any |= e[q] > 0 && h[q] < hmax;
    }
    load_halo(lh, height, rows, cols, hmax);
    if (lid == 0)
        active[0] = active[1] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (any)
        active[1] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active[1] == 0) {
        for (int q = 0; q < NODES && folded; q++) {
            int r = ty * TILE_H + node_y(q), k = tx * TILE_W + node_x(q);
            if (r < rows && k < cols) {
                excess[r * cols + k] = e[q];
                vstore4((int4)(rs[q][N], rs[q][S], rs[q][W], rs[q][E]), r * cols + k, res);
            }
        }
        return;
    }
    int out[NODES][4], busy = 1;
    for (int q = 0; q < NODES; q++)
        out[q][N] = out[q][S] = out[q][W] = out[q][E] = 0;
    /* active[p] says whether a node is active after this round (each work-item
    ** with one stores 1: an atomic count would serialise them) while
    ** active[p ^ 1], read by everyone before the first barrier of this round,
    ** is cleared. */
    for (int round = 0; round < rounds; round++) {
        int p = round & 1, nh[NODES];
        for (int q = 0; q < NODES; q++) {
            int x = node_x(q), y = node_y(q), at = y * TILE_W + x;
            int snt[4] = {0, 0, 0, 0};
            nh[q] = h[q];
            if (e[q] > 0 && h[q] < hmax) {
                int moved = 0;
                if (t[q] > 0 && h[q] > 0) {
                    int delta = min(e[q], t[q]);
                    t[q] -= delta;
                    e[q] -= delta;
                    moved = 1;
                }
                for (int d = 0; d < 4 && e[q] > 0; d++) {
                    if (rs[q][d] <= 0 || h[q] <= lh[halo_index(x, y, d)])
                        continue;
                    int delta = min(e[q], rs[q][d]);
                    rs[q][d] -= delta;
                    e[q] -= delta;
                    moved = 1;
                    if (tile_border(x, y, d))
                        out[q][d] += delta;
                    else
                        snt[d] = delta;
                }
                if (!moved) {
                    int low = t[q] > 0 ? 0 : hmax;
                    for (int d = 0; d < 4; d++)
                        if (rs[q][d] > 0)
                            low = min(low, lh[halo_index(x, y, d)]);
                    nh[q] = min(low + 1, hmax);
                }
            }
            for (int d = 0; d < 4; d++)
                sent[d][at] = snt[d];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        any = 0;
        for (int q = 0; q < NODES; q++) {
            int x = node_x(q), y = node_y(q), at = y * TILE_W + x;
            if (nh[q] != h[q]) {
                h[q] = nh[q];
                lh[(y + 1) * HALO_W + x + 1] = h[q];
            }
            for (int d = 0; d < 4; d++) {
                if (tile_border(x, y, d))
                    continue;
                int from = at + (d == S ? TILE_W : d == N ? -TILE_W : d == E ? 1 : -1);
                int delta = sent[opposite(d)][from];
                e[q] += delta;
                rs[q][d] += delta;
            }
            any |= e[q] > 0 && h[q] < hmax;
        }
        if (lid == 0)
            active[p ^ 1] = 0;
        if (any)
            active[p] = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((busy = active[p]) == 0)
            break;
    }
    if (lid == 0 && busy)
        atomic_max(&wake[tile], stamp + 1);
    for (int q = 0; q < NODES; q++) {
        int x = node_x(q), y = node_y(q), r = ty * TILE_H + y, k = tx * TILE_W + x;
        if (r >= rows || k >= cols)
            continue;
        int i = r * cols + k;
        excess[i] = e[q];
        height[i] = h[q];
        rt[i] = t[q];
        vstore4((int4)(rs[q][N], rs[q][S], rs[q][W], rs[q][E]), i, res);
        /* The arc v -> u of a push u -> v over the border: its slot in v's tile. */
        if (out[q][N] && ty > 0) {
            tile_slots(incoming, parity, tx, ty - 1)[tile_slot(x, TILE_H - 1, S)] += out[q][N];
            atomic_max(&wake[tile - tiles_x], stamp + 1);
        }
        if (out[q][S] && ty < tiles_y - 1) {
            tile_slots(incoming, parity, tx, ty + 1)[tile_slot(x, 0, N)] += out[q][S];
            atomic_max(&wake[tile + tiles_x], stamp + 1);
        }
        if (out[q][W] && tx > 0) {
            tile_slots(incoming, parity, tx - 1, ty)[tile_slot(TILE_W - 1, y, E)] += out[q][W];
            atomic_max(&wake[tile - 1], stamp + 1);
        }
        if (out[q][E] && tx < tiles_x - 1) {
            tile_slots(incoming, parity, tx + 1, ty)[tile_slot(0, y, W)] += out[q][E];
            atomic_max(&wake[tile + 1], stamp + 1);
        }
    }
}

/* Between batches of pr_tile_push: folds both parities' incoming slots, so
** that excess and residuals are whole again, and adds the number of active
** nodes (e > 0, h < hmax) to *count, one atomic per tile; wakes the tiles
** with an active node for the push launch of index `stamp`. */
kernel __attribute__((reqd_work_group_size(ITEMS_W, ITEMS_H, 1))) void
pr_tile_settle(global int *excess, global const int *height, global int *res, global int *incoming, int rows,
               int cols, int hmax, global int *count, global int *wake, int stamp)
{
    local int active;
    int tx = get_group_id(0), ty = get_group_id(1), first = get_local_id(0) == 0 && get_local_id(1) == 0;
    if (first)
        active = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int mine = 0;
    for (int q = 0; q < NODES; q++) {
        int x = node_x(q), y = node_y(q), r = ty * TILE_H + y, k = tx * TILE_W + x, i = r * cols + k;
        if (r >= rows || k >= cols)
            continue;
        int e = excess[i], rs[4];
        int4 v = vload4(i, res);
        rs[N] = v.s0, rs[S] = v.s1, rs[W] = v.s2, rs[E] = v.s3;
        int a = fold_incoming(tile_slots(incoming, 0, tx, ty), x, y, &e, rs);
        int b = fold_incoming(tile_slots(incoming, 1, tx, ty), x, y, &e, rs);
        if (a || b) {
            excess[i] = e;
            vstore4((int4)(rs[N], rs[S], rs[W], rs[E]), i, res);
        }
        mine += e > 0 && height[i] < hmax;
    }
    if (mine)
        atomic_add(&active, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (first && active > 0) {
        atomic_add(count, active);
        atomic_max(&wake[ty * get_num_groups(0) + tx], stamp);
    }
}

/* Global relabel, block-local. A work-group owns a block of BFS_W x BFS_H
** nodes (larger than a push tile: a search moves no flow, so a block can hold
** more nodes per work-item) and runs up to `rounds` relaxation rounds on its
** heights in local memory, its halo's heights read from global memory at the
** start and again every BFS_REFRESH rounds, when it writes its own lowered
** heights back (blocks running at the same time exchange distances within a
** launch, and a search crosses the page in fewer launches). In a round every
** work-item sweeps a strip of BFS_STRIP nodes forward and back, each node
** taking one more than its lowest neighbour over a residual arc when that is
** lower, with the new values of its own strip and the round's starting values
** of the nodes beside it; strips run down the columns in even rounds and
** along the rows in odd ones. A distance thus travels a whole strip in one
** round whichever way it goes, and a block settles in a few rounds. Heights
** only fall and never below the true distance, whatever the halo read (old or
** new, or lowered by a neighbour during the launch), so launches converge to
** the breadth-first distances; *changed is set when a block lowered anything,
** and a launch in which no block did saw final values everywhere. *changed
** is raised to stamp + 1 rather than set, so the host need not clear it
** between launches: the last launch of a batch changed something exactly when
** the flag holds its stamp + 1. Blocks are woken as in pr_tile_push
** (wake[block] >= stamp): the host wakes all for the first launch, a block
** that lowered a border node wakes the neighbour beyond, and one that did not
** settle within `rounds` wakes itself; a block left asleep has settled on halo
** heights that have not changed since. */
#define BFS_W 64
#define BFS_H 64
#define BFS_STRIP 16
/* Work-items per block: one per strip; their number is also the halo's size
** (2 * (BFS_W + BFS_H)), so each loads one halo node. */
#define BFS_ITEMS (BFS_W * BFS_H / BFS_STRIP)
#define BFS_ROW (BFS_W + 2)
/* Rounds between two exchanges of border heights with the blocks beside. */
#define BFS_REFRESH 2

/* The local index (halo included) of the j-th node of work-item t's strip:
** down column t % BFS_W in even rounds, along row t / (BFS_W / BFS_STRIP) in
** odd ones; `step` is the index distance between consecutive strip nodes and
** `side` that to the nodes beside it. */
int bfs_strip(int t, int odd, int *step, int *side)
{
    if (!odd) {
        *step = BFS_ROW;
        *side = 1;
        return (t / BFS_W * BFS_STRIP + 1) * BFS_ROW + t % BFS_W + 1;
    }
    const int per_row = BFS_W / BFS_STRIP;
    *step = 1;
    *side = BFS_ROW;
    return (t / per_row + 1) * BFS_ROW + t % per_row * BFS_STRIP + 1;
}

/* Writes the heights of work-item lid's column strip that fell below h0 (what
** global memory holds) and records them there; marks the block's sides whose
** nodes fell (their neighbours beyond must search again). Returns whether any fell. */
int bfs_flush(local const int *lh, global int *height, int lid, int top, int left, int cols, int *h0, local int *edge)
{
    int step, side, at0 = bfs_strip(lid, 0, &step, &side), r0 = top + lid / BFS_W * BFS_STRIP;
    int k = left + lid % BFS_W, low = 0;
    for (int j = 0; j < BFS_STRIP; j++) {
        int h = lh[at0 + j * step];
        if (h >= h0[j])
            continue;
        height[(r0 + j) * cols + k] = h;
        h0[j] = h;
        low = 1;
        if (j == 0 && r0 == top)
            atomic_or(&edge[N], 1);
        if (j == BFS_STRIP - 1 && r0 + j == top + BFS_H - 1)
            atomic_or(&edge[S], 1);
        if (lid % BFS_W == 0)
            atomic_or(&edge[W], 1);
        if (lid % BFS_W == BFS_W - 1)
            atomic_or(&edge[E], 1);
    }
    return low;
}

kernel __attribute__((reqd_work_group_size(BFS_W, BFS_ITEMS / BFS_W, 1))) void
pr_block_bfs(global const int *res, int rows, int cols, int hmax, int rounds, global int *height,
             global int *changed, global int *wake, int stamp)
{
    local int lh[(BFS_H + 2) * BFS_ROW];
    /* Residual arcs per node, bit d for direction d, in the halo's layout. */
    local uchar larcs[(BFS_H + 2) * BFS_ROW];
    local int lowered[3], edge[4], go;
    int lx = get_local_id(0), lid = get_local_id(1) * BFS_W + lx;
    int bx = get_group_id(0), by = get_group_id(1), blocks_x = get_num_groups(0), block = by * blocks_x + bx;
    if (lid == 0)
        go = wake[block] >= stamp;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!go)
        return;
    int top = by * BFS_H, left = bx * BFS_W, k = left + lx;
    /* This work-item's column strip is also the nodes it loads and writes back. */
    int step, side, at0 = bfs_strip(lid, 0, &step, &side), r0 = top + lid / BFS_W * BFS_STRIP;
    int h0[BFS_STRIP];
    for (int j = 0; j < BFS_STRIP; j++) {
        int r = r0 + j, h = hmax, arcs = 0;
        if (r < rows && k < cols) {
            int i = r * cols + k;
            h = height[i];
            int4 v = vload4(i, res);
            arcs = (v.s0 > 0) << N | (v.s1 > 0) << S | (v.s2 > 0) << W | (v.s3 > 0) << E;
        }
        h0[j] = h;
        lh[at0 + j * step] = h;
        larcs[at0 + j * step] = (uchar)arcs;
    }
    /* This work-item's node of the halo: where it lies in lh and in the grid (-1 outside). */
    int hat, hi_at;
    {
        int r, c;
        if (lid < BFS_W)
            r = top - 1, c = left + lid, hat = lid + 1;
        else if (lid < 2 * BFS_W)
            r = top + BFS_H, c = left + lid - BFS_W, hat = (BFS_H + 1) * BFS_ROW + lid - BFS_W + 1;
        else if (lid < 2 * BFS_W + BFS_H)
            r = top + lid - 2 * BFS_W, c = left - 1, hat = (lid - 2 * BFS_W + 1) * BFS_ROW;
        else
            r = top + lid - 2 * BFS_W - BFS_H, c = left + BFS_W, hat = (lid - 2 * BFS_W - BFS_H + 2) * BFS_ROW - 1;
        hi_at = r >= 0 && r < rows && c >= 0 && c < cols ? r * cols + c : -1;
        lh[hat] = hi_at >= 0 ? height[hi_at] : hmax;
    }
    if (lid < 4)
        edge[lid] = 0;
    if (lid == 0)
        lowered[0] = lowered[1] = lowered[2] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int busy = 1, low = 0;
    /* lowered[p] says whether this round changed anything (each that did stores
    ** 1); lowered[p ^ 1] is cleared as in pr_tile_push. */
    for (int round = 0; round < rounds; round++) {
        int p = round & 1, at = bfs_strip(lid, p, &step, &side);
        /* Along the strip: backward (N or W) and forward (S or E) arcs. */
        int back = p ? W : N, fwd = p ? E : S, left_d = p ? N : W, right_d = p ? S : E;
        int h[BFS_STRIP], a[BFS_STRIP], lo[BFS_STRIP], hi[BFS_STRIP];
        for (int j = 0; j < BFS_STRIP; j++) {
            int x = at + j * step;
            h[j] = lh[x];
            a[j] = larcs[x];
            lo[j] = lh[x - side];
            hi[j] = lh[x + side];
        }
        int before = lh[at - step], after = lh[at + BFS_STRIP * step];
        barrier(CLK_LOCAL_MEM_FENCE);
        int moved = 0;
        for (int j = 0; j < BFS_STRIP; j++) {
            if (h[j] <= 1)
                continue;
            int best = h[j];
            if (a[j] >> back & 1)
                best = min(best, (j ? h[j - 1] : before) + 1);
            if (a[j] >> left_d & 1)
                best = min(best, lo[j] + 1);
            if (a[j] >> right_d & 1)
                best = min(best, hi[j] + 1);
            if (best < h[j])
                h[j] = best, moved = 1;
        }
        for (int j = BFS_STRIP - 1; j >= 0; j--) {
            if (h[j] <= 1 || !(a[j] >> fwd & 1))
                continue;
            int best = (j < BFS_STRIP - 1 ? h[j + 1] : after) + 1;
            if (best < h[j])
                h[j] = best, moved = 1;
        }
        if (moved) {
            for (int j = 0; j < BFS_STRIP; j++)
                lh[at + j * step] = h[j];
            lowered[p] = 1;
        }
        if (lid == 0)
            lowered[p ^ 1] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Every BFS_REFRESH rounds, when nothing changed, and after the last
        ** round, lowered heights go to global memory, where the blocks running
        ** beside this one read them; then the halo is read again, and a lower
        ** value there means another round (flagged for the next one, whose
        ** flag nobody reads before the barrier). Distances cross several
        ** blocks in one launch so, and the search needs fewer launches. */
        int quiet = !lowered[p];
        busy = !quiet;
        if (quiet || round == rounds - 1 || round % BFS_REFRESH == BFS_REFRESH - 1) {
            low |= bfs_flush(lh, height, lid, top, left, cols, h0, edge);
            if (round == rounds - 1)
                break;
            int v = hi_at >= 0 ? ((volatile global const int *)height)[hi_at] : hmax;
            if (v < lh[hat]) {
                lh[hat] = v;
                lowered[p ^ 1] = 1;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (quiet && !lowered[p ^ 1])
                break;
        }
    }
    if (low)
        lowered[2] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid != 0)
        return;
    if (lowered[2] > 0)
        atomic_max(changed, stamp + 1);
    if (busy)
        atomic_max(&wake[block], stamp + 1);
    if (edge[N] && by > 0)
        atomic_max(&wake[block - blocks_x], stamp + 1);
    if (edge[S] && by < get_num_groups(1) - 1)
        atomic_max(&wake[block + blocks_x], stamp + 1);
    if (edge[W] && bx > 0)
        atomic_max(&wake[block - 1], stamp + 1);
    if (edge[E] && bx < blocks_x - 1)
        atomic_max(&wake[block + 1], stamp + 1);
}
