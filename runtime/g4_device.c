/*
** g4_device.c — a result's Group 4 stream coded on the GPU that packed it
** (cl/g4.cl), so that a Group 4 TIFF costs the host no coding: a codec
** thread only stores the stream. It is runtime/g4.c's, byte for byte.
*/
#include <stdlib.h>
#include <string.h>
#include "runtime/buffer.h"
#include "runtime/codec.h"
#include "runtime/g4_device.h"
#include "runtime/profile.h"
#include "runtime/program.h"
#include "runtime/util.h"

enum {
    SCAN_ITEMS = 256,                  /* cl/g4.cl's G4_SCAN */
    ROW_ITEMS = 64,                    /* cl/g4.cl's G4_LOCAL: a row's work-group */
    PLACE_ITEMS = 64,                  /* work-items moving one row's words */
    FIRST_READ = 1 << 18,              /* bytes read with the length: a text page's whole stream */
    MAX_ROOM = 128 << 20               /* bytes of the worst case coded on the device; larger on the host */
};

/* Sets a kernel's arguments from a list of (size, pointer) pairs. */
static cl_int set_args(cl_kernel k, int n, const size_t *sizes, const void *const *values)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n; i++)
        err |= clSetKernelArg(k, (cl_uint)i, sizes[i], values[i]);
    return err;
}

