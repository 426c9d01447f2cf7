/*
 * compare.c - two refreshed analyses matched by call path.
 *
 * Every path of either all-threads tree becomes one prism_delta: totals on
 * both sides, the change, the speedup, per-step medians, shares of the
 * step, and whether the change stands out from step-to-step noise.  Paths
 * present on one side only count as appeared or vanished.  Bottlenecks are
 * matched by (type, path_hash).
 *
 * The verdict works on each path's per-step samples (the steps it ran in;
 * prism_analysis_node_step_samples): a Mann-Whitney U test, which
 * scheduler noise and outliers hardly move, plus floors on the size of the
 * change, so that a tiny but consistent change is not called a finding.
 * First, though, the run as a whole: when (nearly) every sizeable region
 * moved by the same factor, the machine changed (clocks, contention, a
 * noisy neighbour), not the code; then each region is tested against that
 * factor, so only the regions that moved beyond it are flagged.  A long
 * region's change must also show in its own time (wall time less its
 * run-queue wait, see fill_own), so load is not read as a regression.
 *
 * Public getters only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "u64map.h"
#include "array.h"             /* pb_qsort */

#define SIGNIFICANT_P 0.01
/* Effect-size floors: with a hundred steps a side, the rank test finds a
 * 1 % change real; what matters is whether it is worth a look.  The
 * per-step median must move by 3 % (relative: less is within what a
 * rebuild or a reboot moves), and by 0.5 % of the base median step
 * (absolute: a 40 % change of a region of 0.1 % of the step is not a
 * regression of the run). */
#define MIN_MEDIAN_CHANGE 0.03
#define MIN_STEP_CHANGE 0.005
#define MIN_SAMPLES 3           /* a side, for a p-value */
/* Whole-run shift: the regions holding at least 1 % of the base step (at
 * least 3 of them; wrappers abstain, see votes()) vote with their per-step
 * median ratio; their median g is the run factor.  A shift is |g - 1| >= 5 %
 * with 2/3 of the voters agreeing: within 7 % of g, or within 2.5 standard
 * errors of their own median ratio when their steps are noisier than that
 * (with sigma 0.3 lognormal steps, 128 samples a side put a median ratio
 * +-5 % off by chance alone).  One regressed region among many does not
 * move the median, and a machine 30 % slower moves them all alike. */
#define RUN_MIN_SHARE 0.01
#define RUN_MIN_REGIONS 3
#define RUN_MIN_SHIFT 0.05
#define RUN_TOLERANCE 0.07
#define RUN_NOISE_SE 2.5
#define RUN_AGREE (2.0 / 3.0)

/* ---- path hash -> node (pb_map) --------------------------------------- */

/* Every node of t by its path hash; the first node of a path wins. */
static bool hmap_build(pb_map *m, const prism_tree *t)
{
    if (!pb_map_reserve(m, t->count))
        return false;
    for (size_t i = 0; i < t->count; i++) {
        bool added;
        uint64_t *v = pb_map_slot(m, t->nodes[i].path_hash, &added);
        if (!v)
            return false;
        if (added)
            *v = i;
    }
    return true;
}

static uint32_t hmap_get(const pb_map *m, uint64_t k)
{
    uint64_t v;
    return pb_map_get(m, k, &v) ? (uint32_t)v : PRISM_NO_NODE;
}

/* ---- path strings ----------------------------------------------------- */

/*
 * "root/child/leaf" into out[256].  A path longer than 255 bytes keeps its
 * end (the leaf is what matters) behind "...", cut at a UTF-8 character
 * boundary.  Written backwards from the leaf, so the length is bounded
 * whatever the depth.
 */
