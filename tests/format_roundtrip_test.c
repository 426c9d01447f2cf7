/*
 * format_roundtrip_test.c - the round trips of the threads' events: write
 * THREADS, REGIONS, MARKS, COUNTERS, CPU and UNRECORDED chunks, every
 * field, with the encoder (prism_enc_*), read them back with the reader's
 * callbacks, and compare field by field, extreme values included.  (STEPS,
 * MEMORY, GPU, DROPPED, INFO and FOOTER: format_roundtrip_run_test.c;
 * header and STRINGS round trips: format_encoder_test.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"
#include "format_roundtrip.h"

/* ---- tests ---- */

static void test_threads(void **state)
{
    (void)state;
    file *f = file_new();
    char *long_name = filled(5000, 'n');
    const prism_thread t[] = {
        { .stream = 0, .os_tid = 0, .name = "" },
        { .stream = UINT32_MAX - 1, .os_tid = UINT64_MAX, .name = "main" },
        { .stream = 5, .os_tid = 1, .name = NULL },
        { .stream = 7, .os_tid = 2, .name = long_name },
    };
    prism_enc *e = chunk(f, PRISM_CHUNK_THREADS, 0, 0, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(prism_enc_thread(e, &t[i]), PRISM_OK);
    chunk_end(f);
    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->nthr, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c->thr[i].stream, t[i].stream);
        assert_int_equal(c->thr[i].os_tid, t[i].os_tid);
    }
    assert_string_equal(c->thr[0].name, "");
    assert_string_equal(c->thr[1].name, "main");
    assert_string_equal(c->thr[2].name, "");
    assert_int_equal(strlen(c->thr[3].name), PRISM_MAX_STRING_BYTES);
    assert_memory_equal(c->thr[3].name, long_name, PRISM_MAX_STRING_BYTES);
    free(long_name);
    done(r, c, f);
}

static void test_regions(void **state)
{
    (void)state;
    file *f = file_new();
    const uint64_t H = UINT64_MAX >> 1;            /* the largest delta */
    prism_enc *e = chunk(f, PRISM_CHUNK_REGIONS, 3, 1000, 3);
    assert_int_equal(prism_enc_enter(e, 1000, 1), PRISM_OK);
    assert_int_equal(prism_enc_enter(e, 1000, UINT32_MAX), PRISM_OK);
    assert_int_equal(prism_enc_exit(e, 1023), PRISM_OK);
    assert_int_equal(prism_enc_exit(e, 1024), PRISM_OK);
    assert_int_equal(prism_enc_enter(e, 1ull << 32, 0), PRISM_OK);
    assert_int_equal(prism_enc_exit(e, 1ull << 62), PRISM_OK);
    assert_int_equal(prism_enc_enter(e, 5, 9), PRISM_OK);              /* backwards */
    assert_int_equal(prism_enc_exit(e, (1ull << 62) - 1), PRISM_OK);   /* backwards */
    chunk_end(f);
    e = chunk(f, PRISM_CHUNK_REGIONS, 3, 0, 0);
    assert_int_equal(prism_enc_enter(e, H, 2), PRISM_OK);
    assert_int_equal(prism_enc_exit(e, 2 * H), PRISM_OK);
    assert_int_equal(prism_enc_exit(e, UINT64_MAX), PRISM_OK);
    chunk_end(f);
    /* more events than one callback batch */
    e = chunk(f, PRISM_CHUNK_REGIONS, 3, 7, 1);
    for (uint64_t i = 0; i < 1000; i++) {
        if (i % 3 == 2)
            assert_int_equal(prism_enc_exit(e, 7 + i * 100), PRISM_OK);
        else
            assert_int_equal(prism_enc_enter(e, 7 + i * 100, (uint32_t)i), PRISM_OK);
    }
    chunk_end(f);

    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->nreg, 8 + 3 + 1000);
    assert_int_equal(c->reg_stream, 3);
    assert_int_equal(c->batch_depth[0], 3);
    assert_int_equal(c->batch_depth[1], 0);
    const prism_region_event want[] = {
        { 1000, 1, PRISM_REGION_ENTER }, { 1000, UINT32_MAX, PRISM_REGION_ENTER },
        { 1023, 0, PRISM_REGION_EXIT }, { 1024, 0, PRISM_REGION_EXIT },
        { 1ull << 32, 0, PRISM_REGION_ENTER }, { 1ull << 62, 0, PRISM_REGION_EXIT },
        { 1ull << 62, 9, PRISM_REGION_ENTER }, { 1ull << 62, 0, PRISM_REGION_EXIT },
        { H, 2, PRISM_REGION_ENTER }, { 2 * H, 0, PRISM_REGION_EXIT },
        { UINT64_MAX, 0, PRISM_REGION_EXIT },
    };
    for (size_t i = 0; i < 11; i++) {
        assert_int_equal(c->reg[i].ts, want[i].ts);
        assert_int_equal(c->reg[i].name, want[i].name);
        assert_int_equal(c->reg[i].kind, want[i].kind);
    }
    /* the batches of the long chunk: each starts at the depth reached */
    uint32_t depth = 1;
    size_t batch = 2;
    for (size_t i = 0; i < 1000; i++) {
        const prism_region_event *ev = &c->reg[11 + i];
        if (i % 256 == 0)
            assert_int_equal(c->batch_depth[batch++], depth);
        assert_int_equal(ev->ts, 7 + i * 100);
        assert_int_equal(ev->kind, i % 3 == 2 ? PRISM_REGION_EXIT : PRISM_REGION_ENTER);
        assert_int_equal(ev->name, i % 3 == 2 ? 0 : i);
        depth = i % 3 == 2 ? depth - 1 : depth + 1;
    }
    assert_int_equal(c->nbatch, batch);
    done(r, c, f);
}

