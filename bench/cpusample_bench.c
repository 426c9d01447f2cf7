/*
 * cpusample_bench.c - the per-thread on-CPU sampler (libcollect/cpusample.c).
 *
 *   1. the cost of a sampling pass, per thread and sample: pc_cpu_pass() over
 *      N = 1, 4, 16 threads (idle, blocked in a pipe read) on a session of
 *      its own, runs of the three sizes interleaved; the writer thread's CPU
 *      time (so that being preempted on a busy machine does not count) and
 *      its wall time; beside it, its two system calls alone: a pread() of a
 *      thread's schedstat and a read of the thread's CPU clock (which the
 *      sampler makes first, to bring schedstat's on-CPU count up to date),
 *      and the reads the sampler adds for a thread that ran in the interval
 *      (its stat: its state at the sample) and for one found queued (its
 *      status: preempted, or woken from a wait?);
 *   2. what the samples cost in the file: a session at the defaults with
 *      4 recording threads for about a second, read back: bytes per CPU
 *      sample (chunk framing included) and samples per second;
 *   3. what the sampler costs the process: sessions at the defaults with
 *      the sampler on and off (cpu_interval_ms 5 and 0), runs alternated;
 *      5 recorded threads (one working, three blocked, main waiting); the
 *      writer thread's CPU time per second of run: the process's CPU time
 *      less what the recorded threads measured of their own.
 *
 * The collection overhead with the sampler on and off (PRISM_CPU_INTERVAL_MS
 * = 0) on the trainloop workload is in collect_bench ("trainloop").
 * Figures only: wrong results fail the run, slow ones never do.
 *
 *   usage: cpusample_bench [runs [passes]]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "prism/collect.h"
#include "prism/profile.h"
#include "../libcollect/cpusample.h"

#define DEF_RUNS   7u
#define DEF_PASSES 2000u
#define MAX_N      16u

/* ------------------------------------------------------------------ */
/* 1. A pass over N idle threads                                       */
/* ------------------------------------------------------------------ */

typedef struct idle {
    pthread_t th;
    _Atomic uint64_t tid;
    int ready[2], go[2];
} idle;

