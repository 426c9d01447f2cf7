/*
 * job_test.c - merging rank summaries into a job (analysis/job.c,
 * job_cause.c), on summaries built by hand: a planted slow rank and its
 * region found for 2, 8 and 32 ranks, with a synchronising collective (the
 * others wait in "allreduce") and without one; ranks equal up to +-3 %
 * noise give no straggler; ids from the header or from file order; ranks
 * missing steps, unsorted and repeated steps; empty inputs give finite
 * figures; hostile region links; 1024 ranks x 1000 steps merge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prism/job.h"

#define MS 1000000.0

/* Deterministic noise in [-1, 1). */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* A path's hash: FNV-1a of its '/'-joined names (any stable hash will do). */
static uint64_t hash_of(const char *path, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)path[i]) * 1099511628211ull;
    return h;
}

static void rs_init(prism_rank_summary *s, int64_t rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->source = strdup("rank.cbor");
    s->host = strdup("host");
    s->thread = strdup("main");
    s->complete = true;
}

static void rs_step(prism_rank_summary *s, uint64_t index, double step_ns, double wait_ns)
{
    s->steps = realloc(s->steps, (s->nsteps + 1) * sizeof *s->steps);
    assert_non_null(s->steps);
    s->steps[s->nsteps++] = (prism_rank_step){ index, (uint64_t)step_ns, (uint64_t)wait_ns };
    s->steps_total = s->nsteps;
}

/* A region by its path "a/b/c", parents added before children. */
static void rs_region(prism_rank_summary *s, const char *path, prism_wait_kind wait,
                      double in_step_ns)
{
    s->regions = realloc(s->regions, (s->nregions + 1) * sizeof *s->regions);
    assert_non_null(s->regions);
    const char *leaf = strrchr(path, '/');
    uint32_t depth = 0;
    for (const char *p = path; *p; p++)
        depth += *p == '/';
    prism_rank_region *g = &s->regions[s->nregions++];
    memset(g, 0, sizeof *g);
    g->name = strdup(leaf ? leaf + 1 : path);
    g->path_hash = hash_of(path, strlen(path));
    g->parent_hash = leaf ? hash_of(path, (size_t)(leaf - path)) : 0;
    g->depth = depth;
    g->calls = s->nsteps ? s->nsteps : 1;
    g->total_ns = g->in_step_ns = (uint64_t)in_step_ns;
    g->wait = wait;
}

/* The planted job: every rank works 10 ms a step (forward = fast 6 ms +
 * slow_part 4 ms), rank `slow` 5 ms more in slow_part.  synced: the ranks
 * meet in an all-reduce (>= 1 ms, off CPU) and leave together, so every
 * step lasts 16 ms and the others wait 6 ms; else each step is its work.
 * wrap: the regions lie under a root "step".  noise: +- that share of
 * each step's work. */
typedef struct plant {
    size_t nranks, nsteps, slow;
    bool synced, wrap;
    double noise;
} plant;

