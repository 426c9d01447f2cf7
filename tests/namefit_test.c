/*
 * namefit_test.c - names in a column that stay told apart (tui/namefit.c):
 * the shared start of a row's name with its neighbours goes first, then
 * words shorten from the left; names that differ only in a middle index
 * render differently at every width that can hold the index, and no cell
 * is ever wider than its column or carries a raw control character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../tui/namefit.h"

static int cells(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xc0) != 0x80;
    return n;
}

static void test_common(void **st)
{
    (void)st;
    assert_int_equal(nf_common("encoder.layers.5.linear1", "encoder.layers.4.linear1"), 15);
    assert_int_equal(nf_common("layers.10.fc", "layers.11.fc"), 7);    /* whole words */
    assert_int_equal(nf_common("encoder.layers.0.self_attn", "encoder.layers.0"), 17);
    assert_int_equal(nf_common("encoder.layers.0", "encoder.layers.0.self_attn"), 15);
    assert_int_equal(nf_common("a.b", "a.c"), 0);                      /* too short */
    assert_int_equal(nf_common("same.name", "same.name"), 5);          /* never all */
    assert_int_equal(nf_common("forward", "backward"), 0);
    assert_int_equal(nf_common(NULL, "x"), 0);
}

static void test_shared(void **st)
{
    (void)st;
    const char *names[] = { "backward", "encoder.layers.5.linear2 (backward)",
                            "encoder.layers.4.linear2 (backward)", "TinyTransformer.forward",
                            "encoder.layers.5.linear1", NULL, "backward" };
    size_t out[7];
    nf_shared(names, 7, out);
    assert_int_equal(out[0], 0);        /* only the same name shares its word */
    assert_int_equal(out[1], 15);
    assert_int_equal(out[2], 15);
    assert_int_equal(out[3], 0);
    assert_int_equal(out[4], 15);
    assert_int_equal(out[5], 0);
}

static void test_fit_keeps_what_differs(void **st)
{
    (void)st;
    char out[512];
    const char *n = "encoder.layers.5.linear2 (backward)";
    assert_int_equal(nf_fit(out, sizeof out, n, 15, 40, true), 35);
    assert_string_equal(out, n);        /* fits: whole */
    nf_fit(out, sizeof out, n, 15, 21, true);
    assert_string_equal(out, "\u20265.linear2 (backward)");
    nf_fit(out, sizeof out, n, 15, 21, false);
    assert_string_equal(out, "~5.linear2 (backward)");
    const char *m = "encoder.layers.11.self_attn.out_proj (backward)";
    nf_fit(out, sizeof out, m, 15, 26, true);
    assert_string_equal(out, "\u202611.s.out_proj (backward)");
    nf_fit(out, sizeof out, m, 0, 30, true);    /* nothing shared: words shorten */
    assert_string_equal(out, "e.l.11.s.out_proj (backward)");
    /* the leaf stays whole before "(backward)"; then the middle goes */
    nf_fit(out, sizeof out, "encoder.layers.5.linear2 (backward)", 0, 24, true);
    assert_string_equal(out, "e.l.5.linear2 (backward)");
    nf_fit(out, sizeof out, "encoder.layers.5.linear2 (backward)", 0, 20, true);
    assert_string_equal(out, "e.l.5.line\u2026backward)");
    assert_int_equal(nf_need(m, 15), 33);
    assert_int_equal(nf_need(m, 0), 47);
    /* a Python frame: the function's name is the leaf, before the
     * "(file:line)" group, whose folders shorten before the middle goes */
    const char *py = "~ Module._call_impl.<locals>.inner (modules/module.py:1789)";
    nf_fit(out, sizeof out, py, 0, 36, true);
    assert_string_equal(out, "~ M._.<.inner (m/module.py:1789)");
    nf_fit(out, sizeof out, "~ Queue.get (multiprocessing/queues.py:122)", 0, 28, true);
    assert_string_equal(out, "~ Q.get (m/queues.py:122)");
}

/* torch.profiler's Python frames (with_stack) and built-ins: the file keeps
 * its name while folders can go, the function or the built-in's NAME stays
 * whole, and what is cut is cut with an ellipsis, never every word
 * shortened to a letter ("…r o t._._ o a 0x...>", "…a/_.py(255): backward"). */
