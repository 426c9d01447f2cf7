/*
 * series.c - steps and memory samples: the series for plotting, step
 * statistics (mean, p50, p95, max) and leak fits of memory against step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void series_steps(prism_analysis *a, const prism_step *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!vec_reserve((void **)&a->steps, &a->scap, a->nsteps + 1, sizeof *a->steps))
            return;
        size_t cap = a->scap;
        uint32_t *pos = realloc(a->sampled_pos, cap * sizeof *pos);
        if (!pos)
            return;
        a->sampled_pos = pos;
        /* keep start order (steps arrive in order; tolerate a late one) */
        size_t at = a->nsteps;
        while (at > 0 && a->steps[at - 1].start > s[i].start)
            at--;
        if (at != a->nsteps) {
            memmove(&a->steps[at + 1], &a->steps[at], (a->nsteps - at) * sizeof *a->steps);
            memmove(&a->sampled_pos[at + 1], &a->sampled_pos[at],
                    (a->nsteps - at) * sizeof *a->sampled_pos);
        }
        a->steps[at] = s[i];
        a->sampled_pos[at] = (s[i].flags & PRISM_STEP_SAMPLED) ? (uint32_t)a->nsampled++
                                                               : UINT32_MAX;
        a->nsteps++;
    }
    a->steps_unused = false;
    tree_resolve_pending(a);
}

void series_memory(prism_analysis *a, const prism_memory_sample *m)
{
    if (!vec_reserve((void **)&a->mem, &a->mcap, a->nmem + 1, sizeof *a->mem))
        return;
    prism_mem_point p = { .ts = m->ts, .step = m->step, .rss = m->rss,
                          .cpu_permille = m->cpu_permille, .ngpu = m->ngpu };
    for (uint32_t g = 0; g < m->ngpu && g < PRISM_MAX_GPUS; g++) {   /* saturating */
        p.gpu_used = p.gpu_used + m->gpu[g].used < p.gpu_used ? UINT64_MAX
                                                              : p.gpu_used + m->gpu[g].used;
        p.gpu_reserved = p.gpu_reserved + m->gpu[g].reserved < p.gpu_reserved
                             ? UINT64_MAX : p.gpu_reserved + m->gpu[g].reserved;
    }
    size_t at = a->nmem;
    while (at > 0 && a->mem[at - 1].ts > p.ts)
        at--;
    memmove(&a->mem[at + 1], &a->mem[at], (a->nmem - at) * sizeof *a->mem);
    a->mem[at] = p;
    a->nmem++;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Nearest-rank percentile of sorted v. */
static double pct(const double *v, size_t n, double p)
{
    if (!n)
        return 0;
    size_t k = (size_t)ceil(p * (double)n);
    if (k < 1)
        k = 1;
    return v[k - 1];
}

void series_refresh(prism_analysis *a)
{
    prism_step_stats *st = &a->step_stats;
    memset(st, 0, sizeof *st);
    st->series = a->steps;
    st->nseries = a->nsteps;
    st->count = a->nsteps;
    double *d = malloc((a->nsteps ? a->nsteps : 1) * sizeof *d);
    double sum = 0, m2 = 0, mean = 0;
    for (size_t i = 0; i < a->nsteps; i++) {
        double v = (double)(a->steps[i].end - a->steps[i].start);
        if (a->steps[i].flags & PRISM_STEP_SAMPLED)
            st->sampled++;
        sum += v;
        double dd = v - mean;
        mean += dd / (double)(i + 1);
        m2 += dd * (v - mean);
        if (d)
            d[i] = v;
    }
    st->total_ns = (uint64_t)sum;
    st->mean_ns = mean;
    st->std_ns = a->nsteps > 1 ? sqrt(m2 / (double)(a->nsteps - 1)) : 0;
    if (d && a->nsteps) {
        qsort(d, a->nsteps, sizeof *d, cmp_double);
        st->p50_ns = pct(d, a->nsteps, 0.50);
        st->p95_ns = pct(d, a->nsteps, 0.95);
        st->max_ns = d[a->nsteps - 1];
    }
    free(d);

    prism_memory_stats *ms = &a->mem_stats;
    memset(ms, 0, sizeof *ms);
    ms->samples = a->mem;
    ms->count = a->nmem;
    for (size_t i = 0; i < a->nmem; i++) {
        const prism_mem_point *m = &a->mem[i];
        if (m->rss > ms->peak_rss)
            ms->peak_rss = m->rss;
        if (m->ngpu)
            ms->have_gpu = true;
        if (m->gpu_used > ms->peak_gpu_used)
            ms->peak_gpu_used = m->gpu_used;
        if (m->gpu_reserved > ms->peak_gpu_reserved)
            ms->peak_gpu_reserved = m->gpu_reserved;
    }
}

void series_leaks(prism_analysis *a, double threshold_mb)
{
    prism_memory_stats *ms = &a->mem_stats;
    size_t n = 0;
    for (size_t i = 0; i < a->nmem; i++)
        n += a->mem[i].step != PRISM_NO_STEP;
    double *x = malloc((n ? n : 1) * sizeof *x), *yh = malloc((n ? n : 1) * sizeof *yh),
           *yg = malloc((n ? n : 1) * sizeof *yg);
    if (!x || !yh || !yg) {
        free(x);
        free(yh);
        free(yg);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < a->nmem; i++) {
        const prism_mem_point *m = &a->mem[i];
        if (m->step == PRISM_NO_STEP)
            continue;
        x[k] = (double)m->step;
        yh[k] = (double)m->rss;
        yg[k] = (double)m->gpu_used;
        k++;
    }
    ms->host = prism_leak_fit(x, yh, k, threshold_mb);
    if (ms->have_gpu)
        ms->gpu = prism_leak_fit(x, yg, k, threshold_mb);
    free(x);
    free(yh);
    free(yg);
}
