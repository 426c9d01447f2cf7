/*
 * timeline_index.c - the timeline's chunk index: one pass over a PRISM
 * profile (then on from where it stopped as a live file grows) records,
 * for every chunk of region events or GPU work, its offset, its records'
 * time span and, for region chunks, the thread's stack of open regions
 * before it and the least depth reached in it.  A window [t0, t1] then
 * needs, per thread, the chunks from the last one starting at or before t0
 * through the last one starting at or before t1 (its stack set from the
 * index first), plus the later chunks in which regions still open at the
 * window's end close (found by their least depth, without reading
 * anything else); and the GPU chunks whose span overlaps the window.  For
 * the training thread's time outside regions, each region chunk also
 * keeps when its thread's last root region ended before it and when its
 * first root region entered: a gap reaching past the chunks read ends
 * there.  The
 * header comes first, so the reader takes the chunks as it would the
 * file; names are the index reader's (string ids are the file's).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ropen.h"
#include "timeline_internal.h"

void an_tl_index_free(tl_index *ix)
{
    prism_reader_free(ix->r);
    free(ix->c);
    free(ix->pool);
    an_tl_stacks_free(&ix->st);
    pb_map_free(&ix->tnames);
    free(ix->names);
    memset(ix, 0, sizeof *ix);
}

const char *an_tl_index_thread_name(const tl_index *ix, uint32_t stream)
{
    uint64_t off;
    return ix->valid && pb_map_get(&ix->tnames, stream, &off) ? ix->names + off : NULL;
}

uint64_t an_tl_index_last_ts(const tl_index *ix, uint32_t stream)
{
    uint64_t i;
    return ix->valid && pb_map_get(&ix->st.of, stream, &i) ? ix->st.v[i]->last_ts : 0;
}

static void begin_chunk(tl_index *ix)
{
    ix->tmin = UINT64_MAX;
    ix->tmax = 0;
    ix->snap = false;
    memset(&ix->cur, 0, sizeof ix->cur);
}

static void note(tl_index *ix, uint64_t a, uint64_t z)
{
    if (a < ix->tmin)
        ix->tmin = a;
    if (z > ix->tmax)
        ix->tmax = z;
}

/* ---- the index pass's callbacks (ctx: the timeline) ---- */

static void ix_thread(void *ctx, const prism_thread *th)
{
    tl_index *ix = ((prism_timeline *)ctx)->cix;
    const char *nm = th->name ? th->name : "";
    size_t len = strlen(nm);
    if (!pb_vec_reserve((void **)&ix->names, &ix->namescap, ix->nnames + len + 1, 1) ||
        !pb_map_put(&ix->tnames, th->stream, ix->nnames)) {
        ix->oom = true;
        return;
    }
    memcpy(ix->names + ix->nnames, nm, len + 1);
    ix->nnames += len + 1;
}

static void ix_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    prism_timeline *t = ctx;
    tl_index *ix = t->cix;
    tstack *s = an_tl_stack_of(&ix->st, stream);
    if (!s) {
        ix->oom = true;
        return;
    }
    if (!ix->snap) {            /* the stack before the chunk's first event */
        ix->snap = true;
        ix->cur.nframes = s->open;
        ix->cur.phantom = s->phantom;
        ix->cur.mindepth = UINT32_MAX;
        ix->cur.idle = s->idle;
        ix->cur.root_enter = UINT64_MAX;
        ix->cur.frames = ix->npool;
        if (!pb_vec_reserve((void **)&ix->pool, &ix->poolcap, ix->npool + s->open, sizeof *ix->pool)) {
            ix->oom = true;
            return;
        }
        if (s->open)
            memcpy(ix->pool + ix->npool, s->f, s->open * sizeof *s->f);
        ix->npool += s->open;
    }
    for (size_t i = 0; i < n; i++)
        note(ix, ev[i].ts, ev[i].ts);
    an_tl_regions(t, s, depth, ev, n, false, &ix->cur.mindepth, &ix->cur.root_enter);
}

