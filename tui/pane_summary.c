/*
 * pane_summary.c - the Summary pane: run information from the header,
 * totals, step statistics, top operations as timing bars, memory
 * sparklines with the leak verdict, and bottleneck counts by severity.
 *
 * Compare mode (u->cmp): the base side shows the base profile's summary;
 * the new side a table of both profiles with the change: steps, step
 * total, mean and p95 step (the total and the mean tested against
 * step-to-step noise: a Mann-Whitney rank test on step durations, p < 0.01
 * and over 1 %), peak host and GPU memory, the leak verdict, whether the
 * whole run shifted by one factor, regions and findings new and gone, then
 * the largest region changes (with their change of share) while rows are
 * left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare_view.h"
#include "delta.h"
#include "treeview.h"
#include "ui.h"
#include "verdict.h"

static void run_info(ui *u, const ui_rect *r, int *row)
{
    const prism_header *h = prism_analysis_header(u->a);
    char argv[256] = "";
    size_t o = 0;
    for (size_t i = 0; h && i < h->argc && o + 2 < sizeof argv; i++)
        o += (size_t)snprintf(argv + o, sizeof argv - o, "%s%s", i ? " " : "", h->argv[i]);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    ui_print(r, *row, 1, lab, "Run");
    ui_printf(r, (*row)++, 11, A_NORMAL, "%s", argv[0] ? argv : "?");
    if (h) {
        char when[64] = "?";
        time_t secs = (time_t)(h->start_unix_ns / 1000000000u);
        struct tm tm;
        if (gmtime_r(&secs, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
        ui_print(r, *row, 1, lab, "Host");
        char rank[32] = "";
        if (h->rank >= 0)
            snprintf(rank, sizeof rank, "  rank %lld", (long long)h->rank);
        ui_printf(r, (*row)++, 11, A_NORMAL, "%s  pid %llu%s  started %s  (%s)",
                  h->host ? h->host : "?", (unsigned long long)h->pid, rank, when,
                  h->producer ? h->producer : "?");
    }
}

static void totals(ui *u, const ui_rect *r, int *row)
{
    const prism_step_stats *s = prism_analysis_steps(u->a);
    const prism_tree *t = prism_analysis_tree(u->a);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    char mean[32], p50[32], p95[32], mx[32], tot[32], span[32];
    fmt_ns(mean, sizeof mean, s->mean_ns);
    fmt_ns(p50, sizeof p50, s->p50_ns);
    fmt_ns(p95, sizeof p95, s->p95_ns);
    fmt_ns(mx, sizeof mx, s->max_ns);
    fmt_ns(tot, sizeof tot, (double)t->total_ns);
    fmt_ns(span, sizeof span, (double)prism_analysis_span_ns(u->a));
    ui_print(r, *row, 1, lab, "Steps");
    if (s->count)
        ui_printf(r, (*row)++, 11, A_NORMAL, "%llu (%llu sampled)  mean %s  p50 %s  p95 %s  max %s",
                  (unsigned long long)s->count, (unsigned long long)s->sampled, mean, p50, p95, mx);
    else
        ui_print(r, (*row)++, 11, A_NORMAL, "none recorded");
    char bad[4][VERDICT_LINE];
    int nbad = verdict_step_problems(s, bad, 4);
    for (int i = 0; i < nbad; i++)
        ui_print(r, (*row)++, 11, ui_attr(u, CP_MEDIUM, A_NORMAL), bad[i]);
    ui_print(r, *row, 1, lab, "Time");
    ui_printf(r, (*row)++, 11, A_NORMAL, "%s in regions (all threads), wall %s, %llu events, %llu dropped",
              tot, span, (unsigned long long)prism_analysis_events(u->a),
              (unsigned long long)prism_analysis_dropped(u->a));
    bool whole;
    uint64_t placed, regions = prism_analysis_dropped_regions(u->a, &whole, &placed);
    if (regions && whole)
        ui_printf(r, (*row)++, 11, ui_attr(u, CP_MEDIUM, A_NORMAL),
                  "%llu whole regions not recorded (%llu under their parent): the tree is intact",
                  (unsigned long long)regions, (unsigned long long)placed);
    else if (prism_analysis_dropped(u->a) && !whole)
        ui_print(r, (*row)++, 11, ui_attr(u, CP_HIGH, A_NORMAL),
                 "single events dropped (a writer before 1.1): nesting after a drop may be wrong");
    const prism_reader_stats *rs = prism_analysis_reader_stats(u->a);
    ui_print(r, *row, 1, lab, "File");
    if (rs && rs->damaged)
        ui_printf(r, (*row)++, 11, ui_attr(u, CP_HIGH, A_BOLD),
                  "DAMAGED: %llu runs, %llu bytes skipped", (unsigned long long)rs->damaged,
                  (unsigned long long)rs->skipped_bytes);
    else
        ui_print(r, (*row)++, 11, A_NORMAL,
                 prism_analysis_complete(u->a) ? "complete" : "no footer: still being written, or the writer died");
}

static void top_ops(ui *u, const ui_rect *r, int *row, int rows)
{
    size_t n;
    const prism_op *ops = prism_analysis_ops(u->a, &n);
    if (rows < 2 || !n)
        return;
    ui_print(r, (*row)++, 1, ui_attr(u, CP_TITLE, A_BOLD), "Top operations");
    int namew = r->w > 70 ? 24 : 16, barw = r->w - namew - 24;
    if (barw < 4)
        barw = 4;
    for (size_t i = 0; i < n && (int)i < rows - 1; i++) {
        char bar[512], tot[32];
        ui_bar(bar, sizeof bar, ops[i].share, barw, u->utf8);
        fmt_ns(tot, sizeof tot, (double)ops[i].total_ns);
        ui_printf(r, *row, 1, A_NORMAL, "%-*.*s", namew, namew, ops[i].name);
        ui_print(r, *row, 2 + namew, ui_attr(u, CP_BAR, A_NORMAL), bar);
        ui_printf(r, (*row)++, 2 + namew + barw + 1, A_NORMAL, "%10s %5.1f%%", tot, ops[i].share * 100);
    }
}

static void memory(ui *u, const ui_rect *r, int *row)
{
    const prism_memory_stats *m = prism_analysis_memory(u->a);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    if (!m->count) {
        ui_print(r, *row, 1, lab, "Memory");
        ui_print(r, (*row)++, 11, A_NORMAL, "no samples");
        return;
    }
    double *v = malloc(m->count * sizeof *v);
    if (!v)
        return;
    int sw = r->w - 50;
    if (sw < 8)
        sw = 8;
    for (int gpu = 0; gpu <= (m->have_gpu ? 1 : 0); gpu++) {
        for (size_t i = 0; i < m->count; i++)
            v[i] = (double)(gpu ? m->samples[i].gpu_used : m->samples[i].rss);
        char spark[1024], peak[32];
        ui_sparkline(spark, sizeof spark, v, m->count, sw, u->utf8);
        fmt_bytes(peak, sizeof peak, gpu ? (double)m->peak_gpu_used : (double)m->peak_rss);
        const prism_leak *lk = gpu ? &m->gpu : &m->host;
        ui_print(r, *row, 1, lab, gpu ? "GPU mem" : "Host RSS");
        ui_print(r, *row, 11, ui_attr(u, CP_BAR, A_NORMAL), spark);
        int c = 11 + sw + 1;
        c += ui_printf(r, *row, c, A_NORMAL, "peak %s ", peak);
        int tone;
        const char *word = verdict_word(lk, &tone);
        if (lk->have_fit)
            ui_printf(r, *row, c, tone == VERDICT_BAD ? ui_attr(u, CP_HIGH, A_BOLD)
                                  : tone == VERDICT_WARN ? ui_attr(u, CP_MEDIUM, A_NORMAL)
                                  : A_NORMAL,
                      "%+.2f MB/step%s%s", lk->slope_mb_per_step,
                      tone == VERDICT_BAD || tone == VERDICT_WARN ? " " : "",
                      tone == VERDICT_BAD || tone == VERDICT_WARN ? word : "");
        (*row)++;
    }
    free(v);
}

static void bottlenecks(ui *u, const ui_rect *r, int *row)
{
    size_t n, c[3] = { 0, 0, 0 };
    const prism_bottleneck *b = prism_analysis_bottlenecks(u->a, &n);
    for (size_t i = 0; i < n; i++)
        c[b[i].severity]++;
    ui_print(r, *row, 1, ui_attr(u, CP_TITLE, A_BOLD), "Findings");
    int x = 11;
    x += ui_printf(r, *row, x, ui_attr(u, CP_HIGH, A_BOLD), "%zu HIGH", c[PRISM_SEV_HIGH]);
    x += ui_printf(r, *row, x, ui_attr(u, CP_MEDIUM, A_NORMAL), "  %zu MEDIUM", c[PRISM_SEV_MEDIUM]);
    x += ui_printf(r, *row, x, ui_attr(u, CP_LOW, A_NORMAL), "  %zu LOW", c[PRISM_SEV_LOW]);
    ui_print(r, (*row)++, x, A_NORMAL, "   (7: details)");
    if (n)
        ui_printf(r, (*row)++, 11, A_NORMAL, "[%s] %s", prism_severity_name(b[0].severity),
                  b[0].description);
}

/* ---- compare mode ---------------------------------------------------------- */

