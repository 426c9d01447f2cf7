/*
 * stacks.c - the sampled call stacks (format 1.2 STACKS chunks, the Python
 * module's low-rate sampler): where the time the regions miss went.
 *
 * Each sample is placed as it arrives in the region open on its thread at
 * its time (the thread's transition ring: the writer puts STACKS after the
 * flush's REGIONS chunks) and weighed by the time since its thread's
 * previous sample (capped at three periods: the sampler waits for the GIL,
 * so its passes are not evenly spaced).  The frames are kept once, in a
 * trie of (parent, frame name).
 *
 * The wait says what a sample saw (wait_ns, the switch interval from INFO
 * stacks.switch_interval_ns).  A pass that found the GIL free read every
 * thread where it was when the pass was due; one that waited the switch
 * interval read a thread that ran Python all along, where CPython made it
 * let go.  One that waited less read a running thread at the call that
 * released the GIL (a torch op after a stretch of Python): a moment, not
 * where the thread spent the wait nor the time before it, so a short call
 * after Python was read at about every other pass (a 0.5 ms matmul after
 * 20 ms of Python: 17 % of the samples' time for 2 %).  Such a sample
 * stands for the Python that ran until the call: when the thread's
 * previous pass saw it run Python through the switch interval, at most two
 * periods before, in the region still open when this pass was due, its
 * time goes to that stack (`released` counts them); otherwise to the
 * call's line, as read.
 *
 * Readers: an_stacks_where names what a set of samples was doing (the
 * rules: time outside every region, slow steps, time outside steps);
 * prism_analysis_stacks_info gives the totals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rules.h"

typedef struct stk_node {
    uint32_t parent;            /* 0: a root frame (trie index 0 is no frame) */
    uint32_t name;              /* string id */
    uint32_t depth;
} stk_node;

/* The sampled paths under the nodes of one tree (all threads, or one
 * thread's): those under node m are pub[off[2m] .. off[2m] + off[2m + 1]),
 * and the tree with them as nodes (aug: nodes [aug_base, naug) own their
 * "~ name" copies). */
typedef struct sampled_set {
    prism_sampled *pub;
    size_t npub, pcap;
    uint32_t *off;
    size_t noff;
    prism_node *aug;
    size_t naug, aug_base;
    prism_tree aug_tree;
    bool made;                  /* a thread's: made since the last refresh */
} sampled_set;

struct an_stacks {
    stk_node *trie;             /* [0] is the root sentinel */
    size_t ntrie, tcap;
    pb_map child;               /* parent << 32 | name -> trie index */
    an_stack_sample *s;
    size_t n, cap;
    pb_map last_of;             /* stream -> when its last sample's pass was due */
    pb_map prev_of;             /* stream -> 1 + its index in prev */
    struct stk_prev { uint32_t leaf, node; bool held; } *prev;
    size_t nprev, prevcap;
    uint64_t period_ns;
    uint64_t switch_ns;         /* INFO stacks.switch_interval_ns; 0: 5 ms */
    uint64_t released;          /* samples credited to the previous stack */
    uint64_t weight_ns;         /* sum of the samples' weights */
    char status[192];
    /* published at refresh (an_stacks_publish): the all-threads tree's */
    sampled_set all;
    /* each thread's, made when asked for (prism_analysis_thread_tree_sampled)
     * and dropped at the next refresh: nper of them, by thread index */
    sampled_set *per;
    size_t nper;
    /* scratch of an_stacks_where: per trie node, weight */
    double *acc;
    size_t acap;
};

static struct an_stacks *get(prism_analysis *a)
{
    if (a->stk)
        return a->stk;
    struct an_stacks *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->trie = calloc(64, sizeof *k->trie);
    if (!k->trie) {
        free(k);
        return NULL;
    }
    k->tcap = 64;
    k->ntrie = 1;
    k->period_ns = 10000000;
    a->stk = k;
    return k;
}

void an_stacks_info(prism_analysis *a, const char *key, const prism_value *v)
{
    struct an_stacks *k = get(a);
    if (!k)
        return;
    if (!strcmp(key, "stacks.period_ns") && v->type == PRISM_VAL_UINT && v->v.u &&
        v->v.u <= 10000000000ull)
        k->period_ns = v->v.u;
    else if (!strcmp(key, "stacks.switch_interval_ns") && v->type == PRISM_VAL_UINT &&
             v->v.u <= 10000000000ull)
        k->switch_ns = v->v.u;
    else if (!strcmp(key, "stacks.sampler") && v->type == PRISM_VAL_TEXT) {
        snprintf(k->status, sizeof k->status, "%s", v->v.s);
        if (strncmp(v->v.s, "off", 3))
            an_gpu_want_rings(a);          /* samples are placed in regions */
    }
}

