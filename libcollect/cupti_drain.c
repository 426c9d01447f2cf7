/*
 * cupti_drain.c - CUPTI's activity buffers and their way to the file.
 *
 * CUPTI asks for empty buffers and hands back completed ones from its own
 * threads (or from inside cuptiActivityFlushAll on the writer).  Buffers of
 * GPU_BUF_BYTES come from a bounded pool: when all GPU_BUF_MAX are in use
 * CUPTI gets none and counts the records it had to drop, which the writer
 * stores as DROPPED (source GPU).  Completed buffers wait in a queue; the
 * writer drains it before each snapshot: every record is translated
 * (cupti_translate.c), names are interned in the session's table (so this
 * cycle's STRINGS chunk defines them), a CPU thread never seen before gets
 * a stream of its own, and the records wait in `pending` until the writer
 * has encoded them as GPU chunks on stream 0.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"
#include "format_internal.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

#define GPU_BUF_BYTES (4u << 20)
#define GPU_BUF_MAX 16u
#define PENDING_MAX (256u * 1024u)      /* records per cycle, unless stopping */

static struct {
    pthread_mutex_t lock;               /* pool and queue */
    uint8_t *free[GPU_BUF_MAX];
    size_t nfree, nalloc;
    struct { uint8_t *buf; size_t valid; } done[GPU_BUF_MAX];
    size_t ndone;
    _Atomic uint64_t dropped;           /* CUPTI's count + ours */
    _Atomic uint64_t events;            /* buffer callbacks run (cupti_watch) */
    session *s;
    /* writer thread only */
    cupti_clock clock;
    int64_t shift;                      /* CUPTI clock - ours, when not ours */
    bool os_tids;                       /* API records carry OS thread ids */
    cupti_xlate x;
    prism_gpu_record *pending;
    size_t npending, cpending;
    uint32_t *tid, *tstream;            /* OS tid -> stream, open addressing */
    size_t tcap, tcount;
} D = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- the stream window (prism_gpu_streams_begin/_end) ------------------------ */

static struct {
    pthread_mutex_t lock;
    _Atomic int open;                   /* a window is open: scan completed buffers */
    uint64_t t0, t1;                    /* CUPTI ns; t1 UINT64_MAX until the end */
    prism_gpu_stream_time st[PRISM_GPU_STREAMS_MAX];
    uint32_t n;
} W = { .lock = PTHREAD_MUTEX_INITIALIZER };

void cupti_streams_open(uint64_t t0)
{
    pthread_mutex_lock(&W.lock);
    W.t0 = t0;
    W.t1 = UINT64_MAX;
    W.n = 0;
    atomic_store(&W.open, 1);
    pthread_mutex_unlock(&W.lock);
}

void cupti_streams_until(uint64_t t1)
{
    pthread_mutex_lock(&W.lock);
    W.t1 = t1;
    pthread_mutex_unlock(&W.lock);
}

/* The kernels of a completed buffer that start in the window. */
static void streams_scan(uint8_t *buf, size_t valid)
{
    pthread_mutex_lock(&W.lock);
    CUpti_Activity *rec = NULL;
    cupti_kernel_span k;
    while (atomic_load(&W.open) && cupti_fn.GetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (!cupti_kernel_fields(rec, &k) || k.start < W.t0 || k.start > W.t1)
            continue;
        uint32_t i = 0;
        while (i < W.n && (W.st[i].device != k.device || W.st[i].stream != k.stream))
            i++;
        if (i == W.n) {
            if (W.n == PRISM_GPU_STREAMS_MAX)
                continue;               /* more streams than told apart */
            W.st[W.n++] = (prism_gpu_stream_time){ .device = k.device, .stream = k.stream };
        }
        W.st[i].kernels++;
        W.st[i].busy_ns += k.end - k.start;
    }
    pthread_mutex_unlock(&W.lock);
}

static int busier(const void *a, const void *b)
{
    const prism_gpu_stream_time *x = a, *y = b;
    return x->busy_ns != y->busy_ns ? (x->busy_ns < y->busy_ns ? 1 : -1)
           : x->stream != y->stream ? (x->stream > y->stream ? 1 : -1) : 0;
}

int cupti_streams_take(prism_gpu_stream_time *out, uint32_t max)
{
    pthread_mutex_lock(&W.lock);
    int was = atomic_exchange(&W.open, 0);
    qsort(W.st, W.n, sizeof W.st[0], busier);
    for (uint32_t i = 0; out && i < W.n && i < max; i++)
        out[i] = W.st[i];
    int n = was ? (int)W.n : -1;
    pthread_mutex_unlock(&W.lock);
    return n;
}

/* ---- buffers (any thread) ---------------------------------------------------- */

void CUPTIAPI cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    uint8_t *b = NULL;
    atomic_fetch_add_explicit(&D.events, 1, memory_order_relaxed);
    pthread_mutex_lock(&D.lock);
    if (D.nfree) {
        b = D.free[--D.nfree];
    } else if (D.nalloc < GPU_BUF_MAX) {
        b = aligned_alloc(8, GPU_BUF_BYTES);
        if (b)
            D.nalloc++;
    }
    pthread_mutex_unlock(&D.lock);
    *buf = b;                           /* NULL: CUPTI drops and counts */
    *size = b ? GPU_BUF_BYTES : 0;
    *max_records = 0;
}

