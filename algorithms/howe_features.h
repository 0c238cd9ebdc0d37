/*
** howe_features.h — `howe-predict` (algorithms/howe_features.c): four cheap
** image features, a linear model from them to Howe's thi and c, and one cut;
** and the training of that model (algorithms/howe_train.c).
*/
#ifndef DB_HOWE_FEATURES_H
#define DB_HOWE_FEATURES_H

#include <stdint.h>
#include <stdio.h>
#include "algorithms/howe_tune.h"

/* The high threshold of the edge feature's Canny (howe's default). */
#define DB_HOWE_EDGE_THI 0.4

/* The features from the statistics, in double. A page without edges has edge
** mean 255, one without background pixels a background deviation of 0. */
void db_howe_features(const db_howe_stats *s, double f[DB_HOWE_FEATURES]);

/* The model: standardised features z = (f - mean) / scale, then
** thi = thi[0] + sum thi[1 + k] z[k], clamped to [0.15, 0.65], and
** c_index = c_index[0] + sum c_index[1 + k] z[k], rounded and clamped to 0..32
** (the list of c of howe.h). */
typedef struct db_howe_model {
    double mean[DB_HOWE_FEATURES], scale[DB_HOWE_FEATURES];
    double thi[DB_HOWE_FEATURES + 1], c_index[DB_HOWE_FEATURES + 1];
} db_howe_model;

/* The version of the model file format this docbin reads and writes. */
#define DB_HOWE_MODEL_VERSION 1

/* Parses a model file's text; `name` names it in errors (exit 1 class). */
db_status db_howe_model_parse(const char *text, const char *name, db_howe_model *m);

/* The model howe-predict uses: the file $DOCBIN_HOWE_MODEL when set, else the
** one built into the library (algorithms/howe_model.txt). */
db_status db_howe_model_load(db_howe_model *m);

/* Writes a model file atomically, with `comment` lines (may be NULL) after the header. */
db_status db_howe_model_write(const db_howe_model *m, const char *path, const char *comment);

/* The model's thi and c index for features f. */
void db_howe_predict(const db_howe_model *m, const double f[DB_HOWE_FEATURES], double *thi, int *c_index);

/* The report values of howe-predict (int64): the cut's (DB_HOWE_CUT_*), then
** these, x 1000 (c x 100), rounded. */
enum db_howe_predict_report {
    DB_HOWE_PREDICT_THI = DB_HOWE_CUT_VALUES,
    DB_HOWE_PREDICT_C,
    DB_HOWE_PREDICT_FEATURE, /* DB_HOWE_FEATURES values */
    DB_HOWE_PREDICT_VALUES = DB_HOWE_PREDICT_FEATURE + DB_HOWE_FEATURES
};

/* ---- training (algorithms/howe_train.c) ---- */

/* One training page: its features, and the grid search's best thi and c. */
typedef struct db_howe_sample {
    double features[DB_HOWE_FEATURES];
    int thi_index, c_index; /* in db_howe_grid_thi, and the list of c */
    double f;               /* the best F-measure */
    double table[DB_HOWE_MAX_CHAINS][DB_HOWE_LINKS]; /* every F-measure of the grid */
} db_howe_sample;

/* The features of `page` (a run of howe-predict) and its grid search against
** `truth` (nonzero = ink), on the default map of `ctx`'s devices. */
db_status db_howe_sample_page(db_context *ctx, const db_image *page, const uint8_t *truth, db_howe_sample *s);

/* Least squares (with a small ridge on the weights) over n >= 2 samples. */
db_status db_howe_fit(const db_howe_sample *s, int n, db_howe_model *m);

/* docbin-bench --train-howe: every page of `dir` with a ground truth (DIBCO's
** Originals/ID.EXT and GT/ID_gt.EXT, or ID.EXT beside ID_gt.EXT), sampled and
** fitted; the model is written to `model_path`, a line per page to `log`, and
** unless `grid_path` is NULL every page's grid of F-measures to it as CSV
** (page, thi, c_index counted from 1, c, F in %). */
db_status db_howe_train(db_context *ctx, const char *dir, const char *model_path, const char *grid_path, FILE *log);

#endif
