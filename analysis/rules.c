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
 *   (rules_hot.c)   hot_operation: the training thread's operations by
 *                   their own time, and the heaviest op beside the loop
 *   memory_leak     host / GPU leak verdict (prism_leak_fit: a fast slope
 *                   above leak_mb, or a steady significant rise); HIGH when
 *                   it projects > 1 GB per 1000 steps or grew > 50 %, else
 *                   MEDIUM; ranked first within its severity
 *   dropped_events  dropped records or a damaged file, by the fraction lost:
 *                   LOW < 0.1 %, MEDIUM < 1 %, HIGH >= 1 %; says whether the
 *                   drops were whole regions (the tree intact) or single
 *                   events (files before 1.1)
 *   (rules_stall.c) cpu_gpu_sync, data_loading, gpu_idle, launch_bound,
 *                   memory_bound (copies; work counters below the ridge)
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules.h"
#include "array.h"             /* pb_qsort */

#define WRAPPER_SELF 0.05       /* a wrapper's self time is below this share */
#define WRAPPER_HOLDS 0.9       /* ... and it holds this much of its parent  */

/* ---- helpers ---------------------------------------------------------- */

prism_severity rules_by_share(double s)
{
    return s > 0.30 ? PRISM_SEV_HIGH : s >= 0.10 ? PRISM_SEV_MEDIUM : PRISM_SEV_LOW;
}

