/*
 * ui.h - the explorer's frame: the shared state every pane sees, the pane
 * interface (a const table of functions per pane, one file each), key
 * tables with their help text, and clipped drawing helpers.
 *
 * Panes draw from analysis results only; they never aggregate.  Actions
 * return flags (UI_REDRAW, UI_QUIT, ...) and never draw themselves.  View
 * state that must survive pane switches and reloads (the selection) is kept
 * here keyed by call-path hash.
 */
#ifndef PRISM_TUI_UI_H
#define PRISM_TUI_UI_H

#include <curses.h>
#include <stdbool.h>
#include <stdint.h>

#include "explore.h"
#include "prism/analysis.h"
#include "units.h"

/* UI_PASS: a pane key did not apply here (e.g. Esc in a flame graph that is
 * not zoomed): the frame tries the global keys (Esc/Backspace: back). */
enum { UI_NONE = 0, UI_REDRAW = 1, UI_RELAYOUT = 2, UI_QUIT = 4, UI_PASS = 8 };

/* Mouse events given to a pane's `mouse` hook, in the pane's coordinates
 * (row, col from the top-left of the rectangle the pane last drew). */
enum { UI_MOUSE_CLICK = 1, UI_MOUSE_DOUBLE, UI_MOUSE_WHEEL_UP, UI_MOUSE_WHEEL_DOWN };

/* Colour pairs (used only when colour is on). */
enum {
    CP_BAR = 1, CP_TAB, CP_SEL, CP_HIGH, CP_MEDIUM, CP_LOW, CP_DIM, CP_TITLE,
    CP_HOT, CP_WARM, CP_COOL,
    CP_FLAME0, CP_FLAME1, CP_FLAME2, CP_FLAME3, CP_FMATCH,  /* flame frames, search match */
    CP_COUNT
};
/* init_pair for CP_HOT .. CP_FMATCH (the flame palette; flame_paint.c). */
void flame_init_colors(void);

typedef struct ui ui;

typedef struct ui_key {
    int key;                    /* curses key code or character            */
    const char *name;           /* as shown in help: "Enter", "j"          */
    int (*fn)(ui *u, void *st, int key);
    const char *help;
} ui_key;

typedef struct ui_pane {
    const char *name;           /* tab label                                */
    const char *hint;           /* status-line hint                         */
    void *(*init)(ui *u);
    void (*draw)(ui *u, void *st, int y, int x, int h, int w);
    void (*reload)(ui *u, void *st);   /* the analysis changed             */
    void (*free)(void *st);
    const ui_key *keys;
    size_t nkeys;
    /* optional: a mouse event (UI_MOUSE_*) at (row, col) of the pane body;
     * returns UI_* flags like a key. */
    int (*mouse)(ui *u, void *st, int event, int row, int col);
    /* optional, compare mode: the columns one side needs to tell its rows
     * apart (names and the figures that matter); a terminal narrower than
     * two such sides shows them stacked. */
    int (*side_cols)(ui *u, void *st);
} ui_pane;

extern const ui_pane pane_summary, pane_tree, pane_flame, pane_ops, pane_memory,
    pane_gpu, pane_bottlenecks, pane_timeline, pane_help;

/* Pane indices (the tab order; Help is last and not a tab): the order of
 * ui_panes[] (panes.c), where a new pane is registered. */
enum { PANE_SUMMARY, PANE_TREE, PANE_FLAME, PANE_OPS, PANE_MEMORY, PANE_GPU, PANE_BOTTLENECKS,
       PANE_TIMELINE, PANE_HELP, UI_NPANES };

/* The pane registry (panes.c): one row per pane, from which the frame
 * takes its panes (and the help its sections, in this order), the number
 * keys their pane, --pane its names (and the command line its error
 * text). */
typedef struct ui_pane_entry {
    int id;                     /* PANE_*, its index in ui_panes            */
    const char *name;           /* --pane NAME (any case)                   */
    int key;                    /* the key that shows it ('1'..), 0: none   */
    const ui_pane *ops;         /* its functions; ops->name: its tab label  */
} ui_pane_entry;
extern const ui_pane_entry ui_panes[UI_NPANES];
/* The pane shown by key (a number key), or -1. */
int ui_pane_by_key(int key);
#define UI_HISTORY 32

