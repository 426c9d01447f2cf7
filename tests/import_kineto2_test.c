/*
 * import_kineto2_test.c - real torch 2.13 traces (tests/fixtures/kineto2/,
 * made by tests/python/kineto2_loop.py through torch.profiler with
 * record_shapes, profile_memory, with_stack, with_modules, a schedule and
 * tensorboard_trace_handler(use_gzip=True)) read without torch: the module
 * hierarchy and the Python frames as the call path, the record_function
 * ranges (DataLoader, optimizer) nested among the Python frames they cross
 * with no overflow track, ProfilerStep#N as steps, [memory] as samples
 * with the leak verdict, the flows counted, the trace's metadata as the
 * header (host, command line, start), and no "loading inline" advice for a
 * DataLoader with worker processes.  The Python side, making the traces
 * during the run: tests/python/test_kineto2.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prism/analysis.h"
#include "prism/import.h"

#define DIR "tests/fixtures/kineto2/"
#define Y2020_NS 1577836800000000000ull

static prism_analysis *open_trace(const char *path)
{
    prism_import_register();
    prism_status err;
    char msg[256] = "";
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    if (!a)
        fail_msg("%s: %s", path, msg);
    return a;
}

static const prism_kv *config(const prism_analysis *a, const char *key)
{
    const prism_header *h = prism_analysis_header(a);
    for (size_t i = 0; h && i < h->nconfig; i++)
        if (h->config[i].key && !strcmp(h->config[i].key, key))
            return &h->config[i];
    return NULL;
}

static uint64_t counter(const prism_analysis *a, const char *key)
{
    const prism_kv *kv = config(a, key);
    return kv && kv->value.type == PRISM_VAL_UINT ? kv->value.v.u : 0;
}

/* The first node named `name` of the all-threads tree, else NO_NODE. */
static uint32_t node(const prism_analysis *a, const char *name)
{
    const prism_tree *t = prism_analysis_tree(a);
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->nodes[i].name, name))
            return (uint32_t)i;
    return PRISM_NO_NODE;
}

/* Every node named `name` has an ancestor named `above`. */
static bool always_under(const prism_analysis *a, const char *name, const char *above)
{
    const prism_tree *t = prism_analysis_tree(a);
    size_t seen = 0;
    for (size_t i = 0; i < t->count; i++) {
        if (strcmp(t->nodes[i].name, name))
            continue;
        seen++;
        bool found = false;
        for (uint32_t p = t->nodes[i].parent; p != PRISM_NO_NODE && !found; p = t->nodes[p].parent)
            found = !strcmp(t->nodes[p].name, above);
        if (!found)
            return false;
    }
    return seen > 0;
}

/* A node whose name starts with `pre` and ends with `suf`. */
static bool has_frame(const prism_analysis *a, const char *pre, const char *suf)
{
    const prism_tree *t = prism_analysis_tree(a);
    for (size_t i = 0; i < t->count; i++) {
        const char *n = t->nodes[i].name;
        size_t l = strlen(n), ls = strlen(suf);
        if (!strncmp(n, pre, strlen(pre)) && l >= ls && !strcmp(n + l - ls, suf))
            return true;
    }
    return false;
}

static uint64_t calls_of(const prism_analysis *a, const char *name)
{
    size_t n;
    const prism_op *ops = prism_analysis_ops(a, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ops[i].name, name))
            return ops[i].calls;
    return 0;
}

