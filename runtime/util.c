/*
** util.c — files, clocks and warnings shared by the library.
*/
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <sys/file.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "runtime/util.h"
#include "runtime/docbin.h"

void db_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("docbin: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

db_status db_read_stream(int fd, const char *name, size_t max, uint8_t **bytes, size_t *size)
{
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    *bytes = NULL;
    *size = 0;
    for (;;) {
        if (!buf)
            return db_fail(DB_ERR_NOMEM, "out of memory reading %s", name);
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            return db_fail(DB_ERR_IO, "cannot read %s: %s", name, strerror(e));
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max) {
            free(buf);
            return db_fail(DB_ERR_IO, "%s holds more than %zu bytes, more than a page may; is it the right stream?",
                           name, max);
        }
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger)
                free(buf);
            buf = bigger;
            cap *= 2;
        }
    }
    *bytes = buf;
    *size = n;
    return DB_OK;
}

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a pipe (FIFO)" : S_ISCHR(mode) ? "a character device"
           : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

db_status db_read_file(const char *path, size_t max, char **text, size_t *size)
{
    *text = NULL;
    if (size)
        *size = 0;
    /* O_NONBLOCK: opening a FIFO without a writer would wait forever; a regular file ignores it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        db_status st = db_fail(DB_ERR_IO, "cannot read %s: %s", path, strerror(e));
        errno = e;
        return st;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return db_fail(DB_ERR_IO, "cannot read %s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        errno = EINVAL;
        return db_fail(DB_ERR_IO, "%s is %s, not a file; give a regular file", path, file_kind(sb.st_mode));
    }
    if ((unsigned long long)sb.st_size > max) {
        close(fd);
        errno = EFBIG;
        return db_fail(DB_ERR_IO, "%s is %lld bytes, more than the %zu this file may hold; is it the right file?",
                       path, (long long)sb.st_size, max);
    }
    /* One byte more than the size, to notice a file that grows while it is read. */
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return db_fail(DB_ERR_NOMEM, "out of memory reading %s (%zu bytes)", path, cap - 1);
    }
    for (ssize_t got = 1; got > 0 && n < cap;) {
        got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            got = 1;
        else if (got < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return db_fail(DB_ERR_IO, "cannot read %s: %s", path, strerror(e));
        } else
            n += (size_t)got;
    }
    close(fd);
    if (n > (size_t)sb.st_size) {
        free(buf);
        errno = EAGAIN;
        return db_fail(DB_ERR_IO, "%s grew while it was read; read it again once it is complete", path);
    }
    buf[n] = '\0';
    *text = buf;
    if (size)
        *size = n;
    return DB_OK;
}

/* The process umask. mkstemp creates files readable by the owner only; an
** output should get the permissions any other new file would. umask() cannot be
** read without changing it, which races with other threads, so read it from
** /proc; 022 is the usual value when /proc is not there. */
static mode_t current_umask(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return mask;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned int value;
        if (sscanf(line, "Umask: %o", &value) == 1) {
            mask = (mode_t)(value & 0777);
            break;
        }
    }
    fclose(f);
    return mask;
}