static void ix_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    tl_index *ix = ((prism_timeline *)ctx)->cix;
    for (size_t i = 0; i < n; i++)
        if (g[i].type == PRISM_GPU_KERNEL || g[i].type == PRISM_GPU_MEMCPY ||
            g[i].type == PRISM_GPU_MEMSET)
            note(ix, g[i].start, g[i].end > g[i].start ? g[i].end : g[i].start);
}

static void ix_chunk(void *ctx, const prism_chunk_info *c)
{
    tl_index *ix = ((prism_timeline *)ctx)->cix;
    if (!ix->have_hdr_end) {
        ix->hdr_end = c->offset;
        ix->have_hdr_end = true;
    }
    bool keep = (c->kind == PRISM_CHUNK_REGIONS || c->kind == PRISM_CHUNK_GPU) &&
                ix->tmin <= ix->tmax && c->status != PRISM_CHUNK_GARBAGE &&
                c->status != PRISM_CHUNK_BAD_CHECKSUM;
    if (keep && pb_vec_reserve((void **)&ix->c, &ix->cap, ix->n + 1, sizeof *ix->c)) {
        tl_chunk *e = &ix->c[ix->n++];
        *e = ix->cur;
        e->offset = c->offset;
        e->length = c->length;
        e->kind = c->kind;
        e->stream = c->stream;
        e->tmin = ix->tmin;
        e->tmax = ix->tmax;
        if (e->mindepth == UINT32_MAX)
            e->mindepth = e->nframes + e->phantom;
    } else {
        if (keep)
            ix->oom = true;
        if (ix->snap)
            ix->npool = ix->cur.frames;     /* its stack is not needed */
    }
    begin_chunk(ix);
}

/* A PRISM profile starts with the CBOR self-describe tag; anything else is
 * read whole (a foreign file has no chunks to index). */
static bool is_prism(int fd)
{
    unsigned char b[3];
    return pread(fd, b, 3, 0) == 3 && b[0] == 0xd9 && b[1] == 0xd9 && b[2] == 0xf7;
}

prism_status an_tl_index_update(prism_timeline *t, const char *path, const struct stat *sb)
{
    tl_index *ix = t->cix;
    if (ix->r && (ix->dev != sb->st_dev || ix->ino != sb->st_ino ||
                  (uint64_t)sb->st_size < prism_reader_input_offset(ix->r)))
        an_tl_index_free(ix);              /* replaced or truncated: start over */
    if (ix->r && prism_reader_input_offset(ix->r) == (uint64_t)sb->st_size)
        return PRISM_OK;
    int fd = pb_open_read(path);
    if (fd < 0)
        return PRISM_E_IO;
    if (!ix->r) {
        if (!is_prism(fd)) {
            close(fd);
            ix->valid = false;
            return PRISM_OK;
        }
        prism_reader_callbacks cb = { .thread = ix_thread, .regions = ix_regions,
                                      .gpu = ix_gpu, .chunk = ix_chunk };
        ix->r = prism_reader_new(&cb, t);
        if (!ix->r) {
            close(fd);
            return PRISM_E_NOMEM;
        }
        ix->dev = sb->st_dev;
        ix->ino = sb->st_ino;
        begin_chunk(ix);
    }
    t->nr = ix->r;
    prism_status st = prism_reader_read_fd(ix->r, fd);
    t->nr = NULL;
    close(fd);
    if (st == PRISM_NEED_MORE)
        st = PRISM_OK;                  /* a torn tail: read on next time */
    ix->valid = st == PRISM_OK && !ix->oom && ix->have_hdr_end;
    if (st != PRISM_OK || ix->oom)
        an_tl_index_free(ix);              /* the window is read whole instead */
    return PRISM_OK;
}

/* ---- choosing a window's chunks ---- */

typedef struct sel_state {
    size_t first, last, any;
    bool has_first, has_last;
    bool walking;
    uint32_t need;              /* depth still open after the window         */
} sel_state;

