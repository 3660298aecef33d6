// SPDX-License-Identifier: MIT
/* sched_tab.c — switches and wake-ups into thread states. See sched_tab.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/sort.h"
#include "model/sched_tab.h"

/* Perfetto's names for the same states (its thread_state table and UI) */
const char *const tstate_names[TS_N] = {
	[TS_RUNNING] = "Running",
	[TS_RUNNABLE] = "Runnable",
	[TS_PREEMPTED] = "Runnable (Preempted)",
	[TS_SLEEPING] = "Sleeping",
	[TS_BLOCKED] = "Uninterruptible Sleep",
};

/* kernel task states (include/linux/sched.h), stable since 4.14 */
#define K_INTERRUPTIBLE   0x0001
#define K_UNINTERRUPTIBLE 0x0002
#define K_REPORT          0x007f
#define K_DEAD            0x0080
#define K_NOLOAD          0x0400
#define K_IDLE            (K_UNINTERRUPTIBLE | K_NOLOAD)
#define K_EXIT_DEAD       0x0010
#define K_EXIT_ZOMBIE     0x0020

static uint64_t comm_hash(const char *c)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 16 && c[i]; i++)
		h = (h ^ (unsigned char)c[i]) * 1099511628211ull;
	return h;
}

static int name_of(struct sched_tab *t, uint32_t tid, const char *comm, uint32_t *out)
{
	uint64_t *v;
	int rc;

	*out = 0;
	if (!comm[0])
		return 0;
	rc = kmap__upsert(&t->name_map, tid, comm_hash(comm), &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&t->names, &t->cnames, t->nnames + 1, sizeof(*t->names)))
			return -ENOMEM;
		memset(t->names[t->nnames], 0, 16);
		memcpy(t->names[t->nnames], comm, strnlen(comm, 15));
		*v = ++t->nnames;
	}
	*out = (uint32_t)*v;
	return 0;
}

/* The number of (pid, tid) in t, added when new; -ENOMEM. */
static int64_t key_of(struct sched_tab *t, uint32_t pid, uint32_t tid)
{
	uint64_t *v;
	int rc = kmap__upsert(&t->key_map, pid, tid, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (t->nkeys >= UINT32_MAX ||
		    array_grow((void **)&t->keys, &t->ckeys, t->nkeys + 1, sizeof(*t->keys)))
			return -ENOMEM;
		t->keys[t->nkeys].pid = pid;
		t->keys[t->nkeys].tid = tid;
		*v = t->nkeys++;
	}
	return (int64_t)*v;
}

int sched_ent__from(struct sched_tab *t, const struct gpuio_sched_event *e, struct sched_ent *s)
{
	int64_t th = key_of(t, e->hdr.pid, e->hdr.tid), oth = key_of(t, e->other_pid, e->other_tid);

	if (th < 0 || oth < 0)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->ts = e->hdr.ts;
	s->th = (uint32_t)th;
	s->oth = (uint32_t)oth;
	if (e->kind == GPUIO_SCHED_SWITCH)
		s->state = e->prev_state;
	else
		s->waker_seq = e->waker_seq;
	s->cpu = (uint16_t)e->hdr.cpu;
	s->target_cpu = (uint16_t)e->target_cpu;
	s->prio = (int16_t)e->prio;
	s->kind = (uint8_t)e->kind;
	s->flags = (uint8_t)e->flags;
	return 0;
}

int sched_tab__add(struct sched_tab *t, const struct gpuio_sched_event *e)
{
	struct sched_ent *s;
	int err;

	if (array_grow((void **)&t->ev, &t->cap, t->n + 1, sizeof(*t->ev)))
		return -ENOMEM;
	s = &t->ev[t->n];
	if ((err = sched_ent__from(t, e, s)))
		return err;
	err = name_of(t, e->kind == GPUIO_SCHED_SWITCH && !(e->flags & GPUIO_SF_NEXT_TRACED) ?
		      e->other_tid : e->kind == GPUIO_SCHED_SWITCH ? e->hdr.tid : e->other_tid,
		      e->comm, &s->comm);
	if (err)
		return err;
	t->n++;
	t->sorted = false;
	return 0;
}

