/*
 * gpu.c - GPU aggregates from activity records: kernels by name, copies by
 * direction and host memory kind (bandwidth), memset, synchronisation and
 * runtime API time, and the busy share: the union of kernel, copy and
 * memset intervals, kept as a bounded list of disjoint segments.  Kernels
 * are compute or communication (NCCL's, by name: an_gpu_comm_kernel), the
 * latter's time also apart (comm_kernel_ns): the evidence of a rank waiting
 * for its peers (rules_wait.c, job_summary.c).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

#define MAX_SEGS 8192u
#define SMALL_KERNEL_NS 10000u

/* Add [s, e) to the sorted disjoint segment list. */
static void busy_add(prism_analysis *a, uint64_t s, uint64_t e)
{
    if (s < a->closed_until)            /* overlaps what was folded away */
        s = a->closed_until;
    if (e <= s)
        return;
    size_t n = a->nbusy, i = n;
    while (i > 0 && a->busy[i - 1].start > s)  /* usually appended at the end */
        i--;
    if (i > 0 && a->busy[i - 1].end >= s) {      /* overlaps the previous one */
        i--;
        if (e > a->busy[i].end)
            a->busy[i].end = e;
    } else {
        if (!pb_vec_reserve((void **)&a->busy, &a->bcap, n + 1, sizeof *a->busy))
            return;
        memmove(&a->busy[i + 1], &a->busy[i], (n - i) * sizeof *a->busy);
        a->busy[i] = (seg){ s, e };
        a->nbusy = ++n;
    }
    size_t j = i + 1;                            /* swallow followers it reaches */
    while (j < n && a->busy[j].start <= a->busy[i].end) {
        if (a->busy[j].end > a->busy[i].end)
            a->busy[i].end = a->busy[j].end;
        j++;
    }
    if (j > i + 1) {
        memmove(&a->busy[i + 1], &a->busy[j], (n - j) * sizeof *a->busy);
        a->nbusy = n - (j - i - 1);
    }
    if (a->nbusy > MAX_SEGS) {
        /* Records arrive nearly in time order: fold the older half into a
         * running total and keep the recent segments exact. */
        size_t half = a->nbusy / 2;
        for (size_t k = 0; k < half; k++)
            a->busy_closed += a->busy[k].end - a->busy[k].start;
        a->closed_until = a->busy[half - 1].end;
        memmove(&a->busy[0], &a->busy[half], (a->nbusy - half) * sizeof *a->busy);
        a->nbusy -= half;
    }
}

bool an_gpu_comm_kernel(const char *name)
{
    if (!name)
        return false;
    if (!strncmp(name, "void ", 5))
        name += 5;
    else if (name[0] == '_' && name[1] == 'Z') {        /* _Z39ncclDevKernel_... */
        name += 2;
        while (isdigit((unsigned char)*name))
            name++;
    }
    return !strncasecmp(name, "nccl", 4);
}

static void kernel(prism_analysis *a, const prism_gpu_record *g, uint64_t dur)
{
    uint64_t idx;
    if (!pb_map_get(&a->kernel_of, g->name, &idx)) {
        if (!pb_vec_reserve((void **)&a->kstat, &a->kcap, a->nk + 1, sizeof *a->kstat))
            return;
        size_t cap = a->kcap;
        uint32_t *kn = realloc(a->kname, cap * sizeof *kn);
        if (!kn)
            return;
        a->kname = kn;
        idx = a->nk++;
        memset(&a->kstat[idx], 0, sizeof a->kstat[idx]);
        a->kstat[idx].comm = an_gpu_comm_kernel(an_tree_name(a, g->name));
        a->kname[idx] = g->name;
        pb_map_put(&a->kernel_of, g->name, idx);
    }
    a->kstat[idx].count++;
    a->kstat[idx].total_ns = an_sat_add(a->kstat[idx].total_ns, dur);
    a->kernel_ns = an_sat_add(a->kernel_ns, dur);
    a->launches++;
    if (a->kstat[idx].comm) {
        a->comm_kernel_ns = an_sat_add(a->comm_kernel_ns, dur);
        a->comm_launches++;
    }
    if (dur < SMALL_KERNEL_NS)
        a->small++;
}

