/*
 * feed_fuzz.c - libFuzzer target for the incremental feed, the explorer's
 * live-tail path: the profile bytes are fed to a prism_reader with the
 * analysis attached in pieces whose lengths the fuzzer chooses, and the
 * analysis is refreshed between pieces (as tui/source.c does after each
 * read), its results looked at, then the end of input is declared and the
 * analysis refreshed once more.
 *
 * Input: 8 control bytes (the seed of the piece lengths: 1 byte to 64 KiB,
 * small ones more often), then the file image.  At most MAX_PIECES refreshes
 * per input; the rest is fed in one piece.
 *
 *   make fuzz                                 (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/feed_replay [FILE|DIR]...    (make test: tests/corpus/feed/)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CONTROL_BYTES 8
#define MAX_PIECES 64

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t piece_len(uint64_t *s)
{
    static const size_t span[] = { 4, 16, 64, 512, 4096, 65536 };
    uint64_t v = next(s);
    return 1 + (size_t)((v >> 8) % span[v % (sizeof span / sizeof *span)]);
}

/* What a pane reads after a refresh. */
static void look(const prism_analysis *a)
{
    size_t n = 0;
    const prism_tree *t = prism_analysis_tree(a);
    (void)t;
    (void)prism_analysis_ops(a, &n);
    (void)prism_analysis_bottlenecks(a, &n);
    (void)prism_analysis_steps(a);
    (void)prism_analysis_memory(a);
    (void)prism_analysis_gpu(a);
    (void)prism_analysis_work(a);
    uint64_t steps = 0;
    (void)prism_analysis_step_denominator(a, &steps);
    size_t threads = prism_analysis_thread_count(a);
    for (size_t i = 0; i < threads && i < 8; i++)
        (void)prism_analysis_thread_tree(a, i, NULL, NULL);
    (void)prism_analysis_span_ns(a);
    (void)prism_analysis_dropped(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    if (size >= CONTROL_BYTES) {
        uint64_t c;
        memcpy(&c, data, sizeof c);
        seed ^= c;
        data += CONTROL_BYTES;
        size -= CONTROL_BYTES;
    }
    if (!seed)
        seed = 1;
    prism_analysis *a;
    prism_reader *r = fuzz_reader_new(&a);
    if (!r)
        return 0;

    prism_status st = PRISM_OK;
    size_t off = 0;
    for (unsigned piece = 0; off < size; piece++) {
        size_t n = piece + 1 < MAX_PIECES ? piece_len(&seed) : size - off;
        if (n > size - off)
            n = size - off;
        st = prism_reader_feed(r, data + off, n);
        off += n;
        prism_analysis_refresh(a);
        look(a);
        if (st != PRISM_OK && st != PRISM_NEED_MORE)
            break;
    }
    (void)fuzz_reader_finish(r, st);
    prism_analysis_refresh(a);
    look(a);
    fuzz_reader_free(a, r);
    return 0;
}
