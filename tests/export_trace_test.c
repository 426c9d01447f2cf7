/*
 * export_trace_test.c - the Chrome trace's numbers and size: times are
 * exact microseconds without trailing zeros; region spans, read back as a
 * reader does (ts + dur added in doubles), nest on every track even far
 * from the origin and when a region ends with the one it holds, at the
 * same ns; the same name written many times reads the same each time; an
 * imported torch.profiler trace exports to a file no larger than the
 * trace (tests/fixtures: kineto, kineto2, gpu).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../cli/cli.h"
#include "json_check.h"
#include "pbuild.h"
#include "prism/import.h"
#include "report_util.h"

static char *chrome(fx *f, const char *path, const char *name)
{
    char out[512], *err;
    path_in(out, f->dir, name);
    const char *argv[] = { "export", path, "--format", "chrome-trace", "-o", out, NULL };
    if (run_cmd(cmd_export, argv, NULL, &err) != EXIT_OK)
        fail_msg("export %s: %s", path, err);
    free(err);
    char *text = slurp(out, NULL);
    assert_non_null(text);
    size_t where;
    if (!json_valid(text, strlen(text), &where, NULL))
        fail_msg("invalid JSON at byte %zu: %.60s", where, text + where);
    return text;
}

typedef struct span {
    double s, e;
    uint64_t tid;
} span;

static int by_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    return a->e > b->e ? -1 : a->e < b->e;      /* the longer first */
}

/* A number's text at p: digits and at most one '.'; up to 3 decimals
 * (exact ns) with no trailing zero, or more for the rare dur that must
 * end exactly with a span it holds (export_trace.c: dur_between). */
static void plain_number(const char *p)
{
    size_t n = strspn(p, "0123456789.");
    const char *dot = memchr(p, '.', n);
    assert_true(n > 0 && p[0] != '.');
    if (dot && n - (size_t)(dot - p) - 1 <= 3)
        assert_true(p[n - 1] != '0' && p[n - 1] != '.');
}

/* Every region span of the text ("ph":"X" without cat), in doubles. */
static span *region_spans(const char *j, size_t *n)
{
    size_t cap = 1024;
    span *v = malloc(cap * sizeof *v);
    assert_non_null(v);
    *n = 0;
    for (const char *p = j; (p = strstr(p, "\"ph\":\"X\",\"ts\":")); p++) {
        const char *ts = p + 14, *dur = strstr(ts, ",\"dur\":") + 7, *tid = strstr(dur, "\"tid\":");
        plain_number(ts);
        plain_number(dur);
        double s = strtod(ts, NULL), d = strtod(dur, NULL);
        if (*n == cap)
            assert_non_null(v = realloc(v, (cap *= 2) * sizeof *v));
        v[(*n)++] = (span){ s, s + d, strtoull(tid + 6, NULL, 10) };
    }
    return v;
}

/* Nested regions on two threads, 10^15 ns (11.6 days) from the origin:
 * parents that end with their last child at the same ns, siblings that
 * touch, durations at every ns. */
static void far_profile(const char *path)
{
    static const char *const names[] = { "outer", "mid", "inner" };
    pbuild b;
    pb_init(&b, names, 3, 7);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "other");
    for (uint32_t s = 1; s <= 2; s++) {
        uint64_t t = 1000000000000000ull + s * 333;
        for (int i = 0; i < 2000; i++) {
            uint64_t r = b.rng = b.rng * 6364136223846793005ull + 1442695040888963407ull;
            pb_enter(&b, s, t, 1);
            pb_enter(&b, s, t + (r >> 60), 2);
            uint64_t inner = t + 17 + (r >> 50) % 997;
            pb_enter(&b, s, inner, 3);
            uint64_t end = inner + 1 + (r >> 40) % 4999;
            uint64_t mid = end + ((r >> 20) & 1), outer = mid + ((r >> 21) & 1);
            pb_exit(&b, s, end);                /* often all three at once */
            pb_exit(&b, s, mid);
            pb_exit(&b, s, outer);
            t = outer + ((r >> 22) & 1) * 1000;
        }
    }
    pb_flush(&b);
    FILE *w = fopen(path, "wb");
    assert_non_null(w);
    assert_int_equal(fwrite(b.data, 1, b.len, w), b.len);
    assert_int_equal(fclose(w), 0);
    free(b.data);
}

