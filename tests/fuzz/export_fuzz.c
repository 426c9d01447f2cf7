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

#include "../json_check.h"
#include "escape.h"
#include "fuzz_common.h"
#include "prism/import.h"
#include "prism/job.h"
#include "reports.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, size_t at, const char *why)
{
    fprintf(stderr, "export_fuzz: the %s output: %s at byte %zu\n", what, why, at);
    abort();
}

/* Aborts when s[0..n) holds a raw control, bidi or separator character,
 * or invalid UTF-8. */
static void check_chars(const char *what, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            die(what, i, "a raw C0 control or DEL");
        if (c < 0x80) {
            i++;
            continue;
        }
        unsigned char t[4] = { 0 };
        memcpy(t, p + i, n - i < 4 ? n - i : 4);
        uint32_t cp;
        size_t len = esc_utf8_decode(t, &cp);
        if (!len || len > n - i)
            die(what, i, "invalid UTF-8");
        if (esc_cp_unsafe(cp))
            die(what, i, "a raw C1, bidi control or line/paragraph separator");
        i += len;
    }
}

typedef struct memout {
    char *buf;
    size_t len;
    FILE *f;
} memout;

static bool mem_open(memout *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    return m->f != NULL;
}

/* Closes m; checks its characters, and that it is JSON when json and
 * written whole (ok); frees it. */
static void mem_done(memout *m, const char *what, bool json, bool ok)
{
    fclose(m->f);
    check_chars(what, m->buf, m->len);
    size_t where;
    if (json && ok && !json_valid(m->buf, m->len, &where, NULL))
        die(what, where, "not JSON");
    free(m->buf);
}

static void analysis_outputs(const prism_analysis *a)
{
    memout m;
    if (mem_open(&m)) {
        analyze_write_txt(m.f, "fuzz.cbor", a);
        mem_done(&m, "analyze", false, true);
    }
    if (mem_open(&m))
        mem_done(&m, "analyze --format json", true, analyze_write_json(m.f, "fuzz", a));
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
    prism_import_register();
    prism_analysis *a;
    prism_reader *r = fuzz_reader_new(&a);
    if (!r)
        return 0;
    prism_status st = prism_reader_feed(r, data, size);
    (void)fuzz_reader_finish(r, st);
    prism_analysis_refresh(a);
    analysis_outputs(a);
    fuzz_reader_free(a, r);

    const char *path = as_file(data, size);
    if (path)
        file_outputs(path);
    return 0;
}
