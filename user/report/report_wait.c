// SPDX-License-Identifier: MIT
/*
 * report_wait.c — why the loop waited: the training loop's time split by
 * thread state and cause, the waits for data followed into the workers that
 * ended them, and the loop's steps.
 *
 * From the scheduler layer's thread states (model/sched_tab.h):
 *  - the loop thread is the thread that spent the most time asleep until a
 *    thread of one of its own child processes woke it (a DataLoader worker
 *    handing over a batch; workers themselves wait for their parent's
 *    indices, which does not count); else until any other traced process
 *    woke it; without such waits, the thread with the most CPU time;
 *  - its time is on CPU, runnable (waiting for a CPU), blocked in its own
 *    file calls, waiting for the GPU (its CUDA sync calls), waiting for
 *    data (asleep until another traced process woke it, and the wait for a
 *    CPU right after such a wake-up — counted apart too; not a process that
 *    was exiting: a join), or other sleep — in that order of precedence;
 *  - the waits for data are windows: what the waking processes' main
 *    threads did inside them (reads of which files, on CPU, runnable,
 *    other) comes from one more pass over their VFS calls;
 *  - steps: waits for data closer than 2 ms merged (one fetch of a batch:
 *    the loop's CPU time between them is part of the wait, as the program's
 *    own timing of next() sees it), a step from one wait's start to the
 *    next's (the loop's recurring wait-then-compute).
 * Memory: the thread states (~64 bytes per switch or wake-up) and the
 * loop's and workers' calls inside the windows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/calls.h"
#include "report/report_model.h"
#include "report/report_priv.h"

#define STEP_MERGE_NS   2000000ull   /* waits closer than this are one wait */
#define EXIT_WAKE_NS    10000000ull  /* a waker dead this soon after, without sleeping first: a join */

const char *const rpt_tw_names[RPT_TW_N] = {
	[RPT_TW_CPU] = "on_cpu", [RPT_TW_RUNNABLE] = "runnable", [RPT_TW_FILE_IO] = "file_io",
	[RPT_TW_GPU] = "gpu_sync", [RPT_TW_DATA] = "waiting_for_data", [RPT_TW_SLEEP] = "other_sleep",
};
const char *rpt_ls_name(int k)
{
	return k >= 0 && k < RPT_TW_N ? rpt_tw_names[k] : "no_state";
}

const char *const rpt_wa_names[RPT_WA_N] = {
	[RPT_WA_READ] = "reading_files", [RPT_WA_CPU] = "on_cpu",
	[RPT_WA_RUNNABLE] = "runnable", [RPT_WA_OTHER] = "other",
};

struct ivs {
	struct tstate_iv *a;
	size_t n, cap;
};

static int collect(void *ctx, const struct tstate_iv *iv)
{
	struct ivs *v = ctx;

	if (array_grow((void **)&v->a, &v->cap, v->n + 1, sizeof(*v->a)))
		return -ENOMEM;
	v->a[v->n++] = *iv;
	return 0;
}

static int by_thread_ts(const void *a, const void *b)
{
	const struct tstate_iv *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* When each thread left its CPU for good (0: not seen). */
static uint64_t death_of(const struct sched_tab *t, uint32_t tid)
{
	for (size_t i = t->n; i-- > 0;) {
		const struct sched_ent *e = &t->ev[i];

		if (e->kind == GPUIO_SCHED_SWITCH && e->tid == tid && sched_state_after_switch(e) == TS_N)
			return e->ts;
	}
	return 0;
}

static bool is_sleep(uint8_t s)
{
	return s == TS_SLEEPING || s == TS_BLOCKED;
}

/* A sleep another traced process ended: data handed over (not a dying child). */
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
		    e->tid == tid && !(e->flags & GPUIO_SF_PREEMPT))
			return true;
	}
	return false;
}

/*
 * A sleep another traced process ended: data handed over — not a child's
 * exit waking its parent (a join: the waker died soon after without going
 * to sleep in between, so the wake-up was part of its exit; a worker that
 * handed over its last batch, then waited to be shut down, is data).
 */
