/*
 * buffers.c - per-thread event buffers: registration of a thread on its
 * first event, the slow path when a buffer is full (hand it to the writer,
 * take a free one), the drop/wait policy, and the flush at thread exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpusample.h"
#include "internal.h"

_Atomic int prism__on;
_Atomic int prism__counting;
__thread prism__tls prism__t __attribute__((tls_model("initial-exec")));
session *prism__s;

static pthread_key_t exit_key;
static bool exit_key_ok;        /* 0 is a valid key: keep success apart */
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static _Atomic int warned;

void session_warn(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "prism: warning: %s\n", msg);
}

/* Stop recording for good; warn the first time only. */
void session_fail(session *s, const char *fmt, ...)
{
    atomic_store(&prism__on, 0);
    atomic_store(&prism__counting, 0);
    if (s)
        atomic_store(&s->failed, 1);
    if (atomic_exchange(&warned, 1))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "prism: warning: %s; profiling stopped\n", msg);
}

void session_wake(session *s)
{
    char c = 1;
    ssize_t n = write(s->wake_wr, &c, 1);   /* full pipe: already awake */
    (void)n;
}

void queue_push(session *s, const proc_rec *r)
{
    if (s->nqueue == s->qcap) {
        size_t cap = s->qcap ? s->qcap * 2 : 256;
        if (cap > (1u << 20)) {         /* writer stuck: count, do not grow */
            s->queue_dropped++;
            return;
        }
        proc_rec *q = realloc(s->queue, cap * sizeof *q);
        if (!q) {
            s->queue_dropped++;
            return;
        }
        s->queue = q;
        s->qcap = cap;
    }
    s->queue[s->nqueue++] = *r;
}

static void make_key(void)
{
    exit_key_ok = pthread_key_create(&exit_key, buffers_thread_exit) == 0;
}

/* A buffer from the free list or a new one within the budget (lock held). */
static buffer *take_buffer(session *s)
{
    buffer *b = s->free;
    if (b) {
        s->free = b->next;
        atomic_fetch_sub(&s->free_count, 1);
    } else if (s->buffers < s->buffers_max) {
        b = calloc(1, sizeof *b);
        if (b)
            b->ev = malloc((size_t)s->cfg.buffer_events * sizeof *b->ev);
        if (!b || !b->ev) {
            free(b);
            return NULL;
        }
        b->cap = s->cfg.buffer_events;
        if (++s->buffers == s->buffers_max)
            atomic_store(&s->exhausted, 1);
    } else {
        return NULL;
    }
    b->next = NULL;
    b->done = 0;
    atomic_store_explicit(&b->fill, 0, memory_order_relaxed);
    return b;
}

static void use_buffer(prism__tls *t, buffer *b)
{
    t->th->cur = b;
    t->ev = b ? b->ev : NULL;
    t->pos = 0;
    t->cap = b ? b->cap : 0;
    t->pub = b ? &b->fill : NULL;
}

void buffers_hand_over(prism__thread *th)
{
    buffer *b = th->cur;
    if (!b)
        return;
    b->next = NULL;
    if (th->full_tail)
        th->full_tail->next = b;
    else
        th->full = b;
    th->full_tail = b;
    th->cur = NULL;
}

static prism__thread *register_thread(session *s, prism__tls *t)
{
    prism__thread *th = calloc(1, sizeof *th);
    if (!th)
        return NULL;
    th->os_tid = (uint64_t)syscall(SYS_gettid);
    if (th->os_tid == (uint64_t)s->pid)
        snprintf(th->name, sizeof th->name, "main");
    else if (pthread_getname_np(pthread_self(), th->name, sizeof th->name) != 0 ||
             !th->name[0])
        snprintf(th->name, sizeof th->name, "thread-%llu", (unsigned long long)th->os_tid);
    th->name_dirty = true;
    /* the thread's CPU clock, for the sampler where schedstat is missing */
    th->cpu.clock_ok = pthread_getcpuclockid(pthread_self(), &th->cpu.clock) == 0;
    th->stream = s->next_stream++;
    th->next = s->threads;
    s->threads = th;
    t->th = th;
    pthread_once(&exit_once, make_key);
    if (exit_key_ok)
        pthread_setspecific(exit_key, th);
    return th;
}

prism__thread *buffers_self(session *s)
{
    prism__tls *t = &prism__t;
    if (t->th)
        return t->th;
    pthread_mutex_lock(&s->lock);
    prism__thread *th = register_thread(s, t);
    pthread_mutex_unlock(&s->lock);
    return th;
}

/* Make room for `need` events in the calling thread's buffer.  False when
 * the events must be dropped. */
