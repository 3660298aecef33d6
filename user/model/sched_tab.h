/* SPDX-License-Identifier: MIT */
/*
 * sched_tab.h — context switches and wake-ups of traced threads (records
 * GPUIO_REC_SCHED), kept compactly, sorted by time, and turned into thread
 * states: the intervals a thread spent Running, Runnable (woken, or
 * preempted, waiting for a CPU), Sleeping, in Uninterruptible sleep (D: most
 * often I/O), with who woke it. Shared by the exporters (JSON state tracks;
 * the .pftrace gets the raw events as ftrace sched events and Perfetto
 * derives the same states) and the report (where a thread's time went).
 *
 * Memory: 32 bytes per switch or wake-up of a traced thread.
 */
#ifndef GPUIO_MODEL_SCHED_TAB_H
#define GPUIO_MODEL_SCHED_TAB_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"
#include "lib/kmap.h"

enum tstate {
	TS_RUNNING,
	TS_RUNNABLE,            /* woken, waiting for a CPU */
	TS_PREEMPTED,           /* preempted, waiting for a CPU */
	TS_SLEEPING,            /* S: interruptible (futex, poll, pipe, timer...) */
	TS_BLOCKED,             /* D: uninterruptible (disk I/O, page faults, locks) */
	TS_N
};
extern const char *const tstate_names[TS_N];

/* A (pid, tid) the table names by a number (sched_tab.keys[]). */
struct sched_key {
	uint32_t pid, tid;
};

struct sched_ent {
	uint64_t ts;
	uint32_t th;            /* keys[]: switch: prev; wake: the woken task */
	uint32_t oth;           /* keys[]: switch: next; wake: the waker */
	union {
		uint32_t state;     /* switch: prev's raw state (GPUIO ABI) */
		uint32_t waker_seq; /* wake: the waker's VFS call in flight */
	};
	uint32_t comm;          /* names[] + 1 of the untraced side / waker, 0 none */
	uint16_t cpu;           /* the event's CPU */
	uint16_t target_cpu;
	int16_t prio;
	uint8_t kind, flags;
};

/*
 * A break in a CPU's chain of switches (sched_chain), kept beside the entry
 * it belongs to: a switch whose prev was not seen taking the CPU, and the
 * switch-in the trace missed is assumed at bridge_at, from bridge_from (pid,
 * tid; 0: an untraced task) — 0: none; a switch-in of next while the chain
 * still has next on another CPU: it left left_cpu unseen, assumed just
 * before it came on here (left_at, 0: none). Rare: a side table, not a field
 * of every entry (32 bytes each).
 */
struct sched_gap {
	uint64_t bridge_at;
	uint32_t bridge_from_pid, bridge_from;
	uint64_t left_at;
	uint16_t left_cpu;
};

/* One closed interval of a thread's state. */
struct tstate_iv {
	uint64_t ts, end;
	uint32_t pid, tid;
	uint8_t state;          /* enum tstate */
	uint16_t cpu;           /* Running: the CPU */
	uint32_t raw_state;     /* Sleeping/Blocked: the kernel state it left the CPU in */
	/* Sleeping/Blocked ended by a wake-up, and the Runnable after it: who woke it
	 * (waker_tid 0: an interrupt or the idle task; waker_traced: a traced thread) */
	bool woken;
	bool waker_traced;
	bool assumed;           /* Running that began at a switch-in the trace missed (bridge_at) */
	uint32_t waker_pid, waker_tid, waker_seq;
};

struct sched_gap_at {
	size_t i;               /* the entry's index in the sorted table */
	struct sched_gap g;
};

struct sched_tab {
	struct sched_ent *ev;
	size_t n, cap;
	struct sched_key *keys;     /* the threads entries name (few: one per thread) */
	size_t nkeys, ckeys;
	struct kmap key_map;        /* (pid, tid) -> keys[] */
	struct sched_gap_at *gap;   /* by index; set by sched_tab__sort() */
	size_t ngap, cgap;
	char (*names)[16];
	size_t nnames, cnames;
	struct kmap name_map;   /* (tid, hash of comm) -> names[] + 1 */
	bool sorted;
	uint64_t gaps;          /* switches whose thread was not seen taking the CPU */
};