static bool data_waker(const struct sched_tab *t, const struct tstate_iv *iv, uint64_t woke,
		       struct kmap *deaths)
{
	uint64_t *d;

	if (!iv->woken || !iv->waker_traced || !iv->waker_tid || iv->waker_pid == iv->pid)
		return false;
	d = kmap__get(deaths, iv->waker_tid, 0);
	if (!d) {
		uint64_t *v;

		if (kmap__upsert(deaths, iv->waker_tid, 0, &v) < 0)
			return true;
		*v = death_of(t, iv->waker_tid) + 1;
		d = v;
	}
	if (!(*d > 1 && *d - 1 >= woke && *d - 1 - woke < EXIT_WAKE_NS))
		return true;
	return slept_between(t, iv->waker_tid, woke, *d - 1);
}

static bool data_wake(const struct sched_tab *t, const struct tstate_iv *iv, struct kmap *deaths)
{
	return is_sleep(iv->state) && data_waker(t, iv, iv->end, deaths);
}

/* One thread's time as spans by state and cause (the loop, the GPU launchers). */
struct thread_time {
	uint32_t pid, tid;
	size_t i0, i1;                  /* its intervals in the sorted ones */
	struct rpt_spans calls;         /* its own file calls (pass 3) */
	struct rpt_spans win;           /* its waits for data (sleeps another process ended) */
	struct rpt_spans tw[RPT_TW_N];  /* its time by enum rpt_tw */
	uint64_t data_runnable_ns;      /* of tw[RPT_TW_DATA]: runnable once woken with data */
};

#define THREADS_MAX 16          /* the loop and the GPU processes' launchers */

struct worker_th {              /* a waking process's main thread inside the windows */
	uint32_t pid;
	struct rpt_spans reads;     /* its read calls (clipped later) */
	uint64_t read_ns;
};

struct pass3 {
	struct rpt_model *m;
	struct rpt_wait *w;
	struct thread_time *tt;         /* tt[0]: the loop */
	size_t ntt;
	struct worker_th *wk;
	size_t nwk;
};

static struct worker_th *worker_of(struct pass3 *p, uint32_t pid)
{
	for (size_t i = 0; i < p->nwk; i++)
		if (p->wk[i].pid == pid)
			return &p->wk[i];
	return NULL;
}

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

/* Pass 3, one call: the timed threads' file calls; a worker's reads inside the loop's windows. */
static int pass3_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct pass3 *p = ctx;
	const struct gpuio_hdr *h = &e->hdr;
	const struct rpt_spans *win = &p->tt[0].win;
	uint64_t end, in, *fi;
	struct worker_th *wt;
	size_t k;

	if (gpuio_call__is_async(e->call))
		return 0;
	end = rpt_end_of(h->ts, e->dur_ns);
	for (k = 0; k < p->ntt && p->tt[k].tid != h->tid; k++)
		;
	if (k < p->ntt)
		return rpt_spans_add(&p->tt[k].calls, h->ts, end) ? -ENOMEM : 0;
	/* a page fault that brought nothing in still waited for a page being read */
	if (h->tid != h->pid || !gpuio_call__is_read(e->call) ||
	    (e->ret <= 0 && e->call != GPUIO_CALL_PAGE_FAULT) ||
	    !(wt = worker_of(p, h->pid)) || !(in = rpt_spans_overlap(win, h->ts, end)))
		return 0;
	if (rpt_spans_add(&wt->reads, h->ts, end))
		return -ENOMEM;
	fi = kmap__get(&p->m->file_map, e->dev, e->ino);
	if (fi && file_add(p->w, (uint32_t)*fi, (uint64_t)e->ret, in))
		return -ENOMEM;
	return 0;
}

/* Pass 3: the file calls again (the session replays them). */
static int pass3(struct rpt_model *m, struct pass3 *p)
{
	const struct model_tool t = { .ctx = p, .vfs = pass3_vfs };
	int rc;

	p->m = m;
	rc = model_session__replay(m->s, &t, 1ull << GPUIO_REC_VFS);
	if (rc == -EBADMSG)
		snprintf(m->err, sizeof(m->err), "%s: %s", m->path, model_session__error(m->s));
	return rc;
}

