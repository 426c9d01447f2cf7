/*
 * layout_test.c - the explorer's pure layout helpers (tui/layout.c) across
 * terminal sizes 1x1 ... 300x100: the frame layout (too small exactly below
 * 40x12, rows adding up), column splitting (never wider than the width,
 * dropping from the right, fixed widths kept), bars and sparklines (exact
 * cell counts in UTF-8 and ASCII), fitting text (whole parts only, middle
 * elision by code point and by word, at every width to 300) and the unit
 * formatters (minutes and hours for long runs, signed changes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../tui/ui.h"

/* Display cells of a UTF-8 string (every code point is one cell here). */
static int cells(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            n++;
    return n;
}

static bool ascii_only(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p >= 0x80)
            return false;
    return true;
}

/* ---- frame layout ------------------------------------------------------- */

/* The "terminal too small" screen at every size below 40x12 (and 1x1):
 * lines within the rows, each whole within the columns, every figure whole
 * ("need 40x12, have 20x" cut the height off at 20x5). */
static void test_too_small_text(void **state)
{
    (void)state;
    char lines[UI_SMALL_LINES][UI_SMALL_COLS];
    for (int rows = 1; rows <= 40; rows++)
        for (int cols = 1; cols <= 120; cols++) {
            if (!ui_layout_compute(rows, cols).too_small)
                continue;
            int n = ui_too_small_text(rows, cols, lines);
            char have[32];
            snprintf(have, sizeof have, "%dx%d", cols, rows);
            if (n < 1 || n > rows)
                fail_msg("%dx%d: %d lines", cols, rows, n);
            bool said = false;
            for (int i = 0; i < n; i++) {
                if (cells(lines[i]) > cols)
                    fail_msg("%dx%d: \"%s\" too wide", cols, rows, lines[i]);
                /* every figure is whole: 40x12 or the size itself */
                for (const char *p = lines[i]; *p;) {
                    size_t l = strcspn(p, " ,:");
                    if (l && memchr(p, 'x', l) && strspn(p, "0123456789x") == l &&
                        !(l == 5 && !strncmp(p, "40x12", 5)) &&
                        !(l == strlen(have) && !strncmp(p, have, l)))
                        fail_msg("%dx%d: a cut figure in \"%s\"", cols, rows, lines[i]);
                    if (l && strspn(p, "0123456789") == l)
                        fail_msg("%dx%d: a cut figure in \"%s\"", cols, rows, lines[i]);
                    p += l;
                    p += strspn(p, " ,:");
                }
                said |= strstr(lines[i], have) != NULL;
            }
            /* the size shows whenever it fits on a line */
            if (!said && (int)strlen(have) <= cols)
                fail_msg("%dx%d: the size not shown", cols, rows);
        }
    assert_int_equal(ui_too_small_text(5, 20, lines), 4);
    assert_string_equal(lines[0], "terminal too small");
    assert_string_equal(lines[1], "need 40x12");
    assert_string_equal(lines[2], "have 20x5");
    assert_string_equal(lines[3], "q: quit");
    assert_int_equal(ui_too_small_text(12, 39, lines), 3);
    assert_string_equal(lines[1], "need 40x12, have 39x12");
    assert_int_equal(ui_too_small_text(1, 80, lines), 1);
    assert_string_equal(lines[0], "terminal too small: need 40x12, have 80x1");
    assert_int_equal(ui_too_small_text(3, 10, lines), 3);
    assert_string_equal(lines[0], "too small");
    assert_string_equal(lines[2], "have 10x3");
    assert_int_equal(ui_too_small_text(1, 1, lines), 1);
    assert_string_equal(lines[0], "!");
    assert_int_equal(ui_too_small_text(0, 0, lines), 0);
}


