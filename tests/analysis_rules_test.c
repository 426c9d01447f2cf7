/*
 * analysis_rules_test.c - bottleneck rules and compare on hand-built
 * profiles with planted problems, read through the real reader and
 * analysis: a CPU training loop (wrapper regions, a slow input pipeline, a
 * sync region, a host memory leak, loader threads, dropped events), a GPU
 * loop (tiny kernels, heavy copies, syncs, idle gaps), and compare between
 * a base run and one with a slower matmul, a vanished and a new region.
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

#define MS 1000000ull
#define US 1000ull

#include "pbuild.h"

/* ---- the CPU loop ------------------------------------------------------ */

enum { N_EPOCH = 1, N_DATA, N_READ, N_FORWARD, N_LAYER, N_MATMUL, N_BACKWARD, N_SYNC,
       N_OPT, N_LOAD, N_COMPILE };
static const char *const cpu_names[] = {
    "epoch", "data_loading", "read", "forward", "layer.0", "matmul", "backward",
    "cuda_sync", "optimizer_step", "load_batch", "compile",
};

typedef struct cpu_opts {
    uint64_t seed;
    unsigned steps;
    uint64_t matmul_ns;
    bool sync, compile, leak;
    uint64_t dropped;
} cpu_opts;

/* Per step on "main": epoch > data_loading > read 3 ms, forward > layer.0 >
 * matmul, backward 3 ms, [cuda_sync 1.5 ms], optimizer_step 0.5 ms; a
 * loader thread runs load_batch 10 ms beside it. */
static loaded cpu_profile(const cpu_opts *o)
{
    pbuild b;
    pb_init(&b, cpu_names, sizeof cpu_names / sizeof *cpu_names, o->seed);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "loader.0");
    uint64_t now = 1000, wnow = 1500, rss = 800ull << 20;
    pb_enter(&b, 1, now, N_EPOCH);
    for (unsigned s = 0; s < o->steps; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, N_DATA);
        pb_leaf(&b, 1, &now, N_READ, 3 * MS);
        pb_exit(&b, 1, now);
        pb_enter(&b, 1, now, N_FORWARD);
        pb_enter(&b, 1, now, N_LAYER);
        pb_leaf(&b, 1, &now, N_MATMUL, o->matmul_ns);
        pb_exit(&b, 1, now);
        pb_exit(&b, 1, now);
        pb_leaf(&b, 1, &now, N_BACKWARD, 3 * MS);
        if (o->sync)
            pb_leaf(&b, 1, &now, N_SYNC, 3 * MS / 2);
        if (o->compile)
            pb_leaf(&b, 1, &now, N_COMPILE, MS);
        pb_leaf(&b, 1, &now, N_OPT, MS / 2);
        while (wnow < now) {
            pb_leaf(&b, 2, &wnow, N_LOAD, 10 * MS);
            wnow += MS;
        }
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        PB_PUT(&b, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&b.e, &st));
        if (o->leak)
            rss += (25ull << 20) / 2 + jitter(&b, 2ull << 20) - (2ull << 20);
        prism_memory_sample m = { .ts = now, .step = s, .rss = rss, .cpu_permille = 1000 };
        PB_PUT(&b, PRISM_CHUNK_MEMORY, 0, now, prism_enc_memory(&b.e, &m));
    }
    pb_exit(&b, 1, now);
    if (o->dropped) {
        prism_dropped d = { 1, PRISM_SOURCE_CPU, o->dropped, false, 0 };
        PB_PUT(&b, PRISM_CHUNK_DROPPED, 0, 0, prism_enc_dropped(&b.e, &d));
    }
    return pb_load(&b);
}

static const prism_bottleneck *find_bn(const prism_analysis *a, prism_bottleneck_type t,
                                       const char *name)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *tree = prism_analysis_tree(a);
    for (size_t i = 0; i < n; i++) {
        if (b[i].type != t)
            continue;
        if (!name)
            return &b[i];
        if (b[i].node < tree->count && !strcmp(tree->nodes[b[i].node].name, name))
            return &b[i];
    }
    return NULL;
}

