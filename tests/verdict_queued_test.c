/*
 * verdict_queued_test.c - preempted compute is run-queue wait, never
 * blocked time (issue 26), with the preemption made certain: the training
 * thread pins itself to one CPU and starts there a busy-loop thread of its
 * own that never records (PRISM's writer, started before, may run on any
 * CPU).  The training thread computes; on one CPU shared with the loop it
 * waits for the CPU about half of the time, across samples too.
 *
 * Linux adds a thread's run-queue wait to its schedstat only when the
 * thread gets a CPU again, so a sample taken while the thread waits sees
 * neither on-CPU nor run-queue growth for the time since it was
 * preempted.  The collector marks such samples PRISM_CPU_QUEUED, and the
 * analysis counts that time as run-queue wait.
 *
 * Each step computes 8 ms in layer_a and 6 ms in layer_b (CPU time), then
 * sleeps 6 ms for real (io_wait), so the wait reported after a preempted
 * compute region often lands in an interval that also holds blocked time.
 * (analysis_wait_test's test_preempted_is_run_queue reproduces that case
 * exactly, with and without the marks; this is the end-to-end check.)
 *
 * Facts: the trainer's samples include QUEUED ones; the compute regions'
 * time off CPU is run-queue wait (blocked at most a fifth of it, or 2 % of
 * their time); io_wait is blocked; an off_cpu_wait finding names io_wait
 * if any; the same program alone, the control, likewise.  Where the
 * child cannot pin itself, or the profile holds no CPU samples, the test
 * is skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "burn.h"
#include "collect_util.h"
#include "prism/analysis.h"

#define STEPS 30u

static atomic_bool stop_loop;

static void *busy_loop(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    while (!atomic_load_explicit(&stop_loop, memory_order_relaxed))
        x++;
    return NULL;
}

typedef struct run_args {
    const char *profile;
    bool pinned;                /* to one CPU, beside the loop */
} run_args;

/* Exit status 77: the child could not pin itself (or has one CPU only). */
static int queued_child(void *arg)
{
    const run_args *ra = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = ra->profile;
    CHILD_CHECK(prism_init(&c) == 0);       /* the writer may use any CPU */
    CHILD_CHECK(prism_recording());
    cpu_set_t all, one;
    CPU_ZERO(&one);
    if (ra->pinned && (sched_getaffinity(0, sizeof all, &all) != 0 || CPU_COUNT(&all) < 2))
        _exit(77);
    for (int k = 0; ra->pinned && k < CPU_SETSIZE; k++)
        if (CPU_ISSET(k, &all)) {
            CPU_SET(k, &one);
            break;
        }
    /* this thread, and the loop it starts, on one CPU */
    if (ra->pinned && sched_setaffinity(0, sizeof one, &one) != 0)
        _exit(77);
    atomic_store(&stop_loop, !ra->pinned);
    prism_thread_name("trainer");
    pthread_t loop;
    CHILD_CHECK(pthread_create(&loop, NULL, busy_loop, NULL) == 0);
    for (unsigned s = 0; s < STEPS; s++) {
        prism_step_begin();
        prism_push("layer_a");
        burn(8.0);
        prism_pop();
        prism_push("layer_b");
        burn(6.0);
        prism_pop();
        prism_push("io_wait");              /* blocked for real */
        struct timespec ts = { 0, 6000000 };
        while (nanosleep(&ts, &ts) != 0)
            ;
        prism_pop();
        prism_step_end();
    }
    atomic_store(&stop_loop, true);
    CHILD_CHECK(pthread_join(loop, NULL) == 0);
    prism_shutdown();
    return 0;
}

typedef struct seen {
    uint32_t trainer;           /* its stream; 0: not seen */
    size_t samples, queued;     /* the trainer's */
    prism_cpu_sample s[8192];   /* all, kept until the trainer is known */
    size_t n;
} seen;

static void sn_thread(void *ctx, const prism_thread *t)
{
    seen *x = ctx;
    if (!strcmp(t->name, "trainer"))
        x->trainer = t->stream;
}

