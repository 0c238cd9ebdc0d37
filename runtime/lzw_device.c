/*
** lzw_device.c — LZW strips decoded on the bound GPU (cl/lzw.cl).
**
** A page's segments are too few to fill a GPU, and its kernels would run one
** page after another whatever queue each thread used. So calls commit as a
** group: a thread whose page arrives while a run is under way waits, and the
** first to find the device free runs every page waiting then, up to a limit,
** in one set of launches; the others take their results. The host lays out
** the strip and segment tables; the kernels find the segments, their lengths
** and places, and decode them.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/lzw_device.h"
#include "runtime/program.h"
#include "runtime/util.h"

/* cl/lzw.cl's tables. */
enum { STRIP_IN, STRIP_BITS, STRIP_OUT, STRIP_WANT, STRIP_SEG, STRIP_CODE, STRIP_COUNT, STRIP_OK, STRIP_FIELDS };
enum { SEG_FIELDS = 8 };

enum { K_SEGMENTS, K_LENGTHS, K_PLACE, K_DECODE, K_UNDIFF, KERNELS };
static const char *const kernel_names[KERNELS] = {
    [K_SEGMENTS] = "lzw_segments", [K_LENGTHS] = "lzw_lengths", [K_PLACE] = "lzw_place",
    [K_DECODE] = "lzw_decode", [K_UNDIFF] = "lzw_undiff",
};
enum { BUF_IN, BUF_STRIPS, BUF_SEGS, BUF_CODES, BUF_OUT, BUFFERS };

enum {
    SEARCH_ITEMS = 128, /* a strip's work-group in lzw_segments */
    ITEMS = 64,         /* work-group of the kernels with a work-item a strip, segment or row */
    SEG_BYTES = 512,    /* a strip gets a segment slot for every SEG_BYTES of its bytes (and 4) */
    GROUP_PAGES = 16    /* pages a run at most */
};
/* Bytes a run at most, in and out: bit positions and offsets are 32-bit on the device. */
#define GROUP_IN ((size_t)192 << 20)
#define GROUP_OUT ((size_t)1 << 30)

/* A page waiting for a run, or in one. */
typedef struct request {
    struct request *next;
    const db_lzw_strips *strips;
    uint8_t *out;
    bool *decoded;
    bool done, ok;
} request;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* a run ended, or the callers fell to 0 */
    db_device *dev;
    bool closing;            /* unbinding: no call starts */
    cl_program program;
    size_t search_items;
    cl_command_queue queue;  /* the runs' queue and kernels, made by the first run */
    cl_kernel kernel[KERNELS];
    cl_mem mem[BUFFERS];
    size_t size[BUFFERS];
    request *waiting, *waiting_tail;
    bool running;
    int callers;             /* threads in db_lzw_device_decode */
} bound = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

/* Releases the queue, kernels and buffers; the lock is held. */
static void release_run_state(void)
{
    for (int i = 0; i < BUFFERS; i++) {
        if (bound.mem[i])
            clReleaseMemObject(bound.mem[i]);
        bound.mem[i] = NULL;
        bound.size[i] = 0;
    }
    for (int k = 0; k < KERNELS; k++) {
        if (bound.kernel[k])
            clReleaseKernel(bound.kernel[k]);
        bound.kernel[k] = NULL;
    }
    if (bound.queue)
        clReleaseCommandQueue(bound.queue);
    bound.queue = NULL;
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
    if (!bound.dev && (st = db_program_get(dev, "lzw.cl", &p)) == DB_OK) {
        bound.dev = dev;
        bound.closing = false;
        bound.program = p->program;
        bound.search_items = dev->max_group < SEARCH_ITEMS ? dev->max_group : SEARCH_ITEMS;
        __atomic_store_n(&db_lzw_offload, db_lzw_device_decode, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&bound.lock);
    return st;
}

void db_lzw_device_unbind(db_device *dev)
{
    pthread_mutex_lock(&bound.lock);
    if (dev && bound.dev == dev) {
        bound.closing = true; /* no call starts now */
        __atomic_store_n(&db_lzw_offload, NULL, __ATOMIC_RELEASE);
        while (bound.callers)
            pthread_cond_wait(&bound.changed, &bound.lock);
        release_run_state();
        bound.dev = NULL;
        bound.program = NULL;
    }
    pthread_mutex_unlock(&bound.lock);
}

/* Buffer `i` of at least `bytes` bytes (grown by an eighth more). */
static cl_int reserve(int i, size_t bytes)
{
    if (bound.size[i] >= bytes)
        return CL_SUCCESS;
    if (bound.mem[i])
        clReleaseMemObject(bound.mem[i]);
    bound.size[i] = 0;
    bytes += bytes / 8;
    cl_int err;
    bound.mem[i] = clCreateBuffer(bound.dev->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS)
        bound.size[i] = bytes;
    else
        bound.mem[i] = NULL;
    return err;
}

static cl_int launch(int k, size_t global, size_t local, int n, const size_t *sizes, const void *const *args)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n; i++)
        err |= clSetKernelArg(bound.kernel[k], (cl_uint)i, sizes[i], args[i]);
    global = db_round_up(global, local);
    return err != CL_SUCCESS ? err
                             : clEnqueueNDRangeKernel(bound.queue, bound.kernel[k], 1, NULL, &global, &local, 0, NULL, NULL);
}

