/*
 * export_scope_test.c - what `prism-top export --steps / --threads /
 * --min-duration` keeps, in every format, on a hand-built profile whose
 * every span is known:
 *
 *   steps k = 0..4 at [10000 k, 10000 k + 10000) ns, all sampled, marked
 *   by thread 1 "main" (OS tid 101): per step "forward" [+1000, +6000]
 *   holding "tiny" [+2000, +2050] (50 ns) and "tiny" [+3000, +3100];
 *   thread 2 "worker" (OS tid 102): per step "load" [+500, +4500], and
 *   "long" [18000, 30200] (steps 1 to 3, holding step 2's load); per step
 *   a kernel [+1500, +1800] and main's CUDA API call [+1200, +1300].
 *
 * For each selection the region spans of the Chrome trace, speedscope's
 * opened frames and the calls of the csv (the call tree of the filtered
 * analysis) are the same count, the count worked out by hand; spans cut
 * at the window's ends are cut exactly there; children go with a parent
 * too short; the outputs are JSON; names stay escaped.  Bad values are
 * one line and exit 1 (usage), step ranges and threads the file lacks one
 * line and exit 2, before any output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../reports/reports.h"
#include "json_check.h"
#include "pbuild.h"
#include "report_util.h"

enum { N_FORWARD = 1, N_TINY, N_LOAD, N_LONG, N_KERNEL, N_API };

static void scope_profile(const char *path)
{
    static const char *const names[] = { "forward", "tiny", "load", "long", "gemm", "cudaLaunch" };
    pbuild b;
    pb_init(&b, names, 6, 1);
    pb_info_uint(&b, "steps.thread", 1);
    pb_thread(&b, 1, "main");
    pb_thread(&b, 2, "worker");
    for (uint64_t k = 0; k < 5; k++) {
        uint64_t t = 10000 * k;
        pb_enter(&b, 1, t + 1000, N_FORWARD);
        pb_enter(&b, 1, t + 2000, N_TINY);
        pb_exit(&b, 1, t + 2050);
        pb_enter(&b, 1, t + 3000, N_TINY);
        pb_exit(&b, 1, t + 3100);
        pb_exit(&b, 1, t + 6000);
        if (k == 1) {
            pb_enter(&b, 2, t + 500, N_LOAD);
            pb_exit(&b, 2, t + 4500);
            pb_enter(&b, 2, 18000, N_LONG);
        } else {
            pb_enter(&b, 2, t + 500, N_LOAD);
            pb_exit(&b, 2, t + 4500);
        }
        if (k == 2)
            pb_exit(&b, 2, 30200);
        prism_gpu_record g = { .type = PRISM_GPU_KERNEL, .start = t + 1500, .end = t + 1800,
                               .stream = 7, .correlation = k + 1, .name = N_KERNEL };
        PB_PUT(&b, PRISM_CHUNK_GPU, 0, g.start, prism_enc_gpu(&b.e, &g));
        prism_gpu_record a = { .type = PRISM_GPU_API, .start = t + 1200, .end = t + 1300,
                               .stream = 1, .correlation = k + 1, .name = N_API };
        PB_PUT(&b, PRISM_CHUNK_GPU, 0, a.start, prism_enc_gpu(&b.e, &a));
        prism_step st = { .start = t, .end = t + 10000, .index = k, .flags = PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    prism_footer ft = { .end_ts = 50000, .clean = true };
    PB_PUT(&b, PRISM_CHUNK_FOOTER, 0, 0, prism_enc_footer(&b.e, &ft));
    pb_flush(&b);
    FILE *w = fopen(path, "wb");
    assert_non_null(w);
    assert_int_equal(fwrite(b.data, 1, b.len, w), b.len);
    assert_int_equal(fclose(w), 0);
    free(b.data);
}

/* `export PATH --format FMT ARGS... -o DIR/out.FMT`: the output text. */
static char *run_export(fx *f, const char *path, const char *format, const char *const *args)
{
    char out[512];
    const char *argv[24] = { "export", path, "--format", format, "-o", NULL };
    size_t n = 5;
    snprintf(out, sizeof out, "%s/out.%s", f->dir, format);
    argv[n++] = out;
    for (size_t i = 0; args && args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    char *err;
    int rc = run_cmd(cmd_export, argv, NULL, &err);
    if (rc != EXIT_OK)
        fail_msg("export --format %s failed (%d): %s", format, rc, err);
    assert_string_equal(err, "");
    free(err);
    char *text = slurp(out, NULL);
    assert_non_null(text);
    size_t where;
    if (strcmp(format, "csv") && strcmp(format, "folded") &&
        !json_valid(text, strlen(text), &where, NULL))
        fail_msg("%s: invalid JSON at byte %zu: %.60s", format, where, text + where);
    return text;
}

/* The calls of the csv's rows (the filtered analysis' tree), the
 * (outside regions) row apart. */
static uint64_t csv_calls(const char *csv)
{
    uint64_t calls = 0;
    const char *line = strchr(csv, '\n');
    for (; line && line[1]; line = strchr(line + 1, '\n')) {
        if (!strncmp(line + 1, "(outside regions),", 18))
            continue;
        const char *c = line + 1;
        for (int field = 0; field < 3; field++)
            c = strchr(c, ',') + 1;
        calls += strtoull(c, NULL, 10);
    }
    return calls;
}

/* speedscope's opened frames, the "steps" profile's and (outside regions)
 * apart: the index of the frames named so. */
static uint64_t speedscope_regions(const char *ss)
{
    const char *steps = strstr(ss, "{\"type\":\"evented\",\"name\":\"steps\"");
    const char *frames = strstr(ss, "\"frames\":[");
    assert_non_null(frames);
    int outside = -1, idx = 0;
    const char *profiles = strstr(ss, "\"profiles\"");
    for (const char *p = frames; (p = strstr(p + 1, "{\"name\":")) && p < profiles; idx++)
        if (!strncmp(p, "{\"name\":\"(outside regions)\"}", 28))
            outside = idx;
    char skip[64];
    snprintf(skip, sizeof skip, "{\"type\":\"O\",\"frame\":%d,", outside);
    uint64_t n = 0;
    for (const char *p = ss; (p = strstr(p, "{\"type\":\"O\",")); p++) {
        bool in_steps = false;
        if (steps) {
            const char *end = strstr(steps, "]}");
            in_steps = p > steps && p < end;
        }
        if (!in_steps && strncmp(p, skip, strlen(skip)))
            n++;
    }
    return n;
}

/* The selection args keeps `want` regions, and so says every format. */
static void keeps(fx *f, const char *path, const char *const *args, uint64_t want)
{
    char *j = run_export(f, path, "chrome-trace", args);
    char *ss = run_export(f, path, "speedscope", args);
    char *csv = run_export(f, path, "csv", args);
    char *tree = run_export(f, path, "json", args);
    char *folded = run_export(f, path, "folded", args);
    uint64_t chrome = count_str(j, "\"ph\":\"X\",\"ts\":");
    if (chrome != want || speedscope_regions(ss) != want || csv_calls(csv) != want)
        fail_msg("%s %s: want %" PRIu64 " regions: chrome %" PRIu64 ", speedscope %" PRIu64
                 ", csv %" PRIu64, args[0], args[1], want, chrome, speedscope_regions(ss),
                 csv_calls(csv));
    assert_non_null(strstr(j, "\"scope\":{"));
    free(j);
    free(ss);
    free(csv);
    free(tree);
    free(folded);
}

static void selections_agree_in_every_format(void **state)
{
    fx *f = *state;
    char p[512];
    scope_profile(path_in(p, f->dir, "scope.cbor"));
    static const struct { const char *args[7]; uint64_t regions; } cases[] = {
        { { "--steps", "1-2", NULL }, 9 },              /* 2 x 3 + 2 loads + long, cut */
        { { "--steps", "3", NULL }, 5 },                /* 3 + load + long's last 200 ns */
        { { "--steps", "0-4", NULL }, 21 },
        { { "--min-duration", "100ns", NULL }, 16 },    /* the 50 ns tinies go */
        { { "--min-duration", "4us", NULL }, 11 },      /* forward, load (= 4 us), long */
        { { "--min-duration", "0.0121ms", NULL }, 1 },  /* long alone (12.2 us) */
        { { "--threads", "worker", NULL }, 6 },
        { { "--threads", "101", NULL }, 15 },
        { { "--threads", "main,102", NULL }, 21 },
        { { "--steps", "1-2", "--min-duration", "12us", NULL }, 1 },   /* long cut: 12 us */
        { { "--steps", "3", "--min-duration", "1us", NULL }, 2 },      /* long cut: 200 ns */
        { { "--steps", "2-3", "--threads", "worker", "--min-duration", "1us", NULL }, 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        keeps(f, p, cases[i].args, cases[i].regions);
}

static void spans_are_cut_at_the_window(void **state)
{
    fx *f = *state;
    char p[512];
    scope_profile(path_in(p, f->dir, "scope.cbor"));
    /* long [18000, 30200] in steps 1-2 ([10000, 30000)): 18 us, cut to 12 */
    const char *a12[] = { "--steps", "1-2", NULL };
    char *j = run_export(f, p, "chrome-trace", a12);
    assert_non_null(strstr(j, "{\"name\":\"long\",\"ph\":\"X\",\"ts\":18,\"dur\":12,"));
    assert_non_null(strstr(j, "\"first_step\":1,\"last_step\":2,"
                              "\"from_ns\":10000,\"to_ns\":30000"));
    assert_int_equal(count_str(j, "\"cat\":\"step\""), 2);
    assert_int_equal(count_str(j, "\"cat\":\"kernel\""), 2);
    free(j);
    char *csv = run_export(f, p, "csv", a12);
    assert_non_null(strstr(csv, "\nlong,long,0,1,12000,8000,"));       /* load 4000 inside */
    free(csv);
    /* step 3: its last 200 ns */
    const char *a3[] = { "--steps", "3", NULL };
    j = run_export(f, p, "chrome-trace", a3);
    assert_non_null(strstr(j, "{\"name\":\"long\",\"ph\":\"X\",\"ts\":30,\"dur\":0.2,"));
    free(j);
    char *ss = run_export(f, p, "speedscope", a3);
    assert_non_null(strstr(ss, "\"at\":30000}"));
    assert_non_null(strstr(ss, "\"at\":30200}"));
    free(ss);
}

static void a_short_parent_takes_its_children(void **state)
{
    fx *f = *state;
    char p[512];
    scope_profile(path_in(p, f->dir, "scope.cbor"));
    const char *a[] = { "--min-duration", "4us", NULL };
    char *csv = run_export(f, p, "csv", a);
    /* forward without its tinies: all of its 5 x 5000 ns its own */
    assert_non_null(strstr(csv, "\nforward,forward,0,5,25000,25000,5000,5000,"));
    assert_null(strstr(csv, "tiny"));
    free(csv);
    char *folded = run_export(f, p, "folded", a);
    assert_non_null(strstr(folded, "forward 25000\n"));
    assert_null(strstr(folded, "tiny"));
    free(folded);
    /* GPU spans by the same rule: kernels are 300 ns, API calls 100 ns */
    const char *g[] = { "--min-duration", "200ns", NULL };
    char *j = run_export(f, p, "chrome-trace", g);
    assert_int_equal(count_str(j, "\"cat\":\"kernel\""), 5);
    assert_int_equal(count_str(j, "\"cat\":\"cuda_api\""), 0);
    free(j);
}

static void threads_keep_their_own_events(void **state)
{
    fx *f = *state;
    char p[512];
    scope_profile(path_in(p, f->dir, "scope.cbor"));
    const char *a[] = { "--threads", "worker", NULL };
    char *j = run_export(f, p, "chrome-trace", a);
    /* the worker's track and name only; steps and kernels stay, main's
     * CUDA API calls go */
    assert_non_null(strstr(j, "\"args\":{\"name\":\"worker\"}"));
    assert_null(strstr(j, "\"args\":{\"name\":\"main\"}"));
    assert_int_equal(count_str(j, "\"cat\":\"step\""), 5);
    assert_int_equal(count_str(j, "\"cat\":\"kernel\""), 5);
    assert_int_equal(count_str(j, "\"cat\":\"cuda_api\""), 0);
    assert_null(strstr(j, "\"name\":\"forward\""));
    free(j);
    const char *m[] = { "--threads", "main", NULL };
    j = run_export(f, p, "chrome-trace", m);
    assert_int_equal(count_str(j, "\"cat\":\"cuda_api\""), 5);
    free(j);
}

/* The training thread's time outside regions: the Chrome trace's gaps add
 * up to the tree's (outside regions) node, within the window. */
static void outside_regions_follow_the_window(void **state)
{
    fx *f = *state;
    char p[512];
    scope_profile(path_in(p, f->dir, "scope.cbor"));
    const char *a[] = { "--steps", "1-2", NULL };
    char *csv = run_export(f, p, "csv", a);
    /* main outside forward: 5000 ns of each 10000 ns step */
    assert_non_null(strstr(csv, "\n(outside regions),(outside regions),0,2,10000,10000,"));
    free(csv);
    char *j = run_export(f, p, "chrome-trace", a);
    assert_int_equal(count_str(j, "\"cat\":\"outside\""), 4);
    assert_non_null(strstr(j, "\"ts\":10,\"dur\":1,"));       /* step 1's start to forward */
    assert_non_null(strstr(j, "\"ts\":26,\"dur\":4,"));       /* step 2's forward to its end */
    assert_null(strstr(j, "\"ts\":36,"));                     /* no step 3 */
    free(j);
}

static void errors_are_one_line(void **state)
{
    fx *f = *state;
    char p[512], out[512], tmp[520];
    scope_profile(path_in(p, f->dir, "scope.cbor"));
    path_in(out, f->dir, "never.json");
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    static const char *const usage[][2] = {
        { "--steps", "x" }, { "--steps", "3-1" }, { "--steps", "1-" }, { "--steps", "-1" },
        { "--steps", "99999999999999999999" }, { "--min-duration", "5" },
        { "--min-duration", "1h" }, { "--min-duration", "-1ms" }, { "--min-duration", "us" },
        { "--threads", "" }, { "--threads", "main,,worker" }, { "--threads", "main," },
    };
    static const char *const formats[] = { "chrome-trace", "speedscope", "csv", "folded", "json" };
    for (size_t k = 0; k < 5; k++) {
        for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
            const char *argv[] = { "export", p, "--format", formats[k], "-o", out,
                                   usage[i][0], usage[i][1], NULL };
            char *err;
            assert_int_equal(run_cmd(cmd_export, argv, NULL, &err), EXIT_USAGE);
            if (count_lines(err) != 1 || !strstr(err, usage[i][0]))
                fail_msg("%s %s: %s", usage[i][0], usage[i][1], err);
            free(err);
        }
        const char *missing[][3] = {
            { "--steps", "7-9", "(the profile's steps are 0-4)" },
            { "--threads", "main,nobody",
              "no thread 'nobody' (threads: main (101), worker (102))" },
            { "--threads", "bad\033[2Jname", "no thread 'bad\\x1b[2Jname'" },
        };
        for (size_t i = 0; i < 3; i++) {
            const char *argv[] = { "export", p, "--format", formats[k], "-o", out,
                                   missing[i][0], missing[i][1], NULL };
            char *err;
            assert_int_equal(run_cmd(cmd_export, argv, NULL, &err), EXIT_BADINPUT);
            if (count_lines(err) != 1 || !strstr(err, missing[i][2]) || !strstr(err, p))
                fail_msg("%s %s: %s", missing[i][0], missing[i][1], err);
            free(err);
            assert_false(exists(out));
            assert_false(exists(tmp));
        }
    }
    /* to stdout: nothing written before the error */
    const char *argv[] = { "export", p, "--format", "chrome-trace", "--steps", "9", NULL };
    char *o, *err;
    assert_int_equal(run_cmd(cmd_export, argv, &o, &err), EXIT_BADINPUT);
    assert_string_equal(o, "");
    free(o);
    free(err);
}

static void option_values(void **state)
{
    (void)state;
    char err[256];
    uint64_t a = 0, b = 0, ns = 0;
    assert_true(rp_scope_parse_steps("3-5", &a, &b, err, sizeof err));
    assert_true(a == 3 && b == 5);
    assert_true(rp_scope_parse_steps("7", &a, &b, err, sizeof err));
    assert_true(a == 7 && b == 7);
    assert_true(rp_scope_parse_steps("0-18446744073709551615", &a, &b, err, sizeof err));
    assert_true(a == 0 && b == UINT64_MAX);
    assert_false(rp_scope_parse_steps("5-3", &a, &b, err, sizeof err));
    assert_false(rp_scope_parse_steps(" 5", &a, &b, err, sizeof err));
    assert_false(rp_scope_parse_steps("5-3-1", &a, &b, err, sizeof err));
    assert_false(rp_scope_parse_steps("", &a, &b, err, sizeof err));
    static const struct { const char *s; uint64_t ns; } good[] = {
        { "0", 0 }, { "100ns", 100 }, { "50us", 50000 }, { "1.5ms", 1500000 }, { "2s", 2000000000 },
        { "0.5us", 500 }, { ".25ms", 250000 }, { "0us", 0 },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_true(rp_scope_parse_duration(good[i].s, &ns, err, sizeof err));
        assert_int_equal(ns, good[i].ns);
    }
    static const char *const bad[] = { "", "5", "1h", "-1ms", "ms", "1 ms", "1e999s", "nanus" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(rp_scope_parse_duration(bad[i], &ns, err, sizeof err));
        assert_non_null(strstr(err, "--min-duration"));
    }
    assert_true(rp_scope_parse_threads("main", err, sizeof err));
    assert_true(rp_scope_parse_threads("main,4242,loader 1", err, sizeof err));
    assert_false(rp_scope_parse_threads(",main", err, sizeof err));
}

/* Names that need escaping stay escaped in what a selection keeps. */
static void escaping_survives_a_selection(void **state)
{
    fx *f = *state;
    char p[512];
    static const char *const names[] = { "comma, \"quoted\"", "bad\xff utf8 \x01" };
    pbuild b;
    pb_init(&b, names, 2, 1);
    pb_thread(&b, 1, "wor\"ker\t1");
    pb_enter(&b, 1, 100, 1);
    pb_enter(&b, 1, 200, 2);
    pb_exit(&b, 1, 5000);
    pb_exit(&b, 1, 9000);
    pb_flush(&b);
    FILE *w = fopen(path_in(p, f->dir, "awkward.cbor"), "wb");
    assert_non_null(w);
    assert_int_equal(fwrite(b.data, 1, b.len, w), b.len);
    assert_int_equal(fclose(w), 0);
    free(b.data);
    const char *a[] = { "--threads", "101", "--min-duration", "1us", NULL };
    char *j = run_export(f, p, "chrome-trace", a);
    assert_non_null(strstr(j, "{\"name\":\"comma, \\\"quoted\\\"\","
                              "\"ph\":\"X\",\"ts\":0.1,\"dur\":8.9,"));
    assert_non_null(strstr(j, "{\"name\":\"bad\\ufffd utf8 \\u0001\","
                              "\"ph\":\"X\",\"ts\":0.2,\"dur\":4.8,"));
    assert_non_null(strstr(j, "\"name\":\"wor\\\"ker\\t1\""));
    assert_non_null(strstr(j, "\"threads\":\"101\""));
    free(j);
    char *ss = run_export(f, p, "speedscope", a);
    assert_non_null(strstr(ss, "{\"name\":\"bad\\ufffd utf8 \\u0001\"}"));
    free(ss);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(selections_agree_in_every_format),
        FX_TEST(spans_are_cut_at_the_window),
        FX_TEST(a_short_parent_takes_its_children),
        FX_TEST(threads_keep_their_own_events),
        FX_TEST(outside_regions_follow_the_window),
        FX_TEST(errors_are_one_line),
        FX_TEST(option_values),
        FX_TEST(escaping_survives_a_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
