/*
 * analysis/rules.h - the bottleneck rules (internal).
 *
 * rules.c and rules_stall.c read a refreshed analysis through the public
 * getters only and turn it into prism_bottleneck records; model.c calls
 * rules_run() at the end of prism_analysis_refresh() with the effective
 * thresholds.
 */
#ifndef PRISM_ANALYSIS_RULES_H
#define PRISM_ANALYSIS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- shared by the rule files ------------------------------------------ */

typedef struct rules_ctx {
    const prism_analysis *a;
    const prism_tree *tree;           /* all threads                         */
    const prism_op *ops;              /* by total, descending                */
    size_t nops;
    /* The training thread: the busiest thread not named like a loader
     * ("load", "worker"); the busiest of all when every one is. */
    const prism_tree *train;
    const char *train_name;
    size_t nthreads, loaders;         /* threads, of which loader-named      */
    uint64_t loader_ns;               /* the loaders' region time            */
    prism_bottleneck *out;
    size_t n, max;
} rules_ctx;

/* A zeroed bottleneck to fill, blaming `node` of the all-threads tree (or
 * PRISM_NO_NODE), or NULL when out[] is full of more important ones. */
prism_bottleneck *rules_add(rules_ctx *c, prism_bottleneck_type type, prism_severity sev,
                            double share, uint32_t node);
/* Append to a NUL-terminated buffer, truncating. */
void rules_put(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A duration in words: "812 ns", "45.2 us", "6234.1 ms", "83.2 s". */
typedef struct rules_dur { char s[24]; } rules_dur;
rules_dur rules_dur_of(double ns);
#define DUR(ns) (rules_dur_of((double)(ns)).s)

/* HIGH > 30 %, MEDIUM 10-30 %, LOW < 10 %. */
prism_severity rules_by_share(double share);
bool rules_icontains(const char *s, const char *needle);
/* The last '/' component of a name. */
const char *rules_leaf(const char *name);
/* Node i of the all-threads tree, NULL when out of range. */
const prism_node *rules_node(const rules_ctx *c, uint32_t i);
/* The child of node i with the largest total, or PRISM_NO_NODE. */
uint32_t rules_heaviest_child(const rules_ctx *c, uint32_t i);
/* A region that only wraps others ("step", "epoch", "layer.2" > "matmul"). */
bool rules_is_wrapper(const rules_ctx *c, const prism_op *op);
/* Names of waits for the GPU: sync, synchronize, .item, wait_gpu, cuda_sync. */
bool rules_sync_like(const char *name);
/* Names of the input pipeline: "data" or "load" anywhere, any case. */
bool rules_data_like(const char *name);

/* rules_stall.c: the pipeline rules */
void rules_sync(rules_ctx *c, const prism_gpu_stats *g);
void rules_data(rules_ctx *c);
void rules_gpu_idle(rules_ctx *c, const prism_gpu_stats *g);
void rules_launch(rules_ctx *c, const prism_gpu_stats *g);
void rules_memory_bound(rules_ctx *c, const prism_gpu_stats *g);
void rules_intensity(rules_ctx *c);

#endif