static void files_glob(const struct rpt_model *m, struct rpt_wait *w)
{
	const char *p0 = NULL, *slash, *dot;
	size_t dl = 0, el = 0, same = 0;

	w->glob[0] = 0;
	if (!w->nfiles)
		return;
	p0 = m->files[w->files[0].file].path;
	if (!p0)
		return;
	slash = strrchr(p0, '/');
	dot = strrchr(p0, '.');
	dl = slash ? (size_t)(slash - p0) + 1 : 0;
	el = dot && dot > slash ? strlen(dot) : 0;
	for (size_t i = 0; i < w->nfiles; i++) {
		const char *q = m->files[w->files[i].file].path;

		if (q && !strncmp(q, p0, dl) && !strchr(q + dl, '/') &&
		    strlen(q) >= el && !strcmp(q + strlen(q) - el, p0 + strlen(p0) - el))
			same++;
	}
	if (same >= 2 && same * 10 >= w->nfiles * 9)
		snprintf(w->glob, sizeof(w->glob), "%.*s*%.*s", (int)dl, p0, (int)el,
			 el ? p0 + strlen(p0) - el : "");
	else
		snprintf(w->glob, sizeof(w->glob), "%s", p0);
}

static int build_steps(struct rpt_wait *w, const struct rpt_spans *win)
{
	struct rpt_spans ep = { 0 };
	int rc = 0;

	for (size_t i = 0; i < win->n && !rc; i++) {
		if (ep.n && win->a[i].s - ep.a[ep.n - 1].e < STEP_MERGE_NS)
			ep.a[ep.n - 1].e = win->a[i].e;
		else
			rc = rpt_spans_add(&ep, win->a[i].s, win->a[i].e);
	}
	for (size_t i = 0; i < ep.n && !rc; i++) {
		struct rpt_step *s;
		uint64_t end = i + 1 < ep.n ? ep.a[i + 1].s : w->span_e;

		if (array_grow((void **)&w->steps, &w->csteps, w->nsteps + 1, sizeof(*w->steps))) {
			rc = -ENOMEM;
			break;
		}
		s = &w->steps[w->nsteps++];
		s->s = ep.a[i].s;
		s->wait_ns = ep.a[i].e - ep.a[i].s;
		s->compute_ns = end > ep.a[i].e ? end - ep.a[i].e : 0;
	}
	free(ep.a);
	return rc;
}

/* The part of [s, e) inside the spans `in` (inside), or outside them, as time of kind k. */
static int add_parts(struct thread_time *t, int k, const struct rpt_spans *in, uint64_t s,
		     uint64_t e, bool inside)
{
	struct rpt_spans rest = { 0 };
	int rc = 0;

	if (!inside) {
		rc = rpt_spans_minus(in, s, e, &t->tw[k]);
	} else if (!(rc = rpt_spans_minus(in, s, e, &rest))) {
		/* the inside = [s, e) minus what is outside */
		rc = rpt_spans_minus(&rest, s, e, &t->tw[k]);
	}
	free(rest.a);
	return rc;
}

/*
 * A thread's time by state, then what its sleeps were: its own file calls
 * first, then its CUDA syncs, then a wake by another traced process (data),
 * else other sleep. The thread's CPU time between waits for data closer than
 * STEP_MERGE_NS is part of one fetch of a batch (as the program's own timing
 * of next() sees it): waiting for data too.
 */
static int thread_time(struct rpt_model *m, const struct ivs *v, struct thread_time *t,
		       struct kmap *deaths)
{
	struct rpt_spans syncs = { 0 }, notio = { 0 }, gaps = { 0 }, cpu = { 0 };
	int rc = -ENOMEM;

