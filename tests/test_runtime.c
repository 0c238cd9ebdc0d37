/*
** test_runtime.c — maps (parse, print, enumerate), device patterns, the kernel
** binary cache (corrupt and mismatched entries are rebuilt, never trusted),
** build failures (the device's build log reaches the message) and the memory
** size the batch's bound starts from.
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/buffer.h"
#include "runtime/sample.h"
#include "runtime/sha256.h"
#include "runtime/util.h"
#include "tests/testutil.h"

static void test_maps(void)
{
    const db_algo *algo = db_algo_find("sauvola");
    db_map map;
    char text[64];

    CHECK(db_map_parse(algo, "gpu,cpu,gpu", &map) == DB_OK, "positional map: %s", db_error_message());
    db_map_format(&map, text, sizeof text);
    CHECK(!strcmp(text, "gpu,cpu,gpu"), "positional round trip gave %s", text);
    CHECK(db_map_parse(algo, "CPU", &map) == DB_OK, "uniform map");
    db_map_format(&map, text, sizeof text);
    CHECK(!strcmp(text, "cpu,cpu,cpu"), "uniform map gave %s", text);
    CHECK(db_map_parse(algo, "stats=cpu", &map) == DB_OK, "named map: %s", db_error_message());
    db_map_format(&map, text, sizeof text);
    CHECK(!strcmp(text, "gpu,cpu,gpu"), "named map gave %s (unnamed stages take the default gpu)", text);
    CHECK(db_map_parse(algo, "threshold=cpu,gray=cpu", &map) == DB_OK, "named map, two stages");
    db_map_format(&map, text, sizeof text);
    CHECK(!strcmp(text, "cpu,gpu,cpu"), "named map gave %s", text);

    static const char *bad[] = {"gpu,cpu", "gpu,cpu,gpu,cpu", "gpu,,gpu", "", "canny=gpu", "stats=tpu",
                                "stats=cpu,stats=gpu", "gpu,stats=cpu", "auto", "gpu cpu gpu"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        db_status st = db_map_parse(algo, bad[i], &map);
        CHECK(st == DB_ERR_USAGE, "map '%s' was accepted", bad[i]);
        CHECK(strstr(db_error_message(), "gray") || strstr(db_error_message(), "role") ||
                  strstr(db_error_message(), "twice"),
              "map '%s': the error does not help: %s", bad[i], db_error_message());
    }

    /* Enumeration: 2^3 distinct maps, all-cpu first, all-gpu last, each parses back to itself. */
    CHECK(db_map_count(algo) == 8, "sauvola has %d maps", db_map_count(algo));
    for (int i = 0; i < db_map_count(algo); i++) {
        db_map m, back;
        db_map_nth(algo, i, &m);
        db_map_format(&m, text, sizeof text);
        CHECK(db_map_parse(algo, text, &back) == DB_OK && !memcmp(back.role, m.role, sizeof m.role[0] * 3),
              "map %d (%s) does not parse back", i, text);
        for (int j = 0; j < i; j++) {
            db_map o;
            db_map_nth(algo, j, &o);
            CHECK(memcmp(o.role, m.role, sizeof m.role[0] * 3) != 0, "maps %d and %d are equal", i, j);
        }
    }
    db_map_nth(algo, 0, &map);
    db_map_format(&map, text, sizeof text);
    CHECK(!strcmp(text, "cpu,cpu,cpu"), "first map is %s", text);
    db_map_nth(algo, 7, &map);
    db_map_format(&map, text, sizeof text);
    CHECK(!strcmp(text, "gpu,gpu,gpu"), "last map is %s", text);
    db_map_nth(algo, 5, &map);
    db_map_format(&map, text, sizeof text);
    CHECK(!strcmp(text, "gpu,cpu,gpu"), "map 5 is %s", text);
}

