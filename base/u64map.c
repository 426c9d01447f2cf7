/*
 * u64map.c - pb_map, the shared u64 -> u64 map (see u64map.h).
 */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

/* The table at cap slots (a power of two), every key placed again. */
static bool rehash(pb_map *m, size_t cap)
{
    if (cap > PB_MAP_MAX_CAP)
        return false;
    if (!m->cap)
        m->seed = pb_hash_seed();       /* a new table: its own seed */
    uint64_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = pb_map_hash(m, m->keys[i] - 1, cap);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = cap;
    return true;
}

bool pb_map_reserve(pb_map *m, size_t n)
{
    if (n > PB_MAP_MAX_CAP / 2)
        return false;
    size_t cap = m->cap ? m->cap : 64;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    return cap == m->cap || rehash(m, cap);
}

uint64_t *pb_map_slot(pb_map *m, uint64_t key, bool *added)
{
    if (added)
        *added = false;
    if (key == UINT64_MAX) {
        if (!m->has_max) {
            m->has_max = true;
            m->max_val = 0;
            m->count++;
            if (added)
                *added = true;
        }
        return &m->max_val;
    }
    size_t j = 0;
    if (m->cap) {
        j = pb_map_hash(m, key, m->cap);
        while (m->keys[j]) {
            if (m->keys[j] == key + 1)
                return &m->vals[j];
            j = (j + 1) & (m->cap - 1);
        }
    }
    /* absent: grown first when the table would pass half full */
    if ((m->count + 1) * 2 > m->cap) {
        if (!rehash(m, m->cap ? m->cap * 2 : 64))
            return NULL;
        j = pb_map_hash(m, key, m->cap);
        while (m->keys[j])
            j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = key + 1;
    m->vals[j] = 0;
    m->count++;
    if (added)
        *added = true;
    return &m->vals[j];
}

bool pb_map_put(pb_map *m, uint64_t key, uint64_t val)
{
    uint64_t *s = pb_map_slot(m, key, NULL);
    if (!s)
        return false;
    *s = val;
    return true;
}

void pb_map_clear(pb_map *m)
{
    if (m->cap)
        memset(m->keys, 0, m->cap * sizeof *m->keys);
    m->count = 0;
    m->has_max = false;
}

void pb_map_free(pb_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

bool pb_map_next(const pb_map *m, size_t *it, uint64_t *key, uint64_t *val)
{
    for (; *it < m->cap; ++*it) {
        if (m->keys[*it]) {
            *key = m->keys[*it] - 1;
            *val = m->vals[*it];
            ++*it;
            return true;
        }
    }
    if (*it == m->cap && m->has_max) {
        ++*it;
        *key = UINT64_MAX;
        *val = m->max_val;
        return true;
    }
    return false;
}
