/*
** dbs.h — clipping-free DBS halftoning (docs/dbs.md): the fixed-point model of
** the eye, the seeded generator, the threshold array and the sequential search.
**
** Everything that decides a pixel is integer (docs/dbs.md §2), so
** the host code here, the kernels of cl/dbs.cl and every device agree bit for
** bit. Halftone state is one byte per pixel: bit 0 = b (1 = white), bit 1 =
** determined (a frozen minority dot of the clipping-free rule, docs/dbs.md §4).
*/
#ifndef DB_DBS_H
#define DB_DBS_H

#include <stdint.h>
#include "cl/dbs_hash.h"
#include "runtime/error.h"

/* Radius w of the HVS filter (9x9) and of its autocorrelation (17x17). */
enum {
    DB_DBS_W = 4,
    DB_DBS_TAPS = 2 * DB_DBS_W + 1,
    DB_DBS_CW = 2 * DB_DBS_W,
    DB_DBS_CTAPS = 2 * DB_DBS_CW + 1
};

/* Bits of a halftone state byte. */
enum { DB_DBS_WHITE = 1, DB_DBS_FROZEN = 2 };

/* The fixed-point model for one sigma: v[(dy+W)*TAPS + dx+W] = round(2^20 v)
** with v the normalised Gaussian, sv = the sum of v, and cvv = the exact
** autocorrelation of v (17x17, same layout with CW). */
typedef struct db_dbs_model {
    int32_t v[DB_DBS_TAPS * DB_DBS_TAPS];
    int64_t sv;
    int64_t cvv[DB_DBS_CTAPS * DB_DBS_CTAPS];
} db_dbs_model;

/* Fills the model for `sigma`. sigma = 1.2, the default, uses the shipped
** table of docs/dbs.md §2 (no exp() at run time); other values compute it. */
void db_dbs_model_make(double sigma, db_dbs_model *m);

/* Side of the threshold array (docs/dbs.md §4). */
enum { DB_DBS_TARRAY_SIDE = 512 };

/* Makes the clipping-free threshold array of docs/dbs.md §4: t[row*m + col] is the
** level (0..levels-1) of each element, 255 where none was assigned. Levels are
** placed one after another, so the array for L levels is a prefix of the one
** for more. Host code. Fails when out of memory, or with a usage error for m
** outside 2..46340 (squared distances stay in an int) or levels outside 0..254. */
db_status db_dbs_tarray_make(int m, int levels, uint32_t seed, uint8_t *t);

/* The array of db_dbs_tarray_make, made once per (m, levels, seed): from
** memory, else from the disk cache beside the kernel cache (db_cache_dir();
** a corrupt or mismatched file is made again, never trusted), else made and
** stored there atomically. Valid until the process ends; thread-safe. NULL
** with the error set when out of memory. */
const uint8_t *db_dbs_tarray_get(int m, int levels, uint32_t seed);

/* The uniformity u(T) of docs/dbs.md §4: over all assigned elements, the toroidal
** distance to the nearest other element of lower or equal level. */
double db_dbs_tarray_uniformity(int m, const uint8_t *t);

/* A search on the host (docs/dbs.md §3): the image's state bytes and C values
** (int64, C(y) of docs/dbs.md §2), borrowed, and what it did. */
typedef struct db_dbs_search {
    int width, height;
    uint8_t *state;
    int64_t *c;
    const db_dbs_model *model;
    int64_t toggles, swaps;
} db_dbs_search;

/* C(y) = S_V (V*A)(y) - 255 (CVV*b)(y) for every pixel, from the gray image
** and the state bytes (docs/dbs.md §2): the exact error state a search starts from
** (the `init` stage computes the same on its device). */
db_status db_dbs_error_init(const db_dbs_model *m, const uint8_t *gray, const uint8_t *state, int width,
                            int height, int64_t *c);

/* The swap partners of a pixel, (dy, dx), in the order of docs/dbs.md §3. */
extern const int db_dbs_partner_dy[8], db_dbs_partner_dx[8];

/* What a visit did. */
typedef enum db_dbs_change { DB_DBS_NONE, DB_DBS_TOGGLE, DB_DBS_SWAP } db_dbs_change;

/* Visits pixel (x, y): if it is not frozen, evaluates the toggle and the swaps
** with its 8 neighbours (docs/dbs.md §3 order), applies the best one when it lowers
** the error, and updates C. *qx, *qy get a swap's partner. The error drops by
** exactly 255 times the negated delta it applied. */
db_dbs_change db_dbs_visit(db_dbs_search *s, int x, int y, int *qx, int *qy);

/* Sequential raster DBS: passes over the image until one changes nothing
** (*converged = 1) or `max_passes` ran (*converged = 0). Returns the passes run. */
int db_dbs_raster(db_dbs_search *s, int max_passes, int *converged);

#endif
