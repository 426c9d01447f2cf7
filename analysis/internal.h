/*
 * analysis/internal.h - the analysis object and its parts (internal).
 *
 * Streaming state: one call tree per thread (nodes keyed by parent and
 * name id), each thread's open-region stack, steps, memory samples and GPU
 * aggregates.  Derived state (the all-threads tree, ops, statistics,
 * bottlenecks) is rebuilt by prism_analysis_refresh() from the streaming
 * state, whose size depends on call paths and samples (steps, memory
 * samples), not on events: per-step figures of a call path are streaming
 * moments, not a vector per path.
 */
#ifndef PRISM_ANALYSIS_INTERNAL_H
#define PRISM_ANALYSIS_INTERNAL_H

#include "prism/analysis.h"

/* ---- a map from 64-bit keys to 64-bit values (open addressing) ---- */
typedef struct u64map {
    uint64_t *keys;             /* key + 1; 0 = empty */
    uint64_t *vals;
    size_t cap, count;
} u64map;

bool u64map_get(const u64map *m, uint64_t key, uint64_t *val);
/* Insert or overwrite; false on allocation failure. */
bool u64map_put(u64map *m, uint64_t key, uint64_t val);
/* The slot of key's value, inserting 0 if absent; NULL on failure. */
uint64_t *u64map_slot(u64map *m, uint64_t key);
void u64map_free(u64map *m);

/* A growable array: ensure room for one more element of `size` bytes. */
bool vec_reserve(void **p, size_t *cap, size_t need, size_t size);

#define MAX_STACK 256u
#define CHILD_CACHE_BITS 10u

typedef struct tnode {
    uint32_t parent, first_child, next_sibling;
    uint32_t name;              /* reader string id; 0 = "(unknown)" */
    uint32_t depth;
    uint32_t merged;            /* its node in the all-threads tree */
    uint64_t calls, total, self, min, max;
    double shift, s1, s2;       /* sums of (duration - shift), and squares */
    /* per sampled step: the sum of the step being filled, then shifted
     * moments of the steps already closed (constant size per call path) */
    uint32_t step_cur;          /* its sampled position + 1; 0: none */
    uint64_t step_sum;
    uint64_t steps_seen;        /* closed steps with time in them */
    double step_shift, step_s1, step_s2, step_max;
    uint64_t gpu_ns, gpu_launches;  /* GPU work launched directly inside */
    double flops, bytes;        /* work counters recorded directly inside */
} tnode;

/* A change of the innermost open region of a thread, for finding the
 * region open when a GPU API call was made. */
typedef struct trans {
    uint64_t ts;
    uint32_t node;
} trans;

#define TRANS_RING 65536u

typedef struct frame {
    uint32_t node;
    uint64_t start, child;
} frame;

typedef struct pend {
    uint32_t node;
    uint64_t start, dur;
} pend;

typedef struct athread {
    uint32_t stream;
    char name[64];
    tnode *nodes;
    size_t n, cap;
    u64map child;               /* (parent + 1) << 32 | name -> node */
    uint64_t ckey[1u << CHILD_CACHE_BITS];  /* a direct-mapped cache in front */
    uint32_t cval[1u << CHILD_CACHE_BITS];
    frame stack[MAX_STACK];
    uint32_t depth;             /* frames in stack */
    uint32_t lost;              /* frames deeper than MAX_STACK */
    pend *pending;              /* completions waiting for their step */
    size_t npend, pcap;
    size_t last_step;           /* index of the step found last (cache) */
    uint64_t step_lo, step_hi;  /* ... its time range, and sampled position */
    uint32_t step_pos;
    trans *ring;                /* recent transitions (once GPU data exists) */
    uint64_t nring;             /* transitions written in total */
    prism_node *pub;            /* derived per-thread tree */
    prism_tree tree;
} athread;

typedef struct api_wait {
    uint64_t corr, start;
    uint32_t thread;            /* index into threads */
} api_wait;

typedef struct seg {
    uint64_t start, end;
} seg;

struct prism_analysis {
    prism_analysis_opts opts;
    prism_reader *reader;
    bool own_reader;

    athread **threads;
    size_t nthreads, tcap;
    u64map thread_of;           /* stream -> index */

