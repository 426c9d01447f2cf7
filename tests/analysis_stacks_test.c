/*
 * analysis_stacks_test.c - what the analysis makes of sampled call stacks
 * (format 1.2 STACKS chunks): each sample placed in the region open on its
 * thread at its time, weighed by the time since its thread's previous
 * sample; the unattributed_time finding measured exactly from the regions
 * and named by the samples outside them; the sampled paths under each node
 * (prism_analysis_sampled) and the all-threads tree with them
 * (prism_analysis_tree_sampled), and each thread's tree with its own
 * (prism_analysis_thread_tree_sampled); what the samples outside the steps did;
 * and samples naming strings or threads the file never gave; a region
 * around the whole loop holds the steps inside it (no unattributed_time,
 * and only its own time outside the steps is outside the steps; on a thread
 * beside the loop, its time in the steps is said), whether the steps
 * arrive before its exit, after it, or some of each.
 *
 * The workload: 10 steps of 100 ms on thread 1; 'fwd' 30 ms, 'opt' 10 ms,
 * then 60 ms in no region (40 ms in wait() blocked in clock_nanosleep,
 * 20 ms in metrics()); a sample every 10 ms at the middle of each slot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pbuild.h"

enum { N_FWD = 1, N_OPT, F_MOD, F_MAIN20, F_LINEAR, F_MAIN25, F_STEP, F_MAIN30, F_WAIT,
       F_SLEEP, F_MAIN40, F_METRICS, F_EVAL, N_TRAIN };
static const char *const names[] = {
    "fwd", "opt",
    "<module> (/home/u/train.py:10)", "main (/home/u/train.py:20)",
    "Linear.forward (/usr/lib/python3/site-packages/torch/nn/linear.py:134)",
    "main (/home/u/train.py:25)", "Optimizer.step (/usr/lib/python3/site-packages/torch/optim/sgd.py:9)",
    "main (/home/u/train.py:30)", "wait (/home/u/train.py:5)", "[clock_nanosleep]",
    "main (/home/u/train.py:40)", "metrics (/home/u/train.py:8)", "evaluate (/home/u/train.py:60)",
    "train",
};

#define MS 1000000ull

static void sample(pbuild *b, uint32_t stream, uint64_t ts, uint32_t flags, const uint32_t *fr,
                   uint32_t n)
{
    prism_stack_sample s = { ts, stream, flags, n, fr, 0, 0 };
    PB_PUT(b, PRISM_CHUNK_STACKS, 0, ts, prism_enc_stack(&b->e, &s));
}

static uint32_t node_named(const prism_tree *t, const char *name)
{
    for (uint32_t i = 0; i < t->count; i++)
        if (!strcmp(t->nodes[i].name, name))
            return i;
    return PRISM_NO_NODE;
}

/* The workload above; `evals`: samples in an eval pass after the steps. */
static loaded workload(pbuild *b, bool evals, bool hostile)
{
    pb_init(b, names, sizeof names / sizeof names[0], 1);
    pb_thread(b, 1, "MainThread");
    pb_info_uint(b, "steps.thread", 1);
    pb_info_text(b, "stacks.sampler", "python 100 Hz");
    pb_info_uint(b, "stacks.period_ns", 10 * MS);
    const uint32_t fwd[] = { F_MOD, F_MAIN20, F_LINEAR };
    const uint32_t opt[] = { F_MOD, F_MAIN25, F_STEP };
    const uint32_t wait[] = { F_MOD, F_MAIN30, F_WAIT, F_SLEEP };
    const uint32_t met[] = { F_MOD, F_MAIN40, F_METRICS };
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t t0 = MS + k * 100 * MS;
        pb_enter(b, 1, t0, N_FWD);
        pb_exit(b, 1, t0 + 30 * MS);
        pb_enter(b, 1, t0 + 30 * MS, N_OPT);
        pb_exit(b, 1, t0 + 40 * MS);
        prism_step st = { t0, t0 + 100 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(b, &st);
        /* the flush: the samples after the regions they fell in */
        for (int j = 0; j < 10; j++) {
            uint64_t ts = t0 + (uint64_t)j * 10 * MS + 5 * MS;
            if (j < 3)
                sample(b, 1, ts, PRISM_STACK_RUNNING, fwd, 3);
            else if (j == 3)
                sample(b, 1, ts, PRISM_STACK_RUNNING, opt, 3);
            else if (j < 8)
                sample(b, 1, ts, PRISM_STACK_SYSCALL, wait, 4);
            else
                sample(b, 1, ts, PRISM_STACK_RUNNING, met, 3);
        }
    }
    uint64_t end = MS + 1000 * MS;
    if (evals) {                        /* after the last step: no step holds it */
        const uint32_t ev[] = { F_MOD, F_EVAL };
        for (int j = 0; j < 5; j++)
            sample(b, 1, end + (uint64_t)j * 10 * MS + 5 * MS, PRISM_STACK_RUNNING, ev, 2);
        end += 50 * MS;
    }
    if (hostile) {
        const uint32_t unknown[] = { F_MOD, 999, 12345 };   /* no such strings */
        sample(b, 1, end + 1, 0, unknown, 3);
        sample(b, 77, end + 2, 0, fwd, 3);                  /* no such thread */
    }
    pb_enter(b, 1, end + 10, N_OPT);     /* the end of the run */
    pb_exit(b, 1, end + 20);
    return pb_load(b);
}

