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

#endif
