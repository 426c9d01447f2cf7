/*
 * rules.c - bottleneck rules over a refreshed analysis.  Public getters
 * only: each rule reads the tree, ops, steps, memory or GPU aggregates and
 * states what it found in the reference report's words ("'forward_pass':
 * 49.7% of total time"), with numbers as evidence, a specific fix and the
 * region it blames.
 *
 * Severity by share of time: HIGH > 30 %, MEDIUM 10-30 %, LOW < 10 %.
 *
 *   hot_operation   an op above threshold_pct of total time, pure wrappers
 *                   (children, self < 5 %) skipped; at most HOT_MAX
 *   memory_leak     host / GPU leak fit: slope > leak_mb, r2 >= 0.6; HIGH
 *   cpu_gpu_sync    GPU sync time > 10 % of GPU work (kernels, copies,
 *                   memsets); without GPU sync records, sync-named regions
 *                   above 10 % of total time
 *   data_loading    data/load regions of the training thread > 10 % of the
 *                   sampled step time
 *   gpu_idle        idle share of the GPU span > 30 % (MEDIUM), > 50 % (HIGH)
 *   launch_bound    >= 1000 kernels, > 50 % of them < 10 us (HIGH > 80 %)
 *   memory_bound    copies > 20 % of GPU work time (transfer-bound)
 *   dropped_events  dropped records or a damaged file: by lost fraction,
 *                   LOW < 0.1 %, MEDIUM < 1 %, HIGH >= 1 %
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules.h"

#define HOT_MAX 16
#define SYNC_REGIONS_MAX 4
#define WRAPPER_SELF 0.05
#define SYNC_SHARE 0.10
#define DATA_SHARE 0.10
#define IDLE_MEDIUM 0.30
#define IDLE_HIGH 0.50
#define LAUNCH_MIN 1000
#define SMALL_MEDIUM 0.5
#define SMALL_HIGH 0.8
#define COPY_SHARE 0.20
#define LEAK_R2 0.6

typedef struct ctx {
    const prism_analysis *a;
    const prism_tree *tree;
    const prism_op *ops;
    size_t nops;
    prism_bottleneck *out;
    size_t n, max;
} ctx;

/* ---- helpers ---------------------------------------------------------- */

static prism_severity by_share(double s)
{
    return s > 0.30 ? PRISM_SEV_HIGH : s >= 0.10 ? PRISM_SEV_MEDIUM : PRISM_SEV_LOW;
}

static double rank_of(const prism_bottleneck *b)
{
    return b->type == PRISM_BN_MEMORY_LEAK ? 1.0 : b->share;
}

