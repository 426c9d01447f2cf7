/*
 * timeline_keys.c - the Timeline pane's keys and mouse: the step chart
 * (h/l, H/L, Home/End select a step) and the lanes (h/l move the cursor and
 * pan at the edges, +/- zoom around it, 0 fits the step, j/k the row, [ / ]
 * the previous / next span, Enter the span's call path in the Tree).
 * Compare mode: each key that moves the step, the focus or the view moves
 * the other side alike (shared(), timeline_compare.c).
 */
#include <stdlib.h>

#include "timeline_pane.h"

/* ---- keys ---- */

/* Compare mode: what a key did on this side, the other side takes too
 * (timeline_compare.c); view: the lanes' view and cursor as well. */
static int shared(ui *u, tl *s, bool view)
{
    if (u->cmp)
        tlc_share(u, s, view);
    return UI_REDRAW;
}

static size_t nsteps(const ui *u)
{
    size_t n;
    tl_steps(u, &n);
    return n;
}

static int k_focus(ui *u, void *st, int key)
{
    tl *s = st;
    if (!s)
        return UI_NONE;
    if (key == 27 && !s->lanes)
        return UI_PASS;         /* Esc on the chart: the frame goes back */
    s->lanes = key == 27 ? false : !s->lanes;
    return shared(u, s, false);
}

/* Move the cursor by `cols` columns; the view follows at its edges. */
static void move_cursor(tl *s, int cols)
{
    int w = s->span_w > 0 ? s->span_w : 1;
    long c = tlv_col(s->cur, s->v0, s->v1, w) + cols;
    if (c < 0 || c >= w) {
        tlv_pan(&s->v0, &s->v1, c < 0 ? (int)c : (int)(c - w + 1), w, s->w0, s->h1);
        c = c < 0 ? 0 : w - 1;
    }
    s->cur = tlv_time((int)c, s->v0, s->v1, w);
}

static int k_side(ui *u, void *st, int key)
{
    tl *s = st;
    if (!s)
        return UI_NONE;
    int dir = key == KEY_LEFT || key == 'h' || key == 'H' ? -1 : 1;
    bool big = key == 'H' || key == 'L';
    if (!s->lanes) {
        size_t n = nsteps(u);
        if (!n)
            return UI_NONE;
        size_t by = big ? 10 : 1;
        if (s->missing) {       /* compare: this run lacks the shared step */
            if (!tlc_step_near(u, s, dir))
                return UI_NONE;
            by -= 1;
        }
        s->step = dir < 0 ? (s->step >= by ? s->step - by : 0)
                          : (s->step + by < n ? s->step + by : n - 1);
        s->picked = true;
        return shared(u, s, false);
    }
    int w = s->span_w > 0 ? s->span_w : 1;
    move_cursor(s, big ? dir * (w / 2 > 1 ? w / 2 : 1) : dir);
    return shared(u, s, true);
}

static int k_ends(ui *u, void *st, int key)
{
    tl *s = st;
    if (!s)
        return UI_NONE;
    bool first = key == KEY_HOME || key == 'g';
    if (!s->lanes) {
        size_t n = nsteps(u);
        if (n) {
            s->step = first ? 0 : n - 1;
            s->picked = true;
            s->missing = false;
        }
        return shared(u, s, false);
    }
    uint64_t wd = s->v1 - s->v0;
    s->v0 = first ? s->w0 : s->h1 - wd;
    s->v1 = s->v0 + wd;
    s->cur = first ? s->v0 : tlv_time((s->span_w > 0 ? s->span_w : 1) - 1, s->v0, s->v1,
                                      s->span_w > 0 ? s->span_w : 1);
    return shared(u, s, true);
}

static int k_rows(ui *u, void *st, int key)
{
    tl *s = st;
    (void)u;
    if (!s || !s->lanes)
        return UI_PASS;
    size_t nl = prism_timeline_lane_count(s->tl);
    int maxd = tl_max_rows(s->pane_h);
    const prism_lane *l = prism_timeline_lane(s->tl, s->lane);
    if (!l)
        return UI_NONE;
    uint32_t lr = l->rows < (uint32_t)maxd ? l->rows : (uint32_t)maxd;
    if (key == 'j' || key == KEY_DOWN) {
        if (s->depth + 1 < lr)
            s->depth++;
        else if (s->lane + 1 < nl) {
            s->lane++;
            s->depth = 0;
        }
    } else if (s->depth > 0) {
        s->depth--;
    } else if (s->lane > 0) {
        s->lane--;
        l = prism_timeline_lane(s->tl, s->lane);
        lr = l->rows < (uint32_t)maxd ? l->rows : (uint32_t)maxd;
        s->depth = lr ? lr - 1 : 0;
        if (s->top > s->lane)
            s->top = s->lane;
    }
    return UI_REDRAW;
}

/* The cursor on span p of lane l (at its depth): the view moved to show
 * its start when it is out of sight, the cursor in the first cell that
 * shows it (its first cell may show a longer neighbour), at its start when
 * that lies in the cell, so that zooming around the cursor keeps it. */
