/*
 * rules_steps.c - slow_steps: steps far above the others (a checkpoint, an
 * eval pass inside the loop, garbage collection, a stray sync), which a
 * median hides and a mean smears over every step.
 *
 *   slow_steps      at least 8 timed steps; a step is slow above
 *                   median + max(6 x 1.4826 x MAD, half the median, 1 ms)
 *                   (robust: one checkpoint cannot move the threshold),
 *                   except step 0 when it is the first (the process's
 *                   warm-up: lazy set-up, allocator, a first compile);
 *                   reported when the slow steps are at most a quarter of
 *                   all (more is a second regime, not outliers) and their
 *                   excess over the median is >= 3 % of the step time;
 *                   severity HIGH >= 20 %, MEDIUM >= 5 %, else LOW.  The
 *                   evidence gives how often (every N steps when the slow
 *                   ones are evenly spaced), what they cost, and what holds
 *                   the excess: the region of the training thread whose
 *                   slowest step is furthest above its mean step over all
 *                   sampled steps, 0 where it did not run (when
 *                   that is at least half the median excess), else a
 *                   region open across the steps (around the loop) in its
 *                   own time (where the stack samples there stand for at
 *                   least half the excess), else time outside every region.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rules.h"

#define SLOW_MIN_STEPS 8
#define SLOW_MAD_K 6.0
#define SLOW_MIN_REL 0.5
#define SLOW_MIN_NS 1e6
#define SLOW_MIN_SHARE 0.03

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* "every 6 steps (5, 11, 17, 23)" / "steps 3, 40" into buf */
static void when_text(char *buf, size_t cap, const uint64_t *ix, size_t k)
{
    uint64_t gap = k >= 3 ? ix[1] - ix[0] : 0;
    for (size_t i = 2; gap && i < k; i++)
        if (ix[i] - ix[i - 1] != gap)
            gap = 0;
    if (gap)
        snprintf(buf, cap, "every %llu steps (steps ", (unsigned long long)gap);
    else
        snprintf(buf, cap, "steps ");
    for (size_t i = 0; i < k && i < 6; i++)
        rules_put(buf, cap, "%s%llu", i ? ", " : "", (unsigned long long)ix[i]);
    rules_put(buf, cap, "%s%s", k > 6 ? ", ..." : "", gap ? ")" : "");
}

