// SPDX-License-Identifier: MIT
/* clock.c — CUPTI clock vs CLOCK_MONOTONIC (see clock.h). */
#include <errno.h>
#include <time.h>
#include "clock.h"
#include "lib/units.h"

int clock__fit(const struct clock_sample *s, int n, struct clock_fit *out)
{
	uint64_t best_w = UINT64_MAX;
	int i, best = -1;

	for (i = 0; i < n; i++) {
		uint64_t w;

		/* A failed read (0) or a window running backwards says nothing. */
		if (!s[i].before || !s[i].cupti || s[i].after < s[i].before)
			continue;
		w = s[i].after - s[i].before;
		if (w < best_w) {
			best_w = w;
			best = i;
		}
	}
	if (best < 0)
		return -EINVAL;
	/* before + w/2 without overflow; the +1 rounds the half-window up. */
	out->offset_ns = (int64_t)(s[best].before + best_w / 2 - s[best].cupti);
	out->uncertainty_ns = (best_w + 1) / 2;
	return 0;
}

int clock__measure(clock_read_fn mono, clock_read_fn cupti, void *ctx, int n,
		   struct clock_fit *out)
{
	struct clock_sample s[256];
	int i;

	if (n > 256)
		n = 256;
	for (i = 0; i < n; i++) {
		s[i].before = mono(ctx);
		s[i].cupti = cupti(ctx);
		s[i].after = mono(ctx);
	}
	return clock__fit(s, n, out);
}

bool clock__same(const struct clock_fit *fit, uint64_t slack_ns)
{
	uint64_t mag = fit->offset_ns < 0 ? (uint64_t)-(fit->offset_ns + 1) + 1
					  : (uint64_t)fit->offset_ns;

	return mag <= fit->uncertainty_ns + slack_ns;
}

uint64_t clock__mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * NSEC_PER_SEC + (uint64_t)t.tv_nsec;
}
