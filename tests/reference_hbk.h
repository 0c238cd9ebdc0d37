/*
** reference_hbk.h — a plain-C reference of HBK (docs/hbk.md), for the tests,
** and for bench/hbk_rules.c the final labelling rules docs/hbk.md compares.
**
** It follows docs/hbk.md step by step with straightforward loops and shares no
** code with the library, so that a disagreement points at one of the two.
** Everything is integer: the result does not depend on the compiler or on
** the order of any loop.
*/
#ifndef DB_TESTS_REFERENCE_HBK_H
#define DB_TESTS_REFERENCE_HBK_H

#include <stdint.h>

/* The caps L_max and G_max of docs/hbk.md, the defaults of ref_hbk. */
enum { REF_HBK_LOCAL_MAX = 50, REF_HBK_GLOBAL_MAX = 100 };

/* Runs HBK on packed rows (width*channels bytes per row, channels 1 or 3;
** gray is read as R = G = B) with B×B blocks, block 8, 16 or 32.
** out (width*height bytes): 0 = ink, 255 = background.
** Returns the number of outer iterations run (1..REF_HBK_GLOBAL_MAX);
** *converged (may be NULL) is 1 if some outer iteration found G' = G, that
** iteration included, and 0 if the cap stopped the loop.
** Returns -1 and leaves out untouched on a bad argument (sizes < 1, another
** channel count or block size) or when memory runs out. */
int ref_hbk(const uint8_t *pixels, int width, int height, int channels, int block, uint8_t *out,
            int *converged);

/* ref_hbk with the caps as arguments (each >= 1, else -1), so that tests can
** reach the cap paths — the extra assignment after local_max local
** iterations, the unconverged result after global_max outer ones — on small
** images, as the library's local-max and global-max parameters do.
** *passes (may be NULL) receives the assignments of a block's pixels, counted
** over every block and outer iteration: the work the library reports. */
int ref_hbk_caps(const uint8_t *pixels, int width, int height, int channels, int block,
                 int local_max, int global_max, uint8_t *out, int *converged, int64_t *passes);

/* Final labelling rules (docs/hbk.md §5). In each, a pixel is ink only where
** its block's final local centroids say ink; G is the global centroids the
** block's last local k-means started from. */
typedef enum ref_hbk_rule {
    REF_HBK_LOCAL,       /* only that: docbin's first rule */
    REF_HBK_PAPER_BLOCK, /* none in a block whose dark centroid is at least as near G's paper as G's ink */
    REF_HBK_BOTH,        /* and where G says ink */
    REF_HBK_SEPARATION,  /* none in a block whose centroids are less than half as far apart as G's */
    REF_HBK_DOCBIN,      /* that, and none in a block whose split is a single mode: docbin's rule (§4) */
    REF_HBK_RULES
} ref_hbk_rule;

/* ref_hbk_caps with the global loop's treatment of flat blocks chosen
** (flat_to_paper 1: docbin's, §3; 0: every block adds both its clusters to
** the global sums, docbin's first loop), writing the output of each rule r
** whose outs[r] is not NULL (at least one must be; -1 otherwise, as for ref_hbk). */
int ref_hbk_rules(const uint8_t *pixels, int width, int height, int channels, int block, int local_max,
                  int global_max, int flat_to_paper, uint8_t *const outs[REF_HBK_RULES], int *converged,
                  int64_t *passes);

#endif
