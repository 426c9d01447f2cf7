/*
 * collect_fault_test.c - the collector never blocks or kills its host
 * (README, "Faults"): an output that is a FIFO with no reader or a device
 * is refused at once (a FIFO with its reader is a stream, and a reader
 * gone is a write error); a file-size limit (RLIMIT_FSIZE, what
 * `ulimit -f` sets) is a write error, not SIGXFSZ; a full disk (a tiny
 * tmpfs), a read-only directory and an output removed while recording
 * each give one warning.  Every time the program goes on unprofiled and
 * exits with its own status, and a terminating signal still ends it once
 * recording stopped, or in a child forked from it.
 *
 * An I/O error (EIO) from the disk: collect_eio_test.c.  Each scenario runs
 * in a forked child (one session per process), guarded by its alarm: a
 * child that would block is killed and the test fails.  Mounting (tmpfs, a
 * read-only bind) happens in a mount namespace of the child's own; where
 * that is not allowed the test is skipped with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "collect_fault.h"

typedef struct fault {
    char path[512];             /* the profile                              */
    char dir[512];              /* the directory to mount or remove         */
    rlim_t fsize;               /* RLIMIT_FSIZE for the child               */
    int rd;                     /* the parent's read end of a FIFO          */
} fault;

/* Run fn with the profile p.cbor in a new directory: the child exits with
 * its own status after one warning naming want. */
static void expect_one_warning(child_fn fn, const char *want)
{
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    tdir_file(&d, "p.cbor", f.path, sizeof f.path);
    char err[8192];
    int status = run_child(fn, &f, err, sizeof err);
    assert_own_status_one_warning(status, err, want);
    tdir_remove(&d);
}

/* ---- outputs that are not regular files ------------------------------ */

/* init refuses the output at once; the program runs unprofiled. */
static int refused_child(void *arg)
{
    const fault *f = arg;
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == -1);
    CHILD_CHECK(!prism_recording());
    fault_work(1000);
    return OWN_STATUS;
}

static void test_fifo_without_reader(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    tdir_file(&d, "fifo.cbor", f.path, sizeof f.path);
    assert_int_equal(mkfifo(f.path, 0644), 0);
    char err[8192];
    /* open(2) of a FIFO with no reader waits for one: the child's alarm */
    int status = run_child(refused_child, &f, err, sizeof err);
    assert_own_status_one_warning(status, err, "a FIFO with no reader");
    assert_int_equal(count_lines_with(err, f.path), 1);
    tdir_remove(&d);
}

/* With its reader there a FIFO is a stream: the whole profile goes in. */
static int fifo_child(void *arg)
{
    const fault *f = arg;
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == 0);
    fault_work(10);                           /* a few KiB: within the pipe's room */
    return OWN_STATUS;
}

static void test_fifo_with_reader_streams(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    char copy[512];
    tdir_file(&d, "fifo.cbor", f.path, sizeof f.path);
    tdir_file(&d, "copy.cbor", copy, sizeof copy);
    assert_int_equal(mkfifo(f.path, 0644), 0);
    int rd = open(f.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(rd >= 0);
    char err[8192];
    int status = run_child(fifo_child, &f, err, sizeof err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == OWN_STATUS);
    assert_string_equal(err, "");
    int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(out >= 0);
    char b[4096];
    ssize_t n;
    while ((n = read(rd, b, sizeof b)) > 0)   /* every writer gone: ends */
        assert_int_equal(write(out, b, (size_t)n), n);
    assert_int_equal(n, 0);
    close(out);
    close(rd);
    psum *p = psum_read_sound(copy, false);
    assert_int_equal(p->footers, 1);
    psum_free(p);
    tdir_remove(&d);
}

/* The FIFO's reader goes away while recording: EPIPE (SIGPIPE reaches the
 * writer thread only, which blocks it), one warning. */
static int reader_gone_child(void *arg)
{
    const fault *f = arg;
    close(f->rd);                       /* the parent's, inherited: not ours */
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == 0);
    child_ready();                      /* the parent closes its end now */
    fault_work_until_stopped();
    fault_work(1000);
    return OWN_STATUS;
}

