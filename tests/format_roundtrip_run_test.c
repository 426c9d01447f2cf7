/*
 * format_roundtrip_run_test.c - the round trips of what a run records
 * beside its threads' events: STEPS, MEMORY samples (the 1.1, 1.2 and 1.3
 * shapes), GPU records, DROPPED, INFO and the FOOTER, written with the
 * encoder (prism_enc_*), read back with the reader's callbacks and
 * compared field by field, extreme values included.  (The threads'
 * events: format_roundtrip_test.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"
#include "format_roundtrip.h"

/* ---- tests ---- */

static void test_steps_memory(void **state)
{
    (void)state;
    file *f = file_new();
    const uint64_t M = (uint64_t)INT64_MAX;
    prism_enc *e = chunk(f, PRISM_CHUNK_STEPS, 0, 1000, 0);
    const prism_step s[] = {
        { 1000, 2000, 0, 0, PRISM_STEP_SAMPLED },
        { 500, 400, UINT64_MAX - 1, UINT64_MAX, 0 },      /* earlier; end < start */
        { 500 + M, UINT64_MAX, UINT64_MAX, 7, UINT32_MAX },
        { 500 + M - M, 500, 1, 1, 1 },                      /* delta -2^63+1 */
    };
    for (int i = 0; i < 4; i++)
        assert_int_equal(prism_enc_step(e, &s[i]), PRISM_OK);
    /* a start that differs from the previous one by more than an int holds */
    const prism_step far[] = { { 501 + M, 0, 0, 0, 0 }, { UINT64_MAX, 0, 0, 0, 0 } };
    assert_int_equal(prism_enc_step(e, &far[0]), PRISM_E_ARG);
    assert_int_equal(prism_enc_step(e, &far[1]), PRISM_E_ARG);
    chunk_end(f);
    e = chunk(f, PRISM_CHUNK_STEPS, 0, 1ull << 63, 0);
    const prism_step below = { 0, 1, 2, 3, 0 };         /* delta -2^63: the minimum */
    assert_int_equal(prism_enc_step(e, &below), PRISM_OK);
    assert_int_equal(prism_enc_step(e, &far[1]), PRISM_E_ARG);  /* 2^64-1 after 0 */
    chunk_end(f);
    e = chunk(f, PRISM_CHUNK_MEMORY, 0, 100, 0);
    prism_memory_sample m[3] = {
        { .ts = 100, .step = PRISM_NO_STEP, .rss = UINT64_MAX, .cpu_permille = PRISM_NO_CPU,
          .ngpu = PRISM_MAX_GPUS },
        { .ts = UINT64_MAX, .step = 0, .rss = 0, .cpu_permille = 0, .ngpu = 0 },
        { .ts = 50, .step = UINT64_MAX - 1, .rss = 1, .cpu_permille = UINT32_MAX - 1, .ngpu = 1 },
    };
    for (uint32_t i = 0; i < PRISM_MAX_GPUS; i++)
        m[0].gpu[i] = (prism_gpu_mem){ UINT32_MAX - i, UINT64_MAX - i, i, PRISM_NO_CPU, PRISM_NO_VALUE };
    m[2].gpu[0] = (prism_gpu_mem){ 3, 4, 5, PRISM_NO_CPU, PRISM_NO_VALUE };
    for (int i = 0; i < 3; i++)
        assert_int_equal(prism_enc_memory(e, &m[i]), PRISM_OK);
    prism_memory_sample too_many = m[0];
    too_many.ngpu = PRISM_MAX_GPUS + 1;
    assert_int_equal(prism_enc_memory(e, &too_many), PRISM_E_ARG);
    chunk_end(f);

    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->nstep, 5);
    assert_int_equal(c->step[4].start, 0);
    assert_int_equal(c->step[4].end, 1);
    assert_int_equal(c->step[4].index, 2);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c->step[i].start, s[i].start);
        assert_int_equal(c->step[i].end, i == 1 ? s[i].start : s[i].end);
        assert_int_equal(c->step[i].index, s[i].index);
        assert_int_equal(c->step[i].epoch, s[i].epoch);
        assert_int_equal(c->step[i].flags, s[i].flags);
    }
    assert_int_equal(c->nmem, 3);
    for (int i = 0; i < 3; i++) {
        const prism_memory_sample *got = &c->mem[i];
        assert_int_equal(got->ts, i == 0 ? 100 : UINT64_MAX);     /* 50 is clamped */
        assert_int_equal(got->step, m[i].step);
        assert_int_equal(got->rss, m[i].rss);
        assert_int_equal(got->cpu_permille, m[i].cpu_permille);
        assert_int_equal(got->ngpu, m[i].ngpu);
        for (uint32_t g = 0; g < got->ngpu; g++) {
            assert_int_equal(got->gpu[g].device, m[i].gpu[g].device);
            assert_int_equal(got->gpu[g].used, m[i].gpu[g].used);
            assert_int_equal(got->gpu[g].reserved, m[i].gpu[g].reserved);
        }
    }
    done(r, c, f);
}

