/*
 * escape_test.c - text from a profile made safe for a terminal (tui/escape.h)
 * and every text writer using it: a profile whose region names, thread
 * names, host, argv, config and INFO values hold escape sequences, C0/C1
 * controls, bidi overrides, invalid UTF-8 and printf directives is run
 * through dump, analyze, compare and the CSV and folded exports in memory;
 * no byte a terminal interprets may come out, and the escaped forms must.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../base/escape.h"
#include "../tui/flame.h"
#include "../reports/report.h"
#include "../tui/treeview.h"
#include "pbuild.h"
#include "report_util.h"

/* ---- the helper ---- */

static void expect(const char *in, const char *want)
{
    char buf[256];
    assert_string_equal(esc_str(in, buf, sizeof buf), want);
    assert_true(esc_clean(in) == !strcmp(in, want));
}

static void escapes_each_kind(void **state)
{
    (void)state;
    expect("plain name", "plain name");
    expect("aten::mm<float> %d", "aten::mm<float> %d");
    expect("caf\xc3\xa9 \xe2\x80\xa6 \xe6\x97\xa5 \xf0\x9f\x94\xa5",     /* valid UTF-8 */
           "caf\xc3\xa9 \xe2\x80\xa6 \xe6\x97\xa5 \xf0\x9f\x94\xa5");
    expect("a\x1b[2Jb", "a\\x1b[2Jb");
    expect("\x1b]0;title\x07", "\\x1b]0;title\\x07");
    expect("tab\tnl\ncr\rdel\x7f", "tab\\x09nl\\x0acr\\x0ddel\\x7f");
    expect("\xc2\x9b" "31m", "\\u009b31m");                 /* C1 CSI as UTF-8 */
    expect("\xc2\x80\xc2\x9f\xc2\xa0", "\\u0080\\u009f\xc2\xa0");
    expect("\xe2\x80\xaa\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9",   /* LRE RLO LRI PDI */
           "\\u202a\\u202e\\u2066\\u2069");
    expect("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8", "\\u200e\\u200f\\u061c\\u2028");
    expect("lone \x9b", "lone \\x9b");                      /* raw C1 byte */
    expect("\xff\xfe", "\\xff\\xfe");
    expect("\xc0\xaf", "\\xc0\\xaf");                       /* overlong '/' */
    expect("\xe0\x80\xaf", "\\xe0\\x80\\xaf");              /* overlong */
    expect("\xed\xa0\x80", "\\xed\\xa0\\x80");              /* a surrogate */
    expect("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");     /* past U+10FFFF */
    expect("cut \xe2\x80", "cut \\xe2\\x80");               /* cut short at the end */
    expect("cut \xe2x", "cut \\xe2x");
}

static void str_never_cuts_an_escape(void **state)
{
    (void)state;
    char buf[8];
    assert_string_equal(esc_str("ab\x1b[2J", buf, sizeof buf), "ab\\x1b[");
    assert_string_equal(esc_str("abcd\x1b", buf, sizeof buf), "abcd");
    assert_string_equal(esc_str("\xe2\x80\xae", buf, 6), "");
    assert_string_equal(esc_str(NULL, buf, sizeof buf), "");
    char big[ESC_CAP(3)];
    assert_string_equal(esc_str("\x01\x02\x03", big, sizeof big), "\\x01\\x02\\x03");
}

/* ---- what reaches a terminal ---- */

