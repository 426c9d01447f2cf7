/*
 * pbuild.h - a profile builder on the format library's encoder, for tests
 * that need exact, hand-placed records read back through the real reader
 * and analysis.  Include after <cmocka.h>; every function is static.
 */
#ifndef PRISM_TESTS_PBUILD_H
#define PRISM_TESTS_PBUILD_H

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "prism/analysis.h"

typedef struct pbuild {
    uint8_t *data;
    size_t len, cap;
    uint8_t chunk[1 << 14];
    prism_enc e;
    bool open;
    uint32_t kind, stream;
    uint64_t seq[8];
    uint32_t depth[8];          /* per stream nesting */
    uint64_t rng;
} pbuild;

static inline void pb_bytes(pbuild *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->data = realloc(b->data, b->cap);
        assert_non_null(b->data);
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void pb_flush(pbuild *b)
{
    size_t len;
    if (!b->open)
        return;
    b->open = false;
    assert_int_equal(prism_enc_finish(&b->e, &len), PRISM_OK);
    pb_bytes(b, b->chunk, len);
}

static inline void pb_begin(pbuild *b, prism_chunk_kind kind, uint32_t stream, uint64_t base)
{
    pb_flush(b);
    assert_int_equal(prism_enc_begin(&b->e, b->chunk, sizeof b->chunk, kind, stream,
                                     b->seq[stream]++, base,
                                     kind == PRISM_CHUNK_REGIONS ? b->depth[stream] : 0),
                     PRISM_OK);
    b->open = true;
    b->kind = kind;
    b->stream = stream;
}

/* Append through the open chunk; a new one when the kind or stream changes
 * or the chunk is full. */
#define PB_PUT(b, K, S, base, call) do { \
        if (!(b)->open || (b)->kind != (K) || (b)->stream != (S)) \
            pb_begin((b), (K), (S), (base)); \
        if ((call) == PRISM_E_NOSPACE) { \
            pb_begin((b), (K), (S), (base)); \
            assert_int_equal((call), PRISM_OK); \
        } \
    } while (0)

