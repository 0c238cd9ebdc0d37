/*
** pushrelabel.c — the host side of the grid push-relabel cut (kernels in
** cl/pushrelabel.cl). Each launch runs several rounds on the device (over all
** nodes in global memory, or per tile in local memory), and the host reads a
** counter after each batch of launches, so a solve costs few launches and
** synchronisations; the cut does not depend on the order work-items ran in.
*/
#include <stdlib.h>
#include <string.h>
#include "algorithms/pushrelabel.h"

const char *const db_relabel_names[DB_RELABEL_COUNT] = {"none", "initial", "fixed", "exponential"};
const char *const db_pr_kernels_names[DB_PR_KERNELS_COUNT] = {"global", "tiles"};

/* Push-relabel cycles, and relaxation sweeps of a global relabel, per launch.
** A CPU device runs a work-group's work-items one after another, so a node's
** later cycles would see no change from its neighbours there: one cycle per
** launch. */
#define ROUND 8
#define SWEEPS 16

/* Launches between two reads of a flag grow 1, 2, 4 .. MAX_BATCH: each read
** drains the queue (tens of microseconds on a discrete GPU), while a launch
** past convergence finds nothing to do and costs a few. */
#define MAX_BATCH 8
/* The blocks' searches start with 4 launches (on DIBCO pages most searches
** take 7 to 63) and grow their batches further: a launch past convergence
** there only reads one int per block, all blocks being asleep. */
#define FIRST_BFS_BATCH 4
#define MAX_BFS_BATCH 32

static cl_int cycles_per_launch(const db_pr_cut *pr)
{
    return db_stage_device(pr->run)->info.type & CL_DEVICE_TYPE_CPU ? 1 : ROUND;
}
/* The TILES kernels' tile and work-group (TILE_W, TILE_H, ITEMS_W, ITEMS_H in
** cl/pushrelabel.cl: the kernels require this work-group size, four nodes a
** work-item) and its incoming slots, one per border arc. */
#define TILE_W 32
#define TILE_H 32
#define ITEMS_W 16
#define ITEMS_H 16
#define TILE_SLOTS (2 * (TILE_W + TILE_H))
/* Push/relabel rounds of one tile per launch: enough to carry flow across a
** tile; a tile stops early when it has nothing to do, so the bound only caps
** tiles whose excess climbs (it cannot reach the sink), and a lower one lets
** the next search from the sink come sooner. On an H100, tiles of 32x32 nodes
** and 32 rounds cut an A4 page in 24% less time than 16x16 tiles and 64
** rounds (bench/results/howe-h100.md). */
#define TILE_ROUNDS 32
/* The first interval between searches in a solve that follows a raise of the
** links (a warm solve), in iterations: four push launches of tiles. Such a
** solve starts from exact heights and the flow of the cut before, so it has
** little flow left to move, and a search after every launch, as a cold solve
** wants, costs more than it saves. */
#define WARM_INTERVAL (4 * TILE_ROUNDS)
/* The search blocks of the TILES kernels (BFS_W, BFS_H, BFS_ITEMS in
** cl/pushrelabel.cl: the work-group size pr_block_bfs requires), and their
** relaxation rounds per launch. A launch lasts as long as its slowest block,
** and a distance crosses a block in a few rounds (each round carries it along
** a whole strip of 16 nodes), so a low cap ends launches sooner and lets the
** neighbours see new halos: 16 rounds searched the slowest DIBCO pages in
** 30% less time than 64 on an H100 (bench/results/howe-h100.md). */
#define BFS_W 64
#define BFS_H 64
#define BFS_ITEMS 256
#define BFS_ROUNDS 16

/* Work-group size of the flow reduction, and its number of groups. */
#define GROUP 256
#define PARTS 256
/* A bound far above what a grid needs (heights grow by one per iteration at
** worst, and global relabels cut that short); reaching it is reported. */
#define MAX_ITERATIONS 100000000L

static db_status launch(db_pr_cut *pr, cl_kernel k, size_t global)
{
    const size_t local = GROUP;
    return db_stage_launch(pr->run, k, 1, &global, &local);
}

