/*
** batch_log.c — the JSON logs of batches read back and merged (batch_log.h).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/batch.h"
#include "runtime/batch_log.h"
#include "runtime/image.h"
#include "runtime/sha256.h"
#include "runtime/util.h"

/* The longest line read: two names of PATH_MAX bytes, every byte escaped, an
** error message and the stage times fit well within it. */
enum { LINE_MAX_BYTES = 256 * 1024, MAX_DEPTH = 16 };

struct db_batch_log_slot {
    uint8_t digest[16]; /* of the output and the page number */
    bool used;
    uint8_t state;      /* db_batch_state */
    uint32_t writes;    /* "ok" lines */
    int failure;        /* index of its last failure in `failures`, or -1 */
};

/* ---- a JSON reader for one log line ---------------------------------------- */

/* The fields of a line that the account uses (names decoded, malloc'd). */
typedef struct fields {
    char *input, *output, *status, *error;
    double page, start_ms, wall_ms;
} fields;

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The JSON string at *pp, decoded into a malloc'd *out (out NULL: only
** checked). A \udcXX escape of a byte from 0x80 gives that byte back, as
** db_json_string writes the bytes of a name that are not UTF-8. */
static bool read_string(const char **pp, char **out)
{
    const char *p = *pp;
    if (*p != '"')
        return false;
    const char *start = ++p;
    while (*p && *p != '"')
        p += *p == '\\' && p[1] ? 2 : 1;
    if (*p != '"')
        return false;
    const char *close = p;
    /* No escape decodes to more bytes than it takes. */
    char *buf = malloc((size_t)(close - start) + 1);
    if (!buf)
        return false;
    size_t n = 0;
    bool good = true;
    for (p = start; p < close && good;) {
        unsigned char c = (unsigned char)*p++;
        if (c < 0x20) {
            good = false;
        } else if (c != '\\') {
            buf[n++] = (char)c;
        } else {
            char e = *p++;
            const char *plain = strchr("\"\\/bfnrt", e);
            if (e && plain) {
                buf[n++] = "\"\\/\b\f\n\r\t"[plain - "\"\\/bfnrt"];
                continue;
            }
            int v = e == 'u' && close - p >= 4 ? hex4(p) : -1;
            p += 4;
            if (v >= 0xdc80 && v <= 0xdcff) {
                buf[n++] = (char)(v - 0xdc00);
            } else if (v >= 0xd800 && v <= 0xdbff && close - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                       hex4(p + 2) >= 0xdc00 && hex4(p + 2) <= 0xdfff) {
                n += put_utf8(buf + n, 0x10000 + ((unsigned)(v - 0xd800) << 10) + (unsigned)(hex4(p + 2) - 0xdc00));
                p += 6;
            } else if (v > 0 && (v < 0xd800 || v > 0xdfff)) {
                n += put_utf8(buf + n, (unsigned)v);
            } else {
                good = false; /* a bad escape, a lone surrogate or a NUL */
            }
        }
    }
    if (!good) {
        free(buf);
        return false;
    }
    buf[n] = '\0';
    if (out)
        *out = buf;
    else
        free(buf);
    *pp = close + 1;
    return true;
}

static bool read_number(const char **pp, double *v)
{
    const char *p = *pp;
    if (!(*p == '-' || (*p >= '0' && *p <= '9')))
        return false;
    char *end;
    *v = strtod(p, &end);
    *pp = end;
    return end != p;
}

static bool read_literal(const char **pp, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(*pp, word, n))
        return false;
    *pp += n;
    return true;
}

/* Passes over any JSON value, nested at most MAX_DEPTH deep. */
static bool skip_value(const char **pp, int depth)
{
    const char *p = skip_ws(*pp);
    double v;
    bool good;
    if (*p == '"') {
        good = read_string(&p, NULL);
    } else if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        bool object = *p == '{';
        good = depth < MAX_DEPTH;
        p = skip_ws(p + 1);
        if (good && *p == close) {
            p++;
        } else {
            while (good) {
                p = skip_ws(p);
                if (object) {
                    good = read_string(&p, NULL);
                    p = skip_ws(p);
                    good = good && *p++ == ':';
                }
                good = good && skip_value(&p, depth + 1);
                p = skip_ws(p);
                if (good && *p == ',') {
                    p++;
                } else {
                    good = good && *p++ == close;
                    break;
                }
            }
        }
    } else {
        good = read_literal(&p, "true") || read_literal(&p, "false") || read_literal(&p, "null") ||
               read_number(&p, &v);
    }
    *pp = p;
    return good;
}

