/*
** program.c — loading OpenCL C sources, building them and caching the binaries.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/program.h"
#include "runtime/sha256.h"
#include "runtime/util.h"

/* Bump when the cache file layout or the key's ingredients change. */
#define CACHE_FORMAT "docbin-clbin 1"

/* Every program is built with these options: OpenCL C 1.2, and nothing that
** relaxes floating point (the determinism contract). */
static const char build_options[] = "-cl-std=CL1.2";

/* Prepended to every source: exact double arithmetic everywhere. */
static const char prelude[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#line 1\n";

static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static char cache_path[4096];
static int cache_enabled;

/* Whether `name` is a cache entry's (the temporary files of a writer that was
** killed go, as db_remove_stale_temps decides). */
static bool is_entry_name(const char *name, const void *user)
{
    (void)user;
    size_t n = strlen(name);
    return n > 6 && !strcmp(name + n - 6, ".clbin");
}

static void cache_init(void)
{
    const char *dir = getenv("DOCBIN_CACHE_DIR");
    if (dir && (!strcmp(dir, "off") || !strcmp(dir, "0")))
        return;
    if (dir && dir[0]) {
        snprintf(cache_path, sizeof cache_path, "%s", dir);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (xdg && xdg[0])
            snprintf(cache_path, sizeof cache_path, "%s/docbin", xdg);
        else if (home && home[0])
            snprintf(cache_path, sizeof cache_path, "%s/.cache/docbin", home);
        else
            return;
    }
    if (db_mkdir_p(cache_path) != 0 || access(cache_path, W_OK) != 0) {
        db_warn("kernel binary cache disabled: cannot use directory %s (%s); "
                "set DOCBIN_CACHE_DIR to a writable directory or to 'off'",
                cache_path, strerror(errno));
        return;
    }
    cache_enabled = 1;
    db_remove_stale_temps(cache_path, is_entry_name, NULL);
}

const char *db_cache_dir(void)
{
    pthread_once(&cache_once, cache_init);
    return cache_enabled ? cache_path : NULL;
}

/* The text of cl/`name` as written: from DOCBIN_KERNEL_DIR when set, else embedded; malloc'd. */
static char *read_body(const char *name)
{
    const char *dir = getenv("DOCBIN_KERNEL_DIR");
    if (dir && dir[0]) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        char *text;
        if (db_read_file(path, DB_READ_TEXT_MAX, &text, NULL) != DB_OK)
            db_fail(DB_ERR_IO, "kernel source (DOCBIN_KERNEL_DIR=%s): %s; unset DOCBIN_KERNEL_DIR to use the "
                    "built-in kernels", dir, db_error_message());
        return text;
    }
    for (int i = 0; i < db_cl_source_count; i++)
        if (!strcmp(db_cl_sources[i].name, name)) {
            char *text = strdup(db_cl_sources[i].text);
            if (!text)
                db_fail(DB_ERR_NOMEM, "out of memory loading kernel source %s", name);
            return text;
        }
    db_fail(DB_ERR_USAGE, "no built-in kernel source named %s", name);
    return NULL;
}

/* Appends cl/`name` to f with every line `#include "X"` replaced by cl/X,
** so that a header shared with the host code (cl/dbs_hash.h) is compiled
** from the same text on every device, embedded or read from disk. */
static db_status append_source(FILE *f, const char *name, int depth)
{
    if (depth > 4)
        return db_fail(DB_ERR_USAGE, "kernel source %s: #include nested too deep", name);
    char *body = read_body(name);
    if (!body)
        return db_error_status();
    db_status st = DB_OK;
    int line_no = 0;
    for (char *line = body, *next; line && *line && st == DB_OK; line = next) {
        line_no++;
        next = strchr(line, '\n');
        size_t len = next ? (size_t)(++next - line) : strlen(line);
        char inc[64];
        if (sscanf(line, "#include \"%63[^\"]\"", inc) == 1) {
            st = append_source(f, inc, depth + 1);
            fprintf(f, "\n#line %d\n", line_no + 1); /* build logs keep this file's line numbers */
        } else {
            fwrite(line, 1, len, f);
        }
    }
    free(body);
    return st;
}

