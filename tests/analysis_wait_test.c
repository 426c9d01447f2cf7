/*
 * analysis_wait_test.c - wait vs work from CPU samples (analysis/cpu.c)
 * and the rules that use it (analysis/rules_wait.c, hot operations in
 * analysis/rules.c), on profiles simulated here: each thread's regions are
 * laid out as segments that either run on a CPU or are blocked, and the
 * sampling passes carry each thread's cumulative on-CPU time computed
 * exactly from those segments, written after each 100 ms flush's regions
 * as the collector does.
 *
 *   - intervals that line up with regions credit exactly; misaligned ones
 *     converge to the truth (the EM split);
 *   - a wait at the start of the step while other threads compute is an
 *     input stall, whatever the region is called; a wait mid-step with
 *     the others idle is an off-CPU wait; a wait in blocking CUDA calls is
 *     a sync; names only add confidence;
 *   - hot operations count the time a region ran, not the time it waited,
 *     and never include the loader threads' time;
 *   - damaged samples (values going backwards, an exited thread, a reused
 *     stream) never credit garbage; a profile without samples keeps the
 *     name-based rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"

#define MS 1000000ull
#define US 1000ull

#include "pbuild.h"

/* ---- a small schedule simulator --------------------------------------- */

enum { MAXT = 5, MAXEV = 40000 };

typedef struct sev {
    uint64_t ts;
    uint32_t id;                /* 0: exit */
} sev;

typedef struct seg {
    uint64_t start, end;
} seg;

typedef struct sim {
    sev ev[MAXT][MAXEV];
    size_t nev[MAXT];
    seg on[MAXT][MAXEV];        /* on-CPU segments */
    size_t non[MAXT];
    seg q[MAXT][MAXEV];         /* waiting for a CPU (run queue) */
    size_t nq[MAXT];
    bool queue_flags;           /* samples say QUEUED / PREEMPTED */
    prism_step steps[2048];
    size_t nsteps;
    uint64_t now[MAXT];
    unsigned nthreads;
} sim;

static void s_region(sim *s, unsigned t, uint32_t id, uint64_t dur, bool on)
{
    assert_true(s->nev[t] + 2 <= MAXEV && s->non[t] < MAXEV);
    s->ev[t][s->nev[t]++] = (sev){ s->now[t], id };
    if (on)
        s->on[t][s->non[t]++] = (seg){ s->now[t], s->now[t] + dur };
    s->now[t] += dur;
    s->ev[t][s->nev[t]++] = (sev){ s->now[t], 0 };
}

/* Compute for `run` ns in a region, preempted: slices of `slice` ns on a
 * CPU, each followed by `wait` ns in the run queue. */
static void s_contended(sim *s, unsigned t, uint32_t id, uint64_t run, uint64_t slice,
                        uint64_t wait)
{
    assert_true(s->nev[t] + 2 <= MAXEV);
    s->ev[t][s->nev[t]++] = (sev){ s->now[t], id };
    for (uint64_t done = 0; done < run;) {
        uint64_t x = run - done < slice ? run - done : slice;
        assert_true(s->non[t] < MAXEV && s->nq[t] < MAXEV);
        s->on[t][s->non[t]++] = (seg){ s->now[t], s->now[t] + x };
        s->now[t] += x;
        done += x;
        if (done < run) {
            s->q[t][s->nq[t]++] = (seg){ s->now[t], s->now[t] + wait };
            s->now[t] += wait;
        }
    }
    s->ev[t][s->nev[t]++] = (sev){ s->now[t], 0 };
}

/* Run-queue wait as Linux reports it at ts: whole episodes that ended by
 * then (a wait is counted when the thread gets its CPU); *now: the part of
 * an episode in progress, 0 when the thread is not waiting at ts. */
static uint64_t wait_until(const sim *s, unsigned t, uint64_t ts, uint64_t *now)
{
    uint64_t sum = 0;
    *now = 0;
    for (size_t i = 0; i < s->nq[t] && s->q[t][i].start < ts; i++) {
        if (s->q[t][i].end <= ts)
            sum += s->q[t][i].end - s->q[t][i].start;
        else
            *now = ts - s->q[t][i].start;
    }
    return sum;
}

