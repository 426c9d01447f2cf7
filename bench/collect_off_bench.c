/*
 * collect_off_bench.c - what the instrumentation costs when compiled out.
 *
 * With PRISM_DISABLE defined before collect.h, every macro and call of the
 * instrumentation API compiles to nothing.  This bench times loops holding
 * PRISM_ZONE, prism_push_id / prism_pop, and every other call of the API,
 * against the same loop with no calls and the same sink (an empty asm
 * statement that keeps the loop counter alive), and reports the difference
 * per iteration: it should be ~0.
 *
 * Figures are the median of RUNS runs after one warm-up run, the best run
 * beside it; times are the thread's CPU time.  Figures only: nothing fails
 * on time.
 *
 *   usage: collect_off_bench [runs [iterations]]
 */
#define PRISM_DISABLE 1

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "prism/collect.h"

#define DEF_RUNS   7u
#define DEF_ITERS  20000000u
#define LABEL_W    34

/* The sink: the compiler must keep x, and so the loop, but emits nothing. */
#define KEEP(x) __asm__ __volatile__("" : "+r"(x))

__attribute__((noinline)) static double run_empty(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++)
        KEEP(i);
    return (double)(bench_thread_ns() - t0) / n;
}

__attribute__((noinline)) static double run_zone(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        PRISM_ZONE("off.zone");
        KEEP(i);
    }
    return (double)(bench_thread_ns() - t0) / n;
}

__attribute__((noinline)) static double run_pair(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        prism_push_id(7);
        prism_pop();
        KEEP(i);
    }
    return (double)(bench_thread_ns() - t0) / n;
}

/* Everything else the API offers, once per iteration. */
__attribute__((noinline)) static double run_all(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        prism_step_begin();
        prism_push("off.by_name");
        PRISM_REGION_BEGIN("off.region");
        prism_mark_id(3);
        prism_mark_name("off.mark");
        prism_counter_i(5, (int64_t)i);
        prism_counter_f(5, (double)i);
        PRISM_REGION_END();
        prism_pop();
        prism_step_end();
        KEEP(i);
    }
    return (double)(bench_thread_ns() - t0) / n;
}

enum { K_EMPTY, K_ZONE, K_PAIR, K_ALL, K_COUNT };

static void row(const char *what, const double *ns, unsigned runs, double empty,
                const char *target)
{
    bench_stat st = bench_stat_of(ns, runs);
    char how[64], extra[96];
    snprintf(how, sizeof how, "(median of %u, best %.3f)", st.runs, st.min);
    snprintf(extra, sizeof extra, "over the empty loop: %+.3f ns", st.median - empty);
    printf("  %-*s %8.3f %-12s", LABEL_W, what, st.median, "ns");
    bench_row_tail(how, empty >= 0 ? extra : "the same loop and sink, no calls", target);
}

int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : DEF_RUNS;
    unsigned iters = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : DEF_ITERS;
    if (runs < 1 || runs > BENCH_MAX_RUNS)
        runs = DEF_RUNS;
    if (iters < 1000)
        iters = DEF_ITERS;
    /* compiled out: these are constants, and init starts nothing */
    if (prism_init(NULL) != 0 || prism_recording() || prism_name("x") != 0) {
        printf("  !! PRISM_DISABLE did not compile the API out\n");
        return 1;
    }
    double ns[K_COUNT][BENCH_MAX_RUNS];
    uint64_t t0 = bench_now_ns();
    printf("collect_off_bench: PRISM_DISABLE, %u iterations a run\n", iters);
    printf("  figures: median of %u timed runs after one warm-up, the kinds interleaved; "
           "ns of the thread's CPU time per iteration\n", runs);
    for (unsigned r = 0; r <= runs; r++) {      /* round 0 warms up */
        unsigned k = r ? r - 1 : 0;
        ns[K_EMPTY][k] = run_empty(iters);
        ns[K_ZONE][k] = run_zone(iters);
        ns[K_PAIR][k] = run_pair(iters);
        ns[K_ALL][k] = run_all(iters);
    }
    double empty = bench_stat_of(ns[K_EMPTY], runs).median;
    row("collect off: empty loop", ns[K_EMPTY], runs, -1, NULL);
    row("collect off: PRISM_ZONE", ns[K_ZONE], runs, empty, "<= 1 ns");
    row("collect off: push_id/pop pair", ns[K_PAIR], runs, empty, "<= 1 ns");
    row("collect off: every call once", ns[K_ALL], runs, empty, NULL);
    printf("collect_off_bench: done in %.1f s\n", (double)(bench_now_ns() - t0) * 1e-9);
    prism_shutdown();
    return 0;
}
