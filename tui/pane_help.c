/*
 * pane_help.c - Help, generated from the key tables (the global one and
 * each pane's), so it never drifts from the bindings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "ui.h"

typedef struct help {
    int top;
} help;

static void *init(ui *u)
{
    (void)u;
    return calloc(1, sizeof(help));
}

/* A key that only repeats the previous one under another name (j / Down
 * with the same action and help) is folded into it. */
static bool alias(const ui_key *k, size_t i)
{
    return i > 0 && k[i].fn == k[i - 1].fn && !strcmp(k[i].help, k[i - 1].help);
}

static int shown(const ui_key *k, size_t n)
{
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += !alias(k, i);
    return c;
}

static int lines(ui *u)
{
    int n = 2 + (int)ui_nglobal_keys + (u->cmp ? (int)cmpv_nkeys : 0);
    for (int i = 0; i < UI_NPANES - 1; i++)
        n += 2 + shown(u->panes[i]->keys, u->panes[i]->nkeys);
    return n;
}

static void draw(ui *u, void *st, int y, int x, int h, int w)
{
    help *hp = st;
    ui_rect r = { y, x, h, w };
    int row = -hp->top;
    attr_t title = ui_attr(u, CP_TITLE, A_BOLD);
    ui_print(&r, row++, 1, title, "Keys everywhere");
    for (size_t i = 0; i < ui_nglobal_keys; i++, row++) {
        ui_printf(&r, row, 3, A_BOLD, "%-8s", ui_global_keys[i].name);
        ui_print(&r, row, 13, A_NORMAL, ui_global_keys[i].help);
    }
    for (size_t i = 0; u->cmp && i < cmpv_nkeys; i++, row++) {
        ui_printf(&r, row, 3, A_BOLD, "%-8s", cmpv_keys[i].name);
        ui_print(&r, row, 13, A_NORMAL, cmpv_keys[i].help);
    }
    for (int p = 0; p < UI_NPANES - 1; p++) {
        const ui_pane *pn = u->panes[p];
        row++;
        ui_printf(&r, row++, 1, title, "%d %s", p + 1, pn->name);
        for (size_t i = 0; i < pn->nkeys; i++) {
            if (alias(pn->keys, i))
                continue;
            char names[64];                     /* "j/Down" from the run of aliases */
            size_t o = (size_t)snprintf(names, sizeof names, "%s", pn->keys[i].name);
            for (size_t j = i + 1; j < pn->nkeys && alias(pn->keys, j) && o < sizeof names; j++)
                if (!strstr(names, pn->keys[j].name))
                    o += (size_t)snprintf(names + o, sizeof names - o, "/%s", pn->keys[j].name);
            ui_printf(&r, row, 3, A_BOLD, "%-16s", names);
            ui_print(&r, row++, 20, A_NORMAL, pn->keys[i].help);
        }
    }
}

static int k_scroll(ui *u, void *st, int key)
{
    help *hp = st;
    int max = lines(u) - 1;
    if (key == 'j' || key == KEY_DOWN)
        hp->top++;
    else if (key == 'k' || key == KEY_UP)
        hp->top--;
    else if (key == KEY_NPAGE || key == ' ')
        hp->top += 10;
    else if (key == KEY_PPAGE)
        hp->top -= 10;
    else if (key == KEY_HOME || key == 'g')
        hp->top = 0;
    if (hp->top > max)
        hp->top = max;
    if (hp->top < 0)
        hp->top = 0;
    return UI_REDRAW;
}

static int k_back(ui *u, void *st, int key)
{
    (void)st; (void)key;
    ui_show(u, u->prev_pane);
    return UI_REDRAW;
}

static const ui_key keys[] = {
    { 'j', "j/Down", k_scroll, "scroll down" }, { KEY_DOWN, "Down", k_scroll, "scroll down" },
    { 'k', "k/Up", k_scroll, "scroll up" }, { KEY_UP, "Up", k_scroll, "scroll up" },
    { KEY_NPAGE, "PgDn", k_scroll, "page down" }, { KEY_PPAGE, "PgUp", k_scroll, "page up" },
    { KEY_HOME, "Home", k_scroll, "top" }, { 27, "Esc", k_back, "back" },
    { KEY_BACKSPACE, "Bksp", k_back, "back" },
};

const ui_pane pane_help = {
    .name = "Help",
    .hint = "j/k: scroll  Esc or ?: back",
    .init = init,
    .draw = draw,
    .free = free,
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
};
