/*
 * analysis_load_test.c - who took the CPUs (prism_cpu_load, the
 * cpu_contention finding's evidence and advice), on real programs recorded
 * by libcollect, each the test's own workload in a forked child (one
 * session per process):
 *
 *   beside hogs    the workload trains (each step burns its own thread's
 *                  CPU time) while busy-loop processes started by the test
 *                  (at least two, at least one a core: more want to run
 *                  than there are cores) take the machine.  Other processes
 *                  come out as the largest taker besides the training
 *                  thread, in the summary's figures and, when the finding
 *                  is there, in cpu_contention's evidence and advice.
 *   own workers    the workload forks two child processes that burn a
 *                  known amount of CPU by their own clock while it trains,
 *                  then reaps them before it stops.  Its worker processes'
 *                  CPU is counted, within a loose bound of what the
 *                  children burned by their own clock.
 *
 * No sleeps, no timing assertions beyond comparisons with the workloads'
 * own clocks.  A kernel without the files the collector reads (the machine
 * load unknown) skips, saying so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hogs.h"
#include "burn.h"
#include "collect_util.h"
#include "pbuild.h"
#include "prism/analysis.h"

#define STEPS 60u
#define STEP_MS 4.0             /* the training thread's CPU per step   */
#define KIDS 2u
#define KID_MS 150.0            /* each worker process's CPU            */
#define MAX_HOGS 64

typedef struct child_arg {
    const char *profile, *truth;
    unsigned kids;              /* worker processes to fork             */
} child_arg;

static double process_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The workload: worker processes that burn KID_MS each and report their
 * own CPU clock through a pipe, and STEPS steps on the training thread;
 * the workers are reaped before the session stops.  The truth file holds
 * the workers' CPU, ms. */
static int load_child(void *arg)
{
    const child_arg *ca = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = ca->profile;
    CHILD_CHECK(prism_init(&c) == 0);
    CHILD_CHECK(prism_recording());
    prism_thread_name("trainer");
    int fd[2];
    CHILD_CHECK(pipe(fd) == 0);
    pid_t kid[KIDS];
    for (unsigned k = 0; k < ca->kids && k < KIDS; k++) {
        kid[k] = fork();
        CHILD_CHECK(kid[k] >= 0);
        if (kid[k] == 0) {
            burn(KID_MS);
            double ms = process_cpu_ms();
            _exit(write(fd[1], &ms, sizeof ms) == (ssize_t)sizeof ms ? 0 : 3);
        }
    }
    uint32_t compute = prism_name("compute");
    CHILD_CHECK(compute);
    for (unsigned s = 0; s < STEPS; s++) {
        prism_step_begin();
        prism_push_id(compute);
        burn(STEP_MS);
        prism_pop();
        prism_step_end();
    }
    double kids_ms = 0;
    for (unsigned k = 0; k < ca->kids && k < KIDS; k++) {
        double ms;
        CHILD_CHECK(read(fd[0], &ms, sizeof ms) == (ssize_t)sizeof ms);
        kids_ms += ms;
    }
    for (unsigned k = 0; k < ca->kids && k < KIDS; k++) {
        int st;
        CHILD_CHECK(waitpid(kid[k], &st, 0) == kid[k] && WIFEXITED(st) &&
                    WEXITSTATUS(st) == 0);
    }
    prism_shutdown();
    FILE *f = fopen(ca->truth, "w");
    CHILD_CHECK(f != NULL);
    fprintf(f, "%.3f\n", kids_ms);
    CHILD_CHECK(fclose(f) == 0);
    return 0;
}

/* ---- hogs, stopped in the teardown whatever happened ---------------------- */

static pid_t hog[MAX_HOGS];
static size_t nhog;

static void hogs_up(void)
{
    nhog = hogs_start(hog, MAX_HOGS);
    assert_true(nhog >= 2);
}

static int hogs_down(void **state)
{
    (void)state;
    hogs_stop(hog, nhog);
    nhog = 0;
    return 0;
}

/* ---- checks --------------------------------------------------------------- */

static prism_analysis *analyze(const char *path)
{
    prism_status err = PRISM_OK;
    char msg[256];
    uint64_t off = 0;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    if (!a)
        print_error("analyze %s: %s at %llu\n", path, msg, (unsigned long long)off);
    assert_non_null(a);
    return a;
}

