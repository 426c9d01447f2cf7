/*
 * flame_paint.c - the Flame pane's look: colour pairs and attributes of
 * frames (the palette itself, which colours and black or white text, is
 * flame_palette), the breadcrumb, the markers of hidden levels and the
 * text of a change.
 */
#include <stdio.h>

#include "delta.h"
#include "flame.h"
#include "flame_paint.h"

void flame_init_colors(void)
{
    flame_pair p[FLAME_NSLOTS];
    static const short pair_of[FLAME_NSLOTS] = { CP_FLAME0, CP_FLAME1, CP_FLAME2, CP_FLAME3,
                                                 CP_HOT, CP_WARM, CP_COOL, CP_FMATCH };
    flame_palette(COLORS, p);
    for (int i = 0; i < FLAME_NSLOTS; i++)
        init_pair(pair_of[i], p[i].fg, p[i].bg);
}

attr_t flame_diff_attr(const ui *u, const prism_delta *d, bool sel, size_t parity)
{
    int dir = dl_direction(d);
    attr_t bold = dl_strong(d) ? A_BOLD : 0;
    if (!u->color)
        return (sel ? A_REVERSE : parity % 2 ? A_NORMAL : A_REVERSE) | (dir ? A_BOLD : 0);
    if (sel)
        return COLOR_PAIR(CP_SEL) | A_BOLD;
    return dir > 0 ? COLOR_PAIR(CP_HOT) | bold : dir < 0 ? COLOR_PAIR(CP_COOL) | bold : A_REVERSE;
}

attr_t flame_frame_attr(const ui *u, const prism_node *nd, size_t parity, bool sel, bool hit)
{
    static const int modules[FLAME_NMODULE] = { CP_FLAME0, CP_FLAME1, CP_FLAME2, CP_FLAME3 };
    if (!u->color) {
        if (sel)
            return A_REVERSE | A_BOLD | A_UNDERLINE;
        return (parity % 2 ? A_NORMAL : A_REVERSE) | (hit ? A_BOLD : 0);
    }
    int pair;
    if (hit) {
        pair = CP_FMATCH;
    } else if (nd->flags & (PRISM_NODE_UNATTRIBUTED | PRISM_NODE_SAMPLED)) {
        pair = CP_DIM;              /* `(outside regions)`, "~ " sampled: no region */
    } else if (nd->cpu_known_ns) {
        /* measured wait vs work: running hot, mixed warm, waiting cool */
        double on = (double)(nd->oncpu_ns + nd->runq_ns) / (double)nd->cpu_known_ns;
        pair = on >= 0.7 ? CP_HOT : on >= 0.3 ? CP_WARM : CP_COOL;
    } else {
        pair = modules[flame_color(nd->name, FLAME_NMODULE)];
    }
    return COLOR_PAIR(pair) | (sel ? A_REVERSE | A_BOLD : 0) | (hit ? A_BOLD | A_UNDERLINE : 0);
}

/* "[thread NAME] all > a > b  [12.3 ms, 45.6%]", leading parts elided. */
void flame_breadcrumb(ui *u, const ui_rect *r, const prism_tree *t, int view, uint32_t z)
{
    const char *parts[64];
    int k = 0;
    for (uint32_t q = z; q != PRISM_NO_NODE && k < 64; q = t->nodes[q].parent)
        parts[k++] = t->nodes[q].name;
    char tot[32], tail[64], who[160] = "";
    uint64_t ns = z == PRISM_NO_NODE ? t->total_ns : t->nodes[z].total_ns;
    fmt_ns(tot, sizeof tot, (double)ns);
    snprintf(tail, sizeof tail, "  [%s, %.1f%%]", tot,
             t->total_ns ? 100.0 * (double)ns / (double)t->total_ns : 0.0);
    if (view >= 0) {
        const char *name = NULL;
        uint32_t stream = 0;
        prism_analysis_thread_tree(u->a, (size_t)view, &stream, &name);
        if (name && *name)
            snprintf(who, sizeof who, "[thread %.100s] ", name);
        else
            snprintf(who, sizeof who, "[thread %u] ", (unsigned)stream);
    }
    int x = 1;
    if (who[0] && ui_width(who) + 12 <= r->w)
        x += ui_print(r, 0, x, ui_attr(u, CP_MEDIUM, A_BOLD), who);
    /* drop leading parts until it fits */
    for (int skip = 0; skip <= k; skip++) {
        char line[512];
        size_t o = (size_t)snprintf(line, sizeof line, "%s", skip ? (u->utf8 ? "\u2026" : "...") : "all");
        for (int i = k - 1 - (skip ? skip - 1 : 0); i >= 0 && o < sizeof line; i--)
            o += (size_t)snprintf(line + o, sizeof line - o, " > %s", parts[i]);
        if (x + ui_width(line) + ui_width(tail) <= r->w || skip == k) {
            x += ui_print(r, 0, x, ui_attr(u, CP_TITLE, A_BOLD), line);
            ui_print(r, 0, x, A_NORMAL, tail);
            return;
        }
    }
}

/* The markers of levels hidden above and below the window. */
void flame_markers(ui *u, const ui_rect *r, const flame_window *w)
{
    attr_t at = ui_attr(u, CP_DIM, A_BOLD);
    if (!w->marks)
        return;
    if (w->above) {
        ui_fill(r, 1, A_NORMAL);
        ui_printf(r, 1, 1, at, "%s %d level%s above  (k: up)", u->utf8 ? "\u2191" : "^",
                  w->above, w->above == 1 ? "" : "s");
    }
    if (w->below) {
        int y = 1 + w->y0 + w->shown;
        ui_fill(r, y, A_NORMAL);
        ui_printf(r, y, 1, at, "+%d deeper  (j: down, Enter: zoom in)", w->below);
    }
}

/* The change of a path in the explorer's style: "+37.42 ms +49.9%",
 * "new +3.20 ms"; false when there is none. */
bool flame_change_text(char *buf, size_t cap, const prism_delta *d)
{
    char dv[40], pct[32];
    dl_kind k = dl_kind_of(d);
    if (k == DL_NONE)
        return false;
    fmt_ns_signed(dv, sizeof dv, d->delta_ns);
    dl_fmt_pct(pct, sizeof pct, d->delta_pct);
    snprintf(buf, cap, "%s %s", k == DL_NEW ? "new" : k == DL_GONE ? "gone" : dv,
             k == DL_NEW || k == DL_GONE ? dv : pct);
    return true;
}
