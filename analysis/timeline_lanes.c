/*
 * timeline_lanes.c - the timeline's lanes (timeline_internal.h): the names
 * of a load, copied into one pool and referred to by offset until the load
 * finishes; a lane per thread or GPU stream (at most
 * PRISM_TIMELINE_MAX_LANES, the rest counted), its spans kept when they
 * overlap the window and compacted past the cap (runs of short spans of
 * one depth merged, doubling what "short" means until the lane is at most
 * three quarters full); each file's lanes named (a worker file's "worker
 * N: NAME") and moved onto the profile's clock; and the end of a load:
 * empty lanes dropped, the rest in order, GPU work stacked in rows, spans
 * sorted and named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_internal.h"

static const char *const UNKNOWN = "(unknown)", *const UNNAMED = "(unnamed)";

/* ---- lanes ---- */

void an_tl_clear_lanes(prism_timeline *t)
{
    for (size_t i = 0; i < t->nlanes; i++) {
        free(t->lanes[i].v);
        free(t->lanes[i].name);
    }
    t->nlanes = 0;
    t->left_out = 0;
    pb_map_free(&t->lane_of);
}

/* ---- names: copied into one pool, referred to by offset while loading ---- */

bool an_tl_pool_add(prism_timeline *t, const char *s, size_t len, uint64_t *off)
{
    if (!pb_vec_reserve((void **)&t->pool, &t->poolcap, t->npool + len + 1, 1))
        return false;
    memcpy(t->pool + t->npool, s, len);
    t->pool[t->npool + len] = '\0';
    *off = t->npool;
    t->npool += len + 1;
    return true;
}

const char *an_tl_name_text(const prism_timeline *t, uint32_t id)
{
    if (!id)
        return UNKNOWN;
    const char *s = t->nr ? prism_reader_string(t->nr, id, NULL) : NULL;
    return s ? s : UNNAMED;
}

/* Offset of the name of `id` in the pool (interned by id). */
uint64_t an_tl_name_off(prism_timeline *t, uint32_t id)
{
    uint64_t off;
    if (pb_map_get(&t->names, id, &off))
        return off;
    const char *s = an_tl_name_text(t, id);
    if (!an_tl_pool_add(t, s, strlen(s), &off) || !pb_map_put(&t->names, id, off)) {
        t->oom = true;
        return UINT64_MAX;
    }
    return off;
}

lane *an_tl_lane_for(prism_timeline *t, prism_lane_kind kind, uint32_t device, uint32_t stream)
{
    uint64_t key = kind == PRISM_LANE_GPU ? (UINT64_C(1) << 63) | (uint64_t)device << 32 | stream
                                          : (uint64_t)t->wpass << 32 | stream;
    uint64_t i;
    if (pb_map_get(&t->lane_of, key, &i))
        return i == UINT64_MAX ? NULL : &t->lanes[i];
    if (t->nlanes >= PRISM_TIMELINE_MAX_LANES) {
        t->left_out++;
        if (!pb_map_put(&t->lane_of, key, UINT64_MAX))
            t->oom = true;
        return NULL;
    }
    if (!pb_vec_reserve((void **)&t->lanes, &t->lcap, t->nlanes + 1, sizeof *t->lanes) ||
        !pb_map_put(&t->lane_of, key, t->nlanes)) {
        t->oom = true;
        return NULL;
    }
    lane *l = &t->lanes[t->nlanes++];
    memset(l, 0, sizeof *l);
    l->pub.kind = kind;
    l->pub.device = kind == PRISM_LANE_GPU ? device : 0;
    l->pub.stream = stream;
    if (t->cw) {                        /* a worker file's thread */
        l->pub.is_worker = true;
        l->pub.worker_id = t->cw->id > UINT32_MAX ? UINT32_MAX : (uint32_t)t->cw->id;
        l->pub.pid = t->cw->pid;
    }
    uint64_t span = t->t1 - t->t0;
    l->q = span / 4096 ? span / 4096 : 1;
    return l;
}

static int cmp_depth_start(const void *x, const void *y, const void *ctx)
{
    const prism_span *a = x, *b = y;
    (void)ctx;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return 0;
}

/* Merge runs of short spans of one depth until at most 3/4 of the cap. */
static void compact(prism_timeline *t, lane *l)
{
    pb_sort_stable(l->v, l->n, sizeof *l->v, cmp_depth_start, NULL);
    for (int round = 0; round < 64 && l->n > t->cap * 3 / 4; round++) {
        size_t o = 0;
        for (size_t i = 0; i < l->n; i++) {
            prism_span s = l->v[i];
            prism_span *last = o ? &l->v[o - 1] : NULL;
            if (last && last->depth == s.depth && last->end - last->start < l->q &&
                s.end - s.start < l->q && (s.start <= last->end || s.start - last->end < l->q)) {
                uint32_t add = s.merged ? s.merged : 1;
                if (!last->merged) {
                    last->merged = 1;
                    last->name = NULL;
                    last->path_hash = 0;
                    last->open = false;
                    last->outside = false;
                    l->pub.merged++;
                }
                last->merged += add;
                l->pub.merged += s.merged ? 0 : 1;
                if (s.end > last->end)
                    last->end = s.end;
                continue;
            }
            l->v[o++] = s;
        }
        l->n = o;
        if (l->n > t->cap * 3 / 4)
            l->q = l->q > UINT64_MAX / 2 ? UINT64_MAX : l->q * 2;
    }
}

/* Keep a span when it overlaps the window (returned; NULL when not kept).
 * name_ref: pool offset + 1 (0: no name) in the name pointer until the
 * load finishes. */