db_status db_atomic_open(db_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    if (strlen(path) + 16 >= sizeof af->tmp_path)
        return db_fail(DB_ERR_IO, "cannot write %s: path too long", path);
    snprintf(af->path, sizeof af->path, "%s", path);
    /* The temporary file sits beside the target: rename() is atomic only within a file system. */
    const char *base = strrchr(path, '/');
    size_t dir_len = base ? (size_t)(base - path) + 1 : 0;
    snprintf(af->tmp_path, sizeof af->tmp_path, "%.*s.%s.XXXXXX", (int)dir_len, path, base ? base + 1 : path);
    int fd = mkstemp(af->tmp_path);
    if (fd < 0) {
        int e = errno;
        return db_fail(DB_ERR_IO, "cannot write %s: %s%s", path, strerror(e),
                       e == ENOENT ? " (does the directory exist?)"
                       : e == EACCES || e == EROFS ? " (is the directory writable?)" : "");
    }
    /* Held until the file is committed or removed: a temporary file nobody
    ** holds is left over from a killed run (db_remove_stale_temps). */
    (void)flock(fd, LOCK_EX | LOCK_NB);
    if (fchmod(fd, 0666 & ~current_umask()) != 0) {
        int e = errno;
        close(fd);
        unlink(af->tmp_path);
        return db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        int e = errno;
        close(fd);
        unlink(af->tmp_path);
        return db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return DB_OK;
}

db_status db_atomic_commit(db_atomic_file *af)
{
    int failed = fflush(af->f) != 0 || ferror(af->f);
    int e = errno;
    if (!failed && fsync(fileno(af->f)) != 0 && errno != EINVAL && errno != EROFS) {
        failed = 1;
        e = errno;
    }
    if (fclose(af->f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    af->f = NULL;
    if (!failed && rename(af->tmp_path, af->path) != 0) {
        failed = 1;
        e = errno;
    }
    if (failed) {
        unlink(af->tmp_path);
        return db_fail(DB_ERR_IO, "cannot write %s: %s%s", af->path, strerror(e),
                       e == ENOSPC ? " (the disk is full)" : "");
    }
    return DB_OK;
}

void db_atomic_abort(db_atomic_file *af)
{
    if (af->f)
        fclose(af->f);
    af->f = NULL;
    if (af->tmp_path[0])
        unlink(af->tmp_path);
}

db_status db_write_file_atomic(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    db_atomic_file af;
    db_status st = db_atomic_open(&af, path);
    if (st != DB_OK)
        return st;
    if ((na && fwrite(a, 1, na, af.f) != na) || (nb && fwrite(b, 1, nb, af.f) != nb)) {
        int e = errno;
        db_atomic_abort(&af);
        return db_fail(DB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return db_atomic_commit(&af);
}

void db_fputs_escaped(const char *s, FILE *f)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
}

/* The directory part of `path` ("." for none), into dir. */
static void dir_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

db_status db_check_writable(const char *path, const char *what, const char *made_dir)
{
    char dir[4096];
    struct stat sb;
    dir_of(path, dir, sizeof dir);
    if (made_dir) {
        char made[4096];
        snprintf(made, sizeof made, "%s", made_dir);
        for (size_t n = strlen(made); n > 1 && made[n - 1] == '/'; n--)
            made[n - 1] = '\0';
        if (!strcmp(dir, made))
            return DB_OK; /* made before anything is written */
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return db_fail(DB_ERR_IO, "cannot write %s %s: its directory %s does not exist; create it first", what, path,
                       dir);
    if (access(dir, W_OK) != 0)
        return db_fail(DB_ERR_IO, "cannot write %s %s: the directory %s is not writable", what, path, dir);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return db_fail(DB_ERR_IO, "cannot write %s %s: it is a directory; give a file name", what, path);
    return DB_OK;
}

void db_canonical_path(const char *path, char *out, size_t size)
{
    char dir[4096], real[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (realpath(dir, real))
        snprintf(out, size, "%s/%s", strcmp(real, "/") ? real : "", base);
    else
        snprintf(out, size, "%s", path);
}

bool db_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, b))
        return true;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    db_canonical_path(a, ca, sizeof ca);
    db_canonical_path(b, cb, sizeof cb);
    return !strcmp(ca, cb);
}

int db_remove_stale_temps(const char *dir, bool (*ours)(const char *name, const void *user), const void *user)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        /* ".NAME.XXXXXX", as db_atomic_open names them */
        const char *name = e->d_name, *dot = strrchr(name, '.');
        if (name[0] != '.' || !dot || dot == name || strlen(dot + 1) != 6)
            continue;
        bool six = true;
        for (int i = 1; i <= 6; i++)
            six &= isalnum((unsigned char)dot[i]) != 0;
        char target[256];
        if (!six || (size_t)(dot - name) >= sizeof target)
            continue;
        snprintf(target, sizeof target, "%.*s", (int)(dot - name - 1), name + 1);
        if (!ours(target, user))
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat sb;
        /* Only an unheld regular file: a run still writing it holds its lock.
        ** Where locks do not reach other machines (file systems whose flock is
        ** node-local), the lock of a task writing on another node is not seen:
        ** a file written within DB_STALE_TEMP_S is taken to be in use. */
        if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && time(NULL) - sb.st_mtime >= DB_STALE_TEMP_S &&
            flock(fd, LOCK_EX | LOCK_NB) == 0 && unlink(path) == 0)
            removed++;
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return removed;
}

int db_mkdir_p(const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(tmp, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* Length of the valid UTF-8 sequence at `s`, or 0 when it is not one
** (overlong forms, surrogates and values above U+10FFFF are not). */
static int utf8_length(const unsigned char *s)
{
    int n;
    unsigned int c = s[0], min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) {
        n = 2; c &= 0x1f; min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3; c &= 0x0f; min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4; c &= 0x07; min = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return n;
}

void db_json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p++);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p++);
        } else {
            int n = utf8_length(p);
            if (n == 0) {
                fprintf(f, "\\u%04x", 0xdc00 + *p++); /* Python's surrogateescape: os.fsencode gives the byte back */
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
        }
    }
    fputc('"', f);
}

