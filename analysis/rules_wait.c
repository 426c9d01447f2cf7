/*
 * rules_wait.c - stalls of the training thread, measured: the time it
 * spent blocked off CPU inside its regions (from the profile's CPU
 * samples, see cpu.c), as a share of the step, classified by what else was
 * happening rather than by the region's name:
 *
 *   communication_wait
 *                  the rank waits in a collective: the region, or a region
 *                  around it, is named like one (all_reduce, broadcast,
 *                  barrier, nccl, gloo, ...: rules_comm_like); or the
 *                  profile is one rank of a job and the region is a
 *                  backward segment of a DistributedDataParallel model, or
 *                  of a program with a process group's thread recorded (the
 *                  gradient all-reduce is waited for at the end of the
 *                  backward pass); or the wait is on the GPU and NCCL
 *                  kernels hold at least 30 % of the kernel time.  Advice
 *                  about stragglers and overlap, never lock debugging
 *   cpu_gpu_sync   the region's blocking CUDA calls (synchronisations,
 *                  synchronous copies) account for much of the wait, or it
 *                  is a known sync call (named like one)
 *   data_loading   the region is where the step's work begins (its earliest
 *                  leaf call in at least half of the steps: the batch is
 *                  fetched there), or it or a region around it is named
 *                  like input; the evidence says how busy the other
 *                  threads were meanwhile (loaders producing the batch)
 *   io_wait        a region named like file or storage work (read, write,
 *                  save, checkpoint, file, ...) while the process and its
 *                  workers moved at least 1 MiB a step to or from the disk
 *                  (format 1.3 readings: rules_disk_io)
 *   off_cpu_wait   otherwise: I/O, a lock, a condition or a sleep, with how
 *                  busy the other threads were (a lock or hand-off with one
 *                  of them when they were)
 *
 * Every wait but a GPU one says how much the process read and wrote on
 * disk meanwhile when that is significant, and an input stall reading more
 * than it writes gets storage advice.
 *
 * and, over the whole thread, cpu_contention: the time it was runnable but
 * waiting for a CPU (the run queue), which is neither work nor a wait for
 * something the program does; its evidence says who took the CPUs (this
 * process's threads, its worker processes, other processes: load.c) and
 * its advice follows from the largest of them.
 *
 * Each names its region (the heaviest path of the name), the share of the
 * step and the evidence.  Names add confidence, they are never required.
 * Severity by share: HIGH > 30 %, MEDIUM 10-30 %, LOW from 5 %.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules.h"

#define WAIT_MIN 0.05           /* a stall below 5 % of the step is noise   */
#define WAIT_MAX 6              /* findings at most                         */
#define LEAD_STEPS 0.5          /* where the work begins in half the steps  */
#define GPU_WAIT 0.3            /* blocking CUDA calls hold this much of it */
#define STEP_WRAPPER 0.9        /* a region holding this much of the steps  */
#define CONTENTION_MIN 0.05     /* run-queue time below 5 % of the step     */
#define NCCL_SHARE 0.3          /* NCCL kernels hold this much kernel time  */
#define OTHERS_BUSY 0.5         /* other threads ran this much of the wait  */

bool rules_comm_like(const char *name)
{
    static const char *const pat[] = { "all_reduce", "allreduce", "all_gather", "allgather",
                                       "reduce_scatter", "reducescatter", "all_to_all",
                                       "alltoall", "broadcast", "barrier", "nccl", "gloo",
                                       "c10d", "processgroup", "collective" };
    for (size_t i = 0; name && i < sizeof pat / sizeof *pat; i++)
        if (rules_icontains(name, pat[i]))
            return true;
    return false;
}

bool rules_input_like(const char *name)
{
    static const char *const pat[] = { "data", "load", "batch", "fetch", "input",
                                       "prefetch", "shard" };
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++)
        if (rules_icontains(name, pat[i]))
            return true;
    return false;
}

typedef struct wait_op {
    const char *name;
    double blocked, busy, off, known, on, ns;   /* self, summed over paths */
    double waitq;               /* self run-queue time, summed over paths     */
    double stall;               /* what it costs the step: blocked, and its
                                   run-queue time when it mostly waits (woken,
                                   not yet running is part of the wait)     */
    bool emitted, tried;
    double gpu_wait;            /* inclusive, its heaviest path               */
    uint64_t calls, lead;
    uint32_t node;              /* heaviest path (training thread tree)       */
    double node_blocked;
} wait_op;

/* Every name of the training thread's tree that blocked, into *opp (grown
 * as names come). */