#define CX_BASE 16              /* columns of the table */
#define CX_NEW 30
#define CX_DELTA 44

/* Step durations of a, malloc'd (NULL when none). */
static double *step_durations(const prism_analysis *a, size_t *n)
{
    const prism_step_stats *s = prism_analysis_steps(a);
    *n = 0;
    double *v = s->nseries ? malloc(s->nseries * sizeof *v) : NULL;
    for (size_t i = 0; v && i < s->nseries; i++)
        if (s->series[i].end > s->series[i].start)
            v[(*n)++] = (double)(s->series[i].end - s->series[i].start);
    return v;
}

/* A time row; p < 0: not tested (no colour). */
static void time_row(ui *u, const ui_rect *r, int row, const char *name, double a, double b,
                     bool have, double p)
{
    char va[32], vb[32];
    ui_print(r, row, 1, ui_attr(u, CP_TITLE, A_BOLD), name);
    if (!have) {
        ui_print(r, row, CX_BASE, A_NORMAL, "n/a");
        ui_print(r, row, CX_NEW, A_NORMAL, "n/a");
        return;
    }
    fmt_ns(va, sizeof va, a);
    fmt_ns(vb, sizeof vb, b);
    ui_print(r, row, CX_BASE, A_NORMAL, va);
    ui_print(r, row, CX_NEW, A_NORMAL, vb);
    prism_delta d = { .base_ns = a, .new_ns = b, .delta_ns = b - a, .p_value = p,
                      .delta_pct = a > 0 ? 100.0 * (b - a) / a : 0.0 };
    d.median_pct = d.delta_pct;         /* the direction of a significant change */
    d.significant = p >= 0 && p < 0.01 && (b - a > 0.01 * a || a - b > 0.01 * a);
    char cell[64];
    dl_format(cell, sizeof cell, &d, 40);
    int c = CX_DELTA + ui_print(r, row, CX_DELTA, cmpv_delta_attr(u, &d, A_NORMAL, false), cell);
    if (p >= 0)
        ui_printf(r, row, c, A_NORMAL, "  p=%.2g%s", p, d.significant ? " *" : "");
}

