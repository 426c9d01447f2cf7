/*
 * collect_threads_test.c - many threads recording at once, with budgets
 * from generous to starved, under both buffer policies.
 *
 * Each scenario runs in a forked child (one session per process): K worker
 * threads (K = 1, 4, 16, 64) each push and pop 20000+ nested regions and
 * record marks and counters, then the child shuts down.  The parent reads
 * the profile and checks, per thread stream:
 *   - every record is accounted for, exactly: written + dropped == produced
 *     (a region enter or exit, a mark and a counter are one record each);
 *   - nothing is dropped where the budget cannot run out (the default
 *     budget) or the policy waits; then the nesting (which name at which
 *     depth), enter/exit balance and counter values are exactly as produced;
 *   - timestamps never go backwards, chunk sequence numbers have no gaps and
 *     follow file order, the writer's depth agrees with the reader's;
 *   - the footer is there once, last, and its counts match the file;
 *   - the names given with prism_thread_name are in THREADS records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>

#include "collect_util.h"

#define ITERS 5000u             /* 4 push/pop pairs each: 20000+ per thread */
#define EVERY 64u               /* a mark and two counters every EVERY iters */

typedef enum mode {
    MODE_DEFAULT,               /* DROP, default budget: it never runs out   */
    MODE_WAIT,                  /* WAIT, a budget that must be recycled      */
    MODE_TINY,                  /* DROP, 64-event buffers, 1 MB              */
    MODE_STARVED                /* DROP, two buffers for all threads         */
} mode;

typedef struct scenario {
    unsigned k;
    mode m;
    char path[512];
} scenario;

typedef struct expect {
    uint64_t iters, ticks;      /* loop iterations, of which with counters  */
    uint64_t regions, marks, counters;
    uint64_t records;           /* regions + marks + counters               */
} expect;

/* Threads do slightly different amounts, so a mix-up of streams shows. */
static expect expected(unsigned idx)
{
    expect e;
    e.iters = ITERS + 7u * idx;
    e.ticks = (e.iters + EVERY - 1) / EVERY;
    e.regions = 8 * e.iters;
    e.marks = e.ticks;
    e.counters = 2 * e.ticks;
    e.records = e.regions + e.marks + e.counters;
    return e;
}

typedef struct worker_arg {
    unsigned idx;
    pthread_barrier_t *start, *end;
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    char name[32];
    snprintf(name, sizeof name, "worker-%u", w->idx);
    prism_thread_name(name);
    uint32_t outer = prism_name("outer"), sib = prism_name("sibling");
    uint32_t tick = prism_name("tick"), iter = prism_name("iter"), loss = prism_name("loss");
    CHILD_CHECK(outer && sib && tick && iter && loss);
    pthread_barrier_wait(w->start);
    uint64_t n = expected(w->idx).iters;
    for (uint64_t i = 0; i < n; i++) {
        prism_push_id(outer);
        {
            PRISM_ZONE("middle");
            prism_push("inner");
            prism_pop();
        }
        prism_push_id(sib);
        prism_pop();
        prism_pop();
        if (i % EVERY == 0) {
            prism_mark_id(tick);
            prism_counter_i(iter, (int64_t)i);
            prism_counter_f(loss, 1.0 / (double)(i + 1));
        }
    }
    /* Nobody exits before everybody is done: in the starved budget no
     * buffer comes back before the end, whatever the scheduling. */
    pthread_barrier_wait(w->end);
    return NULL;
}

static int threads_child(void *arg)
{
    const scenario *sc = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = sc->path;
    c.collect_memory = false;
    switch (sc->m) {
    case MODE_DEFAULT:
        break;
    case MODE_WAIT:
        c.policy = PRISM_POLICY_WAIT;
        c.buffer_events = 1024;
        c.buffer_mb = 4;
        break;
    case MODE_TINY:
        c.buffer_events = 64;
        c.buffer_mb = 1;
        break;
    case MODE_STARVED:
        c.buffer_events = 65536;        /* 1 MB each: budget for the minimum, 2 */
        c.buffer_mb = 1;
        break;
    }
    CHILD_CHECK(prism_init(&c) == 0);
    CHILD_CHECK(prism_recording());
    pthread_barrier_t start, end;
    CHILD_CHECK(pthread_barrier_init(&start, NULL, sc->k) == 0);
    CHILD_CHECK(pthread_barrier_init(&end, NULL, sc->k) == 0);
    pthread_t th[64];
    worker_arg wa[64];
    CHILD_CHECK(sc->k <= 64);
    for (unsigned i = 0; i < sc->k; i++) {
        wa[i] = (worker_arg){ i, &start, &end };
        CHILD_CHECK(pthread_create(&th[i], NULL, worker, &wa[i]) == 0);
    }
    for (unsigned i = 0; i < sc->k; i++)
        CHILD_CHECK(pthread_join(th[i], NULL) == 0);
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&end);
    prism_shutdown();
    return 0;
}