static uint32_t trie_leaf(struct an_stacks *k, const uint32_t *fr, uint32_t n)
{
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t key = (uint64_t)at << 32 | fr[i], idx;
        if (pb_map_get(&k->child, key, &idx)) {
            at = (uint32_t)idx;
            continue;
        }
        if (k->ntrie >= UINT32_MAX ||
            !pb_vec_reserve((void **)&k->trie, &k->tcap, k->ntrie + 1, sizeof *k->trie) ||
            !pb_map_put(&k->child, key, k->ntrie))
            return UINT32_MAX;
        k->trie[k->ntrie] = (stk_node){ at, fr[i], at ? k->trie[at].depth + 1 : 0 };
        at = (uint32_t)k->ntrie++;
    }
    return at;
}

/* A wait for the GIL under this was the hand-over of a free GIL. */
#define FREE_WAIT_NS 50000u

/* What sample s of a running thread saw, from the sampler's wait less the
 * time it was off a CPU: SEEN, where the thread was when the pass was due
 * (the GIL was free); HELD, the thread ran Python through the switch
 * interval and CPython made it give the GIL up there; RELEASED, it ran
 * Python until the call read, which let the GIL go. */
enum { SEEN = 0, HELD = 1, RELEASED = 2 };

static int seen_how(const struct an_stacks *k, const prism_stack_sample *s)
{
    uint64_t si = k->switch_ns ? k->switch_ns : 5000000u;
    uint64_t held = s->wait_ns - (s->queued_ns < s->wait_ns ? s->queued_ns : s->wait_ns);
    if (!(s->flags & PRISM_STACK_RUNNING) || (s->flags & PRISM_STACK_SYSCALL) ||
        held < FREE_WAIT_NS)
        return SEEN;
    return held >= si ? HELD : RELEASED;
}

/* The stream's last sample as kept (zeroed when new); NULL without memory. */
static struct stk_prev *prev_of(struct an_stacks *k, uint32_t stream)
{
    bool added;
    uint64_t *slot = pb_map_slot(&k->prev_of, stream, &added);
    if (!slot)
        return NULL;
    if (added) {
        if (!pb_vec_reserve((void **)&k->prev, &k->prevcap, k->nprev + 1, sizeof *k->prev)) {
            *slot = 0;
            return NULL;
        }
        k->prev[k->nprev] = (struct stk_prev){ 0, PRISM_NO_NODE, false };
        *slot = ++k->nprev;
    }
    return *slot ? &k->prev[*slot - 1] : NULL;
}

void an_stacks_samples(prism_analysis *a, const prism_stack_sample *s, size_t n)
{
    struct an_stacks *k = get(a);
    if (!k)
        return;
    for (size_t i = 0; i < n; i++) {
        uint32_t leaf = trie_leaf(k, s[i].frames, s[i].nframes);
        if (leaf == UINT32_MAX || leaf == 0 ||
            !pb_vec_reserve((void **)&k->s, &k->cap, k->n + 1, sizeof *k->s))
            return;
        /* the time since the previous pass that read this thread was due */
        uint64_t due = s[i].ts > s[i].wait_ns ? s[i].ts - s[i].wait_ns : 0;
        uint64_t *last = pb_map_slot(&k->last_of, s[i].stream, NULL);
        uint64_t w = k->period_ns;
        bool recent = last && *last && due > *last;
        if (recent && due - *last < 3 * k->period_ns)
            w = due - *last;
        recent = recent && due - *last < 2 * k->period_ns;
        if (last)
            *last = due;
        uint64_t ti = UINT32_MAX;       /* a thread the file named: no new ones */
        athread *t = pb_map_get(&a->thread_of, s[i].stream, &ti) ? a->threads[ti] : NULL;
        uint32_t node = t ? an_tree_node_at_sample(t, s[i].ts) : PRISM_NO_NODE;
        struct stk_prev *p = prev_of(k, s[i].stream);
        int how = seen_how(k, &s[i]);
        if (how == RELEASED && recent && p && p->held && p->leaf && t &&
            an_tree_node_at_sample(t, due) == p->node) {
            leaf = p->leaf;
            node = p->node;
            k->released++;
        }
        if (p)
            *p = (struct stk_prev){ leaf, node, how == HELD };
        k->s[k->n++] = (an_stack_sample){
            .ts = s[i].ts, .w = w, .stream = s[i].stream, .leaf = leaf, .flags = s[i].flags,
            .thread = t ? (uint32_t)ti : UINT32_MAX, .node = node,
        };
        k->weight_ns += w;
    }
}

