/*
 * pane_flame.c - the Flame pane: an icicle graph of the call tree of all
 * threads or of one thread (`t` cycles, like the Tree), geometry in
 * flame.c, a breadcrumb of the zoom path on top and the selected frame on
 * the bottom line (whole figures while they fit).  Labels fold the start a
 * frame shares with its parent or its row ("…3.self_attn", flame_shared).
 * The rows a shallow flame leaves free list the selected frame's children
 * (a leaf: the frames beside it, it marked) by whole name with their
 * figures (flame_list_draw), so frames too narrow for a label are named.
 *
 * One row per level, as deep as the tree goes; deeper than the pane, the
 * levels around the selection show (flame_window_fit) with "N above" and
 * "+N deeper" markers.  Widths scale with the columns.  Colours and their
 * fallbacks: flame_paint.c.  The selection is the shared u->sel_hash and
 * the zoom a path hash, so both survive pane switches and reloads; when
 * another pane selects a node outside the zoomed frame, the zoom widens to
 * the nearest frame holding it.  The geometry is rebuilt only when the
 * tree, the zoom or the width change; search hits when the pattern does.
 *
 * Compare mode (u->cmp): a differential flame graph.  Each side keeps its
 * own profile's shape, every frame coloured by its path's change against
 * the other profile (flame_diff_attr; without colour a '+' / '-' before
 * the label); the bottom line shows the selected frame's change.  Zooming
 * on one side zooms the other into the same frame (or the nearest one).
 * A flame needs width, not height: side_cols asks for the columns at which
 * every frame holding 1/32 of the time has room for its label (at most 12
 * columns of it; flame_side_cols), from times only so the split does not
 * flip; most profiles ask for more than half a terminal and stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "delta.h"
#include "escape.h"
#include "flame.h"
#include "flame_paint.h"
#include "namefit.h"
#include "ui.h"

#define FLAME_DEPTH 1024        /* levels laid out; deeper ones: zoom in     */

typedef struct fl {
    int view;                   /* -1: all threads, else a thread index      */
    bool zoomed;
    uint64_t zoom_hash;
    int w;                      /* width of the last draw                    */
    int top;                    /* first layout row shown (the window)       */
    flame_window win;           /* of the last draw                          */
    flame geo;
    bool geo_ok;
    const prism_node *nodes;    /* what geo was built from                   */
    size_t count;
    uint64_t total;
    unsigned gen;               /* bumped on every rebuild                   */
    flame_hits hits;
    bool hits_ok;
    unsigned hits_gen;
    char hits_for[64];
    size_t *shared;             /* flame_shared of geo, for its labels       */
    size_t shared_cap;
    unsigned shared_gen;
    bool shared_ok;
    int list_top;               /* first entry of the list below the flame   */
    uint32_t list_owner;        /* whose frames it lists                     */
} fl;

static bool match_cb(const char *name, void *ctx)
{
    return ui_matches(ctx, name);
}

static void *init(ui *u)
{
    fl *s = calloc(1, sizeof *s);
    if (s) {
        s->view = -1;
        s->w = u->cols > 0 ? u->cols : 80;
        s->geo.zoom = PRISM_NO_NODE;
    }
    return s;
}

static void pane_free(void *st)
{
    fl *s = st;
    if (!s)
        return;
    flame_free(&s->geo);
    flame_hits_free(&s->hits);
    free(s->shared);
    free(s);
}

static void reload(ui *u, void *st)
{
    fl *s = st;
    (void)u;
    if (s) {
        s->geo_ok = s->hits_ok = false;
        flame_forget_order(&s->geo);
    }
}

/* ---- the tree shown: all threads or one ---- */

static const prism_tree *vtree(ui *u, fl *s)
{
    const prism_tree *t = NULL;
    if (s->view >= 0)                   /* one thread: with its sampled paths (not comparing) */
        t = u->cmp ? prism_analysis_thread_tree(u->a, (size_t)s->view, NULL, NULL)
                   : prism_analysis_thread_tree_sampled(u->a, (size_t)s->view);
    if (!t) {
        s->view = -1;
        /* all threads: with the sampled call paths (not when comparing) */
        t = u->cmp ? prism_analysis_tree(u->a) : prism_analysis_tree_sampled(u->a);
    }
    return t;
}

/* The shown tree holds nodes the analysis does not (sampled paths): find
 * paths in it, not through the analysis. */
