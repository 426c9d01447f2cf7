/*
 * analysis_slow_test.c - prism_analysis_slow_steps (analysis/getters.c
 * over rules_steps.c): the step indices of the slow steps, every one in
 * step order, exactly the steps the slow_steps finding counts and whose
 * first six its evidence lists; none where the finding does not apply.
 * Profiles hand-placed with the format's encoder: the truth is the steps'
 * own durations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pbuild.h"

static const char *names[] = { "fwd" };

#define MS 1000000ull

/* n steps of 10 ms (+-0.2 ms, deterministic), numbered from first; the
 * steps at positions slow[0..nslow) take `slow_ms` instead.  Each holds a
 * region "fwd" of 6 ms on the training thread. */
static loaded build(size_t n, uint64_t first, const size_t *slow, size_t nslow, uint64_t slow_ms)
{
    pbuild b;
    pb_init(&b, names, 1, 7);
    pb_thread(&b, 1, "main");
    pb_info_uint(&b, "steps.thread", 1);
    uint64_t t = 10 * MS;
    for (size_t k = 0; k < n; k++) {
        uint64_t d = 10 * MS - 200000 + (k * 7919 % 400000);
        for (size_t i = 0; i < nslow; i++)
            if (slow[i] == k)
                d = slow_ms * MS;
        pb_enter(&b, 1, t + MS, 1);
        pb_exit(&b, 1, t + 7 * MS);
        prism_step st = { t, t + d, first + k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        t += d + 100000;
    }
    return pb_load(&b);
}

static const prism_bottleneck *finding(const prism_analysis *a)
{
    return pb_finding(a, PRISM_BN_SLOW_STEPS);
}

/* The getter gives want[0..k) (step indices), the finding names them. */
static void expect_slow(const prism_analysis *a, const uint64_t *want, size_t k, const char *listed)
{
    const uint64_t *idx = NULL;
    size_t n = 99;
    prism_analysis_slow_steps(a, &idx, &n);
    assert_int_equal(n, k);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(idx[i], want[i]);
    const prism_bottleneck *b = finding(a);
    assert_non_null(b);
    if (!strstr(b->evidence, listed))
        fail_msg("evidence '%s' does not list '%s'", b->evidence, listed);
    char count[64];
    snprintf(count, sizeof count, "%zu of ", k);
    assert_non_null(strstr(b->description, count));
}

static void expect_none(const prism_analysis *a)
{
    const uint64_t *idx = (const uint64_t *)1;
    size_t n = 99;
    prism_analysis_slow_steps(a, &idx, &n);
    assert_int_equal(n, 0);
    assert_null(idx);
    assert_null(finding(a));
}

/* Four slow steps at uneven places, two of them neighbours. */
static void test_uneven(void **state)
{
    (void)state;
    static const size_t pos[] = { 35, 7, 21, 22 };
    loaded l = build(40, 0, pos, 4, 40);
    static const uint64_t want[] = { 7, 21, 22, 35 };
    expect_slow(l.a, want, 4, "steps 7, 21, 22, 35");
    unload(&l);
}

/* Every 10th step, numbered from 100: step indices, not positions. */
static void test_every_tenth(void **state)
{
    (void)state;
    static const size_t pos[] = { 9, 19, 29, 39 };
    loaded l = build(40, 100, pos, 4, 30);
    static const uint64_t want[] = { 109, 119, 129, 139 };
    expect_slow(l.a, want, 4, "every 10 steps (steps 109, 119, 129, 139)");
    unload(&l);
}

/* Eight slow steps of 48: the getter has all eight, the evidence the
 * first six. */
static void test_more_than_six(void **state)
{
    (void)state;
    static const size_t pos[] = { 3, 5, 11, 17, 23, 30, 41, 46 };
    loaded l = build(48, 0, pos, 8, 25);
    static const uint64_t want[] = { 3, 5, 11, 17, 23, 30, 41, 46 };
    expect_slow(l.a, want, 8, "steps 3, 5, 11, 17, 23, 30, ...");
    unload(&l);
}

/* None where the finding does not apply: even steps; a step just under
 * the threshold (median + half the median); slow steps more than a
 * quarter of all (a second regime); fewer than 8 steps. */
static void test_none(void **state)
{
    (void)state;
    loaded l = build(40, 0, NULL, 0, 0);
    expect_none(l.a);
    unload(&l);
    static const size_t one[] = { 12 };
    l = build(40, 0, one, 1, 14);
    expect_none(l.a);
    unload(&l);
    static const size_t many[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    l = build(40, 0, many, 11, 40);
    expect_none(l.a);
    unload(&l);
    static const size_t few[] = { 3 };
    l = build(7, 0, few, 1, 80);
    expect_none(l.a);
    unload(&l);
}

/* The first step, numbered 0, is the process's warm-up: never a slow step.
 * Alone it makes no finding; beside others the finding says it left it
 * out.  Numbered from 100 (a trace that began later) it counts. */
static void test_warmup_left_out(void **state)
{
    (void)state;
    static const size_t first[] = { 0 };
    loaded l = build(40, 0, first, 1, 60);
    expect_none(l.a);
    unload(&l);
    static const size_t with[] = { 0, 13, 27 };
    l = build(40, 0, with, 3, 60);
    static const uint64_t want[] = { 13, 27 };
    expect_slow(l.a, want, 2, "steps 13, 27;");
    assert_non_null(strstr(finding(l.a)->description,
                           "Slow steps: 2 of 40 steps (after the warm-up step 0) take "));
    unload(&l);
    l = build(40, 100, first, 1, 60);
    static const uint64_t later[] = { 100 };
    expect_slow(l.a, later, 1, "steps 100;");
    assert_null(strstr(finding(l.a)->description, "warm-up"));
    unload(&l);
}

/* One slow step far slower than the others is named: a mean of +105 ms
 * would hide a step of +200 ms beside one of +10. */
static void test_slowest_named(void **state)
{
    (void)state;
    static const size_t pos[] = { 11, 30 };
    static const size_t d[] = { 20, 210 };
    pbuild b;
    pb_init(&b, names, 1, 7);
    pb_thread(&b, 1, "main");
    pb_info_uint(&b, "steps.thread", 1);
    uint64_t t = 10 * MS;
    for (size_t k = 0; k < 40; k++) {
        uint64_t dur = 10 * MS - 200000 + (k * 7919 % 400000);
        for (size_t i = 0; i < 2; i++)
            if (pos[i] == k)
                dur = d[i] * MS;
        pb_enter(&b, 1, t + MS, 1);
        pb_exit(&b, 1, t + 7 * MS);
        prism_step st = { t, t + dur, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        t += dur + 100000;
    }
    loaded l = pb_load(&b);
    static const uint64_t want[] = { 11, 30 };
    expect_slow(l.a, want, 2, "each on average, step 30 +200.");
    unload(&l);
    l = build(40, 0, pos, 2, 60);           /* alike: no step named */
    expect_slow(l.a, want, 2, "+50.");
    assert_null(strstr(finding(l.a)->evidence, "on average"));
    unload(&l);
}

/* A region that runs only in the slow steps (a checkpoint every tenth
 * step, an eval pass once) holds their excess: named, its mean over every
 * step (0 where it did not run) against its slowest step; a region run
 * once in the warm-up step 0 (a first compile) is not blamed for later
 * slow steps. */
static void test_region_only_in_slow_steps(void **state)
{
    (void)state;
    static const char *nm[] = { "fwd", "save_checkpoint", "compile" };
    for (int once = 0; once < 2; once++) {
        pbuild b;
        pb_init(&b, nm, 3, 7);
        pb_thread(&b, 1, "main");
        pb_info_uint(&b, "steps.thread", 1);
        uint64_t t = 10 * MS;
        for (size_t k = 0; k < 40; k++) {
            uint64_t dur = 10 * MS - 200000 + (k * 7919 % 400000);
            bool ckpt = once ? k == 23 : k % 10 == 9;
            pb_enter(&b, 1, t + MS, 1);
            pb_exit(&b, 1, t + 7 * MS);
            if (k == 0) {                   /* warm-up: 300 ms compiling */
                pb_enter(&b, 1, t + 7 * MS, 3);
                pb_exit(&b, 1, t + 307 * MS);
                dur = 310 * MS;
            }
            if (ckpt) {                     /* 80 ms saving */
                pb_enter(&b, 1, t + 8 * MS, 2);
                pb_exit(&b, 1, t + 88 * MS);
                dur = 90 * MS;
            }
            prism_step st = { t, t + dur, k, 0, PRISM_STEP_SAMPLED };
            pb_step(&b, &st);
            t += dur + 100000;
        }
        loaded l = pb_load(&b);
        const prism_bottleneck *f = finding(l.a);
        assert_non_null(f);
        if (!strstr(f->evidence, "'save_checkpoint' holds it: 80.0 ms in its slowest step"))
            fail_msg("evidence: %s", f->evidence);
        assert_null(strstr(f->evidence, "compile"));
        assert_non_null(strstr(f->description, "(after the warm-up step 0)"));
        assert_null(strstr(f->recommendation, "add a region around it"));
        const prism_tree *all = prism_analysis_tree(l.a);
        assert_string_equal(all->nodes[f->node].name, "save_checkpoint");
        unload(&l);
    }
}

/* Step statistics are kept from one refresh to the next (series.c): a
 * profile fed in pieces with a refresh after each, its steps arriving in
 * and out of order (blocks written late start before steps already
 * counted; indexes repeat), ends with exactly what one read of the whole
 * file gives: every step figure, the slow steps and the finding. */
static void test_refreshed_in_pieces(void **state)
{
    (void)state;
    enum { N = 1500 };
    pbuild b;
    pb_init(&b, names, 1, 9);
    pb_thread(&b, 1, "main");
    pb_info_uint(&b, "steps.thread", 1);
    prism_step *st = malloc(N * sizeof *st);
    assert_non_null(st);
    uint64_t t = 10 * MS;
    for (size_t k = 0; k < N; k++) {
        uint64_t d = 10 * MS - 300000 + (k * 7919 % 600000);
        if (k % 101 == 17)
            d = 80 * MS;                /* slow */
        if (k % 211 == 5)
            d = 0;                      /* zero length */
        st[k] = (prism_step){ t, t + d, k % 700 == 3 ? k - 1 : k, 0,
                              k % 3 ? PRISM_STEP_SAMPLED : 0 };
        t += d + 100000 - (k % 13 == 0 ? 300000 : 0);   /* some overlap */
    }
    for (size_t k = 0; k < N; k += 50) {        /* blocks of 50, some late */
        size_t blk = (k / 50) % 7 == 3 && k + 100 < N ? k + 50 : (k / 50) % 7 == 4 ? k - 50 : k;
        for (size_t i = blk; i < blk + 50; i++)
            pb_step(&b, &st[i]);
        pb_flush(&b);
    }
    free(st);
    pb_flush(&b);
    loaded whole = pb_load_with(&b, NULL, true);
    loaded part = pb_load_in_pieces(&b, 97, 3, 4093, 61);
    free(b.data);
    const prism_step_stats *x = prism_analysis_steps(whole.a), *y = prism_analysis_steps(part.a);
    assert_int_equal(x->count, N);
    assert_int_equal(y->count, x->count);
    assert_int_equal(y->timed, x->timed);
    assert_int_equal(y->sampled, x->sampled);
    assert_int_equal(y->zero_len, x->zero_len);
    assert_int_equal(y->overlapping, x->overlapping);
    assert_int_equal(y->dup_index, x->dup_index);
    assert_true(x->dup_index > 0);
    assert_int_equal(y->total_ns, x->total_ns);
    assert_true(y->p50_ns == x->p50_ns && y->p95_ns == x->p95_ns && y->max_ns == x->max_ns);
    assert_true(fabs(y->mean_ns - x->mean_ns) <= 1e-9 * x->mean_ns);
    assert_true(fabs(y->std_ns - x->std_ns) <= 1e-9 * x->std_ns);
    assert_true(x->max_ns == 80.0 * MS);
    const uint64_t *ix, *iy;
    size_t nx, ny;
    prism_analysis_slow_steps(whole.a, &ix, &nx);
    prism_analysis_slow_steps(part.a, &iy, &ny);
    assert_true(nx > 10);
    assert_int_equal(ny, nx);
    for (size_t i = 0; i < nx; i++)
        assert_int_equal(iy[i], ix[i]);
    const prism_bottleneck *fx = finding(whole.a), *fy = finding(part.a);
    assert_non_null(fx);
    assert_non_null(fy);
    assert_string_equal(fy->description, fx->description);
    assert_string_equal(fy->evidence, fx->evidence);
    unload(&whole);
    unload(&part);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uneven),
        cmocka_unit_test(test_every_tenth),
        cmocka_unit_test(test_more_than_six),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_warmup_left_out),
        cmocka_unit_test(test_slowest_named),
        cmocka_unit_test(test_region_only_in_slow_steps),
        cmocka_unit_test(test_refreshed_in_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
