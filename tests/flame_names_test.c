/*
 * flame_names_test.c - what tells the Flame's frames apart (tui/flame.c,
 * issue 34): on a small transformer's tree whose regions share long starts
 * ("encoder.layers.N.") the labels fold the start shared with the row or
 * the parent (flame_shared) so frames that differ in a layer index read
 * apart; the list below the flame (flame_children, flame_list_of) holds the
 * selected frame's children, else the frames beside it with it marked;
 * and the columns a compare side asks for (flame_side_cols) follow the
 * times, not the width the layout was built at.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../tui/flame.h"
#include "../tui/namefit.h"

#define NLAYER 6
#define NMAX 64

typedef struct htree {
    prism_node nodes[NMAX];
    char names[NMAX][48];
    prism_tree t;
} htree;

static uint32_t add(htree *h, int parent, const char *name, uint64_t total)
{
    uint32_t i = (uint32_t)h->t.count++;
    assert_true(i < NMAX);
    prism_node *nd = &h->nodes[i];
    snprintf(h->names[i], sizeof h->names[i], "%s", name);
    nd->name = h->names[i];
    nd->total_ns = nd->self_ns = total;
    nd->path_hash = 0x9e3779b97f4a7c15ull * (i + 1);
    nd->first_child = PRISM_NO_NODE;
    nd->calls = 4;
    nd->parent = parent < 0 ? PRISM_NO_NODE : (uint32_t)parent;
    if (parent < 0)
        h->t.total_ns += total;
    return i;
}

/* forward(NLAYER x 300) > encoder.layers.i.{self_attn 100, linear1 100,
 * linear2 100}; backward(NLAYER x 600) > "encoder.layers.i.linear2
 * (backward)" ... 200 each */
static void transformer(htree *h)
{
    static const char *const leaf[] = { "self_attn", "linear1", "linear2" };
    char name[48];
    memset(h, 0, sizeof *h);
    h->t.nodes = h->nodes;
    h->t.first_root = PRISM_NO_NODE;
    int fwd = (int)add(h, -1, "TinyTransformer.forward", NLAYER * 300);
    for (int i = 0; i < NLAYER; i++)
        for (int k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "encoder.layers.%d.%s", i, leaf[k]);
            add(h, fwd, name, 100);
        }
    int bwd = (int)add(h, -1, "backward", NLAYER * 600);
    for (int i = 0; i < NLAYER; i++)
        for (int k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "encoder.layers.%d.%s (backward)", i, leaf[k]);
            add(h, bwd, name, 200);
        }
}

static void test_shared_labels(void **state)
{
    (void)state;
    static htree h;
    transformer(&h);
    flame f = { 0 };
    f.zoom = PRISM_NO_NODE;
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 600, 10), 0);
    size_t sh[NMAX];
    assert_int_equal(flame_shared(&f, &h.t, sh), 0);
    size_t layers = strlen("encoder.layers.");
    for (size_t i = 0; i < f.count; i++) {
        const char *name = h.t.nodes[f.cells[i].node].name;
        if (f.cells[i].row == 0)
            assert_int_equal(sh[i], 0);                 /* nothing to share */
        else
            assert_int_equal(sh[i], layers);
        /* every label differs from the others of its row: at 13 columns
         * ("…0.self_attn"), with a "(backward)" suffix at 22 (narrower,
         * namefit shortens "linear1" and "linear2" alike to "l") */
        int cols = strstr(name, "(backward)") ? 22 : 13;
        char a[128], b[128];
        nf_fit(a, sizeof a, name, sh[i], cols, true);
        if (f.cells[i].row > 0)
            assert_non_null(strstr(a, "\u2026"));
        for (size_t j = 0; j < f.count; j++) {
            if (j == i || f.cells[j].row != f.cells[i].row)
                continue;
            nf_fit(b, sizeof b, h.t.nodes[f.cells[j].node].name, sh[j], cols, true);
            if (!strcmp(a, b)) {
                print_error("'%s' and '%s' both read '%s'\n", name,
                            h.t.nodes[f.cells[j].node].name, a);
                fail();
            }
        }
    }
    char lab[64];
    size_t c = flame_find(&f, 1);                       /* encoder.layers.0.self_attn */
    assert_true(c != FLAME_NONE);
    nf_fit(lab, sizeof lab, "encoder.layers.0.self_attn", sh[c], 13, true);
    assert_string_equal(lab, "\u20260.self_attn");

    /* a child named under its parent's name folds that: "a.b.c" under "a.b" */
    static htree g;
    memset(&g, 0, sizeof g);
    g.t.nodes = g.nodes;
    add(&g, -1, "model.block", 10);
    add(&g, 0, "model.block.attn", 10);
    assert_int_equal(flame_build(&f, &g.t, PRISM_NO_NODE, 80, 10), 0);
    assert_int_equal(flame_shared(&f, &g.t, sh), 0);
    assert_int_equal(sh[flame_find(&f, 1)], strlen("model.block."));
    flame_free(&f);
}

