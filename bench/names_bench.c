/*
 * names_bench - the analysis against the number of distinct region names
 * (Python-function and op traces bring tens of thousands): the same call
 * tree once with a distinct name per path and once with names shared
 * between paths (sibling position and depth), so the ratio of the two shows
 * what each distinct name costs beyond its path.  It must stay linear:
 * ns per event flat as the names grow, the ratio near 1.  Memory, per
 * path: what the analysis costs beyond the names' own bytes (its peak RSS
 * growth, measured in a child, less the bytes of the distinct names),
 * against the target of 200 B a path at 1 M paths (issue 28), with the
 * same tree with shared names beside it, and the heap in use after reading
 * and after the refresh.  Prints figures; never fails on time.
 *
 *   names_bench [RUNS]                      N = 10 k, 100 k, 1 M; 3 runs
 *   names_bench --write N distinct|shared|mixed FILE
 *                                           write one profile (to time
 *                                           `prism-top analyze FILE`)
 *
 * The tree is Python-trace shaped: a root per step, fan-out 8, depth 7 at
 * 1 M paths, every path called once per step, 4 steps, names of ~40
 * bytes ("pkg/mod_12.py(345): fn_67890").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "prism/analysis.h"
#include "prism/profile.h"

#define FANOUT 8u
#define STEPS 4u
#define CHUNK (64u << 10)

typedef struct out {
    uint8_t *data;
    size_t len, cap;
    uint64_t events;
} out;

typedef struct gen {
    out *o;
    uint8_t buf[CHUNK];
    prism_enc enc;
    bool open, failed;
    uint32_t kind, depth;
    uint64_t seq[2], now;      /* per stream (0, 1) */
    uint32_t nodes;             /* call paths (tree nodes) */
    /* mixed: GPU launches and CPU samples, written after each step */
    bool mixed;
    const uint32_t *kname;      /* per node: its kernel's name id, 0: none */
    uint32_t launch;            /* "cudaLaunchKernel" */
    prism_gpu_record *gpu;
    size_t ngpu, gcap;
    prism_cpu_sample *cpu;
    size_t ncpu, ccap;
    uint64_t cpu_ts, cpu_on, cpu_wait;
} gen;

static void out_append(gen *g, const uint8_t *p, size_t n)
{
    out *o = g->o;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1u << 20;
        while (cap < o->len + n)
            cap *= 2;
        uint8_t *d = realloc(o->data, cap);
        if (!d) {
            g->failed = true;
            return;
        }
        o->data = d;
        o->cap = cap;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

static void flush(gen *g)
{
    size_t len;
    if (!g->open)
        return;
    g->open = false;
    if (prism_enc_records(&g->enc) && prism_enc_finish(&g->enc, &len) == PRISM_OK)
        out_append(g, g->buf, len);
}

static void begin(gen *g, prism_chunk_kind kind, uint32_t stream, uint64_t base)
{
    flush(g);
    if (prism_enc_begin(&g->enc, g->buf, sizeof g->buf, kind, stream, g->seq[stream]++, base,
                        kind == PRISM_CHUNK_REGIONS ? g->depth : 0) != PRISM_OK)
        g->failed = true;
    g->open = true;
    g->kind = kind;
}

/* Append with the chunk of `kind` open, starting a fresh one when full. */
#define APPEND(g, K, base, call) do { \
        if (!(g)->open || (g)->kind != (K)) \
            begin((g), (K), (K) == PRISM_CHUNK_REGIONS ? 1 : 0, (base)); \
        if ((call) == PRISM_E_NOSPACE) { \
            begin((g), (K), (K) == PRISM_CHUNK_REGIONS ? 1 : 0, (base)); \
            if ((call) != PRISM_OK) (g)->failed = true; \
        } \
    } while (0)

/* The name of tree node i (0 is the root): distinct per node, or shared by
 * every node at the same depth and sibling position.  Mixed: distinct, some
 * named like syncs and like the input pipeline (the rules that go by
 * name). */