/* b before c?  Severity, then a memory leak first, then share. */
static bool before(const prism_bottleneck *b, const prism_bottleneck *c)
{
    if (b->severity != c->severity)
        return b->severity > c->severity;
    /* a leak first within its severity (it ends in an OOM), whatever the
     * others' shares; two leaks by slope */
    if ((b->type == PRISM_BN_MEMORY_LEAK) != (c->type == PRISM_BN_MEMORY_LEAK))
        return b->type == PRISM_BN_MEMORY_LEAK;
    return b->share > c->share;
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

#define TEXT_MAX (2 * PRISM_MAX_STRING_BYTES + 1024)
#define QUOTED_KEEP 12          /* a name keeps at least this many bytes */

/* The longest quoted span of s ('...', quotes paired in order) longer
 * than QUOTED_KEEP: its inside [*at, *at + *len); false when none. */
static bool longest_quoted(const char *s, size_t *at, size_t *len)
{
    size_t best = 0;
    for (const char *p = strchr(s, '\''); p;) {
        const char *q = strchr(p + 1, '\'');
        if (!q)
            break;
        size_t l = (size_t)(q - p - 1);
        if (l > QUOTED_KEEP && l > best) {
            best = l;
            *at = (size_t)(p + 1 - s);
            *len = l;
        }
        p = strchr(q + 1, '\'');
    }
    return best > 0;
}

/* Back from i to the start of a UTF-8 code point, never before lo (a
 * stray continuation byte at the name's start is a character of its own). */
static size_t cp_start(const char *s, size_t i, size_t lo)
{
    while (i > lo && ((unsigned char)s[i] & 0xc0) == 0x80)
        i--;
    return i;
}

/* buf followed by add, written back into buf (cap bytes): quoted names
 * lose their middles before the text loses its end. */
static void fit_text(char *buf, size_t cap, const char *add)
{
    char t[TEXT_MAX];
    if (!cap)
        return;
    snprintf(t, sizeof t, "%s%s", buf, add);
    size_t n = strlen(t), at, l;
    while (n + 1 > cap && longest_quoted(t, &at, &l)) {
        size_t over = n + 1 - cap, keep = l > over + 3 ? l - over - 3 : 0;
        if (keep < QUOTED_KEEP)
            keep = QUOTED_KEEP;
        size_t head = cp_start(t, at + (keep + 1) / 2, at) - at;
        size_t tail = at + l - cp_start(t, at + l - keep / 2, at + head);
        if (head + 3 + tail >= l)
            break;                      /* nothing to gain */
        memmove(t + at + head + 3, t + at + l - tail, n - (at + l - tail) + 1);
        memcpy(t + at + head, "...", 3);
        n = strlen(t);
    }
    snprintf(buf, cap, "%s", t);
}

void rules_put(char *buf, size_t cap, const char *fmt, ...)
{
    char add[TEXT_MAX];
    size_t len = strlen(buf);
    if (len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(add, sizeof add, fmt, ap);
    va_end(ap);
    fit_text(buf, cap, add);
}

void rules_set(char *buf, size_t cap, const char *fmt, ...)
{
    char add[TEXT_MAX];
    if (!cap)
        return;
    buf[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(add, sizeof add, fmt, ap);
    va_end(ap);
    fit_text(buf, cap, add);
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
    if (!n)
        return s && *s;
    /* strncasecmp only where the first letter matches: the same answer,
     * without a library call per byte of every region name */
    int first = tolower((unsigned char)needle[0]);
    for (; s && *s; s++)
        if (tolower((unsigned char)*s) == first && !strncasecmp(s, needle, n))
            return true;
    return false;
}

/* "sync" at a word's start ("cuda_sync", "sync_grads", "Event.sync"):
 * not the end of fsync, msync, fdatasync or async, which are no GPU's */
static bool sync_word(const char *name)
{
    for (const char *p = name; p && *p; p++)
        if (!strncasecmp(p, "sync", 4) && (p == name || !isalpha((unsigned char)p[-1])))
            return true;
    return false;
}

bool rules_sync_like(const char *name)
{
    static const char *const pat[] = { "synchronize", ".item", "wait_gpu", "cuda_sync" };
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++)
        if (rules_icontains(name, pat[i]))
            return true;
    return sync_word(name);
}


bool rules_data_like(const char *name)
{
    return rules_icontains(name, "data") || rules_icontains(name, "load");
}

bool rules_wait_like(const char *name)
{
    static const char *const fn[] = { "acquire", "wait", "wait_for", "select", "poll", "sleep" };
    if (!name)
        return false;
    const char *w = name, *end;
    static const char meth[] = "<built-in method ", func[] = "<built-in function ";
    if (!strncmp(name, meth, sizeof meth - 1)) {            /* "...FUNC of X object at ..>" */
        w = name + sizeof meth - 1;
        end = strchr(w, ' ');
    } else if (!strncmp(name, func, sizeof func - 1)) {     /* "<built-in function FUNC>" */
        w = name + sizeof func - 1;
        end = strchr(w, '>');
    } else {
        const char *frame = NULL;                           /* "FILE(LINE): FUNC" */
        for (const char *p = strstr(name, "): "); p; p = strstr(p + 1, "): "))
            frame = p;
        w = frame ? frame + 3 : name;
        end = NULL;
    }
    size_t len = end ? (size_t)(end - w) : strlen(w);
    for (size_t i = 0; i < sizeof fn / sizeof *fn; i++)
        if (len == strlen(fn[i]) && !memcmp(w, fn[i], len))
            return true;
    return false;
}

bool rules_in_wait(const prism_tree *t, uint32_t i)
{
    for (uint32_t k = i, hops = 0; t && k < t->count && hops < 4096; k = t->nodes[k].parent, hops++)
        if (rules_wait_like(t->nodes[k].name))
            return true;
    return false;
}

/* Region time of thread tree t less its time in wait-like regions (each
 * outermost one's whole time); *waits: any was left out. */
static uint64_t busy_ns(const prism_tree *t, bool *waits)
{
    uint64_t wait = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        if (!rules_wait_like(n->name) ||
            (n->parent != PRISM_NO_NODE && rules_in_wait(t, n->parent)))
            continue;
        wait += n->total_ns;
        *waits = true;
    }
    return wait < t->total_ns ? t->total_ns - wait : 0;
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
        if ((best == PRISM_NO_NODE || c->tree->nodes[k].total_ns > c->tree->nodes[best].total_ns) &&
            !prism_analysis_is_op(c->a, c->tree->nodes[k].name))
            best = k;                   /* (an operator ran in a few steps only) */
    return best;
}

void rules_worth(const rules_ctx *c, prism_bottleneck *b, double wait_ns)
{
    if (!b || !c->steps || !(c->step_ns > 0) || !(wait_ns > 0))
        return;
    double step = c->step_ns / (double)c->steps, rest = step - wait_ns / (double)c->steps;
    if (!(rest > 0) || rest >= step)
        return;
    b->step_ns = step;
    b->step_without_ns = rest;
}

const char *rules_denom(const rules_ctx *c)
{
    return c->steps ? "step time" : "run time";
}

uint64_t rules_in_window_ns(const rules_ctx *c, const prism_node *n)
{
    return c->steps ? n->in_step_ns : n->total_ns;
}

double rules_in_window(const rules_ctx *c, const prism_node *n)
{
    return (double)rules_in_window_ns(c, n);
}

static double minus(double x, double y)
{
    return x > y ? x - y : 0.0;
}

rules_self rules_self_of(const rules_ctx *c, const prism_tree *t, uint32_t i)
{
    rules_self s = { 0 };
    const prism_node *n = &t->nodes[i];
    double win = rules_in_window(c, n);
    s.known = (double)n->cpu_known_ns;
    s.on = (double)n->oncpu_ns;
    s.runq = (double)n->runq_ns;
    s.off = (double)n->offcpu_ns;
    s.busy = (double)n->offcpu_busy_ns;
    for (uint32_t k = n->first_child; k < t->count; k = t->nodes[k].next_sibling) {
        const prism_node *ch = &t->nodes[k];
        win -= rules_in_window(c, ch);
        s.known -= (double)ch->cpu_known_ns;
        s.on -= (double)ch->oncpu_ns;
        s.runq -= (double)ch->runq_ns;
        s.off -= (double)ch->offcpu_ns;
        s.busy -= (double)ch->offcpu_busy_ns;
    }
    s.ns = minus(win, 0);
    s.known = minus(s.known, 0);
    s.on = minus(s.on, 0);
    s.runq = minus(s.runq, 0);
    s.off = minus(s.off, 0);
    s.busy = minus(s.busy, 0);
    /* the covered part's split, applied to the time in the window */
    double cover = s.on + s.runq + s.off;
    if (c->cpu && cover > 0) {
        s.blocked = s.ns * s.off / cover;
        s.waitq = s.ns * s.runq / cover;
        s.work = s.ns - s.blocked - s.waitq;
    } else {
        s.work = s.ns;
    }
    return s;
}

/* Does root r of the all-threads tree hold (nearly) all of some thread's
 * time?  Per-thread trees hash paths the same way as the merged one. */
static bool root_holds_thread(const rules_ctx *c, const prism_node *r)
{
    for (size_t i = 0; i < c->nthreads; i++) {
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, NULL);
        uint64_t total = t ? t->total_ns : 0;  /* its regions' time */
        for (uint32_t k = t ? t->first_root : PRISM_NO_NODE; t && k < t->count;
             k = t->nodes[k].next_sibling)
            if (t->nodes[k].flags & PRISM_NODE_UNATTRIBUTED)
                total -= t->nodes[k].total_ns < total ? t->nodes[k].total_ns : total;
        for (uint32_t k = t ? t->first_root : PRISM_NO_NODE; t && k < t->count;
             k = t->nodes[k].next_sibling)
            if (t->nodes[k].path_hash == r->path_hash && total &&
                (double)t->nodes[k].total_ns >= WRAPPER_HOLDS * (double)total)
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

/* ---- memory_leak ------------------------------------------------------ */

/* HIGH when the leak threatens the run: at this rate it takes more than
 * 1 GB per 1000 steps (an epoch of a small job; the margin most jobs keep
 * below their memory limit), or memory already grew by half. */
#define LEAK_HIGH_MB 1024.0
#define LEAK_HIGH_STEPS 1000.0
#define LEAK_HIGH_PCT 50.0

/* What to do, for the program the profile is: a Python (PyTorch) program
 * gets Python advice, anything else C/C++ advice; GPU memory CUDA advice. */
static void leak_advice(const rules_ctx *c, bool gpu, bool allocs, prism_bottleneck *b)
{
    char *r = b->recommendation;
    size_t cap = sizeof b->recommendation;
    bool py = c->python;        /* python_profile(): argv, producer, aten:: ops */
    if (allocs && !py)
        rules_put(r, cap, "Device memory is allocated every step (cudaMalloc) and never "
                  "freed: cudaFree it when the step is done, or allocate it once before the "
                  "loop and reuse it (prism-top dump lists each allocation: size, address, "
                  "time).");
    else if (gpu)
        rules_put(r, cap, "GPU memory in use grows every step: free (cudaFree) or reuse what "
                  "each step allocates, and compare the caching allocator's statistics "
                  "(allocated vs reserved%s) from step to step to see what stays.",
                  py ? ", torch.cuda.memory_summary()" : "");
    else if (py)
        rules_put(r, cap, "Memory grows every step: don't keep tensors with their graphs in "
                  "lists (append loss.item() or loss.detach()), check closures capturing "
                  "tensors, close figures (plt.close(fig)), bound caches and history lists; "
                  "tracemalloc snapshots taken a few steps apart show what grows.");
    else
        rules_put(r, cap, "Memory grows every step: free what each step allocates, bound "
                  "caches and history buffers, and check per-step containers (vectors, maps, "
                  "queues) that only grow; valgrind --leak-check=full, heaptrack or "
                  "LeakSanitizer (-fsanitize=address) name the allocation site.");
}

/* "812.5 MB", "2.12 GB" */
static void mb_text(char *buf, size_t cap, double mb)
{
    if (mb >= 1024.0 || mb <= -1024.0)
        snprintf(buf, cap, "%.2f GB", mb / 1024.0);
    else
        snprintf(buf, cap, "%.1f MB", mb);
}

/* A slope with enough digits to show a slow leak: "0.12", "3.0", "25". */
static void slope_text(char *buf, size_t cap, double mb)
{
    snprintf(buf, cap, mb < 1.0 ? "%.2f" : mb < 100.0 ? "%.1f" : "%.0f", mb);
}

/* what: the series in words ("host RSS", "GPU allocations", "GPU used"). */
static void rule_leak(rules_ctx *c, const prism_leak *l, double leak_mb, bool gpu,
                      const char *what)
{
    if (!l->leak)
        return;
    bool allocs = gpu && l == &c->mem->gpu_alloc;
    bool high = l->slope_mb_per_step * LEAK_HIGH_STEPS > LEAK_HIGH_MB ||
                l->growth_pct > LEAK_HIGH_PCT;
    prism_bottleneck *b = rules_add(c, PRISM_BN_MEMORY_LEAK,
                                    high ? PRISM_SEV_HIGH : PRISM_SEV_MEDIUM,
                                    l->slope_mb_per_step, PRISM_NO_NODE);
    if (!b)
        return;
    b->path_hash = gpu ? RULES_HASH_GPU_MEMORY : RULES_HASH_HOST_MEMORY;
    char slope[32], grew[32], then[32];
    slope_text(slope, sizeof slope, l->slope_mb_per_step);
    mb_text(grew, sizeof grew, l->growth_mb);
    mb_text(then, sizeof then, l->projected_mb);
    rules_set(b->description, sizeof b->description, "Memory leak: %s MB/step (%s)", slope,
              what);
    if (allocs)     /* the file's own allocation records: exact at every step end */
        rules_put(b->evidence, sizeof b->evidence, "CUDA allocations not freed grew %s", grew);
    else if (gpu && c->mem->have_gpu_alloc)     /* used grows, the allocations do not */
        rules_put(b->evidence, sizeof b->evidence, "grew %s while the recorded CUDA "
                  "allocations did not (reused from a caching allocator's pool, or "
                  "allocated outside cudaMalloc)", grew);
    else
        rules_put(b->evidence, sizeof b->evidence, "grew %s", grew);
    if (isfinite(l->growth_pct))
        rules_put(b->evidence, sizeof b->evidence, " (+%.1f%%)", l->growth_pct);
    rules_put(b->evidence, sizeof b->evidence,
              " over %llu steps; slope %.2f +/- %.2f MB/step, r2 %.2f, %zu %s; "
              "%s in %llu more steps%s; %s (threshold %.1f MB/step)",
              (unsigned long long)l->span_steps, l->slope_mb_per_step, l->slope_se_mb, l->r2,
              l->points, allocs ? "step ends" : "step samples", then, (unsigned long long)l->projection_steps,
              l->projection_epoch ? " (end of epoch)" : "", l->reason ? l->reason : "",
              leak_mb);
    leak_advice(c, gpu, allocs, b);
}

/* ---- dropped_events --------------------------------------------------- */

static prism_severity by_loss(double f)
{
    return f < 0.001 ? PRISM_SEV_LOW : f < 0.01 ? PRISM_SEV_MEDIUM : PRISM_SEV_HIGH;
}

static void rule_host_leak(rules_ctx *c)
{
    if (c->mem)
        rule_leak(c, &c->mem->host, c->leak_mb, false, prism_memory_host_name(c->mem, false));
}

/* The GPU verdict: the CUDA allocations' when the file recorded them (exact),
 * else GPU memory used. */
static void rule_gpu_leak(rules_ctx *c)
{
    const prism_leak *l = c->mem ? prism_memory_gpu_leak(c->mem, NULL) : NULL;
    if (l)
        rule_leak(c, l, c->leak_mb, true,
                  l == &c->mem->gpu_alloc ? "GPU allocations" : "GPU memory");
}

static void rule_dropped(rules_ctx *c)
{
    const prism_gpu_stats *g = c->gpu;
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
    bool whole = true;
    uint64_t placed = 0, regions = prism_analysis_dropped_regions(c->a, &whole, &placed);
    if (cpu + gpu)
        rules_put(b->description, sizeof b->description,
                  "Dropped events: %llu (%.2f%% of events)", (unsigned long long)(cpu + gpu),
                  100.0 * drop);
    if (cpu && whole && regions)
        rules_put(b->description, sizeof b->description,
                  ", %llu whole regions not recorded; the call tree is intact",
                  (unsigned long long)regions);
    if (bad)
        rules_put(b->description, sizeof b->description, "%samaged file: %llu bytes skipped",
                  cpu + gpu ? "; d" : "D", (unsigned long long)rs->skipped_bytes);
    rules_put(b->evidence, sizeof b->evidence, "dropped %llu CPU, %llu GPU of %llu events",
              (unsigned long long)cpu, (unsigned long long)gpu, (unsigned long long)events);
    if (cpu && whole)
        rules_put(b->evidence, sizeof b->evidence,
                  "; whole regions: %llu (enter, exit, all inside; %llu counted under their "
                  "parent): every path in the tree ran, every duration is true; calls and "
                  "totals leave them out",
                  (unsigned long long)regions, (unsigned long long)placed);
    else if (cpu)
        rules_put(b->evidence, sizeof b->evidence,
                  "; single CPU events were dropped (a writer before format 1.1): the nesting "
                  "after a drop may be wrong");
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
    size_t any_idx = SIZE_MAX;
    c->nthreads = prism_analysis_thread_count(c->a);
    c->train_idx = prism_analysis_training_thread(c->a);
    if (c->train_idx < c->nthreads)
        c->train = prism_analysis_thread_tree(c->a, c->train_idx, NULL, &c->train_name);
    for (size_t i = 0; i < c->nthreads && !c->train; i++) {
        const char *name = NULL;
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, &name);
        if (!t)
            continue;
        if (!any || t->total_ns > any->total_ns) {
            any = t;
            any_name = name;
            any_idx = i;
        }
        if (loader_name(name))
            continue;
        if (c->train_idx == SIZE_MAX || t->total_ns > c->train->total_ns) {
            c->train = t;
            c->train_name = name;
            c->train_idx = i;
        }
    }
    if (!c->train) {            /* every thread looks like a loader */
        c->train = any;
        c->train_name = any_name;
        c->train_idx = any_idx;
    }
    for (size_t i = 0; i < c->nthreads; i++) {
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, NULL);
        if (t && t != c->train) {
            c->loaders++;
            c->loader_ns += t->total_ns;
            c->loader_busy_ns += busy_ns(t, &c->loader_waits);
        }
    }
}

