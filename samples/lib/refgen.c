/*
 * refgen.c - reference profile generator (see refgen.h).
 *
 * The region stream imitates a training step on one main thread:
 *   step > data_loading, forward > layer.N > {attention, mlp}, loss,
 *   backward > layer.N.grad, optimizer_step, logging
 * with durations drawn from a seeded xorshift generator, and data-loader
 * worker threads with their own regions.
 */
#include "refgen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct gen {
    const refgen_opts *o;
    refgen_out *out;
    prism_strtab *names;
    uint8_t *buf;
    uint64_t rng;
    uint64_t seq[64];           /* per stream */
    uint32_t strings_done;      /* ids already written in STRINGS chunks */
    prism_enc enc;
    bool open;
    uint32_t stream;
    bool failed;
    uint64_t cpu_on[60], cpu_wait[60], cpu_last;  /* CPU samples, per thread */
} gen;

static uint64_t rnd(gen *g)
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return g->rng;
}

/* A duration in ns around `mean` (+-50 %). */
static uint64_t dur(gen *g, uint64_t mean)
{
    return mean / 2 + rnd(g) % (mean + 1);
}

static int out_append(refgen_out *o, const uint8_t *p, size_t n)
{
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 65536;
        while (cap < o->len + n)
            cap *= 2;
        uint8_t *d = realloc(o->data, cap);
        if (!d)
            return -1;
        o->data = d;
        o->cap = cap;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
    return 0;
}

static void flush(gen *g)
{
    size_t len;
    if (!g->open)
        return;
    g->open = false;
    if (prism_enc_records(&g->enc) == 0)
        return;
    if (prism_enc_finish(&g->enc, &len) != PRISM_OK || out_append(g->out, g->buf, len))
        g->failed = true;
    g->out->chunks++;
}

static void begin(gen *g, prism_chunk_kind kind, uint32_t stream, uint64_t base,
                  uint32_t depth)
{
    flush(g);
    if (prism_enc_begin(&g->enc, g->buf, g->o->chunk_bytes, kind, stream,
                        g->seq[stream % 64]++, base, depth) != PRISM_OK)
        g->failed = true;
    g->open = true;
    g->stream = stream;
}

/* Write the names interned since the last STRINGS chunk. */
static void emit_strings(gen *g)
{
    uint32_t n = prism_strtab_count(g->names);
    if (g->strings_done == n)
        return;
    begin(g, PRISM_CHUNK_STRINGS, 0, g->strings_done + 1, 0);
    for (uint32_t id = g->strings_done + 1; id <= n; id++) {
        size_t len;
        const char *s = prism_strtab_name(g->names, id, &len);
        if (prism_enc_string(&g->enc, s, len) == PRISM_E_NOSPACE) {
            flush(g);
            begin(g, PRISM_CHUNK_STRINGS, 0, id, 0);
            if (prism_enc_string(&g->enc, s, len) != PRISM_OK)
                g->failed = true;
        }
    }
    flush(g);
    g->strings_done = n;
}

static uint32_t name(gen *g, const char *s)
{
    uint32_t id;
    bool is_new;
    if (prism_strtab_intern(g->names, s, strlen(s), &id, &is_new) != PRISM_OK)
        g->failed = true;
    return id;
}

/* Per-thread region writer state. */
typedef struct rstream {
    uint32_t stream;
    uint64_t now;
    uint32_t depth;
    uint32_t stack[32];
} rstream;

static void ensure_regions(gen *g, rstream *t)
{
    if (!g->open || g->enc.kind != PRISM_CHUNK_REGIONS || g->stream != t->stream)
        begin(g, PRISM_CHUNK_REGIONS, t->stream, t->now, t->depth);
}

static void enter(gen *g, rstream *t, uint32_t id)
{
    ensure_regions(g, t);
    if (prism_enc_enter(&g->enc, t->now, id) == PRISM_E_NOSPACE) {
        begin(g, PRISM_CHUNK_REGIONS, t->stream, t->now, t->depth);
        if (prism_enc_enter(&g->enc, t->now, id) != PRISM_OK)
            g->failed = true;
    }
    t->stack[t->depth++ % 32] = id;
    g->out->region_events++;
    g->out->records++;
}

