/*
 * cupti_double.c - libcupti_double.so: a CUPTI double for offline tests
 * and benches (never a GPU result: nothing it produces is measured).
 *
 * It exports the CUPTI entry points libcollect/cupti_load.c looks up with
 * dlsym, and is loaded the normal way (PRISM_CUPTI_PATH=<this file>).  The
 * test drives it through cupti_double(), looked up with dlsym on the same
 * file: it scripts what a real libcupti would do and records what PRISM
 * did to it.
 *
 *   - activity: cd_emit() appends one record (CUDA 13 layouts from
 *     cupti_activity.h: Kernel10 with graphId/graphNodeId, API records of
 *     the runtime and of the driver, Memcpy6, Memset4, Synchronization2)
 *     to the buffer obtained from the buffer callbacks registered now, when
 *     its kind is enabled (else it is counted in `untraced`); records
 *     arrive in the order the test emits them (late, out of order);
 *     cd_complete() hands the buffer back, as does cuptiActivityFlushAll;
 *     both may be called from any thread (one lock, as CUPTI fills its
 *     buffers from the launching threads and completes them on its own);
 *   - a second subscriber already present: `other_subscriber` makes
 *     cuptiSubscribe fail with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
 *   - a torch.profiler-like client: cd_other_client() registers its own
 *     buffer callbacks (it takes the records) and/or disables kernels;
 *   - teardown: `CUPTI_DOUBLE_TEARDOWN=load` registers the double's own
 *     exit teardown when it is loaded, `=subscribe` at the first
 *     cuptiSubscribe (as a library whose statics are made lazily); a CUPTI
 *     call after it exits the process with status 97 (a real libcupti
 *     would crash or hang there);
 *   - fork: a CUPTI call in a fork()ed child of the process that subscribed
 *     exits it with status 98 (a real libcupti waits there for the
 *     parent's threads: a DataLoader worker's exit stalled on the GPU run);
 *   - hooks: the OS thread of the last call of each kind.
 *
 * Built by the Makefile as $(B)/tests/libcupti_double.so (tests/ only).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <cupti.h>

#include "cupti_double.h"

static cupti_double_ctl C;
static uint8_t *cur;                    /* the buffer being filled */
static size_t cur_size, cur_used;
static CUpti_BuffersCallbackRequestFunc req_fn;
static CUpti_BuffersCallbackCompleteFunc done_fn;
/* the buffer being filled and the buffer callbacks: any thread may emit */
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;

static void complete_locked(void);

#define API __attribute__((visibility("default")))

API cupti_double_ctl *cupti_double(void)
{
    return &C;
}

static pid_t subscriber_pid;    /* the process that subscribed */

static void check_alive(const char *what)
{
    if (atomic_load(&C.torn_down)) {
        fprintf(stderr, "cupti_double: %s after libcupti's teardown\n", what);
        _exit(97);
    }
    if (subscriber_pid && getpid() != subscriber_pid) {
        /* a real libcupti waits there for threads the fork left behind */
        fprintf(stderr, "cupti_double: %s in a fork()ed child of the process that "
                "subscribed\n", what);
        _exit(98);
    }
}

static void teardown(void)
{
    atomic_store(&C.torn_down, 1);
}

__attribute__((constructor)) static void loaded(void)
{
    const char *t = getenv("CUPTI_DOUBLE_TEARDOWN");
    if (t && !strcmp(t, "load"))
        atexit(teardown);
}

static uint32_t tid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* ---- the entry points PRISM calls ----------------------------------------- */

API CUptiResult cuptiGetVersion(uint32_t *v)
{
    *v = 130000;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" : "CUPTI_ERROR (double)";
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *user)
{
    check_alive("cuptiSubscribe");
    const char *t = getenv("CUPTI_DOUBLE_TEARDOWN");
    static bool registered;
    if (t && !strcmp(t, "subscribe") && !registered) {
        registered = true;
        atexit(teardown);
    }
    if (C.other_subscriber || C.subscribed)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    C.subscribed = true;
    subscriber_pid = getpid();
    C.callback = (void *)cb;
    C.callback_user = user;
    *h = (CUpti_SubscriberHandle)&C;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
    (void)h;
    check_alive("cuptiUnsubscribe");
    C.subscribed = false;
    C.unsubscribes++;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle h, CUpti_CallbackDomain d)
{
    (void)h;
    check_alive("cuptiEnableDomain");
    if (d < 32)
        C.domains = on ? C.domains | 1u << d : C.domains & ~(1u << d);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    check_alive("cuptiActivityEnable");
    if ((unsigned)k < 64)
        C.kinds |= 1ull << k;
    C.enable_tid = tid();
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    check_alive("cuptiActivityDisable");
    if ((unsigned)k < 64)
        C.kinds &= ~(1ull << k);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc rq,
                                               CUpti_BuffersCallbackCompleteFunc cp)
{
    check_alive("cuptiActivityRegisterCallbacks");
    pthread_mutex_lock(&lk);
    req_fn = rq;
    done_fn = cp;
    pthread_mutex_unlock(&lk);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    check_alive("cuptiActivityFlushAll");
    pthread_mutex_lock(&lk);
    C.flushes++;
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
        C.forced_flushes++;
        complete_locked();
    }
    pthread_mutex_unlock(&lk);
    return CUPTI_SUCCESS;
}

