/*
 * analyze_json.c - `prism-top analyze --format json`: the report as one
 * JSON object, schema "prism.analyze/1" (every field is described in
 * docs/JSON.md).  Times are integer nanoseconds, sizes integer bytes,
 * shares fractions 0..1; a value that does not exist is null.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"

static void value(json_w *w, const prism_value *v)
{
    switch (v->type) {
    case PRISM_VAL_INT: json_int(w, v->v.i); break;
    case PRISM_VAL_UINT: json_uint(w, v->v.u); break;
    case PRISM_VAL_FLOAT: json_double(w, v->v.f); break;
    case PRISM_VAL_BOOL: json_bool(w, v->v.b); break;
    case PRISM_VAL_TEXT: json_string(w, v->v.s); break;
    default: json_null(w); break;
    }
}

void report_json_header(json_w *w, const prism_header *h)
{
    json_key(w, "header");
    if (!h) {
        json_null(w);
        return;
    }
    json_begin_object(w);
    json_kuint(w, "format_major", h->version_major);
    json_kuint(w, "format_minor", h->version_minor);
    json_kstring(w, "producer", h->producer);
    json_kstring(w, "host", h->host);
    json_kuint(w, "pid", h->pid);
    json_kint(w, "rank", h->rank);
    json_kstring(w, "clock", h->clock);
    json_kuint(w, "start_unix_ns", h->start_unix_ns);
    json_key(w, "argv");
    json_begin_array(w);
    for (size_t i = 0; i < h->argc; i++)
        json_string(w, h->argv[i]);
    json_end_array(w);
    json_key(w, "config");
    json_begin_array(w);
    for (size_t i = 0; i < h->nconfig; i++) {
        json_begin_object(w);
        json_kstring(w, "key", h->config[i].key);
        json_key(w, "value");
        value(w, &h->config[i].value);
        json_end_object(w);
    }
    json_end_array(w);
    json_end_object(w);
}

void report_json_reader(json_w *w, const prism_analysis *a)
{
    const prism_reader_stats *s = prism_analysis_reader_stats(a);
    json_key(w, "reader");
    if (!s) {
        json_null(w);
        return;
    }
    json_begin_object(w);
    json_kuint(w, "chunks", s->chunks);
    json_kuint(w, "records", s->records);
    json_kuint(w, "damaged_runs", s->damaged);
    json_kuint(w, "bad_checksum", s->bad_checksum);
    json_kuint(w, "skipped_bytes", s->skipped_bytes);
    json_kuint(w, "malformed", s->malformed);
    json_kuint(w, "unknown_kinds", s->unknown);
    json_kuint(w, "seq_gaps", s->seq_gaps);
    json_kuint(w, "torn_bytes", s->torn_bytes);
    json_kbool(w, "footer", s->footer);
    json_end_object(w);
}

static void summary(json_w *w, const prism_analysis *a)
{
    const prism_tree *t = prism_analysis_tree(a);
    json_key(w, "summary");
    json_begin_object(w);
    json_kuint(w, "events", prism_analysis_events(a));
    json_kuint(w, "dropped", prism_analysis_dropped(a));
    bool whole;
    uint64_t placed, regions = prism_analysis_dropped_regions(a, &whole, &placed);
    json_kuint(w, "dropped_regions", regions);
    json_kuint(w, "dropped_regions_placed", placed);
    json_kbool(w, "dropped_whole", whole);
    json_kuint(w, "span_ns", prism_analysis_span_ns(a));
    json_kuint(w, "region_ns", t->total_ns);
    json_kuint(w, "nodes", t->count);
    report_json_threads(w, a, "region_ns", NULL);
    uint64_t nsteps;
    double denom = prism_analysis_step_denominator(a, &nsteps);
    json_kstring(w, "share_of", nsteps ? "steps" : "run");
    json_kuint(w, "share_denominator_ns", (uint64_t)denom);
    size_t ti = prism_analysis_training_thread(a);
    const char *tname = NULL;
    if (ti != SIZE_MAX)
        prism_analysis_thread_tree(a, ti, NULL, &tname);
    json_kstring(w, "training_thread", tname);
    json_kbool(w, "cpu_samples", prism_analysis_cpu_present(a));
    json_kstring(w, "cpu_sampler", prism_analysis_cpu_status(a));
    json_end_object(w);
}

static void steps(json_w *w, const prism_analysis *a)
{
    const prism_step_stats *s = prism_analysis_steps(a);
    json_key(w, "steps");
    json_begin_object(w);
    json_kuint(w, "count", s->count);
    json_kuint(w, "sampled", s->sampled);
    json_kuint(w, "total_ns", s->total_ns);
    report_json_kns(w, "mean_ns", s->mean_ns);
    report_json_kns(w, "p50_ns", s->p50_ns);
    report_json_kns(w, "p95_ns", s->p95_ns);
    report_json_kns(w, "max_ns", s->max_ns);
    report_json_kns(w, "std_ns", s->std_ns);
    json_kuint(w, "timed", s->timed);
    json_kuint(w, "bad_order", s->bad_order);
    json_kuint(w, "zero_len", s->zero_len);
    json_kuint(w, "overlapping", s->overlapping);
    json_kuint(w, "dup_index", s->dup_index);
    json_key(w, "series");
    json_begin_array(w);
    for (size_t i = 0; s->series && i < s->nseries; i++) {
        const prism_step *p = &s->series[i];
        json_begin_object(w);
        json_kuint(w, "index", p->index);
        json_kuint(w, "epoch", p->epoch);
        json_kuint(w, "start_ns", p->start);
        json_kuint(w, "duration_ns", p->end >= p->start ? p->end - p->start : 0);
        json_kbool(w, "sampled", (p->flags & PRISM_STEP_SAMPLED) != 0);
        json_end_object(w);
    }
    json_end_array(w);
    json_end_object(w);
}

static void fit(json_w *w, const char *key, const prism_leak *l, bool present)
{
    json_key(w, key);
    if (!present) {
        json_null(w);
        return;
    }
    json_begin_object(w);
    json_kbool(w, "have_fit", l->have_fit);
    json_kuint(w, "points", l->points);
    json_kdouble(w, "slope_mb_per_step", l->slope_mb_per_step);
    json_kdouble(w, "r2", l->r2);
    json_kdouble(w, "start_mb", l->start_mb);
    json_kdouble(w, "end_mb", l->end_mb);
    json_kbool(w, "leak", l->leak);
    json_kstring(w, "verdict", prism_leak_verdict_name(l->verdict));
    json_kstring(w, "reason", l->reason);
    json_kdouble(w, "slope_se_mb_per_step", l->slope_se_mb);
    json_kdouble(w, "t", l->t);
    json_kdouble(w, "growth_mb", l->growth_mb);
    json_kdouble(w, "growth_pct", l->growth_pct);
    json_kuint(w, "span_steps", l->span_steps);
    json_kdouble(w, "mid_slope_mb_per_step", l->mid_slope_mb_per_step);
    json_kdouble(w, "late_slope_mb_per_step", l->late_slope_mb_per_step);
    json_kuint(w, "projection_steps", l->projection_steps);
    json_kstring(w, "projection_to", l->projection_epoch ? "epoch_end" : "steps");
    json_kdouble(w, "projected_mb", l->projected_mb);
    json_end_object(w);
}

static void memory(json_w *w, const prism_analysis *a)
{
    const prism_memory_stats *m = prism_analysis_memory(a);
    json_key(w, "memory");
    json_begin_object(w);
    json_kuint(w, "samples", m->count);
    json_kuint(w, "peak_rss_bytes", m->peak_rss);
    json_kbool(w, "have_gpu", m->have_gpu);
    json_key(w, "peak_gpu_used_bytes");
    m->have_gpu ? json_uint(w, m->peak_gpu_used) : json_null(w);
    json_key(w, "peak_gpu_reserved_bytes");
    m->have_gpu ? json_uint(w, m->peak_gpu_reserved) : json_null(w);
    json_kbool(w, "leak_detected", m->host.leak || (m->have_gpu && m->gpu.leak));
    fit(w, "host_leak", &m->host, true);
    fit(w, "gpu_leak", &m->gpu, m->have_gpu);
    json_end_object(w);
}

static void work(json_w *w, const prism_analysis *a)
{
    const prism_work_stats *k = prism_analysis_work(a);
    json_key(w, "work");
    json_begin_object(w);
    json_kbool(w, "present", k->present);
    json_kdouble(w, "flops", k->flops);
    json_kdouble(w, "bytes", k->bytes);
    json_kdouble(w, "unattributed_flops", k->unattributed_flops);
    json_kdouble(w, "unattributed_bytes", k->unattributed_bytes);
    json_key(w, "intensity");
    k->bytes > 0 ? json_double(w, k->intensity) : json_null(w);
    json_kdouble(w, "ridge", k->ridge);
    json_end_object(w);
}

static void ops(json_w *w, const prism_analysis *a, strbuf *path)
{
    size_t n;
    const prism_op *op = prism_analysis_ops(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    json_key(w, "ops");
    json_begin_array(w);
    for (size_t i = 0; op && i < n; i++) {
        json_begin_object(w);
        json_kstring(w, "name", op[i].name);
        json_kuint(w, "calls", op[i].calls);
        json_kuint(w, "total_ns", op[i].total_ns);
        json_kuint(w, "self_ns", op[i].self_ns);
        json_kdouble(w, "share", op[i].share);
        report_path(t, op[i].node, '/', false, path);
        json_kstring(w, "heaviest_path", op[i].node < t->count ? path->s : NULL);
        json_end_object(w);
    }
    json_end_array(w);
}

void report_json_bottleneck(json_w *w, const prism_bottleneck *b, const prism_tree *t,
                            strbuf *path)
{
    json_begin_object(w);
    json_kstring(w, "type", prism_bottleneck_name(b->type));
    json_kstring(w, "severity", prism_severity_name(b->severity));
    json_kdouble(w, "share", b->share);
    json_kstring(w, "description", b->description);
    json_kstring(w, "evidence", b->evidence);
    json_kstring(w, "recommendation", b->recommendation);
    bool has = b->node != PRISM_NO_NODE && b->node < t->count;
    if (has)
        report_path(t, b->node, '/', false, path);
    json_kstring(w, "path", has ? path->s : NULL);
    json_end_object(w);
}

static void bottlenecks(json_w *w, const prism_analysis *a, strbuf *path)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    json_key(w, "bottlenecks");
    json_begin_array(w);
    for (size_t i = 0; b && i < n; i++)
        report_json_bottleneck(w, &b[i], t, path);
    json_end_array(w);
}

static void gpu(json_w *w, const prism_analysis *a)
{
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    json_key(w, "gpu");
    json_begin_object(w);
    json_kbool(w, "present", g->present);
    json_kstring(w, "status", g->status && g->status[0] ? g->status : NULL);
    json_kuint(w, "kernel_ns", g->kernel_ns);
    json_kuint(w, "copy_ns", g->copy_ns);
    json_kuint(w, "memset_ns", g->memset_ns);
    json_kuint(w, "sync_ns", g->sync_ns);
    json_kuint(w, "api_ns", g->api_ns);
    json_kuint(w, "busy_ns", g->busy_ns);
    json_kuint(w, "span_ns", g->span_ns);
    json_kdouble(w, "idle_share", g->idle_share);
    json_kuint(w, "launches", g->launches);
    json_kuint(w, "small_kernels", g->small_kernels);
    json_kuint(w, "dropped", g->dropped);
    json_key(w, "kernels");
    json_begin_array(w);
    for (size_t i = 0; g->kernels && i < g->nkernels; i++) {
        const prism_kernel_stat *k = &g->kernels[i];
        json_begin_object(w);
        json_kstring(w, "name", k->name);
        json_kuint(w, "count", k->count);
        json_kuint(w, "total_ns", k->total_ns);
        report_json_kns(w, "mean_ns", k->mean_ns);
        json_kdouble(w, "share", k->share);
        json_end_object(w);
    }
    json_end_array(w);
    json_key(w, "copies");
    json_begin_array(w);
    for (size_t i = 0; g->copies && i < g->ncopies; i++) {
        const prism_copy_stat *c = &g->copies[i];
        json_begin_object(w);
        json_kstring(w, "kind", report_copy_kind(c->copy_kind));
        json_kstring(w, "host_memory", report_mem_kind(c->src_kind));
        json_kuint(w, "count", c->count);
        json_kuint(w, "bytes", c->bytes);
        json_kuint(w, "total_ns", c->total_ns);
        json_kdouble(w, "gb_per_s", c->gb_per_s);
        json_end_object(w);
    }
    json_end_array(w);
    json_end_object(w);
}

bool analyze_write_json(FILE *f, const char *path, const prism_analysis *a)
{
    json_w *w = report_json_begin(f, 2, "prism.analyze/1");
    if (!w)
        return false;
    strbuf p;
    sb_init(&p);
    json_kstring(w, "file", path);
    json_kbool(w, "complete", prism_analysis_complete(a));
    report_json_header(w, prism_analysis_header(a));
    report_json_reader(w, a);
    summary(w, a);
    steps(w, a);
    memory(w, a);
    work(w, a);
    ops(w, a, &p);
    bottlenecks(w, a, &p);
    gpu(w, a);
    bool ok = report_json_end(w) && !p.oom;
    sb_free(&p);
    return ok;
}
