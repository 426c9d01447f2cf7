/*
 * pane_memory.c - the Memory pane: host RSS (or GPU used, with reserved as
 * a second trace) over time as a multi-row chart, the same memory at step
 * boundaries against the step index with the fitted trend line overlaid,
 * the leak verdict (LEAK / growing / no leak, with the slope and its
 * standard error, the growth over the run, r2, the reason and the
 * projection), peaks, and a step marker that h/l (or a mouse click on
 * either chart, or the wheel) move (shown on both charts, with the value
 * under it).
 *
 * Everything drawn comes from prism_memory_stats; the charts themselves are
 * pure text cells (chart.c), the verdict's words verdict.c's.  The selected
 * step is kept as a step index, so it survives pane switches and reloads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "ui.h"
#include "verdict.h"

#define MB 1048576.0
#define GUTTER 9                        /* y-axis labels: "3.52 GB" + axis */
#define MIN_SPAN 0.1                    /* the y axis spans at least this of its top */

typedef struct memv {
    int gpu;                            /* 1: GPU used/reserved, 0: host,
                                           -1: the worse verdict (host on a
                                           tie) until g is pressed        */
    uint64_t step;                      /* selected step; UINT64_MAX: last  */
    /* the charts at the last draw, for the mouse: rows [y, y + h) of the
     * over-time (0) and per-step (1) charts, their bars from column cx on,
     * cw columns wide */
    int chart_y[2], chart_h[2], cx, cw;
} memv;

/* Show GPU memory?  By default the series with the worse leak verdict, so
 * that Enter on a GPU leak in the Bottlenecks pane lands on its chart. */
static bool shows_gpu(const memv *mv, const prism_memory_stats *m)
{
    if (!m->have_gpu)
        return false;
    const prism_leak *g = prism_memory_gpu_leak(m, NULL);
    return mv->gpu < 0 ? g->verdict > m->host.verdict : mv->gpu > 0;
}

/* The series a view shows, extracted from the samples for one draw. */
typedef struct series {
    size_t n;                           /* all samples                      */
    double *t, *v, *v2;                 /* time (ns), value, reserved (GPU) */
    size_t k;                           /* samples at step boundaries       */
    double *sx, *sy;                    /* step index, value                */
    uint64_t *sstep;                    /* step index, exact                */
    uint64_t *sts;                      /* their timestamps                 */
} series;

static void series_free(series *s)
{
    free(s->t);
    free(s->v);
    free(s->v2);
    free(s->sx);
    free(s->sy);
    free(s->sstep);
    free(s->sts);
    memset(s, 0, sizeof *s);
}

static bool series_get(const prism_memory_stats *m, bool gpu, series *s)
{
    memset(s, 0, sizeof *s);
    size_t n = m->count ? m->count : 1;
    s->t = malloc(n * sizeof *s->t);
    s->v = malloc(n * sizeof *s->v);
    s->v2 = malloc(n * sizeof *s->v2);
    s->sx = malloc(n * sizeof *s->sx);
    s->sy = malloc(n * sizeof *s->sy);
    s->sstep = malloc(n * sizeof *s->sstep);
    s->sts = malloc(n * sizeof *s->sts);
    if (!s->t || !s->v || !s->v2 || !s->sx || !s->sy || !s->sstep || !s->sts) {
        series_free(s);
        return false;
    }
    for (size_t i = 0; i < m->count; i++) {
        const prism_mem_point *p = &m->samples[i];
        double val = (double)(gpu ? p->gpu_used : p->rss);
        s->t[s->n] = (double)p->ts;
        s->v[s->n] = val;
        s->v2[s->n++] = gpu ? (double)p->gpu_reserved : NAN;
        if (p->step != PRISM_NO_STEP) {
            s->sx[s->k] = (double)p->step;
            s->sy[s->k] = val;
            s->sstep[s->k] = p->step;
            s->sts[s->k++] = p->ts;
        }
    }
    return true;
}

/* The point shown for the selected step: that step, else the nearest. */
static size_t point_of(const series *s, uint64_t step)
{
    size_t best = s->k - 1;
    if (step == UINT64_MAX)
        return best;
    double d = INFINITY;
    for (size_t i = 0; i < s->k; i++)
        if (fabs(s->sx[i] - (double)step) < d) {
            d = fabs(s->sx[i] - (double)step);
            best = i;
        }
    return best;
}

