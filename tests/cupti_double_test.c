/*
 * cupti_double_test.c - the CUPTI backend against the CUPTI double
 * (tests/cupti_double.c, loaded through PRISM_CUPTI_PATH like a real
 * libcupti), each scenario in a forked child that writes a profile read
 * back by the parent.  No GPU result: the double scripts what CUPTI would
 * do, and the tests check what PRISM does with it (issue 27):
 *
 *   - driver-API launches (cuLaunchKernel: Triton, torch.compile) are
 *     recorded and carry their kernel's correlation id; a kernel arriving
 *     before its launch record; a graph launch (defect 3);
 *   - exit: libcupti's own teardown registered at load or at subscribe;
 *     PRISM never calls CUPTI after it, nor cuptiFinalize unasked; no
 *     CUPTI call after a terminating signal, only the kinds off after a
 *     write failure (2);
 *   - another subscriber already attached: nothing of it replaced (its
 *     clock), gpu.status says so (5);
 *   - a torch.profiler-like client takes the buffers mid-run: gpu.status
 *     says when recording stopped; it disables kernel tracing: PRISM sees
 *     launches without kernels and enables it again (5);
 *   - the writer thread never sets NVTX_INJECTION64_PATH (6).
 *
 * Each test failed before its fix (the commit that brought it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "collect_util.h"
#include "cupti_double.h"
#include "prism/analysis.h"
#include "../libcollect/cupti.h"
#ifdef PRISM_HAVE_CUPTI_HEADERS
#define NVTX_NO_IMPL
#include <generated_nvtx_meta.h>
#endif

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- the profile, read back --------------------------------------------- */

typedef struct gsum {
    prism_reader *r;
    prism_gpu_record g[64];
    size_t ng;
    char status[1024];
    bool footer;
} gsum;

static void g_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    gsum *s = ctx;
    for (size_t i = 0; i < n && s->ng < 64; i++)
        s->g[s->ng++] = g[i];
}

static void g_info(void *ctx, const char *key, const prism_value *v)
{
    if (!strcmp(key, "gpu.status") && v->type == PRISM_VAL_TEXT)
        snprintf(((gsum *)ctx)->status, sizeof ((gsum *)ctx)->status, "%s", v->v.s);
}

static void g_footer(void *ctx, const prism_footer *f)
{
    (void)f;
    ((gsum *)ctx)->footer = true;
}

static gsum *gsum_read(const char *path)
{
    gsum *s = calloc(1, sizeof *s);
    assert_non_null(s);
    prism_reader_callbacks cb = { .gpu = g_gpu, .info = g_info, .footer = g_footer };
    assert_int_equal(prism_read_file(path, &cb, s, &s->r), PRISM_OK);
    return s;
}

static const char *gname(const gsum *s, uint32_t id)
{
    const char *n = prism_reader_string(s->r, id, NULL);
    return n ? n : "";
}

static const prism_gpu_record *find(const gsum *s, uint32_t type, uint64_t corr)
{
    for (size_t i = 0; i < s->ng; i++)
        if (s->g[i].type == type && s->g[i].correlation == corr)
            return &s->g[i];
    return NULL;
}

static void gsum_free(gsum *s)
{
    prism_reader_free(s->r);
    free(s);
}

/* ---- the double -------------------------------------------------------------- */

static char double_path[600];

static struct {
    cupti_double_ctl *ctl;
    cd_emit_fn emit;
    cd_complete_fn complete;
    cd_other_fn other;
    cd_now_fn now;
    cd_nvtx_fn nvtx;
} D;

/* Open the double (the copy PRISM opens too: same file, same handle). */
static void double_open(void)
{
    void *h = dlopen(double_path, RTLD_NOW | RTLD_LOCAL);
    CHILD_CHECK(h);
    D.ctl = ((cd_ctl_fn)dlsym(h, "cupti_double"))();
    *(void **)&D.emit = dlsym(h, "cd_emit");
    *(void **)&D.complete = dlsym(h, "cd_complete");
    *(void **)&D.other = dlsym(h, "cd_other_client");
    *(void **)&D.now = dlsym(h, "cd_now");
    *(void **)&D.nvtx = dlsym(h, "cd_nvtx");
    CHILD_CHECK(D.ctl && D.emit && D.complete && D.other && D.now && D.nvtx);
}

