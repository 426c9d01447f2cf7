/*
 * compare.c - the compare report (`prism-top compare A B`): two profiles.  The
 * metric table follows the reference comparison report; then whether the
 * whole run moved (the machine rather than the code); below it, the call
 * paths matched by name with their deltas (largest change first), their
 * per-step medians' change, their share of the step, a significance test
 * against step-to-step noise (a rank test on per-step samples), regions
 * that appeared or vanished, and bottlenecks found on one side only.
 * JSON: schema "prism.compare/1" (docs/JSON.md).
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "report.h"
#include "units.h"

#define RULE "============================================================\n"

/* Host RSS or the GPU verdict (the CUDA allocations' when recorded). */
static bool leak_detected(const prism_memory_stats *m)
{
    const prism_leak *g = prism_memory_gpu_leak(m, NULL);
    return m->host.leak || (g && g->leak);
}

/* The figures of the metric table for one profile. */
typedef struct metrics {
    double steps, sampled, total_ns, mean_ns, p95_ns, peak_host_mb, peak_gpu_mb;
    bool have_gpu, leak;
} metrics;

static metrics metrics_of(const prism_analysis *a)
{
    const prism_step_stats *s = prism_analysis_steps(a);
    const prism_memory_stats *m = prism_analysis_memory(a);
    metrics x = {
        .steps = (double)s->count, .sampled = (double)s->sampled,
        .total_ns = s->count ? (double)s->total_ns : (double)prism_analysis_tree(a)->total_ns,
        .mean_ns = s->mean_ns, .p95_ns = s->p95_ns,
        .peak_host_mb = bytes_mb((double)m->peak_rss),
        .peak_gpu_mb = bytes_mb((double)m->peak_gpu_used),
        .have_gpu = m->have_gpu, .leak = leak_detected(m),
    };
    return x;
}

/* How a metric reads: a count, a duration (ns) or a figure with decimals. */
enum { AS_COUNT = -2, AS_NS = -1 };

static void figure(char *buf, size_t cap, double v, int as)
{
    if (as == AS_NS)
        report_ns(buf, cap, v, 0);
    else if (as == AS_COUNT)
        report_count(buf, cap, v, 0);
    else
        snprintf(buf, cap, "%.*f", as, v);
}

/* One row of the metric table (as: AS_COUNT, AS_NS, else decimals); a side
 * without the figure shows n/a, and so does the delta. */
static void row2(FILE *f, const char *name, double a, double b, int as, bool has_a,
                 bool has_b)
{
    char va[48] = "n/a", vb[48] = "n/a", pa[64], pb[64], delta[64] = "n/a", pd[96];
    if (has_a)
        figure(va, sizeof va, a, as);
    if (has_b)
        figure(vb, sizeof vb, b, as);
    if (has_a && has_b) {
        double d = b - a;
        char pct[32] = "";
        if (as != AS_COUNT && a != 0)
            snprintf(pct, sizeof pct, " (%+.1f%%)", d / a * 100);
        if (as == AS_NS)
            fmt_ns_signed(delta, sizeof delta, d);
        else if (as == AS_COUNT)
            snprintf(delta, sizeof delta, "%+.0f", d);
        else
            snprintf(delta, sizeof delta, "%+.*f", as, d);
        snprintf(delta + strlen(delta), sizeof delta - strlen(delta), "%s", pct);
    }
    fmt_rpad(pa, sizeof pa, va, 15);
    fmt_rpad(pb, sizeof pb, vb, 15);
    fmt_rpad(pd, sizeof pd, delta, 22);
    fprintf(f, "%-24s %s %s %s\n", name, pa, pb, pd);
}

static void row(FILE *f, const char *name, double a, double b, int decimals, bool present)
{
    row2(f, name, a, b, decimals, present, present);
}

static void metric_table(FILE *f, const metrics *a, const metrics *b)
{
    fprintf(f, "%-24s %15s %15s %22s\n", "Metric", "Profile 1", "Profile 2", "Delta");
    fputs("------------------------------------------------------------------------------\n", f);
    row(f, "steps", a->steps, b->steps, AS_COUNT, true);
    row(f, "sampled_steps", a->sampled, b->sampled, AS_COUNT, true);
    row(f, "total_time", a->total_ns, b->total_ns, AS_NS, true);
    row2(f, "mean_step", a->mean_ns, b->mean_ns, AS_NS, a->steps > 0, b->steps > 0);
    row2(f, "p95_step", a->p95_ns, b->p95_ns, AS_NS, a->steps > 0, b->steps > 0);
    row(f, "peak_host_mb", a->peak_host_mb, b->peak_host_mb, 2, true);
    row2(f, "peak_gpu_mb", a->peak_gpu_mb, b->peak_gpu_mb, 2, a->have_gpu, b->have_gpu);
    fprintf(f, "%-24s %15s %15s %22s\n", "memory_leak_detected", a->leak ? "True" : "False",
            b->leak ? "True" : "False", a->leak == b->leak ? "same" : "changed");
}