/*
 * By time, a switch before a wake-up of the same nanosecond; lib/sort.h
 * keeps capture order among the rest. Two CPUs' events do share a
 * nanosecond (a wake-up on one as the woken thread leaves the other, a few
 * times a second under a busy DataLoader), and Perfetto's importer takes
 * the switch first, whichever CPU each is on (t_export_states: both ways
 * round): in capture order the JSON's states would keep the thread asleep
 * until it runs where the protobuf's have it runnable at once.
 */
static int by_ts_kind(const struct sched_ent *x, const struct sched_ent *y)
{
	bool xs = x->kind == GPUIO_SCHED_SWITCH, ys = y->kind == GPUIO_SCHED_SWITCH;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return xs == ys ? 0 : xs ? -1 : 1;
}

static int by_ts(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	return by_ts_kind(a, b);
}

/*
 * A CPU's recorded switches chain: the traced thread (or "not ours", 0)
 * that one puts on the CPU is the one the next takes off. A break means a
 * switch the kernel made was not recorded.
 */
/* (pid, tid)'s value in m set to v; the old value returned (0: none or no memory) */
static uint64_t kmap_swap(struct kmap *m, uint32_t pid, uint32_t tid, uint64_t v)
{
	uint64_t *slot, old;

	if (kmap__upsert(m, pid, tid, &slot) < 0)
		return 0;
	old = *slot;
	*slot = v;
	return old;
}

static uint64_t last_of(struct sched_chain *c, uint32_t pid, uint32_t tid, uint64_t ts)
{
	return kmap_swap(&c->last, pid, tid, ts);
}

/* Where the chain has (pid, tid) now: 1 + its CPU, 0 off; sets it to `to`. */
static uint64_t on_cpu(struct sched_chain *c, uint32_t pid, uint32_t tid, uint64_t to)
{
	return kmap_swap(&c->on, pid, tid, to);
}

/* next comes on CPU k: if the chain still has it on another CPU, it left that one unseen */
static void left_unseen(struct sched_chain *c, const struct sched_ent *e, uint32_t opid,
			uint32_t otid, uint32_t k, struct sched_gap *g)
{
	uint64_t was = on_cpu(c, opid, otid, k + 1), at;
	uint32_t j = (uint32_t)(was - 1);

	if (!was || j == k || j >= SCHED_CHAIN_CPUS || !c->known[j] || c->cur[j] != otid ||
	    c->cur_pid[j] != opid)
		return;
	c->gaps++;
	at = e->ts - 1 > c->cur_ts[j] ? e->ts - 1 : e->ts;
	g->left_at = at;
	g->left_cpu = (uint16_t)j;
	c->cur[j] = c->cur_pid[j] = 0;
	c->cur_ts[j] = at;
}

bool sched_chain__step(struct sched_chain *c, const struct sched_tab *t, const struct sched_ent *e,
		       struct sched_gap *g)
{
	uint32_t k = e->cpu % SCHED_CHAIN_CPUS;
	bool pt = e->flags & GPUIO_SF_PREV_TRACED;
	uint32_t pid = sched_pid(t, e), tid = sched_tid(t, e);
	uint32_t opid = sched_opid(t, e), otid = sched_otid(t, e);
	uint32_t prev = pt ? tid : 0;
	uint64_t at, plast = 0;