/* A launch of a TILES kernel: one work-group per tile. */
static db_status launch_tiles(db_pr_cut *pr, cl_kernel k)
{
    const size_t global[2] = {(size_t)pr->tiles_x * ITEMS_W, (size_t)pr->tiles_y * ITEMS_H};
    const size_t local[2] = {ITEMS_W, ITEMS_H};
    return db_stage_launch(pr->run, k, 2, global, local);
}

/* A launch of pr_block_bfs: one work-group per search block. */
static db_status launch_blocks(db_pr_cut *pr, cl_kernel k)
{
    const size_t rows_of_items = BFS_ITEMS / BFS_W;
    const size_t global[2] = {(size_t)pr->blocks_x * BFS_W, (size_t)pr->blocks_y * rows_of_items};
    const size_t local[2] = {BFS_W, rows_of_items};
    return db_stage_launch(pr->run, k, 2, global, local);
}

static db_status fill(db_pr_cut *pr, cl_mem buf, cl_int count, cl_int value)
{
    db_status st = db_stage_args(pr->run, pr->fill, 3, sizeof buf, &buf, sizeof count, &count, sizeof value, &value);
    return st == DB_OK ? launch(pr, pr->fill, (size_t)count) : st;
}

/* Exact distances to the sink (a breadth-first search over reverse residual
** arcs, done as relaxation): launches of SWEEPS rounds (or of block-local
** rounds) in growing batches, a read of the "changed" flag after each batch,
** until a launch changes nothing. With TILES, the incoming slots must be
** empty (folded by settle()), or the search would miss residual arcs. */
static db_status global_relabel(db_pr_cut *pr)
{
    db_stage_run *run = pr->run;
    int tiles = pr->kernels == DB_PR_TILES;
    cl_int sweeps = tiles ? BFS_ROUNDS : cycles_per_launch(pr) == 1 ? 1 : SWEEPS;
    cl_kernel k = tiles ? pr->block_bfs : pr->bfs_sweeps;
    cl_int max_batch = tiles ? MAX_BFS_BATCH : MAX_BATCH;
    db_status st = db_stage_args(run, pr->bfs_init, 4, sizeof pr->rt, &pr->rt, sizeof pr->n, &pr->n,
                                 sizeof pr->hmax, &pr->hmax, sizeof pr->height, &pr->height);
    if (st == DB_OK)
        st = launch(pr, pr->bfs_init, (size_t)pr->n);
    /* Every block runs the first launch. */
    if (st == DB_OK && tiles)
        st = fill(pr, pr->bfs_wake, pr->blocks, pr->bfs_launches);
    else if (st == DB_OK)
        st = db_stage_args(run, k, 6, sizeof pr->res, &pr->res, sizeof pr->rows, &pr->rows, sizeof pr->cols,
                           &pr->cols, sizeof sweeps, &sweeps, sizeof pr->height, &pr->height, sizeof pr->counter,
                           &pr->counter);
    /* The non-tile counter is cleared before the last launch of a batch only,
    ** so it says whether that launch changed anything; the blocks' flag holds
    ** the stamp of the last launch that changed something, plus one. */
    cl_int batch = tiles ? FIRST_BFS_BATCH : 1;
    for (cl_int changed = 1; st == DB_OK && changed; batch = batch < max_batch ? 2 * batch : batch) {
        cl_int stamp = 0;
        for (cl_int b = 0; b < batch && st == DB_OK; b++) {
            if (tiles) {
                stamp = pr->bfs_launches++;
                st = db_stage_args(run, k, 9, sizeof pr->res, &pr->res, sizeof pr->rows, &pr->rows, sizeof pr->cols,
                                   &pr->cols, sizeof pr->hmax, &pr->hmax, sizeof sweeps, &sweeps, sizeof pr->height,
                                   &pr->height, sizeof pr->bfs_changed, &pr->bfs_changed, sizeof pr->bfs_wake,
                                   &pr->bfs_wake, sizeof stamp, &stamp);
                st = st == DB_OK ? launch_blocks(pr, k) : st;
            } else {
                if (b == batch - 1)
                    st = fill(pr, pr->counter, 1, 0);
                st = st == DB_OK ? launch(pr, k, (size_t)pr->n) : st;
            }
        }
        cl_mem flag = tiles ? pr->bfs_changed : pr->counter;
        if (st != DB_OK || (st = db_stage_read(run, flag, 0, sizeof changed, &changed)) != DB_OK)
            return st;
        if (tiles)
            changed = changed == stamp + 1;
    }
    /* New heights: every tile may have work. */
    if (st == DB_OK && tiles)
        st = fill(pr, pr->wake, pr->tiles, pr->launches);
    if (st == DB_OK)
        pr->exact = 1;
    return st;
}

