/*
 * flame_view_test.c - the Flame pane's vertical window (flame_window_fit)
 * over every layout depth, pane height, selected row and previous top up
 * to 60 rows: the selection always shows, the window and its markers fit
 * the height, hidden levels add up, no row is wasted and the window stays
 * put while the selection stays inside it; the list below a shallow flame
 * (flame_list_fit, flame_list_top) at every height; then the palette: every pair
 * reads (contrast rule), black or white text whichever reads better, and
 * the xterm colour table; the text of a change (flame_change_text) in the
 * explorer's one style for durations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>

#include "../tui/flame.h"
#include "../tui/flame_paint.h"

static void check_window(int rows, int height, int sel, int top)
{
    flame_window w = flame_window_fit(rows, height, sel, top);
    char what[96];
    snprintf(what, sizeof what, "rows %d height %d sel %d top %d", rows, height, sel, top);
    if (rows <= 0 || height <= 0) {
        assert_int_equal(w.shown, 0);
        return;
    }
    assert_true(w.shown >= 1);
    assert_true(w.top >= 0 && w.top + w.shown <= rows);
    assert_int_equal(w.above, w.top);
    assert_int_equal(w.below, rows - w.top - w.shown);
    if (rows <= height) {               /* it all fits: no window */
        assert_int_equal(w.top, 0);
        assert_int_equal(w.shown, rows);
        assert_int_equal(w.y0, 0);
        return;
    }
    assert_int_equal(w.marks, height >= 3);
    int used = w.shown + (w.marks && w.above) + (w.marks && w.below);
    if (used > height || used < height) {
        print_error("%s: %d rows used\n", what, used);
        fail();
    }
    assert_int_equal(w.y0, w.marks && w.above ? 1 : 0);
    if (sel >= 0 && sel < rows && !(sel >= w.top && sel < w.top + w.shown)) {
        print_error("%s: selection hidden (top %d shown %d)\n", what, w.top, w.shown);
        fail();
    }
    /* the window stays put while the selection is inside the old one */
    if (sel >= 0 && sel < rows && top >= 0 && top < rows) {
        flame_window old = flame_window_fit(rows, height, top, top);
        if (old.top == top && sel >= top && sel < top + old.shown && w.top != top) {
            print_error("%s: window moved to %d\n", what, w.top);
            fail();
        }
    }
}

static void test_window_all(void **state)
{
    (void)state;
    for (int rows = 0; rows <= 60; rows++)
        for (int height = 0; height <= 40; height++)
            for (int sel = -1; sel <= rows; sel++)
                for (int top = -1; top <= rows; top += 1 + rows / 7)
                    check_window(rows, height, sel, top);
}

static void test_window_examples(void **state)
{
    (void)state;
    /* 46 rows for 30 levels: all shown from the top */
    flame_window w = flame_window_fit(30, 46, 29, 0);
    assert_int_equal(w.shown, 30);
    assert_int_equal(w.below, 0);
    /* 100 levels in 10 rows, the deepest selected: "N above", no "deeper" */
    w = flame_window_fit(100, 10, 99, 0);
    assert_int_equal(w.top + w.shown, 100);
    assert_int_equal(w.shown, 9);
    assert_int_equal(w.above, 91);
    assert_int_equal(w.y0, 1);
    /* the root selected: "+N deeper" below the first 9 */
    w = flame_window_fit(100, 10, 0, 50);
    assert_int_equal(w.top, 0);
    assert_int_equal(w.shown, 9);
    assert_int_equal(w.below, 91);
    /* moving down one level inside the window keeps it */
    flame_window a = flame_window_fit(100, 10, 20, 0);
    flame_window b = flame_window_fit(100, 10, 21, a.top);
    assert_int_equal(b.top, a.top + 1);            /* at its bottom edge: one step */
    flame_window c = flame_window_fit(100, 10, 18, b.top);
    assert_int_equal(c.top, b.top);
}

/* The list below the flame: at every pane height 1..100 and every row
 * count the flame takes, it starts after a blank row below the flame, ends
 * inside the area, and shows whenever 3 rows are free. */
static void test_list_fit(void **state)
{
    (void)state;
    for (int area = -1; area <= 100; area++)
        for (int used = -1; used <= area + 2; used++) {
            flame_list_geo g = flame_list_fit(area, used);
            int u = used > 0 ? used : 0;
            assert_true(g.rows >= 0);
            if (area - u < 3) {
                assert_int_equal(g.rows, 0);
                continue;
            }
            assert_int_equal(g.y, u + 1);              /* a blank row, then the header */
            assert_true(g.y > u);                      /* never over the flame */
            assert_true(g.rows >= 1);
            assert_int_equal(g.y + 1 + g.rows, area);  /* to the area's end, no further */
        }
    /* the 120x40 flame of 2 levels: 36 rows between breadcrumb and bottom line */
    flame_list_geo g = flame_list_fit(36, 2);
    assert_int_equal(g.y, 3);
    assert_int_equal(g.rows, 32);
}