static prism_rank_summary *planted(const plant *p)
{
    prism_rank_summary *s = calloc(p->nranks, sizeof *s);
    assert_non_null(s);
    uint64_t seed = 7;
    double *work = malloc(p->nranks * sizeof *work);
    for (size_t r = 0; r < p->nranks; r++)
        rs_init(&s[r], (int64_t)r);
    for (size_t k = 0; k < p->nsteps; k++) {
        double top = 0;
        for (size_t r = 0; r < p->nranks; r++) {
            work[r] = (10 + (r == p->slow ? 5 : 0)) * MS * (1 + p->noise * noise(&seed));
            top = fmax(top, work[r]);
        }
        for (size_t r = 0; r < p->nranks; r++) {
            double step = p->synced ? top + 1 * MS : work[r];
            rs_step(&s[r], 10 + k, step, step - work[r]);
        }
    }
    for (size_t r = 0; r < p->nranks; r++) {
        double n = (double)p->nsteps, extra = r == p->slow ? 5 * MS : 0;
        double wait = p->synced ? (r == p->slow ? 1 : 6) * MS : 0;
        const char *pre = p->wrap ? "step/" : "";
        char path[64];
        if (p->wrap)
            rs_region(&s[r], "step", PRISM_WAIT_NO, n * (10 * MS + extra + wait));
        snprintf(path, sizeof path, "%sforward", pre);
        rs_region(&s[r], path, PRISM_WAIT_NO, n * (10 * MS + extra));
        snprintf(path, sizeof path, "%sforward/fast", pre);
        rs_region(&s[r], path, PRISM_WAIT_NO, n * 6 * MS);
        snprintf(path, sizeof path, "%sforward/slow_part", pre);
        rs_region(&s[r], path, PRISM_WAIT_NO, n * (4 * MS + extra));
        if (p->synced) {
            snprintf(path, sizeof path, "%sallreduce", pre);
            rs_region(&s[r], path, PRISM_WAIT_OFFCPU, n * wait);
        }
    }
    free(work);
    return s;
}

static prism_job *merge(prism_rank_summary *s, size_t n)
{
    prism_job *j = prism_job_new(s, n, NULL, 0, NULL);
    free(s);
    assert_non_null(j);
    return j;
}

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.6g, want %.6g (+- %.3g)", got, want, tol);
}

/* ---- the planted straggler ---- */

static void check_planted(const plant *p)
{
    prism_job *j = merge(planted(p), p->nranks);
    assert_int_equal(j->nranks, p->nranks);
    assert_false(j->ids_from_order);
    assert_int_equal(j->nsteps, p->nsteps);
    assert_int_equal(j->nstragglers, 1);
    const prism_straggler *g = &j->stragglers[0];
    assert_int_equal(g->rank, (int64_t)p->slow);
    assert_int_equal(g->index, p->slow);
    assert_true(j->ranks[p->slow].straggler);
    for (size_t r = 0; r < j->nranks; r++)
        assert_true(j->ranks[r].straggler == (r == p->slow));
    assert_near(g->excess_ns, 5 * MS, 0.5 * MS);
    assert_near(g->excess_pct, 50, 6);
    assert_int_equal(g->steps, p->nsteps);
    assert_true(g->slowed >= p->nsteps * 9 / 10);
    assert_int_equal(g->nslowed_index, g->slowed < 16 ? g->slowed : 16);
    assert_true(g->slowed_index[0] >= 10);
    for (size_t i = 1; i < g->nslowed_index; i++)
        assert_true(g->slowed_index[i] > g->slowed_index[i - 1]);

    const char *want = p->wrap ? "step/forward/slow_part" : "forward/slow_part";
    assert_true(g->have_cause);
    assert_string_equal(g->cause.path, want);
    assert_string_equal(g->cause.name, "slow_part");
    assert_false(g->cause.wait);
    assert_near(g->cause.delta_ns, 5 * MS, 1000);
    assert_true(g->ndeltas >= 2);
    assert_near(g->deltas[0].delta_ns, 5 * MS, 1000);
    for (size_t i = 0; i < g->ndeltas; i++) {
        assert_false(g->deltas[i].wait);
        assert_true(g->deltas[i].delta_ns > 0);
        assert_true(!i || g->deltas[i].delta_ns <= g->deltas[i - 1].delta_ns);
    }
    if (p->synced) {
        assert_true(g->have_wait_region);
        assert_string_equal(g->wait_region.path, p->wrap ? "step/allreduce" : "allreduce");
        assert_true(g->wait_region.wait);
        assert_near(g->wait_region.delta_ns, -5 * MS, 1000);
        assert_near(g->wait_region.median_ns, 6 * MS, 1000);
        assert_near(g->others_wait_ns, 6 * MS, 0.5 * MS);
        assert_near(j->job_step_median_ns, 16 * MS, 1 * MS);
        assert_near(j->skew_median_ns, 0, 1);
        assert_near(j->work_skew_median_ns, 5 * MS, 1 * MS);
        assert_near(j->ranks[p->slow].wait_median_ns, 1 * MS, 0.5 * MS);
    } else {
        assert_false(g->have_wait_region);
        assert_near(g->others_wait_ns, 0, 1);
        assert_near(j->job_step_median_ns, 15 * MS, 1 * MS);
        assert_near(j->skew_median_ns, 5 * MS, 1.5 * MS);
    }
    assert_near(j->job_step_total_ns, j->job_step_mean_ns * (double)j->nsteps, 1000);
    assert_true(j->median_rank < j->nranks);
    assert_false(j->ranks[j->median_rank].straggler && p->nranks > 2);
    prism_job_free(j);
}

