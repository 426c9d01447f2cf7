/*
 * analysis/job_cause.c - what makes a rank slow: its per-region deltas
 * against the other ranks, and a straggler's cause.
 *
 * Deltas of rank r.  Over the union of the call paths (path_hash) of all
 * ranks' regions: a rank's value for a path is its in_step_ns / its steps
 * (>= 1), 0 when it lacks the path; the median is over the OTHER ranks;
 * delta = r's value - that median.  A path is waiting when it is a waiting
 * region (wait != PRISM_WAIT_NO) on most of the other ranks that have it,
 * or on r when no other has it.  A path's name is '/'-joined from the root
 * through parent_hash links, truncated at 255 bytes (not inside a UTF-8
 * character).  A parent must be shallower than its child, so hostile links
 * make no cycle.  Cost: every rank's values per path are gathered and
 * sorted once (ranks x regions, <= 512 each); a rank's medians over the
 * others are then read by position, leaving its own value out (as the
 * outliers are in job.c): 100 stragglers of 1024 ranks cost little more
 * than one.  prism_job_deltas gathers them per call.
 *
 * The cause.  Under a collective every rank's step lasts as long as the
 * slowest one's: a region enclosing both the work and the all-reduce ("step"
 * around forward and allreduce) has the same time on every rank, its delta
 * near 0, while its work differs.  So the walk uses each region's WORK: its
 * time minus the time of the deepest waiting regions under it (those
 * holding no waiting region themselves, as a step's wait time is counted),
 * per step.  Among the paths that are not waiting: start at the root
 * (depth 0; or a path whose parent no rank has) with the largest positive
 * work delta, then move to the child
 * (parent_hash == the current path) with the largest work delta while that
 * child is not waiting and carries >= 60 % of the current delta.  The cause
 * and deltas[] (up to 8 largest positive work deltas) report work times;
 * where no waiting region lies under a path they equal its plain figures.
 * The wait region is the waiting path with the most negative plain delta
 * (the others wait in it and the straggler does not): kept when that delta
 * is below 0 and the others' median there is above 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "job_internal.h"

/* A call path of the union. */
typedef struct dent {
    uint64_t hash, parent;
    uint32_t depth;
    const char *name;           /* of its first region */
    size_t up;                  /* its parent path (shallower), SIZE_MAX: none */
    size_t kid0, nkid;          /* its children: kids[kid0, kid0 + nkid) */
    uint32_t have, waiting;     /* ranks with it; of them, waiting */
    size_t start;               /* their values: sv/sw[start, start + have) */
    /* the rank at hand (dset_for) */
    double v, w;                /* its time and work per step, 0 when absent */
    bool r_has, r_wait;
    double mv, mw;              /* the other ranks' medians (absent = 0) */
    bool wait;                  /* waiting on most others that have it */
} dent;

/* A rank's value per region (first occurrence of each path only). */
typedef struct rval {
    size_t u;                   /* its path */
    double v, w;
    bool wait, keep;
} rval;

/* The paths of the job, every rank's values per path sorted ascending
 * (built once: a straggler's medians are then read by position), and
 * scratch for one rank's regions. */
typedef struct dset {
    dent *d;
    size_t n;
    pb_map of;                  /* path hash -> index into d */
    double *sv, *sw;            /* time, work per step */
    size_t *kids;
    size_t *stamp, *loc;        /* per path: rank + 1 that saw it, its region */
    size_t *par;                /* per region: its parent region or SIZE_MAX */
    double *sub;                /* ... time of the deepest waiting below it */
    bool *below;                /* ... a waiting region below it */
    rval *rv;
} dset;

/* The map's keys are hash + 1: a hostile 2^64-1 is folded onto 2^64-2. */
static uint64_t key_of(uint64_t h)
{
    return h == UINT64_MAX ? UINT64_MAX - 1 : h;
}

/* The values of rank q's regions into ds->rv: per step, and the work
 * (time minus the deepest waiting regions under it).  A parent is a
 * region of the same rank before the child; a path twice in a rank counts
 * once (the first). */
