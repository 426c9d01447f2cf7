/*
 * format_header_test.c - the header phase with foreign and damaged input:
 * every single-bit flip inside a reference header, foreign files, a future
 * version, hand-built headers with hostile lengths, counts and nesting, and
 * the reader's sticky errors and call order.  Every case must end in a
 * documented error with a message and an offset, never a crash or an
 * allocation sized by the input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cbor.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "refgen.h"
#include "test_util.h"

static bool header_error(prism_status s)
{
    return s == PRISM_E_NOT_PRISM || s == PRISM_E_HEADER || s == PRISM_E_VERSION ||
           s == PRISM_E_LIMIT;
}

static void test_header_bit_flips(void **state)
{
    tref_fixture *f = *state;
    uint8_t *buf = malloc(f->out.len);
    assert_non_null(buf);
    for (size_t i = 0; i < f->hdr_len; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            tlog l;
            prism_reader *r;
            prism_status s = tref_read_flipped(f, buf, i, bit, &l, &r);
            const char *msg;
            uint64_t off;
            assert_true(header_error(s));
            assert_int_equal(prism_reader_error(r, &msg, &off), s);
            assert_true(msg[0] != '\0');
            /* At or before the end of the damaged header. */
            /* Where the damage was noticed: never before the flipped byte;
             * past the header when a flipped length made it look longer
             * (then possibly at the end of input: "header is truncated"). */
            assert_in_range(off, i < 3 ? 0 : i, f->out.len);
            assert_false(l.have_header);
            assert_int_equal(l.nchunks, 0);
            assert_null(prism_reader_header(r));
            prism_reader_free(r);
            tlog_free(&l);
        }
    }
    free(buf);
}

/* ---- hand-built input ---- */

typedef struct hb {
    uint8_t b[80000];
    size_t n;
} hb;

static void hb_raw(hb *h, const void *p, size_t n)
{
    assert_true(h->n + n <= sizeof h->b);
    memcpy(h->b + h->n, p, n);
    h->n += n;
}

static void hb_byte(hb *h, uint8_t v) { hb_raw(h, &v, 1); }

static void hb_text(hb *h, const char *s)
{
    h->n += cbor_encode_string_start(strlen(s), h->b + h->n, sizeof h->b - h->n);
    hb_raw(h, s, strlen(s));
}

static void hb_uint(hb *h, uint64_t v)
{
    size_t k = cbor_encode_uint(v, h->b + h->n, sizeof h->b - h->n);
    assert_true(k > 0);
    h->n += k;
}

/* Tag, a map of `entries` pairs, magic and version; the caller adds
 * entries - 3 pairs and then hb_sum. */
static void hb_begin(hb *h, size_t entries, uint64_t major, uint64_t minor)
{
    h->n = 0;
    hb_raw(h, "\xd9\xd9\xf7", 3);
    h->n += cbor_encode_map_start(entries, h->b + h->n, sizeof h->b - h->n);
    hb_text(h, "magic");
    hb_text(h, "PRISM");
    hb_text(h, "version");
    h->n += cbor_encode_array_start(2, h->b + h->n, sizeof h->b - h->n);
    hb_uint(h, major);
    hb_uint(h, minor);
}

static void hb_sum(hb *h)
{
    uint64_t sum = XXH3_64bits(h->b, h->n);
    hb_text(h, "checksum");
    h->n += cbor_encode_uint64(sum, h->b + h->n, sizeof h->b - h->n);
}

/* Append the fixture's first chunk (a good one). */
static void hb_good_chunk(hb *h, const tref_fixture *f)
{
    const prism_chunk_info *c = &f->clean.chunks[0].ci;
    hb_raw(h, f->out.data + c->offset, (size_t)c->length);
}

static const char *r_msg(const prism_reader *r)
{
    const char *m;
    prism_reader_error(r, &m, NULL);
    return m;
}

