/* SPDX-License-Identifier: MIT */
/*
 * sort.h — a stable sort of a large array that knows nothing of gpuio and
 * allocates 4 bytes an element, not a copy of the array: qsort() (glibc's
 * merge sort) takes a second array as large as the first, or an array of
 * two pointers an element for elements over 32 bytes, for the time it
 * sorts — on a table of millions of records the peak of the whole run.
 */
#ifndef GPUIO_LIB_SORT_H
#define GPUIO_LIB_SORT_H

#include <stddef.h>

/*
 * Sort base[0..n) by cmp (qsort_r's comparator; arg is passed on), equal
 * elements keeping their order: an array nearly in order by insertion, in
 * place and in O(n); any other through an index of n 32-bit numbers that is
 * sorted and then applied in place. 0, -ENOMEM, or -E2BIG when n does not
 * fit 32 bits.
 */
int sort_stable(void *base, size_t n, size_t size,
		int (*cmp)(const void *, const void *, void *), void *arg);

#endif /* GPUIO_LIB_SORT_H */
