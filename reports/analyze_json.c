/*
 * analyze_json.c - `prism-top analyze --format json`: the report as one
 * JSON object, schema "prism.analyze/1" (every field is described in
 * docs/JSON.md).  Times are integer nanoseconds, sizes integer bytes,
 * shares fractions 0..1; a value that does not exist is null.
 */
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "report.h"

static void value(pb_json *w, const prism_value *v)
{
    switch (v->type) {
    case PRISM_VAL_INT: pb_json_int(w, v->v.i); break;
    case PRISM_VAL_UINT: pb_json_uint(w, v->v.u); break;
    case PRISM_VAL_FLOAT: pb_json_double(w, v->v.f); break;
    case PRISM_VAL_BOOL: pb_json_bool(w, v->v.b); break;
    case PRISM_VAL_TEXT: pb_json_string(w, v->v.s); break;
    default: pb_json_null(w); break;
    }
}

void report_json_header(pb_json *w, const prism_header *h)
{
    pb_json_key(w, "header");
    if (!h) {
        pb_json_null(w);
        return;
    }
    pb_json_begin_object(w);
    pb_json_kuint(w, "format_major", h->version_major);
    pb_json_kuint(w, "format_minor", h->version_minor);
    pb_json_kstring(w, "producer", h->producer);
    pb_json_kstring(w, "host", h->host);
    pb_json_kuint(w, "pid", h->pid);
    pb_json_kint(w, "rank", h->rank);
    pb_json_kstring(w, "clock", h->clock);
    pb_json_kuint(w, "start_unix_ns", h->start_unix_ns);
    pb_json_key(w, "argv");
    pb_json_begin_array(w);
    for (size_t i = 0; i < h->argc; i++)
        pb_json_string(w, h->argv[i]);
    pb_json_end_array(w);
    pb_json_key(w, "config");
    pb_json_begin_array(w);
    for (size_t i = 0; i < h->nconfig; i++) {
        pb_json_begin_object(w);
        pb_json_kstring(w, "key", h->config[i].key);
        pb_json_key(w, "value");
        value(w, &h->config[i].value);
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
    pb_json_end_object(w);
}

void report_json_reader(pb_json *w, const prism_analysis *a)
{
    const prism_reader_stats *s = prism_analysis_reader_stats(a);
    pb_json_key(w, "reader");
    if (!s) {
        pb_json_null(w);
        return;
    }
    pb_json_begin_object(w);
    pb_json_kuint(w, "chunks", s->chunks);
    pb_json_kuint(w, "records", s->records);
    pb_json_kuint(w, "damaged_runs", s->damaged);
    pb_json_kuint(w, "bad_checksum", s->bad_checksum);
    pb_json_kuint(w, "skipped_bytes", s->skipped_bytes);
    pb_json_kuint(w, "malformed", s->malformed);
    pb_json_kuint(w, "unknown_kinds", s->unknown);
    pb_json_kuint(w, "seq_gaps", s->seq_gaps);
    pb_json_kuint(w, "torn_bytes", s->torn_bytes);
    pb_json_kbool(w, "footer", s->footer);
    pb_json_kuint(w, "workers", s->workers);
    pb_json_kuint(w, "workers_damaged", s->workers_damaged);
    pb_json_kuint(w, "workers_other", s->workers_other);
    pb_json_kuint(w, "workers_left", s->workers_left);
    pb_json_end_object(w);
}

/* A figure in cores, null when unknown (< 0). */
static void cores(pb_json *w, const char *key, double v)
{
    if (v >= 0)
        pb_json_kdouble(w, key, v);
    else {
        pb_json_key(w, key);
        pb_json_null(w);
    }
}

void report_json_cpu_load(pb_json *w, const prism_cpu_load *l)
{
    pb_json_key(w, "cpu_load");
    if (l->process < 0 && l->machine < 0 && l->training < 0) {
        pb_json_null(w);
        return;
    }
    pb_json_begin_object(w);
    pb_json_kuint(w, "ncpu", l->ncpu);
    cores(w, "machine", l->machine);
    cores(w, "process", l->process);
    cores(w, "training_thread", l->training);
    cores(w, "other_threads", l->other_threads);
    cores(w, "unrecorded_threads", l->unrecorded);
    cores(w, "worker_processes", l->workers);
    cores(w, "other_processes", l->others);
    pb_json_kuint(w, "span_ns", (uint64_t)l->span_ns);
    pb_json_end_object(w);
}

static void summary(pb_json *w, const prism_analysis *a)
{
    const prism_tree *t = prism_analysis_tree(a);
    pb_json_key(w, "summary");
    pb_json_begin_object(w);
    pb_json_kuint(w, "events", prism_analysis_events(a));
    pb_json_kuint(w, "dropped", prism_analysis_dropped(a));
    bool whole;
    uint64_t placed, regions = prism_analysis_dropped_regions(a, &whole, &placed);
    pb_json_kuint(w, "dropped_regions", regions);
    pb_json_kuint(w, "dropped_regions_placed", placed);
    pb_json_kbool(w, "dropped_whole", whole);
    pb_json_kuint(w, "too_deep", prism_analysis_too_deep(a));
    pb_json_kuint(w, "max_depth", PRISM_ANALYSIS_MAX_DEPTH);
    pb_json_kuint(w, "span_ns", prism_analysis_span_ns(a));
    prism_outside o;
    pb_json_key(w, "outside_steps");
    if (prism_analysis_outside(a, &o)) {
        pb_json_begin_object(w);
        pb_json_kuint(w, "steps_ns", o.steps_ns);
        pb_json_kuint(w, "before_ns", o.before_ns);
        pb_json_kuint(w, "between_ns", o.between_ns);
        pb_json_kuint(w, "after_ns", o.after_ns);
        pb_json_key(w, "regions");
        pb_json_begin_array(w);
        for (size_t i = 0; i < o.nregions; i++) {
            pb_json_begin_object(w);
            pb_json_kstring(w, "name", o.regions[i].name ? o.regions[i].name : "");
            pb_json_kuint(w, "ns", o.regions[i].ns);
            pb_json_end_object(w);
        }
        pb_json_end_array(w);
        pb_json_kstring(w, "sampled", o.sampled[0] ? o.sampled : NULL);
        pb_json_kdouble(w, "sampled_ns", o.sampled_ns);
        pb_json_kuint(w, "eval_passes", o.eval_passes);
        pb_json_kuint(w, "eval_span_ns", o.eval_span_ns);
        pb_json_end_object(w);
    } else {
        pb_json_null(w);
    }
    prism_stacks_info si;
    pb_json_key(w, "stacks");
    if (prism_analysis_stacks_info(a, &si)) {
        pb_json_begin_object(w);
        pb_json_kuint(w, "samples", si.samples);
        pb_json_kuint(w, "period_ns", si.period_ns);
        pb_json_kuint(w, "weight_ns", si.weight_ns);
        pb_json_kuint(w, "released", si.released);
        pb_json_kstring(w, "sampler", si.status ? si.status : "");
        pb_json_end_object(w);
    } else {
        pb_json_null(w);
    }
    report_json_cpu_load(w, prism_analysis_cpu_load(a));
    pb_json_kuint(w, "region_ns", t->total_ns);
    uint64_t un = 0;                    /* `(outside regions)`, in region_ns */
    for (uint32_t r = t->first_root; r < t->count; r = t->nodes[r].next_sibling)
        if (t->nodes[r].flags & PRISM_NODE_UNATTRIBUTED)
            un += t->nodes[r].total_ns;
    pb_json_kuint(w, "unattributed_ns", un);
    pb_json_kuint(w, "nodes", t->count);
    report_json_threads(w, a, "region_ns", NULL);
    uint64_t nsteps;
    double denom = prism_analysis_step_denominator(a, &nsteps);
    pb_json_kstring(w, "share_of", nsteps ? "steps" : "run");
    pb_json_kuint(w, "share_denominator_ns", (uint64_t)denom);
    size_t ti = prism_analysis_training_thread(a);
    const char *tname = NULL;
    if (ti != SIZE_MAX)
        prism_analysis_thread_tree(a, ti, NULL, &tname);
    pb_json_kstring(w, "training_thread", tname);
    pb_json_kbool(w, "cpu_samples", prism_analysis_cpu_present(a));
    pb_json_kstring(w, "cpu_sampler", prism_analysis_cpu_status(a));
    prism_folded fo;
    pb_json_key(w, "folded_modules");
    if (prism_analysis_folded(a, &fo)) {
        pb_json_begin_object(w);
        pb_json_kuint(w, "after_steps", fo.after_steps);
        pb_json_kuint(w, "folded", fo.folded);
        pb_json_kuint(w, "kept", fo.kept);
        pb_json_kuint(w, "threshold_ns", fo.threshold_ns);
        pb_json_kuint(w, "cost_ns", fo.cost_ns);
        pb_json_kstring(w, "names", fo.names);
        pb_json_kstring(w, "why", fo.why);
        pb_json_end_object(w);
    } else {
        pb_json_null(w);
    }
    int64_t rank;
    uint64_t world;
    pb_json_key(w, "job");
    if (prism_analysis_job_rank(a, &rank, &world)) {
        pb_json_begin_object(w);
        pb_json_kint(w, "rank", rank);
        pb_json_kuint(w, "world_size", world);
        pb_json_end_object(w);
    } else {
        pb_json_null(w);
    }
    pb_json_end_object(w);
}

/* One step of the series. */
static void step_item(pb_json *w, const prism_step *p)
{
    pb_json_begin_object(w);
    pb_json_kuint(w, "index", p->index);
    pb_json_kuint(w, "epoch", p->epoch);
    pb_json_kuint(w, "start_ns", p->start);
    pb_json_kuint(w, "duration_ns", p->end >= p->start ? p->end - p->start : 0);
    pb_json_kbool(w, "sampled", (p->flags & PRISM_STEP_SAMPLED) != 0);
    if (p->flags & PRISM_STEP_OPS)
        pb_json_kbool(w, "ops", true);      /* in the operator window: not timed */
    pb_json_end_object(w);
}

/* max_series 0: every step; else at most that many, the longest step of
 * each run of `series_every` consecutive ones (outliers kept). */
static void steps(pb_json *w, const prism_analysis *a, size_t max_series)
{
    const prism_step_stats *s = prism_analysis_steps(a);
    pb_json_key(w, "steps");
    pb_json_begin_object(w);
    pb_json_kuint(w, "count", s->count);
    pb_json_kuint(w, "sampled", s->sampled);
    pb_json_kuint(w, "total_ns", s->total_ns);
    report_json_kns(w, "mean_ns", s->mean_ns);
    report_json_kns(w, "p50_ns", s->p50_ns);
    report_json_kns(w, "p95_ns", s->p95_ns);
    report_json_kns(w, "max_ns", s->max_ns);
    report_json_kns(w, "std_ns", s->std_ns);
    pb_json_kuint(w, "timed", s->timed);
    if (s->op_steps)
        pb_json_kuint(w, "op_steps", s->op_steps);
    if (prism_analysis_torch_optimizers(a) > 1)
        pb_json_kuint(w, "optimizers", prism_analysis_torch_optimizers(a));
    if (prism_analysis_torch_inference(a))
        pb_json_kbool(w, "inference", true);
    pb_json_kuint(w, "bad_order", s->bad_order);
    pb_json_kuint(w, "zero_len", s->zero_len);
    pb_json_kuint(w, "overlapping", s->overlapping);
    pb_json_kuint(w, "dup_index", s->dup_index);
    size_t every = max_series && s->nseries > max_series
                       ? (s->nseries + max_series - 1) / max_series : 1;
    if (every > 1)
        pb_json_kuint(w, "series_every", every);
    pb_json_key(w, "series");
    pb_json_begin_array(w);
    for (size_t i = 0; s->series && i < s->nseries; i += every) {
        size_t best = i;
        for (size_t j = i + 1; j < i + every && j < s->nseries; j++) {
            const prism_step *p = &s->series[j], *q = &s->series[best];
            if (p->end - p->start > q->end - q->start && p->end >= p->start)
                best = j;
        }
        step_item(w, &s->series[best]);
    }
    pb_json_end_array(w);
    pb_json_end_object(w);
}

/* series: what was fitted, for the GPU verdict ("allocations", "used"). */
static void fit(pb_json *w, const char *key, const prism_leak *l, bool present,
                const char *series)
{
    pb_json_key(w, key);
    if (!present || !l) {
        pb_json_null(w);
        return;
    }
    pb_json_begin_object(w);
    if (series)
        pb_json_kstring(w, "series", series);
    pb_json_kbool(w, "have_fit", l->have_fit);
    pb_json_kuint(w, "points", l->points);
    pb_json_kdouble(w, "slope_mb_per_step", l->slope_mb_per_step);
    pb_json_kdouble(w, "r2", l->r2);
    pb_json_kdouble(w, "start_mb", l->start_mb);
    pb_json_kdouble(w, "end_mb", l->end_mb);
    pb_json_kbool(w, "leak", l->leak);
    pb_json_kstring(w, "verdict", prism_leak_verdict_name(l->verdict));
    pb_json_kstring(w, "reason", l->reason);
    pb_json_kdouble(w, "slope_se_mb_per_step", l->slope_se_mb);
    pb_json_kdouble(w, "t", l->t);
    pb_json_kdouble(w, "growth_mb", l->growth_mb);
    pb_json_kdouble(w, "growth_pct", l->growth_pct);
    pb_json_kuint(w, "span_steps", l->span_steps);
    pb_json_kdouble(w, "mid_slope_mb_per_step", l->mid_slope_mb_per_step);
    pb_json_kdouble(w, "late_slope_mb_per_step", l->late_slope_mb_per_step);
    pb_json_kuint(w, "projection_steps", l->projection_steps);
    pb_json_kstring(w, "projection_to", l->projection_epoch ? "epoch_end" : "steps");
    pb_json_kdouble(w, "projected_mb", l->projected_mb);
    pb_json_end_object(w);
}

static void memory(pb_json *w, const prism_analysis *a)
{
    const prism_memory_stats *m = prism_analysis_memory(a);
    pb_json_key(w, "memory");
    pb_json_begin_object(w);
    pb_json_kuint(w, "samples", m->count);
    pb_json_kuint(w, "peak_rss_bytes", m->peak_rss);
    /* what the host figures are: the process's resident set, or (an
     * imported trace) the bytes torch's CPU allocator held */
    pb_json_kstring(w, "host_memory", m->host_allocated ? "allocated" : "rss");
    pb_json_kbool(w, "have_gpu", m->have_gpu);
    pb_json_key(w, "peak_gpu_used_bytes");
    m->have_gpu ? pb_json_uint(w, m->peak_gpu_used) : pb_json_null(w);
    pb_json_key(w, "peak_gpu_reserved_bytes");
    m->have_gpu ? pb_json_uint(w, m->peak_gpu_reserved) : pb_json_null(w);
    const prism_leak *g = prism_memory_gpu_leak(m, NULL);
    pb_json_kbool(w, "leak_detected", m->host.leak || (g && g->leak));
    fit(w, "host_leak", &m->host, true, NULL);
    /* the GPU verdict: the CUDA allocations' fit when the file has them */
    fit(w, "gpu_leak", g, g != NULL, g == &m->gpu_alloc ? "allocations" : "used");
    fit(w, "gpu_used_leak", &m->gpu, m->have_gpu, NULL);
    fit(w, "gpu_alloc_leak", &m->gpu_alloc, m->have_gpu_alloc, NULL);
    pb_json_end_object(w);
}

/* A 1.3 figure, null when unknown. */
static void kvalue(pb_json *w, const char *key, uint64_t v)
{
    pb_json_key(w, key);
    v == PRISM_NO_VALUE ? pb_json_null(w) : pb_json_uint(w, v);
}

static void kpositive(pb_json *w, const char *key, double v)
{
    pb_json_key(w, key);
    v < 0 ? pb_json_null(w) : pb_json_double(w, v);
}

static void kint(pb_json *w, const char *key, int64_t v)
{
    pb_json_key(w, key);
    v < 0 ? pb_json_null(w) : pb_json_uint(w, (uint64_t)v);
}

/* The DataLoader's workers (prism_worker_stats); "workers": 0 and nulls
 * without worker files. */
static void workers_json(pb_json *w, const prism_analysis *a)
{
    const prism_worker_stats *s = prism_analysis_workers(a);
    bool b = s->batches > 0;
    pb_json_key(w, "workers");
    pb_json_begin_object(w);
    pb_json_kuint(w, "workers", s->workers);
    pb_json_kuint(w, "processes", s->processes);
    pb_json_kuint(w, "threads", s->threads);
    pb_json_kuint(w, "batches", s->batches);
    kpositive(w, "batch_ns", b ? s->batch_ns : -1);
    kpositive(w, "batch_cpu", s->batch_cpu);
    kpositive(w, "samples_per_batch", b ? s->samples_per_batch : -1);
    kpositive(w, "sample_ns", b ? s->sample_ns : -1);
    kpositive(w, "collate_ns", b ? s->collate_ns : -1);
    pb_json_kstring(w, "transform", s->transform);
    kpositive(w, "transform_ns", s->transform ? s->transform_ns : -1);
    kpositive(w, "busy", s->busy);
    pb_json_kuint(w, "busy_threads", s->busy_threads);
    kpositive(w, "pin_ns", s->pin_ns > 0 ? s->pin_ns : -1);
    kint(w, "num_workers", s->num_workers);
    kint(w, "prefetch_factor", s->prefetch_factor);
    kint(w, "persistent_workers", s->persistent_workers);
    kint(w, "pin_memory", s->pin_memory);
    kint(w, "batch_size", s->batch_size);
    pb_json_kuint(w, "starts", s->starts);
    kpositive(w, "startup_ns", s->startup_ns);
    pb_json_end_object(w);
}

/* The system readings (format 1.3); "readings": 0 and nulls without them. */
static void system_json(pb_json *w, const prism_analysis *a)
{
    const prism_system_stats *s = prism_analysis_system(a);
    pb_json_key(w, "system");
    pb_json_begin_object(w);
    pb_json_kuint(w, "readings", s->count);
    pb_json_kuint(w, "span_ns", s->span_ns);
    kvalue(w, "io_read_bytes", s->io_read_bytes);
    kvalue(w, "io_write_bytes", s->io_write_bytes);
    kvalue(w, "net_rx_bytes", s->net_rx_bytes);
    kvalue(w, "net_tx_bytes", s->net_tx_bytes);
    kpositive(w, "cpu_user_pct", s->cpu_user_pct);
    kpositive(w, "cpu_sys_pct", s->cpu_sys_pct);
    kvalue(w, "mem_total_bytes", s->mem_total);
    kpositive(w, "mem_peak_pct", s->mem_peak_pct);
    kpositive(w, "mem_mean_pct", s->mem_mean_pct);
    kpositive(w, "gpu_util_pct", s->gpu_util_pct);
    kvalue(w, "cpu_energy_uj", s->cpu_energy_uj);
    kvalue(w, "gpu_energy_mj", s->gpu_energy_mj);
    kpositive(w, "energy_j", s->energy_j);
    kpositive(w, "carbon_g_per_kwh", s->carbon_g_per_kwh > 0 ? s->carbon_g_per_kwh : -1);
    kpositive(w, "carbon_g", s->carbon_g);
    pb_json_kuint(w, "steps", s->steps);
    kpositive(w, "step_io_read_bytes", s->step_io_read_bytes);
    kpositive(w, "step_io_write_bytes", s->step_io_write_bytes);
    kpositive(w, "step_net_bytes", s->step_net_bytes);
    kpositive(w, "step_energy_j", s->step_energy_j);
    pb_json_end_object(w);
}

static void work(pb_json *w, const prism_analysis *a)
{
    const prism_work_stats *k = prism_analysis_work(a);
    pb_json_key(w, "work");
    pb_json_begin_object(w);
    pb_json_kbool(w, "present", k->present);
    pb_json_kdouble(w, "flops", k->flops);
    pb_json_kdouble(w, "bytes", k->bytes);
    pb_json_kdouble(w, "unattributed_flops", k->unattributed_flops);
    pb_json_kdouble(w, "unattributed_bytes", k->unattributed_bytes);
    pb_json_key(w, "intensity");
    k->bytes > 0 ? pb_json_double(w, k->intensity) : pb_json_null(w);
    pb_json_kdouble(w, "ridge", k->ridge);
    pb_json_end_object(w);
}

/* "sampled": the nodes with Python stack samples in their own time, each
 * with its sampled paths (prism_analysis_sampled), flat, parents first. */
static void sampled(pb_json *w, const prism_analysis *a, pb_buf *path)
{
    const prism_tree *t = prism_analysis_tree(a);
    pb_json_key(w, "sampled");
    pb_json_begin_array(w);
    for (uint32_t i = 0; t && i < t->count; i++) {
        size_t n;
        const prism_sampled *s = prism_analysis_sampled(a, i, &n);
        if (!n)
            continue;
        pb_json_begin_object(w);
        report_path(t, i, '/', false, path);
        pb_json_kstring(w, "path", pb_buf_str(path));
        pb_json_key(w, "frames");
        pb_json_begin_array(w);
        for (size_t j = 0; j < n; j++) {
            pb_json_begin_object(w);
            pb_json_kstring(w, "name", s[j].name);
            pb_json_key(w, "parent");
            if (s[j].parent == PRISM_NO_NODE)
                pb_json_null(w);
            else
                pb_json_uint(w, s[j].parent);
            pb_json_kdouble(w, "ns", s[j].ns);
            pb_json_kuint(w, "samples", s[j].samples);
            pb_json_kdouble(w, "blocked", s[j].blocked);
            pb_json_end_object(w);
        }
        pb_json_end_array(w);
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
}

static void ops(pb_json *w, const prism_analysis *a, pb_buf *path)
{
    size_t n;
    const prism_op *op = prism_analysis_ops(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    pb_json_key(w, "ops");
    pb_json_begin_array(w);
    for (size_t i = 0; op && i < n; i++) {
        pb_json_begin_object(w);
        pb_json_kstring(w, "name", op[i].name);
        pb_json_kuint(w, "calls", op[i].calls);
        pb_json_kuint(w, "total_ns", op[i].total_ns);
        pb_json_kuint(w, "self_ns", op[i].self_ns);
        pb_json_kdouble(w, "share", op[i].share);
        if (prism_analysis_is_op(a, op[i].name))
            pb_json_kbool(w, "op", true);       /* the operator window's: its steps only */
        report_path(t, op[i].node, '/', false, path);
        pb_json_kstring(w, "heaviest_path", op[i].node < t->count ? pb_buf_str(path) : NULL);
        if (op[i].node < t->count && (t->nodes[op[i].node].flags & PRISM_NODE_UNATTRIBUTED))
            pb_json_kbool(w, "unattributed", true);    /* `(outside regions)` */
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
}

void report_json_bottleneck(pb_json *w, const prism_bottleneck *b, const prism_tree *t,
                            pb_buf *path)
{
    pb_json_begin_object(w);
    pb_json_kstring(w, "type", prism_bottleneck_name(b->type));
    pb_json_kstring(w, "severity", prism_severity_name(b->severity));
    pb_json_kdouble(w, "share", b->share);
    pb_json_kstring(w, "description", b->description);
    pb_json_kstring(w, "evidence", b->evidence);
    pb_json_kstring(w, "recommendation", b->recommendation);
    pb_json_key(w, "worth");
    if (b->step_without_ns > 0) {
        pb_json_begin_object(w);
        report_json_kns(w, "step_ns", b->step_ns);
        report_json_kns(w, "step_without_ns", b->step_without_ns);
        pb_json_kdouble(w, "speedup", b->step_ns / b->step_without_ns);
        pb_json_key(w, "with_workers");
        if (b->workers_to && b->step_with_workers_ns > 0) {
            pb_json_begin_object(w);
            pb_json_kuint(w, "workers_now", b->workers_now);
            pb_json_kuint(w, "workers", b->workers_to);
            report_json_kns(w, "step_ns", b->step_with_workers_ns);
            pb_json_kdouble(w, "speedup", b->step_ns / b->step_with_workers_ns);
            pb_json_end_object(w);
        } else {
            pb_json_null(w);
        }
        pb_json_end_object(w);
    } else {
        pb_json_null(w);
    }
    pb_json_kstring(w, "inside", b->inside[0] ? b->inside : NULL);
    bool has = b->node != PRISM_NO_NODE && b->node < t->count;
    if (has)
        report_path(t, b->node, '/', false, path);
    pb_json_kstring(w, "path", has ? pb_buf_str(path) : NULL);
    pb_json_end_object(w);
}

static void bottlenecks(pb_json *w, const prism_analysis *a, pb_buf *path)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    pb_json_key(w, "bottlenecks");
    pb_json_begin_array(w);
    for (size_t i = 0; b && i < n; i++)
        report_json_bottleneck(w, &b[i], t, path);
    pb_json_end_array(w);
}

static void gpu(pb_json *w, const prism_analysis *a)
{
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    pb_json_key(w, "gpu");
    pb_json_begin_object(w);
    pb_json_kbool(w, "present", g->present);
    pb_json_kstring(w, "status", g->status && g->status[0] ? g->status : NULL);
    pb_json_kuint(w, "kernel_ns", g->kernel_ns);
    pb_json_kuint(w, "copy_ns", g->copy_ns);
    pb_json_kuint(w, "memset_ns", g->memset_ns);
    pb_json_kuint(w, "sync_ns", g->sync_ns);
    pb_json_kuint(w, "api_ns", g->api_ns);
    pb_json_kuint(w, "busy_ns", g->busy_ns);
    pb_json_kuint(w, "span_ns", g->span_ns);
    pb_json_kdouble(w, "idle_share", g->idle_share);
    pb_json_kuint(w, "launches", g->launches);
    pb_json_kuint(w, "small_kernels", g->small_kernels);
    pb_json_kuint(w, "comm_kernel_ns", g->comm_kernel_ns);
    pb_json_kuint(w, "comm_launches", g->comm_launches);
    pb_json_kuint(w, "dropped", g->dropped);
    pb_json_key(w, "kernels");
    pb_json_begin_array(w);
    for (size_t i = 0; g->kernels && i < g->nkernels; i++) {
        const prism_kernel_stat *k = &g->kernels[i];
        pb_json_begin_object(w);
        pb_json_kstring(w, "name", k->name);
        pb_json_kuint(w, "count", k->count);
        pb_json_kuint(w, "total_ns", k->total_ns);
        report_json_kns(w, "mean_ns", k->mean_ns);
        pb_json_kdouble(w, "share", k->share);
        pb_json_kbool(w, "comm", k->comm);
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
    pb_json_key(w, "copies");
    pb_json_begin_array(w);
    for (size_t i = 0; g->copies && i < g->ncopies; i++) {
        const prism_copy_stat *c = &g->copies[i];
        pb_json_begin_object(w);
        pb_json_kstring(w, "kind", report_copy_kind(c->copy_kind));
        pb_json_kstring(w, "host_memory", report_mem_kind(c->src_kind));
        pb_json_kuint(w, "count", c->count);
        pb_json_kuint(w, "bytes", c->bytes);
        pb_json_kuint(w, "total_ns", c->total_ns);
        pb_json_kdouble(w, "gb_per_s", c->gb_per_s);
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
    pb_json_end_object(w);
}

/* The object's members after "schema". */
static bool analyze_members(pb_json *w, const char *path, const prism_analysis *a,
                            size_t max_series)
{
    pb_buf p = { 0 };
    pb_json_kstring(w, "file", path);
    pb_json_kbool(w, "complete", prism_analysis_complete(a));
    char st[256];
    pb_json_kstring(w, "status", report_status(a, st, sizeof st));
    report_json_header(w, prism_analysis_header(a));
    report_json_reader(w, a);
    summary(w, a);
    steps(w, a, max_series);
    memory(w, a);
    system_json(w, a);
    workers_json(w, a);
    work(w, a);
    ops(w, a, &p);
    analyze_ops_json(w, a, &p);
    sampled(w, a, &p);
    bottlenecks(w, a, &p);
    gpu(w, a);
    bool ok = !p.oom;
    pb_buf_free(&p);
    return ok;
}

bool analyze_write_json(FILE *f, const char *path, const prism_analysis *a)
{
    pb_json *w = report_json_begin(f, 2, "prism.analyze/1");
    if (!w)
        return false;
    bool ok = analyze_members(w, path, a, 0);
    return report_json_end(w) && ok;
}

bool analyze_json_buf(pb_buf *b, const char *path, const prism_analysis *a, size_t max_series)
{
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_kstring(&w, "schema", "prism.analyze/1");
    bool ok = analyze_members(&w, path, a, max_series);
    pb_json_end_object(&w);
    return pb_json_finish(&w) && ok && !b->oom;
}
