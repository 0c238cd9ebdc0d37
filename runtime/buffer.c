/*
** buffer.c — host staging, per-role replicas, lazy transfers and event bridging.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/buffer.h"
#include "runtime/profile.h"
#include "runtime/program.h"
#include "runtime/util.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* A free device buffer in a device's pool. */
struct db_device_block {
    struct db_device_block *next;
    size_t bytes;
    cl_mem mem;
};

/* Free buffers kept per device; beyond this the oldest are released. */
#define DEVICE_POOL_MAX 24

cl_mem db_device_alloc(db_device *dev, size_t bytes, const char *what)
{
    bytes = bytes ? bytes : 1;
    pthread_mutex_lock(&pool_lock);
    for (struct db_device_block **pp = &dev->pool; *pp; pp = &(*pp)->next)
        if ((*pp)->bytes == bytes) {
            struct db_device_block *b = *pp;
            *pp = b->next;
            dev->pool_size--;
            pthread_mutex_unlock(&pool_lock);
            cl_mem m = b->mem;
            free(b);
            return m;
        }
    pthread_mutex_unlock(&pool_lock);
    cl_int err;
    /* On devices that share host memory, host-allocated buffers make the maps
    ** of host code (db_stage_host) zero-copy. */
    cl_mem_flags flags = CL_MEM_READ_WRITE | (dev->info.host_unified ? CL_MEM_ALLOC_HOST_PTR : 0);
    cl_mem m = clCreateBuffer(dev->context, flags, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        db_fail(DB_ERR_CL, "allocating %s (%zu bytes) on %s device '%s' failed with %s%s", what, bytes,
                db_role_name(dev->role), dev->info.name, db_cl_error_name(err),
                err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
                    ? " (the image is too large for this device's memory)" : "");
        return NULL;
    }
    return m;
}

void db_device_free(db_device *dev, cl_mem mem)
{
    if (!mem)
        return;
    struct db_device_block *b = calloc(1, sizeof *b);
    if (!b || clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof b->bytes, &b->bytes, NULL) != CL_SUCCESS) {
        free(b);
        clReleaseMemObject(mem);
        return;
    }
    b->mem = mem;
    struct db_device_block *evict = NULL;
    pthread_mutex_lock(&pool_lock);
    b->next = dev->pool;
    dev->pool = b;
    if (++dev->pool_size > DEVICE_POOL_MAX) {
        struct db_device_block **pp = &dev->pool;
        while ((*pp)->next)
            pp = &(*pp)->next;
        evict = *pp;
        *pp = NULL;
        dev->pool_size--;
    }
    pthread_mutex_unlock(&pool_lock);
    if (evict) {
        clReleaseMemObject(evict->mem);
        free(evict);
    }
}

void db_device_pool_drain(db_device *dev)
{
    pthread_mutex_lock(&pool_lock);
    struct db_device_block *b = dev->pool;
    dev->pool = NULL;
    dev->pool_size = 0;
    pthread_mutex_unlock(&pool_lock);
    while (b) {
        struct db_device_block *next = b->next;
        clReleaseMemObject(b->mem);
        free(b);
        b = next;
    }
}

db_status db_buffer_init(db_buffer *buf, db_context *ctx, const char *name, size_t bytes)
{
    memset(buf, 0, sizeof *buf);
    buf->name = name;
    buf->bytes = bytes ? bytes : 1;
    buf->ctx = ctx;
    return DB_OK;
}

db_host_block *db_buffer_host(db_buffer *buf)
{
    if (!buf->host && !(buf->host = db_host_take(buf->bytes)))
        db_fail(DB_ERR_NOMEM, "out of host memory for %s (%zu bytes)", buf->name, buf->bytes);
    return buf->host;
}

static void release_event(cl_event *ev)
{
    if (*ev)
        clReleaseEvent(*ev);
    *ev = NULL;
}

void db_buffer_release(db_buffer *buf)
{
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        release_event(&buf->rep[r].ready);
        if (buf->rep[r].aliased)
            clReleaseMemObject(buf->rep[r].mem);
        else if (buf->rep[r].mem)
            db_device_free(buf->rep[r].dev, buf->rep[r].mem);
    }
    release_event(&buf->host_ready);
    if (buf->host && !buf->borrowed)
        db_host_give(buf->host->ptr);
    memset(buf, 0, sizeof *buf);
}

void db_buffer_lend(db_buffer *buf, db_host_block *block, bool valid)
{
    buf->host = block;
    buf->borrowed = true;
    buf->host_valid = valid;
}

static bool aliases_host(db_buffer *buf, const db_device *dev);

cl_mem db_buffer_mem(db_buffer *buf, db_device *dev)
{
    int r = dev->role;
    if (buf->rep[r].mem)
        return buf->rep[r].mem;
    cl_mem m;
    if (aliases_host(buf, dev)) {
        /* Wrapping costs microseconds; a wrapper kept with the block would
        ** belong to one context, and blocks move between contexts. */
        cl_int err;
        m = clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, buf->bytes, buf->host->ptr, &err);
        if (err != CL_SUCCESS) {
            db_cl_check(err, "wrapping host memory", dev);
            return NULL;
        }
        buf->rep[r].aliased = true;
    } else {
        m = db_device_alloc(dev, buf->bytes, buf->name);
        if (!m)
            return NULL;
    }
    buf->rep[r].mem = m;
    buf->rep[r].dev = dev;
    return m;
}

/* Whether a CPU device wraps the host block (taken now if need be) instead of copying. */
static bool aliases_host(db_buffer *buf, const db_device *dev)
{
    return dev->info.host_unified && db_buffer_host(buf) && ((uintptr_t)buf->host->ptr % dev->mem_align) == 0;
}

