/*
 * frame.c - the tab bar and the status line.  Both are fitted by pure
 * functions (ui_tabs_fit, ui_status_fit) so that they behave from 40 to
 * 300+ columns: tab labels shorten before anything is dropped and
 * "?:help q:quit" always shows; the status line keeps the file, the live
 * state and the pane first, elides the middle of long names and drops
 * hints whole, last first, so no number is cut in half.
 */
#include <stdio.h>
#include <string.h>

#include "compare_view.h"
#include "escape.h"
#include "frame.h"
#include "source.h"

/* ---- tabs ---- */

/* Tab label forms: 0 the name, 1 short (names up to 5 characters stay
 * whole: "Tree", "Flame"; longer ones keep 3: "Sum"), 2 the number " 2 ",
 * 3 the number packed " 2". */
static void tab_label(char *out, size_t cap, int i, const char *name, int form)
{
    if (form == 0 || (form == 1 && strlen(name) <= 5))
        snprintf(out, cap, " %d %s ", i + 1, name);
    else if (form == 1)
        snprintf(out, cap, " %d %.3s ", i + 1, name);
    else if (form == 2)
        snprintf(out, cap, " %d ", i + 1);
    else
        snprintf(out, cap, " %d", i + 1);
}

int ui_tabs_fit(const char *const *names, int n, int cur, int cols, ui_tab *tabs)
{
    /* (form of the other tabs, form of the current one), widest first */
    static const int forms[][2] = { { 0, 0 }, { 1, 0 }, { 1, 1 }, { 2, 0 }, { 2, 1 },
                                    { 3, 0 }, { 3, 1 }, { 2, 2 }, { 3, 3 } };
    int tail = ui_width(UI_TAB_TAIL), nf = (int)(sizeof forms / sizeof forms[0]);
    int x = 0;
    for (int f = 0; f < nf; f++) {
        x = 0;
        for (int i = 0; i < n; i++) {
            tab_label(tabs[i].label, sizeof tabs[i].label, i, names[i],
                      forms[f][i == cur ? 1 : 0]);
            tabs[i].x = x;
            tabs[i].w = ui_width(tabs[i].label);
            x += tabs[i].w;
        }
        if (x + tail <= cols)
            return x;
    }
    /* narrower than the numbers alone: the tail wins, tabs give way */
    int room = cols - tail > 0 ? cols - tail : 0;
    for (int i = 0; i < n; i++) {
        if (tabs[i].x + tabs[i].w > room)
            tabs[i].w = tabs[i].x < room ? room - tabs[i].x : 0;
        if (tabs[i].w == 0)
            tabs[i].x = room;
    }
    return room;
}

void ui_draw_tabs(ui *u, const ui_layout *l)
{
    ui_rect r = { l->tabs_y, 0, 1, u->cols };
    ui_tab tabs[UI_NTABS];
    const char *names[UI_NTABS];
    for (int i = 0; i < UI_NTABS; i++)
        names[i] = u->panes[i]->name;
    int tail = ui_tabs_fit(names, UI_NTABS, u->pane, u->cols, tabs);
    attr_t bar = ui_attr(u, CP_TAB, A_REVERSE);
    ui_fill(&r, 0, bar);
    for (int i = 0; i < UI_NTABS; i++) {
        if (!tabs[i].w)
            continue;
        ui_rect cell = { l->tabs_y, tabs[i].x, 1, tabs[i].w };
        attr_t at = i == u->pane ? (A_BOLD | ui_attr(u, CP_SEL, A_NORMAL)) : bar;
        ui_print(&cell, 0, 0, at, tabs[i].label);
    }
    ui_print(&r, 0, tail, bar, UI_TAB_TAIL);
}

/* ---- status line ---- */

/* One display unit of s: a character or a whole escape; its columns. */
static size_t unit(const char *s, char *rep, int *w)
{
    bool esc;
    size_t take = esc_char(s, rep, &esc);
    *w = esc ? (int)strlen(rep) : 1;
    return take;
}

int ui_elide_middle(const char *s, int cols, char *out, size_t cap)
{
    char rep[ESC_CHAR_MAX];
    int w, total = 0;
    size_t o = 0;
    if (!cap)
        return 0;
    out[0] = '\0';
    if (!s || cols <= 0)
        return 0;
    for (const char *p = s; *p; total += w)
        p += unit(p, rep, &w);
    int head = total <= cols ? total : (cols - 1) / 3, tail = total <= cols ? 0 : cols - 1 - head;
    int at = 0, used = 0;
    bool marked = total <= cols;
    for (const char *p = s; *p; at += w) {
        p += unit(p, rep, &w);
        bool keep = at + w <= head || (tail > 0 && at >= total - tail);
        if (!keep && !marked && cols >= 1) {
            if (o + 2 > cap)
                break;
            out[o++] = '~';
            used++;
            marked = true;
        }
        size_t len = strlen(rep);
        if (keep && o + len + 1 <= cap) {
            memcpy(out + o, rep, len);
            o += len;
            used += w;
        }
    }
    out[o] = '\0';
    return used;
}

