/*
 * writer_load_bench.c - the writer thread under load.  1, 2 and 4
 * producer threads push nested regions (depth 3) as fast as they can into
 * default buffers for ~1 s a run:
 *
 *   1. policy wait, unpaced: a producer that finds no free buffer waits
 *      for the writer, so nothing is dropped and the rate is the highest
 *      one the process sustains with 0 drops: producers and writer share
 *      the machine's cores, so it rises as the writer's cost per event
 *      falls.  (A paced run under policy drop can show 0 drops above that
 *      rate for a second, while 64 MiB of buffers fill up; this cannot.)
 *   2. policy drop, paced at a total of PACED_RATE events/s: the writer
 *      keeps up, and its cost is what a steady rate costs.
 *
 * For each: events/s (written, read back from the file: 0 dropped is
 * checked), the writer's CPU per event (the process's CPU time after
 * prism_shutdown, the exited writer included, less the producers' and the
 * main thread's own; the sampler's passes and memory samples count as the
 * writer's), and the producers' involuntary context switches (RUSAGE_THREAD
 * ru_nivcsw) per thread and second.  Medians of RUNS runs, the first run
 * of each row a warm-up.  Figures only: a wrong result (events lost, a
 * failed child) fails the run, a slow one never does.
 *
 *   usage: writer_load_bench [runs [seconds [modes [paced M/s]]]]
 *   modes: a list of wait, drop (default: both); paced: 10 unless given
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
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

#define DEF_RUNS     5u
#define MAX_THREADS  4u
#define BATCH        4u             /* outer regions between clock checks  */
#define INNER        8u             /* [push, push, pop, pop] per outer     */
#define PACED_RATE   10e6           /* events/s, all producers together     */
#define AHEAD_NS     100000u        /* paced: sleep when this far ahead     */
#define LABEL_W      34

static char tmpdir[PATH_MAX / 2];

#include "collect_common.h"

typedef struct worker {
    uint32_t outer, mid, inner;     /* region names of this thread          */
    double rate;                    /* events/s, 0 = unpaced                */
    uint64_t deadline_ns;
    uint64_t events, start_ns, end_ns;
    double cpu_s;                   /* its own CPU time                     */
    uint64_t nivcsw;
    pthread_barrier_t *go;
    pthread_t th;
} worker;

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Nested regions: outer { (mid { inner }) x INNER }, 2 + 4 * INNER events. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    uint64_t done = 0, now;
    const uint64_t per_outer = 2 + 4 * INNER;
    pthread_barrier_wait(w->go);
    uint64_t t0 = bench_now_ns(), end = t0 + w->deadline_ns;
    w->start_ns = t0;
    for (;;) {
        for (unsigned b = 0; b < BATCH; b++) {
            prism_push_id(w->outer);
            for (unsigned k = 0; k < INNER; k++) {
                prism_push_id(w->mid);
                prism_push_id(w->inner);
                prism_pop();
                prism_pop();
            }
            prism_pop();
        }
        done += BATCH * per_outer;
        now = bench_now_ns();
        if (now >= end)
            break;
        if (w->rate > 0) {
            uint64_t due = t0 + (uint64_t)((double)done * 1e9 / w->rate);
            if (due > now + AHEAD_NS)
                sleep_ns(due - now);
        }
    }
    w->events = done;
    w->end_ns = now;
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    w->cpu_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    w->nivcsw = (uint64_t)ru.ru_nivcsw;
    return NULL;
}

typedef struct ld_ctx {
    unsigned threads;
    double rate;                    /* total events/s, 0 = unpaced          */
    prism_policy policy;
    double seconds;
    char name[32];
} ld_ctx;

typedef struct ld_out {
    uint64_t events;                /* pushed and popped                    */
    double seconds;                 /* the producers' span                  */
    double writer_cpu_s;            /* process - producers - main           */
    double nivcsw_per_s;            /* per producer thread                  */
    unsigned tasks;                 /* threads besides the producers        */
} ld_out;

static unsigned count_tasks(void)
{
    DIR *d = opendir("/proc/self/task");
    unsigned n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static int ld_child(void *vctx, void *vout)
{
    const ld_ctx *c = vctx;
    ld_out *o = vout;
    char path[PATH_MAX], nm[48];
    prism_config cfg;
    prism_config_default(&cfg);     /* default buffers, flush, samplers */
    prism_config_from_env(&cfg);    /* PRISM_BUFFER_EVENTS=... to try others */
    cfg.policy = c->policy;
    if (start_session(&cfg, c->name, path, sizeof path) != 0)
        return 1;
    if (c->rate > 0)
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);   /* inherited */
    o->tasks = count_tasks();       /* main + the writer, unless more */
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, c->threads);
    worker w[MAX_THREADS];
    for (unsigned i = 0; i < c->threads; i++) {
        w[i] = (worker){ .rate = c->rate / c->threads,
                         .deadline_ns = (uint64_t)(c->seconds * 1e9), .go = &go };
        snprintf(nm, sizeof nm, "load.%u.outer", i);
        w[i].outer = prism_name(nm);
        snprintf(nm, sizeof nm, "load.%u.mid", i);
        w[i].mid = prism_name(nm);
        snprintf(nm, sizeof nm, "load.%u.inner", i);
        w[i].inner = prism_name(nm);
    }
    for (unsigned i = 0; i < c->threads; i++)
        if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0)
            return 1;               /* the others wait at the barrier; exit ends them */
    uint64_t first = UINT64_MAX, last = 0;
    double prod_cpu = 0, nivcsw = 0;
    for (unsigned i = 0; i < c->threads; i++) {
        pthread_join(w[i].th, NULL);
        o->events += w[i].events;
        prod_cpu += w[i].cpu_s;
        first = w[i].start_ns < first ? w[i].start_ns : first;
        last = w[i].end_ns > last ? w[i].end_ns : last;
    }
    o->seconds = (double)(last - first) * 1e-9;
    for (unsigned i = 0; i < c->threads; i++)
        nivcsw += (double)w[i].nivcsw / ((double)(w[i].end_ns - w[i].start_ns) * 1e-9);
    o->nivcsw_per_s = nivcsw / c->threads;
    prism_shutdown();
    struct rusage self, me;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_THREAD, &me);
    o->writer_cpu_s = tv_s(self.ru_utime) + tv_s(self.ru_stime) - prod_cpu -
                      tv_s(me.ru_utime) - tv_s(me.ru_stime);
    pthread_barrier_destroy(&go);
    return 0;
}

