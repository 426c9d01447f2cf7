/*
 * import_fuzz.c - libFuzzer target for the trace importer: the bytes go to a
 * prism_reader with the analysis callbacks attached, the path every
 * prism-top command takes (the reader hands JSON and gzip to the importer by
 * content, anything else to the CBOR reader), then the analysis is brought
 * up to date and written as `analyze --format json` would write it.
 *
 * The input is fed in pieces of a size taken from its length, so that
 * tokens, UTF-8 sequences and gzip blocks are cut at varying places, the
 * same for a given input every time (a crash replays).  What was delivered
 * is analysed whatever the status; the JSON report is written when the
 * input was read (as analyze does).
 *
 *   make fuzz                           (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/import_replay [FILE|DIR]...   (make test: the corpus)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_common.h"
#include "prism/import.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1..4096 bytes: small pieces for small inputs, never a piece per byte of a
 * big one. */
static size_t piece_size(size_t size)
{
    uint64_t h = (uint64_t)size * 0x9e3779b97f4a7c15ull;
    size_t p = 1 + (size_t)(h >> 52);            /* 1..4096 */
    if (size > 65536 && p < 512)
        p = 512;
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    prism_import_register();
    prism_analysis *a;
    prism_reader *r = fuzz_reader_new(&a);
    if (!r)
        return 0;

    prism_status st = PRISM_OK;
    size_t piece = piece_size(size);
    for (size_t off = 0; off < size; off += piece) {
        size_t n = size - off < piece ? size - off : piece;
        st = prism_reader_feed(r, data + off, n);
        if (st != PRISM_OK && st != PRISM_NEED_MORE)
            break;
    }
    st = fuzz_reader_finish(r, st);
    const char *msg = NULL;
    uint64_t at = 0;
    if (st != PRISM_OK) {
        prism_reader_error(r, &msg, &at);
        if (sink && msg)
            fprintf(sink, "%s at byte %llu\n", msg, (unsigned long long)at);
    }
    /* the explorer refreshes while a file loads, whatever comes */
    prism_analysis_refresh(a);
    if (sink && st == PRISM_OK) {
        analyze_write_json(sink, "fuzz", a);
        fflush(sink);
    }
    fuzz_reader_free(a, r);
    return 0;
}
