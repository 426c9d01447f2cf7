/*
 * verdict_comm_test.c - a rank's wait in a collective is communication,
 * not a lock (issue 26): a real C workload recorded by libcollect.
 *
 * In a forked child (one session per process), with the rank's
 * environment set as a launcher would (RANK, WORLD_SIZE), the training
 * thread runs STEPS steps: forward and backward regions that compute,
 * then a region that blocks on a pipe until a peer thread (standing for
 * the slower rank) has computed for a while and writes to it.  The same
 * program three ways:
 *
 *   all_reduce           the wait's region is named like a collective,
 *                        rank 1 of 4: communication_wait on it, never
 *                        off_cpu_wait or lock advice; the report's Job
 *                        line says rank 1 of 4 ranks
 *   layer.3 (backward)   a backward segment, rank 0 of 2, the peer thread
 *                        named like gloo's process group: communication
 *   wait_lock            the same wait under another name, no job: an
 *                        off_cpu_wait (the control), no Job line
 *
 * The peer computes (it never sleeps); the training thread's wait is a
 * read() on the pipe.  The program's own clock is the truth: it times its
 * waits, and where the trainer, starved on a busy machine, reached the
 * wait after the peer had already answered (waits under 10 % of its
 * steps), there is no wait to find and the verdict is not judged (said).
 * A profile without CPU samples skips the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"
#include "collect_util.h"
#include "prism/analysis.h"
#include "../reports/reports.h"

#define STEPS 30u

typedef struct variant {
    const char *wait_region;    /* the blocking region's name            */
    const char *peer_name;      /* the peer thread's name                */
    const char *rank, *world;   /* environment; NULL: unset              */
    const char *profile;
    double wait_share;          /* out: the waits' share of the steps, by
                                   the program's own clock               */
} variant;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct peer {
    int go[2], done[2];
    const char *name;
} peer;

/* The slower rank: per step, told to go, computes 6 ms, then answers. */
static void *peer_main(void *arg)
{
    peer *p = arg;
    prism_thread_name(p->name);
    char c;
    while (read(p->go[0], &c, 1) == 1 && c == 'g') {
        prism_push("peer_work");
        burn(6.0);
        prism_pop();
        if (write(p->done[1], "d", 1) != 1)
            break;
    }
    return NULL;
}

static int comm_child(void *arg)
{
    const variant *v = arg;
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    if (v->rank)
        setenv("RANK", v->rank, 1);
    if (v->world)
        setenv("WORLD_SIZE", v->world, 1);
    prism_config c;
    prism_config_default(&c);
    c.output = v->profile;
    CHILD_CHECK(prism_init(&c) == 0);
    CHILD_CHECK(prism_recording());
    prism_thread_name("trainer");
    peer p = { .name = v->peer_name };
    CHILD_CHECK(pipe(p.go) == 0 && pipe(p.done) == 0);
    pthread_t th;
    CHILD_CHECK(pthread_create(&th, NULL, peer_main, &p) == 0);
    uint64_t waited = 0, t_steps = mono_ns();
    for (unsigned s = 0; s < STEPS; s++) {
        prism_step_begin();
        CHILD_CHECK(write(p.go[1], "g", 1) == 1);      /* the others start */
        prism_push("forward");
        burn(1.5);
        prism_pop();
        prism_push("backward_compute");
        burn(1.5);
        prism_pop();
        prism_push(v->wait_region);                     /* wait for them */
        char ch;
        uint64_t w0 = mono_ns();
        CHILD_CHECK(read(p.done[0], &ch, 1) == 1);
        waited += mono_ns() - w0;
        prism_pop();
        prism_push("optimizer");
        burn(1.0);
        prism_pop();
        prism_step_end();
    }
    t_steps = mono_ns() - t_steps;
    CHILD_CHECK(write(p.go[1], "q", 1) == 1);
    CHILD_CHECK(pthread_join(th, NULL) == 0);
    prism_shutdown();
    char truth[600];
    snprintf(truth, sizeof truth, "%s.truth", v->profile);
    FILE *f = fopen(truth, "w");
    CHILD_CHECK(f != NULL);
    fprintf(f, "%.6f\n", t_steps ? (double)waited / (double)t_steps : 0.0);
    CHILD_CHECK(fclose(f) == 0);
    return 0;
}

/* Run the variant, analyse it; NULL (test skipped) without CPU samples. */
static prism_analysis *run(tdir *d, variant *v, const char *file)
{
    char path[512];
    tdir_file(d, file, path, sizeof path);
    v->profile = path;
    child_run_ok(comm_child, v);
    char truth[600];
    snprintf(truth, sizeof truth, "%s.truth", path);
    FILE *f = fopen(truth, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lf", &v->wait_share), 1);
    fclose(f);
    prism_status err = PRISM_OK;
    char msg[256];
    uint64_t off = 0;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    assert_non_null(a);
    v->profile = NULL;
    return a;
}

static const prism_bottleneck *find(const prism_analysis *a, prism_bottleneck_type type,
                                    size_t *count)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n), *first = NULL;
    const prism_tree *t = prism_analysis_tree(a);
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i].type == type) {
            (*count)++;
            first = first ? first : &b[i];
        }
        printf("    %-18s %-6s %-20s %5.1f%% | %s | %s | %s\n",
               prism_bottleneck_name(b[i].type), prism_severity_name(b[i].severity),
               b[i].node < t->count ? t->nodes[b[i].node].name : "-", 100.0 * b[i].share,
               b[i].description, b[i].evidence, b[i].recommendation);
    }
    return first;
}

