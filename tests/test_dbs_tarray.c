/*
** test_dbs_tarray.c — the clipping-free threshold array (algorithms/dbs_tarray.c,
** docs/dbs.md §4) against computations written here: the level counts from
** the rounding formula, u(T) by brute force over all pairs, the random
** placement rebuilt from db_dbs_hash and the sort rule, local optimality by
** trying every single move, the whole construction done the slow way on small
** arrays, and the disk cache read back byte by byte. Needs no OpenCL device.
*/
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/dbs.h"
#include "runtime/sha256.h"
#include "runtime/util.h"
#include "tests/testutil.h"

static char cache_dir[64];

/* n_i = round((i+1) m^2 / 255) - round(i m^2 / 255); j m^2 / 255 is never a
** half, so rounding the double is exact. */
static long level_count(int m, int i)
{
    return lround((double)(i + 1) * m * m / 255.0) - lround((double)i * m * m / 255.0);
}

/* u(T) by brute force: every assigned element against every other. */
static double brute_uniformity(int m, const uint8_t *t)
{
    int n = 0;
    int *xs = malloc((size_t)m * m * sizeof *xs), *ys = malloc((size_t)m * m * sizeof *ys);
    int *ls = malloc((size_t)m * m * sizeof *ls);
    for (int y = 0; y < m; y++)
        for (int x = 0; x < m; x++)
            if (t[y * m + x] != 255) {
                xs[n] = x;
                ys[n] = y;
                ls[n++] = t[y * m + x];
            }
    double sum = 0;
    for (int a = 0; a < n; a++) {
        double best = m;
        for (int b = 0; b < n; b++) {
            if (b == a || ls[b] > ls[a])
                continue;
            int dx = abs(xs[a] - xs[b]), dy = abs(ys[a] - ys[b]);
            dx = dx < m - dx ? dx : m - dx;
            dy = dy < m - dy ? dy : m - dy;
            double d = sqrt((double)dx * dx + (double)dy * dy);
            if (d < best)
                best = d;
        }
        sum += best;
    }
    free(xs);
    free(ys);
    free(ls);
    return sum;
}

static int close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* t restricted to levels < below (others unassigned), into r. */
static void restrict_levels(int m, const uint8_t *t, int below, uint8_t *r)
{
    for (int p = 0; p < m * m; p++)
        r[p] = t[p] < below ? t[p] : 255;
}