static void spans_nest_as_a_reader_adds_them(void **state)
{
    fx *f = *state;
    char p[512];
    far_profile(path_in(p, f->dir, "far.cbor"));
    char *j = chrome(f, p, "far.json");
    size_t n;
    span *v = region_spans(j, &n);
    assert_int_equal(n, 2 * 2000 * 3);
    qsort(v, n, sizeof *v, by_start);
    span stack[8];
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        while (depth && (stack[depth - 1].tid != v[i].tid || stack[depth - 1].e <= v[i].s))
            depth--;
        if (depth && v[i].e > stack[depth - 1].e)
            fail_msg("span [%.17g, %.17g] overlaps [%.17g, %.17g]", v[i].s, v[i].e,
                     stack[depth - 1].s, stack[depth - 1].e);
        assert_true(depth < 8);
        stack[depth++] = v[i];
    }
    free(v);
    free(j);
}

/* The names are escaped once and copied: the same bytes every time, also
 * for many names. */
static void names_read_the_same_every_time(void **state)
{
    fx *f = *state;
    char p[512];
    refgen_opts o = refgen_defaults();
    o.steps = 40;
    fixture(path_in(p, f->dir, "ref.cbor"), &o);
    char *j = chrome(f, p, "ref.json");
    size_t attention = count_str(j, "{\"name\":\"attention\",\"ph\":\"X\",\"ts\":");
    assert_true(attention > 0);
    assert_int_equal(attention, count_str(j, "\"attention\""));
    free(j);
}

/* A string id given a new text mid-file (the reader keeps the last): the
 * events after it carry the new text, not the cached escape of the old. */
static void a_redefined_name_is_written_anew(void **state)
{
    fx *f = *state;
    char p[512];
    static const char *const first[] = { "alpha \"1\"" };
    pbuild b;
    pb_init(&b, first, 1, 1);
    pb_thread(&b, 1, "main");
    pb_enter(&b, 1, 1000, 1);
    pb_exit(&b, 1, 2000);
    pb_begin(&b, PRISM_CHUNK_STRINGS, 0, 1);    /* id 1 again */
    assert_int_equal(prism_enc_string(&b.e, "beta\t2", 6), PRISM_OK);
    pb_flush(&b);
    pb_enter(&b, 1, 3000, 1);
    pb_exit(&b, 1, 4000);
    pb_flush(&b);
    FILE *w = fopen(path_in(p, f->dir, "renamed.cbor"), "wb");
    assert_non_null(w);
    assert_int_equal(fwrite(b.data, 1, b.len, w), b.len);
    assert_int_equal(fclose(w), 0);
    free(b.data);
    char *j = chrome(f, p, "renamed.json");
    assert_non_null(strstr(j, "{\"name\":\"alpha \\\"1\\\"\",\"ph\":\"X\",\"ts\":1,\"dur\":1,"));
    assert_non_null(strstr(j, "{\"name\":\"beta\\t2\",\"ph\":\"X\",\"ts\":3,\"dur\":1,"));
    free(j);
}

/* Bytes of a file, through zlib when it is gzip'd. */
static long json_bytes(const char *path)
{
    gzFile g = gzopen(path, "rb");
    assert_non_null(g);
    char buf[1 << 15];
    long n = 0;
    int k;
    while ((k = gzread(g, buf, sizeof buf)) > 0)
        n += k;
    gzclose(g);
    return n;
}

static void imported_traces_shrink(void **state)
{
    fx *f = *state;
    static const char *const traces[] = {
        "tests/fixtures/kineto/basic.json", "tests/fixtures/kineto/gpu_stall.json",
        "tests/fixtures/kineto/messy.json", "tests/fixtures/kineto2/workers.pt.trace.json.gz",
        "tests/fixtures/kineto2/leak.pt.trace.json.gz",
        "tests/fixtures/kineto2/nostack.pt.trace.json.gz",
        "tests/fixtures/gpu/torch_amp_trace.json.gz",
    };
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        char *j = chrome(f, traces[i], "trace.json");
        long in = json_bytes(traces[i]), out = (long)strlen(j);
        if (out > in)
            fail_msg("%s: %ld bytes of JSON in, %ld out", traces[i], in, out);
        assert_true(count_str(j, "\"ph\":\"X\",\"ts\":") > 0);
        free(j);
    }
}

int main(void)
{
    prism_import_register();
    const struct CMUnitTest tests[] = {
        FX_TEST(spans_nest_as_a_reader_adds_them),
        FX_TEST(names_read_the_same_every_time),
        FX_TEST(a_redefined_name_is_written_anew),
        FX_TEST(imported_traces_shrink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
