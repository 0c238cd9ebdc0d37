/*
** history.c — the per-host history of measured stage and copy times (history.h).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "planner/bench.h"
#include "planner/history.h"
#include "runtime/util.h"

/* Said after every reason a file is rejected. */
#define HISTORY_FIX "the history is not used; delete the file to start a new one"

/* Fields of a run row, its kind included, and of rows of versions 3, 2 and 1; of a copy row. */
enum { RUN_FIELDS = 12, RUN_FIELDS_3 = 11, RUN_FIELDS_2 = 10, RUN_FIELDS_1 = 9, COPY_FIELDS = 7 };

/* Longest row written: the key's fields, three numbers, the crossing flag, the channels and separators. */
enum { ROW_MAX = 512 };

void db_history_init(db_history *history)
{
    memset(history, 0, sizeof *history);
}

void db_history_free(db_history *history)
{
    free(history->runs);
    free(history->copies);
    db_history_init(history);
}

db_status db_history_path(const char *calib_path, char *path, size_t size)
{
    if ((size_t)snprintf(path, size, "%s.history", calib_path) >= size)
        return db_fail(DB_ERR_IO, "the history file beside %s: path too long", calib_path);
    return DB_OK;
}

static db_status add(db_history *h, const db_history_run *run)
{
    if (!db_reserve((void **)&h->runs, h->n, &h->cap, sizeof *h->runs))
        return db_fail(DB_ERR_NOMEM, "out of memory for %d history rows", h->n + 1);
    h->runs[h->n++] = *run;
    return DB_OK;
}

db_status db_history_add(db_history *history, const db_history_run *runs, int n)
{
    db_status st = DB_OK;
    for (int i = 0; i < n && st == DB_OK; i++)
        st = add(history, &runs[i]);
    return st;
}

static db_status add_copy(db_history *h, const db_history_copy *copy)
{
    if (!db_reserve((void **)&h->copies, h->n_copies, &h->cap_copies, sizeof *h->copies))
        return db_fail(DB_ERR_NOMEM, "out of memory for %d history copy rows", h->n_copies + 1);
    h->copies[h->n_copies++] = *copy;
    return DB_OK;
}

db_status db_history_add_copies(db_history *history, const db_history_copy *copies, int n)
{
    db_status st = DB_OK;
    for (int i = 0; i < n && st == DB_OK; i++)
        st = add_copy(history, &copies[i]);
    return st;
}

/* What is wrong with a copy row, or NULL. */
static const char *copy_problem(const db_history_copy *c)
{
    if (!db_calib_is_device_key(c->device))
        return "the device key is not 16 lower-case hex digits";
    if (!db_calib_is_name(c->algo) || !db_calib_is_name(c->item))
        return "an algorithm or item name is empty, too long or holds a blank";
    if (c->dir != DB_H2D && c->dir != DB_D2H)
        return "the direction is neither h2d nor d2h";
    if (!isfinite(c->bytes) || c->bytes < 1)
        return "the bytes are not a positive number";
    if (!isfinite(c->ms) || c->ms <= 0)
        return "the time is not a positive number";
    return NULL;
}

/* Parses the fields of a copy row into *c; returns what is wrong, or NULL. */
static const char *parse_copy(char *const *f, int n, db_history_copy *c, char *why, size_t why_size)
{
    if (n != COPY_FIELDS) {
        snprintf(why, why_size, "a copy row has %d fields, not %d", n, COPY_FIELDS);
        return why;
    }
    memset(c, 0, sizeof *c);
    if (!db_calib_copy_field(c->device, sizeof c->device, f[1]) ||
        !db_calib_copy_field(c->algo, sizeof c->algo, f[2]) ||
        !db_calib_copy_field(c->item, sizeof c->item, f[3]))
        return "a device key, algorithm or item name is too long";
    if (!db_transfer_dir_parse(f[4], &c->dir))
        return "the direction (field 5) is neither h2d nor d2h";
    if (!db_calib_parse_number(f[5], &c->bytes) || !db_calib_parse_number(f[6], &c->ms))
        return "the bytes or the time (fields 6, 7) is not a number";
    return copy_problem(c);
}

