/*
 * analysis_leak_test.c - the leak verdict (analysis/leak.c) and the
 * memory_leak rule on it.
 *
 * prism_leak_fit on synthetic series with deterministic noise: slow leaks
 * found by their evidence (0.5 MB/step over 300 steps, 3 MB/step over 150,
 * 2 MB/step over 500: the cases once called "none"), a fast one by its
 * slope, GPU memory rising from zero; flat noisy memory, a one-off jump, a
 * warm-up that plateaus and a saturating curve are no leak; a jump late in
 * the run, a small growth and a short run are "growing", not proven;
 * hostile inputs give no fit.
 *
 * The rule on hand-built profiles read through the real reader and
 * analysis: severity (MEDIUM for a slow leak, HIGH for a fast one or one
 * that projects past 1 GB per 1000 steps), the evidence line, the
 * projection to the end of the epoch, the leak ranked first within its
 * severity, advice for a C program vs a Python one (argv "python3
 * train.py", or torch operator names), and the GPU leak alike.
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
#include "pbuild.h"

#define MB 1048576.0
#define NMAX 600

/* Deterministic noise in [-1, 1). */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

typedef double (*shape_fn)(double i, double a, double b);

static double linear(double i, double slope, double unused)
{
    (void)unused;
    return slope * i;
}

/* +height from step `at` on. */
static double jump(double i, double at, double height)
{
    return i >= at ? height : 0.0;
}

/* rate MB/step for the first `steps` steps, then flat. */
static double ramp(double i, double steps, double rate)
{
    return (i < steps ? i : steps) * rate;
}

/* height (1 - e^(-i/tau)): a cache filling, ever slower. */
static double saturate(double i, double tau, double height)
{
    return height * (1.0 - exp(-i / tau));
}

/* base + shape(i) + noise_mb * U(-1, 1), for i < n, in bytes. */
static prism_leak fit_of(size_t n, double base_mb, shape_fn f, double a, double b, double noise_mb,
                         uint64_t seed, double threshold_mb)
{
    static double x[NMAX], y[NMAX];
    assert_true(n <= NMAX);
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)i;
        y[i] = (base_mb + f((double)i, a, b) + noise_mb * noise(&seed)) * MB;
    }
    return prism_leak_fit(x, y, n, threshold_mb);
}

static void assert_close(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.17g, want %.17g (rel %.1e)", got, want, rel);
}

static void want(const prism_leak *f, prism_leak_verdict v, const char *reason)
{
    if (f->verdict != v || (reason && strcmp(f->reason, reason)))
        fail_msg("verdict %s (%s), want %s (%s): slope %.4f +- %.4f, t %.1f, r2 %.3f, "
                 "growth %.1f MB, mid %.4f, late %.4f", prism_leak_verdict_name(f->verdict),
                 f->reason, prism_leak_verdict_name(v), reason ? reason : "any",
                 f->slope_mb_per_step, f->slope_se_mb, f->t, f->r2, f->growth_mb,
                 f->mid_slope_mb_per_step, f->late_slope_mb_per_step);
    assert_true(f->leak == (v == PRISM_LEAK_YES));
}

/* ---- slow and fast leaks ----------------------------------------------- */

static void test_slow_leak(void **state)
{
    (void)state;
    /* 0.5 MB/step over 300 steps from 800 MB, +-2 MB of noise: 150 MB */
    prism_leak f = fit_of(300, 800, linear, 0.5, 0, 2.0, 1, 10.0);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
    assert_close(f.slope_mb_per_step, 0.5, 0.02);
    assert_true(f.slope_se_mb > 0 && f.slope_se_mb < 0.01);
    assert_true(f.t > 100);
    assert_true(f.r2 > 0.99);
    assert_close(f.growth_mb, 149.5, 0.03);
    assert_close(f.growth_pct, 100.0 * f.growth_mb / f.start_mb, 1e-12);
    assert_int_equal(f.span_steps, 299);
    assert_close(f.mid_slope_mb_per_step, 0.5, 0.1);
    assert_close(f.late_slope_mb_per_step, 0.5, 0.1);
    /* no epochs given: 1000 steps ahead */
    assert_int_equal(f.projection_steps, 1000);
    assert_false(f.projection_epoch);
    assert_close(f.projected_mb, f.end_mb + 1000 * f.slope_mb_per_step, 1e-12);
    prism_leak_project(&f, 37, true);
    assert_int_equal(f.projection_steps, 37);
    assert_true(f.projection_epoch);
    assert_close(f.projected_mb, f.end_mb + 37 * f.slope_mb_per_step, 1e-12);
}

