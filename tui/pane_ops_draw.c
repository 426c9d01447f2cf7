/*
 * pane_ops_draw.c - the Ops pane's list: a header (the filter when one is
 * set, the sort and its direction), one row per operation (name elided in
 * the middle, a bar, figures right-aligned by display columns) and the
 * selected operation's heaviest path.  Columns drop by priority when the
 * pane is narrow: calls and share go before total; a wide pane gets mean
 * per call and, past a bar of BAR_MAX columns, each operation's heaviest
 * path.
 */
#include <stdio.h>
#include <string.h>

#include "compare_view.h"
#include "namefit.h"
#include "pane_ops.h"
#include "treeview.h"

/* the change of share right after the delta: in compare mode the columns
 * that drop first on a narrow side are calls and tot% */
enum { C_NAME, C_BAR, C_TOTAL, C_DELTA, C_DSHARE, C_SELF, C_CALLS, C_SHARE, C_MEAN, C_PATH, C_N };
#define DELTA_W 15
#define DSHARE_W 7
#define MEAN_MIN_COLS 110       /* mean per call only on panes this wide */
#define BAR_MAX 50

static void draw_header(ui *u, ops_st *s, const ui_rect *r, int y, const int *cw)
{
    static const char *const titles[C_N] = { "", "", "total", "vs base", "d.share", "self",
                                             "calls", "", "mean", "" };
    attr_t at = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    int sorted = s->by == BY_SELF ? C_SELF : s->by == BY_CALLS ? C_CALLS
               : s->by == BY_DSHARE ? C_DSHARE : C_TOTAL;
    char label[4][96], buf[96];
    size_t pos = s->nops ? s->sel + 1 : 0;
    const char *dir = ops_direction(u, s);
    snprintf(label[0], sizeof label[0], "operation%sby %s %s  %zu/%zu", u->utf8 ? " \u00b7 " : " - ",
             ops_by_name[s->by], dir, pos, s->nops);
    snprintf(label[1], sizeof label[1], "by %s %s  %zu/%zu", ops_by_name[s->by], dir, pos, s->nops);
    snprintf(label[2], sizeof label[2], "by %s %s", ops_by_name[s->by], dir);
    snprintf(label[3], sizeof label[3], "by %s", ops_by_name[s->by]);
    int pick = 0, last = s->rev ? 2 : 3;    /* the longest that fits; the */
    while (pick < last && ui_width(label[pick]) > cw[C_NAME] - 1)   /* direction */
        pick++;                             /* goes only when it is the usual one */
    int x = 0;
    for (int c = 0; c < C_N; c++) {
        if (!cw[c])
            continue;
        attr_t a = at | (c == sorted ? A_UNDERLINE : 0);
        if (c == C_NAME) {
            tv_fit(buf, sizeof buf, label[pick], cw[c] - 1, u->utf8);
            ui_print(r, y, x + 1, a, buf);
        } else if (c == C_PATH) {
            ui_print(r, y, x + 1, a, "heaviest path");
        } else if (c == C_SHARE) {
            ui_printf(r, y, x, a, "%*s", cw[c], s->by == BY_SELF ? "self%" : "tot%");
        } else if (titles[c][0]) {
            ui_printf(r, y, x, a, "%*s", cw[c], titles[c]);
        }
        x += cw[c] + 1;
    }
}

/* A duration right-aligned in w columns ("µs" is two bytes, one column). */
static void put_ns(const ui_rect *r, int y, int x, int w, attr_t at, double ns)
{
    char f[32], pad[64];
    fmt_ns(f, sizeof f, ns);
    fmt_rpad(pad, sizeof pad, f, w);
    ui_print(r, y, x, at, pad);
}

