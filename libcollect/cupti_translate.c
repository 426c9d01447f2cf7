/*
 * cupti_translate.c - pure functions of the GPU backend: the clock handed
 * to CUPTI and its inverse, CUPTI enumerations to the profile's, and one
 * CUPTI activity record to one prism_gpu_record.  No CUPTI call is made
 * here (only its headers are read), so the unit tests feed it synthetic
 * records built from the real header structs on a machine without a GPU.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "cupti.h"

/* ---- clock --------------------------------------------------------------- */

uint64_t cupti_clock_cupti(const cupti_clock *c, uint64_t ticks)
{
    if (ticks <= c->t0)
        return c->origin;
    return c->origin + (uint64_t)((double)(ticks - c->t0) * c->ns_per_tick);
}

uint64_t cupti_clock_ticks(const cupti_clock *c, uint64_t ns)
{
    if (ns < c->origin || c->ns_per_tick <= 0)
        return c->t0;
    /* The last tick that cupti_clock_cupti maps to ns (CUPTI keeps whole
     * ns: up to one ns of ticks share it): a CPU-side record stamped at
     * tick t comes back at t or up to one ns later, never earlier, so a
     * launch made just after its region opened (an NVTX push, the tick
     * before) stays inside it.  (Rounded to the nearest tick it came back
     * up to a ns early half the time: the launch went to the parent.) */
    uint64_t t = c->t0 + (uint64_t)((double)(ns - c->origin + 1) / c->ns_per_tick);
    for (int i = 0; i < 4 && t > c->t0 && cupti_clock_cupti(c, t) > ns; i++)
        t--;
    for (int i = 0; i < 4 && cupti_clock_cupti(c, t + 1) <= ns; i++)
        t++;
    return t;
}

/* ---- enumerations ---------------------------------------------------------- */

uint32_t cupti_copy_kind(uint32_t k)
{
    /* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA,
     * 6 AtoD, 7 DtoA, 8 DtoD, 9 HtoH, 10 PtoP (arrays are device memory) */
    static const uint8_t map[] = {
        PRISM_COPY_UNKNOWN, PRISM_COPY_HTOD, PRISM_COPY_DTOH, PRISM_COPY_HTOD,
        PRISM_COPY_DTOH, PRISM_COPY_DTOD, PRISM_COPY_DTOD, PRISM_COPY_DTOD,
        PRISM_COPY_DTOD, PRISM_COPY_HTOH, PRISM_COPY_PTOP,
    };
    return k < sizeof map ? map[k] : PRISM_COPY_UNKNOWN;
}

uint32_t cupti_mem_kind(uint32_t k)
{
    /* CUpti_ActivityMemoryKind: 1 pageable, 2 pinned, 3 device, 4 array,
     * 5 managed, 6 device static, 7 managed static */
    static const uint8_t map[] = {
        PRISM_MEM_UNKNOWN, PRISM_MEM_PAGEABLE, PRISM_MEM_PINNED, PRISM_MEM_DEVICE,
        PRISM_MEM_DEVICE, PRISM_MEM_MANAGED, PRISM_MEM_DEVICE, PRISM_MEM_MANAGED,
    };
    return k < sizeof map ? map[k] : PRISM_MEM_UNKNOWN;
}

uint32_t cupti_sync_type(uint32_t t)
{
    /* CUpti_ActivitySynchronizationType 1..4 are the profile's 1..4 */
    return t <= PRISM_SYNC_CONTEXT ? t : PRISM_SYNC_UNKNOWN;
}

bool cupti_in_window(uint32_t warmup, uint32_t active, uint64_t step)
{
    return step >= warmup && (active == 0 || step < (uint64_t)warmup + active);
}

int cupti_window_edge(uint32_t warmup, uint32_t active, uint64_t index, bool begin)
{
    if (begin)
        return index == warmup ? 1 : 0;
    return active && index + 1 == (uint64_t)warmup + active ? -1 : 0;
}

