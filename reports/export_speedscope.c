/*
 * export_speedscope.c - `prism-top export --format speedscope`: the
 * profile's regions in speedscope's own file format
 * (https://www.speedscope.app/file-format-schema.json; the types are
 * specified in jlfwong/speedscope, src/lib/file-format-spec.ts).
 *
 *   shared.frames   one frame per region name (and "step", and
 *                   "(outside regions)": the training thread's time in
 *                   sampled steps that no root region holds, as the
 *                   analysis' node counts it; export_outside.c)
 *   profiles        one "evented" profile per thread, O/C events in
 *                   nanoseconds since the profile's time origin: the
 *                   training thread (as analyze finds it) first,
 *                   then "steps" (one frame per step), then every other
 *                   thread by stream; activeProfileIndex is the first
 *   name, exporter  the program's name, "prism-top@VERSION"
 *
 * Every profile shares one startValue and endValue (the first and last
 * time seen), so the threads line up.  Events are kept per thread in
 * memory until the file is read (16 bytes an event), then written.  An
 * exit whose enter was lost to damage is left out; regions still open at
 * the end are closed at their thread's last time; per thread, time never
 * goes back.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports.h"
#include "export_trace.h"
#include "jsonw.h"
#include "outbuf.h"
#include "array.h"             /* pb_qsort */

#define STEP_FRAME UINT32_MAX       /* the string id standing for "step" */
#define OUTSIDE_FRAME (UINT32_MAX - 1)      /* ... for "(outside regions)" */

typedef struct sevent {
    uint64_t at;
    uint32_t frame;
    uint32_t open;
} sevent;

typedef struct sthread {
    uint32_t stream;
    char *name;
    sevent *ev;
    size_t n, cap;
    uint32_t *stack;            /* open frames, outermost first */
    uint32_t depth, scap, phantom;
    uint64_t last;
} sthread;

typedef struct sscope {
    prism_reader *r;
    sthread *th;
    size_t nth, thcap;
    pb_map th_of;                 /* stream -> index into th */
    pb_map frame_of;              /* string id -> frame index */
    uint32_t *frames;           /* frame index -> string id */
    size_t nframes, fcap;
    uint32_t train;
    trace_first pass;           /* the training thread and its steps */
    trace_top top;
    bool complete;              /* footer seen */
    uint64_t first, last;
    bool any, oom;
    sthread steps;
} sscope;

static sthread *thread_of(sscope *s, uint32_t stream)
{
    uint64_t i;
    if (pb_map_get(&s->th_of, stream, &i))
        return &s->th[i];
    if (s->nth == s->thcap) {
        size_t cap = s->thcap ? s->thcap * 2 : 16;
        sthread *n = realloc(s->th, cap * sizeof *n);
        if (!n)
            return NULL;
        s->th = n;
        s->thcap = cap;
    }
    if (!pb_map_put(&s->th_of, stream, s->nth))
        return NULL;
    sthread *t = &s->th[s->nth++];
    memset(t, 0, sizeof *t);
    t->stream = stream;
    return t;
}

static uint32_t frame_index(sscope *s, uint32_t id)
{
    uint64_t i;
    if (pb_map_get(&s->frame_of, id, &i))
        return (uint32_t)i;
    if (s->nframes == s->fcap) {
        size_t cap = s->fcap ? s->fcap * 2 : 64;
        uint32_t *n = realloc(s->frames, cap * sizeof *n);
        if (!n) {
            s->oom = true;
            return 0;
        }
        s->frames = n;
        s->fcap = cap;
    }
    if (!pb_map_put(&s->frame_of, id, s->nframes)) {
        s->oom = true;
        return 0;
    }
    s->frames[s->nframes] = id;
    return (uint32_t)s->nframes++;
}

/* Append an O (open) or C event at (clamped to the thread's last time). */
static void add(sscope *s, sthread *t, uint64_t at, uint32_t frame, bool open)
{
    if (!open && !t->depth)             /* its open was lost (out of memory) */
        return;
    if (at < t->last)
        at = t->last;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        sevent *n = realloc(t->ev, cap * sizeof *n);
        if (!n) {
            s->oom = true;
            return;
        }
        t->ev = n;
        t->cap = cap;
    }
    if (open) {
        if (t->depth == t->scap) {
            uint32_t cap = t->scap ? t->scap * 2 : 16;
            uint32_t *n = cap > t->scap ? realloc(t->stack, cap * sizeof *n) : NULL;
            if (!n) {
                s->oom = true;
                return;
            }
            t->stack = n;
            t->scap = cap;
        }
        t->stack[t->depth++] = frame;
    } else {
        frame = t->stack[--t->depth];
    }
    t->ev[t->n++] = (sevent){ at, frame, open };
    t->last = at;
    if (!s->any || at < s->first)
        s->first = at;
    if (at > s->last)
        s->last = at;
    s->any = true;
}

