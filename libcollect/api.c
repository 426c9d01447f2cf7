/*
 * api.c - the out-of-line half of collect.h: names, counters, marks by
 * name, thread names (steps and their sampling: steps.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "internal.h"

uint32_t prism_name(const char *name)
{
    session *s = prism__s;
    uint32_t id = 0;
    bool is_new;
    if (!s || !name || session_forked(s) || atomic_load(&s->stopping))
        return 0;
    pthread_mutex_lock(&s->lock);
    if (prism_strtab_intern(s->names, name, strlen(name), &id, &is_new) != PRISM_OK)
        id = 0;
    pthread_mutex_unlock(&s->lock);
    if (id >= (1u << 28)) {             /* the event word holds 28 bits */
        pc_session_fail(s, "more than 2^28 distinct names");
        return 0;
    }
    return id;
}

uint32_t prism__site_id(prism_site *site)
{
    uint32_t id = prism_name(site->name);
    if (id)
        atomic_store_explicit(&site->id, id, memory_order_relaxed);
    return id;
}

/* A small per-thread cache from a name's hash to its id, so pushing by name
 * takes the lock only the first time a thread sees a name.  It lives on the
 * heap (freed at thread exit): the library's static TLS must stay a few
 * bytes, or libprism.so cannot be dlopen'ed (the CUDA driver loads it so
 * under prism-run; glibc keeps under 2 KB for such libraries). */
#define CACHE 256
typedef struct name_cache {
    uint64_t hash[CACHE];
    uint32_t id[CACHE];
    const session *owner;
} name_cache;
static __thread name_cache *cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_free(void *c)
{
    free(c);
    cache = NULL;                       /* a later push on this thread: new one */
}

static void cache_key_make(void)
{
    if (pthread_key_create(&cache_key, cache_free) != 0)
        cache_key = (pthread_key_t)-1;
}

static uint32_t cached_id(const char *name)
{
    session *s = prism__s;
    if (!s)
        return 0;
    name_cache *c = cache;
    if (!c) {
        pthread_once(&cache_once, cache_key_make);
        if (cache_key == (pthread_key_t)-1 || !(c = calloc(1, sizeof *c)))
            return prism_name(name);
        pthread_setspecific(cache_key, c);
        cache = c;
    }
    if (c->owner != s) {
        memset(c, 0, sizeof *c);
        c->owner = s;
    }
    size_t len = strlen(name);
    uint64_t h = XXH3_64bits(name, len) | 1u;
    size_t slot = (size_t)(h >> 56) % CACHE;
    if (c->hash[slot] == h)
        return c->id[slot];
    uint32_t id = prism_name(name);
    if (id) {
        c->hash[slot] = h;
        c->id[slot] = id;
    }
    return id;
}

void prism_push(const char *name)
{
    if (!atomic_load_explicit(&prism__on, memory_order_relaxed) || !name) {
        prism__t.skip++;
        return;
    }
    uint32_t id = cached_id(name);
    if (!id) {
        prism__t.skip++;
        return;
    }
    prism_push_id(id);
}

void prism_mark_name(const char *name)
{
    if (atomic_load_explicit(&prism__on, memory_order_relaxed) && name) {
        uint32_t id = cached_id(name);
        if (id)
            prism_mark_id(id);
    }
}

void prism_thread_name(const char *name)
{
    session *s = prism__s;
    if (!s || !name || session_forked(s) || atomic_load(&s->stopping))
        return;
    prism__thread *th = pc_buffers_self(s);
    if (!th)
        return;
    pthread_mutex_lock(&s->lock);
    snprintf(th->name, sizeof th->name, "%s", name);
    th->name_dirty = true;
    pthread_mutex_unlock(&s->lock);
}
