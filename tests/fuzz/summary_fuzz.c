/*
 * summary_fuzz.c - libFuzzer target for the rank summary reader
 * (analysis/job_parse.c, docs/SUMMARY.md): the bytes are read as a
 * summary, fed to the parser in pieces of a size taken from the input's
 * length (tokens and UTF-8 sequences cut at varying places, the same for a
 * given input every time).  A refusal must carry words and an offset
 * inside the input.  What is read is written back and read again: the
 * round trip must give every field back (the target aborts otherwise);
 * then the summary and its copy are merged into a job of two ranks, and
 * each rank's deltas asked for.
 *
 *   make fuzz FUZZ_TARGETS=summary         (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/summary_replay [FILE|DIR]...   (make test: tests/corpus/summary/)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/job_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1..4096 bytes, from the input's length. */
static size_t piece_size(size_t size)
{
    uint64_t h = (uint64_t)size * 0x9e3779b97f4a7c15ull;
    return 1 + (size_t)(h >> 52);
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "summary_fuzz: %s%s%s\n", what, msg ? ": " : "", msg ? msg : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    prism_rank_summary a, b;
    char msg[256];
    uint64_t off = 0;
    prism_status st = an_sum_read_mem(data, size, piece_size(size), "fuzz", NULL, &a, msg,
                                   sizeof msg, &off);
    if (st != PRISM_OK) {
        if (!msg[0] || off > size || a.steps || a.regions || a.source)
            die("a refusal without words, offset past the end or a summary left", msg);
        return 0;
    }

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        prism_rank_summary_free(&a);
        return 0;
    }
    if (!prism_rank_summary_write(f, &a))
        die("write failed", NULL);
    fclose(f);
    st = an_sum_read_mem((const uint8_t *)buf, len, 0, "other", NULL, &b, msg, sizeof msg, &off);
    if (st != PRISM_OK)
        die("the written summary is refused", msg);
    if (!an_sum_equal(&a, &b))
        die("the round trip changed the summary", NULL);
    free(buf);

    prism_rank_summary *sums = malloc(2 * sizeof *sums);
    if (!sums) {
        prism_rank_summary_free(&a);
        prism_rank_summary_free(&b);
        return 0;
    }
    sums[0] = a;
    sums[1] = b;
    prism_job *j = prism_job_new(sums, 2, NULL, 0, NULL);
    free(sums);
    if (j) {
        prism_job_delta d[8];
        for (size_t r = 0; r < j->nranks; r++)
            prism_job_deltas(j, r, d, 8);
        prism_job_free(j);
    }
    return 0;
}