static void test_planted_2(void **state)
{
    (void)state;
    check_planted(&(plant){ .nranks = 2, .nsteps = 40, .slow = 1, .synced = true });
    check_planted(&(plant){ .nranks = 2, .nsteps = 40, .slow = 0, .synced = false });
}

static void test_planted_8(void **state)
{
    (void)state;
    check_planted(&(plant){ .nranks = 8, .nsteps = 50, .slow = 3, .synced = true, .noise = 0.01 });
    check_planted(&(plant){ .nranks = 8, .nsteps = 50, .slow = 3, .noise = 0.01 });
}

static void test_planted_32(void **state)
{
    (void)state;
    check_planted(&(plant){ .nranks = 32, .nsteps = 30, .slow = 17, .synced = true, .noise = 0.02 });
    check_planted(&(plant){ .nranks = 32, .nsteps = 30, .slow = 31, .noise = 0.02 });
}

/* A root around the work and the all-reduce lasts as long on every rank:
 * the walk goes by work and still reaches slow_part. */
static void test_planted_wrapped(void **state)
{
    (void)state;
    plant p = { .nranks = 8, .nsteps = 20, .slow = 5, .synced = true, .wrap = true };
    check_planted(&p);
    prism_job *j = merge(planted(&p), p.nranks);
    prism_job_delta d[16];
    size_t n = prism_job_deltas(j, p.slow, d, 16);
    assert_int_equal(n, 5);
    bool seen_step = false;
    for (size_t i = 0; i < n; i++) {
        assert_true(!i || fabs(d[i].delta_ns) <= fabs(d[i - 1].delta_ns));
        if (!strcmp(d[i].path, "step")) {
            seen_step = true;
            assert_near(d[i].delta_ns, 0, 1000);    /* plain time: equal */
            assert_int_equal(d[i].depth, 0);
        }
    }
    assert_true(seen_step);
    prism_job_free(j);
}

/* The straggler arrives last and barely waits: its all-reduce measured as
 * on-CPU work there.  The others wait in it: waiting still (most others). */
static void test_wait_by_others(void **state)
{
    (void)state;
    plant p = { .nranks = 8, .nsteps = 20, .slow = 2, .synced = true };
    prism_rank_summary *s = planted(&p);
    s[2].regions[3].wait = PRISM_WAIT_NO;
    assert_string_equal(s[2].regions[3].name, "allreduce");
    s[5].regions[3].wait = PRISM_WAIT_NO;      /* one other: still most */
    prism_job *j = merge(s, p.nranks);
    assert_int_equal(j->nstragglers, 1);
    const prism_straggler *g = &j->stragglers[0];
    assert_string_equal(g->cause.path, "forward/slow_part");
    assert_true(g->have_wait_region);
    assert_string_equal(g->wait_region.path, "allreduce");
    assert_true(g->wait_region.wait);
    prism_job_delta d[8];
    size_t n = prism_job_deltas(j, 2, d, 8);
    for (size_t i = 0; i < n; i++)
        assert_true(d[i].wait == !strcmp(d[i].path, "allreduce"));
    prism_job_free(j);
}

