/*
 * u64map.h - pb_map, the one map from 64-bit keys to 64-bit values that
 * every reader of profiles shares (the analysis, the importer, the reports,
 * the explorer).
 *
 * Open addressing with linear probing, at most half full; every key is
 * valid (UINT64_MAX, which the slot encoding cannot hold, lives beside the
 * table).  Growth doubles the table and is bounded: a table past
 * PB_MAP_MAX_CAP slots, or an allocation that fails, makes put/slot return
 * failure and leaves the map as it was.  A zeroed pb_map is an empty map.
 *
 *   pb_map m = { 0 };
 *   pb_map_put(&m, key, 7);
 *   uint64_t v; if (pb_map_get(&m, key, &v)) ...
 *   for (size_t it = 0; pb_map_next(&m, &it, &key, &v);) ...
 *   pb_map_free(&m);
 *
 * The map owns its arrays; pb_map_free releases them.  Lookups are in the
 * header (static inline): the analysis's call-tree map is on the hot path
 * of reading a profile.
 */
#ifndef PRISM_BASE_U64MAP_H
#define PRISM_BASE_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hseed.h"

#define PB_MAP_MAX_CAP ((size_t)1 << 40)

typedef struct pb_map {
    uint64_t *keys;             /* key + 1; 0 = empty slot */
    uint64_t *vals;
    size_t cap, count;          /* slots (a power of two or 0); keys held */
    bool has_max;               /* the key UINT64_MAX is held ... */
    uint64_t max_val;           /* ... with this value */
    uint64_t seed;              /* hseed.h: set when the table is first made */
} pb_map;

static inline size_t pb_map_hash(const pb_map *m, uint64_t k, size_t cap)
{
    return (size_t)pb_hash_mix(k, m->seed) & (cap - 1);
}

/* Key's value into *val; false (val untouched) when absent. */
static inline bool pb_map_get(const pb_map *m, uint64_t key, uint64_t *val)
{
    if (key == UINT64_MAX) {
        if (m->has_max)
            *val = m->max_val;
        return m->has_max;
    }
    if (!m->cap)
        return false;
    size_t j = pb_map_hash(m, key, m->cap);
    while (m->keys[j]) {
        if (m->keys[j] == key + 1) {
            *val = m->vals[j];
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

/* The slot of key's value, inserting 0 if absent (*added, when not NULL,
 * says which); NULL without memory.  The pointer is borrowed until the
 * next insertion. */
uint64_t *pb_map_slot(pb_map *m, uint64_t key, bool *added);
/* Insert or overwrite; false without memory. */
bool pb_map_put(pb_map *m, uint64_t key, uint64_t val);
/* Room for n keys without growing again; false without memory. */
bool pb_map_reserve(pb_map *m, size_t n);
/* Every key removed; the table kept for reuse. */
void pb_map_clear(pb_map *m);
/* The arrays released; the map is empty (and usable) again. */
void pb_map_free(pb_map *m);
/* Iteration in slot order: start with *it = 0; true and the next key and
 * value while there is one.  No insertion during an iteration. */
bool pb_map_next(const pb_map *m, size_t *it, uint64_t *key, uint64_t *val);

#endif
