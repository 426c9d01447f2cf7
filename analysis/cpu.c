/*
 * cpu.c - wait vs work, measured: the profile's CPU samples (each thread's
 * cumulative on-CPU and run-queue time, read by the collector at one
 * instant per pass) credited to the regions that were open on the thread.
 *
 * A pass is the consecutive records up to a stream's second appearance
 * (each record is dated by its own reading).  Between two samples of a
 * thread, [t0, t1), the thread ran D ns and
 * waited W ns in the run queue; the rest of the interval it was blocked.
 * The thread's region transitions (the ring tree.c keeps once samples
 * exist) split the interval into pieces of self time of its innermost
 * regions.  Its runnable time D + W is shared among the pieces in
 * proportion to each piece's span times its region's runnable rate learnt
 * so far (an EM step, as in deconvolution: intervals that lie inside one
 * region teach its rate exactly, and mixed ones are then split by what was
 * learnt), no piece getting more than its span, and each piece's share
 * divides into on-CPU and run-queue time as the interval's does.  Runnable,
 * not on-CPU, rates: whether code wants a CPU is a property of the code,
 * the same under contention, while the part of it the code gets is the
 * scheduler's and swings from one slice to the next (a thread just woken
 * runs ahead, one preempted waits).  What is left of a piece is blocked
 * time.  Where the collector read the thread's state at a sample (running,
 * waiting for a CPU, blocked: PRISM_CPU_RUNNING etc.), the state counts in
 * the region open at that instant: a fact that needs no splitting, which
 * outweighs the estimates once a region has a few (state_rate()).  Under
 * load the samples are not evenly spread (the writer runs when a CPU comes
 * free, often as the training thread blocks), so a short region right after
 * a wake-up may have none and keeps the estimates.  Blocked time is also weighted by how busy the other
 * threads were in the same pass (their D over the interval, capped at one
 * core): the evidence that the thread waited for work done elsewhere, such
 * as loader threads producing a batch.
 *
 * The proportional split learns nothing from intervals that all mix the
 * same regions the same way (a 3 ms wait inside a 16 ms step sampled every
 * 5 ms is never alone in an interval), so each thread also keeps the
 * normal equations of least-squares fits of every interval's on-CPU time,
 * and of its runnable time, against the spans of its regions in it (an
 * interval that ends with the thread queued, PRISM_CPU_QUEUED, joins the
 * next: the wait in progress is in no counter until the thread runs, and
 * the two together hold all of it): as the sampling
 * phase drifts against the steps the mixes vary, and the fit recovers each
 * region's rate.  The regression has a variable for each of the first
 * CPU_SLOTS - 2 regions sampled, one for the rest together and one for the
 * time outside regions; it is solved at refresh with the rates bounded to
 * [0, 1] and pulled gently towards the proportional split's estimates,
 * which stand wherever the data cannot tell.
 *
 * The collector writes a flush's CPU chunk after its regions, so the
 * transitions of an interval are known when its sample arrives.  Memory:
 * constant per call path, plus the pass being gathered.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PASS_MAX 4096u          /* records of one pass kept at most */
#define PRIOR_NS 1e6            /* weight of the 50 % prior of a new region */

/* Keep region transitions on every thread from now on; a thread that
 * holds open regions starts its ring with its innermost one. */
static void want_rings(prism_analysis *a)
{
    an_gpu_want_rings(a);
    for (size_t i = 0; i < a->nthreads; i++) {
        athread *t = a->threads[i];
        if (t->ring && !t->nring && t->depth && t->depth <= MAX_STACK)
            an_ring_put(t, t->stack[t->depth - 1].start, t->stack[t->depth - 1].node);
    }
}

