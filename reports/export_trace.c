/*
 * export_trace.c - `prism-top export --format chrome-trace`: the profile's
 * events as Chrome trace-event JSON (the JSON Object Format), which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Streamed straight from the reader's callbacks: no analysis, and memory
 * bounded by the number of threads and GPU streams, not by events.
 *
 *   process pid (the header's pid)
 *     tid = stream      regions as "B"/"E", marks as "i", counters as "C"
 *     tid = 0           "steps": one "X" event per step
 *     counters          host RSS (MB), process CPU (%)
 *   process pid + 2^22 ("GPU"; above any Linux pid, so never a real one)
 *     tid = device * 1000 + stream         kernels, copies, memsets, syncs,
 *                                          allocations as "X"
 *     tid = 1000000000 + CPU thread stream CUDA runtime API calls as "X"
 *     counters          GPU N memory (MB): used, reserved
 *
 * Timestamps are microseconds since the profile's time origin, printed with
 * three decimals (exact nanoseconds).  Region streams are kept balanced: an
 * exit whose enter was lost to damage is left out, and regions still open
 * at the end (a writer that died) are closed at their thread's last
 * timestamp; otherData.export counts both.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "report.h"

#define GPU_PID_OFFSET (1u << 22)
#define API_TID_BASE 1000000000u
#define STEPS_TID 0
#define INFO_MAX_BYTES (256u * 1024u)

/* ---- state ---- */

typedef struct tstream {
    uint32_t open;              /* "B" written, "E" not yet                 */
    uint32_t phantom;           /* frames open in the file we never began   */
    uint64_t last_ts;
} tstream;

typedef struct counts {
    uint64_t enters, exits, unmatched_exits, closed_at_end, marks, counters,
             nonfinite_counters, steps, memory, gpu, dropped;
} counts;

typedef struct trace {
    FILE *f;
    prism_reader *r;
    uint64_t pid, gpu_pid;
    bool started, any_event, steps_named, gpu_named, oom;
    tstream *st;
    size_t nst, stcap;
    imap st_of;                 /* stream -> index into st                  */
    imap gtrack;                /* GPU tids already named                   */
    uint64_t last_ts;
    strbuf info;                /* rendered INFO entries for otherData      */
    uint64_t info_left_out;
    bool have_footer;
    prism_footer footer;
    counts n;
} trace;

static void sep(trace *t)
{
    fputs(t->any_event ? ",\n" : "\n", t->f);
    t->any_event = true;
}

/* ,"key":MICROSECONDS.NNN -- exact, without printf (it is the hot path) */
static void put_ts(FILE *f, const char *key, uint64_t ns)
{
    char buf[48], *p = buf + sizeof buf;
    uint64_t us = ns / 1000u;
    unsigned frac = (unsigned)(ns % 1000u);
    *--p = (char)('0' + frac % 10);
    *--p = (char)('0' + frac / 10 % 10);
    *--p = (char)('0' + frac / 100);
    *--p = '.';
    do {
        *--p = (char)('0' + us % 10);
        us /= 10;
    } while (us);
    fputs(",\"", f);
    fputs(key, f);
    fputs("\":", f);
    fwrite(p, 1, (size_t)(buf + sizeof buf - p), f);
}

static void put_str(FILE *f, const char *s) { json_put_string(f, s, strlen(s)); }

static void put_name(trace *t, uint32_t id)
{
    size_t len;
    const char *s = prism_reader_string(t->r, id, &len);
    if (s) {
        json_put_string(t->f, s, len);
        return;
    }
    fprintf(t->f, "\"<string %" PRIu32 ">\"", id);
}

static void note_ts(trace *t, uint64_t ts)
{
    if (ts > t->last_ts)
        t->last_ts = ts;
}

/* Metadata event: a process or thread name, or a sort index. */
static void meta(trace *t, const char *what, uint64_t pid, const uint64_t *tid,
                 const char *key, const char *text, int64_t num)
{
    sep(t);
    fprintf(t->f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu64, what, pid);
    if (tid)
        fprintf(t->f, ",\"tid\":%" PRIu64, *tid);
    fprintf(t->f, ",\"args\":{\"%s\":", key);
    if (text)
        put_str(t->f, text);
    else
        fprintf(t->f, "%" PRId64, num);
    fputs("}}", t->f);
}

