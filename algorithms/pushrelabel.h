/*
** pushrelabel.h — minimum s-t cuts on the 4-connected grid on an OpenCL device:
** synchronous push-relabel with global relabels (docs/howe.md, "The solvers").
**
** The graph is the one of algorithms/maxflow.h (per-node t-link capacities to
** the source and the sink, symmetric links to the right and lower neighbours,
** int32 in raster order), held in device buffers. The cut is canonical: a node
** is on the sink side iff it can reach the sink in the final residual graph,
** so it equals the Boykov-Kolmogorov cut of the cpu role node for node. Calls
** are made from a stage implementation and enqueue on that stage's device.
*/
#ifndef DB_PUSHRELABEL_H
#define DB_PUSHRELABEL_H

#include "runtime/stage.h"

/* How often exact heights are recomputed by a search from the sink (the names
** of Westphal et al. 2018): never during the run, once before the first push,
** every 8 push/relabel iterations, or at intervals doubling from 8 (with the
** TILES kernels from 128 in a solve after a raise, and also as soon as the
** number of active nodes stops falling).
** A search also runs whenever no node looks active, to prove it, and the last
** search of the cut always runs, so the choice changes speed, never the cut. */
typedef enum db_relabel {
    DB_RELABEL_NONE,
    DB_RELABEL_INITIAL,
    DB_RELABEL_FIXED,
    DB_RELABEL_EXPONENTIAL,
    DB_RELABEL_COUNT
} db_relabel;

/* The strategies' names, in enum order (parameter values of `relabel`). */
extern const char *const db_relabel_names[DB_RELABEL_COUNT];

/* Which kernels run the push/relabel rounds and the searches from the sink.
** GLOBAL: every round and relaxation sweep over all nodes in global memory
** (lock-free, Hong & He), the right shape for a CPU device, which runs a
** work-group's items one after another. TILES: each work-group runs many
** rounds on a 32x32 tile in local memory per launch (block-local, as in
** JF-Cut and Vineet-Narayanan), and searches from the sink on 64x64 blocks,
** far fewer global round trips on a GPU.
** The default follows the device type; the environment variable
** DOCBIN_PUSHRELABEL=global|tiles forces one (tests run both on PoCL, the
** bench compares them). Either gives the same cut and flow. */
typedef enum db_pr_kernels {
    DB_PR_GLOBAL,
    DB_PR_TILES,
    DB_PR_KERNELS_COUNT
} db_pr_kernels;

/* The kernel choices' names, in enum order (values of DOCBIN_PUSHRELABEL). */
extern const char *const db_pr_kernels_names[DB_PR_KERNELS_COUNT];

/* A push-relabel solve in progress on one stage's device. Fields are private. */
typedef struct db_pr_cut {
    db_stage_run *run;
    cl_int rows, cols, n, hmax;
    db_relabel strategy;
    db_pr_kernels kernels;
    cl_int tiles_x, tiles_y, tiles;     /* tiles of the TILES kernels across, down, in all */
    cl_int blocks_x, blocks_y, blocks;  /* TILES: search blocks (pr_block_bfs) across, down, in all */
    cl_mem right, down;                 /* original link capacities (raises test them) */
    cl_mem res, rt, excess, height;     /* residuals N/S/W/E per node, to the sink; excess; heights */
    cl_mem counter, base, partial;
    cl_mem incoming;                    /* TILES: pushes over tile borders not yet added (zero between solves) */
    cl_mem wake, bfs_wake;              /* TILES: per tile / search block, the last launch that must run it */
    cl_mem bfs_changed;                 /* TILES: 1 + the index of the last search launch that lowered a height */
    int warm;                           /* the links were raised since the last restart: solves are warm */
    int exact;                          /* heights are exact distances (a global relabel ran since the last change) */
    long iterations;                    /* push/relabel iterations so far, over every solve */
    cl_int launches;                    /* push launches so far (TILES: their index and parity) */
    cl_int bfs_launches;                /* TILES: search launches so far (their index) */
    cl_kernel fill, bfs_init, bfs_sweeps, cycles, count, raise, tile_push, tile_settle, block_bfs;
} db_pr_cut;

/* Starts a cut of the rows x cols grid whose capacities are in the given device
** buffers (rows*cols int32 each; the links of the last column and row are
** ignored). Sends what both t-links of a node share straight through it. The
** buffers must outlive the cut; scratch memory comes from the stage. Picks
** the kernels (db_pr_kernels); a bad DOCBIN_PUSHRELABEL is an error. */
db_status db_pr_cut_begin(db_pr_cut *pr, db_stage_run *run, int rows, int cols, cl_mem source, cl_mem sink,
                          cl_mem right, cl_mem down, db_relabel strategy);

/* Starts a new cut on the same grid and buffers: t-links from `source` and
** `sink`, links from the `right` and `down` buffers given to db_pr_cut_begin
** (their contents may have changed), with no scratch memory of its own: the
** cuts of a stage that cuts several graphs in turn share one db_pr_cut. */
db_status db_pr_cut_restart(db_pr_cut *pr, cl_mem source, cl_mem sink);

/* Runs push-relabel until no node with excess can reach the sink (a maximum
** preflow): it stops only when, right after an exact search from the sink, no
** node with excess is below hmax, so the result does not rest on the heights
** the rounds left. After db_pr_cut_raise_links it resumes from the current flow. */
db_status db_pr_cut_solve(db_pr_cut *pr);

/* Adds deltas[first + r / band_rows] (each >= 0; `deltas` a device buffer of
** int32) to both arcs of every link of positive capacity in row r: the flow
** stays feasible, so the next solve is warm (docs/howe.md, "Warm chains").
** Bands of rows are graphs stacked with no link between them (one band: all
** rows). */
db_status db_pr_cut_raise_links(db_pr_cut *pr, cl_mem deltas, cl_int first, cl_int band_rows);

/* Writes the sink side, rows*cols bytes: 1 for the nodes that can reach the
** sink in the residual graph, 0 for the others (one last global relabel makes
** the heights exact first). Call after db_pr_cut_solve. */
db_status db_pr_cut_sink_side(db_pr_cut *pr, cl_mem out);

/* Sets bit `bit` (0..63) of each node's word in `bits` (rows*cols uint64) to
** its sink side, keeping the other bits: a chain of warm solves records every
** cut in one buffer. Call after db_pr_cut_solve. */
db_status db_pr_cut_sink_bits(db_pr_cut *pr, cl_mem bits, cl_int bit);

/* Writes the flow value (int64) into `out` at element `index`. */
db_status db_pr_cut_flow(db_pr_cut *pr, cl_mem out, cl_int index);

#endif
