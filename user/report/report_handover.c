// SPDX-License-Identifier: MIT
/*
 * report_handover.c — the thread states the loops are found in, and which
 * wake-ups hand something over: every thread's states (scheduler layer) by
 * thread then time, with the sleep of a thread asleep when tracing began;
 * and whether a wake-up by another traced thread is a hand-over, not a
 * dying child's exit waking its parent (a join).
 */
#include <errno.h>
#include <stdlib.h>
#include "lib/sort.h"
#include "model/waits.h"
#include "report/report_model.h"
#include "report/report_priv.h"

#define EXIT_WAKE_NS    10000000ull  /* a waker dead this soon after, without sleeping first: a join */
#define THREAD_EXIT_WAKE_NS 200000ull /* the same for a thread of the sleeper's own process: its
				       * exit wakes the joiner from the exit path itself, while a
				       * reader that hands over its last batch and returns takes longer */

static int collect(void *ctx, const struct tstate_iv *iv)
{
	struct rpt_ivs *v = ctx;

	if (array_grow((void **)&v->a, &v->cap, v->n + 1, sizeof(*v->a)))
		return -ENOMEM;
	v->a[v->n++] = *iv;
	return 0;
}

/*
 * A thread asleep when the scheduler layer started (an attach) is first
 * seen being woken (not created): its sleep from that start until the
 * wake-up is its first interval, which no switch opened. v sorted by
 * thread, then time.
 */
/* Is the wake-up of tid at ts its creation (sched_wakeup_new)? */
static bool woken_new(const struct sched_tab *t, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->ev[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < t->n && t->ev[lo].ts == ts; lo++)
		if (sched_tid(t, &t->ev[lo]) == tid && t->ev[lo].kind == GPUIO_SCHED_WAKE_NEW)
			return true;
	return false;
}

/* Does thread state i (v sorted) need the sleep before it (its first, a wake-up)? */
static bool needs_sleep(const struct sched_tab *t, const struct rpt_ivs *v, size_t i,
			uint64_t start)
{
	const struct tstate_iv *iv = &v->a[i];
	bool first = !i || v->a[i - 1].tid != iv->tid;

	return first && iv->woken && iv->state == TS_RUNNABLE && iv->ts > start &&
	       !woken_new(t, iv->tid, iv->ts);
}

/* In place: the sleeps are counted, the array grown once and the states
 * moved up from the end (no second copy of every state). */
static int asleep_at_start(const struct sched_tab *t, struct rpt_ivs *v)
{
	uint64_t start = t->n ? t->ev[0].ts : 0;
	size_t add = 0, j;

	for (size_t i = 0; i < v->n; i++)
		add += needs_sleep(t, v, i, start);
	if (!add)
		return 0;
	if (array_grow((void **)&v->a, &v->cap, v->n + add, sizeof(*v->a)))
		return -ENOMEM;
	j = v->n + add;
	for (size_t i = v->n; i-- > 0;) {
		struct tstate_iv iv = v->a[i];
		bool need = needs_sleep(t, v, i, start);

		v->a[--j] = iv;
		if (need) {
			iv.end = iv.ts;
			iv.ts = start;
			iv.state = TS_SLEEPING;
			iv.raw_state = 0;
			v->a[--j] = iv;
		}
	}
	v->n += add;
	return 0;
}

static int by_thread_ts(const void *a, const void *b, void *ctx)
{
	const struct tstate_iv *x = a, *y = b;

	(void)ctx;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * When each thread left its CPU for good: deaths maps (tid, 0) to the time
 * of its last switch out as gone + 1, filled by one pass over the table on
 * first use ((DEATHS_DONE, DEATHS_DONE) marks it done), not a pass per
 * thread asked about. A thread not in it never died.
 */
#define DEATHS_DONE UINT64_MAX
static int deaths_fill(const struct sched_tab *t, struct kmap *deaths)
{
	uint64_t *v;

	if (kmap__get(deaths, DEATHS_DONE, DEATHS_DONE))
		return 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct sched_ent *e = &t->ev[i];

		if (e->kind != GPUIO_SCHED_SWITCH || sched_state_after_switch(e) != TS_N)
			continue;
		if (kmap__upsert(deaths, sched_tid(t, e), 0, &v) < 0)
			return -ENOMEM;
		*v = e->ts + 1;         /* time order: the last one stays */
	}
	if (kmap__upsert(deaths, DEATHS_DONE, DEATHS_DONE, &v) < 0)
		return -ENOMEM;
	*v = 1;
	return 0;
}

/* Did tid go to sleep (a switch-out not preempted) in [a, b)? */
static bool slept_between(const struct sched_tab *t, uint32_t tid, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {               /* the first event at or after a */
		size_t mid = (lo + hi) / 2;

		if (t->ev[mid].ts < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->n && t->ev[i].ts < b; i++) {
		const struct sched_ent *e = &t->ev[i];

		if (e->kind == GPUIO_SCHED_SWITCH && (e->flags & GPUIO_SF_PREV_TRACED) &&
		    sched_tid(t, e) == tid && !(e->flags & GPUIO_SF_PREEMPT))
			return true;
	}
	return false;
}

/*
 * A wake by another traced thread: a hand-over — not a child's exit waking
 * its parent (a join: the waker died soon after without going to sleep in
 * between, so the wake-up was part of its exit; a worker that handed over
 * its last batch, then waited to be shut down, is data). Whether the waker
 * hands over *data* to this thread is report_loops.c's rpt_loops_feeds.
 */
bool rpt_data_waker(const struct sched_tab *t, const struct tstate_iv *iv, uint64_t woke,
		    struct kmap *deaths)
{
	uint64_t *d;

	if (!iv->woken || !iv->waker_traced || !iv->waker_tid || iv->waker_tid == iv->tid)
		return false;
	if (deaths_fill(t, deaths) < 0)
		return true;
	d = kmap__get(deaths, iv->waker_tid, 0);
	if (!d || !(*d > 1 && *d - 1 >= woke &&
	      *d - 1 - woke < (iv->waker_pid == iv->pid ? THREAD_EXIT_WAKE_NS : EXIT_WAKE_NS)))
		return true;
	return slept_between(t, iv->waker_tid, woke, *d - 1);
}

bool rpt_data_wake(const struct rpt_model *m, const struct tstate_iv *iv, struct kmap *deaths)
{
	const struct rpt_waitrec *r;

	if (!rpt_iv_sleep(iv->state) || !rpt_data_waker(m->sched, iv, iv->end, deaths))
		return false;
	r = rpt_wait_in(m, iv->tid, iv->ts, iv->end);
	return !r || !(model_wait__sends(r->nr) || model_wait__timed(r->nr));
}

/*
 * Where the threads' last states end: the trace's end, its final STATS
 * record, when the records stop before it. A loop asleep in next() when
 * the trace ended waited until then (an attached trace cut by -d); closed
 * at the last record, that wait was lost whole.
 */
static uint64_t states_end(const struct rpt_model *m)
{
	uint64_t end = m->last_ts;

	if (m->f && m->f->have_stats && m->f->stats.final && m->f->stats.hdr.ts > end)
		end = m->f->stats.hdr.ts;
	return end;
}

int rpt_ivs_load(struct rpt_model *m, struct rpt_ivs *v)
{
	int rc = sched_tab__states(m->sched, states_end(m), collect, v);

	if (rc || !v->n)
		return rc;
	/* stable, as qsort's merge sort was, without its two pointers a state */
	if ((rc = sort_stable(v->a, v->n, sizeof(*v->a), by_thread_ts, NULL)))
		return rc;
	return asleep_at_start(m->sched, v);
}