/* One side's CPU load in few words; false when the file says nothing. */
static bool load_words(char *buf, size_t cap, const prism_cpu_load *l)
{
    if (l->process < 0 && l->machine < 0 && l->training < 0)
        return false;
    size_t n = 0;
    buf[0] = '\0';
    if (l->machine >= 0)
        n += (size_t)snprintf(buf, cap, "machine %.1f of %u, ", l->machine, l->ncpu);
    if (l->process >= 0)
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "this process %.1f", l->process);
    else if (l->training >= 0)
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "training thread %.1f",
                              l->training);
    if (l->machine >= 0 && n < cap)
        snprintf(buf + n, cap - n, ", other processes %.1f", l->others);
    return true;
}

#define MOVED_ALIKE 0.05         /* every region at least 5 % the same way */
#define HEAVY_LOAD 0.5           /* a run-queue share: own time unreliable */

/* The whole run: one factor for every region, or none. */
void compare_write_run(FILE *f, const prism_analysis *a, const prism_analysis *b,
                      const prism_compare *c)
{
    char step[160] = "";
    if (c->step_ratio > 0) {
        /* the median of steps of two kinds (fast and slow, one per worker
         * batch) jumps between them: x4.95 where the mean moved 4 % (a
         * user's trial); the mean beside it where the two disagree */
        const prism_step_stats *sa = prism_analysis_steps(a), *sb = prism_analysis_steps(b);
        double mr = sa && sb && sa->mean_ns > 0 && sb->mean_ns > 0
                    ? sb->mean_ns / sa->mean_ns : 0;
        if (mr > 0 && fabs(log(c->step_ratio / mr)) > log(1.5))
            snprintf(step, sizeof step, "; median step x%.2f, mean step x%.2f: the steps' "
                     "times are not of one kind", c->step_ratio, mr);
        else
            snprintf(step, sizeof step, "; median step x%.2f", c->step_ratio);
    }
    if (c->whole_run_shift) {
        double pct = 100.0 * (c->run_factor - 1.0);
        /* regions in the steps of one run only: the program changed too,
         * and a change that slows every region (a larger model) looks
         * like a slower machine */
        size_t moved = 0;
        for (size_t i = 0; i < c->count; i++) {
            const prism_delta *d = &c->deltas[i];
            moved += (d->base_node == PRISM_NO_NODE && d->new_steps) ||
                     (d->new_node == PRISM_NO_NODE && d->base_steps);
        }
        char also[96] = "";
        if (moved)
            snprintf(also, sizeof also, ", or the program's own change (%zu region%s in the "
                     "steps of one run only)", moved, moved == 1 ? "" : "s");
        fprintf(f, "Whole run: %.1f%% %s (x%.2f; %zu of %zu regions agree%s): the machine, "
                "clocks or contention%s, not one region.\n"
                "  Each region below is tested against x%.2f (med %% is its change beyond it).\n",
                fabs(pct), pct > 0 ? "slower" : "faster", c->run_factor, c->run_agree,
                c->run_regions, step, also, c->run_factor);
    } else if (c->run_regions >= 3) {
        /* every sizeable region moved the same way, by different factors
         * (a quiet run against one beside CPU hogs: x4-x8): say so, not
         * only "no common shift" */
        double lo = 0, hi = 0;
        size_t n = 0;
        for (size_t i = 0; i < c->count; i++) {
            const prism_delta *d = &c->deltas[i];
            if (d->base_node == PRISM_NO_NODE || d->new_node == PRISM_NO_NODE ||
                d->folded_one || d->hook_ns != 0 || !(d->base_median_ns > 0) ||
                !(d->new_median_ns > 0) || d->base_share < 0.01)
                continue;
            double r = d->new_median_ns / d->base_median_ns;
            lo = n ? fmin(lo, r) : r;
            hi = n ? fmax(hi, r) : r;
            n++;
        }
        if (n >= 3 && (lo >= 1.0 + MOVED_ALIKE || hi <= 1.0 - MOVED_ALIKE))
            fprintf(f, "Whole run: every region over 1%% of the step is %s (x%.2f to x%.2f, "
                    "median x%.2f%s), but not by one factor\n  (%zu of %zu regions within "
                    "their noise of it): none is taken out; each region is tested as it is%s.\n",
                    lo >= 1.0 ? "slower" : "faster", lo, hi, c->run_factor, step, c->run_agree,
                    c->run_regions, c->load_differs ? ", under the load below" : "");
        else
            fprintf(f, "Whole run: no common shift (median region ratio x%.2f over %zu "
                    "regions%s).\n", c->run_factor, c->run_regions, step);
    } else {
        fprintf(f, "Whole run: too few regions over 1%% of the step on both sides to judge%s.\n",
                step);
    }
    if (c->own_regions)
        fprintf(f, "Own time: %zu regions with calls of 1 ms or more are also checked on their "
                "own time (wall time\n  less waiting for a CPU, from the CPU samples); ~ = "
                "its wall time changed, its own time not.\n", c->own_regions);
    char la[160], lb[160];
    if (load_words(la, sizeof la, prism_analysis_cpu_load(a)) &&
        load_words(lb, sizeof lb, prism_analysis_cpu_load(b)))
        fprintf(f, "CPU load (cores): profile 1 %s; profile 2 %s.\n", la, lb);
    if (c->load_differs)
        fprintf(f, "Load: the runs ran under different load: the training thread waited for a "
                "CPU %.1f%% of its time in profile 1, %.1f%% in profile 2%s.\n",
                100.0 * c->base_runq_share, 100.0 * c->new_runq_share,
                c->whole_run_shift ? "; the whole-run factor may be that load (raw % is each "
                                     "region's change without it)" : "");
    /* at such a load the code runs slower even while it runs (cores and
     * caches shared with the load): a quiet run against one beside 4 CPU
     * hogs on 2 cores read own time +28..+62 % for identical code */
    if (c->load_differs && fmax(c->base_runq_share, c->new_runq_share) >= HEAVY_LOAD)
        fprintf(f, "  At %.0f%% a region's own time moves too (cores and caches shared with the "
                "load): a * here may be the load's;\n  compare runs made under the same load, or "
                "gate against several baselines (compare --gate).\n",
                100.0 * fmax(c->base_runq_share, c->new_runq_share));
}

