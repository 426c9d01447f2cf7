/*
 * cpusample.h - per-thread on-CPU sampling (internal).  The writer thread
 * reads every recorded thread's scheduler accounting every cpu_interval_ms
 * and keeps the samples until its next flush writes them as CPU chunks.
 * Everything here runs on the writer thread unless stated otherwise.
 */
#ifndef PRISM_CPUSAMPLE_H
#define PRISM_CPUSAMPLE_H

#include "internal.h"

/* session.cpu_mode: the source of the samples. */
enum { CPU_MODE_OFF = 0, CPU_MODE_STAT = 1, CPU_MODE_CLOCK = 2 };

/* One sample as kept until the flush: raw clock ticks, not yet ns. */
typedef struct cpu_rec {
    uint64_t ticks;
    uint32_t stream, flags;     /* PRISM_CPU_*                              */
    uint64_t on, wait;
} cpu_rec;

typedef struct cpu_sampler cpu_sampler;

/* Start sampling as s->cfg says: probe the sources, set s->cpu_mode.
 * NULL only when out of memory (sampling is then off).  The caller frees
 * it with pc_cpu_free. */
cpu_sampler *pc_cpu_new(session *s);

/* Close every thread's schedstat file, free the sampler (NULL is fine).
 * Writer thread, when it no longer samples. */
void pc_cpu_free(cpu_sampler *c);

/* ns between two passes; 0 when sampling is off (or stopped on a failure). */
uint64_t pc_cpu_period_ns(const cpu_sampler *c);

/* One sampling pass over the threads at one instant.  Takes the session
 * lock to walk the thread list and reads outside it; never blocks on the
 * profiled threads otherwise.  A thread whose reading did not change since
 * its last record is held back until it does or the next flush
 * (pc_cpu_release_held).  True when some thread's reading changed (or one exited): false
 * means every recorded thread was idle since the last pass. */
bool pc_cpu_pass(cpu_sampler *c);

/* Write the readings held back, then put the records kept since the last
 * pc_cpu_drained in time order (a held reading is older than the pass
 * that wrote it): at every flush, so an idle thread costs one record a
 * flush instead of one a pass, and its last idle time is in the file.
 * Takes the session lock. */
void pc_cpu_release_held(cpu_sampler *c);

/* May the writer free th, a thread that has exited?  False while its last
 * sample is still to be taken (by the next pass).  Lock held or not. */
bool pc_cpu_release(const cpu_sampler *c, const prism__thread *th);

/* The samples kept since the last pc_cpu_drained (borrowed until then). */
size_t pc_cpu_records(const cpu_sampler *c, const cpu_rec **r);
void pc_cpu_drained(cpu_sampler *c);

/* The sampler's state in words ("schedstat 5 ms", "off: ...") when it
 * changed since the last call, else NULL.  Static storage of c. */
const char *pc_cpu_status_changed(cpu_sampler *c);

/* Pause (true) or resume the passes, waking the writer so that it plans
 * its wake-ups anew: while paused the writer makes no pass and does not
 * wake for one, as with cpu_interval_ms 0.  Any thread.  For a bench that
 * measures the sampler's cost in one process (steploop_bench); the
 * readings after a pause cover the paused time. */
void pc_cpu_pause(session *s, bool paused);

/* Samples that could not be kept, cumulative. */
uint64_t pc_cpu_dropped(const cpu_sampler *c);

/* Called by an exiting thread (any thread, no lock held): its own final
 * reading, as cheap as the session's mode allows.  r->ok false: none. */
void pc_cpu_read_self(session *s, uint64_t os_tid, cpu_reading *r);

/* Read a schedstat file (an fd open on /proc/self/task/TID/schedstat) from
 * offset 0.  Returns CPU_READ_OK, CPU_READ_GONE (the task no longer exists:
 * ESRCH, an empty or short read) or CPU_READ_ERROR (errno kept). */
enum { CPU_READ_OK = 0, CPU_READ_GONE = 1, CPU_READ_ERROR = 2 };
int pc_cpu_read_stat(int fd, cpu_reading *r);

#endif
