/*
 * report_test.c - prism-top analyze and compare, and the JSON writer
 * behind them: a golden text report of a fixed refgen profile, JSON that
 * parses, a profile compared with itself, error paths and usage errors.
 *
 * The golden file is tests/golden/analyze_ref.txt; after an intended change
 * to the report regenerate it with
 *     PRISM_UPDATE_GOLDEN=1 build/tests/report_test
 * and review the diff.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../reports/json.h"
#include "../reports/report.h"
#include "json_check.h"
#include "report_util.h"

/* The golden file, next to this source file. */
static void golden_path(char *out, size_t cap)
{
    const char *slash = strrchr(__FILE__, '/');
    int dirlen = slash ? (int)(slash - __FILE__) : 0;
    snprintf(out, cap, "%.*s%sgolden/analyze_ref.txt", dirlen, __FILE__, slash ? "/" : "");
}

/* Replace every occurrence of `what` in s by `with` (a new string). */
static char *replace_all(const char *s, const char *what, const char *with)
{
    size_t n = count_str(s, what), lw = strlen(what), lr = strlen(with);
    char *r = malloc(strlen(s) + n * lr + 1), *o = r;
    assert_non_null(r);
    for (const char *p = s, *q; ; p = q + lw) {
        q = strstr(p, what);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, with, lr);
        o += lr;
    }
    return r;
}

/* ---- analyze ---- */

static void analyze_txt_matches_golden(void **state)
{
    fx *f = *state;
    char *out, *err, gp[512];
    const char *argv[] = { "analyze", f->ref, NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv, &out, &err), EXIT_OK);
    assert_string_equal(err, "");
    /* the only thing that depends on where the test runs: the file's path */
    char *masked = replace_all(out, f->ref, "REF.cbor");
    golden_path(gp, sizeof gp);
    if (getenv("PRISM_UPDATE_GOLDEN"))
        write_text(gp, masked);
    char *golden = slurp(gp, NULL);
    if (!golden)
        fail_msg("cannot read %s (run the tests from the repository root)", gp);
    if (strcmp(masked, golden)) {
        fprintf(stderr, "---- got ----\n%s---- want (%s) ----\n%s", masked, gp, golden);
        fail_msg("the analyze report differs from the golden file");
    }
    /* the reference report's landmarks */
    assert_non_null(strstr(out, "PRISM Training Profile Report"));
    assert_non_null(strstr(out, "Summary:"));
    assert_non_null(strstr(out, "Top Operations:"));
    assert_non_null(strstr(out, "Bottlenecks Detected:"));
    assert_non_null(strstr(out, "GPU:"));
    free(golden);
    free(masked);
    free(out);
    free(err);
}

static void analyze_is_deterministic(void **state)
{
    fx *f = *state;
    char *a, *b;
    const char *argv[] = { "analyze", f->ref, NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv, &a, NULL), EXIT_OK);
    assert_int_equal(run_cmd(cmd_analyze, argv, &b, NULL), EXIT_OK);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

static void analyze_json_parses(void **state)
{
    fx *f = *state;
    char out[512], *text, *err;
    size_t len, where;
    path_in(out, f->dir, "report.json");
    const char *argv[] = { "analyze", f->ref, "--format", "json", "-o", out, NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv, NULL, &err), EXIT_OK);
    assert_string_equal(err, "");
    char tmp[520];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    assert_false(exists(tmp));
    text = slurp(out, &len);
    assert_non_null(text);
    if (!json_valid(text, len, &where, NULL))
        fail_msg("analyze JSON invalid at byte %zu: %.60s", where, text + where);
    assert_non_null(strstr(text, "\"schema\": \"prism.analyze/1\""));
    assert_non_null(strstr(text, "\"bottlenecks\": ["));
    assert_non_null(strstr(text, "\"host_leak\": {"));
    assert_non_null(strstr(text, "\"steps\": {\n    \"count\": 20,"));
    /* every op appears, and an op's path uses '/' */
    size_t nops;
    prism_analysis *a = report_load(f->ref, NULL);
    assert_non_null(a);
    prism_analysis_ops(a, &nops);
    assert_int_equal(count_str(text, "\"heaviest_path\": "), nops);
    assert_non_null(strstr(text, "\"heaviest_path\": \"step/data_loading\""));
    prism_analysis_free(a);
    free(text);
    free(err);
}