static void collect(const rules_ctx *c, wait_op **opp, size_t *cap, size_t *nop,
                    rules_names *ix)
{
    const prism_tree *t = c->train;
    *nop = 0;
    for (size_t i = 0; t && i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        rules_self s = rules_self_of(c, t, (uint32_t)i);
        if (!n->name || !(s.blocked > 0) || (n->flags & PRISM_NODE_UNATTRIBUTED))
            continue;           /* no region: nothing of the program's to name */
        bool added;
        size_t k = rules_names_get(ix, n->name, &added);
        if (k == SIZE_MAX || (added && !pb_vec_reserve((void **)opp, cap, k + 1, sizeof **opp)))
            break;                      /* out of memory: judge what was gathered */
        wait_op *op = *opp;
        if (added)
            op[(*nop)++] = (wait_op){ .name = n->name, .node = (uint32_t)i, .node_blocked = -1 };
        op[k].blocked += s.blocked;
        op[k].waitq += s.waitq;
        op[k].busy += s.busy;
        op[k].off += s.off;
        op[k].known += s.known;
        op[k].on += s.on;
        op[k].ns += s.ns;
        op[k].calls += n->calls;
        if (n->lead_steps > op[k].lead)
            op[k].lead = n->lead_steps;
        if (s.blocked > op[k].node_blocked) {
            op[k].node_blocked = s.blocked;
            op[k].node = (uint32_t)i;
            op[k].gpu_wait = (double)n->gpu_wait_ns;
        }
    }
}

/* The other threads' busiest: "'pool-0' 93%, 'pool-1' 91%" into buf. */
static void others_busy(const rules_ctx *c, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t shown = 0;
    for (size_t i = 0; i < c->nthreads && shown < 3; i++) {
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, &name);
        if (!t || t == c->train || prism_analysis_thread_worker(c->a, i, NULL, NULL))
            continue;                   /* (workers: the finding's Inside line) */
        uint64_t known = 0, on = 0;
        for (uint32_t r = t->first_root; r < t->count; r = t->nodes[r].next_sibling) {
            known += t->nodes[r].cpu_known_ns;
            on += t->nodes[r].oncpu_ns;
        }
        if (!known)
            continue;
        rules_put(buf, cap, "%s'%s' on CPU %.0f%%", shown ? ", " : "", name ? name : "?",
                  100.0 * (double)on / (double)known);
        shown++;
    }
}

/* torch's autograd device thread ('pt_autograd_N': the backward of CUDA
 * tensors runs there while the calling thread waits), when it recorded:
 * its name, its on-CPU share and its heaviest region (by self time).
 * False without one. */
typedef struct handoff {
    const char *thread, *region;
    double oncpu, region_ns;            /* region_ns: its self time */
} handoff;

static bool autograd_thread(const rules_ctx *c, handoff *h)
{
    memset(h, 0, sizeof *h);
    for (size_t i = 0; i < c->nthreads; i++) {
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, &name);
        if (!t || t == c->train || !name || strncmp(name, "pt_autograd_", 12) ||
            prism_analysis_thread_worker(c->a, i, NULL, NULL))
            continue;
        uint64_t known = 0, on = 0;
        for (uint32_t r = t->first_root; r < t->count; r = t->nodes[r].next_sibling) {
            known += t->nodes[r].cpu_known_ns;
            on += t->nodes[r].oncpu_ns;
        }
        const prism_node *best = NULL;
        for (size_t k = 0; k < t->count; k++) {
            const prism_node *n = &t->nodes[k];
            if (n->name && !(n->flags & PRISM_NODE_UNATTRIBUTED) &&
                (!best || n->self_ns > best->self_ns))
                best = n;
        }
        if (!best)
            continue;                   /* the thread recorded no region */
        if (h->thread && (double)best->self_ns <= h->region_ns)
            continue;                   /* one per device: the busiest */
        h->thread = name;
        h->oncpu = known ? (double)on / (double)known : -1;
        h->region = rules_leaf(best->name);
        h->region_ns = (double)best->self_ns;
    }
    return h->thread != NULL;
}

/* Named like input, itself or a region around it that is not a wrapper
 * of whole steps ("train_batch" holds the step, not its input). */
static bool in_input(const rules_ctx *c, uint32_t node)
{
    const prism_tree *t = c->train;
    for (uint32_t q = node; q < t->count; q = t->nodes[q].parent) {
        const prism_node *n = &t->nodes[q];
        if (q != node && (double)n->total_ns >= STEP_WRAPPER * c->step_ns)
            break;
        if (rules_input_like(n->name))
            return true;
    }
    return false;
}

/* A collective by name: itself or a region around it that is not a
 * wrapper of whole steps; the name found into *what. */
