/*
 * pane_ops.h - the Ops pane's state, shared by its files: pane_ops.c (the
 * list's model, keys and mouse), pane_ops_draw.c (the list's drawing) and
 * pane_ops_callers.c (the callers view of one operation).  Internal to
 * the pane.
 */
#ifndef PRISM_TUI_PANE_OPS_H
#define PRISM_TUI_PANE_OPS_H

#include "callers.h"
#include "delta.h"
#include "ui.h"

enum { BY_TOTAL, BY_SELF, BY_CALLS, BY_DSHARE, BY_COUNT };   /* BY_DSHARE: compare only */

typedef struct ops_st {
    int by;
    bool rev;                   /* the sort reversed (smallest first)        */
    const prism_op *ops;        /* snapshot of the analysis' list            */
    size_t nall;                /* its length                                */
    size_t nops;                /* rows: operations in order (filter, diff-only: fewer) */
    uint32_t *order;            /* indices into ops, in the sort order; in
                                   compare mode OPS_ABSENT + k: absent[k]   */
    const char **absent;        /* compare: names only the other side has   */
    size_t nabsent;
    bool stale;                 /* the other side's sort changed: reorder   */
    prism_delta *dl;            /* compare mode: per operation, else NULL    */
    bool diff_only;             /* as applied to order                       */
    char filter[64];            /* u->filter as applied to order             */
    size_t sel, top;
    int page, namew;            /* list rows and widest name at the last draw */
    int list_y, list_n;         /* first list row and rows shown (mouse)     */
    uint64_t seen_hash;         /* u->sel_hash last followed                 */
    bool followed;
    /* the callers view (c): the paths ending in the selected operation */
    bool callers_on;
    callers cv;
    size_t csel, ctop;
    int cpage, clist_y, clist_n;
} ops_st;

#define OPS_ABSENT 0x80000000u

extern const char *const ops_by_name[BY_COUNT];

/* Row i's operation, or NULL for an absent row (compare mode). */
static inline const prism_op *ops_at(const ops_st *s, size_t i)
{
    return s->order[i] < OPS_ABSENT ? &s->ops[s->order[i]] : NULL;
}
/* Row i's name (an absent row's too). */
static inline const char *ops_name_at(const ops_st *s, size_t i)
{
    return s->order[i] < OPS_ABSENT ? s->ops[s->order[i]].name : s->absent[s->order[i] - OPS_ABSENT];
}

uint64_t ops_metric(const prism_op *op, int by);
/* Bring s up to date with u (analysis, filter, diff-only, selection). */
void ops_sync(ui *u, ops_st *s);
/* "by total ↓" (UTF-8) / "by total (desc)". */
const char *ops_direction(const ui *u, const ops_st *s);

/* pane_ops_cmp.c: compare mode's order, the same on both sides (0; -1
 * when not comparing or out of memory: then the side's own order). */
int ops_compare_order(ui *u, ops_st *s);
/* The other side's operation of this name (compare mode), or NULL. */
const prism_op *ops_other(const ui *u, const char *name);

/* pane_ops_draw.c: the list. */
void ops_draw_list(ui *u, ops_st *s, const ui_rect *r);
/* Compare mode: the columns a side needs for the operations on screen to
 * show what tells them apart, the total and the change. */
int ops_side_cols(const ops_st *s);

/* pane_ops_callers.c: open (for the selected operation) or close. */
int ops_callers_open(ui *u, ops_st *s);
void ops_callers_close(ops_st *s);
void ops_callers_draw(ui *u, ops_st *s, const ui_rect *r);
/* A movement key in the callers view. */
int ops_callers_move(ui *u, ops_st *s, int key);
/* Enter: show the selected path in the Tree (ui_jump). */
int ops_callers_enter(ui *u, ops_st *s);
/* A list row of the callers view at pane row `row`, or (size_t)-1. */
size_t ops_callers_row_at(const ops_st *s, int row);

#endif
