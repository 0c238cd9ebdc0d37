/*
** dbs_tarray.c — the clipping-free threshold array of docs/dbs.md §4, and the
** process-wide store of the arrays already made (memory, then disk).
**
** Levels are placed one after another. Level i first takes n_i unassigned
** positions chosen by the generator of docs/dbs.md §3 (keys sorted with their positions);
** then, in sweeps over its elements in that placement order, each element
** moves to the unassigned 8-neighbour that increases the uniformity u(T)
** most, until a sweep moves nothing (or after MAX_SWEEPS sweeps).
**
** u(T) sums, over the assigned elements, the toroidal distance to the nearest
** other element of lower or equal level (m when there is none). Distances are
** kept as exact integer squares; only the sums of their roots are floating
** point, added in an order fixed by the algorithm, so the array depends on
** (m, levels, seed) alone.
**
** Nearest-element queries use a bucket grid: the torus cut into nc x nc cells
** of about one element each (remade for every level, as the density grows),
** each cell a linked list of the positions in it.
*/
#include "algorithms/dbs.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/program.h"
#include "runtime/sha256.h"
#include "runtime/util.h"

/* The sweep cap of one level. */
enum { MAX_SWEEPS = 100 };

/* Largest side: m*m and every squared distance fit in an int. */
enum { MAX_SIDE = 46340 };

/* A move is taken only if it raises u(T) by more than this, so that rounding
** in the sums cannot make two positions trade places forever. */
#define MIN_GAIN 1e-9

/* Unassigned elements. */
enum { NONE = 255 };

/* The 8 neighbours in the order of docs/dbs.md §3: (dy, dx). */
static const int nb_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
static const int nb_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

/* What the construction of one array works with. */
typedef struct builder {
    int m;
    uint8_t *t;
    int level;          /* the level being placed and moved */
    /* The bucket grid over the elements of level <= level. */
    int nc, wmin;       /* cells per side; width of the narrowest cell */
    int32_t *cell_of;   /* [m] cell of a row or a column */
    int32_t *head;      /* [nc*nc] first position in a cell, -1 if empty */
    int32_t *next;      /* [m*m] next position in the same cell, -1 at the end */
    /* The elements of the level. */
    int n;
    int32_t *order;     /* [n] positions, in placement order */
    int32_t *u2;        /* [n] squared distance to the nearest other element */
    int32_t *slot;      /* [m*m] index in order of a position of the level */
    int32_t u2max;      /* the largest u2 */
    /* Elements of the level whose u a move of one element may change. */
    int32_t *cand;      /* [n] positions */
    int32_t *cand_ex2;  /* [n] squared nearest distance without the moving element */
    uint64_t *keys;     /* [m*m] placement keys: generator value << 32 | position */
} builder;

/* Number of elements of levels below j: round(j m^2 / 255) in integers (docs/dbs.md §4). */
static int64_t level_start(int64_t m, int64_t j)
{
    return (2 * j * m * m + 255) / 510;
}

/* x modulo n for x in [-n, 2n). */
static inline int wrap(int x, int n)
{
    return x < 0 ? x + n : x >= n ? x - n : x;
}

/* Squared toroidal distance between (x1, y1) and (x2, y2) on the m x m torus. */
static inline int dist2(int m, int x1, int y1, int x2, int y2)
{
    int dx = abs(x1 - x2), dy = abs(y1 - y2);
    if (dx > m - dx)
        dx = m - dx;
    if (dy > m - dy)
        dy = m - dy;
    return dx * dx + dy * dy;
}

/* floor(sqrt(x)) for x >= 0, exact. */
static int isqrt(int64_t x)
{
    int64_t r = (int64_t)sqrt((double)x);
    while (r * r > x)
        r--;
    while ((r + 1) * (r + 1) <= x)
        r++;
    return (int)r;
}

/* qsort order of the placement keys. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reorders a[0..n) (distinct values) so that its k smallest come first, in
** some order; k < n. Quickselect with the middle element as pivot: the keys
** are hash values, so no input is adversarial. Only the chosen set matters,
** and it does not depend on how it was found. */
static void select_smallest(uint64_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    for (;;) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t pivot = a[mid];
        a[mid] = a[hi - 1];
        a[hi - 1] = pivot;
        size_t s = lo;
        for (size_t i = lo; i < hi - 1; i++)
            if (a[i] < pivot) {
                uint64_t x = a[i];
                a[i] = a[s];
                a[s++] = x;
            }
        a[hi - 1] = a[s];
        a[s] = pivot;
        if (s == k)
            return;
        if (s < k)
            lo = s + 1;
        else
            hi = s;
    }
}

