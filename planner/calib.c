/*
** calib.c — reading, writing and querying the per-host calibration file.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "planner/calib.h"
#include "runtime/program.h"
#include "runtime/sha256.h"
#include "runtime/util.h"

/* Said after every reason a file is rejected. */
#define CALIB_FIX "the calibration is not used; recalibrate, or delete the file to start uncalibrated"

/* Fields of each kind of row, its kind included, and of stage and written rows of older versions. */
enum { STAGE_FIELDS = 14, STAGE_FIELDS_6 = 13, STAGE_FIELDS_5 = 12, STAGE_FIELDS_4 = 11, TRANSFER_FIELDS = 7,
       STAGING_FIELDS = 5, CROSSING_FIELDS = 6, WRITTEN_FIELDS = 9, WRITTEN_FIELDS_6 = 7,
       MAX_FIELDS = DB_CALIB_MAX_FIELDS };

void db_calib_init(db_calib *calib)
{
    memset(calib, 0, sizeof *calib);
}

void db_calib_free(db_calib *calib)
{
    free(calib->stages);
    free(calib->transfers);
    free(calib->crossings);
    free(calib->written);
    db_calib_init(calib);
}

static int is_hex(const char *s, size_t len)
{
    if (strlen(s) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* A name fits a field: not empty, short enough, no blanks or control characters. */
static int is_name(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len >= DB_CALIB_NAME)
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return 0;
    return 1;
}

static const char *variant_or_dash(const char *variant)
{
    return variant && variant[0] ? variant : "-";
}

static int same_stage_key(const db_calib_stage *e, const char *device, const char *algo, const char *stage,
                          db_role role, const char *variant, int channels)
{
    return !strcmp(e->device, device) && !strcmp(e->algo, algo) && !strcmp(e->stage, stage) && e->role == role &&
           !strcmp(e->variant, variant_or_dash(variant)) && e->channels == channels;
}

static int find_stage(const db_calib *calib, const char *device, const char *algo, const char *stage, db_role role,
                      const char *variant, int channels)
{
    for (int i = 0; i < calib->n_stages; i++)
        if (same_stage_key(&calib->stages[i], device, algo, stage, role, variant, channels))
            return i;
    return -1;
}

int db_calib_channels(const db_algo *algo, int s, int channels)
{
    for (int i = 0; i < algo->stages[s].n_inputs; i++)
        if (algo->stages[s].inputs[i] == algo->input)
            return channels;
    return 0;
}

static int find_transfer(const db_calib *calib, const char *device, db_transfer_dir dir)
{
    for (int i = 0; i < calib->n_transfers; i++)
        if (!strcmp(calib->transfers[i].device, device) && calib->transfers[i].dir == dir)
            return i;
    return -1;
}

static int find_crossing(const db_calib *calib, const char *from, const char *to, db_role role)
{
    for (int i = 0; i < calib->n_crossings; i++)
        if (!strcmp(calib->crossings[i].from, from) && !strcmp(calib->crossings[i].to, to) &&
            calib->crossings[i].role == role)
            return i;
    return -1;
}

static int find_written(const db_calib *calib, const char *from, const char *to)
{
    for (int i = 0; i < calib->n_written; i++)
        if (!strcmp(calib->written[i].from, from) && !strcmp(calib->written[i].to, to))
            return i;
    return -1;
}


bool db_calib_is_device_key(const char *s)
{
    return is_hex(s, 16);
}

bool db_calib_is_name(const char *s)
{
    return is_name(s);
}

const char *db_calib_key_problem(const db_calib_stage *e)
{
    if (!is_hex(e->device, 16))
        return "the device key is not 16 lower-case hex digits";
    if (!is_name(e->algo) || !is_name(e->stage) || !is_name(e->variant))
        return "an algorithm, stage or variant name is empty, too long or holds a blank";
    if (e->role != DB_ROLE_CPU && e->role != DB_ROLE_GPU)
        return "the role is neither cpu nor gpu";
    if (!is_hex(e->kernel_hash, 64))
        return "the kernel hash is not 64 lower-case hex digits";
    if (e->channels != 0 && e->channels != 1 && e->channels != 3)
        return "the channels are neither 0, 1 nor 3";
    return NULL;
}

/* Why a stage entry cannot be stored or written, or NULL when it can. */
static const char *stage_problem(const db_calib_stage *e)
{
    const char *key = db_calib_key_problem(e);
    if (key)
        return key;
    if (!isfinite(e->model.a) || !isfinite(e->model.b))
        return "a or b is not a finite number";
    if (e->model.sizes < DB_COST_MIN_SIZES)
        return "the fit has fewer than 3 distinct sizes";
    if (!isfinite(e->model.spread) || e->model.spread < 0)
        return "the spread is negative or not a number";
    if (!isfinite(e->model.work) || e->model.work < 0)
        return "the work is negative or not a number";
    if (!isfinite(e->model.c) || e->model.c < 0)
        return "c is negative or not a number";
    return NULL;
}

static const char *copy_model_problem(const db_transfer_model *m)
{
    if (!isfinite(m->latency_ms))
        return "the latency is not a finite number";
    if (!isfinite(m->bandwidth_gbs) || m->bandwidth_gbs <= 0)
        return "the bandwidth is not a positive number";
    if (m->sizes < DB_COST_MIN_SIZES)
        return "the fit has fewer than 3 distinct sizes";
    if (!isfinite(m->spread) || m->spread < 0)
        return "the spread is negative or not a number";
    return NULL;
}

static const char *transfer_problem(const db_calib_transfer *e)
{
    if (!is_hex(e->device, 16))
        return "the device key is not 16 lower-case hex digits";
    if (e->dir != DB_H2D && e->dir != DB_D2H)
        return "the direction is neither h2d nor d2h";
    return copy_model_problem(&e->model);
}

static const char *crossing_problem(const db_calib_crossing *e)
{
    if (!is_hex(e->from, 16) || !is_hex(e->to, 16))
        return "a device key is not 16 lower-case hex digits";
    if (e->role != DB_ROLE_CPU && e->role != DB_ROLE_GPU)
        return "the role is neither cpu nor gpu";
    if (!isfinite(e->ms) || e->ms < 0)
        return "the cost is negative or not a number";
    if (e->sizes < 1)
        return "sizes is not a positive count";
    return NULL;
}

db_status db_calib_put_crossing(db_calib *calib, const db_calib_crossing *entry)
{
    const char *problem = crossing_problem(entry);
    if (problem)
        return db_fail(DB_ERR_USAGE, "cannot record the crossing calibration of devices %.16s and %.16s: %s",
                       entry->from, entry->to, problem);
    int i = find_crossing(calib, entry->from, entry->to, entry->role);
    if (i < 0) {
        if (!db_reserve((void **)&calib->crossings, calib->n_crossings, &calib->cap_crossings,
                     sizeof *calib->crossings))
            return db_fail(DB_ERR_NOMEM, "out of memory recording a calibration");
        i = calib->n_crossings++;
    }
    calib->crossings[i] = *entry;
    return DB_OK;
}

static const char *written_problem(const db_calib_written *e)
{
    if (!is_hex(e->from, 16) || !is_hex(e->to, 16))
        return "a device key is not 16 lower-case hex digits";
    if (!isfinite(e->model.cached_bytes) || e->model.cached_bytes < 0)
        return "the cached bytes are negative or not a number";
    if (e->model.cached_bytes > 0 && !(isfinite(e->model.beyond_gbs) && e->model.beyond_gbs > 0))
        return "the bandwidth past the cached bytes is not a positive number";
    return copy_model_problem(&e->model);
}

db_status db_calib_put_written(db_calib *calib, const db_calib_written *entry)
{
    const char *problem = written_problem(entry);
    if (problem)
        return db_fail(DB_ERR_USAGE, "cannot record the copy calibration of devices %.16s and %.16s: %s",
                       entry->from, entry->to, problem);
    int i = find_written(calib, entry->from, entry->to);
    if (i < 0) {
        if (!db_reserve((void **)&calib->written, calib->n_written, &calib->cap_written, sizeof *calib->written))
            return db_fail(DB_ERR_NOMEM, "out of memory recording a calibration");
        i = calib->n_written++;
    }
    calib->written[i] = *entry;
    return DB_OK;
}

db_status db_calib_put_staging(db_calib *calib, const db_transfer_model *model)
{
    const char *problem = copy_model_problem(model);
    if (problem)
        return db_fail(DB_ERR_USAGE, "cannot record the staging copy calibration: %s", problem);
    calib->staging = *model;
    calib->has_staging = true;
    return DB_OK;
}

/* db_calib_put_stage; `untold`: an RGB row replaces the row of 0 channels too. */
static db_status store_stage(db_calib *calib, const db_calib_stage *entry, bool untold)
{
    const char *problem = stage_problem(entry);
    if (problem)
        return db_fail(DB_ERR_USAGE, "cannot record the calibration of stage %s/%s: %s", entry->algo, entry->stage,
                       problem);
    int i = find_stage(calib, entry->device, entry->algo, entry->stage, entry->role, entry->variant,
                       entry->channels);
    if (i < 0 && untold && entry->channels == 3) /* older files' rows were timed on the RGB sample pages */
        i = find_stage(calib, entry->device, entry->algo, entry->stage, entry->role, entry->variant, 0);
    if (i < 0) {
        if (!db_reserve((void **)&calib->stages, calib->n_stages, &calib->cap_stages, sizeof *calib->stages))
            return db_fail(DB_ERR_NOMEM, "out of memory recording a calibration");
        i = calib->n_stages++;
    }
    calib->stages[i] = *entry;
    return DB_OK;
}

db_status db_calib_put_stage(db_calib *calib, const db_calib_stage *entry)
{
    return store_stage(calib, entry, true);
}

db_status db_calib_put_transfer(db_calib *calib, const db_calib_transfer *entry)
{
    const char *problem = transfer_problem(entry);
    if (problem)
        return db_fail(DB_ERR_USAGE, "cannot record the transfer calibration of device %.16s: %s", entry->device,
                       problem);
    int i = find_transfer(calib, entry->device, entry->dir);
    if (i < 0) {
        if (!db_reserve((void **)&calib->transfers, calib->n_transfers, &calib->cap_transfers,
                     sizeof *calib->transfers))
            return db_fail(DB_ERR_NOMEM, "out of memory recording a calibration");
        i = calib->n_transfers++;
    }
    calib->transfers[i] = *entry;
    return DB_OK;
}

int db_calib_parse_number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && isfinite(*v);
}

