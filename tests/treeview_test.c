/*
 * treeview_test.c - the Tree pane's model (tui/treeview.c) on analyses of
 * refgen profiles: flattening against a recursive oracle for every sort
 * order and expansion state, collapse-to-depth, toggles, the selection by
 * path hash across sorts and a reload of the same file, a hidden selection
 * falling back to its visible ancestor, next/previous search matches in
 * pre-order, per-thread trees, lazy sorting on a hand-built
 * 100k-node tree (the text cells: tree_layout_test.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "view_util.h"
#include "../tui/treeview.h"

typedef vu_fix fix;

/* ---- oracle: recursive flatten with its own sort ------------------------- */

static const prism_node *g_nodes;
static tv_sort g_sort;

static int oracle_cmp(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const prism_node *x = &g_nodes[a], *y = &g_nodes[b];
    uint64_t kx = g_sort == TV_SORT_SELF ? x->self_ns : g_sort == TV_SORT_CALLS ? x->calls : x->total_ns;
    uint64_t ky = g_sort == TV_SORT_SELF ? y->self_ns : g_sort == TV_SORT_CALLS ? y->calls : y->total_ns;
    if (g_sort != TV_SORT_NAME && kx != ky)
        return kx < ky ? 1 : -1;
    int c = strcasecmp(x->name, y->name);
    if (!c)
        c = strcmp(x->name, y->name);
    return c ? c : (a > b) - (a < b);
}

static void oracle_visit(const treeview *tv, uint32_t first, uint32_t *out, size_t *n)
{
    uint32_t kids[4096];
    size_t k = 0;
    for (uint32_t c = first; c != PRISM_NO_NODE; c = tv->nodes[c].next_sibling) {
        assert_true(k < 4096);
        kids[k++] = c;
    }
    qsort(kids, k, sizeof *kids, oracle_cmp);
    for (size_t i = 0; i < k; i++) {
        out[(*n)++] = kids[i];
        if (tv_expanded(tv, kids[i]))
            oracle_visit(tv, tv->nodes[kids[i]].first_child, out, n);
    }
}

/* The rows must be exactly the oracle's. */
static void check_rows(treeview *tv)
{
    tv_rebuild(tv);
    uint32_t *want = malloc((tv->count + 1) * sizeof *want);
    assert_non_null(want);
    size_t n = 0;
    g_nodes = tv->nodes;
    g_sort = tv->sort;
    if (tv->tree)
        oracle_visit(tv, tv->tree->first_root, want, &n);
    assert_int_equal(tv->nrows, n);
    for (size_t i = 0; i < n; i++)
        if (tv->rows[i] != want[i])
            fail_msg("row %zu: node %u, want %u (sort %s)", i, tv->rows[i], want[i],
                     tv_sort_name(tv->sort));
    free(want);
}

static size_t nodes_up_to(const prism_tree *t, uint32_t depth)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += t->nodes[i].depth <= depth;
    return n;
}

/* ---- flatten, sort, levels -------------------------------------------------- */

static void test_default_and_all(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    assert_true(tv_set_tree(&tv, f->t, false));
    assert_false(tv_set_tree(&tv, f->t, false));       /* unchanged */
    check_rows(&tv);                                    /* roots open */
    assert_int_equal(tv.nrows, nodes_up_to(f->t, 1));
    tv_set_level(&tv, TV_ALL);
    check_rows(&tv);
    assert_int_equal(tv.nrows, f->t->count);
    assert_int_equal(tv_level(&tv), tv.max_depth + 1);
    tv_set_level(&tv, 0);
    check_rows(&tv);
    assert_int_equal(tv.nrows, tv.nroots);
    tv_free(&tv);
}

static void test_sort_orders(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    tv_set_level(&tv, TV_ALL);
    for (int s = 0; s < TV_SORT_COUNT; s++) {
        tv_set_sort(&tv, (tv_sort)s);
        check_rows(&tv);
    }
    /* by name: every sibling list is alphabetical */
    tv_set_sort(&tv, TV_SORT_NAME);
    for (size_t i = 0; i < tv.count; i++) {
        size_t k;
        const uint32_t *c = tv_children(&tv, (uint32_t)i, &k);
        for (size_t j = 1; j < k; j++)
            assert_true(strcasecmp(tv.nodes[c[j - 1]].name, tv.nodes[c[j]].name) <= 0);
    }
    /* by total: the first root is the heaviest */
    tv_set_sort(&tv, TV_SORT_TOTAL);
    tv_rebuild(&tv);
    for (size_t i = 0; i < tv.nroots; i++)
        assert_true(tv.nodes[tv.rows[0]].total_ns >= tv.nodes[tv.roots[i]].total_ns);
    tv_free(&tv);
}

