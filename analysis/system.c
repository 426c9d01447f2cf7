/*
 * system.c - the system readings of MEMORY samples (format 1.3): storage
 * and network bytes, the process's user and system CPU, memory against
 * the machine's, CPU and GPU energy, over the run and per step
 * (prism_system_stats).  Owner: system metrics (issue 31).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* a + b, or unknown when either is (saturating) */
static uint64_t add_known(uint64_t a, uint64_t b)
{
    if (a == PRISM_NO_VALUE || b == PRISM_NO_VALUE)
        return PRISM_NO_VALUE;
    return a + b < a ? PRISM_NO_VALUE - 1 : a + b;
}

void an_system_sample(prism_analysis *a, const prism_memory_sample *m)
{
    if (!m->have_sys || !pb_vec_reserve((void **)&a->sys, &a->syscap, a->nsys + 1, sizeof *a->sys))
        return;
    prism_sys_point p = { .ts = m->ts, .io_read_bytes = m->io_read_bytes,
                          .io_write_bytes = m->io_write_bytes, .net_rx_bytes = m->net_rx_bytes,
                          .net_tx_bytes = m->net_tx_bytes, .cpu_user_ns = m->cpu_user_ns,
                          .cpu_sys_ns = m->cpu_sys_ns, .rss = m->rss, .mem_total = m->mem_total,
                          .cpu_energy_uj = m->cpu_energy_uj, .gpu_energy_mj = PRISM_NO_VALUE,
                          .gpu_util_pct = PRISM_NO_CPU };
    uint64_t util = 0, nutil = 0, mj = m->ngpu ? 0 : PRISM_NO_VALUE;
    for (uint32_t g = 0; g < m->ngpu && g < PRISM_MAX_GPUS; g++) {
        mj = add_known(mj, m->gpu[g].energy_mj);    /* a device unknown: the sum is */
        if (m->gpu[g].util_pct != PRISM_NO_CPU) {
            util += m->gpu[g].util_pct;
            nutil++;
        }
    }
    p.gpu_energy_mj = mj;
    if (nutil)
        p.gpu_util_pct = (uint32_t)(util / nutil);
    if (a->nsys && a->sys[a->nsys - 1].ts > p.ts)
        a->sys_unsorted = true;
    if (p.ts <= a->sys_acc.fin)         /* among the readings the kept sums used */
        a->sys_acc.valid = false;
    a->sys[a->nsys++] = p;
}

static int by_ts(const void *x, const void *y)
{
    const prism_sys_point *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The offsets of the cumulative figures in a point, in this order. */
enum { F_RD, F_WR, F_RX, F_TX, F_UJ, F_MJ, F_N };
static const size_t field_off[F_N] = {
    offsetof(prism_sys_point, io_read_bytes), offsetof(prism_sys_point, io_write_bytes),
    offsetof(prism_sys_point, net_rx_bytes), offsetof(prism_sys_point, net_tx_bytes),
    offsetof(prism_sys_point, cpu_energy_uj), offsetof(prism_sys_point, gpu_energy_mj),
};

static uint64_t fld(const prism_sys_point *p, int f)
{
    uint64_t v;
    memcpy(&v, (const char *)p + field_off[f], sizeof v);
    return v;
}

/* The reading at or before t (s[0].ts <= t <= s[n - 1].ts): the last
 * index below n - 1 whose time is at most t, as a binary search over the
 * readings finds it; *hint, the previous answer, is where it looks first
 * (steps come in start order: the next answer is at or just after it). */
static size_t bracket(const prism_sys_point *s, size_t n, uint64_t t, size_t *hint)
{
    if (n < 2)
        return 0;
    size_t lo = *hint;
    if (lo > n - 2 || s[lo].ts > t) {
        lo = 0;
        size_t hi = n - 1;              /* s[lo].ts <= t <= s[hi].ts */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid].ts <= t)
                lo = mid;
            else
                hi = mid;
        }
    } else {
        while (lo + 1 < n - 1 && s[lo + 1].ts <= t)
            lo++;
    }
    *hint = lo;
    return lo;
}

/* Figure f at time t, linear between the nearest readings around it that
 * know it (NVML's energy rides only the readings that query NVML, not the
 * copies taken at each step's end: on the GPU run every other reading);
 * false when t is outside them.  lo: bracket()'s reading for t. */