static uint32_t gettid_(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

static bool api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr, uint64_t start,
                uint64_t end)
{
    CUpti_ActivityAPI a = { .kind = kind, .cbid = cbid, .start = start, .end = end,
                            .processId = (uint32_t)getpid(), .threadId = gettid_(),
                            .correlationId = corr };
    return D.emit(&a, sizeof a);
}

static bool kernel(uint32_t corr, uint64_t start, uint64_t end, const char *name,
                   uint32_t graph, uint32_t node)
{
    CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };
    k.start = start;
    k.end = end;
    k.correlationId = corr;
    k.streamId = 7;
    k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    k.name = name;
    k.graphId = graph;
    k.graphNodeId = node;
    return D.emit(&k, sizeof k);
}

static void clear_env(void)
{
    static const char *const vars[] = {
        "PRISM_OUTPUT", "PRISM_ENABLED", "PRISM_COLLECT_GPU", "PRISM_CUPTI_PATH",
        "PRISM_RUN_PID", "PRISM_WARMUP_STEPS", "PRISM_ACTIVE_STEPS", "CUDA_INJECTION64_PATH",
        "NVTX_INJECTION64_PATH", "PRISM_CUPTI_FINALIZE", "CUPTI_DOUBLE_TEARDOWN",
        "PRISM_CUPTI_KINDS",
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* A session whose CUPTI is the double; attached as by InitializeInjection
 * when attach is set.  flush_ms: the writer's cycle. */
static session *start(const char *path, unsigned flush_ms, bool attach)
{
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    c.collect_gpu_ops = true;
    c.collect_memory = false;
    c.flush_interval_ms = flush_ms;
    CHILD_CHECK(prism_init(&c) == 0 && prism__s);
    if (attach)
        prism__cupti_injected(prism__s);
    return prism__s;
}

/* Poll a condition the writer makes true (never a timing assertion: the
 * bound only keeps a broken build from hanging). */
#define WAIT_FOR(cond) do { \
        for (int i_ = 0; !(cond) && i_ < 20000; i_++) \
            nanosleep(&(struct timespec){ 0, 500000 }, NULL); \
        CHILD_CHECK(cond); \
    } while (0)

static uint64_t load_u64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void run(child_fn fn, const char *file, gsum **out)
{
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, file, path, sizeof path);
    child_run_ok(fn, path);
    *out = gsum_read(path);
    tdir_remove(&d);
}

/* ---- defect 3: driver-API launches ------------------------------------------ */

static int driver_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    CHILD_CHECK(D.ctl->kinds & 1ull << CUPTI_ACTIVITY_KIND_DRIVER);
    uint64_t t = D.now();
    CHILD_CHECK(t);
    /* the kernel first, its launch record in a later buffer */
    CHILD_CHECK(kernel(41, t + 1000, t + 5000, "triton_poi_fused_add_0", 0, 0));
    D.complete();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 41, t,
                    t + 100));
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 42,
                    t + 200, t + 210));
    /* a graph launch: its kernel carries the graph's ids and correlation */
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
                    43, t + 300, t + 400));
    CHILD_CHECK(kernel(43, t + 6000, t + 7000, "graph_node_kernel", 7, 3));
    D.complete();
    prism_shutdown();
    CHILD_CHECK(D.ctl->finalizes == 0 && D.ctl->unsubscribes == 1);     /* defect 2 */
    CHILD_CHECK(getenv("NVTX_INJECTION64_PATH"));      /* set on the initialising thread */
    return 0;
}

