/*
 * pane_tree.c - the Tree pane: the call tree (all threads, or one thread's
 * with `t`) as an indented list with total, self, calls, share and a timing
 * bar (more columns on a wide terminal: treecols.h), expand/collapse,
 * collapse-to-depth, sibling sort and its reverse, search, the filter
 * (u->filter: matching rows and their ancestors, all open; clearing it
 * brings the previous expansion back), the mouse, and the selected node's
 * details at the bottom (tree_draw.c draws).
 *
 * The rows come from treeview.c and are rebuilt only when the expansion,
 * the sort or the tree changes; moving the selection and drawing cost
 * O(rows on screen).  The selection is u->sel_hash (ui_select), so the other
 * panes follow it and it survives reloads; expansion is kept by path hash.
 * A selection made elsewhere (a jump from Bottlenecks, Ops, Summary) is
 * shown with its context: ancestors open, the row a third down the list.
 *
 * Compare mode (u->cmp): both sides show the same rows (treepair.h): the
 * view (sort, expansion, levels) of the side given keys is copied to the
 * other side after each key, rows pair by path in the base's order or by
 * the size of the change (`o`), and a path one side lacks is an "(absent)"
 * row there.  A delta column, a Diff line, and with u->diff_only only
 * changed paths and their ancestors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "delta.h"
#include "tree_pane.h"

/* ---- rows: the treeview's, or the pairs in compare mode -------------------- */

size_t tree_nrows(const tree_st *s)
{
    return s->paired ? s->pairs.n : s->tv.nrows;
}

uint64_t tree_row_hash(const tree_st *s, size_t i)
{
    if (i >= tree_nrows(s))
        return 0;
    return s->paired ? s->pairs.rows[i].hash : s->tv.nodes[s->tv.rows[i]].path_hash;
}

uint32_t tree_row_node(const tree_st *s, size_t i)
{
    if (i >= tree_nrows(s))
        return PRISM_NO_NODE;
    return s->paired ? s->pairs.rows[i].node[s->side] : s->tv.rows[i];
}

/* ---- keeping the view in sync ------------------------------------------------ */

static tree_st *other_side(ui *u)
{
    return u->cmp ? u->side_state[1 - u->side][PANE_TREE] : NULL;
}

static const prism_tree *view_tree(ui *u, tree_st *s, const prism_analysis *a)
{
    const prism_tree *t = NULL;
    if (s->view >= 0 && !u->cmp)      /* one thread: with its sampled call paths */
        t = prism_analysis_thread_tree_sampled(a, (size_t)s->view);
    if (!t) {
        s->view = -1;
        /* all threads: with the sampled call paths (not when comparing) */
        t = u->cmp ? prism_analysis_tree(a) : prism_analysis_tree_sampled(a);
    }
    return t;
}

static bool keep_row(const prism_node *n, void *ctx)
{
    ui *u = ctx;
    if (u->cmp && u->diff_only && !dl_changed(ui_delta(u, n->path_hash)))
        return false;
    return ui_filter_matches(u, n->name);
}

/* The filter and the tree of one side's view; true when it changed. */
static bool sync_tv(ui *u, tree_st *s, const prism_analysis *a, bool force)
{
    bool want = (u->cmp && u->diff_only) || u->filter[0];
    if (strcmp(s->filter, u->filter) != 0 || (s->tv.keep != NULL) != want ||
        s->tv.keep_ctx != (want ? u : NULL)) {
        if (u->filter[0] && !s->filter[0])
            tv_expansion_save(&s->tv);          /* matches open, the rest put aside */
        else if (!u->filter[0] && s->filter[0])
            tv_expansion_restore(&s->tv);
        snprintf(s->filter, sizeof s->filter, "%s", u->filter);
        tv_set_filter(&s->tv, want ? keep_row : NULL, want ? u : NULL);
    }
    bool changed = tv_set_tree(&s->tv, view_tree(u, s, a), force);
    tv_rebuild(&s->tv);
    return changed;
}

static double delta_of(uint64_t hash, void *ctx)
{
    const prism_delta *d = ui_delta(ctx, hash);
    return d ? d->delta_ns : 0.0;
}

