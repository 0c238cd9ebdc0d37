/*
** test_kernels.c — every OpenCL source of cl/ builds on the devices of both roles
** (a build error names the file and prints the build log), including sources no
** algorithm of the current test runs reaches; and the kernel that packs a GPU's
** result (cl/pack.cl), which runs only where a device does not share host
** memory, against packing written here, on each role's device.
*/
#include "runtime/program.h"
#include "tests/testutil.h"

/* pack_bits on `dev` for a w x h image of arbitrary bytes: the bytes that
** differ from the reference packing (white where a byte is 128 or more, the
** first pixel in the top bit, the padding bits 0). */
static size_t pack_on(db_device *dev, int w, int h, uint32_t *rng)
{
    size_t n = (size_t)w * (size_t)h, row_bytes = ((size_t)w + 7) / 8, bad = 0;
    uint8_t *in = malloc(n), *out = malloc(row_bytes * (size_t)h);
    for (size_t i = 0; i < n; i++)
        in[i] = (uint8_t)test_random(rng);
    cl_int err;
    cl_kernel k = db_kernel_get(dev, "pack.cl", "pack_bits");
    cl_mem a = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, in, &err);
    cl_mem b = clCreateBuffer(dev->context, CL_MEM_WRITE_ONLY, row_bytes * (size_t)h, NULL, &err);
    cl_int cw = w, ch = h, crow = (cl_int)row_bytes;
    const size_t local[2] = {64, 1}, global[2] = {(row_bytes + 63) / 64 * 64, (size_t)h};
    err = !k || !a || !b;
    if (!err)
        err = clSetKernelArg(k, 0, sizeof a, &a) | clSetKernelArg(k, 1, sizeof cw, &cw) |
              clSetKernelArg(k, 2, sizeof ch, &ch) | clSetKernelArg(k, 3, sizeof crow, &crow) |
              clSetKernelArg(k, 4, sizeof b, &b);
    if (!err)
        err = clEnqueueNDRangeKernel(dev->compute, k, 2, NULL, global, local, 0, NULL, NULL);
    if (!err)
        err = clEnqueueReadBuffer(dev->compute, b, CL_TRUE, 0, row_bytes * (size_t)h, out, 0, NULL, NULL);
    for (int y = 0; y < h; y++)
        for (size_t byte = 0; byte < row_bytes; byte++) {
            unsigned want = 0;
            for (size_t x = 8 * byte; x < 8 * byte + 8; x++)
                want = want << 1 | (x < (size_t)w && in[(size_t)y * w + x] >= 128);
            bad += err || out[(size_t)y * row_bytes + byte] != want;
        }
    if (a)
        clReleaseMemObject(a);
    if (b)
        clReleaseMemObject(b);
    free(in);
    free(out);
    return bad;
}

int main(void)
{
    db_context *ctx = test_open_context();
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        for (int i = 0; i < db_cl_source_count; i++) {
            struct db_program *p;
            db_status st = db_program_get(db_context_device(ctx, (db_role)r), db_cl_sources[i].name, &p);
            CHECK(st == DB_OK, "%s on the %s role: %s", db_cl_sources[i].name, db_role_name((db_role)r),
                  db_error_message());
        }
    printf("%d sources on 2 roles\n", db_cl_source_count);
    static const int sizes[][2] = {{1, 1}, {7, 3}, {8, 2}, {9, 5}, {63, 4}, {64, 1}, {65, 7}, {517, 3}, {2516, 9}};
    uint32_t rng = 5;
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t bad = pack_on(db_context_device(ctx, (db_role)r), sizes[s][0], sizes[s][1], &rng);
            CHECK(bad == 0, "pack_bits on the %s role, %dx%d: %zu bytes differ from the reference",
                  db_role_name((db_role)r), sizes[s][0], sizes[s][1], bad);
        }
    printf("pack_bits on 2 roles, %zu sizes\n", sizeof sizes / sizeof sizes[0]);
    db_context_close(ctx);
    return test_result("kernels");
}
