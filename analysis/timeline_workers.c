/*
 * timeline_workers.c - the worker files of a timeline's profile: the
 * files its worker processes (DataLoader workers, prism_init_worker) wrote
 * into "<profile>.workers" (w*.prism), read for the same window as the
 * profile, each with a chunk index of its own kept between loads.
 *
 * A file is the session's when its header names the profile's process and
 * start (worker.parent_pid == the profile's pid, worker.parent_start_ns ==
 * its start_unix_ns), the check prism_reader_add_workers makes; the
 * decision is taken once per file (again when it is replaced, or the
 * profile is) from its header alone, so a file of another run is never
 * indexed.  A file whose header is not written yet is looked at again at
 * the next load.  The window moves onto the worker's clock (both headers
 * give CLOCK_MONOTONIC at timestamp 0: the worker's times plus
 * start_mono_ns(worker) - start_mono_ns(profile) are the profile's), its
 * spans back onto the profile's (an_tl_file_done); its thread lanes come
 * after the profile's, keyed by the file's pass so that equal stream ids
 * of two files never meet.  The folder is listed again only when its
 * modification time changed (or, within two seconds of it, when its names
 * did: file times are coarse).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ropen.h"
#include "timeline_internal.h"

#define MAX_WORKER_FILES 4096u          /* as format/workers.c reads at most */
#define HEADER_BYTES (1u << 20)         /* a header longer than this: not one */

static void worker_free(tl_worker *w)
{
    an_tl_index_free(&w->ix);
    free(w->name);
}

void an_tl_workers_free(prism_timeline *t)
{
    for (size_t i = 0; i < t->nw; i++)
        worker_free(&t->w[i]);
    free(t->w);
    t->w = NULL;
    t->nw = t->wcap = 0;
    t->wlisted = false;
}

static bool folder_of(const char *path, char *dir, size_t cap)
{
    return snprintf(dir, cap, "%s.workers", path) < (int)cap;
}

static bool file_of(const char *dir, const char *name, char *file, size_t cap)
{
    return snprintf(file, cap, "%s/%s", dir, name) < (int)cap;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool worker_file_name(const char *n)
{
    size_t len = strlen(n);
    return n[0] == 'w' && len >= 7 && !strcmp(n + len - 6, ".prism");
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const tl_worker *)a)->name, ((const tl_worker *)b)->name);
}

/* The worker files in dir are those of the last listing. */
static bool listing_same(const prism_timeline *t, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    bool same = d != NULL;
    while (same && (e = readdir(d)) && n < MAX_WORKER_FILES) {
        tl_worker key = { .name = e->d_name };
        if (worker_file_name(e->d_name))
            same = ++n <= t->nw && bsearch(&key, t->w, t->nw, sizeof *t->w, by_name);
    }
    if (d)
        closedir(d);
    return same && n == t->nw;
}

/* The folder's modification time is two seconds old or more: a file made
 * from now on changes it. */
static bool settled(const struct stat *sb)
{
    struct timespec now;
    return clock_gettime(CLOCK_REALTIME, &now) == 0 && now.tv_sec - sb->st_mtim.tv_sec >= 2;
}

/* The folder as it is now against the last listing: unchanged?  Its
 * modification time says so, unless the listing was taken within the
 * clock's coarse tick of it (racy: a file made since may have left the
 * same time), where the names are compared. */
static bool folder_same(const prism_timeline *t, const char *dir, struct stat *sb, bool *exists)
{
    *exists = stat(dir, sb) == 0 && S_ISDIR(sb->st_mode);
    if (!t->wlisted || *exists != t->wdir)
        return false;
    if (!*exists)
        return true;
    return sb->st_ino == t->wdir_ino && same_time(&sb->st_mtim, &t->wdir_mtime) &&
           (!t->wdir_racy || listing_same(t, dir));
}

bool an_tl_workers_changed(prism_timeline *t, const char *path)
{
    char dir[4200], file[4480];
    struct stat sb;
    bool exists;
    if (!folder_of(path, dir, sizeof dir))
        return false;
    if (!folder_same(t, dir, &sb, &exists))
        return true;
    t->wdir_racy = t->wdir_racy && !settled(&sb);
    for (size_t i = 0; i < t->nw; i++) {
        const tl_worker *w = &t->w[i];
        if (w->state == TLW_OTHER || !file_of(dir, w->name, file, sizeof file))
            continue;
        if (stat(file, &sb) != 0 || sb.st_size != w->size || !same_time(&sb.st_mtim, &w->mtime))
            return true;
    }
    return false;
}