/* Adds position p to its cell's list. */
static void grid_insert(builder *b, int32_t p)
{
    int32_t c = b->cell_of[p / b->m] * b->nc + b->cell_of[p % b->m];
    b->next[p] = b->head[c];
    b->head[c] = p;
}

/* Removes position p from its cell's list. */
static void grid_remove(builder *b, int32_t p)
{
    int32_t c = b->cell_of[p / b->m] * b->nc + b->cell_of[p % b->m];
    int32_t *link = &b->head[c];
    while (*link != p)
        link = &b->next[*link];
    *link = b->next[p];
}

/* Makes the grid over the `count` elements of level <= b->level, with cells
** about as wide as their mean spacing. */
static void grid_build(builder *b, int64_t count)
{
    int m = b->m;
    int w = isqrt((int64_t)m * m / (count > 0 ? count : 1));
    if (w < 1)
        w = 1;
    b->nc = m / w;
    b->wmin = m / b->nc;
    for (int x = 0; x < m; x++)
        b->cell_of[x] = (int32_t)((int64_t)x * b->nc / m);
    for (int c = 0; c < b->nc * b->nc; c++)
        b->head[c] = -1;
    for (int32_t p = 0; p < m * m; p++)
        if (b->t[p] <= b->level)
            grid_insert(b, p);
}

/* Squared distance from (x, y) to the nearest element of the grid other than
** the positions skip1 and skip2; m*m when there is none. Rings of cells are
** searched outward until no unsearched cell can hold a nearer element.
**
** Cell offsets are taken in [-(nc/2), (nc-1)/2], so that every cell is seen
** once. A cell at offset a along an axis lies |a|-1 whole cells (each at least
** wmin wide) away either way round, so after ring r every element not yet
** seen is at least r*wmin + 1 away. */
static int nearest2(const builder *b, int x, int y, int32_t skip1, int32_t skip2)
{
    int m = b->m, nc = b->nc;
    int lo = -(nc / 2), hi = (nc - 1) / 2;
    int cx = b->cell_of[x], cy = b->cell_of[y];
    int best = m * m;
    for (int r = 0; r <= nc / 2; r++) {
        for (int dy = -r > lo ? -r : lo; dy <= (r < hi ? r : hi); dy++) {
            int step = dy == -r || dy == r ? 1 : 2 * r; /* a full row, or its two ends */
            for (int dx = -r; dx <= r; dx += step) {
                if (dx < lo || dx > hi)
                    continue;
                int32_t c = wrap(cy + dy, nc) * nc + wrap(cx + dx, nc);
                for (int32_t q = b->head[c]; q >= 0; q = b->next[q]) {
                    if (q == skip1 || q == skip2)
                        continue;
                    int d2 = dist2(m, x, y, q % m, q / m);
                    if (d2 < best)
                        best = d2;
                }
            }
        }
        int64_t reach = (int64_t)r * b->wmin + 1;
        if (best <= reach * reach)
            break;
    }
    return best;
}

/* Recomputes the largest u2 of the level, which bounds how far a move can be
** felt. */
static void update_u2max(builder *b)
{
    b->u2max = 0;
    for (int k = 0; k < b->n; k++)
        if (b->u2[k] > b->u2max)
            b->u2max = b->u2[k];
}

/* Gives level b->level to n unassigned positions: the n smallest by
** (generator value at index level*m^2 + position, position), in that order,
** which is the placement order. Returns how many it placed (all the
** unassigned positions when fewer than n are left). */
static int place_level(builder *b, int64_t n, uint32_t seed)
{
    int m = b->m;
    size_t count = 0;
    uint32_t base = (uint32_t)((uint64_t)b->level * (uint64_t)m * (uint64_t)m);
    for (int32_t p = 0; p < m * m; p++)
        if (b->t[p] == NONE)
            b->keys[count++] = (uint64_t)db_dbs_hash(base + (uint32_t)p, seed) << 32 | (uint32_t)p;
    size_t take = (size_t)n < count ? (size_t)n : count;
    if (take < count)
        select_smallest(b->keys, count, take);
    qsort(b->keys, take, sizeof *b->keys, cmp_u64);
    for (size_t k = 0; k < take; k++) {
        int32_t p = (int32_t)(b->keys[k] & 0xffffffffu);
        b->t[p] = (uint8_t)b->level;
        b->order[k] = p;
        b->slot[p] = (int32_t)k;
    }
    b->n = (int)take;
    return (int)take;
}

