/*
 * timeline_test.c - the Timeline's span loader (analysis/timeline.c) on
 * profiles written with the format's encoder: spans of one step per lane,
 * nesting, regions open across the window, GPU lanes, the cap, the cache;
 * and the pane's geometry (tui/timeline_view.c): outliers, bar columns,
 * lane rows, ticks, zoom and pan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "pbuild.h"
#include "prism/import.h"
#include "prism/timeline.h"
#include "timeline_view.h"

enum { S_STEP = 1, S_FWD, S_BWD, S_LOAD, S_WAIT, S_KERNEL };
static const char *const NAMES[] = { "step", "forward", "backward", "loader", "wait",
                                     "gemm_kernel" };

static void pb_gpu(pbuild *b, uint32_t dev, uint32_t stream, uint64_t a, uint64_t z)
{
    prism_gpu_record g = { .type = PRISM_GPU_KERNEL, .start = a, .end = z, .device = dev,
                           .stream = stream, .name = S_KERNEL };
    PB_PUT(b, PRISM_CHUNK_GPU, 0, 0, prism_enc_gpu(&b->e, &g));
}

/* Write b to a temporary file; the caller unlinks it. */
static void save(pbuild *b, char *path)
{
    pb_flush(b);
    strcpy(path, "/tmp/prism-timeline-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b->data, b->len), (ssize_t)b->len);
    close(fd);
}

/*
 * Thread 1 ("main"): steps k = 0..3 at 1000 k, each a "step" region with
 * "forward" [k+100, k+400] and "backward" [k+500, k+900] inside; thread 2
 * ("loader"): "loader" [k+50, k+300] then "wait" [k+300, k+950]; one
 * kernel per step on GPU 0 stream 7 [k+150, k+350].  A "step" region of
 * thread 3 stays open from 0 to the end (never closed).
 */
static void two_threads(pbuild *b)
{
    pb_init(b, NAMES, sizeof NAMES / sizeof NAMES[0], 1);
    pb_thread(b, 1, "main");
    pb_thread(b, 2, "loader");
    pb_thread(b, 3, "idle");
    pb_enter(b, 3, 0, S_STEP);
    for (uint64_t k = 0; k < 4; k++) {
        uint64_t t = 1000 * k;
        pb_enter(b, 1, t, S_STEP);
        pb_enter(b, 1, t + 100, S_FWD);
        pb_exit(b, 1, t + 400);
        pb_enter(b, 1, t + 500, S_BWD);
        pb_exit(b, 1, t + 900);
        pb_exit(b, 1, t + 999);
        pb_enter(b, 2, t + 50, S_LOAD);
        pb_exit(b, 2, t + 300);
        pb_enter(b, 2, t + 300, S_WAIT);
        pb_exit(b, 2, t + 950);
        pb_gpu(b, 0, 7, t + 150, t + 350);
        prism_step s = { .start = t, .end = t + 999, .index = k, .flags = PRISM_STEP_SAMPLED };
        pb_step(b, &s);
    }
    pb_enter(b, 3, 3990, S_WAIT);       /* its last timestamp */
    pb_exit(b, 3, 3995);
}

static const prism_span *find(const prism_lane *l, const char *name, uint64_t start)
{
    for (size_t i = 0; i < l->nspans; i++)
        if (!strcmp(l->spans[i].name, name) && l->spans[i].start == start)
            return &l->spans[i];
    return NULL;
}

static void test_step_window(void **state)
{
    (void)state;
    pbuild b;
    char path[64];
    two_threads(&b);
    save(&b, path);
    loaded ld = pb_load_with(&b, NULL, true);
    prism_timeline *t = prism_timeline_new(0);
    assert_non_null(t);
    /* step 2: [2000, 2999] */
    assert_int_equal(prism_timeline_load(t, path, 2000, 2999), PRISM_OK);
    assert_int_equal(prism_timeline_lane_count(t), 4);
    const prism_lane *m = prism_timeline_lane(t, 0), *l = prism_timeline_lane(t, 1);
    const prism_lane *idle = prism_timeline_lane(t, 2), *g = prism_timeline_lane(t, 3);
    assert_int_equal(m->kind, PRISM_LANE_THREAD);
    assert_int_equal(m->stream, 1);
    assert_string_equal(m->name, "main");
    assert_string_equal(l->name, "loader");
    assert_string_equal(idle->name, "idle");
    assert_int_equal(g->kind, PRISM_LANE_GPU);
    assert_int_equal(g->device, 0);
    assert_int_equal(g->stream, 7);
    /* main: step at depth 0, forward and backward at depth 1, nothing of
     * steps 1 or 3 */
    assert_int_equal(m->nspans, 3);
    assert_int_equal(m->rows, 2);
    const prism_span *st = find(m, "step", 2000), *fw = find(m, "forward", 2100);
    assert_non_null(st);
    assert_non_null(fw);
    assert_non_null(find(m, "backward", 2500));
    assert_int_equal(st->depth, 0);
    assert_int_equal(st->end, 2999);
    assert_int_equal(fw->depth, 1);
    assert_int_equal(fw->end, 2400);
    assert_false(fw->open);
    /* by depth, then start */
    assert_int_equal(m->spans[0].depth, 0);
    assert_true(m->spans[1].start < m->spans[2].start);
    /* the path hash is the analysis' own: Enter can find the node */
    uint32_t node = prism_analysis_find(ld.a, fw->path_hash);
    assert_int_not_equal(node, PRISM_NO_NODE);
    assert_string_equal(prism_analysis_tree(ld.a)->nodes[node].name, "forward");
    assert_int_equal(prism_analysis_tree(ld.a)->nodes[node].depth, 1);
    /* loader thread: two spans side by side at depth 0 */
    assert_int_equal(l->nspans, 2);
    assert_int_equal(l->rows, 1);
    assert_non_null(find(l, "loader", 2050));
    assert_non_null(find(l, "wait", 2300));
    /* the region never closed spans the window, to its thread's last time */
    const prism_span *open = find(idle, "step", 0);
    assert_non_null(open);
    assert_true(open->open);
    assert_int_equal(open->end, 3995);
    /* one kernel of step 2 */
    assert_int_equal(g->nspans, 1);
    assert_string_equal(g->spans[0].name, "gemm_kernel");
    assert_int_equal(g->spans[0].start, 2150);
    assert_int_equal(g->spans[0].path_hash, 0);
    prism_timeline_free(t);
    unload(&ld);
    free(b.data);
    unlink(path);
}

static void test_cache(void **state)
{
    (void)state;
    pbuild b;
    char path[64];
    two_threads(&b);
    save(&b, path);
    prism_timeline *t = prism_timeline_new(0);
    assert_int_equal(prism_timeline_load(t, path, 0, 999), PRISM_OK);
    assert_int_equal(prism_timeline_reads(t), 1);
    assert_int_equal(prism_timeline_load(t, path, 0, 999), PRISM_OK);
    assert_int_equal(prism_timeline_reads(t), 1);       /* cached */
    assert_int_equal(prism_timeline_load(t, path, 1000, 1999), PRISM_OK);
    assert_int_equal(prism_timeline_reads(t), 2);
    assert_non_null(find(prism_timeline_lane(t, 0), "forward", 1100));
    /* the file grows (a live profile): read again */
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(b.data, 1, 0, f), 0);
    fputc(0, f);
    fclose(f);
    prism_timeline_load(t, path, 1000, 1999);
    assert_int_equal(prism_timeline_reads(t), 3);
    assert_int_equal(prism_timeline_load(t, path, 5, 4), PRISM_E_ARG);
    assert_int_equal(prism_timeline_load(t, "/nonexistent/prism", 0, 1), PRISM_E_IO);
    prism_timeline_free(t);
    free(b.data);
    unlink(path);
}

