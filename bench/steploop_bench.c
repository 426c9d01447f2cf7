/*
 * steploop_bench.c - the collection overhead on a training-like loop,
 * interleaved in one process: steps of ~1 ms made of 20 regions, in blocks
 * alternating the instrumented loop and the same loop without a call
 * (bench/steploop.h, as a PRISM_DISABLE build compiles it), the session at
 * the defaults; the median over block pairs of the on/off ratio, wall and
 * the thread's CPU time.  Target: <= 0.5 %.  Figures only: a failed child
 * or a lost step fails the run, slowness never.
 *
 *   usage: steploop_bench
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
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <math.h>

#include "bench_util.h"
#include "prism/collect.h"
#include "prism/profile.h"
#include "../libcollect/cpusample.h"

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

#define SL_NAME sl_loop_on
#define SL_ON 1
#include "steploop.h"
#define SL_NAME sl_loop_off
#define SL_ON 0
#include "steploop.h"

/* ------------------------------------------------------------------ */
/* 2b. steploop: the overhead, interleaved in one process              */
/* ------------------------------------------------------------------ */

#define SL_BLOCK   10u            /* steps a block: ~10 ms                 */
#define SL_PAIRS   300u           /* on/off block pairs: ~6 s              */
#define SL_STEP_NS 1000000.0      /* the step's length to aim for          */

typedef struct sl_out {
    double on[SL_PAIRS], off[SL_PAIRS];         /* wall ns a step            */
    double on_cpu[SL_PAIRS], off_cpu[SL_PAIRS]; /* the thread's CPU ns a step */
    unsigned reps;                /* passes a region                       */
    uint64_t steps;               /* instrumented steps run                */
} sl_out;

/* One block of SL_BLOCK steps: wall ns a step; *cpu: thread CPU ns a step. */
static double sl_block(const sl_ctx *c, bool on, double *cpu)
{
    uint64_t t0 = bench_now_ns(), c0 = bench_thread_ns();
    float v = on ? sl_loop_on(c, SL_BLOCK) : sl_loop_off(c, SL_BLOCK);
    uint64_t t1 = bench_now_ns(), c1 = bench_thread_ns();
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bench_sink(bits);
    *cpu = (double)(c1 - c0) / SL_BLOCK;
    return (double)(t1 - t0) / SL_BLOCK;
}

/* The loop's data and its passes a region for steps of ~SL_STEP_NS (the
 * least CPU time of a few blocks: this shared machine's load must not
 * lengthen the estimate), then a session at the defaults (memory, CPU
 * sampler, ...) named `name` and the regions' names.  0 when all is set. */
static int sl_setup(sl_ctx *c, const char *name)
{
    *c = (sl_ctx){ .reps = 1 };
    c->x = malloc((size_t)SL_REGIONS * SL_FLOATS * sizeof *c->x);
    if (!c->x)
        return 1;
    for (size_t i = 0; i < (size_t)SL_REGIONS * SL_FLOATS; i++)
        c->x[i] = 1.0f;
    double cpu, t = 0;
    for (int i = 0; i < 5; i++) {
        (void)sl_block(c, false, &cpu);
        t = i == 0 || cpu < t ? cpu : t;
    }
    c->reps = t > 0 && SL_STEP_NS / t < 1e6 ? (unsigned)(SL_STEP_NS / t + 0.5) : 1;
    if (c->reps < 1)
        c->reps = 1;
    prism_config cfg;
    prism_config_default(&cfg);
    char path[PATH_MAX], nm[32];
    if (start_session(&cfg, name, path, sizeof path) != 0)
        return 1;
    for (unsigned r = 0; r < SL_REGIONS; r++) {
        snprintf(nm, sizeof nm, "steploop.%u", r);
        if (!(c->ids[r] = prism_name(nm)))
            return 1;
    }
    return 0;
}

