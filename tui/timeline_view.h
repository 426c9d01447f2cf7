/*
 * timeline_view.h - the Timeline pane's geometry as pure functions (no
 * curses; tests/timeline_test.c): which steps are outliers, how steps map
 * to bar-chart columns and back, which span each cell of a lane row shows,
 * and where the time axis puts its ticks.
 */
#ifndef PRISM_TUI_TIMELINE_VIEW_H
#define PRISM_TUI_TIMELINE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/timeline.h"

/* Outlier steps: a duration above median + 3 * MAD (the median absolute
 * deviation, scaled by 1.4826 to estimate a standard deviation), and at
 * least 5 % above the median (so a perfectly even run still has a floor).
 * out[i] for each of dur[0..n); returns how many, *threshold (may be NULL)
 * the limit (0 when n < 3: too few steps to tell, none flagged). */
size_t tlv_outliers(const double *dur, size_t n, bool *out, double *threshold);

/* The bar chart: n steps in w columns.  When they fit, each step takes
 * the same number of columns (1..TLV_MAX_BAR_COLS); when there are more
 * steps than columns, each column is a bucket of steps (its bar the
 * bucket's largest).  tlv_col_step: the first step of a column (SIZE_MAX:
 * no step there); tlv_step_col: the first column of step i. */
#define TLV_MAX_BAR_COLS 4
int tlv_bar_cols(size_t n, int w);
size_t tlv_col_step(size_t n, int w, int col);
int tlv_step_col(size_t n, int w, size_t i);
/* The step of column col with the largest duration in its bucket. */
size_t tlv_col_peak(const double *dur, size_t n, int w, int col);

/* One cell of a lane row: the span it shows (SIZE_MAX: idle) and how many
 * spans fall into it (> 1: more than one, the longest shown). */
typedef struct tlv_cell {
    size_t span;
    uint32_t count;
} tlv_cell;

/* The column of time ts on a view from v0 to v1 (exclusive) w columns wide;
 * may be < 0 or >= w (outside). */
long tlv_col(uint64_t ts, uint64_t v0, uint64_t v1, int w);
/* The start of column col in ns: the first whole ns in it, so that tlv_col
 * maps it back to col when a column is at least 1 ns wide. */
uint64_t tlv_time(int col, uint64_t v0, uint64_t v1, int w);

/* Fill cells[0..w) for the spans of `depth` in spans[0..n) (sorted by
 * depth, then start) on the view [v0, v1).  Every span that overlaps the
 * view takes at least one cell.  Returns the number of cells used. */
int tlv_row(const prism_span *spans, size_t n, uint32_t depth, uint64_t v0, uint64_t v1,
            int w, tlv_cell *cells);

/* A tick interval (1, 2 or 5 times a power of ten, ns) that puts ticks at
 * least min_cols columns apart on a view `span` ns wide and w columns. */
uint64_t tlv_tick(uint64_t span, int w, int min_cols);

/* The view after a zoom (factor < 1: in) around `at`, kept inside
 * [lo, hi] and at least min_width wide: *v0, *v1 updated. */
void tlv_zoom(uint64_t *v0, uint64_t *v1, uint64_t at, double factor, uint64_t lo,
              uint64_t hi, uint64_t min_width);
/* The view moved by `cols` of w columns (negative: earlier), inside [lo, hi]. */
void tlv_pan(uint64_t *v0, uint64_t *v1, int cols, int w, uint64_t lo, uint64_t hi);

#endif
