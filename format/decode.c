/*
 * decode.c - payload decoders, one per chunk kind (docs/FORMAT.md, "Chunk
 * kinds").  The payload has passed its checksum, but a hostile writer can
 * compute checksums too, so every read is bounded.  Records go to the
 * callbacks in batches from a stack array; nothing is allocated per record.
 */
#include <string.h>

#include "format_internal.h"

#define BATCH 256

typedef struct dec {
    cur c;
    uint64_t left;          /* payload array elements not yet consumed */
    struct prism_reader *r;
    const prism_reader_callbacks *cb;
    void *ctx;
    uint64_t records;
} dec;

#define NEED(x) do { if ((x) != CUR_OK) return false; } while (0)

/* Consume `n` top-level elements (a record's fields). */
static bool take(dec *d, uint64_t n)
{
    if (d->left < n)
        return false;
    d->left -= n;
    return true;
}

static bool add_ts(uint64_t *ts, uint64_t delta)
{
    if (*ts + delta < *ts)
        return false;
    *ts += delta;
    return true;
}

static bool add_signed(uint64_t base, int64_t delta, uint64_t *out)
{
    if (delta < 0 && (uint64_t)(-(delta + 1)) + 1 > base)
        return false;
    if (delta > 0 && base + (uint64_t)delta < base)
        return false;
    *out = base + (uint64_t)delta;
    return true;
}

/* Fast unsigned read for the event loops: major type 0 only. */
static inline bool fast_uint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return false;
    uint8_t b = *p;
    if (b < 24) {
        *v = b;
        *pp = p + 1;
        return true;
    }
    size_t avail = (size_t)(end - p);
    switch (b) {
    case 24:
        if (avail < 2) return false;
        *v = p[1];
        *pp = p + 2;
        return true;
    case 25:
        if (avail < 3) return false;
        *v = (uint64_t)p[1] << 8 | p[2];
        *pp = p + 3;
        return true;
    case 26:
        if (avail < 5) return false;
        *v = (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 8 | p[4];
        *pp = p + 5;
        return true;
    case 27:
        if (avail < 9) return false;
        *v = cur_be(p + 1, 8);
        *pp = p + 9;
        return true;
    default:
        return false;
    }
}

static bool dec_strings(dec *d)
{
    uint64_t id;
    NEED(cur_uint(&d->c, &id));
    if (!take(d, 1))
        return false;
    while (d->left) {
        const char *s;
        size_t len;
        NEED(cur_text(&d->c, &s, &len, PRISM_MAX_STRING_BYTES));
        d->left--;
        if (id == 0 || id >= PRISM_MAX_STRINGS)
            return false;
        if (!pf_reader_put_string(d->r, (uint32_t)id, s, len))
            return false;
        if (d->cb->string) {
            size_t l2;
            const char *kept = prism_reader_string(d->r, (uint32_t)id, &l2);
            d->cb->string(d->ctx, (uint32_t)id, kept, l2);
        }
        d->records++;
        id++;
    }
    return true;
}

static bool dec_threads(dec *d)
{
    while (d->left) {
        uint64_t n;
        prism_thread t = { 0 };     /* the worker fields: not in a file */
        const char *s;
        size_t len;
        char name[PRISM_MAX_STRING_BYTES + 1];
        NEED(cur_array(&d->c, &n));
        if (n < 3)
            return false;
        NEED(cur_u32(&d->c, &t.stream));
        NEED(cur_uint(&d->c, &t.os_tid));
        NEED(cur_text(&d->c, &s, &len, PRISM_MAX_STRING_BYTES));
        for (uint64_t i = 3; i < n; i++)
            NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        memcpy(name, s, len);
        name[len] = '\0';
        t.name = name;
        d->left--;
        if (d->cb->thread)
            d->cb->thread(d->ctx, &t);
        d->records++;
    }
    return true;
}

