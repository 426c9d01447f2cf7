/*
 * load.c - who used the CPUs over the run (prism_cpu_load): the machine,
 * this process and its child processes from the memory samples (process
 * CPU at every sample; the machine's busy time and the children's CPU at
 * the samples that read them, format 1.2, each since the previous such
 * sample), and the process's recorded threads from the CPU samples (each
 * thread's on-CPU time over every interval, cpu.c).
 *
 * The machine, process, workers and others figures come from the same
 * intervals (those where all three of busy, process and children are
 * known), so that they add up; without the machine's load the process
 * figure is over every interval with process CPU.  The threads' figures
 * are over the CPU samples' span, which covers the same run.
 * Owner: who took the CPUs (issue 26).
 */
#include "internal.h"

#define UNKNOWN (-1.0)

typedef struct sums {
    double proc_ns, proc_span;          /* every interval with process CPU */
    double acc_ns;                      /* process CPU since the last load sample */
    bool acc_ok;                        /* ... known over all of it */
    double busy_ns, proc_in, kids_ns, span;  /* load intervals, all three known */
    uint32_t ncpu;
} sums;

static void memory_sums(const prism_analysis *a, sums *s)
{
    const prism_mem_point *m = a->mem;
    uint64_t last_load = 0;
    bool have_load = false;
    s->acc_ok = true;
    for (size_t i = 0; i < a->nmem; i++) {
        if (i && m[i].ts > m[i - 1].ts) {
            double dt = (double)(m[i].ts - m[i - 1].ts);
            if (m[i].cpu_permille != PRISM_NO_CPU) {
                double ns = m[i].cpu_permille / 1000.0 * dt;
                s->proc_ns += ns;
                s->proc_span += dt;
                s->acc_ns += ns;
            } else {
                s->acc_ok = false;
            }
        }
        if (!m[i].ncpu)
            continue;
        s->ncpu = m[i].ncpu;
        if (have_load && m[i].ts > last_load && s->acc_ok &&
            m[i].host_busy_permille != PRISM_NO_CPU &&
            m[i].children_cpu_permille != PRISM_NO_CPU) {
            double dt = (double)(m[i].ts - last_load);
            s->busy_ns += m[i].host_busy_permille / 1000.0 * dt;
            s->kids_ns += m[i].children_cpu_permille / 1000.0 * dt;
            s->proc_in += s->acc_ns;
            s->span += dt;
        }
        have_load = true;
        last_load = m[i].ts;
        s->acc_ns = 0;
        s->acc_ok = true;
    }
}

void an_cpu_load(prism_analysis *a)
{
    prism_cpu_load *l = &a->cpu_load;
    *l = (prism_cpu_load){ .machine = UNKNOWN, .process = UNKNOWN, .training = UNKNOWN,
                           .other_threads = UNKNOWN, .unrecorded = UNKNOWN,
                           .workers = UNKNOWN, .others = UNKNOWN };
    sums s = { 0 };
    memory_sums(a, &s);
    l->ncpu = s.ncpu;
    if (s.span > 0) {
        l->span_ns = s.span;
        l->machine = s.busy_ns / s.span;
        l->process = s.proc_in / s.span;
        l->workers = s.kids_ns / s.span;
        double o = l->machine - l->process - l->workers;
        l->others = o > 0 ? o : 0;
    } else if (s.proc_span > 0) {
        l->process = s.proc_ns / s.proc_span;
    }
    if (!a->cpu_present || a->cpu_t1 <= a->cpu_t0 || !a->nthreads)
        return;
    double span = (double)(a->cpu_t1 - a->cpu_t0), all = 0;
    size_t train = a->train;
    for (size_t i = 0; i < a->nthreads; i++) {
        if (a->threads[i]->worker)
            continue;                   /* worker processes: counted in workers */
        all += (double)a->threads[i]->cpu.on_all;
        if (train >= a->nthreads || a->threads[i]->cpu.on_all > a->threads[train]->cpu.on_all)
            train = a->train < a->nthreads ? a->train : i;  /* unknown: the busiest */
    }
    if (train >= a->nthreads)
        return;
    l->training = (double)a->threads[train]->cpu.on_all / span;
    l->other_threads = (all - (double)a->threads[train]->cpu.on_all) / span;
    if (l->process >= 0) {
        double u = l->process - l->training - l->other_threads;
        l->unrecorded = u > 0 ? u : 0;
    }
}
