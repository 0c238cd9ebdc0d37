/*
** window_stats.cl — exact window sums S = Σg and Q = Σg² over the centred
** w×w window (w = 2h+1) clipped at the image border (docs/algorithms.md,
** "Niblack, Sauvola, NICK, Wolf").
**
** Output layout: one buffer `sums` of 2·W·H longs, S at [0, W·H), Q at [W·H, 2·W·H).
** All variants compute the same 64-bit integers, so they give identical images:
**   sliding        column sums, then running row sums (O(1) per pixel); on a CPU
**                  in one pass over bands of rows unless the window is tall
**   global         direct window loops reading global memory (Nick paper, kernel 1)
**   global-shared  the work-group's own tile staged in local memory, the rest read
**                  from global memory (Nick paper, kernel 2)
**   shared         the whole window region staged through local memory tile by
**                  tile (Nick paper, kernel 3)
*/
#define TILE 16
#define SCAN 256

/* sliding, pass 1: one work-item per column, running sums down the rows. */
kernel void stats_columns(global const uchar *gray, int width, int height, int h, global long *col)
{
    int x = get_global_id(0);
    if (x >= width)
        return;
    ulong n = (ulong)width * (ulong)height;
    global long *cs = col, *cq = col + n;
    long s = 0, q = 0;
    int last = min(h, height - 1);
    for (int y = 0; y <= last; y++) {
        long g = gray[(ulong)y * width + x];
        s += g;
        q += g * g;
    }
    for (int y = 0; y < height; y++) {
        ulong i = (ulong)y * width + x;
        cs[i] = s;
        cq[i] = q;
        int add = y + h + 1, sub = y - h;
        if (add < height) {
            long g = gray[(ulong)add * width + x];
            s += g;
            q += g * g;
        }
        if (sub >= 0) {
            long g = gray[(ulong)sub * width + x];
            s -= g;
            q -= g * g;
        }
    }
}

/* sliding, pass 1 (CPU): one work-item per strip of STRIP columns, walking down
** the rows with the strip's running sums in private memory, so that every
** memory access runs along a row (one work-item per column thrashes the cache). */
#define STRIP 32
kernel void stats_columns_strips(global const uchar *gray, int width, int height, int h, global long *col)
{
    int x0 = get_global_id(0) * STRIP;
    if (x0 >= width)
        return;
    int nx = min(STRIP, width - x0);
    ulong n = (ulong)width * (ulong)height;
    global long *cs = col, *cq = col + n;
    long s[STRIP], q[STRIP];
    for (int k = 0; k < nx; k++)
        s[k] = q[k] = 0;
    int last = min(h, height - 1);
    for (int y = 0; y <= last; y++) {
        global const uchar *row = gray + (ulong)y * width + x0;
        for (int k = 0; k < nx; k++) {
            long g = row[k];
            s[k] += g;
            q[k] += g * g;
        }
    }
    for (int y = 0; y < height; y++) {
        ulong i = (ulong)y * width + x0;
        for (int k = 0; k < nx; k++) {
            cs[i + k] = s[k];
            cq[i + k] = q[k];
        }
        int add = y + h + 1, sub = y - h;
        if (add < height) {
            global const uchar *row = gray + (ulong)add * width + x0;
            for (int k = 0; k < nx; k++) {
                long g = row[k];
                s[k] += g;
                q[k] += g * g;
            }
        }
        if (sub >= 0) {
            global const uchar *row = gray + (ulong)sub * width + x0;
            for (int k = 0; k < nx; k++) {
                long g = row[k];
                s[k] -= g;
                q[k] -= g * g;
            }
        }
    }
}

/* Running sums along one row of column sums (cs, cq): S and Q of the row's
** window at every x, clipped at the row's ends. */
void row_sums(global const long *cs, global const long *cq, int width, int h, global long *S, global long *Q)
{
    long s = 0, q = 0;
    int last = min(h, width - 1);
    for (int x = 0; x <= last; x++) {
        s += cs[x];
        q += cq[x];
    }
    for (int x = 0; x < width; x++) {
        S[x] = s;
        Q[x] = q;
        int add = x + h + 1, sub = x - h;
        if (add < width) {
            s += cs[add];
            q += cq[add];
        }
        if (sub >= 0) {
            s -= cs[sub];
            q -= cq[sub];
        }
    }
}