const char *const compare_regions_legend[] = {
    "largest change first; * = significant: rank test p < 0.01 and the per-step median",
    "moved >= 3% and >= 0.5% of the step; med % = per-step median change; share = of the step",
    NULL
};

const char *const compare_folded_legend[] = {
    "p-value 'folded': prism.torch folded the module into its parent after the measured "
    "steps in one run",
    "only, so there it holds those steps alone: not compared (med % n/a, never *);",
    "nor is a backward segment that holds its backward in one run only; PRISM_TORCH_MODULES=all",
    "keeps every module",
    NULL
};

const char *const compare_hooks_legend[] = {
    "med % and p-value of a row marked 'h': it holds PRISM's hooks on modules kept in one run only",
    "(folded in the other); a change that cost would explain is tested after taking it out: at most",
    "the run's cost per module call (INFO torch.modules.cost_ns) times their calls a step",
    NULL
};

/* The name columns of the region tables, and the columns before them. */
#define PATH_COL 36
#define ONE_SIDED_COL 60
#define ROW_LEAD 4

/* A delta's whole path into out, escaped when printed: from the tree of
 * the side that has it (prism_delta.path keeps the last 255 bytes). */
static const char *whole_path(const prism_delta *d, const prism_analysis *a,
                              const prism_analysis *b, pb_buf *out)
{
    if (d->base_node != PRISM_NO_NODE)
        report_path(prism_analysis_tree(a), d->base_node, '/', false, out);
    else
        report_path(prism_analysis_tree(b), d->new_node, '/', false, out);
    return out->oom || !out->len ? d->path : pb_buf_str(out);
}

static bool in_both(const prism_delta *d)
{
    return d->base_node != PRISM_NO_NODE && d->new_node != PRISM_NO_NODE;
}

