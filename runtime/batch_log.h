/*
** batch_log.h — the JSON logs of batches read back and merged: the per-task
** logs of a job array (and of its reruns) as one account of every page.
**
** A page is identified by its output and page number, so that the logs of
** the tasks of an array, of a task run again, or of a rerun with
** --skip-existing merge into one state per page: ok where any log wrote it,
** else skipped where a log found its output already there, else failed (with
** the last reason logged). An output that two "ok" lines name was written
** twice: by two tasks whose shards overlap, or by a rerun without
** --skip-existing; it is listed. Pages are kept as 128-bit digests, so that
** the logs of millions of pages merge in a few tens of bytes a page.
*/
#ifndef DB_BATCH_LOG_H
#define DB_BATCH_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "runtime/error.h"

/* One log file: one task, or one attempt of a task. */
typedef struct db_batch_log_file {
    char *path;
    int ok, failed, skipped; /* its lines of each status */
    double wall_s;           /* its last page's end, from its batch's start */
    double end_s;            /* the file's modification time, seconds since the epoch */
    bool cut;                /* its last line was cut short (a task killed while writing it) and left out */
} db_batch_log_file;

/* A page named in the account: one that failed, or one written more than once. */
typedef struct db_batch_log_page {
    char *input, *output, *error;
    int page;   /* of a file of several pages (1-based), else 0 */
    size_t slot;
} db_batch_log_page;

typedef struct db_batch_log_slot db_batch_log_slot;

/* The merged account. Zero-initialise before the first db_batch_logs_add. */
typedef struct db_batch_logs {
    db_batch_log_file *files;
    int n_files, cap_files;
    db_batch_log_slot *slots; /* every distinct page, an open-addressed table */
    size_t n_slots, n_pages;
    int ok, failed, skipped;  /* distinct pages by their merged state */
    db_batch_log_page *failures, *repeats; /* each failure logged; outputs written twice */
    int n_failures, cap_failures, n_repeats, cap_repeats;
} db_batch_logs;

/* Adds the log file at `path` (a file --log-json wrote), or every *.jsonl
** file of the directory `path` in name order. A line that is not one of a
** docbin log is an error naming the file and line; a last line cut short is
** left out and the file marked. */
db_status db_batch_logs_add(db_batch_logs *logs, const char *path);

/* Prints the account: the pages ok, failed and skipped; per log its lines
** and pages per second; per task and over the elapsed time (from the first
** task's start to the last one's end, by the logs' modification times); the
** failed pages with their reasons; the pages written more than once. */
void db_batch_logs_print(const db_batch_logs *logs, FILE *f);

/* Frees everything; the account is empty and reusable afterwards. */
void db_batch_logs_free(db_batch_logs *logs);

#endif