/* 5000 short regions in one window, cap 100: aggregates keep the lane at
 * most the cap, the long region stays whole, nothing is lost in time. */
static void test_cap(void **state)
{
    (void)state;
    pbuild b;
    char path[64];
    pb_init(&b, NAMES, sizeof NAMES / sizeof NAMES[0], 2);
    pb_thread(&b, 1, "main");
    pb_enter(&b, 1, 0, S_STEP);
    for (uint64_t i = 0; i < 5000; i++) {
        pb_enter(&b, 1, 10 + 20 * i, S_FWD);
        pb_exit(&b, 1, 20 + 20 * i);
    }
    pb_exit(&b, 1, 200000);
    save(&b, path);
    prism_timeline *t = prism_timeline_new(100);
    assert_int_equal(prism_timeline_load(t, path, 0, 200000), PRISM_OK);
    const prism_lane *l = prism_timeline_lane(t, 0);
    assert_non_null(l);
    assert_true(l->nspans <= 100);
    assert_true(l->merged > 0);
    const prism_span *st = find(l, "step", 0);
    assert_non_null(st);
    assert_int_equal(st->merged, 0);
    assert_int_equal(st->end, 200000);
    uint64_t covered = 0, lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < l->nspans; i++) {
        const prism_span *s = &l->spans[i];
        if (s->depth != 1)
            continue;
        covered += s->merged ? s->merged : 1;
        lo = s->start < lo ? s->start : lo;
        hi = s->end > hi ? s->end : hi;
        if (s->merged) {
            assert_string_equal(s->name, "");
            assert_int_equal(s->path_hash, 0);
        }
    }
    assert_int_equal(covered, 5000);        /* every span counted once */
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 20 + 20 * 4999);
    prism_timeline_free(t);
    free(b.data);
    unlink(path);
}

