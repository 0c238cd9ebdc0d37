/*
** reference_howe_tune.h — a plain-C reference of Howe's parameter tuning: the
** rules that keep one c of a chain (Alg1) and one threshold of several
** (Alg2, Alg3), and the searches made of cold cuts (ref_howe at every thi and
** c), for the tests of howe-auto. Shares no code with the library.
*/
#ifndef DB_TESTS_REFERENCE_HOWE_TUNE_H
#define DB_TESTS_REFERENCE_HOWE_TUNE_H

#include <stdint.h>

/* The values of c tried: exp of 33 points evenly spaced from ln 20 to ln 5120. */
#define REF_TUNE_CS 33
double ref_tune_c(int i);

/* Alg1 on the 32 counts of pixels that change between successive images
** (out of `pixels`): the index 0..32 of the c it keeps. */
int ref_tune_alg1(const int64_t diff[REF_TUNE_CS - 1], int64_t pixels);

/* Alg2 on the 10 counts between the kept images of successive thresholds:
** the index 0..10 of the threshold it keeps. */
int ref_tune_alg2(const int64_t diff[10], int64_t pixels);

/* Alg3: 0 (the low threshold) when dlo < dhi, else 2 (the high one). */
int ref_tune_alg3(int64_t dlo, int64_t dhi);

/* Binarizes packed rows at every threshold thi[j] (j < n_thi) and every c:
** images[(j * REF_TUNE_CS + i) * width * height ...] = ref_howe at (thi[j], c_i),
** Canny sigma and tlo as given. Returns 0, or -1 when ref_howe fails. */
int ref_tune_images(const uint8_t *pixels, int width, int height, int channels, const double *thi, int n_thi,
                    double sigma, double tlo, uint8_t *images);

/* The searches on the images of ref_tune_images (n_thi thresholds): search 0
** is Alg3 (n_thi 3), 1 is Alg1 alone (n_thi 1), 2 is Alg2 (n_thi 11), 3 is the
** best F-measure against `truth` (nonzero = ink; n_thi 11). Writes the kept
** threshold's index and c's index. */
void ref_tune_search(const uint8_t *images, int width, int height, int n_thi, int search, const uint8_t *truth,
                     int *thi_index, int *c_index);

#endif
