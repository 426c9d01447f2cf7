/*
 * cupti_session_test.c - the GPU backend inside a real session, without a
 * GPU (each scenario in a forked child that writes a profile; the parent
 * reads it back):
 *
 *   - hand-off to the writer: a CUPTI buffer, requested and completed
 *     through the backend's own buffer callbacks and read with a fake
 *     cuptiActivityGetNextRecord, ends up as GPU chunks: the API record on
 *     the calling thread's stream and inside the region open around it
 *     (same timeline), the kernel with the same correlation id, a CUDA
 *     thread that recorded no region gets a THREADS record, CUPTI's dropped
 *     count becomes DROPPED (source GPU) and reaches the footer;
 *   - NVTX callbacks become regions (push/pop, start/end, unmatched pops);
 *   - no CUDA: InitializeInjection with a libcupti that cannot be loaded,
 *     and a plain prism_init in a program that never loads CUDA: CPU data
 *     recorded, gpu.status says why, no GPU memory;
 *   - the injection library loaded beside a program's own static copy of
 *     libcollect stays off (one session, one writer per file);
 *   - the real libcupti on a machine without a driver (when installed).
 *
 * prism-run is tested in prism_run_test.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <sys/syscall.h>

#include "collect_util.h"
#include "../libcollect/cupti.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS
#define NVTX_NO_IMPL
#include <generated_nvtx_meta.h>
#endif

int InitializeInjection(void);          /* libcollect/inject.c, linked in */

/* ---- a profile's GPU side, read back ------------------------------------ */

typedef struct rev {
    uint32_t stream, name, kind;
    uint64_t ts;
} rev;

typedef struct gsum {
    prism_reader *r;
    prism_gpu_record *g;
    size_t ng, cg;
    rev *ev;
    size_t nev, cev;
    char status[512];
    uint64_t gpu_dropped, footer_dropped, marks;
    bool footer;
    uint64_t tid_of[PS_STREAMS];
    size_t nmem, mem_with_gpu;
} gsum;

static void g_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    gsum *s = ctx;
    for (size_t i = 0; i < n; i++) {
        s->g = ps_grow(s->g, &s->cg, s->ng, sizeof *s->g);
        s->g[s->ng++] = g[i];
    }
}

static void g_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                      size_t n)
{
    gsum *s = ctx;
    (void)depth;
    for (size_t i = 0; i < n; i++) {
        s->ev = ps_grow(s->ev, &s->cev, s->nev, sizeof *s->ev);
        s->ev[s->nev++] = (rev){ stream, ev[i].name, ev[i].kind, ev[i].ts };
    }
}

static void g_info(void *ctx, const char *key, const prism_value *v)
{
    if (!strcmp(key, "gpu.status") && v->type == PRISM_VAL_TEXT)
        snprintf(((gsum *)ctx)->status, sizeof ((gsum *)ctx)->status, "%s", v->v.s);
}

static void g_dropped(void *ctx, const prism_dropped *d)
{
    gsum *s = ctx;
    if (d->source == PRISM_SOURCE_GPU && d->total > s->gpu_dropped)
        s->gpu_dropped = d->total;
}

static void g_thread(void *ctx, const prism_thread *t)
{
    if (t->stream < PS_STREAMS)
        ((gsum *)ctx)->tid_of[t->stream] = t->os_tid;
}

static void g_memory(void *ctx, const prism_memory_sample *m)
{
    gsum *s = ctx;
    s->nmem++;
    s->mem_with_gpu += m->ngpu > 0;
}

static void g_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    (void)stream;
    (void)m;
    ((gsum *)ctx)->marks += n;
}

static void g_footer(void *ctx, const prism_footer *f)
{
    gsum *s = ctx;
    s->footer = true;
    s->footer_dropped = f->dropped;
}

static gsum *gsum_read(const char *path)
{
    gsum *s = calloc(1, sizeof *s);
    assert_non_null(s);
    prism_reader_callbacks cb = {
        .gpu = g_gpu, .regions = g_regions, .info = g_info, .dropped = g_dropped,
        .thread = g_thread, .memory = g_memory, .marks = g_marks, .footer = g_footer,
    };
    assert_int_equal(prism_read_file(path, &cb, s, &s->r), PRISM_OK);
    return s;
}

