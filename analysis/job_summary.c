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
#include <strings.h>
#include <xxhash.h>

#include "internal.h"
#include "prism/job.h"

#define NO_REGION UINT32_MAX
/* Distinct string ids pass 2 binds to kept names; a hostile file that
 * interns one name under more ids than this loses (never invents) wait. */
#define MAX_NAME_IDS 65536u

/* ---- small pieces ---- */

static prism_status fail(prism_status st, const char *why, char *msg, size_t msglen)
{
    if (msglen)
        snprintf(msg, msglen, "%s", why);
    return st;
}

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
    /* woken from the wait but not yet on a CPU (a crowded machine) is
     * still the wait: blocked plus run queue, and blocked more than run */
    if (at_least(n->cpu_known_ns, 0.5, n->total_ns) &&
        at_least(an_sat_add(n->offcpu_ns, n->runq_ns), 0.5, n->cpu_known_ns) &&
        n->offcpu_ns > n->oncpu_ns)
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
    for (size_t i = 0; i < g->nkernels; i++)
        if (g->kernels[i].name && !strncasecmp(g->kernels[i].name, "nccl", 4))
            s->nccl_kernel_ns = an_sat_add(s->nccl_kernel_ns, g->kernels[i].total_ns);
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
    sort_stable(v, n, sizeof *v, by_index, NULL);
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
    sort_stable(v, k, sizeof *v, by_start, NULL);
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
    sort_stable(order, t->count, sizeof *order, by_weight, t->nodes);
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

/* ---- pass 2: the training thread's time in waiting regions, per step ---- */

typedef struct wframe {
    uint64_t start;
    uint32_t region;            /* the kept path open here, or NO_REGION */
} wframe;

typedef struct pass2 {
    prism_rank_summary *s;
    const bool *deepest;        /* per region: counts as the step's wait   */
    const prism_step *spans;    /* steps by start, index = position in s->steps */
    uint32_t stream;
    u64map name_of_hash;        /* XXH3 of a kept name -> a region with it */
    u64map name_of_id;          /* string id -> a region with its name      */
    u64map region_of_path;      /* path hash -> kept region                 */
    uint32_t unknown_name;      /* the region named "(unknown)", or none    */
    wframe stack[MAX_STACK];
    uint32_t depth;
    uint64_t lost;              /* frames past the stack: only counted      */
    bool nomem;
} pass2;

/* The string callback: remember only ids whose name a kept path uses. */
static void p2_string(void *ctx, uint32_t id, const char *str, size_t len)
{
    pass2 *p = ctx;
    uint64_t r;
    len = strnlen(str, len);            /* the analysis names stop at a NUL */
    if (p->name_of_id.count >= MAX_NAME_IDS ||
        !u64map_get(&p->name_of_hash, XXH3_64bits(str, len), &r))
        return;
    const char *name = p->s->regions[r].name;
    if (strlen(name) == len && !memcmp(name, str, len) && !u64map_put(&p->name_of_id, id, r))
        p->nomem = true;
}

/* The kept region for a child named like region `named` under `parent`
 * (NO_REGION: at the top level), hashed as the analysis hashes paths. */
static uint32_t p2_child(const pass2 *p, uint32_t parent, uint32_t named)
{
    const prism_rank_region *rg = p->s->regions;
    uint64_t seed = parent == NO_REGION ? 0 : rg[parent].path_hash, r;
    const char *name = rg[named].name;
    uint64_t h = XXH3_64bits_withSeed(name, strlen(name), seed);
    if (!u64map_get(&p->region_of_path, h, &r) || rg[r].parent_hash != seed ||
        strcmp(rg[r].name, name))
        return NO_REGION;
    return (uint32_t)r;
}

static void p2_push(pass2 *p, uint32_t id, uint64_t ts)
{
    if (p->depth >= MAX_STACK) {
        p->lost++;
        return;
    }
    uint32_t parent = p->depth ? p->stack[p->depth - 1].region : NO_REGION, region = NO_REGION;
    uint64_t named;
    /* A path under one not kept is not kept either (the set is closed
     * under parent).  Name id 0 is what the analysis calls "(unknown)":
     * the frames it invents after damage.  An id whose string never came
     * (the analysis says "(unnamed)") matches nothing here: damage loses
     * wait, it never adds any. */
    bool known = id ? u64map_get(&p->name_of_id, id, &named)
                    : (named = p->unknown_name) != NO_REGION;
    if ((!p->depth || parent != NO_REGION) && known)
        region = p2_child(p, parent, (uint32_t)named);
    p->stack[p->depth++] = (wframe){ ts, region };
}

