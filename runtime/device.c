/*
** device.c — OpenCL discovery, role binding and per-role contexts and queues.
*/
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/sha256.h"
#include "runtime/util.h"

const char *db_role_name(db_role role)
{
    return role == DB_ROLE_CPU ? "cpu" : role == DB_ROLE_GPU ? "gpu" : "?";
}

db_status db_cl_check(cl_int err, const char *what, const db_device *dev)
{
    if (err == CL_SUCCESS)
        return DB_OK;
    if (dev)
        return db_fail(DB_ERR_CL, "%s failed with %s on %s device '%s'", what,
                       db_cl_error_name(err), db_role_name(dev->role), dev->info.name);
    return db_fail(DB_ERR_CL, "%s failed with %s", what, db_cl_error_name(err));
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] && isspace((unsigned char)s[i]))
        i++;
    memmove(s, s + i, strlen(s + i) + 1);
}

static void fill_info(db_device_info *d)
{
    clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof d->platform_name, d->platform_name, NULL);
    clGetPlatformInfo(d->platform, CL_PLATFORM_VERSION, sizeof d->platform_version,
                      d->platform_version, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof d->name, d->name, NULL);
    clGetDeviceInfo(d->id, CL_DRIVER_VERSION, sizeof d->driver_version, d->driver_version, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL);
    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(d->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    d->has_fp64 = fp64 != 0;
    d->host_unified = (d->type & CL_DEVICE_TYPE_CPU) != 0;
    trim(d->platform_name);
    trim(d->name);
    trim(d->driver_version);

    db_sha256 h;
    uint8_t digest[32];
    char hex[65];
    db_sha256_init(&h);
    db_sha256_update(&h, d->platform_name, strlen(d->platform_name) + 1);
    db_sha256_update(&h, d->name, strlen(d->name) + 1);
    db_sha256_update(&h, d->driver_version, strlen(d->driver_version) + 1);
    db_sha256_final(&h, digest);
    db_sha256_hex(digest, hex);
    memcpy(d->key, hex, 16);
    d->key[16] = '\0';
}

static db_status discover(db_context *ctx)
{
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no driver */ || np == 0) {
        ctx->n_devices = 0;
        return DB_OK;
    }
    if (err != CL_SUCCESS)
        return db_cl_check(err, "clGetPlatformIDs", NULL);
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return db_fail(DB_ERR_NOMEM, "out of memory listing OpenCL platforms");
    clGetPlatformIDs(np, plats, NULL);
    int total = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS)
            total += (int)nd;
    }
    ctx->devices = calloc(total > 0 ? (size_t)total : 1, sizeof *ctx->devices);
    if (!ctx->devices) {
        free(plats);
        return db_fail(DB_ERR_NOMEM, "out of memory listing OpenCL devices");
    }
    int k = 0;
    for (cl_uint p = 0; p < np && k < total; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *ids = calloc(nd, sizeof *ids);
        if (!ids)
            break;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        for (cl_uint d = 0; d < nd && k < total; d++) {
            db_device_info *info = &ctx->devices[k++];
            info->platform_index = (int)p;
            info->device_index = (int)d;
            info->platform = plats[p];
            info->id = ids[d];
            fill_info(info);
        }
        free(ids);
    }
    ctx->n_devices = k;
    free(plats);
    return DB_OK;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    return needle[0] == '\0' || strcasestr(hay, needle) != NULL;
}

static bool type_matches(cl_device_type type, const char *word)
{
    if (word[0] == '\0')
        return true;
    if (!strcasecmp(word, "cpu"))
        return (type & CL_DEVICE_TYPE_CPU) != 0;
    if (!strcasecmp(word, "gpu"))
        return (type & CL_DEVICE_TYPE_GPU) != 0;
    if (!strcasecmp(word, "accelerator") || !strcasecmp(word, "acc"))
        return (type & CL_DEVICE_TYPE_ACCELERATOR) != 0;
    return false;
}

/* Parses "P:D" with both parts decimal integers that fit an int: 4294967296:0 is
** no index, and then matches no device, rather than wrapping to 0:0. */
static bool parse_indices(const char *spec, int *p, int *d)
{
    const char *colon = strchr(spec, ':');
    char first[32];
    long long a, b;
    if (!colon || (size_t)(colon - spec) >= sizeof first)
        return false;
    memcpy(first, spec, (size_t)(colon - spec));
    first[colon - spec] = '\0';
    if (!db_parse_int(first, 0, INT_MAX, &a) || !db_parse_int(colon + 1, 0, INT_MAX, &b))
        return false;
    *p = (int)a;
    *d = (int)b;
    return true;
}

