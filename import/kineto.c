/*
 * kineto.c - what each torch.profiler trace event becomes (Kineto and the
 * legacy autograd layout): a region, a step, a GPU or API record, a memory
 * event, a thread's name, a flow end; filed in the shared store (events.h).
 * What the source is, for the header and INFO.  docs/IMPORT.md.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"
#include "array.h"             /* pb_qsort */

/* The track of the event's (pid, tid); UINT32_MAX without memory. */
static uint32_t track_of(imp *m, const imp_ev *e)
{
    return imp_track_of(&m->s, e->pid, e->tid, e->pid_str, e->tid_str);
}

static bool prefix(const imp_ev *e, const char *p)
{
    size_t n = strlen(p);
    return e->name_len >= n && !memcmp(e->name, p, n);
}

/*
 * A Python object's address in a name ("<built-in method acquire of
 * _thread.lock object at 0x7f7a614977c0>") differs from run to run: the same
 * code would have a new name in every trace and never match in a compare.
 * Each " at 0x" followed by 6 or more hex digits and '>' becomes " at
 * 0x...>".  The name rewritten into out[0..cap) and its length; 0 when it
 * holds no address (or is longer than cap: kept as it is).
 */
static size_t strip_addresses(const char *s, size_t n, char *out, size_t cap)
{
    static const char at[] = " at 0x";
    if (n > cap || !memmem(s, n, at, sizeof at - 1))
        return 0;
    size_t o = 0, changed = 0;
    for (size_t i = 0; i < n;) {
        if (n - i > sizeof at - 1 && !memcmp(s + i, at, sizeof at - 1)) {
            size_t j = i + sizeof at - 1, k = j;
            while (k < n && isxdigit((unsigned char)s[k]))
                k++;
            if (k - j >= 6 && k < n && s[k] == '>') {   /* never longer than it was */
                memcpy(out + o, " at 0x...", 9);
                o += 9;
                i = k;
                changed++;
                continue;
            }
        }
        out[o++] = s[i++];
    }
    return changed ? o : 0;
}

static bool is_name(const imp_ev *e, const char *p)
{
    return e->name_len == strlen(p) && !memcmp(e->name, p, e->name_len);
}

/* "train.py(12): <module>": the script's file, from the outermost frame
 * (the earliest <module> frame of the trace). */
static void script_of(imp *m, const imp_ev *e)
{
    static const char mod[] = "): <module>";
    size_t n = sizeof mod - 1;
    if (e->name_len <= n || memcmp(e->name + e->name_len - n, mod, n) ||
        (m->script[0] && e->ts >= m->script_ts))
        return;
    const char *open = NULL;
    for (size_t i = e->name_len - n; i-- > 0;)
        if (e->name[i] == '(') {
            open = e->name + i;
            break;
        }
    if (!open || open == e->name)
        return;
    size_t len = (size_t)(open - e->name);
    if (len >= sizeof m->script)
        len = sizeof m->script - 1;
    memcpy(m->script, e->name, len);
    m->script[len] = '\0';
    m->script_ts = e->ts;
}

/* soft: a Python frame (with_stack), whose extent gives way to the ops
 * and record_function ranges it crosses (build.c); it is sorted among
 * its own kind (Kineto writes the Python frames after the ops). */
