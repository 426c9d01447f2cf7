/*
 * pane_gpu.c - the GPU pane: busy/idle share of the GPU time span,
 * synchronisation and API time, launches and the share of small kernels,
 * dropped GPU records, then two scrollable tables: kernels (count, total,
 * mean, share with a bar) and transfers (direction, host memory kind,
 * count, bytes, time, bandwidth).  `t` moves the focus between the tables
 * (Tab is global).  Without GPU data it says why.  With a filter
 * (u->filter) the kernels table lists the matching kernels only; `r`
 * reverses its order (by total: smallest first).  Mouse: a click selects a
 * row (and focuses its table), the wheel scrolls the focused table.
 *
 * Everything comes from prism_gpu_stats; the cursor of each table is view
 * state clamped at draw time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callers.h"
#include "treeview.h"
#include "ui.h"

enum { T_KERNELS, T_COPIES };

typedef struct gpuv {
    int focus;                          /* T_KERNELS / T_COPIES             */
    int sel[2], top[2];                 /* cursor and first row shown       */
    int page[2];                        /* rows shown at the last draw      */
    int list_y[2], list_n[2];           /* first row and rows drawn (mouse) */
    bool rev;                           /* kernels smallest first           */
    size_t *kv, nkv;                    /* kernels shown: indices, in order */
} gpuv;

/* The kernels shown: those passing the filter, by total (the analysis'
 * order) or reversed. */
static void kernel_view(const ui *u, gpuv *gv, const prism_gpu_stats *g)
{
    free(gv->kv);
    gv->kv = malloc((g->nkernels ? g->nkernels : 1) * sizeof *gv->kv);
    gv->nkv = 0;
    for (size_t i = 0; gv->kv && i < g->nkernels; i++) {
        size_t k = gv->rev ? g->nkernels - 1 - i : i;
        if (ui_filter_matches(u, g->kernels[k].name))
            gv->kv[gv->nkv++] = k;
    }
}

/* s right-aligned in w columns ("µs": two bytes, one column). */
static void put_right(const ui_rect *r, int row, int x, int w, attr_t at, const char *s)
{
    char pad[96];
    fmt_rpad(pad, sizeof pad, s, w);
    ui_print(r, row, x, at, pad);
}