size_t cupti_api_name_len(const char *name)
{
    size_t n = strlen(name);
    size_t i = n;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (i < n && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_')
        return i - 2;
    return n;
}

bool cupti_driver_kept(const char *name)
{
    static const char *const keep[] = { "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset" };
    if (!name)
        return false;
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        if (!strncmp(name, keep[i], strlen(keep[i])))
            return true;
    return strstr(name, "Synchronize") != NULL;
}

bool cupti_api_is_query(uint32_t cbid)
{
    /* CUPTI_RUNTIME_TRACE_CBID_* of calls that read state and launch
     * nothing: cudaDriverGetVersion, cudaRuntimeGetVersion,
     * cudaGetDeviceCount, cudaGetDeviceProperties (3020, 12000),
     * cudaGetLastError, cudaPeekAtLastError, cudaFuncGetAttributes,
     * cudaGetDevice, cudaPointerGetAttributes, cudaDeviceGetAttribute,
     * cudaStreamIsCapturing (+ptsz), cudaStreamGetCaptureInfo (all
     * versions), cudaThreadExchangeStreamCaptureMode, cudaGetFuncBySymbol,
     * cudaGetDriverEntryPoint (+ptsz, ByVersion); cudaGetErrorString and
     * cudaGetErrorName (on the GPU run torch called cudaGetErrorString
     * after most launches: 13 000 of 59 600 API records),
     * cudaDeviceCanAccessPeer, cudaStreamGetPriority / GetFlags / GetId /
     * GetDevice (+ptsz), cudaDeviceGetStreamPriorityRange, the
     * cudaOccupancy* calculators.  The numbers are stable across CUPTI
     * versions (new calls get new ids). */
    static const uint16_t ids[] = {
        1, 2, 3, 4, 10, 11, 12, 15, 17, 151, 154, 200, 203, 204, 205, 207, 209, 210,
        237, 238, 251, 317, 318, 324, 325, 327, 329, 336, 406, 407, 409, 410, 432, 433,
        440, 441, 442, 461, 462, 468, 469, 480, 481,
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i] == cbid)
            return true;
    return false;
}

/* ---- names ----------------------------------------------------------------- */

void cupti_xlate_init(cupti_xlate *x)
{
    memset(x->name_hash, 0, sizeof x->name_hash);
    memset(x->name_id, 0, sizeof x->name_id);
    memset(x->api_id, 0, sizeof x->api_id);
    memset(x->drv_id, 0, sizeof x->drv_id);
    x->nctx = 0;
    x->translated = x->ignored = x->unnamed = 0;
    x->launches = x->kernels = 0;
}

uint32_t cupti_xlate_name(cupti_xlate *x, const char *name)
{
    if (!name || !*name)
        return 0;
    uint64_t h = XXH3_64bits(name, strlen(name)) | 1u;
    size_t slot = (size_t)(h % GPU_NAME_CACHE);
    if (x->name_hash[slot] == h)
        return x->name_id[slot];
    uint32_t id = x->intern(x->ctx, name);
    if (!id) {
        x->unnamed++;
        return 0;
    }
    x->name_hash[slot] = h;
    x->name_id[slot] = id;
    return id;
}

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* The record layouts delivered by CUPTI 13 (these headers) and CUPTI 12.
 * Only fields at the same offsets in both are read. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 px_kernel;
typedef CUpti_ActivityMemcpy6 px_memcpy;
typedef CUpti_ActivityMemcpyPtoP4 px_memcpy2;
typedef CUpti_ActivityMemset4 px_memset;
typedef CUpti_ActivityMemory4 px_memory;
typedef CUpti_ActivitySynchronization2 px_sync;
typedef CUpti_ActivityContext3 px_context;
#define SAME(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f)
SAME(CUpti_ActivityKernel10, CUpti_ActivityKernel9, name);
SAME(CUpti_ActivityKernel10, CUpti_ActivityKernel9, correlationId);
SAME(CUpti_ActivityKernel10, CUpti_ActivityKernel9, dynamicSharedMemory);
SAME(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, correlationId);
SAME(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, streamId);
SAME(CUpti_ActivityMemset4, CUpti_ActivityMemset3, memoryKind);
SAME(CUpti_ActivityMemory4, CUpti_ActivityMemory3, streamId);
SAME(CUpti_ActivitySynchronization2, CUpti_ActivitySynchronization, streamId);
SAME(CUpti_ActivitySynchronization2, CUpti_ActivitySynchronization, correlationId);
SAME(CUpti_ActivityContext3, CUpti_ActivityContext, deviceId);
#else
typedef CUpti_ActivityKernel9 px_kernel;
typedef CUpti_ActivityMemcpy5 px_memcpy;
typedef CUpti_ActivityMemcpyPtoP4 px_memcpy2;
typedef CUpti_ActivityMemset4 px_memset;
typedef CUpti_ActivityMemory3 px_memory;
typedef CUpti_ActivitySynchronization px_sync;
typedef CUpti_ActivityContext px_context;
#endif

