/*
 * writer_probe.h - what PRISM's writer thread is doing right now, read from
 * /proc/self/task/TID/syscall of the thread named "prism-writer".  For tests
 * and benchmarks that must know the writer sits blocked (in poll() between
 * flushes, in write() on a FIFO nobody reads) before they go on, instead of
 * sleeping.
 */
#ifndef PRISM_WRITER_PROBE_H
#define PRISM_WRITER_PROBE_H

#include <stdbool.h>

/* The number of the system call the writer is in; -1 when it is running,
 * unknown, or no writer thread exists. */
long probe_writer_syscall(void);

/* Whether the writer waits on its output: in write(), or in poll() for
 * room on a FIFO nobody reads (the output is O_NONBLOCK: writer.c). */
bool probe_writer_stalled(void);

#endif
