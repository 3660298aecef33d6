// SPDX-License-Identifier: GPL-2.0
/*
 * probe_modes.bpf.c — the VM harness's own proof that every attach mode gpuio
 * relies on loads, attaches and counts exactly on the guest kernel:
 *
 *   fentry/fexit   vfs_read            (the preferred VFS mode)
 *   kprobe/kretprobe vfs_write         (the fallback VFS mode)
 *   tp_btf         sys_enter, block_rq_issue
 *   raw_tp         sys_exit
 *   tracepoint     syscalls/sys_enter_write (needs tracefs)
 *
 * Only the thread `target_pid`/`target_tid` is counted (block requests: only
 * reads on `target_dev`), and only while userspace has `phase` set to 1 or 2,
 * so the counts must equal the workload in tests/vm/probe_modes.c exactly.
 * Built by tests/vm/vm.mk (not by the top Makefile's bpf/ rules).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "probe_modes.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_pid;	/* tgid */
const volatile __u32 target_tid;
const volatile __u32 target_dev;	/* kernel dev_t (major << 20 | minor) */

__u32 phase;				/* written by userspace through the skeleton */
__u64 counts[PM_PHASES][PM_NCOUNT];

static __always_inline int cur_phase(void)
{
	__u32 p = phase;

	return (p > 0 && p < PM_PHASES) ? (int)p : -1;
}

static __always_inline int mine(void)
{
	__u64 id = bpf_get_current_pid_tgid();

	if ((__u32)(id >> 32) != target_pid || (__u32)id != target_tid)
		return -1;
	return cur_phase();
}

static __always_inline void add(int p, int c, __u64 v)
{
	__u32 i;

	if (p <= 0 || c < 0 || c >= PM_NCOUNT)
		return;
	/* Hide p's range from the compiler so the mask survives for the verifier. */
	i = p;
	barrier_var(i);
	i &= PM_PHASES - 1;
	__sync_fetch_and_add(&counts[i][c], v);
}

SEC("fentry/vfs_read")
int BPF_PROG(fentry_vfs_read, struct file *file, char *buf, size_t count, loff_t *pos)
{
	add(mine(), PM_FENTRY_READ, 1);
	return 0;
}

SEC("fexit/vfs_read")
int BPF_PROG(fexit_vfs_read, struct file *file, char *buf, size_t count, loff_t *pos,
	     ssize_t ret)
{
	int p = mine();

	add(p, PM_FEXIT_READ, 1);
	if (ret > 0)
		add(p, PM_FEXIT_READ_BYTES, ret);
	return 0;
}

SEC("kprobe/vfs_write")
int BPF_KPROBE(kprobe_vfs_write, struct file *file, const char *buf, size_t count)
{
	int p = mine();

	add(p, PM_KPROBE_WRITE, 1);
	add(p, PM_KPROBE_WRITE_BYTES, count);
	return 0;
}

SEC("kretprobe/vfs_write")
int BPF_KRETPROBE(kretprobe_vfs_write, ssize_t ret)
{
	if (ret > 0)
		add(mine(), PM_KRETPROBE_WRITE_BYTES, ret);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(tpbtf_sys_enter, struct pt_regs *regs, long id)
{
	int p = mine();

	if (id == PM_NR_read)
		add(p, PM_TPBTF_ENTER_READ, 1);
	else if (id == PM_NR_write)
		add(p, PM_TPBTF_ENTER_WRITE, 1);
	else if (id == PM_NR_pread64)
		add(p, PM_TPBTF_ENTER_PREAD, 1);
	return 0;
}

/* raw_tp: args are untyped u64s; the syscall number comes from regs->orig_ax. */
SEC("raw_tp/sys_exit")
int BPF_PROG(rawtp_sys_exit, struct pt_regs *regs, long ret)
{
	int p = mine();
	long id;

	if (p < 0)
		return 0;
	id = BPF_CORE_READ(regs, orig_ax);
	if (id == PM_NR_read) {
		add(p, PM_RAWTP_EXIT_READ, 1);
		if (ret > 0)
			add(p, PM_RAWTP_EXIT_READ_BYTES, ret);
	} else if (id == PM_NR_write) {
		add(p, PM_RAWTP_EXIT_WRITE, 1);
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_write")
int tp_sys_enter_write(struct trace_event_raw_sys_enter *ctx)
{
	int p = mine();

	add(p, PM_TP_ENTER_WRITE, 1);
	add(p, PM_TP_ENTER_WRITE_BYTES, ctx->args[2]);
	return 0;
}

/* Block requests are counted by device and op, not by thread: they may be
 * issued from kblockd.  Reads only, so journal commits do not interfere. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(tpbtf_block_rq_issue, struct request *rq)
{
	int p = cur_phase();
	__u32 dev;

	if (p < 0)
		return 0;
	dev = BPF_CORE_READ(rq, part, bd_dev);
	if (dev != target_dev || (BPF_CORE_READ(rq, cmd_flags) & PM_REQ_OP_MASK) != PM_REQ_OP_READ)
		return 0;
	add(p, PM_BLOCK_READ_RQ, 1);
	add(p, PM_BLOCK_READ_BYTES, BPF_CORE_READ(rq, __data_len));
	return 0;
}
