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
#include "pbuild.h"
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

/* ---- names whole at any width (issue 34) ---- */

/*
 * A transformer's twelve layers: paths that differ only in a middle index,
 * "TinyTransformer.forward/encoder/layers.7/encoder.layers.7.self_attn.
 * in_proj_and_scaled_dot_product (backward)" (107 columns), leaves of 66
 * to 69, and kernels of 90 that differ in the middle too.  slow: a layer
 * 50 % slower (-1: none); extra: a thirteenth layer, short.
 */
#define NLAYERS 12
#define LAYER_NAME(i) (2 + (i))                 /* "layers.N" */
#define LEAF_NAME(i) (2 + NLAYERS + (i))
#define KERNEL_NAME(i) (2 + 2 * NLAYERS + (i))
#define EXTRA_NAME (2 + 3 * NLAYERS)            /* layers.12 and its leaf */
#define NNAMES (EXTRA_NAME + 2)

static void layered_names(char names[NNAMES][160])
{
    snprintf(names[0], 160, "TinyTransformer.forward");
    snprintf(names[1], 160, "encoder");
    for (int i = 0; i <= NLAYERS; i++) {
        bool extra = i == NLAYERS;
        snprintf(names[extra ? EXTRA_NAME : LAYER_NAME(i)], 160, "layers.%d", i);
        snprintf(names[extra ? EXTRA_NAME + 1 : LEAF_NAME(i)], 160,
                 "encoder.layers.%d.self_attn.in_proj_and_scaled_dot_product (backward)", i);
        if (!extra)
            snprintf(names[KERNEL_NAME(i)], 160, "void at::native::elementwise_kernel<128, 4, "
                     "layer_%d_lambda>(int, at::native::gpu_kernel_impl)", i);
    }
}

static void layered_fixture(const char *path, uint64_t seed, int slow, bool extra)
{
    char names[NNAMES][160];
    const char *np[NNAMES];
    layered_names(names);
    for (int i = 0; i < NNAMES; i++)
        np[i] = names[i];
    pbuild *b = malloc(sizeof *b);
    assert_non_null(b);
    pb_init(b, np, NNAMES, seed);
    pb_thread(b, 1, "main");
    uint64_t now = 1000000;
    for (uint64_t k = 0; k < 30; k++) {
        uint64_t start = now;
        pb_enter(b, 1, now, 1);
        pb_enter(b, 1, now += 1000, 2);
        for (int i = 0; i < NLAYERS; i++) {
            uint64_t us = (uint64_t)(100 + 10 * i) * (i == slow ? 3 : 2) / 2;
            pb_enter(b, 1, now += 1000, (uint32_t)LAYER_NAME(i) + 1);
            pb_leaf(b, 1, &now, (uint32_t)LEAF_NAME(i) + 1, us * 1000);
            prism_gpu_record kr = { .type = PRISM_GPU_KERNEL, .start = now, .end = now + us * 500,
                                    .stream = 7, .correlation = k * NLAYERS + (uint64_t)i + 1,
                                    .name = (uint32_t)KERNEL_NAME(i) + 1 };
            PB_PUT(b, PRISM_CHUNK_GPU, 0, now, prism_enc_gpu(&b->e, &kr));
            pb_exit(b, 1, now += 1000);
        }
        if (extra) {
            pb_enter(b, 1, now += 1000, EXTRA_NAME + 1);
            pb_leaf(b, 1, &now, EXTRA_NAME + 2, 20000);
            pb_exit(b, 1, now += 1000);
        }
        pb_exit(b, 1, now += 1000);
        pb_exit(b, 1, now += 1000);
        prism_step st = { start, now, k, 0, PRISM_STEP_SAMPLED };
        pb_step(b, &st);
        now += 5000;
    }
    pb_write_file(b, path);
    free(b);
}

/* analyze: every operation, kernel and finding's region of the twelve
 * layers whole at every width, a row's figures the same at every width
 * (never cut) and aligned under the header. */
