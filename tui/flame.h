/*
 * flame.h - flame-graph geometry as pure functions (no curses): an icicle
 * laid out from a call tree, navigation on it, search hits and label
 * fitting.  The Flame pane draws what these compute; tests/flame_test.c
 * checks them over many widths and trees.
 *
 * Geometry rules
 *  - Row 0 holds the zoom frame spanning the full width, or, unzoomed
 *    (zoom == PRISM_NO_NODE), the roots, which together span it.  A node's
 *    children lie on the row below.
 *  - Children are laid out left to right by name (flame_name_cmp: numbers
 *    inside names by value, so layer.2 comes before layer.10; ties by path
 *    hash): the classic flame-graph order, stable across reloads as times
 *    change.  Time not covered by children (self time) is left blank at the
 *    right of the parent.
 *  - Each node gets a time interval [t0, t1) relative to the zoom: the
 *    parent's start plus the totals of the siblings before it, clamped to
 *    the parent's interval (so inconsistent totals never spill out).  Its
 *    columns are [round(t0 * W / T), round(t1 * W / T)) with T the zoom
 *    total (unzoomed: the sum of the roots), W the width.  Rounding the
 *    cumulative positions (not each width) makes adjacent cells tile
 *    without gaps or overlaps, keeps children inside their parent's span
 *    and every width within one column of its exact share.
 *  - Cells narrower than one column are dropped with their subtrees (their
 *    time still shows in the parent); rows at or beyond max_rows likewise.
 *  - Cells are stored row by row, left to right within a row; the children
 *    of a cell are contiguous.
 *  - Labels fold the start a frame shares with its parent or its row into
 *    an ellipsis (flame_shared, then nf_fit), so siblings that differ only
 *    in a layer index still read apart.
 */
#ifndef PRISM_TUI_FLAME_H
#define PRISM_TUI_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/analysis.h"

#define FLAME_NONE SIZE_MAX

typedef struct flame_cell {
    uint32_t node;              /* node of the tree                          */
    int row, x, w;              /* w >= 1; x + w <= width                    */
    uint64_t t0, t1;            /* its time interval, relative to the zoom   */
    size_t parent;              /* parent cell, FLAME_NONE on row 0          */
    size_t first_child;         /* first child cell, FLAME_NONE when none    */
    size_t nchildren;           /* child cells, contiguous from first_child  */
} flame_cell;

typedef struct flame {
    flame_cell *cells;          /* row-major, left to right (owned)          */
    size_t count, cap;
    int rows;                   /* rows holding cells                        */
    int width, max_rows;        /* as built                                  */
    uint32_t zoom;              /* as built (PRISM_NO_NODE: all roots)       */
    uint64_t base_ns;           /* T: the zoom total or the sum of roots     */
    /* private: children sorted by name, cached for the tree last laid out */
    uint32_t *kids;
    size_t *off;
    const prism_node *order_nodes;
    size_t order_count;
    uint64_t order_total;
} flame;

/* Lay out tree t under zoom into f (width columns, at most max_rows rows).
 * f must be zeroed or previously built (its buffers are reused).  Children
 * are found from the parent links and sorted once per tree: the order is
 * cached in f and reused while t has the same nodes pointer, count and
 * total; call flame_forget_order when a tree may have changed in place.
 * A zoom that is not a node of t is treated as PRISM_NO_NODE.  Returns 0,
 * or -1 on allocation failure (f is then empty).  f borrows nothing from t
 * between calls except as that cache key. */
int flame_build(flame *f, const prism_tree *t, uint32_t zoom, int width, int max_rows);
void flame_forget_order(flame *f);
void flame_free(flame *f);

/* The cell showing node, or FLAME_NONE. */
size_t flame_find(const flame *f, uint32_t node);
/* Navigation: FLAME_NONE when there is no such cell. */
size_t flame_parent(const flame *f, size_t c);
size_t flame_first_child(const flame *f, size_t c);
size_t flame_widest_child(const flame *f, size_t c);   /* leftmost of equals */
size_t flame_left(const flame *f, size_t c);   /* nearest on the same row   */
size_t flame_right(const flame *f, size_t c);
/* The cell at (row, col), or FLAME_NONE. */
size_t flame_at(const flame *f, int row, int col);

/* Search.  match(name, ctx) says whether a name matches. */
typedef bool (*flame_match_fn)(const char *name, void *ctx);

typedef struct flame_hits {
    size_t *cells;              /* matching cells in view, in cell order     */
    size_t count;
    size_t nodes;               /* matching nodes in the whole tree          */
    uint64_t matched_ns;        /* totals of matches not inside a match      */
    double share;               /* matched_ns / tree total (0 when empty)    */
} flame_hits;

/* Fill h (zeroed or previously filled) for the tree t that f was built
 * from.  Returns 0, or -1 on allocation failure (h is then empty). */
int flame_search(const flame *f, const prism_tree *t, flame_match_fn match, void *ctx,
                 flame_hits *h);
void flame_hits_free(flame_hits *h);
/* The first hit after (dir > 0) or before (dir < 0) cell c in cell order,
 * wrapping around; the first (last) hit when c is FLAME_NONE; FLAME_NONE
 * when there are no hits. */
size_t flame_hit_next(const flame_hits *h, size_t c, int dir);

/* Name order of the layout: byte order, except that runs of digits
 * compare by value ("layer.2" < "layer.10"); a total order (ties broken
 * by strcmp).  NULL sorts as "". */
int flame_name_cmp(const char *a, const char *b);

/* Fit name into cols columns (code points): as is when it fits, else
 * truncated with a trailing '...' character (UTF-8) or '~' (ASCII); empty
 * when cols < 2.  Never splits a UTF-8 sequence.  The name is escaped
 * first (escape.h), so what is fitted is what will show.  Returns columns
 * used. */
