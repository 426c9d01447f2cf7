/*
 * tree_layout_test.c - the Tree pane's pure parts beside treeview_test.c:
 * the columns at every width from 1 to 400 (the name column as wide as the
 * rows need, capped; figure columns whole and by priority; secondary
 * columns and a wider bar only on wide panes), the text cells (cut at the
 * end, at the start, counts), names elided in the middle
 * ("…" or ".."; escaped first), the reversed sort, the expansion put aside
 * by a filter and brought back, and one view copied to another tree
 * (compare mode's two sides); an empty or absent tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_util.h"
#include "../tui/treecols.h"
#include "../tui/treeview.h"
#include "units.h"

#define ALL_COLS ((1u << TC_N) - 1)

static int used(const int cw[TC_N])
{
    int u = 0, n = 0;
    for (int c = 0; c < TC_N; c++)
        if (cw[c]) {
            u += cw[c];
            n++;
        }
    return u + (n > 1 ? n - 1 : 0);
}

static void test_columns(void **state)
{
    (void)state;
    int cw[TC_N];
    for (int w = 1; w <= 400; w++)
        for (int need = 0; need <= 100; need += 7)
            for (unsigned avail = 0; avail <= ALL_COLS; avail += ALL_COLS / 5) {
                int shown = tc_layout(w, need, avail, NULL, cw);
                assert_true(used(cw) <= w);                 /* everything shown is whole */
                assert_true(cw[TC_NAME] >= 1);
                assert_true(cw[TC_NAME] <= TC_NAME_CAP);
                int n = 0;
                for (int c = 0; c < TC_N; c++) {
                    if (!cw[c])
                        continue;
                    n++;
                    if (c != TC_NAME)
                        assert_true(avail & (1u << c));     /* only what the view has */
                    if (c != TC_NAME && c != TC_BAR)
                        assert_int_equal(cw[c], tc_fixed(c));   /* whole figure columns */
                }
                assert_int_equal(shown, n);
                /* the name takes what it needs before a secondary column shows */
                int want = need < TC_NAME_MIN ? TC_NAME_MIN : need > TC_NAME_CAP ? TC_NAME_CAP : need;
                if (cw[TC_MEAN] || cw[TC_PARENT] || cw[TC_STEP] || cw[TC_STEPMAX] || cw[TC_CPU])
                    assert_int_equal(cw[TC_NAME], want);
                /* total before self before the rest */
                if (cw[TC_SELF] && (avail & (1u << TC_TOTAL)))
                    assert_true(cw[TC_TOTAL] > 0);
            }
    /* 80 columns, one profile: name, total, self, calls, %, a bar, mean */
    unsigned one = ALL_COLS & ~(1u << TC_DELTA | 1u << TC_CPU);
    tc_layout(80, 25, one, NULL, cw);
    assert_int_equal(cw[TC_NAME], 25);
    assert_true(cw[TC_TOTAL] && cw[TC_SELF] && cw[TC_CALLS] && cw[TC_PCT] && cw[TC_BAR]);
    assert_true(used(cw) <= 80);
    /* 200 columns: the secondary columns and a wide bar, little left blank */
    tc_layout(200, 25, one, NULL, cw);
    assert_true(cw[TC_MEAN] && cw[TC_PARENT] && cw[TC_STEP] && cw[TC_STEPMAX]);
    assert_true(cw[TC_BAR] >= 200 / 3 - 1);
    assert_true(used(cw) >= 150);
    /* a compare side of 59 columns: the name (the 23 wanted) before self,
     * %, calls and the bar; the total and the change ("+12.30 ms +12.3%",
     * 16) after it */
    tc_layout(59, 23, ALL_COLS, NULL, cw);
    assert_int_equal(cw[TC_NAME], 23);
    assert_true(cw[TC_TOTAL] && cw[TC_DELTA]);
    assert_int_equal(cw[TC_CALLS], 0);
    /* names take half the width (29 of 59) before any figure, then the
     * total and the change, then what is left (3) */
    tc_layout(59, 40, ALL_COLS, NULL, cw);
    assert_int_equal(cw[TC_NAME], 32);
    assert_true(cw[TC_TOTAL] && cw[TC_DELTA] && !cw[TC_SELF]);
    /* at 40 columns: 20, the total, then self (the change is too wide) */
    tc_layout(40, 40, ALL_COLS, NULL, cw);
    assert_int_equal(cw[TC_NAME], 20);
    assert_true(cw[TC_TOTAL] && cw[TC_SELF] && !cw[TC_DELTA]);
    /* 1 column: the name only */
    assert_int_equal(tc_layout(1, 40, ALL_COLS, NULL, cw), 1);
    assert_int_equal(cw[TC_NAME], 1);
    /* a figure wider than its column widens it */
    int want[TC_N] = { 0 };
    want[TC_TOTAL] = want[TC_SELF] = 11;
    tc_layout(80, 20, one, want, cw);
    assert_int_equal(cw[TC_TOTAL], 11);
    assert_int_equal(cw[TC_SELF], 11);
    assert_true(used(cw) <= 80);
    want[TC_TOTAL] = 3;                                 /* narrower: the default */
    tc_layout(80, 20, one, want, cw);
    assert_int_equal(cw[TC_TOTAL], tc_fixed(TC_TOTAL));
    assert_string_equal(tc_title(TC_TOTAL), "total");
    assert_string_equal(tc_title(-1), "");
}

