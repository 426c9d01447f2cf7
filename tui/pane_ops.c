/*
 * pane_ops.c - the Ops pane: the flat operations list (every node of a
 * name, all threads) as horizontal timing bars by total or self time, or
 * by calls, largest or (r) smallest first.  Enter shows the operation's
 * heaviest call path in the Tree; c opens its callers view (every path
 * that ends in it, pane_ops_callers.c).  With a filter (u->filter) only
 * the operations whose name passes it are listed.
 *
 * The order is rebuilt only when the sort, the filter or the analysis
 * changes.  The selection follows u->sel_hash (the operation of the
 * selected node) and, when moved here, sets it to the operation's heaviest
 * path.
 *
 * Compare mode (u->cmp): a delta column, the operation's total against
 * the other profile's operation of the same name (delta.c's dl_ops:
 * significant when a path of that name changed significantly), the change
 * of its share in points (a sort key too: what grew or shrank as a part of
 * the run, whatever the run's own change), and with u->diff_only the
 * changed operations only.  Both sides list the operations in one order,
 * the same operation on the same line (pane_ops_cmp.c); a side lacking one
 * shows it as absent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pane_ops.h"
#include "treeview.h"

const char *const ops_by_name[BY_COUNT] = { "total", "self", "calls", "share change" };

uint64_t ops_metric(const prism_op *op, int by)
{
    return by == BY_SELF ? op->self_ns : by == BY_CALLS ? op->calls : op->total_ns;
}

const char *ops_direction(const ui *u, const ops_st *s)
{
    if (u->utf8)
        return s->rev ? "\u2191" : "\u2193";
    return s->rev ? "(asc)" : "(desc)";
}

static int cmp_fwd(const ops_st *s, uint32_t ia, uint32_t ib)
{
    const prism_op *a = &s->ops[ia], *b = &s->ops[ib];
    if (s->by == BY_DSHARE && s->dl) {          /* largest change of share first */
        double da = fabs(s->dl[ia].share_delta), db = fabs(s->dl[ib].share_delta);
        if (da != db)
            return da < db ? 1 : -1;
    }
    uint64_t x = ops_metric(a, s->by), y = ops_metric(b, s->by);
    if (x != y)
        return x < y ? 1 : -1;
    if (a->total_ns != b->total_ns)
        return a->total_ns < b->total_ns ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int cmp_ops(const void *pa, const void *pb, void *ctx)
{
    const ops_st *s = ctx;
    int r = cmp_fwd(s, *(const uint32_t *)pa, *(const uint32_t *)pb);
    return s->rev ? -r : r;
}

static const char *sel_name(const ops_st *s)
{
    return s->sel < s->nops && s->order ? ops_name_at(s, s->sel) : NULL;
}

static size_t find_name(const ops_st *s, const char *name)
{
    for (size_t i = 0; name && i < s->nops; i++)
        if (!strcmp(ops_name_at(s, i), name))
            return i;
    return TV_NONE;
}

/* Sort again, keeping the selected operation by name. */
static void reorder(ui *u, ops_st *s, const char *keep)
{
    char name[256] = "";
    if (keep)
        snprintf(name, sizeof name, "%s", keep);
    s->nops = 0;
    s->nabsent = 0;
    s->stale = false;
    if (ops_compare_order(u, s) != 0) {         /* not comparing: this side's own */
        for (size_t i = 0; s->order && i < s->nall; i++)
            if ((!s->diff_only || !s->dl || dl_changed(&s->dl[i])) &&
                ui_filter_matches(u, s->ops[i].name))
                s->order[s->nops++] = (uint32_t)i;
        if (s->nops > 1)
            qsort_r(s->order, s->nops, sizeof *s->order, cmp_ops, s);
    }
    size_t at = find_name(s, name[0] ? name : NULL);
    s->sel = at != TV_NONE ? at : 0;
    s->namew = 4;
    for (size_t i = 0; i < s->nall + s->nabsent; i++) {
        int w = ui_width(i < s->nall ? s->ops[i].name : s->absent[i - s->nall]);
        if (w > s->namew)
            s->namew = w;
    }
}

/* Compare mode: the change of every operation against the other side. */
static void compare_ops(ui *u, ops_st *s)
{
    free(s->dl);
    s->dl = NULL;
    if (!u->cmp || !s->nall)
        return;
    size_t no;
    const prism_op *other = prism_analysis_ops(u->side_a[1 - u->side], &no);
    const prism_tree *bt = prism_analysis_tree(u->side_a[0]);
    s->dl = malloc(s->nall * sizeof *s->dl);
    if (s->dl && dl_ops(s->ops, s->nall, other, other ? no : 0, u->side, u->cmp,
                        bt ? bt->total_ns : 0, s->dl) != 0) {
        free(s->dl);
        s->dl = NULL;
    }
}

