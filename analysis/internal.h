/*
 * analysis/internal.h - the analysis object and its parts (internal).
 *
 * Streaming state: one call tree per thread (nodes keyed by parent and
 * name id), each thread's open-region stack, steps, memory samples and GPU
 * aggregates.  Derived state (the all-threads tree, ops, statistics,
 * bottlenecks) is rebuilt by prism_analysis_refresh() from the streaming
 * state, whose size depends on call paths and samples (steps, memory
 * samples), not on events: per-step figures of a call path are streaming
 * moments and a bounded sample of its per-step sums (samples.c), not a
 * vector per path.
 */
#ifndef PRISM_ANALYSIS_INTERNAL_H
#define PRISM_ANALYSIS_INTERNAL_H

#include "array.h"             /* pb_vec_reserve, pb_sort_stable */
#include "itab.h"              /* pb_itab */
#include "prism/analysis.h"
#include "u64map.h"            /* pb_map */

/* stats.c: every value the same?  The mean, exact for a constant series. */
bool an_stats_all_equal(const double *v, size_t n);
double an_stats_mean(const double *v, size_t n);

#define MAX_STACK 256u
_Static_assert(MAX_STACK == PRISM_ANALYSIS_MAX_DEPTH, "the documented depth");
#define CHILD_CACHE_BITS 10u
#define CHILD_CACHE_FROM 64u    /* nodes on a thread before its cache is made */

/*
 * A thread's call path, as the hot loop keeps it (152 bytes: what every
 * path has, its calls and times, per call and per sampled step).  What
 * few paths have lives in side tables of the thread, reached by index and
 * created on first use (tnode_ext: GPU work, work counters, the lead of a
 * step, regions not recorded; tnode_cpu: the scheduler accounting, on
 * profiles with CPU samples); its depth, children and reservoir seed are
 * derived where needed.
 */
typedef struct tnode {
    uint32_t parent;
    uint32_t name;              /* reader string id; 0 = "(unknown)" */
    uint32_t merged;            /* its node in the all-threads tree */
    /* per sampled step: the sum of the step being filled, then shifted
     * moments of the steps already closed (constant size per call path) */
    uint32_t step_cur;          /* its sampled position + 1; 0: none */
    uint32_t ext;               /* its tnode_ext + 1 in the thread's table; 0: none */
    uint32_t cpu;               /* its tnode_cpu + 1 in the thread's table; 0: none */
    uint64_t calls, total, self, min, max;
    double shift, s1, s2;       /* sums of (duration - shift), and squares */
    uint64_t step_sum;
    uint64_t steps_seen;        /* closed steps with time in them */
    double step_shift, step_s1, step_s2, step_max;
    /* a bounded sample of the closed steps' sums (samples.c): the hot loop
     * only compares steps_seen with res_next, the index of the next sum to
     * keep */
    struct reservoir *res;      /* NULL until the node closes a step */
    uint64_t res_next;
} tnode;

/* What few call paths have (tnode.ext). */
typedef struct tnode_ext {
    uint64_t gpu_ns, gpu_launches;  /* GPU work launched directly inside */
    uint64_t gpu_wait;          /* blocking CUDA calls (syncs, sync copies) inside */
    uint64_t first_leaf;        /* steps whose earliest leaf call is this node */
    double flops, bytes;        /* work counters recorded directly inside */
    uint64_t unrec;             /* regions not recorded right under it (UNRECORDED) */
    uint64_t spanned;           /* the time inside sampled steps of its calls
                                   that began outside every sampled step (a
                                   region around the loop; unattributed.c) */
} tnode_ext;

/* Scheduler accounting of a path's own (self) time, from CPU samples
 * (cpu.c; tnode.cpu). */
