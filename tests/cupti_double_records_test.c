/*
 * cupti_double_records_test.c - what PRISM records from CUPTI's activity records:
 *
 *   - driver-API launches (cuLaunchKernel: Triton, torch.compile) carry
 *     their kernel's correlation id; a kernel before its launch record; a
 *     graph launch (defect 3);
 *   - kernel names demangled by a libstdc++ loaded RTLD_LOCAL;
 *   - NCCL kernels on their own stream, tied to the launching region, and
 *     counted as communication apart from compute;
 *   - PRISM_CUPTI_KINDS: the kinds enabled and the status.
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
#include "reports.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

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

static bool kernel_on(uint32_t corr, uint64_t start, uint64_t end, const char *name,
                      uint32_t stream)
{
    CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };
    k.start = start, k.end = end, k.correlationId = corr, k.streamId = stream;
    k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    k.name = name;
    return D.emit(&k, sizeof k);
}

#define NCCL_NEW "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define NCCL_OLD "ncclKernel_AllReduce_RING_LL_Sum_float"

/* Two data-parallel steps as NCCL runs them: each all-reduce kernel
 * launched on the communicator's stream (21) while a compute kernel runs
 * on the default one (7), overlapping it; the first by NCCL >= 2.19
 * (ncclDevKernel_*, cudaLaunchKernelExC), the second under an older NCCL's
 * name (ncclKernel_*, cudaLaunchKernel).  Each launch call inside its
 * region, its times taken there. */
static int nccl_child(void *arg)
{
    start(arg, 60000, true);
    double_open();
    uint64_t at[2];
    for (uint32_t i = 0; i < 2; i++) {
        prism_push("forward");
        uint64_t t = D.now(), t1 = D.now() + 1;
        CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME,
                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 71 + 2 * i, t, t1));
        prism_pop();
        prism_push("allreduce");
        uint64_t u = D.now(), u1 = D.now() + 1;
        CHILD_CHECK(api(CUPTI_ACTIVITY_KIND_RUNTIME,
                        i ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
                          : CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                        72 + 2 * i, u, u1));
        prism_pop();
        at[i] = u1 + 20000 * i;
    }
    CHILD_CHECK(kernel_on(71, at[0] + 1000, at[0] + 9000, "_Z6matmulPKfS0_Pfi", 7));
    CHILD_CHECK(kernel_on(72, at[0] + 2000, at[0] + 12000, NCCL_NEW, 21));
    CHILD_CHECK(kernel_on(73, at[1] + 1000, at[1] + 9000, "_Z6matmulPKfS0_Pfi", 7));
    CHILD_CHECK(kernel_on(74, at[1] + 3000, at[1] + 9000, NCCL_OLD, 21));
    D.complete();
    prism_shutdown();
    return 0;
}

/* Recorded as they came, each tied to its launch and so to the region
 * open on the launching thread. */
static void nccl_records(const char *path)
{
    gsum *s = gsum_read(path);
    const prism_gpu_record *k = find(s, PRISM_GPU_KERNEL, 72), *l = find(s, PRISM_GPU_API, 72);
    assert_non_null(k);
    assert_non_null(l);
    assert_int_equal(k->stream, 21);
    assert_string_equal(gname(s, k->name), NCCL_NEW);
    assert_string_equal(gname(s, l->name), "cudaLaunchKernelExC");
    k = find(s, PRISM_GPU_KERNEL, 74);
    assert_non_null(k);
    assert_int_equal(k->stream, 21);
    assert_string_equal(gname(s, k->name), NCCL_OLD);
    gsum_free(s);
}

static void test_nccl_kernels(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "nccl.prism", path, sizeof path);
    child_run_ok(nccl_child, path);
    nccl_records(path);
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
    assert_int_equal(fwd, 2);
    assert_int_equal(ar, 2);
    /* the kernels' own time, though they overlap (converted between clocks:
     * +/- 1 ns each end) */
    assert_in_range(ar_ns, 16000 - 4, 16000 + 4);
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* NCCL's kernels, under either name, are communication: their time apart
 * from compute in the GPU figures, each flagged in the kernel table, and
 * the text report says so.  (Before, kernel_ns held them with compute and
 * only the communication_wait rule looked at names.) */
static void test_nccl_kernels_are_communication(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "nccl.prism", path, sizeof path);
    child_run_ok(nccl_child, path);
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    assert_int_equal(g->launches, 4);
    assert_int_equal(g->comm_launches, 2);
    assert_in_range(g->comm_kernel_ns, 16000 - 4, 16000 + 4);           /* 10 + 6 us */
    assert_in_range(g->kernel_ns - g->comm_kernel_ns, 16000 - 4, 16000 + 4);
    assert_true(g->busy_ns < g->kernel_ns);             /* they overlap compute */
    assert_int_equal(g->nkernels, 3);
    for (size_t i = 0; i < g->nkernels; i++)
        assert_int_equal(g->kernels[i].comm, !strncmp(g->kernels[i].name, "nccl", 4));
    char *txt = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&txt, &n);
    assert_non_null(f);
    analyze_write_txt(f, path, a);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(txt, "Of which communication (NCCL): 2 launches"));
    assert_non_null(strstr(txt, "(50.0% of kernel time)"));
    free(txt);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_driver_launches_correlated),
        cmocka_unit_test(test_kernel_names_demangled_by_a_local_libstdcxx),
        cmocka_unit_test(test_nccl_kernels),
        cmocka_unit_test(test_nccl_kernels_are_communication),
        cmocka_unit_test(test_kinds_knob),
    };
    return cmocka_run_group_tests(tests, cupti_double_setup, NULL);
}

#else

int main(void)
{
    puts("cupti_double_records_test: built without the CUPTI headers; skipped");
    return 0;
}

#endif
