/*
 * prism/compare.h - two analyses against each other (prism_compare: the
 * call paths matched by their names, each delta with its noise and
 * significance), the regression gate of CI (prism_gate: a run against one
 * or more baselines), and the statistical tests they use.  Included by
 * prism/analysis.h, which it builds on.
 */
#ifndef PRISM_COMPARE_H
#define PRISM_COMPARE_H

#include "prism/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- compare ---- */

typedef struct prism_delta {
    const char *name;          /* leaf name                                     */
    char path[256];            /* "step/forward/layer.0"                        */
    uint64_t path_hash;
    uint32_t base_node, new_node;   /* PRISM_NO_NODE when absent on that side    */
    double base_ns, new_ns;    /* totals                                        */
    double delta_ns, delta_pct;     /* new - base; % of base (0 when new)        */
    double speedup;            /* base / new (0 when absent)                    */
    /* per step, over the sampled steps in which the path ran (absent steps
     * are no samples; see prism_analysis_node_step_samples) */
    double base_median_ns, new_median_ns;   /* per-step medians; 0 when absent */
    uint64_t base_steps, new_steps;         /* steps in which it ran            */
    double median_pct;         /* new median vs the base median scaled by the
                                  run factor (prism_compare.run_factor when
                                  whole_run_shift, else 1), %; what the verdict
                                  tests; 0 unless both medians exist           */
    /* share of the step: time inside sampled steps / total duration of the
     * sampled steps (thread time: a path on several threads can exceed 1);
     * without steps, total / the profile's total */
    double base_share, new_share;            /* fractions; 0 when absent       */
    double share_delta;        /* new_share - base_share, percentage points      */
    double p_value;            /* Mann-Whitney U test (two-sided) of the per-step
                                  samples, the base side scaled by the run
                                  factor; <0: n/a (under 3 samples a side)     */
    bool significant;          /* p < 0.01, |median_pct| >= 3 % and the median's
                                  change >= 0.5 % of the base median step (both
                                  scaled by the run factor after a shift); never
                                  a speed-up when the raw median and the raw
                                  per-step mean both rose (nor a slow-down when
                                  both fell)                                   */
    double raw_median_pct;     /* new median vs base median, no run factor, %;
                                  0 unless both medians exist                  */
    double base_mean_ns, new_mean_ns;   /* per-step means (steps it ran in)    */
    /* Own time: a path whose calls last 1 ms or more on average, with CPU
     * samples covering at least half of its time on both sides, has its
     * own time per step, the per-step mean less its run-queue share
     * (base_runq / new_runq).  Then (own) a change is significant only
     * when its own time moved the same way by at least 3 % and by a quarter
     * of the change of its run-queue share (own_pct): a region slower only
     * because the machine was busier (it waited for a CPU) is not called
     * slower.  Shorter calls keep the wall-time verdict: preemption seldom
     * hits one of them, so their medians hardly move with the load. */
    bool own;
    double base_runq, new_runq;        /* run-queue share of its time; < 0: n/a */
    double own_pct;            /* own time per step, new vs base, %; 0 unless own */
    /* The verdict on wall time alone (what a stopwatch says): a region
     * raw_significant but not significant changed its wall time, not its
     * own time (it waited for a CPU). */
    bool raw_significant;
    /* prism.torch folded this module region into its parent in one run
     * only (INFO torch.modules.folded_names: adaptive module regions):
     * there it holds the measured steps alone, so its figures are not
     * comparable; it is never significant and casts no vote on the run
     * factor (its parent's total compares as usual).  Also a backward
     * segment holding such a module's backward in one run only (backward
     * regions are segments: the segments of its ancestors up to the first
     * module kept in both runs, else the model's root segment). */
    bool folded_one;
    /* PRISM's own hook cost a step that this region holds in one run only,
     * new less base (ns): module regions below it kept in one run and
     * folded in the other run their hooks there alone, each module call
     * costing that run's measured INFO torch.modules.cost_ns (an upper
     * bound: it counts the backward hooks too).  The verdict tests the
     * new run against the base plus this where this would explain the
     * change (not a change the other way), and the region casts no vote on
     * the run factor; 0 when no module below it was folded in one run. */
    double hook_ns;
} prism_delta;

