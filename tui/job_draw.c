/*
 * job_draw.c - the job view's screen: the tab bar, the Ranks heatmap (one
 * row per rank, one column per aligned step or bin of steps, each cell
 * shaded by its value against the median cell), the Stragglers' findings,
 * the Table, Help, and a status line with the job's figures.  Drawing
 * reads the job (prism/job.h) and the view state; it computes nothing
 * that the analysis has.  Every name from a file goes through ui_print,
 * which escapes it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "job_view.h"

/* ---- text lines (Stragglers, Help): generated, then shown from text_top ---- */

typedef struct lines {
    const ui_rect *r;           /* NULL: only count                        */
    size_t top, n;
} lines;

static void line(lines *L, attr_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(lines *L, attr_t at, const char *fmt, ...)
{
    if (L->r && L->n >= L->top && L->n - L->top < (size_t)L->r->h) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        ui_print(L->r, (int)(L->n - L->top), 0, at, buf);
    }
    L->n++;
}

static const char *host_of(const prism_job_rank *k)
{
    return k->sum.host && *k->sum.host ? k->sum.host : "?";
}

/* Bytes of the first `cols` characters of s[0..len). */
static size_t take_cols(const char *s, size_t len, int cols)
{
    size_t i = 0;
    for (int c = 0; i < len && c < cols; c++)
        for (i++; i < len && ((unsigned char)s[i] & 0xc0) == 0x80; i++)
            ;
    return i;
}

/* One line of text wrapped at words into `width` columns; the lines after
 * the first are indented 4 more than it. */
static void wrap(lines *L, const char *s, size_t len, int width, attr_t at)
{
    size_t indent = 0;
    while (indent < len && s[indent] == ' ')
        indent++;
    int cont = (int)indent + 4;
    if (width - cont < 20)
        cont = 0;
    size_t pos = 0;
    do {
        int lead = pos ? cont : 0, room = width - lead > 1 ? width - lead : 1;
        size_t take = take_cols(s + pos, len - pos, room);
        if (pos + take < len) {         /* cut at the last space, if any */
            size_t sp = take;
            while (sp > (pos ? 0 : indent) && s[pos + sp] != ' ')
                sp--;
            if (sp > (pos ? 0 : indent))
                take = sp;
        }
        line(L, at, "%*s%.*s", lead, "", (int)take, s + pos);
        pos += take;
        while (pos < len && s[pos] == ' ')
            pos++;
    } while (pos < len);
}

/* The findings as analyze words them (job_view.c keeps its section). */
static void straggler_lines(const jv *v, lines *L)
{
    line(L, A_BOLD, "Stragglers (as prism-top analyze reports them; Enter: the first slowed "
         "step, c: compare with the median rank)");
    line(L, A_NORMAL, "%s", "");
    if (!v->findings) {
        line(L, A_NORMAL, "  %zu straggler%s", v->job->nstragglers,
             v->job->nstragglers == 1 ? "" : "s");
        return;
    }
    int width = v->u.cols > 0 ? v->u.cols : 80;
    for (const char *p = v->findings; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool head = len > 2 && p[2] != ' ';     /* "  rank 3 is a straggler: ..." */
        wrap(L, p, len, width, head ? A_BOLD : A_NORMAL);
        p += len + (e ? 1 : 0);
    }
}

/* Help: the key table, one entry per binding ("j/Down"). */
static void help_lines(lines *L)
{
    line(L, A_BOLD, "Job view keys");
    for (size_t i = 0; i < jv_nkeys; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = jv_keys[k].fn == jv_keys[i].fn && !strcmp(jv_keys[k].help, jv_keys[i].help);
        if (seen)
            continue;
        char names[48];
        size_t o = 0;
        names[0] = '\0';
        for (size_t k = i; k < jv_nkeys; k++)
            if (jv_keys[k].fn == jv_keys[i].fn && !strcmp(jv_keys[k].help, jv_keys[i].help) &&
                !strstr(names, jv_keys[k].name) && o + 12 < sizeof names)
                o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", o ? "/" : "",
                                      jv_keys[k].name);
        line(L, A_NORMAL, "  %-16s %s", names, jv_keys[i].help);
    }
    line(L, A_NORMAL, "%s", "");
    line(L, A_BOLD, "Mouse");
    line(L, A_NORMAL, "  click a tab, a cell or a row to select it; double-click opens it");
}