/* Parses a whole field as an int in [0, 1e9]. */
static int parse_count(const char *s, int *v)
{
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || n < 0 || n > 1000000000L)
        return 0;
    *v = (int)n;
    return 1;
}

int db_calib_copy_field(char *dst, size_t size, const char *src)
{
    if (strlen(src) >= size)
        return 0;
    strcpy(dst, src);
    return 1;
}

const char *db_calib_parse_key(char *const *f, db_calib_stage *e)
{
    memset(e, 0, sizeof *e);
    if (!db_calib_copy_field(e->device, sizeof e->device, f[1]) ||
        !db_calib_copy_field(e->algo, sizeof e->algo, f[2]) ||
        !db_calib_copy_field(e->stage, sizeof e->stage, f[3]) ||
        !db_calib_copy_field(e->variant, sizeof e->variant, f[5]) ||
        !db_calib_copy_field(e->kernel_hash, sizeof e->kernel_hash, f[6]))
        return "a field is too long";
    if (!strcmp(f[4], "cpu"))
        e->role = DB_ROLE_CPU;
    else if (!strcmp(f[4], "gpu"))
        e->role = DB_ROLE_GPU;
    else
        return "the role (field 5) is neither cpu nor gpu";
    return db_calib_key_problem(e);
}

/* Parses the fields of a stage row of a file of `version` into `e` (6: without
** the channels; 5: without c either; 4 or earlier: without the work either);
** returns what is wrong, or NULL. */
static const char *parse_stage(char **f, int n, int version, db_calib_stage *e, char *why, size_t why_size)
{
    int want = version >= 7   ? STAGE_FIELDS
               : version == 6 ? STAGE_FIELDS_6
               : version == 5 ? STAGE_FIELDS_5
                              : STAGE_FIELDS_4;
    if (n != want) {
        snprintf(why, why_size, "a stage row has %d fields, not %d", n, want);
        return why;
    }
    const char *key = db_calib_parse_key(f, e);
    if (key)
        return key;
    e->model.work = 0;
    e->model.c = 0;
    if (version >= 5 && !db_calib_parse_number(f[11], &e->model.work))
        return "work (field 12) is not a number";
    if (version >= 6 && !db_calib_parse_number(f[12], &e->model.c))
        return "c (field 13) is not a number";
    if (version >= 7 && !parse_count(f[13], &e->channels))
        return "channels (field 14) is not a count";
    if (!db_calib_parse_number(f[7], &e->model.a))
        return "a (field 8) is not a number";
    if (!db_calib_parse_number(f[8], &e->model.b))
        return "b (field 9) is not a number";
    if (!parse_count(f[9], &e->model.sizes))
        return "sizes (field 10) is not a count";
    if (!db_calib_parse_number(f[10], &e->model.spread))
        return "spread (field 11) is not a number";
    return stage_problem(e);
}

