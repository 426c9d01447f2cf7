/*
 * verdict_workload_test.c - an acceptance suite for PRISM's verdicts, from
 * the outside: simulated programs (tests/workload.h, a speech model's
 * training loop) each planting one cause, written with the format library
 * and read through the real reader and analysis.  For every verdict the
 * test checks the type, the severity, the blamed region and the share
 * against the ground truth the workload knows, prints one line per verdict
 * ("verdict: data_loading HIGH next_minibatch 47.1% (truth 48.0%)") and a
 * final "verdicts right: R/T" line.
 *
 *   1  input-bound: next_minibatch blocked ~48 % of the step while three
 *      prefetch threads are busy on CPU -> data_loading HIGH; the same with
 *      meaningless names (stage_a first in the step) -> data_loading
 *   2  report_stats blocked on a condition variable ~3 of 16 ms mid-step,
 *      prefetch threads idle meanwhile -> off_cpu_wait MEDIUM
 *   3  conformer_attn on CPU ~60 % of the step, two busy loader threads
 *      beside -> hot_operation HIGH at ~60 % (not diluted); again with a
 *      file that does not say which thread steps
 *   4  leaks: 0.5 MB/step over 400 steps (+-2 MB noise) -> memory_leak;
 *      20 MB/step -> memory_leak HIGH; flat noisy memory -> none
 *   5  clean: 19 leaves each < 8 % of the step, on CPU -> nothing MEDIUM+
 *   6  compare: the same program, two seeds -> nothing significant; one
 *      region +20 % -> that region significant and positive, no other
 *
 * Every check of a test is evaluated and printed before the test fails, so
 * one run gives all figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "workload.h"

/* ---- bookkeeping -------------------------------------------------------- */

static unsigned g_right, g_total;      /* verdicts over the whole suite */
static unsigned t_wrong;               /* verdicts wrong in this test   */

static void verdict(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Count and print one verdict: its line, then [ok] or [WRONG]. */
static void verdict(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  ");
    vprintf(fmt, ap);
    va_end(ap);
    printf("  [%s]\n", ok ? "ok" : "WRONG");
    g_total++;
    if (ok)
        g_right++;
    else
        t_wrong++;
}

static void begin_test(void)
{
    t_wrong = 0;
}

static void end_test(void)
{
    assert_int_equal(t_wrong, 0);
}

/* The blamed region's name, "-" when none. */
static const char *bn_region(const prism_analysis *a, const prism_bottleneck *b)
{
    const prism_tree *t = prism_analysis_tree(a);
    if (b->node == PRISM_NO_NODE || b->node >= t->count || !t->nodes[b->node].name)
        return "-";
    return t->nodes[b->node].name;
}

static bool blames(const prism_analysis *a, const prism_bottleneck *b, const char *region)
{
    return region ? !strcmp(bn_region(a, b), region) : b->node == PRISM_NO_NODE;
}

static void print_findings(const char *label, const prism_analysis *a)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    printf("%s: %zu finding%s\n", label, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        if (b[i].type == PRISM_BN_MEMORY_LEAK)
            printf("    %-14s %-6s %-16s %.3f MB/step  | %s\n", prism_bottleneck_name(b[i].type),
                   prism_severity_name(b[i].severity), bn_region(a, &b[i]), b[i].share,
                   b[i].description);
        else
            printf("    %-14s %-6s %-16s %5.1f%%  | %s\n", prism_bottleneck_name(b[i].type),
                   prism_severity_name(b[i].severity), bn_region(a, &b[i]), 100.0 * b[i].share,
                   b[i].description);
    }
}

#define ANY_SEV (-1)

typedef struct expect {
    prism_bottleneck_type type;
    int sev;                    /* prism_severity or ANY_SEV               */
    const char *region;         /* NULL: blames no region (memory leaks)   */
    double truth;               /* share 0..1, or MB/step for a leak       */
    double tol;                 /* absolute, same unit                     */
} expect;

/* The expected verdict: found with its type and region, its severity and
 * its share within tol of the truth. */