/* A piece [at, at + len) of the interval, in `node`'s self time. */
static void touch(athread *t, uint32_t node, uint64_t at, uint64_t len)
{
    if (!len)
        return;
    if (node == PRISM_NO_NODE || node >= t->n) {
        t->cpu.out_tmp += len;
        /* where, for the part inside steps (unattributed.c) */
        if (t->noseg && t->oseg[t->noseg - 1].end == at)
            t->oseg[t->noseg - 1].end = at + len;
        else if (pb_vec_reserve((void **)&t->oseg, &t->osegcap, t->noseg + 1, sizeof *t->oseg))
            t->oseg[t->noseg++] = (seg){ at, at + len };
        return;
    }
    tnode_cpu *x = an_cpu_get(t, &t->nodes[node]);
    if (!x)
        return;
    if (!x->tmp) {
        if (!pb_vec_reserve((void **)&t->cpu.touched, &t->cpu.tcap, t->cpu.ntouched + 1,
                         sizeof *t->cpu.touched))
            return;
        t->cpu.touched[t->cpu.ntouched++] = node;
    }
    x->tmp += len;
}

/* Split [t0, t1) into the innermost regions' self time; returns the span
 * covered (the ring may not reach back to t0). */
static uint64_t pieces(athread *t, uint64_t t0, uint64_t t1)
{
    if (!t->ring || !t->nring) {        /* no region seen yet: outside any */
        touch(t, PRISM_NO_NODE, t0, t1 - t0);
        return t1 - t0;
    }
    uint64_t lo = t->nring > t->rcap ? t->nring - t->rcap : 0, hi = t->nring;
    uint64_t cur = t0;
    uint32_t node;
    if (t->ring[(lo) & (t->rcap - 1)].ts > t0) {     /* older than the ring */
        cur = t->ring[(lo) & (t->rcap - 1)].ts;
        if (cur >= t1)
            return 0;
        node = t->ring[(lo) & (t->rcap - 1)].node;
    } else {
        while (hi - lo > 1) {                   /* last transition <= t0 */
            uint64_t mid = lo + (hi - lo) / 2;
            if (t->ring[(mid) & (t->rcap - 1)].ts <= t0)
                lo = mid;
            else
                hi = mid;
        }
        node = t->ring[(lo) & (t->rcap - 1)].node;
    }
    uint64_t covered = t1 - cur;
    for (uint64_t j = lo + 1; j < t->nring; j++) {
        const trans *x = &t->ring[(j) & (t->rcap - 1)];
        if (x->ts >= t1)
            break;
        if (x->ts > cur) {
            touch(t, node, cur, x->ts - cur);
            cur = x->ts;
        }
        node = x->node;
    }
    touch(t, node, cur, t1 - cur);
    return covered;
}

/* A region's on-CPU rate so far, with a 50 % prior worth PRIOR_NS. */
static double rate(uint64_t on, uint64_t span)
{
    return ((double)on + 0.5 * PRIOR_NS) / ((double)span + PRIOR_NS);
}

/* A region's runnable rate from the thread states read at samples taken
 * inside it (running or waiting for a CPU, of all), with `prior` (what
 * the intervals say) worth ST_PRIOR samples; never quite 0, so that its
 * weight still takes a share.  A state is a fact at an instant in one
 * region: nothing to split among the regions of an interval, so a few of
 * them outweigh an estimate. */
#define ST_PRIOR 2.0
static double state_rate(const tnode_cpu *x, double prior)
{
    double r = ((double)x->st_run + ST_PRIOR * prior) / ((double)x->st_n + ST_PRIOR);
    return r > 1e-3 ? r : 1e-3;
}

/* A region's runnable rate for splitting an interval. */
static double run_rate(const tnode_cpu *x)
{
    return state_rate(x, rate(x->on + x->wait, x->span));
}

/* A sample that says what its thread was doing: counted in the region
 * open then. */
static void count_state(athread *t, const prism_cpu_sample *s)
{
    uint32_t st = s->flags & (PRISM_CPU_RUNNING | PRISM_CPU_QUEUED | PRISM_CPU_BLOCKED);
    if (!st)
        return;
    uint32_t node = an_tree_node_at(t, s->ts);
    if (node == PRISM_NO_NODE || node >= t->n)
        return;
    tnode_cpu *x = an_cpu_get(t, &t->nodes[node]);
    if (!x)
        return;
    x->st_n++;
    x->st_run += (st & (PRISM_CPU_RUNNING | PRISM_CPU_QUEUED)) != 0;
}

