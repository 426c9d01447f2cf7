/*
 * job_map_test.c - the job view's pure parts (tui/job_map.c): the shade of
 * a cell against the median cell, steps binned into columns (every step in
 * exactly one column, for every width), the metric chosen by default (work
 * once a rank waited), the cell a binned column shows (its largest), and
 * the Table's orders.  The job is built by hand: only the fields the view
 * reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tui/job_view.h"

/* ---- shades ---- */

static void test_levels(void **state)
{
    (void)state;
    assert_int_equal(jv_level(NAN, 10), -1);
    assert_int_equal(jv_level(0, 10), 0);
    assert_int_equal(jv_level(7.4, 10), 0);
    assert_int_equal(jv_level(7.5, 10), 1);
    assert_int_equal(jv_level(10, 10), 1);
    assert_int_equal(jv_level(11, 10), 2);
    assert_int_equal(jv_level(12.5, 10), 3);
    assert_int_equal(jv_level(14.9, 10), 3);
    assert_int_equal(jv_level(15, 10), 4);
    assert_int_equal(jv_level(1e12, 10), 4);
    /* no scale (every cell 0, or none): nothing is hot */
    assert_int_equal(jv_level(5, 0), 1);
    assert_int_equal(jv_level(0, 0), 0);
    assert_int_equal(jv_level(5, NAN), 1);
}

static void test_shades(void **state)
{
    (void)state;
    const char *ascii = " .:*#";
    for (int lv = 0; lv <= 4; lv++) {
        char want[2] = { ascii[lv], 0 };
        assert_string_equal(jv_shade(lv, false), want);
        assert_true(lv == 0 ? !strcmp(jv_shade(lv, true), " ") : strlen(jv_shade(lv, true)) == 3);
    }
    assert_string_equal(jv_shade(4, true), "\u2588");
    assert_string_equal(jv_shade(-1, true), "-");
    assert_string_equal(jv_shade(-1, false), "-");
}

/* ---- bins ---- */

static void test_bins(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 70; n++)
        for (size_t ncol = 1; ncol <= n; ncol++) {
            assert_int_equal(jv_bin_first(n, ncol, 0), 0);
            assert_int_equal(jv_bin_first(n, ncol, ncol), n);
            for (size_t c = 0; c < ncol; c++)    /* contiguous, none empty */
                assert_true(jv_bin_first(n, ncol, c) < jv_bin_first(n, ncol, c + 1));
            for (size_t s = 0; s < n; s++) {
                size_t c = jv_bin_of(n, ncol, s);
                assert_true(c < ncol);
                assert_true(jv_bin_first(n, ncol, c) <= s);
                assert_true(s < jv_bin_first(n, ncol, c + 1));
            }
        }
    assert_int_equal(jv_bin_of(0, 0, 3), 0);
    assert_int_equal(jv_bin_of(10, 5, 99), 4);  /* past the end: the last */
}

static void test_median(void **state)
{
    (void)state;
    double a[] = { 5, NAN, 1, 3 };
    assert_true(jv_median(a, 4) == 3);
    double b[] = { 4, 1, NAN, 3, 2 };
    assert_true(jv_median(b, 5) == 2.5);
    double c[] = { NAN, NAN };
    assert_true(isnan(jv_median(c, 2)));
    assert_true(isnan(jv_median(c, 0)));
}

/* ---- a job by hand ---- */

enum { NR = 4, NS = 6 };

typedef struct fixture {
    prism_job job;
    prism_job_rank ranks[NR];
    double step[NR * NS], work[NR * NS];
    size_t row[NR + 1];                 /* the cells that exist, from step/work */
    prism_job_cell cell[NR * NS];
    uint64_t index[NS];
    prism_straggler strag;
    jv v;
} fixture;

/* Rank 2 works 3x as long in every step; under a collective every rank's
 * step lasts as long as the slowest one's (wait = step - work); rank 3 lacks
 * step 5.  collective false: no waiting, steps are the work. */
