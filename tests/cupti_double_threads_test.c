/*
 * cupti_double_threads_test.c - CUPTI's callbacks on threads the program
 * created: each NVTX range a region of the thread that made the call, a
 * range ended on another thread closed on its own; threads that never call
 * PRISM launching and calling NVTX at once while CUPTI completes buffers on
 * a thread of its own, each launch on its own thread's track, the first
 * one (before any range) too; NVTX and launches going on while the program
 * ends the session, and a callback arriving after it.
 *
 * Against the CUPTI double (tests/cupti_double.c, loaded through
 * PRISM_CUPTI_PATH like a real libcupti; helpers in cupti_double_util.h),
 * each scenario in a forked child whose profile the parent reads back.  No
 * GPU result: the double scripts what CUPTI would do, the tests check what
 * PRISM does with it (issue 27).  Each test failed before its fix (the
 * commit that brought it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sched.h>
#include <stdatomic.h>

#include "cupti_double_util.h"
#ifdef PRISM_HAVE_CUPTI_HEADERS
#define NVTX_NO_IMPL
#include <generated_nvtx_meta.h>
#endif

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- NVTX callbacks on chosen threads --------------------------------------- */

static void nvtx_call(uint32_t cbid, const void *params, const void *ret)
{
    CUpti_NvtxData d = { .functionName = "nvtx", .functionParams = params,
                         .functionReturnValue = ret };
    D.nvtx(cbid, &d);
}

static void nvtx_push(const char *name)
{
    nvtxRangePushA_params p = { .message = name };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePushA, &p, NULL);
}

/* As CUPTI passes it: a parameter block with nothing in it. */
static void nvtx_pop(void)
{
    nvtxRangePop_params p = { NULL };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, &p, NULL);
}

static nvtxRangeId_t started_range;

static void *nvtx_thread(void *arg)
{
    const char *name = arg;
    prism_thread_name(name);
    nvtx_push(name);            /* a range of this thread's own */
    nvtx_push("inner");
    nvtx_pop();
    nvtx_pop();
    nvtx_push("again");         /* at the top again: the pops closed both */
    nvtx_pop();
    if (!strcmp(name, "loader")) {      /* ends the main thread's start/end range */
        nvtxRangeEnd_params e = { .id = started_range };
        nvtx_call(CUPTI_CBID_NVTX_nvtxRangeEnd, &e, NULL);
    }
    return NULL;
}

static int nvtx_threads_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    CHILD_CHECK(D.ctl->domains & 1u << CUPTI_CB_DOMAIN_NVTX);
    prism_thread_name("main");
    started_range = 4242;
    nvtxRangeStartA_params sp = { .message = "epoch" };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangeStartA, &sp, &started_range);
    pthread_t a, b;
    CHILD_CHECK(pthread_create(&a, NULL, nvtx_thread, (void *)"loader") == 0);
    CHILD_CHECK(pthread_join(a, NULL) == 0);
    CHILD_CHECK(pthread_create(&b, NULL, nvtx_thread, (void *)"comm") == 0);
    CHILD_CHECK(pthread_join(b, NULL) == 0);
    nvtx_push("after");         /* main's next call closes "epoch" */
    nvtx_pop();
    prism_shutdown();
    return 0;
}

/* Each region on the thread that made the call; a range ended on another
 * thread closes on its own thread. */
static void test_nvtx_on_chosen_threads(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "nvtx_threads.prism", path, sizeof path);
    child_run_ok(nvtx_threads_child, path);
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    int seen = 0;
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        uint32_t stream;
        const char *tname = NULL;
        const prism_tree *t = prism_analysis_thread_tree(a, i, &stream, &tname);
        char names[256] = "";
        for (size_t j = 0; j < t->count; j++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s/%s;",
                     t->nodes[j].parent == PRISM_NO_NODE ? "" : t->nodes[t->nodes[j].parent].name,
                     t->nodes[j].name);
        if (tname && !strcmp(tname, "loader")) {
            assert_string_equal(names, "/loader;loader/inner;/again;");
            seen |= 1;
        } else if (tname && !strcmp(tname, "comm")) {
            assert_string_equal(names, "/comm;comm/inner;/again;");
            seen |= 2;
        } else if (tname && !strcmp(tname, "main")) {
            assert_non_null(strstr(names, "/epoch;"));
            assert_null(strstr(names, "loader"));
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* A pop whose parameter block is missing (CUPTI passes an empty one;
 * nothing says every version does) still closes its range: before, it was
 * ignored and every later range nested under the one left open. */
static int pop_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    prism_thread_name("main");
    nvtx_push("a");
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, NULL, NULL);
    nvtx_push("b");
    nvtx_pop();
    prism_shutdown();
    return 0;
}

