/*
** sched.c — enqueuing a graph under a map, and the calls stage implementations use.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/buffer.h"
#include "runtime/g4_device.h"
#include "runtime/program.h"
#include "runtime/sched.h"
#include "runtime/util.h"

#define MAX_SCRATCH 24 /* scratch buffers and constants a stage may allocate, each */

/* One stage's view of a run, handed to its implementation. */
struct db_stage_run {
    const db_algo *algo;
    const db_stage *stage;
    const db_job *job;
    db_device *dev;
    db_buffer *items;
    const db_image *in;
    db_profile *prof;
    cl_event wait[DB_MAX_PORTS];
    cl_uint n_wait;
    int launched;
    int after_host;
    cl_event last;
    cl_mem scratch[MAX_SCRATCH];
    int n_scratch;
    cl_mem constants[MAX_SCRATCH];
    int n_const;
};

db_device *db_stage_device(db_stage_run *run) { return run->dev; }
int db_stage_width(const db_stage_run *run) { return run->in->width; }
int db_stage_height(const db_stage_run *run) { return run->in->height; }
int db_stage_channels(const db_stage_run *run) { return run->in->channels; }
int db_stage_commands(const db_stage_run *run) { return run->launched; }
const db_job *db_stage_job(const db_stage_run *run) { return run->job; }

cl_mem db_stage_in(db_stage_run *run, int port)
{
    return db_buffer_mem(&run->items[run->stage->in.item[port]], run->dev);
}

cl_mem db_stage_out(db_stage_run *run, int port)
{
    return db_buffer_mem(&run->items[run->stage->out.item[port]], run->dev);
}

cl_mem db_stage_scratch(db_stage_run *run, size_t bytes)
{
    if (run->n_scratch == MAX_SCRATCH) {
        db_fail(DB_ERR_USAGE, "stage %s uses too many scratch buffers", run->stage->name);
        return NULL;
    }
    char what[64];
    snprintf(what, sizeof what, "scratch memory of stage %s", run->stage->name);
    cl_mem m = db_device_alloc(run->dev, bytes, what);
    if (!m)
        return NULL;
    run->scratch[run->n_scratch++] = m;
    return m;
}

cl_mem db_stage_constant(db_stage_run *run, const void *src, size_t bytes)
{
    if (run->n_const == MAX_SCRATCH) {
        db_fail(DB_ERR_USAGE, "stage %s uses too many constant buffers", run->stage->name);
        return NULL;
    }
    cl_int err;
    cl_mem m = clCreateBuffer(run->dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)src, &err);
    if (err != CL_SUCCESS) {
        db_cl_check(err, "creating a constant buffer", run->dev);
        return NULL;
    }
    run->constants[run->n_const++] = m;
    return m;
}

cl_kernel db_stage_kernel(db_stage_run *run, const char *source, const char *name)
{
    for (int i = 0; i < DB_MAX_SOURCES && run->stage->sources[i]; i++)
        if (!strcmp(run->stage->sources[i], source))
            return db_kernel_get(run->dev, source, name);
    db_fail(DB_ERR_USAGE, "stage %s asks for kernel %s of %s, a file its descriptor does not list in "
            "db_stage.sources", run->stage->name, name, source);
    return NULL;
}

db_status db_stage_args(db_stage_run *run, cl_kernel k, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        size_t size = va_arg(ap, size_t);
        const void *ptr = va_arg(ap, const void *);
        cl_int err = clSetKernelArg(k, (cl_uint)i, size, ptr);
        if (err != CL_SUCCESS) {
            va_end(ap);
            char what[96];
            snprintf(what, sizeof what, "stage %s: setting kernel argument %d", run->stage->name, i);
            return db_cl_check(err, what, run->dev);
        }
    }
    va_end(ap);
    return DB_OK;
}

/* The events the stage's next command waits for: its inputs for the first,
** then nothing, the queue being in order, except after host code: PoCL starts
** a kernel that follows a native kernel before that one ends, so that
** dependency is made explicit. A wait on the previous command's event between
** two kernels costs microseconds a launch on a discrete GPU, and the graph cut
** makes hundreds of launches. */
static cl_uint wait_list(db_stage_run *run, const cl_event **list)
{
    if (run->launched) {
        *list = run->after_host ? &run->last : NULL;
        return run->after_host ? 1 : 0;
    }
    *list = run->n_wait ? run->wait : NULL;
    return run->n_wait;
}

db_status db_stage_read(db_stage_run *run, cl_mem mem, size_t offset, size_t bytes, void *dst)
{
    const cl_event *wl;
    cl_uint nw = wait_list(run, &wl);
    cl_int err = clEnqueueReadBuffer(run->dev->compute, mem, CL_TRUE, offset, bytes, dst, nw, wl, NULL);
    char what[96];
    snprintf(what, sizeof what, "stage %s: reading back its state", run->stage->name);
    return db_cl_check(err, what, run->dev);
}

