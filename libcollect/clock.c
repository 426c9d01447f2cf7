/*
 * clock.c - the one clock of a session.  On x86 with an invariant TSC the
 * hot path reads rdtsc; elsewhere (or with PRISM_CLOCK=monotonic) it reads
 * CLOCK_MONOTONIC.  Ticks become ns since the session's origin with a
 * ratio measured against CLOCK_MONOTONIC over the whole run so far, so the
 * longer the run the better the calibration.
 *
 * The conversion is a pure, monotone function of the tick: a refinement
 * starts a new segment at the present tick, continuing the old mapping
 * there with the new ratio, and never changes how an earlier tick converts.
 * A step's start converted long after a region's enter (the step is queued,
 * the region flushed earlier) therefore keeps their order: a region entered
 * after prism_step_begin() is never stamped before its step.  Segments
 * double in span (50 ms, 100 ms, ...), so CLOCK_SEGS of them last for ever;
 * the last one then simply stays.
 *
 * Durations are never short (a step's figures hold everything the
 * program did between its boundaries, to the tick): each calibration
 * reads the tick between two CLOCK_MONOTONIC readings and keeps the
 * narrowest of a few such brackets (an interrupt or a preemption between
 * the reads widens one, and it loses: an unbracketed pair preempted for
 * 20 us made a 2 ms first estimate 1 % slow), every ratio is the largest
 * the brackets allow (the origin's lower bound to the present's upper
 * bound), and a segment's nudge only ever speeds the mapping up to catch
 * up with CLOCK_MONOTONIC; a mapping ahead of it (by the initial
 * estimate's margin, under a microsecond or so) stays ahead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
int prism__clock_tsc;
#endif

uint64_t pc_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t prism__clock_mono(void)
{
    return pc_clock_mono_ns();
}

#define CLOCK_PAIR_TRIES 8      /* brackets read per calibration */

/* The tick between two CLOCK_MONOTONIC readings [*lo, *hi], the narrowest
 * bracket of CLOCK_PAIR_TRIES. */
static void clock_pair(uint64_t *lo, uint64_t *hi, uint64_t *ticks)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < CLOCK_PAIR_TRIES; i++) {
        uint64_t m0 = pc_clock_mono_ns(), t = prism__now(), m1 = pc_clock_mono_ns();
        if (m1 >= m0 && m1 - m0 < best) {
            best = m1 - m0;
            *lo = m0;
            *hi = m1;
            *ticks = t;
        }
    }
    if (best == UINT64_MAX) {           /* a monotonic clock going back: take one */
        *lo = *hi = pc_clock_mono_ns();
        *ticks = prism__now();
    }
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

void pc_clock_init(session *s)
{
#if defined(__x86_64__) || defined(__i386__)
    const char *want = getenv("PRISM_CLOCK");
    prism__clock_tsc = !(want && !strcmp(want, "monotonic")) && tsc_invariant();
#endif
    uint64_t hi;
    clock_pair(&s->t0_mono, &hi, &s->t0_ticks);
    s->ns_per_tick = 1.0;
#if defined(__x86_64__) || defined(__i386__)
    if (prism__clock_tsc) {
        /* A first estimate over 2 ms, the largest the brackets allow;
         * refined by every flush. */
        uint64_t lo, t;
        while (pc_clock_mono_ns() - s->t0_mono < 2000000u)
            ;
        clock_pair(&lo, &hi, &t);
        if (t > s->t0_ticks && hi > s->t0_mono)
            s->ns_per_tick = (double)(hi - s->t0_mono) / (double)(t - s->t0_ticks);
    }
#else
    (void)hi;
#endif
    pc_clock_segments_reset(s);
}

/* The first segment: the initial estimate from t0 (called by the session
 * at start, before any event, and by tests). */
void pc_clock_segments_reset(session *s)
{
    s->segs[0] = (struct clock_seg){ s->t0_ticks, 0, s->ns_per_tick };
    atomic_store_explicit(&s->nsegs, 1, memory_order_release);
}

/* The last of n segments starting at or before `ticks` (the first when
 * none does). */
static uint32_t seg_find(const session *s, uint32_t n, uint64_t ticks)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->segs[mid].ticks <= ticks)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ns of `ticks` by the segment table: the last segment starting at or
 * before it. */