const an_stack_sample *an_stacks_all(const prism_analysis *a, size_t *n)
{
    *n = a->stk ? a->stk->n : 0;
    return a->stk ? a->stk->s : NULL;
}

void an_stacks_free(prism_analysis *a)
{
    struct an_stacks *k = a->stk;
    if (!k)
        return;
    free(k->trie);
    pb_map_free(&k->child);
    pb_map_free(&k->last_of);
    pb_map_free(&k->prev_of);
    free(k->prev);
    free(k->s);
    free(k->acc);
    an_stacks_unpublish(a);
    free(k);
    a->stk = NULL;
}

bool prism_analysis_stacks_info(const prism_analysis *a, prism_stacks_info *out)
{
    memset(out, 0, sizeof *out);
    const struct an_stacks *k = a->stk;
    if (!k || (!k->n && !k->status[0]))
        return false;
    out->samples = k->n;
    out->period_ns = k->period_ns;
    out->weight_ns = k->weight_ns;
    out->released = k->released;
    out->status = k->status;
    return true;
}

/* Library code (the interpreter's, site-packages'): not where a user looks
 * first for the call that made the time. */
static bool library_frame(const char *name)
{
    return !name || strstr(name, "/site-packages/") || strstr(name, "/dist-packages/") ||
           strstr(name, "/lib/python") || strstr(name, "(<frozen ") || name[0] == '[' ||
           strstr(name, "/prism/");
}

/* "func (path/to/file.py:12)" as "func (file.py:12)", or with the package
 * directory for a library's file ("save (torch/serialization.py:440)"). */
static void short_frame(char *out, size_t cap, const char *name)
{
    const char *open = name ? strrchr(name, '(') : NULL;
    if (!open) {
        snprintf(out, cap, "%s", name ? name : "?");
        return;
    }
    const char *slash = NULL, *prev = NULL;
    for (const char *p = open; *p; p++)
        if (*p == '/') {
            prev = slash;
            slash = p;
        }
    if (!slash) {
        snprintf(out, cap, "%s", name);
        return;
    }
    const char *from = slash + 1;
    if (library_frame(name) && prev)
        from = prev + 1;
    snprintf(out, cap, "%.*s(%s", (int)(open - name), name, from);
}

/* From trie node `from`, follow the heaviest child while it weighs at
 * least `min`; the deepest node reached (from itself when none does). */
static uint32_t descend(const struct an_stacks *k, uint32_t from, double min)
{
    uint32_t at = from;
    for (;;) {
        uint32_t best = 0;
        double bw = 0;
        for (size_t j = 1; j < k->ntrie; j++)
            if (k->trie[j].parent == at && k->acc[j] > bw) {
                bw = k->acc[j];
                best = (uint32_t)j;
            }
        if (!best || bw < min)
            return at;
        at = best;
    }
}

/* Trie node x in words: the deepest of the program's own frames above it
 * (or it), then x: "write_metrics (train.py:88) -> [clock_nanosleep]". */
static void label(const prism_analysis *a, const struct an_stacks *k, uint32_t x, char *out,
                  size_t cap)
{
    uint32_t user = 0;
    for (uint32_t y = x; y; y = k->trie[y].parent)
        if (!library_frame(an_tree_name(a, k->trie[y].name))) {
            user = y;
            break;
        }
    char f1[256], f2[256];
    short_frame(f2, sizeof f2, an_tree_name(a, k->trie[x].name));
    if (user && user != x) {
        short_frame(f1, sizeof f1, an_tree_name(a, k->trie[user].name));
        snprintf(out, cap, "%s -> %s%s", f1, k->trie[x].parent == user ? "" : "... -> ", f2);
    } else {
        snprintf(out, cap, "%s", f2);
    }
}