static tstream *stream_of(trace *t, uint32_t stream)
{
    uint32_t *i = imap_find(&t->st_of, stream);
    if (i)
        return &t->st[*i];
    if (t->nst == t->stcap) {
        size_t cap = t->stcap ? t->stcap * 2 : 16;
        tstream *n = realloc(t->st, cap * sizeof *n);
        if (!n)
            return NULL;
        t->st = n;
        t->stcap = cap;
    }
    if (!imap_put(&t->st_of, stream, (uint32_t)t->nst))
        return NULL;
    memset(&t->st[t->nst], 0, sizeof t->st[t->nst]);
    return &t->st[t->nst++];
}

/* ---- callbacks ---- */

static void on_header(void *ctx, const prism_header *h)
{
    trace *t = ctx;
    t->pid = h->pid;
    t->gpu_pid = h->pid + GPU_PID_OFFSET;
    t->started = true;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", t->f);
    const char *prog = h->argc && h->argv[0] ? h->argv[0] : "profiled process";
    const char *slash = strrchr(prog, '/');
    meta(t, "process_name", t->pid, NULL, "name", slash && slash[1] ? slash + 1 : prog, 0);
    if (h->host) {
        strbuf l;
        sb_init(&l);
        sb_puts(&l, "host ");
        sb_puts(&l, h->host);
        meta(t, "process_labels", t->pid, NULL, "labels", l.s, 0);
        sb_free(&l);
    }
    meta(t, "process_sort_index", t->pid, NULL, "sort_index", NULL, 0);
}

static void on_thread(void *ctx, const prism_thread *th)
{
    trace *t = ctx;
    uint64_t tid = th->stream;
    meta(t, "thread_name", t->pid, &tid, "name", th->name, 0);
    meta(t, "thread_sort_index", t->pid, &tid, "sort_index", NULL, th->stream);
}

static void end_event(trace *t, uint32_t stream, uint64_t ts)
{
    sep(t);
    fprintf(t->f, "{\"ph\":\"E\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu32, t->pid, stream);
    put_ts(t->f, "ts", ts);
    fputc('}', t->f);
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
        uint64_t ts = ev[0].ts;
        if (depth > s->open + s->phantom)
            s->phantom = depth - s->open;
        while (depth < s->open + s->phantom) {
            if (s->phantom) {
                s->phantom--;
            } else {
                end_event(t, stream, ts);
                s->open--;
                t->n.closed_at_end++;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t ts = ev[i].ts;
        note_ts(t, ts);
        s->last_ts = ts > s->last_ts ? ts : s->last_ts;
        if (ev[i].kind == PRISM_REGION_ENTER) {
            sep(t);
            fprintf(t->f, "{\"name\":");
            put_name(t, ev[i].name);
            fprintf(t->f, ",\"cat\":\"region\",\"ph\":\"B\",\"pid\":%" PRIu64 ",\"tid\":%"
                    PRIu32, t->pid, stream);
            put_ts(t->f, "ts", ts);
            fputc('}', t->f);
            s->open++;
            t->n.enters++;
        } else if (s->phantom) {
            s->phantom--;
            t->n.unmatched_exits++;
        } else if (s->open) {
            end_event(t, stream, ts);
            s->open--;
            t->n.exits++;
        } else {
            t->n.unmatched_exits++;
        }
    }
}

static void on_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    trace *t = ctx;
    for (size_t i = 0; i < n; i++) {
        note_ts(t, m[i].ts);
        sep(t);
        fputs("{\"name\":", t->f);
        put_name(t, m[i].name);
        fprintf(t->f, ",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu64
                ",\"tid\":%" PRIu32, t->pid, stream);
        put_ts(t->f, "ts", m[i].ts);
        fputc('}', t->f);
        t->n.marks++;
    }
}

static void on_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    trace *t = ctx;
    for (size_t i = 0; i < n; i++) {
        note_ts(t, c[i].ts);
        if (c[i].is_float && !isfinite(c[i].v.f)) {
            t->n.nonfinite_counters++;      /* JSON cannot hold it */
            continue;
        }
        sep(t);
        fputs("{\"name\":", t->f);
        put_name(t, c[i].name);
        fprintf(t->f, ",\"cat\":\"counter\",\"ph\":\"C\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu32,
                t->pid, stream);
        put_ts(t->f, "ts", c[i].ts);
        fputs(",\"args\":{\"value\":", t->f);
        if (c[i].is_float)
            json_put_double(t->f, c[i].v.f);
        else
            fprintf(t->f, "%" PRId64, c[i].v.i);
        fputs("}}", t->f);
        t->n.counters++;
    }
}