static attr_t kind_attr(const ui *u, int kind)
{
    switch (kind) {
    case CHART_BAR: return ui_attr(u, CP_BAR, A_NORMAL);
    case CHART_TRACE: return ui_attr(u, CP_MEDIUM, A_BOLD) | A_BOLD;
    case CHART_TRACE2: return ui_attr(u, CP_LOW, A_BOLD);
    case CHART_MARK: return ui_attr(u, CP_SEL, A_REVERSE);
    default: return A_NORMAL;
    }
}

/* Draw a chart at (row, col) of r with y-axis labels in a gutter. */
static void put_chart(ui *u, const ui_rect *r, int row, int col, const chart *c, bool gutter)
{
    char buf[4096], lab[32];
    attr_t dim = ui_attr(u, CP_DIM, A_NORMAL);
    for (int y = 0; y < c->h; y++) {
        if (gutter) {
            lab[0] = '\0';
            if (y == 0)
                fmt_bytes(lab, sizeof lab, c->hi);
            else if (y == c->h - 1)
                fmt_bytes(lab, sizeof lab, c->lo);
            ui_printf(r, row + y, col - GUTTER, A_NORMAL, "%*s", GUTTER - 1, lab);
            ui_print(r, row + y, col - 1, dim, u->utf8 ? (lab[0] ? "\u2524" : "\u2502") : "|");
        }
        for (int x = 0; x < c->w;) {
            int kind, n = chart_run(c, y, x, buf, sizeof buf, &kind);
            if (n <= 0)
                break;
            ui_print(r, row + y, col + x, kind_attr(u, kind), buf);
            x += n;
        }
    }
}

/* Bars of (x, y) with optional overlays; mark_x < 0: no marker. */
static void draw_chart(ui *u, const ui_rect *r, int row, int h, int w, const double *x,
                       const double *y, size_t n, const double *y2, const double *trend,
                       double mark_x)
{
    bool gutter = w >= GUTTER + 12;
    int col = gutter ? GUTTER : 1, cw = w - col - 1;
    if (h < 1 || cw < 1 || !n)
        return;
    double *cols = malloc((size_t)cw * 3 * sizeof *cols);
    if (!cols)
        return;
    double *c2 = cols + cw, *ct = cols + 2 * cw, lo, hi, lo2, hi2;
    chart_resample(x, y, n, cols, cw);
    chart_range(y, n, &lo, &hi);
    if (y2) {
        chart_resample(x, y2, n, c2, cw);
        chart_range(y2, n, &lo2, &hi2);
        lo = 0;                         /* two series: show their proportion */
        hi = hi > hi2 ? hi : hi2;
    }
    if (trend) {                         /* the fitted line, column by column */
        double t[2] = { trend[0], trend[1] };
        chart_range(t, 2, &lo2, &hi2);
        lo = lo < lo2 ? lo : lo2;
        hi = hi > hi2 ? hi : hi2;
        for (int i = 0; i < cw; i++)
            ct[i] = trend[0] + (trend[1] - trend[0]) * (i + 0.5) / cw;
    }
    /* a flat run (+2 MB on 250 MB) on a range of its own few MB fills the
     * chart's height like a climb: the axis spans a tenth of the level at
     * least */
    chart_range_min(&lo, &hi, MIN_SPAN);
    chart c;
    if (chart_init(&c, h, cw, lo, hi, u->utf8)) {
        chart_bars(&c, cols);
        if (y2)
            chart_trace(&c, c2, CHART_TRACE2);
        if (trend)
            chart_trace(&c, ct, CHART_TRACE);
        if (mark_x >= 0)
            chart_marker(&c, chart_col(mark_x, x[0], x[n - 1], cw));
        put_chart(u, r, row, col, &c, gutter);
        chart_free(&c);
    }
    free(cols);
}

/* An x-axis line under a chart: left label at the chart's start, right
 * label ending at its end. */
