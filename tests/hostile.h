/*
 * hostile.h - the hostile inputs of issue 16 (header-only, static inline)
 * that format_hostile_test.c and analysis_hostile_test.c check and
 * hostile_files_test.c writes as files: a chunk whose payload is above the
 * limit, a 16-byte pattern framing a candidate every 16 bytes, a sequence
 * number of 2^64-1, dropped totals of 2^64-1, depth 2^32-2, steps and
 * memory samples in reverse order.
 *
 * Include after <cmocka.h>.
 */
#ifndef PRISM_TEST_HOSTILE_H
#define PRISM_TEST_HOSTILE_H

#include <stdint.h>
#include <string.h>
#include <xxhash.h>

#include "pbuild.h"

/* A file header into buf; returns its length. */
static inline size_t hostile_header(uint8_t *buf, size_t cap)
{
    prism_header h = { .producer = "hostile", .host = "test", .rank = -1, .clock = "test" };
    size_t len;
    assert_int_equal(prism_header_encode(&h, buf, cap, &len), PRISM_OK);
    return len;
}

/* A chunk of unknown kind 99 with a `pay`-byte payload and a right
 * checksum at p; returns its length. */
static inline size_t hostile_big_chunk(uint8_t *p, uint32_t pay)
{
    size_t n = 0;
    const uint8_t head[] = { 0x85, 0x18, 99, 0x01, 0x00, 0xd8, 0x18, 0x5a,
                             (uint8_t)(pay >> 24), (uint8_t)(pay >> 16),
                             (uint8_t)(pay >> 8), (uint8_t)pay };
    memcpy(p, head, sizeof head);
    n += sizeof head;
    memset(p + n, 0x80, pay);           /* empty arrays: harmless bytes */
    n += pay;
    uint64_t sum = XXH3_64bits(p, n);
    p[n++] = 0x1b;
    for (int i = 7; i >= 0; i--)
        p[n++] = (uint8_t)(sum >> (8 * i));
    return n;
}

/* body bytes (a multiple of 16) at p of a pattern whose every copy frames
 * a candidate chunk claiming 1 MiB; returns body. */
static inline size_t hostile_pattern(uint8_t *p, size_t body)
{
    const uint32_t claim = 1u << 20;    /* the limit, now and before */
    const uint8_t pat[16] = { 0x85, 0x03, 0x01, 0x00, 0xd8, 0x18, 0x5a,
                              (uint8_t)(claim >> 24), (uint8_t)(claim >> 16),
                              (uint8_t)(claim >> 8), (uint8_t)claim, 0, 0, 0, 0, 0 };
    for (size_t i = 0; i < body; i += 16)
        memcpy(p + i, pat, 16);
    return body;
}

/* Stream 1: a region in a chunk of sequence number 1, then one in the
 * chunk of 2^64-1 (left open).  names: one name. */
static inline void hostile_seq_max(pbuild *b, const char *const *names)
{
    pb_init(b, names, 1, 2);
    pb_thread(b, 1, "main");
    pb_enter(b, 1, 1000, 1);
    pb_exit(b, 1, 2000);
    pb_flush(b);
    b->seq[1] = UINT64_MAX;             /* the next REGIONS chunk of stream 1 */
    pb_enter(b, 1, 3000, 1);
    pb_exit(b, 1, 4000);
}

/* Dropped totals of 2^64-1 (CPU source, regions too) on streams 1 and 2. */
static inline void hostile_dropped(pbuild *b, const char *const *names)
{
    pb_init(b, names, 1, 3);
    for (uint32_t s = 1; s <= 2; s++) {
        prism_dropped d = { .stream = s, .source = PRISM_SOURCE_CPU, .total = UINT64_MAX,
                            .have_regions = true, .regions = UINT64_MAX };
        PB_PUT(b, PRISM_CHUNK_DROPPED, 0, 0, prism_enc_dropped(&b->e, &d));
    }
}

/* chunks REGIONS chunks of stream 1 alternating depth 2^32-2 and 0, a
 * region in each. */
static inline void hostile_depth(pbuild *b, const char *const *names, int chunks)
{
    pb_init(b, names, 1, 4);
    pb_thread(b, 1, "main");
    for (int i = 0; i < chunks; i++) {
        pb_flush(b);
        b->depth[1] = i & 1 ? UINT32_MAX - 1 : 0;
        pb_enter(b, 1, 1000 + 10 * (uint64_t)i, 1);
        pb_exit(b, 1, 1005 + 10 * (uint64_t)i);
    }
}

/* n steps, each with a memory sample, in reverse order when reversed. */
static inline void hostile_steps(pbuild *b, const char *const *names, size_t n, bool reversed)
{
    pb_init(b, names, 1, 5);
    for (size_t k = 0; k < n; k++) {
        size_t i = reversed ? n - 1 - k : k;
        uint64_t t0 = 1000000 + 1000 * (uint64_t)i;
        prism_step s = { t0, t0 + 500 + i % 7, i, 0, i % 3 ? 0 : PRISM_STEP_SAMPLED };
        pb_step(b, &s);
        prism_memory_sample m = { .ts = t0 + 1, .step = i, .rss = (512 + i) << 12,
                                  .cpu_permille = 500 };
        pb_memory(b, &m);
    }
}

#endif