#define HOST_MAX_MEMS 8
#define HOST_MAX_ARG 256

/* The argument block of a host stage's native kernel. */
struct host_call {
    db_host_fn fn;
    void *ptrs[HOST_MAX_MEMS];
    unsigned char arg[HOST_MAX_ARG];
};

static void CL_CALLBACK host_trampoline(void *args)
{
    struct host_call *call = args;
    call->fn(call->ptrs, call->arg);
}

/* Records the completion of a command of the stage: profiling, and the event
** that later commands and the stage's outputs wait for. */
static void stage_command_done(db_stage_run *run, cl_event ev, const char *name)
{
    db_profile_add(run->prof, ev, DB_REC_KERNEL, run->stage->name, name, run->dev, 0);
    if (run->last)
        clReleaseEvent(run->last);
    run->last = ev;
    run->launched++;
    run->after_host = 0;
}

bool db_stage_can_forward(const db_stage_run *run)
{
    return !run->dev->info.host_unified && !run->launched;
}

db_status db_stage_forward(db_stage_run *run, int in_port, int out_port)
{
    db_buffer *in = &run->items[run->stage->in.item[in_port]], *out = &run->items[run->stage->out.item[out_port]];
    int r = run->dev->role;
    if (!db_stage_can_forward(run) || !in->rep[r].valid || !in->rep[r].mem)
        return db_fail(DB_ERR_USAGE, "stage %s cannot forward its input here", run->stage->name);
    db_device_free(run->dev, out->rep[r].mem);
    clRetainMemObject(in->rep[r].mem);
    out->rep[r].mem = in->rep[r].mem;
    out->rep[r].dev = run->dev;
    out->rep[r].aliased = true;
    /* The outputs are ready when the input is. A marker waiting for nothing
    ** gives the stage its row in the profile, at the time it took: none. */
    cl_event ev;
    cl_int err = clEnqueueMarkerWithWaitList(run->dev->compute, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return db_cl_check(err, "forwarding a stage's input", run->dev);
    stage_command_done(run, ev, "forward");
    clReleaseEvent(run->last);
    if (in->rep[r].ready)
        clRetainEvent(in->rep[r].ready);
    run->last = in->rep[r].ready;
    return DB_OK;
}

/* The host code gets each buffer's address by mapping it (zero-copy where the
** device shares host memory), not through the native kernel's own list of
** memory objects: PoCL 3 substitutes the addresses of that list out of order. */
db_status db_stage_host(db_stage_run *run, const char *name, db_host_fn fn, const void *arg, size_t arg_size,
                        const cl_mem *mems, int n_mems)
{
    cl_device_exec_capabilities caps = 0;
    clGetDeviceInfo(run->dev->info.id, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
    if (!(caps & CL_EXEC_NATIVE_KERNEL))
        return db_fail(DB_ERR_DEVICE, "stage %s runs host code on the %s role, but device '%s' cannot run native "
                       "kernels; bind the cpu role to a CPU device such as PoCL (--cpu-device portable)",
                       run->stage->name, db_role_name(run->dev->role), run->dev->info.name);
    if (n_mems < 1 || n_mems > HOST_MAX_MEMS || arg_size > HOST_MAX_ARG)
        return db_fail(DB_ERR_USAGE, "stage %s: host code takes 1 to %d buffers and at most %d bytes of arguments",
                       run->stage->name, HOST_MAX_MEMS, HOST_MAX_ARG);
    char what[96];
    snprintf(what, sizeof what, "stage %s: enqueuing host code %s", run->stage->name, name);
    cl_command_queue q = run->dev->compute;
    struct host_call call;
    memset(&call, 0, sizeof call);
    call.fn = fn;
    if (arg_size)
        memcpy(call.arg, arg, arg_size);
    const cl_event *wl;
    cl_uint nw = wait_list(run, &wl);
    cl_event mapped[HOST_MAX_MEMS], unmapped[HOST_MAX_MEMS], ev = NULL, done = NULL;
    int n_mapped = 0, n_unmapped = 0;
    cl_int err = CL_SUCCESS;
    for (; n_mapped < n_mems && err == CL_SUCCESS; n_mapped++) {
        size_t bytes = 0;
        clGetMemObjectInfo(mems[n_mapped], CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
        call.ptrs[n_mapped] = clEnqueueMapBuffer(q, mems[n_mapped], CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                                 nw, wl, &mapped[n_mapped], &err);
        if (err != CL_SUCCESS)
            break;
    }
    if (err == CL_SUCCESS)
        err = clEnqueueNativeKernel(q, host_trampoline, &call, sizeof call, 0, NULL, NULL, (cl_uint)n_mapped, mapped,
                                    &ev);
    /* Unmap what was mapped even after a failure, so the buffers stay usable. */
    for (int i = 0; i < n_mapped; i++) {
        cl_int e = clEnqueueUnmapMemObject(q, mems[i], call.ptrs[i], ev ? 1 : 0, ev ? &ev : NULL,
                                           &unmapped[n_unmapped]);
        if (e == CL_SUCCESS)
            n_unmapped++;
        else if (err == CL_SUCCESS)
            err = e;
        clReleaseEvent(mapped[i]);
    }
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(q, (cl_uint)n_unmapped, unmapped, &done);
    for (int i = 0; i < n_unmapped; i++)
        clReleaseEvent(unmapped[i]);
    if (err != CL_SUCCESS) {
        if (ev)
            clReleaseEvent(ev);
        return db_cl_check(err, what, run->dev);
    }
    db_profile_add(run->prof, ev, DB_REC_KERNEL, run->stage->name, name, run->dev, 0);
    clReleaseEvent(ev);
    if (run->last)
        clReleaseEvent(run->last);
    run->last = done;
    run->launched++;
    run->after_host = 1;
    return DB_OK;
}

db_status db_stage_write(db_stage_run *run, cl_mem mem, size_t offset, size_t bytes, const void *src)
{
    const cl_event *wl;
    cl_uint nw = wait_list(run, &wl);
    cl_event ev;
    cl_int err = clEnqueueWriteBuffer(run->dev->compute, mem, CL_FALSE, offset, bytes, src, nw, wl, &ev);
    if (err != CL_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "stage %s: writing a table to the device", run->stage->name);
        return db_cl_check(err, what, run->dev);
    }
    stage_command_done(run, ev, "write");
    return DB_OK;
}

const size_t db_any_group[3];

/* The work-group size db_any_group stands for on `dev`: on a CPU device, 256
** items along a row in 2-D, and in 1-D the largest power of two up to 1024
** that still leaves 4 groups per compute unit (a kernel over rows or bands
** has few items, each of them long); elsewhere the driver's choice. */
static const size_t *any_group(const db_device *dev, int dims, const size_t *global, size_t *out)
{
    if (!(dev->info.type & CL_DEVICE_TYPE_CPU))
        return NULL;
    size_t units = dev->info.compute_units > 0 ? dev->info.compute_units : 1, l = 1024;
    if (dims == 1)
        while (l > 1 && (global[0] + l - 1) / l < 4 * units)
            l /= 2;
    out[0] = dims == 1 ? l : 256;
    out[1] = out[2] = 1;
    return out;
}

db_status db_stage_launch(db_stage_run *run, cl_kernel k, int dims, const size_t *global,
                          const size_t *local)
{
    size_t any[3];
    if (local == db_any_group)
        local = any_group(run->dev, dims, global, any);
    size_t g[3];
    for (int i = 0; i < dims; i++) {
        g[i] = global[i] ? global[i] : 1;
        if (local)
            g[i] = db_round_up(g[i], local[i]);
    }
    cl_event ev;
    const cl_event *wl;
    cl_uint nw = wait_list(run, &wl);
    cl_int err = clEnqueueNDRangeKernel(run->dev->compute, k, (cl_uint)dims, NULL, g, local, nw, wl, &ev);
    if (err != CL_SUCCESS) {
        char name[64] = "?", what[160];
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        snprintf(what, sizeof what, "stage %s: launching kernel %s", run->stage->name, name);
        return db_cl_check(err, what, run->dev);
    }
    char name[64] = "kernel";
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    stage_command_done(run, ev, name);
    return DB_OK;
}

db_status db_stage_launch_any(db_stage_run *run, cl_kernel k, int dims, const size_t *global,
                              const size_t *gpu_local)
{
    return db_stage_launch(run, k, dims, global, run->dev->role == DB_ROLE_GPU ? gpu_local : db_any_group);
}

size_t db_item_bytes(const db_item *item, const db_job *job, int width, int height, int channels)
{
    size_t px = (size_t)width * (size_t)height;
    switch (item->shape) {
    case DB_ITEM_INPUT:
        return px * (size_t)channels;
    case DB_ITEM_PIXELS:
        return px * item->elem_size;
    case DB_ITEM_FIXED:
        return item->elem_size;
    case DB_ITEM_COMPUTED:
        return item->size(job, width, height);
    }
    return 0;
}

static void release_run(db_stage_run *run)
{
    for (cl_uint i = 0; i < run->n_wait; i++)
        if (run->wait[i])
            clReleaseEvent(run->wait[i]);
    run->n_wait = 0;
    if (run->last)
        clReleaseEvent(run->last);
    run->last = NULL;
}

/* Checks the map before anything is allocated: length, devices, implementations. */
static db_status check_map(db_context *ctx, const db_algo *algo, const db_map *map)
{
    if (map->n != algo->n_stages)
        return db_fail(DB_ERR_USAGE, "the map has %d roles but %s has %d stages", map->n, algo->name,
                       algo->n_stages);
    for (int s = 0; s < algo->n_stages; s++) {
        db_role role = map->role[s];
        if (!algo->stages[s].impl[role])
            return db_fail(DB_ERR_USAGE, "stage %s of %s has no %s implementation; map it to %s",
                           algo->stages[s].name, algo->name, db_role_name(role),
                           db_role_name(role == DB_ROLE_CPU ? DB_ROLE_GPU : DB_ROLE_CPU));
        if (!db_context_device(ctx, role))
            return db_fail(DB_ERR_DEVICE, "stage %s is mapped to %s, but %s", algo->stages[s].name,
                           db_role_name(role), db_error_message());
    }
    return DB_OK;
}

const db_stage *db_run_step(const db_algo *algo, const db_map *map, const db_job *job, int s, int *last)
{
    const db_fusion *f = algo->fusion;
    *last = s;
    if (!f || f->first != s || s + f->count > map->n || !f->stage.impl[map->role[s]] ||
        (f->applies && !f->applies(job)))
        return &algo->stages[s];
    for (int i = s + 1; i < s + f->count; i++)
        if (map->role[i] != map->role[s])
            return &algo->stages[s];
    *last = s + f->count - 1;
    return &f->stage;
}

/* Checks that the page's data items fit each device they go to, before any is
** allocated: a device would refuse a buffer with an OpenCL error that names
** neither the page nor the cause. Scratch buffers come on top, so this is the
** least a run needs. */
static db_status check_memory(const db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job,
                              const db_image *in)
{
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        const db_device_info *dev = ctx->chosen[r];
        bool used[DB_MAX_ITEMS] = {false};
        for (int s = 0, last; dev && s < map->n; s = last + 1) {
            const db_stage *stage = db_run_step(algo, map, job, s, &last);
            for (int i = 0; map->role[s] == (db_role)r && i < stage->in.n; i++)
                used[stage->in.item[i]] = true;
            for (int o = 0; map->role[s] == (db_role)r && o < stage->out.n; o++)
                used[stage->out.item[o]] = true;
        }
        unsigned long long total = 0, largest = 0;
        for (int i = 0; dev && i < algo->n_items; i++)
            if (used[i]) {
                unsigned long long b = db_item_bytes(&algo->items[i], job, in->width, in->height, in->channels);
                total += b;
                largest = b > largest ? b : largest;
            }
        if (dev && (total > dev->global_mem || (dev->max_alloc && largest > dev->max_alloc)))
            return db_fail(DB_ERR_NOMEM, "a %dx%d page is too large for the %s device '%s': %s needs %.2f GB there, "
                           "%.2f GB in its largest buffer, and the device has %.2f GB, at most %.2f GB in one "
                           "buffer; use --map cpu or split the page", in->width, in->height, db_role_name((db_role)r),
                           dev->name, algo->name, total / 1e9, largest / 1e9, dev->global_mem / 1e9,
                           dev->max_alloc / 1e9);
    }
    return DB_OK;
}

/* The status of a completed event: CL_COMPLETE or a negative error. */
static cl_int event_status(cl_event ev)
{
    cl_int st = CL_COMPLETE;
    if (ev)
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    return st;
}

db_status db_prepare(db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job)
{
    for (int s = 0, last; s < algo->n_stages; s = last + 1) {
        const db_stage *stage = db_run_step(algo, map, job, s, &last);
        db_device *dev = db_context_device(ctx, map->role[s]);
        if (!dev)
            return db_error_status();
        for (int i = 0; i < DB_MAX_SOURCES && stage->sources[i]; i++) {
            struct db_program *p;
            db_status st = db_program_get(dev, stage->sources[i], &p);
            if (st != DB_OK)
                return st;
        }
    }
    return DB_OK;
}

/* The run's pages: the input item's host copy is the decoded image, packed
** (the image itself when its pixels are staging memory, else a copy), and the
** result is downloaded straight into the image returned; or, with `bits`, a
** bitmap is made for it (pack_result). */
static db_status bind_pages(const db_algo *algo, const db_image *in, db_buffer *items, db_image **result,
                            db_bitmap **bits)
{
    db_buffer *ib = &items[algo->input];
    size_t row = (size_t)in->width * (size_t)in->channels;
    db_host_block *b = db_host_find(in->data);
    if (b && in->stride == row && b->bytes >= ib->bytes) {
        db_buffer_lend(ib, b, true);
    } else {
        if (!db_buffer_host(ib))
            return db_error_status();
        db_copy_rows(ib->host->ptr, row, in->data, in->stride, row, (size_t)in->height);
        ib->host_valid = true;
    }
    if (bits) {
        if (!(*bits = db_bitmap_alloc(in->width, in->height)))
            return db_error_status();
        (*bits)->dpi_x = in->dpi_x; /* the page keeps its scale */
        (*bits)->dpi_y = in->dpi_y;
        return DB_OK;
    }
    if (!(*result = db_image_alloc(in->width, in->height, 1)))
        return db_error_status();
    (*result)->dpi_x = in->dpi_x;
    (*result)->dpi_y = in->dpi_y;
    db_buffer *ob = &items[algo->output];
    if ((b = db_host_find((*result)->data)) && b->bytes >= ob->bytes)
        db_buffer_lend(ob, b, false);
    return DB_OK;
}

/* The output item packed into `bm` by a kernel on the GPU that made it, so
** that an eighth of its bytes come back: *ready completes when `bm` holds it,
** and *packed (the device buffer, to free once the run is over) is on *dev.
** Where the item is host memory already (host code made it, or a device that
** shares host memory, where packing on the host costs less than a kernel)
** nothing is enqueued and *packed is NULL: the caller packs it on the host. */
static db_status pack_result(db_buffer *o, db_bitmap *bm, db_profile *prof, cl_mem *packed, db_device **dev,
                             cl_event *ready)
{
    *packed = NULL;
    *dev = NULL;
    *ready = NULL;
    db_device *d = NULL;
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (o->rep[r].valid)
            d = o->rep[r].dev;
    if (o->host_valid || !d || d->info.host_unified)
        return DB_OK;
    cl_kernel k = db_kernel_get(d, "pack.cl", "pack_bits");
    size_t bytes = bm->stride * (size_t)bm->height;
    cl_mem out = k ? db_device_alloc(d, bytes, "the packed result") : NULL;
    if (!out)
        return db_error_status();
    cl_int w = bm->width, h = bm->height, row_bytes = (cl_int)bm->stride;
    cl_mem in = o->rep[d->role].mem;
    cl_int err = clSetKernelArg(k, 0, sizeof in, &in);
    err |= clSetKernelArg(k, 1, sizeof w, &w);
    err |= clSetKernelArg(k, 2, sizeof h, &h);
    err |= clSetKernelArg(k, 3, sizeof row_bytes, &row_bytes);
    err |= clSetKernelArg(k, 4, sizeof out, &out);
    const size_t local[2] = {64, 1}, global[2] = {db_round_up((size_t)row_bytes, local[0]), (size_t)h};
    cl_event made = NULL, done = NULL;
    cl_event *wait = o->rep[d->role].ready ? &o->rep[d->role].ready : NULL;
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, k, 2, NULL, global, local, wait ? 1 : 0, wait, &made);
    if (err == CL_SUCCESS) {
        /* Packing is part of bringing the result back: profiled with its copy. */
        db_profile_add(prof, made, DB_REC_TO_HOST, o->name, "pack", d, 0);
        err = clEnqueueReadBuffer(d->transfer, out, CL_FALSE, 0, bytes, bm->data, 1, &made, &done);
    }
    if (made)
        clReleaseEvent(made);
    if (err != CL_SUCCESS) {
        clFinish(d->compute);
        db_device_free(d, out);
        return db_cl_check(err, "packing the result", d);
    }
    db_profile_add(prof, done, DB_REC_TO_HOST, o->name, "copy", d, bytes);
    *packed = out;
    *dev = d;
    *ready = done;
    return DB_OK;
}