static bool make_room(session *s, prism__tls *t, uint32_t need)
{
    if (atomic_load_explicit(&s->failed, memory_order_relaxed) ||
        atomic_load_explicit(&s->stopping, memory_order_relaxed))
        return false;
    /* Dropping and nothing free: don't take the lock for every event.  A
     * thread whose bounded wait ran out drops the same way until it gets a
     * buffer again, rather than waiting a second for every event. */
    if (t->th && !t->th->cur &&
        (s->cfg.policy == PRISM_POLICY_DROP || t->th->wait_expired) &&
        atomic_load_explicit(&s->exhausted, memory_order_relaxed) &&
        atomic_load_explicit(&s->free_count, memory_order_relaxed) == 0)
        return false;
    pthread_mutex_lock(&s->lock);
    prism__thread *th = t->th;
    if (!th && !(th = register_thread(s, t))) {
        pthread_mutex_unlock(&s->lock);
        return false;
    }
    if (th->cur && t->pos + need <= t->cap) {
        pthread_mutex_unlock(&s->lock);
        return true;
    }
    buffers_hand_over(th);
    use_buffer(t, NULL);
    buffer *b = take_buffer(s);
    if (!b && s->cfg.policy == PRISM_POLICY_WAIT && !th->wait_expired) {
        session_wake(s);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;              /* bounded: never hang the host */
        while (!(b = take_buffer(s)) && !atomic_load(&s->stopping) && !atomic_load(&s->failed))
            if (pthread_cond_timedwait(&s->space, &s->lock, &until) == ETIMEDOUT)
                break;
    }
    th->wait_expired = !b && s->cfg.policy == PRISM_POLICY_WAIT;
    use_buffer(t, b);
    pthread_mutex_unlock(&s->lock);
    if (b)
        session_wake(s);                /* a full buffer is waiting */
    return b != NULL;
}

void prism__event_slow(uint32_t word, uint64_t ts)
{
    session *s = prism__s;
    prism__tls *t = &prism__t;
    if (!s || s->pid != getpid())
        return;
    if (!make_room(s, t, 1)) {
        if (t->th)
            atomic_fetch_add_explicit(&t->th->dropped, 1, memory_order_relaxed);
        return;
    }
    prism__emit(word, ts);
}

/* A counter's slow path (collect.h has the fast one): no buffer, or no
 * room for its two slots.  getpid() is a system call: checked here only
 * (a forked child's thread has no buffer, so it always comes here). */
void prism__counter_slow(uint32_t word, uint64_t bits, uint64_t ts)
{
    session *s = prism__s;
    prism__tls *t = &prism__t;
    if (!s || atomic_load_explicit(&s->failed, memory_order_relaxed) || s->pid != getpid())
        return;
    if (t->pos + 2 > t->cap && !make_room(s, t, 2)) {
        if (t->th)
            atomic_fetch_add_explicit(&t->th->dropped, 1, memory_order_relaxed);
        return;
    }
    uint32_t pos = t->pos;
    t->ev[pos] = (prism__event){ ts, word, 0 };
    t->ev[pos + 1] = (prism__event){ bits, 0, 0 };
    t->pos = pos + 2;
    atomic_store_explicit(t->pub, pos + 2, memory_order_release);
}

/* pthread key destructor: the thread's last events go to the writer. */
void buffers_thread_exit(void *arg)
{
    prism__thread *th = arg;
    session *s = prism__s;
    prism__tls *t = &prism__t;
    if (!s || !th || t->th != th || s->pid != getpid())
        return;                         /* (a forked child never takes the lock) */
    cpu_reading last;                   /* its own final CPU time, exact */
    cpu_read_self(s, th->os_tid, &last);
    pthread_mutex_lock(&s->lock);
    buffers_hand_over(th);
    th->cpu.last = last;
    th->dead = true;
    use_buffer(t, NULL);
    t->th = NULL;
    pthread_mutex_unlock(&s->lock);
    session_wake(s);
}

void buffers_reset_tls(void)
{
    prism__tls *t = &prism__t;
    t->ev = NULL;
    t->pos = t->cap = 0;
    t->pub = NULL;
}

static void free_list(buffer *b)
{
    while (b) {
        buffer *n = b->next;
        free(b->ev);
        free(b);
        b = n;
    }
}

/* At shutdown: free what no live thread can still write into. */
void buffers_free_all(session *s)
{
    free_list(s->free);
    s->free = NULL;
    prism__thread **pp = &s->threads;
    while (*pp) {
        prism__thread *th = *pp;
        free_list(th->full);
        th->full = th->full_tail = NULL;
        if (th->dead) {
            *pp = th->next;
            free_list(th->cur);
            free(th);
        } else {
            pp = &th->next;
        }
    }
}