static void test_unattributed_named_by_samples(void **state)
{
    (void)state;
    pbuild b;
    loaded l = workload(&b, false, false);
    prism_stacks_info si;
    assert_true(prism_analysis_stacks_info(l.a, &si));
    assert_int_equal(si.samples, 100);
    assert_int_equal(si.period_ns, 10 * MS);
    assert_string_equal(si.status, "python 100 Hz");
    const prism_bottleneck *f = pb_finding(l.a, PRISM_BN_UNATTRIBUTED);
    assert_non_null(f);
    assert_true(f->share > 0.599 && f->share < 0.601);     /* 60 of 100 ms, exactly */
    assert_non_null(strstr(f->description, "60.0% of step time"));
    /* the samples there split 4 : 2 below main(): both branches named */
    assert_non_null(strstr(f->evidence, "sampled there (60 samples, mostly blocked in a system "
                                        "call): wait (train.py:5) -> [clock_nanosleep] 67%, "
                                        "metrics (train.py:8) 33%"));
    unload(&l);
}

static void test_sampled_paths_under_their_nodes(void **state)
{
    (void)state;
    pbuild b;
    loaded l = workload(&b, false, false);
    const prism_tree *t = prism_analysis_tree(l.a);
    uint32_t out = node_named(t, "(outside regions)"), fwd = node_named(t, "fwd");
    assert_int_not_equal(out, PRISM_NO_NODE);
    assert_int_not_equal(fwd, PRISM_NO_NODE);
    size_t n;
    const prism_sampled *s = prism_analysis_sampled(l.a, out, &n);
    assert_non_null(s);
    /* from the frame all of them share: <module>, then main:30 / main:40 */
    assert_int_equal(s[0].parent, PRISM_NO_NODE);
    assert_string_equal(s[0].name, "<module> (train.py:10)");
    assert_int_equal(s[0].samples, 60);
    assert_true(s[0].ns > 599.0 * MS && s[0].ns < 601.0 * MS);
    bool wait = false, sleep = false;
    for (size_t i = 1; i < n; i++) {
        assert_true(s[i].parent < i);               /* parents first */
        if (!strcmp(s[i].name, "wait (train.py:5)")) {
            wait = true;
            assert_int_equal(s[i].samples, 40);
            assert_true(s[i].blocked > 0.999);
        }
        if (!strcmp(s[i].name, "[clock_nanosleep]"))
            sleep = true;
    }
    assert_true(wait && sleep);
    /* fwd: every sample there the same stack: its innermost frame, a
     * library's shown with its package */
    s = prism_analysis_sampled(l.a, fwd, &n);
    assert_int_equal(n, 1);
    assert_string_equal(s[0].name, "Linear.forward (nn/linear.py:134)");
    assert_true(s[0].ns <= (double)t->nodes[fwd].self_ns + 1);
    /* the tree with them: the recorded nodes where they were */
    const prism_tree *g = prism_analysis_tree_sampled(l.a);
    assert_true(g != t && g->count > t->count);
    assert_int_equal(g->total_ns, t->total_ns);
    for (uint32_t i = 0; i < t->count; i++) {
        assert_string_equal(g->nodes[i].name, t->nodes[i].name);
        assert_int_equal(g->nodes[i].total_ns, t->nodes[i].total_ns);
        assert_int_equal(g->nodes[i].self_ns, t->nodes[i].self_ns);
        assert_int_equal(g->nodes[i].calls, t->nodes[i].calls);
        assert_int_equal(g->nodes[i].flags & PRISM_NODE_SAMPLED, 0);
    }
    /* all of fwd's own time sampled: its self time stays the measured one
     * (the Ops pane's), the `~` rows an estimate of what it was doing */
    assert_true(t->nodes[fwd].self_ns > 0);
    assert_int_equal(g->nodes[fwd].self_ns, t->nodes[fwd].self_ns);
    size_t sampled = 0;
    for (uint32_t i = t->count; i < g->count; i++) {
        assert_true(g->nodes[i].flags & PRISM_NODE_SAMPLED);
        assert_memory_equal(g->nodes[i].name, "~ ", 2);
        assert_true(g->nodes[i].parent < i);
        sampled++;
    }
    /* the children lists hold them */
    size_t seen = 0;
    for (uint32_t i = 0; i < g->count; i++)
        for (uint32_t c = g->nodes[i].first_child; c != PRISM_NO_NODE; c = g->nodes[c].next_sibling)
            seen += c >= t->count;
    assert_int_equal(seen, sampled);
    /* and the recorded tree has none */
    for (uint32_t i = 0; i < t->count; i++)
        assert_int_equal(t->nodes[i].flags & PRISM_NODE_SAMPLED, 0);
    /* refreshed again (a live profile is, on every new slice): the same */
    size_t count = g->count;
    prism_analysis_refresh(l.a);
    prism_analysis_refresh(l.a);
    assert_int_equal(prism_analysis_tree_sampled(l.a)->count, count);
    assert_non_null(prism_analysis_sampled(l.a, out, &n));
    unload(&l);
}