/* A buffer is a run of [size_t size][record, size bytes, 8-aligned]. */
API CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    uint8_t *p = *rec ? (uint8_t *)*rec + ((size_t *)(void *)*rec)[-1] : buf + sizeof(size_t);
    if (p >= buf + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(void *)p;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t s, size_t *n)
{
    (void)ctx;
    (void)s;
    *n = C.dropped;
    C.dropped = 0;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **n)
{
    if (d == CUPTI_CB_DOMAIN_DRIVER_API)
        *n = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? "cuLaunchKernel"
             : cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent ? "cuCtxGetCurrent" : NULL;
    else
        *n = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ? "cudaLaunchKernel_v7000"
             : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ? "cudaGraphLaunch_v10000"
             : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060
                 ? "cudaLaunchKernelExC_v11060" : NULL;
    return *n ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

API CUptiResult cuptiFinalize(void)
{
    check_alive("cuptiFinalize");
    C.finalizes++;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    check_alive("cuptiActivityRegisterTimestampCallback");
    if (C.other_subscriber)
        C.clock_taken_from_other = true;        /* the other client's clock replaced */
    C.timestamp = (void *)f;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    *t = 1000;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t)
{
    (void)t;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cb, uint8_t on)
{
    (void)cb;
    (void)on;
    return CUPTI_SUCCESS;
}

/* ---- the test's side --------------------------------------------------------- */

/* The other client's buffers: it keeps what it gets (counted). */
static void CUPTIAPI other_req(uint8_t **buf, size_t *size, size_t *max)
{
    static _Alignas(8) uint8_t mem[1 << 16];
    *buf = mem;
    *size = sizeof mem;
    *max = 0;
}

static void CUPTIAPI other_done(CUcontext ctx, uint32_t s, uint8_t *buf, size_t size,
                                size_t valid)
{
    (void)ctx;
    (void)s;
    (void)buf;
    (void)size;
    C.other_got += valid;
}

API void cd_other_client(bool take_buffers, bool disable_kernels)
{
    pthread_mutex_lock(&lk);
    complete_locked();
    if (take_buffers) {
        req_fn = other_req;
        done_fn = other_done;
    }
    if (disable_kernels)
        C.kinds &= ~(1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    pthread_mutex_unlock(&lk);
}

static bool emit_locked(const void *rec, size_t size)
{
    uint32_t kind = *(const uint32_t *)rec;
    if (kind >= 64 || !(C.kinds & 1ull << kind)) {
        C.untraced++;
        return false;
    }
    size_t need = (size + 7) & ~(size_t)7;
    if (cur && cur_used + sizeof(size_t) + need > cur_size)
        complete_locked();
    if (!cur) {
        size_t max = 0;
        if (!req_fn) {
            C.dropped++;
            return false;
        }
        req_fn(&cur, &cur_size, &max);
        C.requests++;
        cur_used = 0;
        if (!cur || cur_size < sizeof(size_t) + need) {
            cur = NULL;
            C.dropped++;
            return false;
        }
    }
    *(size_t *)(void *)(cur + cur_used) = need + sizeof(size_t);
    memcpy(cur + cur_used + sizeof(size_t), rec, size);
    cur_used += sizeof(size_t) + need;
    return true;
}

API bool cd_emit(const void *rec, size_t size)
{
    pthread_mutex_lock(&lk);
    bool ok = emit_locked(rec, size);
    pthread_mutex_unlock(&lk);
    return ok;
}

static void complete_locked(void)
{
    if (!cur)
        return;
    uint8_t *b = cur;
    size_t used = cur_used;
    cur = NULL;
    cur_used = 0;
    C.completes++;
    C.complete_tid = tid();
    if (done_fn)
        done_fn(NULL, 0, b, cur_size, used);
}

API void cd_complete(void)
{
    pthread_mutex_lock(&lk);
    complete_locked();
    pthread_mutex_unlock(&lk);
}

API uint64_t cd_now(void)
{
    CUpti_TimestampCallbackFunc f = (CUpti_TimestampCallbackFunc)C.timestamp;
    return f ? f() : 0;
}

/* NVTX's injection entry, as libcupti exports it: NVTX calls it with its
 * export-table getter when NVTX_INJECTION64_PATH names this library (or a
 * library that hands NVTX on to it, as PRISM's do). */
API int InitializeInjectionNvtx2(const void *get_export_table);
API int InitializeInjectionNvtx2(const void *get_export_table)
{
    C.nvtx_inits++;
    C.nvtx_table_fn = get_export_table;
    return 1;
}

/* The NVTX callback on the calling thread (any: CUPTI calls it on the
 * thread that called NVTX, concurrently), while the subscription holds. */
API void cd_nvtx(uint32_t cbid, const void *data)
{
    CUpti_CallbackFunc f = (CUpti_CallbackFunc)__atomic_load_n(&C.callback, __ATOMIC_ACQUIRE);
    __atomic_store_n(&C.nvtx_tid, tid(), __ATOMIC_RELAXED);
    if (f && __atomic_load_n(&C.subscribed, __ATOMIC_ACQUIRE) &&
        (__atomic_load_n(&C.domains, __ATOMIC_RELAXED) & 1u << CUPTI_CB_DOMAIN_NVTX))
        f(C.callback_user, CUPTI_CB_DOMAIN_NVTX, cbid, data);
}
