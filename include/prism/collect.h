/*
 * prism/collect.h - the instrumentation API of libcollect.
 *
 * One session per process.  Start it with prism_init() (a config struct, or
 * NULL for the PRISM_* environment variables); when PRISM_OUTPUT or
 * PRISM_ENABLED=1 is set, the library starts it from the environment as it
 * loads (before main), and a later prism_init() is a no-op.
 * Shutdown flushes, writes the footer and closes the file; it also runs at
 * exit.  With PRISM_DISABLE defined every call here, init and
 * configuration included, compiles to nothing: no library to link.
 *
 * C11 and C++11 or later (GCC, Clang): the declarations are extern "C";
 * in C++ PRISM_ZONE is a prism::zone object.  The inline calls are also
 * real functions of libprism.so / libprism.a (dlopen, ctypes).
 *
 * Hot path (prism_push_id / prism_pop / PRISM_ZONE): a clock read and a
 * 16-byte store into a thread-local buffer: no lock, no allocation, no
 * system call.  A writer thread encodes and writes the buffers.
 *
 * Nothing here ever aborts the program: on any failure the library warns
 * once on stderr and stops recording.
 */
#ifndef PRISM_COLLECT_H
#define PRISM_COLLECT_H

#include "prism/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Atomics, one layout in C and C++ (C++ before 23 has no _Atomic): C
 * declares the shared words _Atomic and reaches them through <stdatomic.h>;
 * C++ sees the same 4-byte integers, plain, and reaches them through the
 * GCC/Clang __atomic builtins.  Code in this header uses only these macros.
 */
#ifdef __cplusplus
#define PRISM__ATOMIC(T) T
#define PRISM__LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define PRISM__STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#include <stdatomic.h>
#define PRISM__ATOMIC(T) _Atomic T
#define PRISM__LOAD_RELAXED(p) atomic_load_explicit((p), memory_order_relaxed)
#define PRISM__STORE_RELEASE(p, v) atomic_store_explicit((p), (v), memory_order_release)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum prism_policy {
    PRISM_POLICY_DROP = 0,   /* buffers exhausted: count the event as dropped */
    PRISM_POLICY_WAIT = 1    /* buffers exhausted: wait for the writer (bounded) */
} prism_policy;

typedef struct prism_config {
    bool enabled;                 /* PRISM_ENABLED            default true     */
    bool collect_timing;          /* PRISM_COLLECT_TIMING     regions, marks   */
    bool collect_memory;          /* PRISM_COLLECT_MEMORY     RSS/CPU sampler  */
    bool collect_gpu_ops;         /* PRISM_COLLECT_GPU        CUPTI (GPU issue) */
    double sample_rate;           /* PRISM_SAMPLE_RATE        (0,1], default 1 */
    bool adaptive_sampling;       /* PRISM_ADAPTIVE           default false    */
    uint32_t adaptive_steps;      /* PRISM_ADAPTIVE_STEPS     dense early steps */
    uint32_t warmup_steps;        /* PRISM_WARMUP_STEPS       GPU window       */
    uint32_t active_steps;        /* PRISM_ACTIVE_STEPS       0 = every step   */
    uint32_t memory_interval_ms;  /* PRISM_MEMORY_INTERVAL_MS default 100      */
    uint32_t cpu_interval_ms;     /* PRISM_CPU_INTERVAL_MS    default 5: every
                                     recorded thread's on-CPU and run-queue
                                     time sampled this often; 0 = off       */
    uint32_t flush_interval_ms;   /* PRISM_FLUSH_INTERVAL_MS  default 100      */
    uint32_t buffer_events;       /* PRISM_BUFFER_EVENTS      per buffer, 16384 */
    uint32_t buffer_mb;           /* PRISM_BUFFER_MB          all buffers, 64  */
    prism_policy policy;          /* PRISM_POLICY             drop | wait      */
    const char *output;           /* PRISM_OUTPUT  %p pid, %h host, %r rank    */
    const char *output_dir;       /* PRISM_OUTPUT_DIR         prefix for output */
    double bottleneck_threshold_pct; /* PRISM_BOTTLENECK_PCT   for analysis, 10 */
    double memory_leak_threshold_mb; /* PRISM_LEAK_MB          for analysis, 10 */
} prism_config;

/* The defaults (documented in README.md, "Configuration"). */
PRISM_API void prism_config_default(prism_config *c);

