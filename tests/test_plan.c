/*
** test_plan.c — the planner's invariants: measure picks the fastest of the
** timings it is given; the estimate puts each stage on gpu when one is bound
** and on cpu with a note when not; wisdom files round-trip, keep other
** entries, reject malformed text with its line, tell stale entries, and lose
** no entry to concurrent writers; a real measurement on PoCL times every
** runnable map, keeps the image and feeds auto.
*/
#define _GNU_SOURCE
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "planner/map.h"
#include "runtime/util.h"
#include "tests/testutil.h"

static db_plan_timing timing(const db_algo *algo, const char *map, double ms)
{
    db_plan_timing t = {.median_ms = ms, .min_ms = ms, .max_ms = ms};
    if (db_map_parse(algo, map, &t.map) != DB_OK)
        fprintf(stderr, "bad map %s: %s\n", map, db_error_message());
    return t;
}

/* db_plan_fastest on injected timings: the least median; equal medians to the map
** closer to the estimate, then to the earlier. */
static void test_fastest(void)
{
    const db_algo *algo = db_algo_find("sauvola");
    db_plan_timing t[4] = {timing(algo, "cpu", 9.0), timing(algo, "gpu,cpu,gpu", 3.0),
                           timing(algo, "gpu", 4.0), timing(algo, "cpu,cpu,gpu", 3.5)};
    CHECK(db_plan_fastest(algo, true, t, 4) == 1, "fastest of 9, 3, 4, 3.5 ms: %d, not 1",
          db_plan_fastest(algo, true, t, 4));
    t[2].median_ms = 3.0; /* a tie between gpu,cpu,gpu and gpu: the estimate (gpu) wins with a GPU */
    CHECK(db_plan_fastest(algo, true, t, 4) == 2, "tie with the estimate: %d, not 2", db_plan_fastest(algo, true, t, 4));
    t[0].median_ms = 3.0; /* without a GPU the estimate is cpu: it wins the three-way tie */
    CHECK(db_plan_fastest(algo, false, t, 4) == 0, "tie without a GPU: %d, not 0", db_plan_fastest(algo, false, t, 4));
    db_plan_timing u[2] = {timing(algo, "cpu,gpu,gpu", 2.0), timing(algo, "gpu,gpu,cpu", 2.0)};
    CHECK(db_plan_fastest(algo, true, u, 2) == 0, "equal medians, equal distance: the earlier, not %d",
          db_plan_fastest(algo, true, u, 2));
    CHECK(db_plan_fastest(algo, true, u, 0) == -1, "no timings: not -1");
}

/* The CPU lane's rule: it takes a page when the GPU lanes would reach it later than it would finish it. */
static void test_cpu_lane_rule(void)
{
    CHECK(!db_batch_cpu_takes(0, 100, 10, 5), "took a page from an empty queue");
    CHECK(!db_batch_cpu_takes(5, 100, 0, 5), "took a page before the GPU lanes finished one");
    CHECK(db_batch_cpu_takes(5, 100, 10, 40) && !db_batch_cpu_takes(4, 100, 10, 40),
          "5 pages at 10 ms beat 40 ms; 4 do not");
    CHECK(db_batch_cpu_takes(1, 200, 10, 0) && !db_batch_cpu_takes(1, 199, 10, 0),
          "learning needs 2 s of GPU work left: 200 pages at 10 ms, not 199");
}

static void test_modes(void)
{
    CHECK(db_plan_mode_of(NULL) == DB_PLAN_AUTO && db_plan_mode_of("") == DB_PLAN_AUTO &&
              db_plan_mode_of("AUTO") == DB_PLAN_AUTO && db_plan_mode_of("measure") == DB_PLAN_MEASURE &&
              db_plan_mode_of("gpu") == DB_PLAN_GIVEN && db_plan_mode_of("automatic") == DB_PLAN_GIVEN,
          "db_plan_mode_of");
    db_map map;
    CHECK(db_map_parse(db_algo_find("otsu"), "measure", &map) == DB_ERR_USAGE, "'measure' parsed as a map");
}