/* 1.2: the machine's load appended to memory samples; a 1.1 sample (five
 * elements) still reads, its load unknown; shorter and longer 1.2 samples
 * read what they hold. */
/* 1.3: the system readings and the GPU entries' activity, written and
 * read back; a sample without them stays a 1.2 one. */
static void test_memory_sys(void **state)
{
    (void)state;
    file *f = file_new();
    prism_enc *e = chunk(f, PRISM_CHUNK_MEMORY, 0, 0, 0);
    prism_memory_sample m[2] = {
        { .ts = 1, .step = 0, .rss = 10, .cpu_permille = 900, .ngpu = 2, .have_sys = 1,
          .io_read_bytes = 1u << 20, .io_write_bytes = PRISM_NO_VALUE, .net_rx_bytes = 0,
          .net_tx_bytes = UINT64_MAX - 1, .cpu_user_ns = 5, .cpu_sys_ns = 6,
          .mem_total = 1ull << 34, .cpu_energy_uj = PRISM_NO_VALUE },
        { .ts = 2, .step = 1, .rss = 11, .cpu_permille = PRISM_NO_CPU, .ncpu = 4,
          .host_busy_permille = 100, .children_cpu_permille = 0 },
    };
    m[0].gpu[0] = (prism_gpu_mem){ 0, 1, 2, 99, 12345 };
    m[0].gpu[1] = (prism_gpu_mem){ 1, 3, 4, PRISM_NO_CPU, PRISM_NO_VALUE };
    for (int i = 0; i < 2; i++)
        assert_int_equal(prism_enc_memory(e, &m[i]), PRISM_OK);
    chunk_end(f);
    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->nmem, 2);
    const prism_memory_sample *a = &c->mem[0], *b = &c->mem[1];
    assert_int_equal(a->have_sys, 1);
    assert_int_equal(a->ncpu, 0);                   /* the load unknown, the readings not */
    assert_int_equal(a->host_busy_permille, PRISM_NO_CPU);
    assert_int_equal(a->io_read_bytes, 1u << 20);
    assert_int_equal(a->io_write_bytes, PRISM_NO_VALUE);
    assert_int_equal(a->net_rx_bytes, 0);
    assert_int_equal(a->net_tx_bytes, UINT64_MAX - 1);
    assert_int_equal(a->cpu_user_ns, 5);
    assert_int_equal(a->cpu_sys_ns, 6);
    assert_int_equal(a->mem_total, 1ull << 34);
    assert_int_equal(a->cpu_energy_uj, PRISM_NO_VALUE);
    assert_int_equal(a->gpu[0].util_pct, 99);
    assert_int_equal(a->gpu[0].energy_mj, 12345);
    assert_int_equal(a->gpu[1].reserved, 4);
    assert_int_equal(a->gpu[1].util_pct, PRISM_NO_CPU);
    assert_int_equal(a->gpu[1].energy_mj, PRISM_NO_VALUE);
    assert_int_equal(b->have_sys, 0);
    assert_int_equal(b->ncpu, 4);
    assert_int_equal(b->io_read_bytes, PRISM_NO_VALUE);
    done(r, c, f);
}