/*
 * Every CPU's recorded switches chain: the traced thread (or "not ours", 0)
 * one puts on the CPU is the one the next takes off. A break is a switch
 * the kernel made that the trace did not see: the thread leaving was put on
 * the CPU unseen. It is assumed to have come on just after the later of the
 * CPU's last recorded switch and its own last event (it was runnable, then
 * ran: the other task on the CPU meanwhile ran briefly, as observed), so
 * the exporters and the report show the same states and every CPU's chain
 * stays whole. The other break: a thread comes on a CPU while the chain has
 * it on another; it left that one unseen, assumed 1 ns before (left_at), and
 * that CPU's chain goes on from "not ours". Feed switches and wake-ups in
 * time order.
 */
#define SCHED_CHAIN_CPUS 1024
struct sched_chain {
	struct kmap last;       /* (pid, tid) -> its last event ts */
	struct kmap on;         /* (pid, tid) -> 1 + the CPU it was put on, 0: off */
	uint32_t cur_pid[SCHED_CHAIN_CPUS], cur[SCHED_CHAIN_CPUS];
	uint64_t cur_ts[SCHED_CHAIN_CPUS];
	bool known[SCHED_CHAIN_CPUS];
	uint64_t gaps;
};
/* Fills g with e's break (bridge, left) and returns true, or zeroes g and returns false. */
bool sched_chain__step(struct sched_chain *c, const struct sched_tab *t, const struct sched_ent *e,
		       struct sched_gap *g);
void sched_chain__free(struct sched_chain *c);

int sched_tab__add(struct sched_tab *t, const struct gpuio_sched_event *e);
/* One record as an entry, its threads named in t, not added to it (no comm
 * index): for users that keep no table (the stream; t only names threads). */
int sched_ent__from(struct sched_tab *t, const struct gpuio_sched_event *e, struct sched_ent *s);

/* The threads of an entry: switch prev/next, wake woken/waker. */
static inline uint32_t sched_pid(const struct sched_tab *t, const struct sched_ent *e)
{
	return t->keys[e->th].pid;
}
static inline uint32_t sched_tid(const struct sched_tab *t, const struct sched_ent *e)
{
	return t->keys[e->th].tid;
}
static inline uint32_t sched_opid(const struct sched_tab *t, const struct sched_ent *e)
{
	return t->keys[e->oth].pid;
}
static inline uint32_t sched_otid(const struct sched_tab *t, const struct sched_ent *e)
{
	return t->keys[e->oth].tid;
}
/* Sort by time (stable: capture order breaks ties), then find the chain's breaks. */
int sched_tab__sort(struct sched_tab *t);
/* The break of entry i (sorted table), NULL when none. */
const struct sched_gap *sched_tab__gap(const struct sched_tab *t, size_t i);
const char *sched_tab__comm(const struct sched_tab *t, uint32_t comm);
void sched_tab__free(struct sched_tab *t);

/*
 * Ftrace's prev_state encoding of a switch (what `sched_switch` prints and
 * Perfetto decodes, kernels >= 4.14): 0 R, 1 S, 2 D, 4 T, 8 t, 16 X, 32 Z,
 * 64 P, 128 I, 256 R+ (preempted).
 */
int64_t sched_ftrace_prev_state(const struct sched_ent *e);

/* The state a switch leaves its prev in (TS_N: the thread is gone). */
enum tstate sched_state_after_switch(const struct sched_ent *e);

/*
 * Walk the sorted table once, calling fn for every closed interval of every
 * traced thread, in the order they close; intervals still open at end_ts
 * are closed there. fn returns non-zero to stop (returned).
 */
typedef int (*tstate_fn)(void *ctx, const struct tstate_iv *iv);
int sched_tab__states(const struct sched_tab *t, uint64_t end_ts, tstate_fn fn, void *ctx);

#endif /* GPUIO_MODEL_SCHED_TAB_H */