static void analyze_notes_incomplete_profile(void **state)
{
    fx *f = *state;
    char p[512], *out;
    refgen_opts o = refgen_defaults();
    o.footer = false;
    fixture(path_in(p, f->dir, "nofooter.cbor"), &o);
    const char *argv[] = { "analyze", p, NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv, &out, NULL), EXIT_OK);
    assert_non_null(strstr(out, "INCOMPLETE - no footer"));
    free(out);
    const char *argv2[] = { "analyze", f->ref, NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv2, &out, NULL), EXIT_OK);
    assert_non_null(strstr(out, "Status: complete"));
    free(out);
}

static void analyze_threshold_changes_verdict(void **state)
{
    fx *f = *state;
    char *out;
    /* 1 MB/step of host growth: a leak at 0.5 MB/step, none at 10 */
    const char *argv[] = { "analyze", f->ref, "--leak-threshold", "0.5", NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv, &out, NULL), EXIT_OK);
    assert_non_null(strstr(out, "Memory leak: DETECTED"));
    free(out);
    const char *argv2[] = { "analyze", f->ref, "--threshold=99", NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv2, &out, NULL), EXIT_OK);
    /* no hot operation of the training step (a loader thread's whole-thread
     * op may stay, LOW, "beside the training thread") */
    for (const char *p = strstr(out, "hot_operation"); p; p = strstr(p + 1, "hot_operation")) {
        const char *eol = strchr(p, '\n');
        assert_non_null(eol);
        assert_true(memmem(p, (size_t)(eol - p), "beside the training thread", 26) != NULL);
    }
    free(out);
}

/* ---- errors ---- */

static void errors_are_one_line_exit_2(void **state)
{
    fx *f = *state;
    char missing[512], foreign[512], empty[512], *err;
    path_in(missing, f->dir, "missing.cbor");
    path_in(foreign, f->dir, "foreign.txt");
    path_in(empty, f->dir, "empty.cbor");
    write_text(foreign, "this is not a profile\n");
    write_text(empty, "");
    const char *files[] = { foreign, empty };
    for (size_t i = 0; i < 2; i++) {
        const char *a1[] = { "analyze", files[i], NULL };
        assert_int_equal(run_cmd(cmd_analyze, a1, NULL, &err), EXIT_BADINPUT);
        assert_one_error_line(err, files[i]);
        free(err);
        const char *a2[] = { "compare", f->ref, files[i], NULL };
        assert_int_equal(run_cmd(cmd_compare, a2, NULL, &err), EXIT_BADINPUT);
        assert_one_error_line(err, files[i]);
        free(err);
    }
    /* a missing file: the system's words, no byte offset (nothing was read),
     * from every command that reads one */
    char want[600];
    snprintf(want, sizeof want, "prism-top: %s: No such file or directory\n", missing);
    const char *m1[] = { "analyze", missing, NULL };
    const char *m2[] = { "compare", f->ref, missing, NULL };
    const char *m3[] = { "compare", missing, f->ref, NULL };
    const char *m4[] = { "dump", missing, NULL };
    const char *m5[] = { "convert", missing, "-o", NULL, NULL };
    const char *const *mv[] = { m1, m2, m3, m4, m5 };
    cmd_fn mf[] = { cmd_analyze, cmd_compare, cmd_compare, cmd_dump, cmd_convert };
    char outp[512];
    m5[3] = path_in(outp, f->dir, "never.cbor");
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(run_cmd(mf[i], mv[i], NULL, &err), EXIT_BADINPUT);
        assert_string_equal(err, want);
        free(err);
    }
    const char *a3[] = { "analyze", foreign, NULL };
    assert_int_equal(run_cmd(cmd_analyze, a3, NULL, &err), EXIT_BADINPUT);
    assert_non_null(strstr(err, "not a PRISM profile"));
    assert_non_null(strstr(err, "at byte 0\n"));
    free(err);
}

static void usage_errors_exit_1(void **state)
{
    fx *f = *state;
    const char *bad[][6] = {
        { "analyze", NULL },
        { "analyze", f->ref, "--format", "xml", NULL },
        { "analyze", f->ref, "--bogus", NULL },
        { "analyze", "--summary", f->ref, f->ref, NULL },   /* two files: a job (issue 17) */
        { "analyze", f->ref, "--threads", "x", NULL },
        { "analyze", f->ref, "--threshold", "-3", NULL },
        { "analyze", f->ref, "-o", NULL },
        { "compare", f->ref, NULL },
        { "compare", f->ref, f->ref, f->ref, NULL },
        { "compare", f->ref, f->ref, "--top", "x", NULL },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err;
        cmd_fn fn = !strcmp(bad[i][0], "analyze") ? cmd_analyze : cmd_compare;
        assert_int_equal(run_cmd(fn, bad[i], NULL, &err), EXIT_USAGE);
        assert_true(strlen(err) > 0);
        free(err);
    }
}

