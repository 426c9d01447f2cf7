/*
 * pane_bottlenecks.c - the Bottlenecks pane: the findings of the analysis
 * as a table of type, severity (HIGH red, MEDIUM yellow, LOW green; HIGH
 * bold without colour) and description, with the selected finding's region,
 * evidence and recommendation word-wrapped below.  Enter shows the blamed
 * region in the Tree pane, `f` in the Flame pane; a finding that blames no
 * region opens the pane that explains it (Memory or GPU).  Every such jump
 * goes through ui_jump(), so Esc / Backspace come back here.  Mouse: a
 * click selects a finding, a double click is Enter, the wheel scrolls.
 *
 * The selection is kept as an index and re-found by (type, path hash) when
 * the analysis is reloaded.
 *
 * Compare mode (u->cmp): a tag column marks the findings on one side only
 * (matched by type and path, u->cmp->bn_new / bn_gone): NEW on the new
 * side, GONE on the base side; the new side also lists the findings that
 * vanished, tagged GONE, below its own.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chart.h"
#include "escape.h"
#include "timeline_pane.h"
#include "ui.h"

#define LABEL 11                        /* "Evidence  " column              */

#define TAG_W 4                         /* "NEW " / "GONE" */

typedef struct bnv {
    int sel, top;
    int page;                           /* table rows at the last draw      */
    int shown;                          /* of them drawn (mouse)            */
    prism_bottleneck_type sel_type;     /* the selection, for reloads       */
    uint64_t sel_hash;
} bnv;

static attr_t sev_attr(const ui *u, prism_severity s)
{
    switch (s) {
    case PRISM_SEV_HIGH: return ui_attr(u, CP_HIGH, A_BOLD) | A_BOLD;
    case PRISM_SEV_MEDIUM: return ui_attr(u, CP_MEDIUM, A_NORMAL);
    default: return ui_attr(u, CP_LOW, A_NORMAL);
    }
}

/* "step/forward/layer.0" for a node of the all-threads tree. */
static void node_path(const prism_tree *t, uint32_t n, char *out, size_t cap)
{
    const char *parts[32];
    int k = 0;
    size_t o = 0;
    out[0] = '\0';
    for (uint32_t q = n; q != PRISM_NO_NODE && q < t->count && k < 32; q = t->nodes[q].parent)
        parts[k++] = t->nodes[q].name;
    while (k-- > 0 && o + 2 < cap) {
        int m = snprintf(out + o, cap - o, "%s%s", o ? "/" : "", parts[k] ? parts[k] : "?");
        if (m < 0)
            break;
        o += (size_t)m;
    }
}

/* Where Enter goes for a finding that blames no region (-1: nowhere). */
static int fallback_pane(prism_bottleneck_type t)
{
    switch (t) {
    case PRISM_BN_MEMORY_LEAK: return PANE_MEMORY;
    case PRISM_BN_CPU_GPU_SYNC: case PRISM_BN_GPU_IDLE: case PRISM_BN_LAUNCH_BOUND:
    case PRISM_BN_MEMORY_BOUND: return PANE_GPU;
    default: return -1;
    }
}

/* Print s wrapped at (row, col) of r in width columns; returns the rows. */
static int put_wrapped(const ui_rect *r, int row, int col, int width, attr_t at, const char *s)
{
    int rows = 0;
    for (size_t o = 0; s[o]; rows++) {
        size_t nx, len = wrap_line(s + o, width, &nx);
        ui_printf(r, row + rows, col, at, "%.*s", (int)len, s + o);
        o += nx;
    }
    return rows;
}

static bool in_list(const prism_bottleneck *const *v, size_t n, const prism_bottleneck *b)
{
    for (size_t i = 0; i < n; i++)
        if (v[i]->type == b->type && v[i]->path_hash == b->path_hash)
            return true;
    return false;
}

