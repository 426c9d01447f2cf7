/*
 * job_build.h - what the job merge tests share (job_test.c,
 * job_edge_test.c): rank summaries built by hand, a planted straggler.
 */
#ifndef PRISM_TEST_JOB_BUILD_H
#define PRISM_TEST_JOB_BUILD_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prism/job.h"

#define MS 1000000.0

/* Deterministic noise in [-1, 1). */
static inline double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* A path's hash: FNV-1a of its '/'-joined names (any stable hash will do). */
static inline uint64_t hash_of(const char *path, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)path[i]) * 1099511628211ull;
    return h;
}

static inline void rs_init(prism_rank_summary *s, int64_t rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->source = strdup("rank.cbor");
    s->host = strdup("host");
    s->thread = strdup("main");
    s->complete = true;
}

static inline void rs_step(prism_rank_summary *s, uint64_t index, double step_ns, double wait_ns)
{
    s->steps = realloc(s->steps, (s->nsteps + 1) * sizeof *s->steps);
    assert_non_null(s->steps);
    s->steps[s->nsteps++] = (prism_rank_step){ index, (uint64_t)step_ns, (uint64_t)wait_ns };
    s->steps_total = s->nsteps;
}

/* A region by its path "a/b/c", parents added before children. */
static inline void rs_region(prism_rank_summary *s, const char *path, prism_wait_kind wait,
                      double in_step_ns)
{
    s->regions = realloc(s->regions, (s->nregions + 1) * sizeof *s->regions);
    assert_non_null(s->regions);
    const char *leaf = strrchr(path, '/');
    uint32_t depth = 0;
    for (const char *p = path; *p; p++)
        depth += *p == '/';
    prism_rank_region *g = &s->regions[s->nregions++];
    memset(g, 0, sizeof *g);
    g->name = strdup(leaf ? leaf + 1 : path);
    g->path_hash = hash_of(path, strlen(path));
    g->parent_hash = leaf ? hash_of(path, (size_t)(leaf - path)) : 0;
    g->depth = depth;
    g->calls = s->nsteps ? s->nsteps : 1;
    g->total_ns = g->in_step_ns = (uint64_t)in_step_ns;
    g->wait = wait;
}

/* The planted job: every rank works 10 ms a step (forward = fast 6 ms +
 * slow_part 4 ms), rank `slow` 5 ms more in slow_part.  synced: the ranks
 * meet in an all-reduce (>= 1 ms, off CPU) and leave together, so every
 * step lasts 16 ms and the others wait 6 ms; else each step is its work.
 * wrap: the regions lie under a root "step".  noise: +- that share of
 * each step's work. */
typedef struct plant {
    size_t nranks, nsteps, slow;
    bool synced, wrap;
    double noise;
} plant;

static inline prism_rank_summary *planted(const plant *p)
{
    prism_rank_summary *s = calloc(p->nranks, sizeof *s);
    assert_non_null(s);
    uint64_t seed = 7;
    double *work = malloc(p->nranks * sizeof *work);
    for (size_t r = 0; r < p->nranks; r++)
        rs_init(&s[r], (int64_t)r);
    for (size_t k = 0; k < p->nsteps; k++) {
        double top = 0;
        for (size_t r = 0; r < p->nranks; r++) {
            work[r] = (10 + (r == p->slow ? 5 : 0)) * MS * (1 + p->noise * noise(&seed));
            top = fmax(top, work[r]);
        }
        for (size_t r = 0; r < p->nranks; r++) {
            double step = p->synced ? top + 1 * MS : work[r];
            rs_step(&s[r], 10 + k, step, step - work[r]);
        }
    }
    for (size_t r = 0; r < p->nranks; r++) {
        double n = (double)p->nsteps, extra = r == p->slow ? 5 * MS : 0;
        double wait = p->synced ? (r == p->slow ? 1 : 6) * MS : 0;
        const char *pre = p->wrap ? "step/" : "";
        char path[64];
        if (p->wrap)
            rs_region(&s[r], "step", PRISM_WAIT_NO, n * (10 * MS + extra + wait));
        snprintf(path, sizeof path, "%sforward", pre);
        rs_region(&s[r], path, PRISM_WAIT_NO, n * (10 * MS + extra));
        snprintf(path, sizeof path, "%sforward/fast", pre);
        rs_region(&s[r], path, PRISM_WAIT_NO, n * 6 * MS);
        snprintf(path, sizeof path, "%sforward/slow_part", pre);
        rs_region(&s[r], path, PRISM_WAIT_NO, n * (4 * MS + extra));
        if (p->synced) {
            snprintf(path, sizeof path, "%sallreduce", pre);
            rs_region(&s[r], path, PRISM_WAIT_OFFCPU, n * wait);
        }
    }
    free(work);
    return s;
}

static inline prism_job *merge(prism_rank_summary *s, size_t n)
{
    prism_job *j = prism_job_new(s, n, NULL, 0, NULL);
    free(s);
    assert_non_null(j);
    return j;
}

static inline void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.6g, want %.6g (+- %.3g)", got, want, tol);
}

#endif
