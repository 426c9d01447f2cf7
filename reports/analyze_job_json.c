/*
 * analyze_job_json.c - `prism-top analyze --format json FILE...` for a job:
 * one JSON object, schema "prism.job/1" (every field is described in
 * docs/JSON.md, "The job report").  Times are integer nanoseconds (signed
 * where a difference), shares are percent where the name says so; a value
 * that does not exist is null.  The rank x step matrix is large (ranks x
 * steps x 2 numbers): written only when asked for (--steps).
 */
#include <math.h>

#include "jsonw.h"
#include "report.h"

/* A signed nanosecond figure: an integer, or null when not finite. */
static void kns_signed(pb_json *w, const char *key, double v)
{
    pb_json_key(w, key);
    if (isfinite(v) && fabs(v) < 9.2e18)
        pb_json_int(w, (int64_t)llround(v));
    else
        pb_json_null(w);
}

static void delta(pb_json *w, const char *key, const prism_job_delta *d, bool have)
{
    if (key)
        pb_json_key(w, key);
    if (!have) {
        pb_json_null(w);
        return;
    }
    pb_json_begin_object(w);
    pb_json_kstring(w, "name", d->name);
    pb_json_kstring(w, "path", d->path);
    pb_json_kuint(w, "depth", d->depth);
    report_json_kns(w, "rank_ns", d->rank_ns);
    report_json_kns(w, "median_ns", d->median_ns);
    kns_signed(w, "delta_ns", d->delta_ns);
    pb_json_kbool(w, "wait", d->wait);
    pb_json_end_object(w);
}

static void rank_obj(pb_json *w, const prism_job_rank *r)
{
    const prism_rank_summary *s = &r->sum;
    pb_json_begin_object(w);
    pb_json_kint(w, "rank", r->id);
    pb_json_kint(w, "header_rank", s->rank);
    pb_json_kstring(w, "source", s->source);
    pb_json_kstring(w, "host", s->host);
    pb_json_kuint(w, "pid", s->pid);
    pb_json_kstring(w, "thread", s->thread);
    pb_json_kbool(w, "complete", s->complete);
    pb_json_kuint(w, "events", s->events);
    pb_json_kuint(w, "dropped", s->dropped);
    pb_json_kuint(w, "steps_total", s->steps_total);
    pb_json_kuint(w, "steps", s->nsteps);
    report_json_kns(w, "step_median_ns", r->step_median_ns);
    report_json_kns(w, "work_median_ns", r->work_median_ns);
    report_json_kns(w, "wait_median_ns", r->wait_median_ns);
    kns_signed(w, "excess_median_ns", r->excess_median_ns);
    pb_json_kuint(w, "slowed", r->slowed);
    pb_json_kbool(w, "straggler", r->straggler);
    pb_json_end_object(w);
}

static void straggler_obj(pb_json *w, const prism_job *j, const prism_straggler *s)
{
    pb_json_begin_object(w);
    pb_json_kint(w, "rank", s->rank);
    if (s->index < j->nranks) {        /* its file, whatever numbered it */
        pb_json_kint(w, "header_rank", j->ranks[s->index].sum.rank);
        pb_json_kstring(w, "source", j->ranks[s->index].sum.source);
    }
    kns_signed(w, "excess_ns", s->excess_ns);
    pb_json_kdouble(w, "excess_pct", s->excess_pct);
    pb_json_kuint(w, "slowed", s->slowed);
    pb_json_kuint(w, "steps", s->steps);
    pb_json_key(w, "slowed_steps");
    pb_json_begin_array(w);
    for (size_t i = 0; i < s->nslowed_index; i++)
        pb_json_uint(w, s->slowed_index[i]);
    pb_json_end_array(w);
    delta(w, "cause", &s->cause, s->have_cause);
    pb_json_key(w, "deltas");
    pb_json_begin_array(w);
    for (size_t i = 0; i < s->ndeltas; i++)
        delta(w, NULL, &s->deltas[i], true);
    pb_json_end_array(w);
    report_json_kns(w, "others_wait_ns", s->others_wait_ns);
    delta(w, "wait_region", &s->wait_region, s->have_wait_region);
    pb_json_end_object(w);
}

/* "steps": {"index": [...], "step_ns": [[rank 0's], ...], "work_ns": ...} */
static void matrix(pb_json *w, const prism_job *j)
{
    pb_json_key(w, "steps");
    pb_json_begin_object(w);
    pb_json_key(w, "index");
    pb_json_begin_array(w);
    for (size_t s = 0; s < j->nsteps; s++)
        pb_json_uint(w, j->step_index[s]);
    pb_json_end_array(w);
    for (int which = 0; which < 2; which++) {
        pb_json_key(w, which ? "work_ns" : "step_ns");
        pb_json_begin_array(w);
        for (size_t r = 0; r < j->nranks; r++) {
            pb_json_begin_array(w);
            for (size_t s = 0; s < j->nsteps; s++) {
                double v = which ? prism_job_work(j, r, s) : prism_job_step(j, r, s);
                if (isfinite(v) && v >= 0)
                    pb_json_uint(w, (uint64_t)llround(v));
                else
                    pb_json_null(w);
            }
            pb_json_end_array(w);
        }
        pb_json_end_array(w);
    }
    pb_json_end_object(w);
}

bool job_write_json(FILE *f, const prism_job *j, bool steps)
{
    pb_json *w = report_json_begin(f, 2, "prism.job/1");
    if (!w)
        return false;
    pb_json_kuint(w, "ranks_count", j->nranks);
    pb_json_kuint(w, "steps_aligned", j->nsteps);
    pb_json_kbool(w, "ids_from_order", j->ids_from_order);
    pb_json_key(w, "median_rank");
    if (j->nranks)
        pb_json_int(w, j->ranks[j->median_rank].id);
    else
        pb_json_null(w);
    pb_json_key(w, "job_step");
    pb_json_begin_object(w);
    report_json_kns(w, "median_ns", j->job_step_median_ns);
    report_json_kns(w, "mean_ns", j->job_step_mean_ns);
    report_json_kns(w, "total_ns", j->job_step_total_ns);
    pb_json_end_object(w);
    pb_json_key(w, "skew");
    pb_json_begin_object(w);
    report_json_kns(w, "step_median_ns", j->skew_median_ns);
    report_json_kns(w, "step_max_ns", j->skew_max_ns);
    report_json_kns(w, "work_median_ns", j->work_skew_median_ns);
    pb_json_end_object(w);
    pb_json_key(w, "ranks");
    pb_json_begin_array(w);
    for (size_t i = 0; i < j->nranks; i++)
        rank_obj(w, &j->ranks[i]);
    pb_json_end_array(w);
    pb_json_key(w, "stragglers");
    pb_json_begin_array(w);
    for (size_t i = 0; i < j->nstragglers; i++)
        straggler_obj(w, j, &j->stragglers[i]);
    pb_json_end_array(w);
    pb_json_key(w, "failures");
    pb_json_begin_array(w);
    for (size_t i = 0; i < j->nfailed; i++) {
        const prism_job_failure *x = &j->failed[i];
        pb_json_begin_object(w);
        pb_json_kstring(w, "source", x->source);
        pb_json_kstring(w, "message", x->message);
        pb_json_kuint(w, "offset", x->offset);
        pb_json_kstring(w, "status", prism_strerror(x->status));
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
    if (steps)
        matrix(w, j);
    return report_json_end(w);
}
