/*
 * gate_test.c - the regression gate (analysis/gate.c, reports/gate.c,
 * `prism-top compare --gate`) on seeded noisy runs (noisy_gen.h: every
 * region lognormal, sigma 0.3, with outliers; nothing depends on timing):
 *
 *   - planted +25 % in one region fails the gate on that region alone;
 *     +5 % passes (under the 10 % limit); two runs of the same code pass;
 *   - a machine 30 % slower (every region alike) passes, saying so, and
 *     fails with --fail-on-shift; the same plus +25 % in one region fails
 *     on that region;
 *   - a region that grows the step beyond the limit fails the step too;
 *   - several baselines: a region that drifts between runs of the same
 *     code does not fail on a change inside that drift (it would against
 *     one baseline); a real +25 % fails against all three;
 *   - real profiles (tests/fixtures/gate): one region of ~89 % of the step
 *     made 15 % slower is a regression, not a whole-run shift;
 *   - the command: exit 0 / 1 / 2, a folder of baselines, markdown and
 *     JSON (valid, with the decision), a profile without steps, an empty
 *     folder and a usage error (exit 2 with --gate), hostile names as text
 *     in markdown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prism/analysis.h"
#include "../reports/report.h"
#include "cli.h"

#define US 1000ull

#include "pbuild.h"
#include "noisy_gen.h"
#include "report_util.h"
#include "json_check.h"

enum { R_DATA, R_FORWARD, R_BACKWARD };

static gen slow_gen(uint64_t seed, int region, double factor)
{
    gen g = gen_default(seed);
    g.slow = region;
    g.slow_factor = factor;
    return g;
}

/* The gate of gn against the baselines gb[0..n). */
static prism_gate *gate_of(const gen *gb, size_t n, const gen *gn, const prism_gate_opts *o,
                           loaded *keep)
{
    const prism_analysis *base[8];
    assert_true(n < 8);
    for (size_t i = 0; i < n; i++) {
        keep[i] = noisy_profile(&gb[i]);
        base[i] = keep[i].a;
    }
    keep[n] = noisy_profile(gn);
    char msg[256];
    prism_gate *g = prism_gate_new(base, n, keep[n].a, o, msg, sizeof msg);
    assert_non_null(g);
    return g;
}

static void unload_all(loaded *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        unload(&l[i]);
}

static const prism_gate_item *item(const prism_gate *g, const char *path)
{
    for (size_t i = 0; i < g->count; i++)
        if (!g->items[i].is_step && !strcmp(g->items[i].path, path))
            return &g->items[i];
    return NULL;
}

static const prism_gate_item *step_item(const prism_gate *g)
{
    assert_true(g->count > 0);
    assert_true(g->items[0].is_step);
    return &g->items[0];
}

static void print_gate(const char *label, const prism_gate *g)
{
    printf("%s: %s, %zu failed, run x%.3f%s\n", label, g->regressed ? "FAIL" : "pass", g->failed,
           g->run_factor, g->whole_run_shift ? " (shift)" : "");
    for (size_t i = 0; i < g->count && i < 6; i++) {
        const prism_gate_item *it = &g->items[i];
        printf("  %-4s %-12s %+6.1f%% limit %5.1f%% slower in %zu of %zu p %.2g\n",
               it->regressed ? "FAIL" : "ok", it->is_step ? "(step)" : it->path, it->change_pct,
               it->limit_pct, it->slower, it->compared, it->p_value);
    }
}

/* ---- one baseline ------------------------------------------------------ */

static void test_planted_25_fails_on_it(void **state)
{
    (void)state;
    gen b = gen_default(21), n = slow_gen(22, R_FORWARD, 1.25);
    loaded l[2];
    prism_gate *g = gate_of(&b, 1, &n, NULL, l);
    print_gate("+25% forward", g);
    assert_true(g->regressed);
    assert_int_equal(g->failed, 1);
    const prism_gate_item *f = item(g, "forward");
    assert_non_null(f);
    assert_true(f->regressed);
    assert_true(f->change_pct > 15 && f->change_pct < 35);
    assert_int_equal(f->slower, 1);
    assert_false(step_item(g)->regressed);      /* forward is 2 of 9.3 ms: +5 % */
    assert_true(g->max_slowdown_pct == PRISM_GATE_DEFAULT_PCT);
    prism_gate_free(g);
    unload_all(l, 2);
}

static void test_planted_5_passes(void **state)
{
    (void)state;
    gen b = gen_default(31), n = slow_gen(32, R_FORWARD, 1.05);
    loaded l[2];
    prism_gate *g = gate_of(&b, 1, &n, NULL, l);
    print_gate("+5% forward", g);
    assert_false(g->regressed);
    assert_int_equal(g->failed, 0);
    prism_gate_free(g);
    unload_all(l, 2);
}

