/*
 * tree.c - call trees from region events: one per thread while streaming
 * (a stack of open regions per thread); merge.c publishes them and merges
 * them by path into the all-threads tree on refresh.  Each node sums its time in the sampled step
 * being filled and folds the sum into shifted moments (and, now and then,
 * a bounded reservoir: samples.c) when the next step begins, so its
 * per-step figures cost bounded memory per call path.  A
 * node's completions arrive in start order (one thread, one path: calls
 * never overlap), so a step, once left, is never seen again by that node.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"

#define PENDING_LIMIT 65536u

athread *an_tree_thread(prism_analysis *a, uint32_t stream)
{
    uint64_t idx;
    if (pb_map_get(&a->thread_of, stream, &idx))
        return a->threads[idx];
    athread *t = calloc(1, sizeof *t);
    if (!t || !pb_vec_reserve((void **)&a->threads, &a->tcap, a->nthreads + 1, sizeof *a->threads) ||
        !pb_map_put(&a->thread_of, stream, a->nthreads)) {
        free(t);
        return NULL;
    }
    t->stream = stream;
    t->out.parent = PRISM_NO_NODE;
    t->out.merged = PRISM_NO_NODE;
    t->out.min = UINT64_MAX;
    snprintf(t->name, sizeof t->name, "thread %u", stream);
    if (a->rings)
        an_ring_start(t);
    a->threads[a->nthreads++] = t;
    return t;
}

void an_ring_start(athread *t)
{
    t->ring = calloc(TRANS_RING_FIRST, sizeof *t->ring);
    t->rcap = t->ring ? TRANS_RING_FIRST : 0;
}

bool an_ring_grow(athread *t)
{
    trans *r = realloc(t->ring, 2 * (size_t)t->rcap * sizeof *r);
    if (!r)
        return false;               /* it wraps at the size it has */
    t->ring = r;
    t->rcap *= 2;
    return true;
}

void an_tree_free_thread(athread *t)
{
    if (!t)
        return;
    free(t->ring);
    free(t->ckey);
    free(t->cval);
    free(t->stack);
    free(t->cpu.touched);
    free(t->cpu.recent);
    free(t->cpu.ls);
    free(t->cpu.rate);
    free(t->cpu.carry);
    for (size_t i = 0; i < t->n; i++)
        an_res_free(&t->nodes[i]);
    free(t->nodes);
    an_pool_free(&t->ext);
    an_pool_free(&t->cpus);
    pb_itab_free(&t->child);
    free(t->pending);
    free(t->pub);
    an_out_free(t);
    free(t);
}

void *an_pool_add(an_pool *p, size_t size, uint32_t *i)
{
    if (p->n == UINT32_MAX)
        return NULL;
    if (!p->blk && !(p->blk = calloc(AN_POOL_BLOCKS, sizeof *p->blk)))
        return NULL;                    /* a thread's first: its block table */
    uint64_t x = (uint64_t)p->n + AN_POOL_FIRST;
    unsigned k = 63u - (unsigned)__builtin_clzll(x) - 4u;
    if (x == (uint64_t)AN_POOL_FIRST << k && !p->blk[k] &&
        !(p->blk[k] = calloc((size_t)AN_POOL_FIRST << k, size)))
        return NULL;                    /* the first record of block k */
    *i = ++p->n;
    return an_pool_at(p, size, *i);
}

void an_pool_free(an_pool *p)
{
    for (size_t k = 0; p->blk && k < AN_POOL_BLOCKS; k++)
        free(p->blk[k]);
    free(p->blk);
    memset(p, 0, sizeof *p);
}

tnode_ext *an_ext_get(athread *t, tnode *nd)
{
    if (nd->ext)
        return an_pool_at(&t->ext, sizeof(tnode_ext), nd->ext);
    return an_pool_add(&t->ext, sizeof(tnode_ext), &nd->ext);
}

tnode_cpu *an_cpu_get(athread *t, tnode *nd)
{
    if (nd->cpu)
        return an_pool_at(&t->cpus, sizeof(tnode_cpu), nd->cpu);
    return an_pool_add(&t->cpus, sizeof(tnode_cpu), &nd->cpu);
}

const char *an_tree_name(const prism_analysis *a, uint32_t name_id)
{
    if (name_id == 0)
        return "(unknown)";
    const char *s = a->reader ? prism_reader_string(a->reader, name_id, NULL) : NULL;
    return s ? s : "(unnamed)";
}