static void test_layout_all_sizes(void **state)
{
    (void)state;
    for (int rows = 1; rows <= 100; rows++)
        for (int cols = 1; cols <= 300; cols++) {
            ui_layout l = ui_layout_compute(rows, cols);
            bool small = rows < UI_MIN_ROWS || cols < UI_MIN_COLS;
            if (l.too_small != small)
                fail_msg("%dx%d: too_small %d", cols, rows, l.too_small);
            if (small)
                continue;
            assert_int_equal(l.cols, cols);
            assert_int_equal(l.tabs_y, 0);
            assert_int_equal(l.body_y, l.tabs_y + 1);
            assert_int_equal(l.status_y, l.body_y + l.body_h);
            assert_int_equal(l.status_y, rows - 1);   /* tabs + body + status = rows */
            assert_true(l.body_h >= UI_MIN_ROWS - 2);
        }
    /* the boundary itself, and nonsense sizes */
    assert_false(ui_layout_compute(12, 40).too_small);
    assert_true(ui_layout_compute(11, 40).too_small);
    assert_true(ui_layout_compute(12, 39).too_small);
    assert_true(ui_layout_compute(0, 0).too_small);
    assert_true(ui_layout_compute(-1, -5).too_small);
    assert_int_equal(ui_layout_compute(-1, -5).cols, 0);
}

/* ---- columns ------------------------------------------------------------ */

static void check_columns(int width, const int *fixed, int n, int min_flex)
{
    int out[16];
    int shown = ui_columns(width, fixed, n, min_flex, out);
    assert_true(shown >= 0 && shown <= n);
    int used = 0;
    for (int i = 0; i < n; i++) {
        if (i < shown) {
            assert_true(out[i] > 0);
            if (fixed[i] > 0)
                assert_int_equal(out[i], fixed[i]);
            else
                assert_true(out[i] >= min_flex);
            used += out[i] + (i ? 1 : 0);   /* one blank between columns */
        } else {
            assert_int_equal(out[i], 0);    /* dropped from the right */
        }
    }
    if (used > (width > 0 ? width : 0))
        fail_msg("width %d: columns use %d", width, used);
    /* the next column really did not fit */
    if (shown < n) {
        int need = fixed[shown] > 0 ? fixed[shown] : min_flex;
        int base = 0;
        for (int i = 0; i < shown; i++)
            base += (fixed[i] > 0 ? fixed[i] : min_flex) + (i ? 1 : 0);
        assert_true(base + need + (shown ? 1 : 0) > width);
    }
    /* with a flexible column shown, the whole width is used */
    bool flex = false;
    for (int i = 0; i < shown; i++)
        flex |= fixed[i] <= 0;
    if (flex)
        assert_int_equal(used, width);
}

static void test_columns(void **state)
{
    (void)state;
    static const int a[] = { 0, 10, 8, 8, 6 };          /* name, then numbers */
    static const int b[] = { 12, 0, 0, 5 };
    static const int c[] = { 4, 4, 4 };                 /* all fixed */
    static const int d[] = { 0 };
    for (int w = -2; w <= 300; w++) {
        check_columns(w, a, 5, 8);
        check_columns(w, b, 4, 3);
        check_columns(w, c, 3, 1);
        check_columns(w, d, 1, 1);
    }
    int out[5];
    assert_int_equal(ui_columns(80, a, 5, 8, out), 5);
    assert_int_equal(out[0], 80 - 10 - 8 - 8 - 6 - 4);
    assert_int_equal(ui_columns(20, a, 5, 8, out), 2);   /* name + 10, the rest dropped */
    assert_int_equal(out[1], 10);
    assert_int_equal(out[2], 0);
    assert_int_equal(ui_columns(5, a, 5, 8, out), 0);
    assert_int_equal(ui_columns(14, c, 3, 1, out), 3);
    assert_int_equal(ui_columns(13, c, 3, 1, out), 2);
}

/* ---- bars and sparklines ------------------------------------------------ */

static void bar_cells(double frac, int n, bool utf8, int want)
{
    char buf[1024];
    size_t len = ui_bar(buf, sizeof buf, frac, n, utf8);
    assert_int_equal(len, strlen(buf));
    if (cells(buf) != want)
        fail_msg("bar(%g, %d, %s) has %d cells, want %d", frac, n, utf8 ? "utf8" : "ascii",
                 cells(buf), want);
    if (!utf8)
        assert_true(ascii_only(buf));
}

