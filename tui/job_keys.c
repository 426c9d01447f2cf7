/*
 * job_keys.c - the job view's keys (a table: each binding has its help
 * text, shown by the Help tab) and its mouse: a click on the tab bar
 * switches tab, a click on a heatmap cell or a Table row selects it, the
 * wheel scrolls.  Actions change the view's state and return UI_* flags;
 * they never draw.
 */
#include <math.h>
#include <stdlib.h>

#include "frame.h"
#include "job_view.h"

#define JV(st) ((jv *)(st))

static const char *const tab_names[JV_NTABS] = { "Ranks", "Stragglers", "Table" };

static void show_tab(jv *v, int t)
{
    if (t == JV_HELP && v->tab != JV_HELP)
        v->prev_tab = v->tab;
    if (t != v->tab)
        v->text_top = 0;
    v->tab = t;
}

static int k_quit(ui *u, void *st, int key)
{
    (void)u; (void)st; (void)key;
    return UI_QUIT;
}

static int k_help(ui *u, void *st, int key)
{
    (void)u; (void)key;
    jv *v = JV(st);
    show_tab(v, v->tab == JV_HELP ? v->prev_tab : JV_HELP);
    return UI_REDRAW;
}

static int k_back(ui *u, void *st, int key)
{
    (void)u; (void)key;
    jv *v = JV(st);
    if (v->tab == JV_HELP)
        show_tab(v, v->prev_tab);
    return UI_REDRAW;
}

static int k_tab(ui *u, void *st, int key)
{
    (void)u;
    jv *v = JV(st);
    int t = v->tab == JV_HELP ? v->prev_tab : v->tab;
    if (key >= '1' && key < '1' + JV_NTABS)
        t = key - '1';
    else
        t = key == KEY_BTAB ? (t + JV_NTABS - 1) % JV_NTABS : (t + 1) % JV_NTABS;
    show_tab(v, t);
    return UI_REDRAW;
}

/* j/k, arrows, pages, g/G: the selected rank (Ranks, Table), the first
 * line shown (Stragglers, Help). */
static int k_move(ui *u, void *st, int key)
{
    (void)u;
    jv *v = JV(st);
    size_t page = v->rows_h > 1 ? (size_t)v->rows_h - 1 : 1;
    if (v->tab == JV_STRAGGLERS || v->tab == JV_HELP) {
        size_t n = jv_text_lines(v), h = v->rows_h > 0 ? (size_t)v->rows_h : 1;
        size_t last = n > h ? n - h : 0;
        v->text_top = ui_list_move(key, v->text_top, last + 1, page);
        return UI_REDRAW;
    }
    size_t n = v->job->nranks;
    if (v->tab == JV_TABLE) {           /* move in the Table's order */
        size_t pos = 0;
        while (pos < n && v->order[pos] != v->rank)
            pos++;
        v->rank = v->order[ui_list_move(key, pos < n ? pos : 0, n, page)];
    } else {
        v->rank = ui_list_move(key, v->rank, n, page);
    }
    return UI_REDRAW;
}

/* h/l, arrows: one column; H/L: a quarter of the columns. */
static int k_step(ui *u, void *st, int key)
{
    (void)u;
    jv *v = JV(st);
    size_t n = v->job->nsteps, ncol = v->ncol ? v->ncol : n;
    if (v->tab != JV_RANKS || !n)
        return UI_NONE;
    long d = key == 'h' || key == KEY_LEFT ? -1 : key == 'l' || key == KEY_RIGHT ? 1 : 0;
    if (key == 'H' || key == 'L')
        d = (key == 'H' ? -1 : 1) * (long)(ncol / 4 ? ncol / 4 : 1);
    long c = (long)jv_bin_of(n, ncol, v->step) + d;
    if (c < 0)
        c = 0;
    if (c >= (long)ncol)
        c = (long)ncol - 1;
    v->step = jv_bin_first(n, ncol, (size_t)c);
    return UI_REDRAW;
}

static int k_metric(ui *u, void *st, int key)
{
    (void)key;
    jv *v = JV(st);
    v->work = !v->work;
    ui_message(u, v->work ? "showing work time (the step less its wait for other ranks)"
                          : "showing step time");
    return UI_REDRAW;
}