/* One step of the map (a stage, or a fused pair): its inputs fetched to its
** device, its outputs placed there, its work enqueued and flushed. */
static db_status enqueue_step(db_stage_run *run, db_role role)
{
    const db_stage *stage = run->stage;
    for (int i = 0; i < stage->in.n; i++) {
        cl_event ev = NULL;
        db_status st = db_buffer_fetch(&run->items[stage->in.item[i]], run->dev, run->prof, &ev);
        if (st != DB_OK)
            return st;
        if (ev)
            run->wait[run->n_wait++] = ev;
    }
    for (int o = 0; o < stage->out.n; o++)
        if (!db_buffer_mem(&run->items[stage->out.item[o]], run->dev))
            return db_error_status();
    db_status st = stage->impl[role](run);
    if (st != DB_OK)
        return st;
    if (!run->launched)
        return db_fail(DB_ERR_USAGE, "stage %s enqueued no work", stage->name);
    for (int o = 0; o < stage->out.n; o++)
        db_buffer_written(&run->items[stage->out.item[o]], run->dev, run->last);
    clFlush(run->dev->compute);
    return DB_OK;
}

/* The run's report values, read back; a fatal one at zero fails the run. */
static db_status read_report(const db_algo *algo, const db_buffer *items, db_report *report)
{
    if (report)
        report->n = 0;
    for (int i = 0; i < (algo->report_fields ? algo->n_report_fields : 0); i++) {
        const db_report_field *f = &algo->report_fields[i];
        const void *values = items[algo->report_item].host->ptr;
        int64_t v = algo->report_wide ? ((const int64_t *)values)[f->index] : ((const int32_t *)values)[f->index];
        if (report) {
            report->n = algo->n_report_fields;
            report->fields = algo->report_fields;
            report->values[i] = v;
        }
        if (f->fatal && v == 0)
            return db_fail(DB_ERR_NOMEM, "%s: %s", algo->name, f->if_zero);
    }
    return DB_OK;
}