static void path_of(const prism_tree *t, uint32_t leaf, char out[256])
{
    char buf[256];
    size_t pos = sizeof buf - 1, guard = 0;
    bool cut = false;
    buf[pos] = '\0';
    for (uint32_t n = leaf; n < t->count; n = t->nodes[n].parent) {
        if (++guard > t->count)                 /* a cycle: never in a sane tree */
            break;
        const char *name = t->nodes[n].name ? t->nodes[n].name : "?";
        size_t len = strlen(name);
        if (n != leaf && pos > 0)
            buf[--pos] = '/';
        if (len >= pos && (len > pos || t->nodes[n].parent != PRISM_NO_NODE)) {
            memcpy(buf, name + (len - pos), pos);   /* the tail that fits */
            pos = 0;
            cut = true;
            break;
        }
        pos -= len;
        memcpy(buf + pos, name, len);
    }
    const char *s = buf + pos;
    if (cut) {
        s = buf + 3;                            /* room for "..." */
        while (((unsigned char)*s & 0xc0) == 0x80)
            s++;
        memcpy(out, "...", 3);
        memcpy(out + 3, s, strlen(s) + 1);
        return;
    }
    memcpy(out, s, strlen(s) + 1);
}

/* ---- deltas ----------------------------------------------------------- */

static int cmp_delta(const void *x, const void *y)
{
    const prism_delta *a = x, *b = y;
    double da = fabs(a->delta_ns), db = fabs(b->delta_ns);
    if (da != db)
        return da > db ? -1 : 1;
    double ta = a->base_ns + a->new_ns, tb = b->base_ns + b->new_ns;
    if (ta != tb)
        return ta > tb ? -1 : 1;
    return strcmp(a->path, b->path);
}

/* What a side contributes to every delta. */
typedef struct sideinfo {
    const prism_analysis *a;
    const prism_tree *t;
    bool steps;                 /* sampled steps exist */
    double sampled_ns;          /* total duration of the sampled steps */
    double step_median_ns;      /* median step (all steps) */
} sideinfo;

static sideinfo side_of(const prism_analysis *a, const prism_tree *t)
{
    sideinfo s = { .a = a, .t = t };
    const prism_step_stats *st = prism_analysis_steps(a);
    for (size_t i = 0; st && st->series && i < st->nseries; i++)
        if (PRISM_STEP_COUNTED(st->series[i].flags) && st->series[i].end > st->series[i].start)
            s.sampled_ns += (double)(st->series[i].end - st->series[i].start);
    s.steps = s.sampled_ns > 0;
    s.step_median_ns = st ? st->p50_ns : 0;
    return s;
}

/* A node's share of the step: its time inside sampled steps (mean per step
 * it ran in x those steps) over the sampled steps' duration; without
 * steps, its share of the profile's total. */
static double share_of(const sideinfo *s, const prism_node *n)
{
    if (!n)
        return 0.0;
    if (!s->steps)
        return n->share;
    return n->step_mean_ns * (double)n->steps_seen / s->sampled_ns;
}

/* ---- own time ---------------------------------------------------------- */

/*
 * Own time is wall time less the part spent waiting for a CPU: what the
 * code cost, whatever the machine's load.  For paths with calls of at
 * least OWN_MIN_CALL on both sides and CPU samples covering half their
 * time, a change must also show in own time per step (the per-step mean
 * less the path's run-queue share), the same way and by at least the
 * median floor or a quarter of the change of its run-queue share, whichever is
 * more: the samples place a short call's run-queue time roughly (between
 * two identical runs beside hogs, a 1-2 ms region's own time read -26 to
 * +18 %, an 8 ms one's -4 to +2 %), more roughly the more the load moved.
 * Measured beside hogs on 2 cores against a quiet run: an 8 ms compute
 * region's wall median rose 43-162 % while its own time moved -3..+6 %; a
 * planted +25 % (3 ms calls) read +16..+38 % (+16 with its run-queue share
 * 42 points up: half of that as the floor missed it).  Shorter
 * calls keep the wall-time verdict (preemption seldom hits one of them, so
 * their medians hardly move with load).
 */
#define OWN_MIN_CALL 1e6        /* ns: a call's mean */
#define OWN_LOAD_FLOOR 0.25     /* of the change of its run-queue share */
#define OWN_EXPLAINS 0.5        /* of the wall change the shares predict */
#define OWN_MIN_COVER 0.5

/* A side's node's run-queue share; < 0 when it has no own time. */
static double own_runq(const prism_tree *t, uint32_t node)
{
    if (node == PRISM_NO_NODE)
        return -1.0;
    const prism_node *n = &t->nodes[node];
    if (!n->cpu_known_ns || (double)n->cpu_known_ns < OWN_MIN_COVER * (double)n->total_ns ||
        n->mean_ns < OWN_MIN_CALL)
        return -1.0;
    return (double)n->runq_ns / (double)n->cpu_known_ns;
}

