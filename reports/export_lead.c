/*
 * export_lead.c - the training thread of a file that does not name it (no
 * INFO steps.thread), found in the exports' quick first pass (export_scan.c)
 * without building a call tree.
 *
 * The rule is the analysis' (analysis/merge.c, training_thread; the leads
 * of analysis/tree.c): the thread, not of a worker process, whose earliest
 * leaf call of a sampled step comes right after the step begins (mean
 * offset under 5 % of the step) in at least half of the sampled steps, the
 * one with the smallest mean offset, the first seen on a tie.  A leaf call
 * is one whose children took no time; a step counts where it does not
 * overlap the next one; a leaf that starts after the last step known so far
 * waits for its step (a writer puts a step after its regions), and without
 * any step the waiting stops at the analysis' limit.  The thread's stack
 * follows the analysis too: frames past its depth limit are a count, and a
 * chunk's depth repairs what lost chunks left (frames dropped there close
 * without being a call; their time still makes their parent no leaf).
 *
 * Memory: the threads' stacks (at most 256 frames), the sampled steps
 * (20 bytes each) and the leaves waiting for their step.  The analysis of
 * the same file costs several times this pass (it builds every call path);
 * tests/export_lead_test.c holds the two to the same answer.
 */
#include <stdlib.h>
#include <string.h>

#include "export_scope.h"

#define LEAD_STACK 256u           /* the analysis' MAX_STACK */
#define LEAD_PENDING_LIMIT 65536u /* the analysis' PENDING_LIMIT */

typedef struct lframe {
    uint64_t start, child;
} lframe;

typedef struct lthread {
    uint32_t stream;
    bool worker;
    lframe *stack;
    uint32_t depth, scap, lost;
    uint64_t *pend;             /* leaf starts waiting for their step */
    size_t npend, pcap;
    size_t hint;                /* the step found last */
    uint32_t pos;               /* the lead's sampled position + 1; 0: none */
    uint64_t lo, hi, start;     /* its step and its earliest leaf */
    uint64_t clo, chi;          /* the step the last leaf fell in (not one a
                                   later step overlaps); empty: none */
    uint32_t cpos;              /* its sampled position + 1; 0: not sampled */
    double off_sum;             /* folded leads: offsets as fractions */
    uint64_t leads;
} lthread;

typedef struct lstep {
    uint64_t start, end;
    uint32_t pos;               /* sampled position; UINT32_MAX: not sampled */
} lstep;

struct ex_lead {
    lthread *t;
    size_t n, cap;
    pb_map of;                  /* stream -> index */
    lstep *steps;               /* in start order (stable) up to `sorted` */
    size_t nsteps, scap, sorted;
    uint32_t nsampled;
    bool unused;                /* no steps while the limit's leaves waited */
    bool oom;
};

ex_lead *ex_lead_new(void)
{
    return calloc(1, sizeof(ex_lead));
}

void ex_lead_free(ex_lead *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->t[i].stack);
        free(l->t[i].pend);
    }
    free(l->t);
    free(l->steps);
    pb_map_free(&l->of);
    free(l);
}

static lthread *thread_of(ex_lead *l, uint32_t stream)
{
    uint64_t i;
    if (pb_map_get(&l->of, stream, &i))
        return &l->t[i];
    if (!pb_vec_reserve((void **)&l->t, &l->cap, l->n + 1, sizeof *l->t) ||
        !pb_map_put(&l->of, stream, l->n)) {
        l->oom = true;
        return NULL;
    }
    l->t[l->n] = (lthread){ .stream = stream };
    return &l->t[l->n++];
}

void ex_lead_thread(ex_lead *l, const prism_thread *th)
{
    lthread *t = thread_of(l, th->stream);
    if (t)
        t->worker = th->is_worker;
}

/* A step's lead moves on: the one held is folded into the sums. */
static void fold(lthread *t)
{
    if (!t->pos || t->hi <= t->lo)
        return;
    t->off_sum += (double)(t->start - t->lo) / (double)(t->hi - t->lo);
    t->leads++;
    t->pos = 0;
}

