/*
 * columns_test.c - the text reports' line width and name columns
 * (reports/columns.c): COLUMNS before the terminal's width before the
 * default, the terminal's width read from a pseudo-terminal of a known
 * size, a column widened only for a name that fits, and a name cell that
 * is never cut: padded, or on a line of its own with the figures' place
 * kept on the next; a long C++ symbol shortened (report_symbol).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../reports/report.h"

/* What report_cell wrote for s, then "|" (where the figures would go). */
static char *cell_of(const char *s, int lead, int col)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    report_cell(m, s, lead, col);
    fputc('|', m);
    assert_int_equal(fclose(m), 0);
    return text;
}

static void width_from_columns_or_default(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);     /* no terminal */
    assert_non_null(m);
    assert_int_equal(unsetenv("COLUMNS"), 0);
    assert_int_equal(report_width(m), REPORT_WIDTH_DEFAULT);
    assert_int_equal(report_width(NULL), REPORT_WIDTH_DEFAULT);
    static const struct { const char *v; int want; } cases[] = {
        { "40", 40 }, { "1", 1 }, { "200", 200 }, { "080", 80 },
        { "99999999999999999999", 1 << 20 },     /* as wide as it takes */
        { "0", REPORT_WIDTH_DEFAULT }, { "-1", REPORT_WIDTH_DEFAULT },
        { "+80", REPORT_WIDTH_DEFAULT }, { " 80", REPORT_WIDTH_DEFAULT },
        { "80 ", REPORT_WIDTH_DEFAULT }, { "8O", REPORT_WIDTH_DEFAULT },
        { "", REPORT_WIDTH_DEFAULT },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(setenv("COLUMNS", cases[i].v, 1), 0);
        if (report_width(m) != cases[i].want)
            fail_msg("COLUMNS='%s': %d, want %d", cases[i].v, report_width(m), cases[i].want);
    }
    assert_int_equal(unsetenv("COLUMNS"), 0);
    assert_int_equal(fclose(m), 0);
    free(text);
}

/* A pseudo-terminal 57 columns wide: its width, unless COLUMNS says. */
static void width_of_a_terminal(void **state)
{
    (void)state;
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) {
        print_message("no pseudo-terminal here (%s): not checked\n", strerror(errno));
        skip();
    }
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    struct winsize ws = { .ws_row = 24, .ws_col = 57 };
    assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
    FILE *f = fdopen(slave, "w");
    assert_non_null(f);
    assert_int_equal(unsetenv("COLUMNS"), 0);
    assert_int_equal(report_width(f), 57);
    assert_int_equal(setenv("COLUMNS", "133", 1), 0);
    assert_int_equal(report_width(f), 133);    /* COLUMNS first */
    assert_int_equal(setenv("COLUMNS", "wide", 1), 0);
    assert_int_equal(report_width(f), 57);     /* no number: the terminal */
    ws.ws_col = 0;                              /* a terminal that does not say */
    assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
    assert_int_equal(unsetenv("COLUMNS"), 0);
    assert_int_equal(report_width(f), REPORT_WIDTH_DEFAULT);
    assert_int_equal(fclose(f), 0);
    close(master);
}

static void column_widens_for_what_fits(void **state)
{
    (void)state;
    assert_int_equal(report_widen(32, 49, 20), 32);     /* narrower: as it is */
    assert_int_equal(report_widen(32, 49, 40), 40);     /* fits the room */
    assert_int_equal(report_widen(32, 49, 49), 49);
    assert_int_equal(report_widen(32, 49, 50), 32);     /* too wide: its own line */
    assert_int_equal(report_widen(32, -11, 40), 32);    /* no room at all */
    int col = 36;
    static const int names[] = { 60, 41, 107, 12, 44 };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        col = report_widen(col, 50, names[i]);
    assert_int_equal(col, 44);                          /* the widest that fits */
}