/* Tries the moves of the element in slot k of the level to its unassigned
** neighbours and applies the one that raises u(T) most, if any raises it by
** more than MIN_GAIN. Returns 1 if the element moved.
**
** Only elements of the level are affected: the mover, and an element f
** whose nearest distance was reached at the old position p (it may grow) or
** exceeds its distance to the new position p2 (it shrinks). Either way f lies
** within sqrt(u2max) of p or of p2, so a box of cells around p holds them
** all. For each such f, ex2 = its nearest distance without the mover, which
** does not depend on p2; its new u2 is min(ex2, d2(f, p2)). */
static int try_move(builder *b, int k)
{
    int m = b->m;
    int32_t p = b->order[k];
    int px = p % m, py = p / m;

    /* The elements of the level in the box around p, and ex2 of each. */
    int reach = isqrt(b->u2max) + 2;
    int nc = b->nc, lo = -(nc / 2), hi = (nc - 1) / 2;
    int kc = reach / b->wmin + 1;
    int a0 = -kc > lo ? -kc : lo, a1 = kc < hi ? kc : hi;
    int cx = b->cell_of[px], cy = b->cell_of[py];
    int nf = 0;
    for (int dy = a0; dy <= a1; dy++)
        for (int dx = a0; dx <= a1; dx++) {
            int32_t c = wrap(cy + dy, nc) * nc + wrap(cx + dx, nc);
            for (int32_t q = b->head[c]; q >= 0; q = b->next[q]) {
                if (q == p || b->t[q] != b->level)
                    continue;
                int qx = q % m, qy = q / m;
                int u2 = b->u2[b->slot[q]];
                b->cand[nf] = q;
                b->cand_ex2[nf] = dist2(m, qx, qy, px, py) == u2 ? nearest2(b, qx, qy, p, q) : u2;
                nf++;
            }
        }

    /* The gain of each neighbour move: new minus old u over the affected elements. */
    int best_dir = -1, best_e2 = 0;
    double best_gain = MIN_GAIN;
    double old_e = sqrt((double)b->u2[k]);
    for (int d = 0; d < 8; d++) {
        int x2 = wrap(px + nb_dx[d], m), y2 = wrap(py + nb_dy[d], m);
        if (b->t[y2 * m + x2] != NONE)
            continue;
        int e2 = nearest2(b, x2, y2, p, -1);
        double gain = sqrt((double)e2) - old_e;
        for (int j = 0; j < nf; j++) {
            int32_t q = b->cand[j];
            int u2 = b->u2[b->slot[q]];
            int d2 = dist2(m, q % m, q / m, x2, y2);
            int new2 = d2 < b->cand_ex2[j] ? d2 : b->cand_ex2[j];
            if (new2 != u2)
                gain += sqrt((double)new2) - sqrt((double)u2);
        }
        if (gain > best_gain) {
            best_gain = gain;
            best_dir = d;
            best_e2 = e2;
        }
    }
    if (best_dir < 0)
        return 0;

    /* Apply the move. */
    int x2 = wrap(px + nb_dx[best_dir], m), y2 = wrap(py + nb_dy[best_dir], m);
    int32_t p2 = y2 * m + x2;
    grid_remove(b, p);
    b->t[p] = NONE;
    b->t[p2] = (uint8_t)b->level;
    grid_insert(b, p2);
    b->order[k] = p2;
    b->slot[p2] = k;
    b->u2[k] = best_e2;
    for (int j = 0; j < nf; j++) {
        int32_t q = b->cand[j];
        int d2 = dist2(m, q % m, q / m, x2, y2);
        b->u2[b->slot[q]] = d2 < b->cand_ex2[j] ? d2 : b->cand_ex2[j];
    }
    update_u2max(b);
    return 1;
}

