/*
 * model.c - the analysis object: reader callbacks, refresh, getters, and
 * the small containers the other files share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rules.h"

/* ---- containers ---- */

bool vec_reserve(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static size_t u64_hash(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static bool u64map_grow(u64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = u64_hash(m->keys[i] - 1, cap);
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

uint64_t *u64map_slot(u64map *m, uint64_t key)
{
    if ((m->count + 1) * 2 > m->cap && !u64map_grow(m))
        return NULL;
    size_t j = u64_hash(key, m->cap);
    while (m->keys[j] && m->keys[j] != key + 1)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) {
        m->keys[j] = key + 1;
        m->vals[j] = 0;
        m->count++;
    }
    return &m->vals[j];
}

bool u64map_put(u64map *m, uint64_t key, uint64_t val)
{
    uint64_t *s = u64map_slot(m, key);
    if (!s)
        return false;
    *s = val;
    return true;
}

bool u64map_get(const u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return false;
    size_t j = u64_hash(key, m->cap);
    while (m->keys[j]) {
        if (m->keys[j] == key + 1) {
            *val = m->vals[j];
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

void u64map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- callbacks ---- */

static void note_ts(prism_analysis *a, uint64_t ts)
{
    if (!a->have_ts || ts < a->first_ts)
        a->first_ts = ts;
    if (!a->have_ts || ts > a->last_ts)
        a->last_ts = ts;
    a->have_ts = true;
}

static void cb_thread(void *ctx, const prism_thread *t)
{
    athread *th = tree_thread(ctx, t->stream);
    if (th)
        snprintf(th->name, sizeof th->name, "%s", t->name);
}

static void cb_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    prism_analysis *a = ctx;
    if (!n)
        return;
    note_ts(a, ev[0].ts);
    note_ts(a, ev[n - 1].ts);
    a->events += n;
    tree_regions(a, stream, depth, ev, n);
}

static void cb_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    prism_analysis *a = ctx;
    (void)stream;
    if (n)
        note_ts(a, m[n - 1].ts);
    a->events += n;
}

static void cb_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    prism_analysis *a = ctx;
    if (n)
        note_ts(a, c[n - 1].ts);
    a->events += n;
    work_counters(a, stream, c, n);
}

static void cb_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    work_string(ctx, id, s, len);
}

static void cb_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    prism_analysis *a = ctx;
    (void)stream;
    for (size_t i = 0; i < n; i++) {
        note_ts(a, s[i].start);
        note_ts(a, s[i].end);
    }
    series_steps(a, s, n);
}

static void cb_memory(void *ctx, const prism_memory_sample *m)
{
    prism_analysis *a = ctx;
    note_ts(a, m->ts);
    series_memory(a, m);
}

static void cb_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    prism_analysis *a = ctx;
    a->events += n;
    gpu_records(a, g, n);
}

static void cb_dropped(void *ctx, const prism_dropped *d)
{
    prism_analysis *a = ctx;
    uint64_t *slot = u64map_slot(&a->dropped_of, (uint64_t)d->stream << 1 | (d->source & 1));
    if (slot && d->total > *slot)
        *slot = d->total;
    if (d->source != PRISM_SOURCE_CPU)
        return;
    if (!d->have_regions) {
        a->drops_single |= d->total > 0;
        return;
    }
    slot = u64map_slot(&a->dropped_regions_of, d->stream);
    if (slot && d->regions > *slot)
        *slot = d->regions;
}

static void cb_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    prism_analysis *a = ctx;
    if (n)
        note_ts(a, u[n - 1].ts);
    tree_unrecorded(a, stream, u, n);
}

static void cb_info(void *ctx, const char *key, const prism_value *v)
{
    prism_analysis *a = ctx;
    if (!strcmp(key, "gpu.status") && v->type == PRISM_VAL_TEXT) {
        snprintf(a->gpu_status, sizeof a->gpu_status, "%s", v->v.s);
        /* GPU records will follow: start keeping region transitions now,
         * so the first flush's GPU work finds its region too */
        if (!strncmp(v->v.s, "ok", 2) || !strncmp(v->v.s, "synthetic", 9))
            gpu_want_rings(a);
    } else if (!strcmp(key, "cpu.sampler") && v->type == PRISM_VAL_TEXT) {
        snprintf(a->cpu_status, sizeof a->cpu_status, "%s", v->v.s);
        if (strncmp(v->v.s, "off", 3))
            gpu_want_rings(a);          /* samples will need the transitions */
    } else if (!strcmp(key, "steps.thread") && v->type == PRISM_VAL_UINT &&
               v->v.u && v->v.u < UINT32_MAX) {
        a->step_stream = (uint32_t)v->v.u;
    }
}

static void cb_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    prism_analysis *a = ctx;
    if (n)
        note_ts(a, s[n - 1].ts);
    oncpu_samples(a, s, n);
}

static void cb_footer(void *ctx, const prism_footer *f)
{
    prism_analysis *a = ctx;
    a->footer = true;
    a->foot = *f;
    note_ts(a, f->end_ts);
}

