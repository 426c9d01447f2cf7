/*
 * reader_worst_bench.c - the reader's worst case per MB (issue 16).
 *
 * Resynchronisation hashes every candidate chunk that frames before it
 * rejects it.  The hostile input is a valid header followed by a 16-byte
 * pattern repeated: every copy frames as a REGIONS chunk whose payload
 * claims `claim` bytes (the checksum item lands on a zero byte of a later
 * copy), so each 16th byte starts a candidate that must be hashed over
 * `claim` bytes, then rejected.  Without a bound that is claim/16 bytes of
 * hashing per input byte; the reader's budget (format/reader.c,
 * docs/FORMAT.md 12.3) keeps it linear.  A normal profile (refgen, 64 KiB
 * chunks, as libcollect writes) is read the same way for comparison.
 *
 * Figures only (median of RUNS after a warm-up): nothing fails on time.
 *
 *   usage: reader_worst_bench [hostile_kib [claim_kib [runs]]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "prism/profile.h"
#include "refgen.h"

typedef struct input {
    uint8_t *data;
    size_t len;
} input;

static uint64_t read_all(void *ctx)
{
    const input *in = ctx;
    prism_reader *r = prism_reader_new(NULL, NULL);
    if (!r)
        return 0;
    prism_reader_feed(r, in->data, in->len);
    prism_reader_finish(r);
    uint64_t v = prism_reader_stats_get(r)->skipped_bytes + prism_reader_stats_get(r)->chunks;
    prism_reader_free(r);
    return v;
}

static input hostile(size_t body, uint32_t claim)
{
    prism_header h = { .producer = "reader_worst_bench", .host = "bench", .rank = -1,
                       .clock = "bench" };
    input in = { malloc(PRISM_MAX_HEADER_BYTES + body + 16), 0 };
    if (!in.data || prism_header_encode(&h, in.data, PRISM_MAX_HEADER_BYTES, &in.len) != PRISM_OK)
        exit(1);
    /* 85 kind=3 stream=1 seq=0 tag(24) bytes(claim, 4-byte length), then
     * zeros: claim is a multiple of 16, so the checksum item of a copy
     * falls on byte 11 of a later copy, a 0 (uint 0). */
    const uint8_t pat[16] = { 0x85, 0x03, 0x01, 0x00, 0xd8, 0x18, 0x5a,
                              (uint8_t)(claim >> 24), (uint8_t)(claim >> 16),
                              (uint8_t)(claim >> 8), (uint8_t)claim, 0, 0, 0, 0, 0 };
    for (size_t i = 0; i < body; i += 16, in.len += 16)
        memcpy(in.data + in.len, pat, 16);
    return in;
}

static input normal(size_t want)
{
    refgen_opts o = refgen_defaults();
    o.chunk_bytes = 65536;
    o.footer = true;
    refgen_out out = { 0 };
    for (o.steps = 64;; o.steps *= 2) {
        free(out.data);
        memset(&out, 0, sizeof out);
        if (refgen_build(&o, &out) != 0)
            exit(1);
        if (out.len >= want || o.steps >= (1u << 20))
            break;
    }
    return (input){ out.data, out.len };
}

static void row(const char *what, const input *in, unsigned runs)
{
    bench_stat t = bench_measure(read_all, (void *)in, runs);
    double mb = (double)in->len / (1024.0 * 1024.0);
    char extra[96];
    snprintf(extra, sizeof extra, "%.2f MiB input, %.3f s per run", mb, t.median);
    printf("  %-30s %10.2f %-12s", what, t.median / mb * 1e3, "ms per MiB");
    bench_row_tail(NULL, extra, NULL);
}

int main(int argc, char **argv)
{
    size_t kib = argc > 1 ? strtoul(argv[1], NULL, 10) : 2048;
    uint32_t claim = (uint32_t)(argc > 2 ? strtoul(argv[2], NULL, 10) : 512) * 1024u;
    unsigned runs = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 3;
    if (claim > PRISM_MAX_CHUNK_PAYLOAD)
        claim = PRISM_MAX_CHUNK_PAYLOAD;
    claim &= ~15u;
    input h = hostile(kib * 1024, claim), n = normal(kib * 1024);
    printf("reader worst case (payload limit %u KiB; candidates claim %u KiB)\n",
           PRISM_MAX_CHUNK_PAYLOAD / 1024, claim / 1024);
    row("normal profile", &n, runs);
    row("hostile 16-byte pattern", &h, runs);
    free(h.data);
    free(n.data);
    return 0;
}
