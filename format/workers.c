/*
 * workers.c - worker files (docs/FORMAT.md, "Worker files"): the profiles
 * a session's worker processes (DataLoader workers) write into the folder
 * "<profile>.workers", read after the profile and delivered through the
 * same callbacks as threads of their own.
 *
 * A file belongs to the profile when its header names the profile's
 * process and start (worker.parent_pid, worker.parent_start_ns); others
 * (a previous run's) are counted and left.  Each file is read by a reader
 * of its own whose callbacks translate into the merged view: its string
 * ids and thread streams get ids no profile written by libcollect uses
 * (string ids from 0xC0000000, streams from 0x40000000, handed out in
 * order of first sight), its times move onto the profile's clock (both
 * headers give CLOCK_MONOTONIC at timestamp 0), and its threads are
 * marked as the worker's.  Only a worker's thread data is merged: regions,
 * marks, counters, CPU and stack samples, unrecorded and dropped counts;
 * its steps, memory samples, GPU records, INFO and footer stay its own.
 * A damaged worker file gives what it holds and is counted; the profile's
 * own reading is never failed by one.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"
#include "idmap.h"

#define WID_FIRST    0xC0000000u
#define WSTREAM_FIRST 0x40000000u
#define MAX_WORKER_FILES 65536u   /* read, in name order; the rest counted */

typedef struct wfile {
    prism_reader *main;
    uint64_t want_pid, want_start;
    int64_t shift;              /* ns added to the worker's times */
    bool decided, accepted;
    uint64_t id, pid;
    idmap ids, streams;         /* the file's id -> the merged one (val) */
    void *tmp;                  /* translated records */
    size_t tmpcap;
} wfile;

static bool kv_uint(const prism_header *h, const char *key, uint64_t *v)
{
    for (size_t i = 0; i < h->nconfig; i++)
        if (!strcmp(h->config[i].key, key) && h->config[i].value.type == PRISM_VAL_UINT) {
            *v = h->config[i].value.v.u;
            return true;
        }
    return false;
}

static void *scratch(wfile *w, size_t bytes)
{
    if (bytes > w->tmpcap) {
        void *p = realloc(w->tmp, bytes);
        if (!p)
            return NULL;
        w->tmp = p;
        w->tmpcap = bytes;
    }
    return w->tmp;
}

/* The merged id of the file's string id (0 stays 0), handed out at first
 * sight: a name used before its string arrives still gets its text later. */
static uint32_t sid(wfile *w, uint32_t id)
{
    uintptr_t v;
    uint32_t l;
    if (!id)
        return 0;
    if (pf_idmap_get(&w->ids, id, &v, &l))
        return (uint32_t)v;
    uint32_t *next = pf_reader_worker_next(w->main, false);
    if (*next == UINT32_MAX - 1 || !pf_idmap_put(&w->ids, id, *next, 0))
        return 0;
    return (*next)++;
}

static uint32_t stream_of(wfile *w, uint32_t s)
{
    uintptr_t v;
    uint32_t l;
    if (!s)
        return 0;
    if (pf_idmap_get(&w->streams, s, &v, &l))
        return (uint32_t)v;
    uint32_t *next = pf_reader_worker_next(w->main, true);
    if (*next >= WID_FIRST - 1 || !pf_idmap_put(&w->streams, s, *next, 0))
        return 0;
    return (*next)++;
}

static uint64_t ts_of(const wfile *w, uint64_t ts)
{
    if (w->shift < 0 && ts < (uint64_t)-w->shift)
        return 0;
    return ts + (uint64_t)w->shift;
}

#define MAIN_CB(w) pf_reader_cb((w)->main)
#define MAIN_CTX(w) pf_reader_ctx((w)->main)
#define LIVE(w) ((w)->accepted)

static void w_header(void *ctx, const prism_header *h)
{
    wfile *w = ctx;
    const prism_header *m = prism_reader_header(w->main);
    uint64_t ppid, pstart;
    w->decided = true;
    w->accepted = m && kv_uint(h, "worker.parent_pid", &ppid) &&
                  kv_uint(h, "worker.parent_start_ns", &pstart) && kv_uint(h, "worker.id", &w->id) &&
                  ppid == m->pid && pstart == m->start_unix_ns;
    w->pid = h->pid;
    if (m)
        w->shift = (int64_t)(h->start_mono_ns - m->start_mono_ns);
}

