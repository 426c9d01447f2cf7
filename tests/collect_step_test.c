/*
 * collect_step_test.c - step boundaries (libcollect/steps.c) and the memory
 * samples the writer takes for them (libcollect/sampler.c).  Owner: steps
 * and memory sampling (issue 12).
 *
 *   - prism_step_begin / prism_step_end make no system call: the stepping
 *     thread runs under a seccomp filter that traps every system call but
 *     exit, rt_sigreturn and clock_gettime(CLOCK_MONOTONIC) (the hot
 *     clock's fallback where there is no usable TSC);
 *   - memory samples still name their steps: a loop leaking N MB a step,
 *     each step waiting for the writer's sample of the one before (by
 *     watching the session, never by sleeping), is found as a leak of N MB
 *     a step by the analysis, with one sample per step between its end and
 *     the next step's start;
 *   - steps faster than the writer drains them (the ring fills, the
 *     stepping thread drains it itself) all reach the file, in order;
 *   - in a forked child the step functions do nothing.
 *
 * Each session runs in a forked child (one session per process).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#include "collect_util.h"
#include "prism/analysis.h"
#include "../libcollect/internal.h"

#define SKIPPED 77                      /* a child's status: cannot run here */

static prism_config config_at(const char *path)
{
    prism_config c;
    prism_config_default(&c);           /* memory sampling on, CPU sampler on */
    c.output = path;
    return c;
}

/* ---- no system call at a step boundary --------------------------------- */

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#define WARM_STEPS 4u
#define FILTERED_STEPS 200u             /* < STEP_RING: no slow path expected */
#define MAX_TRAPS 16u

static _Atomic unsigned traps;
static volatile int trapped_nr[MAX_TRAPS];

#ifdef NATIVE_ARCH
/* SIGSYS from the filter: note the call, make it fail with ENOSYS, go on. */
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    unsigned k = atomic_fetch_add(&traps, 1);
    if (k < MAX_TRAPS)
        trapped_nr[k] = si->si_syscall;
    ucontext_t *uc = ctx;
#if defined(__x86_64__)
    uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#else
    uc->uc_mcontext.regs[0] = (uint64_t)(int64_t)-ENOSYS;
#endif
}

/* This thread only (no TSYNC): every system call traps except these. */
static int forbid_syscalls(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clock_gettime, 0, 3),
        /* the clock id's low half (little-endian) */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLOCK_MONOTONIC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}
#endif

typedef struct stepper {
    uint32_t id;
    int filter_rc, filter_errno;
    _Atomic int done;
} stepper;

/* One step as a training loop takes it: a region and a counter inside. */
static void one_step(uint32_t id, uint64_t i)
{
    prism_step_begin();
    prism_push_id(id);
    prism_counter_i(id, (int64_t)i);
    prism_pop();
    prism_step_end();
}

#ifdef NATIVE_ARCH
static void *stepper_main(void *arg)
{
    stepper *st = arg;
    for (uint64_t i = 0; i < WARM_STEPS; i++)   /* first use: registration, names */
        one_step(st->id, i);
    st->filter_rc = forbid_syscalls();
    st->filter_errno = errno;
    if (st->filter_rc == 0)
        for (uint64_t i = 0; i < FILTERED_STEPS; i++)
            one_step(st->id, WARM_STEPS + i);
    atomic_store(&st->done, 1);
    /* no way back from the filter: leave without a call it forbids (the
     * kernel still clears the thread id, so pthread_join returns) */
    for (;;)
        syscall(SYS_exit, 0);
    return NULL;
}
#endif