static const prism_bottleneck *check_verdict(const prism_analysis *a, const expect *e)
{
    size_t n;
    const prism_bottleneck *all = prism_analysis_bottlenecks(a, &n), *b = NULL, *typed = NULL;
    for (size_t i = 0; i < n && !b; i++) {
        if (all[i].type != e->type)
            continue;
        if (!typed)
            typed = &all[i];
        if (blames(a, &all[i], e->region))
            b = &all[i];
    }
    const bool leak = e->type == PRISM_BN_MEMORY_LEAK;
    const char *want_sev = e->sev == ANY_SEV ? "any" : prism_severity_name((prism_severity)e->sev);
    if (!b) {
        if (typed)
            verdict(false, "verdict: %s on '%s' missing: the %s found blames '%s' (want %s %s, "
                    "truth %.1f%s)", prism_bottleneck_name(e->type),
                    e->region ? e->region : "-", prism_bottleneck_name(e->type),
                    bn_region(a, typed), want_sev, e->region ? e->region : "-",
                    leak ? e->truth : 100.0 * e->truth, leak ? " MB/step" : "%");
        else
            verdict(false, "verdict: %s missing (want %s %s, truth %.1f%s)",
                    prism_bottleneck_name(e->type), want_sev, e->region ? e->region : "-",
                    leak ? e->truth : 100.0 * e->truth, leak ? " MB/step" : "%");
        return NULL;
    }
    bool sev_ok = e->sev == ANY_SEV || (int)b->severity == e->sev;
    bool share_ok = fabs(b->share - e->truth) <= e->tol;
    char extra[128] = "";
    if (!sev_ok)
        snprintf(extra, sizeof extra, " -- severity: want %s", want_sev);
    if (!share_ok) {
        size_t l = strlen(extra);
        if (leak)
            snprintf(extra + l, sizeof extra - l, " -- share off by %.2f MB/step (tolerance %.2f)",
                     b->share - e->truth, e->tol);
        else
            snprintf(extra + l, sizeof extra - l, " -- share off by %+.1f points (tolerance %.0f)",
                     100.0 * (b->share - e->truth), 100.0 * e->tol);
    }
    if (leak)
        verdict(sev_ok && share_ok, "verdict: %s %s %s %.3f MB/step (truth %.3f MB/step)%s",
                prism_bottleneck_name(b->type), prism_severity_name(b->severity),
                bn_region(a, b), b->share, e->truth, extra);
    else
        verdict(sev_ok && share_ok, "verdict: %s %s %s %.1f%% (truth %.1f%%)%s",
                prism_bottleneck_name(b->type), prism_severity_name(b->severity),
                bn_region(a, b), 100.0 * b->share, 100.0 * e->truth, extra);
    return b;
}

/* No finding of `type` (blaming `region` when not NULL) at `min_sev` or
 * above. */
static void check_absent(const prism_analysis *a, prism_bottleneck_type type, const char *region,
                         prism_severity min_sev, const char *why)
{
    size_t n;
    const prism_bottleneck *all = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++) {
        if (all[i].type != type || all[i].severity < min_sev)
            continue;
        if (region && strcmp(bn_region(a, &all[i]), region))
            continue;
        verdict(false, "not %s%s%s (%s): found %s %s %.1f%s", prism_bottleneck_name(type),
                region ? " on " : "", region ? region : "", why,
                prism_severity_name(all[i].severity), bn_region(a, &all[i]),
                type == PRISM_BN_MEMORY_LEAK ? all[i].share : 100.0 * all[i].share,
                type == PRISM_BN_MEMORY_LEAK ? " MB/step" : "%");
        return;
    }
    verdict(true, "not %s%s%s (%s)", prism_bottleneck_name(type), region ? " on " : "",
            region ? region : "", why);
}

/* The planted cause is the only MEDIUM or HIGH finding (NULL want: none
 * at all). */
static void check_only(const prism_analysis *a, const prism_bottleneck *want, const char *what)
{
    size_t n, others = 0;
    const prism_bottleneck *all = prism_analysis_bottlenecks(a, &n);
    char list[512] = "";
    for (size_t i = 0; i < n; i++) {
        if (&all[i] == want || all[i].severity < PRISM_SEV_MEDIUM)
            continue;
        others++;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s %s %s", others > 1 ? "; " : "",
                 prism_bottleneck_name(all[i].type), prism_severity_name(all[i].severity),
                 bn_region(a, &all[i]));
    }
    verdict(others == 0, "no other MEDIUM/HIGH finding than %s%s%s", what, others ? ": " : "",
            list);
}