static uint32_t child_slow(athread *t, uint32_t parent, uint32_t name, uint64_t key,
                           size_t slot);

/* The child of `parent` (PRISM_NO_NODE: a root) named `name`: the common
 * case, a node seen recently, from a direct-mapped cache, inline. */
static inline uint32_t child_of(athread *t, uint32_t parent, uint32_t name)
{
    uint64_t key = ((uint64_t)parent + 1) << 32 | name;
    size_t slot = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - CHILD_CACHE_BITS));
    if (t->ckey && t->ckey[slot] == key + 1)
        return t->cval[slot];
    return child_slow(t, parent, name, key, slot);
}

/* The child table's keys are in the nodes: (parent + 1) << 32 | name. */
typedef struct child_key {
    const athread *t;
    uint32_t parent, name;
} child_key;

static bool child_eq(const void *ctx, uint32_t i)
{
    const child_key *k = ctx;
    const tnode *nd = &k->t->nodes[i];
    return nd->name == k->name && nd->parent == k->parent;
}

static uint64_t child_hash(const void *ctx, uint32_t i)
{
    const tnode *nd = &((const child_key *)ctx)->t->nodes[i];
    return ((uint64_t)nd->parent + 1) << 32 | nd->name;
}

static uint32_t child_slow(athread *t, uint32_t parent, uint32_t name, uint64_t key,
                           size_t slot)
{
    child_key k = { t, parent, name };
    size_t at;
    uint32_t v = pb_itab_find(&t->child, key, child_eq, &k, &at);
    if (!t->ckey && t->n >= CHILD_CACHE_FROM) {     /* a thread with a tree worth it */
        t->ckey = calloc(1u << CHILD_CACHE_BITS, sizeof *t->ckey);
        t->cval = t->ckey ? malloc((1u << CHILD_CACHE_BITS) * sizeof *t->cval) : NULL;
        if (!t->cval) {
            free(t->ckey);
            t->ckey = NULL;
        }
    }
    if (v != UINT32_MAX) {
        if (t->ckey) {
            t->ckey[slot] = key + 1;
            t->cval[slot] = v;
        }
        return v;
    }
    if (!pb_vec_reserve((void **)&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes) ||
        !pb_itab_add(&t->child, at, (uint32_t)t->n, key, child_hash, &k))
        return PRISM_NO_NODE;           /* (pb_itab_add refuses index UINT32_MAX) */
    tnode *nd = &t->nodes[t->n];
    memset(nd, 0, sizeof *nd);
    nd->parent = parent;
    nd->name = name;
    nd->min = UINT64_MAX;
    if (t->ckey) {
        t->ckey[slot] = key + 1;
        t->cval[slot] = (uint32_t)t->n;
    }
    return (uint32_t)t->n++;
}

/* `ring`: a constant at each call site, so the loop without GPU data
 * carries no test for it. */
static inline __attribute__((always_inline)) void transition(athread *t, bool ring, uint64_t ts,
                                                             uint32_t node)
{
    if (ring)
        an_ring_put(t, ts, node);
}

/* Room for one more open frame: the stack doubles, from 4 to MAX_STACK. */
static bool stack_grow(athread *t)
{
    uint32_t cap = t->scap ? t->scap * 2 : 4;
    if (cap > MAX_STACK)
        cap = MAX_STACK;
    frame *s = realloc(t->stack, cap * sizeof *s);
    if (!s)
        return false;
    t->stack = s;
    t->scap = cap;
    return true;
}

static inline __attribute__((always_inline)) void push(prism_analysis *a, athread *t, bool ring,
                                                       uint32_t name, uint64_t ts)
{
    if (__builtin_expect(!t->depth && !t->lost, 0))
        an_out_enter(a, t, ts);         /* the gap since the last root region */
    if (t->depth >= MAX_STACK || (t->depth == t->scap && !stack_grow(t))) {
        t->lost += t->lost != UINT32_MAX;
        t->too_deep += t->depth >= MAX_STACK;   /* (else out of memory: lost) */
        return;
    }
    uint32_t parent = t->depth ? t->stack[t->depth - 1].node : PRISM_NO_NODE;
    uint32_t node = parent == PRISM_NO_NODE && t->depth ? PRISM_NO_NODE : child_of(t, parent, name);
    t->stack[t->depth++] = (frame){ node, ts, 0 };
    transition(t, ring, ts, node);
}