typedef struct tnode_cpu {
    uint64_t span;              /* self time covered by samples */
    uint64_t on, wait;          /* ... on a CPU, runnable in the run queue */
    uint64_t busy;              /* ... its span weighted by how busy the other
                                   threads were (capped at one core) */
    uint64_t tmp;               /* scratch: span in the interval at hand */
    uint64_t runq;              /* run-queue time placed in it at refresh */
    uint64_t blk;               /* ... measured blocked: neither on CPU nor
                                   runnable by the samples' own readings */
    uint32_t slot;              /* its variable in the thread's regression, 0: none */
    uint32_t st_n, st_run;      /* samples whose thread state was read while it
                                   was the innermost region; of them running or
                                   waiting for a CPU */
} tnode_cpu;

/* Records that never move (blocks that double in size: 16, 32, 64, ...),
 * numbered from 1 in order of creation: a side table of a thread's nodes.
 * A zeroed an_pool is empty. */
#define AN_POOL_FIRST 16u
#define AN_POOL_BLOCKS 32u
typedef struct an_pool {
    void **blk;                 /* AN_POOL_BLOCKS block pointers (enough for
                                   2^32 records), made at the first record */
    uint32_t n;                 /* records */
} an_pool;

/* Record i (from 1) of records of `size` bytes. */
static inline void *an_pool_at(const an_pool *p, size_t size, uint32_t i)
{
    uint64_t x = (uint64_t)i - 1 + AN_POOL_FIRST;
    unsigned k = 63u - (unsigned)__builtin_clzll(x) - 4u;   /* AN_POOL_FIRST = 1 << 4 */
    return (char *)p->blk[k] + (x - ((uint64_t)AN_POOL_FIRST << k)) * size;
}
/* A new zeroed record; its number into *i.  NULL without memory. */
void *an_pool_add(an_pool *p, size_t size, uint32_t *i);
void an_pool_free(an_pool *p);

/* A change of the innermost open region of a thread, for finding the
 * region open when a GPU API call was made. */
typedef struct trans {
    uint64_t ts;
    uint32_t node;
} trans;

#define TRANS_RING 65536u       /* a thread's ring at most, in transitions */
#define TRANS_RING_FIRST 8u     /* ... at first: it doubles while it fills */

typedef struct frame {
    uint32_t node;
    uint64_t start, child;
} frame;

typedef struct pend {
    uint32_t node;
    bool leaf;
    uint64_t start, dur;
} pend;

/* A thread's CPU samples: the previous one, what it had outside any
 * region, and scratch for the interval being credited. */
/* A piece of blocked time credited recently, kept so that run-queue wait
 * the kernel reports late can take it back (cpu.c). */
#define BLK_RECENT 32u
typedef struct blk_piece {
    uint32_t node;              /* PRISM_NO_NODE: outside regions */
    uint64_t ns;
} blk_piece;

typedef struct acpu {
    bool have;                  /* a previous sample */
    bool exited;
    uint64_t ts, on, wait;      /* the previous sample */
    uint64_t d_on, d_wait, d_span;  /* the pass at hand */
    uint64_t d_late;            /* run-queue wait reported beyond the interval */
    bool in_runq;               /* waiting for a CPU at the last sample */
    uint64_t pend;              /* time off CPU before that sample, in
                                   neither counter: run-queue wait the next
                                   samples report (PRISM_CPU_QUEUED) */
    double runq_raw;            /* run-queue wait over the run, as reported */
    uint64_t out_runq;          /* ... placed outside regions (runq_fill) */
    bool runq_placed;
    bool in_pass;
    bool queued;                /* a record in the pass being gathered */
    uint64_t span, oncpu, runq; /* all covered time */
    uint64_t on_all;            /* on-CPU over every interval (load.c) */
    uint64_t out_span, out_on, out_wait, out_busy;  /* outside regions */
    uint64_t out_blk;
    blk_piece *recent;          /* the newest blocked pieces, a ring of
                                   BLK_RECENT (made at its first piece) */
    uint32_t nrecent;
    uint64_t out_tmp;
    uint32_t *touched;          /* nodes with cpu_tmp set */
    size_t ntouched, tcap;
    /* least squares over the intervals (cpu.c): slot 0 is outside any
     * region, slot 1 every node without a slot of its own, then up to
     * CPU_SLOTS - 2 nodes in order of first sample */
    double *ls;                 /* normal equations: A (n x n), b_on, b_run */
    double *carry;              /* an interval ending queued, for the next:
                                   spans per slot, on-CPU, runnable (ms) */
    bool carrying;
    uint32_t nslots;
    double *rate;               /* solved: on-CPU rate per slot, then the
                                   runnable (on-CPU or run-queue) rate */
    bool solved;
} acpu;

