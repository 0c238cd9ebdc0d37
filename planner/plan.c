/*
** plan.c — the estimate, measure and wisdom (planner/plan.h).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>
#include "planner/bench.h"
#include "planner/map.h"
#include "planner/plan.h"
#include "runtime/program.h"
#include "runtime/sha256.h"
#include "runtime/util.h"

/* The wisdom file's first line; a file of another version is refused, not read. */
static const char wisdom_header[] = "docbin-wisdom 1";

/* A key's words: algo variant params channels bucket cpu-key gpu-key kernels. */
enum { KEY_WORDS = 8, KERNEL_WORD = 7 };

db_plan_mode db_plan_mode_of(const char *text)
{
    if (!text || !text[0] || !strcasecmp(text, "auto"))
        return DB_PLAN_AUTO;
    return !strcasecmp(text, "measure") ? DB_PLAN_MEASURE : DB_PLAN_GIVEN;
}

/* The first 16 hex digits of a SHA-256 over the sources the stages list and
** the library's version: host code changes with the version, kernels with the
** sources (DOCBIN_KERNEL_DIR included). */
static db_status kernel_hash(const db_algo *algo, char hex[17])
{
    db_sha256 s;
    db_sha256_init(&s);
    db_sha256_update(&s, DB_VERSION, sizeof DB_VERSION);
    for (int i = 0; i < algo->n_stages; i++)
        for (int k = 0; k < DB_MAX_SOURCES && algo->stages[i].sources[k]; k++) {
            const char *name = algo->stages[i].sources[k];
            char *text = db_kernel_source(name);
            if (!text)
                return db_error_status();
            db_sha256_update(&s, name, strlen(name) + 1);
            db_sha256_update(&s, text, strlen(text) + 1);
            free(text);
        }
    uint8_t digest[32];
    db_sha256_final(&s, digest);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return DB_OK;
}

db_status db_plan_key(const db_context *ctx, const db_algo *algo, const db_job *job, int width, int height,
                      int channels, char *key, size_t size)
{
    char params[256] = "", hash[17];
    for (int i = 0; i < algo->n_params; i++) {
        const db_param *p = &algo->params[i];
        if (p->cost_free)
            continue;
        size_t len = strlen(params);
        if (p->names)
            snprintf(params + len, sizeof params - len, "%s%s=%s", len ? "," : "", p->name,
                     p->names[(int)job->params[i]]);
        else
            snprintf(params + len, sizeof params - len, "%s%s=%.9g", len ? "," : "", p->name, job->params[i]);
    }
    db_status st = kernel_hash(algo, hash);
    if (st != DB_OK)
        return st;
    /* Pages within a factor of sqrt(2) in pixels share a bucket. */
    int bucket = (int)lround(log2((double)width * (double)height));
    const char *keys[DB_ROLE_COUNT];
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        keys[r] = ctx->chosen[r] ? ctx->chosen[r]->key : "-";
    int n = snprintf(key, size, "%s %s %s %d %d %s %s %s", algo->name,
                     algo->n_variants ? algo->variants[job->variant] : "-", params[0] ? params : "-", channels,
                     bucket, keys[DB_ROLE_CPU], keys[DB_ROLE_GPU], hash);
    if (n < 0 || (size_t)n >= size)
        return db_fail(DB_ERR_USAGE, "%s: the wisdom key is longer than %zu bytes", algo->name, size);
    return DB_OK;
}

/* Starts a plan: its key and an empty explanation. */
static db_status plan_init(const db_context *ctx, const db_algo *algo, const db_job *job, int width, int height,
                           int channels, db_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    return db_plan_key(ctx, algo, job, width, height, channels, plan->key, sizeof plan->key);
}

/* Whether every stage of `map` has an implementation on a bound role; when
** not, `why` names the first that has none. */
static bool runnable(const db_context *ctx, const db_algo *algo, const db_map *map, char *why, size_t size)
{
    for (int s = 0; s < map->n; s++) {
        db_role r = map->role[s];
        if (!algo->stages[s].impl[r] || !ctx->chosen[r]) {
            snprintf(why, size, "stage %s %s on %s", algo->stages[s].name,
                     ctx->chosen[r] ? "has no implementation" : "has no device", db_role_name(r));
            return false;
        }
    }
    return true;
}