static void test_collapse_to_depth(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    assert_true(tv.max_depth >= 2);
    for (uint32_t d = 0; d <= tv.max_depth + 1; d++) {
        tv_set_level(&tv, d);
        check_rows(&tv);
        for (size_t i = 0; i < tv.nrows; i++)
            assert_true(tv.nodes[tv.rows[i]].depth <= d);
        assert_int_equal(tv.nrows, nodes_up_to(f->t, d));
        assert_int_equal(tv_level(&tv), d);
    }
    tv_free(&tv);
}

static void test_toggle(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    tv_set_level(&tv, TV_ALL);
    tv_rebuild(&tv);
    size_t all = tv.nrows;
    uint32_t r0 = PRISM_NO_NODE;        /* the first root with children */
    for (size_t i = 0; i < tv.nroots && r0 == PRISM_NO_NODE; i++)
        if (tv_has_children(&tv, tv.roots[i]))
            r0 = tv.roots[i];
    assert_true(r0 != PRISM_NO_NODE);
    tv_set_expanded(&tv, r0, false);
    assert_false(tv_expanded(&tv, r0));
    check_rows(&tv);
    size_t desc = 0;                    /* descendants of r0 */
    for (size_t i = 0; i < tv.count; i++)
        for (uint32_t p = tv.nodes[i].parent; p != PRISM_NO_NODE; p = tv.nodes[p].parent)
            if (p == r0) {
                desc++;
                break;
            }
    assert_int_equal(tv.nrows, all - desc);
    /* open a closed node at level 0: its children follow it */
    tv_set_level(&tv, 0);
    assert_true(tv_expanded(&tv, r0) == false);
    tv_set_expanded(&tv, r0, true);
    check_rows(&tv);
    size_t k;
    const uint32_t *c = tv_children(&tv, r0, &k);
    size_t at = tv_row_of(&tv, r0, false);
    assert_true(at != TV_NONE && at + k < tv.nrows + 1);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(tv.rows[at + 1 + i], c[i]);
    /* a new level forgets the toggle */
    tv_set_level(&tv, 0);
    assert_false(tv_expanded(&tv, r0));
    tv_free(&tv);
}

/* ---- selection ------------------------------------------------------------------ */

static uint32_t deepest(const prism_tree *t)
{
    uint32_t best = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->nodes[i].depth > t->nodes[best].depth)
            best = (uint32_t)i;
    return best;
}

static void test_selection_survives(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    uint32_t n = deepest(f->t);
    uint64_t h = f->t->nodes[n].path_hash;
    assert_int_equal(tv_find(&tv, h), n);
    size_t row = tv_row_of(&tv, n, true);               /* opens its ancestors */
    assert_true(row != TV_NONE);
    assert_int_equal(tv.rows[row], n);
    check_rows(&tv);
    for (int s = 0; s < TV_SORT_COUNT; s++) {          /* another order: same node */
        tv_set_sort(&tv, (tv_sort)s);
        row = tv_row_of(&tv, tv_find(&tv, h), false);
        assert_true(row != TV_NONE);
        assert_true(tv.nodes[tv.rows[row]].path_hash == h);
    }
    /* reload: a new analysis of the same file keeps rows and selection */
    uint64_t *before = malloc(tv.nrows * sizeof *before);
    assert_non_null(before);
    size_t nb = tv.nrows;
    for (size_t i = 0; i < nb; i++)
        before[i] = tv.nodes[tv.rows[i]].path_hash;
    prism_analysis *b = vu_analyze(f->path);
    assert_true(tv_set_tree(&tv, prism_analysis_tree(b), false));
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, nb);
    for (size_t i = 0; i < nb; i++)
        assert_true(tv.nodes[tv.rows[i]].path_hash == before[i]);
    uint32_t m = tv_find(&tv, h);
    assert_true(m != PRISM_NO_NODE);
    row = tv_row_of(&tv, m, false);
    assert_true(row != TV_NONE && tv.rows[row] == m);
    free(before);
    tv_set_tree(&tv, NULL, false);
    prism_analysis_free(b);
    tv_free(&tv);
}

