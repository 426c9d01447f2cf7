/*
 * collect_bench.c - the cost of libcollect's instrumentation and the rate
 * its writer thread sustains.
 *
 *   1. hot path, recording (PRISM_POLICY_WAIT, a large buffer budget, so
 *      nothing is dropped): a push/pop pair by id, a PRISM_ZONE, a pair by
 *      name, prism_counter_i / _f, an empty step, each beside two raw clock
 *      reads (prism__now() twice) measured in the same round, interleaved;
 *      times are the thread's CPU time; prism_init / prism_shutdown;
 *   2. a pair inside a step that is not sampled (sample_rate 0.001) beside
 *      an empty loop;
 *   (the interleaved overhead of ~1 ms steps: bench/steploop_bench.c)
 *   3. writer throughput: 2 threads pushing and popping, paced at fixed
 *      total rates and unpaced, PRISM_POLICY_DROP and default buffers, ~1 s
 *      a run; written and dropped events are read back from the file;
 *   4. build/bin/trainloop with profiling at defaults against --no-profile,
 *      and at defaults with the CPU sampler off (PRISM_CPU_INTERVAL_MS=0),
 *      runs interleaved, wall and CPU time; and the overhead the figures of
 *      1 predict for what one run records.
 *
 * libcollect allows one session per process, so every configuration runs
 * in a forked child; figures come back through a pipe, and the parent reads
 * the child's profile with the reader.  Timed figures are the median of RUNS
 * runs after one warm-up run, the best run beside it.  Figures only: wrong
 * results (lost events, a failed child) fail the run, slow ones never do.
 *
 *   usage: collect_bench [runs [pairs [sections]]]
 *   sections: a list of hot, unsampled, writer, trainloop
 *   (default: all)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "prism/collect.h"
#include "prism/profile.h"

#define DEF_RUNS      7u
#define DEF_PAIRS     200000u
#define TP_SECONDS    1.0           /* one throughput run                   */
#define TP_THREADS    2u
#define TP_BATCH      256u          /* pairs between two clock checks       */
#define TP_AHEAD_NS   100000u       /* sleep when this far ahead of pace    */
#define TL_PAIRS      9u            /* trainloop: profiled/unprofiled pairs */
#define TL_TARGET_S   1.0           /* trainloop: seconds a run             */
#define SETTLE_NS     20000000u     /* hot path: the writer catches up      */
#define LABEL_W       34            /* width of the row labels              */

extern char **environ;

static char tmpdir[PATH_MAX / 2];          /* short enough for every path in it */

#include "collect_common.h"


/* ------------------------------------------------------------------ */
/* 1. Hot path, recording                                              */
/* ------------------------------------------------------------------ */

typedef struct hot_ctx {
    unsigned runs, pairs;
} hot_ctx;

enum { K_CLOCK2, K_PAIR, K_ZONE, K_NAME, K_CTR_I, K_CTR_F, K_STEP, K_COUNT };
#define STEPS_PER_PAIRS 200u         /* K_STEP: pairs / this steps a run     */

typedef struct hot_out {
    double ns[K_COUNT][BENCH_MAX_RUNS];
    uint64_t faults;                /* page faults inside the timed runs   */
    uint64_t regions, counters, steps;  /* recorded: what the file must hold */
    double init_ms, shutdown_ms;    /* prism_init, prism_shutdown: wall    */
    int tsc;
} hot_out;

/* The hot-path medians, for the estimate of trainloop's overhead. */
static struct {
    bool have;
    double pair_ns, counter_ns, step_ns, init_ms, shutdown_ms;
} hot_fig;

static double per_op(uint64_t t0, unsigned n)
{
    return (double)(bench_thread_ns() - t0) / n;
}

__attribute__((noinline)) static double run_clock2(unsigned n)
{
    uint64_t acc = 0, t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        acc += prism__now();
        acc ^= prism__now();
    }
    double r = per_op(t0, n);
    bench_sink(acc);
    return r;
}

__attribute__((noinline)) static double run_pair(uint32_t id, unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        prism_push_id(id);
        prism_pop();
    }
    return per_op(t0, n);
}

__attribute__((noinline)) static double run_zone(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        PRISM_ZONE("bench.zone");
    }
    return per_op(t0, n);
}

__attribute__((noinline)) static double run_byname(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        prism_push("bench.by_name");
        prism_pop();
    }
    return per_op(t0, n);
}

