/*
 * analysis_eval_test.c - prism.torch's eval passes as the analysis and the
 * reports see them (INFO torch.eval.passes / torch.eval.span_ns): the
 * passes' whole time beside what the `eval` region holds (their forwards,
 * batches and sync calls only: a user's trial read "Outside steps: 'eval'
 * 92 ms" for passes of 290 ms by its own clock), in prism_analysis_outside,
 * the text and the JSON; nothing said without the facts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbuild.h"
#include "report_text.h"

static const char *const names[] = { "Net.forward", "eval" };

#define MS 1000000ull

/* 10 steps of 10 ms (Net.forward 8 ms each), then an eval pass of 60 ms
 * whose eval region calls (3 of 5 ms) hold 15 ms, then 10 more steps;
 * said: INFO torch.eval.* of that pass. */
static loaded profile(bool said)
{
    pbuild b;
    pb_init(&b, names, 2, 1);
    pb_thread(&b, 1, "MainThread");
    pb_info_uint(&b, "steps.thread", 1);
    uint64_t t = MS;
    for (uint64_t k = 0; k < 20; k++) {
        if (k == 10) {
            for (int i = 0; i < 3; i++) {
                pb_enter(&b, 1, t + (uint64_t)i * 20 * MS, 2);
                pb_exit(&b, 1, t + (uint64_t)i * 20 * MS + 5 * MS);
            }
            t += 60 * MS;
            if (said) {
                pb_info_uint(&b, "torch.eval.passes", 1);
                pb_info_uint(&b, "torch.eval.span_ns", 45 * MS);
            }
        }
        pb_enter(&b, 1, t, 1);
        pb_exit(&b, 1, t + 8 * MS);
        prism_step st = { t, t + 10 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        t += 10 * MS;
    }
    return pb_load(&b);
}

static void test_passes_said(void **state)
{
    (void)state;
    loaded l = profile(true);
    prism_outside o;
    assert_true(prism_analysis_outside(l.a, &o));
    assert_int_equal(o.eval_passes, 1);
    assert_int_equal(o.eval_span_ns, 45 * MS);
    char *t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  Outside steps: 'eval' 15.00 ms\n"));
    assert_non_null(strstr(t, "  Eval passes: 1, 45.00 ms from each one's first forward or batch "
                              "to the end of its last ('eval' holds their forwards, batches and "
                              "sync calls, 15.00 ms; the rest is the program's own code between "
                              "them)\n"));
    free(t);
    char *j = report_text_of(l.a, true);
    assert_non_null(strstr(j, "\"eval_passes\": 1,"));
    assert_non_null(strstr(j, "\"eval_span_ns\": 45000000"));
    free(j);
    unload(&l);
}

static void test_nothing_without_the_facts(void **state)
{
    (void)state;
    loaded l = profile(false);
    prism_outside o;
    assert_true(prism_analysis_outside(l.a, &o));
    assert_int_equal(o.eval_passes, 0);
    assert_int_equal(o.eval_span_ns, 0);
    char *t = report_text_of(l.a, false);
    assert_null(strstr(t, "Eval passes"));
    free(t);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passes_said),
        cmocka_unit_test(test_nothing_without_the_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