static void gsum_free(gsum *s)
{
    prism_reader_free(s->r);
    free(s->g);
    free(s->ev);
    free(s);
}

static __attribute__((unused)) const char *gname(const gsum *s, uint32_t id)
{
    const char *n = prism_reader_string(s->r, id, NULL);
    return n ? n : "";
}

static void clear_env(void)
{
    static const char *const vars[] = {
        "PRISM_OUTPUT", "PRISM_ENABLED", "PRISM_COLLECT_GPU", "PRISM_CUPTI_PATH",
        "PRISM_RUN_PID", "PRISM_WARMUP_STEPS", "PRISM_ACTIVE_STEPS", "CUDA_INJECTION64_PATH",
        "PRISM_COLLECT_MEMORY", "PRISM_MEMORY_INTERVAL_MS", "NVTX_INJECTION64_PATH",
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void start_session(const char *path, bool gpu)
{
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    c.collect_gpu_ops = gpu;
    c.collect_memory = false;
    c.flush_interval_ms = 60000;        /* one cycle: at shutdown */
    CHILD_CHECK(prism_init(&c) == 0 && prism__s);
}

/* ---- hand-off to the writer ------------------------------------------------ */

#ifdef PRISM_HAVE_CUPTI_HEADERS

#define SLOT 256u                       /* one synthetic record per slot */

static CUptiResult fake_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    uint8_t *p = *rec ? (uint8_t *)*rec + SLOT : buf;
    if (p + SLOT > buf + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(void *)p;
    return CUPTI_SUCCESS;
}

static size_t fake_drops = 5;

static CUptiResult fake_dropped(CUcontext ctx, uint32_t stream, size_t *n)
{
    (void)ctx;
    (void)stream;
    *n = fake_drops;
    fake_drops = 0;
    return CUPTI_SUCCESS;
}

static CUptiResult fake_name(CUpti_CallbackDomain d, uint32_t cbid, const char **n)
{
    (void)d;
    *n = cbid == 211 ? "cudaLaunchKernel_v7000" : NULL;
    return *n ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

static void api_rec(uint8_t *slot, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end)
{
    CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)(void *)slot;
    a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a->cbid = 211;
    a->threadId = tid;
    a->correlationId = corr;
    a->start = start;
    a->end = end;
}

static int handoff_child(void *arg)
{
    const char *path = arg;
    start_session(path, false);         /* no CUPTI attach: records are ours */
    session *s = prism__s;
    cupti_fn.GetNextRecord = fake_next;
    cupti_fn.GetNumDroppedRecords = fake_dropped;
    cupti_fn.GetCallbackName = fake_name;
    cupti_clock clk = { s->t0_mono, s->t0_ticks, s->ns_per_tick };
    cupti_drain_setup(s, &clk, 0, true);
    cupti_set_status("ok: synthetic");

    prism_push("launch");
    uint64_t t1 = prism__now();
    for (volatile int i = 0; i < 100000; i++)
        ;
    uint64_t t2 = prism__now();
    prism_pop();

    uint8_t *buf;
    size_t size, max;
    cupti_buffer_requested(&buf, &size, &max);
    CHILD_CHECK(buf && size >= 8 * SLOT && ((uintptr_t)buf & 7) == 0);
    memset(buf, 0, 6 * SLOT);
    uint64_t a = cupti_clock_cupti(&clk, t1), b = cupti_clock_cupti(&clk, t2);
    api_rec(buf, (uint32_t)syscall(SYS_gettid), 1, a, b);
    CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(void *)(buf + SLOT);
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->start = b + 1000;
    k->end = b + 6000;
    k->correlationId = 1;
    k->streamId = 7;
    k->gridX = k->gridY = k->gridZ = k->blockX = k->blockY = k->blockZ = 1;
    k->name = "_Z6matmulv";
    CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)(void *)(buf + 2 * SLOT);
    m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m->bytes = 4096;
    m->start = b + 100;
    m->end = b + 200;
    api_rec(buf + 3 * SLOT, 999999, 2, b + 50, b + 60);     /* a CUDA-only thread */
    CUpti_ActivityMemset4 *z = (CUpti_ActivityMemset4 *)(void *)(buf + 4 * SLOT);
    z->kind = CUPTI_ACTIVITY_KIND_MEMSET;
    z->bytes = 64;
    z->start = b + 300;
    z->end = b + 400;
    CUpti_ActivitySynchronization2 *y = (CUpti_ActivitySynchronization2 *)(void *)(buf + 5 * SLOT);
    y->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    y->streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    y->start = b + 10;
    y->end = b + 7000;
    cupti_buffer_completed(NULL, 0, buf, size, 6 * SLOT);
    prism_shutdown();
    return 0;
}

static void test_handoff_to_writer(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "gpu.cbor", path, sizeof path);
    child_run_ok(handoff_child, path);
    gsum *s = gsum_read(path);
    assert_true(s->footer);
    assert_string_equal(s->status, "ok: synthetic");
    assert_int_equal(s->ng, 6);
    const prism_gpu_record *api = NULL, *foreign = NULL, *kern = NULL;
    size_t types[8] = { 0 };
    for (size_t i = 0; i < s->ng; i++) {
        const prism_gpu_record *g = &s->g[i];
        types[g->type < 8 ? g->type : 0]++;
        if (g->type == PRISM_GPU_API && g->correlation == 1)
            api = g;
        if (g->type == PRISM_GPU_API && g->correlation == 2)
            foreign = g;
        if (g->type == PRISM_GPU_KERNEL)
            kern = g;
    }
    assert_int_equal(types[PRISM_GPU_API], 2);
    assert_int_equal(types[PRISM_GPU_MEMCPY], 1);
    assert_int_equal(types[PRISM_GPU_MEMSET], 1);
    assert_int_equal(types[PRISM_GPU_SYNC], 1);
    assert_non_null(api);
    assert_non_null(foreign);
    assert_non_null(kern);
    /* names interned in the session's table (demangled when a C++
     * runtime is in the process) */
    assert_string_equal(gname(s, api->name), "cudaLaunchKernel");
    assert_true(!strcmp(gname(s, kern->name), "_Z6matmulv") ||
                !strcmp(gname(s, kern->name), "matmul()"));
    assert_int_equal(kern->correlation, api->correlation);
    /* the API record: the calling thread's stream, inside its region */
    assert_true(api->stream >= 1 && api->stream < PS_STREAMS);
    const rev *enter = NULL, *exit_ev = NULL;
    for (size_t i = 0; i < s->nev; i++) {
        if (s->ev[i].kind == PRISM_REGION_ENTER && !strcmp(gname(s, s->ev[i].name), "launch"))
            enter = &s->ev[i];
        else if (enter && !exit_ev && s->ev[i].kind == PRISM_REGION_EXIT)
            exit_ev = &s->ev[i];
    }
    assert_non_null(enter);
    assert_non_null(exit_ev);
    assert_int_equal(enter->stream, api->stream);
    assert_true(enter->ts <= api->start + 1);
    assert_true(api->start <= api->end);
    assert_true(api->end <= exit_ev->ts + 1);
    assert_true(kern->start > api->end);
    /* the CUDA-only thread: a stream of its own, named after its tid */
    assert_true(foreign->stream != api->stream && foreign->stream < PS_STREAMS);
    assert_int_equal(s->tid_of[foreign->stream], 999999);
    /* CUPTI's dropped count: a GPU DROPPED record, and in the footer */
    assert_int_equal(s->gpu_dropped, 5);
    assert_true(s->footer_dropped >= 5);
    gsum_free(s);
    tdir_remove(&d);
}

