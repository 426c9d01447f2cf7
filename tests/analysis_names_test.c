/*
 * analysis_names_test.c - many distinct names stay linear without changing
 * a figure: the stable sort behind the operations and kernels tables
 * against an insertion sort; a wide tree (hundreds of children under one
 * parent) whose children keep their order of first sight, whose operations
 * match brute force (names equal by text, recursion counted once, ties in
 * path order) and whose hot operation gathers every path of its name; the
 * kernels table sorted with its index kept right across refreshes; a
 * cpu_gpu_sync finding by name among hundreds of sync-like names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/internal.h"
#include "pbuild.h"

#define US 1000ull
#define MS 1000000ull

/* ---- pb_sort_stable ------------------------------------------------------ */

typedef struct small_rec {
    uint32_t key, seq;
    uint8_t pad[4];
} small_rec;

typedef struct big_rec {       /* wider than sort.c's swap block */
    uint64_t key;
    uint32_t seq;
    char fill[100];
} big_rec;

static int small_desc(const void *x, const void *y, const void *ctx)
{
    const small_rec *p = x, *q = y;
    (void)ctx;
    return p->key < q->key ? 1 : p->key > q->key ? -1 : 0;
}

static int big_asc(const void *x, const void *y, const void *ctx)
{
    const big_rec *p = x, *q = y;
    (void)ctx;
    return p->key < q->key ? -1 : p->key > q->key ? 1 : 0;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_sort_stable(void **state)
{
    (void)state;
    static const size_t sizes[] = { 0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 1000, 4097 };
    uint64_t seed = 42;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        for (unsigned keys = 1; keys <= 1000; keys *= 10) {     /* few keys: many ties */
            small_rec *v = malloc((n ? n : 1) * sizeof *v), *ref = malloc((n ? n : 1) * sizeof *ref);
            big_rec *b = malloc((n ? n : 1) * sizeof *b);
            assert_non_null(v);
            assert_non_null(ref);
            assert_non_null(b);
            for (size_t i = 0; i < n; i++) {
                v[i] = (small_rec){ (uint32_t)(rnd(&seed) % keys), (uint32_t)i, { 0 } };
                b[i].key = rnd(&seed) % keys;
                b[i].seq = (uint32_t)i;
                memset(b[i].fill, (int)(i & 0x7f), sizeof b[i].fill);
            }
            memcpy(ref, v, n * sizeof *v);
            for (size_t i = 1; i < n; i++) {          /* the reference: insertion */
                small_rec x = ref[i];
                size_t j = i;
                while (j > 0 && ref[j - 1].key < x.key) {
                    ref[j] = ref[j - 1];
                    j--;
                }
                ref[j] = x;
            }
            pb_sort_stable(v, n, sizeof *v, small_desc, NULL);
            assert_memory_equal(v, ref, n * sizeof *v);
            pb_sort_stable(b, n, sizeof *b, big_asc, NULL);
            for (size_t i = 1; i < n; i++) {
                assert_true(b[i - 1].key <= b[i].key);
                if (b[i - 1].key == b[i].key)
                    assert_true(b[i - 1].seq < b[i].seq);
            }
            for (size_t i = 0; i < n; i++)               /* whole elements moved */
                assert_int_equal(b[i].fill[sizeof b[i].fill - 1], (char)(b[i].seq & 0x7f));
            free(v);
            free(ref);
            free(b);
        }
    }
}

/* ---- a wide tree of many names ----------------------------------------- */

#define WIDE 600                /* children of the step: more than HOT_OPS */
#define WSTEPS 3

enum { W_STEP = 1, W_FN = 2, W_HOT_A = W_FN + WIDE, W_HOT_B, W_NAMES = W_HOT_B };