static void test_device_patterns(db_context *ctx)
{
    const db_device_info *d = &ctx->devices[0];
    int index = -1;
    char spec[300];
    snprintf(spec, sizeof spec, "%d:%d", d->platform_index, d->device_index);
    CHECK(db_device_match(ctx, spec, &index) == DB_OK && index == 0, "P:D %s: %s", spec, db_error_message());
    CHECK(db_device_match(ctx, "99:0", &index) == DB_ERR_DEVICE, "99:0 matched");
    CHECK(db_device_match(ctx, "no-such-device-anywhere", &index) == DB_ERR_DEVICE, "a bogus word matched");
    /* A distinctive word of the first device's name, in another case, matches it. */
    char word[64] = "";
    sscanf(d->name, "%63[A-Za-z]", word);
    for (char *p = word; *p; p++)
        *p = (char)(*p ^ 0x20);
    if (strlen(word) >= 3) {
        int n_match = 0;
        for (int i = 0; i < ctx->n_devices; i++)
            n_match += strcasestr(ctx->devices[i].name, word) || strcasestr(ctx->devices[i].platform_name, word);
        db_status st = db_device_match(ctx, word, &index);
        CHECK(n_match == 1 ? st == DB_OK && index == 0 : st == DB_ERR_DEVICE, "word '%s' (%d matches): %s", word,
              n_match, db_error_message());
    }
    const char *type = (d->type & CL_DEVICE_TYPE_GPU) ? "gpu" : "cpu";
    const char *other = (d->type & CL_DEVICE_TYPE_GPU) ? "accelerator" : "gpu";
    snprintf(spec, sizeof spec, "%.100s:%s:%.100s", d->platform_name, type, d->name);
    CHECK(db_device_match(ctx, spec, &index) == DB_OK && index == 0, "full pattern %s: %s", spec,
          db_error_message());
    snprintf(spec, sizeof spec, "%.100s:%s:", d->platform_name, other);
    int wrong_type = 0;
    for (int i = 0; i < ctx->n_devices; i++)
        wrong_type += !strcmp(ctx->devices[i].platform_name, d->platform_name) &&
                      !(ctx->devices[i].type & (CL_DEVICE_TYPE_CPU | (d->type & CL_DEVICE_TYPE_GPU)));
    if (!wrong_type)
        CHECK(db_device_match(ctx, spec, &index) == DB_ERR_DEVICE, "%s matched a device of another type", spec);
}

static int count_entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".clbin") != NULL && e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Overwrites every cache entry with `how`: 0 flips bytes in the binary, 1 truncates,
** 2 keeps the file but changes the key it claims. */
static void damage_entries(const char *dir, int how)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".clbin"))
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%.4000s/%.255s", dir, e->d_name);
        FILE *f = fopen(path, "r+b");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        if (how == 0) {
            fseek(f, size / 2, SEEK_SET);
            fputs("garbage garbage", f);
        } else if (how == 2) {
            fseek(f, 20, SEEK_SET); /* inside the "key <hex>" line */
            fputc('0', f);
            fseek(f, 21, SEEK_SET);
            fputc('1', f);
        }
        fclose(f);
        if (how == 1 && truncate(path, size / 3) != 0)
            CHECK(0, "cannot truncate %s", path);
    }
    if (d)
        closedir(d);
}

/* Counts entries whose recorded checksum matches their binary: rewritten, sound files. */
static int count_valid(const char *dir)
{
    int valid = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".clbin") || e->d_name[0] == '.')
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%.4000s/%.255s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        static char buf[1 << 24];
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        char sum[65], key[65];
        unsigned long long len;
        int header = 0;
        if (sscanf(buf, "docbin-clbin 1\nkey %64s\nsha %64s\nsize %llu\n%n", key, sum, &len, &header) != 3 ||
            header + len != n)
            continue;
        db_sha256 h;
        uint8_t digest[32];
        char hex[65];
        db_sha256_init(&h);
        db_sha256_update(&h, buf + header, (size_t)len);
        db_sha256_final(&h, digest);
        db_sha256_hex(digest, hex);
        char name[80];
        snprintf(name, sizeof name, "%s.clbin", key);
        valid += !strcmp(hex, sum) && !strcmp(name, e->d_name);
    }
    if (d)
        closedir(d);
    return valid;
}

static db_image *run_once(const char *what, db_image *page)
{
    db_context *ctx = test_open_context();
    const db_algo *algo = db_algo_find("sauvola");
    db_job job;
    db_job_defaults(algo, &job);
    job.params[0] = 15;
    db_map map;
    db_map_parse(algo, "gpu,cpu,gpu", &map);
    db_image *out = NULL;
    db_status st = db_run(ctx, algo, &map, &job, page, &out, NULL, NULL);
    CHECK(st == DB_OK, "%s: %s", what, db_error_message());
    db_context_close(ctx);
    return out;
}

static void test_cache(const char *dir)
{
    db_image *page = db_sample_page(200, 150, 7);
    db_image *first = run_once("cold cache", page);
    int entries = count_entries(dir);
    CHECK(entries > 0 && count_valid(dir) == entries, "%d cache entries written in %s, %d sound", entries, dir,
          count_valid(dir));
    for (int how = 0; how < 3; how++) {
        damage_entries(dir, how);
        db_image *again = run_once("damaged cache", page);
        CHECK(first && again && !memcmp(first->data, again->data, 200 * 150), "damage %d changed the image", how);
        CHECK(count_valid(dir) == entries && count_entries(dir) == entries,
              "damage %d: %d of %d entries are sound after the run (damaged entries must be rebuilt and rewritten)",
              how, count_valid(dir), entries);
        db_image_free(again);
    }
    /* A rebuilt entry is valid again: a warm run leaves the files as they are. */
    db_image *warm = run_once("warm cache", page);
    db_image_free(warm);
    db_image_free(first);
    db_image_free(page);
}

