/*
 * hseed.h - seeds for the hash tables that hold ids and keys read from
 * files (pb_map, the reader's idmap).  A file is untrusted: with a fixed
 * hash, ids crafted to collide made reading quadratic (80 k strings: 5.7 s
 * against 0.15 s).  Each table takes its own seed from here (random per
 * process, different per table) and mixes every key with it, so no file
 * can aim at a table's slots.  Results never depend on the seed: no
 * output follows a table's slot order.
 */
#ifndef PRISM_BASE_HSEED_H
#define PRISM_BASE_HSEED_H

#include <stddef.h>
#include <stdint.h>

/* A new table's seed (thread-safe). */
uint64_t pb_hash_seed(void);

/* key mixed with seed, every bit of both in every bit of the result. */
static inline uint64_t pb_hash_mix(uint64_t key, uint64_t seed)
{
    uint64_t k = key ^ seed;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

#endif
