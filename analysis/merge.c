/*
 * merge.c - the derived trees, rebuilt at every refresh from the streaming
 * state tree.c keeps: each thread's public tree (statistics, per-step
 * figures, scheduler accounting published from cpu.c, inclusive sums),
 * the all-threads tree merged by path, the flat operations, and which
 * thread is the training thread.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"

static uint64_t path_hash(uint64_t parent_hash, const char *name)
{
    return XXH3_64bits_withSeed(name, strlen(name), parent_hash);
}

/* Mean and sum of squared deviations of a node's call durations. */
static void moments(const tnode *nd, double *mean, double *m2)
{
    double n = (double)nd->calls;
    *mean = nd->calls ? nd->shift + nd->s1 / n : 0;
    *m2 = nd->calls ? nd->s2 - nd->s1 * nd->s1 / n : 0;
    if (*m2 < 0)
        *m2 = 0;
}

/* Per-step moments of a node, the step being filled included. */
static void step_moments(const tnode *nd, uint64_t *seen, double *mean, double *m2, double *max)
{
    tnode x = *nd;
    if (x.step_sum)
        step_fold(&x, x.step_sum);      /* moments only: x shares nd's reservoir */
    double n = (double)x.steps_seen;
    *seen = x.steps_seen;
    *mean = x.steps_seen ? x.step_shift + x.step_s1 / n : 0;
    *m2 = x.steps_seen ? x.step_s2 - x.step_s1 * x.step_s1 / n : 0;
    if (*m2 < 0)
        *m2 = 0;
    *max = x.step_max;
}

static void publish_steps(prism_node *p, uint64_t seen, double mean, double m2, double max)
{
    p->steps_seen = seen;
    p->in_step_ns = an_ns_round(mean * (double)seen);
    p->step_mean_ns = mean;
    p->step_std_ns = seen > 1 ? sqrt(m2 / (double)(seen - 1)) : 0;
    p->step_max_ns = max;
}

/* A node's own scheduler accounting into a public node (added: the merged
 * tree sums threads), then a child's into its parent (inclusive). */
static void cpu_add_self(prism_node *p, const athread *t, const tnode *nd)
{
    oncpu_self_t c = an_oncpu_self(t, nd);
    p->cpu_known_ns += c.known;
    p->oncpu_ns += c.on;
    p->runq_ns += c.runq;
    p->offcpu_ns += c.off;
    p->offcpu_busy_ns += c.busy;
}

static void cpu_publish(prism_node *p, const athread *t, const tnode *nd)
{
    p->cpu_known_ns = p->oncpu_ns = p->runq_ns = p->offcpu_ns = p->offcpu_busy_ns = 0;
    cpu_add_self(p, t, nd);
}

/* A node's side record (GPU work, work counters, leads, regions not
 * recorded) into a public node (added: the merged tree sums threads). */
static void ext_add(prism_node *p, const tnode_ext *x)
{
    if (!x)
        return;
    p->gpu_ns += x->gpu_ns;
    p->gpu_launches += x->gpu_launches;
    p->flops += x->flops;
    p->bytes += x->bytes;
    p->gpu_wait_ns += x->gpu_wait;
    p->lead_steps += x->first_leaf;
    p->unrecorded += x->unrec;
}

static void cpu_inclusive(prism_node *par, const prism_node *ch)
{
    par->cpu_known_ns += ch->cpu_known_ns;
    par->oncpu_ns += ch->oncpu_ns;
    par->runq_ns += ch->runq_ns;
    par->offcpu_ns += ch->offcpu_ns;
    par->offcpu_busy_ns += ch->offcpu_busy_ns;
}

