/*
** metrics.h — quality of a binarization against its ground truth, and of a halftone.
**
** Definitions, conventions and reference values: docs/evaluation.md, "The
** metrics" (DIBCO metrics: F-measure, pseudo-F with the DIBCO weights, PSNR,
** DRD, NRM, MCC) and "Halftones" (the HVS-filtered error and HPSNR). Ink is
** black (0).
** Every count is an exact integer, so every machine reports the same figures.
*/
#ifndef DB_METRICS_H
#define DB_METRICS_H

#include <stdint.h>
#include "runtime/image.h"

/* db_counts (the four classification counts, ink = positive) and db_metrics
** (everything docbin-eval reports for one pair; JSON prints its undefined
** values as null) are public (include/docbin.h). */

/* Weight sums of the pseudo-metrics over the TP, FP and FN pixels, each a double
** accumulated in raster order: pw_* of the stored P value (PW - 1), rw_* of the R value. */
typedef struct db_pseudo_sums {
    double pw_tp, pw_fp;
    double rw_tp, rw_fn;
} db_pseudo_sums;

/* Turns a binary image into an ink mask (1 = ink, 0 = background). Only the
** values 0 and 255 are accepted, in a 1-channel image; anything else is an
** error naming `name` and the first offending pixel. *mask is malloc'd. */
db_status db_ink_mask(const db_image *img, const char *name, uint8_t **mask);

/* Computes every metric of `bin` against `gt` (ink masks of width x height).
** `pweights` (stored PW - 1, DIBCO's P file) and `rweights` (DIBCO's R file) may
** both be NULL, in which case has_pseudo is 0 and the pseudo values are NaN;
** one without the other is a usage error. */
db_status db_metrics_compute(const uint8_t *gt, const uint8_t *bin, int width, int height,
                             const double *pweights, const double *rweights, db_metrics *m);

/* Pseudo-precision, pseudo-recall and pseudo-F (percent) from the counts and the
** weight sums: the formula alone, so that published sums can be checked without
** their images. Precision and recall are 0 where their weighted true positives
** are 0, and F is 0 when either is. */
void db_pseudo_from_sums(const db_counts *c, const db_pseudo_sums *s, double *precision,
                         double *recall, double *fmeasure);

/* Reads a DIBCO weight file: exactly width*height whitespace-separated decimals
** in raster order, with a dot whatever the locale. *weights is malloc'd. Errors
** name the file and say what is wrong: the count found against the count
** expected, or the line and column of a decimal comma or any other text. */
db_status db_weights_read(const char *path, int width, int height, double **weights);

/* Writes weights in DIBCO's format, each value printed with "%f " (always with a
** dot), atomically. Non-finite values are refused: the format cannot hold them. */
db_status db_weights_write(const char *path, const double *weights, int width, int height);

/* Generates the DIBCO pseudo-recall weights (R file) and pseudo-precision weights
** (P file, stored PW - 1) from a GT ink mask, as DIBCO's BinEvalWeights tool does. */
db_status db_pseudo_weights(const uint8_t *gt, int width, int height, double *pweights, double *rweights);

/* The halftone measures of `ht` (binary, 1-channel 0/255) against `orig` (gray;
** RGB becomes gray with the BT.601 rule), both scaled to [0, 1], with the HVS
** filter v (Gaussian sigma 1.2, 9x9, sum 1, zero outside the image):
** *error = mean over pixels of (a - v*b)^2 (the DBS objective per pixel) and
** *hpsnr = 10 log10(1 / mean((v*a - v*b)^2)), +inf when that mean is 0.
** Zero outside makes v*b < 1 within 4 pixels of the border, so even a white
** halftone of a white page has a small non-zero error there. */
db_status db_halftone_quality(const db_image *orig, const db_image *ht, double *error, double *hpsnr);

#endif
