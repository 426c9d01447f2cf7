/*
 * compare_view_test.c - compare mode's pure helpers (tui/delta.c and the
 * regression pick of tui/compare_view.c): the kind of a delta (noise-aware,
 * new and gone, its direction the per-step median's), direction and
 * strength, the signed duration, percentage and share-point texts, the
 * delta cell at every width, the nearest path a side
 * has (refgen profiles with 4 and 6 layers: every path of one looked up in
 * the other against a walk up its own tree), operations matched by name,
 * the largest regression preferring significant slowdowns and new
 * regions in order of size, and the Tree's paired rows (tui/treepair.c):
 * one row per path of either side, in pre-order, the base's rows in the
 * base's own order, paths of one side only "absent" on the other, the
 * order by change, collapsed levels and a filter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_util.h"
#include "../tui/compare_view.h"
#include "../tui/delta.h"
#include "../tui/treepair.h"
#include "../tui/treeview.h"

static prism_delta mk(double base, double cur, bool sig, bool has_base, bool has_new)
{
    prism_delta d;
    memset(&d, 0, sizeof d);
    d.name = "x";
    d.base_node = has_base ? 1 : PRISM_NO_NODE;
    d.new_node = has_new ? 2 : PRISM_NO_NODE;
    d.base_ns = has_base ? base : 0;
    d.new_ns = has_new ? cur : 0;
    d.delta_ns = d.new_ns - d.base_ns;
    d.delta_pct = d.base_ns > 0 ? 100.0 * d.delta_ns / d.base_ns : 0;
    d.median_pct = d.delta_pct;         /* per step as in total */
    d.p_value = has_base && has_new ? (sig ? 0.001 : 0.5) : -1;
    d.significant = sig;
    return d;
}

/* ---- kinds ------------------------------------------------------------------ */

static void test_kinds(void **state)
{
    (void)state;
    prism_delta slow = mk(100e6, 130e6, true, true, true), fast = mk(100e6, 90e6, true, true, true);
    prism_delta noise = mk(100e6, 130e6, false, true, true), fresh = mk(0, 5e6, false, false, true);
    prism_delta gone = mk(5e6, 0, false, true, false), flat = mk(1e6, 1e6, true, true, true);
    prism_delta none = mk(0, 0, false, false, false);
    assert_int_equal(dl_kind_of(NULL), DL_NONE);
    assert_int_equal(dl_kind_of(&none), DL_NONE);
    assert_int_equal(dl_kind_of(&slow), DL_SLOWER);
    assert_int_equal(dl_kind_of(&fast), DL_FASTER);
    assert_int_equal(dl_kind_of(&noise), DL_SAME);
    assert_int_equal(dl_kind_of(&fresh), DL_NEW);
    assert_int_equal(dl_kind_of(&gone), DL_GONE);
    assert_int_equal(dl_kind_of(&flat), DL_SAME);       /* significant but zero */

    assert_true(dl_changed(&slow) && dl_changed(&fast) && dl_changed(&fresh) && dl_changed(&gone));
    assert_false(dl_changed(&noise) || dl_changed(&flat) || dl_changed(NULL));

    assert_int_equal(dl_direction(&slow), 1);
    assert_int_equal(dl_direction(&fresh), 1);
    assert_int_equal(dl_direction(&fast), -1);
    assert_int_equal(dl_direction(&gone), -1);
    assert_int_equal(dl_direction(&noise), 0);          /* a big change in the noise */
    assert_int_equal(dl_direction(NULL), 0);

    assert_true(dl_strong(&slow));                      /* +30 % */
    assert_false(dl_strong(&fast));                     /* -10 % */
    assert_false(dl_strong(&noise));
    assert_true(dl_strong(&fresh) && dl_strong(&gone));

    /* the direction is the per-step median's (against the run factor after
     * a whole-run shift), not the total's: a region that kept its time
     * while the whole run got 30 % slower is faster than the run, and one
     * that ran in fewer steps but longer in each is slower */
    prism_delta kept = mk(100e6, 101e6, true, true, true);
    kept.median_pct = -22.0;
    assert_int_equal(dl_kind_of(&kept), DL_FASTER);
    prism_delta rarer = mk(100e6, 60e6, true, true, true);
    rarer.median_pct = 15.0;
    assert_int_equal(dl_kind_of(&rarer), DL_SLOWER);
    assert_int_equal(dl_direction(&rarer), 1);
}