/* ---- no straggler ---- */

static void test_noise_no_straggler(void **state)
{
    (void)state;
    size_t sizes[] = { 2, 3, 4, 16, 64 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (int synced = 0; synced < 2; synced++) {
            plant p = { .nranks = sizes[i], .nsteps = 60, .slow = SIZE_MAX,
                        .synced = synced, .noise = 0.03 };
            prism_job *j = merge(planted(&p), p.nranks);
            assert_int_equal(j->nstragglers, 0);
            for (size_t r = 0; r < j->nranks; r++) {
                assert_false(j->ranks[r].straggler);
                assert_near(j->ranks[r].work_median_ns, 10 * MS, 0.5 * MS);
            }
            prism_job_free(j);
        }
    }
}

/* A rank 2 % slower everywhere (under the 5 % floor) that spikes in 5 of
 * 40 steps slowed those 5 only: not consistent, no straggler. */
static void test_spikes_no_straggler(void **state)
{
    (void)state;
    prism_rank_summary *s = calloc(8, sizeof *s);
    for (size_t r = 0; r < 8; r++) {
        rs_init(&s[r], (int64_t)r);
        for (uint64_t k = 0; k < 40; k++) {
            double w = 10 * MS * (r == 2 ? (k % 8 == 0 ? 2.0 : 1.02) : 1.0 + 0.001 * (double)r);
            rs_step(&s[r], k, w, 0);
        }
    }
    prism_job *j = merge(s, 8);
    assert_int_equal(j->ranks[2].slowed, 5);
    assert_true(j->ranks[2].excess_median_ns > 0);
    assert_false(j->ranks[2].straggler);
    assert_int_equal(j->nstragglers, 0);
    prism_job_free(j);
}

