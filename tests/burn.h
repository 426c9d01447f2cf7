/*
 * burn.h - CPU work of a known size for the verdict tests' own workloads:
 * compute for `ms` of the calling thread's CPU time (its own clock, so a
 * busy machine stretches the wall time, never the work).
 */
#ifndef PRISM_TEST_BURN_H
#define PRISM_TEST_BURN_H

#include <time.h>

static inline double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Compute for about `ms` of this thread's CPU time. */
static inline double burn(double ms)
{
    volatile double x = 1.0;
    double until = thread_cpu_ms() + ms;
    while (thread_cpu_ms() < until)
        for (int i = 0; i < 5000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

#endif