static bool in_collective(const rules_ctx *c, uint32_t node, const char **what)
{
    const prism_tree *t = c->train;
    for (uint32_t q = node; q < t->count; q = t->nodes[q].parent) {
        const prism_node *n = &t->nodes[q];
        if (q != node && (double)n->total_ns >= STEP_WRAPPER * c->step_ns)
            break;
        if (rules_comm_like(n->name)) {
            *what = n->name;
            return true;
        }
    }
    return false;
}

/* A recorded thread named like a process group's (gloo, NCCL, c10d);
 * NULL when none. */
static const char *pg_thread(const rules_ctx *c)
{
    for (size_t i = 0; i < c->nthreads; i++) {
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, &name);
        if (t && t != c->train && rules_comm_like(name))
            return name;
    }
    return NULL;
}

static bool ddp_model(const rules_ctx *c)
{
    for (size_t i = 0; i < c->nops; i++)
        if (c->ops[i].name && strstr(c->ops[i].name, "DistributedDataParallel"))
            return true;
    return false;
}

static bool backward_like(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n && (!strcmp(name, "backward") ||
                 (n > 11 && !strcmp(name + n - 11, " (backward)")));
}

/* NCCL kernels' share of the GPU kernel time (gpu.c tells them apart). */
static double nccl_share(const prism_gpu_stats *g)
{
    return g && g->present && g->kernel_ns ? (double)g->comm_kernel_ns / (double)g->kernel_ns
                                           : 0;
}

/* Why a wait is the rank waiting in a collective, in words into why;
 * false when nothing says so. */
static bool comm_wait(const rules_ctx *c, const wait_op *w, bool gpu, const prism_gpu_stats *g,
                      char *why, size_t cap)
{
    const char *coll = NULL, *pg = pg_thread(c);
    why[0] = '\0';
    if (in_collective(c, w->node, &coll)) {
        if (coll == c->train->nodes[w->node].name)
            snprintf(why, cap, "a collective by its name");
        else
            snprintf(why, cap, "inside the collective '%s'", rules_leaf(coll));
    } else if (c->job && backward_like(w->name) && (ddp_model(c) || pg)) {
        snprintf(why, cap, "backward of a %s: the gradient all-reduce is waited for there",
                 ddp_model(c) ? "DDP model" : "rank with a process group");
    } else if (gpu && nccl_share(g) >= NCCL_SHARE) {
        snprintf(why, cap, "waits on the GPU; NCCL kernels hold %.0f%% of kernel time "
                 "(%s in %llu launches)", 100.0 * nccl_share(g), DUR((double)g->comm_kernel_ns),
                 (unsigned long long)g->comm_launches);
    } else {
        return false;
    }
    if (pg)
        rules_put(why, cap, " (thread '%s')", pg);
    return true;
}

static void comm_emit(rules_ctx *c, const wait_op *w, double share, const char *why)
{
    const prism_node *hn = &c->train->nodes[w->node];
    prism_bottleneck *b = rules_add(c, PRISM_BN_COMM_WAIT, rules_by_share(share), share,
                                    prism_analysis_find(c->a, hn->path_hash));
    if (!b)
        return;
    rules_set(b->description, sizeof b->description, "Communication wait: '%s' waits %.1f%% "
              "of %s", rules_leaf(w->name), 100.0 * share, rules_denom(c));
    rules_worth(c, b, w->stall);
    double per = c->steps ? (double)c->steps : 1.0;
    rules_put(b->evidence, sizeof b->evidence, "blocked %s%s", DUR(w->blocked / per),
              c->steps ? "/step" : "");
    if (w->stall > w->blocked)
        rules_put(b->evidence, sizeof b->evidence, " and woken but waiting for a CPU %s%s",
                  DUR((w->stall - w->blocked) / per), c->steps ? "/step" : "");
    if (c->steps)
        rules_put(b->evidence, sizeof b->evidence, " over %llu steps",
                  (unsigned long long)c->steps);
    rules_put(b->evidence, sizeof b->evidence, ", %llu calls on thread '%s'",
              (unsigned long long)w->calls, c->train_name ? c->train_name : "?");
    if (c->job && c->rank >= 0 && c->world > 1)
        rules_put(b->evidence, sizeof b->evidence, ", rank %lld of %llu", (long long)c->rank,
                  (unsigned long long)c->world);
    else if (c->job && c->rank >= 0)
        rules_put(b->evidence, sizeof b->evidence, ", rank %lld", (long long)c->rank);
    rules_put(b->evidence, sizeof b->evidence, "; %s", why);
    rules_set(b->recommendation, sizeof b->recommendation,
              "The rank waits in a collective, mostly for a slower rank: analyze all "
              "ranks together (prism-top analyze DIR) for the straggler and its cause; "
              "overlap communication with compute (%s); with equal ranks, check the "
              "network's bandwidth.",
              c->python ? "DDP bucket_cap_mb, no_sync() when accumulating, async_op=True"
                       : "start the collective early, non-blocking, and wait for it late");
}

