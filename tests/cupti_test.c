/*
 * cupti_test.c - the GPU backend's pure half, without a GPU
 * (libcollect/cupti_translate.c):
 *
 *   - the clock handed to CUPTI and its inverse; a GPU record and a CPU
 *     event taken at the same tick land on the same ns of the file, however
 *     the calibration moved;
 *   - CUPTI enumerations to the profile's;
 *   - translation of synthetic activity records built from the real CUPTI
 *     header structs (kernels, copies, memsets, syncs, runtime API calls,
 *     allocations, contexts): fields, clock conversion, thread -> stream
 *     mapping, correlation ids, name interning (once per distinct name),
 *     query calls and records without times left out.
 *
 * Built against the CUPTI headers when the build found them; otherwise the
 * translation cases are skipped and the rest still runs.  The session side
 * (hand-off to the writer, NVTX, no CUDA, prism-run) is cupti_session_test.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../libcollect/cupti.h"

/* ---- clock ---------------------------------------------------------------- */

static void test_clock_round_trip(void **state)
{
    (void)state;
    static const double ratios[] = { 1.0, 0.3125, 0.41666 };
    for (size_t r = 0; r < 3; r++) {
        cupti_clock c = { 5000000000u, 123456789u, ratios[r] };
        assert_int_equal(cupti_clock_cupti(&c, 0), c.origin);      /* before t0 */
        assert_int_equal(cupti_clock_cupti(&c, c.t0), c.origin);
        assert_int_equal(cupti_clock_ticks(&c, 1), c.t0);           /* before origin */
        /* CUPTI gets whole ns: back to ticks within one ns's worth, never
         * before the tick it was taken at (a launch right after its
         * region's enter stays in the region) */
        uint64_t slack = (uint64_t)(1.0 / ratios[r]) + 1;
        for (uint64_t d = 1; d < (1ull << 44); d = d * 7 + 3) {
            for (uint64_t e = 0; e < 8; e++) {
                uint64_t t = c.t0 + d + e;
                uint64_t ns = cupti_clock_cupti(&c, t);
                assert_true(ns >= c.origin &&
                            ns <= c.origin + (uint64_t)((double)(d + e) * ratios[r]) + 1);
                uint64_t back = cupti_clock_ticks(&c, ns);
                assert_true(back >= t && back <= t + slack);
                assert_int_equal(cupti_clock_cupti(&c, back), ns);
            }
        }
    }
}

/* A CUPTI timestamp taken at tick t converts to the ns a CPU event at tick
 * t gets, with the ratio of the moment, however it moved since attach. */
static void test_clock_same_timeline(void **state)
{
    (void)state;
    session s;
    memset(&s, 0, sizeof s);
    s.t0_ticks = 1000000;
    s.t0_mono = 7000000000u;
    s.ns_per_tick = 0.3333;
    cupti_clock c = { s.t0_mono, s.t0_ticks, 0.3340 };  /* frozen, a bit off */
    for (int refine = 0; refine < 2; refine++) {
        for (uint64_t t = s.t0_ticks + 3; t < s.t0_ticks + (1ull << 40); t = t * 3 + 11) {
            uint64_t cpu = pc_clock_ns(&s, t);
            uint64_t gpu = pc_clock_ns(&s, cupti_clock_ticks(&c, cupti_clock_cupti(&c, t)));
            uint64_t diff = cpu > gpu ? cpu - gpu : gpu - cpu;
            assert_true(diff <= 1);             /* one ns at most */
        }
        s.ns_per_tick = 0.33335;                /* the writer refined it */
    }
}

/* ---- enumerations ---------------------------------------------------------- */

