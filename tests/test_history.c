/*
** test_history.c — the history of measured stage times: file round trips,
** rejected files, the correction factor against hand-computed medians, the
** last DB_HISTORY_KEEP runs only, rows beside a crossing left out of it,
** compaction, and rows made from a run's profile rows. Needs no OpenCL device.
*/
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "algorithms/algorithms.h"
#include "planner/history.h"
#include "runtime/util.h"
#include "testutil.h"

static char dir[] = "/tmp/test_history.XXXXXX";

static const char HASH_A[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
static const char HASH_B[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

static db_history_run row(const char *stage, db_role role, const char *hash, double pixels, double ms)
{
    db_history_run r;
    memset(&r, 0, sizeof r);
    snprintf(r.key.device, sizeof r.key.device, "0123456789abcdef");
    snprintf(r.key.algo, sizeof r.key.algo, "howe");
    snprintf(r.key.stage, sizeof r.key.stage, "%s", stage);
    r.key.role = role;
    snprintf(r.key.variant, sizeof r.key.variant, "-");
    snprintf(r.key.kernel_hash, sizeof r.key.kernel_hash, "%s", hash);
    r.pixels = pixels;
    r.ms = ms;
    return r;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_round_trip(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/sub/host.calib.history", dir);
    db_history h;
    db_history_init(&h);
    CHECK(db_history_load(&h, path) == DB_OK && h.n == 0, "a missing file is an empty history");
    db_history_run runs[3] = {row("laplacian", DB_ROLE_GPU, HASH_A, 1e6, 0.1),
                              row("canny", DB_ROLE_CPU, HASH_A, 1e6, 1.0 / 3.0),
                              row("graphcut", DB_ROLE_GPU, HASH_A, 1e6, 12.5)};
    runs[2].work = 10.0 / 3;
    runs[1].at_crossing = true;
    CHECK(db_history_append(path, runs, 3, NULL, 0) == DB_OK, "append: %s", db_error_message());
    CHECK(db_history_append(path, runs + 2, 1, NULL, 0) == DB_OK, "second append: %s", db_error_message());
    CHECK(db_history_load(&h, path) == DB_OK && h.n == 4, "load: %d rows (%s)", h.n, db_error_message());
    for (int i = 0; i < h.n && i < 4; i++) {
        const db_history_run *a = &h.runs[i], *b = &runs[i < 3 ? i : 2];
        CHECK(!strcmp(a->key.stage, b->key.stage) && a->key.role == b->key.role && a->pixels == b->pixels &&
                  a->ms == b->ms && a->work == b->work && a->at_crossing == b->at_crossing &&
                  !strcmp(a->key.kernel_hash, b->key.kernel_hash),
              "row %d differs after the round trip (ms %.17g, expected %.17g)", i, a->ms, b->ms);
    }
    size_t size;
    char *text = db_read_file(path, &size);
    CHECK(text && !strncmp(text, DB_HISTORY_HEADER "\n", strlen(DB_HISTORY_HEADER) + 1) &&
              !strstr(text + 1, DB_HISTORY_HEADER),
          "the header is the first line, once: %s", text ? text : "(unreadable)");
    free(text);

    /* A row appended before the creator's header (two runs at once) loads. */
    snprintf(path, sizeof path, "%s/race.history", dir);
    write_text(path, "run 0123456789abcdef howe canny cpu - "
                     "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2\n"
                     DB_HISTORY_HEADER "\n# a comment\n\n");
    CHECK(db_history_load(&h, path) == DB_OK && h.n == 1 && h.runs[0].ms == 2, "row before the header: %s",
          db_error_message());
    /* A last line without its newline is an append in progress (or cut short): skipped. */
    write_text(path, DB_HISTORY_HEADER "\nrun 0123456789abcdef howe canny cpu - "
                     "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2\nrun 0123456789ab");
    CHECK(db_history_load(&h, path) == DB_OK && h.n == 1, "torn last line: %d rows (%s)", h.n, db_error_message());

    /* A row no calibration key could hold is refused, and nothing is written. */
    db_history_run bad = row("canny", DB_ROLE_CPU, "xyz", 100, 1);
    snprintf(path, sizeof path, "%s/refused.history", dir);
    CHECK(db_history_append(path, &bad, 1, NULL, 0) == DB_ERR_USAGE, "a bad hash is refused");
    struct stat sb;
    CHECK(stat(path, &sb) != 0, "a refused append wrote the file");
    bad = row("canny", DB_ROLE_CPU, HASH_A, 100, -1);
    CHECK(db_history_append(path, &bad, 1, NULL, 0) == DB_ERR_USAGE, "a negative time is refused");
    db_history_free(&h);
}

static void test_rejected(void)
{
    static const char *const bad[] = {
        "docbin-history 6\n",
        "copy 0123456789abcdef niblack sums h2x 100 2\n",
        "copy 0123456789abcdef niblack sums h2d 0 2\n",
        "copy 0123456789abcdef niblack sums d2h 100 -1\n",
        "copy 0123456789abcdef niblack sums d2h 100\n",
        "copy 0123456789abcdef niblack sums d2h 100 2 3\n",
        "copy 0123456789ABCDEF niblack sums d2h 100 2\n",
        "copy 0123456789abcdef niblack sums d2h many 2\n",
        "stage 0123456789abcdef howe canny cpu - " "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
        " 100 2\n",
        "run 0123456789abcdef howe canny cpu -\n",
        "run 0123456789abcdef howe canny tpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2\n",
        "run 0123456789ABCDEF howe canny cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2\n",
        "run 0123456789abcdef howe canny cpu - 0011 100 2\n",
        "run 0123456789abcdef howe canny cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 fast\n",
        "run 0123456789abcdef howe canny cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 0 2\n",
        "run 0123456789abcdef howe canny cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 -2\n",
        "run 0123456789abcdef howe canny cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 0\n",
        "<html>not a history</html>\n",
        "run 0123456789abcdef hbk kmeans cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2 -1\n",
        "run 0123456789abcdef hbk kmeans cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2 many\n",
        "run 0123456789abcdef hbk kmeans cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2 3 4\n",
        "run 0123456789abcdef hbk kmeans cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2 3 yes\n",
        "run 0123456789abcdef hbk kmeans cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2 3 1 3 0\n",
        "run 0123456789abcdef hbk kmeans cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2 3 1 2\n",
        "run 0123456789abcdef hbk kmeans cpu - "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2 3 1 gray\n",
    };
    char path[256];
    snprintf(path, sizeof path, "%s/bad.history", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s\n%s", DB_HISTORY_HEADER, bad[i]);
        write_text(path, text);
        db_history h;
        db_history_init(&h);
        db_status st = db_history_load(&h, path);
        const char *msg = db_error_message();
        CHECK(st == DB_ERR_FORMAT && strstr(msg, "bad.history:2:") && strstr(msg, "delete the file") && h.n == 0,
              "bad file %zu: status %d, message '%s'", i, st, msg);
        db_history_free(&h);
    }
}

static void test_factor(void)
{
    db_cost_model m = {.a = 1, .b = 1e-3, .sizes = 3}; /* 2 ms at 1000 pixels, 11 ms at 10000 */
    db_history h;
    db_history_init(&h);
    db_history_run keyed = row("graphcut", DB_ROLE_GPU, HASH_A, 1, 1);
    double f = 0;
    CHECK(db_history_factor(&h, &keyed.key, &m, &f) == 0 && f == 1, "empty history: factor %g", f);
    /* Ratios 1 and 2: fewer than DB_HISTORY_MIN runs leave the model alone. */
    db_history_run runs[] = {row("graphcut", DB_ROLE_GPU, HASH_A, 1000, 2), row("graphcut", DB_ROLE_GPU, HASH_A,
                                                                               10000, 22),
                             /* other stages, roles, kernels: not counted */
                             row("graphcut", DB_ROLE_CPU, HASH_A, 1000, 200), row("graphcut", DB_ROLE_GPU, HASH_B,
                                                                                 1000, 200),
                             row("canny", DB_ROLE_GPU, HASH_A, 1000, 200),
                             /* ratio 3.5, then 3: the median of {1, 2, 3.5, 3} is 2.5 */
                             row("graphcut", DB_ROLE_GPU, HASH_A, 1000, 7), row("graphcut", DB_ROLE_GPU, HASH_A,
                                                                               10000, 33)};
    char path[256];
    snprintf(path, sizeof path, "%s/factor.history", dir);
    CHECK(db_history_append(path, runs, 2, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK, "two runs");
    CHECK(db_history_factor(&h, &keyed.key, &m, &f) == 2 && f == 1, "two runs: factor %g", f);
    CHECK(db_history_append(path, runs + 2, 4, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK, "three runs");
    CHECK(db_history_factor(&h, &keyed.key, &m, &f) == 3 && fabs(f - 2) < 1e-12, "three runs: factor %g", f);
    CHECK(db_history_append(path, runs + 6, 1, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK, "four runs");
    CHECK(db_history_factor(&h, &keyed.key, &m, &f) == 4 && fabs(f - 2.5) < 1e-12, "four runs: factor %g", f);
    /* Stages beside a crossing (ratio 10): their spans hold part of the
    ** crossing, so they leave the factor as it was. */
    db_history_run beside[3];
    for (int i = 0; i < 3; i++) {
        beside[i] = row("graphcut", DB_ROLE_GPU, HASH_A, 1000, 20);
        beside[i].at_crossing = true;
    }
    CHECK(db_history_append(path, beside, 3, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK,
          "runs at a crossing");
    CHECK(db_history_factor(&h, &keyed.key, &m, &f) == 4 && fabs(f - 2.5) < 1e-12,
          "runs at a crossing counted: factor %g", f);
    /* A stage that reads the page is keyed by the page's channels: rows of
    ** gray pages (ratio 10) are not those of RGB pages (ratio 4), and rows of
    ** version 3, which do not say, read as 0 channels and count for neither. */
    db_history_run gray[3], rgb[3];
    for (int i = 0; i < 3; i++) {
        gray[i] = row("canny", DB_ROLE_GPU, HASH_A, 1000, 20);
        gray[i].key.channels = 1;
        rgb[i] = row("canny", DB_ROLE_GPU, HASH_A, 1000, 8);
        rgb[i].key.channels = 3;
    }
    char old_path[256];
    snprintf(old_path, sizeof old_path, "%s/channels.history", dir);
    char old_rows[1024] = DB_HISTORY_HEADER_3 "\n";
    for (int i = 0; i < 3; i++)
        snprintf(old_rows + strlen(old_rows), sizeof old_rows - strlen(old_rows),
                 "run 0123456789abcdef howe canny gpu - %s 1000 40 0 0\n", HASH_A);
    write_text(old_path, old_rows);
    CHECK(db_history_append(old_path, gray, 3, NULL, 0) == DB_OK &&
              db_history_append(old_path, rgb, 3, NULL, 0) == DB_OK && db_history_load(&h, old_path) == DB_OK &&
              h.n == 9 && h.runs[0].key.channels == 0 && !h.runs[0].at_crossing && h.runs[3].key.channels == 1 &&
              h.runs[8].key.channels == 3,
          "channels: %d rows: %s", h.n, db_error_message());
    db_history_run key3 = rgb[0], key1 = gray[0], key0 = rgb[0];
    key0.key.channels = 0;
    CHECK(db_history_factor(&h, &key3.key, &m, &f) == 3 && fabs(f - 4) < 1e-12, "rgb pages: factor %g", f);
    CHECK(db_history_factor(&h, &key1.key, &m, &f) == 3 && fabs(f - 10) < 1e-12, "gray pages: factor %g", f);
    CHECK(db_history_factor(&h, &key0.key, &m, &f) == 3 && fabs(f - 20) < 1e-12, "version 3 rows: factor %g", f);
    CHECK(db_history_load(&h, path) == DB_OK, "reload: %s", db_error_message());

    /* Only the last DB_HISTORY_KEEP runs count: 10 old runs at ratio 100, then
    ** DB_HISTORY_KEEP at ratio 1.5. */
    db_history_run many[10 + DB_HISTORY_KEEP];
    for (int i = 0; i < 10 + DB_HISTORY_KEEP; i++)
        many[i] = row("graphcut", DB_ROLE_GPU, HASH_A, 1000, i < 10 ? 200 : 3);
    snprintf(path, sizeof path, "%s/keep.history", dir);
    CHECK(db_history_append(path, many, 10 + DB_HISTORY_KEEP, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK,
          "keep: %s", db_error_message());
    CHECK(db_history_factor(&h, &keyed.key, &m, &f) == DB_HISTORY_KEEP && fabs(f - 1.5) < 1e-12,
          "the last %d runs only: factor %g", DB_HISTORY_KEEP, f);
    db_history_free(&h);
}

/* Past DB_HISTORY_MAX_BYTES an append rewrites the file with the last
** DB_HISTORY_KEEP rows of each key, in order. */
static void test_compaction(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/big.history", dir);
    enum { CHUNK = 1000 };
    static db_history_run chunk[CHUNK];
    int appended = 0, compacted = 0;
    off_t before = 0;
    /* Laplacian measured with older kernels (B), then with the current ones (A):
    ** compaction keeps only the rows of its newest kernels. */
    db_history_run lap[5] = {row("laplacian", DB_ROLE_GPU, HASH_B, 1000, 1), row("laplacian", DB_ROLE_GPU, HASH_B,
                                                                               1000, 2),
                             row("laplacian", DB_ROLE_GPU, HASH_A, 1000, 3), row("laplacian", DB_ROLE_GPU, HASH_B,
                                                                                1000, 4),
                             row("laplacian", DB_ROLE_GPU, HASH_A, 1000, 5)};
    CHECK(db_history_append(path, lap, 5, NULL, 0) == DB_OK, "laplacian rows: %s", db_error_message());
    /* Threshold: 3 rows not beside a crossing, then DB_HISTORY_KEEP beside one;
    ** compaction keeps the 3 for the factor besides the newest for the work. */
    static db_history_run thr[3 + DB_HISTORY_KEEP];
    for (int i = 0; i < 3 + DB_HISTORY_KEEP; i++) {
        thr[i] = row("threshold", DB_ROLE_GPU, HASH_A, 1000, i + 1);
        thr[i].at_crossing = i >= 3;
    }
    CHECK(db_history_append(path, thr, 3 + DB_HISTORY_KEEP, NULL, 0) == DB_OK, "threshold rows: %s",
          db_error_message());
    /* Canny on 3 gray pages: a group of its own beside the canny rows of 0
    ** channels below, so the many of those do not push these out. */
    db_history_run gray[3];
    for (int i = 0; i < 3; i++) {
        gray[i] = row("canny", DB_ROLE_GPU, HASH_A, 1000, 0.5 * (i + 1));
        gray[i].key.channels = 1;
    }
    CHECK(db_history_append(path, gray, 3, NULL, 0) == DB_OK, "gray rows: %s", db_error_message());
    /* Append until the file shrinks: it must grow past the limit first. */
    while (!compacted && appended < 100 * CHUNK) {
        for (int i = 0; i < CHUNK; i++)
            chunk[i] = row(i % 2 ? "canny" : "graphcut", DB_ROLE_GPU, HASH_A, 1000, appended + i + 1);
        CHECK(db_history_append(path, chunk, CHUNK, NULL, 0) == DB_OK, "append: %s", db_error_message());
        appended += CHUNK;
        struct stat sb;
        if (stat(path, &sb) != 0)
            break;
        compacted = sb.st_size < before;
        CHECK(compacted ? before <= DB_HISTORY_MAX_BYTES : 1, "grew to %lld bytes before compacting",
              (long long)before);
        before = sb.st_size;
    }
    CHECK(compacted, "no compaction after %d rows", appended);
    db_history h;
    db_history_init(&h);
    const int thr_end = 2 + 3 + DB_HISTORY_KEEP, lead = thr_end + 3; /* laplacian's, threshold's, gray canny's */
    CHECK(db_history_load(&h, path) == DB_OK && h.n == lead + 2 * DB_HISTORY_KEEP, "compacted to %d rows", h.n);
    CHECK(h.n > 2 && h.runs[0].ms == 3 && h.runs[1].ms == 5 && !strcmp(h.runs[1].key.kernel_hash, HASH_A),
          "laplacian keeps its 2 rows of the newest kernels only");
    int thr_ok = h.n >= lead;
    for (int i = 2; i < thr_end && thr_ok; i++)
        thr_ok = !strcmp(h.runs[i].key.stage, "threshold") && h.runs[i].ms == i - 1 &&
                 h.runs[i].at_crossing == (i >= 5);
    CHECK(thr_ok, "threshold keeps its 3 rows not beside a crossing and its last %d", DB_HISTORY_KEEP);
    int gray_ok = h.n >= lead;
    for (int i = thr_end; i < lead && gray_ok; i++)
        gray_ok = !strcmp(h.runs[i].key.stage, "canny") && h.runs[i].key.channels == 1 &&
                  h.runs[i].ms == 0.5 * (i - thr_end + 1);
    CHECK(gray_ok, "canny's rows of gray pages did not keep their group");
    /* Then the last rows of each stage, in their order: ms is the row's position. */
    int ok = 1;
    for (int i = lead; i < h.n; i++)
        ok &= h.runs[i].ms == appended - 2 * DB_HISTORY_KEEP + (i - lead) + 1 &&
              !strcmp(h.runs[i].key.stage, (appended - 2 * DB_HISTORY_KEEP + (i - lead)) % 2 ? "canny" : "graphcut");
    CHECK(ok, "the compacted rows are not the last %d of each stage", DB_HISTORY_KEEP);
    db_history_free(&h);
}

/* Rows of a run from hand-made profile rows of Howe's three stages. */
static void test_rows(void)
{
    const db_algo *howe = db_algo_find("howe");
    db_map map;
    CHECK(howe && db_map_parse(howe, "gpu,cpu,gpu", &map) == DB_OK, "howe map");
    if (!howe)
        return;
    db_job job;
    db_job_defaults(howe, &job);
    db_profile_row rows[4] = {
        {.kind = DB_REC_KERNEL, .stage = "laplacian", .role = DB_ROLE_GPU, .span_ms = 1.5, .busy_ms = 1},
        {.kind = DB_REC_TO_DEVICE, .stage = "edges", .role = DB_ROLE_GPU, .span_ms = 9},
        {.kind = DB_REC_KERNEL, .stage = "canny", .role = DB_ROLE_CPU, .span_ms = 20, .busy_ms = 19},
        {.kind = DB_REC_KERNEL, .stage = "graphcut", .role = DB_ROLE_GPU, .span_ms = 14, .busy_ms = 10},
    };
    const char keys[DB_ROLE_COUNT][17] = {"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"};
    db_history_run out[DB_MAX_STAGES];
    int n = 0;
    CHECK(db_history_rows(rows, 4, keys, howe, &job, &map, 1000, 2000, 3, NULL, out, &n) == DB_OK && n == 3,
          "rows: %d", n);
    /* graphcut on the gpu reads canny's edges from the cpu: both are beside that
    ** crossing; laplacian's items stay on the gpu, and canny reads the page. */
    static const char *const stage[3] = {"laplacian", "canny", "graphcut"};
    static const double ms[3] = {1.5, 20, 14};
    for (int i = 0; i < n && i < 3; i++) {
        char hash[65];
        CHECK(db_stage_kernel_hash(&howe->stages[i], hash) == DB_OK, "hash");
        CHECK(!strcmp(out[i].key.stage, stage[i]) && out[i].key.role == map.role[i] && out[i].ms == ms[i] &&
                  out[i].pixels == 2e6 && !strcmp(out[i].key.device, keys[map.role[i]]) &&
                  !strcmp(out[i].key.kernel_hash, hash) && !strcmp(out[i].key.variant, "-") &&
                  !strcmp(out[i].key.algo, "howe") && out[i].work == 0 && out[i].at_crossing == (i > 0) &&
                  out[i].key.channels == (i < 2 ? 3 : 0),
              "row %d: %s %s %g, beside a crossing %d", i, out[i].key.stage, out[i].key.device, out[i].ms,
              out[i].at_crossing);
    }
    /* On a gray page the stages that read it (laplacian, canny) say so. */
    CHECK(db_history_rows(rows, 4, keys, howe, &job, &map, 1000, 2000, 1, NULL, out, &n) == DB_OK && n == 3 &&
              out[0].key.channels == 1 && out[1].key.channels == 1 && out[2].key.channels == 0,
          "gray page: channels %d %d %d", out[0].key.channels, out[1].key.channels, out[2].key.channels);
    /* A stage that enqueued nothing on its role has no row. */
    CHECK(db_history_rows(rows, 2, keys, howe, &job, &map, 1000, 2000, 3, NULL, out, &n) == DB_OK && n == 1,
          "partial: %d", n);

    /* hbk's kmeans reports its work: 1000 passes over the 63 x 32 blocks of 16
    ** pixels of a 1000 x 500 page; label follows the size alone. */
    const db_algo *hbk = db_algo_find("hbk");
    CHECK(hbk && db_map_parse(hbk, "cpu,gpu", &map) == DB_OK, "hbk map");
    if (!hbk)
        return;
    db_job_defaults(hbk, &job);
    CHECK(db_job_set(hbk, &job, "block", "16") == DB_OK, "hbk block 16");
    db_profile_row hrows[2] = {
        {.kind = DB_REC_KERNEL, .stage = "kmeans", .role = DB_ROLE_CPU, .span_ms = 5},
        {.kind = DB_REC_KERNEL, .stage = "label", .role = DB_ROLE_GPU, .span_ms = 1},
    };
    db_report report = {.n = hbk->n_report_fields, .fields = hbk->report_fields};
    for (int i = 0; i < report.n; i++)
        report.values[i] = !strcmp(hbk->report_fields[i].name, "local_passes") ? 1000 : 1;
    CHECK(db_history_rows(hrows, 2, keys, hbk, &job, &map, 1000, 500, 3, &report, out, &n) == DB_OK && n == 2 &&
              fabs(out[0].work - 1000.0 / (63 * 32)) < 1e-12 && out[1].work == 0 && out[0].at_crossing &&
              out[1].at_crossing,
          "hbk rows: %d, work %g and %g", n, out[0].work, n > 1 ? out[1].work : -1);

    /* dbs's search: its toggles and swaps per pixel, whatever its rounds:
    ** 100 + 900 changes on a 1000 x 500 page. */
    const db_algo *dbs = db_algo_find("dbs");
    CHECK(dbs && db_map_parse(dbs, "gpu", &map) == DB_OK, "dbs map");
    if (!dbs)
        return;
    db_job_defaults(dbs, &job);
    db_profile_row drows[1] = {{.kind = DB_REC_KERNEL, .stage = "search", .role = DB_ROLE_GPU, .span_ms = 30}};
    db_report drep = {.n = dbs->n_report_fields, .fields = dbs->report_fields};
    for (int i = 0; i < drep.n; i++) {
        const char *f = dbs->report_fields[i].name;
        drep.values[i] = !strcmp(f, "rounds") ? 15 : !strcmp(f, "toggles") ? 100 : !strcmp(f, "swaps") ? 900 : 1;
    }
    CHECK(db_history_rows(drows, 1, keys, dbs, &job, &map, 1000, 500, 3, &drep, out, &n) == DB_OK && n == 1 &&
              fabs(out[0].work - 1000.0 / 5e5) < 1e-15,
          "dbs rows: %d, work %g", n, n ? out[0].work : -1);
}

/* Work: rows without it (version 1) still load; the factor compares each run
** with the model at that run's work; the expected work is the median over
** every device and role of one stage's kernels, or over one role's. */
static void test_work(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/work.history", dir);
    write_text(path, DB_HISTORY_HEADER_1 "\nrun 0123456789abcdef hbk kmeans cpu - "
                     "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 100 2\n");
    db_history h;
    db_history_init(&h);
    CHECK(db_history_load(&h, path) == DB_OK && h.n == 1 && h.runs[0].work == 0 && h.runs[0].at_crossing,
          "version 1 row (no work, and no word of a crossing: it tells the work only): %s", db_error_message());
    db_history_run k = row("kmeans", DB_ROLE_CPU, HASH_A, 1000, 1);
    double w = -1;
    CHECK(db_history_work(&h, &k.key, false, &w) == 0 && w == 0, "a row without work counts for none: %g", w);

    /* Model: 1 + 1e-3 ms a pixel at 4 passes. Runs at 8 passes that take
    ** 1 + 2e-3 * pixels are as predicted: factor 1. */
    db_cost_model m = {.a = 1, .b = 1e-3, .sizes = 3, .work = 4};
    db_history_run runs[] = {row("kmeans", DB_ROLE_CPU, HASH_A, 1000, 3), row("kmeans", DB_ROLE_GPU, HASH_A, 1000, 3),
                             row("kmeans", DB_ROLE_CPU, HASH_A, 2000, 5), row("kmeans", DB_ROLE_CPU, HASH_B, 1000, 3),
                             row("label", DB_ROLE_CPU, HASH_A, 1000, 3)};
    double work[] = {8, 2, 8, 50, 50};
    for (int i = 0; i < 5; i++) {
        runs[i].work = work[i];
        snprintf(runs[i].key.algo, sizeof runs[i].key.algo, "hbk");
    }
    snprintf(k.key.algo, sizeof k.key.algo, "hbk");
    runs[1].work = 8;
    runs[1].ms = 3;
    CHECK(db_history_append(path, runs, 5, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK && h.n == 6,
          "mixed versions: %d rows (%s)", h.n, db_error_message());
    double f = 0;
    /* The version 1 row (ratio 2 / 1.1) is left out: two rows, too few, factor 1. */
    CHECK(db_history_factor(&h, &k.key, &m, &f) == 2 && f == 1, "without the version 1 row: %g", f);
    db_history_run third = row("kmeans", DB_ROLE_CPU, HASH_A, 3000, 7);
    snprintf(third.key.algo, sizeof third.key.algo, "hbk");
    third.work = 8;
    db_history h3;
    db_history_init(&h3);
    CHECK(db_history_add(&h3, h.runs, h.n) == DB_OK && db_history_add(&h3, &third, 1) == DB_OK &&
              db_history_factor(&h3, &k.key, &m, &f) == 3 && fabs(f - 1) < 1e-12,
          "factor at the runs' work: %g", f);
    db_history_free(&h3);
    /* Expected work: kmeans with HASH_A on either role: {8, 8, 8}. */
    CHECK(db_history_work(&h, &k.key, false, &w) == 3 && w == 8, "expected work %g", w);
    db_history_run more[2] = {row("kmeans", DB_ROLE_GPU, HASH_A, 1000, 1), row("kmeans", DB_ROLE_GPU, HASH_A, 1000, 1)};
    snprintf(more[0].key.algo, sizeof more[0].key.algo, "hbk");
    snprintf(more[1].key.algo, sizeof more[1].key.algo, "hbk");
    more[0].work = 20;
    more[1].work = 30;
    CHECK(db_history_append(path, more, 2, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK, "more rows");
    /* {8, 8, 8, 20, 30}: the median is 8; with one more at 30, (8 + 20) / 2. */
    CHECK(db_history_work(&h, &k.key, false, &w) == 5 && w == 8, "median of five: %g", w);
    CHECK(db_history_append(path, more + 1, 1, NULL, 0) == DB_OK && db_history_load(&h, path) == DB_OK, "one more");
    CHECK(db_history_work(&h, &k.key, false, &w) == 6 && w == 14, "median of six: %g", w);
    /* A stage that counts its work by role: the CPU's rows alone are {8, 8},
    ** too few; the GPU's {8, 20, 30, 30} give (20 + 30) / 2. */
    CHECK(db_history_work(&h, &k.key, true, &w) == 2 && w == 0, "cpu rows only: %g", w);
    k.key.role = DB_ROLE_GPU;
    CHECK(db_history_work(&h, &k.key, true, &w) == 4 && w == 25, "gpu rows only: %g", w);
    db_history_free(&h);
}

static db_history_copy copy_row(const char *device, const char *item, db_transfer_dir dir, double bytes, double ms)
{
    db_history_copy c;
    memset(&c, 0, sizeof c);
    snprintf(c.device, sizeof c.device, "%s", device);
    snprintf(c.algo, sizeof c.algo, "niblack");
    snprintf(c.item, sizeof c.item, "%s", item);
    c.dir = dir;
    c.bytes = bytes;
    c.ms = ms;
    return c;
}

/* Copy rows: they round-trip beside run rows, follow a file of version 4,
** come from a profile's copy rows only, give the median ratio of the last
** DB_HISTORY_KEEP of their item, direction and device (medians worked out by
** hand), and compaction keeps that many of each. */
static void test_copies(void)
{
    static const char dev[] = "0123456789abcdef", other[] = "fedcba9876543210";
    char path[256];
    snprintf(path, sizeof path, "%s/copies.history", dir);
    db_history_run run = row("canny", DB_ROLE_GPU, HASH_A, 1000, 2);
    db_history_copy c[2] = {copy_row(dev, "sums", DB_D2H, 20676096, 1.0 / 3.0), copy_row(dev, "gray", DB_H2D, 7, 2)};
    db_history h;
    db_history_init(&h);
    CHECK(db_history_append(path, &run, 1, c, 2) == DB_OK && db_history_load(&h, path) == DB_OK && h.n == 1 &&
              h.n_copies == 2,
          "round trip: %d runs, %d copies: %s", h.n, h.n_copies, db_error_message());
    for (int i = 0; i < h.n_copies && i < 2; i++)
        CHECK(!strcmp(h.copies[i].device, c[i].device) && !strcmp(h.copies[i].algo, "niblack") &&
                  !strcmp(h.copies[i].item, c[i].item) && h.copies[i].dir == c[i].dir &&
                  h.copies[i].bytes == c[i].bytes && h.copies[i].ms == c[i].ms,
              "copy %d read back as %s %s %g %g", i, h.copies[i].item, db_transfer_dir_name(h.copies[i].dir),
              h.copies[i].bytes, h.copies[i].ms);
    db_history_copy bad = copy_row(dev, "sums", DB_D2H, 0, 1);
    CHECK(db_history_append(path, NULL, 0, &bad, 1) == DB_ERR_USAGE, "a copy of 0 bytes is refused");
    /* A file of version 4 takes copy rows after its runs. */
    snprintf(path, sizeof path, "%s/v4.history", dir);
    write_text(path, DB_HISTORY_HEADER_4 "\nrun 0123456789abcdef howe canny gpu - "
                     "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 1000 2 0 0 0\n");
    CHECK(db_history_append(path, NULL, 0, c, 1) == DB_OK && db_history_load(&h, path) == DB_OK && h.n == 1 &&
              h.n_copies == 1,
          "version 4 file: %d runs, %d copies", h.n, h.n_copies);

    /* The factor: 1 GB/s and no latency predict bytes / 1e6 ms. */
    db_history_free(&h);
    db_transfer_model m = {.latency_ms = 0, .bandwidth_gbs = 1, .sizes = 3};
    db_history_copy rows[] = {
        copy_row(dev, "sums", DB_D2H, 1e6, 2),   copy_row(dev, "sums", DB_D2H, 2e6, 10), /* ratios 2, 5 */
        copy_row(dev, "sums", DB_H2D, 1e6, 50),  copy_row(other, "sums", DB_D2H, 1e6, 50),
        copy_row(dev, "gray", DB_D2H, 1e6, 50),
    };
    db_history_add_copies(&h, rows, 5);
    double f = 0;
    CHECK(db_history_copy_factor(&h, dev, "niblack", "sums", DB_D2H, &m, &f) == 2 && f == 1,
          "two copies leave the model alone: factor %g", f);
    db_history_copy third = copy_row(dev, "sums", DB_D2H, 4e6, 12); /* ratio 3 */
    db_history_add_copies(&h, &third, 1);
    CHECK(db_history_copy_factor(&h, dev, "niblack", "sums", DB_D2H, &m, &f) == 3 && f == 3,
          "ratios 2, 5, 3: factor %g, not 3", f);
    CHECK(db_history_copy_factor(&h, dev, "otsu", "sums", DB_D2H, &m, &f) == 0 && f == 1, "another algorithm");
    /* Only the last DB_HISTORY_KEEP count: older copies at ratio 100 drop out. */
    db_history_free(&h);
    for (int i = 0; i < 10 + DB_HISTORY_KEEP; i++) {
        db_history_copy x = copy_row(dev, "sums", DB_D2H, 1e6, i < 10 ? 100 : 2);
        db_history_add_copies(&h, &x, 1);
    }
    CHECK(db_history_copy_factor(&h, dev, "niblack", "sums", DB_D2H, &m, &f) == DB_HISTORY_KEEP && f == 2,
          "the last %d copies: factor %g, not 2", DB_HISTORY_KEEP, f);
    db_history_free(&h);

    /* From a profile: the copies with bytes, the kernels and maps (0 bytes) left out. */
    const db_algo *niblack = db_algo_find("niblack");
    db_profile_row prof[4] = {
        {.kind = DB_REC_KERNEL, .stage = "stats", .role = DB_ROLE_GPU, .span_ms = 1, .busy_ms = 1},
        {.kind = DB_REC_TO_HOST, .stage = "sums", .role = DB_ROLE_GPU, .busy_ms = 0.8, .bytes = 20676096},
        {.kind = DB_REC_TO_DEVICE, .stage = "gray", .role = DB_ROLE_CPU, .busy_ms = 0.01, .bytes = 0},
        {.kind = DB_REC_TO_DEVICE, .stage = "image", .role = DB_ROLE_GPU, .busy_ms = 0.05, .bytes = 1292236},
    };
    const char keys[DB_ROLE_COUNT][17] = {"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"};
    db_history_copy out[DB_HISTORY_MAX_COPIES];
    int n = 0;
    db_history_copy_rows(prof, 4, keys, niblack, out, &n);
    CHECK(n == 2 && !strcmp(out[0].item, "sums") && out[0].dir == DB_D2H && out[0].bytes == 20676096 &&
              out[0].ms == 0.8 && !strcmp(out[0].device, keys[DB_ROLE_GPU]) && !strcmp(out[0].algo, "niblack") &&
              !strcmp(out[1].item, "image") && out[1].dir == DB_H2D,
          "copy rows from a profile: %d", n);

    /* Compaction keeps each copy's last DB_HISTORY_KEEP rows: ms is the row's position. */
    snprintf(path, sizeof path, "%s/big-copies.history", dir);
    enum { CHUNK = 2000 };
    static db_history_copy chunk[CHUNK];
    int appended = 0, compacted = 0;
    off_t before = 0;
    while (!compacted && appended < 100 * CHUNK) {
        for (int i = 0; i < CHUNK; i++)
            chunk[i] = copy_row(dev, i % 2 ? "sums" : "gray", DB_D2H, 1000, appended + i + 1);
        CHECK(db_history_append(path, NULL, 0, chunk, CHUNK) == DB_OK, "append: %s", db_error_message());
        appended += CHUNK;
        struct stat sb;
        if (stat(path, &sb) != 0)
            break;
        compacted = sb.st_size < before;
        before = sb.st_size;
    }
    CHECK(compacted, "no compaction after %d copy rows", appended);
    CHECK(db_history_load(&h, path) == DB_OK && h.n_copies == 2 * DB_HISTORY_KEEP, "compacted to %d copies",
          h.n_copies);
    int ok = 1;
    for (int i = 0; i < h.n_copies; i++)
        ok &= h.copies[i].ms == appended - 2 * DB_HISTORY_KEEP + i + 1;
    CHECK(ok, "compaction kept other copies than the last %d of each", DB_HISTORY_KEEP);
    db_history_free(&h);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_round_trip();
    test_rejected();
    test_factor();
    test_work();
    test_compaction();
    test_rows();
    test_copies();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (test_failures)
        fprintf(stderr, "%d failures\n", test_failures);
    else
        printf("ok\n");
    return test_failures ? 1 : 0;
}