static int no_syscall_child(void *arg)
{
#ifdef NATIVE_ARCH
    prism_config c = config_at(arg);
    CHILD_CHECK(prism_init(&c) == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHILD_CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
    stepper st = { .id = prism_name("stepping") };
    CHILD_CHECK(st.id != 0);
    pthread_t th;
    CHILD_CHECK(pthread_create(&th, NULL, stepper_main, &st) == 0);
    CHILD_CHECK(pthread_join(th, NULL) == 0);
    CHILD_CHECK(atomic_load(&st.done) == 1);
    if (st.filter_rc != 0) {
        fprintf(stderr, "seccomp filter unavailable: %s\n", strerror(st.filter_errno));
        return SKIPPED;
    }
    unsigned n = atomic_load(&traps);
    for (unsigned i = 0; i < n && i < MAX_TRAPS; i++)
        fprintf(stderr, "system call %d made while stepping\n", trapped_nr[i]);
    CHILD_CHECK(n == 0);
    prism_shutdown();
    return 0;
#else
    (void)arg;
    return SKIPPED;
#endif
}

static void test_step_makes_no_system_call(void **state)
{
    (void)state;
    tdir d;
    char path[512], err[8192];
    tdir_make(&d);
    tdir_file(&d, "nosys.cbor", path, sizeof path);
    child c = child_start(no_syscall_child, path, false, true);
    int status = child_finish(&c, err, sizeof err);
    if (WIFEXITED(status) && WEXITSTATUS(status) == SKIPPED) {
        tdir_remove(&d);
        print_message("skipped: %s", err);
        skip();
    }
    assert_child_ok(status, err);
    psum *p = psum_read_sound(path, false);
    /* the filtered steps were recorded: every one, in order, its region too */
    assert_int_equal(p->nsteps, WARM_STEPS + FILTERED_STEPS);
    for (size_t i = 0; i < p->nsteps; i++)
        assert_int_equal(p->steps[i].index, i);
    uint64_t enters = 0, counters = 0;
    for (uint32_t s = 0; s < PS_STREAMS; s++) {
        enters += p->s[s].enters;
        counters += p->s[s].counters;
    }
    assert_int_equal(enters, WARM_STEPS + FILTERED_STEPS);
    assert_int_equal(counters, WARM_STEPS + FILTERED_STEPS);
    /* and the writer sampled memory for them (at shutdown at the latest) */
    bool tagged = false;
    for (size_t i = 0; i < p->nmem; i++)
        tagged |= p->mem[i].step == WARM_STEPS + FILTERED_STEPS - 1;
    assert_true(tagged);
    psum_free(p);
    tdir_remove(&d);
}

/* ---- memory samples name their steps: a leak is found ------------------ */

#define LEAK_MB 4u
#define LEAK_STEPS 30u

/* Wait until the writer has sampled memory after `ended` steps: it looks
 * for ended steps every few ms by itself. */
static void wait_for_sample(uint64_t ended)
{
    while (atomic_load_explicit(&prism__s->mem_steps, memory_order_acquire) < ended)
        sched_yield();
}

static int leak_child(void *arg)
{
    prism_config c = config_at(arg);
    CHILD_CHECK(prism_init(&c) == 0);
    uint32_t id = prism_name("history");
    static char *kept[LEAK_STEPS];      /* freed once the session is over */
    for (uint32_t i = 0; i < LEAK_STEPS; i++) {
        prism_step_begin();
        prism_push_id(id);
        kept[i] = malloc((size_t)LEAK_MB << 20);
        CHILD_CHECK(kept[i] != NULL);
        memset(kept[i], (int)i | 1, (size_t)LEAK_MB << 20);  /* resident */
        prism_pop();
        prism_step_end();
        wait_for_sample(i + 1);
    }
    prism_shutdown();
    for (uint32_t i = 0; i < LEAK_STEPS; i++)
        free(kept[i]);
    return 0;
}

static void test_memory_tagged_leak_found(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "leak.cbor", path, sizeof path);
    psum *p = psum_from_child(leak_child, path, path, false);
    assert_int_equal(p->nsteps, LEAK_STEPS);
    size_t at_step[LEAK_STEPS] = { 0 };
    for (size_t i = 0; i < p->nmem; i++) {
        const prism_memory_sample *m = &p->mem[i];
        if (m->step == PRISM_NO_STEP)
            continue;
        assert_true(m->step < LEAK_STEPS);
        at_step[m->step]++;
        /* after its step's end, before the next step began (it waited) */
        assert_true(m->ts >= p->steps[m->step].end);
        if (m->step + 1 < LEAK_STEPS)
            assert_true(m->ts <= p->steps[m->step + 1].start);
    }
    for (uint32_t i = 0; i < LEAK_STEPS; i++)
        assert_int_equal(at_step[i], 1);
    psum_free(p);

    prism_status err;
    char msg[200];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    if (!a)
        fail_msg("%s: %s at byte %llu", path, msg, (unsigned long long)off);
    const prism_memory_stats *ms = prism_analysis_memory(a);
    assert_true(ms->host.leak);
    assert_true(ms->host.slope_mb_per_step > LEAK_MB * 0.75 &&
                ms->host.slope_mb_per_step < LEAK_MB * 1.25);
    assert_true(ms->host.r2 > 0.9);
    size_t nb;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &nb);
    bool found = false;
    for (size_t i = 0; i < nb; i++)
        found |= b[i].type == PRISM_BN_MEMORY_LEAK;
    assert_true(found);
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* ---- steps faster than the writer drains them --------------------------- */