static void draw_row(ui *u, ops_st *s, const ui_rect *r, int y, size_t i, const int *cw,
                     uint64_t top_metric, size_t shared)
{
    const prism_op *op = ops_at(s, i);
    const char *name = ops_name_at(s, i);
    bool sel = i == s->sel, hit = ui_matches(u, name);
    attr_t base = sel ? ui_attr(u, CP_SEL, A_REVERSE) | (u->color ? 0 : A_BOLD) : A_NORMAL;
    attr_t name_at = base;
    if (hit)
        name_at = sel || !u->color ? base | A_BOLD | A_UNDERLINE : ui_attr(u, CP_HIGH, A_BOLD) | A_BOLD;
    else if (!sel && prism_analysis_is_op(u->a, name))
        name_at = ui_attr(u, CP_DIM, A_DIM);            /* the operator window's steps only */
    if (sel)
        ui_fill(r, y, base);
    if (!op) {                          /* compare: only the other side has it */
        attr_t dim = sel ? base : ui_attr(u, CP_DIM, A_DIM);
        char fit[512];
        nf_fit(fit, sizeof fit, name, shared, cw[C_NAME] - 1, u->utf8);
        ui_print(r, y, 1, hit ? name_at : dim, fit);
        ui_print(r, y, cw[C_NAME] + 1, dim, u->side == 0 ? "(absent: new in the other profile)"
                                                         : "(absent: gone, in the base only)");
        return;
    }
    const prism_tree *t = prism_analysis_tree(u->a);
    char buf[512], pad[64];
    int x = 0;
    for (int c = 0; c < C_N; c++) {
        int w = cw[c];
        if (!w)
            continue;
        switch (c) {
        case C_NAME:
            nf_fit(buf, sizeof buf, op->name, shared, w - 1, u->utf8);
            ui_print(r, y, x + 1, name_at, buf);
            break;
        case C_BAR:
            ui_bar(buf, sizeof buf, top_metric ? (double)ops_metric(op, s->by) / (double)top_metric : 0,
                   w, u->utf8);
            ui_print(r, y, x, sel ? base : ui_attr(u, CP_BAR, A_NORMAL), buf);
            break;
        case C_TOTAL: case C_SELF:
            put_ns(r, y, x, w, base, (double)(c == C_TOTAL ? op->total_ns : op->self_ns));
            break;
        case C_MEAN:
            put_ns(r, y, x, w, base, op->calls ? (double)op->total_ns / (double)op->calls : 0);
            break;
        case C_CALLS:
            fmt_count(buf, sizeof buf, (double)op->calls);
            fmt_rpad(pad, sizeof pad, buf, w);
            ui_print(r, y, x, base, pad);
            break;
        case C_PATH: {
            char path[1024];
            callers_path(path, sizeof path, t, op->node);
            tv_fit_mid(buf, sizeof buf, path, w - 1, u->utf8);
            ui_print(r, y, x + 1, sel ? base : ui_attr(u, CP_DIM, A_NORMAL), buf);
            break;
        }
        case C_DELTA:
            if (s->dl)
                cmpv_delta_cell(u, r, y, x, w, &s->dl[s->order[i]], base, sel);
            break;
        case C_DSHARE:
            if (s->dl) {
                dl_fmt_pp(buf, sizeof buf, s->dl[s->order[i]].share_delta);
                fmt_rpad(pad, sizeof pad, buf, w);
                ui_print(r, y, x, base, pad);
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
    const prism_op *op = ops_at(s, s->sel);
    const prism_tree *t = prism_analysis_tree(u->a);
    char path[1024], fit[1024];
    if (!op) {
        ui_print(r, y, 1, ui_attr(u, CP_DIM, A_NORMAL), "not in this profile");
        return;
    }
    callers_path(path, sizeof path, t, op->node);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    int c = ui_print(r, y, 1, lab, "heaviest ");
    bool hint = r->w >= 70;
    tv_fit_mid(fit, sizeof fit, path, r->w - c - 2 - (hint ? 28 : 0), u->utf8);
    c += ui_print(r, y, 1 + c, A_NORMAL, fit);
    if (hint)
        ui_print(r, y, 2 + c, ui_attr(u, CP_DIM, A_NORMAL), "(Enter: Tree  c: callers)");
}

/* The filter line: "filter: X, N of M ops". */
static void draw_filter(ui *u, ops_st *s, const ui_rect *r, int y)
{
    char pat[64], line[160], fit[256];
    tv_fit_mid(pat, sizeof pat, u->filter, 24, u->utf8);
    snprintf(line, sizeof line, "filter: %s, %zu of %zu ops", pat, s->nops, s->nall);
    tv_fit(fit, sizeof fit, line, r->w - 2, u->utf8);
    ui_print(r, y, 1, ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD, fit);
}

enum { SHOWN_MAX = 512 };

/* The names of the operations on screen from the top and the start of
 * each that its cell may fold (namefit.h); returns how many. */
static size_t shown_names(const ops_st *s, size_t list, const char **names, size_t *shared)
{
    size_t n = 0;
    for (; n < list && n < SHOWN_MAX && s->top + n < s->nops; n++)
        names[n] = ops_name_at(s, s->top + n);
    nf_shared(names, n, shared);
    return n;
}

int ops_side_cols(const ops_st *s)
{
    const char *names[SHOWN_MAX];
    size_t shared[SHOWN_MAX];
    size_t n = shown_names(s, s->page > 0 ? (size_t)s->page : 1, names, shared);
    int need = 12;
    for (size_t i = 0; i < n; i++) {
        int w = nf_need(names[i], shared[i]) + 2;
        need = w > need ? w : need;
    }
    return need + 1 + 9 + 1 + DELTA_W;
}

void ops_draw_list(ui *u, ops_st *s, const ui_rect *r)
{
    int h = r->h, w = r->w;
    int namew = s->namew + 2;           /* names before the bar, to half */
    if (namew > w / 2)
        namew = w / 2;
    if (namew < 12)
        namew = 12;
    const int fixed[C_N] = { namew, 0, 9, DELTA_W, DSHARE_W, 9, 7, 5, 9, 0 };
    int cw[C_N] = { 0 }, id[C_N], fx[C_N], out[C_N], nf = 0;
    for (int c = 0; c < C_N; c++)       /* the delta columns in compare mode only */
        if (((c != C_DELTA && c != C_DSHARE) || (u->cmp && u->side == 1)) &&
            (c != C_MEAN || w >= MEAN_MIN_COLS) &&
            c != C_PATH) {
            id[nf] = c;
            fx[nf++] = fixed[c];
        }
    int shown = ui_columns(w, fx, nf, 8, out);
    bool lost = false;                  /* a figure dropped for the bar? */
    for (int i = shown; i < nf; i++)
        lost |= id[i] == C_TOTAL || id[i] == C_DELTA;
    if (lost && shown > 1 && id[1] == C_BAR) {  /* figures before the bar */
        memmove(id + 1, id + 2, (size_t)(nf - 2) * sizeof *id);
        memmove(fx + 1, fx + 2, (size_t)(nf - 2) * sizeof *fx);
        shown = ui_columns(w, fx, --nf, 8, out);
    }
    for (int i = 0; i < shown; i++)
        cw[id[i]] = out[i];
    if (!shown)
        cw[C_NAME] = w;
    if (cw[C_BAR] > BAR_MAX + 25) {     /* a wide pane: each one's heaviest path */
        cw[C_PATH] = cw[C_BAR] - BAR_MAX - 1;
        cw[C_BAR] = BAR_MAX;
    }
    int hy = u->filter[0] && h >= 4 ? 1 : 0;    /* the filter line above the header */
    if (hy)
        draw_filter(u, s, r, 0);
    draw_header(u, s, r, hy, cw);
    s->list_y = hy + 1;
    s->list_n = 0;
    if (!s->nops) {
        const char *why = u->filter[0] && s->nall ? "no operation passes the filter (\\: change it)"
                        : s->nall ? "no changed operations (D: show all)" : "no regions recorded";
        ui_print(r, hy + 2, 2, A_NORMAL, why);
        return;
    }
    int foot = h >= 8 ? 2 : 0, list = h - 1 - hy - foot;
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
    uint64_t top_metric = 0;            /* bars: of the largest shown */
    for (size_t i = 0; i < s->nops; i++)
        if (ops_at(s, i) && ops_metric(ops_at(s, i), s->by) > top_metric)
            top_metric = ops_metric(ops_at(s, i), s->by);
    const char *names[SHOWN_MAX];
    size_t shared[SHOWN_MAX], nshown = shown_names(s, (size_t)list, names, shared);
    for (int i = 0; i < list && s->top + (size_t)i < s->nops; i++) {
        draw_row(u, s, r, s->list_y + i, s->top + (size_t)i, cw, top_metric,
                 (size_t)i < nshown ? shared[i] : 0);
        s->list_n = i + 1;
    }
    if (foot)
        draw_footer(u, s, r, h - 1);
}