static void test_fifo_reader_gone(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    tdir_file(&d, "fifo.cbor", f.path, sizeof f.path);
    assert_int_equal(mkfifo(f.path, 0644), 0);
    f.rd = open(f.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(f.rd >= 0);
    char err[8192];
    child c = child_start(reader_gone_child, &f, true, true);
    child_expect_ready(&c);
    close(f.rd);
    int status = child_finish(&c, err, sizeof err);
    assert_own_status_one_warning(status, err, strerror(EPIPE));
    tdir_remove(&d);
}

/* PRISM_OUTPUT=/dev/stdout with stdout redirected to a file: the profile
 * would be mixed with what the program prints; refused (issue 32). */
static int stdout_child(void *arg)
{
    const fault *f = arg;
    int fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHILD_CHECK(fd >= 0 && dup2(fd, 1) == 1);
    prism_config c;
    fault_config(&c, "/dev/stdout");
    CHILD_CHECK(prism_init(&c) == -1);
    CHILD_CHECK(prism_init(&c) == -1);  /* quietly: that one said why */
    fault_work(1000);
    printf("the program's own output\n");
    return OWN_STATUS;
}

static void test_stdout_refused(void **state)
{
    (void)state;
    expect_one_warning(stdout_child, "standard output");
}

/* The documented policy for devices, /dev/null included: refused. */
static void test_device_refused(void **state)
{
    (void)state;
    fault f = { 0 };
    snprintf(f.path, sizeof f.path, "/dev/null");
    char err[8192];
    int status = run_child(refused_child, &f, err, sizeof err);
    assert_own_status_one_warning(status, err, "not a regular file or a FIFO");
}

/* ---- file-size limits ------------------------------------------------ */

static void set_fsize(rlim_t n)
{
    struct rlimit rl;
    CHILD_CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
    rl.rlim_cur = n;
    CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
}

static void disposition(int sig, struct sigaction *old)
{
    CHILD_CHECK(sigaction(sig, NULL, old) == 0);
}

static bool is_default(int sig)
{
    struct sigaction sa;
    disposition(sig, &sa);
    return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

/* `ulimit -f 0`: not even the header fits. */
static int fsize_zero_child(void *arg)
{
    const fault *f = arg;
    set_fsize(0);
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == -1);
    CHILD_CHECK(!prism_recording());
    CHILD_CHECK(is_default(SIGXFSZ));   /* given back with the session */
    fault_work(1000);
    return OWN_STATUS;
}

static void test_fsize_zero(void **state)
{
    (void)state;
    expect_one_warning(fsize_zero_child, strerror(EFBIG));
}

/* A limit reached while recording: the writer's write fails. */
static int fsize_child(void *arg)
{
    const fault *f = arg;
    set_fsize(f->fsize);
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == 0);
    CHILD_CHECK(!is_default(SIGXFSZ));  /* ignored while recording */
    fault_work_until_stopped();
    fault_work(1000);
    prism_shutdown();
    CHILD_CHECK(is_default(SIGXFSZ));
    return OWN_STATUS;
}

static void test_fsize_while_recording(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { .fsize = 48 * 1024 };
    tdir_file(&d, "p.cbor", f.path, sizeof f.path);
    char err[8192];
    int status = run_child(fsize_child, &f, err, sizeof err);
    assert_own_status_one_warning(status, err, strerror(EFBIG));
    assert_int_equal(count_lines_with(err, "profiling stopped"), 1);
    /* the file so far reads: a header, chunks, no footer */
    struct stat st;
    assert_int_equal(stat(f.path, &st), 0);
    assert_true(st.st_size > 0 && (uint64_t)st.st_size <= f.fsize);
    psum *p = psum_read(f.path, false);
    assert_non_null(prism_reader_header(p->r));
    assert_true(p->chunks > 0);
    assert_int_equal(p->st.damaged, 0);
    assert_int_equal(p->footers, 0);
    psum_free(p);
    tdir_remove(&d);
}

/* A program that handles SIGXFSZ itself keeps its handler. */
static void on_xfsz(int sig)
{
    (void)sig;
}

