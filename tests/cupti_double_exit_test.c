/*
 * cupti_double_exit_test.c - how PRISM leaves CUPTI (defect 2):
 *
 *   - exit: libcupti's own teardown registered at load, at subscribe, or
 *     before PRISM's; PRISM never calls CUPTI after it, nor cuptiFinalize
 *     unasked, and the last records still come (the flush at exit);
 *   - a terminating signal: no CUPTI call, the status says what is missing;
 *   - a write failure while the program launches on: only the kinds off.
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

#include <signal.h>
#include <sys/resource.h>

#include "cupti_double_util.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- defect 2: exit ordering ---------------------------------------------------- */

static int exit_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    9, t, t + 10));
    CHILD_CHECK(kernel(9, t + 20, t + 30, "last_kernel", 0, 0));
    /* left in CUPTI's buffer: only the flush at exit brings it; a CUPTI
     * call after the double's teardown exits 97 */
    exit(0);
}

static int exit_early_child(void *arg)
{
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();              /* its teardown registered before PRISM's */
    return exit_child(arg);
}

static void exit_order(child_fn fn, const char *when)
{
    clear_env();
    setenv("CUPTI_DOUBLE_TEARDOWN", when, 1);
    gsum *s;
    run(fn, "exit.prism", &s);
    unsetenv("CUPTI_DOUBLE_TEARDOWN");
    assert_true(s->footer);
    assert_non_null(find(s, PRISM_GPU_KERNEL, 9));
    gsum_free(s);
}

static void test_exit_teardown_at_subscribe(void **state)
{
    (void)state;
    exit_order(exit_child, "subscribe");
}

static void test_exit_teardown_at_load(void **state)
{
    (void)state;
    exit_order(exit_child, "load");
}

static void test_exit_teardown_registered_first(void **state)
{
    (void)state;
    exit_order(exit_early_child, "load");
}

/* A terminating signal: the writer completes the file and the program
 * dies, with no CUPTI call on the way (its threads may be inside CUDA):
 * the records still in CUPTI's buffer are not flushed, and the status says
 * so.  Before, the writer flushed, unsubscribed and finalised. */
static int signal_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(kernel(9, t + 20, t + 30, "in_cupti_buffer", 0, 0));
    kill(getpid(), SIGTERM);
    for (;;)
        pause();
}

static void test_signal_no_cupti_calls(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512], err[4096];
    tdir_file(&d, "signal.prism", path, sizeof path);
    child c = child_start(signal_child, path, false, true);
    int st = child_finish(&c, err, sizeof err);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    gsum *s = gsum_read(path);
    assert_true(s->footer);
    assert_non_null(strstr(s->status, "stopped by signal 15: CUPTI not flushed"));
    assert_null(find(s, PRISM_GPU_KERNEL, 9));
    gsum_free(s);
    tdir_remove(&d);
}

/* A write failure while the program goes on launching: the writer stops
 * and only turns the activity kinds off; no flush, no unsubscribe, no
 * finalize under a running program.  Before, it flushed, unsubscribed and
 * called cuptiFinalize. */
static int write_failure_child(void *arg)
{
    struct rlimit rl;
    CHILD_CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
    rl.rlim_cur = 48 * 1024;
    CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    start(arg, 1, true);
    double_open();
    while (prism_recording()) {
        prism_step_begin();
        prism_push("work");
        prism_pop();
        prism_step_end();
    }
    WAIT_FOR(__atomic_load_n(&D.ctl->kinds, __ATOMIC_RELAXED) == 0);
    uint64_t t = D.now();           /* the program launches on: harmless */
    kernel(3, t, t + 10, "after_failure", 0, 0);
    prism_shutdown();
    /* (a forced flush may have come from the watch: steps without GPU work) */
    CHILD_CHECK(D.ctl->unsubscribes == 0 && D.ctl->finalizes == 0);
    return 0;
}

static void test_write_failure_no_teardown(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "fail.prism", path, sizeof path);
    child_run_ok(write_failure_child, path);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_teardown_at_subscribe),
        cmocka_unit_test(test_exit_teardown_at_load),
        cmocka_unit_test(test_exit_teardown_registered_first),
        cmocka_unit_test(test_signal_no_cupti_calls),
        cmocka_unit_test(test_write_failure_no_teardown),
    };
    return cmocka_run_group_tests(tests, cupti_double_setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_exit_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
