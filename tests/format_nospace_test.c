/*
 * format_nospace_test.c - the chunk encoder at its limits: every append on a
 * full buffer returns PRISM_E_NOSPACE, leaves the chunk unchanged and never
 * writes past the buffer, and the finished chunk reads back with exactly the
 * records accepted; appends of the wrong kind; finish twice; the framing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* ---- appends on a full buffer ---- */

#define STREAM 5

/* Append record i of `kind` (sizes vary with i); when it is accepted, log
 * into exp what the reader must deliver for it. */
static prism_status append_rec(prism_enc *e, uint32_t kind, unsigned i, tlog *exp)
{
    char text[400];
    prism_status st;
    memset(text, 'a' + (int)(i % 26), sizeof text);
    uint64_t sq = (uint64_t)i * i;
    switch (kind) {
    case PRISM_CHUNK_STRINGS: {
        size_t len = (i * 13) % 300;
        if ((st = prism_enc_string(e, text, len)) == PRISM_OK)
            tl_string(exp, 1 + i, text, len);
        return st;
    }
    case PRISM_CHUNK_THREADS: {
        text[(i * 5) % 100] = '\0';
        prism_thread t = { .stream = i, .os_tid = (uint64_t)1000003 << (i % 40), .name = text };
        if ((st = prism_enc_thread(e, &t)) == PRISM_OK)
            tl_thread(exp, &t);
        return st;
    }
    case PRISM_CHUNK_REGIONS: {
        prism_region_event ev = { sq * 977, i % 2 ? 0 : (uint32_t)(sq * 31),
                                  i % 2 ? PRISM_REGION_EXIT : PRISM_REGION_ENTER };
        st = i % 2 ? prism_enc_exit(e, ev.ts) : prism_enc_enter(e, ev.ts, ev.name);
        if (st == PRISM_OK)
            an_tl_regions(exp, STREAM, 2, &ev, 1);
        return st;
    }
    case PRISM_CHUNK_MARKS: {
        prism_mark m = { sq * i * 1001, (uint32_t)(sq * 97) };
        if ((st = prism_enc_mark(e, &m)) == PRISM_OK)
            tl_marks(exp, STREAM, &m, 1);
        return st;
    }
    case PRISM_CHUNK_COUNTERS: {
        prism_counter c = { sq * 5000, i, i % 2 != 0, { .i = (int64_t)i * -123456789 } };
        if (c.is_float)
            c.v.f = i * 0.5;
        if ((st = prism_enc_counter(e, &c)) == PRISM_OK)
            tl_counters(exp, STREAM, &c, 1);
        return st;
    }
    case PRISM_CHUNK_STEPS: {
        prism_step s = { sq * 10007, sq * 10007 + i * 3, i, i / 3, i % 2 };
        if ((st = prism_enc_step(e, &s)) == PRISM_OK)
            tl_steps(exp, STREAM, &s, 1);
        return st;
    }
    case PRISM_CHUNK_MEMORY: {
        prism_memory_sample m = { .ts = i * 1000ull, .step = i % 3 ? i : PRISM_NO_STEP,
                                  .rss = (uint64_t)i << 30,
                                  .cpu_permille = i % 4 ? i * 10 : PRISM_NO_CPU,
                                  .ngpu = i % (PRISM_MAX_GPUS + 1),
                                  /* 1.2's load in two samples of three */
                                  .ncpu = i % 3 ? i : 0,
                                  .host_busy_permille = i % 3 && i % 5 ? i * 7 : PRISM_NO_CPU,
                                  .children_cpu_permille = i % 3 && i % 2 ? i : PRISM_NO_CPU };
        for (uint32_t g = 0; g < m.ngpu; g++)
            m.gpu[g] = (prism_gpu_mem){ g, sq << g, UINT64_MAX >> g, PRISM_NO_CPU, PRISM_NO_VALUE };
        if ((st = prism_enc_memory(e, &m)) == PRISM_OK)
            tl_memory(exp, &m);
        return st;
    }
    case PRISM_CHUNK_GPU: {
        prism_gpu_record g = { .type = 1 + i % PRISM_GPU_TYPE_MAX,
                               .start = (1ull << 30) + i * 100 - 50, .device = i % 8,
                               .stream = i, .correlation = sq };
        g.end = g.start + i;
        switch (g.type) {
        case PRISM_GPU_KERNEL:
            g.name = i;
            g.grid[0] = g.block[2] = i * 1000;
            g.shared_mem = 48u << 10;
            g.registers = 255;
            break;
        case PRISM_GPU_MEMCPY: g.bytes = sq << 20; g.copy_kind = i % 6; g.src_kind = 2; break;
        case PRISM_GPU_MEMSET: g.bytes = sq; g.dst_kind = 3; break;
        case PRISM_GPU_SYNC: g.sync_type = i % 5; break;
        case PRISM_GPU_API: g.name = i + 1; break;
        default: g.bytes = sq << 12; g.address = UINT64_MAX - sq; g.dst_kind = 4; break;
        }
        if ((st = prism_enc_gpu(e, &g)) == PRISM_OK)
            tl_gpu(exp, &g, 1);
        return st;
    }
    case PRISM_CHUNK_DROPPED: {
        prism_dropped d = { i, i % 2, sq * sq, i % 3 == 0, sq };
        if ((st = prism_enc_dropped(e, &d)) == PRISM_OK)
            tl_dropped(exp, &d);
        return st;
    }
    case PRISM_CHUNK_INFO: {
        char key[16];
        snprintf(key, sizeof key, "k%u", i);
        text[(i * 9) % 300] = '\0';
        prism_value v = { (prism_value_type)(i % 6), { .i = -(int64_t)sq - 1 } };
        if (v.type == PRISM_VAL_FLOAT)
            v.v.f = -1.0 / (i + 1);
        else if (v.type == PRISM_VAL_TEXT)
            v.v.s = text;
        else if (v.type == PRISM_VAL_BOOL)
            v.v.b = i % 4 != 0;
        if ((st = prism_enc_info(e, key, &v)) == PRISM_OK) {
            if (v.type == PRISM_VAL_NULL)
                v.v.i = 0;
            tl_info(exp, key, &v);
        }
        return st;
    }
    case PRISM_CHUNK_CPU: {
        /* three samples a pass; values from 1 byte to 9 */
        prism_cpu_sample c = { (i / 3) * 5000011ull, i % 7, i % 2 ? PRISM_CPU_HAVE_WAIT : 0,
                               sq << (i % 40), i * 977ull };
        if (i % 5 == 4)
            c.flags |= PRISM_CPU_EXITED;
        if ((st = prism_enc_cpu(e, &c)) == PRISM_OK) {
            if (!(c.flags & PRISM_CPU_HAVE_WAIT))
                c.wait_ns = 0;
            tl_cpu(exp, &c, 1);
        }
        return st;
    }
    case PRISM_CHUNK_UNRECORDED: {
        prism_unrecorded u = { (i / 2) * 999983ull, i % 9, sq << (i % 40) };
        if ((st = prism_enc_unrecorded(e, &u)) == PRISM_OK)
            tl_unrecorded(exp, STREAM, &u, 1);
        return st;
    }
    case PRISM_CHUNK_STACKS: {
        uint32_t fr[PRISM_STACK_MAX_FRAMES];
        uint32_t nf = 1 + (i * 37) % PRISM_STACK_MAX_FRAMES;
        for (uint32_t j = 0; j < nf; j++)
            fr[j] = 1 + (uint32_t)((sq + j) << (j % 20));
        uint64_t wait = (i % 3) * 4999999ull;
        prism_stack_sample k = { (i / 2) * 1000003ull, i % 5, i % 8, nf, fr, wait, wait / 3 };
        if ((st = prism_enc_stack(e, &k)) == PRISM_OK)
            tl_stacks(exp, &k, 1);
        return st;
    }
    default: {
        prism_footer f = { UINT64_MAX, sq, UINT64_MAX, i, true };
        if ((st = prism_enc_footer(e, &f)) == PRISM_OK)
            tl_footer(exp, &f);
        return st;
    }
    }
}

