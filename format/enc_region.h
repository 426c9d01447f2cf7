/*
 * enc_region.h - the bytes of a REGIONS record (docs/FORMAT.md §7.3) and
 * the room a batch of them may take in a chunk (internal).  Shared by
 * prism_enc_enter/exit (encode.c) and the writer thread's batch encoder
 * (libcollect/encode_run.c), so that both write the same bytes.
 *
 * A record is a word, delta << 1 | exit, and for an enter the name id;
 * both are CBOR uints in shortest form (the bytes cbor_encode_uint gives).
 */
#ifndef PRISM_ENC_REGION_H
#define PRISM_ENC_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "prism/profile.h"

/* The most bytes one region record takes: a 9-byte word, a 5-byte name. */
#define ENC_REGION_MAX 14u

static inline size_t enc_uint_size(uint64_t v)
{
    return v < 24 ? 1 : v <= UINT8_MAX ? 2 : v <= UINT16_MAX ? 3 : v <= UINT32_MAX ? 5 : 9;
}

static inline void enc_be_store(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* v in shortest form at p, whose size n == enc_uint_size(v) is known. */
static inline void enc_put_uint_n(uint8_t *p, uint64_t v, size_t n)
{
    switch (n) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: p[0] = 0x18; p[1] = (uint8_t)v; break;
    case 3: p[0] = 0x19; enc_be_store(p + 1, v, 2); break;
    case 5: p[0] = 0x1a; enc_be_store(p + 1, v, 4); break;
    default: p[0] = 0x1b; enc_be_store(p + 1, v, 8); break;
    }
}

/* v in shortest form at p; the bytes written (enc_uint_size(v)). */
static inline size_t enc_put_uint(uint8_t *p, uint64_t v)
{
    if (v < 24) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v <= UINT8_MAX) {
        p[0] = 0x18;
        p[1] = (uint8_t)v;
        return 2;
    }
    if (v <= UINT16_MAX) {
        p[0] = 0x19;
        enc_be_store(p + 1, v, 2);
        return 3;
    }
    if (v <= UINT32_MAX) {
        p[0] = 0x1a;
        enc_be_store(p + 1, v, 4);
        return 5;
    }
    p[0] = 0x1b;
    enc_be_store(p + 1, v, 8);
    return 9;
}

/* The region word for ts after `last`: the delta clamped at zero below and
 * at 2^63 - 1 above. */
static inline uint64_t enc_region_word(uint64_t last, uint64_t ts, unsigned exit_bit)
{
    uint64_t d = ts > last ? ts - last : 0;
    if (d > (UINT64_MAX >> 1))
        d = UINT64_MAX >> 1;
    return d << 1 | exit_bit;
}

/* Bytes a record may still take in e: the buffer's room and the payload
 * limit, whichever is less.  (The element count cannot reach UINT32_MAX
 * first: every element takes a byte, and a payload is at most 1 MiB.) */
static inline size_t enc_room(const prism_enc *e)
{
    size_t buf = e->cap - e->pos, used = e->pos - e->payload_pos;
    size_t pay = used < PRISM_MAX_CHUNK_PAYLOAD ? PRISM_MAX_CHUNK_PAYLOAD - used : 0;
    return buf < pay ? buf : pay;
}

#endif
