/*
 * frame_test.c - the explorer frame's pure parts (tui/frame.c, prompt.c,
 * mouse.c): the line editor of the prompt, the tab bar fitted from 40 to
 * 300 columns with "?:help q:quit" always shown, the status line dropping
 * hints whole and eliding names in the middle (never a number cut), and
 * mouse decoding (tabs, body, compare sides, wheel).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../tui/frame.h"

static const char *const names[UI_NTABS] = { "Summary", "Tree", "Flame", "Ops",
                                             "Memory", "GPU", "Bottlenecks", "Timeline" };

/* ---- the prompt's line editor ---- */

static void type(ui_line *l, const char *s)
{
    for (; *s; s++)
        assert_int_equal(ui_line_key(l, (unsigned char)*s), UI_LINE_EDIT);
}

static void test_line_edit(void **state)
{
    (void)state;
    ui_line l = { .n = 0 };
    type(&l, "mat");
    assert_string_equal(l.buf, "mat");
    type(&l, "q");                      /* q types a q, it does not quit */
    assert_string_equal(l.buf, "matq");
    assert_int_equal(ui_line_key(&l, KEY_BACKSPACE), UI_LINE_EDIT);
    assert_int_equal(ui_line_key(&l, 127), UI_LINE_EDIT);
    assert_int_equal(ui_line_key(&l, 8), UI_LINE_EDIT);
    assert_string_equal(l.buf, "m");
    type(&l, "\xc3\xa9");               /* é, then one Backspace takes both bytes */
    assert_int_equal(l.n, 3);
    ui_line_key(&l, KEY_BACKSPACE);
    assert_string_equal(l.buf, "m");
    ui_line_key(&l, KEY_BACKSPACE);
    ui_line_key(&l, KEY_BACKSPACE);     /* on empty: stays empty */
    assert_int_equal(l.n, 0);
    type(&l, "equ");
    assert_int_equal(ui_line_key(&l, 21), UI_LINE_EDIT);       /* ^U clears */
    assert_string_equal(l.buf, "");
    assert_int_equal(ui_line_key(&l, KEY_LEFT), UI_LINE_EDIT); /* other keys: ignored */
    assert_int_equal(ui_line_key(&l, 1), UI_LINE_EDIT);
    assert_string_equal(l.buf, "");
    assert_int_equal(ui_line_key(&l, '\r'), UI_LINE_ACCEPT);
    assert_int_equal(ui_line_key(&l, '\n'), UI_LINE_ACCEPT);
    assert_int_equal(ui_line_key(&l, KEY_ENTER), UI_LINE_ACCEPT);
    assert_int_equal(ui_line_key(&l, 27), UI_LINE_CANCEL);
    assert_int_equal(ui_line_key(&l, 7), UI_LINE_CANCEL);
    for (int i = 0; i < 200; i++)       /* bounded */
        ui_line_key(&l, 'x');
    assert_int_equal(l.n, sizeof l.buf - 1);
    assert_int_equal(strlen(l.buf), sizeof l.buf - 1);
}

/* ---- tab bar ---- */

static void test_tabs_all_widths(void **state)
{
    (void)state;
    int tail_w = (int)strlen(UI_TAB_TAIL);
    for (int cols = UI_MIN_COLS; cols <= 300; cols++)
        for (int cur = 0; cur < UI_NTABS; cur++) {
            ui_tab t[UI_NTABS];
            int tail = ui_tabs_fit(names, UI_NTABS, cur, cols, t);
            if (tail + tail_w > cols)
                fail_msg("%d cols: the tail does not fit (at %d)", cols, tail);
            int x = 0;
            for (int i = 0; i < UI_NTABS; i++) {    /* every tab, in order, no overlap */
                assert_int_equal(t[i].x, x);
                assert_true(t[i].w >= 2);
                assert_int_equal(t[i].w, (int)strlen(t[i].label));
                char num[8];
                snprintf(num, sizeof num, " %d", i + 1);
                assert_memory_equal(t[i].label, num, 2);
                x += t[i].w;
            }
            assert_int_equal(tail, x);
        }
}

