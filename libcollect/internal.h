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

/* An event kind of the buffers only (collect.h has the others): `gap`
 * regions were not recorded under the innermost recorded open region;
 * the count's high bits ride in the word's id bits, its low 32 in aux. */
#define EV_GAP 6u

typedef struct buffer {
    prism__event *ev;
    uint32_t cap;
    _Atomic uint32_t fill;      /* events published by the owner */
    uint32_t done;              /* events encoded by the writer */
    bool spare;                 /* outside the pool, freed once encoded: a
                                   thread's room for the exits it owes while
                                   its full buffer goes to the writer */
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
    /* writer: a reading equal to the last written (an idle thread), held
     * back until the thread changes: its time and flags */
    bool held;
    uint32_t held_flags;
    uint64_t held_ticks;
    /* writer: when the last reading was taken (held or not), whether the
     * thread was then waiting for a CPU; its /proc/self/task/TID/stat and
     * status while open, for its state at a sample; its voluntary context
     * switches when status was last read (nvcsw_ok), and whether a state
     * read saw it blocked since (cpusample.c, state_now) */
    uint64_t read_ticks;
    bool queued, stat_open, status_open, nvcsw_ok, slept;
    int stat_fd, status_fd;
    uint64_t nvcsw;
} cpu_thread;

typedef struct prism__thread {
    uint32_t stream;
    uint64_t os_tid;
    char name[64];
    bool name_dirty;            /* THREADS record to write (lock) */
    buffer *cur;                /* the owner's buffer (lock to change) */
    buffer *full, *full_tail;   /* handed over, oldest first (lock) */
    bool dead;                  /* the thread exited (lock) */
    bool gpu_only;              /* made from a CUPTI API record's thread id
                                   (cupti_drain.c): the thread itself has not
                                   recorded yet; it adopts this record when
                                   it does (buffers.c), one track (lock) */
    bool wait_expired;          /* WAIT: its last wait ran out (owner) */
    _Atomic uint64_t dropped;   /* events dropped, cumulative (writer) */
    /* Whole regions dropped (the owner, buffers.c).  The counts have one
     * writer, the owner, so they need no locked instruction; the writer
     * thread reads them. */
    _Atomic uint64_t drop_ev;   /* events dropped (a region: 2), cumulative */
    _Atomic uint64_t drop_regions;  /* regions not recorded, cumulative */
    uint64_t gap;               /* regions not recorded under the innermost
                                   recorded open region, not yet written */
    bool dropping;              /* the skipped regions began with a drop */
    /* writer-side state */
    uint64_t dropped_written, regions_written;
    uint64_t seq;               /* chunks written on this stream */
    uint64_t last_ns;           /* timestamps never go backwards */
    uint32_t depth;             /* region nesting as encoded */
    cpu_thread cpu;             /* on-CPU sampling (cpusample.c) */
    struct prism__thread *next;
} prism__thread;

/* A step as the stepping thread hands it to the writer (steps.c). */
typedef struct step_rec {
    uint64_t ticks, ticks_end;  /* raw clock: begin, end */
    uint64_t index, epoch;
    uint32_t flags;             /* PRISM_STEP_* */
} step_rec;

#define STEP_RING 1024u         /* steps in flight to the writer (power of 2) */

/* The steps on their way from the stepping thread to the writer (steps.c):
 * one producer, the thread calling prism_step_*; one consumer at a time,
 * whoever holds the session lock.  Each side's counter has its own cache
 * line. */
