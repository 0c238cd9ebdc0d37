/*
** lzw_device.c — LZW strips decoded on the bound GPU (cl/lzw.cl).
**
** Each call takes a worker (a queue, the kernels and buffers of its own, kept
** for the next call), so that codec threads decode at once without sharing
** kernel arguments. The host lays out the strip and segment tables; the
** kernels find the segments, their lengths and places, and decode them.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/lzw_device.h"
#include "runtime/program.h"
#include "runtime/util.h"

/* cl/lzw.cl's tables and constants. */
enum { STRIP_IN, STRIP_BITS, STRIP_OUT, STRIP_WANT, STRIP_SEG, STRIP_CODE, STRIP_COUNT, STRIP_OK, STRIP_FIELDS };
enum { SEG_STRIP, SEG_FIELDS = 8 };
enum { LZW_LAST = 3838 };

enum { K_SEGMENTS, K_LENGTHS, K_PLACE, K_DECODE, K_UNDIFF, KERNELS };
static const char *const kernel_names[KERNELS] = {
    [K_SEGMENTS] = "lzw_segments", [K_LENGTHS] = "lzw_lengths", [K_PLACE] = "lzw_place",
    [K_DECODE] = "lzw_decode", [K_UNDIFF] = "lzw_undiff",
};
enum { BUF_IN, BUF_STRIPS, BUF_SEGS, BUF_CODES, BUF_OUT, BUFFERS };

enum {
    SEARCH_ITEMS = 128, /* a strip's work-group in lzw_segments */
    WALK_ITEMS = 4,     /* segments a work-group in lzw_lengths: each LZW_LAST lengths of local memory */
    DECODE_ITEMS = 4,   /* segments a work-group in lzw_decode, each with DECODE_ROOM bytes of local memory */
    DECODE_ROOM = 8192,
    ITEMS = 64,         /* work-group of the kernels with a work-item a strip, segment or row */
    SEG_BYTES = 64      /* a strip gets a segment slot for every SEG_BYTES of its bytes (and 4) */
};

