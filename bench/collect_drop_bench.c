/*
 * collect_drop_bench.c - what an event costs when it is dropped, beside
 * what it costs when it is recorded.
 *
 * A dropping thread is made for sure: the session writes into a FIFO that
 * nobody reads until the end and has two buffers for the whole process, so
 * once they are full and the writer sits in write(), no buffer comes back
 * and every event is dropped.  In that state, interleaved in each round,
 * with the thread's CPU time:
 *   - two raw clock reads (prism__now() twice: the baseline),
 *   - a push/pop pair by id,
 *   - a 3-level nest of 4 regions (outer > middle > inner, outer > sibling),
 *   - a mark;
 * and in a second session, recording (policy wait, buffers to spare), the
 * same pair and nest.  Figures are medians over the rounds, per event
 * (a pair is two), and per dropped event as a multiple of a recorded one.
 * The dropped session's profile is read back: it must be sound and account
 * for the drops (figures only: slow runs never fail; wrong ones do).
 *
 *   usage: collect_drop_bench [runs [pairs]]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "prism/collect.h"
#include "prism/profile.h"

#define DEF_RUNS   7u
#define DEF_PAIRS  200000u
#define WARM_PAIRS 400000u          /* fills both buffers many times over    */
#define LABEL_W    34

static char tmpdir[PATH_MAX / 2];

#include "collect_common.h"
#include "writer_probe.h"

enum { K_CLOCK2, K_PAIR, K_NEST, K_MARK, K_COUNT };

typedef struct drop_out {
    double ns[K_COUNT][BENCH_MAX_RUNS];
    uint64_t pairs, nests, marks;   /* what the timed and warm-up loops made */
    int tsc;
} drop_out;

typedef struct drop_ctx {
    unsigned runs, pairs;
    bool drop;                      /* the dropping session, else recording */
} drop_ctx;

typedef struct ids {
    uint32_t pair, outer, middle, inner, sibling, mark;
} ids;

__attribute__((noinline)) static double run_clock2(unsigned n)
{
    uint64_t acc = 0, t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        acc += prism__now();
        acc ^= prism__now();
    }
    double r = (double)(bench_thread_ns() - t0) / n;
    bench_sink(acc);
    return r;
}

__attribute__((noinline)) static double run_pair(const ids *d, unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++) {
        prism_push_id(d->pair);
        prism_pop();
    }
    return (double)(bench_thread_ns() - t0) / n;
}

/* n events: n / 8 nests of 4 regions. */
__attribute__((noinline)) static double run_nest(const ids *d, unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n / 8; i++) {
        prism_push_id(d->outer);
        prism_push_id(d->middle);
        prism_push_id(d->inner);
        prism_pop();
        prism_pop();
        prism_push_id(d->sibling);
        prism_pop();
        prism_pop();
    }
    return (double)(bench_thread_ns() - t0) / (n / 8 * 8);
}

__attribute__((noinline)) static double run_mark(const ids *d, unsigned n)
{
    uint64_t t0 = bench_thread_ns();
    for (unsigned i = 0; i < n; i++)
        prism_mark_id(d->mark);
    return (double)(bench_thread_ns() - t0) / n;
}


typedef struct drain {
    int rd;
    char path[PATH_MAX];
} drain;

