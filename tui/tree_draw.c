/*
 * tree_draw.c - drawing the Tree pane (state and keys: pane_tree.c): the
 * header with the view, the sort and its direction, the filter; the rows
 * in the columns treecols.c lays out for the width (figures right-aligned
 * by display width, never cut; names elided in the middle); in compare
 * mode the paired rows with "(absent)" where this side lacks the path;
 * the selection's details, each figure shown whole or not at all.
 */
#include <stdio.h>
#include <string.h>

#include "compare_view.h"
#include "namefit.h"
#include "tree_pane.h"
#include "treecols.h"

#define NEED_SCAN_MAX 5000      /* rows measured for the name column's width */

/* The on-CPU fraction of a node's sampled time ("97"), "-" when unknown. */
static void cpu_cell(char *buf, size_t cap, const prism_node *nd)
{
    if (nd->cpu_known_ns)
        snprintf(buf, cap, "%.0f", 100.0 * (double)nd->oncpu_ns / (double)nd->cpu_known_ns);
    else
        snprintf(buf, cap, "-");
}

static void node_path(const treeview *tv, uint32_t n, char *out, size_t cap)
{
    const char *parts[256];
    int k = 0;
    for (uint32_t q = n; q != PRISM_NO_NODE && q < tv->count && k < 256; q = tv->nodes[q].parent)
        parts[k++] = tv->nodes[q].name;
    size_t o = 0;
    out[0] = '\0';
    while (k-- > 0 && o + 1 < cap) {
        int m = snprintf(out + o, cap - o, "%s%s", o ? "/" : "", parts[k]);
        if (m < 0)
            break;
        o += (size_t)m < cap - o ? (size_t)m : cap - o - 1;
    }
}

static uint32_t row_depth(const tree_st *s, size_t i)
{
    return s->paired ? s->pairs.rows[i].depth : s->tv.nodes[s->tv.rows[i]].depth;
}

static const char *row_name(const tree_st *s, size_t i)
{
    return s->paired ? s->pairs.rows[i].name : s->tv.nodes[s->tv.rows[i]].name;
}

/* The name of row i's parent row (the nearest row above one level up),
 * NULL for a root or when it is far above. */
static const char *parent_name(const tree_st *s, size_t i)
{
    uint32_t d = row_depth(s, i);
    for (size_t j = i, k = 0; d > 0 && j > 0 && k < 4096; j--, k++)
        if (row_depth(s, j - 1) == d - 1)
            return row_name(s, j - 1);
    return NULL;
}

/* For the rows shown, top .. top+n: the start of each name its cell may
 * fold into "…": what it shares with its parent row, or with the rows
 * shown at its depth that begin with the same word (namefit.h). */
#define SHOWN_MAX 512
static void shared_starts(const tree_st *s, size_t top, size_t n, size_t *out)
{
    const char *names[SHOWN_MAX];
    size_t sh[SHOWN_MAX];
    if (n > SHOWN_MAX)
        n = SHOWN_MAX;
    for (size_t i = 0; i < n; i++)
        out[i] = nf_common(row_name(s, top + i), parent_name(s, top + i));
    for (size_t i = 0; i < n; i++) {    /* one depth at a time */
        uint32_t d = row_depth(s, top + i);
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first &= row_depth(s, top + j) != d;
        if (!first)
            continue;
        for (size_t j = 0; j < n; j++)
            names[j] = row_depth(s, top + j) == d ? row_name(s, top + j) : NULL;
        nf_shared(names, n, sh);
        for (size_t j = 0; j < n; j++)
            if (names[j] && sh[j] > out[j])
                out[j] = sh[j];
    }
}

/* Indentation of a row in a name column w wide (deep rows keep 8 columns
 * for the name). */
static int indent_of(uint32_t depth, int w)
{
    int indent = 1 + 2 * (int)(depth < 1000 ? depth : 1000), room = w - 3;
    if (indent > room - 8)
        indent = room - 8 > 1 ? room - 8 : 1;
    return indent;
}

/* The header labels, longest first: view, sort and direction, filter,
 * position; then without the position; then the shortest. */
