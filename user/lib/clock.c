// SPDX-License-Identifier: MIT
/* clock.c — see clock.h. */
#include <time.h>
#include "lib/clock.h"
#include "lib/units.h"

static uint64_t ns_of(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * NSEC_PER_SEC + (uint64_t)t.tv_nsec;
}

uint64_t clock_mono_ns(void)
{
	return ns_of(CLOCK_MONOTONIC);
}

uint64_t clock_real_ns(void)
{
	return ns_of(CLOCK_REALTIME);
}

void clock_anchor(uint64_t *real, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = ns_of(CLOCK_MONOTONIC);
		uint64_t r = ns_of(CLOCK_REALTIME);
		uint64_t b = ns_of(CLOCK_MONOTONIC);

		if (b - a < best) {
			best = b - a;
			*mono = a + (b - a) / 2;
			*real = r;
		}
	}
}