static void leave(gen *g, rstream *t)
{
    ensure_regions(g, t);
    if (prism_enc_exit(&g->enc, t->now) == PRISM_E_NOSPACE) {
        begin(g, PRISM_CHUNK_REGIONS, t->stream, t->now, t->depth);
        if (prism_enc_exit(&g->enc, t->now) != PRISM_OK)
            g->failed = true;
    }
    t->depth--;
    g->out->region_events++;
    g->out->records++;
}

/* A leaf region lasting about `mean` ns, preceded by a small gap. */
static void leaf(gen *g, rstream *t, uint32_t id, uint64_t mean)
{
    t->now += dur(g, 200);
    enter(g, t, id);
    t->now += dur(g, mean);
    leave(g, t);
}

/* Append one record through the open chunk, starting a new one when full. */
#define APPEND(g, K, S, base, call) do { \
        if (!(g)->open || (g)->enc.kind != (K) || (g)->stream != (S)) \
            begin((g), (K), (S), (base), 0); \
        if ((call) == PRISM_E_NOSPACE) { \
            begin((g), (K), (S), (base), 0); \
            if ((call) != PRISM_OK) (g)->failed = true; \
        } \
        (g)->out->records++; \
    } while (0)

static void one_step(gen *g, rstream *t, unsigned step, uint32_t *ids, uint64_t *rss)
{
    const refgen_opts *o = g->o;
    uint64_t start = t->now;
    enter(g, t, ids[0]);                                /* step */
    leaf(g, t, ids[1], 1500000);                        /* data_loading */
    t->now += 300;
    enter(g, t, ids[2]);                                /* forward */
    for (unsigned l = 0; l < o->layers; l++) {
        t->now += dur(g, 150);
        enter(g, t, ids[8 + l]);                        /* layer.N */
        leaf(g, t, ids[3], 120000);                     /* attention */
        leaf(g, t, ids[4], 80000);                      /* mlp */
        t->now += dur(g, 100);
        leave(g, t);
    }
    t->now += 200;
    leave(g, t);
    leaf(g, t, ids[5], 20000);                          /* loss */
    t->now += 300;
    enter(g, t, ids[6]);                                /* backward */
    for (unsigned l = o->layers; l-- > 0;)
        leaf(g, t, ids[8 + o->layers + l], 350000);     /* layer.N.grad */
    t->now += 200;
    leave(g, t);
    if (o->stall_ns) {                                  /* a planted stall: no */
        t->now += 100;                                  /* random draw, so the */
        enter(g, t, ids[8 + 2 * o->layers + 6]);        /* rest stays the same */
        t->now += o->stall_ns;
        leave(g, t);
    }
    leaf(g, t, ids[7], 60000);                          /* optimizer_step */
    t->now += 500;
    leave(g, t);
    if (o->regions_only)
        return;

    prism_mark m = { t->now, ids[8 + 2 * o->layers] };  /* "checkpoint" */
    if (step % 5 == 4)
        APPEND(g, PRISM_CHUNK_MARKS, t->stream, t->now, prism_enc_mark(&g->enc, &m));
    prism_counter c = { t->now, ids[8 + 2 * o->layers + 1], true, { .f = 2.5 / (step + 1) } };
    APPEND(g, PRISM_CHUNK_COUNTERS, t->stream, t->now, prism_enc_counter(&g->enc, &c));
    prism_counter lr = { t->now, ids[8 + 2 * o->layers + 2], false, { .i = (int64_t)step * 32 } };
    APPEND(g, PRISM_CHUNK_COUNTERS, t->stream, t->now, prism_enc_counter(&g->enc, &lr));
    prism_step s = { start, t->now, step, step / 10, step % 2 == 0 ? PRISM_STEP_SAMPLED : 0 };
    APPEND(g, PRISM_CHUNK_STEPS, 0, start, prism_enc_step(&g->enc, &s));
    *rss += o->rss_kb_per_step << 10;
    prism_memory_sample ms = { .ts = t->now, .step = step, .rss = *rss,
                               .cpu_permille = 950, .ngpu = 1 };
    ms.gpu[0] = (prism_gpu_mem){ 0, *rss * 4, *rss * 8, PRISM_NO_CPU, PRISM_NO_VALUE };
    APPEND(g, PRISM_CHUNK_MEMORY, 0, t->now, prism_enc_memory(&g->enc, &ms));
    prism_gpu_record k = { .type = PRISM_GPU_KERNEL, .start = start + 1000,
                           .end = start + 90000, .stream = 7, .correlation = step * 2 + 1,
                           .name = ids[8 + 2 * o->layers + 3], .grid = { 128, 1, 1 },
                           .block = { 256, 1, 1 }, .shared_mem = 4096, .registers = 64 };
    APPEND(g, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&g->enc, &k));
    prism_gpu_record cp = { .type = PRISM_GPU_MEMCPY, .start = start + 500, .end = start + 900,
                            .stream = 7, .correlation = step * 2 + 2, .bytes = 1u << 20,
                            .copy_kind = PRISM_COPY_HTOD, .src_kind = PRISM_MEM_PINNED,
                            .dst_kind = PRISM_MEM_DEVICE };
    APPEND(g, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&g->enc, &cp));
    /* the runtime API calls that launched them, on the main thread */
    prism_gpu_record api[2] = {
        { .type = PRISM_GPU_API, .start = start + 400, .end = start + 450, .stream = t->stream,
          .correlation = step * 2 + 2, .name = ids[8 + 2 * o->layers + 4] },
        { .type = PRISM_GPU_API, .start = start + 950, .end = start + 990, .stream = t->stream,
          .correlation = step * 2 + 1, .name = ids[8 + 2 * o->layers + 5] },
    };
    for (int i = 0; i < 2; i++)
        APPEND(g, PRISM_CHUNK_GPU, 0, start, prism_enc_gpu(&g->enc, &api[i]));
}

