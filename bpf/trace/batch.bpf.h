/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * batch.bpf.h — a thread's VFS records, batched: they wait in the thread's
 * own call state (task storage) and reach the ring buffer together, one
 * reservation for up to vfs_batch records, as one GPUIO_REC_RING_BATCH that
 * the collector unpacks (user/trace/ringbuf_drain.c; never in a capture).
 *
 * A waiting record goes out, at the latest:
 *   - when the batch is full;
 *   - when its thread leaves the CPU: it blocks, is preempted, or exits
 *     (sched.bpf.h, the switch-out: so a blocked thread has none waiting);
 *   - when a later call of the thread ends VFS_BATCH_AGE_NS after the batch
 *     began (a thread that computes between rare calls);
 *   - at the end of the trace (vfs_batch_flush, an iterator gpuio reads).
 * A thread that stays on its CPU without a call holds its last records
 * until one of those; nothing else waits.
 *
 * Three parties may touch a batch: the thread's own call ends, its
 * switch-out (which may preempt the thread inside one), and the iterator on
 * another CPU. Each takes the batch's lock with one compare-and-swap and
 * leaves a taken batch alone: a call end then emits its record directly, a
 * switch-out or the iterator's first pass leaves it for later, the
 * iterator's final pass counts what it could not take as lost.
 */
#ifndef GPUIO_BATCH_BPF_H
#define GPUIO_BATCH_BPF_H
#include "trace/common.bpf.h"
#include "trace/ledger.bpf.h"

#define VFS_BATCH_CAP    16                 /* records a batch holds at most (a power of 2) */
#define VFS_BATCH_AGE_NS 10000000ull        /* 10 ms: see above */

/* records per reservation (loader: VFS_BATCH_CAP when the scheduler layer
 * is on, whose switch-out flushes; 0: one reservation per call) */
const volatile __u32 vfs_batch = 0;

/* Written by gpuio through the skeleton at the end of the trace: closing,
 * records go straight to the ring (no new ones wait); final, the iterator's
 * last pass counts a batch it cannot take. */
volatile bool batch_closing = false;
volatile bool batch_final = false;

struct vfs_batch {
	__u64 lock;               /* 64-bit: the atomics older clang targets know */
	__u32 n;                  /* records waiting */
	__u32 pad;
	__u64 first_ns;           /* when the first of them ended */
	/* the ring record is hdr and ev[0..n-1], contiguous (hdr is 24 bytes) */
	struct gpuio_hdr hdr;
	struct gpuio_vfs_event ev[VFS_BATCH_CAP];
};

static __always_inline bool batch_lock(struct vfs_batch *b)
{
	return __sync_val_compare_and_swap(&b->lock, 0, 1) == 0;
}

static __always_inline void batch_unlock(struct vfs_batch *b)
{
	__sync_lock_test_and_set(&b->lock, 0);
}

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

struct batch_ledger_ctx {
	struct vfs_batch *b;
	__u32 n;
};

static long batch_ledger_step(__u32 i, void *arg)
{
	struct batch_ledger_ctx *c = arg;

	if (i >= c->n)
		return 1;
	ledger_add_event(&c->b->ev[i & (VFS_BATCH_CAP - 1)]);
	return 0;
}

/*
 * A batch the ring could not take: its calls into the ledger (ledger.bpf.h).
 * A bpf_loop step, checked once where each flush is checked: unrolled, the
 * 16 records' map updates were half of the switch hook's check at load
 * (20,000 of 45,000 instructions) and of the syscall exit's.
 */
static __always_inline void batch_ledger(struct vfs_batch *b, __u32 n)
{
	struct batch_ledger_ctx c = { .b = b, .n = n < VFS_BATCH_CAP ? n : VFS_BATCH_CAP };

	bpf_loop(VFS_BATCH_CAP, batch_ledger_step, &c, 0);
}

/* The waiting records into the ring buffer, one reservation; the batch locked. */
static __always_inline void batch_flush_locked(struct vfs_batch *b, __u32 pid, __u32 tid)
{
	__u32 n = b->n;
	__u64 size, avail;

	if (n == 0)
		return;
	if (n > VFS_BATCH_CAP)
		n = VFS_BATCH_CAP;
	/* bounded again where the size is made: 6.1's verifier loses the
	 * bound above when the compiler keeps n on the stack */
	barrier_var(n);
	if (n > VFS_BATCH_CAP)
		n = VFS_BATCH_CAP;
	size = sizeof(b->hdr) + (__u64)n * sizeof(b->ev[0]);
	barrier_var(size);
	if (size > sizeof(b->hdr) + sizeof(b->ev))
		return;
	fill_hdr(&b->hdr, GPUIO_REC_RING_BATCH, (__u16)size, pid, tid, b->first_ns);
	/* wake the collector when these bytes cross a multiple of wakeup_bytes */
	avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	if (bpf_ringbuf_output(&events, &b->hdr, size,
			       (avail + size) / wakeup_bytes != avail / wakeup_bytes ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP) != 0) {
		stat_add(GPUIO_STAT_RB_DROP_VFS, n);
		batch_ledger(b, n);
	}
	b->n = 0;
}

/* Flush if it can be taken now (switch-out, iterator); true when it was. */
static __always_inline bool batch_try_flush(struct vfs_batch *b, __u32 pid, __u32 tid)
{
	if (!b->n)
		return true;
	if (!batch_lock(b))
		return false;
	batch_flush_locked(b, pid, tid);
	batch_unlock(b);
	return true;
}

#endif