static void test_tabs_shorten(void **state)
{
    (void)state;
    ui_tab t[UI_NTABS];
    ui_tabs_fit(names, UI_NTABS, 0, 120, t);            /* room: full names */
    assert_string_equal(t[0].label, " 1 Summary ");
    assert_string_equal(t[6].label, " 7 Bottlenecks ");
    ui_tabs_fit(names, UI_NTABS, 1, 80, t);             /* 80: short, the current long */
    assert_string_equal(t[0].label, " 1 Sum ");
    assert_string_equal(t[1].label, " 2 Tree ");
    assert_string_equal(t[6].label, " 7 Bot ");
    assert_string_equal(t[2].label, " 3 Flame ");      /* short names stay whole */
    assert_string_equal(t[4].label, " 5 Mem ");
    ui_tabs_fit(names, UI_NTABS, 0, 80, t);
    assert_string_equal(t[0].label, " 1 Summary ");
    assert_string_equal(t[1].label, " 2 Tree ");
    ui_tabs_fit(names, UI_NTABS, 6, 80, t);            /* too wide with Bottlenecks whole */
    assert_string_equal(t[6].label, " 7 Bot ");
    ui_tabs_fit(names, UI_NTABS, 6, 90, t);
    assert_string_equal(t[6].label, " 7 Bottlenecks ");
    ui_tabs_fit(names, UI_NTABS, 0, 45, t);             /* 45: numbers, the current short */
    assert_string_equal(t[0].label, " 1 Sum ");
    assert_string_equal(t[1].label, " 2 ");
    ui_tabs_fit(names, UI_NTABS, 0, 40, t);             /* 40: the current name, numbers */
    assert_string_equal(t[0].label, " 1 Summary ");
    assert_string_equal(t[1].label, " 2");
    assert_string_equal(t[7].label, " 8");
    ui_tabs_fit(names, UI_NTABS, 6, 40, t);
    assert_string_equal(t[6].label, " 7 Bot ");
    assert_string_equal(t[0].label, " 1");
    ui_tab n[UI_NTABS];                                 /* too narrow: tail wins */
    int tail = ui_tabs_fit(names, UI_NTABS, 0, 20, n);
    assert_int_equal(tail, 20 - (int)strlen(UI_TAB_TAIL));
    for (int i = 0; i < UI_NTABS; i++)
        assert_true(n[i].w == 0 || n[i].x + n[i].w <= tail);
}

/* ---- status line ---- */

static void test_elide_middle(void **state)
{
    (void)state;
    char out[128];
    assert_int_equal(ui_elide_middle("short", 10, out, sizeof out), 5);
    assert_string_equal(out, "short");
    assert_int_equal(ui_elide_middle("step/forward/attention/matmul", 13, out, sizeof out), 13);
    assert_string_equal(out, "step~n/matmul");
    /* an escape is one unit: kept whole or left out, never cut */
    ui_elide_middle("\x1b[31mred-region-name", 10, out, sizeof out);
    assert_null(strchr(out, '\x1b'));
    assert_true(strncmp(out, "\\x1b", 4) == 0 || out[0] == '~');
    assert_true(ui_width(out) <= 10);
    for (int w = 0; w < 40; w++) {
        ui_elide_middle("a/\xe2\x80\xae-bidi/\x01-ctrl/some-long-leaf-name", w, out, sizeof out);
        assert_true(ui_width(out) <= w);
    }
}