/* The wall time of the sampled steps (their regions are recorded), else
 * of the run (prism_analysis_step_denominator). */
static void find_denominator(rules_ctx *c)
{
    c->step_ns = prism_analysis_step_denominator(c->a, &c->steps);
    if (!(c->step_ns > 0) && c->train)
        c->step_ns = (double)c->train->total_ns;
}

/* A Python program?  Its command line, producer or torch operator names. */
static bool python_profile(const rules_ctx *c)
{
    const prism_header *h = prism_analysis_header(c->a);
    if (h && h->producer && (rules_icontains(h->producer, "python") ||
                             rules_icontains(h->producer, "torch")))
        return true;
    for (size_t i = 0; h && h->argv && i < h->argc && i < 3; i++) {
        const char *arg = h->argv[i] ? h->argv[i] : "";
        const char *base = strrchr(arg, '/');
        base = base ? base + 1 : arg;
        size_t len = strlen(arg);
        if (!strncmp(base, "python", 6) || (len > 3 && !strcmp(arg + len - 3, ".py")))
            return true;
    }
    for (size_t i = 0; c->tree && i < c->tree->count && i < 4096; i++)
        if (c->tree->nodes[i].name && !strncmp(c->tree->nodes[i].name, "aten::", 6))
            return true;
    return false;
}