/* db_run and db_run_bitmap: the result as an image into *out, or with `bits`
** as a bitmap into *bits (coded as Group 4 too with `g4`, where packed on a GPU). */
static db_status run(db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job,
                     const db_image *in, db_image **out, db_bitmap **bits, bool g4, db_report *report,
                     db_profile *prof)
{
    if (out)
        *out = NULL;
    if (bits)
        *bits = NULL;
    db_status st = check_map(ctx, algo, map);
    if (st != DB_OK)
        return st;
    if ((st = db_job_check(algo, job)) != DB_OK)
        return st;
    if (algo->items[algo->input].shape == DB_ITEM_INPUT && in->channels != 1 && in->channels != 3)
        return db_fail(DB_ERR_FORMAT, "%s needs a gray or RGB image, not %d channels", algo->name, in->channels);
    if ((st = check_memory(ctx, algo, map, job, in)) != DB_OK)
        return st;

    uint64_t t0 = db_now_ns(), wall = 0;
    db_buffer items[DB_MAX_ITEMS];
    memset(items, 0, sizeof items);
    db_stage_run runs[DB_MAX_STAGES];
    memset(runs, 0, sizeof runs);
    cl_event result = NULL, report_ready = NULL;
    db_image *result_img = NULL;
    db_bitmap *result_bits = NULL;
    cl_mem packed = NULL;     /* the result packed on a GPU */
    db_device *packed_on = NULL;
    int n_items = 0;

    for (; n_items < algo->n_items; n_items++) {
        st = db_buffer_init(&items[n_items], ctx, algo->items[n_items].name,
                            db_item_bytes(&algo->items[n_items], job, in->width, in->height, in->channels));
        if (st != DB_OK)
            goto done;
    }
    if ((st = bind_pages(algo, in, items, &result_img, bits ? &result_bits : NULL)) != DB_OK)
        goto done;
    for (int s = 0, last; s < algo->n_stages; s = last + 1) {
        runs[s] = (db_stage_run){.algo = algo, .stage = db_run_step(algo, map, job, s, &last), .job = job,
                                 .dev = ctx->role[map->role[s]], .items = items, .in = in, .prof = prof};
        if ((st = enqueue_step(&runs[s], map->role[s])) != DB_OK)
            goto done;
    }
    if (bits)
        st = pack_result(&items[algo->output], result_bits, prof, &packed, &packed_on, &result);
    if (st == DB_OK && !packed)
        st = db_buffer_fetch_host(&items[algo->output], prof, &result);
    if (st != DB_OK)
        goto done;
    if (algo->report_fields) {
        st = db_buffer_fetch_host(&items[algo->report_item], prof, &report_ready);
        if (st != DB_OK)
            goto done;
    }
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (ctx->role[r]) {
            clFlush(ctx->role[r]->transfer);
            clFlush(ctx->role[r]->compute);
        }
    if (report_ready && clWaitForEvents(1, &report_ready) != CL_SUCCESS) {
        st = db_fail(DB_ERR_CL, "running %s failed on the device while making its report", algo->name);
        goto done;
    }
    if (result) {
        cl_int err = clWaitForEvents(1, &result);
        if (err != CL_SUCCESS || event_status(result) < 0) {
            st = db_fail(DB_ERR_CL, "running %s failed on the device (%s); rerun with --profile for the "
                         "stage timings, or map the failing stage to another role",
                         algo->name, db_cl_error_name(err != CL_SUCCESS ? err : event_status(result)));
            goto done;
        }
    }
    if (bits && packed && g4) {
        st = db_g4_encode_device(packed_on, packed, in->width, in->height, result_bits->stride, NULL, prof,
                                 items[algo->output].name, &result_bits->g4, &result_bits->g4_size);
        if (st != DB_OK)
            goto done;
    }
    const uint8_t *host = items[algo->output].host ? items[algo->output].host->ptr : NULL;
    if (bits && !packed) /* the item is on the host: packed here */
        db_bitmap_fill(result_bits, host, (size_t)in->width);
    else if (!bits && host != result_img->data)
        db_copy_rows(result_img->data, result_img->stride, host, (size_t)in->width, (size_t)in->width,
                     (size_t)in->height);
    if ((st = read_report(algo, items, report)) != DB_OK)
        goto done;
    wall = db_now_ns() - t0;
    if (bits) {
        *bits = result_bits;
        result_bits = NULL;
    } else {
        *out = result_img;
        result_img = NULL;
    }

done:
    /* Everything enqueued must finish before its buffers return to the pools,
    ** including work the result did not wait for. */
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (ctx->role[r]) {
            clFinish(ctx->role[r]->compute);
            clFinish(ctx->role[r]->transfer);
        }
    if (prof) {
        db_profile_resolve(prof);
        if (st == DB_OK)
            db_profile_end_run(prof, wall);
    }
    if (result)
        clReleaseEvent(result);
    if (report_ready)
        clReleaseEvent(report_ready);
    for (int s = 0; s < algo->n_stages; s++) {
        release_run(&runs[s]);
        for (int i = 0; i < runs[s].n_scratch; i++)
            db_device_free(runs[s].dev, runs[s].scratch[i]);
        for (int i = 0; i < runs[s].n_const; i++)
            clReleaseMemObject(runs[s].constants[i]);
    }
    for (int i = 0; i < n_items; i++)
        db_buffer_release(&items[i]);
    if (packed)
        db_device_free(packed_on, packed);
    db_image_free(result_img);
    db_bitmap_free(result_bits);
    return st;
}