/* The aligned position of the rank's first step, or (slowed) of the
 * first step a straggler slowed. */
static size_t first_step(const jv *v, size_t r, bool slowed)
{
    const prism_job *j = v->job;
    for (size_t k = 0; slowed && k < j->nstragglers; k++) {
        const prism_straggler *s = &j->stragglers[k];
        if (s->index != r || !s->nslowed_index)
            continue;
        for (size_t i = 0; i < j->nsteps; i++)
            if (j->step_index[i] == s->slowed_index[0])
                return i;
    }
    for (size_t i = 0; i < j->nsteps; i++)
        if (!isnan(prism_job_step(j, r, i)))
            return i;
    return 0;
}

/* The rank Enter, t and c act on: the selected one; on the Stragglers
 * tab a straggler (the selected rank if it is one, else the first). */
static size_t target(const jv *v)
{
    const prism_job *j = v->job;
    if (v->tab != JV_STRAGGLERS || !j->nstragglers || j->ranks[v->rank].straggler)
        return v->rank;
    return j->stragglers[0].index;
}

/* Enter / t: the selected cell's rank and step; the Table's: the rank's
 * first step; the Stragglers': the straggler's first slowed step. */
static int k_open(ui *u, void *st, int key)
{
    (void)u;
    jv *v = JV(st);
    const char *pane = key == 't' ? "tree" : "timeline";
    if (v->tab == JV_HELP)
        return UI_NONE;
    size_t r = target(v);
    size_t s = v->tab == JV_RANKS ? jv_shown_step(v, r, v->step, v->ncol)
                                  : first_step(v, r, v->tab == JV_STRAGGLERS);
    jv_open_rank(v, r, s, pane);
    return UI_REDRAW;
}

static int k_compare(ui *u, void *st, int key)
{
    (void)u; (void)key;
    jv *v = JV(st);
    size_t base = v->marked ? v->mark : v->job->median_rank;
    jv_compare(v, base, target(v));
    return UI_REDRAW;
}

static int k_mark(ui *u, void *st, int key)
{
    (void)key;
    jv *v = JV(st);
    char id[24];
    jv_rank_name(v, v->rank, id, sizeof id);
    if (v->marked && v->mark == v->rank) {
        v->marked = false;
        ui_message(u, "rank %s unmarked: c compares with the median rank", id);
    } else {
        v->marked = true;
        v->mark = v->rank;
        ui_message(u, "rank %s marked: c compares it (base) with the selected rank", id);
    }
    return UI_REDRAW;
}

static int k_sort(ui *u, void *st, int key)
{
    (void)key;
    static const char *const names[JV_NSORT] = { "rank", "step median", "work median",
                                                 "wait median", "excess", "steps slowed" };
    jv *v = JV(st);
    if (v->tab != JV_TABLE)
        return UI_NONE;
    v->sort = (v->sort + 1) % JV_NSORT;
    jv_sort(v);
    ui_message(u, "sorted by %s", names[v->sort]);
    return UI_REDRAW;
}

