/*
** synth.h — a synthetic degraded document and its exact ground truth, at any
** size, without any download: for tests and benchmarks.
**
** A page is text-like glyph strokes in justified lines and paragraphs, set on
** paper that the degradations below then age. The ground truth marks exactly
** the pixels where the glyph renderer put ink, before any degradation, so a
** binarization can be scored against it pixel by pixel.
**
** Determinism: the generator uses only integer and fixed-point arithmetic and
** its own random generator, on one thread, so the same parameters (seed
** included) give byte-identical images on every machine, compiler and CPU.
**
** docbin's built-in sample page (runtime/sample.h) is a small fixed picture for
** a first run; this generator is the adjustable one with a ground truth.
*/
#ifndef DB_SYNTH_H
#define DB_SYNTH_H

#include <stdint.h>
#include "runtime/error.h"
#include "runtime/image.h"

/* The page size the project calls "A4 at 300 dpi" (its benchmark pages), and
** that resolution; other resolutions scale both sides in proportion. */
enum db_synth_a4 {
    DB_SYNTH_A4_WIDTH = 2516,
    DB_SYNTH_A4_HEIGHT = 3272,
    DB_SYNTH_A4_DPI = 300
};

/* Everything a page depends on. Fill it with db_synth_defaults(), then change
** fields. Text lengths are in pixels, and 0 derives them from `dpi`, so that a
** larger page at the same resolution holds more text rather than larger text.
** Every degradation is off at 0; levels are gray levels (0..255) unless said. */
typedef struct db_synth_params {
    uint32_t seed;        /* the page's identity: another seed, another page */
    int width, height;    /* page size in pixels (default A4 at 300 dpi, 2516x3272) */
    int color;            /* 1: RGB on yellowish paper (default); 0: 8-bit gray */
    int dpi;              /* resolution assumed by the automatic text sizes (default 300) */

    /* Text. */
    int line_height;      /* baseline to baseline; 0: dpi / 5 (12-point type), 60 at 300 dpi */
    int stroke_width;     /* broad width of the oval pen; 0: line_height / 15, at least 1 */
    int margin;           /* blank border around the text; 0: dpi * 5 / 6, less on tiny pages */
    int paragraph_lines;  /* mean lines per paragraph (default 9); 0: one paragraph */
    int ink;              /* ink's gray level before degradations (default 40) */
    int paper;            /* clean paper's gray level (default 226); must exceed `ink` */

    /* Degradations, each off at 0. */
    int illumination;     /* darkening of the dimmest part of a smooth light field (default 50) */
    int texture;          /* amplitude of spatially correlated paper grain (default 12) */
    int stains;           /* darkness at the heart of a stain (default 40) */
    int stain_count;      /* number of stains, soft blobs of a few discs (default 3) */
    int bleed;            /* darkening where the mirrored, blurred text of the other side is
                             fully inked (default 40) */
    int fading;           /* percent of ink contrast lost where the smooth fading field is
                             strongest (default 60; at most 100) */
    int blur;             /* binomial blur of the final page: 2 * blur + 1 taps each way,
                             sigma = sqrt(blur / 2) pixels (default 1; at most 10) */
    int noise;            /* standard deviation of per-pixel additive noise (default 5) */
} db_synth_params;

/* A photograph-like gray picture of width x height for halftoning tests and
** benchmarks: a sky that brightens towards a hilly horizon, hills of smooth
** fields with fine grass-like texture, soft-edged discs from black to white
** and a strip with the full tonal range, flat black and flat white included,
** so that every gray level and the clipping-prone extremes occur. Same
** determinism as the pages: integer arithmetic only. */
db_status db_synth_photo(int width, int height, uint32_t seed, db_image **out);

/* Moderate settings that look like an aged printed page: A4 at 300 dpi, RGB,
** seed 1, every degradation on. */
void db_synth_defaults(db_synth_params *p);

/* Sets the page size to A4 at `dpi` (2516x3272 scaled by dpi / 300) and the
** text resolution to `dpi`, for callers that think in resolutions. */
void db_synth_set_a4(db_synth_params *p, int dpi);

/* Checks every field's range (and the page's size against the memory limit),
** so that a tool can refuse bad settings before it writes anything. */
db_status db_synth_check(const db_synth_params *p);

/* Renders the page (RGB if p->color, else gray) into *page and its ground
** truth (1 channel, 0 = ink, 255 = background) into *gt; `gt` may be NULL when
** only the page is wanted. On failure both stay NULL and the message says why. */
db_status db_synth_render(const db_synth_params *p, db_image **page, db_image **gt);

#endif
