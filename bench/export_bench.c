/*
 * export_bench - the exports' speed and size: `prism-top export` of a
 * profile in each format (and with --steps / --min-duration), the runs
 * interleaved (each round runs every case once, the order rotating), each
 * figure the median of its rounds with its ratio to a plain read of the
 * same file measured in the same rounds; and the size of the Chrome trace
 * of an imported torch.profiler trace against the trace itself (a
 * synthetic minified Kineto trace written here, and
 * tests/fixtures/gpu/torch_amp_trace.json.gz when run from the source
 * tree).  Prints figures; never fails on time.
 *
 *   export_bench [RECORDS_MILLIONS [ROUNDS]]    default 10 M records, 7 rounds
 *
 * Two profiles: a training loop written by libcollect (loop_profile.h; the
 * file names its stepping thread, so the first pass is a plain read), and
 * a refgen one of the same size with GPU records and no INFO steps.thread
 * (the first pass also follows the threads' stacks to find the training
 * thread: reports/export_lead.c).  "events" are the profile's records
 * (what the reader delivers), as in analysis_bench.  Exports write to a
 * new file (-o: written whole, fsync'd, renamed), as a user's would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bench_util.h"
#include "loop_profile.h"
#include "../cli/cli.h"
#include "prism/import.h"
#include "prism/profile.h"
#include "refgen.h"

#define KINETO_FIXTURE "tests/fixtures/gpu/torch_amp_trace.json.gz"

typedef struct op {
    const char *what;           /* row name                                  */
    int corpus;                 /* 0: the libcollect loop, 1: refgen         */
    const char *format;         /* NULL: the plain read                      */
    const char *const *more;    /* extra arguments, NULL-terminated, or NULL */
    double sec[BENCH_MAX_RUNS];
    long bytes;
    bool failed;                /* the export failed (an older build without
                                   the option, in bench/ab.sh): not timed  */
} op;

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* The file read once with no callbacks: the records it holds. */
static uint64_t plain_read(const char *path)
{
    prism_reader_callbacks cb = { 0 };
    prism_reader *r = NULL;
    uint64_t n = 0;
    if (prism_read_file(path, &cb, NULL, &r) == PRISM_OK)
        n = prism_reader_stats_get(r)->records;
    prism_reader_free(r);
    return n;
}

/* One export of path into out; its exit status. */
static int export_once(const char *path, const op *o, const char *out)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)"export";
    argv[n++] = (char *)path;
    argv[n++] = (char *)"--format";
    argv[n++] = (char *)o->format;
    argv[n++] = (char *)"-o";
    argv[n++] = (char *)out;
    for (size_t i = 0; o->more && o->more[i] && n < 15; i++)
        argv[n++] = (char *)o->more[i];
    argv[n] = NULL;
    return cmd_export(n, argv, stdout);
}

/* One timed run; the output is removed after (untimed), so that no run
 * pays for replacing the last one's file. */
static double run_op(const char *path, op *o, const char *out)
{
    uint64_t t0 = bench_now_ns();
    if (o->format) {
        if (export_once(path, o, out) != EXIT_OK)
            o->failed = true;
    } else {
        bench_sink(plain_read(path));
    }
    double sec = (double)(bench_now_ns() - t0) * 1e-9;
    if (o->format) {
        o->bytes = file_size(out);
        unlink(out);
    }
    return sec;
}

/* A minified torch.profiler (Kineto) trace of about mb MB: steps of
 * nested cpu_ops and their kernels, the fields Kineto writes, one line. */
