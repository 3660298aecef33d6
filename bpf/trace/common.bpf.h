/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * common.bpf.h — configuration, maps and emit helpers shared by every gpuio
 * BPF program (VFS, block, process, page cache).
 */
#ifndef GPUIO_COMMON_BPF_H
#define GPUIO_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "gpuio_abi.h"

/* Set by userspace before load (rodata): filters decided once, not per event. */
const volatile bool trace_all = false;      /* -a: every process but gpuio */
const volatile bool all_fds = false;        /* --all-fds: pipes, sockets, … */
const volatile __u32 self_tgid = 0;         /* gpuio itself, never traced */
const volatile __u64 wakeup_bytes = 256 * 1024; /* wake the collector past this */
const volatile __u64 shed_above = 0;        /* pending bytes past which rb_shed() says so; 0: never */
/*
 * Benchmark knob (`make vmbench`'s cost breakdown; GPUIO_BENCH_CUT in the
 * environment of `gpuio trace`): stop the VFS path after stage N so the
 * instructions of each stage can be told apart. 0, the default, is the whole
 * path; the verifier removes the checks, so they cost nothing then.
 *   1 filter only   2 + fd -> file -> inode   3 + per-thread call state
 *   4 + clock reads  5 + ring-buffer reserve/discard (no record fill)
 *   6 + record fill, discarded (the collector gets nothing to do)
 */
const volatile __u32 bench_cut = 0;
/* Set by gpuio as it ends: the per-syscall links outlive it (their detach is
 * a child's, user/trace/link_reaper.c) and must trace no one meanwhile. */
volatile bool tracing_over = false;

/* Traced TGIDs. Fork adds children in the kernel; exit removes the dead. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

/* All records go to userspace through one ring buffer (resized before load). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* Drop and event counters, per CPU, indexed by enum gpuio_stat. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPUIO_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

#define STAT_MAP stats
#include "lib/stat.bpf.h"

/*
 * The same set as a bitmap over tgids, for the filter every program runs
 * first (every context switch and wake-up of the node asks it): an array
 * lookup is inlined into a bounds check and an index, a hash lookup hashes
 * the key and walks a bucket. Bits are set and cleared atomically, here and
 * by gpuio through its mmap of the array (user/trace/loader.c); the hash
 * stays the set gpuio iterates. 2^16 words: pid_max's 64-bit limit, 2^22.
 */
#define TRACED_BITS_WORDS (1u << 16)
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACED_BITS_WORDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} traced_bits SEC(".maps");

static __always_inline bool tgid_traced(__u32 tgid)
{
	__u32 w = tgid >> 6;
	__u64 *v;

	if (tgid == self_tgid || tracing_over)
		return false;
	if (trace_all)
		return true;
	v = bpf_map_lookup_elem(&traced_bits, &w);
	return v && (*v >> (tgid & 63)) & 1;
}

/* In the kernel (fork, free): the hash first, the bit after it, cleared first. */
static __always_inline int traced_add_tgid(__u32 tgid)
{
	__u32 w = tgid >> 6;
	__u8 one = 1;
	__u64 *v;

	if (bpf_map_update_elem(&traced, &tgid, &one, BPF_ANY) != 0)
		return -1;
	v = bpf_map_lookup_elem(&traced_bits, &w);
	if (v)
		__sync_fetch_and_or(v, 1ull << (tgid & 63));
	return 0;
}

static __always_inline void traced_del_tgid(__u32 tgid)
{
	__u32 w = tgid >> 6;
	__u64 *v = bpf_map_lookup_elem(&traced_bits, &w);

	if (v)
		__sync_fetch_and_and(v, ~(1ull << (tgid & 63)));
	bpf_map_delete_elem(&traced, &tgid);
}

/*
 * Batched wakeups: the collector is woken once per wakeup_bytes of data
 * produced — by the record whose reservation crosses a multiple of it — and
 * otherwise drains on its poll period. Waking whenever that much is pending
 * would wake on every record while the collector is busy draining (~+55 ns
 * per record measured); a wakeup per record costs ~+3,700 ns (DESIGN §8).
 * Call after reserving size bytes, before submitting.
 */
static __always_inline __u64 rb_wakeup_flag_sz(__u64 size)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	return avail / wakeup_bytes != (avail - size) / wakeup_bytes ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}
#define rb_wakeup_flag() rb_wakeup_flag_sz(sizeof(*e))

/*
 * Shedding by class: once the ring holds more than shed_above bytes (3/4 of
 * it) not yet drained, the records that go first are left out and counted
 * (stat): scheduler records and Python stack uses, the bulk on a busy node,
 * so that the last quarter holds file calls, block requests and process
 * records, which the report's totals and names rest on. Before, whichever
 * record came next when the ring filled was lost.
 */
static __always_inline bool rb_shed(__u32 stat)
{
	if (!shed_above || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) <= shed_above)
		return false;
	stat_inc(stat);
	return true;
}

static __always_inline void fill_hdr(struct gpuio_hdr *h, __u16 type, __u16 size,
				     __u32 pid, __u32 tid, __u64 ts)
{
	h->type = type;
	h->size = size;
	h->pid = pid;
	h->tid = tid;
	h->cpu = bpf_get_smp_processor_id();
	h->ts = ts;
}

/* Kernel dev_t as the kernel keeps it: major << 20 | minor. */
static __always_inline __u32 inode_dev(struct inode *inode)
{
	return BPF_CORE_READ(inode, i_sb, s_dev);
}

#endif
