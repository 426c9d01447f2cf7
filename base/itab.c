/*
 * itab.c - pb_itab, a hash table of indices (see itab.h).
 */
#include "itab.h"

#include <stdlib.h>

#define ITAB_FIRST 16u
#define ITAB_MAX_CAP ((size_t)1 << 33)     /* 2^32 - 1 indices, half full */

/* A slot's value for index i of hash h. */
static uint32_t slot_value(const pb_itab *t, bool wide, uint32_t i, uint64_t h)
{
    return wide ? i + 1 : (uint32_t)(pb_itab_mix(t, h) >> 56) << 24 | (i + 1);
}

/* The first empty slot from h's. */
static size_t free_slot(const pb_itab *t, uint64_t h)
{
    size_t j = (size_t)pb_itab_mix(t, h) & (t->cap - 1);
    while (t->slot[j])
        j = (j + 1) & (t->cap - 1);
    return j;
}

/* The table at cap slots (wide: without tags from now on), every index
 * placed again by its hash. */
static bool rehash(pb_itab *t, size_t cap, bool wide, pb_itab_hash hash_of, const void *ctx)
{
    if (cap > ITAB_MAX_CAP)
        return false;
    pb_itab n = { calloc(cap, sizeof *n.slot), cap, t->count, wide,
                  t->cap ? t->seed : pb_hash_seed() };
    if (!n.slot)
        return false;
    uint32_t mask = t->wide ? UINT32_MAX : PB_ITAB_NARROW;
    for (size_t k = 0; k < t->cap; k++) {
        if (!t->slot[k])
            continue;
        uint32_t i = (t->slot[k] & mask) - 1;
        uint64_t h = hash_of(ctx, i);
        n.slot[free_slot(&n, h)] = slot_value(&n, wide, i, h);
    }
    free(t->slot);
    *t = n;
    return true;
}

bool pb_itab_reserve(pb_itab *t, size_t n, pb_itab_hash hash_of, const void *ctx)
{
    if (n > ITAB_MAX_CAP / 2)
        return false;
    size_t cap = t->cap ? t->cap : ITAB_FIRST;
    while (n * 2 > cap)
        cap *= 2;
    return cap == t->cap || rehash(t, cap, t->wide, hash_of, ctx);
}

bool pb_itab_add(pb_itab *t, size_t slot, uint32_t i, uint64_t h, pb_itab_hash hash_of,
                 const void *ctx)
{
    if (i == UINT32_MAX)
        return false;
    bool wide = t->wide || i >= PB_ITAB_NARROW;
    bool grow = (t->count + 1) * 2 > t->cap;
    if (grow || wide != t->wide) {
        if (!rehash(t, grow ? (t->cap ? t->cap * 2 : ITAB_FIRST) : t->cap, wide, hash_of, ctx))
            return false;
        slot = free_slot(t, h);             /* the table moved: probe again */
    }
    t->slot[slot] = slot_value(t, t->wide, i, h);
    t->count++;
    return true;
}

bool pb_itab_replace(pb_itab *t, size_t slot, uint32_t i, pb_itab_hash hash_of,
                     const void *ctx)
{
    if (i == UINT32_MAX)
        return false;
    if (!t->wide && i >= PB_ITAB_NARROW) {
        /* no room for the tag: the old index's slot, found again once wide */
        uint32_t old = (t->slot[slot] & PB_ITAB_NARROW) - 1;
        uint64_t h = hash_of(ctx, old);
        if (!rehash(t, t->cap, true, hash_of, ctx))
            return false;
        slot = (size_t)pb_itab_mix(t, h) & (t->cap - 1);
        while (t->slot[slot] != old + 1)
            slot = (slot + 1) & (t->cap - 1);
    }
    t->slot[slot] = (t->slot[slot] & (t->wide ? 0 : ~PB_ITAB_NARROW)) | (i + 1);
    return true;
}

void pb_itab_free(pb_itab *t)
{
    free(t->slot);
    t->slot = NULL;
    t->cap = t->count = 0;
    t->wide = false;
    t->seed = 0;
}