static bool dec_regions(dec *d, uint32_t stream)
{
    uint64_t ts, depth64;
    NEED(cur_uint(&d->c, &ts));
    NEED(cur_uint(&d->c, &depth64));
    if (!take(d, 2) || depth64 > UINT32_MAX)
        return false;
    uint32_t depth = (uint32_t)depth64, batch_depth = depth;
    prism_region_event ev[BATCH];
    size_t n = 0;
    const uint8_t *p = d->c.p, *end = d->c.end;
    uint64_t left = d->left;
    while (left) {
        uint64_t w;
        if (!fast_uint(&p, end, &w))
            return false;
        left--;
        if (!add_ts(&ts, w >> 1))
            return false;
        ev[n].ts = ts;
        if (w & 1) {
            ev[n].kind = PRISM_REGION_EXIT;
            ev[n].name = 0;
            if (depth)
                depth--;
        } else {
            uint64_t name;
            if (!left || !fast_uint(&p, end, &name) || name > UINT32_MAX)
                return false;
            left--;
            ev[n].kind = PRISM_REGION_ENTER;
            ev[n].name = (uint32_t)name;
            depth++;
        }
        if (++n == BATCH) {
            if (d->cb->regions)
                d->cb->regions(d->ctx, stream, batch_depth, ev, n);
            d->records += n;
            n = 0;
            batch_depth = depth;
        }
    }
    if (n && d->cb->regions)
        d->cb->regions(d->ctx, stream, batch_depth, ev, n);
    d->records += n;
    d->c.p = p;
    d->left = 0;
    return true;
}

static bool dec_marks(dec *d, uint32_t stream)
{
    uint64_t ts;
    NEED(cur_uint(&d->c, &ts));
    if (!take(d, 1))
        return false;
    prism_mark m[BATCH];
    size_t n = 0;
    while (d->left) {
        uint64_t dt;
        if (!take(d, 2))
            return false;
        NEED(cur_uint(&d->c, &dt));
        NEED(cur_u32(&d->c, &m[n].name));
        if (!add_ts(&ts, dt))
            return false;
        m[n].ts = ts;
        if (++n == BATCH) {
            if (d->cb->marks)
                d->cb->marks(d->ctx, stream, m, n);
            d->records += n;
            n = 0;
        }
    }
    if (n && d->cb->marks)
        d->cb->marks(d->ctx, stream, m, n);
    d->records += n;
    return true;
}

static bool dec_counters(dec *d, uint32_t stream)
{
    uint64_t ts;
    NEED(cur_uint(&d->c, &ts));
    if (!take(d, 1))
        return false;
    prism_counter cv[BATCH];
    size_t n = 0;
    while (d->left) {
        uint64_t dt;
        prism_value v;
        size_t tlen;
        if (!take(d, 3))
            return false;
        NEED(cur_uint(&d->c, &dt));
        NEED(cur_u32(&d->c, &cv[n].name));
        NEED(pf_cur_value(&d->c, &v, &tlen, 0));
        if (!add_ts(&ts, dt))
            return false;
        cv[n].ts = ts;
        if (v.type == PRISM_VAL_FLOAT) {
            cv[n].is_float = true;
            cv[n].v.f = v.v.f;
        } else if (v.type == PRISM_VAL_INT) {
            cv[n].is_float = false;
            cv[n].v.i = v.v.i;
        } else if (v.type == PRISM_VAL_UINT && v.v.u <= (uint64_t)INT64_MAX) {
            cv[n].is_float = false;
            cv[n].v.i = (int64_t)v.v.u;
        } else {
            return false;
        }
        if (++n == BATCH) {
            if (d->cb->counters)
                d->cb->counters(d->ctx, stream, cv, n);
            d->records += n;
            n = 0;
        }
    }
    if (n && d->cb->counters)
        d->cb->counters(d->ctx, stream, cv, n);
    d->records += n;
    return true;
}

static bool dec_steps(dec *d, uint32_t stream)
{
    uint64_t start;
    NEED(cur_uint(&d->c, &start));
    if (!take(d, 1))
        return false;
    prism_step s[BATCH];
    size_t n = 0;
    while (d->left) {
        int64_t ds;
        uint64_t dur, flags;
        if (!take(d, 5))
            return false;
        NEED(cur_int(&d->c, &ds));
        NEED(cur_uint(&d->c, &dur));
        NEED(cur_uint(&d->c, &s[n].index));
        NEED(cur_uint(&d->c, &s[n].epoch));
        NEED(cur_uint(&d->c, &flags));
        if (!add_signed(start, ds, &start))
            return false;
        s[n].start = start;
        s[n].end = start + dur;
        if (s[n].end < start)
            return false;
        s[n].flags = (uint32_t)flags;
        if (++n == BATCH) {
            if (d->cb->steps)
                d->cb->steps(d->ctx, stream, s, n);
            d->records += n;
            n = 0;
        }
    }
    if (n && d->cb->steps)
        d->cb->steps(d->ctx, stream, s, n);
    d->records += n;
    return true;
}

