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

db_status db_g4_encode_device(db_device *d, cl_mem rows, int width, int height, size_t stride, cl_event wait,
                              db_profile *prof, const char *item, uint8_t **out, size_t *size)
{
    *out = NULL;
    *size = 0;
    /* At most 16 bits a pixel and 64 a row (runtime/g4.c: 13 bits a change
    ** at most, 4 a pass over two changes above), the end block, and a word of
    ** slack for the OR past a row's last word. */
    size_t words = ((16 * (size_t)width + 64) * (size_t)height + 24) / 32 + 2;
    uint32_t codes[DB_G4_CODES];
    db_g4_codes(codes);
    cl_kernel count = db_kernel_get(d, "g4.cl", "g4_count"), scan = db_kernel_get(d, "g4.cl", "g4_scan"),
              write = db_kernel_get(d, "g4.cl", "g4_write");
    if (!count || !scan || !write)
        return db_error_status();
    cl_mem table = db_device_alloc(d, sizeof codes, "the Group 4 codes"),
           bits = db_device_alloc(d, (size_t)height * sizeof(cl_uint), "the Group 4 row lengths"),
           offsets = db_device_alloc(d, (size_t)height * sizeof(cl_ulong) + sizeof(cl_ulong), "the Group 4 offsets"),
           stream = db_device_alloc(d, words * sizeof(cl_uint), "the Group 4 stream");
    uint32_t *host = malloc(words * sizeof *host);
    cl_event ev[5] = {0};
    cl_ulong total = 0;
    cl_int err = CL_SUCCESS;
    db_status st = DB_OK;
    if (!table || !bits || !offsets || !stream || !host) {
        st = host ? db_error_status() : db_fail(DB_ERR_NOMEM, "out of memory for a Group 4 stream");
        goto done;
    }
    cl_int w = width, h = height, s = (cl_int)stride;
    const cl_uint zero = 0;
    size_t at_total = (size_t)height * sizeof(cl_ulong);
    err = clEnqueueWriteBuffer(d->compute, table, CL_FALSE, 0, sizeof codes, codes, wait ? 1 : 0,
                               wait ? &wait : NULL, &ev[0]);
    if (err == CL_SUCCESS)
        err = clEnqueueFillBuffer(d->compute, stream, &zero, sizeof zero, 0, words * sizeof(cl_uint), 0, NULL, NULL);
    err |= clSetKernelArg(count, 0, sizeof rows, &rows);
    err |= clSetKernelArg(count, 1, sizeof w, &w);
    err |= clSetKernelArg(count, 2, sizeof h, &h);
    err |= clSetKernelArg(count, 3, sizeof s, &s);
    err |= clSetKernelArg(count, 4, sizeof table, &table);
    err |= clSetKernelArg(count, 5, sizeof bits, &bits);
    size_t local = 64, global = db_round_up((size_t)height, local), scan_size = SCAN_ITEMS;
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, count, 1, NULL, &global, &local, 0, NULL, &ev[1]);
    err |= clSetKernelArg(scan, 0, sizeof bits, &bits);
    err |= clSetKernelArg(scan, 1, sizeof h, &h);
    err |= clSetKernelArg(scan, 2, sizeof offsets, &offsets);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, scan, 1, NULL, &scan_size, &scan_size, 0, NULL, &ev[2]);
    err |= clSetKernelArg(write, 0, sizeof rows, &rows);
    err |= clSetKernelArg(write, 1, sizeof w, &w);
    err |= clSetKernelArg(write, 2, sizeof h, &h);
    err |= clSetKernelArg(write, 3, sizeof s, &s);
    err |= clSetKernelArg(write, 4, sizeof table, &table);
    err |= clSetKernelArg(write, 5, sizeof offsets, &offsets);
    err |= clSetKernelArg(write, 6, sizeof stream, &stream);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->compute, write, 1, NULL, &global, &local, 0, NULL, &ev[3]);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(d->compute, offsets, CL_TRUE, at_total, sizeof total, &total, 0, NULL, NULL);
    size_t bytes = (size_t)((total + 7) / 8);
    if (err == CL_SUCCESS && (total < 24 || bytes > words * sizeof(cl_uint)))
        st = db_fail(DB_ERR_CL, "the GPU's Group 4 stream has an impossible length (%llu bits)",
                     (unsigned long long)total);
    if (err == CL_SUCCESS && st == DB_OK)
        err = clEnqueueReadBuffer(d->compute, stream, CL_TRUE, 0, db_round_up(bytes, 4), host, 0, NULL, &ev[4]);
    if (err != CL_SUCCESS) {
        clFinish(d->compute);
        st = db_cl_check(err, "coding the result as Group 4", d);
    }
    if (st == DB_OK) {
        for (int i = 1; i < 4; i++)
            db_profile_add(prof, ev[i], DB_REC_TO_HOST, item, "g4", d, 0);
        db_profile_add(prof, ev[4], DB_REC_TO_HOST, item, "copy", d, bytes);
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
    }
done:
    for (int i = 0; i < 5; i++)
        if (ev[i])
            clReleaseEvent(ev[i]);
    free(host);
    db_device_free(d, table);
    db_device_free(d, bits);
    db_device_free(d, offsets);
    db_device_free(d, stream);
    return st;
}
