/*
 * layout.c - the explorer's geometry and text cells as pure functions: no
 * curses calls here, so they are unit-tested over many terminal sizes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "treeview.h"
#include "ui.h"

ui_layout ui_layout_compute(int rows, int cols)
{
    ui_layout l = { 0 };
    l.cols = cols > 0 ? cols : 0;
    if (rows < UI_MIN_ROWS || cols < UI_MIN_COLS) {
        l.too_small = true;
        return l;
    }
    l.tabs_y = 0;
    l.body_y = 1;
    l.status_y = rows - 1;
    l.body_h = rows - 2;
    return l;
}

int ui_too_small_text(int rows, int cols, char out[][UI_SMALL_COLS])
{
    /* screens from the most said to the least, lines split at '\n';
     * %N is what is needed, %H what there is */
    static const char *const screens[] = {
        "terminal too small\nneed %N, have %H\nq: quit",
        "terminal too small\nneed %N\nhave %H\nq: quit",
        "too small\nneed %N\nhave %H\nq: quit",
        "terminal too small\nneed %N, have %H",
        "terminal too small: need %N, have %H",
        "terminal too small\nneed %N\nhave %H",
        "too small\nneed %N\nhave %H",
        "terminal too small\nhave %H",
        "too small\nhave %H",
        "too small: have %H",
        "too small\n%H",
        "small\n%H",
        "have %H",
        "%H",
        "small",
        "!",
    };
    char need[24], have[24];
    snprintf(need, sizeof need, "%dx%d", UI_MIN_COLS, UI_MIN_ROWS);
    snprintf(have, sizeof have, "%dx%d", cols > 0 ? cols : 0, rows > 0 ? rows : 0);
    for (size_t i = 0; i < sizeof screens / sizeof screens[0]; i++) {
        int n = 0;
        bool fits = true;
        for (const char *p = screens[i]; *p && fits && n < UI_SMALL_LINES; n++) {
            size_t len = strcspn(p, "\n"), o = 0;
            char *line = out[n];
            line[0] = '\0';
            for (size_t k = 0; k < len && o < UI_SMALL_COLS; k++) {
                bool fig = p[k] == '%' && (p[k + 1] == 'N' || p[k + 1] == 'H');
                const char *v = !fig ? NULL : p[k + 1] == 'N' ? need : have;
                o += (size_t)snprintf(line + o, UI_SMALL_COLS - o, "%.*s", v ? (int)strlen(v) : 1,
                                      v ? v : p + k);
                k += fig;
            }
            fits = n < rows && o < UI_SMALL_COLS && (int)o <= cols;
            p += len + (p[len] == '\n');
        }
        if (fits)
            return n;
    }
    return 0;
}

ui_split ui_split_compute(int body_y, int body_h, int cols, int split_cols)
{
    ui_split s = { 0 };
    if (body_h < 0)
        body_h = 0;
    if (cols < 0)
        cols = 0;
    s.stacked = cols < (split_cols > UI_SPLIT_COLS ? split_cols : UI_SPLIT_COLS);
    if (!s.stacked) {                   /* left | right, one column between */
        s.w[0] = (cols - 1) / 2;
        s.w[1] = cols - 1 - s.w[0];
        s.x[1] = s.w[0] + 1;
        s.y[0] = s.y[1] = body_y;
        s.h[0] = s.h[1] = body_h;
    } else {                            /* top / bottom, one row between */
        s.h[0] = body_h > 0 ? (body_h - 1) / 2 : 0;
        s.h[1] = body_h > 0 ? body_h - 1 - s.h[0] : 0;
        s.y[0] = body_y;
        s.y[1] = body_y + s.h[0] + 1;
        s.w[0] = s.w[1] = cols;
    }
    return s;
}

int ui_columns(int width, const int *fixed, int n, int min_flex, int *out)
{
    int nflex = 0, used = 0, shown = 0;
    if (width < 0)
        width = 0;
    for (int i = 0; i < n; i++)
        out[i] = 0;
    /* take columns from the left while the flexible ones keep min_flex */
    for (int i = 0; i < n; i++) {
        int need = fixed[i] > 0 ? fixed[i] : min_flex;
        int flex_after = nflex + (fixed[i] > 0 ? 0 : 1);
        if (used + need + (shown ? 1 : 0) > width)
            break;
        used += need + (shown ? 1 : 0);
        nflex = flex_after;
        shown++;
    }
    int left = width - used;
    for (int i = 0; i < shown; i++) {
        if (fixed[i] > 0) {
            out[i] = fixed[i];
        } else {
            int extra = nflex ? left / nflex : 0;
            out[i] = min_flex + extra;
            left -= extra;
            nflex--;
        }
    }
    return shown;
}

static size_t put(char *out, size_t cap, size_t at, const char *s)
{
    size_t n = strlen(s);
    if (at + n + 1 > cap)
        return at;
    memcpy(out + at, s, n);
    out[at + n] = '\0';
    return at + n;
}