static char **wide_names(void)
{
    char **n = calloc(W_NAMES, sizeof *n);
    assert_non_null(n);
    for (int i = 0; i < W_NAMES; i++) {
        n[i] = malloc(16);
        assert_non_null(n[i]);
    }
    snprintf(n[W_STEP - 1], 16, "step");
    for (int i = 0; i < WIDE; i++)
        snprintf(n[W_FN - 1 + i], 16, "fn_%04d", i);
    snprintf(n[W_HOT_A - 1], 16, "hot_op");
    snprintf(n[W_HOT_B - 1], 16, "hot_op");   /* the same text under another id */
    return n;
}

static void free_names(char **n, int count)
{
    for (int i = 0; i < count; i++)
        free(n[i]);
    free(n);
}

/* step > fn_0000 .. fn_0599 (durations in five tied groups), fn_0001 >
 * hot_op (id B) > hot_op (id B: recursion), then hot_op (id A). */
static void build_wide(pbuild *b)
{
    char **names = wide_names();
    pb_init(b, (const char *const *)names, W_NAMES, 7);
    free_names(names, W_NAMES);
    pb_thread(b, 1, "main");
    uint64_t now = 1000;
    for (unsigned s = 0; s < WSTEPS; s++) {
        uint64_t start = now;
        pb_enter(b, 1, now, W_STEP);
        for (uint32_t i = 0; i < WIDE; i++) {
            pb_enter(b, 1, now, W_FN + i);
            if (i == 1) {
                pb_enter(b, 1, now, W_HOT_B);
                pb_enter(b, 1, now, W_HOT_B);
                now += 500 * US;
                pb_exit(b, 1, now);
                now += 500 * US;
                pb_exit(b, 1, now);
            }
            now += 1 * US + (i % 5) * 100;
            pb_exit(b, 1, now);
        }
        pb_enter(b, 1, now, W_HOT_A);
        now += 2 * MS;
        pb_exit(b, 1, now);
        pb_exit(b, 1, now);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        pb_step(b, &st);
        now += 10 * US;
    }
}

/* The children of `parent` (PRISM_NO_NODE: the roots) in list order are
 * the nodes with that parent in index order (creation order). */
static void check_children(const prism_tree *t)
{
    for (size_t p = 0; p < t->count; p++) {
        uint32_t k = t->nodes[p].first_child;
        for (size_t i = 0; i < t->count; i++) {
            if (t->nodes[i].parent != p)
                continue;
            assert_int_equal(k, i);
            k = t->nodes[k].next_sibling;
        }
        assert_int_equal(k, PRISM_NO_NODE);
    }
}

typedef struct bop {
    const char *name;
    uint64_t total, self, calls;
} bop;

static void test_wide_tree(void **state)
{
    (void)state;
    pbuild b;
    build_wide(&b);
    loaded l = pb_load(&b);
    const prism_tree *t = prism_analysis_tree(l.a);
    assert_int_equal(t->count, 1 + WIDE + 1 + 1 + 1);      /* + hot_op x2 under fn_0001 */
    check_children(t);
    check_children(prism_analysis_thread_tree(l.a, 0, NULL, NULL));
    uint32_t k = t->nodes[t->first_root].first_child;
    for (int i = 0; i < WIDE; i++, k = t->nodes[k].next_sibling) {
        char want[16];
        snprintf(want, sizeof want, "fn_%04d", i);
        assert_string_equal(t->nodes[k].name, want);
    }
    assert_string_equal(t->nodes[k].name, "hot_op");

    /* operations by brute force: every node of a name (by text), total
     * counted at the outermost, in node order; then by total, ties kept */
    bop *ops = calloc(t->count, sizeof *ops);
    size_t nops = 0;
    assert_non_null(ops);
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        size_t o = 0;
        while (o < nops && strcmp(ops[o].name, n->name))
            o++;
        if (o == nops)
            ops[nops++].name = n->name;
        bool nested = false;
        for (uint32_t q = n->parent; q != PRISM_NO_NODE; q = t->nodes[q].parent)
            nested |= !strcmp(t->nodes[q].name, n->name);
        if (!nested)
            ops[o].total += n->total_ns;
        ops[o].self += n->self_ns;
        ops[o].calls += n->calls;
    }
    for (size_t i = 1; i < nops; i++) {
        bop x = ops[i];
        size_t j = i;
        while (j > 0 && ops[j - 1].total < x.total) {
            ops[j] = ops[j - 1];
            j--;
        }
        ops[j] = x;
    }
    size_t got;
    const prism_op *op = prism_analysis_ops(l.a, &got);
    assert_int_equal(got, nops);
    assert_int_equal(nops, 1 + WIDE + 1);
    for (size_t i = 0; i < nops; i++) {
        assert_string_equal(op[i].name, ops[i].name);
        assert_int_equal(op[i].total_ns, ops[i].total);
        assert_int_equal(op[i].self_ns, ops[i].self);
        assert_int_equal(op[i].calls, ops[i].calls);
    }
    free(ops);

    /* hot_op: the paths of both ids gathered under one name */
    size_t nb;
    const prism_bottleneck *bn = prism_analysis_bottlenecks(l.a, &nb);
    const prism_bottleneck *hot = NULL;
    for (size_t i = 0; i < nb; i++)
        if (bn[i].type == PRISM_BN_HOT_OPERATION && strstr(bn[i].description, "'hot_op'"))
            hot = &bn[i];
    assert_non_null(hot);
    assert_non_null(strstr(hot->evidence, "3 paths"));  /* A, B, B inside B */
    assert_non_null(strstr(hot->evidence, "9 calls"));
    unload(&l);
}