static int steploop_child(void *vctx, void *vout)
{
    (void)vctx;
    sl_out *o = vout;
    sl_ctx c;
    if (sl_setup(&c, "steploop") != 0)
        return 1;
    o->reps = c.reps;
    /* pair 0 warms up; which block of a pair goes first alternates, and
     * pairs are short, so a drift of this shared machine weighs on both
     * sides of a pair alike */
    for (unsigned r = 0; r <= SL_PAIRS; r++) {
        bool on_first = r % 2 == 0;
        double a_cpu, b_cpu;
        double a = sl_block(&c, on_first, &a_cpu);
        double b = sl_block(&c, !on_first, &b_cpu);
        o->steps += SL_BLOCK;
        if (r == 0)
            continue;
        o->on[r - 1] = on_first ? a : b;
        o->off[r - 1] = on_first ? b : a;
        o->on_cpu[r - 1] = on_first ? a_cpu : b_cpu;
        o->off_cpu[r - 1] = on_first ? b_cpu : a_cpu;
    }
    prism_shutdown();
    free(c.x);
    return 0;
}

typedef struct sl_file {
    uint64_t steps, regions, tagged;
    bool ordered;                   /* tagged samples name ever later steps */
    uint64_t last;
} sl_file;

static void sl_steps(void *ctx, uint32_t stream, const prism_step *st, size_t n)
{
    (void)stream;
    (void)st;
    ((sl_file *)ctx)->steps += n;
}

static void sl_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    (void)stream;
    (void)depth;
    (void)ev;
    ((sl_file *)ctx)->regions += n;
}

static void sl_memory(void *ctx, const prism_memory_sample *m)
{
    sl_file *f = ctx;
    if (m->step == PRISM_NO_STEP)
        return;
    f->ordered &= f->tagged == 0 || m->step > f->last;
    f->last = m->step;
    f->tagged++;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-quantile (nearest rank) of n values, sorted in place. */
static double quantile(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_dbl);
    size_t k = (size_t)(p * (double)(n - 1) + 0.5);
    return v[k < n ? k : n - 1];
}

static bool report_steploop(void)
{
    sl_out *o = calloc(1, sizeof *o);
    if (!o)
        return check(false, "out of memory");
    if (!check(in_child(steploop_child, NULL, o, sizeof *o) == 0, "steploop child failed")) {
        free(o);
        return false;
    }
    char path[PATH_MAX], how[64], extra[200];
    profile_path(path, sizeof path, "steploop");
    sl_file f = { .ordered = true };
    prism_reader_callbacks cb = { .steps = sl_steps, .regions = sl_regions,
                                  .memory = sl_memory };
    prism_reader *r = NULL;
    bool read_ok = prism_read_file(path, &cb, &f, &r) == PRISM_OK;
    prism_reader_free(r);
    unlink(path);
    static double ratio[SL_PAIRS], cratio[SL_PAIRS];
    for (unsigned i = 0; i < SL_PAIRS; i++) {
        ratio[i] = o->off[i] > 0 ? o->on[i] / o->off[i] : 0;
        cratio[i] = o->off_cpu[i] > 0 ? o->on_cpu[i] / o->off_cpu[i] : 0;
    }
    double mc = quantile(cratio, SL_PAIRS, 0.5);
    double q1 = quantile(ratio, SL_PAIRS, 0.25), q3 = quantile(ratio, SL_PAIRS, 0.75);
    double mr = quantile(ratio, SL_PAIRS, 0.5);
    double off = quantile(o->off, SL_PAIRS, 0.5), on = quantile(o->on, SL_PAIRS, 0.5);
    printf("  steploop: %u regions a step (%u passes over 32 KB each); %u pairs of %u-step "
           "blocks, instrumented and not, alternating in one process whose session runs at "
           "the defaults; wall time\n", SL_REGIONS, o->reps, SL_PAIRS, SL_BLOCK);
    snprintf(how, sizeof how, "(median of %u blocks)", SL_PAIRS);
    row_value("collect: steploop, no calls", off * 1e-6, 4, "ms/step", how,
              "the same loop without a call (as PRISM_DISABLE): the baseline", NULL);
    row_value("collect: steploop, instrumented", on * 1e-6, 4, "ms/step", how,
              "step begin/end and 20 push/pop pairs a step", NULL);
    snprintf(extra, sizeof extra, "ratio to the baseline %.4f (quartiles %.4f-%.4f); "
             "thread CPU %+.2f %%", mr, q1, q3, (mc - 1) * 100);
    snprintf(how, sizeof how, "(median of %u pair ratios)", SL_PAIRS);
    row_value("collect: steploop overhead", (mr - 1) * 100, 2, "%", how, extra, "<= 0.5 %");
    printf("  %-*s recorded %llu steps, %llu region events, %llu memory samples tagged "
           "with a step\n", LABEL_W, "", (unsigned long long)f.steps,
           (unsigned long long)f.regions, (unsigned long long)f.tagged);
    bool ok = check(read_ok && f.steps == o->steps && f.regions == o->steps * SL_REGIONS * 2,
                    "the steploop profile lost steps or regions") &&
              check(f.tagged > 0 && f.ordered,
                    "no memory sample tagged with a step, or out of order");
    free(o);
    return ok;
}