#define CPU_SLOTS 64u

typedef struct seg {
    uint64_t start, end;
} seg;

typedef struct athread {
    uint32_t stream;
    char name[64];
    bool worker;                /* a worker process's thread (worker file) */
    uint32_t worker_id;
    uint64_t pid;
    uint64_t first_ts, last_ts; /* its region events' span (first_ts 0: none) */
    tnode *nodes;
    size_t n, cap;
    an_pool ext;                /* tnode_ext of the nodes that have one */
    an_pool cpus;               /* tnode_cpu of the nodes that have one */
    pb_itab child;              /* node by (parent, name): 4 bytes a slot */
    uint64_t *ckey;             /* a direct-mapped cache in front, of */
    uint32_t *cval;             /* 1 << CHILD_CACHE_BITS slots, made once
                                   the thread has CHILD_CACHE_FROM nodes */
    frame *stack;               /* the open frames, scap of them allocated  */
    uint32_t scap;              /* (doubled as needed, up to MAX_STACK)     */
    uint32_t depth;             /* frames in stack */
    uint32_t lost;              /* frames deeper than MAX_STACK */
    uint64_t too_deep;          /* regions entered deeper than MAX_STACK:
                                   counted, their time their ancestor's */
    /* the earliest leaf call of the step being filled (tree.c): where
     * each step's work begins, and how far into the step */
    uint32_t lead_pos;          /* sampled position + 1; 0: none */
    uint32_t lead_node;
    uint64_t lead_start, lead_lo, lead_hi;
    double lead_off_sum;        /* sum of lead offsets as fractions of steps */
    uint64_t lead_steps;        /* steps folded into it */
    pend *pending;              /* completions waiting for their step */
    size_t npend, pcap;
    size_t last_step;           /* index of the step found last (cache) */
    uint64_t step_lo, step_hi;  /* ... its time range, and sampled position */
    uint32_t step_pos;
    trans *ring;                /* recent transitions (once GPU data exists) */
    uint64_t nring;             /* transitions written in total */
    uint32_t rcap;              /* ring slots: a power of two, doubled while
                                   nothing wrapped (so a thread holds what it
                                   recorded, up to TRANS_RING); 0: no ring */
    prism_node *pub;            /* derived per-thread tree */
    prism_tree tree;
    acpu cpu;                   /* CPU samples of this thread (cpu.c) */
    /* the step time outside every root region (unattributed.c): the
     * thread's `(outside regions)` node, kept beside its nodes (index n
     * where a tref or the published tree names it) and published on the
     * training thread only */
    tnode out;
    uint64_t out_from;          /* the end of the last root region */
    bool out_pub;               /* published as pub[n] at the last refresh */
    struct out_gap *ogap;       /* gaps (and their CPU shares) past the last
                                   step known, in time order */
    size_t nogap, ogcap;
    seg *oseg;                  /* scratch: the interval's pieces outside regions */
    size_t noseg, osegcap;
    struct out_span *ospan;     /* calls begun outside every step whose end
                                   lies past the last step known */
    size_t nospan, ospcap;
} athread;

typedef struct api_wait {
    uint64_t corr, start;
    uint32_t thread;            /* index into threads */
    uint64_t wait;              /* ns a blocking call waited for the GPU */
} api_wait;

/* Step statistics kept from one refresh to the next (series.c): what the
 * steps [0, upto) in start order add up to, and their durations sorted,
 * so a refresh while a big file loads adds the new steps (their sort and
 * one merge) instead of going over every step again.  Reset when steps
 * arrive that start before the ones already counted. */