/* Copy the FIFO into a file until the writer closes it. */
static void *drain_main(void *arg)
{
    drain *d = arg;
    int out = open(d->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    char buf[65536];
    for (;;) {
        ssize_t n = read(d->rd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (out >= 0 && write(out, buf, (size_t)n) != n) {
            close(out);
            out = -1;
        }
    }
    if (out >= 0)
        close(out);
    return NULL;
}

static int drop_child(void *vctx, void *vout)
{
    const drop_ctx *c = vctx;
    drop_out *o = vout;
    char fifo[PATH_MAX];
    prism_config cfg;
    prism_config_default(&cfg);
    cfg.collect_memory = false;
    cfg.cpu_interval_ms = 0;
    drain d = { -1, "" };
    if (c->drop) {
        snprintf(fifo, sizeof fifo, "%s/drop.fifo", tmpdir);
        profile_path(d.path, sizeof d.path, "drop");
        if (mkfifo(fifo, 0600) != 0)
            return 1;
        d.rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);   /* lets the writer open */
        if (d.rd < 0)
            return 1;
        (void)fcntl(d.rd, F_SETPIPE_SZ, 4096);
        cfg.output = fifo;
        cfg.policy = PRISM_POLICY_DROP;
        cfg.buffer_events = 65536;      /* two 1 MB buffers for the process */
        cfg.buffer_mb = 1;
        cfg.flush_interval_ms = 60000;
        if (prism_init(&cfg) != 0)
            return 1;
    } else {
        char path[PATH_MAX];
        cfg.policy = PRISM_POLICY_WAIT;     /* nothing dropped */
        cfg.buffer_mb = 1024;
        if (start_session(&cfg, "recorded", path, sizeof path) != 0)
            return 1;
    }
#if defined(__x86_64__) || defined(__i386__)
    o->tsc = prism__clock_tsc;
#endif
    ids id = { prism_name("bench.pair"), prism_name("outer"), prism_name("middle"),
               prism_name("inner"), prism_name("sibling"), prism_name("bench.mark") };
    if (c->drop) {
        run_pair(&id, WARM_PAIRS);      /* both buffers full: the writer blocks */
        while (!probe_writer_stalled())
            sched_yield();
        o->pairs += WARM_PAIRS;
    }
    for (unsigned r = 0; r <= c->runs; r++)
        for (int k = 0; k < K_COUNT; k++) {
            unsigned n = c->pairs;
            double ns = k == K_CLOCK2 ? run_clock2(n)
                      : k == K_PAIR   ? run_pair(&id, n) / 2    /* per event */
                      : k == K_NEST   ? run_nest(&id, n)
                      :                 run_mark(&id, n);
            if (k == K_PAIR)
                o->pairs += n;
            if (k == K_NEST)
                o->nests += n / 8;
            if (k == K_MARK)
                o->marks += n;
            if (r > 0)
                o->ns[k][r - 1] = ns;
        }
    pthread_t th;
    if (c->drop) {
        if (fcntl(d.rd, F_SETFL, 0) != 0 || pthread_create(&th, NULL, drain_main, &d) != 0)
            return 1;
    }
    prism_shutdown();
    if (c->drop) {
        pthread_join(th, NULL);
        close(d.rd);
        unlink(fifo);
    }
    return 0;
}

static double per_event(const drop_out *o, int k, unsigned runs)
{
    return median(o->ns[k], runs);
}

static bool report(unsigned runs, unsigned pairs)
{
    drop_ctx cd = { runs, pairs, true }, cr = { runs, pairs, false };
    drop_out od, orc;
    memset(&od, 0, sizeof od);
    memset(&orc, 0, sizeof orc);
    if (!check(in_child(drop_child, &cd, &od, sizeof od) == 0, "dropping child failed") ||
        !check(in_child(drop_child, &cr, &orc, sizeof orc) == 0, "recording child failed"))
        return false;
    char path[PATH_MAX], extra[200];
    profile_path(path, sizeof path, "drop");
    counts f = read_profile(path);
    unlink(path);
    profile_path(path, sizeof path, "recorded");
    counts g = read_profile(path);
    unlink(path);
    printf("  clock %s; %u events a run; ns of the thread's CPU time, per event\n",
           od.tsc ? "rdtsc" : "CLOCK_MONOTONIC", pairs);
    double base = per_event(&od, K_CLOCK2, runs) / 2;
    row_ns("drop: 2 raw clock reads", od.ns[K_CLOCK2], runs, 1,
           "prism__now() twice: an event reads it once", NULL);
    static const char *const what[] = { NULL, "pair (push, pop)", "nest of 4 regions", "mark" };
    for (int k = K_PAIR; k < K_COUNT; k++) {
        double rec = per_event(&orc, k, runs), drop = per_event(&od, k, runs);
        char label[64];
        snprintf(label, sizeof label, "recorded event: %s", what[k]);
        snprintf(extra, sizeof extra, "over a clock read: %.1f ns", rec - base);
        row_ns(label, orc.ns[k], runs, 1, extra, NULL);
        snprintf(label, sizeof label, "dropped event: %s", what[k]);
        snprintf(extra, sizeof extra, "%.2fx a recorded one", rec > 0 ? drop / rec : 0);
        row_ns(label, od.ns[k], runs, 1, extra, NULL);
    }
    double rp = per_event(&orc, K_PAIR, runs), dp = per_event(&od, K_PAIR, runs);
    snprintf(extra, sizeof extra, "recorded %.1f ns, dropped %.1f ns an event", rp, dp);
    row_value("drop: dropped / recorded (pair)", rp > 0 ? dp / rp : 0, 2, "x", "(medians)",
              extra, NULL);
    uint64_t produced = 2 * od.pairs + 8 * od.nests + od.marks;
    printf("  dropping session: %llu events made, %llu written, %llu dropped%s\n",
           (unsigned long long)produced, (unsigned long long)f.regions,
           (unsigned long long)f.dropped, f.ok ? "" : " (profile not sound)");
    return check(f.ok && g.ok, "a profile did not read back cleanly") &&
           check(f.dropped > 0 && f.dropped <= produced, "the dropping session dropped nothing") &&
           check(g.dropped == 0, "the recording session dropped events");
}


int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : DEF_RUNS;
    unsigned pairs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : DEF_PAIRS;
    if (runs < 1 || runs > BENCH_MAX_RUNS)
        runs = DEF_RUNS;
    if (pairs < 1000 || pairs > 100000000)
        pairs = DEF_PAIRS;
    const char *td = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/prism-drop-bench-XXXXXX", td && *td ? td : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "collect_drop_bench: cannot create %s: %s\n", tmpdir, strerror(errno));
        return 1;
    }
    printf("collect_drop_bench: a dropped event beside a recorded one\n");
    printf("  figures: median of %u rounds after one warm-up, kinds interleaved; %ld CPUs\n",
           runs, sysconf(_SC_NPROCESSORS_ONLN));
    bool ok = report(runs, pairs);
    bench_remove_dir(tmpdir);
    return ok ? 0 : 1;
}