static bool own_nodes(ui *u, fl *s)
{
    return s->view < 0 && !u->cmp && prism_analysis_tree_sampled(u->a) != prism_analysis_tree(u->a);
}

static uint32_t find_in(const prism_tree *t, uint64_t hash)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->nodes[i].path_hash == hash)
            return (uint32_t)i;
    return PRISM_NO_NODE;
}

/* The node of the shown tree with this path. */
static uint32_t find_exact(ui *u, fl *s, uint64_t hash)
{
    const prism_tree *t = vtree(u, s);
    return s->view < 0 && !own_nodes(u, s) ? prism_analysis_find(u->a, hash) : find_in(t, hash);
}

/* The node of the shown tree for the path: the path itself, else (one
 * thread) its nearest ancestor there, with *exact false.  All threads in
 * compare mode: cmpv_nearest, which counts as exact (it shows selected). */
static uint32_t nearest(ui *u, fl *s, uint64_t hash, bool *exact)
{
    const prism_tree *t = vtree(u, s), *all = prism_analysis_tree(u->a);
    uint32_t n = cmpv_nearest(u, hash);
    *exact = true;
    if (own_nodes(u, s)) {
        uint32_t m = find_in(t, hash);
        return m != PRISM_NO_NODE ? m : n;
    }
    if (s->view < 0)
        return n;
    uint32_t m = find_in(t, hash);
    if (m != PRISM_NO_NODE)
        return m;
    *exact = false;
    for (size_t guard = 0; n != PRISM_NO_NODE && guard <= all->count; guard++) {
        m = find_in(t, all->nodes[n].path_hash);
        if (m != PRISM_NO_NODE)
            return m;
        n = all->nodes[n].parent;
    }
    return PRISM_NO_NODE;
}

static bool is_under(const prism_tree *t, uint32_t anc, uint32_t n)
{
    for (size_t guard = 0; n != PRISM_NO_NODE && guard <= t->count; guard++, n = t->nodes[n].parent)
        if (n == anc)
            return true;
    return false;
}

/* Resolve the zoom (widening it to hold the selection) and bring the
 * geometry and the search hits up to date.  Returns the zoom node. */
static uint32_t sync(ui *u, fl *s)
{
    const prism_tree *t = vtree(u, s);
    uint32_t z = s->zoomed ? find_exact(u, s, s->zoom_hash) : PRISM_NO_NODE;
    bool exact;
    uint32_t sel = nearest(u, s, u->sel_hash, &exact);
    while (z != PRISM_NO_NODE && sel != PRISM_NO_NODE && !is_under(t, z, sel))
        z = t->nodes[z].parent;
    s->zoomed = z != PRISM_NO_NODE;
    s->zoom_hash = s->zoomed ? t->nodes[z].path_hash : 0;
    if (!s->geo_ok || s->nodes != t->nodes || s->count != t->count || s->total != t->total_ns ||
        s->geo.zoom != z || s->geo.width != s->w || s->geo.max_rows != FLAME_DEPTH) {
        s->geo_ok = flame_build(&s->geo, t, z, s->w, FLAME_DEPTH) == 0;
        s->nodes = t->nodes;
        s->count = t->count;
        s->total = t->total_ns;
        s->gen++;
        s->hits_ok = false;
    }
    if (!s->shared_ok || s->shared_gen != s->gen) {
        if (s->shared_cap < s->geo.count) {
            size_t *n = realloc(s->shared, s->geo.count * sizeof *n);
            if (n) {
                s->shared = n;
                s->shared_cap = s->geo.count;
            }
        }
        s->shared_ok = s->shared_cap >= s->geo.count && flame_shared(&s->geo, t, s->shared) == 0;
        s->shared_gen = s->gen;
    }
    if (!s->hits_ok || s->hits_gen != s->gen || strcmp(s->hits_for, u->search)) {
        s->hits_ok = flame_search(&s->geo, t, match_cb, u, &s->hits) == 0;
        s->hits_gen = s->gen;
        snprintf(s->hits_for, sizeof s->hits_for, "%s", u->search);
    }
    return z;
}

/* The cell of the selection, else of its nearest shown ancestor (*exact
 * false then). */
static size_t focus(ui *u, fl *s, bool *exact)
{
    const prism_tree *t = vtree(u, s);
    uint32_t n = nearest(u, s, u->sel_hash, exact);
    for (size_t guard = 0; n != PRISM_NO_NODE && guard <= t->count; guard++) {
        size_t c = flame_find(&s->geo, n);
        if (c != FLAME_NONE)
            return c;
        n = t->nodes[n].parent;
        *exact = false;
    }
    *exact = false;
    return FLAME_NONE;
}

