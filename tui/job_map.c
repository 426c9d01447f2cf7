/*
 * job_map.c - the job view's heatmap as pure functions (no curses): shades
 * against the median cell, steps binned into columns, the metric shown,
 * the Table's order.  Unit-tested in tests/job_map_test.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "array.h"
#include "job_view.h"

int jv_level(double v, double median)
{
    if (isnan(v))
        return -1;
    if (!(median > 0))                  /* no scale: every cell alike */
        return v > 0 ? 1 : 0;
    double x = v / median;
    return x < 0.75 ? 0 : x < 1.1 ? 1 : x < 1.25 ? 2 : x < 1.5 ? 3 : 4;
}

const char *jv_shade(int level, bool utf8)
{
    static const char *const u8[] = { " ", "\u2591", "\u2592", "\u2593", "\u2588" };
    static const char *const ascii[] = { " ", ".", ":", "*", "#" };
    if (level < 0 || level > 4)
        return "-";
    return utf8 ? u8[level] : ascii[level];
}

size_t jv_bin_first(size_t n, size_t ncol, size_t c)
{
    if (!ncol || c >= ncol)
        return n;
    return (size_t)((unsigned long long)c * n / ncol);
}

size_t jv_bin_of(size_t n, size_t ncol, size_t s)
{
    if (!ncol || !n)
        return 0;
    if (s >= n)
        s = n - 1;
    size_t c = (size_t)((unsigned long long)s * ncol / n);
    /* integer division can land one column short or long of the bin that
     * jv_bin_first gives: settle on the one holding s */
    while (c + 1 < ncol && jv_bin_first(n, ncol, c + 1) <= s)
        c++;
    while (c > 0 && jv_bin_first(n, ncol, c) > s)
        c--;
    return c;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double jv_median(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)      /* the finite values to the front */
        if (isfinite(v[i]))
            v[k++] = v[i];
    if (!k)
        return NAN;
    pb_qsort(v, k, sizeof *v, cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

double jv_cell(const jv *v, size_t r, size_t s)
{
    return v->work ? prism_job_work(v->job, r, s) : prism_job_step(v->job, r, s);
}

size_t jv_shown_step(const jv *v, size_t r, size_t s, size_t ncol)
{
    size_t n = v->job->nsteps;
    if (!ncol || ncol >= n)
        return s;
    size_t c = jv_bin_of(n, ncol, s), best = s;
    double bv = NAN;
    for (size_t k = jv_bin_first(n, ncol, c); k < jv_bin_first(n, ncol, c + 1); k++) {
        double x = jv_cell(v, r, k);
        if (!isnan(x) && (isnan(bv) || x > bv)) {
            bv = x;
            best = k;
        }
    }
    return best;
}

bool jv_prepare(jv *v)
{
    const prism_job *j = v->job;
    size_t cells = j->ncells;           /* the cells that exist */
    double *tmp = malloc((cells ? cells : 1) * sizeof *tmp);
    v->order = malloc((j->nranks ? j->nranks : 1) * sizeof *v->order);
    if (!tmp || !v->order) {
        free(tmp);
        return false;
    }
    /* under a collective every rank's step time is the slowest one's: the
     * slow rank shows in its work, so work is the default once any rank
     * waited */
    v->work = false;
    for (size_t i = 0; i < cells && !v->work; i++)
        v->work = j->cell[i].step_ns - j->cell[i].work_ns > 0;
    for (int m = 0; m < 2; m++) {
        for (size_t i = 0; i < cells; i++)
            tmp[i] = m ? j->cell[i].work_ns : j->cell[i].step_ns;
        v->median[m] = jv_median(tmp, cells);
    }
    free(tmp);
    for (size_t r = 0; r < j->nranks; r++)
        v->order[r] = r;
    v->rank = j->nstragglers ? j->stragglers[0].index : 0;
    v->step = 0;
    jv_sort(v);
    return true;
}

/* The figure a Table column sorts by. */
static double sort_key(const jv *v, size_t r)
{
    const prism_job_rank *k = &v->job->ranks[r];
    switch (v->sort) {
    case JV_SORT_STEP: return k->step_median_ns;
    case JV_SORT_WORK: return k->work_median_ns;
    case JV_SORT_WAIT: return k->wait_median_ns;
    case JV_SORT_EXCESS: return k->excess_median_ns;
    case JV_SORT_SLOWED: return (double)k->slowed;
    default: return -(double)r;       /* rank: ascending */
    }
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double kx = sort_key(ctx, x), ky = sort_key(ctx, y);
    if (isnan(kx) != isnan(ky))
        return isnan(kx) ? 1 : -1;      /* absent figures last */
    if (kx != ky && !isnan(kx))
        return kx > ky ? -1 : 1;
    return x < y ? -1 : x > y;
}

void jv_sort(jv *v)
{
    qsort_r(v->order, v->job->nranks, sizeof *v->order, cmp_rank, v);
}

const char *jv_rank_name(const jv *v, size_t r, char *buf, size_t cap)
{
    snprintf(buf, cap, "%lld", (long long)v->job->ranks[r].id);
    return buf;
}
