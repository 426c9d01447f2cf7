/*
 * analysis_stats_test.c - the statistics behind the verdicts: the leak fit
 * (slope recovered through noise, flat and noisy series are no leak, too
 * few points give no fit, a hand-computed fit), Welch's t-test against
 * closed forms of Student's t (df = 2 and 4) and reference values computed
 * with arbitrary precision (mpmath's regularized incomplete beta), the
 * Mann-Whitney U test against published examples (scipy, R) and values
 * enumerated independently (exact tails, the normal approximation with
 * ties), and the names of the enums.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "prism/analysis.h"

#define MB 1048576.0

/* Deterministic noise in [-1, 1). */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void series(double *x, double *y, size_t n, double base_mb, double slope_mb,
                   double noise_mb, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)i;
        y[i] = (base_mb + slope_mb * (double)i + noise_mb * noise(&seed)) * MB;
    }
}

static void assert_close(double got, double want, double rel)
{
    double tol = rel * fabs(want) + 1e-300;
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g (rel %.1e)", got, want, rel);
}

/* ---- leak fit ---------------------------------------------------------- */

static void test_leak_recovered(void **state)
{
    (void)state;
    double x[50], y[50];
    series(x, y, 50, 1024.0, 12.5, 2.0, 42);
    prism_leak f = prism_leak_fit(x, y, 50, 10.0);
    assert_true(f.have_fit);
    assert_int_equal(f.points, 50);
    assert_close(f.slope_mb_per_step, 12.5, 0.05);
    assert_true(f.r2 > 0.9 && f.r2 <= 1.0);
    assert_true(f.leak);
    assert_close(f.start_mb, 1024.0, 0.01);
    assert_close(f.end_mb, 1024.0 + 12.5 * 49, 0.01);

    /* below a higher threshold it is no fast leak, but 612 MB of steady,
     * significant growth is a leak all the same (analysis_leak_test.c) */
    f = prism_leak_fit(x, y, 50, 20.0);
    assert_true(f.leak);
    assert_string_equal(f.reason, "steady, significant rise");
}

static void test_leak_by_hand(void **state)
{
    (void)state;
    /* x 0..3, y 0,1,1,2 MB: Sxx = 5, Sxy = 3, Syy = 2 MB^2, so the slope is
     * 0.6 MB/step, the intercept 0.1 MB and r2 = 9 / 10. */
    const double x[] = { 0, 1, 2, 3 }, y[] = { 0, 1 * MB, 1 * MB, 2 * MB };
    prism_leak f = prism_leak_fit(x, y, 4, 0.5);
    assert_true(f.have_fit);
    assert_close(f.slope_mb_per_step, 0.6, 1e-12);
    assert_close(f.r2, 0.9, 1e-12);
    assert_close(f.start_mb, 0.1, 1e-12);
    assert_close(f.end_mb, 1.9, 1e-12);
    assert_true(f.leak);
    assert_false(prism_leak_fit(x, y, 4, 0.6).leak);   /* slope must exceed it */

    /* a perfect line */
    double lx[10], ly[10];
    series(lx, ly, 10, 300.0, 25.0, 0.0, 1);
    f = prism_leak_fit(lx, ly, 10, 10.0);
    assert_close(f.r2, 1.0, 1e-12);
    assert_close(f.slope_mb_per_step, 25.0, 1e-12);
    assert_true(f.leak);
}

static void test_leak_flat(void **state)
{
    (void)state;
    double x[60], y[60];
    series(x, y, 60, 2048.0, 0.0, 0.0, 7);      /* constant */
    prism_leak f = prism_leak_fit(x, y, 60, 10.0);
    assert_true(f.have_fit);
    assert_true(f.slope_mb_per_step == 0.0);
    assert_true(f.r2 == 0.0);
    assert_false(f.leak);
    assert_close(f.start_mb, 2048.0, 1e-12);

    series(x, y, 60, 2048.0, 0.0, 2.0, 9);      /* noise around a constant */
    f = prism_leak_fit(x, y, 60, 10.0);
    assert_true(f.have_fit);
    assert_true(fabs(f.slope_mb_per_step) < 0.5);
    assert_true(f.r2 < 0.6);
    assert_false(f.leak);
    assert_false(prism_leak_fit(x, y, 60, 0.0).leak);  /* even at threshold 0 */

    series(x, y, 60, 4096.0, -15.0, 1.0, 3);    /* memory released: no leak */
    f = prism_leak_fit(x, y, 60, 10.0);
    assert_close(f.slope_mb_per_step, -15.0, 0.05);
    assert_false(f.leak);
}