/* Overlapping GPU work of one stream is stacked in rows. */
static void test_gpu_rows(void **state)
{
    (void)state;
    pbuild b;
    char path[64];
    pb_init(&b, NAMES, sizeof NAMES / sizeof NAMES[0], 3);
    pb_gpu(&b, 1, 3, 0, 100);
    pb_gpu(&b, 1, 3, 50, 150);
    pb_gpu(&b, 1, 3, 120, 200);
    save(&b, path);
    prism_timeline *t = prism_timeline_new(0);
    assert_int_equal(prism_timeline_load(t, path, 0, 1000), PRISM_OK);
    const prism_lane *g = prism_timeline_lane(t, 0);
    assert_int_equal(g->kind, PRISM_LANE_GPU);
    assert_int_equal(g->device, 1);
    assert_int_equal(g->rows, 2);
    assert_int_equal(find(g, "gemm_kernel", 0)->depth, 0);
    assert_int_equal(find(g, "gemm_kernel", 50)->depth, 1);
    assert_int_equal(find(g, "gemm_kernel", 120)->depth, 0);
    prism_timeline_free(t);
    free(b.data);
    unlink(path);
}

static const prism_span *find_name(const prism_lane *l, const char *name)
{
    for (size_t i = 0; i < l->nspans; i++)
        if (!strcmp(l->spans[i].name, name))
            return &l->spans[i];
    return NULL;
}

/* A torch.profiler trace goes through the same reader: its CPU thread's
 * nested operators and its GPU stream's kernels become lanes, with the
 * analysis' path hashes. */
static void test_torch_trace(void **state)
{
    (void)state;
    const char *path = "tests/fixtures/kineto/basic.json";
    prism_import_register();
    prism_status err;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    assert_non_null(a);
    prism_timeline *t = prism_timeline_new(0);
    assert_int_equal(prism_timeline_load(t, path, 0, prism_analysis_last_ts(a)), PRISM_OK);
    const prism_lane *cpu = NULL, *gpu = NULL;
    for (size_t i = 0; i < prism_timeline_lane_count(t); i++) {
        const prism_lane *l = prism_timeline_lane(t, i);
        if (!cpu && l->kind == PRISM_LANE_THREAD && find_name(l, "forward"))
            cpu = l;
        if (!gpu && l->kind == PRISM_LANE_GPU && find_name(l, "ampere_sgemm_128x64_tn"))
            gpu = l;
    }
    assert_non_null(cpu);
    assert_non_null(gpu);
    const prism_span *fw = find_name(cpu, "forward");
    const prism_span *lin = find_name(cpu, "aten::linear");
    assert_non_null(lin);
    assert_int_equal(fw->end - fw->start, 1200000);         /* 1200 us */
    assert_int_equal(lin->depth, fw->depth + 1);
    assert_true(lin->start >= fw->start && lin->end <= fw->end);
    assert_int_not_equal(prism_analysis_find(a, lin->path_hash), PRISM_NO_NODE);
    assert_int_equal(gpu->device, 0);
    assert_int_equal(gpu->stream, 7);
    prism_timeline_free(t);
    prism_analysis_free(a);
    prism_reader_set_foreign(NULL);
}

/* Both ways of reading a window give the same lanes. */
static void same_lanes(prism_timeline *a, prism_timeline *b)
{
    assert_int_equal(prism_timeline_lane_count(a), prism_timeline_lane_count(b));
    for (size_t i = 0; i < prism_timeline_lane_count(a); i++) {
        const prism_lane *x = prism_timeline_lane(a, i), *y = prism_timeline_lane(b, i);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->stream, y->stream);
        assert_int_equal(x->device, y->device);
        assert_int_equal(x->nspans, y->nspans);
        assert_int_equal(x->rows, y->rows);
        assert_string_equal(x->name ? x->name : "-", y->name ? y->name : "-");
        for (size_t k = 0; k < x->nspans; k++) {
            assert_int_equal(x->spans[k].start, y->spans[k].start);
            assert_int_equal(x->spans[k].end, y->spans[k].end);
            assert_int_equal(x->spans[k].depth, y->spans[k].depth);
            assert_int_equal(x->spans[k].path_hash, y->spans[k].path_hash);
            assert_int_equal(x->spans[k].open, y->spans[k].open);
            assert_int_equal(x->spans[k].outside, y->spans[k].outside);
            assert_string_equal(x->spans[k].name, y->spans[k].name);
        }
    }
}

