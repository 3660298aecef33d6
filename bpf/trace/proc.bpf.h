/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * proc.bpf.h — the traced process tree. Children join at fork (before they
 * can exec or do I/O); the whole process leaves when its last thread exits.
 * Fork/exec/exit/rename are also emitted so the timeline can name processes.
 */
#ifndef GPUIO_PROC_BPF_H
#define GPUIO_PROC_BPF_H
#include "trace/common.bpf.h"
#include "trace/pystack.bpf.h"

static __always_inline struct gpuio_proc_event *proc_reserve(__u32 kind, __u32 pid, __u32 tid)
{
	struct gpuio_proc_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_PROC);
		return NULL;
	}
	fill_hdr(&e->hdr, GPUIO_REC_PROC, sizeof(*e), pid, tid, bpf_ktime_get_ns());
	e->kind = kind;
	e->ppid = 0;
	e->exit_code = 0;
	e->args_len = 0;
	return e;
}

static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 cpid = BPF_CORE_READ(child, pid);
	struct gpuio_proc_event *e;

	if (!tgid_traced(ptgid))
		return 0;
	if (ctgid != ptgid && !trace_all && traced_add_tgid(ctgid) != 0) {
		/* the child will run untraced: say so, never silently */
		stat_inc(GPUIO_STAT_MAP_FULL_PID);
		return 0;
	}
	if (ctgid != ptgid)
		py_fork(ptgid, ctgid);
	e = proc_reserve(ctgid == ptgid ? GPUIO_PROC_THREAD : GPUIO_PROC_FORK, ctgid, cpid);
	if (!e)
		return 0;
	e->ppid = ptgid;
	BPF_CORE_READ_STR_INTO(&e->comm, child, comm);
	bpf_ringbuf_submit(e, rb_wakeup_flag());
	return 0;
}

static __always_inline int on_exec(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct gpuio_proc_event *e;
	unsigned long start, end;
	long n;

	if (!tgid_traced(tgid))
		return 0;
	py_forget(tgid);                /* a new image: its interpreter, if any, is found anew */
	e = proc_reserve(GPUIO_PROC_EXEC, tgid, BPF_CORE_READ(task, pid));
	if (!e)
		return 0;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	/* argv lives in the new image's memory; exec runs in its context */
	start = BPF_CORE_READ(task, mm, arg_start);
	end = BPF_CORE_READ(task, mm, arg_end);
	n = end - start;
	if (n > GPUIO_ARGS_MAX)
		n = GPUIO_ARGS_MAX;
	if (n > 0 && bpf_probe_read_user(e->args, (__u32)n,
					 (void *)start) == 0)
		e->args_len = n;
	/* now: the collector looks for the new image's interpreter while it starts */
	bpf_ringbuf_submit(e, py_wanted ? BPF_RB_FORCE_WAKEUP : rb_wakeup_flag());
	return 0;
}

static __always_inline int on_exit(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct gpuio_proc_event *e;

	if (!tgid_traced(tgid))
		return 0;
	/* signal->live reaches 0 when the last thread of the group exits */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	/* the process stays in the set until its leader is freed (on_free): its
	 * threads' last context switches come after this, and must be ours */
	e = proc_reserve(GPUIO_PROC_EXIT, tgid, BPF_CORE_READ(task, pid));
	if (!e)
		return 0;
	e->exit_code = BPF_CORE_READ(task, exit_code);
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, rb_wakeup_flag());
	return 0;
}

/*
 * A task's memory is freed (after an RCU grace period): when it is the
 * group leader, every thread of the process has exited, been switched out
 * for the last time and been reaped. Only now does the process leave the
 * traced set (its pid cannot be reused before this).
 */
static __always_inline int on_free(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (BPF_CORE_READ(task, pid) != tgid)
		return 0;
	py_forget(tgid);
	if (trace_all)
		return 0;
	traced_del_tgid(tgid);
	return 0;
}

static __always_inline int on_rename(struct task_struct *task, const char *comm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct gpuio_proc_event *e;

	if (!tgid_traced(tgid))
		return 0;
	e = proc_reserve(GPUIO_PROC_NAME, tgid, BPF_CORE_READ(task, pid));
	if (!e)
		return 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	bpf_ringbuf_submit(e, rb_wakeup_flag());
	return 0;
}

/* tp_btf: typed arguments, no tracefs needed. */
SEC("?tp_btf/sched_process_fork")
int BPF_PROG(proc_fork_btf, struct task_struct *parent, struct task_struct *child)
{ return on_fork(parent, child); }
SEC("?tp_btf/sched_process_exec")
int BPF_PROG(proc_exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{ return on_exec(p); }
SEC("?tp_btf/sched_process_exit")
int BPF_PROG(proc_exit_btf, struct task_struct *p)
{ return on_exit(p); }
SEC("?tp_btf/sched_process_free")
int BPF_PROG(proc_free_btf, struct task_struct *p)
{ return on_free(p); }
SEC("?tp_btf/task_rename")
int BPF_PROG(proc_rename_btf, struct task_struct *task, const char *comm)
{ return on_rename(task, comm); }

/* raw_tp: same hooks for kernels whose tp_btf is refused. */
SEC("?raw_tp/sched_process_fork")
int BPF_PROG(proc_fork_raw, struct task_struct *parent, struct task_struct *child)
{ return on_fork(parent, child); }
SEC("?raw_tp/sched_process_exec")
int BPF_PROG(proc_exec_raw, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{ return on_exec(p); }
SEC("?raw_tp/sched_process_exit")
int BPF_PROG(proc_exit_raw, struct task_struct *p)
{ return on_exit(p); }
SEC("?raw_tp/sched_process_free")
int BPF_PROG(proc_free_raw, struct task_struct *p)
{ return on_free(p); }
SEC("?raw_tp/task_rename")
int BPF_PROG(proc_rename_raw, struct task_struct *task, const char *comm)
{ return on_rename(task, comm); }

#endif