void cupti_count_dropped(CUcontext ctx, uint32_t stream)
{
    size_t n = 0;
    if (cupti_fn.GetNumDroppedRecords &&
        cupti_fn.GetNumDroppedRecords(ctx, stream, &n) == CUPTI_SUCCESS)
        atomic_fetch_add(&D.dropped, (uint64_t)n);
}

void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
                                     size_t size, size_t valid)
{
    (void)size;
    atomic_fetch_add_explicit(&D.events, 1, memory_order_relaxed);
    cupti_count_dropped(ctx, stream);
    if (!buf)
        return;
    if (valid && atomic_load_explicit(&W.open, memory_order_relaxed))
        streams_scan(buf, valid);
    bool wake = false;
    pthread_mutex_lock(&D.lock);
    if (valid && D.ndone < GPU_BUF_MAX) {
        D.done[D.ndone].buf = buf;
        D.done[D.ndone++].valid = valid;
        wake = D.ndone >= GPU_BUF_MAX / 2;
    } else {
        D.free[D.nfree++] = buf;        /* empty (never more than allocated) */
    }
    pthread_mutex_unlock(&D.lock);
    session *s = D.s;
    if (wake && s && !atomic_load(&s->stopping))
        pc_session_wake(s);                /* the pool runs low: drain early */
}

uint64_t cupti_dropped(void)
{
    return atomic_load(&D.dropped);
}

uint64_t cupti_buffer_events(void)
{
    return atomic_load_explicit(&D.events, memory_order_relaxed);
}

void cupti_drain_counts(uint64_t *launches, uint64_t *kernels)
{
    *launches = D.x.launches;
    *kernels = D.x.kernels;
}

/* ---- the translation's inputs from the session (writer thread) ------------- */

static uint64_t to_ns(void *ctx, uint64_t ts)
{
    session *s = ctx;
    return pc_clock_ns(s, cupti_clock_ticks(&D.clock, (uint64_t)((int64_t)ts - D.shift)));
}

/* Kernel names arrive mangled; a C++ runtime in the process demangles: in
 * the global scope (a C++ program), else a libstdc++ already loaded by a
 * library opened RTLD_LOCAL (PyTorch in Python: on the GPU run every torch
 * kernel name stayed mangled).  Nothing is loaded for it.  The reader
 * demangles what is left (format/, docs/FORMAT.md). */
