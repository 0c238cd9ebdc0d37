/*
** dbs.cl — clipping-free DBS halftoning: the initial state and error, and the
** block search of Koge, Ito and Nakano (four parity groups of k x k blocks).
** The model and the rules: docs/dbs.md. The error state is integer (§2) and
** each block is searched in raster order by one work-group, so the result
** does not depend on the device or the work-group size.
**
** State bytes (as algorithms/dbs.h): bit 0 = b (1 = white), bit 1 = frozen.
** The state tile also marks pixels outside the image (bit 2), which are never
** swap partners.
*/
#define WHITE 1
#define FROZEN 2
#define OUTSIDE 4
#define W 4           /* HVS filter radius: 9x9 */
#define TAPS 9
#define CW 8          /* autocorrelation radius: 17x17 */
#define CTAPS 17
#define HALO 9        /* CW + 1: a swap partner is at most one pixel outside the block */

#include "dbs_hash.h"

/* Labels and initial halftone (docs/dbs.md §4): threshold-array minority dots in
** shadows (A < D) and highlights (A > 255 - D), frozen; random dither elsewhere. */
kernel void dbs_init_state(global const uchar *gray, global const uchar *tarray, int m, int w, int h, int d,
                           uint seed, global uchar *state)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    uint i = (uint)y * (uint)w + (uint)x;
    int a = gray[i];
    int level = tarray[(y % m) * m + x % m];
    uchar s;
    if (a < d) {
        s = a > level ? WHITE | FROZEN : 0;
    } else if (a > 255 - d) {
        s = 255 - a > level ? FROZEN : WHITE;
    } else {
        s = db_dbs_hash(i, seed) % 255 < (uint)a ? WHITE : 0;
    }
    state[i] = s;
}

/* e(x) = S_V A(x) - 255 (V*b)(x) on the image grown by W on every side
** (row-major, width w + 2W), where V*b still reaches. */
kernel void dbs_init_e(global const uchar *gray, global const uchar *state, int w, int h, constant int *v, int sv,
                       global int *e)
{
    int ex = get_global_id(0), ey = get_global_id(1);
    int ew = w + 2 * W;
    if (ex >= ew || ey >= h + 2 * W)
        return;
    int x = ex - W, y = ey - W;
    int vb = 0;
    for (int dy = -W; dy <= W; dy++) {
        int yy = y + dy;
        if (yy < 0 || yy >= h)
            continue;
        for (int dx = -W; dx <= W; dx++) {
            int xx = x + dx;
            if (xx >= 0 && xx < w && (state[(size_t)yy * w + xx] & WHITE))
                vb += v[(dy + W) * TAPS + dx + W];
        }
    }
    int a = (x >= 0 && x < w && y >= 0 && y < h) ? gray[(size_t)y * w + x] : 0;
    e[(size_t)ey * ew + ex] = sv * a - 255 * vb;
}

/* C(y) = sum of V(x - y) e(x): the error state of docs/dbs.md §2 (int64). */
kernel void dbs_init_c(global const int *e, int w, int h, constant int *v, global long *c)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    int ew = w + 2 * W;
    long s = 0;
    for (int dy = -W; dy <= W; dy++)
        for (int dx = -W; dx <= W; dx++)
            s += (long)v[(dy + W) * TAPS + dx + W] * e[(size_t)(y + dy + W) * ew + (x + dx + W)];
    c[(size_t)y * w + x] = s;
}

/* Counters of the search (global int): changes, toggles and swaps of the
** current round. Report (global long, the `report` item): rounds, converged,
** toggles, swaps. */
#define C_CHANGES 0
#define C_TOGGLES 1
#define C_SWAPS 2
#define R_ROUNDS 0
#define R_CONVERGED 1
#define R_TOGGLES 2
#define R_SWAPS 3

/* Starts a search: every pixel and block dirty (one work-item a pixel, n of
** them, at least one a block); the first clears the counts. */
kernel void dbs_search_begin(global int *counters, global long *report, global uchar *dirty, ulong n,
                             global uchar *blocks, int nblocks)
{
    size_t i = get_global_id(0);
    if (i < n)
        dirty[i] = 1;
    if (i < (size_t)nblocks)
        blocks[i] = 1;
    if (i == 0)
        for (int j = 0; j < 4; j++) {
            counters[j] = 0;
            report[j] = 0;
        }
}

