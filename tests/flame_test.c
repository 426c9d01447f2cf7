/*
 * flame_test.c - flame-graph geometry (tui/flame.c) over many widths, row
 * limits, zooms and trees: hand-made trees built here and analyses of
 * refgen profiles.  Every layout is checked for the invariants of flame.h
 * (no overlap on a row, children inside their parent's span, the zoom frame
 * spans the width, widths within one column of their exact share, rows
 * within the limit, children tile a parent without self time, visible
 * children of at least two columns' worth present); then navigation, the
 * search hits and share, and label fitting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tui/flame.h"
#include "view_util.h"

static const int widths[] = { 1, 2, 3, 10, 40, 80, 199, 300 };
static const int rowlims[] = { 1, 2, 3, 5, 100 };
#define NW (sizeof widths / sizeof widths[0])
#define NR (sizeof rowlims / sizeof rowlims[0])

/* ---- hand-made trees ---------------------------------------------------- */

typedef struct spec {
    int parent;                 /* index of an earlier entry, -1 for a root   */
    const char *name;
    uint64_t total;
} spec;

typedef struct htree {
    prism_node nodes[1100];
    prism_tree t;
} htree;

/* Build a tree from specs; siblings are linked in reverse order of the
 * specs so the layout's own ordering (by name) is what tests see. */
static void build(htree *h, const spec *s, size_t n)
{
    assert_true(n <= sizeof h->nodes / sizeof h->nodes[0]);
    memset(h, 0, sizeof *h);
    h->t.nodes = h->nodes;
    h->t.count = n;
    h->t.first_root = PRISM_NO_NODE;
    for (size_t i = 0; i < n; i++) {
        prism_node *nd = &h->nodes[i];
        nd->name = s[i].name;
        nd->total_ns = nd->self_ns = s[i].total;
        nd->path_hash = 0x9e3779b97f4a7c15ull * (i + 1);
        nd->first_child = PRISM_NO_NODE;
        nd->calls = 1;
        if (s[i].parent < 0) {
            nd->parent = PRISM_NO_NODE;
            nd->next_sibling = h->t.first_root;
            h->t.first_root = (uint32_t)i;
            h->t.total_ns += s[i].total;
        } else {
            prism_node *p = &h->nodes[s[i].parent];
            assert_true((size_t)s[i].parent < i);
            nd->parent = (uint32_t)s[i].parent;
            nd->depth = p->depth + 1;
            nd->next_sibling = p->first_child;
            p->first_child = (uint32_t)i;
            p->self_ns = p->self_ns > s[i].total ? p->self_ns - s[i].total : 0;
        }
    }
    for (size_t i = 0; i < n; i++)
        h->nodes[i].share = h->t.total_ns ? (double)h->nodes[i].total_ns / (double)h->t.total_ns : 0;
}

/* a(100) > b(50) > d(25), e(25);  a > c(30) > f(30);  z(100) > y(100) */
static const spec small[] = {
    { -1, "a", 100 }, { 0, "c", 30 }, { 0, "b", 50 }, { 2, "e", 25 }, { 2, "d", 25 },
    { 1, "f", 30 }, { -1, "z", 100 }, { 6, "y", 100 },
};
enum { A, C, B, E, D, F, Z, Y };

/* ---- invariants --------------------------------------------------------- */

static bool under(const prism_tree *t, uint32_t anc, uint32_t n)
{
    for (; n != PRISM_NO_NODE; n = t->nodes[n].parent)
        if (n == anc)
            return true;
    return false;
}