	memset(g, 0, sizeof(*g));
	if (e->kind != GPUIO_SCHED_SWITCH) {
		last_of(c, pid, tid, e->ts);
		return false;
	}
	if (pt) {
		plast = last_of(c, pid, tid, e->ts);
		on_cpu(c, pid, tid, 0);
	}
	if (c->known[k] && c->cur[k] != prev) {
		c->gaps++;
		at = (c->cur_ts[k] > plast ? c->cur_ts[k] : plast) + 1;
		g->bridge_at = at < e->ts ? at : e->ts;
		g->bridge_from = c->cur[k];
		g->bridge_from_pid = c->cur_pid[k];
		if (g->bridge_from)
			on_cpu(c, g->bridge_from_pid, g->bridge_from, 0);
	}
	c->cur[k] = (e->flags & GPUIO_SF_NEXT_TRACED) ? otid : 0;
	c->cur_pid[k] = (e->flags & GPUIO_SF_NEXT_TRACED) ? opid : 0;
	c->cur_ts[k] = e->ts;
	c->known[k] = true;
	if (e->flags & GPUIO_SF_NEXT_TRACED) {
		last_of(c, opid, otid, e->ts);
		left_unseen(c, e, opid, otid, k, g);
	}
	return g->bridge_at || g->left_at;
}

void sched_chain__free(struct sched_chain *c)
{
	kmap__free(&c->last);
	kmap__free(&c->on);
}

/* The chain's breaks, into the side table (in index order). */
static int find_gaps(struct sched_tab *t)
{
	struct sched_chain *c = calloc(1, sizeof(*c));
	int rc = 0;

	t->gaps = 0;
	t->ngap = 0;
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < t->n && !rc; i++) {
		struct sched_gap g;

		if (!sched_chain__step(c, t, &t->ev[i], &g))
			continue;
		if (array_grow((void **)&t->gap, &t->cgap, t->ngap + 1, sizeof(*t->gap))) {
			rc = -ENOMEM;
			break;
		}
		t->gap[t->ngap].i = i;
		t->gap[t->ngap++].g = g;
	}
	t->gaps = c->gaps;
	sched_chain__free(c);
	free(c);
	return rc;
}

int sched_tab__sort(struct sched_tab *t)
{
	/* capture order is nearly time order (one ring buffer): check first */
	bool in_order = true;
	int rc;

	for (size_t i = 1; i < t->n && in_order; i++)
		in_order = by_ts_kind(&t->ev[i - 1], &t->ev[i]) <= 0;
	if (!in_order && (rc = sort_stable(t->ev, t->n, sizeof(*t->ev), by_ts, NULL)))
		return rc;
	t->sorted = true;
	return find_gaps(t);
}

const struct sched_gap *sched_tab__gap(const struct sched_tab *t, size_t i)
{
	size_t lo = 0, hi = t->ngap;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->gap[mid].i < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->ngap && t->gap[lo].i == i ? &t->gap[lo].g : NULL;
}

const char *sched_tab__comm(const struct sched_tab *t, uint32_t comm)
{
	return comm && comm <= t->nnames ? t->names[comm - 1] : "";
}

void sched_tab__free(struct sched_tab *t)
{
	free(t->ev);
	free(t->gap);
	free(t->keys);
	kmap__free(&t->key_map);
	free(t->names);
	kmap__free(&t->name_map);
	memset(t, 0, sizeof(*t));
}

int64_t sched_ftrace_prev_state(const struct sched_ent *e)
{
	uint32_t st = e->state & 0xffff, ex = e->state >> 16, s;
	int idx = 0;

	if (e->flags & GPUIO_SF_PREEMPT)
		return 0x100;
	if ((st & K_IDLE) == K_IDLE)
		return 0x80;
	s = (st | ex) & K_REPORT;
	while (s) {             /* fls */
		idx++;
		s >>= 1;
	}
	return idx ? 1 << (idx - 1) : 0;
}

enum tstate sched_state_after_switch(const struct sched_ent *e)
{
	uint32_t st = e->state & 0xffff, ex = e->state >> 16;

	if (e->flags & GPUIO_SF_PREEMPT)
		return TS_PREEMPTED;
	if ((st & K_DEAD) || (ex & (K_EXIT_DEAD | K_EXIT_ZOMBIE)))
		return TS_N;
	if (!(st & K_REPORT))
		return TS_RUNNABLE;             /* yielded: still on the run queue */
	if ((st & K_IDLE) == K_IDLE || (st & K_INTERRUPTIBLE) || !(st & K_UNINTERRUPTIBLE))
		return TS_SLEEPING;             /* S, idle kthreads, stopped, parked */
	return TS_BLOCKED;
}

