/*
 * format_damage_test.c - damage in the chunk sequence: every single-bit flip
 * of every chunk byte of a reference file, unknown chunk kinds, junk between
 * chunks, hostile chunk lengths, and checksum-valid payloads with hostile
 * counts, lengths and nesting.  The reader must skip and count the damage,
 * deliver every other chunk, and never crash or allocate what a length field
 * claims.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "refgen.h"
#include "test_util.h"

static size_t chunk_at(const tref_fixture *f, size_t off)
{
    for (size_t k = 0; k < f->clean.nchunks; k++)
        if (off < f->clean.chunks[k].ci.offset + f->clean.chunks[k].ci.length)
            return k;
    fail();
    return 0;
}

static void test_chunk_bit_flips(void **state)
{
    tref_fixture *f = *state;
    uint8_t *buf = malloc(f->out.len);
    assert_non_null(buf);
    const size_t n = f->clean.nchunks;
    for (size_t i = f->hdr_len; i < f->out.len; i++) {
        size_t x = chunk_at(f, i);
        const prism_chunk_info *hit = &f->clean.chunks[x].ci;
        for (unsigned bit = 0; bit < 8; bit++) {
            tlog l;
            prism_reader *r;
            assert_int_equal(tref_read_flipped(f, buf, i, bit, &l, &r), PRISM_OK);
            const prism_reader_stats *st = prism_reader_stats_get(r);
            /* Every other chunk arrives intact, in order; the hit one never. */
            size_t ok = 0, bad = 0;
            for (size_t k = 0; k < l.nchunks; k++) {
                const prism_chunk_info *c = &l.chunks[k].ci;
                if (c->status != PRISM_CHUNK_OK) {
                    /* the damaged run is exactly the hit chunk's bytes */
                    assert_int_equal(c->offset, hit->offset);
                    assert_int_equal(c->length, hit->length);
                    bad++;
                    continue;
                }
                if (ok == x)
                    ok++;
                assert_true(ok < n);
                const prism_chunk_info *want = &f->clean.chunks[ok].ci;
                assert_int_equal(c->offset, want->offset);
                assert_int_equal(c->kind, want->kind);
                assert_int_equal(c->stream, want->stream);
                assert_int_equal(c->seq, want->seq);
                ok++;
            }
            assert_int_equal(st->chunks, n - 1);
            if (x + 1 < n) {
                assert_int_equal(ok, n);
                assert_int_equal(bad, 1);
                assert_int_equal(st->damaged, 1);
                assert_int_equal(st->skipped_bytes, hit->length);
                assert_int_equal(st->torn_bytes, 0);
            } else {
                /* The last chunk: a length made too long reads as a torn
                 * tail (indistinguishable from a file cut while written). */
                assert_true(st->damaged + (st->torn_bytes ? 1 : 0) == 1);
                assert_int_equal(st->skipped_bytes + st->torn_bytes, hit->length);
                assert_int_equal(bad, st->damaged);
            }
            prism_reader_free(r);
            tlog_free(&l);
        }
    }
    free(buf);
}

/* ---- chunk level ---- */

typedef struct built {
    uint8_t b[40000];
    size_t n;
    size_t mark[8];             /* offsets noted while building */
} built;

