/*
 * panes.c - the pane registry: every pane of the explorer, once.  The
 * frame's panes (explore.c), the number keys' panes, the --pane names
 * (and the command line's error text for a bad one) and the help's
 * sections and its list of keys everywhere are taken from this table.  A
 * new pane: its file (a const ui_pane), a PANE_* before PANE_HELP in ui.h,
 * and a row here.
 */
#include <stdio.h>
#include <strings.h>

#include "ui.h"

const ui_pane_entry ui_panes[UI_NPANES] = {
    { PANE_SUMMARY, "summary", '1', &pane_summary },
    { PANE_TREE, "tree", '2', &pane_tree },
    { PANE_FLAME, "flame", '3', &pane_flame },
    { PANE_OPS, "ops", '4', &pane_ops },
    { PANE_MEMORY, "memory", '5', &pane_memory },
    { PANE_GPU, "gpu", '6', &pane_gpu },
    { PANE_BOTTLENECKS, "bottlenecks", '7', &pane_bottlenecks },
    { PANE_TIMELINE, "timeline", '8', &pane_timeline },
    { PANE_HELP, "help", 0, &pane_help },
};

int ui_pane_by_name(const char *name)
{
    for (int i = 0; name && i < UI_NPANES; i++)
        if (!strcasecmp(name, ui_panes[i].name))
            return i;
    return -1;
}

int ui_pane_by_key(int key)
{
    for (int i = 0; key && i < UI_NPANES; i++)
        if (ui_panes[i].key == key)
            return i;
    return -1;
}

const char *ui_pane_names(char *buf, size_t cap, const char *sep)
{
    size_t len = 0;
    bool first = true;
    if (cap)
        buf[0] = '\0';
    for (int i = 0; i < UI_NPANES && len < cap; i++) {
        if (!ui_panes[i].key)           /* Help: not a tab */
            continue;
        int n = snprintf(buf + len, cap - len, "%s%s", first ? "" : sep, ui_panes[i].name);
        if (n < 0)
            break;
        len += (size_t)n;
        first = false;
    }
    return buf;
}
