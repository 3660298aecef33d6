/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sched.bpf.h — the scheduler layer: what a traced thread does between its
 * calls. A context switch is kept when a traced thread leaves or takes a
 * CPU (its state on leaving: preempted, sleeping, blocked); a wake-up when a
 * traced thread is woken, with the waker and the waker's VFS call in flight,
 * so userspace can follow "the loop slept until a worker's write woke it".
 * Filtered in the kernel: the switch hook runs on every switch of the node,
 * so it is two hash lookups and out when neither side is ours.
 */
#ifndef GPUIO_SCHED_BPF_H
#define GPUIO_SCHED_BPF_H
#include "trace/common.bpf.h"
#include "trace/vfs.bpf.h"
#include "lib/irq_ctx.bpf.h"

/*
 * A field of a task: tp_btf passes trusted BTF pointers, read with plain
 * loads; raw_tp passes raw ones, read with a probe_read helper each.
 */
#define TASK_RD(btf, t, field) ((btf) ? (t)->field : BPF_CORE_READ(t, field))

#include "trace/thread_time.bpf.h"      /* uses TASK_RD */

static __always_inline __u32 task_state(struct task_struct *t, const bool btf)
{
	struct task_struct___old { long state; } *o = (void *)t;
	__u32 st;

	if (bpf_core_field_exists(t->__state))
		st = TASK_RD(btf, t, __state);
	else
		st = BPF_CORE_READ(o, state);
	return (st & 0xffff) | ((__u32)TASK_RD(btf, t, exit_state) & 0xffff) << 16;
}

/* ts: the hook's one clock read, which the thread's time by state shares */
static __always_inline struct gpuio_sched_event *sched_reserve(__u32 kind, __u32 pid, __u32 tid,
							       __u64 ts)
{
	struct gpuio_sched_event *e;

	if (rb_shed(GPUIO_STAT_SHED_SCHED))
		return NULL;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_SCHED);
		return NULL;
	}
	fill_hdr(&e->hdr, GPUIO_REC_SCHED, sizeof(*e), pid, tid, ts);
	e->kind = kind;
	e->prev_state = 0;
	e->target_cpu = 0;
	e->waker_seq = 0;
	return e;
}

/* x86-64 syscall numbers whose first argument is the fd they wait on */
static __always_inline bool nr_waits_on_fd0(long nr)
{
	switch (nr) {
	case 0: case 1: case 16: case 17: case 18: case 19: case 20:   /* read write ioctl p/readv/writev */
	case 42: case 43: case 44: case 45: case 46: case 47:          /* connect accept send/recv(from/msg) */
	case 72: case 73: case 74: case 75:                            /* fcntl flock fsync fdatasync */
	case 232: case 281: case 441:                                  /* epoll_wait epoll_pwait(2) */
	case 275: case 288: case 295: case 296: case 299: case 307:    /* splice accept4 p/rw/v recvmmsg sendmmsg */
	case 327: case 328: case 426:                                  /* preadv2 pwritev2 io_uring_enter */
		return true;
	}
	return false;
}

/*
 * What the current task (prev: sched_switch runs in its context) goes to
 * sleep in, from its saved user registers. On x86-64 a thread inside a
 * syscall has ax == -ENOSYS (set at entry, replaced only by the return
 * value) and orig_ax = the syscall number; a page fault leaves the user's ax
 * there and the error code in orig_ax.
 */
static __always_inline void wait_emit(__u32 tgid, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct gpuio_wait_event *e;
	long nr = GPUIO_WAIT_NR_UNKNOWN;
	__u64 a0 = 0;

	if (rb_shed(GPUIO_STAT_SHED_SCHED))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_WAIT);
		return;
	}
	fill_hdr(&e->hdr, GPUIO_REC_WAIT, sizeof(*e), tgid, tid, bpf_ktime_get_ns());
	e->fd = -1;
	e->ino = 0;
	e->addr = 0;
	e->dev = 0;
	e->ftype = 0;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
#if defined(__TARGET_ARCH_x86)
	{
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

		nr = BPF_CORE_READ(regs, orig_ax);
		if ((long)BPF_CORE_READ(regs, ax) != -38 /* -ENOSYS */ || nr < 0)
			nr = GPUIO_WAIT_NR_NONE;
		else
			a0 = BPF_CORE_READ(regs, di);
	}