static void bytes_row(ui *u, const ui_rect *r, int row, const char *name, double a, double b,
                      bool have)
{
    char va[32], vb[32], dv[32];
    ui_print(r, row, 1, ui_attr(u, CP_TITLE, A_BOLD), name);
    if (!have) {
        ui_print(r, row, CX_BASE, A_NORMAL, "n/a");
        ui_print(r, row, CX_NEW, A_NORMAL, "n/a");
        return;
    }
    fmt_bytes(va, sizeof va, a);
    fmt_bytes(vb, sizeof vb, b);
    fmt_bytes(dv, sizeof dv, b > a ? b - a : a - b);
    ui_print(r, row, CX_BASE, A_NORMAL, va);
    ui_print(r, row, CX_NEW, A_NORMAL, vb);
    ui_printf(r, row, CX_DELTA, A_NORMAL, "%c%s", b >= a ? '+' : '-', dv);
}

static bool leaks(const prism_memory_stats *m)
{
    return m->host.leak || (m->have_gpu && m->gpu.leak);
}

/* "LEAK", "growing" (rising, not proven) or "none". */
static const char *leak_word(const prism_memory_stats *m)
{
    if (leaks(m))
        return "LEAK";
    if (m->host.verdict == PRISM_LEAK_GROWING ||
        (m->have_gpu && m->gpu.verdict == PRISM_LEAK_GROWING))
        return "growing";
    return "none";
}

