/*
 * prism/collect.h - the instrumentation API of libcollect.
 *
 * One session per process.  Start it with prism_init() (a config struct, or
 * NULL for the PRISM_* environment variables); when PRISM_OUTPUT or
 * PRISM_ENABLED=1 is set, the library starts it from the environment as it
 * loads (before main), and a later prism_init() is a no-op.
 * Shutdown flushes, writes the footer and closes the file; it also runs at
 * exit.  With PRISM_DISABLE defined every macro and inline call here
 * compiles to nothing.
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

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
void prism_config_default(prism_config *c);

/* Apply PRISM_* environment variables on top of *c.  A bad value gives one
 * warning on stderr and keeps the field's current value. */
void prism_config_from_env(prism_config *c);

/*
 * Start the session.  cfg NULL: defaults + environment.  Returns 0 when
 * recording (or when disabled by configuration), -1 when it could not start
 * (a warning was printed; the program goes on unprofiled).  A second call
 * while a session runs does nothing and returns 0.
 */
int prism_init(const prism_config *cfg);

/* Flush everything, write the footer, close the file, stop the writer.
 * Idempotent; also registered with atexit().  Threads still recording
 * afterwards are ignored. */
void prism_shutdown(void);

/* True while events are being recorded. */
bool prism_recording(void);

/* The output file's path once started (borrowed), else NULL. */
const char *prism_output_path(void);

/* ---- names ---------------------------------------------------------- */

/* Intern a name: the same name always gets the same id.  Thread-safe; takes
 * a lock, so call it once and keep the id.  0 when not recording. */
uint32_t prism_name(const char *name);

/* A call site's static record: the name is interned on first use only. */
typedef struct prism_site {
    const char *name;
    const char *file;
    uint32_t line;
    _Atomic uint32_t id;
} prism_site;

uint32_t prism__site_id(prism_site *s);       /* slow path: interns */

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
    uint32_t pos, cap;            /* next slot, capacity (0 when none)        */
    _Atomic uint32_t *pub;        /* the buffer's published fill level        */
    uint32_t skip;                /* open regions that were not recorded      */
    struct prism__thread *th;
} prism__tls;

extern _Atomic int prism__on;     /* recording regions right now              */
extern __thread prism__tls prism__t __attribute__((tls_model("initial-exec")));

void prism__event_slow(uint32_t word, uint64_t ts);

#if defined(__x86_64__) || defined(__i386__)
extern int prism__clock_tsc;
uint64_t prism__clock_mono(void);
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
uint64_t prism__clock_mono(void);
static inline uint64_t prism__now(void) { return prism__clock_mono(); }
#endif

/* Store one event; the slow path handles full or missing buffers. */
static inline void prism__emit(uint32_t word, uint64_t ts)
{
    prism__tls *t = &prism__t;
    uint32_t pos = t->pos;
    if (__builtin_expect(pos < t->cap, 1)) {
        t->ev[pos].ts = ts;
        t->ev[pos].word = word;
        t->pos = pos + 1;
        atomic_store_explicit(t->pub, pos + 1, memory_order_release);
        return;
    }
    prism__event_slow(word, ts);
}

#ifndef PRISM_DISABLE

/* Enter a region by interned id. */
static inline void prism_push_id(uint32_t id)
{
    if (!atomic_load_explicit(&prism__on, memory_order_relaxed)) {
        prism__t.skip++;
        return;
    }
    prism__emit(id << 4 | PRISM__EV_ENTER, prism__now());
}

/* Leave the innermost region. */
static inline void prism_pop(void)
{
    prism__tls *t = &prism__t;
    if (t->skip) {
        t->skip--;
        return;
    }
    prism__emit(PRISM__EV_EXIT, prism__now());
}

/* Enter a region by name: hashes the name on every call (a per-thread
 * cache keeps it lock-free after the first); prefer ids or PRISM_ZONE. */
void prism_push(const char *name);

/* Scoped region (GCC/Clang): the region ends when the enclosing block does.
 *     { PRISM_ZONE("forward"); ... }                                       */
