/*
 * writer.c - the writer thread: every flush interval (or when a thread
 * hands over a full buffer) it snapshots the session under the lock,
 * encodes what is new outside it, and appends the chunks with plain
 * write()s (writer_emit.c: the records and the writes; writer.h: the
 * state both halves share).  What reached write() survives a SIGKILL of
 * the process.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti.h"
#include "writer.h"

#define COLLECT_NS  5000000u    /* gated: full buffers are collected this often */
/* CPU passes while every recorded thread stays idle: after IDLE_PASSES
 * passes without a change the period doubles, up to IDLE_MAX_SHIFT times
 * (5 ms -> 40 ms at the defaults); the first change brings it back. */
#define IDLE_PASSES 4u
#define IDLE_MAX_SHIFT 3u
/* The writer's timer slack: its wake-ups may come this much late, so the
 * kernel can serve them together with other timers. */
#define WRITER_SLACK_NS 1000000ul

/* The steps that ended since the last wake-up: into the process queue
 * (memory samples bring them along too: sampler.c). */
static void take_steps(session *s)
{
    if (!pc_steps_pending(s))
        return;
    pthread_mutex_lock(&s->lock);
    pc_steps_take(s);
    pthread_mutex_unlock(&s->lock);
}

/* One flush: snapshot under the lock, encode and write outside it. */
static void cycle(wstate *w)
{
    session *s = w->s;
    pc_clock_calibrate(s);
    cupti_drain(s);                     /* interns names, registers threads */
    pthread_mutex_lock(&s->lock);
    uint32_t nnames = prism_strtab_count(s->names), first = s->names_written + 1;
    uint32_t nnew = nnames - s->names_written;
    char **names = nnew ? malloc(nnew * sizeof *names) : NULL;
    for (uint32_t i = 0; names && i < nnew; i++)
        names[i] = strdup(prism_strtab_name(s->names, first + i, NULL));
    size_t nth = 0;
    for (prism__thread *th = s->threads; th; th = th->next)
        nth++;
    snap *sn = calloc(nth ? nth : 1, sizeof *sn);
    size_t k = 0;
    for (prism__thread *th = s->threads; sn && th; th = th->next, k++) {
        /* what is published now belongs to this flush: the steps queued
         * now cover it, later events wait for the next flush */
        sn[k] = (snap){ th, th->full, th->cur,
                        th->cur ? atomic_load_explicit(&th->cur->fill, memory_order_acquire) : 0,
                        th->dead, th->name_dirty, "" };
        memcpy(sn[k].name, th->name, sizeof sn[k].name);
        th->full = th->full_tail = NULL;
        th->name_dirty = false;
    }
    pc_steps_take(s);                      /* steps still in flight */
    pc_stacks stk;
    pc_stacks_take(s, &stk);            /* samples taken before the snapshot */
    pc_info *info = pc_info_take(s);
    proc_rec *q = s->queue;
    size_t nq = s->nqueue;
    s->queue = NULL;
    s->nqueue = s->qcap = 0;
    pthread_mutex_unlock(&s->lock);

    if (names && sn) {
        pc_emit_strings(w, names, first, nnew);
        s->names_written = nnames;
    }
    if (sn) {
        pc_emit_process(w, sn, nth, q, nq);
        pc_emit_gpu_status(w);
    }
    for (size_t i = 0; sn && i < nth; i++)
        pc_encode_thread(w, &sn[i]);
    if (sn)
        pc_emit_gpu(w);
    if (sn)
        pc_emit_cpu(w);
    if (sn)
        pc_emit_stacks(w, &stk);
    if (sn)
        pc_emit_info(w, info);
    pc_info_free(info);
    if (sn)
        pc_emit_dropped(w, sn, nth);
    pc_out_flush(w);

    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; sn && i < nth; i++) {
        buffer *b = sn[i].full;
        while (b) {
            buffer *n = b->next;
            if (b->spare) {             /* buffers.c: not the pool's */
                free(b->ev);
                free(b);
            } else {
                b->next = s->free;
                s->free = b;
                atomic_fetch_add(&s->free_count, 1);
            }
            b = n;
        }
        if (sn[i].dead && pc_cpu_release(w->cpu, sn[i].th)) {  /* else: next flush */
            prism__thread **pp = &s->threads;
            while (*pp != sn[i].th)
                pp = &(*pp)->next;
            *pp = sn[i].th->next;
            free(sn[i].th);
        }
    }
    pthread_cond_broadcast(&s->space);
    pthread_mutex_unlock(&s->lock);
    for (uint32_t i = 0; names && i < nnew; i++)
        free(names[i]);
    free(names);
    free(sn);
    free(q);
    free(stk.w);
}