/* Compare mode: "NEW" / "GONE" for a finding of this side, else NULL. */
static const char *tag_of(const ui *u, const prism_bottleneck *b)
{
    const prism_compare *c = u->cmp;
    if (!c)
        return NULL;
    if (u->side == 1)
        return in_list(c->bn_new, c->nbn_new, b) ? "NEW" : NULL;
    return in_list(c->bn_gone, c->nbn_gone, b) ? "GONE" : NULL;
}

static attr_t tag_attr(const ui *u, bool gone)
{
    return ui_attr(u, gone ? CP_LOW : CP_HIGH, A_BOLD) | A_BOLD;
}

/* The findings that vanished (new side of compare mode), from row on. */
static size_t gone_count(const ui *u)
{
    return u->cmp && u->side == 1 ? u->cmp->nbn_gone : 0;
}

static void draw_gone(ui *u, const ui_rect *r, int row, int rows, const int *cx, const int *wd,
                      int nc)
{
    const prism_compare *c = u->cmp;
    for (int i = 0; i < rows && (size_t)i < c->nbn_gone; i++, row++) {
        const prism_bottleneck *b = c->bn_gone[i];
        attr_t dim = ui_attr(u, CP_DIM, A_NORMAL);
        ui_print(r, row, 1, tag_attr(u, true), "GONE");
        if (nc > 0)
            ui_printf(r, row, cx[0], dim, "%-*.*s", wd[0], wd[0], prism_bottleneck_name(b->type));
        if (nc > 1)
            ui_printf(r, row, cx[1], dim, "%-*s", wd[1], prism_severity_name(b->severity));
        if (nc > 2) {
            char dsc[ESC_CAP(sizeof b->description)];
            ui_elide_words(dsc, sizeof dsc, b->description, wd[2], u->utf8);
            ui_printf(r, row, cx[2], dim, "%-*s", wd[2], dsc);
        }
    }
}

static void draw_empty(ui *u, const ui_rect *r)
{
    ui_print(r, 1, 1, ui_attr(u, CP_TITLE, A_BOLD), "No bottlenecks found");
    int rows = put_wrapped(r, 3, 1, r->w - 2, A_NORMAL,
             "Default thresholds: op > 10% of time, leak > 10 MB/step (or a steady rise of "
             "64 MB or 5 %), sync/data waits > 10%, "
             "GPU idle > 30%.");
    size_t ng = gone_count(u);
    if (ng) {
        static const int fixed[3] = { 15, 8, 0 };
        int wd[3], nc = ui_columns(r->w - 2 - TAG_W - 1, fixed, 3, 10, wd);
        int x0 = 2 + TAG_W + 1, cx[3] = { x0, x0 + wd[0] + 1, x0 + wd[0] + 1 + wd[1] + 1 };
        ui_printf(r, 4 + rows, 1, A_NORMAL, "%zu finding%s of the base profile vanished:", ng,
                  ng == 1 ? "" : "s");
        draw_gone(u, r, 5 + rows, r->h - 5 - rows, cx, wd, nc);
    }
}

/* What fixing a wait is worth, as `prism-top analyze` says it; false when
 * the finding has no such figure. */
static bool worth_text(const prism_bottleneck *b, char *buf, size_t cap)
{
    if (!(b->step_without_ns > 0))
        return false;
    char s1[32], s2[32];
    fmt_ns(s1, sizeof s1, b->step_ns);
    fmt_ns(s2, sizeof s2, b->step_without_ns);
    int k = snprintf(buf, cap, "the step %s -> %s if the wait were zero (x%.2f steps/s)", s1,
                     s2, b->step_ns / b->step_without_ns);
    if (b->workers_to && b->step_with_workers_ns > 0 && k > 0 && (size_t)k < cap) {
        fmt_ns(s2, sizeof s2, b->step_with_workers_ns);
        snprintf(buf + k, cap - (size_t)k, "; with %u workers (now %u) %s (x%.2f)",
                 b->workers_to, b->workers_now, s2, b->step_ns / b->step_with_workers_ns);
    }
    return true;
}