static void test_hidden_selection(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    uint32_t n = deepest(f->t), root = n;
    while (tv.nodes[root].parent != PRISM_NO_NODE)
        root = tv.nodes[root].parent;
    assert_true(tv_row_of(&tv, n, true) != TV_NONE);
    tv_set_expanded(&tv, root, false);
    size_t row = tv_row_of(&tv, n, false);              /* the root shows for it */
    assert_true(row != TV_NONE);
    assert_int_equal(tv.rows[row], root);
    tv_set_level(&tv, 2);                               /* the depth-1 ancestor */
    uint32_t want = n;
    while (tv.nodes[want].depth > 2)
        want = tv.nodes[want].parent;
    row = tv_row_of(&tv, n, false);
    assert_int_equal(tv.rows[row], want);
    assert_true(tv_reveal(&tv, n));
    assert_false(tv_reveal(&tv, n));
    assert_int_equal(tv.rows[tv_row_of(&tv, n, false)], n);
    tv_free(&tv);
}

/* ---- filter (compare mode's diff-only) ----------------------------------------- */

static bool contains_cb(const char *name, void *ctx)
{
    return strstr(name, ctx) != NULL;
}

static bool keep_name(const prism_node *n, void *ctx)
{
    return strstr(n->name, ctx) != NULL;
}

static bool oracle_shown(const prism_node *nodes, uint32_t n, const char *pat)
{
    if (strstr(nodes[n].name, pat))
        return true;
    for (uint32_t c = nodes[n].first_child; c != PRISM_NO_NODE; c = nodes[c].next_sibling)
        if (oracle_shown(nodes, c, pat))
            return true;
    return false;
}

static void oracle_visit_filtered(const treeview *tv, uint32_t first, const char *pat,
                                  uint32_t *out, size_t *n)
{
    uint32_t kids[4096];
    size_t k = 0;
    for (uint32_t c = first; c != PRISM_NO_NODE; c = tv->nodes[c].next_sibling)
        if (oracle_shown(tv->nodes, c, pat))
            kids[k++] = c;
    qsort(kids, k, sizeof *kids, oracle_cmp);
    for (size_t i = 0; i < k; i++) {
        out[(*n)++] = kids[i];
        if (tv_expanded(tv, kids[i]))
            oracle_visit_filtered(tv, tv->nodes[kids[i]].first_child, pat, out, n);
    }
}

static void check_filtered(treeview *tv, const char *pat)
{
    tv_rebuild(tv);
    uint32_t *want = malloc((tv->count + 1) * sizeof *want);
    assert_non_null(want);
    size_t n = 0;
    g_nodes = tv->nodes;
    g_sort = tv->sort;
    oracle_visit_filtered(tv, tv->tree->first_root, pat, want, &n);
    assert_int_equal(tv->nrows, n);
    for (size_t i = 0; i < n; i++)
        if (tv->rows[i] != want[i])
            fail_msg("/%s/ row %zu: node %u, want %u", pat, i, tv->rows[i], want[i]);
    free(want);
}