/* ---- drawing ---- */

static void draw_cell(ui *u, fl *s, const ui_rect *r, size_t i, int y, bool sel, bool hit)
{
    const flame_cell *c = &s->geo.cells[i];
    const prism_node *nd = &vtree(u, s)->nodes[c->node];
    attr_t at;
    size_t parity = i + (size_t)c->row;
    char lab[512], text[1024];
    size_t o = 0;
    int room = c->w - 1;
    if (u->cmp) {
        const prism_delta *d = ui_delta(u, nd->path_hash);
        at = flame_diff_attr(u, d, sel, parity);
        int dir = dl_direction(d);
        if (!u->color && dir && room > 0) {     /* the direction as a sign */
            text[o++] = dir > 0 ? '+' : '-';
            room--;
        }
        if (hit)
            at |= A_BOLD | A_UNDERLINE;
    } else {
        at = flame_frame_attr(u, nd, parity, sel, hit);
    }
    /* the start shared with the parent or the row folds into an ellipsis;
     * under 4 columns only what follows it shows ("3…1" for "enc.3.lin1"),
     * and without a shared start the name's start */
    size_t sh = s->shared_ok ? s->shared[i] : 0;
    if (room >= 4)
        nf_fit(lab, sizeof lab, nd->name, sh, room, u->utf8);
    else if (sh && room >= 2)
        nf_fit(lab, sizeof lab, nd->name + sh, 0, room, u->utf8);
    else
        flame_label(lab, sizeof lab, nd->name, room, u->utf8);
    int x = c->x;
    if (c->w == 1) {            /* too narrow for a label: a marked block */
        ui_print(r, y, x, u->color || sel ? at : A_REVERSE, sel ? ">" : hit ? "*" : " ");
        return;
    }
    {
        /* the first column separates frames: a gap in colour, '|' without;
         * '>' marks the selection, '*' a search match */
        char sep[2] = { sel ? '>' : hit ? '*' : u->color ? ' ' : '|', '\0' };
        ui_print(r, y, x, sel || hit ? at : u->color ? A_BOLD : at, sep);
        x++;
    }
    o += (size_t)snprintf(text + o, sizeof text - o, "%s", lab);
    if (o >= sizeof text)
        o = sizeof text - 1;
    for (int pad = c->w - 1 - ui_width(text); pad > 0 && o + 1 < sizeof text; pad--)
        text[o++] = ' ';
    text[o] = '\0';
    ui_print(r, y, x, at, text);
}

/* The search, then the selected frame: its name (elided in the middle)
 * and whole figures while they fit. */
