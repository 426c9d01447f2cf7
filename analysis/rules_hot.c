/*
 * rules_hot.c - hot_operation: each operation of the training thread above
 * threshold_pct of the step time by its own wall time in the steps (every
 * path of a name together; one that mostly blocks counts only the time it
 * ran or wanted to run: its wait is a stall), the evidence splitting it
 * into running, waiting for a CPU and blocked (mostly waiting for a CPU:
 * compute starved by contention, said on the region),
 * wrappers skipped (rules_is_wrapper), at most HOT_MAX; and on the other
 * threads each one's heaviest operation, LOW: it runs beside the training
 * loop (data_loading and the wait rules judge whether it stalls it).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rules.h"

#define HOT_MAX 16

static bool compute_like(const char *name)
{
    static const char *const pat[] = { "matmul", "gemm", "conv", "attention", "linear", "mlp" };
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++)
        if (rules_icontains(name, pat[i]))
            return true;
    return false;
}

static bool in_input_pipeline(const rules_ctx *c, uint32_t node)
{
    for (const prism_node *n = rules_node(c, node); n; n = rules_node(c, n->parent))
        if (rules_input_like(n->name))
            return true;
    return false;
}

/* The operator window saw inside it: its heaviest operator's share of its
 * operators' time (both from the window's steps only), appended to r.
 * False when no operator ran under it. */
static bool op_advice(const rules_ctx *c, uint32_t node, char *r, size_t cap)
{
    const prism_node *n = rules_node(c, node);
    uint64_t sum = 0;
    const prism_node *best = NULL;
    for (uint32_t k = n ? n->first_child : PRISM_NO_NODE; rules_node(c, k);
         k = c->tree->nodes[k].next_sibling) {
        const prism_node *ch = &c->tree->nodes[k];
        if (!prism_analysis_is_op(c->a, ch->name))
            continue;
        sum += ch->total_ns;
        if (!best || ch->total_ns > best->total_ns)
            best = ch;
    }
    if (!best || !sum)
        return false;
    uint64_t w = prism_analysis_steps(c->a)->op_steps;
    rules_put(r, cap, "%sIn the operator window (%" PRIu64 " step%s), %.0f%% of its operators' "
              "time is in '%s' (%s a step).", *r ? " " : "", w, w == 1 ? "" : "s",
              100.0 * (double)best->total_ns / (double)sum, best->name,
              DUR((double)best->total_ns / (double)(w ? w : 1)));
    return true;
}

bool rules_compile_region(const char *name)
{
    return name && !strcmp(rules_leaf(name), "torch.compile (compile)");
}

void rules_compile_advice(char *r, size_t cap)
{
    rules_put(r, cap, "Compilation, not training: torch.compile compiles at the first calls and "
                      "again whenever a guard fails (TORCH_LOGS=recompiles says why). A long run "
                      "amortises it; if it recurs, keep shapes fixed or mark them dynamic "
                      "(torch._dynamo.mark_dynamic); the compile caches shorten the next run's.");
}

