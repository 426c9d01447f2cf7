/*
 * multithread - K threads x M region events each, for stress tests and
 * throughput figures.  Each thread names itself "worker.K" and pushes and
 * pops nested regions "level.0" > "level.1" > ... (ids from prism_name),
 * with a counter "iterations" every 4096 nests (--counter-every).  Every
 * push and every pop is one region event; counters are not counted.  The
 * last line on stdout is
 *     produced=<region events> threads=<K> elapsed_s=<s> rate=<events/s>
 * so that a test can compare `produced` with written + dropped in the file.
 * elapsed_s covers the recording phase (threads released together), not
 * the final flush.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "mono_time.h"
#include "profiling.h"
#include "prism/collect.h"

#define MAX_DEPTH 64
#define MAX_THREADS 1024

typedef struct opts {
    unsigned threads, depth, buffer_events, counter_every;
    uint64_t events;
    int policy;                      /* -1: from the configuration */
    bool no_profile;
    const char *output;
} opts;

typedef struct worker {
    unsigned k;
    uint64_t events;                 /* to produce                 */
    uint64_t produced;               /* region events emitted      */
    pthread_t th;
} worker;

static struct {
    unsigned depth, counter_every;
    uint32_t level[MAX_DEPTH];
    uint32_t counter;
    pthread_barrier_t start;
} g;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: multithread [options]\n"
        "  --threads K        recording threads (default 4)\n"
        "  --events M         region events per thread, push and pop each count (default 1000000)\n"
        "  --depth D          nesting depth, 1..%d (default 4)\n"
        "  --policy drop|wait what full buffers do (default: PRISM_POLICY, else drop)\n"
        "  --buffer-events N  events per thread buffer (default: the configuration's)\n"
        "  --counter-every N  a counter every N nests, 0 = none (default 4096)\n"
        "  --output PATH      profile path (default $PRISM_OUTPUT, else multithread.cbor)\n"
        "  --no-profile       same work, without starting the profiler\n",
        MAX_DEPTH);
}

/* 0 ok, 1 --help, -1 bad command line. */
static int parse_args(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        if (!strcmp(a, "--no-profile")) { o->no_profile = true; continue; }
        char flag[32];
        const char *val;
        if (args_flag_value(argc, argv, &i, flag, sizeof flag, &val)) {
            fprintf(stderr, "multithread: bad argument: %s\n", a);
            return -1;
        }
        unsigned long long v = 0;
        int bad = 0;
        if (!strcmp(flag, "--output")) {
            o->output = val;
            bad = !*val;
        } else if (!strcmp(flag, "--policy")) {
            if (!strcmp(val, "drop")) o->policy = PRISM_POLICY_DROP;
            else if (!strcmp(val, "wait")) o->policy = PRISM_POLICY_WAIT;
            else bad = 1;
        } else if (!strcmp(flag, "--threads")) {
            if (!(bad = args_unsigned(val, 1, MAX_THREADS, &v))) o->threads = (unsigned)v;
        } else if (!strcmp(flag, "--events")) {
            if (!(bad = args_unsigned(val, 0, 1ull << 40, &v))) o->events = v;
        } else if (!strcmp(flag, "--depth")) {
            if (!(bad = args_unsigned(val, 1, MAX_DEPTH, &v))) o->depth = (unsigned)v;
        } else if (!strcmp(flag, "--counter-every")) {
            if (!(bad = args_unsigned(val, 0, UINT32_MAX, &v))) o->counter_every = (unsigned)v;
        } else if (!strcmp(flag, "--buffer-events")) {
            if (!(bad = args_unsigned(val, 1, UINT32_MAX, &v))) o->buffer_events = (unsigned)v;
        } else {
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "multithread: bad option or value: %s %s\n", flag, val);
            return -1;
        }
    }
    return 0;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    char name[24];
    snprintf(name, sizeof name, "worker.%u", w->k);
    prism_thread_name(name);
    unsigned d = g.depth, every = g.counter_every, left = every;
    uint64_t nests = w->events / (2 * d), produced = 0;
    unsigned tail = (unsigned)(w->events % (2 * d) / 2);   /* one shallower nest */
    pthread_barrier_wait(&g.start);

    for (uint64_t n = 0; n < nests; n++) {
        for (unsigned i = 0; i < d; i++)
            prism_push_id(g.level[i]);
        for (unsigned i = 0; i < d; i++)
            prism_pop();
        if (every && --left == 0) {
            left = every;
            prism_counter_i(g.counter, (int64_t)n + 1);
        }
    }
    produced = nests * 2 * d;
    for (unsigned i = 0; i < tail; i++)
        prism_push_id(g.level[i]);
    for (unsigned i = 0; i < tail; i++)
        prism_pop();
    w->produced = produced + 2ull * tail;

    pthread_barrier_wait(&g.start);
    return NULL;
}

int main(int argc, char **argv)
{
    opts o = { .threads = 4, .depth = 4, .events = 1000000, .policy = -1,
               .counter_every = 4096 };
    int pr = parse_args(argc, argv, &o);
    if (pr) {
        usage(pr > 0 ? stdout : stderr);
        return pr > 0 ? 0 : 1;
    }

    if (o.no_profile) {
        profiling_off("multithread");
    } else {
        if ((o.output || o.policy >= 0 || o.buffer_events) && prism_recording())
            fprintf(stderr, "multithread: --output/--policy/--buffer-events ignored: the "
                            "session already started from PRISM_* variables\n");
        prism_config cfg;
        profiling_config(&cfg, o.output, "multithread.cbor");
        if (o.policy >= 0)
            cfg.policy = (prism_policy)o.policy;
        if (o.buffer_events)
            cfg.buffer_events = o.buffer_events;
        (void)prism_init(&cfg);   /* on failure it warned; run unprofiled */
    }
    prism_thread_name("main");
    g.depth = o.depth;
    g.counter_every = o.counter_every;
    for (unsigned i = 0; i < o.depth; i++) {
        char name[24];
        snprintf(name, sizeof name, "level.%u", i);
        g.level[i] = prism_name(name);
    }
    g.counter = prism_name("iterations");

    worker *w = calloc(o.threads, sizeof *w);
    if (!w || pthread_barrier_init(&g.start, NULL, o.threads + 1)) {
        fprintf(stderr, "multithread: out of memory\n");
        return 1;
    }
    for (unsigned k = 0; k < o.threads; k++) {
        w[k].k = k;
        w[k].events = o.events;
        if (pthread_create(&w[k].th, NULL, worker_main, &w[k])) {
            fprintf(stderr, "multithread: could not start thread %u\n", k);
            return 1;          /* the barrier never opens: exit, not join */
        }
    }
    pthread_barrier_wait(&g.start);                /* all ready: go */
    double t0 = now_s();
    pthread_barrier_wait(&g.start);                /* all done */
    double elapsed = now_s() - t0;

    uint64_t produced = 0;
    for (unsigned k = 0; k < o.threads; k++) {
        pthread_join(w[k].th, NULL);
        produced += w[k].produced;
    }
    prism_shutdown();
    pthread_barrier_destroy(&g.start);
    free(w);
    printf("produced=%llu threads=%u elapsed_s=%.6f rate=%.0f\n", (unsigned long long)produced,
           o.threads, elapsed, elapsed > 0 ? (double)produced / elapsed : 0.0);
    return 0;
}