static void test_outside_steps_and_hostile(void **state)
{
    (void)state;
    pbuild b;
    loaded l = workload(&b, true, true);
    prism_outside o;
    assert_true(prism_analysis_outside(l.a, &o));
    /* the eval pass, beside the one sample with unknown frames after it */
    assert_memory_equal(o.sampled, "evaluate (train.py:60) 9", 24);
    assert_true(o.sampled_ns > 49.0 * MS && o.sampled_ns < 61.0 * MS);
    /* a frame with no string is "?", a stream with no thread no thread */
    prism_stacks_info si;
    assert_true(prism_analysis_stacks_info(l.a, &si));
    assert_int_equal(si.samples, 107);
    assert_int_equal(prism_analysis_thread_count(l.a), 1);
    const prism_bottleneck *f = pb_finding(l.a, PRISM_BN_UNATTRIBUTED);
    assert_non_null(f);
    unload(&l);
}

static void test_no_samples(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof names[0], 1);
    pb_thread(&b, 1, "MainThread");
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t t0 = MS + k * 100 * MS;
        pb_enter(&b, 1, t0, N_FWD);
        pb_exit(&b, 1, t0 + 30 * MS);
        prism_step st = { t0, t0 + 100 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    loaded l = pb_load(&b);
    prism_stacks_info si;
    assert_false(prism_analysis_stacks_info(l.a, &si));
    assert_ptr_equal(prism_analysis_tree_sampled(l.a), prism_analysis_tree(l.a));
    const prism_bottleneck *f = pb_finding(l.a, PRISM_BN_UNATTRIBUTED);
    assert_non_null(f);
    assert_true(f->share > 0.699 && f->share < 0.701);
    assert_non_null(strstr(f->evidence, "no stack samples say where"));
    unload(&l);
}