void ops_sync(ui *u, ops_st *s)
{
    size_t n;
    const prism_op *ops = prism_analysis_ops(u->a, &n);
    bool diff_only = u->cmp && u->diff_only;
    if (ops != s->ops || n != s->nall || diff_only != s->diff_only || s->stale ||
        strcmp(u->filter, s->filter)) {
        char keep[256] = "";
        if (sel_name(s))
            snprintf(keep, sizeof keep, "%s", sel_name(s));
        if (ops != s->ops || n != s->nall) {
            free(s->order);
            s->order = malloc((n ? n : 1) * sizeof *s->order);
            s->ops = ops;
            s->nall = s->order && ops ? n : 0;
            compare_ops(u, s);
        }
        s->diff_only = diff_only;
        snprintf(s->filter, sizeof s->filter, "%s", u->filter);
        reorder(u, s, keep);
    }
    if (!s->followed || s->seen_hash != u->sel_hash) {   /* follow the shared selection */
        s->followed = true;
        s->seen_hash = u->sel_hash;
        uint32_t node = prism_analysis_find(u->a, u->sel_hash);
        const prism_tree *t = prism_analysis_tree(u->a);
        const char *name = node != PRISM_NO_NODE && node < t->count ? t->nodes[node].name : NULL;
        if (!name && u->cmp) {                  /* a path only the other side has */
            const prism_analysis *o = u->side_a[1 - u->side];
            uint32_t on = o ? prism_analysis_find(o, u->sel_hash) : PRISM_NO_NODE;
            const prism_tree *ot = o ? prism_analysis_tree(o) : NULL;
            name = on != PRISM_NO_NODE && ot && on < ot->count ? ot->nodes[on].name : NULL;
        }
        size_t at = find_name(s, name);
        if (at != TV_NONE)
            s->sel = at;
    }
}

static void *init(ui *u)
{
    ops_st *s = calloc(1, sizeof *s);
    if (s)
        ops_sync(u, s);
    return s;
}

static void reload(ui *u, void *st)
{
    ops_st *s = st;
    if (!s)
        return;
    s->ops = NULL;              /* the old array is gone: force a new order, */
    s->nops = s->nall = 0;      /* and find the selection again through the  */
    s->sel = 0;                 /* shared selection (by path hash)           */
    s->followed = false;
    ops_sync(u, s);
    if (s->callers_on && callers_build(&s->cv, u->a, s->cv.name) != 0)
        ops_callers_close(s);   /* the same operation in the new analysis */
}

static void free_st(void *st)
{
    ops_st *s = st;
    if (s) {
        free(s->order);
        free(s->absent);
        free(s->dl);
        callers_free(&s->cv);
    }
    free(s);
}

/* ---- keys ------------------------------------------------------------------ */

static uint64_t heaviest_hash(ui *u, const prism_op *op, bool *ok)
{
    const prism_tree *t = prism_analysis_tree(u->a);
    *ok = op->node < t->count;
    return *ok ? t->nodes[op->node].path_hash : 0;
}

static void select_op(ui *u, ops_st *s, size_t i)
{
    if (!s->nops)
        return;
    s->sel = i < s->nops ? i : s->nops - 1;
    const prism_op *op = ops_at(s, s->sel);
    bool ok = false;
    uint64_t h = 0;
    if (op) {
        h = heaviest_hash(u, op, &ok);
    } else if ((op = ops_other(u, ops_name_at(s, s->sel))) != NULL) {
        const prism_tree *ot = prism_analysis_tree(u->side_a[1 - u->side]);
        ok = op->node < ot->count;      /* absent here: the other side follows */
        h = ok ? ot->nodes[op->node].path_hash : 0;
    }
    if (ok) {
        ui_select(u, h);
        s->seen_hash = h;
    }
}

static int k_move(ui *u, void *st, int key)
{
    ops_st *s = st;
    if (!s)
        return UI_NONE;
    ops_sync(u, s);
    if (s->callers_on)
        return ops_callers_move(u, s, key);
    if (!s->nops)
        return UI_NONE;
    size_t n = s->nops, page = s->page > 1 ? (size_t)s->page - 1 : 1, r = s->sel;
    r = ui_list_move(key, r, n, page);
    select_op(u, s, r);
    return UI_REDRAW;
}

static int k_sort(ui *u, void *st, int key)
{
    ops_st *s = st;
    if (!s)
        return UI_NONE;
    ops_sync(u, s);
    if (key == 'r') {
        s->rev = !s->rev;
    } else {
        s->by = (s->by + 1) % BY_COUNT;
        if (s->by == BY_DSHARE && !s->dl)       /* share change: compare mode only */
            s->by = BY_TOTAL;
    }
    reorder(u, s, sel_name(s));
    ops_st *o = u->cmp ? u->side_state[1 - u->side][PANE_OPS] : NULL;
    if (o && o != s) {                  /* both sides in one order */
        o->by = s->by;
        o->rev = s->rev;
        o->stale = true;
    }
    ui_message(u, "sorted by %s, %s first", ops_by_name[s->by],
               s->rev ? "smallest" : "largest");
    return UI_REDRAW;
}

