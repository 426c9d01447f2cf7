/*
 * array.h - growable arrays and a stable sort, for every reader of
 * profiles (the analysis, the importer).
 *
 * pb_vec_reserve: the usual (pointer, capacity) pair grown by doubling
 * (at first 16 elements, or as many as 256 bytes hold, at least one: a
 * file with many threads makes many small arrays) until it holds `need`
 * elements of `size` bytes;
 * false, and the array untouched, without memory or when the byte count
 * would overflow.  The caller owns *p and frees it.
 *
 * pb_sort_stable: n elements of `size` bytes sorted in place by cmp
 * (negative: x before y); equal elements keep their order, as the
 * insertion sorts it replaced did, so reports do not change.  O(n log n)
 * with a scratch copy; without memory for it, an insertion sort (same
 * order).
 *
 * pb_qsort: qsort that takes n == 0 with base NULL (an empty vector never
 * allocated), which qsort itself may not be passed (C11 7.22.5: the pointer
 * must be valid even for no elements; UBSan reports it).  Every qsort of a
 * vector that can be empty goes through it.
 *
 * pb_select_double: v (n > k, no NaN) rearranged so that v[k] holds what a
 * sort would put there, nothing after it smaller and nothing before it
 * larger; returns v[k].  Linear on average (random pivots from a per-process
 * seed, equal values kept together), never worse than a sort: after a few
 * more rounds than a good run takes, the range left is sorted.  The
 * medians of the analysis (a call path's per-step median, for compare) were
 * sorts.  pb_median_double: the median of v (n > 0), v rearranged.
 */
#ifndef PRISM_BASE_ARRAY_H
#define PRISM_BASE_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

bool pb_vec_reserve(void **p, size_t *cap, size_t need, size_t size);

typedef int (*pb_sort_cmp)(const void *x, const void *y, const void *ctx);
void pb_sort_stable(void *base, size_t n, size_t size, pb_sort_cmp cmp, const void *ctx);

static inline void pb_qsort(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

double pb_select_double(double *v, size_t n, size_t k);
double pb_median_double(double *v, size_t n);

#endif