static void copy(prism_analysis *a, const prism_gpu_record *g, uint64_t dur)
{
    uint32_t host = g->copy_kind == PRISM_COPY_DTOH ? g->dst_kind : g->src_kind;
    size_t i;
    for (i = 0; i < a->nc; i++)
        if (a->cstat[i].copy_kind == g->copy_kind && a->cstat[i].src_kind == host)
            break;
    if (i == a->nc) {
        if (a->nc == sizeof a->cstat / sizeof a->cstat[0])
            return;
        a->cstat[a->nc++] = (prism_copy_stat){ .copy_kind = g->copy_kind, .src_kind = host };
    }
    a->cstat[i].count++;
    a->cstat[i].bytes = an_sat_add(a->cstat[i].bytes, g->bytes);
    a->cstat[i].total_ns = an_sat_add(a->cstat[i].total_ns, dur);
    a->copy_ns = an_sat_add(a->copy_ns, dur);
}

#define CORR_LIMIT (1u << 20)

/* corr_wait values: device ns << 16 | launches << 1 | aged (a refresh has
 * seen it waiting).  Device work whose API record never comes (a launch
 * not traced: driver API calls before PRISM enabled them, records lost)
 * waits at most until the second refresh after it, or the final one, and
 * is then credited as "launch unknown" (gpu_unattributed): never forever. */
#define WAIT_NS(v) ((v) >> 16)
#define WAIT_LAUNCHES(v) (((v) >> 1) & 0x7fffu)

/* Start keeping region transitions on every thread: needed to find the
 * region that launched GPU work. */
void an_gpu_want_rings(prism_analysis *a)
{
    a->rings = true;
    for (size_t i = 0; i < a->nthreads; i++)
        if (!a->threads[i]->ring)
            an_ring_start(a->threads[i]);
}

static void credit(prism_analysis *a, uint64_t where, uint64_t ns, uint64_t launches)
{
    athread *t = a->threads[where >> 32];
    uint32_t node = (uint32_t)where;
    tnode_ext *x = node == PRISM_NO_NODE || node >= t->n ? NULL : an_ext_get(t, &t->nodes[node]);
    if (!x) {
        a->gpu_unattributed += ns;
        return;
    }
    x->gpu_ns += ns;
    x->gpu_launches += launches;
}

/* Which region of thread idx was open at `start`, and credit or remember. */
static void api_resolve(prism_analysis *a, uint32_t idx, uint64_t corr, uint64_t start)
{
    uint64_t where = (uint64_t)idx << 32 | an_tree_node_at(a->threads[idx], start), waiting;
    if (pb_map_get(&a->corr_wait, corr, &waiting) && waiting) {
        credit(a, where, WAIT_NS(waiting), WAIT_LAUNCHES(waiting));   /* device work first */
        pb_map_put(&a->corr_wait, corr, 0);
        return;
    }
    if (a->corr_node.count < CORR_LIMIT)
        pb_map_put(&a->corr_node, corr, where + 1);
}

/* Are the thread's regions known up to time ts?  (Its newest transition is
 * at or after ts.)  A writer may put an API call before the regions of the
 * same flush, so a call newer than them waits. */
static bool regions_reach(const athread *t, uint64_t ts)
{
    return t->ring && t->nring && t->ring[((t->nring - 1)) & (t->rcap - 1)].ts >= ts;
}

/* Runtime / driver calls that block the calling thread until the GPU has
 * caught up: synchronisations and the synchronous copies.  The *Query calls
 * (cudaStreamQuery, cudaEventQuery, cuStreamQuery, cuEventQuery, ...) return
 * at once, done or cudaErrorNotReady: a poll, never a wait (a polling loop's
 * time is the CPU's, not the GPU's). */
static bool blocking_api(const char *name)
{
    if (!name || strstr(name, "Query"))
        return false;
    if (strstr(name, "Synchronize"))
        return true;
    const char *m = strstr(name, "emcpy");             /* cudaMemcpy, cuMemcpyDtoH */
    return m && !strstr(m, "Async") && !strstr(m, "Peer");
}

/* The time a blocking call kept its region waiting for the GPU. */
static void wait_credit(prism_analysis *a, uint32_t idx, uint64_t start, uint64_t ns)
{
    athread *t = a->threads[idx];
    uint32_t node = an_tree_node_at(t, start);
    tnode_ext *x = ns && node != PRISM_NO_NODE && node < t->n ? an_ext_get(t, &t->nodes[node])
                                                              : NULL;
    if (x)
        x->gpu_wait += ns;
}

