// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_empty.bpf.c — the floor for `make bench`: syscall enter/exit
 * programs attached exactly where gpuio's syscall path attaches, doing only
 * gpuio's TGID filter (hash map lookup) and nothing else.  The cost of
 * tests/bench/empty_run is what any BPF tracer at this hook must pay; gpuio's
 * added cost is reported as a multiple of it. bench_fault is the same filter
 * on the fault layer's hook (exceptions:page_fault_user), loaded instead of
 * the syscall pair by `empty_run -f` (tests/bench/faults.sh).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Same shape as gpuio's `traced` map: tgid -> u8. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

/* Filter and return: the verdict is deliberately unused (nothing to emit). */
static __always_inline int filter(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!bpf_map_lookup_elem(&traced, &tgid))
		return 0;
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(bench_sys_enter, struct pt_regs *regs, long id)
{
	return filter();
}

SEC("tp_btf/sys_exit")
int BPF_PROG(bench_sys_exit, struct pt_regs *regs, long ret)
{
	return filter();
}

SEC("?tp_btf/page_fault_user")
int BPF_PROG(bench_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return filter();
}
