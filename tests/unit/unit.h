/* SPDX-License-Identifier: MIT */
/*
 * unit.h — the unit tests' harness: CHECK(cond, fmt, ...) counts and prints
 * failures; unit_done() prints "N checks, M failed" and gives the exit code.
 */
#ifndef GPUIO_UNIT_H
#define GPUIO_UNIT_H

#include <stdio.h>

static unsigned unit_checks, unit_failed;

#define CHECK(cond, ...) do {                                                   \
	unit_checks++;                                                          \
	if (!(cond)) {                                                          \
		unit_failed++;                                                  \
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);                                   \
		fputc('\n', stderr);                                            \
	}                                                                       \
} while (0)

static inline int unit_done(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, unit_checks, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif /* GPUIO_UNIT_H */