static void cell_is_never_cut(void **state)
{
    (void)state;
    char *t = cell_of("abc", 4, 6);
    assert_string_equal(t, "abc   |");
    free(t);
    t = cell_of("abcdef", 4, 6);                        /* exactly: one line */
    assert_string_equal(t, "abcdef|");
    free(t);
    t = cell_of("abcdefg", 4, 6);                       /* the figures on the next */
    assert_string_equal(t, "abcdefg\n          |");
    free(t);
    t = cell_of("", 0, 0);
    assert_string_equal(t, "|");
    free(t);
    /* escaped before it is measured: "\x1b" is 4 columns */
    t = cell_of("a\x1b", 2, 5);
    assert_string_equal(t, "a\\x1b|");
    free(t);
    t = cell_of("ab\x1b", 2, 5);
    assert_string_equal(t, "ab\\x1b\n       |");
    free(t);
    /* a UTF-8 character is one column, whatever its bytes */
    assert_int_equal(report_cols("caf\xc3\xa9"), 4);
    t = cell_of("caf\xc3\xa9", 0, 6);
    assert_string_equal(t, "caf\xc3\xa9  |");
    free(t);
    assert_int_equal(report_cols(NULL), 0);
}

/* A long C++ symbol: its brackets' insides collapse from the deepest level
 * (three deep, two, one) until it fits; what cannot fit is cut with "..." (never inside a
 * UTF-8 character); a short one, and NULL, come back as they are. */
static void symbols_shortened(void **state)
{
    (void)state;
    char buf[REPORT_SYMBOL_MAX + 1], pad[200], s[2000];
    const char *r;
    assert_null(report_symbol(NULL, buf, sizeof buf));
    const char *k = "void f<int>(float)";
    assert_ptr_equal(report_symbol(k, buf, sizeof buf), k);
    memset(pad, 'x', 150);
    pad[150] = '\0';
    /* what lies three brackets deep goes first: k<a<b<...>>> fits */
    snprintf(s, sizeof s, "void ns::k<a<b<c<%s>>>>(int)", pad);
    assert_string_equal(report_symbol(s, buf, sizeof buf), "void ns::k<a<b<...>>>(int)");
    /* then what lies two deep (a parameter's template arguments) */
    snprintf(s, sizeof s, "void ns::k<float, %.60s>(at::Acc<%s>, int)", pad, pad);
    r = report_symbol(s, buf, sizeof buf);
    assert_true(!strncmp(r, "void ns::k<float, xxx", 21));
    assert_string_equal(r + strlen(r) - 18, ">(at::Acc<...>, int)" + 2);
    /* then everything inside the outermost brackets */
    snprintf(s, sizeof s, "void ns::k<float, %s>(at::Acc<%s>, int)", pad, pad);
    assert_string_equal(report_symbol(s, buf, sizeof buf), "void ns::k<...>(...)");
    /* a name with no brackets at all: cut, "..." at the end */
    char plain[300];
    memset(plain, 'y', sizeof plain - 1);
    plain[sizeof plain - 1] = '\0';
    r = report_symbol(plain, buf, sizeof buf);
    assert_int_equal(strlen(r), REPORT_SYMBOL_MAX);
    assert_string_equal(r + REPORT_SYMBOL_MAX - 3, "...");
    /* cut before a UTF-8 character, not inside it */
    char u[400] = "";
    for (int i = 0; i < 100; i++)
        strcat(u, "\xc3\xa9");
    r = report_symbol(u, buf, sizeof buf);
    size_t n = strlen(r);
    assert_true(n <= REPORT_SYMBOL_MAX);
    assert_string_equal(r + n - 3, "...");
    assert_int_equal((n - 3) % 2, 0);
    /* unbalanced brackets never read or write past the buffer */
    snprintf(s, sizeof s, ">>>)%s<<<((%s", pad, pad);
    assert_true(strlen(report_symbol(s, buf, sizeof buf)) <= REPORT_SYMBOL_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(width_from_columns_or_default),
        cmocka_unit_test(width_of_a_terminal),
        cmocka_unit_test(column_widens_for_what_fits),
        cmocka_unit_test(cell_is_never_cut),
        cmocka_unit_test(symbols_shortened),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
