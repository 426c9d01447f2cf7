/*
 * clock.c - the one clock of a session.  On x86 with an invariant TSC the
 * hot path reads rdtsc; elsewhere (or with PRISM_CLOCK=monotonic) it reads
 * CLOCK_MONOTONIC.  Ticks become ns since the session's origin with a
 * ratio measured against CLOCK_MONOTONIC over the whole run so far, so the
 * longer the run the better the calibration.  The writer clamps each
 * thread's timestamps so they never go backwards when the ratio is refined.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
int prism__clock_tsc;
#endif

uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t prism__clock_mono(void)
{
    return clock_mono_ns();
}

#if defined(__x86_64__) || defined(__i386__)
/* An invariant TSC ticks at a constant rate in every power state. */
static bool tsc_invariant(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    bool constant = false, nonstop = false;
    if (!f)
        return false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
}
#endif

void clock_init(session *s)
{
#if defined(__x86_64__) || defined(__i386__)
    const char *want = getenv("PRISM_CLOCK");
    prism__clock_tsc = !(want && !strcmp(want, "monotonic")) && tsc_invariant();
#endif
    s->t0_mono = clock_mono_ns();
    s->t0_ticks = prism__now();
    s->ns_per_tick = 1.0;
#if defined(__x86_64__) || defined(__i386__)
    if (prism__clock_tsc) {
        /* A first estimate over 2 ms; refined by every flush. */
        uint64_t m;
        do
            m = clock_mono_ns();
        while (m - s->t0_mono < 2000000u);
        uint64_t t = prism__now();
        if (t > s->t0_ticks)
            s->ns_per_tick = (double)(m - s->t0_mono) / (double)(t - s->t0_ticks);
    }
#endif
}

void clock_calibrate(session *s)
{
#if defined(__x86_64__) || defined(__i386__)
    if (!prism__clock_tsc)
        return;
    uint64_t m = clock_mono_ns(), t = prism__now();
    if (t > s->t0_ticks && m - s->t0_mono > 50000000u)
        s->ns_per_tick = (double)(m - s->t0_mono) / (double)(t - s->t0_ticks);
#else
    (void)s;
#endif
}

uint64_t clock_ns(session *s, uint64_t ticks)
{
    if (ticks <= s->t0_ticks)
        return 0;
    return (uint64_t)((double)(ticks - s->t0_ticks) * s->ns_per_tick);
}