/* What every real trace gives: its metadata, steps, no repair. */
static void common(const prism_analysis *a, uint64_t steps)
{
    const prism_header *h = prism_analysis_header(a);
    assert_non_null(h);
    assert_true(h->start_unix_ns > Y2020_NS);          /* never 1970-01-01 */
    assert_non_null(h->host);
    assert_string_not_equal(h->host, "(not in the trace)");
    assert_true(h->argc >= 1);                          /* never "Run ?" */
    assert_true(h->pid > 0);
    const prism_kv *schema = config(a, "import.schema_version");
    assert_non_null(schema);
    assert_int_equal(schema->value.v.i, 1);
    assert_non_null(config(a, "import.trace_id"));
    assert_true(prism_analysis_complete(a));
    assert_int_equal(prism_analysis_steps(a)->count, steps);
    assert_true(counter(a, "import.flows") > 0);        /* fwdbwd: counted */
    assert_int_equal(counter(a, "import.overlapping_moved"), 0);
    assert_int_equal(counter(a, "import.overlapping_dropped"), 0);
    assert_int_equal(counter(a, "import.unsorted"), 0);
    assert_int_equal(counter(a, "import.unknown_category"), 0);
    assert_int_equal(counter(a, "import.unknown_phase"), 0);
    assert_int_equal(counter(a, "import.missing_fields"), 0);
    assert_true(counter(a, "import.memory_events") > 0);
    assert_true(prism_analysis_memory(a)->count > 0);
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        const char *name = NULL;
        prism_analysis_thread_tree(a, i, NULL, &name);
        assert_null(name ? strstr(name, "(overlap") : NULL);
    }
    size_t nb;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &nb);
    for (size_t i = 0; i < nb; i++)
        assert_null(strstr(b[i].evidence, "loading inline"));
    assert_int_equal(calls_of(a, "Optimizer.step#SGD.step"), steps);
    assert_int_equal(calls_of(a, "Optimizer.zero_grad#SGD.zero_grad"), steps);
    assert_int_equal(calls_of(a, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__") +
                     calls_of(a, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
                     steps);
}

/* with_stack + with_modules, DataLoader(num_workers=2). */
static void test_workers(void **state)
{
    (void)state;
    prism_analysis *a = open_trace(DIR "workers.pt.trace.json.gz");
    common(a, 3);
    const prism_header *h = prism_analysis_header(a);
    assert_int_equal(h->argc, 2);                       /* python kineto2_loop.py */
    assert_string_equal(h->argv[1], "kineto2_loop.py");
    /* the module hierarchy as the call path, the ops under the modules */
    assert_true(always_under(a, "nn.Module: Linear_0", "nn.Module: Sequential_0"));
    assert_true(always_under(a, "nn.Module: Sequential_0", "nn.Module: Net_0"));
    assert_true(always_under(a, "nn.Module: Linear_1", "nn.Module: Net_0"));
    assert_true(always_under(a, "aten::addmm", "aten::linear"));
    assert_int_equal(calls_of(a, "nn.Module: Net_0"), 3);
    /* the Python frames */
    assert_true(has_frame(a, "kineto2_loop.py(", "): forward"));
    assert_true(has_frame(a, "kineto2_loop.py(", "): <module>"));
    /* the DataLoader's range inside the Python __next__ that opens it, and
     * holding the Python calls it wraps */
    uint32_t dl = node(a, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
    assert_int_not_equal(dl, PRISM_NO_NODE);
    const prism_tree *t = prism_analysis_tree(a);
    const char *up = t->nodes[t->nodes[dl].parent].name;
    assert_true(!strncmp(up, "torch/utils/data/dataloader.py(", 31) && strstr(up, "): __next__"));
    assert_int_not_equal(t->nodes[dl].first_child, PRISM_NO_NODE);
    assert_true(always_under(a, "Optimizer.step#SGD.step", "kineto2_loop.py(64): main") ||
                has_frame(a, "kineto2_loop.py(", "): main"));
    assert_true(counter(a, "import.python_cut") > 0);
    prism_analysis_free(a);
}

/* 12 MB kept per step: the leak verdict from the [memory] events. */
static void test_leak(void **state)
{
    (void)state;
    prism_analysis *a = open_trace(DIR "leak.pt.trace.json.gz");
    common(a, 6);
    const prism_memory_stats *m = prism_analysis_memory(a);
    assert_int_equal(m->host.verdict, PRISM_LEAK_YES);
    assert_true(m->host.slope_mb_per_step > 11.0 && m->host.slope_mb_per_step < 13.0);
    assert_true(m->peak_rss >= 6u * 12u << 20);
    /* the host figure is torch's CPU allocator's Total Allocated, not the
     * process's RSS: every output says so */
    assert_true(m->host_allocated);
    assert_string_equal(prism_memory_host_name(m, false), "host allocated");
    assert_string_equal(prism_memory_host_name(m, true),
                        "Peak allocated (torch's CPU allocator, from the trace)");
    size_t nb;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &nb);
    bool leak = false;
    for (size_t i = 0; i < nb; i++)
        if (b[i].type == PRISM_BN_MEMORY_LEAK) {
            leak = true;
            assert_non_null(strstr(b[i].description, "(host allocated)"));
            assert_null(strstr(b[i].description, "RSS"));
        }
    assert_true(leak);
    prism_analysis_free(a);
}

/* No with_stack: no Python frames, the ranges and ops alone; a DataLoader
 * with worker processes is not "loading inline" even without a thread of
 * its own in the trace. */
static void test_nostack(void **state)
{
    (void)state;
    prism_analysis *a = open_trace(DIR "nostack.pt.trace.json.gz");
    common(a, 3);
    const prism_header *h = prism_analysis_header(a);
    assert_string_equal(h->argv[0], "torch.profiler trace");   /* its trace_id */
    assert_int_equal(counter(a, "import.python_cut"), 0);
    assert_int_equal(prism_analysis_thread_count(a), 1);
    size_t nb;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &nb);
    for (size_t i = 0; i < nb; i++)
        if (b[i].type == PRISM_BN_DATA_LOADING)
            assert_non_null(strstr(b[i].evidence, "worker processes"));
    prism_analysis_free(a);
}

