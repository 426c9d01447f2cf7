/*
 * tree_pane.h - the Tree pane's state, shared by its keys and mouse
 * (pane_tree.c) and its drawing (tree_draw.c).  Internal to tui/.
 *
 * The rows are the treeview's (one profile), or in compare mode the
 * paired rows of both sides (treepair.h), so that the same path sits on
 * the same line left and right; tree_nrows / tree_row_* read either.
 */
#ifndef PRISM_TUI_TREE_PANE_H
#define PRISM_TUI_TREE_PANE_H

#include "treepair.h"
#include "treeview.h"
#include "ui.h"

#define DETAILS_ROWS 6          /* separator and five lines, and one more
                                   for a file with regions not recorded     */
#define DETAILS_AUTO_H 16       /* shown by default from this pane height   */

typedef struct tree_st {
    treeview tv;
    int view;                   /* -1: all threads, else a thread index     */
    size_t sel, top;            /* selected and first shown row             */
    int page;                   /* list rows at the last draw               */
    int last_h, last_w;
    int list_y;                 /* the first list row in the pane (mouse)   */
    bool details_small;         /* `d` below DETAILS_AUTO_H rows: shown     */
    bool details_hidden;        /* `d` from DETAILS_AUTO_H rows: hidden     */
    bool absent;                /* the selected path has no row here        */
    uint64_t shown_hash;        /* the selection the Tree last showed       */
    bool recenter;              /* selected from outside: show its context  */
    char filter[64];            /* the filter the rows show (u->filter)     */
    bool paired;                /* compare mode: rows are `pairs`           */
    int side;                   /* ... and this state's side (0 base, 1 new) */
    tp_list pairs;
    uint64_t pairs_gen[2];      /* the sides' treeview gen the pairs are of  */
    const void *pairs_tv[2];
    tp_order pairs_order;
    bool pairs_ok;
    tp_order order;             /* compare mode: base order or by change    */
} tree_st;

size_t tree_nrows(const tree_st *s);
/* The path of row i, and its node on this side (PRISM_NO_NODE: absent). */
uint64_t tree_row_hash(const tree_st *s, size_t i);
uint32_t tree_row_node(const tree_st *s, size_t i);

/* Draw the pane (header, rows, details) in r; s is in sync. */
void tree_draw(ui *u, tree_st *s, const ui_rect *r);
/* Compare mode: the columns a side needs for the rows on screen (at the
 * last draw) to show what tells them apart, the total and the change. */
int tree_side_cols(const tree_st *s);

#endif
