/*
 * collect_fault.h - what the collector's fault tests share
 * (collect_fault_test.c, collect_eio_test.c; header-only, static inline):
 * a child's small quick session, the program's work, running a child and
 * the check that it went on with its own status after one warning.
 *
 * Include after <cmocka.h>.
 */
#ifndef PRISM_COLLECT_FAULT_H
#define PRISM_COLLECT_FAULT_H

#include "collect_util.h"

#define OWN_STATUS 5            /* the program's own exit status            */
#define SKIP_STATUS 77          /* the child could not set the fault up     */

/* A child's session: small and quick, writing to path. */
static inline void fault_config(prism_config *c, const char *path)
{
    prism_config_default(c);
    c->output = path;
    c->collect_memory = false;
    c->collect_gpu_ops = false;
    c->cpu_interval_ms = 0;
    c->flush_interval_ms = 1;
}

/* The program's work, unprofiled or not: every call must be harmless. */
static inline void fault_work(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        prism_step_begin();
        prism_push("work");
        prism_push("inner");
        prism_pop();
        prism_pop();
        prism_step_end();
    }
}

/* Record until the session gives up (the fault under test); a session that
 * never does spins until the child's alarm kills it. */
static inline void fault_work_until_stopped(void)
{
    while (prism_recording())
        fault_work(1000);
}

static inline const char *sig_name(int sig)
{
    const char *s = strsignal(sig);
    return s ? s : "?";
}

/* The child exited with OWN_STATUS (skip on SKIP_STATUS, with its message)
 * and wrote exactly one line on stderr, a PRISM warning holding `want`. */
static inline void assert_own_status_one_warning(int status, const char *err, const char *want)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == SKIP_STATUS) {
        print_message("skipped: %s", err);
        skip();
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != OWN_STATUS) {
        print_error("child %s %d (%s); stderr:\n%s\n",
                    WIFEXITED(status) ? "exited" : "killed by",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                    WIFEXITED(status) ? "want 5" : sig_name(WTERMSIG(status)), err);
        fail();
    }
    if (count_lines(err) != 1 || count_lines_with(err, "prism: warning:") != 1 ||
        count_lines_with(err, want) != 1) {
        print_error("want one warning line with \"%s\"; stderr:\n%s\n", want, err);
        fail();
    }
}

static inline int run_child(child_fn fn, void *arg, char *err, size_t cap)
{
    child c = child_start(fn, arg, false, true);
    return child_finish(&c, err, cap);
}

#endif
