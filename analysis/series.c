/*
 * series.c - steps and memory samples: the series for plotting, step
 * statistics (mean, p50, p95, max, and the steps that make no sense,
 * counted: see prism_step_stats) and the leak fits of memory against step
 * (the verdict itself is leak.c's; the CUDA allocations' series alloc.c's).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Steps in start order, kept lazily: an_series_steps appends (one
 * reservation per batch, geometric), and an_series_sort_steps puts a tail that
 * arrived out of order in place when something reads them (the tree's step
 * lookup, refresh): the tail sorted (O(k log k)), then merged into the
 * sorted prefix from the back (O(n)), stable, so equal starts stay in
 * arrival order as they did with insertion.  A step that ends before it
 * starts is kept with its end moved to its start and counted: no duration,
 * no regions in it, and nothing downstream (the tree's step lookup,
 * exports) ever sees end < start. */
typedef struct tail_step {
    prism_step s;
    uint32_t pos;
    size_t idx;                 /* arrival: the tie-break that keeps it stable */
} tail_step;

static int cmp_tail(const void *x, const void *y)
{
    const tail_step *a = x, *b = y;
    if (a->s.start != b->s.start)
        return a->s.start < b->s.start ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Forget what the accumulator counted (its buffers kept). */
static void acc_reset(an_step_acc *c)
{
    *c = (an_step_acc){ .dur = c->dur, .dcap = c->dcap, .tmp = c->tmp, .tcap = c->tcap };
}

void an_series_sort_steps(prism_analysis *a)
{
    size_t n = a->nsteps, m = a->steps_sorted, k = n - m;
    if (m >= n)
        return;
    tail_step *t = malloc(k * sizeof *t);
    if (!t)
        return;                         /* stays unsorted: lookups degrade, no UB */
    for (size_t i = 0; i < k; i++)
        t[i] = (tail_step){ a->steps[m + i], a->sampled_pos[m + i], i };
    pb_qsort(t, k, sizeof *t, cmp_tail);
    if (a->step_acc.upto > m || (m && a->step_acc.upto &&
                                 t[0].s.start < a->steps[a->step_acc.upto - 1].start))
        acc_reset(&a->step_acc);        /* steps land among the ones counted */
    if (a->sys_acc.upto > m || (m && a->sys_acc.upto &&
                                t[0].s.start < a->steps[a->sys_acc.upto - 1].start))
        a->sys_acc.valid = false;       /* ... or among system.c's summed ones */
    size_t i = m, j = k, w = n;         /* merge from the back into place */
    while (j > 0) {
        w--;
        if (i > 0 && a->steps[i - 1].start > t[j - 1].s.start) {
            i--;
            a->steps[w] = a->steps[i];
            a->sampled_pos[w] = a->sampled_pos[i];
        } else {
            j--;
            a->steps[w] = t[j].s;
            a->sampled_pos[w] = t[j].pos;
        }
    }
    free(t);
    a->steps_sorted = n;
}

void an_series_steps(prism_analysis *a, const prism_step *s, size_t n)
{
    /* one reservation per batch, each array with its own capacity */
    if (!pb_vec_reserve((void **)&a->steps, &a->scap, a->nsteps + n, sizeof *a->steps) ||
        !pb_vec_reserve((void **)&a->sampled_pos, &a->pcap, a->nsteps + n, sizeof *a->sampled_pos))
        return;
    for (size_t i = 0; i < n; i++) {
        prism_step st = s[i];
        bool backwards = st.end < st.start;
        if (backwards)
            st.end = st.start;
        size_t at = a->nsteps++;
        /* still sorted while each step starts no earlier than the last */
        if (a->steps_sorted == at && (at == 0 || a->steps[at - 1].start <= st.start))
            a->steps_sorted = at + 1;
        a->steps[at] = st;
        /* the operator window's steps are slowed by it: their regions'
         * time is no part of the step time the rules share out, as it is
         * none of the step statistics */
        a->sampled_pos[at] = PRISM_STEP_COUNTED(st.flags) ? (uint32_t)a->nsampled++ : UINT32_MAX;
        a->steps_backwards += backwards;
    }
    a->steps_unused = false;
    an_tree_resolve_pending(a);
}

/* Memory samples in time order: appended, sorted (stable) at refresh. */
void an_series_memory(prism_analysis *a, const prism_memory_sample *m)
{
    if (!pb_vec_reserve((void **)&a->mem, &a->mcap, a->nmem + 1, sizeof *a->mem))
        return;
    prism_mem_point p = { .ts = m->ts, .step = m->step, .rss = m->rss,
                          .cpu_permille = m->cpu_permille, .ngpu = m->ngpu,
                          .ncpu = m->ncpu, .host_busy_permille = m->host_busy_permille,
                          .children_cpu_permille = m->children_cpu_permille };
    if (!p.ncpu)                        /* a 1.1 sample, or a zero-initialised one */
        p.host_busy_permille = p.children_cpu_permille = PRISM_NO_CPU;
    for (uint32_t g = 0; g < m->ngpu && g < PRISM_MAX_GPUS; g++) {   /* saturating */
        p.gpu_used = p.gpu_used + m->gpu[g].used < p.gpu_used ? UINT64_MAX
                                                              : p.gpu_used + m->gpu[g].used;
        p.gpu_reserved = p.gpu_reserved + m->gpu[g].reserved < p.gpu_reserved
                             ? UINT64_MAX : p.gpu_reserved + m->gpu[g].reserved;
    }
    if (a->nmem && a->mem[a->nmem - 1].ts > p.ts)
        a->mem_unsorted = true;
    a->mem[a->nmem++] = p;
}

/* A stable bottom-up merge sort by time (equal times keep arrival order,
 * as insertion did): O(n log n) with one buffer of n samples. */
static void sort_memory(prism_analysis *a)
{
    size_t n = a->nmem;
    if (!a->mem_unsorted)
        return;
    prism_mem_point *src = a->mem, *dst = malloc(n * sizeof *dst);
    if (!dst)
        return;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = src[j].ts < src[i].ts ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        prism_mem_point *x = src;
        src = dst;
        dst = x;
    }
    if (src != a->mem)
        memcpy(a->mem, src, n * sizeof *src);
    free(src == a->mem ? dst : src);
    a->mem_unsorted = false;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The index of the nearest-rank percentile p among n sorted values. */
static size_t pct_rank(size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    return k < 1 ? 0 : k - 1;
}

/* Steps whose index an earlier one had: none when the indexes rise in
 * start order (the usual case: no copy), else from a sorted copy of them (0
 * when the copy cannot be made). */
static uint64_t dup_indexes(const prism_step *s, size_t n)
{
    size_t up = 1;                      /* usually rising: none, no copy */
    while (up < n && s[up].index > s[up - 1].index)
        up++;
    if (up >= n)
        return 0;
    uint64_t *ix = malloc(n * sizeof *ix), dups = 0;
    if (!ix)
        return 0;
    for (size_t i = 0; i < n; i++)
        ix[i] = s[i].index;
    pb_qsort(ix, n, sizeof *ix, cmp_u64);
    for (size_t i = 1; i < n; i++)
        dups += ix[i] == ix[i - 1];
    free(ix);
    return dups;
}

/* v[0, n) ascending: an LSD radix sort a byte at a time, the bytes every
 * duration shares skipped (the first refresh of a big file sorts millions
 * of steps in a few passes, not n log n comparisons); scratch holds n. */
static void sort_durations(uint64_t *v, uint64_t *scratch, size_t n)
{
    size_t cnt[8][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 8; b++)
            cnt[b][(v[i] >> (8 * b)) & 255]++;
    uint64_t *src = v, *dst = scratch;
    for (unsigned b = 0; b < 8 && n > 1; b++) {
        if (cnt[b][(src[0] >> (8 * b)) & 255] == n)
            continue;                   /* every one the same here */
        size_t at = 0;
        for (unsigned d = 0; d < 256; d++) {
            size_t c = cnt[b][d];
            cnt[b][d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[b][(src[i] >> (8 * b)) & 255]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
}

/* The steps not counted yet, [upto, nsteps), into the accumulator: their
 * counts and moments in step order, their durations sorted and merged
 * into the sorted ones (from the back, in place). */
static void acc_add(prism_analysis *a)
{
    an_step_acc *c = &a->step_acc;
    size_t n = a->nsteps, k = 0, more = n - c->upto;
    if (!more)
        return;
    if (!c->no_dur && (!pb_vec_reserve((void **)&c->dur, &c->dcap, c->ndur + more, sizeof *c->dur) ||
                       !pb_vec_reserve((void **)&c->tmp, &c->tcap, more, sizeof *c->tmp)))
        c->no_dur = true;               /* counts still; percentiles 0 */
    for (size_t i = c->upto; i < n; i++) {
        const prism_step *s = &a->steps[i];
        if (i && s->index <= a->steps[i - 1].index)
            c->unordered = true;
        if (s->flags & PRISM_STEP_SAMPLED)
            c->sampled++;
        if (s->flags & PRISM_STEP_OPS) {        /* slowed by the operator window */
            c->op_steps++;
            continue;
        }
        if (s->end <= s->start) {       /* zero length, or moved there */
            c->zero_len++;
            continue;
        }
        if (c->timed && s->start < c->reach)
            c->overlapping++;
        if (s->end > c->reach)
            c->reach = s->end;
        uint64_t ns = s->end - s->start;
        c->total_ns = ns > UINT64_MAX - c->total_ns ? UINT64_MAX : c->total_ns + ns;
        double v = (double)ns, dd = v - c->mean;
        c->timed++;
        c->mean += dd / (double)c->timed;
        c->m2 += dd * (v - c->mean);
        c->sum += v;
        if (!c->no_dur)
            c->tmp[k++] = ns;
    }
    c->upto = n;
    if (c->no_dur || !k)
        return;
    sort_durations(c->tmp, c->dur + c->ndur, k);       /* scratch: dur's free tail */
    size_t x = c->ndur, y = k, w = c->ndur + k;         /* merged from the back */
    while (y > 0) {
        w--;
        if (x > 0 && c->dur[x - 1] > c->tmp[y - 1])
            c->dur[w] = c->dur[--x];
        else
            c->dur[w] = c->tmp[--y];
    }
    c->ndur += k;
}

/* Step statistics (see prism_step_stats) from the accumulator, brought up
 * to date: what the new steps add, not every step again.  Steps are in
 * start order; those that ended before they started are zero-length by
 * now (an_series_steps). */
static void step_stats(prism_analysis *a, prism_step_stats *st)
{
    an_step_acc *c = &a->step_acc;
    acc_add(a);
    st->sampled = c->sampled;
    st->zero_len = c->zero_len;
    st->timed = c->timed;
    st->op_steps = c->op_steps;
    st->overlapping = c->overlapping;
    st->total_ns = c->total_ns;
    st->mean_ns = c->timed ? c->mean : 0;
    st->std_ns = c->timed > 1 ? sqrt(c->m2 / (double)(c->timed - 1)) : 0;
    if (!c->no_dur && c->ndur && c->ndur == c->timed) {
        st->p50_ns = (double)c->dur[pct_rank(c->ndur, 0.50)];
        st->p95_ns = (double)c->dur[pct_rank(c->ndur, 0.95)];
        st->max_ns = (double)c->dur[c->ndur - 1];
    }
    st->bad_order = a->steps_backwards;         /* counted as zero length above */
    st->zero_len -= st->bad_order;
    st->dup_index = c->unordered ? dup_indexes(a->steps, a->nsteps) : 0;
}

const uint64_t *an_series_durations(const prism_analysis *a, size_t *n, double *sum)
{
    const an_step_acc *c = &a->step_acc;
    bool ok = !c->no_dur && c->ndur == a->step_stats.timed && c->upto == a->nsteps;
    *n = ok ? c->ndur : 0;
    *sum = c->sum;
    return ok ? c->dur : NULL;
}

/* An imported torch.profiler trace (or a profile converted from one): its
 * host memory samples are the allocator's "Total Allocated" (docs/IMPORT.md,
 * Memory), not a resident set. */
static bool host_is_allocated(const prism_header *h)
{
    for (size_t i = 0; h && i < h->nconfig; i++)
        if (h->config[i].key && !strcmp(h->config[i].key, "import.layout"))
            return true;
    return false;
}

const char *prism_memory_host_name(const prism_memory_stats *m, bool peak)
{
    bool alloc = m && m->host_allocated;
    if (peak)
        return alloc ? "Peak allocated (torch's CPU allocator, from the trace)" : "Peak host RSS";
    return alloc ? "host allocated" : "host RSS";
}

void an_series_refresh(prism_analysis *a)
{
    an_series_sort_steps(a);
    sort_memory(a);
    prism_step_stats *st = &a->step_stats;
    memset(st, 0, sizeof *st);
    st->series = a->steps;
    st->nseries = a->nsteps;
    st->count = a->nsteps;
    step_stats(a, st);

    prism_memory_stats *ms = &a->mem_stats;
    memset(ms, 0, sizeof *ms);
    ms->samples = a->mem;
    ms->count = a->nmem;
    ms->host_allocated = host_is_allocated(prism_analysis_header(a));
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

/*
 * Steps left in the epoch the profile ends in, when epochs are known: an
 * epoch's length is the longest run of one epoch number before the last
 * run (the first epoch may have begun before recording did, the last may be
 * running); when the last has that many already, a whole next epoch.  0
 * when the profile has a single epoch number (epochs unknown).
 */
static uint64_t steps_to_epoch_end(const prism_analysis *a)
{
    uint64_t longest = 0, last = 0;
    for (size_t i = 0, j; i < a->nsteps; i = j) {
        for (j = i + 1; j < a->nsteps && a->steps[j].epoch == a->steps[i].epoch; j++)
            ;
        if (j == a->nsteps)
            last = j - i;
        else if (j - i > longest)
            longest = j - i;
    }
    if (!longest)
        return 0;
    return longest > last ? longest - last : longest;
}

/*
 * The step a memory sample counts for: the one it was taken at, or, for a
 * periodic sample, the step most recently started before it (a sample
 * between steps belongs to the step that just ran); PRISM_NO_STEP before
 * the first step and after the last one ended.  Steps in start order.
 */
static uint64_t step_of(const prism_analysis *a, const prism_mem_point *m)
{
    if (m->step != PRISM_NO_STEP)
        return m->step;
    size_t lo = 0, hi = a->steps_sorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->steps[mid].start <= m->ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return PRISM_NO_STEP;
    const prism_step *s = &a->steps[lo - 1];
    if (lo == a->steps_sorted && m->ts > s->end)
        return PRISM_NO_STEP;
    return s->index;
}

void an_series_leaks(prism_analysis *a, double threshold_mb)
{
    prism_memory_stats *ms = &a->mem_stats;
    ms->host = ms->gpu = prism_leak_fit(NULL, NULL, 0, threshold_mb);   /* "no fit" */
    ms->have_gpu_alloc = a->ngalloc > 0;
    an_alloc_fit(a, threshold_mb, &ms->gpu_alloc);
    uint64_t left = steps_to_epoch_end(a);
    if (ms->have_gpu_alloc)
        prism_leak_project(&ms->gpu_alloc, left, true);
    size_t n = a->nmem;
    double *x = malloc((n ? n : 1) * sizeof *x), *yh = malloc((n ? n : 1) * sizeof *yh),
           *yg = malloc((n ? n : 1) * sizeof *yg);
    if (!x || !yh || !yg) {
        free(x);
        free(yh);
        free(yg);
        return;
    }
    /* GPU used: the step-end samples alone when they carry GPU figures (a
     * program's own, e.g. torch's memory_allocated, differ in kind from
     * NVML's periodic per-process figure: mixed, the line fits neither; GPU
     * run, torch_amp_pym fixture); samples without GPU figures never */
    bool step_gpu = false;
    for (size_t i = 0; i < a->nmem && !step_gpu; i++)
        step_gpu = a->mem[i].step != PRISM_NO_STEP && a->mem[i].ngpu;
    double *xg = malloc((n ? n : 1) * sizeof *xg);
    if (!xg) {
        free(x);
        free(yh);
        free(yg);
        return;
    }
    size_t k = 0, kg = 0;
    for (size_t i = 0; i < a->nmem; i++) {
        const prism_mem_point *m = &a->mem[i];
        uint64_t step = step_of(a, m);
        if (step == PRISM_NO_STEP)
            continue;
        x[k] = (double)step;
        yh[k] = (double)m->rss;
        k++;
        if (m->ngpu && (!step_gpu || m->step != PRISM_NO_STEP)) {
            xg[kg] = (double)step;
            yg[kg++] = (double)m->gpu_used;
        }
    }
    ms->host = prism_leak_fit(x, yh, k, threshold_mb);
    if (ms->have_gpu)
        ms->gpu = prism_leak_fit(xg, yg, kg, threshold_mb);
    free(xg);
    prism_leak_project(&ms->host, left, true);
    if (ms->have_gpu)
        prism_leak_project(&ms->gpu, left, true);
    free(x);
    free(yh);
    free(yg);
}
