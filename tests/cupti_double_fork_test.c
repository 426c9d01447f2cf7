/*
 * cupti_double_fork_test.c - a fork()ed child of a process whose CUPTI is
 * attached (a DataLoader worker of a CUDA training script) never calls
 * CUPTI.
 *
 * Found on the first GPU run (issue 33): every worker session's writer
 * flushed CUPTI from the child, where CUPTI's threads are the parent's; the
 * flush never returned, the worker's profile ended without its footer after
 * the 3 s grace, and each DataLoader's shutdown waited those 3 s (x5.6 on
 * the steady step of the test script).  The CUPTI double exits a child that
 * calls it with status 98, as the real one would hang.
 *
 * The scenario runs in a forked "parent" that records with CUPTI (the
 * double) and forks a worker: the worker starts a worker session, records a
 * region, ends it; its profile is whole, says why it has no GPU activity and
 * holds none of the parent's records; the parent's profile keeps its kernels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sys/wait.h>

#include "cupti_double_util.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

static char worker_file[700];

static int parent_child(void *arg)
{
    const char *path = arg;
    start(path, 5, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    11, t, t + 10));
    CHILD_CHECK(kernel(11, t + 20, t + 30, "before_fork", 0, 0));
    D.complete();               /* a buffer on its way to the writer */
    CHILD_CHECK(kernel(12, t + 40, t + 50, "in_flight", 0, 0));
    prism_push("fork");
    pid_t w = fork();
    CHILD_CHECK(w >= 0);
    if (w == 0) {
        alarm(CHILD_ALARM_S);
        prism_config c;
        prism_config_default(&c);
        c.output = worker_file;
        c.collect_memory = false;
        c.collect_gpu_ops = true;           /* asked for: still never CUPTI here */
        c.flush_interval_ms = 5;
        prism_worker_of of = { .parent_pid = (uint64_t)getppid(),
                               .parent_start_ns = 1, .id = 0 };
        CHILD_CHECK(prism_init_worker(&c, &of) == 0);
        for (int i = 0; i < 50; i++) {
            prism_push("batch");
            nanosleep(&(struct timespec){ 0, 200000 }, NULL);   /* writer cycles go by */
            prism_pop();
        }
        prism_shutdown();
        _exit(0);
    }
    int st = 0;
    CHILD_CHECK(waitpid(w, &st, 0) == w);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "worker: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    prism_pop();
    t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    13, t, t + 10));
    CHILD_CHECK(kernel(13, t + 20, t + 30, "after_fork", 0, 0));
    prism_shutdown();
    return 0;
}

static void test_worker_never_calls_cupti(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "parent.prism", path, sizeof path);
    tdir_file(&d, "worker.prism", worker_file, sizeof worker_file);
    child_run_ok(parent_child, path);

    gsum *w = gsum_read(worker_file);
    assert_true(w->footer);
    assert_int_equal(w->ng, 0);                 /* none of the parent's records */
    assert_true(!strncmp(w->status, "off: a fork()ed child", 21));
    gsum_free(w);

    gsum *p = gsum_read(path);
    assert_true(p->footer);
    assert_true(!strncmp(p->status, "ok: ", 4));
    assert_non_null(find(p, PRISM_GPU_KERNEL, 11));
    assert_non_null(find(p, PRISM_GPU_KERNEL, 12));
    assert_non_null(find(p, PRISM_GPU_KERNEL, 13));
    gsum_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_never_calls_cupti),
    };
    return cmocka_run_group_tests(tests, cupti_double_setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_fork_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
