/*
 * export_trace.c - `prism-top export --format chrome-trace`: the profile's
 * events as Chrome trace-event JSON (the JSON Object Format), which
 * Perfetto (ui.perfetto.dev), chrome://tracing and speedscope open.
 *
 * Streamed straight from the reader's callbacks: no analysis, and memory
 * bounded by the number of threads, their nesting depth and GPU streams,
 * not by events.  The file is read twice: a first pass (export_scan.c,
 * which decodes but builds no call tree) finds the training thread, as
 * analyze names it, so that its track comes first; only an export of some
 * steps or threads of a file that does not name that thread analyses them
 * first.
 *
 *   process pid (the header's pid)
 *     tid = 1           the training thread: regions as complete "X"
 *                       events without cat, written when they end,
 *                       marks as "i", counters as "C", and its time
 *                       inside sampled steps that no root region holds
 *                       as "X" events "(outside regions)" (cat "outside",
 *                       args.unattributed; export_outside.c)
 *     tid = 2           "steps": one "X" event per step
 *     tid = stream + 3  every other thread, as the training thread
 *     counters          host RSS (MB), process CPU (%)
 *   process pid + 2^22  GPU tracks (export_trace_gpu.c)
 *
 * thread_name and thread_sort_index metadata name and order every track
 * (the sort index is the tid; speedscope orders by tid).  The pieces every
 * event writer uses (timestamps, names, metadata) and otherData at the
 * end: export_trace_put.c.
 *
 * Timestamps are microseconds since the profile's time origin, exact
 * (integer ns / 1000, the fraction's trailing zeros left out).  A complete
 * event's dur is cut (by at most 1 ns) so that ts + dur, added in doubles
 * as a reader adds them, never passes its end, and a region's is kept from
 * ending before the children it holds (trace_put_span): spans on a track
 * nest or follow each other.  Region streams are kept balanced: an exit
 * whose enter was lost to damage is left out, and regions still open at the
 * end (a writer that died) are closed at their thread's last timestamp;
 * otherData.export counts both.
 *
 * The events go through one large buffer (outbuf.h) with hand-written
 * number formatting, and each name is escaped once (by string id): about
 * 70 bytes a region, tens of millions of records a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ropen.h"
#include "reports.h"
#include "export_trace.h"
#include "jsonw.h"


uint64_t trace_tid(const trace *t, uint32_t stream)
{
    return stream == t->train ? TRAIN_TID : (uint64_t)stream + OTHER_TID_BASE;
}

/* ---- state ---- */

static tstream *stream_of(trace *t, uint32_t stream)
{
    uint64_t i;
    if (pb_map_get(&t->st_of, stream, &i))
        return &t->st[i];
    if (t->nst == t->stcap) {
        size_t cap = t->stcap ? t->stcap * 2 : 16;
        tstream *n = realloc(t->st, cap * sizeof *n);
        if (!n)
            return NULL;
        t->st = n;
        t->stcap = cap;
    }
    if (!pb_map_put(&t->st_of, stream, t->nst))
        return NULL;
    tstream *s = &t->st[t->nst++];
    memset(s, 0, sizeof *s);
    s->id = stream;
    char *p = s->tail;
    uint64_t pid = t->pid;
    pb_map_get(&t->wpid, stream, &pid);    /* a worker's thread: its process */
    memcpy(p, ",\"pid\":", 7);
    p = ob_fmt_u64(p + 7, pid);
    memcpy(p, ",\"tid\":", 7);
    p = ob_fmt_u64(p + 7, trace_tid(t, stream));
    s->tail_len = (uint32_t)(p - s->tail);
    return s;
}

/* ---- callbacks ---- */

static void on_header(void *ctx, const prism_header *h)
{
    trace *t = ctx;
    t->pid = h->pid;
    t->gpu_pid = h->pid + GPU_PID_OFFSET;
    t->started = true;
    OB_LIT(&t->o, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    const char *prog = h->argc && h->argv[0] ? h->argv[0] : "profiled process";
    const char *slash = strrchr(prog, '/');
    trace_meta(t, "process_name", t->pid, NULL, "name", slash && slash[1] ? slash + 1 : prog,
               0);
    if (h->host) {
        pb_buf l = { 0 };
        pb_buf_puts(&l, "host ");
        pb_buf_puts(&l, h->host);
        trace_meta(t, "process_labels", t->pid, NULL, "labels", pb_buf_str(&l), 0);
        pb_buf_free(&l);
    }
    trace_meta(t, "process_sort_index", t->pid, NULL, "sort_index", NULL, 0);
}

/* A string (re)defined: its cached text, if any, is made again when next
 * used. */
static void on_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    trace *t = ctx;
    (void)s;
    (void)len;
    if (id < t->nnames)
        t->names[id].src = NULL;
}