typedef struct an_step_acc {
    size_t upto;
    uint64_t sampled, zero_len, timed, overlapping, total_ns, reach;
    uint64_t op_steps;          /* PRISM_STEP_OPS: not timed */
    double mean, m2, sum;       /* sum: of the durations, in step order */
    uint64_t *dur;              /* the timed steps' durations (ns), ascending */
    size_t ndur, dcap;
    uint64_t *tmp;              /* the new ones, before the merge */
    size_t tcap;
    bool no_dur;                /* a reservation failed: no durations */
    bool unordered;             /* some index not above the one before it */
} an_step_acc;

/* The slow_steps finding's figures (rules_slow_find, rules_steps.c). */
typedef struct rules_slow {
    size_t timed;
    double median, threshold, excess, slow_sum, share;
    double top_excess;          /* the slowest one's excess, and its index */
    uint64_t top_index;
    bool warmup;                /* step 0, the first, was above: left out */
    /* prism.torch's measuring steps (before its adaptive decision, INFO
     * torch.modules.after_steps, every module hooked): those above were
     * left out, the last of them */
    uint64_t measured;
} rules_slow;

struct prism_analysis {
    prism_analysis_opts opts;
    prism_reader *reader;
    bool own_reader;

    athread **threads;
    size_t nthreads, tcap;
    pb_map thread_of;           /* stream -> index */

    prism_step *steps;          /* in start order once an_series_sort_steps ran */
    size_t nsteps, scap;
    size_t steps_sorted;        /* steps[0, steps_sorted) are in start order */
    uint32_t *sampled_pos;      /* per step: position among sampled, or UINT32_MAX */
    size_t pcap;                /* sampled_pos's capacity */
    size_t nsampled;
    bool steps_unused;          /* no steps seen while much was pending */
    an_step_acc step_acc;       /* series.c */
    uint64_t steps_backwards;   /* steps that ended before they started (series.c
                                   keeps them with end = start) */

    prism_mem_point *mem;
    size_t nmem, mcap;
    prism_sys_point *sys;       /* system readings (system.c), sorted at refresh */
    size_t nsys, syscap;
    bool sys_unsorted;
    /* the per-step system figures of the steps whose readings are all in
     * (system.c): kept from one refresh to the next, so a refresh costs
     * the new steps, not all of them (4.3 M steps: 1.2 s a refresh) */
    struct {
        bool valid;
        size_t upto;            /* steps [0, upto) summed */
        uint64_t fin;           /* ... each ending before this reading time */
        uint64_t first_ts;      /* the first reading's time then */
        double sum[6];
        uint64_t cnt[6], steps;
    } sys_acc;
    prism_system_stats sys_stats;
    bool mem_unsorted;          /* one arrived before the last: sorted at refresh */

    /* CUDA allocations and frees (alloc.c), sorted by time at refresh, and
     * the span of all GPU records (CUPTI recording) */
    struct an_alloc_ev *galloc;
    size_t ngalloc, galloc_cap;
    bool galloc_unsorted;
    bool galloc_any;
    uint64_t galloc_first, galloc_last;