static uint64_t on_until(const sim *s, unsigned t, uint64_t ts)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->non[t] && s->on[t][i].start < ts; i++)
        sum += (ts < s->on[t][i].end ? ts : s->on[t][i].end) - s->on[t][i].start;
    return sum;
}

/* Write the simulation: per 100 ms flush the threads' regions, the steps,
 * then the sampling passes every `period` ns (stream = thread + 1). */
static loaded s_load(sim *s, const char *const *names, size_t nnames, uint64_t period,
                     bool samples, const prism_gpu_record *gpu, size_t ngpu)
{
    pbuild b;
    pb_init(&b, names, nnames, 7);
    static const char *const tname[] = { "main", "pool-0", "pool-1", "pool-2", "pool-3" };
    for (unsigned t = 0; t < s->nthreads; t++)
        pb_thread(&b, t + 1, tname[t]);
    if (samples)
        pb_info_text(&b, "cpu.sampler", "schedstat (simulated)");
    uint64_t end = 0;
    for (unsigned t = 0; t < s->nthreads; t++)
        end = s->now[t] > end ? s->now[t] : end;
    size_t ei[MAXT] = { 0 }, si = 0, gi = 0;
    uint64_t next_pass = period;
    uint64_t prev_ts[MAXT] = { 0 }, prev_off[MAXT] = { 0 };   /* blocked so far */
    for (uint64_t w = 100 * MS; ; w += 100 * MS) {
        for (unsigned t = 0; t < s->nthreads; t++)
            for (; ei[t] < s->nev[t] && s->ev[t][ei[t]].ts < w; ei[t]++) {
                if (s->ev[t][ei[t]].id)
                    pb_enter(&b, t + 1, s->ev[t][ei[t]].ts, s->ev[t][ei[t]].id);
                else
                    pb_exit(&b, t + 1, s->ev[t][ei[t]].ts);
            }
        for (; si < s->nsteps && s->steps[si].end < w; si++)
            pb_step(&b, &s->steps[si]);
        for (; gi < ngpu && gpu[gi].end < w; gi++)
            PB_PUT(&b, PRISM_CHUNK_GPU, 0, gpu[gi].start, prism_enc_gpu(&b.e, &gpu[gi]));
        for (; samples && next_pass < w && next_pass <= end; next_pass += period)
            for (unsigned t = 0; t < s->nthreads; t++) {
                uint64_t queued, on = on_until(s, t, next_pass);
                uint64_t wait = wait_until(s, t, next_pass, &queued);
                prism_cpu_sample c = { .ts = next_pass, .stream = t + 1,
                                       .flags = PRISM_CPU_HAVE_WAIT, .oncpu_ns = on,
                                       .wait_ns = wait };
                /* as the collector marks them: waiting now; and no blocked
                 * time since the sample before */
                uint64_t off = next_pass - on - wait - queued;
                if (s->queue_flags && queued)
                    c.flags |= PRISM_CPU_QUEUED |
                               (prev_ts[t] && off == prev_off[t] ? PRISM_CPU_PREEMPTED : 0);
                else if (s->queue_flags)
                    c.flags |= on_until(s, t, next_pass + 1) > on ? PRISM_CPU_RUNNING
                                                                  : PRISM_CPU_BLOCKED;
                prev_ts[t] = next_pass;
                prev_off[t] = off;
                pb_cpu(&b, &c);
            }
        if (w > end + 100 * MS)
            break;
    }
    return pb_load(&b);
}

static const prism_node *named(const prism_tree *t, const char *name)
{
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->nodes[i].name, name))
            return &t->nodes[i];
    return NULL;
}

static const prism_bottleneck *find_bn(const prism_analysis *a, prism_bottleneck_type type,
                                       const char *name)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *tree = prism_analysis_tree(a);
    for (size_t i = 0; i < n; i++)
        if (b[i].type == type &&
            (!name || (b[i].node < tree->count && !strcmp(tree->nodes[b[i].node].name, name))))
            return &b[i];
    return NULL;
}

static void no_severe(const prism_analysis *a, prism_bottleneck_type type)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++)
        if (b[i].type == type)
            assert_int_equal(b[i].severity, PRISM_SEV_LOW);
}

/* ---- the loop ---------------------------------------------------------- */

enum { R_WAIT = 1, R_CRUNCH, R_TAIL, R_PRODUCE, R_IDLE, R_SYNC };
static const char *const loop_names[] = { "stage_a", "crunch", "tail", "produce", "park",
                                          "stage_b" };

