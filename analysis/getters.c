/*
 * getters.c - the public read-only view of an analysis (prism_analysis_*
 * getters of analysis.h): what the reader callbacks gathered (model.c) and
 * the refresh derived.  Nothing here changes the model.
 */
#include <stdlib.h>

#include "internal.h"

const prism_header *prism_analysis_header(const prism_analysis *a)
{
    return a->reader ? prism_reader_header(a->reader) : NULL;
}

const prism_reader_stats *prism_analysis_reader_stats(const prism_analysis *a)
{
    return a->reader ? prism_reader_stats_get(a->reader) : NULL;
}

const prism_tree *prism_analysis_tree(const prism_analysis *a) { return &a->tree; }
size_t prism_analysis_thread_count(const prism_analysis *a) { return a->nthreads; }

size_t prism_analysis_training_thread(const prism_analysis *a)
{
    return a && a->train < a->nthreads ? a->train : SIZE_MAX;
}

const char *prism_analysis_torch_dtype(const prism_analysis *a)
{
    return a && a->torch_dtype[0] ? a->torch_dtype : NULL;
}

uint64_t prism_analysis_torch_optimizers(const prism_analysis *a)
{
    return a ? a->torch_optimizers : 0;
}

bool prism_analysis_torch_inference(const prism_analysis *a)
{
    return a && a->torch_inference;
}

const char *prism_analysis_torch_device(const prism_analysis *a, double *peak_tflops)
{
    if (peak_tflops)
        *peak_tflops = a ? a->peak_tflops : 0;
    return a && a->torch_device[0] ? a->torch_device : NULL;
}

bool prism_analysis_is_op(const prism_analysis *a, const char *name)
{
    if (!a || !name || !prism_analysis_steps(a)->op_steps)
        return false;
    const char *p = name;
    if (!(*p >= 'a' && *p <= 'z') && *p != '_')
        return false;
    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')
        p++;
    if (p[0] != ':' || p[1] != ':')
        return false;
    const char *q = p += 2;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '_' || *p == '.')
        p++;
    return p > q && (*p == 0 || *p == ' ');
}

double prism_analysis_step_denominator(const prism_analysis *a, uint64_t *steps)
{
    const prism_step_stats *st = prism_analysis_steps(a);
    double ns = 0;
    uint64_t n = 0;
    for (size_t i = 0; st && st->series && i < st->nseries; i++)
        if (PRISM_STEP_COUNTED(st->series[i].flags) && st->series[i].end > st->series[i].start) {
            ns += (double)(st->series[i].end - st->series[i].start);
            n++;
        }
    if (!(ns > 0)) {
        n = 0;
        ns = a ? (double)prism_analysis_span_ns(a) : 0;
    }
    if (steps)
        *steps = n;
    /* a sum past 2^64 ns (584 years) saturates like every other total: the
     * largest double below 2^64, so that callers can convert it */
    return ns < 18446744073709549568.0 ? ns : 18446744073709549568.0;
}

bool prism_analysis_cpu_present(const prism_analysis *a) { return a && a->cpu_present; }

bool prism_analysis_job_rank(const prism_analysis *a, int64_t *rank, uint64_t *world)
{
    const prism_header *h = a ? prism_analysis_header(a) : NULL;
    int64_t r = h ? h->rank : -1;
    uint64_t w = a ? a->world_size : 0;
    if (rank)
        *rank = r;
    if (world)
        *world = w;
    return w > 1 || (w == 0 && r > 0);     /* rank 1 implies a second rank */
}

bool prism_analysis_folded(const prism_analysis *a, prism_folded *out)
{
    if (!a || !a->have_folded) {
        if (out)
            *out = (prism_folded){ .names = "", .why = "" };
        return false;
    }
    if (out) {
        *out = a->folded;
        out->names = a->folded_names;
        out->why = a->folded_why;
    }
    return true;
}

const char *prism_analysis_cpu_status(const prism_analysis *a)
{
    return a && a->cpu_status[0] ? a->cpu_status : NULL;
}

const prism_tree *prism_analysis_thread_tree(const prism_analysis *a, size_t i,
                                             uint32_t *stream, const char **name)
{
    if (i >= a->nthreads)
        return NULL;
    if (stream)
        *stream = a->threads[i]->stream;
    if (name)
        *name = a->threads[i]->name;
    return &a->threads[i]->tree;
}

bool prism_analysis_thread_worker(const prism_analysis *a, size_t i, uint32_t *worker_id,
                                  uint64_t *pid)
{
    if (i >= a->nthreads || !a->threads[i]->worker)
        return false;
    if (worker_id)
        *worker_id = a->threads[i]->worker_id;
    if (pid)
        *pid = a->threads[i]->pid;
    return true;
}

