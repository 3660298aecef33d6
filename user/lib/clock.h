/* SPDX-License-Identifier: MIT */
/*
 * clock.h — the one clock: CLOCK_MONOTONIC in ns (what bpf_ktime_get_ns
 * reads), CLOCK_REALTIME for wall-clock display, and the two read together.
 */
#ifndef GPUIO_LIB_CLOCK_H
#define GPUIO_LIB_CLOCK_H

#include <stdint.h>

uint64_t clock_mono_ns(void);
uint64_t clock_real_ns(void);
/*
 * (REALTIME, MONOTONIC) read together: of 16 MONOTONIC/REALTIME/MONOTONIC
 * triples, the one with the tightest window, MONOTONIC at its middle.
 */
void clock_anchor(uint64_t *real, uint64_t *mono);

#endif /* GPUIO_LIB_CLOCK_H */