/* The step holding ts (the last to start at or before it), or SIZE_MAX. */
static size_t step_at(const ex_lead *l, uint64_t ts, size_t *hint)
{
    size_t h = *hint;
    if (h < l->nsteps && l->steps[h].start <= ts &&
        (h + 1 == l->nsteps || l->steps[h + 1].start > ts))
        return ts < l->steps[h].end ? h : SIZE_MAX;
    size_t lo = 0, hi = l->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->steps[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return SIZE_MAX;
    *hint = lo - 1;
    return ts < l->steps[lo - 1].end ? lo - 1 : SIZE_MAX;
}

/* A leaf call at ts in the sampled step cur (its position + 1), [lo, hi). */
static void lead(lthread *t, uint32_t cur, uint64_t lo, uint64_t hi, uint64_t ts)
{
    if (t->pos == cur) {
        if (ts < t->start)
            t->start = ts;
        return;
    }
    if (t->pos > cur)
        return;                         /* an earlier step, after damage */
    fold(t);
    t->pos = cur;
    t->lo = lo;
    t->hi = hi;
    t->start = ts;
}

static int by_start(const void *x, const void *y, const void *ctx)
{
    const lstep *a = x, *b = y;
    (void)ctx;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Steps that arrived out of order put in place when a lookup needs them,
 * as the analysis does (analysis/series.c): the tail sorted (stable), then
 * merged into the sorted prefix from the back, equal starts in arrival
 * order.  Out of memory: left as they are (lookups degrade, nothing
 * breaks). */
static void sort_steps(ex_lead *l)
{
    size_t m = l->sorted, k = l->nsteps - m;
    lstep *tail = malloc(k * sizeof *tail);
    if (!tail)
        return;
    memcpy(tail, l->steps + m, k * sizeof *tail);
    pb_sort_stable(tail, k, sizeof *tail, by_start, NULL);
    size_t i = m, j = k, w = l->nsteps;
    while (j > 0) {
        w--;
        if (i > 0 && l->steps[i - 1].start > tail[j - 1].start)
            l->steps[w] = l->steps[--i];
        else
            l->steps[w] = tail[--j];
    }
    free(tail);
    l->sorted = l->nsteps;
}

/* A leaf call starting at ts; false while its step has not arrived. */
static bool leaf_at(ex_lead *l, lthread *t, uint64_t ts)
{
    if (l->sorted < l->nsteps)
        sort_steps(l);
    if (!l->nsteps || ts >= l->steps[l->nsteps - 1].end)
        return false;
    size_t h = step_at(l, ts, &t->hint);
    if (h == SIZE_MAX || (h + 1 < l->nsteps && l->steps[h + 1].start < l->steps[h].end))
        return true;                    /* in no step, or in an overlapped one */
    const lstep *st = &l->steps[h];
    t->clo = st->start;                 /* the thread's next leaves: likely here */
    t->chi = st->end;
    t->cpos = st->pos == UINT32_MAX ? 0 : st->pos + 1;
    if (t->cpos)
        lead(t, t->cpos, st->start, st->end, ts);
    return true;
}

static void leaf(ex_lead *l, lthread *t, uint64_t ts)
{
    if (ts >= t->clo && ts < t->chi) {  /* the step of the last leaf */
        if (t->cpos)
            lead(t, t->cpos, t->clo, t->chi, ts);
        return;
    }
    if (leaf_at(l, t, ts) || l->unused)
        return;
    if (t->npend >= LEAD_PENDING_LIMIT && !l->nsteps) {
        l->unused = true;               /* a profile without steps */
        t->npend = 0;
        return;
    }
    if (!pb_vec_reserve((void **)&t->pend, &t->pcap, t->npend + 1, sizeof *t->pend)) {
        l->oom = true;
        return;
    }
    t->pend[t->npend++] = ts;
}

static void push(lthread *t, uint64_t ts)
{
    if (t->depth >= LEAD_STACK) {
        t->lost += t->lost != UINT32_MAX;
        return;
    }
    if (t->depth == t->scap) {
        uint32_t cap = t->scap ? 2 * t->scap : 8;
        lframe *s = realloc(t->stack, (cap < LEAD_STACK ? cap : LEAD_STACK) * sizeof *s);
        if (!s) {
            t->lost += t->lost != UINT32_MAX;
            return;
        }
        t->stack = s;
        t->scap = cap < LEAD_STACK ? cap : LEAD_STACK;
    }
    t->stack[t->depth++] = (lframe){ ts, 0 };
}

static void pop(ex_lead *l, lthread *t, uint64_t ts, bool call)
{
    if (t->lost) {
        t->lost--;
        return;
    }
    lframe f = t->stack[--t->depth];
    uint64_t dur = ts >= f.start ? ts - f.start : 0;
    if (t->depth) {
        uint64_t *c = &t->stack[t->depth - 1].child;
        *c = *c + dur < *c ? UINT64_MAX : *c + dur;
    }
    if (call && !f.child)
        leaf(l, t, f.start);
}

void ex_lead_regions(ex_lead *l, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                     size_t n)
{
    lthread *t = n ? thread_of(l, stream) : NULL;
    if (!t)
        return;
    /* the writer's depth after lost or damaged chunks, as the analysis
     * repairs it (analysis/tree.c an_tree_regions) */
    uint64_t have = (uint64_t)t->depth + t->lost;
    if (have > depth) {
        uint64_t drop = have - depth, k = drop < t->lost ? drop : t->lost;
        t->lost -= (uint32_t)k;
        for (drop -= k; drop; drop--)
            pop(l, t, ev[0].ts, false);
    } else if (have < depth) {
        uint64_t add = depth - have;
        for (; add && t->depth < LEAD_STACK; add--) {
            uint32_t before = t->depth;
            push(t, ev[0].ts);
            if (t->depth == before) {   /* out of memory: counted lost, */
                add--;                  /* ... and so is the rest */
                break;
            }
        }
        t->lost += (uint32_t)add;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t ts = ev[i].ts;
        if (ev[i].kind == PRISM_REGION_ENTER) {
            if (__builtin_expect(!t->lost && t->depth < t->scap, 1))
                t->stack[t->depth++] = (lframe){ ts, 0 };
            else
                push(t, ts);
        } else if (__builtin_expect(!t->lost && t->depth, 1)) {
            lframe *f = &t->stack[--t->depth];  /* pop(), inlined */
            uint64_t dur = ts >= f->start ? ts - f->start : 0;
            if (t->depth) {
                uint64_t *c = &f[-1].child;
                *c = *c + dur < *c ? UINT64_MAX : *c + dur;
            }
            if (!f->child)
                leaf(l, t, f->start);
        } else if (t->lost) {
            t->lost--;
        }
    }
}

void ex_lead_steps(ex_lead *l, const prism_step *st, size_t n)
{
    if (!pb_vec_reserve((void **)&l->steps, &l->scap, l->nsteps + n, sizeof *l->steps)) {
        l->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        lstep s = { st[i].start, st[i].end < st[i].start ? st[i].start : st[i].end,
                    (st[i].flags & PRISM_STEP_SAMPLED) ? l->nsampled++ : UINT32_MAX };
        size_t at = l->nsteps++;
        if (l->sorted == at && (!at || l->steps[at - 1].start <= s.start))
            l->sorted = at + 1;         /* still in start order */
        l->steps[at] = s;
    }
    l->unused = false;
    for (size_t i = 0; i < l->n; i++) { /* the leaves that waited */
        lthread *t = &l->t[i];
        size_t keep = 0;
        for (size_t j = 0; j < t->npend; j++)
            if (!leaf_at(l, t, t->pend[j]))
                t->pend[keep++] = t->pend[j];
        t->npend = keep;
    }
}

int ex_lead_result(const ex_lead *l, uint32_t *stream)
{
    if (l->oom)
        return -1;
    size_t best = SIZE_MAX;
    double best_off = 0.05;
    for (size_t i = 0; i < l->n; i++) {
        const lthread *t = &l->t[i];
        if (t->worker)
            continue;                   /* a worker process never trains */
        double sum = t->off_sum;
        uint64_t k = t->leads;
        if (t->pos && t->hi > t->lo) {
            sum += (double)(t->start - t->lo) / (double)(t->hi - t->lo);
            k++;
        }
        if (!k || 2 * k < l->nsampled)
            continue;
        double off = sum / (double)k;
        if (off < best_off) {
            best_off = off;
            best = i;
        }
    }
    if (best == SIZE_MAX)
        return 0;
    *stream = l->t[best].stream;
    return 1;
}
