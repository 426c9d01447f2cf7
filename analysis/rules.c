/*
 * rules.c - bottleneck rules over a refreshed analysis: the shared helpers,
 * the entry point and the rules about where time and memory go (the
 * pipeline rules live in rules_stall.c).  Public getters only.  Each rule
 * states what it found in the reference report's words ("'forward_pass':
 * 49.7% of total time"), with numbers as evidence, a specific fix and the
 * region it blames.
 *
 * Severity by share of time: HIGH > 30 %, MEDIUM 10-30 %, LOW < 10 %.
 *
 *   hot_operation   each op above threshold_pct of total time, wrappers
 *                   skipped (rules_is_wrapper), at most HOT_MAX; when only
 *                   wrappers are hot, the heaviest real op anyway.  An op
 *                   seen on loader threads only is LOW: it runs beside the
 *                   training loop (data_loading judges whether it stalls it).
 *   memory_leak     host / GPU leak fit: slope > leak_mb, r2 >= 0.6; HIGH
 *   dropped_events  dropped records or a damaged file, by the fraction lost:
 *                   LOW < 0.1 %, MEDIUM < 1 %, HIGH >= 1 %
 *   (rules_stall.c) cpu_gpu_sync, data_loading, gpu_idle, launch_bound,
 *                   memory_bound (copies; work counters below the ridge)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules.h"

#define HOT_MAX 16
#define WRAPPER_SELF 0.05       /* a wrapper's self time is below this share */
#define WRAPPER_HOLDS 0.9       /* ... and it holds this much of its parent  */
#define LEAK_R2 0.6

/* ---- helpers ---------------------------------------------------------- */

prism_severity rules_by_share(double s)
{
    return s > 0.30 ? PRISM_SEV_HIGH : s >= 0.10 ? PRISM_SEV_MEDIUM : PRISM_SEV_LOW;
}

/* b before c?  Severity, then share; a leak counts as share 1. */
static bool before(const prism_bottleneck *b, const prism_bottleneck *c)
{
    if (b->severity != c->severity)
        return b->severity > c->severity;
    double rb = b->type == PRISM_BN_MEMORY_LEAK ? 1.0 : b->share;
    double rc = c->type == PRISM_BN_MEMORY_LEAK ? 1.0 : c->share;
    return rb > rc;
}

static int cmp_bn(const void *x, const void *y)
{
    const prism_bottleneck *b = x, *c = y;
    if (before(b, c))
        return -1;
    if (before(c, b))
        return 1;
    return b->type < c->type ? -1 : b->type > c->type;
}

prism_bottleneck *rules_add(rules_ctx *c, prism_bottleneck_type type, prism_severity sev,
                            double share, uint32_t node)
{
    prism_bottleneck nb = { .type = type, .severity = sev, .share = share,
                            .node = PRISM_NO_NODE };
    prism_bottleneck *slot = NULL;
    if (c->n < c->max) {
        slot = &c->out[c->n++];
    } else {                    /* replace the least important it beats */
        for (size_t i = 0; i < c->n; i++)
            if (before(&nb, &c->out[i]) && (!slot || before(slot, &c->out[i])))
                slot = &c->out[i];
        if (!slot)
            return NULL;
    }
    *slot = nb;
    if (rules_node(c, node)) {
        slot->node = node;
        slot->path_hash = c->tree->nodes[node].path_hash;
    }
    return slot;
}

void rules_put(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

rules_dur rules_dur_of(double ns)
{
    rules_dur d;
    if (ns < 1e3)
        snprintf(d.s, sizeof d.s, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(d.s, sizeof d.s, "%.1f us", ns / 1e3);
    else if (ns < 1e7)
        snprintf(d.s, sizeof d.s, "%.2f ms", ns / 1e6);
    else if (ns < 1e11)
        snprintf(d.s, sizeof d.s, "%.1f ms", ns / 1e6);
    else
        snprintf(d.s, sizeof d.s, "%.1f s", ns / 1e9);
    return d;
}

bool rules_icontains(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; s && *s; s++)
        if (!strncasecmp(s, needle, n))
            return true;
    return false;
}

bool rules_sync_like(const char *name)
{
    static const char *const pat[] = { "sync", "synchronize", ".item", "wait_gpu", "cuda_sync" };
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++)
        if (rules_icontains(name, pat[i]))
            return true;
    return false;
}