db_status db_g4_encode_device(db_device *d, cl_mem rows, int width, int height, size_t stride, cl_event wait,
                              db_profile *prof, const char *item, uint8_t **out, size_t *size)
{
    *out = NULL;
    *size = 0;
    /* A row's codes take at most 16 bits a pixel and 64 more (runtime/g4.c:
    ** at most 13 bits a change, 4 for a pass over two changes above); the
    ** last row adds the 24-bit end block. Each row gets that room, in words. */
    cl_int cap = (cl_int)((16 * (size_t)width + 64 + 24 + 31) / 32);
    size_t words = (size_t)cap * (size_t)height + 2;
    /* A row's work-group holds both rows' lists of changes, 16-bit positions. */
    size_t lists = 2 * ((size_t)width + 2) * sizeof(cl_ushort);
    if (words * sizeof(cl_uint) > MAX_ROOM || width + 2 > 65535 || lists + 1024 > d->local_mem)
        return DB_OK; /* the host codes it, to the same stream */
    uint32_t codes[DB_G4_CODES];
    db_g4_codes(codes);
    cl_kernel code = db_kernel_get(d, "g4.cl", "g4_code"), scan = db_kernel_get(d, "g4.cl", "g4_scan"),
              place = db_kernel_get(d, "g4.cl", "g4_place");
    if (!code || !scan || !place)
        return db_error_status();
    cl_mem table = db_device_alloc(d, sizeof codes, "the Group 4 codes"),
           bits = db_device_alloc(d, (size_t)height * sizeof(cl_uint), "the Group 4 row lengths"),
           offsets = db_device_alloc(d, ((size_t)height + 1) * sizeof(cl_ulong), "the Group 4 row offsets"),
           coded = db_device_alloc(d, words * sizeof(cl_uint), "the Group 4 rows"),
           stream = db_device_alloc(d, words * sizeof(cl_uint), "the Group 4 stream");
    size_t first = words * sizeof(cl_uint) < FIRST_READ ? words * sizeof(cl_uint) : FIRST_READ;
    uint8_t *host = malloc(words * sizeof(cl_uint));
    cl_event ev[5] = {0};
    cl_ulong total = 0; /* the stream's bits: offsets[height] */
    cl_int err = CL_SUCCESS, w = width, h = height, s = (cl_int)stride;
    db_status st = DB_OK;
    if (!table || !bits || !offsets || !coded || !stream || !host) {
        st = host ? db_error_status() : db_fail(DB_ERR_NOMEM, "out of memory for a Group 4 stream");
        goto done;
    }
    const cl_uint zero = 0;
    const size_t code_sizes[] = {sizeof rows, sizeof w, sizeof h, sizeof s, sizeof table, sizeof cap, sizeof coded,
                                 sizeof bits, lists};
    const void *code_args[] = {&rows, &w, &h, &s, &table, &cap, &coded, &bits, NULL};
    const size_t scan_sizes[] = {sizeof bits, sizeof h, sizeof offsets};
    const void *scan_args[] = {&bits, &h, &offsets};
    const size_t place_sizes[] = {sizeof coded, sizeof cap, sizeof bits, sizeof offsets, sizeof stream};
    const void *place_args[] = {&coded, &cap, &bits, &offsets, &stream};
    size_t local = ROW_ITEMS, global = (size_t)height * ROW_ITEMS, scan_size = SCAN_ITEMS,
           place_local = PLACE_ITEMS, place_global = (size_t)height * PLACE_ITEMS;
    err = clEnqueueWriteBuffer(d->compute, table, CL_FALSE, 0, sizeof codes, codes, wait ? 1 : 0,
                               wait ? &wait : NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueFillBuffer(d->compute, stream, &zero, sizeof zero, 0, words * sizeof(cl_uint), 0, NULL, NULL);
    if (err == CL_SUCCESS && (err = set_args(code, 9, code_sizes, code_args)) == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, code, 1, NULL, &global, &local, 0, NULL, &ev[0]);
    if (err == CL_SUCCESS && (err = set_args(scan, 3, scan_sizes, scan_args)) == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, scan, 1, NULL, &scan_size, &scan_size, 0, NULL, &ev[1]);
    if (err == CL_SUCCESS && (err = set_args(place, 5, place_sizes, place_args)) == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, place, 1, NULL, &place_global, &place_local, 0, NULL, &ev[2]);
    /* The length and, with it, as much of the stream as a page's usually is:
    ** one wait. */
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(d->compute, offsets, CL_FALSE, (size_t)height * sizeof(cl_ulong), sizeof total,
                                  &total, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(d->compute, stream, CL_TRUE, 0, first, host, 0, NULL, &ev[3]);
    size_t bytes = (size_t)((total + 7) / 8);
    if (err == CL_SUCCESS && bytes > first && bytes <= words * sizeof(cl_uint))
        err = clEnqueueReadBuffer(d->compute, stream, CL_TRUE, first, db_round_up(bytes, 4) - first, host + first, 0,
                                  NULL, &ev[4]);
    if (err != CL_SUCCESS)
        goto done;
    if (total < 24 || bytes > words * sizeof(cl_uint)) {
        st = db_fail(DB_ERR_CL, "the GPU's Group 4 stream has an impossible length (%llu bits)",
                     (unsigned long long)total);
        goto done;
    }
    for (int i = 0; i < 3; i++)
        db_profile_add(prof, ev[i], DB_REC_TO_HOST, item, "g4", d, 0);
    db_profile_add(prof, ev[3], DB_REC_TO_HOST, item, "copy", d, bytes < first ? bytes : first);
    if (ev[4])
        db_profile_add(prof, ev[4], DB_REC_TO_HOST, item, "copy", d, bytes - first);
    /* Words whose most significant bit comes first, as bytes in order. */
    for (size_t i = 0; i < (bytes + 3) / 4; i++) {
        uint32_t v;
        memcpy(&v, host + 4 * i, 4);
        host[4 * i] = (uint8_t)(v >> 24), host[4 * i + 1] = (uint8_t)(v >> 16);
        host[4 * i + 2] = (uint8_t)(v >> 8), host[4 * i + 3] = (uint8_t)v;
    }
    *out = host;
    *size = bytes;
    host = NULL;
done:
    if (err != CL_SUCCESS) {
        clFinish(d->compute);
        st = db_cl_check(err, "coding the result as Group 4", d);
    }
    for (int i = 0; i < 5; i++)
        if (ev[i])
            clReleaseEvent(ev[i]);
    free(host);
    db_device_free(d, table);
    db_device_free(d, bits);
    db_device_free(d, offsets);
    db_device_free(d, coded);
    db_device_free(d, stream);
    return st;
}