/* A worker process's thread (a worker file merged by the reader): its
 * events under the worker's own process, named once and sorted after the
 * profiled process. */
static uint64_t worker_pid(trace *t, const prism_thread *th)
{
    uint64_t pid = th->pid ? th->pid : t->pid, seen;
    if (!pb_map_put(&t->wpid, th->stream, pid)) {
        t->oom = true;
        return t->pid;
    }
    if (!pb_map_get(&t->wnamed, pid, &seen)) {
        char name[64];
        snprintf(name, sizeof name, "DataLoader worker %u", th->worker_id);
        if (!pb_map_put(&t->wnamed, pid, 1))
            t->oom = true;
        trace_meta(t, "process_name", pid, NULL, "name", name, 0);
        trace_meta(t, "process_sort_index", pid, NULL, "sort_index", NULL,
                   1 + (int64_t)th->worker_id);
    }
    return pid;
}

static void on_thread(void *ctx, const prism_thread *th)
{
    trace *t = ctx;
    uint64_t tid = trace_tid(t, th->stream);
    uint64_t pid = th->is_worker ? worker_pid(t, th) : t->pid;
    trace_meta(t, "thread_name", pid, &tid, "name", th->name, 0);
    trace_meta(t, "thread_sort_index", pid, &tid, "sort_index", NULL, (int64_t)tid);
}

/* A piece of the training thread's time outside regions, as a complete
 * event named as the analysis' node. */
static void outside_event(void *ctx, uint64_t a, uint64_t z)
{
    trace *t = ctx;
    trace_sep(t);
    OB_LIT(&t->o, "{\"name\":\"" TRACE_OUTSIDE_NAME "\",\"cat\":\"outside\",\"ph\":\"X\",\"pid\":");
    ob_u64(&t->o, t->pid);
    OB_LIT(&t->o, ",\"tid\":");
    ob_u64(&t->o, TRAIN_TID);
    trace_put_span(t, a, z, -1);
    OB_LIT(&t->o, ",\"args\":{\"unattributed\":true}}");
    t->n.outside++;
}

/* The training thread enters its top level at ts: the gap before it. */
static void top_enter(trace *t, const tstream *s, uint64_t ts)
{
    if (s->id == t->train && !s->open && !s->phantom)
        trace_top_enter(&t->first, &t->top, ts, outside_event, t);
}

/* ... and is back at it at ts. */
static void top_left(trace *t, const tstream *s, uint64_t ts)
{
    if (s->id == t->train && !s->open && !s->phantom)
        t->top.idle = ts;
}

/* The JSON text of string id as cached, TRACE_NAME_SLACK bytes readable past
 * its end; NULL when it is not (unknown, or out of memory). */
static const char *cached_text(trace *t, uint32_t id, size_t *len)
{
    if (id < t->nnames && t->names[id].src) {  /* on_string drops it if redefined */
        *len = t->names[id].len;
        return t->name_bytes.data + t->names[id].off;
    }
    size_t n;
    const char *s = prism_reader_string(t->r, id, &n);
    const trace_name *e = s ? trace_cached_name(t, id, s, n) : NULL;
    if (!e)
        return NULL;
    *len = e->len;
    return t->name_bytes.data + e->off;
}

/* The innermost open region of s ends at ts: its complete event, its
 * dur kept from ending before its children's (as a reader adds them).
 * The hot path of the export: a reservation for the name and one for the
 * track, each copied in fixed-size blocks. */
