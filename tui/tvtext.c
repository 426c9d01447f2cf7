/*
 * tvtext.c - the Tree's text cells (declared in treeview.h): a name fitted
 * to a width, cut at the end, at the start or in the middle, escaped first
 * (escape.h) so that what is measured is what the terminal shows.  No
 * curses here.
 */
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "treeview.h"

/* ---- text cells ------------------------------------------------------------ */

static size_t cp_len(const unsigned char *p)
{
    size_t len = 1;
    if (*p >= 0xf0)
        len = 4;
    else if (*p >= 0xe0)
        len = 3;
    else if (*p >= 0xc0)
        len = 2;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return i;
    return len;
}

/* Append up to `cols` code points of s; returns the columns appended. */
static int append(char *out, size_t cap, size_t *o, const char *s, int cols)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n < cols; n++) {
        size_t len = cp_len(p);
        if (*o + len + 1 > cap)
            break;
        memcpy(out + *o, p, len);
        *o += len;
        p += len;
    }
    out[*o] = '\0';
    return n;
}

static int width_of(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p += cp_len(p))
        w++;
    return w;
}

enum { CUT_END, CUT_START, CUT_MIDDLE };

/* s escaped (what is fitted is what will be shown), then cut where asked. */
static int fit(char *out, size_t cap, const char *s, int width, bool utf8, int cut)
{
    char safe[ESC_CAP(PRISM_MAX_STRING_BYTES)];
    if (s && !esc_clean(s))
        s = esc_str(s, safe, sizeof safe);
    size_t o = 0;
    if (!cap)
        return 0;
    out[0] = '\0';
    if (!s || width <= 0)
        return 0;
    int w = width_of(s);
    if (w <= width)
        return append(out, cap, &o, s, width);
    const char *mark = utf8 ? "\u2026" : cut == CUT_MIDDLE ? ".." : "~";
    int mw = utf8 || cut != CUT_MIDDLE ? 1 : 2;
    if (cut == CUT_MIDDLE && width <= mw)   /* no room for both ends */
        return append(out, cap, &o, s, width);
    int head = cut == CUT_END ? width - mw : cut == CUT_START ? 0 : (width - mw + 1) / 2;
    int tail = width - mw - head;
    int n = append(out, cap, &o, s, head);
    n += append(out, cap, &o, mark, mw);
    const unsigned char *p = (const unsigned char *)s;
    for (int skip = w - tail; skip > 0 && *p; skip--)
        p += cp_len(p);
    return n + append(out, cap, &o, (const char *)p, tail);
}

int tv_fit(char *out, size_t cap, const char *s, int width, bool utf8)
{
    return fit(out, cap, s, width, utf8, CUT_END);
}

int tv_fit_left(char *out, size_t cap, const char *s, int width, bool utf8)
{
    return fit(out, cap, s, width, utf8, CUT_START);
}

int tv_fit_mid(char *out, size_t cap, const char *s, int width, bool utf8)
{
    return fit(out, cap, s, width, utf8, CUT_MIDDLE);
}