/* Compare mode: the paired rows of both sides. */
static void pair(ui *u, tree_st *s)
{
    tree_st *o = other_side(u);
    s->paired = o != NULL;
    s->side = u->side;
    if (!o)
        return;
    treeview *sides[2];
    sides[u->side] = &s->tv;
    sides[1 - u->side] = &o->tv;
    if (s->pairs_ok && s->pairs_order == s->order && s->pairs_tv[0] == sides[0] &&
        s->pairs_tv[1] == sides[1] && s->pairs_gen[0] == sides[0]->gen &&
        s->pairs_gen[1] == sides[1]->gen)
        return;                         /* nothing changed since */
    tp_build(&s->pairs, sides, s->order, delta_of, u);
    s->pairs_ok = !s->pairs.oom;
    s->pairs_order = s->order;
    for (int k = 0; k < 2; k++) {
        s->pairs_tv[k] = sides[k];
        s->pairs_gen[k] = sides[k]->gen;
    }
}

/* The row of u->sel_hash in compare mode, opening its ancestors on both
 * sides; a path the filter hides shows as its nearest shown ancestor. */
static size_t paired_row(ui *u, tree_st *s)
{
    size_t row = tp_find(&s->pairs, u->sel_hash);
    if (row != TV_NONE)
        return row;
    tree_st *o = other_side(u);
    treeview *tvs[2] = { &s->tv, &o->tv };
    for (int k = 0; k < 2; k++) {
        uint32_t n = tv_find(tvs[k], u->sel_hash);
        while (n != PRISM_NO_NODE && n < tvs[k]->count && !tv_shown(tvs[k], n))
            n = tvs[k]->nodes[n].parent;
        if (n == PRISM_NO_NODE || n >= tvs[k]->count)
            continue;
        tv_reveal(tvs[k], n);
        tv_copy_view(tvs[1 - k], tvs[k]);
        pair(u, s);
        if ((row = tp_find(&s->pairs, tvs[k]->nodes[n].path_hash)) != TV_NONE)
            return row;
    }
    return TV_NONE;
}

static void select_row(ui *u, tree_st *s, size_t row)
{
    size_t n = tree_nrows(s);
    if (!n)
        return;
    s->sel = row < n ? row : n - 1;
    ui_select(u, tree_row_hash(s, s->sel));
    s->shown_hash = u->sel_hash;        /* moved here: no context jump */
    tree_st *o = other_side(u);
    if (o)
        o->shown_hash = u->sel_hash;
}

/* Put the selection on u->sel_hash (opening its ancestors), else on its
 * nearest ancestor path in this tree, else where it was.  With adopt, the
 * row found becomes the shared selection. */
static void relocate(ui *u, tree_st *s, bool adopt)
{
    treeview *tv = &s->tv;
    size_t row = TV_NONE;
    if (s->paired) {
        row = paired_row(u, s);
    } else {
        uint32_t n = tv_find(tv, u->sel_hash);
        if (n == PRISM_NO_NODE) {   /* a path this thread (or profile) never ran */
            const prism_tree *all = prism_analysis_tree(u->a);
            uint32_t q = cmpv_nearest(u, u->sel_hash);
            for (int guard = 0; q != PRISM_NO_NODE && n == PRISM_NO_NODE && guard < 4096;
                 guard++) {
                n = tv_find(tv, all->nodes[q].path_hash);
                q = all->nodes[q].parent;
            }
        }
        row = n != PRISM_NO_NODE ? tv_row_of(tv, n, true) : TV_NONE;
        tv_rebuild(tv);
    }
    /* The filter hides the selection and every row above it: the first
     * row shown becomes the selection, so that Details and the status line
     * name a row that is there (absent is for a path the other side of a
     * comparison has). */
    if (row == TV_NONE && !adopt && tv->keep && tree_nrows(s)) {
        row = 0;
        adopt = true;
    }
    s->absent = row == TV_NONE && !adopt;
    if (row != TV_NONE)
        s->sel = row;
    size_t nr = tree_nrows(s);
    if (s->sel >= nr)
        s->sel = nr ? nr - 1 : 0;
    if (adopt)
        select_row(u, s, s->sel);
}

/* Bring the view up to date with the analysis, the filters and the shared
 * selection. */