static bool bidi(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Every byte of s: valid UTF-8, no control but '\n', no C1, no bidi
 * control.  A decoder of its own, so the check does not trust escape.h. */
static void assert_terminal_safe(const char *what, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t off = 0;
    while (p[off]) {
        unsigned char c = p[off];
        uint32_t cp = 0;
        size_t len = 1;
        if (c < 0x80) {
            cp = c;
            len = 1;
        } else if ((c & 0xe0) == 0xc0) {
            cp = c & 0x1f;
            len = 2;
        } else if ((c & 0xf0) == 0xe0) {
            cp = c & 0x0f;
            len = 3;
        } else if ((c & 0xf8) == 0xf0) {
            cp = c & 0x07;
            len = 4;
        } else {
            fail_msg("%s: invalid UTF-8 byte 0x%02x at %zu", what, c, off);
        }
        for (size_t i = 1; i < len; i++) {
            if ((p[off + i] & 0xc0) != 0x80)
                fail_msg("%s: invalid UTF-8 at %zu", what, off);
            cp = (cp << 6) | (p[off + i] & 0x3f);
        }
        static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            fail_msg("%s: invalid UTF-8 (U+%04x) at %zu", what, (unsigned)cp, off);
        if ((cp < 0x20 && cp != '\n') || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || bidi(cp))
            fail_msg("%s: control U+%04x reaches the terminal at %zu", what, (unsigned)cp, off);
        off += len;
    }
}

#define N_HOSTILE 8
static const char *const hostile[N_HOSTILE] = {
    "cls\x1b[2Jname",
    "title\x1b]0;pwned\x07name",
    "rlo\xe2\x80\xae" "evil",
    "lri\xe2\x81\xa6" "x\xe2\x81\xa9",
    "csi\xc2\x9b" "31m",
    "bad\xff\xfe\x9b" "utf8",
    "fmt %n%n%s%x",
    "nl\nline\r\ttab,\"q\";semi\x7f",
};

typedef struct hx {
    char dir[64];
    char path[512];
} hx;

/* A profile with every hostile kind in every string a writer prints. */
static int hx_setup(void **state)
{
    hx *h = calloc(1, sizeof *h);
    assert_non_null(h);
    scratch_dir(h->dir);
    path_in(h->path, h->dir, "hostile.prism");
    static const char *const argv[] = { "train\x1b[31m.py", "--name=\xe2\x80\xae" "gpj.exe",
                                        "%n%s" };
    prism_kv config[] = {
        { "key\x1b]0;t\x07", { .type = PRISM_VAL_TEXT, .v.s = "val\x1b[2J\xe2\x80\xae" } },
    };
    prism_header hd = { .producer = "prod\x1b[2J", .host = "host\x1b]0;owned\x07\xc2\x9b",
                        .rank = -1, .clock = "clk\xe2\x81\xa6", .argv = argv, .argc = 3,
                        .config = config, .nconfig = 1 };
    pbuild *b = malloc(sizeof *b);
    assert_non_null(b);
    pb_init_header(b, &hd, hostile, N_HOSTILE, 7);
    pb_thread(b, 0, "main\x1b[2J\xe2\x80\xae");
    pb_thread(b, 1, "worker\x1b]0;x\x07\xff");
    prism_value st = { .type = PRISM_VAL_TEXT, .v.s = "gpu\x1b[2J\xe2\x80\xae%n" };
    pb_begin(b, PRISM_CHUNK_INFO, 0, 0);
    assert_int_equal(prism_enc_info(&b->e, "gpu.status", &st), PRISM_OK);
    prism_mark m = { .ts = 5, .name = 1 };
    PB_PUT(b, PRISM_CHUNK_MARKS, 0, 5, prism_enc_mark(&b->e, &m));
    for (uint32_t s = 0; s < 2; s++) {
        uint64_t now = 1000;
        for (int rep = 0; rep < 3; rep++) {
            pb_enter(b, s, now, 1);             /* a root, all others beneath it */
            now += 10;
            for (uint32_t id = 2; id <= N_HOSTILE; id++)
                pb_leaf(b, s, &now, id, 1000 * id);
            pb_exit(b, s, now += 10);
        }
    }
    pb_flush(b);
    FILE *f = fopen(h->path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
    assert_int_equal(fclose(f), 0);
    free(b->data);
    free(b);
    *state = h;
    return 0;
}

static int hx_teardown(void **state)
{
    hx *h = *state;
    scratch_remove(h->dir);
    free(h);
    return 0;
}

/* The visible forms every text output must show for the region names. */
static void assert_escaped_names(const char *what, const char *out, bool folded)
{
    if (folded) {                       /* C0 controls are spaces there */
        static const char *const fwant[] = { "cls [2Jname", " ]0:pwned name", "rlo\\u202eevil",
                                             "lri\\u2066x\\u2069", "csi\\u009b31m",
                                             "bad\\xff\\xfe\\x9butf8" };
        for (size_t i = 0; i < sizeof fwant / sizeof fwant[0]; i++)
            if (!strstr(out, fwant[i]))
                fail_msg("%s: no \"%s\" in:\n%s", what, fwant[i], out);
        return;
    }
    static const char *const want[] = { "cls\\x1b[2Jname", "\\x1b]0;pwned\\x07name",
                                        "rlo\\u202eevil", "lri\\u2066x\\u2069",
                                        "csi\\u009b31m", "bad\\xff\\xfe\\x9butf8" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i]))
            fail_msg("%s: no \"%s\" in:\n%s", what, want[i], out);
}

