/*
 * treecols.h - the Tree pane's columns as a pure function of the width (no
 * curses, unit-tested from 1 to 400 columns): the name column takes what
 * the rows need up to half the width (names are what tell rows apart),
 * then figure columns join by priority while they fit whole, then the
 * name grows to what it wants (capped); at a large width the secondary columns (mean per call, share
 * of the parent, CPU, per-step mean and max) appear and the bar widens.
 * What does not fit is dropped whole, never cut.
 */
#ifndef PRISM_TUI_TREECOLS_H
#define PRISM_TUI_TREECOLS_H

/* The columns in the order they are drawn, left to right. */
enum {
    TC_NAME, TC_TOTAL, TC_DELTA, TC_SELF, TC_CALLS, TC_PCT, TC_CPU, TC_MEAN, TC_PARENT,
    TC_STEP, TC_STEPMAX, TC_BAR, TC_N
};

#define TC_NAME_MIN 16          /* the name column at least (or half the width) */
#define TC_NAME_CAP 64          /* ... and at most                          */
#define TC_BAR_MIN 8

/* The fixed width of each figure column (its widest value, "123.4 ms"). */
int tc_fixed(int col);
/* Title of a column ("total", "vs base", ...; "" for the name and bar). */
const char *tc_title(int col);

/* Widths for a pane `width` columns wide (one space between columns):
 * cw[c] > 0 for the columns shown.  avail: bit (1u << c) for each column
 * this view has (the delta in compare mode, cpu% with CPU samples, the
 * step columns with steps); name_need: the columns the widest name row
 * takes (indent, marker and name); want (NULL: none): want[c] wider than
 * tc_fixed(c) widens column c for a figure that does not fit in it (an
 * 11-character "1281023.9 h").  Returns the number of columns shown; the
 * name is always shown (width >= 1). */
int tc_layout(int width, int name_need, unsigned avail, const int *want, int cw[TC_N]);

#endif
