/*
 * stats.c - the statistics behind the verdicts: a least-squares leak fit
 * (memory against step), Welch's two-sample t-test for compare, and the
 * names of the bottleneck enums.
 *
 * The t-test needs the CDF of Student's t distribution.  With
 * x = df / (df + t^2) the two-sided tail probability is the regularized
 * incomplete beta function I_x(df/2, 1/2), evaluated here from its
 * continued fraction with the modified Lentz algorithm.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include "prism/analysis.h"

#define BYTES_PER_MB 1048576.0
#define LEAK_MIN_POINTS 4
#define LEAK_MIN_R2 0.6

/* ---- leak fit ------------------------------------------------------- */

static bool all_equal(const double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[0])
            return false;
    return true;
}

/* Mean by two passes' first pass; exact for a constant series. */
static double mean_of(const double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    if (all_equal(v, n))
        return v[0];
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

prism_leak prism_leak_fit(const double *x, const double *y, size_t n, double threshold_mb)
{
    prism_leak f = { .points = n };
    if (!x || !y || n == 0)
        return f;
    f.start_mb = y[0] / BYTES_PER_MB;
    f.end_mb = y[n - 1] / BYTES_PER_MB;
    if (n < LEAK_MIN_POINTS || all_equal(x, n))
        return f;

    double mx = mean_of(x, n), my = mean_of(y, n);
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (!(sxx > 0.0) || !isfinite(sxx) || !isfinite(sxy) || !isfinite(syy))
        return f;

    double b = sxy / sxx, a = my - b * mx;
    f.have_fit = true;
    f.slope_mb_per_step = b / BYTES_PER_MB;
    f.start_mb = (a + b * x[0]) / BYTES_PER_MB;
    f.end_mb = (a + b * x[n - 1]) / BYTES_PER_MB;
    /* r^2 = 1 - SSres/SStot = Sxy^2 / (Sxx Syy) for a straight line; a flat
     * series explains nothing and is no leak. */
    if (syy > 0.0 && !all_equal(y, n)) {
        double r2 = (sxy / sxx) * (sxy / syy);
        f.r2 = r2 < 0.0 ? 0.0 : r2 > 1.0 ? 1.0 : r2;
    }
    f.leak = f.slope_mb_per_step > threshold_mb && f.r2 >= LEAK_MIN_R2;
    return f;
}

/* ---- regularized incomplete beta ------------------------------------ */

#define BETA_EPS 1e-15
#define BETA_TINY 1e-300
#define BETA_MAX_TERMS 200000

/*
 * The continued fraction
 *     I_x(a,b) = x^a (1-x)^b / (a B(a,b)) * 1 / (1 + d1 / (1 + d2 / (1 + ...)))
 * with
 *     d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))     m = 0, 1, ...
 *     d(2m)   =  m (b-m) x / ((a+2m-1)(a+2m))           m = 1, 2, ...
 * Returns the denominator T = 1 + d1/(1 + d2/(1 + ...)), evaluated as the
 * fraction b0 + a1/(b1 + a2/(b2 + ...)) with b0 = b_j = 1 and a_j = d_j by
 * the modified Lentz method: f_j = f_{j-1} C_j D_j where C_j = b_j + a_j/C_{j-1}
 * and D_j = 1/(b_j + a_j D_{j-1}); zeros are nudged to a tiny value.
 */
static double beta_fraction(double a, double b, double x)
{
    double f = 1.0, c = 1.0, d = 0.0;
    for (long j = 1; j <= BETA_MAX_TERMS; j++) {
        double m = (double)(j / 2), aj;
        if (j % 2)      /* odd: j = 2m + 1 */
            aj = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        else            /* even: j = 2m */
            aj = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + aj * d;
        if (fabs(d) < BETA_TINY)
            d = BETA_TINY;
        c = 1.0 + aj / c;
        if (fabs(c) < BETA_TINY)
            c = BETA_TINY;
        d = 1.0 / d;
        double delta = c * d;
        f *= delta;
        if (fabs(delta - 1.0) < BETA_EPS)
            break;
    }
    return f;
}

/* I_x(a, b) for a, b > 0, 0 <= x <= 1. */
static double beta_inc(double a, double b, double x)
{
    if (!(x > 0.0))
        return 0.0;
    if (!(x < 1.0))
        return 1.0;
    double ln_front = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    double front = exp(ln_front);
    /* The fraction converges fast for x below the mean a/(a+b) (roughly);
     * above it, use the symmetry I_x(a,b) = 1 - I_{1-x}(b,a). */
    if (x < (a + 1.0) / (a + b + 2.0))
        return front / (a * beta_fraction(a, b, x));
    return 1.0 - front / (b * beta_fraction(b, a, 1.0 - x));
}

/* Two-sided P(|T| >= |t|) for Student's t with df degrees of freedom. */
static double t_two_sided(double t, double df)
{
    if (isnan(t) || !(df > 0.0))
        return -1.0;
    if (isinf(t))
        return 0.0;
    double p = beta_inc(df / 2.0, 0.5, df / (df + t * t));
    return p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
}

/* ---- Welch's t-test ------------------------------------------------- */

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
    *mean = mean_of(v, n);
    double ss = 0.0;
    if (!all_equal(v, n))
        for (size_t i = 0; i < n; i++)
            ss += (v[i] - *mean) * (v[i] - *mean);
    *var = ss / (double)(n - 1);
}

