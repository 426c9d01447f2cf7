/*
 * analysis/rules.h - the bottleneck rules (internal).
 *
 * rules.c reads a refreshed analysis through the public getters only and
 * turns it into prism_bottleneck records; model.c calls rules_run() at the
 * end of prism_analysis_refresh() with the effective thresholds.
 */
#ifndef PRISM_ANALYSIS_RULES_H
#define PRISM_ANALYSIS_RULES_H

#include <stddef.h>

#include "prism/analysis.h"

/*
 * Run every rule on `a` (whose tree, ops, steps, memory and GPU aggregates
 * are already up to date) and write at most `max` bottlenecks into out[],
 * most important first: HIGH before MEDIUM before LOW, then by share
 * descending (a memory leak ranks as share 1: it ends in an OOM).  When more
 * are found than fit, the least important are left out.  Returns how many
 * were written.
 *
 *   threshold_pct  hot_operation: an op above this % of total time is hot
 *   leak_mb        memory_leak: fitted growth above this many MB per step
 *
 * Bottlenecks that blame no region have node PRISM_NO_NODE and path_hash 0,
 * except the two memory leaks, whose path_hash is RULES_HASH_HOST_MEMORY or
 * RULES_HASH_GPU_MEMORY so that compare can tell them apart.
 */
size_t rules_run(const prism_analysis *a, double threshold_pct, double leak_mb,
                 prism_bottleneck *out, size_t max);

/* Fixed ids for the host RSS and GPU memory leaks (not paths). */
#define RULES_HASH_HOST_MEMORY 0x5a0c5a8d6b1e2f01ull
#define RULES_HASH_GPU_MEMORY  0x5a0c5a8d6b1e2f02ull

#endif