/* A region around the loop: 'train' enters 10 ms before the first of 10
 * steps of 100 ms and exits 9 ms after the last; each step holds 'fwd'
 * (30 ms) under it.  `late`: how many steps' records come after the
 * region's exit (the writer flushes steps and regions apart): 0, some, all. */
static void around_the_loop(unsigned late)
{
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof names[0], 1);
    pb_thread(&b, 1, "MainThread");
    pb_info_uint(&b, "steps.thread", 1);
    prism_step st[10];
    pb_enter(&b, 1, MS, N_TRAIN);
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t t0 = 11 * MS + k * 100 * MS;
        pb_enter(&b, 1, t0 + MS, N_FWD);
        pb_exit(&b, 1, t0 + 31 * MS);
        st[k] = (prism_step){ t0, t0 + 100 * MS, k, 0, PRISM_STEP_SAMPLED };
        if (k < 10 - late)
            pb_step(&b, &st[k]);
    }
    pb_exit(&b, 1, 1020 * MS);
    for (unsigned k = 10 - late; k < 10; k++)
        pb_step(&b, &st[k]);
    pb_enter(&b, 1, 1030 * MS, N_OPT);  /* after the loop: outside the steps */
    pb_exit(&b, 1, 1034 * MS);
    /* a thread beside it, in one region from before the first step to
     * after the last: 1000 of its 1029.5 ms lie in steps */
    pb_thread(&b, 2, "pool");
    pb_enter(&b, 2, MS / 2, F_WAIT);
    pb_exit(&b, 2, 1030 * MS);
    loaded l = pb_load(&b);
    const prism_tree *t = prism_analysis_thread_tree(l.a, 0, NULL, NULL);
    assert_non_null(t);
    assert_int_equal(node_named(t, "(outside regions)"), PRISM_NO_NODE);
    /* its steps are held: no finding says they are not */
    assert_null(pb_finding(l.a, PRISM_BN_UNATTRIBUTED));
    /* outside the steps: 'train' 10 + 9 ms, 'opt' 4 ms */
    prism_outside o;
    assert_true(prism_analysis_outside(l.a, &o));
    assert_int_equal(o.nregions, 2);
    assert_string_equal(o.regions[0].name, "train");
    assert_int_equal(o.regions[0].ns, 19 * MS);
    assert_string_equal(o.regions[1].name, "opt");
    assert_int_equal(o.regions[1].ns, 4 * MS);
    size_t nb;
    const prism_bottleneck *bn = prism_analysis_bottlenecks(l.a, &nb), *f = NULL;
    for (size_t i = 0; i < nb; i++)
        if (strstr(bn[i].description, "of thread 'pool' (beside the training thread)"))
            f = &bn[i];
    assert_non_null(f);
    assert_non_null(strstr(f->evidence, "1 calls, 1029.5 ms, 97% of it during steps"));
    unload(&l);
}

static void test_region_around_the_loop(void **state)
{
    (void)state;
    around_the_loop(0);
    around_the_loop(4);
    around_the_loop(10);
}

/* Slow steps inside a region around the loop: 20 steps of 100 ms under
 * 'train', each with 'fwd' (30 ms); steps 5 and 15 wait 200 ms more in
 * 'train' itself (no region below it), where the samples find wait().
 * The finding blames 'train', in its own time, and names what the samples
 * saw; without samples nothing says the excess is its own (warm-up spreads
 * over the regions below it), so it says only that none of them holds it. */