/* A name another worker file gave already keeps its merged id: the same
 * region in every worker is one path of the all-threads tree. */
static void w_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    wfile *w = ctx;
    uintptr_t v;
    uint32_t l;
    if (!LIVE(w) || !id)
        return;
    if (!pf_idmap_get(&w->ids, id, &v, &l)) {
        uint32_t m = pf_reader_worker_name(w->main, s, len, 0);
        if (m) {
            pf_idmap_put(&w->ids, id, m, 0);
            return;
        }
    }
    uint32_t n = sid(w, id);
    if (!n || !pf_reader_put_string(w->main, n, s, len))
        return;
    pf_reader_worker_name(w->main, s, len, n);
    if (MAIN_CB(w)->string)
        MAIN_CB(w)->string(MAIN_CTX(w), n, s, len);
}

static void w_thread(void *ctx, const prism_thread *t)
{
    wfile *w = ctx;
    char name[96];
    if (!LIVE(w) || !MAIN_CB(w)->thread)
        return;
    prism_thread x = *t;
    x.stream = stream_of(w, t->stream);
    if (!x.stream)
        return;
    snprintf(name, sizeof name, "worker %llu: %s", (unsigned long long)w->id,
             t->name && *t->name ? t->name : "thread");
    x.name = name;
    x.is_worker = true;
    x.worker_id = (uint32_t)(w->id > UINT32_MAX ? UINT32_MAX : w->id);
    x.pid = w->pid;
    MAIN_CB(w)->thread(MAIN_CTX(w), &x);
}

static void w_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                      size_t n)
{
    wfile *w = ctx;
    prism_region_event *x;
    uint32_t s;
    if (!LIVE(w) || !MAIN_CB(w)->regions || !(s = stream_of(w, stream)) ||
        !(x = scratch(w, n * sizeof *x)))
        return;
    for (size_t i = 0; i < n; i++) {
        x[i] = ev[i];
        x[i].ts = ts_of(w, ev[i].ts);
        if (ev[i].kind == PRISM_REGION_ENTER)
            x[i].name = sid(w, ev[i].name);
    }
    MAIN_CB(w)->regions(MAIN_CTX(w), s, depth, x, n);
}

static void w_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    wfile *w = ctx;
    prism_mark *x;
    uint32_t s;
    if (!LIVE(w) || !MAIN_CB(w)->marks || !(s = stream_of(w, stream)) ||
        !(x = scratch(w, n * sizeof *x)))
        return;
    for (size_t i = 0; i < n; i++)
        x[i] = (prism_mark){ ts_of(w, m[i].ts), sid(w, m[i].name) };
    MAIN_CB(w)->marks(MAIN_CTX(w), s, x, n);
}

static void w_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    wfile *w = ctx;
    prism_counter *x;
    uint32_t s;
    if (!LIVE(w) || !MAIN_CB(w)->counters || !(s = stream_of(w, stream)) ||
        !(x = scratch(w, n * sizeof *x)))
        return;
    for (size_t i = 0; i < n; i++) {
        x[i] = c[i];
        x[i].ts = ts_of(w, c[i].ts);
        x[i].name = sid(w, c[i].name);
    }
    MAIN_CB(w)->counters(MAIN_CTX(w), s, x, n);
}

static void w_cpu(void *ctx, const prism_cpu_sample *c, size_t n)
{
    wfile *w = ctx;
    prism_cpu_sample *x;
    if (!LIVE(w) || !MAIN_CB(w)->cpu || !(x = scratch(w, n * sizeof *x)))
        return;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        x[k] = c[i];
        x[k].ts = ts_of(w, c[i].ts);
        if ((x[k].stream = stream_of(w, c[i].stream)) != 0)
            k++;
    }
    if (k)
        MAIN_CB(w)->cpu(MAIN_CTX(w), x, k);
}

