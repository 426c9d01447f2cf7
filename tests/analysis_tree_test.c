/*
 * analysis_tree_test.c - the call tree's figures against brute force: a
 * hand-built profile with known durations (nested regions, a region absent
 * from some steps, unsampled steps, regions outside any step, a path on two
 * loader threads) is read through the real reader and analysis, and every
 * node's calls, total, self, min, max, mean, std and per-step figures are
 * checked against values computed here from the same durations.  The
 * result must not depend on where the step records sit in the file (before
 * their regions, after them, or all at the end) nor on how the bytes are
 * fed (whole, or in pieces with a refresh after each).
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

#include "pbuild.h"

#define US 1000ull

enum { N_STEP = 1, N_FWD, N_MM, N_BWD, N_LOAD, N_IDLE };
static const char *const names[] = { "step", "forward", "matmul", "backward", "load", "idle" };

#define STEPS 60
#define MAXCALLS 1024

/* What the test knows about one call path. */
typedef struct expect {
    const char *path[3];
    uint32_t thread;            /* 0: all threads */
    uint64_t dur[MAXCALLS];     /* every call */
    uint64_t self;
    size_t calls;
    double step[2][STEPS];      /* per sampled step position, per loader thread */
    size_t threads;             /* threads holding the path */
} expect;

enum { E_STEP, E_FWD, E_MM, E_BWD, E_LOAD, E_IDLE, E_COUNT };

typedef struct model {
    expect e[E_COUNT];
    size_t nsampled;
    pbuild b;
} model;

enum { STEPS_BEFORE, STEPS_AFTER, STEPS_AT_END };

static void call(model *m, int which, int lane, int pos, uint64_t dur)
{
    expect *e = &m->e[which];
    assert_true(e->calls < MAXCALLS);
    e->dur[e->calls++] = dur;
    if (pos >= 0)
        e->step[lane][pos] += (double)dur;
}

/* A leaf on `stream` at *now of `dur` ns, counted in sampled position pos
 * (-1: none). */
static void leaf(model *m, uint32_t stream, uint64_t *now, uint32_t id, int which, int lane,
                 int pos, uint64_t dur)
{
    pb_enter(&m->b, stream, *now, id);
    *now += dur;
    pb_exit(&m->b, stream, *now);
    call(m, which, lane, pos, dur);
    m->e[which].self += dur;
}