static void labels(ui *u, tree_st *s, char out[3][200])
{
    char tname[96] = "all threads";
    if (s->view >= 0)
        ui_thread_label(u->a, (size_t)s->view, false, tname, sizeof tname);
    const char *dot = u->utf8 ? " \u00b7 " : " - ";
    bool down = tv_descending(&s->tv);
    const char *dir = u->utf8 ? (down ? " \u2193" : " \u2191") : (down ? " desc" : " asc");
    char view[96], filt[96] = "", pos[48];
    if (s->paired)
        snprintf(view, sizeof view, "%s", s->order == TP_BASE ? "base order" : "by change");
    else
        snprintf(view, sizeof view, "%s", tname);
    if (s->filter[0])
        snprintf(filt, sizeof filt, "%sfilter: %s (%zu rows)", dot, s->filter, tree_nrows(s));
    size_t n = tree_nrows(s);
    snprintf(pos, sizeof pos, "  %zu/%zu", n ? s->sel + 1 : 0, n);
    snprintf(out[0], sizeof out[0], "%s%sby %s%s%s%s", view, dot, tv_sort_name(s->tv.sort), dir,
             filt, pos);
    snprintf(out[1], sizeof out[1], "%s%sby %s%s%s", view, dot, tv_sort_name(s->tv.sort), dir,
             filt);
    snprintf(out[2], sizeof out[2], "%s%s%s%s%s", s->paired ? (s->order == TP_BASE ? "base" : "change") : "",
             s->paired ? dot : "", tv_sort_name(s->tv.sort), dir, s->filter[0] ? " filtered" : "");
}

/* The columns the widest row's name takes (and the header's label). */
static int name_need(const tree_st *s, const char *label, int list)
{
    size_t n = tree_nrows(s), from = 0, to = n;
    if (n > NEED_SCAN_MAX) {            /* a huge tree: the rows on screen */
        from = s->top < n ? s->top : 0;
        to = from + (size_t)(list > 0 ? list : 1);
        if (to > n)
            to = n;
    }
    int need = ui_width(label) + 2;
    const char *up[64] = { 0 };         /* the names above, by depth */
    for (size_t i = from; i < to; i++) {
        uint32_t d = row_depth(s, i);
        const char *nm = row_name(s, i), *par = d == 0 ? NULL : d <= 64 ? up[d - 1] : NULL;
        if (d < 64)
            up[d] = nm;
        if (d > 0 && !par)
            par = parent_name(s, i);
        int w = 1 + 2 * (int)(d < 1000 ? d : 1000) + 2 + nf_need(nm, nf_common(nm, par)) + 1;
        if (w > need)
            need = w;
    }
    return need;
}

/* The widest duration of each time column on the rows shown: a figure
 * wider than the column's default ("1281023.9 h") widens it, never cut. */
static void figure_widths(const tree_st *s, int list, int want[TC_N])
{
    char buf[64];
    size_t n = tree_nrows(s);
    for (int c = 0; c < TC_N; c++)
        want[c] = 0;
    for (size_t i = s->top; i < n && i < s->top + (size_t)(list > 0 ? list : 0); i++) {
        uint32_t nd = tree_row_node(s, i);
        if (nd == PRISM_NO_NODE)
            continue;
        const prism_node *p = &s->tv.nodes[nd];
        const double v[] = { (double)p->total_ns, (double)p->self_ns, p->mean_ns,
                             p->step_mean_ns, p->step_max_ns };
        const int col[] = { TC_TOTAL, TC_SELF, TC_MEAN, TC_STEP, TC_STEPMAX };
        for (int k = 0; k < 5; k++) {
            fmt_ns(buf, sizeof buf, v[k]);
            int fw = fmt_width(buf);
            if (fw > want[col[k]])
                want[col[k]] = fw;
        }
        int fw = snprintf(buf, sizeof buf, "%.1f", p->share * 100.0);   /* over 100 % */
        if (fw > want[TC_PCT])
            want[TC_PCT] = want[TC_PARENT] = fw;
    }
}