static bool region(imp *m, const imp_ev *e, int64_t dur, bool soft)
{
    uint32_t track = track_of(m, e);
    if (track == UINT32_MAX || !IMP_PUSH(&m->s, reg, nreg, creg))
        return false;       /* room for the region (or step) at once */
    imp_track *t = &m->s.tracks[track];
    t->used = true;
    int64_t *last = soft ? &t->last_soft_ts : &t->last_ts;
    if (e->ts < *last)
        m->s.counters[C_UNSORTED]++;
    else
        *last = e->ts;
    if (!m->s.have_pid && !e->pid_str) {
        m->s.first_pid = (uint64_t)e->pid;
        m->s.have_pid = true;
    }
    if (prefix(e, "ProfilerStep#")) {       /* a step, not a region */
        uint64_t n = 0;
        for (size_t i = 13; i < e->name_len && e->name[i] >= '0' && e->name[i] <= '9' &&
                            n < UINT64_MAX / 10 - 10; i++)
            n = n * 10 + (uint64_t)(e->name[i] - '0');
        if (!IMP_PUSH(&m->s, steps, nsteps, csteps))
            return false;
        m->s.steps[m->s.nsteps++] = (imp_step){ e->ts, e->ts + dur, n, track };
        return true;
    }
    char fixed[PRISM_MAX_STRING_BYTES];
    size_t flen = strip_addresses(e->name, e->name_len, fixed, sizeof fixed);
    uint32_t name = flen ? imp_intern(&m->s, fixed, flen) : imp_intern(&m->s, e->name, e->name_len);
    if (!name)
        return false;
    if (soft) {
        script_of(m, e);
        return imp_region_add_soft(&m->s, track, e->ts, e->ts + dur, name);
    }
    return imp_region_add(&m->s, track, e->ts, e->ts + dur, name);
}

/* "Memcpy HtoD (Pageable -> Device)": the copy and memory kinds. */
static uint8_t mem_kind(const char *s, size_t n)
{
    if (n >= 8 && !memcmp(s, "Pageable", 8)) return PRISM_MEM_PAGEABLE;
    if (n >= 6 && !memcmp(s, "Pinned", 6)) return PRISM_MEM_PINNED;
    if (n >= 6 && !memcmp(s, "Device", 6)) return PRISM_MEM_DEVICE;
    if (n >= 7 && !memcmp(s, "Managed", 7)) return PRISM_MEM_MANAGED;
    return PRISM_MEM_UNKNOWN;
}

static void copy_kinds(const imp_ev *e, imp_gpu *g)
{
    static const char *const kinds[] = { "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" };
    const char *s = e->name, *end = e->name + e->name_len;
    for (unsigned k = 0; k < 5; k++)
        if (memmem(s, e->name_len, kinds[k], 4))
            g->copy_kind = (uint8_t)(k + 1);
    const char *open = memchr(s, '(', e->name_len);
    if (!open)
        return;
    open++;
    g->src_kind = mem_kind(open, (size_t)(end - open));
    const char *arrow = memmem(open, (size_t)(end - open), "-> ", 3);
    if (arrow)
        g->dst_kind = mem_kind(arrow + 3, (size_t)(end - arrow - 3));
    if (g->type == PRISM_GPU_MEMSET) {
        g->dst_kind = g->src_kind;
        g->src_kind = 0;
    }
}

static uint32_t sync_type(const imp_ev *e)
{
    const char *s = e->sync;
    if (!e->sync_len)
        return PRISM_SYNC_UNKNOWN;
    if (strstr(s, "Wait"))
        return PRISM_SYNC_STREAM_WAIT_EVENT;
    if (strstr(s, "Event"))
        return PRISM_SYNC_EVENT;
    if (strstr(s, "Stream"))
        return PRISM_SYNC_STREAM;
    if (strstr(s, "Context") || strstr(s, "Device"))
        return PRISM_SYNC_CONTEXT;
    return PRISM_SYNC_UNKNOWN;
}

