/*
 * quitsig_test.c - the explorer's quit signals (tui/quitsig.c): each of
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT sets the flag the loop reads; a loop
 * that never looks at it again (held up by a long read or refresh: here a
 * child spinning on the CPU) is ended by the deadline, which restores the
 * terminal and exits 0; a fatal signal restores the terminal and dies of
 * that signal.  The restore callback writes to a pipe the parent reads.
 * No timing is asserted: the parent waits for the child, however long a
 * busy machine makes the grace second.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tui/quitsig.h"

static int restore_fd = -1;

static void restore(void)
{
    if (restore_fd >= 0 && write(restore_fd, "R", 1) != 1)
        _exit(3);
}

/* Fork a child that installs the handlers, gets sig and then runs body;
 * returns the child's wait status and how many restores it wrote. */
static int in_child(int sig, void (*body)(void), int *restores)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        restore_fd = p[1];
        quitsig_install(restore);
        if (*quitsig_flag())
            _exit(4);                   /* no signal yet */
        raise(sig);
        body();
        _exit(5);                       /* body returned: not expected */
    }
    close(p[1]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char buf[8];
    ssize_t n = read(p[0], buf, sizeof buf);
    close(p[0]);
    *restores = n > 0 ? (int)n : 0;
    return status;
}

/* The loop is held up: it never reads the flag again. */
static void stuck(void)
{
    if (*quitsig_flag() == 0)
        _exit(6);                       /* the handler did not set it */
    for (volatile unsigned long i = 0;; i++)
        ;
}

/* ... or blocked in a read that the signal does not end. */
static void blocked(void)
{
    int p[2];
    if (pipe(p) != 0)
        _exit(7);
    char c;
    for (;;)                            /* EINTR retried, as a loader would */
        (void)read(p[0], &c, 1);
}

static void test_deadline(void **st)
{
    (void)st;
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        int restores = 0;
        int status = in_child(sigs[i], stuck, &restores);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_int_equal(restores, 1);
    }
    int restores = 0;
    int status = in_child(SIGHUP, blocked, &restores);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(restores, 1);
}

/* The loop saw the flag and left: the deadline was armed, and disarming
 * it leaves none pending (what the explorer does after its loop takes as
 * long as it takes). */
static void leaves(void)
{
    if (*quitsig_flag() != SIGTERM)
        _exit(8);
    struct itimerval t;
    if (getitimer(ITIMER_REAL, &t) != 0 || (!t.it_value.tv_sec && !t.it_value.tv_usec))
        _exit(9);                       /* no deadline armed */
    quitsig_disarm();
    if (getitimer(ITIMER_REAL, &t) != 0 || t.it_value.tv_sec || t.it_value.tv_usec)
        _exit(10);                      /* still pending */
    restore();
    _exit(0);
}

static void test_loop_leaves(void **st)
{
    (void)st;
    int restores = 0;
    int status = in_child(SIGTERM, leaves, &restores);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(restores, 1);
}

static void crash(void)
{
    raise(SIGSEGV);
}

static void test_fatal(void **st)
{
    (void)st;
    int restores = 0;
    int status = in_child(SIGINT, crash, &restores);   /* quitting, then a crash */
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
    assert_int_equal(restores, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_loop_leaves),
        cmocka_unit_test(test_fatal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
