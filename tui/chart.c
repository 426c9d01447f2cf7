/*
 * chart.c - multi-row text charts and word wrap as pure functions (no
 * curses): see chart.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"

/* Lower eighth blocks U+2581..U+2588, index = filled eighths. */
static const char *const eighths[9] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
                                        "\u2585", "\u2586", "\u2587", "\u2588" };

static void set(chart_cell *cell, const char *glyph, int kind)
{
    size_t n = strlen(glyph);
    if (n >= sizeof cell->s)
        n = sizeof cell->s - 1;
    memcpy(cell->s, glyph, n);
    cell->s[n] = '\0';
    cell->kind = (unsigned char)kind;
}

bool chart_init(chart *c, int h, int w, double lo, double hi, bool utf8)
{
    memset(c, 0, sizeof *c);
    if (h < 1 || w < 1 || (size_t)h > SIZE_MAX / sizeof *c->cells / (size_t)w)
        return false;
    c->cells = malloc((size_t)h * (size_t)w * sizeof *c->cells);
    if (!c->cells)
        return false;
    c->h = h;
    c->w = w;
    if (!isfinite(lo) || !isfinite(hi)) {       /* nothing sensible to scale */
        lo = 0;
        hi = 1;
    }
    /* an empty range gets a width that survives rounding (1e20 + 1 == 1e20) */
    c->lo = lo;
    c->hi = hi > lo ? hi : lo + fmax(1.0, fabs(lo) * 1e-9);
    c->utf8 = utf8;
    for (size_t i = 0; i < (size_t)h * (size_t)w; i++)
        set(&c->cells[i], " ", CHART_EMPTY);
    return true;
}

void chart_free(chart *c)
{
    free(c->cells);
    c->cells = NULL;
    c->h = c->w = 0;
}

int chart_col(double x, double x0, double x1, int w)
{
    if (w < 1)
        return 0;
    if (!(x1 > x0))
        return 0;
    double f = (x - x0) / (x1 - x0) * w;
    if (!(f > 0))
        return 0;
    if (f >= w)
        return w - 1;
    return (int)f;
}

void chart_resample(const double *x, const double *y, size_t n, double *col, int w)
{
    for (int i = 0; i < w; i++)
        col[i] = NAN;
    if (!n || w < 1)
        return;
    for (size_t i = 0; i < n; i++) {
        int c = chart_col(x[i], x[0], x[n - 1], w);
        if (isnan(col[c]) || y[i] > col[c])
            col[c] = y[i];
    }
    if (!(x[n - 1] > x[0]))             /* one point (or one instant): flat */
        for (int i = 1; i < w; i++)
            col[i] = col[0];
    for (int i = 1; i < w; i++)
        if (isnan(col[i]))
            col[i] = col[i - 1];
}

void chart_range(const double *v, size_t n, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (v[i] < a)
            a = v[i];
        if (v[i] > b)
            b = v[i];
    }
    if (!(a <= b) || !isfinite(a) || !isfinite(b)) {
        *lo = 0;
        *hi = 1;
        return;
    }
    double pad = b > a ? (b - a) * 0.05 : (fabs(b) > 0 ? fabs(b) * 0.1 : 1.0);
    *lo = a - pad;
    *hi = b + pad;
    if (a >= 0 && *lo < 0)
        *lo = 0;
}

void chart_range_min(double *lo, double *hi, double frac)
{
    if (!(*hi > 0) || !(frac > 0) || *hi - *lo >= frac * *hi)
        return;
    /* widen around the middle, not below 0 */
    double need = frac * *hi, mid = (*lo + *hi) / 2;
    double a = mid - need / 2, b = mid + need / 2;
    if (a < 0 && *lo >= 0) {
        a = 0;
        b = *hi;
    }
    *lo = a;
    *hi = b;
}

/* Fraction of the range, clamped to 0..1 (NAN, from an infinite value or
 * a range too wide for doubles, counts as 0: callers convert it to int). */
static double frac_of(const chart *c, double v)
{
    double f = (v - c->lo) / (c->hi - c->lo);
    return !(f > 0) ? 0 : f > 1 ? 1 : f;
}