static uint32_t u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static bool gpu(imp *m, const imp_ev *e, int64_t dur, uint8_t type)
{
    if (!IMP_PUSH(&m->s, gpu, ngpu, cgpu))
        return false;
    imp_gpu *g = &m->s.gpu[m->s.ngpu];
    memset(g, 0, sizeof *g);
    g->type = type;
    g->start = e->ts;
    g->end = e->ts + dur;
    g->corr = e->have & F_CORR ? e->corr : 0;
    if (type == PRISM_GPU_API) {
        uint32_t track = track_of(m, e);
        if (track == UINT32_MAX)
            return false;
        m->s.tracks[track].used = true;
        g->stream = track;
        g->name = imp_intern(&m->s, e->name, e->name_len);
        if (!g->name)
            return false;
        m->s.ngpu++;
        m->s.counters[C_API]++;
        return true;
    }
    /* device: args.device, else the pid (Kineto: the device), legacy: tid */
    uint64_t dev = e->have & F_DEVICE ? e->device
                 : e->pid_str ? (e->tid_str ? 0 : (uint64_t)e->tid) : (uint64_t)e->pid;
    g->device = u32(dev);
    g->stream = u32(e->have & F_STREAM ? e->stream : e->tid_str || e->pid_str ? 0 : (uint64_t)e->tid);
    g->bytes = e->have & F_BYTES ? e->bytes : 0;
    if (type == PRISM_GPU_KERNEL) {
        g->name = imp_intern(&m->s, e->name, e->name_len);
        if (!g->name)
            return false;
        for (unsigned i = 0; i < 3; i++) {
            g->grid[i] = i < e->ngrid ? u32(e->grid[i]) : 0;
            g->block[i] = i < e->nblock ? u32(e->block[i]) : 0;
        }
        g->shared_mem = u32(e->shared_mem);
        g->registers = u32(e->registers);
    } else if (type == PRISM_GPU_MEMCPY || type == PRISM_GPU_MEMSET) {
        copy_kinds(e, g);
    } else if (type == PRISM_GPU_SYNC) {
        g->sync_type = sync_type(e);
    }
    m->s.ngpu++;
    m->s.counters[C_GPU]++;
    return true;
}

static bool memory(imp *m, const imp_ev *e)
{
    if (!(e->have & F_TS) || !(e->have & F_TALLOC)) {
        m->s.counters[C_MISSING]++;
        return true;
    }
    if (!IMP_PUSH(&m->s, mem, nmem, cmem))
        return false;
    int32_t dev = e->dev_id < 0 || e->dev_id >= (int64_t)PRISM_MAX_GPUS ? -1 : (int32_t)e->dev_id;
    m->s.mem[m->s.nmem] = (imp_mem){ .ts = e->ts, .device = dev, .seq = (uint32_t)m->s.nmem,
                                 .allocated = e->total_alloc,
                                 .reserved = e->have & F_TRES ? e->total_res : e->total_alloc };
    m->s.nmem++;
    m->s.counters[C_MEMORY]++;
    return true;
}

static void thread_name(imp *m, const imp_ev *e)
{
    if (!e->argname_len || !(e->have & F_PID) || !(e->have & F_TID))
        return;
    uint32_t t = track_of(m, e);
    if (t == UINT32_MAX)
        return;
    memcpy(m->s.tracks[t].name, e->argname, sizeof m->s.tracks[t].name);
    m->s.tracks[t].name[sizeof m->s.tracks[t].name - 1] = '\0';
    m->s.tracks[t].named = true;
}

static bool complete_event(imp *m, const imp_ev *e)
{
    if (!(e->have & F_TS) || !(e->have & F_NAME)) {
        m->s.counters[C_MISSING]++;
        return true;
    }
    int64_t dur = e->dur;
    if (!(e->have & F_DUR)) {
        m->s.counters[C_MISSING]++;
        dur = 0;
    }
    if (dur < 0) {
        m->s.counters[C_NEG_DUR]++;
        dur = 0;
    }
    if (e->ts > INT64_MAX / 2 || e->ts < INT64_MIN / 2 || dur > INT64_MAX / 2) {
        m->s.counters[C_BAD_NUMBERS]++;
        return true;
    }
    int cat = e->cat;
    if (cat == CAT_NONE) {              /* the legacy layout, or a bare X */
        if (e->pid_str && !strcmp(e->pidname, "CUDA functions"))
            cat = CAT_KERNEL;
        else if (!e->pid_str || !strcmp(e->pidname, "CPU functions"))
            cat = CAT_CPU_OP;
        else
            cat = CAT_UNKNOWN;
    }
    if (dur == 0 && cat != CAT_IGNORED && cat != CAT_UNKNOWN)
        m->s.counters[C_ZERO_DUR]++;
    switch (cat) {
    case CAT_CPU_OP: case CAT_USER_ANNOT:
        return region(m, e, dur, false);
    case CAT_PYTHON:
        return region(m, e, dur, true);
    case CAT_KERNEL: return gpu(m, e, dur, PRISM_GPU_KERNEL);
    case CAT_MEMCPY: return gpu(m, e, dur, PRISM_GPU_MEMCPY);
    case CAT_MEMSET: return gpu(m, e, dur, PRISM_GPU_MEMSET);
    case CAT_SYNC: return gpu(m, e, dur, PRISM_GPU_SYNC);
    case CAT_RUNTIME: case CAT_DRIVER: return gpu(m, e, dur, PRISM_GPU_API);
    case CAT_GPU_ANNOT: m->s.counters[C_GPU_ANNOT]++; return true;
    case CAT_IGNORED: case CAT_INSTANT: return true;
    default: m->s.counters[C_UNKNOWN_CAT]++; return true;
    }
}

