/*
 * timeline_lanes.c - the Timeline pane's lanes (drawn for pane_timeline.c):
 * one lane per thread and per GPU stream, its regions as labelled spans
 * stacked by nesting depth (names escaped and fitted: they come from the
 * file), the time axis from the step's start with the cursor, and in
 * compare mode the mark where this run's step ends before the other's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "timeline_pane.h"
#include "treeview.h"

static void lane_label(char *buf, size_t cap, const prism_lane *l)
{
    if (l->kind == PRISM_LANE_GPU)
        snprintf(buf, cap, "GPU%u s%u", (unsigned)l->device, (unsigned)l->stream);
    else if (l->name && l->name[0])
        snprintf(buf, cap, "%s", l->name);
    else
        snprintf(buf, cap, "thread %u", (unsigned)l->stream);
}

void tl_draw_axis(ui *u, tl *s, const ui_rect *r, int y)
{
    int w = s->span_w, x0 = s->gutter;
    char lab[32];
    if (w < 1)
        return;
    uint64_t tick = tlv_tick(s->v1 - s->v0, w, 10);
    uint64_t t = s->w0 + (s->v0 > s->w0 ? (s->v0 - s->w0 + tick - 1) / tick * tick : 0);
    long cc = s->lanes ? tlv_col(s->cur, s->v0, s->v1, w) : -1;    /* the cursor's column */
    /* compare: where this run's step ends before the other's */
    long ec = s->h1 > s->w1 ? tlv_col(s->w1, s->v0, s->v1, w) : -1;
    for (; t < s->v1; t += tick) {
        long c = tlv_col(t, s->v0, s->v1, w);
        if (c < 0 || c >= w)
            continue;
        fmt_ns(lab, sizeof lab, (double)(t - s->w0));
        if (c != cc)
            ui_print(r, y, x0 + (int)c, ui_attr(u, CP_DIM, A_NORMAL), u->utf8 ? "\u2502" : "|");
        /* a label whole, beside no cursor: the cursor never splits its digits */
        long end = c + 1 + fmt_width(lab);
        if (end < w && !(cc >= c + 1 && cc < end) && !(ec >= c && ec < end))
            ui_print(r, y, x0 + (int)c + 1, ui_attr(u, CP_DIM, A_NORMAL), lab);
    }
    if (ec >= 0 && ec < w && ec != cc)
        ui_print(r, y, x0 + (int)ec, A_BOLD, "]");
    if (cc >= 0 && cc < w)
        ui_print(r, y, x0 + (int)cc, A_BOLD | A_REVERSE, "v");
}

static void draw_row(ui *u, tl *s, const ui_rect *r, int y, const prism_lane *l, uint32_t depth,
                     bool cursor_row, tlv_cell *cells)
{
    int w = s->span_w, x0 = s->gutter;
    tlv_row(l->spans, l->nspans, depth, s->v0, s->v1, w, cells);
    long cc = cursor_row ? tlv_col(s->cur, s->v0, s->v1, w) : -1;
    size_t sel = cc >= 0 && cc < w ? cells[cc].span : SIZE_MAX;
    for (int c = 0; c < w;) {
        size_t i = cells[c].span;
        int e = c + 1;
        while (e < w && cells[e].span == i)
            e++;
        if (i != SIZE_MAX && !tl_beyond(s, &l->spans[i])) {
            const prism_span *sp = &l->spans[i];
            char text[512];
            attr_t at = (i % 2 ? ui_attr(u, CP_DIM, A_BOLD) : ui_attr(u, CP_TITLE, A_NORMAL)) |
                        A_REVERSE;
            if (i == sel)
                at = ui_attr(u, CP_SEL, A_REVERSE) | A_BOLD | A_UNDERLINE;
            if (sp->merged) {
                at = i == sel ? at : ui_attr(u, CP_DIM, A_NORMAL);
                const char *g = u->utf8 ? "\u2591" : ":";
                for (int k = c; k < e; k++)
                    ui_print(r, y, x0 + k, at, g);
            } else if (sp->outside) {
                /* `(outside regions)`: dimmed as in the Tree, not in reverse
                 * like a region; its extent dotted (seen without colour) */
                at = i == sel ? at : ui_attr(u, CP_DIM, A_DIM);
                int used = e - c >= 2 ? tv_fit(text, sizeof text, sp->name, e - c, u->utf8) : 0;
                if (used)
                    ui_print(r, y, x0 + c, at, text);
                for (int k = c + used; k < e; k++)
                    ui_print(r, y, x0 + k, at, u->utf8 ? "\u00b7" : ".");
            } else {
                int used = e - c >= 2 ? tv_fit(text, sizeof text, sp->name, e - c, u->utf8) : 0;
                if (used)
                    ui_print(r, y, x0 + c, at, text);
                for (int k = c + used; k < e; k++)
                    ui_print(r, y, x0 + k, at, " ");
            }
        }
        c = e;
    }
}

void tl_draw_lanes(ui *u, tl *s, const ui_rect *r, int y, int h)
{
    size_t nl = prism_timeline_lane_count(s->tl);
    int maxd = tl_max_rows(s->pane_h);
    tlv_cell *cells = malloc((size_t)(s->span_w > 0 ? s->span_w : 1) * sizeof *cells);
    s->lanes_y = y;
    s->lanes_h = h;
    s->nrows = 0;
    if (!cells)
        return;
    /* keep the cursor's lane in view: scroll down while it is below */
    for (;;) {
        int rows = 0;
        bool seen = false;
        for (size_t i = s->top; i < nl && rows < h; i++) {
            const prism_lane *l = prism_timeline_lane(s->tl, i);
            int lr = (int)l->rows < maxd ? (int)l->rows : maxd;
            if (i == s->lane && rows + (int)s->depth + 1 <= h)
                seen = true;
            rows += lr;
        }
        if (seen || s->top >= s->lane)
            break;
        s->top++;
    }
    int row = 0;
    for (size_t i = s->top; i < nl && row < h; i++) {
        const prism_lane *l = prism_timeline_lane(s->tl, i);
        int lr = (int)l->rows < maxd ? (int)l->rows : maxd;
        char lab[160], fit[512];
        lane_label(lab, sizeof lab, l);
        for (int d = 0; d < lr && row < h; d++, row++) {
            if (row < MAX_ROWS) {
                s->row_lane[row] = (int)i;
                s->row_depth[row] = d;
                s->nrows = row + 1;
            }
            bool cr = s->lanes && i == s->lane && (uint32_t)d == s->depth;
            attr_t ga = cr ? A_BOLD | A_REVERSE : ui_attr(u, CP_TITLE, A_BOLD);
            if (d == 0) {
                tv_fit(fit, sizeof fit, lab, s->gutter - 1, u->utf8);
                ui_print(r, y + row, 0, ga, fit);
            } else if (d == lr - 1 && l->rows > (uint32_t)lr) {
                ui_printf(r, y + row, 0, ga, " +%u", (unsigned)(l->rows - (uint32_t)lr));
            } else if (cr) {
                ui_print(r, y + row, 0, ga, " >");
            }
            draw_row(u, s, r, y + row, l, (uint32_t)d, cr, cells);
        }
    }
    free(cells);
    if (!nl)
        ui_print(r, y, 1, ui_attr(u, CP_DIM, A_NORMAL),
                 s->err == PRISM_OK ? "No regions or GPU work in this window"
                                    : prism_strerror(s->err));
}