/* The soft-region rule on a hand-made trace: a record_function range that
 * starts inside the Python call opening it and ends inside the one closing
 * it nests in neither; the Python frames give way. */
static void test_soft_cut(void **state)
{
    (void)state;
    static const char trace[] =
        "{\"schemaVersion\":1,\"baseTimeNanoseconds\":1700000000000000000,"
        "\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"t.py(1): <module>\","
        "\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"enter\",\"pid\":1,\"tid\":1,"
        "\"ts\":10,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"range\",\"pid\":1,\"tid\":1,"
        "\"ts\":15,\"dur\":40},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
        "\"ts\":30,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"work\",\"pid\":1,\"tid\":1,"
        "\"ts\":25,\"dur\":20},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"exit\",\"pid\":1,\"tid\":1,"
        "\"ts\":50,\"dur\":10}"
        "]}";
    char path[] = "/tmp/prism-kineto2-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, trace, sizeof trace - 1), (ssize_t)(sizeof trace - 1));
    close(fd);
    prism_analysis *a = open_trace(path);
    unlink(path);
    const prism_tree *t = prism_analysis_tree(a);
    uint32_t range = node(a, "range"), enter = node(a, "enter"), exit_ = node(a, "exit"),
             work = node(a, "work"), mm = node(a, "aten::mm");
    assert_int_not_equal(range, PRISM_NO_NODE);
    assert_string_equal(t->nodes[t->nodes[range].parent].name, "t.py(1): <module>");
    assert_int_equal(t->nodes[range].total_ns, 40000);         /* kept whole */
    assert_int_equal(t->nodes[enter].total_ns, 5000);          /* ends where it begins */
    assert_string_equal(t->nodes[t->nodes[exit_].parent].name, "range");
    assert_int_equal(t->nodes[exit_].total_ns, 5000);          /* cut at its end */
    assert_string_equal(t->nodes[t->nodes[work].parent].name, "range");
    assert_string_equal(t->nodes[t->nodes[mm].parent].name, "work");
    assert_int_equal(counter(a, "import.python_cut"), 2);
    assert_int_equal(counter(a, "import.overlapping_moved"), 0);
    assert_int_equal(counter(a, "import.unsorted"), 0);
    const prism_header *h = prism_analysis_header(a);
    assert_int_equal(h->argc, 2);
    assert_string_equal(h->argv[1], "t.py");
    assert_int_equal(h->start_unix_ns, 1700000000000000000ull);
    prism_analysis_free(a);
}

/* A trace written to a temporary file, analysed. */
static prism_analysis *open_text(const char *trace)
{
    char path[] = "/tmp/prism-kineto2-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, trace, strlen(trace)), (ssize_t)strlen(trace));
    close(fd);
    prism_analysis *a = open_trace(path);
    unlink(path);
    return a;
}

#define PY(name, tid, ts, dur) \
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid \
    ",\"ts\":" #ts ",\"dur\":" #dur "}"

/* A DataLoader's queue feeder thread (multiprocessing's _feed) blocked in a
 * lock for the whole run: a wait, not work.  Not "busy 100%", no hot
 * operation on it, none on the training thread's own lock acquire (no CPU
 * samples: the name tells the wait); an object's address is left out of
 * the name, so the same code has one name in every run. */
