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
 * regions.  D is shared among the pieces in proportion to each piece's
 * span times its region's on-CPU rate learnt so far (an EM step, as in
 * deconvolution: intervals that lie inside one region teach its rate
 * exactly, and mixed ones are then split by what was learnt), no piece
 * getting more than its span; W follows the on-CPU shares (a thread waits
 * for a CPU only where it wants to run).  What is left of a piece is
 * blocked time.  Blocked time is also weighted by how busy the other
 * threads were in the same pass (their D over the interval, capped at one
 * core): the evidence that the thread waited for work done elsewhere, such
 * as loader threads producing a batch.
 *
 * The proportional split learns nothing from intervals that all mix the
 * same regions the same way (a 3 ms wait inside a 16 ms step sampled every
 * 5 ms is never alone in an interval), so each thread also keeps the
 * normal equations of a least-squares fit of every interval's on-CPU time
 * against the spans of its regions in it: as the sampling
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
            t->ring[t->nring++ % TRANS_RING] =
                (trans){ t->stack[t->depth - 1].start, t->stack[t->depth - 1].node };
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
    uint64_t lo = t->nring > TRANS_RING ? t->nring - TRANS_RING : 0, hi = t->nring;
    uint64_t cur = t0;
    uint32_t node;
    if (t->ring[lo % TRANS_RING].ts > t0) {     /* older than the ring */
        cur = t->ring[lo % TRANS_RING].ts;
        if (cur >= t1)
            return 0;
        node = t->ring[lo % TRANS_RING].node;
    } else {
        while (hi - lo > 1) {                   /* last transition <= t0 */
            uint64_t mid = lo + (hi - lo) / 2;
            if (t->ring[mid % TRANS_RING].ts <= t0)
                lo = mid;
            else
                hi = mid;
        }
        node = t->ring[lo % TRANS_RING].node;
    }
    uint64_t covered = t1 - cur;
    for (uint64_t j = lo + 1; j < t->nring; j++) {
        const trans *x = &t->ring[j % TRANS_RING];
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

/* ---- the regression --------------------------------------------------- */

#define LS_N (CPU_SLOTS + 1u)             /* row stride: A, then b */
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
 * its on-CPU time (ms). */
static void ls_add(athread *t, double d)
{
    acpu *c = &t->cpu;
    if (!c->ls) {
        c->ls = calloc((size_t)CPU_SLOTS * LS_N, sizeof *c->ls);
        if (!c->ls)
            return;
        c->nslots = 2;
    }
    double v[CPU_SLOTS] = { 0 };
    uint32_t used[CPU_SLOTS], nused = 0;
    for (size_t i = 0; i <= c->ntouched; i++) {
        tnode_cpu *x = i < c->ntouched ? touched_cpu(t, i) : NULL;
        uint32_t k = x ? slot_of(t, x) : 0;
        double span = (double)(x ? x->tmp : c->out_tmp);
        if (!(span > 0))
            continue;
        if (v[k] == 0)
            used[nused++] = k;
        v[k] += span / 1e6;
    }
    for (uint32_t x = 0; x < nused; x++) {
        double *row = &c->ls[(size_t)used[x] * LS_N];
        for (uint32_t y = 0; y < nused; y++)
            row[used[y]] += v[used[x]] * v[used[y]];
        row[CPU_SLOTS] += v[used[x]] * d / 1e6;
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

/* Every thread's regression, solved: rates per slot; then the run queue. */
void an_oncpu_solve(prism_analysis *a)
{
    for (size_t i = 0; i < a->nthreads; i++) {
        athread *t = a->threads[i];
        acpu *c = &t->cpu;
        c->solved = false;
        if (!c->ls || c->nslots < 3)
            continue;
        if (!c->rate && !(c->rate = calloc(CPU_SLOTS, sizeof *c->rate)))
            continue;
        double r0[CPU_SLOTS];
        uint64_t oth_on = 0, oth_span = 0;
        r0[0] = ratio(c->out_on, c->out_span);
        for (size_t k = 0; k < t->n; k++) {
            const tnode_cpu *x = an_cpu(t, &t->nodes[k]);
            if (!x)
                continue;
            if (x->slot >= 2 && x->slot < c->nslots) {
                r0[x->slot] = ratio(x->on, x->span);
            } else if (!x->slot) {
                oth_on += x->on;
                oth_span += x->span;
            }
        }
        r0[1] = ratio(oth_on, oth_span);
        ls_solve(c->ls, c->nslots, CPU_SLOTS, r0, c->rate);
        c->solved = true;
    }
    for (size_t i = 0; i < a->nthreads; i++)
        runq_fill(a->threads[i]);
}

/* A node's on-CPU time: the regression's rate where it has one. */
static uint64_t node_on(const athread *t, const tnode_cpu *x)
{
    const acpu *c = &t->cpu;
    uint64_t on = x->on;
    if (c->solved && x->slot >= 2 && x->slot < c->nslots)
        on = an_ns_round(c->rate[x->slot] * (double)x->span);
    return on < x->span ? on : x->span;
}

static int by_rate(const void *x, const void *y)
{
    const double *a = x, *b = y;
    return a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0;
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
 * the run queue (credit()).  At refresh a region's time off CPU (its span
 * less its on-CPU time, from the regression where it has one) is blocked
 * up to its measured blocked time and run-queue wait for the rest; the
 * blocked time a region could not hold (the regression put more of its
 * span on CPU than the split did) goes to the regions with room that ran
 * the least, so the thread's blocked total stays what was measured and
 * never grows from an estimate: preempted compute is never a wait.
 */
static int by_rate_up(const void *x, const void *y)
{
    return -by_rate(x, y);
}

static void runq_fill(athread *t)
{
    acpu *c = &t->cpu;
    double (*order)[2] = malloc((t->n + 2) * sizeof *order);
    size_t n = 0;
    double lost = 0;
    for (size_t k = 0; k <= t->n; k++) {            /* t->n: the outside node */
        tnode_cpu *x = cpu_rec(t, an_tnode(t, k));
        if (!x)
            continue;
        x->runq = 0;
        if (!x->span)
            continue;
        uint64_t on = node_on(t, x), off = x->span - on;
        uint64_t blk = x->blk < off ? x->blk : off;
        lost += (double)(x->blk - blk);
        x->runq = off - blk;
        if (order && x->runq) {
            order[n][0] = (double)on / (double)x->span;
            order[n][1] = (double)k;
            n++;
        }
    }
    uint64_t out_on = c->out_on < c->out_span ? c->out_on : c->out_span;
    uint64_t out_off = c->out_span - out_on;
    uint64_t out_blk = c->out_blk < out_off ? c->out_blk : out_off;
    lost += (double)(c->out_blk - out_blk);
    c->out_runq = out_off - out_blk;
    if (order && c->out_runq) {
        order[n][0] = c->out_span ? (double)out_on / (double)c->out_span : 0;
        order[n][1] = -1;
        n++;
    }
    if (order)
        qsort(order, n, sizeof *order, by_rate_up);
    for (size_t j = 0; order && j < n && lost > 0; j++) {
        uint64_t *runq = order[j][1] < 0
                             ? &c->out_runq
                             : &cpu_rec(t, an_tnode(t, (size_t)order[j][1]))->runq;
        double x = (double)*runq < lost ? (double)*runq : lost;
        *runq -= an_ns_round(x);
        lost -= x;
    }
    free(order);
    c->runq_placed = order != NULL;
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
 * sample): the newest blocked pieces were that wait, not blocked time. */
static void take_back(athread *t, double late)
{
    acpu *c = &t->cpu;
    uint32_t lo = c->nrecent > BLK_RECENT ? c->nrecent - BLK_RECENT : 0;
    while (late > 0.5 && c->nrecent > lo) {
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
        p->ns -= ux < p->ns ? ux : p->ns;
        if (!p->ns || !blk || !*blk)
            c->nrecent--;
    }
}

static void keep_recent(athread *t, uint32_t node, uint64_t ns)
{
    if (ns)
        t->cpu.recent[t->cpu.nrecent++ % BLK_RECENT] = (blk_piece){ node, ns };
}

/* Credit one interval: D on-CPU and W run-queue ns over the pieces; `late`
 * more run-queue ns were reported than the interval had room for. */
static void credit(prism_analysis *a, athread *t, double d, double wq, double late,
                   double others)
{
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
        sh[i].w = s * rate(*sh[i].on, *sh[i].span);
        total += s;
    }
    if (d > total)
        d = total;
    /* proportional to the weights, none above its span (water filling) */
    double left = d;
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
            left = d;
            for (size_t i = 0; i < k; i++)
                left -= sh[i].c;
            continue;
        }
        for (size_t i = 0; i < k; i++)
            if (!sh[i].capped)
                sh[i].c += left * sh[i].w / sumw;
        left = 0;
    }
    double on_sum = 0;
    for (size_t i = 0; i < k; i++)
        on_sum += sh[i].c;
    for (size_t i = 0; i < k; i++) {
        double s = (double)*sh[i].span_tmp;
        double q = on_sum > 0 ? wq * sh[i].c / on_sum : total > 0 ? wq * s / total : 0;
        if (q > s - sh[i].c)
            q = s - sh[i].c;
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
    if (late > 0)
        take_back(t, late);
    if (sh != stack_sh)
        free(sh);
    ls_add(t, d);
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
            c->d_late = wq > span - on ? wq - (span - on) : 0;
            if (wq > span - on)
                wq = span - on;
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