/* One row: `runs` timed runs after a warm-up, medians. */
static bool row(const char *mode, unsigned threads, double rate, prism_policy policy,
                unsigned runs, double seconds)
{
    double rate_v[BENCH_MAX_RUNS], ns_ev[BENCH_MAX_RUNS], csw[BENCH_MAX_RUNS];
    double bpe = 0;
    unsigned tasks = 0;
    bool ok = true;
    for (unsigned r = 0; r <= runs; r++) {
        ld_ctx c = { threads, rate, policy, seconds, "" };
        snprintf(c.name, sizeof c.name, "load-%u-%u", threads, r);
        ld_out o;
        memset(&o, 0, sizeof o);
        char path[PATH_MAX];
        profile_path(path, sizeof path, c.name);
        if (in_child(ld_child, &c, &o, sizeof o) != 0) {
            unlink(path);
            return check(false, "a load child failed");
        }
        counts f = read_profile(path);
        unlink(path);
        ok &= check(f.ok && f.regions + f.dropped == o.events,
                    "written + dropped differs from the events pushed");
        if (policy == PRISM_POLICY_WAIT)
            ok &= check(f.dropped == 0, "events dropped under policy wait");
        if (r == 0)
            continue;
        rate_v[r - 1] = o.seconds > 0 ? (double)f.regions / o.seconds : 0;
        ns_ev[r - 1] = f.regions ? o.writer_cpu_s * 1e9 / (double)f.regions : 0;
        csw[r - 1] = o.nivcsw_per_s;
        bpe = f.regions ? (double)f.bytes / (double)f.regions : 0;
        tasks = o.tasks;
    }
    char what[64], extra[200];
    snprintf(what, sizeof what, "writer: %s, %u thread%s", mode, threads, threads > 1 ? "s" : "");
    bench_stat sr = bench_stat_of(rate_v, runs), sn = bench_stat_of(ns_ev, runs),
               sc = bench_stat_of(csw, runs);
    snprintf(extra, sizeof extra,
             "writer %.2f ns/event (best %.2f); hot threads %.0f invol. csw/s (best %.0f); "
             "%.2f bytes/event%s", sn.median, sn.min, sc.median, sc.min, bpe,
             tasks > 2 ? "; more threads than main + writer: their CPU counts as the writer's"
                       : "");
    double top = 0;                 /* the best rate is the highest */
    for (unsigned r = 0; r < runs; r++)
        top = rate_v[r] > top ? rate_v[r] : top;
    char how[64];
    snprintf(how, sizeof how, "(median of %u, best %.1f)", sr.runs, top / 1e6);
    row_value(what, median(rate_v, runs) / 1e6, 1, "M events/s", how, extra, NULL);
    (void)row_ns;                   /* collect_common.h: not used here */
    return ok;
}


int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : DEF_RUNS;
    double seconds = argc > 2 ? strtod(argv[2], NULL) : 1.0;
    if (runs < 1 || runs > BENCH_MAX_RUNS)
        runs = DEF_RUNS;
    if (!(seconds >= 0.1 && seconds <= 60))
        seconds = 1.0;
    const char *td = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/prism-writer-load-XXXXXX", td && *td ? td : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "writer_load_bench: cannot create a directory %s: %s\n", tmpdir,
                strerror(errno));
        return 1;
    }
    uint64_t t0 = bench_now_ns();
    double load[3] = { 0, 0, 0 };
    if (getloadavg(load, 3) < 0)
        load[0] = -1;
    printf("writer_load_bench: producers push nested regions (depth 3) for %.1f s a run, "
           "default buffers; medians of %u runs after a warm-up; %ld CPUs, load average "
           "%.2f\n", seconds, runs, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    static const unsigned nthreads[] = { 1, 2, 4 };
    const char *modes = argc > 3 ? argv[3] : "wait,drop";
    bool ok = true;
    for (size_t i = 0; i < 3 && strstr(modes, "wait"); i++)
        ok &= row("wait, unpaced", nthreads[i], 0, PRISM_POLICY_WAIT, runs, seconds);
    double paced = argc > 4 ? strtod(argv[4], NULL) * 1e6 : PACED_RATE;
    if (!(paced >= 1e3 && paced <= 1e9))
        paced = PACED_RATE;
    char mode[48];
    snprintf(mode, sizeof mode, "drop, %g M/s", paced / 1e6);
    for (size_t i = 0; i < 3 && strstr(modes, "drop"); i++)
        ok &= row(mode, nthreads[i], paced, PRISM_POLICY_DROP, runs, seconds);
    bench_remove_dir(tmpdir);
    printf("writer_load_bench: done in %.1f s\n", (double)(bench_now_ns() - t0) * 1e-9);
    return ok ? 0 : 1;
}
