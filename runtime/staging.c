/*
** staging.c — host staging memory: one pool for the whole process.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include "runtime/staging.h"
#include "runtime/util.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Host staging memory is one pool for the whole process, so that a page
** decoded on any thread is a run's input as it lies, and a run's result is
** handed out as an image without a copy, whichever context ran it. It is
** pinned through the first context that binds a GPU which does not share host
** memory (page-locked memory is usable by every context of the process), else
** page-aligned ordinary memory. */
static struct {
    db_host_block *free;    /* ready for reuse, newest first */
    size_t free_bytes;
    size_t keep;            /* free blocks kept beyond this many bytes are released, oldest first */
    bool batch;             /* a batch runs: pinning is done on the side, not waited for */
    db_host_block *used;    /* taken by runs or as images' pixels */
    cl_command_queue queue; /* the pool's own, to map and unmap pinned blocks, or NULL */
    int contexts;           /* open contexts */
    size_t pending[64];     /* sizes of the blocks the pinning thread is to make */
    int n_pending;
    bool pinning;           /* the pinning thread runs */
} host = {.keep = DB_HOST_KEEP};
static pthread_cond_t pinned_cv = PTHREAD_COND_INITIALIZER; /* the pinning thread ended */

static void host_block_free(db_host_block *b, cl_command_queue queue)
{
    if (b->pinned) {
        cl_event ev;
        if (clEnqueueUnmapMemObject(queue, b->pinned, b->ptr, 0, NULL, &ev) == CL_SUCCESS) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        clReleaseMemObject(b->pinned);
    } else {
        free(b->ptr);
    }
    free(b);
}

/* With no context open and no block in use, pinning ends; the lock is held. */
static void host_idle(void)
{
    if (!host.contexts && !host.used && !host.free && host.queue) {
        clReleaseCommandQueue(host.queue);
        host.queue = NULL;
    }
}

/* The size a request is served at: eight classes to each doubling (at most
** an eighth more than asked, in whole pages), so that scans of slightly
** different sizes reuse each other's blocks instead of pinning new ones. */
static size_t size_class(size_t bytes)
{
    size_t step = 4096;
    while (step < bytes / 8)
        step *= 2;
    return db_round_up(bytes ? bytes : 1, step);
}

/* A new block, pinned through `queue` when there is one: made outside the
** pool's lock, since pinning takes the driver a while. */
static db_host_block *host_block_new(size_t bytes, cl_command_queue queue)
{
    db_host_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->bytes = bytes;
    cl_context context = NULL;
    cl_int err = queue ? clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, NULL)
                       : CL_INVALID_COMMAND_QUEUE;
    if (err == CL_SUCCESS)
        b->pinned = clCreateBuffer(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS) {
        b->ptr = clEnqueueMapBuffer(queue, b->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                                    NULL, &err);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(b->pinned);
            b->pinned = NULL;
        }
    }
    /* Pinned memory is an optimisation: ordinary memory gives the same results. */
    if (!b->pinned && posix_memalign(&b->ptr, 4096, bytes) != 0) {
        free(b);
        return NULL;
    }
    return b;
}

/* Adds `b` to the free blocks, releasing the oldest past the bound; the lock
** is held. */
static void host_keep(db_host_block *b)
{
    b->next = host.free;
    host.free = b;
    host.free_bytes += b->bytes;
    /* Past the bound, the oldest blocks go: page sizes change within a batch. */
    while (host.free_bytes > host.keep) {
        db_host_block **pp = &host.free;
        while ((*pp)->next)
            pp = &(*pp)->next;
        host.free_bytes -= (*pp)->bytes;
        host_block_free(*pp, host.queue);
        *pp = NULL;
    }
}

/* The pinning thread: makes the blocks takers found missing, one at a time,
** and leaves them among the free blocks for the next takers. */
static void *pinner(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool_lock);
    while (host.n_pending && host.contexts && host.queue) {
        size_t bytes = host.pending[--host.n_pending];
        cl_command_queue queue = host.queue;
        clRetainCommandQueue(queue);
        pthread_mutex_unlock(&pool_lock);
        db_host_block *b = host_block_new(bytes, queue);
        pthread_mutex_lock(&pool_lock);
        if (b && b->pinned && host.contexts)
            host_keep(b);
        else if (b)
            host_block_free(b, queue);
        clReleaseCommandQueue(queue);
    }
    host.n_pending = 0;
    host.pinning = false;
    pthread_cond_broadcast(&pinned_cv);
    pthread_mutex_unlock(&pool_lock);
    return NULL;
}

/* A taker found no free block of its size while the pool pins: the pinning
** thread makes one for a later taker; the lock is held. */
static void want_pinned(size_t bytes)
{
    if (host.n_pending == (int)(sizeof host.pending / sizeof host.pending[0]))
        return;
    host.pending[host.n_pending++] = bytes;
    if (!host.pinning) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        host.pinning = pthread_create(&t, &attr, pinner, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (!host.pinning)
            host.n_pending = 0;
    }
}