static void test_identical_passes(void **state)
{
    (void)state;
    for (uint64_t s = 41; s < 47; s += 2) {
        gen b = gen_default(s), n = gen_default(s + 1);
        loaded l[2];
        prism_gate *g = gate_of(&b, 1, &n, NULL, l);
        print_gate("same code", g);
        assert_false(g->regressed);
        assert_false(g->whole_run_shift);
        prism_gate_free(g);
        unload_all(l, 2);
    }
}

static void test_whole_run_shift(void **state)
{
    (void)state;
    gen b = gen_default(51), n = gen_default(52);
    n.scale = 1.3;
    loaded l[2];
    prism_gate *g = gate_of(&b, 1, &n, NULL, l);
    print_gate("machine 30% slower", g);
    assert_true(g->whole_run_shift);
    assert_true(g->run_factor > 1.2 && g->run_factor < 1.4);
    assert_false(g->regressed);
    assert_false(step_item(g)->regressed);      /* tested against the run factor */
    prism_gate_free(g);
    unload_all(l, 2);
    prism_gate_opts o = { 0, true };            /* <= 0: the default limit */
    g = gate_of(&b, 1, &n, &o, l);
    assert_true(g->shift_failed);
    assert_true(g->regressed);
    assert_int_equal(g->failed, 0);
    prism_gate_free(g);
    unload_all(l, 2);
    /* the shift plus +25 % in one region: that region */
    n.slow = R_BACKWARD;
    n.slow_factor = 1.25;
    g = gate_of(&b, 1, &n, NULL, l);
    print_gate("machine 30% slower, backward +25%", g);
    assert_true(g->regressed);
    assert_int_equal(g->failed, 1);
    assert_true(item(g, "backward")->regressed);
    prism_gate_free(g);
    unload_all(l, 2);
}

static void test_step_regresses(void **state)
{
    (void)state;
    gen b = gen_default(61), n = slow_gen(62, R_DATA, 1.6);   /* 3 of 9.3 ms, +60 % */
    loaded l[2];
    prism_gate *g = gate_of(&b, 1, &n, NULL, l);
    print_gate("data +60%", g);
    assert_true(g->regressed);
    const prism_gate_item *s = step_item(g);
    assert_true(s->regressed);
    assert_true(s->change_pct > 10);
    assert_true(item(g, "data")->regressed);
    assert_int_equal(g->failed, 2);
    prism_gate_free(g);
    unload_all(l, 2);
}

/* ---- several baselines --------------------------------------------------- */

static void test_baseline_noise(void **state)
{
    (void)state;
    /* forward drifts between runs of the same code: x1.0, x1.35, x0.8 */
    gen b[3] = { gen_default(71), slow_gen(72, R_FORWARD, 1.35), slow_gen(73, R_FORWARD, 0.8) };
    gen n = slow_gen(74, R_FORWARD, 1.3);
    loaded l[4];
    prism_gate *g = gate_of(b, 1, &n, NULL, l);
    print_gate("forward +30% against one baseline", g);
    assert_true(item(g, "forward")->regressed);
    prism_gate_free(g);
    unload_all(l, 2);
    g = gate_of(b, 3, &n, NULL, l);
    print_gate("forward +30% against three drifting baselines", g);
    const prism_gate_item *f = item(g, "forward");
    assert_non_null(f);
    assert_int_equal(f->compared, 3);
    assert_true(f->noise_pct > 40);             /* 1.35 / 0.8: +69 % */
    assert_true(f->limit_pct == f->noise_pct);
    assert_false(f->regressed);
    assert_false(g->regressed);
    prism_gate_free(g);
    unload_all(l, 4);
    /* three steady baselines and a real +25 %: slower against each */
    gen s[3] = { gen_default(81), gen_default(82), gen_default(83) };
    n = slow_gen(84, R_FORWARD, 1.25);
    g = gate_of(s, 3, &n, NULL, l);
    print_gate("forward +25% against three baselines", g);
    f = item(g, "forward");
    assert_true(f->regressed);
    assert_int_equal(f->slower, 3);
    assert_true(f->noise_pct < PRISM_GATE_DEFAULT_PCT);
    assert_int_equal(g->failed, 1);
    assert_int_equal(g->baselines, 3);
    prism_gate_free(g);
    unload_all(l, 4);
}

/* ---- the command ------------------------------------------------------- */

static int gate_cmd(const char *const *argv, char **out)
{
    char *err = NULL;
    int rc = run_cmd(cmd_compare, argv, out, &err);
    if (err && *err)
        printf("stderr: %s", err);
    free(err);
    return rc;
}