/* A CPU figure in thousandths of a core, or null: PRISM_NO_CPU; values at
 * or past the sentinel read as the largest known one. */
static bool permille(dec *d, uint32_t *out)
{
    uint64_t v;
    if (cur_null(&d->c)) {
        *out = PRISM_NO_CPU;
        return true;
    }
    NEED(cur_uint(&d->c, &v));
    *out = v >= PRISM_NO_CPU ? PRISM_NO_CPU - 1 : (uint32_t)v;
    return true;
}

/* A 1.3 system reading: uint, or null (PRISM_NO_VALUE; a uint of that
 * value reads as one less). */
static bool value(dec *d, uint64_t *out)
{
    if (cur_null(&d->c)) {
        *out = PRISM_NO_VALUE;
        return true;
    }
    NEED(cur_uint(&d->c, out));
    if (*out == PRISM_NO_VALUE)
        (*out)--;
    return true;
}

static bool dec_memory(dec *d)
{
    uint64_t ts;
    NEED(cur_uint(&d->c, &ts));
    if (!take(d, 1))
        return false;
    while (d->left) {
        prism_memory_sample m;
        uint64_t n, dt, ng;
        NEED(cur_array(&d->c, &n));
        if (n < 5)
            return false;
        NEED(cur_uint(&d->c, &dt));
        if (!add_ts(&ts, dt))
            return false;
        m.ts = ts;
        if (cur_null(&d->c))
            m.step = PRISM_NO_STEP;
        else
            NEED(cur_uint(&d->c, &m.step));
        NEED(cur_uint(&d->c, &m.rss));
        if (!permille(d, &m.cpu_permille))
            return false;
        NEED(cur_array(&d->c, &ng));
        if (ng > PRISM_MAX_GPUS)
            return false;
        m.ngpu = (uint32_t)ng;
        for (uint64_t i = 0; i < ng; i++) {
            uint64_t k;
            NEED(cur_array(&d->c, &k));
            if (k < 3)
                return false;
            NEED(cur_u32(&d->c, &m.gpu[i].device));
            NEED(cur_uint(&d->c, &m.gpu[i].used));
            NEED(cur_uint(&d->c, &m.gpu[i].reserved));
            m.gpu[i].util_pct = PRISM_NO_CPU;       /* 1.3, each there or not */
            m.gpu[i].energy_mj = PRISM_NO_VALUE;
            if (k > 3 && !permille(d, &m.gpu[i].util_pct))
                return false;
            if (k > 4 && !value(d, &m.gpu[i].energy_mj))
                return false;
            for (uint64_t j = 5; j < k; j++)
                NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        }
        /* 1.2: the machine's load, each element there or not */
        m.host_busy_permille = m.children_cpu_permille = PRISM_NO_CPU;
        m.ncpu = 0;
        uint64_t ncpu = 0;
        if (n > 5 && !permille(d, &m.host_busy_permille))
            return false;
        if (n > 6) {
            NEED(cur_uint(&d->c, &ncpu));
            m.ncpu = ncpu > UINT32_MAX ? UINT32_MAX : (uint32_t)ncpu;
        }
        if (n > 7 && !permille(d, &m.children_cpu_permille))
            return false;
        if (!m.ncpu)                    /* not recorded, whatever came */
            m.host_busy_permille = m.children_cpu_permille = PRISM_NO_CPU;
        /* 1.3: the system readings, each there or not */
        uint64_t *sys[8] = { &m.io_read_bytes, &m.io_write_bytes, &m.net_rx_bytes,
                             &m.net_tx_bytes, &m.cpu_user_ns, &m.cpu_sys_ns, &m.mem_total,
                             &m.cpu_energy_uj };
        m.have_sys = n > 8;
        for (uint64_t j = 0; j < 8; j++) {
            *sys[j] = PRISM_NO_VALUE;
            if (n > 8 + j && !value(d, sys[j]))
                return false;
        }
        for (uint64_t j = 16; j < n; j++)
            NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        d->left--;
        if (d->cb->memory)
            d->cb->memory(d->ctx, &m);
        d->records++;
    }
    return true;
}