static void bottom_line(ui *u, fl *s, const ui_rect *r)
{
    const prism_tree *t = vtree(u, s);
    int row = r->h - 1, x = 1;
    char line[512], a1[96], a2[48], a3[48], a4[48], a5[64], a6[48], v[32];
    ui_fill(r, row, A_NORMAL);
    if (u->search[0]) {
        snprintf(a1, sizeof a1, "/%s:", u->search);
        snprintf(a2, sizeof a2, s->hits.nodes ? "%zu matches" : "no matches", s->hits.nodes);
        snprintf(a3, sizeof a3, s->hits.count != s->hits.nodes ? "(%zu in view)" : "", s->hits.count);
        snprintf(a4, sizeof a4, s->hits.nodes ? "%.1f%% of total" : "", 100.0 * s->hits.share);
        const char *parts[] = { a1, a2, a3, a4 };
        ui_fit_parts(line, sizeof line, parts, 4, " ", r->w - x - 1);
        x += ui_print(r, row, x, ui_attr(u, CP_TITLE, A_BOLD), line);
        x += ui_print(r, row, x, A_NORMAL, "  |  ");
    }
    bool exact;
    uint32_t n = nearest(u, s, u->sel_hash, &exact);
    const prism_delta *d = ui_delta(u, u->sel_hash);
    if (s->view >= 0 && !exact) {
        uint32_t a = prism_analysis_find(u->a, u->sel_hash);
        ui_printf(r, row, x, A_NORMAL, "%s: not run on this thread (t: next thread)",
                  a != PRISM_NO_NODE ? prism_analysis_tree(u->a)->nodes[a].name : "selection");
        return;
    }
    if (n == PRISM_NO_NODE || (s->view < 0 && !own_nodes(u, s) &&
                               prism_analysis_find(u->a, u->sel_hash) == PRISM_NO_NODE)) {
        if (d)                  /* compare: on the other side only */
            ui_printf(r, row, x, cmpv_delta_attr(u, d, A_NORMAL, false), "%s: %s",
                      d->name ? d->name : "?", cmpv_absent_text(d));
        else
            ui_print(r, row, x, A_NORMAL, "no selection");
        return;
    }
    const prism_node *nd = &t->nodes[n];
    uint64_t up = nd->parent == PRISM_NO_NODE ? t->total_ns : t->nodes[nd->parent].total_ns;
    char name[ESC_CAP(PRISM_MAX_STRING_BYTES)], fit[ESC_CAP(PRISM_MAX_STRING_BYTES)], cell[96];
    const char *nm = esc_clean(nd->name) ? nd->name : esc_str(nd->name, name, sizeof name);
    int room = r->w - x - 1;
    ui_elide_mid(fit, sizeof fit, nm, room / 2 > 16 ? room / 2 : 16, u->utf8);
    x += ui_print(r, row, x, A_BOLD, fit);
    if (d && flame_change_text(cell, sizeof cell, d) && x + 2 + ui_width(cell) < r->w) {
        x += ui_print(r, row, x, A_NORMAL, "  ");
        x += ui_print(r, row, x, cmpv_delta_attr(u, d, A_NORMAL, false), cell);
        if (d->p_value >= 0) {
            snprintf(a1, sizeof a1, " p=%.2g%s", d->p_value, d->significant ? "" : " (noise)");
            if (x + ui_width(a1) < r->w)
                x += ui_print(r, row, x, A_NORMAL, a1);
        }
    }
    fmt_ns(a1, sizeof a1, (double)nd->total_ns);
    snprintf(a2, sizeof a2, "%.1f%% of %s",
             t->total_ns ? 100.0 * (double)nd->total_ns / (double)t->total_ns : 0.0,
             s->view >= 0 ? "thread" : "total");
    snprintf(a3, sizeof a3, "%.1f%% of %s", up ? 100.0 * (double)nd->total_ns / (double)up : 0.0,
             nd->parent == PRISM_NO_NODE ? "all" : "parent");
    fmt_ns(v, sizeof v, (double)nd->self_ns);
    snprintf(a4, sizeof a4, "self %s", v);
    fmt_count(v, sizeof v, (double)nd->calls);     /* a `~` frame: samples, an estimate */
    snprintf(a5, sizeof a5, "%s %s", v,
             nd->flags & PRISM_NODE_SAMPLED ? "samples (an estimate)" : "calls");
    a6[0] = '\0';
    if (nd->cpu_known_ns)
        snprintf(a6, sizeof a6, "on CPU %.0f%%", 100.0 * (double)nd->oncpu_ns / (double)nd->cpu_known_ns);
    const char *parts[] = { a1, a2, a3, a4, a5, a6 };
    if (ui_fit_parts(line, sizeof line, parts, 6, "  ", r->w - x - 3))
        ui_print(r, row, x + 2, A_NORMAL, line);
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    fl *s = st;
    ui_rect r = { y, x, h, w };
    if (!s || h < 1 || w < 1)
        return;
    const prism_tree *t = vtree(u, s);
    s->w = w;
    uint32_t z = sync(u, s);
    flame_breadcrumb(u, &r, t, s->view, z);
    int area = h > 2 ? h - 2 : h - 1;   /* rows between breadcrumb and bottom */
    if (!t->count || !s->geo.count) {
        s->win = (flame_window){ 0 };
        ui_print(&r, 2, 2, A_NORMAL, t->count ? "No time recorded in these regions."
                                   : s->view >= 0 ? "No regions recorded on this thread (t: next)."
                                                  : "No regions recorded in this profile.");
        if (h > 2)
            bottom_line(u, s, &r);
        return;
    }
    bool exact;
    size_t f = focus(u, s, &exact);
    s->win = flame_window_fit(s->geo.rows, area, f != FLAME_NONE ? s->geo.cells[f].row : -1, s->top);
    s->top = s->win.top;
    for (size_t i = 0; i < s->geo.count; i++) {
        const flame_cell *c = &s->geo.cells[i];
        if (c->row < s->win.top)
            continue;
        if (c->row >= s->win.top + s->win.shown)
            break;
        draw_cell(u, s, &r, i, 1 + s->win.y0 + c->row - s->win.top, exact && i == f,
                  u->search[0] && ui_matches(u, t->nodes[c->node].name));
    }
    flame_markers(u, &r, &s->win);
    int used = s->win.y0 + s->win.shown + (s->win.marks && s->win.below ? 1 : 0);
    flame_list_geo g = flame_list_fit(area, used);
    flame_list l = flame_list_of(&s->geo, t, exact && f != FLAME_NONE ? s->geo.cells[f].node
                                                                     : PRISM_NO_NODE, z);
    if (l.owner != s->list_owner)       /* another list: from its start */
        s->list_top = 0;
    s->list_owner = l.owner;
    if (g.rows > 0 && l.n)              /* the frames, by whole name */
        flame_list_draw(u, &r, 1 + g.y, g.rows, &l, &s->list_top);
    if (h > 2)
        bottom_line(u, s, &r);
}

