// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * monitor_cuda.bpf.c — `gpuio monitor`'s CUDA API call counts: one entry
 * uprobe (no return probe) on the known functions of every libcudart /
 * libcuda file mapped on the node (user/monitor/monitor_cuda.c finds and attaches
 * them), adding 1 per call to the caller's process entry (mon_cuda, keyed
 * like mon_proc: tgid, leader start time, cgroup). Userspace folds exited
 * processes and turns the entries into per-process and per-cgroup series.
 *
 * A separate object from monitor.bpf.c: loaded only when wanted (not with
 * --no-cuda-uprobes), in either attach flavour (uprobe.multi, else classic
 * perf uprobes) without touching the I/O programs; mon_stats is shared
 * (its fd is reused). Nothing here runs until a CUDA library is probed.
 *
 * The cookie (MON_CUDA_COOKIE in monitor.h) holds the kind, the layer
 * (runtime / driver) and the extent of the library's executable segment
 * around the function: a call whose return address lies in that segment
 * comes from the library itself (cuMemcpyHtoD -> cuMemcpy) and is not
 * counted, the way the tracer keeps only the outermost call of a library.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "monitor/monitor.h"
#include "monitor/mon_cgroup.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct mon_proc_key);
	__type(value, struct mon_cuda_val);
} mon_cuda SEC(".maps");

/* monitor.bpf.c's stats (fd reused by the loader) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MON_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mon_stats SEC(".maps");

#define STAT_MAP mon_stats
#include "lib/stat.bpf.h"

static __always_inline int count_call(struct pt_regs *ctx)
{
	__u64 c = bpf_get_attach_cookie(ctx), ip = PT_REGS_IP(ctx), ret = 0;
	__u64 below = (c >> 4) & MON_CUDA_SPAN_MAX, above = c >> (4 + MON_CUDA_SPAN_BITS);
	struct task_struct *task;
	struct mon_proc_key k = {};
	struct mon_cuda_val *v;

	/* at the function's first instruction, [sp] is the return address */
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx)) == 0 &&
	    ret >= ip - below && ret < ip + above)
		return 0;        /* called from inside the same library */
	task = bpf_get_current_task_btf();
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	k.cgid = mon_cgroup_id();
	v = bpf_map_lookup_elem(&mon_cuda, &k);
	if (!v) {
		struct mon_cuda_val z = {};
		struct task_struct *leader = BPF_CORE_READ(task, group_leader);

		BPF_CORE_READ_STR_INTO(&z.comm, leader, comm);
		z.comm_ts = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&mon_cuda, &k, &z, BPF_NOEXIST) == 0)
			stat_inc(MON_STAT_CUDA_NEW);
		v = bpf_map_lookup_elem(&mon_cuda, &k);
		if (!v) {
			stat_inc(MON_STAT_CUDA_FAIL);
			return 0;
		}
	}
	__sync_fetch_and_add(&v->calls[(c >> 3) & 1][c & 7], 1);
	return 0;
}

/* uprobe.multi flavour (kernel >= 6.6): loaded with expected_attach_type
 * BPF_TRACE_UPROBE_MULTI, one link per library file */
SEC("?uprobe")
int mon_cuda_multi(struct pt_regs *ctx)
{
	return count_call(ctx);
}

/* classic perf-event uprobes: one link per function */
SEC("?uprobe")
int mon_cuda_entry(struct pt_regs *ctx)
{
	return count_call(ctx);
}