typedef struct prism_compare {
    prism_delta *deltas;       /* by |delta_ns| descending                      */
    size_t count;
    size_t appeared, vanished;
    /* Whole-run shift: run_factor is the median, over the regions on both
     * sides (in >= 3 steps) holding >= 1 % of the base step and mostly
     * their own work (self >= half their total: a wrapper does not vote
     * with what it wraps) -- run_regions of them, at least 3 -- of their
     * per-step median ratio new / base; 1 when fewer.  A region agrees
     * when it lies within 7 % of the factor (or within 2.5 standard errors
     * of its own median ratio, when noisier) and not so near 1 (no
     * change); it disagrees when near 1 and not the factor; one near both
     * says nothing.  When |run_factor - 1| >= 5 %, 3 regions or more agree
     * (run_agree) and they are at least 2/3 of those that agree or
     * disagree, the whole run moved (the machine, clocks or contention):
     * whole_run_shift, and every region is tested against the run factor
     * instead of against no change. */
    double run_factor;
    bool whole_run_shift;
    size_t run_regions, run_agree;
    double step_ratio;         /* median step new / base; 0 without steps      */
    /* Load: each side's run-queue share, the time its training thread
     * (every thread when none is known) was runnable but waiting for a CPU,
     * of its time covered by CPU samples; < 0 without CPU samples.
     * load_differs: both known and 10 points or more apart (one run shared
     * the cores more than the other: a run-wide factor may be the load). */
    double base_runq_share, new_runq_share;
    bool load_differs;
    size_t own_regions;        /* deltas checked on own time (prism_delta.own) */
    /* bottlenecks on one side only: the two sides' findings are paired by
     * type and path, then by type alone (a finding that moved to another
     * region is neither new nor gone), so no type is both new and gone */
    const prism_bottleneck **bn_new;
    size_t nbn_new;
    const prism_bottleneck **bn_gone;
    size_t nbn_gone;
} prism_compare;

/* Compare two refreshed analyses.  The result borrows from both; free it
 * with prism_compare_free before freeing them.  NULL on allocation failure. */
PRISM_API prism_compare *prism_compare_new(const prism_analysis *base, const prism_analysis *cur);
PRISM_API void prism_compare_free(prism_compare *c);

/* ---- the regression gate ----
 *
 * Is a new run slower than its baselines beyond noise and beyond a limit?
 * The new run is compared with each baseline (prism_compare_new: the
 * whole-run factor, own time under load).  An item (the step, or a call
 * path on both sides) has, per baseline, its change: what its per-step
 * median (after the run factor), its own time and its lower quartile
 * agree on (analysis/gate.c says why), and whether it is significantly
 * slower: it moved by 0.5 % of the step or more, and its per-step times
 * are above the baseline's (p < 0.01) and above the baseline's times one
 * plus the limit (one-sided p < 0.05): by Welch's test on own time (the
 * times scaled by one less the run-queue share) for a path with own time,
 * by the rank test on wall time for any other.  With two baselines or more, the same is done for
 * every pair of baselines: an item's noise is the largest change between
 * two runs of the same code, as a slowdown either way (one run at 0.8 of
 * the other: 25 %).  An item regresses when the median of its changes
 * over the baselines exceeds its limit (the larger of max_slowdown_pct
 * and its noise) and it is significantly slower against at least half of
 * the baselines.
 *
 * The step: its durations by the rank test, the base scaled by the run
 * factor when the whole run shifted; its change that of its own time (the
 * mean duration less the training thread's run-queue share) where the CPU
 * samples give that share on both sides, else of its median (and then the
 * rank test against the limit too).  A whole-run shift (every
 * region alike: the machine, or a change that slows everything) does not
 * fail the gate unless fail_on_shift, when the run factor's slowdown
 * beyond the limit fails.
 */
