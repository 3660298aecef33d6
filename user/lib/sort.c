// SPDX-License-Identifier: MIT
/* sort.c — a stable sort through a 32-bit index, applied in place. See sort.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/sort.h"

struct by_index {
	const char *base;
	size_t size;
	int (*cmp)(const void *, const void *, void *);
	void *arg;
};

static int cmp_index(const void *a, const void *b, void *ctx)
{
	const struct by_index *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = c->cmp(c->base + (size_t)x * c->size, c->base + (size_t)y * c->size, c->arg);

	if (r)
		return r;
	return x < y ? -1 : x > y;      /* stable: the earlier first */
}

/*
 * Insertion sort while it stays cheap: an array in nearly its order (records
 * a ring buffer wrote a little out of time order) is sorted in O(n) and
 * nothing allocated. Gives up (false) once it has stepped over more than
 * ~8 elements per element; what it sorted by then is a stable partial sort
 * (equal elements still in their first order), which the index sort finishes.
 */
static bool insertion(char *a, size_t n, size_t size,
		      int (*cmp)(const void *, const void *, void *), void *arg, char *tmp)
{
	size_t budget = 8 * n + 64, steps = 0;

	for (size_t i = 1; i < n; i++) {
		size_t j = i - 1;

		if (cmp(a + j * size, a + i * size, arg) <= 0)
			continue;
		while (j > 0 && cmp(a + (j - 1) * size, a + i * size, arg) > 0) {
			j--;
			if (++steps > budget)
				return false;
		}
		memcpy(tmp, a + i * size, size);
		memmove(a + (j + 1) * size, a + j * size, (i - j) * size);
		memcpy(a + j * size, tmp, size);
	}
	return true;
}

int sort_stable(void *base, size_t n, size_t size,
		int (*cmp)(const void *, const void *, void *), void *arg)
{
	struct by_index c = { .base = base, .size = size, .cmp = cmp, .arg = arg };
	char *a = base, *tmp;
	uint32_t *ix;

	if (n < 2)
		return 0;
	if (n > UINT32_MAX)
		return -E2BIG;
	tmp = malloc(size);
	if (!tmp)
		return -ENOMEM;
	if (insertion(a, n, size, cmp, arg, tmp)) {
		free(tmp);
		return 0;
	}
	ix = malloc(n * sizeof(*ix));
	if (!ix) {
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, n, sizeof(*ix), cmp_index, &c);
	/* element i takes element ix[i]: cycle by cycle, a done slot gets ix[i] = i */
	for (size_t i = 0; i < n; i++) {
		size_t j = i;

		if (ix[i] == i)
			continue;
		memcpy(tmp, a + i * size, size);
		while (ix[j] != i) {
			size_t k = ix[j];

			memcpy(a + j * size, a + k * size, size);
			ix[j] = (uint32_t)j;
			j = k;
		}
		memcpy(a + j * size, tmp, size);
		ix[j] = (uint32_t)j;
	}
	free(ix);
	free(tmp);
	return 0;
}
