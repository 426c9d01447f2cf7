/*
 * chart.h - text cells for panes as pure functions (no curses, unit-tested
 * in tests/chart_test.c): a multi-row bar chart of a series with overlaid
 * traces (a trend line, a second series) and a marker column, and word wrap.
 *
 * A chart is an h x w grid of cells, row 0 at the top.  Each cell holds one
 * glyph (UTF-8 block characters, or '#' for a full cell and '.' for a
 * partial one in ASCII) and a kind that the pane maps to an attribute.
 * Series are first resampled to one value per column (chart_resample), so
 * the drawing functions take w values; NAN means "nothing in this column".
 */
#ifndef PRISM_TUI_CHART_H
#define PRISM_TUI_CHART_H

#include <stdbool.h>
#include <stddef.h>

enum { CHART_EMPTY = 0, CHART_BAR, CHART_TRACE, CHART_TRACE2, CHART_MARK };

typedef struct chart_cell {
    char s[4];                  /* one glyph, UTF-8, NUL-terminated         */
    unsigned char kind;         /* CHART_*                                  */
} chart_cell;

typedef struct chart {
    int h, w;
    double lo, hi;              /* value at the bottom / top edge           */
    bool utf8;
    chart_cell *cells;          /* h * w, owned                             */
} chart;

/* Allocate an empty h x w chart over [lo, hi] (an empty range is widened,
 * a non-finite one becomes [0, 1]).  False (and cells NULL) when h or w < 1
 * or on allocation failure; chart_free is safe either way. */
bool chart_init(chart *c, int h, int w, double lo, double hi, bool utf8);
void chart_free(chart *c);

/* Resample points (x ascending, y) into w columns spanning x[0]..x[n-1]:
 * each column takes the largest y that falls in it (peaks show), an empty
 * column repeats the one before.  n == 0 fills col with NAN. */
void chart_resample(const double *x, const double *y, size_t n, double *col, int w);

/* The column (0..w-1) that x falls in on an axis from x0 to x1. */
int chart_col(double x, double x0, double x1, int w);

/* A padded value range for v[0..n) (NANs skipped): 5 % margin each side,
 * never below 0 when every value is >= 0; a flat series gets +-10 %. */
void chart_range(const double *v, size_t n, double *lo, double *hi);
/* Widen [lo, hi] (hi > 0) to at least frac of hi, around its middle and
 * not below 0 when it was not: a level that barely moves is not drawn as
 * a climb over the chart's height. */
void chart_range_min(double *lo, double *hi, double frac);

/* Bars from the bottom up to each column's value, in eighths of a cell. */
void chart_bars(chart *c, const double *col);

/* Overlay a trace: one glyph per column at its value ('-' / U+2500 for
 * CHART_TRACE, '=' / U+2550 for CHART_TRACE2).  Values outside the range
 * are not drawn. */
void chart_trace(chart *c, const double *col, int kind);

/* Mark column x: empty cells get '|' / U+2502; every cell becomes CHART_MARK. */
void chart_marker(chart *c, int x);

/* The run of cells of one kind that starts at (row, from): its text into
 * out, its kind into *kind.  Returns the number of cells (0 past the end). */
int chart_run(const chart *c, int row, int from, char *out, size_t cap, int *kind);

/* A whole row as text (tests, ASCII dumps).  Returns bytes written. */
size_t chart_row_text(const chart *c, int row, char *out, size_t cap);

/* Word wrap: the next line of s that fits in width columns (code points),
 * broken after a word where possible, hard-broken otherwise; '\n' ends a
 * line.  Returns its length in bytes (trailing spaces trimmed) and sets
 * *next to where the following line starts (spaces skipped), or to
 * strlen(s) at the end.  *next > 0 whenever s is not empty. */
size_t wrap_line(const char *s, int width, size_t *next);

/* Lines wrap_line makes of s (0 for an empty string). */
int wrap_count(const char *s, int width);

#endif
