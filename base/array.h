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
 */
#ifndef PRISM_BASE_ARRAY_H
#define PRISM_BASE_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

bool pb_vec_reserve(void **p, size_t *cap, size_t need, size_t size);

typedef int (*pb_sort_cmp)(const void *x, const void *y, const void *ctx);
void pb_sort_stable(void *base, size_t n, size_t size, pb_sort_cmp cmp, const void *ctx);

#endif