/* torch.compile's compile time (prism.torch's region) holding most of a
 * short run: a hot operation with advice about compiling, never "add
 * regions inside it". */
static void test_compile_time_advice(void **state)
{
    (void)state;
    static const char *const names[] = { "compiled:Net", "torch.compile (compile)" };
    pbuild b;
    pb_init(&b, names, 2, 3);
    pb_thread(&b, 1, "MainThread");
    pb_info_uint(&b, "steps.thread", 1);
    pb_info_text(&b, "python.version", "3.11.2");
    uint64_t t = MS;
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t d = k < 2 ? 400 * MS : 5 * MS;
        pb_enter(&b, 1, t, 1);
        if (k < 2) {
            pb_enter(&b, 1, t + MS, 2);
            pb_exit(&b, 1, t + d - MS);
        }
        pb_exit(&b, 1, t + d);
        prism_step st = { t, t + d, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        t += d;
    }
    loaded l = pb_load(&b);
    const prism_bottleneck *f = find_bn(l.a, PRISM_BN_HOT_OPERATION, "torch.compile (compile)");
    assert_non_null(f);
    assert_non_null(strstr(f->recommendation, "Compilation, not training: torch.compile "));
    assert_non_null(strstr(f->recommendation, "TORCH_LOGS=recompiles"));
    assert_null(strstr(f->recommendation, "add regions inside"));
    unload(&l);
}

/* Regions named like a GPU sync by name alone (no GPU records): 10 steps
 * of 'compute' 5 ms then 'NAME' 3 ms.  A CPU job's fsync is no CPU-GPU
 * sync (nor async, msync); cuda_sync is, whatever gpu.status says (the
 * program's GPU may be one CUPTI does not see). */
static const prism_bottleneck *sync_case(loaded *l, const char *name, bool cpu_only)
{
    const char *names[] = { "compute", name };
    pbuild b;
    pb_init(&b, names, 2, 5);
    pb_thread(&b, 1, "main");
    pb_info_uint(&b, "steps.thread", 1);
    if (cpu_only)
        pb_info_text(&b, "gpu.status",
                     "unavailable: the program never loaded the CUDA driver (libcuda.so.1)");
    uint64_t t = MS;
    for (uint64_t k = 0; k < 10; k++) {
        pb_enter(&b, 1, t, 1);
        pb_exit(&b, 1, t + 5 * MS);
        pb_enter(&b, 1, t + 5 * MS, 2);
        pb_exit(&b, 1, t + 8 * MS);
        prism_step st = { t, t + 8 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        t += 8 * MS;
    }
    *l = pb_load(&b);
    return find_bn(l->a, PRISM_BN_CPU_GPU_SYNC, name);
}

static void test_sync_by_name(void **state)
{
    (void)state;
    static const char *const no[] = { "fsync", "write_fsync", "fdatasync", "async_send",
                                      "msync" };
    loaded l;
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        assert_null(sync_case(&l, no[i], false));
        unload(&l);
    }
    static const char *const yes[] = { "cuda_sync", "torch.cuda.synchronize",
                                       "cudaDeviceSynchronize", "sync_grads", "loss.item" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        assert_non_null(sync_case(&l, yes[i], false));
        unload(&l);
        assert_non_null(sync_case(&l, yes[i], true));
        unload(&l);
    }
}