/* The four fields of a copy model from f[first] on: latency, bandwidth, sizes,
** spread. NULL, or what is wrong, written into why. */
static const char *parse_copy_model(char **f, int first, db_transfer_model *m, char *why, size_t why_size)
{
    static const char *const names[] = {"the latency", "the bandwidth", "sizes", "spread"};
    int bad = !db_calib_parse_number(f[first], &m->latency_ms)          ? 0
              : !db_calib_parse_number(f[first + 1], &m->bandwidth_gbs) ? 1
              : !parse_count(f[first + 2], &m->sizes)                   ? 2
              : !db_calib_parse_number(f[first + 3], &m->spread)        ? 3
                                                                        : -1;
    if (bad < 0)
        return NULL;
    snprintf(why, why_size, "%s (field %d) is not a %s", names[bad], first + bad + 1, bad == 2 ? "count" : "number");
    return why;
}

static const char *parse_transfer(char **f, int n, db_calib_transfer *e, char *why, size_t why_size)
{
    if (n != TRANSFER_FIELDS) {
        snprintf(why, why_size, "a transfer row has %d fields, not %d", n, TRANSFER_FIELDS);
        return why;
    }
    memset(e, 0, sizeof *e);
    if (!db_calib_copy_field(e->device, sizeof e->device, f[1]))
        return "the device key is too long";
    if (!db_transfer_dir_parse(f[2], &e->dir))
        return "the direction (field 3) is neither h2d nor d2h";
    const char *bad = parse_copy_model(f, 3, &e->model, why, why_size);
    return bad ? bad : transfer_problem(e);
}

