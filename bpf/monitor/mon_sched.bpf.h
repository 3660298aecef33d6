/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_sched.bpf.h — thread time per process incarnation, by state, and the
 * waits of the threads recognised as loops, by cause (struct mon_sched_val).
 * Part of monitor.bpf.c (one BPF object), included once from it.
 *
 * Each user thread carries a small state in task storage (struct mon_sched):
 * what it is doing since when (on a CPU, runnable, asleep in a kind). The
 * hooks close the interval at every transition and add it to the thread's
 * own counters s[] (plain adds: nothing is shared per event):
 *   sched_switch  prev leaves its CPU: its on-CPU time ends; preempted (or
 *                 still TASK_RUNNING) it becomes runnable, else asleep in
 *                 what its saved registers say it is blocked in (below);
 *                 next takes the CPU: its runnable (or, missed wake-up, its
 *                 sleep) time ends
 *   sched_waking  in the waker's context: the wakee's sleep ends, and it
 *                 becomes runnable; whether the waker is one of its data
 *                 producers decides the sleep's cause (below)
 *   sched_process_exit  the exiting thread's on-CPU time up to there, and a fold
 * What a sleep is blocked in (prev is current in sched_switch): in one of
 * the monitor's counted read/write calls on a regular file or block device
 * (mon_task.pending) or another file syscall (open, stat, fsync, ...):
 * file_io; in a socket syscall, or read/write on a socket: network; not in
 * a syscall at all (the saved ax is not -ENOSYS): a page fault (the one way
 * a user thread sleeps outside a syscall, signal stops aside); anything
 * else (futex, poll, pipes, timers, wait4, ...): other.
 *
 * Loops (a simple rule, documented in docs/monitor.md): a sleep that is not
 * file_io or page_fault, ended by a wake-up from one of the sleeper's data
 * producers, is a wait for data, and so is the runnable time right after
 * it. A producer is a thread of a descendant process (up to 4 generations:
 * DataLoader workers, their feeder threads) or a thread of the same
 * process, not its main thread, that has read a regular file
 * (mon_task.reader: reader threads of a prefetcher); never a waker that is
 * exiting (a child's exit waking its parent is a join). A thread with at
 * least MON_LOOP_MIN_WAKES such wake-ups, that ended fewer than half as many
 * sleeps of others as their producer (not a relay), is a loop: its time
 * (MON_LW_TOTAL) and its waits by cause (data, or the sleep's kind) are
 * folded into the loop counters from its start (its last exec: see
 * sched_exec). Not followed: a relay
 * thread between the workers and the loop (PyTorch's pin-memory thread) is
 * the loop then (its waits for the workers stand for the loop's), and a
 * main thread that reads files does not feed the process's other threads
 * (multiprocessing feeder threads are woken by it). A wake-up from an
 * interrupt (a timer ending a timed sleep) that lands on a producer is not
 * the producer's (lib/irq_ctx.bpf.h): a busy DataLoader's workers are on a
 * CPU when its feeder threads' timed waits end, and made them loops. Known
 * miss: x86 kernels 6.2-6.14, where the preempt count is not readable so.
 *
 * The counters reach the map (mon_sched_proc, one entry per process, LRU)
 * lazily, as the VFS accumulation does: s - r is folded under the storage's
 * spin lock by the task iterator the daemon runs before every refresh, and
 * by the thread itself when it exits. An interval is counted when it ends:
 * a thread asleep for a minute shows that minute when it wakes. raw_tp
 * (no spin lock) folds at every transition instead.
 */
#ifndef GPUIO_MON_SCHED_BPF_H
#define GPUIO_MON_SCHED_BPF_H

#include "monitor/mon_state.bpf.h"
#include "monitor/mon_vfs.bpf.h"
#include "lib/irq_ctx.bpf.h"

/* false (--no-thread-time): the programs are not loaded; folds skip it */
const volatile bool sched_on = true;

enum { MS_NONE = 0, MS_CPU = 1, MS_RUNNABLE = 2, MS_SLEEP = 3 };

struct mon_sched {
	struct bpf_spin_lock lock;       /* folds (iterator, exit) */
	__u8 st;                 /* MS_* */
	__u8 kind;               /* MON_TS_FILE..MON_TS_OTHER while asleep */
	__u8 data;               /* runnable after a producer's wake-up */
	__u8 pad1;
	__u32 data_wakes;        /* sleeps ended by a producer (loop at MON_LOOP_MIN_WAKES) */
	__u32 given;             /* sleeps of others it ended as their producer (a relay) */
	__u64 ts;                /* when st began */
	__u64 start_ns;          /* group leader's start_time */
	__u64 s[MON_SCHED_N];    /* accumulated (this thread) */
	__u64 r[MON_SCHED_N];    /* the part of s already in the map */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mon_sched);
} mon_sched SEC(".maps");

/* raw_tp may not use a map holding a bpf_spin_lock: the same layout with a pad */
struct mon_sched_raw {
	__u32 lock_pad;
	__u8 st, kind, data, pad1;
	__u32 data_wakes;
	__u32 given;
	__u64 ts;
	__u64 start_ns;
	__u64 s[MON_SCHED_N];
	__u64 r[MON_SCHED_N];
};
_Static_assert(sizeof(struct mon_sched_raw) == sizeof(struct mon_sched), "same layout");

/* raw_tp: next and the wakee are raw pointers, which task storage does not
 * take: the state is in a hash by thread id instead (deleted at exit). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct mon_sched_raw);
} mon_sched_raw SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mon_sched_raw);
} mon_sched_rzero SEC(".maps");

/* Per process incarnation (not per CPU: folds are rare, adds are atomic). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct mon_proc_key);
	__type(value, struct mon_sched_val);
} mon_sched_proc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mon_sched_val);
} mon_sched_zero SEC(".maps");

#define TASK_STATE_RUNNING_ 0
#define TASK_INTERRUPTIBLE_ 1
#define TASK_UNINTERRUPTIBLE_ 2
#define PF_EXITING_ 0x00000004

static __always_inline struct mon_sched *sched_of(struct task_struct *t, bool create, const bool fast)
{
	struct mon_sched *ms;

	if (fast) {
		ms = bpf_task_storage_get(&mon_sched, t, NULL, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	} else {
		__u32 tid = BPF_CORE_READ(t, pid), k = 0;

		ms = bpf_map_lookup_elem(&mon_sched_raw, &tid);
		if (!ms && create) {
			void *z = bpf_map_lookup_elem(&mon_sched_rzero, &k);

			if (z)
				bpf_map_update_elem(&mon_sched_raw, &tid, z, BPF_NOEXIST);
			ms = bpf_map_lookup_elem(&mon_sched_raw, &tid);
		}
	}
	if (ms && !ms->start_ns) {
		ms->start_ns = BPF_CORE_READ(t, group_leader, start_time);
		if (!ms->start_ns)
			ms->start_ns = 1;
	}
	if (!ms && create)
		stat_inc(MON_STAT_TASK_FAIL);
	return ms;
}

/* The cgroup a task's series go to (mon_cgroup_id, for any task). */
static __always_inline __u64 mon_cgroup_id_of(struct task_struct *t)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cs;

	if (mon_cg_ssid < 0)
		return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
	cs = BPF_CORE_READ(t, cgroups);
	if (!cs)
		return 0;
	bpf_core_read(&css, sizeof(css), &cs->subsys[mon_cg_ssid & 15]);
	return css ? BPF_CORE_READ(css, cgroup, kn, id) : 0;
}

/* s - r of ms into the process's entry: thread states always, the loop
 * counters once the thread is a loop (from its start: r holds them back). */
static __always_inline void sched_fold(struct mon_sched *ms, struct task_struct *task, const bool fast)
{
	struct mon_proc_key pk = {};
	struct mon_sched_val *v;
	__u32 k = 0, n = MON_TS_N;
	void *zero;

	if (ms->data_wakes >= MON_LOOP_MIN_WAKES && ms->given * 2 < ms->data_wakes)
		n = MON_SCHED_N;
	if (ms->s[MON_TS_CPU] == ms->r[MON_TS_CPU] && ms->s[MON_TS_RUNNABLE] == ms->r[MON_TS_RUNNABLE] &&
	    ms->s[MON_TS_N + MON_LW_TOTAL] == ms->r[MON_TS_N + MON_LW_TOTAL])
		return;          /* nothing new (every interval adds to LW_TOTAL) */
	pk.tgid = BPF_CORE_READ(task, tgid);
	pk.start_ns = ms->start_ns;
	pk.cgid = mon_cgroup_id_of(task);
	zero = bpf_map_lookup_elem(&mon_sched_zero, &k);
	if (!zero)
		return;
	v = get_or_create(&mon_sched_proc, &pk, zero, MON_STAT_SCHED_NEW, MON_STAT_SCHED_FAIL);
	if (!v)
		return;
	if (!v->comm_ts) {
		struct task_struct *leader = BPF_CORE_READ(task, group_leader);

		BPF_CORE_READ_STR_INTO(&v->comm, leader, comm);
		v->comm_ts = bpf_ktime_get_ns();
	}
	if (fast)
		bpf_spin_lock(&ms->lock);
	for (__u32 i = 0; i < MON_SCHED_N; i++) {
		__u64 cur, d;

		if (i >= n)
			break;
		cur = *(volatile __u64 *)&ms->s[i];
		d = cur - ms->r[i];
		ms->r[i] = cur;
		if (d)
			__sync_fetch_and_add(&v->ns[i], d);
	}
	if (fast)
		bpf_spin_unlock(&ms->lock);
}

/* Add an interval of d ns in state ts (MON_TS_*) to the thread; cause
 * (MON_LW_*, or -1: not a wait) to its loop counters. */
static __always_inline void sched_add(struct mon_sched *ms, __u32 ts, int cause, __u64 d)
{
	/* masks for the verifier (ts < MON_TS_N, cause < MON_LW_TOTAL: in s) */
	ms->s[ts & 7] += d;
	ms->s[MON_TS_N + MON_LW_TOTAL] += d;
	if (cause >= 0)
		ms->s[MON_TS_N + (cause & 7)] += d;
}

/* What current (going to sleep) is blocked in: MON_TS_FILE..MON_TS_OTHER. */
static __always_inline __u32 sleep_kind(__u32 state, const bool fast)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	long nr = fast ? regs->orig_ax : BPF_CORE_READ(regs, orig_ax);
	long ax = fast ? regs->ax : BPF_CORE_READ(regs, ax);
	struct mon_fid id;
	struct mon_task *t;

	if (ax != -38 /* -ENOSYS */ || nr < 0)
		/* not in a syscall: a page fault (signal stops and the freezer aside) */
		return (state & (TASK_INTERRUPTIBLE_ | TASK_UNINTERRUPTIBLE_)) ? MON_TS_FAULT : MON_TS_OTHER;
	switch (nr) {
	case NR_read: case NR_write: case NR_pread64: case NR_pwrite64: case NR_readv:
	case NR_writev: case NR_preadv: case NR_pwritev: case NR_preadv2: case NR_pwritev2:
		t = bpf_task_storage_get(fast ? (void *)&mon_task : (void *)&mon_task_raw, task, NULL, 0);
		if (t && t->pending)
			return MON_TS_FILE;
		fd_ident((int)(fast ? regs->di : BPF_CORE_READ(regs, di)), &id, fast);
		if (id.ok)
			return MON_TS_FILE;
		return id.mode == 0140000 /* S_IFSOCK */ ? MON_TS_NET : MON_TS_OTHER;
	case 2: case 3: case 4: case 5: case 6: case 8:      /* open close stat fstat lstat lseek */
	case 21: case 26: case 40: case 74: case 75: case 76: case 77: case 78: /* access msync sendfile fsync fdatasync truncate ftruncate getdents */
	case 82: case 83: case 84: case 85: case 86: case 87: case 88: case 89: /* rename mkdir rmdir creat link unlink symlink readlink */
	case 90: case 92: case 162: case 187: case 217: case 221: /* chmod chown sync readahead getdents64 fadvise64 */
	case 257: case 258: case 262: case 263: case 264: case 265: case 266: case 267: case 268: case 269:
	case 277: case 285: case 306: case 316: case 326: case 332: case 437: case 439:
		/* *at calls, sync_file_range fallocate syncfs renameat2 copy_file_range statx openat2 faccessat2 */
		return MON_TS_FILE;
	case 41: case 42: case 43: case 44: case 45: case 46: case 47: case 48: case 49: case 50:
	case 51: case 52: case 53: case 54: case 55: case 288: case 299: case 307:
		/* socket connect accept sendto recvfrom sendmsg recvmsg shutdown bind listen ... accept4 recvmmsg sendmmsg */
		return MON_TS_NET;
	}
#endif
	return MON_TS_OTHER;
}

static __always_inline __u32 task_state_of(struct task_struct *t, const bool fast)
{
	return fast ? t->__state : BPF_CORE_READ(t, __state);
}

static __always_inline int on_sched_switch(bool preempt, struct task_struct *prev,
					   struct task_struct *next, const bool fast)
{
	struct mon_sched *ms;
	__u64 now = 0, d;
	__u32 pst;

	/* prev (current) leaves its CPU */
	if ((fast ? prev->pid : BPF_CORE_READ(prev, pid)) &&
	    !((fast ? prev->flags : BPF_CORE_READ(prev, flags)) & PF_KTHREAD_) &&
	    (ms = sched_of(prev, true, fast))) {
		now = bpf_ktime_get_ns();
		if (ms->st == MS_CPU)
			sched_add(ms, MON_TS_CPU, -1, now - ms->ts);
		pst = task_state_of(prev, fast);
		if (preempt || (pst & 0xff) == TASK_STATE_RUNNING_) {
			ms->st = MS_RUNNABLE;
		} else if (fast ? prev->exit_state : BPF_CORE_READ(prev, exit_state)) {
			ms->st = MS_NONE;
		} else {
			ms->st = MS_SLEEP;
			ms->kind = sleep_kind(pst, fast);
		}
		ms->data = 0;
		ms->ts = now;
		if (!fast)
			sched_fold(ms, prev, fast);
	}
	/* next takes it */
	if ((fast ? next->pid : BPF_CORE_READ(next, pid)) &&
	    !((fast ? next->flags : BPF_CORE_READ(next, flags)) & PF_KTHREAD_) &&
	    (ms = sched_of(next, true, fast))) {
		if (!now)
			now = bpf_ktime_get_ns();
		d = now - ms->ts;
		if (ms->st == MS_RUNNABLE)
			sched_add(ms, MON_TS_RUNNABLE, ms->data ? MON_LW_DATA : -1, d);
		else if (ms->st == MS_SLEEP)      /* its wake-up was missed */
			sched_add(ms, ms->kind, (int)ms->kind - 1, d);
		ms->st = MS_CPU;
		ms->data = 0;
		ms->ts = now;
		if (!fast)
			sched_fold(ms, next, fast);
	}
	return 0;
}

/* Is the running task (the waker) one of p's data producers? 0: no, 1: a
 * thread of p's process, 2: a thread of a descendant process. */
static __always_inline int waker_feeds(struct task_struct *p, const bool fast)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 ptgid = fast ? p->tgid : BPF_CORE_READ(p, tgid);
	__u32 cpid = cur->pid, ctgid = cur->tgid;
	struct task_struct *a;

	if (!cpid || cpid == (fast ? p->pid : BPF_CORE_READ(p, pid)) ||
	    (cur->flags & (PF_EXITING_ | PF_KTHREAD_)))
		return 0;
	if (ctgid == ptgid) {            /* a reader thread of its own process */
		struct mon_task *t;

		if (cpid == ctgid)       /* the main thread: a loop, not a reader thread */
			return 0;
		t = bpf_task_storage_get(fast ? (void *)&mon_task : (void *)&mon_task_raw, cur, NULL, 0);
		return t && t->reader;
	}
	a = cur;
	for (int i = 0; i < 4; i++) {    /* a descendant process (tp_btf: plain loads) */
		__u32 t;

		a = fast ? a->real_parent : BPF_CORE_READ(a, real_parent);
		if (!a)
			return 0;
		t = fast ? a->tgid : BPF_CORE_READ(a, tgid);
		if (t == ptgid)
			return 2;
		if (t <= 1)
			return 0;
	}
	return 0;
}