static void analyze_names_whole_at_any_width(void **state)
{
    fx *f = *state;
    char p[512];
    layered_fixture(path_in(p, f->dir, "layers.cbor"), 1, -1, false);
    prism_analysis *a = report_load(p, NULL);
    assert_non_null(a);
    size_t nops, nb;
    const prism_op *ops = prism_analysis_ops(a, &nops);
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    const prism_bottleneck *bn = prism_analysis_bottlenecks(a, &nb);
    assert_true(nops >= 10);
    assert_int_equal(g->nkernels, NLAYERS);
    /* the rows: the 10 operations, then the 5 kernels shown */
    const char *names[15];
    size_t long_names = 0;
    for (size_t i = 0; i < 15; i++) {
        names[i] = i < 10 ? ops[i].name : g->kernels[i - 10].name;
        long_names += strlen(names[i]) > 80;
    }
    assert_int_equal(long_names, 5);            /* the kernels; 4 leaves of 66-69 */
    static char figs_ref[15][256];
    const char *argv[] = { "analyze", p, NULL };
    pb_buf path = { 0 };
    for (size_t w = NWIDTHS; w-- > 0;) {
        char *out;
        set_columns(test_widths[w]);
        assert_int_equal(run_cmd(cmd_analyze, argv, &out, NULL), EXIT_OK);
        size_t top = line_cols(out, "  #  operation"), kern = line_cols(out, "  #  kernel");
        /* the name columns start 32 wide; the figures take 51 columns */
        long room = (long)test_width(w) - 51;
        for (size_t i = 0; i < 15; i++) {
            char lead[16], figs[256];
            size_t cols;
            bool split;
            snprintf(lead, sizeof lead, "  %3zu  ", i < 10 ? i + 1 : i - 9);
            if (!table_row(out, lead, names[i], figs, sizeof figs, &cols, &split)) {
                fprintf(stderr, "%s", out);
                fail_msg("COLUMNS=%s: no whole row for '%s' (above)", width_name(w), names[i]);
            }
            assert_int_equal(cols, i < 10 ? top : kern);     /* aligned */
            /* a line of its own exactly when wider than the column can grow */
            assert_int_equal(split, (long)strlen(names[i]) > (room > 32 ? room : 32));
            if (w == NWIDTHS - 1)
                snprintf(figs_ref[i], sizeof figs_ref[i], "%s", figs);
            else
                assert_string_equal(figs, figs_ref[i]);     /* never cut */
        }
        for (size_t i = 0; i < nb; i++) {       /* each finding's region: its path */
            if (bn[i].node == PRISM_NO_NODE)
                continue;
            report_path(prism_analysis_tree(a), bn[i].node, '/', false, &path);
            char want[400];
            snprintf(want, sizeof want, "    Region: %s\n", pb_buf_str(&path));
            assert_non_null(strstr(out, want));
        }
        if (!test_widths[w]) {                  /* unset, not a terminal: 100 */
            char *hundred;
            set_columns("100");
            assert_int_equal(run_cmd(cmd_analyze, argv, &hundred, NULL), EXIT_OK);
            assert_string_equal(out, hundred);
            free(hundred);
        }
        free(out);
    }
    pb_buf_free(&path);
    /* the figures as the units style writes them */
    char t[48], c[32], want[160];
    snprintf(want, sizeof want, "%s %s %.1f%% ", report_ns(t, sizeof t, (double)ops[3].total_ns, 0),
             report_count(c, sizeof c, (double)ops[3].calls, 0), ops[3].share * 100);
    assert_memory_equal(figs_ref[3], want, strlen(want));
    /* COLUMNS that is no positive integer is ignored */
    static const char *const bad[] = { "0", "-80", "+80", "80x", " 80", "", "abc" };
    char *dflt;
    set_columns(NULL);
    assert_int_equal(run_cmd(cmd_analyze, argv, &dflt, NULL), EXIT_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out;
        set_columns(bad[i]);
        assert_int_equal(run_cmd(cmd_analyze, argv, &out, NULL), EXIT_OK);
        if (strcmp(out, dflt))
            fail_msg("COLUMNS='%s' changed the report", bad[i]);
        free(out);
    }
    set_columns(NULL);
    free(dflt);
    prism_analysis_free(a);
}

/* The path of node n of t (a tree of the comparison's new side) as the
 * comparison has it. */
static const char *find_path(const prism_compare *c, const prism_tree *t, uint32_t n)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->deltas[i].path_hash == t->nodes[n].path_hash)
            return c->deltas[i].path;
    fail_msg("no delta for node %u", (unsigned)n);
    return NULL;
}

/* compare: the paths of the twelve layers, one 50 % slower, each whole on
 * its row at every width, no two rows alike, their figures whole (the
 * same at every width) and aligned under the header. */