	rpt_spans_norm(&t->calls);
	for (size_t k = 0; k < m->nsyncs; k++)
		if (m->syncs[k].dev == t->tid && m->syncs[k].pid == t->pid &&
		    rpt_spans_add(&syncs, m->syncs[k].s, m->syncs[k].e))
			goto out;
	rpt_spans_norm(&syncs);
	for (size_t j = t->i0; j < t->i1; j++) {
		const struct tstate_iv *iv = &v->a[j];
		int k;

		if (iv->state == TS_RUNNING) {
			if (rpt_spans_add(&cpu, iv->ts, iv->end))
				goto out;
			continue;
		}
		if (!is_sleep(iv->state)) {
			/* woken with data, then waiting for a CPU: still inside the fetch */
			k = RPT_TW_RUNNABLE;
			if (iv->state == TS_RUNNABLE && data_waker(m->sched, iv, iv->ts, deaths)) {
				k = RPT_TW_DATA;
				t->data_runnable_ns += iv->end - iv->ts;
			}
			if (rpt_spans_add(&t->tw[k], iv->ts, iv->end))
				goto out;
			continue;
		}
		if (data_wake(m->sched, iv, deaths) && rpt_spans_add(&t->win, iv->ts, iv->end))
			goto out;
		/* the sleep: inside its calls, else inside its syncs, else why it ended */
		notio.n = 0;
		if (add_parts(t, RPT_TW_FILE_IO, &t->calls, iv->ts, iv->end, true) ||
		    rpt_spans_minus(&t->calls, iv->ts, iv->end, &notio))
			goto out;
		for (size_t i = 0; i < notio.n; i++)
			if (add_parts(t, RPT_TW_GPU, &syncs, notio.a[i].s, notio.a[i].e, true) ||
			    add_parts(t, data_wake(m->sched, iv, deaths) ? RPT_TW_DATA : RPT_TW_SLEEP,
				      &syncs, notio.a[i].s, notio.a[i].e, false))
				goto out;
	}
	rpt_spans_norm(&t->win);
	/* one fetch: the CPU time between its merged waits */
	for (size_t i = 0; i + 1 < t->win.n; i++)
		if (t->win.a[i + 1].s - t->win.a[i].e < STEP_MERGE_NS &&
		    rpt_spans_add(&gaps, t->win.a[i].e, t->win.a[i + 1].s))
			goto out;
	for (size_t i = 0; i < cpu.n; i++)
		if (add_parts(t, RPT_TW_CPU, &gaps, cpu.a[i].s, cpu.a[i].e, false) ||
		    add_parts(t, RPT_TW_DATA, &gaps, cpu.a[i].s, cpu.a[i].e, true))
			goto out;
	for (int k = 0; k < RPT_TW_N; k++)
		rpt_spans_norm(&t->tw[k]);
	rc = 0;
out:
	free(syncs.a);
	free(notio.a);
	free(gaps.a);
	free(cpu.a);
	return rc;
}

static uint64_t spans_total(const struct rpt_spans *v)
{
	uint64_t t = 0;

	for (size_t i = 0; i < v->n; i++)
		t += v->a[i].e - v->a[i].s;
	return t;
}

/* The intervals of tid in v (sorted by thread, then time): [*i0, *i1). */
static void thread_range(const struct ivs *v, uint32_t tid, size_t *i0, size_t *i1)
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

/* Threads to time: the loop (tt[0]), then each GPU process's launcher. */
static size_t threads_to_time(struct rpt_model *m, const struct ivs *v, struct thread_time *tt,
			      uint32_t loop_pid, uint32_t loop_tid)
{
	size_t n = 0;

	tt[n].pid = loop_pid;
	tt[n].tid = loop_tid;
	thread_range(v, loop_tid, &tt[n].i0, &tt[n].i1);
	n++;
	for (size_t g = 0; g < m->ngpus; g++) {
		uint32_t tid = m->gpus[g].launcher_tid;
		size_t k;

		if (!tid)
			continue;
		for (k = 0; k < n && tt[k].tid != tid; k++)
			;
		if (k < n || n == THREADS_MAX)
			continue;
		tt[n].pid = m->gpus[g].pid;
		tt[n].tid = tid;
		thread_range(v, tid, &tt[n].i0, &tt[n].i1);
		n++;
	}
	return n;
}

/* The loop thread: the one whose sleeps children's data most often ended,
 * else any data wakes, else the busiest on a CPU.  Returns its first index in v. */
