/*
 * prism_run_test.c - the prism-run launcher (tools/prism-run.c), run as a
 * program from the build ($B/bin/prism-run, B from the environment, else
 * "build"):
 *
 *   - the environment it sets, seen by `env` run through it: the injection
 *     library (an absolute path that exists), PRISM_OUTPUT, PRISM_RUN_PID
 *     (exec keeps the pid) and one variable per option;
 *   - a program that is not found: exit 127 and exactly one line on stderr;
 *     one that cannot be executed: 126; usage errors: 125;
 *   - an instrumented program (the trainloop sample) profiled through it:
 *     the profile exists where -o says, with its regions and a footer;
 *   - a Python program (python3 by name, a script whose #! line names python
 *     directly or through env) gets <root>/site:<root> in front of
 *     PYTHONPATH, root from PRISM_PYTHONPATH; other programs do not; without
 *     the package one line says so and the program still runs.  The
 *     "interpreter" is a shell script running env, so no Python is needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "collect_util.h"

static char bin[512];

static const char *build_dir(void)
{
    const char *b = getenv("B");
    return b && *b ? b : "build";
}

/* Run argv (argv[0] a path); out/err receive stdout/stderr (NUL-ended,
 * cap bytes each).  Returns the exit status, or 128 + signal. */
static int run(const char *const argv[], char *out, char *err, size_t cap)
{
    int po[2], pe[2];
    assert_int_equal(pipe2(po, O_CLOEXEC), 0);
    assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(CHILD_ALARM_S);
        dup2(po[1], STDOUT_FILENO);
        dup2(pe[1], STDERR_FILENO);
        execv(argv[0], (char *const *)argv);
        _exit(99);
    }
    close(po[1]);
    close(pe[1]);
    alarm(PARENT_ALARM_S);
    size_t lo = 0, le = 0;
    struct pollfd p[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
    int open = 2;
    while (open > 0) {
        if (poll(p, 2, -1) < 0 && errno == EINTR)
            continue;
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
                continue;
            char *dst = i ? err : out;
            size_t *len = i ? &le : &lo;
            char buf[4096];
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open--;
                continue;
            }
            for (ssize_t k = 0; k < n && *len + 1 < cap; k++)
                dst[(*len)++] = buf[k];
        }
    }
    out[lo] = err[le] = '\0';
    int status;
    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    alarm(0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The value of NAME= in env's output, copied to val. */
static bool env_value(const char *env, const char *name, char *val, size_t n)
{
    size_t len = strlen(name);
    for (const char *l = env; *l;) {
        const char *eol = strchr(l, '\n');
        size_t ll = eol ? (size_t)(eol - l) : strlen(l);
        if (ll > len && !strncmp(l, name, len) && l[len] == '=') {
            snprintf(val, n, "%.*s", (int)(ll - len - 1), l + len + 1);
            return true;
        }
        l += ll + (eol ? 1 : 0);
    }
    return false;
}

static int setup(void **state)
{
    (void)state;
    snprintf(bin, sizeof bin, "%s/bin/prism-run", build_dir());
    unsetenv("PRISM_OUTPUT");
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("PRISM_INJECT_LIB");
    return access(bin, X_OK) == 0 ? 0 : -1;
}

static void test_prism_run_env(void **state)
{
    (void)state;
    static char out[65536], err[4096];
    const char *argv[] = { bin, "-o", "run-%p.cbor", "--no-gpu", "--sample-rate", "0.5",
                     "--warmup-steps=3", "--active-steps", "4", "--policy", "wait",
                     "--flush-ms", "50", "--adaptive", "7", "--", "/usr/bin/env", NULL };
    assert_int_equal(run(argv, out, err, sizeof out), 0);
    assert_string_equal(err, "");
    char v[4096];
    assert_true(env_value(out, "CUDA_INJECTION64_PATH", v, sizeof v));
    assert_true(v[0] == '/');
    assert_non_null(strstr(v, "libprism-inject.so"));
    assert_int_equal(access(v, R_OK), 0);
    static const char *const want[][2] = {
        { "PRISM_OUTPUT", "run-%p.cbor" }, { "PRISM_COLLECT_GPU", "0" },
        { "PRISM_SAMPLE_RATE", "0.5" }, { "PRISM_WARMUP_STEPS", "3" },
        { "PRISM_ACTIVE_STEPS", "4" }, { "PRISM_POLICY", "wait" },
        { "PRISM_FLUSH_INTERVAL_MS", "50" }, { "PRISM_ADAPTIVE_STEPS", "7" },
        { "PRISM_ADAPTIVE", "1" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_true(env_value(out, want[i][0], v, sizeof v));
        assert_string_equal(v, want[i][1]);
    }
    assert_true(env_value(out, "PRISM_RUN_PID", v, sizeof v));
    assert_true(atol(v) > 1);

    /* without -o: the default pattern, so an instrumented program starts */
    const char *plain[] = { bin, "--", "/usr/bin/env", NULL };
    assert_int_equal(run(plain, out, err, sizeof out), 0);
    assert_true(env_value(out, "PRISM_OUTPUT", v, sizeof v));
    assert_string_equal(v, "prism-%p.cbor");
    assert_false(env_value(out, "PRISM_COLLECT_GPU", v, sizeof v));
}

static void test_prism_run_errors(void **state)
{
    (void)state;
    char out[4096], err[4096];
    const char *missing[] = { bin, "-o", "x.cbor", "--", "/nonexistent/no-such-program", "a",
                              NULL };
    assert_int_equal(run(missing, out, err, sizeof out), 127);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "no-such-program"));
    assert_non_null(strstr(err, "not found"));
    const char *on_path[] = { bin, "no-such-program-prism-test", NULL };     /* PATH search */
    assert_int_equal(run(on_path, out, err, sizeof out), 127);
    assert_int_equal(count_lines(err), 1);
    tdir d;                             /* a file without execute permission */
    tdir_make(&d);
    char plain[512];
    tdir_file(&d, "data.txt", plain, sizeof plain);
    int fd = open(plain, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    close(fd);
    const char *not_exec[] = { bin, "--", plain, NULL };
    assert_int_equal(run(not_exec, out, err, sizeof out), 126);
    assert_int_equal(count_lines(err), 1);
    tdir_remove(&d);
    const char *bad[] = { bin, "--bogus", "--", "/usr/bin/env", NULL };
    assert_int_equal(run(bad, out, err, sizeof out), 125);
    assert_non_null(strstr(err, "--bogus"));
    const char *none[] = { bin, "-o", "x.cbor", NULL };
    assert_int_equal(run(none, out, err, sizeof out), 125);
    const char *noval[] = { bin, "--sample-rate", NULL };
    assert_int_equal(run(noval, out, err, sizeof out), 125);
    const char *help[] = { bin, "--help", NULL };
    assert_int_equal(run(help, out, err, sizeof out), 0);
    assert_non_null(strstr(out, "usage: prism-run"));
}

static void test_prism_run_instrumented(void **state)
{
    (void)state;
    char trainloop[600], path[512], out[8192], err[8192];
    snprintf(trainloop, sizeof trainloop, "%s/bin/trainloop", build_dir());
    if (access(trainloop, X_OK) != 0)
        skip();
    tdir d;
    tdir_make(&d);
    tdir_file(&d, "train.cbor", path, sizeof path);
    const char *argv[] = { bin, "-o", path, "--", trainloop, "--epochs", "1", "--steps", "5",
                           NULL };
    assert_int_equal(run(argv, out, err, sizeof out), 0);
    psum *p = psum_read(path, false);
    assert_int_equal(p->status, PRISM_OK);
    assert_int_equal(p->footers, 1);
    assert_int_equal(p->nsteps, 5);
    assert_true(p->events > 0);
    psum_free(p);
    tdir_remove(&d);
}

/* path: a file holding text, with mode. */
static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_prism_run_python(void **state)
{
    (void)state;
    static char out[65536], err[4096];
    char py[512], tool[512], envtool[512], notpy[512], pkg[512], pkgdir[600], init[700],
        want[1300], v[4096], shebang[600], path[8192];
    tdir d;
    tdir_make(&d);
    tdir_file(&d, "python3", py, sizeof py);
    write_file(py, "#!/bin/sh\nexec /usr/bin/env\n", 0755);
    tdir_file(&d, "pkg", pkg, sizeof pkg);
    assert_int_equal(mkdir(pkg, 0755), 0);
    snprintf(pkgdir, sizeof pkgdir, "%s/prism", pkg);
    assert_int_equal(mkdir(pkgdir, 0755), 0);
    snprintf(init, sizeof init, "%s/__init__.py", pkgdir);
    write_file(init, "", 0644);
    tdir_file(&d, "tool.py", tool, sizeof tool);
    snprintf(shebang, sizeof shebang, "#!%s -u\nprint(1)\n", py);
    write_file(tool, shebang, 0755);
    tdir_file(&d, "envtool", envtool, sizeof envtool);
    write_file(envtool, "#!/usr/bin/env python3\nprint(1)\n", 0755);
    tdir_file(&d, "notpy.sh", notpy, sizeof notpy);
    write_file(notpy, "#!/bin/sh\nexec /usr/bin/env\n", 0755);
    char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    snprintf(path, sizeof path, "%s:%s", d.path, old_path ? old_path : "/usr/bin:/bin");
    setenv("PATH", path, 1);                    /* envtool's python3 is ours */
    setenv("PRISM_PYTHONPATH", pkg, 1);
    unsetenv("PYTHONPATH");
    snprintf(want, sizeof want, "%s/site:%s", pkg, pkg);

    const char *by_name[] = { bin, "--", py, NULL };
    const char *by_shebang[] = { bin, "--", tool, NULL };
    const char *by_env[] = { bin, "--", "envtool", NULL };  /* found on PATH */
    const char *const *py_runs[] = { by_name, by_shebang, by_env };
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(run(py_runs[i], out, err, sizeof out), 0);
        assert_string_equal(err, "");
        assert_true(env_value(out, "PYTHONPATH", v, sizeof v));
        assert_string_equal(v, want);
    }
    const char *not_py[] = { bin, "--", notpy, NULL };
    assert_int_equal(run(not_py, out, err, sizeof out), 0);
    assert_false(env_value(out, "PYTHONPATH", v, sizeof v));

    setenv("PYTHONPATH", "/somewhere", 1);      /* kept, after ours */
    assert_int_equal(run(by_name, out, err, sizeof out), 0);
    assert_true(env_value(out, "PYTHONPATH", v, sizeof v));
    snprintf(want, sizeof want, "%s/site:%s:/somewhere", pkg, pkg);
    assert_string_equal(v, want);
    unsetenv("PYTHONPATH");

    setenv("PRISM_PYTHONPATH", d.path, 1);      /* no package there */
    assert_int_equal(run(by_name, out, err, sizeof out), 0);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "PRISM_PYTHONPATH"));
    assert_false(env_value(out, "PYTHONPATH", v, sizeof v));
    assert_true(env_value(out, "PRISM_RUN_PID", v, sizeof v));

    unsetenv("PRISM_PYTHONPATH");
    if (old_path) {
        setenv("PATH", old_path, 1);
        free(old_path);
    }
    unlink(init);
    rmdir(pkgdir);
    rmdir(pkg);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prism_run_env),
        cmocka_unit_test(test_prism_run_errors),
        cmocka_unit_test(test_prism_run_instrumented),
        cmocka_unit_test(test_prism_run_python),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
