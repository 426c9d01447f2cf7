/*
 * cupti_double_nvtx_test.c - how NVTX reaches CUPTI:
 *
 *   - the writer thread never sets NVTX_INJECTION64_PATH (setenv races
 *     with getenv in the program's threads; defect 6);
 *   - NVTX's injection entry is handed on to the libcupti PRISM attached,
 *     and the variable is set only while the program has no other thread,
 *     never over a user's value.
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

#include <fcntl.h>

#include "cupti_double_util.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- defect 6: no setenv from the writer ------------------------------------------ */

static void *idle_thread(void *arg)
{
    char c;
    while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int nvtx_env_child(void *arg)
{
    int p[2];
    pthread_t th;
    CHILD_CHECK(pipe(p) == 0 && pthread_create(&th, NULL, idle_thread, &p[0]) == 0);
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();
    start(arg, 5, false);       /* the program has a thread: no setenv */
    CHILD_CHECK(!D.ctl->subscribed);
    /* "the program loads the CUDA driver": a copy named libcuda.so.1 */
    char cuda[600];
    snprintf(cuda, sizeof cuda, "%s.libcuda/libcuda.so.1", (const char *)arg);
    char dir[600];
    snprintf(dir, sizeof dir, "%s.libcuda", (const char *)arg);
    CHILD_CHECK(mkdir(dir, 0700) == 0);
    int in = open(double_path, O_RDONLY), out = open(cuda, O_WRONLY | O_CREAT, 0600);
    char buf[65536];
    ssize_t n;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        CHILD_CHECK(write(out, buf, (size_t)n) == n);
    CHILD_CHECK(in >= 0 && out >= 0 && close(out) == 0);
    close(in);
    CHILD_CHECK(dlopen(cuda, RTLD_NOW | RTLD_LOCAL));
    WAIT_FOR(__atomic_load_n(&D.ctl->subscribed, __ATOMIC_RELAXED));
    CHILD_CHECK(D.ctl->enable_tid != gettid_());            /* attached by the writer */
    CHILD_CHECK(!getenv("NVTX_INJECTION64_PATH"));
    prism_shutdown();
    unlink(cuda);
    rmdir(dir);
    close(p[1]);
    pthread_join(th, NULL);
    return 0;
}

static void test_writer_never_sets_nvtx_env(void **state)
{
    (void)state;
    gsum *s;
    run(nvtx_env_child, "nvtx.prism", &s);
    assert_non_null(strstr(s->status, "NVTX not routed"));
    gsum_free(s);
}

/* ---- NVTX handed on to the libcupti PRISM attaches (GPU run 1) ----------- */

static int in_the_executable(void)
{
    return 0;
}

static int nvtx_handoff_child(void *arg)
{
    (void)arg;
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();
    /* NVTX calls the entry of the library its variable names (prism-run:
     * libprism-inject.so) with its export-table getter: it reaches the
     * libcupti's own entry, argument unchanged */
    const void *getter = (const void *)&D;
    CHILD_CHECK(prism__nvtx_handoff(getter) == 1);
    CHILD_CHECK(D.ctl->nvtx_inits == 1 && D.ctl->nvtx_table_fn == getter);
    /* the variable points at a shared library holding the entry, only
     * while the program has no other thread, never over a user's value */
    CHILD_CHECK(prism__nvtx_route((const void *)in_the_executable) == 0);     /* the executable */
    CHILD_CHECK(!getenv("NVTX_INJECTION64_PATH"));
    CHILD_CHECK(prism__nvtx_route((const void *)D.now) == 1);   /* in the double */
    const char *v = getenv("NVTX_INJECTION64_PATH");
    CHILD_CHECK(v && strstr(v, "libcupti_double.so"));
    setenv("NVTX_INJECTION64_PATH", "/users/own/nvtx.so", 1);
    CHILD_CHECK(prism__nvtx_route((const void *)D.now) == 1);
    CHILD_CHECK(!strcmp(getenv("NVTX_INJECTION64_PATH"), "/users/own/nvtx.so"));
    unsetenv("NVTX_INJECTION64_PATH");
    int p[2];
    pthread_t th;
    CHILD_CHECK(pipe(p) == 0 && pthread_create(&th, NULL, idle_thread, &p[0]) == 0);
    CHILD_CHECK(prism__nvtx_route((const void *)D.now) == 0);   /* a thread: no setenv */
    CHILD_CHECK(!getenv("NVTX_INJECTION64_PATH"));
    close(p[1]);
    pthread_join(th, NULL);
    return 0;
}

static void test_nvtx_handed_to_cupti(void **state)
{
    (void)state;
    child_run_ok(nvtx_handoff_child, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_never_sets_nvtx_env),
        cmocka_unit_test(test_nvtx_handed_to_cupti),
    };
    return cmocka_run_group_tests(tests, cupti_double_setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_nvtx_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