static void rank_values(const prism_job *j, dset *ds, size_t q)
{
    const prism_rank_summary *s = &j->ranks[q].sum;
    double steps = s->nsteps ? (double)s->nsteps : 1.0;
    rval *rv = ds->rv;
    memset(ds->stamp, 0, ds->n * sizeof *ds->stamp);
    for (size_t i = 0; s->regions && i < s->nregions; i++) {
        uint64_t u = 0, pu;
        pb_map_get(&ds->of, key_of(s->regions[i].path_hash), &u);
        rv[i] = (rval){ .u = u, .keep = !ds->stamp[u], .wait = s->regions[i].wait != 0 };
        if (rv[i].keep) {
            ds->stamp[u] = q + 1;
            ds->loc[u] = i;
        }
        ds->par[i] = SIZE_MAX;
        if (s->regions[i].depth && pb_map_get(&ds->of, key_of(s->regions[i].parent_hash), &pu) &&
            ds->stamp[pu] && ds->loc[pu] < i)
            ds->par[i] = ds->loc[pu];
        ds->sub[i] = 0.0;
        ds->below[i] = false;
    }
    for (size_t i = s->regions ? s->nregions : 0; i-- > 0;) {
        double t = (double)s->regions[i].in_step_ns, sub = ds->sub[i];
        rv[i].v = t / steps;
        rv[i].w = (rv[i].wait ? t : t - fmin(sub, t)) / steps;
        size_t p = ds->par[i];
        if (p != SIZE_MAX && rv[i].keep) {
            ds->sub[p] += sub + (rv[i].wait && !ds->below[i] ? t : 0.0);
            ds->below[p] = ds->below[p] || ds->below[i] || rv[i].wait;
        }
    }
}

static void dset_free(dset *ds)
{
    free(ds->d);
    pb_map_free(&ds->of);
    free(ds->sv);
    free(ds->sw);
    free(ds->kids);
    free(ds->stamp);
    free(ds->loc);
    free(ds->par);
    free(ds->sub);
    free(ds->below);
    free(ds->rv);
}

/* Parent and children of each path: a parent is shallower, so that
 * hostile links cannot make a cycle. */
static void link_paths(dset *ds)
{
    for (size_t u = 0; u < ds->n; u++) {
        dent *e = &ds->d[u];
        uint64_t p;
        e->up = e->depth && pb_map_get(&ds->of, e->parent, &p) && ds->d[p].depth < e->depth
                    ? (size_t)p : SIZE_MAX;
        if (e->up != SIZE_MAX)
            ds->d[e->up].nkid++;
    }
    for (size_t u = 0, at = 0; u < ds->n; u++) {
        ds->d[u].kid0 = at;
        at += ds->d[u].nkid;
        ds->d[u].nkid = 0;
    }
    for (size_t u = 0; u < ds->n; u++) {
        dent *up = ds->d[u].up != SIZE_MAX ? &ds->d[ds->d[u].up] : NULL;
        if (up)
            ds->kids[up->kid0 + up->nkid++] = u;
    }
}

/* The paths of every rank, their values gathered per path and sorted. */
static bool dset_build(const prism_job *j, dset *ds)
{
    memset(ds, 0, sizeof *ds);
    size_t total = 0, most = 1;
    for (size_t q = 0; q < j->nranks; q++) {
        const prism_rank_summary *s = &j->ranks[q].sum;
        total += s->regions ? s->nregions : 0;
        most = s->regions && s->nregions > most ? s->nregions : most;
    }
    size_t cap = total ? total : 1;
    ds->d = calloc(cap, sizeof *ds->d);
    ds->sv = malloc(cap * sizeof *ds->sv);
    ds->sw = malloc(cap * sizeof *ds->sw);
    ds->kids = malloc(cap * sizeof *ds->kids);
    ds->stamp = malloc(cap * sizeof *ds->stamp);
    ds->loc = malloc(cap * sizeof *ds->loc);
    ds->par = malloc(most * sizeof *ds->par);
    ds->sub = malloc(most * sizeof *ds->sub);
    ds->below = malloc(most * sizeof *ds->below);
    ds->rv = malloc(most * sizeof *ds->rv);
    if (!ds->d || !ds->sv || !ds->sw || !ds->kids || !ds->stamp || !ds->loc || !ds->par || !ds->sub ||
        !ds->below || !ds->rv)
        return false;
    for (size_t q = 0; q < j->nranks; q++) {
        const prism_rank_summary *s = &j->ranks[q].sum;
        for (size_t i = 0; s->regions && i < s->nregions; i++) {
            const prism_rank_region *g = &s->regions[i];
            bool added;
            uint64_t *slot = pb_map_slot(&ds->of, key_of(g->path_hash), &added);
            if (!slot)
                return false;
            if (!added)
                continue;
            *slot = ds->n;
            ds->d[ds->n++] = (dent){ .hash = key_of(g->path_hash), .parent = key_of(g->parent_hash),
                                     .depth = g->depth, .name = g->name ? g->name : "" };
        }
    }
    link_paths(ds);
    /* counted, then placed: sv/sw[start, start + have) per path */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t u = 0, at = 0; u < ds->n; u++) {
            ds->d[u].start = at;
            at += ds->d[u].have;
            ds->d[u].have = pass ? 0 : ds->d[u].have;
        }
        for (size_t q = 0; q < j->nranks; q++) {
            rank_values(j, ds, q);
            size_t nreg = j->ranks[q].sum.regions ? j->ranks[q].sum.nregions : 0;
            for (size_t i = 0; i < nreg; i++) {
                const rval *x = &ds->rv[i];
                dent *e = &ds->d[x->u];
                if (!x->keep)
                    continue;
                if (pass) {
                    ds->sv[e->start + e->have] = x->v;
                    ds->sw[e->start + e->have] = x->w;
                }
                e->have++;
                e->waiting += pass ? 0 : x->wait;
            }
        }
    }
    for (size_t u = 0; u < ds->n; u++) {
        pb_qsort(ds->sv + ds->d[u].start, ds->d[u].have, sizeof *ds->sv, an_job_cmp_double);
        pb_qsort(ds->sw + ds->d[u].start, ds->d[u].have, sizeof *ds->sw, an_job_cmp_double);
    }
    return true;
}