static void write_footer(wstate *w)
{
    session *s = w->s;
    prism_enc e;
    prism_footer f = { 0, s->events_written, w->dropped_total, s->chunks_written,
                       atomic_load(&s->signo) == 0 };
    for (prism__thread *th = s->threads; th; th = th->next)
        if (th->last_ns > f.end_ts)
            f.end_ts = th->last_ns;
    uint64_t now = pc_clock_ns(s, prism__now());
    if (now > f.end_ts)
        f.end_ts = now;
    prism_enc_begin(&e, w->pbuf, CHUNK_BYTES, PRISM_CHUNK_FOOTER, 0, s->seq0++, 0, 0);
    prism_enc_footer(&e, &f);
    pc_out_chunk(w, &e);
    pc_out_flush(w);
}

/* Whether a buffer handed over now must wake the writer (lock held). */
bool pc_writer_wake_wanted(session *s)
{
    size_t below = atomic_load_explicit(&s->wake_below, memory_order_relaxed);
    return below == 0 ||
           atomic_load_explicit(&s->free_count, memory_order_relaxed) +
                   (s->buffers_max - s->buffers) < below;
}

/*
 * A wake-up per buffer handed over costs the writer a context switch (tens
 * of us of CPU on a small VM) and, on a busy machine, preempts a producer.
 * While buffers fill often and the pool has room for what two periods of
 * COLLECT_NS bring, the writer collects them every COLLECT_NS instead (on
 * the CPU sampler's wake-ups when it runs), and a buffer handed over wakes
 * it only when the pool runs lower than that (pc_writer_wake_wanted).  After
 * the flush that began at `start`.
 */
static void plan_wakeups(wstate *w, uint64_t start)
{
    session *s = w->s;
    uint64_t dt = start - w->last_cycle, n = s->events_written - w->written_then;
    double rate = dt ? (double)n / s->cfg.buffer_events / (double)dt : 0;
    w->bufs_per_ns = rate > w->bufs_per_ns / 2 ? rate : w->bufs_per_ns / 2;
    double per = w->bufs_per_ns * COLLECT_NS;       /* buffers a period */
    size_t below = 0;
    if (per >= 1 && 2 * per + 2 <= (double)(s->buffers_max / 2))
        below = (size_t)(2 * per) + 2;
    atomic_store_explicit(&s->wake_below, below, memory_order_relaxed);
    w->last_cycle = start;
    w->written_then = s->events_written;
}

void *pc_writer_main(void *arg)
{
    session *s = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_setname_np(pthread_self(), "prism-writer");
    /* Its wake-ups never preempt the program: as SCHED_BATCH the writer
     * runs at the next scheduling point instead of taking the CPU from the
     * thread on it (on a busy machine the training thread would then wait
     * behind other processes for its next time slice).  Best effort. */
    struct sched_param sp = { 0 };
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    prctl(PR_SET_TIMERSLACK, WRITER_SLACK_NS, 0, 0, 0);
    /* on the heap, held by the session: a child forked while this runs
     * (where this thread does not exist) still reaches the buffers, so a
     * leak checker in it finds nothing lost */
    wstate *w = calloc(1, sizeof *w);
    if (!w) {
        pc_session_fail(s, "out of memory for the writer");
        atomic_store(&s->writer_done, 1);
        return NULL;
    }
    w->s = s;
    s->writer_state = w;
    w->out = malloc(OUT_BYTES);
    w->rbuf = malloc(CHUNK_BYTES);
    w->mbuf = malloc(CHUNK_BYTES);
    w->kbuf = malloc(CHUNK_BYTES);
    w->pbuf = malloc(CHUNK_BYTES);
    if (!w->out || !w->rbuf || !w->mbuf || !w->kbuf || !w->pbuf) {
        pc_session_fail(s, "out of memory for the writer");
        goto done;
    }
    uint64_t interval = (uint64_t)s->cfg.flush_interval_ms * 1000000u;
    uint64_t next_flush = pc_clock_mono_ns() + interval;
    w->last_cycle = pc_clock_mono_ns();
    pc_sampler_init(&w->mem, s, pc_clock_mono_ns());
    w->cpu = pc_cpu_new(s);
    if (!w->cpu)
        pc_session_warn("out of memory for CPU sampling; it is off");
    uint64_t next_cpu = pc_clock_mono_ns();
    unsigned idle = 0;                  /* CPU passes in a row without a change */
    for (;;) {
        uint64_t now = pc_clock_mono_ns();
        /* the steps that ended since the last wake-up, memory once for them */
        uint64_t next_mem = pc_sampler_poll(&w->mem, s, now, false);
        take_steps(s);
        /* CPU passes at a fixed rate, written at the next flush: they wake
         * the writer, they do not make it flush */
        uint64_t cpu_every = atomic_load_explicit(&s->cpu_paused, memory_order_relaxed)
                                 ? 0 : pc_cpu_period_ns(w->cpu);
        if (cpu_every && now >= next_cpu) {
            idle = pc_cpu_pass(w->cpu) ? 0 : idle + 1;
            unsigned shift = idle / IDLE_PASSES;
            next_cpu += cpu_every << (shift < IDLE_MAX_SHIFT ? shift : IDLE_MAX_SHIFT);
            if (next_cpu <= now)
                next_cpu = now + cpu_every;
        }
        uint64_t until = next_flush;
        if (next_mem < until)
            until = next_mem;
        if (cpu_every && pc_cpu_period_ns(w->cpu) && next_cpu < until)
            until = next_cpu;
        uint64_t collect = atomic_load_explicit(&s->wake_below, memory_order_relaxed)
                               ? w->last_cycle + COLLECT_NS : UINT64_MAX;
        if (collect < until)
            until = collect;
        int timeout = until > now ? (int)((until - now + 999999u) / 1000000u) : 0;
        struct pollfd p = { s->wake_rd, POLLIN, 0 };
        int r = poll(&p, 1, timeout);
        if (r > 0) {
            char drain[256];
            while (read(s->wake_rd, drain, sizeof drain) > 0)
                ;
        }
        if (atomic_load(&s->stopping) || atomic_load(&s->signo) || atomic_load(&s->failed))
            break;
        now = pc_clock_mono_ns();
        if (r > 0 || now >= next_flush || now >= collect - COLLECT_NS / 2) {
            cycle(w);
            plan_wakeups(w, now);
            next_flush = pc_clock_mono_ns() + interval;
        }
    }
    cupti_stop(s);                        /* forced CUPTI flush, detach */
    if (!atomic_load(&s->failed)) {
        pc_sampler_poll(&w->mem, s, pc_clock_mono_ns(), true);
        pc_cpu_pass(w->cpu);                  /* the threads' last values */
        cycle(w);
        write_footer(w);
    }
    pc_cpu_free(w->cpu);
    pc_sampler_close(&w->mem);
done:
    free(w->out);
    free(w->rbuf);
    free(w->mbuf);
    free(w->kbuf);
    free(w->pbuf);
    free(w->marks);
    free(w->ctrs);
    s->writer_state = NULL;
    free(w);
    /* a signal from now on is session.c's to re-raise (one seen before
     * is ours: both may raise it, the first one ends the program) */
    atomic_store(&s->writer_done, 1);
    int sig = atomic_load(&s->signo);
    if (sig && !atomic_load(&s->stopping)) {
        /* The program's own disposition, now that the file is complete. */
        close(s->fd);
        s->fd = -1;
        pc_session_deliver(sig);
    }
    return NULL;
}