/* Read h; expect status want (and for errors an offset in [lo, hi]). */
static prism_reader *expect(const uint8_t *p, size_t n, prism_status want, uint64_t lo,
                            uint64_t hi, tlog *l)
{
    prism_reader *r;
    prism_status s = tlog_read_chunks(l, p, n, &r);
    if (s != want)
        print_error("got %s (%s)\n", prism_strerror(s), prism_reader_error(r, NULL, NULL) ? r_msg(r) : "");
    assert_int_equal(s, want);
    const char *msg;
    uint64_t off;
    assert_int_equal(prism_reader_error(r, &msg, &off), want);
    if (want != PRISM_OK) {
        assert_true(msg[0] != '\0');
        assert_in_range(off, lo, hi);
        /* sticky */
        assert_int_equal(prism_reader_feed(r, "x", 1), want);
        assert_int_equal(prism_reader_finish(r), want);
    } else {
        assert_string_equal(msg, "");
    }
    return r;
}

static void expect_error(const void *p, size_t n, prism_status want, uint64_t lo, uint64_t hi)
{
    tlog l;
    tlog_init(&l);
    prism_reader *r = expect(p, n, want, lo, hi, &l);
    assert_int_equal(l.nchunks, 0);
    assert_false(l.have_header);
    prism_reader_free(r);
    tlog_free(&l);
}

static void test_empty_and_foreign(void **state)
{
    (void)state;
    prism_reader *r = tlog_chunk_reader(NULL);
    assert_int_equal(prism_reader_finish(r), PRISM_E_EMPTY);
    prism_reader_free(r);
    r = tlog_chunk_reader(NULL);
    assert_int_equal(prism_reader_feed(r, NULL, 0), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_E_EMPTY);
    prism_reader_free(r);

    static const char hello[] = "hello world";
    expect_error(hello, strlen(hello), PRISM_E_NOT_PRISM, 0, 0);
    static const char json[] = "{\"magic\": \"PRISM\", \"version\": [1, 0]}\n";
    expect_error(json, strlen(json), PRISM_E_NOT_PRISM, 0, 0);
    static const uint8_t untagged[] = { 0xa1, 0x65, 'm', 'a', 'g', 'i', 'c',
                                        0x65, 'P', 'R', 'I', 'S', 'M' };
    expect_error(untagged, sizeof untagged, PRISM_E_NOT_PRISM, 0, 0);
    static const uint8_t other_tag[] = { 0xd9, 0xd9, 0xf6, 0xa0 };
    expect_error(other_tag, sizeof other_tag, PRISM_E_NOT_PRISM, 0, 3);
    static const uint8_t tagged_array[] = { 0xd9, 0xd9, 0xf7, 0x82, 0x01, 0x02 };
    expect_error(tagged_array, sizeof tagged_array, PRISM_E_NOT_PRISM, 3, 4);
    static const uint8_t wrong_magic[] = { 0xd9, 0xd9, 0xf7, 0xa2, 0x65, 'm', 'a', 'g', 'i', 'c',
                                           0x65, 'P', 'R', 'I', 'S', 'N', 0x00, 0x00 };
    expect_error(wrong_magic, sizeof wrong_magic, PRISM_E_NOT_PRISM, 10, 16);
    static const uint8_t first_not_magic[] = { 0xd9, 0xd9, 0xf7, 0xa1, 0x63, 'p', 'i', 'd', 0x01 };
    expect_error(first_not_magic, sizeof first_not_magic, PRISM_E_NOT_PRISM, 4, 8);
    /* A lone tag byte: not yet decidable, then truncated at finish. */
    expect_error("\xd9", 1, PRISM_E_HEADER, 1, 1);
}

