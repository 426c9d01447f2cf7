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
    uint64_t h1;                /* the view's right limit: w1, or in compare
                                   mode w0 + the longer run's step         */
    uint64_t cur;               /* the cursor's time                        */
    size_t lane, top;           /* lane of the cursor row, first lane shown */
    uint32_t depth;             /* row of the cursor inside its lane        */
    /* compare mode (timeline_compare.c): the step shared by both sides,
     * by its prism_step.index; missing: this run has no step of that
     * index; a view (offsets from the step's start) the other side set */
    bool want_set, missing, view_set;
    uint64_t want, ov0, ov1, ocur;
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

/* Compare mode: a span after this run's step (the next step's, touching
 * its end), in the room left for the other run's longer step: not shown. */
static inline bool tl_beyond(const tl *s, const prism_span *p)
{
    return s->h1 > s->w1 && p->start >= s->w1;
}

/* The time axis at row y of r, and the lanes in rows y..y+h
 * (timeline_lanes.c); the geometry (gutter, span_w) set by the draw. */
void tl_draw_axis(ui *u, tl *s, const ui_rect *r, int y);
void tl_draw_lanes(ui *u, tl *s, const ui_rect *r, int y, int h);

/* ---- compare mode (timeline_compare.c) ---- */

/* Resolve the shared step on this side (s->step, s->missing; the first
 * time: the last step both runs have, else this run's last). */
void tlc_resolve(const ui *u, tl *s);
/* The lanes' common width in ns for the step [a, b): the longer of this
 * run's step and the other run's step of the same index. */
uint64_t tlc_span(const ui *u, const tl *s, uint64_t a, uint64_t b);
/* After a key on this side: the other side takes the shared step, the
 * focus (chart or lanes) and, with view, the view and cursor as offsets
 * from the step's start. */
void tlc_share(const ui *u, tl *s, bool view);
/* h/l on the chart while this run lacks the shared step: the nearest
 * step before (dir < 0) or after it; false when there is none. */
bool tlc_step_near(const ui *u, tl *s, int dir);
/* The chart's common scale: steps mapped to columns (the longer series)
 * and the tallest bar (ns), over both runs. */
void tlc_scale(const ui *u, const tl *s, size_t *nmap, double *top);
/* The rows of the pane both halves have (the smaller), at most h. */
int tlc_rows(const ui *u, int h);
/* The line under the header: "base"/"new", mean and p50 of the step
 * time; on the new side the p50's and this step's change vs the base. */
void tlc_stats(ui *u, const tl *s, const ui_rect *r, int y);

#define TL_NKEYS 29
extern const ui_key tl_keys[TL_NKEYS];
int tl_mouse(ui *u, void *st, int event, int row, int col);

#endif