static void build(model *m, int order)
{
    memset(m, 0, sizeof *m);
    static const struct { const char *p[3]; size_t threads; } paths[E_COUNT] = {
        [E_STEP] = { { "step" }, 1 }, [E_FWD] = { { "step", "forward" }, 1 },
        [E_MM] = { { "step", "forward", "matmul" }, 1 }, [E_BWD] = { { "step", "backward" }, 1 },
        [E_LOAD] = { { "load" }, 2 }, [E_IDLE] = { { "idle" }, 1 },
    };
    for (int i = 0; i < E_COUNT; i++) {
        memcpy(m->e[i].path, paths[i].p, sizeof m->e[i].path);
        m->e[i].threads = paths[i].threads;
    }
    pb_init(&m->b, names, sizeof names / sizeof names[0], 7);
    pb_thread(&m->b, 1, "main");
    pb_thread(&m->b, 2, "loader 0");
    pb_thread(&m->b, 3, "loader 1");

    prism_step held[STEPS];
    uint64_t now = 1000 * US;
    for (int s = 0; s < STEPS; s++) {
        bool sampled = s % 4 != 3;
        int pos = sampled ? (int)m->nsampled++ : -1;
        uint64_t start = now, len = 0;
        /* the step's length is known up front: the record may come first */
        uint64_t fwd_calls = 1 + (uint64_t)(s % 3), mm = 40 * US + (uint64_t)(s * 7 % 13) * US;
        bool with_mm = s % 5 != 0;
        uint64_t fwd_len = 5 * US + (with_mm ? mm + 2 * US : 0);
        uint64_t bwd = 90 * US + (uint64_t)(s * 11 % 17) * US;
        len = 3 * US + fwd_calls * (fwd_len + US) + bwd + 4 * US;
        prism_step st = { start, start + len, (uint64_t)s, 0, sampled ? PRISM_STEP_SAMPLED : 0 };
        held[s] = st;
        if (order == STEPS_BEFORE)
            PB_PUT(&m->b, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&m->b.e, &st));

        pb_enter(&m->b, 1, now, N_STEP);
        now += 3 * US;
        uint64_t child = 0;
        for (uint64_t c = 0; c < fwd_calls; c++) {
            uint64_t f0 = now;
            pb_enter(&m->b, 1, now, N_FWD);
            now += 5 * US;
            uint64_t fchild = 0;
            if (with_mm) {
                now += US;
                leaf(m, 1, &now, N_MM, E_MM, 0, pos, mm);
                now += US;
                fchild = mm;
            }
            pb_exit(&m->b, 1, now);
            call(m, E_FWD, 0, pos, now - f0);
            m->e[E_FWD].self += now - f0 - fchild;
            child += now - f0;
            now += US;
        }
        leaf(m, 1, &now, N_BWD, E_BWD, 0, pos, bwd);
        child += bwd;
        now += 4 * US;
        pb_exit(&m->b, 1, now);
        assert_int_equal(now - start, len);
        call(m, E_STEP, 0, pos, len);
        m->e[E_STEP].self += len - child;

        /* loaders: inside the step, a varying number of calls each */
        for (uint32_t lane = 0; lane < 2; lane++) {
            uint64_t w = start + US + lane * 2 * US;
            for (int k = 0; k < (s + (int)lane) % 3; k++) {
                leaf(m, 2 + lane, &w, N_LOAD, E_LOAD, (int)lane, pos, 20 * US + (uint64_t)(s % 7) * US);
                w += US;
            }
        }
        if (order == STEPS_AFTER)
            PB_PUT(&m->b, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&m->b.e, &st));
        /* between steps: a region that belongs to no step */
        now += US;
        leaf(m, 1, &now, N_IDLE, E_IDLE, 0, -1, 2 * US + (uint64_t)s);
        now += US;
    }
    if (order == STEPS_AT_END)
        for (int s = 0; s < STEPS; s++)
            PB_PUT(&m->b, PRISM_CHUNK_STEPS, 0, held[s].start, prism_enc_step(&m->b.e, &held[s]));
    pb_flush(&m->b);
}

static void assert_close(double got, double want, double rel)
{
    double tol = rel * fabs(want) + 1e-6;
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g", got, want);
}

static uint32_t find(const prism_tree *t, const char *const *path)
{
    uint32_t n = t->first_root;
    for (int d = 0; d < 3 && path[d]; d++) {
        if (d > 0)
            n = t->nodes[n].first_child;
        while (n != PRISM_NO_NODE && strcmp(t->nodes[n].name, path[d]))
            n = t->nodes[n].next_sibling;
        if (n == PRISM_NO_NODE)
            fail_msg("no node for %s at depth %d", path[d], d);
    }
    return n;
}