/* What is wrong with a row, or NULL. */
static const char *run_problem(const db_history_run *r)
{
    const char *key = db_calib_key_problem(&r->key);
    if (key)
        return key;
    if (!isfinite(r->pixels) || r->pixels < 1)
        return "the pixels are not a positive number";
    if (!isfinite(r->ms) || r->ms <= 0)
        return "the time is not a positive number";
    if (!isfinite(r->work) || r->work < 0)
        return "the work is negative or not a number";
    return NULL;
}

static db_status parse_file(const char *path, char *text, db_history *out)
{
    int line_no = 0;
    for (char *p = text; *p;) {
        line_no++;
        char *nl = strchr(p, '\n');
        if (!nl)
            break; /* an append in progress, or cut short: not a row yet */
        *nl = '\0';
        char *line = p;
        p = nl + 1;
        /* Two runs creating the file at once may put a row before the header;
        ** rows of any version may follow any header (appends to an old file). */
        if (!strcmp(line, DB_HISTORY_HEADER) || !strcmp(line, DB_HISTORY_HEADER_4) ||
            !strcmp(line, DB_HISTORY_HEADER_3) || !strcmp(line, DB_HISTORY_HEADER_2) ||
            !strcmp(line, DB_HISTORY_HEADER_1))
            continue;
        if (!strncmp(line, "docbin-history", 14))
            return db_fail(DB_ERR_FORMAT, "%s:%d: the header is '%.40s', not '%s' (another docbin's format); %s",
                           path, line_no, line, DB_HISTORY_HEADER, HISTORY_FIX);
        char *f[DB_CALIB_MAX_FIELDS + 1];
        int n = db_calib_split(line, f);
        if (n == 0 || f[0][0] == '#')
            continue;
        db_history_run r;
        const char *why = NULL;
        char count_why[96];
        if (!strcmp(f[0], "copy")) {
            db_history_copy c;
            if ((why = parse_copy(f, n, &c, count_why, sizeof count_why)) != NULL)
                return db_fail(DB_ERR_FORMAT, "%s:%d: %s; %s", path, line_no, why, HISTORY_FIX);
            db_status st = add_copy(out, &c);
            if (st != DB_OK)
                return st;
            continue;
        }
        if (strcmp(f[0], "run") != 0) {
            why = "the row is neither a 'run' nor a 'copy' row (not a history file?)";
        } else if (n != RUN_FIELDS && n != RUN_FIELDS_3 && n != RUN_FIELDS_2 && n != RUN_FIELDS_1) {
            snprintf(count_why, sizeof count_why, "a run row has %d fields, not %d (or %d, %d or %d, of older "
                     "versions)", n, RUN_FIELDS, RUN_FIELDS_3, RUN_FIELDS_2, RUN_FIELDS_1);
            why = count_why;
        } else if (!(why = db_calib_parse_key(f, &r.key))) {
            r.work = 0;
            r.at_crossing = false;
            if (!db_calib_parse_number(f[7], &r.pixels) || !db_calib_parse_number(f[8], &r.ms))
                why = "the pixels or the time (fields 8, 9) is not a number";
            else if (n >= RUN_FIELDS_2 && !db_calib_parse_number(f[9], &r.work))
                why = "the work (field 10) is not a number";
            else if (n >= RUN_FIELDS_3 && strcmp(f[10], "0") != 0 && strcmp(f[10], "1") != 0)
                why = "the crossing field (11) is neither 0 nor 1";
            else if (n == RUN_FIELDS && strcmp(f[11], "0") != 0 && strcmp(f[11], "1") != 0 &&
                     strcmp(f[11], "3") != 0)
                why = "the channels (field 12) are neither 0, 1 nor 3";
            if (!why) {
                r.key.channels = n == RUN_FIELDS ? atoi(f[11]) : 0;
                why = run_problem(&r);
            }
            /* Rows of versions 1 and 2 do not say: their spans may hold a
            ** crossing. Rows of version 3 do not say their page's channels:
            ** keyed 0, they never match a stage that reads the page. */
            if (!why)
                r.at_crossing = n < RUN_FIELDS_3 || f[10][0] == '1';
        }
        if (why)
            return db_fail(DB_ERR_FORMAT, "%s:%d: %s; %s", path, line_no, why, HISTORY_FIX);
        db_status st = add(out, &r);
        if (st != DB_OK)
            return st;
    }
    return DB_OK;
}