static void test_driver_launches_correlated(void **state)
{
    (void)state;
    gsum *s;
    run(driver_child, "driver.prism", &s);
    assert_true(s->footer);
    assert_non_null(strstr(s->status, "driver API"));
    const prism_gpu_record *launch = find(s, PRISM_GPU_API, 41);
    const prism_gpu_record *k = find(s, PRISM_GPU_KERNEL, 41);
    assert_non_null(launch);
    assert_non_null(k);
    assert_string_equal(gname(s, launch->name), "cuLaunchKernel");
    assert_null(find(s, PRISM_GPU_API, 42));            /* cuCtxGetCurrent: not kept */
    assert_non_null(find(s, PRISM_GPU_KERNEL, 43));
    assert_string_equal(gname(s, find(s, PRISM_GPU_API, 43)->name), "cudaGraphLaunch");
    gsum_free(s);
}

/* ---- defect 2: exit ordering ---------------------------------------------------- */

static int exit_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    9, t, t + 10));
    CHILD_CHECK(kernel(9, t + 20, t + 30, "last_kernel", 0, 0));
    /* left in CUPTI's buffer: only the flush at exit brings it; a CUPTI
     * call after the double's teardown exits 97 */
    exit(0);
}

static int exit_early_child(void *arg)
{
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();              /* its teardown registered before PRISM's */
    return exit_child(arg);
}

static void exit_order(child_fn fn, const char *when)
{
    clear_env();
    setenv("CUPTI_DOUBLE_TEARDOWN", when, 1);
    gsum *s;
    run(fn, "exit.prism", &s);
    unsetenv("CUPTI_DOUBLE_TEARDOWN");
    assert_true(s->footer);
    assert_non_null(find(s, PRISM_GPU_KERNEL, 9));
    gsum_free(s);
}

static void test_exit_teardown_at_subscribe(void **state)
{
    (void)state;
    exit_order(exit_child, "subscribe");
}

static void test_exit_teardown_at_load(void **state)
{
    (void)state;
    exit_order(exit_child, "load");
}

static void test_exit_teardown_registered_first(void **state)
{
    (void)state;
    exit_order(exit_early_child, "load");
}

/* A terminating signal: the writer completes the file and the program
 * dies, with no CUPTI call on the way (its threads may be inside CUDA):
 * the records still in CUPTI's buffer are not flushed, and the status says
 * so.  Before, the writer flushed, unsubscribed and finalised. */
static int signal_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(kernel(9, t + 20, t + 30, "in_cupti_buffer", 0, 0));
    kill(getpid(), SIGTERM);
    for (;;)
        pause();
}

static void test_signal_no_cupti_calls(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512], err[4096];
    tdir_file(&d, "signal.prism", path, sizeof path);
    child c = child_start(signal_child, path, false, true);
    int st = child_finish(&c, err, sizeof err);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    gsum *s = gsum_read(path);
    assert_true(s->footer);
    assert_non_null(strstr(s->status, "stopped by signal 15: CUPTI not flushed"));
    assert_null(find(s, PRISM_GPU_KERNEL, 9));
    gsum_free(s);
    tdir_remove(&d);
}

/* A write failure while the program goes on launching: the writer stops
 * and only turns the activity kinds off; no flush, no unsubscribe, no
 * finalize under a running program.  Before, it flushed, unsubscribed and
 * called cuptiFinalize. */
static int write_failure_child(void *arg)
{
    struct rlimit rl;
    CHILD_CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
    rl.rlim_cur = 48 * 1024;
    CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    start(arg, 1, true);
    double_open();
    while (prism_recording()) {
        prism_step_begin();
        prism_push("work");
        prism_pop();
        prism_step_end();
    }
    WAIT_FOR(__atomic_load_n(&D.ctl->kinds, __ATOMIC_RELAXED) == 0);
    uint64_t t = D.now();           /* the program launches on: harmless */
    kernel(3, t, t + 10, "after_failure", 0, 0);
    prism_shutdown();
    /* (a forced flush may have come from the watch: steps without GPU work) */
    CHILD_CHECK(D.ctl->unsubscribes == 0 && D.ctl->finalizes == 0);
    return 0;
}

