/*
 * pane_help.c - Help, generated from the key tables (the global one, the
 * pane Help was opened from, compare mode's when comparing, then the other
 * panes), so it never drifts from the bindings.
 *
 * Keys with the same function and text are one entry ("j/Down"; a run of
 * digits shows as "1-8").  The label column is as wide as the widest label,
 * capped; a longer label gets a line of its own.  Texts wrap at words.
 * q, Esc and Backspace close Help; it scrolls at any size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "ui.h"

enum { HL_TITLE, HL_ENTRY, HL_BLANK };

typedef struct help_line {
    int kind;
    char label[48];             /* HL_ENTRY: the key names ("" on a wrap) */
    const char *text;           /* title or help text, `len` bytes of it   */
    int len;
} help_line;

typedef struct help {
    int top, page;
    help_line *lines;
    int n, cap;
    char titles[UI_NPANES + 2][48];
} help;

static void *init(ui *u)
{
    (void)u;
    return calloc(1, sizeof(help));
}

static void help_free(void *st)
{
    help *hp = st;
    if (hp)
        free(hp->lines);
    free(hp);
}

/* Is k[i] the same binding as an earlier entry (same function and text)? */
static bool merged(const ui_key *k, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (k[j].fn == k[i].fn && !strcmp(k[j].help, k[i].help))
            return true;
    return false;
}