static bool spec_matches(const db_device_info *d, const char *spec)
{
    const char *c1 = strchr(spec, ':');
    if (!c1)
        return contains_nocase(d->platform_name, spec) || contains_nocase(d->name, spec);
    char plat[256] = "", type[64] = "", name[256] = "";
    const char *c2 = strchr(c1 + 1, ':');
    snprintf(plat, sizeof plat, "%.*s", (int)(c1 - spec), spec);
    if (c2) {
        snprintf(type, sizeof type, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
        snprintf(name, sizeof name, "%s", c2 + 1);
    } else {
        snprintf(type, sizeof type, "%s", c1 + 1);
    }
    return contains_nocase(d->platform_name, plat) && type_matches(d->type, type) &&
           contains_nocase(d->name, name);
}

db_status db_device_match(const db_context *ctx, const char *spec, int *index)
{
    int p, d;
    if (parse_indices(spec, &p, &d)) {
        for (int i = 0; i < ctx->n_devices; i++)
            if (ctx->devices[i].platform_index == p && ctx->devices[i].device_index == d) {
                *index = i;
                return DB_OK;
            }
        return db_fail(DB_ERR_DEVICE,
                       "device '%s' does not exist (%d OpenCL devices); "
                       "see docbin-run --list-devices for the P:D indices",
                       spec, ctx->n_devices);
    }
    int found = -1, count = 0;
    char names[1024] = "";
    for (int i = 0; i < ctx->n_devices; i++) {
        if (!spec_matches(&ctx->devices[i], spec))
            continue;
        if (count++ == 0)
            found = i;
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%d:%d %s", len ? ", " : "",
                 ctx->devices[i].platform_index, ctx->devices[i].device_index,
                 ctx->devices[i].name);
    }
    if (count == 0)
        return db_fail(DB_ERR_DEVICE,
                       "no OpenCL device matches '%s'; see docbin-run --list-devices "
                       "and give P:D, platform:type:name or a word of a platform or device name",
                       spec);
    if (count > 1)
        return db_fail(DB_ERR_DEVICE,
                       "'%s' matches %d devices (%s); give one with P:D or a longer pattern",
                       spec, count, names);
    *index = found;
    return DB_OK;
}

static db_status bind_device(db_context *ctx, db_role role, int index)
{
    db_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return db_fail(DB_ERR_NOMEM, "out of memory binding the %s role", db_role_name(role));
    dev->info = ctx->devices[index];
    dev->role = role;
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->info.platform, 0};
    dev->context = clCreateContext(props, 1, &dev->info.id, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        db_status st = db_cl_check(err, "clCreateContext", dev);
        free(dev);
        return st;
    }
    dev->compute = clCreateCommandQueue(dev->context, dev->info.id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err == CL_SUCCESS)
        dev->transfer = clCreateCommandQueue(dev->context, dev->info.id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
        db_status st = db_cl_check(err, "clCreateCommandQueue", dev);
        if (dev->compute)
            clReleaseCommandQueue(dev->compute);
        clReleaseContext(dev->context);
        free(dev);
        return st;
    }
    if (!dev->info.host_unified)
        db_host_pool_pin(dev->transfer);
    cl_uint align_bits = 1024;
    clGetDeviceInfo(dev->info.id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    dev->mem_align = align_bits / 8 < 64 ? 64 : align_bits / 8;
    clGetDeviceInfo(dev->info.id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dev->max_group, &dev->max_group, NULL);
    clGetDeviceInfo(dev->info.id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof dev->local_mem, &dev->local_mem, NULL);
    ctx->role[role] = dev;
    return DB_OK;
}

static void release_device(db_device *dev)
{
    if (!dev)
        return;
    db_program_release_all(dev);
    db_device_pool_drain(dev);
    clReleaseCommandQueue(dev->transfer);
    clReleaseCommandQueue(dev->compute);
    clReleaseContext(dev->context);
    free(dev);
}

static int default_device(const db_context *ctx, db_role role)
{
    int best = -1;
    for (int i = 0; i < ctx->n_devices; i++) {
        const db_device_info *d = &ctx->devices[i];
        if (role == DB_ROLE_CPU && (d->type & CL_DEVICE_TYPE_CPU))
            return i;
        if (role == DB_ROLE_GPU && (d->type & CL_DEVICE_TYPE_GPU) &&
            (best < 0 || d->compute_units > ctx->devices[best].compute_units))
            best = i;
    }
    return best;
}

db_status db_device_list(db_device_info **devices, int *n)
{
    db_context probe = {0};
    db_status st = discover(&probe);
    *devices = probe.devices;
    *n = st == DB_OK ? probe.n_devices : 0;
    return st;
}