db_status db_run(db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job,
                 const db_image *in, db_image **out, db_report *report, db_profile *prof)
{
    return run(ctx, algo, map, job, in, out, NULL, false, report, prof);
}

db_status db_run_bitmap(db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job,
                        const db_image *in, bool g4, db_bitmap **bits, db_report *report, db_profile *prof)
{
    return run(ctx, algo, map, job, in, NULL, bits, g4, report, prof);
}

void db_job_defaults(const db_algo *algo, db_job *job)
{
    memset(job, 0, sizeof *job);
    for (int i = 0; i < algo->n_params; i++)
        job->params[i] = algo->params[i].def;
    job->variant = 0;
    job->gray = DB_GRAY_BT601;
}

static db_status check_value(const db_algo *algo, const db_param *p, double v)
{
    if (!isfinite(v) || v < p->min || v > p->max)
        return db_fail(DB_ERR_USAGE, "%s: parameter %s=%g is out of range; give a value in [%g, %g]",
                       algo->name, p->name, v, p->min, p->max);
    if (p->kind != DB_PARAM_REAL && v != floor(v))
        return db_fail(DB_ERR_USAGE, "%s: parameter %s=%g must be an integer", algo->name, p->name, v);
    if (p->choices) {
        char list[128] = "";
        int ok = 0;
        for (int i = 0; i < p->n_choices; i++) {
            ok |= v == p->choices[i];
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%g", i ? ", " : "", p->choices[i]);
        }
        if (!ok)
            return db_fail(DB_ERR_USAGE, "%s: parameter %s=%g is not allowed; give one of %s", algo->name,
                           p->name, v, list);
    }
    if (p->kind == DB_PARAM_ODD_INT && fmod(v, 2.0) == 0.0)
        return db_fail(DB_ERR_USAGE, "%s: parameter %s=%g must be odd (a centred window); use %g or %g",
                       algo->name, p->name, v, v - 1, v + 1);
    return DB_OK;
}

