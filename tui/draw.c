/*
 * draw.c - clipped text output for panes.  Widths count code points (the
 * explorer prints ASCII and one-column block characters); without a UTF-8
 * locale every non-ASCII byte of a name prints as '?'.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ui.h"

static bool draw_utf8 = true;

void ui_draw_set_utf8(bool on)
{
    draw_utf8 = on;
}

int ui_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            w++;
    return w;
}

int ui_print(const ui_rect *r, int row, int col, attr_t attr, const char *s)
{
    if (row < 0 || row >= r->h || col < 0 || col >= r->w || !s)
        return 0;
    int room = r->w - col, cols = 0;
    char buf[1024];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && cols < room; ) {
        size_t len = 1;
        if (*p >= 0x80) {
            if (*p >= 0xf0)
                len = 4;
            else if (*p >= 0xe0)
                len = 3;
            else if (*p >= 0xc0)
                len = 2;
            for (size_t i = 1; i < len; i++)
                if ((p[i] & 0xc0) != 0x80) {
                    len = i;
                    break;
                }
        }
        if (o + len + 1 >= sizeof buf)
            break;
        if (*p >= 0x80 && !draw_utf8) {
            buf[o++] = '?';
        } else if (*p < 0x20 || *p == 0x7f) {
            buf[o++] = '?';
        } else {
            memcpy(buf + o, p, len);
            o += len;
        }
        p += len;
        cols++;
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

attr_t ui_attr(const ui *u, int pair, attr_t mono)
{
    return u->color ? COLOR_PAIR(pair) : mono;
}