/* ---- kernels ------------------------------------------------------------ */

#define KERNELS 700

/* ---- a hot operation after many light names ----------------------------- */

/* step > fn_0000 .. fn_0599 (1 us each), then late_hot (3 ms): the only
 * operation above the threshold is the 602nd name the rules meet; every
 * name is judged, not the first few hundred. */
static void test_hot_after_many_names(void **state)
{
    (void)state;
    enum { L_STEP = 1, L_FN = 2, L_HOT = L_FN + WIDE, L_NAMES = L_HOT };
    char **names = calloc(L_NAMES, sizeof *names);
    assert_non_null(names);
    for (int i = 0; i < L_NAMES; i++) {
        names[i] = malloc(16);
        assert_non_null(names[i]);
        snprintf(names[i], 16, i == L_STEP - 1 ? "step" : i == L_HOT - 1 ? "late_hot" : "fn_%04d",
                 i - 1);
    }
    pbuild b;
    pb_init(&b, (const char *const *)names, L_NAMES, 7);
    free_names(names, L_NAMES);
    pb_thread(&b, 1, "main");
    uint64_t now = 1000;
    for (unsigned s = 0; s < WSTEPS; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, L_STEP);
        for (uint32_t i = 0; i < WIDE; i++) {
            pb_enter(&b, 1, now, L_FN + i);
            now += 1 * US;
            pb_exit(&b, 1, now);
        }
        pb_enter(&b, 1, now, L_HOT);
        now += 3 * MS;
        pb_exit(&b, 1, now);
        pb_exit(&b, 1, now);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        now += 10 * US;
    }
    loaded l = pb_load(&b);
    size_t nb = 0;
    const prism_bottleneck *bn = prism_analysis_bottlenecks(l.a, &nb);
    const prism_bottleneck *hot = NULL;
    for (size_t i = 0; i < nb; i++)
        if (bn[i].type == PRISM_BN_HOT_OPERATION && !hot)
            hot = &bn[i];
    assert_non_null(hot);
    assert_non_null(strstr(hot->description, "'late_hot'"));
    unload(&l);
}

/* A hot operation whose name is 300 bytes: its finding's words keep their
 * figures whole ("NN.N% of ..."), the name loses its middle ("...") and
 * keeps both ends (issue 34). */
