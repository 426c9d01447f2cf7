/*
 * export_outside.c - the training thread's time outside regions for the
 * exports rebuilt from events (chrome-trace, speedscope): the first pass
 * names the training thread and keeps its
 * sampled steps; each export then follows the thread's top level as it
 * streams its regions (trace_top_*) and writes the pieces of every gap
 * that lie inside a sampled step, as the analysis' `(outside regions)`
 * node counts them (analysis/unattributed.c): from where a root region
 * ended (the file's origin before the first) to where the next one
 * enters, and after the last one when the file is complete.
 *
 * Memory: 16 bytes per sampled step.  The first pass itself: export_scan.c
 * (the files that name their stepping thread, and, for a whole export,
 * those that do not: export_lead.c finds it there), else (an export of
 * some steps or threads of a file that names none) an analysis.
 */
#include <stdlib.h>

#include "export_trace.h"
#include "prism/analysis.h"

static int by_start(const void *x, const void *y, const void *ctx)
{
    const trace_span *a = x, *b = y;
    (void)ctx;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* The file names the thread that marks its steps: the steps from the scan,
 * sampled, not empty, those sc keeps, in start order (stable, as the
 * analysis orders them). */
static void steps_of_scan(const ex_scan *scan, const ex_scope *sc, trace_first *f)
{
    size_t k = 0;
    f->steps = malloc((scan->nsteps ? scan->nsteps : 1) * sizeof *f->steps);
    for (size_t j = 0; f->steps && j < scan->nsteps; j++) {
        const prism_step *s = &scan->steps[j];
        if ((s->flags & PRISM_STEP_SAMPLED) && s->end > s->start &&
            (!sc || !sc->steps || (s->index >= sc->first && s->index <= sc->last)))
            f->steps[k++] = (trace_span){ s->start, s->end };
    }
    f->nsteps = f->steps ? k : 0;
    pb_sort_stable(f->steps, f->nsteps, sizeof *f->steps, by_start, NULL);
}

void trace_first_pass(const char *path, const ex_scan *scan, const ex_scope *sc,
                      trace_first *f)
{
    f->train = NO_STREAM;
    f->steps = NULL;
    f->nsteps = 0;
    uint32_t named = scan ? scan->step_stream : 0;
    if (named && scan->read && ex_scan_thread(scan, named) && ex_scope_thread(sc, named)) {
        f->train = named;
        steps_of_scan(scan, sc, f);
        return;
    }
    if (!named && scan && scan->read && scan->train_known && (!sc || !sc->active)) {
        if (scan->train_found) {        /* found by the scan (export_lead.c) */
            f->train = scan->train;
            steps_of_scan(scan, sc, f);
        }
        return;
    }
    prism_reader *r;
    prism_analysis *a = ex_analyze_lean(path, sc, &r);
    if (!a)
        return;
    size_t i = prism_analysis_training_thread(a);
    if (i != SIZE_MAX)
        prism_analysis_thread_tree(a, i, &f->train, NULL);
    const prism_step_stats *ss = prism_analysis_steps(a);
    size_t k = 0;
    for (size_t j = 0; ss && j < ss->nseries; j++)
        k += (ss->series[j].flags & PRISM_STEP_SAMPLED) && ss->series[j].end > ss->series[j].start;
    if (f->train != NO_STREAM && k && (f->steps = malloc(k * sizeof *f->steps)) != NULL) {
        for (size_t j = 0; j < ss->nseries; j++)
            if ((ss->series[j].flags & PRISM_STEP_SAMPLED) && ss->series[j].end > ss->series[j].start)
                f->steps[f->nsteps++] = (trace_span){ ss->series[j].start, ss->series[j].end };
    }
    prism_analysis_free(a);
    prism_reader_free(r);
}

void trace_first_free(trace_first *f)
{
    free(f->steps);
    f->steps = NULL;
    f->nsteps = 0;
}

/* The pieces of [lo, hi) inside the sampled steps, to fn. */
static void pieces(const trace_first *f, uint64_t lo, uint64_t hi,
                   void (*fn)(void *ctx, uint64_t a, uint64_t z), void *ctx)
{
    size_t a = 0, b = f->nsteps;
    while (a < b) {             /* the first step starting after lo */
        size_t mid = a + (b - a) / 2;
        if (f->steps[mid].start <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    size_t i = a ? a - 1 : 0;
    while (i > 0 && f->steps[i - 1].end > lo)      /* overlapping steps (damage) */
        i--;
    for (; i < f->nsteps && f->steps[i].start < hi; i++) {
        uint64_t s = f->steps[i].start > lo ? f->steps[i].start : lo;
        uint64_t e = f->steps[i].end < hi ? f->steps[i].end : hi;
        if (e > s)
            fn(ctx, s, e);
    }
}

void trace_top_enter(const trace_first *f, trace_top *t, uint64_t ts,
                     void (*fn)(void *ctx, uint64_t a, uint64_t z), void *ctx)
{
    if (f->nsteps && ts > t->idle)
        pieces(f, t->idle, ts, fn, ctx);
}

void trace_top_end(const trace_first *f, const trace_top *t,
                   void (*fn)(void *ctx, uint64_t a, uint64_t z), void *ctx)
{
    if (f->nsteps)
        pieces(f, t->idle, UINT64_MAX, fn, ctx);
}
