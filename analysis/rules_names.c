/*
 * rules_names.c - the rules' index of region names (every path of a name
 * together: hash, then strcmp; it grows as names come), over pb_map.
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
    pb_map_free(&ix->of);
    rules_names_init(ix);
}

size_t rules_names_get(rules_names *ix, const char *name, bool *added)
{
    *added = false;
    if (!pb_vec_reserve((void **)&ix->name, &ix->cap, ix->n + 1, sizeof *ix->name))
        return SIZE_MAX;
    /* two names with one hash: the second one's key is the next free one */
    for (uint64_t key = XXH3_64bits(name, strlen(name));; key++) {
        uint64_t *slot = pb_map_slot(&ix->of, key, added);
        if (!slot)
            return SIZE_MAX;
        if (*added) {
            *slot = ix->n;
            ix->name[ix->n] = name;
            return ix->n++;
        }
        if (!strcmp(ix->name[*slot], name))
            return (size_t)*slot;
    }
}
