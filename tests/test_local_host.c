/*
** test_local_host.c — the cpu role's fused local threshold (algorithms/
** local_host.c) against the plain-C reference (tests/reference.c), pixel for
** pixel, where its cheap estimate is most often unsure: flat and faint pages,
** pages of few gray levels, so that many pixels sit exactly on a window's mean (Niblack and NICK
** with k = 0, flat and two-level windows, variances of zero and just above),
** smooth gradients and noise; every method, thresholds k from -2 to 3 (and
** 1e6, which leaves nothing to the estimate), windows from 1 to 255 (the
** reference visits every pixel of every window, so the large ones run on the
** small pages), bands of 1 to 7 threads. test_maps adds the bright page whose
** sums of squares near 2^32.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/local_host.h"
#include "tests/reference.h"
#include "tests/testutil.h"

enum pattern { FLAT, TWO_LEVEL, FAINT, FEW_LEVELS, GRADIENT, NOISE, TEXT, PATTERNS };
static const char *const pattern_names[PATTERNS] = {"flat", "two-level", "faint", "few-levels", "gradient",
                                                    "noise", "text"};

static void make(enum pattern p, uint8_t *g, int w, int h, uint32_t *rng)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t v;
            switch (p) {
            case FLAT: /* every variance 0; Wolf's largest deviation is sqrt(DBL_MIN) */
                v = 131;
                break;
            case FAINT: /* Wolf's largest deviation at most 0.5: its margin widens */
                v = (uint8_t)(128 + (test_random(rng) % 5 == 0));
                break;
            case TWO_LEVEL:
                v = (x / 4 + y / 3) % 2 ? 100 : 140;
                break;
            case FEW_LEVELS: /* flat patches of three levels with a few odd pixels */
                v = (uint8_t)(60 + 60 * ((x / 9 + y / 7) % 3));
                if (test_random(rng) % 97 == 0)
                    v = (uint8_t)(v + 1);
                break;
            case GRADIENT:
                v = (uint8_t)((x * 3 + y) / 5);
                break;
            case NOISE:
                v = (uint8_t)test_random(rng);
                break;
            default: /* TEXT */
                v = (x / 2 + y / 3) % 13 == 0 ? (uint8_t)(30 + test_random(rng) % 4) : 220;
                break;
            }
            g[(size_t)y * w + x] = v;
        }
}

int main(void)
{
    static const struct { int w, h; } sizes[] = {{1, 1}, {5, 3}, {61, 47}, {300, 90}, {128, 200}};
    static const int windows[] = {1, 3, 7, 15, 31, 75, 255};
    static const double ks[] = {0, 0.2, -0.3, 0.5, 1, -2, 3, 1e6};
    static const ref_method refs[] = {REF_NIBLACK, REF_SAUVOLA, REF_NICK, REF_WOLF};
    static const db_local_method methods[] = {DB_LOCAL_NIBLACK, DB_LOCAL_SAUVOLA, DB_LOCAL_NICK, DB_LOCAL_WOLF};
    static const char *const names[] = {"niblack", "sauvola", "nick", "wolf"};
    uint32_t rng = 2024;
    int runs = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int p = 0; p < PATTERNS; p++) {
            int w = sizes[s].w, h = sizes[s].h;
            size_t n = (size_t)w * (size_t)h;
            uint8_t *g = malloc(n), *expect = malloc(n), *got = malloc(n);
            double *mean = malloc(n * sizeof *mean), *var = malloc(n * sizeof *var);
            make((enum pattern)p, g, w, h, &rng);
            for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; wi++) {
                if (windows[wi] > 31 && n > 61 * 47)
                    continue;
                ref_window_stats(g, w, h, windows[wi], mean, var);
                for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                    for (size_t m = 0; m < 4; m++) {
                        ref_threshold(g, n, mean, var, refs[m], ks[ki], expect);
                        int threads = 1 + (int)(runs % 7);
                        db_local_args a = {.width = w, .height = h, .half = (windows[wi] - 1) / 2,
                                           .method = methods[m], .threads = threads, .k = ks[ki]};
                        void *work = malloc(db_local_work_bytes(&a));
                        void *ptrs[3] = {g, got, work};
                        memset(got, 7, n);
                        db_local_host(ptrs, &a);
                        size_t d = test_diff(expect, got, n);
                        CHECK(d == 0, "%s, %s %dx%d, window %d, k %g, %d threads: %zu pixels differ", names[m],
                              pattern_names[p], w, h, windows[wi], ks[ki], threads, d);
                        free(work);
                        runs++;
                    }
            }
            free(g);
            free(expect);
            free(got);
            free(mean);
            free(var);
        }
    printf("%d runs\n", runs);
    return test_result("test_local_host");
}