static void *idle_main(void *arg)
{
    idle *t = arg;
    char c = 1;
    atomic_store(&t->tid, (uint64_t)syscall(SYS_gettid));
    if (write(t->ready[1], &c, 1) != 1)
        return NULL;
    while (read(t->go[0], &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static bool idle_start(idle *t)
{
    char c;
    memset(t, 0, sizeof *t);
    if (pipe(t->ready) || pipe(t->go) || pthread_create(&t->th, NULL, idle_main, t))
        return false;
    return read(t->ready[0], &c, 1) == 1;
}

static void idle_end(idle *t)
{
    char c = 1;
    if (write(t->go[1], &c, 1) == 1)
        pthread_join(t->th, NULL);
    for (int i = 0; i < 2; i++) {
        close(t->ready[i]);
        close(t->go[i]);
    }
}

/* A session holding n thread records, the way buffers.c makes them. */
typedef struct rig {
    session s;
    idle t[MAX_N];
    prism__thread *rec[MAX_N];
    cpu_sampler *c;
    unsigned n;
} rig;

static bool rig_start(rig *r, unsigned n)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->s.lock, NULL);
    r->s.cfg.cpu_interval_ms = 5;
    r->n = n;
    for (unsigned i = 0; i < n; i++) {
        if (!idle_start(&r->t[i]) || !(r->rec[i] = calloc(1, sizeof *r->rec[i])))
            return false;
        prism__thread *th = r->rec[i];
        th->stream = i + 1;
        th->os_tid = atomic_load(&r->t[i].tid);
        th->cpu.clock_ok = pthread_getcpuclockid(r->t[i].th, &th->cpu.clock) == 0;
        th->next = r->s.threads;
        r->s.threads = th;
    }
    r->c = pc_cpu_new(&r->s);
    if (!r->c || !pc_cpu_period_ns(r->c))
        return false;
    pc_cpu_pass(r->c);                     /* open the files: not timed */
    pc_cpu_drained(r->c);
    return true;
}

static void rig_end(rig *r)
{
    pc_cpu_free(r->c);
    for (unsigned i = 0; i < r->n; i++) {
        idle_end(&r->t[i]);
        free(r->rec[i]);
    }
    pthread_mutex_destroy(&r->s.lock);
}

/* passes over the rig: ns per thread and sample, CPU and wall; false when
 * a pass did not sample every thread. */
static bool time_passes(rig *r, unsigned passes, double *cpu_ns, double *wall_ns)
{
    bool ok = true;
    uint64_t c0 = bench_thread_ns(), w0 = bench_now_ns();
    for (unsigned k = 0; k < passes; k++) {
        uint64_t t = prism__now();
        pc_cpu_pass(r->c);
        /* every thread read (an idle one's unchanged reading is held back,
         * not recorded, but its reading's time moves) */
        for (unsigned i = 0; i < r->n; i++)
            ok &= r->rec[i]->cpu.read_ticks >= t;
        pc_cpu_drained(r->c);
    }
    uint64_t c1 = bench_thread_ns(), w1 = bench_now_ns();
    *cpu_ns = (double)(c1 - c0) / ((double)passes * r->n);
    *wall_ns = (double)(w1 - w0) / ((double)passes * r->n);
    return ok;
}

static bool report_pass(unsigned runs, unsigned passes)
{
    static const unsigned ns[] = { 1, 4, 16 };
    static rig rigs[3];
    double cpu[3][BENCH_MAX_RUNS], wall[3][BENCH_MAX_RUNS];
    for (int i = 0; i < 3; i++)
        if (!rig_start(&rigs[i], ns[i])) {
            printf("  !! cannot set up %u threads to sample\n", ns[i]);
            return false;
        }
    const char *status = pc_cpu_status_changed(rigs[0].c);
    printf("  sampler: %s; threads blocked in a pipe read; %u passes a run, sizes "
           "interleaved\n", status ? status : "?", passes);
    bool ok = true;
    for (int i = 0; i < 3; i++)                 /* warm-up */
        ok &= time_passes(&rigs[i], passes / 10 + 1, &cpu[i][0], &wall[i][0]);
    for (unsigned run = 0; run < runs; run++)
        for (int j = 0; j < 3; j++) {
            int i = (int)(run + (unsigned)j) % 3;      /* rotate the order */
            ok &= time_passes(&rigs[i], passes, &cpu[i][run], &wall[i][run]);
        }
    for (int i = 0; i < 3; i++) {
        bench_stat sc = bench_stat_of(cpu[i], runs), sw = bench_stat_of(wall[i], runs);
        char what[64], how[64], extra[96];
        snprintf(what, sizeof what, "cpu: pass over %u thread%s", ns[i], ns[i] > 1 ? "s" : "");
        snprintf(how, sizeof how, "(median of %u, best %.0f)", runs, sc.min);
        snprintf(extra, sizeof extra, "writer CPU time; wall %.0f ns; a pass %.1f us", sw.median,
                 sc.median * ns[i] / 1e3);
        printf("  %-30s %8.0f %-12s", what, sc.median, "ns/thread");
        bench_row_tail(how, extra, NULL);
    }
    /* the parts: the two reads on one thread, interleaved */
    double rd[BENCH_MAX_RUNS], ck[BENCH_MAX_RUNS], st[BENCH_MAX_RUNS];
    prism__thread *th = rigs[0].rec[0];
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%llu/schedstat", (unsigned long long)th->os_tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/self/task/%llu/status", (unsigned long long)th->os_tid);
    int sfd = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/self/task/%llu/stat", (unsigned long long)th->os_tid);
    int tfd = open(path, O_RDONLY | O_CLOEXEC);
    double tt[BENCH_MAX_RUNS];
    for (unsigned run = 0; fd >= 0 && sfd >= 0 && tfd >= 0 && run < runs; run++) {
        cpu_reading r;
        struct timespec ts;
        char buf[4096];
        uint64_t t0 = bench_thread_ns();
        for (unsigned k = 0; k < passes; k++)
            ok &= pc_cpu_read_stat(fd, &r) == CPU_READ_OK;
        uint64_t t1 = bench_thread_ns();
        for (unsigned k = 0; k < passes; k++)
            ok &= clock_gettime(th->cpu.clock, &ts) == 0;
        uint64_t t2 = bench_thread_ns();
        for (unsigned k = 0; k < passes; k++)
            ok &= pread(sfd, buf, sizeof buf, 0) > 0;
        uint64_t t3 = bench_thread_ns();
        for (unsigned k = 0; k < passes; k++)
            ok &= pread(tfd, buf, 512, 0) > 0;
        uint64_t t4 = bench_thread_ns();
        tt[run] = (double)(t4 - t3) / passes;
        rd[run] = (double)(t1 - t0) / passes;
        ck[run] = (double)(t2 - t1) / passes;
        st[run] = (double)(t3 - t2) / passes;
    }
    if (sfd >= 0)
        close(sfd);
    if (tfd >= 0)
        close(tfd);
    if (fd >= 0) {
        close(fd);
        bench_stat sr = bench_stat_of(rd, runs), sk = bench_stat_of(ck, runs);
        char how[64];
        snprintf(how, sizeof how, "(median of %u, best %.0f)", runs, sr.min);
        printf("  %-30s %8.0f %-12s", "  of which pread schedstat", sr.median, "ns");
        bench_row_tail(how, "the file alone", NULL);
        snprintf(how, sizeof how, "(median of %u, best %.0f)", runs, sk.min);
        printf("  %-30s %8.0f %-12s", "  and the thread's clock", sk.median, "ns");
        bench_row_tail(how, "refreshes schedstat's on-CPU count", NULL);
        if (sfd >= 0 && tfd >= 0) {
            bench_stat ts = bench_stat_of(tt, runs), ss = bench_stat_of(st, runs);
            snprintf(how, sizeof how, "(median of %u, best %.0f)", runs, ts.min);
            printf("  %-30s %8.0f %-12s", "  a stat read: its state", ts.median, "ns");
            bench_row_tail(how, "a thread that ran in the interval (or was queued)", NULL);
            snprintf(how, sizeof how, "(median of %u, best %.0f)", runs, ss.min);
            printf("  %-30s %8.0f %-12s", "  a status read, when queued", ss.median, "ns");
            bench_row_tail(how, "its voluntary switches: preempted, or woken?", NULL);
        }
    }
    for (int i = 0; i < 3; i++)
        rig_end(&rigs[i]);
    if (!ok)
        printf("  !! a pass missed a thread\n");
    return ok;
}