static void header(ui *u, tree_st *s, const ui_rect *r, const int *cw, char lab[3][200])
{
    static const int sort_col[TV_SORT_COUNT] = { TC_TOTAL, TC_SELF, TC_CALLS, TC_NAME };
    attr_t at = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    char buf[256];
    int pick = 0;
    while (pick < 2 && ui_width(lab[pick]) > cw[TC_NAME] - 1)
        pick++;
    int x = 0;
    for (int c = 0; c < TC_N; c++) {
        if (!cw[c])
            continue;
        attr_t a = at | (sort_col[s->tv.sort] == c ? A_UNDERLINE : 0);
        if (c == TC_NAME) {
            tv_fit(buf, sizeof buf, lab[pick], cw[c] - 1, u->utf8);
            ui_print(r, 0, x + 1, a, buf);
        } else if (tc_title(c)[0]) {
            fmt_rpad(buf, sizeof buf, tc_title(c), cw[c]);
            ui_print(r, 0, x, a, buf);
        }
        x += cw[c] + 1;
    }
}

/* A figure right-aligned in its column. */
static void figure(const ui_rect *r, int y, int x, int w, attr_t at, const char *s)
{
    char buf[64];
    fmt_rpad(buf, sizeof buf, s, w);
    ui_print(r, y, x, at, buf);
}

static void cell(ui *u, const ui_rect *r, int y, int x, int w, int c, const prism_node *nd,
                 const treeview *tv, attr_t base, bool sel)
{
    char buf[512];
    if ((c == TC_CALLS || c == TC_MEAN) && (nd->flags & PRISM_NODE_SAMPLED)) {
        figure(r, y, x, w, base, "-");  /* a `~` row times no call: its samples
                                           are in the details */
        return;
    }
    switch (c) {
    case TC_TOTAL: case TC_SELF: case TC_MEAN:
        fmt_ns(buf, sizeof buf, c == TC_TOTAL ? (double)nd->total_ns
                                : c == TC_SELF ? (double)nd->self_ns : nd->mean_ns);
        figure(r, y, x, w, base, buf);
        break;
    case TC_STEP: case TC_STEPMAX:
        if (nd->steps_seen)
            fmt_ns(buf, sizeof buf, c == TC_STEP ? nd->step_mean_ns : nd->step_max_ns);
        else
            snprintf(buf, sizeof buf, "-");
        figure(r, y, x, w, base, buf);
        break;
    case TC_CALLS:
        fmt_count(buf, sizeof buf, (double)nd->calls);
        figure(r, y, x, w, base, buf);
        break;
    case TC_DELTA:
        cmpv_delta_cell(u, r, y, x, w, ui_delta(u, nd->path_hash), base, sel);
        break;
    case TC_PCT:
        snprintf(buf, sizeof buf, "%.1f", nd->share * 100.0);
        figure(r, y, x, w, base, buf);
        break;
    case TC_PARENT: {
        const prism_node *p = nd->parent < tv->count ? &tv->nodes[nd->parent] : NULL;
        double f = p ? (p->total_ns ? (double)nd->total_ns / (double)p->total_ns : 0.0)
                     : nd->share;
        snprintf(buf, sizeof buf, "%.1f", f * 100.0);
        figure(r, y, x, w, base, buf);
        break;
    }
    case TC_CPU:
        cpu_cell(buf, sizeof buf, nd);
        figure(r, y, x, w, base, buf);
        break;
    case TC_BAR:
        ui_bar(buf, sizeof buf, nd->share, w, u->utf8);
        ui_print(r, y, x, sel ? base : ui_attr(u, CP_BAR, A_NORMAL), buf);
        break;
    }
}

