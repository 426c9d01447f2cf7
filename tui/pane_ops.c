/*
 * pane_ops.c - the Ops pane: the flat operations list (every node of a
 * name, all threads) as horizontal timing bars by total or self time, or
 * by calls.  Enter shows the operation's heaviest call path in the Tree.
 *
 * The order is rebuilt only when the sort or the analysis changes.  The
 * selection follows u->sel_hash (the operation of the selected node) and,
 * when moved here, sets it to the operation's heaviest path.
 *
 * Compare mode (u->cmp): a delta column, the operation's total against
 * the other profile's operation of the same name (delta.c's dl_ops:
 * significant when a path of that name changed significantly), the change
 * of its share in points (a sort key too: what grew or shrank as a part of
 * the run, whatever the run's own change), and with u->diff_only the
 * changed operations only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compare_view.h"
#include "delta.h"
#include "treeview.h"
#include "ui.h"

enum { BY_TOTAL, BY_SELF, BY_CALLS, BY_DSHARE, BY_COUNT };   /* BY_DSHARE: compare only */
static const char *const by_name[BY_COUNT] = { "total", "self", "calls", "share change" };

typedef struct ops_st {
    int by;
    const prism_op *ops;        /* snapshot of the analysis' list            */
    size_t nall;                /* its length                                */
    size_t nops;                /* rows: operations in order (diff-only: fewer) */
    uint32_t *order;            /* indices into ops, in the sort order       */
    prism_delta *dl;            /* compare mode: per operation, else NULL    */
    bool diff_only;             /* as applied to order                       */
    size_t sel, top;
    int page, namew;            /* list rows and widest name at the last draw */
    uint64_t seen_hash;         /* u->sel_hash last followed                 */
    bool followed;
} ops_st;

static uint64_t metric(const prism_op *op, int by)
{
    return by == BY_SELF ? op->self_ns : by == BY_CALLS ? op->calls : op->total_ns;
}

static int cmp_ops(const void *pa, const void *pb, void *ctx)
{
    const ops_st *s = ctx;
    const prism_op *a = &s->ops[*(const uint32_t *)pa], *b = &s->ops[*(const uint32_t *)pb];
    if (s->by == BY_DSHARE && s->dl) {          /* largest change of share first */
        double da = fabs(s->dl[*(const uint32_t *)pa].share_delta);
        double db = fabs(s->dl[*(const uint32_t *)pb].share_delta);
        if (da != db)
            return da < db ? 1 : -1;
    }
    uint64_t x = metric(a, s->by), y = metric(b, s->by);
    if (x != y)
        return x < y ? 1 : -1;
    if (a->total_ns != b->total_ns)
        return a->total_ns < b->total_ns ? 1 : -1;
    return strcmp(a->name, b->name);
}

static const char *sel_name(const ops_st *s)
{
    return s->sel < s->nops && s->order ? s->ops[s->order[s->sel]].name : NULL;
}

static size_t find_name(const ops_st *s, const char *name)
{
    for (size_t i = 0; name && i < s->nops; i++)
        if (!strcmp(s->ops[s->order[i]].name, name))
            return i;
    return TV_NONE;
}

