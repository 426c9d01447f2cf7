/*
 * build.c - from the stored events to the reader callbacks, once the whole
 * trace is read: the time origin, per-thread sort, nesting repair (an
 * event that overlaps its parent without nesting moves to an overflow
 * track of the same thread), PRISM streams, steps, memory samples, then
 * delivery in the order a PRISM file would give: header, strings, INFO,
 * threads, steps, then regions of all threads in time windows with the GPU
 * records and memory samples of the window before (so the analysis finds
 * the region open at each runtime call in its recent transitions).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

#define LANE_DROP 0xffffu
#define WINDOW_EVENTS 8192u             /* enters per thread and window at most */
#define BATCH 4096u
#define MEM_POINTS 2000u                /* periodic memory samples over the run */

typedef struct istream {
    size_t lo, hi, pos;                 /* its regions in m->reg              */
    uint32_t stream;
    int64_t *stack;                     /* ends of the open regions           */
    uint32_t depth, cap;
} istream;

static int cmp_reg(const void *x, const void *y)
{
    const imp_region *a = x, *b = y;
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;        /* the longer one is the parent */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_reg_lane(const void *x, const void *y)
{
    const imp_region *a = x, *b = y;
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    if (a->lane != b->lane)
        return a->lane < b->lane ? -1 : 1;
    return cmp_reg(x, y);
}

static int cmp_gpu(const void *x, const void *y)
{
    const imp_gpu *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->end < b->end ? -1 : a->end > b->end;
}

static int cmp_mem(const void *x, const void *y)
{
    const imp_mem *a = x, *b = y;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_step(const void *x, const void *y)
{
    const imp_step *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* qsort, which must not be handed NULL even for no elements. */
static void sort(void *p, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        pb_qsort(p, n, size, cmp);
}

/* Give each region of one thread (sorted by cmp_reg) a lane where it nests.
 * st: IMP_MAX_LANES stacks of IMP_MAX_NEST open regions (their indices).
 * A region that starts inside another and ends after it: a soft one
 * (a Python frame) is cut to its parent's end; a hard one cuts the soft
 * regions it crosses to end where it begins (Kineto's record_function
 * range starts inside the Python call that opens it and ends inside the
 * one that closes it); between hard regions a rounding (IMP_CLIP_NS) is
 * cut, anything more moves to an overflow lane. */
static void assign_lanes(imp_events *m, size_t lo, size_t hi, int64_t *st)
{
    uint32_t n[IMP_MAX_LANES] = { 0 };
    imp_track *t = &m->tracks[m->reg[lo].track];
    for (size_t i = lo; i < hi; i++) {
        imp_region *r = &m->reg[i];
        bool soft = r->flags & IMP_REG_SOFT;
        r->lane = LANE_DROP;
        for (uint32_t l = 0; l < IMP_MAX_LANES; l++) {
            int64_t *s = st + (size_t)l * IMP_MAX_NEST;
            while (n[l] && m->reg[s[n[l] - 1]].end <= r->ts)
                n[l]--;
            uint32_t k = n[l];          /* the soft regions it crosses */
            while (!soft && k && m->reg[s[k - 1]].flags & IMP_REG_SOFT &&
                   r->end > m->reg[s[k - 1]].end)
                k--;
            if (k < n[l] && (!k || r->end - m->reg[s[k - 1]].end <= IMP_CLIP_NS))
                for (; n[l] > k; n[l]--) {      /* it fits below them: they give way */
                    m->reg[s[n[l] - 1]].end = r->ts;
                    m->counters[C_SOFT_CUT]++;
                }
            int64_t pend = n[l] ? m->reg[s[n[l] - 1]].end : INT64_MAX;
            if (r->end > pend && (soft || r->end - pend <= IMP_CLIP_NS)) {
                m->counters[r->end - pend <= IMP_CLIP_NS ? C_CLIPPED : C_SOFT_CUT]++;
                r->end = pend;          /* rounding, or a soft child */
            }
            if (n[l] >= IMP_MAX_NEST || r->end > pend)
                continue;
            s[n[l]++] = (int64_t)i;
            r->lane = (uint16_t)l;
            if (l + 1 > t->lanes)
                t->lanes = l + 1;
            m->counters[C_OVERLAP] += l > 0;
            break;
        }
        m->counters[C_OVERLAP_DROPPED] += r->lane == LANE_DROP;
    }
}

/* ---- delivery helpers ---- */

static uint64_t rel(const imp_events *m, int64_t t, int64_t origin)
{
    (void)m;
    return t > origin ? (uint64_t)(t - origin) : 0;
}

static void info_u(imp_events *m, const char *key, uint64_t v)
{
    prism_value val = { .type = PRISM_VAL_UINT, .v.u = v };
    if (m->cb.info)
        m->cb.info(m->ctx, key, &val);
}

static void info_s(imp_events *m, const char *key, const char *s)
{
    prism_value val = { .type = PRISM_VAL_TEXT, .v.s = s };
    if (m->cb.info)
        m->cb.info(m->ctx, key, &val);
}

static const char *const counter_keys[C_COUNT] = {
    [C_EVENTS] = "import.events", [C_REGIONS] = "import.regions",
    [C_GPU] = "import.gpu_records", [C_API] = "import.api_calls",
    [C_MEMORY] = "import.memory_events", [C_OVERLAP] = "import.overlapping_moved",
    [C_OVERLAP_DROPPED] = "import.overlapping_dropped", [C_CLIPPED] = "import.clipped",
    [C_ZERO_DUR] = "import.zero_duration", [C_NEG_DUR] = "import.negative_duration",
    [C_UNSORTED] = "import.unsorted", [C_MISSING] = "import.missing_fields",
    [C_UNKNOWN_CAT] = "import.unknown_category", [C_UNKNOWN_PH] = "import.unknown_phase",
    [C_LONG_STRINGS] = "import.long_strings", [C_BAD_NUMBERS] = "import.bad_numbers",
    [C_GPU_ANNOT] = "import.gpu_annotations", [C_SOFT_CUT] = "import.python_cut",
    [C_FLOWS] = "import.flows",
};

static void header(imp_events *m, int64_t origin)
{
    static const char *const gpu_keys[PRISM_MAX_GPUS] = {
        "gpu.0.name", "gpu.1.name", "gpu.2.name", "gpu.3.name", "gpu.4.name", "gpu.5.name",
        "gpu.6.name", "gpu.7.name", "gpu.8.name", "gpu.9.name", "gpu.10.name", "gpu.11.name",
        "gpu.12.name", "gpu.13.name", "gpu.14.name", "gpu.15.name",
    };
    prism_header *h = &m->h;
    h->version_major = PRISM_FORMAT_MAJOR;
    h->version_minor = 1;         /* no STACKS chunks (1.2) come from a trace */
    h->producer = m->producer;
    h->host = m->host[0] ? m->host : "(not in the trace)";
    h->argv = m->argv;
    h->argc = m->argc;
    h->pid = m->have_pid ? m->first_pid : 0;
    h->rank = m->have_rank ? m->rank : -1;
    h->clock = m->clock ? m->clock : "(not in the trace)";
    if (m->have_base && origin >= 0)
        h->start_unix_ns = m->base_ns + (uint64_t)origin;
    else if (!m->have_base && origin > 100000000000000000ll)   /* absolute already */
        h->start_unix_ns = (uint64_t)origin;
    size_t n = 0;
    for (size_t i = 0; i < m->nlead && i < IMP_LEAD_MAX; i++)
        m->config[n++] = m->lead[i];
    if (!m->complete)
        m->config[n++] = (prism_kv){ "import.truncated",
                                     { .type = PRISM_VAL_UINT, .v.u = m->in_bytes } };
    for (int c = 0; c < C_COUNT; c++)
        if (m->counters[c] || c == C_EVENTS)
            m->config[n++] = (prism_kv){ counter_keys[c],
                                         { .type = PRISM_VAL_UINT, .v.u = m->counters[c] } };
    for (unsigned g = 0; g < PRISM_MAX_GPUS; g++)
        if (m->gpu_names[g][0])
            m->config[n++] = (prism_kv){ gpu_keys[g], { .type = PRISM_VAL_TEXT, .v.s = m->gpu_names[g] } };
    h->config = m->config;
    h->nconfig = n;
    if (m->cb.header)
        m->cb.header(m->ctx, h);
}

/* ---- regions ---- */

static void flush_regions(imp_events *m, istream *s, uint32_t depth0, prism_region_event *buf, size_t *n)
{
    if (*n && m->cb.regions)
        m->cb.regions(m->ctx, s->stream, depth0, buf, *n);
    m->st.records += *n;
    *n = 0;
}

/* Deliver the stream's enters and exits before time `until`. */
static bool stream_until(imp_events *m, istream *s, int64_t until, int64_t origin,
                         prism_region_event *buf)
{
    size_t n = 0;
    uint32_t depth0 = s->depth;
    for (;;) {
        int64_t next = s->pos < s->hi ? m->reg[s->pos].ts : INT64_MAX;
        if (s->depth && s->stack[s->depth - 1] <= next && s->stack[s->depth - 1] < until) {
            buf[n++] = (prism_region_event){ rel(m, s->stack[--s->depth], origin), 0,
                                             PRISM_REGION_EXIT };
        } else if (next < until) {
            const imp_region *r = &m->reg[s->pos++];
            if (s->depth == s->cap) {
                uint32_t cap = s->cap ? s->cap * 2 : 64;
                int64_t *st = realloc(s->stack, cap * sizeof *st);
                if (!st)
                    return false;
                s->stack = st;
                s->cap = cap;
            }
            s->stack[s->depth++] = r->end;
            buf[n++] = (prism_region_event){ rel(m, r->ts, origin), r->name, PRISM_REGION_ENTER };
        } else {
            break;
        }
        if (n == BATCH) {
            flush_regions(m, s, depth0, buf, &n);
            depth0 = s->depth;
        }
    }
    flush_regions(m, s, depth0, buf, &n);
    return true;
}

/* ---- memory samples ---- */

typedef struct memgen {
    prism_memory_sample *v;
    size_t n, cap, pos;
} memgen;

static bool mem_push(memgen *g, int64_t ts, uint64_t step, uint64_t host, const uint64_t *used,
                     const uint64_t *res, uint32_t ngpu, int64_t origin)
{
    if (!pb_vec_reserve((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v))
        return false;
    prism_memory_sample *s = &g->v[g->n++];
    memset(s, 0, sizeof *s);
    s->ts = ts > origin ? (uint64_t)(ts - origin) : 0;
    s->step = step;
    s->rss = host;
    s->cpu_permille = PRISM_NO_CPU;
    s->ngpu = ngpu;
    for (uint32_t i = 0; i < ngpu; i++)
        s->gpu[i] = (prism_gpu_mem){ i, used[i], res[i], PRISM_NO_CPU, PRISM_NO_VALUE };
    return true;
}

/* Samples from the [memory] events: the state after each step (tagged
 * with the step) and at most MEM_POINTS periodic ones. */
static bool memory_samples(imp_events *m, memgen *g, int64_t origin, int64_t span)
{
    if (!m->nmem)
        return true;
    sort(m->mem, m->nmem, sizeof *m->mem, cmp_mem);
    uint64_t host = 0, used[PRISM_MAX_GPUS] = { 0 }, res[PRISM_MAX_GPUS] = { 0 };
    uint32_t ngpu = 0;
    int64_t period = span / MEM_POINTS > 1000 ? span / MEM_POINTS : 1000, last = INT64_MIN;
    size_t si = 0;
    for (size_t i = 0; i <= m->nmem; i++) {
        int64_t ts = i < m->nmem ? m->mem[i].ts : INT64_MAX;
        while (si < m->nsteps && m->steps[si].end <= ts) {
            if (i > 0 && !mem_push(g, m->steps[si].end, m->steps[si].index, host, used, res,
                                   ngpu, origin))
                return false;
            si++;
        }
        if (i == m->nmem)
            break;
        const imp_mem *e = &m->mem[i];
        if (e->device < 0) {
            host = e->allocated;
        } else {
            used[e->device] = e->allocated;
            res[e->device] = e->reserved;
            if ((uint32_t)e->device + 1 > ngpu)
                ngpu = (uint32_t)e->device + 1;
        }
        if (last == INT64_MIN || ts - last >= period) {
            if (!mem_push(g, ts, PRISM_NO_STEP, host, used, res, ngpu, origin))
                return false;
            last = ts;
        }
    }
    return true;
}

/* ---- GPU ---- */

static void gpu_until(imp_events *m, size_t *pos, int64_t until, int64_t origin, prism_gpu_record *buf)
{
    size_t n = 0;
    while (*pos < m->ngpu && m->gpu[*pos].start < until) {
        const imp_gpu *g = &m->gpu[(*pos)++];
        prism_gpu_record *r = &buf[n++];
        memset(r, 0, sizeof *r);
        r->type = g->type;
        r->start = rel(m, g->start, origin);
        r->end = rel(m, g->end, origin);
        r->device = g->device;
        r->stream = g->type == PRISM_GPU_API ? m->tracks[g->stream].stream : g->stream;
        r->correlation = g->corr;
        r->name = g->name;
        r->bytes = g->bytes;
        r->copy_kind = g->copy_kind;
        r->src_kind = g->src_kind;
        r->dst_kind = g->dst_kind;
        r->sync_type = g->sync_type;
        memcpy(r->grid, g->grid, sizeof r->grid);
        memcpy(r->block, g->block, sizeof r->block);
        r->shared_mem = g->shared_mem;
        r->registers = g->registers;
        if (n == BATCH) {
            if (m->cb.gpu)
                m->cb.gpu(m->ctx, buf, n);
            m->st.records += n;
            n = 0;
        }
    }
    if (n && m->cb.gpu)
        m->cb.gpu(m->ctx, buf, n);
    m->st.records += n;
}

/* Deliver the samples before `until` (ns from the origin), or all. */
static void mem_until(imp_events *m, memgen *g, bool all, uint64_t until)
{
    while (g->pos < g->n && (all || g->v[g->pos].ts < until)) {
        if (m->cb.memory)
            m->cb.memory(m->ctx, &g->v[g->pos]);
        m->st.records++;
        g->pos++;
    }
}

/* ---- threads ---- */

static void thread_records(imp_events *m)
{
    for (size_t i = 0; i < m->ntracks; i++) {
        imp_track *t = &m->tracks[i];
        if (!t->used)
            continue;
        char base[64], name[96];
        if (t->named)
            snprintf(base, sizeof base, "%s", t->name);
        else if (!t->tid_str)
            snprintf(base, sizeof base, "thread %" PRId64, t->tid);
        else
            snprintf(base, sizeof base, "thread %zu", i + 1);
        uint32_t lanes = t->lanes ? t->lanes : 1;
        for (uint32_t l = 0; l < lanes; l++) {
            if (l)
                snprintf(name, sizeof name, "%s (overlap %u)", base, l);
            else
                snprintf(name, sizeof name, "%s", base);
            prism_thread th = { .stream = t->stream + l,
                                .os_tid = !t->tid_str && t->tid > 0 ? (uint64_t)t->tid : 0,
                                .name = name };
            if (m->cb.thread)
                m->cb.thread(m->ctx, &th);
        }
    }
}

/* ---- the build ---- */

bool imp_build(imp_events *m)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < m->nreg; i++) {
        lo = m->reg[i].ts < lo ? m->reg[i].ts : lo;
        hi = m->reg[i].end > hi ? m->reg[i].end : hi;
    }
    for (size_t i = 0; i < m->ngpu; i++) {
        lo = m->gpu[i].start < lo ? m->gpu[i].start : lo;
        hi = m->gpu[i].end > hi ? m->gpu[i].end : hi;
    }
    for (size_t i = 0; i < m->nsteps; i++) {
        lo = m->steps[i].start < lo ? m->steps[i].start : lo;
        hi = m->steps[i].end > hi ? m->steps[i].end : hi;
    }
    for (size_t i = 0; i < m->nmem; i++) {
        lo = m->mem[i].ts < lo ? m->mem[i].ts : lo;
        hi = m->mem[i].ts > hi ? m->mem[i].ts : hi;
    }
    if (lo > hi)
        lo = hi = 0;
    int64_t origin = lo;

    /* per-thread order and nesting */
    sort(m->reg, m->nreg, sizeof *m->reg, cmp_reg);
    int64_t *st = malloc((size_t)IMP_MAX_LANES * IMP_MAX_NEST * sizeof *st);
    if (!st)
        return imp_fail(m, PRISM_E_NOMEM, m->in_bytes, "out of memory");
    for (size_t a = 0, b; a < m->nreg; a = b) {
        for (b = a + 1; b < m->nreg && m->reg[b].track == m->reg[a].track; b++)
            ;
        assign_lanes(m, a, b, st);
    }
    free(st);
    sort(m->reg, m->nreg, sizeof *m->reg, cmp_reg_lane);
    sort(m->gpu, m->ngpu, sizeof *m->gpu, cmp_gpu);
    sort(m->steps, m->nsteps, sizeof *m->steps, cmp_step);

    /* streams: each used thread, then its overflow tracks */
    uint32_t next = 1;
    for (size_t i = 0; i < m->ntracks; i++) {
        imp_track *t = &m->tracks[i];
        if (!t->used)
            continue;
        t->stream = next;
        next += t->lanes ? t->lanes : 1;
    }
    size_t ns = 0;
    istream *ss = calloc(m->ntracks ? m->ntracks * IMP_MAX_LANES : 1, sizeof *ss);
    if (!ss)
        return imp_fail(m, PRISM_E_NOMEM, m->in_bytes, "out of memory");
    for (size_t a = 0, b; a < m->nreg; a = b) {
        for (b = a + 1; b < m->nreg && m->reg[b].track == m->reg[a].track &&
                        m->reg[b].lane == m->reg[a].lane; b++)
            ;
        if (m->reg[a].lane == LANE_DROP)
            continue;
        ss[ns++] = (istream){ .lo = a, .hi = b, .pos = a,
                              .stream = m->tracks[m->reg[a].track].stream + m->reg[a].lane };
    }

    memgen mg = { 0 };
    bool ok = memory_samples(m, &mg, origin, hi - lo);
    prism_region_event *rbuf = malloc(BATCH * sizeof *rbuf);
    prism_gpu_record *gbuf = malloc(BATCH * sizeof *gbuf);
    if (!ok || !rbuf || !gbuf) {
        free(rbuf);
        free(gbuf);
        free(mg.v);
        free(ss);
        return imp_fail(m, PRISM_E_NOMEM, m->in_bytes, "out of memory");
    }

    /* header, strings, facts, threads, steps */
    header(m, origin);
    uint32_t nstr = prism_strtab_count(m->names);
    for (uint32_t id = 1; id <= nstr && m->cb.string; id++) {
        size_t len;
        const char *s = prism_strtab_name(m->names, id, &len);
        if (s)
            m->cb.string(m->ctx, id, s, len);
    }
    if (m->lead_info.key && m->lead_info.value.type == PRISM_VAL_TEXT)
        info_s(m, m->lead_info.key, m->lead_info.value.v.s);
    for (int c = 0; c < C_COUNT; c++)
        if (m->counters[c] || c == C_EVENTS)
            info_u(m, counter_keys[c], m->counters[c]);
    if (!m->complete)
        info_u(m, "import.truncated", m->in_bytes);
    if (m->ngpu && m->gpu_status)
        info_s(m, "gpu.status", m->gpu_status);
    if (m->nsteps)
        info_u(m, "steps.thread", m->tracks[m->steps[0].track].stream);
    thread_records(m);
    if (m->nsteps && m->cb.steps) {
        prism_step sb[256];
        size_t n = 0;
        for (size_t i = 0; i < m->nsteps; i++) {
            const imp_step *s = &m->steps[i];
            sb[n++] = (prism_step){ rel(m, s->start, origin), rel(m, s->end, origin), s->index, 0,
                                    PRISM_STEP_SAMPLED };
            if (n == 256 || i + 1 == m->nsteps) {
                m->cb.steps(m->ctx, 0, sb, n);
                m->st.records += n;
                n = 0;
            }
        }
    }

    /* regions in windows; GPU records and memory one window behind */
    int64_t prev = INT64_MIN;
    size_t gpos = 0;
    for (;;) {
        int64_t until = INT64_MAX;
        bool more = false;
        for (size_t i = 0; i < ns; i++) {
            istream *s = &ss[i];
            more |= s->pos < s->hi || s->depth;
            if (s->pos + WINDOW_EVENTS < s->hi && m->reg[s->pos + WINDOW_EVENTS].ts < until)
                until = m->reg[s->pos + WINDOW_EVENTS].ts;
        }
        if (!more)
            break;
        if (prev != INT64_MIN && until <= prev)
            until = prev + 1;
        for (size_t i = 0; i < ns; i++)
            if (!stream_until(m, &ss[i], until, origin, rbuf)) {
                ok = false;
                break;
            }
        if (!ok)
            break;
        if (prev != INT64_MIN) {
            gpu_until(m, &gpos, prev, origin, gbuf);
            mem_until(m, &mg, false, rel(m, prev, origin));
        }
        prev = until;
    }
    gpu_until(m, &gpos, INT64_MAX, origin, gbuf);
    mem_until(m, &mg, true, 0);
    if (ok && m->complete) {
        uint64_t events = 2 * (uint64_t)m->nreg + m->ngpu + m->nmem;
        prism_footer f = { rel(m, hi, origin), events, 0, 0, true };
        if (m->cb.footer)
            m->cb.footer(m->ctx, &f);
        m->st.records++;
        m->st.footer = true;
    }
    for (size_t i = 0; i < ns; i++)
        free(ss[i].stack);
    free(ss);
    free(rbuf);
    free(gbuf);
    free(mg.v);
    m->built = true;
    if (!ok)
        return imp_fail(m, PRISM_E_NOMEM, m->in_bytes, "out of memory");
    /* the events are delivered: only the names stay */
    free(m->reg);
    free(m->gpu);
    free(m->mem);
    m->reg = NULL;
    m->gpu = NULL;
    m->mem = NULL;
    m->nreg = m->ngpu = m->nmem = 0;
    return true;
}