/*
 * The chunk index against a whole read: three threads with random nesting
 * (up to 6 deep) in many small chunks, an "epoch" region around all steps,
 * one region left open, GPU work; every step's window and windows across
 * steps.  The index must read less than the whole file for a step.
 */
static void test_index_matches_whole(void **state)
{
    (void)state;
    pbuild b;
    char path[64];
    pb_init(&b, NAMES, sizeof NAMES / sizeof NAMES[0], 4);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "worker");
    pb_thread(&b, 3, "never closed");
    pb_enter(&b, 1, 0, S_STEP);          /* the epoch */
    pb_enter(&b, 3, 5, S_WAIT);
    uint64_t now[4] = { 10, 10, 10, 10 };
    uint32_t depth[4] = { 0, 1, 0, 1 };
    for (uint64_t k = 0; k < 40; k++) {
        uint64_t start = now[1];
        for (int e = 0; e < 60; e++) {
            uint32_t th = 1 + (uint32_t)(jitter(&b, 1000) % 3);
            now[th] = (now[th] > now[1] ? now[th] : now[1]) + jitter(&b, 50);
            /* the worker (2) returns to its top level now and then */
            bool in = depth[th] < (th == 2 ? 1u : 2u) || (depth[th] < 6 && jitter(&b, 1000) % 2);
            if (in) {
                pb_enter(&b, th, now[th], (uint32_t)(S_FWD + jitter(&b, 1000) % 3));
                depth[th]++;
            } else if (depth[th] > (th == 1 || th == 3 ? 1u : 0u)) {
                pb_exit(&b, th, now[th]);
                depth[th]--;
            }
            if (e % 7 == 0)
                pb_gpu(&b, 0, (uint32_t)e % 2, now[th], now[th] + 70);
        }
        now[1] += 10;
        prism_step s = { .start = start, .end = now[1], .index = k };
        pb_step(&b, &s);
    }
    for (uint32_t th = 1; th <= 3; th++)
        while (depth[th] > (th == 3 ? 1u : 0u)) {
            now[th] += 5;
            pb_exit(&b, th, now[th]);
            depth[th]--;
        }
    save(&b, path);
    loaded ld = pb_load_with(&b, NULL, true);
    const prism_step_stats *ss = prism_analysis_steps(ld.a);
    assert_int_equal(ss->nseries, 40);
    prism_timeline *ix = prism_timeline_new(0), *whole = prism_timeline_new(0);
    prism_timeline_use_index(whole, false);
    /* the worker's time outside regions, in sampled steps: the same both ways */
    prism_step sampled[40];
    for (size_t k = 0; k < 40; k++) {
        sampled[k] = ss->series[k];
        sampled[k].flags |= k % 5 ? PRISM_STEP_SAMPLED : 0;
    }
    assert_int_equal(prism_timeline_set_training(ix, 2, sampled, 40), PRISM_OK);
    assert_int_equal(prism_timeline_set_training(whole, 2, sampled, 40), PRISM_OK);
    size_t gaps = 0;
    for (size_t k = 0; k < ss->nseries + 3; k++) {
        uint64_t a = k < ss->nseries ? ss->series[k].start : ss->series[k - ss->nseries].start;
        uint64_t z = k < ss->nseries ? ss->series[k].end : ss->series[10 * (k - ss->nseries) + 9].end;
        assert_int_equal(prism_timeline_load(ix, path, a, z), PRISM_OK);
        assert_int_equal(prism_timeline_load(whole, path, a, z), PRISM_OK);
        same_lanes(ix, whole);
        assert_int_equal(prism_timeline_bytes_read(whole), b.len);
        if (k < ss->nseries)        /* one step: a small part of the file */
            assert_true(prism_timeline_bytes_read(ix) < b.len / 4);
        /* every span's path is one the analysis knows (the outside node
         * is the training thread's alone: not in this analysis) */
        for (size_t i = 0; i < prism_timeline_lane_count(ix); i++) {
            const prism_lane *l = prism_timeline_lane(ix, i);
            for (size_t j = 0; l->kind == PRISM_LANE_THREAD && j < l->nspans; j++) {
                gaps += l->spans[j].outside;
                assert_true(!l->spans[j].outside || l->stream == 2);
                if (!l->spans[j].outside)
                    assert_int_not_equal(prism_analysis_find(ld.a, l->spans[j].path_hash),
                                         PRISM_NO_NODE);
            }
        }
    }
    assert_true(gaps > 0);
    /* the region of thread 3 never closed, open in every window */
    const prism_lane *l3 = NULL;
    for (size_t i = 0; i < prism_timeline_lane_count(ix); i++)
        if (prism_timeline_lane(ix, i)->stream == 3)
            l3 = prism_timeline_lane(ix, i);
    assert_non_null(l3);
    assert_true(find(l3, "wait", 5)->open);
    prism_timeline_free(ix);
    prism_timeline_free(whole);
    unload(&ld);
    free(b.data);
    unlink(path);
}

