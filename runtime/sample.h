/*
** sample.h — a built-in sample page, so that docbin runs without any download.
*/
#ifndef DB_SAMPLE_H
#define DB_SAMPLE_H

#include <stdint.h>
#include "runtime/image.h"

/* Renders a width x height RGB page of dark glyph-like strokes in lines on
** yellowed paper with uneven illumination, a stain and noise. The same seed
** gives the same page on every machine (integer arithmetic, own generator). */
db_image *db_sample_page(int width, int height, uint32_t seed);

/* The same page in gray, one byte a pixel (the red channel of db_sample_page's,
** before the paper's tint): calibration times the stages that read the page on
** both, as a gray page costs them less. */
db_image *db_sample_gray_page(int width, int height, uint32_t seed);

/* The sample page (RGB for 3 channels, gray for 1) with text on its upper
** half only, under light that falls off nearly twice as steeply, as on many
** scans. Work that follows the content moves with it: HBK's k-means makes 4
** passes a block on db_sample_page's A4 pages at 75 to 300 dpi and 22 to 29 on
** these (2009-H02: 32), Howe's CPU cut 5.1 to 9.2 search steps a pixel and
** 9.1 to 13.7 (blank paper lets its search trees grow far). Calibration times
** such stages on both (db_stage_work.varied). NULL with the error set for
** other channel counts. */
db_image *db_sample_varied_page(int width, int height, uint32_t seed, int channels);

#endif