/* b before c? */
static int before(const prism_bottleneck *b, const prism_bottleneck *c)
{
    if (b->severity != c->severity)
        return b->severity > c->severity;
    return rank_of(b) > rank_of(c);
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

/* A zeroed slot for a new bottleneck, or NULL when it would not make the
 * cut (out[] full of more important ones). */
static prism_bottleneck *add(ctx *c, prism_bottleneck_type type, prism_severity sev,
                             double share, uint32_t node)
{
    prism_bottleneck nb = { .type = type, .severity = sev, .share = share,
                            .node = PRISM_NO_NODE };
    prism_bottleneck *slot = NULL;
    if (c->n < c->max) {
        slot = &c->out[c->n++];
    } else {
        for (size_t i = 0; i < c->n; i++)
            if (before(&nb, &c->out[i]) && (!slot || before(slot, &c->out[i])))
                slot = &c->out[i];
        if (!slot)
            return NULL;
    }
    *slot = nb;
    if (c->tree && node < c->tree->count) {
        slot->node = node;
        slot->path_hash = c->tree->nodes[node].path_hash;
    }
    return slot;
}

__attribute__((format(printf, 3, 4)))
static void put(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* A duration in words: "812 ns", "45.2 us", "6234.1 ms", "83.2 s". */
typedef struct dur { char s[24]; } dur;

static dur D(double ns)
{
    dur d;
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

static bool icontains(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; s && *s; s++)
        if (!strncasecmp(s, needle, n))
            return true;
    return false;
}

static const char *leaf(const char *name)
{
    if (!name)
        return "(unknown)";
    const char *slash = strrchr(name, '/');
    return slash && slash[1] ? slash + 1 : name;
}

static const prism_node *node_at(const ctx *c, uint32_t i)
{
    return c->tree && i < c->tree->count ? &c->tree->nodes[i] : NULL;
}

/* The child of node i with the largest total, or PRISM_NO_NODE. */
static uint32_t heaviest_child(const ctx *c, uint32_t i)
{
    const prism_node *n = node_at(c, i);
    uint32_t best = PRISM_NO_NODE;
    for (uint32_t k = n ? n->first_child : PRISM_NO_NODE; node_at(c, k);
         k = c->tree->nodes[k].next_sibling)
        if (best == PRISM_NO_NODE || c->tree->nodes[k].total_ns > c->tree->nodes[best].total_ns)
            best = k;
    return best;
}

/* A region that only wraps others: it has children and under 5 % self. */
static bool is_wrapper(const ctx *c, const prism_op *op)
{
    const prism_node *n = node_at(c, op->node);
    return n && n->first_child != PRISM_NO_NODE &&
           (double)op->self_ns < WRAPPER_SELF * (double)op->total_ns;
}

static bool sync_like(const char *name)
{
    static const char *const pat[] = { "sync", "synchronize", ".item", "wait_gpu", "cuda_sync" };
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++)
        if (icontains(name, pat[i]))
            return true;
    return false;
}

static bool data_like(const char *name)
{
    return icontains(name, "data") || icontains(name, "load");
}

/* ---- hot_operation ---------------------------------------------------- */

static void hot_advice(const ctx *c, const prism_op *op, prism_bottleneck *b)
{
    const char *nm = leaf(op->name);
    char *r = b->recommendation;
    size_t cap = sizeof b->recommendation;
    if (icontains(nm, "forward") || icontains(nm, "fwd"))
        put(r, cap, "Use mixed precision (torch.autocast, bf16/fp16), fuse operators "
                    "or compile the model (torch.compile).");
    else if (icontains(nm, "backward") || icontains(nm, "bwd"))
        put(r, cap, "Use mixed precision; gradient checkpointing saves memory at the cost of "
                    "recomputation, so drop it if memory allows; check retain_graph is not "
                    "set needlessly.");
    else if (icontains(nm, "optim"))
        put(r, cap, "Use a fused or foreach optimizer (e.g. AdamW(fused=True) or foreach=True) "
                    "and zero_grad(set_to_none=True).");
    else if (icontains(nm, "loss"))
        put(r, cap, "Compute the loss on the GPU in one expression; avoid Python-side "
                    "reductions, per-sample loops and .item() every step.");
    else if (data_like(nm))
        put(r, cap, "Input pipeline: see the data_loading bottleneck (DataLoader workers, "
                    "pin_memory, prefetch).");
    uint32_t k = heaviest_child(c, op->node);
    const prism_node *n = node_at(c, op->node), *ch = node_at(c, k);
    if (ch && n && n->total_ns) {
        put(r, cap, "%sits heaviest child is '%s' (%.1f%% of it).", *r ? " Drill into it: " :
            "Drill into it: ", leaf(ch->name), 100.0 * (double)ch->total_ns / (double)n->total_ns);
    } else if (!*r) {
        put(r, cap, "It has no instrumented children: add regions inside '%s' or sample it "
                    "(perf, py-spy) to see where the time goes.", nm);
    }
}

static void hot_emit(ctx *c, const prism_op *op)
{
    prism_bottleneck *b = add(c, PRISM_BN_HOT_OPERATION, by_share(op->share), op->share, op->node);
    if (!b)
        return;
    snprintf(b->description, sizeof b->description, "'%s': %.1f%% of total time",
             leaf(op->name), 100.0 * op->share);
    const prism_node *n = node_at(c, op->node);
    put(b->evidence, sizeof b->evidence, "%llu calls, %s total, self %.1f%%",
        (unsigned long long)op->calls, D((double)op->total_ns).s,
        op->total_ns ? 100.0 * (double)op->self_ns / (double)op->total_ns : 0.0);
    if (n) {
        put(b->evidence, sizeof b->evidence, ", mean %s/call (sd %s)", D(n->mean_ns).s,
            D(n->std_ns).s);
        if (n->steps_seen)
            put(b->evidence, sizeof b->evidence, ", %s/step over %llu steps",
                D(n->step_mean_ns).s, (unsigned long long)n->steps_seen);
        if (n->gpu_launches)
            put(b->evidence, sizeof b->evidence, ", %llu GPU launches (%s GPU)",
                (unsigned long long)n->gpu_launches, D((double)n->gpu_ns).s);
    }
    hot_advice(c, op, b);
}

static void rule_hot(ctx *c, double threshold_pct)
{
    size_t fallback = SIZE_MAX, emitted = 0;
    bool any_hot = false;
    for (size_t i = 0; i < c->nops; i++) {
        const prism_op *op = &c->ops[i];
        bool wrapper = is_wrapper(c, op);
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

static void leak_emit(ctx *c, const prism_leak *l, double leak_mb, bool gpu)
{
    if (!l->have_fit || !(l->slope_mb_per_step > leak_mb) || l->r2 < LEAK_R2)
        return;
    prism_bottleneck *b = add(c, PRISM_BN_MEMORY_LEAK, PRISM_SEV_HIGH, l->slope_mb_per_step,
                              PRISM_NO_NODE);
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

/* ---- cpu_gpu_sync ----------------------------------------------------- */

static const char sync_advice[] =
    "Avoid .item(), .cpu(), .numpy() and printing tensors inside the loop: keep metrics on "
    "the GPU (accumulate detached tensors), log every N steps, and synchronize only where a "
    "result is really needed.";

static void rule_sync(ctx *c, const prism_gpu_stats *g)
{
    const prism_op *region = NULL;           /* heaviest sync-like region */
    for (size_t i = 0; i < c->nops && !region; i++)
        if (sync_like(leaf(c->ops[i].name)))
            region = &c->ops[i];

    if (g && g->present && g->sync_ns > 0) {
        uint64_t work = g->kernel_ns + g->copy_ns + g->memset_ns;
        double share = work ? (double)g->sync_ns / (double)work : 1.0;
        if (!(share > SYNC_SHARE))
            return;
        prism_bottleneck *b = add(c, PRISM_BN_CPU_GPU_SYNC, by_share(share), share,
                                  region ? region->node : PRISM_NO_NODE);
        if (!b)
            return;
        snprintf(b->description, sizeof b->description, "CPU-GPU sync: %.1f%% of GPU time",
                 100.0 * share);
        put(b->evidence, sizeof b->evidence,
            "sync %s vs GPU work %s (kernels %s, copies %s, memsets %s)",
            D((double)g->sync_ns).s, D((double)work).s, D((double)g->kernel_ns).s,
            D((double)g->copy_ns).s, D((double)g->memset_ns).s);
        if (region)
            put(b->evidence, sizeof b->evidence, "; region '%s' %.1f%% of total time",
                leaf(region->name), 100.0 * region->share);
        snprintf(b->recommendation, sizeof b->recommendation, "%s", sync_advice);
        return;
    }
    size_t found = 0;
    for (size_t i = 0; i < c->nops && found < SYNC_REGIONS_MAX; i++) {
        const prism_op *op = &c->ops[i];
        if (!sync_like(leaf(op->name)) || !(op->share > SYNC_SHARE))
            continue;
        found++;
        prism_bottleneck *b = add(c, PRISM_BN_CPU_GPU_SYNC, by_share(op->share), op->share,
                                  op->node);
        if (!b)
            continue;
        snprintf(b->description, sizeof b->description,
                 "CPU-GPU sync: '%s': %.1f%% of total time", leaf(op->name), 100.0 * op->share);
        const prism_node *n = node_at(c, op->node);
        put(b->evidence, sizeof b->evidence, "%llu calls, %s total, mean %s/call",
            (unsigned long long)op->calls, D((double)op->total_ns).s,
            D(n ? n->mean_ns : op->calls ? (double)op->total_ns / (double)op->calls : 0).s);
        if (n && n->steps_seen)
            put(b->evidence, sizeof b->evidence, ", %s/step over %llu steps",
                D(n->step_mean_ns).s, (unsigned long long)n->steps_seen);
        put(b->evidence, sizeof b->evidence, "; no GPU sync records: judged by region name");
        snprintf(b->recommendation, sizeof b->recommendation, "%s", sync_advice);
    }
}

/* ---- data_loading ----------------------------------------------------- */

static bool loader_thread(const char *name)
{
    return name && (icontains(name, "load") || icontains(name, "worker"));
}

static void rule_data(ctx *c)
{
    const prism_analysis *a = c->a;
    size_t nth = prism_analysis_thread_count(a), loaders = 0;
    uint64_t loader_busy = 0;
    const prism_tree *main_tree = NULL, *any_tree = NULL;
    const char *main_name = NULL;
    for (size_t i = 0; i < nth; i++) {
        uint32_t stream = 0;
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(a, i, &stream, &name);
        if (!t)
            continue;
        if (!any_tree || t->total_ns > any_tree->total_ns)
            any_tree = t;
        if (loader_thread(name)) {
            loaders++;
            loader_busy += t->total_ns;
        } else if (!main_tree || t->total_ns > main_tree->total_ns) {
            main_tree = t;
            main_name = name;
        }
    }
    if (!main_tree)             /* every thread looks like a loader */
        main_tree = any_tree;
    if (!main_tree || !main_tree->count)
        return;

    /* data/load regions at the shallowest depth where any appears */
    uint32_t depth = UINT32_MAX, heaviest = PRISM_NO_NODE;
    for (size_t i = 0; i < main_tree->count; i++)
        if (data_like(main_tree->nodes[i].name) && main_tree->nodes[i].depth < depth)
            depth = main_tree->nodes[i].depth;
    if (depth == UINT32_MAX)
        return;
    uint64_t data_ns = 0, calls = 0;
    for (size_t i = 0; i < main_tree->count; i++) {
        const prism_node *n = &main_tree->nodes[i];
        if (n->depth != depth || !data_like(n->name))
            continue;
        data_ns += n->total_ns;
        calls += n->calls;
        if (heaviest == PRISM_NO_NODE || n->total_ns > main_tree->nodes[heaviest].total_ns)
            heaviest = (uint32_t)i;
    }

    /* regions are recorded in sampled steps only: divide by their time */
    const prism_step_stats *st = prism_analysis_steps(a);
    uint64_t step_ns = 0, nsteps = 0;
    for (size_t i = 0; st && i < st->nseries; i++)
        if ((st->series[i].flags & PRISM_STEP_SAMPLED) && st->series[i].end > st->series[i].start) {
            step_ns += st->series[i].end - st->series[i].start;
            nsteps++;
        }
    if (!step_ns && st && st->total_ns) {
        step_ns = st->total_ns;
        nsteps = st->count;
    }
    double denom = step_ns ? (double)step_ns : (double)main_tree->total_ns;
    double share = denom > 0 ? (double)data_ns / denom : 0.0;
    if (share > 1.0)
        share = 1.0;
    if (!(share > DATA_SHARE))
        return;

    const prism_node *h = &main_tree->nodes[heaviest];
    prism_bottleneck *b = add(c, PRISM_BN_DATA_LOADING, by_share(share), share,
                              prism_analysis_find(a, h->path_hash));
    if (!b)
        return;
    snprintf(b->description, sizeof b->description, "Data loading: '%s': %.1f%% of %s",
             leaf(h->name), 100.0 * share, step_ns ? "step time" : "total time");
    put(b->evidence, sizeof b->evidence, "%s in data regions (%llu calls) on thread '%s'",
        D((double)data_ns).s, (unsigned long long)calls, main_name ? main_name : "?");
    if (nsteps)
        put(b->evidence, sizeof b->evidence, ", %s/step over %llu steps",
            D((double)data_ns / (double)nsteps).s, (unsigned long long)nsteps);
    uint64_t span = prism_analysis_span_ns(a);
    if (loaders && span)
        put(b->evidence, sizeof b->evidence, "; %zu loader threads, busy %.0f%%", loaders,
            100.0 * (double)loader_busy / ((double)loaders * (double)span));
    else
        put(b->evidence, sizeof b->evidence, "; no loader threads: loading on the main thread");
    snprintf(b->recommendation, sizeof b->recommendation,
             "%s pin_memory=True, prefetch_factor and persistent_workers=True; move "
             "decoding/augmentation off the training thread or onto the GPU.",
             loaders ? "The main thread still waits for batches: add DataLoader workers "
                       "(num_workers), use" :
                       "Load in parallel: DataLoader(num_workers>0), with");
}

/* ---- GPU rules -------------------------------------------------------- */

static bool gpu_attributed(const ctx *c)
{
    for (size_t i = 0; c->tree && i < c->tree->count; i++)
        if (c->tree->nodes[i].gpu_ns || c->tree->nodes[i].gpu_launches)
            return true;
    return false;
}

static void rule_gpu_idle(ctx *c, const prism_gpu_stats *g)
{
    if (!g || !g->present || !g->span_ns || !(g->idle_share > IDLE_MEDIUM))
        return;
    /* the heaviest real CPU region that launches nothing */
    const prism_op *cpu = NULL;
    bool attributed = gpu_attributed(c);
    for (size_t i = 0; i < c->nops && !cpu && attributed; i++) {
        const prism_node *n = node_at(c, c->ops[i].node);
        if (n && !n->gpu_launches && !n->gpu_ns && !is_wrapper(c, &c->ops[i]))
            cpu = &c->ops[i];
    }
    prism_bottleneck *b = add(c, PRISM_BN_GPU_IDLE,
                              g->idle_share > IDLE_HIGH ? PRISM_SEV_HIGH : PRISM_SEV_MEDIUM,
                              g->idle_share, cpu ? cpu->node : PRISM_NO_NODE);
    if (!b)
        return;
    snprintf(b->description, sizeof b->description, "GPU idle: %.1f%% of the GPU time span",
             100.0 * g->idle_share);
    put(b->evidence, sizeof b->evidence, "busy %s of %s span; %llu kernels (%s), copies %s",
        D((double)g->busy_ns).s, D((double)g->span_ns).s, (unsigned long long)g->launches,
        D((double)g->kernel_ns).s, D((double)g->copy_ns).s);
    if (cpu)
        put(b->evidence, sizeof b->evidence, "; '%s' (%.1f%% of time) launches no GPU work",
            leaf(cpu->name), 100.0 * cpu->share);
    snprintf(b->recommendation, sizeof b->recommendation,
             "Overlap transfers with compute (non_blocking copies from pinned memory), use "
             "bigger batches or CUDA graphs, and look at the CPU regions between kernels%s%s%s.",
             cpu ? " (start with '" : "", cpu ? leaf(cpu->name) : "", cpu ? "')" : "");
}

static void rule_launch(ctx *c, const prism_gpu_stats *g)
{
    if (!g || !g->present || g->launches < LAUNCH_MIN)
        return;
    double small = (double)g->small_kernels / (double)g->launches;
    if (!(small > SMALL_MEDIUM))
        return;
    /* blame the region that issues the most launches itself */
    uint32_t best = PRISM_NO_NODE;
    uint64_t best_self = 0;
    for (size_t i = 0; c->tree && i < c->tree->count; i++) {
        const prism_node *n = &c->tree->nodes[i];
        uint64_t in_children = 0;
        for (uint32_t k = n->first_child; node_at(c, k); k = c->tree->nodes[k].next_sibling)
            in_children += c->tree->nodes[k].gpu_launches;
        uint64_t self = n->gpu_launches > in_children ? n->gpu_launches - in_children : 0;
        if (self > best_self) {
            best_self = self;
            best = (uint32_t)i;
        }
    }
    prism_bottleneck *b = add(c, PRISM_BN_LAUNCH_BOUND,
                              small > SMALL_HIGH ? PRISM_SEV_HIGH : PRISM_SEV_MEDIUM, small, best);
    if (!b)
        return;
    snprintf(b->description, sizeof b->description,
             "Launch-bound: %.1f%% of %llu kernels shorter than 10 us", 100.0 * small,
             (unsigned long long)g->launches);
    put(b->evidence, sizeof b->evidence, "%llu small of %llu kernels, mean kernel %s",
        (unsigned long long)g->small_kernels, (unsigned long long)g->launches,
        D((double)g->kernel_ns / (double)g->launches).s);
    if (g->nkernels && g->kernels)
        put(b->evidence, sizeof b->evidence, "; top kernel '%.60s' x%llu",
            g->kernels[0].name ? g->kernels[0].name : "?",
            (unsigned long long)g->kernels[0].count);
    if (best != PRISM_NO_NODE)
        put(b->evidence, sizeof b->evidence, "; '%s' issues %llu launches",
            leaf(c->tree->nodes[best].name), (unsigned long long)best_self);
    snprintf(b->recommendation, sizeof b->recommendation,
             "Capture the step with CUDA graphs or torch.compile(mode=\"reduce-overhead\"), "
             "fuse elementwise ops, and use larger batches so each launch does more work.");
}

/*
 * memory_bound, from what the GPU records hold: without FLOP counts the
 * compute intensity of kernels is unknown, but host<->device copies are
 * pure data movement.  When copies take over 20 % of the GPU's work time
 * (kernels + copies + memsets) the step is bound by moving memory, not by
 * computing; severity by that share.
 */
static void rule_memory_bound(ctx *c, const prism_gpu_stats *g)
{
    if (!g || !g->present)
        return;
    uint64_t work = g->kernel_ns + g->copy_ns + g->memset_ns;
    double share = work ? (double)g->copy_ns / (double)work : 0.0;
    if (!(share > COPY_SHARE))
        return;
    uint64_t bytes = 0, pageable = 0;
    for (size_t i = 0; g->copies && i < g->ncopies; i++) {
        bytes += g->copies[i].bytes;
        if (g->copies[i].src_kind == PRISM_MEM_PAGEABLE)
            pageable += g->copies[i].count;
    }
    prism_bottleneck *b = add(c, PRISM_BN_MEMORY_BOUND, by_share(share), share, PRISM_NO_NODE);
    if (!b)
        return;
    snprintf(b->description, sizeof b->description,
             "Memory-bound: copies take %.1f%% of GPU time", 100.0 * share);
    put(b->evidence, sizeof b->evidence, "copies %s (%.1f MB, %.2f GB/s) vs kernels %s",
        D((double)g->copy_ns).s, (double)bytes / 1048576.0,
        g->copy_ns ? (double)bytes / (double)g->copy_ns : 0.0, D((double)g->kernel_ns).s);
    if (pageable)
        put(b->evidence, sizeof b->evidence, "; %llu copies from pageable memory",
            (unsigned long long)pageable);
    snprintf(b->recommendation, sizeof b->recommendation,
             "Move less data: keep tensors resident on the GPU, copy from pinned memory "
             "(pin_memory=True) with non_blocking=True, avoid .cpu()/.numpy() round trips, "
             "batch small copies and use in-place or fused ops.");
}

/* ---- dropped_events --------------------------------------------------- */

static prism_severity by_loss(double f)
{
    return f < 0.001 ? PRISM_SEV_LOW : f < 0.01 ? PRISM_SEV_MEDIUM : PRISM_SEV_HIGH;
}

static void rule_dropped(ctx *c, const prism_gpu_stats *g)
{
    const prism_analysis *a = c->a;
    const prism_reader_stats *rs = prism_analysis_reader_stats(a);
    uint64_t cpu = prism_analysis_dropped(a), gpu = g ? g->dropped : 0;
    uint64_t events = prism_analysis_events(a);
    uint64_t bad = rs ? rs->damaged + rs->malformed + rs->seq_gaps : 0;
    if (!cpu && !gpu && !bad)
        return;
    double drop = (double)(cpu + gpu) / (double)(events + cpu + gpu);
    double lost = bad ? (double)bad / (double)(rs->chunks + bad) : 0.0;
    double share = drop > lost ? drop : lost;
    prism_bottleneck *b = add(c, PRISM_BN_DROPPED_EVENTS, by_loss(share), share, PRISM_NO_NODE);
    if (!b)
        return;
    if (cpu + gpu)
        put(b->description, sizeof b->description, "Dropped events: %llu (%.2f%% of events)",
            (unsigned long long)(cpu + gpu), 100.0 * drop);
    if (bad)
        put(b->description, sizeof b->description, "%samaged file: %llu bytes skipped",
            cpu + gpu ? "; d" : "D", (unsigned long long)rs->skipped_bytes);
    put(b->evidence, sizeof b->evidence, "dropped %llu CPU, %llu GPU of %llu events",
        (unsigned long long)cpu, (unsigned long long)gpu, (unsigned long long)events);
    if (bad)
        put(b->evidence, sizeof b->evidence,
            "; %llu damaged runs (%llu bad checksums), %llu malformed chunks, %llu sequence "
            "gaps, %llu bytes skipped", (unsigned long long)rs->damaged,
            (unsigned long long)rs->bad_checksum, (unsigned long long)rs->malformed,
            (unsigned long long)rs->seq_gaps, (unsigned long long)rs->skipped_bytes);
    if (cpu + gpu)
        put(b->recommendation, sizeof b->recommendation,
            "Buffers overflowed: raise PRISM_BUFFER_MB, set PRISM_POLICY=wait, or lower "
            "PRISM_SAMPLE_RATE. ");
    if (bad)
        put(b->recommendation, sizeof b->recommendation,
            "The file is damaged: %llu bytes were skipped and the figures cover the readable "
            "chunks only; check the disk and whether the run was killed mid-write.",
            (unsigned long long)rs->skipped_bytes);
}

/* ---- entry ------------------------------------------------------------ */

size_t rules_run(const prism_analysis *a, double threshold_pct, double leak_mb,
                 prism_bottleneck *out, size_t max)
{
    if (!a || !out || !max)
        return 0;
    ctx c = { .a = a, .tree = prism_analysis_tree(a), .out = out, .max = max };
    c.ops = prism_analysis_ops(a, &c.nops);
    if (!c.ops)
        c.nops = 0;
    if (threshold_pct < 0)
        threshold_pct = 10.0;
    if (leak_mb < 0)
        leak_mb = 10.0;
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    const prism_memory_stats *m = prism_analysis_memory(a);

    rule_hot(&c, threshold_pct);
    if (m) {
        leak_emit(&c, &m->host, leak_mb, false);
        if (m->have_gpu)
            leak_emit(&c, &m->gpu, leak_mb, true);
    }
    rule_sync(&c, g);
    rule_data(&c);
    rule_gpu_idle(&c, g);
    rule_launch(&c, g);
    rule_memory_bound(&c, g);
    rule_dropped(&c, g);

    qsort(out, c.n, sizeof *out, cmp_bn);
    return c.n;
}