db_status db_event_bridge(db_device *dev, cl_event ev, cl_event *out)
{
    *out = NULL;
    if (!ev)
        return DB_OK;
    cl_context evctx;
    cl_int err = clGetEventInfo(ev, CL_EVENT_CONTEXT, sizeof evctx, &evctx, NULL);
    if (err != CL_SUCCESS)
        return db_cl_check(err, "clGetEventInfo", dev);
    if (evctx == dev->context) {
        clRetainEvent(ev);
        *out = ev;
        return DB_OK;
    }
    cl_command_queue q = NULL;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS && q)
        clFlush(q);
    cl_int status = CL_COMPLETE;
    err = clWaitForEvents(1, &ev);
    if (err == CL_SUCCESS)
        err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (err == CL_SUCCESS && status < 0)
        err = status;
    if (err != CL_SUCCESS)
        return db_fail(DB_ERR_CL, "a copy that %s device '%s' needs failed on the other device (%s); rerun with "
                       "--profile, or map the stages that exchange data to one role", db_role_name(dev->role),
                       dev->info.name, db_cl_error_name(err));
    return DB_OK;
}

/* Copies the valid replica on `src` to the host copy. */
static db_status to_host_from(db_buffer *buf, db_device *src, struct db_profile *prof)
{
    int r = src->role;
    if (!db_buffer_host(buf))
        return db_error_status();
    cl_event done = NULL;
    cl_int err;
    cl_uint nw = buf->rep[r].ready ? 1 : 0;
    if (aliases_host(buf, src)) {
        void *p = clEnqueueMapBuffer(src->transfer, buf->rep[r].mem, CL_FALSE, CL_MAP_READ, 0, buf->bytes,
                                     nw, nw ? &buf->rep[r].ready : NULL, NULL, &err);
        if (err == CL_SUCCESS)
            err = clEnqueueUnmapMemObject(src->transfer, buf->rep[r].mem, p, 0, NULL, &done);
        if (err == CL_SUCCESS)
            db_profile_add(prof, done, DB_REC_TO_HOST, buf->name, "map", src, 0);
    } else {
        err = clEnqueueReadBuffer(src->transfer, buf->rep[r].mem, CL_FALSE, 0, buf->bytes, buf->host->ptr, nw,
                                  nw ? &buf->rep[r].ready : NULL, &done);
        if (err == CL_SUCCESS)
            db_profile_add(prof, done, DB_REC_TO_HOST, buf->name, "copy", src, buf->bytes);
    }
    if (err != CL_SUCCESS)
        return db_cl_check(err, "copying to the host", src);
    release_event(&buf->host_ready);
    buf->host_ready = done;
    buf->host_valid = true;
    return DB_OK;
}

db_status db_buffer_fetch_host(db_buffer *buf, struct db_profile *prof, cl_event *ready)
{
    *ready = NULL;
    if (!buf->host_valid) {
        db_device *src = NULL;
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            if (buf->rep[r].valid)
                src = buf->rep[r].dev;
        if (!src)
            return db_fail(DB_ERR_USAGE, "item %s was never written", buf->name);
        db_status st = to_host_from(buf, src, prof);
        if (st != DB_OK)
            return st;
    }
    if (buf->host_ready) {
        clRetainEvent(buf->host_ready);
        *ready = buf->host_ready;
    }
    return DB_OK;
}

db_status db_buffer_fetch(db_buffer *buf, db_device *dev, struct db_profile *prof, cl_event *ready)
{
    int r = dev->role;
    *ready = NULL;
    if (!db_buffer_mem(buf, dev))
        return db_error_status();
    if (!buf->rep[r].valid) {
        cl_event host_ev = NULL;
        db_status st = db_buffer_fetch_host(buf, prof, &host_ev);
        if (st != DB_OK)
            return st;
        cl_event wait = NULL;
        st = db_event_bridge(dev, host_ev, &wait);
        release_event(&host_ev);
        if (st != DB_OK)
            return st;
        cl_event done = NULL;
        cl_int err;
        cl_uint nw = wait ? 1 : 0;
        if (aliases_host(buf, dev)) {
            void *p = clEnqueueMapBuffer(dev->transfer, buf->rep[r].mem, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, 0, buf->bytes,
                                         nw, nw ? &wait : NULL, NULL, &err);
            if (err == CL_SUCCESS)
                err = clEnqueueUnmapMemObject(dev->transfer, buf->rep[r].mem, p, 0, NULL, &done);
            if (err == CL_SUCCESS)
                db_profile_add(prof, done, DB_REC_TO_DEVICE, buf->name, "map", dev, 0);
        } else {
            err = clEnqueueWriteBuffer(dev->transfer, buf->rep[r].mem, CL_FALSE, 0, buf->bytes, buf->host->ptr,
                                       nw, nw ? &wait : NULL, &done);
            if (err == CL_SUCCESS)
                db_profile_add(prof, done, DB_REC_TO_DEVICE, buf->name, "copy", dev, buf->bytes);
        }
        release_event(&wait);
        if (err != CL_SUCCESS)
            return db_cl_check(err, "copying to the device", dev);
        release_event(&buf->rep[r].ready);
        buf->rep[r].ready = done;
        buf->rep[r].valid = true;
    }
    if (buf->rep[r].ready) {
        clRetainEvent(buf->rep[r].ready);
        *ready = buf->rep[r].ready;
    }
    return DB_OK;
}

void db_buffer_written(db_buffer *buf, db_device *dev, cl_event done)
{
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        buf->rep[r].valid = false;
    buf->host_valid = false;
    release_event(&buf->host_ready);
    int r = dev->role;
    release_event(&buf->rep[r].ready);
    if (done)
        clRetainEvent(done);
    buf->rep[r].ready = done;
    buf->rep[r].valid = true;
}
