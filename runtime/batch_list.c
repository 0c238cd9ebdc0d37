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

/* ---- Shards from the command line and from the scheduler ------------------- */

/* The most shards of a list (and one more than the highest task index taken). */
enum { SHARD_MAX = 1 << 30 };

static const char shard_forms[] =
    "give K/N (shard K of N, 1 <= K <= N), index=I/N (0 <= I < N, as Slurm arrays and Kubernetes "
    "indexed jobs number their tasks), auto or auto/N";

/* "A/B" with both in [0, SHARD_MAX]; false when `text` is not that. */
static bool two_ints(const char *text, long long *a, long long *b)
{
    const char *slash = strchr(text, '/');
    char first[32];
    if (!slash || (size_t)(slash - text) >= sizeof first)
        return false;
    memcpy(first, text, (size_t)(slash - text));
    first[slash - text] = '\0';
    return db_parse_int(first, 0, SHARD_MAX, a) && db_parse_int(slash + 1, 0, SHARD_MAX, b);
}

/* Environment variable `name` as a task index: *set is false when it is unset
** or empty; a value that is not a whole number from 0 is an error naming it. */
static db_status env_index(const char *name, bool *set, long long *value)
{
    const char *text = getenv(name);
    *set = text && text[0];
    *value = 0;
    if (*set && !db_parse_int(text, 0, SHARD_MAX, value))
        return db_fail(DB_ERR_USAGE, "--shard auto: %s='%s' is not a task index (a whole number from 0); "
                       "unset it or give --shard K/N", name, text);
    return DB_OK;
}

/* The Slurm array task's shard: with `count` (auto/N) the task index itself,
** else the index within the array's range MIN..MAX. */
static db_status from_slurm(long long id, long long count, long long *index, long long *n)
{
    bool has_min, has_max, has_count, has_step;
    long long min, max, tasks, step;
    db_status st = env_index("SLURM_ARRAY_TASK_MIN", &has_min, &min);
    if (st == DB_OK)
        st = env_index("SLURM_ARRAY_TASK_MAX", &has_max, &max);
    if (st == DB_OK)
        st = env_index("SLURM_ARRAY_TASK_COUNT", &has_count, &tasks);
    if (st == DB_OK)
        st = env_index("SLURM_ARRAY_TASK_STEP", &has_step, &step);
    if (st != DB_OK)
        return st;
    if (has_min != has_max)
        return db_fail(DB_ERR_USAGE, "--shard auto: SLURM_ARRAY_TASK_%s is set but not SLURM_ARRAY_TASK_%s; "
                       "run under sbatch --array, or give --shard index=I/N", has_min ? "MIN" : "MAX",
                       has_min ? "MAX" : "MIN");
    if (has_min && (id < min || id > max))
        return db_fail(DB_ERR_USAGE, "--shard auto: SLURM_ARRAY_TASK_ID=%lld lies outside the array's range "
                       "%lld-%lld (SLURM_ARRAY_TASK_MIN, _MAX); give --shard index=I/N", id, min, max);
    if (count) {
        /* Indices are the array's own, so that one task submitted again
        ** alone (sbatch --array=5) takes the same pages as before. */
        long long top = has_max ? max : id;
        if (top >= count)
            return db_fail(DB_ERR_USAGE, "--shard auto/%lld: the array runs to task %lld, but %lld shards are "
                           "numbered 0 to %lld; submit with --array=0-%lld (or a part of that range)", count, top,
                           count, count - 1, count - 1);
        *index = id;
        *n = count;
        return DB_OK;
    }
    if (!has_min && !has_count)
        return db_fail(DB_ERR_USAGE, "--shard auto: SLURM_ARRAY_TASK_ID is set but neither the array's range "
                       "(SLURM_ARRAY_TASK_MIN, _MAX) nor its size (SLURM_ARRAY_TASK_COUNT); give the count, "
                       "--shard auto/N");
    if (has_step && step != 1)
        return db_fail(DB_ERR_USAGE, "--shard auto: the array steps by %lld (SLURM_ARRAY_TASK_STEP), so its "
                       "indices leave gaps; submit --array=0-N-1, or give the count: --shard auto/N", step);
    if (has_min && has_count && tasks != max - min + 1)
        return db_fail(DB_ERR_USAGE, "--shard auto: the array has %lld tasks (SLURM_ARRAY_TASK_COUNT) but spans "
                       "%lld-%lld, so its indices leave gaps; submit --array=0-N-1, or give the count: "
                       "--shard auto/N", tasks, min, max);
    long long first = has_min ? min : 0, size = has_min ? max - min + 1 : tasks;
    if (!has_min && id >= tasks)
        return db_fail(DB_ERR_USAGE, "--shard auto: SLURM_ARRAY_TASK_ID=%lld in an array of %lld tasks "
                       "(SLURM_ARRAY_TASK_COUNT) whose range is not given; give --shard auto/N", id, tasks);
    if (size == 1)
        /* One task submitted again alone would take every page. */
        return db_fail(DB_ERR_USAGE, "--shard auto: this array has one task (%lld), which may be one task "
                       "of a larger array submitted again; give the count, --shard auto/N, or leave out --shard",
                       id);
    *index = id - first;
    *n = size;
    return DB_OK;
}