/*
 * What the samples `pick` chooses were doing: follow the heaviest child
 * from the roots while it holds at least half of the chosen weight; the
 * deepest frame reached, with the deepest of the program's own frames
 * above it, names the place ("write_metrics (train.py:88) -> [clock_nanosleep]").
 * False when no sample is chosen.
 */
bool an_stacks_where(const prism_analysis *a, bool (*pick)(void *ctx, const an_stack_sample *s),
                     void *ctx, an_stack_where *out)
{
    memset(out, 0, sizeof *out);
    struct an_stacks *k = a->stk;
    if (!k || !k->n)
        return false;
    if (!pb_vec_reserve((void **)&k->acc, &k->acap, k->ntrie, sizeof *k->acc))
        return false;
    memset(k->acc, 0, k->ntrie * sizeof *k->acc);
    double total = 0;
    for (size_t i = 0; i < k->n; i++) {
        if (!pick(ctx, &k->s[i]))
            continue;
        out->samples++;
        total += (double)k->s[i].w;
        if ((k->s[i].flags & (PRISM_STACK_SYSCALL | PRISM_STACK_RUNNING)) == PRISM_STACK_SYSCALL)
            out->blocked += (double)k->s[i].w;
        for (uint32_t x = k->s[i].leaf; x; x = k->trie[x].parent)
            k->acc[x] += (double)k->s[i].w;
    }
    out->weight_ns = total;
    if (!out->samples)
        return false;
    out->blocked /= total > 0 ? total : 1;
    /* the heaviest path: while one child holds half of the chosen weight
     * and no other a sixth (there the weight splits) */
    uint32_t at = 0;
    for (;;) {
        uint32_t b1 = 0, b2 = 0;
        for (size_t j = 1; j < k->ntrie; j++) {
            if (k->trie[j].parent != at)
                continue;
            if (!b1 || k->acc[j] > k->acc[b1]) {
                b2 = b1;
                b1 = (uint32_t)j;
            } else if (!b2 || k->acc[j] > k->acc[b2]) {
                b2 = (uint32_t)j;
            }
        }
        if (!b1 || k->acc[b1] < 0.5 * total || (b2 && k->acc[b2] >= total / 6))
            break;
        at = b1;
    }
    out->share = at ? k->acc[at] / total : 0;
    /* where the weight splits below it, the two heaviest branches that
     * hold a sixth or more each, each followed down its own heaviest path */
    uint32_t top[2] = { 0, 0 };
    for (size_t j = 1; j < k->ntrie; j++) {
        if (k->trie[j].parent != at || k->acc[j] < total / 6)
            continue;
        if (!top[0] || k->acc[j] > k->acc[top[0]]) {
            top[1] = top[0];
            top[0] = (uint32_t)j;
        } else if (!top[1] || k->acc[j] > k->acc[top[1]]) {
            top[1] = (uint32_t)j;
        }
    }
    if (!top[0] || !top[1]) {
        if (at)
            label(a, k, at, out->text, sizeof out->text);
        return true;
    }
    char one[300];
    out->share = 0;
    for (int i = 0; i < 2; i++) {
        uint32_t d = descend(k, top[i], 0.5 * k->acc[top[i]]);
        label(a, k, d, one, sizeof one);
        size_t used = strlen(out->text);
        snprintf(out->text + used, sizeof out->text - used, "%s%s %.0f%%", i ? ", " : "", one,
                 100.0 * k->acc[top[i]] / total);
        out->share += k->acc[top[i]] / total;
    }
    return true;
}

/* ---- for the rules ---------------------------------------------------- */

typedef struct in_steps {
    const prism_step *st;       /* in start order */
    size_t n;
    const uint64_t *idx;        /* only these step indices (sorted), or NULL */
    size_t k;
    uint32_t thread;            /* the training thread's index */
    int where;                  /* 0 outside regions, 1 in `node`, 2 outside steps */
    uint32_t node;
} in_steps;

/* The step holding ts (start order, possibly overlapping: the latest
 * start at or before ts), or NULL. */
static const prism_step *step_at_ts(const in_steps *q, uint64_t ts)
{
    size_t lo = 0, hi = q->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->st[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || ts >= q->st[lo - 1].end)
        return NULL;
    return &q->st[lo - 1];
}