static int own_xfsz_child(void *arg)
{
    const fault *f = arg;
    struct sigaction sa, now;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_xfsz;
    sigemptyset(&sa.sa_mask);
    CHILD_CHECK(sigaction(SIGXFSZ, &sa, NULL) == 0);
    set_fsize(0);
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == -1);
    disposition(SIGXFSZ, &now);
    CHILD_CHECK(now.sa_handler == on_xfsz);
    return OWN_STATUS;
}

static void test_fsize_own_handler_kept(void **state)
{
    (void)state;
    expect_one_warning(own_xfsz_child, strerror(EFBIG));
}

/* Whether a thread of this process is named name (/proc/self/task). */
static bool thread_named(const char *name)
{
    DIR *dir = opendir("/proc/self/task");
    CHILD_CHECK(dir);
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(dir))) {
        char path[300], comm[64] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f))
            found = strncmp(comm, name, strlen(name)) == 0;
        if (f)
            fclose(f);
    }
    closedir(dir);
    return found;
}

/* Recording stopped and its writer thread gone, SIGTERM must still end the
 * program: the library's handler may not swallow it. */
static int signal_after_failure_child(void *arg)
{
    const fault *f = arg;
    set_fsize(f->fsize);
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == 0);
    fault_work_until_stopped();
    while (thread_named("prism-writer"))    /* it exits after the failure */
        sched_yield();
    raise(SIGTERM);
    for (;;)                            /* the signal ends us, or the alarm */
        pause();
}

static void test_signal_after_failure(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { .fsize = 48 * 1024 };
    tdir_file(&d, "p.cbor", f.path, sizeof f.path);
    char err[8192];
    int status = run_child(signal_after_failure_child, &f, err, sizeof err);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) {
        print_error("want death by SIGTERM, got status %#x; stderr:\n%s\n", (unsigned)status, err);
        fail();
    }
    assert_int_equal(count_lines(err), 1);
    tdir_remove(&d);
}

/* A child forked (no exec) from a recording program has no writer: the
 * handler it inherits may not swallow its SIGTERM either. */
static int fork_signal_child(void *arg)
{
    const fault *f = arg;
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == 0);
    fault_work(100);
    fflush(NULL);
    pid_t g = fork();
    CHILD_CHECK(g >= 0);
    if (g == 0) {
        alarm(CHILD_ALARM_S);
        raise(SIGTERM);
        for (;;)                        /* the signal ends it, or the alarm */
            pause();
    }
    int st;
    CHILD_CHECK(waitpid(g, &st, 0) == g);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
        fprintf(stderr, "forked child status %#x\n", (unsigned)st);
    CHILD_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    CHILD_CHECK(prism_recording());     /* the parent's session goes on */
    return OWN_STATUS;
}

static void test_signal_in_forked_child(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    tdir_file(&d, "p.cbor", f.path, sizeof f.path);
    char err[8192];
    int status = run_child(fork_signal_child, &f, err, sizeof err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != OWN_STATUS) {
        print_error("child status %#x; stderr:\n%s\n", (unsigned)status, err);
        fail();
    }
    assert_string_equal(err, "");
    psum *p = psum_read_sound(f.path, false);
    assert_int_equal(p->footers, 1);
    psum_free(p);
    tdir_remove(&d);
}

/* ---- full disk, read-only directory, removed directory ---------------- */

/* A private mount namespace of the child's own; false (said on stderr) if not. */
static bool own_mounts(void)
{
    if (unshare(CLONE_NEWNS) != 0) {
        fprintf(stderr, "cannot unshare the mount namespace: %s\n", strerror(errno));
        return false;
    }
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        fprintf(stderr, "cannot make mounts private: %s\n", strerror(errno));
        return false;
    }
    return true;
}

static void on_read_cb(void *ctx, const prism_chunk_info *ci)
{
    (void)ci;
    (*(uint64_t *)ctx)++;
}