static void regions(FILE *f, const prism_analysis *a, const prism_analysis *b,
                    const prism_compare *c, size_t top, int width)
{
    char p[32], med[32];
    size_t shown = 0, both = 0;
    pb_buf path = { 0 };
    fprintf(f, "Regions (%s\n%s):\n", compare_regions_legend[0], compare_regions_legend[1]);
    char tb[48], tn[48], td[48];
    bool raw = c->whole_run_shift;     /* the change without the run factor beside it */
    /* the figures after the path: 97 columns, 9 more with raw % */
    int col = PATH_COL, room = width - ROW_LEAD - 97 - (raw ? 9 : 0);
    for (size_t i = 0; i < c->count && (!top || shown < top); i++) {
        if (!in_both(&c->deltas[i]))
            continue;
        shown++;
        col = report_widen(col, room, report_cols(whole_path(&c->deltas[i], a, b, &path)));
    }
    shown = 0;
    fprintf(f, "    %-*s %11s %11s %11s %8s %8s %8s%s %7s %8s %8s\n", col, "path", "base", "new",
            "delta", "delta %", "speedup", "med %", raw ? "    raw %" : "", "share", "d.share",
            "p-value");
    for (size_t i = 0; i < c->count; i++) {
        const prism_delta *d = &c->deltas[i];
        if (!in_both(d))
            continue;
        both++;
        if (top && shown >= top)
            continue;
        shown++;
        if (d->folded_one)
            snprintf(p, sizeof p, "folded");
        else if (d->p_value >= 1e-4)
            snprintf(p, sizeof p, "%.4f", d->p_value);
        else if (d->p_value >= 0)
            snprintf(p, sizeof p, "%.1e", d->p_value);      /* 3.7e-07, not 0.0000 */
        else
            snprintf(p, sizeof p, "n/a");
        char rawp[32] = "";
        if (d->base_median_ns > 0 && d->new_median_ns > 0) {
            /* a folded row is not compared: its median_pct is no figure */
            if (d->folded_one)
                snprintf(med, sizeof med, "n/a");
            else
                snprintf(med, sizeof med, "%+.1f%%", d->median_pct);
            if (raw)
                snprintf(rawp, sizeof rawp, " %+7.1f%%", d->raw_median_pct);
        } else {
            snprintf(med, sizeof med, "n/a");
            if (raw)
                snprintf(rawp, sizeof rawp, " %8s", "n/a");
        }
        fprintf(f, " %c%c ", d->hook_ns != 0 ? 'h' : ' ',
                d->significant ? '*' : d->raw_significant ? '~' : ' ');
        report_cell(f, whole_path(d, a, b, &path), ROW_LEAD, col);
        fprintf(f, " %s %s %s %+7.1f%% %7.2fx %8s%s %6.1f%% %+6.1fpp %8s\n",
                report_ns(tb, sizeof tb, (double)d->base_ns, 11),
                report_ns(tn, sizeof tn, (double)d->new_ns, 11),
                report_ns_signed(td, sizeof td, (double)d->delta_ns, 11), d->delta_pct,
                d->speedup, med, rawp, 100.0 * d->new_share, d->share_delta, p);
    }
    if (!both)
        fputs("  none in both profiles\n", f);
    else if (shown < both)
        fprintf(f, "  (%zu more; --top 0 shows all)\n", both - shown);
    bool folded = false;
    for (size_t i = 0; i < c->count && !folded; i++)
        folded = c->deltas[i].folded_one;
    for (size_t i = 0; folded && compare_folded_legend[i]; i++)
        fprintf(f, "  %s%s%s\n", i ? " " : "(", compare_folded_legend[i],
                compare_folded_legend[i + 1] ? "" : ")");
    bool hooks = false;
    for (size_t i = 0; i < c->count && !hooks; i++)
        hooks = in_both(&c->deltas[i]) && c->deltas[i].hook_ns != 0;
    for (size_t i = 0; hooks && compare_hooks_legend[i]; i++)
        fprintf(f, "  %s%s%s\n", i ? " " : "(", compare_hooks_legend[i],
                compare_hooks_legend[i + 1] ? "" : ")");
    pb_buf_free(&path);
}

