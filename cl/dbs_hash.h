/*
** dbs_hash.h — the counter-based generator of the DBS halftoning: the
** MurmurHash3 finaliser of index * 0x9E3779B9 + seed (mod 2^32). One text for
** the host (algorithms/dbs.h includes it) and the kernels (cl/dbs.cl), so
** every device draws the same numbers.
*/
#ifndef DB_DBS_HASH_H
#define DB_DBS_HASH_H

#ifdef __OPENCL_VERSION__
typedef uint db_dbs_u32;
#define DB_DBS_INLINE
#else
#include <stdint.h>
typedef uint32_t db_dbs_u32;
#define DB_DBS_INLINE static inline
#endif

DB_DBS_INLINE db_dbs_u32 db_dbs_hash(db_dbs_u32 index, db_dbs_u32 seed)
{
    db_dbs_u32 x = index * 0x9E3779B9u + seed;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

#endif