#define BURST_STEPS (STEP_RING * 5u + 7u)

static int burst_child(void *arg)
{
    prism_config c = config_at(arg);
    CHILD_CHECK(prism_init(&c) == 0);
    for (uint32_t i = 0; i < BURST_STEPS; i++) {
        prism_epoch(i / 1000);
        prism_step_begin();
        prism_step_end();
    }
    prism_shutdown();
    return 0;
}

static void test_step_burst_kept_in_order(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "burst.cbor", path, sizeof path);
    psum *p = psum_from_child(burst_child, path, path, false);
    assert_int_equal(p->nsteps, BURST_STEPS);
    for (size_t i = 0; i < p->nsteps; i++) {
        assert_int_equal(p->steps[i].index, i);
        assert_int_equal(p->steps[i].epoch, i / 1000);
        assert_true(p->steps[i].end >= p->steps[i].start);
        if (i)
            assert_true(p->steps[i].start >= p->steps[i - 1].end);
    }
    uint64_t prev = PRISM_NO_STEP;      /* samples name ever later steps */
    for (size_t i = 0; i < p->nmem; i++) {
        uint64_t st = p->mem[i].step;
        if (st == PRISM_NO_STEP)
            continue;
        assert_true(st < BURST_STEPS);
        assert_true(prev == PRISM_NO_STEP || st > prev);
        prev = st;
    }
    assert_int_equal(prev, BURST_STEPS - 1);
    psum_free(p);
    tdir_remove(&d);
}

/* ---- a forked child ----------------------------------------------------- */

static int fork_child(void *arg)
{
    prism_config c = config_at(arg);
    CHILD_CHECK(prism_init(&c) == 0);
    one_step(prism_name("parent"), 0);
    fflush(NULL);
    pid_t pid = fork();
    CHILD_CHECK(pid >= 0);
    if (pid == 0) {                     /* the parent's session is not ours */
        uint64_t before = prism_step_index();
        for (uint32_t i = 0; i < 3 * STEP_RING; i++) {
            prism_step_begin();
            prism_step_end();
        }
        _exit(prism_step_index() == before ? 0 : 1);
    }
    int st;
    CHILD_CHECK(waitpid(pid, &st, 0) == pid);
    CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    one_step(prism_name("parent"), 1);
    prism_shutdown();
    return 0;
}

static void test_forked_child_takes_no_steps(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "fork.cbor", path, sizeof path);
    psum *p = psum_from_child(fork_child, path, path, false);
    assert_int_equal(p->nsteps, 2);
    assert_int_equal(p->steps[0].index, 0);
    assert_int_equal(p->steps[1].index, 1);
    psum_free(p);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_makes_no_system_call),
        cmocka_unit_test(test_memory_tagged_leak_found),
        cmocka_unit_test(test_step_burst_kept_in_order),
        cmocka_unit_test(test_forked_child_takes_no_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
