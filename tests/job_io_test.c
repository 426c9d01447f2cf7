/*
 * job_io_test.c - the rank summary file (analysis/job_io.c, job_parse.c,
 * docs/SUMMARY.md): write -> read gives every field back (names with
 * controls, quotes, backslashes; invalid UTF-8 as U+FFFD), however the
 * bytes are cut; every prefix of a file is refused or read, never a crash;
 * a table of hostile summaries, each refused with its status, the byte
 * offset it names and its words; the limits (regions, steps, size, a 20 MB
 * string, a 100-digit number); forward compatibility (unknown keys,
 * duplicates); the probe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analysis/job_io.h"

/* ---- helpers ---- */

static prism_rank_summary sample(void)
{
    prism_rank_summary s = {
        .rank = 3, .source = strdup("runs/rank3.cbor"), .host = strdup("node-07"),
        .pid = 4242, .start_unix_ns = UINT64_MAX, .thread = strdup("main"),
        .events = 123456, .dropped = 7, .span_ns = 9000000000ull, .complete = true,
        .steps_total = 40, .gpu_kernel_ns = 11, .nccl_kernel_ns = 12, .gpu_busy_ns = 13,
        .gpu_span_ns = 14,
    };
    s.nsteps = 3;
    s.steps = calloc(3, sizeof *s.steps);
    for (size_t i = 0; i < 3; i++)
        s.steps[i] = (prism_rank_step){ 2 * i + 1, 1000000 + i, 1000 * i };
    static const char *const names[] = { "step", "all\"re\\duce\n\t\x01\x7f", "caf\xc3\xa9",
                                         "layer.0" };
    s.nregions = 4;
    s.regions = calloc(4, sizeof *s.regions);
    for (size_t i = 0; i < 4; i++) {
        prism_rank_region *r = &s.regions[i];
        r->name = strdup(names[i]);
        r->path_hash = 0x0123456789abcdefull + i;
        r->parent_hash = i ? 0x0123456789abcdefull : 0;
        r->depth = i ? 1 : 0;
        r->calls = 10 + i;
        r->total_ns = 100 + i;
        r->self_ns = 50 + i;
        r->in_step_ns = 90 + i;
        r->cpu_known_ns = 80 + i;
        r->oncpu_ns = 70 + i;
        r->offcpu_ns = 10 + i;
        r->gpu_wait_ns = i;
        r->wait = (uint32_t)(i % 4);
    }
    return s;
}

/* s written into a malloc'ed buffer. */
static char *to_mem(const prism_rank_summary *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_true(prism_rank_summary_write(f, s));
    fclose(f);
    return buf;
}

static prism_status rd(const char *json, size_t n, const sum_limits *lim, prism_rank_summary *out,
                       char *msg, uint64_t *off)
{
    return an_sum_read_mem((const uint8_t *)json, n, 0, "mem", lim, out, msg, 256, off);
}

/* ---- round trip ---- */

static void test_roundtrip(void **state)
{
    (void)state;
    prism_rank_summary s = sample(), back;
    size_t len;
    char *json = to_mem(&s, &len), msg[256];
    uint64_t off;
    assert_ptr_equal(strstr(json, "{\"prism_summary\": 1,"), json);
    static const size_t pieces[] = { 1, 2, 7, 64, 0 };
    for (size_t p = 0; p < 5; p++) {
        assert_int_equal(an_sum_read_mem((const uint8_t *)json, len, pieces[p], "x", NULL, &back,
                                      msg, sizeof msg, &off), PRISM_OK);
        assert_true(an_sum_equal(&s, &back));
        prism_rank_summary_free(&back);
    }
    /* through a file too */
    char path[] = "/tmp/job_io_testXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, len), (ssize_t)len);
    close(fd);
    assert_int_equal(prism_rank_summary_read(path, &back, msg, sizeof msg, &off), PRISM_OK);
    assert_true(an_sum_equal(&s, &back));
    prism_rank_summary_free(&back);
    unlink(path);
    free(json);
    prism_rank_summary_free(&s);
}

/* Invalid UTF-8 becomes U+FFFD, a byte each; no rank, no regions, no
 * strings also round trip. */
