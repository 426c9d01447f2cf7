/*
 * bench_util.h - small helpers shared by the benchmarks (header only, so
 * every bench/NAME.c stays a single translation unit).
 *
 *   - a monotonic clock in nanoseconds,
 *   - repeated measurement with median and minimum (machines are noisy:
 *     figures are the median of several runs, the minimum shown beside it),
 *   - a sink that keeps results alive so the compiler cannot drop the work,
 *   - one-line table output with the target printed next to the figure.
 *
 * Benchmarks print figures; they never fail on time.
 */
#ifndef PRISM_BENCH_UTIL_H
#define PRISM_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define BENCH_MAX_RUNS 32

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The calling thread's CPU time in ns: figures that use it do not count the
 * time the thread spends preempted (by the writer thread or by another
 * process on a small shared machine). */
static inline uint64_t bench_thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Keep v alive: the work producing it cannot be optimised away. */
static inline void bench_sink(uint64_t v)
{
    static volatile uint64_t sink;
    sink ^= v;
}

/* Median and minimum of n >= 1 values (the input is not modified). */
typedef struct bench_stat {
    double median, min;
    unsigned runs;
} bench_stat;

static inline bench_stat bench_stat_of(const double *v, unsigned n)
{
    double s[BENCH_MAX_RUNS];
    bench_stat st = { 0, 0, 0 };
    if (n == 0)
        return st;
    if (n > BENCH_MAX_RUNS)
        n = BENCH_MAX_RUNS;
    memcpy(s, v, n * sizeof *s);
    for (unsigned i = 1; i < n; i++) {          /* insertion sort: n is tiny */
        double x = s[i];
        unsigned j = i;
        for (; j > 0 && s[j - 1] > x; j--)
            s[j] = s[j - 1];
        s[j] = x;
    }
    st.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    st.min = s[0];
    st.runs = n;
    return st;
}

/* One timed run: does the work once and returns a value for the sink. */
typedef uint64_t (*bench_fn)(void *ctx);

/* Run fn once untimed (warm caches, fault in pages), then `runs` times
 * timed.  Returns the seconds per run: median and minimum. */
static inline bench_stat bench_measure(bench_fn fn, void *ctx, unsigned runs)
{
    double sec[BENCH_MAX_RUNS];
    if (runs == 0)
        runs = 1;
    if (runs > BENCH_MAX_RUNS)
        runs = BENCH_MAX_RUNS;
    bench_sink(fn(ctx));
    for (unsigned i = 0; i < runs; i++) {
        uint64_t t0 = bench_now_ns();
        uint64_t v = fn(ctx);
        uint64_t t1 = bench_now_ns();
        bench_sink(v);
        sec[i] = (double)(t1 - t0) * 1e-9;
    }
    return bench_stat_of(sec, runs);
}

/*
 * Table rows:  what | figure unit | how measured | extra | target.
 * Columns are padded so targets line up; `extra` and `target` are free
 * text (either may be NULL).
 */
static inline void bench_row_tail(const char *how, const char *extra,
                                  const char *target)
{
    if (target)
        printf("  %-26s  %-40s  target %s\n", how ? how : "", extra ? extra : "", target);
    else if (extra)
        printf("  %-26s  %s\n", how ? how : "", extra);
    else
        printf("  %s\n", how ? how : "");
}

/* A rate: `work` units per run, timed as `t` (seconds), shown as work/s
 * divided by `scale` (1e6 for "M ...").  The figure comes from the median
 * time, "best" from the fastest run. */
static inline void bench_row_rate(const char *what, double work, bench_stat t,
                                  double scale, const char *unit,
                                  const char *extra, const char *target)
{
    char how[64];
    double med = t.median > 0 ? work / t.median / scale : 0;
    double best = t.min > 0 ? work / t.min / scale : 0;
    if (t.runs > 1)
        snprintf(how, sizeof how, "(median of %u, best %.1f)", t.runs, best);
    else
        snprintf(how, sizeof how, "(1 run)");
    printf("  %-30s %8.1f %-12s", what, med, unit);
    bench_row_tail(how, extra, target);
}

/* A plain value (sizes, ratios: nothing timed). */
static inline void bench_row_value(const char *what, double v, const char *unit,
                                   const char *extra, const char *target)
{
    printf("  %-30s %8.2f %-12s", what, v, unit);
    bench_row_tail(NULL, extra, target);
}

#endif