/* sliding, pass 2 (CPU): one work-item per row, running sums along the row. */
kernel void stats_rows_serial(global const long *col, int width, int height, int h, global long *sums)
{
    int y = get_global_id(0);
    if (y >= height)
        return;
    ulong n = (ulong)width * (ulong)height;
    global const long *cs = col + (ulong)y * width, *cq = col + n + (ulong)y * width;
    row_sums(cs, cq, width, h, sums + (ulong)y * width, sums + n + (ulong)y * width);
}

/* sliding (CPU), one pass: one work-item per band of `band` rows. The column
** sums of the band's current row live in `col` (2·width longs per band, small
** enough to stay in cache), so no column-sum image goes through memory; each
** band first sums the 2h+1 rows of its first window. The same integers as the
** two passes above. */
kernel void stats_bands(global const uchar *gray, int width, int height, int h, int band, global long *col,
                        global long *sums)
{
    int b = get_global_id(0);
    int y0 = b * band;
    if (y0 >= height)
        return;
    int y1 = min(y0 + band, height);
    ulong n = (ulong)width * (ulong)height;
    global long *cs = col + (ulong)b * 2 * width, *cq = cs + width;
    for (int x = 0; x < width; x++)
        cs[x] = cq[x] = 0;
    for (int y = max(0, y0 - h); y <= min(height - 1, y0 + h); y++) {
        global const uchar *row = gray + (ulong)y * width;
        for (int x = 0; x < width; x++) {
            long g = row[x];
            cs[x] += g;
            cq[x] += g * g;
        }
    }
    for (int y = y0; y < y1; y++) {
        row_sums(cs, cq, width, h, sums + (ulong)y * width, sums + n + (ulong)y * width);
        int add = y + h + 1, sub = y - h;
        if (add < height) {
            global const uchar *row = gray + (ulong)add * width;
            for (int x = 0; x < width; x++) {
                long g = row[x];
                cs[x] += g;
                cq[x] += g * g;
            }
        }
        if (sub >= 0) {
            global const uchar *row = gray + (ulong)sub * width;
            for (int x = 0; x < width; x++) {
                long g = row[x];
                cs[x] -= g;
                cq[x] -= g * g;
            }
        }
    }
}