static void test_reported_cases(void **state)
{
    (void)state;
    /* 3 MB/step over 150 steps (450 MB): "none" under slope > 10 MB/step */
    prism_leak f = fit_of(150, 1024, linear, 3.0, 0, 3.0, 2, 10.0);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
    assert_close(f.slope_mb_per_step, 3.0, 0.005);
    assert_close(f.growth_mb, 447, 0.01);
    /* 2 MB/step over 500 steps: a gigabyte */
    f = fit_of(500, 2048, linear, 2.0, 0, 4.0, 3, 10.0);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
    assert_true(f.growth_mb > 990 && f.growth_mb < 1006);
    /* 0.1 MB/step over 1000 steps, +-20 MB: 100 MB, found through the noise */
    static double x[1000], y[1000];
    uint64_t seed = 4;
    for (int i = 0; i < 1000; i++) {
        x[i] = i;
        y[i] = (4096 + 0.1 * i + 20 * noise(&seed)) * MB;
    }
    f = prism_leak_fit(x, y, 1000, 10.0);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
}

static void test_fast_leak(void **state)
{
    (void)state;
    prism_leak f = fit_of(60, 1024, linear, 20.0, 0, 2.0, 5, 10.0);
    want(&f, PRISM_LEAK_YES, "fast: slope above the threshold");
    assert_close(f.slope_mb_per_step, 20.0, 0.01);
    /* six points: too few for the shape, the slope and fit decide alone */
    f = fit_of(6, 1024, linear, 12.5, 0, 0.5, 6, 10.0);
    want(&f, PRISM_LEAK_YES, "fast: slope above the threshold");
    f = fit_of(6, 1024, linear, 12.5, 0, 0.5, 6, 20.0);
    want(&f, PRISM_LEAK_GROWING, "too few points to see the shape");
}

static void test_gpu_from_zero(void **state)
{
    (void)state;
    /* GPU memory in use from nothing: no percentage, 100 MB is enough */
    prism_leak f = fit_of(500, 0, linear, 0.2, 0, 0.5, 7, 10.0);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
    assert_true(isnan(f.growth_pct));
    assert_close(f.growth_mb, 99.8, 0.02);
}

/* ---- not leaks ------------------------------------------------------------ */

static void test_flat_noisy(void **state)
{
    (void)state;
    for (uint64_t seed = 10; seed < 20; seed++) {
        prism_leak f = fit_of(300, 2048, linear, 0, 0, 8.0, seed, 10.0);
        want(&f, PRISM_LEAK_NONE, NULL);
        assert_true(fabs(f.t) < 5);
        f = fit_of(300, 2048, linear, 0, 0, 8.0, seed, 0.0);   /* even at threshold 0 */
        want(&f, PRISM_LEAK_NONE, NULL);
    }
    prism_leak f = fit_of(300, 2048, linear, -0.5, 0, 2.0, 21, 10.0);     /* released */
    want(&f, PRISM_LEAK_NONE, "memory does not rise");
}

static void test_one_off_jump(void **state)
{
    (void)state;
    /* a cache filled once at step 10 (+500 MB), flat after */
    prism_leak f = fit_of(300, 800, jump, 10, 500, 2.0, 22, 10.0);
    want(&f, PRISM_LEAK_NONE, "the rise stopped (warm-up or one-off)");
    assert_true(fabs(f.late_slope_mb_per_step) < 0.05);
    /* the same jump mid-run, large enough for a fast slope: still none */
    f = fit_of(300, 800, jump, 150, 3000, 2.0, 23, 10.0);
    assert_true(f.slope_mb_per_step > 10.0 && f.r2 >= 0.6);
    want(&f, PRISM_LEAK_NONE, "the rise stopped (warm-up or one-off)");
    /* a jump late in the run: the last third rises, the middle does not:
     * rising, not proven */
    f = fit_of(300, 800, jump, 250, 500, 2.0, 24, 10.0);
    want(&f, PRISM_LEAK_GROWING, "rising only late in the run");
}

