/*
 * cupti_bench.c - PRISM's host work per CUDA launch, offline, against the
 * CUPTI double (tests/cupti_double.c loaded through PRISM_CUPTI_PATH): no
 * GPU, no real libcupti, so CUPTI's own cost is not in these figures, only
 * what PRISM adds (issue 27, defect 7):
 *
 *   1. the timestamp callback (PRISM's clock handed to CUPTI), called by
 *      CUPTI on the launching thread at the start and end of each API
 *      record; baseline: an empty callback through the same pointer;
 *   2. the writer's work per launch record: a runtime launch record and its
 *      kernel record (64 kernel names) completed through PRISM's buffer
 *      callbacks, translated, names interned, queued for encoding (encoding
 *      itself is format/'s, in writer_bench); baseline: one read pass over
 *      the same bytes;
 *   3. per launch: 2 x (1) + (2), against the 1 us target.
 *
 * Rounds are interleaved (baseline, measured, ...) and the figures are the
 * medians.  Never fails on time.
 *
 *   usage: cupti_bench [rounds]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "bench_util.h"
#include "../libcollect/cupti.h"
#include "../tests/cupti_double.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

#define CALLS 1000000u          /* timestamp callbacks per round */
#define LAUNCHES 8192u          /* launches per round: one 4 MiB buffer */
#define NAMES 64u

typedef uint64_t (*ts_fn)(void);

static uint64_t empty_ts(void)
{
    return 0;
}

static double per_call_ns(ts_fn f)
{
    ts_fn volatile fp = f;
    uint64_t sum = 0, t0 = bench_now_ns();
    for (unsigned i = 0; i < CALLS; i++)
        sum += fp();
    uint64_t t1 = bench_now_ns();
    bench_sink(sum);
    return (double)(t1 - t0) / CALLS;
}

static char names[NAMES][40];

/* LAUNCHES launch + kernel records into the double, completed to PRISM. */
static size_t fill(cd_emit_fn emit, cd_complete_fn complete, uint32_t corr0)
{
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    uint64_t t = 1000000;
    for (uint32_t i = 0; i < LAUNCHES; i++, t += 5000) {
        CUpti_ActivityAPI a = { .kind = CUPTI_ACTIVITY_KIND_RUNTIME,
                                .cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                .start = t, .end = t + 1500, .threadId = tid,
                                .correlationId = corr0 + i };
        CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };
        k.start = t + 2000;
        k.end = t + 4000;
        k.correlationId = corr0 + i;
        k.streamId = 7;
        k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
        k.name = names[i % NAMES];
        emit(&a, sizeof a);
        emit(&k, sizeof k);
    }
    complete();
    return LAUNCHES * (((sizeof(CUpti_ActivityAPI) + 7) & ~7u) +
                       ((sizeof(CUpti_ActivityKernel10) + 7) & ~7u) + 2 * sizeof(size_t));
}

static double read_pass_ns(const uint8_t *mem, size_t bytes)
{
    uint64_t sum = 0, t0 = bench_now_ns();
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t v;
        memcpy(&v, mem + i, 8);
        sum += v;
    }
    uint64_t t1 = bench_now_ns();
    bench_sink(sum);
    return (double)(t1 - t0);
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 9;
    if (rounds < 1 || rounds > BENCH_MAX_RUNS)
        rounds = 9;
    char exe[512], path[600];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(path, sizeof path, "%s/../tests/libcupti_double.so", exe);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("cupti_bench: no CUPTI double (%s); skipped\n", path);
        return 0;
    }
    cupti_double_ctl *ctl = ((cd_ctl_fn)dlsym(h, "cupti_double"))();
    cd_emit_fn emit;
    cd_complete_fn complete;
    *(void **)&emit = dlsym(h, "cd_emit");
    *(void **)&complete = dlsym(h, "cd_complete");
    for (unsigned i = 0; i < NAMES; i++)
        snprintf(names[i], sizeof names[i], "_Z12gemm_kernel%uPfS_", i);

    char out[] = "/tmp/prism-cupti-bench-XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0)
        return 1;
    close(fd);
    setenv("PRISM_CUPTI_PATH", path, 1);
    prism_config c;
    prism_config_default(&c);
    c.output = out;
    c.collect_memory = false;
    c.cpu_interval_ms = 0;
    c.flush_interval_ms = 600000;       /* the bench drains, not the writer */
    if (prism_init(&c) != 0 || !prism__s)
        return 1;
    session *s = prism__s;
    prism__cupti_injected(s);
    if (!ctl->timestamp) {
        printf("cupti_bench: CUPTI (the double) did not attach; skipped\n");
        prism_shutdown();
        unlink(out);
        return 0;
    }
    ts_fn prism_ts = (ts_fn)ctl->timestamp;
    uint8_t *plain = malloc(8u << 20);
    if (!plain)
        return 1;
    memset(plain, 1, 8u << 20);

    double ts[BENCH_MAX_RUNS], base_ts[BENCH_MAX_RUNS];
    double rec[BENCH_MAX_RUNS], base_rec[BENCH_MAX_RUNS];
    uint32_t corr = 1;
    for (unsigned r = 0; r <= rounds; r++) {    /* round 0: warm-up */
        double b = per_call_ns(empty_ts), m = per_call_ns(prism_ts);
        size_t bytes = fill(emit, complete, corr);
        corr += LAUNCHES;
        double rb = read_pass_ns(plain, bytes) / LAUNCHES;
        uint64_t t0 = bench_now_ns();
        cupti_drain_buffers(s, true);
        uint64_t t1 = bench_now_ns();
        const prism_gpu_record *g;
        size_t got = cupti_records(&g);
        cupti_drained();
        if (got != 2u * LAUNCHES) {
            printf("cupti_bench: %zu records translated, %u expected\n", got, 2 * LAUNCHES);
            return 1;
        }
        if (r) {
            ts[r - 1] = m;
            base_ts[r - 1] = b;
            rec[r - 1] = (double)(t1 - t0) / LAUNCHES;
            base_rec[r - 1] = rb;
        }
    }
    bench_stat s_ts = bench_stat_of(ts, rounds), s_bts = bench_stat_of(base_ts, rounds);
    bench_stat s_rec = bench_stat_of(rec, rounds), s_brec = bench_stat_of(base_rec, rounds);
    printf("cupti_bench: PRISM's host work per CUDA launch against the CUPTI double "
           "(no GPU; median of %u interleaved rounds)\n", rounds);
    char extra[96];
    snprintf(extra, sizeof extra, "empty callback %.1f ns (x%.1f)", s_bts.median,
             s_bts.median > 0 ? s_ts.median / s_bts.median : 0);
    bench_row_value("timestamp callback", s_ts.median, "ns/call", extra, NULL);
    snprintf(extra, sizeof extra, "read pass %.1f ns (x%.1f)", s_brec.median,
             s_brec.median > 0 ? s_rec.median / s_brec.median : 0);
    bench_row_value("launch + kernel records", s_rec.median, "ns/launch", extra, NULL);
    double total = 2 * s_ts.median + s_rec.median;
    bench_row_value("per launch (2 stamps + records)", total, "ns", NULL,
                    total <= 1000 ? "<= 1000 ns: met" : "<= 1000 ns: NOT met");
    free(plain);
    prism_shutdown();
    unlink(out);
    return 0;
}

#else

int main(void)
{
    puts("cupti_bench: built without the CUPTI headers; skipped");
    return 0;
}

#endif
