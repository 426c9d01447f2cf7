/*
 * prism/analysis.h - what a profile means, computed once and shared by the
 * reports and the explorer.  No terminal code.
 *
 * An analysis is built streaming from the reader (it supplies the reader's
 * callbacks) and can be updated incrementally as more chunks arrive: call
 * prism_analysis_refresh() whenever derived results (merged tree, step
 * statistics, leak fit, GPU aggregates, bottlenecks) should be brought up to
 * date.  Memory grows with distinct call paths, steps and memory samples,
 * never with the number of events.
 *
 * Pointers returned by the getters are owned by the analysis and valid until
 * the next feed or refresh (or free).  compare and the gate: prism/compare.h.
 */
#ifndef PRISM_ANALYSIS_H
#define PRISM_ANALYSIS_H

#include "prism/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PRISM_NO_NODE UINT32_MAX

typedef struct prism_analysis_opts {
    double bottleneck_threshold_pct;   /* hot_operation threshold; <0: from file or 10 */
    double leak_threshold_mb;          /* MB per step: a slope above it with a good
                                          fit is a leak by itself (a fast leak);
                                          slower growth needs the evidence of
                                          prism_leak_fit; <0: from file or 10     */
    double ridge_flop_per_byte;        /* memory_bound below this compute intensity
                                          (FLOP/byte, from flops/bytes counters);
                                          <=0: 10                                      */
    double carbon_g_per_kwh;           /* grams of CO2e per kWh, as the user gives it
                                          (analyze --carbon-intensity): the system
                                          figures' carbon is energy times it; <=0:
                                          none (PRISM never guesses an intensity)      */
} prism_analysis_opts;

/* One node of a call tree: a call path. */
typedef struct prism_node {
    uint32_t parent;           /* PRISM_NO_NODE for a root                      */
    uint32_t first_child, next_sibling;   /* PRISM_NO_NODE when none            */
    const char *name;          /* borrowed from the analysis                    */
    uint64_t path_hash;        /* stable id of the path (names, not ids)        */
    uint32_t depth;            /* roots are depth 0                             */
    uint32_t thread;           /* stream id; 0 in the all-threads tree          */
    uint64_t calls;
    uint64_t total_ns;         /* inclusive                                     */
    uint64_t self_ns;          /* exclusive                                     */
    uint64_t min_ns, max_ns;
    double mean_ns, std_ns;    /* per call                                      */
    double share;              /* total / profile total (0..1)                  */
    /* per step (over sampled steps in which the node ran at all; in the
     * all-threads tree a path that ran on several threads counts each
     * thread's step as a sample: time per step and thread) */
    uint64_t steps_seen;
    double step_mean_ns, step_std_ns, step_max_ns;
    uint64_t gpu_ns;           /* GPU time of kernels/copies launched inside    */
    uint64_t gpu_launches;
    /* work counters (counters named "flops" / "bytes", see prism_work_stats)
     * recorded while this node was open, inclusive of its children */
    double flops, bytes;
    /* Time inside sampled steps of its calls that started in one, each up
     * to its step's end: the numerator of its share of the training step. */
    uint64_t in_step_ns;
    /* Scheduler accounting from the profile's CPU samples, inclusive of
     * children; all 0 without samples.  Of the region's time covered by
     * samples (cpu_known_ns), oncpu_ns ran on a CPU, runq_ns was runnable
     * but waiting for a CPU (preempted: contention), offcpu_ns was blocked
     * (sleep, I/O, a lock or condition wait, a synchronisation), and
     * offcpu_busy_ns is the blocked time weighted by how busy the other
     * threads were meanwhile (capped at one core). */
    uint64_t cpu_known_ns, oncpu_ns, runq_ns, offcpu_ns, offcpu_busy_ns;
    /* Time blocking CUDA calls made inside it waited for the GPU
     * (synchronisations, synchronous copies), from the GPU records. */
    uint64_t gpu_wait_ns;
    /* Sampled steps whose earliest leaf call lies inside it: a region at the
     * start of the step's work (where a batch is usually fetched). */
    uint64_t lead_steps;
    /* Regions the collector could not record under this node (its buffer
     * was full: whole regions, enter, exit and all inside, were left
     * out), inclusive of its children's; where the file says so (format
     * 1.1 UNRECORDED records), else 0.  Its calls and times leave them out. */
    uint64_t unrecorded;
    /* Of `calls`, those still open when the analysis was refreshed (a live
     * profile, or a file cut short): each counts as a call in progress with
     * its time up to the newest record in total_ns and self_ns, so a parent
     * never shows fewer calls or less time than its children; the per-call
     * figures (min, max, mean, std) are of finished calls only. */
    uint64_t open_calls;
    uint32_t flags;            /* PRISM_NODE_*                                  */
} prism_node;