/* Ends a round: adds its counts to the report, and marks convergence when it
** changed nothing. A round enqueued after convergence (the host reads the flag
** every few rounds) changed nothing either and is not counted. */
kernel void dbs_round_end(global int *counters, global long *report)
{
    if (report[R_CONVERGED])
        return;
    report[R_ROUNDS]++;
    report[R_TOGGLES] += counters[C_TOGGLES];
    report[R_SWAPS] += counters[C_SWAPS];
    if (counters[C_CHANGES] == 0)
        report[R_CONVERGED] = 1;
    for (int i = 0; i < 3; i++)
        counters[i] = 0;
}

/* Swap partners in the order of docs/dbs.md §3. */
constant int partner_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
constant int partner_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

/* One launch per parity group (pr, pc): work-group (gx, gy) searches block
** (2 gx + pc, 2 gy + pr) of side k, visiting each of its pixels once in raster
** order. The work-items share each visit: all of them evaluate the same nine
** candidates from local memory (so they agree without talking) and split the
** update of C. The block's C, `slab` rows at a time with a halo of CW + 1 (C
** goes back to global memory before the next rows come in), and its states
** with a ring of 1 live in local memory; blocks of one group are k >= 20
** apart, so their halos never overlap and no other work-group reads or writes
** them. What a
** change subtracts from C (times a0) over its CBOX square is a table the host
** made once (algorithms/dbs.c: one square for each of the eight swaps and one
** for a toggle), read by all work-items at once.
**
** Visits that cannot change anything are skipped, which leaves the result and
** the counts as they are. A visit reads C and the states of its pixel and of
** the eight around it, and makes no change when the last visit of its pixel
** made none and none of that changed since: the pixel is clean. A change at p
** (and its partner q) writes C within CW of them, so it makes dirty every pixel
** within CW + 1 (DIRTY_HALO of the block). `dirty` holds a flag a pixel between
** searches, and `blocks` one a block (set when any of its pixels may be dirty),
** so that a clean block is not even loaded. Within a search, two bit planes
** over the block and its halo (MARK_WORDS words a row) hold `now`: dirty at
** its visit, and `next`: made dirty by a change at or after its visit (for
** the halo: by any change). With k >= 20 the halos of a group's blocks do not
** meet. */
#define DIRTY_HALO (HALO + 1)
#define MARK_WORDS 3         /* k + 2 DIRTY_HALO <= 96 bits a row */
#define CBOX (CTAPS + 1)     /* C changed by a visit: a CBOX square from min(p, q) - CW */
#define MBOX (CTAPS + 3)     /* pixels made dirty: an MBOX square from min(p, q) - CW - 1 */
#define UPDATE_BATCH 11      /* a GPU work-group's (32) share of a CBOX square */

/* Sets `bits` (at most 32) of a mark row from tile column `col` on. */
static void mark_row(local uint *row, int col, uint bits)
{
    const int word = col / 32, shift = col % 32;
    row[word] |= bits << shift;
    if (shift)
        row[word + 1] |= bits >> (32 - shift);
}

static bool marked(local const uint *plane, int row, int col)
{
    return (plane[row * MARK_WORDS + col / 32] >> (col % 32)) & 1;
}