/* ---- against brute force ---- */

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double brute_median(double *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Random ranks (values drawn from few levels: ties), some steps and paths
 * missing: the medians over the others read by position equal those
 * computed by leaving the rank out and sorting. */
static void test_brute_force(void **state)
{
    (void)state;
    uint64_t seed = 99;
    for (size_t nr = 1; nr <= 9; nr++) {
        prism_rank_summary *s = calloc(nr, sizeof *s);
        for (size_t r = 0; r < nr; r++) {
            rs_init(&s[r], (int64_t)r);
            for (uint64_t k = 0; k < 12; k++)
                if (noise(&seed) > -0.6)
                    rs_step(&s[r], k, (20 + 3 * floor(4 * noise(&seed))) * MS, 0);
            for (int p = 0; p < 6; p++) {
                char name[8];
                snprintf(name, sizeof name, "p%d", p);
                if (noise(&seed) > -0.3)
                    rs_region(&s[r], name, PRISM_WAIT_NO, floor(3 + 2 * noise(&seed)) * MS);
            }
        }
        /* expected, before the summaries move into the job (ids = order) */
        double want_excess[9], want_median[9][6], col[9], ex[12];
        for (size_t r = 0; r < nr; r++) {
            size_t ne = 0;
            for (uint64_t k = 0; k < 12; k++) {
                double mine = NAN;
                size_t n = 0;
                for (size_t q = 0; q < nr; q++)
                    for (size_t i = 0; i < s[q].nsteps; i++)
                        if (s[q].steps[i].index == k) {
                            if (q == r)
                                mine = (double)s[q].steps[i].step_ns;
                            else
                                col[n++] = (double)s[q].steps[i].step_ns;
                        }
                if (!isnan(mine) && n)
                    ex[ne++] = mine - brute_median(col, n);
            }
            want_excess[r] = brute_median(ex, ne);
            for (int p = 0; p < 6; p++) {
                size_t n = 0;
                for (size_t q = 0; q < nr; q++) {
                    if (q == r)
                        continue;
                    double v = 0;
                    for (size_t i = 0; i < s[q].nregions; i++)
                        if (s[q].regions[i].name[1] == '0' + p)
                            v = (double)s[q].regions[i].in_step_ns /
                                (double)(s[q].nsteps ? s[q].nsteps : 1);
                    col[n++] = v;
                }
                want_median[r][p] = brute_median(col, n);
            }
        }
        prism_job *j = merge(s, nr);
        for (size_t r = 0; r < nr; r++) {
            assert_near(j->ranks[r].excess_median_ns, want_excess[r], 1e-3);
            prism_job_delta d[8];
            size_t n = prism_job_deltas(j, r, d, 8);
            for (size_t i = 0; i < n; i++)
                assert_near(d[i].median_ns, want_median[r][d[i].name[1] - '0'], 1e-3);
        }
        prism_job_free(j);
    }
}

/* ---- ids ---- */

static void test_ids(void **state)
{
    (void)state;
    /* header ranks out of file order: sorted by id */
    int64_t given[] = { 3, 1, 2, 0 };
    prism_rank_summary *s = calloc(4, sizeof *s);
    for (size_t i = 0; i < 4; i++) {
        rs_init(&s[i], given[i]);
        s[i].pid = 100 + i;
        rs_step(&s[i], 0, 10 * MS, 0);
    }
    prism_job *j = merge(s, 4);
    assert_false(j->ids_from_order);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(j->ranks[i].id, (int64_t)i);
        assert_int_equal(j->ranks[i].sum.rank, (int64_t)i);
    }
    assert_int_equal(j->ranks[0].sum.pid, 103);
    prism_job_free(j);

    /* missing (-1) or repeated: file order for all */
    int64_t bad[][3] = { { 0, -1, 2 }, { 5, 5, 1 }, { -1, -1, -1 } };
    for (size_t b = 0; b < 3; b++) {
        s = calloc(3, sizeof *s);
        for (size_t i = 0; i < 3; i++) {
            rs_init(&s[i], bad[b][i]);
            s[i].pid = 100 + i;
        }
        j = merge(s, 3);
        assert_true(j->ids_from_order);
        for (size_t i = 0; i < 3; i++) {
            assert_int_equal(j->ranks[i].id, (int64_t)i);
            assert_int_equal(j->ranks[i].sum.pid, 100 + i);
        }
        prism_job_free(j);
    }
}

/* ---- missing, unsorted, repeated steps ---- */

static void test_missing_steps(void **state)
{
    (void)state;
    prism_rank_summary *s = calloc(3, sizeof *s);
    for (size_t r = 0; r < 3; r++)
        rs_init(&s[r], (int64_t)r);
    for (uint64_t k = 0; k < 10; k++) {
        rs_step(&s[0], k, 10 * MS, 2 * MS);
        if (k < 3 || k > 5)
            rs_step(&s[1], k, 10 * MS, 20 * MS);   /* wait past the step: clamped */
    }
    /* a hostile order: descending, one index twice (the first kept) */
    rs_step(&s[2], 100, 12 * MS, 0);
    rs_step(&s[2], 4, 11 * MS, 0);
    rs_step(&s[2], 4, 99 * MS, 0);
    rs_step(&s[2], 2, 10 * MS, 0);
    prism_job *j = merge(s, 3);
    assert_int_equal(j->nsteps, 11);
    for (size_t k = 0; k < 10; k++)
        assert_int_equal(j->step_index[k], k);
    assert_int_equal(j->step_index[10], 100);
    assert_int_equal(j->ranks[2].sum.nsteps, 3);
    assert_int_equal(j->ranks[2].sum.steps[0].index, 2);
    assert_near(prism_job_step(j, 2, 4), 11 * MS, 1);
    assert_true(isnan(prism_job_step(j, 2, 0)));
    assert_true(isnan(prism_job_work(j, 1, 4)));
    assert_near(prism_job_work(j, 1, 0), 0, 1);
    assert_near(prism_job_work(j, 0, 0), 8 * MS, 1);
    assert_true(isnan(prism_job_step(j, 0, 10)));
    prism_job_free(j);
}