/* The names of every key bound like k[i], "j/Down"; digits in a row: "1-8". */
static void label_of(const ui_key *k, size_t n, size_t i, char *out, size_t cap)
{
    const char *names[32];
    size_t m = 0;
    for (size_t j = i; j < n && m < 32; j++) {
        if (k[j].fn != k[i].fn || strcmp(k[j].help, k[i].help))
            continue;
        bool dup = false;
        for (size_t q = 0; q < m; q++)
            dup = dup || !strcmp(names[q], k[j].name);
        if (!dup)
            names[m++] = k[j].name;
    }
    bool digits = m > 2;
    for (size_t q = 0; q < m && digits; q++)
        digits = strlen(names[q]) == 1 && names[q][0] == names[0][0] + (int)q &&
                 names[q][0] >= '0' && names[q][0] <= '9';
    if (digits) {
        snprintf(out, cap, "%s-%s", names[0], names[m - 1]);
        return;
    }
    size_t o = 0;
    out[0] = '\0';
    for (size_t q = 0; q < m && o + 1 < cap; q++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", q ? "/" : "", names[q]);
}

static help_line *add(help *hp, int kind)
{
    if (hp->n == hp->cap) {
        int cap = hp->cap ? hp->cap * 2 : 128;
        help_line *l = realloc(hp->lines, (size_t)cap * sizeof *l);
        if (!l)
            return NULL;
        hp->lines = l;
        hp->cap = cap;
    }
    help_line *l = &hp->lines[hp->n++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    return l;
}

/* The widest label of a table (merged entries). */
static int widest(const ui_key *k, size_t n)
{
    int w = 0;
    char lab[48];
    for (size_t i = 0; i < n; i++) {
        if (merged(k, i))
            continue;
        label_of(k, n, i, lab, sizeof lab);
        int lw = ui_width(lab);
        w = lw > w ? lw : w;
    }
    return w;
}

/* One section: a title, then the entries, texts wrapped to `tw` columns. */
static void section(help *hp, const char *title, const ui_key *k, size_t n, int lw, int tw)
{
    if (!n)
        return;                         /* no empty section */
    if (hp->n) {
        if (!add(hp, HL_BLANK))
            return;
    }
    help_line *t = add(hp, HL_TITLE);
    if (!t)
        return;
    t->text = title;
    t->len = (int)strlen(title);
    for (size_t i = 0; i < n; i++) {
        if (merged(k, i))
            continue;
        char lab[48];
        label_of(k, n, i, lab, sizeof lab);
        if (ui_width(lab) > lw) {       /* too long for the column: own line */
            help_line *l = add(hp, HL_ENTRY);
            if (!l)
                return;
            snprintf(l->label, sizeof l->label, "%s", lab);
            lab[0] = '\0';
        }
        const char *s = k[i].help;
        do {                            /* wrap the text at spaces */
            int len = (int)strlen(s);
            if (len > tw && tw > 0) {
                int cut = tw;
                while (cut > 0 && s[cut] != ' ')
                    cut--;
                len = cut > 0 ? cut : tw;
            }
            help_line *l = add(hp, HL_ENTRY);
            if (!l)
                return;
            snprintf(l->label, sizeof l->label, "%s", lab);
            lab[0] = '\0';
            l->text = s;
            l->len = len;
            s += len;
            while (*s == ' ')
                s++;
        } while (*s);
    }
}

static int label_width(ui *u, int w)
{
    size_t ng;
    const ui_key *global = ui_global_keys(&ng);
    int lw = widest(global, ng);
    if (u->cmp) {
        int c = widest(cmpv_keys, cmpv_nkeys);
        lw = c > lw ? c : lw;
    }
    for (int p = 0; p < UI_NPANES - 1; p++) {
        int c = widest(u->panes[p]->keys, u->panes[p]->nkeys);
        lw = c > lw ? c : lw;
    }
    int capw = w / 3 < 20 ? w / 3 : 20;
    return lw < capw ? lw : capw > 4 ? capw : 4;
}

/* Lay the whole help out for width w; the label column is 3..3+lw. */
static int build(ui *u, help *hp, int w)
{
    hp->n = 0;
    int lw = label_width(u, w), tw = w - (3 + lw + 2) - 1;
    if (tw < 8)
        tw = 8;
    int here = u->prev_pane >= 0 && u->prev_pane < UI_NPANES - 1 ? u->prev_pane : 0;
    size_t ng;
    const ui_key *global = ui_global_keys(&ng);
    section(hp, "Keys everywhere", global, ng, lw, tw);
    const ui_pane *cur = u->panes[here];
    snprintf(hp->titles[0], sizeof hp->titles[0], "%d %s (this pane)", here + 1, cur->name);
    section(hp, hp->titles[0], cur->keys, cur->nkeys, lw, tw);
    if (u->cmp)
        section(hp, "Compare mode", cmpv_keys, cmpv_nkeys, lw, tw);
    for (int p = 0; p < UI_NPANES - 1; p++) {
        if (p == here)
            continue;
        snprintf(hp->titles[p + 1], sizeof hp->titles[p + 1], "%d %s", p + 1, u->panes[p]->name);
        section(hp, hp->titles[p + 1], u->panes[p]->keys, u->panes[p]->nkeys, lw, tw);
    }
    return lw;
}

static void clamp(help *hp)
{
    int max = hp->n - hp->page;
    if (hp->top > max)
        hp->top = max;
    if (hp->top < 0)
        hp->top = 0;
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    help *hp = st;
    if (!hp)
        return;
    ui_rect r = { y, x, h, w };
    int lw = build(u, hp, w);
    hp->page = h > 1 ? h - 1 : 1;       /* the last row tells where we are */
    clamp(hp);
    attr_t title = ui_attr(u, CP_TITLE, A_BOLD);
    for (int row = 0; row < hp->page && hp->top + row < hp->n; row++) {
        const help_line *l = &hp->lines[hp->top + row];
        char text[512];
        snprintf(text, sizeof text, "%.*s", l->len, l->text ? l->text : "");
        if (l->kind == HL_TITLE) {
            ui_print(&r, row, 1, title, text);
        } else if (l->kind == HL_ENTRY) {
            ui_print(&r, row, 3, A_BOLD, l->label);
            ui_print(&r, row, 3 + lw + 2, A_NORMAL, text);
        }
    }
    if (h > 1)
        ui_printf(&r, h - 1, 1, ui_attr(u, CP_DIM, A_DIM), "lines %d-%d of %d  q/Esc: close",
                  hp->n ? hp->top + 1 : 0,
                  hp->top + hp->page < hp->n ? hp->top + hp->page : hp->n, hp->n);
}

static int k_scroll(ui *u, void *st, int key)
{
    help *hp = st;
    (void)u;
    if (!hp)
        return UI_NONE;
    int page = hp->page > 1 ? hp->page - 1 : 1;
    if (key == 'j' || key == KEY_DOWN)
        hp->top++;
    else if (key == 'k' || key == KEY_UP)
        hp->top--;
    else if (key == KEY_NPAGE || key == ' ')
        hp->top += page;
    else if (key == KEY_PPAGE)
        hp->top -= page;
    else if (key == KEY_HOME || key == 'g')
        hp->top = 0;
    else if (key == KEY_END || key == 'G')
        hp->top = hp->n;
    clamp(hp);
    return UI_REDRAW;
}

/* Close Help; it opens at the top next time. */
static int k_close(ui *u, void *st, int key)
{
    help *hp = st;
    (void)key;
    if (hp)
        hp->top = 0;
    ui_show(u, u->prev_pane);
    return UI_REDRAW;
}

static const ui_key keys[] = {
    { 'j', "j", k_scroll, "scroll down" }, { KEY_DOWN, "Down", k_scroll, "scroll down" },
    { 'k', "k", k_scroll, "scroll up" }, { KEY_UP, "Up", k_scroll, "scroll up" },
    { KEY_NPAGE, "PgDn", k_scroll, "page down" }, { ' ', "Space", k_scroll, "page down" },
    { KEY_PPAGE, "PgUp", k_scroll, "page up" },
    { KEY_HOME, "Home", k_scroll, "top" }, { 'g', "g", k_scroll, "top" },
    { KEY_END, "End", k_scroll, "bottom" }, { 'G', "G", k_scroll, "bottom" },
    { 'q', "q", k_close, "close Help" }, { 27, "Esc", k_close, "close Help" },
    { KEY_BACKSPACE, "Bksp", k_close, "close Help" }, { 127, "Bksp", k_close, "close Help" },
    { 8, "Bksp", k_close, "close Help" }, { '?', "?", k_close, "close Help" },
    { KEY_F(1), "F1", k_close, "close Help" },
};

const ui_pane pane_help = {
    .name = "Help",
    .hint = "j/k: scroll  q/Esc: close",
    .init = init,
    .draw = draw,
    .free = help_free,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
};