static const char *parse_staging(char **f, int n, db_transfer_model *m, char *why, size_t why_size)
{
    if (n != STAGING_FIELDS) {
        snprintf(why, why_size, "a staging row has %d fields, not %d", n, STAGING_FIELDS);
        return why;
    }
    memset(m, 0, sizeof *m);
    const char *bad = parse_copy_model(f, 1, m, why, why_size);
    return bad ? bad : copy_model_problem(m);
}

static const char *parse_crossing(char **f, int n, db_calib_crossing *e, char *why, size_t why_size)
{
    if (n != CROSSING_FIELDS) {
        snprintf(why, why_size, "a crossing row has %d fields, not %d", n, CROSSING_FIELDS);
        return why;
    }
    memset(e, 0, sizeof *e);
    if (!db_calib_copy_field(e->from, sizeof e->from, f[1]) || !db_calib_copy_field(e->to, sizeof e->to, f[2]))
        return "a device key is too long";
    if (!strcmp(f[3], "cpu"))
        e->role = DB_ROLE_CPU;
    else if (!strcmp(f[3], "gpu"))
        e->role = DB_ROLE_GPU;
    else
        return "the role (field 4) is neither cpu nor gpu";
    if (!db_calib_parse_number(f[4], &e->ms))
        return "the cost (field 5) is not a number";
    if (!parse_count(f[5], &e->sizes))
        return "sizes (field 6) is not a count";
    return crossing_problem(e);
}

