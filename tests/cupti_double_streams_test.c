/*
 * cupti_double_streams_test.c - GPU time per stream from CUPTI's kernel
 * records (prism_gpu_streams_begin / _end, what prism.profiler's
 * StreamProfiler reads): the kernels that start inside the window, summed
 * per stream, busiest first, from the same buffers the profile gets; the
 * end's forced flush brings back what CUPTI still holds; kernels before the
 * window and after its end are left out; -1 without CUPTI recording or
 * without a window.
 *
 * Against the CUPTI double (tests/cupti_double.c), each scenario in a forked
 * child whose profile the parent reads back.  No GPU result: the double
 * scripts the records, the test checks what PRISM sums of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cupti_double_util.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* A kernel record on a stream of device 0. */
static bool kernel_on(uint32_t corr, uint32_t stream, uint64_t start, uint64_t end)
{
    CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };
    k.start = start;
    k.end = end;
    k.correlationId = corr;
    k.streamId = stream;
    k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    k.name = "k";
    return D.emit(&k, sizeof k);
}

static int streams_child(void *arg)
{
    prism_gpu_stream_time st[4];
    CHILD_CHECK(prism_gpu_streams_begin() == -1);           /* no session */
    CHILD_CHECK(prism_gpu_streams_end(st, 4) == -1);
    start(arg, 5, true);
    double_open();
    CHILD_CHECK(prism_gpu_streams_end(st, 4) == -1);        /* no window */
    uint64_t t = D.now();
    CHILD_CHECK(kernel_on(1, 7, t, t + 1000));              /* before the window */
    D.complete();
    CHILD_CHECK(prism_gpu_streams_begin() == 0);
    t = D.now();
    CHILD_CHECK(kernel_on(2, 7, t + 10, t + 110));
    CHILD_CHECK(kernel_on(3, 9, t + 20, t + 320));
    D.complete();                                           /* handed back at once */
    CHILD_CHECK(kernel_on(4, 7, t + 400, t + 450));         /* still in CUPTI's buffer */
    memset(st, 0, sizeof st);
    CHILD_CHECK(prism_gpu_streams_end(st, 4) == 2);
    CHILD_CHECK(st[0].stream == 9 && st[0].kernels == 1 && st[0].busy_ns == 300);
    CHILD_CHECK(st[1].stream == 7 && st[1].kernels == 2 && st[1].busy_ns == 150);
    CHILD_CHECK(st[0].device == 0 && st[1].device == 0);
    CHILD_CHECK(prism_gpu_streams_end(st, 4) == -1);        /* closed */

    /* a second window: more streams than out[] holds, and a kernel that
     * starts after its end is not counted */
    CHILD_CHECK(prism_gpu_streams_begin() == 0);
    t = D.now();
    for (uint32_t i = 0; i < 6; i++)
        CHILD_CHECK(kernel_on(10 + i, 20 + i, t + 1, t + 2 + i));
    memset(st, 0, sizeof st);
    CHILD_CHECK(prism_gpu_streams_end(st, 2) == 6);
    CHILD_CHECK(st[0].stream == 25 && st[0].busy_ns == 6 && st[1].stream == 24);
    CHILD_CHECK(prism_gpu_streams_begin() == 0);
    uint64_t late = D.now() + 1000000000ull;
    CHILD_CHECK(kernel_on(30, 7, late, late + 10));         /* starts after the end */
    CHILD_CHECK(prism_gpu_streams_end(st, 4) == 0);
    prism_shutdown();
    CHILD_CHECK(prism_gpu_streams_begin() == -1);           /* detached */
    return 0;
}

static void test_stream_times(void **state)
{
    (void)state;
    gsum *s;
    run(streams_child, "streams.prism", &s);
    assert_true(s->footer);
    /* the profile has every kernel: the window only reads the records */
    for (uint64_t c = 1; c <= 4; c++)
        assert_non_null(find(s, PRISM_GPU_KERNEL, c));
    assert_non_null(find(s, PRISM_GPU_KERNEL, 30));
    gsum_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_times),
    };
    return cmocka_run_group_tests(tests, cupti_double_setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_streams_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