/* Moves the elements of the level until a sweep moves none, or MAX_SWEEPS. */
static void optimise_level(builder *b)
{
    for (int k = 0; k < b->n; k++) {
        int32_t p = b->order[k];
        b->u2[k] = nearest2(b, p % b->m, p / b->m, p, -1);
    }
    update_u2max(b);
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        int moves = 0;
        for (int k = 0; k < b->n; k++)
            moves += try_move(b, k);
        if (!moves)
            break;
    }
}

/* Frees what db_dbs_tarray_make allocated (any of it may be NULL). */
static void builder_free(builder *b)
{
    free(b->cell_of);
    free(b->head);
    free(b->next);
    free(b->order);
    free(b->u2);
    free(b->slot);
    free(b->cand);
    free(b->cand_ex2);
    free(b->keys);
}

/* Rejects a side or a level count that the array cannot have. */
static db_status check_args(int m, int levels)
{
    if (m < 2 || m > MAX_SIDE || levels < 0 || levels > 254)
        return db_fail(DB_ERR_USAGE, "DBS threshold array: side %d, %d levels; the side must be 2..%d and the "
                       "levels 0..254", m, levels, MAX_SIDE);
    return DB_OK;
}

db_status db_dbs_tarray_make(int m, int levels, uint32_t seed, uint8_t *t)
{
    db_status st = check_args(m, levels);
    if (st != DB_OK)
        return st;
    size_t mm = (size_t)m * (size_t)m;
    memset(t, NONE, mm);
    if (levels == 0)
        return DB_OK;

    int64_t nmax = 0;
    for (int i = 0; i < levels; i++) {
        int64_t n = level_start(m, i + 1) - level_start(m, i);
        if (n > nmax)
            nmax = n;
    }
    size_t ncap = (size_t)nmax + 1;
    builder b = {.m = m, .t = t};
    b.cell_of = malloc((size_t)m * sizeof *b.cell_of);
    b.head = malloc(mm * sizeof *b.head);
    b.next = malloc(mm * sizeof *b.next);
    b.order = malloc(ncap * sizeof *b.order);
    b.u2 = malloc(ncap * sizeof *b.u2);
    b.slot = malloc(mm * sizeof *b.slot);
    b.cand = malloc(ncap * sizeof *b.cand);
    b.cand_ex2 = malloc(ncap * sizeof *b.cand_ex2);
    b.keys = malloc(mm * sizeof *b.keys);
    if (!b.cell_of || !b.head || !b.next || !b.order || !b.u2 || !b.slot || !b.cand || !b.cand_ex2 || !b.keys) {
        builder_free(&b);
        return db_fail(DB_ERR_NOMEM, "out of memory making the %dx%d DBS threshold array (%zu MiB)", m, m,
                       (mm * 20) >> 20);
    }

    int64_t placed = 0;
    for (int i = 0; i < levels; i++) {
        b.level = i;
        placed += place_level(&b, level_start(m, i + 1) - level_start(m, i), seed);
        if (b.n == 0)
            continue;
        grid_build(&b, placed);
        optimise_level(&b);
    }
    builder_free(&b);
    return DB_OK;
}

/* Squared distance from the element at (x, y) to the nearest other element of
** level <= `level` in t, searching rings of pixels outward (offsets within
** [-(m/2), (m-1)/2], so each pixel once; after ring r nothing nearer than r+1
** is left). m*m when there is none. The elements of one level are at least
** their own u apart, so the rings of a level cover the torus a bounded number
** of times: the whole search is O(levels * m^2) at worst. */
static int nearest2_in_array(int m, const uint8_t *t, int x, int y, int level)
{
    int lo = -(m / 2), hi = (m - 1) / 2;
    int best = m * m;
    for (int r = 1; r <= m / 2; r++) {
        for (int dy = -r > lo ? -r : lo; dy <= (r < hi ? r : hi); dy++) {
            int step = dy == -r || dy == r ? 1 : 2 * r;
            for (int dx = -r; dx <= r; dx += step) {
                if (dx < lo || dx > hi)
                    continue;
                if (t[wrap(y + dy, m) * m + wrap(x + dx, m)] <= level && dx * dx + dy * dy < best)
                    best = dx * dx + dy * dy;
            }
        }
        if (best <= (r + 1) * (r + 1))
            break;
    }
    return best;
}

double db_dbs_tarray_uniformity(int m, const uint8_t *t)
{
    double sum = 0;
    for (int y = 0; y < m; y++)
        for (int x = 0; x < m; x++)
            if (t[y * m + x] != NONE)
                sum += sqrt((double)nearest2_in_array(m, t, x, y, t[y * m + x]));
    return sum;
}