db_status db_plan_estimate(const db_context *ctx, const db_algo *algo, const db_job *job, int width, int height,
                           int channels, db_plan *plan)
{
    db_status st = plan_init(ctx, algo, job, width, height, channels, plan);
    if (st != DB_OK)
        return st;
    bool gpu = ctx->chosen[DB_ROLE_GPU] != NULL;
    db_map_default(algo, gpu, &plan->map);
    plan->source = DB_PLAN_FROM_ESTIMATE;
    char why[256];
    if (!runnable(ctx, algo, &plan->map, why, sizeof why))
        return db_fail(DB_ERR_DEVICE, "%s cannot run here: %s; %s", algo->name, why,
                       ctx->unbound_reason[DB_ROLE_CPU][0] ? ctx->unbound_reason[DB_ROLE_CPU] : "bind a device");
    snprintf(plan->why, sizeof plan->why, "estimate: every stage with a gpu implementation on gpu%s",
             gpu ? "" : " (none is bound), the rest on cpu");
    if (!gpu)
        snprintf(plan->note, sizeof plan->note, "no GPU device is bound, so every stage runs on cpu (bind one with "
                 "--gpu-device or DOCBIN_GPU_DEVICE; --list-devices shows them)");
    return DB_OK;
}

db_status db_plan_auto(const db_context *ctx, const db_algo *algo, const db_job *job, int width, int height,
                       int channels, const char *wisdom, db_plan *plan)
{
    db_status st = db_plan_estimate(ctx, algo, job, width, height, channels, plan);
    if (st != DB_OK)
        return st;
    char path[4096], text[128];
    if (!wisdom) {
        if (db_wisdom_default_path(path, sizeof path) != DB_OK) {
            db_error_clear();
            return DB_OK;
        }
        wisdom = path;
    }
    double ms;
    bool stale = false;
    int found = 0;
    if ((st = db_wisdom_find(wisdom, plan->key, text, sizeof text, &ms, &stale, &found)) != DB_OK)
        return st;
    db_map map;
    char why[256];
    if (found && db_map_parse(algo, text, &map) == DB_OK && runnable(ctx, algo, &map, why, sizeof why)) {
        plan->map = map;
        plan->source = DB_PLAN_FROM_WISDOM;
        snprintf(plan->why, sizeof plan->why, "wisdom: measured fastest at %.3f ms in %.400s", ms, wisdom);
        return DB_OK;
    }
    db_error_clear();
    if (found)
        snprintf(plan->note, sizeof plan->note, "the wisdom entry in %.300s names map %.64s, which cannot run here; "
                 "using the estimate (run --map measure to renew it)", wisdom, text);
    else if (stale)
        snprintf(plan->note, sizeof plan->note, "the wisdom entry in %.300s was measured with other kernels or "
                 "another docbin version; using the estimate (run --map measure to renew it)", wisdom);
    return DB_OK;
}

int db_plan_fastest(const db_algo *algo, bool gpu_bound, const db_plan_timing *t, int n)
{
    db_map def;
    db_map_default(algo, gpu_bound, &def);
    int best = -1, best_moved = 0;
    for (int i = 0; i < n; i++) {
        int moved = 0;
        for (int s = 0; s < t[i].map.n; s++)
            moved += t[i].map.role[s] != def.role[s];
        if (best < 0 || t[i].median_ms < t[best].median_ms ||
            (t[i].median_ms == t[best].median_ms && moved < best_moved)) {
            best = i;
            best_moved = moved;
        }
    }
    return best;
}

db_status db_plan_measure(db_context *ctx, const db_algo *algo, const db_job *job, const db_image *in, int runs,
                          const char *wisdom, db_plan *plan, db_image **out)
{
    db_status st = plan_init(ctx, algo, job, in->width, in->height, in->channels, plan);
    if (st != DB_OK)
        return st;
    db_map maps[1 << DB_MAX_STAGES];
    int n = 0;
    char why[256];
    for (int i = 0; i < db_map_count(algo); i++) {
        db_map_nth(algo, i, &maps[n]);
        if (runnable(ctx, algo, &maps[n], why, sizeof why))
            n++;
    }
    if (n == 0)
        return db_fail(DB_ERR_DEVICE, "%s cannot run here: no map has a device for every stage", algo->name);
    const char *name = "page";
    const db_image *images[1] = {in};
    db_bench_options opts = {.algo = algo, .job = job, .maps = maps, .n_maps = n, .images = images,
                             .image_names = &name, .n_images = 1, .runs = runs, .keep = out};
    db_bench bench;
    if ((st = db_bench_run(ctx, &opts, &bench)) != DB_OK)
        return st;
    for (int m = 0; m < n && st == DB_OK; m++) {
        db_box total;
        st = db_bench_wall_box(&bench, 0, m, &total);
        plan->timings[m] = (db_plan_timing){.map = maps[m], .median_ms = total.median, .min_ms = total.min,
                                            .max_ms = total.max};
    }
    db_bench_free(&bench);
    if (st != DB_OK)
        return st;
    plan->n_timings = n;
    const db_plan_timing *best = &plan->timings[db_plan_fastest(algo, ctx->chosen[DB_ROLE_GPU] != NULL, plan->timings, n)];
    plan->map = best->map;
    plan->source = DB_PLAN_FROM_MEASURE;
    snprintf(plan->why, sizeof plan->why, "measure: the lowest median wall time of %d map%s over %d timed run%s",
             n, n == 1 ? "" : "s", runs, runs == 1 ? "" : "s");
    char path[4096], text[128];
    if (wisdom && !wisdom[0]) {
        if ((st = db_wisdom_default_path(path, sizeof path)) != DB_OK)
            return st;
        wisdom = path;
    }
    db_map_format(&plan->map, text, sizeof text);
    return wisdom ? db_wisdom_store(wisdom, plan->key, text, best->median_ms) : DB_OK;
}