static void fill_own(prism_delta *d, const sideinfo *sb, const sideinfo *sc)
{
    d->base_runq = own_runq(sb->t, d->base_node);
    d->new_runq = own_runq(sc->t, d->new_node);
    double bo = d->base_mean_ns * (1.0 - d->base_runq), no = d->new_mean_ns * (1.0 - d->new_runq);
    d->own = d->base_runq >= 0 && d->new_runq >= 0 && bo > 0 && no > 0;
    d->own_pct = d->own ? 100.0 * (no / bo - 1.0) : 0.0;
}

static void fill_delta(prism_delta *d, const sideinfo *sb, const sideinfo *sc, uint32_t bn,
                       uint32_t cn)
{
    const prism_tree *tb = sb->t, *tc = sc->t;
    const prism_node *b = bn != PRISM_NO_NODE ? &tb->nodes[bn] : NULL;
    const prism_node *c = cn != PRISM_NO_NODE ? &tc->nodes[cn] : NULL;
    const prism_node *any = b ? b : c;
    d->name = any->name;
    d->path_hash = any->path_hash;
    path_of(b ? tb : tc, b ? bn : cn, d->path);
    d->base_node = bn;
    d->new_node = cn;
    d->base_ns = b ? (double)b->total_ns : 0.0;
    d->new_ns = c ? (double)c->total_ns : 0.0;
    d->delta_ns = d->new_ns - d->base_ns;
    d->delta_pct = d->base_ns > 0 ? 100.0 * d->delta_ns / d->base_ns : 0.0;
    d->speedup = d->base_ns > 0 && d->new_ns > 0 ? d->base_ns / d->new_ns : 0.0;
    d->base_steps = b ? b->steps_seen : 0;
    d->new_steps = c ? c->steps_seen : 0;
    d->base_median_ns = b ? prism_analysis_node_step_median(sb->a, bn) : 0.0;
    d->new_median_ns = c ? prism_analysis_node_step_median(sc->a, cn) : 0.0;
    d->raw_median_pct = d->base_median_ns > 0 && d->new_median_ns > 0
                            ? 100.0 * (d->new_median_ns / d->base_median_ns - 1.0) : 0.0;
    uint64_t sn;
    double var;
    if (b)
        prism_analysis_node_step_moments(sb->a, bn, &sn, &d->base_mean_ns, &var);
    if (c)
        prism_analysis_node_step_moments(sc->a, cn, &sn, &d->new_mean_ns, &var);
    d->base_share = share_of(sb, b);
    d->new_share = share_of(sc, c);
    d->share_delta = 100.0 * (d->new_share - d->base_share);
    d->p_value = -1.0;
    fill_own(d, sb, sc);
}

/* ---- the run as a whole ------------------------------------------------ */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Does a region vote on the run factor?  On both sides in enough steps,
 * >= 1 % of the base step, and mostly its own work (self >= half its
 * total): a wrapper moves with what it wraps, and one regressed leaf under
 * three wrappers must not cast four votes.  `(outside regions)` is no
 * region: compared like one, it does not vote. */
static bool votes(const prism_delta *d, const sideinfo *sb)
{
    if (d->base_node == PRISM_NO_NODE || d->new_node == PRISM_NO_NODE || d->folded_one ||
        d->hook_ns != 0)
        return false;
    const prism_node *b = &sb->t->nodes[d->base_node];
    if (b->flags & PRISM_NODE_UNATTRIBUTED)
        return false;
    return d->base_steps >= MIN_SAMPLES && d->new_steps >= MIN_SAMPLES &&
           d->base_median_ns > 0 && d->new_median_ns > 0 && d->base_share >= RUN_MIN_SHARE &&
           2 * b->self_ns >= b->total_ns;
}

/*
 * The standard error of the log of a node's per-step median, distribution
 * free: half the spread of the order statistics sqrt(n)/2 ranks either
 * side of the middle (the binomial interval of the median at +-1 standard
 * error).  0 with too few samples.
 */
