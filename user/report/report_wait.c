// SPDX-License-Identifier: MIT
/*
 * report_wait.c — why each training loop waited: its time split by thread
 * state and cause, the waits for data followed into the producers that
 * ended them, and its steps. Which threads are loops, and who feeds each,
 * is report_loops.c's; what a sleep was in, report_blocked.c's; the thread
 * states and which wake-ups hand something over, report_handover.c's.
 *
 * From the scheduler layer's thread states (model/sched_tab.h), a loop's
 * time is: on a CPU; runnable (waiting for a CPU); asleep inside its own
 * file calls or page faults; waiting for data (asleep until one of its
 * producers woke it, and the wait for a CPU right after; not a process
 * that was exiting: a join); asleep in its own socket or pipe calls; in its
 * CUDA syncs; else what its WAIT record says it slept in (a futex, poll, a
 * child, a timed sleep, a fault); else other sleep — in that order of
 * precedence. Its own file calls come first because the waker of a sleep
 * in I/O is whoever the disk interrupt landed on, a traced thread or not.
 *
 * The waits for data are windows: what the loop's producers that fetch
 * data (worker processes' main threads, reader threads) did inside them —
 * reads of which files, page faults, network receives, on CPU, runnable,
 * other — comes from one more pass over the VFS calls. Steps (from NVTX
 * ranges or the waits) are report_steps.c's; what renderers ask of a loop,
 * report_loop_view.c's.
 * Memory: the thread states (~64 bytes per switch or wake-up), the loops'
 * own calls and their producers' calls inside the windows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/sort.h"
#include "model/calls.h"
#include "model/waits.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "report/report_priv.h"

#define TIMED_MAX       64           /* threads timed: the loops, then the GPU launchers */

const char *const rpt_tw_names[RPT_TW_N] = {
	[RPT_TW_CPU] = "on_cpu", [RPT_TW_RUNNABLE] = "runnable", [RPT_TW_FILE_IO] = "file_io",
	[RPT_TW_FAULT] = "page_fault", [RPT_TW_SOCKET] = "socket", [RPT_TW_PIPE] = "pipe",
	[RPT_TW_GPU] = "gpu_sync", [RPT_TW_RANKS] = "waiting_for_ranks", [RPT_TW_DATA] = "waiting_for_data", [RPT_TW_FUTEX] = "futex",
	[RPT_TW_POLL] = "poll", [RPT_TW_CHILD] = "child", [RPT_TW_TIMER] = "sleep",
	[RPT_TW_SLEEP] = "other_sleep",
};
const char *rpt_ls_name(int k)
{
	return k >= 0 && k < RPT_TW_N ? rpt_tw_names[k] : "no_state";
}

const char *const rpt_wa_names[RPT_WA_N] = {
	[RPT_WA_READ] = "reading_files", [RPT_WA_FAULT] = "page_faults", [RPT_WA_NET] = "network",
	[RPT_WA_CPU] = "on_cpu", [RPT_WA_RUNNABLE] = "runnable", [RPT_WA_OTHER] = "other",
};

/* A thread's own calls by what they wait on. */
enum own_call { OC_FILE, OC_FAULT, OC_SOCKET, OC_PIPE, OC_N };

static int own_call_kind(const struct gpuio_vfs_event *e)
{
	if (e->call == GPUIO_CALL_PAGE_FAULT)
		return OC_FAULT;
	switch (e->ftype) {
	case GPUIO_FT_SOCK: return OC_SOCKET;
	case GPUIO_FT_FIFO: return OC_PIPE;
	case GPUIO_FT_CHR: return -1;           /* a device: its sleeps go by their WAIT */
	default: return OC_FILE;
	}
}

