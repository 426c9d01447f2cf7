/*
 * test_util.h - helpers shared by the format tests (header-only: every
 * function is static inline, so a test that does not use one pays nothing).
 *
 *   tlog     a byte log of everything a reader delivers, field by field, in
 *            delivery order, plus the list of chunk callbacks and where each
 *            one ended in the log.  Two reads delivered the same records iff
 *            their logs are byte-equal.
 *   tchunk   wraps a payload into a chunk with a correct XXH3-64 checksum,
 *            for hand-built (hostile) input.
 *   tref     a group fixture: a small refgen reference file (many chunks)
 *            and its clean read, for tests that damage copies of it.
 *
 * Include after <cmocka.h>.
 */
#ifndef PRISM_TEST_UTIL_H
#define PRISM_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "prism/profile.h"
#include "refgen.h"

typedef struct tlog_chunk {
    prism_chunk_info ci;
    size_t rec_start;           /* log position where its records begin      */
    size_t rec_end;             /* ... and end (its own 'K' entry follows)   */
    size_t end;                 /* log position after its 'K' entry          */
} tlog_chunk;

typedef struct tlog {
    uint8_t *b;
    size_t len, cap;
    tlog_chunk *chunks;
    size_t nchunks, ccap;
    size_t hdr_end;             /* log position after the header entry       */
    bool have_header;
    bool first_batch;           /* next regions batch is a chunk's first     */
} tlog;

/* A string of n copies of ch (aborts without memory). */
static inline char *filled(size_t n, char ch)
{
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memset(s, ch, n);
    s[n] = '\0';
    return s;
}

static inline void tlog_init(tlog *l)
{
    memset(l, 0, sizeof *l);
    l->first_batch = true;
}

static inline void tlog_free(tlog *l)
{
    free(l->b);
    free(l->chunks);
    memset(l, 0, sizeof *l);
}

static inline void tlog_bytes(tlog *l, const void *p, size_t n)
{
    if (l->len + n > l->cap) {
        size_t cap = l->cap ? l->cap : 4096;
        while (cap < l->len + n)
            cap *= 2;
        uint8_t *b = realloc(l->b, cap);
        assert_non_null(b);
        l->b = b;
        l->cap = cap;
    }
    if (n)
        memcpy(l->b + l->len, p, n);
    l->len += n;
}

static inline void tlog_tag(tlog *l, char tag) { tlog_bytes(l, &tag, 1); }
static inline void tlog_u64(tlog *l, uint64_t v) { tlog_bytes(l, &v, sizeof v); }

static inline void tlog_f64(tlog *l, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    tlog_u64(l, bits);
}

static inline void tlog_str(tlog *l, const char *s, size_t len)
{
    tlog_u64(l, len);
    tlog_bytes(l, s, len);
}

/* A NUL-terminated string; NULL logs differently from "". */
static inline void tlog_cstr(tlog *l, const char *s)
{
    if (!s) {
        tlog_u64(l, UINT64_MAX);
        return;
    }
    tlog_str(l, s, strlen(s));
}

static inline void tlog_value(tlog *l, const prism_value *v)
{
    tlog_u64(l, v->type);
    switch (v->type) {
    case PRISM_VAL_INT: tlog_u64(l, (uint64_t)v->v.i); break;
    case PRISM_VAL_UINT: tlog_u64(l, v->v.u); break;
    case PRISM_VAL_FLOAT: tlog_f64(l, v->v.f); break;
    case PRISM_VAL_BOOL: tlog_u64(l, v->v.b); break;
    case PRISM_VAL_TEXT: tlog_cstr(l, v->v.s); break;
    default: break;
    }
}

/* ---- the entries: one per record, the same layout the conformance test
 * builds from libcbor's view of a payload ---- */

static inline void tlog_thread(tlog *l, const prism_thread *t)
{
    tlog_tag(l, 'T');
    tlog_u64(l, t->stream);
    tlog_u64(l, t->os_tid);
    tlog_cstr(l, t->name);
}

static inline void tlog_region(tlog *l, uint32_t stream, const prism_region_event *e)
{
    tlog_tag(l, 'R');
    tlog_u64(l, stream);
    tlog_u64(l, e->ts);
    tlog_u64(l, e->name);
    tlog_u64(l, e->kind);
}

static inline void tlog_counter(tlog *l, uint32_t stream, const prism_counter *c)
{
    tlog_tag(l, 'C');
    tlog_u64(l, stream);
    tlog_u64(l, c->ts);
    tlog_u64(l, c->name);
    tlog_u64(l, c->is_float);
    if (c->is_float)
        tlog_f64(l, c->v.f);
    else
        tlog_u64(l, (uint64_t)c->v.i);
}

