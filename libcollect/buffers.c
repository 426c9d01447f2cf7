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

void pc_session_warn(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "prism: warning: %s\n", msg);
}

/* Stop recording for good; warn the first time only. */
void pc_session_fail(session *s, const char *fmt, ...)
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

void pc_session_wake(session *s)
{
    char c = 1;
    ssize_t n = write(s->wake_wr, &c, 1);   /* full pipe: already awake */
    (void)n;
}

void pc_queue_push(session *s, const proc_rec *r)
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
    exit_key_ok = pthread_key_create(&exit_key, pc_buffers_thread_exit) == 0;
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

void pc_buffers_hand_over(prism__thread *th)
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

/* The record CUPTI's API records made for this OS thread before it
 * recorded anything (cupti_drain.c: a launch reached the writer first),
 * taken over so that its launches and its regions share one track; NULL
 * when none.  (A record of an exited thread whose TID this one reuses would
 * be taken too: its launches then show on this thread.) */
static prism__thread *adopt_gpu_only(session *s, uint64_t os_tid)
{
    if (!s->gpu_only_threads)
        return NULL;
    for (prism__thread *th = s->threads; th; th = th->next)
        if (th->gpu_only && !th->dead && th->os_tid == os_tid) {
            th->gpu_only = false;
            s->gpu_only_threads--;
            return th;
        }
    return NULL;
}

static prism__thread *register_thread(session *s, prism__tls *t)
{
    uint64_t me = (uint64_t)syscall(SYS_gettid);
    prism__thread *th = adopt_gpu_only(s, me);
    bool adopted = th != NULL;
    if (!th && !(th = calloc(1, sizeof *th)))
        return NULL;
    th->os_tid = me;
    if (th->os_tid == (uint64_t)s->pid)
        snprintf(th->name, sizeof th->name, "main");
    else if (pthread_getname_np(pthread_self(), th->name, sizeof th->name) != 0 ||
             !th->name[0])
        snprintf(th->name, sizeof th->name, "thread-%llu", (unsigned long long)th->os_tid);
    th->name_dirty = true;
    if (!adopted) {     /* (an adopted one is sampled already, by its TID) */
        /* the thread's CPU clock, for the sampler where schedstat is missing */
        th->cpu.clock_ok = pthread_getcpuclockid(pthread_self(), &th->cpu.clock) == 0;
        th->stream = s->next_stream++;
        th->next = s->threads;
        s->threads = th;
    }
    t->th = th;
    pthread_once(&exit_once, make_key);
    if (exit_key_ok)
        pthread_setspecific(exit_key, th);
    return th;
}

prism__thread *pc_buffers_self(session *s)
{
    prism__tls *t = &prism__t;
    if (t->th)
        return t->th;
    pthread_mutex_lock(&s->lock);
    prism__thread *th = register_thread(s, t);
    pthread_mutex_unlock(&s->lock);
    return th;
}

/*
 * Whole regions or nothing.  The inline path (collect.h) stores an enter
 * only with room for it and two more slots at the buffer's end, the
 * thread's reserve (`resv`, 2 per recorded open region): so the exit of a
 * recorded region always fits, and so does, just before it, a count of the
 * regions that could not be recorded under it.  Here:
 *
 *   enter  no room and no other buffer: the region is skipped (`skip`), its
 *          exit with it, and every region inside it; the regions not
 *          recorded are counted (`gap`) and the inline limit is lowered to
 *          `pos`, so that the next recorded event comes here and writes the
 *          count first (EV_GAP), at the depth where the regions were lost;
 *   exit   the count, if any, then the exit, both in the reserve;
 *   mark, counter   dropped one by one when there is no room (counted).
 *
 * A full buffer goes to the writer with a new one in hand, the reserve
 * moving with the thread's depth into it; when none can be had, with the
 * reserve moved to a spare of that size (let_go), so that the writer can
 * recycle it.  No system call on any of these paths unless a buffer
 * changes hands: a dropping thread with nothing free (and nothing of its
 * own to let go) takes no lock, and a forked child is known by a flag its
 * fork handler set.
 */