/* Sort again, keeping the selected operation by name. */
static void reorder(ops_st *s, const char *keep)
{
    char name[256] = "";
    if (keep)
        snprintf(name, sizeof name, "%s", keep);
    s->nops = 0;
    for (size_t i = 0; i < s->nall; i++)
        if (!s->diff_only || !s->dl || dl_changed(&s->dl[i]))
            s->order[s->nops++] = (uint32_t)i;
    if (s->nops > 1)
        qsort_r(s->order, s->nops, sizeof *s->order, cmp_ops, s);
    size_t at = find_name(s, name[0] ? name : NULL);
    s->sel = at != TV_NONE ? at : 0;
    s->namew = 4;
    for (size_t i = 0; i < s->nall; i++) {
        int w = ui_width(s->ops[i].name);
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

static void sync(ui *u, ops_st *s)
{
    size_t n;
    const prism_op *ops = prism_analysis_ops(u->a, &n);
    bool diff_only = u->cmp && u->diff_only;
    if (ops != s->ops || n != s->nall || diff_only != s->diff_only) {
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
        reorder(s, keep);
    }
    if (!s->followed || s->seen_hash != u->sel_hash) {   /* follow the shared selection */
        s->followed = true;
        s->seen_hash = u->sel_hash;
        uint32_t node = prism_analysis_find(u->a, u->sel_hash);
        const prism_tree *t = prism_analysis_tree(u->a);
        if (node != PRISM_NO_NODE && node < t->count) {
            size_t at = find_name(s, t->nodes[node].name);
            if (at != TV_NONE)
                s->sel = at;
        }
    }
}

static void *init(ui *u)
{
    ops_st *s = calloc(1, sizeof *s);
    if (s)
        sync(u, s);
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
    sync(u, s);
}

static void free_st(void *st)
{
    ops_st *s = st;
    if (s) {
        free(s->order);
        free(s->dl);
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
    bool ok;
    uint64_t h = heaviest_hash(u, &s->ops[s->order[s->sel]], &ok);
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
    sync(u, s);
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
    (void)key;
    if (!s)
        return UI_NONE;
    sync(u, s);
    s->by = (s->by + 1) % BY_COUNT;
    if (s->by == BY_DSHARE && !s->dl)           /* share change: compare mode only */
        s->by = BY_TOTAL;
    reorder(s, sel_name(s));
    ui_message(u, "sorted by %s", by_name[s->by]);
    return UI_REDRAW;
}

static int k_enter(ui *u, void *st, int key)
{
    ops_st *s = st;
    (void)key;
    if (!s)
        return UI_NONE;
    sync(u, s);
    if (!s->nops)
        return UI_NONE;
    bool ok;
    uint64_t h = heaviest_hash(u, &s->ops[s->order[s->sel]], &ok);
    if (!ok)
        return UI_NONE;
    ui_select(u, h);
    s->seen_hash = h;
    u->jump_pane = 1;           /* the Tree */
    return UI_REDRAW;
}

static int k_search(ui *u, void *st, int key)
{
    ops_st *s = st;
    if (!s)
        return UI_NONE;
    if (!u->search[0]) {
        ui_message(u, "no search: press / first");
        return UI_REDRAW;
    }
    sync(u, s);
    for (size_t i = 1; i <= s->nops; i++) {
        size_t at = key == 'N' ? (s->sel + s->nops - i) % s->nops : (s->sel + i) % s->nops;
        if (ui_matches(u, s->ops[s->order[at]].name)) {
            select_op(u, s, at);
            return UI_REDRAW;
        }
    }
    ui_message(u, "no match for '%s'", u->search);
    return UI_REDRAW;
}

static const ui_key keys[] = {
    { 'j', "j", k_move, "select the next operation" },
    { KEY_DOWN, "Down", k_move, "select the next operation" },
    { 'k', "k", k_move, "select the previous operation" },
    { KEY_UP, "Up", k_move, "select the previous operation" },
    { KEY_NPAGE, "PgDn", k_move, "page down" },
    { KEY_PPAGE, "PgUp", k_move, "page up" },
    { KEY_HOME, "Home", k_move, "first operation" }, { 'g', "g", k_move, "first operation" },
    { KEY_END, "End", k_move, "last operation" }, { 'G', "G", k_move, "last operation" },
    { 's', "s", k_sort, "sort by total / self / calls (/ share change when comparing)" },
    { '\r', "Enter", k_enter, "show its heaviest call path in the Tree" },
    { KEY_ENTER, "KpEnter", k_enter, "show its heaviest call path in the Tree" },
    { 'n', "n", k_search, "next match of the search (/)" },
    { 'N', "N", k_search, "previous match of the search" },
};

/* ---- drawing ----------------------------------------------------------------- */

/* the change of share right after the delta: in compare mode the columns
 * that drop first on a narrow side are calls and tot% */
enum { C_NAME, C_BAR, C_TOTAL, C_DELTA, C_DSHARE, C_SELF, C_CALLS, C_SHARE, C_N };
#define DELTA_W 15
#define DSHARE_W 7

static void draw_header(ui *u, ops_st *s, const ui_rect *r, const int *cw)
{
    static const char *const titles[C_N] = { "", "", "total", "vs base", "d.share", "self",
                                             "calls", "" };
    attr_t at = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    int sorted = s->by == BY_SELF ? C_SELF : s->by == BY_CALLS ? C_CALLS
               : s->by == BY_DSHARE ? C_DSHARE : C_TOTAL;
    char label[3][96], buf[96];
    size_t pos = s->nops ? s->sel + 1 : 0;
    snprintf(label[0], sizeof label[0], "operation%sby %s  %zu/%zu", u->utf8 ? " \u00b7 " : " - ",
             by_name[s->by], pos, s->nops);
    snprintf(label[1], sizeof label[1], "by %s  %zu/%zu", by_name[s->by], pos, s->nops);
    snprintf(label[2], sizeof label[2], "by %s", by_name[s->by]);
    int pick = 0;                       /* the longest that fits */
    while (pick < 2 && ui_width(label[pick]) > cw[C_NAME] - 1)
        pick++;
    int x = 0;
    for (int c = 0; c < C_N; c++) {
        if (!cw[c])
            continue;
        attr_t a = at | (c == sorted ? A_UNDERLINE : 0);
        if (c == C_NAME) {
            tv_fit(buf, sizeof buf, label[pick], cw[c] - 1, u->utf8);
            ui_print(r, 0, x + 1, a, buf);
        } else if (c == C_SHARE) {
            ui_printf(r, 0, x, a, "%*s", cw[c], s->by == BY_SELF ? "self%" : "tot%");
        } else if (titles[c][0]) {
            ui_printf(r, 0, x, a, "%*s", cw[c], titles[c]);
        }
        x += cw[c] + 1;
    }
}

static void draw_row(ui *u, ops_st *s, const ui_rect *r, int y, size_t i, const int *cw,
                     uint64_t top_metric)
{
    const prism_op *op = &s->ops[s->order[i]];
    bool sel = i == s->sel, hit = ui_matches(u, op->name);
    attr_t base = sel ? ui_attr(u, CP_SEL, A_REVERSE) | (u->color ? 0 : A_BOLD) : A_NORMAL;
    attr_t name_at = base;
    if (hit)
        name_at = sel || !u->color ? base | A_BOLD | A_UNDERLINE : ui_attr(u, CP_HIGH, A_BOLD) | A_BOLD;
    if (sel)
        ui_fill(r, y, base);
    const prism_tree *t = prism_analysis_tree(u->a);
    char buf[512];
    int x = 0;
    for (int c = 0; c < C_N; c++) {
        int w = cw[c];
        if (!w)
            continue;
        switch (c) {
        case C_NAME:
            tv_fit(buf, sizeof buf, op->name, w - 1, u->utf8);
            ui_print(r, y, x + 1, name_at, buf);
            break;
        case C_BAR:
            ui_bar(buf, sizeof buf, top_metric ? (double)metric(op, s->by) / (double)top_metric : 0,
                   w, u->utf8);
            ui_print(r, y, x, sel ? base : ui_attr(u, CP_BAR, A_NORMAL), buf);
            break;
        case C_TOTAL: case C_SELF:
            fmt_ns(buf, sizeof buf, (double)(c == C_TOTAL ? op->total_ns : op->self_ns));
            ui_printf(r, y, x, base, "%*s", w, buf);
            break;
        case C_CALLS:
            tv_fmt_count(buf, sizeof buf, op->calls);
            ui_printf(r, y, x, base, "%*s", w, buf);
            break;
        case C_DELTA:
            if (s->dl)
                cmpv_delta_cell(u, r, y, x, w, &s->dl[s->order[i]], base, sel);
            break;
        case C_DSHARE:
            if (s->dl) {
                dl_fmt_pp(buf, sizeof buf, s->dl[s->order[i]].share_delta);
                ui_printf(r, y, x, base, "%*s", w, buf);
            }
            break;
        case C_SHARE: {
            double sh = s->by == BY_SELF ? (t->total_ns ? (double)op->self_ns / (double)t->total_ns : 0)
                                         : op->share;
            ui_printf(r, y, x, base, "%*.1f", w, sh * 100.0);
            break;
        }
        }
        x += w + 1;
    }
}

/* The selected operation's heaviest call path. */
static void draw_footer(ui *u, ops_st *s, const ui_rect *r, int y)
{
    const prism_op *op = &s->ops[s->order[s->sel]];
    const prism_tree *t = prism_analysis_tree(u->a);
    const char *parts[64];
    int k = 0;
    for (uint32_t q = op->node; q < t->count && k < 64; q = t->nodes[q].parent)
        parts[k++] = t->nodes[q].name;
    char path[512] = "", fit[512];
    size_t o = 0;
    while (k-- > 0 && o + 2 < sizeof path) {
        int m = snprintf(path + o, sizeof path - o, "%s%s", o ? "/" : "", parts[k]);
        if (m < 0)
            break;
        o += (size_t)m < sizeof path - o ? (size_t)m : sizeof path - o - 1;
    }
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    int c = ui_print(r, y, 1, lab, "heaviest ");
    bool hint = r->w >= 70;
    tv_fit_left(fit, sizeof fit, path, r->w - c - 2 - (hint ? 21 : 0), u->utf8);
    c += ui_print(r, y, 1 + c, A_NORMAL, fit);
    if (hint)
        ui_print(r, y, 2 + c, ui_attr(u, CP_DIM, A_NORMAL), "(Enter: in the Tree)");
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
    sync(u, s);
    int namew = s->namew + 2;
    if (namew > w * 2 / 5)
        namew = w * 2 / 5;
    if (namew < 12)
        namew = 12;
    const int fixed[C_N] = { namew, 0, 9, DELTA_W, DSHARE_W, 9, 7, 5 };
    int cw[C_N] = { 0 }, id[C_N], fx[C_N], out[C_N], nf = 0;
    for (int c = 0; c < C_N; c++)       /* the delta columns in compare mode only */
        if ((c != C_DELTA && c != C_DSHARE) || u->cmp) {
            id[nf] = c;
            fx[nf++] = fixed[c];
        }
    int shown = ui_columns(w, fx, nf, 8, out);
    for (int i = 0; i < shown; i++)
        cw[id[i]] = out[i];
    if (!shown)
        cw[C_NAME] = w;
    draw_header(u, s, &r, cw);
    if (!s->nops) {
        ui_print(&r, 2, 2, A_NORMAL, s->nall ? "no changed operations (D: show all)"
                                             : "no regions recorded");
        return;
    }
    int foot = h >= 8 ? 2 : 0, list = h - 1 - foot;
    if (list < 0)
        list = 0;
    s->page = list;
    if (s->sel >= s->nops)
        s->sel = s->nops - 1;
    if (s->top > s->sel)
        s->top = s->sel;
    if (list > 0 && s->sel >= s->top + (size_t)list)
        s->top = s->sel - (size_t)list + 1;
    if (s->top + (size_t)list > s->nops)
        s->top = s->nops > (size_t)list ? s->nops - (size_t)list : 0;
    uint64_t top_metric = metric(&s->ops[s->order[0]], s->by);   /* bars: of the largest */
    for (size_t i = 1; s->by == BY_DSHARE && i < s->nops; i++)  /* not sorted by it */
        if (metric(&s->ops[s->order[i]], s->by) > top_metric)
            top_metric = metric(&s->ops[s->order[i]], s->by);
    for (int i = 0; i < list && s->top + (size_t)i < s->nops; i++)
        draw_row(u, s, &r, 1 + i, s->top + (size_t)i, cw, top_metric);
    if (foot)
        draw_footer(u, s, &r, h - 1);
}

const ui_pane pane_ops = {
    .name = "Ops",
    .hint = "s:sort Enter:show in Tree n/N:match",
    .init = init,
    .draw = draw,
    .reload = reload,
    .free = free_st,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
};