static uint64_t seg_ns(const session *s, uint32_t n, uint64_t ticks)
{
    const struct clock_seg *g = &s->segs[seg_find(s, n, ticks)];
    if (ticks <= g->ticks)
        return g->ns;
    return clock_seg_map(g->ns, ticks - g->ticks, g->ns_per_tick);
}

/* The segment that converts `ticks`, hoisted for a run of ticks (the
 * writer's region encoder): clock_run_ns() then converts any tick of the
 * segment's range as pc_clock_ns() does, bit for bit. */
void pc_clock_run_at(session *s, uint64_t ticks, clock_run *c)
{
    uint32_t n = atomic_load_explicit(&s->nsegs, memory_order_acquire);
    uint64_t t0 = s->t0_ticks;
    if (ticks <= t0) {                  /* up to t0: 0, a range of its own */
        *c = (clock_run){ 0, t0 + 1, 0, 0, 0.0 };
        return;
    }
    if (n == 0) {                       /* no table (tests): the plain ratio */
        *c = (clock_run){ t0 + 1, UINT64_MAX - t0 - 1, t0, 0, s->ns_per_tick };
        return;
    }
    uint32_t k = seg_find(s, n, ticks);
    const struct clock_seg *g = &s->segs[k];
    uint64_t from = g->ticks > t0 ? g->ticks : t0 + 1;
    uint64_t end = k + 1 < n ? s->segs[k + 1].ticks : UINT64_MAX;
    if (ticks < g->ticks)               /* before the first segment: its ns */
        *c = (clock_run){ t0 + 1, g->ticks - t0 - 1, 0, g->ns, 0.0 };
    else
        *c = (clock_run){ from, end - from, g->ticks, g->ns, g->ns_per_tick };
}

/*
 * Append a segment at tick t when the last one has lasted twice as long as
 * the one before it (at least 50 ms).  Its ratio is the run-long estimate,
 * nudged to absorb the mapping's present lag behind CLOCK_MONOTONIC over
 * the segment's expected span (the nudge is bounded to 1e-4 of the ratio,
 * so a jump of the monotonic clock cannot bend time, and is never
 * negative: a mapping ahead stays ahead rather than shortening time).
 */
void pc_clock_segment_add(session *s, uint64_t t, uint64_t m)
{
    uint32_t n = atomic_load_explicit(&s->nsegs, memory_order_relaxed);
    if (n == 0 || n >= CLOCK_SEGS || t <= s->t0_ticks || m <= s->t0_mono)
        return;
    const struct clock_seg *last = &s->segs[n - 1];
    uint64_t span = last->ticks - (n > 1 ? s->segs[n - 2].ticks : s->t0_ticks);
    if (t <= last->ticks || (double)(t - last->ticks) * s->ns_per_tick < 50e6 ||
        t - last->ticks < 2 * span)
        return;
    double ratio = (double)(m - s->t0_mono) / (double)(t - s->t0_ticks);
    s->ns_per_tick = ratio;
    uint64_t at = seg_ns(s, n, t);
    double err = (double)(m - s->t0_mono) - (double)at;   /* truth - mapping */
    double expect = 2.0 * (double)(t - last->ticks);       /* next span, ticks */
    double nudge = err / expect, cap = ratio * 1e-4;
    nudge = nudge > cap ? cap : nudge < 0 ? 0 : nudge;     /* never slower: never short */
    s->segs[n] = (struct clock_seg){ t, at, ratio + nudge };
    atomic_store_explicit(&s->nsegs, n + 1, memory_order_release);
}

void pc_clock_calibrate(session *s)
{
#if defined(__x86_64__) || defined(__i386__)
    if (!prism__clock_tsc)
        return;
    uint64_t lo, hi, t;
    clock_pair(&lo, &hi, &t);
    pc_clock_segment_add(s, t, hi);     /* the ratio's upper bound */
#else
    (void)s;
#endif
}

uint64_t pc_clock_ns(session *s, uint64_t ticks)
{
    if (ticks <= s->t0_ticks)
        return 0;
    uint32_t n = atomic_load_explicit(&s->nsegs, memory_order_acquire);
    if (n)
        return seg_ns(s, n, ticks);
    return clock_seg_map(0, ticks - s->t0_ticks, s->ns_per_tick);
}