static void row(ui *u, tree_st *s, const ui_rect *r, int y, size_t i, const int *cw,
                size_t shared)
{
    const treeview *tv = &s->tv;
    uint32_t n = tree_row_node(s, i);
    const prism_node *nd = n != PRISM_NO_NODE ? &tv->nodes[n] : NULL;
    const char *name = row_name(s, i);
    bool sel = i == s->sel && !s->absent, hit = ui_matches(u, name);
    attr_t base = sel ? ui_attr(u, CP_SEL, A_REVERSE) | (u->color ? 0 : A_BOLD) : A_NORMAL;
    attr_t name_at = base;
    if (!nd)
        name_at = sel ? base : ui_attr(u, CP_DIM, A_DIM);
    else if (hit)
        name_at = sel || !u->color ? base | A_BOLD | A_UNDERLINE : ui_attr(u, CP_HIGH, A_BOLD) | A_BOLD;
    bool op = nd && prism_analysis_is_op(u->a, nd->name);   /* the operator window's */
    if (nd && !hit && (op || (nd->flags & (PRISM_NODE_UNATTRIBUTED | PRISM_NODE_SAMPLED))))
        name_at = sel ? base : ui_attr(u, CP_DIM, A_DIM);  /* no region: outside, "~ " sampled */
    if (sel)
        ui_fill(r, y, base);
    char buf[512];
    int w = cw[TC_NAME], indent = indent_of(row_depth(s, i), w);
    const char *mark = !nd ? "  "
                       : op && !tv_has_children(tv, n) ? (u->utf8 ? "\u2218 " : "o ")
                       : !tv_has_children(tv, n) ? (u->utf8 ? "\u00b7 " : ". ")
                       : tv_expanded(tv, n)      ? (u->utf8 ? "\u25be " : "- ")
                                                 : (u->utf8 ? "\u25b8 " : "+ ");
    ui_print(r, y, indent, base, mark);
    nf_fit(buf, sizeof buf, name, shared, w - indent - 3, u->utf8);
    ui_print(r, y, indent + 2, name_at, buf);
    int x = w + 1;
    for (int c = TC_NAME + 1; c < TC_N; c++) {
        if (!cw[c])
            continue;
        if (nd)
            cell(u, r, y, x, cw[c], c, nd, tv, base, sel);
        else if (c == TC_TOTAL)
            figure(r, y, x, cw[c], name_at, "(absent)");
        else if (c == TC_DELTA)
            cmpv_delta_cell(u, r, y, x, cw[c], ui_delta(u, s->pairs.rows[i].hash), base, sel);
        x += cw[c] + 1;
    }
}

/* The details' height: one more line when regions were not recorded. */
static int details_rows(const ui *u)
{
    return DETAILS_ROWS + (prism_analysis_dropped_regions(u->a, NULL, NULL) ? 1 : 0);
}

/* The first of seg[0..n) that fits whole from column x (longest first). */
static void first_fit(const ui_rect *r, int y, int x, char seg[][160], int n)
{
    for (int i = 0; i < n; i++)
        if (x + ui_width(seg[i]) <= r->w) {
            ui_print(r, y, x, A_NORMAL, seg[i]);
            return;
        }
}

/* The time of node n's `~` children: what its stack samples estimate its
 * measured self time was doing. */
static double sampled_below(const treeview *tv, uint32_t n)
{
    double ns = 0;
    for (uint32_t c = tv->nodes[n].first_child; c != PRISM_NO_NODE && c < tv->count;
         c = tv->nodes[c].next_sibling)
        if (tv->nodes[c].flags & PRISM_NODE_SAMPLED)
            ns += (double)tv->nodes[c].total_ns;
    return ns;
}