/* One finding per cause: exactly one finding blames `region`. */
static void check_single_blame(const prism_analysis *a, const char *region)
{
    size_t n, k = 0;
    const prism_bottleneck *all = prism_analysis_bottlenecks(a, &n);
    char list[256] = "";
    for (size_t i = 0; i < n; i++) {
        if (strcmp(bn_region(a, &all[i]), region))
            continue;
        k++;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s %s", k > 1 ? ", " : "",
                 prism_bottleneck_name(all[i].type), prism_severity_name(all[i].severity));
    }
    verdict(k == 1, "one finding blames %s (found %zu: %s)", region, k, list);
}

/* ---- the programs ------------------------------------------------------- */

/* 1: an input-bound speech model: no region around the step; the batch is
 * awaited first, ~8 of ~16.3 ms. */
static const wl_region input_bound[] = {
    { "next_minibatch", -1, 8.00, 0.10, 0.98 },         /* 0 */
    { "featurize",      -1, 1.40, 0.08, 0 },
    { "encoder_stack",  -1, 0.02, 0.00, 0 },            /* 2 */
    { "enc_block_0",     2, 0.90, 0.06, 0 },
    { "enc_block_1",     2, 0.90, 0.06, 0 },
    { "enc_block_2",     2, 0.90, 0.06, 0 },
    { "enc_block_3",     2, 0.90, 0.06, 0 },
    { "enc_block_4",     2, 0.90, 0.06, 0 },
    { "ctc_head",       -1, 1.00, 0.10, 0 },
    { "grad_apply",     -1, 1.10, 0.08, 0 },
    { "report_stats",   -1, 0.25, 0.20, 0 },
};

/* 1b: the same program with names that say nothing. */
static const wl_region input_bound_anon[] = {
    { "stage_a", -1, 8.00, 0.10, 0.98 },
    { "stage_b", -1, 1.40, 0.08, 0 },
    { "stage_c", -1, 0.02, 0.00, 0 },
    { "part_1",   2, 0.90, 0.06, 0 },
    { "part_2",   2, 0.90, 0.06, 0 },
    { "part_3",   2, 0.90, 0.06, 0 },
    { "part_4",   2, 0.90, 0.06, 0 },
    { "part_5",   2, 0.90, 0.06, 0 },
    { "stage_d", -1, 1.00, 0.10, 0 },
    { "stage_e", -1, 1.10, 0.08, 0 },
    { "stage_f", -1, 0.25, 0.20, 0 },
};

/* 2: a step region; report_stats waits ~3 ms on a condition variable in the
 * middle of a ~15.8 ms step. */
static const wl_region cond_wait[] = {
    { "utterance_batch", -1, 0.03, 0.00, 0 },           /* 0 */
    { "next_minibatch",   0, 0.30, 0.15, 0 },
    { "featurize",        0, 1.20, 0.08, 0 },
    { "spec_normalize",   0, 0.90, 0.08, 0 },
    { "encoder_stack",    0, 0.02, 0.00, 0 },           /* 4 */
    { "enc_block_0",      4, 1.00, 0.06, 0 },
    { "enc_block_1",      4, 1.00, 0.06, 0 },
    { "enc_block_2",      4, 1.00, 0.06, 0 },
    { "enc_block_3",      4, 1.00, 0.06, 0 },
    { "enc_block_4",      4, 1.00, 0.06, 0 },
    { "enc_block_5",      4, 1.00, 0.06, 0 },
    { "ctc_head",         0, 1.10, 0.10, 0 },
    { "beam_prune",       0, 0.90, 0.12, 0 },
    { "report_stats",     0, 3.05, 0.15, 0.984 },
    { "grad_clip",        0, 0.70, 0.10, 0 },
    { "grad_apply",       0, 1.20, 0.08, 0 },
    { "lr_schedule",      0, 0.40, 0.20, 0 },
};

/* 3: one compute region at ~60 % of the step. */
static const wl_region hot_op[] = {
    { "train_iter",     -1, 0.03, 0.00, 0 },            /* 0 */
    { "next_minibatch",  0, 0.20, 0.15, 0 },
    { "featurize",       0, 1.00, 0.08, 0 },
    { "encoder_stack",   0, 0.02, 0.00, 0 },            /* 3 */
    { "conformer_attn",  3, 9.80, 0.08, 0 },
    { "conformer_ffn",   3, 1.20, 0.08, 0 },
    { "conv_module",     3, 1.20, 0.08, 0 },
    { "ctc_head",        0, 1.30, 0.10, 0 },
    { "grad_apply",      0, 1.20, 0.08, 0 },
    { "report_stats",    0, 0.30, 0.20, 0 },
};