static inline void tlog_step(tlog *l, uint32_t stream, const prism_step *s)
{
    tlog_tag(l, 'P');
    tlog_u64(l, stream);
    tlog_u64(l, s->start);
    tlog_u64(l, s->end);
    tlog_u64(l, s->index);
    tlog_u64(l, s->epoch);
    tlog_u64(l, s->flags);
}

static inline void tlog_memory(tlog *l, const prism_memory_sample *m)
{
    tlog_tag(l, 'Y');
    tlog_u64(l, m->ts);
    tlog_u64(l, m->step);
    tlog_u64(l, m->rss);
    tlog_u64(l, m->cpu_permille);
    tlog_u64(l, m->ngpu);
    for (uint32_t i = 0; i < m->ngpu && i < PRISM_MAX_GPUS; i++) {
        tlog_u64(l, m->gpu[i].device);
        tlog_u64(l, m->gpu[i].used);
        tlog_u64(l, m->gpu[i].reserved);
    }
    tlog_u64(l, m->ncpu);
    tlog_u64(l, m->host_busy_permille);
    tlog_u64(l, m->children_cpu_permille);
}

static inline void tlog_gpu(tlog *l, const prism_gpu_record *g)
{
    const uint64_t f[] = {
        g->type, g->start, g->end, g->device, g->stream, g->correlation, g->name,
        g->bytes, g->copy_kind, g->src_kind, g->dst_kind, g->sync_type,
        g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2],
        g->shared_mem, g->registers, g->address,
    };
    tlog_tag(l, 'G');
    tlog_bytes(l, f, sizeof f);
}

static inline void tlog_cpu(tlog *l, const prism_cpu_sample *c)
{
    tlog_tag(l, 'U');
    tlog_u64(l, c->ts);
    tlog_u64(l, c->stream);
    tlog_u64(l, c->flags);
    tlog_u64(l, c->oncpu_ns);
    tlog_u64(l, c->wait_ns);
}

static inline void tlog_footer(tlog *l, const prism_footer *f)
{
    tlog_tag(l, 'F');
    tlog_u64(l, f->end_ts);
    tlog_u64(l, f->events);
    tlog_u64(l, f->dropped);
    tlog_u64(l, f->chunks);
    tlog_u64(l, f->clean);
}

/* ---- reader callbacks (ctx is a tlog) ---- */

static inline void tl_header(void *ctx, const prism_header *h)
{
    tlog *l = ctx;
    tlog_tag(l, 'H');
    tlog_u64(l, h->version_major);
    tlog_u64(l, h->version_minor);
    tlog_cstr(l, h->producer);
    tlog_cstr(l, h->host);
    tlog_u64(l, h->pid);
    tlog_u64(l, (uint64_t)h->rank);
    tlog_u64(l, h->argc);
    for (size_t i = 0; i < h->argc; i++)
        tlog_cstr(l, h->argv[i]);
    tlog_cstr(l, h->clock);
    tlog_u64(l, h->start_unix_ns);
    tlog_u64(l, h->start_mono_ns);
    tlog_u64(l, h->nconfig);
    for (size_t i = 0; i < h->nconfig; i++) {
        tlog_cstr(l, h->config[i].key);
        tlog_value(l, &h->config[i].value);
    }
    l->hdr_end = l->len;
    l->have_header = true;
}

static inline void tl_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    tlog *l = ctx;
    tlog_tag(l, 'S');
    tlog_u64(l, id);
    tlog_str(l, s, len);
}

static inline void tl_thread(void *ctx, const prism_thread *t) { tlog_thread(ctx, t); }

static inline void an_tl_regions(void *ctx, uint32_t stream, uint32_t depth,
                              const prism_region_event *ev, size_t n)
{
    tlog *l = ctx;
    if (l->first_batch) {
        tlog_tag(l, 'D');
        tlog_u64(l, stream);
        tlog_u64(l, depth);
        l->first_batch = false;
    }
    for (size_t i = 0; i < n; i++)
        tlog_region(l, stream, &ev[i]);
}

static inline void tl_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    tlog *l = ctx;
    for (size_t i = 0; i < n; i++) {
        tlog_tag(l, 'M');
        tlog_u64(l, stream);
        tlog_u64(l, m[i].ts);
        tlog_u64(l, m[i].name);
    }
}

static inline void tl_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tlog_counter(ctx, stream, &c[i]);
}

static inline void tl_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tlog_step(ctx, stream, &s[i]);
}

static inline void tl_memory(void *ctx, const prism_memory_sample *m) { tlog_memory(ctx, m); }

static inline void tl_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tlog_gpu(ctx, &g[i]);
}