static void hot_advice(const rules_ctx *c, const char *name, uint32_t node, prism_bottleneck *b)
{
    const char *nm = rules_leaf(name);
    char *r = b->recommendation;
    size_t cap = sizeof b->recommendation;
    bool py = c->python;
    if (rules_compile_region(nm)) {
        rules_compile_advice(r, cap);
        return;
    }
    /* a program already under torch.autocast (INFO torch.autocast) is not
     * told to use mixed precision (a user's trial: its only concrete fix) */
    const char *amp = c->a->torch_autocast;
    if ((rules_icontains(nm, "forward") || rules_icontains(nm, "fwd")) && py && *amp)
        rules_put(r, cap, "It already runs under torch.autocast (%s): fuse operators or "
                  "compile the model (torch.compile), and check which of its operators "
                  "autocast keeps in float32.", amp);
    else if (rules_icontains(nm, "forward") || rules_icontains(nm, "fwd"))
        rules_put(r, cap, py ? "Use mixed precision (torch.autocast, bf16/fp16), fuse operators "
                               "or compile the model (torch.compile)."
                             : "Reduce the work per call: lower precision where accuracy "
                               "allows, fuse passes over the same data, vectorise.");
    else if ((rules_icontains(nm, "backward") || rules_icontains(nm, "bwd")) && py)
        rules_put(r, cap, "%s; where the model checkpoints activations "
                  "(torch.utils.checkpoint), their forwards run again in this time: drop it "
                  "where memory allows; check retain_graph is not set needlessly.", *amp ? "Its forward already runs under torch.autocast: "
                                        "compile the model (torch.compile) to fuse its backward"
                                      : "Use mixed precision");
    else if (rules_icontains(nm, "backward") || rules_icontains(nm, "bwd"))
        rules_put(r, cap, "Reduce the work per call: reuse what the forward pass computed "
                          "instead of recomputing it, fuse passes, vectorise.");
    else if (rules_icontains(nm, "optim") && py)
        rules_put(r, cap, "Use a fused or foreach optimizer (e.g. AdamW(fused=True) or "
                          "foreach=True) and zero_grad(set_to_none=True).");
    else if (rules_sync_like(nm))
        rules_put(r, cap, "The CPU waits for the GPU here: see cpu_gpu_sync (no .item()/.cpu() "
                          "in the loop, log every N steps).");
    else if (in_input_pipeline(c, node) && (c->worker_procs || c->loader_procs) && py)
        /* the batches are made in the workers: what the training thread
         * runs here is taking them over (a user's trial: its samples sat in
         * rebuild_storage_fd -> ... -> answer_challenge, 2 workers 17 %
         * busy, and the advice was to move the work to workers) */
        rules_put(r, cap, "The workers make the batches; this is taking them over "
                          "(unpickling, a connection per tensor under torch's file_descriptor "
                          "sharing, pin_memory's copy): return fewer, larger tensors a batch, "
                          "or set_sharing_strategy('file_system').");
    else if (in_input_pipeline(c, node))
        rules_put(r, cap, "Input pipeline work on the training thread: move it to loader "
                          "threads or processes so it overlaps the step.");
    else if (compute_like(nm))
        rules_put(r, cap, py ? "Compute-bound: use mixed precision or TF32, larger batches "
                               "and fused kernels (e.g. scaled_dot_product_attention, "
                               "torch.compile)."
                             : "Compute-bound: a faster kernel (BLAS, vectorised or blocked "
                               "loops), lower precision, or fewer calls with more work each.");
    const prism_node *n = rules_node(c, node);
    const prism_node *ch = rules_node(c, rules_heaviest_child(c, node));
    bool child = ch && n->total_ns;
    if (child)
        rules_put(r, cap, "%sIts own code takes the time; its heaviest child '%s' has %.1f%% "
                  "of it.", *r ? " " : "", rules_leaf(ch->name),
                  100.0 * (double)ch->total_ns / (double)n->total_ns);
    bool empty = !*r;
    if (!op_advice(c, node, r, cap) && !child && empty)
        rules_put(r, cap, "It has no instrumented children: add regions inside '%s' or "
                  "sample it (perf, py-spy) to see where the time goes.", nm);
}

/* Inside a region named like data / load (rules_data's regions)? */
static bool in_data_pipeline(const prism_tree *t, uint32_t i)
{
    for (uint32_t q = i; q < t->count; q = t->nodes[q].parent)
        if (rules_data_like(t->nodes[q].name))
            return true;
    return false;
}

/* The same with the answers kept per node (memo[]: 0 unknown, 1 no, 2 yes),
 * so that each node's name is tested once, not once per descendant. */
