/*
 * rules_stacks.c - unattributed_time: the training thread's step time that
 * no region holds (an un-instrumented wait, a metrics loop, a checkpoint
 * with no region around it), measured exactly from the regions and the
 * steps, and named by the sampled call stacks where the profile has them
 * (format 1.2; the Python module's stack sampler):
 *
 *   unattributed_time  the training thread's time in sampled steps outside
 *                      every top-level region is at least the threshold
 *                      share of step time; the evidence names the call
 *                      path the samples found there and how much of that
 *                      time was blocked in a system call.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "rules.h"

void rules_unattributed(rules_ctx *c)
{
    const prism_tree *t = c->train;
    if (!t || !c->steps || c->step_ns <= 0)
        return;
    double covered = 0;
    uint32_t own = PRISM_NO_NODE;       /* its `(outside regions)` node */
    for (uint32_t r = t->first_root; r != PRISM_NO_NODE && r < t->count;
         r = t->nodes[r].next_sibling) {
        if (t->nodes[r].flags & PRISM_NODE_UNATTRIBUTED)
            own = r;
        else            /* a region around the loop holds the steps inside it */
            covered += (double)t->nodes[r].in_step_ns +
                       (double)an_out_spanned(c->a, c->train_idx, r);
    }
    uint32_t at = PRISM_NO_NODE;        /* the same path in the all-threads tree */
    for (size_t i = 0; own != PRISM_NO_NODE && c->tree && i < c->tree->count; i++)
        if (c->tree->nodes[i].path_hash == t->nodes[own].path_hash)
            at = (uint32_t)i;
    double out = c->step_ns - covered;
    double share = out / c->step_ns;
    if (out <= 0 || share * 100.0 < c->threshold_pct)
        return;
    prism_severity sev = share >= 0.30 ? PRISM_SEV_HIGH : share >= 0.15 ? PRISM_SEV_MEDIUM
                                                                         : PRISM_SEV_LOW;
    prism_bottleneck *b = rules_add(c, PRISM_BN_UNATTRIBUTED, sev, share, at);
    if (!b)
        return;
    rules_set(b->description, sizeof b->description,
              "Time outside every region: %.1f%% of step time (%s a step) on '%s'", 100.0 * share,
              DUR(out / (double)c->steps), c->train_name ? c->train_name : "the training thread");
    an_stack_where w;
    if (rules_stacks_where(c, 0, NULL, 0, PRISM_NO_NODE, &w) && w.text[0]) {
        rules_put(b->evidence, sizeof b->evidence, "sampled there (%llu samples%s): %s",
                  (unsigned long long)w.samples,
                  w.blocked >= 0.5 ? ", mostly blocked in a system call" : "", w.text);
        if (!strstr(w.text, "%, "))
            rules_put(b->evidence, sizeof b->evidence, " %.0f%%", 100.0 * w.share);
        rules_put(b->evidence, sizeof b->evidence, "; ");
    } else {
        rules_put(b->evidence, sizeof b->evidence,
                  "no stack samples say where (Python: PRISM_STACK_HZ, on by default); ");
    }
    rules_put(b->evidence, sizeof b->evidence, "regions hold %s of %s a step",
              DUR(covered / (double)c->steps), DUR(c->step_ns / (double)c->steps));
    rules_put(b->recommendation, sizeof b->recommendation,
              "Put a region around the code the samples name (prism.region / prism_region) to "
              "see it in every pane; if it is a wait (sleep, I/O, a lock), move it out of the "
              "step or overlap it with the computation.");
}