static void end_event(trace *t, tstream *s, uint64_t ts)
{
    tframe *f = &s->fr[--s->open];
    size_t n;
    const char *name = cached_text(t, f->name, &n);
    if (name && n < OB_CAP / 8) {
        char *p = ob_room(&t->o, n + 48), *q = p;
        if (t->any_event)
            *q++ = ',';
        t->any_event = true;
        memcpy(q, "\n{\"name\":", 9);
        q += 9;
        for (size_t i = 0; i < n; i += 16)
            memcpy(q + i, name + i, 16);
        memcpy(q + n, ",\"ph\":\"X\"", 9);
        t->o.len += (size_t)(q + n + 9 - p);
    } else {
        trace_sep(t);
        OB_LIT(&t->o, "{\"name\":");
        trace_put_name(t, f->name);
        OB_LIT(&t->o, ",\"ph\":\"X\"");
    }
    double end = trace_put_span(t, f->start, ts, f->kids);
    char *p = ob_room(&t->o, sizeof s->tail + 1);
    memcpy(p, s->tail, sizeof s->tail);
    p[s->tail_len] = '}';
    t->o.len += s->tail_len + 1u;
    if (s->open && end > s->fr[s->open - 1].kids)
        s->fr[s->open - 1].kids = end;
}

static bool push_frame(tstream *s, uint32_t name, uint64_t ts)
{
    if (s->open == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        tframe *n = cap > s->cap ? realloc(s->fr, cap * sizeof *n) : NULL;
        if (!n)
            return false;
        s->fr = n;
        s->cap = cap;
    }
    s->fr[s->open++] = (tframe){ ts, -1, name };
    return true;
}

static void on_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    trace *t = ctx;
    tstream *s = stream_of(t, stream);
    if (!s) {
        t->oom = true;
        return;
    }
    if (n) {
        /* reconcile with the writer's depth: frames lost to damage */
        uint64_t ts = ev[0].ts > s->last_ts ? ev[0].ts : s->last_ts;
        if (depth > s->open + s->phantom + s->deep) {
            top_enter(t, s, ts);
            s->phantom = depth - s->open - s->deep;
        }
        while (depth < s->open + s->phantom + s->deep) {
            if (s->deep) {
                s->deep--;
                continue;
            }
            if (s->phantom) {
                s->phantom--;
            } else {
                end_event(t, s, ts);
                t->n.closed_at_end++;
            }
            top_left(t, s, ts);
        }
    }
    for (size_t i = 0; i < n; i++) {
        /* per track, time never goes back (a damaged file's clock may) */
        uint64_t ts = ev[i].ts > s->last_ts ? ev[i].ts : s->last_ts;
        trace_note_ts(t, ts);
        s->last_ts = ts;
        if (ev[i].kind == PRISM_REGION_ENTER && (s->deep ||
                                                 s->open + s->phantom >= PRISM_ANALYSIS_MAX_DEPTH)) {
            s->deep++;                  /* as deep as the analysis goes: counted */
            t->n.too_deep++;
        } else if (ev[i].kind != PRISM_REGION_ENTER && s->deep) {
            s->deep--;
        } else if (ev[i].kind == PRISM_REGION_ENTER) {
            top_enter(t, s, ts);
            if (!push_frame(s, ev[i].name, ts)) {
                t->oom = true;
                return;
            }
            t->n.enters++;
        } else if (s->phantom) {
            s->phantom--;
            t->n.unmatched_exits++;
            top_left(t, s, ts);
        } else if (s->open) {
            end_event(t, s, ts);
            t->n.exits++;
            top_left(t, s, ts);
        } else {
            t->n.unmatched_exits++;
        }
    }
}

static void on_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    trace *t = ctx;
    tstream *s = stream_of(t, stream);
    if (!s) {
        t->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        trace_note_ts(t, m[i].ts);
        trace_sep(t);
        OB_LIT(&t->o, "{\"name\":");
        trace_put_name(t, m[i].name);
        OB_LIT(&t->o, ",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"t\"");
        ob_mem(&t->o, s->tail, s->tail_len);
        trace_put_ts(t, m[i].ts);
        ob_putc(&t->o, '}');
        t->n.marks++;
    }
}

static void on_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    trace *t = ctx;
    tstream *s = stream_of(t, stream);
    if (!s) {
        t->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        trace_note_ts(t, c[i].ts);
        if (c[i].is_float && !isfinite(c[i].v.f)) {
            t->n.nonfinite_counters++;      /* JSON cannot hold it */
            continue;
        }
        trace_sep(t);
        OB_LIT(&t->o, "{\"name\":");
        trace_put_name(t, c[i].name);
        OB_LIT(&t->o, ",\"cat\":\"counter\",\"ph\":\"C\"");
        ob_mem(&t->o, s->tail, s->tail_len);
        trace_put_ts(t, c[i].ts);
        OB_LIT(&t->o, ",\"args\":{\"value\":");
        if (c[i].is_float)
            ob_double(&t->o, c[i].v.f);
        else
            ob_i64(&t->o, c[i].v.i);
        OB_LIT(&t->o, "}}");
        t->n.counters++;
    }
}