double prism_welch_p(const double *a, size_t na, const double *b, size_t nb)
{
    if (!a || !b || na < 3 || nb < 3)
        return -1.0;
    double ma, va, mb, vb;
    mean_var(a, na, &ma, &va);
    mean_var(b, nb, &mb, &vb);
    return prism_welch_p_moments((double)na, ma, va, (double)nb, mb, vb);
}

double prism_welch_p_moments(double na, double ma, double va, double nb, double mb, double vb)
{
    if (!(na >= 3) || !(nb >= 3))
        return -1.0;
    if (!isfinite(ma) || !isfinite(mb) || !isfinite(va) || !isfinite(vb) || va < 0 || vb < 0)
        return -1.0;
    double u = va / na, w = vb / nb, s = u + w;
    if (!(s > 0.0))
        return ma == mb ? 1.0 : 0.0;
    double t = (ma - mb) / sqrt(s);
    /* Welch-Satterthwaite, scaled by s so tiny variances do not underflow. */
    double ru = u / s, rw = w / s;
    double df = 1.0 / (ru * ru / (na - 1) + rw * rw / (nb - 1));
    return t_two_sided(t, df);
}

/* ---- names ---------------------------------------------------------- */

const char *prism_bottleneck_name(prism_bottleneck_type t)
{
    static const char *const names[PRISM_BN_TYPE_COUNT] = {
        [PRISM_BN_HOT_OPERATION] = "hot_operation",
        [PRISM_BN_MEMORY_LEAK] = "memory_leak",
        [PRISM_BN_CPU_GPU_SYNC] = "cpu_gpu_sync",
        [PRISM_BN_DATA_LOADING] = "data_loading",
        [PRISM_BN_GPU_IDLE] = "gpu_idle",
        [PRISM_BN_LAUNCH_BOUND] = "launch_bound",
        [PRISM_BN_MEMORY_BOUND] = "memory_bound",
        [PRISM_BN_DROPPED_EVENTS] = "dropped_events",
        [PRISM_BN_OFF_CPU_WAIT] = "off_cpu_wait",
    };
    if ((unsigned)t >= PRISM_BN_TYPE_COUNT || !names[t])
        return "unknown";
    return names[t];
}

const char *prism_severity_name(prism_severity s)
{
    switch (s) {
    case PRISM_SEV_LOW: return "LOW";
    case PRISM_SEV_MEDIUM: return "MEDIUM";
    case PRISM_SEV_HIGH: return "HIGH";
    }
    return "unknown";
}