static void test_roundtrip_lossy(void **state)
{
    (void)state;
    prism_rank_summary s = sample(), back;
    free(s.regions[3].name);
    s.regions[3].name = strdup("bad\xff\xfe|\xe2\x82");
    s.rank = -1;
    free(s.host);
    s.host = NULL;
    size_t len;
    char *json = to_mem(&s, &len), msg[256];
    uint64_t off;
    assert_non_null(strstr(json, "\"bad\\ufffd\\ufffd|\\ufffd\\ufffd\""));
    assert_int_equal(rd(json, len, NULL, &back, msg, &off), PRISM_OK);
    assert_string_equal(back.regions[3].name,
                        "bad\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(back.host, "");
    assert_int_equal(back.rank, -1);
    prism_rank_summary_free(&back);
    free(json);

    prism_rank_summary_free(&s);
    memset(&s, 0, sizeof s);
    s.rank = -1;
    json = to_mem(&s, &len);
    assert_int_equal(rd(json, len, NULL, &back, msg, &off), PRISM_OK);
    assert_int_equal(back.nsteps, 0);
    assert_int_equal(back.nregions, 0);
    assert_string_equal(back.source, "");        /* written as "" */
    prism_rank_summary_free(&back);
    free(json);
}

static void test_write_error(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        skip();
    prism_rank_summary s = sample();
    assert_false(prism_rank_summary_write(f, &s));
    fclose(f);
    prism_rank_summary_free(&s);
}

/* Every prefix of a file: refused with an offset inside it, or (the file
 * without its final newline) read. */
static void test_prefixes(void **state)
{
    (void)state;
    prism_rank_summary s = sample(), back;
    size_t len;
    char *json = to_mem(&s, &len), msg[256];
    uint64_t off;
    for (size_t n = 0; n < len; n++) {
        char *cut = malloc(n ? n : 1);
        memcpy(cut, json, n);
        prism_status st = rd(cut, n, NULL, &back, msg, &off);
        if (n == len - 1) {
            assert_int_equal(st, PRISM_OK);
            prism_rank_summary_free(&back);
        } else {
            assert_int_not_equal(st, PRISM_OK);
            assert_true(off <= n);
            assert_true(msg[0] != '\0');
            assert_null(back.regions);
            assert_null(back.steps);
        }
        free(cut);
    }
    free(json);
    prism_rank_summary_free(&s);
}

/* ---- hostile summaries ---- */

#define HEAD "{\"prism_summary\": 1, "
#define OK_TAIL "\"steps\": [], \"regions\": []}"

typedef struct bad_case {
    const char *json;
    prism_status st;
    const char *at;             /* the offset: where this first occurs ...  */
    int delta;                  /* ... plus this (NULL: the end of input)   */
    const char *words;          /* in the message                           */
} bad_case;

static const bad_case bad[] = {
    { HEAD "\"steps\": {}, \"regions\": []}", PRISM_E_NOT_PRISM, "{}", 0,
      "expected an array for \"steps\"" },
    { HEAD "\"steps\": [], \"regions\": \"x\"}", PRISM_E_NOT_PRISM, "\"x\"", 2,
      "expected an array for \"regions\"" },
    { HEAD "\"pid\": 1e400, " OK_TAIL, PRISM_E_NOT_PRISM, "1e400", 4, "\"pid\" must be" },
    { HEAD "\"pid\": -1, " OK_TAIL, PRISM_E_NOT_PRISM, "-1", 1, "0..2^64-1" },
    { HEAD "\"pid\": 18446744073709551616, " OK_TAIL, PRISM_E_NOT_PRISM, "1844", 19,
      "(not 18446744073709551616)" },
    { HEAD "\"pid\": 1.5, " OK_TAIL, PRISM_E_NOT_PRISM, "1.5", 2, "\"pid\"" },
    { HEAD "\"pid\": null, " OK_TAIL, PRISM_E_NOT_PRISM, "null", 3,
      "expected an integer for \"pid\"" },
    { HEAD "\"rank\": -2, " OK_TAIL, PRISM_E_NOT_PRISM, "-2", 1, "-1..2^63-1" },
    { HEAD "\"complete\": 1, " OK_TAIL, PRISM_E_NOT_PRISM, "1, \"steps", 0, "true or false" },
    { HEAD "\"host\": 7, " OK_TAIL, PRISM_E_NOT_PRISM, "7", 0, "expected a string for \"host\"" },
    { HEAD "\"host\": \"a\\u0000b\", " OK_TAIL, PRISM_E_NOT_PRISM, "b\",", 1, "U+0000" },
    { HEAD "\"host\": \"\\udc00\", " OK_TAIL, PRISM_E_NOT_PRISM, "0\",", 1, "surrogate" },
    { HEAD "\"host\": \"\xff\", " OK_TAIL, PRISM_E_NOT_PRISM, "\xff", 0, "not valid JSON" },
    { "{\"prism_summary\": 2, " OK_TAIL, PRISM_E_VERSION, "2", 0, "version 2" },
    { "{\"prism_summary\": 0, " OK_TAIL, PRISM_E_NOT_PRISM, "0", 0, "version from 1" },
    { "{\"prism_summary\": \"1\", " OK_TAIL, PRISM_E_NOT_PRISM, "1\"", 1,
      "expected an integer for \"prism_summary\"" },
    { "hello", PRISM_E_NOT_PRISM, "h", 0, "not valid JSON" },
    { "[1]", PRISM_E_NOT_PRISM, "[", 0, "expected a JSON object" },
    { "42", PRISM_E_NOT_PRISM, "2", 0, "expected a JSON object" },
    { "   ", PRISM_E_NOT_PRISM, NULL, 0, "no JSON value" },
    { "", PRISM_E_EMPTY, NULL, 0, "empty" },
    { HEAD OK_TAIL " x", PRISM_E_NOT_PRISM, "x", 0, "trailing garbage" },
    { HEAD "\"steps\": [], ", PRISM_E_NOT_PRISM, NULL, 0, "cut off" },
    { "{\"steps\": [], \"regions\": []}", PRISM_E_NOT_PRISM, "]}", 1,
      "no \"prism_summary\" key" },
    { HEAD "\"regions\": []}", PRISM_E_NOT_PRISM, "]}", 1, "no \"steps\" array" },
    { HEAD "\"steps\": []}", PRISM_E_NOT_PRISM, "]}", 1, "no \"regions\" array" },
    { HEAD "\"x\": [[[[[[[[1]]]]]]]], " OK_TAIL, PRISM_E_LIMIT, "[[[[[[[[1", 7, "deeper than 8" },
    { HEAD "\"steps\": [1], \"regions\": []}", PRISM_E_NOT_PRISM, "1]", 0,
      "expected [index, step_ns, wait_ns]" },
    { HEAD "\"steps\": [[1, 2]], \"regions\": []}", PRISM_E_NOT_PRISM, "2]", 1,
      "[index, step_ns, wait_ns]" },
    { HEAD "\"steps\": [[1, 2, 0, 4]], \"regions\": []}", PRISM_E_NOT_PRISM, "4]", 0,
      "[index, step_ns, wait_ns]" },
    { HEAD "\"steps\": [[1, 2, \"0\"]], \"regions\": []}", PRISM_E_NOT_PRISM, "0\"", 1,
      "expected [index" },
    { HEAD "\"steps\": [[2, 5, 0], [1, 5, 0]], \"regions\": []}", PRISM_E_NOT_PRISM,
      "0]]", 1, "\"steps\"[1]: indices must ascend" },
    { HEAD "\"steps\": [[1, 5, 6]], \"regions\": []}", PRISM_E_NOT_PRISM, "6]", 1,
      "wait_ns <= step_ns" },
    { HEAD "\"steps\": [[1, 0, 0]], \"regions\": []}", PRISM_E_NOT_PRISM, "0, 0]", 4,
      "0 < step_ns" },
    { HEAD "\"steps\": [], \"regions\": [7]}", PRISM_E_NOT_PRISM, "7", 0,
      "expected an object in \"regions\"" },
    { HEAD "\"steps\": [], \"regions\": [{\"path_hash\": \"0000000000000001\"}]}",
      PRISM_E_NOT_PRISM, "\"}", 1, "\"regions\"[0] has no \"name\"" },
    { HEAD "\"steps\": [], \"regions\": [{\"name\": \"a\"}]}", PRISM_E_NOT_PRISM, "\"}", 1,
      "has no \"path_hash\"" },
    { HEAD "\"steps\": [], \"regions\": [{\"name\": \"a\", \"path_hash\": \"12xz\"}]}",
      PRISM_E_NOT_PRISM, "xz\"", 2, "16 hex digits for \"path_hash\" in \"regions\"[0]" },
    { HEAD "\"steps\": [], \"regions\": [{\"name\": \"a\", \"path_hash\": \"0000000000000000\"}]}",
      PRISM_E_NOT_PRISM, "\"}", 1, "path_hash 0 is reserved" },
    { HEAD "\"steps\": [], \"regions\": [{\"name\": \"a\", \"path_hash\": \"00000000000000aa\"}, "
      "{\"name\": \"b\", \"path_hash\": \"00000000000000AA\"}]}", PRISM_E_NOT_PRISM, "AA\"}", 3,
      "\"regions\"[1]: path_hash 00000000000000aa again" },
    { HEAD "\"steps\": [], \"regions\": [{\"name\": \"a\", \"path_hash\": \"00000000000000aa\", "
      "\"wait\": \"lunch\"}]}", PRISM_E_NOT_PRISM, "lunch", 5, "\"wait\" must be" },
    { HEAD "\"steps\": [], \"regions\": [{\"name\": \"a\", \"path_hash\": \"00000000000000aa\", "
      "\"calls\": [1]}]}", PRISM_E_NOT_PRISM, "[1]", 0, "expected an integer for \"calls\"" },
    { HEAD "\"gpu\": [], " OK_TAIL, PRISM_E_NOT_PRISM, "[]", 0, "expected an object for \"gpu\"" },
    { HEAD "\"gpu\": {\"busy_ns\": true}, " OK_TAIL, PRISM_E_NOT_PRISM, "true", 3,
      "expected an integer for \"busy_ns\"" },
    { HEAD "\"pid\": 1111111111111111111111111111111111111111111111111111111111111111111, "
      OK_TAIL, PRISM_E_LIMIT, "1111", 64, "longer than 64 bytes" },
};

static void check_bad(const char *json, size_t n, const sum_limits *lim, prism_status want,
                      uint64_t want_off, const char *words)
{
    prism_rank_summary out;
    char msg[256];
    uint64_t off = 12345;
    prism_status st = rd(json, n, lim, &out, msg, &off);
    if (st != want || off != want_off || !strstr(msg, words))
        print_error("case %.60s: status %d (want %d), offset %llu (want %llu): %s\n", json,
                    (int)st, (int)want, (unsigned long long)off, (unsigned long long)want_off,
                    msg);
    assert_int_equal(st, want);
    assert_int_equal(off, want_off);
    assert_non_null(strstr(msg, words));
    assert_null(out.steps);
    assert_null(out.source);
}

static void test_hostile_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const bad_case *c = &bad[i];
        size_t n = strlen(c->json);
        uint64_t want = n;
        if (c->at) {
            const char *p = strstr(c->json + (c->json[0] == '{' ? 1 : 0), c->at);
            if (c->json[0] != '{' || !p)
                p = strstr(c->json, c->at);
            assert_non_null(p);
            want = (uint64_t)(p - c->json) + (uint64_t)c->delta;
        }
        check_bad(c->json, n, NULL, c->st, want, c->words);
    }
}

