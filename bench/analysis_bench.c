/*
 * analysis_bench - read + aggregate speed of the analysis on a large
 * profile, its peak memory against the number of events (it must follow
 * call paths, not events), and export speeds.  Prints figures; never fails
 * on time.
 *
 *   analysis_bench [EVENTS_MILLIONS [RUNS]]     default 10 M events, 5 runs
 * The profiles are written by libcollect itself in a child process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "loop_profile.h"
#include "../cli/cli.h"
#include "../reports/report.h"
#include "prism/analysis.h"
#include "prism/collect.h"
#include "refgen.h"

typedef struct corpus {
    refgen_out out;             /* the file's bytes */
    uint64_t events;            /* region events */
    char path[256];
} corpus;

static int corpus_build(corpus *c, double million, const char *dir, const char *name, bool work)
{
    snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
    if (loop_profile_write(c->path, (uint64_t)(million * 1e6), work))
        return -1;
    FILE *f = fopen(c->path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    c->out.data = malloc(n > 0 ? (size_t)n : 1);
    c->out.len = c->out.data && n > 0 ? fread(c->out.data, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!c->out.len)
        return -1;
    /* count region events with a bare reader */
    prism_reader_callbacks cb = { 0 };
    prism_reader *r = prism_reader_new(&cb, NULL);
    prism_reader_feed(r, c->out.data, c->out.len);
    prism_reader_finish(r);
    c->events = prism_reader_stats_get(r)->records;
    prism_reader_free(r);
    return 0;
}

static uint64_t run_analyze(void *ctx)
{
    corpus *c = ctx;
    prism_analysis *a = prism_analysis_new(NULL);
    prism_reader_callbacks cb;
    prism_analysis_callbacks(&cb);
    prism_reader *r = prism_reader_new(&cb, a);
    prism_analysis_attach(a, r);
    prism_reader_feed(r, c->out.data, c->out.len);
    prism_reader_finish(r);
    prism_analysis_refresh(a);
    uint64_t v = prism_analysis_tree(a)->total_ns + prism_analysis_events(a);
    prism_analysis_free(a);
    prism_reader_free(r);
    return v;
}

/* A "Vm...:" figure of /proc/self/status in KB, or -1. */
static long proc_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':') {
            v = atol(line + n + 1);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* Analyse the file and report peak RSS (KB) and node count on fd: run in a
 * fresh exec of this program, whose high-water mark is its own. */
static int rss_child(const char *path, int fd)
{
    prism_status st;
    char msg[128];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    long out[3] = { proc_kb("VmHWM"), a ? (long)prism_analysis_tree(a)->count : 0,
                    a ? (long)prism_analysis_steps(a)->count : 0 };
    if (out[0] < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        out[0] = ru.ru_maxrss;
    }
    ssize_t w = write(fd, out, sizeof out);
    return w == (ssize_t)sizeof out && a ? 0 : 1;
}

/* Peak RSS (KB) of a process that analyses the file, its node and step
 * counts. */
static long child_rss(const char *path, size_t *nodes, size_t *steps)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        char fdarg[16];
        snprintf(fdarg, sizeof fdarg, "%d", fd[1]);
        execl("/proc/self/exe", "analysis_bench", "--rss-child", path, fdarg, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    long in[3] = { -1, 0, 0 };
    ssize_t got = read(fd[0], in, sizeof in);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof in)
        return -1;
    *nodes = (size_t)in[1];
    *steps = (size_t)in[2];
    return in[0];
}

typedef struct export_run {
    const corpus *c;
    const char *format;
    char out[300];
} export_run;

static uint64_t run_export(void *ctx)
{
    export_run *e = ctx;
    char *argv[] = { (char *)"export", (char *)e->c->path, (char *)"--format",
                     (char *)e->format, (char *)"-o", e->out, NULL };
    FILE *devnull = fopen("/dev/null", "w");
    int rc = cmd_export(6, argv, devnull ? devnull : stdout);
    if (devnull)
        fclose(devnull);
    return (uint64_t)rc;
}

/* analyze FILE --format F -o OUT (the whole command: read, analyse, write) */
static uint64_t run_report(void *ctx)
{
    export_run *e = ctx;
    char *argv[] = { (char *)"analyze", (char *)e->c->path, (char *)"--format",
                     (char *)e->format, (char *)"-o", e->out, NULL };
    FILE *devnull = fopen("/dev/null", "w");
    int rc = cmd_analyze(6, argv, devnull ? devnull : stdout);
    if (devnull)
        fclose(devnull);
    return (uint64_t)rc;
}

