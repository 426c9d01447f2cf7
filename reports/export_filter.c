/*
 * export_filter.c - the filter between a reader and an export's callbacks
 * (see export_scope.h for what it keeps).
 *
 * Regions are the part with state.  Per thread, a stack of the regions
 * open in the file; a region's enter is passed on only once it is known to
 * be kept: when the thread's time (the next event's) has reached the
 * window and its duration so far, from its start cut to the window,
 * reaches --min-duration.  A region that ends before that is dropped, and
 * with it every region it holds (they were shorter still, so none was
 * passed on).  The regions passed on are thus always the bottom of the
 * stack; their exits are passed on as they come, and when the thread's
 * time reaches the window's end they are all closed there and the thread
 * is done.  The depth given with each batch is the number passed on and
 * still open: an export sees a balanced stream.  Frames the file lost to
 * damage are reconciled here, as the exports do: an exit of a frame never
 * begun is dropped, regions whose exits were lost end at the next batch.
 * Per thread, time never goes back.
 */
#include <stdlib.h>
#include <string.h>

#include "export_scope.h"

typedef struct fframe {
    uint64_t start;             /* cut to the window's start                 */
    uint32_t name;
    bool cut;                   /* began before the window                   */
} fframe;

typedef struct fthread {
    fframe *fr;
    uint32_t n, cap;            /* open in the file                          */
    uint32_t out;               /* the bottom `out` of them passed on        */
    uint32_t phantom;           /* open in the file, never seen begun        */
    uint64_t last;
    bool done;                  /* past the window's end                     */
} fthread;

struct ex_filter {
    const ex_scope *sc;
    prism_reader_callbacks in;
    void *ctx;
    pb_map th_of;               /* stream -> index into th                   */
    fthread *th;
    size_t nth, thcap;
    prism_region_event *ev;     /* the batch passed on                       */
    size_t nev, evcap;
    void *copy;                 /* the other batches' kept records           */
    size_t copycap;
    bool lean;                  /* ex_filter_lean                            */
    bool oom;
};

#define F_OF(ctx) ((ex_filter *)(ctx))

/* Without --steps every time is in (UINT64_MAX too: a hostile file's). */
static bool in_window(const ex_scope *sc, uint64_t ts)
{
    return !sc->steps || (ts >= sc->w0 && ts < sc->w1);
}

static bool past_window(const ex_scope *sc, uint64_t ts)
{
    return sc->steps && ts >= sc->w1;
}

/* Room for n records of size bytes in f->copy. */
static void *copy_room(ex_filter *f, size_t n, size_t size)
{
    if (!pb_vec_reserve(&f->copy, &f->copycap, n * size, 1)) {
        f->oom = true;
        return NULL;
    }
    return f->copy;
}

/* ---- regions ---- */

static fthread *thread_of(ex_filter *f, uint32_t stream)
{
    uint64_t i;
    if (pb_map_get(&f->th_of, stream, &i))
        return &f->th[i];
    if (!pb_vec_reserve((void **)&f->th, &f->thcap, f->nth + 1, sizeof *f->th) ||
        !pb_map_put(&f->th_of, stream, f->nth)) {
        f->oom = true;
        return NULL;
    }
    memset(&f->th[f->nth], 0, sizeof f->th[f->nth]);
    return &f->th[f->nth++];
}

static void emit(ex_filter *f, uint64_t ts, uint32_t name, uint32_t kind)
{
    if (f->nev == f->evcap &&
        !pb_vec_reserve((void **)&f->ev, &f->evcap, f->nev + 1, sizeof *f->ev)) {
        f->oom = true;
        return;
    }
    f->ev[f->nev++] = (prism_region_event){ ts, name, kind };
}

/* The thread's time is ts: the regions not yet passed on whose duration,
 * cut to the window, has reached the minimum are, outermost first. */
static void decide(ex_filter *f, fthread *t, uint64_t ts)
{
    const ex_scope *sc = f->sc;
    if (ts < sc->w0)
        return;
    while (t->out < t->n) {
        const fframe *fr = &t->fr[t->out];
        uint64_t need = sc->min_ns ? sc->min_ns : fr->cut;     /* a cut one must reach in */
        if (ts - fr->start < need)
            return;
        emit(f, fr->start, fr->name, PRISM_REGION_ENTER);
        t->out++;
    }
}

/* The innermost open region ends at ts: passed on if its enter was. */
static void end_frame(ex_filter *f, fthread *t, uint64_t ts)
{
    if (t->out == t->n--) {
        t->out--;
        emit(f, ts, 0, PRISM_REGION_EXIT);
    }
}

