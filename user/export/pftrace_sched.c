// SPDX-License-Identifier: MIT
/*
 * pftrace_sched.c — the scheduler layer's events as Perfetto's own ftrace
 * sched_switch / sched_waking events (FtraceEventBundle per CPU), from which
 * Perfetto builds thread_state, thread-state tracks and wake-up arrows.
 * See pftrace.h; the packets go through pftrace.c (pftrace_priv.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/pftrace_priv.h"

/* Field numbers, from Perfetto's protos/perfetto/trace/ftrace/. */
enum {
	TP_FTRACE_EVENTS = 1,                   /* TracePacket */
	FB_CPU = 1, FB_EVENT = 2,               /* FtraceEventBundle (timestamps: BOOTTIME) */
	FE_TIMESTAMP = 1, FE_PID = 2, FE_SCHED_SWITCH = 4, FE_SCHED_WAKING = 20,
	FE_SCHED_WAKEUP_NEW = 114,              /* FtraceEvent */
	SS_PREV_COMM = 1, SS_PREV_PID = 2, SS_PREV_PRIO = 3, SS_PREV_STATE = 4,
	SS_NEXT_COMM = 5, SS_NEXT_PID = 6, SS_NEXT_PRIO = 7,    /* SchedSwitchFtraceEvent */
	SW_COMM = 1, SW_PID = 2, SW_PRIO = 3, SW_SUCCESS = 4, SW_TARGET_CPU = 5, /* SchedWaking */
};

#define BUNDLE_EVENTS 1024
#define CPU_MAX       4096

/* Per CPU: the bundle being filled. */
struct ftcpu {
	struct pb_buf b;        /* FtraceEventBundle body: its events */
	uint32_t n;
};

struct pftrace_ftrace {
	struct ftcpu *c;
	size_t n;
};

void pftrace_ftrace__free(struct pftrace_ftrace *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		pb_buf__free(&f->c[i].b);
	free(f->c);
	free(f);
}

static void flush_cpu(struct pftrace *p, struct ftcpu *c, size_t cpu)
{
	struct pb_buf bundle;

	if (!c->n)
		return;
	pb_buf__init(&bundle);
	pb_buf__varint(&bundle, FB_CPU, cpu);
	if (pb_buf__reserve(&bundle, c->b.len)) {
		memcpy(bundle.p + bundle.len, c->b.p, c->b.len);
		bundle.len += c->b.len;
	}
	if (pb_buf__error(&c->b))
		pftrace__fail(p, pb_buf__error(&c->b));
	pftrace__raw_packet(p, TP_FTRACE_EVENTS, &bundle);
	pb_buf__free(&bundle);
	pb_buf__reset(&c->b);
	c->n = 0;
}

void pftrace__sched_flush(struct pftrace *p)
{
	struct pftrace_ftrace *f = *pftrace__ftrace(p);

	for (size_t i = 0; f && i < f->n; i++)
		flush_cpu(p, &f->c[i], i);
}

static struct ftcpu *cpu_of(struct pftrace *p, uint32_t cpu)
{
	struct pftrace_ftrace **fp = pftrace__ftrace(p), *f = *fp;

	if (cpu >= CPU_MAX)
		cpu = CPU_MAX - 1;
	if (!f && !(f = *fp = calloc(1, sizeof(*f)))) {
		pftrace__fail(p, -ENOMEM);
		return NULL;
	}
	if (cpu >= f->n) {
		struct ftcpu *nc = realloc(f->c, (cpu + 1) * sizeof(*nc));

		if (!nc) {
			pftrace__fail(p, -ENOMEM);
			return NULL;
		}
		for (size_t i = f->n; i <= cpu; i++) {
			memset(&nc[i], 0, sizeof(nc[i]));
			pb_buf__init(&nc[i].b);
		}
		f->c = nc;
		f->n = cpu + 1;
	}
	return &f->c[cpu];
}

/* A new FtraceEvent open in cpu's bundle: its timestamp and running task. */
static struct pb_buf *event_begin(struct pftrace *p, struct ftcpu *c, uint64_t mono,
				  uint32_t cur_tid)
{
	pb_buf__begin(&c->b, FB_EVENT);
	pb_buf__varint(&c->b, FE_TIMESTAMP, (uint64_t)((int64_t)mono + pftrace__boot_minus_mono(p)));
	pb_buf__varint(&c->b, FE_PID, cur_tid);
	return &c->b;
}