/* Regions present on one side only: new (in B) or vanished (only in A). */
static void one_sided(FILE *f, const prism_analysis *a, const prism_analysis *b,
                      const prism_compare *c, bool appeared, size_t top, int width)
{
    char t[48];
    size_t n = 0;
    pb_buf path = { 0 };
    /* the total after the path: 12 columns */
    int col = ONE_SIDED_COL, room = width - ROW_LEAD - 12;
    for (size_t i = 0, k = 0; i < c->count && (!top || k < top); i++) {
        const prism_delta *d = &c->deltas[i];
        if (appeared ? d->base_node == PRISM_NO_NODE : d->new_node == PRISM_NO_NODE) {
            k++;
            col = report_widen(col, room, report_cols(whole_path(d, a, b, &path)));
        }
    }
    fprintf(f, "%s regions (only in profile %d):\n", appeared ? "New" : "Vanished",
            appeared ? 2 : 1);
    for (size_t i = 0; i < c->count; i++) {
        const prism_delta *d = &c->deltas[i];
        bool is = appeared ? d->base_node == PRISM_NO_NODE : d->new_node == PRISM_NO_NODE;
        if (!is)
            continue;
        if (!top || n < top) {
            fputs("    ", f);
            report_cell(f, whole_path(d, a, b, &path), ROW_LEAD, col);
            fprintf(f, " %s\n",
                    report_ns(t, sizeof t, (double)(appeared ? d->new_ns : d->base_ns), 11));
        }
        n++;
    }
    if (!n)
        fputs("    none\n", f);
    else if (top && n > top)
        fprintf(f, "    (%zu more; --top 0 shows all)\n", n - top);
    pb_buf_free(&path);
}

/* Findings on one side only; t: the tree of the analysis they came from
 * (their region's path is whole there: the description quotes it within
 * 160 bytes). */
/* The delta of a finding's region when it ran in both profiles, else NULL. */
static const prism_delta *region_delta(const prism_compare *c, const prism_bottleneck *b)
{
    for (size_t i = 0; b->path_hash && i < c->count; i++)
        if (c->deltas[i].path_hash == b->path_hash && c->deltas[i].base_node != PRISM_NO_NODE &&
            c->deltas[i].new_node != PRISM_NO_NODE)
            return &c->deltas[i];
    return NULL;
}

static void bn_list(FILE *f, const char *title, const prism_bottleneck *const *b, size_t n,
                    const prism_tree *t, const prism_compare *c)
{
    pb_buf path = { 0 };
    fprintf(f, "%s:\n", title);
    if (!n)
        fputs("  none\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  [%s] %s: ", prism_severity_name(b[i]->severity),
                prism_bottleneck_name(b[i]->type));
        esc_fputs(b[i]->description, f);    /* quotes region names */
        fputc('\n', f);
        if (b[i]->node != PRISM_NO_NODE && b[i]->node < t->count) {
            report_path(t, b[i]->node, '/', false, &path);
            fputs("    Region: ", f);
            esc_fputs(pb_buf_str(&path), f);
            fputc('\n', f);
        }
        /* found in one run only, its region ran in both with no significant
         * change: the finding sits at its threshold in both */
        const prism_delta *d = region_delta(c, b[i]);
        if (d && !d->significant && !d->raw_significant && d->p_value >= 0)
            fprintf(f, "    (its region's change %+.1f%%, p = %.2g: not significant; near the "
                    "finding's threshold in both runs)\n", d->median_pct, d->p_value);
    }
    pb_buf_free(&path);
}

void compare_write_txt(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                       const prism_analysis *b, const prism_compare *c, size_t top)
{
    metrics ma = metrics_of(a), mb = metrics_of(b);
    int width = report_width(f);
    fputs(RULE "PRISM Profile Comparison\n" RULE, f);
    fputs("Profile 1 (base): ", f);
    esc_fputs(pa, f);                   /* a file's name may hold anything */
    fputs("\nProfile 2 (new):  ", f);
    esc_fputs(pb, f);
    fputs("\n\n", f);
    metric_table(f, &ma, &mb);
    fputc('\n', f);
    compare_write_run(f, a, b, c);
    fputc('\n', f);
    regions(f, a, b, c, top, width);
    fputc('\n', f);
    one_sided(f, a, b, c, true, top, width);
    one_sided(f, a, b, c, false, top, width);
    fputc('\n', f);
    bn_list(f, "Bottlenecks that appeared", c->bn_new, c->nbn_new, prism_analysis_tree(b), c);
    bn_list(f, "Bottlenecks that vanished", c->bn_gone, c->nbn_gone, prism_analysis_tree(a), c);
    fputs(RULE, f);
}

/* ---- JSON ---- */