static void test_nospace_leaves_chunk_unchanged(void **state)
{
    (void)state;
    static uint8_t file[8192], copy[4096 + 64];
    size_t hlen;
    prism_header h = { .producer = "t" };
    assert_int_equal(prism_header_encode(&h, file, sizeof file, &hlen), PRISM_OK);
    const size_t caps[] = { PRISM_CHUNK_OVERHEAD, PRISM_CHUNK_OVERHEAD + 7, 100, 200, 333, 512,
                            1024, 4096 };
    for (uint32_t kind = 1; kind <= PRISM_CHUNK_KIND_MAX; kind++) {
        for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
            const size_t cap = caps[ci];
            uint8_t *buf = file + hlen;
            memset(buf, 0xee, cap + 64);
            prism_enc e;
            uint64_t base = kind == PRISM_CHUNK_STRINGS ? 1 : kind == PRISM_CHUNK_GPU ? 1u << 30 : 0;
            assert_int_equal(prism_enc_begin(&e, buf, cap, kind, STREAM, 0, base,
                                             kind == PRISM_CHUNK_REGIONS ? 2 : 0), PRISM_OK);
            tlog exp;
            tlog_init(&exp);
            unsigned i = 0;
            for (;; i++) {
                prism_enc snap = e;
                memcpy(copy, buf, cap + 64);
                prism_status st = append_rec(&e, kind, i, &exp);
                if (kind == PRISM_CHUNK_FOOTER && i == 1 && st == PRISM_E_ARG)
                    st = PRISM_E_NOSPACE;           /* one footer per chunk */
                if (st == PRISM_E_NOSPACE) {
                    /* the chunk is buf[0..pos): the same bytes, the same state
                     * (scratch bytes between pos and cap may differ) */
                    assert_memory_equal(&snap, &e, sizeof e);
                    assert_memory_equal(copy, buf, snap.pos);
                    assert_memory_equal(copy + cap, buf + cap, 64);
                    break;
                }
                assert_int_equal(st, PRISM_OK);
                assert_int_equal(prism_enc_records(&e), i + 1);
                assert_true(i < 5000);
            }
            size_t len;
            assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
            assert_true(len <= cap);
            for (size_t k = cap; k < cap + 64; k++)
                assert_int_equal(buf[k], 0xee);     /* nothing past the buffer */
            if (cap >= 200 && kind != PRISM_CHUNK_FOOTER)
                assert_true(i >= 1);
            tlog l;
            tlog_init(&l);
            prism_reader_stats st;
            assert_int_equal(tlog_read_all(&l, file, hlen + len, &st), PRISM_OK);
            assert_int_equal(l.nchunks, 1);
            assert_int_equal(l.chunks[0].ci.status, PRISM_CHUNK_OK);
            assert_int_equal(l.chunks[0].ci.records, i);
            assert_int_equal(l.chunks[0].ci.length, len);
            assert_int_equal(l.chunks[0].rec_end - l.chunks[0].rec_start, exp.len);
            assert_memory_equal(l.b + l.chunks[0].rec_start, exp.b, exp.len);
            tlog_free(&l);
            tlog_free(&exp);
        }
    }
}

