/*
 * cupti_double_util.h - what the tests against the CUPTI double share
 * (tests/cupti_double_*_test.c; header-only, every function static): the
 * double opened through the same file PRISM opens (PRISM_CUPTI_PATH), its
 * records scripted (API calls, Kernel10 records), a session started on it,
 * and the profile read back into its GPU records, gpu.status and footer.
 *
 * Each scenario runs in a forked child (one session per process,
 * collect_util.h) that writes a profile the parent reads.  No GPU result:
 * the double scripts what CUPTI would do, and the tests check what PRISM
 * does with it (issue 27).  Include after <cmocka.h>; the whole header is
 * empty without the CUPTI headers (the tests then skip).
 */
#ifndef PRISM_TESTS_CUPTI_DOUBLE_UTIL_H
#define PRISM_TESTS_CUPTI_DOUBLE_UTIL_H

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "collect_util.h"
#include "cupti_double.h"
#include "prism/analysis.h"
#include "../libcollect/cupti.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- the profile, read back --------------------------------------------- */

typedef struct gsum {
    prism_reader *r;
    prism_gpu_record g[1024];
    size_t ng;
    char status[1024];
    bool footer;
} gsum;

static inline void g_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    gsum *s = ctx;
    for (size_t i = 0; i < n && s->ng < sizeof s->g / sizeof s->g[0]; i++)
        s->g[s->ng++] = g[i];
}

static inline void g_info(void *ctx, const char *key, const prism_value *v)
{
    if (!strcmp(key, "gpu.status") && v->type == PRISM_VAL_TEXT)
        snprintf(((gsum *)ctx)->status, sizeof ((gsum *)ctx)->status, "%s", v->v.s);
}

static inline void g_footer(void *ctx, const prism_footer *f)
{
    (void)f;
    ((gsum *)ctx)->footer = true;
}

static inline gsum *gsum_read(const char *path)
{
    gsum *s = calloc(1, sizeof *s);
    assert_non_null(s);
    prism_reader_callbacks cb = { .gpu = g_gpu, .info = g_info, .footer = g_footer };
    assert_int_equal(prism_read_file(path, &cb, s, &s->r), PRISM_OK);
    return s;
}

static inline const char *gname(const gsum *s, uint32_t id)
{
    const char *n = prism_reader_string(s->r, id, NULL);
    return n ? n : "";
}

static inline const prism_gpu_record *find(const gsum *s, uint32_t type, uint64_t corr)
{
    for (size_t i = 0; i < s->ng; i++)
        if (s->g[i].type == type && s->g[i].correlation == corr)
            return &s->g[i];
    return NULL;
}

static inline void gsum_free(gsum *s)
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
static inline void double_open(void)
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

static inline uint32_t gettid_(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

static inline bool api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr, uint64_t start,
                uint64_t end)
{
    CUpti_ActivityAPI a = { .kind = kind, .cbid = cbid, .start = start, .end = end,
                            .processId = (uint32_t)getpid(), .threadId = gettid_(),
                            .correlationId = corr };
    return D.emit(&a, sizeof a);
}

static inline bool kernel(uint32_t corr, uint64_t start, uint64_t end, const char *name,
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

static inline void clear_env(void)
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
 * when attach is set.  flush_ms: the writer's cycle; cpu_ms: the CPU
 * sampler's period. */
static inline session *start_with(const char *path, unsigned flush_ms, unsigned cpu_ms,
                                  bool attach)
{
    setenv("PRISM_CUPTI_PATH", double_path, 1);
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    c.collect_gpu_ops = true;
    c.collect_memory = false;
    c.flush_interval_ms = flush_ms;
    c.cpu_interval_ms = cpu_ms;
    CHILD_CHECK(prism_init(&c) == 0 && prism__s);
    if (attach)
        prism__cupti_injected(prism__s);
    return prism__s;
}

static inline session *start(const char *path, unsigned flush_ms, bool attach)
{
    prism_config c;
    prism_config_default(&c);
    return start_with(path, flush_ms, c.cpu_interval_ms, attach);
}

/* Poll a condition the writer makes true (never a timing assertion: the
 * bound only keeps a broken build from hanging). */
#define WAIT_FOR(cond) do { \
        for (int i_ = 0; !(cond) && i_ < 20000; i_++) \
            nanosleep(&(struct timespec){ 0, 500000 }, NULL); \
        CHILD_CHECK(cond); \
    } while (0)

static inline uint64_t load_u64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void run(child_fn fn, const char *file, gsum **out)
{
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, file, path, sizeof path);
    child_run_ok(fn, path);
    *out = gsum_read(path);
    tdir_remove(&d);
}

/* The group's setup: the double beside the test binary, a clean
 * environment; -1 (the group fails) without it. */
static inline int cupti_double_setup(void **state)
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

#endif /* PRISM_HAVE_CUPTI_HEADERS */

#endif