/* 2049 regions; 4 steps under a limit of 3; a file over a size limit. */
static void test_counts(void **state)
{
    (void)state;
    size_t cap = 200 * 2100, len = 0;
    char *j = malloc(cap);
    len += (size_t)sprintf(j, HEAD "\"steps\": [], \"regions\": [");
    size_t at = 0;
    for (size_t i = 0; i <= SUM_MAX_REGIONS; i++) {
        if (i == SUM_MAX_REGIONS)
            at = len + (i ? 2 : 0);
        len += (size_t)sprintf(j + len, "%s{\"name\": \"r\", \"path_hash\": \"%016zx\"}",
                               i ? ", " : "", i + 1);
    }
    len += (size_t)sprintf(j + len, "]}");
    check_bad(j, len, NULL, PRISM_E_LIMIT, at, "more than 2048 regions");

    sum_limits lim = { SUM_MAX_FILE, 3, SUM_MAX_REGIONS };
    const char *four = HEAD "\"steps\": [[1,1,0], [2,1,0], [3,1,0], [4,1,0]], \"regions\": []}";
    check_bad(four, strlen(four), &lim, PRISM_E_LIMIT,
              (uint64_t)(strstr(four, "[4") - four), "more than 3 steps");
    prism_rank_summary out;
    char msg[256];
    uint64_t off;
    lim.steps = 4;
    assert_int_equal(rd(four, strlen(four), &lim, &out, msg, &off), PRISM_OK);
    assert_int_equal(out.nsteps, 4);
    prism_rank_summary_free(&out);

    lim = (sum_limits){ 10, SUM_MAX_STEPS, SUM_MAX_REGIONS };
    check_bad(four, strlen(four), &lim, PRISM_E_LIMIT, 10, "larger than 10 bytes");
    free(j);
}