/* Fill a public node from streaming statistics. */
static void publish(prism_node *p, const tnode *nd)
{
    double mean, m2, smax;
    uint64_t seen;
    step_moments(nd, &seen, &mean, &m2, &smax);
    publish_steps(p, seen, mean, m2, smax);
    moments(nd, &mean, &m2);
    p->calls = nd->calls;
    p->total_ns = nd->total;
    p->self_ns = nd->self;
    p->min_ns = nd->calls ? nd->min : 0;
    p->max_ns = nd->max;
    p->mean_ns = mean;
    p->std_ns = nd->calls > 1 ? sqrt(m2 / (double)(nd->calls - 1)) : 0;
}

static void finish_tree(prism_node *nodes, size_t n, prism_tree *tree)
{
    tree->nodes = nodes;
    tree->count = n;
    tree->first_root = PRISM_NO_NODE;
    tree->total_ns = 0;
    for (size_t i = n; i-- > 0;)
        if (nodes[i].parent == PRISM_NO_NODE) {
            tree->total_ns = an_sat_add(tree->total_ns, nodes[i].total_ns);
            nodes[i].next_sibling = tree->first_root;
            tree->first_root = (uint32_t)i;
        }
    for (size_t i = 0; i < n; i++)
        nodes[i].share = tree->total_ns ? (double)nodes[i].total_ns / (double)tree->total_ns : 0;
}

/* Children lists in creation order: a child is created after its parent
 * and numbered in order, so a backward pass prepending each node to its
 * parent's list links them in one go (appending at the end of a list
 * walked from its head was quadratic in a node's children). */
static void link_children(prism_node *nodes, size_t n)
{
    for (size_t i = n; i-- > 0;)
        if (nodes[i].parent != PRISM_NO_NODE) {
            nodes[i].next_sibling = nodes[nodes[i].parent].first_child;
            nodes[nodes[i].parent].first_child = (uint32_t)i;
        }
}

/*
 * Regions still open on a thread's stack count as calls in progress, with
 * their time so far (up to the newest record): a snapshot taken while a
 * profile is written never shows a child with more calls or time than its
 * parent (the parent's call would otherwise count only when it ends).
 * Into the thread's own nodes, or (merged) the all-threads tree.
 */
static void open_calls(const prism_analysis *a, const athread *t, prism_node *nodes, bool merged)
{
    uint64_t now = a->have_ts ? a->last_ts : 0;
    for (uint32_t d = 0; d < t->depth; d++) {
        const frame *f = &t->stack[d];
        if (f->node == PRISM_NO_NODE)
            continue;
        uint32_t i = merged ? t->nodes[f->node].merged : f->node;
        if (i == PRISM_NO_NODE)
            continue;
        uint64_t el = now > f->start ? now - f->start : 0, inner = f->child;
        if (d + 1 < t->depth && now > t->stack[d + 1].start)
            inner = an_sat_add(inner, now - t->stack[d + 1].start);
        prism_node *p = &nodes[i];
        p->calls++;
        p->open_calls++;
        p->total_ns = an_sat_add(p->total_ns, el);
        p->self_ns = an_sat_add(p->self_ns, el > inner ? el - inner : 0);
    }
}

/* The outside node (unattributed.c) as pub[t->n]: a root. */
static void publish_out(athread *t, prism_node *p)
{
    double mean, m2, smax;
    uint64_t seen;
    p->parent = p->first_child = p->next_sibling = PRISM_NO_NODE;
    p->name = AN_OUTSIDE_NAME;
    p->path_hash = path_hash(0, p->name);
    p->thread = t->stream;
    cpu_publish(p, t, &t->out);
    step_moments(&t->out, &seen, &mean, &m2, &smax);
    publish_steps(p, seen, mean, m2, smax);
    an_out_publish(t, p);
}