static void details(ui *u, tree_st *s, const ui_rect *r, int y)
{
    const treeview *tv = &s->tv;
    uint32_t n = tree_row_node(s, s->sel);
    attr_t lab = ui_attr(u, CP_TITLE, A_BOLD) | A_BOLD;
    char line[512], a[32], b[32], c[32], d[32], seg[6][160];
    for (int x = 0; x < r->w; x++)
        ui_print(r, y, x, ui_attr(u, CP_DIM, A_NORMAL), u->utf8 ? "\u2500" : "-");
    ui_print(r, y, 2, lab, " Details ");
    if (n == PRISM_NO_NODE || s->absent)       /* compare: the Diff line says why */
        return;
    const prism_node *nd = &tv->nodes[n];
    node_path(tv, n, line, sizeof line);
    char fit[512];
    tv_fit_left(fit, sizeof fit, line, r->w - 8, u->utf8);
    ui_print(r, y + 1, 1, lab, "Path");
    ui_print(r, y + 1, 7, A_NORMAL, fit);

    bool sampled = nd->flags & PRISM_NODE_SAMPLED;    /* a `~` row: samples, no calls */
    fmt_ns(a, sizeof a, (double)nd->total_ns);
    fmt_ns(b, sizeof b, (double)nd->self_ns);
    fmt_count(c, sizeof c, (double)nd->calls);
    ui_print(r, y + 2, 1, lab, "Time");
    int nt = 0;
    snprintf(seg[nt++], sizeof seg[0], "total %s", a);
    snprintf(seg[nt++], sizeof seg[0], "self %s (%.0f%%)", b,
             nd->total_ns ? 100.0 * (double)nd->self_ns / (double)nd->total_ns : 0.0);
    double est = sampled ? 0 : sampled_below(tv, n);
    if (est > 0) {                      /* its measured self time, estimated below */
        fmt_ns(d, sizeof d, est);
        snprintf(seg[nt++], sizeof seg[0], "~ rows: %s of it (an estimate)", d);
    }
    snprintf(seg[nt++], sizeof seg[0], sampled ? "samples %s" : "calls %s", c);
    snprintf(seg[nt++], sizeof seg[0], "share %.1f%% of %s", nd->share * 100.0,
             tv->tree == prism_analysis_tree(u->a) || tv->tree == prism_analysis_tree_sampled(u->a)
                 ? "total" : "the thread");
    cmpv_segments(r, y + 2, 7, A_NORMAL, seg, nt);

    fmt_ns(a, sizeof a, (double)nd->min_ns);
    fmt_ns(b, sizeof b, nd->mean_ns);
    fmt_ns(c, sizeof c, (double)nd->max_ns);
    fmt_ns(d, sizeof d, nd->std_ns);
    ui_print(r, y + 3, 1, lab, "Call");
    snprintf(seg[0], sizeof seg[0], "min %s", a);
    snprintf(seg[1], sizeof seg[1], "mean %s", b);
    snprintf(seg[2], sizeof seg[2], "max %s", c);
    snprintf(seg[3], sizeof seg[3], "std %s", d);
    int ns = 4;
    if (sampled) {                      /* the samples, said as such */
        fmt_ns(a, sizeof a, nd->mean_ns);
        fmt_count(c, sizeof c, (double)nd->calls);
        snprintf(seg[0], sizeof seg[0], "an estimate from %s stack sample%s (%s each): no call timed",
                 c, nd->calls == 1 ? "" : "s", a);
        if (7 + ui_width(seg[0]) > r->w)
            snprintf(seg[0], sizeof seg[0], "an estimate from %s stack sample%s: no call timed", c,
                     nd->calls == 1 ? "" : "s");
        ns = 1;
    }
    if (nd->cpu_known_ns) {             /* wait vs work, measured */
        double k = (double)nd->cpu_known_ns;
        snprintf(seg[ns], sizeof seg[ns], "on CPU %.0f%%", 100.0 * (double)nd->oncpu_ns / k);
        snprintf(seg[ns + 1], sizeof seg[ns + 1], "run queue %.0f%%  blocked %.0f%%",
                 100.0 * (double)nd->runq_ns / k, 100.0 * (double)nd->offcpu_ns / k);
        ns += 2;
    }
    cmpv_segments(r, y + 3, 7, A_NORMAL, seg, ns);

    /* per-step and GPU figures live on the all-threads node */
    const prism_tree *all = prism_analysis_tree(u->a);
    uint32_t m = tv->tree == all ? n : prism_analysis_find(u->a, nd->path_hash);
    const prism_node *mn = m != PRISM_NO_NODE && m < all->count ? &all->nodes[m] : NULL;
    const char *scope = tv->tree == all ? "" : " (all threads)";
    ui_print(r, y + 4, 1, lab, "Step");
    if (mn && mn->steps_seen) {
        fmt_ns(a, sizeof a, mn->step_mean_ns);
        fmt_ns(b, sizeof b, mn->step_std_ns);
        fmt_ns(c, sizeof c, mn->step_max_ns);
        snprintf(seg[0], sizeof seg[0], "mean %s", a);
        snprintf(seg[1], sizeof seg[1], "std %s", b);
        snprintf(seg[2], sizeof seg[2], "max %s", c);
        snprintf(seg[3], sizeof seg[3], "in %llu steps%s", (unsigned long long)mn->steps_seen,
                 scope);
        cmpv_segments(r, y + 4, 7, A_NORMAL, seg, 4);
    } else if (sampled) {
        ui_print(r, y + 4, 7, A_NORMAL, "no per-step figures for a sampled path");
    } else if (prism_analysis_is_op(u->a, nd->name) && prism_analysis_steps(u->a) &&
               prism_analysis_steps(u->a)->op_steps) {
        /* the window's steps are none of the steps timed and shared out */
        char w[96];
        snprintf(w, sizeof w, "recorded in the operator window (%llu steps), left out of the "
                 "step figures", (unsigned long long)prism_analysis_steps(u->a)->op_steps);
        ui_print(r, y + 4, 7, A_NORMAL, w);
    } else if (nd->total_ns && !nd->in_step_ns && prism_analysis_steps(u->a) &&
               prism_analysis_steps(u->a)->sampled) {
        /* its calls began outside every sampled step: between or around
         * them (a region around the loop holds them) */
        ui_print(r, y + 4, 7, A_NORMAL, "its calls began outside every sampled step");
    } else {
        ui_print(r, y + 4, 7, A_NORMAL, "not seen in a sampled step");
    }
    ui_print(r, y + 5, 1, lab, "GPU");
    if (mn && mn->bytes > 0 && !(mn->gpu_ns || mn->gpu_launches)) {
        /* work counters instead (CPU work, or GPU work without CUPTI) */
        ui_print(r, y + 5, 1, lab, "Work");
        snprintf(seg[0], sizeof seg[0], "%.3g GFLOP over %.3g GB: %.2f FLOP/byte (ridge %g)%s",
                 mn->flops / 1e9, mn->bytes / 1e9, mn->flops / mn->bytes,
                 prism_analysis_work(u->a)->ridge, scope);
        snprintf(seg[1], sizeof seg[1], "%.3g GFLOP over %.3g GB: %.2f FLOP/byte",
                 mn->flops / 1e9, mn->bytes / 1e9, mn->flops / mn->bytes);
        snprintf(seg[2], sizeof seg[2], "%.2f FLOP/byte", mn->flops / mn->bytes);
        first_fit(r, y + 5, 7, seg, 3);
    } else if (mn && (mn->gpu_ns || mn->gpu_launches)) {
        fmt_ns(a, sizeof a, (double)mn->gpu_ns);
        fmt_count(b, sizeof b, (double)mn->gpu_launches);
        int k = 0;
        if (mn->bytes > 0)
            snprintf(seg[k++], sizeof seg[0], "%s of GPU work from %s launches; %.2f FLOP/byte%s",
                     a, b, mn->flops / mn->bytes, scope);
        snprintf(seg[k++], sizeof seg[0], "%s of GPU work from %s launches%s", a, b, scope);
        snprintf(seg[k++], sizeof seg[0], "%s of GPU work", a);
        first_fit(r, y + 5, 7, seg, k);
    } else {
        ui_print(r, y + 5, 7, A_NORMAL,
                 prism_analysis_gpu(u->a)->present ? "no GPU work launched here" : "no GPU data");
    }
    if (details_rows(u) > DETAILS_ROWS) {       /* the file has regions not recorded */
        ui_print(r, y + 6, 1, lab, "Lost");
        if (nd->unrecorded)
            ui_printf(r, y + 6, 7, ui_attr(u, CP_MEDIUM, A_NORMAL),
                      "%llu regions not recorded under this node (buffers full: dropped whole)",
                      (unsigned long long)nd->unrecorded);
        else
            ui_print(r, y + 6, 7, A_NORMAL, "none known under this node");
    }
}