static void w_stacks(void *ctx, const prism_stack_sample *s, size_t n)
{
    wfile *w = ctx;
    size_t frames = 0;
    if (!LIVE(w) || !MAIN_CB(w)->stacks)
        return;
    for (size_t i = 0; i < n; i++)
        frames += s[i].nframes;
    prism_stack_sample *x = scratch(w, n * sizeof *x + frames * sizeof(uint32_t));
    if (!x)
        return;
    uint32_t *f = (uint32_t *)(x + n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        x[k] = s[i];
        x[k].ts = ts_of(w, s[i].ts);
        x[k].frames = f;
        for (uint32_t j = 0; j < s[i].nframes; j++)
            *f++ = sid(w, s[i].frames[j]);
        if ((x[k].stream = stream_of(w, s[i].stream)) != 0)
            k++;
    }
    if (k)
        MAIN_CB(w)->stacks(MAIN_CTX(w), x, k);
}

static void w_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    wfile *w = ctx;
    prism_unrecorded *x;
    uint32_t s;
    if (!LIVE(w) || !MAIN_CB(w)->unrecorded || !(s = stream_of(w, stream)) ||
        !(x = scratch(w, n * sizeof *x)))
        return;
    for (size_t i = 0; i < n; i++) {
        x[i] = u[i];
        x[i].ts = ts_of(w, u[i].ts);
    }
    MAIN_CB(w)->unrecorded(MAIN_CTX(w), s, x, n);
}

static void w_dropped(void *ctx, const prism_dropped *d)
{
    wfile *w = ctx;
    if (!LIVE(w) || !MAIN_CB(w)->dropped)
        return;
    prism_dropped x = *d;
    if ((x.stream = stream_of(w, d->stream)) != 0 || !d->stream)
        MAIN_CB(w)->dropped(MAIN_CTX(w), &x);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Worker file names in dir (w*.prism, sorted), NULL with none; *n set,
 * *over: names past MAX_WORKER_FILES (not listed). */
static char **list(const char *dir, size_t *n, uint32_t *over)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    *over = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] != 'w' || len < 7 || strcmp(e->d_name + len - 6, ".prism"))
            continue;
        if (*n >= MAX_WORKER_FILES) {
            *over += *over < UINT32_MAX;
            continue;
        }
        if (*n == cap) {
            char **g = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
            if (!g)
                break;
            v = g;
        }
        if (!(v[*n] = strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof *v, by_name);
    return v;
}

prism_status prism_reader_add_workers(prism_reader *r, const char *path)
{
    if (!r || !path)
        return PRISM_E_ARG;
    if (!prism_reader_header(r) || prism_reader_foreign(r) || pf_reader_workers_once(r))
        return PRISM_OK;
    char dir[4200];
    if (snprintf(dir, sizeof dir, "%s.workers", path) >= (int)sizeof dir)
        return PRISM_OK;
    size_t n;
    uint32_t over;
    char **names = list(dir, &n, &over);
    const prism_header *m = prism_reader_header(r);
    prism_reader_stats *st = pf_reader_stats_mut(r);
    st->workers_left = over;
    for (size_t i = 0; i < n; i++) {
        char file[4480];
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        free(names[i]);
        wfile w = { .main = r, .want_pid = m->pid, .want_start = m->start_unix_ns };
        prism_reader_callbacks cb = {
            .header = w_header, .string = w_string, .thread = w_thread, .regions = w_regions,
            .marks = w_marks, .counters = w_counters, .cpu = w_cpu, .stacks = w_stacks,
            .unrecorded = w_unrecorded, .dropped = w_dropped,
        };
        prism_reader *wr = NULL;
        prism_status s = prism_read_file(file, &cb, &w, &wr);
        if (!w.accepted) {
            st->workers_other++;
        } else {
            const prism_reader_stats *ws = wr ? prism_reader_stats_get(wr) : NULL;
            st->workers++;
            if ((s != PRISM_OK && s != PRISM_NEED_MORE) ||
                (ws && (ws->damaged || ws->malformed || ws->torn_bytes)))
                st->workers_damaged++;
            if (ws)
                st->worker_records += ws->records;
        }
        prism_reader_free(wr);
        pf_idmap_free(&w.ids);
        pf_idmap_free(&w.streams);
        free(w.tmp);
    }
    free(names);
    return PRISM_OK;
}
