/*
 * encode.c - chunk encoder: builds one chunk into a caller buffer with
 * libcbor's primitive encoders.  Layout in docs/FORMAT.md, "Chunks".
 *
 *   85                      array(5)
 *      <kind> <stream> <seq>
 *      d8 18 5a LLLLLLLL    tag 24, byte string with a 4-byte length
 *         9a CCCCCCCC ...   payload: array with a 4-byte count
 *      1b XXXXXXXXXXXXXXXX  XXH3-64 of every byte before this item
 */
#include <cbor.h>
#include <string.h>
#include <xxhash.h>

#include "enc_region.h"
#include "enc_util.h"

#define CHECKSUM_BYTES 9u

/* Append `n` payload array elements written by w, or fail as a whole. */
static prism_status commit(prism_enc *e, const wr *w, uint64_t elems)
{
    if (!w->ok)
        return PRISM_E_NOSPACE;
    if (w->pos - e->payload_pos > PRISM_MAX_CHUNK_PAYLOAD ||
        e->count + elems > UINT32_MAX)
        return PRISM_E_NOSPACE;
    e->pos = w->pos;
    e->count += elems;
    e->records++;
    return PRISM_OK;
}

static inline wr wr_of(prism_enc *e)
{
    wr w = { e->buf, e->pos, e->cap, true };
    return w;
}

