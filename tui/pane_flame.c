/*
 * pane_flame.c - the Flame pane: an icicle graph of the all-threads call
 * tree (geometry in flame.c), a breadcrumb of the zoom path on top and the
 * selected frame on the bottom line.
 *
 * The selection is the shared u->sel_hash and the zoom is kept as a path
 * hash, so both survive pane switches and reloads.  When another pane
 * selects a node outside the zoomed frame, the zoom widens to the nearest
 * frame holding it.  The geometry is rebuilt only when the tree, the zoom
 * or the size change; search hits when the pattern changes too.
 *
 * Compare mode (u->cmp): a differential flame graph.  Each side keeps its
 * own profile's shape, and every frame is coloured by its path's change
 * against the other profile: slower (or new) red, faster (or gone) green,
 * within the noise neutral, bold beyond DL_STRONG_PCT; without colour a
 * '+' / '-' before the label.  The bottom line shows the selected frame's
 * delta; a selected path this side lacks shows as its nearest ancestor.
 * Zooming on one side zooms the other into the same frame (or the nearest
 * one it has).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "delta.h"
#include "flame.h"
#include "ui.h"

typedef struct fl {
    bool zoomed;
    uint64_t zoom_hash;
    int w, rows;                /* flame area of the last draw               */
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
} fl;

static bool match_cb(const char *name, void *ctx)
{
    return ui_matches(ctx, name);
}