/* The k-th smallest of a path's values over the job (zeros for the ranks
 * without it, then vals[0..have)) without position p. */
static double nth_without(const double *vals, size_t zeros, size_t p, size_t k)
{
    k += k >= p;
    return k < zeros ? 0.0 : vals[k - zeros];
}

/* The median over the other ranks: the rank's own value x (a zero when it
 * lacks the path) left out of the sorted values by position. */
static double others_median(const double *vals, size_t have, size_t nranks, bool has, double x)
{
    if (nranks < 2)
        return 0.0;
    size_t zeros = nranks - have, lo = 0, hi = have;
    while (has && lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (vals[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    size_t p = has ? zeros + lo : 0, m = nranks - 1;
    return m % 2 ? nth_without(vals, zeros, p, m / 2)
                 : (nth_without(vals, zeros, p, m / 2 - 1) + nth_without(vals, zeros, p, m / 2)) /
                       2.0;
}

/* Rank r's values and the others' medians into every path. */
static void dset_for(const prism_job *j, dset *ds, size_t r)
{
    for (size_t u = 0; u < ds->n; u++) {
        dent *e = &ds->d[u];
        e->v = e->w = 0.0;
        e->r_has = e->r_wait = false;
    }
    rank_values(j, ds, r);
    size_t nreg = j->ranks[r].sum.regions ? j->ranks[r].sum.nregions : 0;
    for (size_t i = 0; i < nreg; i++) {
        const rval *x = &ds->rv[i];
        if (!x->keep)
            continue;
        dent *e = &ds->d[x->u];
        e->v = x->v;
        e->w = x->w;
        e->r_has = true;
        e->r_wait = x->wait;
    }
    for (size_t u = 0; u < ds->n; u++) {
        dent *e = &ds->d[u];
        e->mv = others_median(ds->sv + e->start, e->have, j->nranks, e->r_has, e->v);
        e->mw = others_median(ds->sw + e->start, e->have, j->nranks, e->r_has, e->w);
        uint32_t have = e->have - e->r_has, waiting = e->waiting - (e->r_has && e->r_wait);
        e->wait = have ? 2 * waiting > have : e->r_wait;
    }
}

/* ---- output ---- */

/* len, or less so that s[0..len) does not end inside a UTF-8 character. */
static size_t utf8_trim(const char *s, size_t len)
{
    size_t i = len, back = 0;
    while (i && back < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    if (!i)
        return len;
    unsigned char c = (unsigned char)s[i - 1];
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back + 1 ? i - 1 : len;
}

/* Deeper than a summary's regions can nest: only a hostile one's links. */
#define MAX_WALK (2 * PRISM_JOB_MAX_REGIONS)

/* The '/'-joined path of d[u] from its root into out[256], the root-most
 * 256 names (each takes >= 1 byte but for empty ones). */
static void path_of(const dset *ds, size_t u, char *out)
{
    size_t chain[256], n = 0;
    for (size_t at = u; at != SIZE_MAX && n < MAX_WALK; at = ds->d[at].up)
        chain[n++ % 256] = at;
    size_t len = 0, keep = n < 256 ? n : 256;
    bool cut = false;
    for (size_t k = keep; k-- > 0 && !cut;) {
        const char *name = ds->d[chain[(n - keep + k) % 256]].name;
        if (k != keep - 1) {
            if (len >= 255) {
                cut = true;
                break;
            }
            out[len++] = '/';
        }
        size_t l = strlen(name);
        if (len + l > 255) {
            l = 255 - len;
            cut = true;
        }
        memcpy(out + len, name, l);
        len += l;
    }
    if (cut)
        len = utf8_trim(out, len);
    out[len] = '\0';
}

static prism_job_delta delta_of(const dset *ds, size_t u, bool work)
{
    const dent *e = &ds->d[u];
    prism_job_delta d = { .name = e->name, .path_hash = e->hash, .depth = e->depth,
                          .rank_ns = work ? e->w : e->v, .median_ns = work ? e->mw : e->mv,
                          .wait = e->wait };
    d.delta_ns = d.rank_ns - d.median_ns;
    path_of(ds, u, d.path);
    return d;
}

static int cmp_abs_delta(const void *x, const void *y, const void *ctx)
{
    const dset *ds = ctx;
    const dent *a = &ds->d[*(const size_t *)x], *b = &ds->d[*(const size_t *)y];
    double da = fabs(a->v - a->mv), db = fabs(b->v - b->mv);
    if (da != db)
        return da < db ? 1 : -1;
    return (a->hash > b->hash) - (a->hash < b->hash);
}

size_t prism_job_deltas(const prism_job *j, size_t r, prism_job_delta *out, size_t max)
{
    if (!j || r >= j->nranks || !out || !max)
        return 0;
    dset ds;
    bool ok = dset_build(j, &ds);
    if (ok)
        dset_for(j, &ds, r);
    size_t *ix = ok ? malloc((ds.n ? ds.n : 1) * sizeof *ix) : NULL, k = 0;
    if (ix) {
        for (size_t u = 0; u < ds.n; u++)
            ix[u] = u;
        pb_sort_stable(ix, ds.n, sizeof *ix, cmp_abs_delta, &ds);
        for (; k < ds.n && k < max; k++)
            out[k] = delta_of(&ds, ix[k], false);
    }
    free(ix);
    dset_free(&ds);
    return k;
}

/* ---- the cause ---- */

static double wdelta(const dent *e)
{
    return e->w - e->mw;
}

static int cmp_wdelta(const void *x, const void *y, const void *ctx)
{
    const dset *ds = ctx;
    double a = wdelta(&ds->d[*(const size_t *)x]), b = wdelta(&ds->d[*(const size_t *)y]);
    return a != b ? (a < b ? 1 : -1) : 0;
}

static void cause_of(const prism_job *j, dset *ds, prism_straggler *g)
{
    dset_for(j, ds, g->index);
    size_t cur = SIZE_MAX, wr = SIZE_MAX, npos = 0;
    size_t *pos = malloc((ds->n ? ds->n : 1) * sizeof *pos);
    for (size_t u = 0; u < ds->n; u++) {
        const dent *e = &ds->d[u];
        double dv = e->v - e->mv;
        if (e->wait && dv < 0 && (wr == SIZE_MAX || dv < ds->d[wr].v - ds->d[wr].mv))
            wr = u;
        if (e->wait || !(wdelta(e) > 0))
            continue;
        if (pos)
            pos[npos++] = u;
        if (e->up == SIZE_MAX && (cur == SIZE_MAX || wdelta(e) > wdelta(&ds->d[cur])))
            cur = u;
    }
    /* down the heaviest child while it carries >= 60 % */
    for (size_t moves = 0; cur != SIZE_MAX && moves < MAX_WALK; moves++) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < ds->d[cur].nkid; k++) {
            size_t u = ds->kids[ds->d[cur].kid0 + k];
            const dent *e = &ds->d[u];
            if (!e->wait && (best == SIZE_MAX || wdelta(e) > wdelta(&ds->d[best])))
                best = u;
        }
        if (best == SIZE_MAX || !(wdelta(&ds->d[best]) >= 0.6 * wdelta(&ds->d[cur])))
            break;
        cur = best;
    }
    if (cur != SIZE_MAX) {
        g->cause = delta_of(ds, cur, true);
        g->have_cause = true;
    }
    if (pos) {
        pb_sort_stable(pos, npos, sizeof *pos, cmp_wdelta, ds);
        for (g->ndeltas = 0; g->ndeltas < npos && g->ndeltas < 8; g->ndeltas++)
            g->deltas[g->ndeltas] = delta_of(ds, pos[g->ndeltas], true);
    }
    free(pos);
    if (wr != SIZE_MAX && ds->d[wr].mv > 0) {
        g->wait_region = delta_of(ds, wr, false);
        g->have_wait_region = true;
    }
}

void an_job_causes(prism_job *j)
{
    dset ds;
    if (dset_build(j, &ds))
        for (size_t i = 0; i < j->nstragglers; i++)
            cause_of(j, &ds, &j->stragglers[i]);
    dset_free(&ds);
}