static void on_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    trace *t = ctx;
    uint64_t tid = STEPS_TID;
    (void)stream;
    if (n && !t->steps_named) {
        meta(t, "thread_name", t->pid, &tid, "name", "steps", 0);
        meta(t, "thread_sort_index", t->pid, &tid, "sort_index", NULL, -1);
        t->steps_named = true;
    }
    for (size_t i = 0; i < n; i++) {
        note_ts(t, s[i].end);
        sep(t);
        fprintf(t->f, "{\"name\":\"step %" PRIu64 "\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":%"
                PRIu64 ",\"tid\":%d", s[i].index, t->pid, STEPS_TID);
        put_ts(t->f, "ts", s[i].start);
        put_ts(t->f, "dur", s[i].end > s[i].start ? s[i].end - s[i].start : 0);
        fprintf(t->f, ",\"args\":{\"index\":%" PRIu64 ",\"epoch\":%" PRIu64
                ",\"sampled\":%s}}", s[i].index, s[i].epoch,
                (s[i].flags & PRISM_STEP_SAMPLED) ? "true" : "false");
        t->n.steps++;
    }
}

static void gpu_process(trace *t)
{
    if (t->gpu_named)
        return;
    t->gpu_named = true;
    meta(t, "process_name", t->gpu_pid, NULL, "name", "GPU", 0);
    meta(t, "process_sort_index", t->gpu_pid, NULL, "sort_index", NULL, 1);
}

static void on_memory(void *ctx, const prism_memory_sample *m)
{
    trace *t = ctx;
    note_ts(t, m->ts);
    sep(t);
    fprintf(t->f, "{\"name\":\"host RSS (MB)\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%" PRIu64,
            t->pid);
    put_ts(t->f, "ts", m->ts);
    fputs(",\"args\":{\"rss\":", t->f);
    json_put_double(t->f, bytes_mb((double)m->rss));
    fputs("}}", t->f);
    if (m->cpu_permille != PRISM_NO_CPU) {
        sep(t);
        fprintf(t->f, "{\"name\":\"process CPU (%%)\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%"
                PRIu64, t->pid);
        put_ts(t->f, "ts", m->ts);
        fprintf(t->f, ",\"args\":{\"cpu\":%.1f}}", m->cpu_permille / 10.0);
    }
    if (m->ngpu)
        gpu_process(t);
    for (uint32_t i = 0; i < m->ngpu && i < PRISM_MAX_GPUS; i++) {
        sep(t);
        fprintf(t->f, "{\"name\":\"GPU %" PRIu32 " memory (MB)\",\"cat\":\"memory\",\"ph\":\"C\","
                "\"pid\":%" PRIu64, m->gpu[i].device, t->gpu_pid);
        put_ts(t->f, "ts", m->ts);
        fputs(",\"args\":{\"used\":", t->f);
        json_put_double(t->f, bytes_mb((double)m->gpu[i].used));
        fputs(",\"reserved\":", t->f);
        json_put_double(t->f, bytes_mb((double)m->gpu[i].reserved));
        fputs("}}", t->f);
    }
    t->n.memory++;
}

/* The GPU track of a record, named the first time it is used. */
static uint64_t gpu_tid(trace *t, const prism_gpu_record *g)
{
    bool api = g->type == PRISM_GPU_API;
    uint64_t tid = api ? API_TID_BASE + (uint64_t)g->stream
                       : (uint64_t)g->device * 1000u + g->stream;
    if (imap_find(&t->gtrack, tid) || t->gtrack.count >= 65536 || !imap_put(&t->gtrack, tid, 0))
        return tid;
    char name[96];
    if (api)
        snprintf(name, sizeof name, "CUDA API (thread %" PRIu32 ")", g->stream);
    else
        snprintf(name, sizeof name, "GPU %" PRIu32 " stream %" PRIu32, g->device, g->stream);
    meta(t, "thread_name", t->gpu_pid, &tid, "name", name, 0);
    meta(t, "thread_sort_index", t->gpu_pid, &tid, "sort_index", NULL, (int64_t)(tid & 0x7fffffff));
    return tid;
}

static void gpu_args(trace *t, const prism_gpu_record *g)
{
    static const char *const syncs[] = { "unknown", "event", "stream wait event", "stream",
                                         "context" };
    FILE *f = t->f;
    fprintf(f, ",\"args\":{\"correlation\":%" PRIu64, g->correlation);
    switch (g->type) {
    case PRISM_GPU_KERNEL:
        fprintf(f, ",\"grid\":[%" PRIu32 ",%" PRIu32 ",%" PRIu32 "],\"block\":[%" PRIu32 ",%"
                PRIu32 ",%" PRIu32 "],\"shared_mem\":%" PRIu32 ",\"registers\":%" PRIu32,
                g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2],
                g->shared_mem, g->registers);
        break;
    case PRISM_GPU_MEMCPY:
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"src\":\"%s\",\"dst\":\"%s\"", g->bytes,
                report_mem_kind(g->src_kind), report_mem_kind(g->dst_kind));
        break;
    case PRISM_GPU_MEMSET:
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"dst\":\"%s\"", g->bytes, report_mem_kind(g->dst_kind));
        break;
    case PRISM_GPU_SYNC:
        fprintf(f, ",\"sync\":\"%s\"", syncs[g->sync_type < 5 ? g->sync_type : 0]);
        break;
    case PRISM_GPU_ALLOC:
    case PRISM_GPU_FREE:
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"address\":\"0x%" PRIx64 "\",\"kind\":\"%s\"",
                g->bytes, g->address, report_mem_kind(g->dst_kind));
        break;
    default:
        break;
    }
    fputs("}}", f);
}

