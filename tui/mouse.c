/*
 * mouse.c - mouse input where the terminal reports it: a click on the tab
 * bar switches pane, clicks, double-clicks and the wheel in the body go to
 * the pane's `mouse` hook (in compare mode the side under the pointer gets
 * the focus first); a wheel without a hook scrolls like j/k.  Decoding is
 * ui_mouse_decode(), pure and unit-tested.  endwin() turns reporting off
 * again on every exit path (explore.c restores the terminal there).
 */
#include <stdlib.h>

#include "compare_view.h"
#include "frame.h"

#ifndef BUTTON5_PRESSED                 /* ncurses built for the old mouse ABI */
#define BUTTON5_PRESSED 0
#endif

mmask_t ui_mouse_mask(void)
{
    return BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED;
}

static int event_of(mmask_t b)
{
    if (b & BUTTON1_DOUBLE_CLICKED)
        return UI_MOUSE_DOUBLE;
    if (b & BUTTON1_CLICKED)
        return UI_MOUSE_CLICK;
    if (b & BUTTON4_PRESSED)
        return UI_MOUSE_WHEEL_UP;
    if (BUTTON5_PRESSED && (b & BUTTON5_PRESSED))
        return UI_MOUSE_WHEEL_DOWN;
    return 0;
}

ui_hit ui_mouse_decode(mmask_t bstate, int y, int x, const ui_layout *l, const ui_tab *tabs,
                       int ntabs, int tail_x, bool compare, int split_cols)
{
    ui_hit h = { UI_HIT_NONE, 0, -1, -1, 0, 0 };
    int ev = event_of(bstate);
    if (!ev || l->too_small || y < 0 || x < 0 || x >= l->cols)
        return h;
    h.event = ev;
    bool click = ev == UI_MOUSE_CLICK || ev == UI_MOUSE_DOUBLE;
    if (y == l->tabs_y) {
        for (int i = 0; click && i < ntabs; i++)
            if (tabs[i].w > 0 && x >= tabs[i].x && x < tabs[i].x + tabs[i].w) {
                h.what = UI_HIT_TAB;
                h.pane = i;
                return h;
            }
        if (click && x > tail_x && x <= tail_x + 6)     /* "?:help" of the tail */
            h.what = UI_HIT_HELP;
        return h;
    }
    if (y < l->body_y || y >= l->body_y + l->body_h)
        return h;                       /* the status line */
    if (!compare) {
        h.what = UI_HIT_BODY;
        h.row = y - l->body_y;
        h.col = x;
        return h;
    }
    ui_split sp = ui_split_compute(l->body_y, l->body_h, l->cols, split_cols);
    for (int k = 0; k < 2; k++) {
        if (sp.h[k] < 2 || sp.w[k] < 1)
            continue;                   /* not drawn */
        if (y < sp.y[k] || y >= sp.y[k] + sp.h[k] || x < sp.x[k] || x >= sp.x[k] + sp.w[k])
            continue;
        h.side = k;
        if (y == sp.y[k]) {             /* the side's label row: focus only */
            h.what = UI_HIT_SIDE;
        } else {
            h.what = UI_HIT_BODY;
            h.row = y - sp.y[k] - 1;
            h.col = x - sp.x[k];
        }
        return h;
    }
    return h;                           /* the divider */
}

void ui_mouse_start(void)
{
    if (!getenv("PRISM_NO_MOUSE"))
        mousemask(ui_mouse_mask(), NULL);
}

int ui_mouse_key(ui *u, int (*dispatch)(ui *u, int key))
{
    MEVENT me;
    if (getmouse(&me) != OK)
        return UI_NONE;
    ui_layout l = ui_layout_compute(u->rows, u->cols);
    ui_tab tabs[UI_NTABS];
    const char *names[UI_NTABS];
    for (int i = 0; i < UI_NTABS; i++)
        names[i] = u->panes[i]->name;
    int tail = ui_tabs_fit(names, UI_NTABS, u->pane, u->cols, tabs);
    ui_hit h = ui_mouse_decode(me.bstate, me.y, me.x, &l, tabs, UI_NTABS, tail, u->cmp != NULL,
                               u->split_cols);
    switch (h.what) {
    case UI_HIT_TAB:
        ui_show(u, h.pane);
        return UI_REDRAW;
    case UI_HIT_HELP:
        return dispatch(u, KEY_F(1));
    case UI_HIT_SIDE:
        cmpv_use(u, h.side);
        return UI_REDRAW;
    case UI_HIT_BODY:
        break;
    default:
        return UI_NONE;
    }
    if (u->cmp && h.side >= 0 && h.side != u->side)
        cmpv_use(u, h.side);
    const ui_pane *p = u->panes[u->pane];
    if (p->mouse) {                     /* UI_PASS: the default below */
        int r = p->mouse(u, u->state[u->pane], h.event, h.row, h.col);
        if (!(r & UI_PASS))
            return r | UI_REDRAW;
    }
    if (h.event != UI_MOUSE_WHEEL_UP && h.event != UI_MOUSE_WHEEL_DOWN)
        return UI_REDRAW;
    int r = UI_REDRAW;
    for (int i = 0; i < 3 && !(r & UI_QUIT); i++)
        r |= dispatch(u, h.event == UI_MOUSE_WHEEL_UP ? KEY_UP : KEY_DOWN);
    return r & ~UI_PASS;
}