/* 5 (and 4, 6): work spread over 19 leaves, each < 8 % of a ~13.9 ms step. */
static const wl_region clean[] = {
    { "train_iter",     -1, 0.03, 0.00, 0 },            /* 0 */
    { "next_minibatch",  0, 0.30, 0.15, 0 },
    { "featurize",       0, 0.90, 0.08, 0 },
    { "spec_normalize",  0, 0.70, 0.10, 0 },
    { "encoder_stack",   0, 0.02, 0.00, 0 },            /* 4 */
    { "enc_block_0",     4, 0.80, 0.05, 0 },
    { "enc_block_1",     4, 0.80, 0.10, 0 },
    { "enc_block_2",     4, 0.80, 0.15, 0 },
    { "enc_block_3",     4, 0.80, 0.20, 0 },
    { "enc_block_4",     4, 0.80, 0.05, 0 },
    { "enc_block_5",     4, 0.80, 0.10, 0 },
    { "enc_block_6",     4, 0.80, 0.15, 0 },
    { "enc_block_7",     4, 0.80, 0.20, 0 },
    { "enc_block_8",     4, 0.80, 0.05, 0 },
    { "enc_block_9",     4, 0.80, 0.10, 0 },
    { "ctc_head",        0, 0.90, 0.10, 0 },            /* 15 */
    { "beam_prune",      0, 0.80, 0.12, 0 },
    { "grad_clip",       0, 0.60, 0.10, 0 },
    { "grad_apply",      0, 0.90, 0.08, 0 },
    { "lr_schedule",     0, 0.30, 0.20, 0 },
    { "report_stats",    0, 0.40, 0.15, 0 },
};

#define NREG(r) (sizeof (r) / sizeof (r)[0])

#define BUSY(nm) { (nm), false, 0.90, 3.0 }
#define IDLE(nm) { (nm), true, 0.0, 1.5 }
#define HALF(nm) { (nm), false, 0.40, 2.5 }

static wl_spec spec_of(const char *label, uint64_t seed, unsigned steps, const wl_region *r,
                       size_t nr)
{
    wl_spec s;
    memset(&s, 0, sizeof s);
    s.label = label;
    s.seed = seed;
    s.steps = steps;
    s.trainer = "MainThread";
    s.regions = r;
    s.nregions = nr;
    s.runq = 0.02;
    s.mem_base_mb = 1800;
    s.mem_noise_mb = 2;
    s.slow_region = -1;
    s.slow_factor = 1;
    return s;
}

static void header(const char *label, const wl_spec *sp, const wl_truth *t)
{
    printf("[%s] %u steps, %.2f ms/step, %zu other thread%s, %llu CPU passes (%llu samples) "
           "in %llu flushes\n", label, t->steps, t->step_ns / t->steps / WL_MS, sp->nloaders,
           sp->nloaders == 1 ? "" : "s", (unsigned long long)t->passes,
           (unsigned long long)t->cpu_records, (unsigned long long)t->flushes);
}

#define SHARE_TOL 0.04              /* +-4 percentage points */

/* ---- 1: input-bound ----------------------------------------------------- */

static void run_input_bound(const char *label, const wl_region *r, size_t nr, const char *wait,
                            uint64_t seed)
{
    wl_spec sp = spec_of(label, seed, 300, r, nr);
    sp.loaders[0] = (wl_loader)BUSY("pool-0");
    sp.loaders[1] = (wl_loader)BUSY("pool-1");
    sp.loaders[2] = (wl_loader)BUSY("prefetch#2");
    sp.nloaders = 3;
    wl_truth t;
    loaded l = wl_run(&sp, &t);
    header(label, &sp, &t);
    int w = wl_find(&sp, wait);
    printf("  truth: '%s' blocked %.1f%% of the step (wall %.1f%%); 3 loaders on CPU %.0f%% "
           "of the time\n", wait, 100.0 * wl_off_share(&t, w), 100.0 * wl_share(&t, w),
           100.0 * t.loader_on_ns / t.loader_wall_ns);
    print_findings(label, l.a);
    expect e = { PRISM_BN_DATA_LOADING, PRISM_SEV_HIGH, wait, wl_off_share(&t, w), SHARE_TOL };
    const prism_bottleneck *b = check_verdict(l.a, &e);
    check_absent(l.a, PRISM_BN_OFF_CPU_WAIT, wait, PRISM_SEV_LOW, "the loaders were busy");
    check_single_blame(l.a, wait);
    check_only(l.a, b, "data_loading");
    unload(&l);
}

