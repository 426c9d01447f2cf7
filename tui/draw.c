/*
 * draw.c - clipped text output for panes.  Widths count code points (the
 * explorer prints ASCII and one-column block characters).  Text passes
 * through esc_char() (escape.h): controls, bidi controls and invalid UTF-8
 * show as visible escapes ("\x1b", "\u202e"), each column of which counts;
 * without a UTF-8 locale every other non-ASCII character prints as '?'.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "ui.h"

static bool draw_utf8 = true;

void ui_draw_set_utf8(bool on)
{
    draw_utf8 = on;
}

int ui_width(const char *s)
{
    int w = 0;
    char rep[ESC_CHAR_MAX];
    bool esc;
    while (*s) {
        s += esc_char(s, rep, &esc);
        w += esc ? (int)strlen(rep) : 1;
    }
    return w;
}

int ui_print(const ui_rect *r, int row, int col, attr_t attr, const char *s)
{
    if (row < 0 || row >= r->h || col < 0 || col >= r->w || !s)
        return 0;
    int room = r->w - col, cols = 0;
    char buf[1024];
    size_t o = 0;
    char rep[ESC_CHAR_MAX];
    bool esc;
    while (*s && cols < room) {
        size_t take = esc_char(s, rep, &esc);
        if (!esc && (unsigned char)*s >= 0x80 && !draw_utf8)
            memcpy(rep, "?", 2);
        size_t len = strlen(rep);
        int w = esc ? (int)len : 1;
        if (o + len + 1 >= sizeof buf || cols + w > room)
            break;
        memcpy(buf + o, rep, len);
        o += len;
        s += take;
        cols += w;
    }
    buf[o] = '\0';
    if (attr)
        attron(attr);
    mvaddstr(r->y + row, r->x + col, buf);
    if (attr)
        attroff(attr);
    return cols;
}

int ui_printf(const ui_rect *r, int row, int col, attr_t attr, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ui_print(r, row, col, attr, buf);
}

int ui_print_parts(const ui_rect *r, int row, int col, const char *const *parts,
                   const attr_t *attrs, int n, const char *sep)
{
    int used = 0, sepw = ui_width(sep);
    for (int i = 0; i < n; i++) {
        if (!parts[i] || !parts[i][0])
            continue;
        int w = ui_width(parts[i]), gap = used ? sepw : 0;
        if (col + used + gap + w > r->w)
            break;                      /* whole parts only, in order */
        if (gap)
            ui_print(r, row, col + used, A_NORMAL, sep);
        ui_print(r, row, col + used + gap, attrs ? attrs[i] : A_NORMAL, parts[i]);
        used += gap + w;
    }
    return used;
}

void ui_fill(const ui_rect *r, int row, attr_t attr)
{
    if (row < 0 || row >= r->h || r->w <= 0)
        return;
    if (attr)
        attron(attr);
    mvhline(r->y + row, r->x, ' ', r->w);
    if (attr)
        attroff(attr);
}

void ui_thread_label(const prism_analysis *a, size_t i, bool detail, char *buf, size_t cap)
{
    const char *name = NULL;
    uint32_t stream = 0;
    uint64_t pid = 0;
    char who[96];
    if (!prism_analysis_thread_tree(a, i, &stream, &name)) {
        snprintf(buf, cap, "thread ?");
        return;
    }
    if (name && *name)
        snprintf(who, sizeof who, "thread %s", name);
    else
        snprintf(who, sizeof who, "thread %u", (unsigned)stream);
    bool worker = prism_analysis_thread_worker(a, i, NULL, &pid);
    if (worker && detail)
        snprintf(buf, cap, "%s (worker, pid %llu)", who, (unsigned long long)pid);
    else if (worker)
        snprintf(buf, cap, "%s (worker)", who);
    else if (detail)
        snprintf(buf, cap, "%s (stream %u)", who, (unsigned)stream);
    else
        snprintf(buf, cap, "%s", who);
}

void ui_draw_too_small(int rows, int cols)
{
    char lines[UI_SMALL_LINES][UI_SMALL_COLS];
    ui_rect r = { 0, 0, rows, cols };
    int n = ui_too_small_text(rows, cols, lines);
    /* at 1 row the text ends in the bottom-right cell, which curses writes
     * only on a screen it repaints whole: without that a 1x1 terminal kept
     * the previous frame's first letter */
    if (rows <= 1)
        clearok(curscr, TRUE);
    for (int i = 0; i < n; i++)
        ui_print(&r, i, 0, i == 0 && n > 1 ? A_BOLD : A_NORMAL, lines[i]);
}

attr_t ui_attr(const ui *u, int pair, attr_t mono)
{
    return u->color ? COLOR_PAIR(pair) : mono;
}