typedef struct keyed {
    uint32_t key;
    int pos;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The random placement of level i into the unassigned positions of t: keys
** from db_dbs_hash(i m^2 + p, seed), sorted with the positions, the first n_i. */
static void place_random(int m, uint8_t *t, int i, uint32_t seed)
{
    keyed *k = malloc((size_t)m * m * sizeof *k);
    int n = 0;
    for (int p = 0; p < m * m; p++)
        if (t[p] == 255)
            k[n++] = (keyed){db_dbs_hash((uint32_t)(i * m * m + p), seed), p};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    long want = level_count(m, i);
    for (int j = 0; j < n && j < want; j++)
        t[k[j].pos] = (uint8_t)i;
    free(k);
}

/* 1. Every level has n_i elements; nothing else is assigned. */
static void check_counts(int m, int levels, const uint8_t *t)
{
    long count[256] = {0};
    for (int p = 0; p < m * m; p++)
        count[t[p]]++;
    long assigned = 0;
    for (int i = 0; i < levels; i++) {
        CHECK(count[i] == level_count(m, i), "m %d levels %d: level %d has %ld elements, want %ld", m, levels, i,
              count[i], level_count(m, i));
        assigned += count[i];
    }
    CHECK(assigned + count[255] == (long)m * m, "m %d levels %d: elements of levels >= %d", m, levels, levels);
}

static uint8_t *make(int m, int levels, uint32_t seed)
{
    uint8_t *t = malloc((size_t)m * m);
    db_status st = db_dbs_tarray_make(m, levels, seed, t);
    CHECK(st == DB_OK, "make(%d, %d, %u): %s", m, levels, (unsigned)seed, db_error_message());
    return t;
}

static void test_counts(void)
{
    static const struct {
        int m, levels;
    } cases[] = {{16, 254}, {16, 9}, {37, 0}, {37, 1}, {37, 254}, {64, 6}, {64, 40}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *t = make(cases[c].m, cases[c].levels, 1);
        check_counts(cases[c].m, cases[c].levels, t);
        free(t);
    }
    /* 1028 elements per level for m = 512 (512^2 / 255 = 1028.02; docs/dbs.md §4). */
    for (int i = 0; i < 10; i++)
        CHECK(level_count(512, i) == 1028, "n_%d at m = 512 is %ld", i, level_count(512, i));
    uint64_t t0 = db_now_ns();
    uint8_t *t8 = make(512, 8, 1);
    uint64_t t1 = db_now_ns();
    uint8_t *t10 = make(512, 10, 1);
    printf("make(512, 8, 1): %.3f s; make(512, 10, 1): %.3f s\n", (t1 - t0) * 1e-9, (db_now_ns() - t1) * 1e-9);
    check_counts(512, 8, t8);
    check_counts(512, 10, t10);
    uint8_t *r = malloc(512 * 512);
    restrict_levels(512, t10, 8, r);
    CHECK(!memcmp(r, t8, 512 * 512), "m 512: the 8-level array is not the prefix of the 10-level one");
    double u = db_dbs_tarray_uniformity(512, t10), want = brute_uniformity(512, t10);
    CHECK(close_rel(u, want), "m 512, 10 levels: u(T) %.12f, brute force %.12f", u, want);
    free(r);
    free(t8);
    free(t10);
}

/* 2 and 3. Same arguments, same array; another seed, another array; fewer
** levels, the prefix. */
static void test_determinism(void)
{
    uint8_t *a = make(64, 6, 1), *b = make(64, 6, 1), *c = make(64, 6, 2);
    CHECK(!memcmp(a, b, 64 * 64), "two makes of (64, 6, 1) differ");
    CHECK(memcmp(a, c, 64 * 64), "seeds 1 and 2 give the same array");
    free(a);
    free(b);
    free(c);

    static const struct {
        int m, few, many;
        uint32_t seed;
    } cases[] = {{64, 3, 5, 1}, {64, 3, 5, 77}, {37, 100, 254, 3}, {128, 1, 4, 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int m = cases[k].m;
        uint8_t *few = make(m, cases[k].few, cases[k].seed), *many = make(m, cases[k].many, cases[k].seed);
        uint8_t *r = malloc((size_t)m * m);
        restrict_levels(m, many, cases[k].few, r);
        CHECK(!memcmp(r, few, (size_t)m * m), "m %d seed %u: %d levels are not the prefix of %d", m,
              (unsigned)cases[k].seed, cases[k].few, cases[k].many);
        free(r);
        free(few);
        free(many);
    }
}

/* 4. db_dbs_tarray_uniformity against the brute force. */
static void test_uniformity(void)
{
    /* By hand, on an 8x8 torus: level 0 at (row 0, col 0) and (0, 7), one
    ** apart across the edge; level 1 at (4, 4): 5 from (0, 7) (dx 3, dy 4). */
    uint8_t t[64];
    memset(t, 255, sizeof t);
    t[0] = 0;
    t[7] = 0;
    t[4 * 8 + 4] = 1;
    CHECK(close_rel(db_dbs_tarray_uniformity(8, t), 7.0), "hand-made 8x8: u(T) %.12f, want 7",
          db_dbs_tarray_uniformity(8, t));
    CHECK(close_rel(brute_uniformity(8, t), 7.0), "hand-made 8x8: brute force %.12f, want 7", brute_uniformity(8, t));
    /* A lone element has u = m; a level-1 element does not count for level 0. */
    memset(t, 255, sizeof t);
    t[9] = 0;
    CHECK(close_rel(db_dbs_tarray_uniformity(8, t), 8.0), "one element: u(T) %.12f, want 8",
          db_dbs_tarray_uniformity(8, t));
    t[10] = 1;
    CHECK(close_rel(db_dbs_tarray_uniformity(8, t), 9.0), "two levels: u(T) %.12f, want 9",
          db_dbs_tarray_uniformity(8, t));
    memset(t, 255, sizeof t);
    CHECK(db_dbs_tarray_uniformity(8, t) == 0.0, "empty array: u(T) %.12f", db_dbs_tarray_uniformity(8, t));
    /* Odd sides (the torus wraps unevenly), all ties. */
    uint8_t s[5 * 5];
    for (int p = 0; p < 25; p++)
        s[p] = (uint8_t)(p % 3 == 0 ? 0 : p % 3 == 1 ? 2 : 255);
    CHECK(close_rel(db_dbs_tarray_uniformity(5, s), brute_uniformity(5, s)), "5x5: u(T) %.12f, brute force %.12f",
          db_dbs_tarray_uniformity(5, s), brute_uniformity(5, s));

    uint8_t *a = make(64, 6, 1);
    double u = db_dbs_tarray_uniformity(64, a), want = brute_uniformity(64, a);
    CHECK(close_rel(u, want), "m 64, 6 levels: u(T) %.12f, brute force %.12f", u, want);
    free(a);

    /* Random arrays with every level and sparse ones, on odd and even sides. */
    uint32_t rng = 12345;
    static const int sides[] = {2, 3, 31, 96};
    for (size_t k = 0; k < sizeof sides / sizeof sides[0]; k++)
        for (int sparse = 0; sparse < 2; sparse++) {
            int m = sides[k];
            uint8_t *r = malloc((size_t)m * m);
            for (int p = 0; p < m * m; p++) {
                uint32_t x = test_random(&rng);
                r[p] = sparse ? (x % 50 == 0 ? (uint8_t)(x / 50 % 4) : 255) : (uint8_t)(x % 256);
            }
            u = db_dbs_tarray_uniformity(m, r);
            want = brute_uniformity(m, r);
            CHECK(close_rel(u, want), "random %dx%d (sparse %d): u(T) %.12f, brute force %.12f", m, m, sparse, u,
                  want);
            free(r);
        }

    /* Speed on the largest case: every level of 0..254 in a 512x512 array. */
    uint8_t *big = malloc(512 * 512);
    for (int p = 0; p < 512 * 512; p++)
        big[p] = (uint8_t)(test_random(&rng) % 255);
    uint64_t t0 = db_now_ns();
    u = db_dbs_tarray_uniformity(512, big);
    printf("uniformity of a 512x512 array with 255 levels: %.3f s\n", (db_now_ns() - t0) * 1e-9);
    CHECK(u > 0 && isfinite(u), "512x512 random: u(T) %f", u);
    free(big);
}

/* 5. At the end of each level no single move of one of its elements to an
** unassigned neighbour raises u(T) by more than 1e-9; the array restricted
** to levels <= i is the state when level i was done. */
static void check_local_optimum(int m, int levels, uint32_t seed)
{
    uint8_t *t = make(m, levels, seed), *r = malloc((size_t)m * m);
    for (int i = 0; i < levels; i++) {
        restrict_levels(m, t, i + 1, r);
        double base = brute_uniformity(m, r);
        int tried = 0;
        for (int p = 0; p < m * m; p++) {
            if (r[p] != i)
                continue;
            int x = p % m, y = p / m;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int q = (y + dy + m) % m * m + (x + dx + m) % m;
                    if ((dx == 0 && dy == 0) || r[q] != 255)
                        continue;
                    r[p] = 255;
                    r[q] = (uint8_t)i;
                    double moved = brute_uniformity(m, r);
                    r[q] = 255;
                    r[p] = (uint8_t)i;
                    tried++;
                    CHECK(moved - base <= 1e-9, "m %d seed %u level %d: moving (%d, %d) by (%d, %d) raises u(T) by %g",
                          m, (unsigned)seed, i, y, x, dy, dx, moved - base);
                }
        }
        CHECK(tried > 0, "m %d level %d: no move tried", m, i);
    }
    free(r);
    free(t);
}

/* 6. The moves help: level by level, the level's share of u(T) is at least
** that of its random placement over the same lower levels (moves only ever
** raise it), and the whole array beats one placed at random with no moves. */
static double level_share(int m, const uint8_t *t, int i)
{
    uint8_t *r = malloc((size_t)m * m);
    restrict_levels(m, t, i + 1, r);
    double all = brute_uniformity(m, r);
    restrict_levels(m, t, i, r);
    double below = brute_uniformity(m, r);
    free(r);
    return all - below;
}

static void check_improves(int m, int levels, uint32_t seed)
{
    uint8_t *t = make(m, levels, seed), *r = malloc((size_t)m * m), *plain = malloc((size_t)m * m);
    memset(plain, 255, (size_t)m * m);
    int strictly = 0;
    for (int i = 0; i < levels; i++) {
        restrict_levels(m, t, i, r);
        place_random(m, r, i, seed);
        place_random(m, plain, i, seed);
        double opt = level_share(m, t, i), rnd = level_share(m, r, i);
        CHECK(opt >= rnd - 1e-9, "m %d seed %u level %d: u share %.6f after the moves, %.6f before", m,
              (unsigned)seed, i, opt, rnd);
        strictly += opt > rnd + 1e-9;
    }
    CHECK(strictly == levels, "m %d seed %u: only %d of %d levels improved", m, (unsigned)seed, strictly, levels);
    double u = brute_uniformity(m, t), u0 = brute_uniformity(m, plain);
    CHECK(u > u0, "m %d seed %u: u(T) %.3f with moves, %.3f without", m, (unsigned)seed, u, u0);
    printf("m %d, %d levels, seed %u: u(T) %.1f, random placement %.1f\n", m, levels, (unsigned)seed, u, u0);
    free(plain);
    free(r);
    free(t);
}

/* Sum of u over the elements of level i in t, where t holds levels <= i only:
** every element of the level against every element, by brute force. */
static double level_sum(int m, const uint8_t *t, int i)
{
    int *all = malloc((size_t)m * m * sizeof *all), n = 0;
    for (int p = 0; p < m * m; p++)
        if (t[p] != 255)
            all[n++] = p;
    double sum = 0;
    for (int a = 0; a < n; a++) {
        int p = all[a];
        if (t[p] != i)
            continue;
        double best = m;
        for (int b = 0; b < n; b++) {
            int q = all[b];
            if (q == p)
                continue;
            int dx = abs(p % m - q % m), dy = abs(p / m - q / m);
            dx = dx < m - dx ? dx : m - dx;
            dy = dy < m - dy ? dy : m - dy;
            double d = sqrt((double)dx * dx + (double)dy * dy);
            if (d < best)
                best = d;
        }
        sum += best;
    }
    free(all);
    return sum;
}

/* The construction of docs/dbs.md §4 the slow way: the placement order rebuilt from
** db_dbs_hash, and each gain the brute-force change of the level's sum (lower
** levels never change). Gains that agree to 1e-10 count as a tie, so that
** rounding in these long sums cannot turn an exact tie into a different
** choice; the first of the tied neighbours wins. */
static void reference_make(int m, int levels, uint32_t seed, uint8_t *t)
{
    static const int ndy[8] = {-1, -1, -1, 0, 0, 1, 1, 1}, ndx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
    memset(t, 255, (size_t)m * m);
    keyed *k = malloc((size_t)m * m * sizeof *k);
    int *order = malloc((size_t)m * m * sizeof *order);
    for (int i = 0; i < levels; i++) {
        int n = 0;
        for (int p = 0; p < m * m; p++)
            if (t[p] == 255)
                k[n++] = (keyed){db_dbs_hash((uint32_t)(i * m * m + p), seed), p};
        qsort(k, (size_t)n, sizeof *k, cmp_keyed);
        if (n > level_count(m, i))
            n = (int)level_count(m, i);
        for (int j = 0; j < n; j++) {
            order[j] = k[j].pos;
            t[k[j].pos] = (uint8_t)i;
        }
        for (int sweep = 0; sweep < 100; sweep++) {
            int moves = 0;
            for (int j = 0; j < n; j++) {
                int p = order[j], x = p % m, y = p / m;
                double base = level_sum(m, t, i), gain[8], best = -INFINITY;
                int target[8];
                for (int d = 0; d < 8; d++) {
                    target[d] = (y + ndy[d] + m) % m * m + (x + ndx[d] + m) % m;
                    gain[d] = -INFINITY;
                    if (t[target[d]] != 255)
                        continue;
                    t[p] = 255;
                    t[target[d]] = (uint8_t)i;
                    gain[d] = level_sum(m, t, i) - base;
                    t[target[d]] = 255;
                    t[p] = (uint8_t)i;
                    best = gain[d] > best ? gain[d] : best;
                }
                if (!(best > 1e-9))
                    continue;
                int d = 0;
                while (gain[d] < best - 1e-10)
                    d++;
                t[p] = 255;
                t[target[d]] = (uint8_t)i;
                order[j] = target[d];
                moves++;
            }
            if (!moves)
                break;
        }
    }
    free(order);
    free(k);
}

/* 8. The array is exactly the slow construction's. */
static void check_reference(int m, int levels, uint32_t seed)
{
    uint8_t *t = make(m, levels, seed), *r = malloc((size_t)m * m);
    reference_make(m, levels, seed, r);
    CHECK(!memcmp(t, r, (size_t)m * m), "m %d, %d levels, seed %u: %zu elements differ from the slow construction",
          m, levels, (unsigned)seed, test_diff(t, r, (size_t)m * m));
    free(r);
    free(t);
}

/* Reads a cache file and checks it is the array t of (m, levels, seed). */
static void check_file(int m, int levels, uint32_t seed, const uint8_t *t)
{
    char path[256];
    snprintf(path, sizeof path, "%s/dbs-tarray-%d-%d-%u.bin", cache_dir, m, levels, (unsigned)seed);
    size_t n = 0;
    char *text = NULL;
    db_read_file(path, DB_READ_DATA_MAX, &text, &n);
    uint8_t *f = (uint8_t *)text;
    CHECK(f != NULL, "no cache file %s", path);
    if (!f)
        return;
    CHECK(n == 52 + (size_t)m * m, "%s: %zu bytes, want %zu", path, n, 52 + (size_t)m * m);
    if (n == 52 + (size_t)m * m) {
        CHECK(!memcmp(f, "DBSTARR1", 8), "%s: bad magic", path);
        uint32_t v[3];
        for (int k = 0; k < 3; k++)
            v[k] = f[8 + 4 * k] | f[9 + 4 * k] << 8 | f[10 + 4 * k] << 16 | (uint32_t)f[11 + 4 * k] << 24;
        CHECK(v[0] == (uint32_t)m && v[1] == (uint32_t)levels && v[2] == seed, "%s: header %u %u %u", path, v[0],
              v[1], v[2]);
        db_sha256 s;
        uint8_t digest[32];
        db_sha256_init(&s);
        db_sha256_update(&s, f + 52, (size_t)m * m);
        db_sha256_final(&s, digest);
        CHECK(!memcmp(digest, f + 20, 32), "%s: the checksum does not match the payload", path);
        CHECK(!memcmp(f + 52, t, (size_t)m * m), "%s: the payload is not the array", path);
    }
    free(f);
}

/* Writes a cache file for (m, levels, seed) holding `payload` with the header
** fields hm, hlevels and a correct or broken checksum. */
static void write_file(int m, int levels, uint32_t seed, int hm, int hlevels, const uint8_t *payload, int break_sum)
{
    char path[256];
    snprintf(path, sizeof path, "%s/dbs-tarray-%d-%d-%u.bin", cache_dir, m, levels, (unsigned)seed);
    size_t n = 52 + (size_t)hm * hm;
    uint8_t *f = malloc(n);
    memcpy(f, "DBSTARR1", 8);
    uint32_t v[3] = {(uint32_t)hm, (uint32_t)hlevels, seed};
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 4; b++)
            f[8 + 4 * k + b] = (uint8_t)(v[k] >> (8 * b));
    db_sha256 s;
    db_sha256_init(&s);
    db_sha256_update(&s, payload, (size_t)hm * hm);
    db_sha256_final(&s, f + 20);
    f[20] ^= (uint8_t)break_sum;
    memcpy(f + 52, payload, (size_t)hm * hm);
    FILE *out = fopen(path, "wb");
    CHECK(out && fwrite(f, 1, n, out) == n && fclose(out) == 0, "cannot write %s", path);
    free(f);
}

