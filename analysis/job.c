/*
 * analysis/job.c - rank summaries merged into a job: steps aligned by
 * index, the rank x step matrices, the job's step and skew, per-step
 * outliers and the stragglers (their cause: analysis/job_cause.c).
 *
 * 1. Ranks.  A rank's id is its header rank when every summary has one
 *    (>= 0) and none repeats; otherwise every rank gets its file order
 *    (0..n-1) and ids_from_order is set: mixing the two could give two
 *    ranks one id.  Ranks are sorted by id.
 * 2. Aligned steps: the union of the ranks' step indices, ascending, by
 *    merging the sorted lists.  A summary can come from a hostile file, so
 *    a rank whose steps are not strictly ascending has them sorted (stably)
 *    and duplicates dropped, the first kept; the job owns the summary, so
 *    this is done in place and the summary agrees with the matrices.
 *    The cells (a rank's step and work ns at an aligned step) are kept
 *    rank by rank, only those that exist (row/cell: a job of ranks whose
 *    steps do not overlap costs what its files hold, never ranks x
 *    steps); work = step - wait, the wait clamped to the step.  Columns
 *    (a step's ranks) are walked with a cursor per rank, in step order.
 * 3. The job's step is, per aligned step, the slowest rank's step time
 *    (the others wait for it at the next collective); its median, mean and
 *    sum over steps.  Skew per step (>= 2 ranks present): max - min of the
 *    step time, and of the work; their median and the step skew's max.
 * 4. Outliers, per step s and rank r with a value, against the others at s
 *    (>= 1 needed): m = their median work, d = 1.4826 * their MAD, and
 *    thr = max(k_mad * d, min_excess_pct % of m, min_excess_ns); r slowed s
 *    when work - m > thr, and its excess at s is work - m.  Each column is
 *    sorted once: the median without element p is read from the sorted
 *    column by index (it moves by at most one position), exact.  The MAD
 *    of the others is approximated by the whole column's MAD: one value
 *    among many moves it by about one order statistic, not worth a
 *    second sort per cell; with <= 3 values (1 or 2 others, where one
 *    value is all there is) it is computed exactly.  That is O(nsteps x
 *    nranks x log nranks): 1024 ranks x 1000 steps in a fraction of a
 *    second.
 *    Medians elsewhere are quickselect (O(n)).
 * 5. A rank's figures: medians of its step, work and wait times over its
 *    steps; excess_median, the median of its excess over its steps shared
 *    with >= 1 other rank; slowed, the steps it slowed.  A straggler shares
 *    >= 1 step, slowed >= 1 and >= consistent x its shared steps, and has
 *    excess_median > 0.  With 2 ranks the MAD is 0 and the relative floor
 *    (5 %) decides; ranks equal up to a few % of noise give none.  A rank
 *    is also a straggler by distribution (DIST_*): above the others in
 *    significantly more of its shared steps than chance (a sign test) with
 *    a median work 25 % above theirs, however few steps it slowed.
 * 6. Stragglers by excess descending: excess_ns = excess_median, its % of
 *    the median of the other ranks' work medians, slowed/steps and the
 *    first 16 step indices it slowed; the cause (job_cause.c).
 * 7. median_rank: the rank whose work median is the lower median of them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "job_internal.h"

const char *prism_wait_kind_name(prism_wait_kind k)
{
    switch (k) {
    case PRISM_WAIT_NO: return "work";
    case PRISM_WAIT_OFFCPU: return "off_cpu";
    case PRISM_WAIT_GPU: return "gpu_collective";
    case PRISM_WAIT_NAME: return "name";
    }
    return "unknown";           /* a hostile summary's value */
}

void prism_job_opts_default(prism_job_opts *o)
{
    o->k_mad = 3.0;
    o->min_excess_pct = 5.0;
    o->min_excess_ns = 20000.0;
    o->consistent = 0.5;
}

/* ---- medians ---- */