/* consistent: children's totals never exceed their parent's */
static void check(const flame *f, const prism_tree *t, uint32_t zoom, int W, int R,
                  bool consistent)
{
    assert_int_equal(f->width, W > 0 ? W : 0);
    assert_true(f->rows <= (R > 0 ? R : 0));
    if (f->count)
        assert_int_equal(f->rows, f->cells[f->count - 1].row + 1);
    int row0_used = 0;
    for (size_t i = 0; i < f->count; i++) {
        const flame_cell *c = &f->cells[i];
        assert_true(c->node < t->count);
        assert_true(c->w >= 1);
        assert_true(c->x >= 0 && c->x + c->w <= W);
        assert_true(c->row >= 0 && c->row < R);
        assert_int_equal(c->row, (int)t->nodes[c->node].depth -
                                     (zoom == PRISM_NO_NODE ? 0 : (int)t->nodes[zoom].depth));
        if (zoom != PRISM_NO_NODE)
            assert_true(under(t, zoom, c->node));
        if (i > 0) {            /* row-major, left to right, no overlap */
            const flame_cell *p = &f->cells[i - 1];
            assert_true(p->row < c->row || (p->row == c->row && p->x + p->w <= c->x));
        }
        if (consistent && f->base_ns) {
            assert_int_equal(c->t1 - c->t0, c == f->cells && zoom != PRISM_NO_NODE
                                                 ? f->base_ns : t->nodes[c->node].total_ns);
            double exact = (double)(c->t1 - c->t0) * W / (double)f->base_ns;
            if (fabs(c->w - exact) > 1.0 + 1e-9)
                fail_msg("cell %zu: width %d, exact %.3f (W %d)", i, c->w, exact, W);
        }
        if (c->row == 0) {
            assert_int_equal(c->parent, FLAME_NONE);
            row0_used += c->w;
        } else {
            const flame_cell *p = &f->cells[c->parent];
            assert_true(c->parent < i);
            assert_int_equal(p->row + 1, c->row);
            assert_int_equal(t->nodes[c->node].parent, p->node);
            assert_true(c->x >= p->x && c->x + c->w <= p->x + p->w);
            assert_true(c->t0 >= p->t0 && c->t1 <= p->t1);
        }
        /* children: contiguous, all pointing back; tile when no self time */
        uint64_t kids = 0;
        int kw = 0;
        for (uint32_t k = t->nodes[c->node].first_child; k != PRISM_NO_NODE;
             k = t->nodes[k].next_sibling) {
            kids += t->nodes[k].total_ns;
            size_t kc = flame_find(f, k);
            if (c->row + 1 < R && f->base_ns &&
                (double)t->nodes[k].total_ns * W / (double)f->base_ns >= 2.0 && consistent)
                assert_int_not_equal(kc, FLAME_NONE);
        }
        for (size_t k = 0; k < c->nchildren; k++) {
            assert_int_equal(f->cells[c->first_child + k].parent, i);
            kw += f->cells[c->first_child + k].w;
        }
        assert_true(kw <= c->w);
        if (consistent && c->row + 1 < R && kids == c->t1 - c->t0 && t->nodes[c->node].first_child != PRISM_NO_NODE)
            assert_int_equal(kw, c->w);
    }
    if (zoom != PRISM_NO_NODE && W > 0 && R > 0) {
        assert_true(f->count >= 1);
        assert_int_equal(f->cells[0].node, zoom);
        assert_int_equal(f->cells[0].x, 0);
        assert_int_equal(f->cells[0].w, W);
    } else if (consistent && f->base_ns) {
        assert_int_equal(row0_used, W);     /* the roots tile the width */
    }
}

static void check_all(const prism_tree *t, bool consistent, size_t zoom_step)
{
    flame f = { 0 };
    for (size_t wi = 0; wi < NW; wi++)
        for (size_t ri = 0; ri < NR; ri++) {
            int W = widths[wi], R = rowlims[ri];
            assert_int_equal(flame_build(&f, t, PRISM_NO_NODE, W, R), 0);
            check(&f, t, PRISM_NO_NODE, W, R, consistent);
            for (size_t z = 0; z < t->count; z += zoom_step) {
                assert_int_equal(flame_build(&f, t, (uint32_t)z, W, R), 0);
                check(&f, t, (uint32_t)z, W, R, consistent);
            }
        }
    flame_free(&f);
}

/* ---- geometry ----------------------------------------------------------- */