/* ---- text ------------------------------------------------------------------- */

static void test_fmt(void **state)
{
    (void)state;
    char b[64];
    dl_fmt_ns(b, sizeof b, 12.3e6);
    assert_string_equal(b, "+12.30 ms");
    dl_fmt_ns(b, sizeof b, -850);
    assert_string_equal(b, "-850 ns");
    dl_fmt_ns(b, sizeof b, -1.2e9);
    assert_string_equal(b, "-1.20 s");
    dl_fmt_ns(b, sizeof b, 150.1e6);
    assert_string_equal(b, "+150.1 ms");
    dl_fmt_ns(b, sizeof b, 0);
    assert_string_equal(b, "0 ns");
    dl_fmt_ns(b, sizeof b, 0.2);                        /* rounds to zero: no sign */
    assert_string_equal(b, "0 ns");

    dl_fmt_pct(b, sizeof b, 4.5);
    assert_string_equal(b, "+4.5%");
    dl_fmt_pct(b, sizeof b, -12);
    assert_string_equal(b, "-12.0%");
    dl_fmt_pct(b, sizeof b, 123.4);
    assert_string_equal(b, "+123%");
    dl_fmt_pct(b, sizeof b, -99.99);
    assert_string_equal(b, "-100%");
    dl_fmt_pct(b, sizeof b, NAN);
    assert_string_equal(b, "n/a");

    dl_fmt_pp(b, sizeof b, 2.34);
    assert_string_equal(b, "+2.3pp");
    dl_fmt_pp(b, sizeof b, -0.46);
    assert_string_equal(b, "-0.5pp");
    dl_fmt_pp(b, sizeof b, 0.04);                       /* no sign for nothing */
    assert_string_equal(b, "0.0pp");
    dl_fmt_pp(b, sizeof b, -0.04);
    assert_string_equal(b, "0.0pp");
    dl_fmt_pp(b, sizeof b, INFINITY);
    assert_string_equal(b, "n/a");
}

static void test_format_widths(void **state)
{
    (void)state;
    char b[64];
    prism_delta slow = mk(100e6, 112.3e6, true, true, true);
    assert_int_equal(dl_format(b, sizeof b, &slow, 16), 16);
    assert_string_equal(b, "+12.30 ms +12.3%");
    assert_int_equal(dl_format(b, sizeof b, &slow, 15), 6);     /* the % first */
    assert_string_equal(b, "+12.3%");
    dl_format(b, sizeof b, &slow, 5);                   /* nothing fits */
    assert_string_equal(b, "");

    prism_delta fresh = mk(0, 150.1e6, false, false, true), gone = mk(3.2e6, 0, false, true, false);
    dl_format(b, sizeof b, &fresh, 15);
    assert_string_equal(b, "new +150.1 ms");
    dl_format(b, sizeof b, &fresh, 5);
    assert_string_equal(b, "new");
    dl_format(b, sizeof b, &gone, 15);
    assert_string_equal(b, "gone -3.20 ms");
    dl_format(b, sizeof b, &gone, 4);
    assert_string_equal(b, "gone");
    assert_int_equal(dl_format(b, sizeof b, NULL, 40), 0);
    assert_string_equal(b, "");

    /* never wider than asked, for every kind and width; small buffers */
    prism_delta all[] = { slow, fresh, gone, mk(1e9, 0.5e9, true, true, true),
                          mk(10, 9000, false, true, true), mk(5e9, 5e9, false, true, true) };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        for (int w = 0; w <= 30; w++) {
            int n = dl_format(b, sizeof b, &all[k], w);
            assert_true(n <= w);
            assert_int_equal((int)strlen(b), n);
            char tiny[6];
            n = dl_format(tiny, sizeof tiny, &all[k], w);
            assert_true((size_t)n < sizeof tiny);
        }
}

/* ---- nearest path ------------------------------------------------------------- */

/* The analyses of refgen profiles with 4 and 6 layers. */
static void ref_pair(prism_analysis **small, prism_analysis **big)
{
    refgen_opts o4 = vu_ref_opts(4, 0), o6 = vu_ref_opts(6, 0);
    *small = vu_ref_temp(&o4);
    *big = vu_ref_temp(&o6);
}

