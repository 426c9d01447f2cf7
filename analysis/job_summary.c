/*
 * job_summary.c - one rank's profile (or torch trace) reduced to its rank
 * summary (prism/job.h): the header's facts, the training thread's timed
 * steps and heaviest call paths, each path classified as work or waiting.
 *
 * Two reads of the file.  The analysis (pass 1) gives the call tree, the
 * CPU and GPU accounting the classification needs, and the steps; but it
 * keeps no per-step time of a path, only moments and a sample, so the
 * per-step wait time comes from a second, cheap read of the training
 * thread's region events alone (pass 2), holding a stack of open regions
 * and the ids of the few names that kept paths use: memory O(steps +
 * regions) whatever the file's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"
#include "job_internal.h"

#define NO_REGION UINT32_MAX
#define MAX_SIDE_NAMES 1024u

/* ---- small pieces ---- */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* frac * b <= a, in doubles: sums of ns can be near 2^64. */
static bool at_least(uint64_t a, double frac, uint64_t b)
{
    return (double)a >= frac * (double)b;
}

static const char *const collective_words[] = {
    "allreduce", "all_reduce", "allgather", "all_gather", "reduce_scatter", "broadcast",
    "barrier",   "nccl",       "c10d",      "gloo",       "mpi_",           "wait",
};

#define RESOLVED_CALL_NS 1000000u    /* mean call the CPU samples can judge */

static bool collective_name(const char *name)
{
    for (size_t i = 0; i < sizeof collective_words / sizeof *collective_words; i++)
        if (strcasestr(name, collective_words[i]))
            return true;
    return false;
}

/* Blocked, but on the rank itself rather than on the others: where the
 * step's work begins in at least half of its steps (the batch is fetched
 * there: a slow loader makes a straggler, not a wait for one), or while
 * the process's other threads were busy for at least half of it (a
 * hand-off to its own workers). */
static bool own_stall(const prism_node *n)
{
    return (n->steps_seen && at_least(n->lead_steps, 0.5, n->steps_seen)) ||
           at_least(n->offcpu_busy_ns, 0.5, n->offcpu_ns);
}

/* The rules of prism/job.h, first that applies.  A measurement decides
 * before a name: a region the CPU samples saw running is work whatever it
 * is called (its name only speaks where nothing was measured). */
static prism_wait_kind classify(const prism_node *n, const prism_rank_summary *s)
{
    if (!n->total_ns)
        return PRISM_WAIT_NO;
    /* Calls far shorter than a sampling interval (5 ms) share every
     * interval with their neighbours: their split of it is an estimate,
     * and beside a long wait (a rank's 20 us regions around its
     * all-reduce, on a loaded machine) it can make them look blocked.  They
     * wait only by their name, or the GPU's measure below. */
    bool resolved = n->calls && n->total_ns / n->calls >= RESOLVED_CALL_NS;
    if (!resolved && collective_name(n->name))
        return PRISM_WAIT_NAME;
    /* woken from the wait but not yet on a CPU (a crowded machine) is
     * still the wait: blocked plus run queue, and blocked more than run */
    /* ... and blocked longer than it ran, or, on a loaded machine where
     * the woken rank waits long for a CPU, blocked a tenth of the time and
     * off CPU twice as long as on it (compute only preempted is never
     * blocked that much) */
    uint64_t off = an_sat_add(n->offcpu_ns, n->runq_ns);
    if (resolved && at_least(n->cpu_known_ns, 0.5, n->total_ns) &&
        at_least(off, 0.5, n->cpu_known_ns) &&
        (n->offcpu_ns > n->oncpu_ns ||
         (at_least(n->offcpu_ns, 0.1, n->cpu_known_ns) && off / 2 > n->oncpu_ns)))
        return own_stall(n) ? PRISM_WAIT_NO : PRISM_WAIT_OFFCPU;
    if (at_least(n->gpu_wait_ns, 0.5, n->total_ns) && s->nccl_kernel_ns &&
        at_least(s->nccl_kernel_ns, 0.1, s->gpu_kernel_ns))
        return PRISM_WAIT_GPU;
    if (!at_least(n->cpu_known_ns, 0.5, n->total_ns) && collective_name(n->name))
        return PRISM_WAIT_NAME;
    return PRISM_WAIT_NO;
}