static void test_long_name_figures_whole(void **state)
{
    (void)state;
    char lng[301];
    memset(lng, 'x', 300);
    memcpy(lng, "encoder.layers.", 15);
    memcpy(lng + 300 - 28, "11.self_attn.out_proj (bwd)", 27);
    lng[299] = 'Z';
    lng[300] = '\0';
    const char *names[] = { "step", lng };
    pbuild b;
    pb_init(&b, names, 2, 7);
    pb_thread(&b, 1, "main");
    uint64_t now = 1000;
    for (unsigned s = 0; s < 8; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, 1);
        now += 1 * MS;
        pb_enter(&b, 1, now, 2);
        now += 3 * MS;
        pb_exit(&b, 1, now);
        pb_exit(&b, 1, now);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    loaded l = pb_load(&b);
    size_t nb = 0;
    const prism_bottleneck *bn = prism_analysis_bottlenecks(l.a, &nb);
    const prism_bottleneck *hot = NULL;
    for (size_t i = 0; i < nb; i++)
        if (bn[i].type == PRISM_BN_HOT_OPERATION && !hot)
            hot = &bn[i];
    assert_non_null(hot);
    const char *d = hot->description;
    assert_true(strlen(d) < sizeof hot->description);
    assert_non_null(strstr(d, "'encoder."));                /* both ends of the name */
    assert_non_null(strstr(d, "(bwd)Z': "));
    assert_non_null(strstr(d, "..."));
    double pct = 0;                                         /* the figure after it, whole */
    const char *after = strstr(d, "': ");
    assert_non_null(after);
    assert_int_equal(sscanf(after + 3, "%lf%%", &pct), 1);
    assert_true(pct > 50.0 && pct <= 100.0);
    assert_non_null(strstr(after, "% of "));
    unload(&l);
}

static void build_kernels(pbuild *b)
{
    char **names = calloc(KERNELS + 1, sizeof *names);
    assert_non_null(names);
    for (int i = 0; i <= KERNELS; i++) {
        names[i] = malloc(16);
        assert_non_null(names[i]);
        snprintf(names[i], 16, i == KERNELS ? "step" : "k_%03d", i);
    }
    pb_init(b, (const char *const *)names, KERNELS + 1, 3);
    free_names(names, KERNELS + 1);
    pb_thread(b, 1, "main");
    uint64_t now = 1000;
    for (unsigned s = 0; s < 4; s++) {
        uint64_t start = now;
        pb_enter(b, 1, now, KERNELS + 1);
        for (uint32_t i = 0; i < KERNELS; i++) {
            /* counts 1..3 (three tied totals) by name, reversed in odd steps */
            uint32_t k = s % 2 ? KERNELS - 1 - i : i;
            if (s >= (k % 3) + 1)
                continue;
            prism_gpu_record g = { .type = PRISM_GPU_KERNEL, .start = now, .end = now + 2 * US,
                                   .stream = 7, .correlation = (uint64_t)s * KERNELS + i + 1,
                                   .name = k + 1 };
            PB_PUT(b, PRISM_CHUNK_GPU, 0, now, prism_enc_gpu(&b->e, &g));
            now += 3 * US;
        }
        now += 10 * US;
        pb_exit(b, 1, now);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        pb_step(b, &st);
    }
}