static void test_warm_up_plateau(void **state)
{
    (void)state;
    /* 8 MB/step for 60 steps (480 MB), then flat */
    prism_leak f = fit_of(300, 800, ramp, 60, 8.0, 2.0, 25, 10.0);
    want(&f, PRISM_LEAK_NONE, "the rise stopped (warm-up or one-off)");
    /* a cache filling ever slower: 600 MB, time constant 40 steps */
    f = fit_of(300, 800, saturate, 40, 600, 1.0, 26, 10.0);
    want(&f, PRISM_LEAK_NONE, "the rise stopped (warm-up or one-off)");
    /* a caching allocator's pool: 300 MB in each of the first 3 steps of
     * 200, exact (allocation records), too short a rise to be significant */
    f = fit_of(200, 0, ramp, 3, 300.0, 0.0, 32, 10.0);
    assert_true(f.t < 5.0);
    want(&f, PRISM_LEAK_NONE, "the rise stopped (warm-up or one-off)");
}

/* ---- rising, not proven ---------------------------------------------------- */

static void test_growing(void **state)
{
    (void)state;
    /* 0.05 MB/step over 200 steps: significant, but 10 MB from 800 MB */
    prism_leak f = fit_of(200, 800, linear, 0.05, 0, 0.2, 27, 10.0);
    want(&f, PRISM_LEAK_GROWING, "too little growth so far");
    /* 5 % of a small program with less than 16 MB: not enough either */
    f = fit_of(200, 100, linear, 0.05, 0, 0.1, 28, 10.0);
    assert_true(f.growth_pct > 5.0 && f.growth_mb < 16.0);
    want(&f, PRISM_LEAK_GROWING, "too little growth so far");
    /* ... with 22 MB it is (5.5 % of 400 MB) */
    f = fit_of(200, 400, linear, 0.11, 0, 0.1, 29, 10.0);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
    /* 8 points rising 5 MB/step: too few to see the shape */
    f = fit_of(8, 800, linear, 5.0, 0, 0.5, 30, 10.0);
    want(&f, PRISM_LEAK_GROWING, "too few points to see the shape");
    /* significant but noisy: 0.3 MB/step over 300 steps, +-60 MB */
    f = fit_of(300, 4096, linear, 0.3, 0, 60.0, 31, 10.0);
    assert_true(f.t >= 5 && f.r2 < 0.6);
    want(&f, PRISM_LEAK_GROWING, "noisy fit");
}

/* A short run: host RSS at the steps of a real 50-step AdamW loop (a user
 * trial, torch 2.13: DataLoader workers, a checkpoint every 10 steps) that
 * rises in steps and swings (over 240 steps the same loop settles): not a
 * leak to tell from so few steps; a clean rise over as few steps still is. */
