/*
 * verdict_words_test.c - the leak verdict and the step problems in words
 * (tui/verdict.c), as the Memory and Summary panes and analyze print them:
 * a 1 GB linear climb (2 MB/step over 500 steps) and the 450 MB one are
 * "LEAK", never "no leak"; a significant rise not proven a leak is
 * "growing", one too small to matter (+2.2 MB on 250 MB) "slight rise";
 * only flat memory says "no leak"; the Memory pane's two
 * verdict rows fit 80 columns; step problems read as sentences with
 * their counts, singular and plural.  tests/screen/leak.sh checks the
 * real pane at 80x24.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../present/verdict.h"

#define MB 1048576.0

static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static prism_leak climb(size_t n, double base, double slope, double noise_mb, uint64_t seed)
{
    static double x[1000], y[1000];
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)i;
        y[i] = (base + slope * (double)i + noise_mb * noise(&seed)) * MB;
    }
    return prism_leak_fit(x, y, n, 10.0);
}

/* Code points of a UTF-8 string: its width in the pane. */
static size_t columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* The Memory pane's verdict rows as it composes them: "Trend " + word +
 * "  " + facts at column 1, the detail at column 7. */
static void pane_rows(const prism_leak *lk, bool utf8, char *row1, char *row2, size_t cap)
{
    char facts[256], detail[256];
    verdict_facts(facts, sizeof facts, lk, utf8);
    verdict_detail(detail, sizeof detail, lk);
    snprintf(row1, cap, " Trend %s  %s", verdict_word(lk, NULL), facts);
    snprintf(row2, cap, "       %s", detail);
}

static void test_gigabyte_climb_is_a_leak(void **state)
{
    (void)state;
    const struct { size_t n; double slope; } cases[] = { { 500, 2.0 }, { 150, 3.0 } };
    for (size_t c = 0; c < 2; c++) {
        prism_leak lk = climb(cases[c].n, 2048, cases[c].slope, 4.0, 1);
        int tone;
        assert_string_equal(verdict_word(&lk, &tone), "LEAK");
        assert_int_equal(tone, VERDICT_BAD);
        for (int utf8 = 0; utf8 <= 1; utf8++) {
            char r1[512], r2[512];
            pane_rows(&lk, utf8, r1, r2, sizeof r1);
            assert_null(strstr(r1, "no leak"));
            assert_null(strstr(r2, "no leak"));
            assert_non_null(strstr(r1, " Trend LEAK  +"));
            assert_non_null(strstr(r1, " MB/step  +"));
            assert_true(columns(r1) <= 80);
            assert_true(columns(r2) <= 80);
        }
    }
    char r1[512], r2[512];
    prism_leak lk = climb(500, 2048, 2.0, 4.0, 1);
    pane_rows(&lk, false, r1, r2, sizeof r1);
    assert_non_null(strstr(r1, "+2.00 +/- 0.00 MB/step  +99"));
    assert_non_null(strstr(r1, " over 499 steps"));
    assert_non_null(strstr(r2, "steady, significant rise; r2 1.00; "));
    assert_non_null(strstr(r2, " in 1000 steps"));
    prism_leak_project(&lk, 37, true);
    pane_rows(&lk, true, r1, r2, sizeof r1);
    assert_non_null(strstr(r1, "\u00b1"));
    assert_non_null(strstr(r2, " in 37 steps (epoch end)"));
}

static void test_words(void **state)
{
    (void)state;
    int tone;
    prism_leak lk = climb(200, 800, 0.05, 0.2, 2);          /* 10 MB: not proven */
    assert_string_equal(verdict_word(&lk, &tone), "growing");
    assert_int_equal(tone, VERDICT_WARN);
    lk = climb(89, 250, 0.025, 0.05, 6);                    /* +2.2 MB on 250: slight */
    assert_string_equal(verdict_word(&lk, &tone), "slight rise");
    assert_int_equal(tone, VERDICT_PLAIN);
    lk = climb(300, 2048, 0.0, 8.0, 3);                     /* flat, noisy */
    assert_string_equal(verdict_word(&lk, &tone), "no leak");
    assert_int_equal(tone, VERDICT_OK);
    lk = climb(3, 2048, 5.0, 0.0, 4);                       /* too few points */
    assert_string_equal(verdict_word(&lk, &tone), "no fit");
    assert_int_equal(tone, VERDICT_PLAIN);
    char buf[128];
    verdict_facts(buf, sizeof buf, &lk, true);
    assert_string_equal(buf, "");
    assert_string_equal(verdict_word(NULL, NULL), "no fit");
    verdict_mb(buf, sizeof buf, 1536.0);
    assert_string_equal(buf, "1.50 GB");
    verdict_mb(buf, sizeof buf, 12.25);
    assert_string_equal(buf, "12.2 MB");
    verdict_fit(buf, sizeof buf, &lk);
    assert_string_equal(buf, "r2 0.00, 3 points");
    /* a GPU series from nothing has no percentage */
    lk = climb(500, 0.0, 0.2, 0.05, 5);
    verdict_facts(buf, sizeof buf, &lk, false);
    assert_null(strstr(buf, "%"));
    char tiny[4];
    verdict_detail(tiny, sizeof tiny, &lk);                 /* truncates safely */
    assert_int_equal(strlen(tiny), 3);
}

static void test_step_problems(void **state)
{
    (void)state;
    char lines[4][VERDICT_LINE];
    prism_step_stats st = { .count = 10 };
    assert_int_equal(verdict_step_problems(&st, lines, 4), 0);
    st.bad_order = 3;
    st.zero_len = 1;
    st.overlapping = 2;
    st.dup_index = 1;
    assert_int_equal(verdict_step_problems(&st, lines, 4), 4);
    assert_string_equal(lines[0], "3 steps end before they start: ignored in step statistics");
    assert_string_equal(lines[1], "1 step has zero length: ignored in step statistics");
    assert_string_equal(lines[2], "2 steps overlap earlier ones: kept, shared time counted twice");
    assert_string_equal(lines[3], "1 step repeats an earlier index: kept");
    for (int i = 0; i < 4; i++)
        assert_true(strlen(lines[i]) <= 69);                /* from column 11 at 80 */
    st.bad_order = 1;
    assert_int_equal(verdict_step_problems(&st, lines, 2), 2);
    assert_string_equal(lines[0], "1 step ends before it starts: ignored in step statistics");
    st.bad_order = UINT64_MAX;
    assert_int_equal(verdict_step_problems(&st, lines, 1), 1);
    assert_non_null(strstr(lines[0], "18446744073709551615 steps end before"));
    assert_int_equal(verdict_step_problems(NULL, lines, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gigabyte_climb_is_a_leak),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_step_problems),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