static void test_memory_load(void **state)
{
    (void)state;
    file *f = file_new();
    prism_enc *e = chunk(f, PRISM_CHUNK_MEMORY, 0, 0, 0);
    const prism_memory_sample m[4] = {
        { .ts = 1, .step = 0, .rss = 10, .cpu_permille = 1100, .ncpu = 2,
          .host_busy_permille = 1900, .children_cpu_permille = 700 },
        { .ts = 2, .step = PRISM_NO_STEP, .rss = 11, .cpu_permille = PRISM_NO_CPU, .ncpu = 64,
          .host_busy_permille = PRISM_NO_CPU, .children_cpu_permille = PRISM_NO_CPU },
        { .ts = 3, .step = 1, .rss = 12, .cpu_permille = 0, .ncpu = UINT32_MAX,
          .host_busy_permille = UINT32_MAX - 1, .children_cpu_permille = 0 },
        { .ts = 4, .step = 2, .rss = 13, .cpu_permille = 5,     /* ncpu 0: a 1.1 sample */
          .host_busy_permille = 100, .children_cpu_permille = 100 },
    };
    for (int i = 0; i < 4; i++)
        assert_int_equal(prism_enc_memory(e, &m[i]), PRISM_OK);
    chunk_end(f);
    /* by hand: the 1.1 shape, 6 and 7 elements, 9 (1.3 cut short) and 17 (a later
     * minor's) */
    static const uint8_t pay[] = {
        0x9a, 0, 0, 0, 6, 0x0a,
        0x85, 0x01, 0xf6, 0x01, 0x19, 0x03, 0xe8, 0x80,                 /* 1.1 */
        0x86, 0x01, 0xf6, 0x02, 0xf6, 0x80, 0x19, 0x03, 0xe8,           /* no ncpu */
        0x87, 0x01, 0xf6, 0x03, 0xf6, 0x80, 0x19, 0x03, 0xe8, 0x04,     /* ncpu 4 */
        0x89, 0x01, 0xf6, 0x04, 0xf6, 0x81, 0x84, 0x00, 0x01, 0x02, 0xf6,  /* 1.3, short */
        0x19, 0x07, 0xd0, 0x02, 0x18, 0x64, 0x07,
        /* 1.3 in full, then a later minor's elements (skipped) */
        0x91, 0x01, 0xf6, 0x05, 0xf6, 0x81, 0x86, 0x00, 0x01, 0x02, 0x18, 0x4b, 0x19, 0x01,
        0x2c, 0x63, 0x61, 0x62, 0x63,
        0xf6, 0x00, 0xf6, 0x0a, 0x0b, 0xf6, 0x0d, 0x0e, 0x0f, 0x10, 0xf6, 0x82, 0x01, 0xa0,
    };
    f->n += tchunk(f->b + f->n, PRISM_CHUNK_MEMORY, 0, 1, pay, sizeof pay);
    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->nmem, 9);
    for (int i = 0; i < 4; i++) {
        const prism_memory_sample *got = &c->mem[i];
        assert_int_equal(got->rss, m[i].rss);
        assert_int_equal(got->cpu_permille, m[i].cpu_permille);
        assert_int_equal(got->ncpu, m[i].ncpu);
        assert_int_equal(got->host_busy_permille,
                         m[i].ncpu ? m[i].host_busy_permille : PRISM_NO_CPU);
        assert_int_equal(got->children_cpu_permille,
                         m[i].ncpu ? m[i].children_cpu_permille : PRISM_NO_CPU);
    }
    const prism_memory_sample *h = &c->mem[4];     /* 1.1: everything but the load */
    assert_int_equal(h->ts, 11);
    assert_int_equal(h->rss, 1);
    assert_int_equal(h->cpu_permille, 1000);
    assert_int_equal(h->ncpu, 0);
    assert_int_equal(h->host_busy_permille, PRISM_NO_CPU);
    assert_int_equal(h->children_cpu_permille, PRISM_NO_CPU);
    assert_int_equal(c->mem[5].ncpu, 0);           /* host busy without ncpu: unknown */
    assert_int_equal(c->mem[5].host_busy_permille, PRISM_NO_CPU);
    assert_int_equal(c->mem[6].ncpu, 4);
    assert_int_equal(c->mem[6].host_busy_permille, 1000);
    assert_int_equal(c->mem[6].children_cpu_permille, PRISM_NO_CPU);
    for (int i = 0; i < 7; i++)
        assert_int_equal(c->mem[i].have_sys, 0);
    const prism_memory_sample *l = &c->mem[7];     /* 1.3 with one reading */
    assert_int_equal(l->ts, 14);
    assert_int_equal(l->ngpu, 1);
    assert_int_equal(l->gpu[0].reserved, 2);
    assert_int_equal(l->gpu[0].util_pct, PRISM_NO_CPU);
    assert_int_equal(l->gpu[0].energy_mj, PRISM_NO_VALUE);
    assert_int_equal(l->host_busy_permille, 2000);
    assert_int_equal(l->ncpu, 2);
    assert_int_equal(l->children_cpu_permille, 100);
    assert_int_equal(l->have_sys, 1);
    assert_int_equal(l->io_read_bytes, 7);
    assert_true(l->io_write_bytes == PRISM_NO_VALUE && l->cpu_energy_uj == PRISM_NO_VALUE);
    const prism_memory_sample *x = &c->mem[8];     /* 1.3 in full, later elements skipped */
    assert_int_equal(x->ts, 15);
    assert_int_equal(x->gpu[0].util_pct, 75);
    assert_int_equal(x->gpu[0].energy_mj, 300);
    assert_int_equal(x->ncpu, 0);
    assert_int_equal(x->have_sys, 1);
    const uint64_t want[8] = { 10, 11, PRISM_NO_VALUE, 13, 14, 15, 16, PRISM_NO_VALUE };
    const uint64_t got[8] = { x->io_read_bytes, x->io_write_bytes, x->net_rx_bytes,
                              x->net_tx_bytes, x->cpu_user_ns, x->cpu_sys_ns, x->mem_total,
                              x->cpu_energy_uj };
    for (int i = 0; i < 8; i++)
        assert_int_equal(got[i], want[i]);
    done(r, c, f);

    /* a text where a load figure goes: malformed */
    f = file_new();
    static const uint8_t bad[] = {
        0x9a, 0, 0, 0, 2, 0x0a,
        0x88, 0x01, 0xf6, 0x05, 0xf6, 0x80, 0x61, 0x78, 0x02, 0xf6,
    };
    f->n += tchunk(f->b + f->n, PRISM_CHUNK_MEMORY, 0, 0, bad, sizeof bad);
    c = calloc(1, sizeof *c);
    assert_non_null(c);
    prism_reader_callbacks cb = { .memory = c_memory };
    r = prism_reader_new(&cb, c);
    assert_non_null(r);
    assert_int_equal(prism_reader_feed(r, f->b, f->n), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_int_equal(prism_reader_stats_get(r)->malformed, 1);
    assert_int_equal(c->nmem, 0);
    done(r, c, f);
}

