/*
 * chart_test.c - the Memory pane's text charts and the word wrap used by
 * the Bottlenecks pane, as pure functions: resampling (peaks kept, gaps
 * held, one point), column mapping, value ranges, bars in eighths (UTF-8)
 * and '#'/'.' (ASCII) drawn exactly, traces and the marker overlaid, runs
 * by kind, every size from 1x1 up without overflow, and wrapping at word
 * boundaries, hard breaks, newlines and multi-byte text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../tui/chart.h"

static void row_is(const chart *c, int row, const char *want)
{
    char buf[1024];
    chart_row_text(c, row, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void test_resample(void **state)
{
    (void)state;
    double x[] = { 0, 1, 2, 3, 4, 5, 6, 7 }, y[] = { 1, 5, 2, 2, 3, 9, 0, 4 }, col[4];
    chart_resample(x, y, 8, col, 4);        /* buckets of 7/4 x-units: max of each */
    assert_true(col[0] == 5 && col[1] == 2 && col[2] == 9 && col[3] == 4);

    double x2[] = { 0, 10 }, y2[] = { 3, 7 }, col2[5];
    chart_resample(x2, y2, 2, col2, 5);      /* gaps repeat the column before */
    assert_true(col2[0] == 3 && col2[1] == 3 && col2[3] == 3 && col2[4] == 7);

    double x3[] = { 42 }, y3[] = { 6 }, col3[3];
    chart_resample(x3, y3, 1, col3, 3);      /* one point: a flat line */
    assert_true(col3[0] == 6 && col3[1] == 6 && col3[2] == 6);

    chart_resample(NULL, NULL, 0, col3, 3);
    assert_true(isnan(col3[0]) && isnan(col3[2]));
}

static void test_col(void **state)
{
    (void)state;
    assert_int_equal(chart_col(0, 0, 10, 5), 0);
    assert_int_equal(chart_col(10, 0, 10, 5), 4);
    assert_int_equal(chart_col(5, 0, 10, 5), 2);
    assert_int_equal(chart_col(-3, 0, 10, 5), 0);
    assert_int_equal(chart_col(99, 0, 10, 5), 4);
    assert_int_equal(chart_col(NAN, 0, 10, 5), 0);
    assert_int_equal(chart_col(5, 3, 3, 5), 0);
    assert_int_equal(chart_col(5, 0, 10, 0), 0);
    /* every point of a series lands in the column resample put it in */
    double x[50], y[50], col[7];
    for (int i = 0; i < 50; i++) {
        x[i] = i * 3;
        y[i] = i;                            /* increasing: max = last of bucket */
    }
    chart_resample(x, y, 50, col, 7);
    for (int i = 0; i < 50; i++)
        assert_true(col[chart_col(x[i], x[0], x[49], 7)] >= y[i]);
}

static void test_range(void **state)
{
    (void)state;
    double lo, hi, v[] = { 100, NAN, 200 };
    chart_range(v, 3, &lo, &hi);
    assert_true(fabs(lo - 95) < 1e-9 && fabs(hi - 205) < 1e-9);
    double flat[] = { 50, 50 };
    chart_range(flat, 2, &lo, &hi);
    assert_true(fabs(lo - 45) < 1e-9 && fabs(hi - 55) < 1e-9);
    double low[] = { 0, 100 };               /* never below zero for sizes */
    chart_range(low, 2, &lo, &hi);
    assert_true(lo == 0 && hi > 100);
    double neg[] = { -10, 10 };
    chart_range(neg, 2, &lo, &hi);
    assert_true(lo < -10 && hi > 10);
    chart_range(NULL, 0, &lo, &hi);
    assert_true(lo == 0 && hi == 1);
    double zero[] = { 0 };
    chart_range(zero, 1, &lo, &hi);
    assert_true(lo == 0 && hi == 1);
    /* a level that barely moves spans a tenth of its top at least */
    lo = 249.8, hi = 259.1;
    chart_range_min(&lo, &hi, 0.1);
    assert_true(fabs((hi - lo) - 25.91) < 1e-9 && fabs((lo + hi) / 2 - 254.45) < 1e-9);
    lo = 1.0, hi = 3.0;                      /* never below 0 for sizes */
    chart_range_min(&lo, &hi, 2.0);
    assert_true(lo == 0 && hi == 3.0);
    lo = 100, hi = 200;                      /* wide enough: unchanged */
    chart_range_min(&lo, &hi, 0.1);
    assert_true(lo == 100 && hi == 200);
}

