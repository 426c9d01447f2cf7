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
 * pass.  The same through an anonymous pipe (/proc/self/fd/N), and with a
 * slow reader whose bytes then read back as a profile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "collect_fault.h"
#include "prism/analysis.h"

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
    if (st->rd >= 0)
        close(st->rd);                  /* the parent's, inherited */
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

/* The same through an anonymous pipe (a shell's `| reader`), named as
 * /proc/self/fd/N: a reader that holds it and never reads. */
typedef struct piped {
    int wr;                             /* the write end, the child's output */
} piped;

static int pipe_child(void *arg)
{
    const piped *pp = arg;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", pp->wr);
    CHILD_CHECK(setenv("PRISM_SHUTDOWN_TIMEOUT_MS", "200", 1) == 0);
    prism_config c;
    fault_config(&c, path);
    CHILD_CHECK(prism_init(&c) == 0);
    fill();
    return OWN_STATUS;
}

static void test_pipe_with_stalled_reader(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    (void)fcntl(p[0], F_SETPIPE_SZ, 4096);
    piped pp = { p[1] };
    char err[8192];
    int status = run_child(pipe_child, &pp, err, sizeof err);
    assert_own_status_one_warning(status, err, "stopped reading");
    close(p[0]);
    close(p[1]);
}

/* A slow reader (a slow disk, a slow consumer): it drains a few hundred
 * bytes at a time with pauses between.  The program still ends with its
 * own status and at most one warning, however the reader's pace and the
 * grace fall on this machine, and what the reader got is a profile (its
 * start at least) that reads back without damage. */
typedef struct slow {
    int rd;
    uint8_t *got;
    size_t n, cap;
    _Atomic int done;                   /* the child is gone */
} slow;

static void *slow_reader(void *arg)
{
    slow *sl = arg;
    struct timespec pause = { 0, 2000000 };
    for (;;) {
        if (sl->n + 512 > sl->cap) {
            sl->cap = sl->cap ? sl->cap * 2 : 1 << 16;
            sl->got = realloc(sl->got, sl->cap);
            if (!sl->got)
                return NULL;
        }
        ssize_t r = read(sl->rd, sl->got + sl->n, 512);
        if (r == 0 && sl->n == 0 && !atomic_load(&sl->done)) {  /* no writer yet */
            nanosleep(&pause, NULL);
            continue;
        }
        if (r == 0 || (r < 0 && errno != EINTR))
            return NULL;                /* the writer closed it: the end */
        if (r > 0)
            sl->n += (size_t)r;
        nanosleep(&pause, NULL);        /* the pace of a slow consumer */
    }
}

static void test_slow_reader(void **state)
{
    (void)state;
    tdir d;
    stall st = { 0 };
    tdir_make(&d);
    tdir_file(&d, "slow.cbor", st.path, sizeof st.path);
    assert_int_equal(mkfifo(st.path, 0644), 0);
    slow sl = { 0 };
    sl.rd = open(st.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(sl.rd >= 0);
    (void)fcntl(sl.rd, F_SETPIPE_SZ, 4096);
    int fl = fcntl(sl.rd, F_GETFL);
    assert_int_equal(fcntl(sl.rd, F_SETFL, fl & ~O_NONBLOCK), 0);  /* blocking reads */
    st.rd = -1;
    pthread_t th;
    char err[8192];
    child c = child_start(exit_child, &st, false, true);
    assert_int_equal(pthread_create(&th, NULL, slow_reader, &sl), 0);
    int status = child_finish(&c, err, sizeof err);
    atomic_store(&sl.done, 1);
    pthread_join(th, NULL);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != OWN_STATUS) {
        print_error("child status %#x; stderr:\n%s\n", (unsigned)status, err);
        fail();
    }
    assert_true(count_lines(err) <= 1);
    assert_true(count_lines(err) == count_lines_with(err, "prism: warning:"));
    assert_non_null(sl.got);
    assert_true(sl.n > 0);
    char path[600];                     /* what it got, read back */
    tdir_file(&d, "got.cbor", path, sizeof path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(sl.got, 1, sl.n, f), sl.n);
    assert_int_equal(fclose(f), 0);
    prism_status ps;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &ps, msg, sizeof msg, &off);
    if (!a) {
        print_error("what the slow reader got does not read: %s at byte %llu\n", msg,
                    (unsigned long long)off);
        fail();
    }
    prism_analysis_free(a);             /* (how far it got depends on the pace) */
    free(sl.got);
    close(sl.rd);
    unlink(path);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_with_stalled_reader),
        cmocka_unit_test(test_sigterm_while_working),
        cmocka_unit_test(test_sigterm_during_shutdown),
        cmocka_unit_test(test_pipe_with_stalled_reader),
        cmocka_unit_test(test_slow_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