#define IO_MIN_STEP (1024.0 * 1024.0)
#define IO_MIN_RATE (4.0 * 1024.0 * 1024.0)
bool rules_disk_io(const rules_ctx *c, double *rd, double *wr, double *rate)
{
    const prism_system_stats *s = prism_analysis_system(c->a);
    if (!s->count || !s->span_ns || s->io_read_bytes == PRISM_NO_VALUE ||
        s->io_write_bytes == PRISM_NO_VALUE || s->step_io_read_bytes < 0 ||
        s->step_io_write_bytes < 0)
        return false;
    *rd = s->step_io_read_bytes;
    *wr = s->step_io_write_bytes;
    *rate = (double)(s->io_read_bytes + s->io_write_bytes) / ((double)s->span_ns / 1e9);
    return *rd + *wr >= IO_MIN_STEP && *rate >= IO_MIN_RATE;
}

void rules_disk_evidence(const rules_ctx *c, char *ev, size_t cap)
{
    double rd, wr, rate;
    if (!rules_disk_io(c, &rd, &wr, &rate))
        return;
    rules_put(ev, cap, "; the process's disk traffic: read %.1f MB, wrote %.1f MB a step (%.1f MB/s)",
              rd / (1024.0 * 1024.0), wr / (1024.0 * 1024.0), rate / (1024.0 * 1024.0));
}

/* needle (lower case) in s at the start of a word: s's start, or after
 * a character that is no letter ("read_shard", "save/ckpt"; not "thread") */
static bool word_start(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = s; p && *p; p++)
        if ((p == s || !isalpha((unsigned char)p[-1])) && !strncasecmp(p, needle, n))
            return true;
    return false;
}

/* A region named like file or storage work. */
static bool io_like(const char *name)
{
    static const char *const pat[] = { "checkpoint", "ckpt", "save", "read", "write", "file",
                                       "disk", "fsync", "flush", "open", "io_", "i/o",
                                       "storage" };
    for (size_t i = 0; name && i < sizeof pat / sizeof *pat; i++)
        if (word_start(name, pat[i]))
            return true;
    return false;
}

/* An input stall holds its region whole: a hot_operation finding already
 * made of the same region's running part (rules_hot ran first) goes, or the
 * stall would be told twice, half of it with advice to do what the program
 * already does (move loading to workers). */
static void drop_hot(rules_ctx *c, const char *name)
{
    size_t keep = 0;
    for (size_t k = 0; k < c->n; k++) {
        const prism_bottleneck *b = &c->out[k];
        bool same = b->type == PRISM_BN_HOT_OPERATION && b->share > 0 &&
                    b->node < c->tree->count && c->tree->nodes[b->node].name &&
                    !strcmp(c->tree->nodes[b->node].name, name);
        if (!same)
            c->out[keep++] = c->out[k];
    }
    c->n = keep;
}

