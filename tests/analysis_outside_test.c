/*
 * analysis_outside_test.c - the `(outside regions)` node (analysis/
 * unattributed.c): the step time on the training thread that no root
 * region holds, exact from the profile's own clock; its calls, per-step
 * figures, CPU split and where it is absent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "pbuild.h"

static const char *names[] = { "fwd", "bwd", "load", "idle" };
enum { FWD = 1, BWD, LOAD, IDLE };

#define MS 1000000ull

static uint32_t find_root(const prism_tree *t, const char *name)
{
    for (uint32_t r = t->first_root; r != PRISM_NO_NODE; r = t->nodes[r].next_sibling)
        if (!strcmp(t->nodes[r].name, name))
            return r;
    return PRISM_NO_NODE;
}

/* Main (stream 1) marks 10 steps of 10 ms: fwd [1, 4) ms, bwd [5, 8) ms
 * into each step, so 4 ms of each step is outside regions (0-1, 4-5,
 * 8-10); on step 3 bwd runs to the step's end (2 ms outside); before
 * the first step a root region `load` runs (outside the steps, not
 * counted).  A loader (stream 2) has regions but no steps of its own.
 * CPU samples (cpu = true): main runs inside its regions and is blocked
 * outside them, sampled at every region edge. */
static loaded build(bool cpu, bool footer)
{
    pbuild b;
    pb_init(&b, names, 4, 1);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "loader");
    pb_info_uint(&b, "steps.thread", 1);
    if (cpu)
        pb_info_text(&b, "cpu.sampler", "schedstat (simulated)");
    uint64_t t0 = 100 * MS, oncpu = 0;
    if (cpu) {                     /* sampled from the start: rings kept */
        prism_cpu_sample c = { .ts = 1, .stream = 1, .oncpu_ns = 0 };
        pb_cpu(&b, &c);
        pb_flush(&b);
    }
    pb_enter(&b, 1, 2 * MS, LOAD);
    pb_exit(&b, 1, 50 * MS);
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t s = t0 + k * 10 * MS;
        uint64_t edges[] = { s, s + 1 * MS, s + 4 * MS, s + 5 * MS, s + 8 * MS };
        pb_enter(&b, 1, s + 1 * MS, FWD);
        pb_exit(&b, 1, s + 4 * MS);
        pb_enter(&b, 1, s + 5 * MS, BWD);
        pb_exit(&b, 1, k == 3 ? s + 10 * MS : s + 8 * MS);
        pb_enter(&b, 2, s + 2 * MS, IDLE);
        pb_exit(&b, 2, s + 3 * MS);
        prism_step st = { s, s + 10 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        if (cpu) {
            /* on CPU exactly inside fwd and bwd: a sample at each edge */
            for (size_t e = 0; e < 5; e++) {
                if (e == 2 || e == 4)
                    oncpu += 3 * MS;
                prism_cpu_sample c = { .ts = edges[e], .stream = 1, .oncpu_ns = oncpu };
                pb_cpu(&b, &c);
                pb_flush(&b);
            }
            if (k == 3)
                oncpu += 2 * MS;   /* bwd to the step's end */
        }
    }
    if (cpu) {
        prism_cpu_sample c = { .ts = t0 + 100 * MS, .stream = 1, .oncpu_ns = oncpu };
        pb_cpu(&b, &c);
    }
    if (footer) {
        prism_footer f = { 0 };
        pb_flush(&b);
        PB_PUT(&b, PRISM_CHUNK_FOOTER, 0, 0, prism_enc_footer(&b.e, &f));
    }
    return pb_load(&b);
}

static const prism_tree *thread_named(const prism_analysis *a, const char *want)
{
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(a, i, NULL, &name);
        if (name && !strcmp(name, want))
            return t;
    }
    return NULL;
}