db_status db_context_open(const char *cpu_spec, const char *gpu_spec, db_context **out)
{
    *out = NULL;
    db_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return db_fail(DB_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_mutex_init(&ctx->bind_lock, NULL);
    db_host_pool_open();
    ctx->pooled = true;
    db_status st = discover(ctx);
    if (st != DB_OK) {
        db_context_close(ctx);
        return st;
    }
    const char *specs[DB_ROLE_COUNT] = {cpu_spec, gpu_spec};
    const char *envs[DB_ROLE_COUNT] = {"DOCBIN_CPU_DEVICE", "DOCBIN_GPU_DEVICE"};
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        const char *spec = specs[r];
        const char *source = r == DB_ROLE_CPU ? "--cpu-device" : "--gpu-device";
        if (!spec || !spec[0]) {
            spec = getenv(envs[r]);
            source = envs[r];
        }
        int index = -1;
        if (spec && spec[0]) {
            if (db_device_match(ctx, spec, &index) != DB_OK) {
                st = db_fail(DB_ERR_DEVICE, "%s=%s: %s", source, spec, db_error_message());
                db_context_close(ctx);
                return st;
            }
        } else {
            index = default_device(ctx, (db_role)r);
            if (index < 0) {
                snprintf(ctx->unbound_reason[r], sizeof ctx->unbound_reason[r],
                         r == DB_ROLE_CPU
                             ? "no OpenCL CPU device found; install PoCL (Debian: pocl-opencl-icd) "
                               "or bind the cpu role with --cpu-device / DOCBIN_CPU_DEVICE"
                             : "no OpenCL GPU device found; bind the gpu role to another device with "
                               "--gpu-device or DOCBIN_GPU_DEVICE (e.g. DOCBIN_GPU_DEVICE=portable "
                               "runs the GPU kernels on PoCL), or use --map cpu");
                continue;
            }
        }
        const db_device_info *d = &ctx->devices[index];
        if (!d->has_fp64) {
            st = db_fail(DB_ERR_DEVICE, "device '%s' has no double precision (cl_khr_fp64), which docbin needs for "
                         "bit-identical thresholds; bind the %s role to another device with --%s-device", d->name,
                         db_role_name((db_role)r), db_role_name((db_role)r));
            db_context_close(ctx);
            return st;
        }
        ctx->chosen[r] = d;
    }
    *out = ctx;
    return DB_OK;
}

void db_context_close(db_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->pooled)
        db_host_pool_close();
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        release_device(ctx->role[r]);
    free(ctx->devices);
    pthread_mutex_destroy(&ctx->lock);
    pthread_mutex_destroy(&ctx->bind_lock);
    free(ctx);
}

db_device *db_context_device(db_context *ctx, db_role role)
{
    pthread_mutex_lock(&ctx->bind_lock);
    if (!ctx->role[role] && ctx->chosen[role])
        bind_device(ctx, role, (int)(ctx->chosen[role] - ctx->devices));
    db_device *dev = ctx->role[role];
    pthread_mutex_unlock(&ctx->bind_lock);
    if (dev || ctx->chosen[role]) /* bound, or binding failed with its own message */
        return dev;
    db_fail(DB_ERR_DEVICE, "the %s role has no device: %s", db_role_name(role),
            ctx->unbound_reason[role][0] ? ctx->unbound_reason[role] : "bind one");
    return NULL;
}

const char *db_device_type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return "gpu";
    if (t & CL_DEVICE_TYPE_CPU)
        return "cpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

void db_context_print_devices(const db_context *ctx, FILE *f)
{
    if (ctx->n_devices == 0) {
        fprintf(f, "no OpenCL platforms found; install an OpenCL driver "
                   "(Debian: pocl-opencl-icd for the CPU)\n");
    }
    int last_platform = -1;
    for (int i = 0; i < ctx->n_devices; i++) {
        const db_device_info *d = &ctx->devices[i];
        if (d->platform_index != last_platform) {
            fprintf(f, "Platform #%d: %s\n", d->platform_index, d->platform_name);
            last_platform = d->platform_index;
        }
        char roles[32] = "";
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            if (ctx->chosen[r] == d) {
                size_t len = strlen(roles);
                snprintf(roles + len, sizeof roles - len, "%s%s", len ? "," : "", db_role_name((db_role)r));
            }
        fprintf(f, " `-- Device #%d: %s\n", d->device_index, d->name);
        fprintf(f, "     %d:%d  role: %-7s  type: %s  compute units: %u  memory: %.1f GiB  "
                   "fp64: %s  key: %s  driver: %s\n",
                d->platform_index, d->device_index, roles[0] ? roles : "-", db_device_type_name(d->type),
                d->compute_units, (double)d->global_mem / (1024.0 * 1024.0 * 1024.0),
                d->has_fp64 ? "yes" : "no", d->key, d->driver_version);
    }
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (!ctx->chosen[r])
            fprintf(f, "role %s: unbound (%s)\n", db_role_name((db_role)r), ctx->unbound_reason[r]);
}