static char *read_all(const char *path)
{
    char *text = NULL;
    db_read_file(path, DB_READ_TEXT_MAX, &text, NULL);
    return text;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *const key_a = "sauvola sliding window=75 1 23 0123456789abcdef - 00000000000000aa";
static const char *const key_b = "howe - c=160 1 20 0123456789abcdef fedcba9876543210 00000000000000aa";
static const char *const key_a_new = "sauvola sliding window=75 1 23 0123456789abcdef - 00000000000000bb";

static void test_wisdom_file(const char *dir)
{
    char path[4096], map[128];
    double ms = -1;
    bool stale;
    int found = -1;
    snprintf(path, sizeof path, "%s/sub/dir/wisdom", dir);
    CHECK(db_wisdom_find(path, key_a, map, sizeof map, &ms, &stale, &found) == DB_OK && !found && !stale,
          "a missing file: %s", db_error_message());
    CHECK(db_wisdom_store(path, key_a, "gpu,cpu,gpu", 1.5) == DB_OK, "store: %s", db_error_message());
    CHECK(db_wisdom_store(path, key_b, "cpu,gpu,cpu", 20) == DB_OK, "store: %s", db_error_message());
    CHECK(db_wisdom_find(path, key_a, map, sizeof map, &ms, &stale, &found) == DB_OK && found &&
              !strcmp(map, "gpu,cpu,gpu") && ms == 1.5,
          "round trip: found %d map %s ms %g", found, map, ms);
    CHECK(db_wisdom_store(path, key_a, "cpu", 1.25) == DB_OK, "replace: %s", db_error_message());
    CHECK(db_wisdom_find(path, key_a, map, sizeof map, &ms, &stale, &found) == DB_OK && found && !strcmp(map, "cpu") &&
              ms == 1.25, "replaced: %s %g", map, ms);
    CHECK(db_wisdom_find(path, key_b, map, sizeof map, &ms, &stale, &found) == DB_OK && found &&
              !strcmp(map, "cpu,gpu,cpu"), "other entry kept: %s", map);
    /* The same key with other kernels: stale, not found; a store replaces it. */
    CHECK(db_wisdom_find(path, key_a_new, map, sizeof map, &ms, &stale, &found) == DB_OK && !found && stale,
          "stale entry: found %d stale %d", found, stale);
    CHECK(db_wisdom_store(path, key_a_new, "gpu", 1.0) == DB_OK, "store over stale: %s", db_error_message());
    char *text = read_all(path);
    int entries = 0;
    for (char *p = text; p && (p = strstr(p, "\nsauvola ")); p++)
        entries++;
    CHECK(text && entries == 1 && strstr(text, "\nhowe ") && !strncmp(text, "docbin-wisdom 1\n", 16),
          "after replacing a stale entry, %d sauvola entries: %s", entries, text ? text : "(none)");
    free(text);

    /* Malformed files name the file and the line; nothing is read from them. */
    static const struct {
        const char *text;
        int line;
    } bad[] = {
        {"docbin-wisdom 2\n", 1},
        {"not wisdom\n", 1},
        {"docbin-wisdom 1\nsauvola sliding window=75 1 23 k - h gpu\n", 2},
        {"docbin-wisdom 1\n# c\nsauvola sliding window=75 1 23 k - h gpu fast\n", 3},
        {"docbin-wisdom 1\nsauvola sliding window=75 1 23 k - h gpu -1\n", 2},
        {"docbin-wisdom 1\nsauvola sliding window=75 1 23 k - h gpu 1 extra\n", 2},
    };
    snprintf(path, sizeof path, "%s/bad", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i].text);
        char where[4200];
        snprintf(where, sizeof where, "%s:%d:", path, bad[i].line);
        db_status st = db_wisdom_find(path, key_a, map, sizeof map, &ms, &stale, &found);
        CHECK(st == DB_ERR_FORMAT && strstr(db_error_message(), where), "bad file %zu: %d %s", i, st,
              db_error_message());
        CHECK(db_wisdom_store(path, key_a, "gpu", 1) == DB_ERR_FORMAT, "a store over bad file %zu rewrote it", i);
    }
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite("docbin-wisdom 1\n\0x\n", 1, 19, f);
        fclose(f);
    }
    CHECK(db_wisdom_find(path, key_a, map, sizeof map, &ms, &stale, &found) == DB_ERR_FORMAT, "a NUL byte read");
}

/* Writers in several processes at once: every entry survives. */
static void test_wisdom_writers(const char *dir)
{
    enum { WRITERS = 8, EACH = 10 };
    char path[4096];
    snprintf(path, sizeof path, "%s/shared-wisdom", dir);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        if ((pids[w] = fork()) == 0) {
            int bad = 0;
            for (int i = 0; i < EACH; i++) {
                char key[256];
                snprintf(key, sizeof key, "otsu - - 1 %d k%d - h", i, w);
                bad |= db_wisdom_store(path, key, "gpu", w + i) != DB_OK;
            }
            _exit(bad);
        }
    }
    int failed = 0;
    for (int w = 0; w < WRITERS; w++) {
        int status;
        failed += pids[w] < 0 || waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) ||
                  WEXITSTATUS(status) != 0;
    }
    CHECK(failed == 0, "%d writers failed", failed);
    int found_all = 1;
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < EACH; i++) {
            char key[256], map[32];
            double ms;
            bool stale;
            int found = 0;
            snprintf(key, sizeof key, "otsu - - 1 %d k%d - h", i, w);
            found_all &= db_wisdom_find(path, key, map, sizeof map, &ms, &stale, &found) == DB_OK && found &&
                         ms == w + i;
        }
    CHECK(found_all, "an entry of %d concurrent writers was lost", WRITERS);
}