__attribute__((noinline)) static double run_counter_i(uint32_t id, unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++)
        prism_counter_i(id, (int64_t)i);
    return per_op(t0, n);
}

__attribute__((noinline)) static double run_counter_f(uint32_t id, unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++)
        prism_counter_f(id, (double)i);
    return per_op(t0, n);
}

/* An empty step: its record into the ring for the writer (which samples
 * memory for it). */
__attribute__((noinline)) static double run_steps(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        prism_step_begin();
        prism_step_end();
    }
    return per_op(t0, n);
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static uint64_t minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (uint64_t)ru.ru_minflt;
}

static int hot_child(void *vctx, void *vout)
{
    const hot_ctx *c = vctx;
    hot_out *o = vout;
    char path[PATH_MAX];
    prism_config cfg;
    prism_config_default(&cfg);
    cfg.policy = PRISM_POLICY_WAIT;
    cfg.buffer_mb = 1024;           /* allocated as used: the writer recycles */
    uint64_t t0 = bench_now_ns();
    if (start_session(&cfg, "hot", path, sizeof path) != 0)
        return 1;
    o->init_ms = (double)(bench_now_ns() - t0) * 1e-6;
#if defined(__x86_64__) || defined(__i386__)
    o->tsc = prism__clock_tsc;
#endif
    uint32_t id = prism_name("bench.pair"), cid = prism_name("bench.counter");
    if (!id || !cid)
        return 1;
    /* Round 0 warms up (buffers, names, caches); rounds 1..runs are kept,
     * the kinds interleaved.  After each run the writer gets SETTLE_NS to
     * encode it and recycle its buffers, so a timed run measures the hot
     * path, not the allocation and first touch of new buffers. */
    for (unsigned r = 0; r <= c->runs; r++) {
        for (int k = 0; k < K_COUNT; k++) {
            unsigned n = k == K_STEP ? c->pairs / STEPS_PER_PAIRS : c->pairs;
            uint64_t f0 = minor_faults();
            double ns = k == K_CLOCK2 ? run_clock2(n)
                      : k == K_PAIR   ? run_pair(id, n)
                      : k == K_ZONE   ? run_zone(n)
                      : k == K_NAME   ? run_byname(n)
                      : k == K_CTR_I  ? run_counter_i(cid, n)
                      : k == K_CTR_F  ? run_counter_f(cid, n)
                      :                 run_steps(n);
            if (r > 0) {
                o->ns[k][r - 1] = ns;
                o->faults += minor_faults() - f0;
            }
            sleep_ns(SETTLE_NS);
        }
    }
    o->regions = (uint64_t)(c->runs + 1) * c->pairs * 2 * 3;
    o->counters = (uint64_t)(c->runs + 1) * c->pairs * 2;
    o->steps = (uint64_t)(c->runs + 1) * (c->pairs / STEPS_PER_PAIRS);
    t0 = bench_now_ns();
    prism_shutdown();
    o->shutdown_ms = (double)(bench_now_ns() - t0) * 1e-6;
    return 0;
}

/* The library's own cost: the median over rounds of (kind - `reads` x the
 * two-read baseline of the same round), so that a slow phase of the
 * machine hits both sides of a difference. */
static double lib_cost(const hot_out *o, int k, unsigned runs, double reads)
{
    double d[BENCH_MAX_RUNS];
    for (unsigned r = 0; r < runs; r++)
        d[r] = o->ns[k][r] - reads * o->ns[K_CLOCK2][r];
    return median(d, runs);
}