    /* GPU */
    bool gpu_present;
    bool rings;                 /* threads keep region transitions */
    char gpu_status[160];
    char torch_device[96];      /* INFO torch.device (the operator window's GPU) */
    char torch_dtype[16];       /* INFO torch.ops.dtype (flop_steps: no operator names) */
    char torch_autocast[48];    /* INFO torch.autocast: "cpu bfloat16", "" when not seen */
    uint64_t torch_optimizers;  /* INFO torch.optimizers: how many stepped (>= 2), else 0 */
    bool torch_inference;       /* INFO torch.steps "inference": an inference loop's steps */
    uint64_t eval_passes, eval_span_ns;     /* INFO torch.eval.passes / .span_ns */
    double peak_tflops;         /* INFO torch.peak_tflops (PRISM_PEAK_TFLOPS); 0 none */
    pb_map kernel_of;           /* name id -> index into kstat */
    prism_kernel_stat *kstat;
    uint32_t *kname;            /* name id per kstat */
    size_t nk, kcap;
    prism_copy_stat cstat[64];
    size_t nc;
    uint64_t kernel_ns, copy_ns, memset_ns, sync_ns, api_ns, launches, small;
    uint64_t comm_kernel_ns, comm_launches;     /* NCCL's, of the above */
    uint64_t gpu_first, gpu_last;
    seg *busy;                  /* disjoint, sorted */
    size_t nbusy, bcap;
    uint64_t busy_closed;       /* busy time of segments folded away */
    uint64_t closed_until;      /* intervals before this are folded */
    pb_map dropped_of;          /* stream << 1 | source -> cumulative */
    pb_map dropped_regions_of;  /* stream -> whole regions dropped, cumulative */
    bool drops_single;          /* a CPU drop without a region count (< 1.1) */
    uint64_t unrec_placed;      /* UNRECORDED regions put under a node */
    pb_map corr_node;           /* correlation -> thread << 32 | node (API seen) */
    pb_map corr_wait;           /* correlation -> device ns waiting for its API */
    struct api_wait *apis;      /* API calls newer than their thread's regions */
    size_t napi, apicap;
    uint64_t gpu_unattributed;  /* device ns whose launching region is unknown */
    uint64_t gpu_launch_unknown;    /* kernels whose launch never came (resolved) */

    /* CPU samples (cpu.c): the pass being gathered */
    prism_cpu_sample *pass;
    size_t npass, passcap;
    bool cpu_present;
    uint64_t cpu_t0, cpu_t1;    /* the first and last CPU sample's time */
    bool cpu_timed;             /* ... set */
    prism_cpu_load cpu_load;    /* derived (load.c) */
    prism_worker_stats workers; /* derived (workers.c) */
    char worker_transform[128];
    /* INFO dataloader.* (the Python module): settings, -1 unknown */
    int64_t dl_num_workers, dl_prefetch, dl_persistent, dl_pin, dl_batch;
    uint64_t dl_starts, dl_startup_ns;
    char cpu_status[96];        /* INFO cpu.sampler */
    uint32_t step_stream;       /* INFO steps.thread, 0: unknown */
    uint64_t world_size;        /* INFO job.world_size, 0: unknown */
    /* INFO torch.modules.* (prism.torch's adaptive module regions) */
    prism_folded folded;        /* names -> folded_names, why -> folded_why */
    bool have_folded;           /* torch.modules.folded was given */
    char folded_names[PRISM_MAX_STRING_BYTES + 1];
    char folded_why[256];       /* INFO torch.modules.kept_why */
    size_t train;               /* derived: the training thread, SIZE_MAX: unknown */

    /* work counters (work.c) */
    pb_map work_of;             /* counter name id -> 1 flops, 2 bytes, 3 neither */
    prism_work_stats work;

    uint64_t events, unmatched_exits;
    uint64_t depth_damaged;     /* REGIONS chunks claiming a depth past the stack */
    uint64_t first_ts, last_ts;
    bool have_ts;
    bool footer;
    prism_footer foot;

    /* derived */
    prism_node *nodes;          /* all-threads tree */
    size_t nnodes, ncap;
    prism_tree tree;
    pb_itab node_by_hash;       /* merged node by path hash (an_tree_find) */
    prism_op *ops;
    size_t nops;
    uint32_t *tref_off;         /* per merged node: its thread nodes in tref */
    uint64_t *tref;             /* thread index << 32 | node index */
    prism_step_stats step_stats;
    prism_memory_stats mem_stats;
    prism_gpu_stats gpu_stats;
    prism_bottleneck *bn;
    size_t nbn;
    uint64_t *slow;             /* the slow steps' indices (rules_slow_find) */
    size_t nslow;
    rules_slow slow_f;          /* ... and the finding's figures */
    struct an_stacks *stk;      /* sampled call stacks (stacks.c), or NULL */
};