static int k_enter(ui *u, void *st, int key)
{
    ops_st *s = st;
    (void)key;
    if (!s)
        return UI_NONE;
    ops_sync(u, s);
    if (s->callers_on)
        return ops_callers_enter(u, s);
    if (!s->nops)
        return UI_NONE;
    if (!ops_at(s, s->sel)) {
        ui_message(u, "not in this profile");
        return UI_REDRAW;
    }
    bool ok;
    uint64_t h = heaviest_hash(u, ops_at(s, s->sel), &ok);
    if (!ok)
        return UI_NONE;
    s->seen_hash = h;
    ui_jump(u, PANE_TREE, h);
    return UI_REDRAW;
}

static int k_callers(ui *u, void *st, int key)
{
    ops_st *s = st;
    if (!s)
        return UI_NONE;
    ops_sync(u, s);
    if (s->callers_on) {
        ops_callers_close(s);
        return UI_REDRAW;
    }
    if (key == 27)              /* nothing to close: the frame's back */
        return UI_PASS;
    return ops_callers_open(u, s);
}

static bool find_op(ui *u, void *st, int dir)
{
    ops_st *s = st;
    ops_sync(u, s);
    for (size_t i = 1; i <= s->nops; i++) {
        size_t at = dir < 0 ? (s->sel + s->nops - i) % s->nops : (s->sel + i) % s->nops;
        if (ui_matches(u, ops_name_at(s, at))) {
            select_op(u, s, at);
            return true;
        }
    }
    return false;
}

static int k_search(ui *u, void *st, int key)
{
    return ui_search_key(u, st, key, find_op);
}

#define ENTER_HELP "show the operation's heaviest path (callers: that path) in the Tree"
static const ui_key keys[] = {
    { 'j', "j", k_move, "select the next row" },
    { KEY_DOWN, "Down", k_move, "select the next row" },
    { 'k', "k", k_move, "select the previous row" },
    { KEY_UP, "Up", k_move, "select the previous row" },
    { KEY_NPAGE, "PgDn", k_move, "page down" },
    { KEY_PPAGE, "PgUp", k_move, "page up" },
    { KEY_HOME, "Home", k_move, "first row" }, { 'g', "g", k_move, "first row" },
    { KEY_END, "End", k_move, "last row" }, { 'G', "G", k_move, "last row" },
    { 's', "s", k_sort, "sort by total / self / calls (/ share change when comparing)" },
    { 'r', "r", k_sort, "reverse the sort (smallest first)" },
    { '\r', "Enter", k_enter, ENTER_HELP },
    { KEY_ENTER, "KpEnter", k_enter, ENTER_HELP },
    { 'c', "c", k_callers, "callers: every call path of the operation (again: back)" },
    { 27, "Esc", k_callers, "close the callers view (else: back)" },
    { 'n', "n", k_search, "next match of the search (/)" },
    { 'N', "N", k_search, "previous match of the search" },
};

/* ---- mouse ----------------------------------------------------------------- */

static int mouse(ui *u, void *st, int event, int row, int col)
{
    ops_st *s = st;
    (void)col;
    if (!s)
        return UI_NONE;
    ops_sync(u, s);
    if (event == UI_MOUSE_WHEEL_UP || event == UI_MOUSE_WHEEL_DOWN) {
        int key = event == UI_MOUSE_WHEEL_UP ? KEY_UP : KEY_DOWN, r = UI_NONE;
        for (int i = 0; i < 3; i++)
            r |= k_move(u, s, key);
        return r;
    }
    if (event != UI_MOUSE_CLICK && event != UI_MOUSE_DOUBLE)
        return UI_NONE;
    if (s->callers_on) {
        size_t at = ops_callers_row_at(s, row);
        if (at == (size_t)-1)
            return UI_NONE;
        s->csel = at;
        return event == UI_MOUSE_DOUBLE ? ops_callers_enter(u, s) : UI_REDRAW;
    }
    if (row < s->list_y || row >= s->list_y + s->list_n ||
        s->top + (size_t)(row - s->list_y) >= s->nops)
        return UI_NONE;
    select_op(u, s, s->top + (size_t)(row - s->list_y));
    return event == UI_MOUSE_DOUBLE ? k_enter(u, s, '\r') : UI_REDRAW;
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    ops_st *s = st;
    ui_rect r = { y, x, h, w };
    if (h <= 0 || w <= 0)
        return;
    if (!s) {
        ui_print(&r, 0, 1, A_BOLD, "out of memory");
        return;
    }
    ops_sync(u, s);
    if (s->callers_on)
        ops_callers_draw(u, s, &r);
    else
        ops_draw_list(u, s, &r);
}

static int side_cols(ui *u, void *st)
{
    ops_st *s = st;
    if (!s || s->callers_on)
        return 0;
    ops_sync(u, s);
    return ops_side_cols(s);
}

const ui_pane pane_ops = {
    .name = "Ops",
    .hint = "s:sort r:reverse c:callers Enter:Tree",
    .init = init,
    .draw = draw,
    .reload = reload,
    .free = free_st,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .mouse = mouse,
    .side_cols = side_cols,
};