static void sync(ui *u, tree_st *s, bool force)
{
    bool changed = sync_tv(u, s, u->a, force);
    tree_st *o = other_side(u);
    if (o)
        changed |= sync_tv(u, o, u->side_a[1 - u->side], false);
    if (u->cmp)
        pair(u, s);
    bool jumped = s->shown_hash && u->sel_hash != s->shown_hash;
    if (jumped)
        s->recenter = true;             /* selected elsewhere: show its context */
    /* a jump (a finding, an operation, a caller) to a path the thread shown
     * never ran: the merged tree has it */
    if (jumped && s->view >= 0 && !u->cmp && tv_find(&s->tv, u->sel_hash) == PRISM_NO_NODE) {
        s->view = -1;
        tv_set_tree(&s->tv, view_tree(u, s, u->a), true);
        changed = true;
        ui_message(u, "all threads merged: the thread shown never ran that path");
    }
    if (changed || tree_row_hash(s, s->sel) != u->sel_hash || !tree_nrows(s))
        relocate(u, s, false);
    else
        s->absent = false;
}

/* Compare mode: the other side gets the view of `from` (this side's tree
 * or, for a path only the other side has, the other's). */
static void mirror(ui *u, tree_st *s, const treeview *from)
{
    tree_st *o = other_side(u);
    if (!o)
        return;
    tv_copy_view(from == &s->tv ? &o->tv : &s->tv, from);
    o->order = s->order;
}

/* The tree that has row i's path (this side's first) and the node there. */
static treeview *row_tv(ui *u, tree_st *s, size_t i, uint32_t *node)
{
    *node = tree_row_node(s, i);
    if (*node != PRISM_NO_NODE || !s->paired)
        return &s->tv;
    tree_st *o = other_side(u);
    *node = s->pairs.rows[i].node[1 - s->side];
    return &o->tv;
}

/* After the expansion or the sort changed: keep the selected node, or the
 * ancestor that now shows in its place. */
static int keep_selection(ui *u, tree_st *s, treeview *tv, uint32_t node)
{
    mirror(u, s, tv);
    size_t row = TV_NONE;
    if (s->paired) {
        pair(u, s);
        for (int guard = 0; node < tv->count && row == TV_NONE && guard < 4096; guard++) {
            row = tp_find(&s->pairs, tv->nodes[node].path_hash);
            node = tv->nodes[node].parent;
        }
    } else if (node != PRISM_NO_NODE) {
        row = tv_row_of(tv, node, false);
    }
    select_row(u, s, row != TV_NONE ? row : 0);
    return UI_REDRAW;
}

static void *init(ui *u)
{
    tree_st *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    tv_init(&s->tv);
    s->view = -1;
    s->page = 10;
    s->side = u->side;
    sync(u, s, true);
    s->shown_hash = u->sel_hash;
    s->recenter = false;
    return s;
}

static void reload(ui *u, void *st)
{
    if (st)
        sync(u, st, true);
}

static void free_st(void *st)
{
    tree_st *s = st;
    if (!s)
        return;
    tv_free(&s->tv);
    tp_free(&s->pairs);
    free(s);
}

/* ---- keys ---------------------------------------------------------------- */

static int k_move(ui *u, void *st, int key)
{
    tree_st *s = st;
    if (!s || (sync(u, s, false), !tree_nrows(s)))
        return UI_NONE;
    size_t page = s->page > 1 ? (size_t)s->page - 1 : 1;
    select_row(u, s, ui_list_move(key, s->sel, tree_nrows(s), page));
    return UI_REDRAW;
}

static int k_open(ui *u, void *st, int key)
{
    tree_st *s = st;
    if (!s || (sync(u, s, false), !tree_nrows(s)))
        return UI_NONE;
    uint32_t n;
    treeview *tv = row_tv(u, s, s->sel, &n);
    if (n == PRISM_NO_NODE || !tv_has_children(tv, n))
        return UI_NONE;
    if (!tv_expanded(tv, n)) {
        tv_set_expanded(tv, n, true);
        return keep_selection(u, s, tv, n);
    }
    if (key == '\r' || key == '\n' || key == KEY_ENTER || key == ' ') {   /* toggle */
        tv_set_expanded(tv, n, false);
        return keep_selection(u, s, tv, n);
    }
    select_row(u, s, s->sel + 1);       /* open already: to the first child */
    return UI_REDRAW;
}

static int k_close(ui *u, void *st, int key)
{
    tree_st *s = st;
    (void)key;
    if (!s || (sync(u, s, false), !tree_nrows(s)))
        return UI_NONE;
    uint32_t n;
    treeview *tv = row_tv(u, s, s->sel, &n);
    if (n == PRISM_NO_NODE)
        return UI_NONE;
    if (tv_has_children(tv, n) && tv_expanded(tv, n)) {
        tv_set_expanded(tv, n, false);
        return keep_selection(u, s, tv, n);
    }
    uint32_t p = tv->nodes[n].parent;
    return p == PRISM_NO_NODE ? UI_NONE : keep_selection(u, s, tv, p);
}

