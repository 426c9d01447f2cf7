/*
 * ops_pane_test.c - the Ops, Bottlenecks, GPU and Memory panes drawn on a
 * real curses screen (newterm on /dev/null, no terminal needed) from a
 * refgen profile and read back: the callers view (open, header, Enter
 * jumps through ui_jump, Esc closes, then passes), the filter, the
 * reverse sort, mouse clicks / double clicks / wheel, cross-pane jumps
 * recorded for Esc / Backspace, and the fit at 80x24 and 200x50 (whole
 * figures, middle-elided names, a mean column when wide).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "view_util.h"
#include "../tui/compare_view.h"
#include "../tui/pane_ops.h"

typedef struct fix {
    char dir[VU_DIR_CAP], path[VU_PATH_CAP];
    prism_analysis *a;
    SCREEN *scr;
    FILE *out, *in;
    ui u;
} fix;

static int setup(void **state)
{
    fix *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->a = vu_scratch_ref(f->dir, f->path, "opspane", 6, 3);
    f->out = fopen("/dev/null", "w");
    f->in = fopen("/dev/null", "r");
    assert_non_null(f->out);
    assert_non_null(f->in);
    f->scr = newterm("xterm", f->out, f->in);
    assert_non_null(f->scr);
    set_term(f->scr);
    ui_draw_set_utf8(false);
    fmt_set_utf8(false);
    f->u.a = f->a;
    f->u.jump_pane = -1;
    f->u.pane = PANE_OPS;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fix *f = *state;
    endwin();
    delscreen(f->scr);
    fclose(f->out);
    fclose(f->in);
    prism_analysis_free(f->a);
    vu_scratch_remove(f->dir, f->path);
    free(f);
    return 0;
}

/* Draw pane p (state st) on a rows x cols screen. */
static void show(fix *f, const ui_pane *p, void *st, int rows, int cols)
{
    resizeterm(rows, cols);
    erase();
    f->u.rows = rows;
    f->u.cols = cols;
    p->draw(&f->u, st, 0, 0, rows, cols);
}