static bool dec_gpu_fields(dec *d, prism_gpu_record *g, uint64_t n)
{
    static const uint8_t min_len[PRISM_GPU_TYPE_MAX + 1] = {
        [PRISM_GPU_KERNEL] = 15, [PRISM_GPU_MEMCPY] = 10, [PRISM_GPU_MEMSET] = 8,
        [PRISM_GPU_SYNC] = 7, [PRISM_GPU_API] = 7, [PRISM_GPU_ALLOC] = 9,
        [PRISM_GPU_FREE] = 9,
    };
    if (n < min_len[g->type])
        return false;
    switch (g->type) {
    case PRISM_GPU_KERNEL:
        NEED(cur_u32(&d->c, &g->name));
        for (int i = 0; i < 3; i++)
            NEED(cur_u32(&d->c, &g->grid[i]));
        for (int i = 0; i < 3; i++)
            NEED(cur_u32(&d->c, &g->block[i]));
        NEED(cur_u32(&d->c, &g->shared_mem));
        NEED(cur_u32(&d->c, &g->registers));
        break;
    case PRISM_GPU_MEMCPY:
        NEED(cur_uint(&d->c, &g->bytes));
        NEED(cur_u32(&d->c, &g->copy_kind));
        NEED(cur_u32(&d->c, &g->src_kind));
        NEED(cur_u32(&d->c, &g->dst_kind));
        break;
    case PRISM_GPU_MEMSET:
        NEED(cur_uint(&d->c, &g->bytes));
        NEED(cur_u32(&d->c, &g->dst_kind));
        break;
    case PRISM_GPU_SYNC:
        NEED(cur_u32(&d->c, &g->sync_type));
        break;
    case PRISM_GPU_API:
        NEED(cur_u32(&d->c, &g->name));
        break;
    default:
        NEED(cur_uint(&d->c, &g->bytes));
        NEED(cur_uint(&d->c, &g->address));
        NEED(cur_u32(&d->c, &g->dst_kind));
        break;
    }
    for (uint64_t j = min_len[g->type]; j < n; j++)
        NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
    return true;
}

static bool dec_gpu(dec *d)
{
    uint64_t base;
    NEED(cur_uint(&d->c, &base));
    if (!take(d, 1))
        return false;
    prism_gpu_record g[64];
    size_t k = 0;
    while (d->left) {
        uint64_t n, type, dur;
        int64_t ds;
        NEED(cur_array(&d->c, &n));
        d->left--;
        if (n < 6)
            return false;
        NEED(cur_uint(&d->c, &type));
        if (type < 1 || type > PRISM_GPU_TYPE_MAX) {
            for (uint64_t j = 1; j < n; j++)      /* a newer record type */
                NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
            continue;
        }
        prism_gpu_record *r = &g[k];
        memset(r, 0, sizeof *r);
        r->type = (uint32_t)type;
        NEED(cur_int(&d->c, &ds));
        NEED(cur_uint(&d->c, &dur));
        NEED(cur_u32(&d->c, &r->device));
        NEED(cur_u32(&d->c, &r->stream));
        NEED(cur_uint(&d->c, &r->correlation));
        if (!add_signed(base, ds, &r->start))
            return false;
        r->end = r->start + dur;
        if (r->end < r->start || !dec_gpu_fields(d, r, n))
            return false;
        if (++k == 64) {
            if (d->cb->gpu)
                d->cb->gpu(d->ctx, g, k);
            d->records += k;
            k = 0;
        }
    }
    if (k && d->cb->gpu)
        d->cb->gpu(d->ctx, g, k);
    d->records += k;
    return true;
}

static bool dec_dropped(dec *d, uint32_t stream)
{
    (void)stream;
    while (d->left) {
        uint64_t n;
        prism_dropped x;
        NEED(cur_array(&d->c, &n));
        if (n < 3)
            return false;
        NEED(cur_u32(&d->c, &x.stream));
        NEED(cur_u32(&d->c, &x.source));
        NEED(cur_uint(&d->c, &x.total));
        x.have_regions = n >= 4;        /* 1.1: whole regions, of the total */
        x.regions = 0;
        if (x.have_regions)
            NEED(cur_uint(&d->c, &x.regions));
        for (uint64_t j = x.have_regions ? 4 : 3; j < n; j++)
            NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        d->left--;
        if (d->cb->dropped)
            d->cb->dropped(d->ctx, &x);
        d->records++;
    }
    return true;
}