/* One timed thread (a loop, a GPU launcher): its time by state and cause. */
struct thread_time {
	uint32_t pid, tid;
	size_t i0, i1;                  /* its intervals in the sorted ones */
	struct rpt_wait *w;             /* a loop's (its blocked-in list), NULL: a launcher */
	struct rpt_spans calls[OC_N];   /* its own calls (pass 3) */
	struct rpt_spans win;           /* its waits for data */
	struct rpt_spans tw[RPT_TW_N];  /* its time by enum rpt_tw */
	uint64_t data_runnable_ns;      /* of tw[RPT_TW_DATA]: runnable once woken with data */
};

/* A producer that fetches data for a loop: what it did inside the loop's windows. */
struct producer {
	uint32_t pid, tid;
	size_t loop;                    /* timed[] index of its loop */
	struct rpt_spans fetch[3];      /* its reads, faults, receives (by enum rpt_wa) */
};

struct wait_ctx {
	struct rpt_model *m;
	const struct rpt_loopset *ls;
	struct rpt_ivs v;
	struct kmap deaths;
	struct thread_time tt[TIMED_MAX];
	size_t ntt, nloops;             /* tt[0 .. nloops): the loops */
	struct producer *pr;
	size_t npr, cpr;
	struct kmap pr_map;             /* (tid, loop) -> pr[] + 1 */
	size_t *first;                  /* v's threads: the index of each one's first state */
	size_t nfirst;
};

static int file_add(struct rpt_wait *w, uint32_t file, uint64_t bytes, uint64_t ns)
{
	for (size_t i = 0; i < w->nfiles; i++)
		if (w->files[i].file == file) {
			w->files[i].bytes += bytes;
			w->files[i].ns += ns;
			w->files[i].reads++;
			return 0;
		}
	if (array_grow((void **)&w->files, &w->cfiles, w->nfiles + 1, sizeof(*w->files)))
		return -ENOMEM;
	w->files[w->nfiles++] = (struct rpt_wait_file){ .file = file, .bytes = bytes, .ns = ns, .reads = 1 };
	return 0;
}

/* Pass 3, one call: a timed thread's own calls; a producer's fetches inside its loop's windows. */
static int pass3_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct wait_ctx *c = ctx;
	const struct gpuio_hdr *h = &e->hdr;
	uint64_t end;
	int k;

	/* a socket call is the network's: own_call_kind puts a sleep in one apart
	 * from file I/O, after the data its producers hand over */
	if (gpuio_call__is_async(e->call))
		return 0;
	end = rpt_end_of(h->ts, e->dur_ns);
	for (size_t i = 0; i < c->ntt; i++)
		if (c->tt[i].tid == h->tid) {
			k = own_call_kind(e);
			return k < 0 || !rpt_spans_add(&c->tt[i].calls[k], h->ts, end) ? 0 : -ENOMEM;
		}
	if (!rpt_call_fetches_data(e))
		return 0;
	for (size_t l = 0; l < c->nloops; l++) {
		const uint64_t *pi = kmap__get(&c->pr_map, h->tid, l);
		struct producer *p;
		uint64_t in, *fi;
		int wa;

		if (!pi || !(in = rpt_spans_overlap(&c->tt[l].win, h->ts, end)))
			continue;
		p = &c->pr[*pi - 1];
		wa = e->call == GPUIO_CALL_PAGE_FAULT ? RPT_WA_FAULT :
		     e->ftype == GPUIO_FT_SOCK || !gpuio_call__is_read(e->call) ? RPT_WA_NET : RPT_WA_READ;
		if (rpt_spans_add(&p->fetch[wa], h->ts, end))
			return -ENOMEM;
		fi = wa == RPT_WA_NET ? NULL : kmap__get(&c->m->file_map, e->dev, e->ino);
		if (fi && file_add(c->tt[l].w, (uint32_t)*fi, (uint64_t)e->ret, in))
			return -ENOMEM;
	}
	return 0;
}