static void jns(pb_json *w, const char *key, double v, bool present)
{
    pb_json_key(w, key);
    if (present && isfinite(v))
        pb_json_int(w, (int64_t)llround(v));
    else
        pb_json_null(w);
}

static void json_side(pb_json *w, const char *key, const char *path, const prism_analysis *a)
{
    const prism_step_stats *s = prism_analysis_steps(a);
    const prism_memory_stats *m = prism_analysis_memory(a);
    pb_json_key(w, key);
    pb_json_begin_object(w);
    pb_json_kstring(w, "file", path);
    pb_json_kbool(w, "complete", prism_analysis_complete(a));
    char st[256];
    pb_json_kstring(w, "status", report_status(a, st, sizeof st));
    pb_json_kuint(w, "steps", s->count);
    pb_json_kuint(w, "sampled_steps", s->sampled);
    pb_json_kuint(w, "total_ns", s->count ? s->total_ns : prism_analysis_tree(a)->total_ns);
    jns(w, "mean_step_ns", s->mean_ns, s->count > 0);
    report_json_cpu_load(w, prism_analysis_cpu_load(a));
    jns(w, "p95_step_ns", s->p95_ns, s->count > 0);
    pb_json_kuint(w, "peak_rss_bytes", m->peak_rss);
    pb_json_kstring(w, "host_memory", m->host_allocated ? "allocated" : "rss");
    pb_json_key(w, "peak_gpu_used_bytes");
    if (m->have_gpu)
        pb_json_uint(w, m->peak_gpu_used);
    else
        pb_json_null(w);
    pb_json_kbool(w, "leak_detected", leak_detected(m));
    pb_json_end_object(w);
}

