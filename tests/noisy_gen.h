/*
 * noisy_gen.h - a seeded generator of noisy training runs for the compare
 * and gate tests (compare_test.c, gate_test.c): steps of NREG flat regions
 * on one thread, each region lognormal around its median with outliers,
 * the whole run scaled, one region made slower, one absent from odd steps,
 * CPU samples with run-queue waits.  Nothing depends on timing: the same
 * gen always gives the same profile.
 *
 * Include after <cmocka.h> and pbuild.h (US: ns per microsecond); every
 * function is static.
 */
#ifndef PRISM_TESTS_NOISY_GEN_H
#define PRISM_TESTS_NOISY_GEN_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NREG 8
static const char *const reg_names[NREG] = {
    "data", "forward", "backward", "optimizer", "loss", "allreduce", "log", "eval",
};
/* median durations (us): every region >= 2 % of a ~9.3 ms step */
static const double reg_us[NREG] = { 3000, 2000, 1500, 1000, 800, 500, 300, 200 };

typedef struct gen {
    uint64_t seed;
    unsigned steps;
    double sigma;               /* lognormal noise of every region in every step */
    double outliers;            /* chance of a region taking 3-8x in a step */
    double scale;               /* the whole run (1: as is) */
    int slow;                   /* a region made slower (-1: none) ... */
    double slow_factor;         /* ... by this factor */
    int sparse;                 /* a region that runs in even steps only (-1: none) */
    bool cpu;                   /* CPU samples at every region's ends */
    int waits;                  /* a region that waits for a CPU (-1: none, -2: all) ... */
    double waits_share;         /* ... this share of its wall time */
    const char *const *names;   /* NREG region names (NULL: reg_names) */
    double spread;              /* region r also scaled by 1 + spread x r (0: none) */
} gen;

static inline gen gen_default(uint64_t seed)
{
    gen g = { .seed = seed, .steps = 200, .sigma = 0.3, .outliers = 0.02, .scale = 1.0,
              .slow = -1, .slow_factor = 1.0, .sparse = -1, .waits = -1 };
    return g;
}

static inline uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t x = *s;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

static inline double rng_unit(uint64_t *s)      /* (0, 1) */
{
    return ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double rng_normal(uint64_t *s)    /* Box-Muller */
{
    double u = rng_unit(s), v = rng_unit(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Steps of NREG flat regions back to back on one thread (no wrapper
 * region: each region is its own work). */
static inline void noisy_build(const gen *g, pbuild *b)
{
    uint64_t s = g->seed * 0x9E3779B97F4A7C15ull + 17;
    pb_init(b, g->names ? g->names : reg_names, NREG, g->seed);
    pb_thread(b, 1, "main");
    uint64_t now = 1000 * US;
    /* the thread's cumulative on-CPU and run-queue time: always runnable */
    prism_cpu_sample cs = { .ts = now, .stream = 1, .flags = PRISM_CPU_HAVE_WAIT };
    if (g->cpu)
        pb_cpu(b, &cs);
    for (unsigned k = 0; k < g->steps; k++) {
        uint64_t start = now;
        for (int r = 0; r < NREG; r++) {
            double us = reg_us[r] * g->scale * exp(g->sigma * rng_normal(&s));
            if (rng_unit(&s) < g->outliers)
                us *= 3.0 + 5.0 * rng_unit(&s);
            if (r == g->slow)
                us *= g->slow_factor;
            us *= 1.0 + g->spread * r;
            if (r == g->sparse && k % 2)
                continue;
            pb_enter(b, 1, now, (uint32_t)r + 1);
            uint64_t at = now;
            now += (uint64_t)(us * US);
            pb_exit(b, 1, now);
            if (g->cpu) {
                uint64_t wait = r == g->waits || g->waits == -2
                                    ? (uint64_t)((double)(now - at) * g->waits_share) : 0;
                cs.wait_ns += wait;
                cs.oncpu_ns += (now - cs.ts) - wait;
                cs.ts = now;
                pb_cpu(b, &cs);
            }
            now += 5 * US;
        }
        prism_step st = { start, now, k, 0, PRISM_STEP_SAMPLED };
        PB_PUT(b, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&b->e, &st));
        now += 20 * US;
    }
}

static inline loaded noisy_profile(const gen *g)
{
    pbuild *b = malloc(sizeof *b);      /* its chunk buffer is 16 KB */
    assert_non_null(b);
    noisy_build(g, b);
    loaded l = pb_load(b);
    free(b);
    return l;
}

/* The same profile written to path, with its footer. */
static inline void gen_write(const gen *g, const char *path)
{
    pbuild *b = malloc(sizeof *b);
    assert_non_null(b);
    noisy_build(g, b);
    prism_footer ft = { .end_ts = UINT64_C(1) << 40, .clean = true };
    PB_PUT(b, PRISM_CHUNK_FOOTER, 0, 0, prism_enc_footer(&b->e, &ft));
    pb_write_file(b, path);
    free(b);
}

#endif