/* A node's side records (tnode.ext, tnode.cpu): NULL when it has none. */
static inline const tnode_ext *an_ext(const athread *t, const tnode *nd)
{
    return nd->ext ? (const tnode_ext *)an_pool_at(&t->ext, sizeof(tnode_ext), nd->ext) : NULL;
}
static inline const tnode_cpu *an_cpu(const athread *t, const tnode *nd)
{
    return nd->cpu ? (const tnode_cpu *)an_pool_at(&t->cpus, sizeof(tnode_cpu), nd->cpu) : NULL;
}
/* ... for writing, created (zeroed) on first use; NULL without memory.
 * A record never moves: pointers to it stay valid while others are made. */
tnode_ext *an_ext_get(athread *t, tnode *nd);
tnode_cpu *an_cpu_get(athread *t, tnode *nd);

/* tree.c */
void an_tree_regions(prism_analysis *a, uint32_t stream, uint32_t depth,
                  const prism_region_event *ev, size_t n);
/* The ring of transitions (tree.c): started small, doubled while it has
 * not wrapped (an_ring_grow, false without memory: it wraps where it is). */
void an_ring_start(athread *t);
bool an_ring_grow(athread *t);
static inline void an_ring_put(athread *t, uint64_t ts, uint32_t node)
{
    if (__builtin_expect(t->nring == t->rcap, 0) && t->rcap < TRANS_RING)
        an_ring_grow(t);
    t->ring[t->nring++ & (t->rcap - 1)] = (trans){ ts, node };
}
athread *an_tree_thread(prism_analysis *a, uint32_t stream);
void an_tree_attribute(prism_analysis *a, athread *t, uint32_t node, bool leaf, uint64_t start,
                    uint64_t dur);
/* Fold the step being filled into the lead statistics (at refresh). */
void an_tree_lead_fold(athread *t);
void an_tree_resolve_pending(prism_analysis *a);
void an_tree_merge(prism_analysis *a);
/* The merged node with this path hash, or PRISM_NO_NODE (after the merge). */
uint32_t an_tree_find(const prism_analysis *a, uint64_t path_hash);
/* How many threads' nodes make up a merged node (after an_tree_merge). */
uint32_t an_tree_node_threads(const prism_analysis *a, uint32_t node);
const char *an_tree_name(const prism_analysis *a, uint32_t name_id);
void an_tree_free_thread(athread *t);
/* The node open on thread t at time ts (PRISM_NO_NODE if unknown). */
uint32_t an_tree_node_at(const athread *t, uint64_t ts);
/* The same for a sample (a counter) taken at ts: exits stamped exactly at
 * ts were recorded after it (tree.c). */
uint32_t an_tree_node_at_sample(const athread *t, uint64_t ts);
/* UNRECORDED records: regions not recorded under the region open at their
 * depth on the stream, as it stands now (the chunk comes in order). */
void an_tree_unrecorded(prism_analysis *a, uint32_t stream, const prism_unrecorded *u, size_t n);

/* stacks.c: sampled call stacks (STACKS chunks).  A sample as kept: its
 * thread (index into threads) and the node open there at its time
 * (PRISM_NO_NODE: outside every region), its weight in ns. */
typedef struct an_stack_sample {
    uint64_t ts, w;
    uint32_t stream, leaf, flags, thread, node;
} an_stack_sample;
typedef struct an_stack_where {
    char text[600];             /* "f (a.py:1) -> g (b.py:2)"; "" if no path holds half */
    double share;               /* of the chosen weight, the named path's */
    double weight_ns;           /* the chosen samples' weight */
    double blocked;             /* of it, blocked in a system call (0..1) */
    uint64_t samples;
} an_stack_where;
void an_stacks_info(prism_analysis *a, const char *key, const prism_value *v);
void an_stacks_samples(prism_analysis *a, const prism_stack_sample *s, size_t n);
const an_stack_sample *an_stacks_all(const prism_analysis *a, size_t *n);
bool an_stacks_where(const prism_analysis *a, bool (*pick)(void *ctx, const an_stack_sample *s),
                     void *ctx, an_stack_where *out);
void an_stacks_free(prism_analysis *a);
/* What thread's samples outside every step were doing. */
bool an_stacks_outside_steps(const prism_analysis *a, size_t thread, an_stack_where *out);
/* After the merge: the sampled paths under each merged node
 * (prism_analysis_sampled); unpublish frees them. */