/* prism_node.flags */
/* `(outside regions)`: the step time on the training thread (the thread
 * that marks the steps) that no root region holds, inside sampled steps
 * only: a synthetic root, merged into the all-threads tree and the ops like
 * any path.  Its calls are the steps in which it is > 0 and its per-call
 * figures are per step; its scheduler accounting is that of the CPU
 * samples over exactly those gaps. */
#define PRISM_NODE_UNATTRIBUTED (1u << 0)
/* A call path from the low-rate Python stack sampler; its time is an
 * estimate inside its parent's self time.  (Reserved.) */
#define PRISM_NODE_SAMPLED (1u << 1)

typedef struct prism_tree {
    const prism_node *nodes;   /* nodes[0..count); children follow parents      */
    size_t count;
    uint32_t first_root;       /* PRISM_NO_NODE for an empty tree               */
    uint64_t total_ns;         /* sum of root totals                            */
} prism_tree;

/* A flat operation: every node with the same name, all threads. */
typedef struct prism_op {
    const char *name;
    uint64_t calls, total_ns, self_ns;
    double share;              /* total / profile total                         */
    uint32_t node;             /* its heaviest node in the all-threads tree     */
} prism_op;

/*
 * Step statistics.  A damaged or hostile file can hold steps that make no
 * sense; each kind is counted, none is dropped from `series` or `count`
 * (steps stay where their index puts them), and a step counts under at most
 * one of the first three:
 *   bad_order    its end precedes its start: kept with its end moved to its
 *                start, so it has no duration (left out of the duration
 *                statistics: total, mean, percentiles) and holds no regions
 *   zero_len     its end equals its start: left out of them as well (no
 *                work can be timed in it; a coarse clock or a bare marker)
 *   overlapping  it starts before an earlier step (in start order) ended:
 *                kept, its own duration is real; the time shared with the
 *                other step counts twice in total_ns
 *   dup_index    its index repeats one an earlier step had: kept
 */
typedef struct prism_step_stats {
    uint64_t count, sampled;
    uint64_t timed;            /* steps behind the duration statistics          */
    uint64_t total_ns;         /* sum of their durations (saturating)           */
    double mean_ns, p50_ns, p95_ns, max_ns, std_ns;
    uint64_t bad_order, zero_len, overlapping, dup_index;
    const prism_step *series;  /* every step, in start order                    */
    size_t nseries;
    uint64_t op_steps;         /* steps in the operator window (PRISM_STEP_OPS):
                                  counted, left out of timed and the durations */
} prism_step_stats;

/* The leak verdict on one memory series (prism_leak_fit says how). */
typedef enum prism_leak_verdict {
    PRISM_LEAK_NONE = 0,       /* flat, falling, noise, or a rise that stopped  */
    PRISM_LEAK_GROWING,        /* rising significantly, not proven a leak       */
    PRISM_LEAK_YES             /* a leak                                        */
} prism_leak_verdict;

