/*
** g4_device.c — a result's Group 4 stream coded on the GPU that packed it
** (cl/g4.cl), so that a TIFF output costs the host no coding and a fifth of
** the bitmap's bytes come back. The stream is runtime/g4.c's, byte for byte.
*/
#include <stdlib.h>
#include <string.h>
#include "runtime/buffer.h"
#include "runtime/codec.h"
#include "runtime/g4_device.h"
#include "runtime/profile.h"
#include "runtime/program.h"
#include "runtime/util.h"

enum { SCAN_ITEMS = 256 }; /* cl/g4.cl's G4_SCAN */

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
    uint32_t codes[DB_G4_CODES];
    db_g4_codes(codes);
    cl_kernel count = db_kernel_get(d, "g4.cl", "g4_count"), scan = db_kernel_get(d, "g4.cl", "g4_scan"),
              write = db_kernel_get(d, "g4.cl", "g4_write");
    if (!count || !scan || !write)
        return db_error_status();
    cl_mem table = db_device_alloc(d, sizeof codes, "the Group 4 codes"),
           bits = db_device_alloc(d, (size_t)height * sizeof(cl_uint), "the Group 4 row lengths"),
           offsets = db_device_alloc(d, ((size_t)height + 1) * sizeof(cl_ulong), "the Group 4 row offsets"),
           stream = NULL;
    uint32_t *host = NULL;
    cl_event ev[4] = {0};
    cl_ulong total = 0; /* the stream's bits, with its end block: offsets[height] */
    cl_int err = CL_SUCCESS, w = width, h = height, s = (cl_int)stride;
    db_status st = DB_OK;
    if (!table || !bits || !offsets) {
        st = db_error_status();
        goto done;
    }
    const size_t row_sizes[] = {sizeof rows, sizeof w, sizeof h, sizeof s, sizeof table, sizeof bits};
    const void *count_args[] = {&rows, &w, &h, &s, &table, &bits};
    const size_t scan_sizes[] = {sizeof bits, sizeof h, sizeof offsets};
    const void *scan_args[] = {&bits, &h, &offsets};
    size_t local = 64, global = db_round_up((size_t)height, local), scan_size = SCAN_ITEMS;
    err = clEnqueueWriteBuffer(d->compute, table, CL_FALSE, 0, sizeof codes, codes, wait ? 1 : 0,
                               wait ? &wait : NULL, NULL);
    if (err == CL_SUCCESS && (err = set_args(count, 6, row_sizes, count_args)) == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, count, 1, NULL, &global, &local, 0, NULL, &ev[0]);
    if (err == CL_SUCCESS && (err = set_args(scan, 3, scan_sizes, scan_args)) == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, scan, 1, NULL, &scan_size, &scan_size, 0, NULL, &ev[1]);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(d->compute, offsets, CL_TRUE, (size_t)height * sizeof(cl_ulong), sizeof total,
                                  &total, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        goto done;
    /* The stream in whole words, and a word for the OR past the last; its
    ** buffer a power of two, so that pages of one kind reuse the pool's. */
    size_t bytes = (size_t)((total + 7) / 8), words = (size_t)(total / 32) + 2, room = (size_t)1 << 16;
    while (room < words * sizeof(cl_uint))
        room *= 2;
    if (!(stream = db_device_alloc(d, room, "the Group 4 stream")) || !(host = malloc(words * sizeof *host))) {
        st = stream ? db_fail(DB_ERR_NOMEM, "out of memory for a Group 4 stream of %zu bytes", bytes)
                    : db_error_status();
        goto done;
    }
    const cl_uint zero = 0;
    const size_t write_sizes[] = {sizeof rows, sizeof w, sizeof h, sizeof s, sizeof table, sizeof offsets,
                                  sizeof stream};
    const void *write_args[] = {&rows, &w, &h, &s, &table, &offsets, &stream};
    err = clEnqueueFillBuffer(d->compute, stream, &zero, sizeof zero, 0, words * sizeof(cl_uint), 0, NULL, NULL);
    if (err == CL_SUCCESS && (err = set_args(write, 7, write_sizes, write_args)) == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, write, 1, NULL, &global, &local, 0, NULL, &ev[2]);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(d->compute, stream, CL_TRUE, 0, db_round_up(bytes, 4), host, 0, NULL, &ev[3]);
    if (err != CL_SUCCESS)
        goto done;
    for (int i = 0; i < 3; i++)
        db_profile_add(prof, ev[i], DB_REC_TO_HOST, item, "g4", d, 0);
    db_profile_add(prof, ev[3], DB_REC_TO_HOST, item, "copy", d, bytes);
    /* Words whose most significant bit comes first, as bytes in order. */
    uint8_t *b = (uint8_t *)host;
    for (size_t i = 0; i < (bytes + 3) / 4; i++) {
        uint32_t v = host[i];
        b[4 * i] = (uint8_t)(v >> 24), b[4 * i + 1] = (uint8_t)(v >> 16);
        b[4 * i + 2] = (uint8_t)(v >> 8), b[4 * i + 3] = (uint8_t)v;
    }
    *out = b;
    *size = bytes;
    host = NULL;
done:
    if (err != CL_SUCCESS) {
        clFinish(d->compute);
        st = db_cl_check(err, "coding the result as Group 4", d);
    }
    for (int i = 0; i < 4; i++)
        if (ev[i])
            clReleaseEvent(ev[i]);
    free(host);
    db_device_free(d, table);
    db_device_free(d, bits);
    db_device_free(d, offsets);
    db_device_free(d, stream);
    return st;
}
