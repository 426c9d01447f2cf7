/* compare_view.h - compare mode of the explorer (internal to tui/). */
#ifndef PRISM_TUI_COMPARE_VIEW_H
#define PRISM_TUI_COMPARE_VIEW_H

#include "ui.h"

/* Load both analyses into u and compare them; -1 on allocation failure. */
int cmpv_setup(ui *u, prism_analysis *base, prism_analysis *cur, const char *base_name,
               const char *cur_name);
void cmpv_teardown(ui *u);
/* Make side k (0 base, 1 new) current: its analysis and pane states. */
void cmpv_use(ui *u, int k);
/* Draw the body: both sides of the current pane. */
void cmpv_draw(ui *u, const ui_layout *l);
/* " | +1.2 ms (+4.0%) share +0.4pp p=0.001 *" for the selected path, or "". */
void cmpv_status(const ui *u, char *buf, size_t n);

/* ---- for the panes (compare_view.c) ---- */

/* The file of side k (0 base, 1 new), as given on the command line
 * (borrowed); the Timeline reads its spans from it. */
const char *cmpv_path(int k);

/* The node of u->a for path_hash, else (compare mode) of its nearest
 * ancestor path that this side has; PRISM_NO_NODE when none. */
uint32_t cmpv_nearest(const ui *u, uint64_t path_hash);
/* Attribute of a delta: slower (or new) red, faster (or gone) green, bold
 * when large; within the noise `row` as is.  Without colour: A_BOLD for a
 * change.  On a selected row (sel): `row` plus A_BOLD for a change. */
attr_t cmpv_delta_attr(const ui *u, const prism_delta *d, attr_t row, bool sel);
/* A delta cell (delta.h's dl_format) right-aligned in w columns at (y, x)
 * of r; returns the columns printed. */
int cmpv_delta_cell(const ui *u, const ui_rect *r, int y, int x, int w, const prism_delta *d,
                    attr_t row, bool sel);
/* "not in this profile (new in the other)" or "(gone: in the base only)". */
const char *cmpv_absent_text(const prism_delta *d);
/* The details' "Diff" row at row y of r: the selected path's delta, totals
 * on both sides, speedup, the per-step median's change (beyond the whole
 * run's factor after a whole-run shift), the new share of the step and its
 * change, p-value and significance, or why there is none;
 * other_row: the row shown selected is not that path (its name first). */
void cmpv_diff_line(const ui *u, const ui_rect *r, int y, bool other_row);
/* Print seg[0..n) from column x of row y of r, two spaces apart, each
 * whole or not at all (empty ones skipped): the first that does not fit
 * ends the line, so no value is ever cut.  Returns the column reached. */
int cmpv_segments(const ui_rect *r, int y, int x, attr_t at, char seg[][160], int n);
/* Regressions first: the first significant slowdown or new region in
 * order of |delta| (largest first), else the largest slowdown; NULL when
 * nothing got slower. */
const prism_delta *cmpv_largest_regression(const prism_compare *c);

extern const ui_key cmpv_keys[];
extern const size_t cmpv_nkeys;

#endif
