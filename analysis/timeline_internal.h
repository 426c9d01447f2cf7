/*
 * analysis/timeline_internal.h - the timeline's parts (internal): region
 * stacks per thread, lanes of spans, and the chunk index that lets a window
 * be read without the rest of the file (timeline_index.c).
 */
#ifndef PRISM_ANALYSIS_TIMELINE_INTERNAL_H
#define PRISM_ANALYSIS_TIMELINE_INTERNAL_H

#include <sys/stat.h>

#include "internal.h"
#include "prism/timeline.h"

typedef struct tframe {
    uint64_t ts, hash;
    uint32_t name;              /* string id                                 */
} tframe;

/* One thread's open regions as a reader in file order sees them. */
typedef struct tstack {
    uint32_t stream;
    uint32_t open;              /* frames in f                               */
    uint32_t phantom;           /* open in the file, beyond MAX_STACK or lost */
    uint64_t last_ts;
    uint64_t idle;              /* open + phantom == 0: when the last root
                                   region ended (0 before the first)        */
    tframe f[MAX_STACK];
} tstack;

typedef struct tl_stacks {
    tstack **v;
    size_t n, cap;
    pb_map of;                  /* stream -> index into v                    */
} tl_stacks;

typedef struct lane {
    prism_lane pub;
    prism_span *v;
    size_t n, cap;
    uint64_t q;                 /* "short" for the next compaction (ns)       */
    char *name;                 /* owned copy of the thread name             */
} lane;

/* A chunk of region events or GPU work, as the index knows it. */
typedef struct tl_chunk {
    uint64_t offset, length;
    uint64_t tmin, tmax;        /* its records' time span                    */
    uint32_t kind, stream;
    /* REGIONS: the thread's stack before the chunk (frames in the index's
     * frame pool from `frames`), and the least depth within it */
    uint32_t nframes, phantom, mindepth;
    size_t frames;
    uint64_t idle;              /* REGIONS: the stack's idle before it       */
    uint64_t root_enter;        /* REGIONS: when its first root region
                                   entered; UINT64_MAX: none                 */
} tl_chunk;

typedef struct tl_index {
    bool valid;
    prism_reader *r;            /* reads on as the file grows; its strings
                                   name every window's spans               */
    dev_t dev;
    ino_t ino;
    uint64_t hdr_end;           /* the header's bytes: [0, hdr_end)          */
    bool have_hdr_end;
    tl_chunk *c;
    size_t n, cap;
    tframe *pool;
    size_t npool, poolcap;
    tl_stacks st;
    pb_map tnames;              /* stream -> offset into names               */
    char *names;
    size_t nnames, namescap;
    /* the chunk being delivered */
    uint64_t tmin, tmax;
    bool snap;                  /* its stack was taken                       */
    tl_chunk cur;
    bool oom;
} tl_index;

/* A worker file of the profile's folder "<path>.workers" (w*.prism),
 * kept between loads (timeline_workers.c). */
enum { TLW_UNKNOWN = 0, TLW_OURS, TLW_OTHER };
typedef struct tl_worker {
    char *name;                 /* the file's name in the folder             */
    int state;                  /* TLW_*: of the session, of another, not yet
                                   known (its header not written yet)       */
    dev_t dev;
    ino_t ino;
    uint64_t for_pid, for_start;    /* the profile it was judged against    */
    uint64_t id, pid;           /* worker.id, the worker's process           */
    int64_t shift;              /* ns added to its times (its start_mono_ns
                                   less the profile's)                      */
    off_t size;                 /* at the last load                          */
    struct timespec mtime;
    tl_index ix;
} tl_worker;

struct prism_timeline {
    size_t cap;
    bool use_index;
    /* the window being (or last) loaded */
    char *path;
    uint64_t t0, t1;
    off_t size;
    struct timespec mtime;
    bool valid;
    uint64_t reads, bytes;
    /* lanes */
    lane *lanes;
    size_t nlanes, lcap, left_out;
    pb_map lane_of;             /* THREAD: stream; GPU: 1<<63 | dev<<32 | stream */
    /* per-load scratch */
    prism_reader *nr;           /* resolves string ids                       */
    tl_stacks st;
    pb_map names;               /* string id -> offset into pool             */
    pb_map tnames;              /* stream -> offset into pool (thread names) */
    char *pool;
    size_t npool, poolcap;
    bool oom;
    tl_index ix;                /* the profile's                             */
    tl_index *cix;              /* the file's being read: &ix or a worker's  */
    /* worker files (timeline_workers.c) */
    tl_worker *w;               /* by file name                              */
    size_t nw, wcap;
    bool wlisted, wdir;         /* listed once; the folder existed then     */
    bool wdir_racy;             /* listed within 2 s of its modification    */
    ino_t wdir_ino;
    struct timespec wdir_mtime;
    tl_worker *cw;              /* the worker file being read, NULL: the
                                   profile                                  */
    uint32_t wpass;             /* per load: worker files read so far (lane
                                   keys: wpass << 32 | stream)              */
    /* the training thread's time outside regions (set_training) */
    uint32_t ostream;
    prism_step *osteps;         /* its sampled steps, in start order         */
    size_t nosteps, oscap;
    size_t ow0, ow1;            /* per load: osteps[ow0, ow1) may overlap it */
    uint64_t oname;             /* per load: pool offset + 1 of the name     */
    uint64_t onext;             /* per load: the thread's next root region
                                   after the chunks read; UINT64_MAX: none  */
};

