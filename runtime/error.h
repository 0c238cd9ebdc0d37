/*
** error.h — status codes and the per-thread error message of libdocbin.
**
** Every fallible library call returns a db_status (DB_OK == 0) and, on failure,
** leaves a one-line message for db_error_message() that says what failed, for
** which file or device, and what to do about it. Tools print that line as is.
*/
#ifndef DB_ERROR_H
#define DB_ERROR_H

/* db_status and db_error_message() are public (include/docbin.h). */
#include "include/docbin.h"

/* Records a formatted message for the calling thread and returns `status`,
** so that callers can write `return db_fail(DB_ERR_IO, "...", ...)`. */
db_status db_fail(db_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The status recorded with the calling thread's last message. */
db_status db_error_status(void);

/* Clears the calling thread's message. */
void db_error_clear(void);

/* The exit status of every docbin tool for a status: 0 success; 1 a file could
** not be read or written, or its data is unusable; 2 bad arguments; 3 no device
** for a role, or an OpenCL failure. One table, so scripts can rely on it. */
int db_exit_status(db_status status);

/* Short name of an OpenCL error code, e.g. "CL_OUT_OF_RESOURCES". */
const char *db_cl_error_name(int code);

#endif