typedef struct step_ring {
    _Atomic uint64_t tail;      /* records put (producer; release) */
    uint64_t head_seen;         /* producer: head at its last look */
    _Alignas(64) _Atomic uint64_t head;  /* records taken (lock; release) */
    _Alignas(64) step_rec rec[STEP_RING];
} step_ring;

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
    char hidden[4096 + 16];     /* the new file's name until its header is in
                                   (session.c open_output), else "" */
    char host[256];
    int fd;
    pid_t pid;
    int64_t rank;
    uint64_t world_size;        /* pc_cfg_world_size: INFO job.world_size */

    pthread_mutex_t lock;       /* threads, pool, queue, names */
    pthread_cond_t space;       /* a buffer came back (WAIT policy) */
    int wake_rd, wake_wr;       /* self-pipe: wakes the writer */
    pthread_t writer;
    bool writer_started;
    _Atomic int stopping;       /* shutdown asked */
    _Atomic int failed;         /* output failed: recording stopped */
    _Atomic int signo;          /* a terminating signal arrived */
    _Atomic int writer_done;    /* the writer thread will re-raise no signal
                                   from now on (session.c raises it) */
    bool fifo;                  /* the output is a FIFO, written O_NONBLOCK */
    uint64_t grace_ns;          /* PRISM_SHUTDOWN_TIMEOUT_MS: how long the
                                   writer may still write after a stop was
                                   asked (shutdown, a signal) */
    _Atomic int cpu_mode;       /* CPU sampler's source, cpusample.h; 0: off */
    _Atomic int cpu_paused;     /* pc_cpu_pause: no passes, no wake-ups for them */

    /* a worker session (prism_init_worker): its index and its parent's
     * identity, written in the header; worker_id -1: not a worker */
    int64_t worker_id;
    uint64_t parent_pid, parent_start_ns;
    uint64_t start_unix_ns;     /* the header's start (prism_session_start_ns) */

    prism_strtab *names;
    uint32_t names_written;     /* writer: ids already in STRINGS chunks */

    prism__thread *threads;
    uint32_t next_stream;
    uint32_t gpu_only_threads;  /* of them, gpu_only (lock) */
    buffer *free;
    size_t buffers, buffers_max;
    _Atomic size_t free_count;
    _Atomic int exhausted;      /* every buffer the budget allows exists */
    /* writer.c: 0, a buffer handed over wakes the writer; n, only when
     * fewer than n buffers are left (it collects them on a timer) */
    _Atomic size_t wake_below;

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

    /* steps (steps.c; the thread that calls prism_step_*): on cache lines
     * of their own, away from what the writer keeps writing */
    _Alignas(64) uint64_t step_index, epoch;
    uint64_t step_start;
    uint32_t step_flags;        /* prism__step_flag: the open step's extra flags */
    uint64_t step_mark;         /* prism__step_mark: where the step's work ended
                                   (0: none); an open step ends there at shutdown */
    bool in_step;
    bool step_rec;                  /* this step records its regions */
    _Atomic uint32_t step_stream;   /* the stepping thread's stream, 0: none */
    bool step_stream_known;         /* (stepping thread only) */
    uint64_t step_stride;           /* sampling: every k-th step; 0: not yet */
    _Atomic uint64_t steps_ended;   /* index + 1 of the last step ended (release) */
    _Atomic int forked;             /* in a forked child (session.c): no steps */
    step_ring steps;
    /* writer: steps_ended as of its last memory sample (sampler.c) */
    _Alignas(64) _Atomic uint64_t mem_steps;

    /* sampled call stacks (stacks.c; lock) */
    uint32_t *stk;
    size_t nstk, stkcap;
    uint64_t stk_dropped, stk_period_ns;
    char stk_status[192];
    bool stk_status_dirty;

    /* facts for INFO chunks (info.c; lock) */
    struct pc_info *info;
    uint32_t ninfo;

    /* writer statistics */
    uint64_t events_written, chunks_written, seq0;
    /* writer: the program's own progress, for the CUPTI watch (cupti.c): its
     * regions, marks and counters written (not PRISM's samples, not GPU
     * records), and the on-CPU ns of its recorded threads since they were
     * first sampled (cpusample.c) */
    uint64_t program_events, threads_on_ns;
    uint64_t last_ts;
    void *writer_state;           /* the writer's state (writer.c), while it
                                     runs: reachable from here            */
} session;

PRISM_API extern session *prism__s;
/* The open step's work ended here: if nothing ends the step before
 * shutdown, it ends at this mark (steps.c; the zero-code PyTorch step keeps
 * a step open after optimizer.step for the code that follows it). */
PRISM_API void prism__step_mark(void);
/* Forget the open step: no record (a step begun by a DataLoader's next()
 * that raised StopIteration: the epoch ended, no iteration began). */
PRISM_API void prism__step_cancel(void);
/* Flags (PRISM_STEP_OPS) for the open step's record. */
PRISM_API void prism__step_flag(uint32_t bits);
/* The calling thread marks the steps (INFO steps.thread): the zero-code
 * PyTorch step learns which thread trains at its first optimizer step,
 * after another thread's forward may have begun the first step. */
PRISM_API void prism__step_thread(void);
void pc_step_close_at_mark(session *s);

/* stacks.c: sampled call stacks from a sampler outside libcollect (the
 * Python module's).  prism__stacks_wanted, set before prism_init, makes the
 * header say 1.2 (the file may hold STACKS chunks).  begin/end give the
 * sampler's state for INFO stacks.sampler and the time one sample stands
 * for (stacks.period_ns); stream is the recorded thread's stream (0: the
 * OS thread records nothing); put queues one sample taken at `ticks`
 * (prism__now()) after the sampler waited wait_ns for the GIL, queued_ns of
 * it runnable but off a CPU (each kept up to UINT32_MAX ns), false when
 * dropped.  Any thread; never blocks for long. */
PRISM_API extern bool prism__stacks_wanted;
PRISM_API bool prism__stack_begin(uint64_t period_ns, const char *what);
PRISM_API void prism__stack_end(const char *why);
PRISM_API uint32_t prism__stack_stream(uint64_t os_tid);
PRISM_API bool prism__stack_put(uint32_t stream, uint64_t ticks, uint32_t flags,
                                const uint32_t *frames, uint32_t n, uint64_t wait_ns,
                                uint64_t queued_ns);