static double log_median_se(const prism_analysis *a, uint32_t node)
{
    double v[PRISM_STEP_SAMPLES];
    size_t n = prism_analysis_node_step_samples(a, node, v, PRISM_STEP_SAMPLES);
    if (n < MIN_SAMPLES)
        return 0.0;
    pb_qsort(v, n, sizeof *v, cmp_double);
    double mid = ((double)n - 1.0) / 2.0, h = sqrt((double)n) / 2.0;
    double lo = floor(mid - h), hi = ceil(mid + h);
    size_t l = lo < 0 ? 0 : (size_t)lo, u = hi > (double)(n - 1) ? n - 1 : (size_t)hi;
    return v[l] > 0 ? (log(v[u]) - log(v[l])) / 2.0 : 0.0;
}

typedef struct vote {
    double log_ratio;           /* log(new median / base median) */
    double tol;                 /* how far from the run factor still agrees */
} vote;

static int cmp_vote(const void *x, const void *y)
{
    return cmp_double(&((const vote *)x)->log_ratio, &((const vote *)y)->log_ratio);
}

/* The run factor and whether the whole run shifted; false on allocation
 * failure.  In logs: a ratio of 1.3 and one of 1/1.3 are as far from 1. */
static bool run_shift(prism_compare *c, const sideinfo *sb, const sideinfo *sc)
{
    c->run_factor = 1.0;
    c->step_ratio = sb->step_median_ns > 0 && sc->step_median_ns > 0
                        ? sc->step_median_ns / sb->step_median_ns : 0.0;
    vote *r = malloc((c->count ? c->count : 1) * sizeof *r);
    if (!r)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < c->count; i++) {
        const prism_delta *d = &c->deltas[i];
        if (!votes(d, sb))
            continue;
        double eb = log_median_se(sb->a, d->base_node), en = log_median_se(sc->a, d->new_node);
        double noise = RUN_NOISE_SE * sqrt(eb * eb + en * en);
        r[n].log_ratio = log(d->new_median_ns / d->base_median_ns);
        r[n++].tol = noise > log1p(RUN_TOLERANCE) ? noise : log1p(RUN_TOLERANCE);
    }
    c->run_regions = n;
    if (n >= RUN_MIN_REGIONS) {
        pb_qsort(r, n, sizeof *r, cmp_vote);
        double lg = n % 2 ? r[n / 2].log_ratio : (r[n / 2 - 1].log_ratio + r[n / 2].log_ratio) / 2.0;
        /* a region votes for the factor only when it tells the factor
         * from no change: one within its noise of both says nothing (a
         * noisy small region "agreed" with a factor that was one dominant
         * region's regression, and the gate passed it as the machine's);
         * those that tell them apart must agree, 3 at least */
        size_t agree = 0, against = 0;
        for (size_t i = 0; i < n; i++) {
            bool near_f = fabs(r[i].log_ratio - lg) <= r[i].tol;
            bool near_1 = fabs(r[i].log_ratio) <= r[i].tol;
            agree += near_f && !near_1;
            against += near_1 && !near_f;
        }
        c->run_factor = exp(lg);
        c->run_agree = agree;
        c->whole_run_shift = fabs(c->run_factor - 1.0) >= RUN_MIN_SHIFT &&
                             agree >= RUN_MIN_REGIONS &&
                             (double)agree >= RUN_AGREE * (double)(agree + against);
    }
    free(r);
    return true;
}

/* ---- the verdict ------------------------------------------------------- */

/* Test one path present on both sides against the run factor g (1 unless
 * the whole run shifted): the rank test on the base samples scaled by g,
 * then the floors on the medians' change. */
