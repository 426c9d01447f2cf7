/*
 * reader_strings.c - the reader's string table: ids to names, a mangled
 * name demangled once as it is stored, the file's own form kept beside it;
 * and the merged ids of the worker files' names (workers.c).
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "reader_state.h"

/* ---- worker files' merged ids (workers.c) ---- */

uint32_t *pf_reader_worker_next(prism_reader *r, bool stream)
{
    if (!r->next_wid) {
        r->next_wid = 0xC0000000u;
        r->next_wstream = 0x40000000u;
    }
    return stream ? &r->next_wstream : &r->next_wid;
}

/* One merged id per name across the worker files (the same region in
 * every worker is one path of the all-threads tree): the name's hash
 * (a few probes) to the id, checked against the stored text. */
#define WNAME_PROBES 4u

static uint32_t wname_key(const char *s, size_t len, uint32_t k)
{
    uint32_t h = (uint32_t)XXH3_64bits(s, len) + k;
    return h == UINT32_MAX ? 0 : h;
}

uint32_t pf_reader_worker_name(prism_reader *r, const char *s, size_t len, uint32_t id)
{
    for (uint32_t k = 0; k < WNAME_PROBES; k++) {
        uintptr_t v;
        uint32_t l, key = wname_key(s, len, k);
        if (!pf_idmap_get(&r->wnames, key, &v, &l)) {
            if (id)
                pf_idmap_put(&r->wnames, key, id, 0);
            return id;
        }
        size_t have;
        const char *t = prism_reader_string_raw(r, (uint32_t)v, &have);
        if (t && have == len && !memcmp(t, s, len))
            return (uint32_t)v;
    }
    return id;                          /* (probes full: a name of its own) */
}

bool pf_reader_workers_once(prism_reader *r)
{
    bool was = r->workers_read;
    r->workers_read = true;
    return was;
}

/* ---- the string table ---- */

static char *arena_copy(prism_reader *r, const char *s, size_t len)
{
    char *d = pf_arena_alloc(&r->mem, len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static bool same(const idmap *m, uint32_t id, const char *s, size_t len)
{
    uintptr_t v;
    uint32_t l;
    return pf_idmap_get(m, id, &v, &l) && l == len && !memcmp((const char *)v, s, len);
}

static bool has(const idmap *m, uint32_t id)
{
    uintptr_t v;
    uint32_t l;
    return pf_idmap_get(m, id, &v, &l);
}

/* A mangled name is demangled here, once: an id stored again with the same
 * text (a chunk repeated) is left as it is. */
bool pf_reader_put_string(prism_reader *r, uint32_t id, const char *s, size_t len)
{
    if (same(&r->raws, id, s, len) || (!has(&r->raws, id) && same(&r->strings, id, s, len)))
        return true;
    char *d = arena_copy(r, s, len);
    if (!d)
        return false;
    size_t plen = 0;
    char *plain = pf_demangle(d, len, &plen);
    if (plain) {
        char *p = arena_copy(r, plain, plen);
        free(plain);
        return p && pf_idmap_put(&r->raws, id, (uintptr_t)d, (uint32_t)len) &&
               pf_idmap_put(&r->strings, id, (uintptr_t)p, (uint32_t)plen);
    }
    if (has(&r->raws, id) &&                        /* it was demangled before */
        !pf_idmap_put(&r->raws, id, (uintptr_t)d, (uint32_t)len))
        return false;
    return pf_idmap_put(&r->strings, id, (uintptr_t)d, (uint32_t)len);
}

const char *prism_reader_string(const prism_reader *r, uint32_t id, size_t *len)
{
    uintptr_t v;
    uint32_t l;
    if (r->probe == PROBE_FOREIGN)
        return r->fb->string(r->fst, id, len);
    if (!pf_idmap_get(&r->strings, id, &v, &l))
        return NULL;
    if (len)
        *len = l;
    return (const char *)v;
}

const char *prism_reader_string_raw(const prism_reader *r, uint32_t id, size_t *len)
{
    uintptr_t v;
    uint32_t l;
    if (r->probe == PROBE_FOREIGN || !pf_idmap_get(&r->raws, id, &v, &l))
        return prism_reader_string(r, id, len);
    if (len)
        *len = l;
    return (const char *)v;
}