static bool flow(imp *m, const imp_ev *e)
{
    if (!(e->have & F_ID) || !(e->have & F_TS) || !(e->have & F_TID)) {
        m->s.counters[C_MISSING]++;
        return true;
    }
    uint32_t where;
    if (e->ph == 's') {
        where = track_of(m, e);
        if (where == UINT32_MAX)
            return false;
    } else {
        where = e->tid_str || e->tid < 0 ? 0 : u32((uint64_t)e->tid);
    }
    if (!IMP_PUSH(m, flows, nflows, cflows))
        return false;
    m->flows[m->nflows++] = (imp_flow){ e->id, e->ts, where, e->ph == 's' };
    return true;
}

static int cmp_flow(const void *x, const void *y)
{
    const imp_flow *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->start)                       /* launches by id */
        return a->id < b->id ? -1 : a->id > b->id;
    if (a->where != b->where)           /* kernel ends by (device, ts) */
        return a->where < b->where ? -1 : 1;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

bool imp_link_flows(imp *m)
{
    if (!m->nflows)
        return true;
    pb_qsort(m->flows, m->nflows, sizeof *m->flows, cmp_flow);
    size_t nf = 0;                      /* the 'f' ends come first */
    while (nf < m->nflows && !m->flows[nf].start)
        nf++;
    const imp_flow *fs = m->flows, *ss = m->flows + nf;
    size_t ns = m->nflows - nf, nk = m->s.ngpu;
    uint32_t launch = 0;
    for (size_t i = 0; i < nk; i++) {
        imp_gpu *g = &m->s.gpu[i];
        if (g->type != PRISM_GPU_KERNEL || g->corr)
            continue;
        size_t lo = 0, hi = nf;         /* the 'f' at (device, start) */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (fs[mid].where < g->device || (fs[mid].where == g->device && fs[mid].ts < g->start))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nf || fs[lo].where != g->device || fs[lo].ts != g->start)
            continue;
        uint64_t id = fs[lo].id;
        size_t a = 0, b = ns;           /* its 's' */
        while (a < b) {
            size_t mid = (a + b) / 2;
            if (ss[mid].id < id)
                a = mid + 1;
            else
                b = mid;
        }
        if (a == ns || ss[a].id != id)
            continue;
        if (!launch && !(launch = imp_intern(&m->s, "cudaLaunchKernel", 16)))
            return false;
        if (!IMP_PUSH(&m->s, gpu, ngpu, cgpu))
            return false;
        g = &m->s.gpu[i];                 /* the vector may have moved */
        g->corr = id | 1ull << 63;      /* apart from Kineto's ids */
        imp_gpu *api = &m->s.gpu[m->s.ngpu++];
        memset(api, 0, sizeof *api);
        api->type = PRISM_GPU_API;
        api->start = api->end = ss[a].ts;
        api->stream = ss[a].where;
        api->name = launch;
        api->corr = g->corr;
        m->s.counters[C_API]++;
    }
    free(m->flows);
    m->flows = NULL;
    m->nflows = m->cflows = 0;
    return true;
}