/* An API call on a CPU thread: tie it to the region that made it. */
static void api_call(prism_analysis *a, const prism_gpu_record *g)
{
    athread *t = an_tree_thread(a, g->stream);
    uint64_t idx;
    if (!t || !pb_map_get(&a->thread_of, g->stream, &idx))
        return;
    uint64_t wait = g->end > g->start && blocking_api(an_tree_name(a, g->name))
                        ? g->end - g->start : 0;
    if (!regions_reach(t, g->start) && a->napi < CORR_LIMIT &&
        pb_vec_reserve((void **)&a->apis, &a->apicap, a->napi + 1, sizeof *a->apis)) {
        a->apis[a->napi++] = (api_wait){ g->correlation, g->start, (uint32_t)idx, wait };
        return;
    }
    api_resolve(a, (uint32_t)idx, g->correlation, g->start);
    wait_credit(a, (uint32_t)idx, g->start, wait);
}

void an_gpu_resolve(prism_analysis *a, bool final)
{
    size_t keep = 0;
    for (size_t i = 0; i < a->napi; i++) {
        api_wait w = a->apis[i];
        if (final || regions_reach(a->threads[w.thread], w.start)) {
            api_resolve(a, w.thread, w.corr, w.start);
            wait_credit(a, w.thread, w.start, w.wait);
        } else
            a->apis[keep++] = w;
    }
    a->napi = keep;
    /* device work still waiting for its launch: age it, or give up on it */
    uint64_t key, v;
    bool left = false;
    for (size_t it = 0; pb_map_next(&a->corr_wait, &it, &key, &v);) {
        if (!v)
            continue;
        uint64_t *w = pb_map_slot(&a->corr_wait, key, NULL);
        if (final || (v & 1)) {
            a->gpu_unattributed += WAIT_NS(v);
            a->gpu_launch_unknown += WAIT_LAUNCHES(v);
            *w = 0;
        } else {
            *w = v | 1;
            left = true;
        }
    }
    if (!left)
        pb_map_clear(&a->corr_wait);
}

/* Device work: credit the region of its API call, or wait for it. */
static void device_done(prism_analysis *a, const prism_gpu_record *g, uint64_t dur)
{
    uint64_t where;
    if (!g->correlation)
        return;
    if (pb_map_get(&a->corr_node, g->correlation, &where) && where) {
        credit(a, where - 1, dur, g->type == PRISM_GPU_KERNEL);
        return;
    }
    if (a->corr_wait.count >= CORR_LIMIT) {
        a->gpu_unattributed += dur;
        return;
    }
    uint64_t *w = pb_map_slot(&a->corr_wait, g->correlation, NULL);
    if (w) {    /* a graph launch's kernels share one correlation: saturate */
        if (g->type == PRISM_GPU_KERNEL && WAIT_LAUNCHES(*w) < 0x7fffu)
            *w += 2;
        if (WAIT_NS(*w) + dur < (1ull << 48))
            *w += dur << 16;
    }
}

void an_gpu_records(prism_analysis *a, const prism_gpu_record *g, size_t n)
{
    if (!a->rings)
        an_gpu_want_rings(a);
    for (size_t i = 0; i < n; i++) {
        uint64_t dur = g[i].end - g[i].start;
        a->gpu_present = true;
        bool device_work = g[i].type == PRISM_GPU_KERNEL || g[i].type == PRISM_GPU_MEMCPY ||
                           g[i].type == PRISM_GPU_MEMSET;
        if (device_work) {
            if (!a->gpu_first || g[i].start < a->gpu_first)
                a->gpu_first = g[i].start;
            if (g[i].end > a->gpu_last)
                a->gpu_last = g[i].end;
            busy_add(a, g[i].start, g[i].end);
        }
        switch (g[i].type) {
        case PRISM_GPU_KERNEL: kernel(a, &g[i], dur); device_done(a, &g[i], dur); break;
        case PRISM_GPU_MEMCPY: copy(a, &g[i], dur); device_done(a, &g[i], dur); break;
        case PRISM_GPU_MEMSET: a->memset_ns += dur; device_done(a, &g[i], dur); break;
        case PRISM_GPU_SYNC: a->sync_ns += dur; break;
        case PRISM_GPU_API: a->api_ns += dur; api_call(a, &g[i]); break;
        default: break;
        }
    }
}