size_t jv_text_lines(const jv *v)
{
    lines L = { NULL, 0, 0 };
    if (v->tab == JV_HELP)
        help_lines(&L);
    else
        straggler_lines(v, &L);
    return L.n;
}

static void draw_text(jv *v, const ui_rect *r)
{
    size_t n = jv_text_lines(v), h = r->h > 0 ? (size_t)r->h : 0;
    if (v->text_top + h > n)
        v->text_top = n > h ? n - h : 0;
    lines L = { r, v->text_top, 0 };
    if (v->tab == JV_HELP)
        help_lines(&L);
    else
        straggler_lines(v, &L);
    v->rows_y = r->y;
    v->rows_h = r->h;
}

/* ---- Ranks ---- */

static bool is_straggler(const jv *v, size_t r)
{
    return v->job->ranks[r].straggler;
}

static attr_t shade_attr(const jv *v, int level)
{
    static const int pair[5] = { CP_DIM, CP_LOW, CP_MEDIUM, CP_HIGH, CP_HIGH };
    if (!v->u.color || level < 0)
        return A_NORMAL;
    return COLOR_PAIR(pair[level]) | (level == 4 ? A_BOLD : 0);
}

/* The largest value of rank r's steps in column c (NAN: none). */
static double bin_max(const jv *v, size_t r, size_t c)
{
    size_t n = v->job->nsteps;
    double m = NAN;
    for (size_t s = jv_bin_first(n, v->ncol, c); s < jv_bin_first(n, v->ncol, c + 1); s++) {
        double x = jv_cell(v, r, s);
        if (!isnan(x) && (isnan(m) || x > m))
            m = x;
    }
    return m;
}

static void draw_legend(jv *v, const ui_rect *r, double med)
{
    const prism_job *j = v->job;
    bool u8 = v->u.utf8;
    char m[32], line1[256];
    size_t per = v->ncol ? (j->nsteps + v->ncol - 1) / v->ncol : 1;
    snprintf(line1, sizeof line1, "%s per step, rank x step (w: %s)   %zu ranks, %zu steps",
             v->work ? "Work" : "Step time", v->work ? "step time" : "work", j->nranks,
             j->nsteps);
    int x = ui_print(r, 0, 0, A_BOLD, line1);
    if (per > 1)
        ui_printf(r, 0, x, A_BOLD, ", %zu a column (max)", per);
    fmt_ns(m, sizeof m, med);
    static const char *const ge[5] = { "", ">=0.75x", ">=1.1x", ">=1.25x", ">=1.5x" };
    x = 0;
    for (int lv = 4; lv >= 1; lv--) {
        x += ui_print(r, 1, x, shade_attr(v, lv), jv_shade(lv, u8));
        x += ui_printf(r, 1, x, A_NORMAL, " %s ", ge[lv]);
    }
    x += ui_printf(r, 1, x, A_NORMAL, "of the median cell (%s), ' ' less, - no step  ", m);
    ui_print(r, 1, x, A_NORMAL, "! straggler * marked");
}

