/*
 * cupti_double_clients_test.c - PRISM beside another CUPTI client (defect 5):
 *
 *   - another subscriber already attached: nothing of it replaced (its
 *     clock), gpu.status says PRISM records nothing;
 *   - a torch.profiler-like client takes the buffers mid-run: gpu.status
 *     says when recording stopped, in programs with steps, with regions
 *     only, with neither (its CPU time the progress); PRISM's own samples
 *     in an idle program are no progress;
 *   - it disables kernel tracing: PRISM sees launches without kernels and
 *     enables it again.
 *
 * Against the CUPTI double (tests/cupti_double.c, loaded through
 * PRISM_CUPTI_PATH like a real libcupti; helpers in cupti_double_util.h),
 * each scenario in a forked child whose profile the parent reads back.  No
 * GPU result: the double scripts what CUPTI would do, the tests check what
 * PRISM does with it (issue 27).  Each test failed before its fix (the
 * commit that brought it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cupti_double_util.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- defect 5: another CUPTI client ------------------------------------------------ */

static int other_subscriber_child(void *arg)
{
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();
    D.ctl->other_subscriber = true;
    start(arg, 60000, true);
    CHILD_CHECK(!D.ctl->clock_taken_from_other && !D.ctl->timestamp);
    CHILD_CHECK(D.ctl->kinds == 0);
    prism_shutdown();
    return 0;
}

static void test_other_subscriber(void **state)
{
    (void)state;
    gsum *s;
    run(other_subscriber_child, "other.prism", &s);
    assert_non_null(strstr(s->status, "another CUPTI client is attached"));
    assert_non_null(strstr(s->status, "records nothing"));
    assert_int_equal(s->ng, 0);
    gsum_free(s);
}

/* How the program goes on after torch.profiler took the buffers. */
enum { BY_STEPS, BY_REGIONS, BY_CPU, IDLE };

/* About a ms of work on the CPU, no PRISM call. */
static void burn(void)
{
    volatile uint64_t x = 0;
    for (uint32_t i = 0; i < 1000000; i++)
        x += i;
}

/* A launch recorded, then torch.profiler takes the buffers while the program
 * goes on (steps, only regions, or neither: computing on the CPU):
 * PRISM's buffers never come back, and the writer's probe (a forced flush)
 * comes once the program went on.  The CPU sampler every ms (its samples
 * are no progress). */
static int buffers_taken(void *arg, int how)
{
    start_with(arg, 5, 1, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    5, t, t + 10));
    CHILD_CHECK(kernel(5, t + 20, t + 30, "before", 0, 0));
    D.complete();
    uint64_t f = load_u64(&D.ctl->flushes);
    WAIT_FOR(load_u64(&D.ctl->flushes) >= f + 2);
    D.other(true, false);       /* torch.profiler starts: its buffers from now on */
    if (how == IDLE) {          /* blocked: 100 writer cycles, 500 CPU samples */
        f = load_u64(&D.ctl->flushes);
        WAIT_FOR(load_u64(&D.ctl->flushes) >= f + 100);
        CHILD_CHECK(!load_u64(&D.ctl->forced_flushes));
        prism_shutdown();
        return 0;
    }
    for (int i = 0; i < 20000 && !load_u64(&D.ctl->forced_flushes); i++) {
        for (int j = 0; j < (how == BY_REGIONS ? 16 : 1); j++) {
            if (how == BY_STEPS) {
                prism_step_begin();
                prism_step_end();
            } else if (how == BY_REGIONS) {
                prism_push("work");
                prism_pop();
            } else {
                burn();
            }
        }
        if (how != BY_CPU)
            nanosleep(&(struct timespec){ 0, 500000 }, NULL);
    }
    CHILD_CHECK(load_u64(&D.ctl->forced_flushes));
    prism_shutdown();
    return 0;
}

static int buffers_taken_child(void *arg)
{
    return buffers_taken(arg, BY_STEPS);
}

