/*
 * verdict.h - what the analysis concluded about memory and steps, in words,
 * as pure functions (no curses), so that the Memory and Summary panes and
 * the analyze report say the same thing (unit-tested in
 * tests/verdict_test.c).  Owner: the Memory pane.
 *
 * A leak verdict reads as a word (coloured by its tone), the fit's facts,
 * and the detail behind it:
 *     LEAK  +2.00±0.01 MB/step  +998.0 MB (+97.5%) over 499 steps
 *     steady, significant rise; r2 1.00; 3.00 GB in 1000 steps
 */
#ifndef PRISM_TUI_VERDICT_H
#define PRISM_TUI_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "prism/analysis.h"

enum { VERDICT_PLAIN = 0, VERDICT_OK, VERDICT_WARN, VERDICT_BAD };

/* "LEAK" (BAD), "growing" (WARN), "no leak" (OK), or "no fit" (PLAIN); a
 * series still rising is never "no leak", but a rise too small to matter
 * (under 4 MB, or under 1 % of the level, and under 16 MB) is "slight
 * rise" (PLAIN). */
const char *verdict_word(const prism_leak *lk, int *tone);

/* "+2.00±0.01 MB/step  +998.0 MB (+97.5%) over 499 steps" (" +/- "
 * without UTF-8); "" without a fit. */
void verdict_facts(char *buf, size_t cap, const prism_leak *lk, bool utf8);

/* "r2 1.00, 500 points" */
void verdict_fit(char *buf, size_t cap, const prism_leak *lk);

/* Memory at the projection: "3.00 GB in 1000 steps" or "541.0 MB in 10
 * steps (epoch end)"; "" without a fit. */
void verdict_outlook(char *buf, size_t cap, const prism_leak *lk);

/* The detail line: "<reason>; r2 <r2>; <outlook>" (at most 80 columns for
 * every reason and a projection below 10^6 steps). */
void verdict_detail(char *buf, size_t cap, const prism_leak *lk);

/* "12.5 MB", "1.95 GB" */
void verdict_mb(char *buf, size_t cap, double mb);

/* The steps the statistics count as problems, one sentence per kind
 * present ("3 steps end before they start: ignored in step statistics"),
 * at most 4, each shorter than VERDICT_LINE.  Returns how many. */
#define VERDICT_LINE 96
int verdict_step_problems(const prism_step_stats *st, char lines[][VERDICT_LINE], int max);

#endif
