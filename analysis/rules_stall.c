/*
 * rules_stall.c - the pipeline rules: the CPU waiting for the GPU or for
 * input, the GPU waiting for the CPU, and GPU work bound by launches or by
 * moving memory.  Public getters only (see rules.c for the others).
 *
 *   cpu_gpu_sync    GPU sync time > 10 % of GPU work (kernels + copies +
 *                   memsets), severity by that share; without GPU sync
 *                   records, regions named like sync (at a word's start:
 *                   not fsync, async) / synchronize / .item / wait_gpu /
 *                   cuda_sync on the training thread above 10 % of the
 *                   sampled step time
 *   data_loading    the outermost regions named like data / load of each path
 *                   on the training thread > 10 % of the sampled step time,
 *                   within two levels of the shallowest, less an evaluation
 *                   pass's loader (in at most a third of the steps, two
 *                   calls or more in each)
 *
 * The training thread is the busiest thread not named like a loader; the
 * stalls are shares of the loop's time (the sampled steps, where regions
 * are recorded), not of all threads' time, which loader threads inflate.
 *   gpu_idle        idle share of the GPU span > 30 % (MEDIUM), > 50 % (HIGH)
 *   launch_bound    >= 1000 kernels, > 50 % of them under 10 us (MEDIUM),
 *                   > 80 % (HIGH)
 *   memory_bound    copies > 20 % of GPU work time, severity by that share;
 *                   and from work counters (flops / bytes): each operation
 *                   (by name) whose own work is below the ridge (FLOP/byte)
 *                   and holds >= 2 % of the time, at most 4, severity by its
 *                   share of time; the whole run when no sample found its
 *                   region
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"             /* an_sat_add */
#include "rules.h"

#define SYNC_REGIONS_MAX 4
#define SYNC_SHARE 0.10
#define DATA_SHARE 0.10
#define IDLE_MEDIUM 0.30
#define IDLE_HIGH 0.50
#define LAUNCH_MIN 1000
#define SMALL_MEDIUM 0.5
#define SMALL_HIGH 0.8
#define COPY_SHARE 0.20
#define INTENSITY_MIN_SHARE 0.02
#define INTENSITY_MAX 4

/* ---- the training loop's time ----------------------------------------- */

typedef struct loop_time {
    double ns;                  /* sampled step time, else the thread's total */
    uint64_t steps;             /* sampled steps behind it (0: no steps)      */
} loop_time;

/* The denominator of the shares (rules_ctx: the sampled steps' wall
 * time, else the run's). */
static loop_time loop_of(const rules_ctx *c)
{
    return (loop_time){ c->step_ns, c->steps };
}

/* Time of the outermost nodes named `name` on the training thread; *heavy
 * gets the heaviest of them (an index into that tree) or PRISM_NO_NODE. */
static uint64_t train_time(const rules_ctx *c, const char *name, uint32_t *heavy)
{
    const prism_tree *t = c->train;
    uint64_t ns = 0;
    *heavy = PRISM_NO_NODE;
    for (size_t i = 0; t && name && i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        if (!n->name || strcmp(n->name, name))
            continue;
        bool nested = false;
        for (uint32_t q = n->parent; q < t->count && !nested; q = t->nodes[q].parent)
            nested = t->nodes[q].name && !strcmp(t->nodes[q].name, name);
        if (nested)
            continue;
        ns = an_sat_add(ns, rules_in_window_ns(c, n));
        if (*heavy == PRISM_NO_NODE || n->total_ns > t->nodes[*heavy].total_ns)
            *heavy = (uint32_t)i;
    }
    return ns;
}

/* train_time of every sync-like name at once, in one pass over the tree
 * (a pass per name was quadratic in a tree of many sync-like names):
 * entries keyed by the name's text, summed in node order as train_time
 * does. */
typedef struct sync_time {
    const char *name;           /* NULL: an empty slot */
    uint64_t hash, ns;
    uint32_t heavy;
} sync_time;

typedef struct sync_times {
    sync_time *slot;
    size_t mask;
    bool built, failed;         /* failed: train_time by name instead */
} sync_times;

static sync_time *sync_slot(const sync_times *st, const char *name, uint64_t h)
{
    size_t j = (size_t)h & st->mask;
    while (st->slot[j].name && (st->slot[j].hash != h || strcmp(st->slot[j].name, name)))
        j = (j + 1) & st->mask;
    return &st->slot[j];
}