static uint32_t nonneg(int32_t v)
{
    return v > 0 ? (uint32_t)v : 0;
}

static void learn_ctx(cupti_xlate *x, uint32_t ctx, uint32_t dev)
{
    for (uint32_t i = 0; i < x->nctx; i++)
        if (x->ctx_id[i] == ctx) {
            x->ctx_dev[i] = dev;
            return;
        }
    if (x->nctx < GPU_CTX_MAX) {
        x->ctx_id[x->nctx] = ctx;
        x->ctx_dev[x->nctx++] = dev;
    }
}

static uint32_t device_of_ctx(const cupti_xlate *x, uint32_t ctx)
{
    for (uint32_t i = 0; i < x->nctx; i++)
        if (x->ctx_id[i] == ctx)
            return x->ctx_dev[i];
    return 0;                   /* unknown: most programs use device 0 */
}

/* A driver call's name id; UINT32_MAX for calls not recorded. */
static uint32_t driver_name(cupti_xlate *x, uint32_t cbid)
{
    if (cbid < GPU_API_CACHE && x->drv_id[cbid])
        return x->drv_id[cbid];
    const char *full = x->api_name ? x->api_name(x->ctx, cbid | CUPTI_XLATE_DRIVER) : NULL;
    char buf[256];
    uint32_t id = UINT32_MAX;
    if (cupti_driver_kept(full)) {
        snprintf(buf, sizeof buf, "%.*s", (int)cupti_api_name_len(full), full);
        id = cupti_xlate_name(x, buf);
    }
    if (cbid < GPU_API_CACHE)
        x->drv_id[cbid] = id;
    return id;
}

/* Kernel launches among the runtime and driver calls. */
static bool is_launch(uint32_t kind, uint32_t cbid)
{
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER)
        return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
               cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
               cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
               cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
               cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel;
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000;
}

static uint32_t api_name(cupti_xlate *x, uint32_t cbid)
{
    if (cbid < GPU_API_CACHE && x->api_id[cbid])
        return x->api_id[cbid];
    const char *full = x->api_name ? x->api_name(x->ctx, cbid) : NULL;
    char buf[256];
    if (full) {
        size_t n = cupti_api_name_len(full);
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, full, n);
        buf[n] = '\0';
    } else {
        snprintf(buf, sizeof buf, "cudaRuntime#%u", cbid);
    }
    uint32_t id = cupti_xlate_name(x, buf);
    if (cbid < GPU_API_CACHE)
        x->api_id[cbid] = id;
    return id;
}

/* start/end on the file's timeline; false for a record without times */
static bool times(cupti_xlate *x, uint64_t start, uint64_t end, prism_gpu_record *g)
{
    if (start == 0 && end == 0)
        return false;
    g->start = x->ns(x->ctx, start);
    g->end = end >= start ? x->ns(x->ctx, end) : g->start;
    if (g->end < g->start)
        g->end = g->start;
    return true;
}