static void wait_emit(rules_ctx *c, const wait_op *w, const prism_gpu_stats *g)
{
    double stall = w->stall;
    double busy = w->off > 0 ? w->busy / w->off : 0;    /* others busy, of the wait */
    bool lead = c->steps && (double)w->lead >= LEAD_STEPS * (double)c->steps;
    bool gpu = (g && g->present && w->gpu_wait >= GPU_WAIT * w->node_blocked) ||
               rules_sync_like(w->name);
    char why[160];
    if (comm_wait(c, w, gpu, g, why, sizeof why)) {
        comm_emit(c, w, c->step_ns > 0 ? fmin(1.0, stall / c->step_ns) : 0, why);
        return;
    }
    bool data = !gpu && (lead || in_input(c, w->node));
    /* an input stall is the region's whole time in the steps: the step
     * waits for its batch whether the thread is blocked or unpickling it */
    if (data && w->ns > stall) {
        stall = w->ns;
        drop_hot(c, w->name);
    }
    double share = c->step_ns > 0 ? stall / c->step_ns : 0;
    share = share > 1 ? 1 : share;
    double io_rd, io_wr, io_rate;
    bool disk = !gpu && rules_disk_io(c, &io_rd, &io_wr, &io_rate);
    bool io = disk && !data && io_like(rules_leaf(w->name));
    prism_bottleneck_type type = gpu ? PRISM_BN_CPU_GPU_SYNC
                                 : data ? PRISM_BN_DATA_LOADING
                                 : io ? PRISM_BN_IO_WAIT : PRISM_BN_OFF_CPU_WAIT;
    /* the backward handed to torch's autograd thread: the wait is that
     * thread's work (found on the first GPU run: every CUDA training
     * script's backward was an off-CPU wait with lock-debugging advice) */
    handoff ho;
    bool handed = type == PRISM_BN_OFF_CPU_WAIT && backward_like(w->name) &&
                  autograd_thread(c, &ho);
    const prism_node *hn = &c->train->nodes[w->node];
    prism_bottleneck *b = rules_add(c, type, rules_by_share(share), share,
                                    prism_analysis_find(c->a, hn->path_hash));
    if (!b)
        return;
    /* an input stall is worth the whole region (with the loading in
     * workers the training thread would not load at all); a wait, its
     * time waiting; work handed to another thread nothing (it moves, it
     * does not vanish) */
    if (!handed)
        rules_worth(c, b, data ? rules_in_window(c, hn) : stall);
    const char *what = gpu ? "CPU-GPU sync" : data ? "Input stall"
                       : io ? "I/O wait" : handed ? "Backward on torch's autograd thread"
                       : "Off-CPU wait";
    if (handed)
        rules_set(b->description, sizeof b->description, "%s: '%s' waits %.1f%% of %s for '%s'",
                  what, rules_leaf(w->name), 100.0 * share, rules_denom(c), ho.thread);
    else
        rules_set(b->description, sizeof b->description, "%s: '%s' waits %.1f%% of %s", what,
                  rules_leaf(w->name), 100.0 * share, rules_denom(c));
    double per = c->steps ? (double)c->steps : 1.0;
    rules_put(b->evidence, sizeof b->evidence, "blocked %s%s", DUR(w->blocked / per),
              c->steps ? "/step" : "");
    if (data && stall > w->stall)
        rules_put(b->evidence, sizeof b->evidence, " of %s%s in it",
                  DUR(stall / per), c->steps ? "/step" : "");
    else if (w->stall > w->blocked)
        rules_put(b->evidence, sizeof b->evidence, " and woken but waiting for a CPU %s%s",
                  DUR((w->stall - w->blocked) / per), c->steps ? "/step" : "");
    if (c->steps)
        rules_put(b->evidence, sizeof b->evidence, " over %llu steps",
                  (unsigned long long)c->steps);
    /* early: the evidence has a length; only where the wait may be the
     * disk's (a region named like I/O, an input stall): the figures are the
     * process's, a step, and a sleep beside a checkpoint is not their cause */
    if (disk && (io || data))
        rules_disk_evidence(c, b->evidence, sizeof b->evidence);
    double cover = w->on + w->off;
    if (cover > 0)
        rules_put(b->evidence, sizeof b->evidence, ", on CPU %.0f%% of its own time",
                  100.0 * w->on / (w->known > 0 ? w->known : cover));
    rules_put(b->evidence, sizeof b->evidence, ", %llu calls on thread '%s'",
              (unsigned long long)w->calls, c->train_name ? c->train_name : "?");
    if (gpu && w->gpu_wait > 0)
        rules_put(b->evidence, sizeof b->evidence, "; blocking CUDA calls inside %s",
                  DUR(w->gpu_wait));
    uint32_t wthreads = prism_analysis_workers(c->a)->threads;
    if (handed) {
        rules_put(b->evidence, sizeof b->evidence, "; the backward runs on '%s'", ho.thread);
        if (ho.oncpu >= 0)
            rules_put(b->evidence, sizeof b->evidence, " (on CPU %.0f%%)", 100.0 * ho.oncpu);
    } else if (c->loaders > wthreads) {
        char ob[128];
        others_busy(c, ob, sizeof ob);
        rules_put(b->evidence, sizeof b->evidence, "; other threads busy %.0f%% of the wait",
                  100.0 * busy);
        if (ob[0])
            rules_put(b->evidence, sizeof b->evidence, " (%s)", ob);
    } else if (wthreads) {
        /* worker processes' samples are their own files' passes: the
         * busy share of the wait is not measured for them (Inside says
         * how busy they were) */
        rules_put(b->evidence, sizeof b->evidence, "; %u DataLoader worker thread%s recorded",
                  wthreads, wthreads == 1 ? "" : "s");
    } else {
        rules_put(b->evidence, sizeof b->evidence, "; no other thread recorded");
    }
    if (lead)
        rules_put(b->evidence, sizeof b->evidence, "; where %.0f%% of steps begin",
                  100.0 * (double)w->lead / (double)c->steps);
    char *r = b->recommendation;
    size_t cap = sizeof b->recommendation;
    if (rules_compile_region(w->name))
        rules_compile_advice(r, cap);
    else if (handed)
        snprintf(r, cap, "Not idle: torch runs the backward of CUDA tensors on '%s' while "
                 "this thread waits; the time is that thread's CPU work (dispatching ops, "
                 "launching kernels). Cut it with fewer, larger kernels (CUDA graphs, "
                 "torch.compile, fused ops and optimizer, a larger batch); start with '%s'.",
                 ho.thread, ho.region);
    else if (gpu)
        snprintf(r, cap, c->python
                 ? "The CPU waits for the GPU here: avoid .item(), .cpu(), .numpy() and "
                   "printing tensors in the loop, keep metrics on the GPU and log every N "
                   "steps, copy with non_blocking=True from pinned memory."
                 : "The CPU waits for the GPU here: replace synchronous copies and "
                   "cudaDeviceSynchronize with async copies and events on a stream, and "
                   "read results back every N steps.");
    else if (data && disk && io_rd >= io_wr)
        snprintf(r, cap, "The input is read from disk while the training thread waits: "
                 "read in parallel (%s), keep the data on faster or local storage (copy it "
                 "to local NVMe or RAM), use a packed format read sequentially, or cache it "
                 "after the first epoch.",
                 c->python ? "more DataLoader workers, prefetch_factor" : "more loader threads");
    else if (io)
        snprintf(r, cap, "The thread waits while the process reads from disk: take the read "
                 "off the training path (prefetch it on a thread, read it once and cache it), "
                 "read less (a smaller or packed format), or move it to faster storage; "
                 "for checkpoints, write and read them asynchronously.");
    else if (data)
        snprintf(r, cap, c->python
                 ? "The training thread waits for batches: add DataLoader workers "
                   "(num_workers), pin_memory=True, prefetch_factor, persistent_workers=True; "
                   "move decoding/augmentation off the training path or onto the GPU."
                 : "The training thread waits for input: add loader threads, deepen the "
                   "prefetch queue, or make the loaders' work cheaper (decode, copies, "
                   "I/O) so a batch is ready when the step asks for it.");
    else if (busy >= OTHERS_BUSY && c->loaders > wthreads)
        snprintf(r, cap, "The thread sleeps here while its other threads run (busy %.0f%% of "
                 "the wait): it likely waits for their result or for a lock one of them "
                 "holds. Find which (perf lock / mutrace for locks, the other threads' regions "
                 "for handed-off work), then shorten that work or the lock's hold, or "
                 "overlap it with this thread's own work.", 100.0 * busy);
    else
        snprintf(r, cap, "The thread sleeps here while nothing else it needs is running: "
                 "find what it waits for (a lock: perf lock / mutrace; I/O: strace -f -T; "
                 "a condition or sleep) and take it off the training path: make it "
                 "asynchronous, batch it, or do it every N steps.");
    if (data && !(disk && io_rd >= io_wr))
        rules_input_workers(c, b, rules_in_window(c, hn),
                            c->steps ? (double)hn->calls / (double)c->steps : 0);
}