/* ---- the regression --------------------------------------------------- */

#define LS_N (CPU_SLOTS + 2u)             /* row stride: A, then b_on, b_run */
#define LS_PULL 1e-3                      /* ridge towards the split, relative */

/* A node's record for writing, where it has one. */
static tnode_cpu *cpu_rec(athread *t, const tnode *nd)
{
    return nd->cpu ? an_pool_at(&t->cpus, sizeof(tnode_cpu), nd->cpu) : NULL;
}

/* A touched node's record (it has one). */
static tnode_cpu *touched_cpu(athread *t, size_t i)
{
    return cpu_rec(t, &t->nodes[t->cpu.touched[i]]);
}

static uint32_t slot_of(athread *t, tnode_cpu *x)
{
    if (!x->slot && t->cpu.nslots < CPU_SLOTS)
        x->slot = t->cpu.nslots++;
    return x->slot ? x->slot : 1;
}

/* One interval into the normal equations: its spans per slot (ms) against
 * its on-CPU time d and its runnable time r (on a CPU or waiting for one),
 * ns.  An interval that ends with the thread queued (its wait in progress
 * is in no counter yet) is carried into the next: the two together hold
 * the whole wait, as reported, so their runnable time is exact. */
static void ls_add(athread *t, double d, double r, bool queued)
{
    acpu *c = &t->cpu;
    if (!c->ls) {
        c->ls = calloc((size_t)CPU_SLOTS * LS_N, sizeof *c->ls);
        c->carry = calloc(CPU_SLOTS + 2, sizeof *c->carry);
        if (!c->ls || !c->carry) {
            free(c->ls);
            free(c->carry);
            c->ls = c->carry = NULL;
            return;
        }
        c->nslots = 2;
    }
    double v[CPU_SLOTS] = { 0 };
    for (size_t i = 0; i <= c->ntouched; i++) {
        tnode_cpu *x = i < c->ntouched ? touched_cpu(t, i) : NULL;
        uint32_t k = x ? slot_of(t, x) : 0;
        double span = (double)(x ? x->tmp : c->out_tmp);
        if (span > 0)
            v[k] += span / 1e6;
    }
    d /= 1e6;
    r /= 1e6;
    if (c->carrying) {
        for (uint32_t k = 0; k < CPU_SLOTS; k++)
            v[k] += c->carry[k];
        d += c->carry[CPU_SLOTS];
        r += c->carry[CPU_SLOTS + 1];
        c->carrying = false;
    }
    if (queued) {
        memcpy(c->carry, v, sizeof v);
        c->carry[CPU_SLOTS] = d;
        c->carry[CPU_SLOTS + 1] = r;
        c->carrying = true;
        return;
    }
    double all = 0;
    uint32_t used[CPU_SLOTS], nused = 0;
    for (uint32_t k = 0; k < CPU_SLOTS; k++)
        if (v[k] > 0) {
            used[nused++] = k;
            all += v[k];
        }
    r = r < all ? r : all;
    for (uint32_t x = 0; x < nused; x++) {
        double *row = &c->ls[(size_t)used[x] * LS_N];
        for (uint32_t y = 0; y < nused; y++)
            row[used[y]] += v[used[x]] * v[used[y]];
        row[CPU_SLOTS] += v[used[x]] * d;
        row[CPU_SLOTS + 1] += v[used[x]] * r;
    }
}

/* Bounded least squares by coordinate descent: rates in [0, 1], each
 * pulled towards r0 with a weight relative to its own evidence. */
