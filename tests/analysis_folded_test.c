/*
 * analysis_folded_test.c - prism.torch's adaptive module regions as the
 * analysis and the reports see them: the INFO torch.modules.* facts
 * (prism_analysis_folded), the `Modules folded:` line of the analyze text
 * (a long list cut between names, never in one) and the JSON's
 * summary.folded_modules; nothing of it in a profile that
 * does not say; and the facts written by a real session through
 * libcollect's queue (prism__info_uint / prism__info_text, info.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbuild.h"
#include "collect_util.h"
#include "report_text.h"
#include "prism/collect.h"

bool prism__info_text(const char *key, const char *text);     /* libcollect/internal.h */
bool prism__info_uint(const char *key, uint64_t value);

static const char *const names[] = { "Net.forward", "layer.0" };

#define MS 1000000ull

/* folded: the decision's INFO, with these names of that many modules
 * (NULL: "layer.0" of one). */
static loaded profile_of(pbuild *b, bool folded, const char *fnames, uint64_t nfolded)
{
    pb_init(b, names, 2, 1);
    pb_thread(b, 1, "MainThread");
    pb_info_uint(b, "steps.thread", 1);
    for (uint64_t k = 0; k < 8; k++) {
        uint64_t t0 = MS + k * 10 * MS;
        pb_enter(b, 1, t0, 1);
        if (k < 5) {                        /* measured: the child recorded */
            pb_enter(b, 1, t0 + MS, 2);
            pb_exit(b, 1, t0 + 2 * MS);
        }
        pb_exit(b, 1, t0 + 8 * MS);
        prism_step st = { t0, t0 + 10 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(b, &st);
        if (k == 4 && folded) {             /* the decision, after step 5 */
            pb_info_uint(b, "torch.modules.after_steps", 5);
            pb_info_uint(b, "torch.modules.cost_ns", 9000);
            pb_info_uint(b, "torch.modules.threshold_ns", 450000);
            pb_info_uint(b, "torch.modules.kept", 1);
            pb_info_uint(b, "torch.modules.folded", fnames ? nfolded : 1);
            pb_info_text(b, "torch.modules.folded_names", fnames ? fnames : "layer.0");
            pb_info_text(b, "torch.modules.later", "ignored");      /* unknown: no harm */
        }
    }
    return pb_load(b);
}

static loaded profile(pbuild *b, bool folded)
{
    return profile_of(b, folded, NULL, 0);
}

static void test_folded_read_and_reported(void **state)
{
    (void)state;
    pbuild b;
    loaded l = profile(&b, true);
    prism_folded fo;
    assert_true(prism_analysis_folded(l.a, &fo));
    assert_int_equal(fo.after_steps, 5);
    assert_int_equal(fo.kept, 1);
    assert_int_equal(fo.folded, 1);
    assert_int_equal(fo.threshold_ns, 450000);
    assert_int_equal(fo.cost_ns, 9000);
    assert_string_equal(fo.names, "layer.0");
    /* the tree stays exact: the child's 5 measured calls, the parent whole */
    size_t n;
    const prism_op *ops = prism_analysis_ops(l.a, &n);
    bool seen = false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ops[i].name, "layer.0")) {
            assert_int_equal(ops[i].calls, 5);
            seen = true;
        }
    assert_true(seen);
    char *t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  Modules folded: 1 of 2 module regions after step 5 "
                              "(a forward under 450.0 us a call, 50 x PRISM's 9.0 us)"));
    assert_non_null(strstr(t, "    folded: layer.0\n"));
    free(t);
    char *j = report_text_of(l.a, true);
    const char *fm = strstr(j, "\"folded_modules\": {");
    assert_non_null(fm);
    const char *keys[] = { "\"after_steps\": 5,", "\"folded\": 1,", "\"kept\": 1,",
                           "\"threshold_ns\": 450000,", "\"cost_ns\": 9000,",
                           "\"names\": \"layer.0\"" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_non_null(strstr(fm, keys[i]));
    free(j);
    unload(&l);
}

static void test_nothing_when_not_said(void **state)
{
    (void)state;
    pbuild b;
    loaded l = profile(&b, false);
    prism_folded fo;
    assert_false(prism_analysis_folded(l.a, &fo));
    assert_int_equal(fo.folded, 0);
    assert_string_equal(fo.names, "");
    assert_false(prism_analysis_folded(NULL, NULL));
    char *t = report_text_of(l.a, false);
    assert_null(strstr(t, "Modules folded"));
    free(t);
    char *j = report_text_of(l.a, true);
    assert_non_null(strstr(j, "\"folded_modules\": null"));
    free(j);
    unload(&l);
}

/* A session queues the facts; the writer's next flush writes them. */
static int session_child(void *arg)
{
    const char *path = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    c.collect_memory = false;
    c.cpu_interval_ms = 0;
    CHILD_CHECK(prism_init(&c) == 0);
    prism_push("Net.forward");
    prism_pop();
    CHILD_CHECK(prism__info_uint("torch.modules.after_steps", 3));
    CHILD_CHECK(prism__info_uint("torch.modules.folded", 40));
    CHILD_CHECK(prism__info_uint("torch.modules.kept", 2));
    char big[5000];                     /* cut to the format's 4096 bytes */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CHILD_CHECK(prism__info_text("torch.modules.folded_names", big));
    CHILD_CHECK(!prism__info_text("", "no key"));
    CHILD_CHECK(!prism__info_text("k", NULL));
    prism_shutdown();
    CHILD_CHECK(!prism__info_uint("torch.modules.kept", 1));     /* no session */
    return 0;
}