static void test_bars_ascii(void **state)
{
    (void)state;
    chart c;
    assert_true(chart_init(&c, 3, 5, 0, 3, false));
    double col[5] = { 0, 1, 1.5, 3, NAN };
    chart_bars(&c, col);
    row_is(&c, 0, "   # ");
    row_is(&c, 1, "  .# ");
    row_is(&c, 2, " ### ");
    chart_free(&c);
    chart_free(&c);                          /* twice is harmless */
}

static void test_bars_utf8(void **state)
{
    (void)state;
    chart c;
    assert_true(chart_init(&c, 2, 4, 0, 16, true));
    double col[4] = { 1, 4, 12, 16 };        /* eighths: 1, 4, 12, 16 */
    chart_bars(&c, col);
    row_is(&c, 0, "  \u2584\u2588");
    row_is(&c, 1, "\u2581\u2584\u2588\u2588");
    chart_free(&c);
    /* a value just above the floor still shows one eighth */
    assert_true(chart_init(&c, 1, 1, 0, 1e9, true));
    double tiny[1] = { 1 };
    chart_bars(&c, tiny);
    row_is(&c, 0, "\u2581");
    chart_free(&c);
}

static void test_trace_marker_runs(void **state)
{
    (void)state;
    chart c;
    assert_true(chart_init(&c, 4, 6, 0, 4, false));
    double bars[6] = { 4, 4, 4, 4, 4, 4 }, line[6] = { 0.5, 1.5, 2.5, 3.5, 9, NAN };
    chart_bars(&c, bars);
    chart_trace(&c, line, CHART_TRACE);      /* 9 is off the chart: not drawn */
    row_is(&c, 0, "###-##");
    row_is(&c, 3, "-#####");
    chart_marker(&c, 1);
    chart_marker(&c, 6);                     /* outside: ignored */
    char buf[64];
    int kind;
    assert_int_equal(chart_run(&c, 3, 0, buf, sizeof buf, &kind), 1);
    assert_int_equal(kind, CHART_TRACE);
    assert_string_equal(buf, "-");
    assert_int_equal(chart_run(&c, 3, 1, buf, sizeof buf, &kind), 1);
    assert_int_equal(kind, CHART_MARK);
    assert_int_equal(chart_run(&c, 3, 2, buf, sizeof buf, &kind), 4);
    assert_int_equal(kind, CHART_BAR);
    assert_string_equal(buf, "####");
    assert_int_equal(chart_run(&c, 3, 6, buf, sizeof buf, &kind), 0);
    assert_int_equal(chart_run(&c, 4, 0, buf, sizeof buf, &kind), 0);
    chart_free(&c);

    assert_true(chart_init(&c, 2, 3, 0, 2, true));
    double second[3] = { 0, 0.9, 2 };
    chart_trace(&c, second, CHART_TRACE2);
    chart_marker(&c, 0);
    row_is(&c, 0, "\u2502 \u2550");          /* the top value sits in the top row */
    row_is(&c, 1, "\u2550\u2550 ");
    chart_free(&c);
}