/* Row y of the screen as text (trailing blanks removed). */
static const char *row_text(int y)
{
    static char buf[512];
    int n = mvinnstr(y, 0, buf, (int)sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    for (int i = n - 1; i >= 0 && buf[i] == ' '; i--)
        buf[i] = '\0';
    return buf;
}

static bool screen_has(const char *s, int rows)
{
    for (int y = 0; y < rows; y++)
        if (strstr(row_text(y), s))
            return true;
    return false;
}

static int press(fix *f, const ui_pane *p, void *st, int key)
{
    for (size_t i = 0; i < p->nkeys; i++)
        if (p->keys[i].key == key)
            return p->keys[i].fn(&f->u, st, key);
    fail_msg("no key %d in %s", key, p->name);
    return 0;
}

/* An operation called from more than one path, selected in the list. */
static size_t select_multi(fix *f, ops_st *s, callers *c)
{
    for (size_t i = 0; i < s->nops; i++) {
        assert_int_equal(callers_build(c, f->a, s->ops[s->order[i]].name), 0);
        if (c->n > 1) {
            s->sel = i;
            return i;
        }
    }
    fail_msg("no operation with several paths");
    return 0;
}

static void test_callers_view(void **state)
{
    fix *f = *state;
    ops_st *s = pane_ops.init(&f->u);
    assert_non_null(s);
    callers c = { 0 };
    select_multi(f, s, &c);
    assert_int_equal(press(f, &pane_ops, s, 'c'), UI_REDRAW);
    assert_true(s->callers_on);
    show(f, &pane_ops, s, 24, 80);
    char want[300];
    snprintf(want, sizeof want, "callers of %s: %zu paths", c.name, c.n);
    assert_non_null(strstr(row_text(0), want));
    assert_non_null(strstr(row_text(1), "call path"));
    /* every path on its own row, heaviest first, with its share */
    for (size_t i = 0; i < c.n && i < 10; i++) {
        char share[32];
        snprintf(share, sizeof share, "%.1f", c.rows[i].share * 100.0);
        const char *line = row_text(2 + (int)i);
        assert_non_null(strstr(line, share));
        assert_non_null(strstr(line, c.name));
    }
    /* j then Enter: that path in the Tree, remembered for back */
    press(f, &pane_ops, s, 'j');
    assert_int_equal(s->csel, 1);
    assert_int_equal(press(f, &pane_ops, s, '\r'), UI_REDRAW);
    assert_int_equal(f->u.jump_pane, PANE_TREE);
    assert_int_equal(f->u.nhistory, 1);
    assert_int_equal(f->u.history[0].pane, PANE_OPS);
    assert_true(f->u.sel_hash == c.rows[1].path_hash);
    /* Esc closes the view, a second Esc is the frame's (back) */
    assert_int_equal(press(f, &pane_ops, s, 27), UI_REDRAW);
    assert_false(s->callers_on);
    assert_int_equal(press(f, &pane_ops, s, 27), UI_PASS);
    /* c toggles */
    press(f, &pane_ops, s, 'c');
    assert_true(s->callers_on);
    press(f, &pane_ops, s, 'c');
    assert_false(s->callers_on);
    show(f, &pane_ops, s, 24, 80);
    assert_non_null(strstr(row_text(0), "by total"));
    callers_free(&c);
    pane_ops.free(s);
}

static void test_filter(void **state)
{
    fix *f = *state;
    ops_st *s = pane_ops.init(&f->u);
    size_t nall = s->nall, want = 0;
    for (size_t i = 0; i < nall; i++)
        want += strcasestr(s->ops[i].name, "LAYER") != NULL;
    assert_true(want > 0 && want < nall);
    snprintf(f->u.filter, sizeof f->u.filter, "LAYER");
    show(f, &pane_ops, s, 24, 80);
    char head[128];
    snprintf(head, sizeof head, "filter: LAYER, %zu of %zu ops", want, nall);
    assert_non_null(strstr(row_text(0), head));
    assert_int_equal(s->nops, want);
    for (int i = 0; i < s->list_n; i++)
        assert_non_null(strcasestr(row_text(s->list_y + i), "layer"));
    snprintf(f->u.filter, sizeof f->u.filter, "no-such-op");
    show(f, &pane_ops, s, 24, 80);
    assert_true(screen_has("no operation passes the filter", 24));
    f->u.filter[0] = '\0';
    show(f, &pane_ops, s, 24, 80);
    assert_int_equal(s->nops, nall);
    pane_ops.free(s);
}

static void test_reverse(void **state)
{
    fix *f = *state;
    ops_st *s = pane_ops.init(&f->u);
    assert_true(s->nops > 2);
    const char *top = s->ops[s->order[0]].name;
    press(f, &pane_ops, s, 'r');
    assert_true(s->rev);
    for (size_t i = 1; i < s->nops; i++)
        assert_true(s->ops[s->order[i - 1]].total_ns <= s->ops[s->order[i]].total_ns);
    assert_string_equal(s->ops[s->order[s->nops - 1]].name, top);
    show(f, &pane_ops, s, 24, 80);
    assert_non_null(strstr(row_text(0), "(asc)"));
    press(f, &pane_ops, s, 's');                /* by self, still reversed */
    for (size_t i = 1; i < s->nops; i++)
        assert_true(s->ops[s->order[i - 1]].self_ns <= s->ops[s->order[i]].self_ns);
    press(f, &pane_ops, s, 'r');
    show(f, &pane_ops, s, 24, 80);
    assert_non_null(strstr(row_text(0), "by self (desc)"));
    pane_ops.free(s);
}

static void test_ops_mouse(void **state)
{
    fix *f = *state;
    ops_st *s = pane_ops.init(&f->u);
    show(f, &pane_ops, s, 24, 80);
    assert_true(s->list_n > 5);
    assert_int_equal(pane_ops.mouse(&f->u, s, UI_MOUSE_CLICK, s->list_y + 3, 5), UI_REDRAW);
    assert_int_equal(s->sel, s->top + 3);
    const prism_tree *t = prism_analysis_tree(f->a);
    assert_true(f->u.sel_hash == t->nodes[s->ops[s->order[s->sel]].node].path_hash);
    assert_int_equal(f->u.jump_pane, -1);
    assert_int_equal(pane_ops.mouse(&f->u, s, UI_MOUSE_CLICK, 0, 5), UI_NONE);   /* header */
    assert_int_equal(pane_ops.mouse(&f->u, s, UI_MOUSE_CLICK, 23, 5), UI_NONE);  /* footer */
    pane_ops.mouse(&f->u, s, UI_MOUSE_WHEEL_DOWN, 5, 5);
    assert_int_equal(s->sel, s->top + 6 > s->nops - 1 ? s->nops - 1 : 6);
    pane_ops.mouse(&f->u, s, UI_MOUSE_WHEEL_UP, 5, 5);
    assert_int_equal(s->sel, 3);
    pane_ops.mouse(&f->u, s, UI_MOUSE_DOUBLE, s->list_y + 1, 5);
    assert_int_equal(f->u.jump_pane, PANE_TREE);
    assert_int_equal(f->u.nhistory, 1);
    /* in the callers view a click picks a path, a double click jumps to it */
    f->u.jump_pane = -1;
    callers c = { 0 };
    select_multi(f, s, &c);
    press(f, &pane_ops, s, 'c');
    show(f, &pane_ops, s, 24, 80);
    assert_int_equal(pane_ops.mouse(&f->u, s, UI_MOUSE_CLICK, s->clist_y + 1, 5), UI_REDRAW);
    assert_int_equal(s->csel, 1);
    pane_ops.mouse(&f->u, s, UI_MOUSE_DOUBLE, s->clist_y, 5);
    assert_int_equal(f->u.jump_pane, PANE_TREE);
    assert_true(f->u.sel_hash == c.rows[0].path_hash);
    callers_free(&c);
    pane_ops.free(s);
}

/* A figure of the row as a whole token (not cut). */
static bool has_token(const char *line, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = strstr(line, tok); p; p = strstr(p + 1, tok))
        if ((p == line || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

static void test_fit(void **state)
{
    fix *f = *state;
    ops_st *s = pane_ops.init(&f->u);
    static const int sizes[][2] = { { 24, 80 }, { 50, 200 }, { 12, 40 }, { 5, 20 }, { 1, 1 } };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int rows = sizes[k][0], cols = sizes[k][1];
        show(f, &pane_ops, s, rows, cols);
        if (cols < 80)
            continue;           /* drawn without crashing; figures need room */
        assert_true(s->list_n > 0);
        for (int i = 0; i < s->list_n; i++) {
            const prism_op *op = &s->ops[s->order[s->top + (size_t)i]];
            char tot[32], calls[32];
            fmt_ns(tot, sizeof tot, (double)op->total_ns);
            fmt_count(calls, sizeof calls, (double)op->calls);
            const char *line = row_text(s->list_y + i);
            assert_true(has_token(line, tot));
            assert_true(has_token(line, calls));
        }
        if (cols == 200) {
            assert_non_null(strstr(row_text(0), "mean"));
            assert_non_null(strstr(row_text(0), "heaviest path"));
            for (int i = 0; i < s->list_n; i++)   /* names whole on a wide screen */
                assert_non_null(strstr(row_text(s->list_y + i),
                                       s->ops[s->order[s->top + (size_t)i]].name));
        } else {
            assert_null(strstr(row_text(0), "mean"));
        }
    }
    pane_ops.free(s);
}

static void test_bottleneck_jumps(void **state)
{
    fix *f = *state;
    f->u.pane = PANE_BOTTLENECKS;
    void *st = pane_bottlenecks.init(&f->u);
    size_t nb;
    const prism_bottleneck *b = prism_analysis_bottlenecks(f->a, &nb);
    assert_true(nb > 0);
    show(f, &pane_bottlenecks, st, 24, 80);
    int with = -1;
    for (size_t i = 0; i < nb; i++)
        if (with < 0 && prism_analysis_find(f->a, b[i].path_hash) != PRISM_NO_NODE)
            with = (int)i;
    assert_true(with >= 0);
    /* a click selects the finding's row (table rows start at 2), a double
     * click jumps to its region through ui_jump */
    assert_int_equal(pane_bottlenecks.mouse(&f->u, st, UI_MOUSE_DOUBLE, 2 + with, 3), UI_REDRAW);
    assert_int_equal(f->u.jump_pane, PANE_TREE);
    assert_int_equal(f->u.nhistory, 1);
    assert_int_equal(f->u.history[0].pane, PANE_BOTTLENECKS);
    assert_true(f->u.sel_hash == b[with].path_hash);
    f->u.jump_pane = -1;
    press(f, &pane_bottlenecks, st, 'f');
    assert_int_equal(f->u.jump_pane, PANE_FLAME);
    assert_int_equal(f->u.nhistory, 2);
    assert_int_equal(pane_bottlenecks.mouse(&f->u, st, UI_MOUSE_CLICK, 0, 3), UI_NONE);
    assert_int_equal(pane_bottlenecks.mouse(&f->u, st, UI_MOUSE_CLICK, 2 + 40, 3), UI_NONE);
    pane_bottlenecks.free(st);
}

static void test_gpu(void **state)
{
    fix *f = *state;
    void *st = pane_gpu.init(&f->u);
    const prism_gpu_stats *g = prism_analysis_gpu(f->a);
    assert_true(g->present && g->nkernels > 0);
    show(f, &pane_gpu, st, 24, 80);
    assert_true(screen_has(g->kernels[0].name, 24));
    assert_true(screen_has("by total (desc)", 24));
    snprintf(f->u.filter, sizeof f->u.filter, "no-such-kernel");
    show(f, &pane_gpu, st, 24, 80);
    assert_true(screen_has("no kernel passes the filter", 24));
    assert_false(screen_has(g->kernels[0].name, 24));
    char head[128];
    snprintf(head, sizeof head, "filter: no-such-kernel, 0 of %zu", g->nkernels);
    assert_true(screen_has(head, 24));
    snprintf(f->u.filter, sizeof f->u.filter, "%.8s", g->kernels[0].name);
    show(f, &pane_gpu, st, 24, 80);
    assert_true(screen_has(g->kernels[0].name, 24));
    f->u.filter[0] = '\0';
    press(f, &pane_gpu, st, 'r');
    show(f, &pane_gpu, st, 24, 80);
    assert_true(screen_has("by total (asc)", 24));
    /* a click on the transfers' first row focuses that table */
    int y = -1;
    for (int i = 0; i < 24 && y < 0; i++)
        if (strstr(row_text(i), "Transfers"))
            y = i + 2;
    assert_true(y > 0);
    assert_int_equal(pane_gpu.mouse(&f->u, st, UI_MOUSE_CLICK, y, 4), UI_REDRAW);
    show(f, &pane_gpu, st, 24, 80);
    assert_true(screen_has("> Transfers", 24));
    assert_int_equal(pane_gpu.mouse(&f->u, st, UI_MOUSE_CLICK, 0, 4), UI_NONE);
    pane_gpu.free(st);
}

/* The step shown under the marker ("step N:"), from the screen. */
static long marker_step(void)
{
    for (int y = 0; y < 24; y++) {
        const char *p = strstr(row_text(y), "At step boundaries  step ");
        if (p)
            return strtol(p + strlen("At step boundaries  step "), NULL, 10);
    }
    return -1;
}

static void test_memory_click(void **state)
{
    fix *f = *state;
    void *st = pane_memory.init(&f->u);
    show(f, &pane_memory, st, 24, 80);
    long last = marker_step();
    assert_true(last > 0);
    int y = -1;                 /* the per-step chart: the row under its label */
    for (int i = 0; i < 24 && y < 0; i++)
        if (strstr(row_text(i), "At step boundaries"))
            y = i + 1;
    assert_true(y > 0);
    assert_int_equal(pane_memory.mouse(&f->u, st, UI_MOUSE_CLICK, y, 9), UI_REDRAW);
    show(f, &pane_memory, st, 24, 80);
    long first = marker_step();
    assert_true(first < last);
    assert_int_equal(pane_memory.mouse(&f->u, st, UI_MOUSE_CLICK, y, 78), UI_REDRAW);
    show(f, &pane_memory, st, 24, 80);
    assert_int_equal(marker_step(), last);
    pane_memory.mouse(&f->u, st, UI_MOUSE_WHEEL_UP, y, 40);
    show(f, &pane_memory, st, 24, 80);
    assert_true(marker_step() < last);
    assert_int_equal(pane_memory.mouse(&f->u, st, UI_MOUSE_CLICK, 0, 40), UI_NONE);
    pane_memory.free(st);
}

/* A second profile with more layers: operations the base lacks. */
static prism_analysis *analyze_layers(fix *f, unsigned layers, char *path, size_t cap)
{
    snprintf(path, cap, "%s/l%u.cbor", f->dir, layers);
    refgen_opts o = vu_ref_opts(layers, 3);
    return vu_ref_analysis(path, &o);
}

static void use_side(fix *f, int k, prism_analysis *a)
{
    f->u.side = k;
    f->u.a = a;
    f->u.state[PANE_OPS] = f->u.side_state[k][PANE_OPS];
}

/* Both sides in one order: the same operation on the same line, the
 * base's operations first, absent rows where a side lacks one; a sort or
 * reverse on one side reorders the other; selecting an absent row moves
 * the other side to it. */
static void assert_aligned(fix *f, prism_analysis *base, prism_analysis *cur)
{
    use_side(f, 0, base);
    ops_st *s0 = f->u.state[PANE_OPS];
    ops_sync(&f->u, s0);
    use_side(f, 1, cur);
    ops_st *s1 = f->u.state[PANE_OPS];
    ops_sync(&f->u, s1);
    assert_int_equal(s0->nops, s1->nops);
    for (size_t i = 0; i < s0->nops; i++)
        assert_string_equal(ops_name_at(s0, i), ops_name_at(s1, i));
}

static void test_compare_aligned(void **state)
{
    fix *f = *state;
    char p4[160], p6[160];
    prism_analysis *base = analyze_layers(f, 4, p4, sizeof p4);
    prism_analysis *cur = analyze_layers(f, 6, p6, sizeof p6);
    assert_int_equal(cmpv_setup(&f->u, base, cur, p4, p6), 0);
    use_side(f, 0, base);
    f->u.side_state[0][PANE_OPS] = pane_ops.init(&f->u);
    use_side(f, 1, cur);
    f->u.side_state[1][PANE_OPS] = pane_ops.init(&f->u);
    ops_st *s0 = f->u.side_state[0][PANE_OPS], *s1 = f->u.side_state[1][PANE_OPS];
    assert_aligned(f, base, cur);
    size_t n0, n1;
    prism_analysis_ops(base, &n0);
    prism_analysis_ops(cur, &n1);
    assert_true(n1 > n0);
    assert_int_equal(s0->nops, n1);     /* every name of either profile */
    assert_int_equal(s0->nabsent, n1 - n0);
    assert_int_equal(s1->nabsent, 0);
    /* the base's operations first, by the base's totals */
    for (size_t i = 0; i < n0; i++) {
        assert_non_null(ops_at(s0, i));
        if (i)
            assert_true(ops_at(s0, i - 1)->total_ns >= ops_at(s0, i)->total_ns);
    }
    for (size_t i = n0; i < s0->nops; i++)
        assert_null(ops_at(s0, i));
    /* the base side draws the new operations as absent rows */
    use_side(f, 0, base);
    show(f, &pane_ops, s0, 40, 100);
    assert_true(screen_has("(absent: new in the other profile)", 40));
    /* r on the new side: both reversed, still aligned */
    use_side(f, 1, cur);
    press(f, &pane_ops, s1, 'r');
    assert_aligned(f, base, cur);
    assert_true(s0->rev);
    for (size_t i = 1; i < n0; i++)     /* the base's smallest first, new ones after */
        assert_true(ops_at(s0, i - 1)->total_ns <= ops_at(s0, i)->total_ns);
    assert_null(ops_at(s0, n0));
    /* an absent row selected on the base side: the new side follows */
    use_side(f, 0, base);
    show(f, &pane_ops, s0, 40, 100);
    assert_true(s0->top + (size_t)s0->list_n > n0);
    assert_int_equal(pane_ops.mouse(&f->u, s0, UI_MOUSE_CLICK, s0->list_y + (int)(n0 - s0->top), 3),
                     UI_REDRAW);
    assert_true(f->u.sel_hash != 0);
    use_side(f, 1, cur);
    ops_sync(&f->u, s1);
    assert_int_equal(s1->sel, s0->sel);
    assert_int_equal(s0->sel, n0);
    assert_string_equal(ops_name_at(s1, s1->sel), ops_name_at(s0, n0));
    /* Enter and c on an absent row say so instead of jumping */
    use_side(f, 0, base);
    f->u.jump_pane = -1;
    press(f, &pane_ops, s0, '\r');
    assert_int_equal(f->u.jump_pane, -1);
    assert_string_equal(f->u.msg, "not in this profile");
    press(f, &pane_ops, s0, 'c');
    assert_false(s0->callers_on);
    /* a filter applies to both sides alike */
    snprintf(f->u.filter, sizeof f->u.filter, "layer");
    assert_aligned(f, base, cur);
    for (size_t i = 0; i < s0->nops; i++)
        assert_non_null(strstr(ops_name_at(s0, i), "layer"));
    pane_ops.free(s0);
    pane_ops.free(s1);
    cmpv_teardown(&f->u);
    prism_analysis_free(base);
    prism_analysis_free(cur);
    unlink(p4);
    unlink(p6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_callers_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reverse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ops_mouse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bottleneck_jumps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_click, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_aligned, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