static uint32_t intern(void *ctx, const char *name)
{
    session *s = ctx;
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    static demangle_fn demangle;
    static bool looked;
    if (!looked) {
        *(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
        void *cxx = demangle ? NULL : dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (cxx)
            *(void **)&demangle = dlsym(cxx, "__cxa_demangle");   /* the reference stays */
        looked = true;
    }
    char *plain = NULL;
    int st = -1;
    size_t len = strlen(name);
    uint64_t bound = demangle && pf_demangle_wanted(name, len) ? pf_demangle_bound(name, len) : 0;
    /* the reader's bound (format/demangle_bound.c): a crafted name can make
     * __cxa_demangle print exponentially much, here in the program */
    if (bound && bound <= PF_DEMANGLE_MAX_OUT && bound <= (uint64_t)PF_DEMANGLE_RATIO * len)
        plain = demangle(name, NULL, NULL, &st);
    const char *use = plain && st == 0 ? plain : name;
    uint32_t id = 0;
    bool is_new;
    pthread_mutex_lock(&s->lock);
    if (prism_strtab_intern(s->names, use, strlen(use), &id, &is_new) != PRISM_OK)
        id = 0;
    pthread_mutex_unlock(&s->lock);
    free(plain);
    return id;
}

static const char *api_name(void *ctx, uint32_t cbid)
{
    (void)ctx;
    const char *n = NULL;
    CUpti_CallbackDomain d = cbid & CUPTI_XLATE_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API
                                                       : CUPTI_CB_DOMAIN_RUNTIME_API;
    if (cupti_fn.GetCallbackName(d, cbid & ~CUPTI_XLATE_DRIVER, &n) != CUPTI_SUCCESS)
        return NULL;
    return n;
}

static bool tid_put(uint32_t tid, uint32_t stream)
{
    if ((D.tcount + 1) * 2 > D.tcap) {
        size_t cap = D.tcap ? D.tcap * 2 : 64;
        uint32_t *t = calloc(cap, sizeof *t), *st = calloc(cap, sizeof *st);
        if (!t || !st) {
            free(t);
            free(st);
            return false;
        }
        for (size_t i = 0; i < D.tcap; i++) {
            if (!D.tid[i])
                continue;
            size_t j = D.tid[i] & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = D.tid[i];
            st[j] = D.tstream[i];
        }
        free(D.tid);
        free(D.tstream);
        D.tid = t;
        D.tstream = st;
        D.tcap = cap;
    }
    size_t j = tid & (D.tcap - 1);
    while (D.tid[j] && D.tid[j] != tid)
        j = (j + 1) & (D.tcap - 1);
    if (!D.tid[j])
        D.tcount++;
    D.tid[j] = tid;
    D.tstream[j] = stream;
    return true;
}

static uint32_t tid_get(uint32_t tid)
{
    if (!D.tcap || !tid)
        return 0;
    for (size_t j = tid & (D.tcap - 1); D.tid[j]; j = (j + 1) & (D.tcap - 1))
        if (D.tid[j] == tid)
            return D.tstream[j];
    return 0;
}

/* A thread that called CUDA but never recorded a region gets a stream of
 * its own (a THREADS record, no events), named as the OS names it. */
static uint32_t stream_of(void *ctx, uint32_t tid)
{
    session *s = ctx;
    if (!D.os_tids)
        return 0;
    uint32_t st = tid_get(tid);
    if (st || !tid)
        return st;
    prism__thread *th = calloc(1, sizeof *th);
    if (!th)
        return 0;
    th->os_tid = tid;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    FILE *f = fopen(path, "re");
    if (!f || !fgets(th->name, sizeof th->name, f))
        snprintf(th->name, sizeof th->name, "thread-%u", tid);
    if (f)
        fclose(f);
    th->name[strcspn(th->name, "\n")] = '\0';
    th->name_dirty = true;
    th->gpu_only = true;                /* until the thread records (buffers.c) */
    pthread_mutex_lock(&s->lock);
    th->stream = s->next_stream++;
    th->next = s->threads;
    s->threads = th;
    s->gpu_only_threads++;
    pthread_mutex_unlock(&s->lock);
    tid_put(tid, th->stream);
    return th->stream;
}

void cupti_drain_setup(session *s, const cupti_clock *clock, int64_t shift, bool os_tids)
{
    D.s = s;
    D.os_tids = os_tids;
    D.clock = *clock;
    D.shift = shift;
    cupti_xlate_init(&D.x);
    D.x.ctx = s;
    D.x.ns = to_ns;
    D.x.intern = intern;
    D.x.stream_of = stream_of;
    D.x.api_name = api_name;
}

/* ---- the writer's side ------------------------------------------------------- */

static void translate(uint8_t *buf, size_t valid)
{
    CUpti_Activity *rec = NULL;
    while (cupti_fn.GetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (D.npending == D.cpending) {
            size_t cap = D.cpending ? D.cpending * 2 : 4096;
            prism_gpu_record *p = realloc(D.pending, cap * sizeof *p);
            if (!p) {
                atomic_fetch_add(&D.dropped, 1);
                continue;
            }
            D.pending = p;
            D.cpending = cap;
        }
        if (cupti_xlate_record(&D.x, rec, &D.pending[D.npending]))
            D.npending++;
    }
}

void cupti_drain_buffers(session *s, bool all)
{
    if (!D.s)
        return;
    /* threads known now: their streams, oldest first so that a thread
     * registered later under a reused OS tid wins */
    pthread_mutex_lock(&s->lock);
    size_t n = 0, k = 0;
    for (prism__thread *th = s->threads; th; th = th->next)
        n++;
    uint32_t (*pairs)[2] = n ? malloc(n * sizeof *pairs) : NULL;
    for (prism__thread *th = s->threads; pairs && th; th = th->next, k++) {
        pairs[k][0] = th->os_tid <= UINT32_MAX ? (uint32_t)th->os_tid : 0;
        pairs[k][1] = th->stream;
    }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = pairs ? n : 0; i-- > 0;)
        if (pairs[i][0])
            tid_put(pairs[i][0], pairs[i][1]);
    free(pairs);
    for (;;) {
        uint8_t *buf = NULL;
        size_t valid = 0;
        pthread_mutex_lock(&D.lock);
        if (D.ndone && (all || D.npending < PENDING_MAX)) {
            buf = D.done[0].buf;
            valid = D.done[0].valid;
            memmove(&D.done[0], &D.done[1], --D.ndone * sizeof D.done[0]);
        }
        pthread_mutex_unlock(&D.lock);
        if (!buf)
            break;
        translate(buf, valid);
        pthread_mutex_lock(&D.lock);
        D.free[D.nfree++] = buf;
        pthread_mutex_unlock(&D.lock);
    }
}

void cupti_drain_forked(void)
{
    pthread_mutex_init(&D.lock, NULL);
    pthread_mutex_init(&W.lock, NULL);
    atomic_store(&W.open, 0);
    for (size_t i = 0; i < D.ndone; i++)         /* the parent's records */
        D.free[D.nfree++] = D.done[i].buf;
    D.ndone = 0;
    D.npending = 0;
    D.s = NULL;                                  /* nothing to drain here */
}

size_t cupti_records(const prism_gpu_record **recs)
{
    *recs = D.pending;
    return D.npending;
}

void cupti_drained(void)
{
    D.npending = 0;
    if (D.cpending > 65536) {           /* a burst: give the memory back */
        free(D.pending);
        D.pending = NULL;
        D.cpending = 0;
    }
}

#else

typedef int prism_cupti_drain_unused;   /* ISO C: no empty translation unit */

#endif /* PRISM_HAVE_CUPTI_HEADERS */
