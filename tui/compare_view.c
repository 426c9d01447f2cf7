/*
 * compare_view.c - `prism-top BASE NEW`: two profiles side by side (stacked
 * when the terminal is narrow).  Both sides show the same pane type with
 * their own view state; the selection is one call path shared by both, so
 * moving on one side moves the other.  Panes see the comparison through
 * u->cmp, u->side and ui_delta() to draw delta columns and the
 * differential flame graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "compare_view.h"
#include "delta.h"
#include "treeview.h"

typedef struct dindex {
    uint64_t hash;
    uint32_t i;
} dindex;

static dindex *index_of;        /* deltas sorted by path hash */
static size_t nindex;
static const char *names[2];    /* file names, base and new */

static int by_hash(const void *x, const void *y)
{
    const dindex *a = x, *b = y;
    return a->hash < b->hash ? -1 : a->hash > b->hash;
}

const prism_delta *ui_delta(const ui *u, uint64_t path_hash)
{
    if (!u->cmp || !index_of)
        return NULL;
    size_t lo = 0, hi = nindex;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (index_of[mid].hash < path_hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nindex && index_of[lo].hash == path_hash ? &u->cmp->deltas[index_of[lo].i] : NULL;
}

static void build_index(const prism_compare *c)
{
    free(index_of);
    nindex = 0;
    index_of = malloc((c->count ? c->count : 1) * sizeof *index_of);
    if (!index_of)
        return;
    for (size_t i = 0; i < c->count; i++)
        index_of[i] = (dindex){ c->deltas[i].path_hash, (uint32_t)i };
    nindex = c->count;
    pb_qsort(index_of, nindex, sizeof *index_of, by_hash);
}

/* (Re)compute the comparison for the current base/new order. */
static int recompare(ui *u)
{
    prism_compare *c = prism_compare_new(u->side_a[0], u->side_a[1]);
    if (!c)
        return -1;
    if (u->cmp)
        prism_compare_free((prism_compare *)u->cmp);
    u->cmp = c;
    build_index(c);
    return 0;
}

int cmpv_setup(ui *u, prism_analysis *base, prism_analysis *cur, const char *base_name,
               const char *cur_name)
{
    u->side_a[0] = base;
    u->side_a[1] = cur;
    names[0] = base_name;
    names[1] = cur_name;
    if (recompare(u) != 0)
        return -1;
    u->side = 1;                        /* keys go to the new profile first */
    u->a = cur;
    return 0;
}

void cmpv_teardown(ui *u)
{
    if (u->cmp)
        prism_compare_free((prism_compare *)u->cmp);
    u->cmp = NULL;
    free(index_of);
    index_of = NULL;
    nindex = 0;
}

/* Make side k current: its analysis and its pane states. */
void cmpv_use(ui *u, int k)
{
    if (u->side != k) {
        memcpy(u->side_state[u->side], u->state, sizeof u->state);
        memcpy(u->state, u->side_state[k], sizeof u->state);
    }
    u->side = k;
    u->a = u->side_a[k];
}

/* A side's title: the focused side (keys go there, `w` switches) is
 * marked and bold in reverse video; the other plain. */
static void label(ui *u, const ui_rect *r, int k, int focus_side)
{
    const char *f = strrchr(names[k], '/');
    f = f ? f + 1 : names[k];
    bool focus = k == focus_side;
    attr_t at = focus ? (A_BOLD | A_REVERSE | ui_attr(u, CP_SEL, A_REVERSE))
                      : ui_attr(u, CP_TAB, A_NORMAL);
    ui_fill(r, 0, at);
    const prism_compare *c = u->cmp;
    char run[64] = "", name[160];
    if (k == 1 && c && c->whole_run_shift)      /* the machine moved, not one region */
        snprintf(run, sizeof run, "  [whole run x%.2f: %s]", c->run_factor,
                 c->run_factor > 1 ? "slower" : "faster");
    const char *mark = !focus ? " " : u->utf8 ? "\u25b6" : ">";
    ui_print(r, 0, 0, at, mark);
    int x = 1 + ui_printf(r, 0, 1, at, " %s ", k ? "NEW " : "BASE");
    char tail[128];
    snprintf(tail, sizeof tail, "%s%s%s", u->diff_only ? "  [changed only]" : "", run,
             focus ? (u->utf8 ? "  \u25c0 keys" : "  < keys") : "");
    int room = r->w - x - ui_width(tail);
    tv_fit_mid(name, sizeof name, f, room > 8 ? room : 8, u->utf8);
    x += ui_print(r, 0, x, at, name);
    ui_print(r, 0, x, at, tail);
}

/* The width from which the sides stand side by side: twice what the pane
 * says one side needs to tell its rows apart, at least UI_SPLIT_COLS. */
static int split_cols(ui *u)
{
    const ui_pane *p = u->panes[u->pane];
    int need = 0, focus = u->side;
    for (int k = 0; p->side_cols && k < 2; k++) {
        cmpv_use(u, k);
        int n = p->side_cols(u, u->state[u->pane]);
        need = n > need ? n : need;
    }
    cmpv_use(u, focus);
    return 2 * need + 1 > UI_SPLIT_COLS ? 2 * need + 1 : UI_SPLIT_COLS;
}

void cmpv_draw(ui *u, const ui_layout *l)
{
    u->split_cols = split_cols(u);
    ui_split sp = ui_split_compute(l->body_y, l->body_h, u->cols, u->split_cols);
    int focus = u->side;
    for (int k = 0; k < 2; k++) {
        if (sp.h[k] < 2 || sp.w[k] < 1)
            continue;
        cmpv_use(u, k);
        ui_rect head = { sp.y[k], sp.x[k], 1, sp.w[k] };
        label(u, &head, k, focus);
        const ui_pane *p = u->panes[u->pane];
        p->draw(u, u->state[u->pane], sp.y[k] + 1, sp.x[k], sp.h[k] - 1, sp.w[k]);
    }
    if (!sp.stacked && sp.w[0] > 0)     /* the divider */
        mvvline(l->body_y, sp.w[0], u->utf8 ? ACS_VLINE : '|', l->body_h);
    cmpv_use(u, focus);
}

/* The status line's comparison of the selected path. */
void cmpv_status(const ui *u, char *buf, size_t n)
{
    const prism_delta *d = ui_delta(u, u->sel_hash);
    buf[0] = '\0';
    if (!d)
        return;
    char a[32], b[32], pp[32];
    fmt_ns(a, sizeof a, d->delta_ns < 0 ? -d->delta_ns : d->delta_ns);
    if (d->base_node == PRISM_NO_NODE)
        snprintf(buf, n, " | NEW region");
    else if (d->new_node == PRISM_NO_NODE)
        snprintf(buf, n, " | GONE in new");
    else {
        if (d->folded_one)
            snprintf(b, sizeof b, " folded in one run");
        else if (d->p_value >= 0)
            snprintf(b, sizeof b, " p=%.3g", d->p_value);
        else
            snprintf(b, sizeof b, " p n/a");
        dl_fmt_pp(pp, sizeof pp, d->share_delta);
        snprintf(buf, n, " | %c%s (%+.1f%%) share %s%s%s", d->delta_ns < 0 ? '-' : '+', a,
                 d->delta_pct, pp, b, d->significant ? " *" : d->raw_significant ? " ~" : "");
    }
}

/* ---- for the panes ---- */

const char *cmpv_path(int k) { return names[k ? 1 : 0]; }

uint32_t cmpv_nearest(const ui *u, uint64_t path_hash)
{
    if (!u->cmp)
        return prism_analysis_find(u->a, path_hash);
    return dl_nearest(u->a, u->side_a[1 - u->side], path_hash);
}

attr_t cmpv_delta_attr(const ui *u, const prism_delta *d, attr_t row, bool sel)
{
    int dir = dl_direction(d);
    if (!dir)
        return row;
    if (sel || !u->color)
        return row | A_BOLD;
    return ui_attr(u, dir > 0 ? CP_HIGH : CP_LOW, A_BOLD) | (dl_strong(d) ? A_BOLD : 0);
}

int cmpv_delta_cell(const ui *u, const ui_rect *r, int y, int x, int w, const prism_delta *d,
                    attr_t row, bool sel)
{
    char buf[64];
    int n = dl_format(buf, sizeof buf, d, w);
    if (!n)
        return 0;
    return ui_printf(r, y, x + w - n, cmpv_delta_attr(u, d, row, sel), "%s", buf);
}

const char *cmpv_absent_text(const prism_delta *d)
{
    return dl_kind_of(d) == DL_NEW ? "not in this profile (new in the other)"
                                   : "not in this profile (gone: in the base only)";
}

int cmpv_segments(const ui_rect *r, int y, int x, attr_t at, char seg[][160], int n)
{
    bool first = true;
    for (int i = 0; i < n; i++) {
        if (!seg[i][0])
            continue;
        int need = ui_width(seg[i]) + (first ? 0 : 2);
        if (x + need > r->w)
            break;
        x += ui_printf(r, y, x, at, "%s%s", first ? "" : "  ", seg[i]);
        first = false;
    }
    return x;
}

void cmpv_diff_line(const ui *u, const ui_rect *r, int y, bool other_row)
{
    const prism_delta *d = ui_delta(u, u->sel_hash);
    char a[32], b[32], pp[32], seg[8][160];
    int x = 7;
    ui_print(r, y, 1, ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD, "Diff");
    if (!d) {
        ui_print(r, y, x, A_NORMAL, "no comparison for this path");
        return;
    }
    if (other_row) {
        char nm[160];
        tv_fit_mid(nm, sizeof nm, d->name ? d->name : "?", r->w / 3 > 8 ? r->w / 3 : 8, u->utf8);
        x += ui_printf(r, y, x, A_BOLD, "%s: ", nm);
    }
    if (prism_analysis_find(u->a, u->sel_hash) == PRISM_NO_NODE) {
        snprintf(seg[0], sizeof seg[0], "%s", cmpv_absent_text(d));
        if (!cmpv_segments(r, y, x, cmpv_delta_attr(u, d, A_NORMAL, false), seg, 1) ||
            x + ui_width(seg[0]) > r->w) {
            snprintf(seg[0], sizeof seg[0], "not in this profile");
            cmpv_segments(r, y, x, cmpv_delta_attr(u, d, A_NORMAL, false), seg, 1);
        }
        return;
    }
    dl_format(seg[0], sizeof seg[0], d, 40);
    x = cmpv_segments(r, y, x, cmpv_delta_attr(u, d, A_NORMAL, false), seg, 1);
    dl_kind k = dl_kind_of(d);
    fmt_ns(a, sizeof a, d->base_ns);
    fmt_ns(b, sizeof b, d->new_ns);
    int ns = 0;
    if (k == DL_NEW) {
        snprintf(seg[ns++], sizeof seg[0], "not in the base profile; new %s", b);
    } else if (k == DL_GONE) {
        snprintf(seg[ns++], sizeof seg[0], "not in the new profile; base %s", a);
    } else {                            /* the verdict before what a narrow side leaves out */
        const char *verdict = d->significant       ? "significant"
                              : d->raw_significant ? "waited for a CPU: own time within noise"
                                                   : "within noise";
        if (d->folded_one)
            snprintf(seg[ns++], sizeof seg[0], "folded into its parent in one run: not compared");
        else if (d->p_value >= 0)
            snprintf(seg[ns++], sizeof seg[0], "p=%.3g %s", d->p_value, verdict);
        else
            snprintf(seg[ns++], sizeof seg[0], "p n/a %s", verdict);
        snprintf(seg[ns++], sizeof seg[0], "base %s", a);
        snprintf(seg[ns++], sizeof seg[0], "new %s", b);
        snprintf(seg[ns++], sizeof seg[0], "x%.2f", d->speedup);
        if (d->base_median_ns > 0 && d->new_median_ns > 0 && !d->folded_one)
            snprintf(seg[ns++], sizeof seg[0], "per step %+.1f%%%s", d->median_pct,
                     u->cmp && u->cmp->whole_run_shift ? " vs run" : "");
        if (d->hook_ns != 0) {
            char h[32];
            fmt_ns(h, sizeof h, d->hook_ns < 0 ? -d->hook_ns : d->hook_ns);
            snprintf(seg[ns++], sizeof seg[0], "less PRISM's hooks of one run (%s %s/step)",
                     d->hook_ns > 0 ? "new" : "base", h);
        }
        if (d->own)
            snprintf(seg[ns++], sizeof seg[0], "own time %+.1f%%", d->own_pct);
        dl_fmt_pp(pp, sizeof pp, d->share_delta);
        snprintf(seg[ns++], sizeof seg[0], "share %.1f%% %s", 100.0 * d->new_share, pp);
    }
    cmpv_segments(r, y, x + 2, A_NORMAL, seg, ns);
}

/* A region under `d` whose own regression explains (almost) all of d's:
 * a wrapper ("step") grows exactly as much as the child that got slower. */
static const prism_delta *explaining_child(const prism_compare *c, const prism_delta *d)
{
    size_t n = strlen(d->path);
    for (size_t i = 0; i < c->count; i++) {
        const prism_delta *e = &c->deltas[i];
        dl_kind k = dl_kind_of(e);
        if ((k == DL_SLOWER || k == DL_NEW) && e != d && !strncmp(e->path, d->path, n) &&
            e->path[n] == '/' && e->delta_ns >= 0.9 * d->delta_ns)
            return e;
    }
    return NULL;
}

const prism_delta *cmpv_largest_regression(const prism_compare *c)
{
    const prism_delta *any = NULL;
    for (size_t i = 0; c && i < c->count; i++) {        /* largest first */
        const prism_delta *d = &c->deltas[i];
        dl_kind k = dl_kind_of(d);
        if (k == DL_SLOWER || k == DL_NEW) {
            for (const prism_delta *e; (e = explaining_child(c, d));)
                d = e;                  /* the most specific region to blame */
            return d;
        }
        if (!any && d->delta_ns > 0 && d->new_node != PRISM_NO_NODE)
            any = d;
    }
    return any;
}

/* ---- keys of compare mode ---- */

static int k_swap(ui *u, void *st, int key)
{
    (void)st; (void)key;
    int focus = u->side;
    cmpv_use(u, 0);
    void *tmp[UI_NPANES];
    memcpy(tmp, u->state, sizeof tmp);                  /* side 0's states */
    memcpy(u->state, u->side_state[1], sizeof u->state);
    memcpy(u->side_state[1], tmp, sizeof tmp);
    prism_analysis *a = u->side_a[0];
    u->side_a[0] = u->side_a[1];
    u->side_a[1] = a;
    const char *nm = names[0];
    names[0] = names[1];
    names[1] = nm;
    u->path = names[1];                                 /* the status line's file */
    u->a = u->side_a[0];
    if (recompare(u) != 0)
        ui_message(u, "out of memory");
    cmpv_use(u, 1 - focus);
    for (int k = 0; k < 2; k++) {                       /* deltas changed sign */
        cmpv_use(u, k);
        for (int i = 0; i < UI_NPANES; i++)
            if (u->panes[i]->reload)
                u->panes[i]->reload(u, u->state[i]);
    }
    cmpv_use(u, 1 - focus);
    ui_message(u, "swapped: base is now %s", names[0]);
    return UI_REDRAW;
}

static int k_focus(ui *u, void *st, int key)
{
    (void)st; (void)key;
    cmpv_use(u, 1 - u->side);
    return UI_REDRAW;
}

static int k_diff_only(ui *u, void *st, int key)
{
    (void)st; (void)key;
    u->diff_only = !u->diff_only;
    ui_message(u, u->diff_only ? "showing changed regions only" : "showing all regions");
    for (int k = 0, focus = u->side; k < 2; k++) {
        cmpv_use(u, k);
        for (int i = 0; i < UI_NPANES; i++)
            if (u->panes[i]->reload)
                u->panes[i]->reload(u, u->state[i]);
        if (k == 1)
            cmpv_use(u, focus);
    }
    return UI_REDRAW;
}

static int k_regression(ui *u, void *st, int key)
{
    (void)st; (void)key;
    const prism_delta *best = cmpv_largest_regression(u->cmp);
    if (!best) {
        ui_message(u, "no region got slower");
        return UI_REDRAW;
    }
    if (u->pane != PANE_TREE && u->pane != PANE_FLAME)
        ui_jump(u, PANE_TREE, best->path_hash);
    else
        ui_select(u, best->path_hash);
    ui_message(u, "largest regression: %s", best->path);
    return UI_REDRAW;
}

const ui_key cmpv_keys[] = {
    { 'x', "x", k_swap, "compare: swap base and new" },
    { 'w', "w", k_focus, "compare: keys to the other side" },
    { 'D', "D", k_diff_only, "compare: show changed regions only (toggle)" },
    { 'R', "R", k_regression, "compare: jump to the largest regression" },
};
const size_t cmpv_nkeys = sizeof cmpv_keys / sizeof cmpv_keys[0];