static void test_gpu(void **state)
{
    (void)state;
    file *f = file_new();
    const uint64_t B = 1ull << 40;
    prism_gpu_record g[9] = {
        { .type = PRISM_GPU_KERNEL, .start = B - 5, .end = B + 100, .device = UINT32_MAX,
          .stream = UINT32_MAX, .correlation = UINT64_MAX, .name = UINT32_MAX,
          .grid = { UINT32_MAX, 2, 3 }, .block = { 4, 5, UINT32_MAX },
          .shared_mem = UINT32_MAX, .registers = 255 },
        { .type = PRISM_GPU_MEMCPY, .start = B, .end = B + 1, .device = 1, .stream = 2,
          .correlation = 3, .bytes = UINT64_MAX, .copy_kind = PRISM_COPY_PTOP,
          .src_kind = PRISM_MEM_PINNED, .dst_kind = UINT32_MAX },
        { .type = PRISM_GPU_MEMSET, .start = 0, .end = UINT64_MAX, .bytes = 1,
          .dst_kind = PRISM_MEM_MANAGED },
        { .type = PRISM_GPU_SYNC, .start = B + INT64_MAX, .end = UINT64_MAX,
          .sync_type = PRISM_SYNC_STREAM_WAIT_EVENT },
        { .type = PRISM_GPU_API, .start = B + 7, .end = B + 3, .stream = 1, .name = 77 },
        { .type = PRISM_GPU_ALLOC, .start = B, .end = B, .bytes = 1ull << 40,
          .address = UINT64_MAX, .dst_kind = PRISM_MEM_DEVICE },
        { .type = PRISM_GPU_FREE, .start = B, .end = B, .bytes = UINT64_MAX, .address = 0x1000,
          .dst_kind = PRISM_MEM_UNKNOWN },
        /* fields a type does not use are not written: read back as zero */
        { .type = PRISM_GPU_SYNC, .start = B, .end = B, .name = 5, .bytes = 6, .address = 7,
          .grid = { 1, 1, 1 }, .sync_type = PRISM_SYNC_EVENT },
        { .type = PRISM_GPU_KERNEL, .start = B, .end = B, .bytes = 9, .copy_kind = 1,
          .address = 2, .name = 3 },
    };
    prism_enc *e = chunk(f, PRISM_CHUNK_GPU, 0, B, 0);
    for (int i = 0; i < 9; i++)
        assert_int_equal(prism_enc_gpu(e, &g[i]), PRISM_OK);
    prism_gpu_record bad = { .type = 0 };
    assert_int_equal(prism_enc_gpu(e, &bad), PRISM_E_ARG);
    bad.type = PRISM_GPU_TYPE_MAX + 1;
    assert_int_equal(prism_enc_gpu(e, &bad), PRISM_E_ARG);
    /* a start more than 2^63-1 ns after the base cannot be written (the
     * delta is a CBOR int); the record is refused, not written malformed */
    bad = g[3];
    bad.start = B + INT64_MAX + 1;
    assert_int_equal(prism_enc_gpu(e, &bad), PRISM_E_ARG);
    bad.start = UINT64_MAX;
    assert_int_equal(prism_enc_gpu(e, &bad), PRISM_E_ARG);
    assert_int_equal(prism_enc_records(e), 9);
    chunk_end(f);

    g[4].end = g[4].start;                  /* an end before the start: duration 0 */
    prism_gpu_record *x = &g[7];
    x->name = 0;
    x->bytes = x->address = 0;
    x->grid[0] = x->grid[1] = x->grid[2] = 0;
    x = &g[8];
    x->bytes = x->address = 0;
    x->copy_kind = 0;
    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->ngpu, 9);
    for (int i = 0; i < 9; i++) {
        tlog a, b;
        tlog_init(&a);
        tlog_init(&b);
        tlog_gpu(&a, &c->gpu[i]);           /* every field, in a fixed order */
        tlog_gpu(&b, &g[i]);
        assert_int_equal(c->gpu[i].start, g[i].start);
        assert_int_equal(c->gpu[i].end, g[i].end);
        assert_memory_equal(a.b, b.b, a.len);
        tlog_free(&a);
        tlog_free(&b);
    }
    done(r, c, f);
}