static void test_write_failure_no_teardown(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "fail.prism", path, sizeof path);
    child_run_ok(write_failure_child, path);
    tdir_remove(&d);
}

/* ---- defect 5: another CUPTI client ------------------------------------------------ */

static int other_subscriber_child(void *arg)
{
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();
    D.ctl->other_subscriber = true;
    start(arg, 60000, true);
    CHILD_CHECK(!D.ctl->clock_taken_from_other && !D.ctl->timestamp);
    CHILD_CHECK(D.ctl->kinds == 0);
    prism_shutdown();
    return 0;
}

static void test_other_subscriber(void **state)
{
    (void)state;
    gsum *s;
    run(other_subscriber_child, "other.prism", &s);
    assert_non_null(strstr(s->status, "another CUPTI client is attached"));
    assert_non_null(strstr(s->status, "records nothing"));
    assert_int_equal(s->ng, 0);
    gsum_free(s);
}

/* A launch recorded, then torch.profiler takes the buffers while the program
 * goes on (steps, or only regions): PRISM's buffers never come back, and
 * the writer's probe (a forced flush) comes once the program went on. */
static int buffers_taken(void *arg, bool steps)
{
    start(arg, 5, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    5, t, t + 10));
    CHILD_CHECK(kernel(5, t + 20, t + 30, "before", 0, 0));
    D.complete();
    uint64_t f = load_u64(&D.ctl->flushes);
    WAIT_FOR(load_u64(&D.ctl->flushes) >= f + 2);
    D.other(true, false);       /* torch.profiler starts: its buffers from now on */
    for (int i = 0; i < 20000 && !load_u64(&D.ctl->forced_flushes); i++) {
        for (int j = 0; j < (steps ? 1 : 16); j++) {
            if (steps) {
                prism_step_begin();
                prism_step_end();
            } else {
                prism_push("work");
                prism_pop();
            }
        }
        nanosleep(&(struct timespec){ 0, 500000 }, NULL);
    }
    CHILD_CHECK(load_u64(&D.ctl->forced_flushes));
    prism_shutdown();
    return 0;
}

static int buffers_taken_child(void *arg)
{
    return buffers_taken(arg, true);
}

static void test_buffers_taken_mid_run(void **state)
{
    (void)state;
    gsum *s;
    run(buffers_taken_child, "taken.prism", &s);
    assert_true(s->footer);
    assert_non_null(find(s, PRISM_GPU_KERNEL, 5));
    assert_true(!strncmp(s->status, "stopped: ", 9));
    assert_non_null(strstr(s->status, "after step 0"));
    assert_non_null(strstr(s->status, "another CUPTI client"));
    gsum_free(s);
}

/* The same in a program that marks no steps: its regions are the progress. */
static int buffers_taken_nosteps_child(void *arg)
{
    return buffers_taken(arg, false);
}

static void test_buffers_taken_without_steps(void **state)
{
    (void)state;
    gsum *s;
    run(buffers_taken_nosteps_child, "taken_nosteps.prism", &s);
    assert_true(s->footer);
    assert_true(!strncmp(s->status, "stopped: ", 9));
    assert_non_null(strstr(s->status, "more events recorded"));
    gsum_free(s);
}

static int kernels_off_child(void *arg)
{
    start(arg, 5, true);
    double_open();
    D.other(false, true);       /* torch.profiler stops: kernels disabled */
    const uint64_t kbit = 1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    uint32_t corr = 100;
    for (int i = 0; i < 200 && !(load_u64(&D.ctl->kinds) & kbit); i++, corr++) {
        uint64_t t = D.now();
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr,
            t, t + 10);
        kernel(corr, t + 20, t + 30, "lost", 0, 0);         /* not traced */
        D.complete();
        uint64_t f = load_u64(&D.ctl->flushes);
        WAIT_FOR(load_u64(&D.ctl->flushes) > f);          /* one writer cycle */
    }
    CHILD_CHECK(load_u64(&D.ctl->kinds) & kbit);
    uint64_t t = D.now();
    CHILD_CHECK(kernel(99999, t + 20, t + 30, "again", 0, 0));
    prism_shutdown();
    return 0;
}

