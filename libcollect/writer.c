/*
 * writer.c - the writer thread: every flush interval (or when a thread
 * hands over a full buffer) it snapshots the session under the lock,
 * encodes what is new outside it, and appends the chunks with plain
 * write()s.  What reached write() survives a SIGKILL of the process.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpusample.h"
#include "cupti.h"
#include "encode_run.h"
#include "internal.h"
#include "sampler.h"

#define OUT_BYTES   (1u << 20)
#define CHUNK_BYTES (64u * 1024u)
#define COLLECT_NS  5000000u    /* gated: full buffers are collected this often */
/* CPU passes while every recorded thread stays idle: after IDLE_PASSES
 * passes without a change the period doubles, up to IDLE_MAX_SHIFT times
 * (5 ms -> 40 ms at the defaults); the first change brings it back. */
#define IDLE_PASSES 4u
#define IDLE_MAX_SHIFT 3u
/* The writer's timer slack: its wake-ups may come this much late, so the
 * kernel can serve them together with other timers. */
#define WRITER_SLACK_NS 1000000ul

typedef struct snap {
    prism__thread *th;
    buffer *full;               /* detached full buffers, oldest first */
    buffer *cur;
    uint32_t cur_fill;          /* the current buffer's fill at the snapshot */
    bool dead;
    bool name_dirty;
    char name[64];
} snap;

typedef struct wstate {
    session *s;
    uint8_t *out;
    size_t olen;
    uint8_t *rbuf, *mbuf, *kbuf, *pbuf;
    mem_sampler mem;                /* memory samples (sampler.c) */
    uint64_t dropped_total;
    uint64_t gpu_dropped_written;
    cpu_sampler *cpu;               /* on-CPU samples, written at each flush */
    uint64_t cpu_last_ns, cpu_dropped_written;
    uint64_t stk_last_ns, stk_dropped_written;  /* STACKS chunks (stacks.c) */
    uint32_t step_stream_written;   /* INFO steps.thread written for it */
    uint64_t give_up_ns;            /* a stop was asked: writes end by then */
    bool sig_seen;                  /* ... by a signal: sooner */
    bool world_written;             /* INFO job.world_size written */
    uint64_t last_cycle;            /* when the last flush began */
    uint64_t written_then;          /* s->events_written after it */
    double bufs_per_ns;             /* buffers filled: the recent rate */
    /* a thread's marks and counters, encoded after its regions so that
     * chunk sequence numbers follow the order chunks are written in */
    prism_mark *marks;
    prism_counter *ctrs;
    size_t nmarks, nctrs, mcap, ccap;
} wstate;

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/*
 * A FIFO's reader that does not read (O_NONBLOCK: EAGAIN): wait for room a
 * slice at a time.  While recording, the writer may wait as long as it
 * takes (the program's threads drop or wait by their policy); once the
 * program ends (shutdown), only for the session's grace; after a SIGINT or
 * SIGTERM, which should end the program now, a quarter of it and at most
 * SIG_GRACE_NS.
 * False: give up.
 */
#define SIG_GRACE_NS 500000000ull

static bool wait_room(wstate *w)
{
    session *s = w->s;
    uint64_t now = pc_clock_mono_ns();
    if (!w->give_up_ns && atomic_load(&s->stopping))
        w->give_up_ns = now + s->grace_ns;
    if (!w->sig_seen && atomic_load(&s->signo)) {
        uint64_t sig_grace = s->grace_ns / 4 < SIG_GRACE_NS ? s->grace_ns / 4 : SIG_GRACE_NS;
        w->sig_seen = true;
        if (!w->give_up_ns || w->give_up_ns > now + sig_grace)
            w->give_up_ns = now + sig_grace;
    }
    if (w->give_up_ns && now >= w->give_up_ns)
        return false;
    struct pollfd p = { s->fd, POLLOUT, 0 };
    poll(&p, 1, 100);
    return true;
}