static void test_enums(void **state)
{
    (void)state;
    assert_int_equal(cupti_copy_kind(1), PRISM_COPY_HTOD);
    assert_int_equal(cupti_copy_kind(2), PRISM_COPY_DTOH);
    assert_int_equal(cupti_copy_kind(3), PRISM_COPY_HTOD);      /* HtoA */
    assert_int_equal(cupti_copy_kind(4), PRISM_COPY_DTOH);      /* AtoH */
    assert_int_equal(cupti_copy_kind(8), PRISM_COPY_DTOD);
    assert_int_equal(cupti_copy_kind(9), PRISM_COPY_HTOH);
    assert_int_equal(cupti_copy_kind(10), PRISM_COPY_PTOP);
    assert_int_equal(cupti_copy_kind(11), PRISM_COPY_UNKNOWN);
    assert_int_equal(cupti_copy_kind(0x7fffffff), PRISM_COPY_UNKNOWN);
    assert_int_equal(cupti_mem_kind(1), PRISM_MEM_PAGEABLE);
    assert_int_equal(cupti_mem_kind(2), PRISM_MEM_PINNED);
    assert_int_equal(cupti_mem_kind(3), PRISM_MEM_DEVICE);
    assert_int_equal(cupti_mem_kind(4), PRISM_MEM_DEVICE);      /* array */
    assert_int_equal(cupti_mem_kind(5), PRISM_MEM_MANAGED);
    assert_int_equal(cupti_mem_kind(7), PRISM_MEM_MANAGED);
    assert_int_equal(cupti_mem_kind(99), PRISM_MEM_UNKNOWN);
    assert_int_equal(cupti_sync_type(3), PRISM_SYNC_STREAM);
    assert_int_equal(cupti_sync_type(4), PRISM_SYNC_CONTEXT);
    assert_int_equal(cupti_sync_type(5), PRISM_SYNC_UNKNOWN);
    assert_int_equal(cupti_api_name_len("cudaLaunchKernel_v7000"), 16);
    assert_int_equal(cupti_api_name_len("cudaStreamGetCaptureInfo_v2_v11030"), 27);
    assert_int_equal(cupti_api_name_len("cudaMalloc"), 10);
    assert_int_equal(cupti_api_name_len("odd_v"), 5);
    assert_int_equal(cupti_api_name_len("x_v12"), 1);
    assert_true(cupti_api_is_query(17));        /* cudaGetDevice */
    assert_true(cupti_api_is_query(10));        /* cudaGetLastError */
    assert_true(cupti_api_is_query(12));        /* cudaGetErrorString */
    assert_true(cupti_api_is_query(209));       /* cudaGetErrorName */
    assert_true(cupti_api_is_query(441));       /* cudaStreamGetId */
    assert_false(cupti_api_is_query(273));      /* cudaFuncSetAttribute: sets */
    assert_false(cupti_api_is_query(138));      /* cudaEventQuery: a sync record */
    assert_false(cupti_api_is_query(211));      /* cudaLaunchKernel */
    assert_false(cupti_api_is_query(165));      /* cudaDeviceSynchronize */
}

/* The warm-up/active window: on at the start of step M, off at the end of
 * step M+N-1; a window with no end, or none at all. */
/* The watch (is CUPTI still recording for us?): buffers taken after two
 * steps and a probe; resumed; kernels disabled under launches. */
static void test_watch(void **state)
{
    (void)state;
    cupti_watch w = { 0 };
    cupti_watch_in in = { .buf_events = 4, .step = 10, .now_ns = 1 };
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_NONE);
    in.now_ns = 2;
    for (int i = 0; i < 5; i++)             /* quiet, but no steps: no verdict */
        assert_int_equal(cupti_watch_cycle(&w, &in), CW_NONE);
    in.step = 12;
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_PROBE);
    in.probed = true;
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_STOPPED);
    assert_int_equal(w.last_step, 10);
    assert_int_equal(w.last_ns, 1);
    in.probed = false;
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_NONE);     /* said once */
    in.buf_events = 9;
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_RESUMED);
    /* launches without kernels, ten cycles in a row */
    in.launches = 50;
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_NONE);
    in.buf_events++;
    in.kernels = 1;                          /* one kernel: not disabled */
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_NONE);
    in.kernels = 0;
    for (int i = 0; i < 9; i++, in.buf_events++)
        assert_int_equal(cupti_watch_cycle(&w, &in), CW_NONE);
    in.buf_events++;
    assert_int_equal(cupti_watch_cycle(&w, &in), CW_KERNELS_OFF);
    /* driver calls kept: launches, copies, memsets, syncs */
    /* a program that marks no steps: its own events are the progress */
    cupti_watch v = { 0 };
    cupti_watch_in n = { .buf_events = 3, .activity = 100, .now_ns = 5 };
    assert_int_equal(cupti_watch_cycle(&v, &n), CW_NONE);
    for (int i = 0; i < 5; i++)             /* quiet and idle: no verdict */
        assert_int_equal(cupti_watch_cycle(&v, &n), CW_NONE);
    n.activity = 100 + 255;
    assert_int_equal(cupti_watch_cycle(&v, &n), CW_NONE);
    n.activity = 100 + 256;
    assert_int_equal(cupti_watch_cycle(&v, &n), CW_PROBE);
    n.probed = true;
    assert_int_equal(cupti_watch_cycle(&v, &n), CW_STOPPED);
    assert_int_equal(v.last_ns, 5);
    assert_false(v.by_cpu);
    n.probed = false;
    n.buf_events = 4;
    assert_int_equal(cupti_watch_cycle(&v, &n), CW_RESUMED);
    /* ... nor events: its threads' CPU time is (a second of it) */
    cupti_watch u = { 0 };
    cupti_watch_in c = { .buf_events = 3, .activity = 7, .cpu_ns = 1000, .now_ns = 5 };
    for (int i = 0; i < 6; i++)
        assert_int_equal(cupti_watch_cycle(&u, &c), CW_NONE);
    c.cpu_ns = 1000 + 999999999;
    assert_int_equal(cupti_watch_cycle(&u, &c), CW_NONE);
    c.cpu_ns = 1000 + 1000000000;
    assert_int_equal(cupti_watch_cycle(&u, &c), CW_PROBE);
    assert_true(u.by_cpu);
    c.probed = true;
    assert_int_equal(cupti_watch_cycle(&u, &c), CW_STOPPED);
    /* with steps, CPU time is no progress: the steps are */
    cupti_watch x = { 0 };
    cupti_watch_in st = { .buf_events = 3, .step = 4, .cpu_ns = 0, .now_ns = 5 };
    assert_int_equal(cupti_watch_cycle(&x, &st), CW_NONE);
    st.cpu_ns = 5000000000u;
    for (int i = 0; i < 6; i++)
        assert_int_equal(cupti_watch_cycle(&x, &st), CW_NONE);
    assert_true(cupti_driver_kept("cuLaunchKernel"));
    assert_true(cupti_driver_kept("cuLaunchKernelEx_ptsz"));
    assert_true(cupti_driver_kept("cuMemcpyDtoHAsync_v2"));
    assert_true(cupti_driver_kept("cuStreamSynchronize"));
    assert_false(cupti_driver_kept("cuCtxGetCurrent"));
    assert_false(cupti_driver_kept("cuPointerGetAttribute"));
    assert_false(cupti_driver_kept(NULL));
}

