// SPDX-License-Identifier: MIT
/*
 * unit_clock — the clock anchor (lib/clock.c): its MONOTONIC lies between
 * readings taken just before and after it, its REALTIME within the same
 * window of the REALTIME read around it; and a capture header built by
 * capture/header.c carries such an anchor, this host's name and boot id.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "capture/capture.h"
#include "lib/clock.h"
#include "lib/file_io.h"
#include "unit.h"

int main(void)
{
	for (int i = 0; i < 100; i++) {
		uint64_t m0 = clock_mono_ns(), r0 = clock_real_ns(), real, mono;
		uint64_t m1, r1;

		clock_anchor(&real, &mono);
		m1 = clock_mono_ns();
		r1 = clock_real_ns();
		CHECK(m0 <= mono && mono <= m1, "mono %llu not in [%llu, %llu]", (unsigned long long)mono,
		      (unsigned long long)m0, (unsigned long long)m1);
		/* REALTIME can be stepped; a step during this loop would show here */
		CHECK(r0 <= real + 1000000 && real <= r1 + 1000000, "real %llu not near [%llu, %llu]",
		      (unsigned long long)real, (unsigned long long)r0, (unsigned long long)r1);
	}
	{
		struct gpuio_cap_header h;
		char host[64] = "", boot[40];
		uint64_t m0 = clock_mono_ns();

		gpuio_cap_header__init(&h, 7, GPUIO_CAPF_ALL);
		gethostname(host, sizeof(host) - 1);
		file_read_first_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
		CHECK(!memcmp(h.magic, GPUIO_CAP_MAGIC, 8) && h.version == GPUIO_CAP_VERSION, "magic/version");
		CHECK(h.header_size == sizeof(h) && h.abi_version == GPUIO_ABI_VERSION, "sizes");
		CHECK(h.ncpus == 7 && h.flags == GPUIO_CAPF_ALL && h.tracer_pid == (uint32_t)getpid(), "fields");
		CHECK(h.monotonic_ns >= m0 && h.monotonic_ns <= clock_mono_ns(), "anchor");
		CHECK(!strcmp(h.hostname, host), "host %s vs %s", h.hostname, host);
		CHECK(!strcmp(h.boot_id, boot) && strlen(boot) == 36, "boot id %s vs %s", h.boot_id, boot);
		CHECK(gpuio_cap_header__boottime(&h) >= h.monotonic_ns, "boottime before monotonic");
		strcpy(h.boot_id, "not-this-boot");
		CHECK(gpuio_cap_header__boottime(&h) == h.monotonic_ns, "another boot: no suspend known");
	}
	return unit_done("unit_clock");
}