size_t ui_bar(char *out, size_t cap, double frac, int n, bool utf8)
{
    static const char *const eighths[] = { "", "\u258f", "\u258e", "\u258d", "\u258c",
                                           "\u258b", "\u258a", "\u2589" };
    size_t at = 0;
    if (!cap)
        return 0;
    out[0] = '\0';
    if (n <= 0 || !(frac > 0))
        return 0;
    if (frac > 1)
        frac = 1;
    long units = lround(frac * n * 8);
    for (int i = 0; i < n; i++) {
        long u = units - (long)i * 8;
        if (u <= 0)
            break;
        if (u >= 8)
            at = put(out, cap, at, utf8 ? "\u2588" : "#");
        else if (utf8)
            at = put(out, cap, at, eighths[u]);
        else if (u >= 4)
            at = put(out, cap, at, "#");
    }
    return at;
}

size_t ui_sparkline(char *out, size_t cap, const double *v, size_t nv, int n, bool utf8)
{
    static const char *const levels[] = { "\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588" };
    static const char ascii[] = "_.-~=+*#";
    size_t at = 0;
    if (!cap)
        return 0;
    out[0] = '\0';
    if (!nv || n <= 0)
        return 0;
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < nv; i++) {
        if (v[i] < lo)
            lo = v[i];
        if (v[i] > hi)
            hi = v[i];
    }
    int cells = (size_t)n < nv ? n : (int)nv;
    for (int c = 0; c < cells; c++) {
        size_t a = (size_t)c * nv / (size_t)cells, b = (size_t)(c + 1) * nv / (size_t)cells;
        double m = v[a];
        for (size_t i = a; i < b; i++)       /* max of the bucket: peaks show */
            if (v[i] > m)
                m = v[i];
        int lvl = hi > lo ? (int)((m - lo) / (hi - lo) * 7.0 + 0.5) : 3;
        if (lvl < 0)
            lvl = 0;
        if (lvl > 7)
            lvl = 7;
        char a1[2] = { ascii[lvl], '\0' };
        at = put(out, cap, at, utf8 ? levels[lvl] : a1);
    }
    return at;
}

size_t ui_list_move(int key, size_t r, size_t n, size_t page)
{
    if (!n)
        return 0;
    if (page < 1)
        page = 1;
    switch (key) {
    case 'j': case KEY_DOWN: r = r + 1 < n ? r + 1 : r; break;
    case 'k': case KEY_UP: r = r ? r - 1 : 0; break;
    case KEY_NPAGE: r = r + page < n ? r + page : n - 1; break;
    case KEY_PPAGE: r = r > page ? r - page : 0; break;
    case KEY_HOME: case 'g': r = 0; break;
    case KEY_END: case 'G': r = n - 1; break;
    default: break;
    }
    return r < n ? r : n - 1;
}

int ui_fit_parts(char *out, size_t cap, const char *const *parts, int n, const char *sep,
                 int width)
{
    size_t at = 0;
    int used = 0, taken = 0, sepw = fmt_width(sep);
    if (!cap)
        return 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!parts[i] || !parts[i][0])
            continue;
        int w = fmt_width(parts[i]) + (taken ? sepw : 0);
        size_t len = strlen(parts[i]) + (taken ? strlen(sep) : 0);
        if (used + w > width || at + len + 1 > cap)
            break;                      /* whole parts only, in order */
        at += (size_t)snprintf(out + at, cap - at, "%s%s", taken ? sep : "", parts[i]);
        used += w;
        taken++;
    }
    return taken;
}

int ui_elide_mid(char *out, size_t cap, const char *s, int cols, bool utf8)
{
    return tv_fit_mid(out, cap, s, cols, utf8);    /* one elision for every pane */
}

int ui_elide_words(char *out, size_t cap, const char *s, int cols, bool utf8)
{
    enum { MAXW = 64 };
    const char *start[MAXW];
    int width[MAXW], len[MAXW], n = 0;
    if (!cap)
        return 0;
    out[0] = '\0';
    if (!s || cols <= 0)
        return 0;
    if (fmt_width(s) <= cols)
        return ui_elide_mid(out, cap, s, cols, utf8);
    for (const char *p = s; *p && n < MAXW;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *q = p;
        while (*q && *q != ' ')
            q++;
        char w[256];
        size_t l = (size_t)(q - p) < sizeof w ? (size_t)(q - p) : sizeof w - 1;
        memcpy(w, p, l);
        w[l] = '\0';
        start[n] = p;
        len[n] = (int)(q - p);
        width[n++] = fmt_width(w);
        p = q;
    }
    const char *ell = utf8 ? "\u2026" : "~";
    /* words alternately from the head and the tail around " ... " */
    int head = 0, tail = 0, used = 1;
    for (bool grew = true; grew && head + tail < n;) {
        grew = false;
        if (head + tail < n && used + width[head] + 1 <= cols) {
            used += width[head++] + 1;
            grew = true;
        }
        if (head + tail < n && used + width[n - 1 - tail] + 1 <= cols) {
            used += width[n - 1 - tail++] + 1;
            grew = true;
        }
    }
    if (!head)                          /* one long word: cut inside it */
        return ui_elide_mid(out, cap, s, cols, utf8);
    size_t at = 0;
    for (int i = 0; i < head + tail + 1; i++) {
        const char *w = i < head ? start[i] : i == head ? ell : start[n - tail + (i - head - 1)];
        int l = i == head ? (int)strlen(ell) : len[i < head ? i : n - tail + (i - head - 1)];
        if (at + (size_t)l + 2 > cap)
            break;
        if (i)
            out[at++] = ' ';
        memcpy(out + at, w, (size_t)l);
        at += (size_t)l;
    }
    out[at] = '\0';
    return fmt_width(out);
}