/* The first row shown: the selection in view; after a selection made
 * elsewhere, the row a third down the list, or lower so that its root
 * shows when the path fits. */
static size_t first_row(tree_st *s, int list)
{
    size_t n = tree_nrows(s), top = s->top, page = list > 0 ? (size_t)list : 1;
    if (s->recenter) {
        size_t third = page / 3;
        top = s->sel > third ? s->sel - third : 0;
        uint32_t d = row_depth(s, s->sel);
        size_t root = s->sel;           /* the row of its root: up d levels */
        while (root > 0 && d > 0 && row_depth(s, root) > 0)
            root--;
        if (s->sel - root < page && root < top)
            top = root;
    }
    if (top > s->sel)                   /* keep the selection in view */
        top = s->sel;
    if (s->sel >= top + page)
        top = s->sel - page + 1;
    if (top + page > n)                 /* no empty space at the end */
        top = n > page ? n - page : 0;
    return top;
}

int tree_side_cols(const tree_st *s)
{
    size_t n = tree_nrows(s), top = s->top < n ? s->top : 0;
    size_t shown = s->page > 0 ? (size_t)s->page : 1, sh[SHOWN_MAX];
    if (shown > n - top)
        shown = n - top;
    if (shown > SHOWN_MAX)
        shown = SHOWN_MAX;
    shared_starts(s, top, shown, sh);
    int need = TC_NAME_MIN;
    for (size_t i = 0; i < shown; i++) {
        uint32_t d = row_depth(s, top + i);
        int w = 1 + 2 * (int)(d < 1000 ? d : 1000) + 2 + nf_need(row_name(s, top + i), sh[i]) + 1;
        need = w > need ? w : need;
    }
    if (need > TC_NAME_CAP)
        need = TC_NAME_CAP;
    return need + 1 + tc_fixed(TC_TOTAL) + 1 + tc_fixed(TC_DELTA);
}

