/*
 * itab.h - pb_itab, a hash table of indices into the caller's array: the
 * keys stay in the caller's elements, and the table holds 4 bytes a slot,
 * at most half full, where a pb_map holds 16 (key and value).  For a
 * million call paths that is 8-16 MB instead of 32-64 MB.  Open addressing
 * with linear probing; the caller says how to tell its element i by the
 * key sought (eq) and how to hash element i again when the table grows
 * (hash_of).  While every index is below 2^24 - 1 a slot also carries 8
 * bits of its element's hash, so a probe reads the caller's element only
 * when those match (1 in 256 otherwise); a larger index drops them.  A
 * zeroed pb_itab is empty.
 *
 *   size_t slot;
 *   uint32_t i = pb_itab_find(&t, h, eq, ctx, &slot);
 *   if (i == UINT32_MAX && pb_itab_add(&t, slot, n, h, hash_of, ctx))
 *       i = n++;           (add reads no element n: it may be filled after)
 *   pb_itab_free(&t);
 *
 * Indices run from 0 to UINT32_MAX - 1.  Lookups are in the header (static
 * inline, so a constant eq is inlined): the call tree's is on the hot path
 * of reading a profile.
 */
#ifndef PRISM_BASE_ITAB_H
#define PRISM_BASE_ITAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hseed.h"

#define PB_ITAB_NARROW 0x00ffffffu      /* the index bits while tagged */

typedef struct pb_itab {
    uint32_t *slot;             /* 0: empty; tag << 24 | index + 1 (wide: index + 1) */
    size_t cap, count;          /* slots (a power of two or 0); indices held */
    bool wide;                  /* an index past PB_ITAB_NARROW - 1 came: no tags */
    uint64_t seed;              /* hseed.h: set when the table is first made */
} pb_itab;

/* Does element i hold the key sought?  What is element i's hash? */
typedef bool (*pb_itab_eq)(const void *ctx, uint32_t i);
typedef uint64_t (*pb_itab_hash)(const void *ctx, uint32_t i);

/* A hash's bits mixed with the table's seed (keys made of small integers
 * hash well; keys from a file cannot aim at slots): the low ones pick the
 * first slot to probe, the top 8 are the tag. */
static inline uint64_t pb_itab_mix(const pb_itab *t, uint64_t h)
{
    return pb_hash_mix(h, t->seed);
}

/* The index of the element with the key (hash h, eq), or UINT32_MAX;
 * *slot: where it is, or where it would go (for pb_itab_add). */
static inline uint32_t pb_itab_find(const pb_itab *t, uint64_t h, pb_itab_eq eq,
                                    const void *ctx, size_t *slot)
{
    if (!t->cap) {
        *slot = 0;
        return UINT32_MAX;
    }
    uint64_t x = pb_itab_mix(t, h);
    uint32_t mask = t->wide ? UINT32_MAX : PB_ITAB_NARROW;
    uint32_t tag = t->wide ? 0 : (uint32_t)(x >> 56) << 24;
    size_t j = (size_t)x & (t->cap - 1);
    for (uint32_t v; (v = t->slot[j]) != 0; j = (j + 1) & (t->cap - 1))
        if ((v & ~mask) == tag && eq(ctx, (v & mask) - 1)) {
            *slot = j;
            return (v & mask) - 1;
        }
    *slot = j;
    return UINT32_MAX;
}

/* Add index i (hash h) at the slot pb_itab_find gave when it missed, the
 * table grown first (every index placed again by hash_of) when it would
 * pass half full or i is too large for tags; false without memory, the
 * table as it was. */
bool pb_itab_add(pb_itab *t, size_t slot, uint32_t i, uint64_t h, pb_itab_hash hash_of,
                 const void *ctx);
/* Put index i in the slot where pb_itab_find found another with the same
 * key; false without memory (the table as it was). */
bool pb_itab_replace(pb_itab *t, size_t slot, uint32_t i, pb_itab_hash hash_of,
                     const void *ctx);
/* Room for n indices without growing again; false without memory. */
bool pb_itab_reserve(pb_itab *t, size_t n, pb_itab_hash hash_of, const void *ctx);
/* The table released; it is empty (and usable) again. */
void pb_itab_free(pb_itab *t);

#endif
