/*
 * job_test.c - merging rank summaries into a job (analysis/job.c,
 * job_cause.c), on summaries built by hand: a planted slow rank and its
 * region found for 2, 8 and 32 ranks, with a synchronising collective (the
 * others wait in "allreduce") and without one; ranks equal up to +-3 %
 * noise give no straggler; leave-one-out medians against brute force;
 * ids from the header or from file order.  The edges: job_edge_test.c;
 * helpers: job_build.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "job_build.h"

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
/* Stragglers by distribution: 4 ranks, 80 steps, every rank's work very
 * noisy (+-60 % a step), rank 2 with twice the others' median work.  The
 * per-step threshold catches it in few steps; its distribution over the
 * steps names it.  The same job with rank 2 like the others: none. */
static prism_job *noisy_job(double slow_factor)
{
    size_t nr = 4, ns = 80;
    prism_rank_summary *s = calloc(nr, sizeof *s);
    assert_non_null(s);
    uint64_t seed = 11;
    for (size_t r = 0; r < nr; r++)
        rs_init(&s[r], (int64_t)r);
    for (size_t k = 0; k < ns; k++)
        for (size_t r = 0; r < nr; r++) {
            double w = (r == 2 ? slow_factor : 1.0) * 36 * MS * (1 + 0.6 * noise(&seed));
            rs_step(&s[r], k, w, 0);
        }
    for (size_t r = 0; r < nr; r++)
        rs_region(&s[r], "forward", PRISM_WAIT_NO, 36 * MS * (double)ns);
    return merge(s, nr);
}

static void test_straggler_by_distribution(void **state)
{
    (void)state;
    prism_job *j = noisy_job(2.0);
    for (size_t r = 0; r < j->nranks; r++)
        printf("  rank %zu: work median %.1f ms, slowed %llu of %llu steps, sign z %.2f%s\n",
               r, j->ranks[r].work_median_ns / MS, (unsigned long long)j->ranks[r].slowed,
               (unsigned long long)j->nsteps, j->ranks[r].dist_z,
               j->ranks[r].straggler ? "  straggler" : "");
    assert_true(j->ranks[2].slowed < j->nsteps / 2);    /* the votes alone miss it */
    assert_int_equal(j->nstragglers, 1);
    assert_int_equal(j->stragglers[0].rank, 2);
    prism_job_free(j);

    j = noisy_job(1.0);
    assert_int_equal(j->nstragglers, 0);
    prism_job_free(j);
}

/* A rank 19 us "slower" in 60 us of work, in 1.5 ms steps that are mostly
 * the collective's wait: 32 % above the others in every step (the sign
 * test alone names it), but nothing the job would notice (8 equal ranks
 * on 2 cores read like this): no straggler. */
static void test_tiny_excess_no_straggler(void **state)
{
    (void)state;
    size_t nr = 4, ns = 40;
    prism_rank_summary *s = calloc(nr, sizeof *s);
    assert_non_null(s);
    uint64_t seed = 5;
    for (size_t r = 0; r < nr; r++)
        rs_init(&s[r], (int64_t)r);
    for (size_t k = 0; k < ns; k++)
        for (size_t r = 0; r < nr; r++) {
            double w = (r == 2 ? 79e3 : 60e3) * (1 + 0.01 * noise(&seed));
            rs_step(&s[r], k, w + 1.44 * MS, 1.44 * MS);     /* step, of it waiting */
        }
    for (size_t r = 0; r < nr; r++)
        rs_region(&s[r], "forward", PRISM_WAIT_NO, 60e3 * (double)ns);
    prism_job *j = merge(s, nr);
    printf("  rank 2: work median %.1f us, sign z %.2f%s\n", j->ranks[2].work_median_ns / 1e3,
           j->ranks[2].dist_z, j->ranks[2].straggler ? "  straggler" : "");
    assert_true(j->ranks[2].dist_z >= 3.09);
    assert_int_equal(j->nstragglers, 0);
    prism_job_free(j);
}

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_2),
        cmocka_unit_test(test_planted_8),
        cmocka_unit_test(test_planted_32),
        cmocka_unit_test(test_straggler_by_distribution),
        cmocka_unit_test(test_tiny_excess_no_straggler),
        cmocka_unit_test(test_planted_wrapped),
        cmocka_unit_test(test_wait_by_others),
        cmocka_unit_test(test_noise_no_straggler),
        cmocka_unit_test(test_spikes_no_straggler),
        cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
