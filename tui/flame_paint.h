/*
 * flame_paint.h - the Flame pane's look (the curses side of flame.h):
 * attributes of a frame with colour and without, the breadcrumb, the
 * markers of levels hidden by the window, the text of a change, the list
 * of frames below the flame.
 */
#ifndef PRISM_TUI_FLAME_PAINT_H
#define PRISM_TUI_FLAME_PAINT_H

#include "flame.h"
#include "ui.h"

/* One profile: by module (flame_color) or, with CPU samples, by wait vs
 * work; the selection reversed and bold, a search hit in CP_FMATCH, bold
 * and underlined.  Without colour: reverse and plain alternate by parity,
 * the selection reversed, bold and underlined, hits bold. */
attr_t flame_frame_attr(const ui *u, const prism_node *nd, size_t parity, bool sel, bool hit);
/* Compare mode: by the path's change d (slower hot, faster cool, bold
 * when strong); without colour reverse / plain and bold when changed. */
attr_t flame_diff_attr(const ui *u, const prism_delta *d, bool sel, size_t parity);

/* Row 0 of r: "[thread NAME] all > a > b  [12.3 ms, 45.6%]" for zoom z of
 * tree t (view: -1 all threads, else the thread index), leading parts
 * elided to fit. */
void flame_breadcrumb(ui *u, const ui_rect *r, const prism_tree *t, int view, uint32_t z);
/* "N levels above" on row 1, "+N deeper" below the window's last row. */
void flame_markers(ui *u, const ui_rect *r, const flame_window *w);
/* A path's change in the explorer's style: "+37.42 ms +49.9%", "new
 * +3.20 ms"; false (buf untouched) when there is none. */
bool flame_change_text(char *buf, size_t cap, const prism_delta *d);

/* A header at pane row y of r ("frames under NAME (N)" and the heads of
 * the figures), then one frame a row on the `rows` rows below it: its
 * whole name (namefit when too long: the start it shares with the owner
 * or the others folds first), total, share of the owner, in compare mode
 * its change, and calls; figures drop from the right on narrow panes.
 * The marked one shows '>' and the selection's colours; *top is the first
 * shown, kept between draws (flame_list_top). */
void flame_list_draw(ui *u, const ui_rect *r, int y, int rows, const flame_list *l, int *top);

#endif
