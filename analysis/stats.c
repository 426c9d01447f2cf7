/*
 * stats.c - the statistics behind the verdicts: the Mann-Whitney U test
 * for compare, Welch's two-sample t-test, and the names of the bottleneck
 * enums (the leak fit lives in leak.c).
 *
 * The t-test needs the CDF of Student's t distribution.  With
 * x = df / (df + t^2) the two-sided tail probability is the regularized
 * incomplete beta function I_x(df/2, 1/2), evaluated here from its
 * continued fraction with the modified Lentz algorithm.
 *
 * Compare's verdicts use the Mann-Whitney U test instead (a rank test:
 * scheduler noise puts long tails on per-step times, which inflate the
 * variance behind a t-test but move ranks little): exact for small samples
 * without ties, else the normal approximation with the tie and continuity
 * corrections.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "prism/analysis.h"
#include "internal.h"

/* ---- means ---------------------------------------------------------- */

bool an_stats_all_equal(const double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[0])
            return false;
    return true;
}

/* Mean by two passes' first pass; exact for a constant series. */
double an_stats_mean(const double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    if (an_stats_all_equal(v, n))
        return v[0];
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
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
    *mean = an_stats_mean(v, n);
    double ss = 0.0;
    if (!an_stats_all_equal(v, n))
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

/* ---- Mann-Whitney U test ------------------------------------------- */

/* Exact when there are no ties and na * nb is at most this (50 x 50); the
 * exact tail costs about min(na, nb) * na * nb / 2 additions. */
#define MWU_EXACT_PAIRS 2500.0

typedef struct ranked {
    double v;
    int side;                   /* 0: a, 1: b */
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    double a = ((const ranked *)x)->v, b = ((const ranked *)y)->v;
    return a < b ? -1 : a > b;
}

/*
 * P(U <= u) under the null for samples of m and n values without ties.
 * The number of arrangements with U = k is the coefficient of q^k in the
 * Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i):
 * multiplying by (1 - q^e) is c[k] -= c[k-e] (k descending), dividing by
 * (1 - q^i) is c[k] += c[k-i] (k ascending).  Both read lower indices only,
 * so the array stops at u, and its low coefficients, small integers, are
 * exact: the far tail keeps its precision.  -1 on allocation failure.
 */
static double mwu_exact_cdf(size_t m, size_t n, size_t u)
{
    double *c = calloc(u + 1, sizeof *c);
    if (!c)
        return -1.0;
    c[0] = 1.0;
    for (size_t i = 1; i <= m; i++) {
        size_t e = n + i;
        for (size_t k = u; k >= e && k <= u; k--)
            c[k] -= c[k - e];
        for (size_t k = i; k <= u; k++)
            c[k] += c[k - i];
    }
    double sum = 0.0, total = 1.0;
    for (size_t k = 0; k <= u; k++)
        sum += c[k];
    for (size_t i = 1; i <= m; i++)         /* C(m+n, m) */
        total = total * (double)(n + i) / (double)i;
    free(c);
    return sum / total;
}

prism_rank_test prism_mann_whitney(const double *a, size_t na, const double *b, size_t nb)
{
    prism_rank_test r = { .p = -1.0 };
    if (!a || !b || !na || !nb || na > SIZE_MAX / 2 / sizeof(ranked) ||
        nb > SIZE_MAX / 2 / sizeof(ranked))
        return r;
    size_t n = na + nb;
    ranked *v = malloc(n * sizeof *v);
    if (!v)
        return r;
    for (size_t i = 0; i < n; i++) {
        v[i].v = i < na ? a[i] : b[i - na];
        v[i].side = i >= na;
        if (isnan(v[i].v)) {
            free(v);
            return r;
        }
    }
    pb_qsort(v, n, sizeof *v, cmp_ranked);
    /* midranks: a run of t equal values at ranks i+1..i+t shares their mean */
    double rank_a = 0.0, ties = 0.0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && v[j].v == v[i].v; j++)
            ;
        double t = (double)(j - i), mid = (double)(i + j + 1) / 2.0;
        for (size_t k = i; k < j; k++)
            if (!v[k].side)
                rank_a += mid;
        ties += t * t * t - t;
    }
    free(v);
    double m1 = (double)na, m2 = (double)nb, N = (double)n;
    r.u = rank_a - m1 * (m1 + 1.0) / 2.0;
    double mu = m1 * m2 / 2.0, d = r.u - mu;
    if (ties == 0.0 && m1 * m2 <= MWU_EXACT_PAIRS) {
        /* the smaller of U and m1 m2 - U: the lower tail, doubled */
        double lo = d < 0 ? r.u : m1 * m2 - r.u;
        double cdf = mwu_exact_cdf(na < nb ? na : nb, na < nb ? nb : na, (size_t)lo);
        if (cdf >= 0.0) {
            r.exact = true;
            r.p = 2.0 * cdf > 1.0 ? 1.0 : 2.0 * cdf;
            return r;
        }
    }
    double var = m1 * m2 / 12.0 * ((N + 1.0) - ties / (N * (N - 1.0)));
    if (!(var > 0.0)) {                     /* every value the same */
        r.p = 1.0;
        return r;
    }
    double z = (fabs(d) - 0.5) / sqrt(var);  /* continuity-corrected */
    if (z < 0.0)
        z = 0.0;
    r.z = d < 0 ? -z : z;
    r.p = erfc(z / sqrt(2.0));
    if (r.p > 1.0)
        r.p = 1.0;
    return r;
}

double prism_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
    return prism_mann_whitney(a, na, b, nb).p;
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
        [PRISM_BN_CPU_CONTENTION] = "cpu_contention",
        [PRISM_BN_SLOW_STEPS] = "slow_steps",
        [PRISM_BN_UNATTRIBUTED] = "unattributed_time",
        [PRISM_BN_COMM_WAIT] = "communication_wait",
        [PRISM_BN_IO_WAIT] = "io_wait",
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