/* ---- NVTX ------------------------------------------------------------------ */

static void nvtx_call(CUpti_CallbackId cbid, const void *params, const void *ret)
{
    CUpti_NvtxData d = { "nvtx", params, ret };
    cupti_nvtx(cbid, &d);
}

static int nvtx_child(void *arg)
{
    start_session(arg, false);
    nvtxRangePushA_params outer = { "outer" };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePushA, &outer, NULL);
    nvtxEventAttributes_t at;
    memset(&at, 0, sizeof at);
    at.messageType = NVTX_MESSAGE_TYPE_ASCII;
    at.message.ascii = "inner";
    nvtxRangePushEx_params inner = { &at };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePushEx, &inner, NULL);
    nvtxRangePop_params none = { 0 };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, &none, NULL);
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, &none, NULL);
    /* a start range with a push inside; ending the range closes the push
     * and re-opens it */
    nvtxRangeStartA_params async = { "async" };
    nvtxRangeId_t id = 77;
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangeStartA, &async, &id);
    nvtxRangePushA_params x = { "x" };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePushA, &x, NULL);
    nvtxRangeEnd_params end = { 77 };
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangeEnd, &end, NULL);
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, &none, NULL);
    /* an NVTX pop never closes the program's own region */
    prism_push("mine");
    nvtx_call(CUPTI_CBID_NVTX_nvtxRangePop, &none, NULL);
    prism_pop();
    nvtxMarkA_params mk = { "here" };
    nvtx_call(CUPTI_CBID_NVTX_nvtxMarkA, &mk, NULL);
    prism_shutdown();
    return 0;
}