/*
 * cpu_contention: the training thread runnable but waiting for a CPU, over
 * all its regions in the steps (preempted, or woken and not yet running):
 * more threads want to run than there are cores.  Blames the region where
 * it waited most.
 */
static bool reported_hot(const rules_ctx *c, const char *name)
{
    for (size_t k = 0; name && k < c->n; k++) {
        const prism_bottleneck *b = &c->out[k];
        if (b->type == PRISM_BN_HOT_OPERATION && b->share > 0 && b->node < c->tree->count &&
            c->tree->nodes[b->node].name && !strcmp(c->tree->nodes[b->node].name, name))
            return true;
    }
    return false;
}

/* Who took the CPUs, in cores (prism_cpu_load), where the file says. */
static void load_evidence(char *ev, size_t cap, const prism_cpu_load *l)
{
    if (l->machine >= 0) {
        rules_put(ev, cap, "; %u cores ran %.1f: this process %.1f", l->ncpu, l->machine,
                  l->process);
        if (l->training >= 0)
            rules_put(ev, cap, " (training thread %.1f, other threads %.1f)", l->training,
                      l->other_threads + (l->unrecorded > 0 ? l->unrecorded : 0));
        rules_put(ev, cap, ", worker processes %.1f, other processes %.1f", l->workers,
                  l->others);
        return;
    }
    if (l->process >= 0 && l->training >= 0)
        rules_put(ev, cap, "; this process ran %.1f cores (training thread %.1f, other "
                  "threads %.1f)", l->process, l->training,
                  l->other_threads + (l->unrecorded > 0 ? l->unrecorded : 0));
    rules_put(ev, cap, "; worker processes and the rest of the machine: not recorded");
}