static void on_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    trace *t = ctx;
    uint64_t tid = STEPS_TID;
    (void)stream;
    if (n && !t->steps_named) {
        trace_meta(t, "thread_name", t->pid, &tid, "name", "steps", 0);
        trace_meta(t, "thread_sort_index", t->pid, &tid, "sort_index", NULL, STEPS_TID);
        t->steps_named = true;
    }
    for (size_t i = 0; i < n; i++) {
        trace_note_ts(t, s[i].end);
        trace_sep(t);
        OB_LIT(&t->o, "{\"name\":\"step ");
        ob_u64(&t->o, s[i].index);
        OB_LIT(&t->o, "\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":");
        ob_u64(&t->o, t->pid);
        OB_LIT(&t->o, ",\"tid\":");
        ob_u64(&t->o, STEPS_TID);
        trace_put_span(t, s[i].start, s[i].end > s[i].start ? s[i].end : s[i].start, -1);
        OB_LIT(&t->o, ",\"args\":{\"index\":");
        ob_u64(&t->o, s[i].index);
        OB_LIT(&t->o, ",\"epoch\":");
        ob_u64(&t->o, s[i].epoch);
        if (s[i].flags & PRISM_STEP_SAMPLED)
            OB_LIT(&t->o, ",\"sampled\":true}}");
        else
            OB_LIT(&t->o, ",\"sampled\":false}}");
        t->n.steps++;
    }
}

static void on_dropped(void *ctx, const prism_dropped *d)
{
    trace *t = ctx;
    trace_sep(t);
    OB_LIT(&t->o, "{\"name\":\"dropped records\",\"cat\":\"dropped\",\"ph\":\"i\",\"s\":\"p\","
                  "\"pid\":");
    ob_u64(&t->o, t->pid);
    OB_LIT(&t->o, ",\"tid\":");
    ob_u64(&t->o, trace_tid(t, d->stream));
    trace_put_ts(t, t->last_ts);
    if (d->source == PRISM_SOURCE_GPU)
        OB_LIT(&t->o, ",\"args\":{\"source\":\"gpu\",\"total\":");
    else
        OB_LIT(&t->o, ",\"args\":{\"source\":\"cpu\",\"total\":");
    ob_u64(&t->o, d->total);
    OB_LIT(&t->o, "}}");
    t->n.dropped++;
}

static void on_footer(void *ctx, const prism_footer *f)
{
    trace *t = ctx;
    t->have_footer = true;
    t->footer = *f;
}

/* ---- the end: close open regions, then otherData ---- */

static void epilogue(trace *t, const char *path)
{
    /* a complete file: the training thread's time after its last region */
    uint64_t k;
    if (t->have_footer && pb_map_get(&t->st_of, t->train, &k) && !t->st[k].open &&
        !t->st[k].phantom)
        trace_top_end(&t->first, &t->top, outside_event, t);
    for (size_t i = 0; i < t->nst; i++) {       /* in the order they appeared */
        tstream *st = &t->st[i];
        while (st->open) {
            end_event(t, st, st->last_ts);
            t->n.closed_at_end++;
        }
    }
    ob_flush(&t->o);                            /* the rest straight to f */
    trace_other_data(t, path);
}