/* ---- the folder's listing ---- */

/* List the folder again when it changed: the files known keep their
 * decision and index, new ones start unknown, gone ones are dropped.
 * False on allocation failure (the old listing is kept). */
static bool relist(prism_timeline *t, const char *dir)
{
    struct stat sb;
    bool exists;
    if (folder_same(t, dir, &sb, &exists))
        return true;
    tl_worker *v = NULL;
    size_t n = 0, cap = 0;
    DIR *d = exists ? opendir(dir) : NULL;
    struct dirent *e;
    bool ok = true;
    while (d && (e = readdir(d)) && n < MAX_WORKER_FILES) {
        if (!worker_file_name(e->d_name))
            continue;
        char *nm = strdup(e->d_name);
        if (!nm || !pb_vec_reserve((void **)&v, &cap, n + 1, sizeof *v)) {
            free(nm);
            ok = false;
            break;
        }
        v[n++] = (tl_worker){ .name = nm };
    }
    if (d)
        closedir(d);
    if (!ok) {
        for (size_t i = 0; i < n; i++)
            free(v[i].name);
        free(v);
        return false;
    }
    if (n)
        qsort(v, n, sizeof *v, by_name);
    for (size_t i = 0; i < t->nw; i++) {  /* the files known stay as they were */
        tl_worker *old = &t->w[i], *now = n ? bsearch(old, v, n, sizeof *v, by_name) : NULL;
        if (now) {
            free(now->name);
            *now = *old;
        } else {
            worker_free(old);
        }
    }
    free(t->w);
    t->w = v;
    t->nw = n;
    t->wcap = cap;
    t->wlisted = true;
    t->wdir = exists;
    t->wdir_ino = exists ? sb.st_ino : 0;
    t->wdir_mtime = exists ? sb.st_mtim : (struct timespec){ 0, 0 };
    t->wdir_racy = exists && !settled(&sb);
    return true;
}

/* ---- whose file: its header ---- */

typedef struct hdr_probe {
    bool seen, ours;
    uint64_t id, pid, mono;
    uint64_t want_pid, want_start;
} hdr_probe;

static bool kv_uint(const prism_header *h, const char *key, uint64_t *v)
{
    for (size_t i = 0; i < h->nconfig; i++)
        if (!strcmp(h->config[i].key, key) && h->config[i].value.type == PRISM_VAL_UINT) {
            *v = h->config[i].value.v.u;
            return true;
        }
    return false;
}

static void on_header(void *ctx, const prism_header *h)
{
    hdr_probe *p = ctx;
    uint64_t ppid, pstart;
    p->seen = true;
    p->ours = kv_uint(h, "worker.parent_pid", &ppid) && kv_uint(h, "worker.parent_start_ns", &pstart) &&
              kv_uint(h, "worker.id", &p->id) && ppid == p->want_pid && pstart == p->want_start;
    p->pid = h->pid;
    p->mono = h->start_mono_ns;
}

/* Decide whether w (at file, stat sb) is a worker file of the profile
 * whose header is m, from its first bytes. */
static void judge(tl_worker *w, const char *file, const struct stat *sb, const prism_header *m)
{
    hdr_probe p = { .want_pid = m->pid, .want_start = m->start_unix_ns };
    prism_reader_callbacks cb = { .header = on_header };
    unsigned char buf[16384];
    uint64_t off = 0;
    int fd = pb_open_read(file);
    prism_reader *r = fd >= 0 ? prism_reader_new(&cb, &p) : NULL;
    prism_status st = PRISM_NEED_MORE;
    w->state = TLW_UNKNOWN;
    while (r && !p.seen && off < HEADER_BYTES && (st == PRISM_OK || st == PRISM_NEED_MORE)) {
        ssize_t got = pread(fd, buf, off ? sizeof buf : 3, (off_t)off);
        if (got <= 0)
            break;
        if (!off && (got < 3 || buf[0] != 0xd9 || buf[1] != 0xd9 || buf[2] != 0xf7)) {
            st = PRISM_E_HEADER;        /* not a PRISM profile */
            break;
        }
        st = prism_reader_feed(r, buf, (size_t)got);
        off += (uint64_t)got;
    }
    if (p.seen || (st != PRISM_OK && st != PRISM_NEED_MORE) || off >= HEADER_BYTES)
        w->state = p.ours ? TLW_OURS : TLW_OTHER;
    prism_reader_free(r);
    if (fd >= 0)
        close(fd);
    w->dev = sb->st_dev;
    w->ino = sb->st_ino;
    w->for_pid = m->pid;
    w->for_start = m->start_unix_ns;
    w->id = p.id;
    w->pid = p.pid;
    w->shift = (int64_t)(p.mono - m->start_mono_ns);
}