#define PRISM_GATE_DEFAULT_PCT 10.0

typedef struct prism_gate_opts {
    double max_slowdown_pct;   /* <= 0: PRISM_GATE_DEFAULT_PCT                  */
    bool fail_on_shift;
} prism_gate_opts;

typedef struct prism_gate_item {
    char path[256];            /* the call path; "" for the step                */
    uint64_t path_hash;        /* prism_delta.path_hash; 0 for the step         */
    bool is_step;
    size_t compared;           /* baselines it was compared with               */
    size_t slower;             /* ... against which it is significantly slower,
                                  beyond the limit too                         */
    double change_pct;         /* median over those baselines of its change, %  */
    double noise_pct;          /* largest change between two baselines, either
                                  way, %; 0 with fewer than two                */
    double limit_pct;          /* max(max_slowdown_pct, noise_pct)             */
    double p_value;            /* median of the rank tests' p; < 0: n/a         */
    double base_ns, new_ns;    /* per-step medians (the base: the median over
                                  the baselines)                               */
    double share;              /* of the new run's step (0 for the step)       */
    bool own;                  /* judged on own time against some baseline     */
    bool regressed;
} prism_gate_item;

typedef struct prism_gate {
    bool regressed;            /* an item regressed, or the shift failed       */
    double max_slowdown_pct;
    size_t baselines;
    /* the step first, then every call path on both sides of some
     * comparison: regressed ones first, then by change, largest first */
    prism_gate_item *items;
    size_t count;
    size_t failed;             /* items regressed                              */
    double run_factor;         /* the median over the baselines (1: none)      */
    bool whole_run_shift;      /* against more than half of the baselines     */
    double shift_noise_pct;    /* largest run shift between two baselines, %   */
    bool shift_failed;         /* fail_on_shift and the shift beyond its limit */
    size_t appeared;           /* paths only in the new run (every baseline)   */
    double load_base, load_new;/* run-queue shares (medians; < 0: unknown)     */
} prism_gate;

/* The gate over nbase >= 1 refreshed baselines and the new run.  Every
 * analysis needs steps: NULL and msg (cap bytes, may be NULL) saying which
 * has none ("baseline 2 has no steps: ...").  NULL with msg "" on
 * allocation failure.  The result owns its items; free it with
 * prism_gate_free. */
PRISM_API prism_gate *prism_gate_new(const prism_analysis *const *base, size_t nbase,
                                     const prism_analysis *cur, const prism_gate_opts *o,
                                     char *msg, size_t cap);
PRISM_API void prism_gate_free(prism_gate *g);

/* Mann-Whitney U test (Wilcoxon rank-sum): does one sample tend to hold
 * larger values than the other?  Exact for samples without ties and
 * na * nb <= 2500, else the normal approximation with the tie correction
 * and the continuity correction (as scipy.stats.mannwhitneyu). */
typedef struct prism_rank_test {
    double u;                  /* U of a: pairs a_i > b_j, a tie counting 1/2    */
    double z;                  /* normal approximation, > 0 when a tends larger;
                                  0 when exact                                  */
    double p;                  /* two-sided; -1 when a side is empty, a value is
                                  NaN, or on allocation failure                 */
    bool exact;
} prism_rank_test;
PRISM_API prism_rank_test prism_mann_whitney(const double *a, size_t na, const double *b, size_t nb);
PRISM_API double prism_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);

/* Welch's t-test: two-sided p-value of equal means; -1 when n < 3 on a side. */
PRISM_API double prism_welch_p(const double *a, size_t na, const double *b, size_t nb);
/* The same from each side's count, mean and sample variance. */
PRISM_API double prism_welch_p_moments(double na, double ma, double va, double nb, double mb, double vb);

#ifdef __cplusplus
}
#endif
#endif