static size_t find_loop_thread(struct rpt_model *m, const struct ivs *v,
			       struct kmap *deaths, struct rpt_wait *w)
{
	uint64_t best = 0, best_cpu = 0, best_kids = 0;
	size_t i, j, n0 = 0;

	for (i = 0; i < v->n; i = j) {
		uint64_t data = 0, cpu = 0, kids = 0;

		for (j = i; j < v->n && v->a[j].tid == v->a[i].tid; j++) {
			if (data_wake(m->sched, &v->a[j], deaths)) {
				uint64_t *pi = kmap__get(&m->proc_map, v->a[j].waker_pid, 0);

				data += v->a[j].end - v->a[j].ts;
				if (pi && m->procs[*pi].ppid == v->a[j].pid)
					kids += v->a[j].end - v->a[j].ts;
			}
			if (v->a[j].state == TS_RUNNING)
				cpu += v->a[j].end - v->a[j].ts;
		}
		if (kids > best_kids || (kids == best_kids && data > best) ||
		    (!best_kids && !best && !data && cpu > best_cpu)) {
			best_kids = kids;
			best = data;
			best_cpu = cpu;
			w->pid = v->a[i].pid;
			w->tid = v->a[i].tid;
			n0 = i;
		}
	}
	w->span_s = v->a[n0].ts;
	for (j = n0; j < v->n && v->a[j].tid == w->tid; j++)
		w->span_e = v->a[j].end;
	return n0;
}

/* The processes that ended the loop's waits for data, from index n0 on. */
static void find_wakers(struct rpt_model *m, const struct ivs *v, size_t n0,
			struct kmap *deaths, struct rpt_wait *w)
{
	for (size_t j = n0; j < v->n && v->a[j].tid == w->tid; j++) {
		const struct tstate_iv *iv = &v->a[j];
		size_t i;

		if (!data_wake(m->sched, iv, deaths))
			continue;
		for (i = 0; i < w->nwakers && w->wakers[i].pid != iv->waker_pid; i++)
			;
		if (i == w->nwakers && i < RPT_WAKERS_MAX)
			w->wakers[w->nwakers++].pid = iv->waker_pid;
		if (i < RPT_WAKERS_MAX) {
			w->wakers[i].wakes++;
			w->wakers[i].ns += iv->end - iv->ts;
		}
	}
}

/* What a worker's main thread did inside the loop's data windows: reading,
 * on a CPU, runnable, or something else.  rest is scratch. */
static int worker_activity(const struct ivs *v, struct worker_th *wt,
			   const struct rpt_spans *win, struct rpt_spans *rest,
			   struct rpt_wait *w)
{
	uint64_t life_s = UINT64_MAX, life_e = 0, in_all, rd = 0, cpu = 0, run = 0;

	rpt_spans_norm(&wt->reads);
	for (size_t i = 0; i < v->n; i++) {
		const struct tstate_iv *iv = &v->a[i];
		uint64_t in = 0;

		if (iv->tid != wt->pid)
			continue;
		if (iv->ts < life_s)
			life_s = iv->ts;
		if (iv->end > life_e)
			life_e = iv->end;
		if (iv->state != TS_RUNNING && is_sleep(iv->state))
			continue;
		/* on a CPU or waiting for one: outside its reads only */
		rest->n = 0;
		if (rpt_spans_minus(&wt->reads, iv->ts, iv->end, rest))
			return -ENOMEM;
		for (size_t j = 0; j < rest->n; j++)
			in += rpt_spans_overlap(win, rest->a[j].s, rest->a[j].e);
		if (iv->state == TS_RUNNING)
			cpu += in;
		else
			run += in;
	}
	if (life_e <= life_s)
		return 0;
	in_all = rpt_spans_overlap(win, life_s, life_e);
	for (size_t i = 0; i < wt->reads.n; i++)
		rd += rpt_spans_overlap(win, wt->reads.a[i].s, wt->reads.a[i].e);
	w->act_ns[RPT_WA_READ] += rd;
	w->act_ns[RPT_WA_CPU] += cpu;
	w->act_ns[RPT_WA_RUNNABLE] += run;
	w->act_ns[RPT_WA_OTHER] += in_all > rd + cpu + run ? in_all - rd - cpu - run : 0;
	return 0;
}

