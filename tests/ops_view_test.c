/*
 * ops_view_test.c - the Ops pane's callers view model (tui/callers.c) on
 * analyses of refgen profiles: every path of an operation found once,
 * heaviest first, shares of the operation's total, the path text, an
 * unknown name, rebuilding in place, and middle elision (ASCII, UTF-8,
 * escaped control bytes, tiny widths).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_util.h"
#include "../tui/callers.h"
#include "../tui/treeview.h"

typedef vu_fix fix;

static size_t nodes_named(const prism_tree *t, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += !strcmp(t->nodes[i].name, name);
    return n;
}

/* Every operation: its rows are exactly the nodes of that name, each once,
 * by total, with total / op total as share. */
static void test_every_op(void **state)
{
    fix *f = *state;
    size_t nops;
    const prism_op *ops = prism_analysis_ops(f->a, &nops);
    assert_true(nops > 3);
    size_t multi = 0;
    callers c = { 0 };
    for (size_t k = 0; k < nops; k++) {
        assert_int_equal(callers_build(&c, f->a, ops[k].name), 0);
        assert_string_equal(c.name, ops[k].name);
        assert_int_equal(c.n, nodes_named(f->t, ops[k].name));
        assert_true(c.op_total_ns == ops[k].total_ns);
        multi += c.n > 1;
        bool heaviest_seen = false;
        for (size_t i = 0; i < c.n; i++) {
            const prism_node *nd = &f->t->nodes[c.rows[i].node];
            assert_string_equal(nd->name, ops[k].name);
            assert_true(nd->path_hash == c.rows[i].path_hash);
            assert_true(nd->total_ns == c.rows[i].total_ns);
            assert_true(nd->calls == c.rows[i].calls);
            assert_true(prism_analysis_find(f->a, c.rows[i].path_hash) == c.rows[i].node);
            double want = ops[k].total_ns ? (double)nd->total_ns / (double)ops[k].total_ns : 0;
            assert_true(c.rows[i].share > want - 1e-12 && c.rows[i].share < want + 1e-12);
            if (i)
                assert_true(c.rows[i - 1].total_ns >= c.rows[i].total_ns);
            for (size_t j = 0; j < i; j++)
                assert_true(c.rows[j].node != c.rows[i].node);
            heaviest_seen |= c.rows[i].node == ops[k].node;
            assert_true(callers_find(&c, c.rows[i].path_hash) <= i);
        }
        assert_true(heaviest_seen);
        if (c.n)                /* the op's heaviest path comes first */
            assert_true(c.rows[0].total_ns == f->t->nodes[ops[k].node].total_ns);
    }
    assert_true(multi > 0);     /* the profile has operations called from several paths */
    callers_free(&c);
    assert_null(c.rows);
    assert_int_equal(c.n, 0);
}

static void test_unknown_and_empty(void **state)
{
    fix *f = *state;
    callers c = { 0 };
    assert_int_equal(callers_build(&c, f->a, "no such operation"), 0);
    assert_int_equal(c.n, 0);
    assert_true(c.op_total_ns == 0);
    assert_int_equal(callers_build(&c, f->a, NULL), 0);
    assert_int_equal(c.n, 0);
    assert_string_equal(c.name, "");
    assert_int_equal(callers_build(&c, NULL, "x"), 0);
    assert_int_equal(c.n, 0);
    assert_true(callers_find(&c, 1) == (size_t)-1);
    callers_free(&c);
}

/* The path text walks to the root: its last part is the name, its part
 * count the depth + 1. */
static void test_path(void **state)
{
    fix *f = *state;
    char buf[2048];
    for (size_t i = 0; i < f->t->count; i++) {
        const prism_node *nd = &f->t->nodes[i];
        callers_path(buf, sizeof buf, f->t, (uint32_t)i);
        size_t parts = 1;
        for (const char *p = buf; *p; p++)
            parts += *p == '/';
        size_t slashes_in_names = 0;
        for (uint32_t q = (uint32_t)i; q != PRISM_NO_NODE; q = f->t->nodes[q].parent)
            for (const char *p = f->t->nodes[q].name; *p; p++)
                slashes_in_names += *p == '/';
        assert_int_equal(parts - slashes_in_names, nd->depth + 1);
        size_t ln = strlen(nd->name), lb = strlen(buf);
        assert_true(lb >= ln);
        assert_string_equal(buf + lb - ln, nd->name);
    }
    callers_path(buf, 4, f->t, f->t->first_root);      /* cut short, terminated */
    assert_true(strlen(buf) <= 3);
    callers_path(buf, sizeof buf, f->t, PRISM_NO_NODE);
    assert_string_equal(buf, "");
}

/* the one middle elision of every pane (tv_fit_mid), as the Ops and GPU
 * panes use it */
static void test_fit_mid(void **state)
{
    (void)state;
    char out[256];
    assert_int_equal(tv_fit_mid(out, sizeof out, "abcdefghij", 20, false), 10);
    assert_string_equal(out, "abcdefghij");
    assert_int_equal(tv_fit_mid(out, sizeof out, "abcdefghij", 10, false), 10);
    assert_string_equal(out, "abcdefghij");
    assert_int_equal(tv_fit_mid(out, sizeof out, "abcdefghij", 5, false), 5);
    assert_string_equal(out, "ab..j");
    assert_int_equal(tv_fit_mid(out, sizeof out, "abcdefghij", 6, true), 6);
    assert_string_equal(out, "abc\u2026ij");
    assert_int_equal(tv_fit_mid(out, sizeof out, "abcdefghij", 1, false), 1);
    assert_string_equal(out, "a");        /* no room for both ends */
    assert_int_equal(tv_fit_mid(out, sizeof out, "abcdefghij", 0, false), 0);
    assert_string_equal(out, "");
    /* multi-byte characters count one column and are never split */
    const char *e6 = "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9";
    assert_int_equal(tv_fit_mid(out, sizeof out, e6, 4, false), 4);
    assert_string_equal(out, "\u00e9..\u00e9");
    /* control bytes are escaped before fitting: what is fitted is shown */
    assert_int_equal(tv_fit_mid(out, sizeof out, "a\x1b[31mb", 40, false), 10);
    assert_string_equal(out, "a\\x1b[31mb");
    tv_fit_mid(out, sizeof out, "\x1b\x1b\x1b\x1b\x1b\x1b", 9, false);
    assert_null(strchr(out, '\x1b'));
    assert_int_equal(tv_fit_mid(out, 3, "abcdefghij", 8, false), 2);   /* cap wins */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_op, vu_fix_setup, vu_fix_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_and_empty, vu_fix_setup, vu_fix_teardown),
        cmocka_unit_test_setup_teardown(test_path, vu_fix_setup, vu_fix_teardown),
        cmocka_unit_test(test_fit_mid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