static void ls_solve(const double *ls, uint32_t n, uint32_t col, const double *r0, double *r)
{
    for (uint32_t i = 0; i < n; i++)
        r[i] = r0[i];
    for (int sweep = 0; sweep < 300; sweep++) {
        double moved = 0;
        for (uint32_t i = 0; i < n; i++) {
            const double *row = &ls[(size_t)i * LS_N];
            double aii = row[i];
            if (!(aii > 0))
                continue;
            double lam = LS_PULL * aii;
            double acc = row[col] + lam * r0[i];
            for (uint32_t j = 0; j < n; j++)
                if (j != i)
                    acc -= row[j] * r[j];
            double x = acc / (aii + lam);
            x = x < 0 ? 0 : x > 1 ? 1 : x;
            moved += x > r[i] ? x - r[i] : r[i] - x;
            r[i] = x;
        }
        if (moved < 1e-9)
            break;
    }
}

static double ratio(uint64_t x, uint64_t span)
{
    return span ? (double)x / (double)span : 0.5;
}

static void runq_fill(athread *t);

/* Every thread's regressions, solved: on-CPU and runnable rates per slot;
 * then the run queue. */
void an_oncpu_solve(prism_analysis *a)
{
    for (size_t i = 0; i < a->nthreads; i++) {
        athread *t = a->threads[i];
        acpu *c = &t->cpu;
        c->solved = false;
        if (!c->ls || c->nslots < 3)
            continue;
        if (!c->rate && !(c->rate = calloc(2 * CPU_SLOTS, sizeof *c->rate)))
            continue;
        double r0[CPU_SLOTS], q0[CPU_SLOTS];
        uint64_t oth_on = 0, oth_run = 0, oth_span = 0;
        r0[0] = ratio(c->out_on, c->out_span);
        q0[0] = ratio(c->out_on + c->out_wait, c->out_span);
        for (size_t k = 0; k < t->n; k++) {
            const tnode_cpu *x = an_cpu(t, &t->nodes[k]);
            if (!x)
                continue;
            if (x->slot >= 2 && x->slot < c->nslots) {
                r0[x->slot] = ratio(x->on, x->span);
                q0[x->slot] = ratio(x->on + x->wait, x->span);
            } else if (!x->slot) {
                oth_on += x->on;
                oth_run += x->on + x->wait;
                oth_span += x->span;
            }
        }
        r0[1] = ratio(oth_on, oth_span);
        q0[1] = ratio(oth_run, oth_span);
        for (uint32_t k = 0; k < c->nslots; k++)
            q0[k] = q0[k] > 1 ? 1 : q0[k];
        ls_solve(c->ls, c->nslots, CPU_SLOTS, r0, c->rate);
        ls_solve(c->ls, c->nslots, CPU_SLOTS + 1, q0, c->rate + CPU_SLOTS);
        c->solved = true;
    }
    for (size_t i = 0; i < a->nthreads; i++)
        runq_fill(a->threads[i]);
}

/* A node's runnable time (on a CPU or waiting for one): the regression's
 * rate where it has one, else what the split credited. */
static uint64_t node_run(const athread *t, const tnode_cpu *x)
{
    const acpu *c = &t->cpu;
    double prior = x->span ? (double)(x->on + x->wait) / (double)x->span : 1;
    if (c->solved && x->slot >= 2 && x->slot < c->nslots)
        prior = c->rate[CPU_SLOTS + x->slot];
    prior = prior < 1 ? prior : 1;
    uint64_t run = an_ns_round(state_rate(x, prior) * (double)x->span);
    return run < x->span ? run : x->span;
}

/* A node's on-CPU time: the regression's rate where it has one. */
static uint64_t node_on(const athread *t, const tnode_cpu *x)
{
    const acpu *c = &t->cpu;
    uint64_t on = x->on;
    if (c->solved && x->slot >= 2 && x->slot < c->nslots) {
        uint64_t cr = x->on + x->wait;
        on = cr ? an_ns_round((double)node_run(t, x) * (double)x->on / (double)cr)
                : an_ns_round(c->rate[x->slot] * (double)x->span);
    }
    uint64_t run = node_run(t, x);
    return on < run ? on : run;
}

