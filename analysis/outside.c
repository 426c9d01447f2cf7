/*
 * outside.c - the run's time outside its steps: before the first, between
 * steps, after the last, and the training thread's regions that hold it
 * (an eval phase, a final checkpoint, start-up), so that a run whose steps
 * cover half its wall time says so (issue 25).  Public getters, and the
 * steps a region around the loop holds (unattributed.c).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

bool prism_analysis_outside(const prism_analysis *a, prism_outside *o)
{
    memset(o, 0, sizeof *o);
    const prism_step_stats *st = prism_analysis_steps(a);
    if (!a->have_ts || !st || !st->nseries)
        return false;
    o->span_ns = a->last_ts - a->first_ts;
    o->eval_passes = a->eval_passes;
    o->eval_span_ns = a->eval_passes ? a->eval_span_ns : 0;
    /* the union of the step intervals (sorted by start), clipped to the span */
    uint64_t lo = 0, hi = 0, first = UINT64_MAX, last = 0;
    bool open = false;
    for (size_t i = 0; i < st->nseries; i++) {
        const prism_step *s = &st->series[i];
        uint64_t b = s->start < a->first_ts ? a->first_ts : s->start;
        uint64_t e = s->end > a->last_ts ? a->last_ts : s->end;
        if (e <= b)
            continue;
        first = b < first ? b : first;
        last = e > last ? e : last;
        if (open && b <= hi) {
            hi = e > hi ? e : hi;
            continue;
        }
        if (open)
            o->steps_ns += hi - lo;
        lo = b, hi = e, open = true;
    }
    if (!open)
        return false;
    o->steps_ns += hi - lo;
    o->before_ns = first - a->first_ts;
    o->after_ns = a->last_ts - last;
    uint64_t in = o->steps_ns + o->before_ns + o->after_ns;
    o->between_ns = o->span_ns > in ? o->span_ns - in : 0;
    /* what the training thread's stack samples saw outside the steps */
    an_stack_where w;
    if (an_stacks_outside_steps(a, prism_analysis_training_thread(a), &w) && w.text[0]) {
        snprintf(o->sampled, sizeof o->sampled, "%s%s", w.text, "");
        if (!strstr(w.text, "%, ")) {
            size_t used = strlen(o->sampled);
            snprintf(o->sampled + used, sizeof o->sampled - used, " %.0f%%", 100.0 * w.share);
        }
        o->sampled_ns = w.weight_ns;
    }
    /* the training thread's top-level regions, by their time outside the
     * steps (inside: in_step_ns, and for a region around the loop the
     * steps it holds; known when every step was sampled) */
    if (st->sampled != st->count)
        return true;
    size_t ti = prism_analysis_training_thread(a);
    const prism_tree *t = ti < prism_analysis_thread_count(a)
                              ? prism_analysis_thread_tree(a, ti, NULL, NULL) : NULL;
    for (size_t i = 0; t && i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        uint64_t held = an_sat_add(n->in_step_ns, an_out_spanned(a, ti, (uint32_t)i));
        if (n->parent != PRISM_NO_NODE || n->total_ns <= held)
            continue;
        prism_outside_region r = { n->name, n->total_ns - held };
        size_t at = o->nregions < PRISM_OUTSIDE_REGIONS ? o->nregions++ : PRISM_OUTSIDE_REGIONS;
        while (at > 0 && o->regions[at - 1].ns < r.ns) {
            if (at < PRISM_OUTSIDE_REGIONS)
                o->regions[at] = o->regions[at - 1];
            at--;
        }
        if (at < PRISM_OUTSIDE_REGIONS)
            o->regions[at] = r;
    }
    return true;
}
