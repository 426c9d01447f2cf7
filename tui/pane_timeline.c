/*
 * pane_timeline.c - the steps as a bar chart and, for the selected step, one
 * lane per thread and GPU stream.  (Being written: this first version only
 * registers the tab.)
 */
#include "ui.h"

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    (void)st;
    ui_rect r = { y, x, h, w };
    ui_print(&r, 0, 1, A_BOLD, "Timeline");
    (void)u;
}

const ui_pane pane_timeline = {
    .name = "Timeline",
    .hint = "",
    .draw = draw,
};