/*
 * The thread's run-queue and blocked time, placed.  Blocked time is what
 * the samples' own readings say was neither on a CPU nor runnable: each
 * interval's span less its on-CPU and run-queue growth, credited to the
 * interval's pieces (cpu_blk), and taken back when the kernel reports the
 * run-queue wait late.  Linux adds a thread's run-queue wait to its account
 * when the thread gets a CPU again, not while it waits, so a thread
 * preempted across a sample shows no progress in that interval and the
 * whole wait in the next; that excess returns the newest blocked pieces to
 * the run queue (credit()), and so does, after a sample the collector
 * marked PRISM_CPU_PREEMPTED (queued, and not blocked since the sample
 * before), the next wait reported, up to the time that interval left in
 * neither counter.  At refresh a region's time not runnable (its span less
 * its runnable time, from the regression where it has one) is blocked up
 * to its measured blocked time; the rest of its time off CPU is run-queue
 * wait.  The blocked time a region could not hold goes first to the time
 * not runnable of other regions, the least runnable first, then to the run
 * queue of the regions runnable less than half of their time; the rest
 * stays run-queue time.  So the thread's blocked total never grows from an
 * estimate, and preempted compute is never a wait.
 */
typedef struct fill {
    double run;                 /* its runnable rate: who takes blocked first */
    uint64_t *runq, room;       /* its run queue; its non-runnable time left */
} fill;

static int by_run_up(const void *x, const void *y)
{
    const fill *a = x, *b = y;
    return a->run < b->run ? -1 : a->run > b->run;
}

/* Place the blocked time no region's estimate held: first where the
 * estimates leave time that was neither on a CPU nor runnable, then into
 * the run queue of regions runnable less than half of their time, the
 * least runnable first either way.  What is left stays run-queue time: a
 * region mostly runnable (preempted compute) never takes blocked time that
 * is not its own, and the measured blocked total holds run-queue wait the
 * kernel reported late, after a thread woken from a wait was read still
 * queued (the states show it). */
static void place_lost(fill *f, size_t n, double lost)
{
    pb_qsort(f, n, sizeof *f, by_run_up);
    for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < n && lost > 0.5; j++) {
            if (pass && f[j].run >= 0.5)
                break;                  /* sorted: the rest are runnable too */
            uint64_t *from = pass ? f[j].runq : &f[j].room;
            double x = (double)*from < lost ? (double)*from : lost;
            uint64_t ux = an_ns_round(x);
            *from -= ux;
            if (!pass)
                *f[j].runq -= ux < *f[j].runq ? ux : *f[j].runq;
            lost -= (double)ux;
        }
}

static void runq_fill(athread *t)
{
    acpu *c = &t->cpu;
    fill *f = malloc((t->n + 2) * sizeof *f);
    size_t n = 0;
    double lost = 0;
    for (size_t k = 0; k <= t->n; k++) {            /* t->n: the outside node */
        tnode_cpu *x = cpu_rec(t, an_tnode(t, k));
        if (!x)
            continue;
        x->runq = 0;
        if (!x->span)
            continue;
        uint64_t on = node_on(t, x), run = node_run(t, x), off = x->span - on;
        uint64_t room = x->span - (run > on ? run : on);
        uint64_t blk = x->blk < room ? x->blk : room;
        lost += (double)(x->blk - blk);
        x->runq = off - blk;
        if (f && (x->runq || room > blk))
            f[n++] = (fill){ (double)run / (double)x->span, &x->runq, room - blk };
    }
    uint64_t out_on = c->out_on < c->out_span ? c->out_on : c->out_span;
    uint64_t out_off = c->out_span - out_on;
    uint64_t out_blk = c->out_blk < out_off ? c->out_blk : out_off;
    lost += (double)(c->out_blk - out_blk);
    c->out_runq = out_off - out_blk;
    if (f && c->out_runq)
        f[n++] = (fill){ c->out_span ? (double)out_on / (double)c->out_span : 0, &c->out_runq,
                         0 };
    if (f)
        place_lost(f, n, lost);
    free(f);
    c->runq_placed = f != NULL;
}