/* A CPU sampling pass at `now` over the threads: cumulative on-CPU and
 * run-queue time, the main thread busier than the loaders; the last loader
 * exits at the end of the run. */
static void pc_cpu_pass(gen *g, uint64_t now, bool last)
{
    uint64_t span = now > g->cpu_last ? now - g->cpu_last : 0;
    g->cpu_last = now;
    for (unsigned i = 0; i < g->o->threads; i++) {
        g->cpu_on[i] += span / 100 * (i ? 40 : 85) + rnd(g) % 1000;
        g->cpu_wait[i] += rnd(g) % 20000;
        prism_cpu_sample c = { now, i + 1, PRISM_CPU_HAVE_WAIT, g->cpu_on[i], g->cpu_wait[i] };
        if (last && i && i + 1 == g->o->threads)
            c.flags |= PRISM_CPU_EXITED;
        APPEND(g, PRISM_CHUNK_CPU, 0, now, prism_enc_cpu(&g->enc, &c));
    }
}

static void worker_batch(gen *g, rstream *w, uint32_t id, uint64_t until)
{
    while (w->now < until) {
        leaf(g, w, id, 400000);
        w->now += dur(g, 100000);
    }
}

static void extremes(gen *g)
{
    static const char *const big = "extreme.name";
    uint32_t id = name(g, big);
    emit_strings(g);
    rstream t = { .stream = 63, .now = UINT64_MAX / 4 };
    enter(g, &t, id);
    t.now = UINT64_MAX / 2;                  /* a delta of 2^62 ns */
    leave(g, &t);
    prism_counter c[] = {
        { 1, id, false, { .i = INT64_MIN } }, { 2, id, false, { .i = INT64_MAX } },
        { 3, id, true, { .f = -0.0 } }, { 4, id, true, { .f = 1e308 } },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        APPEND(g, PRISM_CHUNK_COUNTERS, 63, 0, prism_enc_counter(&g->enc, &c[i]));
    prism_memory_sample m = { .ts = 5, .step = PRISM_NO_STEP, .rss = UINT64_MAX,
                              .cpu_permille = PRISM_NO_CPU, .ngpu = PRISM_MAX_GPUS };
    for (unsigned i = 0; i < PRISM_MAX_GPUS; i++)
        m.gpu[i] = (prism_gpu_mem){ i, UINT64_MAX - i, i, PRISM_NO_CPU, PRISM_NO_VALUE };
    APPEND(g, PRISM_CHUNK_MEMORY, 0, 0, prism_enc_memory(&g->enc, &m));
    prism_gpu_record r[] = {
        { .type = PRISM_GPU_MEMSET, .start = 10, .end = 20, .device = UINT32_MAX,
          .bytes = UINT64_MAX, .dst_kind = PRISM_MEM_MANAGED },
        { .type = PRISM_GPU_SYNC, .start = 0, .end = UINT64_MAX / 8, .sync_type = PRISM_SYNC_CONTEXT },
        { .type = PRISM_GPU_API, .start = 5, .end = 6, .stream = 1, .correlation = UINT64_MAX, .name = id },
        { .type = PRISM_GPU_ALLOC, .start = 7, .end = 7, .bytes = 1ull << 40,
          .address = UINT64_MAX, .dst_kind = PRISM_MEM_DEVICE },
        { .type = PRISM_GPU_FREE, .start = 8, .end = 8, .bytes = 1ull << 40, .address = UINT64_MAX },
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        APPEND(g, PRISM_CHUNK_GPU, 0, 100, prism_enc_gpu(&g->enc, &r[i]));
    prism_step s = { 0, UINT64_MAX / 4, UINT64_MAX - 1, UINT64_MAX, PRISM_STEP_SAMPLED };
    APPEND(g, PRISM_CHUNK_STEPS, 63, 0, prism_enc_step(&g->enc, &s));
    prism_value vals[] = {
        { PRISM_VAL_INT, { .i = INT64_MIN } }, { PRISM_VAL_UINT, { .u = UINT64_MAX } },
        { PRISM_VAL_FLOAT, { .f = 0.1 } }, { PRISM_VAL_BOOL, { .b = true } },
        { PRISM_VAL_TEXT, { .s = "" } }, { PRISM_VAL_NULL, { .i = 0 } },
    };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        APPEND(g, PRISM_CHUNK_INFO, 0, 0, prism_enc_info(&g->enc, "extreme.value", &vals[i]));
    if (!g->o->cpu)
        return;
    prism_cpu_sample cs[] = {
        { UINT64_MAX / 2, UINT32_MAX - 1, PRISM_CPU_HAVE_WAIT, UINT64_MAX, UINT64_MAX },
        { UINT64_MAX / 2, 63, PRISM_CPU_EXITED, 0, 0 },
        { UINT64_MAX, 63, PRISM_CPU_HAVE_WAIT | PRISM_CPU_EXITED, 1, 2 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        APPEND(g, PRISM_CHUNK_CPU, 0, 0, prism_enc_cpu(&g->enc, &cs[i]));
}

refgen_opts refgen_defaults(void)
{
    refgen_opts o = { .seed = 1, .steps = 20, .layers = 4, .threads = 2,
                      .chunk_bytes = 4096, .extremes = false, .footer = true,
                      .rss_kb_per_step = 1024 };
    return o;
}

int refgen_build(const refgen_opts *o, refgen_out *out)
{
    gen g = { .o = o, .out = out, .rng = o->seed * 2654435761u + 88172645463325252ull };
    memset(out, 0, sizeof *out);
    g.names = prism_strtab_new();
    g.buf = malloc(o->chunk_bytes);
    uint8_t hdr[4096];
    size_t hlen;
    static const char *const argv[] = { "refprofile", "--seed", "1" };
    prism_kv cfg[] = {
        { "sample_rate", { PRISM_VAL_FLOAT, { .f = 0.5 } } },
        { "collect_memory", { PRISM_VAL_BOOL, { .b = true } } },
        { "flush_interval_ms", { PRISM_VAL_UINT, { .u = 100 } } },
        { "output", { PRISM_VAL_TEXT, { .s = "ref.cbor" } } },
    };
    prism_header h = { .producer = "refgen " PRISM_VERSION_STRING, .host = "refhost",
                       .pid = 4242, .rank = 0, .argv = argv, .argc = 3, .clock = "synthetic",
                       .start_unix_ns = 1767225600000000000ull, .start_mono_ns = 1000,
                       .config = cfg, .nconfig = sizeof cfg / sizeof cfg[0],
                       .version_minor = o->cpu ? 1 : 0 };
    if (!g.names || !g.buf || o->threads < 1 || o->threads > 60 ||
        prism_header_encode(&h, hdr, sizeof hdr, &hlen) != PRISM_OK ||
        out_append(out, hdr, hlen)) {
        prism_strtab_free(g.names);
        free(g.buf);
        free(out->data);
        memset(out, 0, sizeof *out);
        return -1;
    }

    static const char *const base_names[] = {
        "step", "data_loading", "forward", "attention", "mlp", "loss", "backward",
        "optimizer_step",
    };
    uint32_t ids[8 + 2 * 64 + 7];
    for (unsigned i = 0; i < 8; i++)
        ids[i] = name(&g, base_names[i]);
    unsigned layers = o->layers > 64 ? 64 : o->layers;
    char buf[64];
    for (unsigned l = 0; l < layers; l++) {
        snprintf(buf, sizeof buf, "layer.%u", l);
        ids[8 + l] = name(&g, buf);
    }
    for (unsigned l = 0; l < layers; l++) {
        snprintf(buf, sizeof buf, "layer.%u.grad", l);
        ids[8 + layers + l] = name(&g, buf);
    }
    ids[8 + 2 * layers] = name(&g, "checkpoint");
    ids[8 + 2 * layers + 1] = name(&g, "loss_value");
    ids[8 + 2 * layers + 2] = name(&g, "samples_seen");
    ids[8 + 2 * layers + 3] = name(&g, "gemm_kernel_128x256");
    ids[8 + 2 * layers + 4] = name(&g, "cudaMemcpyAsync");
    ids[8 + 2 * layers + 5] = name(&g, "cudaLaunchKernel");
    if (o->stall_ns)
        ids[8 + 2 * layers + 6] = name(&g, "synchronize");
    uint32_t worker_id = name(&g, "decode_batch");
    emit_strings(&g);

    begin(&g, PRISM_CHUNK_THREADS, 0, 0, 0);
    for (unsigned i = 0; i < o->threads; i++) {
        snprintf(buf, sizeof buf, i == 0 ? "main" : "loader.%u", i);
        prism_thread t = { .stream = i + 1, .os_tid = 1000 + i, .name = buf };
        if (prism_enc_thread(&g.enc, &t) != PRISM_OK)
            g.failed = true;
        out->records++;
    }
    flush(&g);
    prism_value gpu = { PRISM_VAL_TEXT, { .s = "synthetic: refgen" } };
    APPEND(&g, PRISM_CHUNK_INFO, 0, 0, prism_enc_info(&g.enc, "gpu.status", &gpu));

    rstream main_t = { .stream = 1, .now = 1000 };
    rstream workers[60];
    for (unsigned i = 1; i < o->threads; i++)
        workers[i] = (rstream){ .stream = i + 1, .now = 1000 + i * 777 };
    uint64_t rss = 512u << 20;
    for (unsigned s = 0; s < o->steps; s++) {
        one_step(&g, &main_t, s, ids, &rss);
        for (unsigned i = 1; i < o->threads; i++)
            worker_batch(&g, &workers[i], worker_id, main_t.now);
        if (o->cpu && !o->regions_only)
            pc_cpu_pass(&g, main_t.now, s + 1 == o->steps);
    }
    prism_dropped d = { 2, PRISM_SOURCE_CPU, 0, false, 0 };
    APPEND(&g, PRISM_CHUNK_DROPPED, 0, 0, prism_enc_dropped(&g.enc, &d));
    if (o->extremes)
        extremes(&g);
    flush(&g);
    if (o->footer) {
        prism_footer f = { main_t.now, out->records, 0, out->chunks, true };
        begin(&g, PRISM_CHUNK_FOOTER, 0, 0, 0);
        if (prism_enc_footer(&g.enc, &f) != PRISM_OK)
            g.failed = true;
        flush(&g);
    }
    prism_strtab_free(g.names);
    free(g.buf);
    if (g.failed) {
        free(out->data);
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}

int refgen_write_file(const char *path, const refgen_out *out)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < out->len) {
        ssize_t n = write(fd, out->data + off, out->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        off += (size_t)n;
    }
    return close(fd);
}
