/*
 * format_roundtrip.h - what the round-trip tests share: a file under
 * construction (a header, then chunks written with prism_enc_*), and what
 * the reader delivered of it, collected by one callback per record kind
 * and read back whole (every chunk must be good).  Used by
 * format_roundtrip_test.c and format_roundtrip_run_test.c.
 *
 * Include after <cmocka.h>.
 */
#ifndef PRISM_TESTS_FORMAT_ROUNDTRIP_H
#define PRISM_TESTS_FORMAT_ROUNDTRIP_H

#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* ---- a file under construction ---- */

typedef struct file {
    uint8_t b[1 << 20];
    size_t n;
    prism_enc e;
} file;

static file *file_new(void)
{
    file *f = calloc(1, sizeof *f);
    assert_non_null(f);
    prism_header h = { .producer = "roundtrip", .host = "h", .clock = "monotonic" };
    assert_int_equal(prism_header_encode(&h, f->b, sizeof f->b, &f->n), PRISM_OK);
    return f;
}

static prism_enc *chunk(file *f, prism_chunk_kind kind, uint32_t stream, uint64_t base,
                        uint32_t depth)
{
    assert_int_equal(prism_enc_begin(&f->e, f->b + f->n, sizeof f->b - f->n, kind, stream,
                                     0, base, depth), PRISM_OK);
    return &f->e;
}

static void chunk_end(file *f)
{
    size_t len;
    assert_int_equal(prism_enc_finish(&f->e, &len), PRISM_OK);
    f->n += len;
}

/* ---- what the reader delivered ---- */

#define MAXR 1200
typedef struct col {
    prism_thread thr[8];
    char thr_name[8][PRISM_MAX_STRING_BYTES + 1];
    size_t nthr;
    prism_region_event reg[MAXR];
    uint32_t reg_stream, batch_depth[16];
    size_t nreg, nbatch;
    prism_mark mark[16];
    size_t nmark;
    prism_counter ctr[32];
    size_t nctr;
    prism_step step[16];
    size_t nstep;
    prism_memory_sample mem[16];
    size_t nmem;
    prism_gpu_record gpu[16];
    size_t ngpu;
    prism_dropped drop[8];
    size_t ndrop;
    char key[16][PRISM_MAX_STRING_BYTES + 1], text[16][PRISM_MAX_STRING_BYTES + 1];
    prism_value val[16];
    size_t ninfo;
    prism_footer foot;
    size_t nfoot;
    prism_chunk_info chunk[16];
    size_t nchunk;
    const prism_header *hdr;
    prism_cpu_sample cpu[MAXR];
    size_t ncpu, ncpu_batch;
    prism_unrecorded unrec[8];
    uint32_t unrec_stream[8];
    size_t nunrec;
} col;

static void c_thread(void *ctx, const prism_thread *t)
{
    col *c = ctx;
    assert_true(c->nthr < 8);
    c->thr[c->nthr] = *t;
    snprintf(c->thr_name[c->nthr], sizeof c->thr_name[0], "%s", t->name);
    c->thr[c->nthr].name = c->thr_name[c->nthr];
    c->nthr++;
}

static void c_regions(void *ctx, uint32_t stream, uint32_t depth,
                      const prism_region_event *ev, size_t n)
{
    col *c = ctx;
    assert_true(c->nreg + n <= MAXR && c->nbatch < 16);
    c->reg_stream = stream;
    c->batch_depth[c->nbatch++] = depth;
    memcpy(c->reg + c->nreg, ev, n * sizeof *ev);
    c->nreg += n;
}

static void c_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    col *c = ctx;
    (void)stream;
    assert_true(c->nmark + n <= 16);
    memcpy(c->mark + c->nmark, m, n * sizeof *m);
    c->nmark += n;
}

static void c_counters(void *ctx, uint32_t stream, const prism_counter *v, size_t n)
{
    col *c = ctx;
    (void)stream;
    assert_true(c->nctr + n <= 32);
    memcpy(c->ctr + c->nctr, v, n * sizeof *v);
    c->nctr += n;
}

static void c_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    col *c = ctx;
    (void)stream;
    assert_true(c->nstep + n <= 16);
    memcpy(c->step + c->nstep, s, n * sizeof *s);
    c->nstep += n;
}

static void c_memory(void *ctx, const prism_memory_sample *m)
{
    col *c = ctx;
    assert_true(c->nmem < 16);
    c->mem[c->nmem++] = *m;
}

static void c_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    col *c = ctx;
    assert_true(c->ngpu + n <= 16);
    memcpy(c->gpu + c->ngpu, g, n * sizeof *g);
    c->ngpu += n;
}

static void c_dropped(void *ctx, const prism_dropped *d)
{
    col *c = ctx;
    assert_true(c->ndrop < 8);
    c->drop[c->ndrop++] = *d;
}

static void c_info(void *ctx, const char *key, const prism_value *v)
{
    col *c = ctx;
    assert_true(c->ninfo < 16);
    snprintf(c->key[c->ninfo], sizeof c->key[0], "%s", key);
    c->val[c->ninfo] = *v;
    if (v->type == PRISM_VAL_TEXT) {
        snprintf(c->text[c->ninfo], sizeof c->text[0], "%s", v->v.s);
        c->val[c->ninfo].v.s = c->text[c->ninfo];
    }
    c->ninfo++;
}

static void c_footer(void *ctx, const prism_footer *f)
{
    col *c = ctx;
    c->foot = *f;
    c->nfoot++;
}

static void c_chunk(void *ctx, const prism_chunk_info *ci)
{
    col *c = ctx;
    assert_true(c->nchunk < 16);
    c->chunk[c->nchunk++] = *ci;
}

static void c_header(void *ctx, const prism_header *h) { ((col *)ctx)->hdr = h; }

static void c_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    col *c = ctx;
    assert_true(c->ncpu + n <= MAXR);
    memcpy(c->cpu + c->ncpu, s, n * sizeof *s);
    c->ncpu += n;
    c->ncpu_batch++;
}

static void c_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    col *c = ctx;
    for (size_t i = 0; i < n; i++) {
        assert_true(c->nunrec < 8);
        c->unrec_stream[c->nunrec] = stream;
        c->unrec[c->nunrec++] = u[i];
    }
}

/* Read f completely; every chunk must be good.  The caller frees both. */
static prism_reader *read_back(const file *f, col **out)
{
    col *c = calloc(1, sizeof *c);
    assert_non_null(c);
    prism_reader_callbacks cb = {
        .header = c_header, .thread = c_thread,
        .regions = c_regions, .marks = c_marks, .counters = c_counters,
        .steps = c_steps, .memory = c_memory, .gpu = c_gpu, .dropped = c_dropped,
        .info = c_info, .footer = c_footer, .cpu = c_cpu, .chunk = c_chunk,
        .unrecorded = c_unrecorded,
    };
    prism_reader *r = prism_reader_new(&cb, c);
    assert_non_null(r);
    assert_int_equal(prism_reader_feed(r, f->b, f->n), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    const prism_reader_stats *st = prism_reader_stats_get(r);
    assert_int_equal(st->damaged, 0);
    assert_int_equal(st->malformed, 0);
    assert_int_equal(st->chunks, c->nchunk);
    for (size_t i = 0; i < c->nchunk; i++)
        assert_int_equal(c->chunk[i].status, PRISM_CHUNK_OK);
    *out = c;
    return r;
}

static void done(prism_reader *r, col *c, file *f)
{
    free(c);
    prism_reader_free(r);
    free(f);
}

#endif
