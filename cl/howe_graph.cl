/*
** howe_graph.cl — Howe's graph on the (H−1)×(W−1) node grid and the image made
** from its cut (docs/howe.md §§3, 5, 6). Both roles build the
** graph with `howe_graph` and finish with `howe_finish`; only the max-flow
** between them differs (Boykov-Kolmogorov on the cpu role, push-relabel on the
** gpu role), and both return the same canonical cut.
*/

/* Integer t-links from lap2 (already −1000 on bright background), and the
** n-links to the right and lower neighbours: capacity `link`, or 0 where the
** darker pixel of the pair is a Canny edge (ties test the lower/right pixel).
** The edge map starts `edge_offset` bytes into `edges` (tuning keeps several). */
kernel void howe_graph(global const uchar *gray, global const int *lap2, global const uchar *edges,
                       ulong edge_offset, int width, int height, int link, global int *source, global int *sink,
                       global int *right, global int *down)
{
    int k = get_global_id(0), r = get_global_id(1);
    int cols = width - 1, rows = height - 1;
    if (k >= cols || r >= rows)
        return;
    edges += edge_offset;
    ulong i = (ulong)r * cols + k, p = (ulong)r * width + k;
    source[i] = 16 * (3000 - lap2[i]);
    sink[i] = 16 * (3000 + lap2[i]);
    int dx = gray[p + 1] - gray[p], dy = gray[p + width] - gray[p];
    right[i] = k < cols - 1 && !((edges[p] && dx > 0) || (edges[p + 1] && dx <= 0)) ? link : 0;
    down[i] = r < rows - 1 && !((edges[p] && dy > 0) || (edges[p + width] && dy <= 0)) ? link : 0;
}

/* The image from the cut (1 = sink side = ink per node): padded to H×W by
** repeating the last row, then the last column, then ink whose north and west
** neighbours are both background removed (row 0 and column 0 stand in for
** their missing neighbours). 0 = ink, 255 = background. */
kernel void howe_finish(global const uchar *ink, int width, int height, global uchar *out)
{
    int k = get_global_id(0), r = get_global_id(1);
    if (k >= width || r >= height)
        return;
    int cols = width - 1, rows = height - 1;
    int pr = min(r, rows - 1), pk = min(k, cols - 1);
    int self = ink[(ulong)pr * cols + pk];
    int north = r > 0 ? ink[(ulong)min(r - 1, rows - 1) * cols + pk] : self;
    int west = k > 0 ? ink[(ulong)pr * cols + min(k - 1, cols - 1)] : self;
    out[(ulong)r * width + k] = self && (north || west) ? 0 : 255;
}

/* Completes the gpu cut's report (the cpu cut's host code fills its own):
** success, no search steps, `commands` launches (CUT_* in algorithms/howe.c). */
kernel void howe_cut_ok(global long *report, long commands)
{
    if (get_global_id(0) == 0) {
        report[0] = 1;
        report[2] = 0;
        report[3] = commands;
    }
}
