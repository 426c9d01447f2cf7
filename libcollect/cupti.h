/*
 * cupti.h - the GPU half of the session (internal): CUPTI activity records
 * turned into profile records, NVTX ranges turned into regions, GPU memory
 * from NVML, and the hooks the rest of libcollect calls.
 *
 * Nothing here links CUDA: libcupti, libcuda and libnvidia-ml are opened
 * with dlopen at run time, every function through dlsym.  The CUPTI part is
 * compiled only when the CUPTI headers were found at build time
 * (PRISM_HAVE_CUPTI_HEADERS); without them the hooks are a CPU-only backend that
 * records why GPU activity is missing.
 *
 * Timestamps.  The file's timeline is pc_clock_ns(ticks): the session's raw
 * clock (rdtsc or CLOCK_MONOTONIC, prism__now()) converted with a ratio the
 * writer refines at every flush.  CUPTI is given a timestamp callback
 * (cuptiActivityRegisterTimestampCallback) that returns the session clock
 * as nanoseconds:  origin + (ticks - t0) * ratio0,  with ratio0 frozen when
 * CUPTI attaches and origin = the session's start_mono_ns (so the values
 * look like CLOCK_MONOTONIC and are never 0, which CUPTI reads as "no
 * timestamp").  CUPTI stamps CPU-side records (runtime API calls) with it
 * directly and maps GPU timestamps onto it by linear interpolation.  The
 * writer inverts the mapping (cupti_clock_ticks: the last tick of that
 * whole ns, never before the tick a CPU-side record was stamped at) and
 * converts the ticks with pc_clock_ns, the same conversion, with the same ratio, that the
 * CPU events of that flush get: a kernel and the region that launched it
 * sit on one timeline however the calibration moves.
 */
#ifndef PRISM_COLLECT_CUPTI_H
#define PRISM_COLLECT_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* ---- the clock handed to CUPTI (pure, cupti_translate.c) --------------- */

typedef struct cupti_clock {
    uint64_t origin;            /* CUPTI ns at tick t0 (start_mono_ns)      */
    uint64_t t0;                /* the session's t0_ticks                    */
    double ns_per_tick;         /* frozen when CUPTI attaches                */
} cupti_clock;

/* Session ticks -> the ns CUPTI is given (origin for ticks before t0). */
uint64_t cupti_clock_cupti(const cupti_clock *c, uint64_t ticks);
/* CUPTI ns -> session ticks (t0 for values before origin). */
uint64_t cupti_clock_ticks(const cupti_clock *c, uint64_t cupti_ns);

/* ---- enumerations (pure) ----------------------------------------------- */

/* CUPTI's CUpti_ActivityMemcpyKind / _MemoryKind / _SynchronizationType
 * values to the profile's prism_copy_kind / prism_mem_kind /
 * prism_sync_type (unknown values map to 0). */
uint32_t cupti_copy_kind(uint32_t cupti_kind);
uint32_t cupti_mem_kind(uint32_t cupti_kind);
uint32_t cupti_sync_type(uint32_t cupti_type);
/* The warm-up/active step window: is `step` inside it, and what happens at
 * a step boundary (+1: activity on at the start of step `warmup`, -1: off
 * at the end of step warmup+active-1, 0: nothing).  active 0 = no end. */
bool cupti_in_window(uint32_t warmup, uint32_t active, uint64_t step);
int cupti_window_edge(uint32_t warmup, uint32_t active, uint64_t index, bool begin);
/* Length of a runtime function name without CUPTI's "_v7000" suffix. */
size_t cupti_api_name_len(const char *name);
/* True for runtime API calls that only query state (cudaGetDevice,
 * cudaGetLastError...): they launch nothing and would flood the file. */
bool cupti_api_is_query(uint32_t cbid);
/* Driver API calls worth a record (launches, copies, memsets,
 * synchronisations), by name: the rest (cuCtxGetCurrent, attribute
 * queries...) are many and launch nothing. */
bool cupti_driver_kept(const char *name);

/* ---- is CUPTI still recording for us? (pure, cupti_translate.c) ------- */

typedef struct cupti_watch_in {
    uint64_t buf_events;        /* PRISM's buffer callbacks run so far       */
    uint64_t step;              /* the session's step index                  */
    uint64_t now_ns;            /* when (the caller's clock)                 */
    uint64_t launches, kernels; /* translated this cycle                     */
    uint64_t activity;          /* the program's events written so far
                                   (regions, NVTX ranges, marks, counters; not
                                   PRISM's samples): progress without steps */
    uint64_t cpu_ns;            /* on-CPU ns of its recorded threads so far:
                                   progress without steps nor events */
    bool probed;                /* again, after the forced flush CW_PROBE asked */
} cupti_watch_in;

