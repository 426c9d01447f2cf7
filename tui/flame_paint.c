/*
 * flame_paint.c - the Flame pane's look: colour pairs and attributes of
 * frames (the palette itself, which colours and black or white text, is
 * flame_palette), the breadcrumb, the markers of hidden levels, the
 * text of a change and the list of frames below the flame.
 */
#include <stdio.h>

#include "compare_view.h"
#include "delta.h"
#include "escape.h"
#include "flame.h"
#include "flame_paint.h"
#include "namefit.h"

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
    } else if ((nd->flags & (PRISM_NODE_UNATTRIBUTED | PRISM_NODE_SAMPLED)) ||
               prism_analysis_is_op(u->a, nd->name)) {
        pair = CP_DIM;              /* `(outside regions)`, "~ " sampled: no region;
                                       an operator: the operator window's steps only */
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
        char lab[192];
        ui_thread_label(u->a, (size_t)view, false, lab, sizeof lab);
        snprintf(who, sizeof who, "[%.140s] ", lab);
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

/* ---- the list below the flame ---- */

#define LIST_NAME_W 36          /* the name column takes at least this ...   */
#define LIST_NAME_MIN 20        /* ... and figures drop before it gets less */
#define LIST_SHOWN_MAX 256      /* rows whose shared starts are worked out */

enum { LC_TOTAL, LC_SHARE, LC_DELTA, LC_CALLS, LC_N };

/* The header: what the list holds, the heads of the figures. */
static void list_header(ui *u, const ui_rect *r, int y, const flame_list *l, int top, int shown,
                        const int *colx, const int *colw)
{
    static const char *const heads[LC_N] = { "total", "share", "change", "calls" };
    attr_t at = ui_attr(u, CP_DIM, A_BOLD);
    char range[64], owner[160];
    if (shown < (int)l->n)
        snprintf(range, sizeof range, " (%d-%d of %zu)", top + 1, top + shown, l->n);
    else
        snprintf(range, sizeof range, " (%zu)", l->n);
    int room = (colx[LC_TOTAL] > 0 ? colx[LC_TOTAL] : r->w) - 1 - ui_width(range) - 14;
    if (l->owner == PRISM_NO_NODE)
        snprintf(owner, sizeof owner, "%s", "all");
    else
        ui_elide_mid(owner, sizeof owner, l->t->nodes[l->owner].name, room > 8 ? room : 8, u->utf8);
    ui_fill(r, y, A_NORMAL);
    int x = 1 + ui_printf(r, y, 1, at, "frames under %s", owner);
    ui_print(r, y, x, at, range);
    for (int k = 0; k < LC_N; k++)
        if (colw[k] > 0)
            ui_print(r, y, colx[k] + colw[k] - ui_width(heads[k]), at, heads[k]);
}

void flame_list_draw(ui *u, const ui_rect *r, int y, int rows, const flame_list *l, int *top)
{
    if (rows < 1 || y < 0 || y + 1 + rows > r->h || r->w < 4)
        return;
    int n = l->n > (size_t)1 << 30 ? 1 << 30 : (int)l->n;
    *top = flame_list_top(n, rows, l->mark, *top);
    int shown = n - *top < rows ? n - *top : rows;
    const prism_tree *t = l->t;
    const char *names[LIST_SHOWN_MAX];
    size_t sh[LIST_SHOWN_MAX];
    int k = shown < LIST_SHOWN_MAX ? shown : LIST_SHOWN_MAX, need = LIST_NAME_W;
    for (int i = 0; i < k; i++) {
        names[i] = t->nodes[l->kids[*top + i]].name;
        int w = nf_need(names[i], 0) + 2;
        need = w > need ? w : need;
    }
    nf_shared(names, (size_t)k, sh);
    /* room for the header's "frames under NAME (N)" too */
    int hw = 14 + (l->owner != PRISM_NO_NODE ? nf_need(t->nodes[l->owner].name, 0) : 3) + 16;
    need = hw > need ? hw : need;
    /* the figures right after the longest name, dropped from the right
     * while the name would get less than LIST_NAME_MIN columns; the
     * change only in compare mode */
    static const int want[LC_N] = { 11, 10, 18, 12 };
    int colx[LC_N] = { 0 }, colw[LC_N] = { 0 }, name_w = r->w - 2;
    for (int q = 0; q < LC_N; q++) {
        if ((q == LC_DELTA && !u->cmp) || name_w - want[q] < LIST_NAME_MIN)
            continue;
        colw[q] = want[q];
        name_w -= want[q];
    }
    name_w = name_w < need ? name_w : need;
    for (int q = 0, x = 1 + name_w; q < LC_N; q++) {
        colx[q] = colw[q] ? x : 0;
        x += colw[q];
    }
    list_header(u, r, y, l, *top, shown, colx, colw);
    const char *up = l->owner != PRISM_NO_NODE ? t->nodes[l->owner].name : NULL;
    uint64_t whole = l->owner != PRISM_NO_NODE ? t->nodes[l->owner].total_ns : t->total_ns;
    for (int i = 0; i < shown; i++) {
        int idx = *top + i, row = y + 1 + i;
        const prism_node *nd = &t->nodes[l->kids[idx]];
        bool sel = idx == l->mark;
        attr_t at = sel ? ui_attr(u, CP_SEL, A_REVERSE) | A_BOLD : A_NORMAL;
        const prism_delta *d = u->cmp ? ui_delta(u, nd->path_hash) : NULL;
        char fit[ESC_CAP(PRISM_MAX_STRING_BYTES)], v[48], cell[64];
        size_t shared = i < k ? sh[i] : 0, c = up ? nf_common(nd->name, up) : 0;
        nf_fit(fit, sizeof fit, nd->name, c > shared ? c : shared, name_w - 1, u->utf8);
        ui_fill(r, row, at);
        ui_print(r, row, 0, at, sel ? ">" : " ");
        ui_print(r, row, 1, d ? cmpv_delta_attr(u, d, at, sel) : at, fit);
        for (int q = 0; q < LC_N; q++) {
            if (!colw[q])
                continue;
            if (q == LC_DELTA) {
                cmpv_delta_cell(u, r, row, colx[q] + 1, colw[q] - 1, d, at, sel);
                continue;
            }
            if (q == LC_TOTAL)
                fmt_ns(cell, sizeof cell, (double)nd->total_ns);
            else if (q == LC_SHARE)
                snprintf(cell, sizeof cell, "%.1f%%",
                         whole ? 100.0 * (double)nd->total_ns / (double)whole : 0.0);
            else {                      /* a `~` frame: samples, no calls */
                bool smp = nd->flags & PRISM_NODE_SAMPLED;
                fmt_count(v, sizeof v, (double)nd->calls);
                snprintf(cell, sizeof cell, "%s %s%s", v, smp ? "sample" : "call",
                         nd->calls == 1 ? "" : "s");
            }
            ui_print(r, row, colx[q] + colw[q] - ui_width(cell), at, cell);
        }
    }
}