/* ------------------------------------------------------------------ */
/* 2c. the CPU sampler's own cost, interleaved in one process          */
/* ------------------------------------------------------------------ */

/* The same instrumented loop in blocks alternating the sampler running
 * and paused (pc_cpu_pause: no passes and no wake-ups for them, as with
 * cpu_interval_ms 0), on a quiet machine and beside busy loops: there the
 * sampler's wake-ups compete with the training thread for the cores
 * (issue 28: <= 0.5 % wall on a busy machine). */
#define SP_BLOCK   20u            /* steps a block: ~20 ms, 4 passes        */
#define SP_PAIRS   800u           /* on/off block pairs, at most: ~32 s     */
#define SP_QUIET   200u           /* of them on a quiet machine             */

typedef struct sp_out {
    unsigned pairs;               /* in (the child's ctx copy): pairs to run */
    double on[SP_PAIRS], off[SP_PAIRS];         /* wall ns a step            */
    double on_cs[SP_PAIRS], off_cs[SP_PAIRS];   /* involuntary switches a block */
    unsigned reps;
    uint64_t steps;
} sp_out;

static long sp_nivcsw(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

static int sampler_child(void *vctx, void *vout)
{
    const char *name = vctx;
    sp_out *o = vout;               /* o->pairs set by the parent before fork */
    sl_ctx c;
    if (sl_setup(&c, name) != 0)
        return 1;
    o->reps = c.reps;
    for (unsigned r = 0; r <= o->pairs; r++) {
        bool on_first = r % 2 == 0;
        double w[2] = { 0, 0 }, cs[2] = { 0, 0 };
        for (int k = 0; k < 2; k++) {
            bool on = (k == 0) == on_first;
            pc_cpu_pause(prism__s, !on);
            long c0 = sp_nivcsw();
            uint64_t t0 = bench_now_ns();
            float v = sl_loop_on(&c, SP_BLOCK);
            w[on] = (double)(bench_now_ns() - t0) / SP_BLOCK;
            cs[on] = (double)(sp_nivcsw() - c0);
            uint32_t bits;
            memcpy(&bits, &v, sizeof bits);
            bench_sink(bits);
        }
        o->steps += 2 * SP_BLOCK;
        if (r == 0)
            continue;                 /* pair 0 warms up */
        o->on[r - 1] = w[1];
        o->off[r - 1] = w[0];
        o->on_cs[r - 1] = cs[1];
        o->off_cs[r - 1] = cs[0];
    }
    pc_cpu_pause(prism__s, false);
    prism_shutdown();
    free(c.x);
    return 0;
}

static void sp_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    (void)s;
    *(uint64_t *)ctx += n;
}

/* n busy loops in processes of their own; their pids in pid[]. */
static unsigned sp_hogs(pid_t *pid, unsigned n)
{
    unsigned k = 0;
    for (; k < n; k++) {
        fflush(stdout);
        pid[k] = fork();
        if (pid[k] < 0)
            break;
        if (pid[k] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            volatile uint64_t x = 0;
            for (;;)
                x = x * 6364136223846793005ull + 1;
        }
    }
    return k;
}

