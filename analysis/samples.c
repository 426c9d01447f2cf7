/*
 * samples.c - per-step samples of a call path, bounded.
 *
 * Each thread's node keeps up to PRISM_STEP_SAMPLES of its per-step sums
 * (floats: a sum is a duration, 24 bits of precision are plenty for ranks
 * and medians), a uniform sample of every sampled step it ran in, however
 * many.  The first PRISM_STEP_SAMPLES sums fill the reservoir, which grows
 * by doubling so that a node seen in a few steps costs a few bytes; then
 * Li's Algorithm L draws ahead the index of the next sum to keep (the gaps
 * grow as the steps do: about PRISM_STEP_SAMPLES * ln(steps / PRISM_STEP_
 * SAMPLES) are kept in all), so the hot loop only compares the step count
 * with that index.  Random numbers come from a hash of the node's seed
 * (its thread and index) and the sum's index: the same file gives the same
 * samples however its bytes are fed.
 *
 * Read back with the step being filled (as if it closed now), pooled
 * across threads for the all-threads tree, and their median.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RES_MAX PRISM_STEP_SAMPLES
#define RES_FIRST 4u            /* slots of a new reservoir */
#define RES_FAR 1e18            /* a gap that never ends */

/* An 8-byte header and the values (a node seen in 4 steps: 24 bytes); a
 * full one also keeps Algorithm L's running weight after its values. */
struct reservoir {
    uint32_t seed;              /* its random numbers' (seed_of) */
    uint16_t n, cap;            /* values held, slots (<= RES_MAX) */
    float v[];
};

static size_t res_bytes(uint32_t cap)
{
    return sizeof(reservoir) + cap * sizeof(float) + (cap == RES_MAX ? sizeof(double) : 0);
}

/* Algorithm L's weight of a full reservoir, stored after its values. */
static double res_weight(const reservoir *r)
{
    double w;
    memcpy(&w, &r->v[RES_MAX], sizeof w);
    return w;
}

static void res_weigh(reservoir *r, double w)
{
    memcpy(&r->v[RES_MAX], &w, sizeof w);
}

/* ---- deterministic random numbers --------------------------------------- */