static const char *copy_name(uint32_t k)
{
    static const char *const names[] = { "?", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" };
    return k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static const char *mem_name(uint32_t k)
{
    static const char *const names[] = { "-", "pageable", "pinned", "device", "managed" };
    return k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void draw_empty(ui *u, const ui_rect *r, const prism_gpu_stats *g)
{
    ui_print(r, 1, 1, ui_attr(u, CP_TITLE, A_BOLD), "No GPU data in this profile");
    if (g->status && g->status[0]) {
        ui_print(r, 3, 1, A_NORMAL, "GPU collection status:");
        ui_print(r, 4, 3, A_BOLD, g->status);
    } else {
        ui_print(r, 3, 1, A_NORMAL, "It was collected without CUDA: no kernels, copies or");
        ui_print(r, 4, 1, A_NORMAL, "synchronisation were recorded.");
    }
    if (g->dropped)
        ui_printf(r, 6, 1, ui_attr(u, CP_HIGH, A_BOLD), "%llu GPU records were dropped",
                  (unsigned long long)g->dropped);
}

/* Summary lines; returns the rows used. */
static int overview(ui *u, const ui_rect *r, const prism_gpu_stats *g)
{
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD);
    char busy[32], span[32], sync[32], kern[32], copy[32], mset[32], api[32];
    fmt_ns(busy, sizeof busy, (double)g->busy_ns);
    fmt_ns(span, sizeof span, (double)g->span_ns);
    fmt_ns(sync, sizeof sync, (double)g->sync_ns);
    fmt_ns(kern, sizeof kern, (double)g->kernel_ns);
    fmt_ns(copy, sizeof copy, (double)g->copy_ns);
    fmt_ns(mset, sizeof mset, (double)g->memset_ns);
    fmt_ns(api, sizeof api, (double)g->api_ns);
    uint64_t wall = prism_analysis_span_ns(u->a);
    int row = 0, c;

    /* each line: whole parts while they fit (a figure is never cut) */
    char p[5][96];
    const char *pp[5] = { p[0], p[1], p[2], p[3], p[4] };
    c = 1 + ui_print(r, row, 1, lab, "Busy ");
    snprintf(p[0], sizeof p[0], "%s of a %s span", busy, span);
    snprintf(p[1], sizeof p[1], "(%.1f%%)", 100.0 - g->idle_share * 100.0);
    snprintf(p[2], sizeof p[2], "idle %.1f%%", g->idle_share * 100.0);
    attr_t idle = g->idle_share >= 0.5 ? ui_attr(u, CP_HIGH, A_BOLD)
                : g->idle_share >= 0.3 ? ui_attr(u, CP_MEDIUM, A_BOLD) : A_NORMAL;
    const attr_t busy_at[] = { A_NORMAL, A_NORMAL, idle };
    ui_print_parts(r, row++, c, pp, busy_at, 3, " ");

    c = 1 + ui_print(r, row, 1, lab, "Sync ");
    snprintf(p[0], sizeof p[0], "%s (%.1f%% of wall)", sync, pct(g->sync_ns, wall));
    snprintf(p[1], sizeof p[1], "kernels %s", kern);
    snprintf(p[2], sizeof p[2], "copies %s", copy);
    snprintf(p[3], sizeof p[3], "memset %s", mset);
    snprintf(p[4], sizeof p[4], "API %s", api);
    ui_print_parts(r, row++, c, pp, NULL, 5, "  ");

    c = 1 + ui_print(r, row, 1, lab, "Launches ");
    snprintf(p[0], sizeof p[0], "%llu", (unsigned long long)g->launches);
    snprintf(p[1], sizeof p[1], "dropped %llu", (unsigned long long)g->dropped);
    snprintf(p[2], sizeof p[2], "small (< 10 us) %llu = %.1f%%",
             (unsigned long long)g->small_kernels, pct(g->small_kernels, g->launches));
    p[3][0] = '\0';
    if (g->comm_launches) {             /* NCCL's kernels: communication, not compute */
        char comm[32];
        fmt_ns(comm, sizeof comm, (double)g->comm_kernel_ns);
        snprintf(p[3], sizeof p[3], "NCCL %llu, %s", (unsigned long long)g->comm_launches, comm);
    }
    const attr_t launch_at[] = { A_NORMAL, g->dropped ? ui_attr(u, CP_HIGH, A_BOLD) | A_BOLD
                                                      : A_NORMAL, A_NORMAL, A_NORMAL };
    ui_print_parts(r, row++, c, pp, launch_at, 4, "  ");

    if (g->status && g->status[0]) {    /* whole words: a path goes before a figure */
        char fit[512];
        c = 1 + ui_print(r, row, 1, lab, "Status ");
        ui_elide_words(fit, sizeof fit, g->status, r->w - c, u->utf8);
        ui_print(r, row++, c, A_NORMAL, fit);
    }
    return row;
}

/* Keep the cursor in 0..n-1 and visible in `rows` rows. */
static void clamp(gpuv *gv, int t, int n, int rows)
{
    gv->page[t] = rows > 0 ? rows : 1;
    if (gv->sel[t] >= n)
        gv->sel[t] = n - 1;
    if (gv->sel[t] < 0)
        gv->sel[t] = 0;
    if (gv->top[t] > gv->sel[t])
        gv->top[t] = gv->sel[t];
    if (rows > 0 && gv->sel[t] >= gv->top[t] + rows)
        gv->top[t] = gv->sel[t] - rows + 1;
    if (gv->top[t] > n - rows)
        gv->top[t] = n - rows;
    if (gv->top[t] < 0)
        gv->top[t] = 0;
}

static void title(ui *u, const ui_rect *r, int row, const gpuv *gv, int t, const char *text,
                  size_t n, size_t shown_from, int rows)
{
    attr_t at = gv->focus == t ? ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD : ui_attr(u, CP_DIM, A_NORMAL);
    int c = 1 + ui_printf(r, row, 1, at, "%s%s (%zu)", gv->focus == t ? "> " : "  ", text, n);
    if (t == T_KERNELS) {
        const prism_gpu_stats *g = prism_analysis_gpu(u->a);
        char pat[64];
        if (u->filter[0]) {
            tv_fit_mid(pat, sizeof pat, u->filter, 20, u->utf8);
            c += ui_printf(r, row, c, at, " filter: %s, %zu of %zu", pat, n, g->nkernels);
        }
        c += ui_printf(r, row, c, ui_attr(u, CP_DIM, A_NORMAL), " by total %s",
                       u->utf8 ? (gv->rev ? "\u2191" : "\u2193") : (gv->rev ? "(asc)" : "(desc)"));
    }
    if ((size_t)rows < n)
        ui_printf(r, row, c + 1, ui_attr(u, CP_DIM, A_NORMAL), "%zu-%zu", shown_from + 1,
                  shown_from + (size_t)rows < n ? shown_from + (size_t)rows : n);
}

static void kernels(ui *u, gpuv *gv, const ui_rect *r, int row, int rows, const prism_gpu_stats *g)
{
    static const int fixed[5] = { 0, 8, 10, 10, 18 };
    int wd[5], n = ui_columns(r->w - 2, fixed, 5, 12, wd);
    int x[5] = { 2 };
    for (int i = 1; i < 5; i++)
        x[i] = x[i - 1] + wd[i - 1] + 1;
    clamp(gv, T_KERNELS, (int)gv->nkv, rows);
    title(u, r, row++, gv, T_KERNELS, "Kernels", gv->nkv, (size_t)gv->top[T_KERNELS], rows);
    static const char *const head[5] = { "kernel", "count", "total", "mean", "share" };
    attr_t ha = A_UNDERLINE;
    for (int i = 0; i < n; i++)
        ui_printf(r, row, x[i], ha, i == 0 || i == 4 ? "%-*s" : "%*s", wd[i], head[i]);
    row++;
    if (!gv->nkv)
        ui_print(r, row, 2, ui_attr(u, CP_DIM, A_NORMAL),
                 g->nkernels ? "no kernel passes the filter" : "no kernels recorded");
    gv->list_y[T_KERNELS] = row;
    gv->list_n[T_KERNELS] = 0;
    for (int i = 0; i < rows && (size_t)(gv->top[T_KERNELS] + i) < gv->nkv; i++, row++) {
        int k = gv->top[T_KERNELS] + i;
        const prism_kernel_stat *ks = &g->kernels[gv->kv[k]];
        gv->list_n[T_KERNELS] = i + 1;
        bool sel = gv->focus == T_KERNELS && k == gv->sel[T_KERNELS];
        attr_t at = sel ? ui_attr(u, CP_SEL, A_REVERSE) : A_NORMAL;
        if (sel)
            ui_fill(r, row, at);
        char tot[32], mean[32], cnt[32], bar[256], name[1024];
        fmt_ns(tot, sizeof tot, (double)ks->total_ns);
        fmt_ns(mean, sizeof mean, ks->mean_ns);
        fmt_count(cnt, sizeof cnt, (double)ks->count);
        attr_t nat = at | (ui_matches(u, ks->name) ? A_BOLD | A_UNDERLINE : 0);
        tv_fit_mid(name, sizeof name, ks->name ? ks->name : "?", wd[0], u->utf8);
        ui_print(r, row, x[0], nat, name);
        if (n > 1)
            put_right(r, row, x[1], wd[1], at, cnt);
        if (n > 2)
            put_right(r, row, x[2], wd[2], at, tot);
        if (n > 3)
            put_right(r, row, x[3], wd[3], at, mean);
        if (n > 4) {
            ui_bar(bar, sizeof bar, ks->share, wd[4] - 7, u->utf8);
            ui_print(r, row, x[4], sel ? at : ui_attr(u, CP_BAR, A_NORMAL), bar);
            ui_printf(r, row, x[4] + wd[4] - 6, at, "%5.1f%%", ks->share * 100.0);
        }
    }
}

static void copies(ui *u, gpuv *gv, const ui_rect *r, int row, int rows, const prism_gpu_stats *g)
{
    static const int fixed[6] = { 9, 9, 8, 10, 10, 10 };
    int wd[6], n = ui_columns(r->w - 2, fixed, 6, 1, wd);
    int x[6] = { 2 };
    for (int i = 1; i < 6; i++)
        x[i] = x[i - 1] + wd[i - 1] + 1;
    clamp(gv, T_COPIES, (int)g->ncopies, rows);
    title(u, r, row++, gv, T_COPIES, "Transfers", g->ncopies, (size_t)gv->top[T_COPIES], rows);
    static const char *const head[6] = { "direction", "host mem", "count", "bytes", "time", "GB/s" };
    for (int i = 0; i < n; i++)
        ui_printf(r, row, x[i], A_UNDERLINE, i < 2 ? "%-*s" : "%*s", wd[i], head[i]);
    row++;
    if (!g->ncopies)
        ui_print(r, row, 2, ui_attr(u, CP_DIM, A_NORMAL), "no transfers recorded");
    gv->list_y[T_COPIES] = row;
    gv->list_n[T_COPIES] = 0;
    for (int i = 0; i < rows && (size_t)(gv->top[T_COPIES] + i) < g->ncopies; i++, row++) {
        int k = gv->top[T_COPIES] + i;
        gv->list_n[T_COPIES] = i + 1;
        const prism_copy_stat *cs = &g->copies[k];
        bool sel = gv->focus == T_COPIES && k == gv->sel[T_COPIES];
        attr_t at = sel ? ui_attr(u, CP_SEL, A_REVERSE) : A_NORMAL;
        if (sel)
            ui_fill(r, row, at);
        char bytes[32], tm[32], cnt[32];
        fmt_bytes(bytes, sizeof bytes, (double)cs->bytes);
        fmt_ns(tm, sizeof tm, (double)cs->total_ns);
        fmt_count(cnt, sizeof cnt, (double)cs->count);
        const char *cols[6] = { copy_name(cs->copy_kind), mem_name(cs->src_kind), cnt, bytes, tm,
                                NULL };
        for (int c = 0; c < n; c++) {
            if (c >= 2 && c <= 4)
                put_right(r, row, x[c], wd[c], at, cols[c]);
            else if (c == 5)
                ui_printf(r, row, x[c], at, "%*.2f", wd[c], cs->gb_per_s);
            else
                ui_printf(r, row, x[c], at, c < 2 ? "%-*s" : "%*s", wd[c], cols[c]);
        }
    }
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    gpuv *gv = st;
    ui_rect r = { y, x, h, w };
    const prism_gpu_stats *g = prism_analysis_gpu(u->a);
    gv->list_n[0] = gv->list_n[1] = 0;
    if (!g->present) {
        draw_empty(u, &r, g);
        return;
    }
    kernel_view(u, gv, g);
    int row = overview(u, &r, g) + 1;
    /* two tables of title + header + rows, a blank line between */
    int left = h - row - 5, kw = gv->nkv ? (int)gv->nkv : 1,
        cw = g->ncopies ? (int)g->ncopies : 1, kr, cr;
    if (left < 2) {                      /* room for the focused table only */
        int rows = h - row - 2 > 1 ? h - row - 2 : 1;
        if (gv->focus == T_KERNELS)
            kernels(u, gv, &r, row, rows, g);
        else
            copies(u, gv, &r, row, rows, g);
        return;
    }
    if (kw + cw <= left) {
        kr = kw;
        cr = left - kr;
    } else {
        cr = cw < left / 3 ? cw : left / 3 > 1 ? left / 3 : 1;
        kr = left - cr;
        if (kr > kw) {
            kr = kw;
            cr = left - kr;
        }
    }
    kernels(u, gv, &r, row, kr, g);
    copies(u, gv, &r, row + kr + 3, cr, g);
}

static void *init(ui *u)
{
    (void)u;
    return calloc(1, sizeof(gpuv));
}

static void free_st(void *st)
{
    gpuv *gv = st;
    if (gv)
        free(gv->kv);
    free(gv);
}

static int k_move(ui *u, void *st, int key)
{
    gpuv *gv = st;
    const prism_gpu_stats *g = prism_analysis_gpu(u->a);
    kernel_view(u, gv, g);
    int t = gv->focus, n = t == T_KERNELS ? (int)gv->nkv : (int)g->ncopies;
    int page = gv->page[t] > 1 ? gv->page[t] : 1;
    switch (key) {
    case 'j': case KEY_DOWN: gv->sel[t]++; break;
    case 'k': case KEY_UP: gv->sel[t]--; break;
    case KEY_NPAGE: gv->sel[t] += page; gv->top[t] += page; break;
    case KEY_PPAGE: gv->sel[t] -= page; gv->top[t] -= page; break;
    case KEY_HOME: case 'g': gv->sel[t] = 0; break;
    case KEY_END: case 'G': gv->sel[t] = n - 1; break;
    default: break;
    }
    if (gv->sel[t] >= n)
        gv->sel[t] = n - 1;
    if (gv->sel[t] < 0)
        gv->sel[t] = 0;
    if (gv->top[t] < 0)
        gv->top[t] = 0;
    return UI_REDRAW;
}

static int k_focus(ui *u, void *st, int key)
{
    gpuv *gv = st;
    (void)u; (void)key;
    gv->focus = gv->focus == T_KERNELS ? T_COPIES : T_KERNELS;
    return UI_REDRAW;
}

/* n / N: the next / previous kernel whose name matches the search. */
static int k_match(ui *u, void *st, int key)
{
    gpuv *gv = st;
    const prism_gpu_stats *g = prism_analysis_gpu(u->a);
    kernel_view(u, gv, g);
    int n = (int)gv->nkv, d = key == 'N' ? -1 : 1;
    if (!u->search[0] || !n) {
        ui_message(u, "no search: / to search kernel names");
        return UI_REDRAW;
    }
    for (int i = 1; i <= n; i++) {
        int k = ((gv->sel[T_KERNELS] + d * i) % n + n) % n;
        if (ui_matches(u, g->kernels[gv->kv[k]].name)) {
            gv->focus = T_KERNELS;
            gv->sel[T_KERNELS] = k;
            return UI_REDRAW;
        }
    }
    ui_message(u, "no kernel matches \"%s\"", u->search);
    return UI_REDRAW;
}

/* r: the kernels smallest first (or back), keeping the selected kernel. */
static int k_reverse(ui *u, void *st, int key)
{
    gpuv *gv = st;
    (void)key;
    const prism_gpu_stats *g = prism_analysis_gpu(u->a);
    kernel_view(u, gv, g);
    size_t keep = gv->sel[T_KERNELS] >= 0 && (size_t)gv->sel[T_KERNELS] < gv->nkv
                ? gv->kv[gv->sel[T_KERNELS]] : (size_t)-1;
    gv->rev = !gv->rev;
    kernel_view(u, gv, g);
    for (size_t i = 0; i < gv->nkv; i++)
        if (gv->kv[i] == keep)
            gv->sel[T_KERNELS] = (int)i;
    ui_message(u, "kernels by total, %s first", gv->rev ? "smallest" : "largest");
    return UI_REDRAW;
}

/* Mouse: a click selects the row (and focuses its table), the wheel
 * moves the focused table's selection three rows. */
static int mouse(ui *u, void *st, int event, int row, int col)
{
    gpuv *gv = st;
    (void)col;
    if (!gv)
        return UI_NONE;
    if (event == UI_MOUSE_WHEEL_UP || event == UI_MOUSE_WHEEL_DOWN) {
        for (int i = 0; i < 3; i++)
            k_move(u, gv, event == UI_MOUSE_WHEEL_UP ? KEY_UP : KEY_DOWN);
        return UI_REDRAW;
    }
    if (event != UI_MOUSE_CLICK && event != UI_MOUSE_DOUBLE)
        return UI_NONE;
    for (int t = 0; t < 2; t++)
        if (row >= gv->list_y[t] && row < gv->list_y[t] + gv->list_n[t]) {
            gv->focus = t;
            gv->sel[t] = gv->top[t] + row - gv->list_y[t];
            return UI_REDRAW;
        }
    return UI_NONE;
}

static const ui_key keys[] = {
    { 'j', "j", k_move, "next row" }, { KEY_DOWN, "Down", k_move, "next row" },
    { 'k', "k", k_move, "previous row" }, { KEY_UP, "Up", k_move, "previous row" },
    { KEY_NPAGE, "PgDn", k_move, "page down" }, { KEY_PPAGE, "PgUp", k_move, "page up" },
    { KEY_HOME, "Home", k_move, "first row" }, { KEY_END, "End", k_move, "last row" },
    { 'g', "g", k_move, "first row" }, { 'G', "G", k_move, "last row" },
    { 't', "t", k_focus, "focus kernels / transfers" },
    { 'r', "r", k_reverse, "reverse the kernels' order (smallest first)" },
    { 'n', "n", k_match, "next kernel matching the search" },
    { 'N', "N", k_match, "previous kernel matching the search" },
};

const ui_pane pane_gpu = {
    .name = "GPU",
    .hint = "j/k: scroll  t: kernels/transfers  r: reverse",
    .init = init,
    .draw = draw,
    .free = free_st,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .mouse = mouse,
};