typedef struct getter {
    const uint8_t *got;
} getter;

static void *get_in_thread(void *arg)
{
    ((getter *)arg)->got = db_dbs_tarray_get(48, 3, 11);
    return NULL;
}

/* 7. The memory and disk cache of db_dbs_tarray_get. */
static void test_cache(void)
{
    uint8_t *want = make(64, 3, 7);
    const uint8_t *got = db_dbs_tarray_get(64, 3, 7);
    CHECK(got && !memcmp(got, want, 64 * 64), "get(64, 3, 7) is not make(64, 3, 7)");
    check_file(64, 3, 7, want);
    CHECK(db_dbs_tarray_get(64, 3, 7) == got, "a second get(64, 3, 7) gives another pointer");
    free(want);

    /* Garbage in the file: made again and the file rewritten. */
    char path[256];
    snprintf(path, sizeof path, "%s/dbs-tarray-64-4-9.bin", cache_dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && fputs("this is not a threshold array\n", f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    want = make(64, 4, 9);
    got = db_dbs_tarray_get(64, 4, 9);
    CHECK(got && !memcmp(got, want, 64 * 64), "get(64, 4, 9) over a garbage file is not make(64, 4, 9)");
    check_file(64, 4, 9, want);
    CHECK(db_dbs_tarray_get(64, 4, 9) == got, "a second get(64, 4, 9) gives another pointer");

    /* Well-formed files that do not match: a broken checksum, another level
    ** count in the header, another side. Each is made again and rewritten. */
    uint8_t *zeros = calloc(64 * 64, 1);
    write_file(64, 2, 9, 64, 2, zeros, 1);
    write_file(64, 5, 9, 64, 4, want, 0);
    write_file(64, 6, 9, 32, 6, zeros, 0);
    static const int lv[] = {2, 5, 6};
    for (int k = 0; k < 3; k++) {
        uint8_t *w = make(64, lv[k], 9);
        got = db_dbs_tarray_get(64, lv[k], 9);
        CHECK(got && !memcmp(got, w, 64 * 64), "get(64, %d, 9) over a mismatched file is not the made array", lv[k]);
        check_file(64, lv[k], 9, w);
        free(w);
    }
    free(want);

    /* A valid file is what get returns, even when it is not what make gives. */
    uint8_t odd[32 * 32];
    memset(odd, 255, sizeof odd);
    odd[0] = 0;
    odd[100] = 1;
    write_file(32, 2, 5, 32, 2, odd, 0);
    got = db_dbs_tarray_get(32, 2, 5);
    CHECK(got && !memcmp(got, odd, sizeof odd), "get(32, 2, 5) did not read the cache file");
    free(zeros);

    /* Threads asking at once all get the one array. */
    pthread_t th[4];
    getter g[4];
    for (int k = 0; k < 4; k++)
        CHECK(pthread_create(&th[k], NULL, get_in_thread, &g[k]) == 0, "pthread_create");
    for (int k = 0; k < 4; k++)
        pthread_join(th[k], NULL);
    want = make(48, 3, 11);
    for (int k = 0; k < 4; k++)
        CHECK(g[k].got == g[0].got && g[k].got && !memcmp(g[k].got, want, 48 * 48), "thread %d: another array", k);
    check_file(48, 3, 11, want);
    free(want);

    CHECK(db_dbs_tarray_get(1, 3, 1) == NULL && db_error_status() == DB_ERR_USAGE, "get with side 1");
    CHECK(db_dbs_tarray_get(64, 255, 1) == NULL && db_error_status() == DB_ERR_USAGE, "get with 255 levels");
}

/* Removes the cache directory and its files. */
static void remove_cache_dir(void)
{
    static const char *names[] = {"64-3-7", "64-4-9", "64-2-9", "64-5-9", "64-6-9", "32-2-5", "48-3-11"};
    char path[256];
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        snprintf(path, sizeof path, "%s/dbs-tarray-%s.bin", cache_dir, names[k]);
        unlink(path);
    }
    if (rmdir(cache_dir) != 0)
        fprintf(stderr, "note: %s not removed (unexpected files in it)\n", cache_dir);
}

int main(void)
{
    /* A fresh cache directory before any library call reads the setting. */
    snprintf(cache_dir, sizeof cache_dir, "/tmp/docbin-tarray-XXXXXX");
    if (!mkdtemp(cache_dir) || setenv("DOCBIN_CACHE_DIR", cache_dir, 1) != 0) {
        perror("mkdtemp");
        return 1;
    }

    test_counts();
    test_determinism();
    test_uniformity();
    check_local_optimum(64, 4, 1);
    check_local_optimum(64, 4, 2);
    check_local_optimum(128, 4, 3);
    check_local_optimum(16, 30, 4);
    check_improves(64, 6, 1);
    check_improves(128, 4, 2);
    check_reference(16, 40, 1);
    check_reference(21, 12, 2);
    check_reference(32, 8, 3);
    check_reference(64, 4, 4);
    check_reference(100, 3, 5);
    test_cache();

    remove_cache_dir();
    return test_result("dbs_tarray");
}