static bool report_hot(unsigned runs, unsigned pairs)
{
    hot_ctx c = { runs, pairs };
    hot_out o;
    memset(&o, 0, sizeof o);
    if (!check(in_child(hot_child, &c, &o, sizeof o) == 0, "hot-path child failed"))
        return false;
    char path[PATH_MAX], extra[160];
    profile_path(path, sizeof path, "hot");
    counts f = read_profile(path);
    printf("  hot path: clock %s; %u pairs a run, policy wait (nothing may be dropped); "
           "ns of the thread's CPU time\n",
           o.tsc ? "rdtsc (invariant TSC)" : "CLOCK_MONOTONIC (clock_gettime)", pairs);

    double base = median(o.ns[K_CLOCK2], runs), pair = median(o.ns[K_PAIR], runs);
    row_ns("collect: 2 raw clock reads", o.ns[K_CLOCK2], runs, 1,
           "prism__now() twice: the baseline", NULL);
    snprintf(extra, sizeof extra, "2 clock reads: %.1f ns, library: %.1f ns, ratio %.2fx",
             base, lib_cost(&o, K_PAIR, runs, 1), base > 0 ? pair / base : 0);
    row_ns("collect: push/pop pair (enabled)", o.ns[K_PAIR], runs, 1, extra, "<= 25 ns");
    snprintf(extra, sizeof extra, "library: %.1f ns", lib_cost(&o, K_ZONE, runs, 1));
    row_ns("collect: PRISM_ZONE pair", o.ns[K_ZONE], runs, 1, extra, NULL);
    snprintf(extra, sizeof extra, "library: %.1f ns (name hashed per push)",
             lib_cost(&o, K_NAME, runs, 1));
    row_ns("collect: prism_push(name) pair", o.ns[K_NAME], runs, 1, extra, NULL);
    snprintf(extra, sizeof extra, "1 clock read: %.1f ns, library: %.1f ns", base / 2,
             lib_cost(&o, K_CTR_I, runs, 0.5));
    row_ns("collect: prism_counter_i", o.ns[K_CTR_I], runs, 1, extra, "<= 15 ns");
    snprintf(extra, sizeof extra, "1 clock read: %.1f ns, library: %.1f ns", base / 2,
             lib_cost(&o, K_CTR_F, runs, 0.5));
    row_ns("collect: prism_counter_f", o.ns[K_CTR_F], runs, 1, extra, "<= 15 ns");
    double step = median(o.ns[K_STEP], runs);
    snprintf(extra, sizeof extra, "2 clock reads: %.1f ns, ratio %.2fx (defaults; memory: "
             "the writer)", base, base > 0 ? step / base : 0);
    row_ns("collect: step begin+end", o.ns[K_STEP], runs, 1, extra, "< 1000 ns");
    printf("  %-*s %8.1f %-12s  prism_shutdown %.1f ms (wall; the writer's last flush)\n",
           LABEL_W, "collect: prism_init", o.init_ms, "ms", o.shutdown_ms);
    hot_fig.have = true;
    hot_fig.pair_ns = pair;
    hot_fig.counter_ns = median(o.ns[K_CTR_I], runs);
    hot_fig.step_ns = median(o.ns[K_STEP], runs);
    hot_fig.init_ms = o.init_ms;
    hot_fig.shutdown_ms = o.shutdown_ms;
    printf("  recorded: %llu region events, %llu counters, %llu dropped (file %.1f MB); "
           "page faults in timed runs: %llu\n",
           (unsigned long long)f.regions, (unsigned long long)f.counters,
           (unsigned long long)f.dropped, (double)f.bytes / 1e6, (unsigned long long)o.faults);
    unlink(path);
    return check(f.ok, "the hot-path profile did not read back cleanly") &&
           check(f.dropped == 0 && f.regions == o.regions && f.counters == o.counters &&
                     f.steps == o.steps,
                 "events were lost: the figures above include drops");
}

/* ------------------------------------------------------------------ */
/* 2. Inside a step that is not sampled                                */
/* ------------------------------------------------------------------ */

typedef struct uns_out {
    double empty[BENCH_MAX_RUNS], pair[BENCH_MAX_RUNS], zone[BENCH_MAX_RUNS];
    uint64_t step;
    int on;                         /* prism__on inside the step: must be 0 */
} uns_out;

#define KEEP(x) __asm__ __volatile__("" : "+r"(x))

__attribute__((noinline)) static double run_empty(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++)
        KEEP(i);
    return per_op(t0, n);
}

__attribute__((noinline)) static double run_pair_kept(uint32_t id, unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        prism_push_id(id);
        prism_pop();
        KEEP(i);
    }
    return per_op(t0, n);
}

__attribute__((noinline)) static double run_zone_kept(unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        PRISM_ZONE("bench.unsampled_zone");
        KEEP(i);
    }
    return per_op(t0, n);
}