static void test_cpu_rules(void **state)
{
    (void)state;
    cpu_opts o = { .seed = 1, .steps = 40, .matmul_ns = 4 * MS, .sync = true, .leak = true,
                   .dropped = 3 };
    loaded l = cpu_profile(&o);
    size_t n;
    const prism_bottleneck *all = prism_analysis_bottlenecks(l.a, &n);
    assert_true(n > 0);
    for (size_t i = 1; i < n; i++) {                /* HIGH first, then by share */
        assert_true(all[i - 1].severity >= all[i].severity);
        if (all[i - 1].severity == all[i].severity && all[i].type != PRISM_BN_MEMORY_LEAK &&
            all[i - 1].type != PRISM_BN_MEMORY_LEAK)
            assert_true(all[i - 1].share >= all[i].share);
    }

    /* matmul: 4 of each 12 ms step on main, a third of the step (the loader
     * thread's time does not dilute it); the wrappers epoch, data_loading,
     * forward and layer.0 hold no time of their own and are skipped */
    const prism_bottleneck *b = find_bn(l.a, PRISM_BN_HOT_OPERATION, "matmul");
    assert_non_null(b);
    double step_total = (double)prism_analysis_steps(l.a)->total_ns;
    assert_true(fabs(b->share - 40.0 * 4 * MS / step_total) < 1e-3);
    assert_int_equal(b->severity, PRISM_SEV_HIGH);
    assert_non_null(strstr(b->description, "'matmul': 33."));
    assert_non_null(strstr(b->description, "% of step time"));
    assert_non_null(strstr(b->evidence, "4.00 ms/step over 40 steps"));
    assert_true(b->path_hash == prism_analysis_tree(l.a)->nodes[b->node].path_hash);
    b = find_bn(l.a, PRISM_BN_HOT_OPERATION, "backward");
    assert_non_null(b);
    assert_true(fabs(b->share - 0.25) < 0.01);
    /* a C program gets no PyTorch advice */
    assert_null(strstr(b->recommendation, "torch"));
    assert_non_null(strstr(b->recommendation, "Reduce the work per call"));
    assert_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "epoch"));
    assert_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "forward"));
    assert_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "layer.0"));
    assert_null(find_bn(l.a, PRISM_BN_HOT_OPERATION, "optimizer_step"));
    /* loader work beside the training thread is no hot spot of the loop */
    b = find_bn(l.a, PRISM_BN_HOT_OPERATION, "load_batch");
    assert_true(!b || b->severity == PRISM_SEV_LOW);

    /* the input pipeline: 3 of 12 ms per step */
    b = find_bn(l.a, PRISM_BN_DATA_LOADING, "data_loading");
    assert_non_null(b);
    assert_int_equal(b->severity, PRISM_SEV_MEDIUM);
    assert_true(b->share > 0.2 && b->share < 0.3);
    assert_non_null(strstr(b->evidence, "1 loader thread,"));
    assert_non_null(strstr(b->recommendation, "loader threads"));
    assert_null(strstr(b->recommendation, "num_workers"));

    /* sync by region name (no GPU records): 1.5 of 12 ms per step */
    b = find_bn(l.a, PRISM_BN_CPU_GPU_SYNC, "cuda_sync");
    assert_non_null(b);
    assert_true(b->share > 0.1 && b->share < 0.15);
    assert_int_equal(b->severity, PRISM_SEV_MEDIUM);
    assert_non_null(strstr(b->description, "'cuda_sync': "));
    assert_non_null(strstr(b->recommendation, "async copies"));

    /* the leak: 12.5 MB/step of RSS */
    b = find_bn(l.a, PRISM_BN_MEMORY_LEAK, NULL);
    assert_non_null(b);
    assert_int_equal(b->severity, PRISM_SEV_HIGH);
    assert_true(fabs(b->share - 12.5) < 0.6);
    assert_non_null(strstr(b->description, "MB/step (host RSS)"));
    assert_int_equal(b->node, PRISM_NO_NODE);

    /* 3 dropped events: severity by the fraction lost */
    b = find_bn(l.a, PRISM_BN_DROPPED_EVENTS, NULL);
    assert_non_null(b);
    double f = 3.0 / (double)(prism_analysis_events(l.a) + 3);
    assert_true(fabs(b->share - f) < 1e-12);
    assert_int_equal(b->severity, f < 0.001 ? PRISM_SEV_LOW : f < 0.01 ? PRISM_SEV_MEDIUM
                                                                       : PRISM_SEV_HIGH);
    assert_non_null(strstr(b->recommendation, "PRISM_BUFFER_MB"));

    assert_null(find_bn(l.a, PRISM_BN_GPU_IDLE, NULL));       /* no GPU: no GPU rules */
    assert_null(find_bn(l.a, PRISM_BN_LAUNCH_BOUND, NULL));
    assert_null(find_bn(l.a, PRISM_BN_MEMORY_BOUND, NULL));
    unload(&l);

    /* a clean run: no leak, no sync, no drops */
    cpu_opts clean = { .seed = 2, .steps = 40, .matmul_ns = 4 * MS };
    l = cpu_profile(&clean);
    assert_null(find_bn(l.a, PRISM_BN_MEMORY_LEAK, NULL));
    assert_null(find_bn(l.a, PRISM_BN_CPU_GPU_SYNC, NULL));
    assert_null(find_bn(l.a, PRISM_BN_DROPPED_EVENTS, NULL));
    unload(&l);
}

