/*
 * timeline_pane.h - the Timeline pane's state, shared by its drawing
 * (pane_timeline.c) and its keys and mouse (timeline_keys.c).  Internal to
 * the pane.
 */
#ifndef PRISM_TUI_TIMELINE_PANE_H
#define PRISM_TUI_TIMELINE_PANE_H

#include "prism/timeline.h"
#include "timeline_view.h"
#include "ui.h"

#define MAX_ROWS 512            /* screen rows remembered for the mouse     */

typedef struct tl {
    prism_timeline *tl;
    prism_status err;
    bool lanes;                 /* focus: lanes (else the bar chart)        */
    bool picked;                /* the user chose a step (else: the last)   */
    size_t step;                /* position in the step series             */
    bool loaded, stale;
    uint64_t w0, w1;            /* the selected step's window               */
    uint64_t l0, l1;            /* the window loaded (the view's when detail) */
    bool detail;                /* the step's lanes merged spans: zoomed
                                   views load their own window             */
    uint64_t v0, v1;            /* the view                                 */
    uint64_t cur;               /* the cursor's time                        */
    size_t lane, top;           /* lane of the cursor row, first lane shown */
    uint32_t depth;             /* row of the cursor inside its lane        */
    /* the step series as the chart shows it (tl_model) */
    const prism_step *mser;
    size_t mn, nout;
    double *dur, peak;          /* durations (ns), the longest */
    bool *out;
    /* geometry of the last draw (mouse, page sizes) */
    int pane_h, bar_y, bar_h, lanes_y, lanes_h, gutter, span_w, bar_w;
    int nrows;
    int row_lane[MAX_ROWS], row_depth[MAX_ROWS];
} tl;

/* The step series of the analysis shown (n: its length). */
const prism_step *tl_steps(const ui *u, size_t *n);
/* Select the step whose prism_step.index is index (the frame's --step):
 * false while the series does not hold it yet (st may be NULL). */
bool tl_select_step(const ui *u, void *st, uint64_t index);
/* Step durations and outlier flags in s (dur, out, nout, peak) for the
 * analysis' step series, recomputed only when it changed; false when
 * there are no steps or no memory. */
bool tl_model(const ui *u, tl *s);
/* The span under the cursor on the cursor row, or NULL. */
const prism_span *tl_cur_span(const tl *s);
/* Rows shown of a lane at most, in a pane h rows high. */
int tl_max_rows(int h);

#define TL_NKEYS 29
extern const ui_key tl_keys[TL_NKEYS];
int tl_mouse(ui *u, void *st, int event, int row, int col);

#endif