static bool pick_in_steps(void *ctx, const an_stack_sample *s)
{
    const in_steps *q = ctx;
    if (s->thread != q->thread)
        return false;
    const prism_step *st = step_at_ts(q, s->ts);
    if (q->where == 2)
        return !st;
    if (!st || !PRISM_STEP_COUNTED(st->flags))
        return false;
    if (q->idx) {
        size_t lo = 0, hi = q->k;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (q->idx[mid] < st->index)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == q->k || q->idx[lo] != st->index)
            return false;
    }
    return q->where == 0 ? s->node == PRISM_NO_NODE : s->node == q->node;
}

bool an_stacks_outside_steps(const prism_analysis *a, size_t thread, an_stack_where *out)
{
    memset(out, 0, sizeof *out);
    const prism_step_stats *st = prism_analysis_steps(a);
    if (!a->stk || !a->stk->n || !st || !st->nseries || thread >= a->nthreads)
        return false;
    in_steps q = { st->series, st->nseries, NULL, 0, (uint32_t)thread, 2, PRISM_NO_NODE };
    return an_stacks_where(a, pick_in_steps, &q, out);
}

bool rules_stacks_where(const rules_ctx *c, int where, const uint64_t *idx, size_t k,
                        uint32_t node, an_stack_where *out)
{
    memset(out, 0, sizeof *out);
    const prism_step_stats *st = prism_analysis_steps(c->a);
    if (!c->a->stk || !c->a->stk->n || !st || !st->nseries || c->train_idx == SIZE_MAX)
        return false;
    in_steps q = { st->series, st->nseries, idx, k, (uint32_t)c->train_idx, where, node };
    return an_stacks_where(c->a, pick_in_steps, &q, out);
}

/* ---- the sampled call paths under each node ---------------------------- */

typedef struct grp_ent {
    uint32_t m;                 /* merged node */
    uint32_t leaf;              /* trie leaf */
    uint64_t w;
    uint32_t flags;
} grp_ent;

static int by_node(const void *x, const void *y)
{
    const grp_ent *p = x, *q = y;
    return p->m < q->m ? -1 : p->m > q->m;
}

static uint32_t lca(const struct an_stacks *k, uint32_t x, uint32_t y)
{
    while (x != y) {
        if (k->trie[x].depth >= k->trie[y].depth && x)
            x = k->trie[x].parent;
        else
            y = k->trie[y].parent;
    }
    return x;
}

static const char NONAME[] = "~ ?";

static void free_aug(sampled_set *o)
{
    for (size_t i = o->aug_base; o->aug && i < o->naug; i++)
        if ((o->aug[i].flags & PRISM_NODE_SAMPLED) && o->aug[i].name != NONAME)
            free((char *)o->aug[i].name);
    free(o->aug);
    o->aug = NULL;
    o->naug = o->aug_base = 0;
    memset(&o->aug_tree, 0, sizeof o->aug_tree);
}

static void set_free(sampled_set *o)
{
    for (size_t i = 0; i < o->npub; i++)
        free((char *)o->pub[i].name);
    free(o->pub);
    free(o->off);
    free_aug(o);
    memset(o, 0, sizeof *o);
}

void an_stacks_unpublish(prism_analysis *a)
{
    struct an_stacks *k = a->stk;
    if (!k)
        return;
    set_free(&k->all);
    for (size_t i = 0; i < k->nper; i++)
        set_free(&k->per[i]);
    free(k->per);
    k->per = NULL;
    k->nper = 0;
}

/* The node a sample fell in, in the all-threads tree (thread SIZE_MAX) or
 * in its own thread's: its region's, or the training thread's `(outside
 * regions)` node inside a sampled step; else none. */
static uint32_t node_of_sample(const prism_analysis *a, const in_steps *q,
                               const an_stack_sample *s, size_t thread)
{
    if (s->thread >= a->nthreads || (thread != SIZE_MAX && s->thread != thread))
        return PRISM_NO_NODE;
    const athread *t = a->threads[s->thread];
    if (s->node != PRISM_NO_NODE) {
        if (s->node >= t->n)
            return PRISM_NO_NODE;
        return thread == SIZE_MAX ? t->nodes[s->node].merged : s->node;
    }
    if (!t->out_pub || (thread == SIZE_MAX && t->out.merged == PRISM_NO_NODE))
        return PRISM_NO_NODE;
    const prism_step *st = step_at_ts(q, s->ts);
    if (!st || !PRISM_STEP_COUNTED(st->flags))
        return PRISM_NO_NODE;
    return thread == SIZE_MAX ? t->out.merged : t->n;   /* published as pub[n] */
}