int flame_label(char *out, size_t cap, const char *name, int cols, bool utf8);

/* The children of node in the tree last laid out (PRISM_NO_NODE: the
 * roots), in layout order: *n of them, borrowed from f until its next
 * build; NULL with *n = 0 when there are none or node is not of it. */
const uint32_t *flame_children(const flame *f, uint32_t node, size_t *n);

/* ---- labels that tell frames apart (namefit.h) ----
 * out[i] for each cell of f: the bytes at the start of its name that its
 * label may fold into an ellipsis: the longer of the start it shares with
 * its parent's name (nf_common) and the start it shares with the frames of
 * its row that begin with the same word (nf_shared), so "encoder.layers.3.
 * self_attn" beside "encoder.layers.4.linear1" shows "...3.self_attn".
 * t is the tree f was built from.  Returns 0, or -1 on allocation failure
 * (out then all 0). */
int flame_shared(const flame *f, const prism_tree *t, size_t *out);

/* Compare mode: the columns one side needs for its labels to read (the
 * pane's side_cols).  Every frame of the layout holding at least
 * 1/FLAME_READ_SHARE of the width should have room for its label (with its
 * shared start folded, at most FLAME_READ_COLS columns of it) and its
 * separator; the widest such need, at most FLAME_SIDE_MAX.  It depends on
 * the times, not on the width f was built at, so it does not flip between
 * the stacked and the side-by-side split.  shared: flame_shared's. */
enum { FLAME_READ_SHARE = 32, FLAME_READ_COLS = 12, FLAME_SIDE_MAX = 4096 };
int flame_side_cols(const flame *f, const prism_tree *t, const size_t *shared);

/* A colour index 0..n-1 from the name's module: the part before the first
 * '.', so "layer.0" and "layer.1" share a colour. */
int flame_color(const char *name, int n);

/* ---- the vertical window (flame_view.c) ----
 * A layout deeper than the pane shows `height` rows around the selection:
 * rows [top, top + shown) of the layout, from pane row y0.  When levels
 * are hidden above (top > 0) the first pane row is a marker ("N above"),
 * when hidden below the row after the last shown one ("+N deeper"); below
 * 3 rows there are no markers.  The window keeps `top` (the last one) while
 * the selected row stays visible, so moving does not make it jump. */
typedef struct flame_window {
    int top, shown;             /* layout rows shown                         */
    int y0;                     /* pane row of layout row `top`              */
    int above, below;           /* levels hidden above / below the window    */
    bool marks;                 /* marker rows show them (height >= 3)       */
} flame_window;

/* rows: rows of the layout; height: rows of the pane for it; sel_row: the
 * selected cell's row (< 0: none); top: the last window's top. */
flame_window flame_window_fit(int rows, int height, int sel_row, int top);

/* ---- the list below the flame (flame_view.c) ----
 * A flame rarely fills the pane; the rows it leaves free list frames by
 * whole name with their figures.  area: the rows between the breadcrumb
 * and the bottom line; used: the rows the flame takes from the top of it
 * (its window and markers).  The list keeps a blank row after the flame,
 * then a header row at `y` (a row of the area), then `rows` rows of
 * frames; rows 0 (and y -1) when fewer than 3 rows are free. */
typedef struct flame_list_geo {
    int y, rows;
} flame_list_geo;

flame_list_geo flame_list_fit(int area, int used);

/* What the list holds: kids[0..n) of tree t (borrowed from f), the
 * children of `owner` (PRISM_NO_NODE: the roots) in layout order; mark:
 * the index of the selected frame among them, < 0 when it is not one. */
typedef struct flame_list {
    const prism_tree *t;
    uint32_t owner;
    const uint32_t *kids;
    size_t n;
    int mark;
} flame_list;

/* The list for selected node sel (PRISM_NO_NODE: none) under zoom z of
 * the tree t that f was last built from (flame.c): the children of sel, or,
 * when it has none, the frames beside it (its parent's children) with sel
 * marked; with no selection the children of z.  n = 0 when empty. */
flame_list flame_list_of(const flame *f, const prism_tree *t, uint32_t sel, uint32_t z);
/* The first of n entries shown in `rows` rows: the last `top` while entry
 * `mark` (< 0: none) stays visible and no row is left empty at the end. */
int flame_list_top(int n, int rows, int mark, int top);

/* ---- the palette (flame_view.c) ----
 * Pairs of terminal colour numbers, text on block.  Slots: FLAME_NMODULE
 * module colours (flame_color), then running (hot), mixed (warm), waiting
 * (cool) for measured CPU time (compare mode: slower, -, faster), then the
 * search-match colour.  Backgrounds: a warm range; with 256 colours soft
 * shades.  The text is black or white, whichever reads better on the block
 * (flame_contrast, the WCAG ratio from the xterm default colours); every
 * pair reads at >= FLAME_MIN_CONTRAST. */
enum { FLAME_NMODULE = 4, FLAME_SLOT_HOT = FLAME_NMODULE, FLAME_SLOT_WARM, FLAME_SLOT_COOL,
       FLAME_SLOT_MATCH, FLAME_NSLOTS };
#define FLAME_MIN_CONTRAST 4.5

typedef struct flame_pair {
    short fg, bg;
} flame_pair;

/* Fill out[FLAME_NSLOTS] for a terminal of ncolors colours (>= 256: the
 * soft shades; else the 8 basic colours). */
void flame_palette(int ncolors, flame_pair out[FLAME_NSLOTS]);
/* The xterm default RGB of colour number c (0..255; others: black). */
void flame_rgb(int c, unsigned char rgb[3]);
/* The contrast ratio of two colour numbers, 1 (none) .. 21. */
double flame_contrast(int a, int b);

#endif