static void test_versions(void **state)
{
    tref_fixture *f = *state;
    static hb h;
    hb_begin(&h, 3, 2, 0);
    size_t version_end = h.n;
    hb_sum(&h);
    hb_good_chunk(&h, f);
    tlog l;
    tlog_init(&l);
    prism_reader *r = expect(h.b, h.n, PRISM_E_VERSION, version_end - 3, version_end, &l);
    const char *msg;
    prism_reader_error(r, &msg, NULL);
    assert_non_null(strstr(msg, "2.0"));
    prism_reader_free(r);
    tlog_free(&l);

    /* A newer minor with unknown keys (nested values) reads fine. */
    hb_begin(&h, 5, 1, 7);
    hb_text(&h, "future");
    /* {"a": [1, 1(1)], "b": h'00'} */
    static const uint8_t nested[] = { 0xa2, 0x61, 'a', 0x82, 0x01, 0xc1, 0x1a, 0, 0, 0, 1,
                                      0x61, 'b', 0x41, 0x00 };
    hb_raw(&h, nested, sizeof nested);
    hb_text(&h, "also_new");
    hb_raw(&h, "\xfb\x40\x09\x21\xfb\x54\x44\x2d\x18", 9);
    hb_sum(&h);
    hb_good_chunk(&h, f);
    tlog_init(&l);
    r = expect(h.b, h.n, PRISM_OK, 0, 0, &l);
    const prism_header *hd = prism_reader_header(r);
    assert_non_null(hd);
    assert_int_equal(hd->version_major, 1);
    assert_int_equal(hd->version_minor, 7);
    assert_int_equal(l.nchunks, 1);
    assert_int_equal(l.chunks[0].ci.status, PRISM_CHUNK_OK);
    prism_reader_free(r);
    tlog_free(&l);
}

static void test_header_damage_by_hand(void **state)
{
    (void)state;
    static hb h;
    /* wrong checksum */
    hb_begin(&h, 3, 1, 0);
    hb_sum(&h);
    h.b[h.n - 1] ^= 1;
    expect_error(h.b, h.n, PRISM_E_HEADER, 0, h.n);
    /* no checksum */
    hb_begin(&h, 2, 1, 0);
    expect_error(h.b, h.n, PRISM_E_HEADER, 0, h.n);
    /* no version */
    h.n = 0;
    hb_raw(&h, "\xd9\xd9\xf7\xa2", 4);
    hb_text(&h, "magic");
    hb_text(&h, "PRISM");
    hb_sum(&h);
    expect_error(h.b, h.n, PRISM_E_HEADER, 0, h.n);
    /* checksum not last */
    hb_begin(&h, 4, 1, 0);
    hb_sum(&h);
    hb_text(&h, "pid");
    hb_uint(&h, 1);
    expect_error(h.b, h.n, PRISM_E_HEADER, 0, h.n);
    /* a known key with the wrong type */
    hb_begin(&h, 4, 1, 0);
    hb_text(&h, "pid");
    hb_text(&h, "one");
    size_t at = h.n;
    hb_sum(&h);
    expect_error(h.b, h.n, PRISM_E_HEADER, at - 4, at);
    /* a header bigger than the limit */
    hb_begin(&h, 4, 1, 0);
    hb_text(&h, "blob");
    h.n += cbor_encode_bytestring_start(70000, h.b + h.n, sizeof h.b - h.n);
    memset(h.b + h.n, 0x85, 70000);
    h.n += 70000;
    hb_sum(&h);
    expect_error(h.b, h.n, PRISM_E_LIMIT, 0, PRISM_MAX_HEADER_BYTES);
}

