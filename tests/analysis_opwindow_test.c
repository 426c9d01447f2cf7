/*
 * analysis_opwindow_test.c - the operator window as the analysis and the
 * reports see it (issue 35), on built profiles: steps flagged
 * PRISM_STEP_OPS are counted but not timed, nor shared out by the rules
 * (their regions' time is no step time), and never slow_steps; names
 * read "ns::op [shapes] dtype" are operators only in a profile with such
 * steps (prism_analysis_is_op); the Operator window section and the JSON
 * op_window: FLOPs a step from the operators' work counters, the dtype
 * holding most of them, the MFU against PRISM's table for the device
 * (INFO torch.device) or against INFO torch.peak_tflops, and no MFU for a
 * device or dtype the table lacks; a hostile device name is escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbuild.h"
#include "report_text.h"

static const char *const names[] = {
    "Net.forward", "aten::mm [64x32, 32x64] bf16", "flops", "aten::relu [64x64] f32",
};

#define MS 1000000ull

/* 10 steps of 10 ms (steps 4 and 5: 30 ms, in the window, with the two
 * operators inside the forward: the mm 2 ms and 2 MFLOP, the relu 1 ms
 * and 1 kFLOP).  device / peak: INFO torch.device / torch.peak_tflops
 * (NULL: none). */
static loaded profile(pbuild *b, const char *device, const char *peak)
{
    pb_init(b, names, 4, 1);
    pb_thread(b, 1, "MainThread");
    pb_info_uint(b, "steps.thread", 1);
    if (device)
        pb_info_text(b, "torch.device", device);
    if (peak)
        pb_info_text(b, "torch.peak_tflops", peak);
    uint64_t t0 = MS;
    for (uint64_t k = 0; k < 10; k++) {
        bool w = k == 4 || k == 5;
        uint64_t len = w ? 30 * MS : 10 * MS;
        pb_enter(b, 1, t0, 1);
        if (w) {
            pb_enter(b, 1, t0 + MS, 2);
            pb_counter(b, 1, t0 + 2 * MS, 3, 2e6);
            pb_exit(b, 1, t0 + 3 * MS);
            pb_enter(b, 1, t0 + 4 * MS, 4);
            pb_counter(b, 1, t0 + 4 * MS + 1000, 3, 1e3);
            pb_exit(b, 1, t0 + 5 * MS);
        }
        pb_exit(b, 1, t0 + len - MS);
        prism_step st = { t0, t0 + len, k, 0, PRISM_STEP_SAMPLED | (w ? PRISM_STEP_OPS : 0) };
        pb_step(b, &st);
        t0 += len;
    }
    return pb_load(b);
}

static void test_window_steps_not_timed(void **state)
{
    (void)state;
    pbuild b;
    loaded l = profile(&b, NULL, NULL);
    const prism_step_stats *st = prism_analysis_steps(l.a);
    assert_int_equal(st->count, 10);
    assert_int_equal(st->op_steps, 2);
    assert_int_equal(st->timed, 8);
    assert_true(st->max_ns == 10.0 * MS);           /* the 30 ms steps are not timed */
    assert_null(pb_finding(l.a, PRISM_BN_SLOW_STEPS));
    assert_true(prism_analysis_is_op(l.a, "aten::mm [64x32, 32x64] bf16"));
    assert_true(prism_analysis_is_op(l.a, "c10d::allreduce_"));
    assert_false(prism_analysis_is_op(l.a, "Net.forward"));
    assert_false(prism_analysis_is_op(l.a, "Foo::bar"));       /* a C++ name */
    assert_false(prism_analysis_is_op(l.a, "aten::"));
    assert_false(prism_analysis_is_op(l.a, "aten::mm(x)"));
    char *t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  Steps: 10 (10 sampled; 2 in the operator window, left out of "
                              "the step times)\n"));
    assert_non_null(strstr(t, "Operator window: steps 4-5 (2 steps, left out of the step "
                              "times); 2 operators, every figure a window step's\n"));
    /* 2 MFLOP + 1 kFLOP a step over the 10 ms median */
    assert_non_null(strstr(t, "  FLOPs a step: 2 MFLOP, mostly bf16; achieved 200 MFLOP/s over "
                              "the median step (10.00 ms)\n"));
    assert_null(strstr(t, "MFU"));                  /* no device */
    assert_non_null(strstr(t, "aten::mm [64x32, 32x64] bf16\n"));
    /* the rules share out the timed steps only, as Total time counts them:
     * 8 steps, 80 ms, and the forward's 9 ms in each of them */
    uint64_t n = 0;
    assert_true(prism_analysis_step_denominator(l.a, &n) == 80.0 * MS);
    assert_int_equal(n, 8);
    assert_non_null(strstr(t, "  Total time: 80.00 ms"));
    assert_non_null(strstr(t, "(shares are of step time: 8 sampled steps, 80.00 ms"));
    const prism_tree *tr = prism_analysis_tree(l.a);
    for (size_t i = 0; i < tr->count; i++)
        if (!strcmp(tr->nodes[i].name, "Net.forward")) {
            assert_int_equal(tr->nodes[i].in_step_ns, 72 * MS);
            assert_int_equal(tr->nodes[i].steps_seen, 8);
        }
    free(t);
    unload(&l);
}