/* The full text of cl/`name` as programs are built from it: the prelude, then the file. */
static char *load_source(const char *name)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) {
        db_fail(DB_ERR_NOMEM, "out of memory loading kernel source %s", name);
        return NULL;
    }
    fputs(prelude, f);
    db_status st = append_source(f, name, 0);
    if (fclose(f) != 0 && st == DB_OK)
        st = db_fail(DB_ERR_NOMEM, "out of memory loading kernel source %s", name);
    if (st != DB_OK) {
        free(text);
        return NULL;
    }
    return text;
}

char *db_kernel_source(const char *name)
{
    return load_source(name);
}

static void cache_key(const db_device *dev, const char *text, char hex[65])
{
    db_sha256 h;
    uint8_t digest[32];
    const char *parts[] = {CACHE_FORMAT, text, build_options, dev->info.platform_name,
                           dev->info.platform_version, dev->info.name, dev->info.driver_version};
    db_sha256_init(&h);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        db_sha256_update(&h, parts[i], strlen(parts[i]) + 1);
    db_sha256_final(&h, digest);
    db_sha256_hex(digest, hex);
}

static void digest_hex(const void *data, size_t n, char hex[65])
{
    db_sha256 h;
    uint8_t digest[32];
    db_sha256_init(&h);
    db_sha256_update(&h, data, n);
    db_sha256_final(&h, digest);
    db_sha256_hex(digest, hex);
}

/* Reads a cache entry; returns the binary only if header, size and checksum agree. */
static unsigned char *cache_load(const char *path, const char *key, size_t *size)
{
    size_t n;
    char *file;
    if (db_read_file(path, DB_READ_DATA_MAX, &file, &n) != DB_OK) {
        db_error_clear(); /* a missing or unreadable entry is rebuilt */
        return NULL;
    }
    char fmt[32], k[65], sum[65];
    unsigned long long len = 0;
    int header = 0;
    if (sscanf(file, "%31[^\n]\nkey %64s\nsha %64s\nsize %llu\n%n", fmt, k, sum, &len, &header) < 4 ||
        header <= 0 || strcmp(fmt, CACHE_FORMAT) || strcmp(k, key) || (size_t)header + len != n) {
        free(file);
        return NULL;
    }
    char check[65];
    digest_hex(file + header, (size_t)len, check);
    if (strcmp(check, sum)) {
        free(file);
        return NULL;
    }
    unsigned char *bin = malloc(len ? len : 1);
    if (bin)
        memcpy(bin, file + header, len);
    *size = (size_t)len;
    free(file);
    return bin;
}

static void cache_store(const char *path, const char *key, const unsigned char *bin, size_t size)
{
    char sum[65];
    digest_hex(bin, size, sum);
    char header[256];
    int hn = snprintf(header, sizeof header, "%s\nkey %s\nsha %s\nsize %zu\n", CACHE_FORMAT, key, sum, size);
    if (db_write_file_atomic(path, header, (size_t)hn, bin, size) != DB_OK)
        db_warn("cannot write kernel cache entry: %s", db_error_message());
}

