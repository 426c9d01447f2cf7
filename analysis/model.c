/*
 * model.c - the analysis object: its lifecycle, the reader callbacks that
 * feed it, and the refresh that derives the results (the containers are
 * in base/, the read-only getters in getters.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rules.h"

/* ---- callbacks ---- */

static void note_ts(prism_analysis *a, uint64_t ts)
{
    if (!a->have_ts || ts < a->first_ts)
        a->first_ts = ts;
    if (!a->have_ts || ts > a->last_ts)
        a->last_ts = ts;
    a->have_ts = true;
}

static void cb_thread(void *ctx, const prism_thread *t)
{
    athread *th = an_tree_thread(ctx, t->stream);
    if (th) {
        snprintf(th->name, sizeof th->name, "%s", t->name);
        th->worker = t->is_worker;
        th->worker_id = t->worker_id;
        th->pid = t->pid;
    }
}

static void cb_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    prism_analysis *a = ctx;
    if (!n)
        return;
    note_ts(a, ev[0].ts);
    note_ts(a, ev[n - 1].ts);
    a->events += n;
    an_tree_regions(a, stream, depth, ev, n);
}

static void cb_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    prism_analysis *a = ctx;
    (void)stream;
    if (n)
        note_ts(a, m[n - 1].ts);
    a->events += n;
}

static void cb_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    prism_analysis *a = ctx;
    if (n)
        note_ts(a, c[n - 1].ts);
    a->events += n;
    an_work_counters(a, stream, c, n);
}

static void cb_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    an_work_string(ctx, id, s, len);
}

static void cb_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    prism_analysis *a = ctx;
    (void)stream;
    for (size_t i = 0; i < n; i++) {
        note_ts(a, s[i].start);
        note_ts(a, s[i].end);
    }
    an_series_steps(a, s, n);
}

static void cb_memory(void *ctx, const prism_memory_sample *m)
{
    prism_analysis *a = ctx;
    note_ts(a, m->ts);
    an_series_memory(a, m);
    an_system_sample(a, m);
}

static void cb_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    prism_analysis *a = ctx;
    a->events += n;
    an_gpu_records(a, g, n);
    an_alloc_records(a, g, n);
}

static void cb_dropped(void *ctx, const prism_dropped *d)
{
    prism_analysis *a = ctx;
    uint64_t *slot = pb_map_slot(&a->dropped_of, (uint64_t)d->stream << 1 | (d->source & 1), NULL);
    if (slot && d->total > *slot)
        *slot = d->total;
    if (d->source != PRISM_SOURCE_CPU)
        return;
    if (!d->have_regions) {
        a->drops_single |= d->total > 0;
        return;
    }
    slot = pb_map_slot(&a->dropped_regions_of, d->stream, NULL);
    if (slot && d->regions > *slot)
        *slot = d->regions;
}

static void cb_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    prism_analysis *a = ctx;
    if (n)
        note_ts(a, u[n - 1].ts);
    an_tree_unrecorded(a, stream, u, n);
}

/* INFO torch.modules.*: which module regions prism.torch folded into
 * their parents, after which step (prism_analysis_folded). */
static void folded_info(prism_analysis *a, const char *key, const prism_value *v)
{
    prism_folded *f = &a->folded;
    if (v->type == PRISM_VAL_TEXT) {
        if (!strcmp(key, "folded_names"))
            snprintf(a->folded_names, sizeof a->folded_names, "%s", v->v.s);
        else if (!strcmp(key, "kept_why"))
            snprintf(a->folded_why, sizeof a->folded_why, "%s", v->v.s);
        return;
    }
    if (v->type != PRISM_VAL_UINT)
        return;
    if (!strcmp(key, "after_steps"))
        f->after_steps = v->v.u;
    else if (!strcmp(key, "kept"))
        f->kept = v->v.u;
    else if (!strcmp(key, "folded")) {
        f->folded = v->v.u;
        a->have_folded = true;
    } else if (!strcmp(key, "threshold_ns"))
        f->threshold_ns = v->v.u;
    else if (!strcmp(key, "cost_ns"))
        f->cost_ns = v->v.u;
}