/* ---- compare ---- */

static void compare_self_is_all_zero(void **state)
{
    fx *f = *state;
    prism_analysis *a = report_load(f->ref, NULL), *b = report_load(f->ref, NULL);
    assert_non_null(a);
    assert_non_null(b);
    prism_compare *c = prism_compare_new(a, b);
    assert_non_null(c);
    assert_int_equal(c->count, prism_analysis_tree(a)->count);
    assert_int_equal(c->appeared, 0);
    assert_int_equal(c->vanished, 0);
    assert_int_equal(c->nbn_new, 0);
    assert_int_equal(c->nbn_gone, 0);
    for (size_t i = 0; i < c->count; i++) {
        assert_true(c->deltas[i].delta_ns == 0);
        assert_false(c->deltas[i].significant);
    }
    prism_compare_free(c);
    prism_analysis_free(b);
    prism_analysis_free(a);

    char *out, *text;
    size_t where;
    const char *argv[] = { "compare", f->ref, f->ref, "--top", "0", NULL };
    assert_int_equal(run_cmd(cmd_compare, argv, &out, NULL), EXIT_OK);
    assert_non_null(strstr(out, "PRISM Profile Comparison"));
    assert_non_null(strstr(out, "Metric"));
    const char *leak = strstr(out, "memory_leak_detected ");
    assert_non_null(leak);
    assert_memory_equal(strchr(leak, '\n') - 4, "same", 4);  /* whatever the verdict */
    assert_null(strstr(out, "\n  * "));                 /* nothing significant */
    /* 5 metrics; 23 regions, each with its total and its per-step median */
    assert_int_equal(count_str(out, "+0.0%"), 5 + 2 * 23);
    assert_int_equal(count_str(out, " +0.0pp "), 23);     /* no share moved */
    assert_non_null(strstr(out, "Whole run: no common shift (median region ratio x1.00"));
    assert_int_equal(count_str(out, "    none\n"), 2);    /* nothing new or vanished */
    const char *argv2[] = { "compare", f->ref, f->ref, "--format", "json", NULL };
    assert_int_equal(run_cmd(cmd_compare, argv2, &text, NULL), EXIT_OK);
    if (!json_valid(text, strlen(text), &where, NULL))
        fail_msg("compare JSON invalid at byte %zu: %.60s", where, text + where);
    assert_non_null(strstr(text, "\"schema\": \"prism.compare/1\""));
    assert_int_equal(count_str(text, "\"delta_ns\": 0,"), 23);
    assert_int_equal(count_str(text, "\"delta_ns\": "), 23);
    assert_int_equal(count_str(text, "\"significant\": false"), 23);
    assert_int_equal(count_str(text, "\"status\": \"both\""), 23);
    assert_int_equal(count_str(text, "\"median_pct\": 0,"), 23);
    assert_int_equal(count_str(text, "\"share_delta_pp\": 0,"), 23);
    assert_int_equal(count_str(text, "\"base_median_ns\": "), 23);
    assert_non_null(strstr(text, "\"whole_run_shift\": false"));
    assert_non_null(strstr(text, "\"factor\": 1,"));
    free(out);
    free(text);
}