static const struct {
    const char *suffix;
    db_unit unit;
    double per_inch;
} units[] = {{"px", DB_UNIT_PX, 0}, {"in", DB_UNIT_IN, 1}, {"mm", DB_UNIT_MM, 25.4}, {"cm", DB_UNIT_CM, 2.54}};

/* The allowed value of `p` nearest `px`: an odd integer for windows, the
** nearest choice (the smaller on a tie), within [min, max]. */
static double nearest_allowed(const db_param *p, double px)
{
    double v = px < p->min ? p->min : px > p->max ? p->max : px;
    if (p->choices) {
        double best = p->choices[0];
        for (int i = 1; i < p->n_choices; i++)
            if (fabs(p->choices[i] - v) < fabs(best - v))
                best = p->choices[i];
        return best;
    }
    if (p->kind == DB_PARAM_ODD_INT) {
        v = 2 * floor(v / 2) + 1; /* the odd integer in [2k, 2k + 2) */
        return v > p->max ? v - 2 : v;
    }
    return p->kind == DB_PARAM_INT ? floor(v + 0.5) : v;
}

db_status db_job_resolve(const db_algo *algo, const db_job *job, double dpi, db_job *out)
{
    *out = *job;
    for (int i = 0; i < algo->n_params; i++) {
        if (job->unit[i] == DB_UNIT_PX)
            continue;
        const db_param *p = &algo->params[i];
        if (!(dpi > 0))
            return db_fail(DB_ERR_USAGE, "%s=%g%s needs the page's resolution and the page has none; give it "
                           "with --dpi N", p->name, job->params[i], units[job->unit[i]].suffix);
        out->params[i] = nearest_allowed(p, job->params[i] * dpi / units[job->unit[i]].per_inch);
        out->unit[i] = DB_UNIT_PX;
    }
    return DB_OK;
}