static void test_step_window(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < 40; i++) {
        assert_int_equal(cupti_in_window(5, 10, i), i >= 5 && i < 15);
        assert_int_equal(cupti_in_window(5, 0, i), i >= 5);
        assert_true(cupti_in_window(0, 0, i));
        assert_int_equal(cupti_window_edge(5, 10, i, true), i == 5 ? 1 : 0);
        assert_int_equal(cupti_window_edge(5, 10, i, false), i == 14 ? -1 : 0);
        assert_int_equal(cupti_window_edge(5, 0, i, false), 0);
        assert_int_equal(cupti_window_edge(0, 3, i, false), i == 2 ? -1 : 0);
    }
    /* replaying boundaries keeps activity on exactly for the active steps */
    int on = 0, steps_on = 0;
    for (uint64_t i = 0; i < 40; i++) {
        on += cupti_window_edge(7, 4, i, true);
        steps_on += on;
        on += cupti_window_edge(7, 4, i, false);
        assert_true(on == 0 || on == 1);
    }
    assert_int_equal(steps_on, 4);
}

/* ---- translation ----------------------------------------------------------- */

#ifdef PRISM_HAVE_CUPTI_HEADERS

#define BASE 1000000000ull               /* CUPTI ns of the file's time 0 */

typedef struct fake {
    char names[32][160];
    uint32_t nnames;
    unsigned intern_calls;
} fake;

static uint64_t f_ns(void *ctx, uint64_t ts)
{
    (void)ctx;
    return ts - BASE;
}

static uint32_t f_intern(void *ctx, const char *name)
{
    fake *f = ctx;
    f->intern_calls++;
    for (uint32_t i = 0; i < f->nnames; i++)
        if (!strcmp(f->names[i], name))
            return i + 1;
    if (f->nnames == 32)
        return 0;
    snprintf(f->names[f->nnames], sizeof f->names[0], "%s", name);
    return ++f->nnames;
}

static uint32_t f_stream(void *ctx, uint32_t tid)
{
    (void)ctx;
    return tid == 4242 ? 3 : tid == 777 ? 9 : 0;
}

static const char *f_api(void *ctx, uint32_t cbid)
{
    (void)ctx;
    return cbid == 211 ? "cudaLaunchKernel_v7000" : cbid == 41 ? "cudaMemcpyAsync_v3020" : NULL;
}