/* SplitMix64's finalizer over (seed, index, stream of numbers). */
static uint64_t mix(uint32_t seed, uint64_t k, uint32_t salt)
{
    uint64_t x = ((uint64_t)seed << 32 | salt) * 0x9E3779B97F4A7C15ull + k;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in (0, 1): never 0, whose log the gaps take. */
static double uniform(uint32_t seed, uint64_t k, uint32_t salt)
{
    return ((double)(mix(seed, k, salt) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, n) for n <= 2^32 (the high half of a 32 x 32 product). */
static uint32_t below(uint32_t seed, uint64_t k, uint32_t salt, uint32_t n)
{
    return (uint32_t)(((mix(seed, k, salt) >> 32) * (uint64_t)n) >> 32);
}

/* The seed of a thread's node's reservoir (node SIZE_MAX: its outside
 * node). */
static uint32_t seed_of(uint32_t stream, size_t node)
{
    return (uint32_t)mix(stream, node, 0x5eed);
}

/* ---- keeping ------------------------------------------------------------ */

/* Algorithm L: after keeping (or filling up at) index k, fold a new
 * uniform into the weight and draw the gap to the next index kept. */
static uint64_t next_index(uint32_t seed, uint64_t k, double *w)
{
    *w *= exp(log(uniform(seed, k, 1)) / RES_MAX);
    double l = log1p(-*w), gap = RES_FAR;
    if (l < 0)
        gap = floor(log(uniform(seed, k, 2)) / l);
    if (!(gap < RES_FAR))
        gap = RES_FAR;
    return k + 1 + (uint64_t)gap;
}

/* The slot the k-th sum replaces in a full reservoir. */
static uint32_t slot_of(uint32_t seed, uint64_t k)
{
    return below(seed, k, 3, RES_MAX);
}

void an_res_take(const athread *t, tnode *nd, uint64_t k, double v)
{
    reservoir *r = nd->res;
    if (r && r->n >= RES_MAX) {
        double w = res_weight(r);
        r->v[slot_of(r->seed, k)] = (float)v;
        nd->res_next = next_index(r->seed, k, &w);
        res_weigh(r, w);
        return;
    }
    nd->res_next = k + 1;               /* filling: every sum */
    if (!r || r->n == r->cap) {
        uint32_t cap = r ? r->cap * 2u : RES_FIRST;
        if (cap > RES_MAX)
            cap = RES_MAX;
        reservoir *g = realloc(r, res_bytes(cap));
        if (!g)
            return;                     /* dropped; the next sum tries again */
        if (!r) {
            g->n = 0;
            g->seed = seed_of(t->stream, nd == &t->out ? SIZE_MAX : (size_t)(nd - t->nodes));
        }
        g->cap = (uint16_t)cap;
        nd->res = r = g;
    }
    r->v[r->n++] = (float)v;
    if (r->n == RES_MAX) {              /* full: from now on, Algorithm L */
        double w = 1.0;
        nd->res_next = next_index(r->seed, k, &w);
        res_weigh(r, w);
    }
}

void an_res_free(tnode *nd)
{
    free(nd->res);
    nd->res = NULL;
}

/* ---- reading ------------------------------------------------------------ */

/* A thread node's samples into out[RES_MAX], the step being filled
 * included as an_res_take would take it when it closes; *steps: the steps
 * they stand for. */
static size_t read_node(const tnode *nd, double *out, uint64_t *steps)
{
    const reservoir *r = nd->res;
    size_t n = r ? r->n : 0;
    for (size_t i = 0; i < n; i++)
        out[i] = r->v[i];
    *steps = nd->steps_seen;
    if (nd->step_cur && nd->step_sum) {
        uint64_t k = nd->steps_seen;
        (*steps)++;
        if (k == nd->res_next) {
            float v = (float)(double)nd->step_sum;
            if (n < RES_MAX)
                out[n++] = v;
            else
                out[slot_of(r->seed, k)] = v;
        }
    }
    return n;
}

/* Move `take` values of v[0..n) chosen at random (seeded) to its front. */
static void pick(double *v, size_t n, size_t take, uint32_t seed)
{
    for (size_t i = 0; i < take && i + 1 < n; i++) {
        size_t j = i + below(seed, i, 4, (uint32_t)(n - i));
        double t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

size_t prism_analysis_node_step_samples(const prism_analysis *a, uint32_t node, double *out,
                                        size_t max)
{
    if (!a || !out || !max || !a->tref_off || !a->tref || node >= a->nnodes)
        return 0;
    if (max > RES_MAX)
        max = RES_MAX;
    uint32_t lo = a->tref_off[node], hi = a->tref_off[node + 1];
    double buf[RES_MAX];
    uint64_t steps, all = 0, held = 0;
    bool exact = true;
    for (uint32_t r = lo; r < hi; r++) {    /* how many each thread holds */
        const tnode *nd = an_tnode(a->threads[a->tref[r] >> 32], (uint32_t)a->tref[r]);
        size_t n = read_node(nd, buf, &steps);
        all += steps;
        held += n;
        exact &= n == steps;
    }
    if (!held)
        return 0;
    /*
     * Pool: every thread's values when they are all its steps and fit;
     * else each thread's share of `total` in proportion to its steps, as
     * large as the thread holding the fewest per step allows.
     */
    size_t total = held < max ? (size_t)held : max;
    if (!exact || held > max)
        for (uint32_t r = lo; r < hi; r++) {
            const tnode *nd = an_tnode(a->threads[a->tref[r] >> 32], (uint32_t)a->tref[r]);
            size_t n = read_node(nd, buf, &steps);
            if (steps && (double)n * (double)all / (double)steps < (double)total)
                total = (size_t)((double)n * (double)all / (double)steps);
        }
    size_t got = 0;
    for (uint32_t r = lo; r < hi && got < total; r++) {
        const tnode *nd = an_tnode(a->threads[a->tref[r] >> 32], (uint32_t)a->tref[r]);
        size_t n = read_node(nd, buf, &steps);
        size_t want = n;
        if (!exact || held > max) {
            want = (size_t)((double)total * (double)steps / (double)all);
            if (r + 1 == hi || want > n)    /* the last takes the rounding */
                want = total - got < n ? total - got : n;
        }
        if (want > total - got)
            want = total - got;
        if (want < n)               /* a seed only matters with a reservoir */
            pick(buf, n, want, nd->res ? nd->res->seed : 0);
        memcpy(out + got, buf, want * sizeof *out);
        got += want;
    }
    return got;
}

double prism_analysis_node_step_median(const prism_analysis *a, uint32_t node)
{
    double v[RES_MAX];
    size_t n = prism_analysis_node_step_samples(a, node, v, RES_MAX);
    if (!n)
        return 0;
    return pb_median_double(v, n);
}