/* "rank 3 (host)  step 17: step 12.3 ms  work 10.1 ms  wait 2.20 ms  1.52x median" */
static void draw_detail(jv *v, const ui_rect *r, int y, double med)
{
    const prism_job *j = v->job;
    char id[24], st[32], wk[32], wt[32];
    size_t s = jv_shown_step(v, v->rank, v->step, v->ncol);
    if (!j->nsteps) {
        ui_printf(r, y, 0, A_BOLD, "rank %s: no timed step", jv_rank_name(v, v->rank, id, sizeof id));
        return;
    }
    double sv = prism_job_step(j, v->rank, s), wv = prism_job_work(j, v->rank, s);
    int x = ui_printf(r, y, 0, A_BOLD, "rank %s", jv_rank_name(v, v->rank, id, sizeof id));
    x += ui_printf(r, y, x, A_NORMAL, " (%s)", host_of(&j->ranks[v->rank]));
    x += ui_printf(r, y, x, A_BOLD, "  step %llu", (unsigned long long)j->step_index[s]);
    if (isnan(sv)) {
        ui_print(r, y, x, A_NORMAL, ": not on this rank");
        return;
    }
    fmt_ns(st, sizeof st, sv);
    fmt_ns(wk, sizeof wk, wv);
    fmt_ns(wt, sizeof wt, sv - wv);
    double cell = jv_cell(v, v->rank, s);
    ui_printf(r, y, x, A_NORMAL, ": step %s  work %s  wait %s  %.2fx median  Enter: Timeline", st,
              wk, wt, med > 0 ? cell / med : 0.0);
}

static void draw_ranks(jv *v, const ui_rect *r)
{
    const prism_job *j = v->job;
    double med = v->median[v->work ? 1 : 0];
    char id[24];
    int idw = 4;
    for (size_t i = 0; i < j->nranks; i++)
        if ((int)strlen(jv_rank_name(v, i, id, sizeof id)) > idw)
            idw = (int)strlen(id);
    int prefix = 3 + idw + 1, right = 10;
    int cw = r->w - prefix - right;
    v->ncol = cw > 0 ? ((size_t)cw < j->nsteps ? (size_t)cw : j->nsteps) : 0;
    /* few steps: wider cells are easier to read and to click */
    v->cellw = v->ncol && (size_t)cw >= 3 * v->ncol ? 3 : v->ncol && (size_t)cw >= 2 * v->ncol ? 2 : 1;
    v->rows_y = r->y + 2;
    v->rows_h = r->h - 3 > 0 ? r->h - 3 : 0;
    v->cells_x = r->x + prefix;
    if (v->rank >= j->nranks)
        v->rank = j->nranks ? j->nranks - 1 : 0;
    if (v->step >= j->nsteps)
        v->step = j->nsteps ? j->nsteps - 1 : 0;
    if (v->rank < v->top)
        v->top = v->rank;
    if (v->rows_h > 0 && v->rank >= v->top + (size_t)v->rows_h)
        v->top = v->rank - (size_t)v->rows_h + 1;
    draw_legend(v, r, med);
    size_t selc = jv_bin_of(j->nsteps, v->ncol, v->step);
    for (int y = 0; y < v->rows_h; y++) {
        size_t k = v->top + (size_t)y;
        if (k >= j->nranks)
            break;
        bool sel = k == v->rank, strag = is_straggler(v, k);
        int row = 2 + y;
        char pre[48];
        snprintf(pre, sizeof pre, "%c%c%c%*s ", sel ? '>' : ' ', strag ? '!' : ' ',
                 v->marked && v->mark == k ? '*' : ' ', idw, jv_rank_name(v, k, id, sizeof id));
        attr_t pa = (sel ? A_BOLD : 0) | (strag ? ui_attr(&v->u, CP_HIGH, A_BOLD) : 0);
        ui_print(r, row, 0, pa, pre);
        for (size_t c = 0; c < v->ncol; c++) {
            int lv = jv_level(bin_max(v, k, c), med);
            attr_t at = shade_attr(v, lv) | (sel && c == selc ? A_REVERSE : 0);
            for (int i = 0; i < v->cellw; i++)      /* wide cells: a gap after two */
                ui_print(r, row, prefix + (int)c * v->cellw + i, i == 2 ? A_NORMAL : at,
                         i == 2 ? " " : jv_shade(lv, v->u.utf8));
        }
        const prism_job_rank *rk = &j->ranks[k];
        char f[32], pad[48];
        fmt_ns(f, sizeof f, v->work ? rk->work_median_ns : rk->step_median_ns);
        fmt_rpad(pad, sizeof pad, f, right - 1);
        ui_print(r, row, prefix + (int)v->ncol * v->cellw + 1, pa, pad);
    }
    if (r->h >= 4)
        draw_detail(v, r, r->h - 1, med);
}