/*
 * The training thread's time outside regions (issue 25).  Thread 1
 * ("main", steps.thread) in steps k = 0..3 at [1000 k + 10, 1000 k + 990]
 * (step 2 not sampled) runs "forward" [k+100, k+400] and "backward"
 * [k+500, k+900]; a "loader" region crosses from step 1 into step 2
 * [1950, 2050]; thread 2 writes between each of thread 1's events, so
 * every event of thread 1 is a chunk of its own.  The gaps, per step:
 *   0: [10, 100] [400, 500] [900, 990]
 *   1: [1010, 1100] [1400, 1500] [1900, 1950]
 *   2: none (not sampled)
 *   3: [3010, 3100] [3400, 3500] [3900, 3990] (no region after 3900)
 */
static const uint64_t GAPS[][2] = { { 10, 100 },    { 400, 500 },   { 900, 990 },
                                    { 1010, 1100 }, { 1400, 1500 }, { 1900, 1950 },
                                    { 3010, 3100 }, { 3400, 3500 }, { 3900, 3990 } };

static void outside_profile(pbuild *b)
{
    pb_init(b, NAMES, sizeof NAMES / sizeof NAMES[0], 2);
    pb_info_uint(b, "steps.thread", 1);
    pb_thread(b, 1, "main");
    pb_thread(b, 2, "other");
    uint64_t o = 0;
    for (uint64_t k = 0; k < 4; k++) {
        uint64_t t = 1000 * k;
        uint64_t at[] = { t + 100, t + 400, t + 500, t + 900 };
        for (int e = 0; e < 4; e++) {
            if (e % 2 == 0)
                pb_enter(b, 1, at[e], e ? S_BWD : S_FWD);
            else
                pb_exit(b, 1, at[e]);
            pb_enter(b, 2, o = at[e] + 1, S_WAIT);  /* a chunk of thread 2 between */
            pb_exit(b, 2, o + 1);
        }
        if (k == 1)
            pb_enter(b, 1, 1950, S_LOAD);
        if (k == 2)
            pb_exit(b, 1, 2050);
        prism_step s = { .start = t + 10, .end = t + 990, .index = k,
                         .flags = k == 2 ? 0 : PRISM_STEP_SAMPLED };
        pb_step(b, &s);
    }
    /* complete: the analysis counts the time after the last root region */
    prism_footer f = { .end_ts = 4000, .clean = true };
    PB_PUT(b, PRISM_CHUNK_FOOTER, 0, 0, prism_enc_footer(&b->e, &f));
}

/* The lane's outside spans are exactly gaps [from, to) of GAPS. */
static void expect_gaps(const prism_lane *l, size_t from, size_t to)
{
    size_t n = 0;
    for (size_t i = 0; l && i < l->nspans; i++) {
        const prism_span *sp = &l->spans[i];
        if (!sp->outside)
            continue;
        assert_true(from + n < to);
        assert_int_equal(sp->start, GAPS[from + n][0]);
        assert_int_equal(sp->end, GAPS[from + n][1]);
        assert_int_equal(sp->depth, 0);
        assert_false(sp->open);
        assert_string_equal(sp->name, PRISM_TIMELINE_OUTSIDE);
        n++;
    }
    assert_int_equal(n, to - from);
}

static const prism_lane *lane_of(const prism_timeline *t, uint32_t stream)
{
    for (size_t i = 0; i < prism_timeline_lane_count(t); i++)
        if (prism_timeline_lane(t, i)->kind == PRISM_LANE_THREAD &&
            prism_timeline_lane(t, i)->stream == stream)
            return prism_timeline_lane(t, i);
    return NULL;
}