static void test_leak_bad_fit(void **state)
{
    (void)state;
    /* a rising trend of 12 MB/step drowned in +-600 MB of noise: the slope
     * may pass the threshold, but the fit explains too little */
    double x[50], y[50];
    series(x, y, 50, 5000.0, 12.0, 600.0, 11);
    prism_leak f = prism_leak_fit(x, y, 50, 10.0);
    assert_true(f.have_fit);
    assert_true(f.r2 < 0.6);
    assert_false(f.leak);
}

static void test_leak_too_few(void **state)
{
    (void)state;
    const double x[] = { 0, 1, 2, 3, 4 }, y[] = { 0, 100 * MB, 200 * MB, 300 * MB, 400 * MB };
    prism_leak f = prism_leak_fit(x, y, 3, 10.0);
    assert_false(f.have_fit);
    assert_false(f.leak);
    assert_int_equal(f.points, 3);
    assert_true(prism_leak_fit(x, y, 4, 10.0).leak);

    const double same[] = { 5, 5, 5, 5, 5 };    /* x not spread: no slope */
    f = prism_leak_fit(same, y, 5, 10.0);
    assert_false(f.have_fit);
    assert_false(f.leak);

    f = prism_leak_fit(NULL, NULL, 0, 10.0);
    assert_false(f.have_fit);
    assert_int_equal(f.points, 0);
}

/* ---- Welch's t-test ------------------------------------------------------ */

static void test_welch_identical(void **state)
{
    (void)state;
    const double a[] = { 12.1, 11.8, 12.6, 12.0, 11.9, 12.4 };
    assert_close(prism_welch_p(a, 6, a, 6), 1.0, 1e-15);
    const double c[] = { 7, 7, 7, 7 }, d[] = { 7, 7, 7 }, e[] = { 8, 8, 8 };
    assert_true(prism_welch_p(c, 4, d, 3) == 1.0);      /* no variance, same mean */
    assert_true(prism_welch_p(c, 4, e, 3) == 0.0);      /* no variance, other mean */
}

static void test_welch_too_few(void **state)
{
    (void)state;
    const double a[] = { 1, 2, 3, 4 };
    assert_true(prism_welch_p(a, 2, a, 4) < 0);
    assert_true(prism_welch_p(a, 4, a, 2) < 0);
    assert_true(prism_welch_p(NULL, 4, a, 4) < 0);
    assert_true(prism_welch_p(a, 3, a, 3) >= 0);
}

static void test_welch_closed_forms(void **state)
{
    (void)state;
    /* One side constant: df = n - 1 exactly.  {1,2,3} vs {0,0,0}: t = 2 sqrt 3,
     * df = 2, where P(|T| > t) = 1 - t / sqrt(2 + t^2). */
    const double a2[] = { 1, 2, 3 }, z[] = { 0, 0, 0, 0, 0 };
    double t = 2.0 * sqrt(3.0);
    assert_close(prism_welch_p(a2, 3, z, 3), 1.0 - t / sqrt(2.0 + t * t), 1e-10);
    assert_close(prism_welch_p(z, 3, a2, 3), 1.0 - t / sqrt(2.0 + t * t), 1e-10);

    /* {1..5} vs five zeros: t = 3 / sqrt(0.5), df = 4, where with
     * q = 1 + t^2/4 the CDF is F(t) = 1/2 + (3/8) (t / sqrt q) (1 - t^2 / (12 q)). */
    const double a4[] = { 1, 2, 3, 4, 5 };
    t = 3.0 / sqrt(0.5);
    double q = 1.0 + t * t / 4.0;
    double F = 0.5 + 3.0 / 8.0 * (t / sqrt(q)) * (1.0 - (t * t / 4.0) / (3.0 * q));
    assert_close(prism_welch_p(a4, 5, z, 5), 2.0 * (1.0 - F), 1e-9);
    assert_close(prism_welch_p(a4, 5, z, 5), 0.013235599563682690, 1e-9);
}