static bool compute_like(const char *name)
{
    static const char *const pat[] = { "matmul", "gemm", "conv", "attention", "linear", "mlp" };
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++)
        if (rules_icontains(name, pat[i]))
            return true;
    return false;
}

bool rules_data_like(const char *name)
{
    return rules_icontains(name, "data") || rules_icontains(name, "load");
}

const char *rules_leaf(const char *name)
{
    if (!name)
        return "(unknown)";
    const char *slash = strrchr(name, '/');
    return slash && slash[1] ? slash + 1 : name;
}

const prism_node *rules_node(const rules_ctx *c, uint32_t i)
{
    return c->tree && i < c->tree->count ? &c->tree->nodes[i] : NULL;
}

uint32_t rules_heaviest_child(const rules_ctx *c, uint32_t i)
{
    const prism_node *n = rules_node(c, i);
    uint32_t best = PRISM_NO_NODE;
    for (uint32_t k = n ? n->first_child : PRISM_NO_NODE; rules_node(c, k);
         k = c->tree->nodes[k].next_sibling)
        if (best == PRISM_NO_NODE || c->tree->nodes[k].total_ns > c->tree->nodes[best].total_ns)
            best = k;
    return best;
}

/* Does root r of the all-threads tree hold (nearly) all of some thread's
 * time?  Per-thread trees hash paths the same way as the merged one. */
static bool root_holds_thread(const rules_ctx *c, const prism_node *r)
{
    for (size_t i = 0; i < c->nthreads; i++) {
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, NULL);
        for (uint32_t k = t ? t->first_root : PRISM_NO_NODE; t && k < t->count;
             k = t->nodes[k].next_sibling)
            if (t->nodes[k].path_hash == r->path_hash && t->total_ns &&
                (double)t->nodes[k].total_ns >= WRAPPER_HOLDS * (double)t->total_ns)
                return true;
    }
    return false;
}

/*
 * A region that only wraps others: it has children, under 5 % self time,
 * and either holds (nearly) everything around it (a "step" or "epoch": 90 %
 * of its parent, or of its thread) or passes (nearly) all of its time to one
 * child ("layer.2" around "matmul").  Phases that split their time among
 * children ("forward", "backward") are not wrappers.
 */
bool rules_is_wrapper(const rules_ctx *c, const prism_op *op)
{
    const prism_node *n = rules_node(c, op->node), *p;
    if (!n || n->first_child == PRISM_NO_NODE ||
        !((double)op->self_ns < WRAPPER_SELF * (double)op->total_ns))
        return false;
    const prism_node *ch = rules_node(c, rules_heaviest_child(c, op->node));
    if (ch && (double)ch->total_ns >= WRAPPER_HOLDS * (double)n->total_ns)
        return true;
    if ((p = rules_node(c, n->parent)))
        return (double)n->total_ns >= WRAPPER_HOLDS * (double)p->total_ns;
    const prism_node *r0 = rules_node(c, c->tree->first_root);
    return (r0 && r0->next_sibling == PRISM_NO_NODE) || root_holds_thread(c, n);
}

static bool loader_name(const char *name)
{
    return name && (rules_icontains(name, "load") || rules_icontains(name, "worker"));
}

/* Does the op run on loader threads only (with a training thread beside)? */
static bool loaders_only(const rules_ctx *c, const char *op)
{
    if (!c->loaders || c->loaders == c->nthreads || !op)
        return false;
    for (size_t i = 0; i < c->nthreads; i++) {
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, &name);
        for (size_t k = 0; t && !loader_name(name) && k < t->count; k++)
            if (t->nodes[k].name && !strcmp(t->nodes[k].name, op))
                return false;
    }
    return true;
}

