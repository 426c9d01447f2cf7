/*
 * prism/timeline.h - the spans of one time window of a profile, per lane
 * (one lane per recorded thread, one per GPU device and stream), for the
 * explorer's Timeline pane.  No terminal code.
 *
 * The analysis aggregates and keeps no spans; a timeline reads them from
 * the file for one window [t0, t1] at a time, on demand, and keeps only
 * those: memory is bounded by the per-lane cap, not by the file.  Loading
 * the same window of an unchanged file again does not re-read it (the
 * window is cached), so a pane may call prism_timeline_load on every draw.
 *
 * A span is kept when it overlaps the window; its start and end are the
 * recorded ones (not clipped).  Regions nest: a thread lane's span at depth
 * d lies inside one at depth d - 1.  GPU work (kernels, copies, memsets)
 * that overlaps in one stream is stacked into rows by the same `depth`.
 * When a lane has more spans than the cap, runs of short neighbouring spans
 * of one depth are merged into aggregates (merged > 0, no name, no path)
 * until it fits, shortest first: long spans always stay whole.
 *
 * A PRISM profile is indexed once (its chunks' time spans and each
 * thread's open regions at every chunk), so a window reads only the chunks
 * it needs: the cost of a load follows the window, not the file.  A live
 * file's index reads on from where it stopped.  Foreign files
 * (torch.profiler traces) are read through the same reader, whole, for
 * every window.
 *
 * Worker processes (DataLoader workers; prism_init_worker) write files of
 * their own into "<path>.workers"; those of the profile's session (their
 * header names its pid and start, as prism_reader_add_workers checks) are
 * read for the same window, each through an index of its own, their times
 * moved onto the profile's clock, and their threads become lanes after
 * the profile's own, named "worker N: NAME" and marked (is_worker).
 * Files of another session are left out; a damaged one gives what it
 * holds and never fails the load.
 */
#ifndef PRISM_TIMELINE_H
#define PRISM_TIMELINE_H

#include "prism/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PRISM_TIMELINE_CAP 20000u      /* default spans kept per lane          */
#define PRISM_TIMELINE_MAX_LANES 256u  /* lanes beyond are counted, not kept   */
#define PRISM_TIMELINE_GPU_ROWS 8u     /* overlapping GPU work: rows per lane  */

typedef struct prism_span {
    uint64_t start, end;         /* ns since the file's origin; end >= start */
    const char *name;            /* borrowed from the timeline; "" for an
                                    aggregate; untrusted (escape it)         */
    uint64_t path_hash;          /* the region's call path as the analysis
                                    hashes it (prism_node.path_hash); 0 for
                                    GPU work, aggregates, unknown frames     */
    uint32_t depth;              /* row inside its lane, 0 at the top        */
    uint32_t merged;             /* 0: one span; n: an aggregate of n        */
    bool open;                   /* never closed in the file: end is the
                                    thread's last timestamp                  */
    bool outside;                /* no region: the training thread's time
                                    inside a step that no root region holds
                                    (named PRISM_TIMELINE_OUTSIDE, depth 0;
                                    see prism_timeline_set_training)         */
} prism_span;

/* The name of the spans of time outside regions, as the analysis names
 * its node (PRISM_NODE_UNATTRIBUTED); their path_hash is that node's. */
#define PRISM_TIMELINE_OUTSIDE "(outside regions)"

typedef enum prism_lane_kind { PRISM_LANE_THREAD = 0, PRISM_LANE_GPU = 1 } prism_lane_kind;

typedef struct prism_lane {
    prism_lane_kind kind;
    uint32_t stream;             /* THREAD: the thread's stream id;
                                    GPU: the CUDA stream                     */
    uint32_t device;             /* GPU: the device; THREAD: 0               */
    const char *name;            /* THREAD: its name or NULL; untrusted      */
    const prism_span *spans;     /* by depth, then start                     */
    size_t nspans;
    uint32_t rows;               /* deepest depth + 1                        */
    uint64_t merged;             /* spans folded into aggregates             */
    /* THREAD: a thread of a worker process (a worker file of the
     * session): which worker, its process; stream is the worker file's */
    bool is_worker;
    uint32_t worker_id;
    uint64_t pid;
} prism_lane;

typedef struct prism_timeline prism_timeline;

/* cap: spans kept per lane (0: PRISM_TIMELINE_CAP; at least 64).  NULL on
 * allocation failure.  The caller frees with prism_timeline_free. */
PRISM_API prism_timeline *prism_timeline_new(size_t cap);
PRISM_API void prism_timeline_free(prism_timeline *t);

/*
 * Load the spans of [t0, t1] (ns) from the file at path and its session's
 * worker files.  When the path, the window, and the files' sizes and
 * modification times (and the workers folder's) are those of the last
 * successful load, nothing is read.  A torn or damaged file yields
 * what could be read.  PRISM_E_IO (errno kept), PRISM_E_NOMEM, the
 * reader's errors (the lanes are then empty); PRISM_E_ARG for t1 < t0.
 * Lanes and spans stay valid until the next load or free.
 */
PRISM_API prism_status prism_timeline_load(prism_timeline *t, const char *path, uint64_t t0,
                                 uint64_t t1);

/*
 * The training thread and its steps, for the loads that follow: inside
 * each sampled step given (PRISM_STEP_SAMPLED; others hold no recorded
 * regions), the time of thread `stream` that no root region (depth 0)
 * holds becomes spans of its lane, one per gap and step, at depth 0,
 * `outside` set: the `(outside regions)` of the analysis, drawn where it
 * lies.  A gap starts where the thread's last root region ended (the
 * file's origin before its first) and ends where the next one enters,
 * through the chunks the window does not read (the index knows them); the
 * time after the thread's last root region counts to the step's end.
 * Only the steps that overlap a window matter to it: a caller may give
 * just those (they are copied; steps in start order).  n = 0 or stream
 * UINT32_MAX: none.  A change of stream or steps makes the next load read
 * its window again.  PRISM_E_NOMEM (the previous steps are kept),
 * PRISM_E_ARG for t NULL or steps NULL with n > 0.
 */
PRISM_API prism_status prism_timeline_set_training(prism_timeline *t, uint32_t stream,
                                                   const prism_step *steps, size_t n);

/* Lanes of the last load: threads by stream id, then GPU streams by device
 * and stream, then the worker processes' threads by worker, process and
 * stream.  Lanes without a span in the window are left out. */
PRISM_API size_t prism_timeline_lane_count(const prism_timeline *t);
PRISM_API const prism_lane *prism_timeline_lane(const prism_timeline *t, size_t i);
/* Lanes beyond PRISM_TIMELINE_MAX_LANES that were left out. */
PRISM_API size_t prism_timeline_lanes_left_out(const prism_timeline *t);
/* Read windows through the chunk index (the default; on) or read the whole
 * file for every window (off; what foreign files always get).  Both give
 * the same spans; the switch is there to compare them. */
PRISM_API void prism_timeline_use_index(prism_timeline *t, bool on);
/* Times a window was read (a cached load reads nothing). */
PRISM_API uint64_t prism_timeline_reads(const prism_timeline *t);
/* Bytes of the files the last window read took (the profile's and its
 * worker files'; the indexes' own passes over them, once, not counted). */
PRISM_API uint64_t prism_timeline_bytes_read(const prism_timeline *t);

#ifdef __cplusplus
}
#endif
#endif /* PRISM_TIMELINE_H */