/* Parses a written row of a file of `version` into `e` (6 and earlier: without
** the cached bytes and the bandwidth past them). */
static const char *parse_written(char **f, int n, int version, db_calib_written *e, char *why, size_t why_size)
{
    int want = version >= 7 ? WRITTEN_FIELDS : WRITTEN_FIELDS_6;
    if (n != want) {
        snprintf(why, why_size, "a written row has %d fields, not %d", n, want);
        return why;
    }
    memset(e, 0, sizeof *e);
    if (!db_calib_copy_field(e->from, sizeof e->from, f[1]) || !db_calib_copy_field(e->to, sizeof e->to, f[2]))
        return "a device key is too long";
    const char *bad = parse_copy_model(f, 3, &e->model, why, why_size);
    if (bad)
        return bad;
    if (version >= 7 && (!db_calib_parse_number(f[7], &e->model.cached_bytes) ||
                         !db_calib_parse_number(f[8], &e->model.beyond_gbs)))
        return "the cached bytes or the bandwidth past them (fields 8, 9) is not a number";
    return written_problem(e);
}

int db_calib_split(char *line, char **f)
{
    int n = 0;
    char *save;
    for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (n <= MAX_FIELDS)
            f[n] = t;
        n++;
        if (n > MAX_FIELDS)
            break;
    }
    return n;
}

/* Parses the text of a calibration file into `out` (empty on entry). */
static db_status parse_file(const char *path, char *text, db_calib *out)
{
    int line_no = 0, version = 0;
    char *p = text;
    while (*p) {
        line_no++;
        char *nl = strchr(p, '\n');
        if (!nl)
            return db_fail(DB_ERR_FORMAT, "%s:%d: the line does not end (the file is truncated); %s", path, line_no,
                           CALIB_FIX);
        *nl = '\0';
        char *line = p;
        p = nl + 1;
        if (line_no == 1) {
            static const char *const headers[] = {DB_CALIB_HEADER_1, DB_CALIB_HEADER_2, DB_CALIB_HEADER_3,
                                                  DB_CALIB_HEADER_4, DB_CALIB_HEADER_5, DB_CALIB_HEADER_6,
                                                  DB_CALIB_HEADER};
            for (int v = 0; v < (int)(sizeof headers / sizeof headers[0]); v++)
                if (!strcmp(line, headers[v]))
                    version = v + 1;
            if (!version)
                return db_fail(DB_ERR_FORMAT, "%s:1: the header is '%.40s', not '%s' (another docbin's format, or "
                               "not a calibration file); %s", path, line, DB_CALIB_HEADER, CALIB_FIX);
            continue;
        }
        char *f[MAX_FIELDS + 1];
        int n = db_calib_split(line, f);
        if (n == 0 || f[0][0] == '#')
            continue;
        const char *why;
        char count_why[64];
        int dup = -1;
        if (!strcmp(f[0], "stage")) {
            db_calib_stage e;
            why = parse_stage(f, n, version, &e, count_why, sizeof count_why);
            if (!why) {
                dup = find_stage(out, e.device, e.algo, e.stage, e.role, e.variant, e.channels);
                if (dup < 0 && store_stage(out, &e, false) != DB_OK) /* a file's rows, each as it is */
                    return db_error_status();
            }
        } else if (!strcmp(f[0], "transfer")) {
            db_calib_transfer e;
            why = parse_transfer(f, n, &e, count_why, sizeof count_why);
            if (!why) {
                dup = find_transfer(out, e.device, e.dir);
                if (dup < 0 && db_calib_put_transfer(out, &e) != DB_OK)
                    return db_error_status();
            }
        } else if (!strcmp(f[0], "staging")) {
            db_transfer_model m;
            why = parse_staging(f, n, &m, count_why, sizeof count_why);
            if (!why) {
                dup = out->has_staging ? 0 : -1;
                if (dup < 0 && db_calib_put_staging(out, &m) != DB_OK)
                    return db_error_status();
            }
        } else if (!strcmp(f[0], "crossing")) {
            db_calib_crossing e;
            why = parse_crossing(f, n, &e, count_why, sizeof count_why);
            if (!why) {
                dup = find_crossing(out, e.from, e.to, e.role);
                if (dup < 0 && db_calib_put_crossing(out, &e) != DB_OK)
                    return db_error_status();
            }
        } else if (!strcmp(f[0], "written")) {
            db_calib_written e;
            why = parse_written(f, n, version, &e, count_why, sizeof count_why);
            if (!why) {
                dup = find_written(out, e.from, e.to);
                if (dup < 0 && db_calib_put_written(out, &e) != DB_OK)
                    return db_error_status();
            }
        } else {
            why = "the row is neither 'stage', 'transfer', 'staging', 'crossing' nor 'written'";
        }
        if (!why && dup >= 0)
            why = "the entry appears twice";
        if (why)
            return db_fail(DB_ERR_FORMAT, "%s:%d: %s; %s", path, line_no, why, CALIB_FIX);
    }
    if (line_no == 0)
        return db_fail(DB_ERR_FORMAT, "%s:1: the file is empty, not '%s'; %s", path, DB_CALIB_HEADER, CALIB_FIX);
    return DB_OK;
}