/* Decodes the pages of `group` in one run (only the running thread gets
** here, without the lock): each request's `ok` and `decoded`. */
static void run_group(request *group)
{
    int count = 0, pages = 0;
    for (request *r = group; r; r = r->next, pages++)
        count += r->strips->count;
    cl_uint *strips = calloc((size_t)count + 1, STRIP_FIELDS * sizeof *strips);
    size_t *page_in = calloc((size_t)pages, 2 * sizeof *page_in), *page_out = page_in + pages;
    size_t n_segs = 0, n_codes = 0, in_bytes = 0, out_bytes = 0;
    cl_int err = strips && page_in ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    int s = 0, pg = 0;
    for (request *r = group; r && err == CL_SUCCESS; r = r->next, pg++) {
        const db_lzw_strips *js = r->strips;
        page_in[pg] = in_bytes;
        page_out[pg] = out_bytes;
        for (int i = 0; i < js->count; i++, s++) {
            cl_uint *st = strips + (size_t)s * STRIP_FIELDS;
            size_t cap = 4 + js->n[i] / SEG_BYTES;
            st[STRIP_IN] = (cl_uint)(in_bytes + js->in_off[i]);
            st[STRIP_BITS] = (cl_uint)(js->n[i] * 8);
            st[STRIP_OUT] = (cl_uint)(out_bytes + js->out_off[i]);
            st[STRIP_WANT] = (cl_uint)js->want[i];
            st[STRIP_SEG] = (cl_uint)n_segs;
            st[STRIP_CODE] = (cl_uint)n_codes;
            n_segs += cap;
            n_codes += js->n[i] * 8 / 9 + cap;
        }
        in_bytes += db_round_up(js->in_bytes, 4);
        out_bytes += js->out_bytes;
    }
    if (err == CL_SUCCESS) {
        strips[(size_t)count * STRIP_FIELDS + STRIP_SEG] = (cl_uint)n_segs;
        if (n_codes >= ((size_t)1 << 32) / sizeof(cl_uint))
            err = CL_OUT_OF_HOST_MEMORY;
    }

    if (err == CL_SUCCESS && !bound.queue) {
        bound.queue = clCreateCommandQueue(bound.dev->context, bound.dev->info.id, 0, &err);
        for (int k = 0; k < KERNELS && err == CL_SUCCESS; k++)
            bound.kernel[k] = clCreateKernel(bound.program, kernel_names[k], &err);
    }
    size_t strips_bytes = ((size_t)count + 1) * STRIP_FIELDS * sizeof *strips;
    size_t need[BUFFERS] = {
        [BUF_IN] = in_bytes, [BUF_STRIPS] = strips_bytes, [BUF_SEGS] = n_segs * SEG_FIELDS * sizeof(cl_uint),
        [BUF_CODES] = n_codes * sizeof(cl_uint), [BUF_OUT] = out_bytes,
    };
    for (int i = 0; i < BUFFERS && err == CL_SUCCESS; i++)
        err = reserve(i, need[i]);
    cl_mem *m = bound.mem;
    cl_command_queue q = bound.queue;
    pg = 0;
    for (request *r = group; r && err == CL_SUCCESS; r = r->next, pg++)
        err = clEnqueueWriteBuffer(q, m[BUF_IN], CL_FALSE, page_in[pg], r->strips->in_bytes, r->strips->in, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(q, m[BUF_STRIPS], CL_FALSE, 0, strips_bytes, strips, 0, NULL, NULL);
    const cl_uint none = 0xffffffffu; /* the slots no strip uses */
    if (err == CL_SUCCESS)
        err = clEnqueueFillBuffer(q, m[BUF_SEGS], &none, sizeof none, 0, need[BUF_SEGS], 0, NULL, NULL);
    cl_uint ns = (cl_uint)n_segs, nst = (cl_uint)count;
    if (err == CL_SUCCESS) {
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
        const void *args[] = {&m[BUF_IN], &m[BUF_STRIPS], &m[BUF_SEGS]};
        err = launch(K_SEGMENTS, (size_t)count * bound.search_items, bound.search_items, 3, sizes, args);
    }
    if (err == CL_SUCCESS) {
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof ns, sizeof(cl_mem)};
        const void *args[] = {&m[BUF_IN], &m[BUF_STRIPS], &m[BUF_SEGS], &ns, &m[BUF_CODES]};
        err = launch(K_LENGTHS, n_segs, ITEMS, 5, sizes, args);
    }
    if (err == CL_SUCCESS) {
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof nst};
        const void *args[] = {&m[BUF_STRIPS], &m[BUF_SEGS], &nst};
        err = launch(K_PLACE, (size_t)count, ITEMS, 3, sizes, args);
    }
    if (err == CL_SUCCESS) {
        const size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof ns, sizeof(cl_mem),
                                sizeof(cl_mem)};
        const void *args[] = {&m[BUF_IN], &m[BUF_STRIPS], &m[BUF_SEGS], &ns, &m[BUF_CODES], &m[BUF_OUT]};
        err = launch(K_DECODE, n_segs, ITEMS, 6, sizes, args);
    }
    pg = 0;
    for (request *r = group; r && err == CL_SUCCESS; r = r->next, pg++) {
        const db_lzw_strips *js = r->strips;
        if (js->row_bytes) {
            cl_ulong first = page_out[pg];
            cl_uint rows = (cl_uint)(js->out_bytes / js->row_bytes), row_bytes = (cl_uint)js->row_bytes,
                    stride = (cl_uint)js->stride;
            const size_t sizes[] = {sizeof(cl_mem), sizeof first, sizeof rows, sizeof row_bytes, sizeof stride};
            const void *args[] = {&m[BUF_OUT], &first, &rows, &row_bytes, &stride};
            err = launch(K_UNDIFF, rows, ITEMS, 5, sizes, args);
        }
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(q, m[BUF_OUT], CL_FALSE, page_out[pg], js->out_bytes, r->out, 0, NULL, NULL);
    }
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(q, m[BUF_STRIPS], CL_TRUE, 0, strips_bytes, strips, 0, NULL, NULL);
    else if (q)
        clFinish(q);
    s = 0;
    for (request *r = group; r; r = r->next) {
        r->ok = err == CL_SUCCESS;
        for (int i = 0; i < r->strips->count; i++, s++)
            r->decoded[i] = r->ok && strips[(size_t)s * STRIP_FIELDS + STRIP_OK];
    }
    free(page_in);
    free(strips);
}