static int write_kineto(const char *path, double mb)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    static const char *const ops[] = { "aten::linear", "aten::addmm", "aten::relu",
                                       "aten::layer_norm", "aten::native_layer_norm",
                                       "aten::add", "aten::mul", "aten::copy_" };
    fputs("{\"schemaVersion\":1,\"deviceProperties\":[],\"displayTimeUnit\":\"ms\","
          "\"baseTimeNanoseconds\":1700000000000000000,\"traceEvents\":["
          "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":0,"
          "\"args\":{\"name\":\"python3\"}},"
          "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":4242,"
          "\"args\":{\"name\":\"thread 4242 (python3)\"}}", f);
    uint64_t ts = 1000000, ext = 1, corr = 1;   /* ns */
    for (unsigned step = 0; ftell(f) < (long)(mb * 1e6); step++) {
        uint64_t s0 = ts;
        ts += 5000;
        for (int layer = 0; layer < 48; layer++) {
            uint64_t a = ts;
            ts += 1000;
            for (int k = 0; k < 3; k++) {       /* children of the layer's op */
                const char *name = ops[(layer + k) % 8];
                fprintf(f, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":4242,"
                        "\"tid\":4242,\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"args\":"
                        "{\"External id\":%llu,\"Record function id\":0,\"Ev Idx\":%llu}}",
                        name, (unsigned long long)(ts / 1000), (unsigned long long)(ts % 1000),
                        3ull, 417ull, (unsigned long long)ext, (unsigned long long)ext);
                ext++;
                fprintf(f, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                        "\"pid\":4242,\"tid\":4242,\"ts\":%llu.%03llu,\"dur\":2.1,\"args\":"
                        "{\"External id\":%llu,\"correlation\":%llu}}",
                        (unsigned long long)((ts + 500) / 1000),
                        (unsigned long long)((ts + 500) % 1000), (unsigned long long)ext,
                        (unsigned long long)corr);
                fprintf(f, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_128x64_tn\","
                        "\"pid\":0,\"tid\":7,\"ts\":%llu.%03llu,\"dur\":11.2,\"args\":"
                        "{\"External id\":%llu,\"device\":0,\"stream\":7,\"correlation\":%llu,"
                        "\"registers per thread\":128,\"shared memory\":16384,"
                        "\"grid\":[64,8,1],\"block\":[256,1,1]}}",
                        (unsigned long long)((ts + 4000) / 1000),
                        (unsigned long long)((ts + 4000) % 1000), (unsigned long long)ext,
                        (unsigned long long)corr);
                corr++;
                ts += 4000;
            }
            fprintf(f, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"layer.%d\",\"pid\":4242,"
                    "\"tid\":4242,\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"args\":"
                    "{\"External id\":%llu,\"Record function id\":0}}", layer,
                    (unsigned long long)(a / 1000), (unsigned long long)(a % 1000),
                    (unsigned long long)((ts - a + 500) / 1000),
                    (unsigned long long)((ts - a + 500) % 1000), (unsigned long long)ext++);
            ts += 1000;
        }
        fprintf(f, ",{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%u\","
                "\"pid\":4242,\"tid\":4242,\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"args\":"
                "{\"External id\":%llu}}", step, (unsigned long long)(s0 / 1000),
                (unsigned long long)(s0 % 1000), (unsigned long long)((ts - s0) / 1000),
                (unsigned long long)((ts - s0) % 1000), (unsigned long long)ext++);
        ts += 2000;
    }
    fputs("],\"traceName\":\"bench\"}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

/* The uncompressed size of a .gz file, or -1. */
static long gz_size(const char *path)
{
    gzFile g = gzopen(path, "rb");
    if (!g)
        return -1;
    char buf[1 << 16];
    long n = 0;
    int k;
    while ((k = gzread(g, buf, sizeof buf)) > 0)
        n += k;
    gzclose(g);
    return k < 0 ? -1 : n;
}

static void trace_ratio(const char *what, const char *trace, long in, const char *out)
{
    op chrome = { .format = "chrome-trace" };
    if (in <= 0 || export_once(trace, &chrome, out) != EXIT_OK) {
        printf("  %-30s (not measured: %s unreadable)\n", what, trace);
        return;
    }
    long o = file_size(out);
    char extra[160];
    snprintf(extra, sizeof extra, "%.1f MB trace -> %.1f MB chrome trace", in / 1e6, o / 1e6);
    bench_row_value(what, (double)o / (double)in, "x", extra, "<= 1.00 x");
    unlink(out);
}

int main(int argc, char **argv)
{
    double million = argc > 1 ? atof(argv[1]) : 10.0;
    unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 7;
    char dir[] = "/tmp/prism-xbench-XXXXXX";
    if (million <= 0 || rounds < 1 || !mkdtemp(dir)) {
        fprintf(stderr, "export_bench: bad arguments or no temp dir\n");
        return 1;
    }
    if (rounds > BENCH_MAX_RUNS)
        rounds = BENCH_MAX_RUNS;
    prism_import_register();            /* as prism-top: traces read too */
    char path[2][300], out[300], kin[300];
    snprintf(path[0], sizeof path[0], "%s/loop.cbor", dir);
    snprintf(path[1], sizeof path[1], "%s/refgen.cbor", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(kin, sizeof kin, "%s/kineto.json", dir);

    /* refgen: 2 threads, 24 layers, 64 KiB chunks, GPU records */
    refgen_opts ro = refgen_defaults();
    ro.layers = 24;
    ro.chunk_bytes = 64 << 10;
    ro.steps = 1;
    refgen_out probe, prof;
    if (loop_profile_write(path[0], (uint64_t)(million * 1e6), false) ||
        refgen_build(&ro, &probe)) {
        fprintf(stderr, "export_bench: cannot write the profiles\n");
        return 1;
    }
    uint64_t records[2] = { plain_read(path[0]), 0 };
    ro.steps = (unsigned)((double)records[0] / (double)(probe.records ? probe.records : 1)) + 1;
    free(probe.data);
    if (refgen_build(&ro, &prof) || refgen_write_file(path[1], &prof)) {
        fprintf(stderr, "export_bench: cannot write the profiles\n");
        return 1;
    }
    free(prof.data);
    records[1] = plain_read(path[1]);
    printf("export_bench: a training loop written by libcollect, %.1f M records, %.1f MB; "
           "a refgen one (GPU records, no INFO steps.thread), %.1f M records, %.1f MB; "
           "%u interleaved rounds\n", records[0] / 1e6, file_size(path[0]) / 1e6,
           records[1] / 1e6, file_size(path[1]) / 1e6, rounds);

    static const char *const steps_arg[] = { "--steps", "100-199", NULL };
    static const char *const min_arg[] = { "--min-duration", "1us", NULL };
    op ops[] = {
        { .what = "read (baseline)" },
        { .what = "export: chrome-trace", .format = "chrome-trace" },
        { .what = "export: speedscope", .format = "speedscope" },
        { .what = "export: csv", .format = "csv" },
        { .what = "export: folded", .format = "folded" },
        { .what = "chrome-trace --steps 100-199", .format = "chrome-trace", .more = steps_arg },
        { .what = "chrome-trace --min-dur. 1us", .format = "chrome-trace", .more = min_arg },
        { .what = "refgen: read (baseline)", .corpus = 1 },
        { .what = "refgen: chrome-trace", .corpus = 1, .format = "chrome-trace" },
    };
    size_t nops = sizeof ops / sizeof ops[0];
    for (size_t i = 0; i < nops; i++)          /* warm: page cache, first faults */
        run_op(path[ops[i].corpus], &ops[i], out);
    for (unsigned r = 0; r < rounds; r++)
        for (size_t k = 0; k < nops; k++) {
            size_t i = (k + r) % nops;
            if (!ops[i].failed)
                ops[i].sec[r] = run_op(path[ops[i].corpus], &ops[i], out);
        }
    bench_stat base[2] = { bench_stat_of(ops[0].sec, rounds), bench_stat_of(ops[7].sec, rounds) };
    for (size_t i = 0; i < nops; i++) {
        if (ops[i].failed) {
            printf("  %-30s (not measured: the export failed)\n", ops[i].what);
            continue;
        }
        bench_stat t = bench_stat_of(ops[i].sec, rounds);
        const bench_stat *b = &base[ops[i].corpus];
        uint64_t n = records[ops[i].corpus];
        char extra[160];
        if (!ops[i].format)
            snprintf(extra, sizeof extra, "%.3f s", t.median);
        else
            snprintf(extra, sizeof extra, "%.2fx the read's time; %.1f MB, %.1f B/record",
                     b->median > 0 ? t.median / b->median : 0, ops[i].bytes / 1e6,
                     (double)ops[i].bytes / (double)n);
        bool chrome = ops[i].format && !strcmp(ops[i].format, "chrome-trace") && !ops[i].more;
        bench_row_rate(ops[i].what, (double)n, t, 1e6, "M events/s", extra,
                       chrome ? ">= 20 M/s" : NULL);
    }

    if (write_kineto(kin, 20) == 0)
        trace_ratio("imported trace: size out/in", kin, file_size(kin), out);
    unlink(kin);
    if (access(KINETO_FIXTURE, R_OK) == 0)
        trace_ratio("real torch trace: out/in", KINETO_FIXTURE, gz_size(KINETO_FIXTURE), out);
    unlink(path[0]);
    unlink(path[1]);
    rmdir(dir);
    return 0;
}