/* The defaults themselves, in one place: prism_config_default() and, with
 * PRISM_DISABLE, the inline that stands in for it. */
static inline void prism__config_defaults(prism_config *c)
{
    __builtin_memset(c, 0, sizeof *c);
    c->enabled = true;
    c->collect_timing = true;
    c->collect_memory = true;
    c->collect_gpu_ops = true;
    c->sample_rate = 1.0;
    c->adaptive_sampling = false;
    c->adaptive_steps = 10;
    c->warmup_steps = 0;
    c->active_steps = 0;
    c->memory_interval_ms = 100;
    c->cpu_interval_ms = 5;
    c->flush_interval_ms = 100;
    c->buffer_events = 16384;
    c->buffer_mb = 64;
    c->policy = PRISM_POLICY_DROP;
    c->output = "prism-%p.cbor";
    c->output_dir = NULL;
    c->bottleneck_threshold_pct = 10.0;
    c->memory_leak_threshold_mb = 10.0;
}

/* Apply PRISM_* environment variables on top of *c.  A bad value gives one
 * warning on stderr and keeps the field's current value. */
PRISM_API void prism_config_from_env(prism_config *c);

/*
 * Start the session.  cfg NULL: defaults + environment.  Returns 0 when
 * recording (or when disabled by configuration), -1 when it could not start
 * (a warning was printed; the program goes on unprofiled).  A second call
 * while a session runs does nothing and returns 0.
 */
PRISM_API int prism_init(const prism_config *cfg);

/* Flush everything, write the footer, close the file, stop the writer.
 * Idempotent; also registered with atexit().  Threads still recording
 * afterwards are ignored. */
PRISM_API void prism_shutdown(void);

/* True while events are being recorded. */
PRISM_API bool prism_recording(void);

/* The output file's path once started (borrowed), else NULL. */
PRISM_API const char *prism_output_path(void);

/*
 * Worker processes.  A process that works for a recorded one (a
 * DataLoader worker, forked or spawned) records into a file of its own,
 * whose header names it worker `id` of the session (parent_pid,
 * parent_start_ns); readers merge such files found in the folder
 * "<profile>.workers" into that profile (docs/FORMAT.md, "Worker files").
 * A session inherited through fork() is left behind (it never writes) and
 * its names keep their ids here, so that names interned before the fork
 * (call sites, Python regions) stay right.  GPU collection is off in a
 * worker.  0: recording; -1 after one warning (a session of this process's
 * own runs already, or the output cannot be opened).
 */
typedef struct prism_worker_of {
    uint64_t parent_pid;
    uint64_t parent_start_ns;    /* the parent's prism_session_start_ns()      */
    uint64_t id;                 /* the worker's index among its siblings      */
} prism_worker_of;
PRISM_API int prism_init_worker(const prism_config *cfg, const prism_worker_of *w);

/* The session's start as its header gives it (ns since the Unix epoch of
 * timestamp 0): with the pid, what identifies it to its workers.  0 when
 * no session of this process records. */
PRISM_API uint64_t prism_session_start_ns(void);

/* ---- names ---------------------------------------------------------- */

/* Intern a name: the same name always gets the same id.  Thread-safe; takes
 * a lock, so call it once and keep the id.  0 when not recording. */
PRISM_API uint32_t prism_name(const char *name);

/* A call site's static record: the name is interned on first use only. */
typedef struct prism_site {
    const char *name;
    const char *file;
    uint32_t line;
    PRISM__ATOMIC(uint32_t) id;   /* 0 until interned */
} prism_site;

PRISM_API uint32_t prism__site_id(prism_site *s);       /* slow path: interns */

/* ---- the hot path -------------------------------------------------- */

typedef struct prism__event {
    uint64_t ts;                  /* raw clock ticks                          */
    uint32_t word;                /* kind (low 4 bits) | id << 4              */
    uint32_t aux;                 /* counters: high half of the value         */
} prism__event;

enum {
    PRISM__EV_ENTER = 1, PRISM__EV_EXIT = 2, PRISM__EV_MARK = 3,
    PRISM__EV_COUNTER_I = 4, PRISM__EV_COUNTER_F = 5
};

