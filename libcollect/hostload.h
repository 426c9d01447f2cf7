/*
 * hostload.h - the machine's load beside the process (internal): the busy
 * CPU time of the whole machine (/proc/stat) and the CPU time of this
 * process's child processes (DataLoader workers: /proc/self/task/TID/children,
 * /proc/PID/stat, and the reaped ones' cutime + cstime), read by the
 * memory sampler on the writer thread (sampler.c) at most every
 * HOSTLOAD_EVERY_MS.  Owner: who took the CPUs (issue 26).
 *
 * Bounded: one /proc/stat read, at most HOSTLOAD_MAX_TASKS children files
 * and HOSTLOAD_MAX_CHILDREN child stat files per reading, each file at most
 * one buffer.  A failure leaves its figure unknown (PRISM_NO_CPU); nothing
 * waits on the program.
 */
#ifndef PRISM_HOSTLOAD_H
#define PRISM_HOSTLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HOSTLOAD_EVERY_MS     50u
#define HOSTLOAD_MAX_TASKS    256u
#define HOSTLOAD_MAX_CHILDREN 256u

typedef struct host_load {
    int stat;                   /* /proc/stat, kept open; -1: closed */
    uint64_t tick_ns;           /* ns per USER_HZ tick */
    uint64_t prev_ns;           /* monotonic ns of the last reading; 0: none */
    uint64_t busy, total;       /* /proc/stat ticks at the last reading */
    uint64_t kids;              /* children's CPU ticks at the last reading */
    bool have_busy, have_kids;
    uint64_t busy_carry, kids_carry;    /* ns beyond the last interval's cap */
    /* the live children found at the last reading (sysread.c reads their
     * I/O) */
    int32_t kid[HOSTLOAD_MAX_CHILDREN];
    uint32_t nkid;
} host_load;

/* Up to n - 1 bytes of a file from its start, NUL-terminated (EINTR
 * retried); -1 on failure.  Shared with sysread.c. */
ssize_t pc_read_at(int fd, char *buf, size_t n);
ssize_t pc_read_path(const char *path, char *buf, size_t n);

void pc_hostload_init(host_load *h);
void pc_hostload_close(host_load *h);

/* Whether a reading is due at monotonic `now` (the first one always). */
bool pc_hostload_due(const host_load *h, uint64_t now);

/* Read the machine at monotonic `now`: *ncpu the online CPUs (0 when
 * unknown: then the other two are PRISM_NO_CPU and nothing was read), and
 * the busy time of the machine and of the children since the previous
 * reading, thousandths of a core (PRISM_NO_CPU the first time or when a
 * file could not be read).  A figure never exceeds ncpu cores: what
 * tick rounding puts beyond that is carried into the next interval, so
 * the figures times their intervals add up to the ticks counted. */
void pc_hostload_read(host_load *h, uint64_t now, uint32_t *ncpu, uint32_t *busy_permille,
                      uint32_t *kids_permille);

#endif