typedef struct loop_opts {
    unsigned steps;
    uint64_t wait, crunch, tail; /* per step on main                         */
    bool wait_first;             /* the wait opens the step (else: mid-step) */
    bool loaders_busy;           /* pool threads compute during the wait     */
} loop_opts;

/* main: [stage_a wait][crunch][tail] per step (or crunch, stage_a, tail);
 * pool-0/1 compute `produce` all the time, or are parked (off CPU). */
static void build_loop(sim *s, const loop_opts *o)
{
    memset(s, 0, sizeof *s);
    s->nthreads = 3;
    for (unsigned t = 0; t < 3; t++)
        s->now[t] = 1 * MS;
    for (unsigned k = 0; k < o->steps; k++) {
        uint64_t start = s->now[0];
        if (o->wait_first)
            s_region(s, 0, R_WAIT, o->wait, false);
        s_region(s, 0, R_CRUNCH, o->crunch, true);
        if (!o->wait_first)
            s_region(s, 0, R_WAIT, o->wait, false);
        s_region(s, 0, R_TAIL, o->tail, true);
        s->steps[s->nsteps++] = (prism_step){ start, s->now[0], k, 0, PRISM_STEP_SAMPLED };
        for (unsigned t = 1; t < 3; t++)
            while (s->now[t] < s->now[0])
                s_region(s, t, o->loaders_busy ? R_PRODUCE : R_IDLE, 3 * MS + t * 100 * US,
                         o->loaders_busy);
    }
}

/* Aligned sampling (1 ms passes, regions whole ms): exact credit. */
static void test_exact_credit(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    loop_opts o = { 60, 4 * MS, 5 * MS, 1 * MS, true, true };
    build_loop(s, &o);
    loaded l = s_load(s, loop_names, 6, 1 * MS, true, NULL, 0);
    assert_true(prism_analysis_cpu_present(l.a));
    const prism_tree *t = prism_analysis_tree(l.a);
    const prism_node *w = named(t, "stage_a"), *c = named(t, "crunch");
    assert_non_null(w);
    assert_non_null(c);
    assert_true(w->cpu_known_ns > 0 && c->cpu_known_ns > 0);
    assert_true((double)w->oncpu_ns < 0.01 * (double)w->cpu_known_ns);
    assert_true((double)c->oncpu_ns > 0.99 * (double)c->cpu_known_ns);
    assert_true((double)w->offcpu_ns > 0.99 * (double)w->cpu_known_ns);
    /* the pools computed the whole time the main thread waited */
    assert_true((double)w->offcpu_busy_ns > 0.95 * (double)w->offcpu_ns);
    unload(&l);
    free(s);
}

/* 3.3 ms passes across 4 / 5 / 1 ms regions: the split converges. */
static void test_misaligned_converges(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    loop_opts o = { 200, 4 * MS, 5 * MS, 1 * MS, true, true };
    build_loop(s, &o);
    loaded l = s_load(s, loop_names, 6, 3300 * US, true, NULL, 0);
    const prism_tree *t = prism_analysis_tree(l.a);
    const prism_node *w = named(t, "stage_a"), *c = named(t, "crunch");
    double fw = (double)w->oncpu_ns / (double)w->cpu_known_ns;
    double fc = (double)c->oncpu_ns / (double)c->cpu_known_ns;
    print_message("on-CPU fraction with 3.3 ms passes: stage_a %.3f (truth 0), crunch %.3f "
                  "(truth 1)\n", fw, fc);
    assert_true(fw < 0.10);
    assert_true(fc > 0.90);
    unload(&l);
    free(s);
}

/* A wait that opens the step while the pools compute: an input stall,
 * although nothing is called "data"; its share is of the step. */