static void sp_hogs_stop(const pid_t *pid, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        kill(pid[k], SIGKILL);
        while (waitpid(pid[k], NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

static bool report_sampler_one(unsigned hogs)
{
    sp_out *o = calloc(1, sizeof *o);
    if (!o)
        return check(false, "out of memory");
    unsigned n = o->pairs = hogs ? SP_PAIRS : SP_QUIET;
    pid_t pid[8];
    unsigned got = sp_hogs(pid, hogs);
    char name[32];
    snprintf(name, sizeof name, "sampler%u", hogs);
    int rc = got == hogs ? in_child(sampler_child, name, o, sizeof *o) : -1;
    sp_hogs_stop(pid, got);
    if (!check(rc == 0, "sampler child failed")) {
        free(o);
        return false;
    }
    char path[PATH_MAX], how[64], extra[240], label[64];
    profile_path(path, sizeof path, name);
    uint64_t samples = 0;
    prism_reader_callbacks cb = { .cpu = sp_cpu };
    prism_reader *r = NULL;
    bool read_ok = prism_read_file(path, &cb, &samples, &r) == PRISM_OK;
    prism_reader_free(r);
    unlink(path);
    static double ratio[SP_PAIRS];
    for (unsigned i = 0; i < n; i++)
        ratio[i] = o->off[i] > 0 ? o->on[i] / o->off[i] : 0;
    /* a 95 % interval of the median ratio without assuming a distribution:
     * the order statistics n/2 -+ 1.96 sqrt(n)/2 (sorted by quantile) */
    double mr = quantile(ratio, n, 0.5);
    double h = 0.98 * sqrt((double)n) / (double)(n - 1);
    double lo = quantile(ratio, n, 0.5 - h), hi = quantile(ratio, n, 0.5 + h);
    double off = quantile(o->off, n, 0.5), on = quantile(o->on, n, 0.5);
    double cs_on = 0, cs_off = 0;
    for (unsigned i = 0; i < n; i++) {
        cs_on += o->on_cs[i];
        cs_off += o->off_cs[i];
    }
    const char *where = hogs ? "busy" : "quiet";
    if (hogs)
        printf("  sampler, beside %u busy loops (load ~%u on %ld cores):\n", hogs, hogs + 1,
               sysconf(_SC_NPROCESSORS_ONLN));
    else
        printf("  sampler, quiet: the instrumented steploop in %u pairs of %u-step blocks, "
               "the CPU sampler running and paused, alternating in one process\n",
               n, SP_BLOCK);
    snprintf(how, sizeof how, "(median of %u blocks)", n);
    snprintf(label, sizeof label, "collect: sampler paused, %s", where);
    row_value(label, off * 1e-6, 4, "ms/step", how, "the baseline: no passes, no wake-ups", NULL);
    snprintf(label, sizeof label, "collect: sampler on, %s", where);
    row_value(label, on * 1e-6, 4, "ms/step", how, "passes every cpu_interval_ms (5)", NULL);
    snprintf(extra, sizeof extra, "ratio to the baseline %.4f (95 %% interval of the median "
             "%.4f-%.4f); involuntary switches a block %.2f on, %.2f paused",
             mr, lo, hi, cs_on / n, cs_off / n);
    snprintf(how, sizeof how, "(median of %u pair ratios)", n);
    snprintf(label, sizeof label, "collect: sampler overhead, %s", where);
    row_value(label, (mr - 1) * 100, 2, "%", how, extra, "<= 0.5 %");
    bool ok = check(read_ok && samples > 0, "the sampler wrote no CPU sample");
    free(o);
    return ok;
}

static bool report_sampler(void)
{
    bool ok = report_sampler_one(0);
    return report_sampler_one(2) && ok;
}


int main(void)
{
    const char *td = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/prism-steploop-bench-XXXXXX", td && *td ? td : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "steploop_bench: cannot create a directory %s: %s\n", tmpdir,
                strerror(errno));
        return 1;
    }
    uint64_t t0 = bench_now_ns();
    printf("steploop_bench: collection overhead on ~1 ms steps of 20 regions, interleaved\n");
    bool ok = report_steploop();
    ok = report_sampler() && ok;
    bench_remove_dir(tmpdir);
    printf("steploop_bench: done in %.1f s\n", (double)(bench_now_ns() - t0) * 1e-9);
    return ok ? 0 : 1;
}
