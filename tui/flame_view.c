/*
 * flame_view.c - the Flame pane's vertical window over a deep layout, the
 * place of the list of frames below a shallow one, and its colour
 * palette, as pure functions (no curses); rules in flame.h.
 */
#include <math.h>

#include "flame.h"

flame_window flame_window_fit(int rows, int height, int sel_row, int top)
{
    flame_window w = { 0 };
    if (rows <= 0 || height <= 0)
        return w;
    if (rows <= height) {
        w.shown = rows;
        return w;
    }
    w.marks = height >= 3;
    if (top < 0)
        top = 0;
    if (top > rows - 1)
        top = rows - 1;
    if (sel_row >= rows)
        sel_row = rows - 1;
    int avail = height, a = 0;
    /* each pass fixes one thing; the markers change `avail` by one, so a
     * few passes settle (the loop is bounded all the same) */
    for (int pass = 0; pass < 8; pass++) {
        a = w.marks && top > 0;
        avail = height - a;
        if (w.marks && top + avail < rows)
            avail--;
        if (avail < 1)
            avail = 1;
        if (sel_row >= 0 && sel_row < top) {
            top = sel_row;
        } else if (sel_row >= 0 && sel_row >= top + avail) {
            top = sel_row - avail + 1;
        } else if (top + avail > rows) {
            top = rows - avail > 0 ? rows - avail : 0;
        } else {
            break;
        }
    }
    w.top = top;
    w.y0 = a;
    w.shown = top + avail <= rows ? avail : rows - top;
    w.above = top;
    w.below = rows - top - w.shown;
    return w;
}

/* ---- the list below the flame ---- */

flame_list_geo flame_list_fit(int area, int used)
{
    flame_list_geo g = { -1, 0 };
    if (used < 0)
        used = 0;
    if (area - used < 3)                /* a gap, the header, one frame */
        return g;
    g.y = used + 1;
    g.rows = area - used - 2;
    return g;
}

int flame_list_top(int n, int rows, int mark, int top)
{
    if (n <= 0 || rows <= 0 || n <= rows)
        return 0;
    if (mark >= n)
        mark = n - 1;
    if (mark >= 0 && mark < top)
        top = mark;
    if (mark >= 0 && mark >= top + rows)
        top = mark - rows + 1;
    if (top > n - rows)
        top = n - rows;
    return top > 0 ? top : 0;
}

/* ---- palette ---- */

void flame_rgb(int c, unsigned char rgb[3])
{
    static const unsigned char basic[16][3] = {
        { 0, 0, 0 }, { 205, 0, 0 }, { 0, 205, 0 }, { 205, 205, 0 },
        { 0, 0, 238 }, { 205, 0, 205 }, { 0, 205, 205 }, { 229, 229, 229 },
        { 127, 127, 127 }, { 255, 0, 0 }, { 0, 255, 0 }, { 255, 255, 0 },
        { 92, 92, 255 }, { 255, 0, 255 }, { 0, 255, 255 }, { 255, 255, 255 },
    };
    static const unsigned char level[6] = { 0, 95, 135, 175, 215, 255 };
    if (c < 0 || c > 255) {
        rgb[0] = rgb[1] = rgb[2] = 0;
    } else if (c < 16) {
        for (int i = 0; i < 3; i++)
            rgb[i] = basic[c][i];
    } else if (c < 232) {
        int k = c - 16;
        rgb[0] = level[k / 36];
        rgb[1] = level[k / 6 % 6];
        rgb[2] = level[k % 6];
    } else {
        rgb[0] = rgb[1] = rgb[2] = (unsigned char)(8 + 10 * (c - 232));
    }
}

/* WCAG relative luminance. */
static double luminance(int c)
{
    unsigned char rgb[3];
    static const double weight[3] = { 0.2126, 0.7152, 0.0722 };
    double l = 0;
    flame_rgb(c, rgb);
    for (int i = 0; i < 3; i++) {
        double v = rgb[i] / 255.0;
        v = v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
        l += weight[i] * v;
    }
    return l;
}

double flame_contrast(int a, int b)
{
    double la = luminance(a), lb = luminance(b);
    return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

void flame_palette(int ncolors, flame_pair out[FLAME_NSLOTS])
{
    /* 8 colours have no soft warm shades: yellow, red, white, green, and
     * cyan for matches; with 256, peach / salmon / tan / honey, a soft red,
     * amber and green, light blue for matches */
    static const short bg8[FLAME_NSLOTS] = { 3, 1, 7, 2, 1, 3, 2, 6 };
    static const short bg256[FLAME_NSLOTS] = { 223, 216, 180, 222, 167, 179, 114, 117 };
    bool rich = ncolors >= 256;
    short black = rich ? 16 : 0, white = rich ? 231 : 7;
    for (int i = 0; i < FLAME_NSLOTS; i++) {
        short bg = rich ? bg256[i] : bg8[i];
        out[i].bg = bg;
        out[i].fg = flame_contrast(black, bg) >= flame_contrast(white, bg) ? black : white;
    }
}