/* pb_init with a header of the caller's (producer, argv...). */
static inline void pb_init_header(pbuild *b, const prism_header *h, const char *const *names,
                                  size_t n, uint64_t seed)
{
    memset(b, 0, sizeof *b);
    b->rng = seed * 2654435761u + 1;
    uint8_t hdr[1024];
    size_t hlen;
    assert_int_equal(prism_header_encode(h, hdr, sizeof hdr, &hlen), PRISM_OK);
    pb_bytes(b, hdr, hlen);
    pb_begin(b, PRISM_CHUNK_STRINGS, 0, 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(prism_enc_string(&b->e, names[i], strlen(names[i])), PRISM_OK);
    pb_flush(b);
}

static inline void pb_init(pbuild *b, const char *const *names, size_t n, uint64_t seed)
{
    memset(b, 0, sizeof *b);
    b->rng = seed * 2654435761u + 1;
    prism_header h = { .producer = "rules test", .host = "test", .rank = -1, .clock = "test" };
    uint8_t hdr[1024];
    size_t hlen;
    assert_int_equal(prism_header_encode(&h, hdr, sizeof hdr, &hlen), PRISM_OK);
    pb_bytes(b, hdr, hlen);
    pb_begin(b, PRISM_CHUNK_STRINGS, 0, 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(prism_enc_string(&b->e, names[i], strlen(names[i])), PRISM_OK);
    pb_flush(b);
}

static inline void pb_thread(pbuild *b, uint32_t stream, const char *name)
{
    prism_thread t = { .stream = stream, .os_tid = 100 + stream, .name = name };
    PB_PUT(b, PRISM_CHUNK_THREADS, 0, 0, prism_enc_thread(&b->e, &t));
}

static inline void pb_enter(pbuild *b, uint32_t stream, uint64_t ts, uint32_t id)
{
    PB_PUT(b, PRISM_CHUNK_REGIONS, stream, ts, prism_enc_enter(&b->e, ts, id));
    b->depth[stream]++;
}

static inline void pb_exit(pbuild *b, uint32_t stream, uint64_t ts)
{
    PB_PUT(b, PRISM_CHUNK_REGIONS, stream, ts, prism_enc_exit(&b->e, ts));
    b->depth[stream]--;
}

/* A duration around `mean` (+-10 %), deterministic. */
static inline uint64_t jitter(pbuild *b, uint64_t mean)
{
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return mean - mean / 10 + b->rng % (mean / 5 + 1);
}

/* A leaf region of about `mean` ns at *now. */
static inline void pb_leaf(pbuild *b, uint32_t stream, uint64_t *now, uint32_t id, uint64_t mean)
{
    pb_enter(b, stream, *now, id);
    *now += jitter(b, mean);
    pb_exit(b, stream, *now);
}

typedef struct loaded {
    prism_reader *r;
    prism_analysis *a;
} loaded;

/* Read the built profile into a new analysis (opts may be NULL) and
 * refresh it; keep_data: leave b->data for another load. */
/* An analysis and its attached reader, nothing read yet (opts may be
 * NULL): feed it as a file grows. */
static inline loaded pb_loader(const prism_analysis_opts *opts)
{
    loaded l;
    prism_reader_callbacks cb;
    l.a = prism_analysis_new(opts);
    assert_non_null(l.a);
    prism_analysis_callbacks(&cb);
    l.r = prism_reader_new(&cb, l.a);
    assert_non_null(l.r);
    prism_analysis_attach(l.a, l.r);
    return l;
}

static inline loaded pb_load_with(pbuild *b, const prism_analysis_opts *opts, bool keep_data)
{
    pb_flush(b);
    loaded l = pb_loader(opts);
    assert_int_equal(prism_reader_feed(l.r, b->data, b->len), PRISM_OK);
    assert_int_equal(prism_reader_finish(l.r), PRISM_OK);
    prism_analysis_refresh(l.a);
    if (!keep_data) {
        free(b->data);
        b->data = NULL;
    }
    return l;
}

/* The built profile fed to a new analysis in pieces of varied sizes (the
 * first `piece` bytes, then piece * mul % mod + add, ...), refreshed after
 * each, then finished and refreshed: as the explorer reads a growing file.
 * b->data is kept. */
static inline loaded pb_load_in_pieces(pbuild *b, size_t piece, size_t mul, size_t mod,
                                       size_t add)
{
    pb_flush(b);
    loaded l = pb_loader(NULL);
    for (size_t off = 0; off < b->len; off += piece, piece = piece * mul % mod + add) {
        size_t n = off + piece <= b->len ? piece : b->len - off;
        prism_status ps = prism_reader_feed(l.r, b->data + off, n);
        assert_true(ps == PRISM_OK || ps == PRISM_NEED_MORE);
        prism_analysis_refresh(l.a);
    }
    assert_int_equal(prism_reader_finish(l.r), PRISM_OK);
    prism_analysis_refresh(l.a);
    return l;
}

static inline loaded pb_load(pbuild *b)
{
    return pb_load_with(b, NULL, false);
}

static inline void pb_counter(pbuild *b, uint32_t stream, uint64_t ts, uint32_t id, double v)
{
    prism_counter c = { .ts = ts, .name = id, .is_float = true, .v.f = v };
    PB_PUT(b, PRISM_CHUNK_COUNTERS, stream, ts, prism_enc_counter(&b->e, &c));
}

/* The first finding of a type, or NULL. */
static inline const prism_bottleneck *pb_finding(const prism_analysis *a, prism_bottleneck_type type)
{
    size_t n;
    const prism_bottleneck *bn = prism_analysis_bottlenecks(a, &n);
    for (size_t i = 0; bn && i < n; i++)
        if (bn[i].type == type)
            return &bn[i];
    return NULL;
}

static inline void unload(loaded *l)
{
    prism_analysis_free(l->a);
    prism_reader_free(l->r);
}

/* ---- added for the verdict workloads (tests/workload.h) ---------------- */

/* A STEPS record on stream 0. */
static inline void pb_step(pbuild *b, const prism_step *s)
{
    PB_PUT(b, PRISM_CHUNK_STEPS, 0, s->start, prism_enc_step(&b->e, s));
}

/* The built profile written to path (the open chunk flushed first); its
 * bytes freed. */
static inline void pb_write_file(pbuild *b, const char *path)
{
    pb_flush(b);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
    assert_int_equal(fclose(f), 0);
    free(b->data);
    b->data = NULL;
}

/* A MEMORY record on stream 0. */
static inline void pb_memory(pbuild *b, const prism_memory_sample *m)
{
    PB_PUT(b, PRISM_CHUNK_MEMORY, 0, m->ts, prism_enc_memory(&b->e, m));
}

/* A CPU sample on stream 0 (one per thread and sampling pass). */
static inline void pb_cpu(pbuild *b, const prism_cpu_sample *s)
{
    PB_PUT(b, PRISM_CHUNK_CPU, 0, s->ts, prism_enc_cpu(&b->e, s));
}

/* INFO key/value pairs on stream 0. */
static inline void pb_info_uint(pbuild *b, const char *key, uint64_t v)
{
    prism_value val = { .type = PRISM_VAL_UINT, .v.u = v };
    PB_PUT(b, PRISM_CHUNK_INFO, 0, 0, prism_enc_info(&b->e, key, &val));
}

static inline void pb_info_text(pbuild *b, const char *key, const char *v)
{
    prism_value val = { .type = PRISM_VAL_TEXT, .v.s = v };
    PB_PUT(b, PRISM_CHUNK_INFO, 0, 0, prism_enc_info(&b->e, key, &val));
}

#endif