/* Pass 3: the file calls again (the session replays them). */
static int pass3(struct wait_ctx *c)
{
	const struct model_tool t = { .ctx = c, .vfs = pass3_vfs };
	int rc;

	rc = model_session__replay(c->m->s, &t, 1ull << GPUIO_REC_VFS);
	if (rc == -EBADMSG)
		snprintf(c->m->err, sizeof(c->m->err), "%s: %s", c->m->path,
			 model_session__error(c->m->s));
	return rc;
}

/* Of the pieces in `in` (consumed), what lies inside spans goes to kind k; the rest stays. */
static int take(struct rpt_spans *in, const struct rpt_spans *spans, struct rpt_spans *k)
{
	struct rpt_spans rest = { 0 };
	int rc = 0;

	for (size_t i = 0; i < in->n && !rc; i++) {
		const struct rpt_span p = in->a[i];
		size_t r0 = rest.n;

		rc = rpt_spans_minus(spans, p.s, p.e, &rest);
		/* inside = the piece minus what stayed outside */
		for (size_t j = r0; j <= rest.n && !rc; j++) {
			uint64_t a = j == r0 ? p.s : rest.a[j - 1].e;
			uint64_t b = j == rest.n ? p.e : rest.a[j].s;

			if (b > a)
				rc = rpt_spans_add(k, a, b);
		}
	}
	free(in->a);
	*in = rest;
	return rc;
}

static uint64_t spans_total(const struct rpt_spans *v)
{
	uint64_t t = 0;

	for (size_t i = 0; i < v->n; i++)
		t += v->a[i].e - v->a[i].s;
	return t;
}

/* The parts of a thread's syncs (normalised) while a collective kernel of its
 * process ran on a GPU: there it waits for the other ranks. */
static int sync_ranks(const struct rpt_model *m, uint32_t pid, const struct rpt_spans *syncs,
		      struct rpt_spans *ranks)
{
	struct rpt_spans colls = { 0 }, in = { 0 };
	int rc = 0;

	for (size_t k = 0; k < m->ncolls && syncs->n && !rc; k++)
		if (m->colls[k].pid == pid)
			rc = rpt_spans_add(&colls, m->colls[k].s, m->colls[k].e);
	rpt_spans_norm(&colls);
	for (size_t i = 0; i < syncs->n && colls.n && !rc; i++)
		rc = rpt_spans_add(&in, syncs->a[i].s, syncs->a[i].e);
	if (!rc && in.n)
		rc = take(&in, &colls, ranks);
	rpt_spans_norm(ranks);
	free(colls.a);
	free(in.a);
	return rc;
}

/*
 * One sleep of a timed thread, by precedence: its own file calls and
 * faults; data (a producer woke it); its own socket and pipe calls; its
 * CUDA syncs; what its WAIT record says; else other sleep.
 */
static int sleep_parts(struct wait_ctx *c, struct thread_time *t, const struct tstate_iv *iv,
		       const struct rpt_spans *syncs, const struct rpt_spans *ranks, bool data)
{
	struct rpt_spans rest = { 0 };
	const struct rpt_waitrec *r;
	int rc, k;
	uint64_t left;

	if ((rc = rpt_spans_add(&rest, iv->ts, iv->end)))
		return rc;
	if ((rc = take(&rest, &t->calls[OC_FILE], &t->tw[RPT_TW_FILE_IO])) ||
	    (rc = take(&rest, &t->calls[OC_FAULT], &t->tw[RPT_TW_FAULT])))
		goto out;
	if (data) {
		for (size_t i = 0; i < rest.n && !rc; i++)
			rc = rpt_spans_add(&t->tw[RPT_TW_DATA], rest.a[i].s, rest.a[i].e);
		goto out;
	}
	if ((rc = take(&rest, &t->calls[OC_SOCKET], &t->tw[RPT_TW_SOCKET])) ||
	    (rc = take(&rest, &t->calls[OC_PIPE], &t->tw[RPT_TW_PIPE])) ||
	    (rc = take(&rest, ranks, &t->tw[RPT_TW_RANKS])) ||
	    (rc = take(&rest, syncs, &t->tw[RPT_TW_GPU])))
		goto out;
	r = rpt_wait_in(c->m, t->tid, iv->ts, iv->end);
	k = rpt_tw_of_wait(r);
	left = spans_total(&rest);
	for (size_t i = 0; i < rest.n && !rc; i++)
		rc = rpt_spans_add(&t->tw[k], rest.a[i].s, rest.a[i].e);
	if (t->w && left)
		rpt_blocked_add(t->w, r, left);
out:
	free(rest.a);
	return rc;
}