/* The loop's and its launchers' time, from their states and their calls
 * (pass 3 reads the calls inside the loop's data windows). */
static int time_threads(struct rpt_model *m, const struct ivs *v, struct kmap *deaths,
			struct pass3 *p)
{
	struct rpt_wait *w = p->w;
	struct thread_time *tt = p->tt;
	int rc;

	p->ntt = threads_to_time(m, v, tt, w->pid, w->tid);
	for (size_t k = 0; k < p->ntt; k++)      /* the windows first: pass 3 needs the loop's */
		for (size_t j = tt[k].i0; j < tt[k].i1; j++)
			if (is_sleep(v->a[j].state) && data_wake(m->sched, &v->a[j], deaths) &&
			    rpt_spans_add(&tt[k].win, v->a[j].ts, v->a[j].end))
				return -ENOMEM;
	rpt_spans_norm(&tt[0].win);
	p->wk = calloc(w->nwakers ? w->nwakers : 1, sizeof(*p->wk));
	if (!p->wk)
		return -ENOMEM;
	for (size_t i = 0; i < w->nwakers; i++)
		p->wk[p->nwk++].pid = w->wakers[i].pid;
	if ((rc = pass3(m, p)))
		return rc;
	for (size_t k = 0; k < p->ntt; k++) {
		tt[k].win.n = 0;        /* thread_time finds them again, with the rest */
		if (thread_time(m, v, &tt[k], deaths))
			return -ENOMEM;
	}
	for (int k = 0; k < RPT_TW_N; k++)
		w->ns[k] = spans_total(&tt[0].tw[k]);
	w->data_runnable_ns = tt[0].data_runnable_ns;
	for (size_t g = 0; g < m->ngpus; g++)
		for (size_t k = 0; k < p->ntt; k++)
			if (m->gpus[g].launcher_tid && tt[k].tid == m->gpus[g].launcher_tid &&
			    tt[k].pid == m->gpus[g].pid)
				rpt_gaps_by_launcher(m, &m->gpus[g], tt[k].tw);
	return 0;
}

int rpt_wait_build(struct rpt_model *m)
{
	struct ivs v = { 0 };
	struct kmap deaths = { 0 };
	struct thread_time tt[THREADS_MAX];
	struct rpt_spans rest = { 0 };
	struct pass3 p = { 0 };
	struct rpt_wait *w;
	int rc = 0;

	memset(tt, 0, sizeof(tt));
	if (!m->sched->n)
		return 0;
	if ((rc = sched_tab__states(m->sched, m->last_ts, collect, &v)))
		goto out;
	if (!v.n)               /* no thread states: no loop to find */
		goto out;
	if (v.n > 1)
		qsort(v.a, v.n, sizeof(*v.a), by_thread_ts);
	rc = -ENOMEM;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto out;
	m->wait = w;
	find_wakers(m, &v, find_loop_thread(m, &v, &deaths, w), &deaths, w);
	p.w = w;
	p.tt = tt;
	if ((rc = time_threads(m, &v, &deaths, &p)))
		goto out;
	/* the workers' main threads inside the loop's windows */
	for (size_t k = 0; k < p.nwk; k++)
		if ((rc = worker_activity(&v, &p.wk[k], &tt[0].win, &rest, w)))
			goto out;
	/* steps: the loop's NVTX step ranges, else its recurring wait-then-work */
	rc = rpt_nvtx_steps(m, w, &tt[0].tw[RPT_TW_DATA]);
	if (rc == 0)
		rc = build_steps(w, &tt[0].win);
	if (rc > 0)
		rc = 0;
	w->gaps = m->sched->gaps;
out:
	for (size_t k = 0; k < p.nwk; k++)
		free(p.wk[k].reads.a);
	free(p.wk);
	for (size_t k = 0; k < THREADS_MAX; k++) {
		free(tt[k].calls.a);
		free(tt[k].win.a);
		for (int c = 0; c < RPT_TW_N; c++)
			free(tt[k].tw[c].a);
	}
	free(rest.a);
	free(v.a);
	kmap__free(&deaths);
	return rc;
}