static int node_name(char *s, size_t cap, uint32_t i, uint32_t depth, bool shared, bool mixed)
{
    if (i == 0)
        return snprintf(s, cap, "ProfilerStep");
    uint32_t key = shared ? depth * FANOUT + (i - 1) % FANOUT : i;
    if (mixed && i % 13 == 0)
        return snprintf(s, cap, "torch/cuda/m%u.py(%u): synchronize_%u", key % 97, key % 1009, key);
    if (mixed && i % 17 == 0)
        return snprintf(s, cap, "torch/utils/d%u.py(%u): load_batch_%u", key % 97, key % 1009,
                        key);
    return snprintf(s, cap, "pkg/mod_%u.py(%u): fn_%u", key % 97, key % 1009, key);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size, bool *failed)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(p, c * size);
    if (!q) {
        *failed = true;
        return p;
    }
    *cap = c;
    return q;
}

/* Mixed: a kernel launched from leaf i, and a CPU sample every ms. */
static void leaf_extras(gen *g, uint32_t i, uint64_t start)
{
    if (g->kname[i]) {
        g->gpu = grow(g->gpu, &g->gcap, g->ngpu + 2, sizeof *g->gpu, &g->failed);
        if (g->ngpu + 2 <= g->gcap) {
            g->gpu[g->ngpu++] = (prism_gpu_record){ .type = PRISM_GPU_API, .start = start + 10,
                                                    .end = start + 40, .stream = 1,
                                                    .correlation = g->ngpu + 1,
                                                    .name = g->launch };
            g->gpu[g->ngpu] = (prism_gpu_record){ .type = PRISM_GPU_KERNEL, .start = start + 500,
                                                  .end = start + 500 + 200 + i % 300,
                                                  .stream = 7, .correlation = g->ngpu,
                                                  .name = g->kname[i], .grid = { 64, 1, 1 },
                                                  .block = { 128, 1, 1 } };
            g->ngpu++;
        }
    }
    if (g->now - g->cpu_ts >= 1000000) {
        uint64_t span = g->now - g->cpu_ts;
        g->cpu_ts = g->now;
        g->cpu_on += span / 20 * 11;
        g->cpu_wait += span / 20;
        g->cpu = grow(g->cpu, &g->ccap, g->ncpu + 1, sizeof *g->cpu, &g->failed);
        if (g->ncpu < g->ccap)
            g->cpu[g->ncpu++] = (prism_cpu_sample){ g->now, 1, PRISM_CPU_HAVE_WAIT, g->cpu_on,
                                                    g->cpu_wait };
    }
}

static void flush_extras(gen *g)
{
    for (size_t k = 0; k < g->ncpu; k++)
        APPEND(g, PRISM_CHUNK_CPU, g->cpu[k].ts, prism_enc_cpu(&g->enc, &g->cpu[k]));
    for (size_t k = 0; k < g->ngpu; k++)
        APPEND(g, PRISM_CHUNK_GPU, g->gpu[k].start, prism_enc_gpu(&g->enc, &g->gpu[k]));
    g->ncpu = g->ngpu = 0;
}

static uint32_t depth_of(uint32_t i)
{
    uint32_t d = 0;
    for (; i; i = (i - 1) / FANOUT)
        d++;
    return d;
}

/* Depth-first walk of the subtree of node i: enter, children, exit. */
static void walk(gen *g, uint32_t i, const uint32_t *ids)
{
    g->now += 100;
    APPEND(g, PRISM_CHUNK_REGIONS, g->now, prism_enc_enter(&g->enc, g->now, ids[i]));
    g->depth++;
    g->o->events++;
    uint64_t first = (uint64_t)i * FANOUT + 1;
    if (first >= g->nodes) {            /* a leaf */
        uint64_t start = g->now;
        g->now += 1000 + i % 700;
        if (g->mixed)
            leaf_extras(g, i, start);
    }
    for (uint64_t c = first; c < first + FANOUT && c < g->nodes; c++)
        walk(g, (uint32_t)c, ids);
    g->now += 50;
    APPEND(g, PRISM_CHUNK_REGIONS, g->now, prism_enc_exit(&g->enc, g->now));
    g->depth--;
    g->o->events++;
}