typedef struct prism_leak {
    bool have_fit;             /* enough points to fit                          */
    size_t points;             /* samples counted for a step (allocations: step
                                  ends)                                         */
    double slope_mb_per_step;
    double slope_se_mb;        /* standard error of the slope, MB/step          */
    double t;                  /* slope / its standard error; +-INFINITY for
                                  an exact line, 0 without a fit                */
    double r2;                 /* fit quality 0..1                              */
    double start_mb, end_mb;   /* the fitted line at the first and last point
                                  (the samples themselves without a fit)        */
    double growth_mb;          /* end_mb - start_mb: growth over the run        */
    double growth_pct;         /* ... in % of start_mb; NAN below a 1 MB start  */
    uint64_t span_steps;       /* last point's step - first point's step        */
    /* the middle and last third of the points fitted on their own; NAN
     * below 12 points (a leak keeps rising, a warm-up flattens) */
    double mid_slope_mb_per_step, late_slope_mb_per_step;
    /* the fitted line carried on: memory projection_steps after the last
     * point; to the end of the epoch when the analysis knows epochs
     * (projection_epoch), else 1000 steps */
    uint64_t projection_steps;
    bool projection_epoch;
    double projected_mb;
    prism_leak_verdict verdict;
    const char *reason;        /* the verdict's reason in a few words (static)  */
    bool leak;                 /* verdict == PRISM_LEAK_YES                     */
} prism_leak;

/* One memory sample as the analysis keeps it: GPU figures summed over the
 * devices (a file's sample carries up to PRISM_MAX_GPUS slots; keeping
 * only the sums makes a sample 48 bytes instead of about 400). */
typedef struct prism_mem_point {
    uint64_t ts;
    uint64_t step;             /* PRISM_NO_STEP: periodic sample                */
    uint64_t rss;              /* host resident set, bytes                      */
    uint64_t gpu_used, gpu_reserved;  /* all devices, bytes (saturating sums)   */
    uint32_t cpu_permille;     /* process CPU, 1000 = one core; PRISM_NO_CPU    */
    uint32_t ngpu;             /* devices reported; 0: no GPU figures           */
    /* the machine's load (format 1.2), since the previous sample with ncpu
     * nonzero; ncpu 0: not read at this sample */
    uint32_t ncpu;
    uint32_t host_busy_permille;       /* PRISM_NO_CPU: unknown                */
    uint32_t children_cpu_permille;    /* PRISM_NO_CPU: unknown                */
} prism_mem_point;

typedef struct prism_memory_stats {
    const prism_mem_point *samples;       /* in time order                     */
    size_t count;
    uint64_t peak_rss, peak_gpu_used, peak_gpu_reserved;
    bool have_gpu;
    /* The host figure (rss, peak_rss, host) is not the process's resident
     * set but the bytes its allocator holds: an imported torch.profiler
     * trace's [memory] "Total Allocated" (torch's CPU allocator), all a
     * trace records of host memory.  Say which with prism_memory_host_name. */
    bool host_allocated;
    /* Memory samples against the step they count for: their own (taken at a
     * step boundary) or, taken between boundaries, the step most recently
     * started before them (none before the first step or after the last
     * ended). */
    prism_leak host;           /* host RSS vs step                              */
    prism_leak gpu;            /* GPU used (all devices) vs step                */
    /* The CUDA allocations the file recorded (GPU ALLOC/FREE records of device
     * memory, frees matched by address): their live bytes at each step's end
     * vs step.  Exact at every step where `gpu` is sampled now and then and
     * holds whatever else the process uses, so it is the GPU verdict when
     * present (prism_memory_gpu_leak).  have_gpu_alloc: the file has such
     * records. */
    bool have_gpu_alloc;
    prism_leak gpu_alloc;
} prism_memory_stats;

/* The GPU leak verdict to report: gpu_alloc when the file has allocation
 * records, unless it has no fit where gpu has one, or gpu proves a leak that
 * gpu_alloc does not show (memory outside the recorded allocations); else
 * gpu when there are GPU memory samples; else NULL.  *what (may be NULL):
 * its name in words, "GPU allocations" or "GPU used". */
PRISM_API const prism_leak *prism_memory_gpu_leak(const prism_memory_stats *m, const char **what);
/* The host memory figure in words: "host RSS", or for an imported trace
 * (host_allocated) "host allocated"; `peak` true: the label of its peak,
 * "Peak host RSS" or "Peak allocated (torch's CPU allocator, from the
 * trace)".  Static strings. */
PRISM_API const char *prism_memory_host_name(const prism_memory_stats *m, bool peak);

typedef struct prism_kernel_stat {
    const char *name;
    uint64_t count, total_ns;
    double mean_ns, share;     /* share of all kernel time                      */
    bool comm;                 /* a communication kernel: NCCL's (RCCL's)
                                  collectives and send/recv, by name
                                  (docs/GPU.md, "Communication kernels")      */
} prism_kernel_stat;