void an_stacks_publish(prism_analysis *a);
/* ... and the all-threads tree with them as nodes (prism_analysis_tree_sampled) */
void an_stacks_augment(prism_analysis *a);
void an_stacks_unpublish(prism_analysis *a);
/* unattributed.c: the `(outside regions)` node of a thread */
#define AN_OUTSIDE_NAME "(outside regions)"
/* A thread's node j: one of its nodes, or (j == t->n) its outside node. */
static inline const tnode *an_tnode(const athread *t, size_t j)
{
    return j < t->n ? &t->nodes[j] : &t->out;
}
/* A root region enters at ts on thread t (its depth was 0): the time since
 * the last root region ended is outside regions. */
void an_out_enter(prism_analysis *a, athread *t, uint64_t ts);
/* Gaps waiting for their steps, resolved as far as the steps known allow;
 * `final` (the profile is complete): the thread's time after its last
 * root region, too. */
void an_out_resolve(prism_analysis *a, bool final);
/* cpu.c's share of an interval outside regions (span, on-CPU, run queue,
 * busy-weighted): the part inside sampled steps moves to the outside
 * node, by the pieces in t->oseg. */
void an_out_cpu(prism_analysis *a, athread *t, uint64_t span, double on, double wait,
                double blk, double busy);
/* Publish the outside node as a public one (statistics; no cpu, links). */
void an_out_publish(const athread *t, prism_node *p);
/* A call [lo, hi) of node that began outside every sampled step (tree.c):
 * its time inside sampled steps, now or once they are known. */
void an_out_span(prism_analysis *a, athread *t, uint32_t node, uint64_t lo, uint64_t hi);
/* That time of node `node` of thread `thread` (its index in the thread
 * trees), all its calls; 0 for the `(outside regions)` node. */
uint64_t an_out_spanned(const prism_analysis *a, size_t thread, uint32_t node);
void an_out_free(athread *t);

/* samples.c: per-step samples of a call path (see prism_analysis_node_step_samples) */
typedef struct reservoir reservoir;
/* Keep the k-th (from 0) closed step's sum v of nd, a node of t (or its
 * outside node); called when k == nd->res_next (rarely, once the
 * reservoir is full: cold).  On allocation failure the value is dropped. */
__attribute__((cold)) void an_res_take(const athread *t, tnode *nd, uint64_t k, double v);

/* A node's per-step folding, shared by tree.c's hot loop and merge.c's
 * snapshot of the step being filled. */
/* Fold one step's time into a node's per-step moments. */
static inline void step_fold(tnode *nd, uint64_t sum)
{
    double v = (double)sum;
    if (!nd->steps_seen)
        nd->step_shift = v;
    nd->steps_seen++;
    double d = v - nd->step_shift;
    nd->step_s1 += d;
    nd->step_s2 += d * d;
    if (v > nd->step_max)
        nd->step_max = v;
}

/* Close a step of a node: its moments, and its reservoir when this sum is
 * one to keep (the first PRISM_STEP_SAMPLES, then rarer and rarer: a
 * compare per step in the common case). */
static inline void step_close(const athread *t, tnode *nd, uint64_t sum)
{
    if (!sum)
        return;
    uint64_t k = nd->steps_seen;
    step_fold(nd, sum);
    if (__builtin_expect(k == nd->res_next, 0))    /* the call kept off the hot path */
        an_res_take(t, nd, k, (double)sum);
}

void an_res_free(tnode *nd);

/* series.c */
void an_series_steps(prism_analysis *a, const prism_step *s, size_t n);
void an_series_sort_steps(prism_analysis *a);
void an_series_memory(prism_analysis *a, const prism_memory_sample *m);
/* system.c: a sample's system readings (1.3), and the run's figures */
void an_system_sample(prism_analysis *a, const prism_memory_sample *m);
void an_system_refresh(prism_analysis *a);
/* Who used the CPUs (load.c): a->cpu_load from the memory and CPU samples;
 * after the series are refreshed. */