static void test_buffers_taken_mid_run(void **state)
{
    (void)state;
    gsum *s;
    run(buffers_taken_child, "taken.prism", &s);
    assert_true(s->footer);
    assert_non_null(find(s, PRISM_GPU_KERNEL, 5));
    assert_true(!strncmp(s->status, "stopped: ", 9));
    assert_non_null(strstr(s->status, "after step 0"));
    assert_non_null(strstr(s->status, "another CUPTI client"));
    gsum_free(s);
}

/* The same in a program that marks no steps: its regions are the progress. */
static int buffers_taken_nosteps_child(void *arg)
{
    return buffers_taken(arg, BY_REGIONS);
}

static void test_buffers_taken_without_steps(void **state)
{
    (void)state;
    gsum *s;
    run(buffers_taken_nosteps_child, "taken_nosteps.prism", &s);
    assert_true(s->footer);
    assert_true(!strncmp(s->status, "stopped: ", 9));
    assert_non_null(strstr(s->status, "more events recorded"));
    gsum_free(s);
}

/* ... nor regions (an unmodified program under prism-run): the CPU time of
 * the thread that launched is the progress. */
static int buffers_taken_cpu_child(void *arg)
{
    return buffers_taken(arg, BY_CPU);
}

static void test_buffers_taken_without_steps_or_regions(void **state)
{
    (void)state;
    gsum *s;
    run(buffers_taken_cpu_child, "taken_cpu.prism", &s);
    assert_true(s->footer);
    assert_non_null(find(s, PRISM_GPU_KERNEL, 5));
    assert_true(!strncmp(s->status, "stopped: ", 9));
    assert_non_null(strstr(s->status, "s on the CPU, no CUDA call recorded"));
    gsum_free(s);
}

/* A program without steps that waits, blocked, after its buffers were
 * taken has not gone on: PRISM's own CPU samples (500 of them) are no
 * progress, no probe, the status stays ok.  (Before, every event written
 * counted, samples too: after 256 the watch probed and said stopped.) */
static int idle_child(void *arg)
{
    return buffers_taken(arg, IDLE);
}

static void test_idle_program_not_taken_for_progress(void **state)
{
    (void)state;
    gsum *s;
    run(idle_child, "idle.prism", &s);
    assert_true(s->footer);
    assert_true(!strncmp(s->status, "ok: ", 4));
    gsum_free(s);
}

static int kernels_off_child(void *arg)
{
    start(arg, 5, true);
    double_open();
    D.other(false, true);       /* torch.profiler stops: kernels disabled */
    const uint64_t kbit = 1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    uint32_t corr = 100;
    for (int i = 0; i < 200 && !(load_u64(&D.ctl->kinds) & kbit); i++, corr++) {
        uint64_t t = D.now();
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr,
            t, t + 10);
        kernel(corr, t + 20, t + 30, "lost", 0, 0);         /* not traced */
        D.complete();
        uint64_t f = load_u64(&D.ctl->flushes);
        WAIT_FOR(load_u64(&D.ctl->flushes) > f);          /* one writer cycle */
    }
    CHILD_CHECK(load_u64(&D.ctl->kinds) & kbit);
    uint64_t t = D.now();
    CHILD_CHECK(kernel(99999, t + 20, t + 30, "again", 0, 0));
    prism_shutdown();
    return 0;
}

static void test_kernels_disabled_mid_run(void **state)
{
    (void)state;
    gsum *s;
    run(kernels_off_child, "koff.prism", &s);
    assert_true(!strncmp(s->status, "ok: ", 4));
    assert_non_null(strstr(s->status, "kernel tracing was disabled by another CUPTI client"));
    assert_non_null(find(s, PRISM_GPU_KERNEL, 99999));
    gsum_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_subscriber),
        cmocka_unit_test(test_buffers_taken_mid_run),
        cmocka_unit_test(test_buffers_taken_without_steps),
        cmocka_unit_test(test_buffers_taken_without_steps_or_regions),
        cmocka_unit_test(test_idle_program_not_taken_for_progress),
        cmocka_unit_test(test_kernels_disabled_mid_run),
    };
    return cmocka_run_group_tests(tests, cupti_double_setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_clients_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