static void test_filter(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    static const char *const pats[] = { "attention", "loss", "layer.3", "step", "zzz-none" };
    for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
        const char *pat = pats[p];
        tv_set_filter(&tv, keep_name, (void *)pat);
        assert_true(tv_set_tree(&tv, f->t, false));     /* the same tree: applied */
        assert_false(tv_set_tree(&tv, f->t, false));
        for (int lv = 0; lv < 2; lv++) {
            tv_set_level(&tv, lv ? TV_ALL : 1);
            check_filtered(&tv, pat);
            for (uint32_t s = 0; s < 3; s++) {
                tv_set_sort(&tv, (tv_sort)s);
                check_filtered(&tv, pat);
            }
            tv_set_sort(&tv, TV_SORT_TOTAL);
        }
        size_t shown = 0;
        for (uint32_t i = 0; i < f->t->count; i++) {
            const prism_node *nd = &f->t->nodes[i];
            bool want = oracle_shown(f->t->nodes, i, pat);
            shown += want;
            assert_int_equal(tv_shown(&tv, i), want);
            bool kid = false;                           /* a marker only for shown children */
            for (uint32_t c = nd->first_child; c != PRISM_NO_NODE; c = f->t->nodes[c].next_sibling)
                kid = kid || oracle_shown(f->t->nodes, c, pat);
            assert_int_equal(tv_has_children(&tv, i), kid);
            assert_int_equal(tv_find(&tv, nd->path_hash), i);     /* hidden: still found */
            uint32_t anc = i;                           /* a hidden node: its shown ancestor */
            while (anc != PRISM_NO_NODE && !oracle_shown(f->t->nodes, anc, pat))
                anc = f->t->nodes[anc].parent;
            size_t row = tv_row_of(&tv, i, true);
            if (anc == PRISM_NO_NODE)
                assert_true(row == TV_NONE);
            else
                assert_int_equal(tv.rows[row], anc);
        }
        if (!strcmp(pat, "zzz-none")) {
            assert_int_equal(shown, 0);
            assert_int_equal(tv.nrows, 0);
            assert_int_equal(tv_next_match(&tv, PRISM_NO_NODE, 1, contains_cb, (void *)"a"),
                             PRISM_NO_NODE);
        } else {
            assert_true(shown > 0 && shown < f->t->count);
            /* search walks the filtered tree, also from a hidden node */
            uint32_t m = tv_next_match(&tv, PRISM_NO_NODE, 1, contains_cb, (void *)pat);
            assert_true(m != PRISM_NO_NODE && tv_shown(&tv, m));
            for (uint32_t i = 0; i < f->t->count; i++)
                if (!tv_shown(&tv, i)) {
                    m = tv_next_match(&tv, i, 1, contains_cb, (void *)pat);
                    assert_true(m != PRISM_NO_NODE && strstr(f->t->nodes[m].name, pat));
                    break;
                }
        }
    }
    tv_set_filter(&tv, NULL, NULL);                     /* off: every node again */
    assert_true(tv_set_tree(&tv, f->t, false));
    tv_set_level(&tv, TV_ALL);
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, f->t->count);
    check_rows(&tv);
    tv_free(&tv);
}

/* ---- search -------------------------------------------------------------------- */

static bool contains(const char *name, void *ctx)
{
    return strstr(name, ctx) != NULL;
}

static void test_next_prev_match(void **state)
{
    fix *f = *state;
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    tv_set_sort(&tv, TV_SORT_SELF);
    /* the expected order: pre-order of the fully open tree */
    treeview all;
    tv_init(&all);
    tv_set_tree(&all, f->t, false);
    tv_set_sort(&all, TV_SORT_SELF);
    tv_set_level(&all, TV_ALL);
    tv_rebuild(&all);
    uint32_t want[4096];
    size_t nw = 0;
    for (size_t i = 0; i < all.nrows; i++)
        if (strstr(all.nodes[all.rows[i]].name, "layer.1"))
            want[nw++] = all.rows[i];
    assert_true(nw >= 2);
    uint32_t cur = PRISM_NO_NODE;
    for (size_t i = 0; i < 2 * nw; i++) {               /* forward, wrapping */
        cur = tv_next_match(&tv, cur, 1, contains, (void *)"layer.1");
        assert_int_equal(cur, want[i % nw]);
    }
    for (size_t i = 0; i < 2 * nw; i++) {               /* backward */
        cur = tv_next_match(&tv, cur, -1, contains, (void *)"layer.1");
        assert_int_equal(cur, want[(nw * 2 - 2 - i) % nw]);
    }
    cur = tv_next_match(&tv, PRISM_NO_NODE, -1, contains, (void *)"layer.1");
    assert_int_equal(cur, want[nw - 1]);
    /* a match is revealed and selected */
    size_t row = tv_row_of(&tv, want[nw - 1], true);
    assert_true(row != TV_NONE);
    assert_int_equal(tv.rows[row], want[nw - 1]);
    check_rows(&tv);
    /* nothing matches; a single match finds itself */
    assert_int_equal(tv_next_match(&tv, PRISM_NO_NODE, 1, contains, (void *)"no such region"),
                     PRISM_NO_NODE);
    uint32_t one = PRISM_NO_NODE;       /* a name that occurs once and in no other */
    for (size_t i = 0; i < all.count && one == PRISM_NO_NODE; i++) {
        size_t hits = 0;
        for (size_t j = 0; j < all.count; j++)
            hits += strstr(all.nodes[j].name, all.nodes[i].name) != NULL;
        if (hits == 1)
            one = (uint32_t)i;
    }
    assert_true(one != PRISM_NO_NODE);
    for (int dir = -1; dir <= 1; dir += 2) {
        assert_int_equal(tv_next_match(&tv, one, dir, contains, (void *)all.nodes[one].name), one);
        assert_int_equal(tv_next_match(&tv, PRISM_NO_NODE, dir, contains,
                                       (void *)all.nodes[one].name), one);
    }
    tv_free(&all);
    tv_free(&tv);
}

