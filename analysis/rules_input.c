/*
 * rules_input.c - a data_loading finding explains itself when the
 * DataLoader's workers were recorded (prism_analysis_workers): what a batch
 * cost in a worker (per sample, in collate, in the heaviest transform),
 * how busy the workers were, what the wait implies about the prefetch
 * queue, and the fix that follows from it, with the step projected for
 * more workers.
 *
 * The model: W workers each take B (wall) per batch, so a batch is ready
 * every B/W at best; a step takes K batches (K > 1 with gradient
 * accumulation: its data waits a step) and computes C = S - wait (its mean
 * S less the wait per step).  While K B/W > C the queue runs empty and
 * every step waits.  With N workers the step is max(C, K B/N, cpu), cpu
 * being the least time the machine's free cores allow: the workers' CPU
 * for K batches over the cores neither the training thread nor other
 * processes use.  The projection is made only when the workers were busy (at least
 * BUSY of their lifetime): idle workers are not what the loop waits for.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"

#define BUSY 0.6                /* workers busy this much: more would help    */
#define IDLE 0.5                /* below this, they idle between bursts      */
#define TRANSFORM 0.5           /* a transform holding this much of a batch  */
#define STARTUP 0.2             /* start-ups holding this much of the waits  */
#define MAX_WORKERS 64u

typedef struct model {
    double step, compute, wait;       /* per step                             */
    double batch, cpu_batch, interval, floor;
    double per;                       /* batches a step (K), >= 1            */
    uint32_t now;                     /* workers now                          */
    uint32_t ncpu;
    double free_cores;                /* for workers; <= 0 unknown            */
} model;

static double step_with(const model *m, uint32_t n)
{
    double s = m->compute, supply = m->per * m->batch / n;
    if (supply > s)
        s = supply;
    if (m->floor > s)
        s = m->floor;
    return s;
}

/* The fewest workers past now that bring the step to its floor, 0: none
 * better than now. */
static uint32_t workers_for(const model *m)
{
    double best = step_with(m, MAX_WORKERS);
    for (uint32_t n = m->now + 1; n <= MAX_WORKERS; n++)
        if (step_with(m, n) <= best * 1.02)
            return step_with(m, n) < step_with(m, m->now) * 0.98 ? n : 0;
    return 0;
}

static void inside_line(const rules_ctx *c, prism_bottleneck *b, const prism_worker_stats *w,
                        const model *m)
{
    char *s = b->inside;
    size_t cap = sizeof b->inside;
    rules_put(s, cap, "%u worker%s", m->now, m->now == 1 ? "" : "s");
    if (w->processes > w->workers)
        rules_put(s, cap, " (%u processes)", w->processes);
    rules_put(s, cap, ": a batch takes %s in a worker", DUR(m->batch));
    if (w->samples_per_batch > 0)
        rules_put(s, cap, " (%.0f samples at %s", w->samples_per_batch, DUR(w->sample_ns));
    else
        rules_put(s, cap, " (");
    rules_put(s, cap, "%scollate %s", w->samples_per_batch > 0 ? ", " : "", DUR(w->collate_ns));
    if (w->transform)
        rules_put(s, cap, ", '%s' %s", rules_leaf(w->transform), DUR(w->transform_ns));
    rules_put(s, cap, ")");
    if (w->busy >= 0 && w->busy_threads == w->threads)
        rules_put(s, cap, ", busy %.0f%% of their time (all %u)", 100.0 * w->busy, w->threads);
    else if (w->busy >= 0)
        rules_put(s, cap, ", busy %.0f%% of their time (%u of %u busy, the rest idle between "
                  "batches)", 100.0 * w->busy, w->busy_threads, w->threads);
    if (w->batch_cpu >= 0)
        rules_put(s, cap, ", on CPU %.0f%% of it", 100.0 * w->batch_cpu);
    long long queue = (long long)m->now * (w->prefetch_factor > 0 ? w->prefetch_factor : 2);
    char each[96];                      /* what a step asks of the workers */
    if (m->per > 1)
        snprintf(each, sizeof each, "one batch every %s, %.1f a step (%s)", DUR(m->interval),
                 m->per, DUR(m->per * m->interval));
    else
        snprintf(each, sizeof each, "one batch every %s", DUR(m->interval));
    if (c->steps && m->per * m->interval > m->compute * 1.05)
        rules_put(s, cap, "; %s for a step computing %s: the prefetch queue (%lld batches) "
                  "runs empty", each, DUR(m->compute), queue);
    else if (c->steps)
        rules_put(s, cap, "; %s for a step computing %s: the queue (%lld batches) keeps up "
                  "on average, the waits come in bursts", each, DUR(m->compute), queue);
    if (w->pin_ns > 0)
        rules_put(s, cap, "; pin_memory %s a batch", DUR(w->pin_ns));
    if (w->starts > 1 && w->startup_ns > 0)
        rules_put(s, cap, "; workers started %llu times, %s to the first batch",
                  (unsigned long long)w->starts, DUR(w->startup_ns));
}

