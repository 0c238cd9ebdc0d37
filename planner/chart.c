/*
** chart.c — the SVG box plot of a benchmark: wall time per map, as in Fig. 8 of
** Westphal et al. (2018). Plain SVG text, no dependencies.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "planner/bench.h"
#include "planner/map.h"
#include "runtime/util.h"

/* Layout in SVG user units (pixels). */
enum { WIDTH = 760, TOP = 48, ROW = 30, BOTTOM = 56, RIGHT = 30, CHAR_W = 8 };

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, f);
        }
    }
}

/* A tick step of 1, 2 or 5 times a power of ten giving about five ticks up to `max`. */
static double tick_step(double max)
{
    double raw = max / 5;
    double p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

db_status db_bench_write_svg(const db_bench *b, const char *path)
{
    int per_map = b->n_images * b->runs;
    double *v = malloc((size_t)per_map * sizeof *v);
    db_box *box = malloc((size_t)b->n_maps * sizeof *box);
    if (!v || !box) {
        free(v);
        free(box);
        return db_fail(DB_ERR_NOMEM, "out of memory drawing %s", path);
    }
    double vmax = 0;
    db_status st = DB_OK;
    size_t label_len = 4;
    for (int m = 0; m < b->n_maps && st == DB_OK; m++) {
        int n = 0;
        for (int i = 0; i < b->n_images; i++)
            for (int r = 1; r <= b->runs; r++)
                v[n++] = db_bench_wall_ms(b, i, m, r);
        st = db_box_stats(v, n, &box[m]);
        vmax = fmax(vmax, box[m].max);
        char text[128];
        db_map_format(&b->maps[m], text, sizeof text);
        label_len = strlen(text) > label_len ? strlen(text) : label_len;
    }
    free(v);
    if (st != DB_OK) {
        free(box);
        return st;
    }
    double step = tick_step(vmax > 0 ? vmax : 1);
    double axis_max = ceil((vmax > 0 ? vmax : 1) / step) * step;
    int left = 24 + CHAR_W * (int)label_len;
    int plot_w = WIDTH - left - RIGHT;
    int height = TOP + ROW * b->n_maps + BOTTOM;
    int axis_y = TOP + ROW * b->n_maps;
#define X(ms) (left + (ms) / axis_max * plot_w)

    db_atomic_file af;
    if ((st = db_atomic_open(&af, path)) != DB_OK) {
        free(box);
        return st;
    }
    FILE *f = af.f;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, height, WIDTH, height);
    fprintf(f, "<title>");
    xml_text(f, b->algo->name);
    fprintf(f, ": wall time per map</title>\n");
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, height);
    fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"14\" font-weight=\"bold\">", left);
    xml_text(f, b->algo->name);
    fprintf(f, ": wall time per map</text>\n");
    fprintf(f, "<text x=\"%d\" y=\"38\" fill=\"#555\">%d image%s x %d timed run%s per map, warm-up runs "
               "excluded; whiskers min and max, box quartiles, line median</text>\n", left, b->n_images,
            b->n_images == 1 ? "" : "s", b->runs, b->runs == 1 ? "" : "s");

    /* Grid lines and ticks. */
    fprintf(f, "<g class=\"axis\" stroke=\"#ccc\">\n");
    for (double t = 0; t <= axis_max + step / 2; t += step)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", X(t), TOP - 4, X(t), axis_y + 4);
    fprintf(f, "</g>\n<g class=\"ticks\" text-anchor=\"middle\">\n");
    for (double t = 0; t <= axis_max + step / 2; t += step)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">%g</text>\n", X(t), axis_y + 20, t);
    fprintf(f, "</g>\n");
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left, axis_y, left + plot_w,
            axis_y);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">wall time (ms)</text>\n", left + plot_w / 2,
            axis_y + 42);

    /* One box per map. */
    for (int m = 0; m < b->n_maps; m++) {
        char text[128];
        db_map_format(&b->maps[m], text, sizeof text);
        const db_box *x = &box[m];
        double cy = TOP + ROW * m + ROW / 2.0, half = ROW * 0.3;
        fprintf(f, "<g class=\"map\" data-map=\"");
        xml_text(f, text);
        fprintf(f, "\">\n<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-family=\"monospace\">",
                left - 8, cy + 4);
        xml_text(f, text);
        fprintf(f, "</text>\n");
        fprintf(f, "<line class=\"whisker\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                X(x->min), cy, X(x->max), cy);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>\n", X(x->min),
                cy - half / 2, X(x->min), cy + half / 2);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>\n", X(x->max),
                cy - half / 2, X(x->max), cy + half / 2);
        fprintf(f, "<rect class=\"box\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#9ecae1\" "
                   "stroke=\"black\"/>\n", X(x->q1), cy - half, X(x->q3) - X(x->q1), 2 * half);
        fprintf(f, "<line class=\"median\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#c00\" "
                   "stroke-width=\"2\"/>\n", X(x->median), cy - half, X(x->median), cy + half);
        fprintf(f, "<title>%s: median %.3f ms, quartiles %.3f - %.3f, min %.3f, max %.3f (%d runs)</title>\n",
                text, x->median, x->q1, x->q3, x->min, x->max, x->n);
        fprintf(f, "</g>\n");
    }
    fprintf(f, "</svg>\n");
#undef X
    free(box);
    if (ferror(f)) {
        int e = errno;
        db_atomic_abort(&af);
        return db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return db_atomic_commit(&af);
}
