/*
** device.h — OpenCL devices and the two roles, `cpu` and `gpu`, they are bound to.
**
** Every stage of every algorithm runs on a role; a role is bound to one OpenCL
** device (DESIGN.md "Device role"). Each bound role owns its own cl_context with
** an in-order compute queue and a separate transfer queue, so a role bound to
** PoCL and a role bound to an NVIDIA GPU are handled the same way, and two roles
** bound to the same device still exercise the cross-context data path.
*/
#ifndef DB_DEVICE_H
#define DB_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <CL/cl.h>
#include "runtime/error.h"

/* db_role (where a stage runs; its values index per-role arrays) and the
** context's name are public (include/docbin.h); its fields are not. */

/* "cpu" or "gpu". */
const char *db_role_name(db_role role);

/* "gpu", "cpu", "accelerator" or "other": how --list-devices names a device's type. */
const char *db_device_type_name(cl_device_type type);

/* One OpenCL device as discovered, before any context exists. */
typedef struct db_device_info {
    int platform_index;        /* P of "P:D" */
    int device_index;          /* D of "P:D", within its platform */
    cl_platform_id platform;
    cl_device_id id;
    cl_device_type type;
    char platform_name[128];
    char platform_version[128];
    char name[256];
    char driver_version[128];
    cl_uint compute_units;
    cl_ulong global_mem;
    cl_ulong max_alloc;        /* CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest one buffer may be */
    bool has_fp64;
    bool host_unified;         /* a CPU device: its buffers can alias host memory */
    char key[17];              /* 16 hex digits of a hash of platform, name, driver */
} db_device_info;

typedef struct db_program db_program;

/* A device bound to a role: its context, queues and built programs. */
typedef struct db_device {
    db_device_info info;
    db_role role;
    cl_context context;
    cl_command_queue compute;  /* in-order, profiling: stage kernels */
    cl_command_queue transfer; /* in-order, profiling: copies to and from the host */
    cl_uint mem_align;         /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes */
    size_t max_group;          /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_ulong local_mem;        /* CL_DEVICE_LOCAL_MEM_SIZE */
    db_program *programs;      /* built programs, a linked list (few per device) */
    struct db_device_block *pool; /* free device buffers (buffer.c) */
    int pool_size;
} db_device;

/* All devices of the machine and the roles bound to them. */
struct db_context {
    db_device_info *devices;
    int n_devices;
    const db_device_info *chosen[DB_ROLE_COUNT]; /* each role's device, NULL when it has none */
    char unbound_reason[DB_ROLE_COUNT][512]; /* why chosen[r] is NULL, with the fix */
    db_device *role[DB_ROLE_COUNT]; /* the chosen device with its context and queues: bound on first use
                                    ** (db_context_device), so a run opens only what its map needs */
    pthread_mutex_t bind_lock;
    bool pooled;                    /* counted by the host staging pool (buffer.c) */
    pthread_mutex_t lock;           /* held by the public calls that run on the context (runtime/api.c),
                                    ** so that threads sharing one take turns */
};

/* db_context_open and db_context_close are public (include/docbin.h): a bare
** word of a spec is matched against platform and device names case-insensitively. */

/* Lists the machine's OpenCL devices, in --list-devices order, without binding
** a role: for callers that open one context per device (--gpu-device all).
** `*devices` is malloc'd (free it); no platform gives *n == 0, not an error. */
db_status db_device_list(db_device_info **devices, int *n);

/* The device of `role`, bound now if it was not yet (an OpenCL context and
** two queues), or NULL with an error message saying how to bind one. */
db_device *db_context_device(db_context *ctx, db_role role);

/* Finds the one device that `spec` names, as db_context_open does. */
db_status db_device_match(const db_context *ctx, const char *spec, int *index);

/* Prints the devices in the layout of `clinfo -l`, with each device's roles,
** type, compute units, key and driver version. */
void db_context_print_devices(const db_context *ctx, FILE *f);

/* Checks an OpenCL return code; on failure records "<what>: <CL error> on <device>". */
db_status db_cl_check(cl_int err, const char *what, const db_device *dev);

#endif