static void test_text(void **state)
{
    (void)state;
    char b[64];
    assert_int_equal(tv_fit(b, sizeof b, "forward", 10, true), 7);
    assert_string_equal(b, "forward");
    assert_int_equal(tv_fit(b, sizeof b, "forward", 4, true), 4);
    assert_string_equal(b, "for\u2026");
    tv_fit(b, sizeof b, "forward", 4, false);
    assert_string_equal(b, "for~");
    assert_int_equal(tv_fit(b, sizeof b, "forward", 0, true), 0);
    assert_string_equal(b, "");
    tv_fit(b, sizeof b, "\u03b1\u03b2\u03b3\u03b4", 3, true);  /* code points, not bytes */
    assert_string_equal(b, "\u03b1\u03b2\u2026");
    assert_int_equal(tv_fit(b, 4, "forward", 10, false), 3);   /* the buffer bounds it */
    assert_string_equal(b, "for");
    assert_int_equal(tv_fit_left(b, sizeof b, "a/b/c/d", 5, true), 5);
    assert_string_equal(b, "\u2026/c/d");
    tv_fit_left(b, sizeof b, "a/b/c/d", 5, false);
    assert_string_equal(b, "~/c/d");
    tv_fit_left(b, sizeof b, "a/b", 5, false);
    assert_string_equal(b, "a/b");
    fmt_count(b, sizeof b, 9999);            /* the calls column's counts */
    assert_string_equal(b, "9999");
    fmt_count(b, sizeof b, 12345);
    assert_string_equal(b, "12.3 k");
    fmt_count(b, sizeof b, 4560000);
    assert_string_equal(b, "4.6 M");
    assert_string_equal(tv_sort_name(TV_SORT_CALLS), "calls");
}

static int cols(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xc0) != 0x80;
    return n;
}

static void test_fit_mid(void **state)
{
    (void)state;
    char b[128];
    assert_int_equal(tv_fit_mid(b, sizeof b, "layer.12.attention", 30, true), 18);
    assert_string_equal(b, "layer.12.attention");
    assert_int_equal(tv_fit_mid(b, sizeof b, "layer.12.attention", 11, true), 11);
    assert_string_equal(b, "layer\u2026ntion");
    assert_int_equal(tv_fit_mid(b, sizeof b, "layer.12.attention", 11, false), 11);
    assert_string_equal(b, "layer..tion");
    tv_fit_mid(b, sizeof b, "abcdef", 2, false);        /* no room for both ends */
    assert_string_equal(b, "ab");
    tv_fit_mid(b, sizeof b, "abcdef", 0, true);
    assert_string_equal(b, "");
    tv_fit_mid(b, sizeof b, "a\x1b[31mred", 40, true);  /* escaped first */
    assert_string_equal(b, "a\\x1b[31mred");
    tv_fit_mid(b, sizeof b, "\xc2\xb5s-\xc2\xb5s-\xc2\xb5s-\xc2\xb5s", 5, true);
    assert_int_equal(cols(b), 5);
    assert_string_equal(b, "\xc2\xb5s\u2026\xc2\xb5s");
    for (int w = 0; w < 30; w++) {                      /* never wider than asked */
        assert_true(tv_fit_mid(b, sizeof b, "step/forward/layer.11/attention", w, w % 2) <= w);
        assert_true(cols(b) <= w);
    }
    char tiny[5];
    tv_fit_mid(tiny, sizeof tiny, "layer.12.attention", 10, true);
    assert_true(strlen(tiny) < sizeof tiny);
}

