/*
 * format_bench.c - throughput and size of the PRISM v1 region stream.
 *
 * One realistic nested training-loop region stream (refgen, regions only,
 * one thread, 64 KiB chunks, ~10 M events) is built once, read back into an
 * event list, and then measured:
 *
 *   1. encode: prism_enc_enter/exit into a 64 KiB chunk buffer, finishing
 *      (checksum included) and beginning chunks as they fill, as a writer
 *      thread does;
 *   2. read + visit: prism_reader_feed of the whole file from memory with a
 *      regions callback that touches every event;
 *   3. size: bytes per event (file and payload), and the same events as
 *      Chrome trace-event JSON text;
 *   4. baselines in the same run: memcpy and XXH3 over the file, and
 *      libcbor's generic streaming decoder over the payloads.
 *
 * Every timed figure is the median of RUNS runs (after one warm-up run),
 * the best run beside it.  Figures only: nothing fails on time.
 *
 *   usage: format_bench [events [runs]]
 */
#include <cbor.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bench_util.h"
#include "prism/profile.h"
#include "refgen.h"

#define CHUNK_BYTES  65536u
#define LAYERS       8u
#define DEF_EVENTS   10000000u
#define DEF_RUNS     7u
#define SUM_BYTES    9u         /* the checksum item: 1b + 8 bytes */

/* ------------------------------------------------------------------ */
/* The corpus: the file, its events, where its payloads lie            */
/* ------------------------------------------------------------------ */

typedef struct span {
    size_t off, len;
} span;

typedef struct corpus {
    refgen_out prof;            /* the file bytes                        */
    prism_reader *names;        /* kept alive for prism_reader_string    */
    prism_region_event *ev;
    size_t nev, evcap;
    span *pl;                   /* REGIONS payloads                      */
    size_t npl, plcap;
    uint32_t stream;
    bool mixed_streams;
    uint64_t reg_chunk_bytes;   /* REGIONS chunks, framing included      */
    uint64_t reg_first;         /* file offset of the first one          */
    bool oom;
} corpus;

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(p, c * elem);
    if (q)
        *cap = c;
    return q;
}

static void collect_regions(void *ctx, uint32_t stream, uint32_t depth,
                            const prism_region_event *ev, size_t n)
{
    corpus *c = ctx;
    (void)depth;
    if (c->nev && stream != c->stream)
        c->mixed_streams = true;
    c->stream = stream;
    prism_region_event *d = grow(c->ev, &c->evcap, c->nev + n, sizeof *d);
    if (!d) {
        c->oom = true;
        return;
    }
    c->ev = d;
    memcpy(d + c->nev, ev, n * sizeof *ev);
    c->nev += n;
}

static void collect_chunk(void *ctx, const prism_chunk_info *ci)
{
    corpus *c = ctx;
    if (ci->kind != PRISM_CHUNK_REGIONS || ci->status != PRISM_CHUNK_OK)
        return;
    span *d = grow(c->pl, &c->plcap, c->npl + 1, sizeof *d);
    if (!d) {
        c->oom = true;
        return;
    }
    c->pl = d;
    if (c->npl == 0)
        c->reg_first = ci->offset;
    d[c->npl].off = (size_t)(ci->offset + ci->length - SUM_BYTES - ci->payload_len);
    d[c->npl].len = (size_t)ci->payload_len;
    c->npl++;
    c->reg_chunk_bytes += ci->length;
}

static int corpus_build(corpus *c, size_t events)
{
    refgen_opts o = refgen_defaults();
    o.regions_only = true;
    o.threads = 1;
    o.layers = LAYERS;
    o.chunk_bytes = CHUNK_BYTES;
    o.steps = (unsigned)(events / (12 + 8 * LAYERS) + 1);   /* events per step */
    if (refgen_build(&o, &c->prof) != 0) {
        fprintf(stderr, "format_bench: refgen failed\n");
        return -1;
    }
    prism_reader_callbacks cb = { .regions = collect_regions, .chunk = collect_chunk };
    c->names = prism_reader_new(&cb, c);
    if (!c->names || prism_reader_feed(c->names, c->prof.data, c->prof.len) != PRISM_OK ||
        prism_reader_finish(c->names) != PRISM_OK || c->oom || c->nev == 0 ||
        c->nev != c->prof.region_events || c->mixed_streams) {
        fprintf(stderr, "format_bench: reading the generated profile failed\n");
        return -1;
    }
    for (size_t i = 0; i < c->npl; i++)
        if (c->prof.data[c->pl[i].off] != 0x9a) {
            fprintf(stderr, "format_bench: payload %zu not where expected\n", i);
            return -1;
        }
    return 0;
}