static void test_nearest(void **state)
{
    (void)state;
    prism_analysis *small, *big;
    ref_pair(&small, &big);
    const prism_tree *ts = prism_analysis_tree(small), *tb = prism_analysis_tree(big);
    size_t missing = 0;
    for (size_t i = 0; i < tb->count; i++) {
        uint64_t h = tb->nodes[i].path_hash;
        uint32_t want = PRISM_NO_NODE;                  /* walk up big's tree */
        for (uint32_t q = (uint32_t)i; q != PRISM_NO_NODE && want == PRISM_NO_NODE;
             q = tb->nodes[q].parent)
            want = prism_analysis_find(small, tb->nodes[q].path_hash);
        uint32_t got = dl_nearest(small, big, h);
        assert_int_equal(got, want);
        if (prism_analysis_find(small, h) == PRISM_NO_NODE) {
            missing++;
            assert_true(got == PRISM_NO_NODE || ts->nodes[got].depth < tb->nodes[i].depth);
        } else {
            assert_int_equal(ts->nodes[got].path_hash, h);
        }
        assert_int_equal(dl_nearest(big, small, h), (uint32_t)i);   /* big has it */
    }
    assert_true(missing > 0);                           /* layer.4, layer.5 */
    /* unknown to both, no other side, no side */
    assert_int_equal(dl_nearest(small, big, 0x1234567890abcdefull), PRISM_NO_NODE);
    assert_int_equal(dl_nearest(small, NULL, 0x1234567890abcdefull), PRISM_NO_NODE);
    assert_int_equal(dl_nearest(NULL, big, tb->nodes[0].path_hash), PRISM_NO_NODE);
    prism_analysis_free(small);
    prism_analysis_free(big);
}

/* ---- operations by name --------------------------------------------------------- */

static void test_ops(void **state)
{
    (void)state;
    prism_op base[] = { { .name = "matmul", .total_ns = 400, .share = 0.40 },
                        { .name = "loss", .total_ns = 100, .share = 0.10 },
                        { .name = "old", .total_ns = 50, .share = 0.05 },
                        { .name = "steady", .total_ns = 200, .share = 0.20 } };
    prism_op cur[] = { { .name = "sync", .total_ns = 150, .share = 0.15 },
                       { .name = "matmul", .total_ns = 300, .share = 0.30 },
                       { .name = "steady", .total_ns = 201, .share = 0.25 },
                       { .name = "loss", .total_ns = 103, .share = 0.10 } };
    prism_delta deltas[] = { mk(400, 300, true, true, true), mk(0, 150, false, false, true),
                             mk(50, 0, false, true, false), mk(100, 103, true, true, true),
                             mk(200, 201, false, true, true) };
    deltas[0].name = "matmul";
    deltas[1].name = "sync";
    deltas[2].name = "old";
    deltas[3].name = "loss";
    deltas[4].name = "steady";
    prism_compare c = { .deltas = deltas, .count = 5 };
    prism_delta out[4];
    /* the new side's list */
    assert_int_equal(dl_ops(cur, 4, base, 4, 1, &c, 1000, out), 0);
    assert_int_equal(dl_kind_of(&out[0]), DL_NEW);
    assert_true(out[0].new_ns == 150 && out[0].delta_ns == 150);
    assert_int_equal(dl_kind_of(&out[1]), DL_FASTER);
    assert_true(out[1].base_ns == 400 && out[1].new_ns == 300 && out[1].delta_ns == -100);
    assert_true(fabs(out[1].delta_pct + 25.0) < 1e-9);
    /* shares: each side's own, the change in points */
    assert_true(out[0].base_share == 0 && out[0].new_share == 0.15);
    assert_true(fabs(out[0].share_delta - 15.0) < 1e-9);
    assert_true(fabs(out[1].share_delta + 10.0) < 1e-9);
    assert_true(fabs(out[2].share_delta - 5.0) < 1e-9);  /* steady: same time, more share */
    assert_int_equal(dl_kind_of(&out[2]), DL_SAME);     /* no path of it changed */
    assert_int_equal(dl_kind_of(&out[3]), DL_SAME);     /* changed, but under 1 % */
    assert_true(out[3].delta_ns == 3);
    /* the base side's list: the same deltas, "old" gone */
    assert_int_equal(dl_ops(base, 4, cur, 4, 0, &c, 1000, out), 0);
    assert_int_equal(dl_kind_of(&out[0]), DL_FASTER);
    assert_true(out[0].delta_ns == -100);
    assert_int_equal(dl_kind_of(&out[2]), DL_GONE);
    assert_true(out[2].delta_ns == -50);
    /* without a comparison nothing is significant; empty lists */
    assert_int_equal(dl_ops(cur, 4, base, 4, 1, NULL, 1000, out), 0);
    assert_int_equal(dl_kind_of(&out[1]), DL_SAME);
    assert_int_equal(dl_ops(cur, 4, NULL, 0, 1, &c, 1000, out), 0);
    assert_int_equal(dl_kind_of(&out[1]), DL_NEW);
    assert_int_equal(dl_ops(NULL, 0, base, 4, 1, &c, 1000, out), 0);
}