/* The kernels for this device, or those DOCBIN_PUSHRELABEL names. */
static db_status choose_kernels(db_pr_cut *pr)
{
    const char *env = getenv("DOCBIN_PUSHRELABEL");
    if (!env || !*env) {
        pr->kernels = db_stage_device(pr->run)->info.type & CL_DEVICE_TYPE_CPU ? DB_PR_GLOBAL : DB_PR_TILES;
        return DB_OK;
    }
    for (int k = 0; k < DB_PR_KERNELS_COUNT; k++)
        if (strcmp(env, db_pr_kernels_names[k]) == 0) {
            pr->kernels = (db_pr_kernels)k;
            return DB_OK;
        }
    return db_fail(DB_ERR_USAGE, "DOCBIN_PUSHRELABEL='%s' is not a push-relabel kernel choice: set it to 'global' "
                   "or 'tiles', or unset it to choose by device type", env);
}

db_status db_pr_cut_begin(db_pr_cut *pr, db_stage_run *run, int rows, int cols, cl_mem source, cl_mem sink,
                          cl_mem right, cl_mem down, db_relabel strategy)
{
    *pr = (db_pr_cut){.run = run, .rows = rows, .cols = cols, .strategy = strategy, .right = right, .down = down};
    db_status st = choose_kernels(pr);
    if (st != DB_OK)
        return st;
    pr->n = rows * cols;
    /* A path to the sink visits each node at most once: distances are <= n. */
    pr->hmax = pr->n + 1;
    pr->tiles_x = (cols + TILE_W - 1) / TILE_W;
    pr->tiles_y = (rows + TILE_H - 1) / TILE_H;
    pr->tiles = pr->tiles_x * pr->tiles_y;
    pr->blocks_x = (cols + BFS_W - 1) / BFS_W;
    pr->blocks_y = (rows + BFS_H - 1) / BFS_H;
    pr->blocks = pr->blocks_x * pr->blocks_y;
    size_t n = (size_t)pr->n, slots = 2 * (size_t)pr->tiles_x * (size_t)pr->tiles_y * TILE_SLOTS;
    pr->res = db_stage_scratch(run, 4 * n * sizeof(cl_int));
    pr->rt = db_stage_scratch(run, n * sizeof(cl_int));
    pr->excess = db_stage_scratch(run, n * sizeof(cl_int));
    pr->height = db_stage_scratch(run, n * sizeof(cl_int));
    pr->counter = db_stage_scratch(run, sizeof(cl_int));
    pr->base = db_stage_scratch(run, n * sizeof(cl_long));
    pr->partial = db_stage_scratch(run, PARTS * sizeof(cl_long));
    pr->fill = db_stage_kernel(run, "pushrelabel.cl", "pr_fill");
    pr->bfs_init = db_stage_kernel(run, "pushrelabel.cl", "pr_bfs_init");
    pr->count = db_stage_kernel(run, "pushrelabel.cl", "pr_count_active");
    pr->raise = db_stage_kernel(run, "pushrelabel.cl", "pr_raise");
    if (!pr->res || !pr->rt || !pr->excess || !pr->height || !pr->counter || !pr->base || !pr->partial || !pr->fill ||
        !pr->bfs_init || !pr->count || !pr->raise)
        return db_error_status();
    if (pr->kernels == DB_PR_TILES) {
        pr->incoming = db_stage_scratch(run, slots * sizeof(cl_int));
        pr->wake = db_stage_scratch(run, (size_t)pr->tiles * sizeof(cl_int));
        pr->bfs_wake = db_stage_scratch(run, (size_t)pr->blocks * sizeof(cl_int));
        pr->bfs_changed = db_stage_scratch(run, sizeof(cl_int));
        pr->tile_push = db_stage_kernel(run, "pushrelabel.cl", "pr_tile_push");
        pr->tile_settle = db_stage_kernel(run, "pushrelabel.cl", "pr_tile_settle");
        pr->block_bfs = db_stage_kernel(run, "pushrelabel.cl", "pr_block_bfs");
        if (!pr->incoming || !pr->wake || !pr->bfs_wake || !pr->bfs_changed || !pr->tile_push || !pr->tile_settle ||
            !pr->block_bfs)
            return db_error_status();
        if ((st = fill(pr, pr->incoming, (cl_int)slots, 0)) != DB_OK ||
            (st = fill(pr, pr->bfs_changed, 1, 0)) != DB_OK)
            return st;
    } else {
        pr->bfs_sweeps = db_stage_kernel(run, "pushrelabel.cl", "pr_bfs_sweeps");
        pr->cycles = db_stage_kernel(run, "pushrelabel.cl", "pr_cycles");
        if (!pr->bfs_sweeps || !pr->cycles)
            return db_error_status();
    }
    return db_pr_cut_restart(pr, source, sink);
}