static void test_kernels(void **state)
{
    (void)state;
    pbuild b;
    build_kernels(&b);
    loaded one = pb_load_with(&b, NULL, true);
    const prism_gpu_stats *g = prism_analysis_gpu(one.a);
    assert_int_equal(g->nkernels, KERNELS);
    /* expected: by total, ties in order of first sight (k_000, k_001 ...) */
    size_t i = 0;
    for (int cnt = 3; cnt >= 1; cnt--)
        for (int k = 0; k < KERNELS; k++) {
            if ((k % 3) + 1 != cnt)
                continue;
            char want[16];
            snprintf(want, sizeof want, "k_%03d", k);
            assert_string_equal(g->kernels[i].name, want);
            assert_int_equal(g->kernels[i].count, (uint64_t)cnt);
            assert_int_equal(g->kernels[i].total_ns, (uint64_t)cnt * 2 * US);
            i++;
        }

    /* fed in pieces with a refresh after each: the table re-sorted every
     * time, each name's figures still its own */
    prism_analysis *a = prism_analysis_new(NULL);
    prism_reader_callbacks cb;
    prism_analysis_callbacks(&cb);
    prism_reader *r = prism_reader_new(&cb, a);
    prism_analysis_attach(a, r);
    for (size_t off = 0; off < b.len; off += 997) {
        size_t n = b.len - off < 997 ? b.len - off : 997;
        prism_status st = prism_reader_feed(r, b.data + off, n);
        assert_true(st == PRISM_OK || st == PRISM_NEED_MORE);
        prism_analysis_refresh(a);
    }
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    prism_analysis_refresh(a);
    const prism_gpu_stats *lg = prism_analysis_gpu(a);
    assert_int_equal(lg->nkernels, KERNELS);
    for (size_t j = 0; j < lg->nkernels; j++) {
        if (j)
            assert_true(lg->kernels[j - 1].total_ns >= lg->kernels[j].total_ns);
        int k = atoi(lg->kernels[j].name + 2);
        assert_int_equal(lg->kernels[j].count, (uint64_t)(k % 3) + 1);
    }
    prism_analysis_free(a);
    prism_reader_free(r);
    free(b.data);
    unload(&one);
}

/* ---- cpu_gpu_sync by name among many sync-like names ------------------- */

#define SYNCS 400

static void test_sync_names(void **state)
{
    (void)state;
    /* ids: 1 step, 2 compute, 3 cuda_sync, 4.. wait_sync_NNN */
    char **names = calloc(3 + SYNCS, sizeof *names);
    assert_non_null(names);
    for (int i = 0; i < 3 + SYNCS; i++) {
        names[i] = malloc(24);
        assert_non_null(names[i]);
        snprintf(names[i], 24, "wait_sync_%03d", i - 3);
    }
    snprintf(names[0], 24, "step");
    snprintf(names[1], 24, "compute");
    snprintf(names[2], 24, "cuda_sync");
    pbuild b;
    pb_init(&b, (const char *const *)names, 3 + SYNCS, 5);
    free_names(names, 3 + SYNCS);
    pb_thread(&b, 1, "main");
    uint64_t now = 1000, steps_ns = 0;
    for (unsigned s = 0; s < 5; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, 1);
        for (uint32_t i = 0; i < SYNCS; i++) {
            pb_enter(&b, 1, now, 4 + i);
            now += 1 * US;
            pb_exit(&b, 1, now);
        }
        pb_enter(&b, 1, now, 3);            /* cuda_sync > cuda_sync: 4 ms once */
        pb_enter(&b, 1, now, 3);
        now += 2 * MS;
        pb_exit(&b, 1, now);
        now += 2 * MS;
        pb_exit(&b, 1, now);
        pb_enter(&b, 1, now, 2);
        pb_enter(&b, 1, now, 3);            /* compute > cuda_sync: 1 ms */
        now += 1 * MS;
        pb_exit(&b, 1, now);
        now += 3 * MS;
        pb_exit(&b, 1, now);
        pb_exit(&b, 1, now);
        prism_step st = { start, now, s, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        steps_ns += now - start;
        now += 10 * US;
    }
    loaded l = pb_load(&b);
    size_t nb, found = 0;
    const prism_bottleneck *bn = prism_analysis_bottlenecks(l.a, &nb);
    for (size_t i = 0; i < nb; i++) {
        if (bn[i].type != PRISM_BN_CPU_GPU_SYNC)
            continue;
        found++;
        assert_non_null(strstr(bn[i].description, "'cuda_sync'"));
        /* 5 ms a step counted once (the nested call inside the outer one) */
        assert_true(fabs(bn[i].share - 5.0 * 5 * MS / (double)steps_ns) < 1e-6);
        assert_non_null(strstr(bn[i].evidence, "5.00 ms/step over 5 steps"));
    }
    assert_int_equal(found, 1);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_stable),
        cmocka_unit_test(test_wide_tree),
        cmocka_unit_test(test_hot_after_many_names),
        cmocka_unit_test(test_long_name_figures_whole),
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_sync_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
