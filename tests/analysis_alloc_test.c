/*
 * analysis_alloc_test.c - the GPU allocation series (analysis/alloc.c) and
 * the memory samples taken between steps (analysis/series.c), read through
 * the real reader and analysis from hand-built profiles.
 *
 * A program that cudaMallocs 32 MB every step and never frees it (as
 * samples/cuda_train --leak-mb 32): the allocations' fit is a LEAK of 32
 * MB/step over every step, the GPU verdict, the memory_leak finding says so
 * in words, and the analyze JSON carries it; while GPU used, sampled every
 * few steps, sees nothing.  A caching allocator that allocates in its first
 * steps and then reuses its blocks is warm-up, no leak.  Frees are matched
 * by address (or by their bytes when they have no address); host memory and
 * frees of allocations made before recording do not count; steps outside
 * the span of the GPU records do not count.  GPU used growing while the
 * recorded allocations do not is still reported, as memory outside them.
 * Periodic memory samples count for the step most recently started before
 * them: a profile with no sample at a step boundary gets a host fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "pbuild.h"
#include "reports.h"

#define MB 1048576ull

enum { N_STEP = 1, N_MALLOC, N_FREE };
static const char *const names[] = { "step", "cudaMalloc", "cudaFree" };

typedef struct prof {
    unsigned steps;
    uint64_t leak_mb;           /* allocated each step, never freed            */
    unsigned warm_steps;        /* the first steps allocate warm_mb each ...   */
    uint64_t warm_mb;           /* ... and later ones reuse it                 */
    bool temp;                  /* a 64 MB buffer allocated and freed per step */
    bool free_by_bytes;         /* ... its free without an address             */
    bool pinned;                /* 16 MB of pinned host memory per step        */
    double used_rate_mb;        /* GPU used samples rising this much per step  */
    unsigned gpu_from;          /* no GPU record before this step              */
} prof;

static uint64_t g_addr;

static void gpu(pbuild *b, uint32_t type, uint64_t ts, uint64_t bytes, uint64_t addr,
                uint32_t kind)
{
    prism_gpu_record g = { .type = type, .start = ts, .end = ts, .device = 0,
                           .stream = UINT32_MAX, .bytes = bytes, .address = addr,
                           .dst_kind = kind };
    PB_PUT(b, PRISM_CHUNK_GPU, 0, ts, prism_enc_gpu(&b->e, &g));
}

/* Steps of 1 ms on thread 1; GPU records in GPU chunks of their own. */
static loaded profile(const prof *p)
{
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof *names, 3);
    pb_thread(&b, 1, "main");
    g_addr = 0x7f0000000000ull;
    uint64_t now = 1000000;
    for (unsigned s = 0; s < p->steps; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, N_STEP);
        now += 1000000;
        pb_exit(&b, 1, now);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        if (s >= p->gpu_from) {
            uint64_t t = start + 1000;
            if (s == p->gpu_from)       /* of an allocation made before recording */
                gpu(&b, PRISM_GPU_FREE, t - 5, 8 * MB, 0x10000, PRISM_MEM_DEVICE);
            if (p->leak_mb)
                gpu(&b, PRISM_GPU_ALLOC, t, p->leak_mb * MB, g_addr += 1 << 26,
                    PRISM_MEM_DEVICE);
            if (s < p->warm_steps)
                gpu(&b, PRISM_GPU_ALLOC, t + 10, p->warm_mb * MB, g_addr += 1 << 26,
                    PRISM_MEM_DEVICE);
            if (p->temp) {
                uint64_t at = g_addr += 1 << 27;
                gpu(&b, PRISM_GPU_ALLOC, t + 20, 64 * MB, at, PRISM_MEM_DEVICE);
                gpu(&b, PRISM_GPU_FREE, t + 900000, p->free_by_bytes ? 64 * MB : 0,
                    p->free_by_bytes ? 0 : at, PRISM_MEM_DEVICE);
            }
            if (p->pinned)
                gpu(&b, PRISM_GPU_ALLOC, t + 30, 16 * MB, g_addr += 1 << 26, PRISM_MEM_PINNED);
            /* a kernel: the GPU records' span covers the step */
            prism_gpu_record k = { .type = PRISM_GPU_KERNEL, .start = t + 40,
                                   .end = now - 1000, .stream = 7, .name = N_STEP };
            PB_PUT(&b, PRISM_CHUNK_GPU, 0, k.start, prism_enc_gpu(&b.e, &k));
        }
        /* memory every fourth step; GPU used as the rate says */
        if (s % 4 == 3) {
            prism_memory_sample m = { .ts = now, .step = s, .rss = 900 * MB,
                                      .cpu_permille = 1000, .ngpu = 1 };
            uint64_t used = 500 * MB + (uint64_t)(p->used_rate_mb * s * (double)MB);
            m.gpu[0] = (prism_gpu_mem){ 0, used, 2 * used, PRISM_NO_CPU, PRISM_NO_VALUE };
            pb_memory(&b, &m);
        }
    }
    return pb_load(&b);
}

