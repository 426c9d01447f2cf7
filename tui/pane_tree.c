/*
 * pane_tree.c - the Tree pane: the call tree (all threads, or one thread's
 * with `t`) as an indented list with total, self, calls, share and a timing
 * bar, expand/collapse, collapse-to-depth, sibling sort, search, and the
 * selected node's details at the bottom.
 *
 * The rows come from treeview.c and are rebuilt only when the expansion,
 * the sort or the tree changes; moving the selection and drawing cost
 * O(rows on screen).  The selection is u->sel_hash (ui_select), so the other
 * panes follow it and it survives reloads; expansion is kept by path hash.
 *
 * Compare mode (u->cmp): a delta column against the other profile (colour
 * by direction and significance, "new"/"gone" for a path on one side
 * only), a Diff line in the details, and with u->diff_only only changed
 * paths and their ancestors.  A selected path this side lacks shows as its
 * nearest ancestor; with no ancestor here no row is highlighted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "delta.h"
#include "treeview.h"
#include "ui.h"

#define DETAILS_ROWS 6          /* separator and five lines, and one more
                                   for a file with regions not recorded     */
#define DETAILS_AUTO_H 16       /* shown by default from this pane height   */

typedef struct tree_st {
    treeview tv;
    int view;                   /* -1: all threads, else a thread index     */
    size_t sel, top;            /* selected and first shown row             */
    int page;                   /* list rows at the last draw               */
    int last_h;
    bool details_small;         /* `d` below DETAILS_AUTO_H rows: shown     */
    bool details_hidden;        /* `d` from DETAILS_AUTO_H rows: hidden     */
    bool absent;                /* the selected path has no row here        */
} tree_st;

static const prism_tree *view_tree(ui *u, tree_st *s)
{
    const prism_tree *t = NULL;
    if (s->view >= 0)
        t = prism_analysis_thread_tree(u->a, (size_t)s->view, NULL, NULL);
    if (!t) {
        s->view = -1;
        t = prism_analysis_tree(u->a);
    }
    return t;
}

static uint32_t sel_node(const tree_st *s)
{
    return s->sel < s->tv.nrows ? s->tv.rows[s->sel] : PRISM_NO_NODE;
}

static void select_row(ui *u, tree_st *s, size_t row)
{
    if (!s->tv.nrows)
        return;
    s->sel = row < s->tv.nrows ? row : s->tv.nrows - 1;
    ui_select(u, s->tv.nodes[s->tv.rows[s->sel]].path_hash);
}

/* Put the selection on u->sel_hash (opening its ancestors), else on its
 * nearest ancestor path in this tree, else where it was.  With adopt, the
 * row found becomes the shared selection. */
static void relocate(ui *u, tree_st *s, bool adopt)
{
    treeview *tv = &s->tv;
    uint32_t n = tv_find(tv, u->sel_hash);
    if (n == PRISM_NO_NODE) {   /* a path this thread (or profile) never ran */
        const prism_tree *all = prism_analysis_tree(u->a);
        uint32_t q = cmpv_nearest(u, u->sel_hash);
        for (int guard = 0; q != PRISM_NO_NODE && n == PRISM_NO_NODE && guard < 4096; guard++) {
            n = tv_find(tv, all->nodes[q].path_hash);
            q = all->nodes[q].parent;
        }
    }
    size_t row = n != PRISM_NO_NODE ? tv_row_of(tv, n, true) : TV_NONE;
    tv_rebuild(tv);
    s->absent = row == TV_NONE && !adopt;
    if (row != TV_NONE)
        s->sel = row;
    if (s->sel >= tv->nrows)
        s->sel = tv->nrows ? tv->nrows - 1 : 0;
    if (adopt)
        select_row(u, s, s->sel);
}

static bool keep_changed(const prism_node *n, void *ctx)
{
    return dl_changed(ui_delta(ctx, n->path_hash));
}

/* Bring the view up to date with the analysis, the diff-only filter and
 * the shared selection. */