static void test_command(void **state)
{
    (void)state;
    char top[64];
    scratch_dir(top);
    char dir[128], b1[512], b2[512], same[512], slow[512], md[512], js[512];
    snprintf(dir, sizeof dir, "%s/base", top);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(b1, sizeof b1, "%s/run1.cbor", dir);
    snprintf(b2, sizeof b2, "%s/run2.cbor", dir);
    path_in(same, top, "same.cbor");
    path_in(slow, top, "slow.cbor");
    path_in(md, top, "gate.md");
    path_in(js, top, "gate.json");
    gen g1 = gen_default(91), g2 = gen_default(92), g3 = gen_default(93),
        g4 = slow_gen(94, R_FORWARD, 1.25);
    gen_write(&g1, b1);
    gen_write(&g2, b2);
    gen_write(&g3, same);
    gen_write(&g4, slow);
    char *out = NULL;

    /* the same code: 0; a text report that says pass */
    assert_int_equal(gate_cmd((const char *[]){ "compare", "--gate", dir, same, NULL }, &out), 0);
    assert_non_null(strstr(out, "PRISM gate: pass"));
    assert_non_null(strstr(out, "Baseline: 2 runs"));
    free(out);
    /* +25 %: 1, forward named as the failure */
    int rc = gate_cmd((const char *[]){ "compare", "--gate", dir, slow, NULL }, &out);
    printf("%s", out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "PRISM gate: FAIL"));
    assert_non_null(strstr(out, "FAIL  forward"));
    free(out);
    /* markdown into a file, the exit status still the decision */
    assert_int_equal(gate_cmd((const char *[]){ "compare", "--gate", b1, b2, slow, "--format",
                                                "markdown", "-o", md, NULL }, &out), 1);
    free(out);
    char *m = slurp(md, NULL);
    assert_non_null(m);
    assert_non_null(strstr(m, "### \u274c PRISM gate: FAIL: 1 regression"));
    assert_non_null(strstr(m, "| \u274c | forward |"));
    assert_non_null(strstr(m, "|---|"));
    free(m);
    /* JSON: valid, with the decision */
    assert_int_equal(gate_cmd((const char *[]){ "compare", "--gate", dir, slow, "--format",
                                                "json", "-o", js, NULL }, &out), 1);
    free(out);
    size_t len, where, values;
    char *j = slurp(js, &len);
    assert_true(json_valid(j, len, &where, &values));
    assert_non_null(strstr(j, "\"schema\": \"prism.gate/1\""));
    assert_non_null(strstr(j, "\"decision\": \"fail\""));
    assert_non_null(strstr(j, "\"new_complete\": true"));
    free(j);
    /* a new run cut short (no footer: a CI job killed by its timeout) is
     * gated on its steps so far, and the report says so */
    char cut[512];
    path_in(cut, top, "cut.cbor");
    size_t slen;
    char *bytes = slurp(slow, &slen);
    assert_non_null(bytes);
    FILE *cf = fopen(cut, "wb");
    assert_non_null(cf);
    assert_int_equal(fwrite(bytes, 1, slen - slen / 8, cf), slen - slen / 8);
    assert_int_equal(fclose(cf), 0);
    free(bytes);
    gate_cmd((const char *[]){ "compare", "--gate", dir, cut, NULL }, &out);
    assert_non_null(strstr(out, "new: "));
    assert_non_null(strstr(out, "(INCOMPLETE: the run was cut short; its steps so far are "
                                "compared)"));
    free(out);
    gate_cmd((const char *[]){ "compare", "--gate", dir, same, NULL }, &out);
    assert_null(strstr(out, "INCOMPLETE"));
    free(out);
    /* a higher limit lets it pass */
    assert_int_equal(gate_cmd((const char *[]){ "compare", "--gate", "--max-slowdown", "40", dir,
                                                slow, NULL }, &out), 0);
    free(out);

    /* errors: 2 with --gate, one line */
    char *err = NULL;
    char empty[128], nosteps[512];
    snprintf(empty, sizeof empty, "%s/empty", top);
    assert_int_equal(mkdir(empty, 0700), 0);
    assert_int_equal(run_cmd(cmd_compare, (const char *[]){ "compare", "--gate", empty, same,
                                                            NULL }, NULL, &err), 2);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "no profiles in the folder"));
    free(err);
    assert_int_equal(run_cmd(cmd_compare, (const char *[]){ "compare", "--gate", "--bogus", b1,
                                                            same, NULL }, NULL, &err), 2);
    free(err);
    assert_int_equal(run_cmd(cmd_compare, (const char *[]){ "compare", "--gate", same, NULL },
                             NULL, &err), 2);
    free(err);
    /* without --gate a usage error stays 1, markdown needs --gate */
    assert_int_equal(run_cmd(cmd_compare, (const char *[]){ "compare", b1, same, "--format",
                                                            "markdown", NULL }, NULL, &err), 1);
    free(err);
    path_in(nosteps, top, "nosteps.cbor");
    {
        static const char *const names[] = { "work" };
        pbuild b;
        pb_init(&b, names, 1, 1);
        pb_thread(&b, 1, "main");
        pb_enter(&b, 1, 1000, 1);
        pb_exit(&b, 1, 900000);
        pb_write_file(&b, nosteps);
    }
    assert_int_equal(run_cmd(cmd_compare, (const char *[]){ "compare", "--gate", b1, nosteps,
                                                            NULL }, NULL, &err), 2);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "the new run has no steps"));
    free(err);
    char missing[512];
    path_in(missing, top, "missing.cbor");
    assert_int_equal(run_cmd(cmd_compare, (const char *[]){ "compare", "--gate", dir, missing,
                                                            NULL }, NULL, &err), 2);
    assert_non_null(strstr(err, "No such file or directory"));
    free(err);
    scratch_remove(dir);
    scratch_remove(empty);
    scratch_remove(top);
}