static void test_list(void **state)
{
    (void)state;
    static htree h;
    transformer(&h);
    flame f = { 0 };
    f.zoom = PRISM_NO_NODE;
    /* 20 columns: most layer frames are too narrow to be cells at all; the
     * list still names every child of the tree */
    assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, 20, 10), 0);
    uint32_t fwd = 0, bwd = 1 + 3 * NLAYER;
    size_t n;
    const uint32_t *k = flame_children(&f, bwd, &n);
    assert_int_equal(n, 3 * NLAYER);
    for (size_t i = 1; i < n; i++)                      /* layout order: by name */
        assert_true(flame_name_cmp(h.t.nodes[k[i - 1]].name, h.t.nodes[k[i]].name) < 0);
    k = flame_children(&f, PRISM_NO_NODE, &n);
    assert_int_equal(n, 2);
    assert_null(flame_children(&f, 5, &n));             /* a leaf */
    assert_int_equal(n, 0);
    assert_null(flame_children(&f, 1000, &n));          /* not a node */

    flame_list l = flame_list_of(&f, &h.t, bwd, PRISM_NO_NODE);    /* its children */
    assert_int_equal(l.owner, bwd);
    assert_int_equal(l.n, 3 * NLAYER);
    assert_int_equal(l.mark, -1);
    l = flame_list_of(&f, &h.t, 5, PRISM_NO_NODE);      /* a leaf: beside it, marked */
    assert_int_equal(l.owner, fwd);
    assert_int_equal(l.n, 3 * NLAYER);
    assert_true(l.mark >= 0);
    assert_int_equal(l.kids[l.mark], 5);
    l = flame_list_of(&f, &h.t, PRISM_NO_NODE, PRISM_NO_NODE);     /* no selection: roots */
    assert_int_equal(l.owner, PRISM_NO_NODE);
    assert_int_equal(l.n, 2);
    l = flame_list_of(&f, &h.t, PRISM_NO_NODE, bwd);    /* ... or the zoom's children */
    assert_int_equal(l.n, 3 * NLAYER);
    assert_int_equal(flame_build(&f, &h.t, 5, 20, 10), 0);
    l = flame_list_of(&f, &h.t, 5, 5);                  /* zoomed into a leaf: nothing */
    assert_int_equal(l.n, 0);
    flame_free(&f);
}

static void test_side_cols(void **state)
{
    (void)state;
    static htree h;
    transformer(&h);
    flame f = { 0 };
    f.zoom = PRISM_NO_NODE;
    size_t sh[NMAX];
    int need[3], widths[3] = { 60, 119, 400 };
    for (int i = 0; i < 3; i++) {
        assert_int_equal(flame_build(&f, &h.t, PRISM_NO_NODE, widths[i], 10), 0);
        assert_int_equal(flame_shared(&f, &h.t, sh), 0);
        need[i] = flame_side_cols(&f, &h.t, sh);
    }
    /* a layer frame holds 1/27 of the time and wants 13 columns: ~351 */
    assert_int_equal(need[0], need[1]);
    assert_int_equal(need[1], need[2]);
    assert_true(need[0] >= 13 * 27 && need[0] <= 13 * 27 + 1);
    assert_true(2 * need[0] + 1 > 120);                 /* stacked at 120 columns */
    /* two large frames with short names: side by side is fine */
    static htree g;
    memset(&g, 0, sizeof g);
    g.t.nodes = g.nodes;
    add(&g, -1, "forward", 10);
    add(&g, -1, "backward", 10);
    assert_int_equal(flame_build(&f, &g.t, PRISM_NO_NODE, 100, 10), 0);
    assert_int_equal(flame_shared(&f, &g.t, sh), 0);
    assert_int_equal(flame_side_cols(&f, &g.t, sh), 18);   /* (8 + 1) / (1/2) */
    flame_free(&f);
    memset(&f, 0, sizeof f);
    assert_int_equal(flame_side_cols(&f, &g.t, NULL), 0);  /* nothing laid out */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_labels),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_side_cols),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
