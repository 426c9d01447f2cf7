/*
 * callers.h - the Ops pane's callers view (inverted): for one operation,
 * every call path of the all-threads tree that ends in it, heaviest first,
 * with its share of the operation's total.  Pure (no curses): built from a
 * prism_analysis and unit-tested (tests/ops_view_test.c).
 */
#ifndef PRISM_TUI_CALLERS_H
#define PRISM_TUI_CALLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/analysis.h"

typedef struct callers_row {
    uint32_t node;              /* the path's node in the all-threads tree   */
    uint64_t path_hash;
    uint64_t total_ns, calls;
    double share;               /* total / the operation's total (0..1; a
                                   recursive operation's paths sum past 1)  */
} callers_row;

typedef struct callers {
    char name[256];             /* the operation (a copy; "" when empty)    */
    uint64_t op_total_ns;       /* its total (prism_op), 0 when unknown     */
    callers_row *rows;          /* owned; heaviest first                    */
    size_t n;
} callers;

/* Fill c (zeroed or built before: rebuilt in place) with the paths of the
 * all-threads tree named `name`, by total (descending; ties by calls, then
 * path hash).  0 on success, -1 when out of memory (c is then empty). */
int callers_build(callers *c, const prism_analysis *a, const char *name);
/* Free the rows; c stays usable (empty). */
void callers_free(callers *c);
/* The row with this path hash, or (size_t)-1. */
size_t callers_find(const callers *c, uint64_t path_hash);

/* The call path of `node` as "a/b/c" (names escaped, escape.h) into out;
 * returns out.  Names past 64 levels deep are left off at the root end. */
char *callers_path(char *out, size_t cap, const prism_tree *t, uint32_t node);


#endif