/*
 * A timed thread's time by state and cause: asleep until a producer woke
 * it, and waiting for a CPU right after, is waiting for data; its CPU time
 * is on_cpu even inside next() (unpickling a batch is the loop's own work,
 * which a program's timer of next() counts as waiting: the tests compare
 * with that wait less the thread's CPU time and run delay inside it).
 */
static int thread_time(struct wait_ctx *c, struct thread_time *t)
{
	struct rpt_model *m = c->m;
	struct rpt_spans syncs = { 0 }, cpu = { 0 }, ranks = { 0 };
	int rc = -ENOMEM;

	for (int k = 0; k < OC_N; k++)
		rpt_spans_norm(&t->calls[k]);
	for (size_t k = 0; k < m->nsyncs; k++)
		if (m->syncs[k].dev == t->tid && m->syncs[k].pid == t->pid &&
		    rpt_spans_add(&syncs, m->syncs[k].s, m->syncs[k].e))
			goto out;
	rpt_spans_norm(&syncs);
	if ((rc = sync_ranks(m, t->pid, &syncs, &ranks)))
		goto out;
	rc = -ENOMEM;
	t->win.n = 0;
	for (size_t j = t->i0; j < t->i1; j++) {
		const struct tstate_iv *iv = &c->v.a[j];
		bool data;

		if (iv->state == TS_RUNNING) {
			if (rpt_spans_add(&cpu, iv->ts, iv->end))
				goto out;
			continue;
		}
		if (!rpt_iv_sleep(iv->state)) {
			/* woken with data, then waiting for a CPU: still inside the fetch */
			int k = RPT_TW_RUNNABLE;

			if (iv->state == TS_RUNNABLE && rpt_data_waker(m->sched, iv, iv->ts, &c->deaths) &&
			    rpt_loops_feeds(c->ls, t->pid, t->tid, iv->waker_pid, iv->waker_tid)) {
				k = RPT_TW_DATA;
				t->data_runnable_ns += iv->end - iv->ts;
			}
			if (rpt_spans_add(&t->tw[k], iv->ts, iv->end))
				goto out;
			continue;
		}
		data = rpt_data_wake(m, iv, &c->deaths) &&
		       rpt_loops_feeds(c->ls, t->pid, t->tid, iv->waker_pid, iv->waker_tid);
		if (data && rpt_spans_add(&t->win, iv->ts, iv->end))
			goto out;
		if ((rc = sleep_parts(c, t, iv, &syncs, &ranks, data)))
			goto out;
		rc = -ENOMEM;
	}
	rpt_spans_norm(&t->win);
	for (size_t i = 0; i < cpu.n; i++)
		if (rpt_spans_add(&t->tw[RPT_TW_CPU], cpu.a[i].s, cpu.a[i].e))
			goto out;
	for (int k = 0; k < RPT_TW_N; k++)
		rpt_spans_norm(&t->tw[k]);
	rc = 0;
out:
	free(syncs.a);
	free(ranks.a);
	free(cpu.a);
	return rc;
}

/* The intervals of tid in v (sorted by thread, then time): [*i0, *i1). */
static void thread_range(const struct rpt_ivs *v, uint32_t tid, size_t *i0, size_t *i1)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v->a[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*i0 = lo;
	while (lo < v->n && v->a[lo].tid == tid)
		lo++;
	*i1 = lo;
}