static void axis(ui *u, const ui_rect *r, int row, int w, const char *left, const char *right)
{
    int col = w >= GUTTER + 12 ? GUTTER : 1, end = w - 1;
    attr_t dim = ui_attr(u, CP_DIM, A_NORMAL);
    ui_print(r, row, col, dim, left);
    int rw = ui_width(right);
    if (end - rw > col + ui_width(left))
        ui_print(r, row, end - rw, dim, right);
}

static void draw_empty(ui *u, const ui_rect *r)
{
    ui_print(r, 1, 1, ui_attr(u, CP_TITLE, A_BOLD), "No memory samples in this profile");
    ui_print(r, 3, 1, A_NORMAL, "The sampler records host RSS (and GPU memory when CUDA is");
    ui_print(r, 4, 1, A_NORMAL, "present) periodically and at step boundaries; it was off,");
    ui_print(r, 5, 1, A_NORMAL, "or the run ended before the first sample.");
}

/* The verdict in `rows` rows (1 or 2): the word in its colour and the
 * fit's facts, then why and where it leads. */
static void verdict(ui *u, const ui_rect *r, int row, int rows, const prism_leak *lk, size_t k,
                    const char *label)
{
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    int c = 1 + ui_print(r, row, 1, lab, label);
    if (!lk->have_fit) {
        ui_printf(r, row, c, A_NORMAL, "no fit: %zu step sample%s (4 needed)", k, k == 1 ? "" : "s");
        return;
    }
    int tone;
    const char *word = verdict_word(lk, &tone);
    attr_t at = tone == VERDICT_BAD ? ui_attr(u, CP_HIGH, A_BOLD) | A_BOLD
              : tone == VERDICT_WARN ? ui_attr(u, CP_MEDIUM, A_BOLD) | A_BOLD
              : ui_attr(u, CP_LOW, A_NORMAL);
    char buf[256];
    c += ui_print(r, row, c, at, word);
    verdict_facts(buf, sizeof buf, lk, u->utf8);
    ui_print(r, row, c + 2, A_NORMAL, buf);
    if (rows > 1) {
        verdict_detail(buf, sizeof buf, lk);
        ui_print(r, row + 1, 7, ui_attr(u, CP_DIM, A_NORMAL), buf);
    }
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    memv *mv = st;
    ui_rect r = { y, x, h, w };
    const prism_memory_stats *m = prism_analysis_memory(u->a);
    if (!m->count) {
        draw_empty(u, &r);
        return;
    }
    bool gpu = shows_gpu(mv, m);
    series s;
    if (!series_get(m, gpu, &s)) {
        ui_print(&r, 0, 1, A_NORMAL, "out of memory");
        return;
    }
    /* GPU: the verdict of the CUDA allocations when the file recorded them */
    const prism_leak *lk = gpu ? prism_memory_gpu_leak(m, NULL) : &m->host;
    const char *vlabel = lk == &m->gpu_alloc ? "Allocations " : "Trend ";
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    char b1[32], b2[32], left[48], right[48];

    /* title: what is shown, peaks, counts */
    int c = 1 + ui_print(&r, 0, 1, lab, gpu ? "GPU used" : m->host_allocated
                         ? "Allocated (torch's CPU allocator, from the trace)" : "Host RSS");
    fmt_bytes(b1, sizeof b1, (double)(gpu ? m->peak_gpu_used : m->peak_rss));
    fmt_bytes(b2, sizeof b2, (double)m->peak_gpu_reserved);
    char part[4][80];
    const char *pp[4] = { part[0], part[1], part[2], part[3] };
    snprintf(part[0], sizeof part[0], "peak %s%s%s", b1, gpu ? ", reserved " : "", gpu ? b2 : "");
    snprintf(part[1], sizeof part[1], "%zu samples", s.n);
    snprintf(part[2], sizeof part[2], "(%zu at steps)", s.k);
    size_t np = 3;
    const prism_system_stats *sy = prism_analysis_system(u->a);
    if (!gpu && sy->mem_peak_pct >= 0) {     /* format 1.3: against the machine's */
        fmt_bytes(b2, sizeof b2, (double)sy->mem_total);
        snprintf(part[np++], sizeof part[3], "peak %.1f%% of the machine's %s", sy->mem_peak_pct,
                 b2);
    }
    c += 2 + ui_print_parts(&r, 0, c + 2, pp, NULL, np, "  ");  /* whole parts that fit */
    const char *hint = gpu ? "(g: host)" : "(g: GPU)";
    if (m->have_gpu && c + 2 + ui_width(hint) <= r.w)
        ui_print(&r, 0, c + 2, ui_attr(u, CP_DIM, A_NORMAL), hint);

    /* rows: title, label, chart A, axis, label, chart B, axis, verdict
     * (two rows when there is room) */
    int vrows = h >= 14 ? 2 : 1, avail = h - 5 - vrows, ha, hb;
    if (!s.k) {
        ha = h - 4;
        hb = 0;
    } else if (avail < 2) {
        ha = 0;
        hb = h - 3 - vrows > 1 ? h - 3 - vrows : 1;
    } else {
        ha = avail / 2;
        hb = avail - ha;
    }
    size_t p = s.k ? point_of(&s, mv->step) : 0;
    int row = 1;
    mv->chart_h[0] = mv->chart_h[1] = 0;
    mv->cx = w >= GUTTER + 12 ? GUTTER : 1;         /* as draw_chart places them */
    mv->cw = w - mv->cx - 1;
    if (ha > 0) {
        c = 1 + ui_print(&r, row, 1, lab, "Over time");
        if (gpu)
            ui_printf(&r, row, c, A_NORMAL, "  %s used  %s reserved", u->utf8 ? "\u2588" : "#",
                      u->utf8 ? "\u2550" : "=");
        row++;
        draw_chart(u, &r, row, ha, w, s.t, s.v, s.n, gpu ? s.v2 : NULL, NULL,
                   s.k ? (double)s.sts[p] : -1.0);
        mv->chart_y[0] = row;
        mv->chart_h[0] = ha;
        row += ha;
        fmt_ns(b1, sizeof b1, s.t[s.n - 1] - s.t[0]);
        snprintf(right, sizeof right, "+%s", b1);
        axis(u, &r, row++, w, "0", right);
    }
    if (!s.k) {
        ui_print(&r, row, 1, A_NORMAL, "No samples at step boundaries: no steps were recorded.");
        series_free(&s);
        return;
    }

    /* per step, with the trend and the marker */
    c = 1 + ui_print(&r, row, 1, lab, "At step boundaries");
    fmt_bytes(b1, sizeof b1, s.sy[p]);
    c += ui_printf(&r, row, c, A_NORMAL, "  step %.0f: ", s.sx[p]);
    c += ui_print(&r, row, c, kind_attr(u, CHART_MARK), b1);
    if (lk->have_fit && s.sx[s.k - 1] > s.sx[0]) {
        double f = (s.sx[p] - s.sx[0]) / (s.sx[s.k - 1] - s.sx[0]);
        fmt_bytes(b2, sizeof b2, (lk->start_mb + (lk->end_mb - lk->start_mb) * f) * MB);
        c += ui_printf(&r, row, c, A_NORMAL, "  trend %s", b2);
    }
    ui_print(&r, row++, c + 2, ui_attr(u, CP_DIM, A_NORMAL), "(h/l: step)");
    double trend[2] = { lk->start_mb * MB, lk->end_mb * MB };
    draw_chart(u, &r, row, hb, w, s.sx, s.sy, s.k, NULL, lk->have_fit ? trend : NULL, s.sx[p]);
    mv->chart_y[1] = row;
    mv->chart_h[1] = hb;
    row += hb;
    snprintf(left, sizeof left, "step %.0f", s.sx[0]);
    snprintf(right, sizeof right, "step %.0f", s.sx[s.k - 1]);
    axis(u, &r, row++, w, left, right);
    verdict(u, &r, row, vrows, lk, lk == &m->gpu_alloc ? lk->points : s.k, vlabel);
    series_free(&s);
}

