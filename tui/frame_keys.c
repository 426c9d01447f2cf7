/*
 * frame_keys.c - the global keys that open a prompt: / (search, the
 * matches highlighted as the pattern is typed, Enter selects the next
 * match) and \ or F4 (the filter the Tree and Ops panes apply).
 */
#include <stdio.h>
#include <string.h>

#include "compare_view.h"
#include "frame.h"

/* Incremental search: the pattern takes effect (highlights) as it is typed. */
static void search_changed(ui *u, const char *text, void *ctx)
{
    (void)ctx;
    snprintf(u->search, sizeof u->search, "%s", text);
    ui_redraw(u);
}

/* The filter applies on Enter; the screen is redrawn (a resize) meanwhile. */
static void redraw_changed(ui *u, const char *text, void *ctx)
{
    (void)text; (void)ctx;
    ui_redraw(u);
}

/* The pane's "next match" key, run once the pattern is accepted. */
static int next_match(ui *u)
{
    const ui_pane *p = u->panes[u->pane];
    for (size_t i = 0; i < p->nkeys; i++)
        if (p->keys[i].key == 'n')
            return p->keys[i].fn(u, u->state[u->pane], 'n') & ~UI_PASS;
    return UI_REDRAW;
}

int ui_key_search(ui *u, void *st, int key)
{
    (void)st; (void)key;
    char before[sizeof u->search];
    memcpy(before, u->search, sizeof before);
    ui_line l = { .n = 0 };
    int r = ui_prompt(u, "/", &l, ui_stop_flag(), search_changed, NULL);
    if (r < 0)
        return UI_QUIT;                 /* a signal, or the terminal is gone */
    if (r == 0) {                       /* cancelled: the old pattern again */
        memcpy(u->search, before, sizeof before);
        return UI_REDRAW;
    }
    snprintf(u->search, sizeof u->search, "%s", l.buf);
    if (!l.buf[0]) {
        ui_message(u, "search cleared");
        return UI_REDRAW;
    }
    return next_match(u) | UI_REDRAW;
}

/* Panes rebuild their views (the filter changed), on both sides when
 * comparing. */
static void refilter(ui *u)
{
    int sides = u->cmp ? 2 : 1, focus = u->side;
    for (int k = 0; k < sides; k++) {
        if (u->cmp)
            cmpv_use(u, k);
        for (int i = 0; i < UI_NPANES; i++)
            if (u->panes[i]->reload)
                u->panes[i]->reload(u, u->state[i]);
    }
    if (u->cmp)
        cmpv_use(u, focus);
}

int ui_key_filter(ui *u, void *st, int key)
{
    (void)st; (void)key;
    ui_line l = { .n = 0 };
    snprintf(l.buf, sizeof l.buf, "%s", u->filter);
    l.n = strlen(l.buf);
    int r = ui_prompt(u, "filter: ", &l, ui_stop_flag(), redraw_changed, NULL);
    if (r < 0)
        return UI_QUIT;
    if (r == 0 || !strcmp(l.buf, u->filter))
        return UI_REDRAW;
    snprintf(u->filter, sizeof u->filter, "%s", l.buf);
    refilter(u);
    if (u->filter[0])
        ui_message(u, "Tree and Ops show names matching \"%s\" (\\: change)", u->filter);
    else
        ui_message(u, "filter cleared");
    return UI_REDRAW;
}