static void test_input_stall(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    loop_opts o = { 100, 5 * MS, 4 * MS, 1 * MS, true, true };
    build_loop(s, &o);
    loaded l = s_load(s, loop_names, 6, 2 * MS, true, NULL, 0);
    const prism_bottleneck *b = find_bn(l.a, PRISM_BN_DATA_LOADING, "stage_a");
    assert_non_null(b);
    print_message("%s | %s\n", b->description, b->evidence);
    assert_true(fabs(b->share - 0.5) < 0.04);
    assert_int_equal(b->severity, PRISM_SEV_HIGH);
    assert_non_null(strstr(b->description, "of step time"));
    no_severe(l.a, PRISM_BN_OFF_CPU_WAIT);
    /* its waiting is no hot operation; crunch is, at 40 % of the step */
    assert_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "stage_a"));
    const prism_bottleneck *h = find_bn(l.a, PRISM_BN_HOT_OPERATION, "crunch");
    assert_non_null(h);
    assert_true(fabs(h->share - 0.4) < 0.04);
    /* the pools' produce is beside the loop: LOW at most */
    b = find_bn(l.a, PRISM_BN_HOT_OPERATION, "produce");
    assert_true(!b || b->severity == PRISM_SEV_LOW);
    unload(&l);
    free(s);
}

/* A region blocked for `off` ns, then on a CPU for `on` ns (one call). */
static void s_mixed(sim *s, unsigned t, uint32_t id, uint64_t off, uint64_t on)
{
    assert_true(s->nev[t] + 2 <= MAXEV && s->non[t] < MAXEV);
    s->ev[t][s->nev[t]++] = (sev){ s->now[t], id };
    s->on[t][s->non[t]++] = (seg){ s->now[t] + off, s->now[t] + off + on };
    s->now[t] += off + on;
    s->ev[t][s->nev[t]++] = (sev){ s->now[t], 0 };
}

/* main: per step [first: off, then on][crunch 4 ms][tail 1 ms], the pools
 * computing throughout; `first_id` names the first region. */
static void build_mixed(sim *s, unsigned steps, uint32_t first_id, uint64_t off, uint64_t on,
                        bool first_last)
{
    memset(s, 0, sizeof *s);
    s->nthreads = 3;
    for (unsigned t = 0; t < 3; t++)
        s->now[t] = 1 * MS;
    for (unsigned k = 0; k < steps; k++) {
        uint64_t start = s->now[0];
        if (!first_last)
            s_mixed(s, 0, first_id, off, on);
        s_region(s, 0, R_CRUNCH, 4 * MS, true);
        s_region(s, 0, R_TAIL, 1 * MS, true);
        if (first_last)
            s_mixed(s, 0, first_id, off, on);
        s->steps[s->nsteps++] = (prism_step){ start, s->now[0], k, 0, PRISM_STEP_SAMPLED };
        for (unsigned t = 1; t < 3; t++)
            while (s->now[t] < s->now[0])
                s_region(s, t, R_PRODUCE, 3 * MS + t * 100 * US, true);
    }
}

/* An input stall holds its region whole: blocked 4 ms for the batch, then
 * 2 ms on a CPU in the same region (unpickling it): the step waits 6 of
 * 11 ms for its input, one finding says so, and no hot_operation tells
 * the running part again with advice to move loading to workers. */
static void test_input_stall_whole_region(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    build_mixed(s, 100, R_WAIT, 4 * MS, 2 * MS, false);
    loaded l = s_load(s, loop_names, 6, 1 * MS, true, NULL, 0);
    const prism_bottleneck *b = find_bn(l.a, PRISM_BN_DATA_LOADING, "stage_a");
    assert_non_null(b);
    print_message("%s | %s\n", b->description, b->evidence);
    assert_true(fabs(b->share - 6.0 / 11.0) < 0.03);
    assert_non_null(strstr(b->evidence, "ms/step in it"));
    assert_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "stage_a"));
    assert_non_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "crunch"));
    unload(&l);
    free(s);
}

/* torch.compile's compile region waits a while for its compile workers:
 * one finding (the hot_operation, with compile advice), no off-CPU wait
 * with lock-debugging advice counting part of it again. */
static void test_compile_wait_is_compiling(void **state)
{
    (void)state;
    static const char *const names[] = { "stage_a", "crunch", "tail", "produce", "park",
                                         "torch.compile (compile)" };
    sim *s = calloc(1, sizeof *s);
    build_mixed(s, 100, 6, 3 * MS, 7 * MS, true);
    loaded l = s_load(s, names, 6, 1 * MS, true, NULL, 0);
    const prism_bottleneck *h = find_bn(l.a, PRISM_BN_HOT_OPERATION, "torch.compile (compile)");
    assert_non_null(h);
    assert_non_null(strstr(h->recommendation, "Compilation, not training"));
    size_t n;
    const prism_bottleneck *all = prism_analysis_bottlenecks(l.a, &n);
    const prism_tree *t = prism_analysis_tree(l.a);
    for (size_t i = 0; i < n; i++)
        if (all[i].type != PRISM_BN_HOT_OPERATION && all[i].node < t->count)
            assert_string_not_equal(t->nodes[all[i].node].name, "torch.compile (compile)");
    unload(&l);
    free(s);
}

