/*
** parallel.h — host code spread over the cores: one pool of worker threads
** for the whole process, started on first use and kept.
*/
#ifndef DB_PARALLEL_H
#define DB_PARALLEL_H

/* Threads a call may use at most. */
enum { DB_PARALLEL_MAX = 256 };

/* Runs fn(arg, i) once for every i in [0, n), on the calling thread and on
** up to n - 1 workers, and returns when all have returned. Calls from
** several threads take turns. */
void db_parallel(int n, void (*fn)(void *arg, int i), void *arg);

#endif