/* ---- pass 1: what the analysis knows ---- */

static bool copy_header(prism_rank_summary *s, const prism_analysis *a)
{
    const prism_header *h = prism_analysis_header(a);
    s->rank = h ? h->rank : -1;
    s->pid = h ? h->pid : 0;
    s->start_unix_ns = h ? h->start_unix_ns : 0;
    s->host = dup_or_empty(h ? h->host : NULL);
    s->events = prism_analysis_events(a);
    s->dropped = prism_analysis_dropped(a);
    s->span_ns = prism_analysis_span_ns(a);
    s->complete = prism_analysis_complete(a);
    return s->host != NULL;
}

static void gpu_figures(prism_rank_summary *s, const prism_analysis *a)
{
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    if (!g)
        return;
    s->gpu_kernel_ns = g->kernel_ns;
    s->gpu_busy_ns = g->busy_ns;
    s->gpu_span_ns = g->span_ns;
    s->nccl_kernel_ns = g->comm_kernel_ns;
}

static int by_index(const void *x, const void *y, const void *ctx)
{
    const prism_step *p = x, *q = y;
    (void)ctx;
    return p->index < q->index ? -1 : p->index > q->index;
}

static int by_start(const void *x, const void *y, const void *ctx)
{
    const prism_step *p = x, *q = y;
    (void)ctx;
    return p->start < q->start ? -1 : p->start > q->start;
}

/*
 * The timed sampled steps by index, the first of a repeated index kept
 * (the series is in start order and the sort is stable).  *spans gets the
 * same steps by start time, each step's `index` field replaced by its
 * position in s->steps: pass 2's lookup of the step a region started in.
 */
static bool fill_steps(prism_rank_summary *s, const prism_analysis *a, prism_step **spans)
{
    const prism_step_stats *st = prism_analysis_steps(a);
    size_t n = 0;
    *spans = NULL;
    s->steps_total = st ? st->count : 0;
    if (!st || !st->nseries)
        return true;
    prism_step *v = malloc(st->nseries * sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < st->nseries; i++)
        if ((st->series[i].flags & PRISM_STEP_SAMPLED) && st->series[i].end > st->series[i].start)
            v[n++] = st->series[i];
    pb_sort_stable(v, n, sizeof *v, by_index, NULL);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || v[i].index != v[k - 1].index)
            v[k++] = v[i];
    s->steps = calloc(k ? k : 1, sizeof *s->steps);
    if (!s->steps) {
        free(v);
        return false;
    }
    for (size_t i = 0; i < k; i++) {
        s->steps[i] = (prism_rank_step){ v[i].index, v[i].end - v[i].start, 0 };
        v[i].index = i;
    }
    s->nsteps = k;
    pb_sort_stable(v, k, sizeof *v, by_start, NULL);
    *spans = v;
    return true;
}

static int by_weight(const void *x, const void *y, const void *ctx)
{
    const prism_node *nodes = ctx, *p = &nodes[*(const uint32_t *)x],
                     *q = &nodes[*(const uint32_t *)y];
    if (p->in_step_ns != q->in_step_ns)
        return p->in_step_ns > q->in_step_ns ? -1 : 1;
    if (p->total_ns != q->total_ns)
        return p->total_ns > q->total_ns ? -1 : 1;
    return 0;
}

/*
 * Which nodes to keep (keep[i]): the heaviest by time inside steps, each
 * with the ancestors it still lacks, while they fit in
 * PRISM_JOB_MAX_REGIONS; a node whose missing ancestors do not fit is
 * passed over for lighter ones that do (their ancestors mostly kept).
 * Returns how many, or SIZE_MAX on allocation failure.
 */