/* A 20 MB string stops at 64 KiB, before yajl holds it. */
static void test_long_string(void **state)
{
    (void)state;
    size_t big = 20u << 20;
    char *j = malloc(big + 100);
    size_t len = (size_t)sprintf(j, HEAD "\"host\": \"");
    size_t quote = len - 1;
    memset(j + len, 'a', big);
    len += big;
    len += (size_t)sprintf(j + len, "\", " OK_TAIL);
    check_bad(j, len, NULL, PRISM_E_LIMIT, quote + 1 + SUM_MAX_STRING, "longer than 65536");
    /* 65536 bytes is still taken */
    len = quote + 1 + SUM_MAX_STRING;
    len += (size_t)sprintf(j + len, "\", " OK_TAIL);
    prism_rank_summary out;
    char msg[256];
    uint64_t off;
    assert_int_equal(rd(j, len, NULL, &out, msg, &off), PRISM_OK);
    assert_int_equal(strlen(out.host), SUM_MAX_STRING);
    prism_rank_summary_free(&out);
    free(j);
}

/* ---- forward compatibility, duplicates, repairs ---- */

static void test_lenient(void **state)
{
    (void)state;
    const char *j =
        "\n {\"prism_summary\": 1, \"future\": {\"a\": [1, {\"b\": null}], \"c\": 1.5e3},"
        " \"host\": \"first\", \"host\": \"second\", \"rank\": -1, \"rank\": 5,"
        " \"steps\": [[9, 9, 9]], \"steps\": [[1, 10, 2], [4, 20, 0]],"
        " \"gpu\": {\"busy_ns\": 3, \"new_thing\": [], \"busy_ns\": 4},"
        " \"regions\": [{\"name\": \"orphan\", \"path_hash\": \"00000000000000aa\","
        "   \"parent_hash\": \"00000000000000bb\", \"depth\": 5, \"extra\": {}},"
        "  {\"name\": \"child\", \"path_hash\": \"00000000000000cc\","
        "   \"parent_hash\": \"00000000000000AA\", \"depth\": 0, \"wait\": \"off_cpu\"}]}\n";
    prism_rank_summary out;
    char msg[256];
    uint64_t off;
    assert_int_equal(rd(j, strlen(j), NULL, &out, msg, &off), PRISM_OK);
    assert_string_equal(out.host, "second");
    assert_string_equal(out.source, "mem");      /* none in the file */
    assert_string_equal(out.thread, "");
    assert_int_equal(out.rank, 5);
    assert_int_equal(out.nsteps, 2);
    assert_int_equal(out.steps[1].index, 4);
    assert_int_equal(out.gpu_busy_ns, 4);
    assert_int_equal(out.nregions, 2);
    assert_int_equal(out.regions[0].parent_hash, 0);     /* unknown parent: a root */
    assert_int_equal(out.regions[0].depth, 0);
    assert_int_equal(out.regions[1].parent_hash, 0xaa);
    assert_int_equal(out.regions[1].depth, 1);
    assert_int_equal(out.regions[1].wait, PRISM_WAIT_OFFCPU);
    prism_rank_summary_free(&out);

    const char *maxed = HEAD "\"pid\": 18446744073709551615, " OK_TAIL;
    assert_int_equal(rd(maxed, strlen(maxed), NULL, &out, msg, &off), PRISM_OK);
    assert_true(out.pid == UINT64_MAX);
    prism_rank_summary_free(&out);
}