/* ---- the state machine ---- */

#define ST_NONE 0xff

struct tcur {
	uint32_t pid, tid;
	uint64_t since, run_start;
	uint8_t state;                  /* enum tstate, ST_NONE: unknown or gone */
	uint16_t cpu;
	uint32_t raw;
	struct tstate_iv wake;          /* woken/waker_* of the current interval */
	struct tstate_iv pending;       /* a wake-up seen while still on a CPU */
	bool has_pending;
	bool assumed;                   /* the current Running began at a bridge */
};

struct walk {
	const struct sched_tab *t;
	struct kmap map;
	struct tcur *th;
	size_t n, cap;
	tstate_fn fn;
	void *ctx;
};

static struct tcur *cur_get(struct walk *w, uint32_t pid, uint32_t tid)
{
	uint64_t *v;
	int rc = kmap__upsert(&w->map, pid, tid, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&w->th, &w->cap, w->n + 1, sizeof(*w->th)))
			return NULL;
		memset(&w->th[w->n], 0, sizeof(w->th[0]));
		w->th[w->n].pid = pid;
		w->th[w->n].tid = tid;
		w->th[w->n].state = ST_NONE;
		*v = w->n++;
	}
	return &w->th[*v];
}

/* Close the thread's current interval at ts (with how it ended, if woken). */
static int close_iv(struct walk *w, struct tcur *c, uint64_t ts, const struct tstate_iv *woke)
{
	struct tstate_iv iv;

	if (c->state == ST_NONE || ts <= c->since)
		return 0;
	memset(&iv, 0, sizeof(iv));
	iv.ts = c->since;
	iv.end = ts;
	iv.pid = c->pid;
	iv.tid = c->tid;
	iv.state = c->state;
	iv.cpu = c->cpu;
	iv.raw_state = c->raw;
	iv.assumed = c->assumed;
	if (woke) {
		iv.woken = true;
		iv.waker_traced = woke->waker_traced;
		iv.waker_pid = woke->waker_pid;
		iv.waker_tid = woke->waker_tid;
		iv.waker_seq = woke->waker_seq;
	} else if (c->wake.woken) {
		iv.woken = true;
		iv.waker_traced = c->wake.waker_traced;
		iv.waker_pid = c->wake.waker_pid;
		iv.waker_tid = c->wake.waker_tid;
		iv.waker_seq = c->wake.waker_seq;
	}
	return w->fn(w->ctx, &iv);
}

static void set_state(struct tcur *c, uint8_t state, uint64_t ts, const struct tstate_iv *woke)
{
	c->state = state;
	c->since = ts;
	c->assumed = false;
	memset(&c->wake, 0, sizeof(c->wake));
	if (woke)
		c->wake = *woke;
}