/* ---- actions ---- */

static int select_cell(ui *u, fl *s, size_t c)
{
    if (c == FLAME_NONE)
        return UI_NONE;
    ui_select(u, vtree(u, s)->nodes[s->geo.cells[c].node].path_hash);
    return UI_REDRAW;
}

static int k_move(ui *u, void *st, int key)
{
    fl *s = st;
    const prism_tree *t = vtree(u, s);
    sync(u, s);
    bool exact;
    size_t c = focus(u, s, &exact);
    if (c == FLAME_NONE)
        return select_cell(u, s, s->geo.count ? 0 : FLAME_NONE);
    if (!exact)                 /* the selection is hidden: start from here */
        return select_cell(u, s, c);
    switch (key) {
    case KEY_UP: case 'k': {
        uint32_t p = t->nodes[s->geo.cells[c].node].parent;
        if (flame_parent(&s->geo, c) == FLAME_NONE && p != PRISM_NO_NODE) {
            ui_select(u, t->nodes[p].path_hash);        /* the zoom widens */
            return UI_REDRAW;
        }
        return select_cell(u, s, flame_parent(&s->geo, c));
    }
    case KEY_DOWN: case 'j':
        return select_cell(u, s, flame_widest_child(&s->geo, c));
    case KEY_LEFT: case 'h':
        return select_cell(u, s, flame_left(&s->geo, c));
    default:
        return select_cell(u, s, flame_right(&s->geo, c));
    }
}

/* Compare mode: the other side zooms alike (into the nearest frame it has). */
static int mirror_zoom(ui *u, const fl *s)
{
    fl *o = u->cmp ? u->side_state[1 - u->side][u->pane] : NULL;
    if (!o || o == s)
        return UI_REDRAW;
    const prism_analysis *oa = u->side_a[1 - u->side];
    uint32_t z = s->zoomed ? dl_nearest(oa, u->a, s->zoom_hash) : PRISM_NO_NODE;
    o->zoomed = z != PRISM_NO_NODE;
    o->zoom_hash = o->zoomed ? prism_analysis_tree(oa)->nodes[z].path_hash : 0;
    return UI_REDRAW;
}

static int k_zoom_in(ui *u, void *st, int key)
{
    fl *s = st;
    (void)key;
    sync(u, s);
    bool exact;
    size_t c = focus(u, s, &exact);
    if (c == FLAME_NONE)
        return UI_NONE;
    const prism_node *n = &vtree(u, s)->nodes[s->geo.cells[c].node];
    s->zoomed = true;
    s->zoom_hash = n->path_hash;
    s->top = 0;
    ui_select(u, n->path_hash);
    return mirror_zoom(u, s);
}

/* Esc / Backspace: out one level; not zoomed, UI_PASS lets the frame's
 * "back" run.  Home / u: out to all frames. */
static int k_zoom_out(ui *u, void *st, int key)
{
    fl *s = st;
    const prism_tree *t = vtree(u, s);
    uint32_t z = sync(u, s);
    bool all = key == KEY_HOME || key == 'u';
    if (z == PRISM_NO_NODE) {
        if (!all)
            return UI_PASS;
        ui_message(u, "not zoomed");
        return UI_REDRAW;
    }
    uint32_t p = t->nodes[z].parent;
    if (all || p == PRISM_NO_NODE)
        s->zoomed = false;
    else
        s->zoom_hash = t->nodes[p].path_hash;
    return mirror_zoom(u, s);
}