static void test_nvtx_regions(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "nvtx.cbor", path, sizeof path);
    child_run_ok(nvtx_child, path);
    gsum *s = gsum_read(path);
    /* the events in order: "+name" enter, "-" exit */
    char seq[256] = "";
    for (size_t i = 0; i < s->nev; i++) {
        size_t l = strlen(seq);
        if (s->ev[i].kind == PRISM_REGION_ENTER)
            snprintf(seq + l, sizeof seq - l, "+%s ", gname(s, s->ev[i].name));
        else
            snprintf(seq + l, sizeof seq - l, "- ");
    }
    assert_string_equal(seq, "+outer +inner - - +async +x - - +x - +mine - ");
    assert_int_equal(s->marks, 1);
    gsum_free(s);
    tdir_remove(&d);
}

#else /* no CUPTI headers */

static void test_handoff_to_writer(void **state)
{
    (void)state;
    skip();
}

static void test_nvtx_regions(void **state)
{
    (void)state;
    skip();
}

#endif

/* ---- no CUDA ---------------------------------------------------------------- */

static void work(void)
{
    for (int i = 0; i < 5; i++) {
        prism_step_begin();
        prism_push("step_work");
        for (volatile int k = 0; k < 20000; k++)
            ;
        prism_pop();
        prism_step_end();
    }
}

static int injection_child(void *arg)
{
    setenv("PRISM_OUTPUT", arg, 1);
    setenv("PRISM_CUPTI_PATH", "/nonexistent/libcupti.so", 1);
    CHILD_CHECK(InitializeInjection() == 1);
    CHILD_CHECK(prism_recording());
    CHILD_CHECK(InitializeInjection() == 1);    /* again: nothing changes */
    work();
    return 0;                           /* exit: the session ends at exit */
}

static void test_no_cuda_injection(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "inject.cbor", path, sizeof path);
    child_run_ok(injection_child, path);
    gsum *s = gsum_read(path);
    assert_true(s->footer);
    assert_int_equal(s->nev, 10);       /* the CPU side is all there */
    assert_int_equal(s->ng, 0);
    assert_true(s->nmem > 0);
    assert_int_equal(s->mem_with_gpu, 0);
#ifdef PRISM_HAVE_CUPTI_HEADERS
    assert_non_null(strstr(s->status, "unavailable: cannot load libcupti"));
#else
    assert_string_equal(s->status, "unavailable: built without CUPTI headers");
#endif
    gsum_free(s);
    tdir_remove(&d);
}

static int program_child(void *arg)
{
    start_session(arg, true);
    work();
    return 0;
}

