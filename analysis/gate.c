/*
 * gate.c - the regression gate (prism_gate_new, include/prism/analysis.h):
 * is a new run slower than its baselines, beyond noise and beyond a limit?
 *
 * Built on compare: the new run against each baseline, and, for the noise,
 * each pair of baselines against each other.  Same-code runs drift (a
 * median 1.2 % and a p90 of 8.5 % on shared CI runners), so a fixed
 * percentage alone fails on noise: an item must also be significantly
 * slower (the rank tests and compare's floors) against at least half of
 * the baselines, and slower by more than the baselines ever differed among
 * themselves.
 *
 * Public getters only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "u64map.h"
#include "array.h"

#define STEP_P 0.01            /* as compare: SIGNIFICANT_P                    */
#define STEP_MIN_PCT 3.0       /* ... and MIN_MEDIAN_CHANGE                     */
#define STEP_SAMPLES 4096      /* step durations a side, evenly spaced         */
#define CHANGE_P 0.005         /* one-sided, against no change: compare's
                                  two-sided p < 0.01                           */
#define BEYOND_P 0.05          /* one-sided, against the limit                 */
#define QUARTILE_MAX_CALL 2e6  /* ns: a call's mean below which the lower
                                  quartile is an estimate (delta_change)      */
#define MIN_STEP_SHARE 0.005   /* a path's change: at least this much of the
                                  median step (compare's floor)                */

/* Is cur (each value times fc) significantly larger than base (each times
 * fb)?  The rank test, one-sided: p < one_p.  For an item judged on wall
 * time the gate asks it twice: against no change, and against the base
 * times one plus the limit (an item whose estimates read a change beyond
 * the limit fails only if its per-step times say so too).  False on
 * allocation failure or with fewer than 3 values a side. */
static bool cur_above(const double *base, size_t nb, double fb, const double *cur, size_t nc,
                      double fc, double one_p, bool means)
{
    if (nb < 3 || nc < 3)
        return false;
    double *b = malloc(nb * sizeof *b), *c = malloc(nc * sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        return false;
    }
    double mb = 0, mc = 0;
    for (size_t i = 0; i < nb; i++) {
        b[i] = base[i] * fb;
        mb += b[i] / (double)nb;
    }
    for (size_t i = 0; i < nc; i++) {
        c[i] = cur[i] * fc;
        mc += c[i] / (double)nc;
    }
    double p;
    bool larger;
    if (means) {
        p = prism_welch_p(c, nc, b, nb);
        larger = mc > mb;
    } else {
        prism_rank_test r = prism_mann_whitney(c, nc, b, nb);
        p = r.p;
        larger = r.u > 0.5 * (double)nc * (double)nb;
    }
    free(b);
    free(c);
    /* one-sided: half the two-sided p when cur tends larger */
    return p >= 0 && 0.5 * p < one_p && larger;
}

static bool above(const double *base, size_t nb, double fb, const double *cur, size_t nc,
                  double fc, double one_p)
{
    return cur_above(base, nb, fb, cur, nc, fc, one_p, false);
}

/* The same for means (Welch's t-test): own time is a mean, the per-step
 * time less the run-queue share of the path's time, so the per-step times
 * scaled by one less the share have the own time's mean (their spread
 * keeps the preemption: the test is the weaker for it, not biased).
 * Ranks would not do: scaled so, a 6 ms region's unpreempted steps fall
 * below the base's and a +25 % is no longer significant. */
static bool mean_above(const double *base, size_t nb, double fb, const double *cur, size_t nc,
                       double fc, double one_p)
{
    return cur_above(base, nb, fb, cur, nc, fc, one_p, true);
}

/* ---- the step ---------------------------------------------------------- */

typedef struct durations {
    double *v;
    size_t n;
} durations;

/* The steps' durations (ns), at most STEP_SAMPLES evenly spaced; false on
 * allocation failure.  n = 0: no timed step. */
static bool durations_of(const prism_analysis *a, durations *d)
{
    const prism_step_stats *s = prism_analysis_steps(a);
    size_t timed = 0;
    for (size_t i = 0; i < s->nseries; i++)
        timed += s->series[i].end > s->series[i].start;
    d->n = 0;
    d->v = NULL;
    if (!timed)
        return true;
    size_t keep = timed < STEP_SAMPLES ? timed : STEP_SAMPLES;
    d->v = malloc(keep * sizeof *d->v);
    if (!d->v)
        return false;
    /* the k-th kept is the floor(k * timed / keep)-th timed step */
    size_t k = 0, t = 0;
    for (size_t i = 0; i < s->nseries && k < keep; i++) {
        const prism_step *st = &s->series[i];
        if (st->end <= st->start)
            continue;
        if (t == (size_t)((double)k * (double)timed / (double)keep))
            d->v[k++] = (double)(st->end - st->start);
        t++;
    }
    d->n = k;
    return true;
}

typedef struct step_cmp {
    double pct, p, base_ns, new_ns;
    bool own, slower;
    bool beyond;               /* slower than the limit by the rank test too */
} step_cmp;

/*
 * The step of y against x (c compares them).  After a whole-run shift:
 * the durations, the base's scaled by the run factor, their medians'
 * change.  Else, where the CPU samples give both training threads'
 * run-queue share: own time, the mean duration times one less the share
 * (shares are of time, so of the mean: a median scaled by the share read
 * a quiet run against one beside hogs 23 % faster); two runs beside the
 * same hogs still wait 50 % and 53 %, and their wall times differ by
 * that.  Else the medians.  Slower: the rank test on the durations
 * (p < 0.01, y larger), the change at least STEP_MIN_PCT, and, judged on
 * wall time, the durations above x's times one plus the limit too (own
 * time is a mean: no per-step test against the limit).  False on
 * allocation failure.
 */
static bool step_compare(const durations *x, const durations *y, const prism_compare *c,
                         double limit_pct, step_cmp *out)
{
    memset(out, 0, sizeof *out);
    out->p = -1;
    if (!x->n || !y->n)
        return true;
    double g = c->whole_run_shift ? c->run_factor : 1.0;
    out->own = !c->whole_run_shift && c->base_runq_share >= 0 && c->new_runq_share >= 0;
    double *bx = malloc(x->n * sizeof *bx), *by = malloc(y->n * sizeof *by);
    if (!bx || !by) {
        free(bx);
        free(by);
        return false;
    }
    double mx = 0, my = 0;
    for (size_t i = 0; i < x->n; i++) {
        bx[i] = x->v[i] * g;
        mx += bx[i] / (double)x->n;
    }
    for (size_t i = 0; i < y->n; i++) {
        by[i] = y->v[i];
        my += by[i] / (double)y->n;
    }
    prism_rank_test r = prism_mann_whitney(by, y->n, bx, x->n);
    out->p = r.p;
    bool larger = r.u > 0.5 * (double)x->n * (double)y->n;
    if (out->own) {
        double fx = 1.0 - c->base_runq_share, fy = 1.0 - c->new_runq_share;
        out->base_ns = mx * fx;
        out->new_ns = my * fy;
        larger = mean_above(bx, x->n, fx, by, y->n, fy, 0.5 * STEP_P);
        out->beyond = mean_above(bx, x->n, fx * (1.0 + limit_pct / 100.0), by, y->n, fy,
                                 BEYOND_P);
    } else {
        out->beyond = above(bx, x->n, 1.0 + limit_pct / 100.0, by, y->n, 1.0, BEYOND_P);
        out->base_ns = pb_median_double(bx, x->n);
        out->new_ns = pb_median_double(by, y->n);
    }
    out->pct = out->base_ns > 0 ? 100.0 * (out->new_ns / out->base_ns - 1.0) : 0.0;
    out->slower = out->p >= 0 && (out->own || out->p < STEP_P) && larger &&
                  out->pct >= STEP_MIN_PCT;
    free(bx);
    free(by);
    return true;
}

/* ---- call paths -------------------------------------------------------- */

/* The lower quartile of a path's per-step samples (ns); 0 without. */
static double lower_quartile(const prism_analysis *a, uint32_t node)
{
    double v[PRISM_STEP_SAMPLES];
    size_t n = prism_analysis_node_step_samples(a, node, v, PRISM_STEP_SAMPLES);
    return n ? pb_select_double(v, n, (n - 1) / 4) : 0.0;
}

/*
 * A path's change against one baseline (c compares base with cur), as
 * its estimates agree: its own time's change (wall less its run-queue
 * wait, where compare has it and the whole run did not shift; else the
 * per-step median's change, after the run factor: with the new run on a
 * quieter machine, the median of a +25 % fell) and its lower quartile's
 * change.  Both rose: the smaller rise; both fell: the smaller fall; else
 * 0.  A slowdown of the code moves all three; load moves the median, and
 * the samples place a short region's run-queue wait roughly (between
 * identical runs, a quiet one and one beside CPU hogs on 2 cores, a 1 ms
 * region's own time read up to +32 %), while the fastest steps, those the
 * load hardly touched, keep its lower quartile within a few %.  A long
 * region is preempted in every step beside hogs, its quartile moving
 * anywhere (a planted +25 % in 2.5 ms calls read -8 % by it) while its own
 * time holds (within 5 % at 8 ms): the quartile counts for calls under
 * QUARTILE_MAX_CALL, and for paths without own time.  A change in fewer
 * than a quarter of the steps of a short path does not fail the gate.
 */
static double delta_change(const prism_delta *d, const prism_compare *c,
                           const prism_analysis *base, const prism_analysis *cur)
{
    double est[2];
    size_t n = 0;
    bool own = d->own && !c->whole_run_shift;
    est[n++] = own ? d->own_pct : d->median_pct;
    double g = c->whole_run_shift ? c->run_factor : 1.0;
    const prism_node *nb = &prism_analysis_tree(base)->nodes[d->base_node],
                     *nc = &prism_analysis_tree(cur)->nodes[d->new_node];
    if (!own || (nb->mean_ns < QUARTILE_MAX_CALL && nc->mean_ns < QUARTILE_MAX_CALL)) {
        double qb = lower_quartile(base, d->base_node) * g, qn = lower_quartile(cur, d->new_node);
        if (qb > 0 && qn > 0)
            est[n++] = 100.0 * (qn / qb - 1.0);
    }
    double lo = est[0], hi = est[0];
    for (size_t i = 1; i < n; i++) {
        lo = est[i] < lo ? est[i] : lo;
        hi = est[i] > hi ? est[i] : hi;
    }
    return lo > 0 ? lo : hi < 0 ? hi : 0.0;
}

/*
 * Is a path significantly slower against one baseline (c compares base
 * with cur), beyond limit_pct too?  Its change (delta_change) rose and
 * its per-step median moved by at least MIN_STEP_SHARE of the base's
 * median step (compare's floor).  A path with own time: compare's verdict
 * (its rank test on the per-step times, its own time moving with it; own
 * time is a mean, the run-queue share of a path's time, so no per-step
 * test against the limit: scaling each step by the share, a 6 ms region
 * +25 % beside hogs was no longer significant).  Else, its per-step times
 * above the base's by the rank test (p < 0.01) and above the base's times
 * one plus the limit (one-sided p < 0.05): the test against the limit,
 * not only against no change.  The base scaled by the run factor after a
 * whole-run shift.
 */
static bool delta_slower(const prism_delta *d, double change, const prism_compare *c,
                         const prism_analysis *base, const prism_analysis *cur,
                         double limit_pct)
{
    if (!(change > 0))
        return false;
    double g = c->whole_run_shift ? c->run_factor : 1.0;
    double step = prism_analysis_steps(base)->p50_ns * g;
    double vb[PRISM_STEP_SAMPLES], vc[PRISM_STEP_SAMPLES];
    size_t nb = prism_analysis_node_step_samples(base, d->base_node, vb, PRISM_STEP_SAMPLES);
    size_t nc = prism_analysis_node_step_samples(cur, d->new_node, vc, PRISM_STEP_SAMPLES);
    if (d->own && !c->whole_run_shift) {
        double fb = 1.0 - d->base_runq, fc = 1.0 - d->new_runq;
        if (d->new_mean_ns * fc - d->base_mean_ns * fb < MIN_STEP_SHARE * step)
            return false;
        return mean_above(vb, nb, fb, vc, nc, fc, CHANGE_P) &&
               mean_above(vb, nb, fb * (1.0 + limit_pct / 100.0), vc, nc, fc, BEYOND_P);
    }
    if (d->new_median_ns - g * d->base_median_ns < MIN_STEP_SHARE * step)
        return false;
    return above(vb, nb, g, vc, nc, 1.0, CHANGE_P) &&
           above(vb, nb, g * (1.0 + limit_pct / 100.0), vc, nc, 1.0, BEYOND_P);
}

static bool in_both(const prism_delta *d)
{
    return d->base_node != PRISM_NO_NODE && d->new_node != PRISM_NO_NODE;
}

static uint64_t dbits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static double bitsd(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* A change between two baselines as a slowdown either way: -20 % (one run
 * 0.8 of the other) is the other +25 %. */
static double both_ways(double pct)
{
    double r = 1.0 + pct / 100.0;
    return r > 0 ? 100.0 * (exp(fabs(log(r))) - 1.0) : 0.0;
}

/* noise[path_hash] = max(noise, v as a slowdown either way) */
static bool noise_put(pb_map *m, uint64_t key, double v)
{
    v = both_ways(v);
    bool added;
    uint64_t *slot = pb_map_slot(m, key, &added);
    if (!slot)
        return false;
    if (added || fabs(v) > bitsd(*slot))
        *slot = dbits(fabs(v));
    return true;
}

static double noise_get(const pb_map *m, uint64_t key)
{
    uint64_t u;
    return pb_map_get(m, key, &u) ? bitsd(u) : 0.0;
}

/* The noise between every pair of baselines: per path (paths), of the step
 * (*step) and of the run factor (*shift), in %.  False on allocation
 * failure. */
static bool baseline_noise(const prism_analysis *const *base, size_t nbase,
                           const durations *dur, pb_map *paths, double *step, double *shift)
{
    *step = *shift = 0.0;
    for (size_t i = 0; i < nbase; i++) {
        for (size_t j = i + 1; j < nbase; j++) {
            prism_compare *c = prism_compare_new(base[i], base[j]);
            if (!c)
                return false;
            bool ok = true;
            for (size_t k = 0; k < c->count && ok; k++)
                if (in_both(&c->deltas[k]) && c->deltas[k].base_median_ns > 0 &&
                    c->deltas[k].new_median_ns > 0)
                    ok = noise_put(paths, c->deltas[k].path_hash,
                                   delta_change(&c->deltas[k], c, base[i], base[j]));
            step_cmp sc;
            ok = ok && step_compare(&dur[i], &dur[j], c, 0.0, &sc);
            if (ok && both_ways(sc.pct) > *step)
                *step = both_ways(sc.pct);
            double sh = c->run_regions >= 3 ? both_ways(100.0 * (c->run_factor - 1.0)) : 0.0;
            if (sh > *shift)
                *shift = sh;
            prism_compare_free(c);
            if (!ok)
                return false;
        }
    }
    return true;
}

/* ---- the gate ---------------------------------------------------------- */

/* Per item and baseline: the change, its p-value, the base median (NAN:
 * not compared), whether significantly slower, on own time. */
typedef struct cell {
    double change, p, base_ns;
    bool slower, own;
} cell;

typedef struct build {
    prism_gate *g;
    size_t cap;
    cell *cells;               /* count * nbase */
    size_t nbase;
} build;

static prism_gate_item *item_add(build *b)
{
    if (b->g->count == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        prism_gate_item *it = realloc(b->g->items, cap * sizeof *it);
        if (!it)
            return NULL;
        b->g->items = it;
        cell *c = realloc(b->cells, cap * b->nbase * sizeof *c);
        if (!c)
            return NULL;
        b->cells = c;
        b->cap = cap;
    }
    prism_gate_item *it = &b->g->items[b->g->count];
    memset(it, 0, sizeof *it);
    cell *c = &b->cells[b->g->count * b->nbase];
    for (size_t i = 0; i < b->nbase; i++)
        c[i] = (cell){ .change = NAN, .p = -1, .base_ns = NAN };
    b->g->count++;
    return it;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of the finite values of v[0..n) (scratch: n doubles); NAN
 * when none. */
static double median_finite(const double *v, size_t n, double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            scratch[k++] = v[i];
    if (!k)
        return NAN;
    pb_qsort(scratch, k, sizeof *scratch, cmp_double);
    return k % 2 ? scratch[k / 2] : 0.5 * (scratch[k / 2 - 1] + scratch[k / 2]);
}

/* An item's verdict from its cells. */
static void item_judge(prism_gate_item *it, const cell *c, size_t nbase, double noise,
                       double max_pct, double *work)
{
    double *ch = work, *p = work + nbase, *bn = work + 2 * nbase, *scratch = work + 3 * nbase;
    it->compared = it->slower = 0;
    for (size_t i = 0; i < nbase; i++) {
        ch[i] = c[i].change;
        p[i] = c[i].p >= 0 ? c[i].p : NAN;
        bn[i] = c[i].base_ns;
        if (isfinite(c[i].change)) {
            it->compared++;
            it->slower += c[i].slower;
            it->own |= c[i].own;
        }
    }
    it->change_pct = median_finite(ch, nbase, scratch);
    double pm = median_finite(p, nbase, scratch);
    it->p_value = isfinite(pm) ? pm : -1.0;
    double b = median_finite(bn, nbase, scratch);
    it->base_ns = isfinite(b) ? b : 0.0;
    it->noise_pct = noise;
    it->limit_pct = noise > max_pct ? noise : max_pct;
    it->regressed = it->compared && isfinite(it->change_pct) &&
                    it->change_pct > it->limit_pct && 2 * it->slower >= it->compared;
}

static int cmp_item(const void *x, const void *y)
{
    const prism_gate_item *a = x, *b = y;
    if (a->is_step != b->is_step)
        return a->is_step ? -1 : 1;
    if (a->regressed != b->regressed)
        return a->regressed ? -1 : 1;
    double ca = isfinite(a->change_pct) ? a->change_pct : -INFINITY,
           cb = isfinite(b->change_pct) ? b->change_pct : -INFINITY;
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return strcmp(a->path, b->path);
}

void prism_gate_free(prism_gate *g)
{
    if (g) {
        free(g->items);
        free(g);
    }
}

static void say(char *msg, size_t cap, const char *what, size_t i, size_t nbase)
{
    if (!msg || !cap)
        return;
    if (i == nbase)
        snprintf(msg, cap, "the new run %s", what);
    else if (nbase == 1)
        snprintf(msg, cap, "the baseline %s", what);
    else
        snprintf(msg, cap, "baseline %zu %s", i + 1, what);
}

prism_gate *prism_gate_new(const prism_analysis *const *base, size_t nbase,
                           const prism_analysis *cur, const prism_gate_opts *o, char *msg,
                           size_t cap)
{
    if (msg && cap)
        msg[0] = '\0';
    if (!base || !nbase || !cur)
        return NULL;
    double max_pct = o && o->max_slowdown_pct > 0 ? o->max_slowdown_pct
                                                   : PRISM_GATE_DEFAULT_PCT;
    prism_gate *g = calloc(1, sizeof *g);
    durations *dur = calloc(nbase + 1, sizeof *dur);
    prism_compare **cmp = calloc(nbase, sizeof *cmp);
    double *scratch = malloc(4 * nbase * sizeof *scratch);
    build b = { g, 0, NULL, nbase };
    pb_map noise = { 0 }, index = { 0 };
    bool ok = g && dur && cmp && scratch;
    for (size_t i = 0; ok && i <= nbase; i++) {
        ok = durations_of(i < nbase ? base[i] : cur, &dur[i]);
        if (ok && !dur[i].n) {
            say(msg, cap, "has no steps: the gate compares steps (prism_step_begin/end, "
                "prism.step)", i, nbase);
            ok = false;
        }
    }
    for (size_t i = 0; ok && i < nbase; i++)
        ok = (cmp[i] = prism_compare_new(base[i], cur)) != NULL;
    double step_noise = 0, shift_noise = 0;
    ok = ok && baseline_noise(base, nbase, dur, &noise, &step_noise, &shift_noise);
    if (ok) {
        g->max_slowdown_pct = max_pct;
        g->baselines = nbase;
        g->shift_noise_pct = shift_noise;
    }
    /* the step */
    prism_gate_item *st = ok ? item_add(&b) : NULL;
    ok = st != NULL;
    if (ok) {
        st->is_step = true;
        for (size_t i = 0; ok && i < nbase; i++) {
            step_cmp sc;
            double limit = step_noise > max_pct ? step_noise : max_pct;
            ok = step_compare(&dur[i], &dur[nbase], cmp[i], limit, &sc);
            if (ok && sc.p >= 0)
                b.cells[i] = (cell){ sc.pct, sc.p, sc.base_ns, sc.slower && sc.beyond, sc.own };
            if (ok && sc.p >= 0)
                st->new_ns = sc.new_ns;
        }
    }
    /* the call paths on both sides of some comparison */
    for (size_t i = 0; ok && i < nbase; i++) {
        for (size_t k = 0; ok && k < cmp[i]->count; k++) {
            const prism_delta *d = &cmp[i]->deltas[k];
            if (!in_both(d) || d->base_median_ns <= 0 || d->new_median_ns <= 0)
                continue;
            bool added;
            uint64_t *slot = pb_map_slot(&index, d->path_hash, &added);
            ok = slot != NULL;
            if (ok && added) {
                prism_gate_item *it = item_add(&b);
                ok = it != NULL;
                if (ok) {
                    *slot = g->count - 1;
                    snprintf(it->path, sizeof it->path, "%s", d->path);
                    it->path_hash = d->path_hash;
                    it->new_ns = d->new_median_ns;
                    it->share = d->new_share;
                }
            }
            if (ok) {
                double ch = delta_change(d, cmp[i], base[i], cur);
                double nz = noise_get(&noise, d->path_hash);
                bool slower = delta_slower(d, ch, cmp[i], base[i], cur,
                                           nz > max_pct ? nz : max_pct);
                b.cells[*slot * nbase + i] = (cell){ ch, d->p_value, d->base_median_ns, slower,
                                                    d->own };
            }
        }
    }
    if (ok) {
        for (size_t k = 0; k < cmp[0]->count; k++) {
            const prism_delta *d = &cmp[0]->deltas[k];
            uint64_t u;
            g->appeared += d->base_node == PRISM_NO_NODE && d->new_node != PRISM_NO_NODE &&
                           !pb_map_get(&index, d->path_hash, &u);
        }
        for (size_t k = 0; k < g->count; k++) {
            prism_gate_item *it = &g->items[k];
            double nz = it->is_step ? step_noise : noise_get(&noise, it->path_hash);
            item_judge(it, &b.cells[k * nbase], nbase, nz, max_pct, scratch);
        }
        pb_qsort(g->items, g->count, sizeof *g->items, cmp_item);
        for (size_t k = 0; k < g->count; k++)
            g->failed += g->items[k].regressed;
        /* the whole run */
        size_t shifted = 0, nl = 0;
        for (size_t i = 0; i < nbase; i++) {
            scratch[i] = cmp[i]->run_factor;
            shifted += cmp[i]->whole_run_shift;
            if (cmp[i]->base_runq_share >= 0)
                scratch[nbase + nl++] = cmp[i]->base_runq_share;
        }
        pb_qsort(scratch, nbase, sizeof *scratch, cmp_double);
        g->run_factor = nbase % 2 ? scratch[nbase / 2]
                                  : 0.5 * (scratch[nbase / 2 - 1] + scratch[nbase / 2]);
        g->whole_run_shift = 2 * shifted > nbase;
        double shift_limit = shift_noise > max_pct ? shift_noise : max_pct;
        g->shift_failed = o && o->fail_on_shift && g->whole_run_shift &&
                          100.0 * (g->run_factor - 1.0) > shift_limit;
        g->load_base = nl ? median_finite(scratch + nbase, nl, scratch) : -1.0;
        g->load_new = cmp[0]->new_runq_share;
        g->regressed = g->failed || g->shift_failed;
    }
    for (size_t i = 0; cmp && i < nbase; i++)
        prism_compare_free(cmp[i]);
    for (size_t i = 0; dur && i <= nbase; i++)
        free(dur[i].v);
    free(cmp);
    free(dur);
    free(scratch);
    free(b.cells);
    pb_map_free(&noise);
    pb_map_free(&index);
    if (!ok) {
        prism_gate_free(g);
        return NULL;
    }
    return g;
}
