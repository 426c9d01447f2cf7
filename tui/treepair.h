/*
 * treepair.h - compare mode's Tree rows: one row order for both sides, so
 * the same call path sits on the same line left and right (no curses,
 * unit-tested).  The rows are a pre-order walk of the union of the two
 * trees as each side's treeview shows them (filters, expansion, sort):
 * a path on one side only gets a row too, with PRISM_NO_NODE on the other
 * side (drawn "(absent)").  Siblings come in the base's order with the new
 * side's extra paths after them in the new side's order (TP_BASE), or by
 * the size of their change, largest first (TP_DELTA).
 */
#ifndef PRISM_TUI_TREEPAIR_H
#define PRISM_TUI_TREEPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treeview.h"

typedef enum tp_order { TP_BASE, TP_DELTA } tp_order;

typedef struct tp_row {
    uint32_t node[2];           /* node on the base, new side; or PRISM_NO_NODE */
    uint64_t hash;              /* the call path                                */
    const char *name;           /* borrowed from the side that has it           */
    uint32_t depth;
    uint32_t seq;               /* place among its siblings (the walk's)         */
} tp_row;

typedef struct tp_list {
    tp_row *rows;
    size_t n, cap;
    tp_row *stack;              /* work space of the walk                       */
    size_t sp, scap;
    bool oom;                   /* an allocation failed: rows may be partial    */
} tp_list;

/* The change of a path for TP_DELTA (new - base, ns); ctx is passed on. */
typedef double (*tp_delta_fn)(uint64_t path_hash, void *ctx);

/* Pair the rows of side[0] (base) and side[1] (new), both already given
 * their trees (tv_set_tree).  A path is open when the side that has it
 * (the base when both do) shows it open.  Rebuilds l (reusing its memory);
 * returns the number of rows, 0 with l->oom on allocation failure. */
size_t tp_build(tp_list *l, treeview *side[2], tp_order order, tp_delta_fn delta, void *ctx);
/* The row of path_hash, or TV_NONE. */
size_t tp_find(const tp_list *l, uint64_t path_hash);
void tp_free(tp_list *l);

#endif