struct ui {
    prism_analysis *a;
    const char *path;
    const ui_pane *panes[UI_NPANES];
    void *state[UI_NPANES];
    int pane;                   /* the pane shown                           */
    int prev_pane;              /* where help returns to                    */
    uint64_t sel_hash;          /* selected call path, shared by panes      */
    bool utf8, color;
    int rows, cols;
    char msg[160];              /* transient message on the status line     */
    char search[64];            /* the current search pattern               */
    char filter[64];            /* Tree/Ops show matching rows only ("": all) */
    /* where jumps came from (ui_jump), newest last: Esc/Backspace go back */
    struct { int pane; uint64_t sel_hash; } history[UI_HISTORY];
    int nhistory;
    int jump_pane;              /* a pane asks to show another one (-1)     */
    struct source *src;         /* the file being shown (live tail)         */
    /* compare mode (prism-top BASE NEW): both sides share the selection;
     * panes draw once per side with `a`, `state` and `side` switched. */
    const prism_compare *cmp;   /* NULL when showing one profile            */
    prism_analysis *side_a[2];  /* base, new                                */
    void *side_state[2][UI_NPANES];
    int side;                   /* the side being drawn / given keys: 0, 1  */
    int split_cols;             /* side by side from this width (cmpv_draw) */
    bool diff_only;             /* hide what did not change                 */
    /* --step INDEX: the Timeline selects that step once it is loaded */
    bool want_step;
    uint64_t want_step_index;
};

/* The delta of a path in compare mode (NULL outside it or when unknown). */
const prism_delta *ui_delta(const ui *u, uint64_t path_hash);

/* ---- layout (layout.c, pure: unit-tested without curses) ---- */

#define UI_MIN_ROWS 12
#define UI_MIN_COLS 40

typedef struct ui_layout {
    bool too_small;
    int tabs_y;                 /* tab bar row                              */
    int body_y, body_h;         /* pane rows                                */
    int status_y;               /* status line row                          */
    int cols;
} ui_layout;

ui_layout ui_layout_compute(int rows, int cols);

/* The "terminal too small" screen of a rows x cols terminal: up to
 * UI_SMALL_LINES lines in out[], each whole within cols columns (words
 * drop, figures stay whole: "need 40x12, have 20x5", then "need 40x12" and
 * "have 20x5" on lines of their own, then "have 20x5", "20x5", "!").  The
 * first line is the headline when there is one.  Returns the lines. */
#define UI_SMALL_LINES 4
#define UI_SMALL_COLS 64
int ui_too_small_text(int rows, int cols, char out[][UI_SMALL_COLS]);

/* Compare mode: split the body into two panes, side by side when there are
 * at least split_cols columns (UI_SPLIT_COLS, or more when a pane's names
 * need it: ui_pane.side_cols), stacked otherwise.  Rects may be empty. */
#define UI_SPLIT_COLS 120
typedef struct ui_split {
    bool stacked;
    int y[2], x[2], h[2], w[2];
} ui_split;
ui_split ui_split_compute(int body_y, int body_h, int cols, int split_cols);

/* Split `width` into n columns: fixed[i] > 0 is a fixed width, 0 takes a
 * share of what is left (at least min_flex).  Columns that do not fit get
 * width 0 (dropped from the right).  Returns the number shown. */
int ui_columns(int width, const int *fixed, int n, int min_flex, int *out);

/* Fill `out` (n cells) with a bar of `frac` (0..1) of n cells in eighths
 * when utf8, else '#'.  Returns bytes written (NUL-terminated). */
size_t ui_bar(char *out, size_t cap, double frac, int n, bool utf8);

/* Where a list selection goes on a movement key (j/k, arrows, PgUp/PgDn,
 * Home/End, g/G): row r of n rows, `page` rows a page.  Other keys: r. */
size_t ui_list_move(int key, size_t r, size_t n, size_t page);

/* A sparkline of v[0..nv) resampled into n cells. */
size_t ui_sparkline(char *out, size_t cap, const double *v, size_t nv, int n, bool utf8);

/* Join parts[0..n) with sep into out while the line fits in width columns:
 * whole parts only, in order (a figure is never cut; empty parts are
 * skipped).  Returns the parts taken. */
int ui_fit_parts(char *out, size_t cap, const char *const *parts, int n, const char *sep,
                 int width);