db_status db_pr_cut_restart(db_pr_cut *pr, cl_mem source, cl_mem sink)
{
    db_stage_run *run = pr->run;
    cl_kernel init = db_stage_kernel(run, "pushrelabel.cl", "pr_init");
    if (!init)
        return db_error_status();
    /* The incoming slots are empty after a solve; every tile runs the next launch. */
    db_status st = pr->kernels == DB_PR_TILES ? fill(pr, pr->wake, pr->tiles, pr->launches) : DB_OK;
    if (st == DB_OK)
        st = db_stage_args(run, init, 10, sizeof source, &source, sizeof sink, &sink, sizeof pr->right, &pr->right,
                           sizeof pr->down, &pr->down, sizeof pr->rows, &pr->rows, sizeof pr->cols, &pr->cols,
                           sizeof pr->excess, &pr->excess, sizeof pr->rt, &pr->rt, sizeof pr->res, &pr->res,
                           sizeof pr->base, &pr->base);
    if (st == DB_OK)
        st = launch(pr, init, (size_t)pr->n);
    pr->exact = 0;
    pr->warm = 0;
    if (st == DB_OK)
        st = pr->strategy == DB_RELABEL_NONE ? fill(pr, pr->height, pr->n, 0) : global_relabel(pr);
    return st;
}

/* Enqueues one launch of push/relabel rounds (`rounds` of them). */
static db_status push_launch(db_pr_cut *pr, cl_int rounds)
{
    db_stage_run *run = pr->run;
    db_status st;
    if (pr->kernels == DB_PR_TILES) {
        cl_int parity = (cl_int)(pr->launches & 1), stamp = (cl_int)pr->launches;
        st = db_stage_args(run, pr->tile_push, 12, sizeof pr->excess, &pr->excess, sizeof pr->height, &pr->height,
                           sizeof pr->res, &pr->res, sizeof pr->rt, &pr->rt, sizeof pr->incoming, &pr->incoming,
                           sizeof pr->rows, &pr->rows, sizeof pr->cols, &pr->cols, sizeof pr->hmax, &pr->hmax,
                           sizeof rounds, &rounds, sizeof parity, &parity, sizeof pr->wake, &pr->wake, sizeof stamp,
                           &stamp);
        st = st == DB_OK ? launch_tiles(pr, pr->tile_push) : st;
    } else {
        st = db_stage_args(run, pr->cycles, 8, sizeof pr->excess, &pr->excess, sizeof pr->height, &pr->height,
                           sizeof pr->res, &pr->res, sizeof pr->rt, &pr->rt, sizeof pr->rows, &pr->rows,
                           sizeof pr->cols, &pr->cols, sizeof pr->hmax, &pr->hmax, sizeof rounds, &rounds);
        st = st == DB_OK ? launch(pr, pr->cycles, (size_t)pr->n) : st;
    }
    pr->iterations += rounds;
    pr->launches++;
    return st;
}