static void test_kernels_disabled_mid_run(void **state)
{
    (void)state;
    gsum *s;
    run(kernels_off_child, "koff.prism", &s);
    assert_true(!strncmp(s->status, "ok: ", 4));
    assert_non_null(strstr(s->status, "kernel tracing was disabled by another CUPTI client"));
    assert_non_null(find(s, PRISM_GPU_KERNEL, 99999));
    gsum_free(s);
}

/* ---- defect 6: no setenv from the writer ------------------------------------------ */

static void *idle_thread(void *arg)
{
    char c;
    while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int nvtx_env_child(void *arg)
{
    int p[2];
    pthread_t th;
    CHILD_CHECK(pipe(p) == 0 && pthread_create(&th, NULL, idle_thread, &p[0]) == 0);
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();
    start(arg, 5, false);       /* the program has a thread: no setenv */
    CHILD_CHECK(!D.ctl->subscribed);
    /* "the program loads the CUDA driver": a copy named libcuda.so.1 */
    char cuda[600];
    snprintf(cuda, sizeof cuda, "%s.libcuda/libcuda.so.1", (const char *)arg);
    char dir[600];
    snprintf(dir, sizeof dir, "%s.libcuda", (const char *)arg);
    CHILD_CHECK(mkdir(dir, 0700) == 0);
    int in = open(double_path, O_RDONLY), out = open(cuda, O_WRONLY | O_CREAT, 0600);
    char buf[65536];
    ssize_t n;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        CHILD_CHECK(write(out, buf, (size_t)n) == n);
    CHILD_CHECK(in >= 0 && out >= 0 && close(out) == 0);
    close(in);
    CHILD_CHECK(dlopen(cuda, RTLD_NOW | RTLD_LOCAL));
    WAIT_FOR(__atomic_load_n(&D.ctl->subscribed, __ATOMIC_RELAXED));
    CHILD_CHECK(D.ctl->enable_tid != gettid_());            /* attached by the writer */
    CHILD_CHECK(!getenv("NVTX_INJECTION64_PATH"));
    prism_shutdown();
    unlink(cuda);
    rmdir(dir);
    close(p[1]);
    pthread_join(th, NULL);
    return 0;
}

static void test_writer_never_sets_nvtx_env(void **state)
{
    (void)state;
    gsum *s;
    run(nvtx_env_child, "nvtx.prism", &s);
    assert_non_null(strstr(s->status, "NVTX not routed"));
    gsum_free(s);
}

/* ---- NVTX handed on to the libcupti PRISM attaches (GPU run 1) ----------- */

static int in_the_executable(void)
{
    return 0;
}

static int nvtx_handoff_child(void *arg)
{
    (void)arg;
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    double_open();
    /* NVTX calls the entry of the library its variable names (prism-run:
     * libprism-inject.so) with its export-table getter: it reaches the
     * libcupti's own entry, argument unchanged */
    const void *getter = (const void *)&D;
    CHILD_CHECK(prism__nvtx_handoff(getter) == 1);
    CHILD_CHECK(D.ctl->nvtx_inits == 1 && D.ctl->nvtx_table_fn == getter);
    /* the variable points at a shared library holding the entry, only
     * while the program has no other thread, never over a user's value */
    CHILD_CHECK(prism__nvtx_route((const void *)in_the_executable) == 0);     /* the executable */
    CHILD_CHECK(!getenv("NVTX_INJECTION64_PATH"));
    CHILD_CHECK(prism__nvtx_route((const void *)D.now) == 1);   /* in the double */
    const char *v = getenv("NVTX_INJECTION64_PATH");
    CHILD_CHECK(v && strstr(v, "libcupti_double.so"));
    setenv("NVTX_INJECTION64_PATH", "/users/own/nvtx.so", 1);
    CHILD_CHECK(prism__nvtx_route((const void *)D.now) == 1);
    CHILD_CHECK(!strcmp(getenv("NVTX_INJECTION64_PATH"), "/users/own/nvtx.so"));
    unsetenv("NVTX_INJECTION64_PATH");
    int p[2];
    pthread_t th;
    CHILD_CHECK(pipe(p) == 0 && pthread_create(&th, NULL, idle_thread, &p[0]) == 0);
    CHILD_CHECK(prism__nvtx_route((const void *)D.now) == 0);   /* a thread: no setenv */
    CHILD_CHECK(!getenv("NVTX_INJECTION64_PATH"));
    close(p[1]);
    pthread_join(th, NULL);
    return 0;
}

static void test_nvtx_handed_to_cupti(void **state)
{
    (void)state;
    child_run_ok(nvtx_handoff_child, NULL);
}

/* A libstdc++ loaded RTLD_LOCAL (by PyTorch in Python) demangles kernel
 * names at record time too (GPU run: torch's kernels stayed mangled). */
static int demangle_child(void *arg)
{
    CHILD_CHECK(dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL));
    /* not in the global scope, but under the sanitizers (libubsan links
     * libstdc++): there the global lookup finds it, the result is the same */
    start(arg, 60000, true);
    double_open();
    uint64_t t = D.now();
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    51, t, t + 100));
    CHILD_CHECK(kernel(51, t + 1000, t + 2000, "_ZN2at6native13reduce_kernelILi512ELi1EEEvv", 0, 0));
    D.complete();
    prism_shutdown();
    return 0;
}