/* Names from a file are text in markdown: no markup, no HTML, no table
 * cell broken by a pipe, no control character. */
/* Real profiles (tests/fixtures/gate): one region holding ~89 % of the
 * step made 15 % slower, three baselines of the same script.  Noisy small
 * regions near both no change and the dominant region's ratio once made
 * that regression a "whole-run shift" the gate passed; it fails, on it,
 * and the step, with the right sizes. */
static void test_dominant_region_regression(void **state)
{
    (void)state;
    const char *base = "tests/fixtures/gate/base", *slow = "tests/fixtures/gate/slow15.cbor";
    for (int shift = 0; shift < 2; shift++) {
        char *out = NULL;
        const char *argv[] = { "compare", "--gate", base, slow, shift ? "--fail-on-shift" : NULL,
                               NULL };
        int rc = gate_cmd(argv, &out);
        printf("%s", out);
        assert_int_equal(rc, 1);
        assert_non_null(strstr(out, "PRISM gate: FAIL"));
        assert_null(strstr(out, "every region alike"));
        const char *row = strstr(out, "FAIL  Net.forward/busy");
        assert_non_null(row);
        double base_ms, new_ms, pct;
        assert_int_equal(sscanf(row + 22, "%lf ms %lf ms %lf%%", &base_ms, &new_ms, &pct), 3);
        assert_true(pct > 13 && pct < 18);                 /* truth +15.0 % */
        assert_non_null(strstr(out, "FAIL  step"));
        /* a small region past the limit that is no regression says why */
        const char *ok = strstr(out, "ok    Net.forward/fc2"), *eol = ok ? strchr(ok, '\n') : NULL;
        assert_non_null(eol);
        const char *why = strstr(ok, "  within its noise");
        assert_true(why && why < eol);
        free(out);
    }
}

static void test_markdown_hostile_names(void **state)
{
    (void)state;
    static const char *const hostile[NREG] = {
        "<img src=x onerror=alert(1)>", "a|b*c*_d_[l](http://x)", "`code`\n# head",
        "\x1b[31mred", "ok", "e&amp;f", "\xe2\x80\xae" "evil", "~~s~~",
    };
    char top[64];
    scratch_dir(top);
    char b[512], n[512];
    path_in(b, top, "b.cbor");
    path_in(n, top, "n.cbor");
    gen gb = gen_default(101), gn = slow_gen(102, 1, 1.3);
    gb.names = gn.names = hostile;
    gen_write(&gb, b);
    gen_write(&gn, n);
    char *out = NULL;
    assert_int_equal(gate_cmd((const char *[]){ "compare", "--gate", "--top", "0", "--format",
                                                "markdown", b, n, NULL }, &out), 1);
    printf("%s", out);
    assert_null(strstr(out, "<img"));
    assert_null(strstr(out, "\x1b"));
    assert_null(strstr(out, "\xe2\x80\xae"));
    assert_null(strstr(out, "a|b"));
    assert_null(strstr(out, "\n# head"));
    assert_non_null(strstr(out, "&lt;img src\\=x onerror\\=alert\\(1\\)&gt;"));
    assert_non_null(strstr(out, "a\\|b\\*c\\*\\_d\\_\\[l\\]\\(http\\://x\\)"));
    /* every table row has the same number of cells */
    size_t rows = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != '|')
            continue;
        size_t pipes = 0;
        for (char *p = line; *p; p++)
            pipes += *p == '|' && (p == line || p[-1] != '\\');
        assert_int_equal(pipes, 9);
        rows++;
    }
    assert_true(rows >= 4);
    free(out);
    scratch_remove(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_25_fails_on_it),
        cmocka_unit_test(test_planted_5_passes),
        cmocka_unit_test(test_identical_passes),
        cmocka_unit_test(test_whole_run_shift),
        cmocka_unit_test(test_step_regresses),
        cmocka_unit_test(test_baseline_noise),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_markdown_hostile_names),
        cmocka_unit_test(test_dominant_region_regression),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
