/*
 * ropen.h - opening a profile or a trace to read it, never waiting: a FIFO
 * with no writer blocks open(2) for good, so it is opened O_NONBLOCK and
 * then made blocking again (with a writer, reads wait for its data as
 * usual; with none, the first read is the end of the file, which the
 * readers report as an empty or truncated file at its byte offset).
 */
#ifndef PRISM_BASE_ROPEN_H
#define PRISM_BASE_ROPEN_H

#include <stdio.h>

/* A read-only descriptor (O_CLOEXEC) for path, or -1 with errno. */
int pb_open_read(const char *path);
/* The same as a FILE ("rb"), or NULL with errno. */
FILE *pb_fopen_read(const char *path);

#endif
