// SPDX-License-Identifier: MIT
/*
 * header.c — the one builder of a capture header, for every writer (the
 * tracer, the monitor's flight recorder, the CUPTI collector's side files):
 * format, version, who wrote it, where and when (the clock anchor).
 */
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "capture/capture.h"
#include "lib/clock.h"
#include "lib/file_io.h"

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
	read_first_line("/proc/sys/kernel/random/boot_id", h->boot_id, sizeof(h->boot_id));
}
