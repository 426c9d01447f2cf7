/*
 * unattributed.c - the step time no region holds, as a node of its own
 * (issue 25): on each thread, the gaps between its root regions that lie
 * inside sampled steps are summed per step into a node named
 * `(outside regions)` (PRISM_NODE_UNATTRIBUTED), kept beside the thread's
 * nodes (athread.out) and published as a root of the training thread's
 * tree, so it merges into the all-threads tree, the ops, compare and every
 * output like any other path.
 *
 * Calls are the steps in which it is > 0, and its per-call figures are
 * per step.  A gap is known when the next root region enters (tree.c calls
 * an_out_enter); the part of it past the last step known waits for its
 * steps (a step is written when it ends, after its regions).  At the end
 * of a complete profile the time after the thread's last root region
 * counts too.  The scheduler accounting comes from cpu.c: of an interval
 * between two CPU samples, the share credited to time outside regions is
 * split by the pieces of it that lie inside sampled steps, which move to
 * this node (the rest stays outside regions and steps).
 *
 * A region that began outside every sampled step and holds steps (a
 * region around the whole loop, a Python trace's `<module>` frame) leaves
 * no gap: the steps' time is held.  Its calls are no step's (in_step_ns
 * is 0), so their time inside sampled steps is counted here instead
 * (an_out_span, tnode_ext.spanned): the unattributed_time rule counts a
 * root's as held, prism_analysis_outside counts only the rest of a root's
 * time as outside steps, and a thread beside the training thread says
 * how much of its heaviest region's time lay in steps.  At a step's start
 * only the regions open then can hold it: at most the stack's depth per
 * step and thread.
 *
 * Memory: a few fields per thread, plus the gaps and root calls waiting for
 * their steps (bounded: OUT_PENDING each; on a profile without steps they
 * are dropped).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define OUT_PENDING 65536u

typedef struct out_gap {
    uint64_t lo, hi;
    bool cpu;                   /* a CPU share (below), not a gap of time */
    double on, wait, blk, busy; /* its credited accounting, over [lo, hi) */
} out_gap;

/* Close the step being filled: one call of the node, per-step moments. */
static void out_close(athread *t, uint64_t sum)
{
    tnode *o = &t->out;
    if (!sum)
        return;
    step_close(t, o, sum);
    o->calls++;
    if (sum < o->min)
        o->min = sum;
    if (sum > o->max)
        o->max = sum;
    if (o->calls == 1)
        o->shift = (double)sum;
    double d = (double)sum - o->shift;
    o->s1 += d;
    o->s2 += d * d;
}

/* len ns outside regions inside the sampled step at position pos. */
static void out_add(athread *t, uint32_t pos, uint64_t len)
{
    tnode *o = &t->out;
    uint32_t p = pos + 1;
    o->total = an_sat_add(o->total, len);
    o->self = o->total;
    if (o->step_cur == p) {
        o->step_sum = an_sat_add(o->step_sum, len);
    } else if (p > o->step_cur) {
        out_close(t, o->step_sum);
        o->step_cur = p;
        o->step_sum = len;
    } else {
        out_close(t, len);          /* an earlier step (after damage): its own */
    }
}

/* The end of the last step known (0: none). */
static uint64_t known_end(prism_analysis *a)
{
    an_series_sort_steps(a);
    return a->nsteps ? a->steps[a->nsteps - 1].end : 0;
}

/* The first step that may overlap ts: the last one starting at or before
 * it (steps are in start order). */
