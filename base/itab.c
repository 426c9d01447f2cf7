/*
 * itab.c - pb_itab, a hash table of indices (see itab.h).
 */
#include "itab.h"

#include <stdlib.h>

#define ITAB_FIRST 64u
#define ITAB_MAX_CAP ((size_t)1 << 33)     /* 2^32 - 1 indices, half full */

/* The table at cap slots, every index placed again by its hash. */
static bool rehash(pb_itab *t, size_t cap, pb_itab_hash hash_of, const void *ctx)
{
    if (cap > ITAB_MAX_CAP)
        return false;
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return false;
    for (size_t k = 0; k < t->cap; k++) {
        uint32_t v = t->slot[k];
        if (!v)
            continue;
        size_t j = pb_itab_home(hash_of(ctx, v - 1), cap);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = v;
    }
    free(t->slot);
    t->slot = s;
    t->cap = cap;
    return true;
}

bool pb_itab_reserve(pb_itab *t, size_t n, pb_itab_hash hash_of, const void *ctx)
{
    if (n > ITAB_MAX_CAP / 2)
        return false;
    size_t cap = t->cap ? t->cap : ITAB_FIRST;
    while (n * 2 > cap)
        cap *= 2;
    return cap == t->cap || rehash(t, cap, hash_of, ctx);
}

bool pb_itab_add(pb_itab *t, size_t slot, uint32_t i, uint64_t h, pb_itab_hash hash_of,
                 const void *ctx)
{
    if (i == UINT32_MAX)
        return false;
    if ((t->count + 1) * 2 > t->cap) {
        if (!rehash(t, t->cap ? t->cap * 2 : ITAB_FIRST, hash_of, ctx))
            return false;
        slot = pb_itab_home(h, t->cap);         /* the table moved: probe again */
        while (t->slot[slot])
            slot = (slot + 1) & (t->cap - 1);
    }
    t->slot[slot] = i + 1;
    t->count++;
    return true;
}

void pb_itab_free(pb_itab *t)
{
    free(t->slot);
    t->slot = NULL;
    t->cap = t->count = 0;
}
