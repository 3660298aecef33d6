/* SPDX-License-Identifier: MIT */
/*
 * clock.h — align CUPTI timestamps with CLOCK_MONOTONIC.
 *
 * The collector first asks CUPTI to take its timestamps from our MONOTONIC
 * callback. When that did not take (attach after CUDA init, another
 * profiler registered its own clock), it samples MONOTONIC, CUPTI's clock,
 * MONOTONIC again, many times, and keeps the tightest window: the CUPTI
 * reading happened somewhere in [before, after], so
 *     offset      = midpoint(before, after) - cupti
 *     uncertainty = half the window
 * and MONOTONIC = cupti + offset. The math is pure so tests drive it with
 * fake clocks.
 */
#ifndef GPUIO_CUPTI_CLOCK_H
#define GPUIO_CUPTI_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct clock_sample {
	uint64_t before;  /* MONOTONIC */
	uint64_t cupti;   /* CUPTI's clock */
	uint64_t after;   /* MONOTONIC */
};

struct clock_fit {
	int64_t offset_ns;        /* MONOTONIC - CUPTI */
	uint64_t uncertainty_ns;  /* half the tightest window */
};

/* Reads one clock; ctx is the caller's. Returns 0 when the read failed. */
typedef uint64_t (*clock_read_fn)(void *ctx);

/* Fit from samples (tightest valid window). Returns 0 or -EINVAL (no valid sample). */
int clock__fit(const struct clock_sample *s, int n, struct clock_fit *out);
/* Take n samples (n <= 256) with the given readers and fit. 0 or -EINVAL. */
int clock__measure(clock_read_fn mono, clock_read_fn cupti, void *ctx, int n,
		   struct clock_fit *out);
/* Do the clocks agree within the fit's uncertainty plus slack_ns? */
bool clock__same(const struct clock_fit *fit, uint64_t slack_ns);
/* CLOCK_MONOTONIC in ns. */
uint64_t clock__mono_ns(void);

/* CUPTI timestamp -> MONOTONIC. 0 means "not recorded" and stays 0. */
static inline uint64_t clock__apply(uint64_t t, int64_t offset_ns)
{
	return t ? t + (uint64_t)offset_ns : 0;
}

#endif /* GPUIO_CUPTI_CLOCK_H */