static void details(ui *u, const ui_rect *r, const prism_bottleneck *b)
{
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    int dw = r->w - LABEL - 1 > 10 ? r->w - LABEL - 1 : 10, row = 0;
    const prism_tree *t = prism_analysis_tree(u->a);
    uint32_t n = prism_analysis_find(u->a, b->path_hash);
    char path[256];
    ui_print(r, row, 1, lab, "Region");
    if (n != PRISM_NO_NODE) {
        node_path(t, n, path, sizeof path);
        int c = LABEL + ui_print(r, row, LABEL, A_BOLD, path);
        static const char hint[] = "(Enter: Tree  f: Flame)";
        if (c + 2 + (int)sizeof hint - 1 <= r->w)   /* whole or not at all */
            ui_print(r, row, c + 2, ui_attr(u, CP_DIM, A_NORMAL), hint);
    } else {
        int p = fallback_pane(b->type);
        ui_printf(r, row, LABEL, ui_attr(u, CP_DIM, A_NORMAL), "none%s%s", p < 0 ? "" : "  (Enter: ",
                  p < 0 ? "" : p == PANE_MEMORY ? "Memory pane)" : "GPU pane)");
    }
    row++;
    ui_print(r, row, 1, lab, "Evidence");
    row += put_wrapped(r, row, LABEL, dw, A_NORMAL, b->evidence[0] ? b->evidence : "-");
    if (b->inside[0]) {
        ui_print(r, row, 1, lab, "Inside");
        row += put_wrapped(r, row, LABEL, dw, A_NORMAL, b->inside);
    }
    char worth[256];
    if (worth_text(b, worth, sizeof worth)) {
        ui_print(r, row, 1, lab, "Worth");
        row += put_wrapped(r, row, LABEL, dw, A_NORMAL, worth);
    }
    ui_print(r, row, 1, lab, "Fix");
    put_wrapped(r, row, LABEL, dw, A_NORMAL, b->recommendation[0] ? b->recommendation : "-");
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    bnv *bv = st;
    ui_rect r = { y, x, h, w };
    size_t nb, cnt[3] = { 0, 0, 0 };
    const prism_bottleneck *b = prism_analysis_bottlenecks(u->a, &nb);
    bv->shown = 0;
    if (!nb) {
        draw_empty(u, &r);
        return;
    }
    int n = (int)nb;
    for (size_t i = 0; i < nb; i++)
        cnt[b[i].severity <= PRISM_SEV_HIGH ? b[i].severity : PRISM_SEV_HIGH]++;
    if (bv->sel >= n)
        bv->sel = n - 1;
    if (bv->sel < 0)
        bv->sel = 0;
    const prism_bottleneck *cur = &b[bv->sel];
    bv->sel_type = cur->type;
    bv->sel_hash = cur->path_hash;

    int c = 1 + ui_print(&r, 0, 1, ui_attr(u, CP_TITLE, A_BOLD), "Bottlenecks");
    c += ui_printf(&r, 0, c, A_NORMAL, "  %d found: ", n);
    c += ui_printf(&r, 0, c, sev_attr(u, PRISM_SEV_HIGH), "%zu HIGH", cnt[PRISM_SEV_HIGH]);
    c += ui_printf(&r, 0, c, sev_attr(u, PRISM_SEV_MEDIUM), "  %zu MEDIUM", cnt[PRISM_SEV_MEDIUM]);
    c += ui_printf(&r, 0, c, sev_attr(u, PRISM_SEV_LOW), "  %zu LOW", cnt[PRISM_SEV_LOW]);

    /* the table gets what the details leave, at least three rows */
    int dw = w - LABEL - 1 > 10 ? w - LABEL - 1 : 10;
    char worth[256];
    int det = 1 + wrap_count(cur->evidence[0] ? cur->evidence : "-", dw) +
              wrap_count(cur->recommendation[0] ? cur->recommendation : "-", dw) +
              (cur->inside[0] ? wrap_count(cur->inside, dw) : 0) +
              (worth_text(cur, worth, sizeof worth) ? wrap_count(worth, dw) : 0);
    int ng = (int)gone_count(u);
    int avail = h - 3 - det;
    if (avail < (n < 3 ? n : 3))
        avail = n < 3 ? n : 3;
    int rows = avail > n ? n : avail;
    int grows = avail - rows < ng ? avail - rows : ng;    /* vanished findings */
    bv->page = rows;
    bv->shown = rows;
    if (bv->top > bv->sel)
        bv->top = bv->sel;
    if (bv->sel >= bv->top + rows)
        bv->top = bv->sel - rows + 1;
    if (bv->top > n - rows)
        bv->top = n - rows;
    if (bv->top < 0)
        bv->top = 0;

    static const int fixed[3] = { 15, 8, 0 };
    int tw = u->cmp ? TAG_W + 1 : 0;    /* compare: the tag column first */
    int wd[3], nc = ui_columns(w - 2 - tw, fixed, 3, 10, wd);
    int cx[3] = { 2 + tw, 2 + tw + wd[0] + 1, 2 + tw + wd[0] + 1 + wd[1] + 1 };
    static const char *const head[3] = { "type", "severity", "description" };
    for (int i = 0; i < nc; i++)
        ui_printf(&r, 1, cx[i], A_UNDERLINE, "%-*s", wd[i], head[i]);
    for (int i = 0; i < rows && bv->top + i < n; i++) {
        int k = bv->top + i, row = 2 + i;
        bool sel = k == bv->sel;
        attr_t at = sel ? ui_attr(u, CP_SEL, A_REVERSE) : A_NORMAL;
        if (sel)
            ui_fill(&r, row, at);
        const char *tag = tag_of(u, &b[k]);
        if (tag)
            ui_print(&r, row, 1, sel ? at | A_BOLD : tag_attr(u, u->side == 0), tag);
        if (nc > 0)
            ui_printf(&r, row, cx[0], at, "%-*.*s", wd[0], wd[0], prism_bottleneck_name(b[k].type));
        if (nc > 1)
            ui_printf(&r, row, cx[1], sel ? at | (b[k].severity == PRISM_SEV_HIGH ? A_BOLD : 0)
                                          : sev_attr(u, b[k].severity),
                      "%-*s", wd[1], prism_severity_name(b[k].severity));
        if (nc > 2) {               /* whole words: a figure is never cut */
            char dsc[ESC_CAP(sizeof b[k].description)];
            ui_elide_words(dsc, sizeof dsc, b[k].description, wd[2], u->utf8);
            ui_printf(&r, row, cx[2], at, "%-*s", wd[2], dsc);
        }
    }
    if (rows < n)
        c += ui_printf(&r, 0, c, ui_attr(u, CP_DIM, A_NORMAL), "  (%d/%d)", bv->sel + 1, n);
    if (ng)
        ui_printf(&r, 0, c, tag_attr(u, true), "  %d gone", ng);
    if (grows > 0)
        draw_gone(u, &r, 2 + rows, grows, cx, wd, nc);
    int dy = 2 + rows + (grows > 0 ? grows : 0) + 1;
    if (dy < h) {
        ui_rect d = { y + dy, x, h - dy, w };
        details(u, &d, cur);
    }
}