static void sync(ui *u, tree_st *s, bool force)
{
    tv_keep_fn want = u->cmp && u->diff_only ? keep_changed : NULL;
    if (s->tv.keep != want)
        tv_set_filter(&s->tv, want, u);
    bool changed = tv_set_tree(&s->tv, view_tree(u, s), force);
    tv_rebuild(&s->tv);
    uint32_t n = sel_node(s);
    if (changed || n == PRISM_NO_NODE || s->tv.nodes[n].path_hash != u->sel_hash)
        relocate(u, s, false);
    else
        s->absent = false;
}

/* After the expansion or the sort changed: keep the selected node, or the
 * ancestor that now shows in its place. */
static int keep_selection(ui *u, tree_st *s, uint32_t node)
{
    size_t row = tv_row_of(&s->tv, node, false);
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
    sync(u, s, true);
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
    free(s);
}

/* ---- keys ---------------------------------------------------------------- */

static int k_move(ui *u, void *st, int key)
{
    tree_st *s = st;
    if (!s || !s->tv.nrows)
        return UI_NONE;
    sync(u, s, false);
    size_t n = s->tv.nrows, page = s->page > 1 ? (size_t)s->page - 1 : 1, r = s->sel;
    r = ui_list_move(key, r, n, page);
    select_row(u, s, r);
    return UI_REDRAW;
}

static int k_open(ui *u, void *st, int key)
{
    tree_st *s = st;
    uint32_t n;
    if (!s || (sync(u, s, false), n = sel_node(s)) == PRISM_NO_NODE)
        return UI_NONE;
    if (!tv_has_children(&s->tv, n))
        return UI_NONE;
    if (!tv_expanded(&s->tv, n)) {
        tv_set_expanded(&s->tv, n, true);
        return keep_selection(u, s, n);
    }
    if (key == '\r' || key == '\n' || key == KEY_ENTER || key == ' ') {   /* toggle */
        tv_set_expanded(&s->tv, n, false);
        return keep_selection(u, s, n);
    }
    select_row(u, s, s->sel + 1);       /* open already: to the first child */
    return UI_REDRAW;
}

static int k_close(ui *u, void *st, int key)
{
    tree_st *s = st;
    uint32_t n;
    (void)key;
    if (!s || (sync(u, s, false), n = sel_node(s)) == PRISM_NO_NODE)
        return UI_NONE;
    if (tv_has_children(&s->tv, n) && tv_expanded(&s->tv, n)) {
        tv_set_expanded(&s->tv, n, false);
        return keep_selection(u, s, n);
    }
    uint32_t p = s->tv.nodes[n].parent;
    return p == PRISM_NO_NODE ? UI_NONE : keep_selection(u, s, p);
}

static int k_level(ui *u, void *st, int key)
{
    tree_st *s = st;
    if (!s || (sync(u, s, false), !s->tv.nrows))
        return UI_NONE;
    uint32_t n = sel_node(s), lv = tv_level(&s->tv), max = s->tv.max_depth + 1;
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
    return keep_selection(u, s, n);
}

static int k_sort(ui *u, void *st, int key)
{
    tree_st *s = st;
    (void)key;
    if (!s)
        return UI_NONE;
    sync(u, s, false);
    uint32_t n = sel_node(s);
    tv_set_sort(&s->tv, (tv_sort)((s->tv.sort + 1) % TV_SORT_COUNT));
    ui_message(u, "sorted by %s", tv_sort_name(s->tv.sort));
    return keep_selection(u, s, n);
}