static void thread_tree(prism_analysis *a, athread *t, bool out)
{
    free(t->pub);
    t->out_pub = out;
    t->pub = calloc(t->n + 1, sizeof *t->pub);
    if (!t->pub) {
        t->out_pub = false;
        memset(&t->tree, 0, sizeof t->tree);
        return;
    }
    for (size_t i = 0; i < t->n; i++) {
        const tnode *nd = &t->nodes[i];
        prism_node *p = &t->pub[i];
        const prism_node *par = nd->parent == PRISM_NO_NODE ? NULL : &t->pub[nd->parent];
        p->parent = nd->parent;
        p->first_child = PRISM_NO_NODE;
        p->next_sibling = PRISM_NO_NODE;
        p->name = an_tree_name(a, nd->name);
        p->path_hash = path_hash(par ? par->path_hash : 0, p->name);
        p->depth = par ? par->depth + 1 : 0;    /* a parent precedes its children */
        p->thread = t->stream;
        ext_add(p, an_ext(t, nd));
        cpu_publish(p, t, nd);
        p->lead_steps += t->lead_pos && t->lead_node == i;
        publish(p, nd);
    }
    open_calls(a, t, t->pub, false);
    link_children(t->pub, t->n);
    for (size_t i = t->n; i-- > 0;)         /* inclusive GPU work */
        if (t->pub[i].parent != PRISM_NO_NODE) {
            t->pub[t->pub[i].parent].gpu_ns += t->pub[i].gpu_ns;
            t->pub[t->pub[i].parent].gpu_launches += t->pub[i].gpu_launches;
            t->pub[t->pub[i].parent].flops += t->pub[i].flops;
            t->pub[t->pub[i].parent].bytes += t->pub[i].bytes;
            cpu_inclusive(&t->pub[t->pub[i].parent], &t->pub[i]);
            t->pub[t->pub[i].parent].gpu_wait_ns += t->pub[i].gpu_wait_ns;
            t->pub[t->pub[i].parent].lead_steps += t->pub[i].lead_steps;
            t->pub[t->pub[i].parent].unrecorded += t->pub[i].unrecorded;
        }
    if (out)
        publish_out(t, &t->pub[t->n]);
    finish_tree(t->pub, t->n + out, &t->tree);
}

/* Combine Welford states (Chan et al.). */
static void combine(prism_node *m, double *m2, const tnode *nd)
{
    if (!nd->calls)
        return;
    uint64_t n = m->calls + nd->calls;
    double mean, nm2;
    moments(nd, &mean, &nm2);
    double d = mean - m->mean_ns;
    *m2 += nm2 + d * d * (double)m->calls * (double)nd->calls / (double)n;
    m->mean_ns += d * (double)nd->calls / (double)n;
    m->calls = n;
}

/*
 * The merge's lookup of a merged node by (parent, name id), for the
 * length of an_tree_merge: an index table whose keys are the merged
 * nodes' parents and the name ids kept beside them (4 + 8-16 bytes per
 * path, freed when the merge is done).  The outside node has no (parent,
 * name) pair: it is kept apart.
 */
typedef struct merge_ix {
    prism_analysis *a;
    uint32_t *name;             /* per merged node: its name id */
    size_t cap;
    pb_itab tab;
    uint32_t out;               /* the outside node; PRISM_NO_NODE: none yet */
    uint32_t parent, want;      /* the key sought */
} merge_ix;

static uint64_t merge_key(uint32_t parent, uint32_t name)
{
    return ((uint64_t)parent + 1) << 32 | name;
}

static bool merge_eq(const void *ctx, uint32_t i)
{
    const merge_ix *x = ctx;
    return x->name[i] == x->want && x->a->nodes[i].parent == x->parent;
}

static uint64_t merge_hash(const void *ctx, uint32_t i)
{
    const merge_ix *x = ctx;
    return merge_key(x->a->nodes[i].parent, x->name[i]);
}

/* The node of the all-threads tree by path hash (prism_analysis_find):
 * an index table over the merged nodes' own hashes; of two nodes with one
 * hash the later one. */
typedef struct hash_ix {
    const prism_analysis *a;
    uint64_t want;
} hash_ix;

static bool hash_eq(const void *ctx, uint32_t i)
{
    const hash_ix *x = ctx;
    return x->a->nodes[i].path_hash == x->want;
}

