/*
** batch_list.c — the inputs of a batch (@lists, directories), their output
** names and shards.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "runtime/batch.h"
#include "runtime/image.h"
#include "runtime/util.h"

static db_status push(db_batch_list *list, const char *path, size_t len)
{
    if (!db_reserve((void **)&list->inputs, list->n, &list->cap, sizeof *list->inputs))
        return db_fail(DB_ERR_NOMEM, "out of memory listing %d inputs", list->n);
    char *copy = strndup(path, len);
    if (!copy)
        return db_fail(DB_ERR_NOMEM, "out of memory listing %d inputs", list->n);
    list->inputs[list->n++] = copy;
    return DB_OK;
}

static db_status add_list_file(db_batch_list *list, const char *path)
{
    size_t size;
    char *text;
    db_status st = db_read_file(path, DB_READ_TEXT_MAX, &text, &size);
    if (st != DB_OK)
        return db_fail(st, "list file: %s", db_error_message());
    for (char *line = text; st == DB_OK && line < text + size;) {
        char *end = memchr(line, '\n', (size_t)(text + size - line));
        if (!end)
            end = text + size;
        size_t len = (size_t)(end - line);
        if (len && line[len - 1] == '\r')
            len--; /* a list written on Windows */
        size_t blank = strspn(line, " \t");
        if (len > blank && line[0] != '#') {
            if (memchr(line, '\0', len))
                st = db_fail(DB_ERR_FORMAT, "list file %s holds a NUL byte; give one path per line", path);
            else
                st = push(list, line, len);
        }
        line = end + 1;
    }
    free(text);
    return st;
}

/* The image files of `dir` (db_image_list_dir), in name order. */
static db_status add_directory(db_batch_list *list, const char *dir)
{
    char **names;
    size_t n;
    db_status st = db_image_list_dir(dir, db_image_exts, DB_IMAGE_N_EXTS, &names, &n);
    size_t dir_len = strlen(dir);
    bool slash = dir_len && dir[dir_len - 1] == '/';
    for (size_t i = 0; i < n && st == DB_OK; i++) {
        char path[PATH_MAX];
        int len = snprintf(path, sizeof path, "%s%s%s", dir, slash ? "" : "/", names[i]);
        st = len < (int)sizeof path ? push(list, path, (size_t)len)
                                    : db_fail(DB_ERR_IO, "%s/%s: path too long", dir, names[i]);
    }
    db_image_list_free(names, n);
    return st;
}

db_status db_batch_list_add(db_batch_list *list, const char *arg)
{
    if (!arg[0])
        return db_fail(DB_ERR_USAGE, "an empty input name was given");
    if (arg[0] == '@')
        return add_list_file(list, arg + 1);
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode))
        return add_directory(list, arg);
    return push(list, arg, strlen(arg));
}

/* Orders indices by output name, so that equal names end up side by side. */
static int compare_outputs(const void *a, const void *b, void *user)
{
    const db_batch_list *list = user;
    int i = *(const int *)a, j = *(const int *)b;
    int c = strcmp(list->outputs[i], list->outputs[j]);
    return c ? c : (i > j) - (i < j);
}

/* The directory part of `path` resolved, or "" when it cannot be. */
static void real_dir(const char *path, char *out)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!realpath(dir, out))
        out[0] = '\0';
}