int an_job_cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The k-th smallest of v[0..n) (k < n) into v[k], the smaller before it
 * and the larger after: quickselect (O(n) expected: the medians of every
 * rank's steps are taken, 1024 x 10000 values), sorting what is left after
 * too many rounds so that a hostile order cannot make it quadratic. */
static double select_kth(double *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, at = (ptrdiff_t)k;
    for (int round = 0; lo < hi; round++) {
        if (round == 64) {
            pb_qsort(v + lo, (size_t)(hi - lo + 1), sizeof *v, an_job_cmp_double);
            break;
        }
        double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {            /* Hoare: the pivot's value stops both */
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (at <= j)
            hi = j;
        else if (at >= i)
            lo = i;
        else
            break;                  /* between: equal to the pivot */
    }
    return v[k];
}

double an_job_median(double *v, size_t n)
{
    if (!n)
        return 0.0;
    double hi = select_kth(v, n, n / 2);
    if (n % 2)
        return hi;
    double lo = v[0];               /* the largest of those before */
    for (size_t i = 1; i < n / 2; i++)
        lo = v[i] > lo ? v[i] : lo;
    return (lo + hi) / 2.0;
}

/* ---- 1. ranks ---- */

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int cmp_rank(const void *x, const void *y)
{
    const prism_job_rank *a = x, *b = y;
    return (a->id > b->id) - (a->id < b->id);
}

static bool assign_ids(prism_job *j)
{
    size_t n = j->nranks;
    int64_t *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        return false;
    bool header = true;
    for (size_t i = 0; i < n; i++) {
        r[i] = j->ranks[i].sum.rank;
        header = header && r[i] >= 0;
    }
    pb_qsort(r, n, sizeof *r, cmp_i64);
    for (size_t i = 1; header && i < n; i++)
        header = r[i] != r[i - 1];
    free(r);
    j->ids_from_order = !header;
    for (size_t i = 0; i < n; i++)
        j->ranks[i].id = header ? j->ranks[i].sum.rank : (int64_t)i;
    /* ids are distinct: the order is total */
    pb_qsort(j->ranks, n, sizeof *j->ranks, cmp_rank);
    return true;
}

/* ---- 2. aligned steps ---- */

static int cmp_step(const void *x, const void *y, const void *ctx)
{
    (void)ctx;
    const prism_rank_step *a = x, *b = y;
    return (a->index > b->index) - (a->index < b->index);
}

/* Steps strictly ascending by index (see 2.). */
static void normalise_steps(prism_rank_summary *s)
{
    if (!s->steps)
        s->nsteps = 0;
    bool sorted = true;
    for (size_t i = 1; sorted && i < s->nsteps; i++)
        sorted = s->steps[i].index > s->steps[i - 1].index;
    if (sorted)
        return;
    pb_sort_stable(s->steps, s->nsteps, sizeof *s->steps, cmp_step, NULL);
    size_t k = 1;
    for (size_t i = 1; i < s->nsteps; i++)
        if (s->steps[i].index != s->steps[k - 1].index)
            s->steps[k++] = s->steps[i];
    s->nsteps = k;
}

/* u[0..*nu) := u ∪ the rank's indices; false on allocation failure. */
static bool union_steps(uint64_t **u, size_t *nu, const prism_rank_summary *s)
{
    size_t n = *nu, m = s->nsteps;
    if (!m)
        return true;
    uint64_t *out = malloc((n + m) * sizeof *out);
    if (!out)
        return false;
    size_t a = 0, b = 0, k = 0;
    while (a < n || b < m) {
        uint64_t x = a < n ? (*u)[a] : UINT64_MAX, y = b < m ? s->steps[b].index : UINT64_MAX;
        bool take_a = a < n && (b >= m || x <= y);
        bool take_b = b < m && (a >= n || y <= x);
        out[k++] = take_a ? x : y;
        a += take_a;
        b += take_b;
    }
    free(*u);
    *u = out;
    *nu = k;
    return true;
}

static bool align(prism_job *j)
{
    for (size_t r = 0; r < j->nranks; r++) {
        normalise_steps(&j->ranks[r].sum);
        if (!union_steps(&j->step_index, &j->nsteps, &j->ranks[r].sum))
            return false;
    }
    size_t nr = j->nranks, ns = j->nsteps, nc = 0;
    if (!nr)
        return true;
    if (ns >= UINT32_MAX)
        return false;
    for (size_t r = 0; r < nr; r++)
        nc += j->ranks[r].sum.nsteps;
    j->row = malloc((nr + 1) * sizeof *j->row);
    j->cell = malloc((nc ? nc : 1) * sizeof *j->cell);
    if (!j->row || !j->cell)
        return false;
    size_t c = 0;
    for (size_t r = 0; r < nr; r++) {
        const prism_rank_summary *s = &j->ranks[r].sum;
        size_t p = 0;
        j->row[r] = c;
        for (size_t k = 0; k < s->nsteps; k++) {
            while (j->step_index[p] != s->steps[k].index)   /* present: a union */
                p++;
            uint64_t st = s->steps[k].step_ns, w = s->steps[k].wait_ns;
            j->cell[c++] = (prism_job_cell){ (uint32_t)p, (double)st,
                                             (double)(st - (w < st ? w : st)) };
        }
    }
    j->row[nr] = c;
    j->ncells = c;
    return true;
}

/* The cells of aligned step s, steps taken in order: cur[r] is rank r's
 * next cell (start at row[r]); their indices into at[] (nranks room),
 * rank order; returns how many. */
static size_t column(const prism_job *j, size_t *cur, size_t s, size_t *at)
{
    size_t n = 0;
    for (size_t r = 0; r < j->nranks; r++)
        if (cur[r] < j->row[r + 1] && j->cell[cur[r]].step == s)
            at[n++] = cur[r]++;
    return n;
}

/* A cursor per rank at its first cell, and room for a column; false
 * without memory. */
static bool column_start(const prism_job *j, size_t **cur, size_t **at)
{
    size_t nr = j->nranks ? j->nranks : 1;
    *cur = malloc(nr * sizeof **cur);
    *at = malloc(nr * sizeof **at);
    if (!*cur || !*at) {
        free(*cur);
        free(*at);
        return false;
    }
    for (size_t r = 0; r < j->nranks; r++)
        (*cur)[r] = j->row[r];
    return true;
}

/* ---- 3. the job's step and skew ---- */

static bool job_figures(prism_job *j)
{
    size_t ns = j->nsteps, nr = j->nranks;
    double *top = malloc((ns ? ns : 1) * 3 * sizeof *top);
    if (!top)
        return false;
    double *skew = top + ns, *wskew = skew + ns;
    size_t nt = 0, nk = 0, *cur, *at;
    double total = 0.0, skew_max = 0.0;
    if (nr && !column_start(j, &cur, &at)) {
        free(top);
        return false;
    }
    for (size_t s = 0; nr && s < ns; s++) {
        double hi = -INFINITY, lo = INFINITY, whi = -INFINITY, wlo = INFINITY;
        size_t c = 0, n = column(j, cur, s, at);
        for (size_t i = 0; i < n; i++) {
            double v = j->cell[at[i]].step_ns, w = j->cell[at[i]].work_ns;
            c++;
            hi = v > hi ? v : hi;
            lo = v < lo ? v : lo;
            whi = w > whi ? w : whi;
            wlo = w < wlo ? w : wlo;
        }
        if (!c)
            continue;
        top[nt++] = hi;
        total += hi;
        if (c >= 2) {
            skew[nk] = hi - lo;
            wskew[nk++] = whi - wlo;
            skew_max = hi - lo > skew_max ? hi - lo : skew_max;
        }
    }
    if (nr) {
        free(cur);
        free(at);
    }
    j->job_step_total_ns = total;
    j->job_step_mean_ns = nt ? total / (double)nt : 0.0;
    j->job_step_median_ns = an_job_median(top, nt);
    j->skew_median_ns = an_job_median(skew, nk);
    j->work_skew_median_ns = an_job_median(wskew, nk);
    j->skew_max_ns = skew_max;
    free(top);
    return true;
}

/* ---- 4. outliers ---- */

typedef struct cell {
    double v;
    size_t r;                   /* its cell (prism_job.cell) */
} cell;

/* The rank of cell c (rows ascending: a binary search). */
static size_t rank_of(const prism_job *j, size_t c)
{
    size_t lo = 0, hi = j->nranks;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (j->row[mid] <= c)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_cell(const void *x, const void *y)
{
    const cell *a = x, *b = y;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return (a->r > b->r) - (a->r < b->r);
}

/* The k-th smallest of sorted c[0..n) without position p. */
static double without_at(const cell *c, size_t p, size_t k)
{
    return c[k < p ? k : k + 1].v;
}

/* The median of sorted c[0..n) without position p (n >= 2). */
static double median_without(const cell *c, size_t n, size_t p)
{
    size_t m = n - 1;
    return m % 2 ? without_at(c, p, m / 2)
                 : (without_at(c, p, m / 2 - 1) + without_at(c, p, m / 2)) / 2.0;
}

/* The MAD of sorted c[0..n) without position p, exactly (n <= 3). */
static double mad_without(const cell *c, size_t n, size_t p, double med)
{
    double d[2];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 2; i++)
        if (i != p)
            d[k++] = fabs(c[i].v - med);
    return an_job_median(d, k);
}

/* Per-cell flags. */
enum { CELL_SHARED = 1, CELL_SLOWED = 2 };

typedef struct outl {
    double *excess;             /* a cell's (prism_job.cell), where CELL_SHARED */
    uint8_t *flag;              /* a cell's */
    uint64_t *shared;           /* per rank: its steps with another rank */
} outl;

static bool outliers(const prism_job *j, const prism_job_opts *o, outl *out)
{
    size_t nr = j->nranks, ns = j->nsteps, cells = j->ncells, *cur = NULL, *at = NULL;
    out->excess = malloc((cells ? cells : 1) * sizeof *out->excess);
    out->flag = calloc(cells ? cells : 1, 1);
    out->shared = calloc(nr ? nr : 1, sizeof *out->shared);
    cell *col = malloc((nr ? nr : 1) * sizeof *col);
    double *dev = malloc((nr ? nr : 1) * sizeof *dev);
    bool ok = out->excess && out->flag && out->shared && col && dev &&
              (!nr || column_start(j, &cur, &at));
    for (size_t s = 0; ok && nr && s < ns; s++) {
        size_t n = column(j, cur, s, at);
        for (size_t i = 0; i < n; i++)
            col[i] = (cell){ j->cell[at[i]].work_ns, at[i] };
        if (n < 2)
            continue;
        pb_qsort(col, n, sizeof *col, cmp_cell);
        double all_mad = 0.0;
        if (n > 3) {
            size_t m = n / 2;
            double med = n % 2 ? col[m].v : (col[m - 1].v + col[m].v) / 2.0;
            for (size_t i = 0; i < n; i++)
                dev[i] = fabs(col[i].v - med);
            all_mad = an_job_median(dev, n);
        }
        for (size_t p = 0; p < n; p++) {
            double m = median_without(col, n, p);
            double d = 1.4826 * (n > 3 ? all_mad : mad_without(col, n, p, m));
            double thr = fmax(fmax(o->k_mad * d, o->min_excess_pct / 100.0 * m), o->min_excess_ns);
            size_t c = col[p].r, r = rank_of(j, c);
            out->excess[c] = col[p].v - m;
            out->flag[c] = CELL_SHARED | (col[p].v - m > thr ? CELL_SLOWED : 0);
            out->shared[r]++;
        }
    }
    free(col);
    free(dev);
    free(cur);
    free(at);
    return ok;
}

/* ---- 5. rank figures, 7. the median rank ---- */

/* Stragglers by distribution: a rank above the others in at least 8
 * shared steps, with a sign test z >= 3.09 (one-sided p < 0.001) and a
 * median work 25 % above the others' median, even when per-step noise
 * keeps most of its steps under the per-step threshold. */
#define DIST_MIN_STEPS 8u
#define DIST_Z 3.09
#define DIST_EFFECT 0.25

static bool rank_figures(prism_job *j, const prism_job_opts *o, const outl *ol)
{
    size_t ns = j->nsteps;
    size_t nv = ns > j->nranks ? ns : j->nranks;
    double *v = malloc((nv ? nv : 1) * 4 * sizeof *v);
    if (!v)
        return false;
    double *w = v + nv, *wt = w + nv, *ex = wt + nv;
    for (size_t r = 0; r < j->nranks; r++) {
        prism_job_rank *k = &j->ranks[r];
        size_t n = 0, ne = 0;
        k->slowed = 0;
        for (size_t c = j->row[r]; c < j->row[r + 1]; c++) {
            double st = j->cell[c].step_ns;
            v[n] = st;
            w[n] = j->cell[c].work_ns;
            wt[n] = st - w[n];
            n++;
            uint8_t f = ol->flag[c];
            if (f & CELL_SHARED)
                ex[ne++] = ol->excess[c];
            k->slowed += (f & CELL_SLOWED) != 0;
        }
        k->step_median_ns = an_job_median(v, n);
        k->work_median_ns = an_job_median(w, n);
        k->wait_median_ns = an_job_median(wt, n);
        k->excess_median_ns = an_job_median(ex, ne);
        k->straggler = ol->shared[r] >= 1 && k->slowed >= 1 &&
                       (double)k->slowed >= o->consistent * (double)ol->shared[r] &&
                       k->excess_median_ns > 0;
        /* by distribution: a sign test (a rank test of the paired
         * differences) on its excess over the others, step by step */
        size_t above = 0;
        for (size_t i = 0; i < ne; i++)
            above += ex[i] > 0;
        double z = ne ? (2.0 * (double)above - (double)ne) / sqrt((double)ne) : 0;
        k->dist_z = z;
    }
    /* ... with a minimum effect: its median work 25 % above the others',
     * by at least min_excess_ns and min_excess_pct % of the job's median
     * step (8 equal ranks of 60 us of work in 1.5 ms steps, 2 cores: three
     * read 20 us "slower", 1.3 % of the step) */
    for (size_t r = 0; r < j->nranks; r++) {
        prism_job_rank *k = &j->ranks[r];
        size_t n = 0;
        for (size_t i = 0; i < j->nranks; i++)
            if (i != r)
                v[n++] = j->ranks[i].work_median_ns;
        double others = an_job_median(v, n);
        /* and an excess that matters to the job: the per-step floors
         * (min_excess_ns, min_excess_pct) against its median step */
        double floor = fmax(o->min_excess_ns, o->min_excess_pct / 100.0 * j->job_step_median_ns);
        if (!k->straggler && n && ol->shared[r] >= DIST_MIN_STEPS && k->dist_z >= DIST_Z &&
            others > 0 && k->work_median_ns >= (1.0 + DIST_EFFECT) * others &&
            k->work_median_ns - others >= floor && k->excess_median_ns > 0)
            k->straggler = true;
        j->nstragglers += k->straggler;
    }
    free(v);
    return true;
}

static int cmp_by_work(const void *x, const void *y, const void *ctx)
{
    const prism_job *j = ctx;
    double a = j->ranks[*(const size_t *)x].work_median_ns;
    double b = j->ranks[*(const size_t *)y].work_median_ns;
    return (a > b) - (a < b);
}

static bool median_rank(prism_job *j)
{
    if (!j->nranks)
        return true;
    size_t *ix = malloc(j->nranks * sizeof *ix);
    if (!ix)
        return false;
    for (size_t i = 0; i < j->nranks; i++)
        ix[i] = i;
    pb_sort_stable(ix, j->nranks, sizeof *ix, cmp_by_work, j);
    j->median_rank = ix[(j->nranks - 1) / 2];
    free(ix);
    return true;
}

/* ---- 6. stragglers ---- */

/* The median of field `off` (a double) of the ranks other than r. */
static double others_median(const prism_job *j, size_t r, size_t off, double *scratch)
{
    size_t n = 0;
    for (size_t i = 0; i < j->nranks; i++)
        if (i != r)
            memcpy(&scratch[n++], (const char *)&j->ranks[i] + off, sizeof(double));
    return an_job_median(scratch, n);
}

static int cmp_straggler(const void *x, const void *y)
{
    const prism_straggler *a = x, *b = y;
    if (a->excess_ns != b->excess_ns)
        return a->excess_ns < b->excess_ns ? 1 : -1;
    return (a->index > b->index) - (a->index < b->index);
}

static bool stragglers(prism_job *j, const outl *ol)
{
    if (!j->nstragglers)
        return true;
    j->stragglers = calloc(j->nstragglers, sizeof *j->stragglers);
    double *scratch = malloc(j->nranks * sizeof *scratch);
    if (!j->stragglers || !scratch) {
        free(scratch);
        j->nstragglers = 0;
        return false;
    }
    size_t n = 0;
    for (size_t r = 0; r < j->nranks; r++) {
        const prism_job_rank *k = &j->ranks[r];
        if (!k->straggler)
            continue;
        prism_straggler *g = &j->stragglers[n++];
        g->index = r;
        g->rank = k->id;
        g->excess_ns = k->excess_median_ns;
        double base = others_median(j, r, offsetof(prism_job_rank, work_median_ns), scratch);
        g->excess_pct = base > 0 ? 100.0 * g->excess_ns / base : 0.0;
        g->slowed = k->slowed;
        g->steps = k->sum.nsteps;
        for (size_t c = j->row[r]; c < j->row[r + 1] && g->nslowed_index < 16; c++)
            if (ol->flag[c] & CELL_SLOWED)
                g->slowed_index[g->nslowed_index++] = j->step_index[j->cell[c].step];
        g->others_wait_ns = others_median(j, r, offsetof(prism_job_rank, wait_median_ns),
                                              scratch);
    }
    free(scratch);
    an_job_causes(j);
    pb_qsort(j->stragglers, n, sizeof *j->stragglers, cmp_straggler);
    return true;
}

/* ---- the job ---- */

static void free_failures(prism_job_failure *f, size_t n)
{
    for (size_t i = 0; f && i < n; i++)
        free(f[i].source);
    free(f);
}

prism_job *prism_job_new(prism_rank_summary *sums, size_t n, prism_job_failure *failed,
                         size_t nfailed, const prism_job_opts *opts)
{
    prism_job_opts o;
    if (opts)
        o = *opts;
    else
        prism_job_opts_default(&o);
    prism_job *j = calloc(1, sizeof *j);
    prism_job_rank *ranks = calloc(n ? n : 1, sizeof *ranks);
    if (!j || !ranks) {
        for (size_t i = 0; i < n; i++)
            prism_rank_summary_free(&sums[i]);
        free_failures(failed, nfailed);
        free(j);
        free(ranks);
        return NULL;
    }
    j->ranks = ranks;
    j->nranks = n;
    for (size_t i = 0; i < n; i++)
        ranks[i].sum = sums[i];
    j->failed = failed;
    j->nfailed = nfailed;
    outl ol = { 0 };
    bool ok = assign_ids(j) && align(j) && job_figures(j) && outliers(j, &o, &ol) &&
              rank_figures(j, &o, &ol) && median_rank(j) && stragglers(j, &ol);
    free(ol.excess);
    free(ol.flag);
    free(ol.shared);
    if (!ok) {
        prism_job_free(j);
        return NULL;
    }
    return j;
}

void prism_job_free(prism_job *j)
{
    if (!j)
        return;
    for (size_t i = 0; j->ranks && i < j->nranks; i++)
        prism_rank_summary_free(&j->ranks[i].sum);
    free(j->ranks);
    free(j->step_index);
    free(j->row);
    free(j->cell);
    free(j->stragglers);
    free_failures(j->failed, j->nfailed);
    free(j);
}