/* The step (position in s->steps) holding time ts, or SIZE_MAX. */
static size_t p2_step(const pass2 *p, uint64_t ts)
{
    size_t lo = 0, hi = p->s->nsteps;   /* first span starting after ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->spans[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || ts >= p->spans[lo - 1].end)
        return SIZE_MAX;
    return (size_t)p->spans[lo - 1].index;
}

/* count: false for frames dropped to match the writer's depth (their end
 * is unknown: nothing is credited, as the analysis credits nothing). */
static void p2_pop(pass2 *p, uint64_t ts, bool count)
{
    if (p->lost) {
        p->lost--;
        return;
    }
    wframe f = p->stack[--p->depth];
    if (!count || f.region == NO_REGION || !p->deepest[f.region] || ts <= f.start)
        return;
    size_t k = p2_step(p, f.start);
    if (k != SIZE_MAX)
        p->s->steps[k].wait_ns = an_sat_add(p->s->steps[k].wait_ns, ts - f.start);
}

/* As tree.c: the writer's depth before a chunk is the truth after lost or
 * damaged chunks; frames we hold too many are dropped, missing ones
 * invented (name 0), beyond the stack only counted. */
static void p2_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    pass2 *p = ctx;
    if (stream != p->stream || !n)
        return;
    uint64_t have = p->depth + p->lost;
    if (have > depth) {
        uint64_t drop = have - depth, l = drop < p->lost ? drop : p->lost;
        p->lost -= l;
        for (drop -= l; drop && p->depth; drop--)
            p2_pop(p, ev[0].ts, false);
    } else if (have < depth) {
        uint64_t add = depth - have;
        for (; add && p->depth < MAX_STACK; add--)
            p2_push(p, 0, ev[0].ts);
        p->lost += add;
    }
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == PRISM_REGION_ENTER)
            p2_push(p, ev[i].name, ev[i].ts);
        else if (p->depth + p->lost)
            p2_pop(p, ev[i].ts, true);      /* an exit without its enter: ignored */
    }
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

static prism_status read_error(prism_reader *r, prism_status st, char *msg, size_t msglen,
                               uint64_t *offset)
{
    const char *m = prism_strerror(st);
    if (r)
        prism_reader_error(r, &m, offset);
    return fail(st, m, msg, msglen);
}

static prism_status pass2_read(const char *path, pass2 *p, char *msg, size_t msglen,
                               uint64_t *offset)
{
    prism_rank_summary *s = p->s;
    p->unknown_name = NO_REGION;
    for (size_t i = 0; i < s->nregions; i++) {
        const char *name = s->regions[i].name;
        if (!u64map_put(&p->name_of_hash, XXH3_64bits(name, strlen(name)), i) ||
            !u64map_put(&p->region_of_path, s->regions[i].path_hash, i))
            return fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
        if (!strcmp(name, "(unknown)"))
            p->unknown_name = (uint32_t)i;
    }
    prism_reader_callbacks cb = { .string = p2_string, .regions = p2_regions };
    prism_reader *r = NULL;
    prism_status st = prism_read_file(path, &cb, p, &r);
    if (st != PRISM_OK)
        st = read_error(r, st, msg, msglen, offset);
    else if (p->nomem)
        st = fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
    prism_reader_free(r);
    /* A region running past its step's end (an exit lost to damage, a
     * step cut short) is never more wait than the step had. */
    for (size_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].wait_ns > s->steps[i].step_ns)
            s->steps[i].wait_ns = s->steps[i].step_ns;
    return st;
}

/* ---- the summary ---- */

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
        return fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
    }
    free(parent);
    prism_status st = PRISM_OK;
    if (any && have_stream && s->nsteps) {
        pass2 *p = calloc(1, sizeof *p);
        if (!p) {
            st = fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
        } else {
            p->s = s;
            p->deepest = deep;
            p->spans = spans;
            p->stream = stream;
            st = pass2_read(path, p, msg, msglen, offset);
            u64map_free(&p->name_of_hash);
            u64map_free(&p->name_of_id);
            u64map_free(&p->region_of_path);
            free(p);
        }
    }
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
        return fail(PRISM_E_ARG, "no summary to fill", msg, msglen);
    memset(out, 0, sizeof *out);
    out->rank = -1;
    if (!path)
        return fail(PRISM_E_ARG, "no file given", msg, msglen);
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