/* sliding, pass 2 (GPU): one work-group of SCAN items per row. The column sums
** of the row become prefix sums in place (a local-memory scan per chunk of SCAN),
** then each window sum is a difference of two prefixes. */
kernel void stats_rows_scan(global long *col, int width, int height, int h, global long *sums)
{
    local long ts[SCAN], tq[SCAN];
    int y = get_group_id(0), lid = get_local_id(0);
    if (y >= height)
        return;
    ulong n = (ulong)width * (ulong)height;
    global long *cs = col + (ulong)y * width, *cq = col + n + (ulong)y * width;
    long carry_s = 0, carry_q = 0;
    for (int x0 = 0; x0 < width; x0 += SCAN) {
        int x = x0 + lid;
        ts[lid] = x < width ? cs[x] : 0;
        tq[lid] = x < width ? cq[x] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = 1; off < SCAN; off <<= 1) {
            long as = lid >= off ? ts[lid - off] : 0;
            long aq = lid >= off ? tq[lid - off] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            ts[lid] += as;
            tq[lid] += aq;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (x < width) {
            cs[x] = carry_s + ts[lid];
            cq[x] = carry_q + tq[lid];
        }
        carry_s += ts[SCAN - 1];
        carry_q += tq[SCAN - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    global long *S = sums + (ulong)y * width, *Q = sums + n + (ulong)y * width;
    for (int x = lid; x < width; x += SCAN) {
        int hi = min(x + h, width - 1), lo = x - h - 1;
        S[x] = cs[hi] - (lo >= 0 ? cs[lo] : 0);
        Q[x] = cq[hi] - (lo >= 0 ? cq[lo] : 0);
    }
}

/* global: each work-item loops over its clipped window in global memory. */
kernel void stats_direct_global(global const uchar *gray, int width, int height, int h, global long *sums)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    long s = 0, q = 0;
    int y0 = max(y - h, 0), y1 = min(y + h, height - 1);
    int x0 = max(x - h, 0), x1 = min(x + h, width - 1);
    for (int yy = y0; yy <= y1; yy++)
        for (int xx = x0; xx <= x1; xx++) {
            long g = gray[(ulong)yy * width + xx];
            s += g;
            q += g * g;
        }
    ulong n = (ulong)width * (ulong)height, i = (ulong)y * width + x;
    sums[i] = s;
    sums[n + i] = q;
}

/* global-shared: the TILE×TILE pixels of the work-group come from local memory,
** the rest of each window from global memory. Launched with TILE×TILE groups. */
kernel void stats_direct_global_shared(global const uchar *gray, int width, int height, int h,
                                       global long *sums)
{
    local uchar tile[TILE][TILE];
    int lx = get_local_id(0), ly = get_local_id(1);
    int bx = get_group_id(0) * TILE, by = get_group_id(1) * TILE;
    int x = bx + lx, y = by + ly;
    tile[ly][lx] = (x < width && y < height) ? gray[(ulong)y * width + x] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= width || y >= height)
        return;
    long s = 0, q = 0;
    int y0 = max(y - h, 0), y1 = min(y + h, height - 1);
    int x0 = max(x - h, 0), x1 = min(x + h, width - 1);
    for (int yy = y0; yy <= y1; yy++) {
        int in_rows = yy >= by && yy < by + TILE;
        for (int xx = x0; xx <= x1; xx++) {
            long g = (in_rows && xx >= bx && xx < bx + TILE) ? tile[yy - by][xx - bx]
                                                               : gray[(ulong)yy * width + xx];
            s += g;
            q += g * g;
        }
    }
    ulong n = (ulong)width * (ulong)height, i = (ulong)y * width + x;
    sums[i] = s;
    sums[n + i] = q;
}

/* shared: the window region of the whole work-group is staged through local
** memory one TILE×TILE tile at a time; every pixel read comes from local memory.
** Launched with TILE×TILE groups. */
kernel void stats_direct_shared(global const uchar *gray, int width, int height, int h, global long *sums)
{
    local uchar tile[TILE][TILE];
    int lx = get_local_id(0), ly = get_local_id(1);
    int bx = get_group_id(0) * TILE, by = get_group_id(1) * TILE;
    int x = bx + lx, y = by + ly;
    int y0 = max(y - h, 0), y1 = min(y + h, height - 1);
    int x0 = max(x - h, 0), x1 = min(x + h, width - 1);
    long s = 0, q = 0;
    int ry0 = max(by - h, 0), ry1 = min(by + TILE - 1 + h, height - 1);
    int rx0 = max(bx - h, 0), rx1 = min(bx + TILE - 1 + h, width - 1);
    for (int ty = ry0; ty <= ry1; ty += TILE) {
        for (int tx = rx0; tx <= rx1; tx += TILE) {
            int gx = tx + lx, gy = ty + ly;
            tile[ly][lx] = (gx < width && gy < height) ? gray[(ulong)gy * width + gx] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            /* Fixed TILE x TILE trip counts with a window test per pixel: loops
            ** bounded by the window clipped to the tile read wrong sums on
            ** NVIDIA's OpenCL compiler (driver 580), though not on PoCL. */
            for (int j = 0; j < TILE; j++)
                for (int k = 0; k < TILE; k++) {
                    int yy = ty + j, xx = tx + k;
                    if (yy >= y0 && yy <= y1 && xx >= x0 && xx <= x1) {
                        long g = tile[j][k];
                        s += g;
                        q += g * g;
                    }
                }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    if (x >= width || y >= height)
        return;
    ulong n = (ulong)width * (ulong)height, i = (ulong)y * width + x;
    sums[i] = s;
    sums[n + i] = q;
}