static void verdict(prism_delta *d, const sideinfo *sb, const sideinfo *sc, double g)
{
    if (d->base_node == PRISM_NO_NODE || d->new_node == PRISM_NO_NODE || d->folded_one)
        return;
    /* the base as the new run would read it: scaled by the run factor, and
     * holding the hooks the new run holds and it does not (hook_ns), where
     * they would explain the change: hook_ns is an upper bound (the cost
     * per module call counts the backward hooks too), so a change the
     * other way is tested as it is (on a real pair, the model's forward
     * read +960 % against the base less the hooks of 6 modules) */
    double nm = d->new_median_ns, h = d->hook_ns;
    if (h * (nm - g * d->base_median_ns) <= 0 || g * d->base_median_ns + h <= 0)
        h = 0;
    double bm = g * d->base_median_ns + h;
    d->median_pct = bm > 0 && nm > 0 ? 100.0 * (nm / bm - 1.0) : 0.0;
    double vb[PRISM_STEP_SAMPLES], vc[PRISM_STEP_SAMPLES];
    size_t nb = prism_analysis_node_step_samples(sb->a, d->base_node, vb, PRISM_STEP_SAMPLES);
    size_t nc = prism_analysis_node_step_samples(sc->a, d->new_node, vc, PRISM_STEP_SAMPLES);
    if (nb < MIN_SAMPLES || nc < MIN_SAMPLES)
        return;
    for (size_t i = 0; i < nb; i++)
        vb[i] = vb[i] * g + h;
    d->p_value = prism_mann_whitney_p(vb, nb, vc, nc);
    double change = fabs(nm - bm);
    double step_floor = sb->step_median_ns > 0 ? MIN_STEP_CHANGE * g * sb->step_median_ns : 0.0;
    d->significant = d->p_value >= 0 && d->p_value < SIGNIFICANT_P && bm > 0 &&
                     change >= MIN_MEDIAN_CHANGE * bm && change >= step_floor;
    /* the run factor never turns a region that rose (its median and its
     * mean) into a faster one, nor one that fell into a slower one */
    bool rose = d->raw_median_pct > 0 && d->new_mean_ns > d->base_mean_ns;
    bool fell = d->raw_median_pct < 0 && d->new_mean_ns < d->base_mean_ns;
    if ((rose && d->median_pct < 0) || (fell && d->median_pct > 0))
        d->significant = false;
    d->raw_significant = d->significant;
    /* a long region's change must show in its own time too */
    if (d->own && d->significant) {
        double floor = 100.0 * MIN_MEDIAN_CHANGE,
               load = 100.0 * OWN_LOAD_FLOOR * fabs(d->new_runq - d->base_runq);
        bool own_flat = d->own_pct * d->median_pct <= 0 ||
                        fabs(d->own_pct) < (load > floor ? load : floor);
        /* the load must also explain the change: the wall time moved the
         * way the run-queue shares say and by at least half as much
         * (under ASan a 3 ms region's share read 0 -> 53 %, +113 % by
         * load alone, where its wall time rose the planted +25 %: its
         * own time, read from that share, is no evidence then) */
        double pred = d->new_runq < 1.0 ? 100.0 * ((1.0 - d->base_runq) / (1.0 - d->new_runq) - 1.0)
                                        : 0.0;
        bool load_explains = d->raw_median_pct * pred > 0 &&
                             fabs(d->raw_median_pct) >= OWN_EXPLAINS * fabs(pred);
        if (own_flat && load_explains)
            d->significant = false;
    }
}

/* ---- load ------------------------------------------------------------- */

#define LOAD_DIFFERS 0.10

/* The run-queue share of a side: its training thread's time covered by
 * CPU samples (every thread's when none is known); -1 without samples. */
static double runq_share(const prism_analysis *a)
{
    if (!prism_analysis_cpu_present(a))
        return -1.0;
    size_t tt = prism_analysis_training_thread(a), nt = prism_analysis_thread_count(a);
    double known = 0, runq = 0;
    for (size_t i = 0; i < nt; i++) {
        if (tt != SIZE_MAX && i != tt)
            continue;
        const prism_tree *t = prism_analysis_thread_tree(a, i, NULL, NULL);
        for (uint32_t r = t ? t->first_root : PRISM_NO_NODE; t && r < t->count;
             r = t->nodes[r].next_sibling) {
            known += (double)t->nodes[r].cpu_known_ns;
            runq += (double)t->nodes[r].runq_ns;
        }
    }
    return known > 0 ? runq / known : -1.0;
}

/* ---- bottlenecks on one side only ------------------------------------- */

/*
 * A finding of one side is the same as one of the other when type and
 * blamed path match; then, among those left, when the type matches (the
 * same finding blaming another region: contention that moved from one
 * region to the next is no new finding and no vanished one).  One-to-one.
 * in_x[i] / in_y[j]: x[i] / y[j] paired.
 */