db_status db_history_load(db_history *history, const char *path)
{
    size_t size;
    char *text = db_read_file(path, &size);
    if (!text) {
        if (errno == ENOENT)
            return DB_OK;
        return db_fail(DB_ERR_IO, "cannot read history file %s: %s", path, strerror(errno));
    }
    if (strlen(text) != size) {
        free(text);
        return db_fail(DB_ERR_FORMAT, "%s: the file holds a NUL byte (not a history file); %s", path, HISTORY_FIX);
    }
    db_history loaded;
    db_history_init(&loaded);
    db_status st = parse_file(path, text, &loaded);
    free(text);
    if (st != DB_OK) {
        db_history_free(&loaded);
        return st;
    }
    db_history_free(history);
    *history = loaded;
    return DB_OK;
}



/* Writes one row into buf; returns its length (%.17g: doubles read back bit for bit). */
static int format_row(char *buf, size_t size, const db_history_run *r)
{
    return snprintf(buf, size, "run %s %s %s %s %s %s %.17g %.17g %.17g %d %d\n", r->key.device, r->key.algo,
                    r->key.stage, db_role_name(r->key.role), r->key.variant, r->key.kernel_hash, r->pixels, r->ms,
                    r->work, r->at_crossing, r->key.channels);
}

/* Writes one copy row into buf; returns its length. */
static int format_copy(char *buf, size_t size, const db_history_copy *c)
{
    return snprintf(buf, size, "copy %s %s %s %s %.17g %.17g\n", c->device, c->algo, c->item,
                    db_transfer_dir_name(c->dir), c->bytes, c->ms);
}

/* Whether two copy rows are of one item in one direction on one device. */
static bool same_copy(const db_history_copy *x, const db_history_copy *y)
{
    return !strcmp(x->device, y->device) && !strcmp(x->algo, y->algo) && !strcmp(x->item, y->item) &&
           x->dir == y->dir;
}

/* Whether two keys name one stage on pages of one kind (the key less its kernel hash). */
static int same_stage(const db_calib_stage *x, const db_calib_stage *y)
{
    return !strcmp(x->device, y->device) && !strcmp(x->algo, y->algo) && !strcmp(x->stage, y->stage) &&
           x->role == y->role && !strcmp(x->variant, y->variant) && x->channels == y->channels;
}

static int same_key(const db_calib_stage *a, const db_calib_stage *b)
{
    return same_stage(a, b) && !strcmp(a->kernel_hash, b->kernel_hash);
}

/* Orders indices of the rows `ctx` by stage, then by position (qsort_r). */
static int cmp_stage_then_position(const void *pa, const void *pb, void *ctx)
{
    const db_history_run *runs = ctx;
    int a = *(const int *)pa, b = *(const int *)pb;
    const db_calib_stage *x = &runs[a].key, *y = &runs[b].key;
    int c = strcmp(x->device, y->device);
    c = c ? c : strcmp(x->algo, y->algo);
    c = c ? c : strcmp(x->stage, y->stage);
    c = c ? c : (int)x->role - (int)y->role;
    c = c ? c : strcmp(x->variant, y->variant);
    c = c ? c : x->channels - y->channels;
    return c ? c : a - b;
}

