/*
 * workload.h - a deterministic simulator of a training program, for the
 * verdict acceptance tests.  It plays a program second by second in
 * simulated time (no real timing, no sleeps) and writes what a collector
 * would have written, with the project's own encoder (through pbuild.h):
 *
 *   - a training thread running steps (STEPS, all sampled) made of nested
 *     regions from a template (REGIONS on its stream, properly nested);
 *     every leaf is on CPU (compute) or first blocked off CPU then on CPU
 *     (a wait, then the little work after the wake-up);
 *   - 0..4 other threads (prefetch workers) with their own regions, either
 *     busy all the time (a fixed share of the wall time on CPU) or working
 *     one item right after each step begins and blocked otherwise;
 *   - one MEMORY record per step (step set, RSS, process CPU);
 *   - a CPU sampling pass every 5 ms (+-0.25 ms): one prism_cpu_sample per
 *     thread, all with the pass's ts, with the cumulative on-CPU and
 *     run-queue time computed exactly from the simulated schedule;
 *   - chunked as the collector does: a flush every ~100 ms writes the steps
 *     that ended and their memory samples, then each thread's region events
 *     up to the flush, then the CPU chunk of the passes up to it; INFO
 *     steps.thread (the stepping thread) and cpu.sampler as libcollect
 *     writes them.
 *
 * Jitter comes from a seeded PRNG: each region varies from step to step
 * uniformly within +-noise of its mean (5-20 % in the tests), a common
 * per-step factor within +-3 %, run-queue waits up to a few % of compute.
 * The simulator keeps the ground truth (wl_truth): per template region its
 * inclusive wall, on-CPU, run-queue and blocked time, the steps' wall time,
 * the planted leak slope.
 *
 * Include after <cmocka.h> (pbuild.h asserts with cmocka); every function
 * is static.
 */
#ifndef PRISM_TESTS_WORKLOAD_H
#define PRISM_TESTS_WORKLOAD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "pbuild.h"

#define WL_MS 1000000.0                 /* ns per ms */
#define WL_US 1000.0
#define WL_MAX_REGIONS 40
#define WL_MAX_LOADERS 4
#define WL_MAX_THREADS (1 + WL_MAX_LOADERS)
#define WL_PASS_NS 5000000ull           /* CPU sampling period */
#define WL_FLUSH_NS 100000000ull        /* collector flush period */

/* One region of the training thread's step template. */
typedef struct wl_region {
    const char *name;
    int parent;         /* index of the enclosing region, -1: top level;
                           a parent comes before its children, children
                           run in template order                           */
    double ms;          /* leaf: mean duration; parent: its own time (on
                           CPU, before its first child)                     */
    double noise;       /* step-to-step variation: uniform +-noise of mean  */
    double off;         /* leaf: fraction of it blocked off CPU (the wait
                           comes first, then the CPU part)                  */
} wl_region;

/* A thread beside the training thread (a prefetch worker). */
typedef struct wl_loader {
    const char *name;
    bool reactive;      /* true: one item right after each step begins,
                           blocked otherwise; false: works all the time     */
    double busy;        /* !reactive: share of wall time on CPU (0..1)      */
    double item_ms;     /* one item: decode_flac (60 %) + spec_augment      */
} wl_loader;

typedef struct wl_spec {
    const char *label;
    uint64_t seed;
    unsigned steps;
    const char *trainer;                /* the training thread's name        */
    const wl_region *regions;
    size_t nregions;
    wl_loader loaders[WL_MAX_LOADERS];
    size_t nloaders;
    double runq;                        /* run-queue share of compute time:
                                           uniform 0..runq per piece         */
    double mem_base_mb, leak_mb_per_step, mem_noise_mb;
    int slow_region;                    /* -1, or a region made slower ...   */
    double slow_factor;                 /* ... by this factor                */
    bool no_steps_info;                 /* no INFO steps.thread (an older
                                           writer): the reader must find the
                                           training thread itself            */
} wl_spec;