static __always_inline int on_sched_waking(struct task_struct *p, const bool fast)
{
	struct mon_sched *ms, *ws;
	__u64 now, d;
	__u32 kind;
	int by;

	if ((fast ? p->flags : BPF_CORE_READ(p, flags)) & PF_KTHREAD_)
		return 0;
	ms = sched_of(p, false, fast);
	if (!ms || ms->st != MS_SLEEP)
		return 0;
	now = bpf_ktime_get_ns();
	d = now - ms->ts;
	kind = ms->kind;
	ms->data = 0;
	/* an interrupt's wake-up is no producer's (asked last: it costs reads) */
	if (kind != MON_TS_FILE && kind != MON_TS_FAULT && (by = waker_feeds(p, fast)) && !gpuio_in_irq()) {
		sched_add(ms, kind, MON_LW_DATA, d);
		ms->data = 1;
		ms->data_wakes++;
		ws = sched_of(bpf_get_current_task_btf(), false, fast);
		if (ws)
			ws->given++;
	} else {
		sched_add(ms, kind, (int)kind - 1, d);
	}
	ms->st = MS_RUNNABLE;
	ms->ts = now;
	if (!fast)
		sched_fold(ms, p, fast);
	return 0;
}

/* sched_process_exit, every exiting thread (current): its CPU time up to
 * here, then fold (what follows, to its last switch, is not counted). */
