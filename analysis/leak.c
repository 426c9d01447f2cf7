/*
 * leak.c - is memory leaking?  A least-squares line through memory at step
 * boundaries against the step index, and a verdict from the evidence, not
 * from the slope alone (owner: the leak verdict; series.c feeds it).
 *
 * A slow leak is still a leak: 3 MB/step over 150 steps is 450 MB, and at
 * 2 MB/step a 500-step run loses a gigabyte.  So the verdict weighs
 *
 *   significance  t = slope / its standard error (from the residuals);
 *   fit quality   r2, the share of the variance the line explains;
 *   growth        how much the line rose over the run, in MB and in % of
 *                 where it started;
 *   shape         a leak rises all along: the middle and the last third of
 *                 the points, fitted on their own, still rise at a
 *                 significant rate of at least half the overall slope.  A
 *                 warm-up that plateaus, or a cache filled once (a one-off
 *                 jump), leaves the last third flat (clearly slower than
 *                 that); a jump late in the run leaves the middle third
 *                 flat.
 *
 * Verdicts (prism_leak_verdict), from at least 4 points:
 *   NONE      not rising; or neither fast nor significant (said "the rise
 *             stopped" when the middle and last thirds are flat: a warm-up
 *             too short to weigh in a long run); or the last third flat
 *             (the rise stopped);
 *   GROWING   the middle third flat (rising only late in the run);
 *   LEAK      fast: the slope above the threshold with a good fit (the
 *             reference's knob, memory_leak_threshold_mb: a fast leak
 *             needs no more evidence than that);
 *   GROWING   a noisy fit (r2 low, or a third too noisy to confirm the
 *             rise), too few points to see the shape, a short run (under
 *             100 steps) with a loose fit (r2 < 0.8), too little growth;
 *   LEAK      otherwise: a steady, significant rise that adds up.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/analysis.h"
#include "internal.h"

#define BYTES_PER_MB 1048576.0

/* A line needs two points; its standard error needs a third and the
 * verdict a fourth, so that one odd sample cannot make a trend. */
#define LEAK_MIN_POINTS 4
/* The line explains at least 60 % of the variance: the trend dominates the
 * noise (allocator jitter, a periodic evaluation) rather than hiding in it. */
#define LEAK_MIN_R2 0.6
/* t >= 5: for white noise that is p < 0.001 even at 10 degrees of freedom
 * and p < 1e-6 with hundreds of points.  Set high on purpose: memory read at
 * consecutive steps is correlated (the allocator's state carries over), and
 * correlated residuals make the least-squares standard error optimistic. */
#define LEAK_MIN_T 5.0
/* The shape checks fit thirds of the points, each needing 4 of its own. */
#define LEAK_SHAPE_POINTS 12
/* A third still rises: t >= 3 (a third has a third of the points, so the
 * same trend shows about 5x less significance) and at least half the
 * overall slope (a saturating warm-up's tail creeps, a leak does not slow). */
#define LEAK_THIRD_T 3.0
#define LEAK_THIRD_RATIO 0.5
/* Growth that matters for a slow leak: 64 MB over the run (a few of the
 * caching allocators' segments, more than allocator noise in any process),
 * or 5 % of the starting memory for small programs, as long as that is 16 MB
 * or more (below, heap warm-up, thread stacks and our own buffers). */
#define LEAK_GROWTH_MB 64.0
#define LEAK_GROWTH_PCT 5.0
#define LEAK_GROWTH_MIN_MB 16.0
/* A short run (under 100 steps) shows a slow rise as a leak only when the
 * line fits it well (r2 >= 0.8): over a few dozen steps the allocator and
 * the caches settle in steps and swings that later come back (a user's
 * 50-step AdamW run: r2 0.64, "2.2 GB in 1000 steps"; over 240 steps the
 * same loop had none). */
#define LEAK_SHORT_STEPS 100u
#define LEAK_SHORT_R2 0.8
/* A percentage of a start below 1 MB (GPU memory before the first
 * allocation) means nothing: growth_pct is NAN then. */
