/*
 * analysis_hostile_test.c - tiny hostile profiles that once cost CPU or
 * gave absurd figures (issue 16), through the real reader and analysis:
 * a finish after a whole file (null pointer offset, seen by clang's UBSan),
 * a sequence number of 2^64-1, dropped totals of 2^64-1 on several streams,
 * REGIONS chunks claiming depth 2^32-1, steps and memory samples in
 * reverse order.  The costly ones run under a watchdog (alarm): a hang
 * guard, not a timing assertion; the counts checked are exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prism/analysis.h"
#include "hostile.h"
#include "../analysis/internal.h"

static const char *const names[] = { "work" };

/* A whole file fed at once, then finish (no bytes kept: no buffer at all),
 * and an empty feed before it: no offset is applied to a null pointer. */
static void test_finish_after_whole_file(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 1, 1);
    pb_thread(&b, 1, "main");
    pb_enter(&b, 1, 1000, 1);
    pb_exit(&b, 1, 2000);
    pb_flush(&b);
    prism_reader *r = prism_reader_new(NULL, NULL);
    assert_non_null(r);
    assert_int_equal(prism_reader_feed(r, b.data, b.len), PRISM_OK);
    assert_int_equal(prism_reader_feed(r, NULL, 0), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_int_equal(prism_reader_stats_get(r)->damaged, 0);
    prism_reader_free(r);
    free(b.data);
}

/* seq 2^64-1 on a stream expecting 1: damage, not 2^64-2 missing chunks;
 * a real gap after it still counts. */
static void test_seq_implausible(void **state)
{
    (void)state;
    pbuild b;
    hostile_seq_max(&b, names);
    pb_flush(&b);
    b.seq[1] = 4;                       /* 1, 2, 3 missing */
    pb_enter(&b, 1, 5000, 1);
    pb_exit(&b, 1, 6000);
    loaded l = pb_load(&b);
    const prism_reader_stats *st = prism_reader_stats_get(l.r);
    assert_int_equal(st->seq_gaps, 3);
    assert_int_equal(st->damaged, 1);
    unload(&l);
}

/* Dropped totals of 2^64-1 on two streams saturate instead of wrapping. */
static void test_dropped_saturates(void **state)
{
    (void)state;
    pbuild b;
    hostile_dropped(&b, names);
    for (uint32_t s = 1; s <= 2; s++) {         /* GPU records dropped, twice 2^64-1 */
        prism_dropped d = { .stream = s, .source = PRISM_SOURCE_GPU, .total = UINT64_MAX };
        PB_PUT(&b, PRISM_CHUNK_DROPPED, 0, 0, prism_enc_dropped(&b.e, &d));
    }
    loaded l = pb_load(&b);
    assert_true(prism_analysis_dropped(l.a) == UINT64_MAX);
    assert_true(prism_analysis_dropped_regions(l.a, NULL, NULL) == UINT64_MAX);
    assert_true(prism_analysis_gpu(l.a)->dropped == UINT64_MAX);
    unload(&l);
}

/* REGIONS chunks alternating depth 2^32-2 and 0: each used to push or pop
 * one frame at a time to that depth (seconds per chunk); now counted as
 * damage, and the region after them is still read right. */
static void test_depth_bounded(void **state)
{
    (void)state;
    enum { CHUNKS = 64 };
    pbuild b;
    hostile_depth(&b, names, CHUNKS);
    alarm(30);                          /* watchdog: seconds per chunk before */
    loaded l = pb_load(&b);
    alarm(0);
    assert_int_equal(l.a->depth_damaged, CHUNKS / 2);
    unload(&l);
}

/* 400k steps and memory samples in reverse order: appended and sorted
 * lazily (was one insertion each, quadratic); the figures are those of the
 * same steps in order. */
static loaded steps(bool reversed, size_t n)
{
    pbuild b;
    hostile_steps(&b, names, n, reversed);
    return pb_load(&b);
}

static void test_steps_reversed(void **state)
{
    (void)state;
    enum { N = 400000 };
    alarm(60);                          /* watchdog: minutes before */
    loaded f = steps(false, N), r = steps(true, N);
    alarm(0);
    const prism_step_stats *a = prism_analysis_steps(f.a), *b = prism_analysis_steps(r.a);
    assert_int_equal(a->count, N);
    assert_int_equal(b->count, N);
    assert_true(a->total_ns == b->total_ns);
    assert_true(a->p50_ns == b->p50_ns && a->p95_ns == b->p95_ns && a->max_ns == b->max_ns);
    assert_int_equal(a->sampled, b->sampled);
    for (size_t i = 1; i < N; i++)
        assert_true(b->series[i - 1].start < b->series[i].start);
    const prism_memory_stats *ma = prism_analysis_memory(f.a), *mb = prism_analysis_memory(r.a);
    assert_int_equal(mb->count, N);
    for (size_t i = 0; i < N; i++)
        assert_true(ma->samples[i].ts == mb->samples[i].ts &&
                    ma->samples[i].rss == mb->samples[i].rss);
    unload(&f);
    unload(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finish_after_whole_file),
        cmocka_unit_test(test_seq_implausible),
        cmocka_unit_test(test_dropped_saturates),
        cmocka_unit_test(test_depth_bounded),
        cmocka_unit_test(test_steps_reversed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