static void test_small_exact(void **state)
{
    (void)state;
    htree h;
    build(&h, small, sizeof small / sizeof small[0]);
    flame f = { 0 };
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 10, 10), 0);
    /* T = 200, 10 columns: 20 ns a column; children sorted by name */
    static const struct { uint32_t node; int row, x, w; } want[] = {
        { A, 0, 0, 5 }, { Z, 0, 5, 5 },
        { B, 1, 0, 3 }, { C, 1, 3, 1 }, { Y, 1, 5, 5 },    /* b: [0, 2.5) -> 3 */
        { D, 2, 0, 1 }, { E, 2, 1, 2 }, { F, 2, 3, 1 },
    };
    assert_int_equal(f.count, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < f.count; i++) {
        assert_int_equal(f.cells[i].node, want[i].node);
        assert_int_equal(f.cells[i].row, want[i].row);
        assert_int_equal(f.cells[i].x, want[i].x);
        assert_int_equal(f.cells[i].w, want[i].w);
    }
    assert_int_equal(f.rows, 3);
    assert_int_equal(f.base_ns, 200);

    /* zoomed on b: it spans the width, d and e halve it */
    assert_int_equal(flame_build(&f, &h.t, B, 40, 10), 0);
    assert_int_equal(f.count, 3);
    assert_int_equal(f.cells[0].node, B);
    assert_int_equal(f.cells[0].w, 40);
    assert_int_equal(f.cells[1].node, D);
    assert_int_equal(f.cells[1].w, 20);
    assert_int_equal(f.cells[2].x, 20);

    /* rows beyond the limit are dropped */
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 10, 2), 0);
    assert_int_equal(f.rows, 2);
    assert_int_equal(f.count, 5);
    /* narrow cells are dropped: at 3 columns c (0.45) goes, b stays */
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 3, 10), 0);
    assert_int_equal(flame_find(&f, C), FLAME_NONE);
    assert_int_equal(flame_find(&f, F), FLAME_NONE);
    assert_int_not_equal(flame_find(&f, B), FLAME_NONE);
    check_all(&h.t, true, 1);

    /* siblings in name order, numbers by value */
    static const spec layers[] = { { -1, "fwd", 40 }, { 0, "layer.10", 10 }, { 0, "layer.2", 10 },
                                   { 0, "layer.1", 10 }, { 0, "attn", 10 } };
    build(&h, layers, 5);
    flame_forget_order(&f);                 /* the tree changed in place */
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 40, 5), 0);
    assert_int_equal(f.count, 5);
    static const char *const order[] = { "fwd", "attn", "layer.1", "layer.2", "layer.10" };
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(h.t.nodes[f.cells[i].node].name, order[i]);
        assert_int_equal(f.cells[i].x, i ? 10 * ((int)i - 1) : 0);
    }
    /* a rename in place (same nodes, count and total): forget the order */
    h.nodes[1].name = "layer.3";
    flame_forget_order(&f);
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 40, 5), 0);
    assert_string_equal(h.t.nodes[f.cells[4].node].name, "layer.3");
    assert_int_equal(f.cells[4].x, 30);
    flame_free(&f);
}

