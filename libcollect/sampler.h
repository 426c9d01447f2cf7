/*
 * sampler.h - the memory sampler (internal): host RSS, process CPU and GPU
 * memory, read by the writer thread only.  Owner: steps and memory
 * sampling (issue 12).
 *
 * The stepping thread never samples: prism_step_end() publishes the index
 * of the step that ended (session.steps_ended) and returns.  The writer
 * looks at it at every wake-up; when a step ended since its last sample it
 * reads memory once, tagging the sample with the latest step that had ended
 * before the read (MEMORY.step, docs/FORMAT.md).  Otherwise it samples every
 * memory_interval_ms, untagged.  While steps are being taken (one ended in
 * the last second) it wakes at least every SAMPLER_STEP_POLL_MS (the CPU
 * sampler's default period, so at the defaults no wake-up is added).
 * A sample taken HOSTLOAD_EVERY_MS or more after the last one that read
 * the machine's load, or the last one (at shutdown), reads it too (MEMORY's 1.2 fields; the others leave
 * ncpu 0, and the figures are since the previous sample that has them),
 * and the system readings (1.3, sysread.h; the others have have_sys 0).
 */
#ifndef PRISM_SAMPLER_H
#define PRISM_SAMPLER_H

#include "hostload.h"
#include "sysread.h"
#include "internal.h"

#define SAMPLER_STEP_POLL_MS 5u

typedef struct mem_sampler {
    int statm;                  /* /proc/self/statm, kept open; -1: closed */
    uint64_t page;              /* bytes per page */
    uint64_t cpu_prev[2];       /* process CPU ns, monotonic ns: last read */
    uint64_t every_ns;          /* memory_interval_ms */
    uint64_t next_ns;           /* the next periodic sample */
    uint64_t next_gpu_ns;       /* the next NVML reading (steps reuse one) */
    uint64_t last_step_ns;      /* the last wake-up that found a step ended */
    uint64_t steps_seen;        /* session.steps_ended at the last sample */
    host_load load;             /* the machine and the children (hostload.c) */
    sys_reader sys;             /* I/O, network, CPU time, energy (sysread.c),
                                   read with the load */
} mem_sampler;

/* Read /proc/self/statm and the process CPU clock: RSS in bytes, and the
 * CPU use since the previous call in thousandths of a core (PRISM_NO_CPU
 * the first time).  0, or -1 when statm cannot be read. */
int pc_sampler_read(mem_sampler *m, uint64_t *rss, uint32_t *cpu_permille);

/* Start: nothing read yet, the first periodic sample due at `now`. */
void pc_sampler_init(mem_sampler *m, const session *s, uint64_t now);

/* One wake-up of the writer at monotonic `now`: take a sample when a step
 * ended since the last one, or when the periodic one is due (`force`: in
 * any case, as at shutdown).  Returns the monotonic ns by which the writer
 * should look again (UINT64_MAX: no need).  Collect_memory off: nothing. */
uint64_t pc_sampler_poll(mem_sampler *m, session *s, uint64_t now, bool force);

void pc_sampler_close(mem_sampler *m);

#endif