int ui_status_fit(const ui_status_item *items, int n, int cols, char *out, size_t cap)
{
    enum { MAX = 32 };
    bool shown[MAX];
    int cur[MAX], full[MAX];
    if (n > MAX)
        n = MAX;
    if (!cap)
        return 0;
    out[0] = '\0';
    int total = 0, first = 1;
    for (int i = 0; i < n; i++) {
        shown[i] = items[i].text && items[i].text[0];
        full[i] = cur[i] = shown[i] ? ui_width(items[i].text) : 0;
        if (shown[i]) {
            total += cur[i] + (first ? 0 : ui_width(items[i].sep ? items[i].sep : ""));
            first = 0;
        }
    }
    while (total > cols) {
        int pick = -1;                  /* lowest priority; later on ties */
        for (int i = 0; i < n; i++)
            if (shown[i] && items[i].prio > 0 && (pick < 0 || items[i].prio <= items[pick].prio))
                pick = i;
        if (pick < 0)
            break;
        int over = total - cols;
        if (items[pick].elide && cur[pick] > items[pick].min) {
            int cut = cur[pick] - items[pick].min < over ? cur[pick] - items[pick].min : over;
            cur[pick] -= cut;
            total -= cut;
            continue;
        }
        shown[pick] = false;            /* drop it with its separator */
        int lead = -1;
        for (int i = 0; i < n && lead < 0; i++)
            if (shown[i] || i == pick)
                lead = i;
        total -= cur[pick];
        if (lead != pick)
            total -= ui_width(items[pick].sep ? items[pick].sep : "");
        else                            /* the next shown item loses its sep */
            for (int i = pick + 1; i < n; i++)
                if (shown[i]) {
                    total -= ui_width(items[i].sep ? items[i].sep : "");
                    break;
                }
    }
    size_t o = 0;
    first = 1;
    for (int i = 0; i < n && o + 1 < cap; i++) {
        if (!shown[i])
            continue;
        if (!first && items[i].sep)
            o += (size_t)snprintf(out + o, cap - o, "%s", items[i].sep);
        first = 0;
        if (o + 1 >= cap)
            break;
        if (cur[i] < full[i])
            ui_elide_middle(items[i].text, cur[i], out + o, cap - o);
        else
            snprintf(out + o, cap - o, "%s", items[i].text);
        o += strlen(out + o);
    }
    return ui_width(out);
}

/* Split a pane hint into items: on double spaces when it has them, else
 * before each word holding a ':' ("s:sort Enter:show in Tree n/N:match").
 * *sep: what joins them again, as the pane wrote it. */
static int split_hint(const char *hint, char *buf, size_t cap, const char **parts, int max,
                      const char **sep)
{
    snprintf(buf, cap, "%s", hint ? hint : "");
    int n = 0;
    bool dbl = strstr(buf, "  ") != NULL;
    *sep = dbl ? "  " : " ";
    char *p = buf;
    while (*p == ' ')
        p++;
    if (*p && n < max)
        parts[n++] = p;
    for (; *p && n < max; p++) {
        if (*p != ' ')
            continue;
        char *next = p + 1;
        while (*next == ' ')
            next++;
        bool cut = false;
        if (dbl) {
            cut = p[1] == ' ';
        } else {
            char *e = strchr(next, ' ');
            char *c = strchr(next, ':');
            cut = c && (!e || c < e);
        }
        if (cut && *next) {
            *p = '\0';
            parts[n++] = next;
            p = next - 1;
        }
    }
    return n;
}

/* The node of path hash h among the sampled nodes of g (from index `from`,
 * where the recorded ones end), or PRISM_NO_NODE. */
static uint32_t find_sampled(const prism_tree *g, size_t from, uint64_t h)
{
    for (size_t i = from; g && i < g->count; i++)
        if (g->nodes[i].path_hash == h)
            return (uint32_t)i;
    return PRISM_NO_NODE;
}

/* The selection's call path, root first; a `~` row's is its region's path
 * and the sampled frames down to it (in the all-threads tree, or else in
 * a thread's, where a thread's own samples made it). */
