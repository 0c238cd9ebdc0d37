/*
** test_kernels.c — every OpenCL source of cl/ builds on the devices of both roles
** (a build error names the file and prints the build log), including sources no
** algorithm of the current test runs reaches.
*/
#include "runtime/program.h"
#include "tests/testutil.h"

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
    db_context_close(ctx);
    return test_result("kernels");
}
