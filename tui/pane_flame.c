/* pane_flame.c - the Flame pane (minimal first version). */
#include "ui.h"

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    ui_rect r = { y, x, h, w };
    (void)st;
    ui_print(&r, 0, 1, ui_attr(u, CP_TITLE, A_BOLD), "Flame");
}

const ui_pane pane_flame = {
    .name = "Flame",
    .hint = "",
    .draw = draw,
};