static size_t first_step(const prism_analysis *a, uint64_t ts)
{
    size_t lo = 0, hi = a->nsteps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->steps[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

/* [lo, hi) outside regions, every step it overlaps known: its pieces in
 * sampled steps, as time (gap) or as the CPU share g carries. */
static void apply(prism_analysis *a, athread *t, const out_gap *g)
{
    uint64_t len = g->hi - g->lo;
    for (size_t i = first_step(a, g->lo); i < a->nsteps && a->steps[i].start < g->hi; i++) {
        const prism_step *s = &a->steps[i];
        uint64_t b = s->start > g->lo ? s->start : g->lo, e = s->end < g->hi ? s->end : g->hi;
        if (e <= b || a->sampled_pos[i] == UINT32_MAX)
            continue;
        if (!g->cpu) {
            out_add(t, a->sampled_pos[i], e - b);
            continue;
        }
        /* the share, uniform over its span (as cpu.c credits it), moves */
        double f = (double)(e - b) / (double)len;
        uint64_t on = an_ns_round(g->on * f), wait = an_ns_round(g->wait * f);
        uint64_t busy = an_ns_round(g->busy * f), blk = an_ns_round(g->blk * f);
        acpu *c = &t->cpu;
        uint64_t span = e - b < c->out_span ? e - b : c->out_span;
        on = on < c->out_on ? on : c->out_on;
        wait = wait < c->out_wait ? wait : c->out_wait;
        busy = busy < c->out_busy ? busy : c->out_busy;
        blk = blk < c->out_blk ? blk : c->out_blk;
        tnode_cpu *o = an_cpu_get(t, &t->out);
        if (!o)
            continue;                   /* stays outside steps */
        c->out_span -= span, c->out_on -= on, c->out_wait -= wait, c->out_busy -= busy;
        c->out_blk -= blk;
        o->span += span, o->on += on, o->wait += wait, o->busy += busy, o->blk += blk;
    }
}

/* Apply what the steps known allow of g (its part before their end);
 * true when all of it was. */
static bool settle(prism_analysis *a, athread *t, out_gap *g, uint64_t end)
{
    if (g->lo >= end)
        return false;
    if (g->hi <= end) {
        apply(a, t, g);
        return true;
    }
    out_gap head = *g;
    double f = (double)(end - g->lo) / (double)(g->hi - g->lo);
    head.hi = end;
    head.on *= f, head.wait *= f, head.busy *= f, head.blk *= f;
    apply(a, t, &head);
    g->lo = end;
    g->on -= head.on, g->wait -= head.wait, g->busy -= head.busy, g->blk -= head.blk;
    return false;
}

static void add(prism_analysis *a, athread *t, out_gap g)
{
    if (g.hi <= g.lo)
        return;
    if (!t->nogap && settle(a, t, &g, known_end(a)))
        return;
    if (t->nogap >= OUT_PENDING || a->steps_unused) {
        t->nogap = 0;               /* long past every step known: no step holds them */
        if (a->steps_unused)
            return;
    }
    if (!pb_vec_reserve((void **)&t->ogap, &t->ogcap, t->nogap + 1, sizeof *t->ogap))
        return;
    t->ogap[t->nogap++] = g;
}

/* A call waiting for the steps that may lie inside it. */
typedef struct out_span {
    uint64_t lo, hi;
    uint32_t node;
} out_span;

/* [lo, hi) of a call, every step it overlaps known: its time inside
 * sampled steps. */
static void span_apply(prism_analysis *a, athread *t, const out_span *r)
{
    uint64_t in = 0;
    for (size_t i = first_step(a, r->lo); i < a->nsteps && a->steps[i].start < r->hi; i++) {
        const prism_step *s = &a->steps[i];
        uint64_t b = s->start > r->lo ? s->start : r->lo, e = s->end < r->hi ? s->end : r->hi;
        if (e > b && a->sampled_pos[i] != UINT32_MAX)
            in = an_sat_add(in, e - b);
    }
    tnode_ext *x = in && r->node < t->n ? an_ext_get(t, &t->nodes[r->node]) : NULL;
    if (x)
        x->spanned = an_sat_add(x->spanned, in);
}

/* Apply the part of r before the end of the steps known; true when all of
 * it was. */
static bool span_settle(prism_analysis *a, athread *t, out_span *r, uint64_t end)
{
    if (r->lo >= end)
        return false;
    out_span head = *r;
    head.hi = r->hi < end ? r->hi : end;
    span_apply(a, t, &head);
    r->lo = head.hi;
    return r->lo >= r->hi;
}

void an_out_span(prism_analysis *a, athread *t, uint32_t node, uint64_t lo, uint64_t hi)
{
    out_span r = { lo, hi, node };
    if (hi <= lo || a->steps_unused || span_settle(a, t, &r, known_end(a)))
        return;
    /* a live profile's calls since the last step known; past the bound,
     * steps that arrive later inside such a call count as not held */
    if (t->nospan >= OUT_PENDING ||
        !pb_vec_reserve((void **)&t->ospan, &t->ospcap, t->nospan + 1, sizeof *t->ospan))
        return;
    /* kept in start order (a call whose step it waited for comes late),
     * so that an_out_resolve stops at the first one past the steps */
    size_t at = t->nospan;
    while (at > 0 && t->ospan[at - 1].lo > r.lo)
        at--;
    memmove(t->ospan + at + 1, t->ospan + at, (t->nospan - at) * sizeof *t->ospan);
    t->ospan[at] = r;
    t->nospan++;
}

uint64_t an_out_spanned(const prism_analysis *a, size_t thread, uint32_t node)
{
    if (thread >= a->nthreads || node >= a->threads[thread]->n)
        return 0;
    const athread *t = a->threads[thread];
    const tnode_ext *x = an_ext(t, &t->nodes[node]);
    return x ? x->spanned : 0;
}

void an_out_enter(prism_analysis *a, athread *t, uint64_t ts)
{
    if (ts > t->out_from)
        add(a, t, (out_gap){ t->out_from, ts, false, 0, 0, 0, 0 });
}

void an_out_cpu(prism_analysis *a, athread *t, uint64_t span, double on, double wait,
                double blk, double busy)
{
    if (!span)
        return;
    for (size_t i = 0; i < t->noseg; i++) {
        uint64_t len = t->oseg[i].end - t->oseg[i].start;
        double f = (double)len / (double)span;
        add(a, t, (out_gap){ t->oseg[i].start, t->oseg[i].end, true, on * f, wait * f,
                             blk * f, busy * f });
    }
    t->noseg = 0;
}

void an_out_resolve(prism_analysis *a, bool final)
{
    /* called with every batch of steps: nothing to do (and no sorting of
     * the steps, which a file with its steps in reverse would pay for on
     * every batch) unless a gap waits for them */
    bool waiting = final;
    for (size_t i = 0; i < a->nthreads && !waiting; i++)
        waiting = a->threads[i]->nogap > 0 || a->threads[i]->nospan > 0;
    if (!waiting)
        return;
    uint64_t end = known_end(a);
    for (size_t i = 0; i < a->nthreads; i++) {
        athread *t = a->threads[i];
        size_t k = 0;
        while (k < t->nogap && settle(a, t, &t->ogap[k], end))
            k++;
        if (k)
            memmove(t->ogap, t->ogap + k, (t->nogap - k) * sizeof *t->ogap);
        t->nogap -= k;
        for (k = 0; k < t->nospan && span_settle(a, t, &t->ospan[k], end); k++)
            continue;
        if (k)
            memmove(t->ospan, t->ospan + k, (t->nospan - k) * sizeof *t->ospan);
        t->nospan -= k;
        /* the time after the last root region, once no region can follow */
        if (final && !t->depth && !t->lost && t->n && a->have_ts && a->last_ts > t->out_from) {
            an_out_enter(a, t, a->last_ts);
            t->out_from = a->last_ts;
        }
    }
}

void an_out_publish(const athread *t, prism_node *p)
{
    tnode x = t->out;
    uint64_t calls = x.calls, sum = x.step_sum;
    double mean = 0, m2 = 0;
    if (sum) {                      /* the step being filled, as a call */
        calls++;
        if (sum < x.min)
            x.min = sum;
        if (sum > x.max)
            x.max = sum;
        if (!x.calls)
            x.shift = (double)sum;
        double d = (double)sum - x.shift;
        x.s1 += d;
        x.s2 += d * d;
    }
    if (calls) {
        mean = x.shift + x.s1 / (double)calls;
        m2 = x.s2 - x.s1 * x.s1 / (double)calls;
    }
    p->calls = calls;
    p->total_ns = p->self_ns = x.total;
    p->min_ns = calls ? x.min : 0;
    p->max_ns = x.max;
    p->mean_ns = mean;
    p->std_ns = calls > 1 && m2 > 0 ? sqrt(m2 / (double)(calls - 1)) : 0;
    p->flags |= PRISM_NODE_UNATTRIBUTED;
}

void an_out_free(athread *t)
{
    an_res_free(&t->out);
    free(t->ogap);
    free(t->oseg);
    free(t->ospan);
}
