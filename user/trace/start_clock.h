/* SPDX-License-Identifier: MIT */
/*
 * start_clock.h — how long `gpuio trace` took to start tracing, and where
 * that went: wall and CPU time of each part, for -v and the start bench.
 */
#ifndef GPUIO_START_CLOCK_H
#define GPUIO_START_CLOCK_H

#include <stdint.h>

#define START_CLOCK_PARTS 8

struct start_clock {
	uint64_t wall0, cpu0;          /* at the start */
	uint64_t wall, cpu;            /* at the last mark */
	int n;
	struct { const char *what; uint64_t wall, cpu; } part[START_CLOCK_PARTS];
};

void start_clock__begin(struct start_clock *c);
/* The time since the last mark is WHAT's (a static string). */
void start_clock__mark(struct start_clock *c, const char *what);
/* "started in W ms (C ms CPU): WHAT w ms (c ms CPU), ..." into buf. */
void start_clock__text(const struct start_clock *c, char *buf, size_t len);
/* This process's CPU time, all threads, ns. */
uint64_t process_cpu_ns(void);

#endif