static void corpus_free(corpus *c)
{
    prism_reader_free(c->names);
    free(c->prof.data);
    free(c->ev);
    free(c->pl);
}

/* ------------------------------------------------------------------ */
/* 1. Encode                                                           */
/* ------------------------------------------------------------------ */

typedef struct enc_run {
    const corpus *c;
    uint8_t *buf;               /* the writer's 64 KiB chunk buffer      */
    const uint8_t *verify;      /* non-NULL: compare each chunk to this  */
    uint64_t bytes, chunks;
    bool failed;
} enc_run;

static inline prism_status encode_one(prism_enc *e, const prism_region_event *ev)
{
    if (ev->kind == PRISM_REGION_ENTER)
        return prism_enc_enter(e, ev->ts, ev->name);
    return prism_enc_exit(e, ev->ts);
}

/* A full chunk goes to the file (here: checked against the profile's). */
static void enc_hand_off(enc_run *r, prism_enc *e)
{
    size_t len = 0;
    if (prism_enc_finish(e, &len) != PRISM_OK)
        r->failed = true;
    if (r->verify && memcmp(r->buf, r->verify + r->bytes, len) != 0)
        r->failed = true;
    r->bytes += len;
    r->chunks++;
}

static uint64_t run_encode(void *ctx)
{
    enc_run *r = ctx;
    const prism_region_event *ev = r->c->ev;
    size_t n = r->c->nev;
    uint32_t stream = r->c->stream, depth = 0;
    prism_enc e;
    r->bytes = r->chunks = 0;
    if (prism_enc_begin(&e, r->buf, CHUNK_BYTES, PRISM_CHUNK_REGIONS, stream,
                        0, ev[0].ts, 0) != PRISM_OK) {
        r->failed = true;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        prism_status st = encode_one(&e, &ev[i]);
        if (st == PRISM_E_NOSPACE) {
            enc_hand_off(r, &e);
            prism_enc_begin(&e, r->buf, CHUNK_BYTES, PRISM_CHUNK_REGIONS, stream,
                            r->chunks, ev[i].ts, depth);
            st = encode_one(&e, &ev[i]);
        }
        if (st != PRISM_OK) {
            r->failed = true;
            return 0;
        }
        if (ev[i].kind == PRISM_REGION_ENTER)
            depth++;
        else if (depth)
            depth--;
    }
    enc_hand_off(r, &e);
    return r->bytes ^ r->buf[r->bytes % CHUNK_BYTES];
}

/* ------------------------------------------------------------------ */
/* 2. Read + visit                                                     */
/* ------------------------------------------------------------------ */

typedef struct visit {
    const corpus *c;
    uint64_t events, enters, ts_sum;
    bool failed;
} visit;

static void visit_regions(void *ctx, uint32_t stream, uint32_t depth,
                          const prism_region_event *ev, size_t n)
{
    visit *v = ctx;
    uint64_t sum = 0, enters = 0;
    (void)stream;
    (void)depth;
    for (size_t i = 0; i < n; i++) {
        sum += ev[i].ts;
        enters += ev[i].kind == PRISM_REGION_ENTER;
    }
    v->ts_sum += sum;
    v->enters += enters;
    v->events += n;
}

static uint64_t run_read(void *ctx)
{
    visit *v = ctx;
    prism_reader_callbacks cb = { .regions = visit_regions };
    v->events = v->enters = v->ts_sum = 0;
    prism_reader *r = prism_reader_new(&cb, v);
    if (!r || prism_reader_feed(r, v->c->prof.data, v->c->prof.len) != PRISM_OK ||
        prism_reader_finish(r) != PRISM_OK || v->events != v->c->nev)
        v->failed = true;
    prism_reader_free(r);
    return v->ts_sum ^ v->enters;
}