static void test_short_run_settling(void **state)
{
    (void)state;
    static const double st[] = {
        0, 3, 3, 3, 5, 5, 7, 7, 8, 10, 10, 10, 13, 13, 13, 15, 15, 17, 17, 19, 21, 21, 21, 23,
        23, 26, 26, 26, 28, 28, 30, 30, 32, 32, 35, 35, 35, 37, 37, 39, 39, 41, 41, 43, 43, 46,
        46, 48, 48, 48, 49, 49 };
    static const double mb[] = {
        377.988, 378.305, 424.199, 392.324, 414.207, 382.336, 380.461, 428.336, 394.59,
        392.855, 393.598, 404.633, 404.637, 388.641, 388.641, 390.641, 388.641, 404.645,
        388.648, 388.664, 388.672, 388.668, 390.668, 424.547, 406.676, 426.551, 442.551,
        442.547, 442.547, 426.547, 426.555, 426.555, 426.551, 426.555, 426.559, 426.559,
        410.684, 410.684, 442.559, 458.559, 410.691, 442.566, 458.566, 410.691, 442.57,
        458.57, 474.574, 474.574, 490.574, 506.57, 474.699, 474.695 };
    size_t n = sizeof st / sizeof *st;
    double x[sizeof st / sizeof *st], y[sizeof st / sizeof *st];
    for (size_t i = 0; i < n; i++) {
        x[i] = st[i];
        y[i] = mb[i] * MB;
    }
    prism_leak f = prism_leak_fit(x, y, n, 10.0);
    assert_true(f.t >= 5 && f.r2 >= 0.6 && f.r2 < 0.8 && f.growth_mb > 64);
    want(&f, PRISM_LEAK_GROWING, "too short a run to tell a leak from settling");
    /* a clean rise over 50 steps: 2 MB/step, +-1 MB */
    f = fit_of(50, 400, linear, 2.0, 0, 1.0, 41, 10.0);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
    /* the same loose fit over 300 steps: a leak */
    f = fit_of(300, 400, linear, 0.5, 0, 50.0, 42, 10.0);
    assert_true(f.r2 >= 0.6 && f.r2 < 0.8);
    want(&f, PRISM_LEAK_YES, "steady, significant rise");
}

/* ---- hostile inputs --------------------------------------------------------- */

static void test_hostile_inputs(void **state)
{
    (void)state;
    double x[12], y[12];
    for (int i = 0; i < 12; i++) {
        x[i] = i;
        y[i] = (1000 + i) * MB;
    }
    y[5] = NAN;
    prism_leak f = prism_leak_fit(x, y, 12, 10.0);
    assert_false(f.have_fit);
    want(&f, PRISM_LEAK_NONE, "too few step samples");
    y[5] = INFINITY;
    assert_false(prism_leak_fit(x, y, 12, 10.0).have_fit);
    y[5] = 1.8446744073709552e19;            /* UINT64_MAX bytes */
    f = prism_leak_fit(x, y, 12, 10.0);
    assert_true(f.have_fit);
    assert_false(f.leak);                   /* one spike is no leak */
    for (int i = 0; i < 12; i++)            /* indexes near 2^64 */
        x[i] = 1.8446744073709552e19 - (11 - i) * 4096.0;
    f = prism_leak_fit(x, y, 12, 10.0);
    (void)f;                                /* anything, but no UB */
    f = prism_leak_fit(NULL, NULL, 0, 10.0);
    assert_false(f.have_fit);
    assert_non_null(f.reason);
    prism_leak_project(NULL, 5, true);
    assert_string_equal(prism_leak_verdict_name(PRISM_LEAK_GROWING), "growing");
}

/* ---- the rule on profiles ------------------------------------------------------ */

enum { N_STEP = 1, N_WORK, N_ATEN };
static const char *const names[] = { "step", "work", "aten::mm" };

typedef struct prof {
    unsigned steps, per_epoch;          /* per_epoch 0: one epoch               */
    double host_base, host_rate;        /* MB, MB/step                          */
    double gpu_base, gpu_rate;          /* gpu_rate < 0: no GPU figures         */
    double noise_mb;
    const char *const *argv;
    size_t argc;
    bool aten;                          /* the work region is "aten::mm"        */
} prof;