static bool dec_info(dec *d)
{
    char key[PRISM_MAX_STRING_BYTES + 1], text[PRISM_MAX_STRING_BYTES + 1];
    while (d->left) {
        const char *k;
        size_t klen, tlen;
        prism_value v;
        if (!take(d, 2))
            return false;
        NEED(cur_text(&d->c, &k, &klen, PRISM_MAX_STRING_BYTES));
        NEED(pf_cur_value(&d->c, &v, &tlen, PRISM_MAX_STRING_BYTES));
        memcpy(key, k, klen);
        key[klen] = '\0';
        if (v.type == PRISM_VAL_TEXT) {
            memcpy(text, v.v.s, tlen);
            text[tlen] = '\0';
            v.v.s = text;
        }
        if (d->cb->info)
            d->cb->info(d->ctx, key, &v);
        d->records++;
    }
    return true;
}

static bool dec_footer(dec *d)
{
    prism_footer f;
    prism_value v;
    size_t tlen;
    if (!take(d, 5))
        return false;
    NEED(cur_uint(&d->c, &f.end_ts));
    NEED(cur_uint(&d->c, &f.events));
    NEED(cur_uint(&d->c, &f.dropped));
    NEED(cur_uint(&d->c, &f.chunks));
    NEED(pf_cur_value(&d->c, &v, &tlen, 0));
    if (v.type != PRISM_VAL_BOOL)
        return false;
    f.clean = v.v.b;
    while (d->left) {                 /* fields of a newer minor version */
        NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        d->left--;
    }
    pf_reader_saw_footer(d->r);
    if (d->cb->footer)
        d->cb->footer(d->ctx, &f);
    d->records++;
    return true;
}

/* [base, (delta,) [stream, flags, oncpu, wait, ...], ..., delta, [...], ...]:
 * a uint element starts a sampling pass `delta` ns after the previous one;
 * every array element is a sample at the current pass's time. */
static bool dec_cpu(dec *d)
{
    uint64_t ts;
    NEED(cur_uint(&d->c, &ts));
    if (!take(d, 1))
        return false;
    prism_cpu_sample s[BATCH];
    size_t n = 0;
    bool need = false;              /* a delta was just read: a sample must follow */
    while (d->left) {
        unsigned mt, ai;
        uint64_t v;
        NEED(cur_head(&d->c, &mt, &v, &ai));
        d->left--;
        if (mt == MT_UINT) {
            if (need || !add_ts(&ts, v))
                return false;       /* two deltas in a row, or an overflow */
            need = true;
            continue;
        }
        if (mt != MT_ARRAY || v < 4 || v > (uint64_t)(d->c.end - d->c.p))
            return false;
        prism_cpu_sample *x = &s[n];
        NEED(cur_u32(&d->c, &x->stream));
        NEED(cur_u32(&d->c, &x->flags));
        NEED(cur_uint(&d->c, &x->oncpu_ns));
        NEED(cur_uint(&d->c, &x->wait_ns));
        for (uint64_t j = 4; j < v; j++)    /* fields of a later minor version */
            NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        if (!(x->flags & PRISM_CPU_HAVE_WAIT))
            x->wait_ns = 0;
        x->ts = ts;
        need = false;
        if (++n == BATCH) {
            if (d->cb->cpu)
                d->cb->cpu(d->ctx, s, n);
            d->records += n;
            n = 0;
        }
    }
    if (need)
        return false;               /* a delta with no sample after it */
    if (n && d->cb->cpu)
        d->cb->cpu(d->ctx, s, n);
    d->records += n;
    return true;
}

/* UNRECORDED (1.1): [base_ns, [delta, depth, regions, ...], ...] */
static bool dec_unrecorded(dec *d, uint32_t stream)
{
    uint64_t ts;
    NEED(cur_uint(&d->c, &ts));
    if (!take(d, 1))
        return false;
    while (d->left) {
        prism_unrecorded u;
        uint64_t n, dt;
        NEED(cur_array(&d->c, &n));
        if (n < 3)
            return false;
        NEED(cur_uint(&d->c, &dt));
        NEED(cur_u32(&d->c, &u.depth));
        NEED(cur_uint(&d->c, &u.regions));
        for (uint64_t j = 3; j < n; j++)
            NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        if (!add_ts(&ts, dt))
            return false;
        u.ts = ts;
        d->left--;
        if (d->cb->unrecorded)
            d->cb->unrecorded(d->ctx, stream, &u, 1);
        d->records++;
    }
    return true;
}