/* ------------------------------------------------------------------ */
/* 2. Bytes per sample in a real session                               */
/* ------------------------------------------------------------------ */

#define SESSION_THREADS 4u
#define SESSION_NS 1000000000ull

typedef struct tally {
    uint64_t cpu_bytes, cpu_chunks, samples, bytes;
    uint64_t first_ts, last_ts;
    bool bad;
} tally;

static void t_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    tally *t = ctx;
    if (!t->samples && n)
        t->first_ts = s[0].ts;
    if (n)
        t->last_ts = s[n - 1].ts;
    t->samples += n;
}

static void t_chunk(void *ctx, const prism_chunk_info *c)
{
    tally *t = ctx;
    t->bytes += c->length;
    if (c->status != PRISM_CHUNK_OK)
        t->bad = true;
    else if (c->kind == PRISM_CHUNK_CPU) {
        t->cpu_bytes += c->length;
        t->cpu_chunks++;
    }
}

static void *worker(void *arg)
{
    (void)arg;
    uint32_t id = prism_name("work");
    uint64_t end = bench_now_ns() + SESSION_NS;
    while (bench_now_ns() < end) {
        prism_push_id(id);
        volatile unsigned x = 0;
        for (unsigned i = 0; i < 20000; i++)
            x = x + i;
        prism_pop();
    }
    return NULL;
}

