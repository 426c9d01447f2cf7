/*
 * cupti.c - the GPU backend's life cycle: attach (libcupti opened by
 * cupti_load.c; timestamp callback, subscription, buffer callbacks, NVTX
 * domain, activity kinds), the warm-up/active step window, the status
 * text written to the file as INFO "gpu.status" (kept by cupti_status.c),
 * and detach at shutdown.
 *
 * When CUPTI attaches.  A program that never loads the CUDA driver never
 * loads CUPTI either: prism_init attaches at once when libcuda.so.1 is
 * already in the process (or from InitializeInjection, inside cuInit),
 * else the writer checks at every flush and attaches when the driver
 * appears (GPU work of that first flush interval is missed: run under
 * prism-run, or call prism_init again after CUDA is initialised, to catch
 * everything).  Without the CUPTI headers at build time this file is
 * empty: the CPU-only backend of cupti_status.c only records why there is
 * no GPU activity.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- the real backend ------------------------------------------------------ */

/* G_FORKED: a fork()ed child of a process whose CUPTI was attached or
 * waiting: CUPTI's threads and locks are the parent's, CUDA does not
 * survive the fork; this process never calls CUPTI. */
enum { G_IDLE, G_WAITING, G_ATTACHED, G_FAILED, G_DETACHED, G_FORKED };

static struct {
    pthread_mutex_t lock;       /* attach, enable/disable, detach */
    int state;
    void *lib;
    char path[512];
    uint32_t version;
    CUpti_SubscriberHandle sub;
    bool enabled;               /* activity kinds on */
    bool window;                /* a warm-up/active window applies */
    char kinds[160];            /* what is recorded, in words */
    char notes[160];            /* what is missing */
    char off[128];              /* what PRISM_CUPTI_KINDS left out */
    char history[256];          /* what happened to recording on the way */
    cupti_clock clock;
    int64_t shift;              /* CUPTI's clock - ours (0: our timestamps) */
    bool exit_hook;             /* at_exit_flush registered */
    pid_t pid;                  /* the process that attached (not a fork) */
    bool nvtx_routed;           /* NVTX_INJECTION64_PATH set or given */
    cupti_watch watch;          /* is CUPTI still recording for us? */
    uint64_t launches, kernels; /* seen by the watch so far */
} G = { .lock = PTHREAD_MUTEX_INITIALIZER };

static _Atomic int window_on;   /* cupti_step has work to do */

static const char *err_name(CUptiResult r)
{
    const char *s = NULL;
    if (cupti_fn.GetResultString && cupti_fn.GetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "CUPTI error";
}

/* The session clock as CUPTI's nanoseconds (cupti.h, "Timestamps"). */
static uint64_t CUPTIAPI timestamp_cb(void)
{
    return cupti_clock_cupti(&G.clock, prism__now());
}

static void setup_clock(session *s)
{
    /* the ratio only needs to be close to ns: the writer inverts it */
    uint64_t m = pc_clock_mono_ns(), t = prism__now();
    G.clock = (cupti_clock){ s->t0_mono, s->t0_ticks, 1.0 };
    while (m - s->t0_mono < 1000000u) {
        m = pc_clock_mono_ns();
        t = prism__now();
    }
    if (t > s->t0_ticks)
        G.clock.ns_per_tick = (double)(m - s->t0_mono) / (double)(t - s->t0_ticks);
}

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)user;
    if (domain == CUPTI_CB_DOMAIN_NVTX && data)
        cupti_nvtx(cbid, data);
}

/* The activity kinds, each with its name in PRISM_CUPTI_KINDS (NULL: always
 * on).  Kernels are always recorded; the API kinds (runtime, driver) are what
 * ties a kernel to the CPU thread and region that launched it, and cost the
 * most per call (docs/GPU.md, "Overhead"). */