/*
 * Append what is pending.  Any failure (a full disk, a file-size limit:
 * EFBIG as session.c ignores SIGXFSZ, EIO, a short write, a FIFO's reader
 * that stopped reading past the grace) stops recording with one warning;
 * what reached the file before stays readable.  A file
 * removed meanwhile (its directory too) would swallow every later write:
 * that stops it as well, checked once per flush, outside the hot path.
 */
static void out_flush(wstate *w)
{
    session *s = w->s;
    size_t off = 0;
    struct stat st;
    if (w->olen && !atomic_load(&s->failed) && fstat(s->fd, &st) == 0 && st.st_nlink == 0)
        pc_session_fail(s, "profile output '%s' was removed", s->output);
    while (off < w->olen && !atomic_load(&s->failed)) {
        ssize_t n = write(s->fd, w->out + off, w->olen - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_room(w))
                continue;
            pc_session_fail(s, "the reader of profile '%s' stopped reading: %zu bytes not "
                            "written, the profile ends here", s->output, w->olen - off);
            break;
        }
        if (n <= 0) {
            pc_session_fail(s, "cannot write profile '%s': %s", s->output,
                         n < 0 ? strerror(errno) : "short write");
            break;
        }
        off += (size_t)n;
    }
    w->olen = 0;
}

static void out_chunk(wstate *w, prism_enc *e)
{
    size_t len;
    if (prism_enc_records(e) == 0 || prism_enc_finish(e, &len) != PRISM_OK)
        return;
    if (w->olen + len > OUT_BYTES)
        out_flush(w);
    memcpy(w->out + w->olen, e->buf, len);
    w->olen += len;
    w->s->chunks_written++;
}

/* Append through *e, beginning (and when full, finishing and re-beginning)
 * chunks of `kind` on a stream as needed.  `call` re-evaluates the append. */
#define PUT(w, e, open, buf, kind, stream, seq, base, depth, call) do { \
        if (!(open)) { \
            prism_enc_begin((e), (buf), CHUNK_BYTES, (kind), (stream), (seq)++, (base), (depth)); \
            (open) = true; \
        } \
        if ((call) == PRISM_E_NOSPACE) { \
            out_chunk((w), (e)); \
            prism_enc_begin((e), (buf), CHUNK_BYTES, (kind), (stream), (seq)++, (base), (depth)); \
            (void)(call); \
        } \
    } while (0)

/* A full REGIONS chunk from pc_encode_regions. */
static void region_chunk_full(void *ctx, prism_enc *e)
{
    out_chunk(ctx, e);
}

/* A count of regions the thread could not record (buffers.c): an
 * UNRECORDED chunk between its REGIONS chunks, where the depth it carries
 * is the thread's depth in the stream (docs/FORMAT.md, 7.13). */
static void encode_gap(wstate *w, prism__thread *th, region_sink *rk, uint64_t ns, uint64_t n)
{
    if (rk->open) {
        out_chunk(w, &rk->e);
        rk->open = false;
    }
    prism_enc e;
    prism_unrecorded u = { ns, th->depth, n };
    if (prism_enc_begin(&e, w->pbuf, CHUNK_BYTES, PRISM_CHUNK_UNRECORDED, th->stream, th->seq++,
                        ns, 0) == PRISM_OK &&
        prism_enc_unrecorded(&e, &u) == PRISM_OK)
        out_chunk(w, &e);
}

/* Encode b's events from where the last flush stopped up to `fill`: runs
 * of enters and exits by pc_encode_regions (encode_run.c), the rest here. */
