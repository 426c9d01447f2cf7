/*
 * rules_names.c - the rules' index of region names (every path of a name
 * together: hash, then strcmp; it grows as names come), an index table
 * over the entries' names and hashes.
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
    free(ix->e);
    pb_itab_free(&ix->of);
    rules_names_init(ix);
}

static bool name_eq(const void *ctx, uint32_t i)
{
    const rules_names *ix = ctx;
    return ix->e[i].hash == ix->want.hash && !strcmp(ix->e[i].name, ix->want.name);
}

static uint64_t name_hash(const void *ctx, uint32_t i)
{
    return ((const rules_names *)ctx)->e[i].hash;
}

size_t rules_names_get(rules_names *ix, const char *name, bool *added)
{
    *added = false;
    size_t slot;
    if (!pb_vec_reserve((void **)&ix->e, &ix->cap, ix->n + 1, sizeof *ix->e))
        return SIZE_MAX;
    ix->want = (rules_name){ name, XXH3_64bits(name, strlen(name)) };
    uint32_t i = pb_itab_find(&ix->of, ix->want.hash, name_eq, ix, &slot);
    if (i != UINT32_MAX)
        return i;
    if (!pb_itab_add(&ix->of, slot, (uint32_t)ix->n, ix->want.hash, name_hash, ix))
        return SIZE_MAX;
    ix->e[ix->n] = ix->want;
    *added = true;
    return ix->n++;
}
