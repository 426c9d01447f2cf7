/*
 * analysis_drop_test.c - what the analysis makes of dropped regions: the
 * UNRECORDED records of format 1.1 counted under the region open at their
 * depth (inclusive up the tree, per thread and merged), a record whose
 * depth does not match the stream's placed nowhere, the totals of DROPPED
 * records with their regions, and the dropped_events finding saying
 * whether the tree is intact (whole regions) or not (single events, a
 * writer before 1.1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pbuild.h"

enum { N_OUTER = 1, N_MIDDLE, N_OTHER };
static const char *const names[] = { "outer", "middle", "other" };

static void pb_unrecorded(pbuild *b, uint32_t stream, uint64_t ts, uint32_t depth,
                          uint64_t regions)
{
    prism_unrecorded u = { ts, depth, regions };
    PB_PUT(b, PRISM_CHUNK_UNRECORDED, stream, ts, prism_enc_unrecorded(&b->e, &u));
}

static void pb_dropped(pbuild *b, uint32_t stream, uint64_t total, bool have, uint64_t regions)
{
    prism_dropped d = { stream, PRISM_SOURCE_CPU, total, have, regions };
    PB_PUT(b, PRISM_CHUNK_DROPPED, 0, 0, prism_enc_dropped(&b->e, &d));
}

static const prism_node *node_named(const prism_tree *t, const char *path0, const char *path1)
{
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        if (strcmp(n->name, path1 ? path1 : path0))
            continue;
        if (!path1 && n->parent == PRISM_NO_NODE)
            return n;
        if (path1 && n->parent != PRISM_NO_NODE && !strcmp(t->nodes[n->parent].name, path0))
            return n;
    }
    return NULL;
}

/* As libcollect writes it: counts between REGIONS chunks, at the depth the
 * stream has there. */
static void test_unrecorded_under_their_region(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 3, 1);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "worker");
    for (uint32_t st = 1; st <= 2; st++) {
        uint64_t t = 1000 * st;
        pb_enter(&b, st, t, N_OUTER);
        pb_enter(&b, st, t + 100, N_MIDDLE);
        pb_unrecorded(&b, st, t + 200, 2, 3);       /* under outer/middle */
        pb_exit(&b, st, t + 300);
        pb_unrecorded(&b, st, t + 350, 1, 2);       /* under outer */
        pb_unrecorded(&b, st, t + 360, 5, 7);       /* a depth it does not have */
        pb_exit(&b, st, t + 400);
        pb_unrecorded(&b, st, t + 500, 0, 4);       /* the thread's top level */
        t += 600;
        pb_leaf(&b, st, &t, N_OTHER, 50);
        pb_dropped(&b, st, 2 * 16, true, 16);
    }
    loaded l = pb_load(&b);
    const prism_tree *t = prism_analysis_tree(l.a);
    const prism_node *outer = node_named(t, "outer", NULL);
    const prism_node *middle = node_named(t, "outer", "middle");
    const prism_node *other = node_named(t, "other", NULL);
    assert_non_null(outer);
    assert_non_null(middle);
    assert_non_null(other);
    assert_int_equal(middle->unrecorded, 2 * 3);
    assert_int_equal(outer->unrecorded, 2 * (3 + 2));     /* its children's included */
    assert_int_equal(other->unrecorded, 0);
    assert_int_equal(outer->calls, 2);                    /* recorded calls only */
    for (size_t i = 0; i < prism_analysis_thread_count(l.a); i++) {
        const prism_tree *tt = prism_analysis_thread_tree(l.a, i, NULL, NULL);
        assert_int_equal(node_named(tt, "outer", NULL)->unrecorded, 3 + 2);
        assert_int_equal(node_named(tt, "outer", "middle")->unrecorded, 3);
    }
    bool whole = false;
    uint64_t placed = 0;
    assert_int_equal(prism_analysis_dropped_regions(l.a, &whole, &placed), 2 * 16);
    assert_true(whole);
    assert_int_equal(placed, 2 * 5);
    assert_int_equal(prism_analysis_dropped(l.a), 2 * 32);
    const prism_bottleneck *f = pb_finding(l.a, PRISM_BN_DROPPED_EVENTS);
    assert_non_null(f);
    assert_non_null(strstr(f->description, "32 whole regions not recorded"));
    assert_non_null(strstr(f->description, "the call tree is intact"));
    assert_non_null(strstr(f->evidence, "whole regions: 32"));
    assert_non_null(strstr(f->evidence, "10 counted under their parent"));
    assert_null(strstr(f->evidence, "may be wrong"));
    unload(&l);
}

/* A writer before 1.1 dropped single enters and exits: the finding says
 * the nesting may be wrong, and no region count is made up. */
static void test_single_events_dropped(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 3, 2);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "worker");
    uint64_t t = 1000;
    pb_leaf(&b, 1, &t, N_OUTER, 100);
    pb_leaf(&b, 2, &t, N_OUTER, 100);
    pb_dropped(&b, 1, 8, true, 4);                  /* a 1.1 writer's thread */
    pb_dropped(&b, 2, 5, false, 0);                 /* and an older one's */
    loaded l = pb_load(&b);
    bool whole = true;
    uint64_t placed = 7;
    assert_int_equal(prism_analysis_dropped_regions(l.a, &whole, &placed), 4);
    assert_false(whole);
    assert_int_equal(placed, 0);
    assert_int_equal(prism_analysis_dropped(l.a), 13);
    const prism_bottleneck *f = pb_finding(l.a, PRISM_BN_DROPPED_EVENTS);
    assert_non_null(f);
    assert_null(strstr(f->description, "intact"));
    assert_non_null(strstr(f->evidence, "single CPU events were dropped"));
    unload(&l);
}

/* Counts only, no drops: nothing to say. */
static void test_no_drops(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 3, 3);
    pb_thread(&b, 1, "main");
    uint64_t t = 1000;
    pb_leaf(&b, 1, &t, N_OUTER, 100);
    pb_dropped(&b, 1, 0, true, 0);
    loaded l = pb_load(&b);
    bool whole = false;
    assert_int_equal(prism_analysis_dropped_regions(l.a, &whole, NULL), 0);
    assert_true(whole);
    assert_null(pb_finding(l.a, PRISM_BN_DROPPED_EVENTS));
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unrecorded_under_their_region),
        cmocka_unit_test(test_single_events_dropped),
        cmocka_unit_test(test_no_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
