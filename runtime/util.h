/*
** util.h — small helpers shared by the whole library: files, clocks, warnings.
*/
#ifndef DB_UTIL_H
#define DB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "runtime/error.h"

/* Prints "docbin: warning: ..." on stderr; for conditions that degrade, not fail. */
void db_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads the whole regular file `path`, at most `max` bytes, into a
** NUL-terminated malloc'd *text: the one way docbin reads a file it is given.
** Anything else (a FIFO, a device, a directory) is refused before a byte is
** read, so that no read blocks or grows without bound, and so is a larger
** file. Errors name the file and the fix; errno is kept (ENOENT for a missing
** file, which a cache treats as a miss). */
db_status db_read_file(const char *path, size_t max, char **text, size_t *size);

/* Reads the stream `fd` (standard input) to its end, at most `max` bytes,
** into a malloc'd *bytes; `name` names it in messages. A pipe's bytes can be
** read once: this is how a page comes from one. */
db_status db_read_stream(int fd, const char *name, size_t max, uint8_t **bytes, size_t *size);

/* Bounds of db_read_file for docbin's own kinds of file. */
#define DB_READ_TEXT_MAX ((size_t)64 << 20)   /* lists, wisdom, kernel sources */
#define DB_READ_DATA_MAX ((size_t)4 << 30)    /* cached binaries, weight files (10 bytes a pixel) */

/* A file being written under a temporary name in its final directory, so that
** readers never see a partial file: it appears under its name only on commit. */
typedef struct db_atomic_file {
    FILE *f;
    char tmp_path[4096];
    char path[4096];
} db_atomic_file;

/* Creates the temporary file for `path`; on failure the message names `path` and the fix. */
db_status db_atomic_open(db_atomic_file *af, const char *path);

/* Flushes, syncs and renames the file into place; removes it on any failure. */
db_status db_atomic_commit(db_atomic_file *af);

/* Closes and removes the temporary file. */
void db_atomic_abort(db_atomic_file *af);

/* Writes a + b to `path` atomically. */
db_status db_write_file_atomic(const char *path, const void *a, size_t na, const void *b, size_t nb);

/* Writes `s` with control bytes as \xNN: file names in error lines cannot
** move the cursor or hide text on a terminal. */
void db_fputs_escaped(const char *s, FILE *f);

/* Checks, before any work, that `path` can be written: its directory exists
** (or is `made_dir`, which the caller makes first; may be NULL) and is
** writable, and `path` is no directory. `what` names it in the message
** ("output", "log"). */
db_status db_check_writable(const char *path, const char *what, const char *made_dir);

/* Whether paths a and b name the same file: the same existing file (device
** and inode), whatever the links and spellings; else the same path once their
** directories are resolved (a file yet to be written). */
bool db_same_file(const char *a, const char *b);

/* `path` with its directory resolved (realpath), or as given when the
** directory does not exist yet. */
void db_canonical_path(const char *path, char *out, size_t size);

/* Removes from `dir` the temporary files of atomic writes (".NAME.XXXXXX")
** that a killed run left, for the NAMEs `ours(NAME, user)` accepts: only those no
** process holds (a writer holds its file's lock until it commits) and none has
** written for DB_STALE_TEMP_S, so that a run beside this one keeps its own, on
** this machine or, where locks are node-local, on another node sharing the
** directory. Returns how many were removed. */
int db_remove_stale_temps(const char *dir, bool (*ours)(const char *name, const void *user), const void *user);

/* Seconds a temporary file must have gone unwritten to be taken for a killed run's. */
enum { DB_STALE_TEMP_S = 600 };

/* Creates directory `path` and its missing parents (mode 0777 less the umask);
** 0, or -1 with errno set. An existing directory is fine. */
int db_mkdir_p(const char *path);

/* Writes `s` as a JSON string literal: quotes, backslashes and control bytes
** escaped, and each byte that is not valid UTF-8 (file names may hold any
** byte) as \udcXX, Python's surrogateescape, so that every line stays
** parseable JSON and two different names never print alike. */
void db_json_string(FILE *f, const char *s);

/* The memory this process may use, in bytes: the physical memory, or less
** where a cgroup (v2 memory.max or v1 memory.limit_in_bytes, on the process's
** group or any group above it) limits it, as a Slurm job or a container does,
** or a resource limit (RLIMIT_AS, RLIMIT_DATA: ulimit -v, -d). */
size_t db_memory_size(void);

/* Copies `rows` rows of `row_bytes` bytes from `src` to `dst` (strides in
** bytes), the whole as one block when both are packed. A run copies only where
** a caller's own memory is involved: pages decoded by docbin lie in staging
** memory already (runtime/buffer.h). */
void db_copy_rows(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, size_t rows);

/* Parses all of `text` as a decimal integer in [min, max]: false for no
** digits, trailing characters, overflow or a value out of range, so that no
** argument wraps silently (4294967297 is not 1). The one way docbin reads an
** integer from a user. */
bool db_parse_int(const char *text, long long min, long long max, long long *value);

/* Grows the malloc'd array *array of `elem`-byte entries, holding n of *cap,
** so that it holds one more (doubling, from 16); false when out of memory. */
bool db_reserve(void **array, int n, int *cap, size_t elem);

/* Monotonic clock in nanoseconds. */
uint64_t db_now_ns(void);

/* Rounds `n` up to a multiple of `m` (m > 0). */
static inline size_t db_round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

#endif