static void test_status_fit(void **state)
{
    (void)state;
    ui_status_item it[] = {
        { "train.cbor", "", 9, true, 8 },
        { "LIVE", " | ", 8, false, 0 },
        { "1.5s ago", " ", 5, false, 0 },
        { "123456 ev", ", ", 3, false, 0 },
        { "98765 ev/s", ", ", 2, false, 0 },
        { "Tree", " | ", 0, false, 0 },
        { "step/forward/attention/matmul", " | ", 4, true, 10 },
        { "Enter:fold", " | ", 1, false, 0 },
        { "s:sort", "  ", 1, false, 0 },
        { "n/N:match", "  ", 1, false, 0 },
    };
    int n = (int)(sizeof it / sizeof it[0]);
    char out[512];
    ui_status_fit(it, n, 300, out, sizeof out);
    assert_string_equal(out, "train.cbor | LIVE 1.5s ago, 123456 ev, 98765 ev/s | Tree | "
                             "step/forward/attention/matmul | Enter:fold  s:sort  n/N:match");
    /* hints go last first, whole */
    ui_status_fit(it, n, 110, out, sizeof out);
    assert_string_equal(out, "train.cbor | LIVE 1.5s ago, 123456 ev, 98765 ev/s | Tree | "
                             "step/forward/attention/matmul | Enter:fold  s:sort");
    ui_status_fit(it, n, 100, out, sizeof out);
    assert_string_equal(out, "train.cbor | LIVE 1.5s ago, 123456 ev, 98765 ev/s | Tree | "
                             "step/forward/attention/matmul");
    for (int cols = 0; cols <= 120; cols++) {
        int w = ui_status_fit(it, n, cols, out, sizeof out);
        if (cols >= 30)
            assert_true(w <= cols);
        assert_non_null(strstr(out, "Tree"));           /* never dropped */
        /* numbers are whole or absent */
        assert_true(!strstr(out, "ev") || strstr(out, "123456 ev") || strstr(out, "98765 ev/s"));
        const char *r = strstr(out, "ev/s");
        assert_true(!r || strstr(out, "98765 ev/s"));
        assert_true(!strstr(out, "ago") || strstr(out, "1.5s ago"));
    }
    /* 80 columns: the path loses its middle after the hints are gone */
    ui_status_fit(it, n, 80, out, sizeof out);
    assert_non_null(strstr(out, "LIVE 1.5s ago"));
    assert_null(strstr(out, "Enter:fold"));
    assert_non_null(strstr(out, "matmul"));
    assert_true(ui_width(out) <= 80);
    /* narrow: the file name is elided, LIVE and the pane stay */
    ui_status_fit(it, n, 24, out, sizeof out);
    assert_non_null(strstr(out, "LIVE"));
    assert_non_null(strstr(out, "| Tree"));
    assert_true(ui_width(out) <= 24);
    /* an empty item is skipped with its separator */
    ui_status_item two[] = { { "a", "", 1, false, 0 }, { "", " | ", 1, false, 0 },
                             { "b", " | ", 0, false, 0 } };
    ui_status_fit(two, 3, 80, out, sizeof out);
    assert_string_equal(out, "a | b");
    ui_status_fit(two, 3, 1, out, sizeof out);         /* first dropped: no leading sep */
    assert_string_equal(out, "b");
}

/* ---- mouse ---- */