static void run_scenario(unsigned k, mode m)
{
    tdir d;
    tdir_make(&d);
    scenario sc = { k, m, "" };
    tdir_file(&d, "threads.cbor", sc.path, sizeof sc.path);
    psum *p = psum_from_child(threads_child, &sc, sc.path, false);
    assert_int_equal(p->footers, 1);
    assert_true(p->footer.clean);
    uint32_t outer = psum_id(p, "outer"), middle = psum_id(p, "middle");
    uint32_t inner = psum_id(p, "inner"), sib = psum_id(p, "sibling");
    assert_true(outer && middle && inner && sib);
    assert_true(outer < PS_NAMES && middle < PS_NAMES && inner < PS_NAMES && sib < PS_NAMES);

    uint32_t streams[64];
    uint64_t written_all = 0, starved = 0;
    for (unsigned i = 0; i < k; i++) {
        char name[32];
        snprintf(name, sizeof name, "worker-%u", i);
        uint32_t st = psum_stream_named(p, name);
        assert_int_not_equal(st, 0);
        for (unsigned j = 0; j < i; j++)
            assert_int_not_equal(streams[j], st);
        streams[i] = st;
        const ps_stream *s = &p->s[st];
        const expect e = expected(i);
        assert_int_not_equal(s->os_tid, 0);
        uint64_t written = s->enters + s->exits + s->marks + s->counters;
        written_all += written;
        if (written + s->dropped != e.records)
            print_error("k=%u mode=%d worker %u: %llu written + %llu dropped != %llu\n", k,
                        (int)m, i, (unsigned long long)written, (unsigned long long)s->dropped,
                        (unsigned long long)e.records);
        /* every record produced is written or counted as dropped */
        assert_int_equal(written + s->dropped, e.records);
        assert_int_equal(s->int_not_increasing, 0);
        if (m == MODE_DEFAULT || m == MODE_WAIT || (m == MODE_STARVED && k <= 2))
            assert_int_equal(s->dropped, 0);
        if (s->dropped == 0) {
            assert_int_equal(s->enters, e.regions / 2);
            assert_int_equal(s->exits, e.regions / 2);
            assert_int_equal(s->marks, e.marks);
            assert_int_equal(s->counters_i, e.ticks);
            assert_int_equal(s->counters_f, e.ticks);
            assert_int_equal(s->last_int, (int64_t)((e.ticks - 1) * EVERY));
            assert_int_equal(s->depth, 0);
            assert_int_equal(s->max_depth, 3);
            assert_int_equal(s->exits_at_zero, 0);
            assert_int_equal(s->by_depth[0][outer], e.iters);
            assert_int_equal(s->by_depth[1][middle], e.iters);
            assert_int_equal(s->by_depth[1][sib], e.iters);
            assert_int_equal(s->by_depth[2][inner], e.iters);
        }
        if (written == 0 && s->dropped == e.records)
            starved++;
    }
    /* nothing but the workers recorded */
    assert_int_equal(written_all, p->events);
    if (m == MODE_STARVED && k > 2)
        assert_true(starved >= k - 2);       /* two buffers: two threads at most */
    psum_free(p);
    tdir_remove(&d);
}

static const unsigned ks[] = { 1, 4, 16, 64 };

static void test_drop_default_budget(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        run_scenario(ks[i], MODE_DEFAULT);
}

static void test_wait_policy(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        run_scenario(ks[i], MODE_WAIT);
}

static void test_drop_tiny_budget(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        run_scenario(ks[i], MODE_TINY);
}

static void test_drop_starved(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        run_scenario(ks[i], MODE_STARVED);
}

/* ---- buffers coming back, and the WAIT policy's bound ------------------ */