static void slow_around_the_loop(bool samples)
{
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof names[0], 1);
    pb_thread(&b, 1, "MainThread");
    pb_info_uint(&b, "steps.thread", 1);
    if (samples) {
        pb_info_text(&b, "stacks.sampler", "python 100 Hz");
        pb_info_uint(&b, "stacks.period_ns", 10 * MS);
    }
    const uint32_t fwd[] = { F_MOD, F_MAIN20, F_LINEAR };
    const uint32_t wait[] = { F_MOD, F_MAIN30, F_WAIT, F_SLEEP };
    pb_enter(&b, 1, MS, N_TRAIN);
    uint64_t t0 = 10 * MS;
    for (uint64_t k = 0; k < 20; k++) {
        uint64_t d = k == 5 || k == 15 ? 300 * MS : 100 * MS;
        pb_enter(&b, 1, t0 + MS, N_FWD);
        pb_exit(&b, 1, t0 + 31 * MS);
        prism_step st = { t0, t0 + d, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        for (uint64_t ts = t0 + 5 * MS; samples && ts < t0 + d; ts += 10 * MS)
            if (ts < t0 + 31 * MS)
                sample(&b, 1, ts, PRISM_STACK_RUNNING, fwd, 3);
            else if (ts >= t0 + 100 * MS)
                sample(&b, 1, ts, PRISM_STACK_SYSCALL, wait, 4);
        t0 += d;
    }
    pb_exit(&b, 1, t0 + MS);
    loaded l = pb_load(&b);
    const prism_bottleneck *f = pb_finding(l.a, PRISM_BN_SLOW_STEPS);
    assert_non_null(f);
    if (samples && !strstr(f->evidence, "steps 5, 15; 'train' holds it in its own time (open "
                                        "across the steps)"))
        fail_msg("evidence: %s", f->evidence);
    if (!samples && !strstr(f->evidence, "steps 5, 15; no region below 'train' (open across "
                                         "the steps) holds it"))
        fail_msg("evidence: %s", f->evidence);
    if (samples && !strstr(f->evidence, "; sampled in the slow steps: wait (train.py:5) -> "
                                        "[clock_nanosleep]"))
        fail_msg("evidence: %s", f->evidence);
    const prism_tree *all = prism_analysis_tree(l.a);
    if (samples) {
        assert_true(f->node < all->count);
        assert_string_equal(all->nodes[f->node].name, "train");
    }
    assert_null(pb_finding(l.a, PRISM_BN_UNATTRIBUTED));
    unload(&l);
}

static void test_slow_steps_around_the_loop(void **state)
{
    (void)state;
    slow_around_the_loop(true);
    slow_around_the_loop(false);
}

/* Regions that outlast the step they began in count only their part
 * inside it there: 'eval' (a validation pass) entered 1 ms before the last
 * step ends and runs 50 ms on; 'opt' of step 4 enters 5 ms before its end
 * and runs 10 ms, into step 5.  'eval' is outside the steps for 49 ms and
 * no hot operation; the steps stay held (no time outside regions). */