#define LEAK_PCT_BASE_MB 1.0
/* The projection's horizon when the caller knows no epoch length. */
#define LEAK_PROJECT_STEPS 1000u

/* A least-squares line through (x[i], y[i]), i < n. */
typedef struct line {
    bool ok;
    double mx, my;              /* means                                    */
    double slope;               /* y per x                                  */
    double se;                  /* standard error of the slope              */
    double t;                   /* slope / se; +-INFINITY when se is 0      */
    double r2;
} line;


static line line_fit(const double *x, const double *y, size_t n)
{
    line l = { .ok = false };
    if (n < 3 || an_stats_all_equal(x, n))
        return l;
    double mx = an_stats_mean(x, n), my = an_stats_mean(y, n);
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (!(sxx > 0.0) || !isfinite(sxx) || !isfinite(sxy) || !isfinite(syy))
        return l;
    l.ok = true;
    l.mx = mx;
    l.my = my;
    l.slope = sxy / sxx;
    /* r^2 = 1 - SSres/SStot = Sxy^2 / (Sxx Syy) for a straight line; a flat
     * series explains nothing. */
    if (syy > 0.0 && !an_stats_all_equal(y, n)) {
        double r2 = (sxy / sxx) * (sxy / syy);
        l.r2 = r2 < 0.0 ? 0.0 : r2 > 1.0 ? 1.0 : r2;
    }
    /* residuals in a second pass: Syy - b Sxy cancels badly when r2 ~ 1 */
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (y[i] - my) - l.slope * (x[i] - mx);
        ss += e * e;
    }
    l.se = isfinite(ss) ? sqrt(ss / (double)(n - 2) / sxx) : INFINITY;
    if (l.se > 0.0)
        l.t = l.slope / l.se;
    else
        l.t = l.slope > 0.0 ? INFINITY : l.slope < 0.0 ? -INFINITY : 0.0;
    return l;
}

/* How a third of the points rises compared with the whole. */
enum { THIRD_UNCLEAR = 0, THIRD_RISES, THIRD_FLAT };

/* RISES: significantly (t >= 3), at half the overall slope or more; FLAT:
 * clearly slower than that (its slope plus two standard errors is still
 * below); UNCLEAR: too noisy to say either. */
static int third_of(const double *x, const double *y, size_t from, size_t to, const line *all,
                    double *slope_mb)
{
    line l = line_fit(x + from, y + from, to - from);
    *slope_mb = l.ok ? l.slope / BYTES_PER_MB : NAN;
    if (!l.ok)
        return THIRD_UNCLEAR;
    double half = LEAK_THIRD_RATIO * all->slope;
    if (l.t >= LEAK_THIRD_T && l.slope >= half)
        return THIRD_RISES;
    return l.slope + 2.0 * l.se < half ? THIRD_FLAT : THIRD_UNCLEAR;
}

static uint64_t to_steps(double d)
{
    if (!(d > 0.0))
        return 0;
    if (d >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)d;
}

static void verdict(prism_leak *f, prism_leak_verdict v, const char *why)
{
    f->verdict = v;
    f->reason = why;
    f->leak = v == PRISM_LEAK_YES;
}

/* The verdict, in the order of the rules in the comment at the top; mid
 * and late are THIRD_* (UNCLEAR without the shape). */
