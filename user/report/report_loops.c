// SPDX-License-Identifier: MIT
/*
 * report_loops.c — which threads are training loops, and who feeds each.
 *
 * A thread's data producers are the threads that hand it data: every thread
 * of a process descending from its own (DataLoader workers, their feeder
 * threads), and the other threads of its own process that fetch data
 * themselves (reader threads of a prefetcher: file reads, page faults,
 * socket receives) or are fed by its descendants (PyTorch's pin-memory
 * thread, between the workers and the loop). Nobody else: a sibling process
 * (another rank), the parent, an unrelated process never hands a loop data.
 *
 * A loop is a thread that repeatedly sleeps until one of its producers
 * wakes it (3 waits, 10 ms at least), or that blocks in its own data reads
 * (3 reads, 20 ms and 5% of its run at least: no workers). A thread that
 * feeds another loop (woke it with data) is that loop's producer, not a
 * loop; nor is a supervisor of loops (drop_producers). Without any loop, the thread that waited most for data stands in,
 * else the one most on a CPU (its time is still worth showing), marked so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/waits.h"
#include "report/report_priv.h"

#define LOOP_MIN_WAKES   3
#define LOOP_MIN_DATA_NS 10000000ull    /* 10 ms of waits for data */
#define OWN_MIN_READS    3
#define OWN_MIN_NS       20000000ull    /* 20 ms blocked in its own reads ... */
#define OWN_MIN_SHARE    20             /* ... and 1/20 of its run */
#define LOOPS_MAX        256
#define FETCH_MIN_BYTES  (256ull << 10) /* a thread that read less fetches no data: /proc,
					 * a config file, a few imports */

struct lthread {
	uint32_t pid, tid;
	size_t i0, i1;                  /* its intervals in v */
	uint64_t cpu_ns, span_ns;
	uint64_t data_ns, data_wakes;   /* sleeps its producers ended */
	uint64_t down_wakes;            /* sleeps of its descendants' threads it ended */
	bool fetches;                   /* it fetched data itself (pass 1) */
	bool fed_by_children;           /* a descendant process woke it with data */
	bool candidate, own;
};

struct rpt_loopset {
	const struct rpt_model *m;
	struct lthread *th;
	size_t nth, cth;
	struct kmap by_tid;             /* (tid, 0) -> th[] */
	size_t *loops;                  /* th[] indexes, in report order */
	size_t nloops;
	bool none;                      /* loops[0] stands in: no loop found */
};

void rpt_threads_data_bytes(struct rpt_model *m)
{
	for (size_t i = 0; i < m->thread_files.cap; i++) {
		const struct kslot *k = &m->thread_files.slots[i];
		const struct rpt_file *f;

		if (!k->used)
			continue;
		f = &m->files[k->b];
		/* special: a socket (no pipes here). A file without a name is
		 * not known to be data: in a monitor's dump of the whole node,
		 * whose name table lost a few, a loop's own imports would make
		 * it a reader of the thread it wakes */
		if ((f->role == RPT_ROLE_DATA && !f->nameless) || f->special)
			m->threads[k->a].data_bytes += k->val;
	}
}

bool rpt_iv_sleep(uint8_t state)
{
	return state == TS_SLEEPING || state == TS_BLOCKED;
}

bool rpt_proc_descends(const struct rpt_model *m, uint32_t pid, uint32_t anc)
{
	for (int depth = 0; depth < 32 && pid && pid != anc; depth++) {
		const uint64_t *pi = kmap__get((struct kmap *)&m->proc_map, pid, 0);

		if (!pi)
			return false;
		pid = m->procs[*pi].ppid;
		if (pid == anc)
			return true;
	}
	return false;
}

static struct lthread *th_of(const struct rpt_loopset *ls, uint32_t tid)
{
	const uint64_t *i = kmap__get((struct kmap *)&ls->by_tid, tid, 0);

	return i ? &ls->th[*i] : NULL;
}

bool rpt_loops_feeds(const struct rpt_loopset *ls, uint32_t lpid, uint32_t ltid, uint32_t wpid,
		     uint32_t wtid)
{
	const struct lthread *w;

	if (!wtid || wtid == ltid)
		return false;
	if (wpid != lpid)
		return rpt_proc_descends(ls->m, wpid, lpid);
	w = th_of(ls, wtid);
	return w && (w->fetches || w->fed_by_children);
}