static db_status build_log_error(db_device *dev, cl_program prog, const char *source, cl_int err)
{
    size_t n = 0;
    clGetProgramBuildInfo(prog, dev->info.id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
    char *log = malloc(n + 1);
    if (log) {
        clGetProgramBuildInfo(prog, dev->info.id, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        log[n] = '\0';
    }
    db_status st = db_fail(DB_ERR_CL, "building cl/%s for %s device '%s' failed with %s; build log:\n%s",
                           source, db_role_name(dev->role), dev->info.name, db_cl_error_name(err),
                           log ? log : "(no log)");
    free(log);
    return st;
}

static cl_program build_from_binary(db_device *dev, const unsigned char *bin, size_t size)
{
    cl_int err, status;
    cl_program prog = clCreateProgramWithBinary(dev->context, 1, &dev->info.id, &size, &bin, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS)
        return NULL;
    if (clBuildProgram(prog, 1, &dev->info.id, build_options, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

db_status db_program_get(db_device *dev, const char *source, struct db_program **out)
{
    for (struct db_program *p = dev->programs; p; p = p->next)
        if (!strcmp(p->source, source)) {
            *out = p;
            return DB_OK;
        }
    char *text = load_source(source);
    if (!text)
        return db_error_status();
    struct db_program *p = calloc(1, sizeof *p);
    if (!p) {
        free(text);
        return db_fail(DB_ERR_NOMEM, "out of memory building cl/%s", source);
    }
    snprintf(p->source, sizeof p->source, "%s", source);
    char key[65];
    cache_key(dev, text, key);
    {
        db_sha256 h;
        uint8_t digest[32];
        db_sha256_init(&h);
        db_sha256_update(&h, text, strlen(text) + 1);
        db_sha256_update(&h, build_options, sizeof build_options);
        db_sha256_final(&h, digest);
        db_sha256_hex(digest, p->hash);
    }

    const char *dir = db_cache_dir();
    char path[4200] = "";
    if (dir) {
        snprintf(path, sizeof path, "%s/%s.clbin", dir, key);
        size_t size;
        unsigned char *bin = cache_load(path, key, &size);
        if (bin) {
            p->program = build_from_binary(dev, bin, size);
            free(bin);
        }
    }
    if (!p->program) {
        cl_int err;
        const char *src = text;
        cl_program prog = clCreateProgramWithSource(dev->context, 1, &src, NULL, &err);
        if (err != CL_SUCCESS) {
            free(text);
            free(p);
            return db_cl_check(err, "clCreateProgramWithSource", dev);
        }
        err = clBuildProgram(prog, 1, &dev->info.id, build_options, NULL, NULL);
        if (err != CL_SUCCESS) {
            db_status st = build_log_error(dev, prog, source, err);
            clReleaseProgram(prog);
            free(text);
            free(p);
            return st;
        }
        p->program = prog;
        size_t size = 0;
        if (dir && clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) == CL_SUCCESS &&
            size > 0) {
            unsigned char *bin = malloc(size);
            if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS)
                cache_store(path, key, bin, size);
            free(bin);
        }
    }
    free(text);
    p->next = dev->programs;
    dev->programs = p;
    *out = p;
    return DB_OK;
}

cl_kernel db_kernel_get(db_device *dev, const char *source, const char *kernel)
{
    struct db_program *p;
    if (db_program_get(dev, source, &p) != DB_OK)
        return NULL;
    for (int i = 0; i < p->n_kernels; i++)
        if (!strcmp(p->kernels[i].name, kernel))
            return p->kernels[i].kernel;
    if (p->n_kernels == (int)(sizeof p->kernels / sizeof p->kernels[0])) {
        db_fail(DB_ERR_CL, "too many kernels in cl/%s", source);
        return NULL;
    }
    cl_int err;
    cl_kernel k = clCreateKernel(p->program, kernel, &err);
    if (err != CL_SUCCESS) {
        db_fail(DB_ERR_CL, "kernel %s in cl/%s on %s device '%s': %s", kernel, source,
                db_role_name(dev->role), dev->info.name, db_cl_error_name(err));
        return NULL;
    }
    snprintf(p->kernels[p->n_kernels].name, sizeof p->kernels[0].name, "%s", kernel);
    p->kernels[p->n_kernels++].kernel = k;
    return k;
}

void db_program_release_all(db_device *dev)
{
    struct db_program *p = dev->programs;
    while (p) {
        struct db_program *next = p->next;
        for (int i = 0; i < p->n_kernels; i++)
            clReleaseKernel(p->kernels[i].kernel);
        clReleaseProgram(p->program);
        free(p);
        p = next;
    }
    dev->programs = NULL;
}
