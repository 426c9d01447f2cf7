/*
 * gpumem.c - GPU memory per device for the memory sampler, from NVML
 * (libnvidia-ml.so.1, opened with dlopen; the few declarations needed are
 * below, so no NVIDIA header is required to build it).
 *
 * Why NVML and not cuMemGetInfo: cuMemGetInfo needs a CUDA context current
 * on the calling thread (the writer would have to bind the program's
 * context) and reports only device-wide free/total.  NVML needs no context
 * and can tell this process's own usage.
 *
 *   used      bytes this process holds on the device (NVML's per-process
 *             usedGpuMemory: the CUDA context plus every allocation,
 *             caching allocators' reserve included).  Where NVML cannot
 *             see the process (another PID namespace), the device's used
 *             memory instead.
 *   reserved  bytes used on the device by all processes (nvmlDeviceGetMemoryInfo).
 *   util_pct, energy_mj (format 1.3) the device's utilisation
 *             (nvmlDeviceGetUtilizationRates: percent of NVML's last sample
 *             period in which a kernel ran) and its energy since this
 *             session's first reading (nvmlDeviceGetTotalEnergyConsumption,
 *             mJ); unknown where the driver lacks them.
 *
 * Devices are CUDA ordinals (CUDA_VISIBLE_DEVICES respected): each ordinal's
 * PCI bus id (cuDeviceGetPCIBusId from the already loaded driver) selects
 * the NVML device.  Nothing is loaded until the program has loaded the CUDA
 * driver itself; only devices where this process holds memory are listed
 * (all of them when NVML cannot see the process).  The writer refreshes the
 * reading every memory interval; the samples it takes for steps in between
 * reuse the last one.
 *
 * The program may report a device's memory itself (prism_gpu_memory: a
 * framework's allocator figures, torch.cuda.memory_allocated/reserved):
 * its last report for a device replaces NVML's reading of that device in
 * every sample taken after it, and adds the device where NVML has none.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cupti.h"

typedef int nvml_ret;                          /* nvmlReturn_t: 0 = success */
typedef struct nvml_dev_st *nvml_dev;
typedef struct { unsigned long long total, free, used; } nvml_memory;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvml_process;                                /* nvmlProcessInfo_t (v2 layout) */
#define NVML_INSUFFICIENT_SIZE 7
typedef struct { unsigned int gpu, memory; } nvml_util;   /* nvmlUtilization_t */

static struct {
    pthread_mutex_t lock;                      /* the cached reading */
    prism_gpu_mem last[PRISM_MAX_GPUS];
    uint32_t nlast;
    _Atomic uint32_t any;                      /* a reading with devices exists */
    /* writer thread only */
    bool tried, ok;
    void *nvml, *cuda;
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*by_pci)(const char *, nvml_dev *);
    nvml_ret (*meminfo)(nvml_dev, nvml_memory *);
    nvml_ret (*procs)(nvml_dev, unsigned int *, nvml_process *);
    nvml_ret (*util)(nvml_dev, nvml_util *);            /* optional (format 1.3) */
    nvml_ret (*energy)(nvml_dev, unsigned long long *); /* optional: mJ since the
                                                           driver loaded (Volta on) */
    unsigned long long energy0[PRISM_MAX_GPUS];         /* the first reading, +1; 0: none */
    int (*cu_count)(int *);
    int (*cu_pci)(char *, int, int);
    nvml_dev dev[PRISM_MAX_GPUS];
    uint32_t ndev;
} M = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool open_nvml(void)
{
    if (!cupti_libcuda_loaded())
        return false;                          /* not yet: try again later */
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!cuda)
        return false;
    M.tried = true;
    M.cuda = cuda;
    *(void **)&M.cu_count = dlsym(cuda, "cuDeviceGetCount");
    *(void **)&M.cu_pci = dlsym(cuda, "cuDeviceGetPCIBusId");
    if (!M.cu_count || !M.cu_pci || !(M.nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)))
        return false;
    *(void **)&M.init = dlsym(M.nvml, "nvmlInit_v2");
    *(void **)&M.shutdown = dlsym(M.nvml, "nvmlShutdown");
    *(void **)&M.by_pci = dlsym(M.nvml, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&M.meminfo = dlsym(M.nvml, "nvmlDeviceGetMemoryInfo");
    *(void **)&M.procs = dlsym(M.nvml, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!M.procs)
        *(void **)&M.procs = dlsym(M.nvml, "nvmlDeviceGetComputeRunningProcesses_v2");
    *(void **)&M.util = dlsym(M.nvml, "nvmlDeviceGetUtilizationRates");
    *(void **)&M.energy = dlsym(M.nvml, "nvmlDeviceGetTotalEnergyConsumption");
    if (!M.init || !M.shutdown || !M.by_pci || !M.meminfo || M.init() != 0)
        return false;
    return true;
}