db_status db_calib_load(db_calib *calib, const char *path)
{
    size_t size;
    char *text = db_read_file(path, &size);
    if (!text) {
        if (errno == ENOENT)
            return DB_OK;
        return db_fail(DB_ERR_IO, "cannot read calibration file %s: %s", path, strerror(errno));
    }
    if (strlen(text) != size) {
        free(text);
        return db_fail(DB_ERR_FORMAT, "%s: the file holds a NUL byte (not a calibration file); %s", path,
                       CALIB_FIX);
    }
    db_calib loaded;
    db_calib_init(&loaded);
    db_status st = parse_file(path, text, &loaded);
    free(text);
    if (st != DB_OK) {
        db_calib_free(&loaded);
        return st;
    }
    db_calib_free(calib);
    *calib = loaded;
    return DB_OK;
}

db_status db_calib_make_parents(const char *path)
{
    char dir[4096];
    if (strlen(path) >= sizeof dir)
        return db_fail(DB_ERR_IO, "cannot write %s: path too long", path);
    strcpy(dir, path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return db_fail(DB_ERR_IO, "cannot create directory %s for %s: %s", dir, path, strerror(errno));
        *p = '/';
    }
    return DB_OK;
}

db_status db_calib_save(const db_calib *calib, const char *path)
{
    db_status st = db_calib_make_parents(path);
    if (st != DB_OK)
        return st;
    db_atomic_file af;
    if ((st = db_atomic_open(&af, path)) != DB_OK)
        return st;
    /* %.17g: doubles read back bit for bit. */
    fprintf(af.f, "%s\n", DB_CALIB_HEADER);
    fprintf(af.f, "# stage device algo stage role variant kernel-hash a(ms) b(ms/pixel) sizes spread work "
                  "c(ms/pixel) channels\n");
    fprintf(af.f, "# transfer device dir latency(ms) bandwidth(GB/s) sizes spread\n");
    fprintf(af.f, "# staging latency(ms) bandwidth(GB/s) sizes spread\n");
    fprintf(af.f, "# crossing from-device to-device role ms sizes\n");
    fprintf(af.f, "# written from-device to-device latency(ms) bandwidth(GB/s) sizes spread cached(bytes) "
                  "beyond(GB/s)\n");
    for (int i = 0; i < calib->n_stages; i++) {
        const db_calib_stage *e = &calib->stages[i];
        fprintf(af.f, "stage %s %s %s %s %s %s %.17g %.17g %d %.17g %.17g %.17g %d\n", e->device, e->algo,
                e->stage, db_role_name(e->role), e->variant, e->kernel_hash, e->model.a, e->model.b, e->model.sizes,
                e->model.spread, e->model.work, e->model.c, e->channels);
    }
    for (int i = 0; i < calib->n_transfers; i++) {
        const db_calib_transfer *e = &calib->transfers[i];
        fprintf(af.f, "transfer %s %s %.17g %.17g %d %.17g\n", e->device, db_transfer_dir_name(e->dir),
                e->model.latency_ms, e->model.bandwidth_gbs, e->model.sizes, e->model.spread);
    }
    if (calib->has_staging)
        fprintf(af.f, "staging %.17g %.17g %d %.17g\n", calib->staging.latency_ms, calib->staging.bandwidth_gbs,
                calib->staging.sizes, calib->staging.spread);
    for (int i = 0; i < calib->n_crossings; i++) {
        const db_calib_crossing *e = &calib->crossings[i];
        fprintf(af.f, "crossing %s %s %s %.17g %d\n", e->from, e->to, db_role_name(e->role), e->ms, e->sizes);
    }
    for (int i = 0; i < calib->n_written; i++) {
        const db_calib_written *e = &calib->written[i];
        fprintf(af.f, "written %s %s %.17g %.17g %d %.17g %.17g %.17g\n", e->from, e->to, e->model.latency_ms,
                e->model.bandwidth_gbs, e->model.sizes, e->model.spread, e->model.cached_bytes,
                e->model.beyond_gbs);
    }
    if (ferror(af.f)) {
        db_atomic_abort(&af);
        return db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    return db_atomic_commit(&af);
}

db_calib_found db_calib_find_stage(const db_calib *calib, const char *device, const char *algo, const char *stage,
                                   db_role role, const char *variant, int channels, const char *kernel_hash,
                                   db_cost_model *model, char *msg, size_t msg_size)
{
    char where[180];
    snprintf(where, sizeof where, "stage %s/%s (%s%s%s%s) on device %s", algo, stage, db_role_name(role),
             variant && variant[0] && strcmp(variant, "-") ? ", variant " : "",
             variant && strcmp(variant, "-") ? variant : "",
             channels == 1 ? ", gray pages" : channels == 3 ? ", RGB pages" : "", device);
    int i = find_stage(calib, device, algo, stage, role, variant, channels);
    if (i < 0 && channels)
        i = find_stage(calib, device, algo, stage, role, variant, 0);
    if (i < 0) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "%s is not calibrated", where);
        return DB_CALIB_MISSING;
    }
    const db_calib_stage *e = &calib->stages[i];
    if (strcmp(e->kernel_hash, kernel_hash) != 0) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "the calibration of %s was measured with other kernels (hash %.12s, now "
                     "%.12s); recalibrate that stage on that device", where, e->kernel_hash, kernel_hash);
        return DB_CALIB_STALE;
    }
    *model = e->model;
    if (msg && msg_size)
        msg[0] = '\0';
    return DB_CALIB_FOUND;
}