/* timeline_lanes.c: the lanes and the names of a load. */
void an_tl_clear_lanes(prism_timeline *t);
/* Copy s into the pool: its offset in *off; false without memory. */
bool an_tl_pool_add(prism_timeline *t, const char *s, size_t len, uint64_t *off);
/* The pool offset of the name of string id `id` (interned by id);
 * UINT64_MAX without memory (t->oom set). */
uint64_t an_tl_name_off(prism_timeline *t, uint32_t id);
/* The lane of a thread (keyed by the worker file's pass and its stream) or
 * GPU stream, made at first sight; NULL past the lane cap (counted) or
 * without memory. */
lane *an_tl_lane_for(prism_timeline *t, prism_lane_kind kind, uint32_t device, uint32_t stream);
/* Keep a span when it overlaps the window (returned; NULL when not kept).
 * name_ref: pool offset + 1 (0: no name) in the name pointer until the
 * load finishes. */
prism_span *an_tl_add_span(prism_timeline *t, lane *l, uint64_t start, uint64_t end,
                           uint64_t name_ref, uint64_t hash, uint32_t depth, bool open);
/* The lanes made since lane `from` by the file just read take their
 * names; a worker file's spans move onto the profile's clock. */
void an_tl_lanes_done(prism_timeline *t, size_t from);
/* Every file was read: lanes without spans go, the rest in order, their
 * spans sorted and named. */
void an_tl_finish(prism_timeline *t);

tstack *an_tl_stack_of(tl_stacks *s, uint32_t stream);
void an_tl_stacks_free(tl_stacks *s);
/* The analysis' name of string id `id` (an_tree_name): through t->nr. */
const char *an_tl_name_text(const prism_timeline *t, uint32_t id);
/* Apply a batch of region events to stack s after reconciling it with the
 * writer's depth; emit: closed frames that overlap the window become
 * spans, and so does the training thread's time outside regions.
 * *mindepth (may be NULL) is lowered to the least depth seen;
 * *root_enter (may be NULL), when UINT64_MAX, gets the time the first
 * root region entered. */
void an_tl_regions(prism_timeline *t, tstack *s, uint32_t depth, const prism_region_event *ev,
                size_t n, bool emit, uint32_t *mindepth, uint64_t *root_enter);
/* The reader callbacks of a window pass (ctx: the timeline). */
void an_tl_window_callbacks(prism_reader_callbacks *cb);
/* The file read for the window (the profile, or worker file t->cw) is
 * done: regions still open close at their thread's last time, the thread
 * lanes made since lane `from` take their names (a worker's "worker N:
 * NAME"), a worker's spans move onto the profile's clock, and the file's
 * scratch (stacks, names) is cleared. */
void an_tl_file_done(prism_timeline *t, size_t from);
/* The whole file at path through reader w (foreign files, or no index). */
prism_status an_tl_read_whole(prism_reader *w, const char *path);

/* timeline_workers.c: whether the worker files of the profile at path
 * changed since the last load (the folder, or a file's size or time). */
bool an_tl_workers_changed(prism_timeline *t, const char *path);
/* Read the window [t->t0, t->t1] of every worker file of the profile
 * whose header is main (its lanes after the profile's).  A worker file
 * that cannot be read is left out; PRISM_OK or PRISM_E_NOMEM. */
prism_status an_tl_workers_load(prism_timeline *t, const char *path, const prism_header *main);
void an_tl_workers_free(prism_timeline *t);

/* timeline_index.c: bring the index t->cix up to date with the file
 * (built on first use, read on as it grows, rebuilt when it was
 * replaced).  The functions below work on t->cix too. */
prism_status an_tl_index_update(prism_timeline *t, const char *path, const struct stat *sb);
/* Feed the window reader w the header and the chunks that the window
 * [t->t0, t->t1] needs, its stacks set from the index first. */
prism_status an_tl_index_feed(prism_timeline *t, prism_reader *w, const char *path);
/* The thread name of stream from the index, or NULL. */
const char *an_tl_index_thread_name(const tl_index *ix, uint32_t stream);
/* The newest time of a thread in the index, 0 when unknown. */
uint64_t an_tl_index_last_ts(const tl_index *ix, uint32_t stream);
void an_tl_index_free(tl_index *ix);

#endif