#endif
	e->nr = (__s32)nr;
	if (nr == 7 || nr == 271) {             /* poll, ppoll: the first pollfd's fd */
		int pfd = -1;

		if (!bpf_probe_read_user(&pfd, sizeof(pfd), (void *)a0))
			e->fd = pfd;
	} else if (nr == 202 || nr == 449) {    /* futex, futex_waitv */
		e->addr = a0;
	} else if (nr >= 0 && nr_waits_on_fd0(nr)) {
		e->fd = (int)a0;
	}
	if (e->fd >= 0) {
		struct file_id id = {};

		if (file_ident(fd_to_file_probe(e->fd), &id)) {
			e->ino = id.ino;
			e->dev = id.dev;
			e->ftype = id.ftype;
		}
	}
	bpf_ringbuf_submit(e, rb_wakeup_flag());
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, const bool btf)
{
	__u32 ptgid = TASK_RD(btf, prev, tgid), ntgid = TASK_RD(btf, next, tgid);
	__u32 ppid, npid, pst;
	bool pt, nt;
	struct gpuio_sched_event *e;
	__u64 e_ts, now;

	pt = tgid_traced(ptgid);
	nt = tgid_traced(ntgid);
	if (!pt && !nt)
		return 0;
	ppid = TASK_RD(btf, prev, pid);
	npid = TASK_RD(btf, next, pid);
	pt = pt && ppid != 0;           /* the idle task is never ours */
	nt = nt && npid != 0;
	if (!pt && !nt)
		return 0;
	/* the time by state first: it stays exact when the records below are lost */
	now = bpf_ktime_get_ns();
	pst = task_state(prev, btf);
	if (pt)
		ttime_switch_out(prev, ptgid, ppid, preempt, pst, now, btf);
	if (nt) {
		ttime_switch_in(next, ntgid, npid, now, btf);
		fault_switch_in(next, btf);
	}
	/* prev leaves the CPU: its waiting records go first (batch.bpf.h); one
	 * preempted inside a call's end holds its batch, which stays for later */
	if (pt && vfs_batch) {
		struct call_state *cs = bpf_task_storage_get(&calls, bpf_get_current_task_btf(),
							     NULL, 0);

		if (cs && cs->batch.n)
			batch_try_flush(&cs->batch, ptgid, ppid);
	}
	e = sched_reserve(GPUIO_SCHED_SWITCH, ptgid, ppid, now);
	if (!e)
		return 0;
	e_ts = e->hdr.ts;
	e->flags = (pt ? GPUIO_SF_PREV_TRACED : 0) | (nt ? GPUIO_SF_NEXT_TRACED : 0) |
		   (preempt ? GPUIO_SF_PREEMPT : 0);
	e->other_pid = ntgid;
	e->other_tid = npid;
	e->prev_state = pst;
	e->prio = TASK_RD(btf, prev, prio);
	/* zeroed first: a _str read leaves the ring's old bytes after the NUL,
	 * which the compact capture would have to keep (and which leak) */
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	if (!nt)
		BPF_CORE_READ_STR_INTO(&e->comm, next, comm);
	else if (!pt)
		BPF_CORE_READ_STR_INTO(&e->comm, prev, comm);
	bpf_ringbuf_submit(e, rb_wakeup_flag());
	/* a traced thread going to sleep (not preempted, not exiting): in what */
	if (pt && !preempt && (pst & 3) && !(pst >> 16))
		wait_emit(ptgid, ppid);
	/* and where in its program it was when it left the CPU (stacks on):
	 * prev is current here, its memory the one mapped */
	if (pt && py_sleeps && !(pst >> 16))
		py_stack_at(ptgid, ppid, preempt || !(pst & 3) ? GPUIO_SA_PREEMPT : GPUIO_SA_SLEEP, 0,
			    e_ts);
	return 0;
}

static __always_inline int on_wake(struct task_struct *p, __u32 kind, const bool btf)
{
	__u32 tgid = TASK_RD(btf, p, tgid);
	__u64 cur = bpf_get_current_pid_tgid(), now;
	struct gpuio_sched_event *e;
	struct call_state *cs;
	__u32 tid;
	bool irq;

	if (!tgid_traced(tgid))
		return 0;
	now = bpf_ktime_get_ns();
	tid = TASK_RD(btf, p, pid);
	ttime_wake(p, tgid, tid, kind == GPUIO_SCHED_WAKE_NEW, now, btf);
	e = sched_reserve(kind, tgid, tid, now);
	if (!e)
		return 0;
	/*
	 * The running task is the waker, except in interrupt context (a timer,
	 * a disk completion), where it is whoever the interrupt landed on:
	 * those wake-ups name no waker (0, as the idle task's), told apart by
	 * the per-CPU preempt count (lib/irq_ctx.bpf.h). Where that cannot be
	 * read, userspace still trusts a traced waker only for waits that are
	 * not I/O or timers.
	 */
	irq = gpuio_in_irq();
	if (irq)
		cur = 0;
	e->flags = 0;
	e->other_pid = cur >> 32;
	e->other_tid = (__u32)cur;
	e->prio = TASK_RD(btf, p, prio);
	e->target_cpu = TASK_RD(btf, p, wake_cpu);
	if ((__u32)cur && tgid_traced(cur >> 32)) {
		e->flags |= GPUIO_SF_WAKER_TRACED;
		cs = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL, 0);
		if (cs && cs->call != GPUIO_CALL_NONE)
			e->waker_seq = cs->seq;
	}
	if (!irq)
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	else
		e->comm[0] = 0;
	bpf_ringbuf_submit(e, rb_wakeup_flag());
	return 0;
}

/* tp_btf: typed arguments. prev_state is read from the task, not from the
 * 4th argument, which kernels before 5.18 do not pass. */
SEC("?tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return on_switch(preempt, prev, next, true); }
SEC("?tp_btf/sched_waking")
int BPF_PROG(sched_waking_btf, struct task_struct *p)
{ return on_wake(p, GPUIO_SCHED_WAKE, true); }
SEC("?tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_btf, struct task_struct *p)
{ return on_wake(p, GPUIO_SCHED_WAKE_NEW, true); }

SEC("?raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return on_switch(preempt, prev, next, false); }
SEC("?raw_tp/sched_waking")
int BPF_PROG(sched_waking_raw, struct task_struct *p)
{ return on_wake(p, GPUIO_SCHED_WAKE, false); }
SEC("?raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_raw, struct task_struct *p)
{ return on_wake(p, GPUIO_SCHED_WAKE_NEW, false); }

#endif