static void test_bar(void **state)
{
    (void)state;
    for (int n = 0; n <= 120; n++) {
        for (int u = 0; u < 2; u++) {
            bool utf8 = u;
            bar_cells(0, n, utf8, 0);
            bar_cells(-0.5, n, utf8, 0);
            bar_cells(NAN, n, utf8, 0);
            bar_cells(1, n, utf8, n);
            bar_cells(1.5, n, utf8, n);
            bar_cells(INFINITY, n, utf8, n);
            /* half: n/2 full cells, plus a half cell when n is odd */
            bar_cells(0.5, n, utf8, (n + 1) / 2);
        }
    }
    char buf[64];
    ui_bar(buf, sizeof buf, 1, 4, false);
    assert_string_equal(buf, "####");
    ui_bar(buf, sizeof buf, 1, 2, true);
    assert_string_equal(buf, "\u2588\u2588");
    ui_bar(buf, sizeof buf, 0.5, 3, true);                /* 12 eighths */
    assert_string_equal(buf, "\u2588\u258c");
    ui_bar(buf, sizeof buf, 0.5, 3, false);
    assert_string_equal(buf, "##");
    ui_bar(buf, sizeof buf, 0.1, 3, false);               /* 2.4 eighths: nothing */
    assert_string_equal(buf, "");
    ui_bar(buf, sizeof buf, 0.1, 3, true);
    assert_string_equal(buf, "\u258e");
    /* never more than the buffer */
    char tiny[5];
    size_t len = ui_bar(tiny, sizeof tiny, 1, 10, true);
    assert_true(len < sizeof tiny);
    assert_int_equal(len, strlen(tiny));
    assert_int_equal(ui_bar(tiny, 0, 1, 10, true), 0);
}

static void test_sparkline(void **state)
{
    (void)state;
    double v[200];
    for (int i = 0; i < 200; i++)
        v[i] = sin(i / 10.0) * 100;
    char buf[2048];
    for (int u = 0; u < 2; u++) {
        bool utf8 = u;
        for (int n = 0; n <= 200; n++) {
            size_t len = ui_sparkline(buf, sizeof buf, v, 200, n, utf8);
            assert_int_equal(len, strlen(buf));
            assert_int_equal(cells(buf), n);
            if (!utf8)
                assert_true(ascii_only(buf));
        }
        /* fewer points than cells: one cell a point */
        assert_int_equal((ui_sparkline(buf, sizeof buf, v, 5, 40, utf8), cells(buf)), 5);
        /* one point, a constant series: a flat line at mid height */
        ui_sparkline(buf, sizeof buf, v, 1, 10, utf8);
        assert_int_equal(cells(buf), 1);
        const double flat[] = { 7, 7, 7, 7, 7, 7 };
        ui_sparkline(buf, sizeof buf, flat, 6, 6, utf8);
        assert_string_equal(buf, utf8 ? "\u2584\u2584\u2584\u2584\u2584\u2584" : "~~~~~~");
        assert_int_equal(ui_sparkline(buf, sizeof buf, v, 0, 10, utf8), 0);
        assert_string_equal(buf, "");
    }
    /* a ramp spans the lowest to the highest level */
    const double ramp[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    ui_sparkline(buf, sizeof buf, ramp, 8, 8, false);
    assert_string_equal(buf, "_.-~=+*#");
    ui_sparkline(buf, sizeof buf, ramp, 8, 2, false);     /* bucket maxima */
    assert_string_equal(buf, "~#");
}

/* ---- units -------------------------------------------------------------- */

static void test_units(void **state)
{
    (void)state;
    static const struct { double v; const char *ns, *bytes; } cases[] = {
        { 0, "0 ns", "0 B" },
        { 850, "850 ns", "850 B" },
        { 1500, "1.5 us", "1.5 KB" },
        { 12.3e6, "12.30 ms", "11.7 MB" },
        { 250e6, "250.0 ms", "238.4 MB" },
        { 4.51e9, "4.51 s", "4.20 GB" },
        { 3600e9, "60.0 min", "3.3 TB" },
        { -5, "0 ns", "0 B" },
        { NAN, "0 ns", "0 B" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        fmt_ns(buf, sizeof buf, cases[i].v);
        assert_string_equal(buf, cases[i].ns);
        fmt_bytes(buf, sizeof buf, cases[i].v);
        assert_string_equal(buf, cases[i].bytes);
    }
    char buf[32];
    fmt_bytes(buf, sizeof buf, 1024);
    assert_string_equal(buf, "1.0 KB");
    fmt_bytes(buf, sizeof buf, 1048576.0 * 3);
    assert_string_equal(buf, "3.0 MB");
    fmt_bytes(buf, sizeof buf, 1073741824.0 * 80);
    assert_string_equal(buf, "80.00 GB");
    fmt_ns(buf, sizeof buf, 999);
    assert_string_equal(buf, "999 ns");
    fmt_ns(buf, sizeof buf, 1e3);
    assert_string_equal(buf, "1.0 us");
    fmt_ns(buf, sizeof buf, 1e9);
    assert_string_equal(buf, "1.00 s");
    /* long runs: minutes from 1000 s, hours from 100 min */
    static const struct { double s; const char *text; } longer[] = {
        { 999.99, "999.99 s" }, { 999.996, "16.7 min" }, { 1000, "16.7 min" },
        { 5400, "90.0 min" }, { 5996, "99.9 min" }, { 5997, "1.67 h" }, { 7200, "2.00 h" },
        { 359980, "99.99 h" }, { 359990, "100.0 h" }, { 3.6e7, "10000.0 h" },
    };
    for (size_t i = 0; i < sizeof longer / sizeof longer[0]; i++) {
        fmt_ns(buf, sizeof buf, longer[i].s * 1e9);
        assert_string_equal(buf, longer[i].text);
    }
    /* a sum that saturated at 2^64-1 ns says so instead of a figure */
    fmt_ns(buf, sizeof buf, (double)UINT64_MAX);
    assert_string_equal(buf, "saturated");
    fmt_ns(buf, sizeof buf, (double)(UINT64_MAX / 2));
    assert_string_not_equal(buf, "saturated");
    /* changes carry their sign, in the same style */
    fmt_ns_signed(buf, sizeof buf, -141.2e6);
    assert_string_equal(buf, "-141.2 ms");
    fmt_ns_signed(buf, sizeof buf, 2.22e9);
    assert_string_equal(buf, "+2.22 s");
    fmt_ns_signed(buf, sizeof buf, 0.2);
    assert_string_equal(buf, "0 ns");
    fmt_ns_signed(buf, sizeof buf, NAN);
    assert_string_equal(buf, "0 ns");
    fmt_ns_signed(buf, sizeof buf, -4000e9);
    assert_string_equal(buf, "-66.7 min");
    /* a short buffer is truncated, never overrun */
    char tiny[4];
    fmt_ns(tiny, sizeof tiny, 12.3e6);
    assert_string_equal(tiny, "12.");
}

/* ---- fitting text: whole parts, elision ---------------------------------- */

static bool valid_utf8(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 :
                (*p & 0xf8) == 0xf0 ? 4 : 0;
        if (!n)
            return false;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80)
                return false;
        p += n;
    }
    return true;
}