static loaded profile(const prof *p)
{
    pbuild b;
    prism_header h = { .producer = "leak test", .host = "test", .rank = -1, .clock = "test",
                       .argv = p->argv, .argc = p->argc };
    pb_init_header(&b, &h, names, sizeof names / sizeof *names, 9);
    pb_thread(&b, 1, "main");
    uint64_t now = 1000, seed = 77;
    for (unsigned s = 0; s < p->steps; s++) {
        uint64_t start = now;
        pb_enter(&b, 1, now, N_STEP);
        pb_leaf(&b, 1, &now, p->aten ? N_ATEN : N_WORK, 1000000);
        now += 1000;
        pb_exit(&b, 1, now);
        prism_step st = { start, now, s, p->per_epoch ? s / p->per_epoch : 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        double host = p->host_base + p->host_rate * s + p->noise_mb * noise(&seed);
        prism_memory_sample m = { .ts = now, .step = s, .rss = (uint64_t)(host * MB),
                                  .cpu_permille = 1000 };
        if (p->gpu_rate >= 0) {
            double gpu = p->gpu_base + p->gpu_rate * s + p->noise_mb * noise(&seed);
            m.ngpu = 1;
            m.gpu[0] = (prism_gpu_mem){ 0, (uint64_t)(gpu * MB), (uint64_t)(2 * gpu * MB), PRISM_NO_CPU, PRISM_NO_VALUE };
        }
        pb_memory(&b, &m);
    }
    return pb_load(&b);
}

static const prism_bottleneck *leak_of(const prism_analysis *a, bool gpu, size_t *at)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < n; i++)
        if (b[i].type == PRISM_BN_MEMORY_LEAK && !!strstr(b[i].description, "GPU") == gpu) {
            if (at)
                *at = i;
            return &b[i];
        }
    return NULL;
}

/* The leak comes first among the findings of its severity. */
static void first_of_severity(const prism_analysis *a, size_t at)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; i < at; i++)
        assert_true(b[i].severity > b[at].severity || b[i].type == PRISM_BN_MEMORY_LEAK);
}

static const char *const c_argv[] = { "./train", "--epochs", "3" };
static const char *const py_argv[] = { "python3", "train.py" };

static void test_rule_slow_c(void **state)
{
    (void)state;
    prof p = { .steps = 300, .per_epoch = 100, .host_base = 800, .host_rate = 0.5,
               .gpu_rate = -1, .noise_mb = 2, .argv = c_argv, .argc = 3 };
    loaded l = profile(&p);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_true(m->host.leak);
    /* epochs of 100 steps, the last complete: the projection is a whole
     * next epoch */
    assert_true(m->host.projection_epoch);
    assert_int_equal(m->host.projection_steps, 100);
    size_t at;
    const prism_bottleneck *b = leak_of(l.a, false, &at);
    assert_non_null(b);
    assert_int_equal(b->severity, PRISM_SEV_MEDIUM);   /* 500 MB per 1000 steps, +19 % */
    first_of_severity(l.a, at);
    assert_string_equal(b->description, "Memory leak: 0.50 MB/step (host RSS)");
    assert_non_null(strstr(b->evidence, "grew 149."));
    assert_non_null(strstr(b->evidence, "over 299 steps; slope 0.50 +/- 0.00 MB/step, r2 1.00, "
                                        "300 step samples; "));
    assert_non_null(strstr(b->evidence, " in 100 more steps (end of epoch)"));
    assert_non_null(strstr(b->evidence, "steady, significant rise"));
    assert_non_null(strstr(b->recommendation, "valgrind --leak-check=full"));
    assert_non_null(strstr(b->recommendation, "LeakSanitizer"));
    assert_null(strstr(b->recommendation, "plt.close"));
    assert_null(strstr(b->recommendation, "tensor"));
    assert_null(leak_of(l.a, true, NULL));
    unload(&l);
}

static void test_rule_python(void **state)
{
    (void)state;
    prof p = { .steps = 150, .host_base = 1024, .host_rate = 3, .gpu_rate = -1, .noise_mb = 3,
               .argv = py_argv, .argc = 2 };
    loaded l = profile(&p);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_false(m->host.projection_epoch);          /* one epoch: 1000 steps */
    assert_int_equal(m->host.projection_steps, 1000);
    const prism_bottleneck *b = leak_of(l.a, false, NULL);
    assert_non_null(b);
    assert_int_equal(b->severity, PRISM_SEV_HIGH);   /* 3 GB per 1000 steps */
    assert_non_null(strstr(b->recommendation, "plt.close(fig)"));
    assert_non_null(strstr(b->recommendation, "loss.detach()"));
    assert_null(strstr(b->recommendation, "valgrind"));
    unload(&l);

    /* a C-looking command line with torch operators in the regions */
    p.argv = c_argv;
    p.argc = 3;
    p.aten = true;
    l = profile(&p);
    b = leak_of(l.a, false, NULL);
    assert_non_null(b);
    assert_non_null(strstr(b->recommendation, "plt.close(fig)"));
    unload(&l);

    /* an interpreter by path, a script second */
    static const char *const py2[] = { "/usr/bin/python3.11", "-u", "main.py" };
    static const char *const py3[] = { "env", "train.py" };
    const char *const *argvs[] = { py2, py3 };
    size_t argcs[] = { 3, 2 };
    for (int i = 0; i < 2; i++) {
        p.argv = argvs[i];
        p.argc = argcs[i];
        p.aten = false;
        l = profile(&p);
        b = leak_of(l.a, false, NULL);
        assert_non_null(b);
        assert_non_null(strstr(b->recommendation, "plt.close(fig)"));
        unload(&l);
    }
}

