/*
 * worker_advice_test.c - a hot data_loading region on the training thread
 * of a program whose DataLoader already has worker processes: the advice
 * says the time is taking the batches over from the workers, not "move it
 * to loader threads or processes" (a real profile: tests/fixtures/handover).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "prism/analysis.h"

static void test_handover_advice(void **state)
{
    (void)state;
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a =
        prism_analyze_file("tests/fixtures/handover/handover.cbor", NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    size_t n = 0;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_bottleneck *hot = NULL;
    for (size_t i = 0; i < n; i++)
        if (b[i].type == PRISM_BN_HOT_OPERATION && strstr(b[i].description, "'data_loading'"))
            hot = &b[i];
    assert_non_null(hot);
    assert_non_null(strstr(hot->recommendation, "The workers make the batches; this is taking "
                                                "them over"));
    assert_null(strstr(hot->recommendation, "move it to loader threads"));
    prism_analysis_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handover_advice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
