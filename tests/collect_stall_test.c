/*
 * collect_stall_test.c - the program never waits on a profile's reader
 * that stopped reading (issue 32, item 1): a FIFO whose reader holds it
 * open and never reads.  The program's work ends, and it exits with its
 * own status after one warning, its shutdown bounded by the grace
 * (PRISM_SHUTDOWN_TIMEOUT_MS); a SIGTERM while the writer waits ends the
 * program by that signal (never lost, never a normal exit), in the middle
 * of the work and during the shutdown alike.  Each child is guarded by its
 * alarm (collect_util.h): one that hangs is killed and the test fails.
 * A grace of 60 s in the SIGTERM cases makes a lost signal a hang, not a
 * pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "collect_fault.h"

typedef struct stall {
    char path[512];             /* the FIFO                                 */
    int rd;                     /* the parent's read end: open, never read  */
    bool shutdown_first;        /* SIGTERM case: the child is ending        */
} stall;

/* Work far beyond the FIFO's 4 KiB: the writer is stalled for sure. */
static void fill(void)
{
    for (int i = 0; i < 50; i++)
        fault_work(1000);
}

static int exit_child(void *arg)
{
    const stall *st = arg;
    close(st->rd);                      /* the parent's, inherited */
    CHILD_CHECK(setenv("PRISM_SHUTDOWN_TIMEOUT_MS", "200", 1) == 0);
    prism_config c;
    fault_config(&c, st->path);
    CHILD_CHECK(prism_init(&c) == 0);
    fill();
    return OWN_STATUS;                  /* exit: prism_shutdown at exit */
}

static int sigterm_child(void *arg)
{
    const stall *st = arg;
    close(st->rd);
    CHILD_CHECK(setenv("PRISM_SHUTDOWN_TIMEOUT_MS", "60000", 1) == 0);
    prism_config c;
    fault_config(&c, st->path);
    CHILD_CHECK(prism_init(&c) == 0);
    fill();
    child_ready();                      /* the parent sends SIGTERM now */
    if (st->shutdown_first)
        prism_shutdown();               /* waits on the FIFO: the signal lands here */
    for (;;)
        fault_work(1000);               /* the signal ends it, or the alarm */
}

/* A FIFO with a reader that never reads (its pipe as small as it goes). */
static void stall_make(stall *st, tdir *d)
{
    tdir_make(d);
    tdir_file(d, "fifo.cbor", st->path, sizeof st->path);
    assert_int_equal(mkfifo(st->path, 0644), 0);
    st->rd = open(st->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(st->rd >= 0);
    (void)fcntl(st->rd, F_SETPIPE_SZ, 4096);
}

static void test_exit_with_stalled_reader(void **state)
{
    (void)state;
    tdir d;
    stall st = { 0 };
    stall_make(&st, &d);
    char err[8192];
    int status = run_child(exit_child, &st, err, sizeof err);
    assert_own_status_one_warning(status, err, "stopped reading");
    close(st.rd);
    tdir_remove(&d);
}

static void sigterm_case(bool shutdown_first)
{
    tdir d;
    stall st = { .shutdown_first = shutdown_first };
    stall_make(&st, &d);
    char err[8192];
    child c = child_start(sigterm_child, &st, true, true);
    child_expect_ready(&c);
    kill(c.pid, SIGTERM);
    int status = child_finish(&c, err, sizeof err);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) {
        print_error("want death by SIGTERM, got status %#x; stderr:\n%s\n", (unsigned)status, err);
        fail();
    }
    assert_non_null(strstr(err, "stopped reading"));
    assert_int_equal(count_lines(err), 1);
    close(st.rd);
    tdir_remove(&d);
}

static void test_sigterm_while_working(void **state)
{
    (void)state;
    sigterm_case(false);
}

static void test_sigterm_during_shutdown(void **state)
{
    (void)state;
    sigterm_case(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_with_stalled_reader),
        cmocka_unit_test(test_sigterm_while_working),
        cmocka_unit_test(test_sigterm_during_shutdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