static void sync_times_build(const rules_ctx *c, sync_times *st)
{
    const prism_tree *t = c->train;
    size_t n = 0, cap = 16;
    st->built = true;
    for (size_t i = 0; t && i < t->count; i++)
        n += t->nodes[i].name && rules_sync_like(rules_leaf(t->nodes[i].name));
    while (cap < 2 * n)
        cap *= 2;
    st->slot = calloc(cap, sizeof *st->slot);
    st->mask = cap - 1;
    if (!st->slot) {
        st->failed = true;
        return;
    }
    for (size_t i = 0; t && i < t->count; i++) {
        const prism_node *nd = &t->nodes[i];
        if (!nd->name || !rules_sync_like(rules_leaf(nd->name)))
            continue;
        bool nested = false;
        for (uint32_t q = nd->parent; q < t->count && !nested; q = t->nodes[q].parent)
            nested = t->nodes[q].name && !strcmp(t->nodes[q].name, nd->name);
        if (nested)
            continue;
        uint64_t h = XXH3_64bits(nd->name, strlen(nd->name));
        sync_time *e = sync_slot(st, nd->name, h);
        if (!e->name)
            *e = (sync_time){ nd->name, h, 0, PRISM_NO_NODE };
        e->ns = an_sat_add(e->ns, rules_in_window_ns(c, nd));
        if (e->heavy == PRISM_NO_NODE || nd->total_ns > t->nodes[e->heavy].total_ns)
            e->heavy = (uint32_t)i;
    }
}

/* train_time of a sync-like name, from the table (built at first use). */
static uint64_t sync_train_time(const rules_ctx *c, sync_times *st, const char *name,
                                uint32_t *heavy)
{
    if (!st->built)
        sync_times_build(c, st);
    if (st->failed || !name)
        return train_time(c, name, heavy);
    const sync_time *e = sync_slot(st, name, XXH3_64bits(name, strlen(name)));
    *heavy = e->name ? e->heavy : PRISM_NO_NODE;
    return e->name ? e->ns : 0;
}