/* The same wait mid-step with the pools parked: an off-CPU wait. */
static void test_off_cpu_wait(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    loop_opts o = { 100, 3 * MS, 10 * MS, 3 * MS, false, false };
    build_loop(s, &o);
    loaded l = s_load(s, loop_names, 6, 2 * MS, true, NULL, 0);
    const prism_bottleneck *b = find_bn(l.a, PRISM_BN_OFF_CPU_WAIT, "stage_a");
    assert_non_null(b);
    print_message("%s | %s\n", b->description, b->evidence);
    assert_true(fabs(b->share - 3.0 / 16.0) < 0.03);
    assert_int_equal(b->severity, PRISM_SEV_MEDIUM);
    assert_null(find_bn(l.a, PRISM_BN_DATA_LOADING, NULL));
    assert_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "stage_a"));
    unload(&l);
    free(s);
}

/* Busy pools but the wait sits mid-step under a neutral name: not input. */
static void test_busy_others_mid_step(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    loop_opts o = { 100, 3 * MS, 10 * MS, 3 * MS, false, true };
    build_loop(s, &o);
    loaded l = s_load(s, loop_names, 6, 2 * MS, true, NULL, 0);
    assert_non_null(find_bn(l.a, PRISM_BN_OFF_CPU_WAIT, "stage_a"));
    assert_null(find_bn(l.a, PRISM_BN_DATA_LOADING, NULL));
    unload(&l);
    free(s);
}

/* Compute preempted across the samples, then a real wait (issue 26): per
 * step `crunch` computes 6 ms in 1.3 ms slices, each followed by 1.7 ms in
 * the run queue, then `stage_a` blocks 4 ms; 5 ms passes.  Linux reports a
 * run-queue wait only when it ends, so a sample inside one sees time in
 * neither counter, and when the wait's report lands in an interval with
 * blocked time (stage_a's) it does not overflow it: without the samples'
 * QUEUED / PREEMPTED marks that time stays blocked time of crunch. */
static loaded preempted_loop(sim *s, bool flags)
{
    memset(s, 0, sizeof *s);
    s->nthreads = 1;
    s->now[0] = 1 * MS;
    s->queue_flags = flags;
    for (unsigned k = 0; k < 150; k++) {
        uint64_t start = s->now[0];
        s_contended(s, 0, R_CRUNCH, 6 * MS, 1300 * US, 1700 * US);
        s_region(s, 0, R_WAIT, 4 * MS, false);
        s->steps[s->nsteps++] = (prism_step){ start, s->now[0], k, 0, PRISM_STEP_SAMPLED };
    }
    return s_load(s, loop_names, 6, 5 * MS, true, NULL, 0);
}

static void test_preempted_is_run_queue(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    double blk[2];
    for (int flags = 0; flags < 2; flags++) {
        loaded l = preempted_loop(s, flags);
        const prism_tree *t = prism_analysis_tree(l.a);
        const prism_node *c = named(t, "crunch"), *w = named(t, "stage_a");
        assert_non_null(c);
        assert_non_null(w);
        /* truth: crunch 6 ms on a CPU and ~7.7 ms queued, stage_a 4 ms blocked */
        blk[flags] = (double)c->offcpu_ns / (double)(c->offcpu_ns + c->runq_ns);
        print_message("%s: crunch on %.1f run queue %.1f blocked %.1f ms (%.0f %% of off-CPU); "
                      "stage_a on %.1f run queue %.1f blocked %.1f ms\n",
                      flags ? "with the marks" : "without", c->oncpu_ns / 1e6, c->runq_ns / 1e6,
                      c->offcpu_ns / 1e6, 100 * blk[flags], w->oncpu_ns / 1e6, w->runq_ns / 1e6,
                      w->offcpu_ns / 1e6);
        if (flags) {
            assert_true(blk[1] < 0.03);
            assert_true((double)w->offcpu_ns > 0.9 * (double)w->cpu_known_ns);
            const prism_bottleneck *b = find_bn(l.a, PRISM_BN_OFF_CPU_WAIT, NULL);
            assert_non_null(b);
            assert_string_equal(t->nodes[b->node].name, "stage_a");
            assert_null(find_bn(l.a, PRISM_BN_OFF_CPU_WAIT, "crunch"));
        }
        unload(&l);
    }
    /* the case does reproduce the problem: without the marks crunch loses
     * a good part of its run-queue time to blocked */
    assert_true(blk[0] > 0.10);
    free(s);
}