static void cb_info(void *ctx, const char *key, const prism_value *v)
{
    prism_analysis *a = ctx;
    if (!strcmp(key, "gpu.status") && v->type == PRISM_VAL_TEXT) {
        snprintf(a->gpu_status, sizeof a->gpu_status, "%s", v->v.s);
        /* GPU records will follow: start keeping region transitions now,
         * so the first flush's GPU work finds its region too */
        if (!strncmp(v->v.s, "ok", 2) || !strncmp(v->v.s, "synthetic", 9))
            an_gpu_want_rings(a);
    } else if (!strcmp(key, "cpu.sampler") && v->type == PRISM_VAL_TEXT) {
        snprintf(a->cpu_status, sizeof a->cpu_status, "%s", v->v.s);
        if (strncmp(v->v.s, "off", 3))
            an_gpu_want_rings(a);          /* samples will need the transitions */
    } else if (!strncmp(key, "stacks.", 7)) {
        an_stacks_info(a, key, v);
    } else if (!strcmp(key, "steps.thread") && v->type == PRISM_VAL_UINT &&
               v->v.u && v->v.u < UINT32_MAX) {
        a->step_stream = (uint32_t)v->v.u;
    } else if (!strcmp(key, "job.world_size") && v->type == PRISM_VAL_UINT) {
        a->world_size = v->v.u;
    } else if (!strcmp(key, "torch.ops.dtype") && v->type == PRISM_VAL_TEXT) {
        snprintf(a->torch_dtype, sizeof a->torch_dtype, "%s", v->v.s);
    } else if (!strcmp(key, "torch.optimizers") && v->type == PRISM_VAL_UINT) {
        a->torch_optimizers = v->v.u > a->torch_optimizers ? v->v.u : a->torch_optimizers;
    } else if (!strcmp(key, "torch.eval.passes") && v->type == PRISM_VAL_UINT) {
        a->eval_passes = v->v.u;
    } else if (!strcmp(key, "torch.eval.span_ns") && v->type == PRISM_VAL_UINT) {
        a->eval_span_ns = v->v.u;
    } else if (!strcmp(key, "torch.steps") && v->type == PRISM_VAL_TEXT) {
        a->torch_inference = !strcmp(v->v.s, "inference");
    } else if (!strcmp(key, "torch.autocast") && v->type == PRISM_VAL_TEXT) {
        snprintf(a->torch_autocast, sizeof a->torch_autocast, "%s", v->v.s);
    } else if (!strcmp(key, "torch.device") && v->type == PRISM_VAL_TEXT) {
        snprintf(a->torch_device, sizeof a->torch_device, "%s", v->v.s);
    } else if (!strcmp(key, "torch.peak_tflops") && v->type == PRISM_VAL_TEXT) {
        char *end;
        double p = strtod(v->v.s, &end);
        a->peak_tflops = end != v->v.s && p > 0 && p < 1e7 ? p : 0;
    } else if (!strncmp(key, "torch.modules.", 14)) {
        folded_info(a, key + 14, v);
    } else if (!strncmp(key, "dataloader.", 11)) {
        an_workers_info(a, key + 11, v);
    }
}

static void cb_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    prism_analysis *a = ctx;
    if (n)
        note_ts(a, s[n - 1].ts);
    an_oncpu_samples(a, s, n);
}

static void cb_stacks(void *ctx, const prism_stack_sample *s, size_t n)
{
    prism_analysis *a = ctx;
    if (n)
        note_ts(a, s[n - 1].ts);
    an_stacks_samples(a, s, n);
}

static void cb_footer(void *ctx, const prism_footer *f)
{
    prism_analysis *a = ctx;
    a->footer = true;
    a->foot = *f;
    note_ts(a, f->end_ts);
}

void prism_analysis_callbacks(prism_reader_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    cb->string = cb_string;
    cb->thread = cb_thread;
    cb->regions = cb_regions;
    cb->marks = cb_marks;
    cb->counters = cb_counters;
    cb->steps = cb_steps;
    cb->memory = cb_memory;
    cb->gpu = cb_gpu;
    cb->dropped = cb_dropped;
    cb->unrecorded = cb_unrecorded;
    cb->info = cb_info;
    cb->footer = cb_footer;
    cb->cpu = cb_cpu;
    cb->stacks = cb_stacks;
}

/* ---- lifecycle ---- */

prism_analysis *prism_analysis_new(const prism_analysis_opts *opts)
{
    prism_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->train = SIZE_MAX;
    a->dl_num_workers = a->dl_prefetch = a->dl_persistent = a->dl_pin = a->dl_batch = -1;
    a->opts.bottleneck_threshold_pct = -1;
    a->opts.leak_threshold_mb = -1;
    if (opts)
        a->opts = *opts;
    return a;
}

void prism_analysis_attach(prism_analysis *a, prism_reader *r)
{
    a->reader = r;
}

