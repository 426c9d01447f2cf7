/*
 * cupti_bare.c - libcupti_bare.so: the least a CUPTI activity client does,
 * as a baseline for what CUPTI itself costs a kernel launch (matrix.sh's
 * launch rows "bare-*"): PRISM's cost per launch is its row's less this.
 *
 * A CUDA injection library (CUDA_INJECTION64_PATH=.../libcupti_bare.so):
 * at InitializeInjection it opens libcupti (CUPTI_BARE_LIB, else the
 * loader's libcupti.so.13 / .12), registers buffer callbacks that hand out
 * 4 MiB buffers and count the records of completed ones, and enables the
 * kinds CUPTI_BARE_KINDS names ("kernel": concurrent kernels; "all": also
 * copies, memsets, syncs, runtime and driver API, memory: PRISM's default
 * set).  At exit: a forced flush, and one line on stderr with the records.
 * No GPU result is ever made up: without a GPU nothing calls it.
 *
 * Built by tests/gpu/run_gpu_checks.sh (the build phase) and, offline, by
 * tests/gpu/offline_test.sh (compiled only: it needs the CUPTI headers).
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define BUF_BYTES (4u << 20)

static struct {
    CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*flush)(uint32_t);
    _Atomic uint64_t records, buffers;
} B;

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = aligned_alloc(8, BUF_BYTES);
    *size = *buf ? BUF_BYTES : 0;
    *max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                               size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    uint64_t n = 0;
    while (valid && B.next(buf, valid, &rec) == CUPTI_SUCCESS)
        n++;
    atomic_fetch_add(&B.records, n);
    atomic_fetch_add(&B.buffers, 1);
    free(buf);
}

static void at_exit(void)
{
    B.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "cupti_bare: %llu records in %llu buffers\n",
            (unsigned long long)atomic_load(&B.records),
            (unsigned long long)atomic_load(&B.buffers));
}

int InitializeInjection(void)
{
    const char *want = getenv("CUPTI_BARE_LIB");
    void *h = want && *want ? dlopen(want, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h)
        h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libcupti.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cupti_bare: no libcupti (set CUPTI_BARE_LIB)\n");
        return 0;
    }
    *(void **)&B.reg = dlsym(h, "cuptiActivityRegisterCallbacks");
    *(void **)&B.enable = dlsym(h, "cuptiActivityEnable");
    *(void **)&B.next = dlsym(h, "cuptiActivityGetNextRecord");
    *(void **)&B.flush = dlsym(h, "cuptiActivityFlushAll");
    if (!B.reg || !B.enable || !B.next || !B.flush ||
        B.reg(requested, completed) != CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_bare: libcupti without the activity API\n");
        return 0;
    }
    const char *k = getenv("CUPTI_BARE_KINDS");
    bool all = k && !strcmp(k, "all");
    static const CUpti_ActivityKind more[] = {
        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MEMORY2,
    };
    B.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    for (size_t i = 0; all && i < sizeof more / sizeof more[0]; i++)
        B.enable(more[i]);
    atexit(at_exit);
    return 1;
}