static bool at(const prism_sys_point *s, size_t n, int f, uint64_t t, size_t lo, double *out)
{
    if (!n || t < s[0].ts || t > s[n - 1].ts)
        return false;
    size_t hi = n > 1 ? lo + 1 : 0;
    while (fld(&s[lo], f) == PRISM_NO_VALUE && lo > 0)
        lo--;
    while (fld(&s[hi], f) == PRISM_NO_VALUE && hi + 1 < n)
        hi++;
    uint64_t a = fld(&s[lo], f), b = fld(&s[hi], f);
    if (a == PRISM_NO_VALUE || b == PRISM_NO_VALUE || s[lo].ts > t || s[hi].ts < t)
        return false;
    double span = (double)(s[hi].ts - s[lo].ts);
    double x = span > 0 ? (double)(t - s[lo].ts) / span : 0;
    *out = (double)a + ((double)b - (double)a) * x;
    return true;
}

/* The reading time before which no reading to come changes a step's
 * figures: the last reading's, or earlier, the last that knows a figure
 * some reading knows (a step ending after it may find a later one). */
static uint64_t final_ts(const prism_sys_point *s, size_t n)
{
    uint64_t fin = s[n - 1].ts;
    for (int f = 0; f < F_N; f++) {
        size_t j = n;
        while (j > 0 && fld(&s[j - 1], f) == PRISM_NO_VALUE)
            j--;
        if (j > 0 && s[j - 1].ts < fin)
            fin = s[j - 1].ts;
    }
    return fin;
}

/* Step p's figures into the sums: those of a step inside the readings'
 * span, each known at both ends. */
static void step_figures(const prism_sys_point *s, size_t n, const prism_step *p, double *sum,
                         uint64_t *cnt, uint64_t *steps, size_t hint[2])
{
    if (p->end <= p->start || p->start < s[0].ts || p->end > s[n - 1].ts)
        return;
    (*steps)++;
    size_t b0 = bracket(s, n, p->start, &hint[0]), b1 = bracket(s, n, p->end, &hint[1]);
    for (int k = 0; k < F_N; k++) {
        double x, y;
        if (at(s, n, k, p->start, b0, &x) && at(s, n, k, p->end, b1, &y) && y >= x) {
            sum[k] += y - x;
            cnt[k]++;
        }
    }
}

/* The increase of figure f over the readings: a counter from the first
 * reading to the last, unknown unless both know it; energy from the first
 * reading that knows it to the last (a GPU's counter starts with NVML's
 * first reading, after the program initialised CUDA, and rides only the
 * readings that query NVML); unknown when fewer than two know it. */
static uint64_t over_run(const prism_sys_point *s, size_t n, int f)
{
    bool energy = f == F_UJ || f == F_MJ;
    size_t i = 0, j = n;
    while (energy && i < n && fld(&s[i], f) == PRISM_NO_VALUE)
        i++;
    while (energy && j > i && fld(&s[j - 1], f) == PRISM_NO_VALUE)
        j--;
    if (j < i + 2)
        return PRISM_NO_VALUE;
    uint64_t a = fld(&s[i], f), b = fld(&s[j - 1], f);
    return b < a ? PRISM_NO_VALUE : b - a;
}