static void test_read_missing_file(void **state)
{
    (void)state;
    prism_rank_summary out;
    char msg[256];
    uint64_t off = 9;
    assert_int_equal(prism_rank_summary_read("/nonexistent/r.sum", &out, msg, sizeof msg, &off),
                     PRISM_E_IO);
    assert_int_equal(off, 0);
    assert_non_null(strstr(msg, "No such file or directory"));
}

static void test_probe(void **state)
{
    (void)state;
    const char *yes[] = { "{\"prism_summary\": 1", "  \n\t{\n  \"prism_summary\": 1" };
    const char *no[] = { "[", "{\"traceEvents\": []}", "{\"prism_summar", "", "\xd9\xd9\xf7",
                         "{ \"source\": \"x\", \"prism_summary\": 1}" };
    for (size_t i = 0; i < 2; i++)
        assert_true(prism_rank_summary_probe((const uint8_t *)yes[i], strlen(yes[i])));
    for (size_t i = 0; i < 6; i++)
        assert_false(prism_rank_summary_probe((const uint8_t *)no[i], strlen(no[i])));
    char far[400];
    memset(far, ' ', sizeof far);
    memcpy(far + 250, "{\"prism_summary\": 1", 19);
    assert_false(prism_rank_summary_probe((const uint8_t *)far, sizeof far));
    memcpy(far + 200, "{\"prism_summary\": 1", 19);
    assert_true(prism_rank_summary_probe((const uint8_t *)far, sizeof far));
    /* what the writer writes */
    prism_rank_summary s = sample();
    size_t len;
    char *json = to_mem(&s, &len);
    assert_true(prism_rank_summary_probe((const uint8_t *)json, len));
    free(json);
    prism_rank_summary_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_roundtrip_lossy),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_hostile_table),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_long_string),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_read_missing_file),
        cmocka_unit_test(test_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