#define SMALL_PAIRS 1000u

typedef struct small_arg {
    unsigned idx;
    pthread_barrier_t *end;     /* NULL: exit at once */
} small_arg;

static void *small_worker(void *arg)
{
    small_arg *a = arg;
    char name[32];
    snprintf(name, sizeof name, "small-%u", a->idx);
    prism_thread_name(name);
    uint32_t id = prism_name("small");
    CHILD_CHECK(id);
    for (unsigned i = 0; i < SMALL_PAIRS; i++) {
        prism_push_id(id);
        prism_pop();
    }
    if (a->end)
        pthread_barrier_wait(a->end);
    return NULL;
}

/* Two 1 MB buffers for the whole process, WAIT policy. */
static void two_buffer_config(prism_config *c, const char *path)
{
    prism_config_default(c);
    c->output = path;
    c->collect_memory = false;
    c->policy = PRISM_POLICY_WAIT;
    c->buffer_events = 65536;
    c->buffer_mb = 1;
}

#define CHURN 8u

/* Threads one after the other, each exiting before the next starts: an
 * exited thread's buffer must come back to the pool. */
static int churn_child(void *arg)
{
    prism_config c;
    two_buffer_config(&c, arg);
    CHILD_CHECK(prism_init(&c) == 0);
    for (unsigned i = 0; i < CHURN; i++) {
        small_arg a = { i, NULL };
        pthread_t th;
        CHILD_CHECK(pthread_create(&th, NULL, small_worker, &a) == 0);
        CHILD_CHECK(pthread_join(th, NULL) == 0);
    }
    prism_shutdown();
    return 0;
}

static void test_exited_threads_return_buffers(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "churn.cbor", path, sizeof path);
    psum *p = psum_from_child(churn_child, path, path, false);
    assert_int_equal(p->footers, 1);
    assert_int_equal(p->footer.dropped, 0);
    for (unsigned i = 0; i < CHURN; i++) {
        char name[32];
        snprintf(name, sizeof name, "small-%u", i);
        uint32_t st = psum_stream_named(p, name);
        assert_int_not_equal(st, 0);
        assert_int_equal(p->s[st].dropped, 0);
        assert_int_equal(p->s[st].enters, SMALL_PAIRS);
        assert_int_equal(p->s[st].exits, SMALL_PAIRS);
    }
    psum_free(p);
    tdir_remove(&d);
}

/* Three live threads, two buffers, WAIT: the third waits once (bounded),
 * then drops instead of waiting again for every event; the child must
 * finish well before its alarm and account for every record. */
static int wait_starved_child(void *arg)
{
    prism_config c;
    two_buffer_config(&c, arg);
    CHILD_CHECK(prism_init(&c) == 0);
    pthread_barrier_t end;
    CHILD_CHECK(pthread_barrier_init(&end, NULL, 3) == 0);
    pthread_t th[3];
    small_arg a[3];
    for (unsigned i = 0; i < 3; i++) {
        a[i] = (small_arg){ i, &end };
        CHILD_CHECK(pthread_create(&th[i], NULL, small_worker, &a[i]) == 0);
    }
    for (unsigned i = 0; i < 3; i++)
        CHILD_CHECK(pthread_join(th[i], NULL) == 0);
    pthread_barrier_destroy(&end);
    prism_shutdown();
    return 0;
}

static void test_wait_policy_is_bounded(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "waitstarved.cbor", path, sizeof path);
    psum *p = psum_from_child(wait_starved_child, path, path, false);
    assert_int_equal(p->footers, 1);
    unsigned starved = 0;
    for (unsigned i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "small-%u", i);
        uint32_t st = psum_stream_named(p, name);
        assert_int_not_equal(st, 0);
        const ps_stream *s = &p->s[st];
        assert_int_equal(s->enters + s->exits + s->dropped, 2 * SMALL_PAIRS);
        if (s->dropped == 2 * SMALL_PAIRS)
            starved++;
    }
    assert_int_equal(starved, 1);
    psum_free(p);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drop_default_budget),
        cmocka_unit_test(test_wait_policy),
        cmocka_unit_test(test_drop_tiny_budget),
        cmocka_unit_test(test_drop_starved),
        cmocka_unit_test(test_exited_threads_return_buffers),
        cmocka_unit_test(test_wait_policy_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
