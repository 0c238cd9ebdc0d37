/*
** program.h — OpenCL C sources, their per-device programs and the on-disk binary cache.
**
** Each file of cl/ is embedded into the library at build time; with DOCBIN_KERNEL_DIR
** set, the files are read from that directory instead (for kernel development).
** A program is built once per device per process. Built binaries are cached in
** $DOCBIN_CACHE_DIR (default $XDG_CACHE_HOME/docbin, "off" disables), keyed by a
** SHA-256 of the source, the build options, the platform, the device name and the
** driver version. Entries are written atomically and verified by their own
** checksum; a corrupt or mismatched entry is rebuilt from source, never trusted.
*/
#ifndef DB_PROGRAM_H
#define DB_PROGRAM_H

#include <CL/cl.h>
#include "runtime/device.h"

/* One embedded OpenCL C source file. */
typedef struct db_cl_source {
    const char *name; /* file name in cl/, e.g. "window_stats.cl" */
    const char *text;
} db_cl_source;

/* The embedded sources, generated at build time from cl/ (see cl/embed.py). */
extern const db_cl_source db_cl_sources[];
extern const int db_cl_source_count;

/* The full text of cl/`name` as programs are built from it (the common prelude,
** then the file: from DOCBIN_KERNEL_DIR when set, else embedded), malloc'd;
** NULL with an error message when there is no such file. The planner hashes it
** to tell when a calibration was measured with other kernels. */
char *db_kernel_source(const char *name);

/* A built program of one device, and the kernels created from it. */
struct db_program {
    struct db_program *next;
    char source[64];     /* file name in cl/ */
    char hash[65];       /* SHA-256 of the full source text and build options */
    cl_program program;
    int n_kernels;
    struct {
        char name[64];
        cl_kernel kernel;
    } kernels[32];
};

/* Returns the kernel `kernel` of cl/`source` built for `dev`, building the program
** (or loading it from the binary cache) on first use. NULL with an error message,
** including the device's build log, on failure. Not thread-safe per device. */
cl_kernel db_kernel_get(db_device *dev, const char *source, const char *kernel);

/* Returns the program of cl/`source` for `dev`, built as db_kernel_get does. */
db_status db_program_get(db_device *dev, const char *source, struct db_program **out);

/* Releases every program and kernel of `dev`. */
void db_program_release_all(db_device *dev);

/* The binary cache directory in use, or NULL when the cache is off. */
const char *db_cache_dir(void);

#endif
