/*
 * analysis_stacks_gil_test.c - what the analysis makes of the sampler's
 * wait for the GIL (format 1.2 STACKS wait_ns / queued_ns, INFO
 * stacks.switch_interval_ns): a pass that found the GIL free read where the
 * thread was; one that waited the switch interval read Python that ran all
 * along; one that waited less read the call that released the GIL, and
 * its time goes to the Python the thread ran before (its previous stack,
 * when that pass saw it run Python through the switch interval in the same
 * region), not to the call.  Each sample weighs the time since the
 * previous pass that read its thread was due.
 *
 * The workload (synthetic times, no timing measured): thread 1 runs busy()
 * (Python) and now and then a short call mm() that releases the GIL; a pass
 * is due every 10 ms at 1 ms + 10 k ms, the switch interval is 5 ms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "pbuild.h"

enum { N_FWD = 1, F_MOD, F_BUSY, F_MM, F_SLEEP };
static const char *const names[] = {
    "fwd", "<module> (/home/u/t.py:1)", "busy (/home/u/t.py:9)", "<module> (/home/u/t.py:14)",
    "[clock_nanosleep]",
};

#define MS 1000000ull
#define US 1000ull

static const uint32_t busy[] = { F_MOD, F_BUSY };
static const uint32_t mm[] = { F_MM };
static const uint32_t slept[] = { F_MM, F_SLEEP };

/* A pass due at 1 ms + 10 k ms that waited `wait` for the GIL, `queued` of
 * it off a CPU, and read thread 1 then. */
static void pass(pbuild *b, uint64_t k, uint64_t wait, uint64_t queued, uint32_t flags,
                 const uint32_t *fr, uint32_t n)
{
    uint64_t ts = MS + k * 10 * MS + wait;
    prism_stack_sample s = { ts, 1, flags, n, fr, wait, queued };
    PB_PUT(b, PRISM_CHUNK_STACKS, 0, ts, prism_enc_stack(&b->e, &s));
}

static uint32_t node_named(const prism_tree *t, const char *name)
{
    for (uint32_t i = 0; i < t->count; i++)
        if (!strcmp(t->nodes[i].name, name))
            return i;
    return PRISM_NO_NODE;
}

/* The self time and samples of the sampled frame `name` under node. */
static double self_of(const prism_analysis *a, uint32_t node, const char *name, uint64_t *samples)
{
    size_t n;
    const prism_sampled *s = prism_analysis_sampled(a, node, &n);
    double ns = 0, kids = 0;
    *samples = 0;
    for (size_t i = 0; s && i < n; i++) {
        if (strcmp(s[i].name, name))
            continue;
        ns += s[i].ns;
        *samples += s[i].samples;
        for (size_t j = i + 1; j < n; j++)
            if (s[j].parent == i)
                kids += s[j].ns;
    }
    return ns - kids;
}

static loaded workload(pbuild *b, bool interval)
{
    pb_init(b, names, sizeof names / sizeof names[0], 1);
    pb_thread(b, 1, "MainThread");
    pb_info_uint(b, "steps.thread", 1);
    pb_info_text(b, "stacks.sampler", "python 100 Hz");
    pb_info_uint(b, "stacks.period_ns", 10 * MS);
    if (interval)
        pb_info_uint(b, "stacks.switch_interval_ns", 5 * MS);
    prism_step st = { 0, 200 * MS, 0, 0, PRISM_STEP_SAMPLED };
    pb_step(b, &st);
    const uint64_t R = PRISM_STACK_RUNNING;
    pass(b, 0, 5080 * US, 0, R, busy, 2);           /* held: busy, where CPython took the GIL */
    pass(b, 1, 2 * MS, 0, R, mm, 1);                /* released at mm: busy's */
    pass(b, 2, 5080 * US, 0, R, busy, 2);
    pass(b, 3, 1 * US, 0, R, mm, 1);                /* the GIL free: in mm when due */
    pass(b, 4, 2 * MS, 0, R, mm, 1);                /* released, no Python seen before: mm */
    pass(b, 5, 6 * MS, 500 * US, R, busy, 2);       /* held 5.5 ms */
    pass(b, 6, 5500 * US, 3 * MS, R, mm, 1);        /* held 2.5 ms, then off a CPU: released */
    pass(b, 7, 5080 * US, 0, R, busy, 2);
    pb_enter(b, 1, 75 * MS, N_FWD);                 /* a region begins before the next pass */
    pass(b, 8, 2 * MS, 0, R, mm, 1);                /* released in fwd: not busy's */
    pb_exit(b, 1, 85 * MS);
    pass(b, 9, 5080 * US, 0, R, busy, 2);
    pass(b, 10, 2 * MS, 0, PRISM_STACK_SYSCALL, slept, 2);  /* blocked: as read */
    pass(b, 11, 5080 * US, 0, R, busy, 2);
    pass(b, 12, 0, 0, R, mm, 1);                    /* no wait written (an older sampler) */
    pb_enter(b, 1, 300 * MS, N_FWD);                /* the end of the run */
    pb_exit(b, 1, 301 * MS);
    return pb_load(b);
}