static void compare_names_whole_at_any_width(void **state)
{
    fx *f = *state;
    char pa[512], pb[512];
    layered_fixture(path_in(pa, f->dir, "base.cbor"), 1, -1, false);
    layered_fixture(path_in(pb, f->dir, "new.cbor"), 2, 7, true);
    /* hot above 12 %: no layer in the base, layer 7 in the new profile */
    prism_analysis_opts o = { .bottleneck_threshold_pct = 12, .leak_threshold_mb = -1 };
    prism_analysis *a = report_load(pa, &o), *b = report_load(pb, &o);
    assert_non_null(a);
    assert_non_null(b);
    prism_compare *c = prism_compare_new(a, b);
    assert_non_null(c);
    enum { NPATHS = 2 + 2 * NLAYERS + 2 };     /* and layers.12, new */
    assert_int_equal(c->count, NPATHS);
    assert_int_equal(c->appeared, 2);
    assert_false(c->whole_run_shift);           /* no raw % column */
    assert_int_equal(c->nbn_new, 1);
    static char paths[NPATHS][256], figs_ref[NPATHS][256], rows[NPATHS][512];
    size_t long_paths = 0;
    for (size_t i = 0; i < c->count; i++) {
        snprintf(paths[i], sizeof paths[i], "%s", c->deltas[i].path);   /* < 256 bytes */
        long_paths += strlen(paths[i]) > 80;
    }
    assert_int_equal(long_paths, NLAYERS + 1);
    const char *argv[] = { "compare", pa, pb, "--top", "0", "--threshold", "12", NULL };
    for (size_t w = NWIDTHS; w-- > 0;) {
        char *out;
        set_columns(test_widths[w]);
        assert_int_equal(run_cmd(cmd_compare, argv, &out, NULL), EXIT_OK);
        size_t header = line_cols(out, "    path "), one_sided = 0;
        /* the path column starts 36 wide, the figures take 101 columns; a
         * new region's 60 and 16 */
        long room = (long)test_width(w) - 101, room1 = (long)test_width(w) - 16;
        for (size_t i = 0; i < c->count; i++) {
            const prism_delta *d = &c->deltas[i];
            bool both = d->base_node != PRISM_NO_NODE;
            char lead[8], figs[256];
            size_t cols = 0;
            bool split = false;
            snprintf(lead, sizeof lead, "  %c ",
                     d->significant ? '*' : d->raw_significant ? '~' : ' ');
            if (!table_row(out, both ? lead : "    ", paths[i], figs, sizeof figs, &cols,
                           &split)) {
                fprintf(stderr, "%s", out);
                fail_msg("COLUMNS=%s: no whole row for '%s' (above)", width_name(w), paths[i]);
            }
            char tb[48], tn[48], td[48], want[160];
            report_ns(tb, sizeof tb, d->base_ns, 0);
            report_ns(tn, sizeof tn, d->new_ns, 0);
            report_ns_signed(td, sizeof td, d->delta_ns, 0);
            if (both) {
                assert_int_equal(cols, header);
                assert_int_equal(split, (long)strlen(paths[i]) > (room > 36 ? room : 36));
                snprintf(want, sizeof want, "%s %s %s %+.1f%% %.2fx ", tb, tn, td,
                         d->delta_pct, d->speedup);
                assert_memory_equal(figs, want, strlen(want));
            } else {                            /* New regions: the two aligned */
                assert_true(one_sided == 0 || one_sided == cols);
                one_sided = cols;
                assert_int_equal(split, (long)strlen(paths[i]) > (room1 > 60 ? room1 : 60));
                assert_string_equal(figs, tn);
            }
            if (w == NWIDTHS - 1)
                snprintf(figs_ref[i], sizeof figs_ref[i], "%s", figs);
            else
                assert_string_equal(figs, figs_ref[i]);     /* never cut */
            snprintf(rows[i], sizeof rows[i], "%s%s %s", lead, paths[i], figs);
            for (size_t k = 0; k < i; k++)
                assert_string_not_equal(rows[i], rows[k]);
        }
        /* a finding on one side names its region by the whole path */
        for (size_t i = 0; i < c->nbn_new; i++) {
            char want[300];
            assert_int_not_equal(c->bn_new[i]->node, PRISM_NO_NODE);
            snprintf(want, sizeof want, "\n    Region: %s\n",
                     find_path(c, prism_analysis_tree(b), c->bn_new[i]->node));
            assert_non_null(strstr(strstr(out, "Bottlenecks that appeared:"), want));
        }
        /* the slower layer is the one flagged, by its whole path */
        assert_non_null(strstr(out, "\n  * TinyTransformer.forward/encoder/layers.7/"
                                    "encoder.layers.7.self_attn.in_proj_and_scaled_dot_product "
                                    "(backward)"));
        free(out);
    }
    set_columns(NULL);
    prism_compare_free(c);
    prism_analysis_free(b);
    prism_analysis_free(a);
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
        FX_TEST(analyze_names_whole_at_any_width),
        FX_TEST(compare_names_whole_at_any_width),
        cmocka_unit_test(json_writer_escapes),
        cmocka_unit_test(json_checker_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