typedef struct prism_copy_stat {
    uint32_t copy_kind;        /* prism_copy_kind                               */
    uint32_t src_kind;         /* prism_mem_kind of the host side (pageable...) */
    uint64_t count, bytes, total_ns;
    double gb_per_s;
} prism_copy_stat;

typedef struct prism_gpu_stats {
    bool present;              /* any GPU record                                */
    const char *status;        /* INFO "gpu.status" when the file has one       */
    const prism_kernel_stat *kernels;     /* by total time, descending          */
    size_t nkernels;
    const prism_copy_stat *copies;
    size_t ncopies;
    uint64_t kernel_ns, copy_ns, memset_ns, sync_ns, api_ns;
    uint64_t busy_ns;          /* union of kernel/copy/memset intervals         */
    uint64_t span_ns;          /* first GPU start .. last GPU end               */
    double idle_share;         /* 1 - busy/span                                 */
    uint64_t launches;         /* kernels                                       */
    uint64_t small_kernels;    /* kernels shorter than 10 us                    */
    /* of kernel_ns and launches: the communication kernels' (comm above);
     * kernel_ns - comm_kernel_ns is compute */
    uint64_t comm_kernel_ns, comm_launches;
    uint64_t dropped;          /* GPU records dropped                           */
} prism_gpu_stats;

/*
 * Work counters: a counter whose name is "flops" or "bytes", or ends in
 * ".flops", "_flops", "/flops", ":flops" (and the same for bytes), any case,
 * counts work: each sample is the floating-point operations (or bytes
 * moved) done since the previous sample, recorded while the work's region
 * is open.  Samples are credited to the innermost region open on their
 * thread at their timestamp; the FLOP/byte ratio of a region is its compute
 * intensity, judged against the ridge point by the memory_bound rule.
 */
typedef struct prism_work_stats {
    bool present;              /* any work counter sample                       */
    double flops, bytes;       /* every sample                                  */
    double unattributed_flops, unattributed_bytes;  /* no region open known     */
    double intensity;          /* flops / bytes over the run; 0 without bytes   */
    double ridge;              /* FLOP/byte below which work is memory-bound    */
} prism_work_stats;

typedef enum prism_severity { PRISM_SEV_LOW = 0, PRISM_SEV_MEDIUM, PRISM_SEV_HIGH } prism_severity;

typedef enum prism_bottleneck_type {
    PRISM_BN_HOT_OPERATION, PRISM_BN_MEMORY_LEAK, PRISM_BN_CPU_GPU_SYNC,
    PRISM_BN_DATA_LOADING, PRISM_BN_GPU_IDLE, PRISM_BN_LAUNCH_BOUND,
    PRISM_BN_MEMORY_BOUND, PRISM_BN_DROPPED_EVENTS, PRISM_BN_OFF_CPU_WAIT,
    PRISM_BN_CPU_CONTENTION, PRISM_BN_SLOW_STEPS, PRISM_BN_UNATTRIBUTED,
    PRISM_BN_COMM_WAIT, PRISM_BN_IO_WAIT,
    PRISM_BN_TYPE_COUNT
} prism_bottleneck_type;

typedef struct prism_bottleneck {
    prism_bottleneck_type type;
    prism_severity severity;
    double share;              /* the measured share or slope behind it         */
    char description[160];
    char evidence[480];
    char recommendation[320];
    uint32_t node;             /* blamed node in the all-threads tree or NO_NODE */
    uint64_t path_hash;        /* its path, stable across reloads               */
    /* What fixing a wait is worth (the wait findings: data_loading,
     * cpu_gpu_sync, off_cpu_wait, io_wait, communication_wait): the mean sampled
     * step now, and without the wait's time in it (the step if the wait
     * were zero and nothing else moved); both 0 when not estimated. */
    double step_ns, step_without_ns;
    /* data_loading with the DataLoader's workers recorded: what they did
     * per batch and what the wait implies (one line, "" when not known),
     * and the step projected with workers_to workers (now workers_now; 0:
     * no projection) */
    char inside[320];
    uint32_t workers_now, workers_to;
    double step_with_workers_ns;
} prism_bottleneck;

