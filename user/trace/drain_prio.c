// SPDX-License-Identifier: MIT
/* drain_prio.c — the drain at a real-time priority. See drain_prio.h. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "trace/drain_prio.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

int drain_prio__raise(int prio, char *why, size_t len)
{
	struct sched_param p = { .sched_priority = prio };

	if (prio < 1 || prio > 99) {
		snprintf(why, len, "priority %d is not 1-99", prio);
		return -EINVAL;
	}
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p) < 0) {
		int err = errno;

		snprintf(why, len, "%s%s", strerror(err),
			 err == EPERM ? " (needs CAP_SYS_NICE, or an RT budget for this cgroup)" : "");
		return -err;
	}
	return 0;
}

void drain_prio__restore(void)
{
	struct sched_param p = { .sched_priority = 0 };

	sched_setscheduler(0, SCHED_OTHER, &p);
}