/* The analyze report's text. */
static char *report_text(const prism_analysis *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    analyze_write_txt(m, "comm.cbor", a);
    fclose(m);
    return buf;
}

static bool skip_without_samples(prism_analysis *a, tdir *d)
{
    if (prism_analysis_cpu_present(a))
        return false;
    printf("comm: the profile holds no CPU samples: skipped\n");
    prism_analysis_free(a);
    tdir_remove(d);
    return true;
}

/* Did the trainer wait at all, by its own clock?  Not: said, not judged. */
static bool waited(const variant *v)
{
    if (v->wait_share >= 0.10)
        return true;
    printf("comm: %s: the trainer waited %.1f%% of its steps by its own clock (the peer "
           "answered before it got there on this busy machine): nothing to find, not judged\n",
           v->wait_region, 100.0 * v->wait_share);
    return false;
}

/* The wait's region is communication and nothing blames it as a lock:
 * no off_cpu_wait on it.  (The split of a sampling interval that mixes
 * the wait with the compute before it can leave a blocked share on that
 * compute region, an off_cpu_wait of its own: printed, not judged here.) */
static void check_comm(const prism_analysis *a, const char *region, const char *rank_words)
{
    size_t ncomm, n;
    const prism_bottleneck *c = find(a, PRISM_BN_COMM_WAIT, &ncomm);
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    assert_int_equal(ncomm, 1);
    for (size_t i = 0; i < n; i++) {
        if (b[i].type != PRISM_BN_OFF_CPU_WAIT)
            continue;
        assert_true(b[i].node < t->count);
        assert_string_not_equal(t->nodes[b[i].node].name, region);
    }
    assert_true(c->node < t->count);
    assert_string_equal(t->nodes[c->node].name, region);
    assert_true(c->share >= 0.05);
    assert_non_null(strstr(c->description, "Communication wait"));
    assert_non_null(strstr(c->evidence, rank_words));
    assert_non_null(strstr(c->recommendation, "slower rank"));
    assert_null(strstr(c->recommendation, "perf lock"));
    assert_null(strstr(c->recommendation, "mutrace"));
}

static void test_all_reduce(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    variant v = { "all_reduce", "peer", "1", "4", NULL, 0 };
    prism_analysis *a = run(&d, &v, "allreduce.cbor");
    if (skip_without_samples(a, &d))
        skip();
    int64_t rank;
    uint64_t world;
    assert_true(prism_analysis_job_rank(a, &rank, &world));
    assert_int_equal(rank, 1);
    assert_int_equal(world, 4);
    if (waited(&v))
        check_comm(a, "all_reduce", "rank 1 of 4");
    char *txt = report_text(a);
    assert_non_null(strstr(txt, "  Job: rank 1 of 4 ranks"));
    assert_true(!waited(&v) || strstr(txt, "communication_wait"));
    free(txt);
    prism_analysis_free(a);
    tdir_remove(&d);
}

static void test_ddp_backward(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    variant v = { "layer.3 (backward)", "ProcessGroupGloo", "0", "2", NULL, 0 };
    prism_analysis *a = run(&d, &v, "ddp.cbor");
    if (skip_without_samples(a, &d))
        skip();
    if (waited(&v))
        check_comm(a, "layer.3 (backward)", "rank 0 of 2");
    prism_analysis_free(a);
    tdir_remove(&d);
}

static void test_lock_stays_off_cpu_wait(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    variant v = { "wait_lock", "peer", NULL, NULL, NULL, 0 };
    prism_analysis *a = run(&d, &v, "lock.cbor");
    if (skip_without_samples(a, &d))
        skip();
    assert_false(prism_analysis_job_rank(a, NULL, NULL));
    size_t ncomm, nwait;
    (void)find(a, PRISM_BN_COMM_WAIT, &ncomm);
    const prism_bottleneck *w = find(a, PRISM_BN_OFF_CPU_WAIT, &nwait);
    assert_int_equal(ncomm, 0);
    if (waited(&v)) {
        assert_true(nwait >= 1);        /* the first is the largest */
        const prism_tree *t = prism_analysis_tree(a);
        assert_string_equal(t->nodes[w->node].name, "wait_lock");
        assert_non_null(strstr(w->recommendation, "perf lock"));
    }
    char *txt = report_text(a);
    assert_null(strstr(txt, "  Job:"));
    free(txt);
    prism_analysis_free(a);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_reduce),
        cmocka_unit_test(test_ddp_backward),
        cmocka_unit_test(test_lock_stays_off_cpu_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