static int k_level(ui *u, void *st, int key)
{
    tree_st *s = st;
    if (!s || (sync(u, s, false), !tree_nrows(s)))
        return UI_NONE;
    uint32_t n;
    treeview *tv = row_tv(u, s, s->sel, &n);
    uint32_t lv = tv_level(&s->tv), max = s->tv.max_depth + 1;
    if (key == 'e' || key == '*')
        lv = TV_ALL;
    else if (key == 'c')
        lv = 0;
    else if (key == '-')
        lv = lv ? lv - 1 : 0;
    else
        lv = lv < max ? lv + 1 : max;
    tv_set_level(&s->tv, lv);
    if (lv == TV_ALL || lv >= max)
        ui_message(u, "expanded all");
    else if (lv == 0)
        ui_message(u, "collapsed all");
    else
        ui_message(u, "showing %u level%s", (unsigned)lv + 1, lv ? "s" : "");
    mirror(u, s, &s->tv);
    return keep_selection(u, s, tv, n);
}

static const char *order_word(const treeview *tv)
{
    return tv_descending(tv) ? "descending" : "ascending";
}

static int k_sort(ui *u, void *st, int key)
{
    tree_st *s = st;
    if (!s)
        return UI_NONE;
    sync(u, s, false);
    uint32_t n;
    treeview *tv = row_tv(u, s, s->sel, &n);
    if (key == 'r')
        tv_set_reverse(&s->tv, !s->tv.reverse);
    else
        tv_set_sort(&s->tv, (tv_sort)((s->tv.sort + 1) % TV_SORT_COUNT));
    ui_message(u, "sorted by %s, %s", tv_sort_name(s->tv.sort), order_word(&s->tv));
    mirror(u, s, &s->tv);
    return keep_selection(u, s, tv, n);
}

static int k_order(ui *u, void *st, int key)
{
    tree_st *s = st;
    (void)key;
    if (!s)
        return UI_NONE;
    if (!u->cmp) {
        ui_message(u, "o: row order of compare mode (prism-top BASE NEW)");
        return UI_REDRAW;
    }
    s->order = s->order == TP_BASE ? TP_DELTA : TP_BASE;
    mirror(u, s, &s->tv);
    sync(u, s, false);
    ui_message(u, s->order == TP_BASE ? "rows in the base's order" : "rows by size of change");
    size_t row = tp_find(&s->pairs, u->sel_hash);
    select_row(u, s, row != TV_NONE ? row : 0);
    return UI_REDRAW;
}

static int k_thread(ui *u, void *st, int key)
{
    tree_st *s = st;
    (void)key;
    if (!s)
        return UI_NONE;
    if (u->cmp) {
        ui_message(u, "compare mode shows all threads merged");
        return UI_REDRAW;
    }
    size_t nt = prism_analysis_thread_count(u->a);
    s->view = s->view + 1 < (int)nt ? s->view + 1 : -1;
    tv_set_tree(&s->tv, view_tree(u, s, u->a), true);
    s->sel = 0;
    relocate(u, s, true);
    char lab[192];
    if (s->view >= 0) {
        ui_thread_label(u->a, (size_t)s->view, true, lab, sizeof lab);
        ui_message(u, "%s, %d of %zu", lab, s->view + 1, nt);
    } else
        ui_message(u, "all threads merged");
    return UI_REDRAW;
}

static int k_details(ui *u, void *st, int key)
{
    tree_st *s = st;
    (void)u; (void)key;
    if (!s)
        return UI_NONE;
    if (s->last_h >= DETAILS_AUTO_H)
        s->details_hidden = !s->details_hidden;
    else
        s->details_small = !s->details_small;
    return UI_REDRAW;
}

static bool match(const char *name, void *ctx)
{
    return ui_matches(ctx, name);
}

static bool find_node(ui *u, void *st, int dir)
{
    tree_st *s = st;
    sync(u, s, false);
    uint32_t from;
    treeview *tv = row_tv(u, s, s->sel, &from);
    uint32_t n = tv_next_match(tv, from, dir, match, u);
    if (n == PRISM_NO_NODE)
        return false;
    ui_select(u, tv->nodes[n].path_hash);   /* shown with its context */
    sync(u, s, false);
    return true;
}

static int k_search(ui *u, void *st, int key)
{
    return ui_search_key(u, st, key, find_node);
}