/* ---- reading a worker file's window ---- */

/* The profile's window on the worker's clock: false when the worker's
 * times cannot reach it. */
static bool local_window(const prism_timeline *t, int64_t shift, uint64_t *a, uint64_t *z)
{
    if (shift >= 0) {
        if (t->t1 < (uint64_t)shift)
            return false;
        *a = t->t0 > (uint64_t)shift ? t->t0 - (uint64_t)shift : 0;
        *z = t->t1 - (uint64_t)shift;
        return true;
    }
    uint64_t d = (uint64_t)-(shift + 1) + 1;
    *a = t->t0 > UINT64_MAX - d ? UINT64_MAX : t->t0 + d;
    *z = t->t1 > UINT64_MAX - d ? UINT64_MAX : t->t1 + d;
    return true;
}

/* One worker file's window: its lanes, shifted. */
static prism_status read_worker(prism_timeline *t, tl_worker *w, const char *file,
                                const struct stat *sb)
{
    uint64_t a, z;
    if (!local_window(t, w->shift, &a, &z))
        return PRISM_OK;
    t->cix = &w->ix;
    if (t->use_index && an_tl_index_update(t, file, sb) == PRISM_E_NOMEM) {
        t->cix = &t->ix;
        return PRISM_E_NOMEM;
    }
    prism_reader_callbacks cb;
    an_tl_window_callbacks(&cb);
    prism_reader *r = prism_reader_new(&cb, t);
    if (!r) {
        t->cix = &t->ix;
        return PRISM_E_NOMEM;
    }
    uint64_t t0 = t->t0, t1 = t->t1;
    size_t ow1 = t->ow1, from = t->nlanes;
    t->t0 = a;
    t->t1 = z;
    t->ow1 = t->ow0;                    /* no training thread here */
    t->cw = w;
    t->wpass++;
    if (t->use_index && w->ix.valid) {
        t->nr = w->ix.r;
        if (an_tl_index_feed(t, r, file) == PRISM_E_NOMEM)
            t->oom = true;
    } else {
        t->nr = r;
        an_tl_read_whole(r, file);
    }
    prism_reader_finish(r);             /* a damaged file: what it held */
    an_tl_file_done(t, from);
    t->bytes += prism_reader_input_offset(r);
    prism_reader_free(r);
    t->nr = NULL;
    t->cw = NULL;
    t->cix = &t->ix;
    t->t0 = t0;
    t->t1 = t1;
    t->ow1 = ow1;
    return t->oom ? PRISM_E_NOMEM : PRISM_OK;
}

prism_status an_tl_workers_load(prism_timeline *t, const char *path, const prism_header *main)
{
    char dir[4200], file[4480];
    t->wpass = 0;
    if (!main || !folder_of(path, dir, sizeof dir))
        return PRISM_OK;
    if (!relist(t, dir))
        return PRISM_E_NOMEM;
    for (size_t i = 0; i < t->nw; i++) {
        tl_worker *w = &t->w[i];
        struct stat sb;
        if (!file_of(dir, w->name, file, sizeof file) || stat(file, &sb) != 0 ||
            !S_ISREG(sb.st_mode))
            continue;
        if (w->state == TLW_UNKNOWN || w->dev != sb.st_dev || w->ino != sb.st_ino ||
            w->for_pid != main->pid || w->for_start != main->start_unix_ns)
            judge(w, file, &sb, main);
        w->size = sb.st_size;
        w->mtime = sb.st_mtim;
        if (w->state != TLW_OURS)
            continue;
        prism_status st = read_worker(t, w, file, &sb);
        if (st != PRISM_OK)
            return st;
    }
    t->wpass = 0;
    return PRISM_OK;
}
