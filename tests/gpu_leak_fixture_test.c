/*
 * gpu_leak_fixture_test.c - profiles written on a real GPU (tests/fixtures/gpu/,
 * README.md there) read by the reports as prism-top reads them.
 *
 * cuda_leak.cbor (samples/cuda_train --leak-mb 32 on an H200): the leak is
 * found from the CUDA allocation records, 32 MB/step over 39 steps, in the
 * analyze text ("Memory leak: DETECTED (GPU allocations)", the finding with
 * its evidence), in the analyze JSON (a finding of type memory_leak, the
 * allocations' fit as the GPU verdict) and in compare; GPU used, sampled at
 * 4 steps only, shows no leak.  Its kernel names read demangled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "exit.h"
#include "reports.h"

#define LEAK "tests/fixtures/gpu/cuda_leak.cbor"

/* A report written into memory; the caller frees it. */
static char *analyze(const char *path, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(rp_analyze_file(path, NULL, json ? RP_JSON : RP_TXT, NULL, f), EXIT_OK);
    fclose(f);
    return buf;
}

static void test_leak_in_text(void **state)
{
    (void)state;
    char *t = analyze(LEAK, false);
    assert_non_null(strstr(t, "  Memory leak: DETECTED (GPU allocations)\n"));
    assert_non_null(strstr(t, "    GPU allocations: LEAK (fast: slope above the threshold): "
                              "+32.00 +/- 0.00 MB/step  +1.22 GB"));
    assert_non_null(strstr(t, "over 39 steps; r2 1.00, 40 points"));
    /* GPU used: only NVML's periodic samples, not counted against step
     * samples of another kind (series.c): too few to fit, never a leak */
    assert_non_null(strstr(t, "    GPU used: "));
    assert_null(strstr(t, "    GPU used: LEAK"));
    assert_non_null(strstr(t, "[HIGH] memory_leak: Memory leak: 32.0 MB/step (GPU allocations)"));
    assert_non_null(strstr(t, "Evidence: CUDA allocations not freed grew 1.22 GB"));
    assert_non_null(strstr(t, "matmul(float const*, float co"));     /* names as demangled */
    free(t);
}

static void test_leak_in_json(void **state)
{
    (void)state;
    char *j = analyze(LEAK, true);
    assert_non_null(strstr(j, "\"leak_detected\": true"));
    const char *g = strstr(j, "\"gpu_leak\": {");
    assert_non_null(g);
    assert_non_null(strstr(g, "\"series\": \"allocations\""));
    assert_non_null(strstr(g, "\"verdict\": \"leak\""));
    assert_non_null(strstr(j, "\"gpu_alloc_leak\": {"));
    const char *f = strstr(j, "\"type\": \"memory_leak\"");
    assert_non_null(f);
    assert_non_null(strstr(f, "32.0 MB/step (GPU allocations)"));
    free(j);
}

static void test_leak_in_compare(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(rp_compare_files(LEAK, LEAK, NULL, RP_TXT, 0, NULL, f), EXIT_OK);
    fclose(f);
    assert_non_null(strstr(buf, "memory_leak_detected"));
    const char *row = strstr(buf, "memory_leak_detected");
    assert_non_null(strstr(row, "True"));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leak_in_text),
        cmocka_unit_test(test_leak_in_json),
        cmocka_unit_test(test_leak_in_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