static void test_build_failure(const char *tmp)
{
    char kdir[4200], path[4300];
    snprintf(kdir, sizeof kdir, "%s/kernels", tmp);
    mkdir(kdir, 0755);
    snprintf(path, sizeof path, "%s/gray.cl", kdir);
    FILE *f = fopen(path, "w");
    fputs("kernel void gray_convert(global uchar *out) { out[0] = undeclared_thing; }\n", f);
    fclose(f);
    setenv("DOCBIN_KERNEL_DIR", kdir, 1);
    db_context *ctx = test_open_context();
    const db_algo *algo = db_algo_find("otsu");
    db_job job;
    db_job_defaults(algo, &job);
    db_map map;
    /* On the gpu role: the cpu role converts to gray in host code, without gray.cl. */
    db_map_parse(algo, "gpu", &map);
    db_image *page = db_sample_page(40, 30, 3), *out = NULL;
    db_status st = db_run(ctx, algo, &map, &job, page, &out, NULL, NULL);
    CHECK(st == DB_ERR_CL, "a broken kernel built (status %d)", st);
    CHECK(strstr(db_error_message(), "build log") && strstr(db_error_message(), "undeclared_thing"),
          "the build log is missing from: %s", db_error_message());
    CHECK(out == NULL, "a failed run returned an image");
    /* Missing source file in DOCBIN_KERNEL_DIR: a clear message naming it. */
    unlink(path);
    db_context_close(ctx);
    ctx = test_open_context();
    st = db_run(ctx, algo, &map, &job, page, &out, NULL, NULL);
    CHECK(st == DB_ERR_IO && strstr(db_error_message(), "gray.cl"), "missing kernel file: %s", db_error_message());
    unsetenv("DOCBIN_KERNEL_DIR");
    db_image_free(page);
    db_context_close(ctx);
}

/* A one-stage algorithm whose only implementation is host code on the cpu role. */
struct invert_arg {
    size_t n;
};

static void invert_host(void *const *ptrs, const void *arg)
{
    const struct invert_arg *a = arg;
    const uint8_t *in = ptrs[0];
    uint8_t *out = ptrs[1];
    for (size_t i = 0; i < a->n; i++)
        out[i] = (uint8_t)(255 - in[i]);
}

static db_status invert_cpu(db_stage_run *run)
{
    struct invert_arg a = {(size_t)db_stage_width(run) * (size_t)db_stage_height(run)};
    cl_mem mems[2] = {db_stage_in(run, 0), db_stage_out(run, 0)};
    return db_stage_host(run, "invert", invert_host, &a, sizeof a, mems, 2);
}

static const db_item invert_items[] = {
    {"image", DB_ITEM_INPUT, 1, "gray input", NULL},
    {"inverted", DB_ITEM_PIXELS, 1, "255 - input", NULL},
};
static const db_stage invert_stages[] = {
    {.name = "invert", .doc = "host code", .in = DB_PORTS(0), .out = DB_PORTS(1), .impl = {invert_cpu, NULL}},
};
static const db_algo invert_algo = {
    .name = "invert", .doc = "test", .items = invert_items, .n_items = DB_LEN(invert_items), .input = 0, .output = 1,
    .stages = invert_stages, .n_stages = DB_LEN(invert_stages),
};

static void test_host_stage(void)
{
    db_context *ctx = test_open_context();
    db_image *img = db_sample_page(61, 37, 5), *gray = db_image_new(61, 37, 1), *out = NULL;
    for (int i = 0; i < 61 * 37; i++)
        gray->data[i] = img->data[3 * i + 1];
    db_map map = {1, {DB_ROLE_CPU}};
    db_job job;
    db_job_defaults(&invert_algo, &job);
    db_profile *prof = db_profile_new();
    db_status st = db_run(ctx, &invert_algo, &map, &job, gray, &out, NULL, prof);
    CHECK(st == DB_OK, "host stage: %s", db_error_message());
    for (int i = 0; st == DB_OK && i < 61 * 37; i++)
        if (out->data[i] != 255 - gray->data[i]) {
            CHECK(0, "host stage: pixel %d is %d, expected %d", i, out->data[i], 255 - gray->data[i]);
            break;
        }
    int profiled = 0;
    for (int i = 0; i < prof->resolved; i++)
        profiled |= prof->rec[i].kind == DB_REC_KERNEL && !strcmp(prof->rec[i].what, "invert");
    CHECK(profiled, "the host stage was not profiled");
    db_map gpu = {1, {DB_ROLE_GPU}};
    db_image *none = NULL;
    st = db_run(ctx, &invert_algo, &gpu, &job, gray, &none, NULL, NULL);
    CHECK(st == DB_ERR_USAGE && strstr(db_error_message(), "no gpu implementation"),
          "a stage without a gpu implementation was mapped to gpu: %s", db_error_message());
    db_profile_free(prof);
    db_image_free(out);
    db_image_free(gray);
    db_image_free(img);
    db_context_close(ctx);
}