static void test_rule_fast_high(void **state)
{
    (void)state;
    prof p = { .steps = 60, .host_base = 1024, .host_rate = 20, .gpu_rate = -1, .noise_mb = 2,
               .argv = c_argv, .argc = 3 };
    loaded l = profile(&p);
    size_t at;
    const prism_bottleneck *b = leak_of(l.a, false, &at);
    assert_non_null(b);
    assert_int_equal(b->severity, PRISM_SEV_HIGH);
    first_of_severity(l.a, at);
    assert_true(fabs(b->share - 20.0) < 0.5);
    assert_non_null(strstr(b->evidence, "fast: slope above the threshold (threshold 10.0"));
    unload(&l);
}

static void test_rule_gpu(void **state)
{
    (void)state;
    /* host flat, GPU memory from (almost) 0 rising 2 MB/step over 200 steps */
    prof p = { .steps = 200, .host_base = 900, .host_rate = 0, .gpu_base = 0.5, .gpu_rate = 2,
               .noise_mb = 0.4, .argv = py_argv, .argc = 2 };
    loaded l = profile(&p);
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_true(m->have_gpu);
    assert_false(m->host.leak);
    want(&m->gpu, PRISM_LEAK_YES, NULL);
    assert_null(leak_of(l.a, false, NULL));
    const prism_bottleneck *b = leak_of(l.a, true, NULL);
    assert_non_null(b);
    assert_int_equal(b->severity, PRISM_SEV_HIGH);   /* 2 GB per 1000 steps */
    assert_string_equal(b->description, "Memory leak: 2.0 MB/step (GPU memory)");
    assert_non_null(strstr(b->recommendation, "cudaFree"));
    assert_non_null(strstr(b->recommendation, "caching allocator"));
    assert_non_null(strstr(b->evidence, "grew 39"));
    assert_null(strstr(b->evidence, "%)"));          /* no percentage of nothing */
    unload(&l);
}

static void test_rule_no_leak(void **state)
{
    (void)state;
    prof p = { .steps = 300, .host_base = 2048, .host_rate = 0, .gpu_base = 512,
               .gpu_rate = 0, .noise_mb = 8, .argv = c_argv, .argc = 3 };
    loaded l = profile(&p);
    assert_null(leak_of(l.a, false, NULL));
    assert_null(leak_of(l.a, true, NULL));
    assert_int_equal(prism_analysis_memory(l.a)->host.verdict, PRISM_LEAK_NONE);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_leak),
        cmocka_unit_test(test_reported_cases),
        cmocka_unit_test(test_fast_leak),
        cmocka_unit_test(test_gpu_from_zero),
        cmocka_unit_test(test_flat_noisy),
        cmocka_unit_test(test_one_off_jump),
        cmocka_unit_test(test_warm_up_plateau),
        cmocka_unit_test(test_growing),
        cmocka_unit_test(test_short_run_settling),
        cmocka_unit_test(test_hostile_inputs),
        cmocka_unit_test(test_rule_slow_c),
        cmocka_unit_test(test_rule_python),
        cmocka_unit_test(test_rule_fast_high),
        cmocka_unit_test(test_rule_gpu),
        cmocka_unit_test(test_rule_no_leak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