static int unsampled_child(void *vctx, void *vout)
{
    const hot_ctx *c = vctx;
    uns_out *o = vout;
    char path[PATH_MAX];
    prism_config cfg;
    prism_config_default(&cfg);
    cfg.collect_memory = false;
    cfg.sample_rate = 0.001;        /* stride 1000: step 0 sampled, 1..999 not */
    if (start_session(&cfg, "unsampled", path, sizeof path) != 0)
        return 1;
    uint32_t id = prism_name("bench.unsampled");
    prism_step_begin();             /* step 0: always sampled */
    prism_step_end();
    prism_step_begin();             /* step 1: not sampled */
    o->step = prism_step_index();
    o->on = atomic_load(&prism__on);
    unsigned n = c->pairs * 5;      /* short operations: longer runs */
    for (unsigned r = 0; r <= c->runs; r++) {
        unsigned k = r ? r - 1 : 0;
        o->empty[k] = run_empty(n);
        o->pair[k] = run_pair_kept(id, n);
        o->zone[k] = run_zone_kept(n);
    }
    prism_step_end();
    prism_shutdown();
    return 0;
}

static bool report_unsampled(unsigned runs, unsigned pairs)
{
    hot_ctx c = { runs, pairs };
    uns_out o;
    memset(&o, 0, sizeof o);
    if (!check(in_child(unsampled_child, &c, &o, sizeof o) == 0, "unsampled child failed"))
        return false;
    char path[PATH_MAX], extra[160];
    profile_path(path, sizeof path, "unsampled");
    counts f = read_profile(path);
    double empty = median(o.empty, runs);
    row_ns("collect: empty loop", o.empty, runs, 2, "the same loop and sink, no calls", NULL);
    snprintf(extra, sizeof extra, "over the empty loop: %.2f ns (step %llu, rate 0.001)",
             median(o.pair, runs) - empty, (unsigned long long)o.step);
    row_ns("collect: pair, unsampled step", o.pair, runs, 2, extra, "<= 2 ns");
    snprintf(extra, sizeof extra, "over the empty loop: %.2f ns", median(o.zone, runs) - empty);
    row_ns("collect: ZONE, unsampled step", o.zone, runs, 2, extra, NULL);
    unlink(path);
    return check(o.on == 0 && o.step == 1, "step 1 was recording: not an unsampled step") &&
           check(f.ok && f.regions == 0 && f.steps == 2 && f.sampled_steps == 1,
                 "the unsampled step recorded regions, or steps are missing");
}

/* ------------------------------------------------------------------ */
/* 3. Writer throughput                                                */
/* ------------------------------------------------------------------ */

typedef struct tp_worker {
    uint32_t id;
    double rate;                    /* events/s for this thread, 0 = unpaced */
    uint64_t deadline_ns, start_ns;
    uint64_t events, end_ns;
    pthread_barrier_t *go;
    pthread_t th;
} tp_worker;

/* Push/pop in batches; paced: sleep whenever TP_AHEAD_NS ahead of the rate. */
static void *tp_main(void *arg)
{
    tp_worker *w = arg;
    uint32_t id = w->id;
    uint64_t done = 0, now;
    pthread_barrier_wait(w->go);
    uint64_t t0 = bench_now_ns(), end = t0 + w->deadline_ns;
    w->start_ns = t0;
    for (;;) {
        for (unsigned k = 0; k < TP_BATCH; k++) {
            prism_push_id(id);
            prism_pop();
        }
        done += 2 * TP_BATCH;
        now = bench_now_ns();
        if (now >= end)
            break;
        if (w->rate > 0) {
            uint64_t due = t0 + (uint64_t)((double)done * 1e9 / w->rate);
            if (due > now + TP_AHEAD_NS)
                sleep_ns(due - now);
        }
    }
    w->events = done;
    w->end_ns = now;
    return NULL;
}

typedef struct tp_ctx {
    double rate;                    /* total events/s, 0 = as fast as possible */
    char name[32];
} tp_ctx;

typedef struct tp_out {
    uint64_t events;                /* pushed + popped, recorded or dropped */
    double seconds, cpu_s;          /* producers' span; process CPU until shutdown */
} tp_out;