static void test_waits_not_busy(void **state)
{
    (void)state;
    static const char *const addr[] = { "0x7f7a614977c0", "0x7f00deadbeef" };
    char first[2][160];
    for (int run = 0; run < 2; run++) {
        char trace[4096];
        snprintf(trace, sizeof trace,
                 "{\"schemaVersion\":1,\"traceEvents\":["
                 PY("t.py(1): <module>", 1, 0, 1000) ","
                 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\","
                 "\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":500},"
                 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\","
                 "\"pid\":1,\"tid\":1,\"ts\":500,\"dur\":500},"
                 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                 "\"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__\","
                 "\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":300},"
                 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                 "\"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__\","
                 "\"pid\":1,\"tid\":1,\"ts\":510,\"dur\":300},"
                 PY("t.py(9): sync", 1, 320, 170) ","
                 PY("<built-in method acquire of _thread.lock object at %s>", 1, 321, 168) ","
                 PY("t.py(9): sync", 1, 820, 170) ","
                 PY("<built-in method acquire of _thread.lock object at %s>", 1, 821, 168) ","
                 PY("threading.py(982): run", 2, 0, 1000) ","
                 PY("multiprocessing/queues.py(231): _feed", 2, 1, 998) ","
                 PY("threading.py(295): wait", 2, 2, 990) ","
                 PY("<built-in method acquire of _thread.lock object at %s>", 2, 3, 988)
                 "]}", addr[run], addr[run], addr[run]);
        prism_analysis *a = open_text(trace);
        const prism_tree *t = prism_analysis_tree(a);
        uint32_t lock = node(a, "<built-in method acquire of _thread.lock object at 0x...>");
        assert_int_not_equal(lock, PRISM_NO_NODE);
        for (uint32_t i = 0; i < t->count; i++)
            assert_null(strstr(t->nodes[i].name, addr[run]));
        snprintf(first[run], sizeof first[run], "%s", t->nodes[lock].name);
        size_t nb;
        const prism_bottleneck *b = prism_analysis_bottlenecks(a, &nb);
        bool data = false;
        for (size_t i = 0; i < nb; i++) {
            assert_null(strstr(b[i].description, "acquire"));
            assert_null(strstr(b[i].description, "wait'"));
            if (b[i].type != PRISM_BN_DATA_LOADING)
                continue;
            data = true;
            assert_null(strstr(b[i].evidence, "busy 100%"));
            assert_non_null(strstr(b[i].evidence, "1 other thread, busy 1% (not counting its "
                                                  "waits"));
        }
        assert_true(data);
        prism_analysis_free(a);
    }
    assert_string_equal(first[0], first[1]);    /* one name in both runs */
}

/* One event into the trace being built (b, *n of cap). */
static void ev(char *b, size_t cap, size_t *n, const char *cat, const char *name, unsigned ts,
               unsigned dur)
{
    int k = snprintf(b + *n, cap - *n, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\","
                     "\"pid\":1,\"tid\":1,\"ts\":%u,\"dur\":%u}", *n > 40 ? "," : "", cat,
                     name, ts, dur);
    assert_true(k > 0 && (size_t)k < cap - *n);
    *n += (size_t)k;
}

/* The training loader waits 30 us in each of 6 steps (under a next()
 * frame with with_stack); in step 4 an evaluation loop fetches 5 batches
 * of 60 us from a loader of its own, right under <module>; every step
 * runs an operator named "..._data" and, five frames deep in its forward,
 * a "load_weights".  The input stall is the training loader's (180 of 900
 * us), not the evaluation's (which slow_steps names), nor the operator's,
 * nor the deep frame's; the same with and without the Python frames. */
