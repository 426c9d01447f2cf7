/*
 * compare_fuzz.c - libFuzzer target for the reader, the whole analysis and
 * the report writers: the input is read as a profile file image (the trace
 * importer registered, as in prism-top), the analysis brought up to date,
 * compared with itself (prism_compare_new(a, a)) and gated against itself
 * twice (prism_gate_new), and every report written to a memory FILE:
 * analyze (text and JSON), compare (text and JSON), the gate (text,
 * markdown and JSON), the CSV, folded and JSON exports.
 *
 * The text outputs are then checked for a raw escape or bell character: a
 * name from the profile reaches them only through present/escape.h, so one
 * there is a finding (the target aborts).
 *
 *   make fuzz                                  (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/compare_replay [FILE|DIR]...  (make test: tests/corpus/compare/)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "prism/import.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts when the text holds a terminal control: ESC, BEL or a C1 CSI. */
static void check_text(const char *what, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool csi = c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] == 0x9b;
        if (c == 0x1b || c == 0x07 || csi) {
            fprintf(stderr, "compare_fuzz: raw control 0x%02x at byte %zu of the %s output\n",
                    c, i, what);
            abort();
        }
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

/* Closes m, checks the text when what is not NULL, frees it. */
static void mem_done(memout *m, const char *what)
{
    fclose(m->f);
    if (what)
        check_text(what, m->buf, m->len);
    free(m->buf);
}

static void reports(const prism_analysis *a)
{
    memout m;
    if (mem_open(&m)) {
        analyze_write_txt(m.f, "fuzz.cbor", a);
        mem_done(&m, "analyze");
    }
    if (mem_open(&m)) {
        (void)analyze_write_json(m.f, "fuzz", a);
        mem_done(&m, NULL);
    }
    if (mem_open(&m)) {
        (void)export_csv(m.f, a);
        mem_done(&m, "CSV");
    }
    if (mem_open(&m)) {
        (void)export_folded(m.f, a);
        mem_done(&m, NULL);
    }
    if (mem_open(&m)) {
        (void)export_json(m.f, "fuzz", a);
        mem_done(&m, NULL);
    }
    prism_compare *c = prism_compare_new(a, a);
    if (!c)
        return;
    if (mem_open(&m)) {
        compare_write_txt(m.f, "a", "b", a, a, c, 20);
        mem_done(&m, "compare");
    }
    if (mem_open(&m)) {
        (void)compare_write_json(m.f, "a", "b", a, a, c);
        mem_done(&m, NULL);
    }
    prism_compare_free(c);
    /* the gate: the file against two baselines, itself twice (the noise
     * between baselines is worked out too) */
    const prism_analysis *base[2] = { a, a };
    char *files[3] = { (char *)"b1", (char *)"b2", (char *)"new" };
    prism_gate *g = prism_gate_new(base, 2, a, NULL, NULL, 0);
    if (!g)
        return;
    if (mem_open(&m)) {
        gate_write_txt(m.f, files, 3, a, g, 0);
        mem_done(&m, "gate");
    }
    if (mem_open(&m)) {
        gate_write_md(m.f, files, 3, a, g, 0);
        mem_done(&m, "gate markdown");
    }
    if (mem_open(&m)) {
        (void)gate_write_json(m.f, files, 3, a, g);
        mem_done(&m, NULL);
    }
    prism_gate_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    prism_reader *r;
    prism_analysis *a = fuzz_read_all(data, size, &r);
    if (!a)
        return 0;
    reports(a);
    fuzz_reader_free(a, r);
    return 0;
}