static void test_kernel_names_demangled_by_a_local_libstdcxx(void **state)
{
    (void)state;
    gsum *s;
    run(demangle_child, "demangle.prism", &s);
    const prism_gpu_record *k = find(s, PRISM_GPU_KERNEL, 51);
    assert_non_null(k);
    assert_string_equal(gname(s, k->name), "void at::native::reduce_kernel<512, 1>()");
    gsum_free(s);
}

/* ---- NCCL: communication kernels on their own stream ------------------------- */

/* A data-parallel step as NCCL runs it: the all-reduce kernel launched with
 * cudaLaunchKernelExC on the communicator's stream while a compute kernel
 * runs on the default one; both are recorded, tied to their launch and so
 * to the region open on the launching thread. */
static int nccl_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    /* each launch call inside its region: its times taken there */
    prism_push("forward");
    uint64_t t = D.now(), t1 = D.now() + 1;
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                    71, t, t1));
    prism_pop();
    prism_push("allreduce");
    uint64_t u = D.now(), u1 = D.now() + 1;
    CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                    72, u, u1));
    prism_pop();
    CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };
    k.start = u1 + 1000, k.end = u1 + 9000, k.correlationId = 71, k.streamId = 7;
    k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    k.name = "_Z6matmulPKfS0_Pfi";
    CHILD_CHECK(D.emit(&k, sizeof k));
    k.start = u1 + 2000, k.end = u1 + 12000, k.correlationId = 72, k.streamId = 21;
    k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    CHILD_CHECK(D.emit(&k, sizeof k));
    D.complete();
    prism_shutdown();
    return 0;
}