static void test_marks_counters(void **state)
{
    (void)state;
    file *f = file_new();
    prism_enc *e = chunk(f, PRISM_CHUNK_MARKS, 1, 10, 0);
    const prism_mark m[] = { { 10, 0 }, { 10, UINT32_MAX }, { 5, 3 }, { UINT64_MAX, 4 },
                             { 0, 5 } };
    for (int i = 0; i < 5; i++)
        assert_int_equal(prism_enc_mark(e, &m[i]), PRISM_OK);
    chunk_end(f);
    e = chunk(f, PRISM_CHUNK_COUNTERS, 2, 0, 0);
    const prism_counter v[] = {
        { 0, 1, false, { .i = INT64_MIN } }, { 1, 2, false, { .i = INT64_MAX } },
        { 2, 3, false, { .i = 0 } }, { 3, 4, false, { .i = -1 } },
        { 4, 5, true, { .f = -0.0 } }, { 5, 6, true, { .f = 1e308 } },
        { 6, 7, true, { .f = INFINITY } }, { 7, 8, true, { .f = -INFINITY } },
        { 8, 9, true, { .f = 5e-324 } }, { 9, 10, true, { .f = 0.1 } },
        { 1, 11, true, { .f = NAN } }, { UINT64_MAX, UINT32_MAX, false, { .i = 42 } },
    };
    for (int i = 0; i < 12; i++)
        assert_int_equal(prism_enc_counter(e, &v[i]), PRISM_OK);
    chunk_end(f);

    col *c;
    prism_reader *r = read_back(f, &c);
    const uint64_t mts[] = { 10, 10, 10, UINT64_MAX, UINT64_MAX };
    assert_int_equal(c->nmark, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(c->mark[i].ts, mts[i]);
        assert_int_equal(c->mark[i].name, m[i].name);
    }
    assert_int_equal(c->nctr, 12);
    for (int i = 0; i < 12; i++) {
        const prism_counter *got = &c->ctr[i];
        assert_int_equal(got->ts, i == 10 ? 9 : v[i].ts);    /* clamped */
        assert_int_equal(got->name, v[i].name);
        assert_int_equal(got->is_float, v[i].is_float);
        if (!v[i].is_float)
            assert_int_equal(got->v.i, v[i].v.i);
        else if (isnan(v[i].v.f))
            assert_true(isnan(got->v.f));
        else
            assert_memory_equal(&got->v.f, &v[i].v.f, sizeof(double));
    }
    assert_true(signbit(c->ctr[4].v.f));
    done(r, c, f);
}