static int full_disk_child(void *arg)
{
    const fault *f = arg;
    if (!own_mounts())
        return SKIP_STATUS;
    if (mount("tmpfs", f->dir, "tmpfs", 0, "size=64k") != 0) {
        fprintf(stderr, "cannot mount a 64k tmpfs: %s\n", strerror(errno));
        return SKIP_STATUS;
    }
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == 0);
    fault_work_until_stopped();
    fault_work(1000);
    prism_shutdown();
    /* the file so far reads (the mount goes with this child: read here) */
    uint64_t chunks = 0;
    prism_reader_callbacks cb = { .chunk = on_read_cb };
    prism_reader *r = NULL;
    prism_read_file(f->path, &cb, &chunks, &r);
    CHILD_CHECK(r && prism_reader_header(r));
    CHILD_CHECK(chunks > 0);
    CHILD_CHECK(prism_reader_stats_get(r)->damaged == 0);
    prism_reader_free(r);
    return OWN_STATUS;
}

static void test_full_disk(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    snprintf(f.dir, sizeof f.dir, "%s", d.path);
    tdir_file(&d, "p.cbor", f.path, sizeof f.path);
    char err[8192];
    int status = run_child(full_disk_child, &f, err, sizeof err);
    assert_own_status_one_warning(status, err, strerror(ENOSPC));
    assert_int_equal(count_lines_with(err, "profiling stopped"), 1);
    tdir_remove(&d);
}

/* A read-only directory: as root permission bits do not stop a write, so
 * the directory is bound read-only onto itself. */
static int read_only_child(void *arg)
{
    const fault *f = arg;
    if (geteuid() == 0) {
        if (!own_mounts())
            return SKIP_STATUS;
        if (mount(f->dir, f->dir, NULL, MS_BIND, NULL) != 0 ||
            mount(NULL, f->dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) != 0) {
            fprintf(stderr, "cannot bind the directory read-only: %s\n", strerror(errno));
            return SKIP_STATUS;
        }
    }
    return refused_child(arg);
}

static void test_read_only_directory(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    snprintf(f.dir, sizeof f.dir, "%s", d.path);
    tdir_file(&d, "p.cbor", f.path, sizeof f.path);
    bool root = geteuid() == 0;
    if (!root)
        assert_int_equal(chmod(d.path, 0555), 0);
    char err[8192];
    int status = run_child(read_only_child, &f, err, sizeof err);
    if (!root)
        assert_int_equal(chmod(d.path, 0700), 0);
    assert_own_status_one_warning(status, err, root ? strerror(EROFS) : strerror(EACCES));
    assert_int_equal(tdir_count(&d), 0);
    tdir_remove(&d);
}

/* The output and its directory removed while recording: writes would go
 * on into a file nobody can open. */
static int removed_child(void *arg)
{
    const fault *f = arg;
    prism_config c;
    fault_config(&c, f->path);
    CHILD_CHECK(prism_init(&c) == 0);
    fault_work(1000);
    CHILD_CHECK(unlink(f->path) == 0);
    CHILD_CHECK(rmdir(f->dir) == 0);
    fault_work_until_stopped();
    fault_work(1000);
    return OWN_STATUS;
}

static void test_directory_removed(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fault f = { 0 };
    tdir_file(&d, "sub", f.dir, sizeof f.dir);
    assert_int_equal(mkdir(f.dir, 0755), 0);
    tdir_file(&d, "sub/p.cbor", f.path, sizeof f.path);
    char err[8192];
    int status = run_child(removed_child, &f, err, sizeof err);
    assert_own_status_one_warning(status, err, "was removed");
    assert_int_equal(count_lines_with(err, "profiling stopped"), 1);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_without_reader),
        cmocka_unit_test(test_fifo_with_reader_streams),
        cmocka_unit_test(test_fifo_reader_gone),
        cmocka_unit_test(test_device_refused),
        cmocka_unit_test(test_stdout_refused),
        cmocka_unit_test(test_fsize_zero),
        cmocka_unit_test(test_fsize_while_recording),
        cmocka_unit_test(test_fsize_own_handler_kept),
        cmocka_unit_test(test_signal_after_failure),
        cmocka_unit_test(test_signal_in_forked_child),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_read_only_directory),
        cmocka_unit_test(test_directory_removed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