static void encode_buffer(wstate *w, prism__thread *th, buffer *b, uint32_t fill,
                          region_sink *rk)
{
    session *s = w->s;
    uint64_t before = s->events_written;
    for (uint32_t i = b->done; i < fill; i++) {
        i = pc_encode_regions(s, th, rk, b->ev, i, fill, &s->events_written);
        if (i >= fill)
            break;
        const prism__event *ev = &b->ev[i];
        uint64_t ns = pc_clock_ns(s, ev->ts);
        if (ns < th->last_ns)
            ns = th->last_ns;
        th->last_ns = ns;
        uint32_t kind = ev->word & 15u, id = ev->word >> 4;
        switch (kind) {
        case PRISM__EV_MARK:
            if (!grow((void **)&w->marks, &w->mcap, w->nmarks, sizeof *w->marks)) {
                atomic_fetch_add(&th->dropped, 1);
                continue;
            }
            w->marks[w->nmarks++] = (prism_mark){ ns, id };
            break;
        case PRISM__EV_COUNTER_I:
        case PRISM__EV_COUNTER_F: {
            if (i + 1 >= fill)
                break;
            uint64_t bits = b->ev[++i].ts;
            prism_counter c = { .ts = ns, .name = id, .is_float = kind == PRISM__EV_COUNTER_F };
            if (c.is_float)
                memcpy(&c.v.f, &bits, sizeof bits);
            else
                c.v.i = (int64_t)bits;
            if (!grow((void **)&w->ctrs, &w->ccap, w->nctrs, sizeof *w->ctrs)) {
                atomic_fetch_add(&th->dropped, 1);
                continue;
            }
            w->ctrs[w->nctrs++] = c;
            break;
        }
        case EV_GAP:                    /* a count, not a record of the program */
            encode_gap(w, th, rk, ns, (uint64_t)id << 32 | ev->aux);
            continue;
        default:
            continue;
        }
        s->events_written++;
    }
    s->program_events += s->events_written - before;
    b->done = fill;
}

static void encode_thread(wstate *w, snap *sn)
{
    prism__thread *th = sn->th;
    region_sink rk = { .buf = w->rbuf, .cap = CHUNK_BYTES, .full = region_chunk_full, .ctx = w };
    w->nmarks = w->nctrs = 0;
    for (buffer *b = sn->full; b; b = b->next)
        encode_buffer(w, th, b, atomic_load_explicit(&b->fill, memory_order_acquire), &rk);
    if (sn->cur)
        encode_buffer(w, th, sn->cur, sn->cur_fill, &rk);
    if (rk.open)
        out_chunk(w, &rk.e);
    prism_enc e;
    bool open = false;
    for (size_t i = 0; i < w->nmarks; i++)
        PUT(w, &e, open, w->mbuf, PRISM_CHUNK_MARKS, th->stream, th->seq, w->marks[i].ts, 0,
            prism_enc_mark(&e, &w->marks[i]));
    if (open)
        out_chunk(w, &e);
    open = false;
    for (size_t i = 0; i < w->nctrs; i++)
        PUT(w, &e, open, w->kbuf, PRISM_CHUNK_COUNTERS, th->stream, th->seq, w->ctrs[i].ts, 0,
            prism_enc_counter(&e, &w->ctrs[i]));
    if (open)
        out_chunk(w, &e);
}

static void emit_strings(wstate *w, char **names, uint32_t first, uint32_t n)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    uint32_t id = first;
    for (uint32_t i = 0; i < n; i++, id++)
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_STRINGS, 0, s->seq0, id, 0,
            prism_enc_string(&e, names[i], strlen(names[i])));
    if (open)
        out_chunk(w, &e);
}

/* Thread names, steps and memory samples: written before the threads'
 * chunks of the same flush, so a reader knows a step before the regions it
 * contains (every region of a queued step is already in the buffers). */