/* ---- hot_operation ---------------------------------------------------- */

static bool in_input_pipeline(const rules_ctx *c, uint32_t node)
{
    for (const prism_node *n = rules_node(c, node); n; n = rules_node(c, n->parent))
        if (rules_data_like(n->name))
            return true;
    return false;
}

static void hot_advice(const rules_ctx *c, const prism_op *op, prism_bottleneck *b)
{
    const char *nm = rules_leaf(op->name);
    char *r = b->recommendation;
    size_t cap = sizeof b->recommendation;
    if (rules_icontains(nm, "forward") || rules_icontains(nm, "fwd"))
        rules_put(r, cap, "Use mixed precision (torch.autocast, bf16/fp16), fuse operators "
                          "or compile the model (torch.compile).");
    else if (rules_icontains(nm, "backward") || rules_icontains(nm, "bwd"))
        rules_put(r, cap, "Use mixed precision; gradient checkpointing saves memory at the "
                          "cost of recomputation, so drop it if memory allows; check "
                          "retain_graph is not set needlessly.");
    else if (rules_icontains(nm, "optim"))
        rules_put(r, cap, "Use a fused or foreach optimizer (e.g. AdamW(fused=True) or "
                          "foreach=True) and zero_grad(set_to_none=True).");
    else if (rules_icontains(nm, "loss"))
        rules_put(r, cap, "Compute the loss on the GPU in one expression; avoid Python-side "
                          "reductions, per-sample loops and .item() every step.");
    else if (rules_sync_like(nm))
        rules_put(r, cap, "The CPU waits for the GPU here: see cpu_gpu_sync (no .item()/.cpu() "
                          "in the loop, log every N steps).");
    else if (in_input_pipeline(c, op->node))
        rules_put(r, cap, "Input pipeline: see the data_loading bottleneck (DataLoader "
                          "workers, pin_memory, prefetch).");
    else if (compute_like(nm))
        rules_put(r, cap, "Compute-bound: use mixed precision or TF32, larger batches and "
                          "fused kernels (e.g. scaled_dot_product_attention, torch.compile).");
    const prism_node *n = rules_node(c, op->node);
    const prism_node *ch = rules_node(c, rules_heaviest_child(c, op->node));
    if (ch && n->total_ns)
        rules_put(r, cap, "%sDrill into it: its heaviest child is '%s' (%.1f%% of it).",
                  *r ? " " : "", rules_leaf(ch->name),
                  100.0 * (double)ch->total_ns / (double)n->total_ns);
    else if (!*r)
        rules_put(r, cap, "It has no instrumented children: add regions inside '%s' or "
                          "sample it (perf, py-spy) to see where the time goes.", nm);
}

static void hot_emit(rules_ctx *c, const prism_op *op)
{
    bool beside = loaders_only(c, op->name);
    prism_bottleneck *b = rules_add(c, PRISM_BN_HOT_OPERATION,
                                    beside ? PRISM_SEV_LOW : rules_by_share(op->share),
                                    op->share, op->node);
    if (!b)
        return;
    snprintf(b->description, sizeof b->description, "'%s': %.1f%% of total time",
             rules_leaf(op->name), 100.0 * op->share);
    const prism_node *n = rules_node(c, op->node);
    rules_put(b->evidence, sizeof b->evidence, "%llu calls, %s total, self %.1f%%",
              (unsigned long long)op->calls, DUR(op->total_ns),
              op->total_ns ? 100.0 * (double)op->self_ns / (double)op->total_ns : 0.0);
    if (n) {
        rules_put(b->evidence, sizeof b->evidence, ", mean %s/call (sd %s)", DUR(n->mean_ns),
                  DUR(n->std_ns));
        if (n->steps_seen)
            rules_put(b->evidence, sizeof b->evidence, ", %s/step over %llu steps",
                      DUR(n->step_mean_ns), (unsigned long long)n->steps_seen);
        if (n->gpu_launches)
            rules_put(b->evidence, sizeof b->evidence, ", %llu GPU launches (%s GPU)",
                      (unsigned long long)n->gpu_launches, DUR(n->gpu_ns));
    }
    if (beside)
        rules_put(b->evidence, sizeof b->evidence, "; on loader threads only, beside the "
                  "training thread '%s'", c->train_name ? c->train_name : "?");
    hot_advice(c, op, b);
}

