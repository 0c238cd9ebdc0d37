/*
** reference_dbs.h — a plain-C reference of clipping-free DBS halftoning
** (docs/dbs.md §§2–5), for the tests.
**
** It follows docs/dbs.md step by step with straightforward loops and shares no
** code with the library, so that a disagreement points at one of the two.
** The model is made once in double (the Gaussian) and rounded; from there on
** everything is integer, so the result does not depend on the compiler.
**
** Layouts: V[(dy+4)*9 + dx+4] for dy, dx in -4..4; CVV[(dy+8)*17 + dx+8] for
** dy, dx in -8..8; images row-major, width w, height h. b is 0/1 (1 = white),
** frozen is 0/1 (1 = a determined minority dot of docs/dbs.md §4).
*/
#ifndef DB_TESTS_REFERENCE_DBS_H
#define DB_TESTS_REFERENCE_DBS_H

#include <stdint.h>

/* Radius of the filter (9x9) and of its autocorrelation (17x17). */
enum { REF_DBS_W = 4, REF_DBS_TAPS = 9, REF_DBS_CW = 8, REF_DBS_CTAPS = 17 };

/* What a visit did. */
enum { REF_DBS_NONE = 0, REF_DBS_TOGGLE = 1, REF_DBS_SWAP = 2 };

/* Signed 128-bit integer for energies (a GCC/Clang extension). */
__extension__ typedef __int128 ref_dbs_i128;

/* What a search did. rounds: raster passes or block rounds run, the last one
** (which changed nothing when converged) included. converged: 1 if the last
** round changed nothing. toggles, swaps: accepted changes. */
typedef struct ref_dbs_stats {
    int rounds;
    int converged;
    int64_t toggles, swaps;
} ref_dbs_stats;

/* The generator of docs/dbs.md §3: MurmurHash3 finaliser of index*0x9E3779B9 + seed
** (mod 2^32). */
uint32_t ref_dbs_hash(uint32_t index, uint32_t seed);

/* The fixed-point model of docs/dbs.md §2 for sigma: V = llround(2^20 v) with v the
** normalised 9x9 Gaussian (double), *sv = sum of V, CVV = exact integer
** autocorrelation of V (CVV(d) = sum_x V(x) V(x+d)). */
void ref_dbs_model(double sigma, int32_t V[81], int64_t *sv, int64_t CVV[289]);

/* Labels and initial halftone (docs/dbs.md §§3–4) with D gray levels (shadow
** A < D, highlight A > 255 - D, shadow wins if both) and the m x m threshold
** array tarray (tiled; 255 = unassigned; may be NULL when D <= 0). Writes b
** and frozen (w*h bytes each). */
void ref_dbs_init(const uint8_t *gray, int w, int h, const uint8_t *tarray, int m, int D, uint32_t seed,
                  uint8_t *b, uint8_t *frozen);

/* The error state from scratch: C(y) = S_V (V*A)(y) - 255 (CVV*b)(y) for
** every image pixel y (A and b zero outside the image). */
void ref_dbs_error(const uint8_t *gray, const uint8_t *b, int w, int h, const int32_t V[81], int64_t sv,
                   const int64_t CVV[289], int64_t *C);

/* E = sum over the whole plane of e(x)^2, e = S_V A - 255 (V*b), by brute
** force (e vanishes more than 4 pixels outside the image). */
ref_dbs_i128 ref_dbs_energy(const uint8_t *gray, const uint8_t *b, int w, int h, const int32_t V[81],
                            int64_t sv);

/* A search in progress: borrowed arrays (w*h each) and the model. */
typedef struct ref_dbs_search {
    int w, h;
    uint8_t *b;
    const uint8_t *frozen;
    int64_t *C;
    const int64_t *CVV;
    int64_t toggles, swaps;
} ref_dbs_search;

/* Visits pixel (x, y) (docs/dbs.md §3): nothing if frozen; else evaluates the toggle
** and the swaps with the 8 neighbours in raster order, takes the minimum delta
** (ties to the earlier candidate) and applies it iff it is < 0, updating b, C
** and the counters. Returns REF_DBS_NONE, _TOGGLE or _SWAP; on a change,
** *delta (may be NULL) gets the applied delta (E drops by -255*delta) and
** *qx, *qy (may be NULL) the swap partner (x, y for a toggle). */
int ref_dbs_visit(ref_dbs_search *s, int x, int y, int64_t *delta, int *qx, int *qy);

/* Raster search: passes over all pixels (y outer, x inner) until a pass
** changes nothing or max_passes ran. Fills *stats (may be NULL). */
void ref_dbs_raster(ref_dbs_search *s, int max_passes, ref_dbs_stats *stats);

/* Koge's block search (docs/dbs.md §5) with k x k blocks from (0,0): rounds of 4
** group sweeps (0,0), (0,1), (1,0), (1,1) (row parity, column parity); each
** block of the group visits its pixels once in raster order. The blocks of a
** group are run one after another (by, then bx); for k >= 10 they do not
** interact, so any order (or a parallel run) gives the same result. Rounds
** repeat until one changes nothing or max_rounds ran. Fills *stats (may be
** NULL). k >= 1. */
void ref_dbs_blocks(ref_dbs_search *s, int k, int max_rounds, ref_dbs_stats *stats);

/* The whole pipeline: model(sigma), init, error, then the raster search
** (block == 0, max_rounds passes) or the block search (block = k >= 1,
** max_rounds rounds). out (w*h): 255*b. Returns 0, or -1 on a bad argument
** (w, h < 1; block < 0; D > 0 without a threshold array or with m < 1) or
** when memory runs out (out untouched). */
int ref_dbs_halftone(const uint8_t *gray, int w, int h, const uint8_t *tarray, int m, int D, uint32_t seed,
                     double sigma, int block, int max_rounds, uint8_t *out, ref_dbs_stats *stats);

#endif