/* The header, written synchronously at init. */
int pc_writer_header(session *s, char *const *argv, size_t argc)
{
    prism_kv kv[32];
    size_t nkv = pc_cfg_header_kv(&s->cfg, kv, 32);
    prism_header h = {
        .producer = "libcollect " PRISM_VERSION_STRING, .host = s->host,
        .pid = (uint64_t)s->pid, .rank = s->rank, .argv = (const char *const *)argv,
        .argc = argc, .clock = NULL, .start_unix_ns = 0, .start_mono_ns = s->t0_mono,
        .config = kv, .nconfig = nkv,
        /* 1.1: CPU chunks, UNRECORDED chunks and DROPPED's regions (any
         * run may drop) */
        /* 1.2: STACKS chunks, the machine's load in MEMORY samples */
        .version_minor = s->cfg.collect_memory ? 3 : prism__stacks_wanted ? 2 : 1,
    };
#if defined(__x86_64__) || defined(__i386__)
    h.clock = prism__clock_tsc ? "tsc (calibrated against CLOCK_MONOTONIC)" : "CLOCK_MONOTONIC";
#else
    h.clock = "CLOCK_MONOTONIC";
#endif
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    uint64_t since = pc_clock_mono_ns() - s->t0_mono;
    h.start_unix_ns = real - since;
    s->start_unix_ns = h.start_unix_ns;
    if (s->worker_id >= 0 && nkv + 3 <= 32) {   /* a worker: whose (FORMAT.md) */
        kv[nkv++] = (prism_kv){ "worker.id", { PRISM_VAL_UINT, { .u = (uint64_t)s->worker_id } } };
        kv[nkv++] = (prism_kv){ "worker.parent_pid", { PRISM_VAL_UINT, { .u = s->parent_pid } } };
        kv[nkv++] = (prism_kv){ "worker.parent_start_ns",
                                { PRISM_VAL_UINT, { .u = s->parent_start_ns } } };
        h.nconfig = nkv;
    }
    uint8_t *buf = malloc(PRISM_MAX_HEADER_BYTES);
    size_t len;
    if (!buf)
        return -1;
    int rc = -1;
    if (prism_header_encode(&h, buf, PRISM_MAX_HEADER_BYTES, &len) == PRISM_OK) {
        size_t off = 0;
        while (off < len) {
            ssize_t n = write(s->fd, buf + off, len - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                if (n == 0)
                    errno = EIO;        /* a short write: no errno of its own */
                break;
            }
            off += (size_t)n;
        }
        rc = off == len ? 0 : -1;
    }
    free(buf);
    return rc;
}