/* A record of kind (REGIONS exit, MARKS, COUNTERS, MEMORY, CPU) at ts; big:
 * one that needs at least 12 bytes, small: one of at most 6. */
static prism_status rec_at(prism_enc *e, uint32_t kind, uint64_t ts, bool big, tlog *exp)
{
    prism_status st;
    prism_mark m = { ts, big ? UINT32_MAX : 1 };
    prism_counter c = { ts, big ? UINT32_MAX : 1, false, { .i = 1 } };
    prism_memory_sample ms = { .ts = ts, .step = 1, .ngpu = big ? PRISM_MAX_GPUS : 0,
                               .host_busy_permille = PRISM_NO_CPU,    /* 1.1: no load */
                               .children_cpu_permille = PRISM_NO_CPU };
    prism_region_event ev = { ts, big ? UINT32_MAX : 0,
                              big ? PRISM_REGION_ENTER : PRISM_REGION_EXIT };
    prism_cpu_sample cs = { ts, 1, PRISM_CPU_HAVE_WAIT, big ? UINT64_MAX : 1, 0 };
    switch (kind) {
    case PRISM_CHUNK_CPU:
        if ((st = prism_enc_cpu(e, &cs)) == PRISM_OK)
            tl_cpu(exp, &cs, 1);
        return st;
    case PRISM_CHUNK_REGIONS:
        st = big ? prism_enc_enter(e, ts, ev.name) : prism_enc_exit(e, ts);
        if (st == PRISM_OK)
            an_tl_regions(exp, STREAM, 0, &ev, 1);
        return st;
    case PRISM_CHUNK_MARKS:
        if ((st = prism_enc_mark(e, &m)) == PRISM_OK)
            tl_marks(exp, STREAM, &m, 1);
        return st;
    case PRISM_CHUNK_COUNTERS:
        if ((st = prism_enc_counter(e, &c)) == PRISM_OK)
            tl_counters(exp, STREAM, &c, 1);
        return st;
    default:
        if ((st = prism_enc_memory(e, &ms)) == PRISM_OK)
            tl_memory(exp, &ms);
        return st;
    }
}

/* After NOSPACE the encoder's timestamp chain is as before the failed
 * append: a smaller record that still fits gets the right delta. */
