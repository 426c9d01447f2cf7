/*
 * pane_timeline.c - the Timeline pane: the steps as a bar chart of step
 * time (outliers marked, one selected), and for the selected step a lane
 * view: one lane per thread and per GPU stream, regions as labelled spans
 * stacked by nesting depth, idle gaps blank (the training thread's time
 * inside a step that no root region holds: `(outside regions)`, dimmed,
 * as in the Tree), a time axis from the step's start.  `v` (or Enter on the chart, Esc back) moves the focus between
 * the chart and the lanes; in the lanes h/l move the cursor (the view pans
 * at its edges), +/- zoom around it, 0 fits the step, j/k choose the row,
 * [ / ] go to the previous / next span, Enter shows the span's call path
 * in the Tree.
 *
 * The spans come from prism_timeline (read from the file for the selected
 * step only, cached); the geometry from timeline_view.c; the lanes are
 * drawn by timeline_lanes.c.  The pane loads only when the step or the
 * file changes, never on a plain redraw.
 *
 * Compare mode (prism-top BASE NEW; timeline_compare.c says more): each
 * side shows its run's chart, a line of figures (mean, p50, the new run's
 * change) and the lanes of the one step both sides share (the same step
 * number); charts and lanes on one scale, so the slower run stands taller
 * and longer.  h/l and the lanes' view and cursor (as times from the
 * step's start) move both sides; the row cursor is each side's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "timeline_pane.h"
#include "treeview.h"

static void *init(ui *u)
{
    (void)u;
    tl *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->tl = prism_timeline_new(0);
    if (!s->tl) {
        free(s);
        return NULL;
    }
    return s;
}

static void pane_free(void *st)
{
    tl *s = st;
    if (s) {
        prism_timeline_free(s->tl);
        free(s->dur);
        free(s->out);
        free(s);
    }
}

static void reload(ui *u, void *st)
{
    tl *s = st;
    (void)u;
    if (s) {
        s->stale = true;
        s->mser = NULL;         /* the series may have changed in place */
    }
}

const prism_step *tl_steps(const ui *u, size_t *n)
{
    const prism_step_stats *ss = prism_analysis_steps(u->a);
    *n = ss ? ss->nseries : 0;
    return ss ? ss->series : NULL;
}

bool tl_select_step(const ui *u, void *st, uint64_t index)
{
    tl *s = st;
    size_t n;
    const prism_step *sv = s ? tl_steps(u, &n) : NULL;
    for (size_t i = 0; sv && i < n; i++)
        if (sv[i].index == index) {
            s->step = i;
            s->picked = true;
            s->stale = true;
            s->missing = false;
            if (u->cmp)         /* the other side takes the step too */
                tlc_share(u, s, false);
            return true;
        }
    return false;
}

static double step_ns(const prism_step *p) { return (double)(p->end - p->start); }

bool tl_model(const ui *u, tl *s)
{
    size_t n;
    const prism_step *sv = tl_steps(u, &n);
    if (!n)
        return false;
    if (sv == s->mser && n == s->mn && s->dur)
        return true;
    double *d = realloc(s->dur, n * sizeof *d);
    if (d)
        s->dur = d;
    bool *o = realloc(s->out, n * sizeof *o);
    if (o)
        s->out = o;
    if (!d || !o) {
        s->mser = NULL;
        return false;
    }
    s->peak = 0;
    for (size_t i = 0; i < n; i++) {
        d[i] = step_ns(&sv[i]);
        s->peak = d[i] > s->peak ? d[i] : s->peak;
    }
    s->nout = tlv_outliers(d, n, o, NULL);
    s->mser = sv;
    s->mn = n;
    return true;
}

/* The training thread and the steps that overlap [a, b], for the
 * timeline's `(outside regions)` spans. */