/* Mean and sample variance of v[0..n). */
static void mean_var(const double *v, size_t n, double *mean, double *var)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    *mean = n ? s / (double)n : 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : 0;
}

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void check(const prism_analysis *a, const model *m)
{
    const prism_tree *t = prism_analysis_tree(a);
    assert_int_equal(prism_analysis_steps(a)->sampled, m->nsampled);
    for (int i = 0; i < E_COUNT; i++) {
        const expect *e = &m->e[i];
        const prism_node *p = &t->nodes[find(t, e->path)];
        double calls[MAXCALLS], mean, var;
        uint64_t total = 0, mn = UINT64_MAX, mx = 0;
        for (size_t k = 0; k < e->calls; k++) {
            calls[k] = (double)e->dur[k];
            total += e->dur[k];
            mn = e->dur[k] < mn ? e->dur[k] : mn;
            mx = e->dur[k] > mx ? e->dur[k] : mx;
        }
        mean_var(calls, e->calls, &mean, &var);
        assert_int_equal(p->calls, e->calls);
        assert_int_equal(p->total_ns, total);
        assert_int_equal(p->self_ns, e->self);
        assert_int_equal(p->min_ns, mn);
        assert_int_equal(p->max_ns, mx);
        assert_close(p->mean_ns, mean, 1e-12);
        assert_close(p->std_ns, sqrt(var), 1e-9);

        /* per step: over (thread, step) samples with time in them */
        double seen[2 * STEPS], all[2 * STEPS], smax = 0;
        size_t nseen = 0, nall = 0;
        for (size_t lane = 0; lane < e->threads; lane++)
            for (size_t s = 0; s < m->nsampled; s++) {
                double v = e->step[lane][s];
                all[nall++] = v;
                if (v > 0)
                    seen[nseen++] = v;
                smax = v > smax ? v : smax;
            }
        mean_var(seen, nseen, &mean, &var);
        assert_int_equal(p->steps_seen, nseen);
        assert_close(p->step_mean_ns, mean, 1e-12);
        assert_close(p->step_std_ns, sqrt(var), 1e-9);
        assert_close(p->step_max_ns, smax, 0);

        /* the moments for significance tests: steps it ran in only (a
         * step without it is absent, not zero) */
        uint64_t n;
        double gm, gv;
        bool ok = prism_analysis_node_step_moments(a, (uint32_t)(p - t->nodes), &n, &gm, &gv);
        if (i == E_IDLE) {                      /* never inside a sampled step */
            assert_int_equal(p->steps_seen, 0);
        }
        assert_true(ok);
        mean_var(seen, nseen, &mean, &var);
        assert_int_equal(n, nseen);
        assert_close(gm, mean, 1e-12);
        assert_close(gv, var, 1e-9);
        (void)all;
        (void)nall;

        /* the per-step samples: under PRISM_STEP_SAMPLES per thread, every
         * one of them (as floats), both loader threads' pooled */
        double got[PRISM_STEP_SAMPLES], want[2 * STEPS];
        size_t ng = prism_analysis_node_step_samples(a, (uint32_t)(p - t->nodes), got,
                                                     PRISM_STEP_SAMPLES);
        assert_int_equal(ng, nseen);
        for (size_t k = 0; k < nseen; k++)
            want[k] = (float)seen[k];
        qsort(got, ng, sizeof *got, cmp_dbl);
        qsort(want, nseen, sizeof *want, cmp_dbl);
        for (size_t k = 0; k < nseen; k++)
            assert_true(got[k] == want[k]);
        double med = prism_analysis_node_step_median(a, (uint32_t)(p - t->nodes));
        if (nseen)
            assert_close(med, nseen % 2 ? want[nseen / 2]
                                        : (want[nseen / 2 - 1] + want[nseen / 2]) / 2, 0);
        else
            assert_true(med == 0);
    }
    /* each loader thread's own tree holds its lane exactly */
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        uint32_t stream;
        const char *name;
        const prism_tree *tt = prism_analysis_thread_tree(a, i, &stream, &name);
        if (stream < 2)
            continue;
        const prism_node *p = &tt->nodes[find(tt, m->e[E_LOAD].path)];
        double seen[STEPS], mean, var;
        size_t nseen = 0;
        for (size_t s = 0; s < m->nsampled; s++)
            if (m->e[E_LOAD].step[stream - 2][s] > 0)
                seen[nseen++] = m->e[E_LOAD].step[stream - 2][s];
        mean_var(seen, nseen, &mean, &var);
        assert_int_equal(p->steps_seen, nseen);
        assert_close(p->step_mean_ns, mean, 1e-12);
        assert_close(p->step_std_ns, sqrt(var), 1e-9);
    }
}