static void add(built *b, const void *p, size_t n)
{
    assert_true(b->n + n <= sizeof b->b);
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

/* The fixture's header and first two chunks. */
static void start(built *b, const tref_fixture *f)
{
    b->n = 0;
    add(b, f->out.data, f->hdr_len);
    for (int k = 0; k < 2; k++)
        add(b, f->out.data + f->clean.chunks[k].ci.offset, (size_t)f->clean.chunks[k].ci.length);
}

static void add_chunk(built *b, uint32_t kind, const uint8_t *payload, size_t plen)
{
    assert_true(b->n + plen + 64 <= sizeof b->b);
    b->n += tchunk(b->b + b->n, kind, 9, 0, payload, plen);
}

static void add_good(built *b, const tref_fixture *f, size_t k)
{
    add(b, f->out.data + f->clean.chunks[k].ci.offset, (size_t)f->clean.chunks[k].ci.length);
}

/* Read what was built in one piece into l (initialised here); the read must
 * end PRISM_OK.  The caller frees the reader and the log. */
static prism_reader *read_built(tlog *l, const built *b)
{
    tlog_init(l);
    prism_reader *r;
    assert_int_equal(tlog_read_chunks(l, b->b, b->n, &r), PRISM_OK);
    return r;
}

static void test_unknown_kind(void **state)
{
    tref_fixture *f = *state;
    static built b;
    start(&b, f);
    static const uint8_t payload[] = { 0x83, 0x01, 0x62, 'h', 'i', 0xa0 };
    size_t at = b.n;
    add_chunk(&b, 200, payload, sizeof payload);
    size_t len = b.n - at;
    add_good(&b, f, 2);
    tlog l;
    prism_reader *r = read_built(&l, &b);
    const prism_reader_stats *st = prism_reader_stats_get(r);
    assert_int_equal(st->unknown, 1);
    assert_int_equal(st->damaged, 0);
    assert_int_equal(st->chunks, 3);
    assert_int_equal(l.nchunks, 4);
    const prism_chunk_info *c = &l.chunks[2].ci;
    assert_int_equal(c->status, PRISM_CHUNK_UNKNOWN);
    assert_int_equal(c->kind, 200);
    assert_int_equal(c->offset, at);
    assert_int_equal(c->length, len);
    assert_int_equal(c->payload_len, sizeof payload);
    assert_int_equal(c->records, 0);
    assert_int_equal(l.chunks[3].ci.status, PRISM_CHUNK_OK);
    assert_int_equal(l.chunks[3].ci.offset, at + len);
    assert_int_equal(prism_reader_good_offset(r), b.n);
    assert_string_equal(prism_chunk_kind_name(200), "unknown");
    prism_reader_free(r);
    tlog_free(&l);
}

/* Junk between chunks, junk made of 0x85 bytes, and junk at the end: each
 * run skipped and counted once, with its offset and length. */
static void test_junk(void **state)
{
    tref_fixture *f = *state;
    static built b;
    start(&b, f);
    b.mark[0] = b.n;
    add(&b, "hello", 5);
    add_good(&b, f, 2);
    b.mark[1] = b.n;
    static const uint8_t fake[] = { 0x85, 0x85, 0x03, 0x85, 0x01, 0x00, 0xd8, 0x18, 0x85 };
    add(&b, fake, sizeof fake);
    add_good(&b, f, 3);
    b.mark[2] = b.n;
    add(&b, "\x00\x85\x01", 3);
    for (int pieces = 0; pieces < 2; pieces++) {
        tlog l;
        tlog_init(&l);
        prism_reader *r = tlog_chunk_reader(&l);
        if (pieces)
            for (size_t i = 0; i < b.n; i++)
                prism_reader_feed(r, b.b + i, 1);
        else
            prism_reader_feed(r, b.b, b.n);
        assert_int_equal(prism_reader_finish(r), PRISM_OK);
        const prism_reader_stats *st = prism_reader_stats_get(r);
        assert_int_equal(st->chunks, 4);
        assert_int_equal(st->damaged, 3);
        assert_int_equal(st->bad_checksum, 0);
        assert_int_equal(st->skipped_bytes, 5 + sizeof fake + 3);
        assert_int_equal(st->torn_bytes, 0);
        assert_int_equal(l.nchunks, 7);
        const size_t junk[] = { 2, 4, 6 };
        const size_t jlen[] = { 5, sizeof fake, 3 };
        for (int j = 0; j < 3; j++) {
            const prism_chunk_info *c = &l.chunks[junk[j]].ci;
            assert_int_equal(c->status, PRISM_CHUNK_GARBAGE);
            assert_int_equal(c->offset, b.mark[j]);
            assert_int_equal(c->length, jlen[j]);
        }
        prism_reader_free(r);
        tlog_free(&l);
    }
}

/* Junk or a torn chunk at the very end, fed before finish (one byte too). */
static void test_trailing(void **state)
{
    tref_fixture *f = *state;
    static built b;
    static const struct { const char *tail; size_t n; uint64_t damaged, torn; } cases[] = {
        { "hello", 5, 1, 0 }, { "\x00", 1, 1, 0 }, { "\x85", 1, 0, 1 },
        { "\x85\x03\x01", 3, 0, 3 }, { "ab\x85\x03", 4, 1, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int pieces = 0; pieces < 2; pieces++) {
            start(&b, f);
            size_t at = b.n;
            add(&b, cases[i].tail, cases[i].n);
            tlog l;
            tlog_init(&l);
            prism_reader *r = tlog_chunk_reader(&l);
            if (pieces) {
                assert_int_equal(prism_reader_feed(r, b.b, at), PRISM_OK);
                assert_int_equal(prism_reader_feed(r, b.b + at, b.n - at), PRISM_NEED_MORE);
            } else {
                assert_int_equal(prism_reader_feed(r, b.b, b.n), PRISM_NEED_MORE);
            }
            assert_int_equal(prism_reader_finish(r), PRISM_OK);
            const prism_reader_stats *st = prism_reader_stats_get(r);
            assert_int_equal(st->chunks, 2);
            assert_int_equal(st->damaged, cases[i].damaged);
            assert_int_equal(st->torn_bytes, cases[i].torn ? cases[i].n : 0);
            assert_int_equal(st->skipped_bytes, cases[i].damaged ? cases[i].n : 0);
            assert_int_equal(l.nchunks, 2 + cases[i].damaged);
            if (cases[i].damaged) {
                assert_int_equal(l.chunks[2].ci.status, PRISM_CHUNK_GARBAGE);
                assert_int_equal(l.chunks[2].ci.offset, at);
                assert_int_equal(l.chunks[2].ci.length, cases[i].n);
            }
            assert_int_equal(prism_reader_good_offset(r), at);
            prism_reader_free(r);
            tlog_free(&l);
        }
    }
}

static void test_hostile_chunk_lengths(void **state)
{
    tref_fixture *f = *state;
    static built b;
    static const uint8_t lens[][9] = {
        { 0x5a, 0xff, 0xff, 0xff, 0xff },
        { 0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
        { 0x5a, 0x01, 0x00, 0x00, 0x01 },            /* just over the limit */
    };
    static const size_t nlen[] = { 5, 9, 5 };
    for (int i = 0; i < 3; i++) {
        start(&b, f);
        size_t at = b.n;
        add(&b, "\x85\x03\x01\x00\xd8\x18", 6);
        add(&b, lens[i], nlen[i]);
        add(&b, "\x9a\x00\x00\x00\x00", 5);
        size_t junk = b.n - at;
        add_good(&b, f, 2);
        tlog l;
        prism_reader *r = read_built(&l, &b);
        const prism_reader_stats *st = prism_reader_stats_get(r);
        assert_int_equal(st->chunks, 3);
        assert_int_equal(st->damaged, 1);
        assert_int_equal(st->skipped_bytes, junk);
        assert_int_equal(l.chunks[2].ci.offset, at);
        assert_int_not_equal(l.chunks[2].ci.status, PRISM_CHUNK_OK);
        assert_int_equal(l.chunks[3].ci.status, PRISM_CHUNK_OK);
        prism_reader_free(r);
        tlog_free(&l);
    }
}

/* Checksum-valid payloads that are not as specified: MALFORMED, the next
 * chunk still read.  Counts and lengths claim far more than there is. */
static void test_hostile_payloads(void **state)
{
    tref_fixture *f = *state;
    static const uint8_t ff8[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static uint8_t deep[10100];
    struct { uint32_t kind; const char *head; size_t hlen; bool tail8; } cases[] = {
        { PRISM_CHUNK_REGIONS, "\x9a\xff\xff\xff\xff", 5, false },
        { PRISM_CHUNK_REGIONS, "\x9b", 1, true },
        { PRISM_CHUNK_STRINGS, "\x9a\x00\x00\x00\x02\x01\x7b", 7, true },
        { PRISM_CHUNK_STRINGS, "\x9a\x00\x00\x00\x02\x00\x60", 7, false },   /* id 0 */
        { PRISM_CHUNK_THREADS, "\x9a\x00\x00\x00\x01\x9b", 6, true },
        { PRISM_CHUNK_THREADS, "\x9a\x00\x00\x00\x01\x83\x01\x01\x7a\xff\xff\xff\xff", 13, false },
        { PRISM_CHUNK_MEMORY, "\x9a\x00\x00\x00\x02\x00\x9b", 7, true },
        { PRISM_CHUNK_MEMORY, "\x9a\x00\x00\x00\x02\x00\x85\x00\xf6\x00\xf6\x9b", 12, true },
        { PRISM_CHUNK_MEMORY, "\x9a\x00\x00\x00\x02\x00\x85\x00\xf6\x00\xf6\x91", 12, false },
        { PRISM_CHUNK_GPU, "\x9a\x00\x00\x00\x02\x00\x9b", 7, true },
        { PRISM_CHUNK_DROPPED, "\x9a\x00\x00\x00\x01\x9b", 6, true },
        { PRISM_CHUNK_INFO, "\x9a\x00\x00\x00\x02\x7b", 6, true },
        { PRISM_CHUNK_MARKS, "\x9a\x00\x00\x00\x03\x00\x1b", 7, true },   /* ts overflow */
        { PRISM_CHUNK_FOOTER, "\x9a\x00\x00\x00\x05\x00\x00\x00\x00\x00", 10, false },
        { PRISM_CHUNK_COUNTERS, "\x9a\x00\x00\x00\x04\x00\x00\x01\xf7", 9, false },
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x02\x00\x9b", 7, true },    /* huge record */
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x02\x00\x83\x01\x01\x01", 10, false },
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x04\x00\x05\x05\x84\x01\x01\x01\x01", 13,
          false },                                                      /* two deltas */
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x03\x00\x84\x01\x01\x01\x01\x05", 12,
          false },                                                      /* trailing delta */
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x03\x01\x1b", 7, true },    /* ts overflow */
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x02\x00\x61\x61", 8, false },   /* a text */
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x03\x00\x20\x84\x01\x01\x01\x01", 12,
          false },                                                      /* negative delta */
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x02\x00\x84\x1b\x00\x00\x00\x01\x00\x00\x00"
          "\x00\x01\x01\x01", 19, false },                              /* stream > u32 */
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x02\x00\x84\x01\x01\x01\xf6", 11, false },
        { PRISM_CHUNK_CPU, "\x9a\x00\x00\x00\x03\x00\x84\x01\x01\x01\x01", 11, false },
    };
    static built b;
    static uint8_t payload[10200];
    const size_t ncase = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < ncase + 4; i++) {
        size_t n = 0;
        uint32_t kind;
        if (i < ncase) {
            kind = cases[i].kind;
            memcpy(payload, cases[i].head, cases[i].hlen);
            n = cases[i].hlen;
            if (cases[i].tail8) {
                memcpy(payload + n, ff8, 8);
                n += 8;
            }
        } else {
            /* 10000 levels of nesting where a record may carry extra fields */
            static const char *const heads[] = {
                "\x9a\x00\x00\x00\x01\x84\x02\x00\x05",                 /* dropped */
                "\x9a\x00\x00\x00\x06\x00\x00\x00\x00\x00\xf5",         /* footer */
                "\x9a\x00\x00\x00\x01",                                 /* regions */
                "\x9a\x00\x00\x00\x02\x01\x85\x01\x01\x01\x01",         /* cpu */
            };
            static const uint32_t kinds[] = { PRISM_CHUNK_DROPPED, PRISM_CHUNK_FOOTER,
                                              PRISM_CHUNK_REGIONS, PRISM_CHUNK_CPU };
            kind = kinds[i - ncase];
            n = strlen(heads[i - ncase] + 5) + 5;
            memcpy(payload, heads[i - ncase], n);
            memset(deep, 0x81, 10000);
            deep[10000] = 0x00;
            memcpy(payload + n, deep, 10001);
            n += 10001;
        }
        start(&b, f);
        size_t at = b.n;
        add_chunk(&b, kind, payload, n);
        add_good(&b, f, 2);
        tlog l;
        prism_reader *r = read_built(&l, &b);
        const prism_reader_stats *st = prism_reader_stats_get(r);
        if (st->malformed != 1)
            print_error("case %zu not malformed\n", i);
        assert_int_equal(st->malformed, 1);
        assert_int_equal(st->damaged, 0);
        assert_int_equal(st->chunks, 3);
        assert_int_equal(l.nchunks, 4);
        assert_int_equal(l.chunks[2].ci.status, PRISM_CHUNK_MALFORMED);
        assert_int_equal(l.chunks[2].ci.offset, at);
        assert_int_equal(l.chunks[2].ci.kind, kind);
        assert_int_equal(l.chunks[3].ci.status, PRISM_CHUNK_OK);
        assert_false(st->footer);
        prism_reader_free(r);
        tlog_free(&l);
    }
}