static void print_load(const char *label, const prism_cpu_load *l)
{
    printf("%s: ncpu %u over %.0f ms: machine %.2f, process %.2f (training %.2f, other "
           "threads %.2f, unrecorded %.2f), workers %.2f, others %.2f\n", label, l->ncpu,
           l->span_ns / 1e6, l->machine, l->process, l->training, l->other_threads,
           l->unrecorded, l->workers, l->others);
}

static void test_other_processes_beside_hogs(void **state)
{
    (void)state;
    tdir d;
    char path[512], truth[512];
    tdir_make(&d);
    tdir_file(&d, "hogs.cbor", path, sizeof path);
    tdir_file(&d, "truth.txt", truth, sizeof truth);
    hogs_up();
    child_arg ca = { path, truth, 0 };
    child_run_ok(load_child, &ca);
    hogs_down(NULL);

    prism_analysis *a = analyze(path);
    const prism_cpu_load *l = prism_analysis_cpu_load(a);
    print_load("beside hogs", l);
    if (l->machine < 0) {
        printf("beside hogs: the machine's load was not recorded (/proc/stat): skipped\n");
        prism_analysis_free(a);
        tdir_remove(&d);
        skip();
    }
    assert_true(l->ncpu > 0);
    assert_true(l->process > 0);
    assert_true(l->workers >= 0);
    /* other processes: the largest taker besides the training thread */
    double own = l->process - (l->training >= 0 ? l->training : 0);
    assert_true(l->others > 0);
    assert_true(l->others > l->workers);
    assert_true(l->others > own);
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++) {
        if (b[i].type != PRISM_BN_CPU_CONTENTION)
            continue;
        printf("  cpu_contention: %s | %s\n", b[i].evidence, b[i].recommendation);
        assert_non_null(strstr(b[i].evidence, "other processes"));
        assert_non_null(strstr(b[i].recommendation, "Other processes took most"));
    }
    prism_analysis_free(a);
    tdir_remove(&d);
}