static const prism_bottleneck *gpu_leak_finding(const prism_analysis *a)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++)
        if (b[i].type == PRISM_BN_MEMORY_LEAK && strstr(b[i].description, "GPU"))
            return &b[i];
    return NULL;
}

static void test_leak_per_step(void **state)
{
    (void)state;
    prof p = { .steps = 40, .leak_mb = 32, .temp = true, .pinned = true };
    loaded l = profile(&p);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_true(m->have_gpu_alloc);
    const prism_leak *a = &m->gpu_alloc;
    assert_true(a->have_fit);
    assert_int_equal(a->verdict, PRISM_LEAK_YES);
    assert_true(fabs(a->slope_mb_per_step - 32.0) < 1e-6);   /* exact: temp and pinned out */
    assert_int_equal(a->points, 40);
    assert_int_equal(a->span_steps, 39);
    assert_false(m->gpu.leak);          /* GPU used, sampled: flat */
    const char *what = NULL;
    assert_ptr_equal(prism_memory_gpu_leak(m, &what), a);
    assert_string_equal(what, "GPU allocations");

    const prism_bottleneck *b = gpu_leak_finding(l.a);
    assert_non_null(b);
    assert_string_equal(b->description, "Memory leak: 32.0 MB/step (GPU allocations)");
    assert_non_null(strstr(b->evidence, "CUDA allocations not freed grew 1.22 GB"));
    assert_non_null(strstr(b->evidence, "over 39 steps"));
    assert_non_null(strstr(b->evidence, "40 step ends"));
    assert_non_null(strstr(b->recommendation, "cudaFree"));
    assert_int_equal(b->severity, PRISM_SEV_HIGH);

    /* the analyze JSON: the finding and the fits */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_true(analyze_write_json(f, "leak.cbor", l.a));
    fclose(f);
    assert_non_null(strstr(buf, "\"type\": \"memory_leak\""));
    assert_non_null(strstr(buf, "\"leak_detected\": true"));
    assert_non_null(strstr(buf, "\"series\": \"allocations\""));
    assert_non_null(strstr(buf, "\"gpu_alloc_leak\": {"));
    assert_non_null(strstr(buf, "\"gpu_used_leak\": {"));
    free(buf);
    unload(&l);
}

/* A caching allocator: its pool grows over the first steps, then is reused. */
static void test_warm_up_is_no_leak(void **state)
{
    (void)state;
    unsigned steps[] = { 200, 40 };
    for (int i = 0; i < 2; i++) {
        prof p = { .steps = steps[i], .warm_steps = 3, .warm_mb = 300, .temp = true };
        loaded l = profile(&p);
        const prism_memory_stats *m = prism_analysis_memory(l.a);
        assert_true(m->have_gpu_alloc);
        assert_true(m->gpu_alloc.have_fit);
        assert_int_equal(m->gpu_alloc.verdict, PRISM_LEAK_NONE);
        assert_string_equal(m->gpu_alloc.reason, "the rise stopped (warm-up or one-off)");
        assert_null(gpu_leak_finding(l.a));
        unload(&l);
    }
}