/* ---- empty ---- */

static void assert_finite_job(const prism_job *j)
{
    double v[] = { j->job_step_median_ns, j->job_step_mean_ns, j->job_step_total_ns,
                   j->skew_median_ns, j->skew_max_ns, j->work_skew_median_ns };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        assert_true(isfinite(v[i]));
    for (size_t r = 0; r < j->nranks; r++) {
        const prism_job_rank *k = &j->ranks[r];
        assert_true(isfinite(k->step_median_ns) && isfinite(k->work_median_ns) &&
                    isfinite(k->wait_median_ns) && isfinite(k->excess_median_ns));
    }
}

static void test_empty(void **state)
{
    (void)state;
    prism_job *j = prism_job_new(NULL, 0, NULL, 0, NULL);
    assert_non_null(j);
    assert_int_equal(j->nranks, 0);
    assert_int_equal(j->nsteps, 0);
    assert_int_equal(j->nstragglers, 0);
    assert_finite_job(j);
    prism_job_delta d[4];
    assert_int_equal(prism_job_deltas(j, 0, d, 4), 0);
    prism_job_free(j);

    /* ranks without steps (and one with regions) */
    prism_rank_summary *s = calloc(3, sizeof *s);
    for (size_t r = 0; r < 3; r++)
        rs_init(&s[r], (int64_t)r);
    rs_region(&s[1], "forward", PRISM_WAIT_NO, 5 * MS);
    j = merge(s, 3);
    assert_int_equal(j->nsteps, 0);
    assert_int_equal(j->nstragglers, 0);
    assert_finite_job(j);
    assert_int_equal(prism_job_deltas(j, 1, d, 4), 1);
    assert_near(d[0].delta_ns, 5 * MS, 1);
    assert_true(isfinite(d[0].median_ns));
    prism_job_free(j);

    /* one rank with steps: nothing to compare against */
    s = calloc(2, sizeof *s);
    rs_init(&s[0], 0);
    rs_init(&s[1], 1);
    rs_step(&s[0], 1, 10 * MS, 0);
    j = merge(s, 2);
    assert_int_equal(j->nsteps, 1);
    assert_int_equal(j->nstragglers, 0);
    assert_finite_job(j);
    assert_near(j->job_step_median_ns, 10 * MS, 1);
    prism_job_free(j);
}

/* ---- failures are kept, and freed with the job ---- */

static void test_failures(void **state)
{
    (void)state;
    prism_job_failure *f = calloc(2, sizeof *f);
    f[0].source = strdup("bad.cbor");
    f[0].status = PRISM_E_HEADER;
    snprintf(f[0].message, sizeof f[0].message, "damaged");
    f[1].source = strdup("missing.cbor");
    prism_rank_summary *s = calloc(1, sizeof *s);
    rs_init(&s[0], 0);
    prism_job *j = prism_job_new(s, 1, f, 2, NULL);
    free(s);
    assert_non_null(j);
    assert_int_equal(j->nfailed, 2);
    assert_string_equal(j->failed[0].source, "bad.cbor");
    prism_job_free(j);
}

/* ---- hostile region links, long paths ---- */