static void dump_is_safe(void **state)
{
    hx *h = *state;
    char *out, *err;
    const char *argv[] = { "dump", h->path, NULL };
    assert_int_equal(run_cmd(cmd_dump, argv, &out, &err), EXIT_OK);
    assert_terminal_safe("dump", out);
    assert_terminal_safe("dump stderr", err);
    assert_escaped_names("dump", out, false);
    assert_non_null(strstr(out, "host: host\\x1b]0;owned\\x07\\u009b\n"));
    assert_non_null(strstr(out, "producer: prod\\x1b[2J\n"));
    assert_non_null(strstr(out, "clock: clk\\u2066\n"));
    assert_non_null(strstr(out, "argv: train\\x1b[31m.py --name=\\u202egpj.exe %n%s\n"));
    assert_non_null(strstr(out, "config key\\x1b]0;t\\x07 = \"val\\x1b[2J\\u202e\"\n"));
    assert_non_null(strstr(out, "\"main\\x1b[2J\\u202e\""));
    assert_non_null(strstr(out, "\"worker\\x1b]0;x\\x07\\xff\""));
    assert_non_null(strstr(out, "gpu.status = \"gpu\\x1b[2J\\u202e%n\""));
    assert_non_null(strstr(out, "fmt %n%n%s%x"));      /* printed, never a format */
    assert_non_null(strstr(out, "nl\\x0aline\\x0d\\x09tab"));
    free(out);
    free(err);
}

static void analyze_is_safe(void **state)
{
    hx *h = *state;
    char *out, *err;
    const char *argv[] = { "analyze", h->path, NULL };
    assert_int_equal(run_cmd(cmd_analyze, argv, &out, &err), EXIT_OK);
    assert_terminal_safe("analyze", out);
    assert_terminal_safe("analyze stderr", err);
    assert_non_null(strstr(out, "Host: host\\x1b]0;owned\\x07\\u009b, pid"));
    assert_non_null(strstr(out, "Producer: prod\\x1b[2J\n"));
    assert_non_null(strstr(out, "Command: train\\x1b[31m.py --name=\\u202egpj.exe %n%s\n"));
    assert_non_null(strstr(out, "(gpu.status: gpu\\x1b[2J\\u202e%n)"));
    assert_non_null(strstr(out, "fmt %n%n%s%x"));
    free(out);
    free(err);
}

static void compare_is_safe(void **state)
{
    hx *h = *state;
    char *out, *err;
    const char *argv[] = { "compare", h->path, h->path, "--top", "0", NULL };
    assert_int_equal(run_cmd(cmd_compare, argv, &out, &err), EXIT_OK);
    assert_terminal_safe("compare", out);
    assert_terminal_safe("compare stderr", err);
    assert_non_null(strstr(out, "cls\\x1b[2Jname"));
    free(out);
    free(err);
}