static int k_thread(ui *u, void *st, int key)
{
    tree_st *s = st;
    (void)key;
    if (!s)
        return UI_NONE;
    size_t nt = prism_analysis_thread_count(u->a);
    s->view = s->view + 1 < (int)nt ? s->view + 1 : -1;
    tv_set_tree(&s->tv, view_tree(u, s), true);
    s->sel = 0;
    relocate(u, s, true);
    const char *name = NULL;
    uint32_t stream = 0;
    if (s->view >= 0 && prism_analysis_thread_tree(u->a, (size_t)s->view, &stream, &name))
        ui_message(u, "thread %s (stream %u), %d of %zu", name ? name : "?", (unsigned)stream,
                   s->view + 1, nt);
    else
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

static int k_search(ui *u, void *st, int key)
{
    tree_st *s = st;
    if (!s)
        return UI_NONE;
    if (!u->search[0]) {
        ui_message(u, "no search: press / first");
        return UI_REDRAW;
    }
    sync(u, s, false);
    uint32_t n = tv_next_match(&s->tv, sel_node(s), key == 'N' ? -1 : 1, match, u);
    if (n == PRISM_NO_NODE) {
        ui_message(u, "no match for '%s'", u->search);
        return UI_REDRAW;
    }
    size_t row = tv_row_of(&s->tv, n, true);
    select_row(u, s, row != TV_NONE ? row : s->sel);
    return UI_REDRAW;
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
    { '=', "=", k_level, "show one more level" },
    { '-', "-", k_level, "show one level less" },
    { 's', "s", k_sort, "sort siblings by total / self / calls / name" },
    { 't', "t", k_thread, "all threads / thread 1 / thread 2 ..." },
    { 'd', "d", k_details, "details of the selection: show / hide" },
    { 'n', "n", k_search, "next match of the search (/)" },
    { 'N', "N", k_search, "previous match of the search" },
};

/* ---- drawing --------------------------------------------------------------- */

enum { C_NAME, C_TOTAL, C_DELTA, C_SELF, C_CALLS, C_PCT, C_CPU, C_BAR, C_N };

/* The on-CPU fraction of a node's sampled time ("97"), "-" when unknown. */
static void cpu_cell(char *buf, size_t cap, const prism_node *nd)
{
    if (nd->cpu_known_ns)
        snprintf(buf, cap, "%.0f", 100.0 * (double)nd->oncpu_ns / (double)nd->cpu_known_ns);
    else
        snprintf(buf, cap, "-");
}
#define DELTA_W 15              /* "+123.4ms +12.3%" */

static void node_path(const treeview *tv, uint32_t n, char *out, size_t cap)
{
    const char *parts[256];
    int k = 0;
    for (uint32_t q = n; q != PRISM_NO_NODE && q < tv->count && k < 256; q = tv->nodes[q].parent)
        parts[k++] = tv->nodes[q].name;
    size_t o = 0;
    out[0] = '\0';
    while (k-- > 0 && o + 1 < cap) {
        int m = snprintf(out + o, cap - o, "%s%s", o ? "/" : "", parts[k]);
        if (m < 0)
            break;
        o += (size_t)m < cap - o ? (size_t)m : cap - o - 1;
    }
}

static void header(ui *u, tree_st *s, const ui_rect *r, const int *cw)
{
    static const char *const titles[C_N] = { "", "total", "vs base", "self", "calls", "%",
                                             "cpu%", "" };
    static const int sort_col[TV_SORT_COUNT] = { C_TOTAL, C_SELF, C_CALLS, C_NAME };
    attr_t at = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    char label[3][160], buf[160];
    const char *tname = NULL;
    if (s->view >= 0)
        prism_analysis_thread_tree(u->a, (size_t)s->view, NULL, &tname);
    tname = s->view < 0 ? "all" : tname ? tname : "?";
    const char *dot = u->utf8 ? " \u00b7 " : " - ";
    /* the longest that fits: with the position, without, shortest */
    snprintf(label[0], sizeof label[0], "%s%s%s%sby %s  %zu/%zu", s->view >= 0 ? "thread " : "",
             tname, s->view < 0 ? " threads" : "", dot, tv_sort_name(s->tv.sort),
             s->tv.nrows ? s->sel + 1 : 0, s->tv.nrows);
    snprintf(label[1], sizeof label[1], "%s%s%s%sby %s", s->view >= 0 ? "thread " : "", tname,
             s->view < 0 ? " threads" : "", dot, tv_sort_name(s->tv.sort));
    snprintf(label[2], sizeof label[2], "%s by %s", tname, tv_sort_name(s->tv.sort));
    int pick = 0;
    while (pick < 2 && ui_width(label[pick]) > cw[C_NAME] - 1)
        pick++;
    int x = 0;
    for (int c = 0; c < C_N; c++) {
        if (!cw[c])
            continue;
        attr_t a = at | (sort_col[s->tv.sort] == c ? A_UNDERLINE : 0);
        if (c == C_NAME) {
            tv_fit(buf, sizeof buf, label[pick], cw[c] - 1, u->utf8);
            ui_print(r, 0, x + 1, a, buf);
        } else if (titles[c][0]) {
            ui_printf(r, 0, x, a, "%*s", cw[c], titles[c]);
        }
        x += cw[c] + 1;
    }
}

static void row(ui *u, tree_st *s, const ui_rect *r, int y, size_t i, const int *cw)
{
    const treeview *tv = &s->tv;
    uint32_t n = tv->rows[i];
    const prism_node *nd = &tv->nodes[n];
    bool sel = i == s->sel && !s->absent, hit = ui_matches(u, nd->name);
    attr_t base = sel ? ui_attr(u, CP_SEL, A_REVERSE) | (u->color ? 0 : A_BOLD) : A_NORMAL;
    attr_t name_at = base;
    if (hit)
        name_at = sel || !u->color ? base | A_BOLD | A_UNDERLINE : ui_attr(u, CP_HIGH, A_BOLD) | A_BOLD;
    if (sel)
        ui_fill(r, y, base);
    char buf[512];
    int x = 0;
    for (int c = 0; c < C_N; c++) {
        int w = cw[c];
        if (!w)
            continue;
        switch (c) {
        case C_NAME: {
            int indent = 1 + 2 * (int)nd->depth, room = w - 3;
            if (indent > room - 8)
                indent = room - 8 > 1 ? room - 8 : 1;
            const char *mark = !tv_has_children(tv, n) ? (u->utf8 ? "\u00b7 " : ". ")
                               : tv_expanded(tv, n) ? (u->utf8 ? "\u25be " : "- ")
                                                    : (u->utf8 ? "\u25b8 " : "+ ");
            ui_print(r, y, x + indent, base, mark);
            tv_fit(buf, sizeof buf, nd->name, w - indent - 2, u->utf8);
            ui_print(r, y, x + indent + 2, name_at, buf);
            break;
        }
        case C_TOTAL: case C_SELF:
            fmt_ns(buf, sizeof buf, (double)(c == C_TOTAL ? nd->total_ns : nd->self_ns));
            ui_printf(r, y, x, base, "%*s", w, buf);
            break;
        case C_CALLS:
            tv_fmt_count(buf, sizeof buf, nd->calls);
            ui_printf(r, y, x, base, "%*s", w, buf);
            break;
        case C_DELTA:
            cmpv_delta_cell(u, r, y, x, w, ui_delta(u, nd->path_hash), base, sel);
            break;
        case C_PCT:
            ui_printf(r, y, x, base, "%*.1f", w, nd->share * 100.0);
            break;
        case C_CPU:
            cpu_cell(buf, sizeof buf, nd);
            ui_printf(r, y, x, base, "%*s", w, buf);
            break;
        case C_BAR:
            ui_bar(buf, sizeof buf, nd->share, w, u->utf8);
            ui_print(r, y, x, sel ? base : ui_attr(u, CP_BAR, A_NORMAL), buf);
            break;
        }
        x += w + 1;
    }
}

/* The details' height: one more line when regions were not recorded. */
static int details_rows(const ui *u)
{
    return DETAILS_ROWS + (prism_analysis_dropped_regions(u->a, NULL, NULL) ? 1 : 0);
}

static void details(ui *u, tree_st *s, const ui_rect *r, int y)
{
    const treeview *tv = &s->tv;
    uint32_t n = sel_node(s);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    char line[512], a[32], b[32], c[32], d[32];
    for (int x = 0; x < r->w; x++)
        ui_print(r, y, x, ui_attr(u, CP_DIM, A_NORMAL), u->utf8 ? "\u2500" : "-");
    ui_print(r, y, 2, lab, " Details ");
    if (n == PRISM_NO_NODE || s->absent)       /* compare: the Diff line says why */
        return;
    const prism_node *nd = &tv->nodes[n];
    node_path(tv, n, line, sizeof line);
    char fit[512];
    tv_fit_left(fit, sizeof fit, line, r->w - 8, u->utf8);
    ui_print(r, y + 1, 1, lab, "Path");
    ui_print(r, y + 1, 7, A_NORMAL, fit);

    fmt_ns(a, sizeof a, (double)nd->total_ns);
    fmt_ns(b, sizeof b, (double)nd->self_ns);
    tv_fmt_count(c, sizeof c, nd->calls);
    ui_print(r, y + 2, 1, lab, "Time");
    ui_printf(r, y + 2, 7, A_NORMAL, "total %s  self %s (%.0f%%)  calls %s  share %.1f%% of %s",
              a, b, nd->total_ns ? 100.0 * (double)nd->self_ns / (double)nd->total_ns : 0.0,
              c, nd->share * 100.0, tv->tree == prism_analysis_tree(u->a) ? "total" : "the thread");

    fmt_ns(a, sizeof a, (double)nd->min_ns);
    fmt_ns(b, sizeof b, nd->mean_ns);
    fmt_ns(c, sizeof c, (double)nd->max_ns);
    fmt_ns(d, sizeof d, nd->std_ns);
    ui_print(r, y + 3, 1, lab, "Call");
    int cx = 7 + ui_printf(r, y + 3, 7, A_NORMAL, "min %s  mean %s  max %s  std %s", a, b, c, d);
    if (nd->cpu_known_ns) {             /* wait vs work, measured */
        double k = (double)nd->cpu_known_ns;
        ui_printf(r, y + 3, cx, A_NORMAL, "  on CPU %.0f%%  run queue %.0f%%  blocked %.0f%%",
                  100.0 * (double)nd->oncpu_ns / k, 100.0 * (double)nd->runq_ns / k,
                  100.0 * (double)nd->offcpu_ns / k);
    }

    /* per-step and GPU figures live on the all-threads node */
    const prism_tree *all = prism_analysis_tree(u->a);
    uint32_t m = tv->tree == all ? n : prism_analysis_find(u->a, nd->path_hash);
    const prism_node *mn = m != PRISM_NO_NODE && m < all->count ? &all->nodes[m] : NULL;
    const char *scope = tv->tree == all ? "" : " (all threads)";
    ui_print(r, y + 4, 1, lab, "Step");
    if (mn && mn->steps_seen) {
        fmt_ns(a, sizeof a, mn->step_mean_ns);
        fmt_ns(b, sizeof b, mn->step_std_ns);
        fmt_ns(c, sizeof c, mn->step_max_ns);
        ui_printf(r, y + 4, 7, A_NORMAL, "mean %s  std %s  max %s  in %llu steps%s", a, b, c,
                  (unsigned long long)mn->steps_seen, scope);
    } else {
        ui_print(r, y + 4, 7, A_NORMAL, "not seen in a sampled step");
    }
    ui_print(r, y + 5, 1, lab, "GPU");
    if (mn && mn->bytes > 0 && !(mn->gpu_ns || mn->gpu_launches)) {
        /* work counters instead (CPU work, or GPU work without CUPTI) */
        ui_print(r, y + 5, 1, lab, "Work");
        ui_printf(r, y + 5, 7, A_NORMAL, "%.3g GFLOP over %.3g GB: %.2f FLOP/byte (ridge %g)%s",
                  mn->flops / 1e9, mn->bytes / 1e9, mn->flops / mn->bytes,
                  prism_analysis_work(u->a)->ridge, scope);
    } else if (mn && (mn->gpu_ns || mn->gpu_launches)) {
        fmt_ns(a, sizeof a, (double)mn->gpu_ns);
        tv_fmt_count(b, sizeof b, mn->gpu_launches);
        if (mn->bytes > 0)
            ui_printf(r, y + 5, 7, A_NORMAL, "%s of GPU work from %s launches; %.2f FLOP/byte%s",
                      a, b, mn->flops / mn->bytes, scope);
        else
            ui_printf(r, y + 5, 7, A_NORMAL, "%s of GPU work from %s launches%s", a, b, scope);
    } else {
        ui_print(r, y + 5, 7, A_NORMAL,
                 prism_analysis_gpu(u->a)->present ? "no GPU work launched here" : "no GPU data");
    }
    if (details_rows(u) > DETAILS_ROWS) {       /* the file has regions not recorded */
        ui_print(r, y + 6, 1, lab, "Lost");
        if (nd->unrecorded)
            ui_printf(r, y + 6, 7, ui_attr(u, CP_MEDIUM, A_NORMAL),
                      "%llu regions not recorded under this node (buffers full: dropped whole)",
                      (unsigned long long)nd->unrecorded);
        else
            ui_print(r, y + 6, 7, A_NORMAL, "none known under this node");
    }
}

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
    s->last_h = h;
    int barw = w < 90 ? 8 : w / 5 > 40 ? 40 : w / 5;
    const int fixed[C_N] = { 0, 9, DELTA_W, 9, 7, 5, 4, barw };
    int cw[C_N] = { 0 }, id[C_N], fx[C_N], out[C_N], nf = 0;
    bool cpu = prism_analysis_cpu_present(u->a);
    for (int c = 0; c < C_N; c++)       /* delta: compare only; cpu%: with CPU samples */
        if ((c != C_DELTA || u->cmp) && (c != C_CPU || cpu)) {
            id[nf] = c;
            fx[nf++] = fixed[c];
        }
    int shown = ui_columns(w, fx, nf, 16, out);
    for (int i = 0; i < shown; i++)
        cw[id[i]] = out[i];
    if (!shown)
        cw[C_NAME] = w;
    header(u, s, &r, cw);
    if (!s->tv.nrows) {
        const char *why = s->tv.oom ? "out of memory"
                          : s->tv.keep ? "no changed regions (D: show all)"
                          : s->view >= 0 ? "no regions recorded on this thread (t: next)"
                                         : "no regions recorded";
        ui_print(&r, 2, 2, A_NORMAL, why);
        return;
    }
    bool show = h >= DETAILS_AUTO_H ? !s->details_hidden : s->details_small;
    int want = details_rows(u) + (u->cmp ? 1 : 0);
    int det = show && h - 1 - want >= 1 ? want : 0;
    int list = h - 1 - det;
    if (list < 0)
        list = 0;
    s->page = list;
    if (s->sel >= s->tv.nrows)
        s->sel = s->tv.nrows - 1;
    if (s->top > s->sel)                        /* keep the selection in view */
        s->top = s->sel;
    if (list > 0 && s->sel >= s->top + (size_t)list)
        s->top = s->sel - (size_t)list + 1;
    if (s->top + (size_t)list > s->tv.nrows)    /* no empty space at the end */
        s->top = s->tv.nrows > (size_t)list ? s->tv.nrows - (size_t)list : 0;
    for (int i = 0; i < list && s->top + (size_t)i < s->tv.nrows; i++)
        row(u, s, &r, 1 + i, s->top + (size_t)i, cw);
    if (det)
        details(u, s, &r, 1 + list);
    if (det && u->cmp) {
        uint32_t n = sel_node(s);
        cmpv_diff_line(u, &r, 1 + list + details_rows(u),
                       s->absent || n == PRISM_NO_NODE || s->tv.nodes[n].path_hash != u->sel_hash);
    }
}

const ui_pane pane_tree = {
    .name = "Tree",
    .hint = "Enter:fold e/c/+/-:levels s:sort t:thread d:details n/N:match",
    .init = init,
    .draw = draw,
    .reload = reload,
    .free = free_st,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
};
