/*
 * analysis/job_internal.h - what job.c and job_cause.c share (internal).
 */
#ifndef PRISM_JOB_INTERNAL_H
#define PRISM_JOB_INTERNAL_H

#include <stdio.h>

#include "prism/job.h"

/* msg gets why (one line); returns st. */
static inline prism_status job_fail(prism_status st, const char *why, char *msg, size_t msglen)
{
    if (msglen)
        snprintf(msg, msglen, "%s", why);
    return st;
}

/* qsort's comparison of doubles, ascending. */
int an_job_cmp_double(const void *x, const void *y);
/* The median of v[0..n), reordering it in place (quickselect); 0 when n
 * is 0. */
double an_job_median(double *v, size_t n);
/* Fill every straggler's cause, deltas and wait region from its index
 * (job_cause.c).  On allocation failure they are left without them. */
void an_job_causes(prism_job *j);

/* Pass 2 of a rank summary (job_wait.c): each step's wait_ns from a second
 * read of the file.  deepest[i]: region i of s is a deepest waiting path
 * of the training thread (stream); spans: s's steps by start time, each
 * `index` its position in s->steps; side_names: XXH3 of the names of the
 * collectives waited in on other threads. */
typedef struct job_wait_in {
    const bool *deepest;
    const prism_step *spans;
    uint32_t stream;
    const uint64_t *side_names;
    size_t nside;
} job_wait_in;
prism_status an_job_wait_read(const char *path, const job_wait_in *in, prism_rank_summary *s,
                           char *msg, size_t msglen, uint64_t *offset);

#endif
