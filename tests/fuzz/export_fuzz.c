/*
 * export_fuzz.c - libFuzzer target for the one escaping rule (issue 32):
 * the input, a profile file image or a torch.profiler trace (the importer
 * registered, as in prism-top), is written to a temporary file and run
 * through every output that carries names from it, into memory:
 *
 *   JSON  analyze --format json, export --format json, compare --format
 *         json (the analysis with itself), export --format chrome-trace
 *         and speedscope (streamed from the file), analyze --summary (the
 *         rank summary) and the job report of two ranks of it
 *   text  analyze, compare, the job report, export --format csv and folded
 *
 * Each output must hold no raw character a terminal or a viewer acts on:
 * no C0 control but the framing's \n and \t, no DEL, no C1 control (U+009B
 * is a one-byte CSI), no bidi control or line/paragraph separator
 * (esc_cp_unsafe), and no byte that starts no valid UTF-8 sequence.  Each
 * JSON output that was written whole must be JSON (tests/json_check.h).
 * A breach aborts, naming the output and the byte.
 *
 *   make fuzz FUZZ_TARGETS=export              (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/export_replay [FILE|DIR]...  (make test: tests/corpus/export/)
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#define OUT_CHECK_NAME "export_fuzz"
#include "out_check.h"
#include "prism/import.h"
#include "prism/job.h"
#include "reports.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void analysis_outputs(const prism_analysis *a)
{
    memout m;
    if (mem_open(&m)) {
        analyze_write_txt(m.f, "fuzz.cbor", a);
        mem_done(&m, "analyze", false, true);
    }
    if (mem_open(&m))
        mem_done(&m, "analyze --format json", true, analyze_write_json(m.f, "fuzz", a));
    if (mem_open(&m))                   /* no raw control in the page either */
        mem_done(&m, "analyze --format html", false, analyze_write_html(m.f, "fuzz", a));
    if (mem_open(&m))
        mem_done(&m, "CSV", false, export_csv(m.f, a));
    if (mem_open(&m))
        mem_done(&m, "folded", false, export_folded(m.f, a));
    if (mem_open(&m))
        mem_done(&m, "export --format json", true, export_json(m.f, "fuzz", a));
    prism_compare *c = prism_compare_new(a, a);
    if (!c)
        return;
    if (mem_open(&m)) {
        compare_write_txt(m.f, "a", "b", a, a, c, 20);
        mem_done(&m, "compare", false, true);
    }
    if (mem_open(&m))
        mem_done(&m, "compare --format html", false,
                 compare_write_html(m.f, "a", "b", a, a, c));
    if (mem_open(&m))
        mem_done(&m, "compare --format json", true, compare_write_json(m.f, "a", "b", a, a, c));
    prism_compare_free(c);
}

/* The streamed exports, the rank summary and a job of two ranks of the
 * file at path. */
static void file_outputs(const char *path)
{
    memout m;
    if (mem_open(&m))
        mem_done(&m, "chrome-trace", true, export_chrome_trace(path, m.f) == EXIT_OK);
    if (mem_open(&m))
        mem_done(&m, "speedscope", true, export_speedscope(path, m.f) == EXIT_OK);

    prism_rank_summary *sums = calloc(2, sizeof *sums);
    if (!sums)
        return;
    char msg[256];
    uint64_t off;
    size_t n = 0;
    for (; n < 2; n++)
        if (prism_rank_summary_from_file(path, &sums[n], msg, sizeof msg, &off) != PRISM_OK)
            break;
    if (n == 2 && mem_open(&m))
        mem_done(&m, "analyze --summary", true, prism_rank_summary_write(m.f, &sums[0]));
    if (n < 2) {
        for (size_t i = 0; i < n; i++)
            prism_rank_summary_free(&sums[i]);
        free(sums);
        return;
    }
    sums[1].rank = sums[0].rank + 1;
    prism_job *j = prism_job_new(sums, 2, NULL, 0, NULL);
    free(sums);
    if (!j)
        return;
    if (mem_open(&m)) {
        job_write_txt(m.f, j);
        mem_done(&m, "job", false, true);
    }
    if (mem_open(&m))
        mem_done(&m, "job --format json", true, job_write_json(m.f, j, true));
    prism_job_free(j);
}

/* The input as a file (the streamed exports and the summary read paths):
 * one temporary file per process, rewritten for each input. */
static const char *as_file(const uint8_t *data, size_t size)
{
    static char path[64];
    static int fd = -1;
    if (fd < 0) {
        snprintf(path, sizeof path, "/tmp/prism-export-fuzz-XXXXXX");
        fd = mkstemp(path);
        if (fd < 0)
            return NULL;
        unlink(path);               /* /proc/self/fd/N names it while open */
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return NULL;
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    prism_reader *r;
    prism_analysis *a = fuzz_read_all(data, size, &r);
    if (!a)
        return 0;
    analysis_outputs(a);
    fuzz_reader_free(a, r);

    const char *path = as_file(data, size);
    if (path)
        file_outputs(path);
    return 0;
}