/* s escaped and fitted in cols columns: as is when it fits, else its start
 * and its end around an ellipsis ("\u2026"; ".." without UTF-8): the Tree's
 * tv_fit_mid, the one middle elision of every pane.  Returns columns used. */
int ui_elide_mid(char *out, size_t cap, const char *s, int cols, bool utf8);
/* Prose in cols columns: whole words from its start and its end around a
 * middle '...' (a figure is never cut); one word too long: ui_elide_mid. */
int ui_elide_words(char *out, size_t cap, const char *s, int cols, bool utf8);

/* Human units (fmt_ns, fmt_bytes, fmt_count): present/units.h. */

/* ---- drawing (draw.c): clipped to the rectangle given ---- */

typedef struct ui_rect {
    int y, x, h, w;
} ui_rect;

/* Print s at (row, col) of r, clipped to r's width; returns columns used. */
int ui_print(const ui_rect *r, int row, int col, attr_t attr, const char *s);
/* Same with printf formatting. */
int ui_printf(const ui_rect *r, int row, int col, attr_t attr, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* parts[0..n) at (row, col) of r, joined by sep, each in its attrs[i]
 * (NULL: A_NORMAL), whole parts only and in order while they fit in r's
 * width: a line drops its last words, never the digits of a figure.
 * Empty parts are skipped.  Returns columns used. */
int ui_print_parts(const ui_rect *r, int row, int col, const char *const *parts,
                   const attr_t *attrs, int n, const char *sep);
/* Clear a row of r with attr. */
void ui_fill(const ui_rect *r, int row, attr_t attr);
/* The "terminal too small" screen (ui_too_small_text) on all of stdscr. */
void ui_draw_too_small(int rows, int cols);
/* Attribute for a colour pair, or `mono` without colour. */
attr_t ui_attr(const ui *u, int pair, attr_t mono);
/* Whether non-ASCII bytes may be printed (set once from the locale). */
void ui_draw_set_utf8(bool on);
/* Display width of a UTF-8 string (ASCII and block characters: 1 each). */
int ui_width(const char *s);
/* Thread i of a as the Tree and the Flame name it: "thread NAME" ("thread
 * S" by its stream without a name); a worker process's thread (its name
 * reads "worker N: ...") gets " (worker)".  detail: " (stream S)", for a
 * worker's " (worker, pid P)".  Unescaped: print with ui_print. */
void ui_thread_label(const prism_analysis *a, size_t i, bool detail, char *buf, size_t cap);

/* ---- shared actions (explore.c) ---- */

/* Select the all-threads node with this path hash; panes follow it. */
void ui_select(ui *u, uint64_t path_hash);
/* Show pane i (0..UI_NPANES-1). */
void ui_show(ui *u, int i);
/* Set a transient status message. */
void ui_message(ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Does `name` match the current search (case-insensitive substring)? */
bool ui_matches(const ui *u, const char *name);
/* The n / N keys of a pane (prompt.c): find(u, st, dir) selects the next
 * (dir 1) or previous (-1) match of the search and says whether there was
 * one; the messages for no search and no match are this function's.
 * UI_NONE without pane state. */
typedef bool (*ui_find_fn)(ui *u, void *st, int dir);
int ui_search_key(ui *u, void *st, int key, ui_find_fn find);
/* Does `name` pass the filter (true when no filter is set)? */
bool ui_filter_matches(const ui *u, const char *name);
/* Jump: remember (pane, selection) for ui_back, select path_hash (when not
 * 0) and show `pane` after the key.  Use for every cross-pane jump. */
void ui_jump(ui *u, int pane, uint64_t path_hash);
/* Back to where the last jump started; false when there is none. */
bool ui_back(ui *u);

/* The global key table (explore.c), for the help pane. */
/* The keys everywhere (explore.c), the number keys taken from the pane
 * registry; *n gets their count.  Built on the first call. */
const ui_key *ui_global_keys(size_t *n);

/* The terminal for a frame of its own (the job view, tui/job_view.c) with
 * the explorer's handling: locale (u->utf8), quit signals (ui_stop_flag),
 * restore at exit and on fatal signals, curses settings, mouse and colour
 * (u->color), u->rows and u->cols.  False, with a line on stderr, when the
 * terminal cannot be set up. */
bool ui_term_open(ui *u);
void ui_term_close(void);

#endif
