/*
 * verdict_live_test.c - a real input-bound program recorded by libcollect
 * and judged by the analysis: the verdict must come from what the threads
 * did, measured by PRISM's CPU sampling.
 *
 * In a forked child (one session per process): two producer threads
 * compute batches (busy loops on CPU, ~15 ms of CPU time per batch) into a
 * bounded queue (mutex + condition variables); the training thread, for 40
 * steps, pops a batch inside a region `pull` at the start of each step and
 * then computes ~2 ms in `crunch`.  The producers cannot keep up, so the
 * training thread spends most of each step blocked in `pull` while they
 * run.  The condition variables order the threads; nothing sleeps.
 *
 * Robust facts only: the verdicts hold a data_loading finding blaming
 * `pull` with a share of the step above 50 %.  A file without CPU samples
 * (the collector cannot sample) skips the test with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <time.h>

#include "burn.h"
#include "collect_util.h"
#include "prism/analysis.h"

#define STEPS 40u
#define PRODUCERS 2u
#define BATCH_CPU_MS 15.0
#define CRUNCH_CPU_MS 2.0
#define QUEUE_CAP 2u

typedef struct queue {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    unsigned n;
    bool stop;
} queue;

typedef struct producer_arg {
    queue *q;
    unsigned idx;
} producer_arg;

static void *producer(void *arg)
{
    producer_arg *p = arg;
    char name[32];
    snprintf(name, sizeof name, "feeder-%u", p->idx);
    prism_thread_name(name);
    uint32_t make = prism_name("make_batch");
    for (;;) {
        prism_push_id(make);
        burn(BATCH_CPU_MS);
        prism_pop();
        pthread_mutex_lock(&p->q->mu);
        while (p->q->n == QUEUE_CAP && !p->q->stop)
            pthread_cond_wait(&p->q->not_full, &p->q->mu);
        bool stop = p->q->stop;
        if (!stop) {
            p->q->n++;
            pthread_cond_signal(&p->q->not_empty);
        }
        pthread_mutex_unlock(&p->q->mu);
        if (stop)
            break;
    }
    return NULL;
}

static int live_child(void *arg)
{
    prism_config c;
    prism_config_default(&c);
    c.output = arg;
    CHILD_CHECK(prism_init(&c) == 0);
    CHILD_CHECK(prism_recording());
    prism_thread_name("trainer");
    uint32_t pull = prism_name("pull"), crunch = prism_name("crunch");
    CHILD_CHECK(pull && crunch);

    queue q = { .n = 0, .stop = false };
    CHILD_CHECK(pthread_mutex_init(&q.mu, NULL) == 0);
    CHILD_CHECK(pthread_cond_init(&q.not_empty, NULL) == 0);
    CHILD_CHECK(pthread_cond_init(&q.not_full, NULL) == 0);
    pthread_t th[PRODUCERS];
    producer_arg pa[PRODUCERS];
    for (unsigned i = 0; i < PRODUCERS; i++) {
        pa[i] = (producer_arg){ &q, i };
        CHILD_CHECK(pthread_create(&th[i], NULL, producer, &pa[i]) == 0);
    }
    for (unsigned s = 0; s < STEPS; s++) {
        prism_step_begin();
        prism_push_id(pull);
        pthread_mutex_lock(&q.mu);
        while (q.n == 0)
            pthread_cond_wait(&q.not_empty, &q.mu);
        q.n--;
        pthread_cond_signal(&q.not_full);
        pthread_mutex_unlock(&q.mu);
        prism_pop();
        prism_push_id(crunch);
        burn(CRUNCH_CPU_MS);
        prism_pop();
        prism_step_end();
    }
    pthread_mutex_lock(&q.mu);
    q.stop = true;
    pthread_cond_broadcast(&q.not_full);
    pthread_mutex_unlock(&q.mu);
    for (unsigned i = 0; i < PRODUCERS; i++)
        CHILD_CHECK(pthread_join(th[i], NULL) == 0);
    prism_shutdown();
    return 0;
}

static void count_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    (void)s;
    *(uint64_t *)ctx += n;
}

static void test_live_input_bound(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "live.cbor", path, sizeof path);
    child_run_ok(live_child, path);

    uint64_t samples = 0;
    prism_reader_callbacks cb = { .cpu = count_cpu };
    prism_reader *r = NULL;
    assert_int_equal(prism_read_file(path, &cb, &samples, &r), PRISM_OK);
    prism_reader_free(r);
    if (!samples) {
        printf("live: the profile holds no CPU samples (PRISM's CPU sampling is not "
               "available here): skipped\n");
        tdir_remove(&d);
        skip();
    }

    prism_status err = PRISM_OK;
    char msg[256];
    uint64_t off = 0;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    if (!a)
        print_error("analyze %s: %s at %llu\n", path, msg, (unsigned long long)off);
    assert_non_null(a);
    const prism_step_stats *st = prism_analysis_steps(a);
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    printf("live: %llu steps, mean %.2f ms, %llu CPU samples, %zu findings\n",
           (unsigned long long)st->count, st->mean_ns / 1e6, (unsigned long long)samples, n);
    const prism_bottleneck *found = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *region = b[i].node < t->count ? t->nodes[b[i].node].name : "-";
        printf("    %-14s %-6s %-12s %5.1f%%  | %s\n", prism_bottleneck_name(b[i].type),
               prism_severity_name(b[i].severity), region, 100.0 * b[i].share,
               b[i].description);
        if (!found && b[i].type == PRISM_BN_DATA_LOADING && !strcmp(region, "pull"))
            found = &b[i];
    }
    bool have = found != NULL, ok = have && found->share > 0.5;
    if (have)
        printf("  verdict: data_loading %s pull %.1f%% (want > 50%%)  [%s]\n",
               prism_severity_name(found->severity), 100.0 * found->share, ok ? "ok" : "WRONG");
    else
        printf("  verdict: data_loading on pull missing  [WRONG]\n");
    prism_analysis_free(a);
    tdir_remove(&d);
    assert_true(have);
    assert_true(ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_input_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
