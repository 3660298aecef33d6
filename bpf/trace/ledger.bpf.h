/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ledger.bpf.h — what the ring buffer lost, summed: when a VFS record (or a
 * thread's batch of them) finds the ring full, its call is added here by
 * (process, file, call) — count, bytes, time — so that the report's totals
 * per file and per process stay exact though the records are gone
 * (user/trace/lost_ledger.c writes the sums into the capture at the end).
 * Nothing is done while records fit: the hot path pays nothing.
 */
#ifndef GPUIO_LEDGER_BPF_H
#define GPUIO_LEDGER_BPF_H
#include "trace/common.bpf.h"

#define LEDGER_ENTRIES 16384

struct ledger_key {
	__u64 ino;
	__u32 tgid;
	__u32 dev;               /* the file's; a block request: the disk's */
	__u32 file_dev;          /* a block request: its file's dev (ino's) */
	__u16 call;              /* GPUIO_CALL_*, or GPUIO_LOST_BLOCK | enum gpuio_blk_op */
	__u8 ftype;
	__u8 pad;
};

struct ledger_val {
	__u64 count, bytes, dur_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LEDGER_ENTRIES);
	__type(key, struct ledger_key);
	__type(value, struct ledger_val);
} lost_calls SEC(".maps");

static __always_inline void ledger_add_key(struct ledger_key *kp, long ret, __u64 dur_ns)
{
	struct ledger_key k = *kp;
	struct ledger_val *v = bpf_map_lookup_elem(&lost_calls, &k);

	if (!v) {
		struct ledger_val z = {};

		/* another CPU may add the key first: BPF_NOEXIST fails, the lookup finds it */
		bpf_map_update_elem(&lost_calls, &k, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&lost_calls, &k);
		if (!v) {
			stat_inc(GPUIO_STAT_LEDGER_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	if (ret > 0)
		__sync_fetch_and_add(&v->bytes, (__u64)ret);
	__sync_fetch_and_add(&v->dur_ns, dur_ns);
}

static __always_inline void ledger_add(__u32 tgid, __u32 dev, __u64 ino, __u16 call, __u8 ftype,
				       long ret, __u64 dur_ns)
{
	struct ledger_key k = { .ino = ino, .tgid = tgid, .dev = dev, .call = call, .ftype = ftype };

	ledger_add_key(&k, ret, dur_ns);
}

static __always_inline void ledger_add_event(const struct gpuio_vfs_event *e)
{
	ledger_add(e->hdr.pid, e->dev, e->ino, e->call, e->ftype, e->ret, e->dur_ns);
}

#endif