prism_span *an_tl_add_span(prism_timeline *t, lane *l, uint64_t start, uint64_t end,
                           uint64_t name_ref, uint64_t hash, uint32_t depth, bool open)
{
    if (!l || end < t->t0 || start > t->t1)
        return NULL;
    if (l->n >= t->cap)
        compact(t, l);
    if (!pb_vec_reserve((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
        t->oom = true;
        return NULL;
    }
    prism_span *s = &l->v[l->n++];
    memset(s, 0, sizeof *s);
    s->start = start;
    s->end = end < start ? start : end;
    s->name = (const char *)(uintptr_t)name_ref;
    s->path_hash = hash;
    s->depth = depth;
    s->open = open;
    return s;
}


/* ---- a file done, the load done ---- */

static int cmp_lane(const void *x, const void *y)
{
    const lane *a = x, *b = y;
    if (a->pub.is_worker != b->pub.is_worker)
        return a->pub.is_worker ? 1 : -1;           /* the profile's own first */
    if (a->pub.worker_id != b->pub.worker_id)
        return a->pub.worker_id < b->pub.worker_id ? -1 : 1;
    if (a->pub.pid != b->pub.pid)
        return a->pub.pid < b->pub.pid ? -1 : 1;
    if (a->pub.kind != b->pub.kind)
        return a->pub.kind < b->pub.kind ? -1 : 1;
    if (a->pub.device != b->pub.device)
        return a->pub.device < b->pub.device ? -1 : 1;
    return a->pub.stream < b->pub.stream ? -1 : a->pub.stream > b->pub.stream;
}

static int cmp_start(const void *x, const void *y, const void *ctx)
{
    const prism_span *a = x, *b = y;
    (void)ctx;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* GPU work of one stream that overlaps is stacked: greedy rows. */
static void gpu_rows(lane *l)
{
    uint64_t row_end[PRISM_TIMELINE_GPU_ROWS] = { 0 };
    bool used[PRISM_TIMELINE_GPU_ROWS] = { false };
    pb_sort_stable(l->v, l->n, sizeof *l->v, cmp_start, NULL);
    for (size_t i = 0; i < l->n; i++) {
        uint32_t r = 0;
        if (l->v[i].merged) {
            r = l->v[i].depth;          /* an aggregate keeps its row */
        } else {
            while (r < PRISM_TIMELINE_GPU_ROWS - 1 && used[r] && row_end[r] > l->v[i].start)
                r++;
        }
        l->v[i].depth = r;
        used[r] = true;
        if (l->v[i].end > row_end[r])
            row_end[r] = l->v[i].end;
    }
}

static uint64_t shifted(uint64_t ts, int64_t d)
{
    if (d < 0)
        return ts < (uint64_t)-(d + 1) + 1 ? 0 : ts - ((uint64_t)-(d + 1) + 1);
    return ts > UINT64_MAX - (uint64_t)d ? UINT64_MAX : ts + (uint64_t)d;
}

/* The name of a thread lane of the file being read (owned; NULL: none). */
static char *lane_name(prism_timeline *t, uint32_t stream)
{
    uint64_t off;
    const char *nm = pb_map_get(&t->tnames, stream, &off) ? t->pool + off
                                                           : an_tl_index_thread_name(t->cix, stream);
    if (!t->cw)
        return nm ? strdup(nm) : NULL;
    size_t len = 48 + strlen(nm && *nm ? nm : "thread");
    char *w = malloc(len);
    if (w)                              /* as prism_reader_add_workers names it */
        snprintf(w, len, "worker %llu: %s", (unsigned long long)t->cw->id,
                 nm && *nm ? nm : "thread");
    return w;
}


void an_tl_lanes_done(prism_timeline *t, size_t from)
{
    for (size_t i = from; i < t->nlanes; i++) {
        lane *l = &t->lanes[i];
        if (l->pub.kind == PRISM_LANE_THREAD && l->n && !l->name &&
            !(l->name = lane_name(t, l->pub.stream)) && t->cw)
            t->oom = true;
        for (size_t k = 0; t->cw && k < l->n; k++) {
            l->v[k].start = shifted(l->v[k].start, t->cw->shift);
            l->v[k].end = shifted(l->v[k].end, t->cw->shift);
        }
    }
}

void an_tl_finish(prism_timeline *t)
{
    size_t o = 0;
    for (size_t i = 0; i < t->nlanes; i++) {
        lane *l = &t->lanes[i];
        if (!l->n) {
            free(l->v);
            free(l->name);
            continue;
        }
        t->lanes[o++] = *l;
    }
    t->nlanes = o;
    pb_map_free(&t->lane_of);       /* lane indices changed: not used again */
    pb_qsort(t->lanes, t->nlanes, sizeof *t->lanes, cmp_lane);
    for (size_t i = 0; i < t->nlanes; i++) {
        lane *l = &t->lanes[i];
        if (l->pub.kind == PRISM_LANE_GPU)
            gpu_rows(l);
        pb_sort_stable(l->v, l->n, sizeof *l->v, cmp_depth_start, NULL);
        uint32_t rows = 0;
        for (size_t k = 0; k < l->n; k++) {
            uintptr_t ref = (uintptr_t)l->v[k].name;
            l->v[k].name = ref ? t->pool + (ref - 1) : l->v[k].merged ? "" : UNNAMED;
            if (l->v[k].depth + 1 > rows)
                rows = l->v[k].depth + 1;
        }
        l->pub.name = l->name;
        l->pub.spans = l->v;
        l->pub.nspans = l->n;
        l->pub.rows = rows;
    }
}
