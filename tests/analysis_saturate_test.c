/*
 * analysis_saturate_test.c - sums past 2^64 ns (issue 16): step durations,
 * region totals on three threads and operation totals saturate at
 * 2^64-1 instead of wrapping (one thread cannot get there: its regions
 * lie within its span), the verdicts' denominator stays convertible
 * to an integer, and `analyze` prints "saturated (> 584 years)" instead of
 * a figure of ~1.8e13 ms (or 0.000 ms after a wrap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "pbuild.h"
#include "report.h"

static const char *const names[] = { "work" };
#define HUGE_NS (UINT64_MAX - 16)

/* analyze's text report of l. The caller frees. */
static char *analyze_text(const loaded *l)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    analyze_write_txt(m, "sat.cbor", l->a);
    assert_int_equal(fclose(m), 0);
    return buf;
}

/* The JSON report too: its integer conversions must stay defined (the
 * sanitizer build checks). */
static void analyze_json_ok(const loaded *l)
{
    FILE *m = fopen("/dev/null", "w");
    assert_non_null(m);
    assert_true(analyze_write_json(m, "sat.cbor", l->a));
    fclose(m);
}

/* Two sampled steps of ~2^64 ns each. */
static void test_step_total_saturates(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 1, 1);
    pb_thread(&b, 1, "main");
    prism_step s1 = { 1, HUGE_NS, 0, 1, PRISM_STEP_SAMPLED };
    prism_step s2 = { 2, HUGE_NS + 1, 1, 1, PRISM_STEP_SAMPLED };
    pb_step(&b, &s1);
    pb_step(&b, &s2);
    loaded l = pb_load(&b);
    const prism_step_stats *st = prism_analysis_steps(l.a);
    assert_int_equal(st->count, 2);
    assert_true(st->total_ns == UINT64_MAX);
    uint64_t n = 0;
    double denom = prism_analysis_step_denominator(l.a, &n);
    assert_int_equal(n, 2);
    assert_true(denom > 1e19 && denom < 18446744073709551616.0);
    char *txt = analyze_text(&l);
    assert_non_null(strstr(txt, "Total time: saturated (> 584 years, "));
    assert_null(strstr(txt, "e+13"));
    free(txt);
    analyze_json_ok(&l);
    unload(&l);
}

/* A region of ~2^64 ns on each of three threads: the all-threads tree, its
 * node and the operation saturate. */
static void test_region_total_saturates(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 1, 2);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "worker");
    pb_thread(&b, 3, "loader");
    for (uint32_t s = 1; s <= 3; s++) {
        pb_enter(&b, s, 1, 1);
        pb_exit(&b, s, HUGE_NS);
    }
    loaded l = pb_load(&b);
    const prism_tree *t = prism_analysis_tree(l.a);
    assert_true(t->total_ns == UINT64_MAX);
    assert_true(t->first_root != PRISM_NO_NODE);
    assert_true(t->nodes[t->first_root].total_ns == UINT64_MAX);
    size_t nops = 0;
    const prism_op *ops = prism_analysis_ops(l.a, &nops);
    assert_int_equal(nops, 1);
    assert_true(ops[0].total_ns == UINT64_MAX);
    assert_true(ops[0].share <= 1.0);
    char *txt = analyze_text(&l);
    assert_non_null(strstr(txt, "Total time: saturated (> 584 years, "));
    free(txt);
    analyze_json_ok(&l);
    unload(&l);
}

/* A region of ~2^64 ns inside a step: its per-step mean times the steps
 * seen rounds to 2^64 in a double, whose conversion to an integer the
 * compare fuzzer (clang UBSan) found undefined; it saturates. */
static void test_region_in_step_saturates(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 1, 3);
    pb_thread(&b, 1, "main");
    const uint64_t half = UINT64_MAX / 2;
    pb_enter(&b, 1, 1, 1);
    pb_exit(&b, 1, half);
    pb_enter(&b, 1, half + 2, 1);
    pb_exit(&b, 1, HUGE_NS);
    prism_step s1 = { 1, half + 1, 0, 1, PRISM_STEP_SAMPLED };
    prism_step s2 = { half + 1, HUGE_NS + 1, 1, 1, PRISM_STEP_SAMPLED };
    pb_step(&b, &s1);
    pb_step(&b, &s2);
    loaded l = pb_load(&b);
    const prism_tree *t = prism_analysis_tree(l.a);
    assert_true(t->first_root != PRISM_NO_NODE);
    const prism_node *n = &t->nodes[t->first_root];
    assert_int_equal(n->steps_seen, 2);
    assert_true(n->in_step_ns >= HUGE_NS - 4096);
    analyze_json_ok(&l);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_total_saturates),
        cmocka_unit_test(test_region_total_saturates),
        cmocka_unit_test(test_region_in_step_saturates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
