/*
** test_shard.c — --shard's forms (K/N, index=I/N, auto, auto/N) under every
** combination of the variables Slurm arrays and Kubernetes indexed jobs set,
** missing and inconsistent ones included: each case gives the shard written
** down here from the scheduler's documented numbering, or a usage error naming
** the variable; never a shard of all pages by default. Then the shards of
** lists of 0 to 30 inputs, N not dividing the length, cover every input once.
*/
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/batch.h"
#include "tests/testutil.h"

static const char *const vars[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
                                   "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX",
                                   "SLURM_JOB_ID"};

/* One case: the value, the environment ("NAME=value" ..., NULL-terminated), and
** either the 1-based shard k of n or the text the error must hold (k 0). */
typedef struct shard_case {
    const char *spec;
    const char *env[8];
    int k, n;
    const char *error;
} shard_case;

static const shard_case cases[] = {
    /* Given on the command line, counted from 1 or (index=) from 0. */
    {"3/8", {NULL}, 3, 8, NULL},
    {"1/1", {NULL}, 1, 1, NULL},
    {"8/8", {NULL}, 8, 8, NULL},
    {"0/8", {NULL}, 0, 0, "index=0/N"},
    {"9/8", {NULL}, 0, 0, "K/N"},
    {"index=0/8", {NULL}, 1, 8, NULL},
    {"index=7/8", {NULL}, 8, 8, NULL},
    {"index=8/8", {NULL}, 0, 0, "0 <= I < N"},
    {"index=0/0", {NULL}, 0, 0, "0 <= I < N"},
    {"index=-1/4", {NULL}, 0, 0, "0 <= I < N"},
    {"3", {NULL}, 0, 0, "K/N"},
    {"/8", {NULL}, 0, 0, "K/N"},
    {"3/", {NULL}, 0, 0, "K/N"},
    {"1/4x", {NULL}, 0, 0, "K/N"},
    {"-1/4", {NULL}, 0, 0, "K/N"},
    {"4294967297/4294967298", {NULL}, 0, 0, "K/N"},
    {"1/1073741825", {NULL}, 0, 0, "K/N"},
    {"3/8", {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=7", NULL}, 3, 8, NULL},
    /* auto from a Slurm array: the index within MIN..MAX, the count MAX-MIN+1. */
    {"auto", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", "SLURM_ARRAY_TASK_COUNT=4",
              "SLURM_ARRAY_TASK_STEP=1", "SLURM_JOB_ID=12", NULL}, 3, 4, NULL},
    {"auto", {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", NULL}, 1, 4, NULL},
    {"auto", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=4", "SLURM_ARRAY_TASK_COUNT=4",
              NULL}, 2, 4, NULL},
    {"auto", {"SLURM_ARRAY_TASK_ID=4", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=4", NULL}, 4, 4, NULL},
    {"auto", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=4", NULL}, 3, 4, NULL},
    {"auto", {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_COUNT=4", NULL}, 0, 0, "SLURM_ARRAY_TASK_COUNT"},
    {"auto", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=2", "SLURM_ARRAY_TASK_MAX=2", "SLURM_ARRAY_TASK_COUNT=1",
              NULL}, 0, 0, "auto/N"},
    {"auto", {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=1", NULL}, 0, 0, "auto/N"},
    {"auto", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=6", "SLURM_ARRAY_TASK_COUNT=4",
              "SLURM_ARRAY_TASK_STEP=2", NULL}, 0, 0, "SLURM_ARRAY_TASK_STEP"},
    {"auto", {"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=5", "SLURM_ARRAY_TASK_COUNT=3",
              NULL}, 0, 0, "SLURM_ARRAY_TASK_COUNT"},
    {"auto", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=0", NULL}, 0, 0, "SLURM_ARRAY_TASK_MAX"},
    {"auto", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MAX=3", NULL}, 0, 0, "SLURM_ARRAY_TASK_MIN"},
    {"auto", {"SLURM_ARRAY_TASK_ID=2", NULL}, 0, 0, "auto/N"},
    {"auto", {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", NULL}, 0, 0, "0-3"},
    {"auto", {"SLURM_ARRAY_TASK_ID=x", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", NULL}, 0, 0,
     "SLURM_ARRAY_TASK_ID='x'"},
    {"auto", {"SLURM_ARRAY_TASK_ID=-1", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", NULL}, 0, 0,
     "SLURM_ARRAY_TASK_ID='-1'"},
    {"auto", {"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_MIN=abc", "SLURM_ARRAY_TASK_MAX=3", NULL}, 0, 0,
     "SLURM_ARRAY_TASK_MIN='abc'"},
    {"auto", {"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", "SLURM_ARRAY_TASK_COUNT=4 ",
              NULL}, 0, 0, "SLURM_ARRAY_TASK_COUNT='4 '"},
    {"auto", {"SLURM_ARRAY_TASK_ID=", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", NULL}, 0, 0,
     "neither SLURM_ARRAY_TASK_ID"},
    /* Not an array task, or no scheduler at all. */
    {"auto", {NULL}, 0, 0, "neither SLURM_ARRAY_TASK_ID"},
    {"auto", {"SLURM_JOB_ID=42", NULL}, 0, 0, "not an array task"},
    {"auto/4", {"SLURM_JOB_ID=42", NULL}, 0, 0, "not an array task"},
    {"auto/4", {NULL}, 0, 0, "JOB_COMPLETION_INDEX"},
    /* auto/N: the task index itself, so that a task submitted again alone keeps its pages. */
    {"auto/4", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=2", "SLURM_ARRAY_TASK_MAX=2", "SLURM_ARRAY_TASK_COUNT=1",
                NULL}, 3, 4, NULL},
    {"auto/4", {"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", NULL}, 4, 4, NULL},
    {"auto/4", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=2", "SLURM_ARRAY_TASK_STEP=2",
                NULL}, 3, 4, NULL},
    {"auto/4", {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=4", NULL}, 0, 0,
     "--array=0-3"},
    {"auto/4", {"SLURM_ARRAY_TASK_ID=4", "SLURM_ARRAY_TASK_MIN=4", "SLURM_ARRAY_TASK_MAX=4", NULL}, 0, 0,
     "--array=0-3"},
    {"auto/4", {"SLURM_ARRAY_TASK_ID=3", NULL}, 4, 4, NULL},
    {"auto/4", {"SLURM_ARRAY_TASK_ID=4", NULL}, 0, 0, "--array=0-3"},
    {"auto/1", {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=0", NULL}, 1, 1, NULL},
    {"auto/0", {"SLURM_ARRAY_TASK_ID=0", NULL}, 0, 0, "from 1"},
    {"auto/", {"SLURM_ARRAY_TASK_ID=0", NULL}, 0, 0, "from 1"},
    {"auto/x", {"SLURM_ARRAY_TASK_ID=0", NULL}, 0, 0, "from 1"},
    /* Kubernetes indexed jobs: the index from JOB_COMPLETION_INDEX, the count from the user. */
    {"auto/4", {"JOB_COMPLETION_INDEX=0", NULL}, 1, 4, NULL},
    {"auto/4", {"JOB_COMPLETION_INDEX=3", NULL}, 4, 4, NULL},
    {"auto/4", {"JOB_COMPLETION_INDEX=4", NULL}, 0, 0, "JOB_COMPLETION_INDEX=4"},
    {"auto", {"JOB_COMPLETION_INDEX=1", NULL}, 0, 0, "auto/N"},
    {"auto/4", {"JOB_COMPLETION_INDEX=one", NULL}, 0, 0, "JOB_COMPLETION_INDEX='one'"},
    {"auto/4", {"JOB_COMPLETION_INDEX=1", "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3",
                NULL}, 0, 0, "both"},
};

static void set_env(const char *const *env)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    for (int i = 0; env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
        setenv(name, eq + 1, 1);
    }
}

static void test_cases(void)
{
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const shard_case *t = &cases[c];
        set_env(t->env);
        int k = -1, n = -1;
        db_error_clear();
        db_status st = db_batch_shard_parse(t->spec, &k, &n);
        char env[512] = "";
        for (int i = 0; t->env[i]; i++)
            snprintf(env + strlen(env), sizeof env - strlen(env), "%s ", t->env[i]);
        if (t->error) {
            CHECK(st == DB_ERR_USAGE, "--shard %s with %s: status %d (shard %d/%d), want a usage error", t->spec, env,
                  st, k, n);
            CHECK(strstr(db_error_message(), t->error) != NULL, "--shard %s with %s: message '%s' lacks '%s'",
                  t->spec, env, db_error_message(), t->error);
        } else {
            CHECK(st == DB_OK && k == t->k && n == t->n, "--shard %s with %s: %d/%d (%s), want %d/%d", t->spec, env, k,
                  n, st == DB_OK ? "ok" : db_error_message(), t->k, t->n);
        }
    }
    set_env((const char *const[]){NULL});
}

/* A list of `len` inputs, named p000.png ..., with their outputs. */
static void make_list(db_batch_list *list, int len)
{
    memset(list, 0, sizeof *list);
    for (int i = 0; i < len; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%03d.png", i);
        if (db_batch_list_add(list, name) != DB_OK)
            abort();
    }
    if (db_batch_list_name_outputs(list, "/nonexistent-docbin-test-dir", "pbm") != DB_OK)
        abort();
}

/* The shards of every Slurm array (from 0 and from 1) and of index=I/N cover
** each input of the list once, whatever the order the tasks run in. */
static void test_cover(void)
{
    for (int len = 0; len <= 30; len++)
        for (int n = 1; n <= 9; n++)
            for (int base = 0; base <= 2; base++) {
                int seen[30] = {0};
                for (int task = 0; task < n; task++) {
                    char spec[64], id[32], min[32], max[32];
                    /* base 0 and 1: an array --array=base-(base+n-1) with auto; base 2: index=I/N */
                    if (base == 2)
                        snprintf(spec, sizeof spec, "index=%d/%d", task, n);
                    else
                        snprintf(spec, sizeof spec, "auto");
                    snprintf(id, sizeof id, "SLURM_ARRAY_TASK_ID=%d", base % 2 + task);
                    snprintf(min, sizeof min, "SLURM_ARRAY_TASK_MIN=%d", base % 2);
                    snprintf(max, sizeof max, "SLURM_ARRAY_TASK_MAX=%d", base % 2 + n - 1);
                    set_env((const char *const[]){id, min, max, NULL});
                    int k, count;
                    db_status st = db_batch_shard_parse(spec, &k, &count);
                    if (n == 1 && base < 2) {
                        CHECK(st == DB_ERR_USAGE, "a one-task array from %d: not refused", base);
                        continue;
                    }
                    CHECK(st == DB_OK && count == n, "%s, task %d of %d from %d: %s", spec, task, n, base,
                          db_error_message());
                    db_batch_list list;
                    make_list(&list, len);
                    if (st != DB_OK || db_batch_list_shard(&list, k, count) != DB_OK) {
                        db_batch_list_free(&list);
                        continue;
                    }
                    for (int j = 0; j < list.n; j++) {
                        int i = atoi(list.inputs[j] + 1);
                        CHECK(i % n == task, "%d inputs, task %d of %d: took input %d", len, task, n, i);
                        seen[i]++;
                    }
                    db_batch_list_free(&list);
                }
                for (int i = 0; i < len && !(n == 1 && base < 2); i++)
                    CHECK(seen[i] == 1, "%d inputs in %d shards (from %d): input %d taken %d times", len, n, base, i,
                          seen[i]);
            }
    set_env((const char *const[]){NULL});
}

int main(void)
{
    test_cases();
    test_cover();
    if (test_failures) {
        fprintf(stderr, "%d failure(s)\n", test_failures);
        return 1;
    }
    printf("shard: ok (%zu cases)\n", sizeof cases / sizeof cases[0]);
    return 0;
}