/* ---- on a real tree ---------------------------------------------------------- */

static prism_analysis *ref(void)
{
    refgen_opts o = vu_ref_opts(5, 0);
    return vu_ref_temp(&o);
}

static bool matches_all(const char *name, void *ctx)
{
    (void)name; (void)ctx;
    return true;
}

static void test_empty(void **state)
{
    (void)state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, NULL, false);
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, 0);
    prism_tree empty = { NULL, 0, PRISM_NO_NODE, 0 };
    tv_set_tree(&tv, &empty, false);
    tv_set_level(&tv, TV_ALL);
    tv_set_sort(&tv, TV_SORT_NAME);
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, 0);
    assert_int_equal(tv_find(&tv, 123), PRISM_NO_NODE);
    assert_true(tv_row_of(&tv, 0, true) == TV_NONE);
    assert_int_equal(tv_next_match(&tv, PRISM_NO_NODE, 1, matches_all, NULL), PRISM_NO_NODE);
    tv_free(&tv);
}

static void test_reverse(void **state)
{
    (void)state;
    prism_analysis *a = ref();
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, prism_analysis_tree(a), true);
    for (tv_sort s = 0; s < TV_SORT_COUNT; s++) {
        tv_set_sort(&tv, s);
        tv_set_reverse(&tv, false);
        assert_int_equal(tv_descending(&tv), s != TV_SORT_NAME);
        for (size_t i = 0; i < tv.count; i++) {
            size_t n = 0, m = 0;
            const uint32_t *k = tv_children(&tv, (uint32_t)i, &n);
            uint32_t fwd[64];
            if (!n || n > 64)
                continue;
            memcpy(fwd, k, n * sizeof *k);
            tv_set_reverse(&tv, true);
            assert_int_equal(tv_descending(&tv), s == TV_SORT_NAME);
            k = tv_children(&tv, (uint32_t)i, &m);
            assert_int_equal(m, n);
            for (size_t j = 0; j < n; j++)              /* the same siblings, reversed */
                assert_int_equal(k[j], fwd[n - 1 - j]);
            tv_set_reverse(&tv, false);
        }
    }
    tv_free(&tv);
    prism_analysis_free(a);
}

static void test_expansion(void **state)
{
    (void)state;
    prism_analysis *a = ref();
    const prism_tree *t = prism_analysis_tree(a);
    treeview tv, other;
    tv_init(&tv);
    tv_init(&other);
    tv_set_tree(&tv, t, true);
    tv_rebuild(&tv);
    size_t roots = tv.nrows;
    uint32_t open = tv.rows[0];                 /* open the first root's first child */
    tv_set_expanded(&tv, open, true);
    tv_rebuild(&tv);
    size_t kids = 0;
    uint32_t child = tv_children(&tv, open, &kids)[0];
    tv_set_expanded(&tv, child, true);
    tv_rebuild(&tv);
    size_t before = tv.nrows;
    assert_true(before > roots);

    tv_expansion_save(&tv);                     /* a filter: everything open */
    tv_expansion_save(&tv);                     /* twice keeps the first */
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, t->count);
    tv_set_expanded(&tv, open, false);          /* folding while filtered */
    tv_expansion_restore(&tv);
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, before);         /* the expansion as it was */
    assert_true(tv_expanded(&tv, open) && tv_expanded(&tv, child));
    tv_expansion_restore(&tv);                  /* nothing put aside: no change */
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, before);

    tv_set_sort(&tv, TV_SORT_NAME);             /* the other side gets the same view */
    tv_set_reverse(&tv, true);
    tv_rebuild(&tv);
    tv_set_tree(&other, t, true);
    assert_true(tv_copy_view(&other, &tv));
    tv_rebuild(&other);
    assert_int_equal(other.nrows, tv.nrows);
    assert_memory_equal(other.rows, tv.rows, tv.nrows * sizeof *tv.rows);
    assert_int_equal(other.sort, TV_SORT_NAME);
    assert_true(other.reverse);
    tv_free(&tv);
    tv_free(&other);
    prism_analysis_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_fit_mid),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_reverse),
        cmocka_unit_test(test_expansion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