static int k_match(ui *u, void *st, int key)
{
    fl *s = st;
    sync(u, s);
    if (!u->search[0]) {
        ui_message(u, "no search: press / first");
        return UI_REDRAW;
    }
    if (!s->hits.count) {
        ui_message(u, s->hits.nodes ? "matches only outside the view (Esc: zoom out)"
                                    : "no match");
        return UI_REDRAW;
    }
    bool exact;
    size_t c = focus(u, s, &exact);
    return select_cell(u, s, flame_hit_next(&s->hits, exact ? c : FLAME_NONE, key == 'N' ? -1 : 1));
}

/* t: all threads, thread 1, thread 2 ... (the zoom stays where the thread
 * has the path). */
static int k_thread(ui *u, void *st, int key)
{
    fl *s = st;
    (void)key;
    size_t nt = prism_analysis_thread_count(u->a);
    s->view = s->view + 1 < (int)nt ? s->view + 1 : -1;
    s->top = 0;
    char lab[192];
    if (s->view >= 0) {
        ui_thread_label(u->a, (size_t)s->view, true, lab, sizeof lab);
        ui_message(u, "flame of %s, %d of %zu", lab, s->view + 1, nt);
    } else
        ui_message(u, "flame of all threads merged");
    return UI_REDRAW;
}

/* Click: select the frame; double-click: zoom into it; wheel: parent /
 * widest child. */
static int mouse(ui *u, void *st, int event, int row, int col)
{
    fl *s = st;
    if (!s)
        return UI_NONE;
    if (event == UI_MOUSE_WHEEL_UP)
        return k_move(u, s, KEY_UP);
    if (event == UI_MOUSE_WHEEL_DOWN)
        return k_move(u, s, KEY_DOWN);
    sync(u, s);
    int lrow = row - 1 - s->win.y0;
    if (lrow < 0 || lrow >= s->win.shown)
        return UI_NONE;
    size_t c = flame_at(&s->geo, s->win.top + lrow, col);
    if (c == FLAME_NONE)
        return UI_NONE;
    int rc = select_cell(u, s, c);
    return event == UI_MOUSE_DOUBLE ? k_zoom_in(u, s, '\r') : rc;
}

/* Compare mode: the columns a side needs for its labels (see the top). */
static int side_cols(ui *u, void *st)
{
    fl *s = st;
    if (!s)
        return 0;
    sync(u, s);
    return flame_side_cols(&s->geo, vtree(u, s), s->shared_ok ? s->shared : NULL);
}

static const ui_key keys[] = {
    { KEY_UP, "Up", k_move, "parent frame" }, { 'k', "k", k_move, "parent frame" },
#define FL_DOWN "widest child frame.  The rows below the flame list the selected frame's " \
    "children (a leaf: the frames beside it, marked) by whole name with total, share and " \
    "calls; in compare mode the two flames stack, each full width"
    { KEY_DOWN, "Down", k_move, FL_DOWN }, { 'j', "j", k_move, FL_DOWN },
#define FL_LEFT "frame to the left on the same row"
#define FL_RIGHT "frame to the right on the same row"
#define FL_IN "zoom into the selected frame (it fills the width)"
#define FL_OUT "zoom out one level (not zoomed: back)"
    { KEY_LEFT, "Left", k_move, FL_LEFT }, { 'h', "h", k_move, FL_LEFT },
    { KEY_RIGHT, "Right", k_move, FL_RIGHT }, { 'l', "l", k_move, FL_RIGHT },
    { '\r', "Enter", k_zoom_in, FL_IN }, { '\n', "Enter", k_zoom_in, FL_IN },
    { KEY_ENTER, "KpEnter", k_zoom_in, FL_IN },
    { 27, "Esc", k_zoom_out, FL_OUT }, { KEY_BACKSPACE, "Bksp", k_zoom_out, FL_OUT },
    { 127, "Bksp", k_zoom_out, FL_OUT }, { 8, "Bksp", k_zoom_out, FL_OUT },
    { KEY_HOME, "Home", k_zoom_out, "zoom out to all frames" },
    { 'u', "u", k_zoom_out, "zoom out to all frames" },
    { 't', "t", k_thread, "all threads / thread 1 / thread 2 ..." },
    { 'n', "n", k_match, "next search match" }, { 'N', "N", k_match, "previous search match" },
};

const ui_pane pane_flame = {
    .name = "Flame",
    .hint = "arrows/hjkl: move  Enter: zoom  Esc: out  t: thread  /,n,N: search  click, wheel",
    .init = init,
    .draw = draw,
    .reload = reload,
    .free = pane_free,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .mouse = mouse,
    .side_cols = side_cols,
};
