/*
 * job_view.h - the job view of prism-top: a distributed job (one profile
 * per rank, prism/job.h) on one screen.  Tabs: Ranks (a rank x step
 * heatmap), Stragglers (the findings), Table (per-rank figures), Help.
 *
 * A frame of its own beside the explorer's (explore.c): it shares the
 * terminal handling (ui_term_open), the drawing helpers and the key-table
 * convention of ui.h, but has no panes of a profile.  A rank's profile is
 * opened in the normal explorer as a child process (Enter, t, c), so the
 * job stays loaded while the user looks at one rank.
 *
 * Files: job_view.c (loading, the loop, children), job_keys.c (the key
 * table and the mouse), job_draw.c (the tabs), job_map.c (the heatmap's
 * geometry and shades, pure: tests/job_map_test.c).
 */
#ifndef PRISM_TUI_JOB_VIEW_H
#define PRISM_TUI_JOB_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "prism/job.h"
#include "ui.h"

enum { JV_RANKS, JV_STRAGGLERS, JV_TABLE, JV_HELP, JV_NTABS = JV_HELP };

/* Table sort columns, cycled by s. */
enum { JV_SORT_RANK, JV_SORT_STEP, JV_SORT_WORK, JV_SORT_WAIT, JV_SORT_EXCESS,
       JV_SORT_SLOWED, JV_NSORT };

typedef struct jv {
    ui u;                       /* terminal state: utf8, color, rows, cols, msg */
    prism_job *job;
    int tab, prev_tab;          /* the tab shown; where help returns to     */
    bool work;                  /* the heatmap shows work (else step) time  */
    double median[2];           /* median of all cells: [0] step, [1] work  */
    size_t rank;                /* selected rank (index into job->ranks)    */
    size_t step;                /* selected aligned step (heatmap)          */
    size_t top;                 /* first rank row shown (heatmap and Table) */
    size_t text_top;            /* Stragglers / Help: first line shown      */
    bool marked;                /* m: a base rank for c                     */
    size_t mark;
    int sort;                   /* JV_SORT_*                                */
    size_t *order;              /* Table rows: rank indices in sort order   */
    char *findings;             /* the Stragglers tab: analyze's section    */
    /* geometry of the last draw (mouse, pages): the rows of ranks or
     * lines, the first cell's column */
    int rows_y, rows_h, cells_x;
    size_t ncol;                /* heatmap columns drawn                    */
    int cellw;                  /* their width: 1, or up to 3 with few steps */
} jv;

/* ---- job_map.c: the heatmap, pure ---- */

/* Shade of a cell: v against the median of all cells: 0 below 0.75x, 1
 * below 1.1x, 2 below 1.25x, 3 below 1.5x, 4 from 1.5x; -1 absent (NAN). */
int jv_level(double v, double median);
/* The shade's text: UTF-8 " ░▒▓█" or ASCII " .:*#"; absent "-". */
const char *jv_shade(int level, bool utf8);
/* n steps in ncol columns (ncol <= n): column c shows steps
 * [jv_bin_first(c), jv_bin_first(c + 1)). */
size_t jv_bin_first(size_t n, size_t ncol, size_t c);
/* The column of step s. */
size_t jv_bin_of(size_t n, size_t ncol, size_t s);
/* The median of the finite values of v[0..n) (NAN when none); v is
 * reordered. */
double jv_median(double *v, size_t n);
/* The value of cell (rank r, step s) as shown: work or step ns. */
double jv_cell(const jv *v, size_t r, size_t s);
/* Of the steps in step s's column, the one whose value (rank r) is the
 * largest (the one the cell shows); s itself when they are all absent. */
size_t jv_shown_step(const jv *v, size_t r, size_t s, size_t ncol);
/* Medians of all cells, the default metric (work when any rank waited),
 * the Table's order: after the job is loaded.  False on allocation failure. */
bool jv_prepare(jv *v);
/* Sort v->order by v->sort (figures descending, rank ascending). */
void jv_sort(jv *v);
/* The rank's id as shown ("3"), into buf. */
const char *jv_rank_name(const jv *v, size_t r, char *buf, size_t cap);

/* ---- job_draw.c ---- */

void jv_draw(jv *v);
/* The Stragglers / Help text lines (for scrolling): how many there are. */
size_t jv_text_lines(const jv *v);

/* ---- job_keys.c ---- */

/* Handle one key (or KEY_MOUSE); UI_* flags. */
int jv_key(jv *v, int ch);
/* The tab labels: "Ranks", "Stragglers", "Table". */
const char *const *jv_tab_names(void);
extern const ui_key jv_keys[];
extern const size_t jv_nkeys;

/* ---- job_view.c: what the keys start ---- */

/* Enter / t: the rank's profile in the explorer at the step (pane:
 * "timeline" or "tree"); c: compare base and cur.  Leave curses, run
 * prism-top as a child, wait, redraw.  Messages go to v->u.msg. */
void jv_open_rank(jv *v, size_t r, size_t step, const char *pane);
void jv_compare(jv *v, size_t base, size_t cur);

#endif