db_status db_job_check(const db_algo *algo, const db_job *job)
{
    for (int i = 0; i < algo->n_params; i++) {
        if (job->unit[i] != DB_UNIT_PX)
            return db_fail(DB_ERR_USAGE, "%s: parameter %s is in %s; resolve it with the page's resolution first "
                           "(db_job_resolve)", algo->name, algo->params[i].name, units[job->unit[i]].suffix);
        db_status st = check_value(algo, &algo->params[i], job->params[i]);
        if (st != DB_OK)
            return st;
    }
    if (job->variant < 0 || job->variant >= (algo->n_variants ? algo->n_variants : 1))
        return db_fail(DB_ERR_USAGE, "%s: variant index %d out of range", algo->name, job->variant);
    return DB_OK;
}

db_status db_job_set(const db_algo *algo, db_job *job, const char *name, const char *value)
{
    for (int i = 0; i < algo->n_params; i++) {
        if (strcmp(algo->params[i].name, name))
            continue;
        const db_param *p = &algo->params[i];
        if (p->names) {
            char list[256] = "";
            for (int k = 0; k < p->n_names; k++) {
                if (!strcmp(p->names[k], value)) {
                    job->params[i] = k;
                    return DB_OK;
                }
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", p->names[k]);
            }
            return db_fail(DB_ERR_USAGE, "%s: parameter %s takes one of %s, not '%s'", algo->name, name, list, value);
        }
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        db_unit unit = DB_UNIT_PX;
        for (size_t u = 0; p->length && end != value && *end && u < sizeof units / sizeof units[0]; u++)
            if (!strcmp(end, units[u].suffix)) {
                unit = units[u].unit;
                end += strlen(end);
            }
        if (end == value || *end != '\0' || errno == ERANGE || !isfinite(v))
            return db_fail(DB_ERR_USAGE, "%s: parameter %s needs a number%s, not '%s'", algo->name, name,
                           p->length ? " with an optional unit (px, in, mm, cm; e.g. 75px or 0.25in)" : "", value);
        if (unit != DB_UNIT_PX && !(v > 0))
            return db_fail(DB_ERR_USAGE, "%s: parameter %s=%s must be a positive length", algo->name, name, value);
        db_status st = unit == DB_UNIT_PX ? check_value(algo, &algo->params[i], v) : DB_OK;
        if (st != DB_OK)
            return st;
        job->params[i] = v;
        job->unit[i] = unit;
        return DB_OK;
    }
    char names[512] = "";
    for (int i = 0; i < algo->n_params; i++) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", algo->params[i].name);
    }
    return db_fail(DB_ERR_USAGE, "%s has no parameter '%s'; its parameters are: %s", algo->name, name,
                   algo->n_params ? names : "(none)");
}

db_status db_job_set_text(const db_algo *algo, db_job *job, const char *setting)
{
    char name[64];
    const char *eq = strchr(setting, '=');
    if (!eq || eq == setting || (size_t)(eq - setting) >= sizeof name)
        return db_fail(DB_ERR_USAGE, "--param takes NAME=VALUE, not '%s' (docbin-run --list-algos lists %s's "
                       "parameters)", setting, algo->name);
    snprintf(name, sizeof name, "%.*s", (int)(eq - setting), setting);
    return db_job_set(algo, job, name, eq + 1);
}

db_status db_job_set_variant(const db_algo *algo, db_job *job, const char *name)
{
    for (int i = 0; i < algo->n_variants; i++)
        if (!strcmp(algo->variants[i], name)) {
            job->variant = i;
            return DB_OK;
        }
    char names[256] = "";
    for (int i = 0; i < algo->n_variants; i++) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", algo->variants[i]);
    }
    return db_fail(DB_ERR_USAGE, "%s has no variant '%s'%s%s", algo->name, name,
                   algo->n_variants ? "; its variants are: " : " (it has no variants)", names);
}
