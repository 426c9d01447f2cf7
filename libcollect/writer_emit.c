/*
 * writer_emit.c - the writer's output half (writer.h): each kind of record
 * encoded into chunks, the chunks appended to the file with plain write()s,
 * every write bounded (a FIFO whose reader stalls is waited for only within
 * the session's grace).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cupti.h"
#include "encode_run.h"
#include "writer.h"

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
void pc_out_flush(wstate *w)
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

void pc_out_chunk(wstate *w, prism_enc *e)
{
    size_t len;
    if (prism_enc_records(e) == 0 || prism_enc_finish(e, &len) != PRISM_OK)
        return;
    if (w->olen + len > OUT_BYTES)
        pc_out_flush(w);
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
            pc_out_chunk((w), (e)); \
            prism_enc_begin((e), (buf), CHUNK_BYTES, (kind), (stream), (seq)++, (base), (depth)); \
            (void)(call); \
        } \
    } while (0)

/* A full REGIONS chunk from pc_encode_regions. */
static void region_chunk_full(void *ctx, prism_enc *e)
{
    pc_out_chunk(ctx, e);
}

/* A count of regions the thread could not record (buffers.c): an
 * UNRECORDED chunk between its REGIONS chunks, where the depth it carries
 * is the thread's depth in the stream (docs/FORMAT.md, 7.13). */
static void encode_gap(wstate *w, prism__thread *th, region_sink *rk, uint64_t ns, uint64_t n)
{
    if (rk->open) {
        pc_out_chunk(w, &rk->e);
        rk->open = false;
    }
    prism_enc e;
    prism_unrecorded u = { ns, th->depth, n };
    if (prism_enc_begin(&e, w->pbuf, CHUNK_BYTES, PRISM_CHUNK_UNRECORDED, th->stream, th->seq++,
                        ns, 0) == PRISM_OK &&
        prism_enc_unrecorded(&e, &u) == PRISM_OK)
        pc_out_chunk(w, &e);
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

void pc_encode_thread(wstate *w, snap *sn)
{
    prism__thread *th = sn->th;
    region_sink rk = { .buf = w->rbuf, .cap = CHUNK_BYTES, .full = region_chunk_full, .ctx = w };
    w->nmarks = w->nctrs = 0;
    for (buffer *b = sn->full; b; b = b->next)
        encode_buffer(w, th, b, atomic_load_explicit(&b->fill, memory_order_acquire), &rk);
    if (sn->cur)
        encode_buffer(w, th, sn->cur, sn->cur_fill, &rk);
    if (rk.open)
        pc_out_chunk(w, &rk.e);
    prism_enc e;
    bool open = false;
    for (size_t i = 0; i < w->nmarks; i++)
        PUT(w, &e, open, w->mbuf, PRISM_CHUNK_MARKS, th->stream, th->seq, w->marks[i].ts, 0,
            prism_enc_mark(&e, &w->marks[i]));
    if (open)
        pc_out_chunk(w, &e);
    open = false;
    for (size_t i = 0; i < w->nctrs; i++)
        PUT(w, &e, open, w->kbuf, PRISM_CHUNK_COUNTERS, th->stream, th->seq, w->ctrs[i].ts, 0,
            prism_enc_counter(&e, &w->ctrs[i]));
    if (open)
        pc_out_chunk(w, &e);
}

void pc_emit_strings(wstate *w, char **names, uint32_t first, uint32_t n)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    uint32_t id = first;
    for (uint32_t i = 0; i < n; i++, id++)
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_STRINGS, 0, s->seq0, id, 0,
            prism_enc_string(&e, names[i], strlen(names[i])));
    if (open)
        pc_out_chunk(w, &e);
}

/* Thread names, steps and memory samples: written before the threads'
 * chunks of the same flush, so a reader knows a step before the regions it
 * contains (every region of a queued step is already in the buffers). */
void pc_emit_process(wstate *w, snap *sn, size_t nsnap, proc_rec *q, size_t nq)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    for (size_t i = 0; i < nsnap; i++) {
        if (!sn[i].name_dirty)
            continue;
        prism_thread t = { .stream = sn[i].th->stream, .os_tid = sn[i].th->os_tid, .name = sn[i].name };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_THREADS, 0, s->seq0, 0, 0, prism_enc_thread(&e, &t));
    }
    if (open)
        pc_out_chunk(w, &e);
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
        pc_out_chunk(w, &e);
    open = false;
    /* which thread marks the steps: the training thread whose step time
     * is the denominator of the analysis's verdicts */
    uint32_t stepper = atomic_load_explicit(&s->step_stream, memory_order_relaxed);
    if (stepper && stepper != w->step_stream_written) {
        prism_value v = { .type = PRISM_VAL_UINT, .v.u = stepper };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "steps.thread", &v));
        pc_out_chunk(w, &e);
        open = false;
        w->step_stream_written = stepper;
    }
    /* the job this process is one rank of: once, at the first flush */
    if (s->world_size && !w->world_written) {
        prism_value v = { .type = PRISM_VAL_UINT, .v.u = s->world_size };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "job.world_size", &v));
        pc_out_chunk(w, &e);
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
        pc_out_chunk(w, &e);
}

/* The GPU status when it changed: before the threads' chunks, so a reader
 * knows GPU records are coming before it reads the regions they refer to. */
void pc_emit_gpu_status(wstate *w)
{
    session *s = w->s;
    prism_enc e;
    bool open = false;
    char status[512];
    if (cupti_status_changed(status, sizeof status)) {
        prism_value v = { .type = PRISM_VAL_TEXT, .v.s = status };
        PUT(w, &e, open, w->pbuf, PRISM_CHUNK_INFO, 0, s->seq0, 0, 0,
            prism_enc_info(&e, "gpu.status", &v));
        pc_out_chunk(w, &e);
    }
}

/* GPU activity translated by cupti_drain: after the STRINGS and THREADS its
 * records refer to, and after the regions of the same flush, so an API
 * call's region is known when the call is read. */
void pc_emit_gpu(wstate *w)
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
        pc_out_chunk(w, &e);
    s->events_written += n;
    cupti_drained();
}

/* The CPU samples taken since the last flush, after the threads' regions:
 * every pass was taken before this flush's snapshot, so a reader crediting
 * a sample's interval to the regions open in it has them all.  The
 * sampler's state (once, and when it changes) and lost samples as INFO. */
void pc_emit_cpu(wstate *w)
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
        pc_out_chunk(w, &e);
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
        pc_out_chunk(w, &e);
    s->events_written += n;
    pc_cpu_drained(w->cpu);
}

/* The facts queued since the last flush (info.c), as one INFO chunk. */
void pc_emit_info(wstate *w, const pc_info *l)
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
        pc_out_chunk(w, &e);
}

/* The sampled call stacks taken with this flush's snapshot, after the
 * threads' regions (stacks.c); the sampler's state and lost samples as
 * INFO when they change. */
void pc_emit_stacks(wstate *w, const pc_stacks *q)
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
        pc_out_chunk(w, &e);
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
        pc_out_chunk(w, &e);
    s->events_written += n;
}

/* Cumulative dropped counts that changed, after the threads' chunks. */
void pc_emit_dropped(wstate *w, snap *sn, size_t nsnap)
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
        pc_out_chunk(w, &e);
}