static prism_analysis *load_pieces(const uint8_t *data, size_t len, size_t piece,
                                   prism_reader **r)
{
    prism_reader_callbacks cb;
    prism_analysis *a = prism_analysis_new(NULL);
    assert_non_null(a);
    prism_analysis_callbacks(&cb);
    *r = prism_reader_new(&cb, a);
    assert_non_null(*r);
    prism_analysis_attach(a, *r);
    for (size_t off = 0, n; off < len; off += n) {
        n = len - off < piece ? len - off : piece;
        prism_status st = prism_reader_feed(*r, data + off, n);
        if (st != PRISM_OK && st != PRISM_NEED_MORE)   /* a piece may end mid-chunk */
            fail_msg("feed: %s at %llu", prism_strerror(st), (unsigned long long)off);
        prism_analysis_refresh(a);      /* what the live explorer does */
    }
    assert_int_equal(prism_reader_finish(*r), PRISM_OK);
    prism_analysis_refresh(a);
    return a;
}

static void run_order(int order)
{
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    build(m, order);
    static const size_t pieces[] = { SIZE_MAX, 4096, 777 };
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        prism_reader *r;
        prism_analysis *a = load_pieces(m->b.data, m->b.len, pieces[i], &r);
        check(a, m);
        prism_analysis_free(a);
        prism_reader_free(r);
    }
    free(m->b.data);
    free(m);
}

static void test_steps_before_regions(void **state)
{
    (void)state;
    run_order(STEPS_BEFORE);
}

static void test_steps_after_regions(void **state)
{
    (void)state;
    run_order(STEPS_AFTER);
}

static void test_steps_at_end(void **state)
{
    (void)state;
    run_order(STEPS_AT_END);
}

/* Compared with itself: p = 1 where there are samples, nothing
 * significant; and the moments' test agrees with the test on the vectors
 * of the steps each path ran in. */
static void test_self_compare(void **state)
{
    (void)state;
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    build(m, STEPS_BEFORE);
    prism_reader *r;
    prism_analysis *a = load_pieces(m->b.data, m->b.len, SIZE_MAX, &r);
    prism_compare *c = prism_compare_new(a, a);
    assert_non_null(c);
    assert_int_equal(c->count, E_COUNT + 1);    /* and `(outside regions)` */
    for (size_t i = 0; i < c->count; i++) {
        assert_true(c->deltas[i].delta_ns == 0);
        assert_false(c->deltas[i].significant);
        if (!strcmp(c->deltas[i].name, "idle"))        /* never in a step: no test */
            assert_true(c->deltas[i].p_value < 0);
        else
            assert_close(c->deltas[i].p_value, 1.0, 1e-12);
    }
    prism_compare_free(c);

    /* the moments agree with the vectors: matmul (absent from some steps)
     * against backward */
    const prism_tree *t = prism_analysis_tree(a);
    uint64_t n1, n2;
    double m1, v1, m2, v2, mm[STEPS];
    size_t nmm = 0;
    for (size_t s = 0; s < m->nsampled; s++)
        if (m->e[E_MM].step[0][s] > 0)
            mm[nmm++] = m->e[E_MM].step[0][s];
    assert_true(nmm < m->nsampled);
    assert_true(prism_analysis_node_step_moments(a, find(t, m->e[E_MM].path), &n1, &m1, &v1));
    assert_true(prism_analysis_node_step_moments(a, find(t, m->e[E_BWD].path), &n2, &m2, &v2));
    assert_int_equal(n1, nmm);
    double p = prism_welch_p_moments((double)n1, m1, v1, (double)n2, m2, v2);
    double p_vec = prism_welch_p(mm, nmm, m->e[E_BWD].step[0], m->nsampled);
    assert_close(p, p_vec, 1e-9);
    /* per step it ran in, matmul (1 to 3 calls of 40-52 us) is about as
     * long as backward (90-106 us); with its absent steps counted as
     * zeros it looked far shorter */
    assert_true(p > 0.05 && p < 1.0);
    prism_analysis_free(a);
    prism_reader_free(r);
    free(m->b.data);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_before_regions),
        cmocka_unit_test(test_steps_after_regions),
        cmocka_unit_test(test_steps_at_end),
        cmocka_unit_test(test_self_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