/* The largest region changes, as many as fit in rows. */
static void top_changes(ui *u, const ui_rect *r, int row, int rows)
{
    const prism_compare *c = u->cmp;
    if (rows < 2)
        return;
    ui_print(r, row++, 1, ui_attr(u, CP_TITLE, A_BOLD), "Largest changes");
    int shown = 0;
    for (size_t i = 0; i < c->count && shown < rows - 1; i++) {
        const prism_delta *d = &c->deltas[i];
        if (!dl_changed(d))
            continue;
        char cell[64], pp[32];
        dl_format(cell, sizeof cell, d, 40);
        char fit[300];
        tv_fit_left(fit, sizeof fit, d->path, CX_DELTA - 4, u->utf8);   /* the leaf end */
        ui_print(r, row, 3, A_NORMAL, fit);
        int x = CX_DELTA + ui_print(r, row, CX_DELTA, cmpv_delta_attr(u, d, A_NORMAL, false), cell);
        dl_fmt_pp(pp, sizeof pp, d->share_delta);
        ui_printf(r, row++, x, ui_attr(u, CP_DIM, A_NORMAL), "  share %s", pp);
        shown++;
    }
    if (!shown)
        ui_print(r, row, 3, A_NORMAL, "none beyond step-to-step noise");
}

static void compare_table(ui *u, const ui_rect *r)
{
    const prism_analysis *a = u->side_a[0], *b = u->side_a[1];
    const prism_step_stats *sa = prism_analysis_steps(a), *sb = prism_analysis_steps(b);
    const prism_memory_stats *ma = prism_analysis_memory(a), *mb = prism_analysis_memory(b);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD), head = lab | A_BOLD | A_UNDERLINE;
    int row = 0;
    ui_print(r, row, 1, head, "Compare");
    ui_print(r, row, CX_BASE, head, "base");
    ui_print(r, row, CX_NEW, head, "new");
    ui_print(r, row++, CX_DELTA, head, "change");

    ui_print(r, row, 1, lab, "Steps");
    ui_printf(r, row, CX_BASE, A_NORMAL, "%llu", (unsigned long long)sa->count);
    ui_printf(r, row, CX_NEW, A_NORMAL, "%llu", (unsigned long long)sb->count);
    ui_printf(r, row++, CX_DELTA, A_NORMAL, "%+lld", (long long)sb->count - (long long)sa->count);

    size_t na, nb;
    double *da = step_durations(a, &na), *db = step_durations(b, &nb);
    double p = da && db ? prism_mann_whitney_p(da, na, db, nb) : -1.0;
    free(da);
    free(db);
    bool steps = sa->count && sb->count;
    double ta = steps ? (double)sa->total_ns : (double)prism_analysis_tree(a)->total_ns;
    double tb = steps ? (double)sb->total_ns : (double)prism_analysis_tree(b)->total_ns;
    time_row(u, r, row++, steps ? "Step total" : "Region time", ta, tb, true, steps ? p : -1);
    time_row(u, r, row++, "Mean step", sa->mean_ns, sb->mean_ns, steps, p);
    time_row(u, r, row++, "p95 step", sa->p95_ns, sb->p95_ns, steps, -1);
    bytes_row(u, r, row++, "Peak host", (double)ma->peak_rss, (double)mb->peak_rss,
              ma->count && mb->count);
    bytes_row(u, r, row++, "Peak GPU", (double)ma->peak_gpu_used, (double)mb->peak_gpu_used,
              ma->have_gpu && mb->have_gpu);

    bool la = leaks(ma), lb = leaks(mb);
    ui_print(r, row, 1, lab, "Leak");
    ui_print(r, row, CX_BASE, la ? ui_attr(u, CP_HIGH, A_BOLD) : A_NORMAL, leak_word(ma));
    ui_print(r, row, CX_NEW, lb ? ui_attr(u, CP_HIGH, A_BOLD) : A_NORMAL, leak_word(mb));
    ui_print(r, row++, CX_DELTA,
             la == lb ? A_NORMAL : ui_attr(u, lb ? CP_HIGH : CP_LOW, A_BOLD) | A_BOLD,
             la == lb ? "same" : lb ? "NEW LEAK" : "fixed");

    const prism_compare *c = u->cmp;
    ui_print(r, row, 1, lab, "Whole run");
    if (c->whole_run_shift)
        ui_printf(r, row++, CX_DELTA, ui_attr(u, CP_MEDIUM, A_BOLD) | A_BOLD,
                  "x%.2f %s: the machine, not one region", c->run_factor,
                  c->run_factor > 1 ? "slower" : "faster");
    else if (c->run_regions >= 3)
        ui_printf(r, row++, CX_DELTA, A_NORMAL, "no common shift (x%.2f)", c->run_factor);
    else
        ui_print(r, row++, CX_DELTA, A_NORMAL, "too few regions to judge");
    size_t nsig = 0, ba, bb;
    for (size_t i = 0; i < c->count; i++)
        nsig += dl_kind_of(&c->deltas[i]) == DL_SLOWER || dl_kind_of(&c->deltas[i]) == DL_FASTER;
    ui_print(r, row, 1, lab, "Regions");
    ui_printf(r, row, CX_BASE, A_NORMAL, "%zu paths", prism_analysis_tree(a)->count);
    ui_printf(r, row, CX_NEW, A_NORMAL, "%zu paths", prism_analysis_tree(b)->count);
    ui_printf(r, row++, CX_DELTA, A_NORMAL, "%zu new, %zu gone, %zu changed", c->appeared,
              c->vanished, nsig);
    prism_analysis_bottlenecks(a, &ba);
    prism_analysis_bottlenecks(b, &bb);
    ui_print(r, row, 1, lab, "Findings");
    ui_printf(r, row, CX_BASE, A_NORMAL, "%zu", ba);
    ui_printf(r, row, CX_NEW, A_NORMAL, "%zu", bb);
    ui_printf(r, row++, CX_DELTA, c->nbn_new ? ui_attr(u, CP_HIGH, A_BOLD) : A_NORMAL,
              "%zu new, %zu gone  (7: details)", c->nbn_new, c->nbn_gone);
    top_changes(u, r, row + 1, r->h - row - 1);
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    ui_rect r = { y, x, h, w };
    int row = 1;
    (void)st;
    if (u->cmp && u->side == 1) {
        compare_table(u, &r);
        return;
    }
    run_info(u, &r, &row);
    totals(u, &r, &row);
    row++;
    int mem_rows = prism_analysis_memory(u->a)->have_gpu ? 2 : 1;
    int left = h - row - mem_rows - 4;
    top_ops(u, &r, &row, left > 12 ? 12 : left);
    row++;
    memory(u, &r, &row);
    row++;
    bottlenecks(u, &r, &row);
}

const ui_pane pane_summary = {
    .name = "Summary",
    .hint = "Tab/1-7: panes  ?: help",
    .draw = draw,
};