/* The export of what sc keeps (resolved against scan, the first pass). */
static int chrome_trace(const char *path, const ex_scan *scan, const ex_scope *sc, FILE *out,
                        char *msg, size_t msglen, uint64_t *offset, prism_status *status)
{
    trace t = { 0 };
    if (!ob_open(&t.o, out)) {
        snprintf(msg, msglen, "out of memory");
        *offset = 0;
        *status = PRISM_E_NOMEM;
        return EXIT_BADINPUT;
    }
    trace_first_pass(path, scan, sc, &t.first);
    t.train = t.first.train;
    t.scope = sc;
    t.info = (pb_buf){ 0 };
    prism_reader_callbacks cb = {
        .header = on_header, .string = on_string, .thread = on_thread, .regions = on_regions,
        .marks = on_marks,
        .counters = on_counters, .steps = on_steps, .memory = trace_on_memory, .gpu = trace_on_gpu,
        .dropped = on_dropped, .info = trace_on_info, .footer = on_footer,
    }, outer;
    int rc = EXIT_OK;
    *status = PRISM_E_NOMEM;
    ex_filter *filter = sc->active ? ex_filter_new(sc, &cb, &t, &outer) : NULL;
    if (!sc->active || filter)
        t.r = filter ? prism_reader_new(&outer, filter) : prism_reader_new(&cb, &t);
    int fd = t.r ? pb_open_read(path) : -1;
    prism_status st;
    if (!t.r) {
        snprintf(msg, msglen, "out of memory");
        *offset = 0;
        rc = EXIT_BADINPUT;
    } else if (fd < 0) {
        snprintf(msg, msglen, "%s", strerror(errno));
        *offset = 0;
        *status = PRISM_E_IO;
        rc = EXIT_BADINPUT;
    } else {
        st = prism_reader_read_fd(t.r, fd);
        close(fd);
        if (st == PRISM_OK || st == PRISM_NEED_MORE)
            st = prism_reader_finish(t.r);
        if (st == PRISM_OK)
            prism_reader_add_workers(t.r, path);    /* DataLoader workers' threads */
        if (st != PRISM_OK || !t.started) {
            const char *m = prism_strerror(st);
            uint64_t off = 0;
            prism_reader_error(t.r, &m, &off);
            snprintf(msg, msglen, "%s", m);
            *offset = off;
            *status = st;
            rc = EXIT_BADINPUT;
        } else if (t.oom || t.info.oom || ex_filter_oom(filter)) {
            snprintf(msg, msglen, "out of memory");
            *offset = prism_reader_input_offset(t.r);
            rc = EXIT_BADINPUT;
        } else {
            epilogue(&t, path);
            *status = PRISM_OK;
        }
    }
    trace_first_free(&t.first);
    pb_map_free(&t.st_of);
    pb_map_free(&t.gtrack);
    pb_map_free(&t.wpid);
    pb_map_free(&t.wnamed);
    for (size_t i = 0; i < t.nst; i++)
        free(t.st[i].fr);
    free(t.st);
    pb_buf_free(&t.info);
    free(t.names);
    pb_buf_free(&t.name_bytes);
    prism_reader_free(t.r);
    ex_filter_free(filter);
    ob_close(&t.o);
    return rc;
}

int export_chrome_trace_msg(const char *path, FILE *out, char *msg, size_t msglen,
                            uint64_t *offset)
{
    prism_status st;
    ex_scan scan;
    ex_scope sc;
    ex_scan_file_train(path, &scan);
    ex_scope_resolve(path, NULL, &scan, &sc);     /* everything: cannot fail */
    int rc = chrome_trace(path, &scan, &sc, out, msg, msglen, offset, &st);
    ex_scope_free(&sc);
    ex_scan_free(&scan);
    return rc;
}

int export_chrome_trace_scoped(const char *path, const rp_export_scope *scope, FILE *out)
{
    ex_scan scan;
    ex_scope sc;
    ex_scan_file_train(path, &scan);
    if (!ex_scope_resolve(path, scope, &scan, &sc)) {
        ex_scan_free(&scan);
        return EXIT_BADINPUT;
    }
    char msg[256];
    uint64_t off = 0;
    prism_status st;
    int rc = chrome_trace(path, &scan, &sc, out, msg, sizeof msg, &off, &st);
    if (rc != EXIT_OK)
        report_error(path, st, msg, off);
    ex_scope_free(&sc);
    ex_scan_free(&scan);
    return rc;
}

int export_chrome_trace(const char *path, FILE *out)
{
    return export_chrome_trace_scoped(path, NULL, out);
}

static int write_chrome(FILE *out, const rp_export_in *in)
{
    return export_chrome_trace_scoped(in->path, in->scope, out);
}

const rp_export_format rp_export_chrome_trace = {
    "chrome-trace", "chrome",
    "every event as Chrome trace-event JSON: open it in\n"
    "                         ui.perfetto.dev, chrome://tracing or speedscope\n",
    true, false, write_chrome,
};
