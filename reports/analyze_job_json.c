/*
 * analyze_job_json.c - `prism-top analyze --format json FILE...` for a job:
 * one JSON object, schema "prism.job/1" (every field is described in
 * docs/JSON.md, "The job report").  Times are integer nanoseconds (signed
 * where a difference), shares are percent where the name says so; a value
 * that does not exist is null.  The rank x step matrix is large (ranks x
 * steps x 2 numbers): written only when asked for (--steps).
 */
#include <math.h>

#include "json.h"
#include "report.h"

/* A signed nanosecond figure: an integer, or null when not finite. */
static void kns_signed(json_w *w, const char *key, double v)
{
    json_key(w, key);
    if (isfinite(v) && fabs(v) < 9.2e18)
        json_int(w, (int64_t)llround(v));
    else
        json_null(w);
}

static void delta(json_w *w, const char *key, const prism_job_delta *d, bool have)
{
    if (key)
        json_key(w, key);
    if (!have) {
        json_null(w);
        return;
    }
    json_begin_object(w);
    json_kstring(w, "name", d->name);
    json_kstring(w, "path", d->path);
    json_kuint(w, "depth", d->depth);
    report_json_kns(w, "rank_ns", d->rank_ns);
    report_json_kns(w, "median_ns", d->median_ns);
    kns_signed(w, "delta_ns", d->delta_ns);
    json_kbool(w, "wait", d->wait);
    json_end_object(w);
}

static void rank_obj(json_w *w, const prism_job_rank *r)
{
    const prism_rank_summary *s = &r->sum;
    json_begin_object(w);
    json_kint(w, "rank", r->id);
    json_kint(w, "header_rank", s->rank);
    json_kstring(w, "source", s->source);
    json_kstring(w, "host", s->host);
    json_kuint(w, "pid", s->pid);
    json_kstring(w, "thread", s->thread);
    json_kbool(w, "complete", s->complete);
    json_kuint(w, "events", s->events);
    json_kuint(w, "dropped", s->dropped);
    json_kuint(w, "steps_total", s->steps_total);
    json_kuint(w, "steps", s->nsteps);
    report_json_kns(w, "step_median_ns", r->step_median_ns);
    report_json_kns(w, "work_median_ns", r->work_median_ns);
    report_json_kns(w, "wait_median_ns", r->wait_median_ns);
    kns_signed(w, "excess_median_ns", r->excess_median_ns);
    json_kuint(w, "slowed", r->slowed);
    json_kbool(w, "straggler", r->straggler);
    json_end_object(w);
}

static void straggler_obj(json_w *w, const prism_straggler *s)
{
    json_begin_object(w);
    json_kint(w, "rank", s->rank);
    kns_signed(w, "excess_ns", s->excess_ns);
    json_kdouble(w, "excess_pct", s->excess_pct);
    json_kuint(w, "slowed", s->slowed);
    json_kuint(w, "steps", s->steps);
    json_key(w, "slowed_steps");
    json_begin_array(w);
    for (size_t i = 0; i < s->nslowed_index; i++)
        json_uint(w, s->slowed_index[i]);
    json_end_array(w);
    delta(w, "cause", &s->cause, s->have_cause);
    json_key(w, "deltas");
    json_begin_array(w);
    for (size_t i = 0; i < s->ndeltas; i++)
        delta(w, NULL, &s->deltas[i], true);
    json_end_array(w);
    report_json_kns(w, "others_wait_ns", s->others_wait_ns);
    delta(w, "wait_region", &s->wait_region, s->have_wait_region);
    json_end_object(w);
}

/* "steps": {"index": [...], "step_ns": [[rank 0's], ...], "work_ns": ...} */
static void matrix(json_w *w, const prism_job *j)
{
    json_key(w, "steps");
    json_begin_object(w);
    json_key(w, "index");
    json_begin_array(w);
    for (size_t s = 0; s < j->nsteps; s++)
        json_uint(w, j->step_index[s]);
    json_end_array(w);
    for (int which = 0; which < 2; which++) {
        json_key(w, which ? "work_ns" : "step_ns");
        json_begin_array(w);
        for (size_t r = 0; r < j->nranks; r++) {
            json_begin_array(w);
            for (size_t s = 0; s < j->nsteps; s++) {
                double v = which ? prism_job_work(j, r, s) : prism_job_step(j, r, s);
                if (isfinite(v) && v >= 0)
                    json_uint(w, (uint64_t)llround(v));
                else
                    json_null(w);
            }
            json_end_array(w);
        }
        json_end_array(w);
    }
    json_end_object(w);
}

bool job_write_json(FILE *f, const prism_job *j, bool steps)
{
    json_w *w = report_json_begin(f, 2, "prism.job/1");
    if (!w)
        return false;
    json_kuint(w, "ranks_count", j->nranks);
    json_kuint(w, "steps_aligned", j->nsteps);
    json_kbool(w, "ids_from_order", j->ids_from_order);
    json_key(w, "median_rank");
    if (j->nranks)
        json_int(w, j->ranks[j->median_rank].id);
    else
        json_null(w);
    json_key(w, "job_step");
    json_begin_object(w);
    report_json_kns(w, "median_ns", j->job_step_median_ns);
    report_json_kns(w, "mean_ns", j->job_step_mean_ns);
    report_json_kns(w, "total_ns", j->job_step_total_ns);
    json_end_object(w);
    json_key(w, "skew");
    json_begin_object(w);
    report_json_kns(w, "step_median_ns", j->skew_median_ns);
    report_json_kns(w, "step_max_ns", j->skew_max_ns);
    report_json_kns(w, "work_median_ns", j->work_skew_median_ns);
    json_end_object(w);
    json_key(w, "ranks");
    json_begin_array(w);
    for (size_t i = 0; i < j->nranks; i++)
        rank_obj(w, &j->ranks[i]);
    json_end_array(w);
    json_key(w, "stragglers");
    json_begin_array(w);
    for (size_t i = 0; i < j->nstragglers; i++)
        straggler_obj(w, &j->stragglers[i]);
    json_end_array(w);
    json_key(w, "failures");
    json_begin_array(w);
    for (size_t i = 0; i < j->nfailed; i++) {
        const prism_job_failure *x = &j->failed[i];
        json_begin_object(w);
        json_kstring(w, "source", x->source);
        json_kstring(w, "message", x->message);
        json_kuint(w, "offset", x->offset);
        json_kstring(w, "status", prism_strerror(x->status));
        json_end_object(w);
    }
    json_end_array(w);
    if (steps)
        matrix(w, j);
    return report_json_end(w);
}