static double clamp01(double x)
{
    return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

/* ---- cpu_gpu_sync ----------------------------------------------------- */

static const char sync_advice_py[] =
    "Avoid .item(), .cpu(), .numpy() and printing tensors inside the loop: keep metrics on "
    "the GPU (accumulate detached tensors), log every N steps, and synchronize only where a "
    "result is really needed.";
static const char sync_advice_c[] =
    "Replace synchronous copies and device/stream synchronisations inside the loop with "
    "async copies and events on a stream, read results back every N steps, and synchronize "
    "only where a result is really needed.";
#define sync_advice (c->python ? sync_advice_py : sync_advice_c)

/* With GPU records: the time the CPU spent in synchronisations, as a share
 * of the step (and against the GPU's work time in the evidence). */
static void sync_gpu(rules_ctx *c, const prism_gpu_stats *g, const prism_op *region)
{
    uint64_t work = g->kernel_ns + g->copy_ns + g->memset_ns;
    double share = c->step_ns > 0 ? clamp01((double)g->sync_ns / c->step_ns) : 0;
    if (!(share > SYNC_SHARE))
        return;
    prism_bottleneck *b = rules_add(c, PRISM_BN_CPU_GPU_SYNC, rules_by_share(share), share,
                                    region ? region->node : PRISM_NO_NODE);
    if (!b)
        return;
    rules_set(b->description, sizeof b->description, "CPU-GPU sync: %.1f%% of %s",
              100.0 * share, rules_denom(c));
    rules_worth(c, b, share * c->step_ns);
    rules_put(b->evidence, sizeof b->evidence,
              "sync %s vs GPU work %s (kernels %s, copies %s, memsets %s)",
              DUR(g->sync_ns), DUR(work), DUR(g->kernel_ns), DUR(g->copy_ns),
              DUR(g->memset_ns));
    if (region)
        rules_put(b->evidence, sizeof b->evidence, "; region '%s'", rules_leaf(region->name));
    rules_set(b->recommendation, sizeof b->recommendation, "%s", sync_advice);
}

void rules_sync(rules_ctx *c)
{
    const prism_gpu_stats *g = c->gpu;
    const prism_op *region = NULL;           /* heaviest sync-like region */
    for (size_t i = 0; i < c->nops && !region; i++)
        if (rules_sync_like(rules_leaf(c->ops[i].name)))
            region = &c->ops[i];
    if (g && g->present && g->sync_ns > 0) {
        sync_gpu(c, g, region);
        return;
    }
    /* Sync-named regions of the training thread, as a share of the loop's
     * time (they stall it), spinning or blocked: a CUDA sync often spins.
     * With CPU samples rules_wait may have found the same region by its
     * blocked time; the larger finding stays (rules_run's dedupe). */
    /* Without GPU sync records: sync-named regions of the training thread,
     * as a share of the loop's time (they stall it).  (A program's GPU may
     * be one CUPTI does not see, or a simulated one: the name decides.) */
    loop_time lt = loop_of(c);
    size_t found = 0;
    sync_times st = { 0 };
    for (size_t i = 0; i < c->nops && found < SYNC_REGIONS_MAX && lt.ns > 0; i++) {
        const prism_op *op = &c->ops[i];
        uint32_t heavy;
        if (!rules_sync_like(rules_leaf(op->name)))
            continue;
        uint64_t ns = sync_train_time(c, &st, op->name, &heavy);
        double share = clamp01((double)ns / lt.ns);
        if (!(share > SYNC_SHARE))
            continue;
        found++;
        const prism_node *n = &c->train->nodes[heavy];
        prism_bottleneck *b = rules_add(c, PRISM_BN_CPU_GPU_SYNC, rules_by_share(share), share,
                                        prism_analysis_find(c->a, n->path_hash));
        if (!b)
            continue;
        rules_set(b->description, sizeof b->description, "CPU-GPU sync: '%s': %.1f%% of %s",
                  rules_leaf(op->name), 100.0 * share, lt.steps ? "step time" : "thread time");
        rules_worth(c, b, (double)ns);
        rules_put(b->evidence, sizeof b->evidence, "%llu calls, %s, mean %s/call",
                  (unsigned long long)n->calls, DUR(ns), DUR(n->mean_ns));
        if (lt.steps)
            rules_put(b->evidence, sizeof b->evidence, ", %s/step over %llu steps",
                      DUR((double)ns / (double)lt.steps), (unsigned long long)lt.steps);
        rules_put(b->evidence, sizeof b->evidence,
                  "; no GPU sync records: judged by the region's name");
        rules_set(b->recommendation, sizeof b->recommendation, "%s", sync_advice);
    }
    free(st.slot);
}

/* ---- data_loading ----------------------------------------------------- */

/* A region named like data loading: not an operator ("aten::..._data"),
 * and of a Python frame ("torch/utils/data/dataloader.py(720): __next__")
 * its file's own name and its function, not the folders it lies in (a
 * project under "data_science/" holds no more input than another). */
static bool data_region(const char *name)
{
    if (!name || !strncmp(name, "aten::", 6))
        return false;
    const char *fr = strstr(name, "): ");
    if (!fr)
        return rules_data_like(name);
    const char *file = name;
    for (const char *p = name; p < fr; p++)
        if (*p == '/')
            file = p + 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s %s", (int)(fr - file < 128 ? fr - file : 128), file,
             fr + 3);
    return rules_data_like(buf);
}

/* A loader that runs in at most a third of the `steps`, two batches or more
 * each time: an evaluation pass's. */
static bool eval_loader(const prism_node *n, uint64_t steps)
{
    return steps && n->steps_seen * 3 <= steps && n->calls >= 2 * n->steps_seen;
}

/* Has node n an ancestor named like data loading? */
static bool data_below(const prism_tree *t, const prism_node *n)
{
    for (uint32_t k = n->parent, hops = 0; k < t->count && hops < 4096;
         k = t->nodes[k].parent, hops++)
        if (data_region(t->nodes[k].name))
            return true;
    return false;
}