db_status db_batch_list_name_outputs(db_batch_list *list, const char *out_dir, const char *ext)
{
    free(list->outputs);
    list->outputs = calloc(list->n ? (size_t)list->n : 1, sizeof *list->outputs);
    if (!list->outputs)
        return db_fail(DB_ERR_NOMEM, "out of memory naming %d outputs", list->n);
    size_t dir_len = strlen(out_dir);
    bool slash = dir_len && out_dir[dir_len - 1] == '/';
    for (int i = 0; i < list->n; i++) {
        const char *in = list->inputs[i];
        const char *base = strrchr(in, '/');
        base = base ? base + 1 : in;
        const char *dot = strrchr(base, '.');
        size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
        if (stem == 0)
            return db_fail(DB_ERR_USAGE, "input %s has no file name to name its output after", in);
        if (asprintf(&list->outputs[i], "%s%s%.*s.%s", out_dir, slash ? "" : "/", (int)stem, base, ext) < 0) {
            list->outputs[i] = NULL;
            return db_fail(DB_ERR_NOMEM, "out of memory naming %d outputs", list->n);
        }
    }
    int *order = malloc((list->n ? (size_t)list->n : 1) * sizeof *order);
    if (!order)
        return db_fail(DB_ERR_NOMEM, "out of memory naming %d outputs", list->n);
    for (int i = 0; i < list->n; i++)
        order[i] = i;
    qsort_r(order, (size_t)list->n, sizeof *order, compare_outputs, list);
    db_status st = DB_OK;
    for (int i = 1; i < list->n && st == DB_OK; i++) {
        int a = order[i - 1], b = order[i];
        if (!strcmp(list->outputs[a], list->outputs[b]))
            st = db_fail(DB_ERR_USAGE, "inputs %s and %s would both write %s; rename one, or run them "
                         "with different --out-dir", list->inputs[a], list->inputs[b], list->outputs[a]);
    }
    free(order);
    if (st != DB_OK)
        return st;

    free(list->out_dir);
    if (!(list->out_dir = strdup(out_dir)))
        return db_fail(DB_ERR_NOMEM, "out of memory naming %d outputs", list->n);
    /* A directory still to be made holds no input. */
    char out_real[PATH_MAX];
    if (!realpath(out_dir, out_real))
        return DB_OK;
    /* Writing into the input's own directory under its own name would replace
    ** the page with its binarization. Inputs come grouped by directory, so the
    ** resolved directory is cached. */
    char last_dir[PATH_MAX] = "", last_real[PATH_MAX] = "";
    bool have_last = false;
    for (int i = 0; i < list->n; i++) {
        const char *in = list->inputs[i];
        const char *base = strrchr(in, '/');
        base = base ? base + 1 : in;
        const char *dot = strrchr(base, '.');
        if (!dot || dot == base || strcmp(dot + 1, ext))
            continue;
        size_t dl = (size_t)(base - in);
        if (!have_last || dl >= sizeof last_dir || strncmp(last_dir, in, dl) || last_dir[dl]) {
            snprintf(last_dir, sizeof last_dir, "%.*s", (int)dl, in);
            real_dir(in, last_real);
            have_last = true;
        }
        if (!strcmp(last_real, out_real))
            return db_fail(DB_ERR_USAGE, "the output of %s would overwrite the input itself (%s); "
                           "choose another --out-dir or --format", in, list->outputs[i]);
    }
    return DB_OK;
}

db_status db_batch_list_shard(db_batch_list *list, int k, int n)
{
    if (n < 1 || k < 1 || k > n)
        return db_fail(DB_ERR_USAGE, "shard %d/%d: give K/N with 1 <= K <= N, e.g. --shard 2/8", k, n);
    int kept = 0;
    for (int i = 0; i < list->n; i++) {
        if (i % n == k - 1) {
            list->inputs[kept] = list->inputs[i];
            if (list->outputs)
                list->outputs[kept] = list->outputs[i];
            kept++;
        } else {
            free(list->inputs[i]);
            if (list->outputs)
                free(list->outputs[i]);
        }
    }
    list->n = kept;
    /* Sharding a shard numbers it within the whole list still. */
    if (list->shard_n) {
        list->shard_k = list->shard_k + (k - 1) * list->shard_n;
        list->shard_n *= n;
    } else {
        list->shard_k = k;
        list->shard_n = n;
    }
    return DB_OK;
}

void db_batch_list_free(db_batch_list *list)
{
    for (int i = 0; i < list->n; i++) {
        free(list->inputs[i]);
        if (list->outputs)
            free(list->outputs[i]);
    }
    free(list->inputs);
    free(list->outputs);
    free(list->out_dir);
    memset(list, 0, sizeof *list);
}