/* What the workload knows about itself. */
typedef struct wl_truth {
    unsigned steps;
    double step_ns;                     /* sum of the steps' wall time       */
    double wall_ns[WL_MAX_REGIONS];     /* inclusive, per template region    */
    double on_ns[WL_MAX_REGIONS];       /* running on a CPU                  */
    double runq_ns[WL_MAX_REGIONS];     /* runnable, waiting for a CPU       */
    double off_ns[WL_MAX_REGIONS];      /* blocked                           */
    uint64_t calls[WL_MAX_REGIONS];
    double loader_on_ns;                /* all loader threads, on CPU        */
    double loader_wall_ns;              /* all loader threads, wall time     */
    double leak_mb_per_step;            /* planted                           */
    double fit_mb_per_step;             /* least squares of the samples      */
    uint64_t passes, cpu_records, region_events, flushes;
} wl_truth;

/* Shares of the steps' wall time. */
static inline double wl_share(const wl_truth *t, int i)
{
    return t->step_ns > 0 ? t->wall_ns[i] / t->step_ns : 0.0;
}

static inline double wl_off_share(const wl_truth *t, int i)
{
    return t->step_ns > 0 ? t->off_ns[i] / t->step_ns : 0.0;
}

/* Index of a template region by name, -1 when absent. */
static inline int wl_find(const wl_spec *sp, const char *name)
{
    for (size_t i = 0; i < sp->nregions; i++)
        if (!strcmp(sp->regions[i].name, name))
            return (int)i;
    return -1;
}

/* Is template region a an ancestor of region i? */
static inline bool wl_is_ancestor(const wl_spec *sp, int a, int i)
{
    for (int p = sp->regions[i].parent; p >= 0; p = sp->regions[p].parent)
        if (p == a)
            return true;
    return false;
}

/* ---- the simulator ------------------------------------------------------ */

typedef struct wl_ev {
    uint64_t ts;
    uint32_t name;                      /* 0: exit */
} wl_ev;

/* A piece of time on CPU or in the run queue; time between pieces is
 * blocked.  Pieces of a thread are in time order and do not overlap. */
typedef struct wl_seg {
    uint64_t t0, t1;
    uint64_t on, rq;                    /* on + rq == t1 - t0 */
} wl_seg;

typedef struct wl_thread {
    uint32_t stream;
    const char *name;
    wl_ev *ev;
    size_t nev, cev, next;              /* next: first event not yet written */
    wl_seg *seg;
    size_t nseg, cseg;
    uint64_t *cum_on, *cum_rq;          /* before seg[k]                      */
    uint64_t on0, rq0;                  /* before the profile began           */
} wl_thread;

typedef struct wl_sim {
    const wl_spec *sp;
    uint64_t rng;
    wl_thread th[WL_MAX_THREADS];
    size_t nth;
    prism_step *steps;
    size_t nsteps;
    uint64_t *rss;
    double common;                      /* this step's common factor          */
    wl_truth *truth;
    uint32_t loader_ids[2];             /* decode_flac, spec_augment           */
} wl_sim;