static void test_no_cuda_program(void **state)
{
    (void)state;
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (cuda) {                         /* the test process has CUDA loaded */
        dlclose(cuda);
        skip();
    }
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "plain.cbor", path, sizeof path);
    child_run_ok(program_child, path);
    gsum *s = gsum_read(path);
    assert_true(s->footer);
    assert_int_equal(s->nev, 10);
#ifdef PRISM_HAVE_CUPTI_HEADERS
    assert_string_equal(s->status, "unavailable: the program never loaded the CUDA driver "
                                   "(libcuda.so.1)");
#else
    assert_string_equal(s->status, "unavailable: built without CUPTI headers");
#endif
    gsum_free(s);
    tdir_remove(&d);
}

/* A program with its own (static) copy of libcollect, run under
 * prism-run: the driver loads libprism-inject.so and with it a second copy
 * (libprism.so), whose InitializeInjection must stay off rather than write
 * a second session into the same file. */
static int beside_child(void *arg)
{
    const char *const *a = arg;
    void *h = dlopen(a[1], RTLD_NOW | RTLD_LOCAL);
    CHILD_CHECK(h != NULL);
    int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
    bool (*other)(void) = (bool (*)(void))dlsym(h, "prism_recording");
    CHILD_CHECK(init && other && !other());     /* its constructor left it off */
    start_session(a[0], true);
    CHILD_CHECK(init() == 1);           /* at once: the writer may not have run yet */
    prism_push("before");
    CHILD_CHECK(!other() && prism_recording());
    prism_pop();
    prism_shutdown();
    return 0;
}

static void test_injection_beside_static_copy(void **state)
{
    (void)state;
    const char *b = getenv("B");
    char lib[512];
    snprintf(lib, sizeof lib, "%s/lib/libprism-inject.so", b && *b ? b : "build");
    if (access(lib, R_OK) != 0)
        skip();
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "beside.cbor", path, sizeof path);
    setenv("PRISM_OUTPUT", path, 1);    /* what the injected copy would use */
    const char *args[2] = { path, lib };
    child_run_ok(beside_child, args);
    unsetenv("PRISM_OUTPUT");
    gsum *s = gsum_read(path);
    const prism_reader_stats *st = prism_reader_stats_get(s->r);
    assert_int_equal(st->damaged, 0);
    assert_int_equal(st->seq_gaps, 0);
    assert_true(s->footer);
    assert_int_equal(s->nev, 2);
    gsum_free(s);
    tdir_remove(&d);
}

#ifdef PRISM_HAVE_CUPTI_HEADERS
/* The real libcupti, when installed: attaching fails cleanly without a
 * driver (or works on a machine with one). */
static int real_cupti_child(void *arg)
{
    setenv("PRISM_OUTPUT", arg, 1);
    CHILD_CHECK(InitializeInjection() == 1);
    work();
    prism_shutdown();
    _exit(0);                           /* libcupti's own allocations: not ours */
}
#endif

static void test_real_cupti_no_driver(void **state)
{
    (void)state;
#ifdef PRISM_HAVE_CUPTI_HEADERS
    /* libcupti is loaded in the child only: its allocations at load time
     * would read as leaks in this process */
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "real.cbor", path, sizeof path);
    child_run_ok(real_cupti_child, path);
    gsum *s = gsum_read(path);
    assert_true(s->footer);
    assert_int_equal(s->nev, 10);
    bool absent = strstr(s->status, "cannot load libcupti") != NULL;
    if (!absent)
        assert_true(!strncmp(s->status, "unavailable: ", 13) || !strncmp(s->status, "ok: ", 4));
    gsum_free(s);
    tdir_remove(&d);
    if (absent)
        skip();                         /* no libcupti installed */
#else
    skip();
#endif
}

int main(void)
{
    clear_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handoff_to_writer),
        cmocka_unit_test(test_nvtx_regions),
        cmocka_unit_test(test_no_cuda_injection),
        cmocka_unit_test(test_no_cuda_program),
        cmocka_unit_test(test_injection_beside_static_copy),
        cmocka_unit_test(test_real_cupti_no_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
