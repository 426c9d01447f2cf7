/*
 * steploop.h - the loop of steploop_bench's interleaved overhead figure:
 * steps of about 1 ms, each made of SL_REGIONS regions of work.  Owner:
 * steps and memory sampling (issue 12).
 *
 * Included twice by steploop_bench.c, with SL_NAME the loop function's name
 * and SL_ON either 1 (prism_step_begin / prism_step_end around each step,
 * prism_push_id / prism_pop around each region) or 0 (the same loop with no
 * call at all, as a PRISM_DISABLE build compiles it: collect.h can be
 * included only once per translation unit).  The work is sl_work(), one
 * out-of-line function both loops call, so the two differ only by the
 * instrumentation.
 */
#ifndef PRISM_STEPLOOP_H
#define PRISM_STEPLOOP_H

#define SL_REGIONS 20u
#define SL_FLOATS  8192u          /* 32 KB a region: 640 KB touched a step */

typedef struct sl_ctx {
    float *x;                     /* SL_REGIONS * SL_FLOATS                 */
    unsigned reps;                /* passes over a region: the step's length */
    uint32_t ids[SL_REGIONS];     /* the regions' names                     */
} sl_ctx;

/* One region's work: `reps` passes over its slice. */
__attribute__((noinline)) static float sl_work(float *x, unsigned reps)
{
    for (unsigned k = 0; k < reps; k++)
        for (unsigned i = 0; i < SL_FLOATS; i++)
            x[i] = x[i] * 0.999f + 0.001f;
    return x[reps % SL_FLOATS];
}

#endif

__attribute__((noinline)) static float SL_NAME(const sl_ctx *c, unsigned steps)
{
    float acc = 0;
    for (unsigned s = 0; s < steps; s++) {
#if SL_ON
        prism_step_begin();
#endif
        for (unsigned r = 0; r < SL_REGIONS; r++) {
#if SL_ON
            prism_push_id(c->ids[r]);
#endif
            acc += sl_work(c->x + (size_t)r * SL_FLOATS, c->reps);
#if SL_ON
            prism_pop();
#endif
        }
#if SL_ON
        prism_step_end();
#endif
    }
    return acc;
}

#undef SL_NAME
#undef SL_ON