/* ------------------------------------------------------------------ */
/* 3. Chrome trace-event JSON of the same events                       */
/* ------------------------------------------------------------------ */

typedef struct json_run {
    const corpus *c;
    char *buf;                  /* the text is built here, block by block */
    size_t cap;
    uint64_t bytes;
} json_run;

/*
 * [{"name":"forward","ph":"B","ts":123.456,"pid":1,"tid":1},
 * {"ph":"E","ts":123.789,"pid":1,"tid":1},
 * ...]
 * One event a line, timestamps in microseconds with ns precision.  "E"
 * events carry no name (the smallest form the format allows).
 */
static uint64_t run_json(void *ctx)
{
    json_run *j = ctx;
    const corpus *c = j->c;
    size_t pos = 0;
    uint64_t total = 0;
    j->buf[pos++] = '[';
    for (size_t i = 0; i < c->nev; i++) {
        const prism_region_event *e = &c->ev[i];
        if (j->cap - pos < 512) {       /* block full: count it, reuse it */
            bench_sink((uint64_t)(unsigned char)j->buf[pos / 2]);
            total += pos;
            pos = 0;
        }
        const char *sep = i + 1 < c->nev ? ",\n" : "]\n";
        unsigned frac = (unsigned)(e->ts % 1000);
        uint64_t us = e->ts / 1000;
        int n;
        if (e->kind == PRISM_REGION_ENTER) {
            const char *name = prism_reader_string(c->names, e->name, NULL);
            n = snprintf(j->buf + pos, j->cap - pos,
                         "{\"name\":\"%s\",\"ph\":\"B\",\"ts\":%" PRIu64 ".%03u,"
                         "\"pid\":1,\"tid\":%" PRIu32 "}%s",
                         name ? name : "?", us, frac, c->stream, sep);
        } else {
            n = snprintf(j->buf + pos, j->cap - pos,
                         "{\"ph\":\"E\",\"ts\":%" PRIu64 ".%03u,"
                         "\"pid\":1,\"tid\":%" PRIu32 "}%s",
                         us, frac, c->stream, sep);
        }
        if (n > 0 && (size_t)n < j->cap - pos)
            pos += (size_t)n;
    }
    total += pos;
    j->bytes = total;
    return total;
}

/* ------------------------------------------------------------------ */
/* 4. Baselines                                                        */
/* ------------------------------------------------------------------ */

typedef struct file_run {
    const corpus *c;
    uint8_t *dst;               /* memcpy's destination */
} file_run;

static uint64_t run_memcpy(void *ctx)
{
    file_run *r = ctx;
    memcpy(r->dst, r->c->prof.data, r->c->prof.len);
    return r->dst[r->c->prof.len / 2];
}

static uint64_t run_xxh3(void *ctx)
{
    const file_run *r = ctx;
    return XXH3_64bits(r->c->prof.data, r->c->prof.len);
}

/* libcbor's streaming decoder: one call per item, callbacks per item.
 * The counting callbacks rebuild the events exactly as decode.c does. */
typedef struct lc_run {
    const corpus *c;
    const struct cbor_callbacks *cb;
    unsigned head;              /* payload items seen: base, depth        */
    bool want_name;
    uint64_t ts, ts_sum, events, enters, items;
    bool failed;
} lc_run;

static void lc_uint(void *ctx, uint64_t v)
{
    lc_run *r = ctx;
    if (r->head < 2) {                  /* base timestamp, depth */
        if (r->head++ == 0)
            r->ts = v;
        return;
    }
    if (r->want_name) {
        r->want_name = false;
        r->enters++;
        r->events++;
        return;
    }
    r->ts += v >> 1;
    r->ts_sum += r->ts;
    if (v & 1)
        r->events++;
    else
        r->want_name = true;
}

static void lc_u8(void *ctx, uint8_t v) { lc_uint(ctx, v); }
static void lc_u16(void *ctx, uint16_t v) { lc_uint(ctx, v); }
static void lc_u32(void *ctx, uint32_t v) { lc_uint(ctx, v); }