static void *init(ui *u)
{
    (void)u;
    return calloc(1, sizeof(bnv));
}

static void reload(ui *u, void *st)
{
    bnv *bv = st;
    size_t nb;
    const prism_bottleneck *b = prism_analysis_bottlenecks(u->a, &nb);
    for (size_t i = 0; i < nb; i++)
        if (b[i].type == bv->sel_type && b[i].path_hash == bv->sel_hash) {
            bv->sel = (int)i;
            return;
        }
}

static int k_move(ui *u, void *st, int key)
{
    bnv *bv = st;
    size_t nb;
    prism_analysis_bottlenecks(u->a, &nb);
    int page = bv->page > 1 ? bv->page : 1;
    switch (key) {
    case 'j': case KEY_DOWN: bv->sel++; break;
    case 'k': case KEY_UP: bv->sel--; break;
    case KEY_NPAGE: bv->sel += page; break;
    case KEY_PPAGE: bv->sel -= page; break;
    case KEY_HOME: case 'g': bv->sel = 0; break;
    case KEY_END: case 'G': bv->sel = (int)nb - 1; break;
    default: break;
    }
    if (bv->sel >= (int)nb)
        bv->sel = (int)nb - 1;
    if (bv->sel < 0)
        bv->sel = 0;
    return UI_REDRAW;
}