static void test_outside_regions(void **state)
{
    (void)state;
    pbuild b;
    char path[64];
    outside_profile(&b);
    save(&b, path);
    loaded ld = pb_load_with(&b, NULL, true);
    /* the analysis' node holds the same gaps */
    size_t ti = prism_analysis_training_thread(ld.a);
    assert_int_not_equal(ti, SIZE_MAX);
    uint32_t stream = 0;
    prism_analysis_thread_tree(ld.a, ti, &stream, NULL);
    assert_int_equal(stream, 1);
    const prism_step_stats *ss = prism_analysis_steps(ld.a);
    assert_int_equal(ss->nseries, 4);
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof GAPS / sizeof GAPS[0]; i++)
        sum += GAPS[i][1] - GAPS[i][0];
    const prism_tree *tr = prism_analysis_tree(ld.a);
    uint32_t on = PRISM_NO_NODE;
    for (uint32_t r = tr->first_root; r != PRISM_NO_NODE; r = tr->nodes[r].next_sibling)
        if (tr->nodes[r].flags & PRISM_NODE_UNATTRIBUTED)
            on = r;
    assert_int_not_equal(on, PRISM_NO_NODE);
    assert_int_equal(tr->nodes[on].total_ns, sum);

    prism_timeline *ix = prism_timeline_new(0), *whole = prism_timeline_new(0);
    assert_non_null(ix);
    assert_non_null(whole);
    prism_timeline_use_index(whole, false);
    /* without the training thread: no outside spans */
    assert_int_equal(prism_timeline_load(ix, path, 0, 4000), PRISM_OK);
    expect_gaps(lane_of(ix, 1), 0, 0);
    uint64_t reads = prism_timeline_reads(ix);
    prism_timeline *both[] = { ix, whole };
    for (int w = 0; w < 2; w++)
        assert_int_equal(prism_timeline_set_training(both[w], 1, ss->series, ss->nseries),
                         PRISM_OK);
    /* the same steps again: the cached window stays; a change reads again */
    assert_int_equal(prism_timeline_load(ix, path, 0, 4000), PRISM_OK);
    assert_int_equal(prism_timeline_reads(ix), reads + 1);
    assert_int_equal(prism_timeline_set_training(ix, 1, ss->series, ss->nseries), PRISM_OK);
    assert_int_equal(prism_timeline_load(ix, path, 0, 4000), PRISM_OK);
    assert_int_equal(prism_timeline_reads(ix), reads + 1);
    expect_gaps(lane_of(ix, 1), 0, 9);
    /* windows: a step each, inside a gap, across steps, one gap's edge */
    static const struct {
        uint64_t t0, t1;
        size_t from, to;
    } win[] = {
        { 10, 990, 0, 3 },     { 1010, 1990, 3, 6 }, { 2010, 2990, 6, 6 },
        { 3010, 3990, 6, 9 },  { 1450, 1480, 4, 5 }, { 1300, 1450, 4, 5 },
        { 1920, 2100, 5, 6 },  { 3950, 5000, 8, 9 }, { 900, 1100, 2, 4 },
        { 0, 4000, 0, 9 },
    };
    for (size_t i = 0; i < sizeof win / sizeof win[0]; i++) {
        for (int w = 0; w < 2; w++) {
            assert_int_equal(prism_timeline_load(both[w], path, win[i].t0, win[i].t1), PRISM_OK);
            expect_gaps(lane_of(both[w], 1), win[i].from, win[i].to);
            expect_gaps(lane_of(both[w], 2), 0, 0);     /* other threads: none */
        }
        same_lanes(ix, whole);
    }
    /* only the window's steps given (as the pane does): the same spans */
    assert_int_equal(prism_timeline_set_training(ix, 1, &ss->series[1], 1), PRISM_OK);
    assert_int_equal(prism_timeline_load(ix, path, 1450, 1480), PRISM_OK);
    expect_gaps(lane_of(ix, 1), 4, 5);
    /* the gap's path is the analysis' node: Enter finds it in the Tree */
    const prism_lane *m = lane_of(ix, 1);
    for (size_t i = 0; i < m->nspans; i++)
        if (m->spans[i].outside)
            assert_int_equal(prism_analysis_find(ld.a, m->spans[i].path_hash), on);
    /* turned off */
    assert_int_equal(prism_timeline_set_training(ix, UINT32_MAX, NULL, 0), PRISM_OK);
    assert_int_equal(prism_timeline_load(ix, path, 1450, 1480), PRISM_OK);
    expect_gaps(lane_of(ix, 1), 0, 0);
    assert_int_equal(prism_timeline_set_training(ix, 1, NULL, 3), PRISM_E_ARG);
    prism_timeline_free(ix);
    prism_timeline_free(whole);
    unload(&ld);
    free(b.data);
    unlink(path);
}

