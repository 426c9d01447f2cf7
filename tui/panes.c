/*
 * panes.c - the pane registry: every pane of the explorer, once.  The
 * frame's panes (explore.c), the number keys, the --pane names (and the
 * command line's error text for a bad one) and the help's sections are
 * taken from this table.  A new pane: its file (a const ui_pane), a PANE_*
 * before PANE_HELP in ui.h, and a row here.
 */
#include <stdio.h>
#include <strings.h>

#include "ui.h"

const ui_pane_entry ui_panes[UI_NPANES] = {
    { PANE_SUMMARY, "summary", '1', "the profile at a glance", &pane_summary },
    { PANE_TREE, "tree", '2', "the call tree", &pane_tree },
    { PANE_FLAME, "flame", '3', "the flame graph", &pane_flame },
    { PANE_OPS, "ops", '4', "operations by total time", &pane_ops },
    { PANE_MEMORY, "memory", '5', "memory over time, the leak verdict", &pane_memory },
    { PANE_GPU, "gpu", '6', "kernels, transfers, GPU activity", &pane_gpu },
    { PANE_BOTTLENECKS, "bottlenecks", '7', "bottlenecks with evidence and a fix",
      &pane_bottlenecks },
    { PANE_TIMELINE, "timeline", '8', "steps over time, one step's spans", &pane_timeline },
    { PANE_HELP, "help", 0, "the keys of every pane", &pane_help },
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
