/*
 * treeview.h - the Tree pane's model without curses: a call tree flattened
 * into the rows that are visible, given an expansion state and a sibling
 * sort order.  Pure, so it is unit-tested on real analyses.
 *
 * Expansion is a default depth (`level`: nodes shallower than it are open)
 * plus a set of path hashes whose state differs from that default, so it
 * survives reloads, switches between per-thread trees and pane switches, and
 * expand-all / collapse-to-depth cost O(1) before the rebuild.
 *
 * Costs: children are sorted lazily, the first time a node is shown open
 * (or searched through), and cached until the sort or the tree changes.
 * tv_rebuild is O(visible rows) and runs only after a change (`dirty`);
 * moving the selection never rebuilds.
 */
#ifndef PRISM_TUI_TREEVIEW_H
#define PRISM_TUI_TREEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/analysis.h"
#include "u64map.h"

#define TV_NONE ((size_t)-1)
#define TV_ALL UINT32_MAX          /* level: everything open */

typedef enum tv_sort { TV_SORT_TOTAL, TV_SORT_SELF, TV_SORT_CALLS, TV_SORT_NAME, TV_SORT_COUNT } tv_sort;


/* A row filter: keep(n) says whether node n is of interest. */
typedef bool (*tv_keep_fn)(const prism_node *n, void *ctx);

typedef struct treeview {
    const prism_tree *tree;    /* borrowed; NULL or empty: no rows          */
    const prism_node *nodes;   /* snapshot to notice a changed tree         */
    size_t count;
    tv_sort sort;
    bool reverse;              /* the sort's order reversed                 */
    uint32_t level;            /* default: nodes with depth < level open     */
    uint32_t max_depth;
    pb_map flip;               /* path hash -> 1: opposite of the default    */
    pb_map saved_flip;         /* tv_expansion_save: the expansion put aside */
    uint32_t saved_level;
    bool saved;
    pb_map by_hash;            /* path hash -> node (built on first use)     */
    bool by_hash_ok;
    /* per node, compact so that a rebuild stays in cache */
    uint64_t *hash;            /* path hash                                  */
    uint32_t *meta;            /* depth << 1 | has children                  */
    uint64_t *key;             /* sort key (larger first)                    */
    /* sorted children, CSR filled lazily: kid_off[n] == UINT32_MAX: not yet */
    uint32_t *kid_off, *kid_n, *pos, *kids, *stack;
    size_t kids_used;
    uint32_t *roots;
    size_t nroots;
    /* the visible rows (node indices, pre-order) */
    uint32_t *rows;
    size_t nrows;
    bool dirty;
    uint64_t gen;              /* counts changes of rows, order or filter    */
    bool oom;                  /* an allocation failed: rows may be partial  */
    /* the filter (NULL: none); shown[n]: n or a descendant is kept */
    tv_keep_fn keep;
    void *keep_ctx;
    unsigned char *shown;
    bool refilter;             /* the filter changed: next set_tree applies */
} treeview;

void tv_init(treeview *tv);
void tv_free(treeview *tv);

/* Show tree t (borrowed until the next call; NULL allowed).  Caches are
 * dropped when t, its node array or its size changed, or with force; the
 * expansion state and the sort are kept.  Returns true when it changed. */
bool tv_set_tree(treeview *tv, const prism_tree *t, bool force);

/* Show only the nodes that keep() accepts and their ancestors, so the
 * rows stay a tree (NULL: every node).  Applied by the next tv_set_tree
 * (which then rebuilds even when the tree is the same); keep is called
 * once per node there, never while drawing.  Hidden nodes are still found
 * by tv_find; tv_row_of gives their nearest shown ancestor's row. */
void tv_set_filter(treeview *tv, tv_keep_fn keep, void *ctx);
/* Whether node passes the filter (or is an ancestor of one that does). */
bool tv_shown(const treeview *tv, uint32_t node);

const char *tv_sort_name(tv_sort s);
void tv_set_sort(treeview *tv, tv_sort s);
/* Reverse the order of the current sort (names z..a, smallest first). */
void tv_set_reverse(treeview *tv, bool reverse);
/* Whether the rows show largest first (names: z..a). */
bool tv_descending(const treeview *tv);

bool tv_expanded(const treeview *tv, uint32_t node);
bool tv_has_children(const treeview *tv, uint32_t node);
void tv_set_expanded(treeview *tv, uint32_t node, bool open);
/* Open every node with depth < level and close the rest (TV_ALL: all);
 * individual expansions are forgotten. */
void tv_set_level(treeview *tv, uint32_t level);
/* The level clamped to the tree (max depth + 1 for TV_ALL). */
uint32_t tv_level(const treeview *tv);

/* Put the expansion aside and open everything (a filter shows its matches
 * and their ancestors), or bring the expansion put aside back.  Saving
 * twice keeps the first; restoring without a save does nothing. */
void tv_expansion_save(treeview *tv);
void tv_expansion_restore(treeview *tv);
/* Give dst the view of src: sort, order, level and expansion (compare mode
 * keeps both sides' rows alike).  false when out of memory. */
bool tv_copy_view(treeview *dst, const treeview *src);

/* Flatten again if something changed.  O(visible rows). */
void tv_rebuild(treeview *tv);

/* Node by path hash in this tree, or PRISM_NO_NODE. */
uint32_t tv_find(treeview *tv, uint64_t path_hash);
/* Open the ancestors of node; true when one was closed. */
bool tv_reveal(treeview *tv, uint32_t node);
/* Row of node after a rebuild, or of its nearest visible ancestor when it
 * is hidden (reveal false), or after opening its ancestors (reveal true);
 * a node the filter hides counts as its nearest shown ancestor.
 * TV_NONE when the tree has no such node or no rows. */
size_t tv_row_of(treeview *tv, uint32_t node, bool reveal);

/* Children of node in the current sort order (PRISM_NO_NODE: the roots);
 * *n gets their count.  The array is owned by tv, valid until a change. */
const uint32_t *tv_children(treeview *tv, uint32_t node, size_t *n);

typedef bool (*tv_match_fn)(const char *name, void *ctx);
/* The next (dir > 0) or previous node after `from` in pre-order over the
 * whole tree in the current sort, wrapping, whose name matches; `from` may
 * be PRISM_NO_NODE (start before the first node).  `from` itself is found
 * last.  PRISM_NO_NODE when nothing matches. */
uint32_t tv_next_match(treeview *tv, uint32_t from, int dir, tv_match_fn m, void *ctx);

/* Text cells.  Copy s into out so it takes at most `width` columns; when it
 * is cut, the end (tv_fit) or the start (tv_fit_left) becomes an ellipsis
 * ("…", or "~" without UTF-8).  s is escaped first (escape.h), so what is
 * fitted is what the terminal will show.  Returns the columns used. */
int tv_fit(char *out, size_t cap, const char *s, int width, bool utf8);
int tv_fit_left(char *out, size_t cap, const char *s, int width, bool utf8);
/* The same with the middle left out ("layer.\u20262.grad", ".." without
 * UTF-8): both ends of a long name stay readable. */
int tv_fit_mid(char *out, size_t cap, const char *s, int width, bool utf8);

#endif
