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
#include "array.h"
#include "itab.h"
#include "u64map.h"

/*
 * Run every rule on `a` (whose tree, ops, steps, memory and GPU aggregates
 * are already up to date) and write at most `max` bottlenecks into out[],
 * most important first: HIGH before MEDIUM before LOW, a memory leak first
 * within its severity (it ends in an OOM), then by share descending.  When more
 * are found than fit, the least important are left out.  Returns how many
 * were written.
 *
 *   threshold_pct  hot_operation: an op above this % of total time is hot
 *   leak_mb        memory_leak: a fitted slope above this many MB per step
 *                  is a fast leak (slower growth needs prism_leak_fit's
 *                  evidence, already in the memory stats)
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
    /* The training thread: the one that marks the steps (see
     * prism_analysis_training_thread); when the file cannot tell, the
     * busiest thread not named like a loader ("load", "worker"). */
    const prism_tree *train;
    const char *train_name;
    size_t train_idx;
    size_t nthreads, loaders;         /* threads, of which not training      */
    uint64_t loader_ns;               /* the other threads' region time      */
    /* ... less their time in wait-like regions (rules_wait_like: a feeder
     * thread blocked in a lock is not busy); loader_waits: any was left
     * out */
    uint64_t loader_busy_ns;
    bool loader_waits;
    /* Loader processes: torch's DataLoader with num_workers > 0 (a region
     * named for _MultiProcessingDataLoaderIter, as torch.profiler records
     * its __next__): the workers load in other processes, so no loader
     * thread of this file shows them. */
    bool loader_procs;
    /* DataLoader worker processes recorded in worker files (their threads
     * are in this analysis: prism_analysis_thread_worker), how many. */
    size_t worker_procs;
    /* The denominator of every time share: the wall time of the sampled
     * steps (regions are recorded in those), else of the run. */
    double step_ns;
    uint64_t steps;                   /* sampled steps behind it; 0: the run */
    bool cpu;                         /* CPU samples: wait vs work measured  */
    bool python;                      /* a Python program (advice wording)   */
    /* One rank of a larger job (prism_analysis_job_rank): its rank (-1
     * none) and the job's world size (0 unknown). */
    bool job;
    int64_t rank;
    uint64_t world;
    /* the thresholds (rules_run's) and the aggregates most rules read */
    double threshold_pct, leak_mb;
    const prism_gpu_stats *gpu;       /* NULL: none                          */
    const prism_memory_stats *mem;    /* NULL: none                          */
    prism_bottleneck *out;
    size_t n, max;
} rules_ctx;

/* b's worth: the mean sampled step now and without wait_ns (the wait's
 * time inside the sampled steps); nothing without steps. */
void rules_worth(const rules_ctx *c, prism_bottleneck *b, double wait_ns);
/* rules_input.c: a data_loading finding with the DataLoader's workers
 * recorded: b->inside, the projection with more workers and the fix that
 * follows (replaces b's recommendation); nothing without worker data.
 * fetches: the data waits a step (its batches: several with gradient
 * accumulation), <= 0 when not known (one). */
void rules_input_workers(const rules_ctx *c, prism_bottleneck *b, double wait_ns,
                         double fetches);

/* "step time" or "run time": what step_ns is. */
const char *rules_denom(const rules_ctx *c);
/* A node's time inside the denominator's window: inside sampled steps
 * when there are steps, else all of it. */
double rules_in_window(const rules_ctx *c, const prism_node *n);
/* The same in ns, exact (a sum of them saturates with an_sat_add: the
 * double of a time near 2^64 is 2^64, which no uint64_t holds). */
uint64_t rules_in_window_ns(const rules_ctx *c, const prism_node *n);

/* The own (exclusive) figures of node i of tree t: its inclusive ones
 * less its children's, none below 0. */
typedef struct rules_self {
    double ns;                        /* self time in the window             */
    double known, on, runq, off, busy;/* scheduler accounting (all of it)    */
    double work;                      /* self time in the window, running
                                         (all of it without samples)         */
    double blocked;                   /* ... blocked off CPU                 */
    double waitq;                     /* ... runnable, waiting for a CPU     */
} rules_self;
rules_self rules_self_of(const rules_ctx *c, const prism_tree *t, uint32_t i);

/* prism.torch's compile region ("torch.compile (compile)"), and the advice
 * for it (appended to r): compiling, not training (rules_hot.c). */
bool rules_compile_region(const char *name);
void rules_compile_advice(char *r, size_t cap);

/* A zeroed bottleneck to fill, blaming `node` of the all-threads tree (or
 * PRISM_NO_NODE), or NULL when out[] is full of more important ones. */
prism_bottleneck *rules_add(rules_ctx *c, prism_bottleneck_type type, prism_severity sev,
                            double share, uint32_t node);
/* Append to a NUL-terminated buffer.  When the text does not fit, the
 * longest name in quotes ('...') loses its middle ("...") first, so that
 * the figures around it stay whole; only then is the end cut. */