static struct thread_time *timed_add(struct wait_ctx *c, uint32_t pid, uint32_t tid)
{
	struct thread_time *t;

	for (size_t k = 0; k < c->ntt; k++)
		if (c->tt[k].tid == tid)
			return NULL;
	if (c->ntt == TIMED_MAX)
		return NULL;
	t = &c->tt[c->ntt++];
	t->pid = pid;
	t->tid = tid;
	thread_range(&c->v, tid, &t->i0, &t->i1);
	return t;
}

/* The loops (tt[0 .. nloops)), each with its rpt_wait, then each GPU process's launcher. */
static int loops_to_time(struct wait_ctx *c)
{
	struct rpt_model *m = c->m;
	size_t n = rpt_loops_count(c->ls);

	m->loops = calloc(n ? n : 1, sizeof(*m->loops));
	if (!m->loops)
		return -ENOMEM;
	for (size_t i = 0; i < n && c->ntt < TIMED_MAX; i++) {
		struct thread_time *t;
		struct rpt_wait *w;
		uint32_t pid, tid;
		bool own, none;

		rpt_loops_get(c->ls, i, &pid, &tid, &own, &none);
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		m->loops[m->nloops++] = w;
		w->pid = pid;
		w->tid = tid;
		w->index = (uint32_t)i;
		w->own_reads = own;
		w->stand_in = none;
		t = timed_add(c, pid, tid);
		if (!t)
			return -ENOMEM;
		t->w = w;
		w->span_s = c->v.a[t->i0].ts;
		w->span_e = c->v.a[t->i1 - 1].end;
	}
	c->nloops = c->ntt;
	/* the threads that launched the work ending an idle gap, the most launching first */
	for (size_t g = 0; g < m->ngpus; g++)
		if (m->gpus[g].launcher_tid)
			timed_add(c, m->gpus[g].pid, m->gpus[g].launcher_tid);
	for (size_t k = 0; k < m->ngaps; k++)
		if (m->gaps[k].launcher_tid)
			timed_add(c, m->gpus[m->gaps[k].gpu].pid, m->gaps[k].launcher_tid);
	m->wait = m->loops[0];
	return 0;
}

/* The loop's data windows, for pass 3 (its own calls are not known yet: data first). */
static int windows_of(struct wait_ctx *c, struct thread_time *t)
{
	for (size_t j = t->i0; j < t->i1; j++) {
		const struct tstate_iv *iv = &c->v.a[j];

		if (rpt_data_wake(c->m, iv, &c->deaths) &&
		    rpt_loops_feeds(c->ls, t->pid, t->tid, iv->waker_pid, iv->waker_tid) &&
		    rpt_spans_add(&t->win, iv->ts, iv->end))
			return -ENOMEM;
	}
	rpt_spans_norm(&t->win);
	return 0;
}

/* Who ended the loop's waits for data: its workers (by process), its own threads. */
static void find_wakers(struct wait_ctx *c, struct thread_time *t)
{
	struct rpt_wait *w = t->w;

	for (size_t j = t->i0; j < t->i1; j++) {
		const struct tstate_iv *iv = &c->v.a[j];
		bool thread = iv->waker_pid == t->pid;
		size_t i;

		if (!rpt_data_wake(c->m, iv, &c->deaths) ||
		    !rpt_loops_feeds(c->ls, t->pid, t->tid, iv->waker_pid, iv->waker_tid))
			continue;
		for (i = 0; i < w->nwakers; i++)
			if (thread ? w->wakers[i].tid == iv->waker_tid :
			    !w->wakers[i].thread && w->wakers[i].pid == iv->waker_pid)
				break;
		if (i == w->nwakers && i < RPT_WAKERS_MAX)
			w->wakers[w->nwakers++] = (struct rpt_waker){
				.pid = iv->waker_pid, .tid = iv->waker_tid, .thread = thread };
		if (i < RPT_WAKERS_MAX) {
			w->wakers[i].wakes++;
			w->wakers[i].ns += iv->end - iv->ts;
		}
	}
}