/* Advice from the largest taker of CPUs besides the training thread:
 * other processes, this process's worker processes or its own other
 * threads.  false without the machine's figures. */
static bool load_advice(char *r, size_t cap, const prism_cpu_load *l, bool python)
{
    if (l->machine < 0)
        return false;
    double threads = l->process - (l->training >= 0 ? l->training : 0);
    if (l->others >= l->workers && l->others >= threads)
        snprintf(r, cap, "Other processes took most of the CPUs (%.1f of %u cores): another "
                 "job on the node. Check the CPUs this job may use (taskset -p, the cgroup's "
                 "cpu.max / cpuset), ask for exclusive nodes, or move the other work off "
                 "them.", l->others, l->ncpu);
    else if (l->workers >= threads)
        snprintf(r, cap, python
                 ? "This process's worker processes took %.1f cores beside the training "
                   "thread: lower DataLoader num_workers (or make each batch cheaper) so the "
                   "training thread keeps a core."
                 : "This process's child processes took %.1f cores beside the training "
                   "thread: run fewer worker processes (or make their work cheaper) so the "
                   "training thread keeps a core.", l->workers);
    else
        snprintf(r, cap, python
                 ? "This process's own other threads took %.1f cores beside the training "
                   "thread: lower torch.set_num_threads() / OMP_NUM_THREADS (and interop "
                   "threads) so the training thread keeps a core."
                 : "This process's own other threads took %.1f cores beside the training "
                   "thread: use fewer worker threads (or lower OMP_NUM_THREADS) and keep one "
                   "core for the training thread.", threads);
    return true;
}

static void contention(rules_ctx *c, const wait_op *op, size_t nop)
{
    const prism_tree *t = c->train;
    double waitq = 0, best = 0, others_on = 0, others_known = 0, in_hot = 0, best_hot = 0;
    uint32_t where = PRISM_NO_NODE, where_hot = PRISM_NO_NODE;
    for (size_t i = 0; i < t->count; i++) {
        if (t->nodes[i].flags & PRISM_NODE_UNATTRIBUTED)
            continue;                   /* the regions' contention, as before */
        rules_self s = rules_self_of(c, t, (uint32_t)i);
        bool counted = false;           /* in a stall finding already */
        for (size_t k = 0; k < nop && !counted; k++)
            counted = op[k].emitted && op[k].stall > op[k].blocked && t->nodes[i].name &&
                      !strcmp(op[k].name, t->nodes[i].name);
        if (counted)
            continue;
        if (reported_hot(c, t->nodes[i].name)) {
            in_hot += s.waitq;          /* its hot_operation finding says it */
            if (s.waitq > best_hot) {
                best_hot = s.waitq;
                where_hot = (uint32_t)i;
            }
            continue;
        }
        waitq += s.waitq;
        if (s.waitq > best) {
            best = s.waitq;
            where = (uint32_t)i;
        }
    }
    if (where == PRISM_NO_NODE) {      /* all of it in hot operations */
        where = where_hot;
        best = best_hot;
    }
    double share = waitq / c->step_ns;
    if (!((waitq + in_hot) / c->step_ns >= CONTENTION_MIN) || where == PRISM_NO_NODE)
        return;
    share = share > 1 ? 1 : share;
    size_t busy_threads = 0;
    for (size_t i = 0; i < c->nthreads; i++) {
        const prism_tree *o = prism_analysis_thread_tree(c->a, i, NULL, NULL);
        if (!o || o == t)
            continue;
        double on = 0, known = 0;
        for (uint32_t r = o->first_root; r < o->count; r = o->nodes[r].next_sibling) {
            on += (double)o->nodes[r].oncpu_ns;
            known += (double)o->nodes[r].cpu_known_ns;
        }
        others_on += on;
        others_known += known;
        busy_threads += known > 0 && on > 0.5 * known;
    }
    prism_bottleneck *b = rules_add(c, PRISM_BN_CPU_CONTENTION, rules_by_share(share), share,
                                    prism_analysis_find(c->a, t->nodes[where].path_hash));
    if (!b)
        return;
    /* the share counts what no hot_operation finding says; the words give
     * the whole wait, and how much of it those findings hold */
    double all = (waitq + in_hot) / c->step_ns;
    if (in_hot > 0)
        rules_set(b->description, sizeof b->description,
                  "CPU contention: the training thread waits for a CPU %.1f%% of %s, %.1f%% "
                  "of it in the hot operations above", 100.0 * (all > 1 ? 1 : all),
                  rules_denom(c), 100.0 * in_hot / (waitq + in_hot));
    else
        rules_set(b->description, sizeof b->description,
                  "CPU contention: the training thread waits for a CPU %.1f%% of %s",
                  100.0 * share, rules_denom(c));
    /* the whole wait, as the headline gives it, then the part the hot
     * operations hold and where the rest is most; every figure in one unit
     * (trial 5: "0 ns/step ..., most in 'work' (5.00 ms)" beside a 22.9 %
     * headline read as three figures that cannot all be true) */
    double per = c->steps ? (double)c->steps : 1.0;
    const char *unit = c->steps ? "/step" : "";
    if (c->steps)
        rules_put(b->evidence, sizeof b->evidence, "runnable but not running %s/step over "
                  "%llu steps", DUR((waitq + in_hot) / per), (unsigned long long)c->steps);
    else
        rules_put(b->evidence, sizeof b->evidence, "runnable but not running %s",
                  DUR(waitq + in_hot));
    if (in_hot > 0)
        rules_put(b->evidence, sizeof b->evidence, ", %s%s of it in the hot operations above",
                  DUR(in_hot / per), unit);
    rules_put(b->evidence, sizeof b->evidence, ", most%s in '%s' (%s%s)",
              in_hot > 0 && where != where_hot ? " of the rest" : "",
              rules_leaf(t->nodes[where].name), DUR(best / per), unit);
    const prism_cpu_load *ld = prism_analysis_cpu_load(c->a);
    load_evidence(b->evidence, sizeof b->evidence, ld);
    if (others_known > 0 && ld->machine < 0)
        rules_put(b->evidence, sizeof b->evidence,
                  "; %zu other thread%s on CPU more than half the time (%zu recorded beside it)",
                  busy_threads, busy_threads == 1 ? "" : "s", c->loaders);
    if (load_advice(b->recommendation, sizeof b->recommendation, ld, c->python))
        return;
    rules_set(b->recommendation, sizeof b->recommendation, c->python
              ? "More threads want to run than there are cores: lower DataLoader num_workers, "
               "torch.set_num_threads() / OMP_NUM_THREADS and the processes per node so the "
               "training thread keeps a core; check for other jobs on the node."
              : "More threads want to run than there are cores: use fewer worker threads (or "
               "lower OMP_NUM_THREADS), keep one core for the training thread (pin it), and "
               "check for other jobs on the node.");
}