/* ---- the GPU loop ------------------------------------------------------ */

enum { G_STEP = 1, G_FORWARD, G_BACKWARD, G_KERNEL };
static const char *const gpu_names[] = { "train_step", "forward", "backward", "elementwise" };

/* Per 4 ms step: 60 kernels of 4 us, an 8 MB pageable copy of 1 ms and a
 * 0.5 ms stream sync: launch-bound, transfer-bound, syncing, mostly idle. */
static void test_gpu_rules(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, gpu_names, sizeof gpu_names / sizeof *gpu_names, 3);
    pb_thread(&b, 1, "main");
    uint64_t now = 1000, corr = 1;
    for (unsigned s = 0; s < 40; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, G_STEP);
        pb_leaf(&b, 1, &now, G_FORWARD, 2 * MS);
        pb_leaf(&b, 1, &now, G_BACKWARD, 2 * MS);
        pb_exit(&b, 1, now);
        prism_gpu_record cp = { .type = PRISM_GPU_MEMCPY, .start = start + 10 * US,
                                .end = start + 1010 * US, .stream = 7, .correlation = corr++,
                                .bytes = 8u << 20, .copy_kind = PRISM_COPY_HTOD,
                                .src_kind = PRISM_MEM_PAGEABLE, .dst_kind = PRISM_MEM_DEVICE };
        PB_PUT(&b, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&b.e, &cp));
        for (unsigned k = 0; k < 60; k++) {
            uint64_t t0 = start + 1100 * US + k * 40 * US;
            prism_gpu_record kr = { .type = PRISM_GPU_KERNEL, .start = t0, .end = t0 + 4 * US,
                                    .stream = 7, .correlation = corr++, .name = G_KERNEL,
                                    .grid = { 1, 1, 1 }, .block = { 32, 1, 1 } };
            PB_PUT(&b, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&b.e, &kr));
        }
        prism_gpu_record sy = { .type = PRISM_GPU_SYNC, .start = start + 3500 * US,
                                .end = start + 4000 * US, .sync_type = PRISM_SYNC_STREAM };
        PB_PUT(&b, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&b.e, &sy));
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        PB_PUT(&b, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&b.e, &st));
    }
    loaded l = pb_load(&b);
    const prism_gpu_stats *g = prism_analysis_gpu(l.a);
    assert_true(g->present);
    assert_int_equal(g->launches, 2400);

    const prism_bottleneck *bn = find_bn(l.a, PRISM_BN_LAUNCH_BOUND, NULL);
    assert_non_null(bn);
    assert_int_equal(bn->severity, PRISM_SEV_HIGH);       /* every kernel < 10 us */
    assert_non_null(strstr(bn->recommendation, "CUDA graphs"));

    bn = find_bn(l.a, PRISM_BN_MEMORY_BOUND, NULL);        /* copies 1 ms vs 0.24 ms */
    assert_non_null(bn);
    assert_int_equal(bn->severity, PRISM_SEV_HIGH);
    assert_non_null(strstr(bn->evidence, "pageable"));

    bn = find_bn(l.a, PRISM_BN_CPU_GPU_SYNC, NULL);        /* 0.5 ms of each 4 ms step */
    assert_non_null(bn);
    assert_true(fabs(bn->share - 0.125) < 0.005);
    assert_int_equal(bn->severity, PRISM_SEV_MEDIUM);
    assert_non_null(strstr(bn->description, "12.5% of step time"));
    assert_non_null(strstr(bn->evidence, "vs GPU work"));

    bn = find_bn(l.a, PRISM_BN_GPU_IDLE, NULL);            /* busy 1.24 of ~3.7 ms */
    assert_non_null(bn);
    assert_true(g->idle_share > 0.5);
    assert_int_equal(bn->severity, PRISM_SEV_HIGH);
    unload(&l);
}