/* A live file: the index reads on from where it stopped (a torn tail
 * included) and a window past the old end comes out as from a whole read. */
static void test_live_growth(void **state)
{
    (void)state;
    pbuild b;
    char path[64];
    two_threads(&b);
    pb_flush(&b);
    size_t cut = b.len * 2 / 3 + 7;     /* inside a chunk */
    strcpy(path, "/tmp/prism-timeline-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b.data, cut), (ssize_t)cut);
    prism_timeline *t = prism_timeline_new(0), *whole = prism_timeline_new(0);
    prism_timeline_use_index(whole, false);
    assert_int_equal(prism_timeline_load(t, path, 0, 999), PRISM_OK);
    assert_non_null(find(prism_timeline_lane(t, 0), "forward", 100));
    assert_int_equal(write(fd, b.data + cut, b.len - cut), (ssize_t)(b.len - cut));
    close(fd);
    assert_int_equal(prism_timeline_load(t, path, 3000, 3999), PRISM_OK);
    assert_int_equal(prism_timeline_load(whole, path, 3000, 3999), PRISM_OK);
    same_lanes(t, whole);
    assert_non_null(find(prism_timeline_lane(t, 0), "backward", 3500));
    prism_timeline_free(t);
    prism_timeline_free(whole);
    free(b.data);
    unlink(path);
}

static void test_outliers(void **state)
{
    (void)state;
    double d[10] = { 100, 102, 98, 101, 99, 100, 300, 103, 97, 100 };
    bool o[10];
    double lim;
    assert_int_equal(tlv_outliers(d, 10, o, &lim), 1);
    assert_true(o[6]);
    assert_false(o[0]);
    assert_true(lim > 103 && lim < 300);
    /* an even run: the 5 % floor, one slow step still flagged */
    double e[5] = { 100, 100, 100, 100, 120 };
    assert_int_equal(tlv_outliers(e, 5, o, NULL), 1);
    assert_true(o[4]);
    double f[4] = { 100, 100, 100, 104 };
    assert_int_equal(tlv_outliers(f, 4, o, NULL), 0);
    assert_int_equal(tlv_outliers(d, 2, o, &lim), 0);      /* too few to tell */
    assert_true(lim == 0);
}

static void test_bar_columns(void **state)
{
    (void)state;
    /* 20 steps in 80 columns: 4 columns each */
    assert_int_equal(tlv_bar_cols(20, 80), 4);
    assert_int_equal(tlv_step_col(20, 80, 3), 12);
    assert_int_equal(tlv_col_step(20, 80, 13), 3);
    assert_int_equal(tlv_col_step(20, 80, 79), 19);
    assert_int_equal(tlv_bar_cols(20, 30), 1);
    assert_int_equal(tlv_col_step(20, 30, 25), SIZE_MAX);
    /* 1000 steps in 100 columns: buckets of 10, the peak shows */
    double d[1000];
    for (int i = 0; i < 1000; i++)
        d[i] = 1;
    d[537] = 9;
    assert_int_equal(tlv_bar_cols(1000, 100), 1);
    assert_int_equal(tlv_col_step(1000, 100, 53), 530);
    assert_int_equal(tlv_col_peak(d, 1000, 100, 53), 537);
    assert_int_equal(tlv_step_col(1000, 100, 537), 53);
    /* every step has a column and maps back into it */
    for (size_t n = 1; n < 300; n += 7)
        for (int w = 1; w < 120; w += 11)
            for (size_t i = 0; i < n; i++) {
                int c = tlv_step_col(n, w, i);
                assert_true(c >= 0 && c < w);
                size_t a = tlv_col_step(n, w, c);
                assert_true(a <= i);
                assert_true(n <= (size_t)w ? a == i : (size_t)(c + 1) * n / (size_t)w > i);
            }
    assert_int_equal(tlv_col_step(0, 10, 0), SIZE_MAX);
    assert_int_equal(tlv_step_col(5, 0, 0), -1);
}

static void test_row_cells(void **state)
{
    (void)state;
    prism_span s[4] = {
        { .start = 0, .end = 1000, .name = "step", .depth = 0 },
        { .start = 100, .end = 400, .name = "fwd", .depth = 1 },
        { .start = 500, .end = 505, .name = "tiny", .depth = 1 },
        { .start = 506, .end = 509, .name = "tinier", .depth = 1 },
    };
    tlv_cell c[10];
    assert_int_equal(tlv_row(s, 4, 0, 0, 1000, 10, c), 10);
    assert_int_equal(c[0].span, 0);
    assert_int_equal(c[9].span, 0);
    assert_int_equal(tlv_row(s, 4, 1, 0, 1000, 10, c), 4);
    assert_int_equal(c[0].span, SIZE_MAX);          /* idle before fwd */
    assert_int_equal(c[1].span, 1);
    assert_int_equal(c[3].span, 1);
    assert_int_equal(c[4].span, SIZE_MAX);          /* idle gap */
    assert_int_equal(c[5].span, 2);                 /* longest of two */
    assert_int_equal(c[5].count, 2);
    /* zoomed in on [495, 515): the tiny spans get their own cells, a span
     * that ends where a column starts leaves that column alone */
    assert_int_equal(tlv_row(s, 4, 1, 495, 515, 10, c), 5);
    assert_int_equal(c[1].span, SIZE_MAX);
    assert_int_equal(c[2].span, 2);
    assert_int_equal(c[4].span, 2);
    assert_int_equal(c[5].span, 3);
    assert_int_equal(c[6].span, 3);
    assert_int_equal(c[7].span, SIZE_MAX);
    /* a view on nothing, a 1-column view, a span outside */
    assert_int_equal(tlv_row(s, 4, 2, 0, 1000, 10, c), 0);
    assert_int_equal(tlv_row(s, 4, 0, 0, 1000, 1, c), 1);
    assert_int_equal(tlv_row(s, 4, 1, 600, 700, 10, c), 0);
}

static void test_ticks_zoom_pan(void **state)
{
    (void)state;
    assert_int_equal(tlv_tick(1000000, 100, 10), 100000);
    assert_int_equal(tlv_tick(1000000, 80, 10), 200000);
    assert_int_equal(tlv_tick(3, 100, 10), 1);
    uint64_t a = 0, z = 1000;
    tlv_zoom(&a, &z, 500, 0.5, 0, 1000, 10);
    assert_int_equal(a, 250);
    assert_int_equal(z, 750);
    tlv_zoom(&a, &z, 250, 0.5, 0, 1000, 10);    /* around the left edge */
    assert_int_equal(a, 250);
    assert_int_equal(z, 500);
    for (int i = 0; i < 20; i++)
        tlv_zoom(&a, &z, 300, 0.5, 0, 1000, 10);
    assert_int_equal(z - a, 10);                  /* the minimum width */
    tlv_zoom(&a, &z, 300, 1000, 0, 1000, 10);
    assert_int_equal(a, 0);
    assert_int_equal(z, 1000);
    a = 200;
    z = 400;
    tlv_pan(&a, &z, -10, 20, 0, 1000);
    assert_int_equal(a, 100);
    assert_int_equal(z, 300);
    tlv_pan(&a, &z, -100, 20, 0, 1000);
    assert_int_equal(a, 0);
    tlv_pan(&a, &z, 1000, 20, 0, 1000);
    assert_int_equal(z, 1000);
    assert_int_equal(a, 800);
    assert_int_equal(tlv_col(1500, 1000, 2000, 10), 5);
    assert_true(tlv_col(500, 1000, 2000, 10) < 0);
    assert_int_equal(tlv_time(5, 1000, 2000, 10), 1500);
    /* a column's time maps back to it, however the width divides (the
     * cursor moves one column per key) */
    for (uint64_t span = 100; span < 5000000; span = span * 3 + 7)
        for (int w = 1; w < 250; w += 13)
            for (int c = 0; c < w; c++)
                if (span >= (uint64_t)w)
                    assert_int_equal(tlv_col(tlv_time(c, 777, 777 + span, w), 777, 777 + span, w), c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_window), cmocka_unit_test(test_cache),
        cmocka_unit_test(test_cap), cmocka_unit_test(test_gpu_rows),
        cmocka_unit_test(test_torch_trace), cmocka_unit_test(test_index_matches_whole),
        cmocka_unit_test(test_live_growth), cmocka_unit_test(test_outside_regions),
        cmocka_unit_test(test_outliers), cmocka_unit_test(test_bar_columns),
        cmocka_unit_test(test_row_cells), cmocka_unit_test(test_ticks_zoom_pan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