static void *init(ui *u)
{
    fl *s = calloc(1, sizeof *s);
    if (s) {
        s->w = u->cols > 0 ? u->cols : 80;
        s->rows = u->rows > 4 ? u->rows - 4 : 1;
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
    const prism_tree *t = prism_analysis_tree(u->a);
    uint32_t z = s->zoomed ? prism_analysis_find(u->a, s->zoom_hash) : PRISM_NO_NODE;
    uint32_t sel = cmpv_nearest(u, u->sel_hash);
    while (z != PRISM_NO_NODE && sel != PRISM_NO_NODE && !is_under(t, z, sel))
        z = t->nodes[z].parent;
    s->zoomed = z != PRISM_NO_NODE;
    s->zoom_hash = s->zoomed ? t->nodes[z].path_hash : 0;
    if (!s->geo_ok || s->nodes != t->nodes || s->count != t->count || s->total != t->total_ns ||
        s->geo.zoom != z || s->geo.width != s->w || s->geo.max_rows != s->rows) {
        s->geo_ok = flame_build(&s->geo, t, z, s->w, s->rows) == 0;
        s->nodes = t->nodes;
        s->count = t->count;
        s->total = t->total_ns;
        s->gen++;
        s->hits_ok = false;
    }
    if (!s->hits_ok || s->hits_gen != s->gen || strcmp(s->hits_for, u->search)) {
        s->hits_ok = flame_search(&s->geo, t, match_cb, u, &s->hits) == 0;
        s->hits_gen = s->gen;
        snprintf(s->hits_for, sizeof s->hits_for, "%s", u->search);
    }
    return z;
}

/* The cell of the selection, else of its nearest shown ancestor.  In
 * compare mode a path this side lacks starts from its nearest ancestor
 * here, which then counts as exact (it shows selected). */
static size_t focus(ui *u, fl *s, bool *exact)
{
    const prism_tree *t = prism_analysis_tree(u->a);
    uint32_t n = cmpv_nearest(u, u->sel_hash);
    *exact = true;
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

static void breadcrumb(ui *u, const ui_rect *r, uint32_t z)
{
    const prism_tree *t = prism_analysis_tree(u->a);
    const char *parts[64];
    int k = 0;
    for (uint32_t q = z; q != PRISM_NO_NODE && k < 64; q = t->nodes[q].parent)
        parts[k++] = t->nodes[q].name;
    char tot[32], tail[64];
    uint64_t ns = z == PRISM_NO_NODE ? t->total_ns : t->nodes[z].total_ns;
    fmt_ns(tot, sizeof tot, (double)ns);
    snprintf(tail, sizeof tail, "  [%s, %.1f%%]", tot,
             t->total_ns ? 100.0 * (double)ns / (double)t->total_ns : 0.0);
    /* drop leading parts until it fits */
    for (int skip = 0; skip <= k; skip++) {
        char line[512];
        size_t o = (size_t)snprintf(line, sizeof line, "%s", skip ? (u->utf8 ? "\u2026" : "...") : "all");
        for (int i = k - 1 - (skip ? skip - 1 : 0); i >= 0 && o < sizeof line; i--)
            o += (size_t)snprintf(line + o, sizeof line - o, " > %s", parts[i]);
        if (ui_width(line) + ui_width(tail) + 1 <= r->w || skip == k) {
            int x = ui_print(r, 0, 1, ui_attr(u, CP_TITLE, A_BOLD), line);
            ui_print(r, 0, 1 + x, A_NORMAL, tail);
            return;
        }
    }
}

/* Compare mode: the frame's colour by its change (see the top). */
static attr_t diff_attr(const ui *u, const prism_delta *d, bool sel, size_t parity)
{
    int dir = dl_direction(d);
    attr_t bold = dl_strong(d) ? A_BOLD : 0;
    if (!u->color)
        return (sel ? A_REVERSE : parity % 2 ? A_NORMAL : A_REVERSE) | (dir ? A_BOLD : 0);
    if (sel)
        return COLOR_PAIR(CP_SEL) | A_BOLD;
    return dir > 0 ? COLOR_PAIR(CP_HOT) | bold : dir < 0 ? COLOR_PAIR(CP_COOL) | bold : A_REVERSE;
}

static void draw_cell(ui *u, fl *s, const ui_rect *r, size_t i, bool sel, bool hit)
{
    static const int pairs[] = { CP_HOT, CP_WARM, CP_COOL };
    const flame_cell *c = &s->geo.cells[i];
    const prism_node *nd = &prism_analysis_tree(u->a)->nodes[c->node];
    const char *name = nd->name;
    char marked[512];
    attr_t at;
    if (u->cmp) {
        const prism_delta *d = ui_delta(u, nd->path_hash);
        at = diff_attr(u, d, sel, i + (size_t)c->row);
        int dir = dl_direction(d);
        if (!u->color && dir) {         /* the direction as a sign */
            snprintf(marked, sizeof marked, "%c%s", dir > 0 ? '+' : '-', name);
            name = marked;
        }
    } else if (sel) {
        at = A_REVERSE | A_BOLD;
    } else if (u->color && nd->cpu_known_ns) {
        /* measured wait vs work: running hot, mixed warm, waiting cool */
        double on = (double)(nd->oncpu_ns + nd->runq_ns) / (double)nd->cpu_known_ns;
        at = COLOR_PAIR(on >= 0.7 ? CP_HOT : on >= 0.3 ? CP_WARM : CP_COOL);
    } else if (u->color) {
        at = COLOR_PAIR(pairs[flame_color(name, 3)]);
    } else {
        at = (i + (size_t)c->row) % 2 ? A_NORMAL : A_REVERSE;
    }
    if (hit)
        at |= A_BOLD | A_UNDERLINE;
    char lab[256], text[1024];
    flame_label(lab, sizeof lab, name, c->w - 1, u->utf8);
    int y = 1 + c->row, x = c->x;
    if (c->w == 1) {            /* too narrow for a label: a marked block */
        ui_print(r, y, x, u->color || sel ? at : A_REVERSE, sel ? ">" : " ");
        return;
    }
    {
        /* the first column separates frames: a gap in colour, '|' without */
        char sep[2] = { sel ? '>' : u->color ? ' ' : '|', '\0' };
        ui_print(r, y, x, u->color ? A_BOLD : at, sep);
        x++;
    }
    size_t o = (size_t)snprintf(text, sizeof text, "%s", lab);
    for (int pad = c->w - 1 - ui_width(lab); pad > 0 && o + 1 < sizeof text; pad--)
        text[o++] = ' ';
    text[o] = '\0';
    ui_print(r, y, x, at, text);
}

static void bottom_line(ui *u, fl *s, const ui_rect *r)
{
    const prism_tree *t = prism_analysis_tree(u->a);
    int row = r->h - 1, x = 1;
    ui_fill(r, row, A_NORMAL);
    if (u->search[0]) {
        attr_t at = ui_attr(u, CP_TITLE, A_BOLD);
        if (!s->hits.nodes)
            x += ui_printf(r, row, x, at, "/%s: no matches", u->search);
        else if (s->hits.count == s->hits.nodes)
            x += ui_printf(r, row, x, at, "/%s: %zu matches, %.1f%% of total", u->search,
                           s->hits.nodes, 100.0 * s->hits.share);
        else
            x += ui_printf(r, row, x, at, "/%s: %zu matches (%zu in view), %.1f%% of total",
                           u->search, s->hits.nodes, s->hits.count, 100.0 * s->hits.share);
        x += ui_print(r, row, x, A_NORMAL, "  |  ");
    }
    uint32_t n = prism_analysis_find(u->a, u->sel_hash);
    const prism_delta *d = ui_delta(u, u->sel_hash);
    if (n == PRISM_NO_NODE) {
        if (d)                  /* compare: on the other side only */
            ui_printf(r, row, x, cmpv_delta_attr(u, d, A_NORMAL, false), "%s: %s",
                      d->name ? d->name : "?", cmpv_absent_text(d));
        else
            ui_print(r, row, x, A_NORMAL, "no selection");
        return;
    }
    const prism_node *nd = &t->nodes[n];
    uint64_t up = nd->parent == PRISM_NO_NODE ? t->total_ns : t->nodes[nd->parent].total_ns;
    char tot[32], self[32], cell[64];
    fmt_ns(tot, sizeof tot, (double)nd->total_ns);
    fmt_ns(self, sizeof self, (double)nd->self_ns);
    x += ui_print(r, row, x, A_BOLD, nd->name);
    if (d && dl_format(cell, sizeof cell, d, 40)) {
        x += ui_print(r, row, x, A_NORMAL, "  ");
        x += ui_print(r, row, x, cmpv_delta_attr(u, d, A_NORMAL, false), cell);
        if (d->p_value >= 0)
            x += ui_printf(r, row, x, A_NORMAL, " p=%.2g%s", d->p_value,
                           d->significant ? "" : " (noise)");
    }
    x += ui_printf(r, row, x, A_NORMAL, "  %s  %.1f%% of total  %.1f%% of %s  self %s  %llu calls",
                   tot, t->total_ns ? 100.0 * (double)nd->total_ns / (double)t->total_ns : 0.0,
                   up ? 100.0 * (double)nd->total_ns / (double)up : 0.0,
                   nd->parent == PRISM_NO_NODE ? "all" : "parent", self,
                   (unsigned long long)nd->calls);
    if (nd->cpu_known_ns)
        ui_printf(r, row, x, A_NORMAL, "  on CPU %.0f%%",
                  100.0 * (double)nd->oncpu_ns / (double)nd->cpu_known_ns);
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    fl *s = st;
    ui_rect r = { y, x, h, w };
    if (!s || h < 1 || w < 1)
        return;
    const prism_tree *t = prism_analysis_tree(u->a);
    s->w = w;
    s->rows = h > 2 ? h - 2 : 1;
    uint32_t z = sync(u, s);
    breadcrumb(u, &r, z);
    if (!t->count || !s->geo.count) {
        ui_print(&r, 2, 2, A_NORMAL, t->count ? "No time recorded in these regions."
                                              : "No regions recorded in this profile.");
        bottom_line(u, s, &r);
        return;
    }
    bool exact;
    size_t f = focus(u, s, &exact);
    for (size_t i = 0; i < s->geo.count; i++)
        draw_cell(u, s, &r, i, exact && i == f,
                  u->search[0] && ui_matches(u, t->nodes[s->geo.cells[i].node].name));
    if (h > 2)
        bottom_line(u, s, &r);
}

/* ---- actions ---- */

static int select_cell(ui *u, fl *s, size_t c)
{
    if (c == FLAME_NONE)
        return UI_NONE;
    ui_select(u, prism_analysis_tree(u->a)->nodes[s->geo.cells[c].node].path_hash);
    return UI_REDRAW;
}

static int k_move(ui *u, void *st, int key)
{
    fl *s = st;
    const prism_tree *t = prism_analysis_tree(u->a);
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
    const prism_node *n = &prism_analysis_tree(u->a)->nodes[s->geo.cells[c].node];
    s->zoomed = true;
    s->zoom_hash = n->path_hash;
    ui_select(u, n->path_hash);
    return mirror_zoom(u, s);
}

static int k_zoom_out(ui *u, void *st, int key)
{
    fl *s = st;
    const prism_tree *t = prism_analysis_tree(u->a);
    uint32_t z = sync(u, s);
    if (z == PRISM_NO_NODE) {
        ui_message(u, "not zoomed");
        return UI_REDRAW;
    }
    uint32_t p = t->nodes[z].parent;
    if (key == KEY_HOME || key == 'u' || p == PRISM_NO_NODE)
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

static const ui_key keys[] = {
    { KEY_UP, "Up/k", k_move, "parent frame" }, { 'k', "k", k_move, "parent frame" },
    { KEY_DOWN, "Down/j", k_move, "widest child frame" },
    { 'j', "j", k_move, "widest child frame" },
    { KEY_LEFT, "Left/h", k_move, "frame to the left on the same row" },
    { 'h', "h", k_move, "frame to the left" },
    { KEY_RIGHT, "Right/l", k_move, "frame to the right on the same row" },
    { 'l', "l", k_move, "frame to the right" },
    { '\r', "Enter", k_zoom_in, "zoom into the selected frame (it fills the width)" },
    { '\n', "Enter", k_zoom_in, "zoom into the selected frame" },
    { KEY_ENTER, "Enter", k_zoom_in, "zoom into the selected frame" },
    { 27, "Esc", k_zoom_out, "zoom out one level" },
    { KEY_BACKSPACE, "Bksp", k_zoom_out, "zoom out one level" },
    { 127, "Bksp", k_zoom_out, "zoom out one level" },
    { 8, "Bksp", k_zoom_out, "zoom out one level" },
    { KEY_HOME, "Home/u", k_zoom_out, "zoom out to all frames" },
    { 'u', "u", k_zoom_out, "zoom out to all frames" },
    { 'n', "n", k_match, "next search match" },
    { 'N', "N", k_match, "previous search match" },
};

const ui_pane pane_flame = {
    .name = "Flame",
    .hint = "arrows/hjkl: move  Enter: zoom  Esc: out  /,n,N: search",
    .init = init,
    .draw = draw,
    .reload = reload,
    .free = pane_free,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
};