static const struct { CUpti_ActivityKind kind; const char *what, *key; } kinds[] = {
    { CUPTI_ACTIVITY_KIND_CONTEXT, NULL, NULL },
    { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels", NULL },
    { CUPTI_ACTIVITY_KIND_MEMCPY, "copies", "memcpy" },
    { CUPTI_ACTIVITY_KIND_MEMCPY2, "peer copies", "memcpy" },
    { CUPTI_ACTIVITY_KIND_MEMSET, "memsets", "memset" },
    { CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "syncs", "sync" },
    { CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API", "runtime" },
    { CUPTI_ACTIVITY_KIND_DRIVER, "driver API", "driver" },    /* cuLaunchKernel: Triton... */
    { CUPTI_ACTIVITY_KIND_MEMORY2, "allocations", "memory" },
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* Is kind i wanted?  PRISM_CUPTI_KINDS: a comma-separated subset of
 * memcpy,memset,sync,runtime,driver,memory (unset or "all": every one). */
static bool kind_wanted(size_t i)
{
    const char *v = getenv("PRISM_CUPTI_KINDS");
    if (!kinds[i].key || !v || !*v || !strcmp(v, "all"))
        return true;
    size_t kl = strlen(kinds[i].key);
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        if (n == kl && !strncmp(p, kinds[i].key, n))
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

/* Turn the activity kinds on (lock held).  False when kernels cannot be. */
static bool enable_kinds(char *err, size_t en)
{
    size_t kl = 0, nl = 0;
    G.kinds[0] = G.notes[0] = '\0';
    bool skipped = false;
    for (size_t i = 0; i < NKINDS; i++) {
        if (!kind_wanted(i)) {
            skipped = true;
            continue;
        }
        CUptiResult r = cupti_fn.Enable(kinds[i].kind);
        if (r != CUPTI_SUCCESS && kinds[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            snprintf(err, en, "cuptiActivityEnable(kernels): %s", err_name(r));
            for (size_t j = 0; j < i; j++)
                cupti_fn.Disable(kinds[j].kind);
            return false;
        }
        if (!kinds[i].what)
            continue;
        char *dst = r == CUPTI_SUCCESS ? G.kinds : G.notes;
        size_t *len = r == CUPTI_SUCCESS ? &kl : &nl;
        int w = snprintf(dst + *len, sizeof G.kinds - *len, "%s%s", *len ? ", " : "",
                         kinds[i].what);
        if (w > 0 && *len + (size_t)w < sizeof G.kinds)
            *len += (size_t)w;
    }
    G.off[0] = '\0';
    if (skipped)
        snprintf(G.off, sizeof G.off, "; other kinds off (PRISM_CUPTI_KINDS=%s)",
                 getenv("PRISM_CUPTI_KINDS"));
    if (cupti_fn.EnableRuntimeApi)        /* queries launch nothing: not recorded */
        for (uint32_t cb = 1; cb < 600; cb++)
            if (cupti_api_is_query(cb))
                cupti_fn.EnableRuntimeApi(cb, 0);
    G.enabled = true;
    return true;
}

static void disable_kinds(void)
{
    for (size_t i = 0; G.enabled && i < NKINDS; i++)
        cupti_fn.Disable(kinds[i].kind);
    G.enabled = false;
}

static void ok_status(const session *s, bool waiting)
{
    const prism_config *c = &s->cfg;
    char window[128] = "";
    if (c->warmup_steps || c->active_steps)
        snprintf(window, sizeof window, "; activity %s step %u%s", waiting ? "from" : "since",
                 c->warmup_steps, c->active_steps ? "" : " on");
    if (c->active_steps)
        snprintf(window + strlen(window), sizeof window - strlen(window), " for %u steps",
                 c->active_steps);
    cupti_set_status("ok: CUPTI %u (%s): %s%s%s%s%s%s%s%s", G.version, G.path, G.kinds,
                     G.notes[0] ? "; unavailable: " : "", G.notes, G.off, window,
                     G.nvtx_routed ? "" : "; NVTX not routed (set PRISM_CUPTI_PATH or use "
                                          "prism-run: set only before the program has threads)",
                     G.history[0] ? "; " : "", G.history);
}

/* The last words to CUPTI (G.lock held): kinds off, the forced flush,
 * unsubscribe.  cuptiFinalize only on request (PRISM_CUPTI_FINALIZE=1):
 * NVIDIA documents it as safe only from the exit of a CUDA API call, and
 * Kineto calls it only behind an opt-in. */
static void last_words(bool finalize)
{
    disable_kinds();
    cupti_fn.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cupti_count_dropped(NULL, 0);
    cupti_fn.EnableDomain(0, G.sub, CUPTI_CB_DOMAIN_NVTX);
    cupti_fn.Unsubscribe(G.sub);
    const char *fin = getenv("PRISM_CUPTI_FINALIZE");
    if (finalize && fin && !strcmp(fin, "1"))
        cupti_fn.Finalize();
    G.state = G_DETACHED;
}

/* At exit, registered once CUPTI is attached: exit handlers run in the
 * reverse order of registration, so this one runs before any teardown
 * libcupti registered when it was loaded or attached to, and before the
 * session's own (registered at prism_init) stops the writer.  The writer
 * then finds CUPTI detached and never calls it again (docs/GPU.md, "Exit"). */
static void at_exit_flush(void)
{
    pthread_mutex_lock(&G.lock);
    if (G.state == G_ATTACHED && getpid() == G.pid)     /* never in a fork()ed child */
        last_words(false);
    atomic_store(&window_on, 0);
    pthread_mutex_unlock(&G.lock);
}

/* Attach CUPTI (G.lock held).  On failure the status says why.  init:
 * called by the thread that initialises PRISM (prism_init, the injection
 * entry), not the writer. */
static void attach(session *s, bool init)
{
    char err[384] = "";
    G.state = G_FAILED;
    if (!(G.lib = cupti_open(err, sizeof err)) || !cupti_load_symbols(G.lib, err, sizeof err)) {
        cupti_set_status("unavailable: %s", err);
        return;
    }
    struct link_map *lm = NULL;
    if (dlinfo(G.lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        snprintf(G.path, sizeof G.path, "%s", lm->l_name);
    cupti_fn.GetVersion(&G.version);
    /* subscribe first: with another client attached, nothing of it (its
     * clock, its buffers) may be replaced */
    CUptiResult r = cupti_fn.Subscribe(&G.sub, on_callback, NULL);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        cupti_set_status("unavailable: another CUPTI client is attached (cuptiSubscribe: %s; "
                         "e.g. Nsight or torch.profiler): PRISM records nothing from CUPTI",
                         err_name(r));
        return;
    }
    if (r != CUPTI_SUCCESS) {
        void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        cupti_set_status("unavailable: cuptiSubscribe: %s%s", err_name(r),
                         cuda ? "" : " (no NVIDIA driver: libcuda.so.1 not found)");
        if (cuda)
            dlclose(cuda);
        return;
    }
    setup_clock(s);
    int64_t shift = 0;
    if (!cupti_fn.RegisterTimestampCallback ||
        cupti_fn.RegisterTimestampCallback(timestamp_cb) != CUPTI_SUCCESS) {
        /* CUPTI's own clock: shift it onto ours, measured once */
        uint64_t theirs = 0;
        if (cupti_fn.GetTimestamp)
            cupti_fn.GetTimestamp(&theirs);
        shift = (int64_t)(theirs - cupti_clock_cupti(&G.clock, prism__now()));
    }
    /* API records carry gettid(), which names our threads; without it they
     * cannot be tied to a thread (stream 0) */
    bool os_tids = cupti_fn.SetThreadIdType &&
                   cupti_fn.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) == CUPTI_SUCCESS;
    G.shift = shift;
    cupti_drain_setup(s, &G.clock, shift, os_tids);
    r = cupti_fn.RegisterCallbacks(cupti_buffer_requested, cupti_buffer_completed);
    if (r != CUPTI_SUCCESS) {
        cupti_set_status("unavailable: cuptiActivityRegisterCallbacks: %s", err_name(r));
        cupti_fn.Unsubscribe(G.sub);
        return;
    }
    G.nvtx_routed = getenv("NVTX_INJECTION64_PATH") && *getenv("NVTX_INJECTION64_PATH");
    if (cupti_fn.EnableDomain(1, G.sub, CUPTI_CB_DOMAIN_NVTX) == CUPTI_SUCCESS && G.path[0] &&
        !G.nvtx_routed && init && cupti_nvtx_env_safe()) {
        setenv("NVTX_INJECTION64_PATH", G.path, 0);     /* NVTX reads it at its first call */
        G.nvtx_routed = true;
    }
    G.window = s->cfg.warmup_steps || s->cfg.active_steps;
    if (!G.window || cupti_in_window(s->cfg.warmup_steps, s->cfg.active_steps, s->step_index)) {
        if (!enable_kinds(err, sizeof err)) {
            cupti_set_status("unavailable: %s", err);
            cupti_fn.Unsubscribe(G.sub);
            return;
        }
    }
    G.state = G_ATTACHED, G.pid = getpid();
    if (!G.exit_hook)
        G.exit_hook = atexit(at_exit_flush) == 0;
    atomic_store(&window_on, G.window);
    ok_status(s, !G.enabled);
}

void cupti_start(session *s)
{
    if (G.state == G_FORKED) {  /* set in this process's only thread */
        cupti_set_status("off: a fork()ed child of the process that records the GPU (CUDA "
                         "does not survive fork; that process's profile has the GPU activity)");
        return;
    }
    if (!s->cfg.collect_gpu_ops) {
        cupti_set_status("off: collect_gpu_ops is false");
        return;
    }
    pthread_mutex_lock(&G.lock);
    int plan = cupti_start_plan(true, G.state == G_IDLE || G.state == G_WAITING,
                                cupti_libcuda_loaded(), false);
    if (plan == CUPTI_ATTACH_HERE) {
        attach(s, true);
    } else if (plan == CUPTI_WAIT) {
        if (G.state == G_IDLE) {
            /* NVTX reads its variable once, at its first call: name the
             * libcupti now only when it is certain (PRISM_CUPTI_PATH); else
             * at attach, the one actually loaded (a guess could differ from
             * a framework's own copy, and NVTX would talk to the wrong one) */
            const char *want = getenv("PRISM_CUPTI_PATH");
            if (want && *want && cupti_readable(want) &&    /* a file, not a folder */
                cupti_nvtx_env_safe())
                setenv("NVTX_INJECTION64_PATH", want, 0);
            G.state = G_WAITING;
            cupti_set_status("waiting: CUPTI attaches when the program loads the CUDA driver");
        }
    }
    pthread_mutex_unlock(&G.lock);
}

void prism__cupti_injected(session *s)
{
    if (!s->cfg.collect_gpu_ops) {
        cupti_set_status("off: collect_gpu_ops is false");
        return;
    }
    pthread_mutex_lock(&G.lock);
    if (G.state == G_IDLE || G.state == G_WAITING)
        attach(s, true);
    pthread_mutex_unlock(&G.lock);
}

/* ---- GPU time per stream (collect.h) ---------------------------------------- */

/* Now on CUPTI's clock, the one its records carry (G.lock held). */
static uint64_t now_cupti(void)
{
    return (uint64_t)((int64_t)cupti_clock_cupti(&G.clock, prism__now()) + G.shift);
}

/* CUPTI records kernels for this process now (G.lock held). */
static bool recording_kernels(void)
{
    return G.state == G_ATTACHED && G.enabled && getpid() == G.pid;
}

int prism_gpu_streams_begin(void)
{
    pthread_mutex_lock(&G.lock);
    bool rec = recording_kernels();
    if (rec)
        cupti_streams_open(now_cupti());
    pthread_mutex_unlock(&G.lock);
    return rec ? 0 : -1;
}

int prism_gpu_streams_end(prism_gpu_stream_time *out, uint32_t max)
{
    pthread_mutex_lock(&G.lock);
    bool rec = recording_kernels();
    if (rec) {                  /* what CUPTI holds comes back now, scanned */
        cupti_streams_until(now_cupti());
        cupti_fn.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    pthread_mutex_unlock(&G.lock);
    int n = cupti_streams_take(out, max);
    return rec ? n : -1;
}

/* fork(), in the child (its one thread): CUPTI is the parent's.  A call
 * into it here (the flush of a DataLoader worker's writer) waited forever
 * on the parent's CUPTI threads: on the first GPU run every worker's
 * profile stalled its exit by the 3 s grace. */
void cupti_forked(void)
{
    cupti_status_forked();
    pthread_mutex_init(&G.lock, NULL);
    if (G.state != G_IDLE && G.state != G_FAILED)
        G.state = G_FORKED;
    G.enabled = false;
    atomic_store(&window_on, 0);
    cupti_drain_forked();
}

void cupti_step(session *s, uint64_t index, bool begin)
{
    if (!atomic_load_explicit(&window_on, memory_order_relaxed))
        return;
    const prism_config *c = &s->cfg;
    int edge = cupti_window_edge(c->warmup_steps, c->active_steps, index, begin);
    if (!edge)
        return;
    pthread_mutex_lock(&G.lock);
    char err[256];
    if (G.state == G_ATTACHED && edge > 0 && !G.enabled) {
        if (enable_kinds(err, sizeof err))
            ok_status(s, false);
        else
            cupti_set_status("unavailable: %s", err);
    } else if (G.state == G_ATTACHED && edge < 0 && G.enabled) {
        disable_kinds();
        atomic_store(&window_on, 0);
        cupti_set_status("ok: CUPTI %u (%s): %s; activity of steps %u to %llu only",
                         G.version, G.path, G.kinds, c->warmup_steps, (unsigned long long)index);
    }
    pthread_mutex_unlock(&G.lock);
}

/* Once per cycle, after the drain: is CUPTI still recording for us
 * (cupti_translate.c, "is CUPTI still recording")?  Writer thread. */
static void watch(session *s)
{
    pthread_mutex_lock(&G.lock);
    if (G.state != G_ATTACHED || !G.enabled) {
        pthread_mutex_unlock(&G.lock);
        return;
    }
    uint64_t launches, kernels;
    cupti_drain_counts(&launches, &kernels);
    cupti_watch_in in = {
        .buf_events = cupti_buffer_events(),
        .step = __atomic_load_n(&s->step_index, __ATOMIC_RELAXED),
        .now_ns = pc_clock_mono_ns(),
        .launches = launches - G.launches,
        .kernels = kernels - G.kernels,
        .activity = s->program_events,      /* the writer's own counts */
        .cpu_ns = s->threads_on_ns,
    };
    G.launches = launches;
    G.kernels = kernels;
    int v = cupti_watch_cycle(&G.watch, &in);
    if (v == CW_PROBE) {        /* a partly filled buffer of ours comes back */
        cupti_fn.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        in.buf_events = cupti_buffer_events();
        in.probed = true;
        in.launches = in.kernels = 0;
        v = cupti_watch_cycle(&G.watch, &in);
    }
    double at = (double)(G.watch.last_ns - s->t0_mono) / 1e9;
    unsigned long long step = (unsigned long long)G.watch.last_step;
    if (v == CW_STOPPED) {
        char went[96];
        if (in.step)
            snprintf(went, sizeof went, "to step %llu", (unsigned long long)in.step);
        else if (!G.watch.by_cpu)
            snprintf(went, sizeof went, "(%llu more events recorded)",
                     (unsigned long long)(in.activity - G.watch.last_activity));
        else
            snprintf(went, sizeof went, "(its threads ran %.1f s on the CPU, no CUDA call "
                     "recorded)", (double)(in.cpu_ns - G.watch.last_cpu) / 1e9);
        cupti_set_status("stopped: CUPTI %u (%s): no activity buffer reached PRISM after step "
                         "%llu (%.3f s into the run) though the program went on %s: "
                         "another CUPTI client (e.g. torch.profiler) took CUPTI's activity "
                         "buffers, or it ran nothing on the GPU since; PRISM does not take "
                         "the buffers back (the other client would lose its records)",
                         G.version, G.path, step, at, went);
    } else if (v == CW_RESUMED) {
        snprintf(G.history, sizeof G.history,
                 "recording stopped for a while (buffers taken by another CUPTI client) and "
                 "resumed at step %llu (%.3f s)", step, at);
        ok_status(s, false);
    } else if (v == CW_KERNELS_OFF) {
        cupti_fn.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        snprintf(G.history, sizeof G.history,
                 "kernel tracing was disabled by another CUPTI client (e.g. torch.profiler "
                 "stopping) before step %llu (%.3f s); PRISM enabled it again: kernels in "
                 "between are missing", (unsigned long long)in.step,
                 (double)(in.now_ns - s->t0_mono) / 1e9);
        ok_status(s, false);
    }
    pthread_mutex_unlock(&G.lock);
}

void cupti_drain(session *s)
{
    pthread_mutex_lock(&G.lock);
    if (G.state == G_WAITING && s->cfg.collect_gpu_ops && cupti_libcuda_loaded())
        attach(s, false);       /* the writer: no setenv here */
    bool attached = G.state == G_ATTACHED, last = G.state == G_DETACHED;
    if (attached) {             /* under the lock: at_exit_flush may detach */
        cupti_fn.FlushAll(0);             /* completed records, for live tail */
        cupti_count_dropped(NULL, 0);
    }
    pthread_mutex_unlock(&G.lock);
    cupti_drain_buffers(s, last || atomic_load(&s->stopping));
    if (attached)
        watch(s);
}

/* Writer, at shutdown.  Exit ordering (docs/GPU.md, "Exit"): at process
 * exit at_exit_flush has already said the last words, and CUPTI is not
 * called again.  After a signal, nothing: the program is being killed and
 * its threads may be inside CUDA.  After a write failure the program goes
 * on launching: only the kinds are turned off (no flush, no unsubscribe,
 * no finalize while it runs).  Else (prism_shutdown from a running
 * program) the last words. */
void cupti_stop(session *s)
{
    pthread_mutex_lock(&G.lock);
    if (G.state == G_ATTACHED) {
        int sig = atomic_load(&s->signo);
        if (sig) {
            snprintf(G.history, sizeof G.history,
                     "stopped by signal %d: CUPTI not flushed (records still in its buffers "
                     "are missing)", sig);
            ok_status(s, false);
        } else if (atomic_load(&s->failed)) {
            disable_kinds();
        } else {
            last_words(true);
        }
        G.state = G_DETACHED;
    } else if (G.state == G_WAITING) {
        G.state = G_DETACHED;
        cupti_set_status("unavailable: the program never loaded the CUDA driver (libcuda.so.1)");
    }
    atomic_store(&window_on, 0);
    pthread_mutex_unlock(&G.lock);
    pc_gpumem_close();
}

#endif /* PRISM_HAVE_CUPTI_HEADERS */