static bool in_data_pipeline_memo(const prism_tree *t, uint32_t i, uint8_t *memo)
{
    uint32_t q = i;
    bool yes = false;
    for (; q < t->count && !memo[q]; q = t->nodes[q].parent)
        if (rules_data_like(t->nodes[q].name)) {
            yes = true;
            break;
        }
    if (!yes && q < t->count)
        yes = memo[q] == 2;
    /* every node walked up to q shares the answer: a yes at q is theirs
     * (an ancestor is data-like); a no means none of them is */
    for (uint32_t r = i; r < t->count && r != q; r = t->nodes[r].parent)
        memo[r] = yes ? 2 : 1;
    if (q < t->count && !memo[q])
        memo[q] = yes ? 2 : 1;
    return yes;
}

/* An operation of the training thread: every path of one name. */
typedef struct hot_op {
    const char *name;
    double work, ns, on_known, known;   /* self in the window; CPU cover */
    double blocked, waitq;      /* self in the window: blocked, run queue */
    uint64_t calls, paths;
    uint32_t node;              /* heaviest path, training thread tree */
    double node_work;
} hot_op;

/* Every name of the training thread's tree with its own time into *opp
 * (grown as names come). */
static void hot_collect(const rules_ctx *c, hot_op **opp, size_t *cap, size_t *nop,
                        rules_names *ix)
{
    const prism_tree *t = c->train;
    uint8_t *memo = t && !c->cpu ? calloc(t->count ? t->count : 1, 1) : NULL;
    *nop = 0;
    for (size_t i = 0; t && i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        rules_self s = rules_self_of(c, t, (uint32_t)i);
        /* a sync's time is the GPU's, whether it spins or sleeps: the
         * cpu_gpu_sync rules judge it */
        if (!n->name || !(s.ns > 0) || rules_sync_like(rules_leaf(n->name)))
            continue;
        /* `(outside regions)` is no operation of the program's: the
         * slow_steps evidence and the explorer show it */
        if (n->flags & PRISM_NODE_UNATTRIBUTED)
            continue;
        /* without CPU samples the input pipeline's time is data_loading's
         * (by name), not a second finding */
        if (!c->cpu && (memo ? in_data_pipeline_memo(t, (uint32_t)i, memo)
                             : in_data_pipeline(t, (uint32_t)i)))
            continue;
        /* without CPU samples a wait (a lock acquire, a condition's wait,
         * select, poll, sleep: by name) is no work: the stall rules judge
         * it (with samples its blocked time is already left out) */
        if (!c->cpu && rules_wait_like(n->name))
            continue;
        bool added;
        size_t k = rules_names_get(ix, n->name, &added);
        if (k == SIZE_MAX || (added && !pb_vec_reserve((void **)opp, cap, k + 1, sizeof **opp)))
            break;                      /* out of memory: judge what was gathered */
        hot_op *op = *opp;
        if (added)
            op[(*nop)++] = (hot_op){ .name = n->name, .node = (uint32_t)i, .node_work = -1 };
        op[k].work += s.work;
        op[k].ns += s.ns;
        op[k].blocked += s.blocked;
        op[k].waitq += s.waitq;
        op[k].on_known += s.on;
        op[k].known += s.known;
        op[k].calls += n->calls;
        op[k].paths++;
        if (s.ns - s.blocked > op[k].node_work) {
            op[k].node_work = s.ns - s.blocked;
            op[k].node = (uint32_t)i;
        }
    }
    free(memo);
}

/* The time that ranks an operation: its wall time in the steps, unless
 * it mostly blocks (then it is a stall, judged by rules_wait). */
static double hot_wall(const hot_op *op)
{
    return op->blocked >= 0.5 * op->ns ? op->ns - op->blocked : op->ns;
}

/* Mostly waiting for a CPU: compute starved by contention. */
static bool starved(const hot_op *op)
{
    return op->waitq > op->work && op->waitq > op->blocked;
}

