/*
** maxflow.h — minimum s-t cuts on the 4-connected grid (Howe's graph cut).
**
** Nodes are the cells of a rows x cols grid; every node has a t-link to the
** source and one to the sink, and symmetric n-links to its right and lower
** neighbours. Capacities are integers (docs/howe.md §§3, 5), so every
** max-flow implementation cuts the same graph. The cut reported is canonical:
** a node is on the sink side (ink) iff it can reach the sink in the final
** residual graph, which is the same set for every maximum flow, so the CPU
** (Boykov-Kolmogorov) and GPU (push-relabel) solvers label identically.
*/
#ifndef DB_MAXFLOW_H
#define DB_MAXFLOW_H

#include <stdint.h>
#include "runtime/error.h"

/* A grid graph with the Boykov-Kolmogorov search trees kept between solves. */
typedef struct db_grid_cut db_grid_cut;

/* Creates the graph. Arrays hold rows*cols entries in raster order:
** source[i], sink[i] = t-link capacities (>= 0); right[i] = capacity of the
** link (r,c)-(r,c+1) (ignored in the last column), down[i] = capacity of
** (r,c)-(r+1,c) (ignored in the last row); both directions get that capacity.
** The arrays are copied. */
db_status db_grid_cut_new(int rows, int cols, const int32_t *source, const int32_t *sink, const int32_t *right,
                          const int32_t *down, db_grid_cut **out);

/* Frees the graph. NULL is allowed. */
void db_grid_cut_free(db_grid_cut *g);

/* Computes a maximum flow (Boykov-Kolmogorov on the implicit grid) and returns
** its value. Calling it again after db_grid_cut_raise_links resumes from the
** current flow and search trees (warm start) instead of starting over. */
int64_t db_grid_cut_solve(db_grid_cut *g);

/* Adds `delta` (>= 0) to the capacity of every n-link whose capacity is
** positive, in both directions; the current flow stays feasible. */
void db_grid_cut_raise_links(db_grid_cut *g, int32_t delta);

/* The search steps of the solves so far: growth steps plus the steps of the
** walks that check an orphan's candidate parents reach the terminal. The
** solve's time follows them more closely than the page's pixels (the cut
** costs 200 to 460 ns a pixel over the DIBCO pages), so the planner predicts
** the cut from them (db_stage.work; bench/results/planner-h100.md). */
int64_t db_grid_cut_steps(const db_grid_cut *g);

/* Writes 1 for nodes that can reach the sink in the residual graph (ink),
** 0 for the others, rows*cols bytes. Call after db_grid_cut_solve. */
void db_grid_cut_labels(const db_grid_cut *g, uint8_t *sink_side);

#endif
