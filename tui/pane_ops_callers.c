/*
 * pane_ops_callers.c - the Ops pane's callers view: for the selected
 * operation, every call path that ends in it (all threads), heaviest
 * first, with its total, calls and share of the operation's total (and on
 * a wide pane the mean per call).  Paths print "a/b/c", elided in the
 * middle to fit.  Enter shows the path in the Tree (ui_jump: Esc there
 * comes back); c or Esc return to the operations.
 */
#include <stdio.h>
#include <string.h>

#include "pane_ops.h"
#include "treeview.h"

enum { K_PATH, K_TOTAL, K_CALLS, K_SHARE, K_MEAN, K_N };
#define MEAN_MIN_COLS 110

int ops_callers_open(ui *u, ops_st *s)
{
    if (!s->nops)
        return UI_NONE;
    const prism_op *op = ops_at(s, s->sel);
    if (!op) {
        ui_message(u, "not in this profile");
        return UI_REDRAW;
    }
    if (callers_build(&s->cv, u->a, op->name) != 0) {
        ui_message(u, "out of memory");
        return UI_REDRAW;
    }
    s->callers_on = true;
    size_t at = callers_find(&s->cv, u->sel_hash);
    s->csel = at != (size_t)-1 ? at : 0;
    s->ctop = 0;
    return UI_REDRAW;
}

void ops_callers_close(ops_st *s)
{
    s->callers_on = false;
    callers_free(&s->cv);
}

int ops_callers_move(ui *u, ops_st *s, int key)
{
    (void)u;
    if (!s->cv.n)
        return UI_NONE;
    size_t page = s->cpage > 1 ? (size_t)s->cpage - 1 : 1;
    s->csel = ui_list_move(key, s->csel, s->cv.n, page);
    return UI_REDRAW;
}

int ops_callers_enter(ui *u, ops_st *s)
{
    if (s->csel >= s->cv.n)
        return UI_NONE;
    uint64_t h = s->cv.rows[s->csel].path_hash;
    if (prism_analysis_find(u->a, h) == PRISM_NO_NODE)
        return UI_NONE;
    s->seen_hash = h;
    ui_jump(u, PANE_TREE, h);
    return UI_REDRAW;
}

size_t ops_callers_row_at(const ops_st *s, int row)
{
    if (row < s->clist_y || row >= s->clist_y + s->clist_n)
        return (size_t)-1;
    size_t at = s->ctop + (size_t)(row - s->clist_y);
    return at < s->cv.n ? at : (size_t)-1;
}

static void put_right(const ui_rect *r, int y, int x, int w, attr_t at, const char *s)
{
    char pad[96];
    fmt_rpad(pad, sizeof pad, s, w);
    ui_print(r, y, x, at, pad);
}

static void draw_title(ui *u, ops_st *s, const ui_rect *r)
{
    char name[256], line[400], fit[512];
    tv_fit_mid(name, sizeof name, s->cv.name, r->w / 2 > 12 ? r->w / 2 : 12, u->utf8);
    snprintf(line, sizeof line, "callers of %s: %zu path%s", name, s->cv.n, s->cv.n == 1 ? "" : "s");
    int c = 1 + ui_print(r, 0, 1, ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD,
                         (tv_fit(fit, sizeof fit, line, r->w - 2, u->utf8), fit));
    if (c + 28 < r->w)
        ui_print(r, 0, c + 2, ui_attr(u, CP_DIM, A_NORMAL), "(Enter: Tree  c/Esc: back)");
}

static void draw_row(ui *u, ops_st *s, const ui_rect *r, int y, size_t i, const int *cw)
{
    const callers_row *row = &s->cv.rows[i];
    const prism_tree *t = prism_analysis_tree(u->a);
    bool sel = i == s->csel;
    attr_t at = sel ? ui_attr(u, CP_SEL, A_REVERSE) | (u->color ? 0 : A_BOLD) : A_NORMAL;
    if (sel)
        ui_fill(r, y, at);
    char path[1024], buf[1024];
    int x = 0;
    for (int c = 0; c < K_N; c++) {
        int w = cw[c];
        if (!w)
            continue;
        switch (c) {
        case K_PATH:
            callers_path(path, sizeof path, t, row->node);
            tv_fit_mid(buf, sizeof buf, path, w - 1, u->utf8);
            ui_print(r, y, x + 1, at, buf);
            break;
        case K_TOTAL:
            fmt_ns(buf, sizeof buf, (double)row->total_ns);
            put_right(r, y, x, w, at, buf);
            break;
        case K_MEAN:
            fmt_ns(buf, sizeof buf, row->calls ? (double)row->total_ns / (double)row->calls : 0);
            put_right(r, y, x, w, at, buf);
            break;
        case K_CALLS:
            fmt_count(buf, sizeof buf, (double)row->calls);
            put_right(r, y, x, w, at, buf);
            break;
        case K_SHARE:
            ui_printf(r, y, x, at, "%*.1f", w, row->share * 100.0);
            break;
        }
        x += w + 1;
    }
}

void ops_callers_draw(ui *u, ops_st *s, const ui_rect *r)
{
    draw_title(u, s, r);
    s->clist_y = 2;
    s->clist_n = 0;
    if (!s->cv.n) {
        ui_print(r, 2, 2, A_NORMAL, "no call path of this name (c: back)");
        return;
    }
    const int fixed[K_N] = { 0, 9, 7, 6, 9 };
    int cw[K_N] = { 0 }, out[K_N];
    int n = r->w >= MEAN_MIN_COLS ? K_N : K_MEAN;
    int shown = ui_columns(r->w, fixed, n, 12, out);
    for (int i = 0; i < shown; i++)
        cw[i] = out[i];
    if (!shown)
        cw[K_PATH] = r->w;
    static const char *const titles[K_N] = { "call path", "total", "calls", "share", "mean" };
    attr_t hat = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    int x = 0;
    for (int c = 0; c < K_N; c++) {
        if (!cw[c])
            continue;
        if (c == K_PATH)
            ui_print(r, 1, 1, hat | A_UNDERLINE, titles[c]);
        else
            ui_printf(r, 1, x, hat | (c == K_TOTAL ? A_UNDERLINE : 0), "%*s", cw[c], titles[c]);
        x += cw[c] + 1;
    }
    int foot = r->h >= 8 ? 2 : 0, list = r->h - 2 - foot;
    if (list < 0)
        list = 0;
    s->cpage = list;
    if (s->csel >= s->cv.n)
        s->csel = s->cv.n - 1;
    if (s->ctop > s->csel)
        s->ctop = s->csel;
    if (list > 0 && s->csel >= s->ctop + (size_t)list)
        s->ctop = s->csel - (size_t)list + 1;
    for (int i = 0; i < list && s->ctop + (size_t)i < s->cv.n; i++) {
        draw_row(u, s, r, 2 + i, s->ctop + (size_t)i, cw);
        s->clist_n = i + 1;
    }
    if (foot) {                         /* the selected path in full, as far as it fits */
        char path[1024], fit[1024];
        callers_path(path, sizeof path, prism_analysis_tree(u->a), s->cv.rows[s->csel].node);
        int c = ui_print(r, r->h - 1, 1, hat, "path ");
        tv_fit_mid(fit, sizeof fit, path, r->w - c - 2, u->utf8);
        ui_print(r, r->h - 1, 1 + c, A_NORMAL, fit);
    }
}