static void test_own_worker_processes(void **state)
{
    (void)state;
    tdir d;
    char path[512], truth[512];
    tdir_make(&d);
    tdir_file(&d, "workers.cbor", path, sizeof path);
    tdir_file(&d, "truth.txt", truth, sizeof truth);
    child_arg ca = { path, truth, KIDS };
    child_run_ok(load_child, &ca);
    double kids_ms = 0;
    FILE *f = fopen(truth, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lf", &kids_ms), 1);
    fclose(f);
    assert_true(kids_ms >= KIDS * KID_MS);

    prism_analysis *a = analyze(path);
    const prism_cpu_load *l = prism_analysis_cpu_load(a);
    print_load("own workers", l);
    if (l->workers < 0) {
        printf("own workers: the children's CPU was not recorded (/proc/PID/task/TID/"
               "children): skipped\n");
        prism_analysis_free(a);
        tdir_remove(&d);
        skip();
    }
    double got_ms = l->workers * l->span_ns / 1e6;
    printf("  worker processes %.1f ms by PRISM, %.1f ms by their own clock\n", got_ms,
           kids_ms);
    assert_true(got_ms > 0);
    /* loose: tick accounting (10 ms a tick per child), and what the children
     * ran before the first reading of the load */
    assert_true(got_ms >= 0.5 * kids_ms);
    assert_true(got_ms <= 1.5 * kids_ms + 20.0 * KIDS);
    /* the workers are not this process: its own figure stays near one core */
    assert_true(l->process >= 0);
    assert_true(l->workers + l->process <= l->machine + 0.5);
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* A 1.1 profile (memory samples without the machine's load): the figures
 * it cannot know are unknown, and cpu_contention says so once. */
static void test_load_unknown(void **state)
{
    (void)state;
    prism_analysis *a = prism_analysis_new(NULL);
    assert_non_null(a);
    prism_reader_callbacks cb;
    prism_analysis_callbacks(&cb);
    prism_memory_sample m = { .ts = 1000, .step = PRISM_NO_STEP, .rss = 1,
                              .cpu_permille = PRISM_NO_CPU };
    cb.memory(a, &m);
    m.ts = 1000001000;
    m.cpu_permille = 1500;
    cb.memory(a, &m);
    prism_analysis_refresh(a);
    const prism_cpu_load *l = prism_analysis_cpu_load(a);
    assert_int_equal(l->ncpu, 0);
    assert_true(l->machine < 0 && l->workers < 0 && l->others < 0);
    assert_true(l->process > 1.49 && l->process < 1.51);
    prism_analysis_free(a);
}

/* A built profile: 20 steps of 10 ms in one region, the training thread
 * waiting for a CPU half of the time (CPU samples every 5 ms), and memory
 * samples at the step ends with the process at 0.6 cores and, when ncpu,
 * the machine's load (busy permille, children permille). */
static loaded contended(uint32_t ncpu, uint32_t busy, uint32_t kids)
{
    static const char *const names[] = { "work" };
    const uint64_t MS = 1000000u;
    pbuild b;
    pb_init(&b, names, 1, 5);
    pb_thread(&b, 1, "main");
    pb_info_text(&b, "cpu.sampler", "schedstat (built)");
    for (uint64_t s = 0; s < 20; s++) {
        uint64_t t0 = 1 * MS + s * 10 * MS;
        pb_enter(&b, 1, t0, 1);
        pb_exit(&b, 1, t0 + 10 * MS);
        prism_step st = { t0, t0 + 10 * MS, s, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    for (uint64_t k = 0; k <= 42; k++) {
        prism_cpu_sample c = { .ts = k * 5 * MS, .stream = 1, .flags = PRISM_CPU_HAVE_WAIT,
                               .oncpu_ns = k * 5 * MS / 2, .wait_ns = k * 5 * MS / 2 };
        pb_cpu(&b, &c);
    }
    for (uint64_t s = 0; s <= 20; s++) {
        prism_memory_sample m = { .ts = 1 * MS + s * 10 * MS, .step = s ? s - 1 : PRISM_NO_STEP,
                                  .rss = 1 << 20, .cpu_permille = s ? 600 : PRISM_NO_CPU,
                                  .ncpu = ncpu, .host_busy_permille = s ? busy : PRISM_NO_CPU,
                                  .children_cpu_permille = s ? kids : PRISM_NO_CPU };
        pb_memory(&b, &m);
    }
    return pb_load(&b);
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* cpu_contention's evidence and advice from the load: unknown (1.1), other
 * processes the largest, the worker processes the largest. */
static void test_contention_names_the_taker(void **state)
{
    (void)state;
    loaded l = contended(0, 0, 0);
    const prism_bottleneck *b = pb_finding(l.a, PRISM_BN_CPU_CONTENTION);
    assert_non_null(b);
    printf("  1.1: %s\n", b->evidence);
    /* the whole wait as the headline gives it, in one unit throughout (it
     * read "0 ns/step ..., most in 'work' (100.0 ms)" with all of it in the
     * hot operation) */
    assert_non_null(strstr(b->evidence, "runnable but not running 5.00 ms/step over 20 steps, "
                                        "5.00 ms/step of it in the hot operations above, most "
                                        "in 'work' (5.00 ms/step)"));
    assert_int_equal(count(b->evidence, "worker processes and the rest of the machine: not "
                                        "recorded"), 1);
    assert_non_null(strstr(b->evidence, "this process ran 0.6 cores"));
    assert_null(strstr(b->recommendation, "Other processes took"));
    unload(&l);

    l = contended(2, 2000, 100);
    b = pb_finding(l.a, PRISM_BN_CPU_CONTENTION);
    assert_non_null(b);
    const prism_cpu_load *ld = prism_analysis_cpu_load(l.a);
    print_load("  others", ld);
    assert_true(ld->machine > 1.99 && ld->machine < 2.01);
    assert_true(ld->others > 1.29 && ld->others < 1.31);    /* 2.0 - 0.6 - 0.1 */
    assert_true(ld->training > 0.49 && ld->training < 0.51);
    printf("  others: %s | %s\n", b->evidence, b->recommendation);
    assert_non_null(strstr(b->evidence, "2 cores ran 2.0: this process 0.6"));
    assert_non_null(strstr(b->evidence, "other processes 1.3"));
    assert_null(strstr(b->evidence, "not recorded"));
    assert_non_null(strstr(b->recommendation, "Other processes took most"));
    unload(&l);

    l = contended(2, 2000, 1300);
    b = pb_finding(l.a, PRISM_BN_CPU_CONTENTION);
    assert_non_null(b);
    printf("  workers: %s | %s\n", b->evidence, b->recommendation);
    assert_non_null(strstr(b->evidence, "worker processes 1.3, other processes 0.1"));
    assert_non_null(strstr(b->recommendation, "child processes took 1.3 cores"));
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_other_processes_beside_hogs, hogs_down),
        cmocka_unit_test(test_own_worker_processes),
        cmocka_unit_test(test_load_unknown),
        cmocka_unit_test(test_contention_names_the_taker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