    prism_step *steps;          /* in arrival (index) order */
    size_t nsteps, scap;
    uint32_t *sampled_pos;      /* per step: position among sampled, or UINT32_MAX */
    size_t nsampled;
    bool steps_unused;          /* no steps seen while much was pending */

    prism_mem_point *mem;
    size_t nmem, mcap;

    /* GPU */
    bool gpu_present;
    bool rings;                 /* threads keep region transitions */
    char gpu_status[160];
    u64map kernel_of;           /* name id -> index into kstat */
    prism_kernel_stat *kstat;
    uint32_t *kname;            /* name id per kstat */
    size_t nk, kcap;
    prism_copy_stat cstat[64];
    size_t nc;
    uint64_t kernel_ns, copy_ns, memset_ns, sync_ns, api_ns, launches, small;
    uint64_t gpu_first, gpu_last;
    seg *busy;                  /* disjoint, sorted */
    size_t nbusy, bcap;
    uint64_t busy_closed;       /* busy time of segments folded away */
    uint64_t closed_until;      /* intervals before this are folded */
    u64map dropped_of;          /* stream << 1 | source -> cumulative */
    u64map corr_node;           /* correlation -> thread << 32 | node (API seen) */
    u64map corr_wait;           /* correlation -> device ns waiting for its API */
    struct api_wait *apis;      /* API calls newer than their thread's regions */
    size_t napi, apicap;
    uint64_t gpu_unattributed;  /* device ns whose launching region is unknown */

    /* work counters (work.c) */
    u64map work_of;             /* counter name id -> 1 flops, 2 bytes, 3 neither */
    prism_work_stats work;

    uint64_t events, unmatched_exits;
    uint64_t first_ts, last_ts;
    bool have_ts;
    bool footer;
    prism_footer foot;

    /* derived */
    prism_node *nodes;          /* all-threads tree */
    size_t nnodes, ncap;
    prism_tree tree;
    u64map merged_of;           /* (parent + 1) << 32 | name -> merged node */
    u64map node_by_hash;        /* path hash -> merged node */
    prism_op *ops;
    size_t nops;
    uint32_t *tref_off;         /* per merged node: its thread nodes in tref */
    uint64_t *tref;             /* thread index << 32 | node index */
    prism_step_stats step_stats;
    prism_memory_stats mem_stats;
    prism_gpu_stats gpu_stats;
    prism_bottleneck *bn;
    size_t nbn;
    char **name_cache;          /* resolved names of merged nodes */
};

/* tree.c */
void tree_regions(prism_analysis *a, uint32_t stream, uint32_t depth,
                  const prism_region_event *ev, size_t n);
athread *tree_thread(prism_analysis *a, uint32_t stream);
void tree_attribute(prism_analysis *a, athread *t, uint32_t node, uint64_t start, uint64_t dur);
void tree_resolve_pending(prism_analysis *a);
void tree_merge(prism_analysis *a);
/* How many threads' nodes make up a merged node (after tree_merge). */
uint32_t tree_node_threads(const prism_analysis *a, uint32_t node);
const char *tree_name(const prism_analysis *a, uint32_t name_id);
void tree_free_thread(athread *t);
/* The node open on thread t at time ts (PRISM_NO_NODE if unknown). */
uint32_t tree_node_at(const athread *t, uint64_t ts);

/* series.c */
void series_steps(prism_analysis *a, const prism_step *s, size_t n);
void series_memory(prism_analysis *a, const prism_memory_sample *m);
void series_refresh(prism_analysis *a);
/* Leak fits for host and GPU memory with the effective threshold. */
void series_leaks(prism_analysis *a, double threshold_mb);

/* gpu.c */
void gpu_records(prism_analysis *a, const prism_gpu_record *g, size_t n);
/* Keep region transitions on every thread from now on (GPU work will be
 * tied to the region open at its API call, work counter samples to the
 * region open at their timestamp). */
void gpu_want_rings(prism_analysis *a);
/* Tie waiting API calls to their regions now that more regions are known;
 * `final`: the profile is complete, use what is known. */
void gpu_resolve(prism_analysis *a, bool final);
void gpu_refresh(prism_analysis *a);

/* work.c: counters named flops / bytes */
void work_string(prism_analysis *a, uint32_t id, const char *s, size_t len);
void work_counters(prism_analysis *a, uint32_t stream, const prism_counter *c, size_t n);
void work_refresh(prism_analysis *a);

#endif
