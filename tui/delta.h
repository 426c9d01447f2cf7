/*
 * delta.h - compare mode's deltas as pure functions (no curses): what kind
 * of change a path shows, the text of a delta cell, the nearest path that
 * exists on a side, and the change of each flat operation by name.
 * tests/compare_view_test.c checks them; delta_ui.c maps them to
 * attributes and draws them.
 *
 * Kinds are noise-aware: a change counts only when the analysis compare
 * calls it significant (a rank test on per-step samples, p < 0.01, with
 * the per-step median moved by 3 % and by 0.5 % of the step, beyond the
 * whole run's factor when the whole run shifted), or when the path exists
 * on one side only.  The direction of a significant change is that of its
 * per-step median (median_pct): after a whole-run shift, a region that
 * kept its time while everything else slowed down is faster than the run.
 */
#ifndef PRISM_TUI_DELTA_H
#define PRISM_TUI_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/analysis.h"

typedef enum dl_kind {
    DL_NONE,                    /* no delta known (not in compare mode)      */
    DL_SAME,                    /* within the noise                          */
    DL_SLOWER,                  /* significantly slower                      */
    DL_FASTER,                  /* significantly faster                      */
    DL_NEW,                     /* on the new side only                      */
    DL_GONE                     /* on the base side only                     */
} dl_kind;

dl_kind dl_kind_of(const prism_delta *d);
/* Significant, new or gone: what diff-only keeps. */
bool dl_changed(const prism_delta *d);
/* The direction of the change for colouring: +1 slower (or new), -1
 * faster (or gone), 0 unchanged or unknown. */
int dl_direction(const prism_delta *d);
/* A large change: new, gone, or significant and over DL_STRONG_PCT. */
#define DL_STRONG_PCT 20.0
bool dl_strong(const prism_delta *d);

/* "+12.3ms", "-850ns", "+1.20s": a signed duration without the space. */
void dl_fmt_ns(char *buf, size_t cap, double ns);
/* "+4.5%", "-12.0%", "+123%" (no decimals from 100 %). */
void dl_fmt_pct(char *buf, size_t cap, double pct);
/* A change of share in percentage points: "+1.2pp", "-0.4pp", "0.0pp". */
void dl_fmt_pp(char *buf, size_t cap, double pp);
/* The text of a delta cell at most `width` columns wide: "+12.3ms +4.5%",
 * else "+4.5%", else "+12.3ms"; "new +91.7ms" / "gone -3.2ms" for a path
 * on one side only, else "new" / "gone"; "" without a delta.  Returns the
 * columns used (ASCII only). */
int dl_format(char *buf, size_t cap, const prism_delta *d, int width);

/* The node of `here`'s all-threads tree for path_hash, or, when `here`
 * lacks that path, for its nearest ancestor path that `here` has, looked
 * up through `other`'s tree (the side that has it).  PRISM_NO_NODE when
 * neither knows it or no ancestor exists here. */
uint32_t dl_nearest(const prism_analysis *here, const prism_analysis *other, uint64_t path_hash);

/* The change of each operation of `ops` (one side's flat list; `side` 0
 * when it is the base's) against the other side's list, by name: the
 * totals of both, delta, % and speedup, shares (each operation's share of
 * its profile's total, as the Ops pane shows it) and their change in
 * points; base_node / new_node are 0 when present, PRISM_NO_NODE when
 * absent; significant when some path of that name changed significantly
 * (c, may be NULL) and the operation's own change exceeds 1 % of the base
 * profile's total (base_total_ns), its direction that of its total
 * (median_pct = delta_pct: operations have no per-step medians).  out has
 * n entries (name and path left empty).  0, or -1 on allocation failure. */
int dl_ops(const prism_op *ops, size_t n, const prism_op *other, size_t nother, int side,
           const prism_compare *c, uint64_t base_total_ns, prism_delta *out);

#endif