/* Intern a name, written into a STRINGS chunk when new. */
static uint32_t intern(gen *g, prism_strtab *tab, const char *s, size_t n, uint32_t *written)
{
    uint32_t id;
    bool is_new;
    if (prism_strtab_intern(tab, s, n, &id, &is_new) != PRISM_OK) {
        g->failed = true;
        return 0;
    }
    if (!is_new)
        return id;
    /* STRINGS chunks carry consecutive ids from their base */
    if (!g->open || g->kind != PRISM_CHUNK_STRINGS)
        begin(g, PRISM_CHUNK_STRINGS, 0, *written + 1);
    if (prism_enc_string(&g->enc, s, n) == PRISM_E_NOSPACE) {
        begin(g, PRISM_CHUNK_STRINGS, 0, *written + 1);
        if (prism_enc_string(&g->enc, s, n) != PRISM_OK)
            g->failed = true;
    }
    (*written)++;
    return id;
}

/* A profile of `nodes` call paths, in memory; 0 on success.  Mixed:
 * distinct names, some sync- and data-like, a kernel of its own name
 * launched from every 4th leaf, CPU samples (the rules' paths by name). */
static int build(out *o, uint32_t nodes, bool shared, bool mixed)
{
    gen *g = calloc(1, sizeof *g);
    uint32_t *ids = malloc((size_t)nodes * sizeof *ids);
    uint32_t *kname = calloc(nodes ? nodes : 1, sizeof *kname);
    prism_strtab *tab = prism_strtab_new();
    memset(o, 0, sizeof *o);
    if (!g || !ids || !kname || !tab || !nodes)
        goto fail;
    g->o = o;
    g->nodes = nodes;
    g->mixed = mixed;
    g->kname = kname;
    uint8_t hdr[1024];
    size_t hlen;
    prism_header h = { .producer = "names_bench", .host = "bench", .pid = 1, .clock = "synthetic",
                       .start_mono_ns = 1000, .version_minor = 1 };
    if (prism_header_encode(&h, hdr, sizeof hdr, &hlen) != PRISM_OK)
        goto fail;
    out_append(g, hdr, hlen);
    uint32_t written = 0;
    for (uint32_t i = 0; i < nodes; i++) {
        char s[96];
        int n = node_name(s, sizeof s, i, depth_of(i), shared, mixed);
        ids[i] = intern(g, tab, s, (size_t)n, &written);
        if (mixed && i % 4 == 0 && (uint64_t)i * FANOUT + 1 >= nodes) {
            n = snprintf(s, sizeof s, "void gemm_kernel<%u, %u>(float const*, float*)", i % 7,
                         i);
            kname[i] = intern(g, tab, s, (size_t)n, &written);
        }
    }
    if (mixed)
        g->launch = intern(g, tab, "cudaLaunchKernel", 16, &written);
    if (g->failed)
        goto fail;
    begin(g, PRISM_CHUNK_THREADS, 0, 0);
    prism_thread th = { .stream = 1, .os_tid = 1000, .name = "main" };
    if (prism_enc_thread(&g->enc, &th) != PRISM_OK)
        goto fail;
    g->now = 1000;
    for (uint32_t s = 0; s < STEPS; s++) {
        uint64_t start = g->now;
        walk(g, 0, ids);
        prism_step st = { start, g->now, s, 0, PRISM_STEP_SAMPLED };
        APPEND(g, PRISM_CHUNK_STEPS, start, prism_enc_step(&g->enc, &st));
        flush_extras(g);
    }
    prism_footer f = { g->now, o->events + STEPS, 0, g->seq[0] + g->seq[1], true };
    begin(g, PRISM_CHUNK_FOOTER, 0, 0);
    if (prism_enc_footer(&g->enc, &f) != PRISM_OK)
        goto fail;
    flush(g);
    if (g->failed)
        goto fail;
    prism_strtab_free(tab);
    free(ids);
    free(kname);
    free(g->gpu);
    free(g->cpu);
    free(g);
    return 0;
fail:
    prism_strtab_free(tab);
    free(ids);
    free(kname);
    if (g) {
        free(g->gpu);
        free(g->cpu);
    }
    free(g);
    free(o->data);
    memset(o, 0, sizeof *o);
    return -1;
}