static uint64_t hash_of(const void *ctx, uint32_t i)
{
    return ((const hash_ix *)ctx)->a->nodes[i].path_hash;
}

uint32_t an_tree_find(const prism_analysis *a, uint64_t path_hash)
{
    hash_ix x = { a, path_hash };
    size_t slot;
    uint32_t i = pb_itab_find(&a->node_by_hash, path_hash, hash_eq, &x, &slot);
    return i == UINT32_MAX ? PRISM_NO_NODE : i;
}

/* A new merged node (PRISM_NO_NODE without memory), indexed by its hash. */
static uint32_t merged_new(prism_analysis *a, uint32_t parent, const char *sname)
{
    if (a->nnodes >= PRISM_NO_NODE ||
        !pb_vec_reserve((void **)&a->nodes, &a->ncap, a->nnodes + 1, sizeof *a->nodes))
        return PRISM_NO_NODE;
    prism_node *p = &a->nodes[a->nnodes];
    memset(p, 0, sizeof *p);
    p->parent = parent;
    p->first_child = p->next_sibling = PRISM_NO_NODE;
    p->name = sname;
    p->depth = parent == PRISM_NO_NODE ? 0 : a->nodes[parent].depth + 1;
    p->path_hash = path_hash(parent == PRISM_NO_NODE ? 0 : a->nodes[parent].path_hash, sname);
    p->min_ns = UINT64_MAX;
    hash_ix h = { a, p->path_hash };
    size_t slot;
    uint32_t i = (uint32_t)a->nnodes;
    if (pb_itab_find(&a->node_by_hash, p->path_hash, hash_eq, &h, &slot) != UINT32_MAX)
        pb_itab_replace(&a->node_by_hash, slot, i, hash_of, &h);
    else
        pb_itab_add(&a->node_by_hash, slot, i, p->path_hash, hash_of, &h);
    a->nnodes++;
    return i;                           /* linked to its parent by an_tree_merge */
}

static uint32_t merged_child(merge_ix *x, uint32_t parent, uint32_t name, const char *sname)
{
    uint64_t key = merge_key(parent, name);
    size_t slot, cap = x->tab.cap;
    x->parent = parent;
    x->want = name;
    uint32_t i = pb_itab_find(&x->tab, key, merge_eq, x, &slot);
    if (i != UINT32_MAX)
        return i;
    if (!pb_itab_reserve(&x->tab, x->tab.count + 1, merge_hash, x) ||
        !pb_vec_reserve((void **)&x->name, &x->cap, x->a->nnodes + 1, sizeof *x->name))
        return PRISM_NO_NODE;
    if (x->tab.cap != cap)
        pb_itab_find(&x->tab, key, merge_eq, x, &slot);    /* the table grew: its slot */
    i = merged_new(x->a, parent, sname);
    if (i == PRISM_NO_NODE)
        return PRISM_NO_NODE;
    x->name[i] = name;
    pb_itab_add(&x->tab, slot, i, key, merge_hash, x);     /* room reserved: no growth */
    return i;
}

static uint32_t merged_out(merge_ix *x)
{
    if (x->out == PRISM_NO_NODE)
        x->out = merged_new(x->a, PRISM_NO_NODE, AN_OUTSIDE_NAME);
    return x->out;
}

/* Which thread nodes make up each merged node (usually one), in thread
 * and node order: counted into the ends of their ranges, then placed from
 * the back, each range's end moving down to its start. */