db_calib_found db_calib_find_transfer(const db_calib *calib, const char *device, db_transfer_dir dir,
                                      db_transfer_model *model)
{
    int i = find_transfer(calib, device, dir);
    if (i < 0)
        return DB_CALIB_MISSING;
    *model = calib->transfers[i].model;
    return DB_CALIB_FOUND;
}

db_calib_found db_calib_find_crossing(const db_calib *calib, const char *from, const char *to, db_role role,
                                      double *ms)
{
    int i = find_crossing(calib, from, to, role);
    if (i < 0)
        return DB_CALIB_MISSING;
    *ms = calib->crossings[i].ms;
    return DB_CALIB_FOUND;
}

db_calib_found db_calib_find_written(const db_calib *calib, const char *from, const char *to,
                                     db_transfer_model *model)
{
    int i = find_written(calib, from, to);
    if (i < 0)
        return DB_CALIB_MISSING;
    *model = calib->written[i].model;
    return DB_CALIB_FOUND;
}

db_status db_calib_default_path(char *path, size_t size)
{
    char host[256];
    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    /* The host name becomes a file name: keep it one path component. */
    for (char *p = host; *p; p++)
        if (*p == '/' || (unsigned char)*p <= ' ')
            *p = '_';
    const char *perf = getenv("DOCBIN_PERF_DIR");
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    int n;
    if (perf && perf[0])
        n = snprintf(path, size, "%s/%s.calib", perf, host);
    else if (xdg && xdg[0])
        n = snprintf(path, size, "%s/docbin/perf/%s.calib", xdg, host);
    else if (home && home[0])
        n = snprintf(path, size, "%s/.local/share/docbin/perf/%s.calib", home, host);
    else
        return db_fail(DB_ERR_IO, "no place for the calibration file: HOME is not set; set DOCBIN_PERF_DIR");
    if (n < 0 || (size_t)n >= size)
        return db_fail(DB_ERR_IO, "the calibration file's path is too long; set DOCBIN_PERF_DIR to a shorter "
                       "directory");
    return DB_OK;
}