/* ---- largest regression ---------------------------------------------------------- */

static void test_largest_regression(void **state)
{
    (void)state;
    /* by |delta| descending, as the analysis orders them */
    prism_delta d[] = { mk(300, 100, true, true, true),     /* faster */
                        mk(100, 250, false, true, true),    /* slower, in the noise */
                        mk(0, 120, false, false, true),     /* new */
                        mk(100, 200, true, true, true) };   /* slower, significant */
    prism_compare c = { .deltas = d, .count = 4 };
    assert_ptr_equal(cmpv_largest_regression(&c), &d[2]);   /* the new one is larger */
    c.deltas = d + 3;
    c.count = 1;
    assert_ptr_equal(cmpv_largest_regression(&c), &d[3]);
    c.deltas = d;
    c.count = 2;                                        /* only noise: the largest slower */
    assert_ptr_equal(cmpv_largest_regression(&c), &d[1]);
    c.count = 1;                                        /* nothing slower */
    assert_null(cmpv_largest_regression(&c));
    assert_null(cmpv_largest_regression(NULL));
    prism_delta gone[] = { mk(100, 0, false, true, false) };
    c.deltas = gone;
    assert_null(cmpv_largest_regression(&c));
}

/* ---- the Tree's paired rows ------------------------------------------------------ */

static double fake_delta(uint64_t hash, void *ctx)
{
    (void)ctx;
    return (double)(hash % 1000) - 500.0;       /* some negative: |delta| sorts */
}

static bool keep_grad(const prism_node *n, void *ctx)
{
    (void)ctx;
    return strstr(n->name, "grad") != NULL;
}

/* The row list's invariants against both trees. */
static void check_pairs(const tp_list *l, treeview *tv[2])
{
    for (size_t i = 0; i < l->n; i++) {
        const tp_row *r = &l->rows[i];
        assert_true(r->node[0] != PRISM_NO_NODE || r->node[1] != PRISM_NO_NODE);
        for (int k = 0; k < 2; k++) {
            uint32_t other = tv_find(tv[k], r->hash);
            if (r->node[k] != PRISM_NO_NODE) {
                assert_int_equal(tv[k]->nodes[r->node[k]].path_hash, r->hash);
                assert_int_equal(tv[k]->nodes[r->node[k]].depth, r->depth);
            } else {                            /* absent: that side lacks it (or hides it) */
                assert_true(other == PRISM_NO_NODE || !tv_shown(tv[k], other));
            }
        }
        for (size_t j = 0; j < i; j++)          /* one row per path */
            assert_true(l->rows[j].hash != r->hash);
        if (r->depth > 0) {                     /* its parent is the row above at depth-1 */
            size_t p = i;
            while (p > 0 && l->rows[p - 1].depth >= r->depth)
                p--;
            assert_true(p > 0);
            assert_int_equal(l->rows[p - 1].depth, r->depth - 1);
            int k = r->node[0] != PRISM_NO_NODE ? 0 : 1;
            assert_int_equal(tv[k]->nodes[tv[k]->nodes[r->node[k]].parent].path_hash,
                             l->rows[p - 1].hash);
        }
    }
}

