/*
 * array.c - growable arrays and a stable sort (see array.h).
 */
#include "array.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hseed.h"

bool pb_vec_reserve(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    if (!size)
        return false;
    size_t c = *cap;
    if (!c)                             /* at first 16, or what fits 256 bytes: */
        for (c = 16; c > 1 && c * size > 256; c /= 2)   /* a file of many */
            ;                           /* threads has many small arrays */
    while (c < need) {
        if (c > SIZE_MAX / 2 / size)
            return false;
        c *= 2;
    }
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* ---- the stable sort ---- */

/* Swap two elements of `size` bytes, a block at a time. */
static void swap_bytes(unsigned char *x, unsigned char *y, size_t size)
{
    unsigned char tmp[64];
    while (size) {
        size_t k = size < sizeof tmp ? size : sizeof tmp;
        memcpy(tmp, x, k);
        memcpy(x, y, k);
        memcpy(y, tmp, k);
        x += k;
        y += k;
        size -= k;
    }
}

/* The fallback without scratch memory: insertion by adjacent swaps. */
static void insertion(unsigned char *v, size_t n, size_t size, pb_sort_cmp cmp, const void *ctx)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cmp(v + (j - 1) * size, v + j * size, ctx) > 0; j--)
            swap_bytes(v + (j - 1) * size, v + j * size, size);
}

#define RUN 8u                 /* elements sorted by insertion before merging */

/* Bottom-up merge sort: runs of RUN elements sorted by insertion, then
 * merged between base and a scratch copy (RUN, 2 RUN, 4 RUN ...); the left
 * run wins ties (stability). */
void pb_sort_stable(void *base, size_t n, size_t size, pb_sort_cmp cmp, const void *ctx)
{
    if (n < 2 || !size)
        return;
    unsigned char *v = base;
    for (size_t lo = 0; lo < n; lo += RUN)
        insertion(v + lo * size, n - lo < RUN ? n - lo : RUN, size, cmp, ctx);
    if (n <= RUN)
        return;
    unsigned char *src = v, *dst = n <= SIZE_MAX / size ? malloc(n * size) : NULL;
    if (!dst) {
        insertion(v, n, size, cmp, ctx);
        return;
    }
    unsigned char *scratch = dst;
    for (size_t width = RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = mid + width < n ? mid + width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (cmp(src + j * size, src + i * size, ctx) < 0)
                    memcpy(dst + k++ * size, src + j++ * size, size);
                else
                    memcpy(dst + k++ * size, src + i++ * size, size);
            }
            if (i < mid)
                memcpy(dst + k * size, src + i * size, (mid - i) * size);
            else if (j < hi)
                memcpy(dst + k * size, src + j * size, (hi - j) * size);
        }
        unsigned char *t = src;
        src = dst;
        dst = t;
    }
    if (src != base)
        memcpy(base, src, n * size);
    free(scratch);
}

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

double pb_select_double(double *v, size_t n, size_t k)
{
    static _Atomic uint64_t seed;       /* per process: no file aims at the pivots */
    uint64_t r = atomic_load_explicit(&seed, memory_order_relaxed);
    if (!r) {
        r = pb_hash_seed() | 1;
        atomic_store_explicit(&seed, r, memory_order_relaxed);
    }
    r ^= n * 0x9E3779B97F4A7C15ull;
    size_t lo = 0, hi = n;              /* [lo, hi) holds index k */
    unsigned rounds = 16;
    for (size_t m = n; m > 1; m >>= 1)
        rounds += 2;
    while (hi - lo > 1) {
        size_t len = hi - lo;
        if (!rounds--) {                /* unlucky or aimed at: sort what is left */
            qsort(v + lo, len, sizeof *v, cmp_dbl);
            break;
        }
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        double a = v[lo + r % len], b = v[lo + (r >> 21) % len], c = v[lo + (r >> 42) % len];
        double p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        /* three ways: [lo, lt) < p, [lt, i) == p, [gt, hi) > p */
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            double x = v[i];
            if (x < p) {
                v[i++] = v[lt];
                v[lt++] = x;
            } else if (x > p) {
                v[i] = v[--gt];
                v[gt] = x;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return p;                   /* k among the equal ones */
    }
    return v[k];
}

double pb_median_double(double *v, size_t n)
{
    size_t h = n / 2;
    double hi = pb_select_double(v, n, h);
    if (n % 2)
        return hi;
    double lo = v[0];                   /* the largest below h */
    for (size_t i = 1; i < h; i++)
        lo = v[i] > lo ? v[i] : lo;
    return (lo + hi) / 2;
}