static void sel_path(const ui *u, char *path, size_t cap)
{
    path[0] = '\0';
    uint32_t n = prism_analysis_find(u->a, u->sel_hash);
    const prism_tree *t = prism_analysis_tree(u->a);
    if (n == PRISM_NO_NODE && t->count) {
        const prism_tree *g = prism_analysis_tree_sampled(u->a);
        if (g != t)
            n = find_sampled(g, t->count, u->sel_hash);
        if (n != PRISM_NO_NODE)
            t = g;
        for (size_t i = 0; n == PRISM_NO_NODE && i < prism_analysis_thread_count(u->a); i++) {
            const prism_tree *tt = prism_analysis_thread_tree(u->a, i, NULL, NULL);
            g = prism_analysis_thread_tree_sampled(u->a, i);
            if (tt && g && g != tt && (n = find_sampled(g, tt->count, u->sel_hash)) != PRISM_NO_NODE)
                t = g;
        }
    }
    if (n == PRISM_NO_NODE)
        return;
    const char *parts[32];
    int k = 0;
    for (uint32_t q = n; q != PRISM_NO_NODE && k < 32; q = t->nodes[q].parent)
        parts[k++] = t->nodes[q].name;
    size_t o = 0;
    while (k-- > 0 && o + 2 < cap)
        o += (size_t)snprintf(path + o, cap - o, "%s%s", o ? "/" : "", parts[k] ? parts[k] : "?");
}

void ui_draw_status(ui *u, const ui_layout *l)
{
    ui_rect r = { l->status_y, 0, 1, u->cols };
    ui_fill(&r, 0, ui_attr(u, CP_TAB, A_REVERSE));
    const char *file = strrchr(u->path, '/');
    file = file ? file + 1 : u->path;
    ui_status_item it[24];
    int n = 0;
    it[n++] = (ui_status_item){ file, "", 9, true, 8 };
    char age[32] = "", ev[40] = "", rate[32] = "", cmp[96] = "", filt[80] = "", path[256];
    const source *src = u->src;
    char load[32], loadd[160];          /* a big file loading (source.c) */
    if (src && source_progress(src, load, sizeof load, loadd, sizeof loadd)) {
        it[n++] = (ui_status_item){ load, " | ", 8, false, 0 };
        it[n++] = (ui_status_item){ loadd, " ", 3, false, 0 };
    } else if (src && src->waiting) {
        it[n++] = (ui_status_item){ "WAITING for the file", " | ", 8, false, 0 };
    } else if (src && src->complete) {
        it[n++] = (ui_status_item){ "COMPLETE", " | ", 8, false, 0 };
    } else if (src && src->following) {
        double a = source_age_s(src);
        if (a >= 0)
            snprintf(age, sizeof age, a < 10 ? "%.1fs ago" : "%.0fs ago", a);
        char c1[24], c2[24];
        fmt_count(c1, sizeof c1, (double)prism_analysis_events(u->a));
        fmt_count(c2, sizeof c2, source_rate(src));
        snprintf(ev, sizeof ev, "%s ev", c1);
        snprintf(rate, sizeof rate, "%s ev/s", c2);
        it[n++] = (ui_status_item){ src->paused ? "PAUSED" : "LIVE", " | ", 8, false, 0 };
        it[n++] = (ui_status_item){ age, " ", 5, false, 0 };
        it[n++] = (ui_status_item){ ev, ", ", 3, false, 0 };
        it[n++] = (ui_status_item){ rate, ", ", 2, false, 0 };
    } else if (u->cmp) {
        cmpv_status(u, cmp, sizeof cmp);
        const char *c = cmp;
        while (*c == ' ' || *c == '|')  /* cmpv_status leads with " | " */
            c++;
        it[n++] = (ui_status_item){ c, " | ", 5, false, 0 };
    } else if (!prism_analysis_complete(u->a)) {
        it[n++] = (ui_status_item){ "INCOMPLETE", " | ", 8, false, 0 };
    }
    it[n++] = (ui_status_item){ u->panes[u->pane]->name, " | ", 0, false, 0 };
    if (u->filter[0]) {
        snprintf(filt, sizeof filt, "filter: %s", u->filter);
        it[n++] = (ui_status_item){ filt, " | ", 7, true, 12 };
    }
    sel_path(u, path, sizeof path);
    it[n++] = (ui_status_item){ path[0] ? path : "-", " | ", 4, true, 10 };
    char hbuf[256];
    const char *hints[12];
    if (u->msg[0]) {
        it[n++] = (ui_status_item){ u->msg, " | ", 6, true, 12 };
    } else {
        const char *sep;
        int nh = split_hint(u->panes[u->pane]->hint, hbuf, sizeof hbuf, hints, 12, &sep);
        for (int i = 0; i < nh && n < 24; i++)
            it[n++] = (ui_status_item){ hints[i], i ? sep : " | ", 1, false, 0 };
    }
    char line[1024];
    ui_status_fit(it, n, u->cols - 1, line, sizeof line);
    ui_print(&r, 0, 1, ui_attr(u, CP_TAB, A_REVERSE), line);
}