static void *init(ui *u)
{
    (void)u;
    memv *mv = calloc(1, sizeof *mv);
    if (mv) {
        mv->gpu = -1;
        mv->step = UINT64_MAX;
    }
    return mv;
}

/* Move the marker to the neighbouring step boundary sample(s). */
static int k_step(ui *u, void *st, int key)
{
    memv *mv = st;
    const prism_memory_stats *m = prism_analysis_memory(u->a);
    series s;
    if (!m->count || !series_get(m, shows_gpu(mv, m), &s))
        return UI_NONE;
    if (!s.k) {
        series_free(&s);
        return UI_NONE;
    }
    size_t p = point_of(&s, mv->step);
    long d = key == KEY_LEFT || key == 'h' ? -1 : key == KEY_RIGHT || key == 'l' ? 1
           : key == 'H' ? -10 : key == 'L' ? 10 : 0;
    long q = (long)p + d;
    if (key == KEY_HOME)
        q = 0;
    if (key == KEY_END)
        q = (long)s.k - 1;
    q = q < 0 ? 0 : q >= (long)s.k ? (long)s.k - 1 : q;
    mv->step = q == (long)s.k - 1 ? UINT64_MAX : s.sstep[q];
    series_free(&s);
    return UI_REDRAW;
}

/* Mouse: a click (or double click) on a chart moves the marker to the step
 * boundary sample drawn nearest that column; the wheel steps it like h/l. */