/* A piece of the training thread's time outside regions. */
static void outside_piece(void *ctx, uint64_t a, uint64_t z)
{
    sscope *s = ctx;
    sthread *t = thread_of(s, s->train);
    if (!t) {
        s->oom = true;
        return;
    }
    add(s, t, a, frame_index(s, OUTSIDE_FRAME), true);
    add(s, t, z, 0, false);
}

static bool at_top(const sscope *s, const sthread *t)
{
    return t->stream == s->train && !t->depth && !t->phantom;
}

/* ---- callbacks ---- */

static void on_thread(void *ctx, const prism_thread *th)
{
    sscope *s = ctx;
    sthread *t = thread_of(s, th->stream);
    if (!t) {
        s->oom = true;
        return;
    }
    free(t->name);
    t->name = strdup(th->name ? th->name : "");
    if (!t->name)
        s->oom = true;
}

static void on_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    sscope *s = ctx;
    sthread *t = thread_of(s, stream);
    if (!t) {
        s->oom = true;
        return;
    }
    if (n) {
        /* reconcile with the writer's depth: frames lost to damage */
        if (depth > t->depth + t->phantom) {
            if (at_top(s, t))
                trace_top_enter(&s->pass, &s->top, ev[0].ts, outside_piece, s);
            t->phantom = depth - t->depth;
        }
        while (depth < t->depth + t->phantom && !s->oom) {
            if (t->phantom)
                t->phantom--;
            else
                add(s, t, ev[0].ts, 0, false);
            if (at_top(s, t))
                s->top.idle = ev[0].ts;
        }
    }
    for (size_t i = 0; i < n && !s->oom; i++) {
        if (ev[i].kind == PRISM_REGION_ENTER) {
            if (at_top(s, t))
                trace_top_enter(&s->pass, &s->top, ev[i].ts, outside_piece, s);
            add(s, t, ev[i].ts, frame_index(s, ev[i].name), true);
        } else if (t->phantom || t->depth) {
            if (t->phantom)
                t->phantom--;
            else
                add(s, t, ev[i].ts, 0, false);
            if (at_top(s, t))
                s->top.idle = ev[i].ts;
        }
    }
}

static void on_footer(void *ctx, const prism_footer *f)
{
    (void)f;
    ((sscope *)ctx)->complete = true;
}

static void on_steps(void *ctx, uint32_t stream, const prism_step *st, size_t n)
{
    sscope *s = ctx;
    (void)stream;
    uint32_t f = n ? frame_index(s, STEP_FRAME) : 0;
    for (size_t i = 0; i < n && !s->oom; i++) {
        /* a step that begins before the last one ended starts at its end */
        add(s, &s->steps, st[i].start, f, true);
        add(s, &s->steps, st[i].end, f, false);
    }
}

/* ---- writing ---- */

static void put_str(FILE *f, const char *s) { pb_json_put_string(f, s, strlen(s)); }

static void write_profile(sscope *s, FILE *f, sthread *t, const char *name, bool first)
{
    while (t->depth && !s->oom)         /* a writer that died: close at the end */
        add(s, t, t->last, 0, false);
    fputs(first ? "\n{\"type\":\"evented\",\"name\":" : ",\n{\"type\":\"evented\",\"name\":", f);
    put_str(f, name);
    fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64
            ",\"events\":[", s->first, s->last);
    ob o;                               /* the events: no printf per event */
    if (!ob_open(&o, f)) {
        s->oom = true;
        return;
    }
    for (size_t i = 0; i < t->n; i++) {
        char *p = ob_room(&o, 32 + 2 * OB_NUM_MAX), *q = p;
        if (i)
            *q++ = ',';
        memcpy(q, t->ev[i].open ? "{\"type\":\"O\",\"frame\":" : "{\"type\":\"C\",\"frame\":", 20);
        q = ob_fmt_u64(q + 20, t->ev[i].frame);
        memcpy(q, ",\"at\":", 6);
        q = ob_fmt_u64(q + 6, t->ev[i].at);
        *q++ = '}';
        o.len += (size_t)(q - p);
    }
    ob_close(&o);
    fputs("]}", f);
}

static int by_stream(const void *a, const void *b)
{
    uint32_t x = ((const sthread *)a)->stream, y = ((const sthread *)b)->stream;
    return x < y ? -1 : x > y;
}