static void test_edges(void **state)
{
    (void)state;
    htree h;
    build(&h, small, sizeof small / sizeof small[0]);
    flame f = { 0 };
    /* no width, no rows, a bad zoom, an empty tree */
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 0, 10), 0);
    assert_int_equal(f.count, 0);
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, -5, 10), 0);
    assert_int_equal(f.count, 0);
    assert_int_equal(flame_build(&f, &h.t, A, 10, 0), 0);
    assert_int_equal(f.count, 0);
    assert_int_equal(f.rows, 0);
    assert_int_equal(flame_build(&f, &h.t, 999, 10, 10), 0);
    assert_int_equal(f.zoom, PRISM_NO_NODE);
    assert_int_equal(f.cells[0].node, A);
    prism_tree empty = { NULL, 0, PRISM_NO_NODE, 0 };
    assert_int_equal(flame_build(&f, &empty, PRISM_NO_NODE, 80, 10), 0);
    assert_int_equal(f.count, 0);
    assert_int_equal(flame_find(&f, 0), FLAME_NONE);
    assert_int_equal(flame_parent(&f, 0), FLAME_NONE);
    assert_int_equal(flame_left(&f, 0), FLAME_NONE);
    assert_int_equal(flame_right(&f, 0), FLAME_NONE);
    assert_int_equal(flame_widest_child(&f, 0), FLAME_NONE);

    /* zero time: nothing unzoomed, the zoom frame alone when zoomed */
    static const spec zero[] = { { -1, "a", 0 }, { 0, "b", 0 } };
    build(&h, zero, 2);
    flame_forget_order(&f);
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 80, 10), 0);
    assert_int_equal(f.count, 0);
    assert_int_equal(flame_build(&f, &h.t, 0, 80, 10), 0);
    assert_int_equal(f.count, 1);
    assert_int_equal(f.cells[0].w, 80);

    /* children claiming more than their parent are clamped into it */
    static const spec over[] = { { -1, "p", 100 }, { 0, "a", 80 }, { 0, "b", 80 },
                                 { 2, "c", 500 }, { -1, "q", 50 } };
    build(&h, over, 5);
    flame_forget_order(&f);
    check_all(&h.t, false, 1);
    assert_int_equal(flame_build(&f, &h.t, 0, 100, 10), 0);
    size_t b = flame_find(&f, 2);
    assert_int_not_equal(b, FLAME_NONE);
    assert_int_equal(f.cells[b].x, 80);
    assert_int_equal(f.cells[b].w, 20);

    /* huge totals: no overflow in the column arithmetic */
    static const spec huge[] = { { -1, "a", UINT64_MAX / 2 }, { 0, "b", UINT64_MAX / 4 },
                                 { 0, "c", UINT64_MAX / 4 }, { -1, "d", UINT64_MAX / 2 } };
    build(&h, huge, 4);
    flame_forget_order(&f);
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 300, 10), 0);
    check(&f, &h.t, PRISM_NO_NODE, 300, 10, true);
    assert_int_equal(f.cells[0].w, 150);
    flame_free(&f);
}

static void test_many_tiny_and_deep(void **state)
{
    (void)state;
    static spec s[1100];
    htree *h = malloc(sizeof *h);
    assert_non_null(h);
    /* 1000 children of 1 ns under a 1000 ns root: they tile it at any width */
    s[0] = (spec){ -1, "root", 1000 };
    static char names[1000][8];
    for (int i = 1; i <= 1000; i++) {
        snprintf(names[i - 1], sizeof names[i - 1], "k%04d", i);
        s[i] = (spec){ 0, names[i - 1], 1 };
    }
    build(h, s, 1001);
    check_all(&h->t, true, 997);
    flame f = { 0 };
    assert_int_equal(flame_build(&f, &h->t, PRISM_NO_NODE, 10, 5), 0);
    assert_int_equal(f.count, 11);          /* the root and ten 1-column cells */

    /* a chain 300 deep: rows stop at the limit */
    for (int i = 0; i < 300; i++)
        s[i] = (spec){ i - 1, "deep", 300u - (unsigned)i };
    build(h, s, 300);
    flame_forget_order(&f);
    check_all(&h->t, true, 37);
    assert_int_equal(flame_build(&f, &h->t, PRISM_NO_NODE, 80, 7), 0);
    assert_int_equal(f.rows, 7);
    assert_int_equal(f.count, 7);
    assert_int_equal(flame_build(&f, &h->t, 290, 80, 100), 0);
    assert_int_equal(f.rows, 10);
    flame_free(&f);
    free(h);
}

static void test_refgen(void **state)
{
    (void)state;
    refgen_opts variants[3];
    variants[0] = refgen_defaults();
    variants[1] = refgen_defaults();
    variants[1].layers = 12;
    variants[1].threads = 4;
    variants[1].seed = 7;
    variants[2] = refgen_defaults();
    variants[2].threads = 1;
    variants[2].steps = 3;
    for (size_t v = 0; v < 3; v++) {
        prism_analysis *a = vu_ref_temp(&variants[v]);
        const prism_tree *t = prism_analysis_tree(a);
        assert_true(t->count > 3);
        check_all(t, true, 1);
        prism_analysis_free(a);
    }
}

/* ---- navigation --------------------------------------------------------- */