static inline int prism__zone_begin(prism_site *s)
{
    if (!atomic_load_explicit(&prism__on, memory_order_relaxed)) {
        prism__t.skip++;
        return 0;
    }
    uint32_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
    if (__builtin_expect(id == 0, 0) && (id = prism__site_id(s)) == 0) {
        prism__t.skip++;            /* not recording after all */
        return 0;
    }
    prism__emit(id << 4 | PRISM__EV_ENTER, prism__now());
    return 0;
}
static inline void prism__zone_end(int *unused) { (void)unused; prism_pop(); }

#define PRISM__CAT2(a, b) a##b
#define PRISM__CAT(a, b) PRISM__CAT2(a, b)
#define PRISM_ZONE(nm) \
    static prism_site PRISM__CAT(prism__site_, __LINE__) = { (nm), __FILE__, __LINE__, 0 }; \
    __attribute__((cleanup(prism__zone_end), unused)) int PRISM__CAT(prism__zone_, __LINE__) = \
        prism__zone_begin(&PRISM__CAT(prism__site_, __LINE__))

/* Begin/end pair with a call-site record, for compilers without cleanup. */
#define PRISM_REGION_BEGIN(nm) do { \
        static prism_site prism__s_ = { (nm), __FILE__, __LINE__, 0 }; \
        prism__zone_begin(&prism__s_); } while (0)
#define PRISM_REGION_END() prism_pop()

/* An instant event. */
static inline void prism_mark_id(uint32_t id)
{
    if (atomic_load_explicit(&prism__on, memory_order_relaxed))
        prism__emit(id << 4 | PRISM__EV_MARK, prism__now());
}
void prism_mark_name(const char *name);

/* Counters: recorded in every step, sampled or not.  Two slots: the
 * value's bits ride in the second event's timestamp field. */
extern _Atomic int prism__counting;   /* a session runs with timing on */
void prism__counter_slow(uint32_t word, uint64_t bits, uint64_t ts);

static inline void prism__counter_emit(uint32_t word, uint64_t bits)
{
    if (!atomic_load_explicit(&prism__counting, memory_order_relaxed))
        return;
    uint64_t ts = prism__now();
    prism__tls *t = &prism__t;
    uint32_t pos = t->pos;
    if (__builtin_expect(pos + 2 <= t->cap, 1)) {
        t->ev[pos].ts = ts;
        t->ev[pos].word = word;
        t->ev[pos].aux = 0;
        t->ev[pos + 1].ts = bits;
        t->ev[pos + 1].word = 0;
        t->ev[pos + 1].aux = 0;
        t->pos = pos + 2;
        atomic_store_explicit(t->pub, pos + 2, memory_order_release);
        return;
    }
    prism__counter_slow(word, bits, ts);
}

static inline void prism_counter_i(uint32_t id, int64_t value)
{
    if (id)
        prism__counter_emit(id << 4 | PRISM__EV_COUNTER_I, (uint64_t)value);
}

static inline void prism_counter_f(uint32_t id, double value)
{
    union { double d; uint64_t u; } bits = { .d = value };
    if (id)
        prism__counter_emit(id << 4 | PRISM__EV_COUNTER_F, bits.u);
}

/* Name the calling thread in the profile. */
void prism_thread_name(const char *name);

/* ---- steps ---------------------------------------------------------- */

/* Mark an iteration.  Decides whether the step's regions are recorded
 * (sample_rate, adaptive_sampling); every step's duration is recorded. */
void prism_step_begin(void);
void prism_step_end(void);
/* Set the epoch number carried by the following steps. */
void prism_epoch(uint64_t epoch);
/* The index of the current (or next) step. */
uint64_t prism_step_index(void);

#else  /* PRISM_DISABLE: everything compiles to nothing */

/* Arguments sit behind a constant false &&: never evaluated, yet the
 * variables and functions a program keeps only for its instrumentation stay
 * "used" (no -Wunused warnings in a disabled build, GCC or Clang). */
#define PRISM__USE(x) ((void)(0 && ((void)(x), 1)))

#define prism_init(cfg) ((void)(cfg), 0)
#define prism_shutdown() ((void)0)
#define prism_recording() false
#define prism_name(name) (PRISM__USE(name), (uint32_t)0)
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
#define prism_step_begin() ((void)0)
#define prism_step_end() ((void)0)
#define prism_epoch(e) PRISM__USE(e)
#define prism_step_index() ((uint64_t)0)

#endif /* PRISM_DISABLE */

#ifdef __cplusplus
}
#endif
#endif /* PRISM_COLLECT_H */