void an_system_refresh(prism_analysis *a)
{
    prism_system_stats *st = &a->sys_stats;
    *st = (prism_system_stats){ .io_read_bytes = PRISM_NO_VALUE, .io_write_bytes = PRISM_NO_VALUE,
                                .net_rx_bytes = PRISM_NO_VALUE, .net_tx_bytes = PRISM_NO_VALUE,
                                .cpu_user_pct = -1, .cpu_sys_pct = -1,
                                .mem_total = PRISM_NO_VALUE, .mem_peak_pct = -1,
                                .mem_mean_pct = -1, .cpu_energy_uj = PRISM_NO_VALUE,
                                .gpu_energy_mj = PRISM_NO_VALUE, .gpu_util_pct = -1,
                                .energy_j = -1, .carbon_g = -1,
                                .step_io_read_bytes = -1, .step_io_write_bytes = -1,
                                .step_net_bytes = -1, .step_energy_j = -1 };
    if (a->sys_unsorted) {
        qsort(a->sys, a->nsys, sizeof *a->sys, by_ts);     /* equal times: any order */
        a->sys_unsorted = false;
    }
    const prism_sys_point *s = a->sys;
    size_t n = a->nsys;
    st->samples = s;
    st->count = n;
    if (!n)
        return;
    st->span_ns = s[n - 1].ts - s[0].ts;
    st->io_read_bytes = over_run(s, n, F_RD);
    st->io_write_bytes = over_run(s, n, F_WR);
    st->net_rx_bytes = over_run(s, n, F_RX);
    st->net_tx_bytes = over_run(s, n, F_TX);
    st->cpu_energy_uj = over_run(s, n, F_UJ);
    st->gpu_energy_mj = over_run(s, n, F_MJ);
    bool ce = st->cpu_energy_uj != PRISM_NO_VALUE, ge = st->gpu_energy_mj != PRISM_NO_VALUE;
    if (ce || ge)
        st->energy_j = (ce ? (double)st->cpu_energy_uj / 1e6 : 0) +
                       (ge ? (double)st->gpu_energy_mj / 1e3 : 0);
    if (a->opts.carbon_g_per_kwh > 0) {
        st->carbon_g_per_kwh = a->opts.carbon_g_per_kwh;
        if (st->energy_j >= 0)
            st->carbon_g = st->energy_j / 3.6e6 * a->opts.carbon_g_per_kwh;
    }
    const prism_sys_point *f = &s[0], *l = &s[n - 1];
    if (st->span_ns && f->cpu_user_ns != PRISM_NO_VALUE && l->cpu_user_ns != PRISM_NO_VALUE &&
        f->cpu_sys_ns != PRISM_NO_VALUE && l->cpu_sys_ns != PRISM_NO_VALUE &&
        l->cpu_user_ns >= f->cpu_user_ns && l->cpu_sys_ns >= f->cpu_sys_ns) {
        st->cpu_user_pct = 100.0 * (double)(l->cpu_user_ns - f->cpu_user_ns) / (double)st->span_ns;
        st->cpu_sys_pct = 100.0 * (double)(l->cpu_sys_ns - f->cpu_sys_ns) / (double)st->span_ns;
    }
    double msum = 0, usum = 0;
    size_t mn = 0, un = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].mem_total != PRISM_NO_VALUE && s[i].mem_total) {
            double pct = 100.0 * (double)s[i].rss / (double)s[i].mem_total;
            st->mem_total = s[i].mem_total;
            st->mem_peak_pct = pct > st->mem_peak_pct ? pct : st->mem_peak_pct;
            msum += pct;
            mn++;
        }
        if (s[i].gpu_util_pct != PRISM_NO_CPU) {
            usum += s[i].gpu_util_pct;
            un++;
        }
    }
    if (mn)
        st->mem_mean_pct = msum / (double)mn;
    if (un)
        st->gpu_util_pct = usum / (double)un;
    /* per step: the interpolated counters at each end; the steps whose
     * figures no later reading can change are summed once (sys_acc), the
     * rest again at each refresh, in step order either way (the sums are
     * those of one pass over all of them) */
    uint64_t fin = final_ts(s, n);
    if (!a->sys_acc.valid || a->sys_acc.upto > a->nsteps || a->sys_acc.first_ts != s[0].ts) {
        memset(&a->sys_acc, 0, sizeof a->sys_acc);
        a->sys_acc.valid = true;
        a->sys_acc.first_ts = s[0].ts;
    }
    double sum[F_N];
    uint64_t cnt[F_N], steps = a->sys_acc.steps;
    memcpy(sum, a->sys_acc.sum, sizeof sum);
    memcpy(cnt, a->sys_acc.cnt, sizeof cnt);
    size_t i = a->sys_acc.upto, hint[2] = { 0, 0 };
    for (; i < a->nsteps && a->steps[i].end < fin; i++)    /* final: kept */
        step_figures(s, n, &a->steps[i], sum, cnt, &steps, hint);
    a->sys_acc.upto = i;
    a->sys_acc.fin = fin > a->sys_acc.fin ? fin : a->sys_acc.fin;
    memcpy(a->sys_acc.sum, sum, sizeof sum);
    memcpy(a->sys_acc.cnt, cnt, sizeof cnt);
    a->sys_acc.steps = steps;
    for (; i < a->nsteps; i++)          /* a later reading may change these */
        step_figures(s, n, &a->steps[i], sum, cnt, &steps, hint);
    st->steps = steps;
    if (!steps)
        return;
    if (cnt[F_RD] == steps)
        st->step_io_read_bytes = sum[F_RD] / (double)steps;
    if (cnt[F_WR] == steps)
        st->step_io_write_bytes = sum[F_WR] / (double)steps;
    if (cnt[F_RX] == steps && cnt[F_TX] == steps)
        st->step_net_bytes = (sum[F_RX] + sum[F_TX]) / (double)steps;
    /* energy: the mean over the steps its readings cover, when they cover
     * at least half of them (a GPU's counter starts with CUDA, after the
     * first steps may have begun) */
    bool cpu_e = cnt[F_UJ] && 2 * cnt[F_UJ] >= steps, gpu_e = cnt[F_MJ] && 2 * cnt[F_MJ] >= steps;
    if (cpu_e || gpu_e)
        st->step_energy_j = (cpu_e ? sum[F_UJ] / 1e6 / (double)cnt[F_UJ] : 0) +
                            (gpu_e ? sum[F_MJ] / 1e3 / (double)cnt[F_MJ] : 0);
}