static void test_not_operators_without_window_steps(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 4, 1);
    pb_thread(&b, 1, "MainThread");
    pb_enter(&b, 1, MS, 2);
    pb_exit(&b, 1, 2 * MS);
    prism_step st = { MS, 3 * MS, 0, 0, PRISM_STEP_SAMPLED };
    pb_step(&b, &st);
    loaded l = pb_load(&b);
    assert_false(prism_analysis_is_op(l.a, "aten::mm [64x32, 32x64] bf16"));
    char *j = report_text_of(l.a, true);
    assert_non_null(strstr(j, "\"op_window\": null"));
    assert_null(strstr(j, "\"op_steps\""));
    free(j);
    unload(&l);
}

static void test_mfu_from_the_table(void **state)
{
    (void)state;
    pbuild b;
    loaded l = profile(&b, "NVIDIA H100 80GB HBM3", NULL);
    char *t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  MFU: 0.0% of 989.4 TFLOP/s (NVIDIA H100 80GB HBM3; peak from "
                              "PRISM's table: H100, bf16, dense)\n"));
    free(t);
    char *j = report_text_of(l.a, true);
    assert_non_null(strstr(j, "\"peak_tflops\": 989."));
    assert_non_null(strstr(j, "\"device\": \"NVIDIA H100 80GB HBM3\""));
    assert_null(strstr(j, "\"mfu\": null"));
    free(j);
    unload(&l);
    /* the PCIe card has its own line; a card the table lacks: no MFU */
    l = profile(&b, "NVIDIA H100 PCIe", NULL);
    t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "of 756 TFLOP/s (NVIDIA H100 PCIe; peak from PRISM's table: "
                              "H100 PCIe, bf16, dense)"));
    free(t);
    unload(&l);
    l = profile(&b, "Quantum Card 9000", NULL);
    t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  MFU: unknown (Quantum Card 9000 has no bf16 peak in PRISM's "
                              "table; set PRISM_PEAK_TFLOPS)\n"));
    free(t);
    j = report_text_of(l.a, true);
    assert_non_null(strstr(j, "\"mfu\": null"));
    free(j);
    unload(&l);
}

static void test_peak_given_and_hostile_device(void **state)
{
    (void)state;
    pbuild b;
    /* 200 MFLOP/s against 0.0004 TFLOP/s: 50 % */
    loaded l = profile(&b, "evil\x1b[2J\xe2\x80\xae", "0.0004");
    char *t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  MFU: 50.0% of 0.0004 TFLOP/s (evil\\x1b[2J\\u202e; peak from "
                              "PRISM_PEAK_TFLOPS)\n"));
    free(t);
    char *j = report_text_of(l.a, true);
    assert_non_null(strstr(j, "\"mfu\": 0.5"));
    assert_non_null(strstr(j, "\"peak_from\": \"PRISM_PEAK_TFLOPS\""));
    assert_null(strstr(j, "\x1b"));
    free(j);
    unload(&l);
    l = profile(&b, NULL, "not a number");          /* ignored */
    double p = 1;
    assert_null(prism_analysis_torch_device(l.a, &p));
    assert_true(p == 0);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_steps_not_timed),
        cmocka_unit_test(test_not_operators_without_window_steps),
        cmocka_unit_test(test_mfu_from_the_table),
        cmocka_unit_test(test_peak_given_and_hostile_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