static void test_region_outlasting_its_step(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof names[0], 1);
    pb_thread(&b, 1, "MainThread");
    pb_info_uint(&b, "steps.thread", 1);
    uint64_t t0 = MS;
    for (uint64_t k = 0; k < 10; k++, t0 += 100 * MS) {
        pb_enter(&b, 1, t0 + (k == 5 ? 5 * MS : 0), N_FWD);
        pb_exit(&b, 1, t0 + 95 * MS);
        if (k == 4) {
            pb_enter(&b, 1, t0 + 95 * MS, N_OPT);
            pb_exit(&b, 1, t0 + 105 * MS);
        } else if (k != 5) {
            pb_enter(&b, 1, t0 + 95 * MS, N_OPT);
            pb_exit(&b, 1, t0 + (k == 9 ? 99 : 100) * MS);
        }
        prism_step st = { t0, t0 + 100 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    pb_enter(&b, 1, t0 - MS, F_EVAL);
    pb_exit(&b, 1, t0 + 49 * MS);
    loaded l = pb_load(&b);
    prism_outside o;
    assert_true(prism_analysis_outside(l.a, &o));
    assert_int_equal(o.nregions, 1);
    assert_string_equal(o.regions[0].name, "evaluate (/home/u/train.py:60)");
    assert_int_equal(o.regions[0].ns, 49 * MS);
    size_t nb;
    const prism_bottleneck *bn = prism_analysis_bottlenecks(l.a, &nb);
    for (size_t i = 0; i < nb; i++)
        if (bn[i].type == PRISM_BN_HOT_OPERATION)
            assert_null(strstr(bn[i].description, "evaluate"));
    assert_null(pb_finding(l.a, PRISM_BN_UNATTRIBUTED));
    const prism_tree *t = prism_analysis_thread_tree(l.a, 0, NULL, NULL);
    uint32_t ev = node_named(t, "evaluate (/home/u/train.py:60)");
    uint32_t op = node_named(t, "opt");
    assert_true(ev != PRISM_NO_NODE && op != PRISM_NO_NODE);
    assert_int_equal(t->nodes[ev].in_step_ns, MS);
    /* 5 ms in steps 0-4 and 6-8 (step 4's second 5 ms lie in step 5), 4 in 9 */
    assert_int_equal(t->nodes[op].in_step_ns, 44 * MS);
    unload(&l);
}

/* Each thread's tree with its own samples: the training thread's (its
 * `(outside regions)` with what its samples there did) and a loader
 * thread's (its region with its own frames), neither with the other's. */
static void test_thread_trees_sampled(void **state)
{
    (void)state;
    static const char *const nm[] = {
        "fwd", "load", "<module> (/home/u/train.py:10)", "wait (/home/u/train.py:5)",
        "[clock_nanosleep]", "Dataset.__getitem__ (/home/u/data.py:7)",
        "decode (/usr/lib/python3/site-packages/PIL/Image.py:90)",
    };
    enum { T_FWD = 1, T_LOAD, T_MOD, T_WAIT, T_SLEEP, T_GET, T_DECODE };
    pbuild b;
    pb_init(&b, nm, sizeof nm / sizeof nm[0], 1);
    pb_thread(&b, 1, "MainThread");
    pb_thread(&b, 2, "loader");
    pb_info_uint(&b, "steps.thread", 1);
    pb_info_text(&b, "stacks.sampler", "python 100 Hz");
    pb_info_uint(&b, "stacks.period_ns", 10 * MS);
    const uint32_t wait[] = { T_MOD, T_WAIT, T_SLEEP }, get[] = { T_GET, T_DECODE };
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t t0 = MS + k * 100 * MS;
        pb_enter(&b, 1, t0, T_FWD);          /* 40 ms fwd, 60 ms outside regions */
        pb_exit(&b, 1, t0 + 40 * MS);
        pb_enter(&b, 2, t0, T_LOAD);         /* the loader: 80 ms in load */
        pb_exit(&b, 2, t0 + 80 * MS);
        prism_step st = { t0, t0 + 100 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        for (int j = 0; j < 10; j++) {  /* in time order, as the sampler writes */
            uint64_t ts = t0 + (uint64_t)j * 10 * MS + 5 * MS;
            if (j < 8)
                sample(&b, 2, ts, PRISM_STACK_RUNNING, get, 2);
            if (j >= 4)
                sample(&b, 1, ts, PRISM_STACK_SYSCALL, wait, 3);
        }
    }
    loaded l = pb_load(&b);
    assert_int_equal(prism_analysis_thread_count(l.a), 2);
    for (size_t ti = 0; ti < 2; ti++) {
        uint32_t stream;
        const prism_tree *t = prism_analysis_thread_tree(l.a, ti, &stream, NULL);
        const prism_tree *g = prism_analysis_thread_tree_sampled(l.a, ti);
        assert_non_null(g);
        assert_true(g != t && g->count > t->count);
        assert_ptr_equal(prism_analysis_thread_tree_sampled(l.a, ti), g);   /* kept */
        assert_int_equal(g->total_ns, t->total_ns);
        for (uint32_t i = 0; i < t->count; i++) {       /* recorded nodes unmoved */
            assert_string_equal(g->nodes[i].name, t->nodes[i].name);
            assert_int_equal(g->nodes[i].total_ns, t->nodes[i].total_ns);
            assert_int_equal(g->nodes[i].path_hash, t->nodes[i].path_hash);
            assert_int_equal(g->nodes[i].self_ns, t->nodes[i].self_ns);   /* measured */
        }
        bool mine = false;
        for (uint32_t i = t->count; i < g->count; i++) {
            const prism_node *n = &g->nodes[i];
            assert_true(n->flags & PRISM_NODE_SAMPLED);
            assert_true(n->parent < i);
            assert_int_equal(n->thread, t->nodes[0].thread);
            /* only the thread's own frames */
            assert_null(strstr(n->name, stream == 1 ? "Image.py" : "clock_nanosleep"));
            if (strstr(n->name, stream == 1 ? "[clock_nanosleep]" : "decode (PIL/Image.py:90)"))
                mine = true;
            /* shares of the thread's total */
            assert_true(n->share > 0 && n->share <= 1.0);
            assert_true(fabs(n->share - (double)n->total_ns / (double)t->total_ns) < 1e-9);
        }
        assert_true(mine);
        /* every sample of a node the same stack: its innermost frame */
        if (stream == 1) {              /* under (outside regions), 60 ms a step */
            uint32_t out = node_named(g, "(outside regions)");
            assert_int_not_equal(out, PRISM_NO_NODE);
            uint32_t c = g->nodes[out].first_child;
            assert_int_not_equal(c, PRISM_NO_NODE);
            assert_true(c >= t->count);
            assert_string_equal(g->nodes[c].name, "~ [clock_nanosleep]");
            assert_int_equal(g->nodes[c].calls, 60);
            /* all of its time sampled: an estimate never above its own time */
            assert_true(g->nodes[c].total_ns + 1 >= t->nodes[out].self_ns &&
                        g->nodes[c].total_ns <= t->nodes[out].self_ns + 1);
            assert_int_equal(g->nodes[out].self_ns, t->nodes[out].self_ns);
        } else {                        /* load: its self time, all sampled */
            uint32_t ld = node_named(g, "load");
            assert_int_not_equal(ld, PRISM_NO_NODE);
            assert_true(g->nodes[ld].self_ns > 0);
            uint32_t c = g->nodes[ld].first_child;
            assert_string_equal(g->nodes[c].name, "~ decode (PIL/Image.py:90)");
            assert_int_equal(g->nodes[c].calls, 80);
        }
    }
    /* the first thread's stays valid while the second's is made */
    const prism_tree *g0 = prism_analysis_thread_tree_sampled(l.a, 0);
    const prism_tree *g1 = prism_analysis_thread_tree_sampled(l.a, 1);
    assert_true(g0 != g1);
    assert_true(g0->nodes[g0->count - 1].flags & PRISM_NODE_SAMPLED);
    assert_null(prism_analysis_thread_tree_sampled(l.a, 2));
    /* refreshed (a live profile, every slice): made again, the same */
    size_t c0 = g0->count;
    prism_analysis_refresh(l.a);
    assert_int_equal(prism_analysis_thread_tree_sampled(l.a, 0)->count, c0);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unattributed_named_by_samples),
        cmocka_unit_test(test_sampled_paths_under_their_nodes),
        cmocka_unit_test(test_outside_steps_and_hostile),
        cmocka_unit_test(test_no_samples),
        cmocka_unit_test(test_region_around_the_loop),
        cmocka_unit_test(test_slow_steps_around_the_loop),
        cmocka_unit_test(test_region_outlasting_its_step),
        cmocka_unit_test(test_thread_trees_sampled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
