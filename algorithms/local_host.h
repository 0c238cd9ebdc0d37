/*
** local_host.h — the local methods' fused window sums and threshold as host
** code (algorithms/local_host.c), for the cpu role.
*/
#ifndef DB_LOCAL_HOST_H
#define DB_LOCAL_HOST_H

#include <stddef.h>
#include <stdint.h>

/* The methods, numbered as cl/local_threshold.cl numbers them. */
typedef enum db_local_method { DB_LOCAL_NIBLACK, DB_LOCAL_SAUVOLA, DB_LOCAL_NICK, DB_LOCAL_WOLF } db_local_method;

/* The job of one page, copied into the host call. */
typedef struct db_local_args {
    int width, height, half; /* half = (window - 1) / 2, at most 127 */
    int method;              /* db_local_method */
    int threads;
    double k;
} db_local_args;

/* Host code (db_host_fn): ptrs[0] the gray page, ptrs[1] the binary result,
** ptrs[2] the threads' working rows, db_local_work_bytes of them. */
void db_local_host(void *const *ptrs, const void *arg);

/* The bytes of working rows db_local_host needs for `args`. */
size_t db_local_work_bytes(const db_local_args *args);

#endif
