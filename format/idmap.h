/*
 * idmap.h - an open-addressing map from 32-bit ids to a pointer-sized value
 * and a 32-bit length, and a bump arena (internal to the reader).  Memory
 * grows with the entries actually stored, never with the ids' magnitude.
 */
#ifndef PRISM_IDMAP_H
#define PRISM_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct idmap_slot {
    uint32_t key;               /* stored as key + 1; 0 = empty */
    uint32_t len;
    uintptr_t val;
} idmap_slot;

typedef struct idmap {
    idmap_slot *slots;
    size_t cap, count;          /* cap is a power of two */
    uint64_t seed;              /* hseed.h: set when the table is first made */
} idmap;

bool pf_idmap_put(idmap *m, uint32_t key, uintptr_t val, uint32_t len);
bool pf_idmap_get(const idmap *m, uint32_t key, uintptr_t *val, uint32_t *len);
void pf_idmap_free(idmap *m);

typedef struct arena_block arena_block;
typedef struct arena {
    arena_block *head;
    size_t left;
    char *next;
} arena;

void *pf_arena_alloc(arena *a, size_t n);
void pf_arena_free(arena *a);

#endif
