/*
** sha256.h — SHA-256 (FIPS 180-4), for the keys of the on-disk kernel binary
** cache: a key hashes everything a compiled program depends on, so that a
** changed source, option or driver never reuses a stale binary.
*/
#ifndef DB_SHA256_H
#define DB_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* A hash in progress. Plain data: it may be copied to hash a common prefix once. */
typedef struct db_sha256 {
    uint32_t state[8];
    uint64_t length;     /* bytes hashed so far */
    uint8_t block[64];   /* the partial block not yet compressed */
    size_t used;         /* bytes of `block` in use, < 64 */
} db_sha256;

/* Starts a new hash. */
void db_sha256_init(db_sha256 *s);

/* Hashes n more bytes; the data may come in pieces of any size. */
void db_sha256_update(db_sha256 *s, const void *data, size_t n);

/* Pads, finishes and writes the 32-byte digest; `s` must be re-initialized to reuse it. */
void db_sha256_final(db_sha256 *s, uint8_t digest[32]);

/* Writes the digest as 64 lower-case hex digits and a NUL, the form used in file names. */
void db_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif
