/*
 * timeline.c - the spans of one window of a profile, per lane
 * (prism/timeline.h).
 *
 * One pass of the reader over the file rebuilds the regions of every
 * thread from their enter/exit events, as the exports do (a stack per
 * thread, reconciled with the writer's depth at each chunk: frames lost to
 * damage are unknown, frames the writer closed are closed), and keeps the
 * spans that overlap the window.  GPU kernels, copies and memsets are spans
 * of their device/stream lane.  A lane past its cap is compacted
 * (timeline_lanes.c), so memory stays bounded whatever the file holds.
 *
 * A PRISM profile is not read whole for every window: an index of its
 * chunks (timeline_index.c, built once, read on as the file grows) gives
 * each thread's stack at the start of each chunk, so a window reads only
 * the chunks it needs.  Foreign files are read whole each time.  The
 * worker files of the profile's session follow it, each read the same
 * way (timeline_workers.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "ropen.h"
#include "timeline_internal.h"

prism_timeline *prism_timeline_new(size_t cap)
{
    prism_timeline *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = cap ? cap : PRISM_TIMELINE_CAP;
    if (t->cap < 64)
        t->cap = 64;
    t->use_index = true;
    t->ostream = UINT32_MAX;
    t->cix = &t->ix;
    return t;
}

static void clear_scratch(prism_timeline *t)
{
    an_tl_stacks_free(&t->st);
    pb_map_free(&t->names);
    pb_map_free(&t->tnames);
}

void prism_timeline_use_index(prism_timeline *t, bool on)
{
    if (t) {
        t->use_index = on;
        t->valid = false;
    }
}

void prism_timeline_free(prism_timeline *t)
{
    if (!t)
        return;
    an_tl_clear_lanes(t);
    clear_scratch(t);
    an_tl_index_free(&t->ix);
    an_tl_workers_free(t);
    free(t->lanes);
    free(t->pool);
    free(t->path);
    free(t->osteps);
    free(t);
}

size_t prism_timeline_lane_count(const prism_timeline *t) { return t ? t->nlanes : 0; }

const prism_lane *prism_timeline_lane(const prism_timeline *t, size_t i)
{
    return t && i < t->nlanes ? &t->lanes[i].pub : NULL;
}

size_t prism_timeline_lanes_left_out(const prism_timeline *t) { return t ? t->left_out : 0; }
uint64_t prism_timeline_reads(const prism_timeline *t) { return t ? t->reads : 0; }
uint64_t prism_timeline_bytes_read(const prism_timeline *t) { return t ? t->bytes : 0; }

prism_status prism_timeline_set_training(prism_timeline *t, uint32_t stream,
                                        const prism_step *steps, size_t n)
{
    if (!t || (!steps && n))
        return PRISM_E_ARG;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (steps[i].flags & PRISM_STEP_SAMPLED) != 0;
    if (stream == UINT32_MAX)
        k = 0;
    if (k && !pb_vec_reserve((void **)&t->osteps, &t->oscap, k, sizeof *t->osteps))
        return PRISM_E_NOMEM;
    bool same = stream == t->ostream && k == t->nosteps;
    for (size_t i = 0, o = 0; o < k; i++) {
        if (!(steps[i].flags & PRISM_STEP_SAMPLED))
            continue;
        same = same && t->osteps[o].start == steps[i].start && t->osteps[o].end == steps[i].end;
        t->osteps[o++] = steps[i];
    }
    if (!same || (!k && t->nosteps))
        t->valid = false;
    t->ostream = k ? stream : UINT32_MAX;
    t->nosteps = k;
    return PRISM_OK;
}

/* ---- threads ---- */

tstack *an_tl_stack_of(tl_stacks *ss, uint32_t stream)
{
    uint64_t i;
    if (pb_map_get(&ss->of, stream, &i))
        return ss->v[i];
    tstack *s = calloc(1, sizeof *s);
    if (!s || !pb_vec_reserve((void **)&ss->v, &ss->cap, ss->n + 1, sizeof *ss->v) ||
        !pb_map_put(&ss->of, stream, ss->n)) {
        free(s);
        return NULL;
    }
    s->stream = stream;
    ss->v[ss->n++] = s;
    return s;
}

void an_tl_stacks_free(tl_stacks *ss)
{
    for (size_t i = 0; i < ss->n; i++)
        free(ss->v[i]);
    free(ss->v);
    pb_map_free(&ss->of);
    memset(ss, 0, sizeof *ss);
}

static lane *thread_lane(prism_timeline *t, uint32_t stream)
{
    return an_tl_lane_for(t, PRISM_LANE_THREAD, 0, stream);
}

/* [lo, hi) of the training thread held no root region: its pieces inside
 * the sampled steps that overlap the window become spans. */
static void outside(prism_timeline *t, uint64_t lo, uint64_t hi)
{
    for (size_t i = t->ow0; i < t->ow1; i++) {
        const prism_step *p = &t->osteps[i];
        uint64_t b = p->start > lo ? p->start : lo, e = p->end < hi ? p->end : hi;
        if (e <= b || e <= t->t0 || b >= t->t1)
            continue;
        if (!t->oname) {
            uint64_t off;
            if (!an_tl_pool_add(t, AN_OUTSIDE_NAME, strlen(AN_OUTSIDE_NAME), &off)) {
                t->oom = true;
                return;
            }
            t->oname = off + 1;
        }
        static uint64_t hash;
        if (!hash)
            hash = XXH3_64bits_withSeed(AN_OUTSIDE_NAME, strlen(AN_OUTSIDE_NAME), 0);
        prism_span *s = an_tl_add_span(t, thread_lane(t, t->ostream), b, e, t->oname, hash, 0, false);
        if (s)
            s->outside = true;
    }
}

/* The thread's top level was entered at ts (a root region, or frames the
 * writer's depth says are open): the time since it was left is outside
 * regions. */
static void top_enter(prism_timeline *t, const tstack *s, uint64_t ts, bool emit,
                      uint64_t *root_enter)
{
    if (root_enter && *root_enter == UINT64_MAX)
        *root_enter = ts;
    if (emit && s->stream == t->ostream && t->ow1 > t->ow0 && ts > s->idle)
        outside(t, s->idle, ts);
}

/* Close the innermost frame at ts. */
static void pop(prism_timeline *t, tstack *s, uint64_t ts, bool open)
{
    tframe *f = &s->f[--s->open];
    if (ts < t->t0 || f->ts > t->t1)
        return;
    uint64_t ref = f->name ? an_tl_name_off(t, f->name) : UINT64_MAX;
    an_tl_add_span(t, thread_lane(t, s->stream), f->ts, ts, ref == UINT64_MAX ? 0 : ref + 1,
             f->hash, s->open, open);
}

static void on_thread(void *ctx, const prism_thread *th)
{
    prism_timeline *t = ctx;
    uint64_t off;
    const char *nm = th->name ? th->name : "";
    if (!an_tl_pool_add(t, nm, strlen(nm), &off) || !pb_map_put(&t->tnames, th->stream, off))
        t->oom = true;
}

void an_tl_regions(prism_timeline *t, tstack *s, uint32_t depth, const prism_region_event *ev,
                size_t n, bool emit, uint32_t *mindepth, uint64_t *root_enter)
{
    if (!n)
        return;
    /* reconcile with the writer's depth: frames lost to damage are
     * unknown (phantom), frames the writer closed meanwhile are closed */
    bool top = s->open + s->phantom == 0;
    if (depth > s->open + s->phantom) {
        if (top)
            top_enter(t, s, ev[0].ts, emit, root_enter);
        s->phantom = depth - s->open;
    }
    while (depth < s->open + s->phantom) {
        if (s->phantom)
            s->phantom--;
        else if (emit)
            pop(t, s, ev[0].ts, false);
        else
            s->open--;
        if (s->open + s->phantom == 0)
            s->idle = ev[0].ts;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t ts = ev[i].ts;
        if (ts > s->last_ts)
            s->last_ts = ts;
        if (mindepth && s->open + s->phantom < *mindepth)
            *mindepth = s->open + s->phantom;
        if (ev[i].kind == PRISM_REGION_ENTER) {
            if (s->open + s->phantom == 0)
                top_enter(t, s, ts, emit, root_enter);
            if (s->phantom || s->open >= MAX_STACK) {
                s->phantom++;       /* below an unknown frame: no path */
                continue;
            }
            tframe *f = &s->f[s->open];
            const char *nm = an_tl_name_text(t, ev[i].name);
            uint64_t parent = s->open ? s->f[s->open - 1].hash : 0;
            f->ts = ts;
            f->name = ev[i].name;
            f->hash = XXH3_64bits_withSeed(nm, strlen(nm), parent);
            s->open++;
        } else if (s->phantom || s->open) {
            if (s->phantom)
                s->phantom--;
            else if (emit)
                pop(t, s, ts, false);
            else
                s->open--;
            if (s->open + s->phantom == 0)
                s->idle = ts;
        }
    }
    if (mindepth && s->open + s->phantom < *mindepth)
        *mindepth = s->open + s->phantom;
}

static void on_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    prism_timeline *t = ctx;
    tstack *s = an_tl_stack_of(&t->st, stream);
    if (!s) {
        t->oom = true;
        return;
    }
    an_tl_regions(t, s, depth, ev, n, true, NULL, NULL);
}

/* ---- GPU ---- */

static void on_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    static const char *const what[] = { [PRISM_GPU_MEMCPY] = "memcpy",
                                        [PRISM_GPU_MEMSET] = "memset" };
    prism_timeline *t = ctx;
    if (t->cw)
        return;                         /* a worker's GPU work stays its own */
    for (size_t i = 0; i < n; i++) {
        const prism_gpu_record *r = &g[i];
        if (r->type != PRISM_GPU_KERNEL && r->type != PRISM_GPU_MEMCPY &&
            r->type != PRISM_GPU_MEMSET)
            continue;
        uint64_t end = r->end > r->start ? r->end : r->start;
        if (end < t->t0 || r->start > t->t1)
            continue;
        uint64_t ref;
        if (r->type == PRISM_GPU_KERNEL) {
            ref = an_tl_name_off(t, r->name);
        } else {
            uint64_t key = (UINT64_C(1) << 40) | r->type;   /* no string id is this large */
            if (!pb_map_get(&t->names, key, &ref)) {
                const char *s = what[r->type];
                if (!an_tl_pool_add(t, s, strlen(s), &ref) || !pb_map_put(&t->names, key, ref)) {
                    t->oom = true;
                    continue;
                }
            }
        }
        an_tl_add_span(t, an_tl_lane_for(t, PRISM_LANE_GPU, r->device, r->stream), r->start, end,
                 ref == UINT64_MAX ? 0 : ref + 1, 0, 0, false);
    }
}

/* ---- finishing a load ---- */

void an_tl_file_done(prism_timeline *t, size_t from)
{
    /* the training thread's time after its last root region read, to the
     * next one (or the steps' end) */
    uint64_t at;
    if (!t->cw && t->ow1 > t->ow0) {
        if (!pb_map_get(&t->st.of, t->ostream, &at))
            outside(t, 0, t->onext);        /* no region of it before the window */
        else if (t->st.v[at]->open + t->st.v[at]->phantom == 0)
            outside(t, t->st.v[at]->idle, t->onext);
    }
    /* regions still open at the end close at their thread's last time */
    for (size_t i = 0; i < t->st.n; i++) {
        tstack *s = t->st.v[i];
        uint64_t last = s->last_ts;
        if (t->use_index && an_tl_index_last_ts(t->cix, s->stream) > last)
            last = an_tl_index_last_ts(t->cix, s->stream);
        while (s->open)
            pop(t, s, last > s->f[s->open - 1].ts ? last : s->f[s->open - 1].ts, true);
    }
    an_tl_lanes_done(t, from);
    clear_scratch(t);
}

void an_tl_window_callbacks(prism_reader_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    cb->thread = on_thread;
    cb->regions = on_regions;
    cb->gpu = on_gpu;
}

/* The training thread's steps that may overlap the window: from the last
 * one starting at or before t0 (and earlier ones reaching past t0) to the
 * last one starting before t1. */
static void window_steps(prism_timeline *t)
{
    size_t lo = 0, hi = t->nosteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->osteps[mid].start <= t->t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t a = lo ? lo - 1 : 0;
    while (a > 0 && t->osteps[a - 1].end > t->t0)
        a--;
    size_t z = lo;
    while (z < t->nosteps && t->osteps[z].start < t->t1)
        z++;
    t->ow0 = a;
    t->ow1 = z;
    t->oname = 0;
    t->onext = UINT64_MAX;
}

prism_status an_tl_read_whole(prism_reader *w, const char *path)
{
    int fd = pb_open_read(path);
    if (fd < 0)
        return PRISM_E_IO;
    prism_status st = prism_reader_read_fd(w, fd);
    close(fd);
    return st;
}

prism_status prism_timeline_load(prism_timeline *t, const char *path, uint64_t t0, uint64_t t1)
{
    if (!t || !path || t1 < t0)
        return PRISM_E_ARG;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return PRISM_E_IO;
    if (t->valid && t->t0 == t0 && t->t1 == t1 && t->path && strcmp(t->path, path) == 0 &&
        t->size == sb.st_size && t->mtime.tv_sec == sb.st_mtim.tv_sec &&
        t->mtime.tv_nsec == sb.st_mtim.tv_nsec && !an_tl_workers_changed(t, path))
        return PRISM_OK;
    t->valid = false;
    an_tl_clear_lanes(t);
    t->npool = 0;
    t->t0 = t0;
    t->t1 = t1;
    t->oom = false;
    window_steps(t);
    char *p = strdup(path);
    if (!p)
        return PRISM_E_NOMEM;
    if (t->path && strcmp(t->path, path) != 0) {
        an_tl_index_free(&t->ix);
        an_tl_workers_free(t);
    }
    free(t->path);
    t->path = p;
    prism_status st = PRISM_OK;
    if (t->use_index)
        st = an_tl_index_update(t, path, &sb);
    if (st != PRISM_OK)
        return st;
    prism_reader_callbacks cb;
    an_tl_window_callbacks(&cb);
    prism_reader *w = prism_reader_new(&cb, t);
    if (!w)
        return PRISM_E_NOMEM;
    t->reads++;
    if (t->use_index && t->ix.valid) {
        t->nr = t->ix.r;
        st = an_tl_index_feed(t, w, path);
    } else {
        t->nr = w;
        st = an_tl_read_whole(w, path);
    }
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(w);
    t->bytes = prism_reader_input_offset(w);
    if (st == PRISM_OK) {
        an_tl_file_done(t, 0);
        if (!prism_reader_foreign(w))
            st = an_tl_workers_load(t, path, prism_reader_header(w));
    }
    if (st == PRISM_OK)
        an_tl_finish(t);
    prism_reader_free(w);
    t->nr = NULL;
    clear_scratch(t);
    if (st == PRISM_OK && t->oom)
        st = PRISM_E_NOMEM;
    if (st != PRISM_OK) {
        an_tl_clear_lanes(t);
        return st;
    }
    t->size = sb.st_size;
    t->mtime = sb.st_mtim;
    t->valid = true;
    return PRISM_OK;
}