static void on_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    static const char *const cats[] = { "gpu", "kernel", "memcpy", "memset", "sync",
                                        "cuda_api", "alloc", "free" };
    trace *t = ctx;
    if (n)
        gpu_process(t);
    for (size_t i = 0; i < n; i++) {
        const prism_gpu_record *r = &g[i];
        uint32_t type = r->type <= PRISM_GPU_TYPE_MAX ? r->type : 0;
        uint64_t tid = gpu_tid(t, r);
        note_ts(t, r->end > r->start ? r->end : r->start);
        sep(t);
        fputs("{\"name\":", t->f);
        if (type == PRISM_GPU_KERNEL || type == PRISM_GPU_API)
            put_name(t, r->name);
        else if (type == PRISM_GPU_MEMCPY)
            fprintf(t->f, "\"memcpy %s\"", report_copy_kind(r->copy_kind));
        else
            fprintf(t->f, "\"%s\"", cats[type]);
        fprintf(t->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64,
                cats[type], t->gpu_pid, tid);
        put_ts(t->f, "ts", r->start);
        put_ts(t->f, "dur", r->end > r->start ? r->end - r->start : 0);
        gpu_args(t, r);
        t->n.gpu++;
    }
}

static void on_dropped(void *ctx, const prism_dropped *d)
{
    trace *t = ctx;
    sep(t);
    fprintf(t->f, "{\"name\":\"dropped records\",\"cat\":\"dropped\",\"ph\":\"i\",\"s\":\"p\","
            "\"pid\":%" PRIu64 ",\"tid\":%" PRIu32, t->pid, d->stream);
    put_ts(t->f, "ts", t->last_ts);
    fprintf(t->f, ",\"args\":{\"source\":\"%s\",\"total\":%" PRIu64 "}}",
            d->source == PRISM_SOURCE_GPU ? "gpu" : "cpu", d->total);
    t->n.dropped++;
}

