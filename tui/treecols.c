/*
 * treecols.c - the Tree pane's column widths (see treecols.h).
 */
#include "treecols.h"

static const int fixed[TC_N] = {
    [TC_TOTAL] = 9, [TC_DELTA] = 16, [TC_SELF] = 9, [TC_CALLS] = 7, [TC_MEAN] = 9,
    [TC_PCT] = 5, [TC_PARENT] = 5, [TC_CPU] = 4, [TC_STEP] = 9, [TC_STEPMAX] = 9,
    [TC_BAR] = TC_BAR_MIN,
};

static const char *const titles[TC_N] = {
    [TC_NAME] = "", [TC_TOTAL] = "total", [TC_DELTA] = "vs base", [TC_SELF] = "self",
    [TC_CALLS] = "calls", [TC_MEAN] = "mean", [TC_PCT] = "%", [TC_PARENT] = "%par",
    [TC_CPU] = "cpu%", [TC_STEP] = "step avg", [TC_STEPMAX] = "step max", [TC_BAR] = "",
};

/* The priority: what a narrow pane keeps first.  The first tier comes
 * before the name grows past TC_NAME_MIN, the others after. */
static const int tier1[] = { TC_TOTAL, TC_DELTA, TC_SELF };
static const int tier1b[] = { TC_PCT, TC_CALLS, TC_BAR };
static const int tier2[] = { TC_MEAN, TC_PARENT, TC_CPU, TC_STEP, TC_STEPMAX };

int tc_fixed(int col)
{
    return col >= 0 && col < TC_N ? fixed[col] : 0;
}

const char *tc_title(int col)
{
    return col >= 0 && col < TC_N ? titles[col] : "";
}

static int add(const int *cols, int n, unsigned avail, const int *want, int width, int *used,
               int cw[TC_N])
{
    int shown = 0;
    for (int i = 0; i < n; i++) {
        int c = cols[i], cwid = want && want[c] > fixed[c] ? want[c] : fixed[c];
        if (!(avail & (1u << c)) || *used + 1 + cwid > width)
            continue;
        cw[c] = cwid;
        *used += 1 + cwid;
        shown++;
    }
    return shown;
}

int tc_layout(int width, int name_need, unsigned avail, const int *fig, int cw[TC_N])
{
    for (int c = 0; c < TC_N; c++)
        cw[c] = 0;
    if (width < 1)
        width = 1;
    int want = name_need < TC_NAME_MIN ? TC_NAME_MIN : name_need;
    if (want > TC_NAME_CAP)
        want = TC_NAME_CAP;
    int first = width / 2 > TC_NAME_MIN ? width / 2 : TC_NAME_MIN;
    int name = want < first ? want : first;     /* names before figures, to half */
    if (name > width)
        name = width;
    int used = name;
    int shown = 1 + add(tier1, (int)(sizeof tier1 / sizeof *tier1), avail, fig, width, &used, cw);
    int grow = want - name;             /* the name as wide as it needs */
    if (grow > width - used)
        grow = width - used;
    if (grow > 0) {
        name += grow;
        used += grow;
    }
    shown += add(tier1b, (int)(sizeof tier1b / sizeof *tier1b), avail, fig, width, &used, cw);
    shown += add(tier2, (int)(sizeof tier2 / sizeof *tier2), avail, fig, width, &used, cw);
    if (cw[TC_BAR]) {                   /* the rest widens the bar, to a third */
        int more = width / 3 - cw[TC_BAR];
        if (more > width - used)
            more = width - used;
        if (more > 0) {
            cw[TC_BAR] += more;
            used += more;
        }
    }
    cw[TC_NAME] = name;
    return shown;
}