bool cupti_kernel_fields(const CUpti_Activity *rec, cupti_kernel_span *k)
{
    if (rec->kind != CUPTI_ACTIVITY_KIND_KERNEL &&
        rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        return false;
    const px_kernel *r = (const px_kernel *)(const void *)rec;
    if (r->start == 0 && r->end == 0)
        return false;
    *k = (cupti_kernel_span){ r->start, r->end >= r->start ? r->end : r->start, r->deviceId,
                              r->streamId };
    return true;
}

bool cupti_xlate_record(cupti_xlate *x, const CUpti_Activity *rec, prism_gpu_record *g)
{
    memset(g, 0, sizeof *g);
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const px_kernel *k = (const px_kernel *)(const void *)rec;
        if (!times(x, k->start, k->end, g))
            break;
        learn_ctx(x, k->contextId, k->deviceId);
        g->type = PRISM_GPU_KERNEL;
        g->device = k->deviceId;
        g->stream = k->streamId;
        g->correlation = k->correlationId;
        g->name = cupti_xlate_name(x, k->name);
        g->grid[0] = nonneg(k->gridX);
        g->grid[1] = nonneg(k->gridY);
        g->grid[2] = nonneg(k->gridZ);
        g->block[0] = nonneg(k->blockX);
        g->block[1] = nonneg(k->blockY);
        g->block[2] = nonneg(k->blockZ);
        g->shared_mem = nonneg(k->staticSharedMemory) + nonneg(k->dynamicSharedMemory);
        g->registers = k->registersPerThread;
        x->kernels++;
        x->translated++;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const px_memcpy *m = (const px_memcpy *)(const void *)rec;
        if (!times(x, m->start, m->end, g))
            break;
        learn_ctx(x, m->contextId, m->deviceId);
        g->type = PRISM_GPU_MEMCPY;
        g->device = m->deviceId;
        g->stream = m->streamId;
        g->correlation = m->correlationId;
        g->bytes = m->bytes;
        g->copy_kind = cupti_copy_kind(m->copyKind);
        g->src_kind = cupti_mem_kind(m->srcKind);
        g->dst_kind = cupti_mem_kind(m->dstKind);
        x->translated++;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const px_memcpy2 *m = (const px_memcpy2 *)(const void *)rec;
        if (!times(x, m->start, m->end, g))
            break;
        g->type = PRISM_GPU_MEMCPY;
        g->device = m->deviceId;
        g->stream = m->streamId;
        g->correlation = m->correlationId;
        g->bytes = m->bytes;
        g->copy_kind = PRISM_COPY_PTOP;
        g->src_kind = cupti_mem_kind(m->srcKind);
        g->dst_kind = cupti_mem_kind(m->dstKind);
        x->translated++;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const px_memset *m = (const px_memset *)(const void *)rec;
        if (!times(x, m->start, m->end, g))
            break;
        learn_ctx(x, m->contextId, m->deviceId);
        g->type = PRISM_GPU_MEMSET;
        g->device = m->deviceId;
        g->stream = m->streamId;
        g->correlation = m->correlationId;
        g->bytes = m->bytes;
        g->dst_kind = cupti_mem_kind(m->memoryKind);
        x->translated++;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const px_sync *s = (const px_sync *)(const void *)rec;
        if (!times(x, s->start, s->end, g))
            break;
        g->type = PRISM_GPU_SYNC;
        g->device = device_of_ctx(x, s->contextId);
        /* a context synchronisation has no stream (CUPTI: invalid id) */
        g->stream = s->streamId == (uint32_t)CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId;
        g->correlation = s->correlationId;
        g->sync_type = cupti_sync_type(s->type);
        x->translated++;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        /* driver calls (cuLaunchKernel from Triton, torch.compile, cuDNN's
         * runtime-compiled engines) carry the correlation id of the kernel
         * they launch, like runtime calls */
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)(const void *)rec;
        bool drv = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
        uint32_t name = drv ? driver_name(x, a->cbid) : 0;
        if (drv ? name == UINT32_MAX : cupti_api_is_query(a->cbid)) {
            x->ignored++;
            return false;
        }
        if (!times(x, a->start, a->end, g))
            break;
        g->type = PRISM_GPU_API;
        g->device = 0;
        g->stream = x->stream_of(x->ctx, a->threadId);
        g->correlation = a->correlationId;
        g->name = drv ? name : api_name(x, a->cbid);
        x->launches += is_launch(rec->kind, a->cbid);
        x->translated++;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const px_memory *m = (const px_memory *)(const void *)rec;
        if (m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
            m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
            break;
        if (!times(x, m->timestamp, m->timestamp, g))
            break;
        g->type = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                      ? PRISM_GPU_ALLOC : PRISM_GPU_FREE;
        g->device = m->deviceId;
        g->stream = m->streamId;
        g->correlation = m->correlationId;
        g->bytes = m->bytes;
        g->address = m->address;
        g->dst_kind = cupti_mem_kind(m->memoryKind);
        x->translated++;
        return true;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const px_context *c = (const px_context *)(const void *)rec;
        learn_ctx(x, c->contextId, c->deviceId);
        return false;
    }
    default:
        break;
    }
    x->ignored++;
    return false;
}