static bool push(ex_filter *f, fthread *t, uint64_t ts, uint32_t name)
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        fframe *n = cap > t->cap ? realloc(t->fr, cap * sizeof *n) : NULL;
        if (!n) {
            f->oom = true;
            return false;
        }
        t->fr = n;
        t->cap = cap;
    }
    bool cut = ts < f->sc->w0;
    t->fr[t->n++] = (fframe){ cut ? f->sc->w0 : ts, name, cut };
    return true;
}

/* The thread's time reached the window's end: what is open ends there. */
static void close_window(ex_filter *f, fthread *t)
{
    uint64_t w1 = f->sc->w1;
    decide(f, t, w1);
    while (t->n)
        end_frame(f, t, w1);
    t->done = true;
}

static void f_regions(void *ctx, uint32_t stream, uint32_t depth,
                      const prism_region_event *ev, size_t n)
{
    ex_filter *f = F_OF(ctx);
    if (!f->sc->active) {               /* everything (a lean first pass) */
        if (f->in.regions)
            f->in.regions(f->ctx, stream, depth, ev, n);
        return;
    }
    if (!ex_scope_thread(f->sc, stream))
        return;
    fthread *t = thread_of(f, stream);
    if (!t || t->done || !n)
        return;
    f->nev = 0;
    uint32_t depth0 = t->out;
    uint64_t ts0 = ev[0].ts > t->last ? ev[0].ts : t->last;
    if (past_window(f->sc, ts0)) {
        close_window(f, t);
    } else {
        /* reconcile with the writer's depth: frames lost to damage */
        if (depth > t->n + t->phantom)
            t->phantom = depth - t->n;
        decide(f, t, ts0);
        while (depth < t->n + t->phantom) {
            if (t->phantom)
                t->phantom--;
            else
                end_frame(f, t, ts0);
        }
    }
    for (size_t i = 0; i < n && !t->done; i++) {
        uint64_t ts = ev[i].ts > t->last ? ev[i].ts : t->last;
        t->last = ts;
        if (past_window(f->sc, ts)) {
            close_window(f, t);
            break;
        }
        decide(f, t, ts);
        if (ev[i].kind == PRISM_REGION_ENTER) {
            if (!push(f, t, ts, ev[i].name))
                break;
            decide(f, t, ts);
        } else if (t->phantom) {
            t->phantom--;
        } else if (t->n) {
            end_frame(f, t, ts);
        }
    }
    if (f->nev && f->in.regions)
        f->in.regions(f->ctx, stream, depth0, f->ev, f->nev);
}

/* ---- records kept whole or not at all ---- */

static void f_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    ex_filter *f = F_OF(ctx);
    prism_mark *k;
    if (!f->in.marks || !ex_scope_thread(f->sc, stream) || !(k = copy_room(f, n, sizeof *k)))
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (in_window(f->sc, m[i].ts))
            k[j++] = m[i];
    if (j)
        f->in.marks(f->ctx, stream, k, j);
}

static void f_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    ex_filter *f = F_OF(ctx);
    prism_counter *k;
    if (!f->in.counters || !ex_scope_thread(f->sc, stream) || !(k = copy_room(f, n, sizeof *k)))
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (in_window(f->sc, c[i].ts))
            k[j++] = c[i];
    if (j)
        f->in.counters(f->ctx, stream, k, j);
}

static void f_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    ex_filter *f = F_OF(ctx);
    prism_step *k;
    if (!f->in.steps || !(k = copy_room(f, n, sizeof *k)))
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (!f->sc->steps || (s[i].index >= f->sc->first && s[i].index <= f->sc->last))
            k[j++] = s[i];
    if (j)
        f->in.steps(f->ctx, stream, k, j);
}

static void f_memory(void *ctx, const prism_memory_sample *m)
{
    ex_filter *f = F_OF(ctx);
    if (f->in.memory && in_window(f->sc, m->ts))
        f->in.memory(f->ctx, m);
}

/* GPU spans: cut to the window, then as long as the minimum; a CUDA API
 * call only on a thread kept. */
static void f_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    ex_filter *f = F_OF(ctx);
    const ex_scope *sc = f->sc;
    prism_gpu_record *k;
    if (!f->in.gpu || !(k = copy_room(f, n, sizeof *k)))
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = g[i].start, z = g[i].end > g[i].start ? g[i].end : g[i].start;
        if (g[i].type == PRISM_GPU_API && !ex_scope_thread(sc, g[i].stream))
            continue;
        if (sc->steps) {
            if (a >= sc->w1 || z < sc->w0 || (z == sc->w0 && z > a))
                continue;
            a = a > sc->w0 ? a : sc->w0;
            z = z < sc->w1 ? z : sc->w1;
        }
        if (z - a < sc->min_ns)
            continue;
        k[j] = g[i];
        k[j].start = a;
        k[j].end = z;
        j++;
    }
    if (j)
        f->in.gpu(f->ctx, k, j);
}