static void emit_process(wstate *w, snap *sn, size_t nsnap, proc_rec *q, size_t nq)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    for (size_t i = 0; i < nsnap; i++) {
        if (!sn[i].name_dirty)
            continue;
        prism_thread t = { sn[i].th->stream, sn[i].th->os_tid, sn[i].name };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_THREADS, 0, s->seq0, 0, 0, prism_enc_thread(&e, &t));
    }
    if (open)
        out_chunk(w, &e);
    open = false;
    for (size_t i = 0; i < nq; i++) {
        if (!q[i].is_step)
            continue;
        prism_step st = q[i].u.step;
        st.start = pc_clock_ns(s, q[i].ticks);
        st.end = pc_clock_ns(s, q[i].ticks_end);
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_STEPS, 0, s->seq0, st.start, 0, prism_enc_step(&e, &st));
    }
    if (open)
        out_chunk(w, &e);
    open = false;
    /* which thread marks the steps: the training thread whose step time
     * is the denominator of the analysis's verdicts */
    uint32_t stepper = atomic_load_explicit(&s->step_stream, memory_order_relaxed);
    if (stepper && stepper != w->step_stream_written) {
        prism_value v = { .type = PRISM_VAL_UINT, .v.u = stepper };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "steps.thread", &v));
        out_chunk(w, &e);
        open = false;
        w->step_stream_written = stepper;
    }
    /* the job this process is one rank of: once, at the first flush */
    if (s->world_size && !w->world_written) {
        prism_value v = { .type = PRISM_VAL_UINT, .v.u = s->world_size };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "job.world_size", &v));
        out_chunk(w, &e);
        open = false;
        w->world_written = true;
    }
    for (size_t i = 0; i < nq; i++) {
        if (q[i].is_step)
            continue;
        prism_memory_sample m = q[i].u.mem;
        m.ts = pc_clock_ns(s, q[i].ticks);
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_MEMORY, 0, s->seq0, m.ts, 0, prism_enc_memory(&e, &m));
    }
    if (open)
        out_chunk(w, &e);
}

/* The GPU status when it changed: before the threads' chunks, so a reader
 * knows GPU records are coming before it reads the regions they refer to. */
static void emit_gpu_status(wstate *w)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    char status[512];
    if (cupti_status_changed(status, sizeof status)) {
        prism_value v = { .type = PRISM_VAL_TEXT, .v.s = status };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "gpu.status", &v));
        out_chunk(w, &e);
    }
}

/* GPU activity translated by cupti_drain: after the STRINGS and THREADS its
 * records refer to, and after the regions of the same flush, so an API
 * call's region is known when the call is read. */
static void emit_gpu(wstate *w)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    const prism_gpu_record *g;
    size_t n = cupti_records(&g);
    for (size_t i = 0; i < n; i++)
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_GPU, 0, s->seq0, g[i].start, 0,
            prism_enc_gpu(&e, &g[i]));
    if (open)
        out_chunk(w, &e);
    s->events_written += n;
    cupti_drained();
}

/* The CPU samples taken since the last flush, after the threads' regions:
 * every pass was taken before this flush's snapshot, so a reader crediting
 * a sample's interval to the regions open in it has them all.  The
 * sampler's state (once, and when it changes) and lost samples as INFO. */
static void emit_cpu(wstate *w)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    const char *status = pc_cpu_status_changed(w->cpu);
    if (status) {
        prism_value v = { .type = PRISM_VAL_TEXT, .v.s = status };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "cpu.sampler", &v));
    }
    uint64_t lost = pc_cpu_dropped(w->cpu);
    if (lost != w->cpu_dropped_written) {
        prism_value v = { .type = PRISM_VAL_UINT, .v.u = lost };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "cpu.dropped", &v));
        w->cpu_dropped_written = lost;
    }
    if (open)
        out_chunk(w, &e);
    open = false;
    const cpu_rec *r;
    pc_cpu_release_held(w->cpu);
    size_t n = pc_cpu_records(w->cpu, &r);
    for (size_t i = 0; i < n; i++) {
        uint64_t ns = pc_clock_ns(s, r[i].ticks);
        if (ns < w->cpu_last_ns)
            ns = w->cpu_last_ns;
        w->cpu_last_ns = ns;
        prism_cpu_sample x = { ns, r[i].stream, r[i].flags, r[i].on, r[i].wait };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_CPU, 0, s->seq0, ns, 0, prism_enc_cpu(&e, &x));
    }
    if (open)
        out_chunk(w, &e);
    s->events_written += n;
    pc_cpu_drained(w->cpu);
}

/* The facts queued since the last flush (info.c), as one INFO chunk. */
static void emit_info(wstate *w, const pc_info *l)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    for (; l; l = pc_info_next(l)) {
        const prism_value *v;
        const char *key = pc_info_key(l, &v);
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, key, v));
    }
    if (open)
        out_chunk(w, &e);
}