static void sn_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    seen *x = ctx;
    for (size_t i = 0; i < n && x->n < sizeof x->s / sizeof x->s[0]; i++)
        x->s[x->n++] = s[i];
}

static void check(bool pinned)
{
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "queued.cbor", path, sizeof path);
    char err[8192];
    run_args ra = { path, pinned };
    child ch = child_start(queued_child, &ra, false, true);
    int st = child_finish(&ch, err, sizeof err);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        printf("queued: cannot pin to one CPU here: skipped\n");
        tdir_remove(&d);
        skip();
    }
    assert_child_ok(st, err);

    seen *x = calloc(1, sizeof *x);
    assert_non_null(x);
    prism_reader_callbacks cb = { .thread = sn_thread, .cpu = sn_cpu };
    prism_reader *r = NULL;
    assert_int_equal(prism_read_file(path, &cb, x, &r), PRISM_OK);
    prism_reader_free(r);
    if (!x->n) {
        printf("queued: the profile holds no CPU samples: skipped\n");
        free(x);
        tdir_remove(&d);
        skip();
    }
    assert_true(x->trainer != 0);
    bool have_wait = false;
    for (size_t i = 0; i < x->n; i++)
        if (x->s[i].stream == x->trainer) {
            x->samples++;
            x->queued += (x->s[i].flags & PRISM_CPU_QUEUED) != 0;
            have_wait |= (x->s[i].flags & PRISM_CPU_HAVE_WAIT) != 0;
        }
    printf("queued: trainer %zu samples, %zu of them QUEUED\n", x->samples, x->queued);
    if (!have_wait) {       /* thread clocks only: no run-queue figures */
        printf("queued: no schedstat here: skipped\n");
        free(x);
        tdir_remove(&d);
        skip();
    }
    if (pinned)
        assert_true(x->queued > 0);
    free(x);

    prism_status ast = PRISM_OK;
    char msg[256];
    uint64_t off = 0;
    prism_analysis *a = prism_analyze_file(path, NULL, &ast, msg, sizeof msg, &off);
    assert_non_null(a);
    const prism_tree *t = prism_analysis_tree(a);
    uint64_t known = 0, runq = 0, blocked = 0, io_blocked = 0;
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *nd = &t->nodes[i];
        if (!strcmp(nd->name, "io_wait"))
            io_blocked += nd->offcpu_ns;
        else if (strcmp(nd->name, "layer_a") && strcmp(nd->name, "layer_b"))
            continue;
        else {
            known += nd->cpu_known_ns;
            runq += nd->runq_ns;
            blocked += nd->offcpu_ns;
        }
        printf("queued: %-8s known %.1f ms: on %.1f, run queue %.1f, blocked %.1f\n",
               nd->name, nd->cpu_known_ns / 1e6, nd->oncpu_ns / 1e6, nd->runq_ns / 1e6,
               nd->offcpu_ns / 1e6);
    }
    assert_true(known > 0);
    /* the regions' time off CPU was waiting for the CPU, never blocked
     * (beside the loop, a fair part of their time) */
    if (pinned)
        assert_true(runq > 0);
    assert_true(blocked * 5 <= runq + blocked || blocked * 50 <= known);
    assert_true(io_blocked > 0);
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++) {
        printf("    %s %s\n", prism_bottleneck_name(b[i].type), b[i].description);
        if (b[i].type == PRISM_BN_OFF_CPU_WAIT)
            assert_string_equal(t->nodes[b[i].node].name, "io_wait");
        /* its figure is the whole wait, not what the hot operations leave */
        if (b[i].type == PRISM_BN_CPU_CONTENTION && pinned)
            assert_null(strstr(b[i].description, "for a CPU 0.0%"));
    }
    prism_analysis_free(a);
    tdir_remove(&d);
}

static void test_preempted_compute_is_run_queue(void **state)
{
    (void)state;
    check(true);
}

/* The same program alone (no pinning, no loop): the control. */
static void test_alone(void **state)
{
    (void)state;
    check(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preempted_compute_is_run_queue),
        cmocka_unit_test(test_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
