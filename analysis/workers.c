/*
 * workers.c - the input pipeline seen from inside (prism_worker_stats):
 * what the DataLoader's worker processes did, from the worker threads the
 * reader merged in (prism_reader_add_workers, threads marked as workers)
 * and the loader's settings the Python module wrote (INFO dataloader.*).
 *
 * In a worker thread's tree prism.torch records a root "DataLoader batch"
 * per batch, holding "<Dataset>.__getitem__" (or __getitems__, or
 * "<Dataset> next" for an IterableDataset) per sample and "collate (...)";
 * whatever runs inside those (nn.Module transforms, prism.region) is a
 * transform, and the heaviest one by total time across workers is named.
 * A worker's lifetime is the span of its region events; busy is the batch
 * time over those spans.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_NAMES 64

typedef struct tally {
    const char *name[MAX_NAMES];
    double ns[MAX_NAMES];
    size_t n;
} tally;

static void tally_add(tally *t, const char *name, double ns)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->name[i], name)) {
            t->ns[i] += ns;
            return;
        }
    if (t->n < MAX_NAMES) {
        t->name[t->n] = name;
        t->ns[t->n++] = ns;
    }
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static bool is_sample(const char *name)
{
    return ends_with(name, ".__getitem__") || ends_with(name, ".__getitems__") ||
           ends_with(name, " next");
}

static bool is_collate(const char *name)
{
    return !strncmp(name, "collate", 7);
}

/* Whether node k lies under a sample or collate region of its batch. */
static bool in_transform(const prism_tree *t, uint32_t k)
{
    const prism_node *n = &t->nodes[k];
    while (n->parent != PRISM_NO_NODE && n->parent < t->count) {
        const prism_node *p = &t->nodes[n->parent];
        if (p->depth == 1 && (is_sample(p->name) || is_collate(p->name)))
            return true;
        n = p;
    }
    return false;
}

typedef struct sums {
    double batch, batch_on, batch_known, samples, sample_ns, collate, life;
    uint64_t batches;
    uint32_t busy_threads;
} sums;

#define BUSY_THREAD 0.7            /* a worker thread fetching this much of its life */

static void thread_sums(const prism_tree *t, const athread *th, sums *s, tally *tr)
{
    double batch0 = s->batch;
    for (uint32_t k = 0; k < t->count; k++) {
        const prism_node *n = &t->nodes[k];
        if (!n->name)
            continue;
        if (n->depth == 0 && !strcmp(n->name, "DataLoader batch")) {
            s->batches += n->calls;
            s->batch += (double)n->total_ns;
            s->batch_on += (double)n->oncpu_ns;
            s->batch_known += (double)n->cpu_known_ns;
        } else if (n->depth == 1 && is_sample(n->name)) {
            s->samples += (double)n->calls;
            s->sample_ns += (double)n->total_ns;
        } else if (n->depth == 1 && is_collate(n->name)) {
            s->collate += (double)n->total_ns;
        } else if (n->depth >= 2 && in_transform(t, k)) {
            /* its own time: a transform inside another counts once */
            tally_add(tr, n->name, (double)n->self_ns);
        }
    }
    if (th->last_ts > th->first_ts && th->first_ts) {
        double life = (double)(th->last_ts - th->first_ts);
        s->life += life;
        s->busy_threads += s->batch - batch0 >= BUSY_THREAD * life;
    }
}

static bool seen(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static double pin_per_call(const prism_analysis *a)
{
    const prism_tree *t = prism_analysis_tree(a);
    double ns = 0;
    uint64_t calls = 0;
    for (uint32_t k = 0; t && k < t->count; k++)
        if (t->nodes[k].name && !strcmp(t->nodes[k].name, "pin_memory")) {
            ns += (double)t->nodes[k].total_ns;
            calls += t->nodes[k].calls;
        }
    return calls ? ns / (double)calls : 0;
}

void an_workers_refresh(prism_analysis *a)
{
    prism_worker_stats *w = &a->workers;
    *w = (prism_worker_stats){ .batch_cpu = -1, .busy = -1,
                               .num_workers = a->dl_num_workers,
                               .prefetch_factor = a->dl_prefetch,
                               .persistent_workers = a->dl_persistent,
                               .pin_memory = a->dl_pin, .batch_size = a->dl_batch,
                               .starts = a->dl_starts,
                               .startup_ns = a->dl_starts
                                   ? (double)a->dl_startup_ns / (double)a->dl_starts : -1 };
    w->pin_ns = pin_per_call(a);
    size_t nw = 0;
    for (size_t i = 0; i < a->nthreads; i++)
        nw += a->threads[i]->worker;
    if (!nw)
        return;
    uint64_t *ids = calloc(2 * nw, sizeof *ids), *pids = ids ? ids + nw : NULL;
    tally tr = { .n = 0 };
    sums s = { 0 };
    size_t nid = 0, npid = 0;
    for (size_t i = 0; i < a->nthreads; i++) {
        const athread *th = a->threads[i];
        if (!th->worker)
            continue;
        w->threads++;
        if (ids && !seen(ids, nid, th->worker_id))
            ids[nid++] = th->worker_id;
        if (pids && !seen(pids, npid, th->pid))
            pids[npid++] = th->pid;
        thread_sums(&th->tree, th, &s, &tr);
    }
    free(ids);
    w->workers = (uint32_t)nid;
    w->processes = (uint32_t)npid;
    w->batches = s.batches;
    if (!s.batches)
        return;
    double nb = (double)s.batches;
    w->batch_ns = s.batch / nb;
    w->batch_cpu = s.batch_known > 0 ? s.batch_on / s.batch_known : -1;
    w->samples_per_batch = s.samples / nb;
    w->sample_ns = s.samples > 0 ? s.sample_ns / s.samples : 0;
    w->collate_ns = s.collate / nb;
    w->busy = s.life > 0 ? (s.batch > s.life ? 1 : s.batch / s.life) : -1;
    w->busy_threads = s.busy_threads;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < tr.n; i++)
        if (best == SIZE_MAX || tr.ns[i] > tr.ns[best])
            best = i;
    if (best != SIZE_MAX && tr.ns[best] > 0) {
        snprintf(a->worker_transform, sizeof a->worker_transform, "%s", tr.name[best]);
        w->transform = a->worker_transform;
        w->transform_ns = tr.ns[best] / nb;
    }
}

void an_workers_info(prism_analysis *a, const char *key, const prism_value *v)
{
    if (v->type != PRISM_VAL_UINT)
        return;
    int64_t x = v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u;
    if (!strcmp(key, "num_workers"))
        a->dl_num_workers = x;
    else if (!strcmp(key, "prefetch_factor"))
        a->dl_prefetch = x;
    else if (!strcmp(key, "persistent_workers"))
        a->dl_persistent = x;
    else if (!strcmp(key, "pin_memory"))
        a->dl_pin = x;
    else if (!strcmp(key, "batch_size"))
        a->dl_batch = x;
    else if (!strcmp(key, "starts"))
        a->dl_starts = v->v.u;
    else if (!strcmp(key, "startup_ns"))
        a->dl_startup_ns = v->v.u;
}

const prism_worker_stats *prism_analysis_workers(const prism_analysis *a)
{
    return &a->workers;
}