#endif /* PRISM_HAVE_CUPTI_HEADERS */

/* ---- is CUPTI still recording for us?  (the writer's evidence in, a
 * verdict out; cupti.c acts on it) -----------------------------------------
 *
 * CUPTI's buffer callbacks and enabled activity kinds are process-wide.
 * Another CUPTI client in the same process (torch.profiler / Kineto,
 * Nsight) can take them while PRISM runs: its cuptiActivityRegisterCallbacks
 * replaces PRISM's (our buffers stop arriving), and when it stops it
 * disables the kinds it enabled, kernels among them.  CUPTI tells nobody,
 * so the writer watches what arrives, once per cycle:
 *
 *   - buffers gone: none of PRISM's buffer callbacks ran for WATCH_CYCLES
 *     cycles while the program went through WATCH_STEPS steps.  A program
 *     that marks no steps went on when it recorded WATCH_EVENTS more events
 *     of its own (regions, NVTX ranges, marks, counters: PRISM's CPU and
 *     stack samples, written whatever the program does, are no progress),
 *     or, with no events at all (an unmodified program under prism-run),
 *     when its recorded threads (those that called CUDA) ran WATCH_CPU_NS
 *     on the CPU since the last buffer without one CUDA call recorded: a
 *     second, so that a spin-wait in one synchronisation on a long kernel
 *     is not taken for it.  Before the
 *     verdict the writer forces a flush (a partly filled buffer of ours
 *     would come back); if still nothing came, recording stopped at the
 *     step and time of the last buffer.  PRISM does not register its
 *     callbacks again: the other client would lose its records.  When our
 *     buffers come back (the other client re-registered ours), recording
 *     resumes and the status says so.
 *   - kernels off: our buffers keep bringing kernel launches (API records)
 *     but not one kernel record for WATCH_KERNEL_CYCLES cycles (a second at
 *     the default flush interval: kernels in flight complete before).  Then the kernel
 *     kind was disabled under us; PRISM enables it again: the buffers are
 *     ours, so the records come to us and take nothing from anyone.
 *
 * A program whose steps launch nothing on the GPU looks like "buffers
 * gone"; the status says both possibilities.
 */

#define WATCH_CYCLES 3u
#define WATCH_STEPS 2u
#define WATCH_EVENTS 256u       /* without steps: ~128 regions of progress */
#define WATCH_CPU_NS 1000000000u    /* ... or a second on the CPU            */
#define WATCH_KERNEL_CYCLES 10u /* a long kernel may take a few cycles */

int cupti_watch_cycle(cupti_watch *w, const cupti_watch_in *in)
{
    int verdict = CW_NONE;
    if (in->buf_events != w->buf_events) {
        w->buf_events = in->buf_events;
        w->quiet_cycles = 0;
        w->last_step = in->step;
        w->last_ns = in->now_ns;
        w->last_activity = in->activity;
        w->last_cpu = in->cpu_ns;
        if (w->stopped) {
            w->stopped = false;
            verdict = CW_RESUMED;
        }
    } else if (!w->stopped && w->quiet_cycles < UINT32_MAX) {
        w->quiet_cycles++;
        bool events = !in->step && in->activity >= w->last_activity + WATCH_EVENTS;
        bool cpu = !in->step && in->cpu_ns >= w->last_cpu + WATCH_CPU_NS;
        bool went_on = in->step >= w->last_step + WATCH_STEPS || events || cpu;
        w->by_cpu = cpu && !events;
        if (w->quiet_cycles >= WATCH_CYCLES && went_on)
            return in->probed ? (w->stopped = true, CW_STOPPED) : CW_PROBE;
    }
    if (in->kernels || !in->launches) {
        w->launch_only = 0;
    } else if (++w->launch_only >= WATCH_KERNEL_CYCLES) {
        w->launch_only = 0;
        if (verdict == CW_NONE)
            verdict = CW_KERNELS_OFF;
    }
    return verdict;
}