/* The loop of test_gpu_wait with its API call named `api` and its kernel
 * `kname`: the analysis, loaded (free with unload and free(*gp), free(*sp)). */
static loaded api_kernel_loop(const char *api, const char *kname, sim **sp,
                              prism_gpu_record **gp)
{
    const char *names[] = { "stage_a", "crunch", "tail", "produce", "park",
                            "stage_b", api, kname };
    sim *s = calloc(1, sizeof *s);
    loop_opts o = { 60, 4 * MS, 6 * MS, 2 * MS, false, false };
    build_loop(s, &o);
    prism_gpu_record *g = calloc(2 * o.steps, sizeof *g);
    size_t ng = 0;
    for (size_t k = 0; k < s->nsteps; k++) {
        uint64_t at = s->steps[k].start + 6 * MS;      /* stage_a: the wait */
        g[ng++] = (prism_gpu_record){ .type = PRISM_GPU_KERNEL, .start = at - 5 * MS,
                                      .end = at + 4 * MS, .stream = 7, .correlation = k + 1,
                                      .name = 8 };
        g[ng++] = (prism_gpu_record){ .type = PRISM_GPU_API, .start = at + 10 * US,
                                      .end = at + 4 * MS - 10 * US, .stream = 1,
                                      .correlation = 100000 + k, .name = 7 };
    }
    *sp = s;
    *gp = g;
    return s_load(s, names, 8, 2 * MS, true, g, ng);
}

static loaded api_loop(const char *api, sim **sp, prism_gpu_record **gp)
{
    return api_kernel_loop(api, "gemm", sp, gp);
}

/* A wait inside blocking CUDA calls: a CPU-GPU sync. */
static void test_gpu_wait(void **state)
{
    (void)state;
    sim *s;
    prism_gpu_record *g;
    loaded l = api_loop("cudaStreamSynchronize", &s, &g);
    const prism_bottleneck *b = find_bn(l.a, PRISM_BN_CPU_GPU_SYNC, "stage_a");
    assert_non_null(b);
    print_message("%s | %s\n", b->description, b->evidence);
    assert_true(fabs(b->share - 4.0 / 12.0) < 0.04);
    assert_null(find_bn(l.a, PRISM_BN_OFF_CPU_WAIT, "stage_a"));
    unload(&l);
    free(g);
    free(s);
}

/* The same wait while the GPU runs NCCL's all-reduce kernels (under either
 * NCCL's names, or mangled): the rank waits for its peers, a
 * communication_wait, and the evidence gives the kernels' time apart from
 * compute (gpu.c's comm_kernel_ns). */
static void test_gpu_wait_among_nccl_kernels(void **state)
{
    (void)state;
    static const char *const knames[] = {
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
    };
    for (size_t i = 0; i < sizeof knames / sizeof *knames; i++) {
        sim *s;
        prism_gpu_record *g;
        loaded l = api_kernel_loop("cudaStreamSynchronize", knames[i], &s, &g);
        const prism_gpu_stats *gs = prism_analysis_gpu(l.a);
        assert_int_equal(gs->comm_launches, 60);
        assert_int_equal(gs->comm_kernel_ns, gs->kernel_ns);
        const prism_bottleneck *b = find_bn(l.a, PRISM_BN_COMM_WAIT, "stage_a");
        assert_non_null(b);
        print_message("%s | %s\n", b->description, b->evidence);
        assert_non_null(strstr(b->evidence, "NCCL kernels hold 100% of kernel time (540.0 ms in "
                                            "60 launches)"));
        assert_null(find_bn(l.a, PRISM_BN_CPU_GPU_SYNC, NULL));
        unload(&l);
        free(g);
        free(s);
    }
}

