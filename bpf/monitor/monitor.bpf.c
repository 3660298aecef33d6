// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * monitor.bpf.c — `gpuio monitor`'s always-on aggregation. Nothing goes to
 * userspace per event: every hook adds into per-CPU maps that the daemon
 * reads when scraped (bpf/monitor/monitor.h has the layouts).
 *
 *   sys_enter/sys_exit   read/write-family calls on regular files and block
 *                        devices: bytes, ops, log2 latency per (cgroup, fs
 *                        device) and bytes/ops per process incarnation
 *   block_bio_queue      who submitted a bio (cgroup, process), while current
 *   block_rq_insert/issue/complete
 *                        per disk: bytes, ops, queue and service histograms;
 *                        per cgroup/process: block bytes/ops; writes from
 *                        kernel threads are writeback
 *   mm_filemap_add_to_page_cache
 *                        pages a buffered read added (its cache misses)
 *   writeback_dirty_folio
 *                        pages dirtied per cgroup
 *   sched_switch/sched_waking
 *                        thread time by state per process, and the waits
 *                        of the threads recognised as loops (mon_sched.bpf.h)
 *   sched_process_exit/exec
 *                        a process is gone (userspace folds and deletes its
 *                        entry) / renamed (its comm in the entry)
 *
 * Two variants of every program: tp_btf (plain loads through typed
 * pointers) and raw_tp (CO-RE reads); user/monitor/monitor_bpf.c loads the best.
 * In the tp_btf variant a thread's syscall counters accumulate in its task
 * storage and are folded into the maps lazily (struct mon_acc; the daemon
 * runs the task iterator mon_iter_task before each refresh, so the page is
 * still exact); raw_tp may not use the spin lock that needs, so it adds
 * every call straight into the maps.
 *
 * Cost per I/O syscall (pread of a cached file, bpf_stats run_time_ns/run_cnt
 * on this 6.18 VM; the empty floor bench_empty.bpf.c is 44 + 44 ns):
 *   before: enter 82 + exit 112 ns (two per-CPU LRU hash lookups per call)
 *   tp_btf: enter 73 + exit 76 ns; raw_tp: enter 146 + exit 110 ns.
 * What is left is mostly intrinsic: the two bpf_ktime_get_ns() (~30 ns each
 * here), the program dispatch and stats overhead (~33 ns per program, as in
 * the floor), one task storage lookup per edge (~4 ns), the fd -> file walk
 * (~6 ns), the cgroup id (~4 ns) and a handful of adds.
 * LRU maps bound memory and absorb process churn; creations are counted so
 * userspace can report evictions.
 */
#include "monitor/mon_state.bpf.h"
#include "monitor/mon_vfs.bpf.h"
#include "monitor/mon_cache.bpf.h"
#include "monitor/mon_block.bpf.h"
#include "monitor/mon_sched.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* ------------------------------------------------------------- processes */

static __always_inline int on_exit(struct task_struct *task, const bool fast)
{
	struct mon_exit_key k = {};
	__u8 one = 1;

	if (fast) {      /* every exiting thread: its pending counts go to the maps */
		struct mon_task *t = bpf_task_storage_get(&mon_task, task, NULL, 0);

		if (t)
			acc_fold(t, task, BPF_CORE_READ(task, tgid));
	}
	if (sched_on)
		sched_exit(task, fast);

	/* signal->live reaches 0 when the last thread of the group exits */
	if (BPF_CORE_READ(task, signal, live.counter) != 0 ||
	    (BPF_CORE_READ(task, flags) & PF_KTHREAD_))
		return 0;
	k.tgid = BPF_CORE_READ(task, tgid);
	k.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	if (bpf_map_update_elem(&mon_exited, &k, &one, BPF_ANY) == 0)
		stat_inc(MON_STAT_EXIT_NEW);
	return 0;
}

/* exec renames the process: refresh the comm of its entry (this CPU's copy,
 * newest wins in userspace) */
static __always_inline int on_exec(struct task_struct *task, const bool fast)
{
	struct mon_proc_key pk = {};
	struct mon_proc_val *pv;

	pk.tgid = BPF_CORE_READ(task, tgid);
	pk.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	pk.cgid = mon_cgroup_id();
	pv = proc_get(&pk, false);
	if (pv)
		proc_fill_comm(pv, task);
	if (sched_on) {
		struct mon_sched_val *sv = bpf_map_lookup_elem(&mon_sched_proc, &pk);

		if (sv) {
			struct task_struct *leader = BPF_CORE_READ(task, group_leader);

			BPF_CORE_READ_STR_INTO(&sv->comm, leader, comm);
			sv->comm_ts = bpf_ktime_get_ns();
		}
		sched_exec(task, fast);
	}
	return 0;
}

SEC("?tp_btf/sched_process_exit")
int BPF_PROG(mon_exit_btf, struct task_struct *p)
{ return on_exit(p, true); }
SEC("?tp_btf/sched_process_exec")
int BPF_PROG(mon_exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{ return on_exec(p, true); }
SEC("?raw_tp/sched_process_exit")
int BPF_PROG(mon_exit_raw, struct task_struct *p)
{ return on_exit(p, false); }
SEC("?raw_tp/sched_process_exec")
int BPF_PROG(mon_exec_raw, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{ return on_exec(p, false); }

/* Run by the daemon before each refresh (tp_btf variant): every thread's
 * pending counts into the maps. */
SEC("?iter/task")
int mon_iter_task(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct mon_task *t;

	if (!task)
		return 0;
	t = bpf_task_storage_get(&mon_task, task, NULL, 0);
	if (t)
		acc_fold(t, task, task->tgid);
	if (sched_on) {
		struct mon_sched *ms = bpf_task_storage_get(&mon_sched, task, NULL, 0);

		if (ms)
			sched_fold(ms, task, true);
	}
	return 0;
}