/* Reads the object of one log line into *f; false (with *why) when it is none. */
static bool read_line_object(const char *line, fields *f, const char **why)
{
    memset(f, 0, sizeof *f);
    const char *p = skip_ws(line);
    *why = "not a JSON object";
    if (*p++ != '{')
        return false;
    p = skip_ws(p);
    bool good = true;
    if (*p == '}') {
        p++;
    } else {
        while (good) {
            char *key = NULL;
            p = skip_ws(p);
            good = read_string(&p, &key);
            p = skip_ws(p);
            good = good && *p++ == ':';
            p = skip_ws(p);
            char **text = !good ? NULL : !strcmp(key, "input") ? &f->input : !strcmp(key, "output") ? &f->output
                                       : !strcmp(key, "status") ? &f->status : !strcmp(key, "error") ? &f->error
                                                                                                      : NULL;
            double *num = !good ? NULL : !strcmp(key, "page") ? &f->page : !strcmp(key, "start_ms") ? &f->start_ms
                                       : !strcmp(key, "wall_ms") ? &f->wall_ms : NULL;
            free(key);
            if (good && text && *p == '"') {
                free(*text);
                *text = NULL;
                good = read_string(&p, text);
            } else if (good && num && *p != 'n') {
                good = read_number(&p, num);
            } else {
                good = good && skip_value(&p, 1);
            }
            p = skip_ws(p);
            if (good && *p == ',')
                p++;
            else {
                good = good && *p++ == '}';
                break;
            }
        }
    }
    if (good && *skip_ws(p) != '\0')
        good = false;
    if (good && (!f->input || !f->output || !f->status))
        *why = "no input, output or status";
    else if (good && strcmp(f->status, "ok") && strcmp(f->status, "failed") && strcmp(f->status, "skipped"))
        *why = "a status other than ok, failed or skipped";
    else if (good)
        return true;
    return false;
}

static void free_fields(fields *f)
{
    free(f->input);
    free(f->output);
    free(f->status);
    free(f->error);
}

/* ---- the account --------------------------------------------------------- */

/* Precedence of the states a page's lines can give it: ok over skipped over failed. */
static int rank(int state)
{
    return state == DB_BATCH_OK ? 2 : state == DB_BATCH_SKIPPED ? 1 : 0;
}

static int *count_of(db_batch_logs *logs, int state)
{
    return state == DB_BATCH_OK ? &logs->ok : state == DB_BATCH_SKIPPED ? &logs->skipped : &logs->failed;
}

static size_t slot_hash(const uint8_t digest[16])
{
    size_t h;
    memcpy(&h, digest, sizeof h);
    return h;
}

static db_status grow_table(db_batch_logs *logs)
{
    size_t n = logs->n_slots ? logs->n_slots * 2 : 1024;
    db_batch_log_slot *slots = calloc(n, sizeof *slots);
    if (!slots)
        return db_fail(DB_ERR_NOMEM, "out of memory merging the logs of %zu pages", logs->n_pages);
    for (size_t i = 0; i < logs->n_slots; i++) {
        if (!logs->slots[i].used)
            continue;
        size_t j = slot_hash(logs->slots[i].digest) & (n - 1);
        while (slots[j].used)
            j = (j + 1) & (n - 1);
        slots[j] = logs->slots[i];
    }
    /* The pages named in the lists keep their slots' new places. */
    for (int k = 0; k < 2; k++) {
        db_batch_log_page *list = k ? logs->repeats : logs->failures;
        int count = k ? logs->n_repeats : logs->n_failures;
        for (int i = 0; i < count; i++) {
            size_t j = slot_hash(logs->slots[list[i].slot].digest) & (n - 1);
            while (memcmp(slots[j].digest, logs->slots[list[i].slot].digest, 16))
                j = (j + 1) & (n - 1);
            list[i].slot = j;
        }
    }
    free(logs->slots);
    logs->slots = slots;
    logs->n_slots = n;
    return DB_OK;
}

/* The slot of the page (`output`, `page`), made when new (*fresh). */
static db_status find_slot(db_batch_logs *logs, const char *output, int page, size_t *at, bool *fresh)
{
    if ((logs->n_pages + 1) * 2 > logs->n_slots) {
        db_status st = grow_table(logs);
        if (st != DB_OK)
            return st;
    }
    db_sha256 h;
    uint8_t digest[32];
    char number[16];
    snprintf(number, sizeof number, "%d", page);
    db_sha256_init(&h);
    db_sha256_update(&h, output, strlen(output) + 1);
    db_sha256_update(&h, number, strlen(number));
    db_sha256_final(&h, digest);
    size_t j = slot_hash(digest) & (logs->n_slots - 1);
    while (logs->slots[j].used && memcmp(logs->slots[j].digest, digest, 16))
        j = (j + 1) & (logs->n_slots - 1);
    *fresh = !logs->slots[j].used;
    if (*fresh) {
        memcpy(logs->slots[j].digest, digest, 16);
        logs->slots[j].used = true;
        logs->slots[j].failure = -1;
        logs->n_pages++;
    }
    *at = j;
    return DB_OK;
}