/* Median read+aggregate rate over `runs` (CPU time of this single thread:
 * what is preempted on a shared VM does not count; the wall-clock figure is
 * printed beside it). */
static void time_analyze(corpus *c, unsigned runs, const char *what, const char *note)
{
    double cpu[BENCH_MAX_RUNS], wall[BENCH_MAX_RUNS];
    unsigned n = runs > BENCH_MAX_RUNS ? BENCH_MAX_RUNS : runs;
    bench_sink(run_analyze(c));
    for (unsigned i = 0; i < n; i++) {
        uint64_t c0 = bench_thread_ns(), w0 = bench_now_ns();
        bench_sink(run_analyze(c));
        cpu[i] = (double)(bench_thread_ns() - c0) * 1e-9;
        wall[i] = (double)(bench_now_ns() - w0) * 1e-9;
    }
    bench_stat t = bench_stat_of(cpu, n), tw = bench_stat_of(wall, n);
    char extra[160];
    snprintf(extra, sizeof extra, "%.1f ns/event CPU; wall clock %.1f M/s%s",
             t.median * 1e9 / (double)c->events, (double)c->events / tw.median / 1e6, note);
    bench_row_rate(what, (double)c->events, t, 1e6, "M events/s", extra, ">= 50 M/s");
}

/* compare: the two files loaded at once (rp_compare_files) against the
 * same two loads one after the other, rounds interleaved, wall clock. */
typedef struct pair_run {
    const corpus *a, *b;
} pair_run;

static uint64_t run_pair_serial(void *ctx)
{
    const pair_run *p = ctx;
    prism_analysis *a = report_load(p->a->path, NULL), *b = report_load(p->b->path, NULL);
    uint64_t v = (a ? prism_analysis_events(a) : 0) + (b ? prism_analysis_events(b) : 0);
    prism_analysis_free(a);
    prism_analysis_free(b);
    return v;
}

static uint64_t run_pair_compare(void *ctx)
{
    const pair_run *p = ctx;
    FILE *devnull = fopen("/dev/null", "w");
    int rc = rp_compare_files(p->a->path, p->b->path, "-", RP_TXT, 20, NULL,
                              devnull ? devnull : stdout);
    if (devnull)
        fclose(devnull);
    return (uint64_t)rc;
}