/* ---- Table ---- */

static void draw_table(jv *v, const ui_rect *r)
{
    static const char *const heads[JV_NSORT] = { "rank", "step med", "work med", "wait med",
                                                 "excess", "slowed" };
    const prism_job *j = v->job;
    int nfail = (int)j->nfailed, failh = nfail ? 1 + nfail : 0;
    if (failh > r->h / 3)
        failh = r->h / 3;
    v->rows_y = r->y + 1;
    v->rows_h = r->h - 1 - failh > 0 ? r->h - 1 - failh : 0;
    v->ncol = 0;
    size_t pos = 0;
    while (pos < j->nranks && v->order[pos] != v->rank)
        pos++;
    if (pos < v->top)
        v->top = pos;
    if (v->rows_h > 0 && pos >= v->top + (size_t)v->rows_h)
        v->top = pos - (size_t)v->rows_h + 1;
    char h[256];
    int o = snprintf(h, sizeof h, "    %6s %-12s %6s", v->sort == JV_SORT_RANK ? "rank v" : "rank",
                     "host", "steps");
    for (int c = JV_SORT_STEP; c < JV_NSORT && o > 0 && (size_t)o < sizeof h; c++) {
        char hd[32];
        snprintf(hd, sizeof hd, "%s%s", heads[c], v->sort == c ? " v" : "");
        o += snprintf(h + o, sizeof h - (size_t)o, " %10s", hd);
    }
    if (o > 0 && (size_t)o < sizeof h)
        snprintf(h + o, sizeof h - (size_t)o, "  file");
    ui_print(r, 0, 0, A_BOLD | A_UNDERLINE, h);
    for (int y = 0; y < v->rows_h; y++) {
        size_t p = v->top + (size_t)y;
        if (p >= j->nranks)
            break;
        size_t k = v->order[p];
        const prism_job_rank *rk = &j->ranks[k];
        char id[24], host[96], f[4][32], line1[512];
        int hw = ui_elide_mid(host, sizeof host, host_of(rk), 12, v->u.utf8);
        size_t hl = strlen(host);
        while (hw++ < 12 && hl + 1 < sizeof host)  /* pad by columns, not bytes */
            host[hl++] = ' ';
        host[hl] = '\0';
        fmt_ns(f[0], sizeof f[0], rk->step_median_ns);
        fmt_ns(f[1], sizeof f[1], rk->work_median_ns);
        fmt_ns(f[2], sizeof f[2], rk->wait_median_ns);
        fmt_ns_signed(f[3], sizeof f[3], rk->excess_median_ns);
        char pad[4][48];
        for (int i = 0; i < 4; i++)
            fmt_rpad(pad[i], sizeof pad[i], f[i], 10);
        snprintf(line1, sizeof line1, "%c%c%c %6s %s %6zu %s %s %s %s %10llu  ",
                 k == v->rank ? '>' : ' ', rk->straggler ? '!' : ' ',
                 v->marked && v->mark == k ? '*' : ' ', jv_rank_name(v, k, id, sizeof id), host,
                 rk->sum.nsteps, pad[0], pad[1], pad[2], pad[3], (unsigned long long)rk->slowed);
        attr_t at = k == v->rank ? ui_attr(&v->u, CP_SEL, A_REVERSE) : A_NORMAL;
        if (rk->straggler)
            at |= A_BOLD;
        if (k == v->rank)
            ui_fill(r, 1 + y, at);
        int x = ui_print(r, 1 + y, 0, at, line1);
        char file[512];
        ui_elide_mid(file, sizeof file, rk->sum.source, r->w - x, v->u.utf8);
        ui_print(r, 1 + y, x, at, file);
    }
    if (!failh)
        return;
    int fy = r->h - failh;
    ui_printf(r, fy, 0, ui_attr(&v->u, CP_HIGH, A_BOLD), "%d file%s could not be read:", nfail,
              nfail == 1 ? "" : "s");
    for (int i = 0; i + 1 < failh; i++) {
        const prism_job_failure *f = &j->failed[i];
        char msg[512];
        snprintf(msg, sizeof msg, "  %s: %s", f->source, f->message);
        ui_print(r, fy + 1 + i, 0, A_NORMAL, msg);
    }
}