static int tp_child(void *vctx, void *vout)
{
    const tp_ctx *c = vctx;
    tp_out *o = vout;
    char path[PATH_MAX];
    prism_config cfg;
    prism_config_default(&cfg);     /* policy drop, default buffers */
    if (start_session(&cfg, c->name, path, sizeof path) != 0)
        return 1;
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);   /* inherited by the workers */
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, TP_THREADS);
    tp_worker w[TP_THREADS];
    char nm[32];
    for (unsigned i = 0; i < TP_THREADS; i++) {
        snprintf(nm, sizeof nm, "bench.tp.%u", i);
        w[i] = (tp_worker){ .id = prism_name(nm), .rate = c->rate / TP_THREADS,
                            .deadline_ns = (uint64_t)(TP_SECONDS * 1e9), .go = &go };
    }
    unsigned started = 0;
    for (; started < TP_THREADS; started++)
        if (pthread_create(&w[started].th, NULL, tp_main, &w[started]) != 0)
            break;
    if (started < TP_THREADS)
        return 1;               /* the others wait at the barrier; exit ends them */
    uint64_t first = UINT64_MAX, last = 0;
    for (unsigned i = 0; i < TP_THREADS; i++) {
        pthread_join(w[i].th, NULL);
        o->events += w[i].events;
        if (w[i].start_ns < first)
            first = w[i].start_ns;
        if (w[i].end_ns > last)
            last = w[i].end_ns;
    }
    o->seconds = (double)(last - first) * 1e-9;
    prism_shutdown();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    o->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    pthread_barrier_destroy(&go);
    return 0;
}

static bool report_throughput(void)
{
    static const double rates[] = { 5e6, 10e6, 20e6, 30e6, 40e6, 0 };
    const size_t nrates = sizeof rates / sizeof rates[0];
    double best_ok = 0;
    bool ok = true;
    printf("  writer: %u threads push/pop for %.1f s a run, policy drop, default buffers; "
           "rates in wall-clock time\n", TP_THREADS, TP_SECONDS);
    for (size_t i = 0; i < nrates; i++) {
        tp_ctx c = { .rate = rates[i] };
        tp_out o;
        memset(&o, 0, sizeof o);
        snprintf(c.name, sizeof c.name, "tp-%zu", i);
        char what[64], path[PATH_MAX], extra[200];
        if (rates[i] > 0)
            snprintf(what, sizeof what, "collect: paced at %.0f M ev/s", rates[i] / 1e6);
        else
            snprintf(what, sizeof what, "collect: unpaced (max)");
        if (in_child(tp_child, &c, &o, sizeof o) != 0) {
            ok = check(false, "throughput child failed");
            continue;
        }
        profile_path(path, sizeof path, c.name);
        counts f = read_profile(path);
        unlink(path);
        double achieved = o.seconds > 0 ? (double)o.events / o.seconds : 0;
        double lost_pct = o.events ? 100.0 * (double)f.dropped / (double)o.events : 0;
        snprintf(extra, sizeof extra,
                 "written %.2f M, dropped %llu (%.2f%%), %.2f bytes/event, cpu %.2f s",
                 (double)f.regions / 1e6, (unsigned long long)f.dropped, lost_pct,
                 f.regions ? (double)f.bytes / (double)f.regions : 0, o.cpu_s);
        row_value(what, achieved / 1e6, 1, "M events/s", "(1 run)", extra, NULL);
        ok &= check(f.ok && f.regions + f.dropped == o.events,
                    "written + dropped differs from the events pushed");
        if (f.dropped == 0 && achieved > best_ok)
            best_ok = achieved;
    }
    row_value("collect: max sustained, 0 drops", best_ok / 1e6, 1, "M events/s", NULL,
              "the highest rate above with 0 dropped", ">= 10 M/s from 2 threads");
    return ok;
}

/* ------------------------------------------------------------------ */
/* 4. trainloop, profiled against unprofiled                           */
/* ------------------------------------------------------------------ */

/* Spawn exe with argv (stdout to /dev/null) and wait: wall time in *sec,
 * the child's CPU time (user + system, all its threads) in *cpu. */
static int spawn_wait(const char *exe, char **argv, char **envp, double *sec, double *cpu)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int st = 0;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    fflush(stdout);
    uint64_t t0 = bench_now_ns();
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, envp);
    for (int i = 0; i < 10 && (rc == ETXTBSY || rc == EACCES || rc == ENOENT); i++) {
        sleep_ns(200000000u);       /* being relinked by a concurrent make */
        t0 = bench_now_ns();
        rc = posix_spawn(&pid, exe, &fa, NULL, argv, envp);
    }
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        printf("  !! cannot start %s: %s\n", exe, strerror(rc));
        return -1;
    }
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    *sec = (double)(bench_now_ns() - t0) * 1e-9;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    printf("  !! %s", exe);
    for (char **a = argv + 1; *a; a++)
        printf(" %s", *a);
    printf(": %s %d\n", WIFSIGNALED(st) ? "killed by signal" : "exit status",
           WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    return -1;
}