static int k_jump(ui *u, void *st, int key)
{
    bnv *bv = st;
    size_t nb;
    const prism_bottleneck *b = prism_analysis_bottlenecks(u->a, &nb);
    if (!nb || bv->sel < 0 || (size_t)bv->sel >= nb)
        return UI_NONE;
    const prism_bottleneck *cur = &b[bv->sel];
    const uint64_t *slow;
    size_t nslow;
    prism_analysis_slow_steps(u->a, &slow, &nslow);
    if (cur->type == PRISM_BN_SLOW_STEPS && key != 'f' && nslow &&
        tl_select_step(u, u->state[PANE_TIMELINE], slow[0])) {
        ui_jump(u, PANE_TIMELINE, 0);   /* the first slow step; s / S there: the others */
        ui_message(u, "slow step %llu (1 of %zu; s / S: next / previous)",
                   (unsigned long long)slow[0], nslow);
        return UI_REDRAW;
    }
    if (prism_analysis_find(u->a, cur->path_hash) != PRISM_NO_NODE) {
        ui_jump(u, key == 'f' ? PANE_FLAME : PANE_TREE, cur->path_hash);
        return UI_REDRAW;
    }
    int p = fallback_pane(cur->type);
    if (p >= 0)
        ui_jump(u, p, 0);       /* Esc / Backspace there come back */
    else
        ui_message(u, "%s blames no region", prism_bottleneck_name(cur->type));
    return UI_REDRAW;
}

/* Mouse: a click selects a finding, a double click is Enter, the wheel
 * moves the selection three rows. */
static int mouse(ui *u, void *st, int event, int row, int col)
{
    bnv *bv = st;
    (void)col;
    if (!bv)
        return UI_NONE;
    if (event == UI_MOUSE_WHEEL_UP || event == UI_MOUSE_WHEEL_DOWN) {
        for (int i = 0; i < 3; i++)
            k_move(u, bv, event == UI_MOUSE_WHEEL_UP ? KEY_UP : KEY_DOWN);
        return UI_REDRAW;
    }
    if (event != UI_MOUSE_CLICK && event != UI_MOUSE_DOUBLE)
        return UI_NONE;
    size_t nb;
    prism_analysis_bottlenecks(u->a, &nb);
    if (row < 2 || row >= 2 + bv->shown || bv->top + row - 2 >= (int)nb)
        return UI_NONE;
    bv->sel = bv->top + row - 2;
    return event == UI_MOUSE_DOUBLE ? k_jump(u, bv, '\r') : UI_REDRAW;
}

static const ui_key keys[] = {
    { 'j', "j", k_move, "next finding" }, { KEY_DOWN, "Down", k_move, "next finding" },
    { 'k', "k", k_move, "previous finding" }, { KEY_UP, "Up", k_move, "previous finding" },
    { KEY_NPAGE, "PgDn", k_move, "page down" }, { KEY_PPAGE, "PgUp", k_move, "page up" },
    { KEY_HOME, "Home", k_move, "first finding" }, { KEY_END, "End", k_move, "last finding" },
    { 'g', "g", k_move, "first finding" }, { 'G', "G", k_move, "last finding" },
#define BN_JUMP "show the blamed region in the Tree pane (slow_steps: the first slow step " \
    "in the Timeline)"
    { '\r', "Enter", k_jump, BN_JUMP }, { KEY_ENTER, "KpEnter", k_jump, BN_JUMP },
    { 'f', "f", k_jump, "show the blamed region in the Flame pane" },
};

const ui_pane pane_bottlenecks = {
    .name = "Bottlenecks",
    .hint = "j/k: select  Enter: Tree  f: Flame",
    .init = init,
    .reload = reload,
    .draw = draw,
    .free = free,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .mouse = mouse,
};
