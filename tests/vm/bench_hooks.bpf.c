// SPDX-License-Identifier: GPL-2.0
/*
 * bench_hooks.bpf.c — the floor for `make vmbench`: an empty program pair on
 * each hook a gpuio VFS mode uses for read(2)/pread(2), doing only gpuio's
 * TGID filter (one hash lookup) and nothing else.
 *
 *   fentry   fentry + fexit     vfs_read
 *   kprobe   kprobe + kretprobe vfs_read
 *   tp_btf   tp_btf sys_enter + sys_exit
 *   raw_tp   raw_tp sys_enter + sys_exit
 *
 * Every program is SEC("?...") (off by default); tests/vm/bench_hooks.c turns
 * on the pair of the mode it is asked for.  `hits` counts filtered-in calls,
 * so a run can show that the floor program really ran.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* Same shape as gpuio's `traced` map: tgid -> u8. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

__u64 hits;

static __always_inline int filter(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (bpf_map_lookup_elem(&traced, &tgid))
		hits++;          /* racy on SMP; the guest has one CPU */
	return 0;
}

SEC("?fentry/vfs_read")
int BPF_PROG(e_fentry, struct file *file) { return filter(); }
SEC("?fexit/vfs_read")
int BPF_PROG(e_fexit, struct file *file) { return filter(); }

SEC("?kprobe/vfs_read")
int BPF_KPROBE(e_kprobe) { return filter(); }
SEC("?kretprobe/vfs_read")
int BPF_KRETPROBE(e_kretprobe) { return filter(); }

SEC("?tp_btf/sys_enter")
int BPF_PROG(e_tpbtf_enter, struct pt_regs *regs, long id) { return filter(); }
SEC("?tp_btf/sys_exit")
int BPF_PROG(e_tpbtf_exit, struct pt_regs *regs, long ret) { return filter(); }

/* gpuio's per-syscall mode: the pread64 pair only (the workload's call) */
SEC("?tracepoint/syscalls/sys_enter_pread64")
int e_tpsc_enter(void *ctx) { return filter(); }
SEC("?tracepoint/syscalls/sys_exit_pread64")
int e_tpsc_exit(void *ctx) { return filter(); }

SEC("?raw_tp/sys_enter")
int BPF_PROG(e_rawtp_enter, struct pt_regs *regs, long id) { return filter(); }
SEC("?raw_tp/sys_exit")
int BPF_PROG(e_rawtp_exit, struct pt_regs *regs, long ret) { return filter(); }