static void fix(const rules_ctx *c, prism_bottleneck *b, const prism_worker_stats *w,
                const model *m)
{
    char *r = b->recommendation;
    size_t cap = sizeof b->recommendation;
    double waits = m->wait * (double)(c->steps ? c->steps : 1);
    bool startup = w->starts > 1 && w->persistent_workers != 1 && w->startup_ns > 0 &&
                   (double)w->starts * w->startup_ns >= STARTUP * waits;
    bool busy = w->busy >= BUSY, idle = w->busy >= 0 && w->busy < IDLE;
    bool cpu_bound = m->floor > 0 && m->floor >= m->compute * 0.95 && busy;
    r[0] = '\0';
    if (startup && (double)w->starts * w->startup_ns >= 0.5 * waits) {
        rules_put(r, cap, "Keep the workers: persistent_workers=True (they started %llu times, "
                  "%s each before the first batch). ", (unsigned long long)w->starts,
                  DUR(w->startup_ns));
        startup = false;
    }
    bool dominant = w->transform && w->transform_ns >= TRANSFORM * m->batch;
    if (dominant)
        rules_put(r, cap, "'%s' takes %s of a worker's %s per batch: make it cheaper (vectorise "
                  "it over the batch, cache its output, or run it on the GPU after the "
                  "copy)%s", rules_leaf(w->transform), DUR(w->transform_ns), DUR(m->batch),
                  b->workers_to ? "; or " : ". ");
    if (b->workers_to) {
        char per[48] = "";
        if (m->per > 1)
            snprintf(per, sizeof per, ", %.1f a step", m->per);
        rules_put(r, cap, "%s num_workers=%u (now %u: busy %.0f%%, a batch every %s%s against "
                  "%s of compute): step %s -> %s", dominant ? "use" :
                  "The workers cannot keep up: use", b->workers_to, m->now, 100.0 * w->busy,
                  DUR(m->interval), per, DUR(m->compute), DUR(m->step),
                  DUR(b->step_with_workers_ns));
        if (cpu_bound && !dominant)
            rules_put(r, cap, "; beyond that the %.1f of the machine's %u cores left to them "
                      "are the limit (%s of CPU a batch): make each sample cheaper (%s a "
                      "sample) or decode/augment on the GPU", m->free_cores, m->ncpu,
                      DUR(m->cpu_batch), DUR(w->sample_ns));
        rules_put(r, cap, ". ");
    } else if (cpu_bound && !dominant) {
        rules_put(r, cap, "The workers need %s of CPU per batch and %.1f of the machine's %u "
                  "cores are left to them: more workers cannot keep up; make each sample "
                  "cheaper (%s a sample) or decode/augment on the GPU. ",
                  DUR(m->cpu_batch), m->free_cores, m->ncpu, DUR(w->sample_ns));
    } else if (idle) {
        rules_put(r, cap, "The workers idle %.0f%% of their time while the loop waits: let them "
                  "work ahead with a larger prefetch_factor (now %lld)%s. ",
                  100.0 * (1 - w->busy), (long long)(w->prefetch_factor > 0
                                                      ? w->prefetch_factor : 2),
                  w->pin_memory == 1 ? "" : ", and pin_memory=True for the copy");
    }
    if (startup)
        rules_put(r, cap, "Use persistent_workers=True: they started %llu times, %s each. ",
                  (unsigned long long)w->starts, DUR(w->startup_ns));
    if (!r[0])
        rules_put(r, cap, "The workers keep up on average but the loop still waits: raise "
                  "prefetch_factor, pin_memory=True, and look at the slowest batches ('%s').",
                  w->transform ? rules_leaf(w->transform) : "DataLoader batch");
    size_t n = strlen(r);
    while (n && r[n - 1] == ' ')
        r[--n] = '\0';
}

void rules_input_workers(const rules_ctx *c, prism_bottleneck *b, double wait_ns,
                         double fetches)
{
    const prism_worker_stats *w = prism_analysis_workers(c->a);
    if (!b || !w || !w->workers || !w->batches || !(w->batch_ns > 0))
        return;
    model m = { 0 };
    double steps = c->steps ? (double)c->steps : 1;
    m.step = c->step_ns / steps;
    m.wait = wait_ns / steps;
    m.compute = m.step - m.wait > 0 ? m.step - m.wait : 0;
    m.batch = w->batch_ns;
    m.cpu_batch = w->batch_cpu >= 0 ? w->batch_ns * w->batch_cpu : w->batch_ns;
    m.now = w->num_workers > 0 && w->num_workers <= (int64_t)MAX_WORKERS
            ? (uint32_t)w->num_workers : w->workers;
    m.interval = m.batch / m.now;
    /* a step's batches: its data waits (the one that ends an epoch adds a
     * fraction); one where they are about one a step */
    m.per = fetches >= 1.5 ? fetches : 1;
    const prism_cpu_load *l = prism_analysis_cpu_load(c->a);
    m.ncpu = l ? l->ncpu : 0;
    if (m.ncpu) {
        double others = l->others > 0 ? l->others : 0;
        m.free_cores = (double)m.ncpu - 1 - others;
        if (m.free_cores < 0.5)
            m.free_cores = 0.5;
        m.floor = m.per * m.cpu_batch / m.free_cores;
    }
    if (c->steps && w->busy >= BUSY) {
        uint32_t n = workers_for(&m);
        if (n) {
            b->workers_now = m.now;
            b->workers_to = n;
            b->step_with_workers_ns = step_with(&m, n);
        }
    }
    inside_line(c, b, w, &m);
    fix(c, b, w, &m);
}
