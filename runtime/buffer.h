/*
** buffer.h — data items in memory: a host copy and one replica per role.
**
** Each copy is valid or not (StarPU's MSI replicas, simplified to single
** assignment: within a run every item is written exactly once). A stage's input
** is fetched lazily to its device; the writer's copy becomes the only valid one.
** Host memory is staging memory: pinned through the GPU's driver when a discrete
** GPU is bound (one DMA each way), page-aligned otherwise. Large images live in
** it too (db_image_alloc), so a decoded page is uploaded from where the decoder
** wrote it and the result is downloaded into the image the caller receives. A
** device that shares host memory (a CPU device such as PoCL) wraps the staging
** memory with CL_MEM_USE_HOST_PTR, so its replica costs no copy; map/unmap
** commands keep it coherent as the OpenCL specification requires. Roles live in
** different contexts, so a dependency on another role's event waits on the host
** (db_event_bridge).
*/
#ifndef DB_BUFFER_H
#define DB_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <CL/cl.h>
#include "runtime/device.h"
#include "runtime/staging.h"

struct db_profile;

/* One data item of one run. */
typedef struct db_buffer {
    const char *name;
    size_t bytes;
    db_context *ctx;
    db_host_block *host;     /* NULL until a copy on the host is needed (db_buffer_host) */
    bool borrowed;           /* host is an image's pixels (db_buffer_lend), not the run's */
    bool host_valid;
    cl_event host_ready;     /* completes when the host copy is valid; NULL = now */
    struct {
        db_device *dev;
        cl_mem mem;
        bool valid;
        bool aliased;        /* mem is not the pool's: it wraps the host block (a device sharing host
                             ** memory) or is another item's (db_stage_forward); released, not pooled */
        cl_event ready;      /* completes when this replica is valid; NULL = now */
    } rep[DB_ROLE_COUNT];
} db_buffer;

/* Prepares an empty item of `bytes` bytes (at least 1) named `name`; no
** memory is taken until a copy is needed, so that an item a fused stage never
** makes costs nothing. */
db_status db_buffer_init(db_buffer *buf, db_context *ctx, const char *name, size_t bytes);

/* Releases replicas and events and returns the host block to the pool
** unless it was lent. */
void db_buffer_release(db_buffer *buf);

/* Makes `block` (an image's pixels) the item's host copy, valid or not, so
** that the input needs no copy in and the result none out; the block stays
** the image's. */
void db_buffer_lend(db_buffer *buf, db_host_block *block, bool valid);

/* The item's host staging block, taken from the pool on first use; NULL with
** an error when there is no memory for it. */
db_host_block *db_buffer_host(db_buffer *buf);

/* The replica on `dev` (created on first use, contents undefined until valid). */
cl_mem db_buffer_mem(db_buffer *buf, db_device *dev);

/* Makes the copy on `dev` valid, enqueuing transfers as needed, and returns in
** `*ready` a retained event of `dev`'s context to wait for (NULL if none). */
db_status db_buffer_fetch(db_buffer *buf, db_device *dev, struct db_profile *prof, cl_event *ready);

/* Records that `dev` wrote the item; `done` completes when the write does. */
void db_buffer_written(db_buffer *buf, db_device *dev, cl_event done);

/* Makes the host copy valid and returns a retained event to wait for (NULL if none). */
db_status db_buffer_fetch_host(db_buffer *buf, struct db_profile *prof, cl_event *ready);

/* Returns an event of `dev`'s context that completes when `ev` does (retained;
** NULL when ev is NULL). Across contexts the host waits for ev and returns
** NULL: a user event set from ev's completion callback let the dependent
** command start 1 to 20 ms late with NVIDIA's driver and PoCL
** (bench/results/planner-h100.md), against microseconds for the wait. */
db_status db_event_bridge(db_device *dev, cl_event ev, cl_event *out);

/* Device memory of `bytes` bytes on `dev`, recycled through the device's pool:
** allocating a page's buffers on a GPU costs more than processing it. On
** failure returns NULL with an error message. */
cl_mem db_device_alloc(db_device *dev, size_t bytes, const char *what);

/* Returns memory from db_device_alloc to the device's pool. */
void db_device_free(db_device *dev, cl_mem mem);

/* Releases every pooled buffer of `dev`. */
void db_device_pool_drain(db_device *dev);

#endif