void an_cpu_load(prism_analysis *a);
/* The DataLoader workers (workers.c): a->workers from the worker threads'
 * trees and the INFO dataloader.* facts; after the trees are merged. */
void an_workers_refresh(prism_analysis *a);
void an_workers_info(prism_analysis *a, const char *key, const prism_value *v);
void an_series_refresh(prism_analysis *a);
/* After it: the timed steps' durations, ascending (*n of them; NULL when
 * they could not be kept), and their sum in step order. */
const uint64_t *an_series_durations(const prism_analysis *a, size_t *n, double *sum);
/* Leak fits for host and GPU memory with the effective threshold. */
void an_series_leaks(prism_analysis *a, double threshold_mb);

/* alloc.c: the live bytes of CUDA allocations at step ends */
typedef struct an_alloc_ev {
    uint64_t ts, address, bytes;
    uint64_t seq;               /* arrival, the tie-break when sorting */
    uint32_t device;
    bool free;
} an_alloc_ev;
/* Keep the ALLOC/FREE records of device memory and the span of all GPU
 * records. */
void an_alloc_records(prism_analysis *a, const prism_gpu_record *g, size_t n);
/* The leak fit of live allocated bytes at each step's end vs step (steps
 * sorted); no fit without allocation records. */
void an_alloc_fit(prism_analysis *a, double threshold_mb, prism_leak *out);
void an_alloc_free(prism_analysis *a);

/* gpu.c */
/* A communication kernel by its name: NCCL's (and RCCL's, which keeps the
 * names), "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" (NCCL >= 2.19),
 * "ncclKernel_AllReduce_RING_LL_Sum_float" (before), any case; a "void "
 * before it or a mangled "_Z<len>" (not demangled) is skipped. */
bool an_gpu_comm_kernel(const char *name);
void an_gpu_records(prism_analysis *a, const prism_gpu_record *g, size_t n);
/* Keep region transitions on every thread from now on (GPU work will be
 * tied to the region open at its API call, work counter samples to the
 * region open at their timestamp). */
void an_gpu_want_rings(prism_analysis *a);
/* Tie waiting API calls to their regions now that more regions are known;
 * `final`: the profile is complete, use what is known. */
void an_gpu_resolve(prism_analysis *a, bool final);
void an_gpu_refresh(prism_analysis *a);

/* cpu.c: on-CPU / run-queue / blocked time of regions from CPU samples */
void an_oncpu_samples(prism_analysis *a, const prism_cpu_sample *s, size_t n);
/* Credit the pass still gathered (at refresh: its records are all in). */
void an_oncpu_flush(prism_analysis *a);
/* Free the pass buffer (threads free their own scratch). */
void an_oncpu_free(prism_analysis *a);
/* Solve every thread's regression (at refresh, after an_oncpu_flush). */
void an_oncpu_solve(prism_analysis *a);
/* A node's own accounting as published: covered span, on CPU, run queue,
 * blocked, blocked while others were busy (ns). */
typedef struct oncpu_self_t { uint64_t known, on, runq, off, busy; } oncpu_self_t;
oncpu_self_t an_oncpu_self(const athread *t, const tnode *nd);

/* work.c: counters named flops / bytes */
void an_work_string(prism_analysis *a, uint32_t id, const char *s, size_t len);
void an_work_counters(prism_analysis *a, uint32_t stream, const prism_counter *c, size_t n);
void an_work_refresh(prism_analysis *a);

/* Dropped totals come from the file: a hostile one may claim 2^64-1 on
 * several streams, and sums saturate instead of wrapping. */
static inline uint64_t an_sat_add(uint64_t x, uint64_t y)
{
    return y > UINT64_MAX - x ? UINT64_MAX : x + y;
}

/* A non-negative double rounded to ns, saturating: near 2^64 the double
 * rounds up to 2^64 itself, which no uint64_t holds (a conversion the
 * compare fuzzer reached through a region of ~2^64 ns inside a step). */
static inline uint64_t an_ns_round(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)(x + 0.5 >= 18446744073709551615.0 ? x : x + 0.5);
}

#endif