typedef struct cupti_watch {
    uint64_t buf_events, last_step, last_ns;  /* the last buffer: its step, time */
    uint64_t last_activity, last_cpu;         /* ... events, CPU time by then */
    uint32_t quiet_cycles, launch_only;
    bool stopped;
    bool by_cpu;                /* the progress seen was CPU time alone */
} cupti_watch;

enum {
    CW_NONE,
    CW_PROBE,           /* force a flush, then call again with probed set */
    CW_STOPPED,         /* our buffers stopped coming (since last_step)   */
    CW_RESUMED,         /* they come again                                */
    CW_KERNELS_OFF,     /* launches without kernels: the kind was disabled */
};
/* One writer cycle's evidence -> what to do (cupti.c). */
int cupti_watch_cycle(cupti_watch *w, const cupti_watch_in *in);

/* ---- translation: CUPTI activity record -> prism_gpu_record ----------- */

#define GPU_NAME_CACHE 1024u    /* name hash -> string id                    */
#define GPU_API_CACHE 1024u     /* runtime callback id -> string id          */
#define GPU_CTX_MAX 64u         /* CUDA context id -> device                  */

/*
 * What the translation needs from its caller; pure functions of their
 * inputs in the tests, the session in cupti.c.
 *   ns         CUPTI timestamp -> ns on the file's timeline
 *   intern     a name -> string id (0: could not intern)
 *   stream_of  an OS thread id -> the thread's PRISM stream (1..N)
 *   api_name   a runtime API callback id -> its function name, or NULL;
 *              a driver API one is passed with CUPTI_XLATE_DRIVER set
 */
#define CUPTI_XLATE_DRIVER (1u << 31)
typedef struct cupti_xlate {
    void *ctx;
    uint64_t (*ns)(void *ctx, uint64_t cupti_ts);
    uint32_t (*intern)(void *ctx, const char *name);
    uint32_t (*stream_of)(void *ctx, uint32_t os_tid);
    const char *(*api_name)(void *ctx, uint32_t cbid);
    /* caches (zeroed by cupti_xlate_init) */
    uint64_t name_hash[GPU_NAME_CACHE];
    uint32_t name_id[GPU_NAME_CACHE];
    uint32_t api_id[GPU_API_CACHE];
    uint32_t drv_id[GPU_API_CACHE];     /* driver calls: UINT32_MAX = not kept */
    uint32_t ctx_id[GPU_CTX_MAX], ctx_dev[GPU_CTX_MAX];
    uint32_t nctx;
    /* statistics */
    uint64_t translated;        /* records produced                          */
    uint64_t ignored;           /* kinds or calls not recorded (by design)   */
    uint64_t unnamed;           /* names that could not be interned          */
    uint64_t launches, kernels; /* kernel launch API records, kernel records  */
} cupti_xlate;

void cupti_xlate_init(cupti_xlate *x);

/* A name through the cache: interned once per distinct string. */
uint32_t cupti_xlate_name(cupti_xlate *x, const char *name);

#ifdef PRISM_HAVE_CUPTI_HEADERS
#include <cupti.h>
/*
 * Translate one activity record.  Returns true and fills *out for kernels
 * (CONCURRENT_KERNEL, KERNEL), copies (MEMCPY, MEMCPY2), memsets,
 * synchronisations, runtime API calls and memory allocations/releases
 * (MEMORY2); false for anything else (context records only teach the
 * context -> device map).  Reads only the fields shared by the record
 * layouts of CUPTI 12 and 13 (checked at compile time).
 */
bool cupti_xlate_record(cupti_xlate *x, const CUpti_Activity *rec, prism_gpu_record *out);
/* A kernel record's times (CUPTI's ns), device and stream; false for any
 * other record or one without times. */
typedef struct cupti_kernel_span {
    uint64_t start, end;
    uint32_t device, stream;
} cupti_kernel_span;
bool cupti_kernel_fields(const CUpti_Activity *rec, cupti_kernel_span *k);

/* ---- between the backend's files (cupti.c, cupti_load.c, cupti_drain.c,
 * cupti_nvtx.c) ------------------------------------------------------------ */

/* libcupti's entry points, from dlsym (cupti_load.c).  Optional ones may be
 * NULL. */
