// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mode_probe.bpf.c — one empty program per function-hook mode, on the
 * function the VFS set hooks first. Loading and attaching one of these
 * costs about a millisecond; loading the whole set only to learn that the
 * kernel refuses fentry (no trampolines) or kprobes (none built in) cost
 * ~300 ms per refused mode (user/trace/loader.c probes before its ladder).
 * The same for the CUDA layer's uprobe.multi links (6.6+, per process 6.10+).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("?fentry/vfs_read")
int BPF_PROG(probe_fentry)
{
	return 0;
}

SEC("?fexit/vfs_read")
int BPF_PROG(probe_fexit)
{
	return 0;
}

SEC("?kprobe/vfs_read")
int BPF_KPROBE(probe_kprobe)
{
	return 0;
}

SEC("?kretprobe/vfs_read")
int BPF_KRETPROBE(probe_kretprobe)
{
	return 0;
}

/* loaded as uprobe.multi (expected attach type set by mode_probe.c: the
 * section name is newer than Debian's libbpf); its links are only asked */
SEC("?uprobe")
int BPF_KPROBE(probe_uprobe_multi)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
