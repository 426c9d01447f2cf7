/*
 * pane_summary.c - the Summary pane: run information from the header,
 * totals, step statistics, the worker processes merged into the profile,
 * top operations as timing bars, memory sparklines with the leak verdict,
 * and the findings.
 *
 * Every line is made of whole parts that are dropped from the end when the
 * width runs out (ui_fit_parts), so a figure is never cut; names are
 * escaped and elided in the middle.  The rows are budgeted so the
 * essentials show at 80x24: the totals, the memory verdict and at least
 * three findings; top operations get what is left (at most 12 rows).
 * From SUMMARY_WIDE columns the pane has two columns: run, totals and top
 * operations on the left, memory and every finding that fits on the right.
 *
 * Compare mode (u->cmp): the base side shows the base profile's summary;
 * the new side a table of both profiles with the change: steps, step
 * total, mean and p95 step (the total and the mean tested against
 * step-to-step noise: a Mann-Whitney rank test on step durations, p < 0.01
 * and over 1 %), peak host and GPU memory, the leak verdict, whether the
 * whole run shifted by one factor, regions and findings new and gone, then
 * the largest region changes (with their change of share) while rows are
 * left.  Changes of time print as fmt_ns_signed ("-141.2 ms +6.0%").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prism/import.h"

#include "compare_view.h"
#include "escape.h"
#include "namefit.h"
#include "delta.h"
#include "treeview.h"
#include "source.h"
#include "ui.h"
#include "verdict.h"
#include "workers.h"

#define SUMMARY_WIDE 150          /* two columns from this width           */
#define LABEL_W 10                /* "Host RSS  ", "Allocated " */

/* Untrusted text escaped (so its width is what shows). */
static const char *safe(const char *s, char *buf, size_t cap)
{
    return !s ? "?" : esc_clean(s) ? s : esc_str(s, buf, cap);
}

/* A label, then parts joined by sep while they fit the rectangle. */
static void parts_line(ui *u, const ui_rect *r, int row, const char *label, attr_t at,
                       const char *const *parts, int n, const char *sep)
{
    char line[1024];
    if (label)
        ui_print(r, row, 1, ui_attr(u, CP_TITLE, A_BOLD), label);
    ui_fit_parts(line, sizeof line, parts, n, sep, r->w - 1 - LABEL_W - 1);
    ui_print(r, row, 1 + LABEL_W, at, line);
}

