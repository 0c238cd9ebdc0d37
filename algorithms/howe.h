/*
** howe.h — what Howe's three algorithms share: `howe` (fixed parameters),
** `howe-auto` (the tuning searches, algorithms/howe_tune.c) and `howe-predict`
** (parameters predicted from image features, algorithms/howe_features.c).
** Their stages build the same integer graph and cut it the same way, so a
** tuned or predicted (thi, c) gives exactly the image `howe` gives for it.
*/
#ifndef DB_HOWE_H
#define DB_HOWE_H

#include <stdbool.h>
#include <stdint.h>
#include "algorithms/algorithms.h"

/* The tuning list of c: c_i = 20 * 2^(i / 4), i = 0..32 (20 to 5120, four
** steps per octave), and the kept-link capacity of each, round(32 c_i). The
** capacities ascend, so a chain of cuts over them only ever raises links. */
#define DB_HOWE_LINKS 33
double db_howe_c(int i);
int32_t db_howe_link(int i);

/* The kept-link capacity for a weight c: round(32 c), as the graph uses it. */
int32_t db_howe_link_of(double c);

/* The report item of a cut (int64): success flag, the flow value, and the work
** of the role that cut (the CPU's search steps, the GPU's commands). */
enum db_howe_cut_report { DB_HOWE_CUT_OK, DB_HOWE_CUT_FLOW, DB_HOWE_CUT_STEPS, DB_HOWE_CUT_COMMANDS, DB_HOWE_CUT_VALUES };

/* Stage checks: Howe's graph needs at least 3x3 pixels. */
db_status db_howe_check_size(db_stage_run *run);

/* The `laplacian` stage on both roles: image -> gray (MATLAB's rgb2gray), lap2
** (2 x the Laplacian per node, -1000 at bright-background outliers). */
db_status db_howe_laplacian(db_stage_run *run);

/* The bytes of the lap2 item: one int32 per node of the (H-1) x (W-1) grid. */
size_t db_howe_lap2_size(const db_job *job, int width, int height);

/* The graph of one cut in scratch buffers of the stage's device, one int32 per
** node each: t-link capacities, and the links to the right and lower neighbours. */
typedef struct db_howe_graph {
    cl_mem source, sink, right, down;
} db_howe_graph;

/* Allocates the graph's buffers (four scratch buffers of the stage). */
db_status db_howe_graph_alloc(db_stage_run *run, db_howe_graph *g);

/* Fills the graph from gray, lap2 and the edge map that starts `edge_offset`
** bytes into `edges`, with kept links of capacity `link`. */
db_status db_howe_graph_build(db_stage_run *run, const db_howe_graph *g, cl_mem gray, cl_mem lap2, cl_mem edges,
                              cl_ulong edge_offset, cl_int link);

/* The `graphcut` stage with kept links of capacity `link`: in ports gray, lap2,
** edges; out ports the image (0 = ink) and the cut report (DB_HOWE_CUT_*).
** Boykov-Kolmogorov on the cpu role, push-relabel on the gpu role. */
db_status db_howe_graphcut(db_stage_run *run, cl_int link);

/* The launch shape of Howe's 2-D kernels on this stage's role. */
const size_t *db_howe_local(db_stage_run *run);

/* The most chains of cuts of one tuning search (algorithms/howe_tune.h). */
#define DB_HOWE_MAX_CHAINS 11

/* The features, in the model's order (docs/howe.md): the contrast and the
** homogeneity of the gray-level co-occurrence matrix of horizontally adjacent
** pixels (MATLAB's graycomatrix defaults: 8 levels), the mean gray level of
** the Canny edges at DB_HOWE_EDGE_THI, and the standard deviation of the gray
** levels above Otsu's threshold (the background). */
enum db_howe_feature { DB_HOWE_CONTRAST, DB_HOWE_HOMOGENEITY, DB_HOWE_EDGE_MEAN, DB_HOWE_BACKGROUND_STD, DB_HOWE_FEATURES };
extern const char *const db_howe_feature_names[DB_HOWE_FEATURES];

/* The integer statistics the feature stages compute: the counts of |level
** difference| 0..7 of horizontal pairs; the edge pixels and their gray sum;
** the background's pixels, gray sum and sum of squares. */
typedef struct db_howe_stats {
    uint64_t glcm[8];
    uint64_t edges[2];
    uint64_t background[3];
} db_howe_stats;

/* What a run on the calling thread hands back besides its image, for the
** training of howe-predict and the tests: ground truth in; cut histories,
** statistics, features and predictions out. Stages read it while db_run
** enqueues them, which it does on its caller's thread. */
typedef struct db_howe_probe {
    /* In, for howe-auto's grid search: width*height bytes, nonzero = ink. */
    const uint8_t *truth;
    /* Out, when set: howe-auto's chain j (its j-th threshold), one word per
    ** node ((H-1) x (W-1), raster order), bit i the node's cut at c_i (1 = ink). */
    uint64_t *history[DB_HOWE_MAX_CHAINS];
    /* Out, from the grid search: the F-measure of chain j's image at c_i. */
    double grid_f[DB_HOWE_MAX_CHAINS][DB_HOWE_LINKS];
    /* Out, from howe-predict: its statistics and features, the thi it used,
    ** and the model's index of c (-1 when the job gave c). */
    bool has_features;
    db_howe_stats stats;
    double features[DB_HOWE_FEATURES];
    double thi;
    int c_index;
} db_howe_probe;

/* Attaches `probe` to the calling thread's next runs; NULL detaches it. */
void db_howe_probe_attach(db_howe_probe *probe);

/* The probe attached to the calling thread, or NULL. */
db_howe_probe *db_howe_probe_current(void);

#endif
