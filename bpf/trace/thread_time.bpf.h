/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * thread_time.bpf.h — each traced thread's time by state (on a CPU,
 * runnable, asleep, blocked), summed in a map at every switch and wake-up
 * that sched.bpf.h sees, before it asks the ring for a record: when the ring
 * is full, or sheds scheduler records (common.bpf.h rb_shed), the records go
 * but the sums stay exact. An interval is added when it ends; the value is
 * the capture's own record (struct gpuio_thread_time), written to the ring
 * at the thread's last switch (and its entry freed), else by userspace at the
 * end with the open interval closed there (user/trace/thread_time.c).
 *
 * A switch-in the scheduler does not report (this kernel leaves out some,
 * by tracepoint and ftrace alike, e.g. after a thread of its init) would
 * count the thread's next run as runnable: its switch-out finds it not on a
 * CPU, and the kernel's own on-CPU total (se.sum_exec_runtime, exact to the
 * switch) since its last switch-out splits the interval.
 *
 * Keyed by (tid, the thread's start time): a reused tid is a new entry. A
 * waker on another CPU and the thread's own switch may touch one entry at
 * once (raw_tp allows no lock); that race moves a few microseconds between
 * two states, never the sum.
 */
#ifndef GPUIO_THREAD_TIME_BPF_H
#define GPUIO_THREAD_TIME_BPF_H
#include "trace/common.bpf.h"

#define TTIME_ENTRIES 32768     /* live threads: an exited one's entry goes with its record */

struct ttime_key {
	__u32 tid;
	__u32 pad;
	__u64 start_ns;         /* task->start_time */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TTIME_ENTRIES);
	__type(key, struct ttime_key);
	__type(value, struct gpuio_thread_time);
} thread_time SEC(".maps");

/*
 * A new entry's first value is made here, not on the stack: on 6.1 the
 * switch hook, its stack walk and the walk's step together passed the 512
 * bytes that kernel allows a chain of calls (counted in 32s), and the
 * scheduler layer did not load there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gpuio_thread_time);
} ttime_new SEC(".maps");

/* The thread's entry; born: created (or restarted) at its first wake-up. */
static __always_inline struct gpuio_thread_time *ttime_of(struct task_struct *t, __u32 tgid,
							  __u32 tid, __u64 now, bool born,
							  const bool btf)
{
	struct ttime_key k = { .tid = tid, .start_ns = TASK_RD(btf, t, start_time) };
	struct gpuio_thread_time *v = bpf_map_lookup_elem(&thread_time, &k), *z;
	__u32 zero = 0;

	if (v)
		return v;
	z = bpf_map_lookup_elem(&ttime_new, &zero);
	if (!z)
		return NULL;
	__builtin_memset(z, 0, sizeof(*z));
	z->hdr.type = GPUIO_REC_THREAD_TIME;
	z->hdr.size = sizeof(*z);
	z->hdr.pid = tgid;
	z->hdr.tid = tid;
	z->from = now;
	z->since = now;
	z->state = GPUIO_TS_NONE;
	z->flags = born ? GPUIO_TT_BORN : 0;
	z->exec_ns = TASK_RD(btf, t, se.sum_exec_runtime);
	bpf_map_update_elem(&thread_time, &k, z, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&thread_time, &k);
	if (!v)
		stat_inc(GPUIO_STAT_MAP_FULL_TTIME);
	return v;
}

/* The state the thread was in ends now; st begins. */
static __always_inline void ttime_to(struct gpuio_thread_time *v, __u8 st, __u64 now)
{
	__u8 was = v->state;

	if (was < GPUIO_TS_N && now > v->since)
		v->ns[was & (GPUIO_TS_N - 1)] += now - v->since;
	v->state = st;
	v->since = now;
}

/* prev leaves its CPU with pst (sched.bpf.h task_state); an exiting thread's
 * sums go to the ring, and its entry with them when the ring took them. */
static __always_inline void ttime_switch_out(struct task_struct *prev, __u32 tgid, __u32 tid,
					     bool preempt, __u32 pst, __u64 now, const bool btf)
{
	struct ttime_key k = { .tid = tid, .start_ns = TASK_RD(btf, prev, start_time) };
	struct gpuio_thread_time *v = ttime_of(prev, tgid, tid, now, false, btf);
	__u64 exec = TASK_RD(btf, prev, se.sum_exec_runtime), ran, span;
	__u8 st;

	if (!v || v->state == GPUIO_TS_GONE)
		return;
	/* not on a CPU by our account: its switch-in went unreported; the
	 * kernel's on-CPU total says how much of the interval it ran */
	ran = exec > v->exec_ns ? exec - v->exec_ns : 0;
	v->exec_ns = exec;
	if (v->state != GPUIO_TS_CPU && v->state < GPUIO_TS_N) {
		span = now > v->since ? now - v->since : 0;
		if (ran > span)
			ran = span;
		v->ns[GPUIO_TS_CPU] += ran;
		v->since += ran;        /* the rest stays the state it was in */
	}
	if (pst >> 16) {                /* exit_state: its last switch */
		ttime_to(v, GPUIO_TS_GONE, now);
		v->flags |= GPUIO_TT_EXITED;
		v->hdr.ts = now;
		v->hdr.cpu = bpf_get_smp_processor_id();
		if (!bpf_ringbuf_output(&events, v, sizeof(*v), rb_wakeup_flag_sz(sizeof(*v))))
			bpf_map_delete_elem(&thread_time, &k);
		return;
	}
	if (preempt || !(pst & 0xff))
		st = GPUIO_TS_RUNNABLE;
	else if (pst & 2)               /* TASK_UNINTERRUPTIBLE */
		st = GPUIO_TS_BLOCKED;
	else
		st = GPUIO_TS_SLEEP;
	ttime_to(v, st, now);
}

static __always_inline void ttime_switch_in(struct task_struct *next, __u32 tgid, __u32 tid,
					    __u64 now, const bool btf)
{
	struct gpuio_thread_time *v = ttime_of(next, tgid, tid, now, false, btf);

	if (v && v->state != GPUIO_TS_GONE)
		ttime_to(v, GPUIO_TS_CPU, now);
}

/* A wake-up ends a sleep; a new thread's first one begins its life. One that
 * lands on a thread still on its CPU (it woke before it slept) changes nothing. */
static __always_inline void ttime_wake(struct task_struct *p, __u32 tgid, __u32 tid, bool born,
				       __u64 now, const bool btf)
{
	struct gpuio_thread_time *v = ttime_of(p, tgid, tid, now, born, btf);

	if (!v)
		return;
	if (v->state == GPUIO_TS_SLEEP || v->state == GPUIO_TS_BLOCKED || v->state == GPUIO_TS_NONE)
		ttime_to(v, GPUIO_TS_RUNNABLE, now);
}

#endif