void rules_data(rules_ctx *c)
{
    if (c->cpu)
        return;                         /* with CPU samples: rules_wait */
    const prism_tree *t = c->train;
    if (!t || !t->count)
        return;
    /* the outermost data/load regions of every path (a trace names the
     * same loader's __next__ at different depths: under a `next()` frame
     * in one loop, right under <module> in another), less an evaluation
     * pass's loader: one that runs in at most a third of the steps, several
     * batches at a time (it is no training input: slow_steps tells it); and
     * within two levels of the shallowest of them (a region named like
     * "load" deep inside the computation is not the input) */
    loop_time lt = loop_of(c);
    uint32_t heavy = PRISM_NO_NODE, left = PRISM_NO_NODE, top = UINT32_MAX;
    uint64_t data_ns = 0, calls = 0, left_ns = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->nodes[i].depth < top && data_region(t->nodes[i].name) &&
            !eval_loader(&t->nodes[i], lt.steps))
            top = t->nodes[i].depth;
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        if (!data_region(n->name) || n->depth > top + 2 || data_below(t, n))
            continue;
        if (eval_loader(n, lt.steps)) {
            left_ns = an_sat_add(left_ns, rules_in_window_ns(c, n));
            if (left == PRISM_NO_NODE || n->total_ns > t->nodes[left].total_ns)
                left = (uint32_t)i;
            continue;
        }
        data_ns = an_sat_add(data_ns, rules_in_window_ns(c, n));
        calls += n->calls;
        if (heavy == PRISM_NO_NODE || n->total_ns > t->nodes[heavy].total_ns)
            heavy = (uint32_t)i;
    }
    if (heavy == PRISM_NO_NODE)
        return;
    double share = lt.ns > 0 ? clamp01((double)data_ns / lt.ns) : 0.0;
    if (!(share > DATA_SHARE))
        return;

    const prism_node *h = &t->nodes[heavy];
    prism_bottleneck *b = rules_add(c, PRISM_BN_DATA_LOADING, rules_by_share(share), share,
                                    prism_analysis_find(c->a, h->path_hash));
    if (!b)
        return;
    rules_set(b->description, sizeof b->description, "Data loading: '%s': %.1f%% of %s",
              rules_leaf(h->name), 100.0 * share, lt.steps ? "step time" : "thread time");
    rules_worth(c, b, (double)data_ns);
    rules_put(b->evidence, sizeof b->evidence, "%s in data regions (%llu calls) on thread '%s'",
              DUR(data_ns), (unsigned long long)calls, c->train_name ? c->train_name : "?");
    if (lt.steps)
        rules_put(b->evidence, sizeof b->evidence, ", %s/step over %llu steps",
                  DUR((double)data_ns / (double)lt.steps), (unsigned long long)lt.steps);
    if (left != PRISM_NO_NODE)
        rules_put(b->evidence, sizeof b->evidence, "; not counted: '%s' (%s, %llu calls in %llu "
                  "of the steps: an evaluation pass's loader)", rules_leaf(t->nodes[left].name),
                  DUR((double)left_ns), (unsigned long long)t->nodes[left].calls,
                  (unsigned long long)t->nodes[left].steps_seen);
    uint64_t span = prism_analysis_span_ns(c->a);
    /* busy: their region time less their waits in a lock, a condition, a
     * queue (a DataLoader's queue feeder threads block in acquire) */
    if (c->loaders && span)
        rules_put(b->evidence, sizeof b->evidence, "; %zu %s thread%s, busy %.0f%%%s%s%s",
                  c->loaders, c->loader_procs ? "other" : "loader", c->loaders == 1 ? "" : "s",
                  100.0 * fmin(1.0, (double)c->loader_busy_ns / ((double)c->loaders * (double)span)),
                  c->loader_waits ? " (not counting " : "",
                  c->loader_waits ? (c->loaders == 1 ? "its" : "their") : "",
                  c->loader_waits ? " waits: lock acquire, wait, select, poll, sleep)" : "");
    else if (!c->loader_procs)
        rules_put(b->evidence, sizeof b->evidence, "; no loader threads: loading inline");
    if (c->loader_procs)
        rules_put(b->evidence, sizeof b->evidence,
                  "; DataLoader worker processes (_MultiProcessingDataLoaderIter) load "
                  "outside this file");
    rules_disk_evidence(c, b->evidence, sizeof b->evidence);
    double io_rd, io_wr, io_rate;
    bool parallel = c->loaders || c->loader_procs;
    if (rules_disk_io(c, &io_rd, &io_wr, &io_rate) && io_rd >= io_wr)
        rules_set(b->recommendation, sizeof b->recommendation,
                  "The input is read from disk while the training thread waits: read in "
                  "parallel (%s), keep the data on faster or local storage (local NVMe or "
                  "RAM), use a packed format read sequentially, or cache it after the first "
                  "epoch.", c->python ? "more DataLoader workers, prefetch_factor"
                                      : "more loader threads");
    else if (c->python)
        rules_set(b->recommendation, sizeof b->recommendation,
                  "%s pin_memory=True, prefetch_factor and persistent_workers=True; move "
                  "decoding/augmentation off the training thread or onto the GPU.",
                  parallel ? "The training thread still waits for batches: add DataLoader "
                            "workers (num_workers), use" :
                            "Load in parallel: DataLoader(num_workers>0), with");
    else
        rules_set(b->recommendation, sizeof b->recommendation,
                  "%s so a batch is ready when the step asks for it; make decoding and copies "
                  "cheaper.", parallel ? "The training thread still waits for input: add "
                                          "loader threads or deepen the prefetch queue"
                                        : "Load in parallel: loader threads with a prefetch "
                                          "queue,");
    if (!(rules_disk_io(c, &io_rd, &io_wr, &io_rate) && io_rd >= io_wr))
        rules_input_workers(c, b, (double)data_ns,
                            lt.steps ? (double)calls / (double)lt.steps : 0);
}

