/*
** staging.c — host staging memory: one pool for the whole process.
*/
#define _GNU_SOURCE
#include <pthread.h>
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
    db_host_block *used;    /* taken by runs or as images' pixels */
    cl_command_queue queue; /* maps and unmaps pinned blocks (retained), or NULL */
    int contexts;           /* open contexts */
} host;

/* Free blocks kept beyond this many bytes are released, oldest first. */
#define HOST_POOL_MAX ((size_t)256 << 20)

static void host_block_free(db_host_block *b)
{
    if (b->pinned) {
        cl_event ev;
        if (clEnqueueUnmapMemObject(host.queue, b->pinned, b->ptr, 0, NULL, &ev) == CL_SUCCESS) {
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

db_host_block *db_host_take(size_t bytes)
{
    bytes = bytes ? bytes : 1;
    pthread_mutex_lock(&pool_lock);
    db_host_block *b = NULL;
    for (db_host_block **pp = &host.free; *pp; pp = &(*pp)->next)
        if ((*pp)->bytes == bytes) {
            b = *pp;
            *pp = b->next;
            host.free_bytes -= bytes;
            break;
        }
    if (!b && (b = calloc(1, sizeof *b))) {
        b->bytes = bytes;
        cl_context context = NULL;
        cl_int err = host.queue ? clGetCommandQueueInfo(host.queue, CL_QUEUE_CONTEXT, sizeof context, &context, NULL)
                                : CL_INVALID_COMMAND_QUEUE;
        if (err == CL_SUCCESS)
            b->pinned = clCreateBuffer(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &err);
        if (err == CL_SUCCESS) {
            b->ptr = clEnqueueMapBuffer(host.queue, b->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                        NULL, NULL, &err);
            if (err != CL_SUCCESS) {
                clReleaseMemObject(b->pinned);
                b->pinned = NULL;
            }
        }
        /* Pinned memory is an optimisation: ordinary memory gives the same results. */
        if (!b->pinned && posix_memalign(&b->ptr, 4096, db_round_up(bytes, 4096)) != 0) {
            free(b);
            b = NULL;
        }
    }
    if (b) {
        b->next = host.used;
        host.used = b;
    }
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
    db_host_block *b = NULL, *evict = NULL;
    pthread_mutex_lock(&pool_lock);
    if (!host_unuse(ptr, &b)) {
        pthread_mutex_unlock(&pool_lock);
        return false;
    }
    if (host.contexts) {
        b->next = host.free;
        host.free = b;
        host.free_bytes += b->bytes;
        b = NULL;
        /* Past the bound, the oldest blocks go: page sizes change within a batch. */
        while (host.free_bytes > HOST_POOL_MAX) {
            db_host_block **pp = &host.free;
            while ((*pp)->next)
                pp = &(*pp)->next;
            host.free_bytes -= (*pp)->bytes;
            (*pp)->next = evict;
            evict = *pp;
            *pp = NULL;
        }
    }
    if (b)
        host_block_free(b);
    while (evict) {
        db_host_block *next = evict->next;
        host_block_free(evict);
        evict = next;
    }
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
    if (!host.queue && clRetainCommandQueue(transfer) == CL_SUCCESS)
        host.queue = transfer;
    pthread_mutex_unlock(&pool_lock);
}

void db_host_pool_close(void)
{
    pthread_mutex_lock(&pool_lock);
    db_host_block *b = NULL;
    if (--host.contexts == 0) {
        b = host.free;
        host.free = NULL;
        host.free_bytes = 0;
    }
    while (b) {
        db_host_block *next = b->next;
        host_block_free(b);
        b = next;
    }
    host_idle();
    pthread_mutex_unlock(&pool_lock);
}
