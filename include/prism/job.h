/*
 * prism/job.h - a distributed job: one profile per rank (torchrun, Slurm,
 * MPI), each reduced to a small rank summary, the summaries merged into a
 * job: steps aligned by index, step and work time per rank and step,
 * stragglers with the region that makes the difference.  No terminal code;
 * part of libprism-analysis.
 *
 * Scale: a rank summary holds O(steps + PRISM_JOB_MAX_REGIONS) figures,
 * never events, so a job's memory grows with ranks x steps.  Summaries can
 * be made where each profile lies (`prism-top analyze --summary -o
 * r7.sum rank7.cbor`, written by prism_rank_summary_write, format in
 * docs/SUMMARY.md) and merged later; a job made from summaries equals the
 * job made from the profiles.
 *
 * Waiting.  Under a collective (all-reduce, barrier) every rank leaves the
 * step together, so step times agree and the slow rank shows only in how
 * much of the step was *work*: the others wait for it.  A region of the
 * training thread is a waiting region, on one rank, when (first that
 * applies):
 *   PRISM_WAIT_NAME    its calls average under 1 ms (far shorter than a
 *                      sampling interval: the samples cannot judge them)
 *                      and its name is a collective's (as below); such a
 *                      region is otherwise never waiting by its samples;
 *   PRISM_WAIT_OFFCPU  measured: the CPU samples cover at least half of its
 *                      time, it was blocked off CPU or (woken) in the run
 *                      queue for at least half of the covered time, and
 *                      blocked longer than it ran, or blocked a tenth of
 *                      it and off CPU twice as long as it ran (a barrier,
 *                      a blocking collective; on a loaded machine the
 *                      woken rank waits long for a CPU),
 *                      unless the block is the rank's own: where the
 *                      step's work begins in half of its steps (fetching
 *                      the batch) or while its other threads were busy
 *                      for half of it (a hand-off to its own workers) --
 *                      then it is the rank's time, not a wait for others;
 *   PRISM_WAIT_GPU     its blocking CUDA calls waited for the GPU for at
 *                      least half of its time and the rank's GPU ran NCCL
 *                      kernels (prism_gpu_stats.comm_kernel_ns: names
 *                      starting "nccl", any case) for at least 10 % of its
 *                      kernel time;
 *   PRISM_WAIT_NAME    no CPU samples cover it (under half of its time) and
 *                      its name is a collective's (allreduce, all_reduce,
 *                      allgather, all_gather, reduce_scatter, broadcast,
 *                      barrier, nccl, c10d, gloo, mpi_, "wait"; any case).
 * A region measured on CPU is work whatever its name.  A step's wait time
 * is the time, inside the step, the training thread spent in waiting
 * regions that hold no waiting region themselves (the deepest ones: a
 * backward pass around an all-reduce is not all waiting), together with
 * the calls of collectives waiting on other threads (a collective's name,
 * waiting by the rules above on that thread: torch.profiler records
 * gloo's all-reduce on the process group's own thread, while the blocked
 * training thread shows nothing), overlaps counted once (analysis/
 * job_wait.c); its work time is its duration minus that.
 */
#ifndef PRISM_JOB_H
#define PRISM_JOB_H

#include "prism/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prism/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PRISM_SUMMARY_VERSION 1
/* Regions a rank summary keeps: the training thread's heaviest paths by
 * time inside steps, with every ancestor of each. */
#define PRISM_JOB_MAX_REGIONS 512

typedef enum prism_wait_kind {
    PRISM_WAIT_NO = 0, PRISM_WAIT_OFFCPU, PRISM_WAIT_GPU, PRISM_WAIT_NAME
} prism_wait_kind;
/* "work", "off_cpu", "gpu_collective", "name" */
PRISM_API const char *prism_wait_kind_name(prism_wait_kind k);

/* A call path of a rank's training thread. */
typedef struct prism_rank_region {
    char *name;                /* leaf name, raw bytes (escape on output)    */
    uint64_t path_hash;        /* as prism_node.path_hash                    */
    uint64_t parent_hash;      /* 0 for a root                               */
    uint32_t depth;            /* roots 0                                    */
    uint64_t calls, total_ns, self_ns;
    uint64_t in_step_ns;       /* time inside sampled steps                  */
    uint64_t cpu_known_ns, oncpu_ns, offcpu_ns, gpu_wait_ns;
    uint32_t wait;             /* prism_wait_kind                            */
} prism_rank_region;

/* One timed step of a rank (bad-order and zero-length steps are left out). */
typedef struct prism_rank_step {
    uint64_t index;            /* prism_step.index: how ranks are aligned    */
    uint64_t step_ns;          /* its duration                               */
    uint64_t wait_ns;          /* of it, in (deepest) waiting regions        */
} prism_rank_step;