bool rpt_loops_fetcher(const struct rpt_loopset *ls, uint32_t tid)
{
	const struct lthread *t = th_of(ls, tid);

	return t && t->fetches;
}

static bool fetched(const struct rpt_model *m, uint32_t pid, uint32_t tid)
{
	const uint64_t *i = kmap__get((struct kmap *)&m->thread_map, pid, tid);

	return i && m->threads[*i].data_bytes >= FETCH_MIN_BYTES;
}

static uint64_t own_read_ns(const struct rpt_model *m, uint32_t pid, uint32_t tid, uint64_t *rops)
{
	const uint64_t *i = kmap__get((struct kmap *)&m->thread_map, pid, tid);

	*rops = i ? m->threads[*i].data_ops : 0;
	return i ? m->threads[*i].read_ns : 0;
}

/* One entry per thread with states (v sorted by thread, then time). */
static int threads_of(struct rpt_loopset *ls, const struct rpt_ivs *v)
{
	for (size_t i = 0, j; i < v->n; i = j) {
		struct lthread *t;
		uint64_t *slot;

		for (j = i; j < v->n && v->a[j].tid == v->a[i].tid; j++)
			;
		if (array_grow((void **)&ls->th, &ls->cth, ls->nth + 1, sizeof(*ls->th)))
			return -ENOMEM;
		t = &ls->th[ls->nth];
		memset(t, 0, sizeof(*t));
		t->pid = v->a[i].pid;
		t->tid = v->a[i].tid;
		t->i0 = i;
		t->i1 = j;
		t->span_ns = v->a[j - 1].end - v->a[i].ts;
		for (size_t k = i; k < j; k++)
			if (v->a[k].state == TS_RUNNING)
				t->cpu_ns += v->a[k].end - v->a[k].ts;
		t->fetches = fetched(ls->m, t->pid, t->tid);
		if (kmap__upsert(&ls->by_tid, t->tid, 0, &slot) < 0)
			return -ENOMEM;
		*slot = ls->nth++;
	}
	return 0;
}

/*
 * Was the sleep a receive — poll/select/epoll, or a read on a pipe or a
 * socket? A descendant that wakes a thread from a futex shares a lock with
 * it (a multiprocessing queue's), it does not hand it data. Unknown without
 * a WAIT record (older captures): taken as a receive.
 */
static bool receives(const struct rpt_model *m, const struct tstate_iv *iv)
{
	const struct rpt_waitrec *r = rpt_wait_in(m, iv->tid, iv->ts, iv->end);

	return !r || r->kind == MODEL_WAIT_POLL ||
	       ((r->kind == MODEL_WAIT_PIPE || r->kind == MODEL_WAIT_SOCKET) && !model_wait__sends(r->nr));
}

/* Threads of a process fed by its descendants (pin-memory threads): woken in a receive. */
static void mark_fed(struct rpt_loopset *ls, const struct rpt_ivs *v, struct kmap *deaths)
{
	for (size_t k = 0; k < ls->nth; k++) {
		struct lthread *t = &ls->th[k];

		for (size_t i = t->i0; i < t->i1 && !t->fed_by_children; i++) {
			const struct tstate_iv *iv = &v->a[i];

			if (rpt_data_wake(ls->m, iv, deaths) && iv->waker_pid != t->pid &&
			    rpt_proc_descends(ls->m, iv->waker_pid, t->pid) && receives(ls->m, iv))
				t->fed_by_children = true;
		}
	}
}

/* What each thread hands down: the sleeps of its descendant processes'
 * threads it ended (an index queue's feeder thread waking a worker). */
static void count_down_wakes(struct rpt_loopset *ls, const struct rpt_ivs *v)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct tstate_iv *iv = &v->a[i];
		struct lthread *w;

		if (!iv->woken || !iv->waker_traced || !rpt_iv_sleep(iv->state) ||
		    iv->waker_pid == iv->pid || !rpt_proc_descends(ls->m, iv->pid, iv->waker_pid))
			continue;
		if ((w = th_of(ls, iv->waker_tid)) && w->pid == iv->waker_pid)
			w->down_wakes++;
	}
}