/* gpu_idle names a region of the training thread that launches nothing,
 * never a busier one of a thread beside it: torch's pin-memory thread
 * ('pin_memory', 3 ms a step here) delays no launch (the GPU run's profiles
 * said "start with 'pin_memory'").  Per 4 ms step: 'forward' launches 20
 * short kernels, 'backward' (1 ms) launches none. */
enum { P_STEP = 1, P_FORWARD, P_BACKWARD, P_KERNEL, P_PIN, P_LAUNCH };
static const char *const pin_names[] = { "train_step", "forward", "backward", "elementwise",
                                         "pin_memory", "cudaLaunchKernel" };

static void test_gpu_idle_names_a_training_thread_region(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, pin_names, sizeof pin_names / sizeof *pin_names, 5);
    pb_thread(&b, 1, "MainThread");
    pb_thread(&b, 2, "Thread-1 (_pin_memory_loop)");
    uint64_t now = 1000, corr = 1;
    for (unsigned s = 0; s < 40; s++) {
        uint64_t start = now, pin = now + 200 * US;
        pb_enter(&b, 1, now, P_STEP);
        pb_enter(&b, 1, now, P_FORWARD);
        for (unsigned k = 0; k < 20; k++) {
            uint64_t t0 = now + 10 * US + k * 100 * US;
            prism_gpu_record api = { .type = PRISM_GPU_API, .start = t0, .end = t0 + 5 * US,
                                     .stream = 1, .correlation = corr, .name = P_LAUNCH };
            prism_gpu_record kr = { .type = PRISM_GPU_KERNEL, .start = t0 + 8 * US,
                                    .end = t0 + 12 * US, .stream = 7, .correlation = corr++,
                                    .name = P_KERNEL, .grid = { 1, 1, 1 },
                                    .block = { 32, 1, 1 } };
            PB_PUT(&b, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&b.e, &api));
            PB_PUT(&b, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&b.e, &kr));
        }
        now += 3 * MS;
        pb_exit(&b, 1, now);
        pb_leaf(&b, 1, &now, P_BACKWARD, 1 * MS);
        pb_exit(&b, 1, now);
        pb_leaf(&b, 2, &pin, P_PIN, 3 * MS);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        PB_PUT(&b, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&b.e, &st));
    }
    loaded l = pb_load(&b);
    const prism_gpu_stats *g = prism_analysis_gpu(l.a);
    assert_true(g->present && g->idle_share > 0.9);
    const prism_bottleneck *bn = find_bn(l.a, PRISM_BN_GPU_IDLE, NULL);
    assert_non_null(bn);
    const prism_tree *t = prism_analysis_tree(l.a);
    assert_true(bn->node < t->count);
    assert_string_equal(t->nodes[bn->node].name, "backward");
    assert_null(strstr(bn->recommendation, "pin_memory"));
    unload(&l);
}

/* ---- compare ----------------------------------------------------------- */

static const prism_delta *find_delta(const prism_compare *c, const char *path)
{
    for (size_t i = 0; i < c->count; i++)
        if (!strcmp(c->deltas[i].path, path))
            return &c->deltas[i];
    return NULL;
}