static inline uint64_t wl_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double wl_unif(uint64_t *s)
{
    return (double)(wl_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [-amp, amp). */
static inline double wl_pm(uint64_t *s, double amp)
{
    return amp * (2.0 * wl_unif(s) - 1.0);
}

static inline void *wl_grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(p, c * size);
    assert_non_null(q);
    *cap = c;
    return q;
}

static inline void wl_event(wl_thread *t, uint64_t ts, uint32_t name)
{
    t->ev = wl_grow(t->ev, &t->cev, t->nev, sizeof *t->ev);
    t->ev[t->nev++] = (wl_ev){ ts, name };
}

/* [t0, t0 + len) on CPU, a share rq of it waiting in the run queue. */
static inline void wl_run_piece(wl_thread *t, uint64_t t0, uint64_t len, double rq,
                                uint64_t *on, uint64_t *queued)
{
    if (!len)
        return;
    uint64_t q = (uint64_t)((double)len * rq);
    t->seg = wl_grow(t->seg, &t->cseg, t->nseg, sizeof *t->seg);
    t->seg[t->nseg++] = (wl_seg){ t0, t0 + len, len - q, q };
    if (on)
        *on += len - q;
    if (queued)
        *queued += q;
}

/* Credit a piece to template region i and its ancestors. */
static inline void wl_credit(wl_sim *s, int i, double on, double rq, double off)
{
    for (; i >= 0; i = s->sp->regions[i].parent) {
        s->truth->on_ns[i] += on;
        s->truth->runq_ns[i] += rq;
        s->truth->off_ns[i] += off;
    }
}

/* Run template region i on the training thread from *now. */
static inline void wl_train_region(wl_sim *s, int i, uint64_t *now)
{
    const wl_spec *sp = s->sp;
    const wl_region *r = &sp->regions[i];
    wl_thread *t = &s->th[0];
    uint64_t start = *now;
    double d = r->ms * WL_MS * (1.0 + wl_pm(&s->rng, r->noise)) * s->common;
    if (i == sp->slow_region)
        d *= sp->slow_factor;
    wl_event(t, *now, (uint32_t)i + 1);
    bool parent = false;
    for (size_t j = (size_t)i + 1; j < sp->nregions; j++)
        parent |= sp->regions[j].parent == i;
    if (parent) {
        /* own time, then the children with a few us between them */
        uint64_t on = 0, rq = 0, len = (uint64_t)d;
        wl_run_piece(t, *now, len, wl_unif(&s->rng) * sp->runq, &on, &rq);
        wl_credit(s, i, (double)on, (double)rq, 0);
        *now += len;
        for (size_t j = (size_t)i + 1; j < sp->nregions; j++) {
            if (sp->regions[j].parent != i)
                continue;
            on = rq = 0;
            len = (uint64_t)((2.0 + 8.0 * wl_unif(&s->rng)) * WL_US);
            wl_run_piece(t, *now, len, 0, &on, &rq);
            wl_credit(s, i, (double)on, (double)rq, 0);
            *now += len;
            wl_train_region(s, (int)j, now);
        }
    } else {
        uint64_t len = (uint64_t)d, off = (uint64_t)(d * r->off), on = 0, rq = 0;
        *now += off;                                    /* blocked */
        wl_run_piece(t, *now, len - off, wl_unif(&s->rng) * sp->runq, &on, &rq);
        *now += len - off;
        wl_credit(s, i, (double)on, (double)rq, (double)off);
    }
    wl_event(t, *now, 0);
    s->truth->wall_ns[i] += (double)(*now - start);
    s->truth->calls[i]++;
    s->truth->region_events += 2;
}

/* One loader item at *now: decode_flac then spec_augment, on CPU. */
static inline void wl_loader_item(wl_sim *s, wl_thread *t, const wl_loader *l, uint64_t *now)
{
    uint64_t item = (uint64_t)(l->item_ms * WL_MS * (1.0 + wl_pm(&s->rng, 0.15)));
    uint64_t dec = item * 6 / 10, on = 0;
    wl_event(t, *now, s->loader_ids[0]);
    wl_run_piece(t, *now, dec, wl_unif(&s->rng) * 2 * s->sp->runq, &on, NULL);
    *now += dec;
    wl_event(t, *now, 0);
    *now += (uint64_t)(3 * WL_US);
    wl_event(t, *now, s->loader_ids[1]);
    wl_run_piece(t, *now, item - dec, wl_unif(&s->rng) * 2 * s->sp->runq, &on, NULL);
    *now += item - dec;
    wl_event(t, *now, 0);
    s->truth->loader_on_ns += (double)on;
    s->truth->region_events += 4;
}

static inline void wl_loader_thread(wl_sim *s, wl_thread *t, const wl_loader *l, uint64_t end)
{
    uint64_t now = (uint64_t)((0.2 + 0.8 * wl_unif(&s->rng)) * WL_MS);
    if (l->reactive) {
        for (size_t k = 0; k < s->nsteps; k++) {
            uint64_t at = s->steps[k].start + (uint64_t)((20 + 180 * wl_unif(&s->rng)) * WL_US);
            if (at > now)
                now = at;
            if (now + (uint64_t)(l->item_ms * 1.2 * WL_MS) > end)
                break;
            wl_loader_item(s, t, l, &now);
        }
        return;
    }
    double busy = l->busy > 0.01 ? l->busy : 0.01;
    for (;;) {
        if (now + (uint64_t)(l->item_ms * 1.2 * WL_MS) > end)
            break;
        uint64_t t0 = now;
        wl_loader_item(s, t, l, &now);
        double gap = (double)(now - t0) * (1.0 - busy) / busy * (0.5 + wl_unif(&s->rng));
        now += (uint64_t)gap;                           /* blocked, no region */
    }
}

/* Cumulative on-CPU and run-queue time of a thread at ts. */
static inline void wl_cum(const wl_thread *t, uint64_t ts, uint64_t *on, uint64_t *rq)
{
    size_t lo = 0, hi = t->nseg;                        /* first seg with t0 >= ts */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->seg[mid].t0 < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    *on = t->on0;
    *rq = t->rq0;
    if (!lo)
        return;
    const wl_seg *g = &t->seg[lo - 1];
    *on += t->cum_on[lo - 1];
    *rq += t->cum_rq[lo - 1];
    uint64_t in = (ts < g->t1 ? ts : g->t1) - g->t0, len = g->t1 - g->t0;
    *on += (uint64_t)((double)g->on * (double)in / (double)len);
    *rq += (uint64_t)((double)g->rq * (double)in / (double)len);
}

static inline void wl_prefix(wl_thread *t)
{
    t->cum_on = calloc(t->nseg + 1, sizeof *t->cum_on);
    t->cum_rq = calloc(t->nseg + 1, sizeof *t->cum_rq);
    assert_true(t->cum_on && t->cum_rq);
    for (size_t k = 0; k < t->nseg; k++) {
        t->cum_on[k + 1] = t->cum_on[k] + t->seg[k].on;
        t->cum_rq[k + 1] = t->cum_rq[k] + t->seg[k].rq;
    }
}

/* Write one flush: the steps that ended by `until` and their memory
 * samples, INFO the first time, each thread's events up to `until`, the
 * CPU passes up to `until`.  *info: INFO records written (bits). */
static inline void wl_flush(wl_sim *s, pbuild *b, uint64_t until, size_t *next_step,
                            const uint64_t *passes, size_t npasses, size_t *next_pass,
                            unsigned *info)
{
    const wl_spec *sp = s->sp;
    size_t first = *next_step;
    while (*next_step < s->nsteps && s->steps[*next_step].end <= until)
        pb_step(b, &s->steps[(*next_step)++]);
    for (size_t k = first; k < *next_step; k++) {
        const prism_step *st = &s->steps[k];
        uint64_t prev = k ? s->steps[k - 1].end : 0, cpu = 0;
        for (size_t i = 0; i < s->nth; i++) {
            uint64_t on1, rq1, on0, rq0;
            wl_cum(&s->th[i], st->end, &on1, &rq1);
            wl_cum(&s->th[i], prev, &on0, &rq0);
            cpu += on1 - on0;
        }
        prism_memory_sample m = { .ts = st->end, .step = st->index, .rss = s->rss[k],
                                  .cpu_permille = (uint32_t)(cpu * 1000 / (st->end - prev)) };
        pb_memory(b, &m);
    }
    if (!(*info & 1u))                  /* before the first regions */
        pb_info_text(b, "cpu.sampler", "schedstat, every 5 ms");
    if (!(*info & 2u) && !sp->no_steps_info && *next_step > 0) {
        pb_info_uint(b, "steps.thread", s->th[0].stream);
        *info |= 2u;
    }
    *info |= 1u;
    pb_flush(b);
    for (size_t i = 0; i < s->nth; i++) {
        wl_thread *t = &s->th[i];
        for (; t->next < t->nev && t->ev[t->next].ts <= until; t->next++) {
            if (t->ev[t->next].name)
                pb_enter(b, t->stream, t->ev[t->next].ts, t->ev[t->next].name);
            else
                pb_exit(b, t->stream, t->ev[t->next].ts);
        }
        pb_flush(b);
    }
    for (; *next_pass < npasses && passes[*next_pass] <= until; (*next_pass)++) {
        uint64_t ts = passes[*next_pass];
        for (size_t i = 0; i < s->nth; i++) {
            prism_cpu_sample c = { .ts = ts, .stream = s->th[i].stream,
                                   .flags = PRISM_CPU_HAVE_WAIT };
            wl_cum(&s->th[i], ts, &c.oncpu_ns, &c.wait_ns);
            pb_cpu(b, &c);
            s->truth->cpu_records++;
        }
        s->truth->passes++;
    }
    pb_flush(b);
    s->truth->flushes++;
}

/*
 * Simulate the program sp describes and read the profile it would have
 * written into a new analysis (default options); *truth receives the
 * ground truth.  The caller unloads the result.
 */
static inline loaded wl_run(const wl_spec *sp, wl_truth *truth)
{
    assert_true(sp->nregions > 0 && sp->nregions <= WL_MAX_REGIONS);
    assert_true(sp->nloaders <= WL_MAX_LOADERS);
    memset(truth, 0, sizeof *truth);
    wl_sim s;
    memset(&s, 0, sizeof s);
    s.sp = sp;
    s.rng = sp->seed * 0x2545f4914f6cdd1dull + 7;
    s.truth = truth;

    /* names: the template's regions (ids 1..n), then the loaders' two */
    const char *names[WL_MAX_REGIONS + 2];
    for (size_t i = 0; i < sp->nregions; i++)
        names[i] = sp->regions[i].name;
    names[sp->nregions] = "decode_flac";
    names[sp->nregions + 1] = "spec_augment";
    s.loader_ids[0] = (uint32_t)sp->nregions + 1;
    s.loader_ids[1] = (uint32_t)sp->nregions + 2;

    /* the training thread: it ran ~0.4 s before the profile began */
    s.nth = 1 + sp->nloaders;
    s.th[0] = (wl_thread){ .stream = 1, .name = sp->trainer };
    s.th[0].on0 = 412u * 1000000u + 31337u;
    s.th[0].rq0 = 2u * 1000000u + 777u;
    s.steps = calloc(sp->steps, sizeof *s.steps);
    s.rss = calloc(sp->steps, sizeof *s.rss);
    assert_true(s.steps && s.rss);
    uint64_t now = (uint64_t)(2 * WL_MS);
    for (unsigned k = 0; k < sp->steps; k++) {
        s.common = 1.0 + wl_pm(&s.rng, 0.03);
        uint64_t start = now, on = 0;
        now += (uint64_t)(3 * WL_US);                   /* prism_step_begin .. */
        wl_run_piece(&s.th[0], start, now - start, 0, &on, NULL);
        bool firsttop = true;
        for (size_t i = 0; i < sp->nregions; i++) {
            if (sp->regions[i].parent >= 0)
                continue;
            if (!firsttop) {                            /* loop overhead */
                uint64_t gap = (uint64_t)((2.0 + 8.0 * wl_unif(&s.rng)) * WL_US);
                wl_run_piece(&s.th[0], now, gap, 0, &on, NULL);
                now += gap;
            }
            firsttop = false;
            wl_train_region(&s, (int)i, &now);
        }
        uint64_t tail = (uint64_t)(3 * WL_US);
        wl_run_piece(&s.th[0], now, tail, 0, &on, NULL);
        now += tail;
        s.steps[k] = (prism_step){ start, now, k, 0, PRISM_STEP_SAMPLED };
        truth->step_ns += (double)(now - start);
        double mb = sp->mem_base_mb + sp->leak_mb_per_step * k +
                    wl_pm(&s.rng, sp->mem_noise_mb);
        s.rss[k] = (uint64_t)(mb * 1048576.0);
        uint64_t gap = (uint64_t)((10.0 + 10.0 * wl_unif(&s.rng)) * WL_US);
        wl_run_piece(&s.th[0], now, gap, 0, &on, NULL);   /* between steps */
        now += gap;
    }
    s.nsteps = sp->steps;
    truth->steps = sp->steps;
    uint64_t end = now;

    for (size_t l = 0; l < sp->nloaders; l++) {
        wl_thread *t = &s.th[1 + l];
        *t = (wl_thread){ .stream = (uint32_t)(2 + l), .name = sp->loaders[l].name };
        t->on0 = (uint64_t)((0.1 + 0.2 * wl_unif(&s.rng)) * WL_MS);
        wl_loader_thread(&s, t, &sp->loaders[l], end);
        truth->loader_wall_ns += (double)end;
    }
    for (size_t i = 0; i < s.nth; i++)
        wl_prefix(&s.th[i]);

    /* the leak as planted, and as the samples have it */
    truth->leak_mb_per_step = sp->leak_mb_per_step;
    double sx = 0, sy = 0, sxx = 0, sxy = 0, n = (double)sp->steps;
    for (unsigned k = 0; k < sp->steps; k++) {
        double y = (double)s.rss[k] / 1048576.0;
        sx += k;
        sy += y;
        sxx += (double)k * k;
        sxy += (double)k * y;
    }
    if (n > 1)
        truth->fit_mb_per_step = (n * sxy - sx * sy) / (n * sxx - sx * sx);

    /* sampling passes and flushes */
    size_t npasses = 0, cpasses = 0;
    uint64_t *passes = NULL;
    for (uint64_t k = 1;; k++) {
        uint64_t ts = k * WL_PASS_NS + (uint64_t)((250.0 + wl_pm(&s.rng, 250.0)) * WL_US);
        if (ts >= end)
            break;
        passes = wl_grow(passes, &cpasses, npasses, sizeof *passes);
        passes[npasses++] = ts;
    }
    passes = wl_grow(passes, &cpasses, npasses, sizeof *passes);
    passes[npasses++] = end;                            /* the shutdown pass */

    pbuild b;
    pb_init(&b, names, sp->nregions + 2, sp->seed);
    for (size_t i = 0; i < s.nth; i++)
        pb_thread(&b, s.th[i].stream, s.th[i].name);
    pb_flush(&b);
    size_t next_step = 0, next_pass = 0;
    unsigned info = 0;
    for (uint64_t k = 1;; k++) {
        uint64_t until = k * WL_FLUSH_NS + (uint64_t)(wl_unif(&s.rng) * WL_MS);
        if (until >= end)
            break;
        wl_flush(&s, &b, until, &next_step, passes, npasses, &next_pass, &info);
    }
    wl_flush(&s, &b, end, &next_step, passes, npasses, &next_pass, &info);
    for (size_t i = 0; i < s.nth; i++)
        assert_int_equal(s.th[i].next, s.th[i].nev);  /* everything written */
    assert_int_equal(next_step, s.nsteps);

    loaded l = pb_load(&b);
    for (size_t i = 0; i < s.nth; i++) {
        free(s.th[i].ev);
        free(s.th[i].seg);
        free(s.th[i].cum_on);
        free(s.th[i].cum_rq);
    }
    free(passes);
    free(s.steps);
    free(s.rss);
    return l;
}

#endif