/* Appends a named page to one of the lists; takes the names from `f`. */
static db_status name_page(db_batch_log_page **list, int *n, int *cap, fields *f, int page, size_t slot)
{
    if (*n == INT_MAX || !db_reserve((void **)list, *n, cap, sizeof **list))
        return db_fail(DB_ERR_NOMEM, "out of memory listing %d pages", *n);
    (*list)[(*n)++] = (db_batch_log_page){.input = f->input, .output = f->output, .error = f->error,
                                          .page = page, .slot = slot};
    f->input = f->output = f->error = NULL;
    return DB_OK;
}

/* Counts one line of `file` into the account. */
static db_status add_line(db_batch_logs *logs, db_batch_log_file *file, fields *f)
{
    int state = !strcmp(f->status, "ok") ? DB_BATCH_OK : !strcmp(f->status, "skipped") ? DB_BATCH_SKIPPED
                                                                                       : DB_BATCH_FAILED;
    int page = f->page >= 1 && f->page <= INT_MAX ? (int)f->page : 0;
    *(state == DB_BATCH_OK ? &file->ok : state == DB_BATCH_SKIPPED ? &file->skipped : &file->failed) += 1;
    double end = (f->start_ms + f->wall_ms) / 1000.0;
    if (end > file->wall_s)
        file->wall_s = end;
    size_t at;
    bool fresh;
    db_status st = find_slot(logs, f->output, page, &at, &fresh);
    if (st != DB_OK)
        return st;
    db_batch_log_slot *s = &logs->slots[at];
    if (fresh) {
        s->state = (uint8_t)state;
        (*count_of(logs, state))++;
    } else if (rank(state) > rank(s->state)) {
        (*count_of(logs, s->state))--;
        s->state = (uint8_t)state;
        (*count_of(logs, state))++;
    }
    if (state == DB_BATCH_OK && ++s->writes == 2)
        return name_page(&logs->repeats, &logs->n_repeats, &logs->cap_repeats, f, page, at);
    if (state == DB_BATCH_FAILED) {
        if (!f->error && !(f->error = strdup("(no reason logged)")))
            return db_fail(DB_ERR_NOMEM, "out of memory merging the logs");
        s->failure = logs->n_failures;
        return name_page(&logs->failures, &logs->n_failures, &logs->cap_failures, f, page, at);
    }
    return DB_OK;
}

static db_status add_file(db_batch_logs *logs, const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return db_fail(DB_ERR_IO, "cannot read the log %s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return db_fail(DB_ERR_IO, "the log %s is not a file; give the files --log-json wrote", path);
    }
    FILE *in = fdopen(fd, "r");
    char *line = malloc(LINE_MAX_BYTES + 2);
    if (!in || !line || !db_reserve((void **)&logs->files, logs->n_files, &logs->cap_files, sizeof *logs->files)) {
        if (in)
            fclose(in);
        else
            close(fd);
        free(line);
        return db_fail(DB_ERR_NOMEM, "out of memory reading the log %s", path);
    }
    db_batch_log_file *file = &logs->files[logs->n_files];
    *file = (db_batch_log_file){.path = strdup(path),
                                .end_s = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec / 1e9};
    db_status st = file->path ? DB_OK : db_fail(DB_ERR_NOMEM, "out of memory reading the log %s", path);
    if (st == DB_OK)
        logs->n_files++;
    for (long line_no = 1; st == DB_OK && fgets(line, LINE_MAX_BYTES + 2, in); line_no++) {
        size_t len = strlen(line);
        bool whole = len && line[len - 1] == '\n';
        if (!whole && len > LINE_MAX_BYTES) {
            st = db_fail(DB_ERR_FORMAT, "%s:%ld: a line longer than %d bytes is not one of a docbin log; give the "
                         "files --log-json wrote", path, line_no, LINE_MAX_BYTES);
            break;
        }
        if (*skip_ws(line) == '\0')
            continue;
        fields f;
        const char *why;
        bool good = read_line_object(line, &f, &why);
        if (good)
            st = add_line(logs, file, &f);
        else if (!whole && feof(in))
            file->cut = true; /* a task killed while it wrote its last line */
        else
            st = db_fail(DB_ERR_FORMAT, "%s:%ld: not a line of a docbin log (%s); give the files --log-json wrote",
                         path, line_no, why);
        free_fields(&f);
    }
    if (st == DB_OK && ferror(in))
        st = db_fail(DB_ERR_IO, "cannot read the log %s: %s", path, strerror(errno));
    fclose(in);
    free(line);
    return st;
}

