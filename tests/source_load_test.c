/*
 * source_load_test.c - the explorer's cooperative loading (tui/source.c):
 * a profile read in slices between refreshes of the partial analysis, as
 * the explorer's loop does it, ends with the same analysis as a one-shot
 * read (prism_analyze_file): tree, operations, steps, GPU, verdicts.  The
 * open is held back (PRISM_READ_MBPS) so that it leaves most of the file to
 * the loop, which then reads one slice (1 MB) a step: many steps, however
 * fast or slow (sanitizers) the machine is.  The profile comes from the project's own
 * writer (build/bin/refprofile: regions, steps, memory, GPU records).
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

#include "prism/analysis.h"
#include "source.h"

static char dir[] = "/tmp/prism-load-XXXXXX";
static char path[300];

static int make_profile(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    const char *b = getenv("B");
    char bin[256];
    snprintf(bin, sizeof bin, "%s/bin/refprofile", b && *b ? b : "build");
    snprintf(path, sizeof path, "%s/ref.cbor", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDOUT_FILENO);
        execl(bin, bin, "-o", path, "--steps", "6000", "--layers", "12", "--cpu", (char *)NULL);
        _exit(127);
    }
    int st;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static int remove_profile(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void same_analysis(const prism_analysis *a, const prism_analysis *w)
{
    assert_int_equal(prism_analysis_events(a), prism_analysis_events(w));
    assert_int_equal(prism_analysis_complete(a), prism_analysis_complete(w));
    const prism_tree *t = prism_analysis_tree(a), *u = prism_analysis_tree(w);
    assert_int_equal(t->count, u->count);
    assert_int_equal(t->total_ns, u->total_ns);
    for (size_t i = 0; i < t->count; i++) {
        assert_int_equal(t->nodes[i].path_hash, u->nodes[i].path_hash);
        assert_int_equal(t->nodes[i].calls, u->nodes[i].calls);
        assert_int_equal(t->nodes[i].total_ns, u->nodes[i].total_ns);
        assert_int_equal(t->nodes[i].self_ns, u->nodes[i].self_ns);
        assert_int_equal(t->nodes[i].steps_seen, u->nodes[i].steps_seen);
        assert_int_equal(t->nodes[i].oncpu_ns, u->nodes[i].oncpu_ns);
        assert_int_equal(t->nodes[i].gpu_ns, u->nodes[i].gpu_ns);
        assert_true(t->nodes[i].step_mean_ns == u->nodes[i].step_mean_ns);
    }
    size_t n, m;
    const prism_op *o = prism_analysis_ops(a, &n), *p = prism_analysis_ops(w, &m);
    assert_int_equal(n, m);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(o[i].name, p[i].name);
        assert_int_equal(o[i].calls, p[i].calls);
        assert_int_equal(o[i].total_ns, p[i].total_ns);
    }
    const prism_step_stats *s = prism_analysis_steps(a), *r = prism_analysis_steps(w);
    assert_int_equal(s->count, r->count);
    assert_int_equal(s->sampled, r->sampled);
    assert_int_equal(s->total_ns, r->total_ns);
    assert_true(s->mean_ns == r->mean_ns && s->p95_ns == r->p95_ns && s->max_ns == r->max_ns);
    const prism_gpu_stats *g = prism_analysis_gpu(a), *h = prism_analysis_gpu(w);
    assert_int_equal(g->kernel_ns, h->kernel_ns);
    assert_int_equal(g->busy_ns, h->busy_ns);
    assert_int_equal(g->launches, h->launches);
    assert_int_equal(prism_analysis_memory(a)->count, prism_analysis_memory(w)->count);
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n), *c = prism_analysis_bottlenecks(w, &m);
    assert_int_equal(n, m);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(b[i].type, c[i].type);
        assert_string_equal(b[i].description, c[i].description);
    }
}

static prism_analysis *one_shot(void)
{
    prism_status err;
    char msg[200];
    uint64_t off;
    prism_analysis *w = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    if (!w)
        fail_msg("%s: %s", path, msg);
    return w;
}

/* The explorer's loop: a slice, then (as before a key or a redraw) the
 * partial analysis refreshed and looked at. */
static void test_sliced_load_equals_one_shot(void **state)
{
    (void)state;
    setenv("PRISM_READ_MBPS", "12", 1);
    source s;
    assert_int_equal(source_open(&s, path, SRC_AUTO, NULL), 0);
    assert_true(s.loading);             /* ~6 MB at 12 MB/s: not in 100 ms */
    s.read_mbps = 0;                    /* then one slice a step */
    char head[32], detail[160];
    uint64_t events = 0, steps = 0;
    unsigned turns = 0, grew = 0;
    while (s.loading) {
        int r = source_load_step(&s, 0);
        assert_false(r & SRC_LOAD_FAILED);
        if (!s.loading)
            break;
        assert_true(source_progress(&s, head, sizeof head, detail, sizeof detail));
        assert_memory_equal(head, "LOADING ", 8);
        assert_non_null(strstr(detail, " events"));
        source_sync(&s);
        const prism_tree *t = prism_analysis_tree(s.a);
        for (size_t i = 0; i < t->count; i++) {    /* a snapshot holds together */
            uint32_t par = t->nodes[i].parent;
            if (par != PRISM_NO_NODE)
                assert_true(t->nodes[i].total_ns <= t->nodes[par].total_ns);
        }
        assert_true(prism_analysis_events(s.a) >= events);
        assert_true(prism_analysis_steps(s.a)->count >= steps);
        grew += prism_analysis_events(s.a) > events;
        events = prism_analysis_events(s.a);
        steps = prism_analysis_steps(s.a)->count;
        turns++;
    }
    unsetenv("PRISM_READ_MBPS");
    assert_true(turns > 3 && grew > 2); /* it did show partial data */
    assert_false(source_progress(&s, head, sizeof head, detail, sizeof detail));
    assert_true(s.complete);
    assert_false(s.following);
    assert_false(s.stale);
    prism_analysis *w = one_shot();
    same_analysis(s.a, w);
    prism_analysis_free(w);
    source_close(&s);
}

/* Compare mode reads both files whole before showing them. */
static void test_load_all_equals_one_shot(void **state)
{
    (void)state;
    setenv("PRISM_READ_MBPS", "30", 1);
    source s;
    assert_int_equal(source_open(&s, path, SRC_NO_FOLLOW, NULL), 0);
    assert_true(s.loading);
    assert_int_equal(source_load_all(&s), 0);
    unsetenv("PRISM_READ_MBPS");
    assert_false(s.loading);
    prism_analysis *w = one_shot();
    same_analysis(s.a, w);
    prism_analysis_free(w);
    source_close(&s);
}

/* Closing while loading frees everything (ASan/LSan watch this). */
static void test_close_while_loading(void **state)
{
    (void)state;
    setenv("PRISM_READ_MBPS", "8", 1);
    source s;
    assert_int_equal(source_open(&s, path, SRC_AUTO, NULL), 0);
    assert_true(s.loading);
    source_load_step(&s, 1000000);
    unsetenv("PRISM_READ_MBPS");
    source_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sliced_load_equals_one_shot),
        cmocka_unit_test(test_load_all_equals_one_shot),
        cmocka_unit_test(test_close_while_loading),
    };
    return cmocka_run_group_tests(tests, make_profile, remove_profile);
}