static void test_eval_loader_apart(void **state)
{
    (void)state;
    static const char mp[] = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                      sp[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                      nx[] = "torch/utils/data/dataloader.py(720): __next__";
    for (int stack = 0; stack < 2; stack++) {
        static char b[16384];
        size_t n = (size_t)snprintf(b, sizeof b, "{\"schemaVersion\":1,\"traceEvents\":[");
        if (stack)
            ev(b, sizeof b, &n, "python_function", "t.py(1): <module>", 0, 900);
        unsigned start[] = { 0, 100, 200, 300, 400, 800 }, dur[] = { 100, 100, 100, 100, 400, 100 };
        for (unsigned k = 0; k < 6; k++) {
            char step[32];
            snprintf(step, sizeof step, "ProfilerStep#%u", k);
            ev(b, sizeof b, &n, "user_annotation", step, start[k], dur[k]);
            if (stack) {
                ev(b, sizeof b, &n, "python_function", "<built-in function next>", start[k] + 1, 32);
                ev(b, sizeof b, &n, "python_function", nx, start[k] + 2, 30);
            }
            ev(b, sizeof b, &n, "user_annotation", mp, start[k] + 3, 28);
            ev(b, sizeof b, &n, "cpu_op", "aten::_log_softmax_backward_data", start[k] + 40, 40);
            /* deep in the computation, a region named like loading: no input */
            static const char *const deep[] = { "t.py(20): forward", "t.py(21): block",
                                                "t.py(22): layer", "t.py(23): inner",
                                                "t.py(24): load_weights" };
            for (unsigned d = 0; d < 5; d++)
                ev(b, sizeof b, &n, "python_function", deep[d], start[k] + 82 + d, 16 - 2 * d);
        }
        for (unsigned i = 0; i < 5; i++) {
            if (stack)
                ev(b, sizeof b, &n, "python_function", nx, 500 + i * 60, 59);
            ev(b, sizeof b, &n, "user_annotation", sp, 500 + i * 60 + 1, 57);
        }
        snprintf(b + n, sizeof b - n, "]}");
        prism_analysis *a = open_text(b);
        size_t nb;
        const prism_bottleneck *f = prism_analysis_bottlenecks(a, &nb), *data = NULL;
        for (size_t i = 0; i < nb; i++)
            if (f[i].type == PRISM_BN_DATA_LOADING)
                data = &f[i];
        assert_non_null(data);
        print_message("%s | %s\n", data->description, data->evidence);
        /* 28-32 us a step of 900 us */
        assert_true(data->share > 0.18 && data->share < 0.21);
        assert_non_null(strstr(data->evidence, "(6 calls)"));
        assert_non_null(strstr(data->evidence, "5 calls in 1 of the steps: an evaluation pass's "
                                               "loader"));
        assert_null(strstr(data->description, "_data'"));
        const prism_tree *t = prism_analysis_tree(a);
        assert_null(strstr(t->nodes[data->node].name, "Single"));
        prism_analysis_free(a);
    }
}

/* A trace has no footer: its status says it was imported and read to its
 * end, or where it was cut (the gzip stream's byte), never "footer
 * present" nor "still being written". */
static void test_status_words(void **state)
{
    (void)state;
    char st[256];
    prism_analysis *a = open_trace(DIR "workers.pt.trace.json.gz");
    assert_true(prism_analysis_complete(a));
    assert_true(prism_import_status(prism_analysis_header(a), true, st, sizeof st));
    assert_string_equal(st, "complete (imported torch.profiler trace)");
    prism_analysis_free(a);

    FILE *in = fopen(DIR "workers.pt.trace.json.gz", "rb");
    assert_non_null(in);
    static char buf[20000];
    assert_int_equal(fread(buf, 1, sizeof buf, in), sizeof buf);
    fclose(in);
    char path[] = "/tmp/prism-kineto2-cut-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    close(fd);
    a = open_trace(path);
    unlink(path);
    assert_false(prism_analysis_complete(a));
    assert_true(prism_import_status(prism_analysis_header(a), false, st, sizeof st));
    assert_string_equal(st, "cut short: the gzip stream ends at byte 20000 (imported "
                            "torch.profiler trace: the figures cover the events before it)");
    prism_analysis_free(a);
    /* a PRISM profile's status is its footer's: not the importer's to say */
    prism_header h = { 0 };
    assert_false(prism_import_status(&h, true, st, sizeof st));
    assert_string_equal(st, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers),
        cmocka_unit_test(test_leak),
        cmocka_unit_test(test_nostack),
        cmocka_unit_test(test_soft_cut),
        cmocka_unit_test(test_status_words),
        cmocka_unit_test(test_waits_not_busy),
        cmocka_unit_test(test_eval_loader_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