db_status db_batch_logs_add(db_batch_logs *logs, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return add_file(logs, path);
    static const char *const jsonl[] = {".jsonl"};
    char **names;
    size_t n;
    db_status st = db_image_list_dir(path, jsonl, 1, &names, &n);
    if (st == DB_OK && n == 0)
        st = db_fail(DB_ERR_IO, "the directory %s holds no log (*.jsonl); give the files --log-json wrote", path);
    size_t len = strlen(path);
    for (size_t i = 0; i < n && st == DB_OK; i++) {
        char *file;
        if (asprintf(&file, "%s%s%s", path, len && path[len - 1] == '/' ? "" : "/", names[i]) < 0)
            return db_fail(DB_ERR_NOMEM, "out of memory listing %s", path);
        st = add_file(logs, file);
        free(file);
    }
    db_image_list_free(names, n);
    return st;
}

/* ---- the report ------------------------------------------------------------ */

static void print_page(const db_batch_log_page *p, FILE *f)
{
    fputs("  ", f);
    db_fputs_escaped(p->output, f);
    if (p->page)
        fprintf(f, " page %d", p->page);
}

void db_batch_logs_print(const db_batch_logs *logs, FILE *f)
{
    fprintf(f, "docbin batch summary of %d log%s\n", logs->n_files, logs->n_files == 1 ? "" : "s");
    fprintf(f, "pages: %zu: %d ok, %d failed, %d skipped (their outputs were there already)\n", logs->n_pages,
            logs->ok, logs->failed, logs->skipped);
    int width = 3;
    for (int i = 0; i < logs->n_files; i++) {
        int w = (int)strlen(logs->files[i].path);
        width = w > width ? (w < 60 ? w : 60) : width;
    }
    fprintf(f, "%-*s %8s %8s %8s %10s %9s\n", width, "log", "ok", "failed", "skipped", "wall s", "pages/s");
    double pages = 0, task_s = 0, first = 0, last = 0;
    int tasks = 0;
    for (int i = 0; i < logs->n_files; i++) {
        const db_batch_log_file *t = &logs->files[i];
        int ran = t->ok + t->failed;
        char rate[32] = "-";
        if (ran && t->wall_s > 0)
            snprintf(rate, sizeof rate, "%.2f", ran / t->wall_s);
        db_fputs_escaped(t->path, f);
        int w = (int)strlen(t->path);
        fprintf(f, "%*s %8d %8d %8d %10.2f %9s%s\n", w < width ? width - w : 0, "", t->ok, t->failed, t->skipped,
                t->wall_s, rate, t->cut ? "  (last line cut short: the task was killed)" : "");
        if (!ran)
            continue;
        double start = t->end_s - t->wall_s;
        first = tasks == 0 || start < first ? start : first;
        last = tasks == 0 || t->end_s > last ? t->end_s : last;
        tasks++;
        pages += ran;
        task_s += t->wall_s;
    }
    if (tasks && task_s > 0)
        fprintf(f, "per task: %.2f pages/s (%.0f page%s in %.2f s of %d task%s)\n", pages / task_s, pages,
                pages == 1 ? "" : "s", task_s, tasks, tasks == 1 ? "" : "s");
    if (tasks && last - first > 0)
        fprintf(f, "overall: %.2f pages/s (%.2f s from the first task's start to the last one's end, by the "
                "logs' times)\n", pages / (last - first), last - first);
    fprintf(f, "failed: %d\n", logs->failed);
    for (int i = 0; i < logs->n_failures; i++) {
        const db_batch_log_page *p = &logs->failures[i];
        const db_batch_log_slot *s = &logs->slots[p->slot];
        if (s->state != DB_BATCH_FAILED || s->failure != i)
            continue;
        fputs("  ", f);
        if (!strstr(p->error, p->input)) {
            db_fputs_escaped(p->input, f);
            fputs(": ", f);
        }
        db_fputs_escaped(p->error, f);
        fputc('\n', f);
    }
    if (logs->n_repeats) {
        fprintf(f, "written more than once: %d (by overlapping shards, or a rerun without --skip-existing)\n",
                logs->n_repeats);
        for (int i = 0; i < logs->n_repeats; i++) {
            print_page(&logs->repeats[i], f);
            fprintf(f, ": %u times\n", (unsigned)logs->slots[logs->repeats[i].slot].writes);
        }
    }
}

void db_batch_logs_free(db_batch_logs *logs)
{
    for (int i = 0; i < logs->n_files; i++)
        free(logs->files[i].path);
    for (int k = 0; k < 2; k++) {
        db_batch_log_page *list = k ? logs->repeats : logs->failures;
        int n = k ? logs->n_repeats : logs->n_failures;
        for (int i = 0; i < n; i++) {
            free(list[i].input);
            free(list[i].output);
            free(list[i].error);
        }
        free(list);
    }
    free(logs->files);
    free(logs->slots);
    memset(logs, 0, sizeof *logs);
}