static bool build_trefs(prism_analysis *a)
{
    size_t total = 0;
    for (size_t i = 0; i < a->nthreads; i++)
        total += a->threads[i]->n + a->threads[i]->out_pub;
    a->tref_off = calloc(a->nnodes + 1, sizeof *a->tref_off);
    a->tref = malloc((total ? total : 1) * sizeof *a->tref);
    if (!a->tref_off || !a->tref)
        return false;
    for (size_t i = 0; i < a->nthreads; i++)
        for (size_t j = 0; j < a->threads[i]->n + a->threads[i]->out_pub; j++)
            if (an_tnode(a->threads[i], j)->merged != PRISM_NO_NODE)
                a->tref_off[an_tnode(a->threads[i], j)->merged + 1]++;
    for (size_t m = 0; m < a->nnodes; m++)
        a->tref_off[m + 1] += a->tref_off[m];
    uint32_t placed = a->tref_off[a->nnodes];
    for (size_t i = a->nthreads; i-- > 0;)
        for (size_t j = a->threads[i]->n + a->threads[i]->out_pub; j-- > 0;) {
            uint32_t m = an_tnode(a->threads[i], j)->merged;
            if (m != PRISM_NO_NODE)
                a->tref[--a->tref_off[m + 1]] = (uint64_t)i << 32 | j;
        }
    /* now tref_off[m + 1] is range m's start: one place down */
    memmove(a->tref_off, a->tref_off + 1, a->nnodes * sizeof *a->tref_off);
    a->tref_off[a->nnodes] = placed;
    return true;
}

/* Per-step figures of every merged node.  A path that ran on one thread
 * (the usual case) takes that thread's; one that ran on several pools
 * their (thread, step) samples: the moments combine exactly (Chan et al.),
 * where per-step sums across threads would need every step kept. */
static void merge_steps(prism_analysis *a)
{
    if (!build_trefs(a))
        return;
    for (size_t m = 0; m < a->nnodes; m++) {
        uint64_t seen = 0;
        double mean = 0, m2 = 0, max = 0;
        for (uint32_t r = a->tref_off[m]; r < a->tref_off[m + 1]; r++) {
            const tnode *nd = an_tnode(a->threads[a->tref[r] >> 32], (uint32_t)a->tref[r]);
            uint64_t k;
            double mk, m2k, maxk;
            step_moments(nd, &k, &mk, &m2k, &maxk);
            if (!k)
                continue;
            uint64_t n = seen + k;
            double d = mk - mean;
            m2 += m2k + d * d * (double)seen * (double)k / (double)n;
            mean += d * (double)k / (double)n;
            seen = n;
            if (maxk > max)
                max = maxk;
        }
        publish_steps(&a->nodes[m], seen, mean, m2, max);
    }
}

/*
 * The training thread: the one the file says marks the steps (INFO
 * steps.thread); else the thread whose earliest leaf call of a step comes
 * right after the step begins (mean offset under 5 % of the step) in at
 * least half of the sampled steps, the earliest such; else none (the
 * rules then fall back on the busiest thread).
 */
static size_t training_thread(const prism_analysis *a)
{
    uint64_t idx;
    if (a->step_stream && pb_map_get(&a->thread_of, a->step_stream, &idx))
        return (size_t)idx;
    size_t best = SIZE_MAX;
    double best_off = 0.05;
    for (size_t i = 0; i < a->nthreads; i++) {
        const athread *t = a->threads[i];
        double sum = t->lead_off_sum;
        if (t->worker)
            continue;                   /* a worker process never trains */
        uint64_t n = t->lead_steps;
        if (t->lead_pos && t->lead_hi > t->lead_lo) {
            sum += (double)(t->lead_start - t->lead_lo) / (double)(t->lead_hi - t->lead_lo);
            n++;
        }
        if (!n || 2 * n < a->nsampled)
            continue;
        double off = sum / (double)n;
        if (off < best_off) {
            best_off = off;
            best = i;
        }
    }
    return best;
}

uint32_t an_tree_node_threads(const prism_analysis *a, uint32_t node)
{
    return a->tref_off && node < a->nnodes ? a->tref_off[node + 1] - a->tref_off[node] : 0;
}

/* By total, descending (pb_sort_stable keeps equal totals in path order). */
static int op_by_total(const void *x, const void *y, const void *ctx)
{
    const prism_op *p = x, *q = y;
    (void)ctx;
    return p->total_ns < q->total_ns ? 1 : p->total_ns > q->total_ns ? -1 : 0;
}