/* Names for enums: "hot_operation", "HIGH". */
PRISM_API const char *prism_bottleneck_name(prism_bottleneck_type t);
PRISM_API const char *prism_severity_name(prism_severity s);

typedef struct prism_analysis prism_analysis;

/* NULL on allocation failure.  opts may be NULL (defaults). */
PRISM_API prism_analysis *prism_analysis_new(const prism_analysis_opts *opts);
PRISM_API void prism_analysis_free(prism_analysis *a);

/* The reader callbacks that feed this analysis; create the reader with
 * prism_reader_new(&cb, a).  Pass the reader back with
 * prism_analysis_attach so names can be resolved. */
PRISM_API void prism_analysis_callbacks(prism_reader_callbacks *cb);
PRISM_API void prism_analysis_attach(prism_analysis *a, prism_reader *r);

/* Convenience: read a whole file into a new analysis and refresh it.  On
 * error returns NULL and fills *err (status), msg (a one-line message,
 * written into msgbuf) and *offset. */
PRISM_API prism_analysis *prism_analyze_file(const char *path, const prism_analysis_opts *opts,
                                   prism_status *err, char *msgbuf, size_t msglen,
                                   uint64_t *offset);

/* Bring the derived results up to date with what has been fed. */
PRISM_API void prism_analysis_refresh(prism_analysis *a);

/* Getters (valid until the next feed, refresh or free). */
PRISM_API const prism_header *prism_analysis_header(const prism_analysis *a);
PRISM_API const prism_reader_stats *prism_analysis_reader_stats(const prism_analysis *a);
PRISM_API const prism_tree *prism_analysis_tree(const prism_analysis *a);   /* all threads */
/* The training thread (an index for prism_analysis_thread_tree): the
 * thread that marks the steps when the file says so, else the thread whose
 * steps' work starts as the steps begin; SIZE_MAX when neither tells. */
PRISM_API size_t prism_analysis_training_thread(const prism_analysis *a);

/* The sampled call stacks (format 1.2; the Python module's stack sampler):
 * how many, the time one stands for, the sampler's state in words
 * (borrowed).  False when the profile has none. */
typedef struct prism_stacks_info {
    uint64_t samples;
    uint64_t period_ns;
    uint64_t weight_ns;        /* the time the samples stand for, all threads */
    const char *status;        /* INFO stacks.sampler, "" when not given */
    uint64_t released;         /* samples read at a call that released the GIL
                                  after the thread ran Python since the pass
                                  was due, credited to its previous stack */
} prism_stacks_info;
PRISM_API bool prism_analysis_stacks_info(const prism_analysis *a, prism_stacks_info *out);

/* The sampled call paths under `node` of the all-threads tree (a region,
 * or `(outside regions)` inside the steps): what the Python stack samples
 * that fell in its own time were doing, a small tree of frames in
 * creation order (a parent before its children; parent PRISM_NO_NODE: a
 * first level under the node).  The first level starts at the frame every
 * one of these samples shares (its innermost such), so it names where the
 * node's own time went.  ns is an estimate (samples x the time each stands
 * for), scaled so the first level never holds more than the node's self
 * time: these are no recorded regions, and no total or finding counts them.
 * NULL and *n 0 when none; valid until the next refresh. */
typedef struct prism_sampled {
    uint32_t parent;           /* index into the returned array, or PRISM_NO_NODE */
    const char *name;          /* "write_metrics (train.py:88)", "[clock_nanosleep]" */
    double ns;                 /* estimated time, inclusive */
    uint64_t samples;
    double blocked;            /* of ns, blocked in a system call (0..1) */
} prism_sampled;
PRISM_API const prism_sampled *prism_analysis_sampled(const prism_analysis *a, uint32_t node,
                                                      size_t *n);
/* The all-threads tree with those sampled paths as nodes (flag
 * PRISM_NODE_SAMPLED) under the nodes they fell in, for views (the
 * explorer's Tree and Flame): the recorded nodes keep their indices (the
 * sampled ones follow them) and all their figures, their measured self
 * time included: their sampled children are an estimate of what that self
 * time was doing, not time taken from it (a node's self time and its
 * children's totals add up to more than its total where it has some).  A
 * sampled node's calls are its samples, its mean the time one stands for,
 * its self time its estimate less its sampled children's.  The tree's
 * total is unchanged.  The tree itself
 * (prism_analysis_tree) when the profile has no stack samples.  Valid until
 * the next refresh. */