/* A count with one writer, the owner: a plain add, no locked instruction. */
static inline void count_own(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Slots free beyond the reserve in the calling thread's buffer. */
static uint32_t room(const prism__tls *t)
{
    const buffer *b = t->th ? t->th->cur : NULL;
    return b && t->pos + t->resv < b->cap ? b->cap - t->pos - t->resv : 0;
}

/* The inline path's limit: the buffer's end, or `pos` while a count of
 * unrecorded regions waits to be written (every event then comes here). */
static void set_limit(prism__tls *t)
{
    const buffer *b = t->th ? t->th->cur : NULL;
    t->cap = !b ? 0 : t->th->gap ? t->pos : b->cap;
}

static void put(prism__tls *t, uint32_t word, uint32_t aux, uint64_t ts)
{
    t->ev[t->pos++] = (prism__event){ ts, word, aux };
}

static void publish(prism__tls *t)
{
    atomic_store_explicit(t->pub, t->pos, memory_order_release);
}

/* The pending count of unrecorded regions, when there is one (its slot is
 * known to be there). */
static void put_gap(prism__tls *t, uint64_t ts)
{
    prism__thread *th = t->th;
    if (!th->gap)
        return;
    uint64_t n = th->gap < (1ull << 60) ? th->gap : (1ull << 60) - 1;
    put(t, (uint32_t)(n >> 32) << 4 | EV_GAP, (uint32_t)n, ts);
    th->gap = 0;
}

/* No buffer to be had: the full one goes to the writer all the same, to
 * come back to the pool, and the thread keeps only room for the exits it
 * owes (a spare of `resv` slots, outside the pool; none when it owes
 * none).  Without memory for a spare it keeps its buffer.  Lock held. */
static bool let_go(prism__tls *t, prism__thread *th)
{
    if (!th->cur || th->cur->spare)
        return false;
    buffer *sp = NULL;
    if (t->resv) {
        sp = calloc(1, sizeof *sp);
        if (sp)
            sp->ev = malloc((size_t)t->resv * sizeof *sp->ev);
        if (!sp || !sp->ev) {
            free(sp);
            return false;
        }
        sp->cap = t->resv;
        sp->spare = true;
    }
    pc_buffers_hand_over(th);
    use_buffer(t, sp);
    return true;
}

/* Make room for `need` events beyond the reserve: a new buffer, the
 * current one handed to the writer.  False when none can be had. */
static bool make_room(session *s, prism__tls *t, uint32_t need)
{
    if (atomic_load_explicit(&s->failed, memory_order_relaxed) ||
        atomic_load_explicit(&s->stopping, memory_order_relaxed) ||
        t->resv + need > s->cfg.buffer_events)  /* nested deeper than a buffer */
        return false;
    /* Dropping, nothing free and nothing of ours to let go: don't take the
     * lock for every event.  A thread whose bounded wait ran out drops the
     * same way until it gets a buffer again, rather than waiting a second
     * for every event. */
    prism__thread *th = t->th;
    if (th && (!th->cur || th->cur->spare) &&
        (s->cfg.policy == PRISM_POLICY_DROP || th->wait_expired) &&
        atomic_load_explicit(&s->exhausted, memory_order_relaxed) &&
        atomic_load_explicit(&s->free_count, memory_order_relaxed) == 0)
        return false;
    pthread_mutex_lock(&s->lock);
    if (!th && !(th = register_thread(s, t))) {
        pthread_mutex_unlock(&s->lock);
        return false;
    }
    buffer *b = take_buffer(s);
    bool gone = !b && let_go(t, th);
    if (!b && s->cfg.policy == PRISM_POLICY_WAIT && !th->wait_expired) {
        pc_session_wake(s);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;              /* bounded: never hang the host */
        while (!(b = take_buffer(s)) && !atomic_load(&s->stopping) && !atomic_load(&s->failed))
            if (pthread_cond_timedwait(&s->space, &s->lock, &until) == ETIMEDOUT)
                break;
    }
    th->wait_expired = !b && s->cfg.policy == PRISM_POLICY_WAIT;
    if (b) {
        pc_buffers_hand_over(th);
        use_buffer(t, b);
    }
    bool wake = (b || gone) && pc_writer_wake_wanted(s);   /* a full buffer is waiting */
    pthread_mutex_unlock(&s->lock);
    if (wake)
        pc_session_wake(s);
    return b != NULL;
}

/* The region entering now is not recorded, nor anything inside it.  A
 * region skipped inside one that was not sampled is no drop. */
static void drop_region(prism__tls *t, bool outermost)
{
    prism__thread *th = t->th;
    t->skip++;
    if (!th || (!outermost && !th->dropping))
        return;
    th->dropping = true;
    th->gap++;
    count_own(&th->drop_ev, 2);         /* its enter and its exit, */
    atomic_store_explicit(&th->drop_regions,    /* then the region (release: */
                          atomic_load_explicit(&th->drop_regions, memory_order_relaxed) + 1,
                          memory_order_release);    /* the writer reads it first) */
    set_limit(t);
}

static void slow_enter(session *s, prism__tls *t, uint32_t word)
{
    if (t->skip) {                      /* inside a region not recorded */
        drop_region(t, false);
        return;
    }
    /* stamped before a wait for a buffer (WAIT); dropping, never read */
    bool wait = s->cfg.policy == PRISM_POLICY_WAIT;
    uint64_t ts = wait ? prism__now() : 0;
    if (t->th)
        t->th->dropping = false;        /* the dropped regions have ended */
    /* the count if one waits, the enter, the two slots it reserves */
    uint32_t need = 3u + (t->th && t->th->gap ? 1u : 0u);
    if (room(t) < need && !make_room(s, t, need)) {
        drop_region(t, true);
        return;
    }
    if (!wait)
        ts = prism__now();
    put_gap(t, ts);
    put(t, word, 0, ts);
    t->resv += 2;
    publish(t);
    set_limit(t);
}

/* An exit that came here: a count waits to be written before it, or no
 * recorded region is open (a pop without its push, or the pop of a region
 * entered before the buffers were reset: left out). */
static void slow_exit(prism__tls *t)
{
    prism__thread *th = t->th;
    if (t->resv < 2 || !th || !th->cur)
        return;
    uint64_t ts = prism__now();
    th->dropping = false;
    put_gap(t, ts);                     /* both in the region's reserve */
    put(t, PRISM__EV_EXIT, 0, ts);
    t->resv -= 2;
    publish(t);
    set_limit(t);
}

/* A mark (n 1; ts 0: read it once it is sure to be stored) or a counter
 * (n 2, its value's bits in a second slot). */
static void slow_record(session *s, prism__tls *t, uint32_t word, uint64_t bits, uint64_t ts,
                        uint32_t n)
{
    if (!t->skip && t->th)
        t->th->dropping = false;
    uint32_t need = n + (t->th && t->th->gap ? 1u : 0u);
    bool all = room(t) >= need || make_room(s, t, need);   /* with the count */
    if (!all && room(t) < n) {
        if (t->th)
            count_own(&t->th->drop_ev, 1);
        return;
    }
    if (!ts)
        ts = prism__now();
    if (all)
        put_gap(t, ts);
    put(t, word, 0, ts);
    if (n == 2)
        put(t, 0, 0, bits);
    publish(t);
    set_limit(t);
}

void prism__event_slow(uint32_t word)
{
    session *s = prism__s;
    prism__tls *t = &prism__t;
    if (!s || session_forked(s))
        return;
    switch (word & 15u) {
    case PRISM__EV_ENTER:
        slow_enter(s, t, word);
        break;
    case PRISM__EV_EXIT:
        slow_exit(t);
        break;
    default:
        slow_record(s, t, word, 0, 0, 1);
        break;
    }
}

/* A counter's slow path (collect.h has the fast one): no buffer, or no
 * room for its two slots beyond the reserve. */
void prism__counter_slow(uint32_t word, uint64_t bits, uint64_t ts)
{
    session *s = prism__s;
    if (!s || session_forked(s))
        return;
    slow_record(s, &prism__t, word, bits, ts, 2);
}

/* pthread key destructor: the thread's last events go to the writer. */
void pc_buffers_thread_exit(void *arg)
{
    prism__thread *th = arg;
    session *s = prism__s;
    prism__tls *t = &prism__t;
    if (!s || !th || t->th != th || session_forked(s))
        return;                         /* (a forked child never takes the lock) */
    cpu_reading last;                   /* its own final CPU time, exact */
    pc_cpu_read_self(s, th->os_tid, &last);
    pthread_mutex_lock(&s->lock);
    pc_buffers_hand_over(th);
    th->cpu.last = last;
    th->dead = true;
    use_buffer(t, NULL);
    t->resv = 0;
    t->th = NULL;
    pthread_mutex_unlock(&s->lock);
    pc_session_wake(s);
}

/* The calling thread records nothing more into its buffer (gone to the
 * writer, or the parent's, in a forked child). */
void pc_buffers_reset_tls(void)
{
    prism__tls *t = &prism__t;
    t->ev = NULL;
    t->pos = t->cap = 0;
    t->resv = 0;
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
void pc_buffers_free_all(session *s)
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
