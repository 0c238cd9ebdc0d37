/*
** cli.h — what the three tools share: error lines, exit codes and the
** parsing of option values. Tools parse, validate and call the library.
*/
#ifndef DB_CLI_H
#define DB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include "runtime/error.h"

/* Exit codes besides db_exit_status's, documented in each tool's --help. */
enum cli_exit { CLI_OK = 0, CLI_USAGE = 2 };

/* The program name that prefixes every line (set once in main). */
extern const char *cli_prog;

/* Prints "prog: <the library's message>" and returns the status's exit code. */
int cli_fail(db_status st);

/* Prints "prog: <message> (see prog --help)" and returns CLI_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "prog: note: <message>" (for what the user should know, not a failure). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An integer option value in [min, max] through db_parse_int; false when it is not one. */
bool cli_int(const char *text, long long min, long long max, int *value);

/* "WxH" with both sides from 1 to DB_IMAGE_MAX_SIDE. */
bool cli_size(const char *text, int *width, int *height);

/* A size such as 512M or 8G (powers of 1024), at least 1 byte. */
bool cli_bytes(const char *text, size_t *bytes);

/* ---- options declared as data --------------------------------------------- */

/* What an option's value is, and where it goes in the tool's request struct. */
typedef enum cli_kind {
    CLI_FLAG,    /* no value: sets a bool */
    CLI_STRING,  /* const char * */
    CLI_LIST,    /* repeatable: appends to a cli_list */
    CLI_INT,     /* int in [min, max] */
    CLI_BYTES,   /* size_t, cli_bytes */
    CLI_SIZE,    /* int[2], cli_size */
    CLI_CHOICE   /* int: the index of the value in `choices` */
} cli_kind;

/* The values of a repeatable option, in order. */
typedef struct cli_list {
    const char *v[32];
    int n;
} cli_list;

typedef struct cli_option {
    const char *name;           /* the long name, without "--" */
    char letter;                /* the short name, or 0 */
    cli_kind kind;
    size_t offset;              /* of the field in the request */
    long long min, max;         /* CLI_INT */
    const char *const *choices; /* CLI_CHOICE: NULL-terminated */
} cli_option;

/* An option of request type `type`: CLI_OPT(request, "repeat", 0, CLI_INT, repeat, .min = 1, .max = 9). */
#define CLI_OPT(type, long_name, short_name, value_kind, field, ...)                                            \
    {.name = long_name, .letter = short_name, .kind = value_kind, .offset = offsetof(type, field), __VA_ARGS__}

/* Parses argv against the n options into `request` (fields as the kinds say);
** the arguments that are not options are left in argv[*first..argc). -1 on
** success, else the exit code after a usage line naming the option. Every
** tool's --help (-h) prints `usage` and --version its version: both exit 0. */
int cli_parse(int argc, char **argv, const char *usage, const cli_option *options, int n, void *request, int *first);

/* A progress line on stderr ("\r[step/steps] what"), for db_progress_fn; and
** its erasure before other output. */
void cli_progress(void *user, int step, int steps, const char *what);
void cli_progress_clear(void);

#endif