/* How many of sorted v are at most x. */
static size_t at_most(const uint64_t *v, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((double)v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The median of |v[i] - med| over sorted v: the values below and above
 * med walked outward from it, as two ascending runs merged to the middle
 * rank (each |v - med| exactly as fabs(v - med) gives it). */
static double mad_sorted(const uint64_t *v, size_t n, double med)
{
    size_t lo = at_most(v, n, med);     /* the first value above med */
    size_t l = lo, r = lo, want = n / 2;        /* l: below (exclusive), r: above */
    double prev = 0, cur = 0;
    for (size_t k = 0; k <= want; k++) {
        double dl = l > 0 ? med - (double)v[l - 1] : INFINITY;
        double dr = r < n ? (double)v[r] - med : INFINITY;
        prev = cur;
        if (dl <= dr) {
            cur = dl;
            l--;
        } else {
            cur = dr;
            r++;
        }
    }
    return n % 2 ? cur : (prev + cur) / 2;
}

size_t rules_slow_find(const prism_analysis *a, uint64_t *ix, rules_slow *f)
{
    rules_slow z = { 0 };
    if (!f)
        f = &z;
    memset(f, 0, sizeof *f);
    const prism_step_stats *st = prism_analysis_steps(a);
    size_t n;
    double total;
    const uint64_t *v = an_series_durations(a, &n, &total);
    if (!v || n < SLOW_MIN_STEPS || !st->series)
        return 0;
    double med = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
    double mad = 1.4826 * mad_sorted(v, n, med);
    double thr = med + fmax(fmax(SLOW_MAD_K * mad, SLOW_MIN_REL * med), SLOW_MIN_NS);
    size_t lo = at_most(v, n, thr);     /* the rest are above thr */
    if (lo == n || (n - lo) * 4 > n)
        return 0;                       /* none, or too many to be outliers */
    size_t k = 0;
    double excess = 0, slow_sum = 0, top = 0;   /* in step order */
    uint64_t top_index = 0;
    bool warmup = false;
    /* prism.torch's measuring steps carry its hooks on every module (2000
     * tiny modules: 72-90 ms against a 42 ms median after the fold): PRISM's
     * cost, not the program's slow steps */
    prism_folded fo;
    uint64_t measuring = prism_analysis_folded(a, &fo) && fo.folded ? fo.after_steps : 0,
             measured = 0;
    for (size_t i = 0; i < st->nseries; i++) {
        const prism_step *s = &st->series[i];
        if (s->end <= s->start || (double)(s->end - s->start) <= thr ||
            (s->flags & PRISM_STEP_OPS))
            continue;                   /* (the operator window's are not timed) */
        if (i == 0 && s->index == 0) {
            warmup = true;              /* the process's first step: warm-up, */
            continue;                   /* lazy set-up, a first compile */
        }
        if (s->index < measuring) {
            measured = measuring - 1;
            continue;
        }
        double d = (double)(s->end - s->start);
        ix[k++] = s->index;
        excess += d - med;
        slow_sum += d;
        if (d - med > top) {
            top = d - med;
            top_index = s->index;
        }
    }
    double share = total > 0 ? excess / total : 0;
    if (!k || share < SLOW_MIN_SHARE)
        return 0;
    *f = (rules_slow){ n, med, thr, excess, slow_sum, share, top, top_index, warmup, measured };
    return k;
}

/* A region of the training thread open across steps (a region around the
 * loop, a Python trace's <module>): an excess that no region below it and
 * no gap between regions holds is in its own time.  Of those regions, the
 * one whose own time the slow steps' stack samples found most (with what
 * they found), else the deepest; PRISM_NO_NODE when none.  ix: the slow
 * steps, sorted. */
static uint32_t around_the_loop(const rules_ctx *c, const uint64_t *ix, size_t k,
                                an_stack_where *sw, bool *sampled)
{
    const prism_tree *t = c->train;
    uint32_t deep = PRISM_NO_NODE, best = PRISM_NO_NODE;
    unsigned tried = 0;
    *sampled = false;
    for (size_t i = 0; t && i < t->count && tried < 16; i++) {
        if (!an_out_spanned(c->a, c->train_idx, (uint32_t)i))
            continue;
        tried++;
        if (deep == PRISM_NO_NODE || t->nodes[i].depth > t->nodes[deep].depth)
            deep = (uint32_t)i;
        an_stack_where w;
        if (rules_stacks_where(c, 1, ix, k, (uint32_t)i, &w) && w.text[0] &&
            (!*sampled || w.weight_ns > sw->weight_ns)) {
            *sw = w;
            *sampled = true;
            best = (uint32_t)i;
        }
    }
    return best != PRISM_NO_NODE ? best : deep;
}

/* The sampled positions of the slow steps (tnode.step_cur - 1 names a
 * node's step by it), sorted. */
typedef struct slow_pos {
    uint32_t *pos;
    size_t n;
} slow_pos;

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static slow_pos slow_positions(const prism_analysis *a, const uint64_t *ix, size_t k)
{
    slow_pos sp = { k ? malloc(k * sizeof *sp.pos) : NULL, 0 };
    for (size_t i = 0; sp.pos && i < a->nsteps && sp.n < k; i++)
        if (a->sampled_pos[i] != UINT32_MAX &&
            bsearch(&a->steps[i].index, ix, k, sizeof *ix, cmp_u64))
            sp.pos[sp.n++] = a->sampled_pos[i];
    pb_qsort(sp.pos, sp.n, sizeof *sp.pos, cmp_u32);
    return sp;
}

/* Node i of the training thread, seen in one sampled step only: that step
 * is a slow one (not the warm-up step 0, say, a first compile there). */
static bool ran_in_slow(const rules_ctx *c, const slow_pos *sp, uint32_t i)
{
    if (c->train_idx >= c->a->nthreads || !sp->n)
        return false;
    const athread *th = c->a->threads[c->train_idx];
    const tnode *nd = i < th->n ? &th->nodes[i] : i == th->n ? &th->out : NULL;
    uint32_t p = nd && nd->step_cur ? nd->step_cur - 1 : UINT32_MAX;
    return p != UINT32_MAX && bsearch(&p, sp->pos, sp->n, sizeof *sp->pos, cmp_u32);
}

void rules_slow_steps(rules_ctx *c)
{
    const prism_step_stats *st = prism_analysis_steps(c->a);
    if (!st || st->timed < SLOW_MIN_STEPS || !st->series)
        return;
    size_t k = c->a->nslow;             /* found by the refresh */
    rules_slow f = c->a->slow_f;
    uint64_t *ix = k && c->a->slow ? malloc(k * sizeof *ix) : NULL;
    if (!ix)
        return;
    memcpy(ix, c->a->slow, k * sizeof *ix);     /* sorted by index below */
    size_t n = f.timed;
    double med = f.median, thr = f.threshold, excess = f.excess, slow_sum = f.slow_sum;
    double share = f.share;
    double each = excess / (double)k;
    /* what holds the excess: the training thread's node furthest above
     * its mean step in its slowest one, the mean over every sampled step
     * (0 in those it did not run: a checkpoint or an eval pass that runs
     * only in the slow steps holds all of its time there) */
    const prism_tree *t = c->train;
    uint32_t best = PRISM_NO_NODE;
    double best_x = 0, best_mean = 0;
    pb_qsort(ix, k, sizeof *ix, cmp_u64);
    slow_pos sp = slow_positions(c->a, ix, k);
    for (size_t i = 0; t && i < t->count; i++) {
        const prism_node *nd = &t->nodes[i];
        double mean = c->steps > nd->steps_seen
                          ? nd->step_mean_ns * (double)nd->steps_seen / (double)c->steps
                          : nd->step_mean_ns;
        double x = nd->step_max_ns - mean;
        if (nd->steps_seen >= 1 && x > best_x &&
            (nd->steps_seen >= 2 || ran_in_slow(c, &sp, (uint32_t)i))) {
            best_x = x;
            best = (uint32_t)i;
            best_mean = mean;
        }
    }
    free(sp.pos);
    bool named = best != PRISM_NO_NODE && best_x >= 0.5 * each;
    /* `(outside regions)` holding it: blamed, in the words of no region */
    bool outside = named && (t->nodes[best].flags & PRISM_NODE_UNATTRIBUTED);
    /* else a region around the loop: blamed where the slow steps' samples
     * in its own time stand for at least half the excess (warm-up spreads
     * over every region below it: then it is named only as the place) */
    an_stack_where ws;
    bool wsampled = false;
    uint32_t wrap = named ? PRISM_NO_NODE : around_the_loop(c, ix, k, &ws, &wsampled);
    bool wheld = wrap != PRISM_NO_NODE && wsampled && (double)ws.weight_ns >= 0.5 * excess;
    if (wheld) {
        best = wrap;
        named = true;
    }
    prism_severity sev = share >= 0.20 ? PRISM_SEV_HIGH : share >= 0.05 ? PRISM_SEV_MEDIUM
                                                                           : PRISM_SEV_LOW;
    uint32_t at = PRISM_NO_NODE;           /* its path in the all-threads tree */
    for (size_t i = 0; named && c->tree && i < c->tree->count && at == PRISM_NO_NODE; i++)
        if (c->tree->nodes[i].path_hash == t->nodes[best].path_hash)
            at = (uint32_t)i;
    prism_bottleneck *b = rules_add(c, PRISM_BN_SLOW_STEPS, sev, share, at);
    if (!b)
        goto out;
    char when[160];
    when_text(when, sizeof when, ix, k);
    char after[96] = "";
    if (f.measured)
        snprintf(after, sizeof after, " (after %sPRISM's measuring steps to %llu)",
                 f.warmup ? "the warm-up step 0 and " : "", (unsigned long long)f.measured);
    else if (f.warmup)
        snprintf(after, sizeof after, " (after the warm-up step 0)");
    rules_set(b->description, sizeof b->description,
              "Slow steps: %zu of %zu steps%s take %.1fx the median, %.1f%% of step time", k, n,
              after, slow_sum / (double)k / med, 100.0 * share);
    /* one step far slower than the others is named: a mean hides it */
    char top[64] = "";
    if (k > 1 && f.top_excess > 0.6 * excess)
        snprintf(top, sizeof top, " on average, step %llu +%s", (unsigned long long)f.top_index,
                 DUR(f.top_excess));
    rules_put(b->evidence, sizeof b->evidence, "median step %s, slow steps +%s each%s (above %s); "
              "%s; ", DUR(med), DUR(each), top, DUR(thr), when);
    /* what the sampled stacks saw in the slow steps, where the excess is */
    an_stack_where sw;
    bool in_node = named && !outside && !wheld;
    bool sampled = wrap != PRISM_NO_NODE
                       ? wsampled
                       : rules_stacks_where(c, in_node ? 1 : 0, ix, k,
                                            in_node ? best : PRISM_NO_NODE, &sw) && sw.text[0];
    if (wrap != PRISM_NO_NODE && wsampled)
        sw = ws;
    if (wheld)
        rules_put(b->evidence, sizeof b->evidence,
                  "'%s' holds it in its own time (open across the steps)",
                  t->nodes[wrap].name);
    else if (wrap != PRISM_NO_NODE)
        rules_put(b->evidence, sizeof b->evidence,
                  "no region below '%s' (open across the steps) holds it%s",
                  t->nodes[wrap].name, sampled ? "; in its own time" : "");
    else if (in_node)
        rules_put(b->evidence, sizeof b->evidence,
                  "'%s' holds it: %s in its slowest step against %s on average",
                  t->nodes[best].name, DUR(t->nodes[best].step_max_ns), DUR(best_mean));
    else if (sampled)
        rules_put(b->evidence, sizeof b->evidence, "no region holds it");
    else
        rules_put(b->evidence, sizeof b->evidence,
                  "no region holds it: the excess is in code with no region of its own "
                  "(the step's time outside regions%s)",
                  outside ? ", `(outside regions)` in the Tree" : "");
    if (sampled)
        rules_put(b->evidence, sizeof b->evidence, "; sampled in the slow steps: %s", sw.text);
    if (sampled && !strstr(sw.text, "%, "))
        rules_put(b->evidence, sizeof b->evidence, " %.0f%%", 100.0 * sw.share);
    /* the model's own compute holds it: larger inputs on those steps (a
     * batch padded to its longest sequence, every 10th 4x longer, read as
     * checkpoints or gc) come first */
    const char *bn = in_node ? rules_leaf(t->nodes[best].name) : "";
    if (in_node && c->python && (rules_icontains(bn, "forward") || rules_icontains(bn, "backward")))
        rules_put(b->recommendation, sizeof b->recommendation,
                  "'%s' itself takes longer on those steps: larger inputs (variable-length "
                  "batches padded to the longest: bucket or sort by length, cap the length), or "
                  "work only they do (checkpoints, an evaluation, gc.freeze() after setup, a "
                  "periodic synchronisation).", bn);
    else
        rules_put(b->recommendation, sizeof b->recommendation,
                  "Look at what runs only on those steps: checkpoints (%s), an evaluation or "
                  "logging pass inside the loop, garbage collection (gc.freeze() after setup), "
                  "a periodic synchronisation%s",
                  c->python ? "torch.save: less often, or in a background thread" :
                              "write them less often or asynchronously",
                  in_node ? "." : "; add a region around it to see it by name.");
out:
    free(ix);
}
