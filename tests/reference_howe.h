/*
** reference_howe.h — a plain-C reference of Howe's binarization (docs/howe.md
** §§1–6; the § numbers below are that file's), for the tests of the library's
** implementation.
**
** It follows docs/howe.md step by step with straightforward loops and shares no
** code with the library, so that a disagreement points at one of the two.
** The floating-point stages (bias mask, Canny) use only +, −, ×, ÷ and √ in
** double on the image data, in the order of docs/howe.md, "Exact arithmetic", so they are
** reproducible when compiled with -ffp-contract=off; kernel weights come
** from exp() once, as the library's host code computes them.
**
** Summation order: every filter is a true convolution and
** sums its taps in ascending order of the kernel index t (2-D: row index
** outer, column index inner), reading the image at (position − t), into an
** accumulator starting at 0.
**
** The cut goes through ref_grid_maxflow (tests/reference_maxflow.h).
*/
#ifndef DB_TESTS_REFERENCE_HOWE_H
#define DB_TESTS_REFERENCE_HOWE_H

#include <stdint.h>

/* The static default parameters (docs/howe.md, "The graph, step by step"): n-link weight c, Canny σ,
** low and high thresholds. */
#define REF_HOWE_C 160.0
#define REF_HOWE_SIGMA 0.6
#define REF_HOWE_T_LO 0.1
#define REF_HOWE_T_HI 0.4

/* §1: packed rows (width*channels bytes per row) to gray, width*height bytes.
** RGB goes through MATLAB's rgb2gray weights in double, ((R·c_r) + (G·c_g)) +
** (B·c_b), rounded half up and saturated; gray (channels 1) is copied.
** Returns 0, or -1 for sizes < 1 or channels other than 1 and 3. */
int ref_howe_gray(const uint8_t *pixels, int width, int height, int channels, uint8_t *gray);

/* §2: lap2 = 2·divergence of the forward differences, on the node grid:
** (height−1)·(width−1) values, node (r,k) at r*(width−1)+k, before the bias.
** Needs width, height >= 3. */
void ref_howe_lap2(const uint8_t *gray, int width, int height, int32_t *lap2);

/* §2: the bright-background mask on the full image, width*height bytes of 0/1:
** d = I − gsmooth(I, 20, 60, mirror), himask = d / (√gsmooth(d², 20, 50, none)
** + 2⁻⁵²) > 2. Aborts the process when memory runs out. */
void ref_howe_bias_mask(const uint8_t *gray, int width, int height, uint8_t *himask);

/* §4 step 1: the Gaussian half-width for σ > 0: the largest w in 1..30 with
** exp(−w²/2σ²) > 1e−4, or 1 if there is none. */
int ref_howe_canny_halfwidth(double sigma);

/* §4: MATLAB's canny_old on gray/255 with σ > 0 and t_lo < t_hi < 1 (fractions
** of the largest gradient magnitude). edges: width*height bytes of 0/1.
** Aborts the process when memory runs out. */
void ref_howe_canny(const uint8_t *gray, int width, int height, double sigma, double t_lo, double t_hi,
                    uint8_t *edges);

/* §4 steps 4–9 alone, from given derivatives ax, ay (width*height each):
** magnitude normalised by its maximum, non-maximum suppression, weak/strong,
** hysteresis and one thinning pass, or the weak map if nothing is strong.
** Lets tests set magnitudes directly. Aborts when memory runs out. */
void ref_howe_canny_gradient(const double *ax, const double *ay, int width, int height, double t_lo,
                             double t_hi, uint8_t *edges);

/* §4 step 9: one iteration of bwmorph(e, 'thin', 1) in place on a w*h map of
** 0/1 (pixels outside count as 0). Aborts when memory runs out. */
void ref_howe_thin_once(uint8_t *e, int w, int h);

/* §5: the n-link capacities on the node grid ((height−1)·(width−1) entries
** each) from the gray image and the Canny map (width*height, 0/1): `capacity`
** for a kept link, 0 for a removed one. right[i] links node i to its right
** neighbour, down[i] to the one below; both are 0 where there is no such
** neighbour. Needs width, height >= 3. */
void ref_howe_nlinks(const uint8_t *gray, const uint8_t *edges, int width, int height, int32_t capacity,
                     int32_t *right, int32_t *down);

/* §3: t-link capacities of the nodes ((height−1)·(width−1)
** each) from lap2 (node grid) and the bias mask (width*height): lap2 becomes
** −1000 where the mask is set, then source = 16·(3000 − lap2) and
** sink = 16·(3000 + lap2). */
void ref_howe_tlinks(const int32_t *lap2, const uint8_t *himask, int width, int height, int32_t *source,
                     int32_t *sink);

/* §6 after the cut: pads the node labels ((height−1)·(width−1), 1 = ink) to
** width*height by repeating the last row, then the last column, and applies
** the nw clean-up; out: 0 = ink, 255 = background. */
void ref_howe_finish(const uint8_t *ink, int width, int height, uint8_t *out);

/* §§1–6: binarizes packed rows (channels 1 or 3) into out (width*height bytes:
** 0 = ink, 255 = background) with n-link weight c (kept capacity round(32·c),
** 0 <= 32·c <= 2²⁴), Canny σ > 0 and thresholds t_lo < t_hi < 1.
** Returns 0, or -1 for an image smaller than 3×3, another bad argument or a
** failed allocation (out is then untouched). */
int ref_howe(const uint8_t *pixels, int width, int height, int channels, double c, double sigma, double t_lo,
             double t_hi, uint8_t *out);

#endif