/* Ops by total, descending, equal totals in path order: a stable sort of
 * (total, op) pairs, then the ops moved into that order in place (32 bytes
 * an op of scratch where sorting the ops themselves copied them all). */
typedef struct op_rank {
    uint64_t total;
    uint32_t op;
} op_rank;

static int rank_by_total(const void *x, const void *y, const void *ctx)
{
    const op_rank *p = x, *q = y;
    (void)ctx;
    return p->total < q->total ? 1 : p->total > q->total ? -1 : 0;
}

static void sort_ops(prism_op *ops, size_t n)
{
    op_rank *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) {
        pb_sort_stable(ops, n, sizeof *ops, op_by_total, NULL);
        return;
    }
    for (size_t i = 0; i < n; i++)
        r[i] = (op_rank){ ops[i].total_ns, (uint32_t)i };
    pb_sort_stable(r, n, sizeof *r, rank_by_total, NULL);
    /* place k takes op r[k].op: follow each cycle once, marking places done */
    for (size_t k = 0; k < n; k++) {
        if (r[k].op == UINT32_MAX || r[k].op == k)
            continue;
        prism_op first = ops[k];
        for (size_t j = k;;) {
            size_t from = r[j].op;
            r[j].op = UINT32_MAX;
            if (from == k) {
                ops[j] = first;
                break;
            }
            ops[j] = ops[from];
            j = from;
        }
    }
    free(r);
}

/* build_ops's index of the ops by their name's hash, the hashes kept beside
 * the ops while building. */
typedef struct op_ix {
    const uint64_t *hash;
    uint64_t want;
} op_ix;

static bool op_eq(const void *ctx, uint32_t i)
{
    const op_ix *x = ctx;
    return x->hash[i] == x->want;
}

static uint64_t op_hash(const void *ctx, uint32_t i)
{
    return ((const op_ix *)ctx)->hash[i];
}

static void build_ops(prism_analysis *a)
{
    size_t cap = a->nnodes ? a->nnodes : 1;
    uint64_t *hash = malloc(cap * sizeof *hash);
    a->ops = hash ? calloc(cap, sizeof *a->ops) : NULL;
    if (!a->ops) {
        free(hash);
        return;
    }
    op_ix x = { hash, 0 };
    pb_itab idx = { 0 };
    for (size_t i = 0; i < a->nnodes; i++) {
        prism_node *p = &a->nodes[i];
        uint64_t h = XXH3_64bits(p->name, strlen(p->name));
        size_t slot;
        x.want = h;
        uint32_t v = pb_itab_find(&idx, h, op_eq, &x, &slot);
        prism_op *op;
        if (v != UINT32_MAX) {
            op = &a->ops[v];
        } else {
            hash[a->nops] = h;
            pb_itab_add(&idx, slot, (uint32_t)a->nops, h, op_hash, &x);
            op = &a->ops[a->nops++];
            op->name = p->name;
            op->node = (uint32_t)i;
        }
        /* recursion: count time once, at the outermost node of the name */
        bool nested = false;
        for (uint32_t q = p->parent; q != PRISM_NO_NODE; q = a->nodes[q].parent)
            if (!strcmp(a->nodes[q].name, p->name)) {
                nested = true;
                break;
            }
        if (!nested)
            op->total_ns = an_sat_add(op->total_ns, p->total_ns);
        op->self_ns = an_sat_add(op->self_ns, p->self_ns);
        op->calls += p->calls;
        if (p->total_ns > a->nodes[op->node].total_ns)
            op->node = (uint32_t)i;
    }
    pb_itab_free(&idx);
    free(hash);
    for (size_t i = 0; i < a->nops; i++)
        a->ops[i].share = a->tree.total_ns ? (double)a->ops[i].total_ns / (double)a->tree.total_ns : 0;
    sort_ops(a->ops, a->nops);
}