static void free_derived(prism_analysis *a)
{
    free(a->nodes);
    a->nodes = NULL;
    a->nnodes = a->ncap = 0;
    pb_itab_free(&a->node_by_hash);
    free(a->ops);
    a->ops = NULL;
    a->nops = 0;
    free(a->tref_off);
    free(a->tref);
    a->tref_off = NULL;
    a->tref = NULL;
    free(a->bn);
    a->bn = NULL;
    a->nbn = 0;
    free(a->slow);
    a->slow = NULL;
    a->nslow = 0;
}

void prism_analysis_free(prism_analysis *a)
{
    if (!a)
        return;
    free_derived(a);
    for (size_t i = 0; i < a->nthreads; i++)
        an_tree_free_thread(a->threads[i]);
    free(a->threads);
    pb_map_free(&a->thread_of);
    free(a->steps);
    free(a->sampled_pos);
    free(a->step_acc.dur);
    free(a->step_acc.tmp);
    free(a->mem);
    free(a->sys);
    an_alloc_free(a);
    pb_map_free(&a->kernel_of);
    free(a->kstat);
    free(a->kname);
    free(a->busy);
    pb_map_free(&a->dropped_of);
    pb_map_free(&a->dropped_regions_of);
    pb_map_free(&a->corr_node);
    pb_map_free(&a->corr_wait);
    pb_map_free(&a->work_of);
    free(a->apis);
    an_oncpu_free(a);
    an_stacks_free(a);
    if (a->own_reader)
        prism_reader_free(a->reader);
    free(a);
}

static double effective(double opt, const prism_header *h, const char *key, double def)
{
    if (opt >= 0)
        return opt;
    for (size_t i = 0; h && i < h->nconfig; i++) {
        if (strcmp(h->config[i].key, key))
            continue;
        const prism_value *v = &h->config[i].value;
        if (v->type == PRISM_VAL_FLOAT)
            return v->v.f;
        if (v->type == PRISM_VAL_UINT)
            return (double)v->v.u;
        if (v->type == PRISM_VAL_INT)
            return (double)v->v.i;
    }
    return def;
}

void prism_analysis_refresh(prism_analysis *a)
{
    free_derived(a);
    an_oncpu_flush(a);
    an_oncpu_solve(a);
    an_tree_resolve_pending(a);
    an_out_resolve(a, a->footer);
    an_gpu_resolve(a, a->footer);
    an_tree_merge(a);
    an_series_refresh(a);
    an_stacks_publish(a);               /* needs the merged tree and the steps */
    an_stacks_augment(a);
    an_gpu_refresh(a);
    an_work_refresh(a);
    const prism_header *h = prism_analysis_header(a);
    double pct = effective(a->opts.bottleneck_threshold_pct, h, "bottleneck_threshold_pct", 10);
    double mb = effective(a->opts.leak_threshold_mb, h, "memory_leak_threshold_mb", 10);
    an_series_leaks(a, mb);
    an_cpu_load(a);
    an_workers_refresh(a);
    an_system_refresh(a);
    const prism_step_stats *st = prism_analysis_steps(a);
    if (st && st->nseries && (a->slow = malloc(st->nseries * sizeof *a->slow)))
        a->nslow = rules_slow_find(a, a->slow, &a->slow_f);
    a->bn = calloc(64, sizeof *a->bn);
    if (a->bn)
        a->nbn = rules_run(a, pct, mb, a->bn, 64);
}

prism_analysis *prism_analyze_file(const char *path, const prism_analysis_opts *opts,
                                   prism_status *err, char *msgbuf, size_t msglen,
                                   uint64_t *offset)
{
    prism_analysis *a = prism_analysis_new(opts);
    prism_reader_callbacks cb;
    prism_reader *r = NULL;
    prism_status st;
    *err = PRISM_E_NOMEM;
    if (msglen)
        snprintf(msgbuf, msglen, "out of memory");
    *offset = 0;
    if (!a)
        return NULL;
    prism_analysis_callbacks(&cb);
    /* the reader is attached (a->reader set) before its first byte, as the
     * explorer does: names are looked up while streaming (blocking CUDA
     * calls, work counters), not only at the refresh */
    a->own_reader = true;
    st = prism_read_file(path, &cb, a, &a->reader);
    r = a->reader;
    if (st != PRISM_OK) {
        const char *m = prism_strerror(st);
        if (r)
            prism_reader_error(r, &m, offset);
        if (msglen)
            snprintf(msgbuf, msglen, "%s", m);
        *err = st;
        prism_analysis_free(a);
        return NULL;
    }
    *err = PRISM_OK;
    prism_analysis_refresh(a);
    return a;
}