/* The disk cache file: magic, m, levels, seed (uint32 little-endian), the
** SHA-256 of the payload, then the m*m payload bytes. */
static const char file_magic[8] = {'D', 'B', 'S', 'T', 'A', 'R', 'R', '1'};
enum { FILE_HEADER = 8 + 12 + 32 };

/* One array made in this process; never freed. */
typedef struct made_array {
    struct made_array *next;
    int m, levels;
    uint32_t seed;
    uint8_t *t;
} made_array;

static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;
static made_array *made_list;
static int store_warned;

/* Stores v in 4 bytes, least significant first. */
static void put_u32le(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

/* The header of the cache file of t. */
static void file_header(uint8_t h[FILE_HEADER], int m, int levels, uint32_t seed, const uint8_t *t)
{
    db_sha256 s;
    memcpy(h, file_magic, 8);
    put_u32le(h + 8, (uint32_t)m);
    put_u32le(h + 12, (uint32_t)levels);
    put_u32le(h + 16, seed);
    db_sha256_init(&s);
    db_sha256_update(&s, t, (size_t)m * (size_t)m);
    db_sha256_final(&s, h + 20);
}

/* Fills t from the cache file at `path` if it exists and is the array of
** (m, levels, seed) in every byte of its header and its checksum. */
static int load_file(const char *path, int m, int levels, uint32_t seed, uint8_t *t)
{
    size_t mm = (size_t)m * (size_t)m, n = 0;
    char *file;
    if (db_read_file(path, FILE_HEADER + mm, &file, &n) != DB_OK) {
        db_error_clear(); /* no usable cached array: it is made again */
        return 0;
    }
    int ok = 0;
    if (n == FILE_HEADER + mm) {
        const uint8_t *f = (const uint8_t *)file;
        uint8_t h[FILE_HEADER];
        file_header(h, m, levels, seed, f + FILE_HEADER);
        ok = !memcmp(h, f, FILE_HEADER);
        if (ok)
            memcpy(t, f + FILE_HEADER, mm);
    }
    free(file);
    return ok;
}

/* Writes the cache file atomically; a failure only costs a remake next time. */
static void store_file(const char *path, int m, int levels, uint32_t seed, const uint8_t *t)
{
    uint8_t h[FILE_HEADER];
    file_header(h, m, levels, seed, t);
    if (db_write_file_atomic(path, h, sizeof h, t, (size_t)m * (size_t)m) != DB_OK && !store_warned) {
        store_warned = 1;
        db_warn("cannot store the DBS threshold array in the cache: %s", db_error_message());
    }
}

/* One lock for the list and for making: a second caller of the same array
** waits for the first instead of making it again. */
const uint8_t *db_dbs_tarray_get(int m, int levels, uint32_t seed)
{
    pthread_mutex_lock(&made_lock);
    for (made_array *a = made_list; a; a = a->next)
        if (a->m == m && a->levels == levels && a->seed == seed) {
            pthread_mutex_unlock(&made_lock);
            return a->t;
        }

    if (check_args(m, levels) != DB_OK) {
        pthread_mutex_unlock(&made_lock);
        return NULL;
    }
    made_array *a = calloc(1, sizeof *a);
    uint8_t *t = malloc((size_t)m * (size_t)m);
    if (!a || !t) {
        free(a);
        free(t);
        pthread_mutex_unlock(&made_lock);
        db_fail(DB_ERR_NOMEM, "out of memory for the %dx%d DBS threshold array", m, m);
        return NULL;
    }
    const char *dir = db_cache_dir();
    char path[4200] = "";
    if (dir)
        snprintf(path, sizeof path, "%s/dbs-tarray-%d-%d-%u.bin", dir, m, levels, (unsigned)seed);
    if (!dir || !load_file(path, m, levels, seed, t)) {
        if (db_dbs_tarray_make(m, levels, seed, t) != DB_OK) {
            free(a);
            free(t);
            pthread_mutex_unlock(&made_lock);
            return NULL;
        }
        if (dir)
            store_file(path, m, levels, seed, t);
    }
    a->m = m;
    a->levels = levels;
    a->seed = seed;
    a->t = t;
    a->next = made_list;
    made_list = a;
    pthread_mutex_unlock(&made_lock);
    return t;
}