/* Distinct values of v[0, n) (sorted in place). */
const prism_op *prism_analysis_ops(const prism_analysis *a, size_t *n)
{
    *n = a->nops;
    return a->ops;
}

const prism_step_stats *prism_analysis_steps(const prism_analysis *a) { return &a->step_stats; }
const prism_memory_stats *prism_analysis_memory(const prism_analysis *a) { return &a->mem_stats; }
const prism_system_stats *prism_analysis_system(const prism_analysis *a) { return &a->sys_stats; }
const prism_gpu_stats *prism_analysis_gpu(const prism_analysis *a) { return &a->gpu_stats; }

const prism_bottleneck *prism_analysis_bottlenecks(const prism_analysis *a, size_t *n)
{
    *n = a->nbn;
    return a->bn;
}

uint64_t prism_analysis_events(const prism_analysis *a) { return a->events; }

uint64_t prism_analysis_too_deep(const prism_analysis *a)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->nthreads; i++)
        n = an_sat_add(n, a->threads[i]->too_deep);
    return n;
}

uint64_t prism_analysis_dropped(const prism_analysis *a)
{
    uint64_t total = 0;                 /* CPU events: GPU records are in gpu->dropped */
    uint64_t k, v;
    for (size_t it = 0; pb_map_next(&a->dropped_of, &it, &k, &v);)
        if (!(k & 1))
            total = an_sat_add(total, v);
    return total;
}

uint64_t prism_analysis_dropped_regions(const prism_analysis *a, bool *whole, uint64_t *placed)
{
    uint64_t total = 0;
    uint64_t k, v;
    for (size_t it = 0; pb_map_next(&a->dropped_regions_of, &it, &k, &v);)
        total = an_sat_add(total, v);
    if (whole)
        *whole = !a->drops_single;
    if (placed)
        *placed = a->unrec_placed < total ? a->unrec_placed : total;
    return total;
}

uint64_t prism_analysis_thread_dropped_regions(const prism_analysis *a, uint32_t stream)
{
    uint64_t v = 0;
    return pb_map_get(&a->dropped_regions_of, stream, &v) ? v : 0;
}

uint64_t prism_analysis_span_ns(const prism_analysis *a)
{
    return a->have_ts ? a->last_ts - a->first_ts : 0;
}

bool prism_analysis_complete(const prism_analysis *a) { return a->footer; }
uint64_t prism_analysis_last_ts(const prism_analysis *a) { return a->have_ts ? a->last_ts : 0; }

uint32_t prism_analysis_find(const prism_analysis *a, uint64_t path_hash)
{
    return an_tree_find(a, path_hash);
}

bool prism_analysis_node_step_moments(const prism_analysis *a, uint32_t node, uint64_t *n,
                                      double *mean, double *var)
{
    *n = 0;
    *mean = *var = 0;
    uint32_t threads = an_tree_node_threads(a, node);
    if (!threads || !a->nsampled)
        return false;
    /* the steps it ran in only: a step without it is absent, not zero */
    const prism_node *p = &a->nodes[node];
    *n = p->steps_seen;
    *mean = p->step_mean_ns;
    *var = p->steps_seen > 1 ? p->step_std_ns * p->step_std_ns : 0;
    return true;
}

/* The allocations' fit is exact, so it is the verdict, unless it has no fit
 * or GPU used proves a leak it does not show (memory the allocation records
 * miss: the CUDA context, cuMem* virtual memory, libraries' own pools). */
const prism_leak *prism_memory_gpu_leak(const prism_memory_stats *m, const char **what)
{
    const prism_leak *l = NULL;
    const char *w = NULL;
    bool alloc = m && m->have_gpu_alloc, used = m && m->have_gpu;
    if (alloc && (m->gpu_alloc.have_fit || !(used && m->gpu.have_fit)) &&
        !(used && m->gpu.leak && !m->gpu_alloc.leak)) {
        l = &m->gpu_alloc;
        w = "GPU allocations";
    } else if (used) {
        l = &m->gpu;
        w = "GPU used";
    }
    if (what)
        *what = w;
    return l;
}

void prism_analysis_slow_steps(const prism_analysis *a, const uint64_t **idx, size_t *n)
{
    *idx = a->nslow ? a->slow : NULL;
    *n = a->nslow;
}

const prism_cpu_load *prism_analysis_cpu_load(const prism_analysis *a) { return &a->cpu_load; }