static void lc_array(void *ctx, uint64_t n)
{
    lc_run *r = ctx;
    (void)n;
    r->head = 0;
    r->want_name = false;
}

static uint64_t run_libcbor(void *ctx)
{
    lc_run *r = ctx;
    const uint8_t *data = r->c->prof.data;
    r->ts_sum = r->events = r->enters = r->items = 0;
    for (size_t i = 0; i < r->c->npl; i++) {
        const uint8_t *p = data + r->c->pl[i].off;
        size_t left = r->c->pl[i].len;
        while (left) {
            struct cbor_decoder_result res = cbor_stream_decode(p, left, r->cb, r);
            if (res.status != CBOR_DECODER_FINISHED || res.read == 0) {
                r->failed = true;
                return 0;
            }
            p += res.read;
            left -= res.read;
            r->items++;
        }
    }
    return r->ts_sum ^ r->items;
}

/* ------------------------------------------------------------------ */
/* Report                                                              */
/* ------------------------------------------------------------------ */

/* Correctness checks (never timing) that make the figures meaningless. */
static bool check(bool ok, const char *what)
{
    if (!ok)
        printf("  !! %s\n", what);
    return ok;
}

/* 1. encode.  The first, untimed run checks that the chunks written are
 * byte for byte the profile's REGIONS chunks. */
static bool report_encode(const corpus *c, unsigned runs)
{
    char extra[96];
    double nev = (double)c->nev;
    enc_run er = { .c = c, .buf = malloc(CHUNK_BYTES), .verify = c->prof.data + c->reg_first };
    if (!er.buf)
        return check(false, "out of memory");
    run_encode(&er);
    bool same = !er.failed && er.bytes == c->reg_chunk_bytes && er.chunks == c->npl;
    er.verify = NULL;
    bench_stat t = bench_measure(run_encode, &er, runs);
    snprintf(extra, sizeof extra, "%5.1f ns/event", t.median * 1e9 / nev);
    bench_row_rate("format: encode regions", nev, t, 1e6, "M events/s", extra,
                   ">= 50 M/s");
    free(er.buf);
    return check(same && !er.failed, "encoded chunks differ from the profile's");
}

/* 2. read + visit; *v keeps the last run's sums for the libcbor check. */
static bool report_read(const corpus *c, unsigned runs, visit *v, bench_stat *t)
{
    char extra[96];
    double nev = (double)c->nev;
    *t = bench_measure(run_read, v, runs);
    snprintf(extra, sizeof extra, "%5.1f ns/event, %4.0f MB/s", t->median * 1e9 / nev,
             (double)c->prof.len / t->median / 1e6);
    bench_row_rate("format: read+visit regions", nev, *t, 1e6, "M events/s", extra,
                   ">= 50 M/s");
    return check(!v->failed, "the reader did not deliver every event cleanly");
}

/* 3. size, and the same events as Chrome JSON text. */
static bool report_size(const corpus *c)
{
    char extra[96];
    double nev = (double)c->nev, fbytes = (double)c->prof.len;
    uint64_t payload = 0;
    for (size_t i = 0; i < c->npl; i++)
        payload += c->pl[i].len;
    snprintf(extra, sizeof extra, "(%.1f MB for %zu events)", fbytes / 1e6, c->nev);
    bench_row_value("format: size, whole file", fbytes / nev, "bytes/event", extra,
                    "<= 6 bytes/event");
    snprintf(extra, sizeof extra, "(framing %.3f bytes/event, %zu chunks)",
             (double)(c->reg_chunk_bytes - payload) / nev, c->npl);
    bench_row_value("format: size, payload only", (double)payload / nev,
                    "bytes/event", extra, "<= 6 bytes/event");

    json_run js = { .c = c, .cap = 1u << 20 };
    js.buf = malloc(js.cap);
    if (!js.buf)
        return check(false, "out of memory");
    uint64_t t0 = bench_now_ns();               /* one run: it is slow */
    bench_sink(run_json(&js));
    double sec = (double)(bench_now_ns() - t0) * 1e-9;
    snprintf(extra, sizeof extra, "(%.1f MB, %.1f bytes/event)",
             (double)js.bytes / 1e6, (double)js.bytes / nev);
    bench_row_value("format: Chrome JSON / PRISM", (double)js.bytes / fbytes,
                    "x larger", extra, NULL);
    bench_row_rate("  (JSON text via snprintf)", nev, bench_stat_of(&sec, 1), 1e6,
                   "M events/s", NULL, NULL);
    free(js.buf);
    return true;
}

