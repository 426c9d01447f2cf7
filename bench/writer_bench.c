/*
 * writer_bench.c - the writer thread's region encoding, per event, on one
 * thread without I/O: events as libcollect's buffers hold them (raw clock
 * ticks, 16384 events a buffer), converted, clamped and encoded into 64 KiB
 * REGIONS chunks, each finished (checksum) and copied to a 1 MiB output
 * buffer as the writer does before its write():
 *
 *   1. per event: the path before libcollect/encode_run.c (pc_clock_ns, a
 *      clamp, prism_enc_enter/exit; tests/encode_ref.h);
 *   2. batch: pc_encode_regions (encode_run.c).
 *
 * Two streams: the realistic nested training-loop stream of format_bench
 * (refgen; its ns become ticks at 2.7 ticks/ns) and a tight push/pop loop
 * as collect_bench's producers record it.  Each encoded warm (a buffer
 * copied into a cache-hot one just before it is encoded, as when the
 * writer takes a buffer its producer has just filled) and cold (straight
 * from 64 MiB of buffers, the default budget).  The clock table holds the
 * segments of a 2-hour run and the events lie in its last segment (steady
 * state).  Both paths must give the same bytes (checked; a mismatch fails
 * the run).  Times are medians of RUNS runs after a warm-up run.
 *
 *   usage: writer_bench [runs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bench_util.h"
#include "../libcollect/internal.h"
#include "../tests/encode_ref.h"
#include "refgen.h"

#define BUF_EVENTS  16384u          /* a buffer (collect.h default)     */
#define NBUF        256u            /* 64 MiB of buffers                */
#define CHUNK       65536u
#define OUT         (1u << 20)
#define DEF_RUNS    7u
#define RATIO       0.37            /* ns per tick: a 2.7 GHz TSC       */

typedef struct stream {
    const char *name;
    prism__event *ev;               /* NBUF * BUF_EVENTS */
    size_t n;
} stream;

typedef struct sink_out {
    uint8_t *out;
    size_t olen;
    uint64_t hash, bytes, chunks;
} sink_out;

/* The writer's out_chunk: finish, copy, "write" when 1 MiB is full. */
static void put_chunk(void *ctx, prism_enc *e)
{
    sink_out *o = ctx;
    size_t len;
    if (prism_enc_records(e) == 0 || prism_enc_finish(e, &len) != PRISM_OK)
        return;
    if (o->olen + len > OUT) {
        o->hash = XXH3_64bits_withSeed(o->out, o->olen, o->hash);
        o->olen = 0;
    }
    memcpy(o->out + o->olen, e->buf, len);
    o->olen += len;
    o->bytes += len;
    o->chunks++;
}

/* A session clock of a 2-hour run: segments at doubling spans from 60 ms. */
static session *make_clock(void)
{
    session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->t0_ticks = 123456789;
    s->t0_mono = 1000000000u;
    s->ns_per_tick = RATIO * 0.9999;
    pc_clock_segments_reset(s);
    uint64_t t = s->t0_ticks;
    for (unsigned i = 0; i < 60 && atomic_load(&s->nsegs) < 18; i++) {
        t += (uint64_t)(60e6 / RATIO) << (atomic_load(&s->nsegs) - 1);
        pc_clock_segment_add(s, t, s->t0_mono + (uint64_t)((double)(t - s->t0_ticks) * RATIO));
    }
    return s;
}

static uint64_t last_seg_ticks(session *s)
{
    return s->segs[atomic_load(&s->nsegs) - 1].ticks + 1000;
}

/* The nested stream: refgen's regions (one thread), times as ticks. */
typedef struct collect {
    prism__event *ev;
    size_t n, cap;
    uint64_t t_base, ns0;
    bool have0;
} collect;

static void on_regions(void *ctx, uint32_t stream_id, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    collect *c = ctx;
    (void)stream_id;
    (void)depth;
    for (size_t i = 0; i < n && c->n < c->cap; i++) {
        if (!c->have0) {
            c->ns0 = ev[i].ts;
            c->have0 = true;
        }
        uint64_t t = c->t_base + (uint64_t)((double)(ev[i].ts - c->ns0) / RATIO);
        uint32_t kind = ev[i].kind == PRISM_REGION_ENTER ? PRISM__EV_ENTER : PRISM__EV_EXIT;
        c->ev[c->n++] = (prism__event){ t, ev[i].name << 4 | kind, 0 };
    }
}

static int build_nested(stream *st, uint64_t t_base)
{
    refgen_opts o = refgen_defaults();
    o.regions_only = true;
    o.threads = 1;
    o.layers = 8;
    o.chunk_bytes = CHUNK;
    o.steps = (unsigned)(st->n / (12 + 8 * 8) + 2);
    refgen_out p = { 0 };
    if (refgen_build(&o, &p) != 0)
        return -1;
    collect c = { st->ev, 0, st->n, t_base, 0, false };
    prism_reader_callbacks cb = { .regions = on_regions };
    prism_reader *r = prism_reader_new(&cb, &c);
    int rc = r && prism_reader_feed(r, p.data, p.len) == PRISM_OK && c.n == st->n ? 0 : -1;
    prism_reader_free(r);
    free(p.data);
    return rc;
}

