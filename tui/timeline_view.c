/*
 * timeline_view.c - the Timeline pane's geometry (timeline_view.h).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "timeline_view.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The median of v[0..n) (n >= 1), sorting v. */
static double median_sorted(double *v, size_t n)
{
    pb_qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

size_t tlv_outliers(const double *dur, size_t n, bool *out, double *threshold)
{
    if (threshold)
        *threshold = 0;
    if (n)
        memset(out, 0, n * sizeof *out);
    if (n < 3)
        return 0;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(dur[i]))
            v[m++] = dur[i];
    if (m < 3) {
        free(v);
        return 0;
    }
    double med = median_sorted(v, m);
    for (size_t i = 0; i < m; i++)
        v[i] = fabs(v[i] - med);
    double mad = median_sorted(v, m) * 1.4826;
    free(v);
    double lim = med + (3 * mad > 0.05 * med ? 3 * mad : 0.05 * med);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(dur[i]) && dur[i] > lim) {
            out[i] = true;
            k++;
        }
    if (threshold)
        *threshold = lim;
    return k;
}

int tlv_bar_cols(size_t n, int w)
{
    if (!n || w < 1 || n > (size_t)w)
        return 1;
    size_t c = (size_t)w / n;
    return c > TLV_MAX_BAR_COLS ? TLV_MAX_BAR_COLS : (int)c;
}

size_t tlv_col_step(size_t n, int w, int col)
{
    if (!n || w < 1 || col < 0 || col >= w)
        return SIZE_MAX;
    if (n <= (size_t)w) {
        size_t i = (size_t)col / (size_t)tlv_bar_cols(n, w);
        return i < n ? i : SIZE_MAX;
    }
    return (size_t)col * n / (size_t)w;
}

int tlv_step_col(size_t n, int w, size_t i)
{
    if (!n || w < 1 || i >= n)
        return -1;
    if (n <= (size_t)w)
        return (int)(i * (size_t)tlv_bar_cols(n, w));
    /* the first column whose bucket holds i */
    size_t c = i * (size_t)w / n;
    while (c + 1 < (size_t)w && (c + 1) * n / (size_t)w <= i)
        c++;
    while (c > 0 && c * n / (size_t)w > i)
        c--;
    return (int)c;
}

size_t tlv_col_peak(const double *dur, size_t n, int w, int col)
{
    size_t a = tlv_col_step(n, w, col);
    if (a == SIZE_MAX || n <= (size_t)w)
        return a;
    size_t b = (size_t)(col + 1) * n / (size_t)w, best = a;
    for (size_t i = a + 1; i < b && i < n; i++)
        if (dur[i] > dur[best])
            best = i;
    return best;
}

long tlv_col(uint64_t ts, uint64_t v0, uint64_t v1, int w)
{
    if (v1 <= v0 || w < 1)
        return 0;
    /* exact integer arithmetic: tlv_time and tlv_col agree on every edge */
    unsigned __int128 span = v1 - v0;
    if (ts < v0) {
        unsigned __int128 c = ((unsigned __int128)(v0 - ts) * (unsigned)w + span - 1) / span;
        return c > LONG_MAX ? LONG_MIN : -(long)c;
    }
    unsigned __int128 c = (unsigned __int128)(ts - v0) * (unsigned)w / span;
    return c > LONG_MAX ? LONG_MAX : (long)c;
}

uint64_t tlv_time(int col, uint64_t v0, uint64_t v1, int w)
{
    if (v1 <= v0 || w < 1 || col <= 0)
        return v0;
    /* rounded up: tlv_col of the result is col again (>= 1 ns a column) */
    unsigned __int128 span = v1 - v0;
    return v0 + (uint64_t)((span * (unsigned)col + (unsigned)w - 1) / (unsigned)w);
}

int tlv_row(const prism_span *spans, size_t n, uint32_t depth, uint64_t v0, uint64_t v1,
            int w, tlv_cell *cells)
{
    for (int c = 0; c < w; c++) {
        cells[c].span = SIZE_MAX;
        cells[c].count = 0;
    }
    if (w < 1 || v1 <= v0)
        return 0;
    /* the first span of this depth (sorted by depth, then start) */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (spans[mid].depth < depth)
            lo = mid + 1;
        else
            hi = mid;
    }
    int used = 0;
    for (size_t i = lo; i < n && spans[i].depth == depth; i++) {
        const prism_span *s = &spans[i];
        if (s->start >= v1)
            break;
        if (s->end < v0)
            continue;
        long c0 = tlv_col(s->start, v0, v1, w), c1 = tlv_col(s->end, v0, v1, w);
        if (c0 < 0)
            c0 = 0;
        if (c1 >= w)
            c1 = w - 1;
        if (s->end > s->start && c1 > c0 && tlv_time((int)c1, v0, v1, w) == s->end)
            c1--;                   /* ends exactly where column c1 starts */
        for (long c = c0; c <= c1; c++) {
            tlv_cell *cell = &cells[c];
            if (cell->span == SIZE_MAX) {
                cell->span = i;
                used++;
            } else if (s->end - s->start > spans[cell->span].end - spans[cell->span].start) {
                cell->span = i;
            }
            cell->count++;
        }
    }
    return used;
}

uint64_t tlv_tick(uint64_t span, int w, int min_cols)
{
    if (w < 1 || min_cols < 1)
        return span ? span : 1;
    double want = (double)span * min_cols / w;
    uint64_t p = 1;
    for (;;) {
        static const unsigned mult[] = { 1, 2, 5 };
        for (int k = 0; k < 3; k++)
            if ((double)p * mult[k] >= want)
                return p * mult[k];
        if (p > UINT64_MAX / 10)
            return p;
        p *= 10;
    }
}

void tlv_zoom(uint64_t *v0, uint64_t *v1, uint64_t at, double factor, uint64_t lo,
              uint64_t hi, uint64_t min_width)
{
    if (hi <= lo) {
        *v0 = lo;
        *v1 = lo + 1;
        return;
    }
    uint64_t full = hi - lo;
    if (min_width < 1)
        min_width = 1;
    if (min_width > full)
        min_width = full;
    if (at < *v0)
        at = *v0;
    if (at > *v1)
        at = *v1;
    double left = (double)(at - *v0) * factor, right = (double)(*v1 - at) * factor;
    double width = left + right;
    if (width < (double)min_width) {
        double k = (double)min_width / (width > 0 ? width : 1);
        left = width > 0 ? left * k : (double)min_width / 2;
        right = (double)min_width - left;
    }
    if (left + right >= (double)full) {
        *v0 = lo;
        *v1 = hi;
        return;
    }
    uint64_t nw = (uint64_t)llround(left + right);
    uint64_t l = (uint64_t)llround(left);
    uint64_t a = at - lo >= l ? at - l : lo;
    if (a < lo)
        a = lo;
    if (a + nw > hi)
        a = hi - nw;
    *v0 = a;
    *v1 = a + nw;
}

void tlv_pan(uint64_t *v0, uint64_t *v1, int cols, int w, uint64_t lo, uint64_t hi)
{
    if (w < 1 || *v1 <= *v0 || hi <= lo)
        return;
    uint64_t width = *v1 - *v0;
    uint64_t d = (uint64_t)((double)width * (cols < 0 ? -cols : cols) / w);
    if (!d)
        d = 1;
    if (cols < 0)
        *v0 = *v0 - lo >= d ? *v0 - d : lo;
    else
        *v0 = hi - *v1 >= d ? *v0 + d : hi - width;
    *v1 = *v0 + width;
}