static void run_info(ui *u, const ui_rect *r, int *row)
{
    const prism_header *h = prism_analysis_header(u->a);
    char argv[256] = "", sargv[ESC_CAP(256)], fit[ESC_CAP(256)];
    size_t o = 0;
    for (size_t i = 0; h && i < h->argc && o + 2 < sizeof argv; i++)
        o += (size_t)snprintf(argv + o, sizeof argv - o, "%s%s", i ? " " : "", h->argv[i]);
    ui_elide_mid(fit, sizeof fit, argv[0] ? safe(argv, sargv, sizeof sargv) : "?",
                 r->w - 2 - LABEL_W, u->utf8);
    ui_print(r, *row, 1, ui_attr(u, CP_TITLE, A_BOLD), "Run");
    ui_print(r, (*row)++, 1 + LABEL_W, A_NORMAL, fit);
    if (!h)
        return;
    char when[64] = "?", host[ESC_CAP(128)], prod[ESC_CAP(128)], pid[32], rank[32] = "",
         started[80], by[ESC_CAP(128) + 2];
    time_t secs = (time_t)(h->start_unix_ns / 1000000000u);
    struct tm tm;
    if (!h->start_unix_ns)              /* not in the file: never 1970-01-01 */
        snprintf(when, sizeof when, "at an unknown time");
    else if (gmtime_r(&secs, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    char hb[128];
    snprintf(hb, sizeof hb, "%s", h->host ? h->host : "?");
    snprintf(host, sizeof host, "%s", safe(hb, prod, sizeof prod));
    snprintf(pid, sizeof pid, "pid %llu", (unsigned long long)h->pid);
    if (h->rank >= 0)
        snprintf(rank, sizeof rank, "rank %lld", (long long)h->rank);
    snprintf(started, sizeof started, "started %s", when);
    snprintf(hb, sizeof hb, "%s", h->producer ? h->producer : "?");
    snprintf(by, sizeof by, "(%s)", safe(hb, prod, sizeof prod));
    const char *parts[] = { host, pid, rank, started, by };
    parts_line(u, r, (*row)++, "Host", A_NORMAL, parts, 5, "  ");
}

/* The run's time outside its steps, in the words of `prism-top analyze`:
 * "Steps cover: ..." (marked when the steps hold under half the wall
 * span) and "Outside steps: ..." (the training thread's regions there). */
static void outside_lines(ui *u, const ui_rect *r, int *row)
{
    prism_outside o;
    if (!prism_analysis_outside(u->a, &o) || !o.span_ns)
        return;
    char b1[40], b2[40], b3[40], fit[520], nm[ESC_CAP(96)];
    double cover = (double)o.steps_ns / (double)o.span_ns;
    fmt_ns(b1, sizeof b1, (double)o.before_ns);
    fmt_ns(b2, sizeof b2, (double)o.between_ns);
    fmt_ns(b3, sizeof b3, (double)o.after_ns);
    /* the longest that fits: words go before figures */
    char form[4][256];
    snprintf(form[0], sizeof form[0], "Steps cover: %.1f%% of the wall span (before the first %s, "
             "between steps %s, after the last %s)", 100.0 * cover, b1, b2, b3);
    snprintf(form[1], sizeof form[1], "Steps cover: %.1f%% of the wall (first %s, between %s, "
             "last %s)", 100.0 * cover, b1, b2, b3);
    snprintf(form[2], sizeof form[2], "Steps cover: %.1f%% of the wall span", 100.0 * cover);
    snprintf(form[3], sizeof form[3], "Steps cover %.1f%%", 100.0 * cover);
    int k = 0;
    while (k < 3 && ui_width(form[k]) > r->w - 2 - LABEL_W)
        k++;
    ui_elide_words(fit, sizeof fit, form[k], r->w - 2 - LABEL_W, u->utf8);
    ui_print(r, (*row)++, 1 + LABEL_W, cover < 0.5 ? ui_attr(u, CP_MEDIUM, A_NORMAL) : A_NORMAL,
             fit);
    if (!o.nregions)
        return;
    /* whole regions, heaviest first, each with its figure: the ones that fit */
    enum { MAXP = 9 };
    char part[MAXP][ESC_CAP(96) + 48];
    const char *parts[MAXP] = { "Outside steps:" };
    int np = 1;
    for (size_t i = 0; i < o.nregions && np < MAXP; i++, np++) {
        char one[96];
        snprintf(one, sizeof one, "%s", o.regions[i].name ? o.regions[i].name : "?");
        fmt_ns(b1, sizeof b1, (double)o.regions[i].ns);
        snprintf(part[np], sizeof part[np], "'%s' %s%s", safe(one, nm, sizeof nm), b1,
                 i + 1 < o.nregions ? "," : "");
        parts[np] = part[np];
    }
    int took = ui_fit_parts(fit, sizeof fit, parts, np, " ", r->w - 2 - LABEL_W);
    if (took > 1 && took < np) {        /* the list goes on: no trailing comma */
        size_t l = strlen(fit);
        if (l && fit[l - 1] == ',')
            fit[l - 1] = '\0';
    }
    if (took > 1)
        ui_print(r, *row, 1 + LABEL_W, A_NORMAL, fit);
    (*row)++;
}

/* Who used the CPUs, in cores, as `prism-top analyze` says it: where the
 * file has CPU samples or the machine's load. */
static void cpu_line(ui *u, const ui_rect *r, int *row)
{
    const prism_cpu_load *l = prism_analysis_cpu_load(u->a);
    if (l->process < 0 || (l->machine < 0 && l->training < 0))
        return;
    char m[48] = "", p[40], t[40] = "", o[48] = "", un[48] = "", w[48] = "", x[48] = "";
    if (l->machine >= 0)
        snprintf(m, sizeof m, "machine %.1f of %u", l->machine, l->ncpu);
    snprintf(p, sizeof p, "this process %.1f", l->process);
    if (l->training >= 0) {
        snprintf(t, sizeof t, "training thread %.1f", l->training);
        snprintf(o, sizeof o, "other threads %.1f", l->other_threads);
        snprintf(un, sizeof un, "unrecorded threads %.1f", l->unrecorded >= 0 ? l->unrecorded : 0);
    }
    if (l->machine >= 0) {
        snprintf(w, sizeof w, "worker processes %.1f", l->workers);
        snprintf(x, sizeof x, "other processes %.1f", l->others);
    }
    const char *all[] = { m, p, t, o, un, w, x };
    const char *parts[7];
    int n = 0;
    for (int i = 0; i < 7; i++)
        if (all[i][0])
            parts[n++] = all[i];
    parts_line(u, r, (*row)++, "CPU", A_NORMAL, parts, n, "  ");
}

/* The Python stack sampler: its samples and state. */
static void stacks_line(ui *u, const ui_rect *r, int *row)
{
    prism_stacks_info si;
    if (!prism_analysis_stacks_info(u->a, &si))
        return;
    char n[48], st[ESC_CAP(160)], raw[160];
    snprintf(n, sizeof n, "%llu samples", (unsigned long long)si.samples);
    snprintf(raw, sizeof raw, "%s", si.status && si.status[0] ? si.status : "sampler state unknown");
    const char *parts[] = { n, safe(raw, st, sizeof st) };
    parts_line(u, r, (*row)++, "Stacks", A_NORMAL, parts, 2, "  ");
}

/* The worker processes merged into the profile, and notes on their files. */
static void workers_line(ui *u, const ui_rect *r, int *row)
{
    workers_words w;
    workers_words_of(u->a, prism_analysis_reader_stats(u->a), &w);
    const char *p[3] = { w.parts[0], w.parts[1], w.parts[2] };
    const char *n[3] = { w.notes[0], w.notes[1], w.notes[2] };
    if (w.nparts)
        parts_line(u, r, (*row)++, "Workers", A_NORMAL, p, w.nparts, " ");
    if (w.nnotes)
        parts_line(u, r, (*row)++, NULL, ui_attr(u, CP_MEDIUM, A_NORMAL), n, w.nnotes, "; ");
}

static void totals(ui *u, const ui_rect *r, int *row)
{
    const prism_step_stats *s = prism_analysis_steps(u->a);
    const prism_tree *t = prism_analysis_tree(u->a);
    char mean[40], p50[40], p95[40], mx[40], tot[64], span[40], ev[40], dr[40], n[80], c1[32],
         c2[32], ld[160];
    fmt_ns(c1, sizeof c1, s->mean_ns);
    snprintf(mean, sizeof mean, "mean %s", c1);
    fmt_ns(c1, sizeof c1, s->p50_ns);
    snprintf(p50, sizeof p50, "p50 %s", c1);
    fmt_ns(c1, sizeof c1, s->p95_ns);
    snprintf(p95, sizeof p95, "p95 %s", c1);
    fmt_ns(c1, sizeof c1, s->max_ns);
    snprintf(mx, sizeof mx, "max %s", c1);
    if (s->count) {
        snprintf(n, sizeof n, "%llu (%llu sampled)", (unsigned long long)s->count,
                 (unsigned long long)s->sampled);        /* steps: exact */
        const char *parts[] = { n, mean, p50, p95, mx };
        parts_line(u, r, (*row)++, "Steps", A_NORMAL, parts, 5, "  ");
    } else {
        const char *parts[] = { "none recorded" };
        parts_line(u, r, (*row)++, "Steps", A_NORMAL, parts, 1, "  ");
    }
    char bad[4][VERDICT_LINE], fit[VERDICT_LINE + 8];
    int nbad = verdict_step_problems(s, bad, 4);
    for (int i = 0; i < nbad; i++) {
        ui_elide_words(fit, sizeof fit, bad[i], r->w - 2 - LABEL_W, u->utf8);
        ui_print(r, (*row)++, 1 + LABEL_W, ui_attr(u, CP_MEDIUM, A_NORMAL), fit);
    }
    outside_lines(u, r, row);
    fmt_ns(c1, sizeof c1, (double)t->total_ns);
    snprintf(tot, sizeof tot, "%s in regions", c1);
    fmt_ns(c1, sizeof c1, (double)prism_analysis_span_ns(u->a));
    snprintf(span, sizeof span, "wall %s", c1);
    fmt_count(c1, sizeof c1, (double)prism_analysis_events(u->a));
    snprintf(ev, sizeof ev, "%s events", c1);
    fmt_count(c1, sizeof c1, (double)prism_analysis_dropped(u->a));
    snprintf(dr, sizeof dr, "%s dropped", c1);
    const char *parts[] = { tot, span, ev, dr, "(all threads)" };
    parts_line(u, r, (*row)++, "Time", A_NORMAL, parts, 5, "  ");
    cpu_line(u, r, row);
    stacks_line(u, r, row);
    workers_line(u, r, row);
    uint64_t deep = prism_analysis_too_deep(u->a);
    if (deep) {                         /* never silently cut */
        char a1[64], a2[64];
        fmt_count(c1, sizeof c1, (double)deep);
        snprintf(a1, sizeof a1, "%s regions nested below level %u:", c1, PRISM_ANALYSIS_MAX_DEPTH);
        snprintf(a2, sizeof a2, "in their ancestor's time");
        const char *w[] = { a1, a2 };
        parts_line(u, r, (*row)++, NULL, ui_attr(u, CP_MEDIUM, A_NORMAL), w, 2, " ");
    }
    bool whole;
    uint64_t placed, regions = prism_analysis_dropped_regions(u->a, &whole, &placed);
    if (regions && whole) {
        char a1[64], a2[64];
        fmt_count(c1, sizeof c1, (double)regions);
        fmt_count(c2, sizeof c2, (double)placed);
        snprintf(a1, sizeof a1, "%s whole regions not recorded", c1);
        snprintf(a2, sizeof a2, "(%s under their parent):", c2);
        const char *w[] = { a1, a2, "the tree is intact" };
        parts_line(u, r, (*row)++, NULL, ui_attr(u, CP_MEDIUM, A_NORMAL), w, 3, " ");
    } else if (prism_analysis_dropped(u->a) && !whole) {
        const char *w[] = { "single events dropped (a writer before 1.1):",
                            "nesting after a drop may be wrong" };
        parts_line(u, r, (*row)++, NULL, ui_attr(u, CP_HIGH, A_NORMAL), w, 2, " ");
    }
    const prism_reader_stats *rs = prism_analysis_reader_stats(u->a);
    char st[PRISM_IMPORT_NOTE];
    if (rs && rs->damaged) {
        char a1[64], a2[64];
        fmt_count(c1, sizeof c1, (double)rs->damaged);
        fmt_bytes(c2, sizeof c2, (double)rs->skipped_bytes);
        snprintf(a1, sizeof a1, "DAMAGED: %s runs,", c1);
        snprintf(a2, sizeof a2, "%s skipped", c2);
        const char *w[] = { a1, a2 };
        parts_line(u, r, (*row)++, "File", ui_attr(u, CP_HIGH, A_BOLD), w, 2, " ");
    } else if (u->src && source_progress(u->src, c1, sizeof c1, ld, sizeof ld)) {
        const char *w[] = { "being read:", c1, ld };     /* not yet at its footer */
        parts_line(u, r, (*row)++, "File", A_NORMAL, w, 3, " ");
    } else if (prism_import_status(prism_analysis_header(u->a), prism_analysis_complete(u->a),
                                   st, sizeof st)) {
        /* a trace has no footer: "complete (imported torch.profiler trace)",
         * "cut short: the JSON ends at byte N (...)", in parts at ": " and
         * " (" so that what fits shows */
        const char *w[4];
        int k = 0;
        for (char *p = st; p && *p && k < 4;) {
            w[k++] = p;
            char *colon = strstr(p, ": "), *paren = strstr(p, " (");
            char *cut = colon && (!paren || colon < paren) ? colon + 1 : paren;
            if (cut)
                *cut++ = '\0';
            p = cut;
        }
        parts_line(u, r, (*row)++, "File", prism_analysis_complete(u->a) ? A_NORMAL :
                   ui_attr(u, CP_MEDIUM, A_NORMAL), w, k, " ");
    } else {
        const char *w[] = { prism_analysis_complete(u->a) ? "complete" : "no footer:",
                            prism_analysis_complete(u->a) ? "" : "still being written,",
                            prism_analysis_complete(u->a) ? "" : "or the writer died" };
        parts_line(u, r, (*row)++, "File", A_NORMAL, w, 3, " ");
    }
}

/* Top operations in at most `rows` rows (a title and one per operation):
 * name, bar, then the figures right after it, never cut. */
static void top_ops(ui *u, const ui_rect *r, int *row, int rows)
{
    size_t n;
    const prism_op *ops = prism_analysis_ops(u->a, &n);
    if (rows < 2 || !n)
        return;
    ui_print(r, (*row)++, 1, ui_attr(u, CP_TITLE, A_BOLD), "Top operations");
    enum { SHOWN = 64, BAR_MIN = 8 };
    const char *names[SHOWN];
    size_t shared[SHOWN], shown = 0;
    int want = 0, need = 0;             /* whole names; what tells them apart */
    for (; shown < n && shown < SHOWN && (int)shown < rows - 1; shown++)
        names[shown] = ops[shown].name;
    nf_shared(names, shown, shared);
    for (size_t i = 0; i < shown; i++) {
        int wh = nf_need(names[i], 0), sh = nf_need(names[i], shared[i]);
        want = wh > want ? wh : want;
        need = sh > need ? sh : need;
    }
    const int figw = 16;                /* "%9s %5.1f%%" */
    int room = r->w - 4 - figw;         /* for the name and the bar */
    int namew = want < room - BAR_MIN ? want : room - BAR_MIN;
    if (namew < need)                   /* the name before the bar */
        namew = need < room ? need : room;
    if (namew < 12)
        namew = 12;
    int barw = r->w - 1 - namew - 1 - 1 - figw - 1;
    if (barw > 60)
        barw = 60;
    if (barw < 0)
        barw = 0;
    for (size_t i = 0; i < n && (int)i < rows - 1; i++) {
        char bar[512], tot[32], totp[48], fit[256];
        ui_bar(bar, sizeof bar, ops[i].share, barw, u->utf8);
        fmt_ns(tot, sizeof tot, (double)ops[i].total_ns);
        fmt_rpad(totp, sizeof totp, tot, 9);
        nf_fit(fit, sizeof fit, ops[i].name, i < shown ? shared[i] : 0, namew, u->utf8);
        ui_print(r, *row, 1, A_NORMAL, fit);
        if (barw)
            ui_print(r, *row, 2 + namew, ui_attr(u, CP_BAR, A_NORMAL), bar);
        int x = 2 + namew + (barw ? barw + 1 : 0);
        if (x + figw < r->w)
            ui_printf(r, *row, x, A_NORMAL, "%s %5.1f%%", totp, ops[i].share * 100);
        (*row)++;
    }
}

/* Text at (row, x) by whole units while they fit the rectangle (a figure
 * is never cut): units are separated by two spaces in text and shown
 * with one.  Returns the columns used. */
static int put_words(const ui_rect *r, int row, int x, attr_t at, const char *text)
{
    char copy[256], line[256];
    const char *words[32];
    int n = 0;
    snprintf(copy, sizeof copy, "%s", text);
    for (char *p = copy; *p && n < 32;) {
        words[n++] = p;
        char *q = strstr(p, "  ");
        if (!q)
            break;
        *q = '\0';
        p = q + 2;
        while (*p == ' ')
            p++;
    }
    ui_fit_parts(line, sizeof line, words, n, " ", r->w - x - 1);
    size_t len = strlen(line);              /* a list cut short ends on no comma */
    if (len && (line[len - 1] == ',' || line[len - 1] == ';'))
        line[len - 1] = '\0';
    return ui_print(r, row, x, at, line);
}

static int memory_rows(ui *u)
{
    const prism_memory_stats *m = prism_analysis_memory(u->a);
    return (m->count && m->have_gpu ? 2 : 1) + (prism_analysis_system(u->a)->count ? 1 : 0);
}

/* "disk 8.0 MB read, 11.0 MB written; net 1.2 MB; CPU 95% user, 3% sys; ..."
 * (format 1.3 readings): whole units while they fit. */
static void system_row(ui *u, const ui_rect *r, int *row)
{
    const prism_system_stats *s = prism_analysis_system(u->a);
    if (!s->count)
        return;
    char text[256], a[32], b[32];
    size_t n = 0;
    text[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0, __VA_ARGS__))
    if (s->io_read_bytes != PRISM_NO_VALUE && s->io_write_bytes != PRISM_NO_VALUE) {
        fmt_bytes(a, sizeof a, (double)s->io_read_bytes);
        fmt_bytes(b, sizeof b, (double)s->io_write_bytes);
        ADD("disk %s read, %s written;  ", a, b);
    }
    if (s->net_rx_bytes != PRISM_NO_VALUE && s->net_tx_bytes != PRISM_NO_VALUE) {
        fmt_bytes(a, sizeof a, (double)(s->net_rx_bytes + s->net_tx_bytes));
        ADD("net %s;  ", a);
    }
    if (s->cpu_user_pct >= 0)
        ADD("CPU %.0f%% user, %.0f%% sys;  ", s->cpu_user_pct, s->cpu_sys_pct);
    if (s->mem_peak_pct >= 0)
        ADD("mem %.1f%% peak;  ", s->mem_peak_pct);
    if (s->gpu_util_pct >= 0)
        ADD("GPU %.0f%% busy;  ", s->gpu_util_pct);
    if (s->cpu_energy_uj != PRISM_NO_VALUE || s->gpu_energy_mj != PRISM_NO_VALUE) {
        double j = (s->cpu_energy_uj != PRISM_NO_VALUE ? (double)s->cpu_energy_uj / 1e6 : 0) +
                   (s->gpu_energy_mj != PRISM_NO_VALUE ? (double)s->gpu_energy_mj / 1e3 : 0);
        ADD("energy %.1f J;  ", j);
    }
#undef ADD
    ui_print(r, *row, 1, ui_attr(u, CP_TITLE, A_BOLD), "System");
    put_words(r, (*row)++, 1 + LABEL_W, A_NORMAL, text);
}

static void memory(ui *u, const ui_rect *r, int *row)
{
    const prism_memory_stats *m = prism_analysis_memory(u->a);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    if (!m->count) {
        ui_print(r, *row, 1, lab, "Memory");
        ui_print(r, (*row)++, 1 + LABEL_W, A_NORMAL, "no samples");
        return;
    }
    double *v = malloc(m->count * sizeof *v);
    if (!v)
        return;
    int sw = r->w - 50;
    if (sw > 60)
        sw = 60;
    if (sw < 8)
        sw = 8;
    for (int gpu = 0; gpu <= (m->have_gpu ? 1 : 0); gpu++) {
        for (size_t i = 0; i < m->count; i++)
            v[i] = (double)(gpu ? m->samples[i].gpu_used : m->samples[i].rss);
        char spark[1024], peak[32], text[112], slope[80];
        ui_sparkline(spark, sizeof spark, v, m->count, sw, u->utf8);
        fmt_bytes(peak, sizeof peak, gpu ? (double)m->peak_gpu_used : (double)m->peak_rss);
        /* the plotted series' fit; the CUDA allocations' when they rise */
        const prism_leak *lk = gpu ? &m->gpu : &m->host, *g = prism_memory_gpu_leak(m, NULL);
        const char *of = "";
        if (gpu && g == &m->gpu_alloc && g->verdict != PRISM_LEAK_NONE) {
            lk = g;
            of = "allocs ";
        }
        /* an imported trace's host figure is torch's CPU allocator's */
        ui_print(r, *row, 1, lab, gpu ? "GPU mem" : m->host_allocated ? "Allocated" : "Host RSS");
        ui_print(r, *row, 1 + LABEL_W, ui_attr(u, CP_BAR, A_NORMAL), spark);
        int c = 1 + LABEL_W + ui_width(spark) + 1;
        snprintf(text, sizeof text, "peak %s%s", peak,
                 !gpu && m->host_allocated ? " (torch's CPU allocator, from the trace)" : "");
        if (c + ui_width(text) < r->w)
            c += ui_print(r, *row, c, A_NORMAL, text) + 1;
        int tone;
        /* the verdict always: a sparkline scales to its own range, so a
         * flat run looks like a climb without it */
        const char *word = verdict_word(lk, &tone);
        snprintf(slope, sizeof slope, "%s%+.2f MB/step %s", of, lk->slope_mb_per_step, word);
        if (lk->have_fit && c + ui_width(slope) < r->w)
            ui_print(r, *row, c, tone == VERDICT_BAD ? ui_attr(u, CP_HIGH, A_BOLD)
                                 : tone == VERDICT_WARN ? ui_attr(u, CP_MEDIUM, A_NORMAL)
                                 : A_NORMAL, slope);
        (*row)++;
    }
    free(v);
    system_row(u, r, row);
}

/* The counts by severity, then one finding a row while rows are left. */
static void findings(ui *u, const ui_rect *r, int *row, int rows)
{
    size_t n, c[3] = { 0, 0, 0 };
    const prism_bottleneck *b = prism_analysis_bottlenecks(u->a, &n);
    if (rows < 1)
        return;
    for (size_t i = 0; i < n; i++)
        c[b[i].severity]++;
    ui_print(r, *row, 1, ui_attr(u, CP_TITLE, A_BOLD), "Findings");
    static const int pairs[3] = { CP_HIGH, CP_MEDIUM, CP_LOW };
    static const char *const sev[3] = { "HIGH", "MEDIUM", "LOW" };
    int x = 1 + LABEL_W;
    for (int k = PRISM_SEV_HIGH, first = 1; k >= PRISM_SEV_LOW; k--, first = 0) {
        char part[32];
        int i = k == PRISM_SEV_HIGH ? 0 : k == PRISM_SEV_MEDIUM ? 1 : 2;
        snprintf(part, sizeof part, "%s%zu %s", first ? "" : "  ", c[k], sev[i]);
        if (x + ui_width(part) >= r->w)
            break;
        x += ui_print(r, *row, x, ui_attr(u, pairs[i], i ? A_NORMAL : A_BOLD), part);
    }
    if (n && x + 15 < r->w)
        ui_print(r, *row, x, A_NORMAL, "   (7: details)");
    (*row)++;
    if (!n && rows > 1)
        ui_print(r, (*row)++, 3, A_NORMAL, "none: nothing stands out");
    for (size_t i = 0; i < n && (int)i < rows - 1; i++) {
        char tag[16], d[ESC_CAP(sizeof b[i].description)], fit[ESC_CAP(sizeof b[i].description)];
        int k = b[i].severity;
        int pi = k == PRISM_SEV_HIGH ? 0 : k == PRISM_SEV_MEDIUM ? 1 : 2;
        snprintf(tag, sizeof tag, r->w >= 60 ? "%-6s" : "%s", prism_severity_name(b[i].severity));
        int tx = 3 + ui_print(r, *row, 3, ui_attr(u, pairs[pi], pi ? A_NORMAL : A_BOLD), tag) + 1;
        ui_elide_words(fit, sizeof fit, safe(b[i].description, d, sizeof d), r->w - tx - 1, u->utf8);
        ui_print(r, (*row)++, tx, A_NORMAL, fit);
    }
}

/* One profile: one column, or two from SUMMARY_WIDE columns. */
static void draw_single(ui *u, const ui_rect *r)
{
    size_t nfind;
    prism_analysis_bottlenecks(u->a, &nfind);
    int mem = memory_rows(u);
    if (r->w >= SUMMARY_WIDE) {
        int lw = r->w / 2;
        ui_rect left = { r->y, r->x, r->h, lw }, right = { r->y, r->x + lw + 1, r->h, r->w - lw - 1 };
        int row = 1;
        run_info(u, &left, &row);
        totals(u, &left, &row);
        row++;
        top_ops(u, &left, &row, r->h - row);
        row = 1;
        memory(u, &right, &row);
        row++;
        findings(u, &right, &row, r->h - row);
        return;
    }
    int gap = r->h >= 22 ? 1 : 0;       /* blank rows between blocks */
    int row = gap;
    run_info(u, r, &row);
    totals(u, r, &row);
    int want = 1 + (int)(nfind < 3 ? (nfind ? nfind : 1) : 3);     /* findings kept */
    int ops = r->h - row - gap - mem - gap - want - gap;
    if (ops > 12)
        ops = 12;
    if (ops >= 2) {
        row += gap;
        top_ops(u, r, &row, ops);
    }
    row += gap;
    memory(u, r, &row);
    row += gap;
    findings(u, r, &row, r->h - row);
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

/* A change of time as the explorer prints durations: "-141.2 ms -6.0%",
 * "new +3.20 ms", "gone -1.10 ms". */
static void change_cell(char *buf, size_t cap, const prism_delta *d)
{
    char dv[40], pct[32];
    fmt_ns_signed(dv, sizeof dv, d->delta_ns);
    dl_kind k = dl_kind_of(d);
    if (k == DL_NEW || k == DL_GONE) {
        snprintf(buf, cap, "%s %s", k == DL_NEW ? "new" : "gone", dv);   /* one unit */
        return;
    }
    dl_fmt_pct(pct, sizeof pct, d->delta_pct);
    snprintf(buf, cap, "%s  %s", dv, pct);         /* two units (put_words) */
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
    char cell[80];
    change_cell(cell, sizeof cell, &d);
    int c = CX_DELTA + put_words(r, row, CX_DELTA, cmpv_delta_attr(u, &d, A_NORMAL, false), cell);
    char pv[32];
    snprintf(pv, sizeof pv, "p=%.2g%s", p, d.significant ? " *" : "");
    if (p >= 0 && c > CX_DELTA)
        put_words(r, row, c + 2, A_NORMAL, pv);
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

/* The GPU verdict: the CUDA allocations' when the file recorded them. */
static bool leaks(const prism_memory_stats *m)
{
    const prism_leak *g = prism_memory_gpu_leak(m, NULL);
    return m->host.leak || (g && g->leak);
}

/* "LEAK", "growing" (rising, not proven) or "none". */
static const char *leak_word(const prism_memory_stats *m)
{
    if (leaks(m))
        return "LEAK";
    const prism_leak *g = prism_memory_gpu_leak(m, NULL);
    if (m->host.verdict == PRISM_LEAK_GROWING || (g && g->verdict == PRISM_LEAK_GROWING))
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
        char cell[80], pp[32];
        change_cell(cell, sizeof cell, d);
        char fit[300];
        tv_fit_left(fit, sizeof fit, d->path, CX_DELTA - 4, u->utf8);   /* the leaf end */
        ui_print(r, row, 3, A_NORMAL, fit);
        int x = CX_DELTA + put_words(r, row, CX_DELTA, cmpv_delta_attr(u, d, A_NORMAL, false), cell);
        char sh[48];
        dl_fmt_pp(pp, sizeof pp, d->share_delta);
        snprintf(sh, sizeof sh, "share %s", pp);
        put_words(r, row++, x + 2, ui_attr(u, CP_DIM, A_NORMAL), sh);
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
    bytes_row(u, r, row++, ma->host_allocated && mb->host_allocated ? "Peak alloc" : "Peak host",
              (double)ma->peak_rss, (double)mb->peak_rss,
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
    char text[160];
    if (c->whole_run_shift)
        snprintf(text, sizeof text, "x%.2f %s: the machine, not one region", c->run_factor,
                 c->run_factor > 1 ? "slower" : "faster");
    else if (c->run_regions >= 3)
        snprintf(text, sizeof text, "no common shift  (x%.2f)", c->run_factor);
    else
        snprintf(text, sizeof text, "too few regions to judge");
    put_words(r, row++, CX_BASE, c->whole_run_shift ? ui_attr(u, CP_MEDIUM, A_BOLD) | A_BOLD
                                                     : A_NORMAL, text);
    size_t nsig = 0, ba, bb;
    for (size_t i = 0; i < c->count; i++)
        nsig += dl_kind_of(&c->deltas[i]) == DL_SLOWER || dl_kind_of(&c->deltas[i]) == DL_FASTER;
    ui_print(r, row, 1, lab, "Regions");
    ui_printf(r, row, CX_BASE, A_NORMAL, "%zu paths", prism_analysis_tree(a)->count);
    ui_printf(r, row, CX_NEW, A_NORMAL, "%zu paths", prism_analysis_tree(b)->count);
    snprintf(text, sizeof text, "%zu new,  %zu gone,  %zu changed", c->appeared, c->vanished, nsig);
    put_words(r, row++, CX_DELTA, A_NORMAL, text);
    prism_analysis_bottlenecks(a, &ba);
    prism_analysis_bottlenecks(b, &bb);
    ui_print(r, row, 1, lab, "Findings");
    ui_printf(r, row, CX_BASE, A_NORMAL, "%zu", ba);
    ui_printf(r, row, CX_NEW, A_NORMAL, "%zu", bb);
    snprintf(text, sizeof text, "%zu new,  %zu gone  (7: details)", c->nbn_new, c->nbn_gone);
    put_words(r, row++, CX_DELTA, c->nbn_new ? ui_attr(u, CP_HIGH, A_BOLD) : A_NORMAL, text);
    top_changes(u, r, row + 1, r->h - row - 1);
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    ui_rect r = { y, x, h, w };
    (void)st;
    if (u->cmp && u->side == 1) {
        compare_table(u, &r);
        return;
    }
    draw_single(u, &r);
}

const ui_pane pane_summary = {
    .name = "Summary",
    .hint = "Tab/1-8: panes  ?: help",
    .draw = draw,
};