static void rule_hot(rules_ctx *c, double threshold_pct)
{
    size_t fallback = SIZE_MAX, emitted = 0;
    bool any_hot = false;
    for (size_t i = 0; i < c->nops; i++) {
        const prism_op *op = &c->ops[i];
        bool wrapper = rules_is_wrapper(c, op);
        if (!wrapper && fallback == SIZE_MAX && op->total_ns)
            fallback = i;
        if (!(100.0 * op->share > threshold_pct))
            continue;
        any_hot = true;
        if (wrapper || emitted >= HOT_MAX)
            continue;
        hot_emit(c, op);
        emitted++;
    }
    /* Only wrappers were hot ("step" holds everything): name the heaviest
     * real operation anyway, at its own severity. */
    if (any_hot && !emitted && fallback != SIZE_MAX)
        hot_emit(c, &c->ops[fallback]);
}

/* ---- memory_leak ------------------------------------------------------ */

static void rule_leak(rules_ctx *c, const prism_leak *l, double leak_mb, bool gpu)
{
    if (!l->have_fit || !(l->slope_mb_per_step > leak_mb) || l->r2 < LEAK_R2)
        return;
    prism_bottleneck *b = rules_add(c, PRISM_BN_MEMORY_LEAK, PRISM_SEV_HIGH,
                                    l->slope_mb_per_step, PRISM_NO_NODE);
    if (!b)
        return;
    b->path_hash = gpu ? RULES_HASH_GPU_MEMORY : RULES_HASH_HOST_MEMORY;
    snprintf(b->description, sizeof b->description, "Memory leak: %.1f MB/step (%s)",
             l->slope_mb_per_step, gpu ? "GPU memory" : "host RSS");
    snprintf(b->evidence, sizeof b->evidence,
             "slope %.2f MB/step, r2 %.2f, fitted %.1f -> %.1f MB over %zu step samples "
             "(threshold %.1f MB/step)", l->slope_mb_per_step, l->r2, l->start_mb, l->end_mb,
             l->points, leak_mb);
    snprintf(b->recommendation, sizeof b->recommendation,
             "Memory grows every step: don't keep tensors with their graphs in lists "
             "(append loss.item() or loss.detach()), check closures capturing tensors, "
             "close figures (plt.close(fig)) and bound caches and history lists.%s",
             gpu ? " del large tensors when done." : "");
}

/* ---- dropped_events --------------------------------------------------- */

static prism_severity by_loss(double f)
{
    return f < 0.001 ? PRISM_SEV_LOW : f < 0.01 ? PRISM_SEV_MEDIUM : PRISM_SEV_HIGH;
}