static int session_child(const char *path)
{
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    if (prism_init(&c) != 0)
        return 1;
    pthread_t th[SESSION_THREADS];
    for (unsigned i = 0; i < SESSION_THREADS; i++)
        if (pthread_create(&th[i], NULL, worker, NULL))
            return 1;
    for (unsigned i = 0; i < SESSION_THREADS; i++)
        pthread_join(th[i], NULL);
    prism_shutdown();
    return 0;
}

static bool report_file(void)
{
    char path[256];
    const char *td = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/prism-cpusample-bench-%ld.cbor", td && *td ? td : "/tmp",
             (long)getpid());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(session_child(path));
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    tally t = { 0 };
    prism_reader_callbacks cb = { .cpu = t_cpu, .chunk = t_chunk };
    prism_reader *r = NULL;
    bool ok = pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
              prism_read_file(path, &cb, &t, &r) == PRISM_OK && !t.bad && t.samples > 0;
    prism_reader_free(r);
    unlink(path);
    if (!ok) {
        printf("  !! the session's profile did not read back with CPU samples\n");
        return false;
    }
    char extra[128];
    double secs = (double)(t.last_ts - t.first_ts) * 1e-9;
    snprintf(extra, sizeof extra, "%llu samples in %llu chunks; %.0f samples/s; %.1f %% of %.0f KB",
             (unsigned long long)t.samples, (unsigned long long)t.cpu_chunks,
             secs > 0 ? (double)t.samples / secs : 0, 100.0 * (double)t.cpu_bytes / (double)t.bytes,
             (double)t.bytes / 1e3);
    printf("  defaults, %u recording threads + main, ~%.1f s:\n", SESSION_THREADS,
           (double)SESSION_NS * 1e-9);
    bench_row_value("cpu: bytes per sample", (double)t.cpu_bytes / (double)t.samples, "B",
                    extra, "a few bytes");
    return true;
}

/* ------------------------------------------------------------------ */
/* 3. The writer's CPU time with the sampler on and off                */
/* ------------------------------------------------------------------ */

#define COST_NS 500000000ull            /* a run */
#define COST_IDLE 3u

typedef struct cost_share {
    _Atomic uint64_t own_ns;            /* CPU time the recorded threads used */
    int go[2];
} cost_share;

static void *cost_idle(void *arg)
{
    cost_share *c = arg;
    char b;
    prism_thread_name("idle");
    while (read(c->go[0], &b, 1) < 0 && errno == EINTR)
        ;
    atomic_fetch_add(&c->own_ns, bench_thread_ns());
    return NULL;
}

static void *cost_work(void *arg)
{
    cost_share *c = arg;
    uint32_t id = prism_name("work");
    uint64_t end = bench_now_ns() + COST_NS;
    while (bench_now_ns() < end) {
        prism_push_id(id);
        volatile unsigned x = 0;
        for (unsigned i = 0; i < 5000; i++)
            x = x + i;
        prism_pop();
    }
    atomic_fetch_add(&c->own_ns, bench_thread_ns());
    return NULL;
}