bool imp_store_event(imp *m)
{
    const imp_ev *e = &m->ev;
    if (e->have & F_BAD_TS)
        return true;                    /* counted as a bad number */
    switch (e->ph) {
    case 'X':
        return complete_event(m, e);
    case 'i': case 'I':
        if (is_name(e, "[memory]"))
            return memory(m, e);
        return true;
    case 'M':
        if (is_name(e, "thread_name"))
            thread_name(m, e);
        else if (is_name(e, "process_name") && !m->proc_name[0] && e->argname_len &&
                 e->have & F_PID && !e->pid_str)
            snprintf(m->proc_name, sizeof m->proc_name, "%s", e->argname);
        return true;
    case 's': case 'f':
        m->s.counters[C_FLOWS]++;
        if (e->cat == CAT_CPU_TO_CUDA)
            return flow(m, e);
        return true;                    /* Kineto: the correlation says it all */
    case 't':
        m->s.counters[C_FLOWS]++;
        return true;
    default:
        m->s.counters[C_UNKNOWN_PH]++;
        return true;
    }
}

/* A temporary file's name (torch writes a gzip trace to "/tmp/tmpXXXX.json"
 * first): not the run's. */
static bool temp_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, "tmp", 3) && !strstr(base, ".pt.trace");
}

/* The run's command line as far as the trace tells: the interpreter and
 * the script of the outermost Python frame (with_stack), else the name the
 * trace was saved under (traceName, unless a temporary file's), else its
 * id; never nothing. */
static void run_name(imp *m)
{
    imp_events *s = &m->s;
    if (m->script[0]) {
        s->argv[0] = m->proc_name[0] ? m->proc_name : "python";
        s->argv[1] = m->script;
        s->argc = 2;
    } else if (m->trace_name[0] && !temp_name(m->trace_name)) {
        s->argv[0] = m->trace_name;
        s->argc = 1;
    } else if (m->trace_id[0]) {
        s->argv[0] = "torch.profiler trace";
        s->argv[1] = m->trace_id;
        s->argc = 2;
    } else {
        s->argv[0] = "(a torch.profiler trace: no command line in it)";
        s->argc = 1;
    }
}

void imp_kineto_source(imp *m)
{
    imp_events *s = &m->s;
    bool legacy = m->layout == LAYOUT_LEGACY;
    snprintf(s->producer, sizeof s->producer, "torch.profiler trace (%s layout), imported by prism %s",
             legacy ? "legacy autograd" : "Kineto", PRISM_VERSION_STRING);
    s->clock = "torch.profiler trace clock (us)";
    size_t n = 0;
    s->lead[n++] = (prism_kv){ "import.layout",
                               { .type = PRISM_VAL_TEXT, .v.s = legacy ? "legacy" : "kineto" } };
    if (m->have_world)
        s->lead[n++] = (prism_kv){ "world_size", { .type = PRISM_VAL_INT, .v.i = m->world_size } };
    s->lead[n++] = (prism_kv){ "import.gzip", { .type = PRISM_VAL_BOOL, .v.b = m->gz } };
    if (m->have_schema)
        s->lead[n++] = (prism_kv){ "import.schema_version",
                                   { .type = PRISM_VAL_INT, .v.i = m->schema } };
    if (m->trace_name[0])
        s->lead[n++] = (prism_kv){ "import.trace_name",
                                   { .type = PRISM_VAL_TEXT, .v.s = m->trace_name } };
    if (m->trace_id[0])
        s->lead[n++] = (prism_kv){ "import.trace_id",
                                   { .type = PRISM_VAL_TEXT, .v.s = m->trace_id } };
    s->nlead = n;
    s->lead_info = s->lead[0];
    s->gpu_status = "ok: torch.profiler trace (Kineto's CUPTI activity records)";
    run_name(m);
}