/* ---- gpu_idle --------------------------------------------------------- */

static bool gpu_attributed(const rules_ctx *c)
{
    for (size_t i = 0; c->tree && i < c->tree->count; i++)
        if (c->tree->nodes[i].gpu_ns || c->tree->nodes[i].gpu_launches)
            return true;
    return false;
}

/* A region of the training thread by its name: the CPU regions between
 * kernels that hold the GPU back are its (a pin-memory or loader thread
 * beside it delays no launch; the GPU run named torch's pin_memory thread). */
static bool on_training_thread(const rules_ctx *c, const char *name)
{
    const prism_tree *t = c->train;
    for (size_t i = 0; t && name && i < t->count; i++)
        if (t->nodes[i].name && !strcmp(t->nodes[i].name, name))
            return true;
    return !t;                          /* no training thread told: any */
}

void rules_gpu_idle(rules_ctx *c)
{
    const prism_gpu_stats *g = c->gpu;
    if (!g || !g->present || !g->span_ns || !(g->idle_share > IDLE_MEDIUM))
        return;
    /* the heaviest real CPU region that launches nothing */
    const prism_op *cpu = NULL;
    bool attributed = gpu_attributed(c);
    for (size_t i = 0; i < c->nops && !cpu && attributed; i++) {
        const prism_node *n = rules_node(c, c->ops[i].node);
        if (n && !n->gpu_launches && !n->gpu_ns && !rules_is_wrapper(c, &c->ops[i]) &&
            on_training_thread(c, c->ops[i].name))
            cpu = &c->ops[i];
    }
    prism_bottleneck *b = rules_add(c, PRISM_BN_GPU_IDLE,
                                    g->idle_share > IDLE_HIGH ? PRISM_SEV_HIGH : PRISM_SEV_MEDIUM,
                                    g->idle_share, cpu ? cpu->node : PRISM_NO_NODE);
    if (!b)
        return;
    rules_set(b->description, sizeof b->description, "GPU idle: %.1f%% of the GPU time span",
              100.0 * g->idle_share);
    rules_put(b->evidence, sizeof b->evidence,
              "busy %s of %s span; %llu kernels (%s), copies %s", DUR(g->busy_ns),
              DUR(g->span_ns), (unsigned long long)g->launches, DUR(g->kernel_ns),
              DUR(g->copy_ns));
    const prism_node *cn = cpu ? rules_node(c, cpu->node) : NULL;
    if (cn && c->steps)
        rules_put(b->evidence, sizeof b->evidence, "; '%s' (%s/step) launches no GPU work",
                  rules_leaf(cpu->name), DUR(rules_in_window(c, cn) / (double)c->steps));
    else if (cn)
        rules_put(b->evidence, sizeof b->evidence, "; '%s' (%s) launches no GPU work",
                  rules_leaf(cpu->name), DUR(cn->total_ns));
    rules_set(b->recommendation, sizeof b->recommendation,
              "Overlap transfers with compute (non_blocking copies from pinned memory), use "
              "bigger batches or CUDA graphs, and look at the CPU regions between kernels%s%s%s.",
              cpu ? " (start with '" : "", cpu ? rules_leaf(cpu->name) : "", cpu ? "')" : "");
}