static int mouse(ui *u, void *st, int event, int row, int col)
{
    memv *mv = st;
    if (!mv)
        return UI_NONE;
    if (event == UI_MOUSE_WHEEL_UP || event == UI_MOUSE_WHEEL_DOWN)
        return k_step(u, mv, event == UI_MOUSE_WHEEL_UP ? 'h' : 'l');
    if (event != UI_MOUSE_CLICK && event != UI_MOUSE_DOUBLE)
        return UI_NONE;
    int which = -1;
    for (int c = 0; c < 2; c++)
        if (mv->chart_h[c] > 0 && row >= mv->chart_y[c] && row < mv->chart_y[c] + mv->chart_h[c])
            which = c;
    if (which < 0 || mv->cw < 1 || col < mv->cx || col >= mv->cx + mv->cw)
        return UI_NONE;
    const prism_memory_stats *m = prism_analysis_memory(u->a);
    series s;
    if (!m->count || !series_get(m, shows_gpu(mv, m), &s))
        return UI_NONE;
    size_t best = SIZE_MAX;
    int bd = 0;
    for (size_t i = 0; i < s.k; i++) {         /* the columns draw_chart gives them */
        int c = which == 0 ? chart_col((double)s.sts[i], s.t[0], s.t[s.n - 1], mv->cw)
                           : chart_col(s.sx[i], s.sx[0], s.sx[s.k - 1], mv->cw);
        int d = abs(c - (col - mv->cx));
        if (best == SIZE_MAX || d < bd) {
            best = i;
            bd = d;
        }
    }
    if (best != SIZE_MAX)
        mv->step = best == s.k - 1 ? UINT64_MAX : s.sstep[best];
    series_free(&s);
    return best != SIZE_MAX ? UI_REDRAW : UI_NONE;
}

static int k_toggle(ui *u, void *st, int key)
{
    memv *mv = st;
    (void)key;
    if (!prism_analysis_memory(u->a)->have_gpu) {
        ui_message(u, "no GPU memory samples in this profile");
        return UI_REDRAW;
    }
    mv->gpu = !shows_gpu(mv, prism_analysis_memory(u->a));
    return UI_REDRAW;
}

static const ui_key keys[] = {
    { 'h', "h", k_step, "marker to the previous step" },
    { KEY_LEFT, "Left", k_step, "marker to the previous step" },
    { 'l', "l", k_step, "marker to the next step" },
    { KEY_RIGHT, "Right", k_step, "marker to the next step" },
    { 'H', "H", k_step, "marker 10 steps back" },
    { 'L', "L", k_step, "marker 10 steps on" },
    { KEY_HOME, "Home", k_step, "marker to the first step" },
    { KEY_END, "End", k_step, "marker to the last step" },
    { 'g', "g", k_toggle, "show host RSS / GPU memory" },
};

const ui_pane pane_memory = {
    .name = "Memory",
    .hint = "h/l: step marker  g: host/GPU",
    .init = init,
    .draw = draw,
    .free = free,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .mouse = mouse,
};