static void csv_is_safe(void **state)
{
    hx *h = *state;
    char *out, *err;
    const char *argv[] = { "export", h->path, "--format", "csv", "-o", "-", NULL };
    assert_int_equal(run_cmd(cmd_export, argv, &out, &err), EXIT_OK);
    assert_terminal_safe("csv", out);
    assert_escaped_names("csv", out, false);
    /* one line per node and the header: no line break inside a field */
    assert_int_equal(count_lines(out), 1 + N_HOSTILE);
    /* the quote doubled, the field quoted for its comma and quote */
    assert_non_null(strstr(out, ",\"nl\\x0aline\\x0d\\x09tab,\"\"q\"\";semi\\x7f\","));
    free(out);
    free(err);
}

static void folded_is_safe(void **state)
{
    hx *h = *state;
    char *out, *err;
    const char *argv[] = { "export", h->path, "--format", "folded", "-o", "-", NULL };
    assert_int_equal(run_cmd(cmd_export, argv, &out, &err), EXIT_OK);
    assert_terminal_safe("folded", out);
    assert_escaped_names("folded", out, true);
    /* ';' and line breaks are its syntax: ':' and spaces, as before */
    assert_non_null(strstr(out, ";nl line  tab,\"q\":semi  "));
    free(out);
    free(err);
}

/* The JSON export escapes by its own rules, unchanged. */
static void json_unchanged(void **state)
{
    hx *h = *state;
    char *out, *err;
    const char *argv[] = { "export", h->path, "--format", "json", "-o", "-", NULL };
    assert_int_equal(run_cmd(cmd_export, argv, &out, &err), EXIT_OK);
    assert_non_null(strstr(out, "cls\\u001b[2Jname"));
    assert_null(strstr(out, "\x1b"));
    free(out);
    free(err);
}

/* ---- the explorer's and the reports' fitting ---- */

static void fit_escapes_first(void **state)
{
    (void)state;
    char buf[64];
    /* the reports: whole, escaped, an escape counted as what it shows */
    assert_int_equal(report_cols("a\x1b[2J"), 8);
    assert_int_equal(report_cols("x\xe2\x80\xae\xff"), 11);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    report_cell(m, "a\x1b[2J", 2, 10);                /* fits: padded */
    fputs("|\n", m);
    report_cell(m, "\x1b\x1b\x1b", 2, 4);            /* too wide: its own line */
    fputs("|\n", m);
    assert_int_equal(fclose(m), 0);
    assert_string_equal(text, "a\\x1b[2J  |\n\\x1b\\x1b\\x1b\n      |\n");
    free(text);
    int w = tv_fit(buf, sizeof buf, "r\xe2\x80\xaeo\x1b", 40, true);
    assert_string_equal(buf, "r\\u202eo\\x1b");
    assert_int_equal(w, 12);
    w = tv_fit(buf, sizeof buf, "ab\x1b[2J", 5, false);
    assert_string_equal(buf, "ab\\x~");
    assert_int_equal(w, 5);
    w = tv_fit_left(buf, sizeof buf, "\x07" "abc", 4, false);
    assert_string_equal(buf, "~abc");
    w = flame_label(buf, sizeof buf, "ab\x1b[2J", 5, false);   /* a flame block */
    assert_string_equal(buf, "ab\\x~");
    assert_int_equal(w, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escapes_each_kind),
        cmocka_unit_test(str_never_cuts_an_escape),
        cmocka_unit_test(fit_escapes_first),
        cmocka_unit_test_setup_teardown(dump_is_safe, hx_setup, hx_teardown),
        cmocka_unit_test_setup_teardown(analyze_is_safe, hx_setup, hx_teardown),
        cmocka_unit_test_setup_teardown(compare_is_safe, hx_setup, hx_teardown),
        cmocka_unit_test_setup_teardown(csv_is_safe, hx_setup, hx_teardown),
        cmocka_unit_test_setup_teardown(folded_is_safe, hx_setup, hx_teardown),
        cmocka_unit_test_setup_teardown(json_unchanged, hx_setup, hx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
