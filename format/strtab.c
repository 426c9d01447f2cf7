/*
 * strtab.c - string interning for writers: XXH3-64 hash table from names to
 * dense ids 1, 2, ...  Allocation happens only when a new name arrives.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "prism/profile.h"

typedef struct slot {
    uint64_t hash;
    uint32_t id;                /* 0 = empty */
} slot;

typedef struct name {
    size_t off;
    uint32_t len;
} name;

struct prism_strtab {
    slot *slots;
    size_t cap;                 /* power of two */
    name *names;                /* by id; names[0] unused */
    uint32_t count;
    size_t ncap;
    char *text;                 /* names, NUL-terminated, back to back */
    size_t tlen, tcap;
};

prism_strtab *prism_strtab_new(void)
{
    prism_strtab *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = 256;
    t->slots = calloc(t->cap, sizeof *t->slots);
    t->ncap = 128;
    t->names = malloc(t->ncap * sizeof *t->names);
    t->tcap = 4096;
    t->text = malloc(t->tcap);
    if (!t->slots || !t->names || !t->text) {
        prism_strtab_free(t);
        return NULL;
    }
    return t;
}

void prism_strtab_free(prism_strtab *t)
{
    if (!t)
        return;
    free(t->slots);
    free(t->names);
    free(t->text);
    free(t);
}

static bool rehash(prism_strtab *t)
{
    size_t cap = t->cap * 2;
    slot *s = calloc(cap, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].id)
            continue;
        size_t j = (size_t)t->slots[i].hash & (cap - 1);
        while (s[j].id)
            j = (j + 1) & (cap - 1);
        s[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = s;
    t->cap = cap;
    return true;
}

static prism_status add_name(prism_strtab *t, const char *s, size_t len)
{
    if (t->count + 1 >= t->ncap) {
        size_t ncap = t->ncap * 2;
        name *n = realloc(t->names, ncap * sizeof *n);
        if (!n)
            return PRISM_E_NOMEM;
        t->names = n;
        t->ncap = ncap;
    }
    if (t->tlen + len + 1 > t->tcap) {
        size_t tcap = t->tcap * 2;
        while (tcap < t->tlen + len + 1)
            tcap *= 2;
        char *x = realloc(t->text, tcap);
        if (!x)
            return PRISM_E_NOMEM;
        t->text = x;
        t->tcap = tcap;
    }
    memcpy(t->text + t->tlen, s, len);
    t->text[t->tlen + len] = '\0';
    t->names[t->count + 1] = (name){ t->tlen, (uint32_t)len };
    t->tlen += len + 1;
    return PRISM_OK;
}

prism_status prism_strtab_intern(prism_strtab *t, const char *s, size_t len,
                                 uint32_t *id, bool *is_new)
{
    if (!t || (!s && len) || !id)
        return PRISM_E_ARG;
    if (!s)
        s = "";
    if (len > PRISM_MAX_STRING_BYTES)
        len = PRISM_MAX_STRING_BYTES;
    uint64_t h = XXH3_64bits(s, len);
    size_t j = (size_t)h & (t->cap - 1);
    for (; t->slots[j].id; j = (j + 1) & (t->cap - 1)) {
        const slot *sl = &t->slots[j];
        const name *n = &t->names[sl->id];
        if (sl->hash == h && n->len == len && memcmp(t->text + n->off, s, len) == 0) {
            *id = sl->id;
            if (is_new)
                *is_new = false;
            return PRISM_OK;
        }
    }
    if (t->count + 1 >= PRISM_MAX_STRINGS)
        return PRISM_E_LIMIT;
    prism_status st = add_name(t, s, len);
    if (st != PRISM_OK)
        return st;
    t->count++;
    t->slots[j] = (slot){ h, t->count };
    *id = t->count;
    if (is_new)
        *is_new = true;
    if (t->count * 2 > t->cap && !rehash(t))
        return PRISM_OK;   /* still correct, just a fuller table */
    return PRISM_OK;
}

const char *prism_strtab_name(const prism_strtab *t, uint32_t id, size_t *len)
{
    if (!t || id == 0 || id > t->count)
        return NULL;
    if (len)
        *len = t->names[id].len;
    return t->text + t->names[id].off;
}

uint32_t prism_strtab_count(const prism_strtab *t)
{
    return t ? t->count : 0;
}