static void event_end(struct pftrace *p, struct ftcpu *c, uint32_t cpu)
{
	pb_buf__end(&c->b);
	if (++c->n >= BUNDLE_EVENTS)
		flush_cpu(p, c, cpu < CPU_MAX ? cpu : CPU_MAX - 1);
}

static void put_comm(struct pftrace *p, struct pb_buf *b, uint32_t field, const char *comm)
{
	size_t len;
	const char *v = pftrace__utf8(p, comm, strnlen(comm, 15), &len);

	pb_buf__bytes(b, field, v, len);
}

void pftrace__sched_switch(struct pftrace *p, uint32_t cpu, uint64_t ts, const char *prev_comm,
			   uint32_t prev_tid, int prev_prio, int64_t prev_state,
			   const char *next_comm, uint32_t next_tid, int next_prio)
{
	struct ftcpu *c = cpu_of(p, cpu);
	struct pb_buf *b;

	if (!c)
		return;
	b = event_begin(p, c, ts, prev_tid);
	pb_buf__begin(b, FE_SCHED_SWITCH);
	put_comm(p, b, SS_PREV_COMM, prev_comm);
	pb_buf__varint(b, SS_PREV_PID, prev_tid);
	pb_buf__varint(b, SS_PREV_PRIO, (uint64_t)(int64_t)prev_prio);
	pb_buf__varint(b, SS_PREV_STATE, (uint64_t)prev_state);
	put_comm(p, b, SS_NEXT_COMM, next_comm);
	pb_buf__varint(b, SS_NEXT_PID, next_tid);
	pb_buf__varint(b, SS_NEXT_PRIO, (uint64_t)(int64_t)next_prio);
	pb_buf__end(b);
	event_end(p, c, cpu);
}

void pftrace__sched_waking(struct pftrace *p, uint32_t cpu, uint64_t ts, uint32_t waker_tid,
			   const char *comm, uint32_t tid, int prio, uint32_t target_cpu,
			   bool new_task)
{
	struct ftcpu *c = cpu_of(p, cpu);
	struct pb_buf *b;

	if (!c)
		return;
	b = event_begin(p, c, ts, waker_tid);
	pb_buf__begin(b, new_task ? FE_SCHED_WAKEUP_NEW : FE_SCHED_WAKING);
	put_comm(p, b, SW_COMM, comm);
	pb_buf__varint(b, SW_PID, tid);
	pb_buf__varint(b, SW_PRIO, (uint64_t)(int64_t)prio);
	pb_buf__varint(b, SW_SUCCESS, 1);
	pb_buf__varint(b, SW_TARGET_CPU, target_cpu);
	pb_buf__end(b);
	event_end(p, c, cpu);
}

/*
 * Only switches with a traced side are recorded, so the untraced side
 * (another process, or idle) is written as the idle task: then every CPU's
 * switches chain (each prev is the last next on that CPU), which Perfetto
 * checks, and its CPU tracks show our threads and nothing else.
 */
void pftrace__sched(struct pftrace *p, const struct tl_sched *o)
{
	uint32_t prev = o->prev_traced ? o->tid : 0;

	if (o->kind != GPUIO_SCHED_SWITCH) {
		/* a new task's first wake-up too: Perfetto starts no Runnable state
		 * at sched_wakeup_new, which would hide its first wait for a CPU */
		pftrace__sched_waking(p, o->cpu, o->ts, o->otid, o->comm, o->tid, o->prio,
				      o->target_cpu, false);
		return;
	}
	/* the switch-in the trace missed (model/sched_tab.h, sched_chain):
	 * written where the model assumes it, so the CPU's chain stays whole */
	if (o->bridge_at)
		pftrace__sched_switch(p, o->cpu, o->bridge_at, o->bridge_comm, o->bridge_from, 120, 0,
				      o->prev_traced ? o->comm : "swapper", prev, o->prio);
	/* next left its other CPU unseen: written there, so that chain stays whole too */
	if (o->left_at)
		pftrace__sched_switch(p, o->left_cpu, o->left_at, o->ocomm, o->otid, 120, 0,
				      "swapper", 0, 120);
	pftrace__sched_switch(p, o->cpu, o->ts, o->prev_traced ? o->comm : "swapper", prev,
			      o->prio, o->prev_traced ? o->prev_state : 0,
			      o->next_traced ? o->ocomm : "swapper", o->next_traced ? o->otid : 0, 120);
}