PRISM_API const prism_tree *prism_analysis_tree_sampled(const prism_analysis *a);
/* The same for thread i's tree (prism_analysis_thread_tree) with the samples
 * of that thread only; shares stay of the thread's total.  Made when first
 * asked for (the first call for a thread after a refresh costs a pass over
 * the samples); the thread's tree itself when it has no samples, NULL when
 * there is no thread i.  Valid until the next refresh. */
PRISM_API const prism_tree *prism_analysis_thread_tree_sampled(const prism_analysis *a, size_t i);

/* The GPU the operator window's process ran on (INFO torch.device: torch's
 * name for it, e.g. "NVIDIA H100 80GB HBM3"), NULL when none; *peak_tflops
 * the peak the program was told to judge MFU against (INFO
 * torch.peak_tflops, PRISM_PEAK_TFLOPS), 0 when none. */
PRISM_API const char *prism_analysis_torch_device(const prism_analysis *a, double *peak_tflops);
/* How many optimizers stepped (INFO torch.optimizers, prism.torch: each
 * optimizer step ends a step, so two optimizers make two steps an
 * iteration), 0 when one or none said. */
PRISM_API uint64_t prism_analysis_torch_optimizers(const prism_analysis *a);
/* Whether the steps are an inference loop's iterations (INFO torch.steps
 * "inference": prism.torch in a program that made no optimizer and trained
 * nothing began a step at each of its batches or model forwards). */
PRISM_API bool prism_analysis_torch_inference(const prism_analysis *a);
/* The dtype holding most of the FLOPs of a FLOP count without operator
 * regions (INFO torch.ops.dtype: "bf16", "f32", ...), NULL when none. */
PRISM_API const char *prism_analysis_torch_dtype(const prism_analysis *a);

/* Is `name` an operator of the operator window (the file has steps in it,
 * PRISM_STEP_OPS, and the name reads "ns::op", maybe followed by " [shapes]"
 * and a dtype: "aten::mm [512x4096, 4096x128] f32")?  Its node holds that
 * operator's time in the window's steps only (prism_step_stats.op_steps). */
PRISM_API bool prism_analysis_is_op(const prism_analysis *a, const char *name);

/* The run's time outside its steps (wall span = steps + before the first +
 * between steps + after the last; overlapping steps counted once), and the
 * training thread's top-level regions holding most of it, by their time
 * outside steps (none unless every step was sampled).  False without steps
 * or timestamps (*o zeroed). */
#define PRISM_OUTSIDE_REGIONS 4
typedef struct prism_outside_region {
    const char *name;          /* borrowed from the analysis                    */
    uint64_t ns;
} prism_outside_region;
typedef struct prism_outside {
    uint64_t span_ns, steps_ns, before_ns, between_ns, after_ns;
    prism_outside_region regions[PRISM_OUTSIDE_REGIONS];
    size_t nregions;
    /* what the training thread's Python stack samples outside the steps
     * were doing ("evaluate (train.py:40) -> ... 81%"), "" without */
    char sampled[600];
    double sampled_ns;         /* the time those samples stand for */
    /* prism.torch's eval passes (INFO torch.eval.*): how many, and their
     * time from each one's first forward, batch or sync call to the end of
     * its last (the `eval` region holds only those); 0 when not said */
    uint64_t eval_passes, eval_span_ns;
} prism_outside;
PRISM_API bool prism_analysis_outside(const prism_analysis *a, prism_outside *o);
/* The denominator of every time share a verdict uses: the wall time (ns)
 * of the sampled steps on the training thread (their regions are the ones
 * recorded), or of the run when there are no steps; *steps gets the number
 * of steps behind it (0: the run). */
PRISM_API double prism_analysis_step_denominator(const prism_analysis *a, uint64_t *steps);
/* Whether the profile holds CPU samples (wait vs work is measured), and
 * the collector's words on them (INFO cpu.sampler, or NULL). */