/* Reads the number of nodes with excess below hmax. With TILES it first folds
** the incoming slots (pr_tile_settle), so excess and residuals are whole. */
static db_status count_active(db_pr_cut *pr, cl_int *active)
{
    db_stage_run *run = pr->run;
    db_status st = fill(pr, pr->counter, 1, 0);
    if (st == DB_OK && pr->kernels == DB_PR_TILES) {
        cl_int stamp = (cl_int)pr->launches;
        st = db_stage_args(run, pr->tile_settle, 10, sizeof pr->excess, &pr->excess, sizeof pr->height, &pr->height,
                           sizeof pr->res, &pr->res, sizeof pr->incoming, &pr->incoming, sizeof pr->rows, &pr->rows,
                           sizeof pr->cols, &pr->cols, sizeof pr->hmax, &pr->hmax, sizeof pr->counter,
                           &pr->counter, sizeof pr->wake, &pr->wake, sizeof stamp, &stamp);
        st = st == DB_OK ? launch_tiles(pr, pr->tile_settle) : st;
    } else if (st == DB_OK) {
        st = db_stage_args(run, pr->count, 5, sizeof pr->excess, &pr->excess, sizeof pr->height, &pr->height,
                           sizeof pr->n, &pr->n, sizeof pr->hmax, &pr->hmax, sizeof pr->counter, &pr->counter);
        st = st == DB_OK ? launch(pr, pr->count, (size_t)pr->n) : st;
    }
    return st == DB_OK ? db_stage_read(run, pr->counter, 0, sizeof *active, active) : st;
}

db_status db_pr_cut_solve(db_pr_cut *pr)
{
    db_stage_run *run = pr->run;
    int tiles = pr->kernels == DB_PR_TILES;
    /* `fixed` relabels after every ROUND iterations: tiles run ROUND rounds a launch then. */
    cl_int rounds = !tiles ? cycles_per_launch(pr) : pr->strategy == DB_RELABEL_FIXED ? ROUND : TILE_ROUNDS;
    long start = pr->iterations, interval = tiles && pr->warm ? WARM_INTERVAL : ROUND;
    long next_relabel = pr->iterations + interval;
    /* `fixed` reads after every launch. */
    int batch = 1, max_batch = pr->strategy == DB_RELABEL_FIXED ? 1 : MAX_BATCH;
    cl_int previous = -1;
    for (;;) {
        db_status st = DB_OK;
        for (int b = 0; b < batch && st == DB_OK; b++)
            st = push_launch(pr, rounds);
        cl_int active = 0;
        if (st != DB_OK || (st = count_active(pr, &active)) != DB_OK)
            return st;
        pr->exact = 0;
        if (active == 0) {
            /* The heights the rounds left may be wrong (stale between tiles,
            ** or a node lifted to hmax before a neighbour opened an arc to
            ** it): only exact distances prove that no excess can reach the
            ** sink. Otherwise go on from them. */
            if ((st = global_relabel(pr)) != DB_OK || (st = count_active(pr, &active)) != DB_OK)
                return st;
            if (active == 0)
                return DB_OK;
            next_relabel = pr->iterations + interval;
            batch = 1;
            previous = -1;
            continue;
        }
        if (pr->iterations - start >= MAX_ITERATIONS)
            return db_fail(DB_ERR_CL, "graph cut: push-relabel did not finish within %ld iterations on %s device '%s'",
                           MAX_ITERATIONS, db_role_name(db_stage_device(run)->role), db_stage_device(run)->info.name);
        batch = batch < max_batch ? 2 * batch : batch;
        /* Tiles see their neighbours' heights only at the start of a launch,
        ** so excess that can no longer reach the sink climbs slowly where it
        ** crosses tile borders and stays active for many launches; the
        ** active count stops falling then. `exponential` does not wait for
        ** its next interval in that case. */
        int stalled = tiles && pr->strategy == DB_RELABEL_EXPONENTIAL && previous >= 0 && active >= previous;
        previous = active;
        if (stalled || (pr->strategy == DB_RELABEL_FIXED && pr->iterations % ROUND == 0) ||
            (pr->strategy == DB_RELABEL_EXPONENTIAL && pr->iterations >= next_relabel)) {
            if ((st = global_relabel(pr)) != DB_OK)
                return st;
            /* Doubling stops at the iteration cap: a longer interval never comes due. */
            interval = interval < MAX_ITERATIONS ? 2 * interval : interval;
            next_relabel = pr->iterations + interval;
            batch = 1;
            previous = -1;
        }
    }
}