/* The sampled paths under the nodes of `base` (the all-threads tree, or
 * thread `thread`'s) into o. */
static void publish(const prism_analysis *a, sampled_set *o, const prism_tree *base, size_t thread)
{
    struct an_stacks *k = a->stk;
    if (!k || !k->n || !base->count)
        return;
    const prism_step_stats *st = prism_analysis_steps(a);
    in_steps q = { st ? st->series : NULL, st ? st->nseries : 0, NULL, 0, 0, 0, 0 };
    grp_ent *g = malloc(k->n * sizeof *g);
    o->off = calloc(2 * base->count, sizeof *o->off);
    if (!g || !o->off) {
        free(g);
        free(o->off);
        o->off = NULL;
        return;
    }
    o->noff = base->count;
    size_t ng = 0;
    for (size_t i = 0; i < k->n; i++) {
        uint32_t m = node_of_sample(a, &q, &k->s[i], thread);
        if (m != PRISM_NO_NODE && m < base->count)
            g[ng++] = (grp_ent){ m, k->s[i].leaf, k->s[i].w, k->s[i].flags };
    }
    pb_qsort(g, ng, sizeof *g, by_node);
    pb_map child = { 0 };
    char buf[600];
    for (size_t b = 0; b < ng;) {
        size_t e = b;
        uint32_t top = g[b].leaf;
        double wsum = 0;
        while (e < ng && g[e].m == g[b].m) {
            top = lca(k, top, g[e].leaf);
            wsum += (double)g[e].w;
            e++;
        }
        uint32_t m = g[b].m;
        /* an estimate inside the node's own time: never more than it */
        double self = (double)base->nodes[m].self_ns, f = wsum > self ? self / wsum : 1;
        size_t first = o->npub;
        pb_map_free(&child);
        for (size_t i = b; i < e; i++) {
            /* the path from the group's common frame (kept, to name where
             * the samples were) down to this sample's leaf */
            uint32_t path[PRISM_STACK_MAX_FRAMES + 1], np = 0;
            for (uint32_t x = g[i].leaf; np <= PRISM_STACK_MAX_FRAMES; x = k->trie[x].parent) {
                path[np++] = x;
                if (x == top || !x)
                    break;
            }
            if (top == 0 && np && path[np - 1] == 0)
                np--;                       /* no frame in common */
            uint32_t parent = PRISM_NO_NODE;
            for (uint32_t j = np; j-- > 0;) {
                uint64_t key = (uint64_t)(parent + 1) << 32 | k->trie[path[j]].name, v;
                if (!pb_map_get(&child, key, &v)) {
                    if (!pb_vec_reserve((void **)&o->pub, &o->pcap, o->npub + 1, sizeof *o->pub))
                        goto out;
                    short_frame(buf, sizeof buf, an_tree_name(a, k->trie[path[j]].name));
                    char *name = strdup(buf);
                    if (!name || !pb_map_put(&child, key, o->npub - first)) {
                        free(name);
                        goto out;
                    }
                    o->pub[o->npub++] = (prism_sampled){ parent, name, 0, 0, 0 };
                    v = o->npub - 1 - first;
                }
                prism_sampled *p = &o->pub[first + v];
                p->ns += (double)g[i].w * f;
                p->samples++;
                if ((g[i].flags & (PRISM_STACK_SYSCALL | PRISM_STACK_RUNNING)) ==
                    PRISM_STACK_SYSCALL)
                    p->blocked += (double)g[i].w * f;
                parent = (uint32_t)v;
            }
        }
        for (size_t i = first; i < o->npub; i++)
            o->pub[i].blocked = o->pub[i].ns > 0 ? o->pub[i].blocked / o->pub[i].ns : 0;
        o->off[2 * m] = (uint32_t)first;
        o->off[2 * m + 1] = (uint32_t)(o->npub - first);
        b = e;
    }
out:
    pb_map_free(&child);
    free(g);
}

void an_stacks_publish(prism_analysis *a)
{
    an_stacks_unpublish(a);
    if (a->stk && a->nnodes)
        publish(a, &a->stk->all, &a->tree, SIZE_MAX);
}

const prism_sampled *prism_analysis_sampled(const prism_analysis *a, uint32_t node, size_t *n)
{
    const struct an_stacks *k = a->stk;
    *n = 0;
    if (!k || !k->all.off || node >= a->nnodes || node >= k->all.noff)
        return NULL;
    *n = k->all.off[2 * node + 1];
    return *n ? &k->all.pub[k->all.off[2 * node]] : NULL;
}