static void judge(prism_leak *f, const line *all, bool shape, int mid, int late,
                  double threshold_mb)
{
    if (!(f->slope_mb_per_step > 0.0)) {
        verdict(f, PRISM_LEAK_NONE, "memory does not rise");
        return;
    }
    bool fast = f->slope_mb_per_step > threshold_mb && f->r2 >= LEAK_MIN_R2;
    if (!fast && !(all->t >= LEAK_MIN_T)) {
        /* a short rise early in a long run (a caching allocator filling its
         * pool in the first steps) is too small overall to be significant:
         * said as what it is when the middle and the end are both flat */
        verdict(f, PRISM_LEAK_NONE, mid == THIRD_FLAT && late == THIRD_FLAT
                                        ? "the rise stopped (warm-up or one-off)"
                                        : "no significant rise");
        return;
    }
    if (late == THIRD_FLAT) {
        verdict(f, PRISM_LEAK_NONE, "the rise stopped (warm-up or one-off)");
        return;
    }
    if (mid == THIRD_FLAT) {
        verdict(f, PRISM_LEAK_GROWING, "rising only late in the run");
        return;
    }
    if (fast) {
        verdict(f, PRISM_LEAK_YES, "fast: slope above the threshold");
        return;
    }
    if (f->r2 < LEAK_MIN_R2 || (shape && (mid != THIRD_RISES || late != THIRD_RISES))) {
        verdict(f, PRISM_LEAK_GROWING, "noisy fit");
        return;
    }
    if (!shape) {
        verdict(f, PRISM_LEAK_GROWING, "too few points to see the shape");
        return;
    }
    if (f->span_steps < LEAK_SHORT_STEPS && f->r2 < LEAK_SHORT_R2) {
        verdict(f, PRISM_LEAK_GROWING, "too short a run to tell a leak from settling");
        return;
    }
    bool grew = f->growth_mb >= LEAK_GROWTH_MB ||
                (f->growth_pct >= LEAK_GROWTH_PCT && f->growth_mb >= LEAK_GROWTH_MIN_MB);
    if (!grew) {
        verdict(f, PRISM_LEAK_GROWING, "too little growth so far");
        return;
    }
    verdict(f, PRISM_LEAK_YES, "steady, significant rise");
}

prism_leak prism_leak_fit(const double *x, const double *y, size_t n, double threshold_mb)
{
    prism_leak f = { .points = n, .growth_pct = NAN, .mid_slope_mb_per_step = NAN,
                     .late_slope_mb_per_step = NAN, .projection_steps = LEAK_PROJECT_STEPS };
    verdict(&f, PRISM_LEAK_NONE, "too few step samples");
    if (!x || !y || n == 0)
        return f;
    f.start_mb = y[0] / BYTES_PER_MB;
    f.end_mb = y[n - 1] / BYTES_PER_MB;
    f.projected_mb = f.end_mb;
    line all = n >= LEAK_MIN_POINTS ? line_fit(x, y, n) : (line){ .ok = false };
    if (!all.ok)
        return f;

    f.have_fit = true;
    f.slope_mb_per_step = all.slope / BYTES_PER_MB;
    f.slope_se_mb = all.se / BYTES_PER_MB;
    f.t = all.t;
    f.r2 = all.r2;
    f.start_mb = (all.my + all.slope * (x[0] - all.mx)) / BYTES_PER_MB;
    f.end_mb = (all.my + all.slope * (x[n - 1] - all.mx)) / BYTES_PER_MB;
    f.growth_mb = f.end_mb - f.start_mb;
    if (f.start_mb >= LEAK_PCT_BASE_MB)
        f.growth_pct = 100.0 * f.growth_mb / f.start_mb;
    f.span_steps = to_steps(x[n - 1] - x[0]);
    f.projected_mb = f.end_mb + f.slope_mb_per_step * (double)f.projection_steps;

    bool shape = n >= LEAK_SHAPE_POINTS;
    int mid = THIRD_UNCLEAR, late = THIRD_UNCLEAR;
    if (shape) {
        size_t lo = n / 3, hi = n - n / 3;
        mid = third_of(x, y, lo, hi, &all, &f.mid_slope_mb_per_step);
        late = third_of(x, y, hi, n, &all, &f.late_slope_mb_per_step);
    }
    judge(&f, &all, shape, mid, late, threshold_mb);
    return f;
}

void prism_leak_project(prism_leak *l, uint64_t steps, bool epoch_end)
{
    if (!l || !steps)
        return;
    l->projection_steps = steps;
    l->projection_epoch = epoch_end;
    l->projected_mb = l->end_mb + (l->have_fit ? l->slope_mb_per_step * (double)steps : 0.0);
}

const char *prism_leak_verdict_name(prism_leak_verdict v)
{
    switch (v) {
    case PRISM_LEAK_NONE: return "none";
    case PRISM_LEAK_GROWING: return "growing";
    case PRISM_LEAK_YES: return "leak";
    }
    return "unknown";
}