kernel void dbs_search_group(global uchar *state, global long *c, int w, int h, int k, int pr, int pc,
                             global const long *cvv255, global const long *deltas, global int *counters,
                             local long *ct, local uchar *st, global uchar *dirty, global uchar *blocks, int bcols,
                             int brows, local uint *marks, int slab)
{
    const int lid = get_local_id(0), ls = get_local_size(0);
    const int bx = 2 * (int)get_group_id(0) + pc, by = 2 * (int)get_group_id(1) + pr;
    if (!blocks[by * bcols + bx])
        return;
    const int x0 = bx * k, y0 = by * k;
    const int bw = min(x0 + k, w) - x0, bh = min(y0 + k, h) - y0;
    const int tw = k + 2 * HALO, sw = k + 2, mw = k + 2 * DIRTY_HALO;
    local uint *now = marks, *next = marks + mw * MARK_WORDS;
    for (int i = lid; i < 2 * mw * MARK_WORDS; i += ls)
        marks[i] = 0;
    const int th = slab + 2 * HALO;
    for (int i = lid; i < sw * sw; i += ls) {
        int gy = y0 - 1 + i / sw, gx = x0 - 1 + i % sw;
        st[i] = gx >= 0 && gx < w && gy >= 0 && gy < h ? state[(size_t)gy * w + gx] : OUTSIDE;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < bw * bh; i += ls)
        if (dirty[(size_t)(y0 + i / bw) * w + x0 + i % bw])
            atomic_or(&now[(i / bw + DIRTY_HALO) * MARK_WORDS + (i % bw + DIRTY_HALO) / 32],
                      1u << ((i % bw + DIRTY_HALO) % 32));
    /* Also orders every work-item's read of the block's flag before work-item 0 writes it. */
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const long c0 = cvv255[CW * CTAPS + CW];
    long pk[8];
    for (int j = 0; j < 8; j++)
        pk[j] = 2 * c0 - 2 * cvv255[(CW + partner_dy[j]) * CTAPS + CW + partner_dx[j]];
    int toggles = 0, swaps = 0;
    for (int s0 = 0; s0 < bh; s0 += slab) {
        /* A slab without a dirty pixel changes nothing; the marks it reads
        ** are the same for every work-item. */
        uint any = 0;
        for (int i = (s0 + DIRTY_HALO) * MARK_WORDS; i < (min(s0 + slab, bh) + DIRTY_HALO) * MARK_WORDS; i++)
            any |= now[i];
        if (!any)
            continue;
        /* Orders the last slab's reads of C in local and global memory before
        ** this slab's loads and stores (other work-items' rows). */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        for (int i = lid; i < th * tw; i += ls) {
            int gy = y0 + s0 - HALO + i / tw, gx = x0 - HALO + i % tw;
            ct[i] = gx >= 0 && gx < w && gy >= 0 && gy < h ? c[(size_t)gy * w + gx] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int changes = toggles + swaps;
        for (int y = s0; y < min(s0 + slab, bh); y++)
            for (int x = 0; x < bw; x++) {
                const int si = (y + 1) * sw + x + 1, ci = (y - s0 + HALO) * tw + x + HALO;
                const uchar sp = st[si];
                if ((sp & FROZEN) | !marked(now, y + DIRTY_HALO, x + DIRTY_HALO))
                    continue;
                /* All loads first, so that they overlap: a visit costs their latency. */
                uchar sq[8];
                long cq[8];
                const long cp = ct[ci];
                for (int j = 0; j < 8; j++) {
                    sq[j] = st[si + partner_dy[j] * sw + partner_dx[j]];
                    cq[j] = ct[ci + partner_dy[j] * tw + partner_dx[j]];
                }
                /* a0 = -1 for a white pixel, 1 for a black one; ap = a0 C(p). */
                const bool white = sp & WHITE;
                const long ap = white ? -cp : cp;
                /* The least of the toggle (slot 0) and the swaps (slots 1..8),
                ** the earliest on ties, as a tree: a short chain of dependences. */
                long dv[9];
                int di[9];
                dv[0] = c0 - 2 * ap;
                di[0] = -1;
                for (int j = 0; j < 8; j++) {
                    const bool ok = !(sq[j] & (FROZEN | OUTSIDE)) && (bool)(sq[j] & WHITE) != white;
                    dv[j + 1] = ok ? pk[j] - 2 * (ap - (white ? -cq[j] : cq[j])) : LONG_MAX;
                    di[j + 1] = j;
                }
                for (int step = 1; step < 9; step *= 2)
                    for (int i = 0; i + step < 9; i += 2 * step)
                        if (dv[i + step] < dv[i]) {
                            dv[i] = dv[i + step];
                            di[i] = di[i + step];
                        }
                const long best = dv[0];
                const int bj = di[0];
                if (best >= 0)
                    continue;
                /* Every work-item took the same decision from the same local data. */
                barrier(CLK_LOCAL_MEM_FENCE);
                const int qy = bj < 0 ? y : y + partner_dy[bj], qx = bj < 0 ? x : x + partner_dx[bj];
                const int oy = min(y, qy) - CW - 1, ox = min(x, qx) - CW - 1;
                for (int r = lid; r < MBOX; r += ls) {
                    /* Row oy + r of the box: the block's pixels after this visit
                    ** become dirty now, the rest (before it, or in the halo) next. */
                    const int ty = oy + r;
                    const uint box = (1u << MBOX) - 1;
                    uint later = 0;
                    if (ty >= 0 && ty < bh && ty >= y) {
                        const int from = max(ty == y ? x + 1 : 0, ox), to = min(bw, ox + MBOX);
                        if (from < to)
                            later = ((1u << (to - from)) - 1) << (from - ox);
                    }
                    mark_row(now + (ty + DIRTY_HALO) * MARK_WORDS, ox + DIRTY_HALO, later);
                    mark_row(next + (ty + DIRTY_HALO) * MARK_WORDS, ox + DIRTY_HALO, box & ~later);
                }
                global const long *delta = deltas + (bj < 0 ? 8 : bj) * CBOX * CBOX;
                local long *corner = ct + (oy + 1 - s0 + HALO) * tw + ox + 1 + HALO;
                /* In batches: every load of a batch before its stores, which the
                ** compiler cannot order so itself (it cannot tell they never alias). */
                for (int i0 = lid; i0 < CBOX * CBOX; i0 += ls * UPDATE_BATCH) {
                    long v[UPDATE_BATCH], dlt[UPDATE_BATCH];
                    /* Slots past the square load this work-item's own last entry
                    ** again, never one another work-item stores. */
                    const int last = (CBOX * CBOX - 1 - i0) / ls;
                    for (int m = 0; m < UPDATE_BATCH; m++) {
                        const int i = i0 + min(m, last) * ls;
                        dlt[m] = delta[i];
                        v[m] = corner[i / CBOX * tw + i % CBOX];
                    }
                    for (int m = 0; m < UPDATE_BATCH; m++) {
                        const int i = i0 + m * ls;
                        if (i < CBOX * CBOX)
                            corner[i / CBOX * tw + i % CBOX] = v[m] + (white ? dlt[m] : -dlt[m]);
                    }
                }
                if (lid == 0) {
                    st[si] ^= WHITE;
                    if (bj >= 0)
                        st[(qy + 1) * sw + qx + 1] ^= WHITE;
                }
                if (bj < 0)
                    toggles++;
                else
                    swaps++;
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        if (toggles + swaps > changes)
            for (int i = lid; i < th * tw; i += ls) {
                int gy = y0 + s0 - HALO + i / tw, gx = x0 - HALO + i % tw;
                if (gx >= 0 && gx < w && gy >= 0 && gy < h)
                    c[(size_t)gy * w + gx] = ct[i];
            }
    }
    /* The block's own flags always (its clean pixels become clean), the halo's
    ** only where a change set them. */
    for (int i = lid; i < mw * mw; i += ls) {
        int my = i / mw - DIRTY_HALO, mx = i % mw - DIRTY_HALO, gy = y0 + my, gx = x0 + mx;
        if (gx < 0 || gx >= w || gy < 0 || gy >= h)
            continue;
        bool again = marked(next, i / mw, i % mw);
        if (my >= 0 && my < bh && mx >= 0 && mx < bw)
            dirty[(size_t)gy * w + gx] = again;
        else if (again)
            dirty[(size_t)gy * w + gx] = 1;
    }
    if (toggles + swaps == 0) {
        if (lid == 0)
            blocks[by * bcols + bx] = 0;
        return;
    }
    if (lid == 0)
        for (int ny = max(by - 1, 0); ny <= min(by + 1, brows - 1); ny++)
            for (int nx = max(bx - 1, 0); nx <= min(bx + 1, bcols - 1); nx++)
                blocks[ny * bcols + nx] = 1;
    for (int i = lid; i < sw * sw; i += ls) {
        int gy = y0 - 1 + i / sw, gx = x0 - 1 + i % sw;
        if (gx >= 0 && gx < w && gy >= 0 && gy < h)
            state[(size_t)gy * w + gx] = st[i];
    }
    if (lid == 0) {
        atomic_add(&counters[C_CHANGES], toggles + swaps);
        atomic_add(&counters[C_TOGGLES], toggles);
        atomic_add(&counters[C_SWAPS], swaps);
    }
}

/* The halftone: 255 where b = 1. */
kernel void dbs_output(global const uchar *state, ulong n, global uchar *out)
{
    ulong i = get_global_id(0);
    if (i < n)
        out[i] = (state[i] & WHITE) ? 255 : 0;
}