/* Where each thread's states begin in v (sorted by thread): once, so that a
 * pass over the threads per loop costs the threads, not every state. */
static int thread_firsts(struct wait_ctx *c)
{
	size_t cap = 0;

	if (c->nfirst || !c->v.n)
		return 0;
	for (size_t i = 0; i < c->v.n; i++) {
		if (i && c->v.a[i].tid == c->v.a[i - 1].tid)
			continue;
		if (array_grow((void **)&c->first, &cap, c->nfirst + 1, sizeof(*c->first)))
			return -ENOMEM;
		c->first[c->nfirst++] = i;
	}
	return 0;
}

/* The loop's producers that fetch data: worker processes' main threads, fetching threads. */
static int find_producers(struct wait_ctx *c, size_t l)
{
	const struct thread_time *t = &c->tt[l];

	if (thread_firsts(c))
		return -ENOMEM;
	for (size_t k = 0; k < c->nfirst; k++) {
		const struct tstate_iv *iv = &c->v.a[c->first[k]];
		uint64_t *slot;

		if (!rpt_loops_feeds(c->ls, t->pid, t->tid, iv->pid, iv->tid) ||
		    !(rpt_loops_fetcher(c->ls, iv->tid) || (iv->pid != t->pid && iv->tid == iv->pid)))
			continue;
		if (array_grow((void **)&c->pr, &c->cpr, c->npr + 1, sizeof(*c->pr)))
			return -ENOMEM;
		c->pr[c->npr] = (struct producer){ .pid = iv->pid, .tid = iv->tid, .loop = l };
		if (kmap__upsert(&c->pr_map, iv->tid, l, &slot) < 0)
			return -ENOMEM;
		*slot = ++c->npr;
	}
	return 0;
}

/* What a producer did inside its loop's windows: fetching, on CPU, runnable, other. */
static int producer_activity(struct wait_ctx *c, struct producer *p)
{
	const struct rpt_spans *win = &c->tt[p->loop].win;
	struct rpt_wait *w = c->tt[p->loop].w;
	struct rpt_spans busy = { 0 }, rest = { 0 };
	uint64_t life_s = UINT64_MAX, life_e = 0, in_all, cpu = 0, run = 0, f[3] = { 0 };
	size_t i0, i1;
	int rc = -ENOMEM;

	thread_range(&c->v, p->tid, &i0, &i1);
	/* its sleeps on a socket (an HTTP client polls before it reads) are the
	 * network's, and outside any syscall a page fault's, as its calls are */
	for (size_t i = i0; i < i1; i++) {
		const struct tstate_iv *iv = &c->v.a[i];
		const struct rpt_waitrec *r;

		if (!rpt_iv_sleep(iv->state) || !(r = rpt_wait_in(c->m, iv->tid, iv->ts, iv->end)))
			continue;
		if (r->ftype == GPUIO_FT_SOCK && rpt_spans_add(&p->fetch[RPT_WA_NET], iv->ts, iv->end))
			goto out;
		if (r->kind == MODEL_WAIT_FAULT && rpt_spans_add(&p->fetch[RPT_WA_FAULT], iv->ts, iv->end))
			goto out;
	}
	for (int k = 0; k < 3; k++) {
		rpt_spans_norm(&p->fetch[k]);
		for (size_t i = 0; i < p->fetch[k].n; i++)
			if (rpt_spans_add(&busy, p->fetch[k].a[i].s, p->fetch[k].a[i].e))
				goto out;
	}
	rpt_spans_norm(&busy);
	for (size_t i = i0; i < i1; i++) {
		const struct tstate_iv *iv = &c->v.a[i];
		uint64_t in = 0;

		if (iv->ts < life_s)
			life_s = iv->ts;
		if (iv->end > life_e)
			life_e = iv->end;
		if (rpt_iv_sleep(iv->state))
			continue;
		/* on a CPU or waiting for one: outside its fetches only */
		rest.n = 0;
		if (rpt_spans_minus(&busy, iv->ts, iv->end, &rest))
			goto out;
		for (size_t j = 0; j < rest.n; j++)
			in += rpt_spans_overlap(win, rest.a[j].s, rest.a[j].e);
		if (iv->state == TS_RUNNING)
			cpu += in;
		else
			run += in;
	}
	rc = 0;
	if (life_e <= life_s)
		goto out;
	in_all = rpt_spans_overlap(win, life_s, life_e);
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < p->fetch[k].n; i++)
			f[k] += rpt_spans_overlap(win, p->fetch[k].a[i].s, p->fetch[k].a[i].e);
	w->act_ns[RPT_WA_READ] += f[RPT_WA_READ];
	w->act_ns[RPT_WA_FAULT] += f[RPT_WA_FAULT];
	w->act_ns[RPT_WA_NET] += f[RPT_WA_NET];
	w->act_ns[RPT_WA_CPU] += cpu;
	w->act_ns[RPT_WA_RUNNABLE] += run;
	{
		uint64_t sum = f[0] + f[1] + f[2] + cpu + run;

		w->act_ns[RPT_WA_OTHER] += in_all > sum ? in_all - sum : 0;
	}