void db_plan_explain(const db_plan *plan, const db_algo *algo, FILE *f)
{
    static const char *const sources[] = {
        [DB_PLAN_FROM_USER] = "given", [DB_PLAN_FROM_ESTIMATE] = "estimate",
        [DB_PLAN_FROM_WISDOM] = "wisdom", [DB_PLAN_FROM_MEASURE] = "measure",
    };
    char text[128];
    db_map_format(&plan->map, text, sizeof text);
    fprintf(f, "plan for %s: %s (%s)\n  key: %s\n", algo->name, text, sources[plan->source], plan->key);
    if (plan->n_timings) {
        fprintf(f, "  %-40s %10s %10s %10s\n", "map", "median ms", "min", "max");
        for (int i = 0; i < plan->n_timings; i++) {
            const db_plan_timing *t = &plan->timings[i];
            char m[128];
            db_map_format(&t->map, m, sizeof m);
            fprintf(f, "%c %-40s %10.3f %10.3f %10.3f\n", strcmp(m, text) ? ' ' : '*', m, t->median_ms,
                    t->min_ms, t->max_ms);
        }
    }
    if (plan->why[0])
        fprintf(f, "  why: %s\n", plan->why);
    if (plan->note[0])
        fprintf(f, "  note: %s\n", plan->note);
}

/* ---- wisdom files ---------------------------------------------------------- */

db_status db_wisdom_default_path(char *path, size_t size)
{
    const char *env = getenv("DOCBIN_WISDOM"), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int n;
    if (env && env[0])
        n = snprintf(path, size, "%s", env);
    else if (xdg && xdg[0])
        n = snprintf(path, size, "%s/docbin/wisdom", xdg);
    else if (home && home[0])
        n = snprintf(path, size, "%s/.local/share/docbin/wisdom", home);
    else
        return db_fail(DB_ERR_USAGE, "no place for the wisdom file: HOME is not set; set DOCBIN_WISDOM");
    if (n < 0 || (size_t)n >= size)
        return db_fail(DB_ERR_USAGE, "the wisdom file's path is too long; set DOCBIN_WISDOM to a shorter one");
    return DB_OK;
}

/* One parsed entry: the key's words, the map and the median. */
typedef struct entry {
    char key[DB_PLAN_KEY];
    char map[128];
    double ms;
} entry;

/* Whether keys a and b differ only in the kernel hash (the last word). */
static bool same_but_kernels(const char *a, const char *b)
{
    const char *ea = strrchr(a, ' '), *eb = strrchr(b, ' ');
    return ea && eb && ea - a == eb - b && !strncmp(a, b, (size_t)(ea - a));
}