static void bn_pair(const prism_bottleneck *x, size_t nx, const prism_bottleneck *y, size_t ny,
                    bool *in_x, bool *in_y)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < nx; i++)
            for (size_t j = 0; j < ny && !in_x[i]; j++)
                if (!in_y[j] && x[i].type == y[j].type &&
                    (pass == 1 || x[i].path_hash == y[j].path_hash))
                    in_x[i] = in_y[j] = true;
}

/* Those of x[] (new side) and y[] (old side) left unpaired, into *nw and
 * *gone (allocated). */
static bool bn_only(const prism_bottleneck *x, size_t nx, const prism_bottleneck *y, size_t ny,
                    prism_compare *c)
{
    bool *in_x = calloc(nx ? nx : 1, sizeof *in_x), *in_y = calloc(ny ? ny : 1, sizeof *in_y);
    c->bn_new = calloc(nx ? nx : 1, sizeof *c->bn_new);
    c->bn_gone = calloc(ny ? ny : 1, sizeof *c->bn_gone);
    bool ok = in_x && in_y && c->bn_new && c->bn_gone;
    if (ok) {
        bn_pair(x, nx, y, ny, in_x, in_y);
        for (size_t i = 0; i < nx; i++)
            if (!in_x[i])
                c->bn_new[c->nbn_new++] = &x[i];
        for (size_t j = 0; j < ny; j++)
            if (!in_y[j])
                c->bn_gone[c->nbn_gone++] = &y[j];
    }
    free(in_x);
    free(in_y);
    return ok;
}

/* ---- entry ------------------------------------------------------------ */

/* The modules a run's prism.torch folded (INFO torch.modules.folded_names,
 * ", "-separated, at most 4000 bytes): their names, sorted. */
typedef struct fname {
    const char *s;
    size_t len;
} fname;
typedef struct fset {
    fname *v;
    size_t n;
} fset;