static void rule_dropped(rules_ctx *c, const prism_gpu_stats *g)
{
    const prism_reader_stats *rs = prism_analysis_reader_stats(c->a);
    uint64_t cpu = prism_analysis_dropped(c->a), gpu = g ? g->dropped : 0;
    uint64_t events = prism_analysis_events(c->a);
    uint64_t bad = rs ? rs->damaged + rs->malformed + rs->seq_gaps : 0;
    if (!cpu && !gpu && !bad)
        return;
    double drop = (double)(cpu + gpu) / (double)(events + cpu + gpu);
    double lost = bad ? (double)bad / (double)(rs->chunks + bad) : 0.0;
    double share = drop > lost ? drop : lost;
    prism_bottleneck *b = rules_add(c, PRISM_BN_DROPPED_EVENTS, by_loss(share), share,
                                    PRISM_NO_NODE);
    if (!b)
        return;
    if (cpu + gpu)
        rules_put(b->description, sizeof b->description,
                  "Dropped events: %llu (%.2f%% of events)", (unsigned long long)(cpu + gpu),
                  100.0 * drop);
    if (bad)
        rules_put(b->description, sizeof b->description, "%samaged file: %llu bytes skipped",
                  cpu + gpu ? "; d" : "D", (unsigned long long)rs->skipped_bytes);
    rules_put(b->evidence, sizeof b->evidence, "dropped %llu CPU, %llu GPU of %llu events",
              (unsigned long long)cpu, (unsigned long long)gpu, (unsigned long long)events);
    if (bad)
        rules_put(b->evidence, sizeof b->evidence,
                  "; %llu damaged runs (%llu bad checksums), %llu malformed chunks, %llu "
                  "sequence gaps, %llu bytes skipped", (unsigned long long)rs->damaged,
                  (unsigned long long)rs->bad_checksum, (unsigned long long)rs->malformed,
                  (unsigned long long)rs->seq_gaps, (unsigned long long)rs->skipped_bytes);
    if (cpu + gpu)
        rules_put(b->recommendation, sizeof b->recommendation,
                  "Buffers overflowed: raise PRISM_BUFFER_MB, set PRISM_POLICY=wait, or lower "
                  "PRISM_SAMPLE_RATE. ");
    if (bad)
        rules_put(b->recommendation, sizeof b->recommendation,
                  "The file is damaged: %llu bytes were skipped and the figures cover the "
                  "readable chunks only; check the disk and whether the run was killed "
                  "mid-write.", (unsigned long long)rs->skipped_bytes);
}

/* ---- entry ------------------------------------------------------------ */

static void find_training_thread(rules_ctx *c)
{
    const prism_tree *any = NULL;
    const char *any_name = NULL;
    c->nthreads = prism_analysis_thread_count(c->a);
    for (size_t i = 0; i < c->nthreads; i++) {
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, &name);
        if (!t)
            continue;
        if (!any || t->total_ns > any->total_ns) {
            any = t;
            any_name = name;
        }
        if (loader_name(name)) {
            c->loaders++;
            c->loader_ns += t->total_ns;
        } else if (!c->train || t->total_ns > c->train->total_ns) {
            c->train = t;
            c->train_name = name;
        }
    }
    if (!c->train) {            /* every thread looks like a loader */
        c->train = any;
        c->train_name = any_name;
    }
}

size_t rules_run(const prism_analysis *a, double threshold_pct, double leak_mb,
                 prism_bottleneck *out, size_t max)
{
    if (!a || !out || !max)
        return 0;
    rules_ctx c = { .a = a, .tree = prism_analysis_tree(a), .out = out, .max = max };
    c.ops = prism_analysis_ops(a, &c.nops);
    if (!c.ops)
        c.nops = 0;
    find_training_thread(&c);
    if (threshold_pct < 0)
        threshold_pct = 10.0;
    if (leak_mb < 0)
        leak_mb = 10.0;
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    const prism_memory_stats *m = prism_analysis_memory(a);

    rule_hot(&c, threshold_pct);
    if (m) {
        rule_leak(&c, &m->host, leak_mb, false);
        if (m->have_gpu)
            rule_leak(&c, &m->gpu, leak_mb, true);
    }
    rules_sync(&c, g);
    rules_data(&c);
    rules_gpu_idle(&c, g);
    rules_launch(&c, g);
    rules_memory_bound(&c, g);
    rules_intensity(&c);
    rule_dropped(&c, g);

    qsort(out, c.n, sizeof *out, cmp_bn);
    return c.n;
}