static cupti_xlate *fake_xlate(fake *f)
{
    static cupti_xlate x;
    memset(f, 0, sizeof *f);
    cupti_xlate_init(&x);
    x.ctx = f;
    x.ns = f_ns;
    x.intern = f_intern;
    x.stream_of = f_stream;
    x.api_name = f_api;
    return &x;
}

static const char *fname(const fake *f, uint32_t id)
{
    return id && id <= f->nnames ? f->names[id - 1] : "";
}

static bool xl(cupti_xlate *x, const void *rec, prism_gpu_record *g)
{
    return cupti_xlate_record(x, (const CUpti_Activity *)rec, g);
}

static void test_translate_kernel(void **state)
{
    (void)state;
    fake f;
    cupti_xlate *x = fake_xlate(&f);
    char name1[] = "_Z6matmulPKfS0_Pfi", name2[] = "_Z6matmulPKfS0_Pfi";
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = BASE + 1000;
    k.end = BASE + 5000;
    k.deviceId = 1;
    k.contextId = 7;
    k.streamId = 13;
    k.gridX = 128;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 3072;
    k.registersPerThread = 64;
    k.correlationId = 99;
    k.name = name1;
    prism_gpu_record g;
    assert_true(xl(x, &k, &g));
    assert_int_equal(g.type, PRISM_GPU_KERNEL);
    assert_int_equal(g.start, 1000);
    assert_int_equal(g.end, 5000);
    assert_int_equal(g.device, 1);
    assert_int_equal(g.stream, 13);
    assert_int_equal(g.correlation, 99);
    assert_string_equal(fname(&f, g.name), "_Z6matmulPKfS0_Pfi");
    assert_int_equal(g.grid[0], 128);
    assert_int_equal(g.grid[1], 2);
    assert_int_equal(g.grid[2], 1);
    assert_int_equal(g.block[0], 256);
    assert_int_equal(g.block[1], 1);
    assert_int_equal(g.shared_mem, 4096);
    assert_int_equal(g.registers, 64);
    assert_int_equal(g.bytes, 0);

    /* the same name again (another pointer): interned once */
    k.name = name2;
    k.correlationId = 100;
    k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
    prism_gpu_record g2;
    assert_true(xl(x, &k, &g2));
    assert_int_equal(g2.name, g.name);
    assert_int_equal(g2.correlation, 100);
    assert_int_equal(f.intern_calls, 1);

    /* no timestamps (the record could not be completed): left out */
    k.start = k.end = 0;
    assert_false(xl(x, &k, &g2));
    /* an end before the start: clamped, never negative */
    k.start = BASE + 9000;
    k.end = BASE + 8000;
    assert_true(xl(x, &k, &g2));
    assert_int_equal(g2.end, g2.start);
    assert_int_equal(x->translated, 3);
    assert_int_equal(x->ignored, 1);
}

static void test_translate_copies(void **state)
{
    (void)state;
    fake f;
    cupti_xlate *x = fake_xlate(&f);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1u << 20;
    m.start = BASE + 200;
    m.end = BASE + 900;
    m.deviceId = 0;
    m.streamId = 7;
    m.correlationId = 5;
    prism_gpu_record g;
    assert_true(xl(x, &m, &g));
    assert_int_equal(g.type, PRISM_GPU_MEMCPY);
    assert_int_equal(g.copy_kind, PRISM_COPY_HTOD);
    assert_int_equal(g.src_kind, PRISM_MEM_PAGEABLE);
    assert_int_equal(g.dst_kind, PRISM_MEM_DEVICE);
    assert_int_equal(g.bytes, 1u << 20);
    assert_int_equal(g.start, 200);
    assert_int_equal(g.end, 900);
    assert_int_equal(g.stream, 7);
    assert_int_equal(g.correlation, 5);

    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    assert_true(xl(x, &m, &g));
    assert_int_equal(g.copy_kind, PRISM_COPY_DTOH);
    assert_int_equal(g.dst_kind, PRISM_MEM_PINNED);

    CUpti_ActivityMemcpyPtoP4 p;
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.bytes = 4096;
    p.start = BASE + 10;
    p.end = BASE + 20;
    p.deviceId = 1;
    p.streamId = 3;
    p.correlationId = 6;
    assert_true(xl(x, &p, &g));
    assert_int_equal(g.type, PRISM_GPU_MEMCPY);
    assert_int_equal(g.copy_kind, PRISM_COPY_PTOP);
    assert_int_equal(g.device, 1);
    assert_int_equal(g.correlation, 6);

    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 65536;
    s.start = BASE + 30;
    s.end = BASE + 40;
    s.streamId = 7;
    s.correlationId = 8;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    assert_true(xl(x, &s, &g));
    assert_int_equal(g.type, PRISM_GPU_MEMSET);
    assert_int_equal(g.bytes, 65536);
    assert_int_equal(g.dst_kind, PRISM_MEM_DEVICE);
    assert_int_equal(g.start, 30);
    assert_int_equal(g.correlation, 8);
    assert_int_equal(f.intern_calls, 0);        /* copies carry no names */
}

