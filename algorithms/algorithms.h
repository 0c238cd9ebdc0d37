/*
** algorithms.h — the registry of algorithms and the stages they share.
*/
#ifndef DB_ALGORITHMS_H
#define DB_ALGORITHMS_H

#include <stdio.h>
#include "runtime/stage.h"

/* The algorithm called `name`, or NULL with an error listing the known names. */
const db_algo *db_algo_find(const char *name);

/* The i-th algorithm in --list-algos order, of db_algo_count() (public). */
const db_algo *db_algo_at(int i);

/* Prints an algorithm's stages (with their roles), items, parameters with
** defaults and ranges, and variants: the --list-algos entry. */
void db_algo_print(const db_algo *algo, FILE *f);

/* The `gray` stage's implementation on both roles (algorithms/gray.c): colour
** to gray with the job's rule, from the stage's input port to its output port. */
db_status db_gray(db_stage_run *run);

/* The `gray` stage of an algorithm, from item `from` to item `to`. */
#define DB_GRAY_STAGE(from, to)                                                                              \
    {.name = "gray", .doc = "colour to gray (BT.601 or --gray qt)", .in = DB_PORTS(from), .out = DB_PORTS(to), \
     .impl = {db_gray, db_gray}, .sources = {"gray.cl"}}

/* The `canny` stage of Howe's binarization (algorithms/canny.c): MATLAB's
** canny_old on the image converted to gray as MATLAB's rgb2gray does, with the
** job's parameters sigma, tlo, thi (indices DB_HOWE_SIGMA, ..._TLO, ..._THI);
** output: one byte per pixel, 1 = edge. */
db_status db_canny_cpu(db_stage_run *run);
db_status db_canny_gpu(db_stage_run *run);

/* Canny edge maps for n high thresholds thi[0..n) (the job's sigma and tlo) in
** one stage: the smoothing and gradients are computed once. After the i-th map
** is made in `edges` (a scratch buffer of the stage, width*height bytes,
** overwritten by the next map), each(run, i, edges, arg) enqueues what takes it. */
typedef db_status (*db_canny_each)(db_stage_run *run, int i, cl_mem edges, void *arg);
db_status db_canny_thresholds(db_stage_run *run, const double *thi, int n, db_canny_each each, void *arg);

/* Parameter indices of Howe's binarization, shared by its stage files. */
enum db_howe_param { DB_HOWE_C, DB_HOWE_THI, DB_HOWE_TLO, DB_HOWE_SIGMA, DB_HOWE_RELABEL, DB_HOWE_N_PARAMS };

/* The algorithms (one file each). */
extern const db_algo db_algo_otsu;
extern const db_algo db_algo_niblack;
extern const db_algo db_algo_sauvola;
extern const db_algo db_algo_nick;
extern const db_algo db_algo_wolf;
extern const db_algo db_algo_hbk;
extern const db_algo db_algo_howe;
extern const db_algo db_algo_howe_auto;
extern const db_algo db_algo_howe_predict;
extern const db_algo db_algo_dbs;

#endif
