/*
 * analysis/job_internal.h - what job.c and job_cause.c share (internal).
 */
#ifndef PRISM_JOB_INTERNAL_H
#define PRISM_JOB_INTERNAL_H

#include "prism/job.h"

/* qsort's comparison of doubles, ascending. */
int job_cmp_double(const void *x, const void *y);
/* The median of v[0..n), reordering it in place (quickselect); 0 when n
 * is 0. */
double job_median(double *v, size_t n);
/* Fill every straggler's cause, deltas and wait region from its index
 * (job_cause.c).  On allocation failure they are left without them. */
void job_causes(prism_job *j);

#endif