/* The sampled call stacks taken with this flush's snapshot, after the
 * threads' regions (stacks.c); the sampler's state and lost samples as
 * INFO when they change. */
static void emit_stacks(wstate *w, const pc_stacks *q)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    if (q->status_changed) {
        prism_value v = { .type = PRISM_VAL_TEXT, .v.s = q->status };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "stacks.sampler", &v));
        v = (prism_value){ .type = PRISM_VAL_UINT, .v.u = q->period_ns };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "stacks.period_ns", &v));
    }
    if (q->dropped != w->stk_dropped_written) {
        prism_value v = { .type = PRISM_VAL_UINT, .v.u = q->dropped };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "stacks.dropped", &v));
        w->stk_dropped_written = q->dropped;
    }
    if (open)
        out_chunk(w, &e);
    open = false;
    size_t pos = 0, n = 0;
    uint64_t ticks;
    prism_stack_sample x;
    while (pc_stacks_next(q, &pos, &ticks, &x)) {
        uint64_t ns = pc_clock_ns(s, ticks);
        if (ns < w->stk_last_ns)
            ns = w->stk_last_ns;
        w->stk_last_ns = ns;
        x.ts = ns;
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_STACKS, 0, s->seq0, ns, 0, prism_enc_stack(&e, &x));
        n++;
    }
    if (open)
        out_chunk(w, &e);
    s->events_written += n;
}

/* Cumulative dropped counts that changed, after the threads' chunks. */
static void emit_dropped(wstate *w, snap *sn, size_t nsnap)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    for (size_t i = 0; i < nsnap; i++) {
        prism__thread *th = sn[i].th;
        /* regions first: the owner counts a region's 2 events before it */
        uint64_t r = atomic_load_explicit(&th->drop_regions, memory_order_acquire);
        uint64_t d = atomic_load_explicit(&th->dropped, memory_order_relaxed) +
                     atomic_load_explicit(&th->drop_ev, memory_order_relaxed);
        if (d == th->dropped_written && r == th->regions_written)
            continue;
        /* a running sum: exited threads leave the list, not the total */
        w->dropped_total += d - th->dropped_written;
        th->dropped_written = d;
        th->regions_written = r;
        prism_dropped x = { th->stream, PRISM_SOURCE_CPU, d, true, r };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_DROPPED, 0, s->seq0, 0, 0, prism_enc_dropped(&e, &x));
    }
    uint64_t gd = cupti_dropped();      /* GPU activity: process-wide, stream 0 */
    if (gd != w->gpu_dropped_written) {
        w->dropped_total += gd - w->gpu_dropped_written;
        w->gpu_dropped_written = gd;
        prism_dropped x = { 0, PRISM_SOURCE_GPU, gd, false, 0 };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_DROPPED, 0, s->seq0, 0, 0, prism_enc_dropped(&e, &x));
    }
    if (open)
        out_chunk(w, &e);
}

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
        emit_strings(w, names, first, nnew);
        s->names_written = nnames;
    }
    if (sn) {
        emit_process(w, sn, nth, q, nq);
        emit_gpu_status(w);
    }
    for (size_t i = 0; sn && i < nth; i++)
        encode_thread(w, &sn[i]);
    if (sn)
        emit_gpu(w);
    if (sn)
        emit_cpu(w);
    if (sn)
        emit_stacks(w, &stk);
    if (sn)
        emit_info(w, info);
    pc_info_free(info);
    if (sn)
        emit_dropped(w, sn, nth);
    out_flush(w);

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
    out_chunk(w, &e);
    out_flush(w);
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
        uint64_t cpu_every = pc_cpu_period_ns(w->cpu);
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
        if (pc_cpu_period_ns(w->cpu) && next_cpu < until)
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
        signal(sig, SIG_DFL);
        kill(getpid(), sig);
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
        .version_minor = prism__stacks_wanted || s->cfg.collect_memory ? 2 : 1,
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