static inline void tl_dropped(void *ctx, const prism_dropped *d)
{
    tlog *l = ctx;
    tlog_tag(l, 'X');
    tlog_u64(l, d->stream);
    tlog_u64(l, d->source);
    tlog_u64(l, d->total);
    if (d->have_regions)
        tlog_u64(l, d->regions);
}

static inline void tl_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    tlog *l = ctx;
    for (size_t i = 0; i < n; i++) {
        tlog_tag(l, 'N');
        tlog_u64(l, stream);
        tlog_u64(l, u[i].ts);
        tlog_u64(l, u[i].depth);
        tlog_u64(l, u[i].regions);
    }
}

static inline void tl_stacks(void *ctx, const prism_stack_sample *st, size_t n)
{
    tlog *l = ctx;
    for (size_t i = 0; i < n; i++) {
        tlog_tag(l, 'Q');
        tlog_u64(l, st[i].ts);
        tlog_u64(l, st[i].stream);
        tlog_u64(l, st[i].flags);
        tlog_u64(l, st[i].nframes);
        for (uint32_t j = 0; j < st[i].nframes; j++)
            tlog_u64(l, st[i].frames[j]);
        tlog_u64(l, st[i].wait_ns);
        tlog_u64(l, st[i].queued_ns);
    }
}

static inline void tl_info(void *ctx, const char *key, const prism_value *v)
{
    tlog *l = ctx;
    tlog_tag(l, 'I');
    tlog_str(l, key, strlen(key));
    tlog_value(l, v);
}

static inline void tl_footer(void *ctx, const prism_footer *f) { tlog_footer(ctx, f); }

static inline void tl_cpu(void *ctx, const prism_cpu_sample *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tlog_cpu(ctx, &c[i]);
}

static inline void tl_chunk(void *ctx, const prism_chunk_info *c)
{
    tlog *l = ctx;
    if (l->nchunks == l->ccap) {
        size_t cap = l->ccap ? l->ccap * 2 : 64;
        tlog_chunk *n = realloc(l->chunks, cap * sizeof *n);
        assert_non_null(n);
        l->chunks = n;
        l->ccap = cap;
    }
    tlog_chunk *k = &l->chunks[l->nchunks++];
    k->ci = *c;
    k->rec_start = l->nchunks > 1 ? l->chunks[l->nchunks - 2].end : l->hdr_end;
    k->rec_end = l->len;
    tlog_tag(l, 'K');
    tlog_u64(l, c->offset);
    tlog_u64(l, c->length);
    tlog_u64(l, c->kind);
    tlog_u64(l, c->stream);
    tlog_u64(l, c->seq);
    tlog_u64(l, c->payload_len);
    tlog_u64(l, c->records);
    tlog_u64(l, c->status);
    k->end = l->len;
    l->first_batch = true;
}

static inline prism_reader_callbacks tlog_callbacks(void)
{
    prism_reader_callbacks cb = {
        .header = tl_header, .string = tl_string, .thread = tl_thread,
        .regions = an_tl_regions, .marks = tl_marks, .counters = tl_counters,
        .steps = tl_steps, .memory = tl_memory, .gpu = tl_gpu,
        .dropped = tl_dropped, .info = tl_info, .footer = tl_footer,
        .cpu = tl_cpu, .chunk = tl_chunk, .unrecorded = tl_unrecorded,
        .stacks = tl_stacks,
    };
    return cb;
}

/* A reader whose every callback logs into l. */
static inline prism_reader *tlog_reader(tlog *l)
{
    prism_reader_callbacks cb = tlog_callbacks();
    prism_reader *r = prism_reader_new(&cb, l);
    assert_non_null(r);
    return r;
}

/* Read data[0..len) in one piece and finish; *st gets the reader's stats. */
static inline prism_status tlog_read_all(tlog *l, const uint8_t *data, size_t len,
                                         prism_reader_stats *st)
{
    prism_reader *r = tlog_reader(l);
    prism_status s = prism_reader_feed(r, data, len);
    if (s == PRISM_OK || s == PRISM_NEED_MORE)
        s = prism_reader_finish(r);
    if (st)
        *st = *prism_reader_stats_get(r);
    prism_reader_free(r);
    return s;
}

static inline void assert_stats_equal(const prism_reader_stats *a, const prism_reader_stats *b)
{
    assert_int_equal(a->chunks, b->chunks);
    assert_int_equal(a->damaged, b->damaged);
    assert_int_equal(a->bad_checksum, b->bad_checksum);
    assert_int_equal(a->skipped_bytes, b->skipped_bytes);
    assert_int_equal(a->malformed, b->malformed);
    assert_int_equal(a->unknown, b->unknown);
    assert_int_equal(a->seq_gaps, b->seq_gaps);
    assert_int_equal(a->records, b->records);
    assert_int_equal(a->torn_bytes, b->torn_bytes);
    assert_int_equal(a->footer, b->footer);
}