typedef struct worker {
    struct worker *next;
    cl_command_queue queue;
    cl_kernel kernel[KERNELS];
    cl_mem mem[BUFFERS];
    size_t size[BUFFERS];
} worker;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t idle; /* busy fell to 0 */
    db_device *dev;
    cl_program program;
    size_t search_items, walk_items;
    cl_uint decode_room; /* local bytes a segment in lzw_decode: 0 on a device without them */
    worker *free;
    int busy;
} bound = {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

static void worker_free(worker *w)
{
    for (int i = 0; i < BUFFERS; i++)
        if (w->mem[i])
            clReleaseMemObject(w->mem[i]);
    for (int k = 0; k < KERNELS; k++)
        if (w->kernel[k])
            clReleaseKernel(w->kernel[k]);
    if (w->queue)
        clReleaseCommandQueue(w->queue);
    free(w);
}

db_status db_lzw_device_bind(db_device *dev)
{
    const char *env = getenv("DOCBIN_LZW");
    bool forced = env && !strcmp(env, "device");
    if (env && env[0] && !forced && strcmp(env, "host"))
        return db_fail(DB_ERR_USAGE, "DOCBIN_LZW='%s' is not an LZW decoding choice: set it to 'device' (decode "
                       "LZW strips on the GPU) or 'host', or leave it unset (the GPU when it is one)", env);
    if (!dev || (env && !strcmp(env, "host")) || (dev->info.host_unified && !forced))
        return DB_OK;
    pthread_mutex_lock(&bound.lock);
    db_status st = DB_OK;
    struct db_program *p;
    size_t fit = dev->local_mem / (LZW_LAST * sizeof(cl_ushort));
    if (!bound.dev && fit > 0 && (st = db_program_get(dev, "lzw.cl", &p)) == DB_OK) {
        bound.dev = dev;
        bound.program = p->program;
        bound.search_items = dev->max_group < SEARCH_ITEMS ? dev->max_group : SEARCH_ITEMS;
        bound.walk_items = fit < WALK_ITEMS ? fit : WALK_ITEMS;
        bound.decode_room = dev->local_mem >= DECODE_ITEMS * DECODE_ROOM + 1024 ? DECODE_ROOM : 0;
        __atomic_store_n(&db_lzw_offload, db_lzw_device_decode, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&bound.lock);
    return st;
}

void db_lzw_device_unbind(db_device *dev)
{
    pthread_mutex_lock(&bound.lock);
    if (dev && bound.dev == dev) {
        bound.dev = NULL; /* no call starts now */
        __atomic_store_n(&db_lzw_offload, NULL, __ATOMIC_RELEASE);
        while (bound.busy)
            pthread_cond_wait(&bound.idle, &bound.lock);
        while (bound.free) {
            worker *w = bound.free;
            bound.free = w->next;
            worker_free(w);
        }
        bound.program = NULL;
    }
    pthread_mutex_unlock(&bound.lock);
}

/* A free worker, or a new one; NULL when no device is bound or it cannot be made. */
static worker *take(db_device **dev)
{
    pthread_mutex_lock(&bound.lock);
    worker *w = NULL;
    *dev = bound.dev;
    if (bound.dev) {
        if (bound.free) {
            w = bound.free;
            bound.free = w->next;
        } else if ((w = calloc(1, sizeof *w))) {
            cl_int err;
            w->queue = clCreateCommandQueue(bound.dev->context, bound.dev->info.id, 0, &err);
            for (int k = 0; k < KERNELS && err == CL_SUCCESS; k++)
                w->kernel[k] = clCreateKernel(bound.program, kernel_names[k], &err);
            if (err != CL_SUCCESS) {
                worker_free(w);
                w = NULL;
            }
        }
        bound.busy += w != NULL;
    }
    pthread_mutex_unlock(&bound.lock);
    return w;
}

static void give(worker *w)
{
    pthread_mutex_lock(&bound.lock);
    w->next = bound.free;
    bound.free = w;
    if (--bound.busy == 0)
        pthread_cond_broadcast(&bound.idle);
    pthread_mutex_unlock(&bound.lock);
}

/* Buffer `i` of at least `bytes` bytes (grown in steps of an eighth). */
static cl_int reserve(worker *w, db_device *dev, int i, size_t bytes)
{
    if (w->size[i] >= bytes)
        return CL_SUCCESS;
    if (w->mem[i])
        clReleaseMemObject(w->mem[i]);
    w->size[i] = 0;
    bytes += bytes / 8;
    cl_int err;
    w->mem[i] = clCreateBuffer(dev->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS)
        w->size[i] = bytes;
    else
        w->mem[i] = NULL;
    return err;
}

static cl_int run(worker *w, int k, size_t global, size_t local, int n, const size_t *sizes, const void *const *args)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n; i++)
        err |= clSetKernelArg(w->kernel[k], (cl_uint)i, sizes[i], args[i]);
    global = db_round_up(global, local);
    return err != CL_SUCCESS ? err : clEnqueueNDRangeKernel(w->queue, w->kernel[k], 1, NULL, &global, &local, 0, NULL, NULL);
}