/* STACKS (1.2): [base_ns, [delta, stream, flags, [frame, ...](, wait_ns(,
 * queued_ns))], ...].  Frames are string ids, outermost first:
 * 1..PRISM_STACK_MAX_FRAMES of them, none 0; unknown flag bits are ignored;
 * wait_ns and queued_ns are optional (0 when absent or not an unsigned
 * integer; queued_ns is at most wait_ns). */
static bool dec_stacks(dec *d)
{
    uint64_t ts;
    NEED(cur_uint(&d->c, &ts));
    if (!take(d, 1))
        return false;
    uint32_t fr[PRISM_STACK_MAX_FRAMES];
    while (d->left) {
        prism_stack_sample s;
        uint64_t n, dt, nf;
        NEED(cur_array(&d->c, &n));
        if (n < 4)
            return false;
        NEED(cur_uint(&d->c, &dt));
        NEED(cur_u32(&d->c, &s.stream));
        NEED(cur_u32(&d->c, &s.flags));
        NEED(cur_array(&d->c, &nf));
        if (!nf || nf > PRISM_STACK_MAX_FRAMES)
            return false;
        for (uint64_t j = 0; j < nf; j++) {
            NEED(cur_u32(&d->c, &fr[j]));
            if (!fr[j])
                return false;
        }
        s.wait_ns = s.queued_ns = 0;
        for (uint64_t j = 4; j < n; j++) {  /* the waits, then fields of a later version */
            uint64_t x;
            if (j < 6 && cur_uint(&d->c, &x) == CUR_OK) {
                *(j == 4 ? &s.wait_ns : &s.queued_ns) = x;
                continue;
            }
            NEED(pf_cur_skip(&d->c, PRISM_MAX_DEPTH));
        }
        if (s.queued_ns > s.wait_ns)
            s.queued_ns = s.wait_ns;
        if (!add_ts(&ts, dt))
            return false;
        s.ts = ts;
        s.flags &= PRISM_STACK_TRUNCATED | PRISM_STACK_RUNNING | PRISM_STACK_SYSCALL;
        s.nframes = (uint32_t)nf;
        s.frames = fr;
        d->left--;
        if (d->cb->stacks)
            d->cb->stacks(d->ctx, &s, 1);
        d->records++;
    }
    return true;
}

bool pf_payload_known(uint32_t kind)
{
    return kind >= 1 && kind <= PRISM_CHUNK_KIND_MAX;
}

bool pf_payload_decode(struct prism_reader *r, uint32_t kind, uint32_t stream,
                    const uint8_t *p, size_t len, uint64_t *records)
{
    dec d = { { p, p + len }, 0, r, pf_reader_cb(r), pf_reader_ctx(r), 0 };
    bool ok = false;
    if (cur_array(&d.c, &d.left) == CUR_OK) {
        switch (kind) {
        case PRISM_CHUNK_STRINGS:  ok = dec_strings(&d); break;
        case PRISM_CHUNK_THREADS:  ok = dec_threads(&d); break;
        case PRISM_CHUNK_REGIONS:  ok = dec_regions(&d, stream); break;
        case PRISM_CHUNK_MARKS:    ok = dec_marks(&d, stream); break;
        case PRISM_CHUNK_COUNTERS: ok = dec_counters(&d, stream); break;
        case PRISM_CHUNK_STEPS:    ok = dec_steps(&d, stream); break;
        case PRISM_CHUNK_MEMORY:   ok = dec_memory(&d); break;
        case PRISM_CHUNK_GPU:      ok = dec_gpu(&d); break;
        case PRISM_CHUNK_DROPPED:  ok = dec_dropped(&d, stream); break;
        case PRISM_CHUNK_INFO:     ok = dec_info(&d); break;
        case PRISM_CHUNK_FOOTER:   ok = dec_footer(&d); break;
        case PRISM_CHUNK_CPU:      ok = dec_cpu(&d); break;
        case PRISM_CHUNK_UNRECORDED: ok = dec_unrecorded(&d, stream); break;
        case PRISM_CHUNK_STACKS:   ok = dec_stacks(&d); break;
        default: break;
        }
    }
    /* The payload must be exactly one item. */
    if (ok && d.c.p != d.c.end)
        ok = false;
    *records = d.records;
    return ok;
}
