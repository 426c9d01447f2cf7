/*
 * jsonw_test.c - pb_json's strings (base/jsonw.c) under escape.h's rule:
 * C0 controls, DEL, C1 controls and the bidi controls and separators that
 * esc_cp_unsafe names come out as \uXXXX, never raw; every other valid
 * UTF-8 character is copied; the output is JSON that a parser (yajl, as the
 * importer and the summary reader use) reads back to the same string.  The
 * same through every entry: the writer, the FILE and buffer string calls,
 * and the cut of pb_json_put_string_max (an escape is never split).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "escape.h"
#include "jsonw.h"
#include "json_check.h"

/* The UTF-8 encoding of cp (below U+10000) into out; its length. */
static size_t utf8(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
}

/* Whether b[0..n) holds a raw C0 (besides the framing's \n), DEL, C1,
 * bidi control or line/paragraph separator. */
static bool has_raw_unsafe(const char *b, size_t n)
{
    const unsigned char *p = (const unsigned char *)b;
    for (size_t i = 0; i < n;) {
        if ((p[i] < 0x20 && p[i] != '\n') || p[i] == 0x7f)
            return true;
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        unsigned char t[4] = { 0 };
        memcpy(t, p + i, n - i < 4 ? n - i : 4);
        uint32_t cp;
        size_t len = esc_utf8_decode(t, &cp);
        if (!len)
            return true;                /* the writer's output is valid UTF-8 */
        if (esc_cp_unsafe(cp))
            return true;
        i += len;
    }
    return false;
}

/* s written as the value of {"s": ...}, parsed back by yajl: the same
 * string; the text is valid JSON and holds nothing raw.  Returns the
 * writer's output (the caller frees it). */
static char *round_trip(const char *s)
{
    pb_buf b = { 0 };
    pb_json w;
    pb_json_init_buf(&w, &b, 0);
    pb_json_begin_object(&w);
    pb_json_kstring(&w, "s", s);
    pb_json_end_object(&w);
    assert_true(pb_json_finish(&w));
    assert_false(b.oom);
    assert_false(has_raw_unsafe(b.data, b.len));
    json_check c = { (const unsigned char *)b.data, (const unsigned char *)b.data + b.len, 0, 0 };
    assert_true(jc_value(&c));

    char err[128];
    yajl_val v = yajl_tree_parse(b.data, err, sizeof err);
    assert_non_null(v);
    const char *path[] = { "s", NULL };
    yajl_val got = yajl_tree_get(v, path, yajl_t_string);
    assert_non_null(got);
    assert_string_equal(YAJL_GET_STRING(got), s);
    yajl_tree_free(v);
    return b.data;
}

/* One code point alone between two letters: written as want (NULL: raw). */
static void one(uint32_t cp, const char *want)
{
    char s[8] = "a";
    size_t n = 1 + utf8(cp, s + 1);
    s[n++] = 'z';
    s[n] = '\0';
    char *out = round_trip(s);
    char expect[64];
    if (want)
        snprintf(expect, sizeof expect, "{\"s\":\"a%sz\"}\n", want);
    else
        snprintf(expect, sizeof expect, "{\"s\":\"%s\"}\n", s);
    assert_string_equal(out, expect);
    free(out);
}

static void every_class_escaped(void **state)
{
    (void)state;
    char want[16];
    for (uint32_t c = 1; c < 0x20; c++) {           /* C0 */
        const char *shortf = c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n"
                           : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
        snprintf(want, sizeof want, "\\u%04x", (unsigned)c);
        one(c, shortf ? shortf : want);
    }
    one(0x7f, "\\u007f");                           /* DEL */
    for (uint32_t c = 0x80; c <= 0x9f; c++) {       /* C1, CSI U+009B among them */
        snprintf(want, sizeof want, "\\u%04x", (unsigned)c);
        one(c, want);
    }
    static const uint32_t bidi[] = { 0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b,
                                     0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
                                     /* no column: zero width, joiners, BOM, combining */
                                     0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad, 0x0301,
                                     0xfe0f, 0x20d7 };
    for (size_t i = 0; i < sizeof bidi / sizeof *bidi; i++) {
        snprintf(want, sizeof want, "\\u%04x", (unsigned)bidi[i]);
        one(bidi[i], want);
    }
    one('"', "\\\"");
    one('\\', "\\\\");
}

static void neighbours_stay_raw(void **state)
{
    (void)state;
    /* printable ASCII, and the characters beside each escaped range */
    static const uint32_t raw[] = { ' ', '~', 0xa0, 0xe9, 0x061b, 0x061d, 0x200a, 0x2010,
                                    0x2027, 0x202f, 0x205f, 0x206a, 0x4e2d, 0xfffd, 0x02ff,
                                    0x0370, 0xfe10 };
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++)
        one(raw[i], NULL);
    char *out = round_trip("\xf0\x9f\x94\xa5 aten::mm");     /* 4-byte UTF-8 */
    assert_string_equal(out, "{\"s\":\"\xf0\x9f\x94\xa5 aten::mm\"}\n");
    free(out);
}

/* The hostile names of the end-to-end test (tests/hostile_names_test.sh). */
static void hostile_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "clear\x1b[2Jscreen", "c1\xc2\x9b" "31mcsi", "del\x7f" "ete", "rlo\xe2\x80\xae" "evil",
        "rli\xe2\x81\xa7" "iso\xe2\x81\xa9" "pdi", "ls\xe2\x80\xa8" "line", "ps\xe2\x80\xa9" "para",
        "bell\a tab\t nl\n cr\r", "\xe2\x80\xae\xe2\x80\xae\xe2\x80\xae",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        free(round_trip(names[i]));
    char *out = round_trip("c1\xc2\x9b" "31mcsi rlo\xe2\x80\xae");
    assert_string_equal(out, "{\"s\":\"c1\\u009b31mcsi rlo\\u202e\"}\n");
    free(out);
}

/* Bytes that start no valid sequence: U+FFFD, escaped as before. */
static void invalid_utf8(void **state)
{
    (void)state;
    pb_buf b = { 0 };
    assert_true(pb_json_buf_string(&b, "a\xff\xc2z\xed\xa0\x80", 7));
    assert_string_equal(pb_buf_str(&b), "\"a\\ufffd\\ufffdz\\ufffd\\ufffd\\ufffd\"");
    pb_buf_free(&b);
}

/* The FILE entry writes what the buffer entry appends; the cut of
 * put_string_max never splits an escape. */
static void file_and_cut(void **state)
{
    (void)state;
    const char *s = "x\xe2\x80\xae\x7f\xc2\x9b";
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    pb_json_put_string(f, s, strlen(s));
    fputc(' ', f);
    pb_json_put_string_max(f, s, strlen(s), 12);    /* room for x and one escape */
    fputc(' ', f);
    pb_json_put_string_max(f, s, strlen(s), 6);     /* x alone: no half escape */
    fclose(f);
    assert_string_equal(text, "\"x\\u202e\\u007f\\u009b\" \"x\\u202e\" \"x\"");

    pb_buf b = { 0 };
    assert_true(pb_json_buf_string(&b, s, strlen(s)));
    assert_string_equal(pb_buf_str(&b), "\"x\\u202e\\u007f\\u009b\"");
    pb_buf_free(&b);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_class_escaped),
        cmocka_unit_test(neighbours_stay_raw),
        cmocka_unit_test(hostile_names),
        cmocka_unit_test(invalid_utf8),
        cmocka_unit_test(file_and_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