static void test_pairs(void **state)
{
    (void)state;
    prism_analysis *small, *big;
    ref_pair(&small, &big);
    treeview b, n;
    tv_init(&b);
    tv_init(&n);
    treeview *tv[2] = { &b, &n };
    tv_set_tree(&b, prism_analysis_tree(small), true);
    tv_set_tree(&n, prism_analysis_tree(big), true);
    tv_set_level(&b, TV_ALL);
    tv_set_level(&n, TV_ALL);
    tv_rebuild(&b);
    tv_rebuild(&n);
    tp_list l = { 0 };

    /* everything open: every path of either side once, the base's in its order */
    size_t rows = tp_build(&l, tv, TP_BASE, fake_delta, NULL);
    assert_false(l.oom);
    check_pairs(&l, tv);
    size_t only_new = 0, both = 0;
    for (size_t i = 0; i < n.count; i++)
        if (tv_find(&b, n.nodes[i].path_hash) == PRISM_NO_NODE)
            only_new++;
        else
            both++;
    assert_true(only_new > 0);                  /* layer.4, layer.5 and below */
    assert_int_equal(rows, b.count + only_new);
    size_t k0 = 0;
    for (size_t i = 0; i < rows; i++) {
        if (l.rows[i].node[0] != PRISM_NO_NODE)
            assert_int_equal(l.rows[i].node[0], b.rows[k0++]);
        else
            assert_int_equal(l.rows[i].node[1], tv_find(&n, l.rows[i].hash));
    }
    assert_int_equal(k0, b.nrows);
    size_t at = tp_find(&l, n.nodes[n.count - 1].path_hash);
    assert_true(at != TV_NONE);
    assert_int_equal(l.rows[at].hash, n.nodes[n.count - 1].path_hash);
    assert_int_equal(tp_find(&l, 0x1234567890abcdefull), TV_NONE);

    /* new-only siblings follow the base's: no base sibling after one */
    for (size_t i = 0; i < rows; i++) {
        if (l.rows[i].node[0] != PRISM_NO_NODE)
            continue;
        for (size_t j = i + 1; j < rows && l.rows[j].depth >= l.rows[i].depth; j++)
            if (l.rows[j].depth == l.rows[i].depth)
                assert_int_equal(l.rows[j].node[0], PRISM_NO_NODE);
    }

    /* by change: siblings by |delta|, largest first */
    assert_int_equal(tp_build(&l, tv, TP_DELTA, fake_delta, NULL), rows);
    check_pairs(&l, tv);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = i + 1; j < rows && l.rows[j].depth >= l.rows[i].depth; j++)
            if (l.rows[j].depth == l.rows[i].depth) {       /* the next sibling */
                assert_true(fabs(fake_delta(l.rows[i].hash, NULL)) >=
                            fabs(fake_delta(l.rows[j].hash, NULL)));
                break;
            }

    /* roots only, then one level: a closed row hides its children on both sides */
    tv_set_level(&b, 0);
    tv_set_level(&n, 0);
    size_t roots = tp_build(&l, tv, TP_BASE, fake_delta, NULL);
    check_pairs(&l, tv);
    for (size_t i = 0; i < roots; i++)
        assert_int_equal(l.rows[i].depth, 0);
    tv_set_level(&b, 1);
    tv_set_level(&n, 1);
    assert_true(tp_build(&l, tv, TP_BASE, fake_delta, NULL) > roots);
    check_pairs(&l, tv);
    for (size_t i = 0; i < l.n; i++)
        assert_true(l.rows[i].depth <= 1);

    /* a filter: matching paths and their ancestors on either side */
    tv_set_level(&b, TV_ALL);
    tv_set_level(&n, TV_ALL);
    tv_set_filter(&b, keep_grad, NULL);
    tv_set_filter(&n, keep_grad, NULL);
    tv_set_tree(&b, prism_analysis_tree(small), false);
    tv_set_tree(&n, prism_analysis_tree(big), false);
    size_t grads = 0;
    tp_build(&l, tv, TP_BASE, fake_delta, NULL);
    check_pairs(&l, tv);
    for (size_t i = 0; i < l.n; i++) {
        bool g = strstr(l.rows[i].name, "grad") != NULL;
        grads += g;
        if (!g)                                  /* an ancestor of a match */
            assert_true(i + 1 < l.n && l.rows[i + 1].depth > l.rows[i].depth);
    }
    assert_int_equal(grads, 6);                  /* layer.0..5.grad: 4 both, 2 new only */

    tp_free(&l);
    tv_free(&b);
    tv_free(&n);
    prism_analysis_free(small);
    prism_analysis_free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_fmt),
        cmocka_unit_test(test_format_widths),
        cmocka_unit_test(test_nearest),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_largest_regression),
        cmocka_unit_test(test_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