static void f_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    ex_filter *f = F_OF(ctx);
    prism_cpu_sample *k;
    if (!f->in.cpu || !(k = copy_room(f, n, sizeof *k)))
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (ex_scope_thread(f->sc, s[i].stream) &&
            (!f->sc->steps || (s[i].ts >= f->sc->w0 && s[i].ts <= f->sc->w1)))
            k[j++] = s[i];
    if (j)
        f->in.cpu(f->ctx, k, j);
}

static void f_stacks(void *ctx, const prism_stack_sample *s, size_t n)
{
    ex_filter *f = F_OF(ctx);
    prism_stack_sample *k;
    if (!f->in.stacks || !(k = copy_room(f, n, sizeof *k)))
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (ex_scope_thread(f->sc, s[i].stream) && in_window(f->sc, s[i].ts))
            k[j++] = s[i];
    if (j)
        f->in.stacks(f->ctx, k, j);
}

static void f_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    ex_filter *f = F_OF(ctx);
    prism_unrecorded *k;
    if (!f->in.unrecorded || !ex_scope_thread(f->sc, stream) || !(k = copy_room(f, n, sizeof *k)))
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (in_window(f->sc, u[i].ts))
            k[j++] = u[i];
    if (j)
        f->in.unrecorded(f->ctx, stream, k, j);
}

static void f_thread(void *ctx, const prism_thread *t)
{
    ex_filter *f = F_OF(ctx);
    if (f->in.thread && ex_scope_thread(f->sc, t->stream))
        f->in.thread(f->ctx, t);
}

static void f_dropped(void *ctx, const prism_dropped *d)
{
    ex_filter *f = F_OF(ctx);
    if (f->in.dropped && ex_scope_thread(f->sc, d->stream))
        f->in.dropped(f->ctx, d);
}

/* INFO steps.thread names the thread that marks the steps: not when that
 * thread is left out (the exports then find a training thread, if any,
 * among those kept, as the analysis would in a file of only those). */
static void f_info(void *ctx, const char *key, const prism_value *v)
{
    ex_filter *f = F_OF(ctx);
    if (!f->in.info)
        return;
    bool steps = !strcmp(key, "steps.thread");
    if ((steps && v->type == PRISM_VAL_UINT && v->v.u < UINT32_MAX &&
         !ex_scope_thread(f->sc, (uint32_t)v->v.u)) || (f->lean && !steps))
        return;
    f->in.info(f->ctx, key, v);
}

/* ---- passed through ---- */

static void f_header(void *ctx, const prism_header *h)
{
    ex_filter *f = F_OF(ctx);
    if (f->in.header)
        f->in.header(f->ctx, h);
}

static void f_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    ex_filter *f = F_OF(ctx);
    if (f->in.string)
        f->in.string(f->ctx, id, s, len);
}

static void f_footer(void *ctx, const prism_footer *ft)
{
    ex_filter *f = F_OF(ctx);
    if (f->in.footer)
        f->in.footer(f->ctx, ft);
}

static void f_chunk(void *ctx, const prism_chunk_info *c)
{
    ex_filter *f = F_OF(ctx);
    if (f->in.chunk)
        f->in.chunk(f->ctx, c);
}

/* ---- lifecycle ---- */

ex_filter *ex_filter_new(const ex_scope *sc, const prism_reader_callbacks *inner, void *ctx,
                         prism_reader_callbacks *outer)
{
    ex_filter *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->sc = sc;
    f->in = *inner;
    f->ctx = ctx;
    *outer = (prism_reader_callbacks){
        .header = f_header, .string = f_string, .thread = f_thread, .regions = f_regions,
        .marks = f_marks, .counters = f_counters, .steps = f_steps, .memory = f_memory,
        .gpu = f_gpu, .dropped = f_dropped, .info = f_info, .footer = f_footer, .cpu = f_cpu,
        .chunk = f_chunk, .unrecorded = f_unrecorded, .stacks = f_stacks,
    };
    return f;
}

void ex_filter_lean(ex_filter *f, prism_reader_callbacks *outer)
{
    f->lean = true;
    outer->marks = NULL;
    outer->counters = NULL;
    outer->memory = NULL;
    outer->gpu = NULL;
    outer->dropped = NULL;
    outer->cpu = NULL;
    outer->unrecorded = NULL;
    outer->stacks = NULL;
}

bool ex_filter_oom(const ex_filter *f)
{
    return f && f->oom;
}

void ex_filter_free(ex_filter *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nth; i++)
        free(f->th[i].fr);
    free(f->th);
    pb_map_free(&f->th_of);
    free(f->ev);
    free(f->copy);
    free(f);
}
