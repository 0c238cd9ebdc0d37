/*
** staging.h — host staging memory: the pixels of large images and the host
** copies of a run's items, from one process-wide pool, pinned through the
** first bound GPU that does not share host memory, so that a page is uploaded
** from where it was decoded and a result downloaded into the image returned.
*/
#ifndef DB_STAGING_H
#define DB_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <CL/cl.h>

/* One block of staging memory. */
typedef struct db_host_block {
    struct db_host_block *next;
    size_t bytes;
    void *ptr;
    cl_mem pinned; /* the ALLOC_HOST_PTR buffer backing ptr, or NULL */
} db_host_block;

/* A block of at least `bytes` bytes (contents undefined), or NULL when memory
** is short: a free one of its size class, else a new one, pinned while the
** pool pins (during a batch: ordinary memory at once, and a pinned block made
** on a thread of the pool's own for a later request). */
db_host_block *db_host_take(size_t bytes);

/* Returns the block whose memory starts at `ptr` to the pool; false (and
** nothing done) when no block in use starts there. */
bool db_host_give(const void *ptr);

/* The block in use whose memory starts at `ptr`, or NULL: whether an image's
** pixels are staging memory a run can use as they lie. */
db_host_block *db_host_find(const void *ptr);

/* A context opens, or closes (with the last one, the free blocks are released). */
void db_host_pool_open(void);
void db_host_pool_close(void);

/* A device that does not share host memory was bound: new blocks are pinned
** through its context (`transfer` is one of its queues), unless another
** device pins them already. */
void db_host_pool_pin(cl_command_queue transfer);

/* Free blocks kept for reuse, in bytes, before the oldest are released. */
#define DB_HOST_KEEP ((size_t)256 << 20)

/* A batch begins, keeping up to `keep` bytes of free blocks (what it may hold,
** so that its pages never pin memory anew) and pinning on the side; or ends
** (0: DB_HOST_KEEP, pinning as blocks are taken). */
void db_host_pool_batch(size_t keep);

#endif