static void be_store(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static bool has_base(uint32_t kind)
{
    switch (kind) {
    case PRISM_CHUNK_STRINGS: case PRISM_CHUNK_REGIONS: case PRISM_CHUNK_MARKS:
    case PRISM_CHUNK_COUNTERS: case PRISM_CHUNK_STEPS: case PRISM_CHUNK_MEMORY:
    case PRISM_CHUNK_GPU: case PRISM_CHUNK_CPU: case PRISM_CHUNK_UNRECORDED:
    case PRISM_CHUNK_STACKS:
        return true;
    default:
        return false;
    }
}

prism_status prism_enc_begin(prism_enc *e, uint8_t *buf, size_t cap,
                             prism_chunk_kind kind, uint32_t stream,
                             uint64_t seq, uint64_t base, uint32_t depth)
{
    if (!e || !buf || kind < 1 || kind > PRISM_CHUNK_KIND_MAX)
        return PRISM_E_ARG;
    if (cap < PRISM_CHUNK_OVERHEAD)
        return PRISM_E_NOSPACE;
    memset(e, 0, sizeof *e);
    e->buf = buf;
    e->cap = cap - CHECKSUM_BYTES;
    e->kind = kind;
    wr w = { buf, 0, e->cap, true };
    w_raw(&w, 0x85);
    w_uint(&w, kind);
    w_uint(&w, stream);
    w_uint(&w, seq);
    w_raw(&w, 0xd8);
    w_raw(&w, 0x18);
    w_raw(&w, 0x5a);
    w.pos += 4;                     /* payload length, patched at finish */
    e->payload_pos = w.pos;
    w_raw(&w, 0x9a);
    e->count_pos = w.pos;
    w.pos += 4;                     /* element count, patched at finish */
    if (has_base(kind)) {
        w_uint(&w, base);
        e->count++;
    }
    if (kind == PRISM_CHUNK_REGIONS) {
        w_uint(&w, depth);
        e->count++;
        e->depth = depth;
    }
    if (!w.ok)
        return PRISM_E_NOSPACE;
    e->pos = w.pos;
    e->base = e->last = base;
    return PRISM_OK;
}

prism_status prism_enc_finish(prism_enc *e, size_t *out_len)
{
    if (!e || !e->buf)
        return PRISM_E_ARG;
    if (e->kind == 0)               /* finished already: the checksum is written */
        return PRISM_E_STATE;
    uint8_t *b = e->buf;
    be_store(b + e->payload_pos - 4, e->pos - e->payload_pos, 4);
    be_store(b + e->count_pos, e->count, 4);
    uint64_t sum = XXH3_64bits(b, e->pos);
    size_t n = cbor_encode_uint64(sum, b + e->pos, CHECKSUM_BYTES);
    if (n != CHECKSUM_BYTES)
        return PRISM_E_NOSPACE;
    e->pos += n;
    if (out_len)
        *out_len = e->pos;
    e->cap += CHECKSUM_BYTES;       /* finished: nothing more may be appended */
    e->kind = 0;
    return PRISM_OK;
}

/* The delta from the previous timestamp, clamped at zero. */
static inline uint64_t delta(prism_enc *e, uint64_t ts)
{
    uint64_t d = ts >= e->last ? ts - e->last : 0;
    if (ts > e->last)
        e->last = ts;
    return d;
}

prism_status prism_enc_string(prism_enc *e, const char *s, size_t len)
{
    if (e->kind != PRISM_CHUNK_STRINGS || (!s && len))
        return PRISM_E_ARG;
    if (len > PRISM_MAX_STRING_BYTES)
        len = PRISM_MAX_STRING_BYTES;
    wr w = wr_of(e);
    w_text(&w, s ? s : "", len);
    return commit(e, &w, 1);
}

prism_status prism_enc_thread(prism_enc *e, const prism_thread *t)
{
    if (e->kind != PRISM_CHUNK_THREADS)
        return PRISM_E_ARG;
    wr w = wr_of(e);
    const char *name = t->name ? t->name : "";
    size_t len = strlen(name);
    if (len > PRISM_MAX_STRING_BYTES)
        len = PRISM_MAX_STRING_BYTES;
    w_array(&w, 3);
    w_uint(&w, t->stream);
    w_uint(&w, t->os_tid);
    w_text(&w, name, len);
    return commit(e, &w, 1);
}

/*
 * The region records write their integers directly instead of through
 * libcbor (two out-of-line calls per integer), with enc_region.h's helpers,
 * which the writer thread's batch encoder shares.
 */

/* Room for a whole record of n bytes and `elems` payload array elements,
 * with the same limits as commit(): where to write it, or NULL with the
 * chunk unchanged. */
static inline uint8_t *reserve(prism_enc *e, size_t n, uint64_t elems)
{
    if (e->cap - e->pos < n || e->pos + n - e->payload_pos > PRISM_MAX_CHUNK_PAYLOAD ||
        e->count + elems > UINT32_MAX)
        return NULL;
    uint8_t *p = e->buf + e->pos;
    e->pos += n;
    e->count += elems;
    e->records++;
    return p;
}

prism_status prism_enc_enter(prism_enc *e, uint64_t ts, uint32_t name)
{
    if (e->kind != PRISM_CHUNK_REGIONS)
        return PRISM_E_ARG;
    uint64_t w = enc_region_word(e->last, ts, 0);
    size_t nw = enc_uint_size(w), nn = enc_uint_size(name);
    uint8_t *p = reserve(e, nw + nn, 2);
    if (!p)
        return PRISM_E_NOSPACE;
    enc_put_uint_n(p, w, nw);
    enc_put_uint_n(p + nw, name, nn);
    if (ts > e->last)
        e->last = ts;
    e->depth++;
    return PRISM_OK;
}

prism_status prism_enc_exit(prism_enc *e, uint64_t ts)
{
    if (e->kind != PRISM_CHUNK_REGIONS)
        return PRISM_E_ARG;
    uint64_t w = enc_region_word(e->last, ts, 1);
    size_t nw = enc_uint_size(w);
    uint8_t *p = reserve(e, nw, 1);
    if (!p)
        return PRISM_E_NOSPACE;
    enc_put_uint_n(p, w, nw);
    if (ts > e->last)
        e->last = ts;
    if (e->depth)
        e->depth--;
    return PRISM_OK;
}

prism_status prism_enc_mark(prism_enc *e, const prism_mark *m)
{
    if (e->kind != PRISM_CHUNK_MARKS)
        return PRISM_E_ARG;
    uint64_t last = e->last;
    wr w = wr_of(e);
    w_uint(&w, delta(e, m->ts));
    w_uint(&w, m->name);
    if (commit(e, &w, 2) != PRISM_OK) {
        e->last = last;
        return PRISM_E_NOSPACE;
    }
    return PRISM_OK;
}

prism_status prism_enc_counter(prism_enc *e, const prism_counter *c)
{
    if (e->kind != PRISM_CHUNK_COUNTERS)
        return PRISM_E_ARG;
    uint64_t last = e->last;
    wr w = wr_of(e);
    w_uint(&w, delta(e, c->ts));
    w_uint(&w, c->name);
    if (c->is_float)
        w_double(&w, c->v.f);
    else
        w_int(&w, c->v.i);
    if (commit(e, &w, 3) != PRISM_OK) {
        e->last = last;
        return PRISM_E_NOSPACE;
    }
    return PRISM_OK;
}

/* to - from as a CBOR `int` (FORMAT.md: -2^63 .. 2^63-1); false when it
 * does not fit, which the reader would reject as malformed. */
static bool signed_delta(uint64_t from, uint64_t to, int64_t *d)
{
    if (to >= from ? to - from > (uint64_t)INT64_MAX : from - to > (uint64_t)INT64_MAX + 1)
        return false;
    *d = (int64_t)(to - from);
    return true;
}

prism_status prism_enc_step(prism_enc *e, const prism_step *s)
{
    int64_t ds;
    if (e->kind != PRISM_CHUNK_STEPS || !signed_delta(e->last, s->start, &ds))
        return PRISM_E_ARG;
    wr w = wr_of(e);
    /* start: signed delta from the previous step's start (base first) */
    w_int(&w, ds);
    w_uint(&w, s->end >= s->start ? s->end - s->start : 0);
    w_uint(&w, s->index);
    w_uint(&w, s->epoch);
    w_uint(&w, s->flags);
    prism_status st = commit(e, &w, 5);
    if (st == PRISM_OK)
        e->last = s->start;
    return st;
}

/* A CPU figure, null when unknown (PRISM_NO_CPU). */
static void w_permille(wr *w, uint32_t v)
{
    if (v == PRISM_NO_CPU)
        w_null(w);
    else
        w_uint(w, v);
}

/* A 1.3 system reading: null when unknown (PRISM_NO_VALUE). */
static void w_opt(wr *w, uint64_t v)
{
    if (v == PRISM_NO_VALUE)
        w_null(w);
    else
        w_uint(w, v);
}

prism_status prism_enc_memory(prism_enc *e, const prism_memory_sample *m)
{
    if (e->kind != PRISM_CHUNK_MEMORY || m->ngpu > PRISM_MAX_GPUS)
        return PRISM_E_ARG;
    uint64_t last = e->last;
    wr w = wr_of(e);
    /* 1.2: the machine's load appended; 1.3: then the system readings */
    w_array(&w, m->have_sys ? 16 : m->ncpu ? 8 : 5);
    w_uint(&w, delta(e, m->ts));
    if (m->step == PRISM_NO_STEP)
        w_null(&w);
    else
        w_uint(&w, m->step);
    w_uint(&w, m->rss);
    w_permille(&w, m->cpu_permille);
    w_array(&w, m->ngpu);
    for (uint32_t i = 0; i < m->ngpu; i++) {
        w_array(&w, m->have_sys ? 5 : 3);
        w_uint(&w, m->gpu[i].device);
        w_uint(&w, m->gpu[i].used);
        w_uint(&w, m->gpu[i].reserved);
        if (m->have_sys) {
            w_permille(&w, m->gpu[i].util_pct);
            w_opt(&w, m->gpu[i].energy_mj);
        }
    }
    if (m->ncpu || m->have_sys) {
        bool load = m->ncpu != 0;
        w_permille(&w, load ? m->host_busy_permille : PRISM_NO_CPU);
        w_uint(&w, m->ncpu);
        w_permille(&w, load ? m->children_cpu_permille : PRISM_NO_CPU);
    }
    if (m->have_sys) {
        const uint64_t v[8] = { m->io_read_bytes, m->io_write_bytes, m->net_rx_bytes,
                                m->net_tx_bytes, m->cpu_user_ns, m->cpu_sys_ns,
                                m->mem_total, m->cpu_energy_uj };
        for (size_t i = 0; i < 8; i++)
            w_opt(&w, v[i]);
    }
    if (commit(e, &w, 1) != PRISM_OK) {
        e->last = last;
        return PRISM_E_NOSPACE;
    }
    return PRISM_OK;
}

prism_status prism_enc_gpu(prism_enc *e, const prism_gpu_record *g)
{
    int64_t ds;
    if (e->kind != PRISM_CHUNK_GPU || g->type < 1 || g->type > PRISM_GPU_TYPE_MAX ||
        !signed_delta(e->base, g->start, &ds))
        return PRISM_E_ARG;
    static const uint8_t len[PRISM_GPU_TYPE_MAX + 1] = {
        [PRISM_GPU_KERNEL] = 15, [PRISM_GPU_MEMCPY] = 10, [PRISM_GPU_MEMSET] = 8,
        [PRISM_GPU_SYNC] = 7, [PRISM_GPU_API] = 7, [PRISM_GPU_ALLOC] = 9,
        [PRISM_GPU_FREE] = 9,
    };
    wr w = wr_of(e);
    w_array(&w, len[g->type]);
    w_uint(&w, g->type);
    w_int(&w, ds);
    w_uint(&w, g->end >= g->start ? g->end - g->start : 0);
    w_uint(&w, g->device);
    w_uint(&w, g->stream);
    w_uint(&w, g->correlation);
    switch (g->type) {
    case PRISM_GPU_KERNEL:
        w_uint(&w, g->name);
        for (int i = 0; i < 3; i++)
            w_uint(&w, g->grid[i]);
        for (int i = 0; i < 3; i++)
            w_uint(&w, g->block[i]);
        w_uint(&w, g->shared_mem);
        w_uint(&w, g->registers);
        break;
    case PRISM_GPU_MEMCPY:
        w_uint(&w, g->bytes);
        w_uint(&w, g->copy_kind);
        w_uint(&w, g->src_kind);
        w_uint(&w, g->dst_kind);
        break;
    case PRISM_GPU_MEMSET:
        w_uint(&w, g->bytes);
        w_uint(&w, g->dst_kind);
        break;
    case PRISM_GPU_SYNC:
        w_uint(&w, g->sync_type);
        break;
    case PRISM_GPU_API:
        w_uint(&w, g->name);
        break;
    default: /* ALLOC, FREE */
        w_uint(&w, g->bytes);
        w_uint(&w, g->address);
        w_uint(&w, g->dst_kind);
        break;
    }
    return commit(e, &w, 1);
}

prism_status prism_enc_dropped(prism_enc *e, const prism_dropped *d)
{
    if (e->kind != PRISM_CHUNK_DROPPED)
        return PRISM_E_ARG;
    wr w = wr_of(e);
    w_array(&w, d->have_regions ? 4 : 3);
    w_uint(&w, d->stream);
    w_uint(&w, d->source);
    w_uint(&w, d->total);
    if (d->have_regions)
        w_uint(&w, d->regions);         /* 1.1 */
    return commit(e, &w, 1);
}

/* An UNRECORDED record [delta, depth, regions] (1.1). */
prism_status prism_enc_unrecorded(prism_enc *e, const prism_unrecorded *u)
{
    if (e->kind != PRISM_CHUNK_UNRECORDED || !u)
        return PRISM_E_ARG;
    uint64_t d = u->ts > e->last ? u->ts - e->last : 0;
    wr w = wr_of(e);
    w_array(&w, 3);
    w_uint(&w, d);
    w_uint(&w, u->depth);
    w_uint(&w, u->regions);
    prism_status st = commit(e, &w, 1);
    if (st == PRISM_OK && d)
        e->last = u->ts;
    return st;
}

/* STACKS (1.2): [base_ns, [delta, stream, flags, [frame, ...](, wait_ns(,
 * queued_ns))], ...]: the trailing ones only when not 0 */
prism_status prism_enc_stack(prism_enc *e, const prism_stack_sample *s)
{
    if (e->kind != PRISM_CHUNK_STACKS || !s || !s->frames || !s->nframes ||
        s->nframes > PRISM_STACK_MAX_FRAMES ||
        (s->flags & ~(uint32_t)(PRISM_STACK_TRUNCATED | PRISM_STACK_RUNNING |
                                PRISM_STACK_SYSCALL)))
        return PRISM_E_ARG;
    for (uint32_t i = 0; i < s->nframes; i++)
        if (!s->frames[i])
            return PRISM_E_ARG;
    uint64_t d = s->ts > e->last ? s->ts - e->last : 0;
    wr w = wr_of(e);
    w_array(&w, s->queued_ns ? 6 : s->wait_ns ? 5 : 4);
    w_uint(&w, d);
    w_uint(&w, s->stream);
    w_uint(&w, s->flags);
    w_array(&w, s->nframes);
    for (uint32_t i = 0; i < s->nframes; i++)
        w_uint(&w, s->frames[i]);
    if (s->wait_ns || s->queued_ns)
        w_uint(&w, s->wait_ns);
    if (s->queued_ns)
        w_uint(&w, s->queued_ns);
    prism_status st = commit(e, &w, 1);
    if (st == PRISM_OK && d)
        e->last = s->ts;
    return st;
}

prism_status prism_enc_info(prism_enc *e, const char *key, const prism_value *v)
{
    if (e->kind != PRISM_CHUNK_INFO || !key || !v)
        return PRISM_E_ARG;
    wr w = wr_of(e);
    size_t klen = strlen(key);
    if (klen > PRISM_MAX_STRING_BYTES)
        return PRISM_E_ARG;
    w_text(&w, key, klen);
    if (w_value(&w, v) != PRISM_OK)
        return PRISM_E_ARG;
    prism_status st = commit(e, &w, 2);
    return st;
}

/*
 * A CPU sample: a record [stream, flags, oncpu, wait], preceded by a delta
 * element when its timestamp is later than the previous record's (a new
 * sampling pass); the samples of one pass share the delta.  Unknown flag
 * bits are refused; wait_ns is written as 0 without PRISM_CPU_HAVE_WAIT.
 */
prism_status prism_enc_cpu(prism_enc *e, const prism_cpu_sample *s)
{
    if (e->kind != PRISM_CHUNK_CPU || !s ||
        (s->flags & ~(uint32_t)(PRISM_CPU_HAVE_WAIT | PRISM_CPU_EXITED | PRISM_CPU_QUEUED |
                                   PRISM_CPU_PREEMPTED | PRISM_CPU_RUNNING |
                                   PRISM_CPU_BLOCKED)))
        return PRISM_E_ARG;
    uint64_t d = s->ts > e->last ? s->ts - e->last : 0;
    wr w = wr_of(e);
    if (d)
        w_uint(&w, d);
    w_array(&w, 4);
    w_uint(&w, s->stream);
    w_uint(&w, s->flags);
    w_uint(&w, s->oncpu_ns);
    w_uint(&w, (s->flags & PRISM_CPU_HAVE_WAIT) ? s->wait_ns : 0);
    prism_status st = commit(e, &w, d ? 2 : 1);
    if (st == PRISM_OK && d)
        e->last = s->ts;
    return st;
}

prism_status prism_enc_footer(prism_enc *e, const prism_footer *f)
{
    if (e->kind != PRISM_CHUNK_FOOTER || e->records)
        return PRISM_E_ARG;
    wr w = wr_of(e);
    w_uint(&w, f->end_ts);
    w_uint(&w, f->events);
    w_uint(&w, f->dropped);
    w_uint(&w, f->chunks);
    w_bool(&w, f->clean);
    return commit(e, &w, 5);
}