/* Each thread's waits its own producers ended; the candidates. */
static void score(struct rpt_loopset *ls, const struct rpt_ivs *v, struct kmap *deaths)
{
	for (size_t k = 0; k < ls->nth; k++) {
		struct lthread *t = &ls->th[k];
		uint64_t rops, own;

		for (size_t i = t->i0; i < t->i1; i++) {
			const struct tstate_iv *iv = &v->a[i];

			if (rpt_data_wake(ls->m, iv, deaths) &&
			    rpt_loops_feeds(ls, t->pid, t->tid, iv->waker_pid, iv->waker_tid)) {
				t->data_ns += iv->end - iv->ts;
				t->data_wakes++;
			}
		}
		own = own_read_ns(ls->m, t->pid, t->tid, &rops);
		if (t->data_wakes >= LOOP_MIN_WAKES && t->data_ns >= LOOP_MIN_DATA_NS) {
			t->candidate = true;
		} else if (rops >= OWN_MIN_READS && own >= OWN_MIN_NS &&
			   own * OWN_MIN_SHARE >= t->span_ns) {
			t->candidate = true;
			t->own = true;
		}
	}
}

/*
 * t, woken with data by x of its own process, only passes it on to the
 * workers: it ends their sleeps as often as x ends its own, and is less on
 * a CPU than x (a DataLoader's index-queue feeder thread, woken by the loop
 * it sends indexes for; the loop fetched its batches' pages itself).
 */
static bool relays_down(const struct lthread *x, const struct lthread *t)
{
	return !t->fed_by_children && t->down_wakes * 2 >= t->data_wakes && t->cpu_ns < x->cpu_ns;
}

/*
 * Loops inside loops. A candidate in a process descending from another
 * candidate's is either a loop of its own under a supervisor — fed by its
 * own worker processes (a rank under torchrun, whose log writes wake the
 * launcher), or reading by itself with nothing handed to it from above —
 * and then the supervisor is no loop; or else the other loop's worker (a
 * producer, not a loop). A thread of the loop's own process that fetches
 * data and woke it is its producer too (a reader), unless the woken one
 * only relays to the workers (relays_down).
 * Decided on the candidates as they stand, all at once.
 */
static int drop_producers(struct rpt_loopset *ls, const struct rpt_ivs *v, struct kmap *deaths)
{
	struct kmap woke = { 0 };       /* (loop th[], pid or tid) -> its data wakes by them */
	struct kmap hands = { 0 };      /* (waker pid, woken pid) -> wakes between processes */
	bool *drop = calloc(ls->nth ? ls->nth : 1, sizeof(*drop));
	uint64_t *slot;
	int rc = -ENOMEM;

	if (!drop)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++)
		if (v->a[i].woken && v->a[i].waker_traced && v->a[i].waker_pid != v->a[i].pid &&
		    kmap__upsert(&hands, v->a[i].waker_pid, v->a[i].pid, &slot) < 0)
			goto out;
	for (size_t l = 0; l < ls->nth; l++) {
		const struct lthread *t = &ls->th[l];

		if (!t->candidate || t->own)
			continue;
		for (size_t i = t->i0; i < t->i1; i++) {
			const struct tstate_iv *iv = &v->a[i];

			if (!rpt_data_wake(ls->m, iv, deaths) ||
			    !rpt_loops_feeds(ls, t->pid, t->tid, iv->waker_pid, iv->waker_tid))
				continue;
			if (kmap__upsert(&woke, l, iv->waker_pid == t->pid ? iv->waker_tid :
					 (1ull << 32) | iv->waker_pid, &slot) < 0)
				goto out;
		}
	}
	for (size_t w = 0; w < ls->nth; w++) {
		const struct lthread *x = &ls->th[w];

		for (size_t l = 0; l < ls->nth && x->candidate; l++) {
			const struct lthread *t = &ls->th[l];

			if (l == w || !t->candidate)
				continue;
			if (x->pid == t->pid) {
				if (!kmap__get(&woke, l, x->tid))
					continue;
				if (relays_down(x, t))
					drop[l] = true;                 /* x's feeder thread */
				else if (!t->own && x->fetches)
					drop[w] = true;                 /* a reader */
			} else if (rpt_proc_descends(ls->m, x->pid, t->pid)) {
				/* a loop of its own: fed by workers of its own, or reading
				 * by itself with nothing handed to it from above */
				if (x->fed_by_children || (x->own && !kmap__get(&hands, t->pid, x->pid)))
					drop[l] = true;                 /* t supervises it */
				else
					drop[w] = true;                 /* t's worker */
			}
		}
	}
	for (size_t w = 0; w < ls->nth; w++)
		if (drop[w])
			ls->th[w].candidate = false;
	rc = 0;