/* A kernel's statistics with its name id, sorted together. */
typedef struct kentry {
    prism_kernel_stat k;
    uint32_t name;
} kentry;

static int kernel_by_total(const void *x, const void *y, const void *ctx)
{
    const kentry *p = x, *q = y;
    (void)ctx;
    return p->k.total_ns < q->k.total_ns ? 1 : p->k.total_ns > q->k.total_ns ? -1 : 0;
}

/* Without memory for the pairs: an insertion sort in place (quadratic,
 * same order). */
static void sort_kernels_slow(prism_analysis *a)
{
    for (size_t i = 1; i < a->nk; i++) {
        prism_kernel_stat x = a->kstat[i];
        uint32_t xn = a->kname[i];
        size_t j = i;
        while (j > 0 && a->kstat[j - 1].total_ns < x.total_ns) {
            a->kstat[j] = a->kstat[j - 1];
            a->kname[j] = a->kname[j - 1];
            pb_map_put(&a->kernel_of, a->kname[j], j);
            j--;
        }
        a->kstat[j] = x;
        a->kname[j] = xn;
        pb_map_put(&a->kernel_of, xn, j);
    }
}

/* Kernels by total, descending; equal totals keep their order. */
static void sort_kernels(prism_analysis *a)
{
    if (a->nk < 2)
        return;
    kentry *e = malloc(a->nk * sizeof *e);
    if (!e) {
        sort_kernels_slow(a);
        return;
    }
    for (size_t i = 0; i < a->nk; i++)
        e[i] = (kentry){ a->kstat[i], a->kname[i] };
    pb_sort_stable(e, a->nk, sizeof *e, kernel_by_total, NULL);
    for (size_t i = 0; i < a->nk; i++) {
        a->kstat[i] = e[i].k;
        a->kname[i] = e[i].name;
        pb_map_put(&a->kernel_of, e[i].name, i);
    }
    free(e);
}

void an_gpu_refresh(prism_analysis *a)
{
    prism_gpu_stats *gs = &a->gpu_stats;
    memset(gs, 0, sizeof *gs);
    gs->present = a->gpu_present;
    gs->status = a->gpu_status[0] ? a->gpu_status : NULL;
    for (size_t i = 0; i < a->nk; i++) {
        prism_kernel_stat *k = &a->kstat[i];
        k->name = an_tree_name(a, a->kname[i]);
        k->mean_ns = k->count ? (double)k->total_ns / (double)k->count : 0;
        k->share = a->kernel_ns ? (double)k->total_ns / (double)a->kernel_ns : 0;
    }
    sort_kernels(a);
    for (size_t i = 0; i < a->nc; i++) {
        prism_copy_stat *c = &a->cstat[i];
        c->gb_per_s = c->total_ns ? (double)c->bytes / (double)c->total_ns : 0;
    }
    gs->kernels = a->kstat;
    gs->nkernels = a->nk;
    gs->copies = a->cstat;
    gs->ncopies = a->nc;
    gs->kernel_ns = a->kernel_ns;
    gs->copy_ns = a->copy_ns;
    gs->memset_ns = a->memset_ns;
    gs->sync_ns = a->sync_ns;
    gs->api_ns = a->api_ns;
    gs->launches = a->launches;
    gs->small_kernels = a->small;
    gs->comm_kernel_ns = a->comm_kernel_ns;
    gs->comm_launches = a->comm_launches;
    gs->busy_ns = a->busy_closed;
    for (size_t i = 0; i < a->nbusy; i++)
        gs->busy_ns += a->busy[i].end - a->busy[i].start;
    gs->span_ns = a->gpu_last > a->gpu_first ? a->gpu_last - a->gpu_first : 0;
    gs->idle_share = gs->span_ns ? 1.0 - (double)gs->busy_ns / (double)gs->span_ns : 0;
    uint64_t k, v;
    for (size_t it = 0; pb_map_next(&a->dropped_of, &it, &k, &v);)
        if (k & 1)
            gs->dropped = an_sat_add(gs->dropped, v);
}
