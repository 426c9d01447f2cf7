/*
 * timeline_compare.c - the Timeline pane in compare mode (prism-top BASE
 * NEW).  The frame draws each run in its own half, one above the other at
 * every width (the pane asks for it: side_cols); each half shows its run's step chart and the
 * lanes of the selected step, as the pane does for one profile, with:
 *
 *   - one step for both runs: the step of the same prism_step.index (the
 *     step number), chosen on either side; a run without that step says
 *     so in its half (h/l there go to its nearest step);
 *   - one scale: both charts map steps to columns alike (the longer
 *     series) and share the tallest bar, so the slower run's bars stand
 *     taller; the lanes of both span the longer of the two steps, so the
 *     slower step's spans are longer and the faster one ends early;
 *   - the focus (chart or lanes), the lanes' view (zoom, pan) and cursor
 *     shared as times from the step's start; the row cursor is each
 *     side's own (the threads differ), `w` gives the keys to the other;
 *   - a line of figures: which run, the mean and p50 step time, and on
 *     the new side the p50's and this step's change against the base.
 */
#include <stdio.h>

#include "compare_view.h"
#include "timeline_pane.h"

static const prism_analysis *other_a(const ui *u) { return u->side_a[1 - u->side]; }

static tl *other_state(const ui *u, const tl *s)
{
    tl *o = u->cmp ? u->side_state[1 - u->side][PANE_TIMELINE] : NULL;
    return o == s ? NULL : o;
}

static const prism_step *series_of(const prism_analysis *a, size_t *n)
{
    const prism_step_stats *ss = a ? prism_analysis_steps(a) : NULL;
    *n = ss ? ss->nseries : 0;
    return ss ? ss->series : NULL;
}

static size_t find_index(const prism_step *sv, size_t n, uint64_t index)
{
    for (size_t i = 0; i < n; i++)
        if (sv[i].index == index)
            return i;
    return SIZE_MAX;
}

void tlc_resolve(const ui *u, tl *s)
{
    size_t n, on;
    const prism_step *sv = tl_steps(u, &n);
    const prism_step *ov = series_of(other_a(u), &on);
    if (!n)
        return;
    if (!s->want_set) {         /* the last step both have, else this run's last */
        s->want = sv[n - 1].index;
        if (on && ov[on - 1].index < s->want && find_index(sv, n, ov[on - 1].index) != SIZE_MAX)
            s->want = ov[on - 1].index;
        s->want_set = true;
    }
    size_t i = find_index(sv, n, s->want);
    s->missing = i == SIZE_MAX;
    s->picked = true;
    if (!s->missing)
        s->step = i;
    else if (s->step >= n)
        s->step = n - 1;
}

uint64_t tlc_span(const ui *u, const tl *s, uint64_t a, uint64_t b)
{
    size_t on;
    const prism_step *ov = series_of(other_a(u), &on);
    size_t i = s->want_set ? find_index(ov, on, s->want) : SIZE_MAX;
    uint64_t w = b - a;
    if (i != SIZE_MAX && ov[i].end > ov[i].start && ov[i].end - ov[i].start > w)
        w = ov[i].end - ov[i].start;
    return w;
}

void tlc_share(const ui *u, tl *s, bool view)
{
    size_t n;
    const prism_step *sv = tl_steps(u, &n);
    if (!u->cmp)
        return;
    if (!s->missing && s->step < n) {
        s->want = sv[s->step].index;
        s->want_set = true;
    }
    tl *o = other_state(u, s);
    if (!o)
        return;
    o->want = s->want;
    o->want_set = s->want_set;
    o->lanes = s->lanes;
    o->view_set = view && !s->missing && s->loaded && s->v0 >= s->w0 && s->cur >= s->w0;
    if (o->view_set) {
        o->ov0 = s->v0 - s->w0;
        o->ov1 = s->v1 - s->w0;
        o->ocur = s->cur - s->w0;
    }
}

bool tlc_step_near(const ui *u, tl *s, int dir)
{
    size_t n, pick = SIZE_MAX;
    const prism_step *sv = tl_steps(u, &n);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = sv[i].index;
        if (dir < 0 && x < s->want && (pick == SIZE_MAX || x > sv[pick].index))
            pick = i;
        if (dir > 0 && x > s->want && (pick == SIZE_MAX || x < sv[pick].index))
            pick = i;
    }
    if (pick == SIZE_MAX)
        return false;
    s->step = pick;
    s->missing = false;
    return true;
}

void tlc_scale(const ui *u, const tl *s, size_t *nmap, double *top)
{
    size_t on;
    const prism_step *ov = series_of(other_a(u), &on);
    *nmap = s->mn > on ? s->mn : on;
    *top = s->peak;
    for (size_t i = 0; i < on; i++)
        if (ov[i].end > ov[i].start && (double)(ov[i].end - ov[i].start) > *top)
            *top = (double)(ov[i].end - ov[i].start);
}

void tlc_stats(ui *u, const tl *s, const ui_rect *r, int y)
{
    const prism_step_stats *me = prism_analysis_steps(u->a);
    const prism_step_stats *base = prism_analysis_steps(u->side_a[0]);
    char seg[5][160], a[32], b[32];
    int ns = 0;
    bool is_new = u->side == 1;
    if (!me || !me->timed) {
        ui_print(r, y, 1, ui_attr(u, CP_DIM, A_NORMAL), is_new ? "new: no steps" : "base: no steps");
        return;
    }
    fmt_ns(a, sizeof a, me->mean_ns);
    fmt_ns(b, sizeof b, me->p50_ns);
    snprintf(seg[ns++], sizeof seg[0], "mean %s", a);
    snprintf(seg[ns++], sizeof seg[0], "p50 %s", b);
    if (is_new && base && base->timed && base->p50_ns > 0)
        snprintf(seg[ns++], sizeof seg[0], "p50 %+.1f%% vs base",
                 100.0 * (me->p50_ns - base->p50_ns) / base->p50_ns);
    /* this step against the base's step of the same number */
    size_t n, bn;
    const prism_step *sv = tl_steps(u, &n);
    const prism_step *bv = series_of(u->side_a[0], &bn);
    size_t bi = is_new && !s->missing && s->step < n ? find_index(bv, bn, sv[s->step].index)
                                                      : SIZE_MAX;
    if (bi != SIZE_MAX) {
        double d = (double)(sv[s->step].end - sv[s->step].start) -
                   (double)(bv[bi].end - bv[bi].start);
        fmt_ns(a, sizeof a, d < 0 ? -d : d);
        snprintf(seg[ns++], sizeof seg[0], "this step %c%s", d < 0 ? '-' : '+', a);
    }
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    int x = 1 + ui_print(r, y, 1, lab, is_new ? "new: " : "base:");
    cmpv_segments(r, y, x + 1, A_NORMAL, seg, ns);
}

int tlc_rows(const ui *u, int h)
{
    ui_layout l = ui_layout_compute(u->rows, u->cols);
    ui_split sp = ui_split_compute(l.body_y, l.body_h, u->cols, u->split_cols);
    int least = (sp.h[0] < sp.h[1] ? sp.h[0] : sp.h[1]) - 1;  /* less the title row */
    return least > 0 && least < h ? least : h;
}
