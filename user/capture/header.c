// SPDX-License-Identifier: MIT
/*
 * header.c — the one builder of a capture header, for every writer (the
 * tracer, the monitor's flight recorder, the CUPTI collector's side files):
 * format, version, who wrote it, where and when (the clock anchor).
 */
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "capture/capture.h"
#include "lib/clock.h"
#include "lib/file_io.h"
#include "lib/units.h"

void gpuio_cap_header__init(struct gpuio_cap_header *h, __u32 ncpus, __u32 flags)
{
	struct utsname u;
	uint64_t real = 0, mono = 0;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, GPUIO_CAP_MAGIC, sizeof(h->magic));
	h->version = GPUIO_CAP_VERSION;
	h->header_size = sizeof(*h);
	h->abi_version = GPUIO_ABI_VERSION;
	h->tracer_pid = (__u32)getpid();
	h->ncpus = ncpus;
	h->flags = flags;
	clock_anchor(&real, &mono);
	h->realtime_ns = real;
	h->monotonic_ns = mono;
	gethostname(h->hostname, sizeof(h->hostname) - 1);
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s %s", u.release, u.version);
	file_read_first_line("/proc/sys/kernel/random/boot_id", h->boot_id, sizeof(h->boot_id));
}

uint64_t gpuio_cap_header__boottime(const struct gpuio_cap_header *h)
{
	char boot_id[sizeof(h->boot_id)];
	struct timespec m, b;

	/* the capture's boot is this one: time spent suspended since it began
	 * is BOOTTIME - MONOTONIC now (an upper bound for the anchor's) */
	file_read_first_line("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id));
	if (h->boot_id[0] && !strncmp(boot_id, h->boot_id, sizeof(boot_id)) &&
	    !clock_gettime(CLOCK_MONOTONIC, &m) && !clock_gettime(CLOCK_BOOTTIME, &b)) {
		int64_t d = ((int64_t)b.tv_sec - m.tv_sec) * (int64_t)NSEC_PER_SEC + (b.tv_nsec - m.tv_nsec);

		/* under a millisecond is the two reads, not a suspend: without one the
		 * clocks agree, and the same capture exports to the same bytes; a
		 * suspend's time is kept to the microsecond */
		if (d >= 1000000)
			return h->monotonic_ns + (uint64_t)(d / 1000 * 1000);
	}
	return h->monotonic_ns;
}