/*
 * The earliest leaf call of each sampled step on a thread: where the
 * step's work begins (on the training thread, usually fetching the batch)
 * and how far into the step that is (near 0 on the thread that marks the
 * steps; anywhere on a loader).  A step's lead is folded when the thread
 * moves on to a later step, or at refresh.
 */
void an_tree_lead_fold(athread *t)
{
    if (!t->lead_pos || t->lead_hi <= t->lead_lo)
        return;
    tnode_ext *x = t->lead_node < t->n ? an_ext_get(t, &t->nodes[t->lead_node]) : NULL;
    if (x)
        x->first_leaf++;
    t->lead_off_sum += (double)(t->lead_start - t->lead_lo) / (double)(t->lead_hi - t->lead_lo);
    t->lead_steps++;
    t->lead_pos = 0;
}

static void lead(athread *t, uint32_t cur, uint32_t node, uint64_t start)
{
    if (t->lead_pos != cur) {
        if (t->lead_pos > cur)
            return;                     /* an earlier step, after damage */
        an_tree_lead_fold(t);
        t->lead_pos = cur;
        t->lead_lo = t->step_lo;
        t->lead_hi = t->step_hi;
    }
    t->lead_start = start;
    t->lead_node = node;
}

/* an_tree_attribute's common case, inlined into pop: the completion falls in
 * the sampled step found last, and ends in it; this node is filling it, or
 * moves on to it from an earlier one.  (step_cur is the position + 1, 0:
 * none.) */
static inline void attribute(prism_analysis *a, athread *t, uint32_t node, bool leaf,
                             uint64_t start, uint64_t dur)
{
    if (start >= t->step_lo && start < t->step_hi && dur <= t->step_hi - start) {
        tnode *nd = &t->nodes[node];
        uint32_t cur = t->step_pos + 1;
        if (leaf && (t->lead_pos != cur || start < t->lead_start))
            lead(t, cur, node, start);
        if (nd->step_cur == cur) {
            nd->step_sum += dur;
            return;
        }
        if (nd->step_cur < cur) {
            step_close(t, nd, nd->step_sum);
            nd->step_cur = cur;
            nd->step_sum = dur;
            return;
        }
    }
    an_tree_attribute(a, t, node, leaf, start, dur);
}

static inline __attribute__((always_inline)) void pop(prism_analysis *a, athread *t, bool ring,
                                                      uint64_t ts, bool count)
{
    if (t->lost) {
        t->lost--;
        return;
    }
    frame f = t->stack[--t->depth];
    if (!t->depth && ts > t->out_from)
        t->out_from = ts;
    transition(t, ring, ts, t->depth ? t->stack[t->depth - 1].node : PRISM_NO_NODE);
    uint64_t dur = ts >= f.start ? ts - f.start : 0;
    if (t->depth)
        t->stack[t->depth - 1].child = an_sat_add(t->stack[t->depth - 1].child, dur);
    if (!count || f.node == PRISM_NO_NODE)
        return;
    tnode *nd = &t->nodes[f.node];
    nd->calls++;
    nd->total = an_sat_add(nd->total, dur);
    nd->self = an_sat_add(nd->self, dur >= f.child ? dur - f.child : 0);
    if (dur < nd->min)
        nd->min = dur;
    if (dur > nd->max)
        nd->max = dur;
    if (nd->calls == 1)
        nd->shift = (double)dur;        /* shifted sums: stable and cheap */
    double d = (double)dur - nd->shift;
    nd->s1 += d;
    nd->s2 += d * d;
    attribute(a, t, f.node, f.child == 0, f.start, dur);
}

static inline __attribute__((always_inline)) void events(prism_analysis *a, athread *t, bool ring,
                                                         const prism_region_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == PRISM_REGION_ENTER)
            push(a, t, ring, ev[i].name, ev[i].ts);
        else if (t->depth + t->lost)
            pop(a, t, ring, ev[i].ts, true);
        else
            a->unmatched_exits++;
    }
}