static void hot_emit(rules_ctx *c, const hot_op *op)
{
    double wall = hot_wall(op);
    double share = c->step_ns > 0 ? wall / c->step_ns : 0;
    share = share > 1 ? 1 : share;
    const prism_node *hn = &c->train->nodes[op->node];
    uint32_t node = prism_analysis_find(c->a, hn->path_hash);
    prism_bottleneck *b = rules_add(c, PRISM_BN_HOT_OPERATION, rules_by_share(share), share,
                                    node);
    if (!b)
        return;
    bool starve = c->cpu && starved(op);
    rules_set(b->description, sizeof b->description, "'%s': %.1f%% of %s%s",
              rules_leaf(op->name), 100.0 * share, rules_denom(c),
              starve ? ", compute starved by CPU contention" : "");
    rules_put(b->evidence, sizeof b->evidence, "%llu calls", (unsigned long long)op->calls);
    double per = c->steps ? (double)c->steps : 1.0;
    const char *unit = c->steps ? "/step" : "";
    /* the figures are its own time (what ranks it); the mean per call is
     * of the whole call, what it calls included, and says so then */
    bool kids = hn->self_ns < hn->total_ns, apart = wall < op->ns;
    rules_put(b->evidence, sizeof b->evidence, ", %s%s%s", kids ? "own time " : "",
              DUR(wall / per), unit);
    if (apart)                          /* ranked by its time not blocked */
        rules_put(b->evidence, sizeof b->evidence, " not blocked (of %s%s)", DUR(op->ns / per),
                  unit);
    if (c->steps)
        rules_put(b->evidence, sizeof b->evidence, " over %llu steps",
                  (unsigned long long)c->steps);
    if (op->known > 0 && wall > 0)
        rules_put(b->evidence, sizeof b->evidence,
                  ": running %.0f%%, waiting for a CPU %.0f%%, blocked %.0f%%",
                  100.0 * op->work / op->ns, 100.0 * op->waitq / op->ns,
                  100.0 * op->blocked / op->ns);
    if (c->cpu && op->ns > 0 && op->waitq >= 0.05 * op->ns)
        rules_put(b->evidence, sizeof b->evidence, " (contention: %s%s in the run queue)",
                  DUR(op->waitq / per), unit);
    rules_put(b->evidence, sizeof b->evidence, ", mean %s/call%s%s", DUR(hn->mean_ns),
              kids ? " with what it calls" : "", op->paths > 1 ? " on its heaviest path" : "");
    /* a backward segment runs until the next kept module's begins: with
     * modules folded, it holds theirs (2000 tiny modules, 10 kept: one
     * kept module's "backward" read 10 % of the step) */
    prism_folded fo;
    size_t nl = strlen(op->name);
    if (nl > 11 && !strcmp(op->name + nl - 11, " (backward)") &&
        prism_analysis_folded(c->a, &fo) && fo.folded)
        rules_put(b->evidence, sizeof b->evidence, "; a backward segment: with %llu modules "
                  "folded, it holds the backward of those that run after it until the next "
                  "kept module's", (unsigned long long)fo.folded);
    if (op->paths > 1 && wall > 0)
        rules_put(b->evidence, sizeof b->evidence, "; %llu paths, the heaviest holds %.0f%%",
                  (unsigned long long)op->paths, 100.0 * op->node_work / wall);
    if (hn->gpu_launches)
        rules_put(b->evidence, sizeof b->evidence, "; %llu GPU launches (%s GPU)",
                  (unsigned long long)hn->gpu_launches, DUR(hn->gpu_ns));
    if (starve)
        rules_put(b->recommendation, sizeof b->recommendation,
                  "It wants the CPU more than it gets it: other threads or processes hold "
                  "the cores (see cpu_contention); give the training thread a core. ");
    hot_advice(c, op->name, node, b);
}

/*
 * Operations of the training thread by their own time in the steps (their
 * children's time is theirs, not the parent's): a parent that only holds
 * children is never a hot operation.  Its wall time counts (a region
 * preempted by other processes still holds the step for that long); one
 * that is blocked most of its time counts only what it ran or wanted to
 * run: its blocked time is a stall, judged by rules_wait.  Every path of a name counts together; Enter goes to the
 * heaviest.
 */
