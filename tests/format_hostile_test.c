/*
 * format_hostile_test.c - the reader's work per byte (issue 16): a chunk
 * payload above PRISM_MAX_CHUNK_PAYLOAD (1 MiB, what writers produce) does
 * not frame even when its checksum is right, and damage made of a 16-byte
 * pattern that frames a candidate every 16 bytes is skipped as one damaged
 * run without hashing each candidate in full (it used to cost a payload of
 * hashing per 16 bytes: minutes here).  The watchdog (alarm) is a hang
 * guard, not a timing assertion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"

static const prism_reader_stats *read_all(prism_reader **r, const uint8_t *p, size_t n)
{
    *r = prism_reader_new(NULL, NULL);
    assert_non_null(*r);
    prism_status st = prism_reader_feed(*r, p, n);
    assert_true(st == PRISM_OK || st == PRISM_NEED_MORE);
    assert_int_equal(prism_reader_finish(*r), PRISM_OK);
    return prism_reader_stats_get(*r);
}

static void test_payload_limit(void **state)
{
    (void)state;
    uint8_t *p = malloc(8u << 20);
    assert_non_null(p);
    size_t n = hostile_header(p, 4096);
    n += hostile_big_chunk(p + n, 1u << 20);    /* 1 MiB, the limit: good */
    prism_reader *r;
    const prism_reader_stats *st = read_all(&r, p, n);
    assert_int_equal(st->unknown, 1);
    assert_int_equal(st->damaged, 0);
    prism_reader_free(r);

    n = hostile_header(p, 4096);
    size_t h = n;
    n += hostile_big_chunk(p + n, 2u << 20);    /* 2 MiB: the old 16 MiB limit took it */
    st = read_all(&r, p, n);
    assert_int_equal(st->unknown, 0);
    assert_int_equal(st->damaged, 1);
    assert_int_equal(st->skipped_bytes, n - h);
    prism_reader_free(r);
    free(p);
}

/* 16 MiB of a pattern whose every copy frames a candidate claiming 1 MiB. */
static void test_pattern_linear(void **state)
{
    (void)state;
    enum { BODY = 16u << 20 };
    uint8_t *p = malloc(4096 + BODY);
    assert_non_null(p);
    size_t n = hostile_header(p, 4096), h = n;
    n += hostile_pattern(p + n, BODY);
    alarm(60);                          /* watchdog: many minutes before */
    prism_reader *r;
    const prism_reader_stats *st = read_all(&r, p, n);
    alarm(0);
    assert_int_equal(st->chunks, 0);
    assert_int_equal(st->damaged, 1);
    assert_int_equal(st->skipped_bytes + st->torn_bytes, n - h);
    prism_reader_free(r);

    /* fed in 4 KiB pieces, as a live tail reads it: the same */
    r = prism_reader_new(NULL, NULL);
    assert_non_null(r);
    alarm(60);
    for (size_t off = 0; off < n; off += 4096) {
        prism_status s = prism_reader_feed(r, p + off, n - off < 4096 ? n - off : 4096);
        assert_true(s == PRISM_OK || s == PRISM_NEED_MORE);
    }
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    alarm(0);
    st = prism_reader_stats_get(r);
    assert_int_equal(st->chunks, 0);
    assert_int_equal(st->skipped_bytes + st->torn_bytes, n - h);
    prism_reader_free(r);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_payload_limit),
        cmocka_unit_test(test_pattern_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
