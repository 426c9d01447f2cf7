/*
 * job_fuzz.c - libFuzzer target for jobs of several ranks (issue 32: a job
 * of empty ranks reached qsort(NULL, 0), ranks x steps took gigabytes):
 * the input is cut at each line "--rank--" into up to 8 rank summaries
 * (docs/SUMMARY.md), each read as analysis/job_parse.c reads a file (those
 * refused become the job's failures, with their words and offset); the job
 * is merged, every rank's deltas asked for, and the text and JSON job
 * reports written into memory and checked (out_check.h): no raw control,
 * bidi or separator character, valid UTF-8, and JSON that parses.
 *
 *   make fuzz FUZZ_TARGETS=job          (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/job_replay [FILE|DIR]...   (make test: tests/corpus/job/)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/job_io.h"
#include "prism/job.h"
#include "reports.h"
#define OUT_CHECK_NAME "job_fuzz"
#include "out_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RANKS 8
static const char cut[] = "\n--rank--\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    prism_rank_summary *sums = calloc(MAX_RANKS, sizeof *sums);
    prism_job_failure *bad = calloc(MAX_RANKS, sizeof *bad);
    if (!sums || !bad) {
        free(sums);
        free(bad);
        return 0;
    }
    size_t ns = 0, nb = 0, at = 0;
    for (int k = 0; k < MAX_RANKS && at <= size; k++) {
        const uint8_t *end = k + 1 < MAX_RANKS
                                 ? memmem(data + at, size - at, cut, sizeof cut - 1) : NULL;
        size_t len = end ? (size_t)(end - (data + at)) : size - at;
        char name[32], msg[256];
        snprintf(name, sizeof name, "rank%d.sum", k);
        uint64_t off = 0;
        prism_status st = an_sum_read_mem(data + at, len, 0, name, NULL, &sums[ns], msg,
                                          sizeof msg, &off);
        if (st == PRISM_OK) {
            ns++;
        } else {
            if (!msg[0] || off > len)
                die(name, (size_t)off, "a refusal without words or past its end");
            bad[nb].source = strdup(name);
            snprintf(bad[nb].message, sizeof bad[nb].message, "%s", msg);
            bad[nb].offset = off;
            bad[nb].status = st;
            nb += bad[nb].source != NULL;
        }
        if (!end)
            break;
        at += len + sizeof cut - 1;
    }
    prism_job *j = prism_job_new(sums, ns, bad, nb, NULL);
    free(sums);
    if (!j)
        return 0;
    prism_job_delta d[8];
    for (size_t r = 0; r < j->nranks; r++)
        prism_job_deltas(j, r, d, 8);
    memout m;
    if (mem_open(&m)) {
        job_write_txt(m.f, j);
        mem_done(&m, "job report", false, true);
    }
    if (mem_open(&m))
        mem_done(&m, "job JSON", true, job_write_json(m.f, j, true));
    prism_job_free(j);
    return 0;
}