static fixture *make(bool collective)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    for (size_t s = 0; s < NS; s++)
        f->index[s] = 10 + s;
    for (size_t r = 0; r < NR; r++) {
        f->ranks[r].id = (int64_t)r;
        f->ranks[r].work_median_ns = r == 2 ? 30 : 10 + (double)r / 10;
        f->ranks[r].excess_median_ns = r == 2 ? 20 : r == 1 ? NAN : -(double)r;
        for (size_t s = 0; s < NS; s++) {
            double w = (r == 2 ? 30 : 10) + (s == 4 ? 1 : 0) * (double)r;
            f->work[r * NS + s] = w;
            f->step[r * NS + s] = collective ? 34 : w;
        }
    }
    f->step[3 * NS + 5] = f->work[3 * NS + 5] = NAN;
    size_t nc = 0;
    for (size_t r = 0; r < NR; r++) {
        f->row[r] = nc;
        for (size_t s = 0; s < NS; s++)
            if (!isnan(f->step[r * NS + s]))
                f->cell[nc++] = (prism_job_cell){ (uint32_t)s, f->step[r * NS + s],
                                                  f->work[r * NS + s] };
    }
    f->row[NR] = nc;
    f->ranks[2].straggler = true;
    f->strag.index = 2;
    f->strag.rank = 2;
    f->job = (prism_job){ .ranks = f->ranks, .nranks = NR, .step_index = f->index, .nsteps = NS,
                          .row = f->row, .cell = f->cell, .ncells = nc, .median_rank = 0,
                          .stragglers = &f->strag, .nstragglers = 1 };
    f->v.job = &f->job;
    assert_true(jv_prepare(&f->v));
    return f;
}

static void unmake(fixture *f)
{
    free(f->v.order);
    free(f);
}

static void test_default_metric(void **state)
{
    (void)state;
    fixture *f = make(true);
    assert_true(f->v.work);             /* ranks waited: work shows the slow one */
    assert_true(f->v.median[0] == 34);
    assert_true(f->v.median[1] == 10);
    assert_int_equal(f->v.rank, 2);     /* the straggler is selected first */
    assert_int_equal(jv_level(jv_cell(&f->v, 2, 0), f->v.median[1]), 4);
    assert_int_equal(jv_level(jv_cell(&f->v, 0, 0), f->v.median[1]), 1);
    assert_int_equal(jv_level(jv_cell(&f->v, 3, 5), f->v.median[1]), -1);
    f->v.work = false;                  /* w: step times, all alike */
    assert_int_equal(jv_level(jv_cell(&f->v, 2, 0), f->v.median[0]), 1);
    unmake(f);
    f = make(false);
    assert_false(f->v.work);
    unmake(f);
}

static void test_shown_step(void **state)
{
    (void)state;
    fixture *f = make(false);
    /* 6 steps in 3 columns: steps 4 and 5 share the last; rank 3's step 4
     * is its larger one (step 5 absent) */
    assert_int_equal(jv_shown_step(&f->v, 3, 5, 3), 4);
    assert_int_equal(jv_shown_step(&f->v, 3, 4, 3), 4);
    assert_int_equal(jv_shown_step(&f->v, 1, 5, 3), 4);
    assert_int_equal(jv_shown_step(&f->v, 1, 5, 6), 5);    /* a column each */
    assert_int_equal(jv_shown_step(&f->v, 1, 5, 0), 5);
    unmake(f);
}

static void test_sort(void **state)
{
    (void)state;
    fixture *f = make(true);
    for (size_t r = 0; r < NR; r++)
        assert_int_equal(f->v.order[r], r);
    f->v.sort = JV_SORT_EXCESS;         /* descending, absent (NAN) last */
    jv_sort(&f->v);
    size_t want[NR] = { 2, 0, 3, 1 };
    for (size_t r = 0; r < NR; r++)
        assert_int_equal(f->v.order[r], want[r]);
    f->v.sort = JV_SORT_WORK;
    jv_sort(&f->v);
    size_t want2[NR] = { 2, 3, 1, 0 };
    for (size_t r = 0; r < NR; r++)
        assert_int_equal(f->v.order[r], want2[r]);
    f->v.sort = JV_SORT_RANK;
    jv_sort(&f->v);
    for (size_t r = 0; r < NR; r++)
        assert_int_equal(f->v.order[r], r);
    char buf[24];
    assert_string_equal(jv_rank_name(&f->v, 3, buf, sizeof buf), "3");
    unmake(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels),       cmocka_unit_test(test_shades),
        cmocka_unit_test(test_bins),         cmocka_unit_test(test_median),
        cmocka_unit_test(test_default_metric), cmocka_unit_test(test_shown_step),
        cmocka_unit_test(test_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