static void test_fit_parts(void **state)
{
    (void)state;
    const char *parts[] = { "20 (10 sampled)", "mean 3.75 \u00b5s", "", "p50 3.63 ms",
                            "p95 4.75 ms", "max 18.20 ms" };
    const char *want = "20 (10 sampled)  mean 3.75 \u00b5s  p50 3.63 ms  p95 4.75 ms  max 18.20 ms";
    for (int width = -1; width <= 300; width++) {
        char out[256];
        int k = ui_fit_parts(out, sizeof out, parts, 6, "  ", width);
        assert_true(cells(out) <= (width > 0 ? width : 0));
        /* a prefix of the joined line, ending where a part ends */
        assert_int_equal(strncmp(out, want, strlen(out)), 0);
        char next = want[strlen(out)];
        assert_true(next == '\0' || (next == ' ' && want[strlen(out) + 1] == ' ') || !out[0]);
        if (k < 5)                      /* the next part did not fit */
            assert_true(cells(want) > width);
    }
    char out[256];
    assert_int_equal(ui_fit_parts(out, sizeof out, parts, 6, "  ", 28), 1);
    assert_string_equal(out, "20 (10 sampled)");
    assert_int_equal(ui_fit_parts(out, sizeof out, parts, 6, "  ", 80), 5);
    assert_int_equal(ui_fit_parts(out, 8, parts, 6, "  ", 80), 0);   /* buffer too small */
    assert_string_equal(out, "");
}