/* The records a clean-read chunk k delivered, in log a, equal those of
 * chunk j in log b. */
static void assert_same_records(const tlog *a, size_t k, const tlog *b, size_t j)
{
    const tlog_chunk *x = &a->chunks[k], *y = &b->chunks[j];
    assert_int_equal(x->rec_end - x->rec_start, y->rec_end - y->rec_start);
    assert_memory_equal(a->b + x->rec_start, b->b + y->rec_start, x->rec_end - x->rec_start);
}

/*
 * A file with CPU chunks (format 1.1) before older readers.  One without a
 * cpu callback gets everything else, unchanged.  One that does not know
 * kind 12 at all (shown by renumbering the CPU chunks to kind 99, checksums
 * recomputed) skips them as unknown, still counts their sequence numbers
 * (no gap), and delivers every other record exactly as before.
 */
static void test_cpu_chunks_for_old_readers(void **state)
{
    tref_fixture *f = *state;
    const tlog *clean = &f->clean;
    size_t ncpu = 0, nrec = 0;
    for (size_t k = 0; k < clean->nchunks; k++)
        if (clean->chunks[k].ci.kind == PRISM_CHUNK_CPU) {
            ncpu++;
            nrec += clean->chunks[k].ci.records;
        }
    assert_true(ncpu >= 2 && nrec >= 6);

    /* no cpu callback */
    tlog l;
    tlog_init(&l);
    prism_reader_callbacks cb = tlog_callbacks();
    cb.cpu = NULL;
    prism_reader *r = prism_reader_new(&cb, &l);
    assert_non_null(r);
    prism_reader_feed(r, f->out.data, f->out.len);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    const prism_reader_stats *st = prism_reader_stats_get(r);
    assert_int_equal(st->chunks, clean->nchunks);
    assert_int_equal(st->unknown + st->malformed + st->damaged + st->seq_gaps, 0);
    assert_int_equal(l.nchunks, clean->nchunks);
    for (size_t k = 0; k < clean->nchunks; k++) {
        assert_memory_equal(&l.chunks[k].ci, &clean->chunks[k].ci, sizeof l.chunks[k].ci);
        if (clean->chunks[k].ci.kind == PRISM_CHUNK_CPU)
            assert_int_equal(l.chunks[k].rec_end, l.chunks[k].rec_start);  /* nothing */
        else
            assert_same_records(clean, k, &l, k);
    }
    prism_reader_free(r);
    tlog_free(&l);

    /* kind 12 unknown: the CPU chunks renumbered to 99 */
    uint8_t *b = malloc(f->out.len + 64 * clean->nchunks);
    assert_non_null(b);
    size_t n = f->hdr_len;
    memcpy(b, f->out.data, n);
    for (size_t k = 0; k < clean->nchunks; k++) {
        const prism_chunk_info *c = &clean->chunks[k].ci;
        const uint8_t *at = f->out.data + c->offset;
        if (c->kind != PRISM_CHUNK_CPU) {
            memcpy(b + n, at, (size_t)c->length);
            n += (size_t)c->length;
        } else {
            const uint8_t *pl = at + c->length - 9 - c->payload_len;
            n += tchunk(b + n, 99, c->stream, c->seq, pl, (size_t)c->payload_len);
        }
    }
    tlog_init(&l);
    r = tlog_reader(&l);
    prism_reader_feed(r, b, n);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    st = prism_reader_stats_get(r);
    assert_int_equal(st->unknown, ncpu);
    assert_int_equal(st->chunks, clean->nchunks - ncpu);
    assert_int_equal(st->malformed + st->damaged + st->seq_gaps + st->torn_bytes, 0);
    assert_true(st->footer);
    assert_int_equal(l.nchunks, clean->nchunks);
    for (size_t k = 0; k < clean->nchunks; k++) {
        const prism_chunk_info *c = &l.chunks[k].ci, *want = &clean->chunks[k].ci;
        assert_int_equal(c->stream, want->stream);
        assert_int_equal(c->seq, want->seq);
        if (want->kind == PRISM_CHUNK_CPU) {
            assert_int_equal(c->kind, 99);
            assert_int_equal(c->status, PRISM_CHUNK_UNKNOWN);
            assert_int_equal(c->records, 0);
            assert_int_equal(c->payload_len, want->payload_len);
            assert_int_equal(l.chunks[k].rec_end, l.chunks[k].rec_start);
        } else {
            assert_int_equal(c->kind, want->kind);
            assert_int_equal(c->status, PRISM_CHUNK_OK);
            assert_int_equal(c->records, want->records);
            assert_same_records(clean, k, &l, k);
        }
    }
    uint64_t total = 0;
    for (size_t k = 0; k < clean->nchunks; k++)
        total += clean->chunks[k].ci.records;
    assert_int_equal(st->records, total - nrec);
    assert_int_equal(l.hdr_end, clean->hdr_end);              /* the same header */
    assert_memory_equal(l.b, clean->b, clean->hdr_end);
    prism_reader_free(r);
    tlog_free(&l);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_bit_flips),
        cmocka_unit_test(test_unknown_kind),
        cmocka_unit_test(test_junk),
        cmocka_unit_test(test_trailing),
        cmocka_unit_test(test_hostile_chunk_lengths),
        cmocka_unit_test(test_hostile_payloads),
        cmocka_unit_test(test_cpu_chunks_for_old_readers),
    };
    return cmocka_run_group_tests(tests, tref_setup, tref_teardown);
}