void an_tree_regions(prism_analysis *a, uint32_t stream, uint32_t depth,
                  const prism_region_event *ev, size_t n)
{
    athread *t = an_tree_thread(a, stream);
    if (!t)
        return;
    if (n && (!t->first_ts || ev[0].ts < t->first_ts))
        t->first_ts = ev[0].ts ? ev[0].ts : 1;
    if (n && ev[n - 1].ts > t->last_ts)
        t->last_ts = ev[n - 1].ts;
    /* After lost or damaged chunks the writer's depth tells the truth:
     * drop frames we hold too many, invent unknown ones we miss.  Frames
     * past the stack are only a count (t->lost), so this is at most
     * MAX_STACK pushes or pops whatever the depth claims (a hostile chunk
     * may claim 2^32-1); inventing more than the stack holds is counted as
     * damage (a->depth_damaged). */
    bool ring = t->ring != NULL;
    uint64_t have = (uint64_t)t->depth + t->lost;
    if (have > depth) {
        uint64_t drop = have - depth, l = drop < t->lost ? drop : t->lost;
        t->lost -= (uint32_t)l;
        for (drop -= l; drop; drop--)   /* drop <= t->depth <= MAX_STACK */
            pop(a, t, ring, ev[0].ts, false);
    } else if (have < depth) {
        uint64_t add = depth - have;
        if (add > MAX_STACK)
            a->depth_damaged++;
        for (; add && t->depth < MAX_STACK; add--)
            push(a, t, ring, 0, ev[0].ts);
        t->lost += (uint32_t)add;       /* have + add = depth < 2^32 */
    }
    if (ring)
        events(a, t, true, ev, n);
    else
        events(a, t, false, ev, n);
}

/* The writer puts an UNRECORDED chunk between a thread's REGIONS chunks,
 * where its depth is the thread's: the region it belongs to is on the
 * stack right now.  A depth that does not match (chunks lost before it)
 * places nothing; depth 0 is the thread's top level, under no node. */
void an_tree_unrecorded(prism_analysis *a, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    athread *t = an_tree_thread(a, stream);
    if (!t)
        return;
    for (size_t i = 0; i < n; i++) {
        uint32_t d = u[i].depth;
        if (!d || d != t->depth + t->lost || d > t->depth)
            continue;
        uint32_t node = t->stack[d - 1].node;
        if (node == PRISM_NO_NODE)
            continue;
        uint64_t r = u[i].regions;
        tnode_ext *x = an_ext_get(t, &t->nodes[node]);
        if (!x)
            continue;
        x->unrec += r;
        a->unrec_placed = a->unrec_placed + r < a->unrec_placed ? UINT64_MAX : a->unrec_placed + r;
    }
}

/*
 * The region a sample taken at ts was taken in.  On a clock that can read
 * the same value twice (a coarse or virtualised TSC), a counter recorded
 * as the last thing inside a region can carry the very timestamp of the
 * region's exit; the exit is recorded after it, so exits at exactly ts do
 * not count: the sample belongs to the region they closed.
 */
uint32_t an_tree_node_at_sample(const athread *t, uint64_t ts)
{
    if (!t->ring || !t->nring)
        return PRISM_NO_NODE;
    uint64_t lo = t->nring > t->rcap ? t->nring - t->rcap : 0, hi = t->nring;
    if (t->ring[(lo) & (t->rcap - 1)].ts > ts)
        return PRISM_NO_NODE;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->ring[(mid) & (t->rcap - 1)].ts <= ts)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t first = t->nring > t->rcap ? t->nring - t->rcap : 0;
    while (lo > first && t->ring[(lo) & (t->rcap - 1)].ts == ts) {
        uint32_t after = t->ring[(lo) & (t->rcap - 1)].node;
        uint32_t before = t->ring[((lo - 1)) & (t->rcap - 1)].node;
        bool exit = before != PRISM_NO_NODE && before < t->n &&
                    t->nodes[before].parent == after;
        if (!exit)
            break;
        lo--;                           /* recorded after the sample */
    }
    return t->ring[(lo) & (t->rcap - 1)].node;
}

uint32_t an_tree_node_at(const athread *t, uint64_t ts)
{
    if (!t->ring || !t->nring)
        return PRISM_NO_NODE;
    uint64_t lo = t->nring > t->rcap ? t->nring - t->rcap : 0, hi = t->nring;
    if (t->ring[(lo) & (t->rcap - 1)].ts > ts)
        return PRISM_NO_NODE;           /* older than what the ring holds */
    while (hi - lo > 1) {               /* last transition at or before ts */
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->ring[(mid) & (t->rcap - 1)].ts <= ts)
            lo = mid;
        else
            hi = mid;
    }
    return t->ring[(lo) & (t->rcap - 1)].node;
}