/* CUDA ordinals -> NVML devices, once the driver is initialised. */
static bool map_devices(void)
{
    int n = 0;
    if (M.cu_count(&n) != 0 || n <= 0)
        return false;                          /* cuInit not yet called */
    M.ndev = 0;
    for (int i = 0; i < n && M.ndev < PRISM_MAX_GPUS; i++) {
        char bus[32];
        nvml_dev d;
        if (M.cu_pci(bus, sizeof bus, i) != 0 || M.by_pci(bus, &d) != 0)
            d = NULL;
        M.dev[M.ndev++] = d;
    }
    return true;
}

/* NVML's "value not available" (NVML_VALUE_NOT_AVAILABLE_ulonglong, all
 * ones; the 32-bit -1 of older drivers widened; a per-process usedGpuMemory
 * under WDDM, vGPU or MIG) is no byte count: reported raw it was 16 EiB.
 * A value past the device's total (when known, non-zero) is no reading
 * either. */
bool pc_gpumem_plausible(unsigned long long v, unsigned long long total)
{
    if (v == ~0ULL || v == 0xFFFFFFFFULL || v == 0xFFFFFFFFFFFFFFFEULL)
        return false;
    return !total || !pc_gpumem_plausible(total, 0) || v <= total;
}

/* This process's bytes on d, or false when NVML does not list it. */
static bool own_usage(nvml_dev d, unsigned long long total, unsigned long long *bytes)
{
    nvml_process p[64];
    unsigned int n = 64;
    if (!M.procs || M.procs(d, &n, p) != 0)
        return false;
    unsigned int pid = (unsigned int)getpid();
    for (unsigned int i = 0; i < n && i < 64; i++)
        if (p[i].pid == pid) {
            *bytes = p[i].usedGpuMemory;
            return pc_gpumem_plausible(*bytes, total);
        }
    return false;
}

/* Device i's utilisation (NVML's: percent of its last sample period in
 * which a kernel ran) and energy since the first reading (mJ), or unknown. */
static void activity(uint32_t i, prism_gpu_mem *g)
{
    nvml_util u;
    unsigned long long e;
    g->util_pct = PRISM_NO_CPU;
    g->energy_mj = PRISM_NO_VALUE;
    if (M.util && M.util(M.dev[i], &u) == 0 && u.gpu <= 100)
        g->util_pct = u.gpu;
    if (M.energy && M.energy(M.dev[i], &e) == 0 && pc_gpumem_plausible(e, 0)) {
        if (!M.energy0[i])
            M.energy0[i] = e + 1;
        if (e + 1 >= M.energy0[i])
            g->energy_mj = e + 1 - M.energy0[i];
    }
}

static uint32_t refresh(prism_gpu_mem *out)
{
    if (!M.tried)
        M.ok = open_nvml();
    if (!M.ok || (M.ndev == 0 && !map_devices()))
        return 0;
    prism_gpu_mem all[PRISM_MAX_GPUS];
    uint32_t n = 0, nall = 0;
    for (uint32_t i = 0; i < M.ndev; i++) {
        nvml_memory m;
        if (!M.dev[i] || M.meminfo(M.dev[i], &m) != 0 || !pc_gpumem_plausible(m.used, m.total))
            continue;
        unsigned long long mine;
        all[nall] = (prism_gpu_mem){ i, m.used, m.used, 0, 0 };
        activity(i, &all[nall]);
        if (own_usage(M.dev[i], m.total, &mine)) {
            out[n] = all[nall];
            out[n++].used = mine;
        }
        nall++;
    }
    if (n == 0) {                              /* NVML cannot see this process */
        memcpy(out, all, nall * sizeof *out);
        n = nall;
    }
    return n;
}