db_status db_stage_kernel_hash(const db_stage *stage, char hex[65])
{
    if (!stage->sources)
        return db_fail(DB_ERR_USAGE, "stage %s does not list its OpenCL sources (db_stage.sources)", stage->name);
    db_sha256 s;
    db_sha256_init(&s);
    const char *p = stage->sources;
    for (;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " ");
        char name[64];
        if (len >= sizeof name)
            return db_fail(DB_ERR_USAGE, "stage %s lists a source name that is too long: %.*s", stage->name,
                           (int)len, p);
        memcpy(name, p, len);
        name[len] = '\0';
        p += len;
        char *text = db_kernel_source(name);
        if (!text) {
            char why[512];
            snprintf(why, sizeof why, "%s", db_error_message());
            return db_fail(db_error_status(), "stage %s: %s", stage->name, why);
        }
        /* The name and a NUL separate the files, so moving text between them changes the hash. */
        db_sha256_update(&s, name, len + 1);
        db_sha256_update(&s, text, strlen(text) + 1);
        free(text);
    }
    db_sha256_update(&s, DB_LAUNCH_REVISION, sizeof DB_LAUNCH_REVISION);
    /* A row's `work` is in the count's units, and its a and b scaled as the
    ** count says: another count, another scaling, or other calibration pages
    ** make it stale. */
    for (int r = 0; stage->work && r < DB_ROLE_COUNT; r++) {
        const char *unit = stage->work->unit[r] ? stage->work->unit[r] : "";
        db_sha256_update(&s, unit, strlen(unit) + 1);
        if (stage->work->per_unit[r])
            db_sha256_update(&s, "per unit", sizeof "per unit");
    }
    if (stage->work && stage->work->varied)
        db_sha256_update(&s, "varied pages", sizeof "varied pages");
    uint8_t digest[32];
    db_sha256_final(&s, digest);
    db_sha256_hex(digest, hex);
    return DB_OK;
}

db_status db_algo_kernel_hash(const db_algo *algo, char hex[65])
{
    db_sha256 s;
    db_sha256_init(&s);
    for (int i = 0; i < algo->n_stages; i++) {
        char stage[65];
        db_status st = db_stage_kernel_hash(&algo->stages[i], stage);
        if (st != DB_OK)
            return st;
        db_sha256_update(&s, stage, sizeof stage);
    }
    uint8_t digest[32];
    db_sha256_final(&s, digest);
    db_sha256_hex(digest, hex);
    return DB_OK;
}