/* info.c: facts learnt while running (the Python module's folded module
 * regions), queued for the writer's next flush as INFO key/value pairs;
 * false when not queued (no session, a bad key, 64 waiting).  Any thread.
 * The writer takes the list (lock held), walks it and frees it. */
PRISM_API bool prism__info_text(const char *key, const char *text);
PRISM_API bool prism__info_uint(const char *key, uint64_t value);
typedef struct pc_info pc_info;
pc_info *pc_info_take(session *s);
const pc_info *pc_info_next(const pc_info *e);
const char *pc_info_key(const pc_info *e, const prism_value **v);
void pc_info_free(pc_info *l);

/* The writer's side: take the queue (lock held), walk it, free it. */
typedef struct pc_stacks {
    uint32_t *w;
    size_t n;
    uint64_t dropped, period_ns;
    bool status_changed;
    char status[192];
} pc_stacks;
void pc_stacks_take(session *s, pc_stacks *out);
bool pc_stacks_next(const pc_stacks *q, size_t *pos, uint64_t *ticks, prism_stack_sample *x);
void pc_stacks_free(session *s);       /* NULL before init and after a failed init */

/* clock.c */
void pc_clock_init(session *s);
void pc_clock_calibrate(session *s);
uint64_t pc_clock_ns(session *s, uint64_t ticks);
/* The segment table (see clock.c): reset to one segment from t0 and the
 * present ratio; append one at tick t read with monotonic ns m, when due. */
void pc_clock_segments_reset(session *s);
void pc_clock_segment_add(session *s, uint64_t t, uint64_t m);
uint64_t pc_clock_mono_ns(void);

/* A segment's mapping: ns at its start plus the ticks since, scaled.  The
 * one formula of pc_clock_ns() and of clock_run_ns(), so both agree exactly. */
static inline uint64_t clock_seg_map(uint64_t ns, uint64_t dticks, double ns_per_tick)
{
    return ns + (uint64_t)((double)dticks * ns_per_tick);
}

/* One segment hoisted out of a loop over ticks: ticks in [lo, lo + span)
 * become ns + (ticks - base) scaled.  pc_clock_run_at() finds the range
 * holding `ticks`. */
typedef struct clock_run {
    uint64_t lo, span, base, ns;
    double ns_per_tick;
} clock_run;
void pc_clock_run_at(session *s, uint64_t ticks, clock_run *c);

/* pc_clock_ns(s, ticks), bit for bit, when ticks lies in c's range; false
 * (nothing stored) when it does not. */
static inline bool clock_run_ns(const clock_run *c, uint64_t ticks, uint64_t *ns)
{
    if (ticks - c->lo >= c->span)
        return false;
    *ns = clock_seg_map(c->ns, ticks - c->base, c->ns_per_tick);
    return true;
}

/* session.c: a terminating signal, once the file is complete: to the
 * handler a worker session chained (SIGTERM), else the default. */
void pc_session_deliver(int sig);

/* config.c */
const char *pc_cfg_policy_name(prism_policy p);
/* PRISM_SHUTDOWN_TIMEOUT_MS (default 2000) in ns: session.grace_ns. */
uint64_t pc_cfg_grace_ns(void);
int pc_cfg_expand_output(const prism_config *c, const char *host, int64_t rank,
                      char *out, size_t n);
int64_t pc_cfg_rank(void);
/* The number of ranks of the job (WORLD_SIZE, OMPI_COMM_WORLD_SIZE,
 * SLURM_NTASKS, PMI_SIZE); 0 when none says. */
uint64_t pc_cfg_world_size(void);
size_t pc_cfg_header_kv(const prism_config *c, prism_kv *kv, size_t n);

/* In a forked child: the fork handler (session.c) set the flag; no
 * getpid(), which is a system call. */
static inline bool session_forked(session *s)
{
    return atomic_load_explicit(&s->forked, memory_order_relaxed) != 0;
}

/* buffers.c */
void pc_buffers_thread_exit(void *th);
void pc_buffers_reset_tls(void);
/* Move a thread's current buffer to its full list (lock held). */
void pc_buffers_hand_over(prism__thread *th);
/* The calling thread's record, registered on first use (NULL: no memory). */
prism__thread *pc_buffers_self(session *s);
void pc_buffers_free_all(session *s);
void pc_session_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pc_session_fail(session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pc_session_wake(session *s);
/* Append to the process queue (lock held by the caller). */
void pc_queue_push(session *s, const proc_rec *r);


/* writer.c */
void *pc_writer_main(void *arg);
/* Whether a buffer handed over now must wake the writer (lock held). */
bool pc_writer_wake_wanted(session *s);
int pc_writer_header(session *s, char *const *argv, size_t argc);

/* steps.c (the step functions themselves are public: collect.h) */
/* Move the steps in flight to the process queue (lock held). */
void pc_steps_take(session *s);
/* Steps in flight: a hint, read without the lock. */
bool pc_steps_pending(const session *s);

#endif