/* The training thread's stalls, heaviest first. */
void rules_wait(rules_ctx *c)
{
    if (!c->cpu)
        return;                         /* measured with CPU samples only */
    if (!c->train || !(c->step_ns > 0))
        return;
    wait_op *op = NULL;
    rules_names ix;
    size_t nop = 0, cap = 0;
    rules_names_init(&ix);
    collect(c, &op, &cap, &nop, &ix);
    for (size_t k = 0; k < nop; k++) {
        /* woken and not yet running is part of a wait only where the
         * region mostly waits: blocked longer than it ran; and no more of
         * it than the blocked time itself (under contention a region's run
         * queue is mostly preemption, which is no wait of the program's:
         * cpu_contention says it) */
        bool waits = op[k].known > 0 && op[k].blocked > op[k].on;
        double woken = op[k].waitq < op[k].blocked ? op[k].waitq : op[k].blocked;
        op[k].stall = op[k].blocked + (waits ? woken : 0);
    }
    const prism_gpu_stats *g = prism_analysis_gpu(c->a);
    for (size_t found = 0; found < WAIT_MAX; found++) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < nop; k++)
            if (op[k].calls && !op[k].tried &&
                (best == SIZE_MAX || op[k].stall > op[best].stall))
                best = k;
        if (best == SIZE_MAX || !(op[best].stall >= WAIT_MIN * c->step_ns))
            break;
        op[best].tried = true;
        if (!(op[best].blocked >= WAIT_MIN * c->step_ns))
            continue;                   /* a stall needs measured blocked time */
        /* a region that mostly waited for a CPU: a run-queue wait still in
         * progress at a sample reads as blocked until a later sample
         * reports it, so blocked time under a quarter of its run-queue
         * time is within that error, not a wait of the program's */
        if (op[best].blocked < 0.25 * op[best].waitq)
            continue;
        /* compiling waits for its compile workers: part of the compile,
         * which its hot_operation finding tells whole */
        if (rules_compile_region(op[best].name) && reported_hot(c, op[best].name))
            continue;
        wait_emit(c, &op[best], g);
        op[best].emitted = true;
    }
    contention(c, op, nop);
    free(op);
    rules_names_free(&ix);
}