static void test_dropped_info_footer(void **state)
{
    (void)state;
    file *f = file_new();
    prism_enc *e = chunk(f, PRISM_CHUNK_DROPPED, 0, 0, 0);
    const prism_dropped d[] = { { 0, PRISM_SOURCE_CPU, 0, false, 0 },
                                { UINT32_MAX, PRISM_SOURCE_GPU, UINT64_MAX, false, 0 },
                                { 7, PRISM_SOURCE_CPU, UINT64_MAX, true, UINT64_MAX / 2 } };
    for (int i = 0; i < 3; i++)
        assert_int_equal(prism_enc_dropped(e, &d[i]), PRISM_OK);
    chunk_end(f);

    char *k4096 = filled(4096, 'k'), *v4096 = filled(4096, 'v'), *x4097 = filled(4097, 'x');
    const prism_value v[] = {
        { PRISM_VAL_INT, { .i = INT64_MIN } }, { PRISM_VAL_INT, { .i = -1 } },
        { PRISM_VAL_UINT, { .u = UINT64_MAX } }, { PRISM_VAL_UINT, { .u = 0 } },
        { PRISM_VAL_FLOAT, { .f = -0.0 } }, { PRISM_VAL_FLOAT, { .f = -1e-300 } },
        { PRISM_VAL_BOOL, { .b = true } }, { PRISM_VAL_BOOL, { .b = false } },
        { PRISM_VAL_TEXT, { .s = "" } }, { PRISM_VAL_TEXT, { .s = v4096 } },
        { PRISM_VAL_NULL, { .i = 0 } }, { PRISM_VAL_INT, { .i = 7 } },
    };
    e = chunk(f, PRISM_CHUNK_INFO, 0, 0, 0);
    for (int i = 0; i < 12; i++)
        assert_int_equal(prism_enc_info(e, i == 9 ? k4096 : i == 0 ? "" : "key", &v[i]),
                         PRISM_OK);
    const prism_value long_text = { PRISM_VAL_TEXT, { .s = x4097 } };
    const prism_value bad_type = { (prism_value_type)99, { .i = 0 } };
    assert_int_equal(prism_enc_info(e, "k", &long_text), PRISM_E_ARG);
    assert_int_equal(prism_enc_info(e, x4097, &v[0]), PRISM_E_ARG);
    assert_int_equal(prism_enc_info(e, "k", &bad_type), PRISM_E_ARG);
    assert_int_equal(prism_enc_info(e, NULL, &v[0]), PRISM_E_ARG);
    assert_int_equal(prism_enc_info(e, "k", NULL), PRISM_E_ARG);
    assert_int_equal(prism_enc_records(e), 12);
    chunk_end(f);

    const prism_footer ft = { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, false };
    e = chunk(f, PRISM_CHUNK_FOOTER, 0, 0, 0);
    assert_int_equal(prism_enc_footer(e, &ft), PRISM_OK);
    assert_int_equal(prism_enc_footer(e, &ft), PRISM_E_ARG);        /* exactly one */
    chunk_end(f);

    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->ndrop, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c->drop[i].stream, d[i].stream);
        assert_int_equal(c->drop[i].source, d[i].source);
        assert_int_equal(c->drop[i].total, d[i].total);
        assert_int_equal(c->drop[i].have_regions, d[i].have_regions);   /* 1.1: a 4th element */
        assert_int_equal(c->drop[i].regions, d[i].regions);
    }
    /* 9a n32, [0, 0, 0], [u32max, 1, u64max], [7, 0, u64max, u64max / 2] */
    assert_int_equal(c->chunk[0].payload_len, 5 + 4 + 16 + 21);
    assert_int_equal(c->ninfo, 12);
    for (int i = 0; i < 12; i++) {
        const prism_value *got = &c->val[i];
        assert_string_equal(c->key[i], i == 9 ? k4096 : i == 0 ? "" : "key");
        /* CBOR has one encoding for a non-negative integer: INT 7 reads as UINT 7 */
        if (i == 11) {
            assert_int_equal(got->type, PRISM_VAL_UINT);
            assert_int_equal(got->v.u, 7);
            continue;
        }
        assert_int_equal(got->type, v[i].type);
        switch (v[i].type) {
        case PRISM_VAL_INT: assert_int_equal(got->v.i, v[i].v.i); break;
        case PRISM_VAL_UINT: assert_int_equal(got->v.u, v[i].v.u); break;
        case PRISM_VAL_FLOAT: assert_memory_equal(&got->v.f, &v[i].v.f, sizeof(double)); break;
        case PRISM_VAL_BOOL: assert_int_equal(got->v.b, v[i].v.b); break;
        case PRISM_VAL_TEXT: assert_string_equal(got->v.s, v[i].v.s); break;
        default: break;
        }
    }
    assert_int_equal(c->nfoot, 1);
    assert_int_equal(c->foot.end_ts, UINT64_MAX);
    assert_int_equal(c->foot.events, UINT64_MAX);
    assert_int_equal(c->foot.dropped, UINT64_MAX);
    assert_int_equal(c->foot.chunks, UINT64_MAX);
    assert_false(c->foot.clean);
    assert_true(prism_reader_stats_get(r)->footer);
    free(k4096);
    free(v4096);
    free(x4097);
    done(r, c, f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_memory),
        cmocka_unit_test(test_memory_load),
        cmocka_unit_test(test_memory_sys),
        cmocka_unit_test(test_gpu),
        cmocka_unit_test(test_dropped_info_footer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
