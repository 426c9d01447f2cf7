/*
 * internal.h - libcollect's one per-process session and its parts
 * (internal; nothing here is public API).
 *
 * Threads write fixed-size events into buffers they own (collect.h's inline
 * hot path).  A buffer's fill level is published with a release store; the
 * writer thread reads it with an acquire load and encodes what is new, so a
 * partly filled buffer can be flushed while its thread keeps writing.  Full
 * buffers are handed to the writer under the session lock (the slow path)
 * and come back to the free list once encoded.
 */
#ifndef PRISM_COLLECT_INTERNAL_H
#define PRISM_COLLECT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "prism/collect.h"
#include "prism/profile.h"

typedef struct buffer {
    prism__event *ev;
    uint32_t cap;
    _Atomic uint32_t fill;      /* events published by the owner */
    uint32_t done;              /* events encoded by the writer */
    struct buffer *next;
} buffer;

/* A reading of a thread's scheduler accounting (cpusample.c). */
typedef struct cpu_reading {
    uint64_t on, wait;          /* cumulative on-CPU and run-queue ns */
    bool ok, have_wait;
} cpu_reading;

/* A thread's CPU sampling state (cpusample.c).  The thread sets `clock`
 * when it registers and `last` as it exits (under the lock); the rest
 * belongs to the writer thread. */
typedef struct cpu_thread {
    clockid_t clock;            /* the thread's CPU clock */
    bool clock_ok;
    cpu_reading last;           /* read by the thread itself at exit (lock) */
    int fd;                     /* writer: its schedstat, when src says so */
    uint8_t src;                /* writer: where its samples come from */
    bool sampled, have_wait;    /* writer: a sample written; with wait */
    uint64_t on, wait;          /* writer: the values last written */
} cpu_thread;

typedef struct prism__thread {
    uint32_t stream;
    uint64_t os_tid;
    char name[64];
    bool name_dirty;            /* THREADS record to write (lock) */
    buffer *cur;                /* the owner's buffer (lock to change) */
    buffer *full, *full_tail;   /* handed over, oldest first (lock) */
    bool dead;                  /* the thread exited (lock) */
    bool wait_expired;          /* WAIT: its last wait ran out (owner) */
    _Atomic uint64_t dropped;   /* events dropped, cumulative */
    /* writer-side state */
    uint64_t dropped_written;
    uint64_t seq;               /* chunks written on this stream */
    uint64_t last_ns;           /* timestamps never go backwards */
    uint32_t depth;             /* region nesting as encoded */
    cpu_thread cpu;             /* on-CPU sampling (cpusample.c) */
    struct prism__thread *next;
} prism__thread;

/* A step or memory record from the process-wide queue. */
typedef struct proc_rec {
    bool is_step;
    union { prism_step step; prism_memory_sample mem; } u;
    uint64_t ticks, ticks_end;  /* raw clock for steps/samples */
} proc_rec;

#define CLOCK_SEGS 48            /* clock segments: doubling spans, ~forever */

typedef struct session {
    prism_config cfg;
    char output[4096];
    char host[256];
    int fd;
    pid_t pid;
    int64_t rank;

    pthread_mutex_t lock;       /* threads, pool, queue, names */
    pthread_cond_t space;       /* a buffer came back (WAIT policy) */
    int wake_rd, wake_wr;       /* self-pipe: wakes the writer */
    pthread_t writer;
    bool writer_started;
    _Atomic int stopping;       /* shutdown asked */
    _Atomic int failed;         /* output failed: recording stopped */
    _Atomic int signo;          /* a terminating signal arrived */
    _Atomic int cpu_mode;       /* CPU sampler's source, cpusample.h; 0: off */

    prism_strtab *names;
    uint32_t names_written;     /* writer: ids already in STRINGS chunks */

    prism__thread *threads;
    uint32_t next_stream;
    buffer *free;
    size_t buffers, buffers_max;
    _Atomic size_t free_count;
    _Atomic int exhausted;      /* every buffer the budget allows exists */

    proc_rec *queue;            /* steps and memory samples (lock) */
    size_t nqueue, qcap;
    uint64_t queue_dropped;

    /* clock: ns = (ticks - t0) * ns_per_tick, refined as the run goes on
     * by segments that each start where the previous mapping left off, so
     * the conversion of a tick never changes once the tick has happened
     * (clock.c); with no segment (tests) the plain ratio applies */
    uint64_t t0_ticks, t0_mono;
    double ns_per_tick;
    struct clock_seg { uint64_t ticks, ns; double ns_per_tick; } segs[CLOCK_SEGS];
    _Atomic uint32_t nsegs;     /* published with release, read with acquire */

    /* steps (the thread that calls prism_step_*) */
    uint64_t step_index, epoch;
    uint64_t step_start;
    bool in_step;
    _Atomic uint32_t step_stream;   /* the stepping thread's stream, 0: none */
    bool step_stream_known;         /* (stepping thread only) */

    /* writer statistics */
    uint64_t events_written, chunks_written, seq0;
    uint64_t last_ts;
} session;

extern session *prism__s;       /* NULL before init and after a failed init */

/* clock.c */
void clock_init(session *s);
void clock_calibrate(session *s);
uint64_t clock_ns(session *s, uint64_t ticks);
/* The segment table (see clock.c): reset to one segment from t0 and the
 * present ratio; append one at tick t read with monotonic ns m, when due. */
void clock_segments_reset(session *s);
void clock_segment_add(session *s, uint64_t t, uint64_t m);
uint64_t clock_mono_ns(void);

/* config.c */
const char *cfg_policy_name(prism_policy p);
int cfg_expand_output(const prism_config *c, const char *host, int64_t rank,
                      char *out, size_t n);
int64_t cfg_rank(void);
size_t cfg_header_kv(const prism_config *c, prism_kv *kv, size_t n);

/* buffers.c */
void buffers_thread_exit(void *th);
void buffers_reset_tls(void);
/* Move a thread's current buffer to its full list (lock held). */
void buffers_hand_over(prism__thread *th);
/* The calling thread's record, registered on first use (NULL: no memory). */
prism__thread *buffers_self(session *s);
void buffers_free_all(session *s);
void session_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void session_fail(session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void session_wake(session *s);
/* Append to the process queue (lock held by the caller). */
void queue_push(session *s, const proc_rec *r);


/* writer.c */
void *writer_main(void *arg);
int writer_header(session *s, char *const *argv, size_t argc);

/* sampler.c */
int sampler_read(uint64_t *rss, uint32_t *cpu_permille, uint64_t *cpu_state);

#endif