/* While merging, a merged node's std_ns holds the sum of squared
 * deviations of its calls (combine), made a standard deviation at the end. */
void an_tree_merge(prism_analysis *a)
{
    merge_ix x = { .a = a, .out = PRISM_NO_NODE };
    a->train = training_thread(a);
    for (size_t i = 0; i < a->nthreads; i++) {
        athread *t = a->threads[i];
        /* the step time outside its regions: on the training thread */
        thread_tree(a, t, i == a->train && a->nsampled && t->out.total);
        t->out.merged = PRISM_NO_NODE;
        for (size_t j = 0; j < t->n + t->out_pub; j++) {
            tnode outsnap, *nd = j < t->n ? &t->nodes[j] : &outsnap;
            uint32_t m;
            if (j < t->n) {
                uint32_t parent = nd->parent == PRISM_NO_NODE ? PRISM_NO_NODE
                                                              : t->nodes[nd->parent].merged;
                const char *name = t->pub ? t->pub[j].name : an_tree_name(a, nd->name);
                m = nd->merged = merged_child(&x, parent, nd->name, name);
            } else {
                /* its calls as published: the step being filled is one */
                const prism_node *o = &t->pub[j];
                outsnap = t->out;
                outsnap.calls = o->calls;
                outsnap.min = o->calls ? o->min_ns : UINT64_MAX;
                outsnap.max = o->max_ns;
                outsnap.shift = o->mean_ns, outsnap.s1 = 0;
                outsnap.s2 = o->calls > 1 ? o->std_ns * o->std_ns * (double)(o->calls - 1) : 0;
                m = t->out.merged = merged_out(&x);
                if (m != PRISM_NO_NODE)
                    a->nodes[m].flags |= PRISM_NODE_UNATTRIBUTED;
            }
            if (m == PRISM_NO_NODE)
                continue;
            prism_node *p = &a->nodes[m];
            combine(p, &p->std_ns, nd);
            p->total_ns = an_sat_add(p->total_ns, nd->total);
            p->self_ns = an_sat_add(p->self_ns, nd->self);
            ext_add(p, an_ext(t, nd));
            cpu_add_self(p, t, nd);
            if (nd->calls && nd->min < p->min_ns)
                p->min_ns = nd->min;
            if (nd->max > p->max_ns)
                p->max_ns = nd->max;
        }
    }
    for (size_t i = 0; i < a->nnodes; i++) {
        prism_node *p = &a->nodes[i];
        if (!p->calls)
            p->min_ns = 0;
        p->std_ns = p->calls > 1 ? sqrt(p->std_ns / (double)(p->calls - 1)) : 0;
    }
    free(x.name);
    pb_itab_free(&x.tab);
    for (size_t i = 0; a->nodes && i < a->nthreads; i++)
        open_calls(a, a->threads[i], a->nodes, true);
    link_children(a->nodes, a->nnodes);
    /* GPU work and work counters count for every region they were inside */
    for (size_t i = a->nnodes; i-- > 0;) {
        uint32_t par = a->nodes[i].parent;
        if (par != PRISM_NO_NODE) {
            a->nodes[par].gpu_ns += a->nodes[i].gpu_ns;
            a->nodes[par].gpu_launches += a->nodes[i].gpu_launches;
            a->nodes[par].flops += a->nodes[i].flops;
            a->nodes[par].bytes += a->nodes[i].bytes;
            cpu_inclusive(&a->nodes[par], &a->nodes[i]);
            a->nodes[par].gpu_wait_ns += a->nodes[i].gpu_wait_ns;
            a->nodes[par].lead_steps += a->nodes[i].lead_steps;
            a->nodes[par].unrecorded += a->nodes[i].unrecorded;
        }
    }
    finish_tree(a->nodes, a->nnodes, &a->tree);
    merge_steps(a);
    build_ops(a);
}