out:
	free(drop);
	kmap__free(&woke);
	kmap__free(&hands);
	return rc;
}

/*
 * One loop per process: the candidate most on a CPU — the loop computes;
 * the threads that relay to it (a pin-memory thread, a queue's feeder
 * thread) are fed too, but do little with what they get.
 */
static void one_per_process(struct rpt_loopset *ls)
{
	for (size_t w = 0; w < ls->nth; w++) {
		struct lthread *x = &ls->th[w];

		for (size_t l = 0; l < ls->nth && x->candidate; l++) {
			const struct lthread *t = &ls->th[l];

			if (l != w && t->candidate && t->pid == x->pid &&
			    (t->cpu_ns > x->cpu_ns || (t->cpu_ns == x->cpu_ns && t->tid < x->tid)))
				x->candidate = false;
		}
	}
}

static const struct rpt_loopset *sort_ls;

static uint64_t weight(const struct lthread *t)
{
	return t->data_ns + (t->own ? own_read_ns(sort_ls->m, t->pid, t->tid, &(uint64_t){ 0 }) : 0);
}

static int by_weight(const void *a, const void *b)
{
	const struct lthread *x = &sort_ls->th[*(const size_t *)a], *y = &sort_ls->th[*(const size_t *)b];
	uint64_t wx = weight(x), wy = weight(y);

	if (wx != wy)
		return wx > wy ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int rpt_loops_find(struct rpt_model *m, const struct rpt_ivs *v, struct kmap *deaths,
		   struct rpt_loopset **out)
{
	struct rpt_loopset *ls = calloc(1, sizeof(*ls));
	size_t best = 0;
	int rc = -ENOMEM;

	if (!ls)
		return -ENOMEM;
	ls->m = m;
	if ((rc = threads_of(ls, v)))
		goto fail;
	mark_fed(ls, v, deaths);
	count_down_wakes(ls, v);
	score(ls, v, deaths);
	if ((rc = drop_producers(ls, v, deaths)))
		goto fail;
	one_per_process(ls);
	rc = -ENOMEM;
	ls->loops = calloc(ls->nth ? ls->nth : 1, sizeof(*ls->loops));
	if (!ls->loops)
		goto fail;
	for (size_t k = 0; k < ls->nth && ls->nloops < LOOPS_MAX; k++)
		if (ls->th[k].candidate)
			ls->loops[ls->nloops++] = k;
	if (getenv("GPUIO_REPORT_DEBUG_LOOPS"))
		for (size_t k = 0; k < ls->nth; k++)
			fprintf(stderr, "loops: pid %u tid %u data %lu ns %lu wakes %lu down cpu %lu fetches %d fed %d cand %d own %d\n",
				ls->th[k].pid, ls->th[k].tid, (unsigned long)ls->th[k].data_ns,
				(unsigned long)ls->th[k].data_wakes, (unsigned long)ls->th[k].down_wakes,
				(unsigned long)ls->th[k].cpu_ns, ls->th[k].fetches,
				ls->th[k].fed_by_children, ls->th[k].candidate, ls->th[k].own);
	sort_ls = ls;
	if (ls->nloops > 1)
		qsort(ls->loops, ls->nloops, sizeof(*ls->loops), by_weight);
	if (!ls->nloops && ls->nth) {
		/* none: the thread that waited most for data stands in, else the busiest */
		for (size_t k = 1; k < ls->nth; k++)
			if (ls->th[k].data_ns > ls->th[best].data_ns ||
			    (ls->th[k].data_ns == ls->th[best].data_ns &&
			     ls->th[k].cpu_ns > ls->th[best].cpu_ns))
				best = k;
		ls->loops[ls->nloops++] = best;
		ls->none = true;
	}
	*out = ls;
	return 0;
fail:
	rpt_loops_free(ls);
	return rc;
}

size_t rpt_loops_count(const struct rpt_loopset *ls)
{
	return ls->nloops;
}

void rpt_loops_get(const struct rpt_loopset *ls, size_t i, uint32_t *pid, uint32_t *tid,
		   bool *own, bool *none)
{
	const struct lthread *t = &ls->th[ls->loops[i]];

	*pid = t->pid;
	*tid = t->tid;
	*own = t->own;
	*none = ls->none;
}

void rpt_loops_free(struct rpt_loopset *ls)
{
	if (!ls)
		return;
	free(ls->th);
	free(ls->loops);
	kmap__free(&ls->by_tid);
	free(ls);
}
