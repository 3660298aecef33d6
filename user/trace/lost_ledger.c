// SPDX-License-Identifier: MIT
/* lost_ledger.c — the kernel's sums of lost calls into the capture. See lost_ledger.h. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpf/gpuio_abi.h"
#include "trace/lost_ledger.h"

/* bpf/trace/ledger.bpf.h's key and value */
struct ledger_key {
	__u64 ino;
	__u32 tgid;
	__u32 dev;
	__u32 file_dev;
	__u16 call;
	__u8 ftype;
	__u8 pad;
};

struct ledger_val {
	__u64 count, bytes, dur_ns;
};

int lost_ledger__write(int map_fd, __u64 ts, void (*out)(void *ctx, const void *rec, size_t len),
		       void *ctx)
{
	struct ledger_key k, next;
	struct ledger_val v;
	struct gpuio_lost_calls r;
	void *prev = NULL;
	int n = 0;

	if (map_fd < 0)
		return 0;
	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(map_fd, &k, &v) != 0 || !v.count)
			continue;
		memset(&r, 0, sizeof(r));
		r.hdr.type = GPUIO_REC_LOST_CALLS;
		r.hdr.size = sizeof(r);
		r.hdr.pid = k.tgid;
		r.hdr.ts = ts;
		r.ino = k.ino;
		r.dev = k.dev;
		r.file_dev = k.file_dev;
		r.call = k.call;
		r.ftype = k.ftype;
		r.count = v.count;
		r.bytes = v.bytes;
		r.dur_ns = v.dur_ns;
		out(ctx, &r, sizeof(r));
		n++;
	}
	return n;
}