static void on_info(void *ctx, const char *key, const prism_value *v)
{
    trace *t = ctx;
    if (t->info.len > INFO_MAX_BYTES) {
        t->info_left_out++;
        return;
    }
    /* rendered through a memory stream so the escaping is the writer's */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        t->info_left_out++;
        return;
    }
    fputs(t->info.len ? ",{\"key\":" : "{\"key\":", m);
    put_str(m, key);
    fputs(",\"value\":", m);
    switch (v->type) {
    case PRISM_VAL_INT: fprintf(m, "%" PRId64, v->v.i); break;
    case PRISM_VAL_UINT: fprintf(m, "%" PRIu64, v->v.u); break;
    case PRISM_VAL_FLOAT: json_put_double(m, v->v.f); break;
    case PRISM_VAL_BOOL: fputs(v->v.b ? "true" : "false", m); break;
    case PRISM_VAL_TEXT: put_str(m, v->v.s ? v->v.s : ""); break;
    default: fputs("null", m); break;
    }
    fputc('}', m);
    if (fclose(m) == 0)
        sb_putn(&t->info, buf, len);
    free(buf);
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
    const prism_header *h = prism_reader_header(t->r);
    const prism_reader_stats *s = prism_reader_stats_get(t->r);
    FILE *f = t->f;
    for (size_t i = 0; i < t->st_of.cap; i++) {
        if (!t->st_of.keys[i])
            continue;
        tstream *st = &t->st[t->st_of.vals[i]];
        for (; st->open; st->open--) {
            end_event(t, (uint32_t)(t->st_of.keys[i] - 1), st->last_ts);
            t->n.closed_at_end++;
        }
    }
    fputs("\n],\n\"otherData\":{\"schema\":\"prism.trace/1\",\"file\":", f);
    put_str(f, path);
    if (h) {
        fputs(",\"producer\":", f);
        put_str(f, h->producer ? h->producer : "");
        fputs(",\"host\":", f);
        put_str(f, h->host ? h->host : "");
        fprintf(f, ",\"pid\":%" PRIu64 ",\"gpu_pid\":%" PRIu64 ",\"rank\":%" PRId64
                ",\"start_unix_ns\":%" PRIu64 ",\"argv\":[", h->pid, t->gpu_pid, h->rank,
                h->start_unix_ns);
        for (size_t i = 0; i < h->argc; i++) {
            if (i)
                fputc(',', f);
            put_str(f, h->argv[i] ? h->argv[i] : "");
        }
        fputc(']', f);
    }
    fprintf(f, ",\n\"info\":[%s]", t->info.s);
    if (t->have_footer)
        fprintf(f, ",\n\"footer\":{\"end_ns\":%" PRIu64 ",\"events\":%" PRIu64 ",\"dropped\":%"
                PRIu64 ",\"chunks\":%" PRIu64 ",\"clean\":%s}", t->footer.end_ts,
                t->footer.events, t->footer.dropped, t->footer.chunks,
                t->footer.clean ? "true" : "false");
    else
        fputs(",\n\"footer\":null", f);
    fprintf(f, ",\n\"reader\":{\"chunks\":%" PRIu64 ",\"records\":%" PRIu64 ",\"damaged_runs\":%"
            PRIu64 ",\"skipped_bytes\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"seq_gaps\":%"
            PRIu64 ",\"torn_bytes\":%" PRIu64 "}", s->chunks, s->records, s->damaged,
            s->skipped_bytes, s->malformed, s->seq_gaps, s->torn_bytes);
    fprintf(f, ",\n\"export\":{\"enters\":%" PRIu64 ",\"exits\":%" PRIu64
            ",\"unmatched_exits\":%" PRIu64 ",\"closed_regions\":%" PRIu64 ",\"marks\":%" PRIu64
            ",\"counters\":%" PRIu64 ",\"nonfinite_counters\":%" PRIu64 ",\"steps\":%" PRIu64
            ",\"memory_samples\":%" PRIu64 ",\"gpu_records\":%" PRIu64 ",\"info_left_out\":%"
            PRIu64 "}}}\n", t->n.enters, t->n.exits, t->n.unmatched_exits, t->n.closed_at_end,
            t->n.marks, t->n.counters, t->n.nonfinite_counters, t->n.steps, t->n.memory, t->n.gpu,
            t->info_left_out);
}

int export_chrome_trace_msg(const char *path, FILE *out, char *msg, size_t msglen,
                            uint64_t *offset)
{
    trace t = { .f = out };
    sb_init(&t.info);
    prism_reader_callbacks cb = {
        .header = on_header, .thread = on_thread, .regions = on_regions, .marks = on_marks,
        .counters = on_counters, .steps = on_steps, .memory = on_memory, .gpu = on_gpu,
        .dropped = on_dropped, .info = on_info, .footer = on_footer,
    };
    int rc = EXIT_OK;
    t.r = prism_reader_new(&cb, &t);
    if (!t.r) {
        snprintf(msg, msglen, "out of memory");
        *offset = 0;
        return EXIT_BADINPUT;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    prism_status st;
    if (fd < 0) {
        snprintf(msg, msglen, "cannot open: %s", strerror(errno));
        *offset = 0;
        rc = EXIT_BADINPUT;
    } else {
        st = prism_reader_read_fd(t.r, fd);
        close(fd);
        if (st == PRISM_OK || st == PRISM_NEED_MORE)
            st = prism_reader_finish(t.r);
        if (st != PRISM_OK || !t.started) {
            const char *m = prism_strerror(st);
            uint64_t off = 0;
            prism_reader_error(t.r, &m, &off);
            snprintf(msg, msglen, "%s", m);
            *offset = off;
            rc = EXIT_BADINPUT;
        } else if (t.oom || t.info.oom) {
            snprintf(msg, msglen, "out of memory");
            *offset = prism_reader_input_offset(t.r);
            rc = EXIT_BADINPUT;
        } else {
            epilogue(&t, path);
        }
    }
    imap_free(&t.st_of);
    imap_free(&t.gtrack);
    free(t.st);
    sb_free(&t.info);
    prism_reader_free(t.r);
    return rc;
}

int export_chrome_trace(const char *path, FILE *out)
{
    char msg[256];
    uint64_t off = 0;
    int rc = export_chrome_trace_msg(path, out, msg, sizeof msg, &off);
    if (rc != EXIT_OK)
        fprintf(stderr, "prism-top: %s: %s at byte %" PRIu64 "\n", path, msg, off);
    return rc;
}
