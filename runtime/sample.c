/*
** sample.c — the built-in sample page (a small, deterministic degraded document).
*/
#include <stdlib.h>
#include "runtime/sample.h"

/* xorshift32: tiny, deterministic everywhere. */
static uint32_t next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static int range(uint32_t *s, int lo, int hi)
{
    return lo + (int)(next(s) % (uint32_t)(hi - lo + 1));
}

/* Darkens a disc of radius r (integer pixels) around (cx, cy) to `ink`. */
static void dab(uint8_t *ink_map, int w, int h, int cx, int cy, int r)
{
    for (int y = cy - r; y <= cy + r; y++)
        for (int x = cx - r; x <= cx + r; x++)
            if (x >= 0 && y >= 0 && x < w && y < h && (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r)
                ink_map[(size_t)y * w + x] = 1;
}

/* A glyph: a few straight strokes inside a box, drawn with round dabs. */
static void glyph(uint8_t *ink_map, int w, int h, int x0, int y0, int gw, int gh, int pen, uint32_t *s)
{
    int strokes = range(s, 1, 3);
    for (int k = 0; k < strokes; k++) {
        int ax = x0 + range(s, 0, gw), ay = y0 + range(s, 0, gh);
        int bx = x0 + range(s, 0, gw), by = y0 + range(s, 0, gh);
        int steps = abs(bx - ax) + abs(by - ay) + 1;
        for (int t = 0; t <= steps; t++)
            dab(ink_map, w, h, ax + (bx - ax) * t / steps, ay + (by - ay) * t / steps, pen);
    }
}

/* The page of db_sample_page in `channels` (1 or 3), its text ending at
** `text_end` (a fraction of the height, in percent). */
static db_image *render(int width, int height, uint32_t seed, int channels, int falloff, int text_end)
{
    if (db_image_check_size(width, height, channels, "sample page") != DB_OK)
        return NULL;
    db_image *img = db_image_new(width, height, channels);
    uint8_t *ink_map = calloc((size_t)width * height, 1);
    if (!img || !ink_map) {
        db_image_free(img);
        free(ink_map);
        db_fail(DB_ERR_NOMEM, "out of memory for the sample page");
        return NULL;
    }
    uint32_t s = seed ? seed : 1;
    int line_h = height / 28 > 8 ? height / 28 : 8;
    int pen = line_h / 14 > 1 ? line_h / 14 : 1;
    int margin = width / 12;
    int last = (int)((long)height * text_end / 100);
    for (int y = line_h * 2; y + line_h < last - line_h; y += line_h * 3 / 2) {
        int x = margin + (y / line_h % 5 == 0 ? line_h * 2 : 0);
        int right = width - margin - range(&s, 0, width / 4) * ((y / line_h) % 7 == 6);
        while (x + line_h < right) {
            int word = range(&s, 2, 8);
            for (int c = 0; c < word && x + line_h < right; c++) {
                int gw = line_h * range(&s, 45, 80) / 100;
                glyph(ink_map, width, height, x, y, gw, line_h * 3 / 4, pen, &s);
                x += gw + pen * 2;
            }
            x += line_h / 2;
        }
    }
    /* Paper: illumination falling off by `falloff` towards one corner, a faint stain, noise. */
    int sx = width * 2 / 3, sy = height / 3, sr = (width < height ? width : height) / 5;
    for (int y = 0; y < height; y++) {
        uint8_t *row = img->data + (size_t)y * img->stride;
        for (int x = 0; x < width; x++) {
            int light = 235 - falloff * (x + y) / (width + height);
            int dx = x - sx, dy = y - sy;
            long d2 = (long)dx * dx + (long)dy * dy, r2 = (long)sr * sr;
            if (d2 < r2)
                light -= (int)(25 * (r2 - d2) / r2);
            int v = ink_map[(size_t)y * width + x] ? 40 + range(&s, 0, 30) : light + range(&s, -8, 8);
            v = v < 0 ? 0 : v > 255 ? 255 : v;
            if (channels == 1) {
                row[x] = (uint8_t)v;
                continue;
            }
            row[3 * x] = (uint8_t)v;
            row[3 * x + 1] = (uint8_t)(v * 96 / 100);
            row[3 * x + 2] = (uint8_t)(v * 82 / 100);
        }
    }
    free(ink_map);
    return img;
}

/* The paper's brightness from the lit corner to the far one, 235 down to 165. */
enum { FALLOFF = 70 };

db_image *db_sample_page(int width, int height, uint32_t seed)
{
    return render(width, height, seed, 3, FALLOFF, 100);
}