static void test_nospace_then_smaller(void **state)
{
    (void)state;
    static uint8_t file[4096];
    size_t hlen, len;
    prism_header h = { .producer = "t" };
    assert_int_equal(prism_header_encode(&h, file, sizeof file, &hlen), PRISM_OK);
    const uint32_t kinds[] = { PRISM_CHUNK_REGIONS, PRISM_CHUNK_MARKS, PRISM_CHUNK_COUNTERS,
                               PRISM_CHUNK_MEMORY, PRISM_CHUNK_CPU };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const uint32_t kind = kinds[k];
        const size_t stop = kind == PRISM_CHUNK_MEMORY ? 12 : kind == PRISM_CHUNK_CPU ? 11 : 10;
        prism_enc e;
        tlog exp;
        tlog_init(&exp);
        assert_int_equal(prism_enc_begin(&e, file + hlen, 200, kind, STREAM, 0, 0, 0), PRISM_OK);
        /* fill with small records at ts 10 until fewer than `stop` bytes are left */
        uint64_t n = 0;
        while (e.cap - e.pos >= stop) {
            assert_int_equal(rec_at(&e, kind, 10, false, &exp), PRISM_OK);
            n++;
        }
        assert_true(n > 5);
        assert_true(e.cap - e.pos >= 6);
        /* far in the future: does not fit */
        assert_int_equal(rec_at(&e, kind, UINT64_MAX >> 1, true, &exp), PRISM_E_NOSPACE);
        /* ... a small one 10 ns later still does, with its own timestamp */
        assert_int_equal(rec_at(&e, kind, 20, false, &exp), PRISM_OK);
        assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
        tlog l;
        tlog_init(&l);
        assert_int_equal(tlog_read_all(&l, file, hlen + len, NULL), PRISM_OK);
        assert_int_equal(l.nchunks, 1);
        assert_int_equal(l.chunks[0].ci.status, PRISM_CHUNK_OK);
        assert_int_equal(l.chunks[0].ci.records, n + 1);
        assert_int_equal(l.chunks[0].rec_end - l.chunks[0].rec_start, exp.len);
        assert_memory_equal(l.b + l.chunks[0].rec_start, exp.b, exp.len);
        tlog_free(&l);
        tlog_free(&exp);
    }
}

/* Append one valid record of kind j. */
static prism_status append_kind(prism_enc *e, uint32_t j)
{
    static const prism_thread t = { .stream = 1, .os_tid = 2, .name = "t" };
    static const prism_mark m = { 1, 1 };
    static const prism_counter c = { 1, 1, false, { .i = 1 } };
    static const prism_step s = { 1, 2, 0, 0, 0 };
    static const prism_memory_sample ms = { .ts = 1 };
    static const prism_gpu_record g = { .type = PRISM_GPU_SYNC };
    static const prism_dropped d = { 1, 0, 1, false, 0 };
    static const prism_value v = { PRISM_VAL_BOOL, { .b = true } };
    static const prism_footer f = { 1, 1, 0, 1, true };
    static const prism_cpu_sample cs = { 1, 1, PRISM_CPU_HAVE_WAIT, 1, 1 };
    static const prism_unrecorded u = { 1, 1, 1 };
    static const uint32_t fr[2] = { 1, 2 };
    static const prism_stack_sample k = { 1, 1, PRISM_STACK_RUNNING, 2, fr, 0, 0 };
    switch (j) {
    case PRISM_CHUNK_STRINGS: return prism_enc_string(e, "s", 1);
    case PRISM_CHUNK_THREADS: return prism_enc_thread(e, &t);
    case PRISM_CHUNK_REGIONS: return prism_enc_enter(e, 1, 1);
    case PRISM_CHUNK_MARKS: return prism_enc_mark(e, &m);
    case PRISM_CHUNK_COUNTERS: return prism_enc_counter(e, &c);
    case PRISM_CHUNK_STEPS: return prism_enc_step(e, &s);
    case PRISM_CHUNK_MEMORY: return prism_enc_memory(e, &ms);
    case PRISM_CHUNK_GPU: return prism_enc_gpu(e, &g);
    case PRISM_CHUNK_DROPPED: return prism_enc_dropped(e, &d);
    case PRISM_CHUNK_INFO: return prism_enc_info(e, "k", &v);
    case PRISM_CHUNK_FOOTER: return prism_enc_footer(e, &f);
    case PRISM_CHUNK_CPU: return prism_enc_cpu(e, &cs);
    case PRISM_CHUNK_UNRECORDED: return prism_enc_unrecorded(e, &u);
    case PRISM_CHUNK_STACKS: return prism_enc_stack(e, &k);
    default: return prism_enc_exit(e, 2);     /* REGIONS again: the exit */
    }
}

