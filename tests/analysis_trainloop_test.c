/*
 * analysis_trainloop_test.c - the bottleneck rules on real profiles: the
 * sample training loop (build/bin/trainloop, written through libcollect) is
 * run with each planted bottleneck, and the analysis must name the right
 * type and blame the right region.  The plants are large (a stall or slow
 * input as long as a whole step of work, a 16 MB/step leak) so the
 * verdicts do not depend on how fast or loaded the machine is; nothing is
 * asserted about times themselves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>

#include "prism/analysis.h"

static char dir[] = "/tmp/prism-tl-XXXXXX";

/* Run trainloop with extra flags into dir/name; the analysis of the file. */
static prism_analysis *run_trainloop(const char *name, const char *const *flags)
{
    const char *b = getenv("B");
    char bin[256], out[300];
    snprintf(bin, sizeof bin, "%s/bin/trainloop", b && *b ? b : "build");
    snprintf(out, sizeof out, "%s/%s.cbor", dir, name);
    const char *argv[16] = { bin, "--output", out, "--epochs", "1", "--steps", "24", "--seed", "7" };
    int n = 9;
    for (int i = 0; flags[i] && n < 15; i++)
        argv[n++] = flags[i];
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDOUT_FILENO);
        unsetenv("PRISM_OUTPUT");        /* the sample's own --output decides */
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    prism_status err;
    char msg[200];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(out, NULL, &err, msg, sizeof msg, &off);
    if (!a)
        fail_msg("%s: %s at byte %llu", out, msg, (unsigned long long)off);
    assert_true(prism_analysis_complete(a));
    return a;
}

static const prism_bottleneck *find(const prism_analysis *a, prism_bottleneck_type type)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++)
        if (b[i].type == type)
            return &b[i];
    return NULL;
}

/* The leaf name of a bottleneck's blamed node, or "". */
static const char *blamed(const prism_analysis *a, const prism_bottleneck *b)
{
    const prism_tree *t = prism_analysis_tree(a);
    return b && b->node < t->count ? t->nodes[b->node].name : "";
}

static void test_clean_run(void **state)
{
    (void)state;
    static const char *const none[] = { NULL };
    prism_analysis *a = run_trainloop("clean", none);
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++) {
        /* the genuinely dominant work (matmul, the phases around it) may be
         * hot; and on a busy machine (other jobs, the test suite's own
         * parallel build) the thread truly waits for a CPU: cpu_contention
         * then describes the machine, not the program, and so may steps
         * slowed by it (slow_steps).  Nothing else may be called HIGH. */
        if (b[i].severity == PRISM_SEV_HIGH && b[i].type != PRISM_BN_HOT_OPERATION &&
            b[i].type != PRISM_BN_CPU_CONTENTION && b[i].type != PRISM_BN_SLOW_STEPS)
            fail_msg("clean run: HIGH %s: %s", prism_bottleneck_name(b[i].type), b[i].description);
    }
    assert_null(find(a, PRISM_BN_MEMORY_LEAK));
    assert_null(find(a, PRISM_BN_CPU_GPU_SYNC));
    assert_null(find(a, PRISM_BN_DATA_LOADING));
    assert_null(find(a, PRISM_BN_DROPPED_EVENTS));
    assert_null(find(a, PRISM_BN_MEMORY_BOUND));  /* matmul's intensity is above the ridge */
    assert_true(prism_analysis_work(a)->present);
    const prism_bottleneck *hot = find(a, PRISM_BN_HOT_OPERATION);
    assert_non_null(hot);                       /* the heaviest op is named */
    prism_analysis_free(a);
}

static void test_memory_leak(void **state)
{
    (void)state;
    static const char *const leak[] = { "--leak-mb", "16", NULL };
    prism_analysis *a = run_trainloop("leak", leak);
    const prism_bottleneck *b = find(a, PRISM_BN_MEMORY_LEAK);
    assert_non_null(b);
    assert_int_equal(b->severity, PRISM_SEV_HIGH);
    const prism_memory_stats *m = prism_analysis_memory(a);
    assert_true(m->host.leak);
    /* 16 MB are allocated and touched every step */
    assert_true(m->host.slope_mb_per_step > 12.0 && m->host.slope_mb_per_step < 20.0);
    assert_true(m->host.r2 > 0.9);
    prism_analysis_free(a);
}

static void test_sync_stall(void **state)
{
    (void)state;
    static const char *const sync[] = { "--sync-stall-ms", "40", NULL };
    prism_analysis *a = run_trainloop("sync", sync);
    const prism_bottleneck *b = find(a, PRISM_BN_CPU_GPU_SYNC);
    assert_non_null(b);
    assert_string_equal(blamed(a, b), "synchronize");
    assert_null(find(a, PRISM_BN_MEMORY_LEAK));
    prism_analysis_free(a);
}

static void test_slow_data(void **state)
{
    (void)state;
    static const char *const slow[] = { "--slow-data-ms", "40", NULL };
    prism_analysis *a = run_trainloop("slow", slow);
    const prism_bottleneck *b = find(a, PRISM_BN_DATA_LOADING);
    assert_non_null(b);
    /* the region that waits: with CPU samples the one inside "data_loading"
     * where the thread sleeps, without them data_loading itself */
    const prism_tree *t = prism_analysis_tree(a);
    bool inside = false;
    for (uint32_t q = b->node; q < t->count && !inside; q = t->nodes[q].parent)
        inside = !strcmp(t->nodes[q].name, "data_loading");
    assert_true(inside);
    assert_null(find(a, PRISM_BN_CPU_GPU_SYNC));
    prism_analysis_free(a);
}

static void test_memory_bound(void **state)
{
    (void)state;
    static const char *const mb[] = { "--memory-bound-mb", "16", NULL };
    prism_analysis *a = run_trainloop("membound", mb);
    const prism_bottleneck *b = find(a, PRISM_BN_MEMORY_BOUND);
    assert_non_null(b);
    assert_string_equal(blamed(a, b), "normalize");
    assert_true(b->share >= 0.02);      /* severity follows the share: machine-dependent */
    /* its counters: 3 FLOP per 8 bytes */
    const prism_tree *t = prism_analysis_tree(a);
    const prism_node *n = &t->nodes[b->node];
    assert_true(n->bytes > 0 && fabs(n->flops / n->bytes - 0.375) < 1e-9);
    /* matmul (12.8 FLOP/byte at batch 32) stays above the default ridge */
    size_t nb;
    const prism_bottleneck *all = prism_analysis_bottlenecks(a, &nb);
    for (size_t i = 0; i < nb; i++)
        if (all[i].type == PRISM_BN_MEMORY_BOUND)
            assert_string_not_equal(blamed(a, &all[i]), "matmul");
    assert_true(prism_analysis_work(a)->unattributed_bytes == 0);
    prism_analysis_free(a);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const names[] = { "clean", "leak", "sync", "slow" };
    char p[300];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s.cbor", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_run),
        cmocka_unit_test(test_memory_leak),
        cmocka_unit_test(test_sync_stall),
        cmocka_unit_test(test_slow_data),
        cmocka_unit_test(test_memory_bound),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