/* The tight loop: push/pop pairs ~15 ns apart (a clock read and a store). */
static void build_tight(stream *st, uint64_t t_base)
{
    uint64_t t = t_base, x = 1;
    for (size_t i = 0; i < st->n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        t += 36 + (x >> 60);                        /* 36..51 ticks */
        uint32_t kind = i % 2 ? PRISM__EV_EXIT : PRISM__EV_ENTER;
        st->ev[i] = (prism__event){ t, (i % 2 ? 0u : 3u) << 4 | kind, 0 };
    }
}

typedef struct run_res {
    double ns_per_event;
    uint64_t hash, bytes, written;
} run_res;

/* One run: every buffer of st through `enc`, as encode_thread calls it
 * (one chunk open across a flush's buffers, finished at the end).  warm:
 * each buffer is first copied to `hot` (untimed). */
static run_res run_once(session *s, const stream *st, encoder_fn enc, bool warm,
                        prism__event *hot, uint8_t *chunk, uint8_t *out)
{
    prism__thread th;
    memset(&th, 0, sizeof th);
    th.stream = 1;
    sink_out o = { out, 0, 0, 0, 0 };
    region_sink k = { .buf = chunk, .cap = CHUNK, .full = put_chunk, .ctx = &o };
    uint64_t written = 0, ns = 0;
    for (size_t b = 0; b < st->n / BUF_EVENTS; b++) {
        const prism__event *ev = st->ev + b * BUF_EVENTS;
        if (warm) {
            memcpy(hot, ev, BUF_EVENTS * sizeof *ev);
            ev = hot;
        }
        uint64_t t0 = bench_now_ns();
        uint32_t i = 0;
        while (i < BUF_EVENTS)
            i = enc(s, &th, &k, ev, i, BUF_EVENTS, &written) + 1;   /* no other kinds */
        if (b % 8 == 7 && k.open) {         /* a flush every 8 buffers */
            put_chunk(&o, &k.e);
            k.open = false;
        }
        ns += bench_now_ns() - t0;
    }
    if (k.open)
        put_chunk(&o, &k.e);
    o.hash = XXH3_64bits_withSeed(o.out, o.olen, o.hash);
    return (run_res){ (double)ns / (double)written, o.hash, o.bytes, written };
}

int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : DEF_RUNS;
    if (runs < 1 || runs > BENCH_MAX_RUNS)
        runs = DEF_RUNS;
    session *s = make_clock();
    size_t n = (size_t)NBUF * BUF_EVENTS;
    stream st[2] = { { "nested (refgen)", malloc(n * sizeof(prism__event)), n },
                     { "tight push/pop", malloc(n * sizeof(prism__event)), n } };
    prism__event *hot = malloc(BUF_EVENTS * sizeof *hot);
    uint8_t *chunk = malloc(CHUNK), *out = malloc(OUT);
    if (!s || !st[0].ev || !st[1].ev || !hot || !chunk || !out) {
        fprintf(stderr, "writer_bench: out of memory\n");
        return 1;
    }
    if (build_nested(&st[0], last_seg_ticks(s)) != 0) {
        fprintf(stderr, "writer_bench: building the nested stream failed\n");
        return 1;
    }
    build_tight(&st[1], last_seg_ticks(s));
    printf("writer_bench: the writer's region encoding, %u buffers of %u events, 64 KiB chunks, "
           "%u clock segments; ns per event, median of %u runs\n", NBUF, BUF_EVENTS,
           atomic_load(&s->nsegs), runs);
    bool ok = true;
    for (int k = 0; k < 2; k++)
        for (int warm = 1; warm >= 0; warm--) {
            double t[2][BENCH_MAX_RUNS];
            run_res res[2] = { { 0 } };
            encoder_fn fn[2] = { ref_encode_regions, pc_encode_regions };
            for (unsigned r = 0; r <= runs; r++)
                for (int p = 0; p < 2; p++) {        /* interleaved */
                    run_res x = run_once(s, &st[k], fn[p], warm, hot, chunk, out);
                    if (r > 0)
                        t[p][r - 1] = x.ns_per_event;
                    res[p] = x;
                }
            bench_stat a = bench_stat_of(t[0], runs), b = bench_stat_of(t[1], runs);
            char what[64], extra[160];
            snprintf(what, sizeof what, "%s, %s", st[k].name, warm ? "warm" : "cold");
            printf("  %-30s per event %5.2f ns (best %.2f)  batch %5.2f ns (best %.2f)  "
                   "%.2fx  %.2f bytes/event\n", what, a.median, a.min, b.median, b.min,
                   b.median > 0 ? a.median / b.median : 0,
                   (double)res[1].bytes / (double)res[1].written);
            snprintf(extra, sizeof extra, "%s: the two paths wrote different bytes", what);
            if (res[0].hash != res[1].hash || res[0].bytes != res[1].bytes ||
                res[0].written != res[1].written || res[1].written != n) {
                printf("  !! %s\n", extra);
                ok = false;
            }
        }
    free(st[0].ev);
    free(st[1].ev);
    free(hot);
    free(chunk);
    free(out);
    free(s);
    return ok ? 0 : 1;
}