void rules_put(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same into an emptied buffer. */
void rules_set(char *buf, size_t cap, const char *fmt, ...)
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
/* Names of a thread waiting, not working: a function (a Python frame's
 * "FILE(LINE): FUNC", a "<built-in method FUNC of ...>" or "<built-in
 * function FUNC>", or the whole name) that is acquire, wait, wait_for,
 * select, poll or sleep: a lock, a condition, a queue, a socket.  Without
 * CPU samples (a trace) the name is all that tells a wait from work. */
bool rules_wait_like(const char *name);
/* Node i of t, or one of its callers, is wait-like (rules_wait_like). */
bool rules_in_wait(const prism_tree *t, uint32_t i);

/* Regions gathered by name (every path of a name together), every name:
 * an index by hash, then strcmp, so that each node costs one lookup, not a
 * compare with every name gathered so far.  It grows as names come (a
 * trace of Python functions brings tens of thousands). */
typedef struct rules_name {
    const char *name;                 /* borrowed from the tree              */
    uint64_t hash;                    /* XXH3 of it                          */
} rules_name;
typedef struct rules_names {
    rules_name *e;                    /* the entries                         */
    size_t n, cap;
    pb_itab of;                       /* entry by name (4 bytes a slot)      */
    rules_name want;                  /* the name sought                     */
} rules_names;
/* Start empty (no allocation); free what it holds. */
void rules_names_init(rules_names *ix);
void rules_names_free(rules_names *ix);
/* The entry of `name` (equal strings share one), numbered 0, 1 ... in order
 * of first sight (*added true for a new one); SIZE_MAX when memory runs
 * out. */
size_t rules_names_get(rules_names *ix, const char *name, bool *added);

/*
 * The rules.  Each reads the refreshed analysis through c (the public
 * getters, the context's aggregates) and adds its findings with
 * rules_add(); each decides itself whether it applies.  They run in the
 * order of the table in rules.c (rules_table); a new rule is its function
 * (here, in the rule file that fits) and one row there.
 */

/* rules_steps.c: steps far above the median (slow_steps) */
void rules_slow_steps(rules_ctx *c);
/* unattributed_time: the training thread's step time outside every
 * region, named by the sampled stacks (rules_stacks.c). */
void rules_unattributed(rules_ctx *c);
/* What the training thread's sampled stacks were doing (stacks.c):
 * where 0, outside every region in the sampled steps; 1, in its node
 * `node`; 2, outside every step; in the steps with the sorted indices
 * idx[0..k) only, when idx is not NULL.  False without such samples. */
struct an_stack_where;
bool rules_stacks_where(const rules_ctx *c, int where, const uint64_t *idx, size_t k,
                        uint32_t node, struct an_stack_where *out);
/* rules_wait.c: measured stalls of the training thread (CPU samples):
 * blocked regions, and the thread waiting for a CPU (contention) */
void rules_wait(rules_ctx *c);
/* The process's disk I/O where it matters to a wait (format 1.3
 * readings): reads and writes of the process and its workers at least
 * 1 MiB a step and 4 MiB/s over the run, by storage bytes; bytes read and
 * written per step and both per second into *rd, *wr, *rate.
 * rules_disk_evidence appends "; on disk meanwhile: read 12.5 MB, wrote
 * 0.0 MB a step (80.0 MB/s)" when so. */
bool rules_disk_io(const rules_ctx *c, double *rd, double *wr, double *rate);
void rules_disk_evidence(const rules_ctx *c, char *ev, size_t cap);
/* rules_hot.c: hot operations of the training thread, and the heaviest
 * operation of each other thread (LOW) */
void rules_hot(rules_ctx *c);
void rules_beside(rules_ctx *c);
/* Names of collectives and their libraries: all_reduce / allreduce,
 * all_gather, reduce_scatter, all_to_all, broadcast, barrier, nccl, gloo,
 * c10d, ProcessGroup, collective (any case). */
bool rules_comm_like(const char *name);
/* Names of the input pipeline, for confidence only: data, load, batch,
 * fetch, input, prefetch, shard, dataset. */
bool rules_input_like(const char *name);

/* rules_stall.c: the pipeline rules */
void rules_sync(rules_ctx *c);
void rules_data(rules_ctx *c);
void rules_gpu_idle(rules_ctx *c);
void rules_launch(rules_ctx *c);
void rules_memory_bound(rules_ctx *c);
void rules_intensity(rules_ctx *c);

/* rules_steps.c: the slow steps of the slow_steps finding (its rule, see
 * there), their indices into ix (room for the steps) in step order; 0
 * when the finding does not apply.  f (may be NULL): its figures
 * (rules_slow: internal.h).  From the refreshed step series and their
 * sorted durations (an_series_durations): the refresh finds them once
 * (a->slow, a->slow_f); the finding reads them there. */
struct rules_slow;
size_t rules_slow_find(const prism_analysis *a, uint64_t *ix, struct rules_slow *f);

#endif