/* The smallest limit in `file` under `root` + `group` and every group above it. */
static unsigned long long cgroup_limit(const char *root, char *group, const char *file, unsigned long long limit)
{
    for (;;) {
        char path[4400];
        snprintf(path, sizeof path, "%s%s/%s", root, group, file);
        FILE *f = fopen(path, "r");
        unsigned long long v;
        /* "max" (v2) reads as no number; v1 writes a huge number for no limit. */
        if (f && fscanf(f, "%llu", &v) == 1 && v > 0 && v < limit)
            limit = v;
        if (f)
            fclose(f);
        char *slash = strrchr(group, '/');
        if (!slash)
            return limit;
        *slash = '\0';
    }
}

static size_t memory_size;
static pthread_once_t memory_once = PTHREAD_ONCE_INIT;

/* Reads the memory size once: images check their size against it on every allocation. */
static void read_memory_size(void)
{
    unsigned long long bytes = (unsigned long long)-1;
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0)
        bytes = (unsigned long long)pages * (unsigned long long)page_size;
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "0::/path" (v2) or "N:...memory...:/path" (v1) */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1;
        if (!strcmp(line, "0") && !controllers[0])
            bytes = cgroup_limit("/sys/fs/cgroup", c2 + 1, "memory.max", bytes);
        else if (strstr(controllers, "memory"))
            bytes = cgroup_limit("/sys/fs/cgroup/memory", c2 + 1, "memory.limit_in_bytes", bytes);
    }
    if (f)
        fclose(f);
    /* A ulimit (Slurm's --mem-per-cpu becomes one on some sites) bounds it too. */
    static const int limits[] = {RLIMIT_AS, RLIMIT_DATA};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        struct rlimit rl;
        if (getrlimit(limits[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < bytes)
            bytes = rl.rlim_cur;
    }
    memory_size = bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

size_t db_memory_size(void)
{
    pthread_once(&memory_once, read_memory_size);
    return memory_size;
}

bool db_reserve(void **array, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return true;
    int new_cap = *cap ? 2 * *cap : 16;
    void *p = realloc(*array, (size_t)new_cap * elem);
    if (!p)
        return false;
    *array = p;
    *cap = new_cap;
    return true;
}

bool db_parse_int(const char *text, long long min, long long max, long long *value)
{
    if (!text || !(isdigit((unsigned char)text[0]) || ((text[0] == '-' || text[0] == '+') &&
                                                       isdigit((unsigned char)text[1]))))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *value = v;
    return true;
}

uint64_t db_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *db_version(void)
{
    return DB_VERSION;
}

void db_copy_rows(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, size_t rows)
{
    if (dst_stride == row_bytes && src_stride == row_bytes) {
        memcpy(dst, src, row_bytes * rows);
        return;
    }
    for (size_t y = 0; y < rows; y++)
        memcpy((unsigned char *)dst + y * dst_stride, (const unsigned char *)src + y * src_stride, row_bytes);
}