static const struct rpt_model *sort_m;

static int data_first(const void *a, const void *b)
{
	const struct rpt_wait_file *x = a, *y = b;
	bool dx = sort_m->files[x->file].role == RPT_ROLE_DATA;
	bool dy = sort_m->files[y->file].role == RPT_ROLE_DATA;

	if (dx != dy)
		return dx ? -1 : 1;
	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

/*
 * Once paths and roles are known (after rpt_roles): the data files first,
 * and the glob and page-cache hit ratio of the data files only (a worker's
 * imports are not what it waited on).
 */
void rpt_wait_name(struct rpt_model *m)
{
	struct rpt_wait *w = m->wait;
	size_t nd = 0;

	if (!w)
		return;
	sort_m = m;
	if (w->nfiles > 1)      /* qsort must not see a NULL array */
		qsort(w->files, w->nfiles, sizeof(*w->files), data_first);
	w->pages = w->hit_pages = w->read_bytes = 0;
	while (nd < w->nfiles && m->files[w->files[nd].file].role == RPT_ROLE_DATA) {
		const struct rpt_file *f = &m->files[w->files[nd].file];

		w->pages += f->pages;
		w->hit_pages += f->pages > f->miss_pages ? f->pages - f->miss_pages : 0;
		w->read_bytes += w->files[nd].bytes;
		nd++;
	}
	w->ndata_files = nd;
	{
		size_t all = w->nfiles;

		w->nfiles = nd ? nd : all;      /* the glob looks at these */
		files_glob(m, w);
		w->nfiles = all;
	}
}

void rpt_wait_free(struct rpt_model *m)
{
	if (!m->wait)
		return;
	free(m->wait->files);
	free(m->wait->steps);
	free(m->wait);
	m->wait = NULL;
}

static double share(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

uint64_t rpt_wait__span(const struct rpt_wait *w)
{
	return w->span_e > w->span_s ? w->span_e - w->span_s : 0;
}

uint64_t rpt_wait__act_total(const struct rpt_wait *w)
{
	uint64_t t = 0;

	for (int k = 0; k < RPT_WA_N; k++)
		t += w->act_ns[k];
	return t;
}

/* The one sentence: how long the loop waited for data, and what the workers did meanwhile. */
void rpt_wait__headline(const struct rpt_model *m, char *buf, size_t len)
{
	const struct rpt_wait *w = m->wait;
	uint64_t span, act;
	char d[32];
	size_t n;

	buf[0] = 0;
	if (!w)
		return;
	span = rpt_wait__span(w);
	act = rpt_wait__act_total(w);
	rpt_fmt_dur(w->ns[RPT_TW_DATA], d, sizeof(d));
	n = (size_t)snprintf(buf, len, "the loop (%s, pid %u tid %u) waited %.0f%% of its run (%s) for data "
			     "from %zu process(es)", rpt_proc_comm(m, w->pid), w->pid, w->tid,
			     share(w->ns[RPT_TW_DATA], span), d, w->nwakers);
	if (n < len && act)
		n += (size_t)snprintf(buf + n, len - n, "; meanwhile they spent %.0f%% reading files",
				      share(w->act_ns[RPT_WA_READ], act));
	if (n < len && act && w->act_ns[RPT_WA_READ] && w->glob[0]) {
		n += (size_t)snprintf(buf + n, len - n, " (%s", w->glob);
		if (n < len && w->pages)
			n += (size_t)snprintf(buf + n, len - n, ", page-cache hit ratio %.0f%%",
					      share(w->hit_pages, w->pages));
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, ")");
	}
	if (n < len && act)
		snprintf(buf + n, len - n, ", %.0f%% on CPU, %.0f%% waiting for a CPU, %.0f%% other",
			 share(w->act_ns[RPT_WA_CPU], act), share(w->act_ns[RPT_WA_RUNNABLE], act),
			 share(w->act_ns[RPT_WA_OTHER], act));
}