/* Per-thread state the inline functions touch (fields private). */
typedef struct prism__tls {
    prism__event *ev;             /* current buffer                           */
    uint32_t pos, cap;            /* next slot, the limit of the inline path  */
    PRISM__ATOMIC(uint32_t) *pub; /* the buffer's published fill level        */
    uint32_t skip;                /* open regions that were not recorded      */
    uint32_t resv;                /* slots kept at the end for the open
                                     recorded regions, 2 each: its exit and a
                                     count of regions not recorded under it  */
    struct prism__thread *th;
} prism__tls;

PRISM_API extern PRISM__ATOMIC(int) prism__on; /* recording regions right now           */
PRISM_API extern __thread prism__tls prism__t __attribute__((tls_model("initial-exec")));

/* The slow path (buffers.c): it reads the clock itself, when it records. */
PRISM_API void prism__event_slow(uint32_t word);

#if defined(__x86_64__) || defined(__i386__)
PRISM_API extern int prism__clock_tsc;
PRISM_API uint64_t prism__clock_mono(void);
static inline uint64_t prism__now(void)
{
    if (__builtin_expect(prism__clock_tsc, 1)) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
    return prism__clock_mono();
}
#else
PRISM_API uint64_t prism__clock_mono(void);
static inline uint64_t prism__now(void) { return prism__clock_mono(); }
#endif

/*
 * Whole regions or nothing: a region is recorded only when its exit is sure
 * to fit, so the buffer keeps `resv` slots at its end (pos + resv <= cap).
 * An enter needs its own slot and two more for the reserve; an exit always
 * finds its slot; a mark or counter must leave the reserve alone.  When an
 * enter cannot be stored its region is skipped whole (`skip`), and so is
 * everything inside it.  The slow path (buffers.c) takes over when a check
 * fails; it lowers `cap` to `pos` to see every event while it holds a count
 * of unrecorded regions to write.  `cap - pos` never wraps (pos <= cap).
 * The clock is read once the event is known to be stored: a dropped one
 * costs no clock read.
 */

/* Store one event (a mark); the slow path handles full or missing buffers. */
static inline void prism__emit(uint32_t word)
{
    prism__tls *t = &prism__t;
    uint32_t pos = t->pos;
    if (__builtin_expect(t->resv < t->cap - pos, 1)) {
        t->ev[pos].ts = prism__now();
        t->ev[pos].word = word;
        t->pos = pos + 1;
        PRISM__STORE_RELEASE(t->pub, pos + 1);
        return;
    }
    prism__event_slow(word);
}

/* Store an enter, reserving the slots of its exit; none inside a region
 * that was not recorded. */
static inline void prism__enter(uint32_t word)
{
    prism__tls *t = &prism__t;
    uint32_t pos = t->pos;
    if (__builtin_expect(t->skip == 0 && t->resv + 2 < t->cap - pos, 1)) {
        t->ev[pos].ts = prism__now();
        t->ev[pos].word = word;
        t->pos = pos + 1;
        t->resv += 2;
        PRISM__STORE_RELEASE(t->pub, pos + 1);
        return;
    }
    prism__event_slow(word);
}

/* Store the exit of a recorded region in its reserved slot (resv 0: no
 * recorded region is open; the slow path leaves it out). */
static inline void prism__exit(void)
{
    prism__tls *t = &prism__t;
    uint32_t pos = t->pos;
    if (__builtin_expect(t->resv - 1 < t->cap - pos, 1)) {
        t->ev[pos].ts = prism__now();
        t->ev[pos].word = PRISM__EV_EXIT;
        t->pos = pos + 1;
        t->resv -= 2;
        PRISM__STORE_RELEASE(t->pub, pos + 1);
        return;
    }
    prism__event_slow(PRISM__EV_EXIT);
}

/*
 * The inline calls below are also real functions of libprism.so and
 * libprism.a, under these names, for callers that cannot inline: dlopen,
 * ctypes, function pointers, other languages.  In C and C++ source each
 * name is a function-like macro for its inline version (prism__*);
 * (prism_pop)() or &prism_pop reach the real function.
 */
PRISM_API void prism_push_id(uint32_t id);
PRISM_API void prism_pop(void);
PRISM_API void prism_mark_id(uint32_t id);
PRISM_API void prism_counter_i(uint32_t id, int64_t value);
PRISM_API void prism_counter_f(uint32_t id, double value);
/* PRISM_ZONE's two halves: enter the region of a call site's static record
 * (interned on first use); leave the innermost region (as prism_pop). */
PRISM_API void prism_zone_begin(prism_site *site);
PRISM_API void prism_zone_end(void);