out:
	free(busy.a);
	free(rest.a);
	return rc;
}

/* Does the peer serve the loop or its producer processes? */
static bool peer_of(const struct rpt_net_peer *q, const struct rpt_wait *w)
{
	for (uint32_t i = 0; i < q->npids; i++) {
		if (q->pids[i] == w->pid)
			return true;
		for (size_t k = 0; k < w->nwakers; k++)
			if (!w->wakers[k].thread && q->pids[i] == w->wakers[k].pid)
				return true;
	}
	return false;
}

/* The peers the loop and its worker processes received from (report_net.c
 * keeps them by time in calls): where its remote data came from. */
static void loop_peers(const struct rpt_model *m, struct rpt_wait *w)
{
	const struct rpt_net *n = m->net;

	/* IP peers first (another host, a store), then the rest (unix sockets) */
	for (int ip = 1; ip >= 0; ip--)
		for (size_t i = 0; n && i < n->npeers && w->npeers < RPT_LOOP_PEERS; i++)
			if (n->peers[i].ip == ip && n->peers[i].rbytes && peer_of(&n->peers[i], w))
				w->peers[w->npeers++] = (uint32_t)i;
}

/* A loop's totals, steps; a launcher's state during its GPU's idle gaps. */
static int finish_timed(struct wait_ctx *c, struct thread_time *t)
{
	struct rpt_model *m = c->m;
	struct rpt_wait *w = t->w;
	struct rpt_spans in_next = { 0 }, cuts = { 0 };
	int rc;

	rpt_gaps_by_launcher(m, t->pid, t->tid, t->tw);
	if (!w)
		return 0;
	for (int k = 0; k < RPT_TW_N; k++)
		w->ns[k] = spans_total(&t->tw[k]);
	w->data_runnable_ns = t->data_runnable_ns;
	w->own_read_ns = w->ns[RPT_TW_FILE_IO] + w->ns[RPT_TW_FAULT] + w->ns[RPT_TW_SOCKET];
	rpt_blocked_sort(w);
	loop_peers(m, w);
	/* the wait the program sees: its time inside next(), where its stacks say */
	rc = rpt_next_build(m, w, &c->v.a[t->i0], t->i1 - t->i0, &t->win, &in_next, &cuts);
	/* steps: the loop's NVTX step ranges, else one per next(), else its
	 * recurring wait-then-work */
	if (!rc)
		rc = rpt_nvtx_steps(m, w, w->next.known ? &in_next : &t->tw[RPT_TW_DATA]);
	if (rc == 0)
		rc = w->next.known ? rpt_wait_steps(w, &in_next, &cuts) : rpt_wait_steps(w, &t->win, NULL);
	free(in_next.a);
	free(cuts.a);
	rpt_steps_time(w, t->tw);
	w->gaps = m->sched->gaps;
	return rc > 0 ? 0 : rc;
}