static void set_training(ui *u, tl *s, uint64_t a, uint64_t b)
{
    size_t n, lo = 0, hi;
    const prism_step *sv = tl_steps(u, &n);
    uint32_t stream = UINT32_MAX;
    size_t ti = prism_analysis_training_thread(u->a);
    if (ti == SIZE_MAX || !prism_analysis_thread_tree(u->a, ti, &stream, NULL))
        stream = UINT32_MAX;
    for (hi = n; lo < hi;) {            /* the first step starting after a */
        size_t mid = lo + (hi - lo) / 2;
        if (sv[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo ? lo - 1 : 0, last = lo;
    while (first > 0 && sv[first - 1].end > a)
        first--;
    while (last < n && sv[last].start < b)
        last++;
    if (prism_timeline_set_training(s->tl, stream, sv ? sv + first : NULL,
                                    sv ? last - first : 0) != PRISM_OK)
        prism_timeline_set_training(s->tl, UINT32_MAX, NULL, 0);
}

/* Bring the loaded window in line with the selected step. */
static void sync(ui *u, tl *s)
{
    size_t n;
    const prism_step *sv = tl_steps(u, &n);
    uint64_t a = 0, b = prism_analysis_last_ts(u->a);
    if (n && u->cmp)
        tlc_resolve(u, s);
    if (s->missing)
        return;                 /* compare: this run lacks the shared step */
    if (n) {
        if (!s->picked || s->step >= n)
            s->step = n - 1;
        a = sv[s->step].start;
        b = sv[s->step].end;
    }
    if (b <= a)
        b = a + 1;
    uint64_t h1 = u->cmp ? a + tlc_span(u, s, a, b) : b;
    bool moved = !s->loaded || a != s->w0 || b != s->w1 || h1 != s->h1;
    if (moved) {
        s->w0 = s->v0 = a;
        s->w1 = b;
        s->h1 = s->v1 = h1;
        s->cur = a;
        s->detail = false;
    }
    if (s->view_set) {          /* compare: the other side's view, from the step's start */
        s->view_set = false;
        if (s->ov0 < s->ov1 && s->ov1 <= h1 - a) {
            s->v0 = a + s->ov0;
            s->v1 = a + s->ov1;
            s->cur = a + (s->ocur >= s->ov0 && s->ocur < s->ov1 ? s->ocur : s->ov0);
        }
    }
    /* the step's lanes had to merge short spans: a zoomed view reads its
     * own window (inside the step), where they fit (a cached load reads
     * nothing) */
    uint64_t la = a, lb = b;
    if (s->detail && (s->v0 != a || s->v1 < b) && s->v0 < b) {
        la = s->v0;
        lb = s->v1 < b ? s->v1 : b;
    }
    if (!moved && !s->stale && la == s->l0 && lb == s->l1)
        return;
    set_training(u, s, la, lb);
    s->err = prism_timeline_load(s->tl, u->cmp ? cmpv_path(u->side) : u->path, la, lb);
    s->loaded = true;
    s->stale = false;
    s->l0 = la;
    s->l1 = lb;
    if (la == a && lb == b) {
        s->detail = false;
        for (size_t i = 0; i < prism_timeline_lane_count(s->tl); i++)
            s->detail |= prism_timeline_lane(s->tl, i)->merged > 0;
    }
    size_t nl = prism_timeline_lane_count(s->tl);
    if (s->lane >= nl)
        s->lane = nl ? nl - 1 : 0;
    if (s->top > s->lane)
        s->top = s->lane;
}

/* The span under the cursor on the cursor row, or NULL. */
int tl_max_rows(int h) { return h >= 40 ? 8 : h >= 18 ? 4 : 2; }

const prism_span *tl_cur_span(const tl *s)
{
    const prism_lane *l = prism_timeline_lane(s->tl, s->lane);
    int w = s->span_w > 0 ? s->span_w : 1;
    if (!l)
        return NULL;
    tlv_cell *cells = malloc((size_t)w * sizeof *cells);
    if (!cells)
        return NULL;
    tlv_row(l->spans, l->nspans, s->depth, s->v0, s->v1, w, cells);
    long c = tlv_col(s->cur, s->v0, s->v1, w);
    const prism_span *sp = NULL;
    if (c >= 0 && c < w && cells[c].span != SIZE_MAX && !tl_beyond(s, &l->spans[cells[c].span]))
        sp = &l->spans[cells[c].span];
    free(cells);
    return sp;
}

/* ---- drawing ---- */

static void draw_bars(ui *u, tl *s, const ui_rect *r, int y, int h)
{
    size_t n;
    tl_steps(u, &n);
    int w = r->w - 2;
    s->bar_y = y;
    s->bar_h = h;
    s->bar_w = w;
    if (!n || w < 1 || h < 1)
        return;
    if (!tl_model(u, s))
        return;
    const double *dur = s->dur;
    double top = s->peak;
    const bool *out = s->out;
    size_t nm = n;              /* steps mapped to columns */
    if (u->cmp)                 /* both runs on one scale */
        tlc_scale(u, s, &nm, &top);
    int bc = tlv_bar_cols(nm, w);
    for (int c = 0; c < w; c++) {
        size_t a = tlv_col_step(nm, w, c), i = a;
        size_t b = nm <= (size_t)w ? a + 1 : (size_t)(c + 1) * nm / (size_t)w;
        bool gap = nm <= (size_t)w && bc > 1 && (c + 1) % bc == 0;
        if (a >= n || gap)
            continue;
        bool o = false, sel = false;
        for (size_t k = a; k < b && k < n; k++) {
            o |= out[k];
            sel |= k == s->step && !s->missing;
            i = dur[k] > dur[i] ? k : i;        /* the bucket's largest */
        }
        double eighths = top > 0 ? dur[i] / top * h * 8 : 0;
        attr_t at = sel ? ui_attr(u, CP_SEL, A_REVERSE) : o ? ui_attr(u, CP_HIGH, A_BOLD)
                                                            : ui_attr(u, CP_BAR, A_NORMAL);
        /* an outlier's mark sits on top of its bar (on its top cell when
         * the bar fills the column), so it shows without colour too */
        int mark = -1;
        for (int row = 0; o && row < h && mark < 0; row++)
            if (eighths - (double)(h - 1 - row) * 8 >= 1)
                mark = row > 0 ? row - 1 : 0;
        for (int row = 0; row < h; row++) {
            double fill = eighths - (double)(h - 1 - row) * 8;
            const char *g = " ";
            if (row == mark)
                g = "!";
            else if (fill >= 8)
                g = u->utf8 ? "\u2588" : "#";
            else if (fill >= 1) {
                static const char *const part[] = { "", "\u2581", "\u2582", "\u2583",
                                                    "\u2584", "\u2585", "\u2586", "\u2587" };
                g = u->utf8 ? part[(int)fill] : ".";
            } else if (row == h - 1 && !u->utf8) {
                g = "_";
            }
            if (sel && !strcmp(g, " "))
                g = u->utf8 ? "\u2502" : "|";
            ui_print(r, y + row, 1 + c, at, g);
        }
    }
}

static void draw_header(ui *u, tl *s, const ui_rect *r)
{
    size_t n;
    const prism_step *sv = tl_steps(u, &n);
    /* whole parts while they fit: words go, never a figure's digits */
    char part[6][96], d[32], at[32];
    const char *pp[6] = { part[0], part[1], part[2], part[3], part[4], part[5] };
    attr_t pa[6] = { A_BOLD, A_BOLD, A_BOLD, A_BOLD, ui_attr(u, CP_HIGH, A_BOLD),
                     ui_attr(u, CP_DIM, A_NORMAL) };
    for (int i = 0; i < 6; i++)
        part[i][0] = '\0';
    if (n && s->missing) {      /* compare: the other run's step */
        snprintf(part[0], sizeof part[0], "Step %llu: not in this run",
                 (unsigned long long)s->want);
        snprintf(part[1], sizeof part[1], "(steps %llu to %llu)",
                 (unsigned long long)sv[0].index, (unsigned long long)sv[n - 1].index);
        ui_print_parts(r, 0, 1, pp, pa, 2, " ");
        return;
    }
    if (!n) {
        fmt_ns(d, sizeof d, (double)(s->w1 - s->w0));
        snprintf(part[0], sizeof part[0], "No steps in this profile:");
        snprintf(part[1], sizeof part[1], "the whole run, %s", d);
        ui_print_parts(r, 0, 1, pp, pa, 2, " ");
        return;
    }
    const prism_step *p = &sv[s->step];
    fmt_ns(d, sizeof d, step_ns(p));
    fmt_ns(at, sizeof at, (double)p->start);
    snprintf(part[0], sizeof part[0], "Step %llu", (unsigned long long)p->index);
    snprintf(part[1], sizeof part[1], "%s", d);
    snprintf(part[2], sizeof part[2], "at %s", at);
    snprintf(part[3], sizeof part[3], "(%zu of %zu)", s->step + 1, n);
    if (tl_model(u, s)) {
        size_t k = s->nout;
        if (s->out[s->step])
            snprintf(part[4], sizeof part[4], "OUTLIER");
        if (k)
            snprintf(part[5], sizeof part[5], "%zu outlier%s", k, k == 1 ? "" : "s");
    }
    ui_print_parts(r, 0, 1, pp, pa, 6, "  ");
}

static void draw_info(ui *u, tl *s, const ui_rect *r, int y)
{
    char d[32], off[32];
    if (!s->lanes || s->missing) {
        ui_print(r, y, 1, ui_attr(u, CP_DIM, A_NORMAL),
                 u->cmp ? "h/l: step of both runs  v or Enter: lanes  w: other side"
                        : "h/l: step  Home/End: first/last  v or Enter: lanes");
        return;
    }
    const prism_span *sp = tl_cur_span(s);
    if (!sp) {
        fmt_ns(off, sizeof off, (double)(s->cur - s->w0));
        ui_printf(r, y, 1, ui_attr(u, CP_DIM, A_NORMAL), "+%s  idle  (+/- zoom, 0 fit, [ ] spans)",
                  off);
        return;
    }
    fmt_ns(d, sizeof d, (double)(sp->end - sp->start));
    fmt_ns(off, sizeof off, sp->start >= s->w0 ? (double)(sp->start - s->w0) : 0);
    if (sp->merged) {
        ui_printf(r, y, 1, A_BOLD, "%u short spans merged  %s  at +%s", (unsigned)sp->merged, d,
                  off);
        return;
    }
    int x = 1 + ui_print(r, y, 1, A_BOLD, sp->name);
    x += ui_printf(r, y, x, A_NORMAL, "  %s  at %s%s%s", d, sp->start < s->w0 ? "-" : "+", off,
                   sp->open ? "  (never closed)" : sp->outside ? "  (no region holds it)" : "");
    if (sp->path_hash && prism_analysis_find(u->a, sp->path_hash) != PRISM_NO_NODE)
        ui_print(r, y, x, ui_attr(u, CP_DIM, A_NORMAL), "   Enter: Tree");
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    tl *s = st;
    ui_rect r = { y, x, h, w };
    if (!s)
        return;
    sync(u, s);
    s->pane_h = h;
    size_t n;
    tl_steps(u, &n);
    /* compare: the run's figures under the header, and both charts as
     * tall as each other (the height both halves have) */
    int ch = u->cmp ? tlc_rows(u, h) : h;
    int top = u->cmp && ch >= 6 ? 2 : 1;
    int hh = ch - (top - 1);
    int bh = !n ? 0 : hh >= 40 ? 8 : hh >= 24 ? 5 : hh >= 16 ? 3 : hh >= 10 ? 2 : 1;
    if (n && u->cmp)
        bh = hh >= 30 ? 8 : hh >= 20 ? 5 : hh >= 12 ? 3 : hh >= 8 ? 2 : 1;
    else if (n && bh < 8) {     /* rows the lanes leave free go to the chart */
        int need = 0, maxd = tl_max_rows(h);
        for (size_t i = 0; i < prism_timeline_lane_count(s->tl); i++) {
            uint32_t lr = prism_timeline_lane(s->tl, i)->rows;
            need += (int)lr < maxd ? (int)lr : maxd;
        }
        int spare = h - 2 - top - bh - need;
        bh += spare > 0 ? (spare < 8 - bh ? spare : 8 - bh) : 0;
    }
    s->gutter = w >= 160 ? 24 : w >= 100 ? 18 : w >= 60 ? 12 : 8;
    s->span_w = w - s->gutter;
    draw_header(u, s, &r);
    if (top > 1)
        tlc_stats(u, s, &r, 1);
    draw_bars(u, s, &r, top, bh);
    int ay = top + bh, ly = ay + 1, lh = h - ly - 1;
    if (s->missing) {
        s->nrows = 0;
        s->lanes_y = ly;
        s->lanes_h = 0;
        ui_print(&r, ay, 1, ui_attr(u, CP_DIM, A_NORMAL), "No lanes: this run has no such step");
    } else {
        tl_draw_axis(u, s, &r, ay);
        tl_draw_lanes(u, s, &r, ly, lh > 0 ? lh : 0);
    }
    draw_info(u, s, &r, h - 1);
}

/* Compare mode: the two runs one above the other at every width (their
 * step charts on one time scale read best stacked, and the lanes want the
 * width): more columns than any terminal has. */
static int side_cols(ui *u, void *st)
{
    (void)u;
    (void)st;
    return 1 << 20;
}

const ui_pane pane_timeline = {
    .name = "Timeline",
    .hint = "h/l step or move  v lanes  +/- zoom  0 fit  Enter: Tree",
    .init = init,
    .draw = draw,
    .reload = reload,
    .free = pane_free,
    .keys = tl_keys,
    .nkeys = TL_NKEYS,
    .mouse = tl_mouse,
    .side_cols = side_cols,
};
