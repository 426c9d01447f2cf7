/*
 * cupti_double_threads_test.c - CUPTI's callbacks on threads the program
 * created: each NVTX range a region of the thread that made the call, a
 * range ended on another thread closed on its own; a pop whose parameter block is missing.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvtx_on_chosen_threads),
        cmocka_unit_test(test_pop_without_parameters),
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