/* Parses the file's text into entries (malloc'd; *n of them). */
static db_status parse_wisdom(const char *path, char *text, entry **out, int *n)
{
    *out = NULL;
    *n = 0;
    int cap = 0, line_no = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line_no++;
        if (line_no == 1) {
            if (strcmp(line, wisdom_header))
                goto bad;
            continue;
        }
        if (!line[0] || line[0] == '#')
            continue;
        char *words[KEY_WORDS + 2], *save = NULL;
        int w = 0;
        for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save))
            if (w < KEY_WORDS + 2)
                words[w++] = t;
            else
                goto bad;
        char *end;
        double ms = w == KEY_WORDS + 2 ? strtod(words[KEY_WORDS + 1], &end) : NAN;
        if (w != KEY_WORDS + 2 || *end || !(ms >= 0) || strlen(words[KEY_WORDS]) >= sizeof((entry *)0)->map)
            goto bad;
        if (!db_reserve((void **)out, *n, &cap, sizeof **out)) {
            free(*out);
            return db_fail(DB_ERR_NOMEM, "out of memory reading %s", path);
        }
        entry *e = &(*out)[(*n)++];
        e->key[0] = '\0';
        for (int i = 0; i < KEY_WORDS; i++) {
            size_t len = strlen(e->key);
            if (snprintf(e->key + len, sizeof e->key - len, "%s%s", i ? " " : "", words[i]) >=
                (int)(sizeof e->key - len))
                goto bad;
        }
        snprintf(e->map, sizeof e->map, "%s", words[KEY_WORDS]);
        e->ms = ms;
    }
    return DB_OK;
bad:
    free(*out);
    *out = NULL;
    return db_fail(DB_ERR_FORMAT, "%s:%d: not a docbin wisdom %s; delete the file (it is remade by "
                   "--map measure) or mend the line (docs/wisdom.md)", path, line_no,
                   line_no == 1 ? "file (its first line must be 'docbin-wisdom 1')" : "entry");
}

/* Reads and parses the file; a missing file has no entries. */
static db_status load_wisdom(const char *path, entry **entries, int *n)
{
    size_t size;
    *entries = NULL;
    *n = 0;
    char *text;
    if (db_read_file(path, DB_READ_TEXT_MAX, &text, &size) != DB_OK) {
        if (errno == ENOENT) {
            db_error_clear();
            return DB_OK;
        }
        return db_fail(DB_ERR_IO, "wisdom file: %s", db_error_message());
    }
    if (strlen(text) != size) {
        free(text);
        return db_fail(DB_ERR_FORMAT, "%s: not a docbin wisdom file (it holds a NUL byte); delete it", path);
    }
    db_status st = parse_wisdom(path, text, entries, n);
    free(text);
    return st;
}

db_status db_wisdom_find(const char *path, const char *key, char *map, size_t map_size, double *ms, bool *stale,
                         int *found)
{
    entry *e;
    int n;
    *found = 0;
    *stale = false;
    db_status st = load_wisdom(path, &e, &n);
    for (int i = 0; st == DB_OK && i < n; i++) {
        if (!strcmp(e[i].key, key)) {
            snprintf(map, map_size, "%s", e[i].map);
            *ms = e[i].ms;
            *found = 1;
        } else if (same_but_kernels(e[i].key, key)) {
            *stale = true;
        }
    }
    free(e);
    return st;
}

db_status db_wisdom_store(const char *path, const char *key, const char *map, double ms)
{
    char lock_path[4096 + 8];
    if (snprintf(lock_path, sizeof lock_path, "%s.lock", path) >= (int)sizeof lock_path)
        return db_fail(DB_ERR_IO, "the wisdom file's path is too long: %s", path);
    char *slash = strrchr(lock_path, '/');
    if (slash && slash != lock_path) {
        *slash = '\0';
        int made = db_mkdir_p(lock_path);
        *slash = '/';
        if (made != 0)
            return db_fail(DB_ERR_IO, "cannot create the directory of the wisdom file %s: %s", path,
                           strerror(errno));
    }
    int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
        int e = errno;
        if (lock >= 0)
            close(lock);
        return db_fail(DB_ERR_IO, "cannot lock the wisdom file %s: %s", lock_path, strerror(e));
    }
    entry *e;
    int n;
    db_status st = load_wisdom(path, &e, &n);
    char *text = NULL;
    size_t len = 0;
    FILE *f = st == DB_OK ? open_memstream(&text, &len) : NULL;
    if (st == DB_OK && !f)
        st = db_fail(DB_ERR_NOMEM, "out of memory writing %s", path);
    if (f) {
        fprintf(f, "%s\n# algo variant params channels log2(pixels) cpu-key gpu-key kernels map median-ms\n",
                wisdom_header);
        for (int i = 0; i < n; i++)
            if (strcmp(e[i].key, key) && !same_but_kernels(e[i].key, key))
                fprintf(f, "%s %s %.6g\n", e[i].key, e[i].map, e[i].ms);
        fprintf(f, "%s %s %.6g\n", key, map, ms);
        if (fclose(f) != 0)
            st = db_fail(DB_ERR_NOMEM, "out of memory writing %s", path);
        else
            st = db_write_file_atomic(path, text, len, NULL, 0);
    }
    free(text);
    free(e);
    close(lock);
    return st;
}