void rules_launch(rules_ctx *c)
{
    const prism_gpu_stats *g = c->gpu;
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
        for (uint32_t k = n->first_child; rules_node(c, k); k = c->tree->nodes[k].next_sibling)
            in_children += c->tree->nodes[k].gpu_launches;
        uint64_t self = n->gpu_launches > in_children ? n->gpu_launches - in_children : 0;
        if (self > best_self) {
            best_self = self;
            best = (uint32_t)i;
        }
    }
    prism_bottleneck *b = rules_add(c, PRISM_BN_LAUNCH_BOUND,
                                    small > SMALL_HIGH ? PRISM_SEV_HIGH : PRISM_SEV_MEDIUM,
                                    small, best);
    if (!b)
        return;
    rules_set(b->description, sizeof b->description,
              "Launch-bound: %.1f%% of %llu kernels shorter than 10 us", 100.0 * small,
              (unsigned long long)g->launches);
    rules_put(b->evidence, sizeof b->evidence, "%llu small of %llu kernels, mean kernel %s",
              (unsigned long long)g->small_kernels, (unsigned long long)g->launches,
              DUR((double)g->kernel_ns / (double)g->launches));
    if (g->nkernels && g->kernels)
        rules_put(b->evidence, sizeof b->evidence, "; top kernel '%.60s' x%llu",
                  g->kernels[0].name ? g->kernels[0].name : "?",
                  (unsigned long long)g->kernels[0].count);
    if (best != PRISM_NO_NODE)
        rules_put(b->evidence, sizeof b->evidence, "; '%s' issues %llu launches",
                  rules_leaf(c->tree->nodes[best].name), (unsigned long long)best_self);
    rules_set(b->recommendation, sizeof b->recommendation,
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
void rules_memory_bound(rules_ctx *c)
{
    const prism_gpu_stats *g = c->gpu;
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
    prism_bottleneck *b = rules_add(c, PRISM_BN_MEMORY_BOUND, rules_by_share(share), share,
                                    PRISM_NO_NODE);
    if (!b)
        return;
    rules_set(b->description, sizeof b->description,
              "Memory-bound: copies take %.1f%% of GPU time", 100.0 * share);
    rules_put(b->evidence, sizeof b->evidence, "copies %s (%.1f MB, %.2f GB/s) vs kernels %s",
              DUR(g->copy_ns), (double)bytes / 1048576.0,
              g->copy_ns ? (double)bytes / (double)g->copy_ns : 0.0, DUR(g->kernel_ns));
    if (pageable)
        rules_put(b->evidence, sizeof b->evidence, "; %llu copies from pageable memory",
                  (unsigned long long)pageable);
    rules_set(b->recommendation, sizeof b->recommendation,
              "Move less data: keep tensors resident on the GPU, copy from pinned memory "
              "(pin_memory=True) with non_blocking=True, avoid .cpu()/.numpy() round trips, "
              "batch small copies and use in-place or fused ops.");
}


/* "1.2 G", "350 M": a count with an SI prefix. */
static void si(char *buf, size_t cap, double v)
{
    static const char *const p[] = { "", "k", "M", "G", "T", "P", "E" };
    size_t i = 0;
    while (v >= 1000 && i + 1 < sizeof p / sizeof p[0]) {
        v /= 1000;
        i++;
    }
    snprintf(buf, cap, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, p[i]);
}

static void intensity_text(prism_bottleneck *b, const char *who, double flops, double bytes,
                           double ns, double share, double ridge)
{
    char f[24], y[24];
    si(f, sizeof f, flops);
    si(y, sizeof y, bytes);
    rules_set(b->description, sizeof b->description,
              "Memory-bound: %s does %.2f FLOP/byte, below the ridge of %g", who,
              flops / bytes, ridge);
    if (ns > 0)
        rules_put(b->evidence, sizeof b->evidence,
                  "%sFLOP over %sB in %s (%.1f%% of the step): %.2f GFLOP/s, %.2f GB/s", f, y,
                  DUR(ns), 100.0 * share, flops / ns, bytes / ns);
    else
        rules_put(b->evidence, sizeof b->evidence, "%sFLOP over %sB (work counters)", f, y);
    rules_set(b->recommendation, sizeof b->recommendation,
              "Bandwidth, not arithmetic, bounds this work: fuse element-wise ops into their "
              "producer (torch.compile, a fused kernel) so data is read once, avoid "
              ".contiguous()/transpose copies and dtype round trips, use bf16/fp16 to halve "
              "the bytes, and work in cache-sized tiles.");
}

/* A node's own work: its counters less its children's. */
static void own_work(const prism_tree *t, uint32_t i, double *flops, double *bytes)
{
    const prism_node *n = &t->nodes[i];
    *flops = n->flops;
    *bytes = n->bytes;
    for (uint32_t k = n->first_child; k != PRISM_NO_NODE; k = t->nodes[k].next_sibling) {
        *flops -= t->nodes[k].flops;
        *bytes -= t->nodes[k].bytes;
    }
    if (*flops < n->flops * 1e-9)       /* rounding of the inclusive sums */
        *flops = 0;
    if (*bytes < n->bytes * 1e-9)
        *bytes = 0;
}

typedef struct work_op {
    const char *name;
    double flops, bytes, self_ns;
    uint32_t node;              /* its heaviest node with work of its own */
} work_op;

#define WORK_OPS 64

/* memory_bound from work counters: the operations (regions by name, all
 * paths together, as hot_operation counts them) whose own work - the
 * counters recorded while they, not a child, were open - is below the
 * ridge. */
void rules_intensity(rules_ctx *c)
{
    const prism_work_stats *w = prism_analysis_work(c->a);
    if (!w || !w->present || !(w->ridge > 0))
        return;
    const prism_tree *t = c->tree;
    work_op op[WORK_OPS];
    size_t nop = 0;
    for (size_t i = 0; t && i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        double f, y;
        own_work(t, (uint32_t)i, &f, &y);
        if (!(y > 0) || !n->name)
            continue;
        size_t k = 0;
        while (k < nop && strcmp(op[k].name, n->name))
            k++;
        if (k == nop) {
            if (nop == WORK_OPS)
                continue;               /* judged: the first WORK_OPS names */
            op[nop++] = (work_op){ n->name, 0, 0, 0, (uint32_t)i };
        }
        op[k].flops += f;
        op[k].bytes += y;
        op[k].self_ns += (double)n->self_ns;
        if (n->self_ns > t->nodes[op[k].node].self_ns)
            op[k].node = (uint32_t)i;
    }
    /* the lowest-intensity candidates that matter, by share of time */
    size_t order[WORK_OPS], nlow = 0;
    for (size_t k = 0; k < nop; k++) {
        double share = c->step_ns > 0 ? op[k].self_ns / c->step_ns : 0.0;
        if (op[k].flops / op[k].bytes >= w->ridge || share < INTENSITY_MIN_SHARE)
            continue;
        size_t at = nlow++;
        while (at > 0 && op[order[at - 1]].self_ns < op[k].self_ns) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = k;
    }
    for (size_t j = 0; j < nlow && j < INTENSITY_MAX; j++) {
        const work_op *o = &op[order[j]];
        double share = c->step_ns > 0 ? clamp01(o->self_ns / c->step_ns) : 0.0;
        prism_bottleneck *b = rules_add(c, PRISM_BN_MEMORY_BOUND, rules_by_share(share), share,
                                        o->node);
        if (!b)
            return;
        char who[96];
        snprintf(who, sizeof who, "'%s'", o->name);
        intensity_text(b, who, o->flops, o->bytes, o->self_ns, share, w->ridge);
    }
/* no sample found its region (no regions, or none open): the run */
    if (!nop && w->bytes > 0 && w->intensity < w->ridge) {
        prism_bottleneck *b = rules_add(c, PRISM_BN_MEMORY_BOUND, PRISM_SEV_LOW, 0.0,
                                        PRISM_NO_NODE);
        if (b)
            intensity_text(b, "the run", w->flops, w->bytes, 0, 0, w->ridge);
    }
}