static void test_hostile_regions(void **state)
{
    (void)state;
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    prism_rank_summary *s = calloc(2, sizeof *s);
    for (size_t r = 0; r < 2; r++) {
        rs_init(&s[r], (int64_t)r);
        rs_step(&s[r], 0, 10 * MS, 0);
        rs_region(&s[r], "root", PRISM_WAIT_NO, 1 * MS);
        /* parent and child naming each other, a self-parent, hash 2^64-1 */
        rs_region(&s[r], "root/x", PRISM_WAIT_NO, (double)(r + 1) * MS);
        rs_region(&s[r], "root/x/y", PRISM_WAIT_NO, 2 * MS);
        s[r].regions[1].parent_hash = s[r].regions[2].path_hash;
        s[r].regions[2].parent_hash = s[r].regions[1].path_hash;
        rs_region(&s[r], "self", PRISM_WAIT_NO, 1 * MS);
        s[r].regions[3].parent_hash = s[r].regions[3].path_hash;
        s[r].regions[3].depth = 4;
        rs_region(&s[r], "max", PRISM_WAIT_NAME, 1 * MS);
        s[r].regions[4].path_hash = UINT64_MAX;
        rs_region(&s[r], longname, PRISM_WAIT_NO, 3 * MS);
        char deep[640];
        snprintf(deep, sizeof deep, "%s/%s\xc3\xa9", longname, longname);
        rs_region(&s[r], deep, PRISM_WAIT_NO, (double)(r + 2) * MS);
        /* 254 bytes and a 2-byte character: cut before it */
        snprintf(deep, sizeof deep, "%.254s\xc3\xa9", longname);
        rs_region(&s[r], deep, PRISM_WAIT_NO, (double)(r * 10 + 5) * MS);
    }
    prism_job *j = merge(s, 2);
    prism_job_delta d[16];
    size_t n = prism_job_deltas(j, 1, d, 16);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++) {
        assert_true(strlen(d[i].path) <= 255);
        assert_true(isfinite(d[i].delta_ns));
    }
    /* the deepest path cut at 255 bytes, "<300 a>" first */
    bool cut = false;
    for (size_t i = 0; i < n; i++)
        cut = cut || (strlen(d[i].path) == 255 && d[i].path[0] == 'a');
    assert_true(cut);
    /* the largest |delta| first: the 256-byte name, 10 ms more, cut to 254 */
    assert_near(d[0].delta_ns, 10 * MS, 1);
    assert_int_equal(strlen(d[0].path), 254);
    assert_int_equal(prism_job_deltas(j, 2, d, 16), 0);
    assert_int_equal(prism_job_deltas(j, 1, d, 2), 2);
    prism_job_free(j);
}

/* ---- scale ---- */

static void test_large(void **state)
{
    (void)state;
    plant p = { .nranks = 1024, .nsteps = 1000, .slow = 700, .synced = true, .noise = 0.02 };
    prism_job *j = merge(planted(&p), p.nranks);
    assert_int_equal(j->nranks, 1024);
    assert_int_equal(j->nsteps, 1000);
    assert_int_equal(j->nstragglers, 1);
    assert_int_equal(j->stragglers[0].rank, 700);
    assert_string_equal(j->stragglers[0].cause.path, "forward/slow_part");
    prism_job_free(j);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(prism_wait_kind_name(PRISM_WAIT_NO), "work");
    assert_string_equal(prism_wait_kind_name(PRISM_WAIT_OFFCPU), "off_cpu");
    assert_string_equal(prism_wait_kind_name(PRISM_WAIT_GPU), "gpu_collective");
    assert_string_equal(prism_wait_kind_name(PRISM_WAIT_NAME), "name");
    assert_string_equal(prism_wait_kind_name((prism_wait_kind)77), "unknown");
    prism_job_opts o;
    prism_job_opts_default(&o);
    assert_near(o.k_mad, 3, 0);
    assert_near(o.min_excess_pct, 5, 0);
    assert_near(o.min_excess_ns, 20000, 0);
    assert_near(o.consistent, 0.5, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_planted_2),
        cmocka_unit_test(test_planted_8),
        cmocka_unit_test(test_planted_32),
        cmocka_unit_test(test_planted_wrapped),
        cmocka_unit_test(test_wait_by_others),
        cmocka_unit_test(test_noise_no_straggler),
        cmocka_unit_test(test_spikes_no_straggler),
        cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_missing_steps),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_hostile_regions),
        cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
