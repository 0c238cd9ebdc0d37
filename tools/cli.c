/*
** cli.c — the tools' shared helpers (cli.h).
*/
#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "runtime/image.h"
#include "runtime/stage.h"
#include "runtime/util.h"
#include "tools/cli.h"

const char *cli_prog = "docbin";

static bool progress_shown;

void cli_progress(void *user, int step, int steps, const char *what)
{
    (void)user;
    fprintf(stderr, "\r[%d/%d] %s\033[K", step, steps, what);
    fflush(stderr);
    progress_shown = true;
}

void cli_progress_clear(void)
{
    if (progress_shown)
        fputs("\r\033[K", stderr);
    progress_shown = false;
}

int cli_fail(db_status st)
{
    cli_progress_clear();
    fprintf(stderr, "%s: ", cli_prog);
    db_fputs_escaped(db_error_message(), stderr);
    fputc('\n', stderr);
    return db_exit_status(st);
}

/* "prog: <prefix><formatted text><suffix>" on stderr, control bytes escaped. */
static void say(const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
    char text[4096];
    vsnprintf(text, sizeof text, fmt, ap);
    fprintf(stderr, "%s: %s", cli_prog, prefix);
    db_fputs_escaped(text, stderr);
    fprintf(stderr, "%s\n", suffix);
}

int cli_usage(const char *fmt, ...)
{
    char suffix[128];
    snprintf(suffix, sizeof suffix, " (see %s --help)", cli_prog);
    va_list ap;
    va_start(ap, fmt);
    say("", suffix, fmt, ap);
    va_end(ap);
    return CLI_USAGE;
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("note: ", "", fmt, ap);
    va_end(ap);
}

bool cli_int(const char *text, long long min, long long max, int *value)
{
    long long v;
    if (!db_parse_int(text, min, max, &v))
        return false;
    *value = (int)v;
    return true;
}

bool cli_size(const char *text, int *width, int *height)
{
    const char *x = strchr(text, 'x');
    char w[32];
    if (!x || (size_t)(x - text) >= sizeof w)
        return false;
    memcpy(w, text, (size_t)(x - text));
    w[x - text] = '\0';
    return cli_int(w, 1, DB_IMAGE_MAX_SIDE, width) && cli_int(x + 1, 1, DB_IMAGE_MAX_SIDE, height);
}

bool cli_bytes(const char *text, size_t *bytes)
{
    static const char units[] = "KMGT";
    size_t len = strlen(text), digits = len;
    const char *u = len && !isdigit((unsigned char)text[len - 1]) ? strchr(units, toupper((unsigned char)text[len - 1]))
                                                                 : NULL;
    if (u && *u)
        digits--;
    else if (len && !isdigit((unsigned char)text[len - 1]))
        return false;
    char num[32];
    long long n;
    if (digits == 0 || digits >= sizeof num)
        return false;
    memcpy(num, text, digits);
    num[digits] = '\0';
    if (!db_parse_int(num, 1, INT64_MAX, &n))
        return false;
    unsigned long long v = (unsigned long long)n;
    for (int shift = u && *u ? 10 * (int)(u - units + 1) : 0; shift > 0; shift -= 10) {
        if (v > SIZE_MAX >> 10)
            return false;
        v <<= 10;
    }
    if (v > SIZE_MAX)
        return false;
    *bytes = (size_t)v;
    return true;
}

/* Stores one option's value; false when the value is not one the option takes. */
static bool store(const cli_option *o, const char *value, char *request)
{
    void *field = request + o->offset;
    switch (o->kind) {
    case CLI_FLAG:
        *(bool *)field = true;
        return true;
    case CLI_STRING:
        *(const char **)field = value;
        return true;
    case CLI_LIST: {
        cli_list *list = field;
        if (list->n == DB_LEN(list->v))
            return false;
        list->v[list->n++] = value;
        return true;
    }
    case CLI_INT:
        return cli_int(value, o->min, o->max, field);
    case CLI_BYTES:
        return cli_bytes(value, field);
    case CLI_SIZE:
        return cli_size(value, &((int *)field)[0], &((int *)field)[1]);
    case CLI_CHOICE:
        for (int i = 0; o->choices[i]; i++)
            if (!strcmp(o->choices[i], value)) {
                *(int *)field = i;
                return true;
            }
        return false;
    }
    return false;
}

/* What a bad value of `o` should have been, for the usage line. */
static void expected(const cli_option *o, char *buf, size_t size)
{
    switch (o->kind) {
    case CLI_INT:
        snprintf(buf, size, "an integer from %lld to %lld", o->min, o->max);
        break;
    case CLI_BYTES:
        snprintf(buf, size, "a size in bytes with an optional K, M, G or T (powers of 1024), e.g. 8G");
        break;
    case CLI_SIZE:
        snprintf(buf, size, "WIDTHxHEIGHT, e.g. 2516x3272 (A4 at 300 dpi)");
        break;
    case CLI_CHOICE:
        buf[0] = '\0';
        for (int i = 0; o->choices[i]; i++) {
            size_t len = strlen(buf);
            snprintf(buf + len, size - len, "%s%s", i ? (o->choices[i + 1] ? ", " : " or ") : "", o->choices[i]);
        }
        break;
    case CLI_LIST:
        snprintf(buf, size, "at most %d values", DB_LEN(((cli_list *)0)->v));
        break;
    default:
        snprintf(buf, size, "a value");
    }
}

int cli_parse(int argc, char **argv, const char *usage, const cli_option *options, int n, void *request, int *first)
{
    enum { HELP = 1, VERSION = 2 };
    struct option longs[64];
    char shorts[2 * 64 + 2] = ":h";
    if (n + 2 >= DB_LEN(longs))
        return cli_usage("too many options declared");
    for (int i = 0; i < n; i++) {
        longs[i] = (struct option){options[i].name, options[i].kind == CLI_FLAG ? no_argument : required_argument,
                                   NULL, 256 + i};
        if (options[i].letter) {
            size_t len = strlen(shorts);
            shorts[len] = options[i].letter;
            shorts[len + 1] = options[i].kind == CLI_FLAG ? '\0' : ':';
            shorts[len + 2] = '\0';
        }
    }
    longs[n] = (struct option){"help", no_argument, NULL, HELP};
    longs[n + 1] = (struct option){"version", no_argument, NULL, VERSION};
    longs[n + 2] = (struct option){0};
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1;) {
        if (c == ':')
            return cli_usage("option %s needs a value", argv[optind - 1]);
        if (c == HELP || c == 'h') {
            fputs(usage, stdout);
            return CLI_OK;
        }
        if (c == VERSION) {
            printf("%s %s\n", cli_prog, db_version());
            return CLI_OK;
        }
        int i = c >= 256 ? c - 256 : -1;
        for (int k = 0; k < n && i < 0; k++)
            if (options[k].letter && options[k].letter == c)
                i = k;
        if (i < 0)
            return cli_usage("unknown option %s", argv[optind - 1]);
        if (!store(&options[i], optarg, request)) {
            char what[256];
            expected(&options[i], what, sizeof what);
            return cli_usage("--%s takes %s, not '%s'", options[i].name, what, optarg ? optarg : "");
        }
    }
    *first = optind;
    return -1;
}
