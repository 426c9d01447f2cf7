/*
 * sysread.h - the system readings of MEMORY samples (format 1.3; internal):
 * storage I/O of the process and its live children (/proc/PID/io), the
 * network interfaces' bytes (/proc/net/dev, all but lo), the process's
 * user and system CPU time (getrusage), the machine's memory (MemTotal)
 * and the CPU packages' energy (RAPL, /sys/class/powercap).  Read by the
 * memory sampler on the writer thread whenever it reads the machine's load
 * (hostload.h: every HOSTLOAD_EVERY_MS, and the last sample).  Owner:
 * system metrics (issue 31).
 *
 * Every figure but MemTotal is kept as PRISM's own running sum of the
 * increases seen since the session started, so it never decreases: a
 * counter that wraps (RAPL) or a child that exits (its counters vanish)
 * adds nothing.  What a child did between the last reading and its exit
 * is not counted.  A source that cannot be read is unknown
 * (PRISM_NO_VALUE) from then on; nothing waits on the program.
 */
#ifndef PRISM_SYSREAD_H
#define PRISM_SYSREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "hostload.h"
#include "prism/profile.h"

#define SYSREAD_RAPL_MAX 8u     /* CPU packages read */

typedef struct sys_kid {
    int32_t pid;
    uint64_t rd, wr;            /* its last reading */
} sys_kid;

typedef struct sys_reader {
    bool started;
    int io, net;                /* /proc/self/io, /proc/net/dev; -1: closed */
    bool io_bad, net_bad;       /* unreadable: unknown from then on */
    uint64_t io_rd, io_wr;      /* the process's last reading */
    uint64_t net_rx, net_tx;    /* the interfaces' last reading */
    uint64_t sum_rd, sum_wr, sum_rx, sum_tx;    /* the running sums */
    sys_kid kid[HOSTLOAD_MAX_CHILDREN];         /* the children's last readings */
    uint32_t nkid;
    int rapl[SYSREAD_RAPL_MAX]; /* energy_uj of each package; -1: none */
    uint64_t rapl_last[SYSREAD_RAPL_MAX], rapl_range[SYSREAD_RAPL_MAX];
    uint32_t nrapl;
    uint64_t sum_uj;
    uint64_t mem_total;         /* bytes; PRISM_NO_VALUE: unknown */
} sys_reader;

void pc_sysread_init(sys_reader *r);
void pc_sysread_close(sys_reader *r);

/* Fill m's system readings (have_sys and the eight figures), with the
 * children listed by the host load reading just taken. */
void pc_sysread_read(sys_reader *r, const host_load *h, prism_memory_sample *m);

#endif