/* One run in a child: the writer's CPU ns per s of wall, through a pipe. */
static double cost_run(uint32_t interval_ms)
{
    int p[2];
    if (pipe(p))
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char path[256];
        const char *td = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/prism-cpusample-cost-%ld.cbor", td && *td ? td : "/tmp",
                 (long)getpid());
        static cost_share c;
        prism_config cfg;
        prism_config_default(&cfg);
        cfg.output = path;
        cfg.cpu_interval_ms = interval_ms;
        double v = -1;
        pthread_t th[COST_IDLE + 1];
        if (pipe(c.go) == 0 && prism_init(&cfg) == 0) {
            prism_thread_name("main");
            uint64_t w0 = bench_now_ns();
            for (unsigned i = 0; i < COST_IDLE; i++)
                pthread_create(&th[i], NULL, cost_idle, &c);
            pthread_create(&th[COST_IDLE], NULL, cost_work, &c);
            pthread_join(th[COST_IDLE], NULL);
            if (write(c.go[1], "xxxx", COST_IDLE) != COST_IDLE)
                _exit(1);
            for (unsigned i = 0; i < COST_IDLE; i++)
                pthread_join(th[i], NULL);
            prism_shutdown();
            uint64_t w1 = bench_now_ns();
            struct timespec t;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
            uint64_t all = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
            uint64_t own = atomic_load(&c.own_ns) + bench_thread_ns();
            v = all > own ? (double)(all - own) / ((double)(w1 - w0) * 1e-9) : 0;
        }
        unlink(path);
        _exit(write(p[1], &v, sizeof v) == sizeof v ? 0 : 1);
    }
    close(p[1]);
    double v = -1;
    if (pid < 0 || read(p[0], &v, sizeof v) != sizeof v)
        v = -1;
    close(p[0]);
    int st;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return v;
}

static bool report_cost(unsigned runs)
{
    double on[BENCH_MAX_RUNS], off[BENCH_MAX_RUNS];
    bool ok = true;
    for (unsigned i = 0; i < runs; i++) {
        bool first_on = i % 2 == 0;             /* alternate the order */
        double a = cost_run(first_on ? 5 : 0), b = cost_run(first_on ? 0 : 5);
        on[i] = first_on ? a : b;
        off[i] = first_on ? b : a;
        ok &= on[i] >= 0 && off[i] >= 0;
    }
    if (!ok) {
        printf("  !! a session run failed\n");
        return false;
    }
    bench_stat son = bench_stat_of(on, runs), soff = bench_stat_of(off, runs);
    printf("  writer thread's CPU time, %u recorded threads (1 working, %u blocked, main), "
           "%.1f s runs alternated:\n", COST_IDLE + 2, COST_IDLE, (double)COST_NS * 1e-9);
    char how[64], extra[96];
    snprintf(how, sizeof how, "(median of %u, best %.2f)", runs, soff.min / 1e6);
    printf("  %-30s %8.2f %-12s", "cpu: writer, sampler off", soff.median / 1e6, "ms/s");
    bench_row_tail(how, "PRISM_CPU_INTERVAL_MS=0", NULL);
    snprintf(how, sizeof how, "(median of %u, best %.2f)", runs, son.min / 1e6);
    printf("  %-30s %8.2f %-12s", "cpu: writer, sampler on", son.median / 1e6, "ms/s");
    bench_row_tail(how, "the default, 5 ms", NULL);
    double d = son.median - soff.median;
    snprintf(extra, sizeof extra, "%.1f us a pass of %u threads (200 passes/s)", d / 200 / 1e3,
             COST_IDLE + 2);
    printf("  %-30s %8.3f %-12s", "cpu: the sampler's share", d / 1e7, "% of a core");
    bench_row_tail("(medians, on - off)", extra, NULL);
    return true;
}

int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : DEF_RUNS;
    unsigned passes = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : DEF_PASSES;
    if (runs < 1 || runs > BENCH_MAX_RUNS)
        runs = DEF_RUNS;
    if (passes < 10 || passes > 10000000)
        passes = DEF_PASSES;
    uint64_t t0 = bench_now_ns();
    printf("cpusample_bench: the per-thread on-CPU sampler: a pass's cost, bytes per sample\n");
    bool ok = report_pass(runs, passes);
    ok &= report_file();
    ok &= report_cost(runs);
    printf("cpusample_bench: done in %.1f s\n", (double)(bench_now_ns() - t0) * 1e-9);
    return ok ? 0 : 1;
}