/*
 * The system as the memory sampler reads it (format 1.3's readings), now:
 * for a program or a layer that wants the figures of one block of its own
 * (take one before and one after, and subtract).  Raw readings, cumulative
 * since their sources started; UINT64_MAX where a source cannot be read.
 * Works with or without a session, from any thread; a few system calls
 * (about 20 us), never a lock of the session.  0, or -1 when out is NULL.
 */
typedef struct prism_system_reading {
    uint64_t mono_ns;            /* CLOCK_MONOTONIC                           */
    uint64_t rss, mem_total;     /* the process's resident set; MemTotal       */
    uint64_t io_read_bytes;      /* the process's storage reads
                                    (/proc/self/io read_bytes; not children)   */
    uint64_t io_write_bytes;
    uint64_t net_rx_bytes;       /* interfaces but lo (/proc/net/dev)          */
    uint64_t net_tx_bytes;
    uint64_t cpu_user_ns;        /* the process (getrusage)                    */
    uint64_t cpu_sys_ns;
    uint64_t cpu_energy_uj;      /* RAPL packages' counters summed (they wrap:
                                    a later reading below an earlier one is no
                                    difference)                                */
} prism_system_reading;
PRISM_API int prism_system_read(prism_system_reading *out);

#ifndef PRISM_DISABLE

#define prism_push_id(id) prism__push_id(id)
#define prism_pop() prism__pop()
#define prism_mark_id(id) prism__mark_id(id)
#define prism_counter_i(id, v) prism__counter_i((id), (v))
#define prism_counter_f(id, v) prism__counter_f((id), (v))
#define prism_zone_begin(site) ((void)prism__zone_begin(site))
#define prism_zone_end() prism__pop()

/* Enter a region by interned id. */
static inline void prism__push_id(uint32_t id)
{
    if (!PRISM__LOAD_RELAXED(&prism__on)) {
        prism__t.skip++;
        return;
    }
    prism__enter(id << 4 | PRISM__EV_ENTER);
}

/* Leave the innermost region. */
static inline void prism__pop(void)
{
    prism__tls *t = &prism__t;
    if (t->skip) {
        t->skip--;
        return;
    }
    prism__exit();
}

/* Enter a region by name: hashes the name on every call (a per-thread
 * cache keeps it lock-free after the first); prefer ids or PRISM_ZONE. */
PRISM_API void prism_push(const char *name);

/* Scoped region: the region ends when the enclosing block does.
 *     { PRISM_ZONE("forward"); ... }
 * C (GCC/Clang): a variable with a cleanup attribute.  C++: a prism::zone
 * object (end of this file), left by its destructor, also when an
 * exception unwinds the block; fine with -fno-exceptions. */
static inline int prism__zone_begin(prism_site *s)
{
    if (!PRISM__LOAD_RELAXED(&prism__on)) {
        prism__t.skip++;
        return 0;
    }
    uint32_t id = PRISM__LOAD_RELAXED(&s->id);
    if (__builtin_expect(id == 0, 0) && (id = prism__site_id(s)) == 0) {
        prism__t.skip++;            /* not recording after all */
        return 0;
    }
    prism__enter(id << 4 | PRISM__EV_ENTER);
    return 0;
}
static inline void prism__zone_end(int *unused) { (void)unused; prism_pop(); }

#define PRISM__CAT2(a, b) a##b
#define PRISM__CAT(a, b) PRISM__CAT2(a, b)
#ifdef __cplusplus
#define PRISM_ZONE(nm) \
    static prism_site PRISM__CAT(prism__site_, __LINE__) = { (nm), __FILE__, __LINE__, 0 }; \
    ::prism::zone PRISM__CAT(prism__zone_, __LINE__)(&PRISM__CAT(prism__site_, __LINE__))
#else
#define PRISM_ZONE(nm) \
    static prism_site PRISM__CAT(prism__site_, __LINE__) = { (nm), __FILE__, __LINE__, 0 }; \
    __attribute__((cleanup(prism__zone_end), unused)) int PRISM__CAT(prism__zone_, __LINE__) = \
        prism__zone_begin(&PRISM__CAT(prism__site_, __LINE__))
#endif

/* Begin/end pair with a call-site record, for compilers without cleanup. */
#define PRISM_REGION_BEGIN(nm) do { \
        static prism_site prism__s_ = { (nm), __FILE__, __LINE__, 0 }; \
        prism__zone_begin(&prism__s_); } while (0)