static void test_welch_reference(void **state)
{
    (void)state;
    /* Non-integer Welch-Satterthwaite df; references from mpmath (40 digits). */
    const double a[] = { 10.1, 9.8, 10.4, 10.0, 9.9, 10.3 };
    const double b[] = { 10.9, 11.2, 10.6, 11.5, 10.8, 11.0, 11.3 };
    assert_close(prism_welch_p(a, 6, b, 7), 5.6531760922557943e-05, 1e-8);  /* df 10.84 */
    assert_close(prism_welch_p(b, 7, a, 6), 5.6531760922557943e-05, 1e-8);

    const double c[] = { 20.0, 22.5, 19.8, 21.7, 23.1, 20.4, 22.0, 21.1 };
    const double d[] = { 19.2, 24.8, 17.5, 23.9, 26.0, 18.1, 22.6, 25.3, 20.7, 24.4 };
    assert_close(prism_welch_p(c, 8, d, 10), 0.40863454735629711, 1e-9);   /* df 12.08 */

    /* large samples: df 848, the continued fraction far from its start */
    static double e[500], f[400];
    for (int i = 0; i < 500; i++)
        e[i] = 1000.0 + (double)((i * 37) % 101);
    for (int i = 0; i < 400; i++)
        f[i] = 1004.0 + (double)((i * 53) % 103);
    assert_close(prism_welch_p(e, 500, f, 400), 0.022921516416495692, 1e-8);
}

static void test_welch_clearly_different(void **state)
{
    (void)state;
    double a[20], b[20];
    uint64_t s = 5;
    for (int i = 0; i < 20; i++) {
        a[i] = 100.0 + noise(&s);
        b[i] = 110.0 + noise(&s);
    }
    double p = prism_welch_p(a, 20, b, 20);
    assert_true(p >= 0.0 && p < 1e-6);
    /* a shift well inside the noise is not significant */
    for (int i = 0; i < 20; i++)
        b[i] = a[(i + 7) % 20] + 0.01;
    p = prism_welch_p(a, 20, b, 20);
    assert_true(p > 0.5 && p <= 1.0);
}

/* ---- Mann-Whitney U test -------------------------------------------------- */

/* References: scipy.stats.mannwhitneyu's documentation example (exact and
 * asymptotic), R's wilcox.test documentation example (Hollander & Wolfe,
 * exact), and values computed in Python independently of this code (every
 * split enumerated, or the recurrence f(u; m, n) = f(u - n; m - 1, n) +
 * f(u; m, n - 1) in exact integers; the normal approximation by formula). */
static void test_mwu_references(void **state)
{
    (void)state;
    const double males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };
    prism_rank_test r = prism_mann_whitney(males, 5, females, 4);
    assert_true(r.exact);
    assert_close(r.u, 17.0, 0);
    assert_close(r.p, 0.1111111111111111, 1e-12);      /* 14 of C(9,4) = 126 */
    r = prism_mann_whitney(females, 4, males, 5);          /* the other side's U */
    assert_close(r.u, 3.0, 0);
    assert_close(r.p, 0.1111111111111111, 1e-12);

    const double x[] = { 0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46 };
    const double y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };
    r = prism_mann_whitney(x, 10, y, 5);                   /* R: W = 35, p = 0.1272 one-sided */
    assert_close(r.u, 35.0, 0);
    assert_close(r.p, 0.2544122544122544, 1e-12);

    const double a[] = { 10.189, 12.5, 8.137, 11.985, 9.482, 9.477, 13.799, 10.315, 9.914 };
    const double b[] = { 13.459, 14.254, 11.938, 13.176, 10.053, 11.266, 11.124, 9.335 };
    r = prism_mann_whitney(a, 9, b, 8);                    /* all 24310 splits enumerated */
    assert_close(r.u, 24.0, 0);
    assert_close(r.p, 0.2765939942410531, 1e-12);
}

static void test_mwu_exact_far_tail(void **state)
{
    (void)state;
    /* 50 x 50 fully separated: 2 / C(100, 50), far below what a normal
     * approximation gets right */
    double a[60], b[60];
    for (int i = 0; i < 50; i++) {
        a[i] = i;
        b[i] = 50 + i;
    }
    prism_rank_test r = prism_mann_whitney(a, 50, b, 50);
    assert_true(r.exact);
    assert_close(r.u, 0.0, 0);
    assert_close(r.p, 1.9823306042836678e-29, 1e-10);
    /* 40 x 60 interleaved (2400 pairs: still exact) */
    for (int i = 0; i < 60; i++)
        b[i] = i * 0.7 + 9.35;
    r = prism_mann_whitney(a, 40, b, 60);
    assert_true(r.exact);
    assert_close(r.u, 664.0, 0);
    assert_close(r.p, 0.00012243523571273373, 1e-10);
}

