/*
 * collect_clock_test.c - the session clock (libcollect/clock.c): ticks
 * become ns by a segment table that refinements only extend, so
 *
 *   - a tick converts to the same ns before and after any refinement (a
 *     step start queued for long and a region flushed early agree);
 *   - the mapping is monotone and continuous across segment starts;
 *   - segments are added at doubling spans and the table never overflows;
 *   - a refinement follows the run-long ratio and bounds its nudge, which
 *     only speeds the mapping up (never slowed: no interval short).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "../libcollect/internal.h"

static void fresh(session *s, double ratio)
{
    memset(s, 0, sizeof *s);
    s->t0_ticks = 1000000;
    s->t0_mono = 5000000000u;
    s->ns_per_tick = ratio;
    pc_clock_segments_reset(s);
}

/* monotonic ns at tick t for a clock whose true ratio is `truth` */
static uint64_t mono_at(const session *s, uint64_t t, double truth)
{
    return s->t0_mono + (uint64_t)((double)(t - s->t0_ticks) * truth);
}

static void test_ticks_convert_once(void **state)
{
    (void)state;
    session s;
    fresh(&s, 0.3330);                          /* first estimate, a bit off */
    const double truth = 0.3333;
    uint64_t probe[64];
    uint64_t before[64];
    size_t np = 0;
    uint64_t t = s.t0_ticks;
    for (int round = 0; round < 40; round++) {
        t += 150000000u + (uint64_t)round * 40000000u;   /* ~50 ms and more */
        probe[np] = t - 12345;
        before[np] = pc_clock_ns(&s, probe[np]);
        np++;
        pc_clock_segment_add(&s, t, mono_at(&s, t, truth));
        for (size_t i = 0; i < np; i++)
            assert_int_equal(pc_clock_ns(&s, probe[i]), before[i]);
    }
    uint32_t n = atomic_load(&s.nsegs);
    assert_true(n > 1 && n <= CLOCK_SEGS);
    /* the run-long ratio was learnt */
    assert_true(s.ns_per_tick > 0.33329 && s.ns_per_tick < 0.33331);
}

static void test_monotone_continuous(void **state)
{
    (void)state;
    session s;
    fresh(&s, 0.5);
    uint64_t t = s.t0_ticks;
    for (int i = 0; i < 30; i++) {                      /* a ratio that wanders */
        t += 200000000u << (i / 3);
        pc_clock_segment_add(&s, t, mono_at(&s, t, i % 2 ? 0.49 : 0.51));
    }
    uint32_t n = atomic_load(&s.nsegs);
    assert_true(n > 3);
    for (uint32_t k = 1; k < n; k++) {
        uint64_t at = s.segs[k].ticks;
        uint64_t a = pc_clock_ns(&s, at - 1), b = pc_clock_ns(&s, at), c = pc_clock_ns(&s, at + 1);
        assert_true(a <= b && b <= c);
        assert_true(b - a <= 1 && c - b <= 1);          /* ~0.5 ns per tick */
    }
    uint64_t prev = 0;
    for (uint64_t x = s.t0_ticks; x < t; x += 7777777u) {
        uint64_t ns = pc_clock_ns(&s, x);
        assert_true(ns >= prev);
        prev = ns;
    }
    assert_int_equal(pc_clock_ns(&s, s.t0_ticks - 5), 0);
}

static void test_doubling_and_bounds(void **state)
{
    (void)state;
    session s;
    fresh(&s, 1.0);
    /* too soon: nothing before 50 ms */
    pc_clock_segment_add(&s, s.t0_ticks + 10000000u, s.t0_mono + 10000000u);
    assert_int_equal(atomic_load(&s.nsegs), 1);
    pc_clock_segment_add(&s, s.t0_ticks + 60000000u, s.t0_mono + 60000000u);
    assert_int_equal(atomic_load(&s.nsegs), 2);
    /* the next needs twice the previous span (60 ms -> 120 ms more) */
    pc_clock_segment_add(&s, s.t0_ticks + 150000000u, s.t0_mono + 150000000u);
    assert_int_equal(atomic_load(&s.nsegs), 2);
    pc_clock_segment_add(&s, s.t0_ticks + 190000000u, s.t0_mono + 190000000u);
    assert_int_equal(atomic_load(&s.nsegs), 3);
    /* a monotonic jump of a second cannot bend time by more than 1e-4 */
    uint64_t t = s.t0_ticks + 1000000000u;
    pc_clock_segment_add(&s, t, s.t0_mono + 2000000000u);
    uint32_t n = atomic_load(&s.nsegs);
    assert_int_equal(n, 4);
    double r = s.segs[n - 1].ns_per_tick;
    assert_true(r <= s.ns_per_tick * (1 + 1.0001e-4) && r >= s.ns_per_tick * (1 - 1.0001e-4));
    /* the table never overflows */
    for (int i = 0; i < 200; i++) {
        t += (uint64_t)1 << 40;
        pc_clock_segment_add(&s, t, mono_at(&s, t, 1.0));
    }
    assert_true(atomic_load(&s.nsegs) <= CLOCK_SEGS);
}

/* No segment table (a zeroed session): the plain ratio, as before. */
static void test_without_segments(void **state)
{
    (void)state;
    session s;
    memset(&s, 0, sizeof s);
    s.t0_ticks = 100;
    s.ns_per_tick = 2.0;
    assert_int_equal(pc_clock_ns(&s, 150), 100);
    assert_int_equal(pc_clock_ns(&s, 50), 0);
}

/* A first estimate too fast (the mapping runs ahead of CLOCK_MONOTONIC):
 * the next segment takes the run-long ratio, never a slower one, so no
 * interval converts shorter than the truth; one too slow is nudged up. */
static void test_never_slowed(void **state)
{
    (void)state;
    session s;
    fresh(&s, 1.001);                   /* truth 1.0: the mapping gains 1e-3 */
    uint64_t t = s.t0_ticks + 60000000u;
    pc_clock_segment_add(&s, t, mono_at(&s, t, 1.0));
    assert_int_equal(atomic_load(&s.nsegs), 2);
    assert_true(s.segs[1].ns_per_tick >= 1.0);
    uint64_t a = pc_clock_ns(&s, t + 1000), b = pc_clock_ns(&s, t + 10001000u);
    assert_true(b - a >= 10000000u);    /* 10 ms of ticks: 10 ms or more */
    fresh(&s, 0.999);                   /* behind: caught up from above */
    pc_clock_segment_add(&s, t, mono_at(&s, t, 1.0));
    assert_true(s.segs[1].ns_per_tick > 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticks_convert_once),
        cmocka_unit_test(test_monotone_continuous),
        cmocka_unit_test(test_doubling_and_bounds),
        cmocka_unit_test(test_without_segments),
        cmocka_unit_test(test_never_slowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