static uint64_t run_analyze(void *ctx)
{
    const out *o = ctx;
    prism_analysis *a = prism_analysis_new(NULL);
    prism_reader_callbacks cb;
    prism_analysis_callbacks(&cb);
    prism_reader *r = prism_reader_new(&cb, a);
    prism_analysis_attach(a, r);
    prism_reader_feed(r, o->data, o->len);
    prism_reader_finish(r);
    prism_analysis_refresh(a);
    size_t nops;
    prism_analysis_ops(a, &nops);
    uint64_t v = prism_analysis_tree(a)->count + nops + prism_analysis_events(a);
    prism_analysis_free(a);
    prism_reader_free(r);
    return v;
}

/* What analysing a profile costs in memory, measured in a child so that
 * every run starts from the same heap (the free memory it inherits given
 * back first, or reusing it would hide the growth): its peak RSS growth
 * (the kernel's high-water mark, reset before the run where /proc allows
 * it, less the RSS before: the profile's bytes are already resident), and
 * the heap in use after reading (the streaming state and the names) and
 * after the refresh (plus the published trees, ops and indexes), all in
 * bytes. */
typedef struct mem_use {
    double peak, read, refreshed;
} mem_use;

/* A "VmRSS:" or "VmHWM:" line of /proc/self/status, in bytes; -1 without. */
static double status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n)) {
            v = strtod(line + n, NULL) * 1024.0;
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* Reset the high-water mark to the current RSS (Linux >= 4.0). */
static bool hwm_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static double heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 m = mallinfo2();
    return (double)(m.uordblks + m.hblkhd);
#else
    return -1;
#endif
}

static mem_use child_mem(const out *o)
{
    mem_use m = { -1, -1, -1 };
    int fd[2];
    if (pipe(fd) != 0)
        return m;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        struct rusage ru;
#ifdef __GLIBC__
        malloc_trim(0);                 /* the parent's freed heap: not ours */
#endif
        bool hwm = hwm_reset();
        double rss0 = status_kb("VmRSS:"), heap0 = heap_in_use();
        getrusage(RUSAGE_SELF, &ru);
        long max0 = ru.ru_maxrss;
        prism_analysis *a = prism_analysis_new(NULL);
        prism_reader_callbacks cb;
        prism_analysis_callbacks(&cb);
        prism_reader *r = prism_reader_new(&cb, a);
        prism_analysis_attach(a, r);
        prism_reader_feed(r, o->data, o->len);
        prism_reader_finish(r);
        m.read = heap_in_use() - heap0;
        prism_analysis_refresh(a);
        size_t nops;
        prism_analysis_ops(a, &nops);
        bench_sink(prism_analysis_tree(a)->count + nops);
        m.refreshed = heap_in_use() - heap0;
        if (hwm && rss0 >= 0 && status_kb("VmHWM:") >= 0) {
            m.peak = status_kb("VmHWM:") - rss0;
        } else {
            getrusage(RUSAGE_SELF, &ru);
            m.peak = (double)(ru.ru_maxrss - max0) * 1024.0;
        }
        if (heap0 < 0)
            m.read = m.refreshed = -1;
        prism_analysis_free(a);
        prism_reader_free(r);
        _exit(write(fd[1], &m, sizeof m) == (ssize_t)sizeof m ? 0 : 1);
    }
    close(fd[1]);
    if (pid < 0 || read(fd[0], &m, sizeof m) != (ssize_t)sizeof m)
        m = (mem_use){ -1, -1, -1 };
    close(fd[0]);
    int status;
    if (pid > 0)
        waitpid(pid, &status, 0);
    return m;
}

/* Median of `runs` children's figures, each field on its own. */
static mem_use mem_median(const out *o, unsigned runs)
{
    double pk[BENCH_MAX_RUNS], rd[BENCH_MAX_RUNS], rf[BENCH_MAX_RUNS];
    if (runs > BENCH_MAX_RUNS)
        runs = BENCH_MAX_RUNS;
    for (unsigned i = 0; i < runs; i++) {
        mem_use m = child_mem(o);
        pk[i] = m.peak, rd[i] = m.read, rf[i] = m.refreshed;
    }
    return (mem_use){ bench_stat_of(pk, runs).median, bench_stat_of(rd, runs).median,
                      bench_stat_of(rf, runs).median };
}

/* The bytes of the distinct names of a profile of n paths (each name's
 * own bytes, no terminator): what a path may cost beyond its name. */