static void test_compare(void **state)
{
    (void)state;
    cpu_opts ob = { .seed = 4, .steps = 30, .matmul_ns = 4 * MS, .sync = true };
    cpu_opts on = { .seed = 5, .steps = 30, .matmul_ns = 5200 * US, .compile = true };
    loaded base = cpu_profile(&ob), cur = cpu_profile(&on);
    prism_compare *c = prism_compare_new(base.a, cur.a);
    assert_non_null(c);
    for (size_t i = 1; i < c->count; i++)
        assert_true(fabs(c->deltas[i - 1].delta_ns) >= fabs(c->deltas[i].delta_ns));

    const prism_delta *d = find_delta(c, "epoch/forward/layer.0/matmul");
    assert_non_null(d);
    assert_string_equal(d->name, "matmul");
    assert_true(d->base_node != PRISM_NO_NODE && d->new_node != PRISM_NO_NODE);
    assert_true(d->delta_pct > 20 && d->delta_pct < 40);
    assert_true(d->speedup > 0.7 && d->speedup < 0.85);
    assert_true(d->p_value >= 0 && d->p_value < 0.01);
    assert_true(d->significant);

    d = find_delta(c, "epoch/backward");                /* same 3 ms, other noise */
    assert_non_null(d);
    assert_true(d->p_value > 0.01);
    assert_false(d->significant);

    d = find_delta(c, "epoch/cuda_sync");
    assert_non_null(d);
    assert_int_equal(d->new_node, PRISM_NO_NODE);
    assert_true(d->speedup == 0 && d->p_value < 0 && !d->significant);
    d = find_delta(c, "epoch/compile");
    assert_non_null(d);
    assert_int_equal(d->base_node, PRISM_NO_NODE);
    assert_true(d->delta_pct == 0 && d->new_ns > 0);
    assert_int_equal(c->vanished, 1);
    assert_int_equal(c->appeared, 1);

    bool sync_gone = false;
    for (size_t i = 0; i < c->nbn_gone; i++)
        sync_gone |= c->bn_gone[i]->type == PRISM_BN_CPU_GPU_SYNC;
    assert_true(sync_gone);
    for (size_t i = 0; i < c->nbn_new; i++)
        assert_true(c->bn_new[i]->type != PRISM_BN_CPU_GPU_SYNC);
    prism_compare_free(c);

    /* a profile against itself: nothing changed */
    c = prism_compare_new(base.a, base.a);
    assert_non_null(c);
    assert_int_equal(c->count, prism_analysis_tree(base.a)->count);
    for (size_t i = 0; i < c->count; i++) {
        assert_true(c->deltas[i].delta_ns == 0);
        assert_false(c->deltas[i].significant);
    }
    assert_int_equal(c->appeared + c->vanished + c->nbn_new + c->nbn_gone, 0);
    prism_compare_free(c);
    unload(&base);
    unload(&cur);
}

/* A path deeper than 255 bytes keeps its leaf behind "...". */
static void test_compare_long_path(void **state)
{
    (void)state;
    char names[12][48];
    const char *ptrs[12];
    for (int i = 0; i < 12; i++) {
        snprintf(names[i], sizeof names[i], "level_%02d_%s", i,
                 "a_rather_long_region_name_\xc3\xa9t\xc3\xa9");
        ptrs[i] = names[i];
    }
    pbuild b;
    pb_init(&b, ptrs, 12, 6);
    pb_thread(&b, 1, "main");
    uint64_t now = 1000;
    for (uint32_t i = 0; i < 12; i++)
        pb_enter(&b, 1, now += 10, i + 1);
    for (uint32_t i = 0; i < 12; i++)
        pb_exit(&b, 1, now += 10);
    loaded l = pb_load(&b);
    prism_compare *c = prism_compare_new(l.a, l.a);
    assert_non_null(c);
    bool seen = false;
    for (size_t i = 0; i < c->count; i++) {
        const char *p = c->deltas[i].path;
        assert_true(strlen(p) <= 255);
        if (strcmp(c->deltas[i].name, names[11]))
            continue;
        seen = true;
        assert_memory_equal(p, "...", 3);
        assert_string_equal(p + strlen(p) - strlen(names[11]), names[11]);
        assert_true(((unsigned char)p[3] & 0xc0) != 0x80);   /* a character boundary */
    }
    assert_true(seen);
    prism_compare_free(c);
    unload(&l);
}

/* ---- compute intensity from work counters --------------------------- */

enum { W_STEP = 1, W_MATMUL, W_SOFTMAX, W_FLOPS, W_BYTES, W_OTHER };
static const char *const work_names[] = { "step", "matmul", "softmax", "matmul.FLOPS",
                                          "hbm_bytes", "bytes_in" };