static void test_elide(void **state)
{
    (void)state;
    const char *names[] = { "decode_batch", "step/forward/layer.10/attention/softmax",
                            "\u00b5-kernel \u2588 block \u2026 ok", "a", "",
                            "Memory leak: 4.0 MB/step (GPU memory)",
                            "'decode_batch': 100.0% of thread 'loader.1' (beside the training thread)",
                            "averyveryveryverylongsinglewordwithoutanyspaces 12.5%" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (int cols = 0; cols <= 90; cols++)
            for (int utf8 = 0; utf8 <= 1; utf8++) {
                char mid[256], words[256];
                int wm = ui_elide_mid(mid, sizeof mid, names[i], cols, utf8);
                int ww = ui_elide_words(words, sizeof words, names[i], cols, utf8);
                const char *s = names[i];
                assert_int_equal(wm, cells(mid));
                assert_int_equal(ww, cells(words));
                assert_true(wm <= cols && ww <= cols);
                assert_true(valid_utf8(mid) && valid_utf8(words));
                if (cells(s) <= cols) {         /* fits: as is */
                    assert_string_equal(mid, s);
                    assert_string_equal(words, s);
                    continue;
                }
                if (cols >= 1)
                    assert_int_equal(wm, cols);         /* the middle goes, the width is used */
                if (!utf8)
                    assert_true(ascii_only(mid) || !ascii_only(s));
                /* mid: its start and its end are the name's */
                const char *mark = utf8 ? "\u2026" : "..";
                size_t ml = strlen(mark);
                const char *e = strstr(mid, mark);
                if (cols >= 2 && e) {           /* some mark splits it so (dots in names) */
                    bool split = false;
                    for (; e && !split; e = strstr(e + 1, mark)) {
                        const char *t = e + ml;
                        split = !strncmp(mid, s, (size_t)(e - mid)) && strlen(t) <= strlen(s) &&
                                !strcmp(s + strlen(s) - strlen(t), t);
                    }
                    assert_true(split);
                }
                /* words: every token but the mark is a whole word of the text
                 * (unless the first word alone is too long: then the middle) */
                int first = (int)strcspn(s, " ");
                if (strchr(s, ' ') && words[0] && first + 2 <= cols) {
                    char copy[256];
                    snprintf(copy, sizeof copy, "%s", words);
                    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
                        if (!strcmp(tok, utf8 ? "\u2026" : "~"))
                            continue;
                        char pad[300], hay[300];
                        snprintf(pad, sizeof pad, " %s ", tok);
                        snprintf(hay, sizeof hay, " %s ", s);
                        if (!strstr(hay, pad))
                            fail_msg("'%s' at %d: '%s' is not a whole word", s, cols, tok);
                    }
                }
            }
    char out[64];
    ui_elide_words(out, sizeof out, "Memory leak: 4.0 MB/step (GPU memory)", 29, false);
    assert_string_equal(out, "Memory leak: ~ (GPU memory)");
    ui_elide_mid(out, sizeof out, "layer.10.attention", 9, false);
    assert_string_equal(out, "laye..ion");
}

static void test_list_move(void **state)
{
    (void)state;
    assert_int_equal(ui_list_move('j', 0, 10, 4), 1);
    assert_int_equal(ui_list_move(KEY_DOWN, 9, 10, 4), 9);      /* stays on the last */
    assert_int_equal(ui_list_move('k', 0, 10, 4), 0);
    assert_int_equal(ui_list_move(KEY_UP, 5, 10, 4), 4);
    assert_int_equal(ui_list_move(KEY_NPAGE, 3, 10, 4), 7);
    assert_int_equal(ui_list_move(KEY_NPAGE, 8, 10, 4), 9);
    assert_int_equal(ui_list_move(KEY_PPAGE, 3, 10, 4), 0);
    assert_int_equal(ui_list_move(KEY_PPAGE, 9, 10, 4), 5);
    assert_int_equal(ui_list_move('g', 7, 10, 4), 0);
    assert_int_equal(ui_list_move(KEY_END, 2, 10, 4), 9);
    assert_int_equal(ui_list_move('x', 3, 10, 4), 3);            /* not a movement */
    assert_int_equal(ui_list_move('j', 0, 0, 4), 0);             /* empty list */
    assert_int_equal(ui_list_move('x', 12, 10, 4), 9);           /* clamped */
    assert_int_equal(ui_list_move(KEY_NPAGE, 0, 10, 0), 1);      /* page at least 1 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_all_sizes),
        cmocka_unit_test(test_too_small_text),
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_bar),
        cmocka_unit_test(test_sparkline),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_fit_parts),
        cmocka_unit_test(test_elide),
        cmocka_unit_test(test_list_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