static void test_navigation(void **state)
{
    (void)state;
    htree h;
    build(&h, small, sizeof small / sizeof small[0]);
    flame f = { 0 };
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 10, 10), 0);
    size_t a = flame_find(&f, A), b = flame_find(&f, B), c = flame_find(&f, C),
           d = flame_find(&f, D), e = flame_find(&f, E), z = flame_find(&f, Z),
           y = flame_find(&f, Y), fc = flame_find(&f, F);
    assert_int_equal(flame_parent(&f, d), b);
    assert_int_equal(flame_parent(&f, b), a);
    assert_int_equal(flame_parent(&f, a), FLAME_NONE);
    assert_int_equal(flame_first_child(&f, a), b);
    assert_int_equal(flame_first_child(&f, b), d);
    assert_int_equal(flame_first_child(&f, d), FLAME_NONE);
    assert_int_equal(flame_widest_child(&f, b), e);        /* e: 2 columns, d: 1 */
    assert_int_equal(flame_widest_child(&f, a), b);
    assert_int_equal(flame_widest_child(&f, fc), FLAME_NONE);
    assert_int_equal(flame_left(&f, c), b);
    assert_int_equal(flame_right(&f, b), c);
    assert_int_equal(flame_right(&f, c), y);                /* a cousin */
    assert_int_equal(flame_left(&f, y), c);
    assert_int_equal(flame_right(&f, y), FLAME_NONE);       /* end of row */
    assert_int_equal(flame_left(&f, b), FLAME_NONE);
    assert_int_equal(flame_right(&f, a), z);
    assert_int_equal(flame_left(&f, d), FLAME_NONE);
    assert_int_equal(flame_right(&f, fc), FLAME_NONE);
    assert_int_equal(flame_parent(&f, 99), FLAME_NONE);
    assert_int_equal(flame_at(&f, 1, 3), c);
    assert_int_equal(flame_at(&f, 2, 2), e);
    assert_int_equal(flame_at(&f, 2, 7), FLAME_NONE);
    assert_int_equal(flame_at(&f, 9, 0), FLAME_NONE);
    /* widest child ties go to the leftmost */
    assert_int_equal(flame_build(&f, &h.t, B, 40, 10), 0);
    assert_int_equal(flame_widest_child(&f, 0), flame_find(&f, D));
    flame_free(&f);
}

/* ---- search ------------------------------------------------------------- */

static bool has(const char *name, void *ctx)
{
    return strstr(name, ctx) != NULL;
}

static void test_search(void **state)
{
    (void)state;
    /* ab(100) > abc(60), x(40) > abx(10);  q(100) > ab(50) */
    static const spec s[] = { { -1, "ab", 100 }, { 0, "abc", 60 }, { 0, "x", 40 },
                              { 2, "abx", 10 }, { -1, "q", 100 }, { 4, "ab", 50 } };
    htree h;
    build(&h, s, 6);
    flame f = { 0 };
    flame_hits hits = { 0 };
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 20, 10), 0);
    assert_int_equal(flame_search(&f, &h.t, has, (void *)"ab", &hits), 0);
    assert_int_equal(hits.nodes, 4);
    assert_int_equal(hits.matched_ns, 150);     /* nested matches counted once */
    assert_true(fabs(hits.share - 0.75) < 1e-12);
    assert_int_equal(hits.count, 4);            /* all four are wide enough */
    for (size_t i = 1; i < hits.count; i++)
        assert_true(hits.cells[i - 1] < hits.cells[i]);
    size_t first = hits.cells[0], last = hits.cells[hits.count - 1];
    assert_int_equal(f.cells[first].node, 0);
    assert_int_equal(flame_hit_next(&hits, FLAME_NONE, 1), first);
    assert_int_equal(flame_hit_next(&hits, FLAME_NONE, -1), last);
    assert_int_equal(flame_hit_next(&hits, last, 1), first);      /* wraps */
    assert_int_equal(flame_hit_next(&hits, first, -1), last);
    assert_int_equal(flame_hit_next(&hits, first, 1), hits.cells[1]);
    size_t q = flame_find(&f, 4);                 /* not a hit: the next one */
    assert_int_equal(flame_hit_next(&hits, q, 1), hits.cells[1]);

    /* only some in view: the share still counts the whole tree */
    assert_int_equal(flame_build(&f, &h.t, 4, 20, 10), 0);
    assert_int_equal(flame_search(&f, &h.t, has, (void *)"ab", &hits), 0);
    assert_int_equal(hits.nodes, 4);
    assert_int_equal(hits.count, 1);
    assert_true(fabs(hits.share - 0.75) < 1e-12);

    /* "x" matches inside a non-match; "zz" nothing */
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 20, 10), 0);
    assert_int_equal(flame_search(&f, &h.t, has, (void *)"x", &hits), 0);
    assert_int_equal(hits.nodes, 2);
    assert_int_equal(hits.matched_ns, 40);
    assert_int_equal(flame_search(&f, &h.t, has, (void *)"zz", &hits), 0);
    assert_int_equal(hits.nodes, 0);
    assert_int_equal(hits.count, 0);
    assert_true(hits.share == 0.0);
    assert_int_equal(flame_hit_next(&hits, 0, 1), FLAME_NONE);
    flame_hits_free(&hits);
    flame_free(&f);
}