static void test_input_bound(void **state)
{
    (void)state;
    begin_test();
    run_input_bound("input-bound", input_bound, NREG(input_bound), "next_minibatch", 101);
    end_test();
}

static void test_input_bound_anonymous(void **state)
{
    (void)state;
    begin_test();
    run_input_bound("input-bound, names say nothing", input_bound_anon, NREG(input_bound_anon),
                    "stage_a", 102);
    end_test();
}

/* ---- 2: an off-CPU wait mid-step ---------------------------------------- */

static void test_cond_wait(void **state)
{
    (void)state;
    begin_test();
    const char *label = "condvar wait";
    wl_spec sp = spec_of(label, 201, 300, cond_wait, NREG(cond_wait));
    sp.loaders[0] = (wl_loader)IDLE("prefetch#0");
    sp.loaders[1] = (wl_loader)IDLE("prefetch#1");
    sp.nloaders = 2;
    wl_truth t;
    loaded l = wl_run(&sp, &t);
    header(label, &sp, &t);
    int w = wl_find(&sp, "report_stats");
    printf("  truth: 'report_stats' blocked %.1f%% of the step (wall %.1f%%); loaders on CPU "
           "%.0f%% of the time, right after each step begins\n", 100.0 * wl_off_share(&t, w),
           100.0 * wl_share(&t, w), 100.0 * t.loader_on_ns / t.loader_wall_ns);
    print_findings(label, l.a);
    expect e = { PRISM_BN_OFF_CPU_WAIT, PRISM_SEV_MEDIUM, "report_stats", wl_off_share(&t, w),
                 SHARE_TOL };
    const prism_bottleneck *b = check_verdict(l.a, &e);
    check_absent(l.a, PRISM_BN_DATA_LOADING, "report_stats", PRISM_SEV_LOW,
                 "mid-step, loaders idle");
    check_absent(l.a, PRISM_BN_DATA_LOADING, NULL, PRISM_SEV_MEDIUM, "the input is ready");
    check_single_blame(l.a, "report_stats");
    check_only(l.a, b, "off_cpu_wait");
    unload(&l);
    end_test();
}

/* ---- 3: a hot operation beside busy loaders ------------------------------ */

static void run_hot_op(const char *label, bool no_steps_info, uint64_t seed)
{
    wl_spec sp = spec_of(label, seed, 300, hot_op, NREG(hot_op));
    sp.loaders[0] = (wl_loader)BUSY("ingest");
    sp.loaders[1] = (wl_loader)BUSY("pool-3");
    sp.nloaders = 2;
    sp.no_steps_info = no_steps_info;
    wl_truth t;
    loaded l = wl_run(&sp, &t);
    header(label, &sp, &t);
    int h = wl_find(&sp, "conformer_attn");
    printf("  truth: 'conformer_attn' %.1f%% of the step, on CPU %.1f%% of its time; loader "
           "threads add %.0f%% to the training thread's time\n", 100.0 * wl_share(&t, h),
           100.0 * t.on_ns[h] / t.wall_ns[h], 100.0 * t.loader_on_ns / t.step_ns);
    print_findings(label, l.a);
    expect e = { PRISM_BN_HOT_OPERATION, PRISM_SEV_HIGH, "conformer_attn", wl_share(&t, h),
                 SHARE_TOL };
    const prism_bottleneck *b = check_verdict(l.a, &e);
    check_absent(l.a, PRISM_BN_HOT_OPERATION, "train_iter", PRISM_SEV_LOW,
                 "a parent whose time is its children's");
    check_absent(l.a, PRISM_BN_HOT_OPERATION, "encoder_stack", PRISM_SEV_LOW,
                 "a parent whose time is its children's");
    check_absent(l.a, PRISM_BN_DATA_LOADING, NULL, PRISM_SEV_MEDIUM, "no stall");
    check_absent(l.a, PRISM_BN_OFF_CPU_WAIT, NULL, PRISM_SEV_MEDIUM, "no stall");
    check_single_blame(l.a, "conformer_attn");
    check_only(l.a, b, "hot_operation");
    unload(&l);
}