bool db_lzw_device_decode(const db_lzw_strips *js, uint8_t *out, bool *decoded)
{
    int count = js->count;
    for (int s = 0; s < count; s++)
        decoded[s] = false;
    /* Bit positions and offsets are 32-bit on the device. */
    const size_t limit = (size_t)1 << 31;
    if (count <= 0 || js->in_bytes >= limit / 8 || js->out_bytes >= limit)
        return false;
    cl_uint *strips = calloc((size_t)count + 1, STRIP_FIELDS * sizeof *strips);
    if (!strips)
        return false;
    size_t n_segs = 0, n_codes = 0;
    for (int s = 0; s <= count; s++) {
        cl_uint *st = strips + (size_t)s * STRIP_FIELDS;
        st[STRIP_SEG] = (cl_uint)n_segs;
        st[STRIP_CODE] = (cl_uint)n_codes;
        if (s == count)
            break;
        size_t cap = 4 + js->n[s] / SEG_BYTES;
        st[STRIP_IN] = (cl_uint)js->in_off[s];
        st[STRIP_BITS] = (cl_uint)(js->n[s] * 8);
        st[STRIP_OUT] = (cl_uint)js->out_off[s];
        st[STRIP_WANT] = (cl_uint)js->want[s];
        n_segs += cap;
        n_codes += js->n[s] * 8 / 9 + cap;
    }
    cl_uint *segs = n_codes < limit / sizeof(cl_uint) ? calloc(n_segs, SEG_FIELDS * sizeof *segs) : NULL;
    db_device *dev;
    worker *w = segs ? take(&dev) : NULL;
    if (!w) {
        free(segs);
        free(strips);
        return false;
    }
    for (int s = 0; s < count; s++)
        for (cl_uint i = strips[(size_t)s * STRIP_FIELDS + STRIP_SEG]; i < strips[(size_t)(s + 1) * STRIP_FIELDS + STRIP_SEG]; i++)
            segs[(size_t)i * SEG_FIELDS + SEG_STRIP] = (cl_uint)s;

    size_t strips_bytes = ((size_t)count + 1) * STRIP_FIELDS * sizeof *strips;
    size_t need[BUFFERS] = {
        [BUF_IN] = js->in_bytes, [BUF_STRIPS] = strips_bytes, [BUF_SEGS] = n_segs * SEG_FIELDS * sizeof *segs,
        [BUF_CODES] = n_codes * sizeof(cl_uint), [BUF_OUT] = js->out_bytes,
    };
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < BUFFERS && err == CL_SUCCESS; i++)
        err = reserve(w, dev, i, need[i]);
    cl_mem *m = w->mem;
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(w->queue, m[BUF_IN], CL_FALSE, 0, js->in_bytes, js->in, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(w->queue, m[BUF_STRIPS], CL_FALSE, 0, strips_bytes, strips, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(w->queue, m[BUF_SEGS], CL_FALSE, 0, need[BUF_SEGS], segs, 0, NULL, NULL);
    cl_uint ns = (cl_uint)n_segs, nst = (cl_uint)count;
    if (err == CL_SUCCESS) {
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
        const void *args[] = {&m[BUF_IN], &m[BUF_STRIPS], &m[BUF_SEGS]};
        err = run(w, K_SEGMENTS, (size_t)count * bound.search_items, bound.search_items, 3, sizes, args);
    }
    if (err == CL_SUCCESS) {
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof ns, sizeof(cl_mem),
                                bound.walk_items * LZW_LAST * sizeof(cl_ushort)};
        const void *args[] = {&m[BUF_IN], &m[BUF_STRIPS], &m[BUF_SEGS], &ns, &m[BUF_CODES], NULL};
        err = run(w, K_LENGTHS, n_segs, bound.walk_items, 6, sizes, args);
    }
    if (err == CL_SUCCESS) {
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof nst};
        const void *args[] = {&m[BUF_STRIPS], &m[BUF_SEGS], &nst};
        err = run(w, K_PLACE, (size_t)count, ITEMS, 3, sizes, args);
    }
    if (err == CL_SUCCESS) {
        cl_uint room = bound.decode_room;
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof ns, sizeof(cl_mem),
                                sizeof(cl_mem), DECODE_ITEMS * (size_t)(room ? room : 1), sizeof room};
        const void *args[] = {&m[BUF_IN], &m[BUF_STRIPS], &m[BUF_SEGS], &ns, &m[BUF_CODES], &m[BUF_OUT], NULL, &room};
        err = run(w, K_DECODE, n_segs, DECODE_ITEMS, 8, sizes, args);
    }
    if (err == CL_SUCCESS && js->row_bytes) {
        cl_uint rows = (cl_uint)(js->out_bytes / js->row_bytes), row_bytes = (cl_uint)js->row_bytes,
                stride = (cl_uint)js->stride;
        const size_t sizes[] = {sizeof(cl_mem), sizeof rows, sizeof row_bytes, sizeof stride};
        const void *args[] = {&m[BUF_OUT], &rows, &row_bytes, &stride};
        err = run(w, K_UNDIFF, rows, ITEMS, 4, sizes, args);
    }
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(w->queue, m[BUF_OUT], CL_FALSE, 0, js->out_bytes, out, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(w->queue, m[BUF_STRIPS], CL_TRUE, 0, strips_bytes, strips, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        for (int s = 0; s < count; s++)
            decoded[s] = strips[(size_t)s * STRIP_FIELDS + STRIP_OK] != 0;
    else
        clFinish(w->queue);
    give(w);
    free(segs);
    free(strips);
    return err == CL_SUCCESS;
}
