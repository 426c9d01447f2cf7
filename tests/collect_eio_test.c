/*
 * collect_eio_test.c - an I/O error (EIO) from the disk under the profile
 * (issue 16): the test's own write() stands in front of the C library's for
 * regular files (the collector's output; pipes and the terminal pass) and,
 * once a byte budget is spent, writes short and then fails with EIO, as a
 * failing disk does.  Whether it strikes at the header or while recording,
 * the collector gives one warning, the program goes on unprofiled and exits
 * with its own status, and the profile so far opens.
 *
 * Each scenario runs in a forked child (collect_util.h), guarded by its
 * alarm: a child that would block or spin is killed and the test fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <sys/syscall.h>

#include "collect_fault.h"

/* Bytes regular files may still take; -1: no fault. */
static atomic_long g_budget = -1;
static atomic_long g_failed;    /* writes refused with EIO                  */

ssize_t write(int fd, const void *buf, size_t n)
{
    struct stat st;
    long left = atomic_load(&g_budget);
    if (left < 0 || fd <= 2 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return syscall(SYS_write, fd, buf, n);
    if (left == 0) {
        atomic_fetch_add(&g_failed, 1);
        errno = EIO;
        return -1;
    }
    if ((size_t)left < n)
        n = (size_t)left;                   /* a short write, then EIO */
    ssize_t r = syscall(SYS_write, fd, buf, n);
    if (r > 0)
        atomic_fetch_sub(&g_budget, r);
    return r;
}

typedef struct eio_case {
    char path[512];
    long budget;                /* bytes written before the disk fails     */
} eio_case;

static int eio_child(void *arg)
{
    const eio_case *e = arg;
    atomic_store(&g_budget, e->budget);
    prism_config c;
    fault_config(&c, e->path);
    (void)prism_init(&c);       /* fails at once when the header cannot go */
    fault_work_until_stopped();
    CHILD_CHECK(atomic_load(&g_failed) > 0);
    fault_work(1000);           /* the program goes on, unprofiled          */
    prism_shutdown();
    atomic_store(&g_budget, -1);
    return OWN_STATUS;
}

static void on_chunk(void *ctx, const prism_chunk_info *ci)
{
    if (ci->status == PRISM_CHUNK_OK)
        (*(uint64_t *)ctx)++;
}

/* Run the child with the disk failing after budget bytes; returns the good
 * chunks the profile holds (the profile must open when want_file). */
static uint64_t run_eio(long budget, bool want_file)
{
    tdir d;
    tdir_make(&d);
    eio_case e = { .budget = budget };
    tdir_file(&d, "p.cbor", e.path, sizeof e.path);
    char err[8192];
    int status = run_child(eio_child, &e, err, sizeof err);
    assert_own_status_one_warning(status, err, strerror(EIO));
    uint64_t chunks = 0;
    if (want_file) {
        prism_reader_callbacks cb = { .chunk = on_chunk };
        prism_reader *r = NULL;
        prism_status st = prism_read_file(e.path, &cb, &chunks, &r);
        assert_non_null(r);
        assert_non_null(prism_reader_header(r));
        assert_true(st == PRISM_OK || st == PRISM_NEED_MORE);
        assert_int_equal(prism_reader_stats_get(r)->damaged, 0);
        prism_reader_free(r);
    }
    tdir_remove(&d);
    return chunks;
}

/* The disk fails at the first byte: init or the first flush warns once. */
static void test_eio_at_header(void **state)
{
    (void)state;
    run_eio(0, false);
}

/* The disk fails while recording, in the middle of a chunk (a short write
 * first): one warning, and the chunks written before it read back. */
static void test_eio_while_recording(void **state)
{
    (void)state;
    uint64_t chunks = run_eio(20011, true);
    assert_true(chunks > 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eio_at_header),
        cmocka_unit_test(test_eio_while_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