/* build/bench/collect_bench -> build/bin/trainloop (build-san too). */
static void trainloop_path(const char *argv0, char *buf, size_t n)
{
    const char *slash = strrchr(argv0, '/');
    if (slash)
        snprintf(buf, n, "%.*s/../bin/trainloop", (int)(slash - argv0), argv0);
    else
        snprintf(buf, n, "build/bin/trainloop");
}

/* The environment without PRISM_* (which would start or shape a session). */
static char **clean_env(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "PRISM_", 6) != 0)
            env[k++] = environ[i];
    env[k] = NULL;
    return env;
}

static bool report_trainloop(const char *argv0)
{
    char exe[PATH_MAX], out[PATH_MAX], steps[24], extra[200];
    trainloop_path(argv0, exe, sizeof exe);
    if (access(exe, X_OK) != 0) {
        printf("  %-*s skipped: trainloop not built (%s)\n", LABEL_W, "collect: trainloop overhead",
               exe);
        return true;
    }
    char **env = clean_env();
    if (!env)
        return check(false, "out of memory");
    profile_path(out, sizeof out, "trainloop");
    char a0[] = "trainloop", a_ep[] = "--epochs", a_one[] = "1", a_st[] = "--steps";
    char a_seed[] = "--seed", a_out[] = "--output", a_np[] = "--no-profile";
    char *prof[] = { a0, a_ep, a_one, a_st, steps, a_seed, a_one, a_out, out, NULL };
    char *bare[] = { a0, a_ep, a_one, a_st, steps, a_seed, a_one, a_np, NULL };

    /* calibrate: a short unprofiled run sets --steps for ~TL_TARGET_S a run */
    double t = 0, c, tp[TL_PAIRS], tu[TL_PAIRS], cp[TL_PAIRS], cu[TL_PAIRS];
    double to[TL_PAIRS], co[TL_PAIRS];          /* profiled, CPU sampler off */
    size_t nenv = 0;
    while (env[nenv])
        nenv++;
    char **env_off = calloc(nenv + 2, sizeof *env_off), cpu_off[] = "PRISM_CPU_INTERVAL_MS=0";
    if (!env_off) {
        free(env);
        return check(false, "out of memory");
    }
    memcpy(env_off, env, nenv * sizeof *env);
    env_off[nenv] = cpu_off;
    unsigned cal = 10, nsteps;
    snprintf(steps, sizeof steps, "%u", cal);
    bool ok = spawn_wait(exe, bare, env, &t, &c) == 0;
    nsteps = t > 0 ? (unsigned)(TL_TARGET_S / (t / cal)) : 100;
    nsteps = nsteps < 20 ? 20 : nsteps > 100000 ? 100000 : nsteps;
    snprintf(steps, sizeof steps, "%u", nsteps);
    /* profiled, profiled without the CPU sampler, unprofiled: interleaved,
     * the order rotated every round so drift cancels */
    for (unsigned i = 0; ok && i < TL_PAIRS; i++)
        for (unsigned j = 0; ok && j < 3; j++) {
            unsigned k = (i + j) % 3;
            ok = k == 0   ? spawn_wait(exe, prof, env, &tp[i], &cp[i]) == 0
                 : k == 1 ? spawn_wait(exe, prof, env_off, &to[i], &co[i]) == 0
                          : spawn_wait(exe, bare, env, &tu[i], &cu[i]) == 0;
        }
    free(env);
    free(env_off);
    if (!ok) {
        unlink(out);
        return check(false, "a trainloop run failed");
    }
    counts f = read_profile(out);
    unlink(out);
    printf("  trainloop --epochs 1 --steps %u, %u rounds of 3 runs interleaved "
           "(profile: %llu regions, %llu dropped, %.1f KB)\n", nsteps, TL_PAIRS,
           (unsigned long long)f.regions, (unsigned long long)f.dropped,
           (double)f.bytes / 1e3);
    bench_stat sp = bench_stat_of(tp, TL_PAIRS), su = bench_stat_of(tu, TL_PAIRS);
    double mcp = median(cp, TL_PAIRS), mcu = median(cu, TL_PAIRS);
    char how[64];
    snprintf(how, sizeof how, "(median of %u, best %.3f)", TL_PAIRS, su.min);
    snprintf(extra, sizeof extra, "wall; cpu %.3f s", mcu);
    row_value("collect: trainloop --no-profile", su.median, 3, "s", how, extra, NULL);
    snprintf(how, sizeof how, "(median of %u, best %.3f)", TL_PAIRS, sp.min);
    snprintf(extra, sizeof extra, "wall; cpu %.3f s (writer thread included)", mcp);
    row_value("collect: trainloop profiled", sp.median, 3, "s", how, extra, NULL);
    snprintf(extra, sizeof extra, "best/best %+.2f %%; cpu time %+.2f %%",
             (sp.min / su.min - 1) * 100, (mcp / mcu - 1) * 100);
    row_value("collect: trainloop overhead", (sp.median / su.median - 1) * 100, 2, "%",
              "(wall, median/median)", extra, "<= 1 %");
    bench_stat so = bench_stat_of(to, TL_PAIRS);
    double mco = median(co, TL_PAIRS);
    snprintf(how, sizeof how, "(median of %u, best %.3f)", TL_PAIRS, so.min);
    snprintf(extra, sizeof extra, "wall; cpu %.3f s; PRISM_CPU_INTERVAL_MS=0", mco);
    row_value("collect: trainloop, CPU sampler off", so.median, 3, "s", how, extra, NULL);
    snprintf(extra, sizeof extra, "best/best %+.2f %%; cpu time %+.2f %%; overhead off %+.2f %%",
             (sp.min / so.min - 1) * 100, (mcp / mco - 1) * 100, (so.median / su.median - 1) * 100);
    row_value("collect: CPU sampler's cost", (sp.median / so.median - 1) * 100, 2, "%",
              "(wall, on/off medians)", extra, NULL);
    if (hot_fig.have && su.median > 0) {
        /* The same from the hot-path figures: what one run records, priced */
        double per_step = (double)f.regions / 2 / nsteps * hot_fig.pair_ns +
                          (double)f.counters / nsteps * hot_fig.counter_ns + hot_fig.step_ns;
        double fixed = (hot_fig.init_ms + hot_fig.shutdown_ms) * 1e-3;
        double est = (per_step * 1e-9 * nsteps + fixed) / su.median * 100;
        snprintf(extra, sizeof extra, "%.1f us a step of %.1f ms, init+shutdown %.1f ms a run",
                 per_step * 1e-3, su.median / nsteps * 1e3, fixed * 1e3);
        row_value("  estimate from the hot path", est, 2, "%", "(per run)", extra, NULL);
    }
    return check(f.ok && f.regions > 0, "the trainloop profile did not read back cleanly");
}