PRISM_API bool prism_analysis_cpu_present(const prism_analysis *a);
/* The distributed job this profile is one rank of: *rank the header's
 * rank (-1: none), *world the number of ranks the job had (INFO
 * job.world_size; 0 when the file does not say).  True when the profile
 * is one rank of a larger job: a world size above 1, or, where the file
 * does not say, a rank above 0 (rank 0 alone may be a job of one). */
PRISM_API bool prism_analysis_job_rank(const prism_analysis *a, int64_t *rank, uint64_t *world);
PRISM_API const char *prism_analysis_cpu_status(const prism_analysis *a);
/* Adaptive zero-code module regions (the Python module's prism.torch;
 * INFO torch.modules.*): after `after_steps` steps measured with every
 * module, `folded` module regions lost their hooks, forward and backward
 * (their time from then on is their parent's self time), `kept` kept
 * them: those whose forward took at least threshold_ns a call (a multiple
 * of cost_ns, PRISM's cost per module call measured on that machine), and
 * the first root forward of a step.  names: the folded regions,
 * ", "-separated ("" when not given; borrowed from the analysis).  False
 * (*out zeroed) when the profile does not say: every module region was
 * kept, or no zero-code PyTorch instrumentation wrote it. */
typedef struct prism_folded {
    uint64_t after_steps, kept, folded, threshold_ns, cost_ns;
    const char *names;
    /* why nothing was folded (INFO torch.modules.kept_why: torch.compile
     * in use), "" when not said */
    const char *why;
} prism_folded;
PRISM_API bool prism_analysis_folded(const prism_analysis *a, prism_folded *out);
/* Per-thread trees: count, then each with its stream id and name. */
PRISM_API size_t prism_analysis_thread_count(const prism_analysis *a);
PRISM_API const prism_tree *prism_analysis_thread_tree(const prism_analysis *a, size_t i,
                                             uint32_t *stream, const char **name);
/* Whether thread i is a worker process's (a worker file's: its name reads
 * "worker N: ..."), with the worker's index and process id. */
PRISM_API bool prism_analysis_thread_worker(const prism_analysis *a, size_t i,
                                            uint32_t *worker_id, uint64_t *pid);
PRISM_API const prism_op *prism_analysis_ops(const prism_analysis *a, size_t *n);  /* by total */
PRISM_API const prism_step_stats *prism_analysis_steps(const prism_analysis *a);
PRISM_API const prism_memory_stats *prism_analysis_memory(const prism_analysis *a);
PRISM_API const prism_gpu_stats *prism_analysis_gpu(const prism_analysis *a);
PRISM_API const prism_work_stats *prism_analysis_work(const prism_analysis *a);

/* Who used the CPUs, the DataLoader workers seen from inside, the system's
 * readings: prism/analysis_system.h (included at the end). */

PRISM_API const prism_bottleneck *prism_analysis_bottlenecks(const prism_analysis *a, size_t *n);
/* The slow steps the slow_steps finding counts (its rule: analysis/
 * rules_steps.c), their step indices in step order, every one of them (the
 * finding's evidence lists the first six); *n = 0 (and *idx NULL) when
 * the finding does not apply. */
PRISM_API void prism_analysis_slow_steps(const prism_analysis *a, const uint64_t **idx, size_t *n);
/* Events seen, CPU events dropped (DROPPED records of source CPU; GPU drops are
 * in prism_gpu_stats.dropped), wall span of the profile. */
PRISM_API uint64_t prism_analysis_events(const prism_analysis *a);
PRISM_API uint64_t prism_analysis_dropped(const prism_analysis *a);
/* Of those, whole regions not recorded (a 1.1 writer drops whole regions:
 * never an enter without its exit, so the call tree holds only paths the
 * program ran, with their true durations).  *whole (may be NULL): every
 * CPU drop in the file came with its count of regions; false when a writer
 * dropped single events (before 1.1): nesting after a drop may be wrong.
 * *placed (may be NULL): how many of them the file placed under a node
 * (prism_node.unrecorded of the roots, summed); the rest were at a
 * thread's top level or could not be placed. */
PRISM_API uint64_t prism_analysis_dropped_regions(const prism_analysis *a, bool *whole, uint64_t *placed);
/* Regions nested deeper than PRISM_ANALYSIS_MAX_DEPTH levels on their
 * thread: counted here, never silently; the call tree stops at that depth
 * (their time is their deepest kept ancestor's), and so do the exports. */