uint32_t pc_gpumem_read(prism_gpu_mem *out, bool now)
{
    uint32_t n;
    if (!now && !atomic_load_explicit(&M.any, memory_order_relaxed))
        return 0;                              /* no GPU seen: no lock per step */
    if (now) {
        prism_gpu_mem cur[PRISM_MAX_GPUS];
        n = refresh(cur);
        pthread_mutex_lock(&M.lock);
        memcpy(M.last, cur, n * sizeof *cur);
        M.nlast = n;
        pthread_mutex_unlock(&M.lock);
        atomic_store_explicit(&M.any, n > 0, memory_order_relaxed);
    }
    pthread_mutex_lock(&M.lock);
    n = M.nlast;
    memcpy(out, M.last, n * sizeof *out);
    pthread_mutex_unlock(&M.lock);
    return n;
}

void pc_gpumem_close(void)
{
    if (M.ok && M.shutdown)
        M.shutdown();
    M.ok = false;
    if (M.nvml)
        dlclose(M.nvml);
    if (M.cuda)
        dlclose(M.cuda);
    M.nvml = M.cuda = NULL;
}

/* ---- the program's own readings (prism_gpu_memory) -------------------- */

/* Per device a sequence word (odd while a report is being stored) and the
 * two figures; `prog_set` has a bit per device ever reported.  A report
 * that finds another one being stored for the same device is dropped (the
 * other is as fresh): the caller never waits. */
static struct {
    _Atomic uint32_t seq;
    _Atomic uint64_t used, reserved;
} P[PRISM_MAX_GPUS];
static _Atomic uint32_t prog_set;

void prism_gpu_memory(uint32_t device, uint64_t used, uint64_t reserved)
{
    if (device >= PRISM_MAX_GPUS)
        return;
    uint32_t seq = atomic_load_explicit(&P[device].seq, memory_order_relaxed);
    if ((seq & 1) || !atomic_compare_exchange_strong_explicit(&P[device].seq, &seq, seq + 1,
                                                              memory_order_acquire,
                                                              memory_order_relaxed))
        return;
    atomic_store_explicit(&P[device].used, used, memory_order_relaxed);
    atomic_store_explicit(&P[device].reserved, reserved, memory_order_relaxed);
    atomic_store_explicit(&P[device].seq, seq + 2, memory_order_release);
    atomic_fetch_or_explicit(&prog_set, 1u << device, memory_order_release);
}

/* One device's last report; false while one is being stored (rarely: the
 * reader tries a few times). */
static bool prog_read(uint32_t d, uint64_t *used, uint64_t *reserved)
{
    for (int tries = 0; tries < 8; tries++) {
        uint32_t s1 = atomic_load_explicit(&P[d].seq, memory_order_acquire);
        if (s1 & 1)
            continue;
        *used = atomic_load_explicit(&P[d].used, memory_order_relaxed);
        *reserved = atomic_load_explicit(&P[d].reserved, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&P[d].seq, memory_order_relaxed) == s1)
            return true;
    }
    return false;
}

uint32_t pc_gpumem_program(prism_gpu_mem *out, uint32_t n)
{
    uint32_t set = atomic_load_explicit(&prog_set, memory_order_acquire);
    for (uint32_t d = 0; set; d++, set >>= 1) {
        uint64_t used, reserved;
        if (!(set & 1) || !prog_read(d, &used, &reserved))
            continue;
        uint32_t i = 0;
        while (i < n && out[i].device != d)
            i++;
        if (i == n) {
            if (n == PRISM_MAX_GPUS)
                continue;
            out[n++] = (prism_gpu_mem){ d, 0, 0, PRISM_NO_CPU, PRISM_NO_VALUE };
        }
        out[i].used = used;             /* NVML's activity figures stay */
        out[i].reserved = reserved;
    }
    return n;
}