/* The sampled step containing ts: its position, UINT32_MAX when none,
 * or UINT64_MAX when the step may not have arrived yet.  `hint` caches the
 * step found last: consecutive completions mostly fall in the same step. */
static uint64_t step_at(prism_analysis *a, uint64_t ts, size_t *hint)
{
    an_series_sort_steps(a);               /* a late step's tail, if any */
    if (!a->nsteps)
        return UINT64_MAX;
    if (ts >= a->steps[a->nsteps - 1].end)
        return UINT64_MAX;
    size_t h = *hint;
    if (h < a->nsteps && a->steps[h].start <= ts && ts < a->steps[h].end &&
        (h + 1 == a->nsteps || a->steps[h + 1].start > ts))
        return a->sampled_pos[h];
    size_t lo = 0, hi = a->nsteps;       /* steps are in start order */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->steps[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ts >= a->steps[lo - 1].end)
        return UINT32_MAX;
    *hint = lo - 1;
    return a->sampled_pos[lo - 1];
}

/* The slow path of attribute(): find the step, or wait for it. */
void an_tree_attribute(prism_analysis *a, athread *t, uint32_t node, bool leaf, uint64_t start,
                    uint64_t dur)
{
    an_series_sort_steps(a);
    uint64_t pos = a->nsteps && start < a->steps[a->nsteps - 1].end
                       ? step_at(a, start, &t->last_step)
                       : UINT64_MAX;            /* its step has not arrived yet */
    if (pos < UINT32_MAX && t->last_step < a->nsteps) {
        const prism_step *st = &a->steps[t->last_step];
        if (st->start <= start && start < st->end &&
            (t->last_step + 1 == a->nsteps || a->steps[t->last_step + 1].start >= st->end)) {
            t->step_lo = st->start;
            t->step_hi = st->end;
            t->step_pos = (uint32_t)pos;
            if (leaf && (t->lead_pos != t->step_pos + 1 || start < t->lead_start))
                lead(t, t->step_pos + 1, node, start);
        }
    }
    if (pos == UINT64_MAX) {
        if (a->steps_unused)
            return;
        if (t->npend >= PENDING_LIMIT && !a->nsteps) {
            a->steps_unused = true;         /* a profile without steps */
            t->npend = 0;
            return;
        }
        if (!pb_vec_reserve((void **)&t->pending, &t->pcap, t->npend + 1, sizeof *t->pending))
            return;
        t->pending[t->npend++] = (pend){ node, leaf, start, dur };
        return;
    }
    if (pos == UINT32_MAX) {
        /* in no sampled step: the call may still hold some (a region
         * around the loop) */
        an_out_span(a, t, node, start, an_sat_add(start, dur));
        return;
    }
    /* a call that outlasts its step (a region entered in the step's last
     * moments that runs on after it: a validation pass) belongs to it for
     * its part inside it; the rest counts in the steps it overlaps, if any */
    if (t->last_step < a->nsteps) {
        uint64_t end = a->steps[t->last_step].end;
        if (start < end && dur > end - start) {
            an_out_span(a, t, node, end, an_sat_add(start, dur));
            dur = end - start;
        }
    }
    tnode *nd = &t->nodes[node];
    uint32_t p = (uint32_t)pos + 1;
    if (nd->step_cur == p) {
        nd->step_sum += dur;
    } else if (p > nd->step_cur) {
        step_close(t, nd, nd->step_sum);    /* the node moved on to a later step */
        nd->step_cur = p;
        nd->step_sum = dur;
    } else {
        step_close(t, nd, dur); /* out of order (only after damage): its own sample */
    }
}

void an_tree_resolve_pending(prism_analysis *a)
{
    for (size_t i = 0; i < a->nthreads; i++) {
        athread *t = a->threads[i];
        size_t keep = 0, n = t->npend;
        t->npend = 0;
        for (size_t j = 0; j < n; j++) {
            pend p = t->pending[j];
            if (step_at(a, p.start, &t->last_step) == UINT64_MAX)
                t->pending[keep++] = p;
            else
                attribute(a, t, p.node, p.leaf, p.start, p.dur);
        }
        t->npend = keep;
    }
    an_out_resolve(a, false);
}