static void test_nccl_kernels(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "nccl.prism", path, sizeof path);
    child_run_ok(nccl_child, path);
    gsum *s = gsum_read(path);
    const prism_gpu_record *k = find(s, PRISM_GPU_KERNEL, 72), *l = find(s, PRISM_GPU_API, 72);
    assert_non_null(k);
    assert_non_null(l);
    assert_int_equal(k->stream, 21);
    assert_non_null(strstr(gname(s, k->name), "ncclDevKernel_AllReduce"));
    assert_string_equal(gname(s, l->name), "cudaLaunchKernelExC");
    gsum_free(s);
    /* the analysis credits each kernel to the region that launched it */
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    const prism_tree *t = prism_analysis_tree(a);
    uint64_t fwd = 0, ar = 0, ar_ns = 0;
    for (size_t i = 0; i < t->count; i++) {
        if (!strcmp(t->nodes[i].name, "forward"))
            fwd = t->nodes[i].gpu_launches;
        if (!strcmp(t->nodes[i].name, "allreduce"))
            ar = t->nodes[i].gpu_launches, ar_ns = t->nodes[i].gpu_ns;
    }
    assert_int_equal(fwd, 1);
    assert_int_equal(ar, 1);
    /* the kernel's own time, though it overlaps (converted between clocks: +/- 1 ns) */
    assert_in_range(ar_ns, 9998, 10002);
    prism_analysis_free(a);
    tdir_remove(&d);
}

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

static void nvtx_pop(void)
{
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, NULL, NULL);
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
            assert_string_equal(names, "/loader;loader/inner;");
            seen |= 1;
        } else if (tname && !strcmp(tname, "comm")) {
            assert_string_equal(names, "/comm;comm/inner;");
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

/* PRISM_CUPTI_KINDS: kernels and the kinds named, no others; the status
 * says what was left out. */
static int kinds_child(void *arg)
{
    setenv("PRISM_CUPTI_KINDS", "memcpy,memset", 1);
    start(arg, 60000, true);
    double_open();
    uint64_t k = D.ctl->kinds;
    CHILD_CHECK(k & 1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    CHILD_CHECK(k & 1ull << CUPTI_ACTIVITY_KIND_MEMCPY && k & 1ull << CUPTI_ACTIVITY_KIND_MEMSET);
    CHILD_CHECK(!(k & 1ull << CUPTI_ACTIVITY_KIND_RUNTIME));
    CHILD_CHECK(!(k & 1ull << CUPTI_ACTIVITY_KIND_DRIVER));
    CHILD_CHECK(!(k & 1ull << CUPTI_ACTIVITY_KIND_MEMORY2));
    prism_shutdown();
    return 0;
}

static void test_kinds_knob(void **state)
{
    (void)state;
    gsum *s;
    run(kinds_child, "kinds.prism", &s);
    assert_non_null(strstr(s->status, "kernels, copies, peer copies, memsets"));
    assert_null(strstr(s->status, "runtime API"));
    assert_non_null(strstr(s->status, "PRISM_CUPTI_KINDS=memcpy,memset"));
    gsum_free(s);
}

static int setup(void **state)
{
    (void)state;
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    assert_non_null(slash);
    *slash = '\0';
    snprintf(double_path, sizeof double_path, "%s/libcupti_double.so", exe);
    if (access(double_path, R_OK) != 0)
        return -1;
    clear_env();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_driver_launches_correlated),
        cmocka_unit_test(test_exit_teardown_at_subscribe),
        cmocka_unit_test(test_exit_teardown_at_load),
        cmocka_unit_test(test_exit_teardown_registered_first),
        cmocka_unit_test(test_signal_no_cupti_calls),
        cmocka_unit_test(test_write_failure_no_teardown),
        cmocka_unit_test(test_other_subscriber),
        cmocka_unit_test(test_buffers_taken_mid_run),
        cmocka_unit_test(test_buffers_taken_without_steps),
        cmocka_unit_test(test_kernels_disabled_mid_run),
        cmocka_unit_test(test_writer_never_sets_nvtx_env),
        cmocka_unit_test(test_nvtx_handed_to_cupti),
        cmocka_unit_test(test_kinds_knob),
        cmocka_unit_test(test_nccl_kernels),
        cmocka_unit_test(test_nvtx_on_chosen_threads),
        cmocka_unit_test(test_kernel_names_demangled_by_a_local_libstdcxx),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