/* ---- frame ---- */

static void draw_tabs(jv *v, const ui_layout *l)
{
    ui_rect r = { l->tabs_y, 0, 1, v->u.cols };
    ui_tab tabs[JV_NTABS];
    int tail = ui_tabs_fit(jv_tab_names(), JV_NTABS, v->tab, v->u.cols, tabs);
    attr_t bar = ui_attr(&v->u, CP_TAB, A_REVERSE);
    ui_fill(&r, 0, bar);
    for (int i = 0; i < JV_NTABS; i++) {
        if (!tabs[i].w)
            continue;
        ui_rect cell = { l->tabs_y, tabs[i].x, 1, tabs[i].w };
        attr_t at = i == v->tab ? (A_BOLD | ui_attr(&v->u, CP_SEL, A_NORMAL)) : bar;
        ui_print(&cell, 0, 0, at, tabs[i].label);
    }
    ui_print(&r, 0, tail, bar, UI_TAB_TAIL);
}

static void draw_status(jv *v, const ui_layout *l)
{
    const prism_job *j = v->job;
    ui_rect r = { l->status_y, 0, 1, v->u.cols };
    attr_t bar = ui_attr(&v->u, CP_TAB, A_REVERSE);
    ui_fill(&r, 0, bar);
    char a[32], b[32], step[48], skew[48], strag[48], fail[32], head[48];
    snprintf(head, sizeof head, "JOB %zu rank%s", j->nranks, j->nranks == 1 ? "" : "s");
    fmt_ns(a, sizeof a, j->job_step_median_ns);
    fmt_ns(b, sizeof b, j->skew_median_ns);
    snprintf(step, sizeof step, "job step %s", a);
    snprintf(skew, sizeof skew, "skew %s", b);
    snprintf(strag, sizeof strag, j->nstragglers == 1 ? "1 straggler" : "%zu stragglers",
             j->nstragglers);
    if (!j->nstragglers)
        snprintf(strag, sizeof strag, "no straggler");
    snprintf(fail, sizeof fail, j->nfailed ? "%zu failed" : "", j->nfailed);
    static const char *const names[] = { "Ranks", "Stragglers", "Table", "Help" };
    ui_status_item it[] = {
        { head, "", 4, false, 0 },
        { names[v->tab], " | ", 0, false, 0 },
        { step, " | ", 8, false, 0 },
        { skew, ", ", 5, false, 0 },
        { strag, ", ", 7, false, 0 },
        { fail, ", ", 6, false, 0 },
        { v->u.msg, " | ", 9, true, 12 },     /* a message goes before figures */
        { "?:help q:quit", " | ", 0, false, 0 },
    };
    char out[1024];
    ui_status_fit(it, (int)(sizeof it / sizeof it[0]), v->u.cols - 1, out, sizeof out);
    ui_print(&r, 0, 1, bar, out);
}

void jv_draw(jv *v)
{
    getmaxyx(stdscr, v->u.rows, v->u.cols);
    erase();
    ui_layout l = ui_layout_compute(v->u.rows, v->u.cols);
    if (l.too_small) {
        ui_draw_too_small(v->u.rows, v->u.cols);
        v->rows_h = 0;
        v->ncol = 0;
        refresh();
        return;
    }
    draw_tabs(v, &l);
    ui_rect body = { l.body_y, 0, l.body_h, v->u.cols };
    switch (v->tab) {
    case JV_RANKS: draw_ranks(v, &body); break;
    case JV_TABLE: draw_table(v, &body); break;
    default: draw_text(v, &body); break;
    }
    draw_status(v, &l);
    refresh();
}