#define PRISM_ANALYSIS_MAX_DEPTH 256u
PRISM_API uint64_t prism_analysis_too_deep(const prism_analysis *a);
/* Whole regions of one thread (stream) not recorded: its DROPPED regions. */
PRISM_API uint64_t prism_analysis_thread_dropped_regions(const prism_analysis *a, uint32_t stream);
PRISM_API uint64_t prism_analysis_span_ns(const prism_analysis *a);
/* Timestamp (ns since the file's origin) of the newest record seen. */
PRISM_API uint64_t prism_analysis_last_ts(const prism_analysis *a);
PRISM_API bool prism_analysis_complete(const prism_analysis *a);  /* footer seen */
/* The node of the all-threads tree with this path hash, or PRISM_NO_NODE. */
PRISM_API uint32_t prism_analysis_find(const prism_analysis *a, uint64_t path_hash);
/* Per-step time of a node of the all-threads tree over the sampled steps
 * in which it ran (a step without it is absent, not zero), one sample per
 * step and thread that has the path: their count, mean and sample variance
 * (ns, ns^2); the count is the node's steps_seen and may be 0.  False when
 * the node or the steps are unknown. */
PRISM_API bool prism_analysis_node_step_moments(const prism_analysis *a, uint32_t node, uint64_t *n,
                                      double *mean, double *var);

/* The most per-step samples kept for one call path. */
#define PRISM_STEP_SAMPLES 128
/* Per-step samples of a node of the all-threads tree: its time in each
 * sampled step in which it ran (ns; a step without it is no sample), the
 * step being filled included.  Up to PRISM_STEP_SAMPLES values per thread
 * node are kept, a uniform sample of its steps when it ran in more
 * (reservoir sampling, seeded from the thread and the node: the same file
 * always gives the same samples); a path on several threads pools its
 * threads' samples in proportion to their steps.  Writes at most
 * min(max, PRISM_STEP_SAMPLES) values into out (the caller's array, in no
 * particular order) and returns their count: 0 when the node is unknown
 * or never ran in a sampled step. */
PRISM_API size_t prism_analysis_node_step_samples(const prism_analysis *a, uint32_t node, double *out,
                                        size_t max);
/* The median of those samples (ns); 0 when there are none. */
PRISM_API double prism_analysis_node_step_median(const prism_analysis *a, uint32_t node);

/*
 * Leak verdict from a least-squares line through (x, y), x the step index,
 * y bytes, in time order.  A leak is (see analysis/leak.c for the why of
 * each constant), with at least 4 points and a rising slope:
 *   fast    slope > threshold_mb with r2 >= 0.6; or
 *   steady  t = slope / standard error >= 5, r2 >= 0.6, 12 points or more,
 *           a growth over the run of 64 MB, or of 5 % of the start and at
 *           least 16 MB, and the middle and the last third of the points,
 *           fitted alone, each rising with t >= 3 at half the overall slope
 *           or more.
 * From 12 points on, a last third clearly flatter than that (its slope plus
 * two standard errors below half the overall slope: a warm-up that
 * plateaus, a one-off jump) is no leak, fast or not; a flat middle third
 * with a rising end is PRISM_LEAK_GROWING, as is a significant rise
 * missing the rest of the evidence.  The projection is 1000 steps ahead;
 * prism_leak_project moves it.
 */
PRISM_API prism_leak prism_leak_fit(const double *x, const double *y, size_t n, double threshold_mb);
/* Carry the fitted line `steps` steps past the last point (epoch_end: that
 * is where the epoch ends). */
PRISM_API void prism_leak_project(prism_leak *l, uint64_t steps, bool epoch_end);
/* "none", "growing", "leak". */
PRISM_API const char *prism_leak_verdict_name(prism_leak_verdict v);

#ifdef __cplusplus
}
#endif

/* Parts of this header's API, in headers of their own: the machine, the
 * input pipeline and the system's readings; two analyses against each
 * other, the regression gate and the tests they use. */
#include "prism/analysis_system.h"
#include "prism/compare.h"

#endif