static void test_outside_node(void **state)
{
    (void)state;
    loaded l = build(false, false);
    const prism_tree *m = thread_named(l.a, "main");
    assert_non_null(m);
    uint32_t o = find_root(m, "(outside regions)");
    assert_int_not_equal(o, PRISM_NO_NODE);
    const prism_node *n = &m->nodes[o];
    assert_true(n->flags & PRISM_NODE_UNATTRIBUTED);
    /* step time (100 ms) minus the regions in the steps (6 ms a step, 8 on
     * step 3: 62 ms); `load`, before the steps, counts for nothing.  The
     * file has no footer: the 2 ms after the last region may yet be
     * followed by a region, so they wait (36 ms; 38 in the complete file) */
    assert_int_equal(n->total_ns, 36 * MS);
    assert_int_equal(n->self_ns, 36 * MS);
    assert_int_equal(n->calls, 10);
    assert_int_equal(n->steps_seen, 10);
    assert_int_equal(n->in_step_ns, 36 * MS);
    assert_int_equal(n->min_ns, 2 * MS);
    assert_int_equal(n->max_ns, 4 * MS);
    assert_true(n->step_max_ns == 4.0 * MS);
    assert_true(n->parent == PRISM_NO_NODE && n->first_child == PRISM_NO_NODE);
    /* the tree's total stays the sum of its roots */
    uint64_t sum = 0;
    for (uint32_t r = m->first_root; r != PRISM_NO_NODE; r = m->nodes[r].next_sibling)
        sum += m->nodes[r].total_ns;
    assert_int_equal(m->total_ns, sum);
    /* no other node carries the flag; the loader has no such node */
    for (size_t i = 0; i < m->count; i++)
        if (i != o)
            assert_false(m->nodes[i].flags & PRISM_NODE_UNATTRIBUTED);
    const prism_tree *ld = thread_named(l.a, "loader");
    assert_non_null(ld);
    assert_int_equal(find_root(ld, "(outside regions)"), PRISM_NO_NODE);
    /* merged into the all-threads tree, and an op */
    const prism_tree *all = prism_analysis_tree(l.a);
    uint32_t ao = find_root(all, "(outside regions)");
    assert_int_not_equal(ao, PRISM_NO_NODE);
    assert_true(all->nodes[ao].flags & PRISM_NODE_UNATTRIBUTED);
    assert_int_equal(all->nodes[ao].total_ns, 36 * MS);
    assert_int_equal(all->nodes[ao].calls, 10);
    assert_int_equal(all->nodes[ao].steps_seen, 10);
    assert_int_equal(prism_analysis_find(l.a, all->nodes[ao].path_hash), ao);
    size_t nops;
    const prism_op *ops = prism_analysis_ops(l.a, &nops);
    bool seen = false;
    for (size_t i = 0; i < nops; i++)
        if (!strcmp(ops[i].name, "(outside regions)")) {
            seen = true;
            assert_int_equal(ops[i].total_ns, 36 * MS);
            assert_int_equal(ops[i].node, ao);
        }
    assert_true(seen);
    double v[PRISM_STEP_SAMPLES];
    assert_int_equal(prism_analysis_node_step_samples(l.a, ao, v, PRISM_STEP_SAMPLES), 10);
    unload(&l);
}

/* A complete profile: the time after the last region counts as well (the
 * last step ends 2 ms after bwd), and the CPU split is that of the gaps. */
static void test_outside_cpu(void **state)
{
    (void)state;
    loaded l = build(true, true);
    assert_true(prism_analysis_cpu_present(l.a));
    const prism_tree *m = thread_named(l.a, "main");
    uint32_t o = find_root(m, "(outside regions)");
    assert_int_not_equal(o, PRISM_NO_NODE);
    const prism_node *n = &m->nodes[o];
    assert_int_equal(n->total_ns, 38 * MS);
    /* every gap lies between two samples: covered, and blocked */
    assert_int_equal(n->cpu_known_ns, 38 * MS);
    assert_true(n->oncpu_ns <= MS / 100);
    assert_int_equal(n->oncpu_ns + n->runq_ns + n->offcpu_ns, n->cpu_known_ns);
    assert_true(n->offcpu_ns >= 38 * MS - MS / 100);
    uint32_t f = find_root(m, "fwd");
    assert_true(m->nodes[f].oncpu_ns >= m->nodes[f].cpu_known_ns - MS / 100);
    unload(&l);
}

/* Without steps: no node anywhere. */
static void test_no_steps(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 4, 2);
    pb_thread(&b, 1, "main");
    uint64_t now = MS;
    for (int k = 0; k < 5; k++) {
        pb_leaf(&b, 1, &now, FWD, MS);
        now += MS;
    }
    loaded l = pb_load(&b);
    const prism_tree *all = prism_analysis_tree(l.a);
    assert_int_equal(find_root(all, "(outside regions)"), PRISM_NO_NODE);
    const prism_tree *m = thread_named(l.a, "main");
    assert_int_equal(find_root(m, "(outside regions)"), PRISM_NO_NODE);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outside_node),
        cmocka_unit_test(test_outside_cpu),
        cmocka_unit_test(test_no_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