typedef struct cupti_fns {
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
    CUptiResult (*Enable)(CUpti_ActivityKind);
    CUptiResult (*Disable)(CUpti_ActivityKind);
    CUptiResult (*RegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                     CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*FlushAll)(uint32_t);
    CUptiResult (*GetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*GetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*Finalize)(void);
    /* optional */
    CUptiResult (*RegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*GetTimestamp)(uint64_t *);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
    CUptiResult (*EnableRuntimeApi)(CUpti_CallbackId, uint8_t);
} cupti_fns;

extern cupti_fns cupti_fn;

/* cupti_load.c: open libcupti (the search order of cupti_where.c; err
 * receives why not), and resolve its entry points into cupti_fn (false, err
 * saying which, when a required one is missing). */
void *cupti_open(char *err, size_t en);
bool cupti_load_symbols(void *h, char *err, size_t en);

/* cupti_drain.c: CUPTI's buffer callbacks (any thread), and the writer's
 * side: translate what CUPTI completed into records. */
void cupti_drain_setup(session *s, const cupti_clock *clock, int64_t shift, bool os_tids);
void CUPTIAPI cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records);
void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
                                     size_t size, size_t valid);
void cupti_drain_buffers(session *s, bool all);
/* fork(), in the child: the parent's completed buffers and records
 * dropped, the pool's lock anew, nothing drained again. */
void cupti_drain_forked(void);
/* The stream window (prism_gpu_streams_begin/_end), in CUPTI's ns: kernels
 * that start in [t0, t1] in the buffers CUPTI completes while it is open
 * are summed per stream (any thread).  cupti_streams_take closes it and
 * returns what prism_gpu_streams_end does. */
void cupti_streams_open(uint64_t t0);
void cupti_streams_until(uint64_t t1);
int cupti_streams_take(prism_gpu_stream_time *out, uint32_t max);
/* PRISM's buffer callbacks run so far (any thread); kernel launch API
 * records and kernel records translated so far (writer). */
uint64_t cupti_buffer_events(void);
void cupti_drain_counts(uint64_t *launches, uint64_t *kernels);
/* Records CUPTI reported lost since the last call, added to the total. */
void cupti_count_dropped(CUcontext ctx, uint32_t stream);

/* cupti_nvtx.c: an NVTX call on the calling thread becomes a region. */
void cupti_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData *d);
#endif

/* ---- where libcupti is, when CUPTI attaches (cupti_where.c) ------------ */

#define CUPTI_PATH_MAX 1024
#define CUPTI_SITES_MAX 8192
#define CUPTI_MAX_CANDIDATES 160
/* What the search looks at (all borrowed; NULL or "" for none). */
typedef struct cupti_where {
    const char *explicit_path;      /* PRISM_CUPTI_PATH: a file or a folder  */
    const char *sites;              /* ':'-separated site-packages folders   */
    const char *homes[3];           /* $CUDA_HOME, $CUDA_PATH, /usr/local/cuda */
} cupti_where;
/* The candidate files in order of preference (the order: cupti_where.c);
 * at most max.  Returns how many. */
size_t cupti_candidates(const cupti_where *w, char (*out)[CUPTI_PATH_MAX], size_t max);
/* The first candidate for which exists() holds, into out. */
bool cupti_find_file(const cupti_where *w, bool (*exists)(const char *), char *out, size_t n);
/* exists() for cupti_find_file: a readable file. */
bool cupti_readable(const char *path);
/* The site-packages (or dist-packages) folder a path lies under. */
bool cupti_site_of(const char *path, char *out, size_t n);
/* This process's inputs: the environment, the Python module's folders and
 * the site folders of loaded objects (sites: a buffer of
 * CUPTI_SITES_MAX bytes that *w then borrows). */
void cupti_where_now(cupti_where *w, char *sites, size_t n);
/* The Python module: its sys.path, ':'-separated (copied). */
PRISM_API void prism__cupti_search_dirs(const char *dirs);

/* Which copy of libcollect attaches when the driver calls
 * InitializeInjection: this one, or (this copy not recording, another
 * copy's writer running) the other, at once on this thread. */
enum { CUPTI_ATTACH_HERE, CUPTI_HAND_OVER, CUPTI_WAIT, CUPTI_OFF, CUPTI_KEEP };
static inline int cupti_inject_plan(bool this_copy_recording, bool other_copy_running)
{
    /* inline: libprism-inject.so sees only libprism.so's PRISM_API symbols */
    return !this_copy_recording && other_copy_running ? CUPTI_HAND_OVER : CUPTI_ATTACH_HERE;
}
/* prism_init: attach now (the driver is loaded, or under injection), wait
 * for the driver (the writer checks), off, or keep the state as it is. */