/* A step region holding matmul (40 FLOP/byte) and softmax (0.5 FLOP/byte,
 * 25 % of the time); counters written after each step's regions, as the
 * writer does; one pair of samples outside any region. */
static loaded work_profile(const prism_analysis_opts *opts, pbuild *b, bool build)
{
    if (build) {
        pb_init(b, work_names, sizeof work_names / sizeof work_names[0], 3);
        pb_thread(b, 1, "main");
        uint64_t now = MS;
        for (int s = 0; s < 20; s++) {
            uint64_t start = now, mm, sm;
            pb_enter(b, 1, now, W_STEP);
            now += 10 * US;
            pb_enter(b, 1, now, W_MATMUL);
            now += 6 * MS;
            mm = now - 1;
            pb_exit(b, 1, now);
            pb_enter(b, 1, now, W_SOFTMAX);
            now += 2 * MS;
            sm = now - 1;
            pb_exit(b, 1, now);
            now += 10 * US;
            pb_exit(b, 1, now);
            prism_step st = { start, now, (uint64_t)s, 0, PRISM_STEP_SAMPLED };
            PB_PUT(b, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&b->e, &st));
            pb_counter(b, 1, mm, W_FLOPS, 4e9);
            pb_counter(b, 1, mm, W_BYTES, 1e8);
            pb_counter(b, 1, mm, W_OTHER, 7e9);         /* not a work counter */
            pb_counter(b, 1, sm, W_FLOPS, 5e7);
            pb_counter(b, 1, sm, W_BYTES, 1e8);
            now += 100 * US;
        }
        pb_counter(b, 1, now, W_FLOPS, 1e6);            /* no region open */
        pb_counter(b, 1, now, W_BYTES, 2e6);
    }
    return pb_load_with(b, opts, true);
}

static uint32_t child_named(const prism_tree *t, uint32_t parent, const char *name)
{
    uint32_t n = parent == PRISM_NO_NODE ? t->first_root : t->nodes[parent].first_child;
    while (n != PRISM_NO_NODE && strcmp(t->nodes[n].name, name))
        n = t->nodes[n].next_sibling;
    assert_true(n != PRISM_NO_NODE);
    return n;
}

static void test_work_counters(void **state)
{
    (void)state;
    pbuild b;
    loaded l = work_profile(NULL, &b, true);
    const prism_work_stats *w = prism_analysis_work(l.a);
    assert_true(w->present);
    assert_true(w->flops == 20 * (4e9 + 5e7) + 1e6);
    assert_true(w->bytes == 20 * 2e8 + 2e6);
    assert_true(w->unattributed_flops == 1e6);        /* the first step's found theirs */
    assert_true(w->unattributed_bytes == 2e6);
    assert_true(w->ridge == 10);

    const prism_tree *t = prism_analysis_tree(l.a);
    uint32_t step = child_named(t, PRISM_NO_NODE, "step");
    uint32_t mm = child_named(t, step, "matmul"), sm = child_named(t, step, "softmax");
    assert_true(t->nodes[mm].flops == 20 * 4e9 && t->nodes[mm].bytes == 20 * 1e8);
    assert_true(t->nodes[sm].flops == 20 * 5e7 && t->nodes[sm].bytes == 20 * 1e8);
    assert_true(t->nodes[step].flops == 20 * (4e9 + 5e7));     /* inclusive */
    assert_true(t->nodes[step].bytes == 20 * 2e8);

    /* softmax is memory-bound, matmul (40 FLOP/byte) is not */
    const prism_bottleneck *bn = find_bn(l.a, PRISM_BN_MEMORY_BOUND, "softmax");
    assert_non_null(bn);
    assert_int_equal(bn->severity, PRISM_SEV_MEDIUM);        /* 1/4 of the time */
    assert_true(bn->share > 0.24 && bn->share < 0.26);
    assert_non_null(strstr(bn->description, "0.50 FLOP/byte"));
    assert_non_null(strstr(bn->evidence, "GB/s"));
    assert_null(find_bn(l.a, PRISM_BN_MEMORY_BOUND, "matmul"));
    unload(&l);

    /* a ridge below softmax's intensity: nothing is memory-bound; above
     * matmul's: both are */
    prism_analysis_opts o = { -1, -1, 0.25, 0 };
    l = work_profile(&o, &b, false);
    assert_null(find_bn(l.a, PRISM_BN_MEMORY_BOUND, NULL));
    unload(&l);
    o.ridge_flop_per_byte = 100;
    l = work_profile(&o, &b, false);
    assert_non_null(find_bn(l.a, PRISM_BN_MEMORY_BOUND, "softmax"));
    assert_non_null(find_bn(l.a, PRISM_BN_MEMORY_BOUND, "matmul"));
    unload(&l);
    free(b.data);
}

