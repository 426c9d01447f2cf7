/*
 * prism/analysis_system.h - what an analysis says of the machine around
 * the training loop: who used the CPUs (prism_cpu_load), the DataLoader
 * worker processes seen from inside (prism_worker_stats) and the system's
 * readings (prism_system_stats: I/O, network, memory, energy).  Included
 * by prism/analysis.h, which it builds on.
 */
#ifndef PRISM_ANALYSIS_SYSTEM_H
#define PRISM_ANALYSIS_SYSTEM_H

#include "prism/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Who used the CPUs over the run, in cores (1.0: one core busy the whole
 * time; each figure over the time its source covers): the machine (the
 * memory samples' format 1.2 load), this process (their process CPU), of
 * which its training thread and its other recorded threads (the CPU
 * samples) and the rest, threads it did not record (process minus the
 * recorded ones, at least 0); its child processes (DataLoader workers) and
 * the other processes on the machine (machine minus process minus
 * children, at least 0).  A figure < 0 is unknown: the file does not
 * record it (a 1.1 file has no machine, children or others).
 */
typedef struct prism_cpu_load {
    uint32_t ncpu;             /* online CPUs; 0: unknown                        */
    double machine;            /* busy cores of the whole machine                */
    double process;            /* this process                                   */
    double training;           /* ... its training thread                        */
    double other_threads;      /* ... its other recorded threads                 */
    double unrecorded;         /* ... threads not recorded                       */
    double workers;            /* its child processes                            */
    double others;             /* every other process on the machine             */
    double span_ns;            /* the time the machine's figures cover           */
} prism_cpu_load;

/* Borrowed until the next refresh; never NULL for a non-NULL analysis. */
PRISM_API const prism_cpu_load *prism_analysis_cpu_load(const prism_analysis *a);

/*
 * The input pipeline seen from inside: the DataLoader worker processes the
 * profile holds (worker files, prism_reader_add_workers) and the loader's
 * settings the Python module wrote (INFO dataloader.*).  Times are wall
 * time in the workers, ns; -1 where unknown.
 */
typedef struct prism_worker_stats {
    uint32_t workers;          /* distinct worker indices; 0: none recorded      */
    uint32_t processes;        /* distinct worker processes (more than workers:
                                  started again, each epoch)                      */
    uint32_t threads;          /* worker threads                                  */
    uint64_t batches;          /* "DataLoader batch" regions                       */
    double batch_ns;           /* a batch in a worker, mean                        */
    double batch_cpu;          /* of it on a CPU (0..1), -1 unknown               */
    double samples_per_batch;  /* __getitem__ (or IterableDataset next) per batch  */
    double sample_ns;          /* a sample, mean                                   */
    double collate_ns;         /* collate_fn per batch                             */
    const char *transform;     /* the heaviest region inside samples or collate
                                  (a transform), NULL: none                         */
    double transform_ns;       /* its time per batch                               */
    double busy;               /* share of the workers' recorded lifetime spent
                                  fetching batches (0..1), -1 unknown               */
    uint32_t busy_threads;     /* worker threads busy at least 70 % of their own
                                  lifetime (the rest idled between batches)         */
    double pin_ns;             /* pin_memory per batch in the training process     */
    /* the loader's settings (the last loader that started workers) */
    int64_t num_workers, prefetch_factor, persistent_workers, pin_memory, batch_size;
    uint64_t starts;           /* times workers were started                       */
    double startup_ns;         /* from a start to its first batch, mean            */
} prism_worker_stats;
/* Borrowed until the next refresh; never NULL for a non-NULL analysis. */
PRISM_API const prism_worker_stats *prism_analysis_workers(const prism_analysis *a);

/*
 * The system readings of the run (format 1.3 MEMORY samples: libcollect
 * reads them every 50 ms and at the end).  Counters are since the session
 * started; a figure is over the readings' span (first to last reading).
 * Per step: the counters interpolated linearly between readings at each
 * step's start and end, averaged over the steps inside the span (steps
 * shorter than the 50 ms cadence get a share of the interval, not a
 * reading of their own).  PRISM_NO_VALUE / < 0: unknown (not recorded, or
 * the source could not be read).
 */
typedef struct prism_sys_point {
    uint64_t ts;
    uint64_t io_read_bytes, io_write_bytes;     /* process + live children   */
    uint64_t net_rx_bytes, net_tx_bytes;        /* interfaces but lo         */
    uint64_t cpu_user_ns, cpu_sys_ns;           /* the process               */
    uint64_t rss, mem_total;                    /* bytes                     */
    uint64_t cpu_energy_uj;                     /* RAPL packages             */
    uint64_t gpu_energy_mj;                     /* all devices (NVML)        */
    uint32_t gpu_util_pct;                      /* mean of devices; NO_CPU   */
} prism_sys_point;

typedef struct prism_system_stats {
    const prism_sys_point *samples;     /* in time order                      */
    size_t count;
    uint64_t span_ns;                   /* first to last reading              */
    uint64_t io_read_bytes, io_write_bytes, net_rx_bytes, net_tx_bytes;
    double cpu_user_pct, cpu_sys_pct;   /* 100 = one core over the span       */
    uint64_t mem_total;                 /* the machine's memory, bytes        */
    double mem_peak_pct, mem_mean_pct;  /* host RSS / mem_total, percent      */
    uint64_t cpu_energy_uj, gpu_energy_mj;
    double gpu_util_pct;                /* mean of the readings               */
    double energy_j;                    /* CPU packages + GPUs, where known   */
    double carbon_g;                    /* energy_j x carbon_g_per_kwh / 3.6e6
                                           (the option given), else < 0       */
    double carbon_g_per_kwh;            /* the intensity given; 0: none       */
    /* per step, means over the `steps` timed steps inside the span */
    uint64_t steps;
    double step_io_read_bytes, step_io_write_bytes;
    double step_net_bytes;              /* received + sent                    */
    double step_energy_j;               /* CPU packages + GPUs, where known   */
} prism_system_stats;

/* Borrowed until the next refresh; never NULL for a non-NULL analysis.
 * count 0: the profile has no system readings (format < 1.3). */
PRISM_API const prism_system_stats *prism_analysis_system(const prism_analysis *a);

#ifdef __cplusplus
}
#endif
#endif
