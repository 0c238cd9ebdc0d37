/*
** testutil.h — checks and setup shared by the C tests.
** Exit status follows Meson: 0 pass, 77 skipped, anything else fails.
*/
#ifndef DB_TESTUTIL_H
#define DB_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/docbin.h"

static int test_failures;

/* Records a failure with its location; the test goes on so one run shows all failures. */
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            test_failures++;                                                  \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

/* Opens the devices as the environment binds them; skips the test when there
** is no OpenCL device for both roles (a machine without PoCL). */
static inline db_context *test_open_context(void)
{
    db_context *ctx = NULL;
    if (db_context_open(NULL, NULL, &ctx) != DB_OK) {
        fprintf(stderr, "SKIP: no usable OpenCL devices: %s\n", db_error_message());
        exit(77);
    }
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (!db_context_device(ctx, (db_role)r)) {
            fprintf(stderr, "SKIP: the %s role has no device (%s)\n", db_role_name((db_role)r),
                    db_error_message());
            exit(77);
        }
    return ctx;
}

/* xorshift32: test images that are the same on every machine. */
static inline uint32_t test_random(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

/* Number of differing pixels between two equal-size buffers. */
static inline size_t test_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

/* The value of report field `name`, or INT64_MIN when the run reported none. */
static inline int64_t test_report_value(const db_report *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->fields[i].name, name))
            return r->values[i];
    return INT64_MIN;
}

static inline int test_result(const char *name)
{
    if (test_failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, test_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

#endif