/* A counter stamped with the very timestamp of its region's exit (a clock
 * that reads the same value twice) belongs to that region, not to its
 * parent; one stamped with an enter's belongs to the region entered. */
static void test_work_counter_at_exit_tick(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, work_names, sizeof work_names / sizeof work_names[0], 5);
    pb_thread(&b, 1, "main");
    pb_enter(&b, 1, 100, W_STEP);
    pb_enter(&b, 1, 200, W_SOFTMAX);
    pb_exit(&b, 1, 300);                                /* softmax ends at 300 */
    pb_enter(&b, 1, 400, W_MATMUL);                     /* matmul starts at 400 */
    pb_exit(&b, 1, 500);
    pb_exit(&b, 1, 600);
    pb_enter(&b, 1, 700, W_SOFTMAX);                    /* a root ends at 800 */
    pb_exit(&b, 1, 800);
    pb_counter(&b, 1, 300, W_BYTES, 1e6);               /* softmax's last act */
    pb_counter(&b, 1, 400, W_FLOPS, 2e6);               /* matmul's first */
    pb_counter(&b, 1, 800, W_BYTES, 3e6);               /* the root's last */
    loaded l = pb_load(&b);
    const prism_tree *t = prism_analysis_tree(l.a);
    double soft_bytes = 0, mm_flops = 0;
    for (size_t i = 0; i < t->count; i++) {
        if (!strcmp(t->nodes[i].name, "softmax"))
            soft_bytes += t->nodes[i].bytes;
        if (!strcmp(t->nodes[i].name, "matmul"))
            mm_flops += t->nodes[i].flops;
    }
    assert_true(soft_bytes == 4e6);
    assert_true(mm_flops == 2e6);
    assert_true(prism_analysis_work(l.a)->unattributed_bytes == 0);
    unload(&l);
}

/* Work counters without regions: the whole run is judged. */
static void test_work_counters_no_regions(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, work_names, sizeof work_names / sizeof work_names[0], 4);
    pb_thread(&b, 1, "main");
    for (int i = 0; i < 5; i++) {
        pb_counter(&b, 1, MS * (uint64_t)(i + 1), W_FLOPS, 1e6);
        pb_counter(&b, 1, MS * (uint64_t)(i + 1), W_BYTES, 1e6);
    }
    loaded l = pb_load(&b);
    const prism_work_stats *w = prism_analysis_work(l.a);
    assert_true(w->intensity == 1.0);
    assert_true(w->unattributed_bytes == 5e6);
    const prism_bottleneck *bn = find_bn(l.a, PRISM_BN_MEMORY_BOUND, NULL);
    assert_non_null(bn);
    assert_int_equal(bn->node, PRISM_NO_NODE);
    assert_non_null(strstr(bn->description, "the run"));
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_rules),
        cmocka_unit_test(test_compile_time_advice),
        cmocka_unit_test(test_sync_by_name),
        cmocka_unit_test(test_gpu_rules),
        cmocka_unit_test(test_gpu_idle_names_a_training_thread_region),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_compare_long_path),
        cmocka_unit_test(test_work_counters),
        cmocka_unit_test(test_work_counters_no_regions),
        cmocka_unit_test(test_work_counter_at_exit_tick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
