/*
 * stacks.c - sampled call stacks on their way to the file (format 1.2
 * STACKS chunks).  A sampler outside libcollect (the Python module's,
 * python/src/_prism_stack.c) reads where each thread is and hands the
 * frames over here; the writer takes them with each flush's snapshot and
 * writes them after that flush's REGIONS chunks, so a reader placing a
 * sample in the regions open at its time has them all.
 *
 * The queue is one flat array of words under the session lock: per sample
 * its tick (two words), stream, flags, frame count, the sampler's wait for
 * the GIL and the part of it spent off a CPU (ns, at most UINT32_MAX), then
 * the frame ids.
 * It is bounded; a sample that does not fit is dropped and counted (INFO
 * stacks.dropped), never waited for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define STK_HEAD 7u
#define STK_MAX_WORDS (1u << 20)        /* 4 MiB between two flushes */

bool prism__stacks_wanted;

static bool live(session *s)
{
    return s && !session_forked(s) && !atomic_load(&s->stopping) && !atomic_load(&s->failed);
}

bool prism__stack_begin(uint64_t period_ns, const char *what)
{
    session *s = prism__s;
    if (!live(s))
        return false;
    pthread_mutex_lock(&s->lock);
    s->stk_period_ns = period_ns;
    snprintf(s->stk_status, sizeof s->stk_status, "%s", what ? what : "on");
    s->stk_status_dirty = true;
    pthread_mutex_unlock(&s->lock);
    return true;
}

void prism__stack_end(const char *why)
{
    session *s = prism__s;
    if (!live(s))
        return;
    pthread_mutex_lock(&s->lock);
    snprintf(s->stk_status, sizeof s->stk_status, "off: %s", why ? why : "stopped");
    s->stk_status_dirty = true;
    pthread_mutex_unlock(&s->lock);
}

uint32_t prism__stack_stream(uint64_t os_tid)
{
    session *s = prism__s;
    uint32_t stream = 0;
    if (!live(s))
        return 0;
    pthread_mutex_lock(&s->lock);
    for (prism__thread *th = s->threads; th && !stream; th = th->next)
        if (th->os_tid == os_tid && !th->dead)
            stream = th->stream;
    pthread_mutex_unlock(&s->lock);
    return stream;
}

static bool grow_words(session *s, size_t need)
{
    size_t cap = s->stkcap ? s->stkcap : 4096;
    while (cap < need)
        cap *= 2;
    uint32_t *v = realloc(s->stk, cap * sizeof *v);
    if (!v)
        return false;
    s->stk = v;
    s->stkcap = cap;
    return true;
}

bool prism__stack_put(uint32_t stream, uint64_t ticks, uint32_t flags, const uint32_t *frames,
                      uint32_t n, uint64_t wait_ns, uint64_t queued_ns)
{
    session *s = prism__s;
    if (!live(s) || !stream || !frames || !n || n > PRISM_STACK_MAX_FRAMES)
        return false;
    flags &= PRISM_STACK_TRUNCATED | PRISM_STACK_RUNNING | PRISM_STACK_SYSCALL;
    size_t need = STK_HEAD + n;
    bool ok = false;
    pthread_mutex_lock(&s->lock);
    if (s->nstk + need <= STK_MAX_WORDS &&
        (s->nstk + need <= s->stkcap || grow_words(s, s->nstk + need))) {
        uint32_t *w = s->stk + s->nstk;
        w[0] = (uint32_t)ticks;
        w[1] = (uint32_t)(ticks >> 32);
        w[2] = stream;
        w[3] = flags;
        w[4] = n;
        w[5] = wait_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)wait_ns;
        w[6] = queued_ns > w[5] ? w[5] : (uint32_t)queued_ns;
        memcpy(w + STK_HEAD, frames, n * sizeof *frames);
        s->nstk += need;
        ok = true;
    } else {
        s->stk_dropped++;
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

void pc_stacks_take(session *s, pc_stacks *out)
{
    out->w = s->stk;
    out->n = s->nstk;
    out->dropped = s->stk_dropped;
    out->period_ns = s->stk_period_ns;
    out->status_changed = s->stk_status_dirty;
    memcpy(out->status, s->stk_status, sizeof out->status);
    s->stk = NULL;
    s->nstk = s->stkcap = 0;
    s->stk_status_dirty = false;
}

bool pc_stacks_next(const pc_stacks *q, size_t *pos, uint64_t *ticks, prism_stack_sample *x)
{
    if (*pos + STK_HEAD > q->n)
        return false;
    const uint32_t *w = q->w + *pos;
    if (*pos + STK_HEAD + w[4] > q->n)
        return false;
    *ticks = (uint64_t)w[1] << 32 | w[0];
    x->stream = w[2];
    x->flags = w[3];
    x->nframes = w[4];
    x->wait_ns = w[5];
    x->queued_ns = w[6];
    x->frames = w + STK_HEAD;
    *pos += STK_HEAD + w[4];
    return true;
}

void pc_stacks_free(session *s)
{
    free(s->stk);
    s->stk = NULL;
    s->nstk = s->stkcap = 0;
}