bool db_lzw_device_decode(const db_lzw_strips *strips, uint8_t *out, bool *decoded)
{
    for (int s = 0; s < strips->count; s++)
        decoded[s] = false;
    if (strips->count <= 0 || strips->in_bytes > GROUP_IN || strips->out_bytes > GROUP_OUT)
        return false;
    request me = {.strips = strips, .out = out, .decoded = decoded};
    pthread_mutex_lock(&bound.lock);
    if (!bound.dev || bound.closing) {
        pthread_mutex_unlock(&bound.lock);
        return false;
    }
    bound.callers++;
    if (bound.waiting_tail)
        bound.waiting_tail->next = &me;
    else
        bound.waiting = &me;
    bound.waiting_tail = &me;
    while (!me.done) {
        if (bound.running) {
            pthread_cond_wait(&bound.changed, &bound.lock);
            continue;
        }
        /* The pages waiting now, in order, within the limits of a run. */
        request *group = bound.waiting, *last = group;
        size_t in = db_round_up(last->strips->in_bytes, 4), out_bytes = last->strips->out_bytes;
        for (int pages = 1; last->next && pages < GROUP_PAGES; pages++) {
            const db_lzw_strips *nx = last->next->strips;
            if (in + db_round_up(nx->in_bytes, 4) > GROUP_IN || out_bytes + nx->out_bytes > GROUP_OUT)
                break;
            in += db_round_up(nx->in_bytes, 4);
            out_bytes += nx->out_bytes;
            last = last->next;
        }
        bound.waiting = last->next;
        if (!bound.waiting)
            bound.waiting_tail = NULL;
        last->next = NULL;
        bound.running = true;
        pthread_mutex_unlock(&bound.lock);
        run_group(group);
        pthread_mutex_lock(&bound.lock);
        for (request *r = group; r; r = r->next)
            r->done = true;
        bound.running = false;
        pthread_cond_broadcast(&bound.changed);
    }
    bound.callers--;
    if (!bound.callers)
        pthread_cond_broadcast(&bound.changed);
    pthread_mutex_unlock(&bound.lock);
    return me.ok;
}