/* ------------------------------------------------------------------ */


int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : DEF_RUNS;
    unsigned pairs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : DEF_PAIRS;
    if (runs < 1 || runs > BENCH_MAX_RUNS)
        runs = DEF_RUNS;
    if (pairs < 1000 || pairs > 100000000)
        pairs = DEF_PAIRS;
    const char *td = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/prism-collect-bench-XXXXXX", td && *td ? td : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "collect_bench: cannot create a directory %s: %s\n", tmpdir,
                strerror(errno));
        return 1;
    }
    uint64_t t0 = bench_now_ns();
    printf("collect_bench: libcollect hot path, writer throughput, trainloop overhead\n");
    double load[3] = { 0, 0, 0 };
    if (getloadavg(load, 3) < 0)
        load[0] = -1;
    printf("  figures: median of %u timed runs after one warm-up; best = fastest run; "
           "each session in its own child process; %ld CPUs, load average %.2f\n", runs,
           sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    const char *only = argc > 3 ? argv[3] : "hot,unsampled,writer,trainloop";
    bool ok = true;
    if (strstr(only, "hot"))
        ok &= report_hot(runs, pairs);
    if (strstr(only, "unsampled"))
        ok &= report_unsampled(runs, pairs);
    if (strstr(only, "writer"))
        ok &= report_throughput();
    if (strstr(only, "trainloop"))
        ok &= report_trainloop(argv[0]);
    bench_remove_dir(tmpdir);
    printf("collect_bench: done in %.1f s\n", (double)(bench_now_ns() - t0) * 1e-9);
    return ok ? 0 : 1;      /* wrong results, never slow ones, fail the run */
}