/* 4. baselines: memcpy, XXH3, libcbor's generic decoder. */
static bool report_baselines(const corpus *c, unsigned runs, const visit *v,
                             bench_stat rd)
{
    char extra[96];
    double nev = (double)c->nev, fbytes = (double)c->prof.len;
    file_run cr = { .c = c, .dst = malloc(c->prof.len) };
    if (!cr.dst)
        return check(false, "out of memory");
    bench_stat t = bench_measure(run_memcpy, &cr, runs);
    bench_row_rate("baseline: memcpy of the file", fbytes, t, 1e9, "GB/s", NULL, NULL);
    free(cr.dst);
    cr.dst = NULL;

    t = bench_measure(run_xxh3, &cr, runs);
    snprintf(extra, sizeof extra, "%5.2f ns/event", t.median * 1e9 / nev);
    bench_row_rate("baseline: XXH3-64 of the file", fbytes, t, 1e9, "GB/s", extra, NULL);

    lc_run le = { .c = c, .cb = &cbor_empty_callbacks };
    t = bench_measure(run_libcbor, &le, runs);
    snprintf(extra, sizeof extra, "%5.1f ns/event; PRISM reader: %.1fx this",
             t.median * 1e9 / nev, t.median / rd.median);
    bench_row_rate("baseline: libcbor, empty cbs", nev, t, 1e6, "M events/s", extra, NULL);

    struct cbor_callbacks count = cbor_empty_callbacks;
    count.uint8 = lc_u8;
    count.uint16 = lc_u16;
    count.uint32 = lc_u32;
    count.uint64 = lc_uint;
    count.array_start = lc_array;
    lc_run lk = { .c = c, .cb = &count };
    t = bench_measure(run_libcbor, &lk, runs);
    snprintf(extra, sizeof extra, "%5.1f ns/event; PRISM reader: %.1fx this",
             t.median * 1e9 / nev, t.median / rd.median);
    bench_row_rate("baseline: libcbor, event cbs", nev, t, 1e6, "M events/s", extra, NULL);
    printf("  (libcbor runs over the payloads only; the PRISM reader figure also "
           "parses framing and verifies checksums)\n");
    return check(!le.failed && !lk.failed && lk.events == c->nev && lk.ts_sum == v->ts_sum,
                 "libcbor did not decode the same events");
}

int main(int argc, char **argv)
{
    size_t events = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : DEF_EVENTS;
    unsigned runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : DEF_RUNS;
    if (events < 1000)
        events = 1000;
    if (runs < 1 || runs > BENCH_MAX_RUNS)
        runs = DEF_RUNS;

    corpus c;
    memset(&c, 0, sizeof c);
    uint64_t t0 = bench_now_ns();
    if (corpus_build(&c, events) != 0) {
        corpus_free(&c);
        return 1;
    }
    printf("format_bench: refgen regions only, 1 thread, %u layers, %u KiB chunks: "
           "%zu region events, %.1f MB, %zu chunks (setup %.1f s)\n",
           LAYERS, CHUNK_BYTES / 1024, c.nev, (double)c.prof.len / 1e6, c.npl,
           (double)(bench_now_ns() - t0) * 1e-9);
    printf("  figures: median of %u timed runs after one warm-up; best = fastest run\n",
           runs);
    visit v = { .c = &c };
    bench_stat rd;
    bool ok = report_encode(&c, runs);
    ok &= report_read(&c, runs, &v, &rd);
    ok &= report_size(&c);
    ok &= report_baselines(&c, runs, &v, rd);
    printf("format_bench: done in %.1f s\n", (double)(bench_now_ns() - t0) * 1e-9);
    corpus_free(&c);
    return ok ? 0 : 1;      /* wrong results, never slow ones, fail the run */
}