void prism_analysis_callbacks(prism_reader_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    cb->string = cb_string;
    cb->thread = cb_thread;
    cb->regions = cb_regions;
    cb->marks = cb_marks;
    cb->counters = cb_counters;
    cb->steps = cb_steps;
    cb->memory = cb_memory;
    cb->gpu = cb_gpu;
    cb->dropped = cb_dropped;
    cb->unrecorded = cb_unrecorded;
    cb->info = cb_info;
    cb->footer = cb_footer;
    cb->cpu = cb_cpu;
}

/* ---- lifecycle ---- */

prism_analysis *prism_analysis_new(const prism_analysis_opts *opts)
{
    prism_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->train = SIZE_MAX;
    a->opts.bottleneck_threshold_pct = -1;
    a->opts.leak_threshold_mb = -1;
    if (opts)
        a->opts = *opts;
    return a;
}

void prism_analysis_attach(prism_analysis *a, prism_reader *r)
{
    a->reader = r;
}

static void free_derived(prism_analysis *a)
{
    for (size_t i = 0; a->name_cache && i < a->nnodes; i++)
        free(a->name_cache[i]);
    free(a->name_cache);
    a->name_cache = NULL;
    free(a->nodes);
    a->nodes = NULL;
    a->nnodes = a->ncap = 0;
    u64map_free(&a->merged_of);
    u64map_free(&a->node_by_hash);
    free(a->ops);
    a->ops = NULL;
    a->nops = 0;
    free(a->tref_off);
    free(a->tref);
    a->tref_off = NULL;
    a->tref = NULL;
    free(a->bn);
    a->bn = NULL;
    a->nbn = 0;
}

void prism_analysis_free(prism_analysis *a)
{
    if (!a)
        return;
    free_derived(a);
    for (size_t i = 0; i < a->nthreads; i++)
        tree_free_thread(a->threads[i]);
    free(a->threads);
    u64map_free(&a->thread_of);
    free(a->steps);
    free(a->sampled_pos);
    free(a->mem);
    u64map_free(&a->kernel_of);
    free(a->kstat);
    free(a->kname);
    free(a->busy);
    u64map_free(&a->dropped_of);
    u64map_free(&a->dropped_regions_of);
    u64map_free(&a->corr_node);
    u64map_free(&a->corr_wait);
    u64map_free(&a->work_of);
    free(a->apis);
    oncpu_free(a);
    if (a->own_reader)
        prism_reader_free(a->reader);
    free(a);
}

static double effective(double opt, const prism_header *h, const char *key, double def)
{
    if (opt >= 0)
        return opt;
    for (size_t i = 0; h && i < h->nconfig; i++) {
        if (strcmp(h->config[i].key, key))
            continue;
        const prism_value *v = &h->config[i].value;
        if (v->type == PRISM_VAL_FLOAT)
            return v->v.f;
        if (v->type == PRISM_VAL_UINT)
            return (double)v->v.u;
        if (v->type == PRISM_VAL_INT)
            return (double)v->v.i;
    }
    return def;
}

void prism_analysis_refresh(prism_analysis *a)
{
    free_derived(a);
    oncpu_flush(a);
    oncpu_solve(a);
    tree_resolve_pending(a);
    gpu_resolve(a, a->footer);
    tree_merge(a);
    series_refresh(a);
    gpu_refresh(a);
    work_refresh(a);
    const prism_header *h = prism_analysis_header(a);
    double pct = effective(a->opts.bottleneck_threshold_pct, h, "bottleneck_threshold_pct", 10);
    double mb = effective(a->opts.leak_threshold_mb, h, "memory_leak_threshold_mb", 10);
    series_leaks(a, mb);
    a->bn = calloc(64, sizeof *a->bn);
    if (a->bn)
        a->nbn = rules_run(a, pct, mb, a->bn, 64);
}

prism_analysis *prism_analyze_file(const char *path, const prism_analysis_opts *opts,
                                   prism_status *err, char *msgbuf, size_t msglen,
                                   uint64_t *offset)
{
    prism_analysis *a = prism_analysis_new(opts);
    prism_reader_callbacks cb;
    prism_reader *r = NULL;
    prism_status st;
    *err = PRISM_E_NOMEM;
    if (msglen)
        snprintf(msgbuf, msglen, "out of memory");
    *offset = 0;
    if (!a)
        return NULL;
    prism_analysis_callbacks(&cb);
    /* the reader is attached (a->reader set) before its first byte, as the
     * explorer does: names are looked up while streaming (blocking CUDA
     * calls, work counters), not only at the refresh */
    a->own_reader = true;
    st = prism_read_file(path, &cb, a, &a->reader);
    r = a->reader;
    if (st != PRISM_OK) {
        const char *m = prism_strerror(st);
        if (r)
            prism_reader_error(r, &m, offset);
        if (msglen)
            snprintf(msgbuf, msglen, "%s", m);
        *err = st;
        prism_analysis_free(a);
        return NULL;
    }
    *err = PRISM_OK;
    prism_analysis_refresh(a);
    return a;
}

/* ---- getters ---- */

const prism_header *prism_analysis_header(const prism_analysis *a)
{
    return a->reader ? prism_reader_header(a->reader) : NULL;
}