int cupti_start_plan(bool gpu_ops, bool idle_or_waiting, bool libcuda_loaded, bool injected);
/* Exported by every copy (libprism.so, the Python module): attach this
 * copy's CUPTI now if it records.  Called by libprism-inject.so when it
 * stands down for the copy.  Returns whether this copy records. */
PRISM_API int prism__cupti_attach_now(void);

/* NVTX's injection (docs/GPU.md, "NVTX"): NVTX_INJECTION64_PATH names a
 * library exporting InitializeInjectionNvtx2 (libprism-inject.so under
 * prism-run, the Python module after prism.init), whose entry hands NVTX
 * on to the libcupti PRISM attaches or will attach (the search order of
 * cupti_open: a copy already loaded first): prism__nvtx_handoff returns
 * that libcupti's InitializeInjectionNvtx2(get_export_table), 0 (NVTX
 * stays off) without one. */
PRISM_API int prism__nvtx_handoff(const void *get_export_table);
/* Point NVTX_INJECTION64_PATH at the object holding entry (an exported
 * InitializeInjectionNvtx2) when the variable is unset, the object is a
 * shared library and the program has no other thread (cupti_nvtx_env_safe).
 * Returns whether the variable names a library now. */
PRISM_API int prism__nvtx_route(const void *entry);
/* cupti_nvtx.c: may this thread set NVTX_INJECTION64_PATH (setenv)?  Only
 * while no thread of the program but the caller exists: setenv races with
 * getenv elsewhere.  Never from the writer (docs/GPU.md, "NVTX"). */
bool cupti_nvtx_env_safe(void);

/* ---- the session's hooks (cupti.c; CPU-only without the headers:
 * cupti_status.c; what the process has loaded: cupti_load.c) -------------- */

/* prism_init: attach when the CUDA driver is loaded (or under injection),
 * else wait for it (cupti_drain).  Again from a later prism_init: retry. */
void cupti_start(session *s);
/* InitializeInjection: the driver is initialising CUDA now: attach. */
PRISM_API void prism__cupti_injected(session *s);
/* The library was loaded as the dependency of libprism-inject.so: the
 * session starts in InitializeInjection, not in a constructor. */
bool cupti_loaded_by_injection(void);
/* The CUDA driver (libcuda.so.1) is loaded in the process. */
bool cupti_libcuda_loaded(void);
/* prism_step_begin / _end: the warm-up / active step window. */
void cupti_step(session *s, uint64_t index, bool begin);

/* Writer thread, every cycle before the snapshot: attach if waiting and
 * the driver appeared, flush CUPTI, translate completed buffers (names
 * are interned here, so the STRINGS of this cycle define them). */
void cupti_drain(session *s);
/* Writer: the records translated by the last cupti_drain (borrowed until
 * cupti_drained). */
size_t cupti_records(const prism_gpu_record **recs);
void cupti_drained(void);
/* Writer: the status text when it changed since the last call. */
bool cupti_status_changed(char *buf, size_t n);
/* Writer: cumulative GPU records lost (CUPTI's count + ours). */
uint64_t cupti_dropped(void);
/* Writer, at shutdown before the last cycle: forced flush, detach. */
void cupti_stop(session *s);
/* fork(), in the child: CUPTI is the parent's (its threads, its locks; CUDA
 * does not survive fork): never called here again, the status says so. */
void cupti_forked(void);

/* Set the status text (any thread; cupti_status.c). */
void cupti_set_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fork(), in the child (cupti_forked): the status text's lock anew. */
void cupti_status_forked(void);

/* ---- GPU memory (gpumem.c, NVML) --------------------------------------- */

/* Fill out[] (at most PRISM_MAX_GPUS) with per-device used/reserved bytes.
 * refresh: query NVML now; else copy the last reading (cheap: the samples
 * for steps in between).  Writer thread.  Returns the number of devices. */
uint32_t pc_gpumem_read(prism_gpu_mem *out, bool refresh);
/* An NVML byte count v worth reporting: not one of NVML's "not available"
 * values, not past the device's total (0: unknown). */
bool pc_gpumem_plausible(unsigned long long v, unsigned long long total);
/* Apply the program's reports (prism_gpu_memory) to the n devices in
 * out[]: a reported device's figures replace NVML's, or are added.
 * Returns the new count (at most PRISM_MAX_GPUS). */
uint32_t pc_gpumem_program(prism_gpu_mem *out, uint32_t n);
/* Release NVML (writer, at shutdown). */
void pc_gpumem_close(void);

#endif