static size_t pick_regions(const prism_tree *t, bool *keep)
{
    size_t kept = 0;
    uint32_t *order = malloc((t->count ? t->count : 1) * sizeof *order);
    if (!order)
        return SIZE_MAX;
    for (size_t i = 0; i < t->count; i++)
        order[i] = (uint32_t)i;
    pb_sort_stable(order, t->count, sizeof *order, by_weight, t->nodes);
    for (size_t i = 0; i < t->count && kept < PRISM_JOB_MAX_REGIONS; i++) {
        size_t missing = 0;
        for (uint32_t j = order[i]; j != PRISM_NO_NODE && j < t->count && !keep[j];
             j = t->nodes[j].parent)
            missing++;
        if (!missing || kept + missing > PRISM_JOB_MAX_REGIONS)
            continue;
        for (uint32_t j = order[i]; j != PRISM_NO_NODE && j < t->count && !keep[j];
             j = t->nodes[j].parent)
            keep[j] = true;
        kept += missing;
    }
    free(order);
    return kept;
}

/*
 * The kept nodes into s->regions in tree order (parents before children:
 * a tree's nodes follow their parents), classified; parent[] gets each
 * region's parent region (NO_REGION for a root).
 */
static bool fill_regions(prism_rank_summary *s, const prism_tree *t, uint32_t **parent)
{
    bool *keep = calloc(t->count ? t->count : 1, sizeof *keep);
    uint32_t *at = malloc((t->count ? t->count : 1) * sizeof *at);
    size_t n = keep && at ? pick_regions(t, keep) : SIZE_MAX;
    *parent = n != SIZE_MAX ? malloc((n ? n : 1) * sizeof **parent) : NULL;
    s->regions = *parent ? calloc(n ? n : 1, sizeof *s->regions) : NULL;
    if (!s->regions) {
        free(keep);
        free(at);
        return false;
    }
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *nd = &t->nodes[i];
        at[i] = NO_REGION;
        if (!keep[i])
            continue;
        prism_rank_region *r = &s->regions[s->nregions];
        bool root = nd->parent == PRISM_NO_NODE || nd->parent >= i;
        r->name = dup_or_empty(nd->name);
        if (!r->name)
            break;
        r->path_hash = nd->path_hash;
        r->parent_hash = root ? 0 : t->nodes[nd->parent].path_hash;
        r->depth = nd->depth;
        r->calls = nd->calls;
        r->total_ns = nd->total_ns;
        r->self_ns = nd->self_ns;
        r->in_step_ns = nd->in_step_ns;
        r->cpu_known_ns = nd->cpu_known_ns;
        r->oncpu_ns = nd->oncpu_ns;
        r->offcpu_ns = nd->offcpu_ns;
        r->gpu_wait_ns = nd->gpu_wait_ns;
        r->wait = classify(nd, s);
        (*parent)[s->nregions] = root ? NO_REGION : at[nd->parent];
        at[i] = (uint32_t)s->nregions++;
    }
    bool ok = s->nregions == n;
    free(keep);
    free(at);
    return ok;
}

/* Per region: waiting, with no kept waiting region below it. */
static bool *deepest_waits(const prism_rank_summary *s, const uint32_t *parent, bool *any)
{
    bool *below = calloc(s->nregions ? s->nregions : 1, sizeof *below);
    bool *deep = calloc(s->nregions ? s->nregions : 1, sizeof *deep);
    *any = false;
    if (!below || !deep) {
        free(below);
        free(deep);
        return NULL;
    }
    for (size_t i = s->nregions; i-- > 0;) {   /* children after parents */
        bool wait = s->regions[i].wait != PRISM_WAIT_NO;
        deep[i] = wait && !below[i];
        *any |= deep[i];
        if (parent[i] != NO_REGION && (wait || below[i]))
            below[parent[i]] = true;
    }
    free(below);
    return deep;
}

/* ---- the summary ---- */