oncpu_self_t an_oncpu_self(const athread *t, const tnode *nd)
{
    const tnode_cpu *x = an_cpu(t, nd);
    oncpu_self_t s = { 0, 0, 0, 0, 0 };
    if (!x)
        return s;
    s = (oncpu_self_t){ x->span, node_on(t, x), x->wait, 0, 0 };
    if (t->cpu.runq_placed)
        s.runq = x->runq;
    if (s.on > s.known)
        s.on = s.known;
    if (s.runq > s.known - s.on)
        s.runq = s.known - s.on;
    s.off = s.known - s.on - s.runq;
    s.busy = s.known ? an_ns_round((double)s.off * (double)x->busy / (double)s.known) : 0;
    return s;
}

typedef struct share {
    uint32_t node;              /* PRISM_NO_NODE: outside regions           */
    uint64_t *span_tmp;         /* the piece's span (cpu_tmp or out_tmp)    */
    uint64_t *span, *on, *wait, *busy, *blk;   /* accumulators             */
    double w, c;                /* weight, credited on-CPU                  */
    bool capped;
} share;

/* A node's record, where it has one (a piece of it was credited). */
static tnode_cpu *cpu_of(athread *t, uint32_t node)
{
    return node < t->n ? cpu_rec(t, &t->nodes[node]) : NULL;
}

static uint64_t *blk_of(athread *t, uint32_t node)
{
    tnode_cpu *x = cpu_of(t, node);
    return node == PRISM_NO_NODE ? &t->cpu.out_blk : x ? &x->blk : NULL;
}

static uint64_t *wait_of(athread *t, uint32_t node)
{
    tnode_cpu *x = cpu_of(t, node);
    return node == PRISM_NO_NODE ? &t->cpu.out_wait : x ? &x->wait : NULL;
}

/* Run-queue wait reported beyond its interval (it began before the
 * sample): the newest blocked pieces were that wait, not blocked time.
 * Returns how much of it they held. */
static double take_back(athread *t, double late)
{
    acpu *c = &t->cpu;
    double placed = 0;
    uint32_t lo = c->nrecent > BLK_RECENT ? c->nrecent - BLK_RECENT : 0;
    while (late > 0.5 && c->recent && c->nrecent > lo) {
        blk_piece *p = &c->recent[(c->nrecent - 1) % BLK_RECENT];
        uint64_t *blk = blk_of(t, p->node), *wait = wait_of(t, p->node);
        double x = late < (double)p->ns ? late : (double)p->ns;
        if (!blk || x > (double)*blk)
            x = blk ? (double)*blk : 0;
        uint64_t ux = an_ns_round(x);
        if (blk) {
            *blk -= ux;
            *wait += ux;
        }
        late -= (double)ux;
        placed += (double)ux;
        p->ns -= ux < p->ns ? ux : p->ns;
        if (!p->ns || !blk || !*blk)
            c->nrecent--;
    }
    return placed;
}

static void keep_recent(athread *t, uint32_t node, uint64_t ns)
{
    if (ns && !t->cpu.recent)           /* a thread that blocks: its ring */
        t->cpu.recent = malloc(BLK_RECENT * sizeof *t->cpu.recent);
    if (ns && t->cpu.recent)
        t->cpu.recent[t->cpu.nrecent++ % BLK_RECENT] = (blk_piece){ node, ns };
}

/* Credit one interval: D on-CPU and W run-queue ns over the pieces, after
 * `late` run-queue ns that began before the interval went back to the
 * blocked pieces before it (what they cannot hold is this interval's).
 * `raw`: the run-queue wait reported with it, for the regression; `queued`:
 * the thread was waiting for a CPU at its end. */