static double name_bytes(uint32_t n, bool shared)
{
    double sum = 0;
    char s[96];
    if (shared) {                       /* one name per depth and position */
        bool *seen = calloc((size_t)(depth_of(n) + 1) * FANOUT, 1);
        for (uint32_t i = 0; seen && i < n; i++) {
            uint32_t d = depth_of(i), key = i ? d * FANOUT + (i - 1) % FANOUT : 0;
            if (!seen[key]) {
                seen[key] = true;
                sum += node_name(s, sizeof s, i, d, true, false);
            }
        }
        free(seen);
        return sum;
    }
    for (uint32_t i = 0; i < n; i++)
        sum += node_name(s, sizeof s, i, depth_of(i), false, false);
    return sum;
}

static int write_one(const char *nstr, const char *kind, const char *path)
{
    out o;
    uint32_t n = (uint32_t)strtoul(nstr, NULL, 10);
    bool shared = !strcmp(kind, "shared"), mixed = !strcmp(kind, "mixed");
    if ((!shared && !mixed && strcmp(kind, "distinct")) || build(&o, n, shared, mixed)) {
        fprintf(stderr, "names_bench: cannot build the profile\n");
        return 1;
    }
    FILE *f = fopen(path, "wb");
    size_t w = f ? fwrite(o.data, 1, o.len, f) : 0;
    int bad = !f || w != o.len || fclose(f) != 0;
    printf("%s: %u call paths, %s names, %llu region events, %.1f MB\n", path, n, kind,
           (unsigned long long)o.events, o.len / 1e6);
    free(o.data);
    return bad;
}

/* The target of issue 28: what a distinct call path may cost beyond its
 * name's bytes. */
#define TARGET_PER_PATH 200.0

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--write"))
        return write_one(argv[2], argv[3], argv[4]);
    unsigned runs = argc > 1 ? (unsigned)atoi(argv[1]) : 3;
    static const uint32_t sizes[] = { 10000, 100000, 1000000 };
    printf("names_bench: a Python-trace-shaped call tree (fan-out %u, %u steps), distinct "
           "names per path vs shared names\n", FANOUT, STEPS);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        out d, s;
        if (build(&d, sizes[i], false, false) || build(&s, sizes[i], true, false)) {
            fprintf(stderr, "names_bench: cannot build the profiles\n");
            return 1;
        }
        double n = sizes[i];
        bench_stat td = bench_measure(run_analyze, &d, runs);
        bench_stat ts = bench_measure(run_analyze, &s, runs);
        char what[64], extra[200], size[16];
        if (sizes[i] >= 1000000)
            snprintf(size, sizeof size, "%u M", sizes[i] / 1000000);
        else
            snprintf(size, sizeof size, "%u k", sizes[i] / 1000);
        snprintf(what, sizeof what, "analysis: %5s distinct names", size);
        snprintf(extra, sizeof extra, "%.3f s (median of %u), %.0f ns/name; shared names: "
                 "%.0f ns/event, distinct/shared %.2fx", td.median, td.runs,
                 td.median * 1e9 / n, ts.median * 1e9 / (double)s.events,
                 ts.median > 0 ? td.median / ts.median : 0);
        bench_row_value(what, td.median * 1e9 / (double)d.events, "ns/event", extra,
                        "flat in N, ratio flat");
        /* memory: per path beyond the names' own bytes, the same tree with
         * shared names beside it */
        mem_use md = mem_median(&d, runs), ms = mem_median(&s, runs);
        double nd = name_bytes(sizes[i], false), ns = name_bytes(sizes[i], true);
        double pd = (md.peak - nd) / n, ps = (ms.peak - ns) / n;
        snprintf(what, sizeof what, "analysis: %5s paths, memory", size);
        snprintf(extra, sizeof extra, "beyond names (%.0f B/path), peak RSS growth %.0f MB "
                 "(median of %u), heap: read %.0f + refresh %.0f B/path; shared names %.0f "
                 "B/path (%.2fx); %.2fx the target", nd / n, md.peak / 1e6, runs,
                 md.read / n, (md.refreshed - md.read) / n, ps, ps > 0 ? pd / ps : 0,
                 pd / TARGET_PER_PATH);
        bench_row_value(what, pd, "B/path", extra, "<= 200 B/path at 1 M");
        free(d.data);
        free(s.data);
    }
    return 0;
}
