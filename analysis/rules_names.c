/*
 * rules_names.c - the rules' index of region names (every path of a name
 * together: hash, then strcmp; it grows as names come) and the growth of
 * the arrays kept beside it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "rules.h"

void rules_names_init(rules_names *ix)
{
    memset(ix, 0, sizeof *ix);
}

void rules_names_free(rules_names *ix)
{
    free(ix->name);
    free(ix->hash);
    free(ix->k);
    rules_names_init(ix);
}

/* Twice the slots (16 at first), every entry placed again. */
static bool names_grow(rules_names *ix)
{
    size_t slots = ix->slots ? 2 * ix->slots : 16;
    const char **name = malloc(slots * sizeof *name);
    uint64_t *hash = malloc(slots * sizeof *hash);
    uint32_t *k = calloc(slots, sizeof *k);
    if (!name || !hash || !k || slots > UINT32_MAX) {
        free(name);
        free(hash);
        free(k);
        return false;
    }
    for (size_t i = 0; i < ix->slots; i++) {
        if (!ix->k[i])
            continue;
        size_t j = (size_t)ix->hash[i] & (slots - 1);
        while (k[j])
            j = (j + 1) & (slots - 1);
        name[j] = ix->name[i];
        hash[j] = ix->hash[i];
        k[j] = ix->k[i];
    }
    free(ix->name);
    free(ix->hash);
    free(ix->k);
    ix->name = name;
    ix->hash = hash;
    ix->k = k;
    ix->slots = slots;
    return true;
}

size_t rules_names_get(rules_names *ix, const char *name, bool *added)
{
    *added = false;
    if (2 * (ix->n + 1) > ix->slots && !names_grow(ix))
        return SIZE_MAX;
    uint64_t h = XXH3_64bits(name, strlen(name));
    size_t j = (size_t)h & (ix->slots - 1);
    for (; ix->k[j]; j = (j + 1) & (ix->slots - 1))
        if (ix->hash[j] == h && !strcmp(ix->name[j], name))
            return ix->k[j] - 1u;
    ix->name[j] = name;
    ix->hash[j] = h;
    ix->k[j] = (uint32_t)++ix->n;
    *added = true;
    return ix->n - 1;
}

bool rules_room(void **arr, size_t *cap, size_t k, size_t size)
{
    if (k < *cap)
        return true;
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 <= k)
        cap2 *= 2;
    void *p = realloc(*arr, cap2 * size);
    if (!p)
        return false;
    *arr = p;
    *cap = cap2;
    return true;
}