static inline void assert_logs_equal(const tlog *a, const tlog *b)
{
    assert_int_equal(a->len, b->len);
    assert_memory_equal(a->b, b->b, a->len);
    assert_int_equal(a->nchunks, b->nchunks);
}

/* ---- a damaged-copy fixture: a reference file and its clean read ---- */

typedef struct tref_fixture {
    refgen_out out;             /* the reference file                        */
    tlog clean;                 /* its read in one piece                     */
    size_t hdr_len;             /* header bytes (first chunk's offset)       */
} tref_fixture;

/* Group setup: 3 steps with extremes and CPU samples in 512-byte chunks
 * (more than 10). */
static inline int tref_setup(void **state)
{
    tref_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    refgen_opts o = refgen_defaults();
    o.steps = 3;
    o.extremes = true;
    o.cpu = true;
    o.chunk_bytes = 512;
    assert_int_equal(refgen_build(&o, &f->out), 0);
    tlog_init(&f->clean);
    assert_int_equal(tlog_read_all(&f->clean, f->out.data, f->out.len, NULL), PRISM_OK);
    assert_true(f->clean.nchunks > 10);
    f->hdr_len = (size_t)f->clean.chunks[0].ci.offset;
    *state = f;
    return 0;
}

static inline int tref_teardown(void **state)
{
    tref_fixture *f = *state;
    tlog_free(&f->clean);
    free(f->out.data);
    free(f);
    return 0;
}

/* A reader that only logs the header and chunk callbacks (fast). */
static inline prism_reader *tlog_chunk_reader(tlog *l)
{
    prism_reader_callbacks cb = { .header = tl_header, .chunk = tl_chunk };
    prism_reader *r = prism_reader_new(&cb, l);
    assert_non_null(r);
    return r;
}

/* Read p[0..n) in one piece with a tlog_chunk_reader and finish; the reader
 * is left in *out (the caller frees it). */
static inline prism_status tlog_read_chunks(tlog *l, const uint8_t *p, size_t n,
                                            prism_reader **out)
{
    prism_reader *r = tlog_chunk_reader(l);
    prism_status s = prism_reader_feed(r, p, n);
    if (s == PRISM_OK || s == PRISM_NEED_MORE)
        s = prism_reader_finish(r);
    *out = r;
    return s;
}

/* Read a copy of the reference file with bit `bit` of byte i flipped (made
 * in buf, which holds f->out.len bytes) with a chunk reader on a fresh log l;
 * the reader is left in *r (the caller frees it and the log). */
static inline prism_status tref_read_flipped(const tref_fixture *f, uint8_t *buf, size_t i,
                                             unsigned bit, tlog *l, prism_reader **r)
{
    memcpy(buf, f->out.data, f->out.len);
    buf[i] ^= (uint8_t)(1u << bit);
    tlog_init(l);
    return tlog_read_chunks(l, buf, f->out.len, r);
}

/* ---- hand-built chunks ---- */

static inline size_t tbe(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    return n;
}

/* A CBOR head (major type mt, argument v) in its shortest form. */
static inline size_t thead(uint8_t *p, unsigned mt, uint64_t v)
{
    uint8_t m = (uint8_t)(mt << 5);
    if (v < 24) { p[0] = m | (uint8_t)v; return 1; }
    if (v <= 0xff) { p[0] = m | 24; return 1 + tbe(p + 1, v, 1); }
    if (v <= 0xffff) { p[0] = m | 25; return 1 + tbe(p + 1, v, 2); }
    if (v <= 0xffffffffu) { p[0] = m | 26; return 1 + tbe(p + 1, v, 4); }
    p[0] = m | 27;
    return 1 + tbe(p + 1, v, 8);
}

/* Frame payload[0..plen) as a chunk into out (room: plen + 64); returns its
 * length.  The checksum is correct, so only the payload can be wrong. */
static inline size_t tchunk(uint8_t *out, uint32_t kind, uint32_t stream, uint64_t seq,
                            const uint8_t *payload, size_t plen)
{
    size_t n = 0;
    out[n++] = 0x85;
    n += thead(out + n, 0, kind);
    n += thead(out + n, 0, stream);
    n += thead(out + n, 0, seq);
    out[n++] = 0xd8;
    out[n++] = 0x18;
    out[n++] = 0x5a;
    n += tbe(out + n, plen, 4);
    memcpy(out + n, payload, plen);
    n += plen;
    uint64_t sum = XXH3_64bits(out, n);
    out[n++] = 0x1b;
    n += tbe(out + n, sum, 8);
    return n;
}

#endif
