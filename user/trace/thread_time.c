// SPDX-License-Identifier: MIT
/* thread_time.c — the kernel's per-thread time by state into the capture. See thread_time.h. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpf/gpuio_abi.h"
#include "trace/thread_time.h"

int thread_time__write(int map_fd, __u64 end, void (*out)(void *ctx, const void *rec, size_t len),
		       void *ctx)
{
	unsigned char key[64], next[64];        /* struct ttime_key: 16 bytes */
	struct gpuio_thread_time r;
	void *prev = NULL;
	int n = 0;

	if (map_fd < 0)
		return 0;
	while (bpf_map_get_next_key(map_fd, prev, next) == 0) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (bpf_map_lookup_elem(map_fd, key, &r) != 0 || r.hdr.type != GPUIO_REC_THREAD_TIME)
			continue;
		if (r.state < GPUIO_TS_N && end > r.since)
			r.ns[r.state] += end - r.since;
		if (r.state != GPUIO_TS_GONE) {
			r.hdr.ts = end;
			r.hdr.cpu = 0;
		}
		r.state = GPUIO_TS_NONE;
		r.since = 0;
		out(ctx, &r, sizeof(r));
		n++;
	}
	return n;
}