/* Rewrites `path` atomically with, for each stage, the last DB_HISTORY_KEEP
** rows measured with the kernels of its newest row, and the last
** DB_HISTORY_KEEP of those not beside a crossing (db_history_factor's): rows
** of older kernels never count again (db_history_factor matches the current
** kernel hash). */
static db_status compact(const char *path)
{
    db_history h;
    db_history_init(&h);
    db_status st = db_history_load(&h, path);
    int *order = st == DB_OK ? malloc((size_t)(h.n + 1) * sizeof *order) : NULL;
    char *keep = st == DB_OK ? calloc((size_t)h.n + 1, 1) : NULL;
    if (st == DB_OK && (!order || !keep))
        st = db_fail(DB_ERR_NOMEM, "out of memory compacting history file %s", path);
    if (st != DB_OK) {
        free(order);
        free(keep);
        db_history_free(&h);
        return st;
    }
    for (int i = 0; i < h.n; i++)
        order[i] = i;
    qsort_r(order, (size_t)h.n, sizeof *order, cmp_stage_then_position, h.runs);
    for (int end = h.n; end > 0;) {
        /* order[begin..end) is one stage, oldest first; its newest row names the kernels. */
        int begin = end - 1;
        while (begin > 0 && same_stage(&h.runs[order[begin - 1]].key, &h.runs[order[end - 1]].key))
            begin--;
        const char *hash = h.runs[order[end - 1]].key.kernel_hash;
        /* The newest rows tell the work; the newest not beside a crossing, the time. */
        for (int i = end - 1, kept = 0, timed = 0; i >= begin && (kept < DB_HISTORY_KEEP || timed < DB_HISTORY_KEEP);
             i--) {
            const db_history_run *r = &h.runs[order[i]];
            if (strcmp(r->key.kernel_hash, hash) != 0)
                continue;
            bool counts = kept < DB_HISTORY_KEEP || (!r->at_crossing && timed < DB_HISTORY_KEEP);
            keep[order[i]] |= counts;
            kept++;
            timed += !r->at_crossing;
        }
        end = begin;
    }
    /* Each copy's last DB_HISTORY_KEEP rows (db_history_copy_factor's), counted
    ** from the newest: key[k] is the newest row of the k-th copy seen, kept[k]
    ** how many of its rows are kept. */
    char *keep_copy = calloc((size_t)h.n_copies + 1, 1);
    int *key = malloc((size_t)(h.n_copies + 1) * sizeof *key), *kept = calloc((size_t)h.n_copies + 1, sizeof *kept);
    if (!keep_copy || !key || !kept) {
        free(keep_copy);
        free(key);
        free(kept);
        free(order);
        free(keep);
        db_history_free(&h);
        return db_fail(DB_ERR_NOMEM, "out of memory compacting history file %s", path);
    }
    int n_keys = 0;
    for (int i = h.n_copies - 1; i >= 0; i--) {
        int k = 0;
        while (k < n_keys && !same_copy(&h.copies[key[k]], &h.copies[i]))
            k++;
        if (k == n_keys)
            key[n_keys++] = i;
        keep_copy[i] = kept[k]++ < DB_HISTORY_KEEP;
    }
    free(key);
    free(kept);
    db_atomic_file af;
    if ((st = db_atomic_open(&af, path)) == DB_OK) {
        fprintf(af.f, "%s\n", DB_HISTORY_HEADER);
        for (int i = 0; i < h.n; i++) {
            char row[ROW_MAX];
            if (keep[i] && format_row(row, sizeof row, &h.runs[i]) > 0)
                fputs(row, af.f);
        }
        for (int i = 0; i < h.n_copies; i++) {
            char row[ROW_MAX];
            if (keep_copy[i] && format_copy(row, sizeof row, &h.copies[i]) > 0)
                fputs(row, af.f);
        }
        int err = ferror(af.f) ? errno : 0;
        if (err) {
            db_atomic_abort(&af);
            st = db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(err));
        } else {
            st = db_atomic_commit(&af);
        }
    }
    free(order);
    free(keep);
    free(keep_copy);
    db_history_free(&h);
    return st;
}

