/*
** fuzz_text.c — libFuzzer target for the text docbin parses from its users:
** maps (--map), parameter settings (--param), list files (@LIST), wisdom
** files, --shard values and batch logs (--summarize). Any bytes must parse or fail with a message, never crash, leak or
** read out of bounds. The first byte picks the parser; seeds are in
** tests/fuzz_text_corpus/.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "runtime/docbin.h"
#include "runtime/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes the bytes to a file of this process's own, for the parsers that read files. */
static const char *as_file(const uint8_t *data, size_t size)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/docbin-fuzz-text-%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (data[0] % 6) {
    case 0: /* a map, for every algorithm */
        for (int i = 0; i < db_algo_count(); i++) {
            db_map map;
            db_map_parse(db_algo_at(i), text, &map);
        }
        break;
    case 1: /* a --param setting, for every algorithm, then the job resolved at 300 dpi */
        for (int i = 0; i < db_algo_count(); i++) {
            const db_algo *algo = db_algo_at(i);
            db_job job, resolved;
            db_job_defaults(algo, &job);
            if (db_job_set_text(algo, &job, text) == DB_OK && db_job_resolve(algo, &job, 300, &resolved) == DB_OK &&
                db_job_check(algo, &resolved) != DB_OK)
                abort(); /* an accepted setting, resolved, must pass the check */
        }
        break;
    case 2: { /* a list file */
        db_batch_list list = {0};
        char arg[80];
        snprintf(arg, sizeof arg, "@%s", as_file(data + 1, size - 1));
        db_batch_list_add(&list, arg);
        db_batch_list_free(&list);
        break;
    }
    case 4: { /* a batch log, merged and printed */
        db_batch_logs logs = {0};
        if (db_batch_logs_add(&logs, as_file(data + 1, size - 1)) == DB_OK) {
            FILE *null = fopen("/dev/null", "w");
            if (null) {
                db_batch_logs_print(&logs, null);
                fclose(null);
            }
        }
        db_batch_logs_free(&logs);
        break;
    }
    case 5: { /* a --shard value */
        int k, n;
        if (db_batch_shard_parse(text, &k, &n) == DB_OK && (n < 1 || k < 1 || k > n))
            abort(); /* an accepted value names a shard that exists */
        break;
    }
    default: { /* a wisdom file */
        char map[128];
        double ms;
        bool stale;
        int found;
        db_wisdom_find(as_file(data + 1, size - 1), "sauvola sliding window=75 1 23 k - h", map, sizeof map, &ms,
                       &stale, &found);
    }
    }
    free(text);
    db_error_clear();
    return 0;
}