/* db_memory_size against /proc/meminfo's MemTotal: positive, and no more than the machine has. */
/* db_read_file: a regular file whole; a FIFO (with no writer: it must not
** block), a device, a directory and a file over the bound refused with a line
** naming the file; a missing file keeps ENOENT. */
static void test_read_file(const char *dir)
{
    char path[4200], fifo[4200];
    snprintf(path, sizeof path, "%s/text", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("hello\n", f);
        fclose(f);
    }
    char *text = NULL;
    size_t n = 0;
    CHECK(db_read_file(path, 100, &text, &n) == DB_OK && text && n == 6 && !strcmp(text, "hello\n"),
          "a regular file: %s", db_error_message());
    free(text);
    CHECK(db_read_file(path, 5, &text, &n) == DB_ERR_IO && !text && strstr(db_error_message(), path),
          "a file over the bound: %s", db_error_message());
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    const char *refused[] = {fifo, "/dev/zero", dir};
    for (int i = 0; i < 3; i++) {
        db_status st = db_read_file(refused[i], 1 << 20, &text, &n);
        CHECK(st == DB_ERR_IO && !text && strstr(db_error_message(), refused[i]) &&
                  strstr(db_error_message(), "not a file"), "%s: %d %s", refused[i], st, db_error_message());
    }
    snprintf(path, sizeof path, "%s/missing", dir);
    CHECK(db_read_file(path, 100, &text, &n) == DB_ERR_IO && errno == ENOENT, "a missing file: errno %d", errno);
}

static void test_memory_size(void)
{
    size_t bytes = db_memory_size();
    unsigned long long total_kb = 0;
    char line[256];
    FILE *f = fopen("/proc/meminfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &total_kb) == 1)
            break;
    if (f)
        fclose(f);
    if (!total_kb) {
        printf("skip db_memory_size: no MemTotal in /proc/meminfo\n");
        return;
    }
    CHECK(bytes >= ((size_t)1 << 20) && bytes <= total_kb * 1024ull,
          "db_memory_size %zu bytes, MemTotal %llu kB", bytes, total_kb);
    printf("ok   db_memory_size %.1f GiB (MemTotal %.1f GiB)\n", bytes / 1073741824.0, total_kb / 1048576.0);
}

/* db_copy_rows against a row-by-row copy of its own: packed blocks of
** several sizes, and strided rows on either side. */
static void test_copy_rows(void)
{
    static const struct {
        size_t row, rows, dst_pad, src_pad;
    } cases[] = {
        {0, 0, 0, 0}, {1, 1, 0, 0}, {100, 3, 0, 0}, {1 << 20, 1, 0, 0}, {1 << 18, 37, 0, 0},
        {7547, 3272, 0, 0}, {7547, 3272, 5, 0}, {2516, 3272, 0, 12}, {3, 100000, 1, 1},
        {(3 << 20) + 1, 5, 0, 7},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t row = cases[c].row, rows = cases[c].rows;
        size_t ds = row + cases[c].dst_pad, ss = row + cases[c].src_pad;
        size_t dn = ds * rows + 1, sn = ss * rows + 1;
        unsigned char *src = malloc(sn), *dst = malloc(dn), *want = malloc(dn);
        CHECK(src && dst && want, "out of memory");
        if (!src || !dst || !want) {
            free(src), free(dst), free(want);
            return;
        }
        for (size_t i = 0; i < sn; i++)
            src[i] = (unsigned char)(i * 2654435761u >> 13);
        memset(dst, 0xa5, dn);
        memset(want, 0xa5, dn);
        for (size_t y = 0; y < rows; y++)
            memcpy(want + y * ds, src + y * ss, row);
        db_copy_rows(dst, ds, src, ss, row, rows);
        CHECK(!memcmp(dst, want, dn), "copy of %zu rows of %zu bytes (strides %zu, %zu) differs", rows, row, ds, ss);
        free(src), free(dst), free(want);
    }
}

int main(void)
{
    char tmp[] = "/tmp/docbin-test-XXXXXX";
    if (!mkdtemp(tmp))
        return 99;
    char cache[4200];
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    setenv("DOCBIN_CACHE_DIR", cache, 1); /* before the library first reads it */
    test_maps();
    test_read_file(tmp);
    test_memory_size();
    test_copy_rows();
    db_context *ctx = test_open_context();
    test_device_patterns(ctx);
    db_context_close(ctx);
    test_host_stage();
    test_cache(cache);
    test_build_failure(tmp);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    return test_result("runtime");
}