static int cmp_fname(const void *x, const void *y)
{
    const fname *a = x, *b = y;
    int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static fset fset_of(const prism_analysis *a)
{
    fset f = { 0 };
    prism_folded fo;
    if (!prism_analysis_folded(a, &fo) || !fo.folded || !fo.names[0])
        return f;
    size_t cap = 1;
    for (const char *p = fo.names; (p = strstr(p, ", ")); p += 2)
        cap++;
    f.v = malloc(cap * sizeof *f.v);
    for (const char *p = fo.names; f.v && *p && f.n < cap;) {
        const char *sep = strstr(p, ", ");
        size_t len = sep ? (size_t)(sep - p) : strlen(p);
        f.v[f.n++] = (fname){ p, len };
        if (!sep)
            break;
        p = sep + 2;
    }
    if (f.v)
        pb_qsort(f.v, f.n, sizeof *f.v, cmp_fname);
    return f;
}

/* Is module region `name` (its backward segment too) in f? */
static bool fset_has(const fset *f, const char *name)
{
    if (!f->n || !name)
        return false;
    size_t len = strlen(name);
    static const char bw[] = " (backward)";
    if (len > sizeof bw - 1 && !strcmp(name + len - (sizeof bw - 1), bw))
        len -= sizeof bw - 1;
    fname key = { name, len };
    return bsearch(&key, f->v, f->n, sizeof *f->v, cmp_fname) != NULL;
}

static bool fset_has_n(const fset *f, const char *s, size_t len)
{
    fname key = { s, len };
    return f->n && bsearch(&key, f->v, f->n, sizeof *f->v, cmp_fname) != NULL;
}

/* d is the backward segment `module (backward)` of `m` (len bytes), or of
 * the model's root ("Net (backward)", its forward "Net.forward") when m is
 * NULL. */
static bool segment_of(const prism_compare *c, const prism_delta *d, const char *m, size_t len)
{
    static const char bw[] = " (backward)", fw[] = ".forward";
    size_t n = d->name ? strlen(d->name) : 0;
    if (n <= sizeof bw - 1 || strcmp(d->name + n - (sizeof bw - 1), bw))
        return false;
    n -= sizeof bw - 1;
    if (m)
        return n == len && !memcmp(d->name, m, len);
    for (size_t i = 0; i < c->count; i++) {    /* a root: its forward is "<name>.forward" */
        const char *f = c->deltas[i].name;
        if (f && strlen(f) == n + sizeof fw - 1 && !memcmp(f, d->name, n) &&
            !strcmp(f + n, fw))
            return true;
    }
    return false;
}

/*
 * Backward regions are segments, not a tree: a segment holds the backward
 * of every module below it that has no segment of its own.  So a module
 * folded in one run only moves its backward time into the segment of its
 * nearest module kept in that run: the segments of its ancestors up to the
 * first one kept in both runs (else the model's root segment) hold it in
 * one run and not in the other, and are not compared either.
 */
static void fold_segments(prism_compare *c, const fset *fb, const fset *fc)
{
    for (int side = 0; side < 2; side++) {
        const fset *f = side ? fc : fb, *o = side ? fb : fc;
        for (size_t k = 0; k < f->n; k++) {
            if (fset_has_n(o, f->v[k].s, f->v[k].len))
                continue;                       /* folded in both */
            size_t len = f->v[k].len;
            for (;;) {
                const char *m = f->v[k].s;
                while (len && m[len - 1] != '.')
                    len--;
                bool root = !len;
                len = len ? len - 1 : 0;        /* the parent module's path */
                bool both = !root && !fset_has_n(fb, m, len) && !fset_has_n(fc, m, len);
                bool one = !root && fset_has_n(fb, m, len) != fset_has_n(fc, m, len);
                for (size_t i = 0; (root || both || one) && i < c->count; i++) {
                    prism_delta *d = &c->deltas[i];
                    if (d->base_node != PRISM_NO_NODE && d->new_node != PRISM_NO_NODE &&
                        segment_of(c, d, root ? NULL : m, len))
                        d->folded_one = true;
                }
                if (root || both)
                    break;
            }
        }
    }
}

/* Is `name` a backward segment ("... (backward)")? */
static bool is_backward(const char *name)
{
    static const char bw[] = " (backward)";
    size_t n = name ? strlen(name) : 0;
    return n > sizeof bw - 1 && !strcmp(name + n - (sizeof bw - 1), bw);
}

/*
 * PRISM's hook cost a step that each node of a side holds because a module
 * region below it kept its hooks in this run and lost them in the other
 * (own: this run's folded modules, other: the other's).  Such a module's
 * hooks run here alone, and every region around it holds their cost:
 * calls a step (in the steps it ran in) x the run's cost per module call
 * (INFO torch.modules.cost_ns, else the other run's).  Measured on two
 * identical runs on a busy machine: the model's forward read +5.5 %,
 * p 0.0095, from the hooks alone.  NULL on allocation failure; all zero
 * when no module was folded in one run only.
 */
static double *hook_costs(const sideinfo *s, const fset *own, const fset *other, double cost)
{
    const prism_tree *t = s->t;
    double *h = calloc(t->count ? t->count : 1, sizeof *h);
    if (!h || cost <= 0 || !other->n)
        return h;
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        if (!n->name || !n->calls || !n->steps_seen || is_backward(n->name) ||
            !fset_has(other, n->name) || fset_has(own, n->name))
            continue;
        double per = (double)n->calls / (double)n->steps_seen * cost;
        size_t guard = 0;
        for (uint32_t p = n->parent; p < t->count && guard++ < t->count; p = t->nodes[p].parent)
            h[p] += per;
    }
    return h;
}

static double cost_of(const prism_analysis *a)
{
    prism_folded fo;
    return prism_analysis_folded(a, &fo) ? (double)fo.cost_ns : 0.0;
}

/* d->hook_ns of every delta on both sides; false on allocation failure. */
static bool hooks_of(prism_compare *c, const sideinfo *sb, const sideinfo *sc, const fset *fb,
                     const fset *fc)
{
    if (!fb->n && !fc->n)
        return true;
    double cb = cost_of(sb->a), cc = cost_of(sc->a);
    double *hb = hook_costs(sb, fb, fc, cb > 0 ? cb : cc);
    double *hc = hook_costs(sc, fc, fb, cc > 0 ? cc : cb);
    bool ok = hb && hc;
    for (size_t i = 0; ok && i < c->count; i++) {
        prism_delta *d = &c->deltas[i];
        if (d->base_node != PRISM_NO_NODE && d->new_node != PRISM_NO_NODE && !d->folded_one)
            d->hook_ns = hc[d->new_node] - hb[d->base_node];
    }
    free(hb);
    free(hc);
    return ok;
}