/* The collectives waited in on threads other than the training thread
 * (train): a collective's name, classified waiting on its thread (where
 * torch.profiler puts gloo's all-reduce), as XXH3 hashes of their names;
 * NULL with *n 0 when none (or out of memory: no wait is invented). */
static uint64_t *side_collectives(const prism_analysis *a, size_t train,
                                  const prism_rank_summary *s, size_t *n)
{
    uint64_t *v = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        uint32_t stream;
        const char *tname;
        const prism_tree *t = i == train ? NULL : prism_analysis_thread_tree(a, i, &stream, &tname);
        for (size_t k = 0; t && k < t->count && *n < MAX_SIDE_NAMES; k++) {
            const prism_node *nd = &t->nodes[k];
            if (!nd->name || !collective_name(nd->name) || classify(nd, s) == PRISM_WAIT_NO)
                continue;
            if (*n == cap) {
                cap = cap ? 2 * cap : 16;
                uint64_t *w = realloc(v, cap * sizeof *w);
                if (!w) {
                    free(v);
                    *n = 0;
                    return NULL;
                }
                v = w;
            }
            v[(*n)++] = XXH3_64bits(nd->name, strlen(nd->name));
        }
    }
    return v;
}

static prism_status summarise(const char *path, const prism_analysis *a, prism_rank_summary *s,
                              char *msg, size_t msglen, uint64_t *offset)
{
    const char *tname = NULL;
    uint32_t stream = 0;
    size_t train = prism_analysis_training_thread(a);
    /* No training thread (no steps, or nothing tells which thread runs
     * them): the all-threads tree stands in, and with no one stream to
     * follow there is no per-step wait (pass 2 is skipped, wait_ns 0). */
    const prism_tree *t = train != SIZE_MAX
                              ? prism_analysis_thread_tree(a, train, &stream, &tname)
                              : NULL;
    bool have_stream = t != NULL;
    if (!t)
        t = prism_analysis_tree(a);
    prism_step *spans = NULL;
    uint32_t *parent = NULL;
    bool any = false, *deep = NULL;
    s->source = strdup(path);
    s->thread = dup_or_empty(have_stream ? tname : NULL);
    gpu_figures(s, a);
    if (!s->source || !s->thread || !copy_header(s, a) || !fill_steps(s, a, &spans) ||
        !fill_regions(s, t, &parent) || !(deep = deepest_waits(s, parent, &any))) {
        free(spans);
        free(parent);
        return job_fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
    }
    free(parent);
    prism_status st = PRISM_OK;
    size_t nside = 0;
    uint64_t *side = have_stream ? side_collectives(a, train, s, &nside) : NULL;
    if ((any || nside) && have_stream && s->nsteps) {
        job_wait_in in = { deep, spans, stream, side, nside };
        st = an_job_wait_read(path, &in, s, msg, msglen, offset);
    }
    free(side);
    free(deep);
    free(spans);
    return st;
}

prism_status prism_rank_summary_from_file(const char *path, prism_rank_summary *out, char *msg,
                                          size_t msglen, uint64_t *offset)
{
    uint64_t off = 0;
    prism_status st;
    if (!offset)
        offset = &off;
    *offset = 0;
    if (!out)
        return job_fail(PRISM_E_ARG, "no summary to fill", msg, msglen);
    memset(out, 0, sizeof *out);
    out->rank = -1;
    if (!path)
        return job_fail(PRISM_E_ARG, "no file given", msg, msglen);
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, msglen, offset);
    if (!a)
        return st;
    if (msglen)
        msg[0] = 0;                     /* the analysis left words in it */
    st = summarise(path, a, out, msg, msglen, offset);
    prism_analysis_free(a);
    if (st != PRISM_OK) {
        prism_rank_summary_free(out);
        out->rank = -1;
    }
    return st;
}

void prism_rank_summary_free(prism_rank_summary *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nregions; i++)
        free(s->regions[i].name);
    free(s->regions);
    free(s->steps);
    free(s->source);
    free(s->host);
    free(s->thread);
    memset(s, 0, sizeof *s);
}