db_status db_pr_cut_raise_links(db_pr_cut *pr, cl_mem deltas, cl_int first, cl_int band_rows)
{
    db_status st = db_stage_args(pr->run, pr->raise, 8, sizeof pr->right, &pr->right, sizeof pr->down, &pr->down,
                                 sizeof pr->rows, &pr->rows, sizeof pr->cols, &pr->cols, sizeof deltas, &deltas,
                                 sizeof first, &first, sizeof band_rows, &band_rows, sizeof pr->res, &pr->res);
    if (st == DB_OK)
        st = launch(pr, pr->raise, (size_t)pr->n);
    /* Opened arcs may leave heights invalid, and nodes at hmax may reach the
    ** sink again: start from exact distances (docs/howe.md, "Warm chains"). */
    if (st == DB_OK)
        st = global_relabel(pr);
    pr->warm = 1;
    return st;
}

db_status db_pr_cut_sink_side(db_pr_cut *pr, cl_mem out)
{
    cl_kernel k = db_stage_kernel(pr->run, "pushrelabel.cl", "pr_sink_side");
    if (!k)
        return db_error_status();
    db_status st = pr->exact ? DB_OK : global_relabel(pr);
    cl_mem h = pr->height;
    if (st == DB_OK)
        st = db_stage_args(pr->run, k, 4, sizeof h, &h, sizeof pr->n, &pr->n, sizeof pr->hmax, &pr->hmax,
                           sizeof out, &out);
    return st == DB_OK ? launch(pr, k, (size_t)pr->n) : st;
}

db_status db_pr_cut_sink_bits(db_pr_cut *pr, cl_mem bits, cl_int bit)
{
    cl_kernel k = db_stage_kernel(pr->run, "pushrelabel.cl", "pr_sink_bits");
    if (!k)
        return db_error_status();
    db_status st = pr->exact ? DB_OK : global_relabel(pr);
    cl_mem h = pr->height;
    if (st == DB_OK)
        st = db_stage_args(pr->run, k, 5, sizeof h, &h, sizeof pr->n, &pr->n, sizeof pr->hmax, &pr->hmax, sizeof bit,
                           &bit, sizeof bits, &bits);
    return st == DB_OK ? launch(pr, k, (size_t)pr->n) : st;
}

db_status db_pr_cut_flow(db_pr_cut *pr, cl_mem out, cl_int index)
{
    cl_kernel partial = db_stage_kernel(pr->run, "pushrelabel.cl", "pr_flow_partial");
    cl_kernel final = db_stage_kernel(pr->run, "pushrelabel.cl", "pr_flow_final");
    if (!partial || !final)
        return db_error_status();
    cl_int parts = PARTS;
    const size_t one = 1;
    db_status st = db_stage_args(pr->run, partial, 4, sizeof pr->base, &pr->base, sizeof pr->rt, &pr->rt,
                                 sizeof pr->n, &pr->n, sizeof pr->partial, &pr->partial);
    if (st == DB_OK)
        st = launch(pr, partial, (size_t)PARTS * GROUP);
    if (st == DB_OK)
        st = db_stage_args(pr->run, final, 4, sizeof pr->partial, &pr->partial, sizeof parts, &parts, sizeof index,
                           &index, sizeof out, &out);
    if (st == DB_OK)
        st = db_stage_launch(pr->run, final, 1, &one, NULL);
    return st;
}