void rules_hot(rules_ctx *c)
{
    double threshold_pct = c->threshold_pct;
    hot_op *op = NULL;
    rules_names ix;
    size_t nop = 0, cap = 0, emitted = 0;
    rules_names_init(&ix);
    hot_collect(c, &op, &cap, &nop, &ix);
    for (size_t i = 0; i < nop && emitted < HOT_MAX; i++) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < nop; k++)
            if (op[k].calls && (best == SIZE_MAX || hot_wall(&op[k]) > hot_wall(&op[best])))
                best = k;
        if (best == SIZE_MAX || !(c->step_ns > 0) ||
            !(100.0 * hot_wall(&op[best]) / c->step_ns > threshold_pct))
            break;
        hot_emit(c, &op[best]);
        op[best].calls = 0;             /* done */
        emitted++;
    }
    free(op);
    rules_names_free(&ix);
}

/*
 * Work on the other threads never dilutes the training thread's shares;
 * each such thread's heaviest operation above the threshold of that
 * thread's own time is a LOW finding, with how much of it overlapped the
 * steps (whether it stalls the loop is for the stall rules to say).
 */
void rules_beside(rules_ctx *c)
{
    double threshold_pct = c->threshold_pct;
    size_t found = 0;
    for (size_t i = 0; i < c->nthreads && found < 4; i++) {
        const char *tname = NULL;
        const prism_tree *t = prism_analysis_thread_tree(c->a, i, NULL, &tname);
        if (!t || t == c->train || !t->total_ns)
            continue;
        uint32_t best = PRISM_NO_NODE;
        /* a thread that waits (a queue feeder blocked in a lock) is not
         * busy there: waits and what they call are no operation of its */
        for (size_t k = 0; k < t->count; k++)
            if (!(t->nodes[k].flags & PRISM_NODE_UNATTRIBUTED) &&
                (best == PRISM_NO_NODE || t->nodes[k].self_ns > t->nodes[best].self_ns) &&
                !rules_in_wait(t, (uint32_t)k))
                best = (uint32_t)k;
        if (best == PRISM_NO_NODE)
            continue;
        const prism_node *n = &t->nodes[best];
        double own = (double)n->self_ns / (double)t->total_ns;
        if (!(100.0 * own > threshold_pct))
            continue;
        prism_bottleneck *b = rules_add(c, PRISM_BN_HOT_OPERATION, PRISM_SEV_LOW, 0.0,
                                        prism_analysis_find(c->a, n->path_hash));
        if (!b)
            continue;
        found++;
        rules_set(b->description, sizeof b->description,
                  "'%s': %.1f%% of thread '%s' (beside the training thread)",
                  rules_leaf(n->name), 100.0 * own, tname ? tname : "?");
        rules_put(b->evidence, sizeof b->evidence, "%llu calls, %s", (unsigned long long)n->calls,
                  DUR(n->self_ns));
        if (c->steps && n->total_ns)
            rules_put(b->evidence, sizeof b->evidence, ", %.0f%% of it during steps",
                      100.0 * fmin(1.0, (double)(n->in_step_ns + an_out_spanned(c->a, i, best)) /
                                            (double)n->total_ns));
        if (n->cpu_known_ns)
            rules_put(b->evidence, sizeof b->evidence, ", on CPU %.0f%%",
                      100.0 * (double)n->oncpu_ns / (double)n->cpu_known_ns);
        rules_put(b->evidence, sizeof b->evidence, "; not part of the %s",
                  c->steps ? "training thread's steps" : "training thread");
        rules_set(b->recommendation, sizeof b->recommendation,
                  "It runs beside the training loop and costs it nothing unless the training "
                  "thread waits for it (see data_loading / off_cpu_wait). Optimise it if "
                  "those findings point here.");
    }
}
