/*
** reference.h — a plain-C reference of the thresholding methods of
** docs/algorithms.md (Gray, Otsu, and Niblack, Sauvola, NICK, Wolf), for the tests.
**
** It is kept as simple as possible (each window is summed directly, no
** integral images or sliding sums) so that it shares no shortcut with the
** library it checks. It is O(w²) per pixel: use it on small images only.
** reference.c must be compiled with -ffp-contract=off.
*/
#ifndef DB_TESTS_REFERENCE_H
#define DB_TESTS_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* The thresholding methods. */
typedef enum ref_method {
    REF_OTSU,
    REF_NIBLACK,
    REF_SAUVOLA,
    REF_NICK,
    REF_WOLF
} ref_method;

/* Values of ref_gray's `rule`; the same numbering as the library's db_gray_rule. */
typedef enum ref_gray_rule {
    REF_GRAY_BT601 = 0, /* (299 r + 587 g + 114 b + 500) / 1000 */
    REF_GRAY_QT = 1     /* (11 r + 16 g + 5 b) / 32, the rule of the Doxa vectors */
} ref_gray_rule;

/* Converts packed RGB (channels 3) or gray (channels 1, copied) rows of
** `width` pixels to gray with `rule` (a ref_gray_rule). */
void ref_gray(const uint8_t *rgb_or_gray, int width, int height, int channels, int rule,
              uint8_t *gray);

/* Otsu's threshold of n gray pixels: a pixel is black iff gray <= the result. */
int ref_otsu_threshold(const uint8_t *gray, size_t n);

/* The smallest of n gray pixels (n > 0): Wolf's gmin, exported so that tests
** can check it against the conformance page's (docs/testing.md). */
int ref_gray_min(const uint8_t *gray, size_t n);

/* Binarizes a width x height gray image into `out` (0 = black, 255 = white).
** `window` must be odd and >= 1; window and k are ignored for REF_OTSU. */
void ref_binarize(const uint8_t *gray, int width, int height, ref_method method, int window,
                  double k, uint8_t *out);

/* ref_binarize's two passes, for a test that thresholds one window's statistics
** with many methods and k: the mean and population variance of every pixel's
** window (odd `window` >= 1, clipped at the border), then every pixel's decision
** (not REF_OTSU). */
void ref_window_stats(const uint8_t *gray, int width, int height, int window, double *mean, double *var);
void ref_threshold(const uint8_t *gray, size_t n, const double *mean, const double *var, ref_method method,
                   double k, uint8_t *out);

#endif