/* The list's first row: the mark always shows, no empty rows at the end,
 * and the list stays put while the mark stays inside it. */
static void test_list_top(void **state)
{
    (void)state;
    for (int n = 0; n <= 40; n++)
        for (int rows = 1; rows <= 20; rows++)
            for (int mark = -1; mark <= n; mark++)
                for (int top = -1; top <= n + 1; top++) {
                    int t = flame_list_top(n, rows, mark, top);
                    assert_true(t >= 0);
                    if (n <= rows) {
                        assert_int_equal(t, 0);
                        continue;
                    }
                    assert_true(t + rows <= n);
                    if (mark >= 0 && mark < n)
                        assert_true(mark >= t && mark < t + rows);
                    if (top >= 0 && top + rows <= n && (mark < 0 || (mark >= top && mark < top + rows)))
                        assert_int_equal(t, top);
                }
}

static void test_palette(void **state)
{
    (void)state;
    const int kinds[] = { 8, 16, 88, 256, 32767 };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        flame_pair p[FLAME_NSLOTS];
        flame_palette(kinds[k], p);
        bool rich = kinds[k] >= 256;
        for (int i = 0; i < FLAME_NSLOTS; i++) {
            double c = flame_contrast(p[i].fg, p[i].bg);
            if (c < FLAME_MIN_CONTRAST) {
                print_error("%d colours, slot %d: %d on %d reads at %.2f\n", kinds[k], i,
                            p[i].fg, p[i].bg, c);
                fail();
            }
            /* basic colours only on 8-colour terminals */
            assert_true(rich || (p[i].fg < 8 && p[i].bg < 8));
            /* the text is black or white, whichever reads better */
            short black = rich ? 16 : 0, white = rich ? 231 : 7;
            assert_true(p[i].fg == black || p[i].fg == white);
            short other = p[i].fg == black ? white : black;
            assert_true(c >= flame_contrast(other, p[i].bg));
        }
        /* frames told apart: the module colours differ from one another */
        for (int i = 0; i < FLAME_NMODULE; i++)
            for (int j = i + 1; j < FLAME_NMODULE; j++)
                assert_int_not_equal(p[i].bg, p[j].bg);
        /* the match colour is none of the module colours */
        for (int i = 0; i < FLAME_NMODULE; i++)
            assert_int_not_equal(p[FLAME_SLOT_MATCH].bg, p[i].bg);
    }
    /* black on red, the old pair, reads badly; the rule rejects it */
    assert_true(flame_contrast(0, 1) < FLAME_MIN_CONTRAST);
    assert_true(flame_contrast(16, 231) > 20.9);
    assert_true(flame_contrast(5, 5) < 1.0001);
}

static void test_rgb(void **state)
{
    (void)state;
    unsigned char c[3];
    flame_rgb(196, c);                  /* the cube's pure red */
    assert_int_equal(c[0], 255);
    assert_int_equal(c[1], 0);
    assert_int_equal(c[2], 0);
    flame_rgb(223, c);                  /* #ffd7af */
    assert_int_equal(c[0], 255);
    assert_int_equal(c[1], 215);
    assert_int_equal(c[2], 175);
    flame_rgb(232, c);
    assert_int_equal(c[0], 8);
    flame_rgb(255, c);
    assert_int_equal(c[2], 238);
    flame_rgb(-1, c);
    assert_int_equal(c[0] + c[1] + c[2], 0);
    flame_rgb(7, c);
    assert_int_equal(c[1], 229);
}

static void test_change_text(void **state)
{
    (void)state;
    char buf[96] = "untouched";
    prism_delta d = { .base_node = 1, .new_node = 2, .delta_ns = 37.42e6, .delta_pct = 49.9,
                      .median_pct = 49.9, .significant = true };
    assert_true(flame_change_text(buf, sizeof buf, &d));
    assert_string_equal(buf, "+37.42 ms +49.9%");
    d.delta_ns = -141.2e6;
    d.delta_pct = d.median_pct = -6.0;
    assert_true(flame_change_text(buf, sizeof buf, &d));
    assert_string_equal(buf, "-141.2 ms -6.0%");
    d.base_node = PRISM_NO_NODE;        /* new on this side */
    d.delta_ns = 3.2e6;
    assert_true(flame_change_text(buf, sizeof buf, &d));
    assert_string_equal(buf, "new +3.20 ms");
    d.new_node = PRISM_NO_NODE;         /* on neither: no change */
    snprintf(buf, sizeof buf, "untouched");
    assert_false(flame_change_text(buf, sizeof buf, &d));
    assert_false(flame_change_text(buf, sizeof buf, NULL));
    assert_string_equal(buf, "untouched");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_all),
        cmocka_unit_test(test_window_examples),
        cmocka_unit_test(test_list_fit),
        cmocka_unit_test(test_list_top),
        cmocka_unit_test(test_palette),
        cmocka_unit_test(test_rgb),
        cmocka_unit_test(test_change_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
