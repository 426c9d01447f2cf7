/*
 * convert.c - `prism-top convert TRACE -o OUT`: what a reader delivers
 * (a torch.profiler trace through the importer, or a PRISM profile: then a
 * rewrite) written again with the format's encoder as a PRISM profile:
 * the header, then one chunk per run of records of one kind and stream,
 * checksummed, and the footer when the input had one.  The output is
 * written whole or not at all (outfile).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports.h"
#include "report.h"
#include "prism/profile.h"

#define CHUNK_BYTES (1u << 20)

typedef struct sstate {
    uint32_t stream;
    uint64_t seq;                       /* next chunk's sequence number     */
    uint32_t depth;                     /* REGIONS: nesting after the last  */
} sstate;

typedef struct conv {
    FILE *f;
    prism_reader *r;                    /* the input's: its strings as the file has them */
    uint8_t *buf;
    prism_enc e;
    bool open;
    uint32_t kind, stream, next_id;
    sstate *ss;
    size_t nss, css;
    uint64_t chunks, records;
    bool header, failed;
    prism_status err;
} conv;

static sstate *state_of(conv *c, uint32_t stream)
{
    for (size_t i = 0; i < c->nss; i++)
        if (c->ss[i].stream == stream)
            return &c->ss[i];
    if (c->nss == c->css) {
        size_t cap = c->css ? c->css * 2 : 16;
        sstate *n = realloc(c->ss, cap * sizeof *n);
        if (!n)
            return NULL;
        c->ss = n;
        c->css = cap;
    }
    c->ss[c->nss] = (sstate){ stream, 0, 0 };
    return &c->ss[c->nss++];
}

static void fail(conv *c, prism_status st)
{
    if (!c->failed)
        c->err = st;
    c->failed = true;
}

static void flush(conv *c)
{
    size_t len;
    if (!c->open)
        return;
    c->open = false;
    if (!prism_enc_records(&c->e))
        return;
    if (prism_enc_finish(&c->e, &len) != PRISM_OK) {
        fail(c, PRISM_E_LIMIT);
        return;
    }
    if (fwrite(c->buf, 1, len, c->f) != len) {
        fail(c, PRISM_E_IO);
        return;
    }
    c->records += prism_enc_records(&c->e);
    c->chunks++;
    sstate *s = state_of(c, c->stream);
    if (s)
        s->seq++;
    else
        fail(c, PRISM_E_NOMEM);
}

/* A chunk of (kind, stream) open to append to; false after a failure. */
static bool ensure(conv *c, uint32_t kind, uint32_t stream, uint64_t base, bool fresh)
{
    if (c->failed || !c->header)
        return false;
    if (c->open && !fresh && c->kind == kind && c->stream == stream)
        return true;
    flush(c);
    sstate *s = state_of(c, stream);
    if (!s) {
        fail(c, PRISM_E_NOMEM);
        return false;
    }
    if (prism_enc_begin(&c->e, c->buf, CHUNK_BYTES, (prism_chunk_kind)kind, stream, s->seq, base,
                        kind == PRISM_CHUNK_REGIONS ? s->depth : 0) != PRISM_OK) {
        fail(c, PRISM_E_LIMIT);
        return false;
    }
    c->open = true;
    c->kind = kind;
    c->stream = stream;
    return true;
}

/* Append one record with `put`; a full chunk is written and a new one
 * begun.  The record goes through the macro so that each kind's encoder
 * keeps its own signature. */
#define APPEND(c, kind, stream, base, call)                                    \
    do {                                                                       \
        for (int try_ = 0; try_ < 2; try_++) {                                 \
            if (!ensure(c, kind, stream, base, try_ > 0))                      \
                return;                                                        \
            prism_status st_ = (call);                                         \
            if (st_ == PRISM_OK)                                               \
                break;                                                         \
            if (st_ != PRISM_E_NOSPACE || try_ > 0) {                          \
                fail(c, st_);                                                  \
                return;                                                        \
            }                                                                  \
        }                                                                      \
    } while (0)

static void on_header(void *ctx, const prism_header *h)
{
    conv *c = ctx;
    prism_header w = *h;
    size_t len;
    /* 1.1 at least (its chunks may say what was dropped), 1.2 when the input
     * may hold STACKS chunks */
    w.version_minor = h->version_minor >= 2 ? PRISM_FORMAT_MINOR : 1;
    if (prism_header_encode(&w, c->buf, CHUNK_BYTES, &len) != PRISM_OK) {
        fail(c, PRISM_E_LIMIT);
        return;
    }
    if (fwrite(c->buf, 1, len, c->f) != len) {
        fail(c, PRISM_E_IO);
        return;
    }
    c->header = true;
}

/* A PRISM input's strings are written as it holds them: a name the reader
 * demangled goes back mangled (readers demangle it again). */
static void on_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    conv *c = ctx;
    size_t rlen;
    const char *raw = c->r ? prism_reader_string_raw(c->r, id, &rlen) : NULL;
    if (raw) {
        s = raw;
        len = rlen;
    }
    bool fresh = c->open && c->kind == PRISM_CHUNK_STRINGS && id != c->next_id;
    if (fresh)
        flush(c);                       /* ids must continue the chunk's */
    APPEND(c, PRISM_CHUNK_STRINGS, 0, id, prism_enc_string(&c->e, s, len));
    c->next_id = id + 1;
}

static void on_thread(void *ctx, const prism_thread *t)
{
    conv *c = ctx;
    APPEND(c, PRISM_CHUNK_THREADS, 0, 0, prism_enc_thread(&c->e, t));
}

