// SPDX-License-Identifier: MIT
/*
 * unit_sort — lib/sort.c's stable sort against qsort with the original
 * position as the last key: arrays nearly in order (insertion), shuffled
 * ones (the index sort), ones that start nearly in order and then are not
 * (insertion gives up half-way), many equal keys, elements of 4 to 80 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/sort.h"
#include "unit.h"

struct el {
	uint32_t key, pos;
	char pad[72];
};

static int by_key(const void *a, const void *b, void *ctx)
{
	const struct el *x = a, *y = b;

	(void)ctx;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int by_key_pos(const void *a, const void *b)
{
	const struct el *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void check(const char *what, struct el *a, size_t n)
{
	struct el *ref = malloc(n * sizeof(*ref));
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		a[i].pos = (uint32_t)i;
		memset(a[i].pad, (int)(i & 0x7f), sizeof(a[i].pad));
	}
	memcpy(ref, a, n * sizeof(*ref));
	qsort(ref, n, sizeof(*ref), by_key_pos);
	CHECK(sort_stable(a, n, sizeof(*a), by_key, NULL) == 0, "%s: sort", what);
	for (size_t i = 0; i < n; i++)
		bad += memcmp(&a[i], &ref[i], sizeof(*ref)) != 0;
	CHECK(bad == 0, "%s: %zu of %zu elements out of place", what, bad, n);
	free(ref);
}

int main(void)
{
	size_t n = 100000;
	struct el *a = malloc(n * sizeof(*a));

	srand(11);
	for (size_t i = 0; i < n; i++)       /* in order but for a swap in 500 */
		a[i].key = (uint32_t)(i / 3);
	for (size_t i = 0; i + 1 < n; i += 500) {
		uint32_t k = a[i].key;

		a[i].key = a[i + 1].key + 1;
		a[i + 1].key = k;
	}
	check("nearly sorted", a, n);
	for (size_t i = 0; i < n; i++)
		a[i].key = (uint32_t)(rand() % 1000);
	check("shuffled, ties", a, n);
	for (size_t i = 0; i < n; i++)       /* sorted, then reversed: insertion gives up */
		a[i].key = i < n / 2 ? (uint32_t)i : (uint32_t)(n - i);
	check("half reversed", a, n);
	for (size_t i = 0; i < n; i++)
		a[i].key = 7;
	check("all equal", a, n);
	check("one", a, 1);
	check("none", a, 0);
	free(a);
	return unit_done("unit_sort");
}