/* Frees matched by address, or by bytes when they have none. */
static void test_frees(void **state)
{
    (void)state;
    for (int by_bytes = 0; by_bytes < 2; by_bytes++) {
        prof p = { .steps = 30, .temp = true, .free_by_bytes = by_bytes, .pinned = true };
        loaded l = profile(&p);
        const prism_memory_stats *m = prism_analysis_memory(l.a);
        assert_true(m->have_gpu_alloc);
        assert_int_equal(m->gpu_alloc.points, 30);
        assert_true(m->gpu_alloc.slope_mb_per_step == 0.0);
        assert_true(m->gpu_alloc.end_mb == 0.0);        /* the free before us: ignored */
        assert_int_equal(m->gpu_alloc.verdict, PRISM_LEAK_NONE);
        assert_null(gpu_leak_finding(l.a));
        unload(&l);
    }
}

/* Steps before CUPTI recorded anything do not count as steps without
 * allocations. */
static void test_only_recorded_steps(void **state)
{
    (void)state;
    prof p = { .steps = 60, .leak_mb = 4, .gpu_from = 20 };
    loaded l = profile(&p);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_int_equal(m->gpu_alloc.points, 40);
    assert_true(fabs(m->gpu_alloc.slope_mb_per_step - 4.0) < 1e-6);
    unload(&l);
}

/* GPU used grows, the recorded allocations do not: memory outside them. */
static void test_used_grows_outside_allocations(void **state)
{
    (void)state;
    prof p = { .steps = 200, .temp = true, .used_rate_mb = 20 };
    loaded l = profile(&p);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_int_equal(m->gpu_alloc.verdict, PRISM_LEAK_NONE);
    assert_true(m->gpu.leak);
    const char *what = NULL;
    assert_ptr_equal(prism_memory_gpu_leak(m, &what), &m->gpu);
    assert_string_equal(what, "GPU used");
    const prism_bottleneck *b = gpu_leak_finding(l.a);
    assert_non_null(b);
    assert_string_equal(b->description, "Memory leak: 20.0 MB/step (GPU memory)");
    assert_non_null(strstr(b->evidence, "while the recorded CUDA allocations did not"));
    unload(&l);
}

/* No allocation records: as before, GPU used is the GPU verdict. */
static void test_no_records(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof *names, 5);
    prism_memory_sample s = { .ts = 10, .step = 0, .rss = MB, .ngpu = 1 };
    pb_memory(&b, &s);
    loaded l = pb_load(&b);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_false(m->have_gpu_alloc);
    assert_false(m->gpu_alloc.have_fit);
    const char *what = NULL;
    assert_ptr_equal(prism_memory_gpu_leak(m, &what), &m->gpu);
    assert_string_equal(what, "GPU used");
    assert_null(prism_memory_gpu_leak(NULL, &what));
    assert_null(what);
    unload(&l);
}

/* Periodic samples (no step of their own) count for the step most recently
 * started before them; none before the first step or after the last. */
static void test_samples_between_steps(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof *names, 7);
    pb_thread(&b, 1, "main");
    uint64_t now = 1000000;
    prism_memory_sample early = { .ts = 10, .step = PRISM_NO_STEP, .rss = 1 };
    pb_memory(&b, &early);
    for (unsigned s = 0; s < 40; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, N_STEP);
        now += 1000000;
        pb_exit(&b, 1, now);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        /* one sample inside the step, one in the gap after it */
        prism_memory_sample in = { .ts = start + 500000, .step = PRISM_NO_STEP,
                                   .rss = (800 + 20 * (uint64_t)s) * MB };
        prism_memory_sample gap = { .ts = now + 100, .step = PRISM_NO_STEP,
                                    .rss = (800 + 20 * (uint64_t)s) * MB };
        pb_memory(&b, &in);
        pb_memory(&b, &gap);
        now += 1000;
    }
    prism_memory_sample late = { .ts = now + 5000000, .step = PRISM_NO_STEP, .rss = 1 };
    pb_memory(&b, &late);
    loaded l = pb_load(&b);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_true(m->host.have_fit);
    assert_int_equal(m->host.points, 79);       /* 80, less the last gap's: after the end */
    assert_true(fabs(m->host.slope_mb_per_step - 20.0) < 1e-6);
    assert_true(m->host.leak);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leak_per_step),
        cmocka_unit_test(test_warm_up_is_no_leak),
        cmocka_unit_test(test_frees),
        cmocka_unit_test(test_only_recorded_steps),
        cmocka_unit_test(test_used_grows_outside_allocations),
        cmocka_unit_test(test_no_records),
        cmocka_unit_test(test_samples_between_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
