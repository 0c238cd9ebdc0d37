/*
** reference_maxflow.h — a simple maximum-flow reference for the tests (Dinic's
** algorithm on an explicit graph), and the canonical cut: the nodes that can
** reach the sink in the final residual graph (docs/howe.md §6).
*/
#ifndef DB_TESTS_REFERENCE_MAXFLOW_H
#define DB_TESTS_REFERENCE_MAXFLOW_H

#include <stdint.h>

/* Max flow of the grid graph described as in algorithms/maxflow.h (same array
** conventions: source, sink, right, down; rows*cols entries). Writes the
** canonical sink side into sink_side (1 = reaches the sink) and returns the flow
** value. Returns -1 on allocation failure. */
int64_t ref_grid_maxflow(int rows, int cols, const int32_t *source, const int32_t *sink, const int32_t *right,
                         const int32_t *down, uint8_t *sink_side);

#endif
