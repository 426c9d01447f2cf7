/*
 * job_edge_test.c - merging rank summaries (analysis/job.c, job_cause.c)
 * at the edges: ranks missing steps, unsorted and repeated steps; empty
 * inputs give finite figures; failures kept and freed; hostile region
 * links and long paths; 1024 ranks x 1000 steps merge; names of the wait
 * kinds.  Helpers: job_build.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "job_build.h"

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

/* Ranks whose steps do not overlap (issue 32, item 4: 200 ranks took
 * 1.27 GB as ranks x the union of their steps): the job holds the cells
 * that exist, 200 x 50, not 200 x 10 000, and reads them all back. */
static void test_disjoint_steps(void **state)
{
    (void)state;
    enum { NR = 200, PER = 50 };
    prism_rank_summary *s = calloc(NR, sizeof *s);
    for (size_t r = 0; r < NR; r++) {
        rs_init(&s[r], (int64_t)r);
        for (uint64_t k = 0; k < PER; k++)
            rs_step(&s[r], r * PER + k, (10 + (double)(r % 3)) * MS, 1 * MS);
    }
    prism_job *j = merge(s, NR);
    assert_int_equal(j->nsteps, NR * PER);
    assert_int_equal(j->ncells, NR * PER);
    for (size_t r = 0; r < NR; r += 37) {
        assert_near(prism_job_step(j, r, r * PER + 7), (10 + (double)(r % 3)) * MS, 1);
        assert_near(prism_job_work(j, r, r * PER + 7), (9 + (double)(r % 3)) * MS, 1);
        assert_true(isnan(prism_job_step(j, r, (r + 1) % NR * PER)));
    }
    assert_true(isnan(prism_job_step(j, NR, 0)));          /* no such rank */
    assert_int_equal(j->nstragglers, 0);                   /* no step shared */
    assert_finite_job(j);
    prism_job_free(j);
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
        cmocka_unit_test(test_missing_steps),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_disjoint_steps),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_hostile_regions),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
