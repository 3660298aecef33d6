// SPDX-License-Identifier: MIT
/*
 * start_clock.c — the start of a trace, part by part (start_clock.h). CPU
 * time is the process's own (all threads): the kernel's verifier runs in
 * the bpf() calls, so a load's cost shows there.
 */
#include <stdio.h>
#include <time.h>
#include "lib/clock.h"
#include "trace/start_clock.h"

uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void start_clock__begin(struct start_clock *c)
{
	c->n = 0;
	c->wall0 = c->wall = clock_mono_ns();
	c->cpu0 = c->cpu = process_cpu_ns();
}

void start_clock__mark(struct start_clock *c, const char *what)
{
	uint64_t w = clock_mono_ns(), u = process_cpu_ns();

	if (c->n < START_CLOCK_PARTS) {
		c->part[c->n].what = what;
		c->part[c->n].wall = w - c->wall;
		c->part[c->n].cpu = u - c->cpu;
		c->n++;
	}
	c->wall = w;
	c->cpu = u;
}

void start_clock__text(const struct start_clock *c, char *buf, size_t len)
{
	size_t o;

	o = (size_t)snprintf(buf, len, "started in %.0f ms (%.0f ms CPU):",
			     (c->wall - c->wall0) / 1e6, (c->cpu - c->cpu0) / 1e6);
	for (int i = 0; i < c->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s %s %.0f ms (%.0f CPU)", i ? "," : "",
				      c->part[i].what, c->part[i].wall / 1e6, c->part[i].cpu / 1e6);
}