/* Issue 27 (9): the *Query calls poll, they never block; they were counted
 * as waits for the GPU (this test failed then with a cpu_gpu_sync). */
static void test_query_is_no_wait(void **state)
{
    (void)state;
    static const char *const polls[] = { "cudaStreamQuery", "cudaEventQuery", "cuStreamQuery",
                                         "cuEventQuery" };
    for (size_t i = 0; i < sizeof polls / sizeof *polls; i++) {
        sim *s;
        prism_gpu_record *g;
        loaded l = api_loop(polls[i], &s, &g);
        assert_null(find_bn(l.a, PRISM_BN_CPU_GPU_SYNC, NULL));
        const prism_node *w = named(prism_analysis_tree(l.a), "stage_a");
        assert_non_null(w);
        assert_int_equal(w->gpu_wait_ns, 0);
        unload(&l);
        free(g);
        free(s);
    }
}

/* Without samples: names still decide, as before (old profiles). */
static void test_without_samples(void **state)
{
    (void)state;
    sim *s = calloc(1, sizeof *s);
    loop_opts o = { 60, 4 * MS, 5 * MS, 1 * MS, true, true };
    build_loop(s, &o);
    loaded l = s_load(s, loop_names, 6, 1 * MS, false, NULL, 0);
    assert_false(prism_analysis_cpu_present(l.a));
    assert_null(find_bn(l.a, PRISM_BN_OFF_CPU_WAIT, NULL));
    const prism_node *w = named(prism_analysis_tree(l.a), "stage_a");
    assert_int_equal(w->cpu_known_ns, 0);
    /* no samples: a waiting region is only time, a hot operation */
    assert_non_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "stage_a"));
    unload(&l);
    free(s);
}

/* Values going backwards (damage), an exited thread, a stream reused:
 * the analysis takes a new baseline and never credits more than the
 * interval held. */
static void test_hostile_samples(void **state)
{
    (void)state;
    static const char *const names[] = { "work" };
    pbuild b;
    pb_init(&b, names, 1, 3);
    pb_thread(&b, 1, "main");
    pb_enter(&b, 1, 0, 1);
    pb_exit(&b, 1, 100 * MS);
    static const struct { uint64_t ts, on, wait; uint32_t flags; } smp[] = {
        { 10 * MS, 5 * MS, 0, 0 },
        { 20 * MS, 50 * MS, 0, 0 },              /* more on-CPU than wall: capped */
        { 30 * MS, 1 * MS, 0, 0 },               /* backwards: new baseline */
        { 30 * MS, 2 * MS, 0, 0 },               /* same instant: ignored */
        { 40 * MS, 6 * MS, UINT64_MAX, 0 },      /* wait from nowhere: capped */
        { 50 * MS, 7 * MS, UINT64_MAX, PRISM_CPU_EXITED },
        { 60 * MS, 1 * MS, 0, 0 },               /* a new thread on the stream */
        { 70 * MS, 6 * MS, 0, 0 },
    };
    for (size_t i = 0; i < sizeof smp / sizeof *smp; i++) {
        prism_cpu_sample c = { smp[i].ts, 1, smp[i].flags | PRISM_CPU_HAVE_WAIT, smp[i].on,
                               smp[i].wait };
        pb_cpu(&b, &c);
    }
    loaded l = pb_load(&b);
    const prism_node *w = named(prism_analysis_tree(l.a), "work");
    assert_non_null(w);
    assert_true(w->cpu_known_ns <= 100 * MS);
    assert_true(w->oncpu_ns + w->runq_ns <= w->cpu_known_ns);
    assert_true(w->offcpu_ns <= w->cpu_known_ns);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_credit),
        cmocka_unit_test(test_misaligned_converges),
        cmocka_unit_test(test_input_stall),
        cmocka_unit_test(test_input_stall_whole_region),
        cmocka_unit_test(test_compile_wait_is_compiling),
        cmocka_unit_test(test_off_cpu_wait),
        cmocka_unit_test(test_busy_others_mid_step),
        cmocka_unit_test(test_gpu_wait),
        cmocka_unit_test(test_gpu_wait_among_nccl_kernels),
        cmocka_unit_test(test_query_is_no_wait),
        cmocka_unit_test(test_without_samples),
        cmocka_unit_test(test_hostile_samples),
        cmocka_unit_test(test_preempted_is_run_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
