/*
** g4_device.h — a packed bitmap coded as CCITT Group 4 on the device that
** holds it (runtime/g4_device.c, cl/g4.cl).
*/
#ifndef DB_G4_DEVICE_H
#define DB_G4_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <CL/cl.h>
#include "runtime/device.h"

struct db_profile;

/* Codes `rows` (height rows of width pixels on `d`, MSB first with 1 for
** white, `stride` bytes apart), after `wait` (may be NULL), into the stream
** db_g4_encode writes for the same rows: a malloc'ed buffer of *size bytes in
** *out. The kernels and the copy are recorded in `prof` under `item`. A page
** whose worst case needs more than 128 MB of the device, or whose rows' lists
** of changes do not fit its local memory, is left to the host: DB_OK with
** *out NULL. */
db_status db_g4_encode_device(db_device *d, cl_mem rows, int width, int height, size_t stride, cl_event wait,
                              struct db_profile *prof, const char *item, uint8_t **out, size_t *size);

#endif