static void compare_sees_new_region(void **state)
{
    fx *f = *state;
    char wide[512], *out, *text;
    refgen_opts o = refgen_defaults();
    o.layers = 5;
    fixture(path_in(wide, f->dir, "wide.cbor"), &o);
    const char *argv[] = { "compare", f->ref, wide, NULL };
    assert_int_equal(run_cmd(cmd_compare, argv, &out, NULL), EXIT_OK);
    const char *sec = strstr(out, "New regions (only in profile 2):\n");
    assert_non_null(sec);
    assert_non_null(strstr(sec, "step/forward/layer.4 "));
    assert_non_null(strstr(sec, "step/backward/layer.4.grad "));
    /* durations in one style: "3.75 ms", signed changes "+2.22 ms (+61.2%)";
     * "us", not "\u00b5s", off a terminal */
    const char *row = strstr(out, "\nmean_step ");
    assert_non_null(row);
    const char *eol = strchr(row + 1, '\n');
    char line[160];
    snprintf(line, sizeof line, "%.*s", (int)(eol - row - 1), row + 1);
    char a[32], ua[8], b[32], ub[8], d[32], ud[8], pct[32];
    assert_int_equal(sscanf(line, "mean_step %31s %7s %31s %7s %31s %7s (%31[^)])", a, ua, b, ub,
                            d, ud, pct), 7);
    assert_true(strchr("num", ua[0]) && strchr("num", ub[0]) && strchr("num", ud[0]));
    assert_true(d[0] == '+' || d[0] == '-');
    assert_non_null(strstr(out, " us "));
    assert_null(strstr(out, "\xc2\xb5s"));
    assert_null(strstr(out, "_ms "));
    const char *argv2[] = { "compare", wide, f->ref, "--format", "json", NULL };
    assert_int_equal(run_cmd(cmd_compare, argv2, &text, NULL), EXIT_OK);
    assert_true(json_valid(text, strlen(text), NULL, NULL));
    /* seen from the other side, layer.4 and its children vanish */
    assert_int_equal(count_str(text, "\"status\": \"vanished\""), 4);
    assert_non_null(strstr(text, "\"vanished\": 4"));
    free(out);
    free(text);
}

/* ---- the JSON writer ---- */

static char *json_text(void (*body)(json_w *), bool *ok)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    json_w w;
    json_init(&w, m, 0);
    body(&w);
    *ok = json_finish(&w);
    assert_int_equal(fclose(m), 0);
    return buf;
}

static void body_escapes(json_w *w)
{
    json_begin_object(w);
    json_kstring(w, "quote", "a\"b\\c/");
    json_key(w, "controls");
    json_stringn(w, "\x01\b\f\n\r\t\x1f", 7);
    json_kstring(w, "utf8", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    json_kstring(w, "bad", "x\xff\xc3(\xed\xa0\x80y");
    json_kdouble(w, "nan", NAN);
    json_kdouble(w, "inf", -INFINITY);
    json_kdouble(w, "tenth", 0.1);
    json_kint(w, "min", INT64_MIN);
    json_kuint(w, "max", UINT64_MAX);
    json_key(w, "empty");
    json_begin_array(w);
    json_end_array(w);
    json_kstring(w, "null", NULL);
    json_end_object(w);
}

static void body_misuse(json_w *w)
{
    json_begin_object(w);
    json_uint(w, 1);                    /* a value where a key is due */
    json_end_object(w);
}

static void json_writer_escapes(void **state)
{
    (void)state;
    bool ok;
    char *s = json_text(body_escapes, &ok);
    assert_true(ok);
    assert_true(json_valid(s, strlen(s), NULL, NULL));
    assert_string_equal(s,
        "{\"quote\":\"a\\\"b\\\\c/\","
        "\"controls\":\"\\u0001\\b\\f\\n\\r\\t\\u001f\","
        "\"utf8\":\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\","
        "\"bad\":\"x\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffdy\","
        "\"nan\":null,\"inf\":null,\"tenth\":0.10000000000000001,"
        "\"min\":-9223372036854775808,\"max\":18446744073709551615,"
        "\"empty\":[],\"null\":null}\n");
    free(s);
    s = json_text(body_misuse, &ok);
    assert_false(ok);
    free(s);
}

static void json_checker_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "NaN", "-Infinity", "\"\t\"",
        "\"\\x\"", "\"\\u12g4\"", "{\"a\" 1}", "[1 2]", "\"\xff\"", "{} {}", "tru", "+1",
    };
    static const char *const good[] = {
        "0", "-0.5e+10", "\"\\u00e9\\n\"", "{\"a\":[true,false,null,{}]}", " [ ] ",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (json_valid(bad[i], strlen(bad[i]), NULL, NULL))
            fail_msg("accepted %s", bad[i]);
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!json_valid(good[i], strlen(good[i]), NULL, NULL))
            fail_msg("rejected %s", good[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(analyze_txt_matches_golden),
        FX_TEST(analyze_is_deterministic),
        FX_TEST(analyze_json_parses),
        FX_TEST(analyze_notes_incomplete_profile),
        FX_TEST(analyze_threshold_changes_verdict),
        FX_TEST(errors_are_one_line_exit_2),
        FX_TEST(usage_errors_exit_1),
        FX_TEST(compare_self_is_all_zero),
        FX_TEST(compare_sees_new_region),
        cmocka_unit_test(json_writer_escapes),
        cmocka_unit_test(json_checker_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
