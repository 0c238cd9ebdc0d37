/*
** image_dir.c — the image files of a directory, for batches and evaluations
** that take a directory instead of a list of files.
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "runtime/image.h"
#include "runtime/util.h"

/* test_image_io checks that every one of the DB_IMAGE_N_EXTS entries is set. */
const char *const db_image_exts[DB_IMAGE_N_EXTS] = {".png", ".pbm", ".pgm", ".ppm", ".pnm", ".tif", ".tiff",
                                                     ".jpg", ".jpeg", ".jp2", ".j2k"};

const char *db_image_file_ext(const char *name, const char *const *exts, int n_exts)
{
    const char *slash = strrchr(name, '/');
    const char *dot = strrchr(slash ? slash + 1 : name, '.');
    if (!dot)
        return NULL;
    for (int i = 0; i < n_exts; i++)
        if (!strcasecmp(dot, exts[i]))
            return dot;
    return NULL;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether entry `name` of `dir` is to be left out: known not to be a regular
** file. *st is set when its path does not fit. */
static bool not_a_file(const char *dir, const char *name, db_status *st)
{
    char path[PATH_MAX];
    size_t len = strlen(dir);
    if (snprintf(path, sizeof path, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name) >=
        (int)sizeof path) {
        *st = db_fail(DB_ERR_IO, "%s/%s: path too long", dir, name);
        return true;
    }
    struct stat sb;
    return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

db_status db_image_list_dir(const char *dir, const char *const *exts, int n_exts, char ***names, size_t *count)
{
    *names = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return db_fail(DB_ERR_IO, "cannot read directory %s: %s", dir, strerror(errno));
    char **list = NULL;
    int n = 0, cap = 0;
    db_status st = DB_OK;
    struct dirent *e;
    while (st == DB_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !db_image_file_ext(e->d_name, exts, n_exts) || not_a_file(dir, e->d_name, &st))
            continue;
        if (n == INT_MAX || !db_reserve((void **)&list, n, &cap, sizeof *list))
            st = db_fail(DB_ERR_NOMEM, "out of memory listing directory %s", dir);
        else if (!(list[n] = strdup(e->d_name)))
            st = db_fail(DB_ERR_NOMEM, "out of memory listing directory %s", dir);
        else
            n++;
    }
    closedir(d);
    if (st != DB_OK) {
        db_image_list_free(list, (size_t)n);
        return st;
    }
    if (n)
        qsort(list, (size_t)n, sizeof *list, compare_names);
    *names = list;
    *count = (size_t)n;
    return DB_OK;
}

void db_image_list_free(char **names, size_t count)
{
    for (size_t i = 0; names && i < count; i++)
        free(names[i]);
    free(names);
}