static void on_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    conv *c = ctx;
    sstate *s = state_of(c, stream);
    if (!s) {
        fail(c, PRISM_E_NOMEM);
        return;
    }
    if (!(c->open && c->kind == PRISM_CHUNK_REGIONS && c->stream == stream))
        s->depth = depth;               /* as the input said, for a new chunk */
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == PRISM_REGION_ENTER)
            APPEND(c, PRISM_CHUNK_REGIONS, stream, ev[i].ts, prism_enc_enter(&c->e, ev[i].ts, ev[i].name));
        else
            APPEND(c, PRISM_CHUNK_REGIONS, stream, ev[i].ts, prism_enc_exit(&c->e, ev[i].ts));
        s = state_of(c, stream);
        if (s)
            s->depth = ev[i].kind == PRISM_REGION_ENTER ? s->depth + 1 : s->depth ? s->depth - 1 : 0;
    }
}

static void on_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    conv *c = ctx;
    for (size_t i = 0; i < n; i++)
        APPEND(c, PRISM_CHUNK_MARKS, stream, m[i].ts, prism_enc_mark(&c->e, &m[i]));
}

static void on_counters(void *ctx, uint32_t stream, const prism_counter *v, size_t n)
{
    conv *c = ctx;
    for (size_t i = 0; i < n; i++)
        APPEND(c, PRISM_CHUNK_COUNTERS, stream, v[i].ts, prism_enc_counter(&c->e, &v[i]));
}

static void on_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    conv *c = ctx;
    for (size_t i = 0; i < n; i++)
        APPEND(c, PRISM_CHUNK_STEPS, stream, s[i].start, prism_enc_step(&c->e, &s[i]));
}

static void on_memory(void *ctx, const prism_memory_sample *m)
{
    conv *c = ctx;
    APPEND(c, PRISM_CHUNK_MEMORY, 0, m->ts, prism_enc_memory(&c->e, m));
}

static void on_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    conv *c = ctx;
    for (size_t i = 0; i < n; i++)
        APPEND(c, PRISM_CHUNK_GPU, 0, g[i].start, prism_enc_gpu(&c->e, &g[i]));
}

static void on_dropped(void *ctx, const prism_dropped *d)
{
    conv *c = ctx;
    APPEND(c, PRISM_CHUNK_DROPPED, 0, 0, prism_enc_dropped(&c->e, d));
}

static void on_info(void *ctx, const char *key, const prism_value *v)
{
    conv *c = ctx;
    APPEND(c, PRISM_CHUNK_INFO, 0, 0, prism_enc_info(&c->e, key, v));
}

static void on_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    conv *c = ctx;
    for (size_t i = 0; i < n; i++)
        APPEND(c, PRISM_CHUNK_CPU, 0, s[i].ts, prism_enc_cpu(&c->e, &s[i]));
}

static void on_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    conv *c = ctx;
    for (size_t i = 0; i < n; i++)
        APPEND(c, PRISM_CHUNK_UNRECORDED, stream, u[i].ts, prism_enc_unrecorded(&c->e, &u[i]));
}

static void on_stacks(void *ctx, const prism_stack_sample *s, size_t n)
{
    conv *c = ctx;
    for (size_t i = 0; i < n; i++)
        APPEND(c, PRISM_CHUNK_STACKS, 0, s[i].ts, prism_enc_stack(&c->e, &s[i]));
}

static void on_footer(void *ctx, const prism_footer *f)
{
    conv *c = ctx;
    flush(c);
    prism_footer w = *f;
    w.chunks = c->chunks;
    APPEND(c, PRISM_CHUNK_FOOTER, 0, 0, prism_enc_footer(&c->e, &w));
    flush(c);
}

int rp_convert_file(const char *in, const char *outpath)
{
    conv c = { 0 };
    c.buf = malloc(CHUNK_BYTES);
    if (!c.buf) {
        fprintf(stderr, "prism-top convert: out of memory\n");
        return EXIT_BADINPUT;
    }
    outfile o;
    if (outfile_open(&o, outpath, NULL) != 0) {
        free(c.buf);
        return EXIT_BADINPUT;
    }
    c.f = o.f;
    prism_reader_callbacks cb = {
        .header = on_header, .string = on_string, .thread = on_thread,
        .regions = on_regions, .marks = on_marks, .counters = on_counters,
        .steps = on_steps, .memory = on_memory, .gpu = on_gpu, .dropped = on_dropped,
        .info = on_info, .footer = on_footer, .cpu = on_cpu, .unrecorded = on_unrecorded,
        .stacks = on_stacks,
    };
    prism_reader *r = prism_reader_new(&cb, &c);
    c.r = r;
    prism_status st = r ? prism_reader_read_path(r, in) : PRISM_E_NOMEM;
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    flush(&c);
    int rc = EXIT_OK;
    if (st != PRISM_OK) {
        const char *msg = prism_strerror(st);
        uint64_t off = 0;
        if (r)
            prism_reader_error(r, &msg, &off);
        report_error(in, st, msg, off);
        rc = EXIT_BADINPUT;
    } else if (c.failed || !c.header) {
        fprintf(stderr, "prism-top convert: %s: cannot write the profile: %s\n", outpath,
                c.header ? prism_strerror(c.err) : "the input has no header");
        rc = EXIT_BADINPUT;
    }
    prism_reader_free(r);
    int orc = outfile_close(&o, rc == EXIT_OK);
    free(c.ss);
    free(c.buf);
    return rc != EXIT_OK ? rc : orc;
}
