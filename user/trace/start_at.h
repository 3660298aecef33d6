/* SPDX-License-Identifier: MIT */
/*
 * start_at.h — `gpuio trace --start-at TIME`: wait for a wall-clock time,
 * then attach, so that traces started on several hosts begin together
 * (their clocks are aligned later through REALTIME by `gpuio merge`).
 *
 * TIME is HH:MM[:SS[.frac]] local time (the next such time: today, or
 * tomorrow when it has passed), or @EPOCH / EPOCH seconds since 1970 (UTC),
 * fractions allowed.
 */
#ifndef GPUIO_START_AT_H
#define GPUIO_START_AT_H

#include <time.h>

/* Parse TIME into an absolute CLOCK_REALTIME time. 0 or -EINVAL. */
int gpuio_start_at__parse(const char *s, struct timespec *out);
/* Sleep until t (CLOCK_REALTIME). 0, or -EINTR when a signal cut it short. */
int gpuio_start_at__wait(const struct timespec *t);

#endif
