/*
 * alloc.c - the GPU allocation series: live bytes of the CUDA allocations a
 * profile recorded, at the end of each step, fitted against the step like
 * the memory samples (the verdict is leak.c's; docs/GPU.md, "Memory leaks").
 *
 * CUPTI reports each cudaMalloc and cudaFree (GPU ALLOC and FREE records,
 * with bytes and address).  Device and managed memory count (and memory of
 * unknown kind, from writers that do not say); pinned and pageable host
 * memory do not.  A FREE takes back the allocation at its (device, address);
 * one without an address takes back its bytes; a FREE of an allocation made
 * before recording began is ignored (it was never counted).  Unlike NVML's
 * "used", read every few milliseconds and shared with whatever else the
 * process holds, this is exact at every step: a program that allocates 32
 * MB per step and never frees shows +32 MB at each step end.  A caching
 * allocator (PyTorch's) allocates in the first steps and then reuses its
 * blocks: the series rises, then stays flat, which the fit calls warm-up.
 *
 * Only steps inside the span of the file's GPU records count: outside it
 * CUPTI was not recording (warmup_steps / active_steps, another client
 * took its buffers) and allocations there are unknown, not absent.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void an_alloc_records(prism_analysis *a, const prism_gpu_record *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const prism_gpu_record *r = &g[i];
        uint64_t end = r->end > r->start ? r->end : r->start;
        if (!a->galloc_any || r->start < a->galloc_first)
            a->galloc_first = r->start;
        if (!a->galloc_any || end > a->galloc_last)
            a->galloc_last = end;
        a->galloc_any = true;
        if (r->type != PRISM_GPU_ALLOC && r->type != PRISM_GPU_FREE)
            continue;
        if (r->dst_kind == PRISM_MEM_PINNED || r->dst_kind == PRISM_MEM_PAGEABLE)
            continue;                   /* host memory */
        if (!pb_vec_reserve((void **)&a->galloc, &a->galloc_cap, a->ngalloc + 1,
                            sizeof *a->galloc))
            return;
        an_alloc_ev e = { .ts = r->start, .address = r->address, .bytes = r->bytes,
                          .device = r->device, .free = r->type == PRISM_GPU_FREE };
        if (a->ngalloc && a->galloc[a->ngalloc - 1].ts > e.ts)
            a->galloc_unsorted = true;
        a->galloc[a->ngalloc++] = e;
    }
}

static int cmp_ev(const void *x, const void *y)
{
    const an_alloc_ev *a = x, *b = y;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* A step's end and index, sorted by end. */
typedef struct step_end {
    uint64_t end, index;
} step_end;

static int cmp_end(const void *x, const void *y)
{
    const step_end *a = x, *b = y;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The allocation's key: its device and address. */
static uint64_t key_of(const an_alloc_ev *e)
{
    return e->address * 0x9E3779B97F4A7C15ull ^ e->device;
}

/* One event applied to *live; live maps a key to the bytes it holds (0:
 * freed). */
static void apply(pb_map *live_of, const an_alloc_ev *e, uint64_t *live)
{
    uint64_t held = 0;
    if (!e->free) {
        if (e->address && pb_map_get(live_of, key_of(e), &held))
            *live -= held < *live ? held : *live;   /* its free was not recorded */
        *live = *live + e->bytes < *live ? UINT64_MAX : *live + e->bytes;
        if (e->address)
            pb_map_put(live_of, key_of(e), e->bytes);
        return;
    }
    if (e->address) {
        if (pb_map_get(live_of, key_of(e), &held) && held) {
            *live -= held < *live ? held : *live;
            pb_map_put(live_of, key_of(e), 0);
        }
        return;
    }
    *live -= e->bytes < *live ? e->bytes : *live;
}

void an_alloc_fit(prism_analysis *a, double threshold_mb, prism_leak *out)
{
    *out = prism_leak_fit(NULL, NULL, 0, threshold_mb);
    if (!a->ngalloc)
        return;
    if (a->galloc_unsorted) {
        for (size_t i = 0; i < a->ngalloc; i++)
            a->galloc[i].seq = i;       /* equal times keep arrival order */
        pb_qsort(a->galloc, a->ngalloc, sizeof *a->galloc, cmp_ev);
        a->galloc_unsorted = false;
    }
    step_end *se = malloc((a->nsteps ? a->nsteps : 1) * sizeof *se);
    double *x = malloc((a->nsteps ? a->nsteps : 1) * sizeof *x);
    double *y = malloc((a->nsteps ? a->nsteps : 1) * sizeof *y);
    pb_map live_of = { 0 };
    size_t k = 0;
    if (!se || !x || !y)
        goto out;
    for (size_t i = 0; i < a->nsteps; i++) {
        const prism_step *s = &a->steps[i];
        if (s->end >= a->galloc_first && s->start <= a->galloc_last)
            se[k++] = (step_end){ s->end, s->index };
    }
    pb_qsort(se, k, sizeof *se, cmp_end);
    uint64_t live = 0;
    size_t j = 0;
    for (size_t i = 0; i < k; i++) {
        for (; j < a->ngalloc && a->galloc[j].ts <= se[i].end; j++)
            apply(&live_of, &a->galloc[j], &live);
        x[i] = (double)se[i].index;
        y[i] = (double)live;
    }
    *out = prism_leak_fit(x, y, k, threshold_mb);
out:
    pb_map_free(&live_of);
    free(se);
    free(x);
    free(y);
}

void an_alloc_free(prism_analysis *a)
{
    free(a->galloc);
    a->galloc = NULL;
    a->ngalloc = a->galloc_cap = 0;
}