static void test_hot_op(void **state)
{
    (void)state;
    begin_test();
    run_hot_op("hot op", false, 301);
    end_test();
}

/* The file does not say which thread steps: the reader finds it. */
static void test_hot_op_no_steps_thread(void **state)
{
    (void)state;
    begin_test();
    run_hot_op("hot op, no steps.thread", true, 302);
    end_test();
}

/* ---- 4: memory leaks ------------------------------------------------------ */

static void run_memory(const char *label, uint64_t seed, unsigned steps, double leak, int sev)
{
    wl_spec sp = spec_of(label, seed, steps, clean, NREG(clean));
    sp.loaders[0] = (wl_loader)HALF("pool-0");
    sp.loaders[1] = (wl_loader)HALF("prefetch#1");
    sp.nloaders = 2;
    sp.leak_mb_per_step = leak;
    wl_truth t;
    loaded l = wl_run(&sp, &t);
    header(label, &sp, &t);
    printf("  truth: RSS %.0f MB + %.2f MB/step +-%.0f MB over %u steps (growth %.0f MB, "
           "%.1f%% of the start; least squares of the samples %.3f MB/step)\n", sp.mem_base_mb,
           leak, sp.mem_noise_mb, steps, leak * steps, 100.0 * leak * steps / sp.mem_base_mb,
           t.fit_mb_per_step);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    printf("  analysis fit: %s slope %.3f MB/step r2 %.3f over %zu points, leak=%d\n",
           m->host.have_fit ? "have" : "no", m->host.slope_mb_per_step, m->host.r2,
           m->host.points, (int)m->host.leak);
    print_findings(label, l.a);
    if (leak > 0) {
        expect e = { PRISM_BN_MEMORY_LEAK, sev, NULL, leak, leak * 0.1 };
        const prism_bottleneck *b = check_verdict(l.a, &e);
        check_only(l.a, b, "memory_leak");
    } else {
        check_absent(l.a, PRISM_BN_MEMORY_LEAK, NULL, PRISM_SEV_LOW, "flat memory");
        check_only(l.a, NULL, "(none)");
    }
    unload(&l);
}

static void test_slow_leak(void **state)
{
    (void)state;
    begin_test();
    run_memory("slow leak", 401, 400, 0.5, ANY_SEV);
    end_test();
}

static void test_fast_leak(void **state)
{
    (void)state;
    begin_test();
    run_memory("fast leak", 402, 200, 20.0, PRISM_SEV_HIGH);
    end_test();
}

static void test_flat_memory(void **state)
{
    (void)state;
    begin_test();
    run_memory("flat memory", 403, 400, 0.0, ANY_SEV);
    end_test();
}

/* ---- 5: a clean run ------------------------------------------------------- */

static void test_clean(void **state)
{
    (void)state;
    begin_test();
    const char *label = "clean";
    wl_spec sp = spec_of(label, 501, 300, clean, NREG(clean));
    sp.loaders[0] = (wl_loader)HALF("pool-0");
    sp.loaders[1] = (wl_loader)HALF("prefetch#1");
    sp.nloaders = 2;
    wl_truth t;
    loaded l = wl_run(&sp, &t);
    header(label, &sp, &t);
    double max = 0;
    int imax = 0, leaves = 0;
    for (size_t i = 0; i < sp.nregions; i++) {
        bool parent = false;
        for (size_t j = 0; j < sp.nregions; j++)
            parent |= sp.regions[j].parent == (int)i;
        if (parent)
            continue;
        leaves++;
        if (wl_share(&t, (int)i) > max) {
            max = wl_share(&t, (int)i);
            imax = (int)i;
        }
    }
    printf("  truth: %d leaves, the largest '%s' %.1f%% of the step, all on CPU\n", leaves,
           sp.regions[imax].name, 100.0 * max);
    assert_true(leaves >= 12 && max < 0.08);                /* the workload itself */
    print_findings(label, l.a);
    check_only(l.a, NULL, "(none)");
    unload(&l);
    end_test();
}

/* ---- 6: compare ----------------------------------------------------------- */

static const prism_delta *delta_named(const prism_compare *c, const char *name)
{
    for (size_t i = 0; i < c->count; i++)
        if (!strcmp(c->deltas[i].name, name) && c->deltas[i].base_node != PRISM_NO_NODE &&
            c->deltas[i].new_node != PRISM_NO_NODE)
            return &c->deltas[i];
    return NULL;
}