prism_compare *prism_compare_new(const prism_analysis *base, const prism_analysis *cur)
{
    if (!base || !cur)
        return NULL;
    const prism_tree *tb = prism_analysis_tree(base), *tc = prism_analysis_tree(cur);
    static const prism_tree empty = { .first_root = PRISM_NO_NODE };
    if (!tb)
        tb = &empty;
    if (!tc)
        tc = &empty;
    prism_compare *cmp = calloc(1, sizeof *cmp);
    pb_map mb = { 0 }, mc = { 0 };
    sideinfo sb = side_of(base, tb), sc = side_of(cur, tc);
    if (!cmp || !hmap_build(&mb, tb) || !hmap_build(&mc, tc))
        goto fail;
    cmp->deltas = calloc(tb->count + tc->count ? tb->count + tc->count : 1, sizeof *cmp->deltas);
    if (!cmp->deltas)
        goto fail;

    for (size_t i = 0; i < tb->count; i++) {
        uint64_t h = tb->nodes[i].path_hash;
        if (hmap_get(&mb, h) != i)              /* a duplicate path: counted once */
            continue;
        uint32_t cn = hmap_get(&mc, h);
        if (cn == PRISM_NO_NODE)
            cmp->vanished++;
        fill_delta(&cmp->deltas[cmp->count++], &sb, &sc, (uint32_t)i, cn);
    }
    for (size_t i = 0; i < tc->count; i++) {
        uint64_t h = tc->nodes[i].path_hash;
        if (hmap_get(&mc, h) != i || hmap_get(&mb, h) != PRISM_NO_NODE)
            continue;
        cmp->appeared++;
        fill_delta(&cmp->deltas[cmp->count++], &sb, &sc, PRISM_NO_NODE, (uint32_t)i);
    }
    /* module regions folded in one run only: not compared (the lists are
     * short: at most 4000 bytes each) */
    fset fb = fset_of(base), fc = fset_of(cur);
    for (size_t i = 0; (fb.n || fc.n) && i < cmp->count; i++) {
        prism_delta *d = &cmp->deltas[i];
        if (d->base_node != PRISM_NO_NODE && d->new_node != PRISM_NO_NODE &&
            fset_has(&fb, d->name) != fset_has(&fc, d->name))
            d->folded_one = true;
    }
    fold_segments(cmp, &fb, &fc);
    bool hooks = hooks_of(cmp, &sb, &sc, &fb, &fc);
    free(fb.v);
    free(fc.v);
    if (!hooks || !run_shift(cmp, &sb, &sc))
        goto fail;
    cmp->base_runq_share = runq_share(base);
    cmp->new_runq_share = runq_share(cur);
    cmp->load_differs = cmp->base_runq_share >= 0 && cmp->new_runq_share >= 0 &&
                        fabs(cmp->new_runq_share - cmp->base_runq_share) >= LOAD_DIFFERS;
    double g = cmp->whole_run_shift ? cmp->run_factor : 1.0;
    for (size_t i = 0; i < cmp->count; i++)
        verdict(&cmp->deltas[i], &sb, &sc, g);
    pb_qsort(cmp->deltas, cmp->count, sizeof *cmp->deltas, cmp_delta);
    for (size_t i = 0; i < cmp->count; i++)
        cmp->own_regions += cmp->deltas[i].own;

    size_t nbb = 0, nbc = 0;
    const prism_bottleneck *bb = prism_analysis_bottlenecks(base, &nbb);
    const prism_bottleneck *bc = prism_analysis_bottlenecks(cur, &nbc);
    if (!bb)
        nbb = 0;
    if (!bc)
        nbc = 0;
    if (!bn_only(bc, nbc, bb, nbb, cmp))
        goto fail;
    pb_map_free(&mb);
    pb_map_free(&mc);
    return cmp;
fail:
    pb_map_free(&mb);
    pb_map_free(&mc);
    prism_compare_free(cmp);
    return NULL;
}

void prism_compare_free(prism_compare *c)
{
    if (!c)
        return;
    free(c->deltas);
    free(c->bn_new);
    free(c->bn_gone);
    free(c);
}