static const ui_key keys[] = {
    { 'j', "j", k_move, "select the next row" },
    { KEY_DOWN, "Down", k_move, "select the next row" },
    { 'k', "k", k_move, "select the previous row" },
    { KEY_UP, "Up", k_move, "select the previous row" },
    { KEY_NPAGE, "PgDn", k_move, "page down" },
    { KEY_PPAGE, "PgUp", k_move, "page up" },
    { KEY_HOME, "Home", k_move, "first row" }, { 'g', "g", k_move, "first row" },
    { KEY_END, "End", k_move, "last row" }, { 'G', "G", k_move, "last row" },
    { KEY_RIGHT, "Right", k_open, "expand; on an open node: to its first child" },
    { 'l', "l", k_open, "expand; on an open node: to its first child" },
    { '\r', "Enter", k_open, "expand / collapse" },
    { KEY_ENTER, "KpEnter", k_open, "expand / collapse" },
    { ' ', "Space", k_open, "expand / collapse" },
    { KEY_LEFT, "Left", k_close, "collapse; on a closed node: to its parent" },
    { 'h', "h", k_close, "collapse; on a closed node: to its parent" },
    { 'e', "e", k_level, "expand all" }, { '*', "*", k_level, "expand all" },
    { 'c', "c", k_level, "collapse all (roots only)" },
    { '+', "+", k_level, "show one more level (collapse to depth)" },
    { '=', "=", k_level, "show one more level (collapse to depth)" },
    { '-', "-", k_level, "show one level less" },
    { 's', "s", k_sort, "sort siblings by total / self / calls / name" },
    { 'r', "r", k_sort, "reverse the sort (descending / ascending)" },
    { 'o', "o", k_order, "compare: rows in the base's order / by size of change" },
    { 't', "t", k_thread, "all threads / thread 1 / thread 2 ..." },
    { 'd', "d", k_details, "details of the selection: show / hide" },
    { 'n', "n", k_search, "next match of the search (/)" },
    { 'N', "N", k_search, "previous match of the search" },
};

/* ---- mouse ------------------------------------------------------------------- */

static int mouse(ui *u, void *st, int event, int row, int col)
{
    tree_st *s = st;
    (void)col;
    if (!s || (sync(u, s, false), !tree_nrows(s)))
        return UI_NONE;
    size_t n = tree_nrows(s), page = s->page > 0 ? (size_t)s->page : 1;
    if (event == UI_MOUSE_WHEEL_UP || event == UI_MOUSE_WHEEL_DOWN) {
        size_t maxtop = n > page ? n - page : 0, top = s->top;
        if (event == UI_MOUSE_WHEEL_UP)
            top = top > 3 ? top - 3 : 0;
        else
            top = top + 3 < maxtop ? top + 3 : maxtop;
        size_t sel = s->sel < top ? top : s->sel >= top + page ? top + page - 1 : s->sel;
        s->top = top;
        tree_st *o = other_side(u);
        if (o)
            o->top = top;
        if (sel != s->sel)
            select_row(u, s, sel);
        return UI_REDRAW;
    }
    int i = row - s->list_y;
    if (i < 0 || i >= s->page || s->top + (size_t)i >= n)
        return UI_NONE;
    select_row(u, s, s->top + (size_t)i);
    if (event == UI_MOUSE_DOUBLE)
        return k_open(u, s, '\r') | UI_REDRAW;
    return UI_REDRAW;
}

/* ---- drawing ------------------------------------------------------------------ */

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    tree_st *s = st;
    ui_rect r = { y, x, h, w };
    if (h <= 0 || w <= 0)
        return;
    if (!s) {
        ui_print(&r, 0, 1, A_BOLD, "out of memory");
        return;
    }
    sync(u, s, false);
    tree_st *o = other_side(u);
    if (o && s->paired)
        s->top = o->top;                /* both sides scroll alike */
    tree_draw(u, s, &r);
    s->shown_hash = u->sel_hash;
    s->recenter = false;
}

static int side_cols(ui *u, void *st)
{
    tree_st *s = st;
    if (!s)
        return 0;
    sync(u, s, false);
    return tree_side_cols(s);
}

const ui_pane pane_tree = {
    .name = "Tree",
    .hint = "Enter:fold e/c/+/-:levels s/r:sort t:thread d:details n/N:match",
    .init = init,
    .draw = draw,
    .reload = reload,
    .free = free_st,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .mouse = mouse,
    .side_cols = side_cols,
};
