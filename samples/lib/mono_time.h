/*
 * mono_time.h - wall-clock seconds on CLOCK_MONOTONIC, for the samples'
 * own timings (header-only).
 */
#ifndef PRISM_SAMPLES_MONO_TIME_H
#define PRISM_SAMPLES_MONO_TIME_H

#include <time.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