static void test_header_hostile(void **state)
{
    (void)state;
    static hb h;
    static const uint8_t huge8[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    /* a map of 2^64-1 / 2^32-1 entries */
    h.n = 0;
    hb_raw(&h, "\xd9\xd9\xf7\xbb", 4);
    hb_raw(&h, huge8, 8);
    expect_error(h.b, h.n, PRISM_E_LIMIT, 3, 12);
    h.n = 0;
    hb_raw(&h, "\xd9\xd9\xf7\xba\xff\xff\xff\xff", 8);
    expect_error(h.b, h.n, PRISM_E_LIMIT, 3, 8);
    /* texts of 2^64-1 bytes: key, magic, producer */
    h.n = 0;
    hb_raw(&h, "\xd9\xd9\xf7\xa3\x7b", 5);
    hb_raw(&h, huge8, 8);
    expect_error(h.b, h.n, PRISM_E_HEADER, 4, 13);
    h.n = 0;
    hb_raw(&h, "\xd9\xd9\xf7\xa3", 4);
    hb_text(&h, "magic");
    hb_byte(&h, 0x7b);
    hb_raw(&h, huge8, 8);
    expect_error(h.b, h.n, PRISM_E_HEADER, 10, 19);
    hb_begin(&h, 4, 1, 0);
    size_t at = h.n;
    hb_text(&h, "producer");
    hb_byte(&h, 0x7b);
    hb_raw(&h, huge8, 8);
    expect_error(h.b, h.n, PRISM_E_HEADER, at, h.n);
    /* argv / config with 2^64-1 entries */
    const char *const keys[] = { "argv", "config" };
    const uint8_t heads[] = { 0x9b, 0xbb };
    for (int i = 0; i < 2; i++) {
        hb_begin(&h, 4, 1, 0);
        at = h.n;
        hb_text(&h, keys[i]);
        hb_byte(&h, heads[i]);
        hb_raw(&h, huge8, 8);
        hb_sum(&h);
        expect_error(h.b, h.n, PRISM_E_LIMIT, at, h.n);
    }
    /* 10000 levels of nesting under an unknown key */
    hb_begin(&h, 4, 1, 0);
    at = h.n;
    hb_text(&h, "deep");
    memset(h.b + h.n, 0x81, 10000);
    h.n += 10000;
    hb_byte(&h, 0x00);
    hb_sum(&h);
    expect_error(h.b, h.n, PRISM_E_HEADER, at, h.n);
    /* ... and of tags */
    hb_begin(&h, 4, 1, 0);
    hb_text(&h, "deep");
    memset(h.b + h.n, 0xc1, 10000);
    h.n += 10000;
    hb_byte(&h, 0x00);
    hb_sum(&h);
    expect_error(h.b, h.n, PRISM_E_HEADER, at, h.n);
}

static void test_state_and_args(void **state)
{
    tref_fixture *f = *state;
    tlog l;
    tlog_init(&l);
    prism_reader *r = tlog_chunk_reader(&l);
    assert_int_equal(prism_reader_feed(NULL, "x", 1), PRISM_E_ARG);
    assert_int_equal(prism_reader_feed(r, NULL, 1), PRISM_E_ARG);
    assert_int_equal(prism_reader_finish(NULL), PRISM_E_ARG);
    assert_int_equal(prism_reader_feed(r, f->out.data, f->out.len), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);        /* idempotent */
    size_t n = l.nchunks;
    assert_int_equal(prism_reader_feed(r, f->out.data, 10), PRISM_E_STATE);
    const char *msg;
    uint64_t off;
    assert_int_equal(prism_reader_error(r, &msg, &off), PRISM_E_STATE);
    assert_true(msg[0] != '\0');
    assert_int_equal(off, f->out.len);
    assert_int_equal(prism_reader_feed(r, f->out.data, 10), PRISM_E_STATE);
    assert_int_equal(l.nchunks, n);
    prism_reader_free(r);
    tlog_free(&l);

    /* An error is sticky: valid data afterwards changes nothing. */
    tlog_init(&l);
    r = tlog_chunk_reader(&l);
    assert_int_equal(prism_reader_feed(r, "{}", 2), PRISM_E_NOT_PRISM);
    assert_int_equal(prism_reader_feed(r, f->out.data, f->out.len), PRISM_E_NOT_PRISM);
    assert_int_equal(prism_reader_finish(r), PRISM_E_NOT_PRISM);
    assert_int_equal(prism_reader_read_fd(r, 0), PRISM_E_NOT_PRISM);
    assert_int_equal(prism_reader_error(r, NULL, &off), PRISM_E_NOT_PRISM);
    assert_int_equal(off, 0);
    assert_int_equal(l.nchunks, 0);
    assert_null(prism_reader_header(r));
    prism_reader_free(r);
    tlog_free(&l);
    prism_reader_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_bit_flips),
        cmocka_unit_test(test_empty_and_foreign),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_header_damage_by_hand),
        cmocka_unit_test(test_header_hostile),
        cmocka_unit_test(test_state_and_args),
    };
    return cmocka_run_group_tests(tests, tref_setup, tref_teardown);
}