static void test_mouse_decode(void **state)
{
    (void)state;
    ui_layout l = ui_layout_compute(24, 80);
    ui_tab t[UI_NTABS];
    int tail = ui_tabs_fit(names, UI_NTABS, 0, 80, t);
    ui_hit h = ui_mouse_decode(BUTTON1_CLICKED, 0, t[3].x + 1, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_TAB);
    assert_int_equal(h.pane, 3);
    assert_int_equal(h.event, UI_MOUSE_CLICK);
    h = ui_mouse_decode(BUTTON1_CLICKED, 0, tail + 2, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_HELP);
    h = ui_mouse_decode(BUTTON1_CLICKED, 0, tail + 10, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* "q:quit" is not a button */
    h = ui_mouse_decode(BUTTON4_PRESSED, 0, t[3].x, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* wheel on the tabs: nothing */
    h = ui_mouse_decode(BUTTON1_DOUBLE_CLICKED, 5, 17, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_BODY);
    assert_int_equal(h.event, UI_MOUSE_DOUBLE);
    assert_int_equal(h.row, 4);                         /* body starts on row 1 */
    assert_int_equal(h.col, 17);
    h = ui_mouse_decode(BUTTON4_PRESSED, 1, 0, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.event, UI_MOUSE_WHEEL_UP);
    assert_int_equal(h.row, 0);
#if BUTTON5_PRESSED
    h = ui_mouse_decode(BUTTON5_PRESSED, 22, 79, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_BODY);
    assert_int_equal(h.event, UI_MOUSE_WHEEL_DOWN);
    assert_int_equal(h.row, 21);
#endif
    h = ui_mouse_decode(BUTTON1_CLICKED, 23, 5, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* the status line */
    h = ui_mouse_decode(BUTTON1_RELEASED, 5, 5, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* not asked for */
    h = ui_mouse_decode(BUTTON1_CLICKED, 5, 80, &l, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* off screen */
    ui_layout small = ui_layout_compute(10, 30);
    h = ui_mouse_decode(BUTTON1_CLICKED, 0, 0, &small, t, UI_NTABS, tail, false, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* "terminal too small" */
}

static void test_mouse_compare(void **state)
{
    (void)state;
    ui_tab t[UI_NTABS];
    /* 80x24: stacked; side 0 label on row 1, body rows 2.., side 1 below */
    ui_layout l = ui_layout_compute(24, 80);
    int tail = ui_tabs_fit(names, UI_NTABS, 0, 80, t);
    ui_split sp = ui_split_compute(l.body_y, l.body_h, 80, 0);
    assert_true(sp.stacked);
    ui_hit h = ui_mouse_decode(BUTTON1_CLICKED, sp.y[0], 3, &l, t, UI_NTABS, tail, true, 0);
    assert_int_equal(h.what, UI_HIT_SIDE);
    assert_int_equal(h.side, 0);
    h = ui_mouse_decode(BUTTON1_CLICKED, sp.y[1] + 2, 3, &l, t, UI_NTABS, tail, true, 0);
    assert_int_equal(h.what, UI_HIT_BODY);
    assert_int_equal(h.side, 1);
    assert_int_equal(h.row, 1);
    assert_int_equal(h.col, 3);
    h = ui_mouse_decode(BUTTON1_CLICKED, sp.y[1] - 1, 3, &l, t, UI_NTABS, tail, true, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* the row between */
    /* 200x50: side by side */
    l = ui_layout_compute(50, 200);
    tail = ui_tabs_fit(names, UI_NTABS, 0, 200, t);
    sp = ui_split_compute(l.body_y, l.body_h, 200, 0);
    assert_false(sp.stacked);
    h = ui_mouse_decode(BUTTON5_PRESSED ? BUTTON5_PRESSED : BUTTON4_PRESSED, 10, sp.x[1] + 4,
                        &l, t, UI_NTABS, tail, true, 0);
    assert_int_equal(h.what, UI_HIT_BODY);
    assert_int_equal(h.side, 1);
    assert_int_equal(h.row, 10 - sp.y[1] - 1);
    assert_int_equal(h.col, 4);
    h = ui_mouse_decode(BUTTON1_CLICKED, 10, sp.w[0], &l, t, UI_NTABS, tail, true, 0);
    assert_int_equal(h.what, UI_HIT_NONE);              /* the divider */
    h = ui_mouse_decode(BUTTON1_CLICKED, 10, 0, &l, t, UI_NTABS, tail, true, 0);
    assert_int_equal(h.side, 0);
    assert_int_equal(h.col, 0);
    /* a pane whose names need 2 x 110 columns: stacked at 200 too, and a
     * click below the middle is on the new side */
    sp = ui_split_compute(l.body_y, l.body_h, 200, 221);
    assert_true(sp.stacked);
    assert_int_equal(sp.w[0], 200);
    h = ui_mouse_decode(BUTTON1_CLICKED, sp.y[1] + 1, 150, &l, t, UI_NTABS, tail, true, 221);
    assert_int_equal(h.what, UI_HIT_BODY);
    assert_int_equal(h.side, 1);
    assert_false(ui_split_compute(l.body_y, l.body_h, 221, 221).stacked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_edit),
        cmocka_unit_test(test_tabs_all_widths),
        cmocka_unit_test(test_tabs_shorten),
        cmocka_unit_test(test_elide_middle),
        cmocka_unit_test(test_status_fit),
        cmocka_unit_test(test_mouse_decode),
        cmocka_unit_test(test_mouse_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