/* ---- a tree with the sampled paths in it -------------------------------- */

/* The node's path hash for a sampled frame: the parent's mixed with the
 * name and a mark no recorded path carries. */
static uint64_t sampled_hash(uint64_t parent, const char *name)
{
    uint64_t h = parent ^ 0x9E3779B97F4A7C15ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001B3ull;
    return h ^ 0x7E5A3F1Du;             /* "sampled" */
}

/* base with o's sampled paths as nodes, into o->aug_tree. */
static void augment(sampled_set *o, const prism_tree *base)
{
    free_aug(o);
    if (!o->npub || !o->off || !base->count)
        return;
    size_t nb = base->count, n = nb + o->npub;
    prism_node *v = malloc(n * sizeof *v);
    if (!v)
        return;
    memcpy(v, base->nodes, nb * sizeof *v);
    size_t at = nb;
    o->aug_base = nb;
    for (uint32_t m = 0; m < nb; m++) {
        uint32_t first = o->off[2 * m], cnt = o->off[2 * m + 1];
        size_t g0 = at;                 /* the group's first sampled node */
        for (uint32_t j = 0; j < cnt; j++) {
            const prism_sampled *s = &o->pub[first + j];
            uint32_t par = s->parent == PRISM_NO_NODE ? m : (uint32_t)(g0 + s->parent);
            prism_node nd;
            memset(&nd, 0, sizeof nd);
            nd.parent = par;
            nd.name = NONAME;
            char *mark = malloc(strlen(s->name) + 3);
            if (mark) {                 /* "~ name": sampled, seen without colour */
                memcpy(mark, "~ ", 2);
                strcpy(mark + 2, s->name);
                nd.name = mark;
            }
            nd.depth = v[par].depth + 1;
            nd.thread = v[par].thread;
            nd.path_hash = sampled_hash(v[par].path_hash, s->name);
            nd.calls = s->samples;
            nd.total_ns = (uint64_t)(s->ns + 0.5);
            nd.self_ns = nd.total_ns;
            nd.mean_ns = s->samples ? s->ns / (double)s->samples : 0;   /* per sample */
            nd.flags = PRISM_NODE_SAMPLED;
            /* a sampled frame's self: its own estimate less its sampled
             * children's; the recorded node keeps its measured self time,
             * which its first level is an estimate of */
            if (s->parent != PRISM_NO_NODE)
                v[par].self_ns = v[par].self_ns >= nd.total_ns ? v[par].self_ns - nd.total_ns : 0;
            v[at++] = nd;
        }
    }
    for (size_t i = 0; i < n; i++)
        v[i].first_child = PRISM_NO_NODE;
    for (size_t i = n; i-- > 0;)
        if (v[i].parent != PRISM_NO_NODE) {
            v[i].next_sibling = v[v[i].parent].first_child;
            v[v[i].parent].first_child = (uint32_t)i;
        }
    for (size_t i = nb; i < n; i++)
        v[i].share = base->total_ns ? (double)v[i].total_ns / (double)base->total_ns : 0;
    o->aug = v;
    o->naug = n;
    o->aug_tree = *base;
    o->aug_tree.nodes = v;
    o->aug_tree.count = n;
}

void an_stacks_augment(prism_analysis *a)
{
    if (a->stk)
        augment(&a->stk->all, &a->tree);
}

const prism_tree *prism_analysis_tree_sampled(const prism_analysis *a)
{
    const struct an_stacks *k = a->stk;
    return k && k->all.aug ? &k->all.aug_tree : prism_analysis_tree(a);
}

const prism_tree *prism_analysis_thread_tree_sampled(const prism_analysis *a, size_t i)
{
    const prism_tree *base = prism_analysis_thread_tree(a, i, NULL, NULL);
    struct an_stacks *k = a->stk;
    if (!base || !k || !k->n || !k->all.off)
        return base;                    /* no samples (or not yet published) */
    if (!k->per) {
        k->per = calloc(a->nthreads, sizeof *k->per);
        if (!k->per)
            return base;
        k->nper = a->nthreads;
    }
    if (i >= k->nper)
        return base;
    sampled_set *o = &k->per[i];
    if (!o->made) {
        o->made = true;
        publish(a, o, base, i);
        augment(o, base);
    }
    return o->aug ? &o->aug_tree : base;
}