bool compare_write_json(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                        const prism_analysis *b, const prism_compare *c)
{
    pb_json *w = report_json_begin(f, 2, "prism.compare/1");
    if (!w)
        return false;
    pb_buf p = { 0 };
    json_side(w, "base", pa, a);
    json_side(w, "new", pb, b);
    pb_json_kuint(w, "appeared", c->appeared);
    pb_json_kuint(w, "vanished", c->vanished);
    pb_json_key(w, "run");
    pb_json_begin_object(w);
    pb_json_key(w, "factor");
    c->run_regions >= 3 ? pb_json_double(w, c->run_factor) : pb_json_null(w);
    pb_json_kbool(w, "whole_run_shift", c->whole_run_shift);
    pb_json_kuint(w, "regions", c->run_regions);
    pb_json_kuint(w, "agree", c->run_agree);
    pb_json_key(w, "step_ratio");
    c->step_ratio > 0 ? pb_json_double(w, c->step_ratio) : pb_json_null(w);
    pb_json_key(w, "base_runq_share");
    c->base_runq_share >= 0 ? pb_json_double(w, c->base_runq_share) : pb_json_null(w);
    pb_json_key(w, "new_runq_share");
    c->new_runq_share >= 0 ? pb_json_double(w, c->new_runq_share) : pb_json_null(w);
    pb_json_kbool(w, "load_differs", c->load_differs);
    pb_json_kuint(w, "own_regions", c->own_regions);
    pb_json_end_object(w);
    pb_json_key(w, "regions");
    pb_json_begin_array(w);
    for (size_t i = 0; i < c->count; i++) {
        const prism_delta *d = &c->deltas[i];
        bool inb = d->base_node != PRISM_NO_NODE, inn = d->new_node != PRISM_NO_NODE;
        pb_json_begin_object(w);
        pb_json_kstring(w, "path", d->path);
        pb_json_kstring(w, "name", d->name);
        pb_json_kstring(w, "status", inb && inn ? "both" : inb ? "vanished" : "new");
        jns(w, "base_ns", d->base_ns, true);
        jns(w, "new_ns", d->new_ns, true);
        jns(w, "delta_ns", d->delta_ns, true);
        pb_json_key(w, "delta_pct");
        inb ? pb_json_double(w, d->delta_pct) : pb_json_null(w);
        pb_json_key(w, "speedup");
        inb && inn ? pb_json_double(w, d->speedup) : pb_json_null(w);
        jns(w, "base_median_ns", d->base_median_ns, d->base_median_ns > 0);
        jns(w, "new_median_ns", d->new_median_ns, d->new_median_ns > 0);
        pb_json_kuint(w, "base_steps", d->base_steps);
        pb_json_kuint(w, "new_steps", d->new_steps);
        pb_json_key(w, "median_pct");
        d->base_median_ns > 0 && d->new_median_ns > 0 && !d->folded_one
            ? pb_json_double(w, d->median_pct) : pb_json_null(w);
        pb_json_key(w, "raw_median_pct");
        d->base_median_ns > 0 && d->new_median_ns > 0 ? pb_json_double(w, d->raw_median_pct)
                                                      : pb_json_null(w);
        pb_json_key(w, "base_share");
        pb_json_double(w, d->base_share);
        pb_json_key(w, "new_share");
        pb_json_double(w, d->new_share);
        pb_json_key(w, "share_delta_pp");
        pb_json_double(w, d->share_delta);
        pb_json_key(w, "p_value");
        d->p_value >= 0 ? pb_json_double(w, d->p_value) : pb_json_null(w);
        pb_json_kbool(w, "significant", d->significant);
        pb_json_kbool(w, "own_time", d->own);
        pb_json_key(w, "base_runq_share");
        d->base_runq >= 0 ? pb_json_double(w, d->base_runq) : pb_json_null(w);
        pb_json_key(w, "new_runq_share");
        d->new_runq >= 0 ? pb_json_double(w, d->new_runq) : pb_json_null(w);
        pb_json_key(w, "own_pct");
        d->own ? pb_json_double(w, d->own_pct) : pb_json_null(w);
        pb_json_kbool(w, "raw_significant", d->raw_significant);
        pb_json_kbool(w, "folded_one", d->folded_one);
        jns(w, "hook_ns", d->hook_ns, inb && inn);
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
    pb_json_key(w, "bottlenecks_new");
    pb_json_begin_array(w);
    for (size_t i = 0; i < c->nbn_new; i++)
        report_json_bottleneck(w, c->bn_new[i], prism_analysis_tree(b), &p);
    pb_json_end_array(w);
    pb_json_key(w, "bottlenecks_gone");
    pb_json_begin_array(w);
    for (size_t i = 0; i < c->nbn_gone; i++)
        report_json_bottleneck(w, c->bn_gone[i], prism_analysis_tree(a), &p);
    pb_json_end_array(w);
    bool ok = report_json_end(w) && !p.oom;
    pb_buf_free(&p);
    return ok;
}

/* One side's load, on a thread of its own. */
typedef struct side_load {
    const char *path;
    const prism_analysis_opts *opts;
    prism_analysis *a;
} side_load;

static void *load_side(void *arg)
{
    side_load *l = arg;
    l->a = report_load(l->path, l->opts);
    return NULL;
}

int rp_compare_files(const char *pa, const char *pb, const char *output, int format,
                     size_t top, const prism_analysis_opts *opts, FILE *out)
{
    const char *paths[2] = { pa, pb };
    /* the two files at once: the new one on a thread (the analysis is
     * per object; the job loader reads ranks the same way), the base
     * here; on one core, or without a thread, one after the other */
    side_load lb = { paths[1], opts, NULL };
    pthread_t th;
    bool threaded = sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
                    pthread_create(&th, NULL, load_side, &lb) == 0;
    prism_analysis *a = report_load(paths[0], opts);
    if (threaded)
        pthread_join(th, NULL);
    else if (a)
        load_side(&lb);
    prism_analysis *b = a ? lb.a : NULL;
    if (!a)
        prism_analysis_free(lb.a);
    prism_compare *c = b ? prism_compare_new(a, b) : NULL;
    int rc = EXIT_BADINPUT;
    outfile o;
    if (b && !c)
        fprintf(stderr, "prism-top: %s: out of memory comparing with %s\n", paths[1], paths[0]);
    if (c && !outfile_open(&o, output, out)) {
        bool ok = true;
        if (format == RP_JSON) {
            ok = compare_write_json(o.f, paths[0], paths[1], a, b, c);
        } else if (format == RP_HTML) {
            ok = compare_write_html(o.f, paths[0], paths[1], a, b, c);
        } else {
            report_units_for(o.f);
            compare_write_txt(o.f, paths[0], paths[1], a, b, c, top);
        }
        if (!ok)
            fprintf(stderr, "prism-top: %s: internal error writing %s (or out of memory)\n",
                    paths[1], format == RP_HTML ? "HTML" : "JSON");
        rc = outfile_close(&o, ok);
    }
    if (c)
        prism_compare_free(c);
    prism_analysis_free(b);
    prism_analysis_free(a);
    return rc;
}