/* A DataLoader with worker processes: its iterator's name in a region. */
static bool loader_processes(const rules_ctx *c)
{
    for (size_t i = 0; i < c->nops; i++)
        if (c->ops[i].name && strstr(c->ops[i].name, "_MultiProcessingDataLoaderIter"))
            return true;
    return false;
}

/* Worker processes with a worker file: distinct pids of worker threads. */
static size_t worker_processes(const rules_ctx *c)
{
    size_t n = 0, nt = prism_analysis_thread_count(c->a);
    uint64_t seen[64];
    for (size_t i = 0; i < nt; i++) {
        uint64_t pid;
        if (!prism_analysis_thread_worker(c->a, i, NULL, &pid))
            continue;
        bool dup = false;
        for (size_t k = 0; k < n && k < 64 && !dup; k++)
            dup = seen[k] == pid;
        if (!dup) {
            if (n < 64)
                seen[n] = pid;
            n++;
        }
    }
    return n;
}

/* One finding per cause: the same type blaming the same region twice
 * (two rules seeing one stall) keeps the more important. */
static size_t dedupe(prism_bottleneck *out, size_t n)
{
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t j = 0; j < keep && !dup; j++)
            dup = out[j].type == out[i].type && out[i].path_hash &&
                  out[j].path_hash == out[i].path_hash;
        if (!dup)
            out[keep++] = out[i];
    }
    return keep;
}