static void test_cpu(void **state)
{
    (void)state;
    file *f = file_new();
    const uint32_t W = PRISM_CPU_HAVE_WAIT, X = PRISM_CPU_EXITED;
    const uint32_t Q = PRISM_CPU_QUEUED | PRISM_CPU_PREEMPTED;
    const uint32_t R = PRISM_CPU_RUNNING, B = PRISM_CPU_BLOCKED;
    const prism_cpu_sample s[] = {
        { 1000, 1, W | R, 0, 0 },                          /* a pass at the base */
        { 1000, UINT32_MAX, W | X, UINT64_MAX, UINT64_MAX },
        { 1000, 0, B, 5, 77 },                             /* no wait: read as 0 */
        { 6000, 1, W | Q, 4000, 30 },                      /* the next pass */
        { 5000, 2, X, 1, 0 },                              /* earlier: clamped */
        { UINT64_MAX, 3, W, 1, 1 },                        /* the largest delta */
    };
    prism_enc *e = chunk(f, PRISM_CHUNK_CPU, 0, 1000, 0);
    for (int i = 0; i < 6; i++)
        assert_int_equal(prism_enc_cpu(e, &s[i]), PRISM_OK);
    /* unknown flag bits and the wrong kind are refused, the chunk unchanged */
    prism_cpu_sample bad = s[0];
    bad.flags = 64;
    assert_int_equal(prism_enc_cpu(e, &bad), PRISM_E_ARG);
    assert_int_equal(prism_enc_cpu(e, NULL), PRISM_E_ARG);
    assert_int_equal(prism_enc_records(e), 6);
    chunk_end(f);
    e = chunk(f, PRISM_CHUNK_MARKS, 1, 0, 0);
    assert_int_equal(prism_enc_cpu(e, &s[0]), PRISM_E_ARG);
    prism_mark m = { 1, 1 };
    assert_int_equal(prism_enc_mark(e, &m), PRISM_OK);
    chunk_end(f);
    /* more samples than one callback batch: 40 passes of 16 threads,
     * values growing like a real run's (base below the first pass) */
    e = chunk(f, PRISM_CHUNK_CPU, 0, 10, 0);
    for (uint64_t p = 0; p < 40; p++)
        for (uint32_t t = 0; t < 16; t++) {
            prism_cpu_sample x = { 5000000 + p * 5000000, t + 1, W, p * 4999000 + t * 1000,
                                   p * 20000 + t };
            assert_int_equal(prism_enc_cpu(e, &x), PRISM_OK);
        }
    chunk_end(f);

    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->ncpu, 6 + 640);
    const prism_cpu_sample want[] = {
        { 1000, 1, W | R, 0, 0 }, { 1000, UINT32_MAX, W | X, UINT64_MAX, UINT64_MAX },
        { 1000, 0, B, 5, 0 }, { 6000, 1, W | Q, 4000, 30 }, { 6000, 2, X, 1, 0 },
        { UINT64_MAX, 3, W, 1, 1 },
    };
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(c->cpu[i].ts, want[i].ts);
        assert_int_equal(c->cpu[i].stream, want[i].stream);
        assert_int_equal(c->cpu[i].flags, want[i].flags);
        assert_int_equal(c->cpu[i].oncpu_ns, want[i].oncpu_ns);
        assert_int_equal(c->cpu[i].wait_ns, want[i].wait_ns);
    }
    for (size_t i = 0; i < 640; i++) {
        const prism_cpu_sample *x = &c->cpu[6 + i];
        uint64_t p = i / 16, t = i % 16;
        assert_int_equal(x->ts, 5000000 + p * 5000000);
        assert_int_equal(x->stream, t + 1);
        assert_int_equal(x->flags, W);
        assert_int_equal(x->oncpu_ns, p * 4999000 + t * 1000);
        assert_int_equal(x->wait_ns, p * 20000 + t);
    }
    assert_int_equal(c->ncpu_batch, 1 + 3);             /* 640 = 256 + 256 + 128 */
    assert_int_equal(c->nmark, 1);
    assert_int_equal(c->chunk[0].records, 6);
    assert_int_equal(c->chunk[2].records, 640);
    /* compact: the 640-sample chunk's payload is 40 pass deltas (5 bytes
     * each) and records of 1 (array) + 1 (stream) + 1 (flags) + 1..5
     * (on-CPU) + 1..5 (wait) bytes: 13 bytes a sample here */
    assert_true(c->chunk[2].payload_len < 640 * 14);
    done(r, c, f);
}

/* UNRECORDED (1.1): regions a thread could not record, at a depth. */
static void test_unrecorded(void **state)
{
    (void)state;
    file *f = file_new();
    const prism_unrecorded u[] = {
        { 500, 0, 1 }, { 500, 3, 2 },                       /* at the base: delta 0 */
        { 400, 1, UINT64_MAX },                             /* earlier: clamped */
        { UINT64_MAX, UINT32_MAX, 0 },                      /* the largest delta */
    };
    prism_enc *e = chunk(f, PRISM_CHUNK_UNRECORDED, 4, 500, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(prism_enc_unrecorded(e, &u[i]), PRISM_OK);
    assert_int_equal(prism_enc_unrecorded(e, NULL), PRISM_E_ARG);
    chunk_end(f);
    e = chunk(f, PRISM_CHUNK_MARKS, 4, 0, 0);
    assert_int_equal(prism_enc_unrecorded(e, &u[0]), PRISM_E_ARG);     /* wrong kind */
    prism_mark m = { 1, 1 };
    assert_int_equal(prism_enc_mark(e, &m), PRISM_OK);
    chunk_end(f);

    col *c;
    prism_reader *r = read_back(f, &c);
    assert_int_equal(c->nunrec, 4);
    const uint64_t ts[] = { 500, 500, 500, UINT64_MAX };
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c->unrec_stream[i], 4);
        assert_int_equal(c->unrec[i].ts, ts[i]);
        assert_int_equal(c->unrec[i].depth, u[i].depth);
        assert_int_equal(c->unrec[i].regions, u[i].regions);
    }
    assert_int_equal(c->chunk[0].kind, PRISM_CHUNK_UNRECORDED);
    assert_int_equal(c->chunk[0].records, 4);
    assert_string_equal(prism_chunk_kind_name(PRISM_CHUNK_UNRECORDED), "unrecorded");
    done(r, c, f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_marks_counters),
        cmocka_unit_test(test_cpu),
        cmocka_unit_test(test_unrecorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