static void test_sizes(void **state)
{
    (void)state;
    double x[200], y[200];
    for (int i = 0; i < 200; i++) {
        x[i] = i;
        y[i] = (i * 37) % 101;
    }
    for (int h = 1; h <= 40; h += 3)
        for (int w = 1; w <= 300; w += 7)
            for (int utf8 = 0; utf8 <= 1; utf8++) {
                chart c;
                double col[300], lo, hi;
                chart_resample(x, y, 200, col, w);
                chart_range(col, (size_t)w, &lo, &hi);
                assert_true(chart_init(&c, h, w, lo, hi, utf8));
                chart_bars(&c, col);
                chart_trace(&c, col, CHART_TRACE);
                chart_marker(&c, w / 2);
                for (int r = 0; r < h; r++) {
                    char buf[2048], tiny[3];
                    chart_row_text(&c, r, buf, sizeof buf);
                    int cps = 0;
                    for (const char *p = buf; *p; p++)
                        cps += ((unsigned char)*p & 0xc0) != 0x80;
                    assert_int_equal(cps, w);
                    chart_row_text(&c, r, tiny, sizeof tiny);   /* short buffer */
                    assert_true(strlen(tiny) < sizeof tiny);
                }
                chart_free(&c);
            }
    chart c;
    assert_false(chart_init(&c, 0, 5, 0, 1, false));
    assert_false(chart_init(&c, 5, 0, 0, 1, false));
    assert_null(c.cells);
    double col[1] = { 1 };
    chart_bars(&c, col);                     /* no cells: no-ops */
    chart_trace(&c, col, CHART_TRACE);
    chart_marker(&c, 0);
    char buf[8];
    assert_int_equal(chart_row_text(&c, 0, buf, sizeof buf), 0);
    chart_free(&c);
}

/* Wrap s at width; lines joined with '|'. */
static void wrapped(const char *s, int width, const char *want)
{
    char out[512] = "";
    size_t at = 0;
    int lines = 0;
    for (size_t o = 0; s[o]; lines++) {
        size_t nx, len = wrap_line(s + o, width, &nx);
        assert_true(nx > 0);
        at += (size_t)snprintf(out + at, sizeof out - at, "%s%.*s", lines ? "|" : "", (int)len, s + o);
        o += nx;
    }
    assert_string_equal(out, want);
    assert_int_equal(wrap_count(s, width), lines);
}

/* Ranges the Memory pane can be handed by a hostile profile (RSS near
 * 2^64, one value, a trend that overflows): every cell still gets a glyph
 * and no fraction becomes NaN on its way to an int (UBSan watches). */
static void test_hostile_ranges(void **state)
{
    (void)state;
    const double ranges[][2] = {
        { 1e20, 1e20 }, { 1.8446744073709552e19, 1.8446744073709552e19 },
        { -1e308, 1e308 }, { 0, INFINITY }, { NAN, 5 }, { 7, 3 },
    };
    const double vals[] = { 1e20, 1.8446744073709552e19, 0, -1e308, 1e308, 5, NAN, INFINITY };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        chart c;
        assert_true(chart_init(&c, 3, 8, ranges[i][0], ranges[i][1], false));
        assert_true(isfinite(c.lo) && isfinite(c.hi) && c.hi > c.lo);
        double col[8];
        for (int k = 0; k < 8; k++)
            col[k] = vals[k];
        chart_bars(&c, col);
        chart_trace(&c, col, CHART_TRACE);
        for (int r = 0; r < 3; r++) {
            char buf[64];
            chart_row_text(&c, r, buf, sizeof buf);
            assert_int_equal(strlen(buf), 8);
        }
        chart_free(&c);
    }
}

static void test_wrap(void **state)
{
    (void)state;
    wrapped("", 10, "");
    wrapped("short", 10, "short");
    wrapped("exactly10c", 10, "exactly10c");
    wrapped("the quick brown fox jumps", 10, "the quick|brown fox|jumps");
    wrapped("the  quick   brown", 5, "the|quick|brown");
    wrapped("abcdefghijkl", 5, "abcde|fghij|kl");
    wrapped("ab cdefghijkl", 5, "ab|cdefg|hijkl");
    wrapped("one\ntwo three", 20, "one|two three");
    wrapped("x", 0, "x");
    wrapped("a b", 1, "a|b");
    wrapped("   ", 2, "");
    wrapped("25.0 \u2192 3605.9 MB", 6, "25.0 \u2192|3605.9|MB");
    wrapped("\u00e9\u00e9\u00e9\u00e9", 3, "\u00e9\u00e9\u00e9|\u00e9");
    assert_int_equal(wrap_count("one two", 100), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resample),
        cmocka_unit_test(test_col),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_bars_ascii),
        cmocka_unit_test(test_bars_utf8),
        cmocka_unit_test(test_trace_marker_runs),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_hostile_ranges),
        cmocka_unit_test(test_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