/* The estimate with the roles the environment binds, and with the gpu role unbound. */
static void test_estimate(db_context *ctx)
{
    const db_algo *howe = db_algo_find("howe");
    db_job job;
    db_job_defaults(howe, &job);
    db_plan plan;
    CHECK(db_plan_estimate(ctx, howe, &job, 100, 80, 1, &plan) == DB_OK && plan.source == DB_PLAN_FROM_ESTIMATE,
          "estimate: %s", db_error_message());
    char text[64];
    db_map_format(&plan.map, text, sizeof text);
    CHECK(!strcmp(text, "gpu,gpu,gpu") && !plan.note[0], "estimate with a GPU: %s (%s)", text, plan.note);
    const db_device_info *gpu = ctx->chosen[DB_ROLE_GPU];
    ctx->chosen[DB_ROLE_GPU] = NULL;
    CHECK(db_plan_estimate(ctx, howe, &job, 100, 80, 1, &plan) == DB_OK, "estimate: %s", db_error_message());
    db_map_format(&plan.map, text, sizeof text);
    CHECK(!strcmp(text, "cpu,cpu,cpu") && strstr(plan.note, "every stage runs on cpu"),
          "estimate without a GPU: %s, note '%s'", text, plan.note);
    CHECK(strstr(plan.key, " - ") != NULL, "an unbound role's key is '-': %s", plan.key);
    ctx->chosen[DB_ROLE_GPU] = gpu;
}

/* A real measurement of sauvola on PoCL: every map timed, the image kept, the
** winner stored; auto then returns it; another page-size bucket does not. */
static void test_measure(db_context *ctx, const char *dir)
{
    const db_algo *algo = db_algo_find("sauvola");
    db_job job;
    db_job_defaults(algo, &job);
    db_image *in = db_sample_page(96, 64, 7), *out = NULL, *ref = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/measured", dir);
    db_plan *plan = malloc(sizeof *plan);
    db_status st = db_plan_measure(ctx, algo, &job, in, 2, path, plan, &out);
    CHECK(st == DB_OK && plan->n_timings == db_map_count(algo) && plan->source == DB_PLAN_FROM_MEASURE,
          "measure: %d timings: %s", plan->n_timings, db_error_message());
    int best = db_plan_fastest(algo, true, plan->timings, plan->n_timings);
    CHECK(best >= 0 && !memcmp(&plan->timings[best].map, &plan->map, sizeof plan->map),
          "measure did not choose the fastest of its own timings");
    for (int i = 0; i < plan->n_timings; i++)
        CHECK(plan->timings[i].min_ms > 0 && plan->timings[i].min_ms <= plan->timings[i].median_ms &&
                  plan->timings[i].median_ms <= plan->timings[i].max_ms, "timing %d not ordered", i);
    db_map gpu;
    db_map_parse(algo, "gpu", &gpu);
    CHECK(db_run(ctx, algo, &gpu, &job, in, &ref, NULL, NULL) == DB_OK && out &&
              test_diff(out->data, ref->data, (size_t)in->width * in->height) == 0,
          "measure's image differs from a run's");
    db_plan again;
    CHECK(db_plan_auto(ctx, algo, &job, 96, 64, 3, path, &again) == DB_OK && again.source == DB_PLAN_FROM_WISDOM &&
              !memcmp(&again.map, &plan->map, sizeof again.map), "auto after measure: source %d", again.source);
    CHECK(db_plan_auto(ctx, algo, &job, 1000, 1000, 3, path, &again) == DB_OK &&
              again.source == DB_PLAN_FROM_ESTIMATE, "auto for another size used wisdom");
    db_job_set(algo, &job, "k", "0.5"); /* k costs nothing: the same entry serves */
    CHECK(db_plan_auto(ctx, algo, &job, 96, 64, 3, path, &again) == DB_OK && again.source == DB_PLAN_FROM_WISDOM,
          "auto with another k: source %d", again.source);
    db_job_set(algo, &job, "window", "5"); /* the window does: no entry */
    CHECK(db_plan_auto(ctx, algo, &job, 96, 64, 3, path, &again) == DB_OK && again.source == DB_PLAN_FROM_ESTIMATE,
          "auto with another window: source %d", again.source);
    free(plan);
    db_image_free(in);
    db_image_free(out);
    db_image_free(ref);
}

int main(void)
{
    char dir[] = "/tmp/docbin-plan-XXXXXX";
    if (!mkdtemp(dir))
        return 99;
    test_fastest();
    test_cpu_lane_rule();
    test_modes();
    test_wisdom_file(dir);
    test_wisdom_writers(dir);
    db_context *ctx = test_open_context();
    test_estimate(ctx);
    test_measure(ctx, dir);
    db_context_close(ctx);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return test_result("plan");
}