static void credit(prism_analysis *a, athread *t, double d, double wq, double late,
                   double raw, bool queued, double others)
{
    if (late > 0)
        wq += late - take_back(t, late);
    size_t n = t->cpu.ntouched + 1;
    share stack_sh[64];
    share *sh = n <= 64 ? stack_sh : malloc(n * sizeof *sh);
    if (!sh)
        goto reset;
    size_t k = 0;
    for (size_t i = 0; i < t->cpu.ntouched; i++) {
        tnode_cpu *x = touched_cpu(t, i);
        sh[k++] = (share){ t->cpu.touched[i], &x->tmp, &x->span, &x->on, &x->wait, &x->busy,
                           &x->blk, 0, 0, false };
    }
    if (t->cpu.out_tmp)
        sh[k++] = (share){ PRISM_NO_NODE, &t->cpu.out_tmp, &t->cpu.out_span, &t->cpu.out_on,
                           &t->cpu.out_wait, &t->cpu.out_busy, &t->cpu.out_blk, 0, 0,
                           false };
    double total = 0;
    for (size_t i = 0; i < k; i++) {
        double s = (double)*sh[i].span_tmp;
        tnode_cpu *x = cpu_of(t, sh[i].node);
        sh[i].w = s * (x ? run_rate(x)
                         : rate(*sh[i].on + *sh[i].wait, *sh[i].span));
        total += s;
    }
    if (d > total)
        d = total;
    if (wq > total - d)
        wq = total - d;
    /* The runnable time (on a CPU or waiting for one) goes to the pieces in
     * proportion to their span and their region's runnable rate, none above
     * its span (water filling); its on-CPU and run-queue parts follow the
     * interval's.  Runnable is a property of the code, steady under
     * contention; the on-CPU share of it is the scheduler's, and varies. */
    double run = d + wq;
    double left = run;
    for (size_t round = 0; round < k && left > 0; round++) {
        double sumw = 0;
        for (size_t i = 0; i < k; i++)
            if (!sh[i].capped)
                sumw += sh[i].w;
        if (!(sumw > 0))
            break;
        bool capped = false;
        for (size_t i = 0; i < k; i++) {
            double room = (double)*sh[i].span_tmp - sh[i].c;
            if (!sh[i].capped && left * sh[i].w / sumw >= room) {
                sh[i].c += room;
                sh[i].capped = true;
                capped = true;
            }
        }
        if (capped) {
            left = run;
            for (size_t i = 0; i < k; i++)
                left -= sh[i].c;
            continue;
        }
        for (size_t i = 0; i < k; i++)
            if (!sh[i].capped)
                sh[i].c += left * sh[i].w / sumw;
        left = 0;
    }
    double on_part = run > 0 ? d / run : 0;
    for (size_t i = 0; i < k; i++) {
        double s = (double)*sh[i].span_tmp;
        double q = sh[i].c * (1 - on_part);
        sh[i].c *= on_part;
        double blocked = s - sh[i].c - q;
        uint64_t b = blocked > 0 ? an_ns_round(blocked) : 0;
        *sh[i].span += *sh[i].span_tmp;
        *sh[i].on += an_ns_round(sh[i].c);
        *sh[i].wait += an_ns_round(q);
        *sh[i].blk += b;
        *sh[i].busy += an_ns_round(s * others);
        keep_recent(t, sh[i].node, b);
        if (sh[i].node == PRISM_NO_NODE)   /* its part inside steps: unattributed.c */
            an_out_cpu(a, t, *sh[i].span_tmp, sh[i].c, q, (double)b, s * others);
    }
    if (sh != stack_sh)
        free(sh);
    ls_add(t, d, d + raw, queued);
reset:
    for (size_t i = 0; i < t->cpu.ntouched; i++)
        touched_cpu(t, i)->tmp = 0;
    t->cpu.ntouched = 0;
    t->cpu.out_tmp = 0;
    t->noseg = 0;
}

/* One pass: every thread's interval since its previous sample, then the
 * credit, each thread seeing how busy the others were. */