static void write_file(sscope *s, FILE *f)
{
    const prism_header *h = prism_reader_header(s->r);
    const char *prog = h && h->argc && h->argv[0] ? h->argv[0] : "profile";
    const char *slash = strrchr(prog, '/');
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"name\":", f);
    put_str(f, slash && slash[1] ? slash + 1 : prog);
    fputs(",\n\"exporter\":\"prism-top@" PRISM_VERSION_STRING "\",\n"
          "\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[", f);
    for (size_t i = 0; i < s->nframes; i++) {
        size_t len;
        bool ours = s->frames[i] == STEP_FRAME || s->frames[i] == OUTSIDE_FRAME;
        const char *n = s->frames[i] == STEP_FRAME      ? "step"
                      : s->frames[i] == OUTSIDE_FRAME ? TRACE_OUTSIDE_NAME
                                                      : prism_reader_string(s->r, s->frames[i], &len);
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
        if (!n)
            fprintf(f, "\"<string %" PRIu32 ">\"", s->frames[i]);
        else if (ours)
            put_str(f, n);
        else
            pb_json_put_string(f, n, len);
        fputc('}', f);
    }
    fputs("]},\n\"profiles\":[", f);
    uint32_t train = s->train;
    pb_qsort(s->th, s->nth, sizeof *s->th, by_stream);    /* th_of is stale from here */
    bool first = true;
    char name[64];
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) {
            if (s->steps.n) {
                write_profile(s, f, &s->steps, "steps", first);
                first = false;
            }
            continue;
        }
        for (size_t i = 0; i < s->nth; i++) {
            sthread *t = &s->th[i];
            if ((pass == 0) != (t->stream == train) || (!t->n && !t->depth))
                continue;
            snprintf(name, sizeof name, "thread %" PRIu32, t->stream);
            write_profile(s, f, t, t->name && t->name[0] ? t->name : name, first);
            first = false;
        }
    }
    fputs("\n]}\n", f);
}

int export_speedscope_scoped(const char *path, const rp_export_scope *scope, FILE *out)
{
    ex_scan scan;
    ex_scope sc;
    ex_scan_file_train(path, &scan);
    if (!ex_scope_resolve(path, scope, &scan, &sc)) {
        ex_scan_free(&scan);
        return EXIT_BADINPUT;
    }
    sscope s = { 0 };
    trace_first_pass(path, &scan, &sc, &s.pass);
    ex_scan_free(&scan);
    s.train = s.pass.train;
    prism_reader_callbacks cb = {
        .thread = on_thread, .regions = on_regions, .steps = on_steps, .footer = on_footer,
    }, outer;
    ex_filter *filter = sc.active ? ex_filter_new(&sc, &cb, &s, &outer) : NULL;
    prism_status st = sc.active && !filter ? PRISM_E_NOMEM
                    : filter ? prism_read_file(path, &outer, filter, &s.r)
                             : prism_read_file(path, &cb, &s, &s.r);
    s.oom |= ex_filter_oom(filter);
    ex_filter_free(filter);
    uint64_t k;
    /* a complete file: the training thread's time after its last region */
    if (st == PRISM_OK && s.complete && !s.oom && pb_map_get(&s.th_of, s.train, &k) &&
        at_top(&s, &s.th[k]))
        trace_top_end(&s.pass, &s.top, outside_piece, &s);
    int rc = EXIT_OK;
    if (st != PRISM_OK || !s.r || !prism_reader_header(s.r)) {
        const char *m = prism_strerror(st);
        uint64_t off = 0;
        if (s.r)
            prism_reader_error(s.r, &m, &off);
        report_error(path, st, m, off);
        rc = EXIT_BADINPUT;
    } else if (s.oom) {
        fprintf(stderr, "prism-top: %s: out of memory while exporting\n", path);
        rc = EXIT_BADINPUT;
    } else {
        write_file(&s, out);
        if (s.oom) {
            fprintf(stderr, "prism-top: %s: out of memory while exporting\n", path);
            rc = EXIT_BADINPUT;
        }
    }
    for (size_t i = 0; i < s.nth; i++) {
        free(s.th[i].name);
        free(s.th[i].ev);
        free(s.th[i].stack);
    }
    free(s.th);
    free(s.steps.ev);
    free(s.steps.stack);
    free(s.frames);
    trace_first_free(&s.pass);
    ex_scope_free(&sc);
    pb_map_free(&s.th_of);
    pb_map_free(&s.frame_of);
    prism_reader_free(s.r);
    return rc;
}

int export_speedscope(const char *path, FILE *out)
{
    return export_speedscope_scoped(path, NULL, out);
}

static int write_speedscope(FILE *out, const rp_export_in *in)
{
    return export_speedscope_scoped(in->path, in->scope, out);
}

const rp_export_format rp_export_speedscope = {
    "speedscope", NULL,
    "the regions of every thread in speedscope's format\n"
    "                         (www.speedscope.app), the training thread first\n",
    true, false, write_speedscope,
};
