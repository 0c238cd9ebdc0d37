/*
** lzw_device.h — TIFF LZW strips decoded on a GPU (runtime/lzw_device.c,
** cl/lzw.cl) for the TIFF reader, so that a batch of LZW pages does not wait
** on its codec threads: they read the strips' bytes, the GPU decodes them.
**
** One device at a time decodes for the whole process: a batch binds its first
** GPU lane's device while it runs. Any thread may decode (each call takes a
** queue and kernels of its own), and a strip the device does not decode, as
** the host decoder would, is left to the host.
*/
#ifndef DB_LZW_DEVICE_H
#define DB_LZW_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "runtime/codec.h"
#include "runtime/device.h"

/* Makes `dev` the decoding device (building cl/lzw.cl for it), unless
** DOCBIN_LZW=host or one is bound already; a device that shares host memory
** (PoCL) only with DOCBIN_LZW=device, as the tests bind it. DB_OK also when
** nothing is bound; an error only for a bad DOCBIN_LZW. */
db_status db_lzw_device_bind(db_device *dev);

/* Stops decoding on `dev` (if it is the bound device), after the decodes
** under way: before its context closes. */
void db_lzw_device_unbind(db_device *dev);

/* db_lzw_offload while a device is bound: decodes `strips` into `out` on it. */
bool db_lzw_device_decode(const db_lzw_strips *strips, uint8_t *out, bool *decoded);

#endif
