/* idmap.c - see idmap.h. */
#include "idmap.h"

#include <stdlib.h>

#include "hseed.h"

/* Keyed (hseed.h): ids crafted to collide made reading quadratic. */
static size_t slot_of(const idmap *m, uint32_t key, size_t cap)
{
    return (size_t)pb_hash_mix(key, m->seed) & (cap - 1);
}

static bool grow(idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    if (!m->cap)
        m->seed = pb_hash_seed();
    idmap_slot *s = calloc(cap, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key)
            continue;
        size_t j = slot_of(m, m->slots[i].key - 1, cap);
        while (s[j].key)
            j = (j + 1) & (cap - 1);
        s[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = s;
    m->cap = cap;
    return true;
}

bool pf_idmap_put(idmap *m, uint32_t key, uintptr_t val, uint32_t len)
{
    if (key == UINT32_MAX)
        return false;
    if ((m->count + 1) * 2 > m->cap && !grow(m))
        return false;
    size_t j = slot_of(m, key, m->cap);
    while (m->slots[j].key && m->slots[j].key != key + 1)
        j = (j + 1) & (m->cap - 1);
    if (!m->slots[j].key)
        m->count++;
    m->slots[j] = (idmap_slot){ key + 1, len, val };
    return true;
}

bool pf_idmap_get(const idmap *m, uint32_t key, uintptr_t *val, uint32_t *len)
{
    if (!m->cap || key == UINT32_MAX)
        return false;
    size_t j = slot_of(m, key, m->cap);
    while (m->slots[j].key) {
        if (m->slots[j].key == key + 1) {
            *val = m->slots[j].val;
            *len = m->slots[j].len;
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

void pf_idmap_free(idmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

struct arena_block {
    arena_block *next;
    char data[];
};

#define ARENA_BLOCK 65536u

void *pf_arena_alloc(arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (n > a->left) {
        size_t sz = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        arena_block *b = malloc(sizeof *b + sz);
        if (!b)
            return NULL;
        b->next = a->head;
        a->head = b;
        a->next = b->data;
        a->left = sz;
    }
    void *p = a->next;
    a->next += n;
    a->left -= n;
    return p;
}

void pf_arena_free(arena *a)
{
    while (a->head) {
        arena_block *n = a->head->next;
        free(a->head);
        a->head = n;
    }
    a->left = 0;
    a->next = NULL;
}