db_status db_history_append(const char *path, const db_history_run *runs, int n, const db_history_copy *copies,
                            int n_copies)
{
    char *buf = malloc((size_t)(n + n_copies + 1) * ROW_MAX);
    if (!buf)
        return db_fail(DB_ERR_NOMEM, "out of memory recording the history of a run");
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        const char *problem = run_problem(&runs[i]);
        if (problem) {
            free(buf);
            return db_fail(DB_ERR_USAGE, "cannot record the history of stage %s/%s: %s", runs[i].key.algo,
                           runs[i].key.stage, problem);
        }
        len += (size_t)format_row(buf + len, ROW_MAX, &runs[i]);
    }
    for (int i = 0; i < n_copies; i++) {
        const char *problem = copy_problem(&copies[i]);
        if (problem) {
            free(buf);
            return db_fail(DB_ERR_USAGE, "cannot record the history of a copy of %s/%s: %s", copies[i].algo,
                           copies[i].item, problem);
        }
        len += (size_t)format_copy(buf + len, ROW_MAX, &copies[i]);
    }
    db_status st = db_calib_make_parents(path);
    /* The one process that creates the file writes the header with its rows. */
    int fd = st == DB_OK ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
    if (st == DB_OK && fd >= 0) {
        size_t h = strlen(DB_HISTORY_HEADER) + 1;
        memmove(buf + h, buf, len);
        memcpy(buf, DB_HISTORY_HEADER "\n", h);
        len += h;
    } else if (st == DB_OK && errno == EEXIST) {
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    }
    if (st == DB_OK && fd < 0)
        st = db_fail(DB_ERR_IO, "cannot open history file %s: %s", path, strerror(errno));
    if (st == DB_OK) {
        ssize_t w = write(fd, buf, len);
        if (w != (ssize_t)len)
            st = db_fail(DB_ERR_IO, "cannot append to history file %s: %s", path,
                         w < 0 ? strerror(errno) : "short write (disk full?)");
        struct stat sb;
        int big = st == DB_OK && fstat(fd, &sb) == 0 && sb.st_size > DB_HISTORY_MAX_BYTES;
        close(fd);
        if (big)
            st = compact(path);
    }
    free(buf);
    return st;
}

db_status db_history_rows(const db_profile_row *rows, int n_rows, const char (*keys)[17], const db_algo *algo,
                          const db_job *job, const db_map *map, int width, int height, int channels,
                          const db_report *report, db_history_run *out, int *n)
{
    *n = 0;
    const char *variant = algo->n_variants ? algo->variants[job->variant] : "-";
    bool at_crossing[DB_MAX_STAGES];
    db_map_at_crossing(algo, map, at_crossing);
    for (int s = 0; s < algo->n_stages && s < map->n; s++) {
        db_role role = map->role[s];
        const db_profile_row *row = NULL;
        for (int i = 0; i < n_rows && !row; i++)
            if (rows[i].kind == DB_REC_KERNEL && rows[i].role == role && !strcmp(rows[i].stage, algo->stages[s].name))
                row = &rows[i];
        if (!row)
            continue;
        db_history_run *r = &out[(*n)++];
        memset(r, 0, sizeof *r);
        db_status st = db_stage_kernel_hash(&algo->stages[s], r->key.kernel_hash);
        if (st != DB_OK)
            return st;
        snprintf(r->key.device, sizeof r->key.device, "%s", keys[role]);
        snprintf(r->key.algo, sizeof r->key.algo, "%s", algo->name);
        snprintf(r->key.stage, sizeof r->key.stage, "%s", algo->stages[s].name);
        snprintf(r->key.variant, sizeof r->key.variant, "%s", variant);
        r->key.role = role;
        r->key.channels = db_calib_channels(algo, s, channels);
        r->pixels = (double)width * height;
        r->ms = row->span_ms;
        r->work = algo->stages[s].work && report ? algo->stages[s].work->count(job, width, height, role, report) : 0;
        r->at_crossing = at_crossing[s];
    }
    return DB_OK;
}