/* --shard auto (count 0) or auto/N: the task's index, and the count, from
** the scheduler's environment. */
static db_status from_environment(long long count, long long *index, long long *n)
{
    bool slurm, k8s;
    long long id, completion;
    db_status st = env_index("SLURM_ARRAY_TASK_ID", &slurm, &id);
    if (st == DB_OK)
        st = env_index("JOB_COMPLETION_INDEX", &k8s, &completion);
    if (st != DB_OK)
        return st;
    if (slurm && k8s)
        return db_fail(DB_ERR_USAGE, "--shard auto: both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set, "
                       "and they may disagree; unset one, or give --shard index=I/N");
    if (slurm)
        return from_slurm(id, count, index, n);
    if (k8s) {
        if (!count)
            return db_fail(DB_ERR_USAGE, "--shard auto: a Kubernetes indexed job (JOB_COMPLETION_INDEX=%lld) "
                           "does not say how many tasks it has; give --shard auto/N, N being its completions",
                           completion);
        if (completion >= count)
            return db_fail(DB_ERR_USAGE, "--shard auto/%lld: JOB_COMPLETION_INDEX=%lld, but %lld shards are "
                           "numbered 0 to %lld; give the job's completions as N", count, completion, count,
                           count - 1);
        *index = completion;
        *n = count;
        return DB_OK;
    }
    const char *job = getenv("SLURM_JOB_ID");
    if (job && job[0])
        return db_fail(DB_ERR_USAGE, "--shard auto: Slurm job %s is not an array task (no SLURM_ARRAY_TASK_ID); "
                       "submit it with sbatch --array=0-N-1, or give --shard K/N", job);
    return db_fail(DB_ERR_USAGE, "--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm array task) nor "
                   "JOB_COMPLETION_INDEX (a Kubernetes indexed job) is set; give --shard K/N");
}

db_status db_batch_shard_parse(const char *text, int *k, int *n)
{
    long long a = 0, b = 0, index, count;
    db_status st = DB_OK;
    if (!strcmp(text, "auto")) {
        st = from_environment(0, &index, &count);
    } else if (!strncmp(text, "auto/", 5)) {
        if (!db_parse_int(text + 5, 1, SHARD_MAX, &count))
            return db_fail(DB_ERR_USAGE, "--shard %s: N must be a whole number from 1 to %d", text, SHARD_MAX);
        st = from_environment(count, &index, &count);
    } else if (!strncmp(text, "index=", 6)) {
        if (!two_ints(text + 6, &a, &b) || b < 1 || a >= b)
            return db_fail(DB_ERR_USAGE, "--shard %s: index=I/N takes 0 <= I < N; %s", text, shard_forms);
        index = a;
        count = b;
    } else {
        if (!two_ints(text, &a, &b) || a < 1 || a > b)
            return db_fail(DB_ERR_USAGE, "--shard %s: %s%s", text, shard_forms,
                           two_ints(text, &a, &b) && a == 0 && b > 0 ? " (shard 0 is index=0/N)" : "");
        index = a - 1;
        count = b;
    }
    if (st != DB_OK)
        return st;
    *k = (int)index + 1;
    *n = (int)count;
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
