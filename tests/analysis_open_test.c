/*
 * analysis_open_test.c - a snapshot of a profile still being written (the
 * live tail) is consistent: regions still open count as calls in progress
 * with their time so far, so a parent never shows fewer calls or less time
 * than its children; once they close, the figures are those of a one-shot
 * read.  The stream is fed in prefixes cut inside open regions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>

#include "pbuild.h"

enum { N_STEP = 1, N_WORK, N_INNER };
static const char *const names[] = { "step", "work", "inner" };
#define ITERS 10

typedef struct cut {
    size_t at;                  /* bytes of the stream before the cut */
    uint64_t step_calls, step_open, work_calls, work_open, inner_calls;
} cut;

/* step { work { inner } } ITERS times; cuts inside iteration 5 (step open,
 * work closed) and iteration 7 (step and work open, inner closed). */
static void build(pbuild *b, cut *c)
{
    pb_init(b, names, sizeof names / sizeof names[0], 3);
    pb_thread(b, 1, "main");
    uint64_t now = 1000;
    for (int i = 0; i < ITERS; i++) {
        pb_enter(b, 1, now, N_STEP);
        now += 100;
        pb_enter(b, 1, now, N_WORK);
        now += 50;
        pb_leaf(b, 1, &now, N_INNER, 400);
        if (i == 7) {
            pb_flush(b);
            c[1] = (cut){ b->len, 8, 1, 8, 1, 8 };
        }
        now += 30;
        pb_exit(b, 1, now);
        if (i == 5) {
            pb_flush(b);
            c[0] = (cut){ b->len, 6, 1, 6, 0, 6 };
        }
        now += 200;
        pb_exit(b, 1, now);
        now += 10;
    }
    pb_flush(b);
}

static const prism_node *child(const prism_tree *t, uint32_t parent, const char *name)
{
    uint32_t n = parent == PRISM_NO_NODE ? t->first_root : t->nodes[parent].first_child;
    for (; n != PRISM_NO_NODE; n = t->nodes[n].next_sibling)
        if (!strcmp(t->nodes[n].name, name))
            return &t->nodes[n];
    fail_msg("no node %s", name);
    return NULL;
}

/* Every parent holds at least its children's time; self time adds up. */
static void check_consistent(const prism_tree *t)
{
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *p = &t->nodes[i];
        uint64_t kids = 0;
        for (uint32_t k = p->first_child; k != PRISM_NO_NODE; k = t->nodes[k].next_sibling) {
            assert_true(t->nodes[k].total_ns <= p->total_ns);
            kids += t->nodes[k].total_ns;
        }
        assert_true(p->open_calls <= p->calls);
        assert_int_equal(p->self_ns + kids, p->total_ns);
    }
}

static void check_cut(const prism_tree *t, const cut *c)
{
    const prism_node *step = child(t, PRISM_NO_NODE, "step");
    const prism_node *work = child(t, (uint32_t)(step - t->nodes), "work");
    const prism_node *inner = child(t, (uint32_t)(work - t->nodes), "inner");
    assert_int_equal(step->calls, c->step_calls);
    assert_int_equal(step->open_calls, c->step_open);
    assert_int_equal(work->calls, c->work_calls);
    assert_int_equal(work->open_calls, c->work_open);
    assert_int_equal(inner->calls, c->inner_calls);
    assert_int_equal(inner->open_calls, 0);
    assert_true(step->calls >= work->calls && work->calls >= inner->calls);
    check_consistent(t);
}

static void test_open_regions_are_calls_in_progress(void **state)
{
    (void)state;
    pbuild b;
    cut c[2];
    build(&b, c);
    prism_reader_callbacks cb;
    prism_analysis *a = prism_analysis_new(NULL);
    assert_non_null(a);
    prism_analysis_callbacks(&cb);
    prism_reader *r = prism_reader_new(&cb, a);
    assert_non_null(r);
    prism_analysis_attach(a, r);
    size_t off = 0;
    for (int k = 0; k < 2; k++) {       /* the snapshots a live tail shows */
        assert_int_equal(prism_reader_feed(r, b.data + off, c[k].at - off), PRISM_OK);
        off = c[k].at;
        prism_analysis_refresh(a);
        check_cut(prism_analysis_tree(a), &c[k]);
        size_t nt = prism_analysis_thread_count(a);
        assert_int_equal(nt, 1);
        check_cut(prism_analysis_thread_tree(a, 0, NULL, NULL), &c[k]);
        size_t nops;
        const prism_op *ops = prism_analysis_ops(a, &nops);
        for (size_t i = 0; i < nops; i++)
            if (!strcmp(ops[i].name, "step"))
                assert_int_equal(ops[i].calls, c[k].step_calls);
    }
    assert_int_equal(prism_reader_feed(r, b.data + off, b.len - off), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    prism_analysis_refresh(a);
    /* all closed: the same figures as a one-shot read */
    loaded l = pb_load(&b);
    const prism_tree *t = prism_analysis_tree(a), *w = prism_analysis_tree(l.a);
    assert_int_equal(t->count, w->count);
    assert_int_equal(t->total_ns, w->total_ns);
    for (size_t i = 0; i < t->count; i++) {
        assert_int_equal(t->nodes[i].calls, w->nodes[i].calls);
        assert_int_equal(t->nodes[i].open_calls, 0);
        assert_int_equal(t->nodes[i].total_ns, w->nodes[i].total_ns);
        assert_int_equal(t->nodes[i].self_ns, w->nodes[i].self_ns);
    }
    assert_int_equal(child(t, PRISM_NO_NODE, "step")->calls, ITERS);
    check_consistent(t);
    unload(&l);
    prism_analysis_free(a);
    prism_reader_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_regions_are_calls_in_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