void db_history_copy_rows(const db_profile_row *rows, int n_rows, const char (*keys)[17], const db_algo *algo,
                          db_history_copy *out, int *n)
{
    *n = 0;
    for (int i = 0; i < n_rows && *n < DB_HISTORY_MAX_COPIES; i++) {
        const db_profile_row *row = &rows[i];
        if (row->kind == DB_REC_KERNEL || row->bytes == 0 || row->busy_ms <= 0)
            continue;
        db_history_copy *c = &out[(*n)++];
        memset(c, 0, sizeof *c);
        snprintf(c->device, sizeof c->device, "%s", keys[row->role]);
        snprintf(c->algo, sizeof c->algo, "%s", algo->name);
        snprintf(c->item, sizeof c->item, "%s", row->stage);
        c->dir = row->kind == DB_REC_TO_DEVICE ? DB_H2D : DB_D2H;
        c->bytes = (double)row->bytes;
        c->ms = row->busy_ms;
    }
}

int db_history_copy_factor(const db_history *history, const char *device, const char *algo, const char *item,
                           db_transfer_dir dir, const db_transfer_model *model, double *factor)
{
    double ratio[DB_HISTORY_KEEP];
    int n = 0;
    *factor = 1.0;
    for (int i = history->n_copies - 1; i >= 0 && n < DB_HISTORY_KEEP; i--) {
        const db_history_copy *c = &history->copies[i];
        if (c->dir != dir || strcmp(c->device, device) || strcmp(c->algo, algo) || strcmp(c->item, item))
            continue;
        double predicted = db_transfer_predict(model, c->bytes);
        if (predicted > 0)
            ratio[n++] = c->ms / predicted;
    }
    db_box box;
    if (n >= DB_HISTORY_MIN && db_box_stats(ratio, n, &box) == DB_OK)
        *factor = box.median;
    return n;
}

int db_history_factor(const db_history *history, const db_calib_stage *key, const db_cost_model *model,
                      double *factor)
{
    double ratio[DB_HISTORY_KEEP];
    int n = 0;
    *factor = 1.0;
    for (int i = history->n - 1; i >= 0 && n < DB_HISTORY_KEEP; i--) {
        const db_history_run *r = &history->runs[i];
        double predicted = db_cost_predict(model, r->pixels, r->work);
        if (same_key(&r->key, key) && !r->at_crossing && predicted > 0)
            ratio[n++] = r->ms / predicted;
    }
    db_box box;
    if (n >= DB_HISTORY_MIN && db_box_stats(ratio, n, &box) == DB_OK)
        *factor = box.median;
    return n;
}

int db_history_work(const db_history *history, const db_calib_stage *key, bool same_role, double *work)
{
    double w[DB_HISTORY_KEEP];
    int n = 0;
    *work = 0;
    for (int i = history->n - 1; i >= 0 && n < DB_HISTORY_KEEP; i--) {
        const db_calib_stage *k = &history->runs[i].key;
        if (history->runs[i].work > 0 && !strcmp(k->algo, key->algo) && !strcmp(k->stage, key->stage) &&
            !strcmp(k->variant, key->variant) && !strcmp(k->kernel_hash, key->kernel_hash) &&
            (!same_role || k->role == key->role))
            w[n++] = history->runs[i].work;
    }
    db_box box;
    if (n >= DB_HISTORY_MIN && db_box_stats(w, n, &box) == DB_OK)
        *work = box.median;
    return n;
}