static void cursor_on(tl *s, const prism_lane *l, const prism_span *p)
{
    int w = s->span_w > 0 ? s->span_w : 1;
    uint64_t t = p->start > s->w0 ? p->start : s->w0, wd = s->v1 - s->v0;
    if (t < s->v0 || t >= s->v1) {
        s->v0 = t - s->w0 > wd / 2 ? t - wd / 2 : s->w0;
        if (s->v0 + wd > s->h1)
            s->v0 = s->h1 - wd;
        s->v1 = s->v0 + wd;
    }
    long c = tlv_col(t, s->v0, s->v1, w);
    c = c < 0 ? 0 : c >= w ? w - 1 : c;
    tlv_cell *cells = malloc((size_t)w * sizeof *cells);
    if (cells) {
        tlv_row(l->spans, l->nspans, s->depth, s->v0, s->v1, w, cells);
        for (long k = c; k < w && k < c + 4; k++)
            if (cells[k].span == (size_t)(p - l->spans)) {
                c = k;
                break;
            }
        free(cells);
    }
    uint64_t at = tlv_time((int)c, s->v0, s->v1, w);
    s->cur = t > at && tlv_col(t, s->v0, s->v1, w) == c ? t : at;
}

static int k_zoom(ui *u, void *st, int key)
{
    tl *s = st;
    (void)u;
    if (!s)
        return UI_NONE;
    /* the span under the cursor stays under it */
    const prism_lane *l = s->lanes ? prism_timeline_lane(s->tl, s->lane) : NULL;
    const prism_span *keep = l ? tl_cur_span(s) : NULL;
    s->lanes = true;
    if (key == '0') {
        s->v0 = s->w0;
        s->v1 = s->h1;
    } else {
        bool in = key == '+' || key == '=' || key == 'z';
        uint64_t least = s->span_w > 100 ? (uint64_t)s->span_w : 100;   /* >= 1 ns a column */
        tlv_zoom(&s->v0, &s->v1, s->cur, in ? 0.5 : 2.0, s->w0, s->h1, least);
    }
    if (s->cur < s->v0 || s->cur >= s->v1)
        s->cur = s->v0 + (s->v1 - s->v0) / 2;
    if (keep && tl_cur_span(s) != keep && keep->start < s->v1 && keep->end > s->v0)
        cursor_on(s, l, keep);
    return shared(u, s, true);
}

/* [ / ]: the cursor to the start of the previous / next span on its row. */
static int k_hop(ui *u, void *st, int key)
{
    tl *s = st;
    (void)u;
    const prism_lane *l = s && s->lanes ? prism_timeline_lane(s->tl, s->lane) : NULL;
    if (!l)
        return UI_NONE;
    /* by column, so that spans narrower than a cell never hold the cursor */
    int w = s->span_w > 0 ? s->span_w : 1;
    long cc = tlv_col(s->cur, s->v0, s->v1, w);
    const prism_span *best = NULL;
    for (size_t i = 0; i < l->nspans; i++) {
        const prism_span *p = &l->spans[i];
        if (p->depth != s->depth)
            continue;
        long pc = tlv_col(p->start, s->v0, s->v1, w);
        if (key == ']' && pc > cc && (!best || p->start < best->start))
            best = p;
        if (key == '[' && pc < cc && (!best || p->start > best->start))
            best = p;
    }
    if (!best)
        return UI_NONE;
    cursor_on(s, l, best);
    return shared(u, s, true);
}

/* s / S: the next / previous slow step (the slow_steps finding's,
 * prism_analysis_slow_steps), on the chart and in the lanes. */
static int k_slow(ui *u, void *st, int key)
{
    tl *s = st;
    const uint64_t *ix;
    size_t nslow, n;
    if (!s)
        return UI_NONE;
    prism_analysis_slow_steps(u->a, &ix, &nslow);
    const prism_step *sv = tl_steps(u, &n);
    if (!nslow || !n) {
        ui_message(u, "no slow steps (the slow_steps finding names none)");
        return UI_REDRAW;
    }
    uint64_t at = s->step < n ? sv[s->step].index : 0;
    bool next = key == 's';
    size_t pick = SIZE_MAX;
    for (size_t i = 0; i < nslow; i++)
        if (next ? ix[i] > at && pick == SIZE_MAX : ix[i] < at)
            pick = i;
    if (pick == SIZE_MAX || !tl_select_step(u, s, ix[pick])) {
        ui_message(u, next ? "no later slow step" : "no earlier slow step");
        return UI_REDRAW;
    }
    ui_message(u, "slow step %llu (%zu of %zu)", (unsigned long long)ix[pick], pick + 1, nslow);
    s->missing = false;
    return shared(u, s, false);
}