static void test_session_writes_info(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char path[512];
    tdir_file(&d, "info.cbor", path, sizeof path);
    child_run_ok(session_child, path);
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    prism_folded fo;
    assert_true(prism_analysis_folded(a, &fo));
    assert_int_equal(fo.after_steps, 3);
    assert_int_equal(fo.folded, 40);
    assert_int_equal(fo.kept, 2);
    assert_int_equal(strlen(fo.names), 4096);
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* A long list: the text shows its first names, each whole, up to about
 * 300 bytes, and how many more there are (the JSON has the list). */
static void test_folded_names_whole(void **state)
{
    (void)state;
    char list[2048] = "";
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%sencoder.layers.%d.self_attn",
                              i ? ", " : "", i);
    pbuild b;
    loaded l = profile_of(&b, true, list, 40);
    char *t = report_text_of(l.a, false);
    const char *line = strstr(t, "    folded: ");
    assert_non_null(line);
    line += strlen("    folded: ");
    const char *eol = strchr(line, '\n');
    const char *more = strstr(line, ", ... (");
    assert_true(more && more < eol);
    int shown = 0;
    for (const char *p = line; p < more; shown++) {
        char want[64];
        int len = snprintf(want, sizeof want, "encoder.layers.%d.self_attn", shown);
        assert_memory_equal(p, want, (size_t)len);              /* whole */
        p += len;
        assert_true(p == more || !strncmp(p, ", ", 2));
        p += p == more ? 0 : 2;
    }
    assert_true((size_t)(more - line) > 300 && (size_t)(more - line) < 330);
    char tail[32];
    snprintf(tail, sizeof tail, ", ... (%d more)\n", 40 - shown);
    assert_memory_equal(more, tail, strlen(tail));
    free(t);
    unload(&l);
}

/* A profile without steps (an inference loop: the decision came after
 * root forwards) still says what was folded, without a step number (the
 * line was left out with the steps' coverage, and a folded layer's third
 * of its siblings' calls read as "it ran less"). */
static void test_folded_without_steps(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 2, 1);
    pb_thread(&b, 1, "MainThread");
    for (uint64_t k = 0; k < 8; k++) {
        uint64_t t0 = MS + k * 10 * MS;
        pb_enter(&b, 1, t0, 1);
        if (k < 5) {
            pb_enter(&b, 1, t0 + MS, 2);
            pb_exit(&b, 1, t0 + 2 * MS);
        }
        pb_exit(&b, 1, t0 + 8 * MS);
        if (k == 4) {
            pb_info_uint(&b, "torch.modules.after_steps", 1);
            pb_info_uint(&b, "torch.modules.cost_ns", 9000);
            pb_info_uint(&b, "torch.modules.threshold_ns", 450000);
            pb_info_uint(&b, "torch.modules.kept", 1);
            pb_info_uint(&b, "torch.modules.folded", 1);
            pb_info_text(&b, "torch.modules.folded_names", "layer.0");
        }
    }
    loaded l = pb_load(&b);
    char *t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  Steps: none recorded"));
    assert_non_null(strstr(t, "  Modules folded: 1 of 2 module regions after their first calls "
                              "(a forward under 450.0 us a call"));
    assert_non_null(strstr(t, "    folded: layer.0\n"));
    free(t);
    unload(&l);
}

/* Nothing folded, and why (torch.compile in use): said in words, escaped
 * (the text is the file's); an older reader's figures stay. */
static void test_kept_why(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 2, 1);
    pb_thread(&b, 1, "MainThread");
    for (uint64_t k = 0; k < 8; k++) {
        pb_enter(&b, 1, MS + k * 10 * MS, 1);
        pb_exit(&b, 1, MS + k * 10 * MS + 8 * MS);
        prism_step st = { MS + k * 10 * MS, MS + k * 10 * MS + 10 * MS, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    pb_info_uint(&b, "torch.modules.after_steps", 5);
    pb_info_uint(&b, "torch.modules.kept", 3);
    pb_info_uint(&b, "torch.modules.folded", 0);
    pb_info_text(&b, "torch.modules.folded_names", "");
    pb_info_text(&b, "torch.modules.kept_why", "torch.compile compiled \x1b[2J them");
    loaded l = pb_load(&b);
    prism_folded fo;
    assert_true(prism_analysis_folded(l.a, &fo));
    assert_int_equal(fo.folded, 0);
    assert_int_equal(fo.kept, 3);
    assert_string_equal(fo.why, "torch.compile compiled \x1b[2J them");
    char *t = report_text_of(l.a, false);
    assert_non_null(strstr(t, "  Modules folded: none (torch.compile compiled "));
    assert_null(strchr(t, '\x1b'));
    assert_null(strstr(t, "    folded: "));
    free(t);
    char *j = report_text_of(l.a, true);
    assert_non_null(strstr(j, "\"why\": \"torch.compile compiled \\u001b[2J them\""));
    free(j);
    unload(&l);
    /* not said: "" */
    loaded m = profile(&b, true);
    assert_true(prism_analysis_folded(m.a, &fo));
    assert_string_equal(fo.why, "");
    unload(&m);
    assert_false(prism_analysis_folded(NULL, &fo));
    assert_string_equal(fo.why, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folded_read_and_reported),
        cmocka_unit_test(test_folded_names_whole),
        cmocka_unit_test(test_nothing_when_not_said),
        cmocka_unit_test(test_session_writes_info),
        cmocka_unit_test(test_kept_why),
        cmocka_unit_test(test_folded_without_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