const prism_reader_stats *prism_analysis_reader_stats(const prism_analysis *a)
{
    return a->reader ? prism_reader_stats_get(a->reader) : NULL;
}

const prism_tree *prism_analysis_tree(const prism_analysis *a) { return &a->tree; }
size_t prism_analysis_thread_count(const prism_analysis *a) { return a->nthreads; }

size_t prism_analysis_training_thread(const prism_analysis *a)
{
    return a && a->train < a->nthreads ? a->train : SIZE_MAX;
}

double prism_analysis_step_denominator(const prism_analysis *a, uint64_t *steps)
{
    const prism_step_stats *st = prism_analysis_steps(a);
    double ns = 0;
    uint64_t n = 0;
    for (size_t i = 0; st && st->series && i < st->nseries; i++)
        if ((st->series[i].flags & PRISM_STEP_SAMPLED) &&
            st->series[i].end > st->series[i].start) {
            ns += (double)(st->series[i].end - st->series[i].start);
            n++;
        }
    if (!(ns > 0)) {
        n = 0;
        ns = a ? (double)prism_analysis_span_ns(a) : 0;
    }
    if (steps)
        *steps = n;
    /* a sum past 2^64 ns (584 years) saturates like every other total: the
     * largest double below 2^64, so that callers can convert it */
    return ns < 18446744073709549568.0 ? ns : 18446744073709549568.0;
}

bool prism_analysis_cpu_present(const prism_analysis *a) { return a && a->cpu_present; }

const char *prism_analysis_cpu_status(const prism_analysis *a)
{
    return a && a->cpu_status[0] ? a->cpu_status : NULL;
}

const prism_tree *prism_analysis_thread_tree(const prism_analysis *a, size_t i,
                                             uint32_t *stream, const char **name)
{
    if (i >= a->nthreads)
        return NULL;
    if (stream)
        *stream = a->threads[i]->stream;
    if (name)
        *name = a->threads[i]->name;
    return &a->threads[i]->tree;
}

const prism_op *prism_analysis_ops(const prism_analysis *a, size_t *n)
{
    *n = a->nops;
    return a->ops;
}

const prism_step_stats *prism_analysis_steps(const prism_analysis *a) { return &a->step_stats; }
const prism_memory_stats *prism_analysis_memory(const prism_analysis *a) { return &a->mem_stats; }
const prism_gpu_stats *prism_analysis_gpu(const prism_analysis *a) { return &a->gpu_stats; }

const prism_bottleneck *prism_analysis_bottlenecks(const prism_analysis *a, size_t *n)
{
    *n = a->nbn;
    return a->bn;
}

uint64_t prism_analysis_events(const prism_analysis *a) { return a->events; }

uint64_t prism_analysis_dropped(const prism_analysis *a)
{
    uint64_t total = 0;                 /* CPU events: GPU records are in gpu->dropped */
    for (size_t i = 0; i < a->dropped_of.cap; i++)
        if (a->dropped_of.keys[i] && !((a->dropped_of.keys[i] - 1) & 1))
            total = an_sat_add(total, a->dropped_of.vals[i]);
    return total;
}

uint64_t prism_analysis_dropped_regions(const prism_analysis *a, bool *whole, uint64_t *placed)
{
    uint64_t total = 0;
    for (size_t i = 0; i < a->dropped_regions_of.cap; i++)
        if (a->dropped_regions_of.keys[i])
            total = an_sat_add(total, a->dropped_regions_of.vals[i]);
    if (whole)
        *whole = !a->drops_single;
    if (placed)
        *placed = a->unrec_placed < total ? a->unrec_placed : total;
    return total;
}

uint64_t prism_analysis_thread_dropped_regions(const prism_analysis *a, uint32_t stream)
{
    uint64_t v = 0;
    return u64map_get(&a->dropped_regions_of, stream, &v) ? v : 0;
}

uint64_t prism_analysis_span_ns(const prism_analysis *a)
{
    return a->have_ts ? a->last_ts - a->first_ts : 0;
}

bool prism_analysis_complete(const prism_analysis *a) { return a->footer; }
uint64_t prism_analysis_last_ts(const prism_analysis *a) { return a->have_ts ? a->last_ts : 0; }

uint32_t prism_analysis_find(const prism_analysis *a, uint64_t path_hash)
{
    uint64_t v;
    return u64map_get(&a->node_by_hash, path_hash, &v) ? (uint32_t)v : PRISM_NO_NODE;
}

bool prism_analysis_node_step_moments(const prism_analysis *a, uint32_t node, uint64_t *n,
                                      double *mean, double *var)
{
    *n = 0;
    *mean = *var = 0;
    uint32_t threads = tree_node_threads(a, node);
    if (!threads || !a->nsampled)
        return false;
    /* the steps it ran in only: a step without it is absent, not zero */
    const prism_node *p = &a->nodes[node];
    *n = p->steps_seen;
    *mean = p->step_mean_ns;
    *var = p->steps_seen > 1 ? p->step_std_ns * p->step_std_ns : 0;
    return true;
}