static void test_pop_without_parameters(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "pop.prism", path, sizeof path);
    child_run_ok(pop_child, path);
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    const prism_tree *t = prism_analysis_tree(a);
    assert_int_equal(t->count, 2);
    assert_int_equal(t->nodes[0].parent, PRISM_NO_NODE);
    assert_int_equal(t->nodes[1].parent, PRISM_NO_NODE);
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* ---- the program's threads launching, CUPTI completing on its own ------------ */

enum { NWORKERS = 4, NLAUNCH = 40 };

static pthread_barrier_t early_done, go;
static _Atomic int workers_left, cupti_rounds;

/* A worker as torch's threads are: it never calls PRISM, only CUDA (the
 * API records CUPTI makes on its thread) and NVTX, and the OS names it.
 * Its first launch comes before its first NVTX range (no region open). */
static void *launcher(void *arg)
{
    uint32_t i = (uint32_t)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "w%u", i);
    pthread_setname_np(pthread_self(), name);
    uint64_t t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    1000 * (i + 1) + 999, t, t + 10));
    pthread_barrier_wait(&early_done);
    pthread_barrier_wait(&go);
    for (uint32_t k = 0; k < NLAUNCH; k++) {
        uint32_t corr = 1000 * (i + 1) + k;
        nvtx_push(name);
        t = D.now();
        CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME,
                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr, t, t + 10));
        nvtx_pop();
        CHILD_CHECK(kernel(corr, t + 20, t + 30, "k", 0, 0));
        if (k == NLAUNCH / 2)   /* CUPTI's thread completes meanwhile */
            WAIT_FOR(atomic_load(&cupti_rounds) > 0);
    }
    atomic_fetch_sub(&workers_left, 1);
    return NULL;
}

/* CUPTI's own thread: it hands full and partial buffers back whenever it
 * likes, here as fast as it can while the workers run. */
static void *cupti_worker(void *arg)
{
    (void)arg;
    while (atomic_load(&workers_left) > 0) {
        D.complete();
        atomic_fetch_add(&cupti_rounds, 1);
        sched_yield();
    }
    return NULL;
}

static int launchers_child(void *arg)
{
    start(arg, 5, true);
    double_open();
    prism_thread_name("main");
    atomic_store(&workers_left, NWORKERS);
    CHILD_CHECK(pthread_barrier_init(&early_done, NULL, NWORKERS + 1) == 0);
    CHILD_CHECK(pthread_barrier_init(&go, NULL, NWORKERS + 1) == 0);
    pthread_t w[NWORKERS], c;
    for (uintptr_t i = 0; i < NWORKERS; i++)
        CHILD_CHECK(pthread_create(&w[i], NULL, launcher, (void *)i) == 0);
    pthread_barrier_wait(&early_done);
    /* the early launches reach the writer before any NVTX range: their
     * threads are known to PRISM from their API records first */
    D.complete();
    uint64_t f = load_u64(&D.ctl->flushes);
    WAIT_FOR(load_u64(&D.ctl->flushes) >= f + 2);
    CHILD_CHECK(pthread_create(&c, NULL, cupti_worker, NULL) == 0);
    pthread_barrier_wait(&go);
    for (int i = 0; i < NWORKERS; i++)
        CHILD_CHECK(pthread_join(w[i], NULL) == 0);
    CHILD_CHECK(pthread_join(c, NULL) == 0);
    D.complete();
    prism_shutdown();
    return 0;
}

/* Each worker is one thread of the profile, under its OS name, holding its
 * NVTX ranges and every launch it made, the one before its first range
 * too; each range is credited with its own launches, never another
 * thread's.  (Before, a thread whose first launch reached the writer before
 * its first range was two threads: one of API records alone, from CUPTI's
 * thread id, one of regions.) */
