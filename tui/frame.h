/*
 * frame.h - the explorer's frame around the panes: the tab bar, the status
 * line, the line prompt and mouse decoding.  The fitting and decoding are
 * pure functions (no curses state), unit-tested in tests/frame_test.c.
 */
#ifndef PRISM_TUI_FRAME_H
#define PRISM_TUI_FRAME_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "ui.h"

/* ---- tab bar (frame.c) ---- */

#define UI_TAB_TAIL " ?:help q:quit"
#define UI_NTABS (UI_NPANES - 1)

typedef struct ui_tab {
    char label[32];             /* " 1 Summary ", " 1 Sum ", " 1 ", " 1"    */
    int x, w;                   /* columns of the bar it covers (w 0: none) */
} ui_tab;

/* Fit n tab labels and UI_TAB_TAIL into `cols`: full names, then short
 * ones ("Sum"; names of up to 5 characters stay whole; the current tab
 * keeps the longer form while it fits), then numbers ("1 Summary 2 3"),
 * then numbers only.  Fills tabs[0..n); returns the column where the
 * tail starts. */
int ui_tabs_fit(const char *const *names, int n, int cur, int cols, ui_tab *tabs);

/* ---- status line (frame.c) ---- */

/* One item of the status line, in display order.  `sep` goes before it
 * (not before the first item shown).  Items are dropped whole, lowest
 * `prio` first (0: never dropped); an item with `elide` set first loses
 * its middle ("ab~yz") down to `min` columns before being dropped. */
typedef struct ui_status_item {
    const char *text;
    const char *sep;
    int prio;
    bool elide;
    int min;
} ui_status_item;

/* Build the line from n items into out (cap bytes) to fit `cols` columns
 * (ui_width).  Returns the columns used. */
int ui_status_fit(const ui_status_item *items, int n, int cols, char *out, size_t cap);

/* Copy s into out with its middle replaced by "~" (ASCII) so it is at most
 * `cols` columns; s is escaped first (escape.h), so an escape is never
 * cut.  Returns the columns of out. */
int ui_elide_middle(const char *s, int cols, char *out, size_t cap);

void ui_draw_tabs(ui *u, const ui_layout *l);
void ui_draw_status(ui *u, const ui_layout *l);

/* ---- the line prompt (prompt.c) ---- */

enum { UI_LINE_EDIT, UI_LINE_ACCEPT, UI_LINE_CANCEL };

typedef struct ui_line {
    char buf[64];
    size_t n;
} ui_line;

/* Apply one key to a line being edited (pure): printable bytes (UTF-8
 * included) append, Backspace/DEL/^H delete one character, ^U clears,
 * Enter accepts, Esc and ^G cancel.  Returns UI_LINE_*. */
int ui_line_key(ui_line *l, int key);

/* Read a line on the status row, waiting for keys without a timeout.
 * `changed` (may be NULL) is called after each edit with the text so far
 * (incremental search).  Returns 1 when accepted, 0 when cancelled, -1
 * when *stop is set (a signal) or the terminal went away: the caller
 * quits. */
int ui_prompt(ui *u, const char *label, ui_line *l, const volatile sig_atomic_t *stop,
              void (*changed)(ui *u, const char *text, void *ctx), void *ctx);

/* ---- prompt keys (frame_keys.c) and what they need of explore.c ---- */

int ui_key_search(ui *u, void *st, int key);    /* /        */
int ui_key_filter(ui *u, void *st, int key);    /* \, F4    */
/* Redraw the whole frame now. */
void ui_redraw(ui *u);
/* Set by SIGINT, SIGTERM, SIGHUP, SIGQUIT: the explorer is to end. */
const volatile sig_atomic_t *ui_stop_flag(void);

/* ---- mouse (mouse.c) ---- */

enum { UI_HIT_NONE, UI_HIT_TAB, UI_HIT_HELP, UI_HIT_BODY, UI_HIT_SIDE };

typedef struct ui_hit {
    int what;                   /* UI_HIT_*                                 */
    int event;                  /* UI_MOUSE_* (0: none)                     */
    int pane;                   /* UI_HIT_TAB: the pane                     */
    int side;                   /* compare mode: the side under the pointer */
    int row, col;               /* UI_HIT_BODY: in the body rectangle       */
} ui_hit;

/* The mouse events asked for (button-1 click and double-click, wheel). */
mmask_t ui_mouse_mask(void);

/* Decode a mouse event (pure): bstate and screen (y, x) against the
 * layout, the tab bar and, in compare mode, the split of the body (side by
 * side from split_cols columns: ui_split_compute). */
ui_hit ui_mouse_decode(mmask_t bstate, int y, int x, const ui_layout *l, const ui_tab *tabs,
                       int ntabs, int tail_x, bool compare, int split_cols);

/* Turn mouse reporting on unless PRISM_NO_MOUSE is set (curses is up). */
void ui_mouse_start(void);

/* Handle KEY_MOUSE: read the event and act.  Returns UI_* flags. */
int ui_mouse_key(ui *u, int (*dispatch)(ui *u, int key));

#endif
