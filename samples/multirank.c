/*
 * multirank - a distributed training job in one machine: N ranks as
 * processes, each writing its own profile (RANK=i, DIR/rank%r.cbor), that
 * meet at a collective every step, so one slow rank makes the others wait.
 * The job view (`prism-top analyze DIR`) must name the planted rank and
 * region.  See usage() for the flags.
 *
 * Per step: data_load, forward, backward, <collective>, optimizer.  Each
 * region spins for --work-us microseconds of wall-clock time: on CPU, and
 * the same length on every rank even when 32 ranks share 2 cores (a spin
 * on CPU time would stretch with the run queue and blur the ranks into
 * one another).  The slow rank spins --slow-ms more inside --slow-region.
 * The collective waits on a process-shared barrier, blocked off CPU until
 * the slowest rank arrives, then sleeps --transfer-us (the transfer).
 *
 * Waiting must read as waiting (off CPU) on a crowded machine too: a rank
 * woken from the barrier first waits for a CPU, and the CPU samples count
 * that as neither work nor blocked.  Hence a small default work (32 ranks
 * on 2 cores wait little for a CPU) and the blocked transfer, which keeps
 * the collective mostly blocked even when every rank arrives together.
 *
 * A rank that dies would leave the others blocked in the barrier for good
 * (there is no barrier with a timeout): the parent watches its children and
 * kills the rest as soon as one ends badly.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "mono_time.h"
#include "profiling.h"
#include "prism/collect.h"

#define MAX_RANKS 4096

typedef struct opts {
    unsigned ranks, steps;
    long slow_rank;                   /* -1: every rank equal               */
    const char *slow_region, *collective, *dir;
    double slow_ms, work_us, transfer_us;
} opts;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: multirank [options]\n"
        "  --ranks N          ranks (processes) to run (default 8)\n"
        "  --steps S          steps per rank (default 20)\n"
        "  --slow-rank R      the rank that is slower, -1 for none (default 3;\n"
        "                     none when R >= N)\n"
        "  --slow-region NAME where it is slower: data_load, forward (default),\n"
        "                     backward, optimizer or the collective\n"
        "  --slow-ms X        how much slower, per step (default 5)\n"
        "  --work-us U        each region's work, microseconds (default 20: 32 ranks\n"
        "                     on 2 cores still spend most of a step waiting)\n"
        "  --collective NAME  the collective region's name (default allreduce)\n"
        "  --transfer-us T    the collective's transfer after the barrier, blocked\n"
        "                     (asleep), microseconds (default 1000)\n"
        "  --output-dir DIR   where rank%%r.cbor are written (made if missing;\n"
        "                     default .)\n"
        "Each rank runs with RANK set; the ranks meet at a process-shared barrier\n"
        "inside the collective every step.  Exit status 0 when every rank did.\n");
}

static int number(const char *s, double lo, double hi, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return errno || end == s || *end || !(*v >= lo && *v <= hi) ? -1 : 0;
}

/* 0 ok, 1 --help, -1 bad command line (one line said so). */
static int parse_args(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        char flag[32];
        const char *val;
        unsigned long long v = 0;
        int bad = args_flag_value(argc, argv, &i, flag, sizeof flag, &val);
        if (bad) {
        } else if (!strcmp(flag, "--ranks")) {
            bad = args_unsigned(val, 1, MAX_RANKS, &v);
            o->ranks = (unsigned)v;
        } else if (!strcmp(flag, "--steps")) {
            bad = args_unsigned(val, 1, 1000000, &v);
            o->steps = (unsigned)v;
        } else if (!strcmp(flag, "--slow-rank")) {
            bad = strcmp(val, "-1") ? args_unsigned(val, 0, 1000000, &v) : 0;
            o->slow_rank = strcmp(val, "-1") ? (long)v : -1;
        } else if (!strcmp(flag, "--slow-ms")) {
            bad = number(val, 0, 60000, &o->slow_ms);
        } else if (!strcmp(flag, "--work-us")) {
            bad = number(val, 0, 1e7, &o->work_us);
        } else if (!strcmp(flag, "--transfer-us")) {
            bad = number(val, 0, 1e7, &o->transfer_us);
        } else if (!strcmp(flag, "--slow-region")) {
            o->slow_region = val;
        } else if (!strcmp(flag, "--collective")) {
            bad = !*val;
            o->collective = val;
        } else if (!strcmp(flag, "--output-dir")) {
            bad = !*val;
            o->dir = val;
        } else {
            bad = -1;
        }
        if (bad) {
            fprintf(stderr, "multirank: bad argument: %s\n", a);
            return -1;
        }
    }
    static const char *const names[] = { "data_load", "forward", "backward", "optimizer" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(o->slow_region, names[i]))
            return 0;
    if (strcmp(o->slow_region, o->collective)) {
        fprintf(stderr, "multirank: --slow-region: no region is named %s\n", o->slow_region);
        return -1;
    }
    return 0;
}