static void test_launches_and_ranges_on_program_threads(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "launchers.prism", path, sizeof path);
    child_run_ok(launchers_child, path);
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    uint32_t stream_of[NWORKERS] = { 0 };
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        uint32_t stream;
        const char *tname = NULL;
        const prism_tree *t = prism_analysis_thread_tree(a, i, &stream, &tname);
        unsigned w;
        if (!tname || sscanf(tname, "w%u", &w) != 1 || w >= NWORKERS) {
            for (size_t j = 0; t && j < t->count; j++)
                assert_true(t->nodes[j].name[0] != 'w');        /* no worker's range */
            continue;
        }
        assert_int_equal(stream_of[w], 0);                      /* one thread each */
        stream_of[w] = stream;
        assert_int_equal(t->count, 1);
        assert_string_equal(t->nodes[0].name, tname);
        assert_int_equal(t->nodes[0].calls, NLAUNCH);
        assert_int_equal(t->nodes[0].gpu_launches, NLAUNCH);
    }
    prism_analysis_free(a);
    gsum *s = gsum_read(path);
    size_t apis = 0;
    for (size_t i = 0; i < s->ng; i++) {
        const prism_gpu_record *g = &s->g[i];
        if (g->type != PRISM_GPU_API)
            continue;
        uint32_t w = (uint32_t)(g->correlation / 1000) - 1;
        assert_true(w < NWORKERS);
        assert_int_equal(g->stream, stream_of[w]);      /* the early launch too */
        apis++;
    }
    assert_int_equal(apis, NWORKERS * (NLAUNCH + 1));
    assert_true(s->footer);
    gsum_free(s);
    tdir_remove(&d);
}

/* ---- callbacks while the session ends ------------------------------------------- */

static _Atomic int rounds_done[2], stop_now;

/* NVTX and launches on and on; once told, one more round through
 * PRISM's callback itself, as a callback already in flight when the
 * subscription ended would arrive. */
static void *racer(void *arg)
{
    const char *name = arg;
    pthread_setname_np(pthread_self(), name);
    CUpti_CallbackFunc cb = (CUpti_CallbackFunc)D.ctl->callback;
    void *user = D.ctl->callback_user;
    int me = name[1] - '0';
    uint32_t corr = 50000 + 10000 * (uint32_t)me;
    while (!atomic_load(&stop_now)) {
        nvtx_push(name);
        uint64_t t = D.now();
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr++,
            t, t + 10);
        nvtx_pop();
        atomic_fetch_add(&rounds_done[me], 1);
    }
    nvtxRangePushA_params p = { .message = name };
    CUpti_NvtxData d = { .functionName = "nvtxRangePushA", .functionParams = &p };
    cb(user, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &d);
    d.functionParams = NULL;
    cb(user, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &d);
    return NULL;
}

static int shutdown_race_child(void *arg)
{
    start(arg, 5, true);
    double_open();
    CHILD_CHECK(D.ctl->callback);
    pthread_t r[2];
    CHILD_CHECK(pthread_create(&r[0], NULL, racer, (void *)"r0") == 0);
    CHILD_CHECK(pthread_create(&r[1], NULL, racer, (void *)"r1") == 0);
    WAIT_FOR(atomic_load(&rounds_done[0]) >= 100 && atomic_load(&rounds_done[1]) >= 100);
    prism_shutdown();           /* while they call NVTX and launch */
    int after[2] = { atomic_load(&rounds_done[0]), atomic_load(&rounds_done[1]) };
    WAIT_FOR(atomic_load(&rounds_done[0]) >= after[0] + 100 &&
             atomic_load(&rounds_done[1]) >= after[1] + 100);
    atomic_store(&stop_now, 1);
    CHILD_CHECK(pthread_join(r[0], NULL) == 0 && pthread_join(r[1], NULL) == 0);
    CHILD_CHECK(!D.ctl->subscribed);
    return 0;
}

/* The program's threads keep calling NVTX and CUDA while it ends the
 * session, and after: nothing crashes or blocks, the file is complete,
 * and what the threads did before the end is in it. */
static void test_callbacks_while_the_session_ends(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "race.prism", path, sizeof path);
    child_run_ok(shutdown_race_child, path);
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    assert_true(prism_analysis_complete(a));
    int seen = 0;
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        const char *tname = NULL;
        const prism_tree *t = prism_analysis_thread_tree(a, i, NULL, &tname);
        for (size_t j = 0; tname && t && j < t->count; j++)
            if (!strcmp(t->nodes[j].name, tname) && t->nodes[j].calls > 0)
                seen |= !strcmp(tname, "r0") ? 1 : !strcmp(tname, "r1") ? 2 : 0;
    }
    assert_int_equal(seen, 3);
    prism_analysis_free(a);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvtx_on_chosen_threads),
        cmocka_unit_test(test_pop_without_parameters),
        cmocka_unit_test(test_launches_and_ranges_on_program_threads),
        cmocka_unit_test(test_callbacks_while_the_session_ends),
    };
    return cmocka_run_group_tests(tests, cupti_double_setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_threads_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