static __always_inline void sched_exit(struct task_struct *task, const bool fast)
{
	struct mon_sched *ms = sched_of(task, false, fast);

	if (!ms)
		return;
	if (ms->st == MS_CPU)
		sched_add(ms, MON_TS_CPU, -1, bpf_ktime_get_ns() - ms->ts);
	ms->st = MS_NONE;
	sched_fold(ms, task, fast);
	if (!fast) {
		__u32 tid = BPF_CORE_READ(task, pid);

		bpf_map_delete_elem(&mon_sched_raw, &tid);
	}
}

/*
 * exec starts another program. What the thread did before it (a launcher's
 * fork held at its gate, a shell moving itself into the job's cgroup) is
 * not the new program's loop: its states go to the maps now, and its loop
 * history and wake counts start anew, so a loop's time counts from the exec
 * of its program, not from the fork that led to it (a CI run folded a
 * launcher's 0.7 s at its gate into the job's loop seconds).
 */
static __always_inline void sched_exec(struct task_struct *task, const bool fast)
{
	struct mon_sched *ms = sched_of(task, false, fast);

	if (!ms)
		return;
	sched_fold(ms, task, fast);
	if (fast)
		bpf_spin_lock(&ms->lock);
	for (__u32 i = MON_TS_N; i < MON_SCHED_N; i++)
		ms->r[i] = ms->s[i];
	ms->data_wakes = 0;
	ms->given = 0;
	if (fast)
		bpf_spin_unlock(&ms->lock);
}

SEC("?tp_btf/sched_switch")
int BPF_PROG(mon_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return on_sched_switch(preempt, prev, next, true); }
SEC("?tp_btf/sched_waking")
int BPF_PROG(mon_waking_btf, struct task_struct *p)
{ return on_sched_waking(p, true); }
SEC("?raw_tp/sched_switch")
int BPF_PROG(mon_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return on_sched_switch(preempt, prev, next, false); }
SEC("?raw_tp/sched_waking")
int BPF_PROG(mon_waking_raw, struct task_struct *p)
{ return on_sched_waking(p, false); }

#endif /* GPUIO_MON_SCHED_BPF_H */