/* Work: stay on CPU for us microseconds of wall-clock time.  (Yielding
 * while spinning was tried: the scheduler's churn then blurs the CPU
 * samples of every rank, and more ranks look slow.) */
static void spin_us(double us)
{
    double until = now_s() + us * 1e-6;
    while (now_s() < until)
        ;
}

/* One region of a step: its work, the planted delay when it is the slow
 * region of the slow rank, then (the collective) the barrier and the
 * transfer, asleep as a rank waiting on the network is. */
static void region(const char *name, const opts *o, bool slow, pthread_barrier_t *b)
{
    prism_push(name);
    spin_us(o->work_us);
    if (slow && !strcmp(name, o->slow_region))
        spin_us(o->slow_ms * 1e3);
    if (b) {
        pthread_barrier_wait(b);
        double us = o->transfer_us;
        struct timespec ts = { (time_t)(us / 1e6), (long)(fmod(us, 1e6) * 1e3) };
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
    }
    prism_pop();
}

static int rank_main(unsigned rank, const opts *o, pthread_barrier_t *b)
{
    char env[32];
    snprintf(env, sizeof env, "%u", rank);
    /* before prism_init: the library takes the rank (header, %r) from it */
    if (setenv("RANK", env, 1))
        return 1;
    prism_config cfg;
    profiling_config(&cfg, "rank%r.cbor", "rank%r.cbor");
    cfg.output_dir = o->dir;
    if (prism_init(&cfg) != 0)
        return 1;
    prism_thread_name("main");
    bool slow = o->slow_rank >= 0 && (unsigned long)o->slow_rank == rank;
    static const char *const before[] = { "data_load", "forward", "backward" };
    for (unsigned s = 0; s < o->steps; s++) {
        prism_step_begin();
        for (size_t i = 0; i < sizeof before / sizeof before[0]; i++)
            region(before[i], o, slow, NULL);
        region(o->collective, o, slow, b);
        region("optimizer", o, slow, NULL);
        prism_step_end();
    }
    prism_shutdown();
    return 0;
}

/* Wait for every child; when one fails, kill the others (they would block
 * in the barrier for ever).  Returns 0 when all succeeded. */
static int reap(pid_t *pids, unsigned n)
{
    int rc = 0;
    for (unsigned left = n; left > 0; left--) {
        int st;
        pid_t p = wait(&st);
        if (p < 0)
            return 1;
        unsigned who = 0;
        while (who < n && pids[who] != p)
            who++;
        if (who < n)
            pids[who] = 0;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            continue;
        if (!rc)
            fprintf(stderr, "multirank: rank %u %s %d; stopping the others\n", who,
                    WIFEXITED(st) ? "exited with status" : "was killed by signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        rc = 1;
        for (unsigned i = 0; i < n; i++)
            if (pids[i] > 0)
                kill(pids[i], SIGKILL);
    }
    return rc;
}

int main(int argc, char **argv)
{
    opts o = { .ranks = 8, .steps = 20, .slow_rank = 3, .slow_region = "forward",
               .collective = "allreduce", .dir = ".", .slow_ms = 5, .work_us = 20,
               .transfer_us = 1000 };
    int pr = parse_args(argc, argv, &o);
    if (pr) {
        usage(pr > 0 ? stdout : stderr);
        return pr > 0 ? 0 : 1;
    }
    /* a session the PRISM_* variables started in this parent would be
     * copied into every child half alive: stop it (each rank starts its own) */
    profiling_off("multirank");
    if (mkdir(o.dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "multirank: %s: %s\n", o.dir, strerror(errno));
        return 1;
    }
    pthread_barrier_t *b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t *pids = calloc(o.ranks, sizeof *pids);
    pthread_barrierattr_t ba;
    if (b == MAP_FAILED || !pids || pthread_barrierattr_init(&ba) ||
        pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED) ||
        pthread_barrier_init(b, &ba, o.ranks)) {
        fprintf(stderr, "multirank: cannot set up the shared barrier\n");
        return 1;
    }
    double t0 = now_s();
    fflush(NULL);
    for (unsigned r = 0; r < o.ranks; r++) {
        pid_t p = fork();
        if (p == 0)
            _exit(rank_main(r, &o, b));
        if (p < 0) {
            fprintf(stderr, "multirank: fork: %s\n", strerror(errno));
            for (unsigned i = 0; i < r; i++)
                kill(pids[i], SIGKILL);
            while (wait(NULL) > 0)
                ;
            return 1;
        }
        pids[r] = p;
    }
    int rc = reap(pids, o.ranks);
    printf("multirank: ranks=%u steps=%u slow_rank=%ld slow_region=%s wall_s=%.3f dir=%s%s\n",
           o.ranks, o.steps, o.slow_rank, o.slow_region, now_s() - t0, o.dir,
           rc ? " FAILED" : "");
    free(pids);
    return rc;
}
