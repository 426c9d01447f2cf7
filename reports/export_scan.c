/*
 * export_scan.c - the exports' quick first pass over a file: its threads,
 * its steps and the thread that marks them (INFO steps.thread), read with
 * no callback for the events (the reader decodes at a few ns a record;
 * the analysis of the same file costs ten times that).  See export_scope.h.
 */
#include <stdlib.h>
#include <string.h>

#include "export_scope.h"

static void on_thread(void *ctx, const prism_thread *th)
{
    ex_scan *s = ctx;
    uint64_t i;
    if (!pb_map_get(&s->thread_of, th->stream, &i)) {
        if (!pb_vec_reserve((void **)&s->threads, &s->tcap, s->nthreads + 1,
                            sizeof *s->threads) ||
            !pb_map_put(&s->thread_of, th->stream, s->nthreads)) {
            s->oom = true;
            return;
        }
        i = s->nthreads;
        s->threads[s->nthreads++] = (ex_thread){ th->stream, 0, NULL };
    }
    ex_thread *t = &s->threads[i];
    char *name = strdup(th->name ? th->name : "");
    if (!name) {
        s->oom = true;
        return;
    }
    free(t->name);                      /* a thread renamed: its last name */
    t->name = name;
    t->os_tid = th->os_tid;
    if (s->lead)
        ex_lead_thread(s->lead, th);
}

static void on_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    ex_scan *s = ctx;
    if (!s->step_stream)                /* named: nothing to find */
        ex_lead_regions(s->lead, stream, depth, ev, n);
}

static void on_steps(void *ctx, uint32_t stream, const prism_step *st, size_t n)
{
    ex_scan *s = ctx;
    (void)stream;
    if (!pb_vec_reserve((void **)&s->steps, &s->scap, s->nsteps + n, sizeof *s->steps)) {
        s->oom = true;
        return;
    }
    memcpy(s->steps + s->nsteps, st, n * sizeof *st);
    s->nsteps += n;
    if (s->lead && !s->step_stream)
        ex_lead_steps(s->lead, st, n);
}

static void on_info(void *ctx, const char *key, const prism_value *v)
{
    ex_scan *s = ctx;
    /* as the analysis reads it (analysis/model.c) */
    if (!strcmp(key, "steps.thread") && v->type == PRISM_VAL_UINT && v->v.u &&
        v->v.u < UINT32_MAX)
        s->step_stream = (uint32_t)v->v.u;
}

static void scan(const char *path, ex_scan *s, bool train)
{
    memset(s, 0, sizeof *s);
    prism_reader_callbacks cb = { .thread = on_thread, .steps = on_steps, .info = on_info };
    if (train && (s->lead = ex_lead_new()) != NULL)
        cb.regions = on_regions;
    prism_reader *r = NULL;
    s->read = prism_read_file(path, &cb, s, &r) == PRISM_OK && !s->oom;
    prism_reader_free(r);
    if (s->lead && s->read && !s->step_stream) {
        int found = ex_lead_result(s->lead, &s->train);
        s->train_known = found >= 0;
        s->train_found = found > 0;
    }
    ex_lead_free(s->lead);
    s->lead = NULL;
}

void ex_scan_file(const char *path, ex_scan *s)
{
    scan(path, s, false);
}

void ex_scan_file_train(const char *path, ex_scan *s)
{
    scan(path, s, true);
}

void ex_scan_free(ex_scan *s)
{
    for (size_t i = 0; i < s->nthreads; i++)
        free(s->threads[i].name);
    free(s->threads);
    free(s->steps);
    pb_map_free(&s->thread_of);
    memset(s, 0, sizeof *s);
}

const ex_thread *ex_scan_thread(const ex_scan *s, uint32_t stream)
{
    uint64_t i;
    return pb_map_get(&s->thread_of, stream, &i) ? &s->threads[i] : NULL;
}