static loaded compare_run(const char *label, uint64_t seed, int slow, wl_truth *t)
{
    wl_spec sp = spec_of(label, seed, 200, clean, NREG(clean));
    sp.loaders[0] = (wl_loader)HALF("pool-0");
    sp.loaders[1] = (wl_loader)HALF("prefetch#1");
    sp.nloaders = 2;
    if (slow >= 0) {
        sp.slow_region = slow;
        sp.slow_factor = 1.2;
    }
    loaded l = wl_run(&sp, t);
    header(label, &sp, t);
    return l;
}

static void test_compare(void **state)
{
    (void)state;
    begin_test();
    wl_spec ref = spec_of("", 0, 0, clean, NREG(clean));
    const int slow = wl_find(&ref, "ctc_head");
    wl_truth tb, ts, tn;
    loaded base = compare_run("compare base", 601, -1, &tb);
    loaded same = compare_run("compare same program, other seed", 602, -1, &ts);
    loaded slower = compare_run("compare ctc_head +20%", 603, slow, &tn);

    /* the same program twice */
    prism_compare *c = prism_compare_new(base.a, same.a);
    assert_non_null(c);
    size_t sig = 0;
    char list[512] = "";
    for (size_t i = 0; i < c->count; i++) {
        if (!c->deltas[i].significant)
            continue;
        sig++;
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s %+.1f%% p=%.2g", sig > 1 ? "; " : "",
                 c->deltas[i].path, c->deltas[i].delta_pct, c->deltas[i].p_value);
    }
    printf("compare, same program: %zu paths\n", c->count);
    verdict(sig == 0, "verdict: same program, seeds 601/602: %zu of %zu deltas significant%s%s",
            sig, c->count, sig ? ": " : "", list);
    prism_compare_free(c);

    /* one region 20 % slower */
    c = prism_compare_new(base.a, slower.a);
    assert_non_null(c);
    double truth_pct = 100.0 * (tn.wall_ns[slow] - tb.wall_ns[slow]) / tb.wall_ns[slow];
    printf("compare, ctc_head x1.2: %zu paths; truth: ctc_head %+.1f%% in total "
           "(%.1f%% -> %.1f%% of the step)\n", c->count, truth_pct, 100.0 * wl_share(&tb, slow),
           100.0 * wl_share(&tn, slow));
    const prism_delta *d = delta_named(c, "ctc_head");
    if (!d) {
        verdict(false, "verdict: compare ctc_head: no delta on both sides");
    } else {
        bool ok = d->significant && d->delta_ns > 0 && fabs(d->delta_pct - truth_pct) < 1.0;
        verdict(ok, "verdict: compare %s %+.1f%% %s p=%.2g (truth %+.1f%%)", d->path,
                d->delta_pct, d->significant ? "significant" : "NOT significant", d->p_value,
                truth_pct);
    }
    /* no other region; the slowed region's ancestors contain its change */
    sig = 0;
    list[0] = '\0';
    for (size_t i = 0; i < c->count; i++) {
        const prism_delta *x = &c->deltas[i];
        if (!x->significant || !strcmp(x->name, "ctc_head"))
            continue;
        int r = wl_find(&ref, x->name);
        if (r >= 0 && wl_is_ancestor(&ref, r, slow))
            continue;
        sig++;
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s %+.1f%% p=%.2g", sig > 1 ? "; " : "",
                 x->path, x->delta_pct, x->p_value);
    }
    verdict(sig == 0, "verdict: compare ctc_head +20%%: %zu other region%s flagged%s%s", sig,
            sig == 1 ? "" : "s", sig ? ": " : "", list);
    prism_compare_free(c);
    unload(&base);
    unload(&same);
    unload(&slower);
    end_test();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_input_bound),
        cmocka_unit_test(test_input_bound_anonymous),
        cmocka_unit_test(test_cond_wait),
        cmocka_unit_test(test_hot_op),
        cmocka_unit_test(test_hot_op_no_steps_thread),
        cmocka_unit_test(test_slow_leak),
        cmocka_unit_test(test_fast_leak),
        cmocka_unit_test(test_flat_memory),
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_compare),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    printf("verdicts right: %u/%u\n", g_right, g_total);
    fflush(stdout);
    return rc;
}