/* Pinning 8 MB takes a driver milliseconds, and the drivers pin one block at
** a time. A batch's pages live briefly and many at once: a taker that waited
** for pinning would stall decoding for a good part of the batch's first
** second, so there a taker with no free block of its size gets ordinary memory
** at once (released, not kept, when it comes back) and a pinned block is made
** on the side for a later one. Elsewhere blocks live long or come back for
** the next run (a page run many times, a context's items): they are pinned
** as they are taken. */
db_host_block *db_host_take(size_t bytes)
{
    bytes = size_class(bytes);
    pthread_mutex_lock(&pool_lock);
    db_host_block *b = NULL;
    for (db_host_block **pp = &host.free; *pp; pp = &(*pp)->next)
        if ((*pp)->bytes == bytes) {
            b = *pp;
            *pp = b->next;
            host.free_bytes -= bytes;
            break;
        }
    cl_command_queue queue = NULL;
    if (!b && host.queue && host.contexts && host.batch)
        want_pinned(bytes);
    else if (!b && host.queue)
        clRetainCommandQueue(queue = host.queue);
    pthread_mutex_unlock(&pool_lock);
    if (!b) {
        b = host_block_new(bytes, queue);
        if (queue)
            clReleaseCommandQueue(queue);
        if (!b)
            return NULL;
    }
    pthread_mutex_lock(&pool_lock);
    b->next = host.used;
    host.used = b;
    pthread_mutex_unlock(&pool_lock);
    return b;
}

/* Takes b out of the used list; the lock is held. */
static bool host_unuse(const void *ptr, db_host_block **out)
{
    for (db_host_block **pp = &host.used; *pp; pp = &(*pp)->next)
        if ((*pp)->ptr == ptr) {
            *out = *pp;
            *pp = (*pp)->next;
            return true;
        }
    return false;
}

bool db_host_give(const void *ptr)
{
    db_host_block *b = NULL;
    pthread_mutex_lock(&pool_lock);
    if (!host_unuse(ptr, &b)) {
        pthread_mutex_unlock(&pool_lock);
        return false;
    }
    /* A block is kept for reuse while a context is open, unless it is ordinary
    ** memory while the pool pins: pinned blocks take its place. */
    if (host.contexts && (b->pinned || !host.queue)) {
        host_keep(b);
        b = NULL;
    }
    if (b)
        host_block_free(b, host.queue);
    host_idle();
    pthread_mutex_unlock(&pool_lock);
    return true;
}

db_host_block *db_host_find(const void *ptr)
{
    pthread_mutex_lock(&pool_lock);
    db_host_block *b = host.used;
    while (b && b->ptr != ptr)
        b = b->next;
    pthread_mutex_unlock(&pool_lock);
    return b;
}

void db_host_pool_open(void)
{
    pthread_mutex_lock(&pool_lock);
    host.contexts++;
    pthread_mutex_unlock(&pool_lock);
}

void db_host_pool_pin(cl_command_queue transfer)
{
    pthread_mutex_lock(&pool_lock);
    /* A queue of the pool's own: a block mapped through the device's transfer
    ** queue would wait behind the uploads and downloads already queued there. */
    cl_context context;
    cl_device_id device;
    cl_int err;
    if (!host.queue &&
        clGetCommandQueueInfo(transfer, CL_QUEUE_CONTEXT, sizeof context, &context, NULL) == CL_SUCCESS &&
        clGetCommandQueueInfo(transfer, CL_QUEUE_DEVICE, sizeof device, &device, NULL) == CL_SUCCESS) {
        host.queue = clCreateCommandQueue(context, device, 0, &err);
        if (err != CL_SUCCESS)
            host.queue = NULL;
    }
    /* Free blocks of ordinary memory give way to pinned ones from now on. */
    for (db_host_block **pp = &host.free; host.queue && *pp;) {
        db_host_block *b = *pp;
        if (b->pinned) {
            pp = &b->next;
            continue;
        }
        *pp = b->next;
        host.free_bytes -= b->bytes;
        host_block_free(b, NULL);
    }
    pthread_mutex_unlock(&pool_lock);
}

void db_host_pool_batch(size_t keep)
{
    pthread_mutex_lock(&pool_lock);
    host.keep = keep ? keep : DB_HOST_KEEP;
    host.batch = keep > 0;
    pthread_mutex_unlock(&pool_lock);
}

void db_host_pool_close(void)
{
    pthread_mutex_lock(&pool_lock);
    db_host_block *b = NULL;
    if (--host.contexts == 0) {
        /* The drivers may be unloaded once the last context is gone: the
        ** pinning thread ends first. */
        host.n_pending = 0;
        while (host.pinning)
            pthread_cond_wait(&pinned_cv, &pool_lock);
        b = host.free;
        host.free = NULL;
        host.free_bytes = 0;
    }
    while (b) {
        db_host_block *next = b->next;
        host_block_free(b, host.queue);
        b = next;
    }
    host_idle();
    pthread_mutex_unlock(&pool_lock);
}
