/*
 * api.c - the out-of-line half of collect.h: names, steps and sampling,
 * counters, marks by name, thread names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "cupti.h"
#include "internal.h"

uint32_t prism_name(const char *name)
{
    session *s = prism__s;
    uint32_t id = 0;
    bool is_new;
    if (!s || !name || s->pid != getpid() || atomic_load(&s->stopping))
        return 0;
    pthread_mutex_lock(&s->lock);
    if (prism_strtab_intern(s->names, name, strlen(name), &id, &is_new) != PRISM_OK)
        id = 0;
    pthread_mutex_unlock(&s->lock);
    if (id >= (1u << 28)) {             /* the event word holds 28 bits */
        session_fail(s, "more than 2^28 distinct names");
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
    if (!s || !name || s->pid != getpid() || atomic_load(&s->stopping))
        return;
    prism__thread *th = buffers_self(s);
    if (!th)
        return;
    pthread_mutex_lock(&s->lock);
    snprintf(th->name, sizeof th->name, "%s", name);
    th->name_dirty = true;
    pthread_mutex_unlock(&s->lock);
}

/* Does step `idx` record its regions? */
static bool sampled(const prism_config *c, uint64_t idx)
{
    if (c->adaptive_sampling && idx < c->adaptive_steps)
        return true;
    double stride = c->sample_rate > 0 ? 1.0 / c->sample_rate : 1.0;
    uint64_t k = (uint64_t)(stride + 0.5);
    if (k < 1)
        k = 1;
    uint64_t base = c->adaptive_sampling ? idx - c->adaptive_steps : idx;
    return base % k == 0;
}

void prism_step_begin(void)
{
    session *s = prism__s;
    if (!s || s->pid != getpid() || atomic_load(&s->stopping) || atomic_load(&s->failed))
        return;
    if (s->in_step)
        prism_step_end();
    s->in_step = true;
    if (!s->step_stream_known) {        /* the training thread, for the analysis */
        prism__thread *th = buffers_self(s);
        if (th)
            atomic_store_explicit(&s->step_stream, th->stream, memory_order_relaxed);
        s->step_stream_known = th != NULL;
    }
    cupti_step(s, s->step_index, true);   /* GPU window: before the step's clock */
    s->step_start = prism__now();
    bool rec = s->cfg.collect_timing && sampled(&s->cfg, s->step_index);
    atomic_store_explicit(&prism__on, rec ? 1 : 0, memory_order_relaxed);
}

void prism_step_end(void)
{
    session *s = prism__s;
    if (!s || !s->in_step || s->pid != getpid())
        return;
    uint64_t end = prism__now();
    proc_rec r = { .is_step = true, .ticks = s->step_start, .ticks_end = end };
    r.u.step = (prism_step){ 0, 0, s->step_index, s->epoch,
                             sampled(&s->cfg, s->step_index) && s->cfg.collect_timing
                                 ? PRISM_STEP_SAMPLED : 0 };
    proc_rec m = { .is_step = false, .ticks = end };
    bool have_mem = false;
    if (s->cfg.collect_memory) {
        static __thread uint64_t prev[2];
        uint32_t cpu;
        if (sampler_read(&m.u.mem.rss, &cpu, prev) == 0) {
            m.u.mem.step = s->step_index;
            m.u.mem.cpu_permille = cpu;
            m.u.mem.ngpu = s->cfg.collect_gpu_ops ? gpumem_read(m.u.mem.gpu, false) : 0;
            have_mem = true;
        }
    }
    pthread_mutex_lock(&s->lock);
    queue_push(s, &r);
    if (have_mem)
        queue_push(s, &m);
    pthread_mutex_unlock(&s->lock);
    cupti_step(s, s->step_index, false);
    s->step_index++;
    s->in_step = false;
    if (!atomic_load(&s->stopping) && !atomic_load(&s->failed))
        atomic_store_explicit(&prism__on, s->cfg.collect_timing ? 1 : 0, memory_order_relaxed);
}

void prism_epoch(uint64_t epoch)
{
    if (prism__s)
        prism__s->epoch = epoch;
}

uint64_t prism_step_index(void)
{
    return prism__s ? prism__s->step_index : 0;
}