static void test_wrong_kind(void **state)
{
    (void)state;
    uint8_t buf[256], copy[256];
    prism_enc e;
    for (uint32_t k = 1; k <= PRISM_CHUNK_KIND_MAX; k++) {
        assert_int_equal(prism_enc_begin(&e, buf, sizeof buf, k, 1, 0, 0, 0), PRISM_OK);
        for (uint32_t j = 1; j <= PRISM_CHUNK_KIND_MAX + 1; j++) {
            uint32_t as = j > PRISM_CHUNK_KIND_MAX ? PRISM_CHUNK_REGIONS : j;
            if (as == k)
                continue;
            prism_enc snap = e;
            memcpy(copy, buf, sizeof buf);
            assert_int_equal(append_kind(&e, j), PRISM_E_ARG);
            assert_memory_equal(&snap, &e, sizeof e);
            assert_memory_equal(copy, buf, sizeof buf);
        }
        assert_int_equal(append_kind(&e, k), PRISM_OK);         /* the right kind */
        size_t len;
        assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
        /* finished: nothing more may be appended, finishing again changes nothing */
        memcpy(copy, buf, sizeof buf);
        for (uint32_t j = 1; j <= PRISM_CHUNK_KIND_MAX + 1; j++)
            assert_int_equal(append_kind(&e, j), PRISM_E_ARG);
        size_t len2 = 0;
        assert_int_not_equal(prism_enc_finish(&e, &len2), PRISM_OK);
        assert_memory_equal(copy, buf, sizeof buf);
    }
}

static void test_begin_and_framing(void **state)
{
    (void)state;
    uint8_t buf[128];
    prism_enc e;
    size_t len;
    assert_int_equal(prism_enc_begin(&e, buf, sizeof buf, 0, 0, 0, 0, 0), PRISM_E_ARG);
    assert_int_equal(prism_enc_begin(&e, buf, sizeof buf, PRISM_CHUNK_KIND_MAX + 1, 0, 0, 0, 0),
                     PRISM_E_ARG);
    assert_int_equal(prism_enc_begin(&e, NULL, sizeof buf, PRISM_CHUNK_INFO, 0, 0, 0, 0),
                     PRISM_E_ARG);
    assert_int_equal(prism_enc_begin(NULL, buf, sizeof buf, PRISM_CHUNK_INFO, 0, 0, 0, 0),
                     PRISM_E_ARG);
    for (size_t cap = 0; cap < PRISM_CHUNK_OVERHEAD; cap++)
        assert_int_equal(prism_enc_begin(&e, buf, cap, PRISM_CHUNK_INFO, 0, 0, 0, 0),
                         PRISM_E_NOSPACE);

    /* An empty chunk with small ids: 25 bytes (FORMAT.md 6.1), byte for byte. */
    assert_int_equal(prism_enc_begin(&e, buf, PRISM_CHUNK_OVERHEAD, PRISM_CHUNK_INFO, 0, 0, 0,
                                     0), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    assert_int_equal(len, 25);
    static const uint8_t head[16] = { 0x85, 0x0a, 0x00, 0x00, 0xd8, 0x18, 0x5a, 0, 0, 0, 5,
                                      0x9a, 0, 0, 0, 0 };
    assert_memory_equal(buf, head, 16);
    uint64_t sum = XXH3_64bits(buf, 16);
    assert_int_equal(buf[16], 0x1b);
    for (int i = 0; i < 8; i++)
        assert_int_equal(buf[17 + i], (uint8_t)(sum >> (56 - 8 * i)));

    /* The largest framing (51 bytes: REGIONS with stream, seq, base and depth
     * at their maxima) fits in PRISM_CHUNK_OVERHEAD, and nothing is written
     * past it. */
    memset(buf, 0xee, sizeof buf);
    assert_int_equal(prism_enc_begin(&e, buf, PRISM_CHUNK_OVERHEAD, PRISM_CHUNK_REGIONS,
                                     UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX), PRISM_OK);
    while (prism_enc_exit(&e, UINT64_MAX) == PRISM_OK)
        ;
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    assert_true(len >= 51 && len <= PRISM_CHUNK_OVERHEAD);
    for (size_t i = PRISM_CHUNK_OVERHEAD; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xee);
    assert_true(buf[0] == 0x85 && buf[1] == PRISM_CHUNK_REGIONS && buf[2] == 0x1a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nospace_leaves_chunk_unchanged),
        cmocka_unit_test(test_nospace_then_smaller),
        cmocka_unit_test(test_wrong_kind),
        cmocka_unit_test(test_begin_and_framing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