void an_oncpu_flush(prism_analysis *a)
{
    double busy_all = 0;
    for (size_t i = 0; i < a->npass; i++) {
        const prism_cpu_sample *s = &a->pass[i];
        athread *t = an_tree_thread(a, s->stream);
        if (!t)
            continue;
        acpu *c = &t->cpu;
        c->in_pass = false;
        c->queued = false;
        if (c->have && !c->exited && s->ts > c->ts && s->oncpu_ns >= c->on &&
            s->wait_ns >= c->wait) {
            uint64_t span = s->ts - c->ts;
            uint64_t on = s->oncpu_ns - c->on;
            uint64_t wq = s->wait_ns - c->wait;
            if (on > span)
                on = span;
            /* reported beyond the interval's room, or, the thread having
             * been queued at the last sample, the wait that began then */
            uint64_t late = wq > span - on ? wq - (span - on) : 0;
            if (c->in_runq) {
                uint64_t q = wq < c->pend ? wq : c->pend;
                late = q > late ? q : late;
            }
            c->d_late = late;
            wq -= late;
            if (wq > span - on)
                wq = span - on;
            /* this interval's time in neither counter, pending when the
             * thread is queued now */
            uint64_t gap = span - on - wq;
            if (s->flags & PRISM_CPU_PREEMPTED)
                c->pend = (c->in_runq && c->pend > late ? c->pend - late : 0) + gap;
            else
                c->pend = 0;
            c->d_span = span;
            c->d_on = on;
            c->on_all += on;
            c->d_wait = wq;
            c->in_pass = true;
            busy_all += (double)on / (double)span;
        }
    }
    for (size_t i = 0; i < a->npass; i++) {
        const prism_cpu_sample *s = &a->pass[i];
        athread *t = an_tree_thread(a, s->stream);
        if (!t)
            continue;
        acpu *c = &t->cpu;
        if (c->in_pass) {
            c->in_pass = false;
            double mine = (double)c->d_on / (double)c->d_span;
            double others = busy_all - mine;
            others = others < 0 ? 0 : others > 1 ? 1 : others;
            uint64_t covered = pieces(t, c->ts, s->ts);
            double f = (double)covered / (double)c->d_span;   /* what the ring saw */
            credit(a, t, (double)c->d_on * f, (double)c->d_wait * f, (double)c->d_late * f,
                   (double)(c->d_wait + c->d_late) * f, (s->flags & PRISM_CPU_QUEUED) != 0,
                   others);
            c->runq_raw += (double)(c->d_wait + c->d_late) * f;
            c->span += covered;
            c->oncpu += (uint64_t)((double)c->d_on * f);
            c->runq += (uint64_t)((double)c->d_wait * f);
        }
        if (!c->have || s->ts > c->ts) {
            c->have = true;
            c->ts = s->ts;
            c->on = s->oncpu_ns;
            c->wait = s->wait_ns;
        }
        c->exited = (s->flags & PRISM_CPU_EXITED) != 0;
        count_state(t, s);
        c->in_runq = (s->flags & PRISM_CPU_PREEMPTED) != 0 && c->pend > 0;
    }
    a->npass = 0;
}

void an_oncpu_samples(prism_analysis *a, const prism_cpu_sample *s, size_t n)
{
    if (!n)
        return;
    if (!a->cpu_present) {
        a->cpu_present = true;
        want_rings(a);
    }
    for (size_t i = 0; i < n; i++) {
        if (!a->cpu_timed || s[i].ts < a->cpu_t0)
            a->cpu_t0 = s[i].ts;
        if (!a->cpu_timed || s[i].ts > a->cpu_t1)
            a->cpu_t1 = s[i].ts;
        a->cpu_timed = true;
        /* a pass: consecutive records until a stream comes again */
        athread *t = an_tree_thread(a, s[i].stream);
        if (!t)
            continue;
        if (a->npass && (t->cpu.queued || a->npass >= PASS_MAX))
            an_oncpu_flush(a);
        t->cpu.queued = true;
        if (!pb_vec_reserve((void **)&a->pass, &a->passcap, a->npass + 1, sizeof *a->pass))
            return;
        a->pass[a->npass++] = s[i];
    }
}

void an_oncpu_free(prism_analysis *a)
{
    free(a->pass);
    a->pass = NULL;
    a->npass = a->passcap = 0;
}
