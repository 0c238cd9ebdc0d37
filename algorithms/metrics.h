/*
** metrics.h — quality of a binarization against its ground truth, and of a halftone.
**
** Definitions, conventions and reference values: the project's metric
** specification (DIBCO metrics: F-measure, pseudo-F with the DIBCO weights, PSNR,
** DRD, NRM, MCC; halftones: the HVS-filtered error and HPSNR). Ink is black (0).
** Every count is an exact integer, so every machine reports the same figures.
*/
#ifndef DB_METRICS_H
#define DB_METRICS_H

#include <stdint.h>
#include "runtime/image.h"

/* The four classification counts over all pixels (ink = positive). */
typedef struct db_counts {
    int64_t tp, tn, fp, fn;
} db_counts;

/* Everything docbin-eval reports for one (GT, BIN) pair. Percentages are x100,
** as DIBCO reports them. A value that is undefined for the pair (PSNR of a perfect
** result, NRM of an all-white or all-black GT, DRD without a non-uniform block)
** is +inf or NaN as documented per field; JSON prints those as null. */
typedef struct db_metrics {
    db_counts counts;
    double accuracy;         /* (TP+TN)/N, percent */
    double precision, recall, fmeasure;                       /* percent; 0 when TP = 0 */
    int has_pseudo;          /* pseudo values computed (weights were available) */
    double pseudo_precision, pseudo_recall, pseudo_fmeasure;  /* percent */
    double psnr;             /* dB; +inf for a perfect result */
    double drd;              /* NaN when NUBN = 0 */
    uint64_t drd_sum;        /* sum of DRD_k in units of 1e-6 (integer weight table) */
    int64_t nubn;            /* non-uniform complete 8x8 blocks of the GT */
    double nrm;              /* +inf when the GT is all white or all black */
    double mcc;              /* -1..1; 0 when the denominator is 0 */
} db_metrics;

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