#define PRISM_REGION_END() prism_pop()

/* An instant event. */
static inline void prism__mark_id(uint32_t id)
{
    if (PRISM__LOAD_RELAXED(&prism__on))
        prism__emit(id << 4 | PRISM__EV_MARK);
}
PRISM_API void prism_mark_name(const char *name);

/* Counters: recorded in every step, sampled or not.  Two slots: the
 * value's bits ride in the second event's timestamp field. */
PRISM_API extern PRISM__ATOMIC(int) prism__counting;   /* a session runs with timing on */
PRISM_API void prism__counter_slow(uint32_t word, uint64_t bits, uint64_t ts);

static inline void prism__counter_emit(uint32_t word, uint64_t bits)
{
    if (!PRISM__LOAD_RELAXED(&prism__counting))
        return;
    uint64_t ts = prism__now();
    prism__tls *t = &prism__t;
    uint32_t pos = t->pos;
    if (__builtin_expect(t->resv + 1 < t->cap - pos, 1)) {
        t->ev[pos].ts = ts;
        t->ev[pos].word = word;
        t->ev[pos].aux = 0;
        t->ev[pos + 1].ts = bits;
        t->ev[pos + 1].word = 0;
        t->ev[pos + 1].aux = 0;
        t->pos = pos + 2;
        PRISM__STORE_RELEASE(t->pub, pos + 2);
        return;
    }
    prism__counter_slow(word, bits, ts);
}

static inline void prism__counter_i(uint32_t id, int64_t value)
{
    if (id)
        prism__counter_emit(id << 4 | PRISM__EV_COUNTER_I, (uint64_t)value);
}

static inline void prism__counter_f(uint32_t id, double value)
{
    uint64_t bits;                  /* the double's bits, in C and C++ alike */
    __builtin_memcpy(&bits, &value, sizeof bits);
    if (id)
        prism__counter_emit(id << 4 | PRISM__EV_COUNTER_F, bits);
}

/* Name the calling thread in the profile. */
PRISM_API void prism_thread_name(const char *name);

/* ---- GPU memory from the program ------------------------------------ */

/* The program's own reading of a GPU's memory (a framework's allocator:
 * torch.cuda.memory_allocated / memory_reserved), in bytes, for a CUDA
 * ordinal below 16 (higher ones are ignored).  The memory samples taken
 * after the call (the writer takes one after each step ends) carry these
 * figures for that device instead of NVML's, and carry the device even
 * where NVML is absent.  Lock-free; no system call; callable from any
 * thread, before or without a session (then it does nothing visible). */
PRISM_API void prism_gpu_memory(uint32_t device, uint64_t used, uint64_t reserved);

/* ---- GPU time per stream (CUPTI) --------------------------------------- */

/* One CUDA stream's kernels in a window (prism_gpu_streams_end). */
typedef struct prism_gpu_stream_time {
    uint32_t device;            /* CUDA ordinal                              */
    uint32_t stream;            /* CUPTI's stream id (not a cudaStream_t)    */
    uint64_t kernels;           /* kernels that started in the window        */
    uint64_t busy_ns;           /* their durations, summed                   */
} prism_gpu_stream_time;
#define PRISM_GPU_STREAMS_MAX 64    /* streams a window tells apart */

/* Open a window: from now on the kernels CUPTI hands PRISM are summed per
 * stream, from the same records the profile gets (no second timing).
 * Returns 0, or -1 when CUPTI does not record kernels in this process now
 * (no GPU, no session, GPU collection off, another CUPTI client): nothing
 * is summed.  One window per process: a new begin restarts it. */
PRISM_API int prism_gpu_streams_begin(void);
/* Close the window: CUPTI hands over what it holds (a forced flush: kernels
 * still running are not in it, so synchronise the device first), and out[]
 * gets at most max streams, the busiest first.  Returns how many streams
 * ran kernels in the window (more than max: the rest not copied, at most
 * PRISM_GPU_STREAMS_MAX told apart), or -1 (no window open, or CUPTI
 * stopped recording meanwhile). */
PRISM_API int prism_gpu_streams_end(prism_gpu_stream_time *out, uint32_t max);

/* ---- steps ---------------------------------------------------------- */