static void test_released_credited_to_the_python_before(void **state)
{
    (void)state;
    pbuild b;
    loaded l = workload(&b, true);
    prism_stacks_info si;
    assert_true(prism_analysis_stacks_info(l.a, &si));
    assert_int_equal(si.samples, 13);
    assert_int_equal(si.released, 2);               /* passes 1 and 6 */
    /* each weighs the time since the previous pass was due: 10 ms, the
     * first one period */
    assert_int_equal(si.weight_ns, 13 * 10 * MS);
    const prism_tree *t = prism_analysis_tree(l.a);
    uint32_t out = node_named(t, "(outside regions)"), fwd = node_named(t, "fwd");
    assert_int_not_equal(out, PRISM_NO_NODE);
    assert_int_not_equal(fwd, PRISM_NO_NODE);
    uint64_t n;
    /* busy: passes 0, 1, 2, 5, 6, 7, 9, 11 */
    double ns = self_of(l.a, out, "busy (t.py:9)", &n);
    assert_int_equal(n, 8);
    assert_true(ns > 79.9 * MS && ns < 80.1 * MS);
    /* mm: 3 (found there), 4 (nothing seen before it), 12 (no wait), and
     * the blocked pass 10 */
    ns = self_of(l.a, out, "<module> (t.py:14)", &n);
    assert_int_equal(n, 4);
    assert_true(ns > 29.9 * MS && ns < 30.1 * MS);
    /* pass 8 stays the call's, in the region open when it was read */
    ns = self_of(l.a, fwd, "<module> (t.py:14)", &n);
    assert_int_equal(n, 1);
    assert_true(ns > 9.9 * MS && ns < 10.1 * MS);
    unload(&l);
}

/* Without INFO stacks.switch_interval_ns, CPython's default (5 ms). */
static void test_default_switch_interval(void **state)
{
    (void)state;
    pbuild b;
    loaded l = workload(&b, false);
    prism_stacks_info si;
    assert_true(prism_analysis_stacks_info(l.a, &si));
    assert_int_equal(si.released, 2);
    unload(&l);
}

/* The first sample of a file read as released has nothing to go to. */
static void test_first_sample_released(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof names[0], 1);
    pb_thread(&b, 1, "MainThread");
    pb_info_uint(&b, "stacks.period_ns", 10 * MS);
    pb_enter(&b, 1, 0, N_FWD);
    pass(&b, 0, 2 * MS, 0, PRISM_STACK_RUNNING, mm, 1);
    pass(&b, 1, 2 * MS, 0, PRISM_STACK_RUNNING, mm, 1);
    pb_exit(&b, 1, 30 * MS);
    loaded l = pb_load(&b);
    prism_stacks_info si;
    assert_true(prism_analysis_stacks_info(l.a, &si));
    assert_int_equal(si.samples, 2);
    assert_int_equal(si.released, 0);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_released_credited_to_the_python_before),
        cmocka_unit_test(test_default_switch_interval),
        cmocka_unit_test(test_first_sample_released),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