static void test_mwu_normal(void **state)
{
    (void)state;
    /* ties force the normal approximation: midranks, the tie correction
     * and the continuity correction */
    const double a[] = { 1, 2, 2, 3, 3, 3, 4, 5 }, b[] = { 3, 4, 4, 5, 5, 6, 7, 7, 8 };
    prism_rank_test r = prism_mann_whitney(a, 8, b, 9);
    assert_false(r.exact);
    assert_close(r.u, 7.5, 0);
    assert_close(r.p, 0.006373133838085877, 1e-10);
    assert_true(r.z < 0);                                  /* a tends smaller */
    /* 128 x 128 separated: beyond the exact limit */
    static double c[128], d[128];
    for (int i = 0; i < 128; i++) {
        c[i] = 1 + i;
        d[i] = 129 + i;
    }
    r = prism_mann_whitney(d, 128, c, 128);
    assert_false(r.exact);
    assert_close(r.u, 128.0 * 128.0, 0);
    assert_true(r.z > 0);
    assert_close(r.p, 1.713745482477828e-43, 1e-8);
}

static void test_mwu_degenerate(void **state)
{
    (void)state;
    const double a[] = { 3, 1, 2, 5, 4 }, k[] = { 7, 7, 7, 7 };
    assert_close(prism_mann_whitney_p(a, 5, a, 5), 1.0, 0);        /* itself */
    assert_close(prism_mann_whitney_p(k, 4, k, 3), 1.0, 0);        /* every value tied */
    assert_true(prism_mann_whitney_p(a, 0, a, 5) < 0);
    assert_true(prism_mann_whitney_p(a, 5, NULL, 5) < 0);
    const double n[] = { 1, NAN, 3 };
    assert_true(prism_mann_whitney_p(a, 5, n, 3) < 0);
    /* one value a side: the only possible two-sided p is 1 */
    assert_close(prism_mann_whitney_p(a, 1, a + 1, 1), 1.0, 0);
    /* a shift much larger than the noise, scipy-sized samples: tiny p */
    double x[200], y[200];
    uint64_t s = 9;
    for (int i = 0; i < 200; i++) {
        x[i] = 100.0 + 5.0 * noise(&s);
        y[i] = 125.0 + 5.0 * noise(&s);
    }
    prism_rank_test r = prism_mann_whitney(x, 200, y, 200);
    assert_true(r.p >= 0 && r.p < 1e-60);
    assert_true(r.z < 0);
}

/* ---- names --------------------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    static const char *const want[PRISM_BN_TYPE_COUNT] = {
        "hot_operation", "memory_leak", "cpu_gpu_sync", "data_loading",
        "gpu_idle", "launch_bound", "memory_bound", "dropped_events", "off_cpu_wait",
        "cpu_contention", "slow_steps", "unattributed_time", "communication_wait",
        "io_wait",
    };
    for (int t = 0; t < PRISM_BN_TYPE_COUNT; t++)
        assert_string_equal(prism_bottleneck_name((prism_bottleneck_type)t), want[t]);
    assert_string_equal(prism_bottleneck_name(PRISM_BN_TYPE_COUNT), "unknown");
    assert_string_equal(prism_severity_name(PRISM_SEV_LOW), "LOW");
    assert_string_equal(prism_severity_name(PRISM_SEV_MEDIUM), "MEDIUM");
    assert_string_equal(prism_severity_name(PRISM_SEV_HIGH), "HIGH");
    assert_string_equal(prism_severity_name((prism_severity)7), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leak_recovered),
        cmocka_unit_test(test_leak_by_hand),
        cmocka_unit_test(test_leak_flat),
        cmocka_unit_test(test_leak_bad_fit),
        cmocka_unit_test(test_leak_too_few),
        cmocka_unit_test(test_welch_identical),
        cmocka_unit_test(test_welch_too_few),
        cmocka_unit_test(test_welch_closed_forms),
        cmocka_unit_test(test_welch_reference),
        cmocka_unit_test(test_welch_clearly_different),
        cmocka_unit_test(test_mwu_references),
        cmocka_unit_test(test_mwu_exact_far_tail),
        cmocka_unit_test(test_mwu_normal),
        cmocka_unit_test(test_mwu_degenerate),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