typedef struct prism_rank_summary {
    int64_t rank;              /* the header's rank; -1 when it has none     */
    char *source;              /* the profile it was made from               */
    char *host;                /* the header's host; "" when none            */
    uint64_t pid, start_unix_ns;
    char *thread;              /* the training thread's name; "" when none   */
    uint64_t events, dropped, span_ns;
    bool complete;             /* the profile had its footer                 */
    uint64_t steps_total;      /* steps in the profile                       */
    prism_rank_step *steps;    /* timed sampled steps, by index ascending    */
    size_t nsteps;
    prism_rank_region *regions;   /* parents before children                */
    size_t nregions;
    uint64_t gpu_kernel_ns, nccl_kernel_ns, gpu_busy_ns, gpu_span_ns;
} prism_rank_summary;

/* Reduce one profile (or torch trace) to its summary: the analysis, then a
 * second read of the file for the per-step wait time.  Returns PRISM_OK or
 * the error, with a one-line message in msg and the byte offset. */
PRISM_API prism_status prism_rank_summary_from_file(const char *path, prism_rank_summary *out,
                                          char *msg, size_t msglen, uint64_t *offset);
/* The summary file: JSON, docs/SUMMARY.md.  write: false on a write error. */
PRISM_API bool prism_rank_summary_write(FILE *f, const prism_rank_summary *s);
/* Read one; a hostile or damaged file gives an error and the offset. */
PRISM_API prism_status prism_rank_summary_read(const char *path, prism_rank_summary *out,
                                     char *msg, size_t msglen, uint64_t *offset);
/* Does a file starting with p[0..n) hold a summary? */
PRISM_API bool prism_rank_summary_probe(const uint8_t *p, size_t n);
PRISM_API void prism_rank_summary_free(prism_rank_summary *s);   /* its fields; s stays */

/* ---- the job ---- */

typedef struct prism_job_opts {
    double k_mad;              /* outlier: > k * 1.4826 * MAD of the others (3) */
    double min_excess_pct;     /* ... and > this % of their median (5)        */
    double min_excess_ns;      /* ... and > this (20000 ns)                   */
    double consistent;         /* straggler: slowed this share of its steps (0.5) */
} prism_job_opts;

/* A region's time per step on one rank against the median rank. */
typedef struct prism_job_delta {
    const char *name;          /* borrowed from the job's summaries          */
    char path[256];            /* "step/forward/layer.0" (raw, '/'-joined)   */
    uint64_t path_hash;
    uint32_t depth;
    double rank_ns;            /* the rank's time per step (in_step / steps) */
    double median_ns;          /* median over the other ranks (absent = 0)   */
    double delta_ns;           /* rank_ns - median_ns                        */
    bool wait;                 /* waiting on the other ranks (most of them)  */
} prism_job_delta;

typedef struct prism_straggler {
    size_t index;              /* into prism_job.ranks                       */
    int64_t rank;
    double excess_ns;          /* median over its steps of work - the others' median */
    double excess_pct;         /* ... in % of the others' median work        */
    uint64_t slowed, steps;    /* steps it slowed / steps it has              */
    uint64_t slowed_index[16]; /* the first of them (step indices)          */
    size_t nslowed_index;
    prism_job_delta cause;     /* the region that makes the difference: the
                                  deepest work region carrying >= 60 % of its
                                  parent's excess, from the heaviest root   */
    bool have_cause;
    prism_job_delta deltas[8]; /* the largest positive work deltas          */
    size_t ndeltas;
    /* What the others did meanwhile: their median wait per step, and the
     * waiting region that holds most of it (name; "" when none). */
    double others_wait_ns;
    prism_job_delta wait_region;
    bool have_wait_region;
} prism_straggler;

/* A rank's figures in the job. */
typedef struct prism_job_rank {
    prism_rank_summary sum;    /* owned                                      */
    int64_t id;                /* the rank shown: header rank, or file order
                                  when ranks are missing or repeat           */
    double step_median_ns, work_median_ns, wait_median_ns;
    double excess_median_ns;   /* median of work - the others' median work  */
    uint64_t slowed;           /* steps in which it was an outlier           */
    double dist_z;             /* sign test of its excess over its shared
                                  steps: (above - below) / sqrt(n)            */
    bool straggler;            /* by per-step votes, or by distribution (a
                                  sign test z >= 3.09 and a median work 25 %
                                  above the others', by at least the per-step
                                  floors against the job's median step)       */
} prism_job_rank;

/* A file that could not be read, with the reason. */
typedef struct prism_job_failure {
    char *source;
    char message[256];
    uint64_t offset;
    prism_status status;
} prism_job_failure;

/* A rank's step in the job: its aligned step and times. */
typedef struct prism_job_cell {
    uint32_t step;             /* index into prism_job.step_index           */
    double step_ns, work_ns;
} prism_job_cell;