static int on_switch(struct walk *w, const struct sched_ent *e, const struct sched_gap *g)
{
	struct tcur *c;
	int rc;

	if (g && g->bridge_at) {
		/* the switch-in the trace missed (sched_chain): from leaves, prev comes on */
		if (g->bridge_from) {
			c = cur_get(w, g->bridge_from_pid, g->bridge_from);
			if (!c)
				return -ENOMEM;
			/* only if it is still on this CPU: a thread seen coming on another
			 * CPU since left this one unseen, and its state is already newer */
			if (c->state == TS_RUNNING && c->cpu == e->cpu && c->since < g->bridge_at) {
				if ((rc = close_iv(w, c, g->bridge_at, NULL)))
					return rc;
				set_state(c, TS_RUNNABLE, g->bridge_at, NULL);
			}
		}
		if (e->flags & GPUIO_SF_PREV_TRACED) {
			c = cur_get(w, sched_pid(w->t, e), sched_tid(w->t, e));
			if (!c)
				return -ENOMEM;
			if (c->state != ST_NONE && c->since >= g->bridge_at)
				goto switched;  /* a state never starts before the one it ends */
			if ((rc = close_iv(w, c, g->bridge_at, NULL)))
				return rc;
			set_state(c, TS_RUNNING, g->bridge_at, NULL);
			c->cpu = e->cpu;
			c->run_start = g->bridge_at;
			c->assumed = true;
		}
	}
switched:
	if (e->flags & GPUIO_SF_PREV_TRACED) {
		enum tstate s = sched_state_after_switch(e);

		c = cur_get(w, sched_pid(w->t, e), sched_tid(w->t, e));
		if (!c)
			return -ENOMEM;
		if ((rc = close_iv(w, c, e->ts, NULL)))
			return rc;
		if (s == TS_N) {
			c->state = ST_NONE;
		} else if ((s == TS_SLEEPING || s == TS_BLOCKED) && c->has_pending &&
			   c->pending.ts >= c->run_start) {
			/* woken while still switching out: the kernel enqueues it once it is
			 * off the CPU; as Perfetto does, the sleep lasts until it runs or is
			 * woken again, and that sleep keeps the waker */
			set_state(c, (uint8_t)s, e->ts, &c->pending);
			c->raw = e->state;
		} else {
			set_state(c, (uint8_t)s, e->ts, NULL);
			c->raw = e->state;
		}
		c->has_pending = false;
	}
	if (e->flags & GPUIO_SF_NEXT_TRACED) {
		c = cur_get(w, sched_opid(w->t, e), sched_otid(w->t, e));
		if (!c)
			return -ENOMEM;
		if (g && g->left_at && c->state == TS_RUNNING && c->since < g->left_at) {
			/* it left its other CPU unseen (sched_chain): runnable until now */
			if ((rc = close_iv(w, c, g->left_at, NULL)))
				return rc;
			set_state(c, TS_RUNNABLE, g->left_at, NULL);
		}
		if ((rc = close_iv(w, c, e->ts, NULL)))
			return rc;
		set_state(c, TS_RUNNING, e->ts, NULL);
		c->cpu = e->cpu;
		c->run_start = e->ts;
		c->has_pending = false;
	}
	return 0;
}

static int on_wake(struct walk *w, const struct sched_ent *e)
{
	struct tcur *c = cur_get(w, sched_pid(w->t, e), sched_tid(w->t, e));
	struct tstate_iv woke;
	int rc;

	if (!c)
		return -ENOMEM;
	memset(&woke, 0, sizeof(woke));
	woke.ts = e->ts;
	woke.woken = true;
	woke.waker_traced = e->flags & GPUIO_SF_WAKER_TRACED;
	woke.waker_pid = sched_opid(w->t, e);
	woke.waker_tid = sched_otid(w->t, e);
	woke.waker_seq = e->waker_seq;
	switch (c->state) {
	case TS_SLEEPING:
	case TS_BLOCKED:
		if ((rc = close_iv(w, c, e->ts, &woke)))
			return rc;
		/* fall through */
	case ST_NONE:
		set_state(c, TS_RUNNABLE, e->ts, &woke);
		c->cpu = e->target_cpu;
		break;
	case TS_RUNNING:
		c->pending = woke;
		c->has_pending = true;
		break;
	default:
		break;          /* already runnable */
	}
	return 0;
}

int sched_tab__states(const struct sched_tab *t, uint64_t end_ts, tstate_fn fn, void *ctx)
{
	struct walk w = { .t = t, .fn = fn, .ctx = ctx };
	size_t gi = 0;
	int rc = 0;

	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct sched_ent *e = &t->ev[i];
		const struct sched_gap *g = NULL;

		if (gi < t->ngap && t->gap[gi].i == i)
			g = &t->gap[gi++].g;
		rc = e->kind == GPUIO_SCHED_SWITCH ? on_switch(&w, e, g) : on_wake(&w, e);
	}
	for (size_t i = 0; i < w.n && !rc; i++)
		rc = close_iv(&w, &w.th[i], end_ts, NULL);
	kmap__free(&w.map);
	free(w.th);
	return rc;
}