/* ---- per-thread trees, laziness (empty trees: tree_layout_test.c) --------- */

static void test_thread_trees(void **state)
{
    fix *f = *state;
    assert_true(prism_analysis_thread_count(f->a) >= 2);
    treeview tv;
    tv_init(&tv);
    tv_set_tree(&tv, f->t, false);
    uint32_t n = deepest(f->t);
    tv_row_of(&tv, n, true);                            /* expansion by path hash */
    for (size_t i = 0; i < prism_analysis_thread_count(f->a); i++) {
        const prism_tree *t = prism_analysis_thread_tree(f->a, i, NULL, NULL);
        assert_non_null(t);
        assert_true(tv_set_tree(&tv, t, false));
        check_rows(&tv);
        for (size_t k = 0; k < tv.nrows; k++)   /* every path is in the merged tree */
            assert_true(prism_analysis_find(f->a, tv.nodes[tv.rows[k]].path_hash) != PRISM_NO_NODE);
        uint32_t m = tv_find(&tv, f->t->nodes[n].path_hash);
        if (m != PRISM_NO_NODE)                         /* still open on this thread */
            assert_int_equal(tv.rows[tv_row_of(&tv, m, false)], m);
    }
    tv_free(&tv);
}

/* A wide hand-built tree: 100 roots x 1000 children.  Flattening the closed
 * tree sorts nothing below the roots; opening one root sorts only its
 * children. */
static void test_lazy_sort(void **state)
{
    (void)state;
    enum { ROOTS = 100, KIDS = 1000, N = ROOTS * (KIDS + 1) };
    prism_node *nodes = calloc(N, sizeof *nodes);
    assert_non_null(nodes);
    static char names[KIDS][16];
    for (int k = 0; k < KIDS; k++)
        snprintf(names[k], sizeof names[k], "n%04d", k);
    for (uint32_t r = 0; r < ROOTS; r++) {
        uint32_t at = r * (KIDS + 1);
        prism_node *p = &nodes[at];
        p->parent = PRISM_NO_NODE;
        p->name = names[r];
        p->path_hash = 1000000u + r;
        p->next_sibling = r + 1 < ROOTS ? at + KIDS + 1 : PRISM_NO_NODE;
        p->first_child = at + 1;
        p->total_ns = r;
        for (uint32_t k = 0; k < KIDS; k++) {
            prism_node *c = &nodes[at + 1 + k];
            c->parent = at;
            c->name = names[k];
            c->depth = 1;
            c->path_hash = (uint64_t)r << 32 | k;
            c->first_child = PRISM_NO_NODE;
            c->next_sibling = k + 1 < KIDS ? at + 2 + k : PRISM_NO_NODE;
            c->total_ns = (k * 7919u) % KIDS;
        }
    }
    prism_tree t = { nodes, N, 0, 0 };
    treeview tv;
    tv_init(&tv);
    tv_set_level(&tv, 0);
    tv_set_tree(&tv, &t, false);
    tv_rebuild(&tv);
    assert_int_equal(tv.nrows, ROOTS);
    assert_int_equal(tv.kids_used, 0);
    assert_int_equal(tv.rows[0], (ROOTS - 1) * (KIDS + 1));     /* heaviest first */
    tv_set_expanded(&tv, tv.rows[0], true);
    check_rows(&tv);
    assert_int_equal(tv.nrows, ROOTS + KIDS);
    assert_int_equal(tv.kids_used, KIDS);
    tv_set_level(&tv, TV_ALL);
    check_rows(&tv);
    assert_int_equal(tv.nrows, N);
    tv_free(&tv);
    free(nodes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_and_all),
        cmocka_unit_test(test_sort_orders),
        cmocka_unit_test(test_collapse_to_depth),
        cmocka_unit_test(test_toggle),
        cmocka_unit_test(test_selection_survives),
        cmocka_unit_test(test_hidden_selection),
        cmocka_unit_test(test_next_prev_match),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_thread_trees),
        cmocka_unit_test(test_lazy_sort),
    };
    return cmocka_run_group_tests(tests, vu_fix_setup, vu_fix_teardown);
}