static void test_torch_frames(void **st)
{
    (void)st;
    char out[512];
    const char *py = "torch/autograd/__init__.py(255): backward";
    nf_fit(out, sizeof out, py, 6, 36, true);           /* "torch/" shared */
    assert_string_equal(out, "\u2026autograd/__init__.py(255): backward");
    nf_fit(out, sizeof out, py, 6, 30, true);
    assert_string_equal(out, "\u2026a/__init__.py(255): backward");
    nf_fit(out, sizeof out, py, 0, 30, true);
    assert_string_equal(out, "t/a/__init__.py(255): backward");
    nf_fit(out, sizeof out, py, 0, 28, false);
    assert_string_equal(out, "~__init__.py(255): backward");
    nf_fit(out, sizeof out, py, 0, 20, true);
    assert_string_equal(out, "\u2026backward");
    /* a shared start folds folders only, never the file's name */
    const char *op = "torch/_ops.py(1089): __call__";
    assert_int_equal(nf_need(op, 11), 1 + 23);          /* "torch/_ops." -> "torch/" */
    nf_fit(out, sizeof out, op, 11, 25, true);
    assert_string_equal(out, "\u2026_ops.py(1089): __call__");
    const char *bi = "<built-in method run_backward of torch._C._EngineBase object at 0x...>";
    nf_fit(out, sizeof out, bi, 0, 60, true);
    assert_string_equal(out, "<built-in method run_backward of torch._C._EngineBase\u2026");
    nf_fit(out, sizeof out, bi, 0, 40, true);            /* not "... of…" */
    assert_string_equal(out, "<built-in method run_backward\u2026");
    nf_fit(out, sizeof out, bi, 17, 20, true);           /* the shared start does not matter */
    assert_string_equal(out, "\u2026run_backward\u2026");
    nf_fit(out, sizeof out, bi, 0, 20, false);
    assert_string_equal(out, "~run_backward~");
    nf_fit(out, sizeof out, "<built-in function sleep>", 0, 20, true);
    assert_string_equal(out, "\u2026sleep>");
    nf_fit(out, sizeof out, "<method 'add_' of 'torch._C.TensorBase' objects>", 0, 16, true);
    assert_string_equal(out, "<method 'add_'\u2026");
    for (int w = 4; w <= 80; w++) {
        int c = nf_fit(out, sizeof out, py, 0, w, true);
        assert_true(c <= w);
        assert_int_equal(cells(out), c);
        if (strstr(out, ".py") && !strstr(out, "__init__.py"))
            fail_msg("width %d: the file lost its name: \"%s\"", w, out);
        if (w >= 9 && !strstr(out, "backward"))
            fail_msg("width %d: the function lost its name: \"%s\"", w, out);
        c = nf_fit(out, sizeof out, bi, 0, w, true);
        assert_true(c <= w);
        assert_int_equal(cells(out), c);
        if (w >= 14 && !strstr(out, "run_backward"))
            fail_msg("width %d: the built-in lost its name: \"%s\"", w, out);
        if (strstr(out, " o ") || strstr(out, "t._"))
            fail_msg("width %d: words shortened to a letter: \"%s\"", w, out);
    }
    /* small buffers, hostile bytes: whole code points, the columns said */
    const char *odd[] = { py, bi, "<built-in method \x1b[2J of \xe2\x80\xae object at 0x...>",
                          "\xc3\xa9t\xc3\xa9/\xc3\xa9.py(1): \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" };
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
        for (size_t cap = 1; cap < 48; cap++)
            for (int w = 4; w < 40; w += 5) {
                int c = nf_fit(out, cap, odd[k], 0, w, true);
                assert_true(strlen(out) < cap);
                assert_true(c <= w);
                assert_int_equal(cells(out), c);
                for (const unsigned char *p = (const unsigned char *)out; *p; p++)
                    assert_true(*p >= 0x20 && *p != 0x7f);
            }
}

/* Names that differ only in a middle index (and forward/backward): every
 * width, every cell within it; from the width that holds the index and a
 * letter of the leaf on, no two alike. */
static void test_every_width(void **st)
{
    (void)st;
    enum { N = 48 };
    static char name[N][96];
    const char *names[N];
    static const char *const leaf[] = { "self_attn.out_proj", "linear1" };
    for (int i = 0; i < N; i++) {
        snprintf(name[i], sizeof name[i], "model.encoder.layers.%d.%s%s", i % 12, leaf[i / 12 % 2],
                 i / 24 ? " (backward)" : "");
        names[i] = name[i];
    }
    size_t shared[N];
    nf_shared(names, N, shared);
    for (int w = 0; w <= 80; w++) {
        char out[N][256];
        for (int i = 0; i < N; i++) {
            int c = nf_fit(out[i], sizeof out[i], names[i], shared[i], w, w % 2);
            assert_true(c <= w);
            assert_int_equal(cells(out[i]), c);
        }
        if (w < 16)
            continue;
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++)
                if (!strcmp(out[i], out[j]))
                    fail_msg("width %d: \"%s\" and \"%s\" both read \"%s\"", w, names[i],
                             names[j], out[i]);
    }
}

static void test_hostile(void **st)
{
    (void)st;
    char out[512];
    const char *names[] = { "evil.\x1b[2J.one", "evil.\x1b[2J.two", "\xff\xfe.x.y", "" };
    size_t shared[4];
    nf_shared(names, 4, shared);
    for (int w = 0; w < 30; w++)
        for (int i = 0; i < 4; i++) {
            int c = nf_fit(out, sizeof out, names[i], shared[i], w, true);
            assert_true(c <= w);
            for (const unsigned char *p = (const unsigned char *)out; *p; p++)
                assert_true(*p >= 0x20 && *p != 0x7f);
        }
    assert_int_equal(nf_fit(out, 1, "abc", 0, 10, true), 0);   /* no room at all */
    assert_int_equal(nf_fit(out, 0, "abc", 0, 10, true), 0);
    assert_int_equal(nf_fit(out, sizeof out, NULL, 0, 10, true), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common),
        cmocka_unit_test(test_shared),
        cmocka_unit_test(test_fit_keeps_what_differs),
        cmocka_unit_test(test_torch_frames),
        cmocka_unit_test(test_every_width),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