static int k_enter(ui *u, void *st, int key)
{
    tl *s = st;
    (void)key;
    if (!s)
        return UI_NONE;
    if (!s->lanes) {
        s->lanes = true;
        return shared(u, s, false);
    }
    const prism_span *sp = tl_cur_span(s);
    if (sp && sp->path_hash && prism_analysis_find(u->a, sp->path_hash) != PRISM_NO_NODE) {
        ui_jump(u, PANE_TREE, sp->path_hash);
        return UI_REDRAW;
    }
    ui_message(u, sp ? "no call path for this span" : "no span under the cursor");
    return UI_REDRAW;
}

#define K_LEFT "chart: previous step; lanes: cursor left (compare: both runs, the same step number)"
#define K_RIGHT "chart: next step; lanes: cursor right"
#define K_FIRST "chart: first step; lanes: start of the step"
#define K_LAST "chart: last step; lanes: end of the step"
#define K_ENTER "chart: to the lanes; lanes: the span's call path in the Tree"
const ui_key tl_keys[TL_NKEYS] = {
    { 'v', "v", k_focus, "focus: step chart / lanes" },
    { 27, "Esc", k_focus, "lanes: back to the step chart" },
    { KEY_LEFT, "Left", k_side, K_LEFT }, { 'h', "h", k_side, K_LEFT },
    { KEY_RIGHT, "Right", k_side, K_RIGHT }, { 'l', "l", k_side, K_RIGHT },
    { 'H', "H", k_side, "chart: 10 steps back; lanes: half a screen left" },
    { 'L', "L", k_side, "chart: 10 steps on; lanes: half a screen right" },
    { KEY_HOME, "Home", k_ends, K_FIRST }, { 'g', "g", k_ends, K_FIRST },
    { KEY_END, "End", k_ends, K_LAST }, { 'G', "G", k_ends, K_LAST },
    { 'j', "j", k_rows, "lanes: next row" }, { KEY_DOWN, "Down", k_rows, "lanes: next row" },
    { 'k', "k", k_rows, "lanes: previous row" }, { KEY_UP, "Up", k_rows, "lanes: previous row" },
    { '+', "+", k_zoom, "zoom in around the cursor" }, { '=', "=", k_zoom, "zoom in around the cursor" },
    { 'z', "z", k_zoom, "zoom in around the cursor" },
    { '-', "-", k_zoom, "zoom out" }, { 'Z', "Z", k_zoom, "zoom out" },
    { '0', "0", k_zoom, "fit the step (compare: the longer run's step; view and cursor shared as times from the step's start)" },
    { 's', "s", k_slow, "the next slow step (the slow_steps finding's)" },
    { 'S', "S", k_slow, "the previous slow step" },
    { '[', "[", k_hop, "lanes: the previous span on the row" },
    { ']', "]", k_hop, "lanes: the next span on the row" },
    { '\r', "Enter", k_enter, K_ENTER }, { '\n', "Enter", k_enter, K_ENTER },
    { KEY_ENTER, "Enter", k_enter, K_ENTER },
};
_Static_assert(sizeof tl_keys / sizeof tl_keys[0] == TL_NKEYS, "TL_NKEYS");

/* Click: a bar selects its step, a span moves the cursor onto it (a double
 * click also shows it in the Tree); the wheel zooms the lanes or steps the
 * chart. */
int tl_mouse(ui *u, void *st, int event, int row, int col)
{
    tl *s = st;
    if (!s)
        return UI_NONE;
    bool wheel = event == UI_MOUSE_WHEEL_UP || event == UI_MOUSE_WHEEL_DOWN;
    if (row >= s->bar_y && row < s->bar_y + s->bar_h && col >= 1 && col - 1 < s->bar_w) {
        size_t n = nsteps(u);
        if (wheel)
            return k_side(u, s, event == UI_MOUSE_WHEEL_UP ? 'h' : 'l');
        if (!tl_model(u, s))
            return UI_NONE;
        size_t nm = n;          /* compare: the columns map the longer series */
        double top;
        if (u->cmp)
            tlc_scale(u, s, &nm, &top);
        size_t i = nm == n ? tlv_col_peak(s->dur, n, s->bar_w, col - 1)
                           : tlv_col_step(nm, s->bar_w, col - 1);
        if (i == SIZE_MAX || i >= n)
            return UI_NONE;
        s->step = i;
        s->picked = true;
        s->missing = false;
        s->lanes = false;
        return shared(u, s, false);
    }
    int lr = row - s->lanes_y, c = col - s->gutter;
    if (lr < 0 || lr >= s->nrows || s->span_w < 1)
        return UI_NONE;
    if (s->missing)
        return UI_NONE;
    if (c >= 0 && c < s->span_w)
        s->cur = tlv_time(c, s->v0, s->v1, s->span_w);
    if (wheel) {
        s->lanes = true;
        return k_zoom(u, s, event == UI_MOUSE_WHEEL_UP ? '+' : '-');
    }
    s->lane = (size_t)s->row_lane[lr];
    s->depth = (uint32_t)s->row_depth[lr];
    s->lanes = true;
    return event == UI_MOUSE_DOUBLE ? k_enter(u, s, '\r') : shared(u, s, true);
}