static bool feed_range(prism_reader *w, int fd, uint64_t off, uint64_t len, uint8_t *buf,
                       size_t cap, prism_status *st)
{
    while (len) {
        size_t n = len < cap ? (size_t)len : cap;
        ssize_t got = pread(fd, buf, n, (off_t)off);
        if (got <= 0) {
            *st = PRISM_E_IO;
            return false;
        }
        *st = prism_reader_feed(w, buf, (size_t)got);
        if (*st != PRISM_OK && *st != PRISM_NEED_MORE)
            return false;
        off += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return true;
}

prism_status an_tl_index_feed(prism_timeline *t, prism_reader *w, const char *path)
{
    tl_index *ix = t->cix;
    uint64_t t0 = t->t0, t1 = t->t1;
    bool *sel = calloc(ix->n ? ix->n : 1, sizeof *sel);
    sel_state *ss = NULL;
    size_t nss = 0, sscap = 0;
    pb_map of = { 0 };
    prism_status st = PRISM_E_NOMEM;
    uint8_t *buf = malloc(1u << 16);
    int fd = -1;
    if (!sel || !buf)
        goto out;
    /* per thread: the first and last chunk of the window */
    for (size_t i = 0; i < ix->n; i++) {
        const tl_chunk *c = &ix->c[i];
        if (c->kind == PRISM_CHUNK_GPU) {
            sel[i] = c->tmax >= t0 && c->tmin <= t1;
            continue;
        }
        uint64_t k;
        if (!pb_map_get(&of, c->stream, &k)) {
            if (!pb_vec_reserve((void **)&ss, &sscap, nss + 1, sizeof *ss) ||
                !pb_map_put(&of, c->stream, nss))
                goto out;
            k = nss++;
            memset(&ss[k], 0, sizeof ss[k]);
            ss[k].any = i;
        }
        if (c->tmin <= t0) {
            ss[k].first = i;
            ss[k].has_first = true;
        }
        if (c->tmin <= t1) {
            ss[k].last = i;
            ss[k].has_last = true;
        }
    }
    /* the chunks between, then those where regions open at the end close */
    for (size_t i = 0; i < ix->n; i++) {
        const tl_chunk *c = &ix->c[i];
        uint64_t k;
        if (c->kind != PRISM_CHUNK_REGIONS || !pb_map_get(&of, c->stream, &k) ||
            !ss[k].has_last)
            continue;
        sel_state *s = &ss[k];
        size_t first = s->has_first ? s->first : s->any;
        if (i >= first && i <= s->last) {
            sel[i] = true;
            if (i == first) {
                tstack *ws = an_tl_stack_of(&t->st, c->stream);
                if (!ws)
                    goto out;
                ws->open = c->nframes;
                ws->phantom = c->phantom;
                ws->idle = c->idle;
                if (c->nframes)
                    memcpy(ws->f, ix->pool + c->frames, c->nframes * sizeof *ws->f);
            }
        } else if (i > s->last) {
            if (!s->walking) {
                s->walking = true;
                s->need = c->nframes + c->phantom;
            }
            if (s->need && c->mindepth < s->need) {
                sel[i] = true;
                s->need = c->mindepth;
            }
        }
    }
    /* the training thread's next root region after the chunks read */
    size_t after = 0;
    for (size_t i = 0; i < ix->n; i++)
        if (sel[i] && ix->c[i].kind == PRISM_CHUNK_REGIONS && ix->c[i].stream == t->ostream)
            after = i + 1;
    for (size_t i = after; t->ow1 > t->ow0 && i < ix->n; i++) {
        const tl_chunk *c = &ix->c[i];
        if (c->kind == PRISM_CHUNK_REGIONS && c->stream == t->ostream &&
            c->root_enter != UINT64_MAX) {
            t->onext = c->root_enter;
            break;
        }
    }
    fd = pb_open_read(path);
    if (fd < 0) {
        st = PRISM_E_IO;
        goto out;
    }
    if (!feed_range(w, fd, 0, ix->hdr_end, buf, 1u << 16, &st))
        goto out;
    for (size_t i = 0; i < ix->n; i++)
        if (sel[i] && !feed_range(w, fd, ix->c[i].offset, ix->c[i].length, buf, 1u << 16, &st))
            goto out;
    st = PRISM_OK;
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    free(sel);
    free(ss);
    pb_map_free(&of);
    return st;
}