static void test_translate_sync_api_memory(void **state)
{
    (void)state;
    fake f;
    cupti_xlate *x = fake_xlate(&f);
    prism_gpu_record g;

    /* a context record teaches context 7 -> device 2; sync records have
     * no device of their own */
    CUpti_ActivityContext3 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = 7;
    c.deviceId = 2;
    assert_false(xl(x, &c, &g));
    CUpti_ActivitySynchronization2 y;
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    y.start = BASE + 100;
    y.end = BASE + 100100;
    y.contextId = 7;
    y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    y.correlationId = 42;
    assert_true(xl(x, &y, &g));
    assert_int_equal(g.type, PRISM_GPU_SYNC);
    assert_int_equal(g.sync_type, PRISM_SYNC_CONTEXT);
    assert_int_equal(g.device, 2);
    assert_int_equal(g.stream, 0);
    assert_int_equal(g.end - g.start, 100000);
    assert_int_equal(g.correlation, 42);
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.streamId = 13;
    y.contextId = 8;                            /* unknown context: device 0 */
    assert_true(xl(x, &y, &g));
    assert_int_equal(g.sync_type, PRISM_SYNC_STREAM);
    assert_int_equal(g.stream, 13);
    assert_int_equal(g.device, 0);

    /* runtime API: the calling thread's stream, the function's name */
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = BASE + 50;
    a.end = BASE + 450;
    a.processId = 1;
    a.threadId = 4242;
    a.correlationId = 99;
    assert_true(xl(x, &a, &g));
    assert_int_equal(g.type, PRISM_GPU_API);
    assert_int_equal(g.stream, 3);
    assert_int_equal(g.correlation, 99);
    assert_int_equal(g.start, 50);
    assert_int_equal(g.end, 450);
    assert_string_equal(fname(&f, g.name), "cudaLaunchKernel");
    uint32_t launch = g.name;
    a.threadId = 777;                           /* another thread */
    a.correlationId = 100;
    assert_true(xl(x, &a, &g));
    assert_int_equal(g.stream, 9);
    assert_int_equal(g.name, launch);
    assert_int_equal(f.intern_calls, 1);        /* per call id, once */
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020;
    assert_false(xl(x, &a, &g));                /* a query: not recorded */
    a.cbid = 9999;                              /* a call CUPTI cannot name */
    assert_true(xl(x, &a, &g));
    assert_string_equal(fname(&f, g.name), "cudaRuntime#9999");

    /* allocations and releases */
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.address = 0x7f0000dead000ull;
    m.bytes = 8u << 20;
    m.timestamp = BASE + 777;
    m.deviceId = 1;
    m.correlationId = 55;
    assert_true(xl(x, &m, &g));
    assert_int_equal(g.type, PRISM_GPU_ALLOC);
    assert_int_equal(g.start, 777);
    assert_int_equal(g.end, 777);
    assert_int_equal(g.address, 0x7f0000dead000ull);
    assert_int_equal(g.bytes, 8u << 20);
    assert_int_equal(g.dst_kind, PRISM_MEM_DEVICE);
    assert_int_equal(g.device, 1);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    assert_true(xl(x, &m, &g));
    assert_int_equal(g.type, PRISM_GPU_FREE);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
    assert_false(xl(x, &m, &g));

    /* a kind the profile does not record */
    CUpti_Activity other = { CUPTI_ACTIVITY_KIND_MARKER };
    assert_false(xl(x, &other, &g));
}

#else /* no CUPTI headers: the translation cannot be built */

static void test_translate_kernel(void **state)
{
    (void)state;
    skip();
}

static void test_translate_copies(void **state)
{
    (void)state;
    skip();
}

static void test_translate_sync_api_memory(void **state)
{
    (void)state;
    skip();
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_round_trip),
        cmocka_unit_test(test_clock_same_timeline),
        cmocka_unit_test(test_enums),
        cmocka_unit_test(test_step_window),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_translate_kernel),
        cmocka_unit_test(test_translate_copies),
        cmocka_unit_test(test_translate_sync_api_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