/* ---- labels ------------------------------------------------------------- */

static void label_is(const char *name, int cols, bool utf8, const char *want, int want_w)
{
    char out[64];
    int w = flame_label(out, sizeof out, name, cols, utf8);
    if (strcmp(out, want) || w != want_w)
        fail_msg("label(%s, %d, %d) = '%s' (%d), want '%s' (%d)", name, cols, utf8, out, w,
                 want, want_w);
}

static void test_labels(void **state)
{
    (void)state;
    label_is("forward", 10, true, "forward", 7);
    label_is("forward", 7, true, "forward", 7);
    label_is("forward", 6, true, "forwa\u2026", 6);
    label_is("forward", 6, false, "forwa~", 6);
    label_is("forward", 2, true, "f\u2026", 2);
    label_is("forward", 2, false, "f~", 2);
    label_is("forward", 1, true, "", 0);
    label_is("f", 1, true, "", 0);
    label_is("ab", 2, false, "ab", 2);
    label_is("forward", 0, true, "", 0);
    label_is("forward", -3, true, "", 0);
    label_is("", 10, true, "", 0);
    /* UTF-8 names: widths in code points, sequences never split */
    label_is("h\u00e9llo", 5, true, "h\u00e9llo", 5);
    label_is("h\u00e9llo", 3, true, "h\u00e9\u2026", 3);
    label_is("\u00e9\u00e9\u00e9", 2, false, "\u00e9~", 2);
    char small_buf[4];
    int w = flame_label(small_buf, sizeof small_buf, "forward", 6, true);
    assert_string_equal(small_buf, "\u2026");  /* only the ellipsis fits */
    assert_int_equal(w, 1);
    w = flame_label(small_buf, sizeof small_buf, "h\u00e9llo", 10, true);
    assert_string_equal(small_buf, "h\u00e9");
    assert_int_equal(flame_label(small_buf, 0, "x", 5, true), 0);

    /* name order: numbers by value, a total order */
    assert_true(flame_name_cmp("layer.2", "layer.10") < 0);
    assert_true(flame_name_cmp("layer.10", "layer.2") > 0);
    assert_true(flame_name_cmp("layer.10.grad", "layer.10") > 0);
    assert_true(flame_name_cmp("a", "b") < 0);
    assert_true(flame_name_cmp("a9", "a10") < 0);
    assert_true(flame_name_cmp("a007", "a7") != 0);
    assert_true(flame_name_cmp("a007", "a7") == -flame_name_cmp("a7", "a007"));
    assert_true(flame_name_cmp("a1b", "a01c") < 0);
    assert_int_equal(flame_name_cmp("x12y", "x12y"), 0);
    assert_int_equal(flame_name_cmp(NULL, ""), 0);
    assert_true(flame_name_cmp("", "a") < 0);
    assert_true(flame_name_cmp("step", "9") > 0);

    /* colours by module: layer.0 and layer.1 agree, always in range */
    assert_int_equal(flame_color("layer.0", 3), flame_color("layer.1", 3));
    for (int n = 1; n < 7; n++) {
        int c = flame_color("forward", n);
        assert_true(c >= 0 && c < n);
    }
    assert_int_equal(flame_color("x", 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_exact),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_many_tiny_and_deep),
        cmocka_unit_test(test_refgen),
        cmocka_unit_test(test_navigation),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
