// SPDX-License-Identifier: MIT
/*
 * unit_lanes — lane assignment (model/lanes.c) on random intervals against
 * brute force: slices on one lane never overlap, and the lanes used equal
 * the most intervals in flight at once (greedy lowest-free-lane is optimal
 * for intervals taken in start order) - no fewer, no more.
 */
#include <stdbool.h>
#include <stdlib.h>
#include "timeline/timeline_priv.h"
#include "unit.h"

struct iv { uint64_t s, e; uint32_t lane; };

static int by_start(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

int main(void)
{
	srand(42);
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)(rand() % 300);
		struct iv *v = calloc(n, sizeof(*v));
		struct tl_lanes l = { 0 };
		uint32_t maxlane = 0, depth = 0;

		for (size_t i = 0; i < n; i++) {
			v[i].s = (uint64_t)(rand() % 10000);
			v[i].e = v[i].s + (uint64_t)(rand() % (round % 2 ? 50 : 2000));
		}
		qsort(v, n, sizeof(*v), by_start);
		for (size_t i = 0; i < n; i++) {
			CHECK(tl_lanes__assign(&l, v[i].s, v[i].e, &v[i].lane) == 0, "assign");
			CHECK(v[i].lane >= 1, "lane %u", v[i].lane);
			if (v[i].lane > maxlane)
				maxlane = v[i].lane;
		}
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n && v[j].s < v[i].e; j++)
				CHECK(v[i].lane != v[j].lane, "round %d: [%llu,%llu) and [%llu,%llu) share lane %u",
				      round, (unsigned long long)v[i].s, (unsigned long long)v[i].e,
				      (unsigned long long)v[j].s, (unsigned long long)v[j].e, v[i].lane);
		/* most in flight at once: at some start x, the intervals covering
		 * it, plus one for empty intervals [x, x) (a slice of no duration
		 * still takes a lane; several at one instant share it) */
		for (size_t i = 0; i < n; i++) {
			uint32_t d = 0;
			bool empty = false;

			for (size_t j = 0; j < n; j++) {
				d += v[j].s <= v[i].s && v[i].s < v[j].e;
				empty |= v[j].s == v[i].s && v[j].e == v[j].s;
			}
			d += empty;
			if (d > depth)
				depth = d;
		}
		CHECK(maxlane == depth, "round %d: %u lanes for %u in flight", round, maxlane, depth);
		tl_lanes__free(&l);
		free(v);
	}
	return unit_done("unit_lanes");
}