void chart_bars(chart *c, const double *col)
{
    if (!c->cells)
        return;
    for (int x = 0; x < c->w; x++) {
        if (isnan(col[x]))
            continue;
        long e = lround(frac_of(c, col[x]) * c->h * 8);
        if (e == 0 && col[x] > c->lo)
            e = 1;                      /* anything above the floor shows */
        for (int b = 0; b < c->h; b++) {
            long fill = e - 8L * b;
            if (fill <= 0)
                break;
            if (fill > 8)
                fill = 8;
            const char *g = c->utf8 ? eighths[fill] : fill == 8 ? "#" : ".";
            set(&c->cells[(size_t)(c->h - 1 - b) * (size_t)c->w + (size_t)x], g, CHART_BAR);
        }
    }
}

void chart_trace(chart *c, const double *col, int kind)
{
    if (!c->cells)
        return;
    const char *g = kind == CHART_TRACE2 ? (c->utf8 ? "\u2550" : "=") : (c->utf8 ? "\u2500" : "-");
    for (int x = 0; x < c->w; x++) {
        if (isnan(col[x]) || col[x] < c->lo || col[x] > c->hi)
            continue;
        int b = (int)floor(frac_of(c, col[x]) * c->h);
        if (b >= c->h)
            b = c->h - 1;
        set(&c->cells[(size_t)(c->h - 1 - b) * (size_t)c->w + (size_t)x], g, kind);
    }
}

void chart_marker(chart *c, int x)
{
    if (!c->cells || x < 0 || x >= c->w)
        return;
    for (int r = 0; r < c->h; r++) {
        chart_cell *cell = &c->cells[(size_t)r * (size_t)c->w + (size_t)x];
        if (cell->kind == CHART_EMPTY)
            set(cell, c->utf8 ? "\u2502" : "|", CHART_MARK);
        cell->kind = CHART_MARK;
    }
}

int chart_run(const chart *c, int row, int from, char *out, size_t cap, int *kind)
{
    if (cap)
        out[0] = '\0';
    *kind = CHART_EMPTY;
    if (!c->cells || row < 0 || row >= c->h || from < 0 || from >= c->w || !cap)
        return 0;
    const chart_cell *line = &c->cells[(size_t)row * (size_t)c->w];
    size_t at = 0;
    int x = from;
    *kind = line[from].kind;
    for (; x < c->w && line[x].kind == *kind; x++) {
        size_t n = strlen(line[x].s);
        if (at + n + 1 > cap)
            break;
        memcpy(out + at, line[x].s, n);
        at += n;
    }
    out[at] = '\0';
    return x - from;
}

size_t chart_row_text(const chart *c, int row, char *out, size_t cap)
{
    size_t at = 0;
    if (!cap)
        return 0;
    out[0] = '\0';
    for (int x = 0; x < c->w; ) {
        int kind, n = chart_run(c, row, x, out + at, cap - at, &kind);
        if (n <= 0)
            break;
        at += strlen(out + at);
        x += n;
    }
    return at;
}

/* Bytes of the UTF-8 sequence that starts with byte b (1 for stray bytes). */
static size_t cp_len(unsigned char b)
{
    return b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
}

size_t wrap_line(const char *s, int width, size_t *next)
{
    size_t len = strlen(s), o = 0, brk = 0;
    int cols = 0;
    if (width < 1)
        width = 1;
    while (o < len && s[o] != '\n') {
        if (cols == width) {             /* full: break before this glyph */
            size_t end = s[o] == ' ' ? o : brk ? brk : o;
            size_t nx = end;
            while (nx < len && s[nx] == ' ')
                nx++;
            while (end > 0 && s[end - 1] == ' ')
                end--;
            *next = nx;
            return end;
        }
        if (s[o] == ' ' && o > 0 && s[o - 1] != ' ')
            brk = o;
        size_t n = cp_len((unsigned char)s[o]);
        for (size_t i = 1; i < n; i++)
            if (o + i >= len || ((unsigned char)s[o + i] & 0xc0) != 0x80) {
                n = i;
                break;
            }
        o += n;
        cols++;
    }
    size_t end = o;
    if (o < len) {                       /* a newline: skip it */
        o++;
        while (o < len && s[o] == ' ')
            o++;
    }
    while (end > 0 && s[end - 1] == ' ')
        end--;
    *next = o;
    return end;
}

int wrap_count(const char *s, int width)
{
    int n = 0;
    for (size_t o = 0; s[o]; n++) {
        size_t nx;
        wrap_line(s + o, width, &nx);
        o += nx;
    }
    return n;
}