typedef struct prism_job {
    prism_job_rank *ranks;     /* by id ascending                            */
    size_t nranks;
    bool ids_from_order;       /* header ranks missing or repeated          */
    uint64_t *step_index;      /* aligned steps (union of the ranks'), asc.  */
    size_t nsteps;
    /* The ranks' steps (the cells of the rank x step matrix that exist),
     * rank by rank: rank r's are cell[row[r] .. row[r + 1]), by step
     * ascending.  A job whose ranks' steps do not overlap costs what its
     * files hold, never ranks x steps (prism_job_step reads a cell). */
    size_t *row;               /* nranks + 1 (NULL when nranks is 0)       */
    prism_job_cell *cell;
    size_t ncells;
    /* The job's step: per aligned step the slowest rank's step time; its
     * median, mean and sum over steps.  Skew: per step, max - min of step
     * time (and of work) over the ranks that have it; medians and max. */
    double job_step_median_ns, job_step_mean_ns, job_step_total_ns;
    double skew_median_ns, skew_max_ns, work_skew_median_ns;
    size_t median_rank;        /* index of the rank with the median work
                                  (the "median rank" compared against)       */
    prism_straggler *stragglers;   /* by excess descending                  */
    size_t nstragglers;
    prism_job_failure *failed; /* files that could not be read               */
    size_t nfailed;
} prism_job;

/* Defaults into *o. */
PRISM_API void prism_job_opts_default(prism_job_opts *o);
/* Merge summaries (taken over: moved from sums[], which the caller frees
 * with free() only) and failures (taken over too) into a job.  NULL on
 * allocation failure (everything given is freed). */
PRISM_API prism_job *prism_job_new(prism_rank_summary *sums, size_t n, prism_job_failure *failed,
                         size_t nfailed, const prism_job_opts *opts);
PRISM_API void prism_job_free(prism_job *j);
/* Per-region deltas of rank index r against the median of the others,
 * largest |delta| first, work and wait alike: up to max into out (the
 * caller's), returns how many. */
PRISM_API size_t prism_job_deltas(const prism_job *j, size_t r, prism_job_delta *out, size_t max);
/* The cell (rank index r, aligned step s), NULL when the rank lacks the
 * step: a binary search in the rank's cells. */
static inline const prism_job_cell *prism_job_cell_at(const prism_job *j, size_t r, size_t s)
{
    if (!j->row || r >= j->nranks)
        return NULL;
    size_t lo = j->row[r], hi = j->row[r + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (j->cell[mid].step < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < j->row[r + 1] && j->cell[lo].step == s ? &j->cell[lo] : NULL;
}
/* Its step and work ns, NAN when absent. */
static inline double prism_job_step(const prism_job *j, size_t r, size_t s)
{
    const prism_job_cell *c = prism_job_cell_at(j, r, s);
    return c ? c->step_ns : __builtin_nan("");
}
static inline double prism_job_work(const prism_job *j, size_t r, size_t s)
{
    const prism_job_cell *c = prism_job_cell_at(j, r, s);
    return c ? c->work_ns : __builtin_nan("");
}

/* ---- loading many files ---- */

/* The files of a job from the command line: each argument a file (kept
 * whatever it holds: its error is reported later) or a directory (its
 * regular, non-hidden entries whose first bytes look like a PRISM profile,
 * a torch trace or a summary, in name order, not recursing).  *out gets a
 * malloc'ed array of malloc'ed paths.  Returns PRISM_OK, or an error with
 * a message naming the argument (a directory that cannot be read). */
PRISM_API prism_status prism_job_expand(const char *const *args, size_t n, char ***out, size_t *nout,
                              char *msg, size_t msglen);
PRISM_API void prism_job_paths_free(char **paths, size_t n);

/* Summaries of many files on a pool of threads (threads 0: one per online
 * CPU, at most one per file), each file a profile, a trace or a summary
 * (told apart by content).  Progress is readable while it runs. */
typedef struct prism_job_loader prism_job_loader;
PRISM_API prism_job_loader *prism_job_loader_start(const char *const *paths, size_t n, unsigned threads);
typedef struct prism_job_progress {
    size_t done, total;        /* files finished (read or failed) / all      */
    size_t failed;
    uint64_t bytes_done, bytes_total;   /* sizes of the files finished / all */
    bool finished;             /* every file done: finish won't wait         */
} prism_job_progress;
PRISM_API prism_job_progress prism_job_loader_progress(prism_job_loader *l);
/* Ask the threads to stop after their current file (q while loading). */
PRISM_API void prism_job_loader_cancel(prism_job_loader *l);
/* Wait for the threads, merge what was read into a job (the loader is
 * freed; NULL on allocation failure or after a cancel). */
PRISM_API prism_job *prism_job_loader_finish(prism_job_loader *l, const prism_job_opts *opts);

/* All of it in one call (no progress): expand, load, merge. */
PRISM_API prism_job *prism_job_open(const char *const *args, size_t n, unsigned threads,
                          const prism_job_opts *opts, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* PRISM_JOB_H */
