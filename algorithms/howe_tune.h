/*
** howe_tune.h — Howe's parameter tuning (`howe-auto`, algorithms/howe_tune.c)
** and its parts that tests and the training of `howe-predict` use: the
** selection rules, the thresholds the searches try, and the probe through
** which a run hands back more than its image.
**
** The selection rules run on the host in double from integer pixel counts, one
** code path for every map, so every map picks the same parameters.
*/
#ifndef DB_HOWE_TUNE_H
#define DB_HOWE_TUNE_H

#include <stdbool.h>
#include <stdint.h>
#include "algorithms/howe.h"

/* The searches of `howe-auto --param search=...`. ALG3 (the default): three
** chains of 33 cuts at thi 0.25, 0.375 and 0.5, c chosen in each by the chain
** rule, then one of the low and high chains by which differs less from the
** middle one (99 cuts). C: one chain at the job's thi (33 cuts). ALG2: eleven
** chains at thi 0.15, 0.20 .. 0.65, and the chain where the picked images
** change least with thi (363 cuts). GRID: the eleven chains of ALG2, each
** image scored against a ground truth, the best F-measure kept: the training
** search, run only through db_howe_grid. */
typedef enum db_howe_search { DB_HOWE_ALG3, DB_HOWE_SEARCH_C, DB_HOWE_ALG2, DB_HOWE_GRID, DB_HOWE_SEARCHES } db_howe_search;

/* The high thresholds of ALG3 (3) and of ALG2 and GRID (11), ascending. */
extern const double db_howe_alg3_thi[3];
extern const double db_howe_grid_thi[DB_HOWE_MAX_CHAINS];

/* Chain rule (Howe's Alg1): from diff[i], the pixels that differ between the
** images of c_i and c_i+1 (i = 0..31), out of `pixels`, the index 0..32 of the
** c to keep: the differences as fractions, smoothed with a 6-tap Gaussian
** (sigma 1), and the k that maximises d(i) + d(j) - 2 d(k) over i < k < j
** (i, j, k 1-based, j >= i + 2), the first maximiser in that loop order. */
int db_howe_alg1(const int64_t diff[DB_HOWE_LINKS - 1], int64_t pixels);

/* Threshold rule (Howe's Alg2): from diff[j], the pixels that differ between
** the picked images of thresholds j and j+1 (j = 0..9), the index 0..10 of
** the threshold to keep: the smoothed differences' first minimum. */
int db_howe_alg2(const int64_t diff[DB_HOWE_MAX_CHAINS - 1], int64_t pixels);

/* Howe's Alg3 choice: the low chain (index 0) when its picked image differs
** from the middle one's in fewer pixels (dlo) than the high chain's does
** (dhi), else the high chain (index 2); a tie takes the high chain. */
int db_howe_alg3(int64_t dlo, int64_t dhi);

/* The index of the best F-measure 2 hits / (inks + truth) over n images,
** where inks[i] is image i's ink pixels, hits[i] those that are ink in the
** truth, `truth` the truth's ink pixels: the first maximum. */
int db_howe_best_f(const int64_t *hits, const int64_t *inks, int64_t truth, int n);

/* The F-measure above of one image. */
double db_howe_f(int64_t hits, int64_t inks, int64_t truth);

/* Enqueues a copy of n bytes from src at src_offset to dst at dst_offset with
** the kernel of cl/howe_tune.cl (the stage must list that file). */
db_status db_howe_copy(db_stage_run *run, cl_mem src, cl_ulong src_offset, cl_mem dst, cl_ulong dst_offset,
                       cl_ulong n);

/* The internal algorithm of the GRID search: the stages of howe-auto with
** search=grid. Runs only with a probe that gives the truth. */
extern const db_algo db_algo_howe_grid;

/* The report values of howe-auto and of the GRID search (int64). */
enum db_howe_tune_report {
    DB_HOWE_TUNE_OK,      /* every cut ran (0: out of memory in a CPU cut) */
    DB_HOWE_TUNE_THI,     /* the chosen thi x 1000 */
    DB_HOWE_TUNE_C_INDEX, /* the chosen c: 1..33 in the list of c */
    DB_HOWE_TUNE_C,       /* the chosen c x 100, rounded */
    DB_HOWE_TUNE_CUTS,    /* the cuts made */
    DB_HOWE_TUNE_VALUES
};

/* Runs the GRID search on `page` under `map` against `truth` (the page's size,
** nonzero = ink): every thi of db_howe_grid_thi with every c, and returns the
** indices of the best F-measure's thi (0..10) and c (0..32), and its F; and
** when `table` is given, every F-measure: table[thi index][c index]. */
db_status db_howe_grid(db_context *ctx, const db_map *map, const db_image *page, const uint8_t *truth, int *thi_index,
                       int *c_index, double *f, double (*table)[DB_HOWE_LINKS]);

#endif