/* Each loop keeps its waits and time by kind (the job's view across hosts,
 * report_hosts.c), once the producers no longer need them. */
static void keep_spans(struct wait_ctx *c)
{
	for (size_t k = 0; k < c->ntt; k++) {
		struct thread_time *t = &c->tt[k];

		if (!t->w)
			continue;
		t->w->win = t->win;
		t->win = (struct rpt_spans){ 0 };
		for (int f = 0; f < RPT_TW_N; f++) {
			t->w->tw[f] = t->tw[f];
			t->tw[f] = (struct rpt_spans){ 0 };
		}
	}
}

static void ctx_free(struct wait_ctx *c)
{
	for (size_t k = 0; k < c->npr; k++)
		for (int f = 0; f < 3; f++)
			free(c->pr[k].fetch[f].a);
	free(c->pr);
	kmap__free(&c->pr_map);
	for (size_t k = 0; k < TIMED_MAX; k++) {
		for (int f = 0; f < OC_N; f++)
			free(c->tt[k].calls[f].a);
		free(c->tt[k].win.a);
		for (int f = 0; f < RPT_TW_N; f++)
			free(c->tt[k].tw[f].a);
	}
	free(c->v.a);
	kmap__free(&c->deaths);
	free(c->first);
}

static const struct rpt_model *strag_m;

static double waited(const struct rpt_wait *w)
{
	uint64_t span = rpt_wait__span(w);

	return span ? (double)rpt_wait__data(w) / (double)span : 0;
}

static int by_waited(const void *a, const void *b)
{
	const struct rpt_wait *x = strag_m->loops[*(const size_t *)a];
	const struct rpt_wait *y = strag_m->loops[*(const size_t *)b];

	if (waited(x) != waited(y))
		return waited(x) > waited(y) ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The loops by the share of their run they waited for data, most first. */
static int stragglers(struct rpt_model *m)
{
	m->straggle = calloc(m->nloops ? m->nloops : 1, sizeof(*m->straggle));
	if (!m->straggle)
		return -ENOMEM;
	for (size_t i = 0; i < m->nloops; i++)
		m->straggle[i] = i;
	strag_m = m;
	if (m->nloops > 1)
		qsort(m->straggle, m->nloops, sizeof(*m->straggle), by_waited);
	return 0;
}

int rpt_wait_build(struct rpt_model *m)
{
	struct wait_ctx *c;
	struct rpt_loopset *ls = NULL;
	int rc = 0;

	if (!m->sched->n)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->m = m;
	if ((rc = rpt_ivs_load(m, &c->v)))
		goto out;
	if (!c->v.n)            /* no thread states: no loop to find */
		goto out;
	if ((rc = rpt_loops_find(m, &c->v, &c->deaths, &ls)))
		goto out;
	c->ls = ls;
	if ((rc = loops_to_time(c)))
		goto out;
	for (size_t l = 0; l < c->nloops; l++) {
		find_wakers(c, &c->tt[l]);
		if ((rc = windows_of(c, &c->tt[l])) || (rc = find_producers(c, l)))
			goto out;
	}
	if ((rc = pass3(c)))
		goto out;
	for (size_t k = 0; k < c->ntt; k++)
		if ((rc = thread_time(c, &c->tt[k])) || (rc = finish_timed(c, &c->tt[k])))
			goto out;
	rpt_gaps_launch_totals(m);
	for (size_t k = 0; k < c->npr; k++)
		if ((rc = producer_activity(c, &c->pr[k])))
			goto out;
	keep_spans(c);
	rc = stragglers(m);
out:
	rpt_loops_free(ls);
	ctx_free(c);
	free(c);
	return rc;
}