#define MOVE_HELP "select a rank (Stragglers, Help: scroll)"
#define PAGE_HELP "a page up / down"
#define ENDS_HELP "the first / last rank"
#define OPEN_HELP "open the rank's profile at the step: the Timeline"
const ui_key jv_keys[] = {
    { 'q', "q", k_quit, "quit" },
    { '?', "?", k_help, "help (this screen); again to go back" },
    { KEY_F(1), "F1", k_help, "help (this screen); again to go back" },
    { 27, "Esc", k_back, "back from help" },
    { '\t', "Tab", k_tab, "next tab" },
    { KEY_BTAB, "S-Tab", k_tab, "previous tab" },
    { '1', "1", k_tab, "Ranks: the rank x step heatmap" },
    { '2', "2", k_tab, "Stragglers: the slow ranks and why" },
    { '3', "3", k_tab, "Table: per-rank figures, the files that failed" },
    { 'j', "j", k_move, MOVE_HELP }, { KEY_DOWN, "Down", k_move, MOVE_HELP },
    { 'k', "k", k_move, MOVE_HELP }, { KEY_UP, "Up", k_move, MOVE_HELP },
    { KEY_NPAGE, "PgDn", k_move, PAGE_HELP }, { KEY_PPAGE, "PgUp", k_move, PAGE_HELP },
    { ' ', "Space", k_move, PAGE_HELP },
    { 'g', "g", k_move, ENDS_HELP }, { 'G', "G", k_move, ENDS_HELP },
    { KEY_HOME, "Home", k_move, ENDS_HELP }, { KEY_END, "End", k_move, ENDS_HELP },
    { 'h', "h", k_step, "Ranks: the previous step (column)" },
    { KEY_LEFT, "Left", k_step, "Ranks: the previous step (column)" },
    { 'l', "l", k_step, "Ranks: the next step (column)" },
    { KEY_RIGHT, "Right", k_step, "Ranks: the next step (column)" },
    { 'H', "H", k_step, "Ranks: a page of steps back" },
    { 'L', "L", k_step, "Ranks: a page of steps on" },
    { 'w', "w", k_metric, "Ranks: work time / step time (work: the step less its wait)" },
    { '\n', "Enter", k_open, OPEN_HELP }, { '\r', "Enter", k_open, OPEN_HELP },
    { KEY_ENTER, "Enter", k_open, OPEN_HELP },
    { 't', "t", k_open, "open the rank's profile in the Tree" },
    { 'c', "c", k_compare, "compare the rank with the median rank (or the marked one)" },
    { 'm', "m", k_mark, "mark the rank as the base of c (again: unmark)" },
    { 's', "s", k_sort, "Table: sort by the next column" },
};
const size_t jv_nkeys = sizeof jv_keys / sizeof jv_keys[0];

/* A click or the wheel. */
static int mouse(jv *v)
{
    MEVENT me;
    if (getmouse(&me) != OK)
        return UI_NONE;
    ui_layout l = ui_layout_compute(v->u.rows, v->u.cols);
    ui_tab tabs[JV_NTABS];
    int tail = ui_tabs_fit(tab_names, JV_NTABS, v->tab, v->u.cols, tabs);
    ui_hit h = ui_mouse_decode(me.bstate, me.y, me.x, &l, tabs, JV_NTABS, tail, false, 0);
    if (h.what == UI_HIT_TAB) {
        show_tab(v, h.pane);
        return UI_REDRAW;
    }
    if (h.what == UI_HIT_HELP)
        return k_help(&v->u, v, KEY_F(1));
    if (h.what != UI_HIT_BODY)
        return UI_NONE;
    if (h.event == UI_MOUSE_WHEEL_UP || h.event == UI_MOUSE_WHEEL_DOWN)
        return k_move(&v->u, v, h.event == UI_MOUSE_WHEEL_UP ? KEY_UP : KEY_DOWN);
    int y = me.y - v->rows_y;
    if (y < 0 || y >= v->rows_h || (v->tab != JV_RANKS && v->tab != JV_TABLE))
        return UI_NONE;
    size_t i = v->top + (size_t)y;
    if (i >= v->job->nranks)
        return UI_NONE;
    v->rank = v->tab == JV_TABLE ? v->order[i] : i;
    int x = me.x - v->cells_x, cw = v->cellw > 0 ? v->cellw : 1;
    if (v->tab == JV_RANKS && x >= 0 && x / cw < (int)v->ncol)
        v->step = jv_bin_first(v->job->nsteps, v->ncol, (size_t)(x / cw));
    if (h.event == UI_MOUSE_DOUBLE)
        return k_open(&v->u, v, '\n');
    return UI_REDRAW;
}

int jv_key(jv *v, int ch)
{
    v->u.msg[0] = '\0';
    if (ch == KEY_RESIZE)
        return UI_REDRAW;
    if (ch == KEY_MOUSE)
        return mouse(v);
    for (size_t i = 0; i < jv_nkeys; i++)
        if (jv_keys[i].key == ch)
            return jv_keys[i].fn(&v->u, v, ch);
    return UI_NONE;
}

const char *const *jv_tab_names(void)
{
    return tab_names;
}