void tree_draw(ui *u, tree_st *s, const ui_rect *r)
{
    int h = r->h, w = r->w;
    s->last_h = h;
    s->list_y = 1;
    bool show = h >= DETAILS_AUTO_H ? !s->details_hidden : s->details_small;
    int want = details_rows(u) + (u->cmp ? 1 : 0);
    int det = show && h - 1 - want >= 1 ? want : 0;
    int list = h - 1 - det;
    if (list < 0)
        list = 0;
    char lab[3][200];
    labels(u, s, lab);
    unsigned avail = 0;
    for (int c = 0; c < TC_N; c++)
        avail |= 1u << c;
    if (!u->cmp || u->side == 0)        /* the change: on the new side only */
        avail &= ~(1u << TC_DELTA);
    if (!prism_analysis_cpu_present(u->a))
        avail &= ~(1u << TC_CPU);
    const prism_tree *t = s->tv.tree;
    if (!t || !t->count || t->first_root >= t->count || !t->nodes[t->first_root].steps_seen)
        avail &= ~(1u << TC_STEP | 1u << TC_STEPMAX);
    size_t n = tree_nrows(s);
    if (n && s->sel >= n)
        s->sel = n - 1;
    if (n)
        s->top = first_row(s, list);
    int cw[TC_N], lw = w, fig[TC_N];
    const tree_st *o = u->cmp ? u->side_state[1 - u->side][PANE_TREE] : NULL;
    if (s->paired && o && o->last_w > 0 && o->last_w < lw)
        lw = o->last_w;                 /* both sides in the same columns */
    s->last_w = w;
    figure_widths(s, list, fig);
    tc_layout(lw, name_need(s, lab[0], list), avail, fig, cw);
    header(u, s, r, cw, lab);
    if (!n) {
        const char *why = s->tv.oom || s->pairs.oom ? "out of memory"
                          : s->filter[0] ? "no region matches the filter"
                          : s->tv.keep ? "no changed regions (D: show all)"
                          : s->view >= 0 ? "no regions recorded on this thread (t: next)"
                                         : "no regions recorded";
        ui_print(r, 2, 2, A_NORMAL, why);
        return;
    }
    s->page = list;
    size_t shared[SHOWN_MAX], shown = n - s->top < (size_t)list ? n - s->top : (size_t)list;
    shared_starts(s, s->top, shown, shared);
    for (int i = 0; i < list && s->top + (size_t)i < n; i++)
        row(u, s, r, 1 + i, s->top + (size_t)i, cw, i < SHOWN_MAX ? shared[i] : 0);
    if (det)
        details(u, s, r, 1 + list);
    if (det && u->cmp)
        cmpv_diff_line(u, r, 1 + list + details_rows(u),
                       s->absent || tree_row_hash(s, s->sel) != u->sel_hash);
}