/* Mark an iteration.  Decides whether the step's regions are recorded
 * (sample_rate, adaptive_sampling); every step's duration is recorded.
 * Call both from one thread (the training loop's).  Each reads the clock
 * and queues the step for the writer thread: no system call, no lock (but
 * when 1024 steps wait for the writer); the writer samples memory for the
 * steps that ended (collect_memory). */
PRISM_API void prism_step_begin(void);
PRISM_API void prism_step_end(void);
/* Set the epoch number carried by the following steps. */
PRISM_API void prism_epoch(uint64_t epoch);
/* The index of the current (or next) step. */
PRISM_API uint64_t prism_step_index(void);

#else  /* PRISM_DISABLE: every call compiles to nothing; no library needed */

/* Arguments sit behind a constant false &&: never evaluated, yet the
 * variables and functions a program keeps only for its instrumentation stay
 * "used" (no -Wunused warnings in a disabled build, GCC or Clang). */
#define PRISM__USE(x) ((void)(0 && ((void)(x), 1)))

/* A call that returns a value ends in an inline function's result: the
 * value is there for code that reads it, and a call whose result is
 * dropped warns about nothing ("statement with no effect"). */
static inline int prism__off_int(void) { return 0; }
static inline bool prism__off_bool(void) { return false; }
static inline uint32_t prism__off_u32(void) { return 0; }
static inline uint64_t prism__off_u64(void) { return 0; }
static inline const char *prism__off_str(void) { return NULL; }

#define prism_config_default(c) prism__config_defaults(c)
#define prism_config_from_env(c) PRISM__USE(c)
#define prism_init(cfg) (PRISM__USE(cfg), prism__off_int())
#define prism_shutdown() ((void)0)
#define prism_recording() prism__off_bool()
#define prism_output_path() prism__off_str()
#define prism_init_worker(cfg, w) (PRISM__USE(cfg), PRISM__USE(w), prism__off_int())
#define prism_session_start_ns() prism__off_u64()
#define prism_name(name) (PRISM__USE(name), prism__off_u32())
#define prism_push_id(id) PRISM__USE(id)
#define prism_pop() ((void)0)
#define prism_push(name) PRISM__USE(name)
#define PRISM_ZONE(nm) typedef int PRISM__CAT(prism__unused_, __LINE__) __attribute__((unused))
#define PRISM__CAT2(a, b) a##b
#define PRISM__CAT(a, b) PRISM__CAT2(a, b)
#define PRISM_REGION_BEGIN(nm) ((void)0)
#define PRISM_REGION_END() ((void)0)
#define prism_mark_id(id) PRISM__USE(id)
#define prism_mark_name(name) PRISM__USE(name)
#define prism_counter_i(id, v) (PRISM__USE(id), PRISM__USE(v))
#define prism_counter_f(id, v) (PRISM__USE(id), PRISM__USE(v))
#define prism_thread_name(name) PRISM__USE(name)
#define prism_gpu_memory(d, u, r) (PRISM__USE(d), PRISM__USE(u), PRISM__USE(r))
#define prism_system_read(r) (PRISM__USE(r), prism__off_int() - 1)
#define prism_gpu_streams_begin() (prism__off_int() - 1)
#define prism_gpu_streams_end(o, m) (PRISM__USE(o), PRISM__USE(m), prism__off_int() - 1)
#define prism_step_begin() ((void)0)
#define prism_step_end() ((void)0)
#define prism_epoch(e) PRISM__USE(e)
#define prism_step_index() prism__off_u64()
#define prism_zone_begin(site) PRISM__USE(site)
#define prism_zone_end() ((void)0)

#endif /* PRISM_DISABLE */

#ifdef __cplusplus
}  /* extern "C" */

namespace prism {
/* A region for the lifetime of the object, what PRISM_ZONE declares in
 * C++: the constructor enters the site's region, the destructor leaves it
 * (also during exception unwinding).  Throws nothing.  With PRISM_DISABLE
 * it is an empty object. */
class zone {
public:
#ifndef PRISM_DISABLE
    explicit zone(prism_site *site) noexcept : state_(prism__zone_begin(site)) {}
    ~zone() { prism__zone_end(&state_); }
#else
    explicit zone(prism_site *site) noexcept { (void)site; }
#endif
    zone(const zone &) = delete;
    zone &operator=(const zone &) = delete;

private:
#ifndef PRISM_DISABLE
    int state_;
#endif
};
}  /* namespace prism */
#endif
#endif /* PRISM_COLLECT_H */