/* Every rule, in the order they run (rules.h); the findings are sorted
 * by importance afterwards. */
static void (*const rules_table[])(rules_ctx *c) = {
    rules_hot,              /* hot_operation (training thread)           */
    rules_beside,           /* the heaviest op of each other thread       */
    rule_host_leak,         /* memory_leak: host RSS                      */
    rule_gpu_leak,          /* memory_leak: GPU memory                    */
    rules_wait,             /* off_cpu_wait, cpu_contention (CPU samples) */
    rules_sync,             /* cpu_gpu_sync                               */
    rules_data,             /* data_loading (without CPU samples)         */
    rules_gpu_idle,         /* gpu_idle                                   */
    rules_launch,           /* launch_bound                               */
    rules_memory_bound,     /* memory_bound                               */
    rules_intensity,        /* memory_bound from work counters            */
    rule_dropped,           /* dropped_events                             */
    rules_slow_steps,       /* slow_steps (rules_steps.c)                 */
    rules_unattributed,     /* unattributed_time (rules_stacks.c)         */
};

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
    find_denominator(&c);
    c.cpu = prism_analysis_cpu_present(a);
    c.python = python_profile(&c);
    c.loader_procs = loader_processes(&c);
    c.worker_procs = worker_processes(&c);
    c.job = prism_analysis_job_rank(a, &c.rank, &c.world);
    c.threshold_pct = threshold_pct < 0 ? 10.0 : threshold_pct;
    c.leak_mb = leak_mb < 0 ? 10.0 : leak_mb;
    c.gpu = prism_analysis_gpu(a);
    c.mem = prism_analysis_memory(a);
    for (size_t i = 0; i < sizeof rules_table / sizeof rules_table[0]; i++)
        rules_table[i](&c);

    pb_qsort(out, c.n, sizeof *out, cmp_bn);
    return dedupe(out, c.n);
}
