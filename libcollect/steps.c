/*
 * steps.c - iteration boundaries: prism_step_begin / prism_step_end, the
 * sampling decision, and the ring that carries each step to the writer.
 * Owner: steps and memory sampling (issue 12).
 *
 * A step boundary costs the stepping thread a clock read and a few stores:
 * no lock, no system call, no /proc read.  prism_step_end() puts the step
 * into a single-producer ring (session.steps) and publishes the index of
 * the step that ended (session.steps_ended, release).  The writer drains
 * the ring into the process queue at its next wake-up (every few ms: the
 * CPU sampler's period), and takes the memory sample for the steps that
 * ended (sampler.c), so nothing has to wake it.
 *
 * Only when the writer has not drained STEP_RING steps (steps shorter than
 * a few us) does the stepping thread drain the ring itself, under the
 * session lock: the slow path, one lock per STEP_RING steps.  The ring's
 * consumer is whoever holds the lock, so steps reach the queue in order.
 *
 * The step functions are called from one thread (the training loop's).
 * In a forked child (session.forked, set by the fork handler: no getpid()
 * system call here) they do nothing.
 */
#include "cupti.h"
#include "internal.h"

/* Put r into the ring; false when it is full (producer only). */
static bool ring_put(step_ring *g, const step_rec *r)
{
    uint64_t t = atomic_load_explicit(&g->tail, memory_order_relaxed);
    if (t - g->head_seen >= STEP_RING) {
        g->head_seen = atomic_load_explicit(&g->head, memory_order_acquire);
        if (t - g->head_seen >= STEP_RING)
            return false;
    }
    g->rec[t & (STEP_RING - 1)] = *r;
    atomic_store_explicit(&g->tail, t + 1, memory_order_release);
    return true;
}

void pc_steps_take(session *s)
{
    step_ring *g = &s->steps;
    uint64_t h = atomic_load_explicit(&g->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&g->tail, memory_order_acquire);
    for (; h != t; h++) {
        const step_rec *x = &g->rec[h & (STEP_RING - 1)];
        proc_rec p = { .is_step = true, .ticks = x->ticks, .ticks_end = x->ticks_end };
        p.u.step = (prism_step){ .index = x->index, .epoch = x->epoch, .flags = x->flags };
        pc_queue_push(s, &p);
    }
    atomic_store_explicit(&g->head, h, memory_order_release);
}

bool pc_steps_pending(const session *s)
{
    return atomic_load_explicit(&s->steps.tail, memory_order_relaxed) !=
           atomic_load_explicit(&s->steps.head, memory_order_relaxed);
}

/* The ring is full: the writer has not looked for STEP_RING steps.  Drain
 * it from here (the slow path: a lock, perhaps an allocation). */
static void spill(session *s, const step_rec *r)
{
    pthread_mutex_lock(&s->lock);
    pc_steps_take(s);
    (void)ring_put(&s->steps, r);       /* empty now */
    pthread_mutex_unlock(&s->lock);
}

/* Every k-th step records its regions (sample_rate). */
static uint64_t stride(const prism_config *c)
{
    double st = c->sample_rate > 0 ? 1.0 / c->sample_rate : 1.0;
    if (!(st < 1.8e19))
        return UINT64_MAX;
    uint64_t k = (uint64_t)(st + 0.5);
    return k < 1 ? 1 : k;
}

/* Does step `idx` record its regions? */
static bool sampled(session *s, uint64_t idx)
{
    const prism_config *c = &s->cfg;
    if (c->adaptive_sampling && idx < c->adaptive_steps)
        return true;
    if (!s->step_stride)
        s->step_stride = stride(c);
    uint64_t base = c->adaptive_sampling ? idx - c->adaptive_steps : idx;
    return s->step_stride == 1 || base % s->step_stride == 0;
}

void prism_step_begin(void)
{
    session *s = prism__s;
    if (!s || session_forked(s) ||
        atomic_load(&s->stopping) || atomic_load(&s->failed))
        return;
    if (s->in_step)
        prism_step_end();
    s->in_step = true;
    if (!s->step_stream_known) {        /* the training thread, for the analysis */
        prism__thread *th = pc_buffers_self(s);
        if (th)
            atomic_store_explicit(&s->step_stream, th->stream, memory_order_relaxed);
        s->step_stream_known = th != NULL;
    }
    cupti_step(s, s->step_index, true);   /* GPU window: before the step's clock */
    s->step_rec = s->cfg.collect_timing && sampled(s, s->step_index);
    s->step_start = prism__now();
    s->step_mark = 0;
    s->step_flags = 0;
    atomic_store_explicit(&prism__on, s->step_rec ? 1 : 0, memory_order_relaxed);
}

/* End the open step at ticks_end (now, or its mark). */
static void end_at(session *s, uint64_t ticks_end)
{
    step_rec r = { .ticks = s->step_start, .ticks_end = ticks_end, .index = s->step_index,
                   .epoch = s->epoch,
                   .flags = (s->step_rec ? PRISM_STEP_SAMPLED : 0) | s->step_flags };
    if (!atomic_load(&s->stopping)) {   /* else the writer is gone or going */
        if (!ring_put(&s->steps, &r))
            spill(s, &r);
        /* after the ring: the writer's memory sample for this step follows it */
        atomic_store_explicit(&s->steps_ended, s->step_index + 1, memory_order_release);
    }
    cupti_step(s, s->step_index, false);
    s->step_index++;
    s->in_step = false;
    s->step_mark = 0;
    if (!atomic_load(&s->stopping) && !atomic_load(&s->failed))
        atomic_store_explicit(&prism__on, s->cfg.collect_timing ? 1 : 0, memory_order_relaxed);
}

void prism_step_end(void)
{
    session *s = prism__s;
    if (!s || !s->in_step || session_forked(s))
        return;
    end_at(s, prism__now());
}

void prism__step_mark(void)
{
    session *s = prism__s;
    if (s && s->in_step && !session_forked(s))
        s->step_mark = prism__now();
}

void prism__step_cancel(void)
{
    session *s = prism__s;
    if (!s || !s->in_step || session_forked(s))
        return;
    s->in_step = false;         /* no record; the index is the next step's */
    s->step_mark = 0;
    if (!atomic_load(&s->stopping) && !atomic_load(&s->failed))
        atomic_store_explicit(&prism__on, s->cfg.collect_timing ? 1 : 0, memory_order_relaxed);
}

void prism__step_flag(uint32_t bits)
{
    session *s = prism__s;
    if (s && s->in_step && !session_forked(s))
        s->step_flags |= bits & PRISM_STEP_OPS;
}

void prism__step_thread(void)
{
    session *s = prism__s;
    if (!s || session_forked(s) || atomic_load(&s->stopping) || atomic_load(&s->failed))
        return;
    prism__thread *th = pc_buffers_self(s);
    if (!th)
        return;
    atomic_store_explicit(&s->step_stream, th->stream, memory_order_relaxed);
    s->step_stream_known = true;
}

void pc_step_close_at_mark(session *s)
{
    if (s->in_step && s->step_mark && s->step_mark >= s->step_start)
        end_at(s, s->step_mark);
}

void prism_epoch(uint64_t epoch)
{
    if (prism__s)
        prism__s->epoch = epoch;
}

uint64_t prism_step_index(void)
{
    return prism__s ? prism__s->step_index : 0;
}