static void time_compare(const corpus *a, const corpus *b, unsigned runs)
{
    pair_run p = { a, b };
    double ser[BENCH_MAX_RUNS], par[BENCH_MAX_RUNS];
    unsigned n = runs > BENCH_MAX_RUNS ? BENCH_MAX_RUNS : runs;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned k = 0; k < 2; k++) {      /* the order alternates */
            bool serial = (i + k) % 2 == 0;
            uint64_t w0 = bench_now_ns();
            bench_sink(serial ? run_pair_serial(&p) : run_pair_compare(&p));
            (serial ? ser : par)[i] = (double)(bench_now_ns() - w0) * 1e-9;
        }
    }
    bench_stat ts = bench_stat_of(ser, n), tp = bench_stat_of(par, n);
    char extra[160];
    snprintf(extra, sizeof extra, "the two loads one after the other %.2f s, compare %.2f s "
             "(wall, medians of %u interleaved; %ld CPUs)", ts.median, tp.median, n,
             sysconf(_SC_NPROCESSORS_ONLN));
    bench_row_value("compare: two files at once", tp.median > 0 ? ts.median / tp.median : 0, "x",
                    extra, ">= 1.6x on 2 cores");
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--rss-child"))
        return rss_child(argv[2], atoi(argv[3]));
    double million = argc > 1 ? atof(argv[1]) : 10.0;
    unsigned runs = argc > 2 ? (unsigned)atoi(argv[2]) : 5;
    char dir[] = "/tmp/prism-abench-XXXXXX";
    if (million <= 0 || !mkdtemp(dir)) {
        fprintf(stderr, "analysis_bench: bad arguments or no temp dir\n");
        return 1;
    }
    corpus big = { 0 }, small = { 0 }, work = { 0 };
    if (corpus_build(&big, million, dir, "big.cbor", false) ||
        corpus_build(&small, million / 10, dir, "small.cbor", false) ||
        corpus_build(&work, million, dir, "work.cbor", true)) {
        fprintf(stderr, "analysis_bench: cannot build the profiles\n");
        return 1;
    }
    printf("analysis_bench: a training-loop stream written by libcollect: %.1f M records, "
           "%.1f MB\n", big.events / 1e6, big.out.len / 1e6);

    time_analyze(&big, runs, "analysis: read+aggregate", "");
    time_analyze(&work, runs, "analysis: ... transitions kept",
                 " (work counters or GPU records present)");

    char extra[128];
    /* memory grows with call paths and samples (steps, memory samples),
     * not events: here the steps grow with the events (one per 300), so
     * the growth per added step is printed beside the peak */
    size_t nodes_big = 0, nodes_small = 0, steps_big = 0, steps_small = 0;
    long rss_big = child_rss(big.path, &nodes_big, &steps_big);
    long rss_small = child_rss(small.path, &nodes_small, &steps_small);
    snprintf(extra, sizeof extra, "%zu call paths, %zu steps; %.1f M events, %zu steps: %.1f MB",
             nodes_big, steps_big, small.events / 1e6, steps_small, rss_small / 1024.0);
    bench_row_value("analysis: peak RSS", rss_big / 1024.0, "MB", extra,
                    "grows with paths and samples");
    bench_row_value("analysis: RSS per added step",
                    steps_big > steps_small ? (double)(rss_big - rss_small) * 1024.0 /
                                                  (double)(steps_big - steps_small) : 0,
                    "B", "(step record + memory sample kept for plots and p50/p95)", "< 100 B");
    bench_row_value("analysis: RSS ratio 10x events", rss_small > 0 ? (double)rss_big / rss_small : 0,
                    "x", "(peak RSS of a process analysing each; events are 10x)", NULL);

    time_compare(&big, &work, runs);

    static const char *const formats[] = { "chrome-trace", "csv", "folded", "json" };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        export_run e = { &big, formats[i], "" };
        snprintf(e.out, sizeof e.out, "%s/out.%s", dir, formats[i]);
        bench_stat te = bench_measure(run_export, &e, runs > 3 ? 3 : runs);
        long sz = file_size(e.out);
        char what[64];
        snprintf(what, sizeof what, "export: %s", formats[i]);
        snprintf(extra, sizeof extra, "%.1f MB written, %.2f s", sz / 1e6, te.median);
        bench_row_rate(what, (double)big.events, te, 1e6, "M events/s", extra, NULL);
        unlink(e.out);
    }
    /* the shareable page against the JSON report of the same file, both
     * the whole command, interleaved */
    {
        export_run h = { &big, "html", "" }, j = { &big, "json", "" };
        snprintf(h.out, sizeof h.out, "%s/report.html", dir);
        snprintf(j.out, sizeof j.out, "%s/report.json", dir);
        unsigned n = runs > 3 ? 3 : runs;
        double th[BENCH_MAX_RUNS], tj[BENCH_MAX_RUNS];
        bench_sink(run_report(&h) + run_report(&j));
        for (unsigned i = 0; i < n; i++) {
            for (unsigned k = 0; k < 2; k++) {
                export_run *e = (i + k) % 2 ? &j : &h;
                uint64_t t0 = bench_now_ns();
                bench_sink(run_report(e));
                (e == &h ? th : tj)[i] = (double)(bench_now_ns() - t0) * 1e-9;
            }
        }
        bench_stat sh = bench_stat_of(th, n), sj = bench_stat_of(tj, n);
        long szh = file_size(h.out), szj = file_size(j.out);
        snprintf(extra, sizeof extra, "%.1f MB profile -> %.0f KB page (JSON report %.0f KB); "
                 "%.2fx the JSON report's %.2f s", (double)big.out.len / 1e6, szh / 1e3, szj / 1e3,
                 sj.median > 0 ? sh.median / sj.median : 0, sj.median);
        bench_row_value("report: analyze --format html", sh.median, "s", extra,
                        "page bounded, opens in < 2 s");
        unlink(h.out);
        unlink(j.out);
    }
    if (getenv("PRISM_BENCH_KEEP")) {
        printf("kept: %s %s %s\n", big.path, small.path, work.path);
    } else {
        unlink(big.path);
        unlink(small.path);
        unlink(work.path);
        rmdir(dir);
    }
    free(big.out.data);
    free(small.out.data);
    free(work.out.data);
    return 0;
}
